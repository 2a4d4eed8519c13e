"""ladle.Result: a query result held in ladle's memory.

It speaks the Arrow PyCapsule interface (``__arrow_c_stream__``), so
``pl.DataFrame(result)``, ``pyarrow.table(result)`` and DuckDB take it without
copying numeric buffers, and hands single columns to torch and numpy through
DLPack (``result.column("x")``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from . import _native as N
from ._errors import ladle_error
from .dtypes import to_polars


class Column:
    """One column of a Result, exportable through DLPack (numeric/bool, no nulls)."""

    def __init__(self, result: "Result", index: int, name: str) -> None:
        self._result = result
        self._index = index
        self.name = name

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, **kwargs: Any) -> Any:
        """A DLPack capsule of the column on the result's device (zero-copy; a copy on the
        device when the engine still shares the buffer). For a CUDA result, `stream` is the
        consumer's (DLPack's numbers: None or 1 the legacy default stream, 2 the per-thread
        one, -1 no ordering): it waits for the kernels that made the result, and ladle frees
        the buffer after what that stream queued before the tensor was released."""
        if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
            raise TypeError(f"__dlpack__(stream={stream!r}): an int, or None")
        on_device = self._result._native.device()[0] != 1
        sync = not (on_device and stream == -1)
        s = 1 if stream is None or stream == -1 or not on_device else stream
        try:
            return self._result._native.dlpack(self._index, s, sync)
        except N.LadleError as e:
            code, message = e.args
            raise TypeError(message) from None

    def __dlpack_device__(self) -> tuple[int, int]:
        """(kDLCPU, 0) or (kDLCUDA, N): where the result lives."""
        kind, ordinal = self._result._native.device()
        return (int(kind), int(ordinal))

    def __repr__(self) -> str:
        return f"ladle.Column({self.name!r})"


class Result:
    """A query result in ladle's memory."""

    def __init__(self, native: Any, plan: Any = None) -> None:
        self._native = native
        self._plan = plan

    @classmethod
    def _from_polars(cls, df: pl.DataFrame, engine: Any) -> "Result":
        """A Result holding a DataFrame Polars computed (after a fallback)."""
        plan = N.scan_arrow(df)
        try:
            return cls(engine.execute(plan), plan)
        except N.LadleError as e:
            code, message = e.args
            raise ladle_error(code, message) from None

    @property
    def device(self) -> str:
        """Where the result lives: "cpu", or "cuda:N" for a GPU engine's result made on
        that GPU, which stays there (``column(name)`` gives a device tensor through
        DLPack; ``to_polars()`` and the host Arrow exports copy it down once). A GPU
        engine's query that finished on the host (its last small sort placed there, a
        one-row answer, a fallback) gives a "cpu" result."""
        kind, ordinal = self._native.device()
        return "cpu" if kind == N.LADLE_DEVICE_CPU else f"cuda:{ordinal}"

    @property
    def sharded(self) -> bool:
        """With several ranks (ladle.SPMDEngine): whether this is this rank's part of a
        result whose rows are spread over the ranks (False: every rank holds the whole
        result, or the job has one rank). ``engine.allgather(result)`` gives the whole."""
        return bool(self._native.sharded())

    @property
    def num_rows(self) -> int:
        return int(self._native.num_rows())

    @property
    def schema(self) -> pl.Schema:
        return pl.Schema([(name, to_polars(t)) for name, t in self._native.schema()])

    @property
    def columns(self) -> list[str]:
        return [name for name, _ in self._native.schema()]

    def __len__(self) -> int:
        return self.num_rows

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._native.arrow_stream()

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[Any, Any]:
        """The Arrow C Device Data Interface: the result as one struct array on its
        device (a GPU result's buffers stay there, shared; Booleans packed to bits on
        the device), ready when returned (no sync event)."""
        if requested_schema is not None:
            raise NotImplementedError("ladle.Result.__arrow_c_device_array__: requested_schema is not supported")
        try:
            return self._native.device_array()
        except N.LadleError as e:
            code, message = e.args
            raise ladle_error(code, message) from None

    def to_polars(self) -> pl.DataFrame:
        # strings go out as Arrow string views over ladle's bytes: what Polars
        # holds, so it takes them without converting every value
        return pl.DataFrame(_ViewStream(self._native))

    def to_arrow(self) -> Any:
        import pyarrow as pa

        return pa.table(self)

    def lazy(self) -> pl.LazyFrame:
        """The result as a LazyFrame to chain into another query. On a ladle engine the
        next query scans the result where it lives (on its GPU, for an engine of that
        GPU: nothing goes through the host); Polars, or an engine that falls back to
        it, reads it through ``to_polars()``."""
        from polars.io.plugins import register_io_source

        def source(
            with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, batch_size: int | None
        ) -> Any:
            df = self.to_polars()
            if with_columns is not None:
                df = df.select(with_columns)
            if predicate is not None:
                df = df.filter(predicate)
            if n_rows is not None:
                df = df.head(n_rows)
            yield df

        source._ladle_result = self  # type: ignore[attr-defined]
        return register_io_source(source, schema=self.schema)

    def column(self, name: str) -> Column:
        names = self.columns
        if name not in names:
            raise KeyError(f"no column {name!r} in this result (columns: {names})")
        return Column(self, names.index(name), name)

    def write_parquet(
        self,
        path: str | Path,
        *,
        compression: str = "zstd",
        compression_level: int | None = None,
        row_group_size: int | None = None,
        statistics: bool = True,
        use_dictionary: bool = True,
    ) -> None:
        """Writes the result to a Parquet file (snappy, zstd, gzip or uncompressed)."""
        codecs = {"uncompressed": 0, "snappy": 1, "gzip": 2, "zstd": 6}
        if compression not in codecs:
            raise ValueError(f"compression={compression!r}: ladle writes {sorted(codecs)}")
        try:
            self._native.write_parquet(
                str(path), codecs[compression], compression_level or 0, row_group_size or 0,
                use_dictionary, statistics,
            )
        except N.LadleError as e:
            code, message = e.args
            raise ladle_error(code, message) from None

    def explain(self) -> str:
        return self._plan.explain() if self._plan is not None else "(no plan)"

    def __repr__(self) -> str:
        if type(self._native).__name__ == "_Consumed":
            return "ladle.Result(consumed by ladle.persisted_to_torch)"
        return f"ladle.Result({self.num_rows} rows, {dict(self.schema)})"


class _ViewStream:
    """The result as an Arrow stream whose strings are string views."""

    def __init__(self, native: Any) -> None:
        self._native = native

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._native.arrow_stream(True)
