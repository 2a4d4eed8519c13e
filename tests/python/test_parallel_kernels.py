"""The kernels' parallel paths against Polars, at the sizes where they switch on
and at several thread counts (each thread count splits the work differently):

- group-bys with many groups (more than 65,536, few rows each), whose
  aggregations run with tasks owning ranges of groups (agg.c's owner mode);
- joins whose pairs are counted and written block by block, and whose probe
  rows are bucketed by group with a histogram per block (join.c, keys.c's
  ladle_cpu_bucket): the build-on-the-left path (right side more than 4x the
  left and over 65,536 rows), the usual one, semi and anti joins, full joins;
- nested parallel loops (pool.c): a group-by of one or two aggregations, whose
  kernels then run their own loops on the threads the group-by leaves free.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from conftest import assert_same

import ladle

THREADS = [1, 3, 16]


def groups_frame(n: int, ng: int, seed: int) -> pl.DataFrame:
    r = np.random.default_rng(seed)
    i = r.integers(-1000, 1000, n)
    f = r.normal(0, 10, n)
    f[r.random(n) < 0.01] = np.nan
    return pl.DataFrame(
        {
            "k": r.integers(0, ng, n),
            "i": i,
            "i_n": pl.Series(i).set(pl.Series(r.random(n) < 0.15), None),
            "f": f,
            "f_n": pl.Series(f).set(pl.Series(r.random(n) < 0.2), None),
            "u8": pl.Series(r.integers(0, 255, n), dtype=pl.UInt8),
        }
    )


@pytest.mark.parametrize("threads", THREADS)
def test_many_groups_aggregations(threads: int) -> None:
    df = groups_frame(300_000, 110_000, 1)
    lf = (
        df.lazy()
        .group_by("k")
        .agg(
            pl.col("i").sum().alias("si"),
            pl.col("i_n").sum().alias("sin"),
            pl.col("u8").sum().alias("su8"),
            pl.col("f").sum().alias("sf"),
            pl.col("f_n").min().alias("mnf"),
            pl.col("f").max().alias("mxf"),
            pl.col("i_n").max().alias("mxi"),
            pl.col("i_n").min().alias("mni"),
            pl.col("i_n").count().alias("cnt"),
            pl.len().alias("len"),
            pl.col("f_n").mean().alias("mf"),
            pl.col("f").std().alias("sd"),
            pl.col("i_n").var().alias("vi"),
        )
        .sort("k")
    )
    assert_same(lf, ladle.Engine(threads=threads), check_exact=False, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("threads", THREADS)
def test_many_groups_one_aggregation(threads: int) -> None:
    # one aggregation: its task gets every thread for its own loops
    df = groups_frame(400_000, 150_000, 2)
    lf = df.lazy().group_by("k").agg(pl.col("f_n").sum()).sort("k")
    assert_same(lf, ladle.Engine(threads=threads), check_exact=False, rel_tol=1e-9, abs_tol=1e-9)
    lf = df.lazy().group_by("k").agg(pl.col("i").sum(), pl.col("f").n_unique()).sort("k")
    assert_same(lf, ladle.Engine(threads=threads))


KEY_LAYOUTS = ["dense_sorted", "dense_shuffled", "dense_nulls", "wide", "int32", "uint32", "date"]


def many_groups_key(layout: str, n: int, ng: int, seed: int) -> pl.Series:
    """A key of about ng groups over n rows: values in a range near the rows
    (numbered by value, groupby_fast.c's dense_build), sorted or not, with
    nulls, of 32-bit types; or spread over a wide range (hash partitioned)."""
    r = np.random.default_rng(seed)
    k = np.sort(r.integers(-ng // 2, ng // 2, n))
    if layout == "dense_sorted":
        return pl.Series("k", k)
    if layout == "wide":
        return pl.Series("k", k * 1_000_003).shuffle(seed)
    s = pl.Series("k", k).shuffle(seed)
    if layout == "dense_shuffled":
        return s
    if layout == "dense_nulls":
        return s.set(pl.Series(r.random(n) < 0.03), None)
    if layout == "int32":
        return s.cast(pl.Int32)
    if layout == "uint32":
        return (s + ng).cast(pl.UInt32)
    assert layout == "date"
    return (s + 20_000).cast(pl.Int32).cast(pl.Date)


@pytest.mark.parametrize("threads", [1, 16])
@pytest.mark.parametrize("layout", KEY_LAYOUTS)
def test_many_groups_key_layouts(threads: int, layout: str) -> None:
    n = 250_000
    r = np.random.default_rng(5)
    x = r.normal(0, 10, n)
    df = pl.DataFrame(
        {
            "k": many_groups_key(layout, n, 90_000, 3),
            "i": r.integers(-1000, 1000, n),
            "x": pl.Series(x).set(pl.Series(r.random(n) < 0.1), None),
            "row": np.arange(n),
        }
    )
    e = ladle.Engine(threads=threads)
    lf = (
        df.lazy()
        .group_by("k")
        .agg(
            pl.col("i").sum().alias("s"),
            pl.col("x").max().alias("mx"),
            pl.col("x").mean().alias("m"),
            pl.col("row").first().alias("first"),
            pl.col("row").last().alias("last"),
            pl.len(),
        )
        .sort("k")
    )
    assert_same(lf, e, check_exact=False, rel_tol=1e-9, abs_tol=1e-9)
    # groups in order of first appearance, and the keys gathered from first rows
    lf = df.lazy().group_by("k", maintain_order=True).agg(pl.col("i").sum(), pl.col("row").min())
    assert_same(lf, e)
    # a filter on the sums (q18's shape) and a distinct over the key
    lf = df.lazy().group_by("k").agg(pl.col("i").sum()).filter(pl.col("i") > 1500).sort("k")
    assert_same(lf, e)
    assert_same(df.lazy().unique(subset="k", keep="first", maintain_order=True), e)


def join_frames(nl: int, nr: int, keys: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    r = np.random.default_rng(seed)
    lk = pl.Series(r.integers(0, keys, nl)).set(pl.Series(r.random(nl) < 0.05), None)
    rk = pl.Series(r.integers(0, keys * 2, nr)).set(pl.Series(r.random(nr) < 0.05), None)
    left = pl.DataFrame({"k": lk, "a": np.arange(nl), "s": [f"l{x % 97}" for x in range(nl)]})
    right = pl.DataFrame({"k": rk, "b": np.arange(nr) * 3, "t": r.normal(0, 1, nr)})
    return left, right


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti"])
def test_join_build_left(threads: int, how: str) -> None:
    # right more than 4x the left and over 65,536 rows: the left side is built
    left, right = join_frames(20_000, 200_000, 30_000, 3)
    lf = left.lazy().join(right.lazy(), on="k", how=how)  # type: ignore[arg-type]
    # Polars promises no row order for inner, full and right joins
    assert_same(lf, ladle.Engine(threads=threads), ordered=how in ("left", "semi", "anti"))


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti", "full", "right"])
def test_join_build_right(threads: int, how: str) -> None:
    left, right = join_frames(150_000, 90_000, 40_000, 4)
    lf = left.lazy().join(right.lazy(), on="k", how=how)  # type: ignore[arg-type]
    # Polars promises no row order for inner, full and right joins
    assert_same(lf, ladle.Engine(threads=threads), ordered=how in ("left", "semi", "anti"))


@pytest.mark.parametrize("threads", [1, 16])
@pytest.mark.parametrize("layout", KEY_LAYOUTS)
@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti", "full"])
def test_join_many_key_layouts(threads: int, layout: str, how: str) -> None:
    # a build side of many keys: numbered by value (a dense table probed by
    # value) or hash partitioned, probed by keys in and out of its range
    build = pl.DataFrame({"k": many_groups_key(layout, 60_000, 50_000, 7)}).with_columns(
        b=pl.int_range(pl.len())
    )
    probe = pl.DataFrame({"k": many_groups_key(layout, 300_000, 150_000, 8)}).with_columns(
        a=pl.int_range(pl.len())
    )
    e = ladle.Engine(threads=threads)
    for nulls_equal in (False, True):
        lf = probe.lazy().join(build.lazy(), on="k", how=how, nulls_equal=nulls_equal)  # type: ignore[arg-type]
        assert_same(lf, e, ordered=how in ("left", "semi", "anti"))


@pytest.mark.parametrize("threads", THREADS)
def test_join_expanding(threads: int) -> None:
    # few keys, many pairs: the pairs are kept as runs and written per partition
    left, right = join_frames(70_000, 3_000, 40, 5)
    lf = left.lazy().join(right.lazy(), on="k", how="left").select(pl.len(), pl.col("b").sum(), pl.col("a").sum())
    assert_same(lf, ladle.Engine(threads=threads))


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("how", ["inner", "left", "full", "right", "semi", "anti"])
def test_join_unique_build_keys(threads: int, how: str) -> None:
    # every build row its own key (a dimension's primary key): pairs come from
    # each group's one row, without the rows-by-group index
    r = np.random.default_rng(6)
    nl, nr = 120_000, 100_000
    left = pl.DataFrame({"k": pl.Series(r.integers(0, 150_000, nl)).set(pl.Series(r.random(nl) < 0.05), None),
                         "a": np.arange(nl)})
    right = pl.DataFrame({"k": r.permutation(nr) * 3 // 2, "b": r.normal(0, 1, nr), "s": [f"r{x % 89}" for x in range(nr)]})
    lf = left.lazy().join(right.lazy(), on="k", how=how)  # type: ignore[arg-type]
    assert_same(lf, ladle.Engine(threads=threads), ordered=how in ("left", "semi", "anti"))
