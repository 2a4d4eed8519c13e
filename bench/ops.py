"""The single operations issue 17 names, on seed-shaped event data in memory:
ladle against Polars (and DuckDB where installed) with the same thread count,
medians of several runs, every answer checked against Polars'.

  topk        sort on two keys, then head(1000) (the active-learning top-k)
  nullfilter  filter on is_not_null() | (x == 1), then fill_null and is_null
  strwhen     when/then/otherwise over strings beside a concatenation with a cast integer
  leftmiss    a left join where most keys miss
  windows     three over() windows
  stats       whole-column statistics (what fitting Normalize/NormalizeMinMax/Categorify
              reads): min, max, mean and std of numbers, a Datetime's max and mean,
              a string column's min and max

  python bench/ops.py [--rows 5000000] [--threads 2] [--runs 5] [--only topk,...] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np
import polars as pl


def events(n: int, seed: int = 7) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.normal(0, 1, n)
    score[rng.random(n) < 0.3] = np.nan  # null-heavy: made null below
    x = rng.integers(0, 4, n)
    labels = np.array(["click", "view", "buy", "share", "skip"])
    return pl.DataFrame({
        "user": rng.integers(0, n // 50 + 1, n),
        "item": rng.integers(0, 200_000, n),
        "ts": rng.integers(1_600_000_000_000, 1_700_000_000_000, n),
        "score": score,
        "x": x,
        "label": labels[rng.integers(0, len(labels), n)],
    }).with_columns(
        pl.col("score").fill_nan(None),
        pl.when(pl.col("x") == 0).then(None).otherwise(pl.col("x")).alias("x"),
        pl.col("ts").cast(pl.Datetime("ms")),
    )


def items(n_items: int = 200_000, seed: int = 8) -> pl.DataFrame:
    """A dimension table whose keys mostly miss the events' (9 in 10 lie outside)."""
    rng = np.random.default_rng(seed)
    keys = np.arange(n_items // 10)
    keys = np.concatenate([keys, rng.integers(10_000_000, 20_000_000, n_items - len(keys))])
    return pl.DataFrame({"item": keys, "price": rng.uniform(1, 100, n_items), "cat": rng.integers(0, 50, n_items)})


def queries(ev: pl.DataFrame, it: pl.DataFrame) -> dict[str, pl.LazyFrame]:
    e = ev.lazy()
    return {
        "topk": e.sort(["score", "ts"], descending=[True, False], nulls_last=True).head(1000),
        "nullfilter": e.filter(pl.col("score").is_not_null() | (pl.col("x") == 1)).with_columns(
            pl.col("score").fill_null(0.0), pl.col("x").is_null().alias("x_missing")),
        "strwhen": e.select(
            pl.when(pl.col("label") == "click").then(pl.lit("C"))
            .when(pl.col("label").is_in(["buy", "share"])).then(pl.lit("B"))
            .otherwise(pl.col("label")).alias("kind"),
            (pl.col("label") + pl.lit("_") + pl.col("x").cast(pl.String)).alias("tag")),
        "leftmiss": e.join(it.lazy(), on="item", how="left"),
        "windows": e.select(
            "user", "item",
            pl.col("score").mean().over("user").alias("user_mean"),
            pl.col("x").sum().over("item").alias("item_x"),
            pl.col("score").max().over("user", "label").alias("ul_max")),
        "stats": e.select(
            pl.col("score").mean().alias("score_mean"), pl.col("score").std().alias("score_std"),
            pl.col("score").min().alias("score_min"), pl.col("score").max().alias("score_max"),
            pl.col("item").min().alias("item_min"), pl.col("item").max().alias("item_max"),
            pl.col("user").mean().alias("user_mean"), pl.col("ts").max().alias("ts_max"),
            pl.col("ts").mean().alias("ts_mean"),
            pl.col("label").min().alias("label_min"), pl.col("label").max().alias("label_max")),
    }


def _time(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    fn()  # warm-up
    ts = []
    out = None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def _duck(con: Any, name: str) -> str | None:
    return {
        "topk": "SELECT * FROM ev ORDER BY score DESC NULLS LAST, ts LIMIT 1000",
        "nullfilter": "SELECT user, item, ts, coalesce(score, 0.0) AS score, x, label, x IS NULL AS x_missing "
                      "FROM ev WHERE score IS NOT NULL OR x = 1",
        "strwhen": "SELECT CASE WHEN label = 'click' THEN 'C' WHEN label IN ('buy', 'share') THEN 'B' "
                   "ELSE label END AS kind, label || '_' || CAST(x AS VARCHAR) AS tag FROM ev",
        "leftmiss": "SELECT ev.*, it.price, it.cat FROM ev LEFT JOIN it USING (item)",
        "windows": "SELECT user, item, avg(score) OVER (PARTITION BY user) AS user_mean, "
                   "sum(x) OVER (PARTITION BY item) AS item_x, "
                   "max(score) OVER (PARTITION BY user, label) AS ul_max FROM ev",
        "stats": "SELECT avg(score), stddev_samp(score), min(score), max(score), min(item), max(item), "
                 "avg(user), max(ts), avg(ts), min(label), max(label) FROM ev",
    }.get(name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--no-duckdb", action="store_true")
    a = ap.parse_args()
    os.environ.setdefault("POLARS_MAX_THREADS", str(a.threads))
    if int(os.environ["POLARS_MAX_THREADS"]) != a.threads or pl.thread_pool_size() != a.threads:
        print(f"Polars must start with POLARS_MAX_THREADS={a.threads} (it has {pl.thread_pool_size()})",
              file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
    import ladle
    from polars.testing import assert_frame_equal

    ev, it = events(a.rows), items()
    eng = ladle.Engine(threads=a.threads, raise_on_fail=True)
    con = None
    if not a.no_duckdb:
        try:
            import duckdb

            con = duckdb.connect()
            con.execute(f"SET threads = {a.threads}")
            con.register("ev", ev.to_arrow())
            con.register("it", it.to_arrow())
        except ImportError:
            con = None
    only = set(a.only.split(",")) - {""}
    rows = []
    for name, q in queries(ev, it).items():
        if only and name not in only:
            continue
        tp, want = _time(lambda: q.collect(engine="in-memory"), a.runs)
        tl, got = _time(lambda: q.collect(engine=eng), a.runs)
        ordered = name == "topk"
        assert_frame_equal(got, want, check_row_order=ordered, rel_tol=1e-12)
        row = {"op": name, "ladle_s": tl, "polars_s": tp, "ladle_over_polars": tl / tp}
        sql = _duck(con, name) if con is not None else None
        if sql is not None:
            td, _ = _time(lambda: con.sql(sql).to_arrow_table(), a.runs)
            row["duckdb_s"] = td
        rows.append(row)
        duck = f"  duckdb {row['duckdb_s'] * 1e3:8.1f} ms" if "duckdb_s" in row else ""
        print(f"{name:11s} ladle {tl * 1e3:8.1f} ms  polars {tp * 1e3:8.1f} ms  ratio {tl / tp:5.2f}{duck}",
              flush=True)
    if a.json:
        meta = {"rows": a.rows, "threads": a.threads, "runs": a.runs, "machine": platform.node(),
                "cpus": os.cpu_count(), "polars": pl.__version__}
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "results": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
