"""Where Parquet scan time goes at 16 threads: zstd's bound against ladle's and Polars' scans.

Run on the device through bench/device/scaling.sh (which builds ladle and unpacks
Polars first):

    DEV_SCRIPT=bench/device/parquet_bound.py bash bench/device/scaling.sh

1. generates TPC-H SF10 (bench/tpch_gen.py: Polars' writer, zstd) when missing;
2. the zstd bound: q6's four lineitem columns cut into pages of 131,072 values as
   the file has them (the dates as 16-bit dictionary codes, an approximation),
   compressed at level 3 with the system's libzstd, then decompressed by 1 and by TH
   (16) threads through ctypes (which releases the GIL): the time no reader of
   those columns can beat with that library;
3. ladle (with and without LADLE_MMAP) and Polars at TH threads, median of 5: the
   four columns scanned and aggregated, ten numeric columns scanned and
   aggregated, TPC-H q6, q9, q19 and q1 from the files;
4. ladle's LADLE_TRACE=2 of q6, q19 and q9 (scan, filter with late reads, joins).
"""
import ctypes, os, subprocess, sys, time, statistics, threading
from concurrent.futures import ThreadPoolExecutor
sys.path[:0] = ['tests/python', 'bench']
import numpy as np, pyarrow.parquet as pq
D = os.environ.get('TPCH', 'bench/data/tpch-sf10')
if not os.path.exists(f'{D}/lineitem.parquet'):
    subprocess.run([sys.executable, 'bench/tpch_gen.py', '--sf', '10', '--out', D], check=True, stdout=subprocess.DEVNULL)
F = f'{D}/lineitem.parquet'
TH = int(os.environ.get('TH', '16'))
lib = ctypes.CDLL('libzstd.so.1')
lib.ZSTD_createDCtx.restype = ctypes.c_void_p
lib.ZSTD_decompressDCtx.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
lib.ZSTD_decompressDCtx.restype = ctypes.c_size_t
lib.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
lib.ZSTD_compress.restype = ctypes.c_size_t
lib.ZSTD_versionString.restype = ctypes.c_char_p
print('libzstd', lib.ZSTD_versionString().decode(), 'cpus', os.cpu_count(), flush=True)
Q6 = ['l_shipdate', 'l_discount', 'l_quantity', 'l_extendedprice']
pf = pq.ParquetFile(F)
md = pf.metadata
names = [md.row_group(0).column(i).path_in_schema for i in range(md.num_columns)]
for c in Q6:
    i = names.index(c)
    comp = sum(md.row_group(r).column(i).total_compressed_size for r in range(md.num_row_groups))
    unc = sum(md.row_group(r).column(i).total_uncompressed_size for r in range(md.num_row_groups))
    print(f'{c}: compressed {comp/1e6:.0f} MB, uncompressed pages {unc/1e6:.0f} MB', flush=True)
