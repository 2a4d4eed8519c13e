"""Queries on the column kernels alone: the path a GPU engine runs, against Polars.

Without a GPU the tests run it on the CPU's kernel table (LADLE_COLUMN_KERNELS=1, a
testing switch that makes a CPU engine run as a GPU engine does); with
LADLE_TEST_DEVICE=cuda (``make test-gpu``) they run on the GPU. Either way a query the
path covers must run there (``last_run == "ladle"``) and equal Polars, and one it does
not cover must run on ladle's CPU backend with a FallbackWarning naming the node and
the expression, or raise under raise_on_fail."""

from __future__ import annotations

import os
import warnings
from datetime import date, datetime
from typing import Any, Iterator

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal, assert_series_equal

import ladle

DEVICE = os.environ.get("LADLE_TEST_DEVICE", "cpu")


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[ladle.Engine]:
    if DEVICE == "cuda":
        yield ladle.Engine(device="cuda")
    else:
        monkeypatch.setenv("LADLE_COLUMN_KERNELS", "1")
        yield ladle.Engine()


def frame(n: int = 5000, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    nulls = rng.random(n) < 0.2
    f = rng.normal(size=n)
    f[rng.random(n) < 0.01] = np.nan
    return pl.DataFrame(
        {
            "i8": pl.Series(rng.integers(-100, 100, n), dtype=pl.Int8),
            "i32": pl.Series(rng.integers(-1000, 1000, n), dtype=pl.Int32),
            "i64": rng.integers(-(2**62), 2**62, n),
            "u16": pl.Series(rng.integers(0, 60000, n), dtype=pl.UInt16),
            "f32": pl.Series(rng.normal(size=n), dtype=pl.Float32),
            "f64": f,
            "fn": pl.Series(f).scatter(np.flatnonzero(nulls), None),
            "in": pl.Series(rng.integers(0, 50, n)).scatter(np.flatnonzero(nulls), None),
            "b": rng.random(n) < 0.5,
            "s": rng.choice(["apple", "kiwi", "", "ünï", "a much longer string value"], n),
            "d": pl.Series(rng.integers(8000, 12000, n), dtype=pl.Int32).cast(pl.Date),
            "ts": pl.Series(rng.integers(0, 2**40, n)).cast(pl.Datetime("ms")),
        }
    )


def run(engine: ladle.Engine, lf: pl.LazyFrame) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ladle.FallbackWarning)
        got = engine.collect(lf)
    assert engine.last_run == "ladle"
    return got


def check(engine: ladle.Engine, lf: pl.LazyFrame) -> None:
    # a GPU adds floats in another order than Polars: equal to the last bits of a
    # Float64, to a Float32 sum's rounding over thousands of values
    got, want = run(engine, lf), lf.collect()
    f32 = [c for c, t in want.schema.items() if t == pl.Float32]
    assert_frame_equal(got.drop(f32), want.drop(f32), check_exact=False, rel_tol=1e-9)
    assert_frame_equal(got.select(f32), want.select(f32), check_exact=False, rel_tol=1e-4)


DF = frame()
PIECES = pl.concat([frame(700, 1), frame(1, 2), frame(0, 4), frame(3000, 5)], rechunk=False)


@pytest.mark.parametrize("df", [DF, PIECES], ids=["one-chunk", "chunks"])
@pytest.mark.parametrize(
    "pred",
    [
        pl.col("i32") > 10,
        pl.col("i8") <= -3,
        pl.col("i64") != 0,
        pl.col("u16") >= 30000,
        pl.col("f32") < 0.25,
        pl.col("f64") >= 0.0,
        pl.col("f64") == float("nan"),
        pl.col("fn") > 0.5,
        pl.col("in") == 7,
        pl.col("b"),
        (pl.col("i32") > 0) & (pl.col("fn") < 0) | pl.col("b"),
        (pl.col("in") < 10) | (pl.col("fn") > 1),
        pl.col("d").is_between(date(1994, 1, 1), date(1995, 1, 1), closed="left"),
        pl.col("f64").is_between(-0.5, 0.5),
        pl.col("in").is_between(10, 20, closed="none"),
        pl.col("ts") > datetime(2001, 1, 1),
        pl.col("i32") < pl.col("i32").max() - 5,  # an aggregation: falls back below
    ][:-1],
)
def test_filters_keep_the_rows_polars_keeps(engine: ladle.Engine, df: pl.DataFrame, pred: pl.Expr) -> None:
    check(engine, df.lazy().filter(pred))


def test_projections_of_arithmetic(engine: ladle.Engine) -> None:
    lf = DF.lazy().filter(pl.col("b")).with_columns(
        x=pl.col("i64") * 3 + pl.col("i64"),  # wraps, as Polars
        y=pl.col("f64") - pl.col("fn") * 2.5,
        z=1.5 - pl.col("f64"),
        w=pl.col("in") - 1,
        c=pl.col("f64") > pl.col("fn"),
    )
    check(engine, lf)
    check(engine, DF.lazy().select("s", "d", (pl.col("i32") * pl.col("i32")).alias("sq")))


