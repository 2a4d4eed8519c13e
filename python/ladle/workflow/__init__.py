"""ladle.workflow: feature operators with fit and transform, NVTabular style, whose
statistics are ladle queries and whose transform is a Polars LazyFrame ladle runs
(on its CPU, a GPU or ranks) and Polars runs alike.

    import ladle, polars as pl
    from ladle.workflow import Workflow, Categorify, Normalize, FillMedian, TargetEncoding

    eng = ladle.Engine()
    cats = ["user", "item"] >> Categorify(freq_threshold=2)
    te = ["item"] >> TargetEncoding("rating", kfold=5)
    conts = ["price"] >> FillMedian() >> Normalize()
    wf = Workflow(cats + te + conts + ["rating"])
    train = wf.fit_transform("train/", engine=eng).collect(engine=eng)   # out-of-fold TE
    valid = wf.transform("valid/").collect(engine=eng)                   # full statistics
    wf.save("wf/"); wf2 = Workflow.load("wf/")

docs/workflow.md describes every operator, the index layout, the hashing and
folds, the saved format and what ladle does not run (multi-hot list columns).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Callable

import polars as pl

from . import _hash
from ._core import (
    FORMAT_VERSION,
    ColumnSelector,
    Context,
    Data,
    FormatVersionError,
    Node,
    NotFittedError,
    Workflow,
    as_lazy,
    collect,
    output_names,
    trace_names,
)
from ._ops import (
    Bucketize,
    Categorify,
    Clip,
    FillMedian,
    FillMissing,
    HashBucket,
    JoinExternal,
    JoinGroupby,
    LambdaOp,
    LogOp,
    Normalize,
    NormalizeMinMax,
    Operator,
    Rename,
    TargetEncoding,
)


def embedding_dim(cardinality: int) -> int:
    """ladle's rule for an embedding's width: 6 * cardinality ** 0.25, rounded up to
    a multiple of 8 (tensor cores and vector units like multiples of 8), at least 8
    and at most 512. 2 -> 8, 100 -> 24, 10^4 -> 64, 10^6 -> 192, 10^9 -> 512."""
    if cardinality < 1:
        raise ValueError(f"embedding_dim({cardinality}): a cardinality >= 1")
    return int(min(512, max(8, 8 * math.ceil(6.0 * cardinality ** 0.25 / 8))))


def get_embedding_sizes(workflow: Workflow, dim: Callable[[int], int] = embedding_dim) -> dict[str, tuple[int, int]]:
    """(cardinality, embedding width) of every output column of the workflow made by
    a Categorify or a HashBucket (and since then only renamed), by its output name.
    A Categorify column's cardinality is its largest index + 1: start_index + 1
    (null) + the out-of-vocabulary slots (num_buckets, or 1) + the vocabulary; a
    HashBucket column's is num_buckets. The width is ``dim(cardinality)``
    (embedding_dim by default)."""
    out: dict[str, tuple[int, int]] = {}
    for name, origin in trace_names(workflow.output, lambda op: isinstance(op, (Categorify, HashBucket))):
        if origin is None:
            continue
        node, col = origin
        op = node.op
        if isinstance(op, Categorify):
            card = op.cardinality(workflow.state_of(node), col)
        else:
            card = op.buckets(col)
        out[name] = (card, int(dim(card)))
    return out


_KEY = "__ladle_wf_key"
_RID = "__ladle_wf_rid"
_FILE = "__ladle_wf_file"


def shuffle_key(seed: int) -> pl.Expr:
    """The shuffling key write_shuffled sorts by: the workflow mix of the row number
    (an Int64 both engines compute alike). Needs the row number in column
    "__ladle_wf_rid"."""
    return _hash.mix_expr(pl.col(_RID).cast(pl.Int64), seed)


def write_shuffled(data: Data, out_dir: str | os.PathLike, n_files: int, *, engine: Any = None, seed: int = 0,
                   rank: int | None = None, compression: str = "zstd",
                   row_group_size: int | None = None) -> list[Path]:
    """Writes ``data`` (e.g. a workflow's transform) to ``n_files`` Parquet files
    under ``out_dir``, its rows in a seeded random order: row i (its position in
    data) gets the key mix(i, seed) (docs/workflow.md, "Hashing"); the rows are
    sorted by (key, i) and row goes to file key mod n_files, in that order. The
    same data and seed give the same files on every engine.

    engine
        None: Polars runs it and writes with Polars' writer. A ladle.Engine runs it
        and writes with ladle's (Result.write_parquet). A ladle.SPMDEngine sorts
        across the ranks (a global shuffle: each rank then holds a range of keys
        drawn from every rank's rows) and each rank writes its own n_files files.
    rank
        Names the files part-r<rank>-<j>.parquet (default: the SPMD engine's rank;
        without one, part-<j>.parquet).

    Returns the paths this process wrote."""
    if isinstance(n_files, bool) or not isinstance(n_files, int) or n_files < 1:
        raise ValueError(f"write_shuffled(n_files={n_files!r}): an integer >= 1")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"write_shuffled(seed={seed!r}): an int")
    lf = as_lazy(data)
    cols = lf.collect_schema().names()
    for c in (_KEY, _RID, _FILE):
        if c in cols:
            raise ValueError(f"write_shuffled: the data has a column named {c!r}, which it uses itself")
    ctx = Context(engine, False)
    if rank is None and ctx.nranks > 1:
        rank = ctx.rank
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / (f"part-r{rank:04d}-{j:05d}.parquet" if rank is not None else f"part-{j:05d}.parquet")
             for j in range(n_files)]
    keyed = lf.with_row_index(_RID).with_columns(shuffle_key(seed).alias(_KEY))
    nf = pl.lit(n_files, dtype=pl.Int64)
    from ..engine import Engine as LadleEngine

    if engine is None or (isinstance(engine, LadleEngine) and ctx.nranks <= 1):
        # one process: the rows sorted by (file, key, row) once, each file then a
        # slice of them (the same rows in the same order as a filter of file j
        # over the rows sorted by (key, row), without a pass per file)
        ordered = keyed.with_columns((pl.col(_KEY) % nf).alias(_FILE)).sort([_FILE, _KEY, _RID])
        if engine is None:
            whole: Any = ordered.collect()
            sizes = whole.group_by(_FILE).len()
        else:
            whole = engine.execute(ordered)
            sizes = engine.execute(whole.lazy().group_by(_FILE).len()).to_polars()
        count = dict(zip(sizes[_FILE].to_list(), sizes["len"].to_list()))
        start = 0
        for j, path in enumerate(paths):
            n = int(count.get(j, 0))
            piece = whole.lazy().slice(start, n).drop([_KEY, _RID, _FILE])
            part = piece.collect() if engine is None else engine.execute(piece)
            part.write_parquet(path, compression=compression, row_group_size=row_group_size)
            start += n
    elif isinstance(engine, LadleEngine):
        # across ranks: sorted by (key, row) globally, each rank's range of keys
        # cut into its files (the same queries on every rank)
        res = engine.execute(keyed.sort([_KEY, _RID]))
        for j, path in enumerate(paths):
            part = engine.execute(res.lazy().filter(pl.col(_KEY) % nf == j).drop([_KEY, _RID]))
            part.write_parquet(path, compression=compression, row_group_size=row_group_size)
    else:
        df = keyed.sort([_KEY, _RID]).collect(engine=engine)
        for j, path in enumerate(paths):
            part = df.filter(pl.col(_KEY) % nf == j).drop([_KEY, _RID])
            part.write_parquet(path, compression=compression, row_group_size=row_group_size)  # type: ignore[arg-type]
    return paths


__all__ = [
    "FORMAT_VERSION",
    "Bucketize",
    "Categorify",
    "Clip",
    "ColumnSelector",
    "FillMedian",
    "FillMissing",
    "FormatVersionError",
    "HashBucket",
    "JoinExternal",
    "JoinGroupby",
    "LambdaOp",
    "LogOp",
    "Node",
    "Normalize",
    "NormalizeMinMax",
    "NotFittedError",
    "Operator",
    "Rename",
    "TargetEncoding",
    "Workflow",
    "collect",
    "embedding_dim",
    "get_embedding_sizes",
    "output_names",
    "shuffle_key",
    "write_shuffled",
]
