"""The ladle engine for Polars: ``lf.collect(engine=ladle.Engine())``,
``engine.collect(lf)``, ``engine.execute(lf) -> ladle.Result``, ``engine.explain(lf)``.

How a query runs:
1. Polars optimizes the LazyFrame; ladle walks the optimized plan through Polars'
   NodeTraverser and builds a ladle plan (translate.py).
2. If everything translates, ladle runs the plan on its C engine.
3. If a file scan is the only thing ladle cannot run, the scans run on Polars and
   everything above them on ladle (a mixed plan); the warning says so.
4. Otherwise the whole query runs on Polars' CPU engine with a FallbackWarning naming
   what was unsupported, or raises UnsupportedError with raise_on_fail.
Runtime errors (a strict cast that fails) are raised, never retried on Polars.
"""

from __future__ import annotations

import io
import json
import os
import threading
import warnings
from typing import Any

import polars as pl
from polars.lazyframe.engine import Engine as _PolarsEngine

from . import _native as N
from . import _errors as ladle_errors
from ._errors import FallbackWarning, LadleError, UnsupportedError
from .result import Result
from .translate import Translator, Unsupported, sliced_unordered_join

_SCAN_KEYS = ("Scan", "PythonScan")


def _raise_on_fail_default() -> bool:
    return os.environ.get("LADLE_RAISE_ON_FAIL", "") not in ("", "0", "false", "False")


def _native_error(e: N.LadleError) -> LadleError:
    code, message = e.args
    return ladle_errors.ladle_error(code, message)


