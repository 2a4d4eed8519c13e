"""A test case: tables, a query over them, and the engine settings to run it with.

A case is data, not Polars objects: tables are lists of Python values, a query is a
source table and a list of operators whose arguments are expression trees (`E`).
Everything renders to Python source, so a case is its own standalone reproducer;
the worker and the shrinker rebuild Polars objects from that source. The order
analysis (`analyze`) says from the operators alone which part of the result's row
order Polars defines, which columns carry float-summation error, and whether the
result's content is determined at all (the generator never produces a case whose
content depends on an unspecified row order, and the shrinker rejects one).
"""

from __future__ import annotations

import copy
import re
import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterator

import polars as pl

from .values import dtype_code, list_code

HEADER = "import datetime as dt\n\nimport polars as pl\n"
# A table read from files (Case.files): written by Polars' or pyarrow's writer with the
# case's options, rows dealt in order over `parts` files, and scanned back. Each call
# writes new paths and unlinks the table's older ones (a result may still map them).
FILES_HELPER = (
    "def _files(df, name, kind, parts, **kw):\n"
    "    import os, tempfile, uuid\n"
    "    d = os.path.join(tempfile.gettempdir(), f'qfuzz-files-{os.getpid()}')\n"
    "    os.makedirs(d, exist_ok=True)\n"
    "    for old in os.listdir(d):\n"
    "        if old.startswith(name + '-'):\n"
    "            os.unlink(os.path.join(d, old))\n"
    "    tag, n, paths = uuid.uuid4().hex[:8], df.height, []\n"
    "    for i in range(parts):\n"
    "        p = os.path.join(d, f'{name}-{tag}-{i}.{kind}')\n"
    "        part = df.slice(n * i // parts, n * (i + 1) // parts - n * i // parts)\n"
    "        (part.write_parquet if kind == 'parquet' else part.write_csv)(p, **kw)\n"
    "        paths.append(p)\n"
    "    if kind == 'parquet':\n"
    "        return pl.scan_parquet(paths)\n"
    "    return pl.scan_csv(paths, schema=df.schema)\n"
)
STAGED_HELPER = (
    "def _plain(lf):\n"
    "    # one chunk: Polars exports a column it holds as one value as chunks of one row,\n"
    "    # which it reads back flagged sorted\n"
    "    df = lf.collect(engine=\"in-memory\")\n"
    "    return pl.from_arrow(df.to_arrow().combine_chunks(), schema=df.schema).lazy()\n"
)


# ------------------------------------------------------------------ tables


@dataclass
class Column:
    name: str
    dtype: pl.DataType
    values: list[Any]


@dataclass
class Table:
    name: str
    columns: list[Column]

    @property
    def height(self) -> int:
        return len(self.columns[0].values) if self.columns else 0

    def code(self) -> str:
        data = ", ".join(f"{c.name!r}: {list_code(c.values)}" for c in self.columns)
        schema = ", ".join(f"{c.name!r}: {dtype_code(c.dtype)}" for c in self.columns)
        return f"{self.name} = pl.DataFrame({{{data}}}, schema={{{schema}}})"


# ------------------------------------------------------------- expressions


