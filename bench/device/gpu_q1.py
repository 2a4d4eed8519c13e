"""TPC-H q1 on the GPU engine against Polars and ladle's CPU engine, in memory.

    python3 bench/device/gpu_q1.py [--rows 60000000] [--runs 5] [--threads 16] [--out DIR]

lineitem's seven q1 columns are made with numpy in dbgen's value ranges (l_returnflag and
l_linestatus as one-letter strings, l_shipdate as Date, the numbers as Float64), so that
60M rows are SF10's lineitem. q1 filters on the ship date, groups by the two flags (four
groups), sums and averages four columns and two expressions, counts, and sorts the four
groups: on the GPU engine the filter and the group-by run on the device and the sort of
four rows on the host (a plan partly on the device; explain marks it). Each engine runs
the query once to warm up, then --runs times; medians are reported. The GPU's "resident"
number is with the columns already on the device (kept by the engine from the warm-up);
"copy-in" is a fresh engine per run. GB/s: the bytes q1 must read (54 per row) over the
median time, against the H200's 4.2 TB/s device copy. Answers are checked against
Polars' (relative 1e-9: the GPU adds in another order, the same one every run)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

BYTES_PER_ROW = 4 * 8 + 2 * (8 + 1) + 4  # four Float64, two 1-byte strings with offsets, a Date


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=60_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--out", type=Path, default=Path("bench/results"))
    ap.add_argument("--trace", action="store_true", help="only the GPU engine, each node's time printed")
    a = ap.parse_args()
    os.environ["POLARS_MAX_THREADS"] = str(a.threads)
    if a.trace:
        os.environ["LADLE_TRACE"] = "2"
    import polars as pl
    from polars.testing import assert_frame_equal

    import ladle

    rng = np.random.default_rng(1)
    n = a.rows
    t0 = time.perf_counter()
    ship = rng.integers(8036, 10560, n).astype(np.int32)
    # dbgen: returnflag R or A when received before 1995-06-17, else N; linestatus O after
    # 1995-06-17, else F
    late = ship > 9298
    flag = np.where(late, 1, rng.integers(0, 2, n) * 2)  # 0 A, 1 N, 2 R
    df = pl.DataFrame(
        {
            "l_quantity": rng.integers(1, 51, n).astype(np.float64),
            "l_extendedprice": np.round(rng.uniform(900, 105000, n), 2),
            "l_discount": rng.integers(0, 11, n) / 100.0,
            "l_tax": rng.integers(0, 9, n) / 100.0,
            "l_returnflag": pl.Series(flag).replace_strict({0: "A", 1: "N", 2: "R"}, return_dtype=pl.String),
            "l_linestatus": pl.Series(late).replace_strict({False: "F", True: "O"}, return_dtype=pl.String),
            "l_shipdate": pl.Series(ship).cast(pl.Date),
        }
    )
    print(f"{n} rows made in {time.perf_counter() - t0:.1f} s", flush=True)
    q = (
        df.lazy()
        .filter(pl.col("l_shipdate") <= date(1998, 9, 2))
        .group_by("l_returnflag", "l_linestatus")
        .agg(
            pl.col("l_quantity").sum().alias("sum_qty"),
            pl.col("l_extendedprice").sum().alias("sum_base_price"),
            (pl.col("l_extendedprice") * (1 - pl.col("l_discount"))).sum().alias("sum_disc_price"),
            (pl.col("l_extendedprice") * (1 - pl.col("l_discount")) * (1 + pl.col("l_tax")))
            .sum()
            .alias("sum_charge"),
            pl.col("l_quantity").mean().alias("avg_qty"),
            pl.col("l_extendedprice").mean().alias("avg_price"),
            pl.col("l_discount").mean().alias("avg_disc"),
            pl.len().alias("count_order"),
        )
        .sort("l_returnflag", "l_linestatus")
    )
    if a.trace:
        gpu = ladle.Engine(device="cuda", threads=a.threads, raise_on_fail=True)
        for _ in range(a.runs):
            t = time.perf_counter()
            gpu.collect(q)
            print(f"ladle gpu {(time.perf_counter() - t) * 1e3:.2f} ms", file=sys.stderr, flush=True)
        return 0
    want = q.collect()

    def check(got) -> None:
        assert_frame_equal(got, want, check_exact=False, rel_tol=1e-9)

    def timed(fn) -> tuple[float, list[float], float]:
        t = time.perf_counter()
        check(fn())
        t_first = time.perf_counter() - t
        ts = []
        for _ in range(a.runs):
            t = time.perf_counter()
            got = fn()
            ts.append(time.perf_counter() - t)
            check(got)
        return t_first, ts, statistics.median(ts)

    res: dict = {"query": "tpch q1 (synthetic lineitem)", "rows": n, "runs": a.runs, "threads": a.threads,
                 "bytes_read": BYTES_PER_ROW * n, "machine": platform.node(), "cpu_count": os.cpu_count()}
    ms = lambda ts: [round(x * 1e3, 2) for x in ts]  # noqa: E731
    _, ts, res["polars_s"] = timed(lambda: q.collect())
    print(f"polars {a.threads}t: median {res['polars_s'] * 1e3:.1f} ms {ms(ts)}", flush=True)
    cpu = ladle.Engine(threads=a.threads, raise_on_fail=True)
    _, ts, res["ladle_cpu_s"] = timed(lambda: cpu.collect(q))
    print(f"ladle cpu {a.threads}t: median {res['ladle_cpu_s'] * 1e3:.1f} ms {ms(ts)}", flush=True)
    gpu = ladle.Engine(device="cuda", threads=a.threads, raise_on_fail=True)
    print(gpu.explain(q).split("physical plan")[1], flush=True)
    first, ts, res["ladle_gpu_resident_s"] = timed(lambda: gpu.collect(q))
    assert gpu.last_run == "ladle", gpu.last_run
    res["ladle_gpu_first_s"] = first
    res["gpu_stats"] = gpu.stats()
    print(f"ladle gpu: first (copies in) {first * 1e3:.1f} ms, resident median "
          f"{res['ladle_gpu_resident_s'] * 1e3:.2f} ms {ms(ts)} stats {res['gpu_stats']}", flush=True)
    # the same answer, bit for bit, every run
    a1, a2 = gpu.collect(q), gpu.collect(q)
    assert_frame_equal(a1, a2, check_exact=True)

    def cold():
        return ladle.Engine(device="cuda", threads=a.threads, raise_on_fail=True).collect(q)

    _, ts, res["ladle_gpu_copy_in_s"] = timed(cold)
    print(f"ladle gpu, columns copied in each run: median {res['ladle_gpu_copy_in_s'] * 1e3:.1f} ms {ms(ts)}",
          flush=True)
    for k in ("polars_s", "ladle_cpu_s", "ladle_gpu_resident_s", "ladle_gpu_copy_in_s"):
        res[k.replace("_s", "_gbps")] = res["bytes_read"] / res[k] / 1e9
    res["speedup_resident_vs_polars"] = res["polars_s"] / res["ladle_gpu_resident_s"]
    res["speedup_copy_in_vs_polars"] = res["polars_s"] / res["ladle_gpu_copy_in_s"]
    print(json.dumps({k: v for k, v in res.items() if k != "gpu_stats"}, indent=1))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "gpu_q1.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