def test_integer_remainder_and_floor_division(engine: ladle.Engine) -> None:
    """% and // of integers as Polars: floored (the remainder takes the
    divisor's sign), null by 0, the type's minimum by -1 wrapping; in
    projections, filters and the fold split of the workflow."""
    i8 = pl.col("i8")
    div = pl.when(i8 % 5 == 0).then(0).when(i8 % 7 == 0).then(-1).otherwise(i8 // 9)  # Int8
    lf = DF.lazy().with_columns(dv=div).with_columns(
        r=pl.col("i32") % 7,
        q=pl.col("i32") // 7,
        rn=pl.col("i64") % -3,
        r8=i8 % pl.col("dv"),
        q8=i8 // pl.col("dv"),
        mn=pl.lit(-128, dtype=pl.Int8) // pl.col("dv"),
        ru=pl.col("u16") % (pl.col("u16") % 10),
        rin=pl.col("in") % 4,
    )
    check(engine, lf)
    check(engine, DF.lazy().filter(pl.col("i64") % 3 == 1).select("i64", "s"))


def test_null_tests_fills_casts_and_division(engine: ladle.Engine) -> None:
    lf = DF.lazy().with_columns(
        n=pl.col("fn").is_null(),
        nn=pl.col("in").is_not_null() & ~pl.col("b"),
        neg=-pl.col("i32"),
        a=(pl.col("i8") - 50).abs(),
        af=pl.col("f64").abs(),
        f=pl.col("in").fill_null(0),
        ff=pl.col("fn").fill_null(pl.col("f64")),
        c=pl.col("i32").cast(pl.Float64) / 2,
        c2=pl.col("u16").cast(pl.Int64) * pl.col("i64"),
        d=pl.col("f64") / pl.col("fn"),
        nan=(pl.col("f64") / 0.0).is_nan(),
        m=pl.col("i64") * pl.col("f64"),  # Polars casts the integer to Float64
    )
    check(engine, lf)


def test_the_seeds_null_filter(engine: ladle.Engine) -> None:
    # a filter on is_not_null() | (x == 1), then fill_null and is_null (the seed's ETL)
    lf = (
        DF.lazy()
        .filter(pl.col("fn").is_not_null() | (pl.col("in") == 1))
        .with_columns(pl.col("in").fill_null(-1).alias("in_filled"), pl.col("fn").is_null().alias("was_null"))
    )
    check(engine, lf)


@pytest.mark.parametrize("df", [DF, PIECES, DF.clear()], ids=["one-chunk", "chunks", "empty"])
def test_whole_column_aggregations(engine: ladle.Engine, df: pl.DataFrame) -> None:
    lf = df.lazy().select(
        pl.col("i64").sum().alias("i64_sum"),
        pl.col("i8").sum().alias("i8_sum"),
        pl.col("b").sum().alias("b_sum"),
        pl.col("fn").sum().alias("fn_sum"),
        pl.col("f32").sum().alias("f32_sum"),
        pl.col("f64").min().alias("f64_min"),
        pl.col("f64").max().alias("f64_max"),
        pl.col("fn").max().alias("fn_max"),
        pl.col("in").min().alias("in_min"),
        pl.col("d").max().alias("d_max"),
        pl.col("ts").min().alias("ts_min"),
        pl.col("in").count().alias("in_count"),
        pl.col("s").len().alias("s_len"),
        pl.col("fn").mean().alias("fn_mean"),
        pl.col("f64").mean().alias("f64_mean"),
        pl.col("f32").mean().alias("f32_mean"),
        pl.col("i32").mean().alias("i32_mean"),
        pl.col("b").mean().alias("b_mean"),
        pl.len(),
    )
    check(engine, lf)


def test_tpch_q6_shape(engine: ladle.Engine) -> None:
    lf = (
        DF.lazy()
        .filter(
            pl.col("d").is_between(date(1994, 1, 1), date(1997, 1, 1), closed="left")
            & pl.col("f64").is_between(0.05, 0.9)
            & (pl.col("i32") < 240)
        )
        .select((pl.col("f64") * pl.col("fn")).sum().alias("revenue"), pl.len())
    )
    check(engine, lf)


@pytest.mark.parametrize("df", [DF, PIECES], ids=["one-chunk", "chunks"])
def test_aggregations_right_over_a_filter(engine: ladle.Engine, df: pl.DataFrame) -> None:
    # the filter folds into each aggregation (nothing compacted), through column picks
    lf = (
        df.lazy()
        .filter((pl.col("i32") > -200) & pl.col("fn").is_not_null())
        .select("f64", "in", "i8", "d")
        .rename({"f64": "x"})
        .select(
            pl.col("x").sum(),
            pl.col("i8").mean().alias("i8_mean"),
            pl.col("in").count().alias("in_count"),
            pl.col("x").min().alias("x_min"),
            pl.col("i8").max(),
            pl.col("d").min(),
            pl.len(),
            (pl.col("x") * pl.col("in")).sum().alias("xin"),
        )
    )
    check(engine, lf)


def test_a_filter_that_keeps_nothing(engine: ladle.Engine) -> None:
    check(engine, DF.lazy().filter(pl.col("i32") > 5000).select(pl.col("f64").sum(), pl.col("i32").max(), pl.len()))
    check(engine, DF.lazy().filter(pl.col("i32") > 5000))


def test_scanned_columns_are_kept_for_the_next_query(engine: ladle.Engine) -> None:
    lf = DF.lazy().filter(pl.col("i32") > 0).select(pl.col("f64").sum())
    check(engine, lf)
    before = engine.stats()
    check(engine, lf)
    after = engine.stats()
    assert after["device_cache_hits"] >= before["device_cache_hits"] + 2  # i32 and f64
    assert after["device_cache_misses"] == before["device_cache_misses"]
    assert after["device_cache_bytes"] > 0


@pytest.mark.parametrize(
    "lf, where",
    [
        (DF.lazy().filter(pl.col("s").str.contains("k[a-z]+i")), "FILTER .*str.contains"),
        (DF.lazy().select(pl.col("f32").std()), "'std'"),
        (DF.lazy().group_by("i8").agg(pl.col("f64").median()), "GROUP_BY .*'median'"),
        (DF.lazy().group_by("i8").agg(pl.col("f64").sum().round(2)), "expression of aggregations with more"),
        (pl.concat([DF.lazy(), DF.lazy()]), "UNION"),
        (DF.lazy().sort("s"), "a sort by a String key"),
        (DF.lazy().with_columns(pl.col("f64").sum().alias("t")), "spread over the rows"),
        (DF.lazy().select(pl.col("f64").round(2)), "round"),
        (DF.lazy().select(pl.col("f64").cast(pl.Int32, strict=False)), "cast"),  # one that can fail
    ],
)
def test_what_the_path_lacks_runs_on_the_cpu_with_a_named_reason(
    engine: ladle.Engine, lf: pl.LazyFrame, where: str
) -> None:
    with pytest.warns(ladle.FallbackWarning, match=where) as w:
        got = engine.collect(lf)
    assert "ran on ladle's CPU backend" in str(w[0].message)
    assert engine.last_run == "ladle-cpu"
    assert_frame_equal(got, lf.collect(), check_exact=False, rel_tol=1e-9, check_row_order=False)
    strict = ladle.Engine(device=engine.device, raise_on_fail=True)
    with pytest.raises(ladle.UnsupportedError, match=where):
        strict.collect(lf)


def check_groups(engine: ladle.Engine, lf: pl.LazyFrame) -> pl.DataFrame:
    """check() for a group_by, whose groups Polars gives in any order."""
    got, want = run(engine, lf), lf.collect()
    f32 = [c for c, t in want.schema.items() if t == pl.Float32]
    kw = {"check_exact": False, "check_row_order": False}
    assert_frame_equal(got.drop(f32), want.drop(f32), rel_tol=1e-9, **kw)
    # Polars adds Float32 in Float32, the GPU in double: near zero only an absolute
    # tolerance holds
    assert_frame_equal(got.select(f32), want.select(f32), rel_tol=1e-4, abs_tol=1e-4, **kw)
    return got


AGGS = [
    pl.col("f64").sum().alias("f64_sum"),
    pl.col("fn").sum().alias("fn_sum"),
    pl.col("f32").sum().alias("f32_sum"),
    pl.col("i64").sum().alias("i64_sum"),
    pl.col("i32").sum().alias("i32_sum"),
    pl.col("i8").sum().alias("i8_sum"),
    pl.col("b").sum().alias("b_sum"),
    pl.col("f64").min().alias("f64_min"),
    pl.col("fn").max().alias("fn_max"),
    pl.col("u16").max().alias("u16_max"),
    pl.col("d").min().alias("d_min"),
    pl.col("ts").max().alias("ts_max"),
    pl.col("fn").mean().alias("fn_mean"),
    pl.col("i64").mean().alias("i64_mean"),
    pl.col("f32").mean().alias("f32_mean"),
    pl.col("b").mean().alias("b_mean"),
    pl.col("in").count().alias("in_count"),
    pl.len(),
    (pl.col("f64") * (1 - pl.col("fn")) * (1 + pl.col("f64"))).sum().alias("charge"),
    pl.col("i8").min().alias("i8_min"),
]


@pytest.mark.parametrize("df", [DF, PIECES, DF.clear()], ids=["one-chunk", "chunks", "empty"])
@pytest.mark.parametrize(
    "keys",
    [["i8"], ["s"], ["in"], ["s", "in"], ["b", "d"], ["f64"], ["s", "i8", "b"]],
    ids=lambda k: "+".join(k),
)
def test_group_by_aggregations(engine: ladle.Engine, df: pl.DataFrame, keys: list[str]) -> None:
    check_groups(engine, df.lazy().group_by(keys).agg(AGGS))


def test_group_by_keys_of_expressions_and_a_filter_under(engine: ladle.Engine) -> None:
    lf = (
        DF.lazy()
        .filter(pl.col("i32") > -500)
        .group_by((pl.col("i32") * 2 + 1).alias("k"), pl.col("fn").is_null().alias("missing"))
        .agg(pl.col("f64").sum(), pl.col("fn").fill_null(0.5).mean().alias("m"))
    )
    check_groups(engine, lf)


def test_group_by_float_keys_one_nan_and_one_zero(engine: ladle.Engine) -> None:
    df = pl.DataFrame({"k": [0.0, -0.0, float("nan"), None, float("nan"), 1.5, None], "v": [1, 2, 3, 4, 5, 6, 7]})
    check_groups(engine, df.lazy().group_by("k").agg(pl.col("v").sum(), pl.len()))


def test_group_by_maintain_order_gives_groups_by_first_row(engine: ladle.Engine) -> None:
    lf = DF.lazy().group_by("s", "i8", maintain_order=True).agg(pl.col("f64").sum(), pl.len())
    got, want = run(engine, lf), lf.collect()
    assert_frame_equal(got, want, check_exact=False, rel_tol=1e-9)


def test_group_by_float_sums_are_the_same_every_run(engine: ladle.Engine) -> None:
    rng = np.random.default_rng(9)
    n = 300_000
    df = pl.DataFrame({"k": rng.integers(0, 3, n), "x": rng.normal(size=n) * 1e6})
    lf = df.lazy().group_by("k").agg(pl.col("x").sum(), pl.col("x").mean().alias("m"))
    first = check_groups(engine, lf).sort("k")
    for _ in range(3):
        assert_frame_equal(run(engine, lf).sort("k"), first, check_exact=True)


def test_means_of_integers_do_not_wrap(engine: ladle.Engine) -> None:
    df = pl.DataFrame({"k": [1, 1, 2, 2, 2], "a": pl.Series([2**30, 2**30, 2**30, 2**30, -(2**31)], dtype=pl.Int32)})
    check(engine, df.lazy().select(pl.col("a").mean()))
    check_groups(engine, df.lazy().group_by("k").agg(pl.col("a").mean()))


def test_a_sort_over_a_group_by_runs_on_the_host_after_the_device(engine: ladle.Engine) -> None:
    # TPC-H q1's shape: the device filters and groups; the four groups are sorted
    # (by a String key, which the device does not sort yet) on the host, with no
    # fallback
    lf = (
        DF.lazy()
        .filter(pl.col("d") <= date(2000, 1, 1))
        .group_by("s", "b")
        .agg(
            pl.col("f64").sum().alias("sum_qty"),
            (pl.col("f64") * (1 - pl.col("f32").cast(pl.Float64))).sum().alias("sum_disc"),
            pl.col("i32").mean().alias("avg_i32"),
            pl.len().alias("count_order"),
        )
        .sort("s", "b")
    )
    check(engine, lf)
    text = engine.explain(lf)
    assert "[host: ladle's CPU kernels]" in text and "a sort by a String key" in text
    physical = text.split("physical plan")[1]
    group_by = [line for line in physical.splitlines() if "GROUP_BY" in line]
    assert len(group_by) == 1 and "[host" not in group_by[0]


@pytest.mark.parametrize("df", [DF, PIECES, DF.clear()], ids=["one-chunk", "chunks", "empty"])
@pytest.mark.parametrize(
    "by, descending, nulls_last",
    [
        (["i32"], False, False),
        (["fn"], True, True),
        (["b", "f64"], [True, False], [False, True]),
        (["in", "d", "i8"], [False, True, False], True),
        ([pl.col("f64") * pl.col("i32")], False, False),
    ],
    ids=["i32", "fn-desc-nulls-last", "b-f64", "in-d-i8", "expression"],
)
def test_sorts_on_the_device(engine: ladle.Engine, df: pl.DataFrame, by: list, descending, nulls_last) -> None:
    # maintain_order: rows with equal keys keep their order, in Polars and here
    lf = df.lazy().sort(by, descending=descending, nulls_last=nulls_last, maintain_order=True)
    check(engine, lf)
    check(engine, lf.head(17))
    check(engine, df.lazy().filter(pl.col("i32") > 0).sort(by, descending=descending, maintain_order=True).head(5))


def test_top_k_of_a_group_by(engine: ladle.Engine) -> None:
    lf = (
        DF.lazy()
        # groups in a defined order (f64 has NaN: many totals tie, kept in that order)
        .group_by("i8", maintain_order=True)
        .agg(pl.col("f64").sum().alias("total"), pl.len())
        .sort("total", descending=True, maintain_order=True)
        .head(10)
    )
    check(engine, lf)


# a join's right side: keys of DF's rows (with their nulls, NaN and duplicates) and
# columns of its own, some of DF's names (suffixed in the output)
RIGHT = DF.head(400).select(
    "in", "s", "i8", "f64", "d", pl.col("i64").alias("r_i64"), pl.col("b").alias("r_b"), pl.col("i32")
)
DIM = pl.DataFrame(
    {"in": pl.Series(list(range(0, 50, 2)) + [None], dtype=pl.Int64), "label": [f"l{i % 7}" for i in range(26)]}
)


def check_unordered(engine: ladle.Engine, lf: pl.LazyFrame) -> pl.DataFrame:
    got, want = run(engine, lf), lf.collect()
    assert_frame_equal(got, want, check_row_order=False)
    return got


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "semi", "anti"])
@pytest.mark.parametrize("on", [["in"], ["s"], ["i8", "s"], ["f64"], ["d", "in"]], ids=lambda k: "+".join(k))
@pytest.mark.parametrize("nulls_equal", [False, True], ids=["nulls-differ", "nulls-equal"])
def test_joins_on_the_device(engine: ladle.Engine, how: str, on: list[str], nulls_equal: bool) -> None:
    check_unordered(engine, DF.lazy().join(RIGHT.lazy(), on=on, how=how, nulls_equal=nulls_equal))  # type: ignore[arg-type]


