"""The physical plan (src/exec/physical.c): every rewrite is an explicit node or
field that engine.explain() prints, and the query with it equals Polars. With
ranks > 1, explain() shows the EXCHANGE nodes multi-rank execution will run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import assert_same
from tpch_queries import QUERIES, load_all

import ladle


def physical(text: str) -> list[str]:
    """The physical plan's node lines."""
    lines = text.split("physical plan")[1].split("\npipelines:")[0].splitlines()[1:]
    return [x.strip() for x in lines if x.strip()]


def node(text: str, start: str) -> str:
    for x in physical(text):
        if x.split(" ", 1)[1].startswith(start):
            return x
    raise AssertionError(f"no {start!r} node in\n{text}")


def node_id(line: str) -> int:
    return int(line.split(" ", 1)[0][1:])


@pytest.fixture(scope="module")
def pq(tmp_path_factory: pytest.TempPathFactory) -> Path:
    n = 300_000
    r = np.random.default_rng(0)
    df = pl.DataFrame(
        {
            "k": r.integers(0, 20_000, n),
            "j": r.integers(0, 1000, n),
            "v": r.integers(-5, 5, n),
            "s": [f"s{i}" for i in range(n)],
        }
    )
    path = tmp_path_factory.mktemp("physical") / "t.parquet"
    df.write_parquet(path, row_group_size=50_000)
    return path


def transfer_query(pq: Path) -> pl.LazyFrame:
    # a filter straight over a Parquet scan (late columns), under a left join
    # and a computed column; the top join's small right side transfers its keys
    # down to where k enters: the scan under that filter
    big = pl.scan_parquet(pq).filter(pl.col("v") > 0).with_columns(v2=pl.col("v") + 1)
    dim = pl.DataFrame({"j": np.arange(1000), "o": np.arange(1000) * 2}).lazy()
    few = pl.DataFrame({"k": np.arange(20_000)}).lazy().filter(pl.col("k") < 50)
    return big.join(dim, on="j", how="left").with_columns(w=pl.col("o").fill_null(0) + pl.col("k")).join(few, on="k")


def test_transfer_below_a_late_filter_keeps_every_row(pq: Path) -> None:
    # ladle used to cut the scan's output (its late columns still placeholders)
    # and then read the late columns by the uncut row groups: 0 rows, not 323
    e = ladle.Engine(threads=2, raise_on_fail=True)
    lf = transfer_query(pq)
    before = e._engine.stats()["rows_transferred"]
    got = assert_same(lf, e, ordered=False)
    assert got.height > 0
    assert e._engine.stats()["rows_transferred"] > before
    text = e.explain(lf)
    semi = node(text, "SEMI_FILTER")
    assert "predicate transfer" in semi
    top = physical(text)[0]
    assert "right side first" in top and f"feeds #{node_id(semi)}" in top
    flt = node(text, "FILTER [(col(\"v\")")
    assert "late=" not in flt, "a filter whose scan output is cut by a transfer reads nothing late"
    assert node_id(semi) == node_id(flt) + 1


def test_late_columns_of_a_filter_over_parquet(pq: Path) -> None:
    e = ladle.Engine(threads=2, raise_on_fail=True)
    lf = pl.scan_parquet(pq).filter(pl.col("v") == 3)
    assert_same(lf, e)
    text = e.explain(lf)
    flt = node(text, "FILTER")
    assert 'late=["k", "j", "s"]' in flt
    scan = node(text, "SCAN parquet")
    assert 'reads ["v"]' in scan and f"for #{node_id(flt)}" in scan


