"""Thread scaling of ladle, Polars and DuckDB on TPC-H q1-q22, with each
engine's peak memory.

For every thread count in --threads and every engine, a fresh subprocess
(POLARS_MAX_THREADS set before Polars is imported; DuckDB `SET threads`;
`ladle.Engine(threads=n, raise_on_fail=True)`) loads the tables (in memory by
default, or reads Parquet with --parquet) and runs each query once as a warm-up,
checks its answer against Polars' (computed once, before the subprocesses, by
the parent at its default thread count; a wrong answer is recorded as WRONG,
never as a time, and fails the run), then --runs timed runs give the median.

Peak memory per query: the subprocess resets its RSS high-water mark (writes 5
to /proc/self/clear_refs) just before the query's warm-up and reads VmHWM after
its last run. The JSON keeps, per query, VmHWM (absolute, tables included),
peak_bytes = VmHWM minus the RSS just before the query, and above_tables_bytes =
VmHWM minus the RSS once the tables were loaded, before any query. Memory an
allocator kept from earlier queries (glibc's is trimmed before each query;
Polars' jemalloc and DuckDB's buffer pool keep theirs) counts in the RSS before
a query: peak_bytes can miss memory the query reused from it, and
above_tables_bytes can count what it did not use; the largest
above_tables_bytes of an engine is its peak working memory over the tables.
Where clear_refs cannot be written (gVisor), a thread reads the RSS every 2 ms
during each query's untimed warm-up instead, and the JSON says so
(memory_method); each subprocess' ru_maxrss is kept either way.

    python bench/scaling.py                               # SF1, threads 1,2,4,8,16, 3 runs
    python bench/scaling.py --sf 0.1 --threads 1,2 --runs 1
    python bench/scaling.py --parquet --queries 1,3,9 --engines ladle,polars
    python bench/scaling.py --plot-only bench/results/<date>-<host>-scaling.json

Writes <out>/<date>-<host>-scaling[-sf<SF>][-parquet].json after every
subprocess (a run cut short still leaves its results) and, with matplotlib, a
PNG beside it: geomean time and speedup against threads per engine, and peak
memory. --budget SECONDS stops starting (and cuts) subprocesses past that wall
time and still writes the JSON, the PNG and the tables. Exit status: 0, 1 for a
wrong answer or an engine's error, 3 when the budget cut the run short.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests" / "python")]

ENGINES = ("ladle", "polars", "duckdb")
METHODS = {
    "clear_refs": "clear_refs: VmHWM reset before each query's warm-up, read after its timed runs",
    "sample": ("sampled (clear_refs not writable, or --memory sample): RSS read every 2 ms during each query's warm-up "
               "(a peak shorter than that can be missed); each process' ru_maxrss is in workers"),
}
MIB = 1 << 20


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (1)")
    ap.add_argument("--threads", default="1,2,4,8,16", help="thread counts, run in this order (1,2,4,8,16)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs after the warm-up (3)")
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data",
                    help="where tpch-sf<SF>/ is, or is written (SF0.1 from ../shared, others by tpch_gen.py)")
    ap.add_argument("--queries", default="1-22", help="TPC-H queries: 1-22, or a list such as 1,3,q9")
    ap.add_argument("--engines", default=",".join(ENGINES), help="a subset of ladle,polars,duckdb")
    ap.add_argument("--parquet", action="store_true", help="read the tables from Parquet in each query (default: in memory)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--budget", type=float, default=0.0,
                    help="seconds of wall time for all subprocesses; past it the one running is cut and no more start (0: none)")
    ap.add_argument("--memory", choices=("auto", "clear_refs", "sample"), default="auto",
                    help="per-query peak memory: VmHWM reset through /proc/self/clear_refs (auto: where writable), "
                         "else RSS sampled every 2 ms during the warm-up")
    ap.add_argument("--interleave", action="store_true",
                    help="run every engine's process at once, taking turns query by query (the order rotated), so "
                         "that a machine's drift over minutes moves every engine alike; one engine runs at a time")
    ap.add_argument("--plot-only", type=Path, metavar="JSON",
                    help="print the tables from a JSON of this script and draw its PNG into --out")
    # internal: one engine at one thread count, in a fresh process
    ap.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    ap.add_argument("--worker-threads", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--tables", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--refs", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--partial", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.thread_list = [int(x) for x in a.threads.split(",") if x.strip()]
    a.query_list = parse_queries(a.queries)
    a.engine_list = [e.strip() for e in a.engines.split(",") if e.strip()]
    bad = [e for e in a.engine_list if e not in ENGINES]
    if bad:
        ap.error(f"unknown engine(s) {bad}: choose from {', '.join(ENGINES)}")
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    return a


def parse_queries(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.replace("q", "").replace("Q", "").split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    if not out or any(q < 1 or q > 22 for q in out):
        raise SystemExit(f"--queries {spec!r}: TPC-H has q1..q22")
    return list(dict.fromkeys(out))


# ------------------------------------------------------------------ memory

def proc_status_bytes(field: str) -> int | None:
    """VmRSS, VmHWM, ... of this process from /proc/self/status, in bytes."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def malloc_trim() -> None:
    """Hands glibc's freed heap back to the system (ladle and CPython allocate
    there), so that the RSS before a query is less what earlier queries left."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def rss_now() -> int | None:
    """Resident bytes now, from /proc/self/statm (cheaper than status)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return proc_status_bytes("VmRSS")


PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class RssSampler:
    """The most RSS seen by a thread that reads it every interval seconds while
    the block runs: the fallback where VmHWM cannot be reset (gVisor has no
    clear_refs). The engines release the GIL while they work, so it samples."""

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _take(self) -> None:
        r = rss_now()
        if r is not None:
            self.peak = max(self.peak, r)
            self.samples += 1

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._take()

    def __enter__(self) -> "RssSampler":
        self._take()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._take()


def reset_hwm() -> bool:
    """Resets VmHWM to the current RSS (Linux >= 4.0); False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# ------------------------------------------------------------------ worker

def tpch_query(q: int, tables: dict[str, Any], sf: float) -> tuple[Any, str]:
    """q's Polars LazyFrame and DuckDB SQL, with bench.py's parameters."""
    from tpch_queries import QUERIES
    from tpch_sql import sql

    fraction = 0.0001 / sf
    lf = QUERIES[q](tables, fraction=fraction) if q == 11 else QUERIES[q](tables)
    return lf, sql(q, fraction=fraction)


def worker(args: argparse.Namespace) -> int:
    """One engine at one thread count: every query's warm-up, check and timed
    runs, one JSON line per query appended to args.partial as it finishes."""
    n = args.worker_threads
    assert os.environ.get("POLARS_MAX_THREADS") == str(n), "the parent sets POLARS_MAX_THREADS"
    import polars as pl
    import pyarrow as pa

    from common import TABLES, same_frame, same_values

    pa.set_cpu_count(n)
    pa.set_io_thread_count(n)
    engine = args.worker
    part = open(args.partial, "a", buffering=1)

    def emit(rec: dict[str, Any]) -> None:
        part.write(json.dumps(rec) + "\n")

    paths = {t: args.tables / f"{t}.parquet" for t in TABLES}
    t0 = time.perf_counter()
    con: Any = None
    eng: Any = None
    tables: dict[str, Any] = {}
    if engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute(f"SET threads = {n}")
        mem_gib = max(int(_mem_gib() // 3), 1)  # as bench.py: spill rather than be killed
        con.execute(f"SET memory_limit = '{mem_gib}GB'")
        con.execute(f"SET temp_directory = '{Path(tempfile.gettempdir()) / f'ladle-scaling-duckdb-{os.getpid()}'}'")
        for t, p in paths.items():
            kind = "VIEW" if args.parquet else "TABLE"
            con.execute(f"CREATE {kind} {t} AS SELECT * FROM read_parquet('{p}')")
    else:
        if args.parquet:
            tables = {t: pl.scan_parquet(p) for t, p in paths.items()}
        else:
            tables = {t: pl.read_parquet(p).lazy() for t, p in paths.items()}
        if engine == "ladle":
            import ladle

            eng = ladle.Engine(threads=n, raise_on_fail=True)
    load_s = time.perf_counter() - t0
    gc.collect()
    malloc_trim()
    can_reset = reset_hwm() if args.memory != "sample" else False
    if args.memory == "clear_refs" and not can_reset:
        raise SystemExit("--memory clear_refs: /proc/self/clear_refs is not writable here")
    method = "clear_refs" if can_reset else "sample"
    baseline = proc_status_bytes("VmRSS")
    emit({"kind": "meta", "engine": engine, "threads": n, "load_s": load_s, "baseline_rss_bytes": baseline,
          "clear_refs": can_reset, "memory_method": method, "pid": os.getpid()})
    print(f"[{engine} x{n}] tables {'opened' if args.parquet else 'loaded'} in {load_s:.2f}s, "
          f"RSS {(proc_status_bytes('VmRSS') or 0) / MIB:.0f} MiB", flush=True)

    failures = 0

    def one(q: int) -> None:
        """q's warm-up, check and timed runs, its record emitted."""
        nonlocal failures
        lf, sql = tpch_query(q, tables, args.sf) if engine != "duckdb" else (None, _sql(q, args.sf))
        ref = pl.read_parquet(args.refs / f"q{q}.parquet")
        run: Callable[[], Any]
        check: Callable[[Any], None]
        if engine == "polars":
            run = lf.collect
            check = lambda got: same_frame(got, ref, True)  # noqa: E731
        elif engine == "ladle":
            run = lambda: lf.collect(engine=eng)  # noqa: E731
            check = lambda got: same_frame(got, ref, True)  # noqa: E731
        else:
            run = lambda: con.sql(sql).to_arrow_table()  # noqa: E731
            check = lambda got: same_values(pl.from_arrow(got), ref, True, 1e-5)  # noqa: E731
        rec: dict[str, Any] = {"kind": "query", "engine": engine, "threads": n, "query": f"q{q}"}
        gc.collect()
        malloc_trim()
        rss0 = proc_status_bytes("VmRSS")
        if can_reset:
            reset_hwm()
        sampler = RssSampler()
        try:
            t = time.perf_counter()
            if can_reset:
                got = run()
            else:  # sampled during the (untimed) warm-up only
                with sampler:
                    got = run()
            rec["warmup_s"] = time.perf_counter() - t
            check(got)
            del got
            times = []
            for _ in range(args.runs):
                t = time.perf_counter()
                run()
                times.append(time.perf_counter() - t)
        except AssertionError as e:
            failures += 1
            rec.update(status="WRONG", note=f"{engine}'s answer differs from Polars': {str(e)[:2000]}")
        except Exception as e:  # noqa: BLE001 - ladle.UnsupportedError, an engine's own error
            unsupported = type(e).__name__ == "UnsupportedError"
            failures += not unsupported
            rec.update(status="unsupported" if unsupported else "error", note=f"{type(e).__name__}: {str(e)[:2000]}")
        else:
            rec.update(status="ok", median_s=statistics.median(times), runs_s=times)
        hwm = proc_status_bytes("VmHWM") if can_reset else (sampler.peak or None)
        if not can_reset:
            rec["rss_samples"] = sampler.samples
        if hwm is not None and rss0 is not None:
            rec.update(peak_bytes=max(hwm - rss0, 0), hwm_bytes=hwm, rss_before_bytes=rss0,
                       above_tables_bytes=max(hwm - baseline, 0) if baseline is not None else None)
        emit(rec)
        med = f"{rec['median_s']:8.4f}s" if rec["status"] == "ok" else f"{rec['status']:>9s}"
        mem = f"peak +{rec['peak_bytes'] / MIB:8.1f} MiB (HWM {rec['hwm_bytes'] / MIB:8.1f})" if "peak_bytes" in rec else ""
        print(f"  {engine:6s} x{n:<3d} q{q:<3d} {med} {mem} {(rec.get('note') or '').splitlines()[0][:100] if rec.get('note') else ''}", flush=True)

    if args.interleave:
        # the parent hands out the queries one at a time, each engine in turn
        print("@@ready", flush=True)
        while (line := sys.stdin.readline().strip()) not in ("", "end"):
            one(int(line))
            print(f"@@done {int(line)}", flush=True)
    else:
        for q in args.query_list:
            one(q)
    if eng is not None:
        emit({"kind": "ladle_stats", "engine": engine, "threads": n, "stats": eng.stats()})
    part.close()
    return 1 if failures else 0


