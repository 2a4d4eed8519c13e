"""qfuzz: ladle's random differential query tester.

Random tables of every type ladle supports and random Polars queries over them
(gen.py, exprs.py), run on Polars' CPU engine and on ladle in worker processes
(worker.py, pool.py), compared where Polars defines the answer (case.analyze,
compare.py), failures shrunk (shrink.py) into standalone reproducers (harness.py).
`python tests/python/qfuzz --help` runs campaigns (cli.py);
tests/python/test_random_queries.py runs a fixed seed in the test suite.
"""

from __future__ import annotations

from .case import Case
from .cli import Summary, campaign
from .gen import generate
from .harness import BAD, request
from .shrink import shrink

__all__ = ["BAD", "Case", "Summary", "campaign", "generate", "request", "shrink"]
