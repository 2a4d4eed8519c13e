"""qfuzz case 52:2562: ladle_error:LadleError:out of memory: string output | group_by(mo=True) | agg:min,str.+:lit-first

outcome: ladle_error
ladle raised LadleError: out of memory: string output

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'g': [], 'd': [], 'k': []}, schema={'g': pl.Date, 'd': pl.Int64, 'k': pl.String})
q = (
    t1.lazy()
    .group_by(['k'], maintain_order=True).agg(('true' + pl.col('k').min()).alias('x2'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
