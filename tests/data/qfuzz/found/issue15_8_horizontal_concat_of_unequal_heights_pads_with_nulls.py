"""qfuzz case 53:614: polars_error_ladle_ok:ShapeError | concat:horizontal | 

outcome: polars_error_ladle_ok
polars raised ShapeError: zip node received non-equal length inputs

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'f': [0]}, schema={'f': pl.UInt8})
t1 = pl.DataFrame({'h': []}, schema={'h': pl.Boolean})
q = (
    pl.concat([t1.lazy(), t0.lazy()], how='horizontal')
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
