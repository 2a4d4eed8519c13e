"""qfuzz case 52:2224: mismatch:values | select | cast:datetime->str:strict

outcome: mismatch
values: column 'x1': 1 of 1 rows differ; first at row 0: expected '1970-01-01 00:00:00.000000', got '1970-01-01 00:00:00'

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'k': [0]}, schema={'k': pl.Datetime("us")})
q = (
    t0.lazy()
    .select(pl.col('k').cast(pl.String).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
