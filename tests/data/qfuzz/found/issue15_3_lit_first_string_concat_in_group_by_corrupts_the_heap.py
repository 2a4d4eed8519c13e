"""qfuzz case 33:2399: late_crash:the same query again (send):SIGABRT | group_by(mo=True) | agg:median,is_not_null,str.+:lit-first

outcome: late_crash
while running: the same query again (send); SIGABRT
stderr: 
stderr: Current thread 0x00007f947228bb80 (most recent call first):
stderr:   File "/work/wt-qfuzz/tests/python/qfuzz/worker.py", line 154 in main
stderr:   File "/work/wt-qfuzz/tests/python/qfuzz/worker.py", line 171 in <module>
stderr:   File "<frozen runpy>", line 88 in _run_code
stderr:   File "<frozen runpy>", line 198 in _run_module_as_main
stderr: 
stderr: Extension modules: ladle._native, numpy._core._multiarray_umath, numpy.linalg._umath_linalg, pyarrow.lib (total: 4)

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'c': [float("inf"), -2.5, 0.0, -0.0, -0.0, -2.5, 1.5, -0.0], 'a': ['0x10', '1e3', 'ω', 'A', '007', 'a', 'A', '+4'], 'b': [255, 254, 192, 1, 50, 254, 107, 52]}, schema={'c': pl.Float64, 'a': pl.String, 'b': pl.UInt8})
q = (
    t2.lazy()
    .group_by(['b', 'c', 'a'], maintain_order=True).agg(('a' + pl.col('a')).is_not_null().median().alias('x2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
# the heap is corrupted by the first run; glibc notices a later allocation and aborts
for _ in range(5):
    print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1, morsel_rows=7)))
