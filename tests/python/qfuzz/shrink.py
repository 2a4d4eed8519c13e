"""A greedy shrinker: smaller cases that still fail the same way.

Candidates, tried in this order and restarted after every success: drop an
operator (of the main query or of a join's or concat's other side), drop an item
of a select, with_columns, filter or agg list, replace an expression node by one of
its children, drop rows of a table (halves, quarters, ... single rows), drop a
column, default engine settings (1 thread, default morsels). A candidate must still
be valid for Polars' planner and determined in content (case.analyze), and its
result must fail like the original (harness.same_failure). Unused tables are
dropped at the end.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Iterator

from .case import Case, E, Query, retype
from .harness import request, same_failure


def _queries(q: Query) -> Iterator[Query]:
    yield q
    for op in q.ops:
        if op.sub is not None:
            yield from _queries(op.sub)


def _paths(e: E, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], E]]:
    yield path, e
    for i, k in enumerate(e.kids):
        yield from _paths(k, path + (i,))


def _replace(e: E, path: tuple[int, ...], new: E) -> E:
    if not path:
        return new
    kids = list(e.kids)
    kids[path[0]] = _replace(kids[path[0]], path[1:], new)
    return dataclasses.replace(e, kids=kids)


def candidates(case: Case) -> Iterator[Case]:
    # operators
    for qi, q in enumerate(_queries(case.query)):
        for i in reversed(range(len(q.ops))):
            c = case.clone()
            cq = list(_queries(c.query))[qi]
            del cq.ops[i]
            yield c
    # the other side of a join or concat alone
    for qi, q in enumerate(_queries(case.query)):
        for i, op in enumerate(q.ops):
            if op.sub is not None:
                c = case.clone()
                cq = list(_queries(c.query))[qi]
                sub = cq.ops[i].sub
                assert sub is not None
                if qi == 0:
                    c.query = sub
                else:
                    cq.ops[i:] = []
                yield c
    # items
    for qi, q in enumerate(_queries(case.query)):
        for oi, op in enumerate(q.ops):
            if op.item_shrink and len(op.items) > 1:
                for j in reversed(range(len(op.items))):
                    c = case.clone()
                    cop = list(_queries(c.query))[qi].ops[oi]
                    del cop.items[j]
                    if cop.names:
                        del cop.names[j]
                    yield c
    # expression nodes by a child
    for qi, q in enumerate(_queries(case.query)):
        for oi, op in enumerate(q.ops):
            for j, item in enumerate(op.items):
                for path, node in _paths(item):
                    for k in node.kids:
                        if k.tag == "pylit" or (not path and "alias(" in node.fmt):
                            continue
                        c = case.clone()
                        cop = list(_queries(c.query))[qi].ops[oi]
                        cop.items[j] = _replace(cop.items[j], path, k)
                        yield c
    # rows
    for ti, t in enumerate(case.tables):
        n = t.height
        size = n // 2
        while size >= 1:
            for start in range(0, n, size):
                if start >= case.tables[ti].height:
                    break
                c = case.clone()
                for col in c.tables[ti].columns:
                    del col.values[start:start + size]
                yield c
            size //= 2
    # columns
    for ti, t in enumerate(case.tables):
        if len(t.columns) > 1:
            for ci in reversed(range(len(t.columns))):
                c = case.clone()
                del c.tables[ti].columns[ci]
                yield c
    # values: a cell by a plain one of its type, in small tables
    for ti, t in enumerate(case.tables):
        if t.height > 8:
            continue
        for ci, col in enumerate(t.columns):
            plain = _plain(col.values)
            for ri, v in enumerate(col.values):
                if v is None or v == plain and str(v) == str(plain):
                    continue
                c = case.clone()
                c.tables[ti].columns[ci].values[ri] = plain
                yield c
    # engine settings
    if case.threads != 1 or case.morsel_rows is not None:
        c = case.clone()
        c.threads, c.morsel_rows = 1, None
        yield c
    if case.threads != 1:
        c = case.clone()
        c.threads = 1
        yield c


def _plain(values: list[Any]) -> Any:
    """The plainest value of the type of values: 0, 0.0, '', False."""
    for v in values:
        if isinstance(v, bool):
            return False
        if isinstance(v, int):
            return 0
        if isinstance(v, float):
            return 0.0
        if isinstance(v, str):
            return ""
    return None


def drop_unused_tables(case: Case) -> Case:
    code = case.query.code()
    c = case.clone()
    c.tables = [t for t in c.tables if f"{t.name}.lazy()" in code]
    return c


def shrink(
    case: Case,
    result: dict[str, Any],
    run: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    max_runs: int = 400,
    seconds: float = 60.0,
) -> tuple[Case, dict[str, Any], dict[str, Any], int]:
    """(smallest case found, its result, its request, runs used)."""
    deadline = time.monotonic() + seconds
    best, best_res = case, result
    best_req = request(case)
    runs = 0
    progress = True
    while progress and runs < max_runs and time.monotonic() < deadline:
        progress = False
        for cand in candidates(best):
            if runs >= max_runs or time.monotonic() >= deadline:
                break
            try:
                req = request(cand)
            except Exception:  # noqa: BLE001 - the candidate's own source is broken
                continue
            if not req["det"] or (best_req["plan_ok"] and not req["plan_ok"]):
                continue
            if req["order"] == "none" and best_req["order"] != "none" and best_res["outcome"] == "mismatch" \
                    and best_res["diff"]["kind"] == "order":
                continue
            runs += 1
            res = run(req)
            if same_failure(best_res, res):
                best, best_res, best_req = cand, res, req
                progress = True
                break
    final = drop_unused_tables(best)
    retype(final)
    return final, best_res, request(final), runs
