"""The feature operators. Each one's fit runs its statistics as queries on the
engine (Context.collect) and keeps them as Polars frames; its transform adds
columns to the LazyFrame with expressions and joins against those frames, all of
which ladle runs as Polars does (docs/workflow.md says which parts do not)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Sequence, Union

import numpy as np
import polars as pl

from . import _hash
from ._core import (
    ROW,
    Col,
    Context,
    Group,
    LoadFrame,
    Node,
    SaveFrame,
    State,
    _as_node,
    expr_from_json,
    expr_to_json,
)

F64 = pl.Float64
PerColumn = Union[int, None, Mapping[str, Union[int, None]]]

_DTYPES: dict[str, pl.DataType] = {
    str(t): t for t in (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64,
                        pl.Float32, pl.Float64)
}


def _enc_dtype(dt: Any) -> str:
    s = str(dt() if isinstance(dt, type) else dt)
    if s not in _DTYPES:
        raise TypeError(f"dtype {dt!r}: one of {sorted(_DTYPES)}")
    return s


def _dec_dtype(s: str) -> pl.DataType:
    if s not in _DTYPES:
        raise ValueError(f"unknown dtype {s!r} in a saved workflow")
    return _DTYPES[s]


def _check_out_dtype(dt: Any, what: str, floats: bool) -> pl.DataType:
    t = dt() if isinstance(dt, type) else dt
    if not isinstance(t, pl.DataType) or str(t) not in _DTYPES or (floats and not t.is_float()) or (
            not floats and not t.is_integer()):
        kind = "a float type (pl.Float32, pl.Float64)" if floats else "an integer type (e.g. pl.Int64, pl.Int32)"
        raise TypeError(f"{what}: out dtype must be {kind}, got {dt!r}")
    return t


def _flat(groups: list[Group], op: str) -> list[Col]:
    out: list[Col] = []
    for g in groups:
        if len(g) != 1:
            raise ValueError(f"{op}: column groups ({[c[0] for c in g]}) are not supported; select the columns "
                             "one by one (groups are for TargetEncoding and JoinGroupby)")
        out.append(g[0])
    return out


def _require_numeric(op: str, name: str, dt: pl.DataType) -> None:
    if not dt.is_numeric():
        raise TypeError(f"{op}: column {name!r} is {dt}, not a number")


def _per(v: PerColumn, name: str) -> int | None:
    if isinstance(v, Mapping):
        return v.get(name)
    return v


def _check_count(v: PerColumn, what: str, minimum: int, allow_none: bool) -> PerColumn:
    vals = list(v.values()) if isinstance(v, Mapping) else [v]
    for x in vals:
        if x is None and allow_none:
            continue
        if isinstance(x, bool) or not isinstance(x, int) or x < minimum:
            raise ValueError(f"{what}={v!r}: an integer >= {minimum}" + (" or None" if allow_none else "")
                             + " (or a dict of them by column)")
    return dict(v) if isinstance(v, Mapping) else v


def _align(table: pl.DataFrame, col: str, want: pl.DataType, op: str, name: str) -> pl.DataFrame:
    """table with key column ``col`` in the data's type ``want``: an integer key fitted
    in another integer type is cast (values that do not fit cannot occur in the
    data and are dropped); any other difference is a TypeError."""
    have = table.schema[col]
    if have == want:
        return table
    if (have.is_integer() and want.is_integer()) or have == pl.Null:
        cast = pl.col(col).cast(want, strict=False)
        return table.filter(pl.col(col).is_null() | cast.is_not_null()).with_columns(cast)
    raise TypeError(f"{op}: column {name!r} is {want} in this data but was {have} when the workflow was fitted")


def _stat_of(state: State, key: str, op: str, name: str) -> pl.DataFrame:
    if key not in state:
        raise ValueError(f"{op}: no statistics for column {name!r} (the workflow was fitted on other columns)")
    return state[key]


class Operator:
    """Base of the feature operators: ``selection >> operator`` makes a node."""

    stateful: ClassVar[bool] = False

    @property
    def needs_row(self) -> bool:
        """Whether the training pass needs the input's row number."""
        return False

    def __rrshift__(self, other: Any) -> Node:
        return _as_node(other) >> self

    def output_names(self, groups: list[list[str]]) -> list[str]:
        """The names of the columns this operator makes from its input columns."""
        return [n for g in groups for n in g]

    def fit(self, lf: pl.LazyFrame, groups: list[Group], ctx: Context) -> State:
        """Statistics of the input columns, as frames by name."""
        raise NotImplementedError

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        """lf with this operator's output columns added under new names; returns
        the frame and the output columns."""
        raise NotImplementedError

    def to_config(self, save_frame: SaveFrame) -> dict[str, Any]:
        """The parameters as JSON values (frames through save_frame)."""
        return dict(self._params)  # type: ignore[attr-defined]

    @classmethod
    def from_config(cls, cfg: dict[str, Any], load_frame: LoadFrame) -> "Operator":
        cfg = dict(cfg)
        for k in ("dtype", "out_dtype"):
            if k in cfg:
                cfg[k] = _dec_dtype(cfg[k])
        return cls(**cfg)

    def __repr__(self) -> str:
        params = getattr(self, "_params", {})
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in params.items())})"


# ---------------------------------------------------------------------------
# continuous columns


