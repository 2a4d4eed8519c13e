"""A Parquet scan of fewer row groups than threads splits its column chunks.

With fewer (row group, column) decoding tasks than twice the engine's
threads, a chunk of several pages is decoded by several threads, each a run of
whole pages (its dictionary page too), and the pieces are put together; a
filter's terms on a String column that is not wholly dictionary-encoded are
evaluated by each thread on its rows. Every case is compared with Polars and
with the same scan on one thread a chunk (LADLE_SPLIT_PAGES=0); the engine's
counter says the chunks were split."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

import ladle


def table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    nulls = rng.random(n) < 0.1
    words = np.array(["red", "green", "blue", "a much longer string than twelve bytes", "é"])
    return pa.table({
        "i64": pa.array(rng.integers(-(10**12), 10**12, n)),
        "i32n": pa.array(np.where(nulls, None, rng.integers(0, 1000, n)).tolist(), pa.int32()),
        "f64": pa.array(rng.random(n)),
        "f64n": pa.array(np.where(nulls, None, rng.random(n)).tolist(), pa.float64()),
        "date": pa.array(rng.integers(0, 20000, n).astype("datetime64[D]")),
        "b": pa.array(rng.random(n) < 0.5),
        "low": pa.array(words[rng.integers(0, len(words), n)].tolist(), pa.string()),
        "uniq": pa.array([None if k else f"name {i} {words[i % 5]}" for i, k in enumerate(nulls)],
                         pa.string()),
        "lst": pa.array([[i, i + 1] if i % 3 else None for i in range(n)], pa.list_(pa.int64())),
    })


@pytest.fixture(scope="module", params=[("1.0", "zstd"), ("2.0", "snappy"), ("1.0", "none")])
def path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two row groups of many small pages; `uniq` outgrows its dictionary and
    falls back to PLAIN pages part way."""
    version, codec = request.param
    p = tmp_path_factory.mktemp("split") / "t.parquet"
    pq.write_table(table(20_000, 3), p, row_group_size=12_000, data_page_size=2048,
                   data_page_version=version, compression=codec, dictionary_pagesize_limit=4096)
    return p


def with_split(mode: str, lf: pl.LazyFrame, engine: ladle.Engine) -> tuple[pl.DataFrame, int]:
    """lf on engine with LADLE_SPLIT_PAGES=mode, and the chunks it split."""
    before = engine.stats()["chunks_split"]
    os.environ["LADLE_SPLIT_PAGES"] = mode
    try:
        got = lf.collect(engine=engine)
    finally:
        del os.environ["LADLE_SPLIT_PAGES"]
    return got, engine.stats()["chunks_split"] - before


def both(lf: pl.LazyFrame, engine: ladle.Engine) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """lf with every chunk of several pages split (as on a machine of more
    threads than this one's: an engine's threads are capped to its cores),
    lf with none, and the chunks split."""
    split, n = with_split("1", lf, engine)
    whole, none = with_split("0", lf, engine)
    assert none == 0
    return split, whole, n


@pytest.fixture(scope="module")
def sixteen() -> ladle.Engine:
    return ladle.Engine(threads=16, raise_on_fail=True)


QUERIES = {
    "all": lambda lf: lf,
    "some": lambda lf: lf.select("f64n", "uniq", "date"),
    "head": lambda lf: lf.head(13_001),
    "contains": lambda lf: lf.filter(pl.col("uniq").str.contains("gre")).select("i64", "uniq"),
    "starts": lambda lf: lf.filter(pl.col("uniq").str.starts_with("name 1")).select("i32n"),
    "two_terms": lambda lf: lf.filter(pl.col("uniq").str.ends_with("blue") & (pl.col("low") != "red"))
    .select("f64", "low"),
    "count": lambda lf: lf.filter(pl.col("uniq").str.contains("red")).select(pl.len()),
    "group": lambda lf: lf.group_by("low").agg(pl.col("f64n").sum(), pl.col("i32n").max()),
}


@pytest.mark.parametrize("q", list(QUERIES))
def test_split_scan_equals_polars(path: Path, q: str, sixteen: ladle.Engine) -> None:
    lf = QUERIES[q](pl.scan_parquet(path))
    split, whole, n = both(lf, sixteen)
    assert_frame_equal(split, lf.collect(), check_row_order=q != "group")
    assert_frame_equal(split, whole, check_row_order=q != "group")
    assert n > 0, "no chunk was split"


def test_many_row_groups_are_not_split(tmp_path: Path, sixteen: ladle.Engine) -> None:
    """Unless forced, a scan with a task a thread splits nothing."""
    p = tmp_path / "many.parquet"
    pq.write_table(table(20_000, 4), p, row_group_size=500, data_page_size=1024)
    lf = pl.scan_parquet(p).select("i64", "uniq")
    before = sixteen.stats()["chunks_split"]
    assert_frame_equal(lf.collect(engine=sixteen), lf.collect())
    assert sixteen.stats()["chunks_split"] == before


def test_one_page_chunks_are_not_split(tmp_path: Path, sixteen: ladle.Engine) -> None:
    p = tmp_path / "onepage.parquet"
    pq.write_table(table(3_000, 5), p, row_group_size=3_000)
    lf = pl.scan_parquet(p).select("i64", "f64")
    split, _, n = both(lf, sixteen)
    assert_frame_equal(split, lf.collect())
    assert n == 0


def test_a_corrupt_page_in_a_split_chunk_is_an_error(tmp_path: Path, sixteen: ladle.Engine) -> None:
    p = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"x": pa.array(np.arange(50_000, dtype=np.int64))}), p,
                   row_group_size=50_000, data_page_size=4096, compression="zstd")
    raw = bytearray(p.read_bytes())
    meta = pq.ParquetFile(p).metadata.row_group(0).column(0)
    mid = meta.data_page_offset + meta.total_compressed_size // 2
    raw[mid:mid + 64] = bytes(64)  # zeros over a page (its header or its zstd frame)
    p.write_bytes(bytes(raw))
    with pytest.raises(ladle.LadleError) as e:
        pl.scan_parquet(p).select(pl.col("x").sum()).collect(engine=sixteen)
    assert "bad.parquet" in str(e.value)
