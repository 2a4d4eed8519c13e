"""qfuzz case 53:1914: mismatch:values | with_columns | arith:-:datetime,duration,cast:datetime->int:strict

outcome: mismatch
values: column 'x1': 1 of 1 rows differ; first at row 0: expected -10800000, got -10800000000000

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'a': [0]}, schema={'a': pl.Datetime("ns")})
q = (
    t1.lazy()
    .with_columns((pl.col('a') - pl.duration(days=0, hours=3, time_unit="ms")).cast(pl.Int64).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
