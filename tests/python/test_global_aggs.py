"""Aggregations over a whole column (a select of min, max, mean, ..., no group_by)
against Polars, on the paths that read no group ids (agg.c: a whole group's ids are
made only where a kernel reads them, ladle_groups_ids):

- min/max of numbers in eight register lanes, NaN only where a lane (and then the
  column) met nothing else, over many partitions and one, odd lengths, NaN runs;
- min/max of strings over pieces in parallel (no concatenation), ties and nulls;
- means: a Float64 partition summed as Polars sums a chunk, integers in lanes,
  the one-column mean (Polars' pairwise tree cut into tasks), a Date's mean;
- Date to Int64 and Int32 to Date casts, which share or copy the integers;
- whole-group aggregations that do read ids (median, n_unique, first/last, arg_max,
  a window over no partition) next to the ones that do not.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from conftest import assert_same

import ladle

THREADS = [1, 3, 16]


def frame(n: int, seed: int, chunks: int) -> pl.DataFrame:
    r = np.random.default_rng(seed)
    f = r.normal(0, 1e3, n)
    f[r.random(n) < 0.02] = np.nan
    f[: min(n, 37)] = np.nan  # a NaN run over whole lanes at the start
    i = r.integers(-(2**40), 2**40, n)
    df = pl.DataFrame(
        {
            "f": f,
            "f_n": pl.Series(f).set(pl.Series(r.random(n) < 0.1), None),
            "i": i,
            "i32": pl.Series(r.integers(-(2**31), 2**31 - 1, n), dtype=pl.Int32),
            "u8": pl.Series(r.integers(0, 255, n), dtype=pl.UInt8),
            "i_n": pl.Series(i).set(pl.Series(r.random(n) < 0.3), None),
            "f32": pl.Series(r.normal(0, 1, n), dtype=pl.Float32),
            "d": pl.Series(r.integers(-20000, 40000, n), dtype=pl.Int32).cast(pl.Date),
            "s": pl.Series([f"v{x:05d}" for x in r.integers(0, 50000, n)]),
            "s_n": pl.Series([f"{x}" * (x % 5) for x in r.integers(0, 300, n)]).set(
                pl.Series(r.random(n) < 0.2), None
            ),
        }
    )
    if chunks > 1:
        step = (n + chunks - 1) // chunks
        df = pl.concat([df.slice(k, step) for k in range(0, n, step)], rechunk=False)
    return df


AGGS = [
    pl.col("f").max().alias("f_max"),
    pl.col("f").min().alias("f_min"),
    pl.col("f_n").max().alias("fn_max"),
    pl.col("i").max().alias("i_max"),
    pl.col("i32").min().alias("i32_min"),
    pl.col("u8").max().alias("u8_max"),
    pl.col("i_n").min().alias("in_min"),
    pl.col("f32").max().alias("f32_max"),
    pl.col("d").max().alias("d_max"),
    pl.col("s").max().alias("s_max"),
    pl.col("s").min().alias("s_min"),
    pl.col("s_n").max().alias("sn_max"),
    pl.col("s_n").min().alias("sn_min"),
    pl.col("f").mean().alias("f_mean"),
    pl.col("f_n").mean().alias("fn_mean"),
    pl.col("i").mean().alias("i_mean"),
    pl.col("i32").mean().alias("i32_mean"),
    pl.col("i_n").mean().alias("in_mean"),
    pl.col("d").mean().alias("d_mean"),
    pl.col("f_n").std().alias("fn_std"),
    pl.col("i").sum().alias("i_sum"),
    pl.col("f_n").count().alias("fn_count"),
    pl.len().alias("len"),
]


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("n,chunks", [(1, 1), (9, 1), (1000, 1), (300_001, 1), (300_001, 7), (1_200_003, 23)])
def test_whole_column_aggregations(threads: int, n: int, chunks: int) -> None:
    df = frame(n, n + chunks, chunks)
    eng = ladle.Engine(threads=threads)
    assert_same(df.lazy().select(AGGS), eng, rel_tol=1e-12)


@pytest.mark.parametrize("threads", [1, 16])
def test_min_max_all_nan_and_infinities(threads: int) -> None:
    n = 100_003
    eng = ladle.Engine(threads=threads)
    nan = np.full(n, np.nan)
    edge = np.full(n, np.nan)
    edge[n // 2] = -np.inf  # one number among NaNs: it, not NaN
    edge[n - 1] = -0.0
    df = pl.DataFrame({"nan": nan, "edge": edge, "inf": np.full(n, np.inf)})
    for chunks in (1, 5):
        d = df if chunks == 1 else pl.concat([df.slice(k, 20_001) for k in range(0, n, 20_001)], rechunk=False)
        assert_same(
            d.lazy().select(
                pl.col("nan").max().alias("a"),
                pl.col("nan").min().alias("b"),
                pl.col("edge").max().alias("c"),
                pl.col("edge").min().alias("d"),
                pl.col("inf").min().alias("e"),
                pl.col("nan").mean().alias("f"),
            ),
            eng,
        )


@pytest.mark.parametrize("threads", [1, 16])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_min_max_with_nulls_nan_and_infinities(threads: int, seed: int) -> None:
    """min/max over a validity bitmap (the 8-lane loop that selects a null row's lane
    value): NaN, +-inf and nulls mixed, lanes with only nulls or only NaN, odd starts."""
    r = np.random.default_rng(seed)
    n = 200_003
    x = r.normal(0, 1, n)
    u = r.random(n)
    x[u < 0.2] = np.nan
    x[(u > 0.5) & (u < 0.501)] = np.inf
    x[(u > 0.6) & (u < 0.601)] = -np.inf
    x[:64] = np.nan  # lanes that start on NaN
    nulls = pl.Series(r.random(n) < [0.05, 0.5, 0.95][seed])
    i = r.integers(-1000, 1000, n)
    df = pl.DataFrame({"f": pl.Series(x).set(nulls, None), "i": pl.Series(i).set(nulls, None),
                       "onlynan": pl.Series(np.full(n, np.nan)).set(nulls, None)})
    eng = ladle.Engine(threads=threads)
    for chunks in (1, 7):
        d = df if chunks == 1 else pl.concat([df.slice(k, 29_001) for k in range(0, n, 29_001)], rechunk=False)
        assert_same(
            d.lazy().select(
                pl.col("f").max().alias("a"), pl.col("f").min().alias("b"),
                pl.col("i").max().alias("c"), pl.col("i").min().alias("d"),
                pl.col("onlynan").max().alias("e"), pl.col("onlynan").min().alias("g"),
                pl.col("f").cast(pl.Float32).min().alias("h"),
            ),
            eng,
        )
        assert_same(d.lazy().slice(3).select(pl.col("f").max(), pl.col("i").min()), eng)


@pytest.mark.parametrize("threads", [1, 16])
def test_string_extremes_ties_and_prefixes(threads: int) -> None:
    # strings equal in their first 8 bytes, prefixes of each other, a NUL byte,
    # bytes above 0x7f: ordered by the whole string
    vals = ["abcdefgh", "abcdefghi", "abcdefgh\x00", "abcdefgg~", "", "é", "ab", "abcdefgi", None, "zz" * 20]
    r = np.random.default_rng(3)
    s = [vals[k] for k in r.integers(0, len(vals), 200_000)]
    eng = ladle.Engine(threads=threads)
    df = pl.DataFrame({"s": s})
    for d in (df, pl.concat([df.slice(k, 30_000) for k in range(0, len(s), 30_000)], rechunk=False)):
        assert_same(d.lazy().select(pl.col("s").max().alias("mx"), pl.col("s").min().alias("mn")), eng)
    # the extremes among strings of at most 8 bytes that differ only by trailing
    # NUL bytes (equal prefixes: the longer is the greater), and the greatest or
    # least one last in the buffer, shorter than 8 bytes
    for pool in (["ab", "ab\x00", "ab\x00\x00", "a", "a\x00", None], ["\x00", "", "\x00\x00\x00\x00\x00\x00\x00\x00", None]):
        s2 = [pool[k] for k in r.integers(0, len(pool), 140_000)]
        for tail in ([], ["b"], ["\x00"], ["abcdefgh\x00"]):
            d = pl.DataFrame({"s": s2 + tail}, schema={"s": pl.String})
            assert_same(d.lazy().select(pl.col("s").max().alias("mx"), pl.col("s").min().alias("mn")), eng)
    none = pl.DataFrame({"s": pl.Series([None] * 70_000, dtype=pl.String)})
    assert_same(none.lazy().select(pl.col("s").max(), pl.col("s").min().alias("m2")), eng)


@pytest.mark.parametrize("threads", [1, 16])
def test_whole_group_aggregations_that_read_ids(threads: int) -> None:
    df = frame(200_001, 5, 6)
    eng = ladle.Engine(threads=threads)
    assert_same(
        df.lazy().select(
            pl.col("f").median().alias("med"),
            pl.col("i").n_unique().alias("nu"),
            pl.col("i_n").last().alias("last"),
            pl.col("f_n").first().alias("first"),
            pl.col("i").arg_max().alias("am"),
            pl.col("s").arg_min().alias("asm"),
            pl.col("i").quantile(0.3).alias("q"),
        ),
        eng,
    )
    assert_same(
        df.lazy().select(
            (pl.col("i") - pl.col("i").max()).alias("dmax"),
            pl.col("f").rank().alias("rk"),
            pl.col("i").last().over(pl.lit(1)).alias("lo"),
        ),
        eng,
    )
    assert_same(df.lazy().group_by(pl.lit(1).alias("one")).agg(pl.col("i").max(), pl.col("s").min()), eng)


def test_date_int_casts() -> None:
    eng = ladle.Engine(threads=3)
    d = pl.Series([dt.date(1970, 1, 1), None, dt.date(1900, 3, 1), dt.date(2262, 4, 11)] * 50_000)
    df = pl.DataFrame({"d": d, "i": pl.Series([0, 1, -25567, None] * 50_000, dtype=pl.Int32)})
    assert_same(
        df.lazy().select(
            pl.col("d").cast(pl.Int64).alias("d64"),
            pl.col("d").cast(pl.Int32).alias("d32"),
            pl.col("i").cast(pl.Date).alias("id"),
            pl.col("i").cast(pl.Int64).cast(pl.Datetime("ms")).alias("idt"),
            pl.col("d").mean().alias("dm"),
        ),
        eng,
    )