@pytest.mark.parametrize("how", ["inner", "left", "full", "semi", "anti"])
def test_joins_of_partitioned_and_empty_sides(engine: ladle.Engine, how: str) -> None:
    for left, right in ((PIECES, RIGHT), (DF.clear(), RIGHT), (DF, RIGHT.clear()), (DF.clear(), RIGHT.clear())):
        check_unordered(engine, left.lazy().join(right.lazy(), on="in", how=how))  # type: ignore[arg-type]


@pytest.mark.parametrize("order", ["left", "left_right", "right", "right_left"])
@pytest.mark.parametrize("how", ["inner", "left", "right", "full"])
def test_join_maintain_order_is_kept_on_the_device(engine: ladle.Engine, order: str, how: str) -> None:
    left, right = DF.with_row_index("li"), RIGHT.with_row_index("ri")
    lf = left.lazy().join(right.lazy(), on="in", how=how, maintain_order=order)  # type: ignore[arg-type]
    got, want = run(engine, lf), lf.collect()
    if order in ("left_right", "right_left"):
        assert_frame_equal(got, want)
        return
    assert_frame_equal(got, want, check_row_order=False)
    # "left" and "right": rows by that side's row, rows without one last
    side = got["li" if order == "left" else "ri"]
    present = side.drop_nulls()
    assert present.is_sorted() and side.tail(side.null_count()).null_count() == side.null_count()


def test_full_join_coalesced_keys(engine: ladle.Engine) -> None:
    for on in (["in"], ["in", "d"]):
        check_unordered(engine, DF.lazy().join(RIGHT.lazy(), on=on, how="full", coalesce=True))
    # a coalesced String key is not built on the device yet: named, and run on the CPU
    lf = DF.lazy().join(RIGHT.lazy(), on="s", how="full", coalesce=True)
    with pytest.warns(ladle.FallbackWarning, match="coalesced key 's'"):
        got = engine.collect(lf)
    assert_frame_equal(got, lf.collect(), check_row_order=False)


def test_cross_join_on_the_device(engine: ladle.Engine) -> None:
    check_unordered(engine, DF.head(60).lazy().join(RIGHT.head(25).lazy(), how="cross"))


def test_a_star_join_then_a_group_by(engine: ladle.Engine) -> None:
    # TPC-H's shape: a fact table filtered, joined to dimensions, grouped
    lf = (
        DF.lazy()
        .filter(pl.col("d") >= date(1995, 1, 1))
        .join(DIM.lazy(), on="in")
        .join(RIGHT.lazy().select("s", "i8", pl.col("r_i64")).unique(subset=["s", "i8"], keep="first", maintain_order=True), on=["s", "i8"], how="left")
        .group_by("label")
        .agg(pl.col("f64").sum(), pl.col("r_i64").count().alias("found"), pl.len())
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ladle.FallbackWarning)  # the coalesced String key runs on the host
        got = engine.collect(lf)
    want = lf.collect()
    assert_frame_equal(got.sort("label"), want.sort("label"), check_exact=False, rel_tol=1e-9)
    lf2 = DF.lazy().join(DIM.lazy(), on="in").group_by("label").agg(pl.col("f64").sum(), pl.len())
    got2 = run(engine, lf2)
    assert_frame_equal(got2.sort("label"), lf2.collect().sort("label"), check_exact=False, rel_tol=1e-9)


