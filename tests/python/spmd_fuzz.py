"""Random queries on several ranks against Polars on the whole data: qfuzz's cases
(tables and a query, `qfuzz.gen.generate`) with every table cut into contiguous
parts, rank r holding part r (so that the job's order is the whole's), run on a
`ladle.SPMDEngine` and gathered (`engine.allgather`), compared with Polars'
answer over the whole tables in the order Polars defines for the query (qfuzz's
order analysis: none after an unordered group-by or join, a prefix, or the whole;
across ranks ladle keeps the job's order where Polars defines it) and floats
within qfuzz's tolerances. `--unordered` compares rows sorted.

    mpirun -np 3 --oversubscribe python tests/python/spmd_fuzz.py --seed 7 --count 2000

`--parquet DIR` writes each table whole to a Parquet file of several row groups a
rank and scans it instead (the scan deals each rank a contiguous share of row
groups): plans then chosen by the files' sizes, streamed and marked joins across
ranks among them; a case whose tables Parquet does not keep as they are is skipped
(`not_parquet`).

Rank 0 prints each mismatch (the case's reproducer source, ladle's and Polars'
shapes, the difference) and a summary; the exit status is 1 when one was found.
A query ladle refuses across ranks (UnsupportedError) or Polars rejects is
skipped; one where ladle raises anything else while Polars answers is counted
and printed as a `ladle_error`. A query Polars folds into a frame of literals
(`df.select(pl.lit(1))` arrives as a one-row frame, which SPMD holds on every
rank as that rank's own: n rows on n ranks) is skipped as `folded_frame`. A query
that fails on some rank fails on every rank (the others name it) and the job goes
on (comm.h, recover); where ladle raises and Polars run without its optimizer
(`QueryOptFlags.none()`) raises too, Polars' optimizer changed the query's meaning
(a strict cast of rows its slice pushdown drops: `x.cast(pl.UInt8).last()` casts
one row on Polars, every row on ladle's ranks), counted as
`polars_optimizer_differs`, not a failure; a mismatch with Polars' in-memory engine
where ladle equals Polars' default or streaming engine is `polars_engines_differ`
(Polars' engines disagree), and where ladle equals Polars without its optimizer,
`polars_optimizer_differs`. Only a communicator that cannot go on
(a timeout) ends the campaign, with its summary. Every rank runs every case in the
same order (the engine checks the plans agree before each query).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl  # noqa: E402

import ladle  # noqa: E402
from qfuzz.compare import compare, input_scale, literal_scale, temporal_scale  # noqa: E402
from qfuzz.gen import generate  # noqa: E402
from qfuzz.harness import request  # noqa: E402


def part(df: pl.DataFrame, rank: int, nranks: int) -> pl.DataFrame:
    """Rank `rank`'s contiguous share of df's rows."""
    lo, hi = df.height * rank // nranks, df.height * (rank + 1) // nranks
    return df.slice(lo, hi - lo)


class _Scan:
    """A table as a Parquet file: `.lazy()` scans it (the cases' code reads each
    table as `tN.lazy()`)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def lazy(self) -> pl.LazyFrame:
        return pl.scan_parquet(self.path)


def run_case(engine: ladle.SPMDEngine, seed: int, index: int, unordered: bool = False,
             parquet: Path | None = None) -> dict[str, Any]:
    try:
        req = request(generate(seed, index))
    except Exception as e:  # noqa: BLE001 - the generator's, not ladle's
        return {"outcome": "generator_error", "error": repr(e)}
    return run_request(engine, req, unordered, parquet)


FOUND = Path(__file__).resolve().parents[1] / "data" / "spmd_fuzz" / "found.json"


def run_found(engine: ladle.SPMDEngine, key: str) -> dict[str, Any]:
    """A case this campaign found, as it was drawn then ("seed:index" in
    tests/data/spmd_fuzz/found.json: its source and what Polars defines of its
    order), so that later changes of the generator keep it."""
    import json

    return run_request(engine, json.loads(FOUND.read_text())[key])


