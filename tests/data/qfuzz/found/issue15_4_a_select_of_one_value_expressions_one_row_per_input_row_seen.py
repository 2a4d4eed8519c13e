"""qfuzz case 53:938: mismatch:values | select:scalar>group_by(mo=True) | agg:len,agg:min,agg:sum

outcome: mismatch
values: column 'x6': 1 of 1 rows differ; first at row 0: expected 1, got 2

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'d': [0, 0]}, schema={'d': pl.Int64})
q = (
    t1.lazy()
    .select(pl.col('d').sum().alias('x3'), pl.col('d').min().alias('x4'), pl.col('d').min().alias('x5'))
    .group_by(['x3', 'x4', 'x5'], maintain_order=True).agg(pl.col('x4').len().alias('x6'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
