"""Results to Polars, pyarrow and DuckDB through the Arrow PyCapsule interface, and
columns to torch and numpy through DLPack without copies."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
import torch
from polars.testing import assert_frame_equal

import ladle

DF = pl.DataFrame(
    {
        "i": [1, 2, 3, 4, 5],
        "f": [0.5, 1.5, 2.5, 3.5, 4.5],
        "f32": pl.Series([1, 2, 3, 4, 5], dtype=pl.Float32),
        "b": [True, False, True, True, False],
        "s": ["a", "b", None, "d", "e"],
        "n": [1, None, 3, 4, 5],
    }
)


@pytest.fixture()
def result(engine) -> ladle.Result:  # type: ignore[no-untyped-def]
    return engine.execute(DF.lazy().with_columns((pl.col("i") * 2).alias("i2")))


def test_result_to_polars_arrow_duckdb(result: ladle.Result) -> None:
    expected = DF.with_columns((pl.col("i") * 2).alias("i2"))
    assert result.num_rows == 5
    assert result.schema == expected.schema
    assert_frame_equal(pl.DataFrame(result), expected)
    assert_frame_equal(result.to_polars(), expected)
    table = result.to_arrow()
    assert isinstance(table, pa.Table) and table.num_rows == 5
    assert table.column("s").to_pylist() == ["a", "b", None, "d", "e"]
    duckdb = pytest.importorskip("duckdb")
    rel = duckdb.sql("select sum(i2) as t, count(s) as c from result")
    assert rel.fetchall() == [(30, 4)]


def test_dlpack_torch_and_numpy_share_memory(result: ladle.Result) -> None:
    t = torch.from_dlpack(result.column("i2"))  # computed by ladle: the result's own buffer
    a = np.from_dlpack(result.column("i2"))
    assert t.dtype == torch.int64 and t.tolist() == [2, 4, 6, 8, 10]
    assert a.ctypes.data == t.data_ptr()  # both views of one buffer
    arrow_buf = result.to_arrow().column("i2").chunk(0).buffers()[1]
    assert arrow_buf.address == t.data_ptr()  # no copy
    f = torch.from_dlpack(result.column("f"))
    assert f.dtype == torch.float64 and f.tolist() == [0.5, 1.5, 2.5, 3.5, 4.5]
    assert torch.from_dlpack(result.column("b")).dtype == torch.bool
    assert torch.from_dlpack(result.column("f32")).dtype == torch.float32
    assert torch.from_dlpack(result.column("i2")).tolist() == [2, 4, 6, 8, 10]


def test_dlpack_outlives_the_result(engine) -> None:  # type: ignore[no-untyped-def]
    res = engine.execute(pl.DataFrame({"x": np.arange(100_000, dtype=np.int64)}).lazy().select(pl.col("x") * 3))
    t = torch.from_dlpack(res.column("x"))
    del res
    gc.collect()
    junk = [np.ones(100_000) for _ in range(20)]  # churn the allocator
    assert int(t.sum()) == 3 * (100_000 * 99_999 // 2)
    del junk


def test_dlpack_refuses_nulls_and_strings(result: ladle.Result) -> None:
    with pytest.raises(TypeError, match="'n' has 1 nulls"):
        torch.from_dlpack(result.column("n"))
    with pytest.raises(TypeError, match="'s' is str"):
        np.from_dlpack(result.column("s"))
    with pytest.raises(KeyError):
        result.column("nope")


def test_in_memory_scan_does_not_copy_numeric_buffers(engine) -> None:  # type: ignore[no-untyped-def]
    big = pl.DataFrame({"x": np.arange(1_000_000, dtype=np.float64)})
    res = engine.execute(big.lazy())
    src = big.to_arrow().column("x").chunk(0).buffers()[1].address
    assert res.to_arrow().column("x").chunk(0).buffers()[1].address == src


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8, bool])
def test_dlpack_never_writes_into_the_callers_frame(engine, dtype) -> None:  # type: ignore[no-untyped-def]
    """A column ladle borrowed from the caller's frame goes to DLPack as a copy:
    torch ignores DLPack's read-only flag, and a write through the tensor must
    not change the caller's data. Columns ladle computed are not copied."""
    vals = (np.arange(100_000) % 7).astype(dtype)
    big = pl.DataFrame({"x": vals})
    for lf in (big.lazy(), big.lazy().select("x"), big.lazy().slice(10, 500)):
        res = engine.execute(lf)
        t = torch.from_dlpack(res.column("x"))
        before = big["x"].to_numpy().copy()
        t[0] = (not bool(t[0])) if dtype is bool else 99
        assert np.array_equal(big["x"].to_numpy(), before)
    res = engine.execute(big.head(1000).lazy().select(pl.col("x").cast(pl.Int64) * 2))  # one partition
    t = torch.from_dlpack(res.column("x"))
    assert t.data_ptr() == res.to_arrow().column("x").chunk(0).buffers()[1].address


