"""Running functions on ladle against Polars: cum_sum, cum_prod, cum_min,
cum_max and cum_count (forward and reverse), shift(n) and diff(n), over the
whole frame and per window group (over() by one or two keys), under
aggregations, on every numeric width, temporal and String columns, with nulls,
NaN, signed zeros and values that wrap."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from conftest import assert_same

import ladle

CUM = ["cum_sum", "cum_prod", "cum_min", "cum_max", "cum_count"]


def frame(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    nulls = rng.random(n) < 0.15

    def with_nulls(s: pl.Series) -> pl.Series:
        return s.scatter(np.flatnonzero(nulls & (rng.random(n) < 0.7)), None)

    f = rng.integers(-20, 20, n).astype(float) / 4
    f[rng.random(n) < 0.05] = np.nan
    f[rng.random(n) < 0.05] = -0.0
    return pl.DataFrame({
        "g": rng.integers(0, 7, n),
        "h": pl.Series(rng.choice(["a", "b", "c"], n).tolist(), dtype=pl.String).scatter(np.flatnonzero(rng.random(n) < 0.2), None),
        "i8": with_nulls(pl.Series(rng.integers(-128, 128, n), dtype=pl.Int8)),
        "u8": with_nulls(pl.Series(rng.integers(0, 256, n), dtype=pl.UInt8)),
        "i32": with_nulls(pl.Series(rng.integers(-(2**31), 2**31, n), dtype=pl.Int32)),
        "u32": with_nulls(pl.Series(rng.integers(0, 2**32, n), dtype=pl.UInt32)),
        "i64": with_nulls(pl.Series(rng.integers(-(2**62), 2**62, n), dtype=pl.Int64)),
        "f64": with_nulls(pl.Series(f)),
        "f32": with_nulls(pl.Series(f, dtype=pl.Float32)),
        "b": with_nulls(pl.Series(rng.random(n) < 0.5)),
        "d": with_nulls(pl.Series(rng.integers(0, 20000, n)).cast(pl.Date)),
        "t": with_nulls(pl.Series(rng.integers(0, 10**12, n)).cast(pl.Datetime("ms"))),
        "du": with_nulls(pl.Series(rng.integers(-(10**9), 10**9, n)).cast(pl.Duration("us"))),
        "s": with_nulls(pl.Series(rng.choice(["x", "yy", "", "é"], n).tolist(), dtype=pl.String)),
    })


def exprs() -> list[pl.Expr]:
    out: list[pl.Expr] = []
    for c in ["i8", "u8", "i32", "u32", "i64", "f64", "f32"]:
        for fn in CUM:
            for rev in (False, True):
                out.append(getattr(pl.col(c), fn)(reverse=rev).alias(f"{c}_{fn}_{rev}"))
        for n in (1, 3, -2):
            out.append(pl.col(c).diff(n).alias(f"{c}_diff{n}"))
    for c in ["b", "d", "t", "du", "s", "f32"]:
        for n in (1, -1, 0, 5000):
            out.append(pl.col(c).shift(n).alias(f"{c}_shift{n}"))
    out += [pl.col("b").cum_sum().alias("b_sum"), pl.col("b").cum_count(reverse=True).alias("b_cnt"),
            pl.col("d").cum_min().alias("d_min"), pl.col("t").cum_max(reverse=True).alias("t_max"),
            pl.col("du").cum_sum().alias("du_sum"), pl.col("d").diff().alias("d_diff"),
            pl.col("t").diff(2).alias("t_diff"), pl.col("du").diff(-1).alias("du_diff")]
    return out


@pytest.mark.parametrize("n", [0, 1, 37, 5000])
def test_running_functions_as_polars(n: int, engine, small_engine) -> None:
    df = frame(n, seed=n)
    es = exprs()
    for lf in (df.lazy().select(es), df.lazy().select(e.over("g") for e in es),
               df.lazy().with_columns(e.over("g", "h") for e in es[:40])):
        assert_same(lf, engine)
        assert engine.last_run == "ladle"
        assert_same(lf, small_engine)


def test_running_functions_under_aggregations_and_filters(engine, small_engine) -> None:
    df = frame(3000, seed=4)
    lf = df.lazy().select(
        pl.col("i32").cum_sum().max().alias("a"),
        pl.col("f64").cum_max().sum().over("g").alias("b"),
        (pl.col("i64").diff() * 2).min().over("h").alias("c"),
        pl.col("u8").shift(2).mean().over("g").alias("d"),
    )
    assert_same(lf, engine)
    assert_same(lf, small_engine)
    # a running function in a filter reads every row before the filter
    lf = df.lazy().filter(pl.col("i8").cum_count().over("g") <= 3).select("g", "i8")
    assert_same(lf, engine)
    # from a Parquet file of several row groups and a sort before it
    assert_same(df.lazy().sort("g", "i64", nulls_last=True)
                .with_columns(pl.col("f32").shift().over("g").alias("prev"),
                              pl.col("u32").cum_sum().over("g").alias("run")), engine)


def test_running_functions_from_parquet(tmp_path, engine) -> None:
    df = frame(20_000, seed=9)
    p = tmp_path / "t.parquet"
    df.write_parquet(p, row_group_size=3000)
    lf = pl.scan_parquet(p).filter(pl.col("g") != 3).with_columns(
        pl.col("i32").cum_sum().over("g").alias("c"), pl.col("d").diff().over("h").alias("dd"),
        pl.col("s").shift(-1).alias("next"))
    assert_same(lf, engine)
    assert engine.last_run == "ladle"


def test_running_functions_signed_zero_and_nan() -> None:
    """Between equal values cum_min/cum_max take the later one (-0.0 then 0.0 gives
    0.0), and NaN counts only until a number comes."""
    eng = ladle.Engine(raise_on_fail=True)
    nan = float("nan")
    for vals in ([0.0, -0.0, 0.0], [-0.0, 0.0], [nan, 1.0, nan, 0.5], [1.0, nan, 2.0], [nan, nan]):
        lf = pl.LazyFrame({"x": vals}).select(
            pl.col("x").cum_min().alias("mn"), pl.col("x").cum_max().alias("mx"),
            pl.col("x").cum_min(reverse=True).alias("rmn"), pl.col("x").cum_max(reverse=True).alias("rmx"))
        want, got = lf.collect(), lf.collect(engine=eng)
        for c in want.columns:
            w, g = want[c].to_numpy(), got[c].to_numpy()
            assert np.array_equal(np.signbit(w), np.signbit(g)) and np.array_equal(w, g, equal_nan=True), (vals, c)


def test_shift_with_a_fill_value(engine, small_engine) -> None:
    """shift(n, fill_value=v): v past the ends (per window group under over()), the
    column's own nulls kept, in the supertype of both (Int32 with 2.5: Float64)."""
    df = frame(500, seed=11)
    lf = df.lazy().select(
        pl.col("i32").shift(1, fill_value=0).alias("a"), pl.col("i32").shift(-3, fill_value=7).alias("b"),
        pl.col("f64").shift(2, fill_value=0).alias("c"), pl.col("s").shift(1, fill_value="q").alias("d"),
        pl.col("i32").shift(1, fill_value=pl.col("i32").max()).alias("e"),
        pl.col("i32").shift(1, fill_value=2.5).alias("f"), pl.col("u8").shift(2, fill_value=2**40).alias("h"),
        pl.col("d").shift(1, fill_value=dt.date(2000, 1, 1)).over("g").alias("o"))
    assert_same(lf, engine)
    assert engine.last_run == "ladle"
    assert_same(lf, small_engine)


def test_not_run_where_unsupported(engine) -> None:
    """What falls back names the function: cum_sum inside group_by().agg() (a list per
    group), diff of UInt64 (Polars' cast depends on the length)."""
    df = pl.LazyFrame({"g": [1, 1, 2], "x": [1, 2, 3], "u": pl.Series([1, 2, 3], dtype=pl.UInt64)})
    for lf, why in ((df.group_by("g").agg(pl.col("x").cum_sum()), "cum_sum"),
                    (df.select(pl.col("u").diff()), "diff of UInt64")):
        with pytest.raises(ladle.UnsupportedError, match=why):
            lf.collect(engine=engine)


def test_dates_and_strings_shift(engine) -> None:
    df = pl.DataFrame({"d": [dt.date(2020, 1, 1), None, dt.date(2021, 5, 6)], "s": ["a", None, "ccc"],
                       "g": [1, 1, 1]})
    assert_same(df.lazy().select(pl.col("d").shift(1), pl.col("s").shift(-1),
                                 pl.col("d").diff().alias("dd")), engine)
