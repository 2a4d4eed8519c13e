"""qfuzz case 51:515: mismatch:height | with_row_index>with_columns>select | 

outcome: mismatch
height: expected 1 rows, got 0

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'c': [0]}, schema={'c': pl.UInt8})
q = (
    t2.lazy()
    .with_row_index('idx', offset=0)
    .with_columns(pl.col('idx').alias('x2'))
    .select(pl.col('x2').alias('x4'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