def run_request(engine: ladle.SPMDEngine, req: dict[str, Any], unordered: bool = False,
                parquet: Path | None = None) -> dict[str, Any]:
    if not req.get("det", True):
        return {"outcome": "undetermined"}
    code = req["code"]
    head, tail = code.rsplit("\nq = (", 1)
    whole: dict[str, Any] = {}
    try:
        exec(compile(head, "<tables>", "exec"), whole)
        exec(compile("q = (" + tail, "<query>", "exec"), whole)
        expected = whole["q"].collect(engine="in-memory")
    except BaseException as e:  # noqa: BLE001 - Polars rejects or panics: nothing to compare
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"outcome": "polars_error"}
    mine = dict(whole)
    frames = []
    written = True
    for k, v in whole.items():
        if k[:1] == "t" and k[1:].isdigit() and isinstance(v, pl.DataFrame):
            frames.append(v)
            if parquet is None:
                mine[k] = part(v, engine.rank, engine.nranks)
                continue
            # the whole table in one file of several row groups a rank, each rank its
            # own copy: the scan deals every rank a contiguous share of row groups
            # (the plans then choose by the files' sizes: streamed and marked joins)
            path = parquet / f"r{engine.rank}" / f"{k}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                v.write_parquet(path, row_group_size=max(1, v.height // (3 * engine.nranks)),
                                data_page_size=PAGE_BYTES)
                written = written and pl.read_parquet(path).equals(v)
            except Exception:  # noqa: BLE001 - a type Parquet does not keep as it is
                written = False
            mine[k] = _Scan(path)
    if not engine.allgather(pl.DataFrame({"w": [written]}))["w"].all():
        return {"outcome": "not_parquet"}
    exec(compile("q = (" + tail, "<query>", "exec"), mine)
    # Polars folds a select of literals into a frame of one row, which ladle then
    # holds on every rank as that rank's own rows (n rows on n ranks): the model
    # here (tables cut across ranks) does not apply to such a query
    heights = {v.height for k, v in mine.items() if k[:1] == "t" and k[1:].isdigit() and isinstance(v, pl.DataFrame)}
    try:
        text = engine.explain(mine["q"])
    except BaseException as e:  # noqa: BLE001 - Polars panics describing a plan it falls back to
        if isinstance(e, KeyboardInterrupt):
            raise
        text = ""
    scans = [int(n) for n in re.findall(r"SCAN memory: \d+ columns, (\d+) rows", text)]
    folded = any(n not in heights for n in scans)
    # (or by its columns: a frame Polars made holds none of the tables' column sets)
    tables = [set(v.columns) for v in frames]
    try:
        plain = mine["q"].explain()
    except BaseException as e:  # noqa: BLE001 - Polars panics describing a rank's part
        if isinstance(e, KeyboardInterrupt):
            raise
        plain = ""
    for names in re.findall(r"DF \[([^\]]*)\]", plain):
        cols = set(re.findall(r'"([^"]*)"', names))
        # (with --parquet every table is a scan: any frame in memory is Polars')
        folded |= parquet is not None or not any(cols <= t for t in tables)
    # each rank's own finding: decided together, or the ranks would run different queries
    if engine.allgather(pl.DataFrame({"f": [folded]}))["f"].any():
        return {"outcome": "folded_frame"}
    try:
        res = engine.execute(mine["q"])
        got = engine.allgather(res).to_polars()
    except ladle.UnsupportedError:
        return {"outcome": "unsupported"}
    except Exception as e:  # noqa: BLE001
        out = {"outcome": "ladle_error", "error": f"{type(e).__name__}: {e}"[:600], "code": code}
        try:
            whole["q"].collect(engine="in-memory", optimizations=pl.QueryOptFlags.none())
        except BaseException as pe:  # noqa: BLE001 - Polars unoptimized raises too
            if isinstance(pe, KeyboardInterrupt):
                raise
            out["outcome"] = "polars_optimizer_differs"
        return out
    scale, rows = input_scale(frames)
    order, prefix = ("none", []) if unordered else (req["order"], req["prefix"])
    diff = compare(expected, got, order=order, prefix=prefix, taint=set(req["taint"]), fstr=set(req["fstr"]),
                   scale=max(scale, literal_scale(code)), rows=rows, f32="pl.Float32" in code,
                   tscale=temporal_scale(frames))
    if diff is None:
        return {"outcome": "equal", "marks": "into marks" in text, "streamed": "streams its" in text,
                "copart": "partitioned alike" in text or "already partitioned" in text}
    # Polars' own engines disagree on some queries (qfuzz's polars_engines_differ),
    # and its optimizer changes some queries' meaning (polars_optimizer_differs: a
    # slice pushed into an ordered full join): ladle agreeing with another of them
    # is not a failure
    for other in ("auto", "streaming", "no-optimizer"):
        try:
            if other == "no-optimizer":
                alt = whole["q"].collect(engine="in-memory", optimizations=pl.QueryOptFlags.none())
            else:
                alt = whole["q"].collect(engine=other)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            continue
        if compare(alt, got, order=order, prefix=prefix, taint=set(req["taint"]), fstr=set(req["fstr"]),
                   scale=max(scale, literal_scale(code)), rows=rows, f32="pl.Float32" in code,
                   tscale=temporal_scale(frames)) is None:
            return {"outcome": "polars_optimizer_differs" if other == "no-optimizer" else "polars_engines_differ"}
    return {"outcome": "mismatch", "kind": diff.kind, "detail": diff.detail[:1200], "code": code,
            "shapes": (list(expected.shape), list(got.shape))}


