"""qfuzz case 52:739: mismatch:values | with_columns | cast:float->uint:strict,log

outcome: mismatch
values: column 'x1': 1 of 1 rows differ; first at row 0: expected 0, got None

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'k': [0]}, schema={'k': pl.Int16})
q = (
    t2.lazy()
    .with_columns(pl.col('k').log().cast(pl.UInt32).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
