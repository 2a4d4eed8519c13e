"""Casts, string functions, pow and temporal overflow, value by value against
Polars' CPU engine (issues 15 and 16).

Every cast between two of ladle's types, in the three modes (strict, non-strict,
wrapping), over values that reach each edge: Polars' answer, its error or its
refusal of the cast must be ladle's. A cast Polars refuses for its types falls
back (UnsupportedError under raise_on_fail, then Polars' own error); a cast that
fails on a value raises ladle's LadleError."""

from __future__ import annotations

import math
import struct
import warnings
from typing import Any

import ladle
import polars as pl
import pytest
from conftest import assert_same
from hypothesis import HealthCheck, given, settings
from polars.testing import assert_frame_equal
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

INF = float("inf")
NAN = float("nan")
MODES = ("strict", "nonstrict", "wrap")


def _cast(e: pl.Expr, to: Any, mode: str) -> pl.Expr:
    return e.cast(to, strict=mode == "strict", wrap_numerical=mode == "wrap")


def polars_outcome(lf: pl.LazyFrame) -> tuple[str, Any]:
    try:
        return "ok", lf.collect(engine="in-memory")
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - Polars panics (PanicException) on some values
        return "error", e


def ladle_outcome(lf: pl.LazyFrame, engine: ladle.Engine) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ladle.FallbackWarning)
            return "ok", lf.collect(engine=engine)
    except ladle.UnsupportedError as e:
        return "unsupported", e
    except ladle.LadleError as e:
        return "error", e


def _float_bits(s: pl.Series) -> list[Any]:
    """Float values with the sign of zero kept, NaN as one token."""
    out: list[Any] = []
    for v in s.to_list():
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None if v is None else "nan")
        else:
            out.append(struct.pack("<d", v))
    return out


def assert_exactly(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    """assert_frame_equal, exact, and -0.0 apart from 0.0."""
    assert_frame_equal(got, expected, check_exact=True)
    for name, dt in expected.schema.items():
        if dt.is_float():
            assert _float_bits(got[name]) == _float_bits(expected[name]), name


# ----------------------------------------------------------------------------- casts

INTS = [0, 1, -1, 2, 100, -100, 127, -128, 128, -129, 255, 256, 1000, -1000, 1500, -1500,
        32767, -32768, 65535, 65536, 86400, 2**31 - 1, -(2**31), 2**32 - 1, 2**32, 10**12,
        -(10**12), 2**53 + 1, 86_400_000_000_001, -86_400_000_000_001, 2**62, -(2**62),
        2**63 - 1, -(2**63), 2**64 - 1]
FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 127.9, 128.0, -128.9, -129.0, 255.5, 256.0,
          65535.5, 65536.0, 2.0**31, -(2.0**31), 2.0**31 - 0.5, 2.0**32, 2.0**53, 2.0**63,
          -(2.0**63), 2.0**64, -(2.0**64), 1e300, -1e300, INF, -INF, NAN, 0.1, 1e-7, 1e16, 1e20,
          123456.789, 3.4028235e38, 1e-45, 5e-324, 100.0, 1e15, 1e-5, 2.5e-7]
STRINGS = ["7", " 7", "7 ", "+4", "-4", "--4", "+", "-", "", "0", "-0", "+0", "007", "0x10", "1e3",
           "1.0", "1.", ".5", "-.5", "1_000", "inf", "-Infinity", "NaN", "nan", "true", "false",
           "True", "1", "2020-01-01", "2020-01-01 12:00:00", "127", "128", "-129", "255", "256",
           "65536", "4294967296", "9223372036854775808", "18446744073709551615",
           "18446744073709551616", "1e400", "3.4028236e38", "٣", "é", "\t1"]
UNITS = ("ns", "us", "ms")


def _ints_of(dtype: pl.DataType) -> list[Any]:
    bits = {"Int8": 8, "Int16": 16, "Int32": 32, "Int64": 64, "UInt8": 8, "UInt16": 16, "UInt32": 32,
            "UInt64": 64}[type(dtype).__name__]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1)) if dtype.is_signed_integer() else (0, 2**bits)
    return [v for v in INTS if lo <= v < hi] + [None]


