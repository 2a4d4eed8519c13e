"""Random cases: 2-4 tables sharing key columns, and a query of 1-5 operators.

`generate(seed, index)` is deterministic: the same (seed, index) gives the same
case on any machine (random.Random seeded with the string "seed:index"; Polars is
only asked for schemas). Each operator is drawn, checked with Polars' schema
resolution and with the order analysis (case.analyze): an operator whose result
would depend on an order Polars leaves open (a head after a join, first() after a
group_by) gets a sort by every column in front of it first, so every case has one
right answer. About 2% of cases keep an operator Polars rejects while planning
(then ladle must raise too).
"""

from __future__ import annotations

import os
import random
from typing import Any

import polars as pl

from .case import FULL, Case, Column, E, Op, Query, State, Table, analyze, esc, lazy, step
from .exprs import ANY, ExprGen, _weighted
from .values import ALL_TYPES, kind, short, values

KEY_TYPES: list[pl.DataType] = [
    pl.Int64(), pl.Int32(), pl.UInt8(), pl.Int16(), pl.String(), pl.String(), pl.Date(), pl.Boolean(),
    pl.Float64(), pl.Datetime("us"), pl.UInt64(),
]
OTHER_NAMES = list("abcdefgh")


def gen_tables(rng: random.Random) -> list[Table]:
    n_tables = rng.randint(2, 4)
    key = rng.choice(KEY_TYPES)
    key2 = rng.choice(KEY_TYPES)
    shared = {name: rng.choice(ALL_TYPES) for name in OTHER_NAMES}
    float_mode = "extreme" if rng.random() < 0.15 else "normal"
    tables = []
    for ti in range(n_tables):
        r = rng.random()
        n = 0 if r < 0.06 else 1 if r < 0.12 else rng.randint(2, 12) if r < 0.6 else rng.randint(13, 40) if r < 0.93 else rng.randint(41, 250)
        cols = []

        def add(name: str, dtype: pl.DataType, small: bool) -> None:
            nf = rng.choice([0.0, 0.0, 0.1, 0.1, 0.3]) if rng.random() > 0.05 else 1.0
            cols.append(Column(name, dtype, values(rng, dtype, n, small=small, null_frac=nf, float_mode=float_mode)))

        add("k", key if rng.random() > 0.08 else rng.choice(KEY_TYPES), True)
        if rng.random() < 0.6:
            add("k2", key2, True)
        for name in sorted(rng.sample(OTHER_NAMES, rng.randint(2, 5))):
            dtype = shared[name] if rng.random() < 0.6 else rng.choice(ALL_TYPES)
            add(name, dtype, rng.random() < 0.25)
        rng.shuffle(cols)
        tables.append(Table(f"t{ti}", cols))
    return tables


