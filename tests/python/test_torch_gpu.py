"""The torch side of ladle on a GPU (issue 20), run by `make test-gpu` on the device
machine (LADLE_TEST_DEVICE=cuda; skipped elsewhere): persisted_to_torch gives CUDA
tensors that are the engine's buffers, ladle.torch_allocator puts torch's tensors in
ladle's pool, and ladle.Loader feeds batches from a GPU-resident result."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import ladle

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(
    os.environ.get("LADLE_TEST_DEVICE", "") != "cuda" or not torch.cuda.is_available(),
    reason="GPU tests: LADLE_TEST_DEVICE=cuda on a machine with a GPU (make test-gpu)",
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpu() -> ladle.Engine:
    return ladle.Engine(device="cuda", raise_on_fail=True)


def _frame(n: int) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    return pl.DataFrame({
        "k": rng.integers(0, 1000, n),
        "x": rng.standard_normal(n),
        "f": rng.standard_normal(n).astype(np.float32),
    })


def test_persisted_to_torch_on_the_gpu(gpu: ladle.Engine) -> None:
    df = _frame(1_000_003)
    lf = df.lazy().select((pl.col("x") * 2).alias("y"), (pl.col("k") + 1).alias("j"), (pl.col("f") > 0).alias("b"))
    res = gpu.execute(lf)
    assert res.device == "cuda:0"
    # a computed column is handed out as it lies: a DLPack export of it, dropped, then
    # persisted_to_torch give the same address (an export while another tensor still
    # shares the buffer copies it, so that the two cannot write into each other)
    first = torch.from_dlpack(res.column("y"))
    where = first.data_ptr()
    del first
    torch.cuda.synchronize()
    got = ladle.persisted_to_torch(res)
    assert got["y"].device.type == "cuda" and got["y"].data_ptr() == where
    want = lf.collect()
    for c in want.columns:
        assert torch.equal(got[c].cpu(), torch.from_numpy(want[c].to_numpy().copy())), c
    with pytest.raises(ladle.LadleError, match="consumed"):
        res.num_rows


def test_torch_allocator_shares_ladles_pool(tmp_path: Path) -> None:
    # torch takes its allocator once, before its first CUDA allocation: a process
    # of its own
    script = textwrap.dedent(
        """
        import numpy as np, polars as pl, torch, ladle
        torch.cuda.memory.change_current_allocator(ladle.torch_allocator())
        before = ladle.torch_allocator_bytes()[0]
        a = torch.ones(1 << 20, device="cuda")            # 4 MiB through ladle's pool
        held = ladle.torch_allocator_bytes()[0]
        assert held - before >= 4 << 20, (before, held)
        eng = ladle.Engine(device="cuda", raise_on_fail=True)
        df = pl.DataFrame({"k": np.arange(100_000) % 7, "x": np.arange(100_000, dtype=np.float64)})
        lf = df.lazy().group_by("k").agg(pl.col("x").sum()).sort("k")
        t = ladle.persisted_to_torch(eng.execute(lf))
        want = lf.collect()
        assert torch.equal(t["x"].cpu(), torch.from_numpy(want["x"].to_numpy().copy()))
        b = (a * 2).sum().item()
        assert b == 2 * (1 << 20)
        del a
        torch.cuda.synchronize()
        after, peak = ladle.torch_allocator_bytes()
        assert after < held and peak >= held, (after, held, peak)
        print("ok", held, after, peak)
        """
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "ok" in p.stdout, p.stdout + p.stderr[-3000:]


def test_loader_from_a_gpu_result(gpu: ladle.Engine) -> None:
    n = 200_003
    df = pl.DataFrame({"i": np.arange(n, dtype=np.int64), "x": np.arange(n, dtype=np.float32)})
    res = gpu.execute(df.lazy().select("i", (pl.col("x") * 1).alias("x")))
    loader = ladle.Loader(res, batch_size=4096, shuffle=True, seed=5, device="cuda")
    seen = []
    for batch in loader:
        assert batch["i"].device.type == "cuda"
        assert torch.equal(batch["i"].to(torch.float32), batch["x"])
        seen.append(batch["i"].cpu())
    ids = torch.cat(seen)
    assert ids.numel() == n and torch.equal(ids.sort().values, torch.arange(n))
    assert not torch.equal(ids, torch.arange(n))  # shuffled
