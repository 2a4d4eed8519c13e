"""The GPU engine's Parquet scans: pages decoded on the device (parquet_decode)
against decoded on the host and copied up (LADLE_GPU_PARQUET=0), and Polars at 16
threads, from TPC-H files of bench/tpch_gen.py. Medians of --runs after a warm-up;
every answer checked against Polars'. Run on the device machine after
tools/devcarry_unpack.sh put Polars on the path:

    python3 bench/device/gpu_parquet.py --data bench/data/tpch-sf1 [--runs 5]"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path[:0] = ["tests/python", "bench"]


def commit() -> str:
    """The checkout's commit: devcarry-gpu/COMMIT or devcarry/COMMIT (the device has
    no .git), else git's."""
    for f in ("devcarry-gpu/COMMIT", "devcarry/COMMIT"):
        if Path(f).is_file():
            return Path(f).read_text().strip()[:7]
    try:
        import subprocess
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--queries", default="1,3,4,5,6,9,10,12,14,19")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    import polars as pl
    from polars.testing import assert_frame_equal

    import ladle
    import tpch_queries as T

    names = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]
    tabs = {n: pl.scan_parquet(f"{a.data}/{n}.parquet") for n in names}
    e = ladle.Engine(device="cuda")

    def med(f: object) -> float:
        ts = []
        for _ in range(a.runs):
            t = time.perf_counter()
            f()  # type: ignore[operator]
            ts.append(time.perf_counter() - t)
        return statistics.median(ts) * 1e3

    rows = []
    for q in [int(x) for x in a.queries.split(",")]:
        lf = T.QUERIES[q](tabs)
        want = lf.collect()
        r = {"query": f"q{q}", "polars_ms": med(lambda: lf.collect())}
        for mode in ("1", "0"):
            os.environ["LADLE_GPU_PARQUET"] = mode
            got = e.collect(lf)
            assert_frame_equal(got, want, check_exact=False, rel_tol=1e-9)
            r["gpu_decode_ms" if mode == "1" else "host_decode_ms"] = med(lambda: e.collect(lf))
            r["ran_" + mode] = e.last_run
        rows.append(r)
        print(f"q{q:<3} polars {r['polars_ms']:8.1f}  gpu, pages decoded on the device {r['gpu_decode_ms']:8.1f}"
              f"  gpu, decoded on the host {r['host_decode_ms']:8.1f}  ({r['ran_1']}, {r['ran_0']})", flush=True)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        meta = {"data": a.data, "runs": a.runs, "rows": rows, "commit": commit(),
                "gpu": [f"{d.name} ({d.memory_bytes >> 30} GiB)" for d in ladle.devices()],
                "cpu_cores": os.cpu_count(),
                "nvcomp": os.environ.get("LADLE_NVCOMP_LIB", "as built"),
                "stored_min_pages": os.environ.get("LADLE_GPU_STORED_MIN_PAGES", "512 (default)"),
                "columns": {"polars_ms": "Polars' CPU engine",
                            "gpu_decode_ms": "GPU engine, Parquet pages decoded on the GPU",
                            "host_decode_ms": "GPU engine, LADLE_GPU_PARQUET=0: read on the host, copied up"}}
        (Path(a.out) / "gpu_parquet.json").write_text(json.dumps(meta, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