class QueryGen:
    """Draws operator chains over the tables of one case."""

    def __init__(self, rng: random.Random, tables: list[Table], ns: dict[str, Any]) -> None:
        self.rng = rng
        self.tables = tables
        self.ns = ns
        self.fresh = 0
        self.rejects: list[str] = []  # why drawn operators were thrown away (for tuning)

    def name(self) -> str:
        self.fresh += 1
        return f"x{self.fresh}"

    # ------------------------------------------------------------ chains

    MAIN: list[tuple[int, str]] = [
        (14, "filter"), (14, "with_columns"), (11, "select"), (6, "select_scalar"), (14, "group_by"), (14, "join"),
        (3, "join_where"), (8, "sort"), (6, "unique"), (7, "slice"), (4, "concat"), (2, "with_row_index"),
        (2, "rename"), (2, "drop"), (3, "split_explode"), (3, "implode_explode"),
    ]
    SUB: list[tuple[int, str]] = [(4, "filter"), (3, "with_columns"), (2, "select"), (2, "unique"), (3, "group_by")]

    def query(self, source: str, n_ops: int, kinds: list[tuple[int, str]], *, allow_invalid: bool) -> Query:
        q = Query(source)
        st = analyze(q, self.ns)
        for _ in range(n_ops):
            for _attempt in range(8):
                kind_ = _weighted(self.rng, kinds)
                ops = self.op(kind_, q, st)
                if not ops:
                    continue
                cand = Query(source, q.ops + ops)
                try:
                    new = analyze_from(q, st, ops, self.ns)
                except BaseException as ex:  # noqa: BLE001 - Polars rejects the plan
                    if isinstance(ex, KeyboardInterrupt):
                        raise
                    if allow_invalid and self.rng.random() < 0.03:
                        return cand  # a plan Polars rejects: ladle must raise too
                    self.rejects.append(f"{kind_}: {type(ex).__name__}: {str(ex)[:150]}")
                    continue
                if not new.det:
                    self.rejects.append(f"{kind_}: undetermined: {new.why}")
                    continue
                q, st = cand, new
                break
        return q

    def lf(self, q: Query) -> pl.LazyFrame:
        return lazy(q.code(), self.ns)

    def exprgen(self, q: Query, st: State) -> ExprGen:
        return ExprGen(self.rng, self.lf(q), self.ns, order_ok=st.order == FULL, taint=set(st.taint))

    def canonical_sort(self, st: State) -> Op:
        """A sort by every column (a few first in random order, float-summation ones
        last), after which every row's position is defined."""
        rng = self.rng
        names = [n for n in st.names if n not in st.taint]
        rng.shuffle(names)
        by = names + sorted(st.taint & set(st.names))
        desc = rng.random() < 0.3
        nl = rng.random() < 0.5
        return Op("sort", f".sort({by!r}, descending={desc}, nulls_last={nl})",
                  info={"by": by, "maintain_order": False, "tag": "sort(all)"})

    def ordered(self, st: State, op: Op) -> list[Op]:
        return [op] if st.order == FULL else [self.canonical_sort(st), op]

    def op(self, k: str, q: Query, st: State) -> list[Op] | None:
        return getattr(self, "op_" + k)(q, st)  # type: ignore[no-any-return]

    # ---------------------------------------------------------- operators

    def items(self, g: ExprGen, n: int, mode: str, *, overwrite: bool, st: State) -> tuple[list[E], list[str]]:
        rng = self.rng
        items: list[E] = []
        names: list[str] = []
        for _ in range(n):
            if mode == "row" and rng.random() < 0.2 and st.names:
                c = rng.choice(st.names)
                if c not in names:
                    items.append(E(esc(f"pl.col({c!r})"), col=c))
                    names.append(c)
                continue
            if mode == "agg":
                e = g.in_mode("agg", lambda: g.expr(rng.randint(0, 2), ANY, top=True))
            else:
                e = g.expr(rng.randint(0, 3), ANY, top=True)
            if e is None:
                continue
            name = self.name()
            if overwrite and rng.random() < 0.2 and st.names:
                name = rng.choice(st.names)
            if name in names:
                continue
            items.append(E("{0}.alias(" + repr(name) + ")", [e], dtype=e.dtype, scalar=e.scalar, fstr=e.fstr))
            names.append(name)
            if mode == "agg" and rng.random() < 0.12:
                # the same aggregation twice under two names (issue 15, class 4)
                name2 = self.name()
                items.append(E("{0}.alias(" + repr(name2) + ")", [e], dtype=e.dtype, scalar=e.scalar, fstr=e.fstr))
                names.append(name2)
        return items, names

    def op_filter(self, q: Query, st: State) -> list[Op] | None:
        g = self.exprgen(q, st)
        preds = [g.expr(self.rng.randint(1, 3), {"bool"}) for _ in range(1 if self.rng.random() < 0.85 else 2)]
        return [Op("filter", ".filter(", preds, ")", item_shrink=True)]

    def op_with_columns(self, q: Query, st: State) -> list[Op] | None:
        g = self.exprgen(q, st)
        items, names = self.items(g, self.rng.randint(1, 3), "row", overwrite=True, st=st)
        if not items:
            return None
        return [Op("with_columns", ".with_columns(", items, ")", names=names, item_shrink=True)]

    def op_select(self, q: Query, st: State) -> list[Op] | None:
        g = self.exprgen(q, st)
        items, names = self.items(g, self.rng.randint(1, 4), "row", overwrite=False, st=st)
        if not items:
            return None
        return [Op("select", ".select(", items, ")", names=names, item_shrink=True)]

    def op_select_scalar(self, q: Query, st: State) -> list[Op] | None:
        rng = self.rng
        if rng.random() < 0.25:
            # pl.len() over an input projected to no column (issue 15, class 2)
            items = [E("pl.len()", tag="len", scalar=True)]
            names = ["len"]
            if rng.random() < 0.5 and st.names:
                c = rng.choice(st.names)
                items.append(E("{0}.len().alias('x_len')", [E(esc(f"pl.col({c!r})"), col=c)], tag="agg:len", scalar=True))
                names.append("x_len")
            return [Op("select", ".select(", items, ")", names=names, item_shrink=True, info={"tag": "select:len"})]
        g = self.exprgen(q, st)
        items, names = self.items(g, rng.randint(1, 3), "agg", overwrite=False, st=st)
        if not items:
            return None
        return [Op("select", ".select(", items, ")", names=names, item_shrink=True, info={"tag": "select:scalar"})]

    def op_group_by(self, q: Query, st: State) -> list[Op] | None:
        rng = self.rng
        cands = [n for n in st.names if n not in st.taint]
        if not cands:
            return None
        pref = [n for n in cands if n.startswith("k")]
        keys = rng.sample(cands, min(len(cands), rng.choice([1, 1, 2, 3])))
        if pref and rng.random() < 0.5:
            keys = [rng.choice(pref)] + [k for k in keys if k not in pref][:1]
        g = self.exprgen(q, st)
        g.group_aggs = True  # rank() under an aggregation would give a list per group here
        # agg expressions must not read the keys' names as outputs: names are fresh
        items, names = self.items(g, rng.randint(1, 4), "agg", overwrite=False, st=st)
        if not items:
            items, names = [E("pl.len()", tag="len", scalar=True)], ["len"]
        mo = rng.random() < 0.5
        return [Op("group_by", f".group_by({keys!r}, maintain_order={mo}).agg(", items, ")", names=names,
                   item_shrink=True, info={"keys": keys, "maintain_order": mo, "tag": f"group_by(mo={mo})"})]

    def sub_query(self, kinds: list[tuple[int, str]], n_max: int) -> Query:
        src = self.rng.choice(self.tables).name
        return self.query(src, self.rng.randint(0, n_max), kinds, allow_invalid=False)

    def op_join(self, q: Query, st: State) -> list[Op] | None:
        rng = self.rng
        sub = self.sub_query(self.SUB, 2)
        try:
            rschema = dict(self.lf(sub).collect_schema())
            rst = analyze(sub, self.ns)
        except Exception:
            return None
        lschema = dict(self.lf(q).collect_schema())
        how = rng.choice(["inner", "inner", "left", "left", "right", "full", "semi", "anti", "cross"])
        pairs = [(n, n) for n, t in lschema.items() if n in rschema and rschema[n] == t and n not in st.taint and n not in rst.taint]
        args = ""
        lkeys: list[str] = []
        rkeys: list[str] = []
        if how != "cross":
            if not pairs or rng.random() < 0.15:
                pairs = [(a, b) for a, ta in lschema.items() for b, tb in rschema.items()
                         if ta == tb and a not in st.taint and b not in rst.taint]
                if not pairs:
                    how = "cross"
                else:
                    chosen = rng.sample(pairs, min(len(pairs), rng.choice([1, 1, 2])))
                    lkeys, rkeys = [a for a, _ in chosen], [b for _, b in chosen]
                    args = f", left_on={lkeys!r}, right_on={rkeys!r}"
            else:
                chosen = rng.sample(pairs, min(len(pairs), rng.choice([1, 1, 2])))
                lkeys = rkeys = [a for a, _ in chosen]
                args = f", on={lkeys!r}"
        args += f", how={how!r}"
        if how != "cross" and rng.random() < 0.3:
            args += ", nulls_equal=True"
        suffix = "_right"
        if rng.random() < 0.25:
            suffix = rng.choice(["_r", "_x", ""])
            args += f", suffix={suffix!r}"
        if how not in ("semi", "anti", "cross") and rng.random() < 0.3:
            args += f", coalesce={rng.random() < 0.5}"
        mo = rng.choice([None, None, "none", "left", "right", "left_right", "right_left"])
        if mo is not None:
            args += f", maintain_order={mo!r}"
        op = Op("join", ".join({sub}" + args + ")", sub=sub,
                info={"how": how, "maintain_order": mo, "suffix": suffix, "keys": lkeys, "rkeys": rkeys,
                      "tag": f"join:{how}" + (f":{mo}" if mo and mo != "none" else "")})
        return [op]

    def op_join_where(self, q: Query, st: State) -> list[Op] | None:
        rng = self.rng
        sub = self.sub_query(self.SUB, 1)
        try:
            rschema = dict(self.lf(sub).collect_schema())
        except Exception:
            return None
        lschema = dict(self.lf(q).collect_schema())
        same = rng.random() < 0.8  # keys of different types get a cast, which ladle does not join on
        pairs = [(a, b) for a, ta in lschema.items() for b, tb in rschema.items()
                 if kind(ta) == kind(tb) and kind(ta) in ("int", "float", "date", "datetime", "str") and a not in st.taint
                 and (ta == tb or not same)]
        if not pairs:
            return None
        preds = []
        for a, b in rng.sample(pairs, min(len(pairs), rng.choice([1, 1, 2]))):
            bname = b + "_right" if b in lschema else b
            preds.append(f"pl.col({a!r}) {rng.choice(['<', '<=', '>', '>=', '=='])} pl.col({bname!r})")
        return [Op("join_where", ".join_where({sub}, " + ", ".join(preds) + ")", sub=sub,
                   info={"how": "inner", "tag": "join_where"})]

    def op_sort(self, q: Query, st: State) -> list[Op] | None:
        rng = self.rng
        cands = [n for n in st.names if n not in st.taint]
        if not cands:
            return None
        by = rng.sample(cands, min(len(cands), rng.choice([1, 1, 2, 3])))
        desc: Any = rng.random() < 0.3 if rng.random() < 0.6 else [rng.random() < 0.5 for _ in by]
        nl: Any = rng.random() < 0.5 if rng.random() < 0.6 else [rng.random() < 0.5 for _ in by]
        mo = rng.random() < 0.5
        return [Op("sort", f".sort({by!r}, descending={desc!r}, nulls_last={nl!r}, maintain_order={mo})",
                   info={"by": by, "maintain_order": mo, "tag": f"sort(mo={mo})"})]

    def op_unique(self, q: Query, st: State) -> list[Op] | None:
        rng = self.rng
        keep = rng.choice(["any", "first", "last", "none"])
        cands = [n for n in st.names if n not in st.taint]
        subset = None
        if rng.random() < 0.6 and cands:
            subset = rng.sample(cands, min(len(cands), rng.choice([1, 2])))
        if keep == "any" and subset is not None and set(subset) != set(st.names):
            subset = None
        if subset is None and st.taint:
            subset = cands or None
            if subset is None:
                return None
        mo = rng.random() < 0.5
        op = Op("unique", f".unique(subset={subset!r}, keep={keep!r}, maintain_order={mo})",
                info={"subset": subset, "keep": keep, "maintain_order": mo, "tag": f"unique:{keep}"})
        if keep in ("first", "last") and subset is not None:
            return self.ordered(st, op)
        return [op]

    def op_slice(self, q: Query, st: State) -> list[Op] | None:
        rng = self.rng
        r = rng.random()
        n = rng.choice([0, 1, 2, 3, 5, 100])
        if r < 0.4:
            op = Op("slice", f".head({n})", info={"tag": "head"})
        elif r < 0.7:
            op = Op("slice", f".tail({n})", info={"tag": "tail"})
        else:
            off = rng.choice([0, 1, 2, -1, -3, 5])
            ln = rng.choice([None, 0, 1, 2, 4])
            op = Op("slice", f".slice({off}, {ln})", info={"tag": "slice"})
        return self.ordered(st, op)

    def op_concat(self, q: Query, st: State) -> list[Op] | None:
        rng = self.rng
        schema = dict(self.lf(q).collect_schema())
        if rng.random() < 0.75:
            # vertical: another table shaped to this schema, or this query filtered
            if rng.random() < 0.5:
                t = rng.choice(self.tables)
                tcols = {c.name: c.dtype for c in t.columns}
                items = []
                for n, dtype in schema.items():
                    same = [c for c, td in tcols.items() if td == dtype]
                    if n in tcols and tcols[n] == dtype:
                        items.append(E(esc(f"pl.col({n!r})"), col=n))
                    elif same and rng.random() < 0.7:
                        items.append(E(esc(f"pl.col({rng.choice(same)!r}).alias({n!r})")))
                    elif tcols and rng.random() < 0.5:
                        c = rng.choice(list(tcols))
                        items.append(E(esc(f"pl.col({c!r}).cast({_dt(dtype)}, strict=False).alias({n!r})"),
                                       tag=f"cast:{short(tcols[c])}->{short(dtype)}:nonstrict",
                                       fstr=kind(tcols[c]) == "float" and kind(dtype) == "str"))
                    else:
                        items.append(E(esc(f"pl.lit(None, dtype={_dt(dtype)}).alias({n!r})")))
                sub = Query(t.name, [Op("select", ".select(", items, ")", names=list(schema))])
            else:
                g = self.exprgen(q, st)
                sub = Query(q.source, list(q.ops) + [Op("filter", ".filter(", [g.expr(2, {"bool"})], ")")])
            op = Op("concat", "pl.concat([{cur}, {sub}], how='vertical')", sub=sub,
                    info={"how": "vertical", "tag": "concat:vertical"})
            return [op]
        # horizontal: columns of another query under new names (heights may differ)
        if rng.random() < 0.5:
            t = rng.choice(self.tables)
            cols = rng.sample([c.name for c in t.columns], min(len(t.columns), rng.randint(1, 2)))
            src = t.name
        else:
            cols = rng.sample(list(schema), min(len(schema), rng.randint(1, 2)))
            src = q.source if not q.ops else None  # type: ignore[assignment]
            if src is None:
                return None
        items = [E(esc(f"pl.col({c!r}).alias({c + '_h'!r})"), col=c) for c in cols]
        sub = Query(src, [Op("select", ".select(", items, ")", names=[c + "_h" for c in cols])])
        op = Op("concat", "pl.concat([{cur}, {sub}], how='horizontal')", sub=sub,
                info={"how": "horizontal", "tag": "concat:horizontal"})
        return self.ordered(st, op)

    def op_split_explode(self, q: Query, st: State) -> list[Op] | None:
        """A String column split into a list (its length beside it now and then),
        then the list exploded with random flags: lists live only between the two."""
        rng = self.rng
        sch = self.lf(q).collect_schema()
        cands = [n for n in st.names if sch[n] == pl.String and n not in st.taint and n not in st.fstr]
        if not cands:
            return None
        c = rng.choice(cands)
        x = self.name()
        sep = rng.choice(["a", "e", "", " ", "-", "ab", "1", "|", "é"])
        items = [E(esc(f"pl.col({c!r}).str.split({sep!r}).alias({x!r})"), tag="str.split")]
        names = [x]
        if rng.random() < 0.4:
            n = self.name()
            items.append(E(esc(f"pl.col({c!r}).str.split({sep!r}).list.len().alias({n!r})"), tag="list.len"))
            names.append(n)
        ean, keep = rng.random() < 0.5, rng.random() < 0.7
        return [Op("with_columns", ".with_columns(", items, ")", names=names, info={"tag": "str.split"}),
                Op("explode", f".explode({x!r}, empty_as_null={ean}, keep_nulls={keep})",
                   info={"tag": f"explode(ean={ean},keep={keep})"})]

    def op_implode_explode(self, q: Query, st: State) -> list[Op] | None:
        """Columns gathered into lists per group (implode), then exploded back."""
        rng = self.rng
        sch = self.lf(q).collect_schema()
        flat = (pl.Boolean, pl.String, pl.Date, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16,
                pl.UInt32, pl.UInt64, pl.Float32, pl.Float64)
        cands = [n for n in st.names if n not in st.taint]
        vals = [n for n in cands if sch[n] in flat]
        if len(cands) < 2 or not vals:
            return None
        key = rng.choice(cands)
        picked = [v for v in rng.sample(vals, min(len(vals), rng.randint(1, 2))) if v != key]
        if not picked:
            return None
        mo = rng.random() < 0.5
        items = [E(esc(f"pl.col({v!r})"), col=v, tag="implode") for v in picked]
        gb = Op("group_by", f".group_by([{key!r}], maintain_order={mo}).agg(", items, ")", names=picked,
                info={"keys": [key], "maintain_order": mo, "tag": f"implode(mo={mo})"})
        return [gb, Op("explode", f".explode({picked!r})", info={"tag": "explode"})]

    def op_with_row_index(self, q: Query, st: State) -> list[Op] | None:
        off = self.rng.choice([0, 0, 1, 10])
        op = Op("with_row_index", f".with_row_index('idx', offset={off})", info={"tag": "with_row_index"})
        if "idx" in st.names:
            return None
        return self.ordered(st, op)

    def op_rename(self, q: Query, st: State) -> list[Op] | None:
        if not st.names:
            return None
        c = self.rng.choice(st.names)
        new = "r_" + c
        if new in st.names:
            return None
        return [Op("rename", f".rename({{{c!r}: {new!r}}})", info={"mapping": {c: new}, "tag": "rename"})]

    def op_drop(self, q: Query, st: State) -> list[Op] | None:
        if len(st.names) < 2:
            return None
        cols = self.rng.sample(st.names, self.rng.randint(1, len(st.names) - 1))
        return [Op("drop", f".drop({cols!r})", info={"tag": "drop"})]


