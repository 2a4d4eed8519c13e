"""The random differential query tester (tests/python/qfuzz) at a fixed seed.

A few hundred random queries over random tables of every type, on ladle
(raise_on_fail, random morsel sizes and thread counts) and on Polars' CPU engine:
no answer may differ, nothing may crash or hang, and ladle may not answer a query
Polars refuses. Falling back (UnsupportedError) is allowed here; its rate is in the
summary. A failure prints the summary and shrunk reproducers, each a standalone
Python file. Longer runs: `make fuzz-queries` or `python tests/python/qfuzz --help`.
"""

from __future__ import annotations

import os

from qfuzz import campaign

SEED = 20261201
COUNT = int(os.environ.get("QFUZZ_CI_COUNT", "300"))


def test_random_queries() -> None:
    summ = campaign(SEED, count=COUNT, jobs=2, timeout=60, shrink_per_class=3, shrink_seconds=5,
                    shrink_total_seconds=25, log=lambda s: None)
    print(summ.text())  # pytest -s: outcome counts and the unsupported rate even when all is well
    assert summ.cases == COUNT
    assert summ.undetermined == 0, "the generator drew cases whose answer Polars leaves open"
    if summ.failures:
        shown = [f for f in summ.failures if f.reproducer][:8]
        parts = [summ.text(), f"\n{len(shown)} shrunk reproducers (of {len(summ.failures)} failing cases):"]
        for f in shown:
            parts.append(f"\n# ---- {f.ident}: {f.cause}\n{f.reproducer}")
        raise AssertionError("\n".join(parts))