def test_deferred_join_input_and_compacted_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    # a fact table 500 times its dimension: by default its join streams the
    # fact side (no deferral: the filter runs in the pipeline); the whole join
    # (streamed joins over Parquet only) defers the filter's other columns
    monkeypatch.setenv("LADLE_STREAM_JOIN", "1")
    r = np.random.default_rng(1)
    n = 50_000
    fact = pl.DataFrame({"k": r.integers(0, 100, n), "x": r.normal(size=n), "t": r.integers(0, 9, n)}).lazy()
    dim = pl.DataFrame({"k": np.arange(100), "name": [f"n{i}" for i in range(100)]}).lazy()
    e = ladle.Engine(threads=2, raise_on_fail=True)
    lf = fact.filter(pl.col("t") > 2).join(dim, on="k", how="left")
    assert_same(lf, e)
    flt = node(e.explain(lf), "FILTER")
    assert "deferred" in flt and 'compact=["k"]' in flt
    monkeypatch.delenv("LADLE_STREAM_JOIN")
    assert_same(lf, e)
    text = e.explain(lf)
    assert "streams its left side" in node(text, "JOIN") and "deferred" not in node(text, "FILTER"), text
    monkeypatch.setenv("LADLE_STREAM_JOIN", "1")
    # a select over a filter: the predicate's own column is not compacted
    lf2 = fact.filter(pl.col("t") > 2).select(pl.col("x") * 2)
    assert_same(lf2, e)
    flt2 = node(e.explain(lf2), "FILTER")
    assert 'compact=["x"]' in flt2 and "deferred" not in flt2


def test_semi_join_reduction_of_a_group_by() -> None:
    r = np.random.default_rng(2)
    n = 200_000
    orders = pl.DataFrame({"o": r.integers(0, 50_000, n), "s": r.integers(0, 30, n)}).lazy()
    few = pl.DataFrame({"o": np.arange(0, 50_000, 997)}).lazy()
    multi = orders.group_by("o").agg(pl.col("s").n_unique().alias("ns")).filter(pl.col("ns") > 1)
    lf = few.join(multi, on="o", how="semi")
    e = ladle.Engine(threads=2, raise_on_fail=True)
    assert_same(lf, e, ordered=False)
    text = e.explain(lf)
    semi = node(text, "SEMI_FILTER")
    assert "semi-join reduction" in semi
    join = physical(text)[0]
    assert join.split(" ", 1)[1].startswith("JOIN semi") and f"feeds #{node_id(semi)}" in join
    # the reduced group-by does not take the pipeline (its input is cut first)
    assert node_id(node(text, "GROUP_BY")) < node_id(semi)


def test_top_k_and_union_limit() -> None:
    df = pl.DataFrame({"a": np.arange(10_000) % 977, "b": np.arange(10_000)}).lazy()
    e = ladle.Engine(threads=2, raise_on_fail=True)
    lf = df.sort(["a", "b"], descending=[True, False]).head(5)
    assert_same(lf, e)
    assert node(e.explain(lf), "TOP_K k=5")
    u = pl.concat([df, df, df]).head(12_000)
    assert_same(u, e)
    assert "inputs in order until 12000 rows" in node(e.explain(u), "UNION")


def test_group_by_pipeline_listed() -> None:
    r = np.random.default_rng(3)
    df = pl.DataFrame({"k": r.integers(0, 9, 200_000), "x": r.normal(size=200_000)}).lazy()
    lf = df.filter(pl.col("x") > 0).with_columns(y=pl.col("x") * 2).group_by("k").agg(pl.col("y").sum())
    e = ladle.Engine(threads=2, raise_on_fail=True)
    assert_same(lf, e, ordered=False)
    text = e.explain(lf)
    final = node(text, "GROUP_BY")
    assert "final step" in final
    part = node(text, "GROUP_BY_PARTIAL")
    assert node_id(part) == node_id(final) + 1
    assert "[pipelined]" in node(text, "FILTER") and "[pipelined]" in node(text, "WITH_COLUMNS")
    pipes = text.split("\npipelines:\n")[1].splitlines()
    assert pipes[0].strip().startswith("1. #") and "SCAN (its output)" in pipes[0]
    assert pipes[0].rstrip().endswith(f"#{node_id(part)} GROUP_BY_PARTIAL | (1 rank: no exchange) | #{node_id(final)} GROUP_BY_FINAL")
    assert "EXCHANGE" not in "\n".join(physical(text))
    # a median does not split: one GROUP_BY, no pipeline
    text2 = e.explain(df.group_by("k").agg(pl.col("x").median()))
    assert "GROUP_BY_PARTIAL" not in text2 and "\npipelines:\n  none" in text2


