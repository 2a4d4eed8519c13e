"""Random, type-correct Polars expressions over a frame's columns.

Expressions grow bottom-up: every node is checked with Polars' own type resolution
(`frame.select(expr).collect_schema()`) as it is made, so its dtype is exact and a
node Polars rejects is thrown away and drawn again. Two modes share the builders:
"row" expressions (one value per row; leaves are columns and literals, with the
occasional scalar aggregation broadcast and `over()` window) and "agg" expressions
(one value per group; leaves are aggregations of row expressions), used in
`group_by().agg()` and in scalar selects.
"""

from __future__ import annotations

import random
import re
from typing import Any, Callable

import polars as pl

from .case import E, esc, leaf
from .values import ALL_TYPES, FLOATS, INTS, STRINGS, UNITS, kind, py_code, short

NUM = {"int", "float"}
TEMPORAL = {"date", "datetime", "duration"}
ORDERED = NUM | {"str", "bool"} | TEMPORAL  # kinds with min/max and comparisons
ANY = ORDERED

INT_LITS = [0, 1, 2, -1, 3, 7, 100, -5, 300, -129, 2**31, 2**63 - 1, -(2**63)]
FLOAT_LITS = [0.0, -0.0, 1.5, -2.5, 0.5, 100.0, float("nan"), float("inf"), float("-inf"), 1e300, 3.0]
DATE_LITS = ["dt.date(2020, 1, 1)", "dt.date(1969, 12, 31)", "dt.date(2023, 8, 17)", "dt.date(2000, 2, 29)"]
DATETIME_LITS = [
    "dt.datetime(2023, 8, 17, 12, 53, 30)", "dt.datetime(1970, 1, 1)", "dt.datetime(1969, 12, 31, 23, 59, 59, 500000)",
    "dt.datetime(2000, 2, 29, 0, 0, 0, 1)", "dt.datetime(2100, 1, 1)", "dt.datetime(1970, 1, 1, 0, 0, 0, 1)",
]
TIMEDELTA_LITS = [
    "dt.timedelta(days=1)", "dt.timedelta(seconds=-1, microseconds=500)", "dt.timedelta(hours=2, minutes=3)",
    "dt.timedelta(0)", "dt.timedelta(days=-3)",
]
REGEXES = ["^a", "b$", "a|b", "[ab]c", "é", "a.*b", "^$", "^[0-9]+$"]


def is_bad_dtype(dtype: pl.DataType) -> bool:
    return kind(dtype) in ("other",)


# An untyped null literal divided by a column, under is_in, then aggregated:
# `(pl.lit(None) / pl.col('x')).is_in([1.0]).any()` (or .first(), .sum()) makes Polars
# 2.1.0's collect_schema loop forever
POLARS_HANG = re.compile(r"pl\.lit\(None\) / .*\.is_in\(")


