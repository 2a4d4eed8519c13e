"""From a case to a worker request, from a result to a class, and to a reproducer file."""

from __future__ import annotations

import re
from typing import Any

from .case import NONE, Case, analyze

BAD = ("mismatch", "polars_error_ladle_ok", "ladle_error", "crash", "timeout", "late_crash", "setup_error", "harness_error")
OUTCOMES = ("equal", "both_error", "unsupported", "polars_engines_differ", "polars_dropped_order",
            "polars_optimizer_differs", "polars_metadata_differs", "polars_var_of_null_group", "polars_wrong_height", "polars_arg_tie", "polars_signed_zero", "polars_temporal_saturation", "too_large", "polars_invalid_frame", "polars_crash", "generator_error") + BAD
POLARS_ENGINE = "auto"  # the expected answer: what lf.collect() gives
OTHER_ENGINES = ["in-memory", "streaming"]  # asked when ladle differs from it

# tags that say nothing about a class: plain literals and wrappers
GENERIC_TAGS = {"", "lit", "pylit", "agg-broadcast", "lit:null"}


def request(case: Case) -> dict[str, Any]:
    """The worker request for case: its source and what Polars defines about its order."""
    ns = case.namespace()
    try:
        st = analyze(case.query, ns)
        order, prefix, taint, fstr, det = st.order, st.prefix, sorted(st.taint), sorted(st.fstr), st.det
        why, plan_ok = st.why, True
    except BaseException as e:  # noqa: BLE001 - Polars rejects the plan: only errors can be compared
        if isinstance(e, KeyboardInterrupt):
            raise
        order, prefix, taint, fstr, det, why, plan_ok = NONE, [], [], [], True, "", False
    return {"code": case.setup_code(), "staged_code": case.staged_code(),
            "prefixes_code": case.prefixes_code(), "order": order, "prefix": prefix, "taint": taint, "fstr": fstr,
            "threads": case.threads, "morsel": case.morsel_rows, "det": det, "why": why, "plan_ok": plan_ok,
            "polars_engine": POLARS_ENGINE, "other_engines": OTHER_ENGINES}


def norm_message(msg: str, n: int = 110) -> str:
    """An error message with names, numbers and the plan dump taken out, for grouping."""
    msg = msg.replace("ladle cannot run all of this query: ", "").replace("ladle cannot run this query: ", "")
    msg = msg.split("\n\nResolved plan")[0].split("\n\nThis error occurred")[0]
    msg = re.sub(r"'[^']*'", "'…'", msg)
    msg = re.sub(r'"[^"]*"', '"…"', msg)
    msg = re.sub(r"\b\d+\b", "N", msg)
    msg = re.sub(r"\s+", " ", msg).strip()
    return msg[:n]


def coarse_class(res: dict[str, Any]) -> str:
    """The class of a result from the result alone."""
    o = res["outcome"]
    if o == "mismatch":
        return f"mismatch:{res['diff']['kind']}"
    if o in ("ladle_error", "unsupported"):
        e = res["ladle_error"]
        return f"{o}:{e['type']}:{norm_message(e['message'], 70)}"
    if o == "polars_error_ladle_ok":
        return f"{o}:{res['polars_error']['type']}"
    if o in ("crash", "timeout", "late_crash"):
        return f"{o}:{res.get('phase')}:{res.get('signal', '')}"
    if o in ("setup_error", "harness_error"):
        return f"{o}:{res['error']['type']}"
    return o


def family(tag: str) -> str:
    """A tag without its operand types (cast and arithmetic keep their kinds of operands)."""
    parts = tag.split(":")
    if parts[0] == "cast" and len(parts) >= 3:
        src, dst = parts[1].split("->")
        return f"cast:{_kind(src)}->{_kind(dst)}:{parts[2]}"
    if parts[0] in ("cmp", "eq_missing", "ne_missing") and len(parts) >= 2:
        kinds = ",".join(sorted(_kind(x) for x in parts[1].split(",")))
        return f"{parts[0]}:{kinds}" + (":lit-first" if tag.endswith("lit-first") else "")
    if parts[0] == "arith" and len(parts) >= 3:
        kinds = ",".join(_kind(x) for x in parts[2].split(","))
        return f"arith:{parts[1]}:{kinds}" + (":lit-first" if tag.endswith("lit-first") else "")
    if parts[0] == "agg":
        return ":".join(parts[:2]) + (":lit" if tag.endswith(":lit") else "")
    if tag.endswith("lit-first"):
        return parts[0] + ":lit-first"
    return ":".join([parts[0]] + [p for p in parts[1:] if p in _KEEP])