def _series(name: str) -> pl.Series:
    dtype = SOURCES[name]
    if dtype == pl.Null:
        return pl.Series(name, [None, None], dtype=pl.Null)
    if dtype == pl.Boolean:
        return pl.Series(name, [True, False, None])
    if dtype.is_integer():
        return pl.Series(name, _ints_of(dtype), dtype=dtype)
    if dtype.is_float():
        return pl.Series(name, FLOATS + [None], dtype=dtype)
    if dtype == pl.String:
        return pl.Series(name, STRINGS + [None])
    if dtype == pl.Date:
        days = [0, -1, 1, 18262, -719163, -719529, 2932897, 95026236, 95026237, -96465292,
                -96465293, 106751, 106752, -106752, 2**31 - 1, -(2**31), None]
        return pl.Series(name, days, dtype=pl.Int32).cast(pl.Date)
    if dtype == pl.Time:
        return pl.Series(name, [0, 1, 10**9, 86_399_999_999_999, None], dtype=pl.Int64).cast(pl.Time)
    if isinstance(dtype, pl.Decimal):
        return pl.Series(name, [0, 125, -125, 10**8, None], dtype=pl.Int64).cast(dtype)
    vals = [v for v in INTS if -(2**63) <= v < 2**63] + [None]
    return pl.Series(name, vals, dtype=pl.Int64).cast(dtype)


SOURCES: dict[str, pl.DataType] = {
    "null": pl.Null(), "bool": pl.Boolean(),
    "i8": pl.Int8(), "i16": pl.Int16(), "i32": pl.Int32(), "i64": pl.Int64(),
    "u8": pl.UInt8(), "u16": pl.UInt16(), "u32": pl.UInt32(), "u64": pl.UInt64(),
    "f32": pl.Float32(), "f64": pl.Float64(), "str": pl.String(), "date": pl.Date(),
    **{f"dt_{u}": pl.Datetime(u) for u in UNITS}, "dt_utc": pl.Datetime("us", "UTC"),
    "dt_ams": pl.Datetime("us", "Europe/Amsterdam"),
    **{f"dur_{u}": pl.Duration(u) for u in UNITS},
    "dec": pl.Decimal(12, 2), "time": pl.Time(),
}
TARGETS = {k: v for k, v in SOURCES.items() if k != "null"} | {"null": pl.Null()}


def _kind(name: str) -> str:
    return name.split("_")[0] if name.startswith(("dt", "dur")) else name


