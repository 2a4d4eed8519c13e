"""qfuzz case 53:548: ladle_error:LadleError:expression '…' gave N rows for a table of N | select | over:lit,str.+

outcome: ladle_error
ladle raised LadleError: expression 'x1' gave 0 rows for a table of 2

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'k': [None, 0]}, schema={'k': pl.Date})
q = (
    t1.lazy()
    .select((pl.lit('a') + pl.lit('0x10').over('k')).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