@dataclass
class E:
    """An expression node: `fmt` with {0}, {1}, ... for the children's source.

    tag: the feature it exercises (for the classifier); dtype: Polars' type of the
    node in the frame it was generated for; scalar: one value (an aggregation or a
    literal); odep: its value depends on the input's row order (first, last,
    arg_min, rank ordinal, ...); taint: it carries float summation error (a float
    sum, a mean, std or var); fstr: a float -> String cast (whose text differs on
    purpose, docs/semantics.md); col: the column a leaf reads; fragile: a tiny
    change of a float input can change its value (comparisons, rounding, casts to
    integers), so it must not read a float-summation value.
    """

    fmt: str
    kids: list["E"] = field(default_factory=list)
    tag: str = ""
    dtype: pl.DataType | None = None
    scalar: bool = False
    odep: bool = False
    taint: bool = False
    fstr: bool = False
    col: str | None = None
    is_agg: bool = False
    fragile: bool = False  # its value is not continuous in its input (comparison, cast to int, ...)

    def code(self) -> str:
        return self.fmt.format(*(k.code() for k in self.kids))

    def walk(self) -> Iterator["E"]:
        yield self
        for k in self.kids:
            yield from k.walk()

    def cols(self) -> set[str]:
        return {n.col for n in self.walk() if n.col is not None}

    def one_value(self) -> bool:
        """Is this one value (a literal, an aggregation, pl.len(), or made of those)? Read
        from the tree as it is now: shrinking replaces nodes by their children."""
        if not self.kids:
            return self.scalar
        if self.is_agg:
            return True
        if self.tag.startswith("over") or "agg-broadcast" == self.tag:
            return self.tag == "agg-broadcast"
        return all(k.one_value() for k in self.kids)

    def tag_text(self) -> str:
        """The tag with the children's types filled in (%0: short type name of kid 0,
        %k0: its kind) and two markers found from the tree as it is now (so that they
        hold after shrinking): ':lit-first' when the first operand is one value (a
        literal, pl.len() or an aggregation) and another one is a column, ':lit' for an
        aggregation, rank or window of no column."""
        from .values import kind, short

        text = self.tag
        for i, k in enumerate(self.kids):
            if k.dtype is not None:
                text = text.replace(f"%k{i}", kind(k.dtype)).replace(f"%{i}", short(k.dtype))
        first = self.kids[0] if self.kids else None
        if first is not None and (first.one_value() or not first.cols()) and any(
            k.cols() and (not k.one_value() or not first.cols()) for k in self.kids[1:]
        ):
            text += ":lit-first"
        elif self.kids and not self.kids[0].cols() and (self.is_agg or text.startswith(("rank", "over"))):
            text += ":lit"
        return text

    def tags(self) -> set[str]:
        return {t for n in self.walk() if n.tag for t in [n.tag_text()]}

    def any_odep(self) -> bool:
        return any(n.odep for n in self.walk())

    def any_taint(self) -> bool:
        return any(n.taint for n in self.walk())


def esc(text: str) -> str:
    """Text made safe to sit inside an E.fmt."""
    return text.replace("{", "{{").replace("}", "}}")


def leaf(text: str, **kw: Any) -> E:
    return E(esc(text), **kw)


# -------------------------------------------------------------- operators


@dataclass
class Op:
    """One operator of a query's chain.

    kind: filter, select, with_columns, group_by, join, join_where, sort, unique,
    slice, concat, with_row_index, rename, drop, explode. The source is `head`, then the items
    joined by ", ", then `tail`; `{sub}` in head or tail stands for the other
    query's source (joins, concat). For concat, `head` is a format with {cur} and
    {sub}. `info` holds what the order analysis needs; `names` the output name of
    each item (select, with_columns, group_by aggregations).
    """

    kind: str
    head: str
    items: list[E] = field(default_factory=list)
    tail: str = ""
    sub: "Query | None" = None
    info: dict[str, Any] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    item_shrink: bool = False  # may the shrinker drop items?

    def apply(self, cur: str, staged: bool = False) -> str:
        sub = self.sub.code(staged) if self.sub is not None else ""
        if self.kind == "concat":
            return self.head.format(cur=cur, sub=sub)
        body = ", ".join(e.code() for e in self.items)
        return cur + "\n    " + self.head.replace("{sub}", sub) + body + self.tail.replace("{sub}", sub)

    def exprs(self) -> Iterator[E]:
        yield from self.items
        for e in self.info.get("exprs", []):
            yield e

    def scalar_select(self) -> bool:
        """A select whose every item is one value (its answer has one row)."""
        return self.kind == "select" and bool(self.items) and all(e.one_value() for e in self.items)

    def tags(self) -> set[str]:
        out = {self.info.get("tag", self.kind)}
        for e in self.exprs():
            out |= e.tags()
        if self.sub is not None:
            out |= self.sub.tags()
        return out


@dataclass
class Query:
    source: str  # table name
    ops: list[Op] = field(default_factory=list)

    def code(self, staged: bool = False) -> str:
        """The query's source; staged: each operator's input first collected by Polars
        and rebuilt from Arrow (`_plain`), so that no operator sees Polars' metadata of
        the one before it (sorted flags, a column held as one value) or is optimized
        together with it."""
        cur = f"{self.source}.lazy()"
        for op in self.ops:
            cur = op.apply(f"_plain({cur})" if staged else cur, staged)
        return cur

    def tags(self) -> set[str]:
        out: set[str] = set()
        for op in self.ops:
            out |= op.tags()
        return out

    def all(self) -> Iterator["Query"]:
        """This query and the other sides of its joins and concats, depth first."""
        yield self
        for op in self.ops:
            if op.sub is not None:
                yield from op.sub.all()

    def kinds(self) -> list[str]:
        """The operators' names for classes: their tag, and select:scalar for a select
        whose every item is one value."""
        out = []
        for op in self.ops:
            tag = op.info.get("tag", op.kind)
            if tag == "select" and op.scalar_select():
                tag = "select:scalar"
            out.append(tag)
        return out