class Normalize(Operator):
    """(x - mean) / std with the fit data's mean and standard deviation (ddof=1, as
    Polars' std), in Float64, then cast to ``out_dtype``. A std that is 0 or
    undefined (fewer than two values) divides by 1; an undefined mean (no values)
    subtracts 0. Nulls stay null."""

    stateful = True

    def __init__(self, out_dtype: Any = pl.Float64) -> None:
        self.out_dtype = _check_out_dtype(out_dtype, "Normalize", floats=True)
        self._params = {"out_dtype": _enc_dtype(self.out_dtype)}

    _stats = ("mean", "std")

    def _aggs(self, x: pl.Expr) -> list[pl.Expr]:
        return [x.mean(), x.std()]

    def fit(self, lf: pl.LazyFrame, groups: list[Group], ctx: Context) -> State:
        cols = _flat(groups, type(self).__name__)
        sch = lf.collect_schema()
        for name, fc in cols:
            _require_numeric(type(self).__name__, name, sch[fc])
        exprs = [e.alias(f"{s}{i}") for i, (_, fc) in enumerate(cols)
                 for s, e in zip(self._stats, self._aggs(pl.col(fc).cast(F64)))]
        r = ctx.collect(lf.select(exprs)) if exprs else pl.DataFrame()
        data: dict[str, list[Any]] = {"column": [n for n, _ in cols]}
        for s in self._stats:
            data[s] = [r[f"{s}{i}"][0] for i in range(len(cols))]
        return {"stats": pl.DataFrame(data, schema={"column": pl.String, **{s: F64 for s in self._stats}})}

    def _row(self, state: State, name: str) -> dict[str, Any]:
        st = state["stats"].filter(pl.col("column") == name)
        if st.height != 1:
            raise ValueError(f"{type(self).__name__}: no statistics for column {name!r} (fitted on other columns)")
        return st.row(0, named=True)

    def _expr(self, x: pl.Expr, row: dict[str, Any]) -> pl.Expr:
        mean, std = row["mean"], row["std"]
        m = 0.0 if mean is None else float(mean)
        s = float(std) if std is not None and std > 0 else 1.0
        return (x - m) / s

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        assert state is not None
        cols = _flat(groups, type(self).__name__)
        sch = lf.collect_schema()
        outs: list[Col] = []
        exprs: list[pl.Expr] = []
        for name, fc in cols:
            _require_numeric(type(self).__name__, name, sch[fc])
            t = ctx.tmp()
            exprs.append(self._expr(pl.col(fc).cast(F64), self._row(state, name)).cast(self.out_dtype).alias(t))
            outs.append((name, t))
        return (lf.with_columns(exprs) if exprs else lf), outs


class NormalizeMinMax(Normalize):
    """(x - min) / (max - min) with the fit data's min and max, in Float64, then
    cast to ``out_dtype``. A range that is 0 or undefined divides by 1; an undefined
    min (no values) subtracts 0. Nulls stay null."""

    _stats = ("min", "max")

    def _aggs(self, x: pl.Expr) -> list[pl.Expr]:
        return [x.min(), x.max()]

    def _expr(self, x: pl.Expr, row: dict[str, Any]) -> pl.Expr:
        lo, hi = row["min"], row["max"]
        m = 0.0 if lo is None else float(lo)
        r = float(hi) - float(lo) if lo is not None and hi is not None and hi > lo else 1.0
        return (x - m) / r


class FillMissing(Operator):
    """Nulls replaced by ``fill_val``. With ``add_binary_cols``, also a Boolean
    column ``<col>_filled``: whether the value was null. The value must suit the
    column (a number for numeric columns, a str for String, a bool for Boolean)."""

    def __init__(self, fill_val: Any = 0, add_binary_cols: bool = False) -> None:
        if not isinstance(fill_val, (bool, int, float, str)):
            raise TypeError(f"FillMissing(fill_val={fill_val!r}): a number, str or bool")
        self.fill_val = fill_val
        self.add_binary_cols = bool(add_binary_cols)
        self._params = {"fill_val": fill_val, "add_binary_cols": self.add_binary_cols}

    def output_names(self, groups: list[list[str]]) -> list[str]:
        out: list[str] = []
        for g in groups:
            for n in g:
                out += [n, f"{n}_filled"] if self.add_binary_cols else [n]
        return out

    def _fill(self, x: pl.Expr, name: str, dt: pl.DataType, state: State | None) -> pl.Expr:
        v = self.fill_val
        ok = (isinstance(v, bool) and dt == pl.Boolean) or (isinstance(v, str) and dt == pl.String) or (
            isinstance(v, (int, float)) and not isinstance(v, bool) and dt.is_numeric())
        if not ok:
            raise TypeError(f"FillMissing: column {name!r} is {dt}; fill_val {v!r} does not suit it")
        return x.fill_null(pl.lit(v))

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        cols = _flat(groups, type(self).__name__)
        sch = lf.collect_schema()
        outs: list[Col] = []
        exprs: list[pl.Expr] = []
        for name, fc in cols:
            t = ctx.tmp()
            exprs.append(self._fill(pl.col(fc), name, sch[fc], state).alias(t))
            outs.append((name, t))
            if self.add_binary_cols:
                b = ctx.tmp()
                exprs.append(pl.col(fc).is_null().alias(b))
                outs.append((f"{name}_filled", b))
        return (lf.with_columns(exprs) if exprs else lf), outs


class FillMedian(FillMissing):
    """Nulls replaced by the fit data's median (Polars' median: the mean of the two
    middle values for an even count). Integer columns become Float64; float
    columns keep their type. With no values at fit, nulls stay null."""

    stateful = True

    def __init__(self, add_binary_cols: bool = False) -> None:
        super().__init__(0, add_binary_cols)
        self._params = {"add_binary_cols": self.add_binary_cols}

    def fit(self, lf: pl.LazyFrame, groups: list[Group], ctx: Context) -> State:
        cols = _flat(groups, "FillMedian")
        sch = lf.collect_schema()
        for name, fc in cols:
            _require_numeric("FillMedian", name, sch[fc])
        exprs = [pl.col(fc).cast(F64).median().alias(f"m{i}") for i, (_, fc) in enumerate(cols)]
        r = ctx.collect(lf.select(exprs)) if exprs else pl.DataFrame()
        return {"stats": pl.DataFrame({"column": [n for n, _ in cols],
                                       "median": [r[f"m{i}"][0] for i in range(len(cols))]},
                                      schema={"column": pl.String, "median": F64})}

    def _fill(self, x: pl.Expr, name: str, dt: pl.DataType, state: State | None) -> pl.Expr:
        assert state is not None
        _require_numeric("FillMedian", name, dt)
        st = state["stats"].filter(pl.col("column") == name)
        if st.height != 1:
            raise ValueError(f"FillMedian: no statistics for column {name!r} (fitted on other columns)")
        med = st["median"][0]
        if dt.is_float():
            return x if med is None else x.fill_null(pl.lit(med, dtype=dt))
        x = x.cast(F64)
        return x if med is None else x.fill_null(pl.lit(med, dtype=F64))