def ladle_runs(src: str, dst: str) -> bool:
    """Casts ladle runs itself (the others fall back to Polars)."""
    s, d = _kind(src), _kind(dst)
    num = {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64"}
    ints = num - {"bool", "f32", "f64"}
    if src == dst or s == "null":
        return True
    if (s, d) in REFUSED or (s in ("date", "dt", "dur") and d == "bool") or (s, d) == ("str", "dur"):
        return True  # refused at run time as Polars does, or (str -> dur) parsed
    if d == "null" or s in ("dec", "time") or d in ("dec", "time"):
        return (s == "dec" and d in ("f32", "f64")) or (s == "time" and d == "i64")
    if s in num and d in num:
        return True
    if d == "str":
        return s in num or s == "date" or src in ("dt_ns", "dt_us", "dt_ms", "dt_utc")
    if s == "str" and d in num - {"bool"}:
        return True
    if (s in num and d in ("date", "dt", "dur")) or (d in num - {"bool"} and s in ("date", "dt", "dur")):
        return True
    return (s in ("date", "dt") and d in ("date", "dt")) or (s == d == "dur")


# casts Polars refuses whatever the (non-null) values
REFUSED = {("str", "bool"), ("str", "date"), ("str", "dt"), ("str", "time"), ("dur", "str")}


def _check_cast(df: pl.DataFrame, src: str, dst: str, mode: str, engine: ladle.Engine) -> None:
    lf = df.lazy().select(_cast(pl.col(src), TARGETS[dst], mode))
    p, pv = polars_outcome(lf)
    kind, lv = ladle_outcome(lf, engine)
    where = f"{src} -> {dst} ({mode}) over {df[src].to_physical().to_list()!r}"
    if kind == "unsupported":
        assert not ladle_runs(src, dst), f"{where}: ladle fell back: {lv}"
        return
    assert ladle_runs(src, dst), f"{where}: ladle ran a cast it should refuse"
    if p == "error":
        assert kind == "error", f"{where}: Polars raised {pv!r}, ladle gave {lv}"
        return
    assert kind == "ok", f"{where}: ladle raised {lv}, Polars gave {pv}"
    assert_exactly(lv, pv)


@pytest.mark.parametrize("src", list(SOURCES))
@pytest.mark.parametrize("mode", MODES)
def test_cast_matrix(src: str, mode: str, engine: ladle.Engine) -> None:
    """Every pair of types: the same values, nulls, errors or refusal as Polars."""
    full = _series(src).to_frame()
    for dst in TARGETS:
        _check_cast(full, src, dst, mode, engine)
        if mode == "strict":
            # the values a strict cast accepts: the non-strict cast's non-nulls
            lf = full.lazy().select(_cast(pl.col(src), TARGETS[dst], "nonstrict").is_not_null())
            p, keep = polars_outcome(lf)
            if p == "ok":
                fits = full.filter(keep.to_series() | full[src].is_null())
                _check_cast(fits, src, dst, mode, engine)
                _check_cast(fits.clear(), src, dst, mode, engine)
                _check_cast(fits.filter(pl.col(src).is_null()), src, dst, mode, engine)


@pytest.mark.parametrize("src", ["str", "dur_ms", "dur_ns"])
def test_refused_casts_raise_polars_error(src: str) -> None:
    """A cast Polars refuses raises Polars' InvalidOperationError on ladle too,
    without a fallback, where a value reaches it; an all-null or empty input
    casts to nulls, as in Polars."""
    eng = ladle.Engine(raise_on_fail=True)
    dst = {"str": [pl.Boolean, pl.Date, pl.Datetime("us"), pl.Time], "dur_ms": [pl.String, pl.Boolean],
           "dur_ns": [pl.String]}[src]
    for to in dst:
        for strict in (True, False):
            df = _series(src).to_frame()
            lf = df.lazy().select(pl.col(src).cast(to, strict=strict))
            with pytest.raises(pl.exceptions.InvalidOperationError):
                lf.collect()
            with pytest.raises(pl.exceptions.InvalidOperationError, match="not supported"):
                lf.collect(engine=eng)
            for part in (df.filter(pl.col(src).is_null()), df.clear()):
                assert_frame_equal(part.lazy().select(pl.col(src).cast(to, strict=strict)).collect(engine=eng),
                                   part.lazy().select(pl.col(src).cast(to, strict=strict)).collect())


def test_duration_to_string_crash_reproducer(engine: ladle.Engine) -> None:
    """Issue 15.1: this segfaulted; Polars refuses the cast."""
    lf = pl.LazyFrame({"d": pl.Series([-1000], dtype=pl.Duration("ms"))}).select(
        pl.col("d").cast(pl.String, strict=False))
    with pytest.raises(pl.exceptions.InvalidOperationError):
        lf.collect(engine=engine)


def test_temporal_unit_casts_truncate_or_floor(engine: ladle.Engine) -> None:
    """Duration down-casts truncate toward zero (-1500 ns -> -1 us); Datetime
    down-casts floor (-1500 ns -> -2 us); up-casts that overflow are null."""
    vals = [-1500, -1000, -999, -1, 0, 1, 999, 1500, -86_400_000_000_001, 2**62, -(2**62), None]
    cols = {}
    for kind in (pl.Datetime, pl.Duration):
        for u in UNITS:
            cols[f"{kind.__name__}_{u}"] = pl.Series(vals, dtype=pl.Int64).cast(kind(u))
    df = pl.DataFrame(cols)
    exprs = [pl.col(f"{k.__name__}_{fu}").cast(k(tu), strict=False).alias(f"{k.__name__}_{fu}_{tu}")
             for k in (pl.Datetime, pl.Duration) for fu in UNITS for tu in UNITS]
    assert_same(df.lazy().select(exprs), engine)
    assert_same(df.lazy().select(pl.col("Duration_ns").cast(pl.Duration("us"))), engine)


def test_float_to_int_wrap_saturates(engine: ladle.Engine) -> None:
    """Issue 15.16: wrap_numerical float -> int saturates as Rust's `as` (NaN -> 0)."""
    df = pl.DataFrame({"f": pl.Series(FLOATS + [None]), "g": pl.Series(FLOATS + [None], dtype=pl.Float32)})
    exprs = [pl.col(c).cast(t, wrap_numerical=True).alias(f"{c}_{t}") for c in ("f", "g")
             for t in (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)]
    assert_same(df.lazy().select(exprs), engine)


def test_temporal_overflow_in_casts(engine: ladle.Engine) -> None:
    """Issue 16.4: a strict cast that overflows raises; non-strict gives null."""
    d = pl.DataFrame({"d": pl.Series([10957, 376200, None], dtype=pl.Int32).cast(pl.Date)})  # 3000-01-01
    with pytest.raises(ladle.LadleError, match="'d'"):
        d.lazy().select(pl.col("d").cast(pl.Datetime("ns"))).collect(engine=engine)
    assert_same(d.lazy().select(pl.col("d").cast(pl.Datetime("ns"), strict=False)), engine)
    big = pl.DataFrame({"t": pl.Series([2**62, 1], dtype=pl.Int64).cast(pl.Datetime("ms"))})
    assert_same(big.lazy().select(pl.col("t").cast(pl.Datetime("ns"), strict=False)), engine)
    with pytest.raises(ladle.LadleError):
        big.lazy().select(pl.col("t").cast(pl.Datetime("ns"))).collect(engine=engine)


# ------------------------------------------------------------- temporal to string

def test_temporal_to_string(engine: ladle.Engine) -> None:
    """Issue 15.15: the fraction always has the unit's digits; years outside
    0..9999 carry a sign; UTC datetimes end in +00:00."""
    ms = [0, 1, -1, 1692276810000, 1692276810123, -1692276810123, 10**12, -62135596800001,
          -62135596800000, -62167219200000, -62167219200001, 253402300800000, None]
    cols: dict[str, pl.Series] = {}
    for u, m in (("ms", 1), ("us", 1000), ("ns", 10**6)):
        cols[u] = pl.Series([v * m if v is not None and abs(v * m) < 2**63 else None for v in ms],
                            dtype=pl.Int64).cast(pl.Datetime(u))
    cols["utc"] = cols["us"].cast(pl.Datetime("us", "UTC"))
    cols["d"] = pl.Series([0, -1, -719162, -719163, -719528, -719529, 2932896, 2932897, 10**7, -(10**7),
                           95026236, -96465292, None], dtype=pl.Int32).cast(pl.Date)
    df = pl.DataFrame(cols)
    assert_same(df.lazy().select(pl.all().cast(pl.String)), engine)


@pytest.mark.parametrize("value", [95026237, -96465293, 2**31 - 1])
def test_date_to_string_out_of_range_raises(value: int, engine: ladle.Engine) -> None:
    """Polars cannot print dates past year 262142 (it panics); ladle raises."""
    lf = pl.LazyFrame({"d": pl.Series([value], dtype=pl.Int32).cast(pl.Date)}).select(pl.col("d").cast(pl.String))
    assert polars_outcome(lf)[0] == "error"
    with pytest.raises(ladle.LadleError, match="'d'"):
        lf.collect(engine=engine)


def test_tz_datetime_to_string_falls_back(engine: ladle.Engine) -> None:
    lf = pl.LazyFrame({"t": pl.Series([0], dtype=pl.Int64).cast(pl.Datetime("us", "Europe/Amsterdam"))})
    with pytest.raises(ladle.UnsupportedError):
        lf.select(pl.col("t").cast(pl.String)).collect(engine=engine)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(vals=st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=20))