@dataclass
class Case:
    """Tables, a query and the engine settings (threads, morsel_rows; None: default)."""

    tables: list[Table]
    query: Query
    threads: int = 2
    morsel_rows: int | None = None
    ident: str = ""  # "seed:index"
    # tables the query reads from files: name -> the arguments of _files after the frame
    # and its name (kind, parts, writer options), as source text
    files: dict[str, str] = field(default_factory=dict)

    def clone(self) -> "Case":
        return copy.deepcopy(self)

    def _sources(self, code: str) -> str:
        """The query's source text with each table read from files scanned instead."""
        if not self.files:
            return code
        return re.sub(r"\b(t\d+)\.lazy\(\)", lambda m: f"{m[1]}_files" if m[1] in self.files else m[0], code)

    def _tables_code(self) -> list[str]:
        lines = [t.code() for t in self.tables]
        if self.files:
            lines.append(FILES_HELPER)
            names = {t.name for t in self.tables}
            lines += [f"{n}_files = _files({n}, {n!r}, {a})" for n, a in sorted(self.files.items()) if n in names]
        return lines

    def setup_code(self) -> str:
        """Source that defines t0..tN and q (the LazyFrame)."""
        lines = [HEADER] + self._tables_code()
        lines.append(f"q = (\n    {self._sources(self.query.code())}\n)")
        return "\n".join(lines) + "\n"

    def staged_code(self) -> str:
        """Source that defines t0..tN and q staged (Query.code(staged=True)): run on
        Polars, it gives Polars' answer for the same data without its metadata."""
        lines = [HEADER, STAGED_HELPER] + self._tables_code()
        lines.append(f"q = (\n    {self._sources(self.query.code(staged=True))}\n)")
        return "\n".join(lines) + "\n"

    def prefixes_code(self) -> str:
        """Source that defines `chains`: for the main query and each other side of its
        joins and concats, (its prefixes: its source, then after each operator; each
        operator's kind, "select:scalar" for a select of single values only; for each
        select or with_columns, each of its items selected alone on its input, as
        Polars' optimizer may leave it when the other items are not read): to find the
        operator where an engine's height goes wrong."""
        lines = [HEADER] + self._tables_code()
        chains = []
        for q in self.query.all():
            prefixes = [self._sources(Query(q.source, q.ops[:i]).code()) for i in range(len(q.ops) + 1)]
            kinds = [op.kind + (":scalar" if op.scalar_select() else "") for op in q.ops]
            probes = [
                [f"{prefixes[i]}\n    .select({self._sources(e.code())})" for e in op.items] if op.kind in ("select", "with_columns") else []
                for i, op in enumerate(q.ops)
            ]
            text = "    ([\n" + "".join(f"        (\n    {c}\n        ),\n" for c in prefixes) + f"    ], {kinds!r}, [\n"
            text += "".join("        [" + "".join(f"(\n    {c}\n        ), " for c in ps) + "],\n" for ps in probes)
            chains.append(text + "    ]),\n")
        lines.append("chains = [\n" + "".join(chains) + "]")
        return "\n".join(lines) + "\n"

    def engine_code(self) -> str:
        morsel = "" if self.morsel_rows is None else f", morsel_rows={self.morsel_rows}"
        return f"ladle.Engine(raise_on_fail=True, threads={self.threads}{morsel})"

    def namespace(self) -> dict[str, Any]:
        ns: dict[str, Any] = {"pl": pl, "dt": dt}
        exec(compile(HEADER + "\n".join(t.code() for t in self.tables), "<tables>", "exec"), ns)
        return ns


