"""Joins of every type against Polars: null keys, duplicate keys, several keys,
nulls_equal, suffixes, key coalescing, expression keys and large inputs."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from conftest import assert_same

LEFT = pl.DataFrame(
    {
        "k": [1, 2, None, 3, 3, 5, None],
        "k2": ["a", "b", "a", None, "c", "a", "b"],
        "v": [10, 20, 30, 40, 50, 60, 70],
        "same": ["l1", "l2", "l3", "l4", "l5", "l6", "l7"],
    }
)
RIGHT = pl.DataFrame(
    {
        "k": [2, 3, 3, None, 7, 1, 1],
        "k2": ["b", None, "c", "a", "x", "a", "z"],
        "w": [200, 300, 301, 500, 700, 100, 101],
        "same": ["r1", "r2", "r3", "r4", "r5", "r6", "r7"],
    }
)

HOWS = ["inner", "left", "right", "full", "semi", "anti"]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("nulls_equal", [False, True])
@pytest.mark.parametrize("on", [["k"], ["k", "k2"]])
def test_join_types(how: str, nulls_equal: bool, on: list[str], engine, small_engine) -> None:
    lf = LEFT.lazy().join(RIGHT.lazy(), on=on, how=how, nulls_equal=nulls_equal)  # type: ignore[arg-type]
    assert_same(lf, engine, ordered=False)
    assert_same(lf, small_engine, ordered=False)


@pytest.mark.parametrize("how", ["inner", "left", "full"])
@pytest.mark.parametrize("coalesce", [True, False])
def test_coalesce_and_suffix(how: str, coalesce: bool, engine) -> None:
    lf = LEFT.lazy().join(RIGHT.lazy(), on="k", how=how, coalesce=coalesce, suffix="_r")  # type: ignore[arg-type]
    assert_same(lf, engine, ordered=False)


def test_different_key_names_and_expressions(engine) -> None:
    r = RIGHT.rename({"k": "rk"}).lazy()
    assert_same(LEFT.lazy().join(r, left_on="k", right_on="rk"), engine, ordered=False)
    assert_same(LEFT.lazy().join(r, left_on="k", right_on="rk", how="left"), engine, ordered=False)
    lf = LEFT.lazy().join(RIGHT.lazy(), left_on=pl.col.k * 2, right_on=pl.col.k + 1)
    assert_same(lf, engine, ordered=False)
    # a right key over a column only the right side has (typed over the right
    # side: over the left it was "unable to find column", a fallback)
    for how in HOWS:
        lf = LEFT.lazy().join(r, left_on="v", right_on=pl.col.w // 10, how=how)  # type: ignore[arg-type]
        assert_same(lf, engine, ordered=False)
        lf = LEFT.lazy().join(r, left_on=pl.col.v.cast(pl.Float32), right_on=(pl.col.w // 10).cast(pl.Float32),
                              how=how)  # type: ignore[arg-type]
        assert_same(lf, engine, ordered=False)


def test_cross_and_empty(engine) -> None:
    assert_same(LEFT.lazy().join(RIGHT.lazy(), how="cross"), engine, ordered=False)
    empty = RIGHT.clear().lazy()
    for how in HOWS:
        assert_same(LEFT.lazy().join(empty, on="k", how=how), engine, ordered=False)  # type: ignore[arg-type]
        assert_same(empty.join(LEFT.lazy(), on="k", how=how), engine, ordered=False)  # type: ignore[arg-type]


def test_string_and_float_keys(engine) -> None:
    a = pl.DataFrame({"s": ["é", "a", None, "", "b"], "f": [0.0, -0.0, float("nan"), None, 1.5], "x": range(5)})
    b = pl.DataFrame({"s": ["", "é", "é", None], "f": [float("nan"), 0.0, 2.0, None], "y": range(4)})
    for on in ["s", "f", ["s", "f"]]:
        for how in HOWS:
            assert_same(a.lazy().join(b.lazy(), on=on, how=how), engine, ordered=False)  # type: ignore[arg-type]


@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti", "full"])
def test_large_join(how: str, engine) -> None:
    rng = np.random.default_rng(7)
    n = 1_200_000
    big = pl.DataFrame({"k": rng.integers(0, 300_000, n), "v": rng.random(n)})
    dim = pl.DataFrame({"k": np.arange(0, 400_000, 2), "name": [f"n{i}" for i in range(200_000)]})
    lf = big.lazy().join(dim.lazy(), on="k", how=how).select(pl.len(), pl.col("v").sum())  # type: ignore[arg-type]
    assert_same(lf, engine, ordered=False, check_exact=False)


@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti"])
@pytest.mark.parametrize("nulls_equal", [False, True])
@pytest.mark.parametrize("on", [["k"], ["s"], ["k", "s"], ["f"]])
def test_small_left_big_right(how: str, nulls_equal: bool, on: list[str], engine) -> None:
    """A right side many times the left (ladle then builds on the left and
    probes with the right): duplicate and null keys on both sides, integer,
    string, float and two-column keys, every join type that allows it."""
    rng = np.random.default_rng(3)

    def frame(n: int, keys: int, tag: str) -> pl.DataFrame:
        k = rng.integers(0, keys, n)
        null = rng.random(n) < 0.05
        return pl.DataFrame({
            "k": pl.Series(np.where(null, None, k).tolist(), dtype=pl.Int64),
            "s": [None if m else f"s{v % 97}" for m, v in zip(rng.random(n) < 0.05, k)],
            "f": pl.Series((k % 53).astype(np.float64)),
            tag: np.arange(n),
        })

    left, right = frame(3_000, 400, "li"), frame(120_000, 500, "ri")
    lf = left.lazy().join(right.lazy(), on=on, how=how, nulls_equal=nulls_equal)  # type: ignore[arg-type]
    assert_same(lf, engine, ordered=False)


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "cross", "semi", "anti"])
def test_exploding_joins(how: str, engine, small_engine) -> None:  # type: ignore[no-untyped-def]
    """Joins whose output is many times their inputs (a few keys shared by many
    rows) keep their pairs as runs and write each output partition's rows
    alone; every consumer of the pairs must see the same rows as Polars."""
    rng = np.random.default_rng(7)
    n = 900
    left = pl.DataFrame({
        "k": rng.integers(0, 3, n), "a": rng.random(n), "s": [f"l{i % 37}" * (i % 5) for i in range(n)],
        "j": rng.integers(0, 2, n),
    }).with_columns(pl.when(pl.col("a") < 0.05).then(None).otherwise(pl.col("k")).alias("k"))
    right = pl.DataFrame({"k": rng.integers(0, 4, n // 2), "b": rng.integers(0, 1000, n // 2),
                          "j": rng.integers(0, 2, n // 2)})
    L, R = left.lazy(), right.lazy()
    if how == "cross":
        queries = [L.join(R, how="cross"), L.join(R, how="cross", maintain_order="right_left"),
                   L.filter(pl.col("a") > 0.5).join(R, how="cross").select("a", "b")]
    else:
        queries = [L.join(R, on="k", how=how), L.join(R, on=["k", "j"], how=how),
                   L.join(R, on="k", how=how, coalesce=False) if how not in ("semi", "anti") else L.join(R, on="k", how=how),
                   L.join(R, on="k", how=how, nulls_equal=True),
                   L.filter(pl.col("a") > 0.3).join(R, on="k", how=how).select(pl.all().exclude("a")),
                   L.join(R.filter(pl.col("b") > 100), on="k", how=how)]
        if how in ("inner", "left", "right", "full"):
            queries += [L.join(R, on="k", how=how, maintain_order=o) for o in ("left_right", "right_left")]
    for q in queries:
        for e in (engine, small_engine):
            ordered = "maintain_order" in q.explain() or how in ("semi", "anti")
            assert_same(q, e, ordered=False)
            if ordered:
                got, want = q.collect(engine=e), q.collect()
                assert got.height == want.height
    big = L.join(R, on="k", how="inner" if how in ("semi", "anti", "cross") else how)
    assert_same(big.group_by("j").agg(pl.len(), pl.col("b").sum()), engine, ordered=False)


@pytest.mark.parametrize("right_case", ["distinct", "distinct_with_null", "duplicate", "duplicate_nulls", "empty"])
@pytest.mark.parametrize("order", ["none", "left", "right", "left_right", "right_left"])
@pytest.mark.parametrize("left_filter", ["none", "some", "all"])
def test_left_lookup_taking_no_right_column(right_case: str, order: str, left_filter: str, engine) -> None:
    """A left join whose right side gives no output column (only its key, merged
    into the left's) and whose right keys are distinct is the left side itself:
    ladle skips the probe then (a workflow's fit joins a dimension table and
    counts the left's categories). Duplicate right keys, including two nulls,
    multiply rows and must not take that path; a filter under the left side is
    deferred into the join, and one that keeps every row hands its input over
    as it is (no gather)."""
    rng = np.random.default_rng(7)
    n = 20_000
    keys = rng.integers(0, 600, n).astype(float)
    keys[rng.random(n) < 0.05] = np.nan
    left = pl.DataFrame({"k": keys, "u": rng.integers(0, 50, n)}).with_columns(
        pl.col("k").fill_nan(None).cast(pl.Int64))
    rk: list = {
        "distinct": list(range(0, 500)),
        "distinct_with_null": list(range(0, 500)) + [None],
        "duplicate": list(range(0, 500)) + [7],
        "duplicate_nulls": list(range(0, 500)) + [None, None],
        "empty": [],
    }[right_case]
    right = pl.DataFrame({"k": pl.Series(rk, dtype=pl.Int64)})
    lf = left.lazy()
    if left_filter == "some":
        lf = lf.filter(pl.col("u") != 3)
    elif left_filter == "all":
        lf = lf.filter(pl.col("u") >= 0)
    for nulls_equal in (False, True):
        q = lf.join(right.lazy(), on="k", how="left", maintain_order=order, nulls_equal=nulls_equal)
        assert_same(q, engine, ordered=order != "none")
        assert_same(q.group_by("u").agg(pl.len(), pl.col("k").sum()), engine, ordered=False)
        # a right column in the output: the probe runs
        rw = right.lazy().with_columns(w=pl.col("k") * 2, z=pl.lit(1)).filter(pl.col("z") == 1).drop("z")
        q2 = lf.join(rw, on="k", how="left", maintain_order=order, nulls_equal=nulls_equal)
        assert_same(q2, engine, ordered=order != "none")
