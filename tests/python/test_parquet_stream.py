"""Parquet scans streamed into their pipelines (op_scan_parquet.c's made source,
pipeline.c): each row group decoded by the task that pushes it through the
filters and projections into the partial aggregation or the collected table,
instead of the whole file read into a table first.

LADLE_PARQUET_STREAM=1 streams every pipeline's scan that can stream, =0 none;
unset, a scan streams when it has two row groups per thread at least. Every
query is checked against Polars in the three modes, with the engine's counter
of streamed row groups telling which path ran; the peak memory shows the
streamed scan holds row groups, not the file; a corrupt row group late in the
file fails cleanly from inside the pipeline."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import assert_same

import ladle

ROWS = 40_000
RG = 2_500  # 16 row groups


def frame(seed: int, n: int = ROWS) -> pl.DataFrame:
    r = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "k": pl.Series(r.integers(0, 17, n)).set(pl.Series(r.random(n) < 0.05), None),
            "ks": pl.Series(r.choice(["a", "bb", "ccc", "é", ""], n)),
            "i": pl.Series(r.integers(-(2**40), 2**40, n)).set(pl.Series(r.random(n) < 0.1), None),
            "f": pl.Series(r.normal(0, 100, n)),
            "s": pl.Series(r.choice(["x", "yy", "zzz", "Ω"], n)).set(pl.Series(r.random(n) < 0.1), None),
            "d": pl.Series([dt.date(2021, 1, 1) + dt.timedelta(days=int(v)) for v in r.integers(0, 900, n)]),
            "b": pl.Series(r.random(n) < 0.5),
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("stream")
    out = {}
    df = frame(1)
    out["one"] = d / "one.parquet"
    df.write_parquet(out["one"], row_group_size=RG, compression="zstd")
    # two files, the second without column "s" (missing_columns="insert")
    out["a"], out["b"] = d / "a.parquet", d / "b.parquet"
    frame(2, 12_000).write_parquet(out["a"], row_group_size=1_000)
    frame(3, 9_000).drop("s").write_parquet(out["b"], row_group_size=1_000)
    # dictionary-encoded strings and plain ones, through pyarrow
    out["arrow"] = d / "arrow.parquet"
    pq.write_table(frame(4).to_arrow(), out["arrow"], row_group_size=3_000, use_dictionary=["ks"])
    return out


QUERIES: dict[str, Callable[[pl.LazyFrame], pl.LazyFrame]] = {
    "group_by over a filter": lambda lf: lf.filter(pl.col("f") > 0)
    .group_by("k", maintain_order=True)
    .agg(pl.col("i").sum(), pl.col("f").mean(), pl.len()),
    "group_by over the scan": lambda lf: lf.group_by("ks").agg(pl.col("i").max(), pl.col("d").min()),
    "group_by over projections": lambda lf: lf.with_columns((pl.col("f") * 2).alias("g"))
    .filter(pl.col("s").is_not_null() & (pl.col("g") < 50))
    .group_by("s", "b")
    .agg(pl.col("g").sum(), pl.col("i").count()),
    "a chain collected": lambda lf: lf.with_columns((pl.col("i") * 3 - 1).alias("j"))
    .filter(pl.col("b"))
    .select("k", "j", "s", (pl.col("f") + 1).alias("f1")),
    "a filter that keeps nothing": lambda lf: lf.filter(pl.col("f") > 1e9).group_by("k").agg(pl.col("i").sum()),
    "a head under a group_by": lambda lf: lf.head(7_777).group_by("k").agg(pl.col("f").sum(), pl.len()),
}


def run_modes(monkeypatch: pytest.MonkeyPatch, lf: pl.LazyFrame, engine: ladle.Engine,
              ordered: bool) -> dict[str, int]:
    """lf equals Polars with the scan streamed, read whole, and by default;
    the streamed row groups of each mode."""
    streamed = {}
    for mode in ("1", "0", None):
        if mode is None:
            monkeypatch.delenv("LADLE_PARQUET_STREAM", raising=False)
        else:
            monkeypatch.setenv("LADLE_PARQUET_STREAM", mode)
        before = engine.stats()["row_groups_streamed"]
        assert_same(lf, engine, ordered=ordered, check_exact=False, rel_tol=1e-9)
        streamed[str(mode)] = engine.stats()["row_groups_streamed"] - before
    return streamed


@pytest.mark.parametrize("name", list(QUERIES))
def test_streamed_pipelines_equal_polars(name: str, files: dict[str, Path], engine: ladle.Engine,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    lf = QUERIES[name](pl.scan_parquet(files["one"]))
    got = run_modes(monkeypatch, lf, engine, ordered=name in ("group_by over a filter", "a chain collected"))
    assert got["0"] == 0
    if name != "a head under a group_by":
        # 16 row groups, 2 threads: streamed by default too
        assert got["1"] == 16 and got["None"] == 16, got
    else:
        assert got["1"] == 4, got  # 7,777 rows: four row groups, the last cut short


@pytest.mark.parametrize("name", ["group_by over a filter", "a chain collected", "group_by over the scan"])
def test_streamed_pipelines_over_two_files_and_pyarrow_files(name: str, files: dict[str, Path],
                                                              engine: ladle.Engine,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    q = QUERIES[name]
    ordered = name != "group_by over the scan"
    two = pl.scan_parquet([files["a"], files["b"]], missing_columns="insert")
    got = run_modes(monkeypatch, q(two), engine, ordered=ordered)
    assert got["1"] == 21 and got["0"] == 0, got
    got = run_modes(monkeypatch, q(pl.scan_parquet(files["arrow"])), engine, ordered=ordered)
    assert got["1"] == 14 and got["0"] == 0, got


def test_morsels_and_threads(files: dict[str, Path], small_engine: ladle.Engine,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    # tiny morsels do not split a streamed row group; one thread streams too
    lf = QUERIES["group_by over projections"](pl.scan_parquet(files["one"]))
    assert run_modes(monkeypatch, lf, small_engine, ordered=False)["1"] == 16
    one = ladle.Engine(raise_on_fail=True, threads=1)
    assert run_modes(monkeypatch, lf, one, ordered=False)["None"] == 16
    # few row groups for the threads (fewer than two each): read whole by
    # default (the engine takes no more threads than the machine's cores)
    many = ladle.Engine(raise_on_fail=True, threads=16)
    got = run_modes(monkeypatch, lf, many, ordered=False)
    assert got["None"] == (0 if many.threads > 8 else 16) and got["1"] == 16, (got, many.threads)
    few = pl.scan_parquet(files["a"])  # 12 row groups
    got = run_modes(monkeypatch, QUERIES["group_by over the scan"](few), many, ordered=False)
    assert got["None"] == (0 if many.threads > 6 else 12) and got["1"] == 12, (got, many.threads)


def test_a_streamed_scan_holds_row_groups_not_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    n, rg = 1_600_000, 25_000  # 64 row groups of four Int64 columns: 51 MB decoded
    r = np.random.default_rng(5)
    df = pl.DataFrame({c: r.integers(0, 1000, n) for c in "wxyz"})
    p = tmp_path / "big.parquet"
    df.write_parquet(p, row_group_size=rg)
    lf = pl.scan_parquet(p).filter(pl.col("x") < 900).group_by("w").agg(pl.col("y").sum(), pl.col("z").max())
    expected = lf.collect().sort("w")
    peaks = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("LADLE_PARQUET_STREAM", mode)
        eng = ladle.Engine(raise_on_fail=True, threads=2)  # a fresh engine: its own peak
        got = lf.collect(engine=eng).sort("w")
        assert got.equals(expected)
        peaks[mode] = eng.stats()["memory_peak"]
    # whole: the four columns of every row group at once (51 MB); streamed: a
    # few row groups' (0.8 MB each) and the partial aggregates
    assert peaks["0"] > 4 * n * 8 * 0.9, peaks
    assert peaks["1"] < peaks["0"] / 5, peaks


def test_a_corrupt_row_group_fails_cleanly_inside_the_pipeline(tmp_path: Path, engine: ladle.Engine,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    n = 40_000
    t = pa.table({"k": np.arange(n) % 7, "v": np.random.default_rng(6).normal(size=n)})
    p = tmp_path / "bad.parquet"
    pq.write_table(t, p, row_group_size=2_500, compression="zstd", use_dictionary=False)
    md = pq.ParquetFile(p).metadata
    # zstd frames of row group 13's column "v" overwritten with garbage
    cc = md.row_group(13).column(1)
    start = cc.data_page_offset
    raw = bytearray(p.read_bytes())
    for i in range(start + 40, start + cc.total_compressed_size - 8):
        raw[i] = 0xA5
    p.write_bytes(bytes(raw))
    lf = pl.scan_parquet(p).filter(pl.col("v") > -5).group_by("k").agg(pl.col("v").sum())
    for mode in ("1", "0"):
        monkeypatch.setenv("LADLE_PARQUET_STREAM", mode)
        with pytest.raises(ladle.LadleError) as e:
            lf.collect(engine=engine)
        assert "bad.parquet" in str(e.value) or "row group" in str(e.value) or "zstd" in str(e.value).lower(), str(e.value)
    # the engine is still usable
    monkeypatch.setenv("LADLE_PARQUET_STREAM", "1")
    good = tmp_path / "good.parquet"
    pq.write_table(t, good, row_group_size=2_500)
    assert_same(pl.scan_parquet(good).group_by("k").agg(pl.col("v").sum()), engine, ordered=False)


def test_a_chain_that_reads_the_height_keeps_its_late_filter_whole(tmp_path: Path, engine: ladle.Engine,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # a Float64 column divided by one value: Polars divides a one-row frame
    # and multiplies a longer one by the reciprocal (5/3 and 5*(1/3) differ in
    # the last bit), so the chain above a filter needs the filter's output
    # height, which a streamed filter knows only at the end: the planner keeps
    # that filter whole (physical.c: stream_src), and the answer is Polars'
    n = 20_000
    p = tmp_path / "h.parquet"
    pl.DataFrame({"i": np.arange(n), "f": np.full(n, 5.0)}).write_parquet(p, row_group_size=1_000)
    monkeypatch.setenv("LADLE_PARQUET_STREAM", "1")
    for keep in (pl.col("i") == 12_345, pl.col("i") % 7 == 3):
        lf = (pl.scan_parquet(p).filter(keep).with_columns((pl.col("f") / 3.0).alias("z"))
              .select("z", (pl.col("i") + 1).alias("i1")))
        before = engine.stats()["row_groups_streamed"]
        got = assert_same(lf, engine, check_exact=True)
        assert engine.stats()["row_groups_streamed"] == before
        assert got.height >= 1
    # without the division the same chain streams its filter
    lf = pl.scan_parquet(p).filter(pl.col("i") % 7 == 3).with_columns((pl.col("f") * 3.0).alias("z")).select(
        "z", (pl.col("i") + 1).alias("i1"))
    before = engine.stats()["row_groups_streamed"]
    assert_same(lf, engine, check_exact=True)
    assert engine.stats()["row_groups_streamed"] - before == 20
    assert "(its output; streamed by row group)" in engine.explain(lf)
