"""ladle.SPMDEngine.from_torch_distributed: ladle's exchanges over torch.distributed
(gloo). Under torchrun with 2 and 3 processes, spmd_worker.py (LADLE_SPMD_TORCH=1:
the default gloo group; =2: ladle's own gloo group) compares every query's
allgathered result with Polars, a rank that runs another query and a rank that dies;
this file, run as a script under torchrun, checks the collectives themselves on
every layout (packed or not, empty, in place, every allreduce type and operation)
and a collective that raises. In process: one rank, and the arguments.

    python -m torch.distributed.run --nproc-per-node 3 --standalone \\
        tests/python/test_spmd_torch.py collectives <out dir>
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# --------------------------------------------------------------- the workers


def _byte(k: int, frm: int, to: int, n: int) -> np.ndarray:
    """The n bytes rank frm sends rank to in check k (to -1: to everyone)."""
    i = np.arange(n, dtype=np.int64)
    return ((k * 131 + frm * 31 + to * 7 + i * 13 + (i >> 9)) & 0xFF).astype(np.uint8)


def _ro(a: np.ndarray) -> memoryview:
    """A read-only memoryview of a's bytes, as ladle hands over its inputs."""
    return memoryview(a).cast("B").toreadonly()


def _worker_collectives(out: Path) -> None:
    """Every collective of TorchCollectives on this rank, checked byte by byte."""
    import torch.distributed as dist

    from ladle._torch_comm import TorchCollectives

    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    ops = TorchCollectives(dist.group.WORLD)
    n, me = ops.size, ops.rank
    bad: list[str] = []

    def check(what: str, ok: bool) -> None:
        if not ok:
            bad.append(what)

    # allgather: equal packed counts (the direct path), then in place
    for size in (1000, 0):
        got = np.full(n * size, 0xEE, np.uint8)
        ops.allgatherv(_ro(_byte(1, me, -1, size)), [size] * n, [r * size for r in range(n)], memoryview(got))
        check(f"allgather {size}", all((got[r * size:(r + 1) * size] == _byte(1, r, -1, size)).all() for r in range(n)))
    buf = np.zeros(n * 8, np.uint8)
    buf[me * 8:(me + 1) * 8] = _byte(2, me, -1, 8)
    ops.allgatherv(_ro(buf[me * 8:(me + 1) * 8]), [8] * n, [r * 8 for r in range(n)], memoryview(buf))
    check("allgather in place", all((buf[r * 8:(r + 1) * 8] == _byte(2, r, -1, 8)).all() for r in range(n)))

    # allgatherv: uneven (rank 1 sends nothing), with 3-byte gaps left untouched
    counts = [0 if r == 1 else 500 * (r + 1) + 7 * r for r in range(n)]
    displs, at = [], 0
    for c in counts:
        displs.append(at + 3)
        at += c + 3
    got = np.full(at, 0xEE, np.uint8)
    ops.allgatherv(_ro(_byte(3, me, -1, counts[me])), counts, displs, memoryview(got))
    check("allgatherv parts", all((got[displs[r]:displs[r] + counts[r]] == _byte(3, r, -1, counts[r])).all()
                                  for r in range(n)))
    check("allgatherv gaps", all((got[displs[r] - 3:displs[r]] == 0xEE).all() for r in range(n)))

    # alltoallv: a random count matrix (some zeros) drawn alike on every rank;
    # packed, then sends in reverse rank order and receives with gaps; then nothing
    for k, packed in ((4, True), (5, False), (6, True)):
        g = np.random.default_rng(k)
        m = g.integers(0, 3000, (n, n)) * (g.integers(0, 5, (n, n)) != 0) * (k != 6)
        sc = [int(m[me, r]) for r in range(n)]
        rc = [int(m[r, me]) for r in range(n)]
        order = range(n) if packed else range(n - 1, -1, -1)
        sd, at = [0] * n, 0
        for r in order:
            sd[r] = at
            at += sc[r]
        send = np.zeros(at, np.uint8)
        for r in range(n):
            send[sd[r]:sd[r] + sc[r]] = _byte(k, me, r, sc[r])
        gap = 0 if packed else 1
        rd, at = [0] * n, 0
        for r in range(n):
            rd[r] = at + gap
            at += rc[r] + gap
        got = np.full(at, 0xEE, np.uint8)
        ops.alltoallv(_ro(send), sc, sd, memoryview(got), rc, rd)
        check(f"alltoallv {k}", all((got[rd[r]:rd[r] + rc[r]] == _byte(k, r, me, rc[r])).all() for r in range(n)))
        check(f"alltoallv {k} gaps", gap == 0 or all(got[rd[r] - 1] == 0xEE for r in range(n)))

    # bcast from the last rank, and of nothing
    root = n - 1
    got = _byte(7, root, -1, 777) if me == root else np.zeros(777, np.uint8)
    ops.bcast(memoryview(got), root)
    check("bcast", (got == _byte(7, root, -1, 777)).all())
    ops.bcast(memoryview(np.zeros(0, np.uint8)), 0)

    # allreduce: every type and operation, out of place and in place; uint64
    # values above 2**63 so that min/max must order them as unsigned
    i = np.arange(5, dtype=np.int64)
    vals = {
        0: lambda r: (i * 37 + r * 11) % 101 - 50,
        1: lambda r: (np.uint64(1 << 63) + ((i * 7 + r * 13) % 29).astype(np.uint64)),
        2: lambda r: ((i * 37 + r * 11) % 101 - 50) * 0.5,
    }
    for t, f in vals.items():
        every = np.stack([f(r) for r in range(n)])
        for op, want in enumerate((every.sum(0), every.min(0), every.max(0))):
            for in_place in (False, True):
                src = np.ascontiguousarray(f(me))
                dst = src if in_place else np.zeros_like(src)
                ops.allreduce(_ro(src), memoryview(dst).cast("B"), 5, t, op)
                check(f"allreduce type {t} op {op} in place {in_place}: {dst} != {want}",
                      dst.tobytes() == want.astype(src.dtype).tobytes())
    ops.allreduce(_ro(np.zeros(0, np.int64)), memoryview(np.zeros(0, np.int64)).cast("B"), 0, 0, 0)
    ops.barrier()
    (out / f"rank{me}.json").write_text(json.dumps({"rank": me, "nranks": n, "bad": bad}))
    dist.destroy_process_group()


