"""qfuzz case 51:5: mismatch:values | with_columns | pow(0.5)

outcome: mismatch
values: column 'x3': 1 of 1 rows differ; first at row 0: expected nan, got inf

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'k': [float("-inf")]}, schema={'k': pl.Float64})
q = (
    t0.lazy()
    .with_columns(pl.col('k').pow(0.5).alias('x3'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