class Clip(Operator):
    """Values clipped to [min_value, max_value] (either may be None). Numeric columns."""

    def __init__(self, min_value: float | None = None, max_value: float | None = None) -> None:
        if min_value is None and max_value is None:
            raise ValueError("Clip: give min_value, max_value or both")
        for v in (min_value, max_value):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise TypeError(f"Clip: bounds are numbers, got {v!r}")
        if min_value is not None and max_value is not None and min_value > max_value:
            raise ValueError(f"Clip: min_value {min_value} > max_value {max_value}")
        self.min_value, self.max_value = min_value, max_value
        self._params = {"min_value": min_value, "max_value": max_value}

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        cols = _flat(groups, "Clip")
        sch = lf.collect_schema()
        outs: list[Col] = []
        exprs: list[pl.Expr] = []
        for name, fc in cols:
            _require_numeric("Clip", name, sch[fc])
            t = ctx.tmp()
            exprs.append(pl.col(fc).clip(self.min_value, self.max_value).alias(t))
            outs.append((name, t))
        return (lf.with_columns(exprs) if exprs else lf), outs


class LogOp(Operator):
    """log(1 + x) (log1p) in Float64, cast to ``out_dtype``. Numeric columns; a value
    below -1 gives NaN, as in Polars."""

    def __init__(self, out_dtype: Any = pl.Float64) -> None:
        self.out_dtype = _check_out_dtype(out_dtype, "LogOp", floats=True)
        self._params = {"out_dtype": _enc_dtype(self.out_dtype)}

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        cols = _flat(groups, "LogOp")
        sch = lf.collect_schema()
        outs: list[Col] = []
        exprs: list[pl.Expr] = []
        for name, fc in cols:
            _require_numeric("LogOp", name, sch[fc])
            t = ctx.tmp()
            exprs.append(pl.col(fc).cast(F64).log1p().cast(self.out_dtype).alias(t))
            outs.append((name, t))
        return (lf.with_columns(exprs) if exprs else lf), outs


class Bucketize(Operator):
    """The number of boundaries <= x (Int64): with boundaries [b0 < b1 < ...], x < b0
    is 0, b0 <= x < b1 is 1, ... A NaN is above every boundary; nulls stay null.
    ``boundaries``: one ascending list for every column, or a dict of lists by
    column."""

    def __init__(self, boundaries: Sequence[float] | Mapping[str, Sequence[float]]) -> None:
        def check(b: Any) -> list[float]:
            if isinstance(b, (str, bytes)) or not isinstance(b, Sequence):
                raise TypeError(f"Bucketize: boundaries are a list of numbers, got {b!r}")
            vals = list(b)
            for v in vals:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and math.isnan(v)):
                    raise TypeError(f"Bucketize: boundary {v!r} is not a number")
            if any(vals[i] >= vals[i + 1] for i in range(len(vals) - 1)):
                raise ValueError(f"Bucketize: boundaries must be strictly ascending, got {vals}")
            return vals

        if isinstance(boundaries, Mapping):
            self.boundaries: Any = {k: check(v) for k, v in boundaries.items()}
        else:
            self.boundaries = check(boundaries)
        self._params = {"boundaries": self.boundaries}

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        cols = _flat(groups, "Bucketize")
        sch = lf.collect_schema()
        outs: list[Col] = []
        exprs: list[pl.Expr] = []
        for name, fc in cols:
            _require_numeric("Bucketize", name, sch[fc])
            bs = self.boundaries.get(name) if isinstance(self.boundaries, dict) else self.boundaries
            if bs is None:
                raise ValueError(f"Bucketize: no boundaries for column {name!r}")
            x = pl.col(fc)
            if bs:
                e: pl.Expr = (x >= bs[0]).cast(pl.Int64)
                for b in bs[1:]:
                    e = e + (x >= b).cast(pl.Int64)
            else:
                e = pl.when(x.is_not_null()).then(pl.lit(0, dtype=pl.Int64))
            t = ctx.tmp()
            exprs.append(e.alias(t))
            outs.append((name, t))
        return (lf.with_columns(exprs) if exprs else lf), outs


# ---------------------------------------------------------------------------
# categorical columns


def _hashable(dt: pl.DataType) -> bool:
    return dt.is_integer() or dt in (pl.Boolean, pl.Date, pl.String) or isinstance(dt, pl.Datetime)


def _unseen(ctx: Context, lf: pl.LazyFrame, fc: str, is_list: bool, known: pl.DataFrame) -> pl.Series:
    """The distinct non-null values of column fc (a list column's elements) that
    ``known`` (a frame with column "value") lacks: one query on the engine."""
    x = pl.col(fc).explode() if is_list else pl.col(fc)
    q = (lf.select(x.alias("value")).filter(pl.col("value").is_not_null()).unique()
         .join(ctx.table(known.select("value")), on="value", how="anti"))
    return ctx.collect(q)["value"].sort()


class HashBucket(Operator):
    """The bucket (Int64, 0 <= b < num_buckets) of each value: the workflow's own
    hash, the same on ladle (CPU, GPU, ranks) and on Polars (docs/workflow.md,
    "Hashing"). Integer, Boolean, Date, Datetime and String columns; nulls stay null.
    ``num_buckets``: one count, or a dict by column. String columns: ladle cannot
    compute the string hash in a query, so ``transform`` runs one query for the
    column's distinct values and joins against their buckets."""

    def __init__(self, num_buckets: int | Mapping[str, int], seed: int = 0) -> None:
        self.num_buckets = _check_count(num_buckets, "HashBucket num_buckets", 1, allow_none=False)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"HashBucket(seed={seed!r}): an int")
        self.seed = seed
        self._params = {"num_buckets": self.num_buckets, "seed": seed}

    def buckets(self, name: str) -> int:
        n = _per(self.num_buckets, name)
        if n is None:
            raise ValueError(f"HashBucket: no num_buckets for column {name!r}")
        return n

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        cols = _flat(groups, "HashBucket")
        sch = lf.collect_schema()
        outs: list[Col] = []
        for name, fc in cols:
            dt = sch[fc]
            if not _hashable(dt):
                raise TypeError(f"HashBucket: column {name!r} is {dt}; integer, Boolean, Date, Datetime and "
                                "String columns can be hashed")
            n = self.buckets(name)
            t = ctx.tmp()
            if dt == pl.String:
                vals = _unseen(ctx, lf, fc, False, pl.DataFrame({"value": []}, schema={"value": pl.String}))
                table = pl.DataFrame({"value": vals, "b": _hash.string_buckets(vals, self.seed, n)},
                                     schema={"value": pl.String, "b": pl.Int64})
                k = ctx.tmp()
                lf = lf.join(ctx.table(table.rename({"value": k, "b": t})), left_on=fc, right_on=k, how="left",
                             maintain_order="left")
            else:
                lf = lf.with_columns(_hash.bucket_expr(pl.col(fc), dt, self.seed, n).alias(t))
            outs.append((name, t))
        return lf, outs