# pages like the file's: each row group's column as plain values (dates as the
# dictionary indices' width would be, approximated by int32 codes), compressed at level 3
pages = []
for c in Q6:
    t = pq.read_table(F, columns=[c])
    a = t[c].combine_chunks()
    v = np.asarray(a.cast('int32') if c == 'l_shipdate' else a)
    if c == 'l_shipdate':
        u, v = np.unique(v, return_inverse=True)
        v = v.astype(np.uint16)  # 12-bit codes rounded up to 16 bits
    for s in range(0, len(v), 131072):
        raw = np.ascontiguousarray(v[s:s + 131072]).tobytes()
        buf = ctypes.create_string_buffer(len(raw) + 1024 + len(raw) // 100)
        n = lib.ZSTD_compress(buf, len(buf), raw, len(raw), 3)
        pages.append((buf.raw[:n], len(raw)))
tot_out = sum(p[1] for p in pages); tot_in = sum(len(p[0]) for p in pages)
print(f'synthetic pages: {len(pages)}, {tot_in/1e6:.0f} MB compressed -> {tot_out/1e6:.0f} MB', flush=True)
local = threading.local()
def dec(p):
    ctx = getattr(local, 'ctx', None)
    if ctx is None:
        ctx = local.ctx = lib.ZSTD_createDCtx(); local.out = ctypes.create_string_buffer(1 << 21)
    r = lib.ZSTD_decompressDCtx(ctx, local.out, 1 << 21, p[0], len(p[0]))
    assert r == p[1]
for th in sorted({1, TH}):
    with ThreadPoolExecutor(th) as ex:
        list(ex.map(dec, pages))
        ts = []
        for _ in range(5):
            t0 = time.perf_counter(); list(ex.map(dec, pages)); ts.append(time.perf_counter() - t0)
    m = statistics.median(ts)
    print(f'zstd bound, {th} threads: {m*1e3:.0f} ms, {tot_out/m/1e9:.2f} GB/s out', flush=True)
# ladle and Polars: the q6 columns scanned and summed, then q6, q9, q19 (median of 5)
code = r'''
import sys, os, time, statistics
sys.path[:0] = ['tests/python', 'bench']
import polars as pl, ladle, tpch_queries as T
D, TH, who = sys.argv[1], int(sys.argv[2]), sys.argv[3]
Q6 = ['l_shipdate', 'l_discount', 'l_quantity', 'l_extendedprice']
tabs = {n: pl.scan_parquet(f'{D}/{n}.parquet') for n in ['lineitem','orders','customer','part','partsupp','supplier','nation','region']}
e = ladle.Engine(threads=TH, raise_on_fail=True) if who == 'ladle' else None
work = {'scan4': tabs['lineitem'].select(pl.col('l_shipdate').max(), *[pl.col(c).sum() for c in Q6[1:]]),
        'scanall': tabs['lineitem'].select([pl.col(c).max() for c in ['l_orderkey','l_partkey','l_suppkey','l_quantity','l_extendedprice','l_discount','l_tax','l_shipdate','l_commitdate','l_receiptdate']]),
        'q6': T.q6(tabs), 'q9': T.q9(tabs), 'q19': T.q19(tabs), 'q1': T.q1(tabs)}
for k, lf in work.items():
    run = (lambda: lf.collect(engine=e)) if e else (lambda: lf.collect())
    run(); ts = []
    for _ in range(5):
        t0 = time.perf_counter(); run(); ts.append(time.perf_counter() - t0)
    print(f'{who} {TH}t {k}: {statistics.median(ts)*1e3:.0f} ms', flush=True)
'''
for who in ['ladle', 'polars']:
    for env in ([{}, {'LADLE_MMAP': '0'}] if who == 'ladle' else [{}]):
        r = subprocess.run([sys.executable, '-c', code, D, str(TH), who], capture_output=True, text=True,
                           env=dict(os.environ, POLARS_MAX_THREADS=str(TH), **env))
        print(env or '', r.stdout, r.stderr[-1500:], flush=True)
# traces of q6 and q19 at 16 threads
tr = r'''
import sys
sys.path[:0] = ['tests/python', 'bench']
import polars as pl, ladle, tpch_queries as T
D, TH = sys.argv[1], int(sys.argv[2])
tabs = {n: pl.scan_parquet(f'{D}/{n}.parquet') for n in ['lineitem','orders','customer','part','partsupp','supplier','nation','region']}
e = ladle.Engine(threads=TH, raise_on_fail=True)
for q in sys.argv[3:]:
    lf = getattr(T, q)(tabs)
    lf.collect(engine=e); lf.collect(engine=e)
    print('=== ' + q, file=sys.stderr, flush=True)
    lf.collect(engine=e)
'''
for q in ['q6', 'q19', 'q9']:
    r = subprocess.run([sys.executable, '-c', tr, D, str(TH), q], capture_output=True, text=True,
                       env=dict(os.environ, LADLE_TRACE='2'))
    err = r.stderr
    print(err[err.find('=== ' + q):][:6000], flush=True)