def test_strings_go_to_polars_as_views_and_to_arrow_as_large_strings() -> None:
    """to_polars hands strings over as Arrow string views built on ladle's bytes
    (inline up to 12 bytes, else prefix + offset), across partitions and slices
    whose offsets do not start at 0; to_arrow keeps large_string."""
    words = ["", "a", "twelve_bytes", "thirteen_byte", "ünïcödé ünïcödé", None, "x" * 1000]
    df = pl.DataFrame({"s": [words[i % len(words)] for i in range(5000)], "k": list(range(5000))})
    engine = ladle.Engine(morsel_rows=700)
    for lf in (df.lazy(), df.lazy().filter(pl.col("k") % 3 == 0), df.lazy().slice(1234, 2000),
               df.lazy().sort("k", descending=True).head(999)):
        res = engine.execute(lf)
        want = lf.collect()
        assert_frame_equal(res.to_polars(), want)
        table = res.to_arrow()
        assert table.schema.field("s").type == pa.large_string()
        assert_frame_equal(pl.from_arrow(table), want)  # type: ignore[arg-type]


def test_in_memory_columns_chunked_differently(engine) -> None:  # type: ignore[no-untyped-def]
    """Each column comes through its own Arrow stream, a batch per chunk: the
    scan's partitions break wherever any column's chunks do, and nothing is
    concatenated or lost (empty chunks, all-null chunks, lists, Int128)."""
    a = pl.concat([pl.Series("a", np.arange(0, 100)), pl.Series("a", np.arange(100, 250))], rechunk=False)
    b = pl.concat(
        [
            pl.Series("b", [f"s{i}" for i in range(60)]),
            pl.Series("b", [], dtype=pl.String),
            pl.Series("b", [f"a much longer string than twelve bytes {i}" for i in range(120)]),
            pl.Series("b", [None] * 70, dtype=pl.String),
        ],
        rechunk=False,
    )
    c = pl.Series("c", [[i, i + 1] if i % 7 else None for i in range(250)])
    w = pl.Series("w", [i * (2**70) for i in range(250)], dtype=pl.Int128)
    df = pl.DataFrame([a, b, c, w])
    assert df.n_chunks("all") == [2, 3, 1, 1]  # Polars drops the empty chunk itself
    q = df.lazy().filter(pl.col("a") % 3 == 0).with_columns(n=pl.col("b").str.len_bytes(), w2=pl.col("w") + 1)
    got = q.collect(engine=engine)
    assert engine.last_run == "ladle"
    assert_frame_equal(got, q.collect())
    # partitions at 0, 60, 100, 180, 250: the union of the columns' breaks
    assert "SCAN memory: 4 columns, 250 rows, 4 partitions" in engine.explain(q)
    # numbers are not copied even when cut at another column's break
    assert_frame_equal(df.lazy().select("a", "w").collect(engine=engine), df.select("a", "w"))
    # no rows at all, and chunks of no rows
    empty = pl.DataFrame({"a": pl.Series([], dtype=pl.Int64), "b": pl.Series([], dtype=pl.String)})
    assert_frame_equal(empty.lazy().select(pl.col("a") + 1, "b").collect(engine=engine), empty.select(pl.col("a") + 1, "b"))


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 63, 64, 65, 100_003])
def test_bool_results_export_bit_packed(n: int) -> None:
    """Booleans leave ladle as bytes packed eight at a time: every length's
    tail, nulls, and booleans made by comparisons, negations and is_null."""
    rng = np.random.default_rng(n)
    b = pl.Series("b", rng.random(n) < 0.5).set(pl.Series(rng.random(n) < 0.1), None) if n else pl.Series("b", [], pl.Boolean)
    x = pl.Series("x", rng.integers(-3, 3, n))
    df = pl.DataFrame([b, x])
    q = df.lazy().select("b", (~pl.col("b")).alias("nb"), (pl.col("x") > 0).alias("gt"), pl.col("b").is_null().alias("isn"))
    e = ladle.Engine(threads=2, raise_on_fail=True)
    expected = q.collect(engine="in-memory")
    res = e.execute(q)
    assert_frame_equal(res.to_polars(), expected)
    assert_frame_equal(pl.from_arrow(res.to_arrow()), expected)  # type: ignore[arg-type]


