"""qfuzz case 52:1361: mismatch:height | select:scalar | agg:min,fill_nan

outcome: mismatch
height: expected 1 rows, got 0

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'b': []}, schema={'b': pl.Float32})
q = (
    t0.lazy()
    .select(pl.col('b').min().fill_nan(pl.lit(-2.5)).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
