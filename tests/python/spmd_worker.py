"""One rank of the multi-rank tests (test_spmd.py runs it under mpirun,
test_spmd_torch.py under torchrun with LADLE_SPMD_TORCH set).

Every rank runs the same queries on a ladle.SPMDEngine, gathers each result with
engine.allgather and compares it with Polars' CPU engine over the whole data (Polars
reads every file; for in-memory frames, every rank's frame concatenated). Each rank
writes what it found to <out>/rank<r>.json: {case: {"ok": bool, "why": str, ...}}.

    mpirun -np 3 python spmd_worker.py {tpch|diff|asym|kill} <data dir> <out dir>
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ladle  # noqa: E402


def compare(got: pl.DataFrame, expected: pl.DataFrame, ordered: bool) -> str:
    """'' when equal (in order when ordered), else why not."""
    try:
        assert_frame_equal(got, expected, check_row_order=ordered, rel_tol=1e-9)
        return ""
    except AssertionError as e:
        return str(e)[:2000]


def expect_comm_error(engine: ladle.SPMDEngine, name: str, lf: pl.LazyFrame, says: list[str],
                      found: dict[str, Any]) -> None:
    """Case `name`: executing lf must raise LadleCommError whose message holds every
    string of `says`."""
    try:
        engine.execute(lf)
        found[name] = {"ok": False, "why": "no error"}
    except ladle.LadleCommError as e:
        found[name] = {"ok": all(w in str(e) for w in says), "why": str(e)}
    except Exception as e:
        found[name] = {"ok": False, "why": f"{type(e).__name__}: {e}"}


def run_case(engine: ladle.SPMDEngine, name: str, lf: pl.LazyFrame, expected: pl.DataFrame,
             ordered: bool, sharded: bool | None, found: dict[str, Any]) -> None:
    t0 = time.perf_counter()
    try:
        res = engine.execute(lf)
        whole = engine.allgather(res).to_polars()
        why = compare(whole, expected, ordered)
        if not why and sharded is not None and engine.nranks > 1 and res.sharded != sharded:
            why = f"result sharded={res.sharded}, expected {sharded}"
        part = lf.collect(engine=engine)  # this rank's fragment, through collect()
        if not why and part.height != res.num_rows:
            why = f"collect() gave {part.height} rows, execute() {res.num_rows}"
        found[name] = {"ok": not why, "why": why, "rows": whole.height, "mine": res.num_rows,
                       "sharded": res.sharded, "s": round(time.perf_counter() - t0, 3),
                       "last_run": engine.last_run}
    except Exception as e:  # recorded: the test reports every failing case at once
        found[name] = {"ok": False, "why": f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"}


def tpch(engine: ladle.SPMDEngine, data: Path, found: dict[str, Any]) -> None:
    from tpch_queries import COLUMNS, QUERIES

    t = {name: pl.scan_parquet(sorted(str(p) for p in (data / name).glob("*.parquet"))) for name in COLUMNS}
    for q in sorted(QUERIES):
        lf = QUERIES[q](t)
        expected = lf.collect(engine="in-memory")
        run_case(engine, f"q{q}", lf, expected, ordered=True, sharded=None, found=found)


def frames(rank: int, nranks: int) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """This rank's frames and the whole job's (every rank's, rank order)."""

    def make(r: int) -> tuple[pl.DataFrame, pl.DataFrame]:
        g = np.random.default_rng(1000 + r)
        n = 3000 + 500 * r
        k = g.integers(0, 50, n)
        first = sum(3000 + 500 * q for q in range(r))
        a = pl.DataFrame({
            "id": pl.Series(range(first, first + n), dtype=pl.Int64),
            "k": pl.Series(k, dtype=pl.Int64),
            "k2": pl.Series(g.integers(0, 3, n), dtype=pl.Int32),
            "x": pl.Series(g.normal(size=n)),
            "i": pl.Series(g.integers(-1000, 1000, n), dtype=pl.Int64),
            "s": pl.Series([f"s{v % 37}" if v % 11 else None for v in g.integers(0, 10_000, n)]),
            "b": pl.Series(g.integers(0, 2, n) == 1),
        }).with_columns(pl.when(pl.col("i") % 7 == 0).then(None).otherwise(pl.col("x")).alias("x"))
        m = 40 + 3 * r
        b = pl.DataFrame({
            "k": pl.Series(g.integers(0, 60, m), dtype=pl.Int64),
            "name": [f"n{r}_{j}" for j in range(m)],
            "w": pl.Series(g.integers(0, 100, m), dtype=pl.Int32),
        })
        return a, b

    mine = make(rank)
    parts = [make(r) for r in range(nranks)]
    return mine[0], mine[1], pl.concat([p[0] for p in parts]), pl.concat([p[1] for p in parts])


# the column kernels (a GPU engine's path) take no partial steps: a projection's
# aggregations there take every row on every rank (replicated)
COLUMN_KERNELS = os.environ.get("LADLE_COLUMN_KERNELS") == "1"

QUERIES: dict[str, tuple[Callable[[pl.LazyFrame, pl.LazyFrame], pl.LazyFrame], bool, bool | None]] = {
    # name: (query over (a, b), ordered comparison, sharded result with several ranks)
    "scan": (lambda a, b: a, True, True),
    "filter_project": (lambda a, b: a.filter(pl.col("i") > 0).select("k", (pl.col("x") * 2).alias("y")), True, True),
    "group_by_sum": (lambda a, b: a.group_by("k").agg(pl.col("x").sum(), pl.len()), False, True),
    "group_by_many_aggs": (lambda a, b: a.group_by("k", "k2").agg(
        pl.col("x").mean().alias("mean"), pl.col("i").min().alias("mn"), pl.col("i").max().alias("mx"),
        pl.col("x").count().alias("cnt"), pl.col("s").n_unique().alias("nu"), pl.col("x").std().alias("sd"),
    ), False, True),
    "group_by_string_key": (lambda a, b: a.group_by("s").agg(pl.col("i").sum()), False, True),
    "group_by_median": (lambda a, b: a.group_by("k2").agg(pl.col("x").median(), pl.col("i").first()), False, None),
    "global_agg": (lambda a, b: a.select(pl.col("x").sum(), pl.col("i").mean(), pl.len()), True, False),
    "global_std": (lambda a, b: a.select(pl.col("x").std().alias("sd"), pl.col("x").var().alias("v")), True, False),
    # aggregations that split: each rank's partial row broadcast, then the final step
    "global_partials": (lambda a, b: a.select(
        pl.col("x").min().alias("mn"), pl.col("i").max().alias("mx"), pl.col("s").first().alias("f"),
        pl.col("x").last().alias("l"), pl.col("x").count().alias("c"), pl.col("x").null_count().alias("nc"),
        pl.col("x").mean().alias("m"), pl.col("b").sum().alias("bs")), True, False),
    # var/std combined from each rank's (count, mean, m2), rank 0 without rows,
    # values far from 0 (a naive sum of squares would lose them)
    "global_std_partials": (lambda a, b: a.filter(pl.col("id") >= 3000).select(
        pl.col("x").std().alias("sd"), pl.col("i").var(ddof=0).alias("v0"),
        (pl.col("x") + 1e8).std().alias("shifted")), True, False),
    "global_std_one_row": (lambda a, b: a.filter(pl.col("id") == 3001).select(
        pl.col("i").std().alias("null"), pl.col("i").var(ddof=0).alias("zero")), True, False),
    # rank 0 holds no row after the filter: its (empty) partial must not lead first()
    "global_first_not_on_rank0": (lambda a, b: a.filter(pl.col("id") >= 3000).select(
        pl.col("i").first(), pl.col("s").first().alias("s1"), pl.col("x").sum(), pl.len()), True, False),
    "group_by_no_keys": (lambda a, b: a.group_by(pl.lit(1).alias("one")).agg(pl.col("x").sum()), True, None),
    "join_inner": (lambda a, b: a.join(b, on="k"), False, True),
    "join_left": (lambda a, b: a.join(b, on="k", how="left"), False, True),
    "join_right": (lambda a, b: a.join(b, on="k", how="right"), False, True),
    "join_full": (lambda a, b: a.join(b, on="k", how="full", coalesce=True), False, True),
    "join_semi": (lambda a, b: a.join(b, on="k", how="semi"), False, True),
    "join_anti": (lambda a, b: a.join(b, on="k", how="anti"), False, True),
    "join_cross": (lambda a, b: a.head(20).join(b.head(5), how="cross"), False, None),
    # one side on every rank already (a global aggregation), the other sharded: the
    # replicated side is cut to each rank's hash part, never hashed from every rank
    # (each rank's copy would arrive: rows doubled at 2 ranks)
    "join_replicated_left": (lambda a, b: a.select(pl.col("k").max()).join(a, on="k", how="left"), False, True),
    "join_replicated_full": (lambda a, b: a.select(pl.col("k").max()).join(a, on="k", how="full", coalesce=True),
                             False, True),
    "join_replicated_right": (lambda a, b: a.join(a.select(pl.col("k").max()), on="k", how="right"), False, True),
    # a select of literals only: one row, the same on every rank (replicated); what
    # reads it sees one row (Polars folds some such selects into a frame of one row
    # before ladle sees them: that frame is then each rank's own, as any in-memory
    # frame is)
    "select_literals": (lambda a, b: a.select(pl.lit(1).alias("one"), (pl.lit("x") + "y").alias("s")), True, False),
    "count_of_literal_select": (lambda a, b: a.filter(pl.col("i") > 0).select((pl.lit("x") + "y").alias("s"))
                                .select(pl.col("s").count(), pl.len()), True, False),
    # a union of a replicated input and sharded ones: the replicated rows once, on rank 0
    "union_replicated": (lambda a, b: pl.concat([a.select(pl.col("k").max(), pl.col("i").sum()), a.select("k", "i")]),
                         False, True),
    "union_replicated_row_index": (lambda a, b: pl.concat([a.select(pl.col("k").max(), pl.col("i").sum()),
                                                           a.select("k", "i")]).with_row_index("r"), True, True),
    "join_replicated_anti": (lambda a, b: a.select((pl.col("k").max() + 1000).alias("k"))
                             .join(a, on="k", how="anti"), False, True),
    "join_two_keys": (lambda a, b: a.join(b.rename({"w": "k2"}).with_columns(pl.col("k2") % 3),
                                           on=["k", "k2"]), False, True),
    # both sides large: hashed by the keys (a small right side is broadcast at run time)
    "join_large_sides": (lambda a, b: a.join(a.select("id", (pl.col("i") * 2).alias("i2")), on="id"), False, True),
    "join_then_group": (lambda a, b: a.join(b, on="k").group_by("name").agg(pl.col("x").sum()), False, True),
    "unique": (lambda a, b: a.select("k", "k2").unique(), False, True),
    "unique_first": (lambda a, b: a.unique(subset=["k"], keep="first").select("k", "i"), False, True),
    "unique_last": (lambda a, b: a.unique(subset=["k"], keep="last").select("k", "i"), False, True),
    "unique_none": (lambda a, b: a.unique(subset=["i"], keep="none").select("i"), False, True),
    "sort": (lambda a, b: a.sort("i", "k", "id"), True, True),
    "sort_desc_nulls": (lambda a, b: a.sort(["x", "i", "id"], descending=[True, False, True], nulls_last=True), True, True),
    "sort_string": (lambda a, b: a.sort("s", "id"), True, True),
    "top_k": (lambda a, b: a.sort("i", "id").head(25), True, False),
    "sort_slice": (lambda a, b: a.sort("k", "id", descending=True).slice(100, 50), True, None),
    "head": (lambda a, b: a.head(4000), True, True),
    "slice": (lambda a, b: a.slice(2900, 700), True, True),
    "tail": (lambda a, b: a.tail(100), True, True),
    "row_index": (lambda a, b: a.with_row_index("r").filter(pl.col("k") == 3), True, True),
    # a window keeps the rows in the job's order (Polars' order): hashed by the
    # keys, then sorted back by each row's place in the job (translate.py
    # _in_job_order)
    "window": (lambda a, b: a.select("k", "i", pl.col("x").sum().over("k").alias("w")), True, None),
    # windows by one set of key columns: the rows hashed by them (sharded result);
    # row order inside a partition is the job's (first(), rank())
    # running functions per window group: hashed by the keys as windows are (each
    # group's rows in the job's order on one rank), then back to their ranks
    "running_by_keys": (lambda a, b: a.with_columns(
        pl.col("x").cum_sum().over("k", "k2").alias("cs"), pl.col("i").shift(1).over("k", "k2").alias("lag"),
        (pl.col("i") - pl.col("i").shift(2)).over("k", "k2").alias("d2"),
        pl.col("x").cum_count(reverse=True).over("k", "k2").alias("left")), True, True),
    # over the whole frame: every row on every rank, in the job's order (replicated)
    "running_frame": (lambda a, b: a.select("id", pl.col("x").cum_max().alias("m"), pl.col("i").diff().alias("d"),
                                            pl.col("i").shift(-3, fill_value=0).alias("lead")), True, False),
    "window_by_keys": (lambda a, b: a.with_columns(
        (pl.col("x") - pl.col("x").mean().over("k", "k2")).alias("dx"),
        pl.col("i").first().over("k", "k2").alias("f"), pl.len().over("k", "k2").alias("n"),
        pl.col("i").rank("ordinal").over("k", "k2").alias("r")), True, True),
    # windows by different keys (or beside a global aggregation): every row on every rank
    "window_two_keys": (lambda a, b: a.select("id", pl.col("x").sum().over("k").alias("a"),
                                              pl.col("x").sum().over("k2").alias("b")), True, False),
    "window_and_global": (lambda a, b: a.select("id", (pl.col("i").sum().over("k") / pl.col("i").sum()).alias("share")),
                          True, False),
    "window_head": (lambda a, b: a.with_columns(pl.col("i").max().over("k").alias("m")).head(77), True, None),
    "window_filter": (lambda a, b: a.filter(pl.col("i") > pl.col("i").mean().over("k2")).select("id", "i"), True, None),
    # a union: the inputs one after the other (sorted by input and place in the job)
    "union": (lambda a, b: pl.concat([a.select("k"), b.select("k")]), True, True),
    "union_head": (lambda a, b: pl.concat([a.select("k", "i").filter(pl.col("i") > 900), b.select("k", pl.col("w")
                                           .cast(pl.Int64).alias("i"))]).head(90), True, None),
    # ... not when nothing above reads the order (an unordered group-by)
    "union_grouped": (lambda a, b: pl.concat([a.select("k"), b.select("k")]).group_by("k").agg(pl.len()), False, True),
    # group_by / unique with maintain_order: the job's first-appearance order
    "group_by_maintain_order": (lambda a, b: a.group_by("k", maintain_order=True).agg(pl.col("i").sum(),
                                pl.col("s").first(), pl.len()), True, True),
    "group_by_maintain_order_list": (lambda a, b: a.group_by("k2", "b", maintain_order=True).agg(pl.col("i")),
                                     True, True),
    "group_by_maintain_order_head": (lambda a, b: a.group_by("s", maintain_order=True).agg(pl.col("x").max())
                                     .head(5), True, None),
    "unique_maintain_order": (lambda a, b: a.unique(subset=["k"], keep="first", maintain_order=True)
                              .select("k", "i"), True, True),
    "unique_maintain_order_last": (lambda a, b: a.select("k", "k2", "i").unique(subset=["k", "k2"], keep="last",
                                   maintain_order=True), True, True),
    "unique_maintain_order_rows": (lambda a, b: a.select("k", "k2").unique(maintain_order=True), True, True),
    # ordered joins: one side's rows stay where they are (the other broadcast), or
    # both sides' places in the job sorted by
    "join_left_ordered": (lambda a, b: a.join(b, on="k", how="left", maintain_order="left_right"), True, True),
    "join_inner_right_ordered": (lambda a, b: a.join(b, on="k", maintain_order="right_left"), True, True),
    "join_right_ordered": (lambda a, b: a.join(b, on="k", how="right", maintain_order="right_left"), True, True),
    "join_full_ordered": (lambda a, b: a.join(b, on="k", how="full", maintain_order="left_right"), True, True),
    "join_full_right_ordered": (lambda a, b: a.join(b, on="k", how="full", maintain_order="right_left"), True, True),
    "join_left_by_right": (lambda a, b: a.join(b, on="k", how="left", maintain_order="right_left"), True, True),
    "join_right_by_left": (lambda a, b: a.join(b, on="k", how="right", maintain_order="left_right"), True, True),
    "join_replicated_left_ordered": (lambda a, b: a.select(pl.col("k").max()).join(a, on="k", how="left",
                                     maintain_order="left_right").select("k", "id"), True, None),
    "sort_after_group": (lambda a, b: a.group_by("k").agg(pl.col("i").sum()).sort("k"), True, True),
    # aggregations that split inside row-wise expressions: computed from each rank's
    # partial row, the rows staying where they are (sharded), or a select of single
    # values (replicated)
    "filter_by_mean": (lambda a, b: a.filter(pl.col("i") > pl.col("i").mean()).select("id", "i"), True,
                       not COLUMN_KERNELS),
    "normalize": (lambda a, b: a.with_columns(((pl.col("x") - pl.col("x").mean()) / pl.col("x").std()).alias("z"),
                                             (pl.col("i") / pl.col("i").sum()).alias("share"),
                                             (pl.col("i") - pl.col("i").first()).alias("d"), pl.len().alias("n"),
                                             pl.col("x").null_count().alias("nc")), True, not COLUMN_KERNELS),
    "scalar_expressions": (lambda a, b: a.select((pl.col("x").sum() / pl.col("i").sum()).alias("r"),
                                                 (pl.col("i").max() - pl.col("i").min()).alias("range"),
                                                 (pl.col("x").var() * 2).alias("v2")), True, False),
    "filter_after_empty": (lambda a, b: a.filter(pl.col("id") >= 3000).filter(
        pl.col("x") < pl.col("x").mean() - pl.col("x").std()).select("id"), True, not COLUMN_KERNELS),
    # under a when/then (computed only where rows take the branch) or beside a
    # median: every row on every rank, as before
    "agg_in_branch": (lambda a, b: a.select("id", pl.when(pl.col("i") > 0).then(pl.col("x") - pl.col("x").mean())
                                            .otherwise(0.0).alias("w")), True, False),
    "sort_by_deviation": (lambda a, b: a.sort((pl.col("i") - pl.col("i").mean()).abs(), "id").head(30), True, False),
    "group_by_agg_key": (lambda a, b: a.with_columns((pl.col("i") > pl.col("i").median()).alias("big"))
                         .group_by("big").agg(pl.len()), False, False),
    "empty_filter": (lambda a, b: a.filter(pl.col("i") > 10_000).group_by("k").agg(pl.len()), False, True),
}


def many_groups(r: int) -> pl.DataFrame:
    """Rank r's rows for the many-groups cases: 150,000 + 7,000 r rows (three
    morsels of 65,536 or more), keys mostly distinct, some repeated across ranks."""
    g = np.random.default_rng(2000 + r)
    n = 150_000 + 7_000 * r
    k = g.integers(0, 400_000, n)
    v = g.integers(-1000, 1000, n)
    return pl.DataFrame({
        "k": pl.Series(k, dtype=pl.Int64),
        "ks": pl.Series([f"k{x % 5}" for x in k]),
        "i32": pl.Series(v, dtype=pl.Int32),
        "f32": pl.Series(g.normal(size=n), dtype=pl.Float32),
        "x": pl.Series(g.normal(size=n)),
        "b": pl.Series(v % 3 == 0),
        "s": pl.Series([f"s{x}" for x in v]),
    }).with_columns(
        pl.when(pl.col("i32") % 7 == 0).then(None).otherwise(pl.col("x")).alias("x"),
        pl.when(pl.col("i32") % 5 == 0).then(None).otherwise(pl.col("s")).alias("s"))


MANY_GROUPS: dict[str, Callable[[pl.LazyFrame], pl.LazyFrame]] = {
    "many_groups_aggs": lambda f: f.group_by("k").agg(
        pl.col("i32").sum().alias("si"), pl.col("f32").max().alias("sf"), pl.col("b").sum().alias("sb"),
        pl.col("x").mean().alias("m"), pl.col("i32").mean().alias("mi"), pl.col("x").min().alias("mn"),
        pl.col("s").max().alias("mx"), pl.col("s").first().alias("fs"), pl.col("x").last().alias("lx"),
        pl.col("x").count().alias("c"), pl.col("s").null_count().alias("nc"), pl.len()),
    "many_groups_two_keys": lambda f: f.group_by("k", "ks").agg(pl.col("x").sum(), pl.col("s").min()),
    "many_groups_maintain_order": lambda f: f.group_by("k", maintain_order=True).agg(
        pl.col("i32").first(), pl.col("s").last(), pl.len()),
    # every row moved by a range exchange: at 2 ranks about 78,000 rows a destination,
    # packed and unpacked in pieces of 65,536 (exchange.c PIECE_ROWS), nulls included
    "many_groups_rows_sorted": lambda f: f.sort("k"),
}


STREAMED_JOINS: dict[str, Callable[[pl.LazyFrame, pl.LazyFrame], pl.LazyFrame]] = {
    "streamed_inner": lambda big, small: big.join(small, on="k"),
    "streamed_left": lambda big, small: big.join(small, on="k", how="left"),
    "streamed_semi": lambda big, small: big.join(small, on="k", how="semi"),
    "streamed_anti": lambda big, small: big.join(small, on="k", how="anti"),
    # the small side on the left: the big right side probes
    "streamed_right_probe": lambda big, small: small.join(big, on="k").select("k", "name", "v"),
    # a semi or anti join of the small side by the big one: the small side
    # broadcast, each rank's row groups mark it, the marks summed across ranks and
    # each rank keeping its slice of the kept rows (op_join.c, "marked")
    "marked_semi": lambda big, small: small.join(big, on="k", how="semi"),
    "marked_anti": lambda big, small: small.join(big, on="k", how="anti"),
    "marked_semi_ordered": lambda big, small: small.join(big.filter(pl.col("v") > 60), on="k", how="semi",
                                                         maintain_order="left"),
    "marked_anti_ordered": lambda big, small: small.join(big.filter(pl.col("v") > 60), on="k", how="anti",
                                                         maintain_order="left"),
    # two joins in one chain, then a group-by across ranks
    "streamed_chain_group": lambda big, small: big.join(small, on="k").join(
        small.select(pl.col("k").alias("k2"), pl.col("name").alias("n2")), on="k2", how="left")
        .group_by("name").agg(pl.col("v").sum(), pl.len()),
}


def streamed_joins(engine: ladle.SPMDEngine, data: Path, found: dict[str, Any]) -> None:
    """Joins streamed from a big Parquet side: the small side is broadcast and each
    rank probes with its own row groups (physical.c plan_join). Every rank writes
    the same files into a directory of its own and scans its copy: the row groups
    dealt across ranks then make up the whole once."""
    g = np.random.default_rng(77)
    n = 40_000
    big = pl.DataFrame({"k": pl.Series(g.integers(0, 500, n), dtype=pl.Int64),
                        "k2": pl.Series(g.integers(0, 400, n), dtype=pl.Int64),
                        "v": pl.Series(g.integers(-100, 100, n), dtype=pl.Int64)})
    big = big.with_columns(pl.when(pl.col("v") % 9 == 0).then(None).otherwise(pl.col("k")).alias("k"))
    small = pl.DataFrame({"k": pl.Series(np.arange(0, 600, 2), dtype=pl.Int64),
                          "name": [f"n{i % 17}" for i in range(300)]})
    mine = data / f"streamed-{engine.rank}"
    mine.mkdir(parents=True, exist_ok=True)
    for i in range(2):  # two files of ten row groups
        big.slice(i * n // 2, n // 2).write_parquet(mine / f"big{i}.parquet", row_group_size=2_000)
    small.write_parquet(mine / "small.parquet")
    # two row groups: with three ranks one rank probes with none (it still takes
    # part in the build side's broadcast)
    big.head(4_000).write_parquet(mine / "few.parquet", row_group_size=2_000)
    small.head(40).write_parquet(mine / "tiny.parquet")
    bl, sl = pl.scan_parquet(str(mine / "big*.parquet")), pl.scan_parquet(str(mine / "small.parquet"))
    cases = [(name, q, bl, sl, big, small) for name, q in STREAMED_JOINS.items()]
    cases.append(("streamed_few_row_groups", STREAMED_JOINS["streamed_left"], pl.scan_parquet(str(mine / "few.parquet")),
                  pl.scan_parquet(str(mine / "tiny.parquet")), big.head(4_000), small.head(40)))
    cases.append(("marked_few_row_groups", STREAMED_JOINS["marked_anti_ordered"],
                  pl.scan_parquet(str(mine / "few.parquet")), pl.scan_parquet(str(mine / "tiny.parquet")),
                  big.head(4_000), small.head(40)))
    # a window across ranks over a Parquet file's strings: the scan hands the result's
    # strings on as views, which the window's exchange combined as if they were
    # offsets (a crash: spmd_fuzz --parquet, seed 62 case 6)
    strs = small.with_columns((pl.col("k") % 7).alias("g"))
    strs.write_parquet(mine / "strs.parquet", row_group_size=20)
    win = pl.scan_parquet(str(mine / "strs.parquet")).with_columns(pl.col("k").median().over("g").alias("m"))
    run_case(engine, "window_over_parquet_strings", win,
             strs.lazy().with_columns(pl.col("k").median().over("g").alias("m")).collect(), True, True, found)
    for name, q, bl, sl, bw, sw in cases:
        run_case(engine, name, q(bl, sl), q(bw.lazy(), sw.lazy()).collect(engine="in-memory"),
                 "ordered" in name or name == "marked_few_row_groups", True, found)
        if name.startswith("marked") and os.environ.get("LADLE_COLUMN_KERNELS") != "1":
            text = engine.explain(q(bl, sl))
            if "into marks" not in text:
                found[name] = {"ok": False, "why": "not marked by the big side:\n" + text}
        if engine.nranks > 1 and os.environ.get("LADLE_COLUMN_KERNELS") != "1":  # no streamed joins there
            text = engine.explain(q(bl, sl))
            ok = "streams its" in text and "EXCHANGE broadcast" in text and "EXCHANGE join" not in text
            found[name + "_explain"] = {"ok": ok, "why": "" if ok else text}
    # ranks that plan one query differently (here: streamed joins turned off on
    # rank 1 alone) fail alike with a clear error before any exchange, and the
    # engine goes on
    if engine.nranks > 1 and os.environ.get("LADLE_COLUMN_KERNELS") != "1":
        q = STREAMED_JOINS["streamed_inner"](pl.scan_parquet(str(mine / "big*.parquet")),
                                             pl.scan_parquet(str(mine / "small.parquet")))
        if engine.rank == 1:
            os.environ["LADLE_STREAM_JOIN"] = "0"
        try:
            expect_comm_error(engine, "planned_differently", q, ["planned this query's exchanges differently", "1"],
                              found)
        finally:
            os.environ.pop("LADLE_STREAM_JOIN", None)
        run_case(engine, "after_planned_differently", q,
                 STREAMED_JOINS["streamed_inner"](big.lazy(), small.lazy()).collect(engine="in-memory"),
                 False, True, found)


def diff(engine: ladle.SPMDEngine, data: Path, found: dict[str, Any]) -> None:
    a, b, wa, wb = frames(engine.rank, engine.nranks)
    for name, (q, ordered, sharded) in QUERIES.items():
        expected = q(wa.lazy(), wb.lazy()).collect(engine="in-memory")
        run_case(engine, name, q(a.lazy(), b.lazy()), expected, ordered, sharded, found)
    # groups about as many as rows over several morsels: after the first morsel
    # each row goes to the exchange as a partial row of its own (op_group_by_partial.c
    # pass_rows); every aggregation that splits, nulls, string keys and values
    ha, hwa = many_groups(engine.rank), pl.concat([many_groups(r) for r in range(engine.nranks)])
    passed = engine.stats()["partial_rows_passed"]
    for name, q in MANY_GROUPS.items():
        run_case(engine, name, q(ha.lazy()), q(hwa.lazy()).collect(engine="in-memory"),
                 "maintain_order" in name, True, found)
    passed = engine.stats()["partial_rows_passed"] - passed
    ok = (passed > 0) == (engine.nranks > 1 and os.environ.get("LADLE_COLUMN_KERNELS") != "1")
    found["many_groups_passed"] = {"ok": ok, "why": "" if ok else f"{passed} rows passed on"}
    streamed_joins(engine, data, found)
    small_left_inner_join(engine, found)
    copartitioned_joins(engine, found)
    hashed_join_partitions(engine, found)
    transfer_across_ranks(engine, found)
    # rank 0's in-memory frame without rows: every rank plans alike (a frame of which
    # Polars keeps no column is scanned as one column of nulls on every rank; rank 0
    # had planned a scan of no columns: "ranks ran different queries")
    ea, wea = (a.head(0) if engine.rank == 0 else a), wa.slice(3000)  # rank 0 holds 3,000 rows
    for name, q in {"empty_rank_len": lambda x: x.select(pl.len()),
                    "empty_rank_count_where": lambda x: x.filter(pl.col("i") > 0).select(pl.len().alias("n")),
                    "empty_rank_cross_len": lambda x: x.select("k").join(x.select(pl.len()), how="cross")
                    .group_by("k").agg(pl.len()),
                    # a select of literals is one row in all (Polars' fast projection
                    # made it a frame of one row on every rank)
                    "literal_select": lambda x: x.select(pl.lit(7).alias("seven"), pl.lit(None, dtype=pl.String)),
                    "literal_select_concat": lambda x: pl.concat(
                        [x.select(pl.col("k").cast(pl.String)), x.select(pl.lit(None, dtype=pl.String).alias("k"))])
                    .with_columns(pl.col("k").str.len_bytes().alias("n"))}.items():
        run_case(engine, name, q(ea.lazy()), q(wea.lazy()).collect(engine="in-memory"), False, None, found)
    # a sort over ranks of at most one row each: Polars' optimizer drops a sort over
    # such a frame (sort_collapse), on every rank alike, and the ranks' rows came back
    # unsorted (spmd_fuzz seed 41); rank 0 holds none, the others one each, descending
    tiny = pl.DataFrame({"d": [] if engine.rank == 0 else [-engine.rank * 10**17], "r": [] if engine.rank == 0 else [engine.rank]},
                        schema={"d": pl.Int64, "r": pl.Int64})
    wtiny = pl.DataFrame({"d": [-r * 10**17 for r in range(1, engine.nranks)], "r": list(range(1, engine.nranks))},
                         schema={"d": pl.Int64, "r": pl.Int64})
    for name, q in {"sort_tiny_frames": lambda x: x.sort("d"),
                    "sort_tiny_frames_then_head": lambda x: x.sort("d", maintain_order=True).head(5)}.items():
        run_case(engine, name, q(tiny.lazy()), q(wtiny.lazy()).collect(engine="in-memory"), True, None, found)
    # spmd_fuzz's findings at 3 ranks, replayed (each rank cuts qfuzz's tables as
    # spmd_fuzz does): 41:1228 a sort Polars dropped over ranks of at most one row
    # (unsorted rows), 46:1651 joins Polars reordered by one rank's frame heights
    # ("different queries"); both from Polars' optimizer reading rank-local frames;
    # 48:186 a join whose order a last() above reads, which Polars' order pass
    # dropped once slice pushdown was off (SPMDEngine turns the pass off too)
    if engine.nranks == 3:
        from spmd_fuzz import run_found

        # (as qfuzz drew them then: tests/data/spmd_fuzz/found.json)
        for seed, index in ((41, 1228), (46, 1651), (48, 186)):
            r = run_found(engine, f"{seed}:{index}")
            found[f"fuzz_{seed}_{index}"] = {"ok": r["outcome"] == "equal", "why": str(r)[:1500]}
    # allgather of a polars frame: every rank's rows in rank order
    try:
        got = engine.allgather(a)
        found["allgather_frame"] = {"ok": got.equals(wa), "why": "" if got.equals(wa) else f"{got.shape} vs {wa.shape}"}
    except Exception as e:
        found["allgather_frame"] = {"ok": False, "why": repr(e)}
    # persisted_to_torch: a sharded result is this rank's rows, unchanged; a replicated
    # one (a top-k) is cut down to this rank's torch.chunk share of it
    try:
        import torch

        res = engine.execute(a.lazy().select("id", "k"))
        t = ladle.persisted_to_torch(res, engine=engine, ensure_sharded=True)
        ok = torch.equal(t["id"], torch.from_numpy(a["id"].to_numpy().copy()))
        why = "" if ok else f"sharded result: ids {t['id'][:5].tolist()}.. vs {a['id'][:5].to_list()}.."
        if ok:
            top = QUERIES["top_k"][0]
            res = engine.execute(top(a.lazy(), b.lazy()))
            whole = torch.from_numpy(top(wa.lazy(), wb.lazy()).collect()["id"].to_numpy().copy())
            replicated = not res.sharded
            t = ladle.persisted_to_torch(res, engine=engine, columns=["id"], ensure_sharded=True)
            parts = torch.chunk(whole, engine.nranks)
            want = parts[engine.rank] if engine.rank < len(parts) else whole[:0]
            ok = replicated and torch.equal(t["id"], want)
            why = "" if ok else f"replicated={replicated}: {t['id'].tolist()} vs {want.tolist()}"
        found["persisted_to_torch"] = {"ok": ok, "why": why}
    except Exception as e:
        found["persisted_to_torch"] = {"ok": False, "why": repr(e)}
    # every carried type through the packed exchange (a range exchange moves
    # every column): validity, fixed widths, strings, binaries, lists
    def typed(x: pl.DataFrame) -> pl.DataFrame:
        return x.select(
            "id", "k", "s", "b",
            pl.col("i").cast(pl.Date).alias("d"),
            pl.col("i").cast(pl.Decimal(12, 2)).alias("dec"),
            pl.col("s").cast(pl.Binary).alias("bin"),
            pl.when(pl.col("i") % 5 == 0).then(None).otherwise(pl.col("i").cast(pl.Int16)).alias("i16"),
            pl.col("s").str.split("1").alias("lst"),
        )

    ta, twa = typed(a), typed(wa)
    for name, q in {"exchange_types_sort": lambda x: x.sort("k", "id"),
                    "exchange_types_group": lambda x: x.group_by("k").agg(pl.col("dec").first(), pl.col("bin").last(),
                                                                         pl.col("lst").first(), pl.len())}.items():
        run_case(engine, name, q(ta.lazy()), q(twa.lazy()).collect(), name.endswith("sort"), True, found)
    # explain names the exchanges
    text = engine.explain(a.lazy().group_by("k").agg(pl.col("x").sum()))
    ok = ("EXCHANGE hash" in text) == (engine.nranks > 1)
    found["explain"] = {"ok": ok, "why": "" if ok else text}
    # windows by one key set hash the rows by it, and send them back where they came from
    text = engine.explain(a.lazy().with_columns(pl.col("x").mean().over("k").alias("m")))
    ok = engine.nranks == 1 or ("EXCHANGE hash" in text and "EXCHANGE return" in text and "broadcast" not in text
                                and "SORT" not in text)
    found["explain_window_hash"] = {"ok": ok, "why": "" if ok else text}
    # ... so each rank holds its own rows after a window, in their order
    try:
        res = engine.execute(a.lazy().with_columns(pl.col("i").sum().over("k").alias("w")))
        mine = res.to_polars()
        ok = mine.drop("w").equals(a)
        found["window_rows_stay"] = {"ok": ok, "why": "" if ok else f"{mine.shape} vs {a.shape}"}
    except Exception as e:
        found["window_rows_stay"] = {"ok": False, "why": repr(e)}
    # a select of aggregations that split moves partial rows, not every row
    text = engine.explain(a.lazy().select(pl.col("x").sum(), pl.col("i").mean(), pl.len()))
    ok = engine.nranks == 1 or ("GROUP_BY_PARTIAL" in text and "EXCHANGE broadcast" in text)
    if os.environ.get("LADLE_COLUMN_KERNELS") == "1":  # no partial steps there yet: every row
        ok = engine.nranks == 1 or ("EXCHANGE broadcast" in text and "GROUP_BY_PARTIAL" not in text)
    found["explain_global_partials"] = {"ok": ok, "why": "" if ok else text}
    # aggregations inside row-wise expressions: no exchange of the rows
    text = engine.explain(a.lazy().with_columns((pl.col("x") - pl.col("x").mean()).alias("d")))
    ok = engine.nranks == 1 or ("partial row broadcast" in text and "EXCHANGE" not in text)
    if os.environ.get("LADLE_COLUMN_KERNELS") == "1":
        ok = engine.nranks == 1 or "EXCHANGE broadcast" in text
    found["explain_global_aggs"] = {"ok": ok, "why": "" if ok else text}


def asym(engine: ladle.SPMDEngine, data: Path, found: dict[str, Any]) -> None:
    """Rank 1 runs another query: every rank raises LadleCommError naming it, and
    the engine goes on with the next (symmetric) query; then queries that fail on
    one rank (failed_query)."""
    a, b, wa, wb = frames(engine.rank, engine.nranks)
    lf = a.lazy().group_by("k").agg(pl.col("x").sum())
    if engine.rank == 1:
        lf = a.lazy().group_by("k2").agg(pl.col("i").max())
    expect_comm_error(engine, "asym", lf, ["rank 1", "different queries"], found)
    q = QUERIES["group_by_sum"]
    expected = q[0](wa.lazy(), wb.lazy()).collect(engine="in-memory")
    run_case(engine, "after_asym", q[0](a.lazy(), b.lazy()), expected, False, True, found)
    failed_query(engine, found)


def expect_failure(engine: ladle.SPMDEngine, name: str, lf: pl.LazyFrame, found: dict[str, Any],
                   check: Callable[[Exception, str], bool]) -> None:
    """Case `name`: executing lf must raise, within 20 s (not at a timeout), an
    exception e whose "<type>: <message>" text passes check(e, text)."""
    t0 = time.perf_counter()
    try:
        engine.execute(lf)
        found[name] = {"ok": False, "why": "no error"}
    except Exception as e:
        took, text = time.perf_counter() - t0, f"{type(e).__name__}: {e}"
        found[name] = {"ok": took < 20 and check(e, text), "why": text, "s": round(took, 3)}


def small_left_inner_join(engine: ladle.SPMDEngine, found: dict[str, Any]) -> None:
    """An inner join of a small left side (30 rows a rank) and a big right side of
    strings (20,000 rows a rank): the left side is broadcast at run time and the
    right rows stay (op_join.c), so a rank sends about its left rows' bytes to each
    other rank, not half of its right rows; the answer equals Polars'. A left join of
    the same sides must hash both (each left row on one rank) and still be right. (The
    column kernels, a GPU engine's path, hash both sides of either.)"""
    n, r = engine.nranks, engine.rank

    def left(q: int) -> pl.DataFrame:
        return pl.DataFrame({"k": np.arange(q * 30, q * 30 + 30, dtype=np.int64) * 7 % 997,
                             "tag": [f"t{q}-{i}" for i in range(30)]})

    def right(q: int) -> pl.DataFrame:
        g = np.random.default_rng([5, q])
        return pl.DataFrame({"k": g.integers(0, 997, 20_000, dtype=np.int64),
                             "text": [f"{'x' * 40}{i}" for i in range(20_000)]})

    wl, wr = pl.concat([left(q) for q in range(n)]), pl.concat([right(q) for q in range(n)])
    # the column kernels' joins (a GPU engine's) hash both sides of every join exchange
    decides = n > 1 and os.environ.get("LADLE_COLUMN_KERNELS") != "1"
    for how in ("inner", "left"):
        name = f"small_left_{how}_join"
        try:
            lf = left(r).lazy().join(right(r).lazy(), on="k", how=how)
            b0 = engine.stats()["exchange_bytes"]
            res = engine.execute(lf)
            moved = engine.stats()["exchange_bytes"] - b0
            why = compare(engine.allgather(res).to_polars(),
                          wl.lazy().join(wr.lazy(), on="k", how=how).collect(engine="in-memory"), False)
            # the right side's text alone is 20,000 x 45 bytes a rank
            if not why and how == "inner" and decides and moved > 100_000:
                why = f"{moved} bytes sent: the small left side was not broadcast"
            if not why and how == "left" and decides and moved < 200_000:
                why = f"{moved} bytes sent: a left join's left rows must not be broadcast"
            found[name] = {"ok": not why, "why": why, "bytes": moved}
        except Exception as e:
            found[name] = {"ok": False, "why": f"{type(e).__name__}: {e}"}


def copartition_runs(engine: ladle.SPMDEngine, lf: pl.LazyFrame, whole: pl.LazyFrame) -> tuple[str, list[int]]:
    """lf run with LADLE_COPARTITION=1, then 0, each answer compared with whole's
    (Polars): why not equal ('' when both are), and the bytes each run moved."""
    moved: list[int] = []
    why = ""
    try:
        for flag in ("1", "0"):
            os.environ["LADLE_COPARTITION"] = flag
            b0 = engine.stats()["exchange_bytes"]
            res = engine.execute(lf)
            moved.append(engine.stats()["exchange_bytes"] - b0)
            why = compare(engine.allgather(res).to_polars(), whole.collect(engine="in-memory"), False)
            if why:
                break
    finally:
        os.environ.pop("LADLE_COPARTITION", None)
    return why, moved


def copartitioned_joins(engine: ladle.SPMDEngine, found: dict[str, Any]) -> None:
    """Joins whose side is a group-by by the join's keys (physical.c hash_parted):
    when both sides are, neither moves (ladle_pnode.copart); when one is, the run-time
    choice may leave it where its exchange dealt it and hash only the other side to
    the same deal (part_side, op_join.c), which it does here (the sides' sizes make
    that the cheapest). Every join type and a join on two keys, against Polars; no
    more bytes move than with LADLE_COPARTITION=0 (fewer where that broadcast a side),
    and keys of different types (Int32 against the group-by's Int64) are exchanged
    as before."""
    n, r = engine.nranks, engine.rank

    def fact(q: int) -> pl.DataFrame:  # keys over 0..40,000: about as many groups as other's rows
        g = np.random.default_rng([11, q])
        return pl.DataFrame({"k": g.integers(0, 40_000, 12_000, dtype=np.int64),
                             "j": g.integers(0, 3, 12_000, dtype=np.int64),
                             "v": g.integers(0, 100, 12_000, dtype=np.int64)})

    def other(q: int) -> pl.DataFrame:
        g = np.random.default_rng([12, q])
        k = g.integers(0, 40_000, 6_000, dtype=np.int64)
        return pl.DataFrame({"k": k, "k32": k.astype(np.int32), "j": k % 3,
                             "text": [f"{'y' * 30}{i}" for i in range(6_000)]})

    mine = (fact(r).lazy(), other(r).lazy())
    whole = (pl.concat([fact(q) for q in range(n)]).lazy(), pl.concat([other(q) for q in range(n)]).lazy())
    sums = lambda f: f.group_by("k").agg(pl.col("v").sum().alias("s"))  # noqa: E731
    counts = lambda f: f.group_by("k").agg(pl.len().alias("c"))  # noqa: E731
    cases = {
        "copart_both_sides": lambda f, o: sums(f).join(counts(f), on="k"),
        "copart_two_keys": lambda f, o: f.group_by("k", "j").agg(pl.col("v").max().alias("m"))
        .join(o, on=["k", "j"], how="inner"),
        "copart_types_differ": lambda f, o: o.join(sums(f), left_on="k32",
                                                   right_on=pl.col("k").cast(pl.Int32)),
    }
    for how in ("inner", "left", "semi", "anti"):
        cases[f"copart_{how}"] = lambda f, o, how=how: o.join(sums(f), on="k", how=how)
    # a replicated left side (a top-k) of a left join by a key expression against a
    # group-by's side, and a join by another column over it (Polars puts that join
    # below the left join): the answer is what this case checks
    cases["copart_expr_key_above"] = lambda f, o: (
        f.select("v", "k", "j").sort("v", "k", "j").head(300)
        .join(sums(f), left_on=pl.col("k").abs(), right_on="k", how="left")
        .join(f.group_by("v").agg(pl.len().alias("nv")), on="v"))
    for name, q in cases.items():
        try:
            lf = q(*mine)
            plan = engine.explain(lf)
            why, moved = copartition_runs(engine, lf, q(*whole))
            if name == "copart_expr_key_above":  # the answer is what this case checks
                found[name] = {"ok": not why, "why": why, "bytes": moved}
                continue
            expect = name != "copart_types_differ" and n > 1 and os.environ.get("LADLE_COLUMN_KERNELS") != "1"
            says = ("partitioned alike" if name == "copart_both_sides" else "already partitioned by the keys")
            if not why and expect and says not in plan:
                why = f"the plan does not say '{says}'"
            # where the other choice broadcast a side (an inner join's), fewer bytes
            # move; where it hashed both sides, as many (the partitioned side's rows
            # hash to the ranks they are on: no bytes, but a pass over them saved)
            fewer = name in ("copart_inner", "copart_two_keys")
            if not why and expect and (moved[0] >= moved[1] if fewer else moved[0] > moved[1]):
                why = f"{moved[0]} bytes moved co-partitioned, {moved[1]} without"
            if not why and not expect and "partitioned" in plan:
                why = "keys of different types planned as partitioned alike"
            found[name] = {"ok": not why, "why": why, "bytes": moved}
        except Exception as e:
            found[name] = {"ok": False, "why": f"{type(e).__name__}: {e}"}


def hashed_join_partitions(engine: ladle.SPMDEngine, found: dict[str, Any]) -> None:
    """A join that decides its exchange at run time leaves its rows partitioned by
    its left keys when it hashes its sides (exec_state.hashed): a group-by by keys
    that include them then moves no row (its exchange skipped: xskip_if), and a join
    above by the same key keeps that side where it is (part_if). Two sides of equal
    size are hashed (neither is broadcast); a small right side is broadcast, and the
    group-by above then exchanges its rows as before. Against Polars, with the bytes
    moved compared with LADLE_COPARTITION=0 (fewer where rows stayed), and a
    group-by by other columns planned with its exchange."""
    n, r = engine.nranks, engine.rank

    def facts(seed: int, q: int, rows: int) -> pl.DataFrame:
        g = np.random.default_rng([seed, q])
        k = g.integers(0, 30_000, rows, dtype=np.int64)
        return pl.DataFrame({"k": k, "j": g.integers(0, 4, rows, dtype=np.int64),
                             f"v{seed}": g.integers(0, 1000, rows, dtype=np.int64)})

    sizes = {21: 10_000, 22: 10_000, 23: 10_000, 24: 40}
    mine = [facts(s, r, m).lazy() for s, m in sizes.items()]
    whole = [pl.concat([facts(s, q, m) for q in range(n)]).lazy() for s, m in sizes.items()]
    cases = {
        # (query, whether the plan says rows stay, whether fewer bytes move)
        "hashed_then_group_by": (lambda a, b, c, d: a.join(b.drop("j"), on="k").group_by("k", "j")
                                 .agg(pl.col("v21").sum(), pl.col("v22").max(), pl.len()), True, True),
        "hashed_then_join": (lambda a, b, c, d: a.join(b.drop("j"), on="k")
                             .join(c.drop("j"), on="k", how="left"), True, True),
        "hashed_left_then_group_by": (lambda a, b, c, d: a.join(b.drop("j"), on="k", how="left")
                                      .group_by("k").agg(pl.col("v22").sum(), pl.len()), True, True),
        "broadcast_then_group_by": (lambda a, b, c, d: a.join(d.drop("j"), on="k").group_by("k")
                                    .agg(pl.col("v24").sum()), True, False),
        "hashed_then_group_by_other": (lambda a, b, c, d: a.join(b.drop("j"), on="k").group_by("j")
                                       .agg(pl.col("v22").sum()), False, False),
    }
    for name, (q, stays, fewer) in cases.items():
        try:
            lf = q(*mine)
            plan = engine.explain(lf)
            why, moved = copartition_runs(engine, lf, q(*whole))
            expect = n > 1 and os.environ.get("LADLE_COLUMN_KERNELS") != "1"
            if not why and expect and ("hashes its sides" in plan) != stays:
                why = f"the plan {'does not say' if stays else 'says'} rows stay: {plan}"
            if not why and expect and fewer and moved[0] >= moved[1]:
                why = f"{moved[0]} bytes moved with rows staying, {moved[1]} without"
            if not why and expect and not fewer and moved[0] != moved[1]:
                why = f"{moved[0]} bytes moved, {moved[1]} without: the same were expected"
            found[name] = {"ok": not why, "why": why, "bytes": moved}
        except Exception as e:
            found[name] = {"ok": False, "why": f"{type(e).__name__}: {e}"}


def transfer_across_ranks(engine: ladle.SPMDEngine, found: dict[str, Any]) -> None:
    """A predicate transfer across ranks (physical.c plan_transfer, op_join.c
    feed_table): the filtered right side's keys cut the left side's big table below
    its own join, before anything moves. The right side's kept rows are all on the
    last rank and the left rows they meet all on rank 0, so a transfer by a rank's
    own keys would cut every row that matches: the keys must be every rank's. The
    answer equals Polars' and rows were cut (not on the column kernels, which take
    no transfer)."""
    n, r = engine.nranks, engine.rank
    rows = 20_000

    def big(q: int) -> pl.DataFrame:
        k = np.arange(rows, dtype=np.int64) + q * rows
        return pl.DataFrame({"k": k if q == 0 else k + 10**6, "x": k % 50, "v": np.ones(rows, dtype=np.int64)})

    def dim(q: int) -> pl.DataFrame:
        return pl.DataFrame({"x": np.arange(q * 25, q * 25 + 25, dtype=np.int64) % 50, "y": np.full(25, q)})

    def small(q: int) -> pl.DataFrame:  # rank n-1's flagged keys are rank 0's big keys
        # rank 0's table is too small for a transfer of 40 keys by its own rows (40 x 8
        # > 200): the ranks must still decide alike (the largest base), or some would
        # gather the keys while others did not
        m = 200 if q == 0 and n > 1 else 1000
        k = np.arange(m, dtype=np.int64) * 13 + 5 * 10**6
        flag = np.zeros(m, dtype=bool)
        if q == n - 1:
            k[:40] = np.arange(40, dtype=np.int64) * 211
            flag[:40] = True
        return pl.DataFrame({"k": k, "flag": flag})

    def query(b: pl.LazyFrame, d: pl.LazyFrame, c: pl.LazyFrame) -> pl.LazyFrame:
        return b.join(d, on="x").join(c.filter(pl.col("flag")), on="k").select("k", "y", "v")

    whole = [pl.concat([f(q) for q in range(n)]).lazy() for f in (big, dim, small)]
    cut0 = engine.stats()["rows_transferred"]
    run_case(engine, "transfer_across_ranks", query(big(r).lazy(), dim(r).lazy(), small(r).lazy()),
             query(*whole).collect(engine="in-memory"), False, True, found)
    cut = engine.stats()["rows_transferred"] - cut0
    want = os.environ.get("LADLE_COLUMN_KERNELS") != "1"
    if found["transfer_across_ranks"]["ok"] and (cut > 0) != want:
        found["transfer_across_ranks"] = {"ok": False, "why": f"{cut} rows cut by the transfer"}
    # across ranks a small filtered left side also cuts the right side of a semi,
    # anti or left join, right above its scan (the rows cut never move; one rank
    # takes no such cut: the join drops the same rows)
    for how in ("semi", "anti", "left"):
        name = f"transfer_across_ranks_{how}"

        def q2(b: pl.LazyFrame, c: pl.LazyFrame, how: str = how) -> pl.LazyFrame:
            return c.filter(pl.col("flag")).join(b, on="k", how=how)  # type: ignore[arg-type]

        cut0 = engine.stats()["rows_transferred"]
        run_case(engine, name, q2(big(r).lazy(), small(r).lazy()), q2(whole[0], whole[2]).collect(engine="in-memory"),
                 False, True, found)
        cut = engine.stats()["rows_transferred"] - cut0
        if found[name]["ok"] and (cut > 0) != (want and n > 1):
            found[name] = {"ok": False, "why": f"{cut} rows cut by the transfer"}


def failed_query(engine: ladle.SPMDEngine, found: dict[str, Any]) -> None:
    """A query that fails on one rank (a strict cast of rank 1's -1) fails on every
    rank, rank 1 with its own error and the others naming it, within a poll (not the
    timeout), and the job goes on: the next query gives every rank the right answer.
    Before a group-by's exchange of some MB a pair (sends to rank 1 left pending),
    and in a query with no exchange (the barrier ending each query tells the
    others). Under torch the others learn it through the store, and every rank
    goes on over a fresh gloo group (gloo's collectives cannot be interrupted)."""
    if engine.nranks < 2:
        return
    n = 300_000
    k = np.arange(n, dtype=np.int64) % 1000
    v = np.full(n, 7, dtype=np.int64)
    if engine.rank == 1:
        v[n // 2] = -1
    f = pl.DataFrame({"k": k, "v": v})
    bad = {
        "fails_before_exchange": f.lazy().with_columns(pl.col("v").cast(pl.UInt8)).group_by("k").agg(pl.col("v").sum()),
        "fails_without_exchange": f.lazy().select(pl.col("v").cast(pl.UInt8) + 1),
    }
    lf_after = pl.DataFrame({"k": k, "v": np.full(n, 7, dtype=np.int64)}).lazy().group_by("k").agg(pl.col("v").sum())
    expected_after = (pl.concat([pl.DataFrame({"k": k, "v": np.full(n, 7, dtype=np.int64)})] * engine.nranks)
                      .group_by("k").agg(pl.col("v").sum()))
    for name, lf in bad.items():
        expect_failure(engine, name, lf, found, lambda e, text: "strict cast" in text and (
            engine.rank == 1 or isinstance(e, ladle.LadleCommError) and "rank 1 failed" in text))
        run_case(engine, f"after_{name}", lf_after, expected_after, False, True, found)
    # a query that fails on rank 1 before ladle's engine sees it (a column type
    # ladle cannot run, on rank 1's frame alone): the others, waiting in the query's
    # first collective, raise naming rank 1 (not at the timeout), and all go on
    v1 = pl.Series([object()] * 10, dtype=pl.Object) if engine.rank == 1 else pl.Series(range(10), dtype=pl.Int64)
    lf = pl.DataFrame({"k": list(range(10)), "v": v1}).lazy().group_by("k").agg(pl.col("v").count())
    expect_failure(engine, "fails_before_engine", lf, found, lambda e, text: (
        isinstance(e, ladle.UnsupportedError) if engine.rank == 1 else
        isinstance(e, ladle.LadleCommError) and "rank 1 failed: UnsupportedError" in text))
    run_case(engine, "after_fails_before_engine", lf_after, expected_after, False, True, found)


def kill(engine: ladle.SPMDEngine, data: Path, found: dict[str, Any], out: Path) -> None:
    """Rank 1 dies before a query; the others must fail within the timeout."""
    a, b, _, _ = frames(engine.rank, engine.nranks)
    if engine.rank == 1:
        os._exit(3)
    t0 = time.perf_counter()
    try:
        engine.execute(a.lazy().group_by("k").agg(pl.col("x").sum()))
        found["kill"] = {"ok": False, "why": "no error"}
    except ladle.LadleError as e:
        found["kill"] = {"ok": True, "why": str(e), "s": time.perf_counter() - t0}
    write(out, engine.rank, found)
    os._exit(0)  # MPI cannot finalise with a dead rank


def write(out: Path, rank: int, found: dict[str, Any]) -> None:
    (out / f"rank{rank}.json").write_text(json.dumps(found, indent=1))


def make_engine(timeout: float) -> ladle.SPMDEngine:
    """MPI's ranks (or one), or under torchrun with LADLE_SPMD_TORCH=1 the ranks of
    a gloo process group (=2: ladle's own gloo group, made with the timeout)."""
    torch_mode = os.environ.get("LADLE_SPMD_TORCH", "")
    if not torch_mode:
        return ladle.SPMDEngine(threads=1, timeout=timeout)
    from datetime import timedelta

    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=timedelta(seconds=timeout))
    own = torch_mode == "2"
    return ladle.SPMDEngine.from_torch_distributed(threads=1, timeout=timeout if own else None)


def main() -> None:
    case, data, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    timeout = float(os.environ.get("LADLE_SPMD_TIMEOUT", "120"))
    found: dict[str, Any] = {}
    with make_engine(timeout) as engine:
        found["_"] = {"ok": True, "why": "", "rank": engine.rank, "nranks": engine.nranks, "comm": engine.comm}
        if case == "tpch":
            tpch(engine, data, found)
        elif case == "diff":
            diff(engine, data, found)
        elif case == "asym":
            asym(engine, data, found)
        elif case == "kill":
            kill(engine, data, found, out)
        else:
            raise SystemExit(f"unknown case {case}")
        write(out, engine.rank, found)
    if os.environ.get("LADLE_SPMD_TORCH", ""):
        import torch.distributed as dist

        dist.destroy_process_group()  # without it, gloo's threads can abort the process at exit


if __name__ == "__main__":
    main()
