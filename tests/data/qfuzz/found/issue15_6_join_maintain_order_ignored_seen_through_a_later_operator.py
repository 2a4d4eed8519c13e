"""qfuzz case 52:779: mismatch:values | join:full:right_left>slice | 

outcome: mismatch
values: column 'e_right': 1 of 1 rows differ; first at row 0: expected None, got 0

Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'e': [None]}, schema={'e': pl.Int64})
t3 = pl.DataFrame({'e': [0]}, schema={'e': pl.Int64})
q = (
    t2.lazy()
    .join(t3.lazy(), on=['e'], how='full', maintain_order='right_left')
    .slice(1, 1)
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
