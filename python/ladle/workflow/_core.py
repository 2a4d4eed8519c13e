"""The workflow graph: column selectors, nodes, the context a fit or a transform
runs in, and ``Workflow`` (fit, transform, save, load)."""

from __future__ import annotations

import glob
import io
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, Union

import polars as pl

# a column as an operator sees it: (its name in the workflow, its name in the frame)
Col = tuple[str, str]
Group = list[Col]

FORMAT_NAME = "ladle.workflow"
FORMAT_VERSION = 1
ROW = "__ladle_wf_row"  # the input's row number, for TargetEncoding's folds
_TMP = "__ladle_wf_"

Data = Union[pl.LazyFrame, pl.DataFrame, str, os.PathLike, Sequence[Union[str, os.PathLike]]]
Engine = Any  # None (Polars' engine), a ladle.Engine / ladle.SPMDEngine, or a Polars engine name


class NotFittedError(ValueError):
    """transform (or save of statistics, get_embedding_sizes) before fit."""


class FormatVersionError(ValueError):
    """Workflow.load of a directory written in another format version."""


# ---------------------------------------------------------------------------
# selectors and nodes


class ColumnSelector:
    """Names of input columns. A nested list or tuple is a column group: several
    columns taken together as one key (TargetEncoding, JoinGroupby).

        ColumnSelector(["a", "b"]) >> Categorify()
        [["user", "item"]] >> TargetEncoding("click")     # the key (user, item)
    """

    def __init__(self, names: Iterable[str | Sequence[str]] | str = ()) -> None:
        if isinstance(names, str):
            names = [names]
        groups: list[tuple[str, ...]] = []
        for n in names:
            if isinstance(n, str):
                groups.append((n,))
            elif isinstance(n, (list, tuple)) and n and all(isinstance(x, str) for x in n):
                groups.append(tuple(n))
            else:
                raise TypeError(f"ColumnSelector: a column name (str) or a list of names, got {n!r}")
        self.groups = groups

    @property
    def names(self) -> list[str]:
        """Every column named, groups flattened, first appearance first."""
        out: list[str] = []
        for g in self.groups:
            for n in g:
                if n not in out:
                    out.append(n)
        return out

    def __rshift__(self, op: Any) -> "Node":
        return _as_node(self) >> op

    def __add__(self, other: Any) -> "Node":
        return _as_node(self) + other

    def __radd__(self, other: Any) -> "Node":
        return _as_node(other) + self

    def __repr__(self) -> str:
        return f"ColumnSelector({[g[0] if len(g) == 1 else list(g) for g in self.groups]!r})"


Selectable = Union[ColumnSelector, "Node", str, Sequence[Union[str, Sequence[str]]]]


class Node:
    """A step of the graph: a selection of input columns, an operator applied to
    its parents' output columns, a concatenation (``+``) or a removal (``-``)."""

    def __init__(self, kind: str, *, op: "Operator | None" = None, parents: Sequence["Node"] = (),
                 groups: Sequence[tuple[str, ...]] = (), drop: Sequence[str] = ()) -> None:
        self.kind = kind
        self.op = op
        self.parents = list(parents)
        self.groups = list(groups)
        self.drop = list(drop)

    def __rshift__(self, op: Any) -> "Node":
        from ._ops import LambdaOp, Operator

        if isinstance(op, type) and issubclass(op, Operator):
            op = op()
        if not isinstance(op, Operator):
            if callable(op) or isinstance(op, pl.Expr):
                op = LambdaOp(op)
            else:
                raise TypeError(f"`>>` takes an operator (e.g. Categorify()), got {type(op).__name__}")
        return Node("op", op=op, parents=[self])

    def __add__(self, other: Any) -> "Node":
        return Node("concat", parents=[self, _as_node(other)])

    def __radd__(self, other: Any) -> "Node":
        return Node("concat", parents=[_as_node(other), self])

    def __sub__(self, other: Any) -> "Node":
        names = _as_node(other)
        if names.kind != "select":
            raise TypeError("`-` removes columns named by a list of names or a ColumnSelector")
        return Node("drop", parents=[self], drop=[n for g in names.groups for n in g])

    def __repr__(self) -> str:
        if self.kind == "select":
            return f"Node(select {[list(g) if len(g) > 1 else g[0] for g in self.groups]})"
        if self.kind == "op":
            return f"Node({self.op!r})"
        return f"Node({self.kind})"


