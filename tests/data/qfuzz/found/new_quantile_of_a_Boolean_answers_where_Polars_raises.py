"""qfuzz case 53:849: polars_error_ladle_ok:InvalidOperationError | group_by(mo=True) | agg:quantile:lit

outcome: polars_error_ladle_ok
polars raised InvalidOperationError: `quantile` operation not supported for dtype `bool`

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'k2': [0], 'k': [0], 'b': [0]}, schema={'k2': pl.Int32, 'k': pl.Int16, 'b': pl.UInt8})
q = (
    t1.lazy()
    .group_by(['b', 'k', 'k2'], maintain_order=True).agg(pl.lit(False).quantile(1.0, interpolation='nearest').alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