def retype(case: Case) -> None:
    """Sets every expression node's dtype to what Polars resolves in the case as it
    is now (after shrinking, a node's operands may have other types)."""
    ns = case.namespace()
    for q in case.query.all():
        cur = f"{q.source}.lazy()"
        for op in q.ops:
            try:
                lf = lazy(cur, ns)
            except Exception:  # noqa: BLE001
                break
            for item in op.items:
                for node in item.walk():
                    code = node.code() if node.tag != "pylit" else f"pl.lit({node.code()})"
                    try:
                        node.dtype = lf.select(eval(code, ns).alias("__q")).collect_schema()["__q"]
                    except BaseException as e:  # noqa: BLE001 - Polars panics are BaseExceptions
                        if isinstance(e, KeyboardInterrupt):
                            raise
            cur = op.apply(cur)


# ------------------------------------------------------------ order analysis

FULL, PREFIX, NONE = "full", "prefix", "none"


@dataclass
class State:
    """What Polars defines about a frame: `order` is FULL (every row's position),
    PREFIX (the sequence of the columns in `prefix`) or NONE; `det` whether the
    content is determined; `taint` columns carrying float summation error; `fstr`
    String columns cast from floats; `names` the columns in order."""

    order: str
    names: list[str]
    prefix: list[str] = field(default_factory=list)
    det: bool = True
    taint: set[str] = field(default_factory=set)
    fstr: set[str] = field(default_factory=set)
    why: str = ""  # why det is False

    def undet(self, why: str) -> None:
        if self.det:
            self.det, self.why = False, why


def lazy(code: str, ns: dict[str, Any]) -> pl.LazyFrame:
    """The LazyFrame a query's source (possibly several lines) builds."""
    return eval("(\n" + code + "\n)", ns)  # type: ignore[no-any-return]


def frame_schema(code: str, ns: dict[str, Any]) -> pl.Schema:
    return lazy(code, ns).collect_schema()


def analyze(q: Query, ns: dict[str, Any]) -> State:
    """The order state after each operator of q (raises when Polars rejects the plan)."""
    cur = f"{q.source}.lazy()"
    st = State(FULL, list(frame_schema(cur, ns).names()))
    for op in q.ops:
        nxt = op.apply(cur)
        names = list(frame_schema(nxt, ns).names())
        st = step(st, op, names, ns, cur)
        cur = nxt
    return st


def _item_taint(e: E, taint: set[str]) -> bool:
    return e.any_taint() or bool(e.cols() & taint)


