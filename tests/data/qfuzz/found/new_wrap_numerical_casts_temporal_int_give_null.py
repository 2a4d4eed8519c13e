"""qfuzz case 52:819: mismatch:values | select | cast:date->uint:wrap

outcome: mismatch
values: column 'x3': 1 of 1 rows differ; first at row 0: expected 18446744073709537468, got None

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t3 = pl.DataFrame({'g': [-14148]}, schema={'g': pl.Date})
q = (
    t3.lazy()
    .select(pl.col('g').cast(pl.UInt64, wrap_numerical=True).alias('x3'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
