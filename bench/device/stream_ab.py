"""A/B of the streamed Parquet scan at 16 threads (AB_THREADS), Polars in the same process:
python3 bench/device/stream_ab.py SF q1,q22. Per query, runs alternate between
LADLE_PARQUET_STREAM=0 (read whole), the default, and Polars (7 rounds after a
warm-up; medians), each ladle mode on an engine of its own for its peak memory.
AB_ENV=LADLE_STREAM_JOIN makes it the A/B of streamed joins instead (that
variable =0 against unset; AB_A=1: =1, streamed over Parquet only, against
unset); AB_MEM=1 runs on the tables read into memory first."""
import os
import statistics
import sys
import time

sys.path[:0] = ["tests/python", "bench"]
THREADS = int(os.environ.get("AB_THREADS", "16"))  # AB_THREADS=2 on the 2-core machine
AB_ENV = os.environ.get("AB_ENV", "LADLE_PARQUET_STREAM")
AB_A = os.environ.get("AB_A", "0")  # the value of AB_ENV for the "whole" side
os.environ.setdefault("POLARS_MAX_THREADS", str(THREADS))
import polars as pl  # noqa: E402

import ladle  # noqa: E402
import tpch_queries as T  # noqa: E402

sf, qs = sys.argv[1], sys.argv[2].split(",")
d = f"bench/data/tpch-sf{sf}"
names = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]
tabs = {n: pl.scan_parquet(f"{d}/{n}.parquet") for n in names}
if os.environ.get("AB_MEM") == "1":
    tabs = {n: t.collect().lazy() for n, t in tabs.items()}


def timed(f: object) -> float:
    t = time.perf_counter()
    f()  # type: ignore[operator]
    return (time.perf_counter() - t) * 1000


for q in qs:
    lf = T.QUERIES[int(q[1:])](tabs)
    eng = {"whole": ladle.Engine(threads=THREADS, raise_on_fail=True),
           "default": ladle.Engine(threads=THREADS, raise_on_fail=True)}
    ts: dict[str, list[float]] = {"whole": [], "default": [], "polars": []}

    def run(mode: str) -> float:
        if mode == "polars":
            return timed(lambda: lf.collect())
        if mode == "whole":
            os.environ[AB_ENV] = AB_A
        else:
            os.environ.pop(AB_ENV, None)
        return timed(lambda: lf.collect(engine=eng[mode]))

    for m in ts:
        run(m)  # warm-up
    for _ in range(7):
        for m in ts:
            ts[m].append(run(m))
    med = {m: statistics.median(v) for m, v in ts.items()}
    print(f"{q} ({AB_ENV}={AB_A} as whole{', in memory' if os.environ.get('AB_MEM') == '1' else ''}): whole {med['whole']:.1f} ms (peak {eng['whole'].stats()['memory_peak'] / 2**20:.0f} MiB), "
          f"default {med['default']:.1f} ms (peak {eng['default'].stats()['memory_peak'] / 2**20:.0f} MiB, "
          f"{eng['default'].stats()['row_groups_streamed']} row groups streamed), polars {med['polars']:.1f} ms; "
          f"ladle/polars whole {med['whole'] / med['polars']:.2f} default {med['default'] / med['polars']:.2f}", flush=True)
