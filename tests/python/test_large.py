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


def test_many_group_keys_of_every_kind(engine) -> None:
    """Keys with about as many groups as rows go through ladle's partitioned
    build: integers, short strings, long strings that share their first 16
    bytes (so the inline prefix cannot decide), nulls; as group-by keys, in
    several-key group-bys, and as join keys probed from the other side."""
    n = 300_000
    rng = np.random.default_rng(11)
    k = rng.integers(0, n, n)
    null = rng.random(n) < 0.02
    df = pl.DataFrame({
        "i": pl.Series(np.where(null, None, k).tolist(), dtype=pl.Int64),
        "s": [None if m else f"u{v}" for m, v in zip(null, k)],
        "long": [None if m else f"a-shared-16-byte-prefix-{v}" for m, v in zip(null, k)],
        "v": rng.random(n),
    })
    for key in ("i", "s", "long"):
        assert_same(df.lazy().group_by(key).agg(pl.col("v").sum(), pl.len()), engine, ordered=False)
        assert_same(df.lazy().group_by(key, maintain_order=True).agg(pl.col("v").first()), engine)
        other = df.lazy().select(key, w=pl.col("v") * 2).unique(subset=key, keep="first", maintain_order=True)
        assert_same(df.lazy().join(other, on=key, how="inner"), engine, ordered=False)
    assert_same(df.lazy().group_by("s", "i").agg(pl.col("v").mean()), engine, ordered=False)
    assert_same(df.lazy().select(pl.col("long").n_unique(), pl.col("i").n_unique()), engine)