def test_streamed_joins_planned_for_ranks(tmp_path: Path) -> None:
    """Across ranks a join streamed from a big Parquet side broadcasts its small
    side and probes with each rank's own row groups (no exchange on the big
    side); the build side must be smaller by 8 times the other ranks, else both
    sides go through the run-time join exchange."""
    r = np.random.default_rng(5)
    pl.DataFrame({"k": r.integers(0, 500, 40_000), "v": r.integers(0, 9, 40_000)}).write_parquet(
        tmp_path / "big.parquet", row_group_size=4_000)
    pl.DataFrame({"k": np.arange(300), "name": [f"n{i}" for i in range(300)]}).write_parquet(tmp_path / "s.parquet")
    pl.DataFrame({"k": np.arange(3_000), "w": np.arange(3_000)}).write_parquet(tmp_path / "m.parquet")
    big, small, mid = (pl.scan_parquet(tmp_path / f) for f in ("big.parquet", "s.parquet", "m.parquet"))
    e = ladle.Engine(threads=2)
    for lf in (big.join(small, on="k"), big.join(small, on="k", how="anti"), small.join(big, on="k")):
        nodes = physical(e.explain(lf, ranks=2))
        join = next(x for x in nodes if " JOIN " in x)
        assert "streams its" in join, nodes
        assert sum("EXCHANGE broadcast" in x for x in nodes) == 1, nodes
        assert not any("EXCHANGE join" in x or "EXCHANGE hash" in x for x in nodes), nodes
    # 40,000 rows against 3,000: streamed at 2 ranks (8 x 1 x 3,000 <= 40,000), not at 3
    assert "streams its" in e.explain(big.join(mid, on="k"), ranks=2)
    three = e.explain(big.join(mid, on="k"), ranks=3)
    assert "streams its" not in three and sum("EXCHANGE join" in x for x in physical(three)) == 2


def test_job_order_planned_for_ranks() -> None:
    """Across ranks, where Polars defines the order of an operator whose rows cross
    ranks: a window sends its rows back (EXCHANGE return, no row positions); a
    maintain_order group-by or unique, an ordered full join and a union whose order
    something reads carry each row's place in the job (a UInt64 row index) and sort
    by it; one rank, or nothing reading the order, plans none of it."""
    r = np.random.default_rng(4)
    a = pl.DataFrame({"k": r.integers(0, 99, 1000), "x": r.normal(size=1000)}).lazy()
    b = pl.DataFrame({"k": np.arange(99), "y": np.arange(99)}).lazy()
    e = ladle.Engine(threads=2)
    pos = "__ladle_job_pos"

    def plan(lf: pl.LazyFrame, ranks: int) -> str:
        return e.explain(lf, ranks=ranks)

    w = plan(a.with_columns(pl.col("x").mean().over("k").alias("m")), 3)
    assert "EXCHANGE return of #" in w and "EXCHANGE hash" in w and pos not in w and "SORT" not in w, w
    for lf in (a.group_by("k", maintain_order=True).agg(pl.col("x").sum()),
               a.unique(subset=["k"], maintain_order=True),
               a.join(b, on="k", how="full", maintain_order="left_right"),
               pl.concat([a, a.filter(pl.col("x") > 0)]).head(5)):
        text = plan(lf, 2)
        assert pos in text and "ROW_INDEX" in text and "EXCHANGE range" in text, text
        assert pos not in plan(lf, 1), plan(lf, 1)
    # a union under an unordered group-by: its order is read by nothing
    u = plan(pl.concat([a, a.filter(pl.col("x") > 0)]).group_by("k").agg(pl.len()), 2)
    assert pos not in u, u
    # a join in its left side's order leaves the left rows where they are
    j = plan(a.join(b, on="k", how="left", maintain_order="left_right"), 2)
    assert pos not in j and "EXCHANGE broadcast" in j and "EXCHANGE hash" not in j, j


