"""ladle.Engine(memory_limit=...): the engine's memory resource counts what a query
allocates on every thread, refuses an allocation past the limit with a clean error
naming the sizes, and the engine stays usable (issue 17, memory resources)."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import ladle


def _query() -> pl.LazyFrame:
    n = 1_000_000
    lf = pl.LazyFrame({"g": np.arange(n) % 1000, "x": np.random.default_rng(1).random(n)})
    return lf.group_by("g").agg(pl.col("x").sum(), pl.col("x").std().alias("s")).sort("g")


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_memory_limit_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(ValueError, match="memory_limit"):
        ladle.Engine(memory_limit=bad)  # type: ignore[arg-type]


def test_a_query_past_the_limit_raises_naming_the_sizes_and_the_engine_stays_usable() -> None:
    q = _query()
    eng = ladle.Engine(threads=2, memory_limit=1 << 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ladle.FallbackWarning)  # an error, not a fallback
        with pytest.raises(ladle.LadleMemoryError, match=r"memory limit exceeded: .* needed \d+ bytes .*memory_limit of 1048576 bytes"):
            q.collect(engine=eng)
    with pytest.raises(MemoryError):  # it is a MemoryError, with or without raise_on_fail
        q.collect(engine=ladle.Engine(threads=2, memory_limit=1 << 20, raise_on_fail=True))
    assert eng.stats()["memory_bytes"] == 0  # the failed query gave everything back
    small = pl.LazyFrame({"a": [1, 2, 3]}).select(pl.col("a").sum())
    assert_frame_equal(small.collect(engine=eng), small.collect())


def test_the_engine_counts_its_memory_and_a_large_enough_limit_changes_nothing() -> None:
    q = _query()
    eng = ladle.Engine(threads=2, memory_limit=1 << 30)
    got = q.collect(engine=eng)
    assert_frame_equal(got, q.collect(), check_exact=False)
    stats = eng.stats()
    # the group ids alone are 4 bytes a row
    assert 4_000_000 <= stats["memory_peak"] <= 1 << 30
    del got
    gc.collect()
    assert eng.stats()["memory_bytes"] == 0
    free = ladle.Engine(threads=2)
    q.collect(engine=free)
    assert free.stats()["memory_peak"] > 0


@pytest.mark.parametrize("how", ["filter", "join"])
def test_string_views_a_query_gathers_come_from_the_engines_resource(how: str) -> None:
    # gathered string views (16 bytes a row) are the engine's memory: counted, under
    # its limit, reused from its block cache (they came from the process's host
    # allocator before, an mmap and page faults per morsel, uncounted)
    n = 1_000_000
    df = pl.DataFrame({"k": np.arange(n) % 1000, "s": [f"name-{i % 7919:08d}-long" for i in range(n)]})
    lf = df.lazy()
    q = (lf.filter(pl.col("k") % 2 == 0) if how == "filter"
         else lf.join(pl.LazyFrame({"k": np.arange(0, 1000, 2)}), on="k"))
    base = ladle.Engine(threads=2)
    whole = base.execute(lf.select(pl.all()))  # the frame as the engine holds it
    eng = ladle.Engine(threads=2)
    res = eng.execute(q)
    # the kept rows' k (8 bytes) and s's views (16 bytes) on top of the frame
    assert eng.stats()["memory_bytes"] - base.stats()["memory_bytes"] >= 24 * (n // 2)
    del whole
    assert_frame_equal(res.to_polars().sort("s", "k"), q.collect().sort("s", "k"))
    with pytest.raises(ladle.LadleMemoryError, match="memory limit exceeded"):
        q.collect(engine=ladle.Engine(threads=2, memory_limit=4 << 20))
