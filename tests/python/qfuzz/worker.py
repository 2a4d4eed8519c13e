"""The worker process: runs cases on Polars and on ladle and compares them.

Reads one JSON request per line on stdin and writes JSON lines to its stdout: a
{"phase": ...} line before each step (so that when the process dies, the parent
knows whether Polars or ladle was running) and one result line per request.
Anything else the libraries print goes to stderr (fd 1 is pointed at fd 2).

A request: {"gen": [seed, index]} (the worker generates the case and analyses it), or
{"code", "order", "prefix", "taint", "fstr", "threads", "morsel",
"polars_engine", "other_engines"}. The expected answer is Polars' with
`engine=polars_engine` ("auto": what `lf.collect()` runs, which picks the in-memory
or the streaming engine per query); when ladle differs from it, the query also runs
on each of `other_engines` ("in-memory", "streaming"), and if one of them gives
ladle's answer the outcome is polars_engines_differ (Polars 2.1's engines disagree:
the in-memory engine divides floats by a scalar as a product with its reciprocal,
the streaming one divides), not a failure.
The result's "outcome" is one of
  equal                  both answered, the same answer
  mismatch               both answered, different answers ("diff": what differs)
  both_error             both raised
  polars_error_ladle_ok  Polars raised, ladle answered: a bug
  ladle_error            ladle raised (not UnsupportedError), Polars answered: a bug
  unsupported            ladle raised UnsupportedError, Polars answered
  polars_engines_differ  ladle differs from Polars' default engine but agrees with its other one
  polars_optimizer_differs  ladle differs from Polars but agrees with Polars without its optimizer
                         (QueryOptFlags.none()): Polars' optimizer changed the query's meaning
  polars_metadata_differs  ladle differs from Polars but agrees with Polars run operator by operator,
                         each operator's input collected and rebuilt from Arrow (Case.staged_code):
                         Polars' answer depends on its metadata (a sorted flag, a column held as
                         one value), not only on the data: a literal compared with a literal-made
                         column gives 1 row of 2 (4002:129564), arg_max of a constant column an
                         index by its sorted flag (4002:147060)
  polars_var_of_null_group  the only difference: Polars gives 0.0 where ladle gives null for a
                         var/std(ddof=0) (docs/semantics.md: Polars gives 0.0 for a one-row group
                         whose row is null when its groups are slices of sorted keys or of a one-row
                         frame, null otherwise; ladle gives null, as Series.var does)
  polars_wrong_height    ladle differs, and along a chain the first operator where Polars'
                         and ladle's heights part is a select or with_columns whose Polars height is
                         not the height of the frame it reads (1 for a select of single values
                         only), which no such operator can give, while ladle's is: a literal
                         compared with a column Polars holds as one value gives 1 row of 2
                         inside an expression (4002:5178, 4002:70259); or one of such an
                         operator's items selected alone (as Polars' optimizer leaves it when the
                         other items are not read) gives Polars a height that is neither its
                         input's nor 1, and ladle one of those (4403:37410)
  polars_signed_zero     ladle differs only by which zero min/max returns where -0.0 and 0.0 both
                         are the extreme: ladle's answer is Polars' own with each min/max written as
                         the first value equal to it (EXTREME_FIRST); Polars' choice depends on the
                         context and the order (4402:156987)
  polars_temporal_saturation  ladle run with Polars' in-memory engine's rule for a Datetime or
                         Duration mean/median out of i64's range (null; translate.
                         TEMPORAL_OVERFLOW_AS_NULL) gives Polars' answer: Polars' default engine,
                         which ladle follows, saturates such a mean in most plans and makes it null
                         in others (4402:178409, docs/semantics.md)
  polars_invalid_frame   Polars answered with a frame holding a column whose length is not the frame's
                         height (its own bug, 4407:21592); ladle's frame is whole
  too_large              both answered with more than TOO_LARGE_CELLS cells, of the same shape; the
                         values are not compared (sorting them would run out of memory)
  polars_arg_tie         ladle differs only by which of several equal extremes arg_max/arg_min
                         names: ladle's answer is Polars' own with each arg_max/arg_min written as
                         the first index holding the max/min (ARG_FIRST); Polars names another one
                         when it holds the column as one value or flags it sorted (4002:197238)
  generator_error        the generator failed on this seed:index (a tester bug, no query ran)
  polars_dropped_order   same rows in another order, where the query asks unique(maintain_order=True)
                         and Polars' optimizer runs it unordered (q.explain(): maintain_order: false);
                         or ladle's answer is Polars' without its check_order_observe pass, which
                         dropped an order a slice observes (docs/semantics.md, "Plans ladle changes")
  setup_error            the case's own code failed (a generator bug)
  harness_error          the worker itself failed (a tester bug)
(crash and timeout are decided by the parent.)
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import sys
import traceback
import warnings
from typing import Any

import polars as pl

TOO_LARGE_CELLS = 20_000_000  # answers larger than this are compared by shape only
MEMORY_LIMIT = 8 << 30  # address space per worker: a runaway allocation fails instead of swapping


def _err(e: BaseException) -> dict[str, str]:
    return {"type": type(e).__name__, "message": str(e)[:2000]}


class Runner:
    def __init__(self) -> None:
        import ladle

        self.ladle = ladle
        self.engines: dict[tuple[int, int | None], Any] = {}

    def engine(self, threads: int, morsel: int | None) -> Any:
        key = (threads, morsel)
        if key not in self.engines:
            self.engines[key] = self.ladle.Engine(raise_on_fail=True, threads=threads, morsel_rows=morsel)
        return self.engines[key]

    def run(self, req: dict[str, Any], phase: Any) -> dict[str, Any]:
        if "gen" in req:
            # the case is generated here rather than in the parent, which would otherwise
            # be the bottleneck of a campaign on many cores
            from .gen import generate
            from .harness import request

            phase("generate")
            seed, index = req["gen"]
            try:
                full = request(generate(int(seed), int(index)))
            except Exception as e:  # noqa: BLE001 - a generator bug: no query to compare
                return {"outcome": "generator_error", "error": _err(e), "trace": traceback.format_exc()[-2000:]}
            full["polars_only"] = req.get("polars_only", False)
            res = self._run(full, phase)
            res["det"] = full["det"]
            return res
        return self._run(req, phase)

    def _run(self, req: dict[str, Any], phase: Any) -> dict[str, Any]:
        from .compare import compare, input_scale, literal_scale, temporal_scale

        ns: dict[str, Any] = {}
        phase("setup")
        try:
            exec(compile(req["code"], "<case>", "exec"), ns)
            q = ns["q"]
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            return {"outcome": "setup_error", "error": _err(e), "trace": traceback.format_exc()[-2000:]}
        phase("polars")
        exp, perr = _collect(q, req.get("polars_engine", "auto"))
        if req.get("polars_only"):
            # a re-run of a case that crashed in one of Polars' phases: Polars alone
            for other in req.get("other_engines", []):
                phase("polars-" + other)
                _collect(q, other)
            return {"outcome": "equal", "polars_error": perr, "ladle_error": None}
        phase("ladle")
        got = lerr = None
        eng = self.engine(req["threads"], req["morsel"])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", self.ladle.FallbackWarning)
                got = q.collect(engine=eng)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            lerr = _err(e)
        phase("compare")
        frames = [v for k, v in ns.items() if k[:1] == "t" and k[1:].isdigit() and isinstance(v, pl.DataFrame)]
        scale, rows = input_scale(frames)
        scale = max(scale, literal_scale(req["code"]))
        tscale = temporal_scale(frames)

        def same(a: pl.DataFrame, b: pl.DataFrame) -> Any:
            return compare(a, b, order=req["order"], prefix=req["prefix"], taint=set(req["taint"]),
                           fstr=set(req["fstr"]), scale=scale, rows=rows, f32="pl.Float32" in req["code"], tscale=tscale)

        out: dict[str, Any] = {"polars_error": perr, "ladle_error": lerr}
        if lerr is not None and perr is not None:
            out["outcome"] = "both_error"
        elif perr is not None:
            out["outcome"] = "polars_error_ladle_ok"
            out["got_shape"] = list(got.shape) if got is not None else None
        elif lerr is not None:
            unsupported = lerr["type"] == "UnsupportedError"
            out["outcome"] = "unsupported" if unsupported else "ladle_error"
        elif got is not None and _frame_broken(got):
            out["outcome"] = "mismatch"
            out["diff"] = {"kind": "invalid", "detail": "ladle's frame has a column whose length is not its height"}
        elif exp is not None and _frame_broken(exp):
            # Polars handed back a frame with a column shorter than its height
            # (`pl.lit(1.5) >= pl.col("x").null_count()` in a group_by: 5 values in a
            # 9-row frame, 4407:21592): its own bug; ladle's frame is whole
            out["outcome"] = "polars_invalid_frame"
        elif exp is not None and got is not None and exp.height * max(exp.width, 1) > TOO_LARGE_CELLS:
            # (a chain of cross joins: 10.6M rows of 10 columns, 4405:64352) sorting both
            # answers to compare them runs past the worker's address space, and Polars
            # aborts: only the shapes are compared
            out["outcome"] = "too_large" if exp.shape == got.shape else "mismatch"
            if exp.shape != got.shape:
                out["diff"] = {"kind": "height", "detail": f"expected shape {exp.shape}, got {got.shape}"}
        else:
            assert exp is not None and got is not None
            diff = same(exp, got)
            if diff is None:
                out["outcome"] = "equal"
            else:
                out["outcome"] = "mismatch"
                out["diff"] = {"kind": diff.kind, "detail": diff.detail[:2000]}
            out["rows"] = exp.height
            out["last_run"] = eng.last_run
        def agrees(alt: pl.DataFrame | None, aerr: dict[str, str] | None, errors_too: bool = False) -> bool:
            """Does Polars' other answer equal ladle's (or raise where ladle raises)?"""
            return (alt is not None and got is not None and same(alt, got) is None) or (
                errors_too and aerr is not None and lerr is not None)

        def reclass(outcome: str) -> None:
            out["outcome_vs_default"] = out["outcome"]
            out["outcome"] = outcome

        if out["outcome"] in ("mismatch", "polars_error_ladle_ok", "ladle_error"):
            # Polars' other engines: when one gives ladle's answer (or raises where ladle
            # raises), Polars' own engines disagree and ladle follows one of them
            for other in req.get("other_engines", []):
                phase("polars-" + other)
                if agrees(*_collect(q, other), errors_too=True):
                    reclass("polars_engines_differ")
                    out["agrees_with"] = other
                    break
        if out["outcome"] in ("mismatch", "polars_error_ladle_ok", "ladle_error"):
            # Polars without its optimizer (type coercion and checks only): when it gives
            # ladle's answer, Polars' optimizer changed the query's meaning (a tail pushed
            # into a full join keeps other rows, 4002:128478), a bug of Polars'
            phase("polars-unoptimized")
            if agrees(*_collect(q, "in-memory", pl.QueryOptFlags.none()), errors_too=True):
                reclass("polars_optimizer_differs")
        if out["outcome"] == "mismatch" and "maintain_order=" in req["code"]:
            # Polars without only its check_order_observe pass: when that gives ladle's
            # answer, the pass dropped an order the query observes (a join's order
            # under a slice pushed into it, 4402:128827), as ladle plans such queries
            phase("polars-keep-order")
            flags = pl.QueryOptFlags()
            flags.check_order_observe = False
            if agrees(*_collect(q, "in-memory", flags)):
                reclass("polars_dropped_order")
        if out["outcome"] in ("mismatch", "polars_error_ladle_ok") and req.get("staged_code"):
            phase("polars-staged")
            if agrees(*_run_code(req["staged_code"])):
                reclass("polars_metadata_differs")
        if out["outcome"] == "mismatch" and req.get("prefixes_code"):
            # (a count or other value computed over a frame Polars gave a wrong
            # height counts too: select(pl.len()) after it, 4403:37410)
            phase("polars-heights")
            if _polars_height_wrong(req["prefixes_code"], eng):
                reclass("polars_wrong_height")
        if out["outcome"] == "mismatch" and (".arg_max()" in req["code"] or ".arg_min()" in req["code"]):
            phase("polars-arg-first")
            code = req["code"].replace(".arg_max()", ".pipe(_arg_first_max)").replace(".arg_min()", ".pipe(_arg_first_min)")
            if agrees(*_run_code(code.replace("import polars as pl\n", "import polars as pl\n" + ARG_FIRST, 1))):
                reclass("polars_arg_tie")
        if out["outcome"] == "mismatch" and "-0.0" in req["code"] and (".min()" in req["code"] or ".max()" in req["code"]):
            # min/max over both zeros: which zero Polars returns depends on the
            # context (select, group_by with or without maintain_order) and the
            # order; ladle returns the first (docs/semantics.md, 4402:156987)
            phase("polars-zero-first")
            code = req["code"].replace(".min()", ".pipe(_min_first)").replace(".max()", ".pipe(_max_first)")
            if agrees(*_run_code(code.replace("import polars as pl\n", "import polars as pl\n" + EXTREME_FIRST, 1))):
                reclass("polars_signed_zero")
        if out["outcome"] == "mismatch" and ("var(ddof=0)" in req["code"] or "std(ddof=0)" in req["code"]):
            assert exp is not None and got is not None
            if same(_zero_as_null(exp), _zero_as_null(got)) is None:
                reclass("polars_var_of_null_group")
        if out["outcome"] == "mismatch" and (".mean()" in req["code"] or ".median()" in req["code"]):
            # a temporal mean/median out of i64's range: Polars' default engine
            # saturates it in most plans (ladle follows that, docs/semantics.md) and
            # makes it null in others, as its in-memory engine always does (4402:178409):
            # ladle again with the in-memory engine's rule
            phase("ladle-temporal-null")
            from ladle import translate

            translate.TEMPORAL_OVERFLOW_AS_NULL = True
            try:
                alt, _ = _collect(q, eng)
            finally:
                translate.TEMPORAL_OVERFLOW_AS_NULL = False
            if alt is not None and exp is not None and same(exp, alt) is None:
                reclass("polars_temporal_saturation")
        if out["outcome"] == "mismatch" and out["diff"]["kind"] == "order" and _order_dropped(q, req["code"]):
            # the query asks unique(maintain_order=True) but Polars' optimizer turned it
            # unordered (q.explain() says maintain_order: false): Polars defines no order
            reclass("polars_dropped_order")
        return out


ARG_FIRST = """
def _arg_first_max(x):
    return pl.int_range(pl.len(), dtype=pl.UInt32).filter(x == x.max()).first()