def test_exchanges_planned_for_ranks() -> None:
    r = np.random.default_rng(4)
    a = pl.DataFrame({"k": r.integers(0, 99, 1000), "x": r.normal(size=1000)}).lazy()
    b = pl.DataFrame({"k": np.arange(99), "y": np.arange(99)}).lazy()
    e = ladle.Engine(threads=2)
    g = e.explain(a.group_by("k").agg(pl.col("x").sum()), ranks=3)
    assert "3 ranks, as planned for them" in g
    nodes = physical(g)
    ops = [x.split(" ", 2)[1] for x in nodes]
    assert ops[:3] == ["GROUP_BY", "EXCHANGE", "GROUP_BY_PARTIAL"], nodes
    assert 'EXCHANGE hash by [col("k")' in nodes[1]
    assert "result: sharded" in g
    # a global aggregation: every rank the result
    red = e.explain(a.select(pl.col("x").mean()), ranks=2)
    assert "EXCHANGE broadcast" in red and "result: replicated" in red
    # sides of 1000 and 297 rows: no streamed join (8 x 297 > 1000), the run-time
    # join exchange on both
    j = e.explain(a.join(pl.concat([b, b, b]), on="k"), ranks=2)
    assert sum("EXCHANGE join by" in x for x in physical(j)) == 2
    # 1000 and 99 in memory: each rank's own rows, so sizes that differ from rank to
    # rank must not choose the plan (the ranks would run different exchanges): no
    # streamed join across ranks over in-memory frames
    j = physical(e.explain(a.join(b, on="k"), ranks=2))
    assert "streams" not in j[0] and sum("EXCHANGE join by" in x for x in j) == 2, j
    f = e.explain(a.join(b, on="k", how="full"), ranks=2)
    assert sum("EXCHANGE hash by" in x for x in physical(f)) == 2
    # aggregations inside row-wise expressions: computed from each rank's partial
    # row, the rows not moving; under a when/then or beside a median: broadcast
    norm = e.explain(a.with_columns((pl.col("x") - pl.col("x").mean()) / pl.col("x").std()), ranks=2)
    assert "partial row broadcast" in norm and "EXCHANGE" not in norm and "result: sharded" in norm
    sc = e.explain(a.select(pl.col("x").sum() / pl.col("k").sum()), ranks=2)
    assert "partial row broadcast" in sc and "result: replicated" in sc
    fl = e.explain(a.filter(pl.col("x") > pl.col("x").mean()), ranks=2)
    assert "partial row broadcast" in fl and "EXCHANGE" not in fl
    for lf in (a.select(pl.when(pl.col("k") > 3).then(pl.col("x") - pl.col("x").mean())),
               a.filter(pl.col("x") > pl.col("x").median())):
        t = e.explain(lf, ranks=2)
        assert "partial row broadcast" not in t and "EXCHANGE broadcast" in t, t
    so = e.explain(a.sort("x"), ranks=2)
    assert 'EXCHANGE range by [col("x")]' in so
    tk = e.explain(a.sort("x").head(3), ranks=2)
    assert "TOP_K (each rank's)" in tk and "EXCHANGE broadcast" in tk and "result: replicated" in tk
    d = e.explain(a.unique(subset="k"), ranks=2)
    assert "(each rank's) UNIQUE" in d and "EXCHANGE hash by the unique subset" in d
    # one rank: none
    assert "EXCHANGE" not in e.explain(a.join(b, on="k").group_by("k").agg(pl.col("x").sum()), ranks=1)
    with pytest.raises(ValueError, match="ranks"):
        e.explain(a, ranks=0)


@pytest.fixture(scope="module")
def tables() -> dict[str, pl.LazyFrame]:
    return {k: v.lazy() for k, v in load_all().items()}


@pytest.mark.parametrize("q", sorted(QUERIES))
def test_tpch_explains_for_ranks(q: int, tables: dict[str, pl.LazyFrame]) -> None:
    e = ladle.Engine(threads=2, raise_on_fail=True)
    lf = QUERIES[q](tables)
    one = e.explain(lf)
    many = e.explain(lf, ranks=4)
    assert "EXCHANGE" not in "\n".join(physical(one))
    ids = [node_id(x) for x in physical(one)]
    assert ids[0] == 1 and all(i >= 1 for i in ids)
    # every TPC-H query groups or joins: rows move between ranks
    assert any(" EXCHANGE " in f" {x}" for x in physical(many)), many
    assert "result: " in many