def _cat_inner(dt: pl.DataType, name: str) -> tuple[pl.DataType, bool]:
    is_list = isinstance(dt, pl.List)
    inner = dt.inner if is_list else dt  # type: ignore[union-attr]
    if inner is None or not (inner.is_integer() or inner in (pl.String, pl.Boolean, pl.Date)
                             or isinstance(inner, pl.Datetime)):
        raise TypeError(f"Categorify: column {name!r} is {dt}; Categorify encodes String, integer, Boolean, "
                        "Date and Datetime columns and lists of them (bucketize or cast a float column first)")
    return inner, is_list


class Categorify(Operator):
    """Each value becomes an index (``dtype``, Int64 by default) into a vocabulary
    of the fit data's values. The layout, with s = start_index and B = num_buckets
    (1 when None):

        s                  null
        s + 1 ... s + B    out of vocabulary: s + 1 when num_buckets is None, else
                           s + 1 + hash bucket of the value (0 <= bucket < B)
        s + 1 + B + r      the vocabulary value of rank r (0 = most frequent; equal
                           counts by value, ascending)

    A value is in the vocabulary when it occurs at least ``freq_threshold`` times in
    the fit data, among the ``max_size`` most frequent such values (None: no cap).
    freq_threshold, max_size and num_buckets may be dicts by column. A List column
    (List[String], List[int]) is multi-hot: each element is encoded, a null element
    to the null index, an empty list stays empty and a null list null (on ladle
    through explode, a join and implode; docs/workflow.md).
    """

    stateful = True

    def __init__(self, freq_threshold: PerColumn = 0, max_size: PerColumn = None, num_buckets: PerColumn = None,
                 start_index: int = 0, dtype: Any = pl.Int64, hash_seed: int = 0) -> None:
        self.freq_threshold = _check_count(freq_threshold, "Categorify freq_threshold", 0, allow_none=False)
        self.max_size = _check_count(max_size, "Categorify max_size", 0, allow_none=True)
        self.num_buckets = _check_count(num_buckets, "Categorify num_buckets", 1, allow_none=True)
        if isinstance(start_index, bool) or not isinstance(start_index, int) or start_index < 0:
            raise ValueError(f"Categorify(start_index={start_index!r}): an integer >= 0")
        if isinstance(hash_seed, bool) or not isinstance(hash_seed, int):
            raise TypeError(f"Categorify(hash_seed={hash_seed!r}): an int")
        self.start_index = start_index
        self.dtype = _check_out_dtype(dtype, "Categorify", floats=False)
        self.hash_seed = hash_seed
        self._params = {"freq_threshold": self.freq_threshold, "max_size": self.max_size,
                        "num_buckets": self.num_buckets, "start_index": start_index,
                        "dtype": _enc_dtype(self.dtype), "hash_seed": hash_seed}

    def layout(self, name: str) -> tuple[int, int | None, int, int]:
        """(freq_threshold, max_size, buckets B, start_index) of a column."""
        return (_per(self.freq_threshold, name) or 0, _per(self.max_size, name),
                _per(self.num_buckets, name) or 1, self.start_index)

    def fit(self, lf: pl.LazyFrame, groups: list[Group], ctx: Context) -> State:
        cols = _flat(groups, "Categorify")
        sch = lf.collect_schema()
        out: State = {}
        for name, fc in cols:
            inner, is_list = _cat_inner(sch[fc], name)
            thr, mx, b, s = self.layout(name)
            x = pl.col(fc).explode() if is_list else pl.col(fc)
            counts = (lf.select(x.alias("value")).filter(pl.col("value").is_not_null())
                      .group_by("value").agg(pl.len().cast(pl.Int64).alias("count"))
                      .sort(["count", "value"], descending=[True, False]))
            keep_rest = b > 1 and inner == pl.String  # the strings' buckets go in the table
            if keep_rest:
                df = ctx.collect(counts)
            else:
                q = counts.filter(pl.col("count") >= thr) if thr > 1 else counts
                df = ctx.collect(q.head(mx) if mx is not None else q)
            nv = int((df["count"] >= thr).sum()) if df.height else 0  # a prefix: sorted by count
            if mx is not None:
                nv = min(nv, mx)
            idx = np.arange(nv, dtype=np.int64) + (s + 1 + b)
            if keep_rest and df.height > nv:
                idx = np.concatenate([idx, _hash.string_buckets(df["value"][nv:], self.hash_seed, b) + (s + 1)])
            out[f"vocab.{name}"] = df.head(len(idx)).select(
                "value", pl.Series("index", idx, dtype=pl.Int64), "count")
        return out

    def vocabulary_size(self, state: State, name: str) -> int:
        """The number of vocabulary values of a fitted column (special indices not
        counted)."""
        _, _, b, s = self.layout(name)
        t = _stat_of(state, f"vocab.{name}", "Categorify", name)
        return int((t["index"] >= s + 1 + b).sum())

    def cardinality(self, state: State, name: str) -> int:
        """The largest index + 1: start_index + 1 (null) + B + vocabulary size."""
        _, _, b, s = self.layout(name)
        return s + 1 + b + self.vocabulary_size(state, name)

    def _encode_lists(self, lf: pl.LazyFrame, fc: str, t: str, inner: pl.DataType, table: pl.DataFrame,
                      s: int, b: int, strings_hashed: bool, ctx: Context) -> pl.LazyFrame:
        """Multi-hot: column t = list column fc with each element encoded, as
        queries ladle runs (no list.eval, which Polars' plan visitor cannot show):
        the lists' elements unnested with their row number, joined against the
        vocabulary (left order kept), gathered back into one list per row
        (group_by + implode, row order kept), joined back on the row number. Rows whose list is empty or
        null have no element: they get fc's list cut to nothing (an empty list, or
        null) cast to the output's list type."""
        r, v, k, i = ctx.tmp(), ctx.tmp(), ctx.tmp(), ctx.tmp()
        base = lf.with_row_index(r)
        ex = base.select(r, pl.col(fc).alias(v)).explode(v, empty_as_null=False, keep_nulls=False)
        # maintain_order="left": the elements stay in their lists' order (under
        # SPMD each rank keeps its rows and takes the vocabulary whole)
        ex = ex.join(ctx.table(table.rename({"value": k, "index": i})), left_on=v, right_on=k, how="left",
                     maintain_order="left")
        oov = (pl.lit(s + 1, dtype=pl.Int64) + _hash.bucket_expr(pl.col(v), inner, self.hash_seed, b)
               if b > 1 and not strings_hashed else pl.lit(s + 1, dtype=pl.Int64))
        code = (pl.when(pl.col(v).is_null()).then(pl.lit(s, dtype=pl.Int64))
                .when(pl.col(i).is_not_null()).then(pl.col(i)).otherwise(oov).cast(self.dtype))
        lists = ex.group_by(r, maintain_order=True).agg(code.alias(t))
        out = base.join(lists, on=r, how="left", maintain_order="left")
        empty = pl.col(fc).list.slice(0, 0).cast(pl.List(self.dtype))
        return out.with_columns(pl.coalesce(pl.col(t), empty).alias(t)).drop(r)

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        assert state is not None
        cols = _flat(groups, "Categorify")
        sch = lf.collect_schema()
        outs: list[Col] = []
        for name, fc in cols:
            inner, is_list = _cat_inner(sch[fc], name)
            _, _, b, s = self.layout(name)
            table = _align(_stat_of(state, f"vocab.{name}", "Categorify", name), "value", inner, "Categorify", name)
            table = table.select("value", "index")
            strings_hashed = b > 1 and inner == pl.String
            if strings_hashed:
                new = _unseen(ctx, lf, fc, is_list, table)
                if new.len():
                    extra = pl.DataFrame({"value": new,
                                          "index": _hash.string_buckets(new, self.hash_seed, b) + (s + 1)},
                                         schema={"value": pl.String, "index": pl.Int64})
                    table = pl.concat([table, extra])
            t = ctx.tmp()
            if is_list:
                lf = self._encode_lists(lf, fc, t, inner, table, s, b, strings_hashed, ctx)
            else:
                k, i = ctx.tmp(), ctx.tmp()
                lf = lf.join(ctx.table(table.rename({"value": k, "index": i})), left_on=fc, right_on=k,
                             how="left", maintain_order="left")
                oov = (pl.lit(s + 1, dtype=pl.Int64) + _hash.bucket_expr(pl.col(fc), inner, self.hash_seed, b)
                       if b > 1 and not strings_hashed else pl.lit(s + 1, dtype=pl.Int64))
                lf = lf.with_columns(
                    pl.when(pl.col(fc).is_null()).then(pl.lit(s, dtype=pl.Int64))
                    .when(pl.col(i).is_not_null()).then(pl.col(i))
                    .otherwise(oov).cast(self.dtype).alias(t)
                ).drop(i)
            outs.append((name, t))
        return lf, outs


