"""Parquet on ladle: the parquet-testing conformance files, round trips of files
written by pyarrow and Polars with every codec, dictionary on and off, data page v1
and v2, and TPC-H q1-q22 from Parquet files, all against Polars' own reader."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import assert_same
from polars.testing import assert_frame_equal
from tpch_queries import QUERIES, load_all

import ladle
from ladle import _native as N
from ladle.dtypes import to_ladle

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "parquet-testing"
FILES = sorted(p for p in DATA.glob("*.parquet"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_conformance_files(path: Path, engine) -> None:
    try:
        schema = pl.read_parquet_schema(path)
        expected = pl.read_parquet(path)
    except Exception:
        pytest.skip("Polars cannot read this file either")
    cols = [c for c, t in schema.items() if to_ladle(t) is not None]
    if not cols:
        pytest.skip(f"no column of a type ladle reads yet: {dict(schema)}")
    lf = pl.scan_parquet(path).select(cols)
    if "corrupt" in path.name:
        with pytest.raises(ladle.LadleError, match="CRC"):
            lf.collect(engine=engine)
        return
    got = assert_same(lf, engine)
    assert_frame_equal(got, expected.select(cols))
    assert_strings_valid_utf8(got)


def assert_strings_valid_utf8(df: pl.DataFrame) -> None:
    """Every String column (flat or in a list) holds valid UTF-8, checked by
    Python's decoder on each value's bytes."""
    for name, dtype in df.schema.items():
        col = df[name]
        if dtype == pl.List(pl.String):
            col = col.explode()
        elif dtype != pl.String:
            continue
        for raw in col.cast(pl.Binary).to_list():
            if raw is not None:
                raw.decode("utf-8")


@pytest.mark.parametrize("path", sorted(DATA.glob("bad_data/*.parquet")), ids=lambda p: p.name)
def test_bad_data_fails_cleanly(path: Path) -> None:
    e = N.Engine(2, 0)
    with pytest.raises(N.LadleError) as info:
        e.execute(N.scan_parquet([str(path)], None, -1))
    assert path.name in info.value.args[1]


def random_table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    nulls = rng.random(n) < 0.2

    def masked(values: np.ndarray) -> np.ndarray:
        return np.ma.masked_array(values, mask=nulls)

    def decimals(unscaled, precision: int, scale: int) -> pa.Array:
        return pa.array([None if m else decimal.Decimal(int(v)).scaleb(-scale) for m, v in zip(nulls, unscaled)],
                        type=pa.decimal128(precision, scale))

    words = np.array(["", "a", "ladle", "ünïcödé", "x" * 300, "0123456789"])
    return pa.table(
        {
            "i8": pa.array(masked(rng.integers(-128, 127, n, dtype=np.int8))),
            "i16": pa.array(masked(rng.integers(-30000, 30000, n, dtype=np.int16))),
            "i32": pa.array(masked(rng.integers(-2**31, 2**31 - 1, n, dtype=np.int32))),
            "i64": pa.array(masked(rng.integers(-2**62, 2**62, n, dtype=np.int64))),
            "u8": pa.array(masked(rng.integers(0, 255, n, dtype=np.uint8))),
            "u16": pa.array(masked(rng.integers(0, 65535, n, dtype=np.uint16))),
            "u32": pa.array(masked(rng.integers(0, 2**32 - 1, n, dtype=np.uint32))),
            "u64": pa.array(masked(rng.integers(0, 2**63, n, dtype=np.uint64))),
            "f32": pa.array(masked(rng.normal(size=n).astype(np.float32))),
            "f64": pa.array(masked(rng.normal(size=n))),
            "b": pa.array(masked(rng.random(n) < 0.5)),
            "s": pa.array([None if m else str(w) for m, w in zip(nulls, words[rng.integers(0, len(words), n)])]),
            "d": pa.array(masked(rng.integers(-10000, 30000, n).astype("datetime64[D]"))),
            "ts_us": pa.array(masked(rng.integers(0, 2**50, n).astype("datetime64[us]"))),
            "ts_ms": pa.array(masked(rng.integers(0, 2**40, n).astype("datetime64[ms]"))),
            "ts_ns_utc": pa.array(masked(rng.integers(0, 2**60, n).astype("datetime64[ns]")), type=pa.timestamp("ns", tz="UTC")),
            "const": pa.array(np.full(n, 7, dtype=np.int64)),
            # carried types: DECIMAL in INT32, INT64 and 16-byte storage, TIME, BINARY
            "dec9": decimals(rng.integers(-10**9 + 1, 10**9, n), 9, 2),
            "dec18": decimals(rng.integers(-10**17, 10**17, n), 18, 0),
            "dec38": decimals([int(v) * 10**19 + int(w) for v, w in
                               zip(rng.integers(-2**62, 2**62, n), rng.integers(0, 10**6, n))], 38, 6),
            "t_us": pa.array(masked(rng.integers(0, 86_400 * 10**6, n)), type=pa.int64()).cast(pa.time64("us")),
            "t_ns": pa.array(masked(rng.integers(0, 86_400 * 10**9, n)), type=pa.int64()).cast(pa.time64("ns")),
            # one level of lists: null lists, empty lists, null elements
            "tags": pa.array([None if m else [None if k == 3 else str(w) for k, w in enumerate(words[rng.integers(0, len(words), ln)])]
                              for m, ln in zip(nulls, rng.integers(0, 5, n))], type=pa.list_(pa.string())),
            "ids": pa.array([None if m else rng.integers(-50, 50, ln).tolist() for m, ln in zip(rng.random(n) < 0.1, rng.integers(0, 4, n))],
                            type=pa.list_(pa.int64())),
            "bin": pa.array([None if m else bytes(w, "utf-8") + b"\x00\xff"
                             for m, w in zip(nulls, words[rng.integers(0, len(words), n)])], type=pa.binary()),
        }
    )


WRITES = [
    dict(compression="none", use_dictionary=False, data_page_version="1.0"),
    dict(compression="snappy", use_dictionary=True, data_page_version="1.0"),
    dict(compression="gzip", use_dictionary=True, data_page_version="2.0"),
    dict(compression="zstd", use_dictionary=False, data_page_version="2.0", write_statistics=False),
    dict(compression="lz4", use_dictionary=True, data_page_version="2.0"),
    dict(compression="brotli", use_dictionary=False, data_page_version="1.0"),
    dict(compression="zstd", use_dictionary=False, data_page_version="2.0",
         column_encoding={"i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED",
                          "s": "DELTA_LENGTH_BYTE_ARRAY", "f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT"}),
    dict(compression="snappy", use_dictionary=False, data_page_version="1.0",
         column_encoding={"s": "DELTA_BYTE_ARRAY", "u64": "DELTA_BINARY_PACKED", "b": "RLE"}),
]


@pytest.mark.parametrize("opts", WRITES, ids=lambda o: f"{o['compression']}-dict{o['use_dictionary']}-v{o['data_page_version']}")
def test_round_trip_pyarrow(opts: dict, tmp_path: Path, engine, monkeypatch: pytest.MonkeyPatch) -> None:
    table = random_table(25_000, seed=len(str(opts)))
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=4_000, data_page_size=8_192, **opts)
    lf = pl.scan_parquet(path)
    for mmap in ["1", "0"]:  # chunks from the file's mapping, then read with pread
        monkeypatch.setenv("LADLE_MMAP", mmap)
        got = assert_same(lf, engine)
        assert got.height == 25_000


@pytest.mark.parametrize("compression", ["uncompressed", "snappy", "zstd", "lz4", "gzip", "brotli"])
def test_round_trip_polars(compression: str, tmp_path: Path, engine) -> None:
    df = pl.from_arrow(random_table(10_000, seed=3))
    assert isinstance(df, pl.DataFrame)
    path = tmp_path / "p.parquet"
    df.write_parquet(path, compression=compression, row_group_size=3_000)  # type: ignore[arg-type]
    assert_same(pl.scan_parquet(path), engine)


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_casts_in_a_predicate_pushed_into_the_scan(kind: str, tmp_path: Path, engine) -> None:
    """A filter whose predicate casts (log10 of an integer, a cast to Float32 or
    String) pushed by Polars into the scan: ladle typed the cast's operand over the
    scan's input, which a scan has not, and fell back ('translation (IndexError)',
    found by qfuzz reading its tables from files); now over the scan's columns,
    also where the column is projected away above the scan."""
    df = pl.DataFrame({"k": [0, 5, 1000, None, -3], "o": ["a", "b", "c", "d", "e"]}, schema={"k": pl.Int32, "o": pl.String})
    path = tmp_path / f"t.{kind}"
    getattr(df, f"write_{kind}")(path)
    scan = pl.scan_parquet(path) if kind == "parquet" else pl.scan_csv(path, schema=df.schema)
    for pred in (pl.col("k").log10().ne_missing(pl.lit(3)), pl.col("k").cast(pl.Float32) > 3,
                 pl.col("k").cast(pl.String).str.len_bytes() == 1, pl.col("k").cast(pl.Int8, strict=False).is_null()):
        for lf in (scan.filter(pred), scan.filter(pred).select("o")):
            assert_same(lf, engine)
            assert engine.last_run == "ladle"


def test_row_group_ranges(tmp_path: Path, engine) -> None:
    """The native scan asked for row groups [b, e), numbered over the files in order
    (what ladle.Loader reads, one row group at a time): exactly those rows, in order,
    with n_rows counting from the first of them, and a range past the last row group
    an error naming it."""
    t = random_table(1000, seed=5)
    pq.write_table(t, tmp_path / "a.parquet", row_group_size=300)  # 300, 300, 300, 100
    pq.write_table(t.slice(0, 50), tmp_path / "b.parquet", row_group_size=20)  # 20, 20, 10
    paths = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    whole = pl.concat([pl.read_parquet(p) for p in paths])
    starts = [0, 300, 600, 900, 1000, 1020, 1040, 1050]
    for b in range(8):
        for e in range(b, 8):
            for n_rows in (-1, 0, 7):
                plan = N.scan_parquet(paths, None, n_rows, None, False, False, b, e)
                got = engine._run(plan, "").to_polars()
                want = whole.slice(starts[b], starts[e] - starts[b])
                if n_rows >= 0:
                    want = want.head(n_rows)
                assert_frame_equal(got, want)
    with pytest.raises(N.LadleError, match=r"row groups \[2, 8\) asked of 7 in 2 file"):
        N.scan_parquet(paths, None, -1, None, False, False, 2, 8)


def test_first_and_last_over_empty_files(tmp_path: Path, engine) -> None:
    """first()/last() of an expression over a scan of files without rows: the
    group_by's one whole group has no row, and ladle gathered row -1 (a
    segfault; qfuzz 4801:46806 and 4801:103816)."""
    df = pl.DataFrame({"c": [], "k": []}, schema={"c": pl.UInt8, "k": pl.String})
    paths = []
    for i in range(3):
        paths.append(tmp_path / f"e{i}.parquet")
        df.write_parquet(paths[-1], row_group_size=3)
    scan = pl.scan_parquet(paths)
    for lf in (scan.select(pl.col("c").pow(2).last().alias("x")),
               scan.select(pl.col("c").cast(pl.Int64).first().alias("x"), pl.col("k").last()),
               scan.filter(pl.col("k").str.starts_with(" ")).select(pl.col("c").clip(3, 3).last())):
        assert_same(lf, engine)


def test_empty_and_many_files(tmp_path: Path, engine) -> None:
    t = random_table(1000, seed=9)
    paths = []
    for k in range(4):
        p = tmp_path / f"part{k}.parquet"
        pq.write_table(t.slice(k * 250, 250), p, row_group_size=100)
        paths.append(p)
    empty = tmp_path / "empty.parquet"
    pq.write_table(t.slice(0, 0), empty)
    assert_same(pl.scan_parquet(paths), engine)
    assert_same(pl.scan_parquet(empty), engine)
    assert_same(pl.scan_parquet(paths).filter(pl.col("i32") > 0).select("s", "i64").head(77), engine)
    assert_same(pl.scan_parquet(paths, n_rows=333), engine)
    assert_same(pl.scan_parquet(paths, row_index_name="idx", row_index_offset=5).filter(pl.col("b")), engine)


def test_hive_partitioned_dataset(tmp_path: Path, engine) -> None:
    """A dataset written by Polars with partition_by (integer, string and null
    partition values, several files per partition), scanned as a directory and as
    a glob: values, column order, pruning by partition predicates, n_rows and
    row_index all as Polars gives them."""
    rng = np.random.default_rng(5)
    n = 5000
    df = pl.DataFrame(
        {
            "x": rng.integers(-1000, 1000, n),
            "s": [f"v{i % 37}" for i in range(n)],
            "year": rng.choice([2019, 2020, 2021], n),
            "region": pl.Series(rng.choice(["eu", "us", "apac", ""], n)).replace("", None),
        }
    )
    root = tmp_path / "ds"
    df.write_parquet(root, partition_by=["year", "region"])
    # a second file in one partition, so a partition is more than one file
    extra = root / "year=2020" / "region=eu" / "extra.parquet"
    df.head(100).select("x", "s").write_parquet(extra)
    for src in (root, str(root / "**" / "*.parquet")):
        lf = pl.scan_parquet(src, hive_partitioning=True)
        assert_same(lf, engine)
        assert_same(lf.filter(pl.col("year") >= 2020).select("region", "x"), engine)
        assert_same(lf.filter(pl.col("region") == "eu", pl.col("x") > 0), engine)
        assert_same(lf.filter(pl.col("region").is_null()).select("x", "year"), engine)
        assert_same(lf.head(1234), engine)
        assert_same(lf.with_row_index("i").filter(pl.col("x") % 7 == 0), engine)
        assert_same(lf.group_by("year", "region").agg(pl.col("x").sum(), pl.len()), engine, ordered=False)
    # partition columns only: refused by name, and Polars answers
    with pytest.raises(ladle.UnsupportedError, match="partition columns only"):
        pl.scan_parquet(root, hive_partitioning=True).select("year").collect(engine=engine)


def test_unsupported_column_falls_back_by_name(tmp_path: Path) -> None:
    p = tmp_path / "l.parquet"
    pl.DataFrame({"l": [[[1]], [[2], [3]]], "a": [1, 2]}).write_parquet(p)  # a list of lists
    with pytest.raises(ladle.UnsupportedError, match="'l'"):
        pl.scan_parquet(p).collect(engine=ladle.Engine(raise_on_fail=True))
    assert_same(pl.scan_parquet(p).select("a"), ladle.Engine(raise_on_fail=True))


@pytest.fixture(scope="module")
def tpch_parquet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pl.LazyFrame]:
    d = tmp_path_factory.mktemp("tpch")
    out = {}
    for name, df in load_all().items():
        path = d / f"{name}.parquet"
        df.write_parquet(path, row_group_size=50_000)
        out[name] = pl.scan_parquet(path)
    return out


@pytest.mark.parametrize("q", sorted(QUERIES))
def test_tpch_from_parquet(q: int, tpch_parquet: dict[str, pl.LazyFrame], engine) -> None:
    got = assert_same(QUERIES[q](tpch_parquet), engine, rel_tol=1e-9)
    assert got.height > 0


def test_row_groups_skipped_by_statistics(tmp_path: Path) -> None:
    n = 100_000
    df = pl.DataFrame(
        {
            "k": np.arange(n),
            "f": np.arange(n) * 0.5,
            "s": [f"{i:08d}" for i in range(n)],
            "d": [dt.date(2000, 1, 1) + dt.timedelta(days=i // 100) for i in range(n)],
            "n": pl.Series([None] * n, dtype=pl.Int64),
        }
    )
    path = tmp_path / "sorted.parquet"
    df.write_parquet(path, row_group_size=10_000)
    engine = ladle.Engine(raise_on_fail=True)
    cases = [
        (pl.col("k") > 95_000, 1),
        (pl.col("k").is_between(20_000, 29_999), 1),
        (pl.col("f") < 1000.0, 1),
        (pl.col("s") == "00050000", 1),
        (pl.col("d") >= dt.date(2002, 1, 1), 3),
        ((pl.col("k") > 5) & (pl.col("s") < "00010100"), 2),
        (pl.col("n") > 3, 0),  # all null: nothing can match
        (pl.col("f") > 49_000.0, 10),  # NaN sorts last in Polars: never skipped on max
        ((pl.col("k") > 95_000) | (pl.col("k") < 10), 10),  # a disjunction is not used
    ]
    for pred, read in cases:
        before = engine.stats()
        assert_same(pl.scan_parquet(path).filter(pred), engine)
        after = engine.stats()
        assert after["row_groups_read"] - before["row_groups_read"] == read, str(pred)
        assert after["row_groups_skipped"] - before["row_groups_skipped"] == 10 - read, str(pred)


def test_carried_types_move_through_plans(tmp_path: Path, engine) -> None:
    """DECIMAL (in INT32, INT64 and byte storage), TIME, BINARY and LIST columns are
    scanned, filtered, sliced, sorted and joined as payload, taken first/last,
    cast (decimal to float, time to int) and counted on ladle; computing on them
    or using them as keys is refused by name, so Polars answers instead."""
    t = random_table(20_000, seed=21).select(["i32", "i64", "s", "dec9", "dec18", "dec38", "t_us", "bin", "tags", "ids"])
    for as_int in (False, True):
        path = tmp_path / f"c{as_int}.parquet"
        pq.write_table(t, path, row_group_size=3_000, store_decimal_as_integer=as_int)
        lf = pl.scan_parquet(path)
        assert_same(lf.filter(pl.col("i32") > 0).select("dec9", "dec38", "t_us", "bin", "tags").head(5_000), engine)
        # i64 has nulls (ties): a stable sort, or Polars itself answers differently run to run
        assert_same(lf.sort("i64", maintain_order=True).select("i64", "dec18", "bin", "ids"), engine)
        other = lf.select("s", "dec9", "t_us").unique(subset="s", keep="first", maintain_order=True)
        assert_same(lf.select("s", "i64").join(other, on="s", how="left"), engine, ordered=False)
        assert_same(lf.with_columns(f=pl.col("dec38").cast(pl.Float64), g=pl.col("dec9").cast(pl.Float32),
                                    ns=pl.col("t_us").cast(pl.Int64), n=pl.col("bin").is_null()), engine)
        assert_same(lf.group_by("s").agg(pl.col("dec18").first(), pl.col("bin").last(), pl.col("t_us").count(),
                                          pl.col("tags").first(), pl.col("ids").last(),
                                          pl.col("dec38").null_count()), engine, ordered=False)
    strict = ladle.Engine(raise_on_fail=True)
    lf = pl.scan_parquet(tmp_path / "cFalse.parquet")
    for q, culprit in [(lf.select(pl.col("dec9") + pl.col("dec9")), "'dec9' is decimal"), (lf.sort("bin"), "key 'bin' is binary"),
                       (lf.group_by("t_us").len(), "key 't_us' is time"), (lf.select(pl.col("dec18").sum()), "sum"),
                       (lf.unique(subset="tags"), "key 'tags' is list")]:
        with pytest.raises(ladle.UnsupportedError, match=culprit):
            q.collect(engine=strict)


def test_multi_file_column_policies(tmp_path: Path, engine) -> None:
    """Polars' missing_columns / extra_columns policies over a list of files: the
    first file's schema is the dataset's; 'insert' gives nulls where a later file
    lacks a column; an extra column is an error unless 'ignore'; a type change
    is an error. Where Polars raises, ladle refuses (and Polars raises)."""
    base = pl.DataFrame({"a": [1, 2], "b": ["x", "y"], "l": [[1], []]})
    base.write_parquet(tmp_path / "0.parquet")
    pl.DataFrame({"a": [3, 4]}).write_parquet(tmp_path / "1missing.parquet")
    pl.DataFrame({"a": [5], "b": ["z"], "l": pl.Series([None], dtype=pl.List(pl.Int64)), "c": [1.0]}).write_parquet(tmp_path / "2extra.parquet")
    pl.DataFrame({"l": [[7, 8]], "b": ["w"], "a": [6]}).write_parquet(tmp_path / "3reordered.parquet")
    pl.DataFrame({"a": [6.5], "b": ["v"], "l": [[1]]}).write_parquet(tmp_path / "4float.parquet")
    f = {k: tmp_path / n for k, n in [(0, "0.parquet"), (1, "1missing.parquet"), (2, "2extra.parquet"),
                                       (3, "3reordered.parquet"), (4, "4float.parquet")]}
    strict = ladle.Engine(raise_on_fail=True)
    ok = [
        pl.scan_parquet([f[0], f[1], f[3]], missing_columns="insert"),
        pl.scan_parquet([f[0], f[1]], missing_columns="insert").filter(pl.col("b").is_null()),
        pl.scan_parquet([f[0], f[1]], missing_columns="insert", n_rows=3),
        pl.scan_parquet([f[0], f[2], f[3]], extra_columns="ignore"),
        pl.scan_parquet([f[0], f[1]]).select("a"),
        pl.scan_parquet([f[0], f[3]]),
    ]
    for lf in ok:
        assert_same(lf, strict)
    for lf, culprit in [(pl.scan_parquet([f[0], f[1]]), "no column 'b'"),
                        (pl.scan_parquet([f[0], f[2]]).select("a"), "extra column 'c'"),
                        (pl.scan_parquet([f[0], f[4]]), "column 'a' is f64")]:
        with pytest.raises(Exception):
            lf.collect()
        with pytest.raises(ladle.UnsupportedError, match=culprit):
            lf.collect(engine=strict)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_dictionary_indices_of_every_bit_width(version: str, tmp_path: Path, engine) -> None:
    """Dictionary pages whose indices take 1 to 17 bits (whole groups of eight
    unpacked with the width as a constant, the tail value by value), columns
    declared optional with and without nulls (a page of all-present levels is
    one RLE run, read without decoding), of every fixed width and strings."""
    rng = np.random.default_rng(21)
    n = 50_003
    cols: dict[str, pa.Array] = {}
    for bits in range(1, 18):
        v = rng.integers(0, 1 << bits, n)
        cols[f"i{bits}"] = pa.array(v, pa.int64())
        if bits in (3, 9, 12, 16, 17):
            mask = rng.random(n) < 0.1
            cols[f"n{bits}"] = pa.array(v.astype(np.int32), pa.int32(), mask=mask)
            cols[f"d{bits}"] = pa.array(v.astype(np.float64) / 7, pa.float64())
            cols[f"s{bits}"] = pa.array([f"v{x}" for x in v], pa.string())
    cols["date"] = pa.array(rng.integers(8000, 10500, n).astype(np.int32), pa.int32()).cast(pa.date32())
    cols["i8x"] = pa.array(rng.integers(-128, 128, n).astype(np.int8), pa.int8())
    # dictionary strings of every length around the fixed-size moves (16, 32)
    pool = [("abcdefghij" * 7)[: k % 70] + str(k) for k in range(300)]
    cols["slen"] = pa.array([pool[x] for x in rng.integers(0, 300, n)], pa.string())
    # long stretches of nulls: pages whose levels are one RLE run of 0
    stretch = (np.arange(n) // 12_000) % 2 == 0
    cols["gaps"] = pa.array(rng.integers(0, 50, n), pa.int64(), mask=stretch)
    cols["sgaps"] = pa.array([f"g{x}" for x in rng.integers(0, 50, n)], pa.string(), mask=stretch)
    path = tmp_path / "dict.parquet"
    pq.write_table(pa.table(cols), path, use_dictionary=True, data_page_version=version,
                   data_page_size=16_384, row_group_size=20_000, dictionary_pagesize_limit=1 << 22)
    meta = pq.ParquetFile(path).metadata
    assert any("RLE_DICTIONARY" in meta.row_group(0).column(i).encodings for i in range(meta.num_columns))
    assert_same(pl.scan_parquet(path), engine)
    assert_same(pl.scan_parquet(path).filter(pl.col("i12") < 1000).select("s12", "n16", "date"), engine)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_dictionary_indices_wider_than_16_bits(version: str, tmp_path: Path, engine) -> None:
    """Row groups with dictionaries of 2^17 to 2^20 entries: indices of 18 to 20
    bits, unpacked eight at a time from whole 8-byte words (the widths up to 16
    had their own path before), with nulls and without, whole and at the rows a
    filter keeps."""
    rng = np.random.default_rng(5)
    n = 600_000
    v = rng.permutation(n).astype(np.int64) * 3
    table = pa.table({
        "k": pa.array(np.arange(n)),
        "wide": pa.array(v),                                                         # ~20 bits
        "mid": pa.array(v % 150_001),                                                # 18 bits
        "f": pa.array((v % 250_007).astype(np.float64) / 3, mask=rng.random(n) < 0.05),
        "i": pa.array((v % 140_009).astype(np.int32)),
    })
    path = tmp_path / "wide.parquet"
    pq.write_table(table, path, use_dictionary=True, data_page_version=version, row_group_size=n,
                   data_page_size=1 << 20, dictionary_pagesize_limit=1 << 24)
    meta = pq.ParquetFile(path).metadata
    assert all("RLE_DICTIONARY" in meta.row_group(0).column(i).encodings for i in range(1, 5))
    assert_same(pl.scan_parquet(path), engine)
    assert_same(pl.scan_parquet(path).filter(pl.col("k") % 13 == 0).select("wide", "mid", "f", "i"), engine)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("compression", ["zstd", "snappy", "none"])
def test_plain_pages_decompressed_into_the_column(version: str, compression: str, tmp_path: Path, engine) -> None:
    """PLAIN pages of fixed-width values that are the column's bytes decompress
    straight into the output (a v1 page over the rows before it, which are put
    back): columns required and optional, without nulls, with one null in a
    page (its levels take as many bytes as a page without nulls might, so the
    page is first taken for one), with a null at either end and with many;
    every width; whole and at the rows a filter keeps (moved from the page)."""
    rng = np.random.default_rng(9)
    n = 30_011
    cols: dict[str, pa.Array] = {"k": pa.array(np.arange(n))}
    one = np.zeros(n, bool)
    one[::1_000] = True  # about one null a page
    ends = np.zeros(n, bool)
    ends[[0, n - 1]] = True
    masks = {"none": None, "one": one, "ends": ends, "many": rng.random(n) < 0.3}
    for kind, mask in masks.items():
        cols[f"i32_{kind}"] = pa.array(rng.integers(-(1 << 31), 1 << 31, n).astype(np.int32), mask=mask)
        cols[f"i64_{kind}"] = pa.array(rng.integers(-(1 << 62), 1 << 62, n), mask=mask)
        cols[f"f32_{kind}"] = pa.array(rng.random(n).astype(np.float32), mask=mask)
        cols[f"f64_{kind}"] = pa.array(rng.random(n), mask=mask)
        cols[f"d_{kind}"] = pa.array(rng.integers(0, 20_000, n).astype("datetime64[D]"), mask=mask)
        cols[f"ts_{kind}"] = pa.array(rng.integers(0, 1 << 50, n).astype("datetime64[us]"), mask=mask)
    table = pa.table(cols)
    # "req_*": declared required (no definition levels at all)
    fields = [pa.field(f.name, f.type, nullable=not f.name.endswith("_none")) for f in table.schema]
    table = table.cast(pa.schema(fields))
    path = tmp_path / "plain.parquet"
    pq.write_table(table, path, use_dictionary=False, compression=compression, data_page_version=version,
                   row_group_size=12_000, data_page_size=4_096)
    scan = pl.scan_parquet(path)
    assert_same(scan, engine)
    assert_same(scan.filter(pl.col("k") % 7 == 3), engine)
    assert_same(scan.filter(pl.col("k").is_between(5_000, 5_100)), engine)
    assert_same(scan.select(pl.all().exclude("k").max()), engine)


def assert_inline_views_zero_padded(arr: pa.Array) -> None:
    """Arrow's view layout: a string of up to 12 bytes lies inline, and the
    bytes after it are zero (readers compare and hash the 16 bytes whole)."""
    if not pa.types.is_string_view(arr.type):
        return
    views = np.frombuffer(arr.buffers()[1], dtype=np.uint8).reshape(-1, 16)[arr.offset:arr.offset + len(arr)]
    lens = views[:, :4].copy().view(np.int32).ravel()
    short = views[lens <= 12]
    pos = np.arange(16)[None, :]
    tail = pos >= 4 + lens[lens <= 12][:, None]
    assert not (short * tail).any(), "bytes after an inline string are not zero"


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", ["on", "off", "fallback"])
@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_strings_decoded_as_views_when_the_scan_is_the_result(version: str, dictionary: str, compression: str, tmp_path: Path, engine) -> None:
    """A scan whose columns go straight into the result decodes strings into
    Arrow views (dictionary strings point into the dictionary; plain ones of a
    decompressed page into the page, kept when its long strings are most of
    it, else copied out, as are those of uncompressed pages): every length
    around the 12 inline bytes, nulls, empty strings, a column of mostly short
    strings, dictionary pages that fall back to plain ones mid-chunk, several
    row groups; then the same result read every other way."""
    rng = np.random.default_rng(41)
    n = 30_000
    pool = ["", "a", "exactly12byt", "thirteen byte", "é" * 7, "x" * 40, None] + ["k" * i for i in range(2, 12)] + [f"value {i:05d} of many" for i in range(300)]
    s = [pool[i] for i in rng.integers(0, len(pool), n)]
    uniq = [None if i % 11 == 0 else f"unique string number {i}" * (i % 3) for i in range(n)]
    short = [f"long string {i} to copy out" if i % 19 == 0 else ("ab" if i % 7 else None) for i in range(n)]
    table = pa.table({"s": pa.array(s, pa.string()), "u": pa.array(uniq, pa.string()),
                      "m": pa.array(short, pa.string()), "i": pa.array(np.arange(n))})
    path = tmp_path / "s.parquet"
    opts: dict = {"data_page_version": version, "row_group_size": 7_000, "compression": compression,
                  "data_page_size": 8_192}
    if dictionary == "off":
        opts["use_dictionary"] = False
    elif dictionary == "fallback":
        opts["dictionary_pagesize_limit"] = 2048  # the dictionary fills up: plain pages follow
    pq.write_table(table, path, **opts)
    native = N
    before = native.view_only_columns()
    assert_same(pl.scan_parquet(path), engine)
    assert native.view_only_columns() > before  # the views path ran
    assert_same(pl.scan_parquet(path).select("u", "s"), engine)
    assert_same(pl.scan_parquet(path, n_rows=9_999), engine)
    assert_same(pl.scan_parquet(path).filter(pl.col("s").str.len_bytes() > 12), engine)  # read by a filter: offsets
    expected = pl.read_parquet(path)
    res = engine.execute(pl.scan_parquet(path))
    assert_frame_equal(res.to_polars(), expected)
    arrow = res.to_arrow()
    assert_frame_equal(pl.from_arrow(arrow), expected)  # type: ignore[arg-type]
    from ladle.result import _ViewStream

    as_views = pa.table(_ViewStream(res._native))  # what Polars receives
    for name in ("s", "u", "m"):
        assert pa.types.is_string_view(as_views.schema.field(name).type)
        for chunk in as_views.column(name).chunks:
            assert_inline_views_zero_padded(chunk)
    res = engine.execute(pl.scan_parquet(path))
    res.write_parquet(tmp_path / "again.parquet")
    assert_frame_equal(pl.read_parquet(tmp_path / "again.parquet"), expected)


@pytest.mark.parametrize("compression", ["snappy", "none"])
def test_filter_over_a_scan_keeps_strings_as_views(compression: str, tmp_path: Path, engine) -> None:
    """A filter that is the result, over a Parquet scan, reads the string
    columns its predicate does not read as views and gathers those: predicates
    keeping every row, most, a few (gathered by index), none, one reading a
    string column itself; with a select on top, with n_rows; then the results
    read every other way."""
    rng = np.random.default_rng(7)
    n = 50_000
    words = [None, "", "ab", "exactly12byt", "a longer string than twelve"] + [f"word {i} of the pool" for i in range(40)]
    table = pa.table({
        "k": pa.array(rng.integers(0, 1000, n)),
        "d": pa.array([words[i] for i in rng.integers(0, len(words), n)], pa.string()),  # dictionary
        "u": pa.array([None if i % 13 == 0 else f"row {i} " + "x" * (i % 20) for i in range(n)], pa.string()),
        "f": pa.array(rng.random(n)),
    })
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, compression=compression, row_group_size=12_000, data_page_size=16_384,
                   dictionary_pagesize_limit=1 << 20)
    scan = pl.scan_parquet(path)
    native = N
    # (predicate, whether a string column is read as views: not when every row
    # group is skipped by its statistics)
    for pred, views in [(pl.col("k") >= 0, True), (pl.col("k") > 100, True), (pl.col("k") < 30, True),
                        (pl.col("k") < 0, False), (pl.col("f") < 0.5, True), (pl.col("d") == "ab", True),
                        (pl.col("u").str.len_bytes() > 10, True)]:
        before = native.view_only_columns()
        assert_same(scan.filter(pred), engine)
        assert (native.view_only_columns() > before) == views, pred
        assert_same(scan.filter(pred).select("u", "k"), engine)
        assert_same(pl.scan_parquet(path, n_rows=20_000).filter(pred), engine)
        expected = scan.filter(pred).collect()
        res = engine.execute(scan.filter(pred))
        assert_frame_equal(res.to_polars(), expected)
        assert_frame_equal(pl.from_arrow(res.to_arrow()), expected)  # type: ignore[arg-type]
        from ladle.result import _ViewStream

        for chunk in pa.table(_ViewStream(res._native)).column("u").chunks:
            assert_inline_views_zero_padded(chunk)
        # the result read again by ladle (views turned back into offsets)
        assert_same(res.lazy().group_by("d").agg(pl.col("u").max(), pl.len()), engine, ordered=False)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_filter_over_a_scan_reads_other_columns_late(version: str, compression: str, tmp_path: Path, engine) -> None:
    """The columns a filter's predicate does not read are read after it, at the
    rows it keeps only: every type (fixed-width with and without nulls, booleans,
    dates, decimals, strings of both encodings, binary, lists, which are read
    whole and gathered), many small pages per row group so that pages without a
    kept row are skipped (a predicate on a sorted column keeps runs of rows),
    predicates keeping everything, runs, scattered rows and nothing; under a
    select, a group-by, with n_rows, over several files with a missing column,
    and under a join."""
    rng = np.random.default_rng(11)
    n = 40_000
    mask = rng.random(n) < 0.2
    table = pa.table({
        "r": pa.array(np.arange(n)),                                                   # sorted
        "k": pa.array(rng.integers(0, 100, n)),
        "i32": pa.array(rng.integers(-1000, 1000, n).astype(np.int32), mask=mask),
        "f": pa.array(rng.random(n)),
        "b": pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.1),
        "dt": pa.array((rng.integers(0, 20_000, n)).astype("datetime64[D]")),
        "dec": pa.array([decimal.Decimal(int(x)) / 100 for x in rng.integers(-10**6, 10**6, n)], pa.decimal128(12, 2)),
        "s": pa.array([None if m else f"value {x}" for x, m in zip(rng.integers(0, 50, n), mask)], pa.string()),
        "u": pa.array([f"unique {i} " + "y" * (i % 17) for i in range(n)], pa.string()),
        "bin": pa.array([bytes([i % 256]) * (i % 5) for i in range(n)], pa.binary()),
        "l": pa.array([[int(x)] * (int(x) % 3) if x % 7 else None for x in rng.integers(0, 100, n)], pa.list_(pa.int64())),
    })
    path = tmp_path / "late.parquet"
    pq.write_table(table, path, compression=compression, data_page_version=version, row_group_size=15_000,
                   data_page_size=4_096, dictionary_pagesize_limit=1 << 16)
    scan = pl.scan_parquet(path)
    preds = [pl.col("k") >= 0, pl.col("r").is_between(12_000, 13_500), pl.col("r") % 97 == 0,
             pl.col("k") == 7, pl.col("r") < 0, pl.col("r") > n - 10, pl.col("s") == "value 3",
             (pl.col("k") < 10) & (pl.col("i32") > 0)]
    for pred in preds:
        assert_same(scan.filter(pred), engine)
        assert_same(scan.filter(pred).select("u", "l", "dec"), engine)
        assert_same(scan.filter(pred).group_by("k").agg(pl.col("f").sum(), pl.col("u").max(), pl.len()),
                    engine, ordered=False)
        assert_same(pl.scan_parquet(path, n_rows=17_000).filter(pred), engine)
        res = engine.execute(scan.filter(pred))
        assert_frame_equal(pl.from_arrow(res.to_arrow()), scan.filter(pred).collect())  # type: ignore[arg-type]
    # several files, the second without "u" (inserted as nulls)
    other = tmp_path / "other.parquet"
    pq.write_table(table.drop_columns(["u"]).slice(0, 9_000), other, compression=compression, data_page_size=4_096)
    multi = pl.scan_parquet([path, other], missing_columns="insert")
    assert_same(multi.filter(pl.col("k") == 3), engine)
    # under a join (the filter hands its rows to the join instead)
    right = pl.LazyFrame({"k": [1, 2, 3], "name": ["one", "two", "three"]})
    assert_same(scan.filter(pl.col("f") < 0.3).join(right, on="k").select("u", "name", "dec"), engine,
                ordered=False)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_byte_stream_split_on_fixed_length_byte_arrays(version: str, tmp_path: Path, engine) -> None:
    # DECIMAL of every FIXED_LEN_BYTE_ARRAY width (precision 1..38: 1..16 bytes)
    # and fixed-size binary, BYTE_STREAM_SPLIT-encoded, nulls, several pages.
    # Polars cannot read these pages yet, so pyarrow is the reference.
    import decimal

    rng = np.random.default_rng(23)
    n = 6_000
    cols: dict[str, pa.Array] = {}
    for prec in [1, 4, 9, 12, 18, 19, 27, 38]:
        digits = rng.integers(0, 10, (n, prec))
        vals = [None if rng.random() < 0.1 else
                decimal.Decimal(("-" if rng.random() < 0.5 else "") + "".join(map(str, d)) + "E-" + str(min(2, prec - 1)))
                for d in digits]
        cols[f"d{prec}"] = pa.array(vals, pa.decimal128(prec, min(2, prec - 1)))
    for w in [1, 3, 16, 21]:
        cols[f"b{w}"] = pa.array([None if rng.random() < 0.1 else rng.bytes(w) for _ in range(n)], pa.binary(w))
    table = pa.table(cols)
    path = tmp_path / "bss.parquet"
    pq.write_table(table, path, use_dictionary=False, data_page_version=version, data_page_size=4_096,
                   column_encoding={c: "BYTE_STREAM_SPLIT" for c in cols})
    meta = pq.ParquetFile(path).metadata.row_group(0)
    assert all("BYTE_STREAM_SPLIT" in meta.column(i).encodings for i in range(meta.num_columns))
    got = ladle.Engine(raise_on_fail=True).collect(pl.scan_parquet(path))
    want = pl.from_arrow(pq.read_table(path))
    assert isinstance(want, pl.DataFrame)
    assert_frame_equal(got, want)


@pytest.mark.parametrize("writer", ["polars", "pyarrow"])
def test_durations_through_the_arrow_schema(writer: str, tmp_path: Path, engine) -> None:
    # Parquet has no duration type: the writers store INT64 and name the
    # Duration (and its unit) in the file's Arrow schema, which Polars reads
    from datetime import timedelta

    rng = np.random.default_rng(31)
    n = 20_000
    raw = rng.integers(-10**12, 10**12, n)
    df = pl.DataFrame({"plain": raw, "k": rng.integers(0, 7, n)}).with_columns(
        *[pl.col("plain").cast(pl.Duration(u)).alias(f"d_{u}") for u in ("ns", "us", "ms")]
    ).with_columns(pl.when(pl.col("k") == 3).then(None).otherwise(pl.col("d_us")).alias("d_us"))
    path = tmp_path / "dur.parquet"
    if writer == "polars":
        df.write_parquet(path, row_group_size=3_000)
    else:
        pq.write_table(df.to_arrow(), path, row_group_size=3_000)
    assert str(pq.ParquetFile(path).schema.column(2).physical_type) == "INT64"
    lf = pl.scan_parquet(path)
    got = assert_same(lf, engine)
    assert got.schema["plain"] == pl.Int64 and got.schema["d_ms"] == pl.Duration("ms")
    assert_same(lf.filter(pl.col("d_ms") > timedelta(days=1)).select("k", "d_ns"), engine)
    assert_same(lf.group_by("k").agg(pl.col("d_us").sum(), pl.col("d_ns").min()), engine, ordered=False)
    assert_same(pl.scan_parquet(path, row_index_name="i").filter(pl.col("d_us").is_null()), engine)


SLICES = [(100, 10), (0, 7), (-5, 5), (-20, 5), (250, 100), (990, 50), (5000, 3), (-5000, 10)]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("offset,length", SLICES)
def test_slices_pushed_into_scans(fmt: str, offset: int, length: int, tmp_path: Path, engine) -> None:
    # Polars pushes .slice()/.tail() into the scan as (offset, length); ladle
    # reads offset + length rows (all of them for a negative offset) and slices
    # above the row index, before any filter
    path = tmp_path / f"t.{fmt}"
    table = pa.table({"a": np.arange(1000), "s": [f"v{i % 17}" for i in range(1000)]})
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=100)
        scan = lambda **kw: pl.scan_parquet(path, **kw)  # noqa: E731
    else:
        pl.from_arrow(table).write_csv(path)  # type: ignore[union-attr]
        scan = lambda **kw: pl.scan_csv(path, **kw)  # noqa: E731
    assert_same(scan().slice(offset, length), engine)
    assert_same(scan(row_index_name="i", row_index_offset=3).slice(offset, length), engine)
    assert_same(scan().slice(offset, length).filter(pl.col("a") % 3 == 0), engine)
    assert_same(scan().filter(pl.col("a") > 450).slice(offset, length), engine)


def test_include_file_paths(tmp_path: Path, engine) -> None:
    paths = []
    for i in range(3):
        table = pa.table({"a": np.arange(i * 1000, i * 1000 + 700 + i), "s": [f"v{j % 13}" for j in range(700 + i)]})
        paths.append(tmp_path / f"p{i}.parquet")
        pq.write_table(table, paths[-1], row_group_size=200)
    lf = pl.scan_parquet(paths, include_file_paths="file")
    got = assert_same(lf, engine)
    assert got["file"].n_unique() == 3
    assert_same(lf.filter(pl.col("a") > 1500).select("file", "a"), engine)
    assert_same(pl.scan_parquet(paths, include_file_paths="file", n_rows=900), engine)
    assert_same(pl.scan_parquet(paths, include_file_paths="file", row_index_name="i").slice(650, 100), engine)
    # the files are still checked against each other: a later file's extra
    # column is an error in Polars (extra_columns='raise'), so ladle does not answer
    pq.write_table(pa.table({"a": [1], "s": ["x"], "z": [2]}), tmp_path / "extra.parquet")
    with pytest.raises(ladle.UnsupportedError, match="extra column 'z'"):
        ladle.Engine(raise_on_fail=True).collect(pl.scan_parquet(paths + [tmp_path / "extra.parquet"], include_file_paths="file"))


@pytest.mark.parametrize("kind", ["int64", "int32", "float32", "string"])
def test_dictionary_index_out_of_range_is_an_error(kind: str, tmp_path: Path) -> None:
    # indices 0,1,2,0,1,2... bit-packed at width 2 are the bytes 24 49 92 ...;
    # one byte set to FF makes four indices 3 in a dictionary of 3 entries
    n = 3000
    vals = {"int64": pa.array([10, 20, 30] * (n // 3), pa.int64()), "int32": pa.array([10, 20, 30] * (n // 3), pa.int32()),
            "float32": pa.array([1.5, 2.5, 3.5] * (n // 3), pa.float32()), "string": pa.array(["x", "yy", "zzz"] * (n // 3))}[kind]
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"v": vals}, schema=pa.schema([pa.field("v", vals.type, nullable=False)])), path,
                   compression="none", use_dictionary=True)
    raw = bytearray(path.read_bytes())
    at = raw.find(bytes([0x24, 0x49, 0x92] * 4))
    assert at > 0
    raw[at + 6] = 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ladle.LadleError, match="'v'.*dictionary index out of range"):
        ladle.Engine(raise_on_fail=True).collect(pl.scan_parquet(path))
    with pytest.raises(ladle.LadleError, match="dictionary index out of range"):  # through the offsets path too
        ladle.Engine(raise_on_fail=True).collect(pl.scan_parquet(path).select(pl.col("v").alias("w"), pl.lit(1).alias("k")).filter(pl.col("k") == 1))


def test_dictionary_index_out_of_range_at_a_kept_row_is_an_error(tmp_path: Path) -> None:
    """A filter keeping few rows reads only the kept rows' indices of a late
    dictionary column (the runs up to the last of them, their bits alone):
    an index out of range at a kept row is still an error naming it."""
    n = 3000
    table = pa.table({"r": pa.array(np.arange(n)), "v": pa.array([10, 20, 30] * (n // 3), pa.int64())},
                     schema=pa.schema([pa.field("r", pa.int64(), False), pa.field("v", pa.int64(), False)]))
    path = tmp_path / "d.parquet"
    pq.write_table(table, path, compression="none", use_dictionary=["v"])
    raw = bytearray(path.read_bytes())
    at = raw.find(bytes([0x24, 0x49, 0x92] * 4))  # v's bit-packed indices 0,1,2,... at width 2
    assert at > 0
    raw[at + 6] = 0xFF  # indices 3 at the rows of that byte: 24 to 27
    path.write_bytes(bytes(raw))
    scan = pl.scan_parquet(path)
    with pytest.raises(ladle.LadleError, match="'v'.*dictionary index out of range"):
        ladle.Engine(raise_on_fail=True).collect(scan.filter(pl.col("r").is_in([3, 25, 2900])))
    with pytest.raises(ladle.LadleError, match="'v'.*dictionary index out of range"):
        ladle.Engine(raise_on_fail=True).collect(scan.filter(pl.col("r") % 2 == 1))  # the whole page's indices


def _strings(values: list[bytes | None], dtype: pa.DataType) -> pa.Array:
    """A string (or binary) array of these bytes, not validated (pyarrow writes
    STRING columns of invalid UTF-8 when it is built from buffers)."""
    data = b"".join(v or b"" for v in values)
    offs = [0]
    for v in values:
        offs.append(offs[-1] + len(v or b""))
    validity = pa.array([v is not None for v in values]).buffers()[1]
    return pa.Array.from_buffers(dtype, len(values), [validity, pa.py_buffer(np.array(offs, np.int32).tobytes()),
                                                       pa.py_buffer(data)])


@pytest.mark.parametrize("bad", [b"ok\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"x" * 30 + b"\x80"],
                         ids=["ff-fe", "truncated", "surrogate", "overlong", "past-10ffff", "continuation"])
def test_invalid_utf8_in_a_string_column_raises(bad: bytes, tmp_path: Path, engine) -> None:
    """A STRING column holding invalid UTF-8 is an error naming the file, the
    column, the row group and the page, as Polars raises ComputeError, for
    every encoding that makes strings (dictionary, PLAIN, DELTA_LENGTH_BYTE_ARRAY,
    DELTA_BYTE_ARRAY), compressed or not, page v1 and v2, read as the result
    (views), under a filter (offsets, and late reads of kept rows) and in a
    list; the same bytes as Binary read as they are."""
    n = 3000
    words = [b"plain", "\u00e9t\u00e9".encode(), None, b"x" * 20]
    values = [words[i % 4] for i in range(n)]
    values[2500] = bad
    # lists of three of the values in the first thousand rows, null after
    lists = pa.ListArray.from_arrays(np.arange(0, n + 1, 3, dtype=np.int32), _strings(values, pa.string()))
    lists = pa.concat_arrays([lists, pa.nulls(n - len(lists), pa.list_(pa.string()))])
    table = pa.table({"k": np.arange(n), "s": _strings(values, pa.string()), "l": lists})
    binary = pa.table({"k": np.arange(n), "b": _strings(values, pa.binary())})
    writes = [dict(use_dictionary=True, compression="snappy"), dict(use_dictionary=False, compression="none"),
              dict(use_dictionary=False, compression="zstd", data_page_version="2.0"),
              dict(use_dictionary=False, column_encoding={"s": "DELTA_LENGTH_BYTE_ARRAY", "l": "DELTA_LENGTH_BYTE_ARRAY"}),
              dict(use_dictionary=False, column_encoding={"s": "DELTA_BYTE_ARRAY", "l": "DELTA_BYTE_ARRAY"}, compression="gzip")]
    for k, opts in enumerate(writes):
        path = tmp_path / f"bad{k}.parquet"
        pq.write_table(table, path, data_page_size=2048, row_group_size=2000, **opts)
        queries = [pl.scan_parquet(path), pl.scan_parquet(path).select("s"),
                   pl.scan_parquet(path).filter(pl.col("k") > 10),  # s read late, at the kept rows
                   pl.scan_parquet(path).filter(pl.col("s") != "x").select("k"),
                   pl.scan_parquet(path).select("l")]
        for q in queries:
            with pytest.raises(pl.exceptions.ComputeError):
                q.collect()
            with pytest.raises(ladle.LadleError, match=r"bad\d\.parquet: column '(s|l)', row group \d, page \d+: invalid UTF-8"):
                q.collect(engine=engine)
        bpath = tmp_path / f"bin{k}.parquet"
        pq.write_table(binary, bpath, data_page_size=2048, row_group_size=2000,
                       **{o: v for o, v in opts.items() if o != "column_encoding"})
        assert_same(pl.scan_parquet(bpath), engine)
        assert_same(pl.scan_parquet(bpath).filter(pl.col("k") > 10), engine)
    # the rows before the bad value's row group read, and valid non-ASCII text too
    ok = pl.scan_parquet(tmp_path / "bad0.parquet", n_rows=1500).select("k", "s")
    got = assert_same(ok, engine)
    assert_strings_valid_utf8(got)


def _int96_file(path: Path, values: list[tuple[int, int] | None]) -> None:
    """An INT96 column (as Spark writes: no Arrow schema) of (julian day,
    nanoseconds of the day) values, or nulls, written by pyarrow and then
    given these raw values."""
    import io
    import struct

    import pqcraft

    n = len(values)
    mask = [v is None for v in values]
    t = pa.table({"t": pa.array([dt.datetime(2000, 1, 1)] * n, type=pa.timestamp("us"), mask=np.array(mask)),
                  "i": np.arange(n)})
    buf = io.BytesIO()
    pq.write_table(t, buf, use_deprecated_int96_timestamps=True, store_schema=False, use_dictionary=False,
                   compression="none")
    pf = pqcraft.read(buf.getvalue())
    page = next(p for p in pf.chunks[0][0].pages if p.type == pqcraft.DATA_PAGE)
    present = [v for v in values if v is not None]
    body = b"".join(struct.pack("<qI", nanos, day) for day, nanos in present)
    page.data = page.data[: len(page.data) - len(body)] + body
    path.write_bytes(pqcraft.write(pf))


def test_int96_out_of_the_nanosecond_range_saturates_as_polars(tmp_path: Path, engine) -> None:
    """INT96 timestamps that nanoseconds in an int64 cannot hold (Spark writes
    them: years 1 and 9999, 1677 and 2262 at the edges, days read unsigned,
    negative and huge nanoseconds of the day) become what Polars 2.1 gives,
    2262-04-11 23:47:16.854775807 (it saturates every overflow to the maximum);
    in-range values stay exact. They used to wrap (1816-03-29 and such)."""
    j = 2440588
    values = [(0x80000000, 0), (0xFFFFFFFF, 0), (j, -1), (j, 2**63 - 1), (j + 106751, 85636854775807),
              (j + 106751, 85636854775808), (j - 106752, 86399999999999), (j - 106752, 0), (0, 0), None,
              (j - 106751, 0), (j, -(2**63)), (j - 1, 86400 * 10**9), (j + 106751, 0), (j - 106751, -1000),
              (1721426, 0), (5373484, 86399 * 10**9)]  # 0001-01-01 and 9999-12-31 23:59:59
    path = tmp_path / "int96.parquet"
    _int96_file(path, values)
    got = assert_same(pl.scan_parquet(path), engine)
    assert got.schema["t"] == pl.Datetime("ns")
    ns = got["t"].cast(pl.Int64).to_list()
    assert ns[0] == ns[15] == ns[16] == 2**63 - 1
    assert ns[2] == -1 and ns[9] is None
    assert_same(pl.scan_parquet(path).filter(pl.col("i") % 2 == 0), engine)


def _rewrite_pages(src: Path, dst: Path, edit) -> None:
    """dst: src with edit(page) applied to every data or dictionary page."""
    import pqcraft

    pf = pqcraft.read(src.read_bytes())
    for row in pf.chunks:
        for chunk in row:
            for page in chunk.pages:
                edit(page)
    dst.write_bytes(pqcraft.write(pf))


def test_files_in_the_wild_that_pyarrow_reads(tmp_path: Path, engine) -> None:
    """Files like parquet-testing's concatenated_gzip_members.parquet (GZIP
    pages of several gzip members: it failed "GZIP data does not decompress"),
    datapage_v2_empty_datapage.snappy.parquet (a v2 page of nulls whose values
    section stores no bytes, not even snappy's empty stream: it failed "SNAPPY
    data does not decompress") and Null columns (logical type UNKNOWN) read on
    ladle and equal Polars and pyarrow; null_list.parquet (List(Null)) falls
    back naming the file, the column and the type (its message named "an
    in-memory DataFrame")."""
    import gzip

    import pqcraft

    n = 5000
    t = pa.table({"i": np.arange(n), "s": [f"word {i % 97}" for i in range(n)],
                  "f": pa.array(np.arange(n) / 7, mask=np.arange(n) % 5 == 0)})
    base = tmp_path / "gz.parquet"
    pq.write_table(t, base, compression="gzip", data_page_size=4096, row_group_size=2000)

    def members(page: pqcraft.Page) -> None:
        raw = gzip.decompress(page.data)
        cut = len(raw) // 3
        page.data = gzip.compress(raw[:cut]) + gzip.compress(raw[cut:]) + gzip.compress(b"")

    multi = tmp_path / "concatenated_gzip_members.parquet"
    _rewrite_pages(base, multi, members)
    assert pq.read_table(multi).equals(t)
    assert_same(pl.scan_parquet(multi), engine)
    assert_same(pl.scan_parquet(multi).filter(pl.col("i") % 3 == 0), engine)

    # a v2 page of nulls, snappy, with an empty values section
    nulls = pa.table({"x": pa.array([None] * 3, pa.float32())})
    v2 = tmp_path / "v2.parquet"
    pq.write_table(nulls, v2, compression="snappy", data_page_version="2.0", use_dictionary=False)

    def empty_values(page: pqcraft.Page) -> None:
        sub = page.sub()
        levels = pqcraft.get(sub, 5) + pqcraft.get(sub, 6)
        page.data = page.data[:levels]
        pqcraft.put(page.header, 2, pqcraft.I32, levels)
        pqcraft.put(sub, 7, pqcraft.TRUE, True)

    empty = tmp_path / "datapage_v2_empty_datapage.snappy.parquet"
    _rewrite_pages(v2, empty, empty_values)
    assert pq.read_table(empty).equals(nulls)
    got = assert_same(pl.scan_parquet(empty), engine)
    assert got.height == 3 and got["x"].null_count() == 3

    nullcol = tmp_path / "null_column.parquet"
    pq.write_table(pa.table({"n": pa.nulls(4), "a": [1, 2, 3, 4]}), nullcol)
    got = assert_same(pl.scan_parquet(nullcol), engine)
    assert got.schema["n"] == pl.Null
    assert_same(pl.scan_parquet(nullcol).filter(pl.col("a") > 2), engine)

    null_list = tmp_path / "null_list.parquet"
    pq.write_table(pa.table({"emptylist": pa.array([[]], type=pa.list_(pa.null()))}), null_list)
    with pytest.raises(ladle.UnsupportedError, match=r"null_list\.parquet: column 'emptylist': a List\(Null\) column"):
        pl.scan_parquet(null_list).collect(engine=engine)
    with pytest.warns(ladle.FallbackWarning, match=r"null_list\.parquet: column 'emptylist': a List\(Null\)"):
        assert_frame_equal(pl.scan_parquet(null_list).collect(engine=ladle.Engine()), pl.read_parquet(null_list))


def test_gzip_trailer_and_page_size_are_checked(tmp_path: Path, engine) -> None:
    """A GZIP page whose trailer (CRC-32, ISIZE) was tampered with, or whose
    uncompressed size is one byte short (the stream inflates past it, its
    trailer never reached: the short page used to be returned), is an error,
    as pyarrow raises (Polars 2.1 does not check the trailer: here ladle
    follows pyarrow, see docs/semantics.md)."""
    import pqcraft

    t = pa.table({"s": [f"v{i % 13}" * (i % 5) for i in range(3000)], "i": np.arange(3000)})
    base = tmp_path / "gz.parquet"
    pq.write_table(t, base, compression="gzip", use_dictionary=False)

    def crc(page: pqcraft.Page) -> None:
        page.data = page.data[:-8] + bytes([page.data[-8] ^ 1]) + page.data[-7:]

    def isize(page: pqcraft.Page) -> None:
        page.data = page.data[:-4] + bytes([page.data[-4] ^ 1]) + page.data[-3:]

    def short(page: pqcraft.Page) -> None:
        pqcraft.put(page.header, 2, pqcraft.I32, pqcraft.get(page.header, 2) - 1)

    for name, edit, why in [("crc", crc, "CRC-32/ISIZE"), ("isize", isize, "CRC-32/ISIZE"),
                            ("short", short, "inflates past the page's uncompressed size")]:
        path = tmp_path / f"{name}.parquet"
        _rewrite_pages(base, path, edit)
        with pytest.raises(OSError):
            pq.read_table(path)
        with pytest.raises(ladle.LadleError, match=rf"{name}\.parquet: column 's', row group 0, page 0: GZIP data does not decompress: .*{why}"):
            pl.scan_parquet(path).collect(engine=engine)


@pytest.mark.parametrize("kind", ["v1", "v2", "dictionary"])
def test_a_page_without_the_header_of_its_type_is_an_error(tmp_path: Path, kind: str) -> None:
    """A page whose type says v1 data page (or v2, or dictionary) but whose
    header holds another kind's counts, or none, is corrupt: Polars raises
    ("the v1 header is empty"); ladle decoded it with the other header's
    counts and returned a null row where pyarrow reads none (diff_pyarrow seed
    1796547781: a v2 page carrying a v1 header)."""
    import pqcraft

    t = pa.table({"s": pa.array([None, "a", "bb", None, "a"] * 40)})
    base = tmp_path / "base.parquet"
    pq.write_table(t, base, compression="none", use_dictionary=kind == "dictionary", write_statistics=False,
                   data_page_version="2.0" if kind == "v2" else "1.0")
    assert_same(pl.scan_parquet(base), ladle.Engine(raise_on_fail=True))
    want = {"v1": pqcraft.DATA_PAGE, "v2": pqcraft.DATA_PAGE_V2, "dictionary": pqcraft.DICTIONARY_PAGE}[kind]
    other = {"v1": 8, "v2": 5, "dictionary": 5}[kind]
    seen = []

    def swap(page: pqcraft.Page) -> None:
        if page.type != want:
            return
        for f in page.header:
            if f[0] in (5, 7, 8):
                if f[0] == 5:  # a v1 header's statistics (its field 5) is no v2 field
                    pqcraft.drop(f[2], 5)
                f[0] = other  # the same counts, filed as another kind's header
        page.header.sort(key=lambda f: f[0])
        seen.append(page)

    path = tmp_path / f"{kind}.parquet"
    _rewrite_pages(base, path, swap)
    assert seen
    with pytest.raises(ladle.LadleError,
                       match=rf"{kind}\.parquet: column 's', row group 0, page 0: the page header's type is a "
                             rf"{ {'v1': 'v1 data', 'v2': 'v2 data', 'dictionary': 'dictionary'}[kind] } page but its"):
        pl.scan_parquet(path).collect(engine=ladle.Engine(raise_on_fail=True))


def test_an_error_quoting_bytes_that_are_not_utf8_is_a_ladle_error(tmp_path: Path) -> None:
    """A message can quote a file's bytes (here a column name that is not
    UTF-8): the native module raised UnicodeDecodeError building it, not its
    own error (found by fuzz/diff_pyarrow.py --fast)."""
    import io

    import pqcraft

    buf = io.BytesIO()
    pq.write_table(pa.table({"a": pa.array([[[1]]], pa.list_(pa.list_(pa.int64())))}), buf)
    pf = pqcraft.read(buf.getvalue())
    for e in pf.schema():
        if pqcraft.get(e, 4) == b"a":
            pqcraft.put(e, 4, pqcraft.BINARY, b"a\xff")
    path = tmp_path / "name.parquet"
    path.write_bytes(pqcraft.write(pf))
    with pytest.raises(N.LadleError) as e:
        N.Engine(1, 0).execute(N.scan_parquet([str(path)], None, -1))
    assert "column 'a\\xff." in e.value.args[1]


@pytest.mark.parametrize("where", ["num_values", "row_count", "file_rows", "encodings"])
def test_an_integer_footer_field_of_another_type_is_refused(tmp_path: Path, where: str) -> None:
    """A footer field the format defines as an integer that holds another
    compact type (a flipped type nibble) was read as an integer anyway, which
    misread every byte after it: ladle answered 0 rows without an error where
    pyarrow and Polars read the file (found by fuzz/diff_pyarrow.py --fast on
    the GPU machine, seed 4100). Now the footer is refused, naming the problem."""
    import io

    import pqcraft

    buf = io.BytesIO()
    pq.write_table(pa.table({"s": ["a", "bc", None] * 10}), buf)
    pf = pqcraft.read(buf.getvalue())
    rg = pqcraft.get(pf.footer, 4)[1][0]
    cm = pf.chunks[0][0].cmeta
    if where == "num_values":
        pqcraft.put(cm, 5, pqcraft.BINARY, b"\x1e")
    elif where == "row_count":
        pqcraft.put(rg, 3, pqcraft.STRUCT, [])
    elif where == "file_rows":
        pqcraft.put(pf.footer, 3, pqcraft.DOUBLE, 30.0)
    else:
        pqcraft.put(cm, 2, pqcraft.LIST, (pqcraft.DOUBLE, [1.0, 2.0]))
    path = tmp_path / f"{where}.parquet"
    path.write_bytes(pqcraft.write(pf))
    if where == "encodings":  # a field ladle does not use is skipped whole, whatever it holds
        assert N.Engine(1, 0).execute(N.scan_parquet([str(path)], None, -1)).num_rows() == 30
        return
    with pytest.raises(N.LadleError) as e:
        N.Engine(1, 0).execute(N.scan_parquet([str(path)], None, -1)).num_rows()
    assert "an integer field holds compact type" in e.value.args[1]


@pytest.mark.parametrize("drop", ["row_count", "num_values", "data_page_offset"])
def test_a_footer_without_a_required_count_or_offset_is_refused(tmp_path: Path, drop: str) -> None:
    """A row group without its row count, or a column chunk without num_values
    or its data page offset (a mutated footer misread past a broken field),
    read as a chunk of nothing: 0 rows without an error where pyarrow read 7
    (found by the CI run's diff_pyarrow --fast). Now the footer is refused."""
    import io

    import pqcraft

    buf = io.BytesIO()
    pq.write_table(pa.table({"x": list(range(7))}), buf)
    pf = pqcraft.read(buf.getvalue())
    path = tmp_path / f"{drop}.parquet"
    data = pqcraft.write(pf)
    pf = pqcraft.read(data)
    rg = pqcraft.get(pf.footer, 4)[1][0]
    cm = pf.chunks[0][0].cmeta
    if drop == "row_count":
        pqcraft.drop(rg, 3)
    elif drop == "num_values":
        pqcraft.drop(cm, 5)
    footer = pqcraft.encode_struct(pf.footer)
    body = data[: len(data) - 8 - int.from_bytes(data[-8:-4], "little")]
    if drop == "data_page_offset":
        pqcraft.drop(cm, 9)
        footer = pqcraft.encode_struct(pf.footer)
    path.write_bytes(body + footer + len(footer).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(N.LadleError) as e:
        N.Engine(1, 0).execute(N.scan_parquet([str(path)], None, -1)).num_rows()
    assert "without its" in e.value.args[1]


@pytest.mark.parametrize("case", ["utf8", "logical_string", "member_not_struct", "empty_logical"])
def test_an_undefined_logical_type_leaves_the_physical_type(case: str, tmp_path: Path) -> None:
    """A byte-array column with the converted type UTF8 and a LogicalType that
    holds no member (or one that is not a struct, a damaged footer) is binary to
    pyarrow: a LogicalType, defined or not, overrides the converted type. ladle
    read it as a string (found by the CI run's diff_pyarrow --fast, seed
    1796490568). With the converted type alone, or a STRING logical type, both
    read a string."""
    import io

    import pqcraft

    buf = io.BytesIO()
    pq.write_table(pa.table({"s": pa.array([b"a", b"bc", None] * 10, pa.binary())}), buf)
    pf = pqcraft.read(buf.getvalue())
    el = pqcraft.get(pf.footer, 2)[1][1]
    pqcraft.put(el, 6, pqcraft.I32, 0)  # converted type UTF8
    if case == "logical_string":
        pqcraft.put(el, 10, pqcraft.STRUCT, [[1, pqcraft.STRUCT, []]])
    elif case == "member_not_struct":
        pqcraft.put(el, 10, pqcraft.STRUCT, [[1, pqcraft.BINARY, b""]])
    elif case == "empty_logical":
        pqcraft.put(el, 10, pqcraft.STRUCT, [])
    path = tmp_path / f"{case}.parquet"
    path.write_bytes(pqcraft.write(pf))
    want = pq.read_table(path).column("s")
    assert (want.type == pa.string()) == (case in ("utf8", "logical_string"))
    res = N.Engine(1, 0).execute(N.scan_parquet([str(path)], None, -1))
    string_id, binary_id = 12, 20  # LADLE_TYPE_STRING, LADLE_TYPE_BINARY
    assert res.schema()[0][1][0] == (string_id if want.type == pa.string() else binary_id)
    assert res.num_rows() == len(want)


def _skippable(tmp_path: Path) -> Path:
    """Row groups of 4 rows whose statistics rule the first one out of b < -5."""
    t = pl.DataFrame({"b": [90, 100, 44, 127, -125, 1, 86, -28, 126, None, 126, -96],
                      "k": list(range(12))}, schema={"b": pl.Int8, "k": pl.UInt64})
    p = tmp_path / "skip.parquet"
    t.write_parquet(p, row_group_size=4)
    return p


@pytest.mark.parametrize("make", [
    lambda p: pl.scan_parquet(p).with_row_index("idx").filter(pl.col("b") < -5),
    lambda p: pl.scan_parquet(p).with_row_index("idx").filter(pl.col("b") < -5).head(1),
    lambda p: pl.scan_parquet(p, row_index_name="i", row_index_offset=10).filter(pl.col("b") > 100),
    lambda p: pl.scan_parquet(p).tail(9).filter(pl.col("b") < -5),
    lambda p: pl.scan_parquet(p).slice(5, 6).filter(pl.col("b") < -5),
], ids=["row_index", "row_index_head", "row_index_offset", "tail", "slice"])
def test_row_positions_over_skipped_row_groups(tmp_path: Path, make: object, engine: ladle.Engine) -> None:
    """A row index or a slice Polars applies in the scan, before its predicate,
    counts the rows of row groups the predicate's statistics rule out: they
    are read (the row index once numbered the first row group read 0)."""
    assert_same(make(_skippable(tmp_path)), engine)  # type: ignore[operator]