def pipelines(text: str) -> list[str]:
    return [x.strip() for x in text.split("\npipelines:\n")[1].splitlines() if x.strip().split(".")[0].isdigit()]


def chain_frame(n: int = 50_000) -> pl.DataFrame:
    r = np.random.default_rng(7)
    return pl.DataFrame(
        {
            "k": r.integers(0, 500, n),
            "x": pl.Series(r.normal(size=n)).set(pl.Series(r.random(n) < 0.1), None),
            "d": r.integers(-3, 4, n),
            "s": [f"s{i % 977}" for i in range(n)],
        }
    )


@pytest.mark.parametrize("morsel", [7, 1000, 65536])
def test_collected_pipeline_under_a_join_equals_polars(morsel: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # filter -> with_columns -> select -> filter: one pipeline into the join's
    # left input, morsel by morsel with no table in between (a whole join: by
    # default this join streams its left side, the chain then runs into it)
    monkeypatch.setenv("LADLE_STREAM_JOIN", "1")
    df = chain_frame()
    dim = pl.DataFrame({"k": np.arange(0, 500, 2), "name": [f"n{i}" for i in range(250)]}).lazy()
    lf = (
        df.lazy()
        .filter(pl.col("x") > -0.5)
        .with_columns(y=pl.col("x") * 2 + pl.col("d"), t=pl.col("s").str.to_uppercase())
        .select("k", "y", "t", "d")
        .filter(pl.col("d") != 0)
        .join(dim, on="k")
    )
    e = ladle.Engine(threads=2, morsel_rows=morsel, raise_on_fail=True)
    assert_same(lf, e)
    text = e.explain(lf)
    pipes = pipelines(text)
    assert len(pipes) == 1, text
    assert pipes[0].endswith("| collected") and "SCAN (its output)" in pipes[0], text
    # every node of the chain marked, the join's input the pipeline's top
    for start in ("FILTER", "WITH_COLUMNS", "SELECT"):
        assert "[pipelined]" in node(text, start), text
    assert "[pipelined]" not in node(text, "JOIN")


def test_pipeline_keeps_out_what_needs_the_columns_height() -> None:
    # a division after a filter depends on the whole column's height in
    # Polars' formula for a scalar divisor: that chain is not a pipeline
    df = chain_frame()
    lf = df.lazy().filter(pl.col("d") > 0).with_columns(q=pl.col("x") / pl.col("d")).select("k", "q").sort("k", "q")
    e = ladle.Engine(threads=2, morsel_rows=1000, raise_on_fail=True)
    assert_same(lf, e)
    assert pipelines(e.explain(lf)) == []
    # the same chain without the division streams
    lf2 = df.lazy().filter(pl.col("d") > 0).with_columns(q=pl.col("x") * pl.col("d")).select("k", "q").sort("k", "q")
    assert_same(lf2, e)
    assert len(pipelines(e.explain(lf2))) == 1


def test_pipeline_error_is_the_querys() -> None:
    # a strict cast that fails in one morsel fails the query with Polars' kind
    # of error, and the engine stays usable
    df = pl.DataFrame({"a": ["1", "2", "x", "4"] * 5000, "b": list(range(20_000))})
    lf = df.lazy().filter(pl.col("b") >= 0).with_columns(c=pl.col("a").cast(pl.Int64, strict=True)).select("c", "b").sort("b")
    e = ladle.Engine(threads=2, morsel_rows=1000, raise_on_fail=True)
    assert len(pipelines(e.explain(lf))) == 1
    with pytest.raises(ladle.LadleComputeError, match="strict cast of 'a' from str to i64 failed for value 'x'") as info:
        lf.collect(engine=e)
    # the kernel sees one morsel: a row number there is not the frame's, so
    # the message names the value only
    assert " row " not in str(info.value)
    ok = df.lazy().filter(pl.col("b") >= 0).with_columns(c=pl.col("b") * 2).select("c", "b").sort("b")
    assert_same(ok, e)
