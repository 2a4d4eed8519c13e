"""qfuzz case 52:13: ladle_error:PanicException:out-of-range date | group_by(mo=True) | cast:float->date:wrap

outcome: ladle_error
ladle raised PanicException: out-of-range date

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'k': ['']}, schema={'k': pl.String})
q = (
    t2.lazy()
    .group_by(['k'], maintain_order=True).agg(pl.lit(float("inf")).cast(pl.Date, wrap_numerical=True).alias('x3'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
