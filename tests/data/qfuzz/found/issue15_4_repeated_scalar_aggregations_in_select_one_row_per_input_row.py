"""qfuzz case 53:480: mismatch:height | select:scalar | agg:sum

outcome: mismatch
height: expected 1 rows, got 2

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'h': [0, 0]}, schema={'h': pl.Int16})
q = (
    t2.lazy()
    .select(pl.col('h').sum().alias('x2'), pl.col('h').sum().alias('x3'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