# tag parts that name a variant rather than an operand type
_KEEP = {"neg", "regex", "literal", "nulls_equal", "null", "lit", "ignore_nulls", "ordinal", "1d", "1mo", "rank"}


def _kind(short_name: str) -> str:
    s = short_name.split("[")[0]
    return {"i8": "int", "i16": "int", "i32": "int", "i64": "int", "u8": "uint", "u16": "uint", "u32": "uint",
            "u64": "uint", "f32": "float", "f64": "float", "dt": "datetime", "dur": "duration"}.get(s, s)


def fine_class(case: Case, res: dict[str, Any]) -> str:
    """The class of a (shrunk) case: its outcome, its operators (the top-level one last)
    and the expression features of the whole query, without operand types."""
    kinds = case.query.kinds()
    tags = sorted({family(t) for t in case.query.tags() - GENERIC_TAGS - set(kinds)} - GENERIC_TAGS)
    return f"{coarse_class(res)} | {'>'.join(kinds) or 'scan'} | {','.join(tags)}"


def same_failure(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Does b fail the way a does (for the shrinker)?"""
    if a["outcome"] != b["outcome"]:
        return False
    o = a["outcome"]
    if o == "mismatch":
        return bool(a["diff"]["kind"] == b["diff"]["kind"])
    if o in ("ladle_error", "unsupported"):
        return bool(a["ladle_error"]["type"] == b["ladle_error"]["type"]
                    and norm_message(a["ladle_error"]["message"], 40) == norm_message(b["ladle_error"]["message"], 40))
    if o == "polars_error_ladle_ok":
        return bool(a["polars_error"]["type"] == b["polars_error"]["type"])
    if o in ("crash", "timeout"):
        return bool(a.get("phase") == b.get("phase"))
    if o == "late_crash":
        return True
    return True


def describe(res: dict[str, Any]) -> str:
    o = res["outcome"]
    lines = [f"outcome: {o}"]
    if o == "mismatch":
        lines.append(f"{res['diff']['kind']}: {res['diff']['detail']}")
    for side in ("polars_error", "ladle_error"):
        e = res.get(side)
        if e:
            lines.append(f"{side.split('_')[0]} raised {e['type']}: {e['message'][:600]}")
    if o in ("crash", "timeout", "late_crash"):
        lines.append(f"while running: {res.get('phase')}; {res.get('signal', '')}")
        tail = (res.get("stderr") or "").strip().splitlines()[-8:]
        lines += ["stderr: " + t for t in tail]
    if o in ("setup_error", "harness_error"):
        lines.append(f"{res['error']['type']}: {res['error']['message'][:600]}")
    return "\n".join(lines)


def reproducer(case: Case, res: dict[str, Any], req: dict[str, Any], cls: str = "") -> str:
    """A standalone Python file that rebuilds the case and runs it on both engines."""
    order = req["order"] + (f" (columns {req['prefix']})" if req["order"] == "prefix" else "")
    doc = [
        f"qfuzz case {case.ident}" + (f": {cls}" if cls else ""),
        "",
        describe(res),
        "",
        f"Row order Polars defines for this query: {order}.",
    ]
    if req["taint"]:
        doc.append(f"Float-summation columns (compared with a tolerance): {req['taint']}.")
    body = case.setup_code().replace("import polars as pl\n", "import polars as pl\n\nimport ladle\n", 1)
    doc_text = "\n".join(doc).replace('"""', "'''").replace("\\", "\\\\")
    return (
        f'"""{doc_text}\n"""\n\n{body}\n\n'
        "def run(engine):\n"
        "    try:\n"
        "        return q.collect(engine=engine)\n"
        "    except BaseException as e:  # PanicException too\n"
        '        return f"{type(e).__name__}: {e}"\n\n\n'
        'print("Polars:", run("auto"))\n'
        f'print("ladle: ", run({case.engine_code()}))\n'
    )
