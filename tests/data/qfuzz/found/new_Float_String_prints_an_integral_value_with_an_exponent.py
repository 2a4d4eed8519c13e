"""qfuzz case 42:546: mismatch:values | select | cast:float->int:nonstrict,cast:float->str:nonstrict,cast:int->int:nonstrict

outcome: mismatch
values: column 'f': 1 of 1 rows differ; first at row 0: expected '-100.0', got '-1e+02'

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'k2': [0], 'k': [False], 'a': [-100.0]}, schema={'k2': pl.Int64, 'k': pl.Boolean, 'a': pl.Float32})
q = (
    t0.lazy()
    .select(pl.col('k2').cast(pl.Int16, strict=False).alias('h'), pl.col('a').cast(pl.Int16, strict=False).alias('b'), pl.col('a').cast(pl.String, strict=False).alias('f'), pl.col('k'), pl.col('k2'), pl.lit(None, dtype=pl.Datetime("ms")).alias('d'), pl.lit(None, dtype=pl.Duration("ns")).alias('e'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
