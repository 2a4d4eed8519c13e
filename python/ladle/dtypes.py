"""Polars data types <-> ladle's (type_id, time_unit, time_zone, precision, scale,
list child type_id) tuples."""

from __future__ import annotations

import polars as pl

from . import _native as N

LadleType = tuple[int, int, str, int, int, int]

_UNITS = {"ns": N.LADLE_TIME_NS, "us": N.LADLE_TIME_US, "ms": N.LADLE_TIME_MS}
_UNIT_NAMES = {v: k for k, v in _UNITS.items()}

_SIMPLE: dict[type, int] = {
    pl.Null: N.LADLE_TYPE_NULL,
    pl.Boolean: N.LADLE_TYPE_BOOL,
    pl.Int8: N.LADLE_TYPE_INT8,
    pl.Int16: N.LADLE_TYPE_INT16,
    pl.Int32: N.LADLE_TYPE_INT32,
    pl.Int64: N.LADLE_TYPE_INT64,
    pl.UInt8: N.LADLE_TYPE_UINT8,
    pl.UInt16: N.LADLE_TYPE_UINT16,
    pl.UInt32: N.LADLE_TYPE_UINT32,
    pl.UInt64: N.LADLE_TYPE_UINT64,
    pl.Int128: N.LADLE_TYPE_INT128,
    pl.UInt128: N.LADLE_TYPE_UINT128,
    pl.Float32: N.LADLE_TYPE_FLOAT32,
    pl.Float64: N.LADLE_TYPE_FLOAT64,
    pl.String: N.LADLE_TYPE_STRING,
    pl.Date: N.LADLE_TYPE_DATE,
    pl.Time: N.LADLE_TYPE_TIME,
    pl.Binary: N.LADLE_TYPE_BINARY,
}
_SIMPLE_BACK = {v: k for k, v in _SIMPLE.items()}


def to_ladle(dt: pl.DataType) -> LadleType | None:
    """The ladle type of a Polars type, or None when ladle has no such type."""
    base = dt.base_type()
    if base in _SIMPLE:
        return (_SIMPLE[base], 0, "", 0, 0, 0)
    if isinstance(dt, pl.Datetime):
        return (N.LADLE_TYPE_DATETIME, _UNITS[dt.time_unit or "us"], dt.time_zone or "", 0, 0, 0)
    if isinstance(dt, pl.Duration):
        return (N.LADLE_TYPE_DURATION, _UNITS[dt.time_unit or "us"], "", 0, 0, 0)
    if isinstance(dt, pl.Decimal) and dt.precision is not None and 1 <= dt.precision <= 38:
        return (N.LADLE_TYPE_DECIMAL, 0, "", dt.precision, dt.scale, 0)
    if isinstance(dt, pl.List):
        inner = dt.inner
        if inner is not None and inner.base_type() in _SIMPLE and inner.base_type() not in (pl.Null, pl.Int128, pl.UInt128):
            return (N.LADLE_TYPE_LIST, 0, "", 0, 0, _SIMPLE[inner.base_type()])
    return None


def to_polars(t: LadleType) -> pl.DataType:
    tid, unit, tz = t[0], t[1], t[2]
    if tid == N.LADLE_TYPE_DECIMAL:
        return pl.Decimal(t[3], t[4])
    if tid == N.LADLE_TYPE_LIST:
        return pl.List(_SIMPLE_BACK[t[5]]())
    if tid == N.LADLE_TYPE_DATETIME:
        return pl.Datetime(_UNIT_NAMES[unit], tz or None)  # type: ignore[arg-type]
    if tid == N.LADLE_TYPE_DURATION:
        return pl.Duration(_UNIT_NAMES[unit])  # type: ignore[arg-type]
    return _SIMPLE_BACK[tid]()


def unit_of(t: LadleType) -> str:
    return _UNIT_NAMES[t[1]]
