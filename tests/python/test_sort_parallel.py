"""The CPU sort over many rows and threads against Polars: keys packed into
64-bit codes, sorted by a parallel radix sort (MSD scatter into buckets, the
buckets apart, a skewed bucket by itself), and the rows tied on a first segment
sorted by the next (src/backend/cpu/sort.c, "keys as codes"). Stability is
checked through a row number carried along: the sorted frames must be equal
row for row, ties in their input order as Polars keeps them (maintain_order)."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import ladle

N = 200_000  # above the parallel sort's threshold (65536 rows)


def frame(n: int, seed: int) -> pl.DataFrame:
    g = np.random.default_rng(seed)
    big = g.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    big[:3] = [-(2**63), 2**63 - 1, 0]  # the whole 64 bits: the range takes every bit
    f = g.normal(size=n)
    f[g.random(n) < 0.01] = np.nan
    f[g.random(n) < 0.01] = 0.0
    f[g.random(n) < 0.01] = -0.0
    words = np.array(["", "a", "ab", "b", "zz", "ü", "long string value"], dtype=object)
    return pl.DataFrame({
        "big": big,
        "big_n": pl.Series(big).scatter(g.choice(n, n // 20, replace=False), None),
        "few": g.integers(0, 5, n).astype(np.int32),   # long runs of ties
        "few_n": pl.Series(g.integers(0, 3, n).astype(np.int16)).scatter(g.choice(n, n // 10, replace=False), None),
        "skew": np.where(g.random(n) < 0.9, 7, g.integers(0, 1 << 40, n)).astype(np.int64),  # one bucket of 90%
        "u": g.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
        "f": f,
        "s": pl.Series(words[g.integers(0, len(words), n)]).scatter(g.choice(n, n // 50, replace=False), None),
        "b": g.random(n) < 0.5,
        "rid": np.arange(n, dtype=np.int64),
    })


KEYS = [
    (["big"], [False]),
    (["big"], [True]),
    (["big_n"], [False]),                     # 65 bits: a null flag, then the value
    (["big_n", "few"], [True, False]),
    (["few", "big"], [False, False]),         # runs of a fifth of the rows, each by a 64-bit key
    (["few_n", "u", "big"], [True, False, True]),
    (["skew"], [False]),
    (["skew", "f"], [False, True]),
    (["f"], [False]),
    (["s", "big"], [True, False]),
    (["b", "few", "s"], [False, True, False]),
    (["few"], [False]),                       # only ties: stability alone
]


@pytest.mark.parametrize("threads", [1, 3, 8])
@pytest.mark.parametrize("nulls_last", [False, True])
def test_sort_many_rows_matches_polars(threads: int, nulls_last: bool) -> None:
    df = frame(N, 11)
    eng = ladle.Engine(threads=threads, raise_on_fail=True)
    for by, desc in KEYS:
        q = df.lazy().sort(by, descending=desc, nulls_last=nulls_last, maintain_order=True)
        got = q.collect(engine=eng)
        assert_frame_equal(got, q.collect(), check_exact=True), (by, desc)


@pytest.mark.parametrize("threads", [2, 8])
def test_sort_over_many_chunks_and_after_a_filter(threads: int) -> None:
    # a frame of many pieces, filtered (the keys evaluated over the kept rows) and
    # sorted, then sliced: the same rows as Polars
    df = pl.concat([frame(40_000, 20 + i) for i in range(6)], rechunk=False)
    eng = ladle.Engine(threads=threads, raise_on_fail=True)
    lf = df.lazy()
    for q in (lf.filter(pl.col("few") != 2).sort("big_n", "rid", nulls_last=True, maintain_order=True),
              lf.sort("few", "s", "big", descending=[True, False, False], maintain_order=True).slice(1000, 5000),
              lf.with_columns((pl.col("big") % 1000).alias("m")).sort("m", "u", maintain_order=True)):
        assert_frame_equal(q.collect(engine=eng), q.collect(), check_exact=True)
