"""group_by as partial and final steps (src/exec/op_group_by_partial.c) against
Polars: LADLE_PARTIAL_AGG=1 makes ladle take that path for every input it can
run, and small morsels give it many partials; LADLE_PARTIAL_AGG=0 checks the
whole-table path gives the same. Keys of every kind (nulls, NaN, -0.0, strings,
booleans, dates), every aggregation the path splits, maintain_order, no keys,
empty input and a filter leaving empty morsels."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from conftest import assert_same

import ladle

N = 20_011


def frame(seed: int, n: int = N) -> pl.DataFrame:
    r = np.random.default_rng(seed)
    nulls = r.random(n) < 0.1
    f = r.normal(0, 100, n)
    f[r.random(n) < 0.01] = np.nan
    f[r.random(n) < 0.01] = -0.0
    f[r.random(n) < 0.01] = 0.0
    return pl.DataFrame(
        {
            "k_int": pl.Series(r.integers(0, 13, n)).set(pl.Series(nulls), None),
            "k_str": pl.Series(r.choice(["a", "bb", "ccc", "é", ""], n)),
            "k_bool": pl.Series(r.random(n) < 0.3),
            "k_f": pl.Series(np.round(r.normal(0, 2, n))).set(pl.Series(r.random(n) < 0.05), -0.0),
            "k_date": pl.Series([dt.date(2020, 1, 1) + dt.timedelta(days=int(d)) for d in r.integers(0, 5, n)]),
            "i8": pl.Series(r.integers(-128, 128, n), dtype=pl.Int8),
            "i32": pl.Series(r.integers(-(2**31), 2**31 - 1, n), dtype=pl.Int32),
            "i64": pl.Series(r.integers(-(2**40), 2**40, n)).set(pl.Series(r.random(n) < 0.2), None),
            "u16": pl.Series(r.integers(0, 2**16, n), dtype=pl.UInt16),
            "f32": pl.Series(r.normal(0, 10, n), dtype=pl.Float32),
            "f": pl.Series(f).set(pl.Series(r.random(n) < 0.1), None),
            "b": pl.Series(r.random(n) < 0.5).set(pl.Series(r.random(n) < 0.1), None),
            "s": pl.Series(r.choice(["x", "yy", "zzz", "Ω", "abc"], n)).set(pl.Series(r.random(n) < 0.1), None),
            "d": pl.Series([dt.date(2021, 1, 1) + dt.timedelta(days=int(v)) for v in r.integers(0, 900, n)]),
            "dur": pl.Series(r.integers(0, 10**9, n)).cast(pl.Duration("us")),
        }
    )


AGGS = [
    pl.col("i8").sum().alias("sum_i8"),
    pl.col("i32").sum().alias("sum_i32_wraps"),
    pl.col("i64").sum().alias("sum_i64"),
    pl.col("u16").sum().alias("sum_u16"),
    pl.col("f32").sum().alias("sum_f32"),
    pl.col("f").sum().alias("sum_f"),
    pl.col("b").sum().alias("sum_b"),
    pl.col("dur").sum().alias("sum_dur"),
    (pl.col("f") * (1 - pl.col("f32"))).sum().alias("sum_expr"),
    pl.col("i64").min().alias("min_i64"),
    pl.col("f").max().alias("max_f"),
    pl.col("f").min().alias("min_f"),
    pl.col("s").min().alias("min_s"),
    pl.col("s").max().alias("max_s"),
    pl.col("d").max().alias("max_d"),
    pl.col("b").min().alias("min_b"),
    pl.col("s").first().alias("first_s"),
    pl.col("i64").last().alias("last_i64"),
    pl.col("f").count().alias("count_f"),
    pl.col("i64").null_count().alias("nulls_i64"),
    pl.len().alias("len"),
    pl.col("s").len().alias("len_s"),
    pl.col("i64").mean().alias("mean_i64"),
    pl.col("f32").mean().alias("mean_f32"),
    pl.col("f").mean().alias("mean_f"),
    pl.col("b").mean().alias("mean_b"),
]

KEYS = [["k_int"], ["k_str", "k_bool"], ["k_f"], ["k_date", "k_int"], [pl.col("k_int") % 3, pl.col("k_str").str.len_bytes()]]


@pytest.fixture(params=["1", "0"], ids=["partial", "whole"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LADLE_PARTIAL_AGG", request.param)
    return str(request.param)


@pytest.fixture(scope="module")
def morsel_engine() -> ladle.Engine:
    return ladle.Engine(raise_on_fail=True, threads=2, morsel_rows=997)


@pytest.mark.parametrize("keys", KEYS, ids=lambda k: "+".join(str(x) for x in k))
def test_group_by_aggregations(mode: str, morsel_engine: ladle.Engine, keys: list) -> None:
    df = frame(1)
    lf = df.lazy().group_by(keys).agg(AGGS)
    assert_same(lf.sort(pl.all()), morsel_engine, rel_tol=1e-5, abs_tol=1e-3)


@pytest.mark.parametrize("keys", KEYS[:3], ids=lambda k: "+".join(str(x) for x in k))
def test_maintain_order_keeps_first_appearance(mode: str, morsel_engine: ladle.Engine, keys: list) -> None:
    df = frame(2)
    lf = df.lazy().group_by(keys, maintain_order=True).agg(AGGS)
    assert_same(lf, morsel_engine, rel_tol=1e-5, abs_tol=1e-3)


def test_no_keys_reduces_to_one_row(mode: str, morsel_engine: ladle.Engine) -> None:
    df = frame(3)
    assert_same(df.lazy().select(AGGS), morsel_engine, rel_tol=1e-5, abs_tol=1e-3)
    # over no rows: sums and counts 0, the rest null
    assert_same(df.lazy().filter(pl.col("i8") > 1000).select(AGGS), morsel_engine, rel_tol=1e-5, abs_tol=1e-3)


EXACT_AGGS = [a for a in AGGS if not any(w in str(a) for w in ("mean", "sum_f", "sum_expr", "f32\").sum"))]


def test_select_of_aggregations_streams_into_partials(morsel_engine: ladle.Engine, tmp_path) -> None:
    """One rank, the default mode: a select of aggregations whose partials are
    exact (no float sums or means) streams its input into one partial row a
    morsel, from memory and from a Parquet scan read row group by row group,
    and equals Polars exactly (min/max over NaN and -0.0, first/last over nulls,
    wrapping sums, counts); over no rows too."""
    assert EXACT_AGGS and all("mean" not in str(a) for a in EXACT_AGGS)
    df = frame(5)
    path = tmp_path / "f.parquet"
    df.write_parquet(path, row_group_size=2_000)
    for lf in (df.lazy(), pl.scan_parquet(path)):
        for q in (lf.select(EXACT_AGGS), lf.filter(pl.col("i8") > 1000).select(EXACT_AGGS),
                  lf.filter(pl.col("u16") % 7 == 1).select(EXACT_AGGS)):
            text = morsel_engine.explain(q)
            assert "GROUP_BY_PARTIAL" in text and "one partial row a chunk" in text, text
            assert_same(q, morsel_engine, rel_tol=0, abs_tol=0)
    # a float sum keeps the whole-column sum (Polars' rounding): no partials
    assert "GROUP_BY_PARTIAL" not in morsel_engine.explain(df.lazy().select(pl.col("f").sum(), pl.col("i8").max()))


def test_filter_leaving_empty_morsels(mode: str, morsel_engine: ladle.Engine) -> None:
    df = frame(4)
    lf = df.lazy().filter((pl.col("u16") < 2000) | (pl.col("k_int") == 5)).group_by("k_str").agg(AGGS)
    assert_same(lf.sort("k_str"), morsel_engine, rel_tol=1e-5, abs_tol=1e-3)
    lf = df.lazy().filter(pl.col("u16") > 70000).group_by("k_str").agg(AGGS)
    assert_same(lf, morsel_engine, rel_tol=1e-5, abs_tol=1e-3)


def test_a_failing_input_raises_as_on_polars(mode: str, morsel_engine: ladle.Engine) -> None:
    df = pl.DataFrame({"k": [1, 2] * 5000, "s": ["1", "2"] * 4999 + ["x", "3"]})
    lf = df.lazy().group_by("k").agg(pl.col("s").cast(pl.Int64, strict=True).sum())
    with pytest.raises(Exception):
        lf.collect()
    with pytest.raises(ladle.LadleError, match="x"):
        lf.collect(engine=morsel_engine)


def test_many_groups_decline_and_stay_correct(monkeypatch: pytest.MonkeyPatch, morsel_engine: ladle.Engine) -> None:
    # by default (no override) a first morsel with many groups per row turns
    # the path down; the answer is the same either way
    monkeypatch.delenv("LADLE_PARTIAL_AGG", raising=False)
    n = 200_003
    r = np.random.default_rng(5)
    df = pl.DataFrame({"k": r.integers(0, n, n), "v": r.normal(size=n), "w": r.integers(0, 9, n)})
    assert_same(df.lazy().group_by("k").agg(pl.col("v").sum(), pl.len()).sort("k"), morsel_engine, rel_tol=1e-9)
    assert_same(df.lazy().group_by("w").agg(pl.col("v").mean(), pl.col("k").max()).sort("w"), morsel_engine, rel_tol=1e-9)


@pytest.mark.parametrize(
    "pred",
    [
        pl.col("u16") < 30000,
        pl.col("s").str.contains("y|Ω"),  # null where s is null: dropped
        pl.col("b"),  # a Boolean column with nulls
        (pl.col("i64") > 0) | pl.col("k_str").is_in(["a", "é"]),
        pl.col("f").is_nan() | (pl.col("d") > dt.date(2022, 6, 1)),
        pl.lit(True),
        pl.col("u16") > 70000,  # keeps nothing
    ],
    ids=["cmp", "contains", "bool_nulls", "or_is_in", "nan_or_date", "lit_true", "none"],
)
def test_filter_runs_inside_the_partial_step(mode: str, morsel_engine: ladle.Engine, pred: pl.Expr) -> None:
    df = frame(6)
    lf = df.lazy().filter(pred).group_by("k_int", maintain_order=True).agg(AGGS)
    assert_same(lf, morsel_engine, rel_tol=1e-5, abs_tol=1e-3)
    assert_same(df.lazy().filter(pred).select(AGGS), morsel_engine, rel_tol=1e-5, abs_tol=1e-3)


def test_filter_with_division_below_a_group_by(mode: str, morsel_engine: ladle.Engine) -> None:
    # a division by one value keeps Polars' formula, which depends on the
    # filtered column's length: that plan is not fused, and stays exact
    df = pl.DataFrame({"k": [1, 2, 3] * 40000, "x": np.arange(120000, dtype=np.float64) * 0.1})
    for keep in (pl.col("x") < 0.15, pl.col("x") < 5000.0):
        lf = df.lazy().filter(keep).group_by("k").agg((pl.col("x") / 3.7).sum()).sort("k")
        assert_same(lf, morsel_engine)


def test_projections_and_filters_run_inside_the_partial_step(mode: str, morsel_engine: ladle.Engine) -> None:
    # the TPC-H q1 shape after Polars' optimizer: filter, select, with_columns
    df = frame(7)
    lf = (
        df.lazy()
        .filter(pl.col("d") <= dt.date(2022, 12, 1))
        .select("k_str", "k_bool", "f", "f32", "i64", "s", pl.col("u16").alias("q"))
        .with_columns((pl.col("f") * (1 - pl.col("f32"))).alias("rev"), pl.lit(2).alias("two"))
        .filter(pl.col("q") > 100)
        .with_columns((pl.col("rev") * (1 + pl.col("f32"))).alias("charge"))
        .group_by("k_str", "k_bool", maintain_order=True)
        .agg(
            pl.col("q").sum(),
            pl.col("rev").sum(),
            pl.col("charge").sum(),
            pl.col("two").sum().alias("twos"),
            pl.col("f").mean(),
            pl.col("s").max(),
            pl.len(),
        )
    )
    assert_same(lf, morsel_engine, rel_tol=1e-5, abs_tol=1e-3)


def test_a_when_over_a_filtered_pipeline_stays_exact(mode: str, morsel_engine: ladle.Engine) -> None:
    # a when (or a division) above a filter depends on the filtered height:
    # that pipeline runs node by node
    df = pl.DataFrame({"k": [1, 2] * 60000, "x": np.arange(120000, dtype=np.float64)})
    lf = (
        df.lazy()
        .filter(pl.col("x") < 1.5)
        .with_columns(pl.when(pl.col("x") > 0).then(pl.col("x") / 3.3).otherwise(pl.lit(1.0)).alias("y"))
        .group_by("k")
        .agg(pl.col("y").sum())
        .sort("k")
    )
    assert_same(lf, morsel_engine)


def test_explain_shows_the_pipeline_and_its_exchange() -> None:
    e = ladle.Engine(threads=2)
    df = frame(8)
    lf = df.lazy().filter(pl.col("u16") > 5).with_columns((pl.col("f") * 2).alias("g")).group_by("k_int").agg(pl.col("g").sum())
    text = e.explain(lf)
    assert "physical plan (engine: 2 threads; 1 rank):" in text
    line = next(x for x in text.splitlines() if x.strip().startswith("1. "))
    # Polars' optimizer adds projections around them
    assert line.strip().startswith("1. #"), line
    assert " SCAN (its output) -> #" in line and " FILTER -> " in line and " WITH_COLUMNS -> " in line
    assert line.endswith("GROUP_BY_PARTIAL | (1 rank: no exchange) | #1 GROUP_BY_FINAL"), line
    # planned for two ranks, the hash exchange sits between the steps
    two = e.explain(lf, ranks=2)
    line2 = next(x for x in two.splitlines() if x.strip().startswith("1. "))
    assert "GROUP_BY_PARTIAL | EXCHANGE | #" in line2
    assert 'EXCHANGE hash by [col("k_int")' in two
    # a select of aggregations whose partials are exact streams into them; a float
    # sum (Polars' whole-column rounding) and a median do not split
    assert "GROUP_BY_PARTIAL" in e.explain(df.lazy().select(pl.col("i64").sum()))
    assert "\npipelines:\n  none" in e.explain(df.lazy().select(pl.col("f").sum()))
    assert "\npipelines:\n  none" in e.explain(df.lazy().group_by("k_int").agg(pl.col("f").median()))