"""qfuzz case 51:489: mismatch:values | select:len | len

outcome: mismatch
values: column 'len': 1 of 1 rows differ; first at row 0: expected 1, got 0

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'k': [0]}, schema={'k': pl.Date})
q = (
    t1.lazy()
    .select(pl.len())
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
