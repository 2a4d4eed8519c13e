"""Comparison of ladle's result with Polars'.

Same column names, same dtypes, same values. Values compare with `eq_missing`
(null equals null), NaN equals NaN, and -0.0 equals 0.0 (as polars.testing's
assert_frame_equal treats them). Row order is compared where Polars defines it:
`order` is "full" (positionally), "prefix" (the listed columns positionally, the
whole frame as a multiset) or "none" (as multisets: both sorted by every column,
nulls last, after -0.0 is made 0.0).

Tolerance: only the columns in `taint`, which carry a float sum, mean, std or var
(docs/semantics.md: ladle sums in double precision per thread range, Polars in its
own order and Float32 in Float32), compare with |a - b| <= rtol*max(|a|,|b|) + atol,
rtol 1e-9 (Float64) or 1e-5 (Float32, or any column when `f32`: the query holds Float32
values, whose sums may feed a Float64 column); a Datetime or Duration column (a mean of
ticks) compares its ticks within 1e-15 * tscale * rows (about 4 ulps a row), tscale the
largest tick in the input tables; atol = rtol * scale * rows, where scale is
the largest finite magnitude in the input tables and rows their total height (a
bound on the rounding error of a sum of their values), or where the query holds an
integer literal above 2**53 the scale that makes atol 4 * 2**-52 * literal * rows
(literal_scale: such integers round on their way to Float64). When the inputs hold
magnitudes above 1e290 a sum may overflow in one order and not in another, so
there a non-finite value against a finite one is accepted too. Columns in `fstr`
(float -> String casts, whose text differs on purpose for very large and very small
numbers, docs/semantics.md) compare as the floats they parse to where those are at
least 1e15 or below 1e-4 in magnitude; other numbers must print as Polars prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl


@dataclass
class Diff:
    kind: str  # columns, dtypes, height, values, order
    detail: str


def _norm_zero(df: pl.DataFrame) -> pl.DataFrame:
    exprs = [
        pl.when(pl.col(c) == 0).then(pl.lit(0.0, dtype=t)).otherwise(pl.col(c)).alias(c)
        for c, t in df.schema.items()
        if t.is_float()
    ]
    return df.with_columns(exprs) if exprs else df


def sort_all(df: pl.DataFrame, last: set[str]) -> pl.DataFrame:
    """df sorted by every column (those in `last` last), nulls last."""
    if df.width == 0 or df.height < 2:
        return _norm_zero(df)
    df = _norm_zero(df)
    keys = [c for c in df.columns if c not in last] + [c for c in df.columns if c in last]
    return df.sort(keys, nulls_last=True, maintain_order=True)


def _col_equal(a: pl.Series, b: pl.Series, *, tol: bool, fstr: bool, scale: float, rows: int, f32: bool = False,
               tscale: float = 0.0) -> pl.Series:
    eq = a.eq_missing(b)
    if a.dtype.is_float():
        eq = eq | (a.is_nan() & b.is_nan()).fill_null(False)
        if tol:
            rtol = 1e-5 if a.dtype == pl.Float32 or f32 else 1e-9
            atol = rtol * scale * max(rows, 1)
            fa, fb = a.cast(pl.Float64), b.cast(pl.Float64)
            big = pl.DataFrame({"a": fa, "b": fb}).select(
                ((pl.col("a") - pl.col("b")).abs() <= rtol * pl.max_horizontal(pl.col("a").abs(), pl.col("b").abs()) + atol)
                .fill_null(False).alias("close"),
                ((~pl.col("a").is_finite() | ~pl.col("b").is_finite()) & pl.col("a").is_not_null() & pl.col("b").is_not_null())
                .fill_null(False).alias("nonfinite"),
            )
            close = big["close"]
            if scale > 1e290:
                close = close | big["nonfinite"]
            eq = eq | close
    elif tol and isinstance(a.dtype, (pl.Datetime, pl.Duration)):
        # a temporal mean is a float sum of ticks cut to a tick: its rounding error
        # is bounded by the largest input tick times the rows
        fa, fb = a.to_physical().cast(pl.Float64), b.to_physical().cast(pl.Float64)
        close = (fa - fb).abs() <= 1e-15 * tscale * max(rows, 1)
        eq = eq | close.fill_null(False)
    elif fstr and a.dtype == pl.String:
        # only very large and very small numbers print differently on purpose
        fa, fb = a.cast(pl.Float64, strict=False), b.cast(pl.Float64, strict=False)
        far = (fa.abs() >= 1e15) | ((fa.abs() < 1e-4) & (fa != 0))
        eq = eq | (fa.eq_missing(fb) & fa.is_not_null() & far).fill_null(False) | (fa.is_nan() & fb.is_nan()).fill_null(False)
    return eq.fill_null(False)


def _show(s: pl.Series, i: int) -> str:
    """s[i] as Python shows it, or its physical value where Python cannot hold it (a date past year 9999)."""
    try:
        return repr(s[i])
    except BaseException:  # noqa: BLE001 - Polars panics on out-of-range temporal values
        try:
            return f"{s.to_physical()[i]!r} (physical {s.dtype})"
        except BaseException:  # noqa: BLE001
            return "<unprintable>"


def _values_diff(exp: pl.DataFrame, got: pl.DataFrame, taint: set[str], fstr: set[str], scale: float, rows: int,
                 f32: bool = False, tscale: float = 0.0) -> str | None:
    for c in exp.columns:
        a, b = exp[c], got[c]
        eq = _col_equal(a, b, tol=c in taint, fstr=c in fstr, scale=scale, rows=rows, f32=f32, tscale=tscale)
        if not eq.all():
            bad = (~eq).arg_true()
            i = int(bad[0])
            return f"column {c!r}: {len(bad)} of {len(eq)} rows differ; first at row {i}: expected {_show(a, i)}, got {_show(b, i)}"
    return None


def compare(
    exp: pl.DataFrame,
    got: pl.DataFrame,
    *,
    order: str,
    prefix: list[str],
    taint: set[str],
    fstr: set[str],
    scale: float = 0.0,
    rows: int = 0,
    f32: bool = False,
    tscale: float = 0.0,
) -> Diff | None:
    """None when got equals exp under the rules above, else what differs."""
    if exp.columns != got.columns:
        return Diff("columns", f"expected columns {exp.columns}, got {got.columns}")
    for c in exp.columns:
        if exp.schema[c] != got.schema[c]:
            return Diff("dtypes", f"column {c!r}: expected {exp.schema[c]}, got {got.schema[c]}")
    if exp.height != got.height:
        return Diff("height", f"expected {exp.height} rows, got {got.height}")
    last = taint | fstr
    if order == "full":
        d = _values_diff(exp, got, taint, fstr, scale, rows, f32, tscale)
        if d is None:
            return None
        if _values_diff(sort_all(exp, last), sort_all(got, last), taint, fstr, scale, rows, f32, tscale) is None:
            return Diff("order", "same rows in another order; " + d)
        return Diff("values", d)
    if order == "prefix" and prefix:
        d = _values_diff(exp.select(prefix), got.select(prefix), taint, fstr, scale, rows, f32, tscale)
        if d is not None:
            if _values_diff(sort_all(exp, last), sort_all(got, last), taint, fstr, scale, rows, f32, tscale) is None:
                return Diff("order", f"columns {prefix} not in Polars' order; " + d)
            return Diff("values", d)
    d = _values_diff(sort_all(exp, last), sort_all(got, last), taint, fstr, scale, rows, f32, tscale)
    return None if d is None else Diff("values", "(rows sorted) " + d)


def input_scale(frames: list[pl.DataFrame]) -> tuple[float, int]:
    """The largest finite magnitude among the numeric columns of frames, and their total height."""
    scale = 0.0
    for df in frames:
        for c, t in df.schema.items():
            if t.is_numeric():
                s = df[c].cast(pl.Float64, strict=False)
                s = s.filter(s.is_finite())
                if len(s):
                    m = s.abs().max()
                    if m is not None:
                        scale = max(scale, float(m))  # type: ignore[arg-type]
    return scale, sum(df.height for df in frames)


def literal_scale(code: str) -> float:
    """The input scale (see input_scale) that integer literals above 2**53 in the
    query's code call for: an integer that large loses up to half an ulp on its
    way to Float64 (Polars converts it so, and so does ladle, in their own
    orders: their std of `col - -2**63` differs by hundreds, Polars' two
    engines among themselves too), so a float sum over such values is exact to
    about 4 * 2**-52 * the literal * rows; returned as the scale that gives
    that atol at rtol 1e-9. 0.0 when the code has no such literal."""
    import re

    big = 0
    for m in re.finditer(r"(?<![\w.'\"])\d{16,}(?![\w.])", code):
        big = max(big, int(m.group()))
    return big * 4 * 2.0**-52 / 1e-9 if big > 2**53 else 0.0


def temporal_scale(frames: list[pl.DataFrame]) -> float:
    """The largest magnitude among the Datetime and Duration ticks of frames."""
    scale = 0.0
    for df in frames:
        for c, t in df.schema.items():
            if isinstance(t, (pl.Datetime, pl.Duration)):
                m = df[c].to_physical().cast(pl.Float64).abs().max()
                if m is not None:
                    scale = max(scale, float(m))  # type: ignore[arg-type]
    return scale
