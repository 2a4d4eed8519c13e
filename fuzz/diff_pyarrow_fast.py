"""The fast mode of fuzz/diff_pyarrow.py: thousands of executions a second.

Each of --jobs forked workers builds a pool of small base files once (the slow
mode's generators: pyarrow-written random tables, parquet-testing's small
files, structure mutants from tests/python/pqcraft.py), then loops: a cheap
mutation of a base (bytes flipped, set, cut out or inserted, a footer hit,
the file truncated; a few percent get a page-aware structure mutation, whose
result joins the pool), the mutant written to a tmpfs file, read by ladle's
native module alone (`_native.scan_parquet`, `Engine.execute`, the Arrow C
stream into pyarrow: no Polars) and by pyarrow from memory, and compared:

- ladle fails only with its own LadleError; any other exception, a crash, a
  hang (no progress for --timeout seconds) or output that is not valid Arrow
  (full validation) is a failure;
- a string column pyarrow reads that is not valid UTF-8 must make ladle raise;
- where both read, the values are equal after the type mapping ladle's Polars
  front end makes (large and view types as plain ones, dictionaries decoded,
  Duration as its Int64, INT96 past the nanosecond range saturated);
- where they differ, or where ladle reads a file pyarrow refuses, the slow
  mode (Polars' reader decides) must see it: the mutant is kept (a few per
  kind of difference) in OUT/slow-SEED/ and checked with the slow mode at the
  end when Polars and ladle's Python package import; only a difference that
  survives that check is a failure. Without Polars they are reported as
  needing a slow check (`diff_pyarrow.py --recheck DIR` later).

The parent keeps no pyarrow state across fork: it watches each worker's
progress through a shared page (executions, stage), restarts a worker that
died or hung, and keeps the input it was on (the tmpfs file) in OUT.
"""

from __future__ import annotations

import errno
import faulthandler
import glob
import importlib.machinery
import importlib.util
import json
import mmap
import os
import random
import re
import resource
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import diff_pyarrow as D

SLOT = 64  # bytes of the shared page per worker: executions (q), stage (i)
STAGES = ["setup", "mutate", "ladle", "pyarrow", "compare", "done"]
LADLE_STAGES = {"ladle"}  # a crash or hang here is ladle's
FAILURES = {"unclean", "ladle-read-invalid-utf8", "ladle-invalid-arrow"}
INT64_MAX = 2**63 - 1
KEEP_PER_KIND = 3  # mutants kept for the slow check per kind of difference per worker
KEEP_MAX = {"differ": 100, "lenient": 30, "names-not-utf8": 3}  # and per reason in all, per worker


# ------------------------------------------------------------------ native


def load_native() -> Any:
    """ladle._native without ladle/__init__.py (which imports Polars): the
    extension of the ladle package on sys.path, else of this checkout."""
    dirs = []
    spec = importlib.util.find_spec("ladle")
    if spec is not None and spec.submodule_search_locations:
        dirs += list(spec.submodule_search_locations)
    dirs.append(str(D.ROOT / "python" / "ladle"))
    for d in dirs:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            for so in sorted(glob.glob(os.path.join(d, "_native*" + suffix))):
                loader = importlib.machinery.ExtensionFileLoader("ladle._native", so)
                spec = importlib.util.spec_from_file_location("ladle._native", so, loader=loader)
                mod = importlib.util.module_from_spec(spec)
                loader.exec_module(mod)
                return mod
    raise ImportError(f"no ladle/_native extension in {dirs}: build it (python setup.py build_ext --inplace)")


