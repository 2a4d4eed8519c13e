"""qfuzz case 51:2183: polars_error_ladle_ok:SchemaError | with_columns | when

outcome: polars_error_ladle_ok
polars raised SchemaError: invalid series dtype: expected `Boolean`, got `null` for series with name `literal`

This error occurred in the following expression:
	.when(null).then(false).otherwise(null.cast(Boolean))


Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'f': [0]}, schema={'f': pl.Int64})
q = (
    t1.lazy()
    .with_columns(pl.when(pl.lit(None)).then(pl.lit(False)).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
