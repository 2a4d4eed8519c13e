"""qfuzz case 53:2342: mismatch:values | with_columns | agg:count,arith:/:uint,uint

outcome: mismatch
values: column 'h': 1 of 5 rows differ; first at row 3: expected 0.6000000000000001, got 0.6

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'g': [0, 0, 0, 3, 0]}, schema={'g': pl.UInt8})
q = (
    t0.lazy()
    .with_columns((pl.col('g') / pl.col('g').count()).alias('h'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