def test_hypothesis_datetime_to_string(vals: list[int | None], engine: ladle.Engine) -> None:
    df = pl.DataFrame({u: pl.Series(vals, dtype=pl.Int64).cast(pl.Datetime(u)) for u in UNITS})
    for u in UNITS:
        lf = df.lazy().select(pl.col(u).cast(pl.String))
        p, pv = polars_outcome(lf)
        kind, lv = ladle_outcome(lf, engine)
        assert kind == p, (u, vals, pv, lv)
        if p == "ok":
            assert_frame_equal(lv, pv)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(vals=st.lists(st.one_of(st.none(), st.floats(width=64), st.floats(width=32)), max_size=20))
def test_hypothesis_float_to_string(vals: list[float | None], engine: ladle.Engine) -> None:
    df = pl.DataFrame({"f": pl.Series(vals, dtype=pl.Float64)}).with_columns(g=pl.col("f").cast(pl.Float32))
    assert_same(df.lazy().select(pl.all().cast(pl.String)), engine)


def test_float_to_string_random_bits(engine: ladle.Engine) -> None:
    """Floats of every exponent, subnormals included, print as in Polars."""
    import numpy as np

    rng = np.random.default_rng(3)
    f64 = rng.integers(0, 2**64, 20000, dtype=np.uint64).view(np.float64)
    f32 = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    sub64 = rng.integers(1, 2**52, 5000, dtype=np.uint64).view(np.float64)
    sub32 = rng.integers(1, 2**23, 5000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    for arr in (f64, f32, sub64, sub32):
        assert_same(pl.LazyFrame({"x": arr}).select(pl.col("x").cast(pl.String)), engine)


# ------------------------------------------------------------- string parsing

PARSE_TYPES = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64,
               pl.Float32, pl.Float64]