def analyze_from(q: Query, st: State, ops: list[Op], ns: dict[str, Any]) -> State:
    """The state after appending ops to q whose state is st (raises when Polars
    rejects the plan)."""
    cur = q.code()
    for i, op in enumerate(ops):
        nxt = op.apply(cur)
        schema = lazy(nxt, ns).collect_schema()
        nested = [n for n, t in schema.items() if kind(t) == "other"]
        if nested and i == len(ops) - 1:  # lists between the ops of one draw (split, explode) only
            raise ValueError(f"{op.kind} gives nested columns {nested}")  # an unaggregated column in agg()
        st = step(st, op, list(schema.names()), ns, cur)
        cur = nxt
    return st


def _dt(t: pl.DataType) -> str:
    from .values import dtype_code

    return dtype_code(t)


FILE_CODECS = ["zstd", "zstd", "snappy", "uncompressed", "lz4", "gzip", "brotli"]
CSV_KINDS = {"int", "float", "str", "bool", "date", "datetime"}


FILES_SHARE = float(os.environ.get("QFUZZ_FILES", "0.3"))  # share of cases reading tables from files


def file_options(rng: random.Random, table: Table) -> str | None:
    """How a table is stored when the query reads it from files: the arguments of the
    setup code's _files after the frame and its name. Parquet by Polars' writer (row
    groups and pages of a few rows, every codec, statistics or none) or by pyarrow's
    (dictionaries or none, v1 or v2 pages, the DELTA and BYTE_STREAM_SPLIT encodings),
    or CSV for tables of types CSV holds; the rows dealt over 1-3 files."""
    parts = rng.choice([1, 1, 1, 2, 3])
    kinds = {kind(c.dtype) for c in table.columns}
    temporal_csv = all(not isinstance(c.dtype, pl.Datetime) or c.dtype.time_unit != "ns" for c in table.columns)
    if kinds <= CSV_KINDS and temporal_csv and rng.random() < 0.2:
        return f"'csv', {parts}"
    rg = rng.choice([None, 1, 2, 3, 7, 16])
    page = rng.choice([None, None, 16, 100, 1024])
    codec = rng.choice(FILE_CODECS)
    kw = [f"compression={codec!r}"]
    if rg is not None:
        kw.append(f"row_group_size={rg}")
    if rng.random() < 0.5:
        if page is not None:
            kw.append(f"data_page_size={page}")
        kw.append(f"statistics={rng.choice([True, True, False, 'full'])!r}")
        return f"'parquet', {parts}, " + ", ".join(kw)
    opts: dict[str, Any] = {"use_dictionary": rng.random() < 0.5, "data_page_version": rng.choice(["1.0", "2.0"]),
                            "write_statistics": rng.random() < 0.8}
    if page is not None:
        opts["data_page_size"] = page
    if not opts["use_dictionary"]:
        enc: dict[str, str] = {}
        for c in table.columns:
            k = kind(c.dtype)
            if k == "float":
                choices = ["PLAIN", "BYTE_STREAM_SPLIT"]
            elif k in ("int", "date", "datetime", "duration"):
                choices = ["PLAIN", "DELTA_BINARY_PACKED"]
            elif k == "str":
                choices = ["PLAIN", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY"]
            else:
                continue
            enc[c.name] = rng.choice(choices)
        if enc:
            opts["column_encoding"] = enc
    kw += ["use_pyarrow=True", f"pyarrow_options={opts!r}"]
    return f"'parquet', {parts}, " + ", ".join(kw)


def generate(seed: int, index: int) -> Case:
    """The case number `index` of the run `seed`."""
    rng = random.Random(f"{seed}:{index}")
    tables = gen_tables(rng)
    case = Case(tables, Query("t0"), ident=f"{seed}:{index}")
    ns = case.namespace()
    qg = QueryGen(rng, tables, ns)
    src = rng.choice(tables).name
    case.query = qg.query(src, rng.randint(1, 5), QueryGen.MAIN, allow_invalid=True)
    case.threads = rng.choice([1, 2])
    case.morsel_rows = rng.choice([7, 16, 100, 1000, None])
    # tables read from files: drawn from their own stream, so that the tables and queries
    # of a seed are the same with or without them
    frng = random.Random(f"{seed}:{index}:files")
    if frng.random() < FILES_SHARE:
        for t in tables:
            if frng.random() < 0.8:
                opts = file_options(frng, t)
                if opts is not None:
                    case.files[t.name] = opts
    return case


__all__ = ["generate", "gen_tables", "QueryGen"]