def _worker_failure(out: Path) -> None:
    """Rank 1's first alltoallv raises: both ranks raise LadleCommError naming the
    operation (rank 0 naming rank 1, told through the store), then the next query
    runs on both over a fresh gloo group."""
    import torch.distributed as dist

    import ladle
    from ladle._torch_comm import TorchCollectives

    dist.init_process_group("gloo", timeout=timedelta(seconds=10))
    if dist.get_rank() == 1:  # rank 1's first alltoallv raises
        real = TorchCollectives.alltoallv

        def fail(self: Any, *args: Any) -> None:
            TorchCollectives.alltoallv = real  # type: ignore[method-assign]
            raise RuntimeError("injected failure")
        TorchCollectives.alltoallv = fail  # type: ignore[method-assign]
    found: dict[str, Any] = {}
    with ladle.SPMDEngine.from_torch_distributed(threads=1) as engine:
        lf = pl.LazyFrame({"k": list(range(100)), "x": [1.0] * 100}).group_by("k").agg(pl.col("x").sum())
        for name in ("first", "second"):
            t0 = time.perf_counter()
            try:
                got = engine.allgather(engine.execute(lf)).to_polars()
                found[name] = {"error": None, "rows": got.height, "x": float(got["x"].sum())}
            except ladle.LadleCommError as e:
                found[name] = {"error": str(e), "s": time.perf_counter() - t0}
        (out / f"rank{engine.rank}.json").write_text(json.dumps(found))
    dist.destroy_process_group()


# ------------------------------------------------------------------ the tests

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

import ladle  # noqa: E402

pytestmark = pytest.mark.skipif(not (dist.is_available() and dist.is_gloo_available()),
                                reason="torch.distributed with gloo is not available")


def torchrun(n: int, args: list[str], out: Path, timeout: float, env: dict[str, str] | None = None
             ) -> tuple[int, str, float]:
    """Runs args under torchrun on n local processes; (exit status, output, seconds).
    A job still running after timeout seconds is killed with every process it
    started (its own session), and the test fails naming it."""
    out.mkdir(parents=True, exist_ok=True)
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), e.get("PYTHONPATH", "")])
    e["OMP_NUM_THREADS"] = "1"
    e.update(env or {})
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(n), "--standalone", *args]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e,
                         start_new_session=True)
    try:
        text, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        text, _ = p.communicate()
        pytest.fail(f"torchrun {' '.join(args)} did not finish within {timeout} s:\n{text[-3000:]}")
    return p.returncode, text, time.perf_counter() - t0


def rank_files(out: Path, n: int, text: str) -> list[dict[str, Any]]:
    found = []
    for r in range(n):
        f = out / f"rank{r}.json"
        assert f.exists(), f"rank {r} wrote nothing:\n{text[-4000:]}"
        found.append(json.loads(f.read_text()))
    return found


def check_worker(found: list[dict[str, Any]], n: int) -> None:
    bad = []
    for r, cases in enumerate(found):
        assert (cases["_"]["rank"], cases["_"]["nranks"], cases["_"]["comm"]) == (r, n, "torch")
        bad += [f"rank {r} {name}: {c['why']}" for name, c in cases.items() if not c["ok"]]
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("n, mode", [(2, "1"), (3, "2")])
def test_torch_differential(n: int, mode: str, tmp_path: Path) -> None:
    """mode 1: the default gloo group itself; 2: ladle's own gloo group over it."""
    rc, text, _ = torchrun(n, [str(HERE / "spmd_worker.py"), "diff", str(tmp_path), str(tmp_path / "out")],
                           tmp_path / "out", timeout=300, env={"LADLE_SPMD_TORCH": mode})
    found = rank_files(tmp_path / "out", n, text)
    assert rc == 0, text[-4000:]
    check_worker(found, n)
    assert all(0 < f["scan"]["mine"] < f["scan"]["rows"] for f in found)  # the rows were spread


