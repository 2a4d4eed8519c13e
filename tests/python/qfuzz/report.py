"""A report over campaign directories: outcomes, unsupported reasons, causes.

    python tests/python/qfuzz --report build-fuzz/qfuzz/1 build-fuzz/qfuzz/2 [--copy DIR]

Adds up the summary.json files, names the cause of every saved (shrunk) reproducer
(classify.py) and prints, per cause, how many failures it explains and its smallest
reproducer. --copy writes that smallest reproducer of each cause to DIR.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path
from typing import Any

from .classify import cause
from .cli import slug

DOC = re.compile(r'^"""qfuzz case (?P<id>\S+): (?P<fine>.*?)\n\n(?P<detail>.*?)\n"""', re.S)


def parse(path: Path) -> dict[str, Any] | None:
    text = path.read_text()
    m = DOC.match(text)
    if m is None:
        return None
    query = text.split("\n\n\ndef run(engine):")[0].split("import ladle\n", 1)[-1].strip()
    return {"id": m["id"], "fine": m["fine"], "detail": m["detail"], "text": text, "query": query, "path": path}


def file_name(cause_: str) -> str:
    """issue15_<n>_<words> for a class of issue 15, new_<words> for the others."""
    m = re.match(r"#(\d+) (.*)", cause_)
    if m:
        return f"issue15_{m[1]}_{slug(m[2])}"[:70].rstrip("_")
    return ("new_" + slug(cause_.replace("unclassified: ", "")))[:70].rstrip("_")


def report(dirs: list[Path], copy: Path | None = None) -> str:
    outcomes: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    cases = failures = 0
    seconds = 0.0
    seeds = []
    for d in dirs:
        s = json.loads((d / "summary.json").read_text())
        seeds.append(f"{s['seed']} ({s['cases']})")
        cases += s["cases"]
        seconds += s["seconds"]
        outcomes.update(s["outcomes"])
        reasons.update(dict((r, n) for r, n in s["unsupported_reasons"]))
        failures += sum(c["count"] for c in s["classes"])
    by_cause: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for d in dirs:
        for p in sorted(d.glob("*.py")):
            r = parse(p)
            if r is not None:
                by_cause[cause(r["fine"], r["detail"] + "\n" + r["query"])].append(r)
    shrunk = sum(len(v) for v in by_cause.values())
    out = [f"# qfuzz report: {cases} cases, seeds {', '.join(seeds)}, {seconds:.0f} s", "", "| outcome | cases | % |", "|---|---|---|"]
    for o, n in outcomes.most_common():
        out.append(f"| {o} | {n} | {100 * n / max(1, cases):.2f} |")
    out += ["", f"Unsupported: {outcomes['unsupported']} ({100 * outcomes['unsupported'] / max(1, cases):.1f}%), by reason:", ""]
    out += [f"- {n}: {r}" for r, n in reasons.most_common(20)]
    out += ["", f"Failures: {failures}; shrunk and classified: {shrunk}.", "", "| cause | shrunk failures | example |", "|---|---|---|"]
    for c, rs in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
        best = min(rs, key=lambda r: len(r["text"]))
        out.append(f"| {c} | {len(rs)} | {best['id']} |")
        if copy is not None:
            copy.mkdir(parents=True, exist_ok=True)
            (copy / f"{file_name(c)}.py").write_text(best["text"])
    out.append("")
    for c, rs in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
        best = min(rs, key=lambda r: len(r["text"]))
        out += [f"## {c} ({len(rs)})", "", best["detail"].split("\n\nRow order")[0], "", "```python", best["query"], "```", ""]
    return "\n".join(out)
