"""qfuzz case 51:3086: mismatch:height | filter | fill_null:lit-first

outcome: mismatch
height: expected 1 rows, got 0

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'d': [None, True]}, schema={'d': pl.Boolean})
q = (
    t1.lazy()
    .filter(pl.lit(None, dtype=pl.Boolean).fill_null(pl.col('d')))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