def test_a_cpu_result_chains_with_lazy(engine: ladle.Engine, result: ladle.Result) -> None:
    assert result.device == "cpu" and result.column("i2").__dlpack_device__() == (1, 0)
    expected = DF.with_columns((pl.col("i") * 2).alias("i2"))
    q = result.lazy().filter(pl.col("n").is_not_null()).select(pl.col("i2").sum(), pl.col("s").count())
    with warnings.catch_warnings():
        warnings.simplefilter("error", ladle.FallbackWarning)
        got = engine.collect(q)
    assert engine.last_run == "ladle"
    want = expected.lazy().filter(pl.col("n").is_not_null()).select(pl.col("i2").sum(), pl.col("s").count())
    assert_frame_equal(got, want.collect())
    assert_frame_equal(q.collect(), want.collect())  # Polars itself reads it through to_polars
    del result
    gc.collect()
    assert_frame_equal(engine.collect(q), want.collect())  # the LazyFrame keeps the result


def test_a_python_source_of_another_kind_falls_back_naming_it(engine: ladle.Engine) -> None:
    from polars.io.plugins import register_io_source

    def source(with_columns, predicate, n_rows, batch_size):  # type: ignore[no-untyped-def]
        yield DF

    lf = register_io_source(source, schema=DF.schema).select(pl.col("i").sum())
    with pytest.raises(ladle.UnsupportedError, match="PythonScan.*not a ladle Result"):
        ladle.Engine(raise_on_fail=True).collect(lf)
    with pytest.warns(ladle.FallbackWarning, match="PythonScan.*not a ladle Result"):
        got = ladle.Engine(raise_on_fail=False).collect(lf)
    assert_frame_equal(got, DF.select(pl.col("i").sum()))


def test_the_arrow_device_array_of_a_cpu_result_of_many_partitions(engine: ladle.Engine) -> None:
    big = pl.DataFrame({"x": np.arange(300_000), "s": [f"v{i % 13}" for i in range(300_000)]})
    res = engine.execute(big.lazy().filter(pl.col("x") % 3 != 0).with_columns((pl.col("x") > 7).alias("b")))
    batch = pa.RecordBatch._import_from_c_device_capsule(*res.__arrow_c_device_array__())
    assert batch.device_type == pa.DeviceAllocationType.CPU
    assert_frame_equal(pl.from_arrow(batch), res.to_polars())
    assert pa.record_batch(res).num_rows == res.num_rows
