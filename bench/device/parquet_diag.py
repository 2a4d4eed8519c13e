"""SF10 (or SF1) from Parquet at 16 threads, ladle and Polars in the same process:
scans of lineitem columns alone, a dictionary-column filter, the queries given,
then each query once more with LADLE_TRACE=1 (its operators' times). Run by
bench/device/tpch16.sh (MODES=diag): python3 bench/device/parquet_diag.py 10 q12,q3"""
import sys, os, time, subprocess
sys.path[:0]=['tests/python','bench']
sf=sys.argv[1]; qs=sys.argv[2].split(',')
code = r'''
import sys, os, time; sys.path[:0]=['tests/python','bench']
import polars as pl, ladle, tpch_queries as T
d='bench/data/tpch-sf%s'
tabs={n: pl.scan_parquet(f'{d}/{n}.parquet') for n in ['lineitem','orders','customer','part','partsupp','supplier','nation','region']}
e=ladle.Engine(threads=16, raise_on_fail=True)
def med(f, n=3):
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return sorted(ts)[n//2]*1000
li=tabs['lineitem']
cols=['l_orderkey','l_quantity','l_extendedprice','l_discount','l_shipdate','l_commitdate','l_receiptdate','l_shipmode']
for c in [cols[:1], cols[4:7], ['l_shipmode'], cols]:
    lf=li.select(pl.col(c).max())
    lf.collect(engine=e); lf.collect()
    print('scan', c, f"ladle {med(lambda: lf.collect(engine=e)):.1f} polars {med(lambda: lf.collect()):.1f}", flush=True)
lf=li.filter(pl.col('l_shipmode').is_in(['MAIL','SHIP'])).select(pl.len())
print('filter-scan', f"ladle {med(lambda: lf.collect(engine=e)):.1f} polars {med(lambda: lf.collect()):.1f}", flush=True)
for q in %r:
    lf=getattr(T,q)(tabs)
    lf.collect(engine=e); lf.collect()
    print(q, f"ladle {med(lambda: lf.collect(engine=e)):.1f} polars {med(lambda: lf.collect()):.1f}", flush=True)
''' % (sf, qs)
r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, POLARS_MAX_THREADS="16"), capture_output=True, text=True)
print(r.stdout)
print(r.stderr[-2000:])
code2 = code.split("li=tabs")[0] + '''
for q in %r:
    lf=getattr(T,q)(tabs)
    lf.collect(engine=e)
    print('=== TRACE '+q, file=sys.stderr, flush=True)
    lf.collect(engine=e)
''' % (qs,)
r = subprocess.run([sys.executable, "-c", code2], env=dict(os.environ, POLARS_MAX_THREADS="16", LADLE_TRACE=os.environ.get("TR", "1")), capture_output=True, text=True)
out=[]; keep=False
for line in r.stderr.splitlines():
    if line.startswith('=== TRACE'): keep=True; out.append(line); continue
    if keep: out.append(line)
    if keep and line.startswith('ladle: #1 '): keep=False
print('\n'.join(out)[-12000:])
