"""qfuzz case 33:826: mismatch:values | group_by(mo=False) | agg:median,ne_missing:duration,duration

outcome: mismatch
values: (rows sorted) column 'x3': 1 of 1 rows differ; first at row 0: expected 0.0, got 1.0

Row order Polars defines for this query: none.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'f': [-999], 'c': [0], 'k2': [False]}, schema={'f': pl.Duration("ns"), 'c': pl.Datetime("us"), 'k2': pl.Boolean})
q = (
    t0.lazy()
    .group_by(['c', 'k2'], maintain_order=False).agg(pl.col('f').ne_missing(pl.duration(days=0, hours=0, time_unit="us")).median().alias('x3'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
