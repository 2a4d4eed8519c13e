"""Root causes: named classes of failures, from a shrunk case's class and details.

`fine_class` (harness.py) says what a shrunk failure is made of: its outcome, its
top-level operator and its expression features. The rules below name the cause
behind the common shapes, the classes of issue 15 ("#n") and the ones this tester
found since; the first rule that matches wins, and a failure no rule matches keeps
its fine class (a new class to look at). The rules read the fine class and the
outcome's description (harness.describe) with the reproducer's source after it, so
they also apply to saved reproducers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    fine: str = ""  # regex on the fine class
    detail: str = ""  # regex on the description of the outcome and the reproducer's source

    def matches(self, fine: str, detail: str) -> bool:
        return bool((not self.fine or re.search(self.fine, fine)) and (not self.detail or re.search(self.detail, detail, re.S)))


RULES: list[Rule] = [
    # crashes, hangs and memory corruption
    Rule("#1 Duration -> String cast crashes or corrupts memory",
         fine=r"^(crash|timeout|ladle_error|harness_error|mismatch).*cast:duration->str"),
    Rule("#1 Duration -> String cast crashes or corrupts memory", detail=r"max string length|out of memory: \d{9,}"),
    Rule("#1 Duration -> String cast crashes or corrupts memory (implicit: a Duration compared with a String)",
         fine=r"^(crash|timeout).*(cmp|eq_missing|ne_missing):duration,str"),
    Rule("wrap_numerical casts of floats to temporal types give out-of-range values (Polars panics reading them)",
         fine=r"^ladle_error:PanicException.*cast:float->(date|datetime|duration):wrap"),
    Rule("#3 a literal first operand in group_by or after a join writes out of bounds (segfault, heap corruption)",
         fine=r"^(crash|timeout|late_crash):(?!polars).*lit-first"),
    Rule("tester error", fine=r"^(harness_error|setup_error)"),
    Rule("temporal literals outside Python's datetime range: ladle's translator panics (PanicException)",
         fine=r"^ladle_error:PanicException", detail=r"overflowed|out-of-range"),
    # Polars raises, ladle answers
    Rule("a literal compared with a column Polars holds as one value (made from a literal): Polars gives the wrong "
         "height or a ShapeError (a Polars bug; ladle's answer is right)",
         fine=r"^(mismatch:height|polars_error_ladle_ok:ShapeError).*\b(cmp|eq_missing|ne_missing):[^|]*(over:lit|lit-first)"),
    Rule("arg_min/arg_max answered by Polars with an index past the last row (a Polars bug; ladle's index is in range)",
         fine=r"^mismatch:values.*agg:arg_m", detail=r"of (\d+) rows differ; first at row \d+: expected (\d+), got"),
    Rule("min/max among 0.0 and -0.0: Polars returns either, by plan and engine; ladle the first seen",
         fine=r"^mismatch", detail=r"0\.0, -0\.0|-0\.0, 0\.0"),
    Rule("median/quantile where 0.0 and -0.0 meet at the middle: Polars' selection returns either zero (a division "
         "by it then gives inf or -inf)",
         fine=r"^mismatch:values.*agg:(median|quantile)", detail=r"expected -?(inf|0\.0), got -?(inf|0\.0)"),
    Rule("casts Polars refuses run on ladle (#1: String -> Date; also String -> Boolean, Duration -> String, ...)",
         fine=r"^polars_error_ladle_ok:InvalidOperationError", detail=r"casting from .* not supported"),
    Rule("#7 clip with bounds that do not fit the column type", fine=r"^polars_error_ladle_ok.*\bclip\b",
         detail=r"conversion from .* failed in column 'literal'"),
    Rule("#8 horizontal concat of unequal heights pads with nulls", fine=r"^polars_error_ladle_ok:ShapeError.*concat:horizontal"),
    Rule("integer pow with a negative exponent answers where Polars raises", fine=r"^polars_error_ladle_ok.*\bpow\b",
         detail=r"negative integer power|conversion from .* to `u32` failed"),
    Rule("when() with an untyped null condition answers where Polars raises SchemaError",
         fine=r"^polars_error_ladle_ok:SchemaError", detail=r"expected `Boolean`, got `null`"),
    Rule("Polars raises a ShapeError for a literal it broadcast (length 1 vs the frame): a Polars bug, ladle's answer is right",
         fine=r"^polars_error_ladle_ok", detail=r"length 1 doesn't match the DataFrame height"),
    Rule("#11 String -> number parsing ('0x10', ' 7', '+4')", fine=r"cast:str->(int|uint|float)",
         detail=r"values: \[\"(0x|\s|\+)"),
    Rule("out-of-range casts to temporal types wrap (integers -> Date/Datetime/Duration, Date -> Datetime(ns), also "
         "implicit in comparisons; Polars: null, or an error when strict)",
         fine=r"^(mismatch|polars_error_ladle_ok).*(cast:(u?int|date)->(date|datetime|duration)|cmp:date,datetime)"),
    Rule("floor division of a Boolean or an untyped null answers where Polars raises",
         fine=r"^polars_error_ladle_ok.*arith://:[^|]*(null|bool)", detail=r"not supported for dtype|cannot get ref"),
    Rule("a strict cast of a literal that fails: Polars raises even when no row or group reads it, ladle does not",
         fine=r"^polars_error_ladle_ok", detail=r"failed in column 'literal'"),
    Rule("Polars panics (a Polars bug; ladle answers)", fine=r"^polars_error_ladle_ok:PanicException"),
    Rule("quantile of a Boolean answers where Polars raises", fine=r"^polars_error_ladle_ok.*agg:quantile",
         detail=r"`quantile` operation not supported for dtype `bool`"),
    # ladle raises
    Rule("#9 rank() (or a window) of a literal: 'expression gave 0 rows'", fine=r"^ladle_error.*gave N rows.*(rank|over)"),
    Rule("an expression of no column: 'expression gave 0 rows'", fine=r"^ladle_error.*gave N rows"),
    Rule("when/then/otherwise, fill_nan: a strict cast in a branch no row takes raises on ladle (Polars does not evaluate it)",
         fine=r"^ladle_error:Ladle\w*Error:strict cast.*\b(when|fill_nan|fill_null)", detail=r"strict cast"),
    Rule("Polars raises 'returned aggregation is of different length' (a Polars bug; ladle answers)",
         fine=r"^polars_error_ladle_ok:ComputeError", detail=r"returned aggregation is of different length"),
    Rule("a string expression in group_by over an empty input: 'out of memory: string output'",
         fine=r"^ladle_error", detail=r"out of memory: string output"),
    # different answers
    Rule("Polars' optimizer turns unique(maintain_order=True) under a later slice or projection into "
         "maintain_order=False (see q.explain()): the order, and the rows a slice keeps, are then open on both "
         "engines; ladle follows the plan it is given",
         fine=r"^mismatch.*\bunique\b", detail=r"maintain_order=True"),
    Rule("#6 join maintain_order ignored", fine=r"^mismatch:order .*join:[a-z]+:(left|right|left_right|right_left)"),
    Rule("#2 input projected to no column has 0 rows (select(pl.len()), cross join + select)",
         fine=r"^mismatch.*(select:len|join:cross)", detail=r"got 0\b|got None|got \d+ rows"),
    Rule("#2 input projected to no column has 0 rows (select(pl.len()), cross join + select)",
         fine=r"^mismatch[^|]*\|[^|]*\|.*\b(len|agg:len)\b", detail=r"expected [1-9]\d*, got 0\b|expected [1-9]\d* rows, got 0\b"),
    Rule("#2 input projected to no column has 0 rows (with_row_index + select)", fine=r"^mismatch.*with_row_index>.*select"),
    Rule("#2 input projected to no column has 0 rows (select(pl.len()), cross join + select)", fine=r"^mismatch.*select:len"),
    Rule("#2/#4 a select of one-value expressions gives 0 rows (on an empty input, or literals only)",
         fine=r"^mismatch:height \| [^|]*select:scalar \|", detail=r"expected [1-9]\d* rows, got 0\b"),
    Rule("#4 repeated scalar aggregations in select: one row per input row", fine=r"^mismatch:height \| [^|]*select:scalar \|"),
    Rule("#4 repeated scalar aggregations in select: one row per input row", fine=r"^mismatch:height \| [^|]*\bselect \|.*agg:",
         detail=r"expected 1 rows, got [2-9]"),
    Rule("#5 an aggregation (or window) of a literal uses the group's length", fine=r"^mismatch.*(agg:[a-z_.]+|over):lit"),
    Rule("#3 a literal (or other one-value) first operand broadcasts its row 0", fine=r"^mismatch.*lit-first"),
    Rule("#10 str.slice with a negative offset past the start", fine=r"^mismatch.*str\.slice:neg"),
    Rule("#11 String -> number parsing ('0x10', ' 7', '+4')", fine=r"^mismatch.*cast:str->(int|uint|float)"),
    Rule("#12 float %", fine=r"^mismatch.*arith:%:[a-z,]*float"),
    Rule("#13 Duration unit down-casts floor instead of truncating (also implicit: datetime +- duration of another unit, supertypes)",
         fine=r"^mismatch.*(cast:duration->duration|arith:[-+]:(date|datetime),duration|fill_null|when)",
         detail=r"timedelta|datetime"),
    Rule("#15 temporal -> String drops a zero fraction", fine=r"^mismatch.*cast:(date|datetime)->str"),
    Rule("Float -> String prints an integral value with an exponent ('-1e+02' where Polars prints '-100.0')",
         fine=r"^mismatch.*cast:float->str", detail=r"e[+-]\d"),
    Rule("#16 wrap_numerical casts float -> int give null", fine=r"^mismatch.*cast:float->u?int:wrap"),
    Rule("wrap_numerical casts temporal -> int give null", fine=r"^mismatch.*cast:(date|datetime|duration)->u?int:wrap"),
    Rule("wrap_numerical casts int -> temporal give null", fine=r"^mismatch.*cast:u?int->(date|datetime|duration):wrap"),
    Rule("#17 median/quantile of inf", fine=r"^mismatch.*agg:(median|quantile)", detail=r"inf"),
    Rule("#17 pow(0.5) of -inf / -0.0", fine=r"^mismatch.*pow\(0\.5\)"),
    Rule("arg_min/arg_max among equal values where Polars flagged the column sorted (a column made from one literal, "
         "after a sort): Polars answers by the flag, ladle gives the first (docs/semantics.md)",
         fine=r"^mismatch.*agg:arg_(min|max)"),
    Rule("a strict cast of -inf (log() of an integer 0) to an integer gives null on ladle (Polars: 0, no error)",
         fine=r"^mismatch.*cast:float->u?int:strict.*\blog|^mismatch.*\blog.*cast:float->u?int:strict"),
    Rule("Float32 log()/log10(): last bits differ from Polars", fine=r"^mismatch.*\blog(10)?\b"),
    Rule("Datetime - Duration of another unit: Polars computes in the Duration's unit, ladle in the Datetime's",
         fine=r"^mismatch.*arith:[-+]:datetime,duration", detail=r"Datetime\(\"ns\"\).*time_unit=\"(ms|us)\"|expected -?\d+, got -?\d+000\b"),
    Rule("rank() over a window of a null value gives a rank (Polars: null)", fine=r"^mismatch.*\brank\b.*over|^mismatch.*over.*\brank\b"),
    Rule("#14 Datetime/Duration compared with a literal of another unit (Polars compares in the literal's unit)",
         fine=r"^mismatch.*(\bcmp|is_between|eq_missing|ne_missing)",
         detail=r"(Datetime|Duration)\(\"ns\"\).*(dt\.datetime|pl\.duration|dt\.timedelta)"),
    Rule("clip with lower bound > upper bound", fine=r"^mismatch.*\bclip\b"),
    Rule("float division by a one-value divisor (a literal or an aggregation): Polars multiplies by its reciprocal, ladle divides",
         fine=r"^mismatch.*arith:/", detail=r"\d\.\d*(0000|9999)\d"),
    Rule("#4 a select of one-value expressions: one row per input row (seen through a later operator)",
         fine=r"^mismatch[^|]*\| [^|]*select:scalar"),
    Rule("#6 join maintain_order ignored (seen through a later operator)",
         fine=r"^mismatch.*join:[a-z]+:(left|right|left_right|right_left)"),
]


def cause(fine: str, detail: str) -> str:
    """The named cause of a failure, or its fine class when no rule knows it."""
    for r in RULES:
        if r.matches(fine, detail):
            return r.name
    return "unclassified: " + fine
