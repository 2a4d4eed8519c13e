"""qfuzz case 51:2003: mismatch:values | select | cast:str->int:nonstrict

outcome: mismatch
values: column 'x2': 1 of 1 rows differ; first at row 0: expected 4, got None

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'b': ['+4']}, schema={'b': pl.String})
q = (
    t1.lazy()
    .select(pl.col('b').cast(pl.Int8, strict=False).alias('x2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
