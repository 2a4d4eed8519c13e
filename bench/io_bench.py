"""Parquet decode and CSV parse throughput: ladle against Polars and pyarrow on the
same files, the same machine and the same thread count, in one run.

Throughput is decoded bytes per second (the in-memory Arrow size of the result
divided by the median wall time of --runs rounds after a warm-up, each round
running every engine once, so that a slow spell of a shared machine falls on
all of them). Each ladle result
is checked equal to Polars' before its time counts.

    python bench/io_bench.py [--threads T] [--runs N] [--scale lineitem copies]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]


def interleaved_medians(fns: list[Callable[[], object]], runs: int) -> list[float]:
    """Median wall time of each function over `runs` rounds, each round running
    every function once (in alternating order), so that a slow spell of a shared
    machine falls on all of them rather than on whichever ran then."""
    for fn in fns:
        fn()  # warm-up
    times: list[list[float]] = [[] for _ in fns]
    for r in range(runs):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            t = time.perf_counter()
            fns[i]()
            times[i].append(time.perf_counter() - t)
    return [statistics.median(ts) for ts in times]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=int, default=2, help="copies of TPC-H SF0.1 lineitem (600k rows each)")
    args = ap.parse_args()
    os.environ["POLARS_MAX_THREADS"] = str(args.threads)

    import polars as pl
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
    from polars.testing import assert_frame_equal

    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import ladle
    from tpch_queries import load_table

    pa.set_cpu_count(args.threads)
    pa.set_io_thread_count(args.threads)
    engine = ladle.Engine(threads=args.threads)
    base = load_table("lineitem")
    df = pl.concat([base] * args.scale)
    nbytes = df.to_arrow().nbytes
    tmp = Path(tempfile.mkdtemp(prefix="ladle-bench-"))
    rows = []

    def bench(name: str, path: Path, ladle_fn, polars_fn, arrow_fn) -> None:
        got, want = ladle_fn(), polars_fn()
        assert_frame_equal(got, want)
        t_l, t_p, t_a = interleaved_medians([ladle_fn, polars_fn, arrow_fn], args.runs)
        row = {"case": name, "file_mb": round(path.stat().st_size / 1e6, 1), "decoded_mb": round(nbytes / 1e6, 1),
               "ladle_s": t_l, "polars_s": t_p, "pyarrow_s": t_a,
               "ladle_gbps": nbytes / t_l / 1e9, "polars_gbps": nbytes / t_p / 1e9,
               "ratio_vs_polars": t_l / t_p, "ratio_vs_pyarrow": t_l / t_a}
        rows.append(row)
        print(f"{name:34s} {row['file_mb']:7.1f} MB  ladle {t_l:6.3f}s ({row['ladle_gbps']:.2f} GB/s)  "
              f"polars {t_p:6.3f}s  pyarrow {t_a:6.3f}s  ladle/polars {t_l / t_p:5.2f}")

    print(f"{df.height:,} rows, {nbytes / 1e6:.0f} MB decoded, {args.threads} threads, median of {args.runs} interleaved rounds\n")
    for codec in ["none", "snappy", "zstd", "lz4", "gzip"]:
        for dictionary in [True, False]:
            p = tmp / f"li-{codec}-{dictionary}.parquet"
            pq.write_table(df.to_arrow(), p, compression=codec,
                           use_dictionary=dictionary, row_group_size=122_880)
            bench(f"parquet {codec} dict={dictionary}", p,
                  lambda p=p: pl.scan_parquet(p).collect(engine=engine),
                  lambda p=p: pl.scan_parquet(p).collect(),
                  lambda p=p: pq.read_table(p))
    p = tmp / "li-delta.parquet"
    pq.write_table(df.to_arrow(), p, compression="none", use_dictionary=False, row_group_size=122_880,
                   column_encoding={"l_orderkey": "DELTA_BINARY_PACKED", "l_partkey": "DELTA_BINARY_PACKED",
                                    "l_comment": "DELTA_LENGTH_BYTE_ARRAY", "l_extendedprice": "BYTE_STREAM_SPLIT"})
    bench("parquet delta/byte_stream_split", p, lambda: pl.scan_parquet(p).collect(engine=engine),
          lambda: pl.scan_parquet(p).collect(), lambda: pq.read_table(p))
    p = tmp / "li.csv"
    df.write_csv(p)
    bench("csv", p, lambda: pl.scan_csv(p, try_parse_dates=True).collect(engine=engine),
          lambda: pl.scan_csv(p, try_parse_dates=True).collect(),
          lambda: pacsv.read_csv(p))

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), platform.processor())
    out = {
        "benchmark": "io", "date": dt.datetime.now().isoformat(timespec="seconds"), "host": socket.gethostname(),
        "machine": {"cores": os.cpu_count(), "cpu": cpu, "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
        "threads": args.threads, "runs": args.runs,
        "versions": {"ladle": ladle.__version__, "ladle_commit": commit, "polars": pl.__version__, "pyarrow": pa.__version__},
        "rows": rows,
    }
    res = ROOT / "bench" / "results" / f"{dt.date.today().isoformat()}-{socket.gethostname()}-io.json"
    res.write_text(json.dumps(out, indent=2))
    print(f"\nwrote {res.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
