"""Frames of a million rows and more, across many partitions."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from conftest import assert_same

N = 1_500_000


@pytest.fixture(scope="module")
def big() -> pl.DataFrame:
    rng = np.random.default_rng(42)
    ints = rng.integers(-1000, 1000, N)
    return pl.DataFrame(
        {
            "g": rng.integers(0, 5000, N),
            "i": pl.Series(ints).set(pl.Series(ints % 97 == 0), None),
            "f": rng.normal(size=N),
            "s": pl.Series(rng.integers(0, 200, N)).cast(pl.String) + "_key",
        }
    )


def test_group_by_many_groups(big: pl.DataFrame, engine) -> None:
    lf = big.lazy().group_by("g").agg(
        pl.col.i.sum(), pl.col.f.mean().alias("m"), pl.len(), pl.col.i.n_unique().alias("nu"),
        pl.col.f.median().alias("med"), pl.col.f.std().alias("sd"), pl.col.i.max().alias("mx"),
    )
    assert_same(lf, engine, ordered=False, check_exact=False)


def test_group_by_strings(big: pl.DataFrame, engine) -> None:
    lf = big.lazy().group_by("s", maintain_order=True).agg(pl.col.f.sum(), pl.col.i.count())
    assert_same(lf, engine, check_exact=False)


def test_filter_select_window_sort(big: pl.DataFrame, engine) -> None:
    lf = (
        big.lazy()
        .filter(pl.col.f > -0.5)
        .with_columns(((pl.col.f - pl.col.f.mean().over("g")) / pl.col.f.std().over("g")).alias("z"))
        .sort(["g", "i", "f"], descending=[False, True, False], nulls_last=True)
        .head(100_000)
    )
    assert_same(lf, engine, check_exact=False)


def test_unique_and_top_k(big: pl.DataFrame, engine) -> None:
    assert_same(big.lazy().unique(subset=["g", "s"], keep="first", maintain_order=True), engine)
    assert_same(big.lazy().sort("f", descending=True).head(10), engine)
    assert_same(big.lazy().select(pl.col.f.quantile(0.9), pl.col.i.sum(), pl.col.s.n_unique()), engine, check_exact=False)
