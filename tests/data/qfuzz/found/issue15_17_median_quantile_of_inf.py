"""qfuzz case 51:3783: mismatch:values | group_by(mo=True) | agg:median

outcome: mismatch
values: column 'x2': 1 of 1 rows differ; first at row 0: expected inf, got nan

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'k2': [0, 0], 'f': [float("inf"), float("inf")], 'e': [None, None]}, schema={'k2': pl.UInt8, 'f': pl.Float32, 'e': pl.UInt64})
q = (
    t0.lazy()
    .group_by(['k2', 'e'], maintain_order=True).agg(pl.col('f').median().alias('x2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
