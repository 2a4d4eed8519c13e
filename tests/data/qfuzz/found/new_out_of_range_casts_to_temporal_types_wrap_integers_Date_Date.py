"""qfuzz case 51:328: mismatch:values | select | cmp:date,datetime

outcome: mismatch
values: column 'x2': 1 of 1 rows differ; first at row 0: expected None, got True

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'b': [2932531]}, schema={'b': pl.Date})
q = (
    t2.lazy()
    .select((pl.col('b') != pl.lit(dt.datetime(2100, 1, 1), dtype=pl.Datetime("ns"))).alias('x2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
