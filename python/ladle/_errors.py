"""ladle's exceptions and warnings."""

from __future__ import annotations

import polars as pl


class LadleError(RuntimeError):
    """A failure inside the ladle engine; the message names the column or value."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class LadleComputeError(LadleError, pl.exceptions.InvalidOperationError):
    """A value the query cannot compute (a strict cast that fails, a cast Polars
    refuses): also Polars' InvalidOperationError, which Polars raises there, so
    that `except pl.exceptions.InvalidOperationError` catches both engines'."""


class LadleMemoryError(LadleError, MemoryError):
    """An allocation failed: the machine's memory, or the engine's memory_limit
    (the message names what was asked, what was in use and the limit). The engine
    stays usable; the query does not fall back to Polars."""


def ladle_error(code: int, message: str) -> LadleError:
    """The exception for a native error code."""
    if code == 2:  # LADLE_ENOMEM
        return LadleMemoryError(code, message)
    if code == 3:  # LADLE_ENOTSUP
        return UnsupportedError(message, code)
    if code == 6:  # LADLE_ECOMPUTE
        return LadleComputeError(code, message)
    if code == 10:  # LADLE_ECOMM
        return LadleCommError(code, message)
    return LadleError(code, message)


class LadleCommError(LadleError):
    """The ranks of an SPMD job could not go on together: a rank ran another query,
    one did not answer within the timeout (it died, or is stuck), or the
    communicator failed. The message names the ranks it knows of."""


class UnsupportedError(LadleError):
    """The query needs something ladle cannot run yet (raised with raise_on_fail)."""

    def __init__(self, message: str, code: int = 3) -> None:
        super().__init__(code, message)


class FallbackWarning(UserWarning):
    """Part or all of a query ran on Polars' CPU engine instead of ladle."""


class VersionError(ImportError):
    """The installed Polars is not the version this ladle supports."""
