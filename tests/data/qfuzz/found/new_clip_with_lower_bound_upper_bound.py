"""qfuzz case 53:892: mismatch:values | select:scalar | clip

outcome: mismatch
values: column 'x2': 1 of 1 rows differ; first at row 0: expected 300, got 1

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'b': [0]}, schema={'b': pl.Int16})
q = (
    t0.lazy()
    .select(pl.col('b').clip(300, 1.5).alias('x2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