def _as_node(x: Any) -> Node:
    if isinstance(x, Node):
        return x
    if isinstance(x, ColumnSelector):
        return Node("select", groups=x.groups)
    if isinstance(x, (str, list, tuple)):
        return Node("select", groups=ColumnSelector(x).groups)
    raise TypeError(f"a column selection (list of names, ColumnSelector) or a node, got {type(x).__name__}")


def _topo(output: Node) -> list[Node]:
    """Nodes in an order where every parent comes before its children (depth first,
    parents in order): the same graph gives the same order."""
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(output, False)]
    while stack:
        node, done = stack.pop()
        if done:
            if id(node) not in seen:
                seen.add(id(node))
                order.append(node)
            continue
        if id(node) in seen:
            continue
        stack.append((node, True))
        for p in reversed(node.parents):
            if id(p) not in seen:
                stack.append((p, False))
    return order


# ---------------------------------------------------------------------------
# the context of one fit step or one transform


class Context:
    """What an operator's fit and transform see besides the frame: the engine that
    runs statistics queries, whether this is the training pass (TargetEncoding's
    out-of-fold statistics), fresh temporary column names, and statistics frames
    made ready for the engine (under SPMD with several ranks, an in-memory frame is
    each rank's own rows, so a statistics table is given on rank 0 and empty on the
    others: the job's whole table is then the table once)."""

    def __init__(self, engine: Engine, training: bool) -> None:
        self.engine = engine
        self.training = training
        self.base: pl.Schema = pl.Schema()
        self._n = 0
        self.rank, self.nranks = 0, 1
        spmd = _spmd_class()
        if spmd is not None and isinstance(engine, spmd):
            self.rank, self.nranks = engine.rank, engine.nranks

    def tmp(self) -> str:
        """A new temporary column name."""
        self._n += 1
        return f"{_TMP}{self._n}"

    def table(self, df: pl.DataFrame) -> pl.LazyFrame:
        """A statistics frame to join against."""
        return (df if self.rank == 0 else df.clear()).lazy()

    def collect(self, lf: pl.LazyFrame) -> pl.DataFrame:
        """The whole result of a statistics query on the engine (every rank's rows
        under SPMD)."""
        return collect(lf, self.engine)


def _spmd_class() -> Any:
    try:
        from ..spmd import SPMDEngine
    except ImportError:  # pragma: no cover
        return None
    return SPMDEngine


def collect(lf: pl.LazyFrame, engine: Engine) -> pl.DataFrame:
    """lf's whole result on ``engine``: None is Polars' own engine; a ladle engine
    runs it (an SPMDEngine's sharded result is gathered from every rank)."""
    if engine is None:
        return lf.collect()
    spmd = _spmd_class()
    if spmd is not None and isinstance(engine, spmd):
        return engine.allgather(engine.execute(lf)).to_polars()
    return lf.collect(engine=engine)


def as_lazy(data: Data) -> pl.LazyFrame:
    """A LazyFrame, a DataFrame, or Parquet file(s): a path, a directory (its
    *.parquet files, sorted), a glob, or a list of paths (pl.scan_parquet)."""
    if isinstance(data, pl.LazyFrame):
        return data
    if isinstance(data, pl.DataFrame):
        return data.lazy()
    if isinstance(data, (str, os.PathLike)):
        p = Path(data)
        if p.is_dir():
            files = sorted(glob.glob(str(p / "*.parquet")))
            if not files:
                raise ValueError(f"{p}: the directory holds no *.parquet file")
            return pl.scan_parquet(files)
        return pl.scan_parquet(str(p))
    if isinstance(data, (list, tuple)) and data and all(isinstance(x, (str, os.PathLike)) for x in data):
        return pl.scan_parquet([str(x) for x in data])
    raise TypeError(
        f"data: a polars LazyFrame or DataFrame, or Parquet path(s), got {type(data).__name__}")


# ---------------------------------------------------------------------------
# the workflow

State = dict[str, pl.DataFrame]


