"""Data types, random column values and their rendering as Python source.

Every value a table holds is a plain Python value (temporal ones as the integer
Polars stores: days for Date, units since the epoch for Datetime, units for
Duration), so that a case renders as a literal `pl.DataFrame({...}, schema=...)`
that rebuilds exactly the same frame.
"""

from __future__ import annotations

import math
import random
from typing import Any

import polars as pl

INTS: list[pl.DataType] = [pl.Int8(), pl.Int16(), pl.Int32(), pl.Int64(), pl.UInt8(), pl.UInt16(), pl.UInt32(), pl.UInt64()]
FLOATS: list[pl.DataType] = [pl.Float32(), pl.Float64()]
UNITS = ("ms", "us", "ns")
TEMPORAL: list[pl.DataType] = (
    [pl.Date()] + [pl.Datetime(u) for u in UNITS] + [pl.Duration(u) for u in UNITS]
)
ALL_TYPES: list[pl.DataType] = INTS + FLOATS + [pl.Boolean(), pl.String()] + TEMPORAL

UNIT_PER_SECOND = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}

# Strings: multi-byte UTF-8, empty, padded numbers and the texts of issue 15's
# string->number parsing class. No characters with special case mappings (ß, ﬁ, İ):
# ladle documents code-point-wise case mapping.
STRINGS = [
    "", "a", "b", "ab", "ba", "A", "abc", "aé", "é", "Ünï", "日本", "🙂x", "ω", " ab ", "a b",
    " 7", "+4", "0x10", "12", "-3.5", "1e3", "007", "2023-08-17", "true", "NaN", "inf", "x-y",
]
SMALL_STRINGS = ["", "a", "b", "ab", "é", "A"]


def kind(dtype: pl.DataType) -> str:
    """A coarse kind: int, float, bool, str, date, datetime, duration, null or other."""
    if dtype.is_integer():
        return "int"
    if dtype.is_float():
        return "float"
    if dtype == pl.Boolean:
        return "bool"
    if dtype == pl.String:
        return "str"
    if dtype == pl.Date:
        return "date"
    if isinstance(dtype, pl.Datetime):
        return "datetime"
    if isinstance(dtype, pl.Duration):
        return "duration"
    if dtype == pl.Null:
        return "null"
    return "other"


def short(dtype: pl.DataType) -> str:
    """A short name for tags: i8, u64, f32, bool, str, date, dt[ms], dur[ns]."""
    if isinstance(dtype, pl.Datetime):
        return f"dt[{dtype.time_unit}]"
    if isinstance(dtype, pl.Duration):
        return f"dur[{dtype.time_unit}]"
    names = {
        pl.Int8: "i8", pl.Int16: "i16", pl.Int32: "i32", pl.Int64: "i64", pl.UInt8: "u8", pl.UInt16: "u16",
        pl.UInt32: "u32", pl.UInt64: "u64", pl.Float32: "f32", pl.Float64: "f64", pl.Boolean: "bool",
        pl.String: "str", pl.Date: "date", pl.Null: "null",
    }
    for k, v in names.items():
        if dtype == k:
            return v
    return str(dtype)


def dtype_code(dtype: pl.DataType) -> str:
    """Python source for a data type: pl.Int8, pl.Datetime("ms"), ..."""
    if isinstance(dtype, pl.Datetime):
        return f'pl.Datetime("{dtype.time_unit}")'
    if isinstance(dtype, pl.Duration):
        return f'pl.Duration("{dtype.time_unit}")'
    return f"pl.{dtype.base_type().__name__}"


def int_range(dtype: pl.DataType) -> tuple[int, int]:
    bits = {pl.Int8: 8, pl.Int16: 16, pl.Int32: 32, pl.Int64: 64, pl.UInt8: 8, pl.UInt16: 16, pl.UInt32: 32, pl.UInt64: 64}
    for k, b in bits.items():
        if dtype == k:
            if dtype.is_unsigned_integer():
                return 0, 2**b - 1
            return -(2 ** (b - 1)), 2 ** (b - 1) - 1
    raise ValueError(dtype)


def py_code(v: Any) -> str:
    """Python source for a scalar value (floats' NaN, infinities and -0.0 included)."""
    if isinstance(v, float):
        if math.isnan(v):
            return 'float("nan")'
        if math.isinf(v):
            return 'float("inf")' if v > 0 else 'float("-inf")'
        return repr(v)
    return repr(v)