class Engine(_PolarsEngine):
    """Runs Polars LazyFrames on ladle.

    Parameters
    ----------
    device
        "cpu" (the default), or a GPU: "cuda", "cuda:N" or the int N. A GPU engine
        runs on the GPU the queries its kernels cover (in-memory scans, filters and
        projections of arithmetic and comparisons, whole-column sum/min/max/count;
        the README lists them) and runs any other query on ladle's CPU backend with
        a FallbackWarning that names the node and expression it could not run; one
        that runs out of GPU memory too. ``last_run`` says where a query ran. A
        machine without a usable GPU or without ladle's CUDA library raises
        LadleError saying which.
    threads
        Threads of ladle's pool; None means one per core. More than the cores
        this process may run on are capped to them (``engine.threads`` says how
        many it has).
    raise_on_fail
        Raise UnsupportedError instead of falling back to Polars. The environment
        variable LADLE_RAISE_ON_FAIL=1 sets it for every engine.
    memory_limit
        Bytes of column buffers and scratch the engine may hold at once, the results
        it handed out and still alive included; None: no limit. On a GPU engine,
        bytes of GPU memory. An allocation past
        it raises LadleMemoryError (a MemoryError) naming the sizes, and the engine
        stays usable. ``stats()`` reports ``memory_bytes`` and ``memory_peak``.
    """

    def __init__(
        self,
        device: str | int = "cpu",
        threads: int | None = None,
        raise_on_fail: bool | None = None,
        morsel_rows: int | None = None,
        memory_limit: int | None = None,
        *,
        _comm: Any = None,
    ) -> None:
        kind, ordinal = _parse_device(device)
        for name, v in (("threads", threads), ("morsel_rows", morsel_rows), ("memory_limit", memory_limit)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"ladle.Engine({name}={v!r}): must be a positive integer, or None for the default")
        self.device = "cpu" if kind == N.LADLE_DEVICE_CPU else f"cuda:{ordinal}"
        self.raise_on_fail = _raise_on_fail_default() if raise_on_fail is None else raise_on_fail
        try:
            self._engine = N.Engine(threads or 0, morsel_rows or 0, memory_limit or 0, kind, ordinal, _comm)
        except N.LadleError as e:
            raise _native_error(e) from None
        self.threads = self._engine.threads()
        # a GPU engine's queries, or a CPU engine's under LADLE_COLUMN_KERNELS=1
        # (a testing switch), run on the column kernels, refusing what they lack
        self._columns = bool(self._engine.device()[2])
        self._local = threading.local()  # per thread: an engine may be shared by threads

    @property
    def last_run(self) -> str:
        """Where this thread's last query ran: "ladle" (on the engine's device),
        "ladle-cpu" (a GPU engine's query on ladle's CPU backend), "mixed" (scans on
        Polars, the rest on ladle) or "polars"."""
        return getattr(self._local, "last_run", "")

    @last_run.setter
    def last_run(self, where: str) -> None:
        self._local.last_run = where

    def stats(self) -> dict[str, int]:
        """Counters since the engine was created: Parquet row groups read and skipped
        (and of those read, the ones decoded inside a pipeline rather than into a
        table first), rows a join's keys dropped early (predicate transfer), and the
        bytes held now through the engine's memory resource and the most held at
        once."""
        return dict(self._engine.stats())

    @property
    def name(self) -> str:
        return "ladle"

    def __repr__(self) -> str:
        return f"ladle.Engine(device={self.device!r}, threads={self.threads}, raise_on_fail={self.raise_on_fail})"

    # ------------------------------------------------------------ translation

    def _visit(self, lf: pl.LazyFrame, optimizations: Any) -> Any:
        ldf = lf._ldf
        if optimizations is not None:
            ldf = ldf.with_optimizations(optimizations._pyoptflags)
        return ldf.visit()

    def _job_ranks(self) -> int:
        """The ranks a query of this engine runs on (SPMDEngine: its job's)."""
        return 1

    def _query_plan(self, lf: pl.LazyFrame, optimizations: Any) -> tuple[N.Plan | None, str, dict[str, Any] | None]:
        """_plan for a query that runs (execute, collect; not explain): an SPMD
        engine tells the other ranks when it fails here."""
        return self._plan(lf, optimizations)

    def _plan(
        self, lf: pl.LazyFrame, optimizations: Any, ranks: int | None = None
    ) -> tuple[N.Plan | None, str, dict[str, Any] | None]:
        """(plan, note, sink): plan is None when the query must fall back; sink is
        the Parquet sink at the root, if any. Nothing of a query is kept on the
        engine, which several threads may use at once."""
        # Polars builds and optimizes the plan here: its errors (a missing file, an
        # empty CSV, a duplicate output name) are the user's and reach them as
        # Polars raised them, neither a fallback nor an UnsupportedError
        try:
            nt = self._visit(lf, optimizations)
            if sliced_unordered_join(nt):
                optimizations = _keep_observed_order(optimizations)
                nt = self._visit(lf, optimizations)
        except BaseException as e:
            # a panic inside Polars (a footer it cannot parse) arrives as pyo3's
            # PanicException, which `except Exception` does not catch
            if type(e).__name__ != "PanicException":
                raise
            raise LadleError(N.LADLE_EINVAL, f"Polars failed while planning this query: {e}") from None
        sink: dict[str, Any] | None = None
        nranks = ranks or self._job_ranks()
        try:
            tr = Translator(nt, self.threads, lambda: _explain(lf, optimizations), self._engine, nranks)
            sink = tr.sink()
            if sink is not None:
                return tr.translate_input(), "", sink
            return tr.translate(), "", None
        except N.LadleError as e:
            raise _native_error(e) from None
        except ladle_errors.LadleError:
            raise
        except Exception as e:  # anything else the visitor throws is a fallback, not a crash
            if not isinstance(e, Unsupported):
                e = Unsupported(f"translation ({type(e).__name__})", str(e))
            first = e
            if sink is not None or not first.what.startswith(tuple(f"plan node {k}" for k in _SCAN_KEYS)):
                return None, str(first), None
            mixed = _scans_on_polars(lf)
            if mixed is None:
                return None, str(first), None
            try:
                plan = Translator(
                    self._visit(mixed, optimizations),
                    self.threads,
                    lambda: _explain(mixed, optimizations),
                    self._engine,
                    nranks,
                ).translate()
            except Unsupported as second:
                # both: the scan's reason names the file and the column
                return None, f"{first}; with the scans on Polars: {second}", None
            return plan, f"{first}; the scans ran on Polars and the rest on ladle", None

    def _fallback(self, why: str) -> None:
        msg = f"ladle cannot run this query ({why}); it ran on Polars' CPU engine instead"
        if self.raise_on_fail:
            raise UnsupportedError(f"ladle cannot run this query: {why}")
        warnings.warn(msg, FallbackWarning, stacklevel=4)

    # -------------------------------------------------------------- execution

    def execute(self, lf: pl.LazyFrame, *, optimizations: Any = None) -> Result:  # type: ignore[override]
        """Runs `lf` and keeps the result in ladle's memory (a ladle.Result)."""
        plan, note, sink = self._query_plan(lf, optimizations)
        if sink is not None:
            raise ladle_errors.LadleError(1, "execute() keeps a result: use collect() or sink_parquet() for a sink")
        if plan is None:
            self._fallback(note)
            self.last_run = "polars"
            df = lf.collect(engine="in-memory")
            return Result._from_polars(df, self._engine)
        return self._run(plan, note)

    def _run(self, plan: N.Plan, note: str) -> Result:
        if note:
            if self.raise_on_fail:
                raise UnsupportedError(f"ladle cannot run all of this query: {note}")
            warnings.warn(f"ladle: mixed plan: {note}", FallbackWarning, stacklevel=3)
            self.last_run = "mixed"
        else:
            self.last_run = "ladle"
        # on the main thread, Ctrl-C stops the query (KeyboardInterrupt)
        main = threading.current_thread() is threading.main_thread()
        try:
            return Result(self._engine.execute(plan, main), plan)
        except N.LadleError as e:
            code = e.args[0]
            if not self._columns or code not in (N.LADLE_ENOTSUP, N.LADLE_ENOMEM):
                raise _native_error(e) from None
            why = e.args[1]
        # the GPU cannot run it (a node or expression it has no kernel for, or
        # out of its memory): ladle's CPU backend runs it, with a warning
        if self.raise_on_fail:
            if code == N.LADLE_ENOMEM:
                raise _native_error(N.LadleError(code, why))
            raise UnsupportedError(f"ladle cannot run this query on {self.device}: {why}")
        warnings.warn(f"ladle: {why}; the query ran on ladle's CPU backend instead", FallbackWarning, stacklevel=3)
        self.last_run = "ladle-cpu" if self.last_run == "ladle" else self.last_run
        try:
            return Result(self._engine.execute(plan, main, True), plan)
        except N.LadleError as e:
            raise _native_error(e) from None

    def collect(  # type: ignore[override]
        self,
        lf: pl.LazyFrame,
        *,
        optimizations: Any = None,
        background: bool = False,
        post_opt_callback: Any = None,
    ) -> pl.DataFrame:
        """Runs `lf` on ladle and returns a polars.DataFrame."""
        if background or post_opt_callback is not None:
            self._fallback("background collection and post-optimization callbacks")
            return lf.collect(engine="in-memory", background=background)  # type: ignore[call-overload]
        plan, note, sink = self._query_plan(lf, optimizations)
        if plan is None:
            self._fallback(note)
            self.last_run = "polars"
            return lf.collect(engine="in-memory")
        result = self._run(plan, note)
        if sink is not None:
            result.write_parquet(
                sink["path"], compression=sink["compression"], compression_level=sink["compression_level"],
                row_group_size=sink["row_group_size"], statistics=sink["statistics"],
            )
            return pl.DataFrame()
        return result.to_polars()

    def sink_parquet(self, lf: pl.LazyFrame, path: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """`lf.sink_parquet(path, engine=engine)`: the query on ladle, written by
        ladle's Parquet writer (snappy, zstd, gzip or none; statistics)."""
        from polars.lazyframe.sink_plan import _sink_parquet_plan

        optimizations = kwargs.pop("optimizations", None)
        self.collect(_sink_parquet_plan(lf, path, **kwargs), optimizations=optimizations)

    def _polars_sink(self, kind: str, lf: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
        self._fallback(f"sink_{kind}: ladle writes Parquet only")
        from polars.lazyframe.engine_config import _engine_from_name

        return getattr(_engine_from_name("in-memory"), f"sink_{kind}")(lf, *args, **kwargs)

    def sink_csv(self, lf: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return self._polars_sink("csv", lf, *args, **kwargs)

    def sink_ipc(self, lf: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return self._polars_sink("ipc", lf, *args, **kwargs)

    def sink_ndjson(self, lf: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return self._polars_sink("ndjson", lf, *args, **kwargs)

    def explain(self, lf: pl.LazyFrame, ranks: int | None = None) -> str:
        """The ladle plan, logical then physical (the rewrites chosen, their
        run-time conditions, pipelines and exchanges), or what would fall back to
        Polars and why. ``ranks``: plan as for that many ranks, to see the
        EXCHANGE nodes multi-rank execution runs (default: this engine's)."""
        if ranks is not None and (not isinstance(ranks, int) or ranks < 1):
            raise ValueError(f"explain: ranks must be a positive int, got {ranks!r}")
        plan, note, _ = self._plan(lf, None, ranks)
        if plan is None:
            return (
                f"FALLBACK to Polars' CPU engine: {note}\n\nPolars' plan:\n"
                + lf.explain(engine="in-memory")
            )
        head = f"MIXED: {note}\n" if note else f"ladle (device={self.device})\n"
        return head + self._engine.explain(plan, ranks or 0)


def _parse_device(device: Any) -> tuple[int, int]:
    """("cpu" | "cuda" | "cuda:N" | N) -> (device type, ordinal), as torch spells them."""
    if isinstance(device, bool) or not isinstance(device, (str, int)):
        raise ValueError(f"ladle.Engine(device={device!r}): expected 'cpu', 'cuda', 'cuda:N' or an int")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"ladle.Engine(device={device}): a GPU ordinal is 0 or more")
        return N.LADLE_DEVICE_CUDA, device
    if device == "cpu":
        return N.LADLE_DEVICE_CPU, 0
    if device == "cuda":
        return N.LADLE_DEVICE_CUDA, 0
    head, _, tail = device.partition(":")
    if head == "cuda" and tail.isdigit():
        return N.LADLE_DEVICE_CUDA, int(tail)
    raise ValueError(f"ladle.Engine(device={device!r}): expected 'cpu', 'cuda', 'cuda:N' or an int")


def _keep_observed_order(optimizations: Any) -> Any:
    """The caller's optimizations (Polars' defaults when None) without the pass that
    drops orders it thinks nothing observes (see translate.sliced_unordered_join)."""
    flags = pl.QueryOptFlags() if optimizations is None else optimizations.__copy__()
    flags.check_order_observe = False
    return flags


def _explain(lf: pl.LazyFrame, optimizations: Any) -> str:
    """Polars' text of the optimized plan that the visitor walks."""
    if optimizations is not None:
        return pl.LazyFrame._from_pyldf(lf._ldf.with_optimizations(optimizations._pyoptflags)).explain()
    return lf.explain()


def _scans_on_polars(lf: pl.LazyFrame) -> pl.LazyFrame | None:
    """The same query with every file or Python scan computed by Polars up front
    and spliced in as an in-memory frame; None if the plan cannot be split."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            dsl = json.loads(lf.serialize(format="json"))
        except Exception:
            return None

        def walk(node: Any) -> Any:
            if isinstance(node, dict):
                if len(node) == 1 and next(iter(node)) in _SCAN_KEYS:
                    leaf = pl.LazyFrame.deserialize(io.StringIO(json.dumps(node)), format="json")
                    df = leaf.collect(engine="in-memory")
                    return json.loads(df.lazy().serialize(format="json"))
                return {k: walk(v) for k, v in node.items()}
            if isinstance(node, list):
                return [walk(v) for v in node]
            return node

        try:
            return pl.LazyFrame.deserialize(io.StringIO(json.dumps(walk(dsl))), format="json")
        except Exception:
            return None
