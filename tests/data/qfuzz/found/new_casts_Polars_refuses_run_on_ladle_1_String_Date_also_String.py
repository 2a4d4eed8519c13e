"""qfuzz case 51:3949: polars_error_ladle_ok:InvalidOperationError | filter | cast:str->bool:nonstrict

outcome: polars_error_ladle_ok
polars raised InvalidOperationError: casting from Utf8View to Boolean not supported

This error occurred in the following expression:
	col("d").cast(Boolean)


Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'d': ['']}, schema={'d': pl.String})
q = (
    t1.lazy()
    .filter(pl.col('d').cast(pl.Boolean, strict=False))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