def _arg_first_min(x):
    return pl.int_range(pl.len(), dtype=pl.UInt32).filter(x == x.min()).first()
"""

EXTREME_FIRST = """
def _min_first(x):
    return x.filter(x == x.min()).first()


def _max_first(x):
    return x.filter(x == x.max()).first()
"""


def _polars_height_wrong(code: str, eng: Any) -> bool:
    """Is there a chain (the main query, or another side of a join or concat) whose
    first operator where Polars' height and ladle's part is a select or with_columns
    that gives Polars a height no such operator can give (not its input's height; 1
    for a select of single values only) while ladle's is that height?"""
    ns: dict[str, Any] = {}
    try:
        exec(compile(code, "<prefixes>", "exec"), ns)
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, KeyboardInterrupt):
            raise
        return False
    return any(_chain_height_wrong(qs, kinds, eng) or _probe_height_wrong(qs, probes, eng) for qs, kinds, probes in ns["chains"])


def _height(q: Any, eng: Any) -> int | None:
    df, _ = _collect(q, eng)
    return None if df is None else df.height


def _probe_height_wrong(qs: list[Any], probes: list[list[Any]], eng: Any) -> bool:
    """Is there a select or with_columns one of whose items, selected alone on the
    operator's input, gives Polars a height no select can give (neither the input's
    height nor 1) and ladle one it can? Polars' optimizer leaves such a select where
    the other items are not read (4403:37410: a window of a literal beside a column,
    under a cross join that only counts rows)."""
    for i, ps in enumerate(probes):
        if not ps:
            continue
        h = _height(qs[i], "auto")
        if h is None:
            continue
        for probe in ps:
            p = _height(probe, "auto")
            if p is not None and p not in (h, 1) and _height(probe, eng) in (h, 1):
                return True
    return False


