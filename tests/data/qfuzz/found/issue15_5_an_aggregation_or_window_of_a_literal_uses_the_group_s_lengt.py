"""qfuzz case 52:2682: mismatch:values | select:scalar | agg:sum:lit

outcome: mismatch
values: column 'x4': 1 of 1 rows differ; first at row 0: expected 1, got 0

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'h': [0]}, schema={'h': pl.Date})
q = (
    t1.lazy()
    .select(pl.lit(True).sum().alias('x4'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