def step(st: State, op: Op, names: list[str], ns: dict[str, Any], cur: str) -> State:
    """The state after op, given the state before it and the output column names."""
    k = op.kind
    new = State(st.order, names, list(st.prefix), st.det, set(st.taint), set(st.fstr), st.why)
    full = st.order == FULL
    odep_items = any(e.any_odep() for e in op.exprs())
    if odep_items and not full:
        new.undet(f"{k} with an order-dependent expression over an input of order {st.order}")
    for e in op.exprs():
        for n in e.walk():
            if n.fragile and (n.any_taint() or n.cols() & st.taint):
                new.undet(f"{k}: {n.tag} reads a float-summation value")
    if k in ("select", "with_columns"):
        keep: dict[str, str] = {}  # output name -> input column it passes through unchanged
        out_taint: set[str] = set() if k == "select" else {c for c in st.taint if c in names}
        out_fstr: set[str] = set() if k == "select" else {c for c in st.fstr if c in names}
        for e, name in zip(op.items, op.names):
            if e.col is not None and not e.kids and e.fmt.startswith("pl.col("):
                keep[name] = e.col
                if e.col in st.taint:
                    out_taint.add(name)
                if e.col in st.fstr:
                    out_fstr.add(name)
            else:
                out_taint.discard(name)
                out_fstr.discard(name)
                if _item_taint(e, st.taint):
                    out_taint.add(name)
                if e.fstr:
                    out_fstr.add(name)
        new.taint, new.fstr = out_taint, out_fstr
        if op.items and all(e.one_value() for e in op.items) and k == "select":
            new.order, new.prefix = FULL, []
        elif new.order == PREFIX:
            if k == "select":
                inv = {v: n for n, v in keep.items()}
                new.prefix = [inv[c] for c in st.prefix if c in inv]
            else:
                new.prefix = [c for c in st.prefix if c not in op.names or keep.get(c) == c]
        # fragile reads (comparisons of a float sum) were refused when generated
    elif k == "group_by":
        keys: list[str] = op.info["keys"]
        if set(keys) & st.taint:
            new.undet("group key carries float-summation error")
        new.order = FULL if (op.info["maintain_order"] and full) else NONE
        new.prefix = []
        new.taint = {n for e, n in zip(op.items, op.names) if _item_taint(e, st.taint)}
        new.fstr = {n for e, n in zip(op.items, op.names) if e.fstr}
    elif k in ("join", "join_where"):
        assert op.sub is not None
        rst = analyze(op.sub, ns)
        if not rst.det:
            new.undet("join input: " + rst.why)
        left_names = st.names
        suffix = op.info.get("suffix", "_right")
        if set(op.info.get("keys", [])) & st.taint or set(op.info.get("rkeys", [])) & rst.taint:
            new.undet("join key carries float-summation error")
        new.taint = {c for c in st.taint if c in names} | {
            n for c in rst.taint for n in (c, c + suffix) if n in names and (n not in left_names or n == c + suffix)
        }
        new.fstr = {c for c in st.fstr if c in names} | {
            n for c in rst.fstr for n in (c, c + suffix) if n in names and (n not in left_names or n == c + suffix)
        }
        how, mo = op.info.get("how", "inner"), op.info.get("maintain_order")
        both_full = full and rst.order == FULL
        if k == "join_where" or mo in (None, "none"):
            new.order, new.prefix = NONE, []
        elif mo in ("left_right", "right_left") and both_full:
            new.order, new.prefix = FULL, []
        elif mo == "left" and full and how in ("semi", "anti"):
            new.order, new.prefix = FULL, []
        elif mo == "left" and full and how in ("inner", "left", "cross"):
            new.order, new.prefix = PREFIX, [c for c in left_names if c in names]
        elif mo == "right" and rst.order == FULL and how in ("inner", "right", "cross"):
            right_cols = [c for c in names if c not in left_names]
            new.order, new.prefix = (PREFIX, right_cols) if right_cols else (NONE, [])
        else:
            new.order, new.prefix = NONE, []
    elif k == "sort":
        by: list[str] = op.info["by"]
        if set(by) >= set(names) or (op.info["maintain_order"] and full):
            new.order, new.prefix = FULL, []
        else:
            new.order, new.prefix = PREFIX, list(by)
    elif k == "unique":
        subset = op.info["subset"]
        keep_ = op.info["keep"]
        whole = subset is None or set(subset) >= set(st.names)
        if not whole and keep_ == "any":
            new.undet("unique(keep='any') on a subset picks an unspecified row")
        if not whole and keep_ in ("first", "last") and not full:
            new.undet(f"unique(keep={keep_!r}) over an input of order {st.order}")
        if set(subset or st.names) & st.taint:
            new.undet("unique over a float-summation column")
        new.order = FULL if (op.info["maintain_order"] and full) else NONE
        new.prefix = []
    elif k == "slice":
        if not full:
            new.undet(f"{op.info.get('tag')} over an input of order {st.order}")
    elif k == "concat":
        assert op.sub is not None
        rst = analyze(op.sub, ns)
        if not rst.det:
            new.undet("concat input: " + rst.why)
        if op.info["how"] == "horizontal":
            if not (full and rst.order == FULL):
                new.undet("horizontal concat of inputs without a defined order")
            new.order = FULL if (full and rst.order == FULL) else NONE
            new.taint = {c for c in names if c in st.taint or c in rst.taint}
            new.fstr = {c for c in names if c in st.fstr or c in rst.fstr}
        else:
            new.order = FULL if (full and rst.order == FULL) else NONE
            new.prefix = []
            new.taint = st.taint | rst.taint
            new.fstr = st.fstr | rst.fstr
    elif k == "explode":
        # rows repeated in their order: the order state stands (a prefix's
        # columns are the same values on the repeated rows)
        new.prefix = [c for c in st.prefix if c in names]
    elif k == "with_row_index":
        if not full:
            new.undet(f"with_row_index over an input of order {st.order}")
    elif k == "rename":
        mapping: dict[str, str] = op.info["mapping"]
        new.prefix = [mapping.get(c, c) for c in st.prefix]
        new.taint = {mapping.get(c, c) for c in st.taint}
        new.fstr = {mapping.get(c, c) for c in st.fstr}
    elif k == "drop":
        new.prefix = [c for c in st.prefix if c in names]
        new.taint = {c for c in st.taint if c in names}
        new.fstr = {c for c in st.fstr if c in names}
    if new.order == PREFIX and not new.prefix:
        new.order = NONE
    return new
