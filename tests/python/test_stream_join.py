"""Joins that stream their probe side (op_join.c's streaming form, physical.c's
join_probe_side): the other side is run and built into a hash table when the
pipeline opens, and the probe side's morsels (a Parquet scan's row groups) go
through the join one at a time, on into the projections, further joins and the
partial aggregation above, without the probe side or the join's output ever
being a table.

LADLE_STREAM_JOIN=0 streams no join, =1 (the default) joins whose probe side is
a Parquet scan's chain, =2 over in-memory tables too. Every query is checked
against Polars in those modes; explain() tells which joins streamed, so that a
test fails when the planner stops choosing them."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl
import pytest
from conftest import assert_same
from polars.testing import assert_frame_equal
from tpch_queries import QUERIES, load_all

import ladle

N_FACT = 60_000
N_DIM = 3_000


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("sjoin")
    r = np.random.default_rng(7)
    fact = pl.DataFrame(
        {
            # keys: some missing from the dimension, some null
            "k": pl.Series(r.integers(0, N_DIM + 500, N_FACT)).set(pl.Series(r.random(N_FACT) < 0.03), None),
            "k2": pl.Series(r.integers(0, 5, N_FACT), dtype=pl.Int32),
            "ks": pl.Series(r.choice(["a", "bb", "ccc", "é", "", "zz"], N_FACT)),
            "v": r.normal(0, 10, N_FACT),
            "i": r.integers(-1000, 1000, N_FACT),
        }
    )
    dim = pl.DataFrame(
        {
            "k": pl.Series(np.arange(N_DIM)).set(pl.Series(r.random(N_DIM) < 0.02), None),
            "k2": pl.Series(r.integers(0, 5, N_DIM), dtype=pl.Int32),
            "name": pl.Series(r.choice(["x", "yy", "zzz", "Ω"], N_DIM)),
            "w": r.integers(0, 100, N_DIM),
        }
    )
    # a dimension with duplicate keys: several matches per probe row
    dup = pl.concat([dim.head(700), dim.head(300).with_columns(pl.col("w") + 1000)])
    out = {}
    for name, df, rg in (("fact", fact, 4_000), ("dim", dim, 1_000), ("dup", dup, 250)):
        out[name] = d / f"{name}.parquet"
        df.write_parquet(out[name], row_group_size=rg)
    out["empty"] = d / "empty.parquet"
    dim.head(0).write_parquet(out["empty"])
    return out


def streamed(engine: ladle.Engine, lf: pl.LazyFrame) -> int:
    return engine.explain(lf).count("streams its")


def check(lf: pl.LazyFrame, engine: ladle.Engine, monkeypatch: pytest.MonkeyPatch, *, ordered: bool,
          expect: int | None = None) -> None:
    """lf equal to Polars with joins streamed (the default) and not (=0); with
    `expect`, the default plan streams that many joins at least. The default is
    left set."""
    for mode in ("0", "1"):
        monkeypatch.setenv("LADLE_STREAM_JOIN", mode)
        assert_same(lf, engine, ordered=ordered, rel_tol=1e-9)
        n = streamed(engine, lf)
        if mode == "0":
            assert n == 0, engine.explain(lf)
        elif expect is not None:
            assert n >= expect, engine.explain(lf)


@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti"])
@pytest.mark.parametrize("on", [["k"], ["k", "k2"]])
def test_fact_probes_a_dimension(files: dict[str, Path], engine: ladle.Engine,
                                 monkeypatch: pytest.MonkeyPatch, how: str, on: list[str]) -> None:
    # the bigger left side streams, in the whole join's order (left rows, matches
    # by right row); Polars promises no order without maintain_order
    f, d = pl.scan_parquet(files["fact"]), pl.scan_parquet(files["dim"])
    lf = f.join(d, on=on, how=how)  # type: ignore[arg-type]
    check(lf, engine, monkeypatch, ordered=False, expect=1)
    # nulls equal
    lf = f.join(d, on=on, how=how, nulls_equal=True)  # type: ignore[arg-type]
    check(lf, engine, monkeypatch, ordered=False, expect=1)
    # the left side's order, promised
    if how in ("inner", "left"):
        lf = f.join(d, on=on, how=how, maintain_order="left")  # type: ignore[arg-type]
        check(lf, engine, monkeypatch, ordered=True, expect=1)


@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti"])
def test_several_matches_and_string_keys(files: dict[str, Path], engine: ladle.Engine,
                                         monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    f, dup = pl.scan_parquet(files["fact"]), pl.scan_parquet(files["dup"])
    check(f.join(dup, on="k", how=how), engine, monkeypatch, ordered=False, expect=1)  # type: ignore[arg-type]
    if how in ("inner", "left"):
        lf = f.join(dup, on="k", how=how, maintain_order="left_right")  # type: ignore[arg-type]
        check(lf, engine, monkeypatch, ordered=True, expect=1)
    names = pl.scan_parquet(files["dim"]).select(pl.col("name").alias("ks"), "w").unique("ks", keep="first")
    check(f.join(names, on="ks", how=how), engine, monkeypatch, ordered=False)  # type: ignore[arg-type]


def test_the_bigger_right_side_streams_an_inner_join(files: dict[str, Path], engine: ladle.Engine,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    f, d = pl.scan_parquet(files["fact"]), pl.scan_parquet(files["dim"])
    lf = d.join(f, on="k").select("name", "v", "w")
    check(lf, engine, monkeypatch, ordered=False, expect=1)
    assert "streams its right side" in engine.explain(lf)
    # an order promised by the left side: the right side does not stream
    lf = d.join(f, on="k", maintain_order="left_right").select("name", "v", "w")
    monkeypatch.setenv("LADLE_STREAM_JOIN", "1")
    assert "streams its right side" not in engine.explain(lf)
    assert_same(lf, engine, rel_tol=1e-9)


def test_joins_into_a_group_by_make_one_pipeline(files: dict[str, Path], engine: ladle.Engine,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    f, d, dup = (pl.scan_parquet(files[k]) for k in ("fact", "dim", "dup"))
    lf = (
        f.join(d.select("k", "name"), on="k")
        .join(dup.select("k", pl.col("w").alias("w2")), on="k", how="left")
        .with_columns((pl.col("v") * pl.col("i")).alias("x"))
        .group_by("name")
        .agg(pl.col("x").sum(), pl.col("w2").mean(), pl.len())
    )
    check(lf, engine, monkeypatch, ordered=False, expect=2)
    monkeypatch.setenv("LADLE_STREAM_JOIN", "1")
    plan = engine.explain(lf)
    pipes = plan[plan.index("pipelines:"):]
    assert "JOIN -> " in pipes and "GROUP_BY_PARTIAL" in pipes, plan


def test_empty_sides(files: dict[str, Path], engine: ladle.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    f, e = pl.scan_parquet(files["fact"]), pl.scan_parquet(files["empty"])
    for how in ("inner", "left", "semi", "anti"):
        check(f.join(e, on="k", how=how), engine, monkeypatch, ordered=False)  # type: ignore[arg-type]
        check(f.filter(pl.col("i") > 5000).join(e, on="k", how=how), engine, monkeypatch, ordered=False)  # type: ignore[arg-type]


def test_height_above_a_streamed_join(files: dict[str, Path], engine: ladle.Engine,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # a division by one value reads the height of the frame (Polars' formula), which
    # a morsel of a join's output does not know: that node runs outside the pipeline
    f, d = pl.scan_parquet(files["fact"]), pl.scan_parquet(files["dim"])
    lf = f.join(d, on="k", how="left").select((pl.col("w") / pl.lit(3)).alias("q"), "v")
    check(lf, engine, monkeypatch, ordered=False)
    lf = f.join(d, on="k", how="semi").select(pl.when(pl.col("v") > 0).then(pl.lit(1)).otherwise(pl.lit(2)))
    check(lf, engine, monkeypatch, ordered=False)


def test_an_error_inside_the_probe_is_raised(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    f, d = pl.scan_parquet(files["fact"]), pl.scan_parquet(files["dim"])
    lf = f.join(d, on="k", how="left").select(pl.col("ks").cast(pl.Int64, strict=True))
    monkeypatch.setenv("LADLE_STREAM_JOIN", "1")
    e = ladle.Engine(raise_on_fail=True)
    assert streamed(e, lf) == 1
    with pytest.raises(Exception, match="(?i)cast"):
        lf.collect(engine=e)
    # and the engine runs the next query
    assert_same(f.join(d, on="k", how="semi"), e, ordered=False)


TABLES = ("lineitem", "orders", "customer", "nation", "region", "supplier", "part", "partsupp")


@pytest.fixture(scope="module")
def tpch_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pl.LazyFrame]:
    d = tmp_path_factory.mktemp("tpch_pq")
    out = {}
    for k, v in load_all().items():
        p = d / f"{k}.parquet"
        v.write_parquet(p, row_group_size=20_000)
        out[k] = pl.scan_parquet(p)
    return out


@pytest.mark.parametrize("q", sorted(QUERIES))
def test_tpch_from_parquet(q: int, tpch_files: dict[str, pl.LazyFrame], monkeypatch: pytest.MonkeyPatch) -> None:
    lf = QUERIES[q](tpch_files)
    want = lf.collect()
    e = ladle.Engine(raise_on_fail=True)
    for mode in ("1", "0"):
        monkeypatch.setenv("LADLE_STREAM_JOIN", mode)
        monkeypatch.setenv("LADLE_PARQUET_STREAM", "1")
        assert_frame_equal(lf.collect(engine=e), want, check_row_order=False, rel_tol=1e-9)
    monkeypatch.setenv("LADLE_STREAM_JOIN", "1")
    # the queries whose lineitem joins unfiltered stream them (q5, q8, q9, q17)
    if q in (5, 8, 9, 17):
        assert streamed(e, lf) >= 1, e.explain(lf)


def test_in_memory_tables_stream_when_asked(engine: ladle.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    t = {k: v.lazy() for k, v in load_all().items()}
    monkeypatch.setenv("LADLE_STREAM_JOIN", "2")
    for q in (3, 5, 7, 9, 10, 18, 21):
        lf = QUERIES[q](t)
        assert_same(lf, engine, ordered=True, rel_tol=1e-9)
    assert streamed(engine, QUERIES[5](t)) >= 1
    monkeypatch.setenv("LADLE_STREAM_JOIN", "1")
    assert streamed(engine, QUERIES[5](t)) == 0


CASES: list[Callable[[pl.LazyFrame, pl.LazyFrame], pl.LazyFrame]] = [
    lambda f, d: f.join(d, on="k").filter(pl.col("w") > 50).select("ks", "v"),
    lambda f, d: f.join(d, on="k", how="left").with_columns(pl.col("name").fill_null("none")),
    lambda f, d: f.join(d.filter(pl.col("w") < 10), on="k", how="semi", maintain_order="left").head(100),
    lambda f, d: f.join(d, on="k", how="anti").select(pl.col("v").sum(), pl.len()),
    lambda f, d: f.join(d, left_on="i", right_on="w").group_by("k2").agg(pl.col("v").max()),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_shapes(files: dict[str, Path], engine: ladle.Engine, monkeypatch: pytest.MonkeyPatch, i: int) -> None:
    f, d = pl.scan_parquet(files["fact"]), pl.scan_parquet(files["dim"])
    lf = CASES[i](f, d)
    check(lf, engine, monkeypatch, ordered=i in (2, 3))


@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti"])
@pytest.mark.parametrize("right", ["dim", "dup"])
def test_a_join_over_the_scan_reads_late(files: dict[str, Path], engine: ladle.Engine,
                                         monkeypatch: pytest.MonkeyPatch, how: str, right: str) -> None:
    # a streamed join right over the scan, under a projection, is the pipeline's
    # source: per row group the key decoded, probed, and the other columns (a
    # string among them) read from the file at the matched rows; with several
    # matches a row's late values repeat
    monkeypatch.setenv("LADLE_PARQUET_STREAM", "1")
    f, d = pl.scan_parquet(files["fact"]), pl.scan_parquet(files[right])
    cols = ["ks", "v", "k", "i"] + (["name", "w"] if how in ("inner", "left") else [])
    for order in ("none", "left_right"):
        lf = f.join(d, on="k", how=how, maintain_order=order).select(cols)  # type: ignore[arg-type]
        check(lf, engine, monkeypatch, ordered=order != "none", expect=1)
        assert "read at the matched rows" in engine.explain(lf), engine.explain(lf)
    before = engine.stats()["row_groups_streamed"]
    lf.collect(engine=engine)
    assert engine.stats()["row_groups_streamed"] > before


@pytest.mark.parametrize("how", ["semi", "anti"])
@pytest.mark.parametrize("left", ["dim", "dup"])
def test_the_big_right_side_marks_the_left(files: dict[str, Path], engine: ladle.Engine,
                                           monkeypatch: pytest.MonkeyPatch, how: str, left: str) -> None:
    # a semi or anti join whose right side is the big one (TPC-H q4): the left
    # side becomes the hash table and the right side's morsels mark the left
    # rows they meet; the marked (semi) or unmarked (anti) rows come out in the
    # left side's order. Duplicated left keys: each row marked; null keys:
    # never met, unless nulls are equal
    f, d = pl.scan_parquet(files["fact"]), pl.scan_parquet(files[left])
    small = d.filter(pl.col("w") < 50)
    queries = [
        d.join(f, on="k", how=how),  # type: ignore[arg-type]
        d.join(f, on=["k", "k2"], how=how),  # type: ignore[arg-type]
        d.join(f, on="k", how=how, nulls_equal=True),  # type: ignore[arg-type]
        # a filtered right side: the filter streams into the marks
        small.join(f.filter(pl.col("i") > 900), on="k", how=how),  # type: ignore[arg-type]
        # a right side with no rows at all
        small.join(f.filter(pl.col("i") > 5000), on="k", how=how),  # type: ignore[arg-type]
        # keys of other types and an expression on the right
        small.join(f, left_on=pl.col("w"), right_on=(pl.col("i") + 1).cast(pl.Int32), how=how)  # type: ignore[arg-type]
        .select("name", "w"),
    ]
    # a left side beside its one mean (a cross join with a single row: TPC-H q22's
    # customers above their mean balance), estimated as its own rows
    above = d.join(d.select(pl.col("w").mean().alias("m")), how="cross").filter(pl.col("w") > pl.col("m"))
    queries.append(above.join(f, on="k", how=how).select("k", "name"))  # type: ignore[arg-type]
    # in the left side's order where asked (Polars' own order is free otherwise)
    queries.append(d.join(f, on="k", how=how, maintain_order="left").head(2000))  # type: ignore[arg-type]
    for i, lf in enumerate(queries):
        check(lf, engine, monkeypatch, ordered=i == len(queries) - 1)
        plan = engine.explain(lf)
        assert "streams its right side into marks" in plan and "(marks)" in plan, plan
    # LADLE_MARK_JOIN=0: the whole join (the same answer)
    monkeypatch.setenv("LADLE_MARK_JOIN", "0")
    assert "into marks" not in engine.explain(queries[0])
    assert_same(queries[0], engine, ordered=False)


def test_an_error_in_the_marking_side_is_raised(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    f, d = pl.scan_parquet(files["fact"]), pl.scan_parquet(files["dim"])
    lf = d.join(f, left_on=pl.col("k").cast(pl.String), right_on=pl.col("ks").cast(pl.Int64, strict=True).cast(pl.String),
                how="semi")
    e = ladle.Engine(raise_on_fail=True)
    assert "into marks" in e.explain(lf)
    with pytest.raises(Exception, match="(?i)cast|conversion"):
        lf.collect(engine=e)
    with pytest.raises(Exception):
        lf.collect()
    assert_same(d.join(f, on="k", how="anti"), e, ordered=False)
