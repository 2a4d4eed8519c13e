"""ladle.Loader against torch's DataLoader(TensorDataset): rows per second of shuffled
batches of (int64, 4 x float32) rows from a source resident in memory.

    python bench/loader_bench.py --out /tmp/loader.json                 # CPU
    python bench/loader_bench.py --device cuda --out /tmp/loader-gpu.json

For each batch size, each contender runs --runs times (after one warm-up epoch) and
the median rows/s is reported:
  * ladle: ladle.Loader(tensors, B, shuffle=True), a new epoch (set_epoch) per run,
    every batch of the epoch consumed. On --device cuda the tensors live on the GPU
    (the loader gathers there) and the epoch ends with torch.cuda.synchronize().
  * ladle_epoch_permute (CPU): the same with gather_rows=rows, i.e. the rows permuted
    once per epoch and the batches sliced from the permuted copy; ladle_per_batch
    (CPU): gather_rows=B, one gather per batch. (The loader's default on the CPU
    gathers about 64K rows at a time and cuts them into batch views.)
  * ladle_sync: prefetch=0 (no background thread).
  * torch: DataLoader(TensorDataset(cpu tensors), batch_size=B, shuffle=True) (on
    --device cuda with pin_memory=True and each batch copied with non_blocking, the
    usual way to feed a GPU). It makes each batch row by row, so a run stops after
    --torch-rows rows (at least one batch) and rows/s is over those.
Consumption is `for batch in loader: pass` (plus the copy for torch on a GPU): the
numbers are the loaders' own throughput, not a training step's.

Writes JSON to --out: the machine (cores, torch's threads, GPU), every run, the
medians and ladle / torch.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch
from torch.utils.data import DataLoader, TensorDataset

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import ladle  # noqa: E402


def make_columns(rows: int, device: torch.device) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    cols = {"id": torch.arange(rows, dtype=torch.int64)}
    for i in range(4):
        cols[f"f{i}"] = torch.rand(rows, generator=g, dtype=torch.float32)
    return {k: v.to(device) for k, v in cols.items()}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_ladle(cols: dict[str, torch.Tensor], b: int, runs: int, device: torch.device, **kw: Any) -> list[float]:
    loader = ladle.Loader(cols, b, shuffle=True, seed=0, **kw)
    out = []
    for epoch in range(runs + 1):  # the first is a warm-up
        loader.set_epoch(epoch)
        sync(device)
        t0 = time.perf_counter()
        n = 0
        for batch in loader:
            n += batch["id"].shape[0]
        sync(device)
        dt = time.perf_counter() - t0
        assert n == cols["id"].shape[0], (n, cols["id"].shape[0])
        if epoch:
            out.append(n / dt)
    return out


def time_torch(cols: dict[str, torch.Tensor], b: int, runs: int, device: torch.device, limit: int) -> list[float]:
    host = [v.cpu() for v in cols.values()]
    ds = TensorDataset(*host)
    cuda = device.type == "cuda"
    dl = DataLoader(ds, batch_size=b, shuffle=True, pin_memory=cuda)
    out = []
    for r in range(runs + 1):
        sync(device)
        t0 = time.perf_counter()
        n = 0
        for batch in dl:
            if cuda:
                batch = [t.to(device, non_blocking=True) for t in batch]
            n += batch[0].shape[0]
            if n >= limit:
                break
        sync(device)
        dt = time.perf_counter() - t0
        if r:
            out.append(n / dt)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    ap.add_argument("--rows", type=int, default=None, help="rows of the source (default 2M on cpu, 100M on cuda)")
    ap.add_argument("--batch-sizes", default=None, help="comma-separated (default 256,1024,4096,16384,65536; "
                    "on cuda 4096,16384,65536,262144,1048576)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--torch-rows", type=int, default=100_000, help="rows per timed run of torch's DataLoader")
    ap.add_argument("--no-torch", action="store_true", help="skip torch's DataLoader")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    device = torch.device(a.device)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            sys.exit("--device cuda: torch.cuda.is_available() is False")
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
    rows = a.rows or (100_000_000 if device.type == "cuda" else 2_000_000)
    default = "4096,16384,65536,262144,1048576" if device.type == "cuda" else "256,1024,4096,16384,65536"
    sizes = [int(x) for x in (a.batch_sizes or default).split(",")]
    cols = make_columns(rows, device)
    machine = {
        "host": platform.node(), "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "python": platform.python_version(),
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
    }
    result: dict[str, Any] = {"device": str(device), "rows": rows, "runs": a.runs, "machine": machine,
                              "row": "int64 + 4 x float32 (24 bytes)", "batch_sizes": {}}
    contenders: dict[str, Callable[[int], list[float]]] = {
        "ladle": lambda b: time_ladle(cols, b, a.runs, device),
        "ladle_sync": lambda b: time_ladle(cols, b, a.runs, device, prefetch=0),
    }
    if device.type == "cpu":
        contenders["ladle_per_batch"] = lambda b: time_ladle(cols, b, a.runs, device, gather_rows=b)
        contenders["ladle_epoch_permute"] = lambda b: time_ladle(cols, b, a.runs, device, gather_rows=rows)
    if not a.no_torch:
        contenders["torch"] = lambda b: time_torch(cols, b, a.runs, device, max(a.torch_rows, b))
    print(f"{rows} rows on {device}, {a.runs} runs each; machine {machine}", flush=True)
    for b in sizes:
        entry: dict[str, Any] = {}
        for name, fn in contenders.items():
            runs = fn(b)
            entry[name] = {"median_rows_per_s": statistics.median(runs), "runs": runs}
        if "torch" in entry:
            entry["ladle_over_torch"] = entry["ladle"]["median_rows_per_s"] / entry["torch"]["median_rows_per_s"]
        result["batch_sizes"][str(b)] = entry
        print(f"B={b:>8}: " + "  ".join(f"{k} {v['median_rows_per_s'] / 1e6:8.2f}M rows/s" for k, v in entry.items()
                                       if isinstance(v, dict))
              + (f"  ladle/torch {entry['ladle_over_torch']:.1f}x" if "torch" in entry else ""), flush=True)
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(result, indent=1))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