def _parse_all(strings: list[str | None], engine: ladle.Engine) -> None:
    df = pl.DataFrame({"s": pl.Series(strings, dtype=pl.String)})
    lf = df.lazy().select([pl.col("s").cast(t, strict=False).alias(str(t)) for t in PARSE_TYPES])
    got = lf.collect(engine=engine)
    assert engine.last_run == "ladle"
    assert_exactly(got, lf.collect(engine="in-memory"))


def test_string_to_number_grammar(engine: ladle.Engine) -> None:
    """Issue 15.11: no whitespace, '+' allowed, no hex, inf/nan spellings, ..."""
    strings = STRINGS + [
        "+-4", "-+4", "++4", "0X10", "1E3", "1e+3", "1e-3", "1e", "e3", "1e3.5", "-1.", "+.5", ".", "-.",
        "1,5", "Inf", "INF", "+inf", "infinity", "Infinity", "INFINITY", "infinit", "NAN", "-nan",
        "+nan", "nAn", "snan", "nan(1)", "iNfInItY", "-1e400", "1e-400", "4.9e-324", "2.5e-324",
        "1.7976931348623157e308", "1.7976931348623159e308", "3.4028235e38", "3.5e38", "1e39",
        "123456789012345678901234567890", "1.5d", "1.5f", "1\n", "１", "00001.5000", "1e0001",
        "1e-0", "1.e5", ".e5", "1.5e", "1.5e+", "--1", "0.000000000000000000000000000000000000000000001",
        "1e-45", "1e-46", "7.006492321624085e-46", "0b1", "1__0", "-0.0", "1e308", "1e309",
        "9223372036854775807", "-9223372036854775808", "-9223372036854775809", "4294967295",
        "-2147483648", "-2147483649", "-32768", "-32769", "32767", "32768", "-128", "-00",
        "0" * 200 + "1", "-" + "0" * 150 + "12", "0." + "0" * 300 + "1", "1" + "0" * 400,
        "1" * 40, "9" * 25, "1e99999999999999999999", "0e99999999999999", "1e-99999999999999999",
        "+", "nan ", " nan", "in", "na", "infx", "1.0.0", "1e5e5", "١", "🎉",
    ]
    _parse_all(strings, engine)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(strings=st.lists(st.one_of(
    st.none(),
    st.text(alphabet="0123456789+-.eE_ xXinfatyINFATY\t", max_size=24),
    st.integers(-(2**70), 2**70).map(str),
    st.floats().map(repr),
    st.floats(width=32).map(lambda f: f"{f:.9g}"),
    st.from_regex(r"\A[+-]?[0-9]{0,25}(\.[0-9]{0,25})?([eE][+-]?[0-9]{1,4})?\Z"),
), max_size=25))
def test_hypothesis_string_to_number(strings: list[str | None], engine: ladle.Engine) -> None:
    _parse_all(strings, engine)


