"""Filters whose predicate is a disjunction (src/exec/predicate.c: each term as
keep bytes, ORed): against Polars over nulls, NaN, strings, dates, constants,
ANDs of ORs and ORs of ANDs, on partitions of many sizes."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from conftest import assert_same

import ladle

N = 30_011


def frame(seed: int) -> pl.DataFrame:
    r = np.random.default_rng(seed)
    f = r.normal(0, 2, N)
    f[r.random(N) < 0.05] = np.nan
    return pl.DataFrame(
        {
            "i": pl.Series(r.integers(-5, 5, N)).set(pl.Series(r.random(N) < 0.2), None),
            "f": pl.Series(f).set(pl.Series(r.random(N) < 0.1), None),
            "s": pl.Series(r.choice(["a", "bb", "ccc", "", "é"], N)).set(pl.Series(r.random(N) < 0.15), None),
            "d": pl.Series([dt.date(2020, 1, 1) + dt.timedelta(days=int(x)) for x in r.integers(0, 30, N)]),
            "b": pl.Series(r.random(N) < 0.5).set(pl.Series(r.random(N) < 0.1), None),
            "u": pl.Series(r.integers(0, 200, N), dtype=pl.UInt8),
        }
    )


PREDICATES = {
    "not_null_or_eq": pl.col("f").is_not_null() | (pl.col("i") == 1),
    "three_way": (pl.col("i") > 2) | (pl.col("s") == "bb") | pl.col("f").is_nan(),
    "null_checks": pl.col("i").is_null() | pl.col("s").is_null(),
    "or_inside_and": ((pl.col("i") < 0) | (pl.col("f") > 1.0)) & (pl.col("u") > 50),
    "and_inside_or": ((pl.col("i") < 0) & (pl.col("f") > 1.0)) | (pl.col("s") == ""),
    "two_clauses": ((pl.col("i") == 0) | (pl.col("i") == 3)) & ((pl.col("s") != "a") | pl.col("b")),
    "between_or_date": pl.col("f").is_between(-1.0, 1.0) | (pl.col("d") >= dt.date(2020, 1, 25)),
    "bool_column": pl.col("b") | (pl.col("u") < 10),
    "constant_true": pl.lit(True) | (pl.col("i") == 1),
    "constant_null": pl.lit(None, dtype=pl.Boolean) | (pl.col("i") == 1),
    "null_literal_cmp": (pl.col("i") == pl.lit(None, dtype=pl.Int64)) | (pl.col("u") == 7),
    "not_of_or": ~((pl.col("i") > 0) | pl.col("f").is_null()),
    "nan_cmp": (pl.col("f") == float("nan")) | (pl.col("f") < -3.0),
    "is_in_or": pl.col("s").is_in(["a", "ccc"]) | (pl.col("i") == -5),
}


@pytest.mark.parametrize("name", sorted(PREDICATES))
@pytest.mark.parametrize("morsel", [7, 1000, 0])
def test_disjunctions_equal_polars(name: str, morsel: int) -> None:
    e = ladle.Engine(threads=3, raise_on_fail=True, morsel_rows=morsel or None)
    df = frame(hash(name) % 1000)
    assert_same(df.lazy().filter(PREDICATES[name]), e)
    # a select after it: the predicate's own columns are not compacted
    assert_same(df.lazy().filter(PREDICATES[name]).select("d", "u"), e)


def test_disjunction_under_a_group_by_pipeline() -> None:
    e = ladle.Engine(threads=2, raise_on_fail=True)
    df = pl.concat([frame(s) for s in range(8)], rechunk=False)
    lf = df.lazy().filter((pl.col("i") > 2) | pl.col("s").is_null()).group_by("u").agg(pl.col("f").sum(), pl.len())
    assert_same(lf, e, ordered=False, check_exact=False, rel_tol=1e-9)
