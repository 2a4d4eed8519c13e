"""TPC-H's 22 queries on the GPU engine against Polars and ladle's CPU engine, in memory.

    python3 bench/device/gpu_tpch.py [--sf 1] [--runs 3] [--threads 16] [--out DIR]

The tables are made by bench/tpch_gen.py (numpy, the specification's cardinalities and
value ranges) at --sf; the queries are tests/python/tpch_queries.py's. Per query: where the
GPU engine ran it (`device`: the whole plan on the GPU; `mixed`: the GPU and ladle's
CPU kernels above it, explain's `[host]` nodes; `fallback`: ladle's CPU backend, with
the FallbackWarning's reason), its answer against Polars', and medians of --runs after
one warm-up: Polars and ladle CPU at --threads, the GPU with its scanned columns kept on
the device from the warm-up ("resident"). Writes gpu_tpch.json into --out."""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--queries", default="1-22")
    ap.add_argument("--budget-s", type=float, default=400.0, help="stop starting queries past this")
    ap.add_argument("--out", type=Path, default=Path("bench/results"))
    ap.add_argument("--device", default="cuda",
                    help="cuda; or columns: the GPU's path on the CPU's kernel table (a dry run)")
    a = ap.parse_args()
    os.environ["POLARS_MAX_THREADS"] = str(a.threads)
    sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests" / "python")]
    import polars as pl
    from polars.testing import assert_frame_equal

    import ladle
    import tpch_gen
    import tpch_queries as T

    t_start = time.perf_counter()
    lo, _, hi = a.queries.partition("-")
    qs = range(int(lo), int(hi or lo) + 1)
    data = tpch_gen.generate(a.sf)
    tables = {k: v.lazy() for k, v in data.items()}
    print(f"SF{a.sf:g} made in {time.perf_counter() - t_start:.1f} s", flush=True)
    cpu = ladle.Engine(threads=a.threads)
    if a.device == "columns":
        os.environ["LADLE_COLUMN_KERNELS"] = "1"
        gpu = ladle.Engine(threads=a.threads)
        del os.environ["LADLE_COLUMN_KERNELS"]
    else:
        gpu = ladle.Engine(device=a.device, threads=a.threads)
    res: dict = {"sf": a.sf, "runs": a.runs, "threads": a.threads, "machine": platform.node(),
                 "cpu_count": os.cpu_count(), "queries": {}}

    def timed(fn) -> tuple[float, object]:
        out = fn()
        ts = []
        for _ in range(a.runs):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts), out

    for i in qs:
        if time.perf_counter() - t_start > a.budget_s:
            print(f"budget spent: q{i} and after not run", flush=True)
            break
        q = getattr(T, f"q{i}")(tables)
        r: dict = {}
        r["polars_s"], want = timed(lambda: q.collect())
        r["ladle_cpu_s"], got_cpu = timed(lambda: cpu.collect(q))
        text = gpu.explain(q)
        host = [ln.strip() for ln in text.split("physical plan")[1].splitlines() if "[host" in ln]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r["ladle_gpu_s"], got = timed(lambda: gpu.collect(q))
        fell = [str(x.message) for x in w if issubclass(x.category, ladle.FallbackWarning)]
        r["where"] = "fallback" if fell else "mixed" if host else "device"
        if fell:
            r["reason"] = fell[0][:300]
        if host:
            r["host_nodes"] = host
        for name, g in (("gpu", got), ("cpu", got_cpu)):
            try:
                assert_frame_equal(g, want, check_exact=False, rel_tol=1e-6, check_row_order=False)
                r[f"{name}_equal"] = True
            except AssertionError as e:
                r[f"{name}_equal"] = False
                print(f"q{i} {name} differs: {str(e)[:300]}", flush=True)
        r["gpu_vs_polars"] = r["polars_s"] / r["ladle_gpu_s"]
        res["queries"][f"q{i}"] = r
        print(f"q{i:2d} {r['where']:8s} polars {r['polars_s'] * 1e3:8.1f} ms  ladle cpu "
              f"{r['ladle_cpu_s'] * 1e3:8.1f} ms  ladle gpu {r['ladle_gpu_s'] * 1e3:8.1f} ms "
              f"({r['gpu_vs_polars']:.2f}x Polars) {r.get('reason', '')[:120]}", flush=True)
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "gpu_tpch.json").write_text(json.dumps(res, indent=1))

    def geo(xs: list[float]) -> float:
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")

    qv = res["queries"].values()
    for kind in ("device", "mixed", "fallback"):
        sel = [r for r in qv if r["where"] == kind]
        res[f"n_{kind}"] = len(sel)
        res[f"geomean_gpu_vs_polars_{kind}"] = geo([r["gpu_vs_polars"] for r in sel])
    res["all_equal"] = all(r["gpu_equal"] and r["cpu_equal"] for r in qv)
    print(json.dumps({k: v for k, v in res.items() if k != "queries"}, indent=1), flush=True)
    (a.out / "gpu_tpch.json").write_text(json.dumps(res, indent=1))
    return 0 if res["all_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