@pytest.mark.parametrize(
    "pred",
    [
        pl.col("s") == "kiwi",
        pl.col("s") != "",
        pl.col("s") < "b",
        pl.lit("kiwi") <= pl.col("s"),
        pl.col("s") >= "apple",
        pl.lit("b") > pl.col("s"),
        pl.col("s").str.starts_with("a"),
        pl.col("s").str.ends_with("ï"),
        pl.col("s").str.contains("much", literal=True),
        pl.col("s").str.contains("ng"),
        pl.col("s").str.contains(""),
        pl.col("s").str.contains("a.*n"),
        pl.col("s").str.contains("much.*str.*val"),
        pl.col("s").is_in(["kiwi", "", "nope"]),
        pl.col("in").is_in([3, 7, 49]),
        pl.col("d").is_in([date(1995, 1, 1), date(2000, 3, 2)]),
        pl.col("s").is_in(["apple", None]) | (pl.col("i8") > 90),
        (pl.col("s") == "kiwi") & pl.col("i32").is_in([1, 2, 3, 4, 5, 6, 7, 8]).not_(),
    ],
    ids=lambda p: str(p)[:60],
)
def test_string_predicates_and_is_in_on_the_device(engine: ladle.Engine, pred: pl.Expr) -> None:
    # str_match's columns, read by a row program: in filters, selects and aggregations
    strings_with_nulls = DF.with_columns(pl.when(pl.col("b")).then(pl.col("s")).alias("s"))
    for df in (DF, strings_with_nulls, PIECES):
        check(engine, df.lazy().filter(pred))
        check(engine, df.lazy().select(pred.alias("p"), "s"))
        check(engine, df.lazy().filter(pred).select(pl.col("f64").sum(), pl.len()))
        check_groups(engine, df.lazy().filter(pred).group_by("i8").agg(pl.col("i64").sum()))


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_string_columns_compared_with_each_other(engine: ladle.Engine, op: str) -> None:
    rng = np.random.default_rng(5)
    words = ["", "a", "ab", "b", "ünï", "kiwi"]
    df = pl.DataFrame(
        {"x": rng.choice(words, 3000), "y": rng.choice(words, 3000), "v": rng.integers(0, 9, 3000)}
    ).with_columns(pl.when(pl.col("v") == 0).then(None).otherwise(pl.col("y")).alias("y"))
    pred = eval(f"pl.col('x') {op} pl.col('y')")
    check(engine, df.lazy().filter(pred))
    check(engine, df.lazy().select(pred.alias("p"), "v"))


def test_date_fields_in_row_programs(engine: ladle.Engine) -> None:
    d = pl.col("d")
    lf = DF.lazy().select(
        d.dt.year().alias("y"),
        d.dt.month().alias("m"),
        d.dt.day().alias("day"),
        d.dt.weekday().alias("wd"),
        d.dt.ordinal_day().alias("od"),
        (d.dt.year() * 100 + d.dt.month().cast(pl.Int32)).alias("ym"),
    )
    check(engine, lf)
    extremes = pl.DataFrame({"d": pl.Series([-(2**31), -96465293, -96465292, -1, 0, 59, 95026236, 95026237, 2**31 - 1, None], dtype=pl.Int32).cast(pl.Date)})
    check(engine, extremes.lazy().select(d.dt.year(), d.dt.month().alias("m"), d.dt.weekday().alias("w"), d.dt.ordinal_day().alias("o")))
    check_groups(engine, DF.lazy().group_by(d.dt.year().alias("y")).agg(pl.col("f64").sum()))


def test_expressions_of_aggregations(engine: ladle.Engine) -> None:
    # TPC-H q8, q14, q17, q20's shapes: arithmetic over a group's aggregations, and
    # over a whole column's
    lf = DF.lazy().group_by("i8").agg(
        (pl.col("f64").sum() / pl.len()).alias("per_row"),
        (0.2 * pl.col("fn").mean()).alias("fifth"),
        (pl.when(pl.col("s") == "kiwi").then(pl.col("f64")).otherwise(0.0).sum() / pl.col("f64").sum()).alias("share"),
        (pl.col("i32").max() - pl.col("i32").min()).alias("range"),
        (pl.col("i64").sum() + 1).alias("plus"),
    )
    check_groups(engine, lf)
    check(engine, DF.lazy().select((100.0 * pl.col("f64").sum() / pl.col("fn").sum()).alias("ratio"), (pl.col("i32").max() - pl.col("i32").min()).alias("r")))
    check(engine, DF.lazy().join(DIM.lazy(), on="in").select((pl.col("f64").sum() * 2.5).alias("x")))


def test_n_unique_per_group(engine: ladle.Engine) -> None:
    # TPC-H q16 and q21's shapes; a null is one value, as in Polars
    for df in (DF, PIECES, DF.clear()):
        lf = df.lazy().group_by("i8").agg(
            pl.col("in").n_unique().alias("a"),
            pl.col("s").n_unique().alias("b"),
            pl.col("f64").n_unique().alias("c"),
            (pl.col("i32") * 2).n_unique().alias("d"),
            pl.len(),
        )
        check_groups(engine, lf)
    check_groups(engine, DF.lazy().filter(pl.col("b")).group_by("s", "d").agg(pl.col("i8").n_unique()))


def test_when_then_otherwise_in_row_programs(engine: ladle.Engine) -> None:
    big = pl.col("f64") > 0.5
    lf = DF.lazy().select(
        pl.when(big).then(pl.col("f64")).otherwise(pl.col("fn")).alias("a"),
        pl.when(pl.col("b")).then(1).when(pl.col("i8") > 0).then(2).otherwise(None).alias("c"),
        pl.when(pl.col("fn").is_null()).then(-1.0).otherwise(pl.col("fn") * 2).alias("d"),
        pl.when(pl.col("s").is_in(["kiwi", "apple"])).then(pl.col("i32")).alias("e"),
    )
    check(engine, lf)
    check_groups(engine, DF.lazy().group_by("s").agg(pl.when(big).then(1).otherwise(0).sum().alias("n_big")))


def test_pieces_in_order_match_within_a_line(engine: ladle.Engine) -> None:
    # TPC-H q13's "special.*requests": '.' does not cross a newline
    df = pl.DataFrame({"s": ["special requests", "special\nrequests", "requests special", "x special\nspecial y requests", None, "specialrequests"]})
    check(engine, df.lazy().select(pl.col("s").str.contains("special.*requests").alias("m"), "s"))
    check(engine, df.lazy().filter(pl.col("s").str.contains("special.*requests").not_()))


def test_regex_contains_is_refused_by_name(engine: ladle.Engine) -> None:
    lf = DF.lazy().filter(pl.col("s").str.contains("^a[pk]"))
    with pytest.warns(ladle.FallbackWarning, match="str.contains"):
        got = engine.collect(lf)
    assert_frame_equal(got, lf.collect())


def test_explain_says_where_the_query_runs(engine: ladle.Engine) -> None:
    assert "column kernels, one partition per table" in engine.explain(DF.lazy().filter(pl.col("b")))
    text = engine.explain(pl.concat([DF.lazy(), DF.lazy()]))
    assert "not on the column kernels" in text and "UNION" in text


