"""qfuzz case 51:2281: polars_error_ladle_ok:InvalidOperationError | select | clip

outcome: polars_error_ladle_ok
polars raised InvalidOperationError: conversion from `i32` to `u64` failed in column 'literal' for 1 out of 1 values: [-5]

This error occurred in the following expression:
	col("f").clip_min([dyn int: -5])


Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t2 = pl.DataFrame({'f': [0]}, schema={'f': pl.UInt64})
q = (
    t2.lazy()
    .select(pl.col('f').clip(-5, None).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
