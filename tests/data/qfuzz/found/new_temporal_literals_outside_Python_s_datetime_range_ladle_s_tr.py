"""qfuzz case 53:2716: ladle_error:PanicException:`NaiveDateTime + TimeDelta` overflowed | select:scalar | cast:int->datetime:wrap,is_in,select

outcome: ladle_error
ladle raised PanicException: `NaiveDateTime + TimeDelta` overflowed

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'a': [0]}, schema={'a': pl.Int8})
q = (
    t2.lazy()
    .select(pl.lit(9223372036854775807).cast(pl.Datetime("us"), wrap_numerical=True).is_in([]).alias('x5'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
