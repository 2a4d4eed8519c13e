"""What keeping a GPU result on the GPU saves (issue 18: results stay on the GPU).

A filter and projection over N rows on a GPU engine, its result handed to torch and
chained into a group-by, two ways, in one process (medians of --runs, every answer
compared):
  device: engine.execute(q); torch.from_dlpack(res.column("z"))   (zero-copy, on the GPU)
          engine.execute(res.lazy().group_by(...))               (scans it on the GPU)
  host:   engine.collect(q) -> Polars; torch.from_numpy(...).cuda()   (down and up again)
          engine.collect(df.lazy().group_by(...))                  (uploads the frame)
Writes JSON to --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl
import torch

import ladle


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    out = fn()  # warm: the scanned columns go up once and stay in the engine's cache
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=60_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path("bench/results"))
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    n = a.rows
    df = pl.DataFrame({"k": rng.integers(0, 1000, n), "x": rng.random(n), "y": rng.random(n)})
    eng = ladle.Engine(device="cuda", raise_on_fail=True)
    q = df.lazy().filter(pl.col("x") > 0.5).select("k", (pl.col("x") * 2 + pl.col("y")).alias("z"))

    def agg(lf: pl.LazyFrame) -> pl.LazyFrame:
        return lf.group_by("k").agg(pl.col("z").sum(), pl.len()).sort("k")

    def dev_tensor() -> torch.Tensor:
        return torch.from_dlpack(eng.execute(q).column("z"))

    def host_tensor() -> torch.Tensor:
        return torch.from_numpy(eng.collect(q)["z"].to_numpy()).cuda()

    def dev_chain() -> pl.DataFrame:
        return eng.collect(agg(eng.execute(q).lazy()))

    def host_chain() -> pl.DataFrame:
        return eng.collect(agg(eng.collect(q).lazy()))

    t_dev, a1 = timed(dev_tensor, a.runs)
    t_host, b1 = timed(host_tensor, a.runs)
    assert a1.device.type == "cuda" and torch.equal(a1, b1)
    t_dchain, a2 = timed(dev_chain, a.runs)
    t_hchain, b2 = timed(host_chain, a.runs)
    assert a2.equals(b2) or a2.select("k", "len").equals(b2.select("k", "len"))
    np.testing.assert_allclose(a2["z"].to_numpy(), b2["z"].to_numpy(), rtol=1e-9)
    kept = int(a1.numel())
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    res = {
        "what": "GPU result to torch and chained into a group-by: kept on the GPU vs through the host",
        "rev": rev,
        "rows": n,
        "result_rows": kept,
        "result_bytes": kept * 16,
        "runs": a.runs,
        "device": torch.cuda.get_device_name(0),
        "ms": {
            "to_torch_device": t_dev,
            "to_torch_via_host": t_host,
            "chain_on_device": t_dchain,
            "chain_via_host": t_hchain,
        },
    }
    print(json.dumps(res, indent=1))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / f"{time.strftime('%Y-%m-%d')}-device-gpu-results-{rev}.json").write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
