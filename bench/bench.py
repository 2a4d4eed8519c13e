"""ladle against Polars and DuckDB (and pyarrow for Parquet reads) on the same data,
the same machine and the same thread count, in one run.

Workloads: TPC-H q1-q22 end to end from Parquet files and on tables already in
memory; the db-benchmark group-by q1-q10 and join q1-q5; the training-data ETL
of `make demo`; full Parquet scans of the TPC-H tables. Each query runs once as a
warm-up, its result is checked against Polars' (a wrong answer fails the run
and never becomes a time), then --runs timed runs give the median. Ratios are
ladle's median / the peer's: below 1 means ladle is faster.

    python bench/bench.py                 # SF1, 1e7 rows, ETL on 25M ratings
    python bench/bench.py --quick         # SF0.1, 1e6 rows: about a minute
    python bench/bench.py --sf 10 --rows 100000000
    python bench/bench.py --device cuda   # the GPU backend, once it exists

Writes bench/results/<date>-<host>[-quick].json and a PNG chart of the ratios.
TPC-H data: SF0.1 from ../shared (dbgen's files); other scale factors from
bench/tpch_gen.py (numpy, written from the specification), cached in bench/data.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests" / "python"), str(ROOT / "examples")]


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="SF0.1, 1e6 rows, 1e6 ratings")
    ap.add_argument("--sf", type=float, default=None, help="TPC-H scale factor (1; 0.1 with --quick)")
    ap.add_argument("--rows", type=float, default=None, help="db-benchmark rows (1e7; 1e6 with --quick)")
    ap.add_argument("--etl-rows", type=float, default=None, help="ETL ratings (25e6; 1e6 with --quick)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--runs", type=int, default=5, help="timed runs after the warm-up (at least 5)")
    ap.add_argument("--workloads", default="tpch-parquet,tpch-memory,groupby,join,etl,scan")
    ap.add_argument("--device", default="cpu", help="ladle's device: cpu, or cuda once the backend exists")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data")
    a = ap.parse_args()
    a.sf = a.sf if a.sf is not None else (0.1 if a.quick else 1.0)
    a.rows = int(a.rows if a.rows is not None else (1e6 if a.quick else 1e7))
    a.etl_rows = int(a.etl_rows if a.etl_rows is not None else (1e6 if a.quick else 25e6))
    a.runs = max(a.runs, 5)
    return a


ARGS = parse_args()
os.environ["POLARS_MAX_THREADS"] = str(ARGS.threads)  # before Polars is imported

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from polars.testing import assert_frame_equal  # noqa: E402

import ladle  # noqa: E402
from common import git_commit, machine, same_frame, same_values, tpch_files, tpch_source  # noqa: E402

ENGINES = ("ladle", "polars", "duckdb", "pyarrow")


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.engine = ladle.Engine(device=args.device, threads=args.threads, raise_on_fail=True)
        self.rows: list[dict[str, Any]] = []
        self.failures: list[str] = []
        pa.set_cpu_count(args.threads)
        pa.set_io_thread_count(args.threads)

    def duck(self) -> duckdb.DuckDBPyConnection:
        c = duckdb.connect()
        c.execute(f"SET threads = {self.args.threads}")
        # the other engines' inputs and results share the machine: DuckDB spills
        # past a third of memory instead of the run being killed
        mem_gib = max(int(machine()["memory_gib"] // 3), 1)
        c.execute(f"SET memory_limit = '{mem_gib}GB'")
        c.execute(f"SET temp_directory = '{self.args.data / 'duckdb-tmp'}'")
        return c

    def _time(self, fn: Callable[[], Any]) -> list[float]:
        times = []
        for _ in range(self.args.runs):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return times

    def _record(self, workload: str, query: str, engine: str, status: str, times: list[float] | None = None,
                note: str = "") -> None:
        self.rows.append({"workload": workload, "query": query, "engine": engine, "status": status,
                          "median_s": statistics.median(times) if times else None, "runs_s": times or [], "note": note})
        med = f"{statistics.median(times):9.4f}s" if times else f"{status:>10s}"
        print(f"  {workload:13s} {query:36s} {engine:8s} {med} {note[:60]}", flush=True)

    def query(self, workload: str, name: str, lf: pl.LazyFrame, sql: str | None, con: duckdb.DuckDBPyConnection | None,
              ordered: bool, rel_tol: float = 1e-6) -> None:
        """Polars (the reference), ladle and DuckDB on one query."""
        t = time.perf_counter()
        ref = lf.collect()
        first = time.perf_counter() - t
        self._record(workload, name, "polars", "ok", self._time(lambda: lf.collect()), f"warm-up {first:.3f}s")
        try:
            got = lf.collect(engine=self.engine)
            same_frame(got, ref, ordered, rel_tol)
            del got  # results at 25M rows are gigabytes: hold one at a time
        except ladle.UnsupportedError as e:
            self._record(workload, name, "ladle", "unsupported", note=str(e))
        except AssertionError as e:
            self.failures.append(f"{workload} {name}: ladle's answer differs from Polars': {e}")
            self._record(workload, name, "ladle", "WRONG", note=str(e).splitlines()[0])
        else:
            self._record(workload, name, "ladle", "ok", self._time(lambda: lf.collect(engine=self.engine)))
        if sql is not None and con is not None:
            res = pl.from_arrow(con.sql(sql).to_arrow_table())
            try:
                same_values(res, ref, ordered, 1e-5)
            except AssertionError as e:
                self.failures.append(f"{workload} {name}: DuckDB's answer differs from Polars': {e}")
                self._record(workload, name, "duckdb", "WRONG", note=str(e).splitlines()[0])
            else:
                del res, ref
                self._record(workload, name, "duckdb", "ok", self._time(lambda: con.sql(sql).to_arrow_table()))


# --------------------------------------------------------------- workloads

def run_tpch(b: Bench, paths: dict[str, Path], in_memory: bool) -> None:
    from tpch_queries import QUERIES
    from tpch_sql import sql

    workload = "tpch-memory" if in_memory else "tpch-parquet"
    con = b.duck()
    if in_memory:
        frames = {t: pl.read_parquet(p) for t, p in paths.items()}
        tables = {t: df.lazy() for t, df in frames.items()}
        for t, p in paths.items():
            con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_parquet('{p}')")
    else:
        tables = {t: pl.scan_parquet(p) for t, p in paths.items()}
        for t, p in paths.items():
            con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{p}')")
    fraction = 0.0001 / b.args.sf
    for q in sorted(QUERIES):
        lf = QUERIES[q](tables, fraction=fraction) if q == 11 else QUERIES[q](tables)
        b.query(workload, f"q{q}", lf, sql(q, fraction=fraction), con, ordered=True)


def run_groupby(b: Bench) -> None:
    import dbbench

    t = time.perf_counter()
    x = dbbench.groupby_data(b.args.rows)
    print(f"group-by data: {x.height:,} rows in {time.perf_counter() - t:.1f}s")
    con = b.duck()
    con.register("x_arrow", x.to_arrow())
    con.execute("CREATE TABLE x AS SELECT * FROM x_arrow")
    for name, (lf, sql) in dbbench.groupby_queries(x.lazy()).items():
        b.query("groupby", name, lf, sql, con, ordered=False, rel_tol=1e-6)


def run_join(b: Bench) -> None:
    import dbbench

    t = time.perf_counter()
    frames = dbbench.join_data(b.args.rows)
    print(f"join data: {', '.join(f'{k} {v.height:,}' for k, v in frames.items())} rows in {time.perf_counter() - t:.1f}s")
    con = b.duck()
    for k, v in frames.items():
        con.register(f"{k}_arrow", v.to_arrow())
        con.execute(f"CREATE TABLE {k} AS SELECT * FROM {k}_arrow")
    for name, (lf, sql) in dbbench.join_queries({k: v.lazy() for k, v in frames.items()}).items():
        b.query("join", name, lf, sql, con, ordered=False)


def run_etl(b: Bench) -> None:
    import etl
    from demo import frames as generate

    t = time.perf_counter()
    ratings, movies = generate(b.args.etl_rows)
    print(f"ETL data: {ratings.height:,} ratings, {movies.height:,} movies in {time.perf_counter() - t:.1f}s")
    shuffled = etl.steps(ratings.lazy(), movies.lazy(), pl.LazyFrame())["hash-seeded shuffle"][0].collect()
    con = b.duck()
    for k, v in (("ratings", ratings), ("movies", movies), ("shuffled", shuffled)):
        con.register(f"{k}_arrow", v.to_arrow())
        con.execute(f"CREATE TABLE {k} AS SELECT * FROM {k}_arrow")
    for name, (lf, sql, ordered) in etl.steps(ratings.lazy(), movies.lazy(), shuffled.lazy()).items():
        b.query("etl", name, lf, sql, con, ordered=ordered, rel_tol=1e-6)
    # the handoff: normalized columns to one float32 torch matrix and a label vector
    import torch

    norm = etl.normalized(shuffled.lazy())
    feats = ["rating_z", "movie_te_z", "user_mean_z", "time_z", "is_comedy"]

    def via_ladle() -> tuple[Any, Any]:
        res = b.engine.execute(norm)
        cols = {c: torch.from_dlpack(res.column(c)) for c in feats + ["label"]}
        return torch.stack([cols[c] for c in feats], dim=1), cols["label"]

    def via_polars() -> tuple[Any, Any]:
        df = norm.collect()
        return df.select(feats).to_torch(), df["label"].to_torch()

    def via_duckdb() -> tuple[Any, Any]:
        tab = con.sql(etl.NORMALIZED_SQL).to_arrow_table()
        cols = {c: torch.from_numpy(tab.column(c).to_numpy()) for c in feats + ["label"]}
        return torch.stack([cols[c] for c in feats], dim=1), cols["label"]

    want_x, want_y = via_polars()
    for engine, fn in (("polars", via_polars), ("ladle", via_ladle), ("duckdb", via_duckdb)):
        x, y = fn()
        ok = x.shape == want_x.shape and bool(torch.allclose(x, want_x, rtol=1e-5, atol=1e-5)) and bool(torch.equal(y, want_y))
        if not ok:
            b.failures.append(f"etl to torch: {engine}'s tensors differ from Polars'")
            b._record("etl", "normalize + torch tensors", engine, "WRONG")
            continue
        b._record("etl", "normalize + torch tensors", engine, "ok", b._time(fn))


def run_scan(b: Bench, paths: dict[str, Path]) -> None:
    con = b.duck()
    for t in ("lineitem", "orders", "partsupp", "part", "customer"):
        p = paths[t]
        lf = pl.scan_parquet(p)
        ref = lf.collect()
        b._record("scan", t, "polars", "ok", b._time(lambda: pl.read_parquet(p)))
        try:
            got = lf.collect(engine=b.engine)
            assert_frame_equal(got, ref)
        except ladle.UnsupportedError as e:
            b._record("scan", t, "ladle", "unsupported", note=str(e))
        except AssertionError as e:
            b.failures.append(f"scan {t}: ladle's answer differs from Polars': {e}")
            b._record("scan", t, "ladle", "WRONG")
        else:
            b._record("scan", t, "ladle", "ok", b._time(lambda: lf.collect(engine=b.engine)))
        assert pq.read_table(p).num_rows == ref.height and con.sql(f"select * from read_parquet('{p}')").to_arrow_table().num_rows == ref.height
        b._record("scan", t, "pyarrow", "ok", b._time(lambda: pq.read_table(p)))
        b._record("scan", t, "duckdb", "ok", b._time(lambda: con.sql(f"select * from read_parquet('{p}')").to_arrow_table()))


# ----------------------------------------------------------------- report

def versions() -> dict[str, str]:
    import torch

    commit = git_commit()
    return {"ladle": ladle.__version__, "ladle_commit": commit, "polars": pl.__version__, "duckdb": duckdb.__version__,
            "pyarrow": pa.__version__, "numpy": np.__version__, "torch": torch.__version__}


def summarize(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for w in dict.fromkeys(r["workload"] for r in rows):
        med = {(r["query"], r["engine"]): r["median_s"] for r in rows if r["workload"] == w and r["status"] == "ok"}
        queries = list(dict.fromkeys(r["query"] for r in rows if r["workload"] == w))
        s: dict[str, Any] = {"queries": len(queries)}
        for peer in ("polars", "duckdb", "pyarrow"):
            ratios = [med[(q, "ladle")] / med[(q, peer)] for q in queries if (q, "ladle") in med and (q, peer) in med]
            if ratios:
                s[f"ladle/{peer}"] = {"geomean": math.exp(sum(map(math.log, ratios)) / len(ratios)), "n": len(ratios),
                                      "ladle_faster": sum(r < 1 for r in ratios)}
        s["ladle_not_run"] = [q for q in queries if (q, "ladle") not in med]
        out[w] = s
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'workload':13s} {'query':36s} {'ladle':>9s} {'polars':>9s} {'duckdb':>9s} {'pyarrow':>9s} {'l/pl':>6s} {'l/duck':>6s}"]
    med = {(r["workload"], r["query"], r["engine"]): r for r in rows}
    for w, q in dict.fromkeys((r["workload"], r["query"]) for r in rows):
        cell = lambda e: (f"{med[(w, q, e)]['median_s']:8.4f}s" if med.get((w, q, e), {}).get("median_s") else  # noqa: E731
                          f"{med[(w, q, e)]['status'] if (w, q, e) in med else '-':>9s}")
        ratio = lambda e: (f"{med[(w, q, 'ladle')]['median_s'] / med[(w, q, e)]['median_s']:6.2f}"  # noqa: E731
                           if med.get((w, q, "ladle"), {}).get("median_s") and med.get((w, q, e), {}).get("median_s") else f"{'-':>6s}")
        lines.append(f"{w:13s} {q:36s} {cell('ladle')} {cell('polars')} {cell('duckdb')} {cell('pyarrow')} {ratio('polars')} {ratio('duckdb')}")
    return "\n".join(lines)


def chart(rows: list[dict[str, Any]], summary: dict[str, Any], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(summary)
    fig, axes = plt.subplots(len(workloads), 1, figsize=(13, 3.2 * len(workloads)), squeeze=False)
    med = {(r["workload"], r["query"], r["engine"]): r["median_s"] for r in rows if r["status"] == "ok"}
    for ax, w in zip(axes[:, 0], workloads):
        queries = list(dict.fromkeys(r["query"] for r in rows if r["workload"] == w))
        x = np.arange(len(queries))
        for k, peer in enumerate(("polars", "duckdb", "pyarrow")):
            vals = [med[(w, q, "ladle")] / med[(w, q, peer)] if (w, q, "ladle") in med and (w, q, peer) in med else np.nan
                    for q in queries]
            if not np.all(np.isnan(vals)):
                ax.bar(x + (k - 1) * 0.27, vals, 0.27, label=f"ladle / {peer}")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([q.split(" ")[0] if w in ("groupby", "join") else q for q in queries], rotation=30, fontsize=7, ha="right")
        geo = ", ".join(f"{k} geomean {v['geomean']:.2f}" for k, v in summary[w].items() if isinstance(v, dict))
        ax.set_title(f"{w}: {geo}  (below 1: ladle faster)", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    args = ARGS
    if args.device != "cpu":
        try:
            ladle.Engine(device=args.device)
        except ladle.UnsupportedError as e:
            print(f"--device {args.device}: {e}", file=sys.stderr)
            return 2
    b = Bench(args)
    work = [w.strip() for w in args.workloads.split(",") if w.strip()]
    print(f"ladle {ladle.__version__} ({args.device}, {args.threads} threads) vs polars {pl.__version__} "
          f"(POLARS_MAX_THREADS={args.threads}), duckdb {duckdb.__version__} (threads={args.threads}), "
          f"pyarrow {pa.__version__}; {args.runs} timed runs after a warm-up, medians")
    t0 = time.perf_counter()
    paths = tpch_files(args) if any(w.startswith("tpch") or w == "scan" for w in work) else {}
    for w in work:
        if w == "tpch-parquet":
            run_tpch(b, paths, in_memory=False)
        elif w == "tpch-memory":
            run_tpch(b, paths, in_memory=True)
        elif w == "groupby":
            run_groupby(b)
        elif w == "join":
            run_join(b)
        elif w == "etl":
            run_etl(b)
        elif w == "scan":
            run_scan(b, paths)
        else:
            print(f"unknown workload {w!r}", file=sys.stderr)
            return 2
    summary = summarize(b.rows)
    print("\n" + table(b.rows) + "\n")
    for w, s in summary.items():
        parts = [f"{k} {v['geomean']:.2f} (ladle faster on {v['ladle_faster']}/{v['n']})" for k, v in s.items() if isinstance(v, dict)]
        print(f"{w:13s} geomean " + "; ".join(parts) + (f"; not on ladle: {s['ladle_not_run']}" if s["ladle_not_run"] else ""))
    day = dt.date.today().isoformat()
    stem = f"{day}-{socket.gethostname()}" + ("-quick" if args.quick else "")
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"date": day, "machine": machine(), "versions": versions(), "threads": args.threads, "runs": args.runs,
           "device": args.device, "params": {"tpch_sf": args.sf, "dbbench_rows": args.rows, "etl_ratings": args.etl_rows,
                                             "workloads": work},
           "tpch_data": tpch_source(args.sf),
           "summary": summary, "failures": b.failures, "results": b.rows, "wall_s": time.perf_counter() - t0}
    (args.out / f"{stem}.json").write_text(json.dumps(doc, indent=1))
    chart(b.rows, summary, args.out / f"{stem}.png",
          f"ladle/peer median time, {args.threads} threads, {doc['machine']['cpu_model']} ({stem})")
    print(f"\nwrote {args.out / (stem + '.json')} and .png in {time.perf_counter() - t0:.0f}s")
    if b.failures:
        print("\nWRONG ANSWERS (the run fails):\n  " + "\n  ".join(f[:300] for f in b.failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
