"""qfuzz case 43:2681: mismatch:values | with_columns | log

outcome: mismatch
values: column 'x9': 1 of 1 rows differ; first at row 0: expected 9.403545379638672, got 9.403544425964355

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'d': [677.25]}, schema={'d': pl.Float32})
q = (
    t1.lazy()
    .with_columns(pl.col('d').log(2).alias('x9'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
