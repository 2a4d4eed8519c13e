"""qfuzz case 33:646: mismatch:height | filter | is_between

outcome: mismatch
height: expected 0 rows, got 1

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'a': [1]}, schema={'a': pl.Datetime("ns")})
q = (
    t1.lazy()
    .filter(pl.col('a').is_between(pl.lit(dt.datetime(1970, 1, 1)), pl.lit(dt.datetime(1970, 1, 1, 0, 0, 0, 1)), closed='right'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