def _sql(q: int, sf: float) -> str:
    from tpch_sql import sql

    return sql(q, fraction=0.0001 / sf)


def _affinity() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def _mem_gib() -> float:
    try:
        kb = next(int(l.split()[1]) for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
        return kb / 2**20
    except (OSError, StopIteration):
        return 8.0


# ------------------------------------------------------------------ parent

def run_child(cmd: list[str], env: dict[str, str], timeout: float | None) -> tuple[int, int | None, bool]:
    """(exit code, the child's ru_maxrss in bytes, whether it was cut at timeout)."""
    p = subprocess.Popen(cmd, env=env)
    deadline = time.monotonic() + timeout if timeout else None
    timed_out = False
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if deadline is not None and time.monotonic() > deadline:
            p.kill()
            timed_out = True
            pid, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_maxrss * 1024, timed_out


def interleaved(args: argparse.Namespace, n: int, tmp: Path, command: Callable[[str, int, Path], list[str]],
                collect: Callable[[dict[str, Any], Path], None], t_start: float) -> None:
    """--interleave: every engine's worker at n threads alive at once, each
    waiting on its stdin; the queries handed out one at a time, engine after
    engine (the order rotated per query), so that only one engine runs at a
    time and each query's engines run within seconds of each other: a machine
    whose speed drifts over minutes (a shared VM) moves them alike."""
    import queue

    procs: dict[str, subprocess.Popen[str]] = {}
    lines: dict[str, queue.Queue[str | None]] = {}
    partials = {e: tmp / f"{e}-{n}.jsonl" for e in args.engine_list}
    started = time.monotonic()

    def pump(e: str) -> None:
        assert procs[e].stdout is not None
        for ln in procs[e].stdout:
            lines[e].put(ln)
        lines[e].put(None)

    def left() -> float | None:
        return max(args.budget - (time.monotonic() - t_start), 0.0) if args.budget else None

    def wait_for(e: str, token: str) -> bool:
        """Echo e's output until a line starting with token; False at EOF or the budget."""
        while True:
            try:
                ln = lines[e].get(timeout=left())
            except queue.Empty:
                return False
            if ln is None:
                return False
            if ln.startswith(token):
                return True
            print(ln, end="", flush=True)

    for e in args.engine_list:
        env = dict(os.environ, POLARS_MAX_THREADS=str(n))
        procs[e] = subprocess.Popen(command(e, n, partials[e]), env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True, bufsize=1)
        lines[e] = queue.Queue()
        threading.Thread(target=pump, args=(e,), daemon=True).start()
    alive = [e for e in args.engine_list if wait_for(e, "@@ready")]
    cut = False
    for i, q in enumerate(args.query_list):
        if args.budget and (left() or 0) <= 0:
            cut = True
            break
        k = i % len(alive) if alive else 0
        for e in alive[k:] + alive[:k]:
            stdin = procs[e].stdin
            assert stdin is not None
            try:
                stdin.write(f"{q}\n")
                stdin.flush()
            except BrokenPipeError:
                pass
            if not wait_for(e, "@@done"):
                cut |= procs[e].poll() is None  # still running: the budget, not a crash
                alive.remove(e)
    for e, pr in procs.items():
        try:
            assert pr.stdin is not None
            pr.stdin.write("end\n")
            pr.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        if pr.poll() is None and e not in alive:
            pr.kill()
        _, status, ru = os.wait4(pr.pid, 0)
        while wait_for(e, "@@"):  # the rest of its output
            pass
        w: dict[str, Any] = {"engine": e, "threads": n, "rc": os.waitstatus_to_exitcode(status),
                             "wall_s": time.monotonic() - started, "process_maxrss_bytes": ru.ru_maxrss * 1024,
                             "timed_out": cut, "interleaved": True}
        collect(w, partials[e])


def ladle_reads(path: Path) -> str | None:
    """None when ladle reads this Parquet file, else its error."""
    import polars as pl

    import ladle

    try:
        pl.scan_parquet(path).collect(engine=ladle.Engine(threads=1, raise_on_fail=True))
        return None
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


def make_refs(args: argparse.Namespace, tables_dir: Path, refs: Path) -> float:
    """Polars' answers (its default engine and thread count), one Parquet file a query."""
    import polars as pl

    from common import TABLES

    t0 = time.perf_counter()
    tables = {t: pl.read_parquet(tables_dir / f"{t}.parquet").lazy() for t in TABLES}
    for q in args.query_list:
        lf, _ = tpch_query(q, tables, args.sf)
        lf.collect().write_parquet(refs / f"q{q}.parquet")
    del tables
    gc.collect()
    return time.perf_counter() - t0


def versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for mod in ("ladle", "polars", "duckdb", "pyarrow", "numpy"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001
            out[mod] = f"not importable: {type(e).__name__}: {e}"
    from common import git_commit

    out["ladle_commit"] = git_commit()
    return out


def main(args: argparse.Namespace) -> int:
    if args.plot_only:
        doc = json.loads(args.plot_only.read_text())
        doc["summary"] = summarize(doc)
        print(tables_md(doc))
        args.out.mkdir(parents=True, exist_ok=True)
        png = args.out / (args.plot_only.stem + ".png")
        if chart(doc, png):
            print(f"wrote {png}")
        return 0

    import polars as pl

    from common import machine, tpch_dir, tpch_files, tpch_source

    t_start = time.monotonic()
    paths = tpch_files(args)
    tables_dir = tpch_dir(args.data, args.sf)
    compression = "zstd (Polars' default)"
    if args.parquet and "ladle" in args.engine_list:
        err = ladle_reads(paths["region"])
        if err is not None:
            # a ladle built without a codec (no zstd.h where it was built): the same
            # tables uncompressed, for every engine, so all read the same files
            plain = tables_dir.with_name(tables_dir.name + "-uncompressed")
            plain.mkdir(parents=True, exist_ok=True)
            for t, p in paths.items():
                if not (plain / p.name).exists():
                    pl.read_parquet(p).write_parquet(plain / p.name, compression="uncompressed", row_group_size=1 << 17)
            tables_dir = plain
            compression = f"uncompressed: ladle could not read the zstd files ({err[:200]})"
            print(f"--parquet: {compression}", flush=True)

    day = dt.date.today().isoformat()
    stem = f"{day}-{socket.gethostname()}-scaling" + (f"-sf{args.sf:g}" if args.sf != 1 else "") + \
        ("-parquet" if args.parquet else "")
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / f"{stem}.json"
    doc: dict[str, Any] = {
        "kind": "tpch-thread-scaling", "date": day, "machine": {**machine(), "affinity_cores": _affinity()},
        "versions": versions(),
        "params": {"sf": args.sf, "threads": args.thread_list, "runs": args.runs, "queries": [f"q{q}" for q in args.query_list],
                   "engines": args.engine_list, "source": "parquet" if args.parquet else "memory",
                   "parquet_compression": compression if args.parquet else None, "budget_s": args.budget or None, "interleave": args.interleave},
        "tpch_data": tpch_source(args.sf),
        "method": (("every engine's process alive at once, taking turns query by query (engine order rotated per "
                    "query; one engine runs at a time); " if args.interleave else "") +
                   "a fresh process per engine and thread count; per query a warm-up (its answer checked against "
                   "Polars', computed once by the parent), then the timed runs' median; glibc's heap trimmed and VmHWM reset "
                   "through /proc/self/clear_refs before the warm-up; peak_bytes = VmHWM after the query's runs minus "
                   "VmRSS before its warm-up; above_tables_bytes = VmHWM minus VmRSS once the tables were loaded"),
        "memory_method": None, "status": "running", "workers": [], "results": [], "failures": [], "summary": {},
    }

    def save() -> None:
        doc["wall_s"] = time.monotonic() - t_start
        doc["summary"] = summarize(doc)
        tmp = json_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(doc, indent=1))
        tmp.replace(json_path)

    print(f"TPC-H SF{args.sf:g} ({'Parquet' if args.parquet else 'in memory'}), q{args.queries}, threads "
          f"{args.thread_list}, engines {args.engine_list}, {args.runs} timed runs after a warm-up; "
          f"{doc['versions']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="ladle-scaling-") as tmp:
        refs = Path(tmp) / "refs"
        refs.mkdir()
        doc["refs_s"] = make_refs(args, tables_dir, refs)
        print(f"Polars' reference answers in {doc['refs_s']:.1f}s", flush=True)
        save()
        cut = False

        def command(engine: str, n: int, partial: Path) -> list[str]:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", engine, "--worker-threads", str(n),
                   "--sf", str(args.sf), "--runs", str(args.runs), "--queries", ",".join(map(str, args.query_list)),
                   "--tables", str(tables_dir), "--refs", str(refs), "--partial", str(partial)]
            if args.parquet:
                cmd.append("--parquet")
            if args.interleave:
                cmd.append("--interleave")
            return cmd + ["--memory", args.memory]

        def collect(w: dict[str, Any], partial: Path) -> None:
            """A finished worker's records into doc; w: engine, threads, rc, timed_out..."""
            nonlocal cut
            engine, n, rc, timed_out = w["engine"], w["threads"], w["rc"], w["timed_out"]
            cut |= timed_out
            lines = [json.loads(ln) for ln in partial.read_text().splitlines() if ln.strip()] if partial.exists() else []
            for rec in lines:
                kind = rec.pop("kind")
                if kind == "meta":
                    w.update({k: v for k, v in rec.items() if k not in ("engine", "threads")})
                elif kind == "ladle_stats":
                    w["ladle_stats"] = rec["stats"]
                else:
                    doc["results"].append(rec)
                    if rec["status"] in ("WRONG", "error"):
                        doc["failures"].append(f"{engine} x{n} {rec['query']}: {rec['status']}: {rec.get('note', '')[:500]}")
            if timed_out:
                doc.setdefault("cut", []).append(f"{engine} x{n}: cut at the budget ({args.budget:.0f}s) "
                                                 f"after {sum(r.get('query') is not None for r in lines)} queries")
            elif rc != 0 and not any(f.startswith(f"{engine} x{n} ") for f in doc["failures"]):
                doc["failures"].append(f"{engine} x{n}: the subprocess exited with {rc}")
            doc["workers"].append(w)
            methods = sorted(set(x["memory_method"] for x in doc["workers"] if "memory_method" in x))
            doc["memory_method"] = "; ".join(METHODS[m] for m in methods) or None
            save()

        for n in args.thread_list:
            if args.interleave:
                interleaved(args, n, Path(tmp), command, collect, t_start)
                continue
            for engine in args.engine_list:
                elapsed = time.monotonic() - t_start
                w: dict[str, Any] = {"engine": engine, "threads": n}
                if args.budget and elapsed >= args.budget:
                    w["skipped"] = f"budget of {args.budget:.0f}s spent"
                    doc["workers"].append(w)
                    cut = True
                    continue
                partial = Path(tmp) / f"{engine}-{n}.jsonl"
                env = dict(os.environ, POLARS_MAX_THREADS=str(n))
                t = time.monotonic()
                rc, maxrss, timed_out = run_child(command(engine, n, partial), env,
                                                  (args.budget - elapsed) if args.budget else None)
                w.update(rc=rc, wall_s=time.monotonic() - t, process_maxrss_bytes=maxrss, timed_out=timed_out)
                collect(w, partial)
        doc["status"] = "incomplete: budget spent" if cut else "complete"
        save()
    print("\n" + tables_md(doc))
    print(f"\nwrote {json_path}", flush=True)
    if chart(doc, json_path.with_suffix(".png")):
        print(f"wrote {json_path.with_suffix('.png')}")
    if cut:
        print(f"\nINCOMPLETE: the budget of {args.budget:.0f}s was spent: "
              + "; ".join(doc.get("cut", []) + [f"{w['engine']} x{w['threads']} not run" for w in doc["workers"]
                                                if "skipped" in w]), file=sys.stderr)
    if doc["failures"]:
        print("\nFAILURES (the run fails):\n  " + "\n  ".join(f[:300] for f in doc["failures"]), file=sys.stderr)
        return 1
    return 3 if cut else 0


# ------------------------------------------------------------------ report

def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    """Per thread count: each engine's geomean time over the queries every engine
    answered at that thread count, ladle's ratios to the peers (geomean of the
    per-query ratios), speedups against the engine's fewest threads, peak memory."""
    res = doc["results"]
    engines = list(dict.fromkeys(r["engine"] for r in res))
    threads = sorted(set(r["threads"] for r in res))
    ok = {(r["engine"], r["threads"], r["query"]): r for r in res if r["status"] == "ok"}
    out: dict[str, Any] = {"by_threads": {}, "engines": engines, "threads": threads}
    for n in threads:
        queries = list(dict.fromkeys(r["query"] for r in res if r["threads"] == n))
        here = [e for e in engines if any(r["engine"] == e and r["threads"] == n for r in res)]
        common = [q for q in queries if all((e, n, q) in ok for e in here)]
        s: dict[str, Any] = {"queries_common": len(common), "geomean_s": {}, "ratios": {}, "peak": {}}
        for e in here:
            if common:
                s["geomean_s"][e] = geomean([ok[(e, n, q)]["median_s"] for q in common])
            peaks = [r["peak_bytes"] for r in res if r["engine"] == e and r["threads"] == n and "peak_bytes" in r]
            hwms = [r["hwm_bytes"] for r in res if r["engine"] == e and r["threads"] == n and "hwm_bytes" in r]
            above = [r["above_tables_bytes"] for r in res
                     if r["engine"] == e and r["threads"] == n and r.get("above_tables_bytes") is not None]
            wk = next((w for w in doc.get("workers", []) if w["engine"] == e and w["threads"] == n and "rc" in w), {})
            s["peak"][e] = {"median_query_peak_bytes": statistics.median(peaks) if peaks else None,
                            "max_query_peak_bytes": max(peaks) if peaks else None,
                            "max_above_tables_bytes": max(above) if above else None,
                            "max_hwm_bytes": max(hwms) if hwms else None,
                            "baseline_rss_bytes": wk.get("baseline_rss_bytes"),
                            "process_maxrss_bytes": wk.get("process_maxrss_bytes")}
        for peer in ("polars", "duckdb"):
            pairs = [ok[("ladle", n, q)]["median_s"] / ok[(peer, n, q)]["median_s"] for q in queries
                     if ("ladle", n, q) in ok and (peer, n, q) in ok]
            if pairs:
                s["ratios"][f"ladle/{peer}"] = {"geomean": geomean(pairs), "n": len(pairs),
                                                "ladle_faster": sum(p < 1 for p in pairs)}
        out["by_threads"][str(n)] = s
    # speedup of each engine against its own fewest threads, over the queries it
    # answered at both thread counts
    out["speedup"] = {}
    for e in engines:
        ts = [n for n in threads if any((e, n, q) in ok for q in set(r["query"] for r in res))]
        if not ts:
            continue
        base = ts[0]
        sp: dict[str, Any] = {"base_threads": base}
        for n in ts:
            qs = [q for q in dict.fromkeys(r["query"] for r in res) if (e, base, q) in ok and (e, n, q) in ok]
            if qs:
                sp[str(n)] = geomean([ok[(e, base, q)]["median_s"] / ok[(e, n, q)]["median_s"] for q in qs])
        out["speedup"][e] = sp
    return out


def _mib(b: float | None) -> str:
    return "-" if b is None else f"{b / MIB:,.0f}"


def tables_md(doc: dict[str, Any]) -> str:
    s = doc["summary"] or summarize(doc)
    engines, threads = s["engines"], s["threads"]
    p = doc["params"]
    m = doc["machine"]
    lines = [f"TPC-H SF{p['sf']:g} {'from Parquet' if p['source'] == 'parquet' else 'in memory'}, "
             f"{len(p['queries'])} queries, median of {p['runs']} runs after a warm-up; {m['cpu_model']} "
             f"({m['cores']} cores, {m['memory_gib']} GiB); status: {doc['status']}", ""]
    peers = [x for x in ("polars", "duckdb") if x in engines and "ladle" in engines]
    head = ["threads"] + [f"{e} s" for e in engines] + [f"ladle/{x}" for x in peers] + ["queries"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in threads:
        b = s["by_threads"][str(n)]
        row = [str(n)] + [f"{b['geomean_s'][e]:.4f}" if e in b["geomean_s"] else "-" for e in engines]
        row += [f"{b['ratios'][f'ladle/{x}']['geomean']:.2f}" if f"ladle/{x}" in b["ratios"] else "-" for x in peers]
        row.append(str(b["queries_common"]))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Speedup against each engine's fewest threads (geomean of per-query ratios):", ""]
    head = ["threads"] + engines
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in threads:
        sp = [s["speedup"].get(e, {}).get(str(n)) for e in engines]
        lines.append("| " + " | ".join([str(n)] + [f"{x:.2f}x" if x is not None else "-" for x in sp]) + " |")
    lines += ["", f"Peak memory, MiB ({doc.get('memory_method') or 'unknown'}). q: each query's peak above the RSS "
              "before it, median / max over the queries; +tables: the most any query reached above the RSS with "
              "the tables loaded; HWM / tables: the largest VmHWM (tables included) / the RSS with the tables loaded", ""]
    head = (["threads"] + [f"{e} q median / max" for e in engines] + [f"{e} +tables" for e in engines]
            + [f"{e} HWM / tables" for e in engines])
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in threads:
        pk = s["by_threads"][str(n)]["peak"]
        row = [str(n)]
        row += [f"{_mib(pk[e]['median_query_peak_bytes'])} / {_mib(pk[e]['max_query_peak_bytes'])}" if e in pk else "-"
                for e in engines]
        row += [_mib(pk[e].get("max_above_tables_bytes")) if e in pk else "-" for e in engines]
        row += [f"{_mib(pk[e]['max_hwm_bytes'] or pk[e]['process_maxrss_bytes'])} / {_mib(pk[e]['baseline_rss_bytes'])}"
                if e in pk else "-" for e in engines]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def chart(doc: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib
    except ImportError:
        print(f"matplotlib is not installed: no PNG; draw it elsewhere with "
              f"`python bench/scaling.py --plot-only {path.with_suffix('.json').name}`", flush=True)
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator

    s = doc["summary"] or summarize(doc)
    engines, threads = s["engines"], s["threads"]
    if not threads:
        print("no results to plot")
        return False
    colors = {"ladle": "tab:red", "polars": "tab:blue", "duckdb": "tab:orange"}
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4.6))
    for e in engines:
        xs = [n for n in threads if e in s["by_threads"][str(n)]["geomean_s"]]
        a1.plot(xs, [s["by_threads"][str(n)]["geomean_s"][e] for n in xs], "o-", color=colors.get(e), label=e)
        sp = s["speedup"].get(e, {})
        xs = [n for n in threads if str(n) in sp]
        a2.plot(xs, [sp[str(n)] for n in xs], "o-", color=colors.get(e), label=e)
    base = threads[0]
    a2.plot(threads, [n / base for n in threads], "--", color="grey", linewidth=0.8, label="linear")
    fmt = FuncFormatter(lambda v, _: f"{v:.3g}")
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(threads)
        ax.set_xticklabels([str(n) for n in threads])
        ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(fmt)
        ax.yaxis.set_minor_formatter(fmt)
        ax.set_xlabel("threads")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    a1.set_ylabel("geomean seconds over the queries")
    a1.set_title("TPC-H geomean time (lower is better)", fontsize=10)
    a2.set_ylabel(f"speedup over {base} thread{'s' if base > 1 else ''}")
    a2.set_title("speedup (geomean of per-query ratios)", fontsize=10)
    width = 0.8 / max(len(engines), 1)
    for k, e in enumerate(engines):
        xs = [i + (k - (len(engines) - 1) / 2) * width for i in range(len(threads))]
        pk = [s["by_threads"][str(n)]["peak"].get(e, {}) for n in threads]
        base_rss = [(p.get("baseline_rss_bytes") or 0) / MIB for p in pk]
        # without clear_refs: the whole process' ru_maxrss over the tables
        above = [(p.get("max_above_tables_bytes") if p.get("max_above_tables_bytes") is not None else
                  max((p.get("process_maxrss_bytes") or 0) - (p.get("baseline_rss_bytes") or 0), 0)) / MIB for p in pk]
        a3.bar(xs, base_rss, width, color=colors.get(e), alpha=0.35, hatch="//", edgecolor="white")
        a3.bar(xs, above, width, bottom=base_rss, color=colors.get(e), label=e)
    a3.set_xticks(range(len(threads)))
    a3.set_xticklabels([str(n) for n in threads])
    a3.set_xlabel("threads")
    a3.set_ylabel("MiB")
    a3.set_title("peak RSS: with the tables loaded (hatched)\n+ the most a query added above them (solid)", fontsize=10)
    a3.legend(fontsize=8)
    p, m = doc["params"], doc["machine"]
    fig.suptitle(f"ladle {doc['versions'].get('ladle')} vs Polars {doc['versions'].get('polars')} vs DuckDB "
                 f"{doc['versions'].get('duckdb')}: TPC-H SF{p['sf']:g} "
                 f"{'from Parquet' if p['source'] == 'parquet' else 'in memory'}, {m['cpu_model']} ({m['cores']} cores), "
                 f"{doc['date']}" + ("" if doc["status"] == "complete" else f" [{doc['status']}]"), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


if __name__ == "__main__":
    ARGS = parse_args()
    sys.exit(worker(ARGS) if ARGS.worker else main(ARGS))