def test_strict_string_parse_errors(engine: ladle.Engine) -> None:
    for s, t in ((" 7", pl.Int64), ("0x10", pl.Float64), ("300", pl.UInt8), ("-0", pl.UInt8)):
        lf = pl.LazyFrame({"s": [s]}).select(pl.col("s").cast(t))
        assert polars_outcome(lf)[0] == "error"
        with pytest.raises(ladle.LadleError, match="'s'"):
            lf.collect(engine=engine)
    assert_same(pl.LazyFrame({"s": ["+4", "-0", "007"]}).select(pl.col("s").cast(pl.Int8)), engine)


# --------------------------------------------------------------------- str.slice

SLICE_STRINGS = ["", "a", "ab", "abc", "héllo", "日本語", "🎉x", "a🎉b", None]


def test_str_slice_every_offset_and_length(engine: ladle.Engine) -> None:
    """Issues 15.10, 16.8: a negative offset before the start shortens the slice."""
    df = pl.DataFrame({"s": SLICE_STRINGS})
    exprs = [pl.col("s").str.slice(off, ln).alias(f"{off}_{ln}") for off in range(-9, 10)
             for ln in (None, 0, 1, 2, 3, 5, 10)]
    exprs += [pl.col("s").str.slice(o, n).alias(f"x{i}") for i, (o, n) in enumerate(
        [(0, 2**63 - 1), (1, 2**64 - 1), (2**63 - 1, 1), (-(2**63), 5), (-(2**63), None),
         (-(2**63), 2**64 - 1), (2**63 - 1, None), (-3, 2**63 - 1)])]
    assert_same(df.lazy().select(exprs), engine)
    assert_same(df.clear().lazy().select(exprs), engine)


def test_str_slice_refusals(engine: ladle.Engine) -> None:
    df = pl.LazyFrame({"s": ["abc"]})
    with pytest.raises(ladle.UnsupportedError):  # Polars raises (a negative length)
        df.select(pl.col("s").str.slice(0, -1)).collect(engine=engine)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(strings=st.lists(st.one_of(st.none(), st.text(max_size=8)), max_size=10),
       off=st.integers(-12, 12), ln=st.one_of(st.none(), st.integers(0, 12)))
def test_hypothesis_str_slice(strings: list[str | None], off: int, ln: int | None, engine: ladle.Engine) -> None:
    df = pl.DataFrame({"s": pl.Series(strings, dtype=pl.String)})
    assert_same(df.lazy().select(pl.col("s").str.slice(off, ln)), engine)


# ------------------------------------------------------------------ case mapping

def _all_chars(step: int = 1) -> list[str]:
    return [chr(c) for c in range(0, 0x110000, step) if not 0xD800 <= c <= 0xDFFF]


def test_case_mapping_of_every_code_point(engine: ladle.Engine) -> None:
    """Issue 16.8: full case mappings (ß -> SS, İ -> i̇, ligatures) for every
    code point, and strip_chars() strips Unicode White_Space."""
    chars = _all_chars()
    df = pl.DataFrame({"c": chars, "w": [c + "a" + c for c in chars]})
    assert_same(df.lazy().select(pl.col("c").str.to_uppercase().alias("up"),
                                 pl.col("c").str.to_lowercase().alias("lo"),
                                 pl.col("w").str.strip_chars().alias("st")), engine)