def list_code(vs: list[Any]) -> str:
    return "[" + ", ".join(py_code(v) for v in vs) + "]"


# ------------------------------------------------------------------ values


def _int_values(rng: random.Random, dtype: pl.DataType, n: int, small: bool) -> list[Any]:
    lo, hi = int_range(dtype)
    if small:
        dom = [v for v in (-2, -1, 0, 1, 2, 3) if lo <= v <= hi]
        return [rng.choice(dom) for _ in range(n)]
    specials = [lo, hi, 0, 1, lo + 1, hi - 1, 2, 100]
    if lo < 0:
        specials += [-1, -100]
    out: list[Any] = []
    for _ in range(n):
        r = rng.random()
        if r < 0.25:
            out.append(rng.choice(specials))
        elif r < 0.85:
            out.append(rng.randint(max(lo, -1000), min(hi, 1000)))
        else:
            out.append(rng.randint(lo, hi))
    return out


def _float_values(rng: random.Random, dtype: pl.DataType, n: int, mode: str) -> list[Any]:
    f32 = dtype == pl.Float32
    if mode == "small":
        dom = [0.0, -0.0, 1.5, -2.5, 1.0, float("nan"), float("inf"), float("-inf")]
        return [rng.choice(dom) for _ in range(n)]
    specials = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 0.5, -1.0, 2.0, 100.0, -100.0, 7.0]
    if mode == "extreme":
        specials += [3.0e38, -3.0e38, 1e-45, 1e20] if f32 else [1e308, -1e308, 5e-324, 1e300, 1e-300, 2.0**53 + 1]
    out: list[Any] = []
    for _ in range(n):
        r = rng.random()
        if r < 0.3:
            out.append(rng.choice(specials))
        else:
            # multiples of 1/4 within +-1000 add up exactly in any order
            out.append(rng.randint(-4000, 4000) / 4)
    return out


def _temporal_values(rng: random.Random, dtype: pl.DataType, n: int, small: bool) -> list[Any]:
    if dtype == pl.Date:
        dom = [0, 1, -1, 18000, 19000, 19358, 11016, -719162 + 365, 2932896 - 365]
        if small:
            return [rng.choice(dom[:4]) for _ in range(n)]
        return [rng.choice(dom) if rng.random() < 0.3 else rng.randint(-30000, 60000) for _ in range(n)]
    unit = dtype.time_unit  # type: ignore[union-attr]
    scale = UNIT_PER_SECOND[unit]
    if isinstance(dtype, pl.Datetime):
        secs = [0, -1, 1, 1692276810, 951782400, -86401, 4102444799, 86400, -2208988800]
        if small:
            secs = secs[:3]
    else:
        secs = [0, -1, 1, 86400, -86400, 3600, 59, -90061, 31 * 86400, 10**7]
        if small:
            secs = secs[:3]
    out: list[Any] = []
    for _ in range(n):
        s = rng.choice(secs) if rng.random() < 0.6 else rng.randint(-(10**9), 4 * 10**9)
        frac = 0 if rng.random() < 0.5 else rng.choice([1, scale // 2, scale - 1, rng.randrange(scale)])
        if isinstance(dtype, pl.Duration) and rng.random() < 0.2:
            out.append(rng.choice([-1500, 1500, -1, 1, -999, 999]))  # sub-unit rounding of unit casts
            continue
        out.append(s * scale + frac)
    return out


def values(rng: random.Random, dtype: pl.DataType, n: int, *, small: bool, null_frac: float, float_mode: str) -> list[Any]:
    """n random values of dtype with about null_frac nulls (1.0: all null)."""
    k = kind(dtype)
    if k == "int":
        vs = _int_values(rng, dtype, n, small)
    elif k == "float":
        vs = _float_values(rng, dtype, n, "small" if small else float_mode)
    elif k == "bool":
        vs = [rng.random() < 0.5 for _ in range(n)]
    elif k == "str":
        dom = SMALL_STRINGS if small else STRINGS
        vs = [rng.choice(dom) for _ in range(n)]
    else:
        vs = _temporal_values(rng, dtype, n, small)
    return [None if rng.random() < null_frac else v for v in vs]
