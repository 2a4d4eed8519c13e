"""Never a crash, a hang, a wrong answer or a silent fallback (issue 16): corrupt
files are errors, the user's own errors are Polars' errors, an engine shared by
threads keeps queries apart, Ctrl-C stops a query, thread counts are checked."""

from __future__ import annotations

import glob
import os
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import ladle
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

TESTING = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "parquet-testing"


def _no_fallback_error(lf: pl.LazyFrame, raise_on_fail: bool) -> BaseException:
    """The exception lf raises on ladle; a FallbackWarning would fail the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ladle.FallbackWarning)
        with pytest.raises(BaseException) as info:
            lf.collect(engine=ladle.Engine(raise_on_fail=raise_on_fail))
    return info.value


@pytest.mark.parametrize("raise_on_fail", [False, True])
def test_a_corrupt_file_ladle_detects_is_an_error_not_a_fallback(tmp_path: Path, raise_on_fail: bool) -> None:
    ok = tmp_path / "ok.parquet"
    pq.write_table(pa.table({"a": np.arange(10_000), "b": np.arange(10_000) * 2.0}), ok, compression="none")
    data = ok.read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[:1000] + data[60_000:])  # the footer is intact, the chunks point past the end
    e = _no_fallback_error(pl.scan_parquet(cut), raise_on_fail)
    assert isinstance(e, ladle.LadleError) and not isinstance(e, ladle.UnsupportedError)
    assert "cut.parquet" in str(e) and "outside the file" in str(e)


@pytest.mark.parametrize("name", ["datapage_v1-corrupt-checksum.parquet", "nation.dict-malformed.parquet"]
                         + [f"bad_data/{Path(p).name}" for p in glob.glob(str(TESTING / "bad_data" / "*.parquet"))])
def test_files_broken_by_design_raise_a_catchable_error(name: str) -> None:
    path = TESTING / name
    if not path.exists():
        pytest.skip(f"{path} is not here")
    for raise_on_fail in (False, True):
        e = _no_fallback_error(pl.scan_parquet(path), raise_on_fail)
        assert isinstance(e, Exception), f"{type(e).__name__}: {e}"  # not a PanicException
        assert not isinstance(e, ladle.UnsupportedError)


def test_the_users_own_errors_are_polars_errors(tmp_path: Path) -> None:
    (tmp_path / "empty.csv").write_bytes(b"")
    queries = [
        lambda: pl.scan_parquet(tmp_path / "nope.parquet"),
        lambda: pl.scan_csv(tmp_path / "nope.csv"),
        lambda: pl.scan_csv(tmp_path / "empty.csv"),
        lambda: pl.LazyFrame({"a": [1]}).select(pl.col("a"), pl.col("a")),
    ]
    for make in queries:
        with pytest.raises(Exception) as want:
            make().collect()
        for raise_on_fail in (False, True):
            with pytest.raises(type(want.value)):
                make().collect(engine=ladle.Engine(raise_on_fail=raise_on_fail))


def test_sink_and_collect_on_one_engine_from_two_threads(tmp_path: Path) -> None:
    engine = ladle.Engine(raise_on_fail=True)
    src = pl.DataFrame({"k": np.arange(1000), "v": np.arange(1000) * 0.5})
    small = pl.DataFrame({"x": [1, 2, 3]})
    errors: list[BaseException] = []
    stop = threading.Event()

    def sinker() -> None:
        try:
            i = 0
            while not stop.is_set():
                out = tmp_path / f"out{i % 3}.parquet"
                src.lazy().filter(pl.col("k") % 2 == 0).sink_parquet(out, engine=engine)
                assert pl.read_parquet(out).height == 500
                i += 1
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=sinker)
    t.start()
    try:
        for _ in range(300):
            got = small.lazy().select(pl.col("x") * 2).collect(engine=engine)
            assert got["x"].to_list() == [2, 4, 6]
    finally:
        stop.set()
        t.join()
    assert not errors, errors


def test_ctrl_c_stops_a_running_query() -> None:
    engine = ladle.Engine()
    big = pl.DataFrame({"x": np.arange(3_000_000, dtype=np.float64)})
    lf = big.lazy().select([(pl.col("x") * i).sum().alias(f"s{i}") for i in range(2000)])  # many seconds

    # Python's own SIGINT handler for the test's length: a process started in the
    # background by a non-interactive shell (`bash .ci/run &`) inherits SIGINT
    # ignored, Python then installs no handler, and a press would be lost (two
    # clean-clone runs failed so). It raises KeyboardInterrupt as the default one
    # does, and ignores presses that arrive after the query stopped; they repeat
    # until it stops, which must be within the bound below.
    stopped = threading.Event()

    def on_sigint(signum: int, frame: Any) -> None:
        if not stopped.is_set():
            raise KeyboardInterrupt

    def interrupt() -> None:
        for _ in range(8):
            time.sleep(0.3)
            if stopped.is_set():
                return
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, on_sigint)
    presser = threading.Thread(target=interrupt)
    presser.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            lf.collect(engine=engine)
    finally:
        stopped.set()
        presser.join()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - start < 3.0
    # the engine is fine afterwards
    assert big.lazy().select(pl.col("x").sum()).collect(engine=engine).item() == float(np.arange(3_000_000).sum())


def test_thread_counts_are_checked_and_capped() -> None:
    for bad in (-1, 0, 2.5, True, "4"):
        with pytest.raises(ValueError, match="threads"):
            ladle.Engine(threads=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="morsel_rows"):
        ladle.Engine(morsel_rows=-5)
    cores = len(os.sched_getaffinity(0))
    assert ladle.Engine(threads=100_000).threads == cores
    assert ladle.Engine(threads=1).threads == 1
    assert ladle.Engine().threads == cores