def _chain_height_wrong(qs: list[Any], kinds: list[str], eng: Any) -> bool:
    prev: int | None = None
    for i, q in enumerate(qs):
        p, _ = _collect(q, "auto")
        try:
            lad = q.collect(engine=eng)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            lad = None
        if p is None or lad is None:
            # a prefix alone may fail on both (a strict cast of a column the whole
            # query never reads): no height known there
            if (p is None) != (lad is None):
                return False
            prev = None
            continue
        if p.height != lad.height:
            if i == 0 or prev is None:
                return False
            kind = kinds[i - 1]
            allowed = {prev} if kind in ("with_columns", "select") else {1} if kind == "select:scalar" else set()
            return bool(allowed) and p.height not in allowed and lad.height in allowed
        prev = p.height
    return False


def _frame_broken(df: pl.DataFrame) -> bool:
    """Does df hold a column whose length is not its height (an invalid frame)?"""
    return any(len(s) != df.height for s in df.get_columns())


def _zero_as_null(df: pl.DataFrame) -> pl.DataFrame:
    """df with every float 0.0 (and -0.0) made null."""
    exprs = [
        pl.when(pl.col(c) == 0).then(None).otherwise(pl.col(c)).alias(c)
        for c, t in df.schema.items()
        if t.is_float()
    ]
    return df.with_columns(exprs) if exprs else df


