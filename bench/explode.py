"""A join that explodes to 50M rows (issue 16, item 15): time (median of several
runs) and peak resident memory of ladle and of Polars, each in a fresh process
with the same thread count, the answers' heights and key sums checked equal.

  python bench/explode.py [--threads 2] [--runs 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any


def frames() -> tuple[Any, Any]:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(3)
    # 100 keys: 1,000 left rows and 500 right rows each, so 100 * 1,000 * 500 = 50M rows
    left = pl.DataFrame({"k": np.repeat(np.arange(100), 1000), "a": rng.random(100_000), "b": rng.integers(0, 1 << 30, 100_000)})
    right = pl.DataFrame({"k": np.repeat(np.arange(100), 500), "c": rng.random(50_000), "d": rng.integers(0, 1 << 30, 50_000)})
    return left.sample(fraction=1.0, shuffle=True, seed=1), right.sample(fraction=1.0, shuffle=True, seed=2)


def child(engine: str, threads: int, runs: int) -> dict[str, Any]:
    import polars as pl

    left, right = frames()
    q = left.lazy().join(right.lazy(), on="k", how="inner")
    eng: Any = "in-memory"
    if engine == "ladle":
        import ladle

        eng = ladle.Engine(threads=threads, raise_on_fail=True)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times, check = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = q.collect(engine=eng)
        times.append(time.perf_counter() - t0)
        check = (out.height, int(out["k"].sum()), float(out["c"].sum()))
        del out
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"engine": engine, "median_s": statistics.median(times), "times": times,
            "peak_rss_mb": peak / 1024, "inputs_rss_mb": base / 1024, "check": check}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", default=None)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.threads, a.runs)))
        return
    env = dict(os.environ, POLARS_MAX_THREADS=str(a.threads))
    res = []
    for engine in ("polars", "ladle"):
        p = subprocess.run([sys.executable, __file__, "--child", engine, "--threads", str(a.threads), "--runs", str(a.runs)],
                           capture_output=True, text=True, env=env, check=True)
        res.append(json.loads(p.stdout.strip().splitlines()[-1]))
        r = res[-1]
        print(f"{engine:7s} median {r['median_s']:.2f} s  peak RSS {r['peak_rss_mb']:.0f} MB (inputs {r['inputs_rss_mb']:.0f} MB)  rows {r['check'][0]:,}")
    assert res[0]["check"][:2] == res[1]["check"][:2], res
    assert abs(res[0]["check"][2] - res[1]["check"][2]) <= 1e-9 * abs(res[0]["check"][2])
    print(f"ladle/Polars: time {res[1]['median_s'] / res[0]['median_s']:.2f}x, peak memory {res[1]['peak_rss_mb'] / res[0]['peak_rss_mb']:.2f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": a.threads, "results": res}, f, indent=1)


if __name__ == "__main__":
    main()