PAGE_BYTES: int | None = None  # --page-bytes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0.0, help="stop starting cases after this long (0: none)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--unordered", action="store_true", help="compare rows sorted, whatever order Polars defines")
    ap.add_argument("--parquet", type=Path, default=None,
                    help="each table written whole to a Parquet file in this folder and scanned, the row "
                         "groups dealt across ranks (instead of each rank a part of it in memory)")
    ap.add_argument("--page-bytes", type=int, default=None,
                    help="with --parquet: data pages of about this many bytes (many pages a chunk: "
                         "LADLE_SPLIT_PAGES=1 then splits every chunk by them)")
    a = ap.parse_args()
    global PAGE_BYTES
    PAGE_BYTES = a.page_bytes
    counts: dict[str, int] = {}
    bad = 0
    t0 = time.monotonic()
    with ladle.SPMDEngine(threads=a.threads, timeout=120) as engine:
        for i in range(a.start, a.start + a.count):
            # every rank decides alike whether to go on
            try:
                if a.seconds and engine.allgather(pl.DataFrame({"t": [time.monotonic() - t0]}))["t"].max() > a.seconds:
                    break
                r = run_case(engine, a.seed, i, a.unordered, a.parquet)
            except Exception as e:  # noqa: BLE001 - the driver's own failure: report, go on
                if isinstance(e, ladle.LadleCommError) and ("cannot go on" in str(e) or "does not recover" in str(e)):
                    # the communicator cannot go on (a timeout): the campaign ends there
                    counts["comm_broken"] = 1
                    if engine.rank == 0:
                        print(f"=== {a.seed}:{i} the communicator broke; stopping\n{e}", flush=True)
                    break
                r = {"outcome": "driver_error", "error": traceback.format_exc()[-800:]}
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
            for tag in ("marks", "streamed", "copart"):  # equal answers from such plans
                if r.get(tag):
                    counts[f"equal_{tag}"] = counts.get(f"equal_{tag}", 0) + 1
            if r["outcome"] in ("mismatch", "ladle_error", "driver_error"):
                bad += 1
                if engine.rank == 0:
                    print(f"=== {a.seed}:{i} {r['outcome']} {r.get('kind', '')} {r.get('shapes', '')}\n"
                          f"{r.get('detail', r.get('error', ''))}\n{r.get('code', '')}", flush=True)
        if engine.rank == 0:
            print(f"{engine.nranks} ranks, seed {a.seed}: {sum(counts.values())} cases in "
                  f"{time.monotonic() - t0:.0f}s: {dict(sorted(counts.items()))}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
