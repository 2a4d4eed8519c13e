"""ladle's Parquet writer: files written from ladle results and by sink_parquet read
back equal in pyarrow, Polars, DuckDB and ladle itself, with every codec, with and
without dictionaries, and carry correct statistics."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

import ladle


def frame(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    nulls = rng.random(n) < 0.15
    words = ["", "a", "ladle", "ünïcödé", "x" * 100, "0123"]
    def opt(values: list) -> list:
        return [None if m else v for m, v in zip(nulls, values)]
    return pl.DataFrame(
        {
            "i8": pl.Series(opt(rng.integers(-128, 127, n).tolist()), dtype=pl.Int8),
            "i16": pl.Series(opt(rng.integers(-3000, 3000, n).tolist()), dtype=pl.Int16),
            "i32": pl.Series(opt(rng.integers(-2**31, 2**31 - 1, n).tolist()), dtype=pl.Int32),
            "i64": pl.Series(opt(rng.integers(-2**62, 2**62, n).tolist()), dtype=pl.Int64),
            "u8": pl.Series(opt(rng.integers(0, 255, n).tolist()), dtype=pl.UInt8),
            "u32": pl.Series(opt(rng.integers(0, 2**32 - 1, n).tolist()), dtype=pl.UInt32),
            "u64": pl.Series(opt(rng.integers(0, 2**63, n, dtype=np.uint64).tolist()), dtype=pl.UInt64),
            "f32": pl.Series(opt(rng.normal(size=n).tolist()), dtype=pl.Float32),
            "f64": pl.Series(opt([float("nan") if k % 97 == 0 else v for k, v in enumerate(rng.normal(size=n))]), dtype=pl.Float64),
            "b": pl.Series(opt((rng.random(n) < 0.5).tolist()), dtype=pl.Boolean),
            "s": pl.Series(opt([words[k] for k in rng.integers(0, len(words), n)]), dtype=pl.String),
            "d": pl.Series(opt([dt.date(1970, 1, 1) + dt.timedelta(days=int(k)) for k in rng.integers(-5000, 20000, n)]), dtype=pl.Date),
            "ts": pl.Series(opt(rng.integers(0, 2**50, n).tolist()), dtype=pl.Int64).cast(pl.Datetime("us")),
            "ts_utc": pl.Series(opt(rng.integers(0, 2**60, n).tolist()), dtype=pl.Int64).cast(pl.Datetime("ns", "UTC")),
            "dec": pl.Series(opt([decimal.Decimal(int(k)).scaleb(-3) for k in rng.integers(-10**12, 10**12, n)]),
                             dtype=pl.Decimal(12, 3)),
            "dec38": pl.Series(opt([decimal.Decimal(int(k) * 10**18 + 7).scaleb(-10) for k in rng.integers(-2**62, 2**62, n)]),
                               dtype=pl.Decimal(38, 10)),
            "t": pl.Series(opt(rng.integers(0, 86_400 * 10**9, n).tolist()), dtype=pl.Int64).cast(pl.Time),
            "tags": pl.Series(opt([[None if j == 2 else words[(k + j) % len(words)] for j in range(k % 5)]
                                   for k in rng.integers(0, 1000, n)]), dtype=pl.List(pl.String)),
            "ids": pl.Series(opt([list(range(k % 4)) for k in rng.integers(0, 1000, n)]), dtype=pl.List(pl.Int32)),
            "bin": pl.Series(opt([w.encode() + b"\x00\x80" for w in (words[k] for k in rng.integers(0, len(words), n))]),
                             dtype=pl.Binary),
        }
    )


@pytest.mark.parametrize("compression", ["zstd", "snappy", "gzip", "uncompressed"])
@pytest.mark.parametrize("use_dictionary", [True, False])
def test_write_reads_back_everywhere(compression: str, use_dictionary: bool, tmp_path: Path, engine) -> None:
    df = frame(7_000, seed=11)
    path = tmp_path / "out.parquet"
    engine.execute(df.lazy()).write_parquet(path, compression=compression, use_dictionary=use_dictionary,
                                            row_group_size=2_500)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    assert_frame_equal(pl.read_parquet(path), df)
    assert_frame_equal(pl.from_arrow(pq.read_table(path)), df)  # type: ignore[arg-type]
    assert_frame_equal(pl.scan_parquet(path).collect(engine=engine), df)
    duckdb = pytest.importorskip("duckdb")
    got = duckdb.sql(f"select count(*), count(s), sum(i32) from '{path}'").fetchall()[0]
    assert got == (df.height, df["s"].count(), df["i32"].cast(pl.Int64).sum())


@pytest.mark.parametrize("row_group_size", [1, 7, 64, 333, 5_000])
def test_a_result_of_many_chunks(row_group_size: int, tmp_path: Path, small_engine) -> None:
    """A result in many chunks (a filter on an engine of 7-row morsels, some
    chunks empty) written as it is: row groups inside a chunk, across
    several, and one row each, read back equal to the rows kept."""
    df = frame(2_000, seed=23).with_row_index("r")
    pred = (pl.col("r") % 5 != 1) & ((pl.col("r") < 300) | (pl.col("r") > 420))
    res = small_engine.execute(df.lazy().filter(pred))
    path = tmp_path / "chunks.parquet"
    res.write_parquet(path, row_group_size=row_group_size)
    expected = df.filter(pred)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == expected.height
    assert meta.num_row_groups == -(-expected.height // row_group_size)
    assert_frame_equal(pl.read_parquet(path), expected)
    assert_frame_equal(pl.from_arrow(pq.read_table(path)), expected)  # type: ignore[arg-type]


def test_statistics_match_the_data(tmp_path: Path, engine) -> None:
    df = frame(3_000, seed=5)
    path = tmp_path / "stats.parquet"
    engine.execute(df.lazy()).write_parquet(path, row_group_size=1_000)
    meta = pq.ParquetFile(path).metadata
    table = pq.read_table(path)
    for g in range(meta.num_row_groups):
        part = table.slice(g * 1_000, 1_000)
        for k, name in enumerate(table.column_names):
            if name in ("ts_utc", "t"):  # pyarrow cannot turn nanosecond statistics into Python values
                continue
            st = meta.row_group(g).column(k).statistics
            col = part.column(name)
            if name in ("tags", "ids"):  # a list's statistics describe its elements
                col = pc.list_flatten(col)
                assert st.has_min_max and st.min == pc.min_max(col).as_py()["min"], name
                continue
            assert st.null_count == col.null_count, name
            if name in ("f64", "f32"):
                col = pc.filter(col, pc.invert(pc.is_nan(col)))
            mm = pc.min_max(col).as_py()
            assert st.has_min_max and st.min == mm["min"] and st.max == mm["max"], name


def test_sink_parquet_runs_on_ladle(tmp_path: Path, engine) -> None:
    df = frame(5_000, seed=2)
    path = tmp_path / "sink.parquet"
    lf = df.lazy().filter(pl.col("i32") > 0).with_columns((pl.col("f64") * 2).alias("f2"))
    lf.sink_parquet(path, engine=engine, compression="snappy", row_group_size=1_000)
    assert engine.last_run == "ladle"
    assert_frame_equal(pl.read_parquet(path), lf.collect())


def test_empty_result_and_unsupported_types(tmp_path: Path, engine) -> None:
    df = frame(10, seed=1).clear()
    path = tmp_path / "empty.parquet"
    engine.execute(df.lazy()).write_parquet(path)
    assert_frame_equal(pl.read_parquet(path), df)
    res = engine.execute(pl.DataFrame({"n": [None, None]}).lazy())
    with pytest.raises(ladle.UnsupportedError, match="'n'"):
        res.write_parquet(tmp_path / "null.parquet")
    assert not (tmp_path / "null.parquet").exists()


@pytest.mark.parametrize("compression", ["zstd", "uncompressed"])
def test_large_write_in_parallel(compression: str, tmp_path: Path) -> None:
    # past 65536 rows the chunks are encoded on the engine's threads, several windows
    # of them; dictionaries of 4- and 8-byte values (hashed as integers: -0.0 and 0.0
    # stay apart), one given up on after its first 65536 rows, nulls, lists
    n = 300_007
    rng = np.random.default_rng(5)
    nulls = rng.random(n) < 0.1
    few = rng.integers(0, 300, n)
    df = pl.DataFrame({
        "i32_few": pl.Series(np.where(nulls, None, few).tolist(), dtype=pl.Int32),
        "i64_few": pl.Series((few * 2**40).tolist(), dtype=pl.Int64),
        "f32_zero": pl.Series(np.where(few % 2 == 0, 0.0, -0.0).astype(np.float32)),
        "f64_few": pl.Series((few / 7.0).tolist()),
        "u16_few": pl.Series(few.astype(np.uint16)),
        "unique_first": pl.Series(np.where(np.arange(n) < 70_000, np.arange(n), few), dtype=pl.Int64),
        "s": pl.Series([None if m else f"v{k}" for m, k in zip(nulls, few)]),
        "ids": pl.Series([list(range(k % 4)) for k in few], dtype=pl.List(pl.Int32)),
    })
    engine = ladle.Engine(threads=2)
    path = tmp_path / "big.parquet"
    engine.execute(df.lazy()).write_parquet(path, compression=compression, row_group_size=40_000)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 8
    assert_frame_equal(pl.from_arrow(pq.read_table(path)), df)  # type: ignore[arg-type]
    assert_frame_equal(pl.scan_parquet(path).collect(engine=engine), df)
    # -0.0 and 0.0 both survive (a dictionary that merged them would lose a sign)
    signs = np.signbit(pq.read_table(path).column("f32_zero").to_numpy())
    assert signs.tolist() == (few % 2 == 1).tolist()
    enc = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i).has_dictionary_page
           for i in range(meta.num_columns)}
    assert enc["i32_few"] and enc["i64_few"] and enc["f64_few"]


@pytest.mark.parametrize("distinct", [1, 2, 3, 200, 5_000, 70_000])
def test_dense_columns_dictionary_widths_and_statistics(distinct: int, tmp_path: Path, engine) -> None:
    """Columns without nulls (min/max found by value, then their first rows) and
    dictionary indices of every bit width from 0 to 17 (packed 32 bits at a time)
    read back equal, with the statistics of each row group."""
    n = 150_001
    rng = np.random.default_rng(distinct)
    keys = rng.integers(0, distinct, n)
    df = pl.DataFrame({
        "i8": pl.Series(keys % 251 - 125, dtype=pl.Int8),
        "i16": pl.Series(keys % 30_011 - 15_000, dtype=pl.Int16),
        "u16": pl.Series(keys % 60_000, dtype=pl.UInt16),
        "i32": pl.Series(keys * 7 - 1_000, dtype=pl.Int32),
        "u32": pl.Series(keys * 3 + 2**31, dtype=pl.UInt32),
        "i64": pl.Series(keys * -(2**40) + 5, dtype=pl.Int64),
        "u64": pl.Series(keys.astype(np.uint64) * np.uint64(2**44) + np.uint64(2**63), dtype=pl.UInt64),
        "d": pl.Series(keys % 20_000, dtype=pl.Int32).cast(pl.Date),
    })
    path = tmp_path / "dense.parquet"
    rows = 40_000
    engine.execute(df.lazy()).write_parquet(path, row_group_size=rows)
    assert_frame_equal(pl.read_parquet(path), df)
    assert_frame_equal(pl.from_arrow(pq.read_table(path)), df)  # type: ignore[arg-type]
    meta, table = pq.ParquetFile(path).metadata, pq.read_table(path)
    for g in range(meta.num_row_groups):
        part = table.slice(g * rows, rows)
        for k, name in enumerate(table.column_names):
            st = meta.row_group(g).column(k).statistics
            mm = pc.min_max(part.column(name)).as_py()
            assert st.null_count == 0 and st.min == mm["min"] and st.max == mm["max"], (name, g)


def test_lists_without_empty_rows_and_pages_cut_by_bytes(tmp_path: Path, engine) -> None:
    """Lists with no null or empty row are written from their elements as they lie
    (a slice, not a gather): with null elements, row groups starting mid-elements,
    a result of many chunks. Pages end at about 128 KiB of values: strings of 90 KB
    to 300 KB (one or two a page), 8-byte values (16,124 rows a page)."""
    n = 120_001
    rng = np.random.default_rng(11)
    lens = rng.integers(1, 5, n)
    ids = [[None if (k + j) % 13 == 0 else int(k * 3 + j) for j in range(ln)]
           for k, ln in zip(rng.integers(0, 1000, n), lens)]
    words = [[f"w{k % 97}"] * int(ln) for k, ln in zip(rng.integers(0, 1000, n), lens)]
    df = pl.DataFrame({
        "ids": pl.Series(ids, dtype=pl.List(pl.Int32)),
        "words": pl.Series(words, dtype=pl.List(pl.String)),
        "i64": pl.Series(rng.integers(-2**62, 2**62, n), dtype=pl.Int64),
    })
    for name, lf in (("one", df.lazy()), ("many", pl.concat([df.slice(0, 50_000), df.slice(50_000)]).lazy())):
        path = tmp_path / f"{name}.parquet"
        engine.execute(lf).write_parquet(path, row_group_size=30_000)
        assert pq.ParquetFile(path).metadata.num_row_groups == 5
        assert_frame_equal(pl.read_parquet(path), df)
        assert_frame_equal(pl.from_arrow(pq.read_table(path)), df)  # type: ignore[arg-type]
        assert_frame_equal(pl.scan_parquet(path).collect(engine=engine), df)
    big = pl.DataFrame({"s": ["x" * int(k) + str(i) for i, k in enumerate(rng.integers(90_000, 300_000, 40))],
                        "k": list(range(40))})
    path = tmp_path / "big_strings.parquet"
    engine.execute(big.lazy()).write_parquet(path)
    assert_frame_equal(pl.read_parquet(path), big)
    assert_frame_equal(pl.from_arrow(pq.read_table(path)), big)  # type: ignore[arg-type]
    assert_frame_equal(pl.scan_parquet(path).collect(engine=engine), big)


def test_dictionaries_of_narrow_integer_spans_at_the_types_ends(tmp_path: Path, engine) -> None:
    """Integer columns whose values span little are dictionary-encoded by their
    distance from the minimum (no hashing): at the ends of each type's range
    (distances taken mod 2^64), with nulls, temporal types, one span too wide (hashed)."""
    n = 100_003
    rng = np.random.default_rng(3)
    k = rng.integers(0, 900, n)
    nulls = rng.random(n) < 0.2
    df = pl.DataFrame({
        "i8": pl.Series(k % 200 - 128, dtype=pl.Int8),
        "u8": pl.Series(255 - k % 200, dtype=pl.UInt8),
        "i16": pl.Series(k - 32_768, dtype=pl.Int16),
        "u16": pl.Series(65_535 - k, dtype=pl.UInt16),
        "i32": pl.Series(np.where(nulls, None, k - 2**31).tolist(), dtype=pl.Int32),
        "u32": pl.Series(2**32 - 1 - k, dtype=pl.UInt32),
        "i64_low": pl.Series(k.astype(np.int64) + np.int64(-2**63), dtype=pl.Int64),
        "i64_mid": pl.Series(k * 1000 - 450_000, dtype=pl.Int64),
        "u64_high": pl.Series(np.uint64(2**64 - 1) - k.astype(np.uint64), dtype=pl.UInt64),
        "dt": pl.Series(k * 1_000_000 + 1_600_000_000_000_000, dtype=pl.Int64).cast(pl.Datetime("us")),
        "date": pl.Series(k - 20_000, dtype=pl.Int32).cast(pl.Date),
        "wide": pl.Series(k.astype(np.int64) * np.int64(2**40), dtype=pl.Int64),
    })
    path = tmp_path / "spans.parquet"
    engine.execute(df.lazy()).write_parquet(path, row_group_size=30_000)
    assert_frame_equal(pl.read_parquet(path), df)
    assert_frame_equal(pl.from_arrow(pq.read_table(path)), df)  # type: ignore[arg-type]
    meta = pq.ParquetFile(path).metadata
    for g in range(meta.num_row_groups):
        for i in range(meta.num_columns):
            col = meta.row_group(g).column(i)
            assert col.has_dictionary_page, (col.path_in_schema, g)
