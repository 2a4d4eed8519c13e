"""qfuzz case 52:1653: mismatch:values | with_columns | agg:arg_max

outcome: mismatch
values: column 'k2': 1 of 1 rows differ; first at row 0: expected 0, got None

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'k2': [float("nan")]}, schema={'k2': pl.Float64})
q = (
    t1.lazy()
    .with_columns(pl.col('k2').arg_max().alias('k2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
