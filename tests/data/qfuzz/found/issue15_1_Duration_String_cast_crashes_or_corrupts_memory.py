"""qfuzz case 52:1554: crash:ladle:SIGSEGV | select | cast:duration->str:strict

outcome: crash
while running: ladle; SIGSEGV
stderr:   File "/work/main/.venv/lib/python3.11/site-packages/polars/_utils/expired.py", line 114 in wrapper
stderr:   File "/tmp/qfuzz_snap/qfuzz/worker.py", line 82 in run
stderr:   File "/tmp/qfuzz_snap/qfuzz/worker.py", line 161 in main
stderr:   File "/tmp/qfuzz_snap/qfuzz/worker.py", line 171 in <module>
stderr:   File "<frozen runpy>", line 88 in _run_code
stderr:   File "<frozen runpy>", line 198 in _run_module_as_main
stderr: 
stderr: Extension modules: ladle._native, numpy._core._multiarray_umath, numpy.linalg._umath_linalg, pyarrow.lib (total: 4)

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'f': [2678400999]}, schema={'f': pl.Duration("ms")})
q = (
    t1.lazy()
    .select(pl.col('f').cast(pl.String).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
