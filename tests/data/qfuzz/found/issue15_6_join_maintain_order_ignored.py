"""qfuzz case 51:1334: mismatch:order | join:cross:right_left | 

outcome: mismatch
order: same rows in another order; column 'k': 2 of 4 rows differ; first at row 1: expected 0, got 2

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'k': [2, 0]}, schema={'k': pl.UInt64})
q = (
    t2.lazy()
    .join(t2.lazy(), how='cross', maintain_order='right_left')
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