# ---------------------------------------------------------------------------
# statistics joined back on keys


def _key_name(g: Sequence[str]) -> str:
    return "_".join(g)


def _fold_expr(kfold: int, seed: int) -> pl.Expr:
    return _hash.mix_expr(pl.col(ROW).cast(pl.Int64), seed) % pl.lit(kfold, dtype=pl.Int64)


class TargetEncoding(Operator):
    """The smoothed mean of ``target`` per value of the column (or column group):

        TE_<col>_<target> = (sum + p * prior) / (count + p)

    sum and count over the fit rows of that value whose target is not null, prior
    the target's mean over the fit data (0.0 when it has none). A value not seen at
    fit gets the prior. With p = 0, a value seen with no target also gets the prior.
    Computed in Float64, cast to ``out_dtype``.

    K-fold (kfold > 1): row i of the input (its position, from 0) is in fold
    mix(i, fold_seed) mod kfold (docs/workflow.md, "Folds"). In the training pass
    (``Workflow.transform(data, training=True)``, and ``fit_transform``) a row is
    encoded with the sums and counts of the other folds only (out of fold); any
    other transform uses the statistics of every fit row. A column group ([["a",
    "b"]]) is one key; nulls are a key value like any other. ``target`` may be a
    list: one output column per target.
    """

    stateful = True

    def __init__(self, target: str | Sequence[str], kfold: int = 3, fold_seed: int = 42, p: float = 20.0,
                 out_dtype: Any = pl.Float64) -> None:
        targets = [target] if isinstance(target, str) else list(target)
        if not targets or not all(isinstance(t, str) for t in targets):
            raise TypeError(f"TargetEncoding(target={target!r}): a column name or a list of names")
        if isinstance(kfold, bool) or not isinstance(kfold, int) or kfold < 1:
            raise ValueError(f"TargetEncoding(kfold={kfold!r}): an integer >= 1 (1: no folds)")
        if isinstance(fold_seed, bool) or not isinstance(fold_seed, int):
            raise TypeError(f"TargetEncoding(fold_seed={fold_seed!r}): an int")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not p >= 0 or math.isinf(p):
            raise ValueError(f"TargetEncoding(p={p!r}): a finite number >= 0")
        self.targets = targets
        self.kfold, self.fold_seed, self.p = kfold, fold_seed, float(p)
        self.out_dtype = _check_out_dtype(out_dtype, "TargetEncoding", floats=True)
        self._params = {"target": targets, "kfold": kfold, "fold_seed": fold_seed, "p": self.p,
                        "out_dtype": _enc_dtype(self.out_dtype)}

    @property
    def needs_row(self) -> bool:
        return self.kfold > 1

    def output_names(self, groups: list[list[str]]) -> list[str]:
        return [f"TE_{_key_name(g)}_{t}" for g in groups for t in self.targets]

    def _check_targets(self, ctx: Context) -> None:
        for t in self.targets:
            if t not in ctx.base:
                raise ValueError(f"TargetEncoding: target column {t!r} is not in the data "
                                 f"(its columns: {list(ctx.base.names())})")
            dt = ctx.base[t]
            if not (dt.is_numeric() or dt == pl.Boolean):
                raise TypeError(f"TargetEncoding: target column {t!r} is {dt}, not a number or Boolean")

    @staticmethod
    def _check_keys(g: Group, sch: pl.Schema) -> None:
        for name, fc in g:
            dt = sch[fc]
            if dt.is_nested() or dt == pl.Null:
                raise TypeError(f"TargetEncoding: column {name!r} is {dt}; keys are flat columns")

    def fit(self, lf: pl.LazyFrame, groups: list[Group], ctx: Context) -> State:
        self._check_targets(ctx)
        sch = lf.collect_schema()
        ys = [pl.col(t).cast(F64).alias(f"y{j}") for j, t in enumerate(self.targets)]
        pr = ctx.collect(lf.select([pl.col(t).cast(F64).mean().alias(f"p{j}") for j, t in enumerate(self.targets)]))
        out: State = {"prior": pl.DataFrame(
            {"target": self.targets, "prior": [pr[f"p{j}"][0] for j in range(len(self.targets))]},
            schema={"target": pl.String, "prior": F64})}
        aggs = [e for j in range(len(self.targets))
                for e in (pl.col(f"y{j}").sum().alias(f"sum{j}"),
                          pl.col(f"y{j}").count().cast(pl.Int64).alias(f"count{j}"))]
        for gi, g in enumerate(groups):
            self._check_keys(g, sch)
            ks = [f"k{j}" for j in range(len(g))]
            sel = [pl.col(fc).alias(k) for (_, fc), k in zip(g, ks)] + ys
            if self.kfold > 1:
                sel.append(_fold_expr(self.kfold, self.fold_seed).alias("fold"))
            src = lf.select(sel)
            out[f"totals.{gi}"] = ctx.collect(src.group_by(ks).agg(aggs).sort(ks, nulls_last=True))
            if self.kfold > 1:
                out[f"folds.{gi}"] = ctx.collect(
                    src.group_by(ks + ["fold"]).agg(aggs).sort(ks + ["fold"], nulls_last=True))
        return out

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        assert state is not None  # the target is read at fit only: test data need not have it
        sch = lf.collect_schema()
        priors = dict(zip(state["prior"]["target"], state["prior"]["prior"]))
        oof = ctx.training and self.kfold > 1
        outs: list[Col] = []
        fold_col = None
        if oof:
            fold_col = ctx.tmp()
            lf = lf.with_columns(_fold_expr(self.kfold, self.fold_seed).alias(fold_col))
        for gi, g in enumerate(groups):
            self._check_keys(g, sch)
            gname = _key_name([n for n, _ in g])
            left = [fc for _, fc in g]
            drop: list[str] = []

            def joined(key: str, extra: list[tuple[str, str]]) -> tuple[pl.LazyFrame, dict[str, str]]:
                tab = _stat_of(state, f"{key}.{gi}", "TargetEncoding", gname)
                for j, (name, fc) in enumerate(g):
                    tab = _align(tab, f"k{j}", sch[fc], "TargetEncoding", name)
                ren = {c: ctx.tmp() for c in tab.columns}
                right = [ren[f"k{j}"] for j in range(len(g))] + [ren[r] for _, r in extra]
                new = lf.join(ctx.table(tab.rename(ren)), left_on=left + [lc for lc, _ in extra], right_on=right,
                              how="left", maintain_order="left", nulls_equal=True)
                return new, ren

            lf, tot = joined("totals", [])
            drop += [v for k, v in tot.items() if not k.startswith("k")]
            fol: dict[str, str] = {}
            if oof:
                assert fold_col is not None
                lf, fol = joined("folds", [(fold_col, "fold")])
                drop += [v for k, v in fol.items() if not k.startswith("k") and k != "fold"]
            exprs = []
            for j, t in enumerate(self.targets):
                prior = priors.get(t)
                prior = 0.0 if prior is None else float(prior)
                s = pl.col(tot[f"sum{j}"]).fill_null(0.0)
                c = pl.col(tot[f"count{j}"]).fill_null(0).cast(F64)
                if oof:
                    s = s - pl.col(fol[f"sum{j}"]).fill_null(0.0)
                    c = c - pl.col(fol[f"count{j}"]).fill_null(0).cast(F64)
                if self.p > 0:
                    e = (s + self.p * prior) / (c + self.p)
                else:
                    e = pl.when(c > 0).then(s / c).otherwise(pl.lit(prior, dtype=F64))
                o = ctx.tmp()
                exprs.append(e.cast(self.out_dtype).alias(o))
                outs.append((f"TE_{gname}_{t}", o))
            lf = lf.with_columns(exprs).drop(drop)
        if fold_col is not None:
            lf = lf.drop(fold_col)
        return lf, outs