@pytest.mark.parametrize("n, mode", [(3, "1"), (2, "2")])
def test_torch_asymmetric_query(n: int, mode: str, tmp_path: Path) -> None:
    """Asymmetric queries, and queries that fail on rank 1 alone (spmd_worker's
    failed_query): every rank fails, then goes on over a fresh gloo group."""
    rc, text, _ = torchrun(n, [str(HERE / "spmd_worker.py"), "asym", str(tmp_path), str(tmp_path / "out")],
                           tmp_path / "out", timeout=300, env={"LADLE_SPMD_TORCH": mode})
    found = rank_files(tmp_path / "out", n, text)
    assert rc == 0, text[-4000:]
    check_worker(found, n)
    assert all(f["after_fails_before_engine"]["ok"] for f in found)


def test_torch_killed_rank(tmp_path: Path) -> None:
    """Rank 1 dies: the others raise LadleCommError at once (gloo sees the closed
    connection), or torchrun stops them; the job never hangs."""
    rc, text, took = torchrun(3, [str(HERE / "spmd_worker.py"), "kill", str(tmp_path), str(tmp_path / "out")],
                              tmp_path / "out", timeout=200,
                              env={"LADLE_SPMD_TORCH": "1", "LADLE_SPMD_TIMEOUT": "10"})
    assert rc != 0 and took < 120, text[-3000:]
    wrote = [json.loads((tmp_path / "out" / f"rank{r}.json").read_text())
             for r in (0, 2) if (tmp_path / "out" / f"rank{r}.json").exists()]
    assert all(w["kill"]["ok"] and "torch allgather" in w["kill"]["why"] for w in wrote), wrote


def test_torch_collectives(tmp_path: Path) -> None:
    rc, text, _ = torchrun(3, [__file__, "collectives", str(tmp_path)], tmp_path, timeout=200)
    found = rank_files(tmp_path, 3, text)
    assert rc == 0, text[-4000:]
    assert [f["bad"] for f in found] == [[], [], []]


def test_torch_failing_collective(tmp_path: Path) -> None:
    rc, text, _ = torchrun(2, [__file__, "failure", str(tmp_path)], tmp_path, timeout=200)
    found = rank_files(tmp_path, 2, text)
    assert rc == 0, text[-4000:]
    assert "rank 1 of 2: torch alltoallv: RuntimeError: injected failure" in found[1]["first"]["error"]
    # rank 0, waiting in the same alltoallv, told by rank 1 through the store
    assert "rank 0 of 2: torch alltoallv: RuntimeError: rank 1 failed: " in found[0]["first"]["error"]
    assert found[0]["first"]["s"] < 20  # not gloo's timeout
    for r in (0, 1):  # both went on over a fresh gloo group: the whole answer
        assert found[r]["second"] == {"error": None, "rows": 100, "x": 200.0}, found[r]


@pytest.fixture
def one_rank_group() -> Any:
    """A gloo process group of one rank in this process, destroyed after."""
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield dist.group.WORLD
    finally:
        dist.destroy_process_group()


def test_one_rank_in_process(one_rank_group: Any) -> None:
    from polars.testing import assert_frame_equal

    lf = pl.LazyFrame({"k": [1, 2, 1, 3], "x": [1.0, 2.0, 3.0, None]}).group_by("k").agg(pl.col("x").sum())
    for timeout in (None, 30.0):  # the group itself; ladle's own gloo group
        with ladle.SPMDEngine.from_torch_distributed(threads=2, timeout=timeout) as engine:
            assert (engine.rank, engine.nranks, engine.comm) == (0, 1, "torch")
            assert "comm='torch'" in repr(engine)
            res = engine.execute(lf)
            assert_frame_equal(engine.allgather(res).to_polars(), lf.collect(engine="in-memory"),
                               check_row_order=False)
    with ladle.SPMDEngine.from_torch_distributed(one_rank_group, morsel_rows=2) as engine:
        assert engine.collect(lf).height == 3


def test_from_torch_distributed_arguments(one_rank_group: Any) -> None:
    with pytest.raises(TypeError, match="no comm="):
        ladle.SPMDEngine.from_torch_distributed(comm="mpi")
    with pytest.raises(ValueError, match="timeout="):
        ladle.SPMDEngine.from_torch_distributed(timeout=0)
    with pytest.raises(ValueError, match="device="):
        ladle.SPMDEngine.from_torch_distributed(device="tpu")


if __name__ == "__main__":
    {"collectives": _worker_collectives, "failure": _worker_failure}[sys.argv[1]](Path(sys.argv[2]))
