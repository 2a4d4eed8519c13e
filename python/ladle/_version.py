"""The Polars version ladle is built against, checked at import.

The plan visitor (NodeTraverser) that ladle translates from is private to Polars
and changes between releases, so ladle supports exactly one Polars release and
one visitor version, as cuDF-Polars does.
"""

from __future__ import annotations

import polars as pl

from ._errors import VersionError

SUPPORTED_POLARS = "2.1.0"
SUPPORTED_VISITOR = (16, 0)


def visitor_version() -> tuple[int, int]:
    lf = pl.DataFrame({"_": [0]}).lazy()
    return tuple(lf._ldf.visit().version())  # type: ignore[return-value]


def check() -> None:
    if pl.__version__ != SUPPORTED_POLARS:
        raise VersionError(
            f"ladle supports polars=={SUPPORTED_POLARS} only, but polars {pl.__version__} "
            f"is installed; run `pip install polars=={SUPPORTED_POLARS}`"
        )
    got = visitor_version()
    if got != SUPPORTED_VISITOR:
        raise VersionError(
            f"ladle supports the Polars plan visitor version {SUPPORTED_VISITOR} "
            f"(polars {SUPPORTED_POLARS}); this Polars has {got}"
        )
