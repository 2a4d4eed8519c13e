"""qfuzz case 52:622: mismatch:values | select | str.slice:neg

outcome: mismatch
values: column 'x1': 1 of 1 rows differ; first at row 0: expected '', got 'b'

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'k2': ['b']}, schema={'k2': pl.String})
q = (
    t2.lazy()
    .select(pl.col('k2').str.slice(-2, 1).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