class Workflow:
    """A graph of feature operators ending in ``output``: fit computes every
    operator's statistics as queries on an engine, transform gives a LazyFrame
    that computes the features with expressions and joins ladle runs.

        cats = ["user", "item"] >> Categorify(freq_threshold=2)
        conts = ["price"] >> FillMedian() >> LogOp() >> Normalize()
        wf = Workflow(cats + conts + ["label"]).fit("train/*.parquet", engine=ladle.Engine())
        lf = wf.transform("valid/*.parquet")                 # a pl.LazyFrame
        df = lf.collect(engine=ladle.Engine())

    The output columns are those of ``output`` (select a column with a plain list
    to pass it through unchanged).
    """

    def __init__(self, output: Selectable) -> None:
        self.output = _as_node(output)
        self._order = _topo(self.output)
        self._state: dict[int, State] = {}
        self._fitted = not any(n.kind == "op" and n.op is not None and n.op.stateful for n in self._order)

    # -- public API -------------------------------------------------------------------

    @property
    def fitted(self) -> bool:
        """Whether every operator with statistics has them."""
        return self._fitted

    @property
    def output_columns(self) -> list[str]:
        """The names of the columns transform gives, in order."""
        return output_names(self.output)

    @property
    def nodes(self) -> list[Node]:
        """Every node, parents before children."""
        return list(self._order)

    def fit(self, data: Data, *, engine: Engine = None) -> "Workflow":
        """Computes every operator's statistics, as queries on ``engine`` (None:
        Polars' own engine; a ladle.Engine; a ladle.SPMDEngine, whose ranks each
        read their share of the data and whose results are gathered). An operator
        after others fits on their output, in the training pass
        (``transform(..., training=True)``: TargetEncoding out of fold). Returns
        self."""
        lf0 = as_lazy(data)
        state: dict[int, State] = {}
        for node in self._order:
            if node.kind != "op" or node.op is None or not node.op.stateful:
                continue
            ctx = Context(engine, training=True)
            lf, env = self._build(lf0, self._ancestors(node), ctx, state, row=node.op.needs_row)
            groups = self._inputs(node, env)
            state[id(node)] = node.op.fit(lf, groups, ctx)
        self._state = state
        self._fitted = True
        return self

    def transform(self, data: Data, *, training: bool = False, engine: Engine = None) -> pl.LazyFrame:
        """The features of ``data`` as a Polars LazyFrame (collect it on any engine).

        training
            False (the default): every operator uses the statistics of all the fit
            data. True: the training pass over the data the workflow was fit on:
            TargetEncoding with kfold > 1 encodes each row with the statistics of
            the other folds (its fold comes from its row number; see
            docs/workflow.md). fit_transform uses True.
        engine
            Where the few queries transform itself runs go (the string values a
            hashed String column holds that the statistics have not seen), and,
            for a ladle.SPMDEngine of several ranks, whose rank this LazyFrame is
            for (statistics tables on rank 0 only). None: Polars' engine.
        """
        self._check_fitted()
        ctx = Context(engine, training)
        lf, env = self._build(as_lazy(data), self._order, ctx, self._state)
        cols = [c for g in env[id(self.output)] for c in g]
        seen: set[str] = set()
        for name, _ in cols:
            if name in seen:
                raise ValueError(f"the workflow outputs two columns named {name!r}; rename one "
                                 "(e.g. >> Rename(postfix=...))")
            seen.add(name)
        return lf.select([pl.col(fc).alias(name) for name, fc in cols])

    def fit_transform(self, data: Data, *, engine: Engine = None) -> pl.LazyFrame:
        """fit(data), then transform(data, training=True)."""
        self.fit(data, engine=engine)
        return self.transform(data, training=True, engine=engine)

    def statistics(self) -> dict[str, State]:
        """The fitted statistics, by node ("<position>:<operator>", positions in
        the order of ``nodes``): each operator's frames by name."""
        self._check_fitted()
        out: dict[str, State] = {}
        for i, node in enumerate(self._order):
            if id(node) in self._state:
                out[f"{i}:{type(node.op).__name__}"] = dict(self._state[id(node)])
        return out

    def state_of(self, node: Node) -> State:
        """The fitted statistics of one node."""
        self._check_fitted()
        if id(node) not in self._state:
            raise KeyError(f"{node!r} has no statistics in this workflow")
        return self._state[id(node)]

    # -- save / load ------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Writes the workflow to directory ``path``: workflow.json (the graph,
        every operator's parameters, the format version) and the statistics as
        Parquet files under stats/. No pickle: a LambdaOp holding a Polars
        expression stores it as Polars' JSON serialisation; one holding a Python
        function cannot be saved (ValueError)."""
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        (root / "stats").mkdir(exist_ok=True)
        index = {id(n): i for i, n in enumerate(self._order)}
        nfiles = [0]

        def save_frame(df: pl.DataFrame) -> str:
            name = f"stats/f{nfiles[0]:04d}.parquet"
            nfiles[0] += 1
            df.write_parquet(root / name)
            return name

        nodes: list[dict[str, Any]] = []
        for node in self._order:
            d: dict[str, Any] = {"kind": node.kind, "parents": [index[id(p)] for p in node.parents]}
            if node.kind == "select":
                d["groups"] = [list(g) for g in node.groups]
            elif node.kind == "drop":
                d["drop"] = list(node.drop)
            elif node.kind == "op":
                assert node.op is not None
                d["op"] = type(node.op).__name__
                d["params"] = node.op.to_config(save_frame)
                if id(node) in self._state:
                    d["state"] = {k: save_frame(v) for k, v in self._state[id(node)].items()}
            nodes.append(d)
        doc = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "polars_version": pl.__version__,
            "fitted": self._fitted,
            "nodes": nodes,
            "output": index[id(self.output)],
        }
        (root / "workflow.json").write_text(json.dumps(doc, indent=1, allow_nan=False))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Workflow":
        """A workflow written by ``save``. Raises FormatVersionError (a ValueError)
        when the directory was written in another format version."""
        from . import _ops

        root = Path(path)
        f = root / "workflow.json"
        if not f.exists():
            raise FileNotFoundError(f"{root}: no workflow.json (not a saved ladle workflow)")
        doc = json.loads(f.read_text())
        if doc.get("format") != FORMAT_NAME:
            raise ValueError(f"{f}: not a ladle workflow (format {doc.get('format')!r})")
        v = doc.get("format_version")
        if v != FORMAT_VERSION:
            raise FormatVersionError(
                f"{f}: saved in ladle.workflow format version {v}; this ladle reads format "
                f"version {FORMAT_VERSION} only (fit the workflow again, or load it with the "
                "ladle that saved it)")

        def load_frame(name: str) -> pl.DataFrame:
            return pl.read_parquet(root / name)

        nodes: list[Node] = []
        states: list[tuple[Node, dict[str, str]]] = []
        for d in doc["nodes"]:
            parents = [nodes[i] for i in d["parents"]]
            kind = d["kind"]
            if kind == "select":
                node = Node("select", groups=[tuple(g) for g in d["groups"]])
            elif kind == "drop":
                node = Node("drop", parents=parents, drop=d["drop"])
            elif kind == "concat":
                node = Node("concat", parents=parents)
            elif kind == "op":
                op_cls = _ops.OPERATORS.get(d["op"])
                if op_cls is None:
                    raise ValueError(f"{f}: unknown operator {d['op']!r}")
                node = Node("op", op=op_cls.from_config(d["params"], load_frame), parents=parents)
                if "state" in d:
                    states.append((node, d["state"]))
            else:
                raise ValueError(f"{f}: unknown node kind {kind!r}")
            nodes.append(node)
        wf = cls(nodes[doc["output"]])
        wf._state = {id(node): {k: load_frame(v) for k, v in files.items()} for node, files in states}
        wf._fitted = bool(doc["fitted"])
        return wf

    # -- internals ----------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not self._fitted:
            ops = [type(n.op).__name__ for n in self._order if n.kind == "op" and n.op is not None and n.op.stateful]
            raise NotFittedError(
                f"the workflow is not fitted: call fit() first (operators with statistics: {', '.join(ops)})")

    def _ancestors(self, node: Node) -> list[Node]:
        want: set[int] = set()
        stack = list(node.parents)
        while stack:
            n = stack.pop()
            if id(n) not in want:
                want.add(id(n))
                stack.extend(n.parents)
        return [n for n in self._order if id(n) in want]

    @staticmethod
    def _inputs(node: Node, env: dict[int, list[Group]]) -> list[Group]:
        groups: list[Group] = []
        for p in node.parents:
            groups.extend(env[id(p)])
        return groups

    def _build(self, lf: pl.LazyFrame, nodes: list[Node], ctx: Context,
               state: dict[int, State], row: bool = False) -> tuple[pl.LazyFrame, dict[int, list[Group]]]:
        base = lf.collect_schema()
        ctx.base = base
        if ctx.training and (row or any(n.kind == "op" and n.op is not None and n.op.needs_row for n in nodes)):
            if ROW in base:
                raise ValueError(f"the data has a column named {ROW!r}, which the workflow uses itself")
            lf = lf.with_row_index(ROW)
        env: dict[int, list[Group]] = {}
        for node in nodes:
            if node.kind == "select":
                for g in node.groups:
                    for name in g:
                        if name not in base:
                            raise ValueError(
                                f"column {name!r} is not in the data (its columns: {list(base.names())})")
                env[id(node)] = [[(n, n) for n in g] for g in node.groups]
            elif node.kind == "concat":
                groups = self._inputs(node, env)
                seen: set[str] = set()
                for g in groups:
                    for name, _ in g:
                        if name in seen:
                            raise ValueError(
                                f"column {name!r} comes out of two branches joined by `+`; rename one "
                                "(e.g. >> Rename(postfix=...))")
                        seen.add(name)
                env[id(node)] = groups
            elif node.kind == "drop":
                groups = self._inputs(node, env)
                have = {name for g in groups for name, _ in g}
                for name in node.drop:
                    if name not in have:
                        raise ValueError(f"`-`: column {name!r} is not among the columns it removes from "
                                         f"({sorted(have)})")
                kept = [[c for c in g if c[0] not in node.drop] for g in groups]
                env[id(node)] = [g for g in kept if g]
            else:
                op = node.op
                assert op is not None
                groups = self._inputs(node, env)
                st: State | None = None
                if op.stateful:
                    if id(node) not in state:
                        raise NotFittedError(f"{type(op).__name__} is not fitted: call fit() first")
                    st = state[id(node)]
                lf, outs = op.transform(lf, groups, st, ctx)
                env[id(node)] = [[c] for c in outs]
        return lf, env


def output_names(node: Node) -> list[str]:
    """The names of a node's output columns (no data needed)."""
    return [name for name, _ in trace_names(node)]