_GB_STATS = ("count", "sum", "mean", "std", "var", "min", "max", "median")


class JoinGroupby(Operator):
    """Statistics of ``cont_cols`` per value of each selected column (or column
    group), joined back on it. Outputs, for a key named k (a group's names joined
    by "_"): ``k_count`` (the fit rows with that key; 0 for a key not seen at fit)
    and ``k_<col>_<stat>`` for each cont col and stat of sum, mean, std (ddof=1),
    var, min, max, median (null for a key not seen at fit). Nulls are a key value
    like any other."""

    stateful = True

    def __init__(self, cont_cols: str | Sequence[str] = (), stats: Sequence[str] = ("count",)) -> None:
        self.cont_cols = [cont_cols] if isinstance(cont_cols, str) else list(cont_cols)
        self.stats = [stats] if isinstance(stats, str) else list(stats)
        bad = [s for s in self.stats if s not in _GB_STATS]
        if bad or not self.stats:
            raise ValueError(f"JoinGroupby(stats={stats!r}): choose among {list(_GB_STATS)}")
        if any(s != "count" for s in self.stats) and not self.cont_cols:
            raise ValueError("JoinGroupby: stats other than count need cont_cols")
        self._params = {"cont_cols": self.cont_cols, "stats": self.stats}

    def _names(self, g: Sequence[str]) -> list[tuple[str, str]]:
        """(output name, statistic column) pairs, in output order."""
        k = _key_name(g)
        out = [(f"{k}_count", "count")] if "count" in self.stats else []
        for ci, c in enumerate(self.cont_cols):
            out += [(f"{k}_{c}_{s}", f"{s}{ci}") for s in self.stats if s != "count"]
        return out

    def output_names(self, groups: list[list[str]]) -> list[str]:
        return [n for g in groups for n, _ in self._names(g)]

    def _check(self, ctx: Context) -> None:
        for c in self.cont_cols:
            if c not in ctx.base:
                raise ValueError(f"JoinGroupby: column {c!r} is not in the data "
                                 f"(its columns: {list(ctx.base.names())})")
            _require_numeric("JoinGroupby", c, ctx.base[c])

    def fit(self, lf: pl.LazyFrame, groups: list[Group], ctx: Context) -> State:
        self._check(ctx)
        sch = lf.collect_schema()
        out: State = {}
        for gi, g in enumerate(groups):
            TargetEncoding._check_keys(g, sch)
            ks = [f"k{j}" for j in range(len(g))]
            src = lf.select([pl.col(fc).alias(k) for (_, fc), k in zip(g, ks)]
                            + [pl.col(c).alias(f"c{ci}") for ci, c in enumerate(self.cont_cols)])
            aggs = [pl.len().cast(pl.Int64).alias("count")] if "count" in self.stats else []
            for ci in range(len(self.cont_cols)):
                aggs += [getattr(pl.col(f"c{ci}"), s)().alias(f"{s}{ci}") for s in self.stats if s != "count"]
            out[f"stats.{gi}"] = ctx.collect(src.group_by(ks).agg(aggs).sort(ks, nulls_last=True))
        return out

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        assert state is not None  # cont_cols are read at fit only
        sch = lf.collect_schema()
        outs: list[Col] = []
        for gi, g in enumerate(groups):
            TargetEncoding._check_keys(g, sch)
            names = [n for n, _ in g]
            tab = _stat_of(state, f"stats.{gi}", "JoinGroupby", _key_name(names))
            for j, (name, fc) in enumerate(g):
                tab = _align(tab, f"k{j}", sch[fc], "JoinGroupby", name)
            ren = {c: ctx.tmp() for c in tab.columns}
            lf = lf.join(ctx.table(tab.rename(ren)), left_on=[fc for _, fc in g],
                         right_on=[ren[f"k{j}"] for j in range(len(g))], how="left", maintain_order="left",
                         nulls_equal=True)
            for out_name, stat_col in self._names(names):
                if stat_col == "count":
                    o = ctx.tmp()
                    lf = lf.with_columns(pl.col(ren["count"]).fill_null(0).alias(o)).drop(ren["count"])
                    outs.append((out_name, o))
                else:
                    outs.append((out_name, ren[stat_col]))
        return lf, outs