class _Stream:
    """A result's Arrow C stream capsule, as pyarrow takes it."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.capsule


# ------------------------------------------------------------- comparison


def plain_type(t: Any) -> Any:
    """The type ladle (through Polars) gives for what pyarrow reads as `t`."""
    import pyarrow as pa

    T = pa.types
    if T.is_dictionary(t):
        return plain_type(t.value_type)
    if T.is_large_string(t) or T.is_string_view(t):
        return pa.string()
    if T.is_large_binary(t) or T.is_binary_view(t):
        return pa.binary()
    if T.is_list(t) or T.is_large_list(t) or T.is_list_view(t) or T.is_large_list_view(t):
        return pa.list_(plain_type(t.value_type))
    if T.is_struct(t):
        return pa.struct([pa.field(f.name, plain_type(f.type)) for f in t])
    if T.is_duration(t):
        return pa.int64()  # Parquet has no Duration: ladle reads the INT64, its front end relabels it
    return t


def _plain_column(col: Any) -> Any:
    t = plain_type(col.type)
    return col if t == col.type else col.cast(t)


def _float_equal(a: Any, b: Any) -> bool:
    """Equal floats where NaN equals NaN (Arrow's equality says NaN != NaN)."""
    import numpy as np

    if not a.is_null().equals(b.is_null()):
        return False
    x = a.fill_null(0).to_numpy()
    y = b.fill_null(0).to_numpy()
    return bool(np.array_equal(x, y, equal_nan=True))


def _int96_saturated(got: Any, want: Any) -> bool:
    """Every value where they differ is INT64_MAX on ladle's side: an INT96
    past the nanosecond range, which Polars and ladle saturate and pyarrow wraps."""
    import pyarrow as pa
    import pyarrow.compute as pc

    g, w = got.cast(pa.int64()), want.cast(pa.int64())
    differ = pc.and_(pc.fill_null(pc.not_equal(g, w), True), pc.invert(pc.and_(pc.is_null(g), pc.is_null(w))))
    return bool(pc.all(pc.equal(pc.filter(g, differ), INT64_MAX)).as_py() in (True, None))


def compare(got: Any, want: Any, int96: set[str]) -> tuple[str, str]:
    """(verdict, what): "equal", "int96-saturated" or "differ" (what says how)."""
    import pyarrow as pa

    if got.column_names != want.column_names:
        return "differ", f"columns {got.column_names[:8]} vs {want.column_names[:8]}"
    if got.num_rows != want.num_rows:
        return "differ", f"rows {got.num_rows} vs {want.num_rows}"
    verdict = "equal"
    for name, g, w in zip(got.column_names, got.columns, want.columns):
        tg, tw = plain_type(g.type), plain_type(w.type)
        if tg != tw:
            return "differ", f"column {name}: type {tg} vs {tw}"
        g, w = _plain_column(g), _plain_column(w)
        if g.equals(w):
            continue
        if pa.types.is_floating(tg) and _float_equal(g, w):
            continue
        if name in int96 and pa.types.is_timestamp(tg) and _int96_saturated(g, w):
            verdict = "int96-saturated"
            continue
        return "differ", f"column {name} ({tg}): values"
    return verdict, ""


def invalid_arrow(table: Any) -> str:
    """What makes ladle's output invalid Arrow, or "": full validation of every
    column, but decimals and times only structurally (a decimal past its
    precision, a time past midnight, is what the file holds: pyarrow and
    Polars read it as it is)."""
    import pyarrow as pa

    for name, col in zip(table.column_names, table.columns):
        t = col.type
        while pa.types.is_list(t) or pa.types.is_large_list(t):
            t = t.value_type
        try:
            col.validate(full=not (pa.types.is_decimal(t) or pa.types.is_time(t)))
        except Exception as e:
            return f"column {name}: {str(e)[:300]}"
    return ""


def utf8_invalid(table: Any) -> bool:
    return D.utf8_invalid(table)


def int96_columns(pf: Any) -> set[str]:
    schema = pf.schema
    return {schema.column(i).path for i in range(len(schema)) if schema.column(i).physical_type == "INT96"}


# ------------------------------------------------------------- mutations


def mutate_footer(rng: random.Random, b: bytearray) -> bytearray:
    """A few bytes changed inside the footer (whose length the tail gives)."""
    n = len(b)
    if n < 12:
        return D.mutate_bytes(rng, b)
    flen = int.from_bytes(b[n - 8 : n - 4], "little")
    lo = max(0, n - 8 - flen) if 0 < flen < n else max(0, n - 256)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(lo, n - 4)
        r = rng.random()
        if r < 0.5:
            b[i] ^= 1 << rng.randrange(8)
        elif r < 0.8:
            b[i] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        else:
            b[i : i + 1] = b""
            b[n - 5 : n - 5] = b"\0"  # the length of the file kept: the tail stays at its place
    return b


def mutate_fast(rng: random.Random, base: bytes) -> tuple[bytes, str]:
    """A cheap mutation of base; (mutant, how)."""
    r = rng.random()
    if r < 0.02:
        return base, "none"
    if r < 0.06:
        return base[: rng.randrange(len(base) + 1)], "truncate"
    if r < 0.22:
        return bytes(mutate_footer(rng, bytearray(base))), "footer"
    ops = rng.choice([1, 1, 1, 2, 2, 4, 8])  # few: more mutants still parse
    return bytes(D.mutate_bytes(rng, bytearray(base), ops)), "bytes"


# ------------------------------------------------------------------ worker


class Worker:
    """One worker's loop; stage and executions go to its slot of the shared page."""

    def __init__(self, index: int, gen: int, seed: int, mm: mmap.mmap, wfd: int, cur: Path, out: Path,
                 slowdir: Path, self_test: str | None) -> None:
        self.index, self.gen, self.seed = index, gen, seed
        self.mm, self.wfd, self.cur, self.out, self.slowdir = mm, wfd, cur, out, slowdir
        self.self_test = self_test
        self.rng = random.Random(f"{seed}:{index}:{gen}")
        self.execs = 0
        self.counts: dict[str, int] = {}
        self.kept: dict[str, int] = {}

    # shared page and pipe
    def stage(self, s: str) -> None:
        struct.pack_into("<qi", self.mm, self.index * SLOT, self.execs, STAGES.index(s))

    def send(self, msg: dict) -> None:
        data = (json.dumps(msg) + "\n").encode()
        while data:
            data = data[os.write(self.wfd, data) :]

    def flush_counts(self) -> None:
        if self.counts:
            self.send({"counts": self.counts})
            self.counts = {}

    # the pool
    def build_pool(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rng = self.rng
        self.bases: list[bytes] = []
        for p in sorted(D.DATA.glob("*.parquet")):
            if p.stat().st_size <= 32 << 10:
                b = p.read_bytes()
                try:
                    pq.ParquetFile(pa.BufferReader(b)).read(use_threads=False)
                except Exception:
                    continue
                self.bases.append(b)
        for _ in range(24):
            self.bases.append(self.new_random())
        self.derived: list[bytes] = []
        for _ in range(16):
            self.structure(rng.choice(self.bases))

    def new_random(self) -> bytes:
        for _ in range(8):
            b = D.write_random(self.rng, sizes=(1, 7, 30, 100, 300))
            if len(b) <= 64 << 10:
                break
        return b

    def structure(self, base: bytes) -> bytes:
        """A page-aware mutant (pqcraft), kept in the pool of derived bases."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            b = D.mutate_structure(self.rng, base)
        except Exception:
            return bytes(D.mutate_bytes(self.rng, bytearray(base)))
        try:  # a base for more mutations only where pyarrow still reads it
            pq.ParquetFile(pa.BufferReader(b)).read(use_threads=False)
        except Exception:
            return b
        if len(self.derived) < 32:
            self.derived.append(b)
        else:
            self.derived[self.rng.randrange(32)] = b
        return b

    # one execution
    def pick(self) -> tuple[bytes, str]:
        rng = self.rng
        if self.execs % 400 == 399:  # the pool renewed slowly
            self.bases[rng.randrange(len(self.bases))] = self.new_random()
        r = rng.random()
        if r < 0.04:
            return self.structure(rng.choice(self.bases)), "structure"
        pool = self.derived if self.derived and r < 0.35 else self.bases
        return mutate_fast(rng, rng.choice(pool))

    def ladle_read(self, path: str) -> Any:
        import pyarrow as pa

        N = self.N
        eng = self.engines[0] if self.rng.random() < 0.75 else self.engines[1]
        os.environ["LADLE_MMAP"] = "1" if self.rng.random() < 0.5 else "0"
        res = eng.execute(N.scan_parquet([path], None, -1))
        if self.self_test == "raise" and self.execs >= 30:
            raise ValueError("self-test: not a LadleError")
        if self.self_test == "crash" and self.execs >= 30:
            os.kill(os.getpid(), signal.SIGSEGV)
        if self.self_test == "hang" and self.execs >= 30:
            time.sleep(3600)
        got = pa.table(_Stream(res.arrow_stream()))
        if self.self_test == "corrupt" and got.num_rows > 0:
            got = got.slice(1)  # the harness's own test: a wrong answer must be reported
        return got

    def one(self) -> tuple[str, str, str]:
        """(key, failure message or "", keep reason or "") for one execution."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.stage("mutate")
        b, how = self.pick()
        with open(self.cur, "wb") as f:
            f.write(b)
        self.stage("ladle")
        got = None
        try:
            got = self.ladle_read(str(self.cur))
            lad = "ok"
        except self.N.LadleError as e:
            lad = "unsupported" if e.args and e.args[0] == self.N.LADLE_ENOTSUP else "error"
        except BaseException as e:  # anything else is a bug: not a clean error
            if isinstance(e, KeyboardInterrupt):
                raise
            return "ladle:unclean", f"{type(e).__name__}: {str(e)[:300]} ({how})", ""
        if got is not None:
            try:
                got.column_names
            except UnicodeDecodeError:
                # names that are not UTF-8 (Polars refuses such a footer before ladle runs)
                return "ladle:ok -> names-not-utf8", "", "names-not-utf8"
            invalid = invalid_arrow(got)
            if invalid:
                return "ladle:ok -> ladle-invalid-arrow", f"ladle's output is not valid Arrow: {invalid}", ""
        self.stage("pyarrow")
        try:
            pf = pq.ParquetFile(pa.BufferReader(b))
            want = pf.read(use_threads=False)
            pya = "ok"
        except Exception as e:
            key = f"ladle:{lad} pyarrow:error"
            if got is None:
                return key, "", ""
            # ladle reads what pyarrow refuses: Polars decides (a sample kept for it)
            msg = re.sub(r"\d+", "N", str(e))[:80]
            return key + " -> lenient", "", f"lenient: pyarrow: {msg}"
        key = f"ladle:{lad} pyarrow:{pya}"
        if got is None:
            return key, "", ""
        self.stage("compare")
        if utf8_invalid(want):
            # read again from a fresh copy: 10 times in 3.2 million executions pyarrow's
            # table failed validation once and not on any re-read of the same bytes
            # (an empty list<string> of a row group that claims 0 rows; ladle's own
            # output passed full validation), so only a repeatable one counts
            again = pq.ParquetFile(pa.BufferReader(bytes(b))).read(use_threads=False)
            if not utf8_invalid(again):
                return key + " -> pyarrow-unrepeatable-invalid-utf8", "", "pyarrow-unrepeatable-invalid-utf8"
            return key + " -> ladle-read-invalid-utf8", "ladle read a string column that is not valid UTF-8", ""
        try:
            verdict, what = compare(got, want, int96_columns(pf))
        except Exception as e:
            verdict, what = "differ", f"incomparable: {type(e).__name__}: {str(e)[:120]}"
        if verdict == "differ" and D.zstd_divergence(b):
            verdict = "zstd-divergence"  # a corrupt page that zstd versions decode differently
        if verdict != "differ":
            return f"{key} -> {verdict}", "", ""
        return key + " -> needs-slow-check", "", "differ: " + re.sub(r"\d+", "N", what)

    def keep(self, why: str, failure: str) -> str:
        """The current input kept: for the slow check, or as a failure."""
        n = self.execs
        if failure:
            dest = self.out / f"diff-fast-{self.seed}-{self.index}-{self.gen}-{n}.parquet"
        else:
            reason = why.split(":")[0]
            if self.kept.get(why, 0) >= KEEP_PER_KIND or self.kept.get(reason, 0) >= KEEP_MAX.get(reason, 10):
                return ""
            self.kept[why] = self.kept.get(why, 0) + 1
            self.kept[reason] = self.kept.get(reason, 0) + 1
            self.slowdir.mkdir(parents=True, exist_ok=True)
            dest = self.slowdir / f"slow-{self.seed}-{self.index}-{self.gen}-{n}.parquet"
        shutil.copyfile(self.cur, dest)
        dest.with_suffix(".txt").write_text((failure or why) + "\n")
        return str(dest)

    def run(self, deadline: float, mem_mb: int) -> None:
        import warnings

        import pyarrow  # noqa: F401  (imported before the clock starts)

        warnings.simplefilter("ignore")
        self.stage("setup")
        self.N = load_native()
        self.engines = [self.N.Engine(1, 0), self.N.Engine(2, 0)]
        self.build_pool()
        if mem_mb:
            # a mutated footer can ask for any size: past this, allocations fail
            vm = _vm_bytes()
            resource.setrlimit(resource.RLIMIT_AS, (vm + (mem_mb << 20), resource.RLIM_INFINITY))
        last = time.time()
        while True:
            now = time.time()
            if now >= deadline:
                break
            try:
                key, failure, why = self.one()
            except Exception as e:  # the harness's own trouble (pyarrow on a strange table): counted, shown
                key, failure, why = f"harness error ({type(e).__name__})", "", ""
                if self.counts.get(key, 0) == 0:
                    import traceback

                    where = " <- ".join(f"{fr.name}:{fr.lineno}" for fr in reversed(traceback.extract_tb(e.__traceback__)[-4:]))
                    self.send({"note": f"harness error: {type(e).__name__}: {str(e)[:300]} (at {where})"})
            self.execs += 1
            self.stage("done")
            self.counts[key] = self.counts.get(key, 0) + 1
            if failure or why:
                kept = self.keep(why, failure)
                if failure:
                    self.send({"failure": f"{key}: {failure} (kept {kept})"})
                elif kept:
                    self.counts["kept for the slow check"] = self.counts.get("kept for the slow check", 0) + 1
            if now - last > 1.0:
                self.flush_counts()
                last = now
        self.flush_counts()


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) << 10
    except OSError:
        pass
    return 4 << 30


# ------------------------------------------------------------------ parent


class _Job:
    def __init__(self, index: int, gen: int, pid: int, rfd: int, cur: Path) -> None:
        self.index, self.gen, self.pid, self.rfd, self.cur = index, gen, pid, rfd, cur
        self.buf = b""
        self.execs = 0
        self.changed = time.time()


def _tmpfs() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def run(a: Any) -> int:
    """The fast mode's parent: forks a.jobs workers, restarts those that die
    or hang, then checks what they kept with the slow mode. Returns the exit status."""
    seed = a.seed if a.seed is not None else int(time.time())
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    slowdir = out / f"slow-{seed}"
    work = Path(tempfile.mkdtemp(prefix="ladle-diff-", dir=_tmpfs()))
    jobs = max(1, a.jobs)
    mm = mmap.mmap(-1, SLOT * jobs)
    t0 = time.time()
    deadline = t0 + a.seconds
    counts: dict[str, int] = {}
    failures: list[str] = []
    execs_done = 0
    restarts = 0
    running: dict[int, _Job] = {}

    def start(i: int, gen: int) -> None:
        cur = work / f"w{i}-{gen}.parquet"
        struct.pack_into("<qi", mm, i * SLOT, 0, 0)
        r, w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                os.close(r)
                faulthandler.enable()
                Worker(i, gen, seed, mm, w, cur, out, slowdir, a.self_test).run(deadline, a.mem_mb)
            except BaseException:
                import traceback

                traceback.print_exc()
                status = 3
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        os.close(w)
        os.set_blocking(r, False)
        running[i] = _Job(i, gen, pid, r, cur)

    def drain(job: _Job) -> None:
        while True:
            try:
                data = os.read(job.rfd, 1 << 16)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                break
            if not data:
                break
            job.buf += data
        *lines, job.buf = job.buf.split(b"\n")
        for line in lines:
            msg = json.loads(line)
            for k, v in msg.get("counts", {}).items():
                counts[k] = counts.get(k, 0) + v
            if "note" in msg:
                print("note: " + msg["note"], flush=True)
            if "failure" in msg:
                failures.append(msg["failure"])
                print("FAILURE " + msg["failure"], flush=True)

    def finish(job: _Job, status: int | None, why: str) -> None:
        """A worker gone: exited, died, or killed after a hang (why)."""
        nonlocal execs_done, restarts
        drain(job)
        os.close(job.rfd)
        execs, stage_i = struct.unpack_from("<qi", mm, job.index * SLOT)
        stage = STAGES[stage_i] if 0 <= stage_i < len(STAGES) else "?"
        execs_done += execs
        del running[job.index]
        clean = why == "" and status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        if not clean:
            what = why or (f"signal {os.WTERMSIG(status)}" if status is not None and os.WIFSIGNALED(status)
                           else f"exit {os.WEXITSTATUS(status) if status is not None else '?'}")
            kind = "hang" if why else "crash"
            execs_done += 1
            counts[f"{kind} in {stage}"] = counts.get(f"{kind} in {stage}", 0) + 1
            keep = out / f"diff-{kind}-{seed}-{job.index}-{job.gen}-{execs}.parquet"
            if job.cur.exists() and stage not in ("setup", "done"):
                shutil.copyfile(job.cur, keep)
            else:
                keep = Path("(no input: the worker was in " + stage + ")")
            line = f"{kind} ({what}) in {stage} on {keep}"
            if stage in LADLE_STAGES:
                failures.append(line)
                print("FAILURE " + line, flush=True)
            else:
                print("note: " + line, flush=True)
            if time.time() < deadline - 0.5:
                restarts += 1
                start(job.index, job.gen + 1)
        try:
            job.cur.unlink()
        except OSError:
            pass

    try:
        for i in range(jobs):
            start(i, 0)
        while running:
            fds = [j.rfd for j in running.values()]
            select.select(fds, [], [], 0.2)
            now = time.time()
            for job in list(running.values()):
                drain(job)
                pid, status = os.waitpid(job.pid, os.WNOHANG)
                if pid:
                    finish(job, status, "")
                    continue
                execs, stage_i = struct.unpack_from("<qi", mm, job.index * SLOT)
                if execs != job.execs or STAGES[stage_i] == "done":
                    job.execs, job.changed = execs, now
                limit = max(a.timeout, 300) if STAGES[stage_i] == "setup" else a.timeout
                if now - job.changed > limit:
                    os.kill(job.pid, signal.SIGKILL)
                    _, status = os.waitpid(job.pid, 0)
                    finish(job, status, f"no progress for {now - job.changed:.0f}s")
    finally:
        for job in running.values():
            os.kill(job.pid, signal.SIGKILL)
            os.waitpid(job.pid, 0)
        shutil.rmtree(work, ignore_errors=True)
    elapsed = time.time() - t0
    # what the workers kept for Polars' reader
    kept = sorted(slowdir.glob("*.parquet")) if slowdir.exists() else []
    slow = D.recheck(kept, a.recheck_seconds, env=dict(os.environ)) if kept and not a.no_recheck else None
    if slow is not None:
        failures += slow["failures"]
        for k, v in slow["counts"].items():
            counts["slow check: " + k] = counts.get("slow check: " + k, 0) + v
    rate = execs_done / max(elapsed, 1e-9)
    if slow is None:
        check = f"{len(kept)} need a slow check (in {slowdir}; Polars "
        check += "skipped)" if a.no_recheck else "not run)"
    elif slow["skipped"]:
        check = f"{len(kept)} need a slow check ({slow['skipped']}; run diff_pyarrow.py --recheck {slowdir})"
    else:
        check = (f"slow check of {len(kept)}: {slow['cleared']} cleared, {len(slow['failures'])} failed, "
                 f"{slow['unchecked']} unchecked")
    print(f"diff_pyarrow: fast: {execs_done} executions in {elapsed:.0f}s ({rate:.0f}/s, {rate / jobs:.0f}/s per job, "
          f"{jobs} jobs, seed {seed}, {restarts} restarts), {len(failures)} failures; {check}")
    for k in sorted(counts):
        print(f"  {counts[k]:9d}  {k}")
    if getattr(a, "gate", "all") == "crash":
        fatal = [f for f in failures if f.startswith(("crash", "hang", "ladle:unclean")) or "ladle-invalid-arrow" in f]
        if failures and not fatal:
            print(f"diff_pyarrow: --gate crash: {len(failures)} failures reported above, none a crash, a hang or an "
                  "unclean error")
        return 1 if fatal else 0
    return 1 if failures else 0
