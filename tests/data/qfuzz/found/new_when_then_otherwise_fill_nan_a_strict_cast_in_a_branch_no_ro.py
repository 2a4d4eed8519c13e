"""qfuzz case 52:2544: ladle_error:LadleError:strict cast of '…' from i32 to u64 failed at row N: value '…'; use str | filter | cast:int->uint:strict,is_between,when

outcome: ladle_error
ladle raised LadleError: strict cast of 'k2' from i32 to u64 failed at row 0: value '-2'; use strict=False to get null instead

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t0 = pl.DataFrame({'e': [True], 'k2': [-2]}, schema={'e': pl.Boolean, 'k2': pl.Int32})
q = (
    t0.lazy()
    .filter(pl.when(pl.col('e')).then(pl.col('e')).otherwise(pl.col('k2').cast(pl.UInt64).is_between(pl.lit(2), pl.lit(-5), closed='right')))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
