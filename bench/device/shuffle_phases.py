"""Where a shuffle's time goes, per rank (run under mpirun; bench/device/shuffle_phases.sh):
the spmd_bench group-by workload (rows per rank of random int64 keys over rows/2 x ranks
groups, a sum and a count) four times, with each run's exchange milliseconds and bytes
from engine.stats() (run it with LADLE_TRACE=2 for the phases on stderr)."""
from __future__ import annotations

import sys
import time

import numpy as np
import polars as pl

import ladle

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000_000
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
with ladle.SPMDEngine(threads=threads) as e:
    g = np.random.default_rng([7, e.rank])
    f = pl.DataFrame({"k": g.integers(0, max(rows // 2, 1) * e.nranks, rows, dtype=np.int64),
                      "v": g.integers(0, 1000, rows, dtype=np.int64)})
    q = f.lazy().group_by("k").agg(pl.col("v").sum(), pl.len())
    for i in range(4):
        s0 = e.stats()
        t0 = time.perf_counter()
        e.execute(q)
        ms = (time.perf_counter() - t0) * 1e3
        s1 = e.stats()
        xb, xm = s1["exchange_bytes"] - s0["exchange_bytes"], s1["exchange_ms"] - s0["exchange_ms"]
        print(f"rank {e.rank}/{e.nranks} run {i}: {ms:.1f} ms, exchange {xm:.1f} ms for {xb / 1e6:.1f} MB sent"
              f" ({xb / 1e6 / max(xm, 1e-9):.2f} GB/s)", flush=True)
    raw = e._engine.bench_alltoall(int(25e6), 5)
    if e.rank == 0:
        print(f"raw alltoallv 25 MB a pair: {raw:.1f} ms ({25e6 * (e.nranks - 1) / raw / 1e6:.2f} GB/s)", flush=True)
