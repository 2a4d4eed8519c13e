"""ladle.SPMDEngine: one rank in process, and 1, 2 and 3 MPI ranks under mpirun
(spmd_worker.py), every query's allgathered result against Polars on the whole data:
TPC-H from several Parquet files, differential queries over rank-local frames, a
rank that runs another query, and a rank that dies."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import ladle

HERE = Path(__file__).resolve().parent
MPIRUN = shutil.which("mpirun")


def test_one_rank_in_process() -> None:
    with ladle.SPMDEngine(comm="self", threads=2) as engine:
        assert (engine.rank, engine.nranks, engine.comm) == (0, 1, "self")
        lf = pl.LazyFrame({"k": [1, 2, 1, 3], "x": [1.0, 2.0, 3.0, None]}).group_by("k").agg(pl.col("x").sum())
        res = engine.execute(lf)
        assert res.sharded is False
        whole = engine.allgather(res).to_polars()
        assert_frame_equal(whole, lf.collect(engine="in-memory"), check_row_order=False)
        df = pl.DataFrame({"a": [1, 2]})
        assert engine.allgather(df).equals(df)
        assert "EXCHANGE" not in engine.explain(lf)
        assert "EXCHANGE hash" in engine.explain(lf, ranks=3)


def test_spmd_refuses_polars_fallback() -> None:
    with ladle.SPMDEngine(comm="self") as engine:
        lf = pl.LazyFrame({"a": [1, 2]}).select(pl.col("a").map_elements(lambda v: v + 1, return_dtype=pl.Int64))
        with pytest.raises(ladle.UnsupportedError, match="does not fall back to Polars"):
            lf.collect(engine=engine)


def test_spmd_arguments() -> None:
    with pytest.raises(ValueError, match="comm="):
        ladle.SPMDEngine(comm="nccl")
    with pytest.raises(ValueError, match="timeout="):
        ladle.SPMDEngine(comm="self", timeout=0)
    # without a process group (or without torch): an error that says what to do
    with pytest.raises(ladle.LadleError, match="init_process_group|needs PyTorch"):
        ladle.SPMDEngine.from_torch_distributed()


def test_mpi_library_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LADLE_MPI_LIB", "/nonexistent/libladle_mpi.so")
    with pytest.raises(ladle.UnsupportedError, match="libladle_mpi"):
        ladle.SPMDEngine(comm="mpi")


@pytest.fixture(scope="module")
def tpch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TPC-H SF 0.1 as several Parquet files per table, small row groups: every rank
    of three gets some of every large table."""
    from tpch_queries import load_all

    root = tmp_path_factory.mktemp("tpch_parquet")
    for name, df in load_all().items():
        (root / name).mkdir()
        nfiles = 3 if df.height > 10_000 else 1
        step = (df.height + nfiles - 1) // nfiles
        for i in range(nfiles):
            df.slice(i * step, step).write_parquet(root / name / f"part{i}.parquet", row_group_size=20_000)
    return root


def mpirun(n: int, case: str, data: Path, out: Path, timeout: float, env: dict[str, str] | None = None
           ) -> tuple[subprocess.CompletedProcess[str], float]:
    assert MPIRUN is not None, "mpirun is missing: `make deps` installs openmpi-bin"
    out.mkdir(parents=True, exist_ok=True)
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), e.get("PYTHONPATH", "")])
    e.update(env or {})
    cmd = [MPIRUN, "-np", str(n), "--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
           sys.executable, str(HERE / "spmd_worker.py"), case, str(data), str(out)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    return p, time.perf_counter() - t0


def results(out: Path, n: int, p: subprocess.CompletedProcess[str]) -> list[dict]:
    found = []
    for r in range(n):
        f = out / f"rank{r}.json"
        assert f.exists(), f"rank {r} wrote nothing\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}"
        found.append(json.loads(f.read_text()))
    return found


def check_all(found: list[dict], n: int) -> None:
    bad = []
    for r, cases in enumerate(found):
        assert cases["_"]["nranks"] == n and cases["_"]["rank"] == r
        assert cases["_"]["comm"] == ("mpi" if n >= 1 else "self")
        bad += [f"rank {r} {name}: {c['why']}" for name, c in cases.items() if not c["ok"]]
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_mpi_differential(n: int, tmp_path: Path) -> None:
    p, _ = mpirun(n, "diff", tmp_path, tmp_path / "out", timeout=600)
    found = results(tmp_path / "out", n, p)
    assert p.returncode == 0, p.stderr[-3000:]
    check_all(found, n)
    assert all("persisted_to_torch" in f for f in found)
    if n > 1:  # the rows really were spread: every rank held part of a scan
        assert all(0 < f["scan"]["mine"] < f["scan"]["rows"] for f in found)


@pytest.mark.parametrize("n", [1, 3])
def test_mpi_tpch(n: int, tpch_dir: Path, tmp_path: Path) -> None:
    p, _ = mpirun(n, "tpch", tpch_dir, tmp_path / "out", timeout=1200)
    found = results(tmp_path / "out", n, p)
    assert p.returncode == 0, p.stderr[-3000:]
    check_all(found, n)
    assert sum(1 for k in found[0] if k.startswith("q")) == 22


@pytest.mark.parametrize("case", ["diff", "tpch"])
def test_mpi_on_the_column_kernels(case: str, tpch_dir: Path, tmp_path: Path) -> None:
    """Two ranks on the column kernels (a GPU engine's path, on the CPU's kernel
    table): exchanges move rows through the host between device parts; every
    answer equals Polars', and TPC-H runs there without falling back (q22's
    str.slice on the host's kernels, between exchanges)."""
    data = tpch_dir if case == "tpch" else tmp_path
    p, _ = mpirun(2, case, data, tmp_path / "out", timeout=900, env={"LADLE_COLUMN_KERNELS": "1"})
    found = results(tmp_path / "out", 2, p)
    assert p.returncode == 0, p.stderr[-3000:]
    check_all(found, 2)
    if case == "tpch":
        runs = {k: v["last_run"] for f in found for k, v in f.items() if k.startswith("q")}
        assert set(runs.values()) == {"ladle"}, runs


def test_mpi_asymmetric_query(tmp_path: Path) -> None:
    p, _ = mpirun(3, "asym", tmp_path, tmp_path / "out", timeout=300)
    found = results(tmp_path / "out", 3, p)
    assert p.returncode == 0, p.stderr[-3000:]
    check_all(found, 3)


def test_mpi_killed_rank(tmp_path: Path) -> None:
    """A rank that dies: the job ends within the timeout, never hangs; the ranks
    that are left raise a LadleError, or mpirun stops them naming the dead rank."""
    p, took = mpirun(3, "kill", tmp_path, tmp_path / "out", timeout=300, env={"LADLE_SPMD_TIMEOUT": "10"})
    assert took < 200
    wrote = [json.loads((tmp_path / "out" / f"rank{r}.json").read_text())
             for r in (0, 2) if (tmp_path / "out" / f"rank{r}.json").exists()]
    if wrote:
        assert all(w["kill"]["ok"] for w in wrote), wrote
    else:
        # mpirun names the process that died: "Process name: [[job,1],1]"
        said = p.stderr + p.stdout
        assert p.returncode != 0 and re.search(r"rank 1\b|\[\[\d+,\d+\],1\]", said), said[-3000:]