class ExprGen:
    """Draws expressions valid over `lf` (whose columns are `schema`).

    order_ok: the input's row order is defined, so order-dependent expressions
    (first, last, arg_min/arg_max, rank 'ordinal') are allowed; taint: columns that
    carry float summation error and must not be read by fragile expressions.
    """

    def __init__(
        self, rng: random.Random, lf: pl.LazyFrame, ns: dict[str, Any], *, order_ok: bool, taint: set[str]
    ) -> None:
        self.rng = rng
        self.lf = lf
        self.ns = ns
        self.schema: dict[str, pl.DataType] = dict(lf.collect_schema())
        self.order_ok = order_ok
        self.taint = taint
        self.mode = "row"
        self.windows = True  # may a row expression hold over() and rank()?
        # may it hold rank() (not over()): under an aggregation of a select or of a
        # window, which ranks the whole input or the window group
        self.ranks_ok = False
        self.group_aggs = False  # the items of a group_by's agg()
        self.in_window = False
        self._types: dict[str, pl.DataType | None] = {}
        self.builders: list[tuple[set[str], int, Callable[[int, set[str], bool], E | None]]] = [
            (NUM | {"duration", "date", "datetime"}, 12, self.b_arith),
            ({"int", "float", "duration"}, 2, self.b_neg_abs),
            (NUM, 4, self.b_round),
            ({"float"}, 5, self.b_math),
            (NUM | {"date", "datetime", "duration"}, 3, self.b_clip),
            (ORDERED, 2, self.b_horizontal),
            ({"int"}, 3, self.b_strlen),
            ({"int"}, 4, self.b_dtfield),
            (ANY, 9, self.b_cast),
            (ANY, 5, self.b_when),
            (ANY, 4, self.b_fill_null),
            ({"float"}, 2, self.b_fill_nan),
            ({"float", "int"}, 3, self.b_rank),
            (ANY, 3, self.b_running),
            (ANY, 5, self.b_window),
            ({"str"}, 8, self.b_str),
            ({"bool"}, 12, self.b_cmp),
            ({"bool"}, 5, self.b_logic),
            ({"bool"}, 4, self.b_isnull),
            ({"bool"}, 2, self.b_isnan),
            ({"bool"}, 4, self.b_isin),
            ({"bool"}, 3, self.b_between),
            ({"bool"}, 4, self.b_strpred),
            ({"bool"}, 1, self.b_hash_eq),
            ({"date", "datetime"}, 3, self.b_truncate),
        ]

    # ------------------------------------------------------------ typing

    def typed(self, e: E) -> E | None:
        """e with its dtype set, or None when Polars rejects it (or it is not flat)."""
        code = e.code()
        if POLARS_HANG.search(code):
            # Polars 2.1.0's collect_schema never returns on these (it loops, growing
            # memory): seen as qfuzz 1796525323:2136, whose worker timed out in the
            # generator and whose parent then hung shrinking it
            return None
        if code in self._types:
            dtype = self._types[code]
        else:
            try:
                expr = eval(code, self.ns)
                dtype = self.lf.select(expr.alias("__q")).collect_schema()["__q"]
            except BaseException as ex:  # noqa: BLE001 - Polars panics are BaseExceptions
                if isinstance(ex, KeyboardInterrupt):
                    raise
                dtype = None
            if dtype is not None and is_bad_dtype(dtype):
                dtype = None
            self._types[code] = dtype
        if dtype is None:
            return None
        e.dtype = dtype
        return e

    def k(self, e: E) -> str:
        assert e.dtype is not None
        return kind(e.dtype)

    # ------------------------------------------------------------ leaves

    def columns(self, kinds: set[str]) -> list[str]:
        return [n for n, t in self.schema.items() if kind(t) in kinds and n not in self.taint]

    def column(self, name: str) -> E:
        e = leaf(f"pl.col({name!r})", col=name, tag="")
        e.dtype = self.schema[name]
        return e

    def lit(self, kinds: set[str], *, py: bool = False) -> E | None:
        """A literal of one of kinds; py=True gives a bare Python scalar where one exists."""
        rng = self.rng
        k = rng.choice(sorted(kinds))
        text: str
        dyn = True
        if k == "int":
            v = rng.choice(INT_LITS)
            if rng.random() < 0.25 and not py:
                t = rng.choice(INTS)
                text, dyn = f"pl.lit({v}, dtype={_dt(t)})", False
            else:
                text = str(v)
        elif k == "float":
            text = py_code(rng.choice(FLOAT_LITS))
            if rng.random() < 0.2 and not py:
                text, dyn = f"pl.lit({text}, dtype=pl.Float32)", False
        elif k == "bool":
            text = rng.choice(["True", "False"])
        elif k == "str":
            text = repr(rng.choice(STRINGS))
        elif k == "date":
            text = rng.choice(DATE_LITS)
        elif k == "datetime":
            text = rng.choice(DATETIME_LITS)
            if rng.random() < 0.5:
                text, dyn = f'pl.lit({text}, dtype=pl.Datetime("{rng.choice(UNITS)}"))', False
        elif k == "duration":
            if rng.random() < 0.5:
                d, h = rng.choice([0, 1, -2]), rng.choice([0, 3, -1])
                text, dyn = f'pl.duration(days={d}, hours={h}, time_unit="{rng.choice(UNITS)}")', False
            else:
                text = rng.choice(TIMEDELTA_LITS)
        else:
            return None
        if py and dyn:
            return self.typed_lit(leaf(text, scalar=True, tag="pylit"), text)
        if dyn:
            text = f"pl.lit({text})"
        return self.typed(leaf(text, scalar=True, tag="lit"))

    def typed_lit(self, e: E, text: str) -> E | None:
        """A bare Python scalar: typed as pl.lit(text)."""
        probe = self.typed(leaf(f"pl.lit({text})"))
        if probe is None:
            return None
        e.dtype = probe.dtype
        return e

    def null_lit(self, kinds: set[str]) -> E | None:
        types = [t for t in ALL_TYPES if kind(t) in kinds]
        if not types or self.rng.random() < 0.1:
            return self.typed(leaf("pl.lit(None)", scalar=True, tag="lit:null"))
        t = self.rng.choice(types)
        return self.typed(leaf(f"pl.lit(None, dtype={_dt(t)})", scalar=True, tag=f"lit:null[{short(t)}]"))

    def leaf(self, kinds: set[str]) -> E:
        rng = self.rng
        for _ in range(6):
            r = rng.random()
            e: E | None
            if self.mode == "agg":
                if r < 0.85:
                    e = self.aggregation(rng.randint(0, 2), kinds)
                elif r < 0.92 and "int" in kinds:
                    e = self.typed(E("pl.len()", tag="len", scalar=True, is_agg=True))
                else:
                    e = self.lit(kinds)
            else:
                cols = self.columns(kinds)
                if r < 0.78 and cols:
                    e = self.column(rng.choice(cols))
                elif r < 0.88:
                    e = self.lit(kinds)
                elif r < 0.91:
                    e = self.null_lit(kinds)
                elif r < 0.97 and self.windows:
                    e = self.in_mode("agg", lambda: self.aggregation(rng.randint(0, 2), kinds))
                    if e is not None:
                        e = E("{0}", [e], tag="agg-broadcast", scalar=True, dtype=e.dtype)
                elif "int" in kinds and self.windows:
                    e = self.typed(E("pl.len()", tag="len", scalar=True, is_agg=True))
                else:
                    e = None
            if e is not None and self.k(e) in kinds | {"null"}:
                return e
        # nothing of those kinds here: a typed literal always exists
        for k in sorted(kinds - {"null"}) or ["null"]:
            if k == "null":
                e = self.typed(leaf("pl.lit(None)", scalar=True, tag="lit:null"))
                assert e is not None
                return e
            e = self.lit({k})
            if e is not None:
                return e
        raise AssertionError(f"no literal of {kinds}")

    def in_mode(self, mode: str, f: Callable[[], E | None]) -> E | None:
        old = self.mode
        self.mode = mode
        try:
            return f()
        finally:
            self.mode = old

    # --------------------------------------------------------- compound

    def expr(self, d: int, kinds: set[str] | None = None, top: bool = False) -> E:
        """An expression of depth at most d whose kind is in kinds."""
        kinds = set(kinds or ANY)
        if d <= 0 or self.rng.random() < 0.2:
            return self.leaf(kinds)
        options = [(w, f) for ks, w, f in self.builders if ks & kinds]
        for _ in range(5):
            f = _weighted(self.rng, options)
            e = f(d, kinds, top)
            if e is None:
                continue
            e = self.typed(e)
            if e is not None and self.k(e) in kinds | {"null"}:
                e.scalar = e.scalar or (bool(e.kids) and all(k.scalar for k in e.kids) and "over" not in e.tag)
                return e
        return self.leaf(kinds)

    def sub(self, d: int, kinds: set[str]) -> E:
        return self.expr(d - 1, kinds)

    def safe(self, e: E) -> bool:
        """May a fragile node read e (no float-summation value in it)?"""
        return not (e.any_taint() or e.cols() & self.taint)

    # ---------------------------------------------------------- builders

    def b_arith(self, d: int, kinds: set[str], top: bool) -> E | None:
        rng = self.rng
        op = rng.choice(["+", "-", "*", "/", "//", "%", "+", "-", "*"])
        temporal = kinds & TEMPORAL
        if temporal and (not kinds & NUM or rng.random() < 0.4):
            out = rng.choice(sorted(temporal))
            if out == "duration":
                a_k, b_k, op = rng.choice([("datetime", "datetime", "-"), ("date", "date", "-"),
                                           ("duration", "duration", rng.choice("+-")),
                                           ("duration", "int", "*"), ("duration", "int", "//")])
            else:
                a_k, b_k, op = out, "duration", rng.choice("+-")
            a, b = self.sub(d, {a_k}), self.sub(d, {b_k})
        else:
            a = self.sub(d, NUM | ({"bool"} if rng.random() < 0.05 else set()))
            r = rng.random()
            if r < 0.4:
                b = self.lit(NUM, py=True) or self.sub(d, NUM)
            else:
                b = self.sub(d, NUM)
            if rng.random() < 0.2 and b.scalar and not b.kids and b.col is None:
                a, b = b, a  # a literal as the first operand (issue 15, class 3)
        frag = op in ("//", "%") and not (self.safe(a) and self.safe(b))
        if frag:
            return None
        return E("({0} " + op + " {1})", [a, b], tag=f"arith:{op}:%0,%1", fragile=op in ("//", "%"))

    def b_neg_abs(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, kinds & {"int", "float", "duration"} or NUM)
        if a.dtype is not None and a.dtype.is_unsigned_integer() and self.rng.random() < 0.8:
            return None  # Polars refuses -u; sometimes is enough
        if self.rng.random() < 0.5:
            return E("(-{0})", [a], tag=f"neg:%0")
        return E("{0}.abs()", [a], tag=f"abs:%0")

    def b_round(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, NUM)
        if not self.safe(a):
            return None
        f = self.rng.choice(["round", "floor", "ceil"])
        if f == "round":
            n = self.rng.choice([0, 1, 2, -1])
            return E("{0}.round(" + str(n) + ")", [a], tag=f"round:%0", fragile=True)
        return E("{0}." + f + "()", [a], tag=f"{f}:%0", fragile=True)

    def b_math(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, NUM)
        f = self.rng.choice(["sqrt()", "log()", "log(2)", "exp()", "pow(2)", "pow(0.5)", "pow({1})", "** 2",
                             "log10()", "sqrt()", "pow(0.5)", "exp()"] + (["log1p()"] if self.rng.random() < 0.2 else []))
        if f == "pow({1})":
            b = self.sub(d, NUM)
            return E("{0}.pow({1})", [a, b], tag=f"pow:%0,%1")
        if f == "** 2":
            return E("({0} ** 2)", [a], tag=f"pow2:%0")
        return E("{0}." + f, [a], tag=f"{f.split('(')[0]}{'(0.5)' if f == 'pow(0.5)' else ''}:%0")

    def b_clip(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, kinds & (NUM | {"date", "datetime", "duration"}))
        if self.k(a) in NUM:
            pool = [-5, 0, 3, 1.5, -1000, 300, 2**40, None]
            lo, hi = self.rng.choice(pool), self.rng.choice(pool)
            if lo is None and hi is None:
                hi = 3
            return E("{0}.clip(" + f"{lo!r}, {hi!r}" + ")", [a], tag=f"clip:%0")
        lo_e = self.lit({self.k(a)})
        if lo_e is None:
            return None
        return E("{0}.clip({1})", [a, lo_e], tag=f"clip:%0")

    def b_horizontal(self, d: int, kinds: set[str], top: bool) -> E | None:
        """max/min/sum_horizontal of 1-3 expressions of one kind (numbers of any widths,
        or temporal or String values for max/min)."""
        rng = self.rng
        f = rng.choice(["max", "min", "sum"])
        pool = kinds & (NUM | {"bool"} if f == "sum" else ORDERED)
        if not pool:
            return None
        k = rng.choice(sorted(pool))
        same = NUM if k in NUM else {k}
        parts = [self.sub(d, same) for _ in range(rng.randint(1, 3))]
        if f == "sum" and any(self.k(p) in TEMPORAL | {"str"} for p in parts):
            return None
        body = ", ".join("{%d}" % i for i in range(len(parts)))
        e = E(f"pl.{f}_horizontal(" + body + ")", parts, tag=f"{f}_horizontal:%k0")
        # Polars adds floats in a rayon reduction whose tree depends on its thread
        # count (eager and lazy differ on one machine): a float-summation value
        e.taint = f == "sum" and any(self.k(p) == "float" for p in parts)
        return e

    def b_strlen(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, {"str"})
        f = self.rng.choice(["len_bytes", "len_chars"])
        return E("{0}.str." + f + "()", [a], tag=f"str.{f}")

    def b_dtfield(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, {"date", "datetime"})
        fields = ["year", "month", "day", "weekday", "ordinal_day"]
        if self.k(a) == "datetime" or self.rng.random() < 0.1:
            fields += ["hour", "minute", "second"]
        f = self.rng.choice(fields)
        return E("{0}.dt." + f + "()", [a], tag=f"dt.{f}:%0")

    def b_cast(self, d: int, kinds: set[str], top: bool) -> E | None:
        rng = self.rng
        targets = [t for t in ALL_TYPES if kind(t) in kinds]
        if not targets:
            return None
        t = rng.choice(targets)
        a = self.sub(d, ANY)
        src = self.k(a)
        if kind(t) != "float" and not self.safe(a):
            return None
        if src == "float" and kind(t) == "str" and not top:
            return None  # float -> text differs on purpose (docs/semantics.md); only as an output
        if polars_refuses_cast(src, kind(t)) and rng.random() < 0.85:
            return None  # a few are enough: ladle must refuse them too
        r = rng.random()
        mode, opts = ("strict", "") if r < 0.45 else ("nonstrict", ", strict=False") if r < 0.85 else ("wrap", ", wrap_numerical=True")
        e = E("{0}.cast(" + _dt(t) + opts + ")", [a], tag=f"cast:%0->{short(t)}:{mode}", fragile=kind(t) != "float")
        e.fstr = src == "float" and kind(t) == "str"
        return e

    def b_when(self, d: int, kinds: set[str], top: bool) -> E | None:
        rng = self.rng
        k = rng.choice(sorted(kinds))
        c = self.sub(d, {"bool"})
        a = self.sub(d, {k})
        r = rng.random()
        if r < 0.2:
            return E("pl.when({0}).then({1})", [c, a], tag="when")
        b = self.sub(d, {k})
        if r < 0.35:
            c2, a2 = self.sub(d, {"bool"}), self.sub(d, {k})
            return E("pl.when({0}).then({1}).when({2}).then({3}).otherwise({4})", [c, a, c2, a2, b], tag="when2")
        return E("pl.when({0}).then({1}).otherwise({2})", [c, a, b], tag="when")

    def b_fill_null(self, d: int, kinds: set[str], top: bool) -> E | None:
        k = self.rng.choice(sorted(kinds))
        a = self.sub(d, {k})
        if self.rng.random() < 0.2:
            n = self.null_lit({self.k(a)})
            if n is None:
                return None
            return E("{0}.fill_null({1})", [n, a], tag="fill_null:%0")
        b = self.lit({self.k(a)}) if self.rng.random() < 0.5 else self.sub(d, {k})
        if b is None:
            return None
        return E("{0}.fill_null({1})", [a, b], tag=f"fill_null:%0")

    def b_fill_nan(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, {"float"})
        b = self.lit(NUM | {"float"}) if self.rng.random() < 0.6 else self.sub(d, {"float"})
        if b is None:
            return None
        return E("{0}.fill_nan({1})", [a, b], tag="fill_nan")

    def b_rank(self, d: int, kinds: set[str], top: bool) -> E | None:
        if self.mode != "row" or not (self.windows or self.ranks_ok):
            return None
        rng = self.rng
        a = self.sub(d, ORDERED - {"bool"}) if rng.random() < 0.9 else (self.lit(NUM) or self.sub(d, NUM))
        if not self.safe(a):
            return None
        method = rng.choice(["average", "min", "max", "dense", "ordinal"])
        if method == "ordinal" and not self.order_ok:
            method = "dense"
        desc = rng.random() < 0.3
        e = E("{0}.rank(" + f"{method!r}, descending={desc}" + ")", [a], tag=f"rank:{method}", fragile=True)
        e.odep = method == "ordinal"
        if self.windows and rng.random() < 0.4:
            keys = self.keys()
            if keys is None:
                return None
            return E("{0}.over(" + keys + ")", [e], tag="over:rank")
        return e

    def b_running(self, d: int, kinds: set[str], top: bool) -> E | None:
        """cum_sum/cum_prod/cum_min/cum_max/cum_count (forward or reverse), shift(n)
        and diff(n): order-dependent, so only where the input's order is defined;
        over() by one or two keys now and then, as rank."""
        if self.mode != "row" or not (self.windows or self.ranks_ok) or not self.order_ok:
            return None
        rng = self.rng
        f = rng.choice(["cum_sum", "cum_prod", "cum_min", "cum_max", "cum_count", "shift", "shift", "diff"])
        if f == "shift":
            a = self.sub(d, kinds)
            n = str(rng.choice([1, 1, 2, -1, 0, 50]))
            fill = self.lit({self.k(a)}) if rng.random() < 0.3 else None
            if fill is not None:
                e = E("{0}.shift(" + n + ", fill_value={1})", [a, fill], tag="shift_and_fill:%k0")
            else:
                e = E("{0}.shift(" + n + ")", [a], tag="shift:%k0")
        elif f == "diff":
            a = self.sub(d, kinds & (NUM | TEMPORAL) or NUM)
            e = E("{0}.diff(" + str(rng.choice([1, 1, 2, -1])) + ")", [a], tag="diff:%k0")
        else:
            ins = {"int", "float", "bool"} if f in ("cum_sum", "cum_prod") else ORDERED - {"str", "bool"}
            a = self.sub(d, ins if f != "cum_count" else ANY)
            e = E("{0}." + f + f"(reverse={rng.random() < 0.3})", [a], tag=f"{f}:%k0")
        if not self.safe(a) and f in ("cum_min", "cum_max", "diff"):
            return None
        e.odep = True
        e.taint = f in ("cum_sum", "cum_prod") and self.k(a) == "float"
        if self.windows and rng.random() < 0.4:
            keys = self.keys()
            if keys is None:
                return None
            over = E("{0}.over(" + keys + ")", [e], tag="over:running")
            over.odep, over.taint = True, e.taint
            return over
        return e

    def keys(self) -> str | None:
        cols = self.columns(ANY)
        if not cols:
            return None
        ks = self.rng.sample(cols, min(len(cols), self.rng.choice([1, 1, 2])))
        return ", ".join(repr(k) for k in ks)

    def b_window(self, d: int, kinds: set[str], top: bool) -> E | None:
        if self.mode != "row" or not self.windows:
            return None
        keys = self.keys()
        if keys is None:
            return None
        self.windows = False
        self.in_window = True
        try:
            if self.rng.random() < 0.75:
                inner = self.in_mode("agg", lambda: self.expr(min(d - 1, 2), kinds))
            else:
                inner = self.expr(d - 1, kinds)
        finally:
            self.windows = True
            self.in_window = False
        if inner is None:
            return None
        return E("{0}.over(" + keys + ")", [inner], tag="over")

    def b_str(self, d: int, kinds: set[str], top: bool) -> E | None:
        rng = self.rng
        f = rng.choice(["upper", "lower", "slice", "slice", "strip", "plus", "plus", "concat_str", "cast"])
        if f == "cast":
            a = self.sub(d, {"int", "bool", "date", "datetime", "duration"})
            return E("{0}.cast(pl.String)", [a], tag=f"cast:%0->str:strict")
        if f == "concat_str":
            n = rng.randint(1, 3)
            parts = [self.sub(d, {"str"}) if rng.random() < 0.7 else self.sub(d, {"int", "bool"}) for _ in range(n)]
            if rng.random() < 0.3:
                p = self.lit({"str"})
                if p is not None:
                    parts.insert(0, p)
            sep = rng.choice(["", "-", "é"])
            ign = rng.random() < 0.15
            body = ", ".join("{%d}" % i for i in range(len(parts)))
            tag = "concat_str" + (":ignore_nulls" if ign else "")
            return E("pl.concat_str([" + body + "], separator=" + repr(sep) + (", ignore_nulls=True" if ign else "") + ")",
                     parts, tag=tag)
        a = self.sub(d, {"str"})
        if f == "upper":
            return E("{0}.str.to_uppercase()", [a], tag="str.to_uppercase")
        if f == "lower":
            return E("{0}.str.to_lowercase()", [a], tag="str.to_lowercase")
        if f == "slice":
            off = rng.choice([-5, -3, -2, -1, 0, 1, 2, 5])
            ln = rng.choice([None, 0, 1, 2, 10])
            return E("{0}.str.slice(" + f"{off}, {ln}" + ")", [a], tag="str.slice" + (":neg" if off < 0 else ""))
        if f == "strip":
            chars = rng.choice([None, " ", "ab", "é "])
            return E("{0}.str.strip_chars(" + esc(repr(chars)) + ")", [a], tag="str.strip_chars")
        b = self.lit({"str"}, py=True) if rng.random() < 0.5 else self.sub(d, {"str"})
        if b is None:
            return None
        if rng.random() < 0.3:
            a, b = b, a
        return E("({0} + {1})", [a, b], tag="str.+")

    def b_cmp(self, d: int, kinds: set[str], top: bool) -> E | None:
        rng = self.rng
        a = self.sub(d, ORDERED)
        if not self.safe(a):
            return None
        ka = self.k(a)
        compat = {"int": NUM, "float": NUM, "date": {"date", "datetime"}, "datetime": {"date", "datetime"},
                  "null": ORDERED}.get(ka, {ka})
        r = rng.random()
        if r < 0.45:
            b = self.lit(compat, py=rng.random() < 0.5)
        elif r < 0.5:
            b = self.null_lit({ka})
        else:
            b = self.sub(d, compat)
        if b is None or not self.safe(b):
            return None
        op = rng.choice(["==", "!=", "<", "<=", ">", ">=", "eq_missing", "ne_missing"])
        if rng.random() < 0.15 and b.scalar and not b.kids:
            a, b = b, a
        tag = "cmp:%0,%1"
        if op in ("eq_missing", "ne_missing"):
            if not hasattr(pl.Expr, op) or (a.scalar and not a.kids and a.fmt[:3] != "pl."):
                return None
            return E("{0}." + op + "({1})", [a, b], tag=f"{op}:%0,%1", fragile=True)
        return E("({0} " + op + " {1})", [a, b], tag=tag, fragile=True)

    def b_logic(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, {"bool"})
        op = self.rng.choice(["&", "|", "^", "~"])
        if op == "~":
            return E("(~{0})", [a], tag="not")
        b = self.sub(d, {"bool"}) if self.rng.random() < 0.8 else self.lit({"bool"}, py=True)
        if b is None:
            return None
        return E("({0} " + op + " {1})", [a, b], tag=f"logic:{op}")

    def b_isnull(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, ANY)
        f = self.rng.choice(["is_null", "is_not_null"])
        return E("{0}." + f + "()", [a], tag=f)

    def b_isnan(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, {"float"})
        f = self.rng.choice(["is_nan", "is_not_nan"])
        return E("{0}." + f + "()", [a], tag=f)

    def b_isin(self, d: int, kinds: set[str], top: bool) -> E | None:
        rng = self.rng
        a = self.sub(d, ANY - {"duration"})
        if not self.safe(a):
            return None
        vals = []
        for _ in range(rng.randint(0, 4)):
            v = self.lit({self.k(a)}, py=True)
            if v is not None and v.fmt[:3] != "pl.":
                vals.append(v.code())
        if rng.random() < 0.3:
            vals.append("None")
        ne = rng.random() < 0.1
        body = "[" + ", ".join(vals) + "]"
        return E("{0}.is_in(" + esc(body) + (", nulls_equal=True" if ne else "") + ")", [a],
                 tag="is_in" + (":nulls_equal" if ne else "") + (":null" if "None" in vals else ""), fragile=True)

    def b_between(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, ORDERED - {"bool"})
        if not self.safe(a):
            return None
        lo, hi = self.lit({self.k(a)}), self.lit({self.k(a)})
        if lo is None or hi is None:
            return None
        closed = self.rng.choice(["both", "left", "right", "none"])
        return E("{0}.is_between({1}, {2}, closed=" + repr(closed) + ")", [a, lo, hi], tag="is_between", fragile=True)

    def b_strpred(self, d: int, kinds: set[str], top: bool) -> E | None:
        rng = self.rng
        a = self.sub(d, {"str"})
        f = rng.choice(["starts_with", "ends_with", "contains", "contains_re"])
        if f == "contains_re":
            pat = rng.choice(REGEXES)
            return E("{0}.str.contains(" + esc(repr(pat)) + ")", [a], tag="str.contains:regex")
        pat = rng.choice(["a", "b", "é", "", " ", "ab", "日"])
        if f == "contains":
            return E("{0}.str.contains(" + esc(repr(pat)) + ", literal=True)", [a], tag="str.contains:literal")
        return E("{0}.str." + f + "(" + esc(repr(pat)) + ")", [a], tag=f"str.{f}")

    def b_hash_eq(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, ANY)
        cols = [n for n, t in self.schema.items() if t == a.dtype and n not in self.taint]
        if not cols or not self.safe(a):
            return None
        b = self.column(self.rng.choice(cols))
        seed = self.rng.choice([0, 1, 42])
        return E("({0}.hash(" + str(seed) + ") == {1}.hash(" + str(seed) + "))", [a, b], tag=f"hash_eq:%0", fragile=True)

    def b_truncate(self, d: int, kinds: set[str], top: bool) -> E | None:
        a = self.sub(d, kinds & {"date", "datetime"})
        every = self.rng.choice(["1d", "1mo"])
        return E("{0}.dt.truncate(" + repr(every) + ")", [a], tag=f"dt.truncate:{every}:%0", fragile=True)

    # ------------------------------------------------------- aggregations

    AGGS: list[tuple[str, set[str], int]] = [
        ("sum", NUM | {"bool", "duration"}, 6),
        ("mean", NUM | {"bool", "duration", "date", "datetime"}, 4),
        ("min", ORDERED, 5),
        ("max", ORDERED, 5),
        ("median", NUM | {"bool", "duration", "date", "datetime"}, 3),
        ("quantile", NUM, 3),
        ("n_unique", ANY, 3),
        ("first", ANY, 3),
        ("last", ANY, 3),
        ("std", NUM | {"bool"}, 2),
        ("var", NUM | {"bool"}, 2),
        ("count", ANY, 3),
        ("len", ANY, 2),
        ("null_count", ANY, 2),
        ("arg_min", NUM | {"str"}, 1),
        ("arg_max", NUM | {"str"}, 1),
        ("any", {"bool"}, 2),
        ("all", {"bool"}, 2),
        ("hash.n_unique", ANY, 1),
    ]

    def aggregation(self, d: int, kinds: set[str]) -> E | None:
        """An aggregation (one value per group) whose kind is in kinds."""
        rng = self.rng
        opts = [(w, (name, ins)) for name, ins, w in self.AGGS]
        for _ in range(4):
            name, ins = _weighted(rng, opts)
            if name in ("first", "last", "arg_min", "arg_max") and not self.order_ok:
                continue
            if rng.random() < 0.08:
                a = self.lit(ins)  # an aggregation of a literal (issue 15, class 5)
            else:
                old_w, old_r = self.windows, self.ranks_ok
                # windows under an aggregation of a select (a column of the rows, then
                # aggregated), not under a group_by's or another window's
                self.windows = old_w and not self.group_aggs and not self.in_window and rng.random() < 0.3
                self.ranks_ok = not self.group_aggs or self.in_window
                try:
                    a = self.in_mode("row", lambda: self.expr(d, ins))
                finally:
                    self.windows, self.ranks_ok = old_w, old_r
            if a is None or (name in ("n_unique", "hash.n_unique", "arg_min", "arg_max") and not self.safe(a)):
                continue
            if a.kids and not a.cols():
                continue  # an aggregation of a computed literal says little; plain literals are drawn above
            ka = self.k(a)
            if name == "quantile":
                q = rng.choice([0.0, 0.1, 0.25, 0.5, 0.75, 1.0])
                interp = rng.choice(["nearest", "higher", "lower", "midpoint", "linear"])
                e = E("{0}.quantile(" + f"{q}, interpolation={interp!r}" + ")", [a], tag=f"agg:quantile:{interp}")
            elif name in ("std", "var"):
                ddof = rng.choice([0, 1, 1])
                e = E("{0}." + name + f"(ddof={ddof})", [a], tag=f"agg:{name}")
            elif name == "hash.n_unique":
                e = E("{0}.hash(7).n_unique()", [a], tag="agg:hash.n_unique")
            else:
                e = E("{0}." + name + "()", [a], tag=f"agg:{name}")
            e.tag += ":%k0"
            e.is_agg = e.scalar = True
            e.odep = name in ("first", "last", "arg_min", "arg_max")
            e.taint = (name in ("sum",) and ka == "float") or (name in ("mean", "std", "var") and ka in NUM | {"bool"}) or (
                name == "mean" and ka in TEMPORAL)  # a float sum of ticks
            e.fragile = name in ("n_unique", "hash.n_unique", "arg_min", "arg_max")
            e = self.typed(e)
            if e is not None and self.k(e) in kinds:
                return e
        return None


REFUSED_CASTS = {
    ("str", "bool"), ("date", "bool"), ("datetime", "bool"), ("duration", "bool"), ("duration", "datetime"),
    ("datetime", "duration"), ("date", "duration"), ("duration", "date"), ("duration", "str"), ("str", "date"),
    ("str", "duration"), ("bool", "date"), ("bool", "datetime"), ("bool", "duration"),
}


def polars_refuses_cast(src: str, dst: str) -> bool:
    """Casts Polars 2.1 refuses when the query runs (not when it is planned)."""
    return (src, dst) in REFUSED_CASTS


def _dt(t: pl.DataType) -> str:
    from .values import dtype_code

    return dtype_code(t)


def _weighted(rng: random.Random, options: list[tuple[int, Any]]) -> Any:
    total = sum(w for w, _ in options)
    r = rng.uniform(0, total)
    for w, x in options:
        r -= w
        if r <= 0:
            return x
    return options[-1][1]


__all__ = ["ExprGen", "NUM", "ANY", "ORDERED", "TEMPORAL", "FLOATS"]
