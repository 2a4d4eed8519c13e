"""TPC-H queries at SF10 (or SF1) at 16 threads, in memory and from Parquet:
ladle's and Polars' medians, ladle's physical plan (explain) and its traced
operators (LADLE_TRACE=1) in each mode, and `perf record` of ladle alone where
perf is installed. Run on the device machine:
    python3 bench/device/join_diag.py 10 q3,q9 > $OUT/join_diag.txt"""
import os
import subprocess
import sys

sf, qs = sys.argv[1], sys.argv[2].split(",")
code = r'''
import sys, os, time; sys.path[:0] = ['tests/python', 'bench']
import polars as pl, ladle, tpch_queries as T
d = 'bench/data/tpch-sf%s'
names = ['lineitem', 'orders', 'customer', 'part', 'partsupp', 'supplier', 'nation', 'region']
pq = {n: pl.scan_parquet(f'{d}/{n}.parquet') for n in names}
mem = {n: pq[n].collect().lazy() for n in names}
e = ladle.Engine(threads=16, raise_on_fail=True)
mode, qs = sys.argv[1], sys.argv[2].split(',')
def med(f, n=5):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return sorted(ts)[n // 2] * 1000
for q in qs:
    for name, tabs in (('mem', mem), ('parquet', pq)):
        lf = getattr(T, q)(tabs)
        if mode == 'time':
            lf.collect(engine=e); lf.collect()
            print(q, name, f"ladle {med(lambda: lf.collect(engine=e)):.1f} polars {med(lambda: lf.collect()):.1f}", flush=True)
        elif mode == 'trace':
            print('=== PLAN', q, name, file=sys.stderr, flush=True)
            print(e.explain(lf).split('physical plan')[1], file=sys.stderr, flush=True)
            lf.collect(engine=e)
            print('=== TRACE', q, name, file=sys.stderr, flush=True)
            lf.collect(engine=e)
        elif mode == 'loop':
            lf.collect(engine=e)
            t = time.perf_counter()
            while time.perf_counter() - t < 4: lf.collect(engine=e)
''' % sf
env = dict(os.environ, POLARS_MAX_THREADS="16")
r = subprocess.run([sys.executable, "-c", code, "time", ",".join(qs)], env=env, capture_output=True, text=True)
print(r.stdout, r.stderr[-2000:], flush=True)
r = subprocess.run([sys.executable, "-c", code, "trace", ",".join(qs)], env=dict(env, LADLE_TRACE="1"),
                   capture_output=True, text=True)
print("\n".join(l for l in r.stderr.splitlines() if not l.startswith("ladle: pool"))[-30000:], flush=True)
if subprocess.run(["which", "perf"], capture_output=True).returncode == 0:
    for q in qs:
        r = subprocess.run(["perf", "record", "-o", "/tmp/jd.perf", sys.executable, "-c", code, "loop", q],
                           env=env, capture_output=True, text=True)
        rep = subprocess.run(["perf", "report", "-i", "/tmp/jd.perf", "--no-children", "--sort", "dso,sym",
                              "--stdio", "--percent-limit", "0.7"], capture_output=True, text=True)
        print("=== PERF", q, "(mem then parquet, 4 s each)")
        print("\n".join(l for l in rep.stdout.splitlines() if l.strip() and not l.startswith("#"))[:6000], flush=True)
else:
    print("no perf on this machine")
