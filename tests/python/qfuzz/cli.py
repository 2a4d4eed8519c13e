"""Campaigns: many cases through the worker pool, then failures shrunk and saved.

    python tests/python/qfuzz --seconds 600 --seed 7 --jobs 2 --out build-fuzz/qfuzz
    python tests/python/qfuzz --count 300 --seed 1
    python tests/python/qfuzz --case 7:1234          # one case: its reproducer and result

Writes to --out: summary.json (counts per outcome, the unsupported rate and its
reasons, the classes of failures with their cases) and one reproducer per shrunk
failure, <class>__<seed>_<index>.py. Exits 1 when any case failed (mismatch,
crash, timeout, Polars raising where ladle answers, ladle raising other than
UnsupportedError).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from .gen import generate
from .classify import cause
from .harness import BAD, OUTCOMES, coarse_class, describe, fine_class, norm_message, reproducer, request
from .pool import Pool
from .shrink import shrink


@dataclass
class Failure:
    ident: str
    result: dict[str, Any]
    coarse: str
    fine: str = ""
    cause: str = ""  # classify.cause of the shrunk case
    file: str = ""
    reproducer: str = ""
    shrink_runs: int = 0


@dataclass
class Summary:
    seed: int
    start: int
    jobs: int
    cases: int = 0
    seconds: float = 0.0
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    unsupported: collections.Counter[str] = field(default_factory=collections.Counter)
    both_errors: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[Failure] = field(default_factory=list)
    undetermined: int = 0  # generator produced a case the analysis calls undetermined (a generator bug)
    engines_differ: list[str] = field(default_factory=list)  # cases where Polars' own engines disagree
    not_ladle: list[str] = field(default_factory=list)  # Polars' own crashes, generator bugs

    def bad(self) -> list[Failure]:
        return self.failures

    def unsupported_rate(self) -> float:
        return self.outcomes["unsupported"] / max(1, self.cases)

    def to_json(self) -> dict[str, Any]:
        classes: dict[str, list[Failure]] = collections.defaultdict(list)
        for f in self.failures:
            classes[f.fine or f.coarse].append(f)
        return {
            "seed": self.seed,
            "start": self.start,
            "jobs": self.jobs,
            "cases": self.cases,
            "seconds": round(self.seconds, 1),
            "outcomes": {o: self.outcomes[o] for o in OUTCOMES if self.outcomes[o]},
            "unsupported_rate": round(self.unsupported_rate(), 4),
            "unsupported_reasons": self.unsupported.most_common(40),
            "both_error_kinds": self.both_errors.most_common(20),
            "undetermined_generated": self.undetermined,
            "polars_engines_differ_cases": self.engines_differ[:50],
            "polars_crashes_and_generator_errors": self.not_ladle[:100],
            "classes": [
                {"class": k, "count": len(v), "cases": [f.ident for f in v],
                 "reproducers": [f.file for f in v if f.file]}
                for k, v in sorted(classes.items(), key=lambda kv: -len(kv[1]))
            ],
            "coarse_classes": collections.Counter(f.coarse for f in self.failures).most_common(),
            "causes": collections.Counter(f.cause for f in self.failures if f.cause).most_common(),
        }

    def text(self) -> str:
        lines = [f"qfuzz seed {self.seed}: {self.cases} cases in {self.seconds:.0f} s ({self.jobs} jobs)"]
        for o in OUTCOMES:
            if self.outcomes[o]:
                lines.append(f"  {o:24s} {self.outcomes[o]:6d}  {100 * self.outcomes[o] / max(1, self.cases):5.1f}%")
        if self.unsupported:
            lines.append("unsupported, by reason:")
            lines += [f"  {n:5d}  {r}" for r, n in self.unsupported.most_common(12)]
        if self.failures:
            lines.append("failures, by class (named cause where the case was shrunk):")
            cnt = collections.Counter(f.cause or f.coarse for f in self.failures)
            lines += [f"  {n:5d}  {c}" for c, n in cnt.most_common()]
        return "\n".join(lines)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text)[:60].strip("_")


def campaign(
    seed: int,
    *,
    count: int | None = None,
    seconds: float | None = None,
    start: int = 0,
    jobs: int = 2,
    timeout: float = 30.0,
    out: Path | None = None,
    shrink_limit: int = 1000,
    shrink_per_class: int = 3,
    shrink_seconds: float = 60.0,
    shrink_total_seconds: float = 1e9,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
    dump: Path | None = None,
) -> Summary:
    """Runs cases seed:start, seed:start+1, ... until `count` cases or `seconds` pass."""
    summ = Summary(seed, start, jobs)
    t0 = time.monotonic()
    pool = Pool(jobs, timeout)
    pending: dict[int, dict[str, Any]] = {}

    def stop() -> bool:
        return seconds is not None and time.monotonic() - t0 > seconds

    def reqs() -> Iterator[tuple[int, dict[str, Any]]]:
        i = start
        while count is None or i < start + count:
            yield i, {"gen": [seed, i], "id": f"{seed}:{i}"}  # generated in the worker
            i += 1

    last_log = [time.monotonic()]
    dump_file = open(dump, "w") if dump is not None else None

    def done(i: int, res: dict[str, Any]) -> None:
        summ.cases += 1
        o = res["outcome"]
        if dump_file is not None:
            keep = {k: res.get(k) for k in ("outcome", "polars_error", "ladle_error", "diff", "phase", "signal", "seconds")}
            dump_file.write(json.dumps({"id": f"{seed}:{i}", **keep}) + "\n")
        summ.outcomes[o] += 1
        if res.get("det") is False:
            summ.undetermined += 1
        if o == "unsupported":
            summ.unsupported[norm_message(res["ladle_error"]["message"])] += 1
        elif o == "both_error":
            summ.both_errors[f"{res['polars_error']['type']} / {res['ladle_error']['type']}"] += 1
        elif o == "polars_engines_differ":
            summ.engines_differ.append(f"{seed}:{i}")
        elif o in ("polars_crash", "generator_error"):
            summ.not_ladle.append(f"{o} {seed}:{i}: {res.get('phase') or res.get('error', {}).get('message', '')}"[:300])
        elif o in BAD:
            summ.failures.append(Failure(f"{seed}:{i}", res, coarse_class(res)))
        if time.monotonic() - last_log[0] > 30:
            last_log[0] = time.monotonic()
            log(f"  {summ.cases} cases, {len(summ.failures)} failures, "
                f"{summ.outcomes['unsupported']} unsupported ({time.monotonic() - t0:.0f} s)")

    def done_checked(i: int, res: dict[str, Any]) -> None:
        res = generator_death(res)
        if res["outcome"] in ("crash", "timeout") and str(res.get("phase", "")).startswith("polars"):
            # it died while Polars ran: run Polars alone on the case (a fresh worker);
            # when Polars dies again, the crash is Polars' own
            again = pool_polars.run_one({"gen": [seed, i], "id": f"{seed}:{i}", "polars_only": True})
            if again["outcome"] in ("crash", "timeout") and str(again.get("phase", "")).startswith("polars"):
                res = dict(res, outcome="polars_crash", crash_outcome=res["outcome"])
            elif "panicked at crates/polars" in str(res.get("stderr", "")):
                # a panic inside Polars' own crates that a second run does not repeat
                # (seen: its streaming executor's "invalid TaskData when polling",
                # then a hang): Polars', not ladle's
                res = dict(res, outcome="polars_crash", crash_outcome=res["outcome"])
        done(i, res)

    pool_polars = Pool(1, timeout)
    try:
        pool.map(reqs(), done_checked, stop)
        for late in pool.late_crashes():
            # the worker died after answering this case: a crash all the same
            res = {"outcome": "late_crash", "phase": "after the answer", "signal": late["signal"], "stderr": late["stderr"]}
            summ.outcomes["late_crash"] += 1  # besides the case's own outcome
            summ.failures.append(Failure(str(late["id"]), res, coarse_class(res)))
        summ.seconds = time.monotonic() - t0
        if out is not None:
            # the counts before shrinking, which may take long or fail
            out.mkdir(parents=True, exist_ok=True)
            (out / "summary.json").write_text(json.dumps(summ.to_json(), indent=1))
        # shrink: a few per coarse class first, so that every class gets a small reproducer
        per_class: collections.Counter[str] = collections.Counter()
        order = sorted(summ.failures, key=lambda f: (per_class_key(f), f.ident))
        shrink_t0 = time.monotonic()
        shrunk = 0
        for f in order:
            if shrunk >= shrink_limit or time.monotonic() - shrink_t0 > shrink_total_seconds:
                break
            if per_class[f.coarse] >= shrink_per_class:
                continue
            per_class[f.coarse] += 1
            s, i = f.ident.split(":")
            run = (lambda r: run_twice(pool, r)) if f.result["outcome"] == "late_crash" else pool.run_one
            left = shrink_total_seconds - (time.monotonic() - shrink_t0)
            try:
                case = generate(int(s), int(i))
                small, res, req, runs = shrink(case, f.result, run, seconds=max(1.0, min(shrink_seconds, left)))
            except Exception as e:  # noqa: BLE001 - a tester bug must not lose the campaign's counts
                log(f"  could not shrink {f.ident}: {type(e).__name__}: {e}")
                continue
            f.fine = fine_class(small, res)
            f.shrink_runs = runs
            f.reproducer = reproducer(small, res, req, f.fine)
            f.cause = cause(f.fine, describe(res) + "\n" + small.setup_code())
            shrunk += 1
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                name = f"{slug(f.coarse)}__{s}_{i}.py"
                (out / name).write_text(f.reproducer)
                f.file = name
            log(f"  shrunk {f.ident} in {runs} runs: {f.fine}")
    finally:
        pool.close()
        pool_polars.close()
        if dump_file is not None:
            dump_file.close()
    summ.seconds = time.monotonic() - t0
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(summ.to_json(), indent=1))
    return summ


def generator_death(res: dict[str, Any]) -> dict[str, Any]:
    """res, as a generator_error when the worker died or hung while it generated the
    case: before any engine ran (ladle is not called there; Polars is, to type the
    expressions), so a tester bug, not a failure, and not a case the parent may
    generate again to shrink it (it would hang the parent as it hung the worker)."""
    if res["outcome"] in ("crash", "timeout") and res.get("phase") == "generate":
        return dict(res, outcome="generator_error", crash_outcome=res["outcome"],
                    error={"type": res["outcome"], "message": f"{res['outcome']} while generating the case"})
    return res


def run_twice(pool: Pool, req: dict[str, Any]) -> dict[str, Any]:
    """Runs req twice in one worker: a worker that dies after the first answer (a heap
    the first run corrupted, noticed later) gives a late_crash."""
    w = pool.workers[0]
    before = len(w.late)
    res = w.run(req)
    if res["outcome"] in ("crash", "timeout"):
        return res
    again = w.run(req)
    if len(w.late) > before:
        late = w.late[-1]
        return {"outcome": "late_crash", "phase": "after the answer", "signal": late["signal"], "stderr": late["stderr"]}
    if again["outcome"] in ("crash", "timeout"):
        return {"outcome": "late_crash", "phase": f"the same query again ({again.get('phase')})",
                "signal": again.get("signal", ""), "stderr": again.get("stderr", "")}
    return res


def per_class_key(f: Failure) -> str:
    return f.coarse


def one_case(ident: str, *, timeout: float, do_shrink: bool) -> int:
    s, i = ident.split(":")
    case = generate(int(s), int(i))
    req = request(case)
    pool = Pool(1, timeout)
    try:
        res = pool.run_one(req)
        if do_shrink and res["outcome"] in BAD + ("unsupported",):
            case, res, req, runs = shrink(case, res, pool.run_one)
            print(f"# shrunk in {runs} runs", file=sys.stderr)
    finally:
        pool.close()
    print(reproducer(case, res, req, fine_class(case, res) if res["outcome"] in BAD else ""))
    return 1 if res["outcome"] in BAD else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="qfuzz", description="random differential queries: ladle against Polars")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--count", type=int, default=None, help="number of cases")
    ap.add_argument("--seconds", type=float, default=None, help="time budget for running cases (shrinking comes after)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per case before it counts as a hang")
    ap.add_argument("--out", type=Path, default=None, help="directory for reproducers and summary.json")
    ap.add_argument("--shrink-per-class", type=int, default=3)
    ap.add_argument("--shrink-seconds", type=float, default=60.0, help="per failure")
    ap.add_argument("--shrink-total-seconds", type=float, default=600.0)
    ap.add_argument("--case", default=None, help="run one case SEED:INDEX and print its reproducer")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--gate", choices=("all", "crash"), default="all",
                    help="exit 1 on any failure (all) or only on a crash, a hang or a broken harness (crash)")
    ap.add_argument("--dump", type=Path, default=None, help="write every result as a JSON line here")
    ap.add_argument("--report", type=Path, nargs="+", default=None,
                    help="no run: report on these --out directories (causes, counts, smallest reproducers)")
    ap.add_argument("--copy", type=Path, default=None, help="with --report: copy each cause's smallest reproducer here")
    a = ap.parse_args(argv)
    if a.report:
        from .report import report

        print(report(a.report, a.copy))
        return 0
    if a.case:
        return one_case(a.case, timeout=a.timeout, do_shrink=not a.no_shrink)
    if a.count is None and a.seconds is None:
        a.seconds = 60.0
    summ = campaign(a.seed, count=a.count, seconds=a.seconds, start=a.start, jobs=a.jobs, timeout=a.timeout,
                    out=a.out, shrink_limit=0 if a.no_shrink else 10**6, shrink_per_class=a.shrink_per_class,
                    shrink_seconds=a.shrink_seconds, shrink_total_seconds=a.shrink_total_seconds, dump=a.dump)
    print(summ.text())
    if a.gate == "crash":
        fatal = ("crash", "late_crash", "timeout", "setup_error", "harness_error")
        return 1 if any(summ.outcomes[k] for k in fatal) else 0
    return 1 if summ.failures else 0