def test_final_sigma_and_special_cases(engine: ladle.Engine) -> None:
    words = ["straße", "ΟΔΟΣ", "ΟΔΟΣ ΟΔΟΣ.", "Σ", "ΑΣ", "ΑΣΑ", "Α.Σ", "ΑΣ.", "ΑΣ'Α", "Α'Σ", "ΣΑ",
             "A\u0345Σ", "ΑΣ\u0345", "ΑΣ\u00adΑ", "ΑΣ\u0301", "aΣb", "1Σ", "ǅ", "ǈ", "İstanbul", "ﬃ",
             "ŉ", "ΐ", "ﬁx", "ꭰ", "ᾈ", "ᾳ", "Ω", "K", "Å", "ẞ", "ı", "ſ", "ǰ", "\u1e9e", "ÉCOLE",
             "mixed ASCII and ÜNİCÖDE", "", None, "\u2126\u212a", "𐐀𐐨", "ΣΣ", "ΑΣΣ", "ΑΣ Σ"]
    df = pl.DataFrame({"s": words})
    assert_same(df.lazy().select(pl.col("s").str.to_uppercase().alias("up"),
                                 pl.col("s").str.to_lowercase().alias("lo")), engine)


def test_strip_chars_whitespace_and_sets(engine: ladle.Engine) -> None:
    ws = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
    df = pl.DataFrame({"s": [ws + "x y" + ws, "\u200bx\u200b", "\ufeffx", "  ", "", None, "éxé", "ab"]})
    assert_same(df.lazy().select(pl.col("s").str.strip_chars().alias("a"),
                                 pl.col("s").str.strip_chars("é").alias("b"),
                                 pl.col("s").str.strip_chars("").alias("c"),
                                 pl.col("s").str.strip_chars(" \u3000x").alias("d")), engine)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(strings=st.lists(st.one_of(st.none(), st.text(max_size=10),
                          st.text(alphabet="ΣσςΑαΟ .'\u0345\u00ad\u0301İiIßſKkǅ", max_size=10)), max_size=10))
def test_hypothesis_case_mapping(strings: list[str | None], engine: ladle.Engine) -> None:
    df = pl.DataFrame({"s": pl.Series(strings, dtype=pl.String)})
    assert_same(df.lazy().select(pl.col("s").str.to_uppercase().alias("up"),
                                 pl.col("s").str.to_lowercase().alias("lo"),
                                 pl.col("s").str.strip_chars().alias("st")), engine)


# ---------------------------------------------------------------------------- pow

POW_FLOATS = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, INF, -INF, NAN, 1e300, -1e300, 1e-300, None,
              4.0, -8.0, 3.0, 1.1, -1.7, 123.456, -0.3]


@pytest.mark.parametrize("dtype", [pl.Float64, pl.Float32])
def test_pow_float_literal_exponents(dtype: pl.DataType, engine: ladle.Engine) -> None:
    """Issue 15.17: pow(0.5) is sqrt; integer exponents 2..9 multiply."""
    df = pl.DataFrame({"x": pl.Series(POW_FLOATS, dtype=dtype)})
    exps: list[Any] = [0.5, 2, 3, 2.0, 3.0, 0, 1, -1, -2, 1.5, -0.5, 0.0, 1.0, -1.0, 4, 5, 6, 7, 8, 9, 10,
                       11, 63, 1 / 3, NAN, INF, -INF, pl.lit(0.5, dtype=pl.Float32), pl.lit(3, dtype=pl.Int8)]
    got = assert_same(df.lazy().select(pl.col("x").pow(e).alias(f"e{i}") for i, e in enumerate(exps)), engine)
    assert_exactly(got, df.lazy().select(pl.col("x").pow(e).alias(f"e{i}") for i, e in enumerate(exps)).collect())


def test_pow_random_values(engine: ladle.Engine) -> None:
    import numpy as np

    x = np.random.default_rng(7).normal(size=2000) * 10
    df = pl.DataFrame({"x": x, "y": x.astype(np.float32), "e": np.abs(x) / 10})
    exprs = [pl.col(c).pow(e).alias(f"{c}{i}") for c in ("x", "y")
             for i, e in enumerate([2, 3, 4, 5, 7, 9, 10, -1, -3, 1.5, 0.5, 1 / 3, pl.col("e")])]
    got = assert_same(df.lazy().select(exprs), engine)
    assert_exactly(got, df.lazy().select(exprs).collect())