class JoinExternal(Operator):
    """Columns of an external table joined on the selected columns ``on``: the output
    is the selected columns plus the external ones. ``df_ext``: a DataFrame, a
    LazyFrame, or Parquet path(s) (scanned; under SPMD each rank reads its share, as
    for any scan). ``on_ext``: the table's key names when they differ; ``columns_ext``:
    which of its columns to bring (default: all but the keys); ``how``: "left" (rows
    without a match get nulls) or "inner" (they are dropped). Duplicate keys in the
    table repeat the input's rows, as any join does. save() stores a DataFrame or
    LazyFrame as a Parquet file and paths as paths."""

    def __init__(self, df_ext: pl.DataFrame | pl.LazyFrame | str | Path | Sequence[str | Path],
                 on: str | Sequence[str], how: str = "left", on_ext: str | Sequence[str] | None = None,
                 columns_ext: Sequence[str] | None = None) -> None:
        if how not in ("left", "inner"):
            raise ValueError(f"JoinExternal(how={how!r}): 'left' or 'inner'")
        self.on = [on] if isinstance(on, str) else list(on)
        self.on_ext = self.on if on_ext is None else ([on_ext] if isinstance(on_ext, str) else list(on_ext))
        if not self.on or len(self.on) != len(self.on_ext):
            raise ValueError(f"JoinExternal: on={on!r} and on_ext={on_ext!r} must name as many columns")
        self.paths: list[str] | None = None
        if isinstance(df_ext, (pl.DataFrame, pl.LazyFrame)):
            self.df_ext = df_ext
        elif isinstance(df_ext, (str, Path)) or (isinstance(df_ext, (list, tuple)) and df_ext):
            self.paths = [str(df_ext)] if isinstance(df_ext, (str, Path)) else [str(p) for p in df_ext]
            self.df_ext = pl.scan_parquet(self.paths)
        else:
            raise TypeError(f"JoinExternal: df_ext is a polars DataFrame/LazyFrame or Parquet path(s), "
                            f"got {type(df_ext).__name__}")
        ext = self.df_ext.collect_schema()
        for c in self.on_ext:
            if c not in ext:
                raise ValueError(f"JoinExternal: key {c!r} is not a column of the external table ({list(ext.names())})")
        if columns_ext is None:
            self.columns_ext = [c for c in ext.names() if c not in self.on_ext]
        else:
            self.columns_ext = list(columns_ext)
            for c in self.columns_ext:
                if c not in ext:
                    raise ValueError(f"JoinExternal: column {c!r} is not in the external table ({list(ext.names())})")
        self.how = how

    def output_names(self, groups: list[list[str]]) -> list[str]:
        return [n for g in groups for n in g] + self.columns_ext

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        cols = _flat(groups, "JoinExternal")
        have = dict(cols)
        sch = lf.collect_schema()
        ext_sch = self.df_ext.collect_schema()
        for o, oe in zip(self.on, self.on_ext):
            if o not in have:
                raise ValueError(f"JoinExternal: key {o!r} is not among the selected columns ({list(have)})")
            if sch[have[o]] != ext_sch[oe]:
                raise TypeError(f"JoinExternal: key {o!r} is {sch[have[o]]} in the data but {ext_sch[oe]} "
                                "in the external table")
        clash = [c for c in self.columns_ext if c in have]
        if clash:
            raise ValueError(f"JoinExternal: external column(s) {clash} have the names of selected columns")
        ext = ctx.table(self.df_ext) if isinstance(self.df_ext, pl.DataFrame) else self.df_ext
        keys = [ctx.tmp() for _ in self.on_ext]
        vals = [ctx.tmp() for _ in self.columns_ext]
        ext = ext.select([pl.col(c).alias(k) for c, k in zip(self.on_ext, keys)]
                         + [pl.col(c).alias(v) for c, v in zip(self.columns_ext, vals)])
        lf = lf.join(ext, left_on=[have[o] for o in self.on], right_on=keys, how=self.how,  # type: ignore[arg-type]
                     maintain_order="left")
        return lf, cols + list(zip(self.columns_ext, vals))

    def to_config(self, save_frame: SaveFrame) -> dict[str, Any]:
        d: dict[str, Any] = {"on": self.on, "on_ext": self.on_ext, "how": self.how, "columns_ext": self.columns_ext}
        if self.paths is not None:
            d["paths"] = self.paths
        else:
            df = self.df_ext.collect() if isinstance(self.df_ext, pl.LazyFrame) else self.df_ext
            d["frame"] = save_frame(df)
        return d

    @classmethod
    def from_config(cls, cfg: dict[str, Any], load_frame: LoadFrame) -> "JoinExternal":
        src: Any = cfg["paths"] if "paths" in cfg else load_frame(cfg["frame"])
        return cls(src, on=cfg["on"], how=cfg["how"], on_ext=cfg["on_ext"], columns_ext=cfg["columns_ext"])

    def __repr__(self) -> str:
        return f"JoinExternal(on={self.on!r}, how={self.how!r}, columns_ext={self.columns_ext!r})"


