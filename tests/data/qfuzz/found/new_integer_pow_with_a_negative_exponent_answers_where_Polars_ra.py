"""qfuzz case 51:322: polars_error_ladle_ok:InvalidOperationError | select:scalar | pow

outcome: polars_error_ladle_ok
polars raised InvalidOperationError: conversion from `i32` to `u32` failed in column 'k2' for 1 out of 1 values: [-1]

Hint: if you were trying to raise an integer to a negative integer power, please cast your base or exponent to float first.

This error occurred in the following expression:
	col("k2").pow([col("k2")])


Row order Polars defines for this query: full.
"""

import datetime as dt

import polars as pl

import ladle

t1 = pl.DataFrame({'k2': [-1]}, schema={'k2': pl.Int32})
q = (
    t1.lazy()
    .select(pl.col('k2').pow(pl.col('k2')).alias('x1'))
)


def run(engine):
    try:
        return q.collect(engine=engine)
    except BaseException as e:  # PanicException too
        return f"{type(e).__name__}: {e}"


print("Polars:", run("auto"))
print("ladle: ", run(ladle.Engine(raise_on_fail=True, threads=1)))
