"""qfuzz case 51:1316: polars_error_ladle_ok:InvalidOperationError | with_columns | arith://:null,int

outcome: polars_error_ladle_ok
polars raised InvalidOperationError: floor_div operation not supported for dtype `null`

This error occurred in the following expression:
	[(null) // (dyn int: 100)]


Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'e': [0]}, schema={'e': pl.Duration("ns")})
q = (
    t1.lazy()
    .with_columns((pl.lit(None) // 100).alias('x5'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