def _run_code(code: str) -> tuple[pl.DataFrame | None, dict[str, str] | None]:
    """Polars' answer to q of code (the staged form of a case, or another rewrite)."""
    ns: dict[str, Any] = {}
    try:
        exec(compile(code, "<staged>", "exec"), ns)
    except BaseException as e:  # noqa: BLE001 - a Polars panic while staging
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, _err(e)
    return _collect(ns["q"], "in-memory")


def _order_dropped(q: pl.LazyFrame, code: str) -> bool:
    """Does Polars' optimized plan run a unique() unordered that the query asks
    to keep in order?"""
    if "maintain_order=True" not in code or ".unique(" not in code:
        return False
    try:
        plan = q.explain()
    except BaseException:  # noqa: BLE001
        return False
    return "UNIQUE[maintain_order: false" in plan


def _collect(q: pl.LazyFrame, engine: Any, opts: Any = None) -> tuple[pl.DataFrame | None, dict[str, str] | None]:
    """(result, None) or (None, error) of q on one of Polars' engines (or ladle's)."""
    try:
        if opts is not None:
            return q.collect(engine=engine, optimizations=opts), None  # type: ignore[arg-type]
        return q.collect(engine=engine), None  # type: ignore[arg-type]
    except BaseException as e:  # noqa: BLE001 - PanicException is a BaseException
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, _err(e)


def main() -> None:
    faulthandler.enable()  # a segfault leaves the Python stack in stderr
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(msg: dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    runner = Runner()
    send({"ready": True})
    for line in sys.stdin:
        req = json.loads(line)

        def phase(p: str) -> None:
            send({"phase": p})

        try:
            res = runner.run(req, phase)
        except BaseException as e:  # noqa: BLE001 - a harness error (or a Polars panic), reported as such
            if isinstance(e, KeyboardInterrupt):
                raise
            res = {"outcome": "harness_error", "error": _err(e), "trace": traceback.format_exc()[-2000:]}
        res["id"] = req.get("id")
        send(res)


if __name__ == "__main__":
    main()
