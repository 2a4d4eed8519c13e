"""ladle's exceptions and warnings."""

from __future__ import annotations


class LadleError(RuntimeError):
    """A failure inside the ladle engine; the message names the column or value."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class UnsupportedError(LadleError):
    """The query needs something ladle cannot run yet (raised with raise_on_fail)."""

    def __init__(self, message: str, code: int = 3) -> None:
        super().__init__(code, message)


class FallbackWarning(UserWarning):
    """Part or all of a query ran on Polars' CPU engine instead of ladle."""


class VersionError(ImportError):
    """The installed Polars is not the version this ladle supports."""