# ---------------------------------------------------------------------------
# expressions and names


def _substitute(node: Any, col: str) -> Any:
    if node == "Element":
        return {"Column": col}
    if isinstance(node, dict):
        return {k: _substitute(v, col) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, col) for v in node]
    return node


def _has_element(node: Any) -> bool:
    if node == "Element":
        return True
    if isinstance(node, dict):
        return any(_has_element(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_element(v) for v in node)
    return False


class LambdaOp(Operator):
    """Each selected column replaced by an expression of it.

    ``f``: a Polars expression in which ``pl.element()`` stands for the column
    (``LambdaOp(pl.element().clip(0, 100) * 2)``), or a function from the column's
    expression to a new one (``LambdaOp(lambda c: c.str.len_bytes())``). Other
    columns the expression names (``pl.col("other")``) are the input data's. The
    expression form is saved as Polars' JSON serialisation (pl.Expr.meta.serialize
    (format="json"), read back with pl.Expr.deserialize); the function form cannot be
    saved. ladle runs the result when it runs every part of the expression."""

    def __init__(self, f: pl.Expr | Callable[[pl.Expr], pl.Expr]) -> None:
        if isinstance(f, pl.Expr):
            tree = json.loads(expr_to_json(f))
            if not _has_element(tree):
                raise ValueError("LambdaOp: write the column as pl.element() in the expression "
                                 "(e.g. pl.element().log1p()), or give a function of the column")
            self._tree: Any = tree
            self.f: Any = f
        elif callable(f):
            self._tree = None
            self.f = f
        else:
            raise TypeError(f"LambdaOp: a polars expression or a function, got {type(f).__name__}")

    def _expr(self, fc: str) -> pl.Expr:
        if self._tree is not None:
            return expr_from_json(json.dumps(_substitute(self._tree, fc)))
        e = self.f(pl.col(fc))
        if not isinstance(e, pl.Expr):
            raise TypeError(f"LambdaOp: the function returned {type(e).__name__}, not a polars expression")
        return e

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        cols = _flat(groups, "LambdaOp")
        outs: list[Col] = []
        exprs: list[pl.Expr] = []
        for name, fc in cols:
            t = ctx.tmp()
            exprs.append(self._expr(fc).alias(t))
            outs.append((name, t))
        return (lf.with_columns(exprs) if exprs else lf), outs

    def to_config(self, save_frame: SaveFrame) -> dict[str, Any]:
        if self._tree is None:
            raise ValueError(
                f"LambdaOp holding a Python function ({getattr(self.f, '__qualname__', self.f)!r}) cannot be "
                "saved (no pickle): give the LambdaOp a Polars expression with pl.element() instead")
        return {"expr_json": json.dumps(self._tree)}

    @classmethod
    def from_config(cls, cfg: dict[str, Any], load_frame: LoadFrame) -> "LambdaOp":
        return cls(expr_from_json(cfg["expr_json"]))

    def __repr__(self) -> str:
        return f"LambdaOp({self.f})"


class Rename(Operator):
    """Renames the selected columns: ``name`` (one column), ``prefix`` and/or
    ``postfix``, or a function ``f`` from the old name to the new one (not
    saveable). Nothing is computed."""

    def __init__(self, f: Callable[[str], str] | None = None, *, prefix: str = "", postfix: str = "",
                 name: str | None = None) -> None:
        if f is None and not prefix and not postfix and name is None:
            raise ValueError("Rename: give f, prefix, postfix or name")
        self.f, self.prefix, self.postfix, self.name = f, prefix, postfix, name

    def _new(self, old: str, count: int) -> str:
        if self.name is not None:
            if count != 1:
                raise ValueError(f"Rename(name={self.name!r}) renames one column, got {count}")
            return self.name
        n = self.f(old) if self.f is not None else old
        return f"{self.prefix}{n}{self.postfix}"

    def output_names(self, groups: list[list[str]]) -> list[str]:
        names = [n for g in groups for n in g]
        return [self._new(n, len(names)) for n in names]

    def transform(self, lf: pl.LazyFrame, groups: list[Group], state: State | None,
                  ctx: Context) -> tuple[pl.LazyFrame, list[Col]]:
        cols = _flat(groups, "Rename")
        return lf, [(self._new(n, len(cols)), fc) for n, fc in cols]

    def to_config(self, save_frame: SaveFrame) -> dict[str, Any]:
        if self.f is not None:
            raise ValueError("Rename with a function cannot be saved: use prefix/postfix/name")
        return {"prefix": self.prefix, "postfix": self.postfix, "name": self.name}

    @classmethod
    def from_config(cls, cfg: dict[str, Any], load_frame: LoadFrame) -> "Rename":
        return cls(prefix=cfg["prefix"], postfix=cfg["postfix"], name=cfg["name"])

    def __repr__(self) -> str:
        return f"Rename(prefix={self.prefix!r}, postfix={self.postfix!r}, name={self.name!r})"


OPERATORS: dict[str, type[Operator]] = {
    c.__name__: c for c in (Categorify, Normalize, NormalizeMinMax, FillMissing, FillMedian, Clip, LogOp,
                            HashBucket, Bucketize, TargetEncoding, JoinGroupby, JoinExternal, LambdaOp, Rename)
}