def trace_names(node: Node, keep: Callable[[Any], bool] = lambda op: False) -> list[tuple[str, Any]]:
    """A node's output columns as (name, origin): origin is (operator node, its
    output name) for a column made by an operator ``keep`` accepts and since only
    renamed, selected or removed; otherwise None."""
    from ._ops import Rename

    names: dict[int, list[list[tuple[str, Any]]]] = {}
    for n in _topo(node):
        if n.kind == "select":
            names[id(n)] = [[(c, None) for c in g] for g in n.groups]
            continue
        ins = [g for p in n.parents for g in names[id(p)]]
        if n.kind == "concat":
            names[id(n)] = ins
        elif n.kind == "drop":
            kept = [[c for c in g if c[0] not in n.drop] for g in ins]
            names[id(n)] = [g for g in kept if g]
        else:
            assert n.op is not None
            outs = n.op.output_names([[c for c, _ in g] for g in ins])
            if isinstance(n.op, Rename):
                origins = [o for g in ins for _, o in g]
            elif keep(n.op):
                origins = [(n, c) for c in outs]
            else:
                origins = [None] * len(outs)
            names[id(n)] = [[(c, o)] for c, o in zip(outs, origins)]
    return [c for g in names[id(node)] for c in g]


def expr_to_json(e: pl.Expr) -> str:
    """Polars' JSON serialisation of an expression."""
    return e.meta.serialize(format="json")


def expr_from_json(s: str) -> pl.Expr:
    return pl.Expr.deserialize(io.StringIO(s), format="json")


SaveFrame = Callable[[pl.DataFrame], str]
LoadFrame = Callable[[str], pl.DataFrame]

