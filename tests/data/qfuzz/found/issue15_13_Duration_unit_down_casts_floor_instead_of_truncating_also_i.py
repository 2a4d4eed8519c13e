"""qfuzz case 52:447: mismatch:values | select | cast:duration->duration:strict

outcome: mismatch
values: column 'x2': 1 of 1 rows differ; first at row 0: expected datetime.timedelta(0), got datetime.timedelta(days=-1, seconds=86399, microseconds=999999)

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'h': [-999]}, schema={'h': pl.Duration("ns")})
q = (
    t1.lazy()
    .select(pl.col('h').cast(pl.Duration("us")).alias('x2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
