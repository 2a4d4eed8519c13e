"""qfuzz case 52:1796: mismatch:values | select | cast:float->int:wrap

outcome: mismatch
values: column 'x1': 1 of 1 rows differ; first at row 0: expected 127, got None

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'g': [float("inf")]}, schema={'g': pl.Float32})
q = (
    t0.lazy()
    .select(pl.col('g').cast(pl.Int8, wrap_numerical=True).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
