"""qfuzz case 52:330: mismatch:values | with_columns | arith:%:int,float

outcome: mismatch
values: column 'x2': 1 of 1 rows differ; first at row 0: expected nan, got -inf

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t3 = pl.DataFrame({'k': ['']}, schema={'k': pl.String})
q = (
    t3.lazy()
    .with_columns((pl.lit(7) % pl.lit(float("-inf"), dtype=pl.Float32)).alias('x2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