def test_pow_integers(engine: ladle.Engine) -> None:
    """Integer ** integer wraps; a negative exponent raises as in Polars (16.14)."""
    df = pl.DataFrame({"i": [0, 1, -1, 2, -2, 3, 10, 100, None], "e": [3, 0, 5, 62, 63, 2, 19, 9, None],
                       "b": pl.Series([100, -100, 12, 0, 1, 2, -3, 5, None], dtype=pl.Int8)})
    assert_same(df.lazy().select(pl.col("i").pow(2).alias("a"), pl.col("i").pow(pl.col("e")).alias("b"),
                                 pl.col("b").pow(3).alias("c"), pl.col("i").pow(0.5).alias("d"),
                                 pl.col("i").pow(3.0).alias("f"), pl.col("b").pow(pl.col("e")).alias("g")), engine)
    for e in (-1, pl.lit(-2, dtype=pl.Int8), 2**32, pl.col("e") - 4):
        lf = df.lazy().select(pl.col("i").pow(e))
        assert polars_outcome(lf)[0] == "error"
        with pytest.raises(ladle.LadleError):
            lf.collect(engine=engine)


# ----------------------------------------------------------- temporal arithmetic

def test_date_plus_duration_overflow(engine: ladle.Engine) -> None:
    """Issue 16.4: Date +/- Duration near the edges gives null as in Polars,
    never a wrapped day."""
    days = [0, -1, 5, 106_751, 106_752, 100_000_000, 106_751_991, 106_751_992, -106_751_991,
            -106_751_992, 200_000_000, 2**31 - 1, 2**31 - 51, -(2**31), None]
    d = pl.Series("d", days, dtype=pl.Int32).cast(pl.Date)
    cols: dict[str, pl.Series] = {"d": d}
    durs = {"ns": [1, -1, 10**9 * 86400 * 100, 2**62, -(2**62), 2**63 - 1, -(2**63)],
            "us": [1, -1, 86_400_000_000, 2**62, -(2**62), 2**63 - 1, -(2**63)],
            "ms": [1, -1, 86_400_000, 86_399_999, -86_400_001, 10**16, -(10**16), 9_223_372_036_854_775,
                   2**62, 2**63 - 1, -(2**63)]}
    exprs = [(pl.col("d") + pl.duration(days=100)).alias("plus100"),
             (pl.col("d") - pl.duration(days=100)).alias("minus100")]
    for u, vs in durs.items():
        for i, v in enumerate(vs):
            cols[f"{u}{i}"] = pl.Series([v] * len(days), dtype=pl.Int64).cast(pl.Duration(u))
            exprs += [(pl.col("d") + pl.col(f"{u}{i}")).alias(f"p_{u}{i}"),
                      (pl.col("d") - pl.col(f"{u}{i}")).alias(f"m_{u}{i}")]
    df = pl.DataFrame(cols)
    assert_same(df.lazy().select(exprs), engine)
    rev = df.select(pl.col("d"), pl.col("d").reverse().alias("e"))
    assert_same(rev.lazy().select((pl.col("d") - pl.col("e")).alias("diff")), engine)
    # the frame prints (Polars panicked on the wrapped days ladle gave)
    str(pl.LazyFrame({"d": d}).select(pl.col("d") + pl.duration(days=100)).collect(engine=engine))


def test_date_compared_with_datetime_out_of_range(engine: ladle.Engine) -> None:
    import datetime as dt

    df = pl.DataFrame({"x": [dt.date(3000, 1, 1), dt.date(2000, 1, 1), None],
                       "y": pl.Series([dt.datetime(2000, 1, 1)] * 3, dtype=pl.Datetime("ns"))})
    assert_same(df.lazy().select((pl.col("x") == pl.col("y")).alias("eq"), (pl.col("x") < pl.col("y")).alias("lt")),
                engine)