def test_runtime_errors_are_not_retried_on_the_cpu(engine: ladle.Engine) -> None:
    # a strict cast failing is the user's error wherever it runs
    lf = pl.DataFrame({"s": ["1", "x"]}).lazy().select(pl.col("s").cast(pl.Int32))
    with pytest.raises(ladle.LadleError, match="'x'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ladle.FallbackWarning)
            engine.collect(lf)


@pytest.mark.skipif(DEVICE == "cuda", reason="the GPU is there")
def test_a_gpu_engine_without_a_gpu_says_why() -> None:
    with pytest.raises(ladle.LadleError, match=r"cuda(:0)?'?:? .*(no usable CUDA device|could not be loaded)"):
        ladle.Engine(device="cuda")
    with pytest.raises(ladle.LadleError, match="cuda"):
        ladle.Engine(device="cuda:3")


def test_device_arguments_are_checked() -> None:
    for bad in ("gpu", "cuda:x", -1, 1.5, True):
        with pytest.raises(ValueError, match="device"):
            ladle.Engine(device=bad)  # type: ignore[arg-type]


def test_devices_lists_what_a_gpu_engine_can_use() -> None:
    found = ladle.devices()
    if DEVICE == "cuda":
        assert found, "make test-gpu runs where a GPU is"
    if not found:
        with pytest.raises(ladle.LadleError, match="cuda"):
            ladle.Engine(device="cuda")
        return
    for d in found:
        assert d.name and d.memory_bytes > 0 and d.compute_capability >= (7, 0)
        e = ladle.Engine(device=f"cuda:{d.id}")
        assert e.device == f"cuda:{d.id}"
    with pytest.raises(ladle.LadleError, match=f"cuda:{len(found)}"):
        ladle.Engine(device=f"cuda:{len(found)}")


def run_python(code: str, env: dict[str, str] | None = None) -> str:
    import subprocess
    import sys

    full = dict(os.environ)
    full.pop("CUDA_VISIBLE_DEVICES", None)
    full.update(env or {})
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_use_gpu_restricts_the_process_before_the_driver_starts() -> None:
    code = "import os, ladle; ladle.use_gpu({i}); print(os.environ['CUDA_VISIBLE_DEVICES'])"
    assert run_python(code.format(i=0)) == "0"
    assert run_python(code.format(i=1), {"CUDA_VISIBLE_DEVICES": "4,5"}) == "5"
    out = run_python(
        "import ladle\n"
        "for bad in (2, -1, '0', True):\n"
        "    try:\n"
        "        ladle.use_gpu(bad)\n"
        "    except (ladle.LadleError, ValueError) as e:\n"
        "        print(type(bad).__name__, 'refused:', e)\n",
        {"CUDA_VISIBLE_DEVICES": "4,5"},
    )
    assert out.count("refused") == 4 and "leaves 2 GPUs visible" in out
    # once the driver is up, the variable no longer applies: a clear error
    out = run_python(
        "import ladle\nladle.devices()\ntry:\n    ladle.use_gpu(0)\nexcept ladle.LadleError as e:\n    print(e)\n"
    )
    assert "already initialised" in out
    if DEVICE == "cuda":
        n = run_python("import ladle; ladle.use_gpu(0); print(len(ladle.devices()))")
        assert n == "1"


# ---------------------------------------------------------------- results where they live


def test_a_result_lives_on_its_engine_device(engine: ladle.Engine) -> None:
    lf = DF.lazy().filter(pl.col("i32") > 0).select("i64", "f64", "s", "fn", (pl.col("i32") * 2).alias("j"))
    res = engine.execute(lf)
    assert engine.last_run == "ladle"
    assert res.device == (engine.device if DEVICE == "cuda" else "cpu")
    assert res.num_rows == lf.collect().height and res.columns == ["i64", "f64", "s", "fn", "j"]
    want = lf.collect()
    assert_frame_equal(res.to_polars(), want)
    assert_frame_equal(res.to_polars(), want)  # the host copy is made once and kept
    assert_frame_equal(pl.DataFrame(res.to_arrow()), want)


def test_dlpack_of_a_result_is_on_its_device_and_outlives_it(engine: ladle.Engine) -> None:
    import torch

    lf = DF.lazy().filter(pl.col("i32") > 0).select((pl.col("i64") - 5).alias("k"), pl.col("f64") * 2, "b")
    want = lf.collect()
    res = engine.execute(lf)
    assert engine.last_run == "ladle"
    k, f, b = (torch.from_dlpack(res.column(c)) for c in ("k", "f64", "b"))
    kind = "cuda" if DEVICE == "cuda" else "cpu"
    assert k.device.type == kind and f.device.type == kind and b.device.type == kind
    assert res.column("k").__dlpack_device__() == ((2, int(engine.device[5:])) if kind == "cuda" else (1, 0))
    assert k.dtype == torch.int64 and f.dtype == torch.float64 and b.dtype == torch.bool
    del res, engine
    import gc

    gc.collect()
    # the tensors hold the buffers: the result and the engine are gone
    assert k.cpu().tolist() == want["k"].to_list()
    np.testing.assert_array_equal(f.cpu().numpy(), want["f64"].to_numpy())
    assert b.cpu().tolist() == want["b"].to_list()


def test_dlpack_of_a_column_the_engine_keeps_is_a_copy(engine: ladle.Engine) -> None:
    import torch

    lf = DF.lazy().select("i64", "f64")
    t = torch.from_dlpack(engine.execute(lf).column("i64"))  # the scanned column itself
    t.zero_()  # a consumer writing into its tensor
    assert_frame_equal(run(engine, lf), lf.collect())  # the next query's scan is untouched
    u = torch.from_dlpack(engine.execute(lf).column("f64"))
    assert u.data_ptr() != t.data_ptr()


def test_dlpack_of_nulls_or_strings_names_the_column(engine: ladle.Engine) -> None:
    res = engine.execute(DF.lazy().select("fn", "s"))
    with pytest.raises(TypeError, match="'fn' has .* nulls"):
        res.column("fn").__dlpack__()
    with pytest.raises(TypeError, match="'s' is str"):
        res.column("s").__dlpack__()
    with pytest.raises(TypeError, match="stream"):
        res.column("fn").__dlpack__(stream="x")


def test_a_result_chains_into_the_next_query_where_it_lives(engine: ladle.Engine) -> None:
    first = DF.lazy().filter(pl.col("i32") > -500).with_columns((pl.col("f64") * 3).alias("g"))
    res = engine.execute(first)
    before = engine.stats()

    def ops(lf: pl.LazyFrame) -> pl.LazyFrame:
        return lf.filter(pl.col("i8") > 0).group_by("in").agg(pl.col("g").sum(), pl.len(), pl.col("s").n_unique()).sort("in")

    q = ops(res.lazy())
    check(engine, q)
    assert_frame_equal(q.collect(), ops(first).collect())  # Polars reads it through to_polars
    after = engine.stats()
    if DEVICE == "cuda":
        # the scan read the result where it was on the GPU: nothing uploaded, nothing
        # from the cache of scanned columns
        assert after["device_cache_misses"] == before["device_cache_misses"]
        assert after["device_cache_hits"] == before["device_cache_hits"]
    # a projection and a filter pushed into the scan
    lf = res.lazy().select("s", "g").filter(pl.col("g") > 1)
    assert_frame_equal(run(engine, lf), first.select("s", "g").filter(pl.col("g") > 1).collect())
    # a CPU engine reads the result's host copy
    cpu = ladle.Engine(raise_on_fail=True)
    assert_frame_equal(cpu.collect(q), q.collect(), check_exact=False, rel_tol=1e-9)


def test_a_chained_result_the_path_cannot_run_falls_back_with_it(engine: ladle.Engine) -> None:
    res = engine.execute(DF.lazy().filter(pl.col("i32") > 0))
    lf = res.lazy().group_by("i8").agg(pl.col("f64").median()).sort("i8")
    with pytest.warns(ladle.FallbackWarning, match="median"):
        got = engine.collect(lf)
    assert engine.last_run == "ladle-cpu"
    want = DF.lazy().filter(pl.col("i32") > 0).group_by("i8").agg(pl.col("f64").median()).sort("i8").collect()
    assert_frame_equal(got, want)


# ------------------------------------------------ the Arrow C Device Data Interface


def _device_array_columns(res: ladle.Result) -> tuple[int, int, list[Any]]:
    """Reads res.__arrow_c_device_array__() by hand (ctypes): its device, and each
    field's buffers copied to the host (through torch for CUDA memory), rebuilt as
    pyarrow arrays."""
    import ctypes as C

    import pyarrow as pa

    class ArrowArray(C.Structure):
        pass

    ArrowArray._fields_ = [
        ("length", C.c_int64), ("null_count", C.c_int64), ("offset", C.c_int64), ("n_buffers", C.c_int64),
        ("n_children", C.c_int64), ("buffers", C.POINTER(C.c_void_p)),
        ("children", C.POINTER(C.POINTER(ArrowArray))), ("dictionary", C.c_void_p),
        ("release", C.c_void_p), ("private_data", C.c_void_p),
    ]

    class DeviceArray(C.Structure):
        _fields_ = [("array", ArrowArray), ("device_id", C.c_int64), ("device_type", C.c_int32),
                    ("sync_event", C.c_void_p), ("reserved", C.c_int64 * 3)]

    class DLTensor(C.Structure):
        _fields_ = [("data", C.c_void_p), ("device_type", C.c_int32), ("device_id", C.c_int32),
                    ("ndim", C.c_int32), ("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16),
                    ("shape", C.POINTER(C.c_int64)), ("strides", C.c_void_p), ("byte_offset", C.c_uint64)]

    class DLManaged(C.Structure):
        _fields_ = [("t", DLTensor), ("ctx", C.c_void_p), ("deleter", C.c_void_p)]

    get = C.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = C.c_void_p, [C.py_object, C.c_char_p]
    new = C.pythonapi.PyCapsule_New
    new.restype, new.argtypes = C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p]

    schema_cap, array_cap = res.__arrow_c_device_array__()
    schema = pa.Schema._import_from_c_capsule(schema_cap)
    dev = DeviceArray.from_address(get(array_cap, b"arrow_device_array"))
    kind, ordinal = int(dev.device_type), int(dev.device_id)
    assert dev.sync_event is None

    def fetch(ptr: int | None, n: int) -> bytes:
        if n == 0 or ptr is None:
            return b""
        if kind == 1:
            return C.string_at(ptr, n)
        import torch

        shape = (C.c_int64 * 1)(n)
        m = DLManaged(DLTensor(ptr, kind, ordinal, 1, 1, 8, 1, shape, None, 0), None, None)
        t = torch.utils.dlpack.from_dlpack(new(C.addressof(m), b"dltensor", None))
        out = t.cpu().numpy().tobytes()
        del t
        return out

    top = dev.array
    assert top.length == res.num_rows and top.n_children == len(res.columns)
    cols = []
    for i in range(top.n_children):
        c = top.children[i].contents
        typ = schema.field(i).type
        n, b = c.length, [c.buffers[k] for k in range(c.n_buffers)]
        valid = pa.py_buffer(fetch(b[0], (n + 7) // 8)) if b[0] else None
        if pa.types.is_large_string(typ):
            offs = fetch(b[1], 8 * (n + 1))
            end = int(np.frombuffer(offs, dtype=np.int64)[-1]) if n >= 0 else 0
            bufs = [valid, pa.py_buffer(offs), pa.py_buffer(fetch(b[2], end))]
        elif pa.types.is_boolean(typ):
            bufs = [valid, pa.py_buffer(fetch(b[1], (n + 7) // 8))]
        else:
            bufs = [valid, pa.py_buffer(fetch(b[1], n * typ.bit_width // 8))]
        cols.append(pa.Array.from_buffers(typ, n, bufs, null_count=c.null_count))
    return kind, ordinal, cols


@pytest.mark.parametrize("n", [0, 1, 5000])
def test_the_arrow_device_array_of_a_result(engine: ladle.Engine, n: int) -> None:
    lf = (
        DF.head(n).lazy()
        .filter(pl.col("i32") > -900)
        .select("i8", "i64", "u16", "f32", "fn", "b", (pl.col("i32") > 0).alias("pos"), "s", "d", "ts")
    )
    res = engine.execute(lf)
    assert engine.last_run == "ladle"
    kind, ordinal, cols = _device_array_columns(res)
    assert (kind, ordinal) == ((2, int(engine.device[5:])) if DEVICE == "cuda" else (1, 0))
    want = res.to_arrow()
    assert [c.type for c in cols] == [f.type for f in want.schema]
    for got, name in zip(cols, want.column_names):
        # NaN equals NaN here (pyarrow's equals says no)
        assert_series_equal(pl.Series(name, got), pl.Series(name, want.column(name).combine_chunks()))


@pytest.mark.parametrize(
    "lf",
    [
        DF.lazy().group_by("i8").agg(pl.col("f64").sum()).sort("i8"),
        DF.lazy().group_by("s").agg(pl.len()).sort("s"),  # a String sort: on the host, if anywhere
        DF.lazy().select(pl.col("i64").max(), pl.col("f64").min()),
    ],
    ids=["sorted-groups", "string-sort", "one-row"],
)
def test_a_result_lives_where_its_plan_finished(engine: ladle.Engine, lf: pl.LazyFrame) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ladle.FallbackWarning)
        res = engine.execute(lf)
    root = [line for line in engine.explain(lf).splitlines() if line.startswith("#1 ")]
    on_host = engine.last_run != "ladle" or (root and "[host" in root[0])
    if DEVICE != "cuda":
        assert res.device == "cpu"
    elif on_host:
        assert res.device == "cpu"
    elif res.device == "cpu":
        # a device plan whose every column ended on the host: one-row answers
        assert res.num_rows == 1
    else:
        assert res.device == engine.device
    assert_frame_equal(res.to_polars(), lf.collect(), check_exact=False, rel_tol=1e-9)


@pytest.mark.parametrize("keep", ["first", "last", "any", "none"])
def test_unique_on_the_column_kernels(engine: ladle.Engine, keep: str) -> None:
    """unique(subset, keep) by group_keys (first rows, a grouped MAX over row
    numbers for last, the groups of one row for none), in order of appearance."""
    for subset in (["i8"], ["s", "b"], ["in", "d"], None):
        lf = DF.lazy().select("i8", "s", "b", "in", "d").unique(subset=subset, keep=keep, maintain_order=True)
        if keep == "any":
            check_unordered(engine, lf.select(subset or pl.all()))
        else:
            check(engine, lf)
    check(engine, DF.lazy().filter(pl.col("i8") > 200).unique(subset=["i8"], keep=keep, maintain_order=True))


def test_slices_on_the_column_kernels(engine: ladle.Engine) -> None:
    """head, tail and slice windows (negative offsets, past the end) as a row
    sequence taken from every column (validity bits stay on the device)."""
    for lf in (DF.lazy().head(17), DF.lazy().tail(9), DF.lazy().slice(1003, 77), DF.lazy().slice(-30, 12),
               DF.lazy().slice(-9000, 4000), DF.lazy().slice(6000, 5), DF.lazy().filter(pl.col("b")).slice(5, 300)):
        check(engine, lf)


def test_windows_on_the_column_kernels(engine: ladle.Engine) -> None:
    """agg(x).over(keys): the rows grouped by the keys, the aggregation per group
    as a group_by's, each row given its group's value; a window inside a larger
    expression is an input of its row program (one in a sort key runs on the CPU
    with the reason named)."""
    lf = DF.lazy()
    check(engine, lf.with_columns(pl.col("f64").sum().over("i8").alias("w")))
    check(engine, lf.select("in", pl.col("fn").mean().over("s", "b").alias("m"), pl.len().over("in").alias("n"),
                            (pl.col("i32") * 2).max().over("d").alias("mx"), pl.col("in").count().over("s").alias("c")))
    check(engine, lf.filter(pl.col("b")).with_columns(pl.col("i64").min().over("in").alias("mn")))
    check(engine, lf.filter(pl.col("i8") > 200).with_columns(pl.col("f64").sum().over("i8").alias("w")))
    check(engine, lf.with_columns((pl.col("f64") - pl.col("f64").mean().over("i8")).alias("d")))
    in_key = lf.sort(pl.col("i32").mean().over("i8"), "i64")
    with pytest.warns(ladle.FallbackWarning, match="over"):
        got = engine.collect(in_key)
    assert_frame_equal(got, in_key.collect())


def test_file_scans_read_on_the_host_and_run_on_the_device(engine: ladle.Engine, tmp_path: Any) -> None:
    """Parquet and CSV scans are read by the CPU's readers (a filter right over a
    Parquet scan with them: late materialisation) and their output copied to the
    device as one partition; what is above runs there. A column of a type the
    device does not hold is refused by name."""
    df = DF.drop("fn")  # every type of the frame but one Parquet stores as is
    pq, csv = tmp_path / "t.parquet", tmp_path / "t.csv"
    df.write_parquet(pq, row_group_size=777)  # several row groups: several host partitions
    df.select("i32", "i64", "f64", "s", "b").write_csv(csv)
    scan = pl.scan_parquet(pq)
    for lf in (scan, scan.filter(pl.col("i8") > 20),
               scan.filter(pl.col("s") == "kiwi").select("i64", "d", (pl.col("f64") * 2).alias("x")),
               scan.group_by("i8").agg(pl.col("f64").sum(), pl.len()).sort("i8"),
               scan.join(pl.scan_parquet(pq).select("i32", pl.col("i64").alias("r")), on="i32", how="inner").sort("i64", "r"),
               pl.scan_csv(csv).filter(pl.col("b")).with_columns((pl.col("i32") + 1).alias("j"))):
        check(engine, lf)
    assert "[read on the host, copied to the device]" in engine.explain(scan.filter(pl.col("b")))
    binary = tmp_path / "b.parquet"
    pl.DataFrame({"a": [1, 2], "l": [b"x", b"yz"]}).write_parquet(binary)
    with pytest.warns(ladle.FallbackWarning, match="column 'l' of type binary"):
        got = engine.collect(pl.scan_parquet(binary).filter(pl.col("a") > 1))
    assert got.to_dict(as_series=False) == {"a": [2], "l": [b"yz"]}


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False], ids=["dictionary", "plain"])
@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_parquet_pages_decoded_on_the_device(engine: ladle.Engine, tmp_path: Any, version: str,
                                             dictionary: bool, compression: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Flat fixed-width Parquet columns (PLAIN or dictionary-encoded, v1 or v2 data
    pages, with nulls or none, in several row groups and files) are decoded from
    their pages by the device's parquet_decode; strings and other columns are read
    on the host beside them. Equal to Polars, and to the host's decoding
    (LADLE_GPU_PARQUET=0)."""
    import pyarrow.parquet as papq
    # zstd pages go to the device as stored whatever their count (default: 512 a column)
    monkeypatch.setenv("LADLE_GPU_STORED_MIN_PAGES", "0")
    rng = np.random.default_rng(7)
    paths = []
    for k, n in enumerate([9000, 1, 2500]):
        df = DF.drop("fn", "b").head(n) if n <= DF.height else DF.drop("fn", "b")
        df = df.with_columns(pl.Series("few", rng.integers(0, 3, df.height)),  # RLE runs of indices
                             pl.Series("nulls", rng.normal(size=df.height)).scatter(
                                 np.flatnonzero(rng.random(df.height) < 0.4), None))
        p = tmp_path / f"t{k}.parquet"
        papq.write_table(df.to_arrow(), p, row_group_size=1000, data_page_version=version,
                         use_dictionary=dictionary, compression=compression, data_page_size=2000)
        paths.append(p)
    scan = pl.scan_parquet(paths)
    queries = [scan,
               scan.filter(pl.col("i32") > 0).select("i64", "d", "ts", "nulls", "s"),
               scan.filter(pl.col("nulls").is_null() | (pl.col("few") == 1)).select("in", "f32", "few"),
               scan.group_by("few").agg(pl.col("nulls").sum(), pl.col("in").max(), pl.len()).sort("few"),
               # a predicate the device does not run: the filter reads on the host, as before
               scan.filter(pl.col("s").str.contains("^a[pk]")).select("i64", "s")]
    for lf in queries:
        check(engine, lf)
    monkeypatch.setenv("LADLE_GPU_PARQUET", "0")
    for lf in queries[:2]:
        check(engine, lf)


def test_corrupt_parquet_pages_on_the_device_are_named(engine: ladle.Engine, tmp_path: Any) -> None:
    """A dictionary index past the dictionary, met by the device's decoder, is an
    error naming the file, column and row group (the host's reader names them)."""
    import pyarrow.parquet as papq
    p = tmp_path / "c.parquet"
    pl.DataFrame({"x": list(range(50)) * 40}).write_parquet(p, compression="uncompressed")
    raw = bytearray(p.read_bytes())
    meta = papq.ParquetFile(p).metadata.row_group(0).column(0)
    # the dictionary has 50 entries; the data page's indices become 7 bits wide and
    # all ones: every index 127, past them
    start = meta.data_page_offset
    at = raw.find(bytes([6]), start + 8)  # the indices' bit width (6 bits for 50 entries)
    assert at > 0
    raw[at] = 7
    raw[at + 1:at + 3] = bytes([0x81, 0x7f])  # a bit-packed run's header... then ones
    for i in range(at + 3, min(at + 200, len(raw) - 8)):
        raw[i] = 0xff
    p.write_bytes(bytes(raw))
    with pytest.raises(ladle.LadleError, match=r"c\.parquet.*column 'x'"):
        engine.collect(pl.scan_parquet(p).select(pl.col("x").sum()))


def test_row_index_on_the_column_kernels(engine: ladle.Engine) -> None:
    """with_row_index: the row numbers as a sequence on the device."""
    check(engine, DF.lazy().with_row_index("r"))
    check(engine, DF.lazy().filter(pl.col("b")).with_row_index("r", offset=10).filter(pl.col("r") % 3 == 0))
    check(engine, PIECES.lazy().with_row_index().sort("i64").head(50))


@pytest.fixture(scope="module")
def tpch_parquet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pl.LazyFrame]:
    from tpch_queries import DATA_DIR, load_all

    if not (DATA_DIR / "sf0.1").is_dir():
        pytest.skip(f"no TPC-H data at {DATA_DIR}")
    d = tmp_path_factory.mktemp("tpch")
    out = {}
    for name, df in load_all().items():
        df.write_parquet(d / f"{name}.parquet", row_group_size=100_000)
        out[name] = pl.scan_parquet(d / f"{name}.parquet")
    return out


@pytest.mark.parametrize("q", range(1, 23))
def test_tpch_from_parquet_on_the_column_kernels(engine: ladle.Engine, tpch_parquet: dict[str, pl.LazyFrame],
                                                 q: int) -> None:
    """TPC-H SF0.1 from Parquet files: the scans read on the host, the rest on the
    column kernels, equal to Polars; q22's str.slice is refused by name."""
    from tpch_queries import QUERIES

    lf = QUERIES[q](tpch_parquet)
    if q == 22:
        with pytest.warns(ladle.FallbackWarning, match="str.slice"):
            got = engine.collect(lf)
    else:
        got = run(engine, lf)
    assert_frame_equal(got, lf.collect(), check_exact=False, rel_tol=1e-9)


def list_frame(n: int, seed: int) -> pl.DataFrame:
    g = np.random.default_rng(seed)
    lens = g.integers(0, 5, n)
    ints = [None if g.random() < 0.1 else [None if g.random() < 0.1 else int(v) for v in g.integers(-9, 99, k)]
            for k in lens]
    words = [None if g.random() < 0.1 else [str(g.integers(0, 1000)) * int(g.integers(0, 3)) for _ in range(k)]
             for k in lens]
    return pl.DataFrame({"k": g.integers(0, 50, n), "r": np.arange(n), "li": ints, "ls": words})


def test_list_columns_are_carried_on_the_column_kernels(engine: ladle.Engine, tmp_path: Any) -> None:
    """List columns (of numbers with nulls, of strings; null and empty lists) carried through filters, joins (a left join's unmatched rows: null
    lists), sorts, slices, unique and a row index on the column kernels, from
    memory and from Parquet, equal to Polars; a list column computed on is
    refused by name."""
    df = pl.concat([list_frame(3000, 1), list_frame(1, 2), list_frame(2000, 3)], rechunk=False)
    right = pl.DataFrame({"k": np.arange(0, 60, 2), "w": [[i, i + 1] for i in range(30)]})
    pq = tmp_path / "l.parquet"
    df.write_parquet(pq, row_group_size=1000)
    for lf in (df.lazy(), pl.scan_parquet(pq)):
        check(engine, lf.filter(pl.col("k") > 20))
        check(engine, lf.join(right.lazy(), on="k", how="left", maintain_order="left"))
        check(engine, lf.sort("k", "r", descending=[True, False], maintain_order=True).slice(100, 2500))
        check(engine, lf.with_row_index("i").filter(pl.col("i") % 7 == 0).select("i", "ls", pl.col("li").alias("x")))
        check(engine, lf.unique(subset=["k"], keep="first", maintain_order=True))
    with pytest.warns(ladle.FallbackWarning, match="list"):
        got = engine.collect(df.lazy().select(pl.col("li").list.len()))
    assert_frame_equal(got, df.select(pl.col("li").list.len()))


def check_exact(engine: ladle.Engine, lf: pl.LazyFrame) -> None:
    """Running functions are exact on every device (float sums and products added
    in row order, as Polars does): bit for bit, NaN equal to NaN."""
    assert_frame_equal(run(engine, lf), lf.collect(), check_exact=True)


RUNNING = [
    pl.col("i32").cum_sum().alias("i32_sum"),
    pl.col("i8").cum_prod(reverse=True).alias("i8_prod"),
    pl.col("in").cum_min().alias("in_min"),
    pl.col("fn").cum_max(reverse=True).alias("fn_max"),
    pl.col("fn").cum_sum().alias("fn_sum"),
    pl.col("f32").cum_prod().alias("f32_prod"),
    pl.col("f64").cum_min().alias("f64_min"),
    pl.col("u16").cum_sum(reverse=True).alias("u16_sum"),
    pl.col("i64").cum_prod().alias("i64_prod"),
    pl.col("in").cum_count().alias("in_count"),
    pl.col("fn").cum_count(reverse=True).alias("fn_rcount"),
    pl.col("b").cum_sum().alias("b_sum"),
    pl.col("d").cum_max().alias("d_max"),
    pl.col("ts").shift(2).alias("ts_lag2"),
    pl.col("s").shift(-1).alias("s_lead"),
    pl.col("in").shift(1, fill_value=-1).alias("in_lag"),
    pl.col("i64").diff().alias("i64_diff"),
    pl.col("fn").diff(-3).alias("fn_diff"),
    (pl.col("i32") - pl.col("i32").shift(1)).abs().alias("step"),
    pl.col("i32").cum_sum().shift(1).alias("sum_before"),
    pl.col("fn").shift(2).cum_max().alias("lag_max"),
]


@pytest.mark.parametrize("df", [DF, PIECES, DF.clear(), DF.head(1)], ids=["one-chunk", "chunks", "empty", "one-row"])
def test_running_functions_on_the_column_kernels(engine: ladle.Engine, df: pl.DataFrame) -> None:
    """cum_*, shift and diff over the whole frame and per window group (lag features):
    cumulative and shift_rows, each running function an input of one row program."""
    check_exact(engine, df.lazy().select(RUNNING))
    check_exact(engine, df.lazy().with_columns(e.over("s") for e in RUNNING))
    check_exact(engine, df.lazy().select(e.over("i8", "b") for e in RUNNING[:8]))
    check_exact(engine, df.lazy().filter(pl.col("i32") > 0).with_columns(
        (pl.col("f64") - pl.col("f64").shift(1)).over("s").alias("d1"),
        pl.col("i32").cum_sum(reverse=True).over("in").alias("run")))


@pytest.mark.parametrize(
    "lf, where",
    [
        (DF.lazy().select(pl.col("i32").cum_sum().max()), "cum_"),
        (DF.lazy().sort(pl.col("i32").cum_sum(), "i64"), "cum_"),
        (DF.lazy().sort(pl.col("i32").mean().over("s"), "i64"), "a window"),
        (DF.lazy().with_columns(pl.col("i32").rank().over("s") + 1), "rank"),
        (DF.lazy().select(pl.col("i32").rank().cum_sum()), "rank"),
    ],
)
def test_running_functions_the_path_lacks_are_named(engine: ladle.Engine, lf: pl.LazyFrame, where: str) -> None:
    with pytest.warns(ladle.FallbackWarning, match=where):
        got = engine.collect(lf)
    assert engine.last_run == "ladle-cpu"
    assert_frame_equal(got, lf.collect())


@pytest.mark.parametrize("df", [DF, PIECES, DF.clear()], ids=["one-chunk", "chunks", "empty"])
def test_windows_inside_row_wise_expressions_on_the_column_kernels(engine: ladle.Engine, df: pl.DataFrame) -> None:
    """x - x.mean().over(g), shares of a group's sum, a when over a group's maximum:
    each window an input of the row program around it."""
    check(engine, df.lazy().with_columns(
        (pl.col("f64") - pl.col("f64").mean().over("s")).alias("centred"),
        (pl.col("i32") / pl.col("i32").sum().over("i8", "b")).alias("share"),
        pl.when(pl.col("i32") > pl.col("i32").max().over("s") - 10).then(1).otherwise(0).alias("top"),
        (pl.len().over("s") * 2 + pl.col("in").count().over("b")).alias("n"),
        (pl.col("fn").shift(1).over("s") - pl.col("fn").mean().over("s")).alias("z"),
        (pl.col("i32").cum_sum().over("s") + 1).alias("run1")))


@pytest.mark.parametrize("df", [DF, PIECES, DF.clear()], ids=["one-chunk", "chunks", "empty"])
def test_filters_by_windows_and_running_functions_on_the_column_kernels(engine: ladle.Engine, df: pl.DataFrame) -> None:
    """The latest row per key, rows above their group's mean, the first rows of each
    group, a predicate of a shift: the windows and running functions over the
    table's one partition, inputs of the predicate's row program."""
    lf = df.lazy()
    check(engine, lf.filter(pl.col("fn") > pl.col("fn").mean().over("s")))
    check(engine, lf.filter(pl.col("ts") == pl.col("ts").max().over("s", "b")))
    check(engine, lf.filter(pl.col("i32").cum_count().over("s") <= 3))
    check(engine, lf.filter(pl.col("b").shift(1)))
    check(engine, lf.filter((pl.col("i32") - pl.col("i32").shift(1)) > 0).select("i32", "s"))


@pytest.mark.parametrize("df", [DF, PIECES, DF.clear()], ids=["one-chunk", "chunks", "empty"])
def test_grouped_var_and_std_on_the_column_kernels(engine: ladle.Engine, df: pl.DataFrame) -> None:
    """var and std per group (any ddof; a group of at most ddof values null), also
    over a filter and as windows (z-scores per group), and sqrt in row programs:
    two passes (the group's mean, then the squared deviations), within the last
    bits of Polars'."""
    lf = df.lazy()
    check_groups(engine, lf.group_by("s").agg(
        pl.col("fn").std().alias("a"), pl.col("i32").var().alias("b"), pl.col("i8").std(ddof=0).alias("c"),
        pl.col("f64").var(ddof=3).alias("d"), (pl.col("u16") * 2).std().alias("e")))
    check_groups(engine, lf.filter(pl.col("b")).group_by("i8", "b").agg(pl.col("fn").std(), pl.col("u16").var()))
    check(engine, lf.with_columns(
        ((pl.col("fn") - pl.col("fn").mean().over("s")) / pl.col("fn").std().over("s")).alias("z")))
    check(engine, lf.select(pl.col("fn").abs().sqrt().alias("r"), pl.col("f32").sqrt().alias("r32")))
    # over the whole column: the same two passes, the mean on the host
    check(engine, lf.select(pl.col("fn").std().alias("a"), pl.col("i32").var().alias("b"),
                            pl.col("i8").std(ddof=0).alias("c"), (pl.col("i32") * 0.5).var(ddof=3).alias("d"),
                            pl.col("u16").std().alias("e")))
    check(engine, lf.filter(pl.col("b")).select((pl.col("i32") * 0.25).std().alias("s"), (pl.col("i32") * 2).var().alias("v")))
    # Int64 widens to Float64 with loss: on ladle's CPU backend, named
    with pytest.warns(ladle.FallbackWarning, match="'std' of i64"):
        engine.collect(lf.group_by("s").agg(pl.col("i64").std()))


@pytest.mark.parametrize("df", [DF, PIECES, DF.clear(), DF.head(1)], ids=["one-chunk", "chunks", "empty", "one-row"])
def test_grouped_first_and_last_on_the_column_kernels(engine: ladle.Engine, df: pl.DataFrame) -> None:
    """first()/last() per group (nulls included, Strings too): a take at each group's
    first row, or at the last of its rows in the grouping's CSR; over a filter (the
    rows picked by it) and as windows."""
    lf = df.lazy()
    check(engine, lf.group_by("s", maintain_order=True).agg(
        pl.col("fn").first().alias("a"), pl.col("in").last().alias("b"), pl.col("s").last().alias("c"),
        (pl.col("i32") * 2).first().alias("d"), pl.col("d").last().alias("e")))
    check(engine, lf.filter(pl.col("b")).group_by("i8", "b", maintain_order=True).agg(
        pl.col("fn").first(), pl.col("ts").last()))
    check(engine, lf.with_columns(pl.col("fn").last().over("s").alias("z"),
                                  (pl.col("i32") - pl.col("i32").first().over("in")).alias("dz")))
