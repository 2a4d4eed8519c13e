"""ladle.persisted_to_torch: a Result's columns as torch tensors, without copies.

    res = engine.execute(lf)
    t = ladle.persisted_to_torch(res)          # {"x": tensor, "y": tensor, ...}
    t = ladle.persisted_to_torch(res, engine=spmd, ensure_sharded=True)

Each tensor shares the buffer ladle computed (on the result's device: a GPU
engine's result gives CUDA tensors) and holds its own reference to it, so the
tensors outlive the Result. The Result is consumed: any later use of it raises
LadleError naming persisted_to_torch. A column that a query assembled from several
partitions (a host result of a multi-threaded scan, say) is concatenated once,
since a tensor is one buffer; ``res.column(name)`` through DLPack does the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from . import _native as N
from ._errors import LadleError

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from .result import Result

_TORCH_TYPES = (
    "Boolean", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
    "Float32", "Float64",
)


class _Consumed:
    """Stands in for a consumed Result's native handle: every use raises."""

    def __init__(self, by: str) -> None:
        self._by = by

    def __getattr__(self, name: str) -> Any:
        raise LadleError(
            N.LADLE_EINVAL,
            f"this ladle.Result was consumed by {self._by}: its columns now belong to the "
            "tensors it returned (run the query again for another copy)",
        )


def _ranks(engine: Any) -> tuple[int, int]:
    """(rank, nranks): the engine's when it has ranks, else torch.distributed's when it
    is initialised, else (0, 1)."""
    if engine is not None and hasattr(engine, "nranks"):
        return int(engine.rank), int(engine.nranks)
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return int(dist.get_rank()), int(dist.get_world_size())
    return 0, 1


def persisted_to_torch(
    result: "Result",
    engine: Any = None,
    columns: Iterable[str] | None = None,
    ensure_sharded: bool = False,
) -> dict[str, "torch.Tensor"]:
    """The result's columns as ``{name: tensor}``: zero-copy views on the result's device.

    result
        A ladle.Result (``engine.execute(lf)``). It is consumed: a later use raises.
    engine
        The engine that made it; with several ranks (ladle.SPMDEngine) it gives this
        rank and the rank count for ``ensure_sharded``. Without one, torch.distributed's
        when it is initialised.
    columns
        The columns to hand over, in this order (default: all). The others are freed
        with the result.
    ensure_sharded
        A replicated result (every rank holds every row: ``result.sharded`` is False)
        is cut down to this rank's share, split as ``torch.chunk(t, nranks)`` splits
        (views of the whole column; a rank past the last chunk gets empty tensors). A
        sharded result comes back unchanged.

    Columns must be numeric or Boolean without nulls; any other raises TypeError
    naming the column and why, before anything is consumed."""
    from .result import Result

    if not isinstance(result, Result):
        raise TypeError(f"persisted_to_torch: a ladle.Result (engine.execute(lf)), not {type(result).__name__}")
    if isinstance(result._native, _Consumed):
        result._native.num_rows  # raises, naming who consumed it
    import torch

    schema = result.schema
    names = list(schema.names())
    if columns is None:
        picked = names
    else:
        if isinstance(columns, str):
            raise TypeError("persisted_to_torch: columns= is a list of names, not one string")
        picked = list(columns)
        for c in picked:
            if c not in names:
                raise KeyError(f"persisted_to_torch: no column {c!r} in the result (columns: {names})")
        if len(set(picked)) != len(picked):
            raise ValueError(f"persisted_to_torch: columns={picked} names a column twice")
    for c in picked:
        dt = schema[c]
        if str(dt) not in _TORCH_TYPES:
            raise TypeError(
                f"persisted_to_torch: column {c!r} is {dt}; torch takes numeric and Boolean "
                "columns (cast it, or encode it first: ladle.workflow.Categorify for strings)"
            )
    out: dict[str, torch.Tensor] = {}
    for c in picked:
        try:
            out[c] = torch.from_dlpack(result.column(c))
        except TypeError as e:  # the engine refuses a column with nulls, naming it
            out.clear()  # nothing consumed: the tensors made so far are dropped
            why = str(e).removeprefix("dlpack: ")
            raise TypeError(f"persisted_to_torch: {why} (or drop_nulls, or ladle.workflow.FillMissing)") from None
    sharded = result.sharded
    result._native = _Consumed("ladle.persisted_to_torch")  # the tensors hold the buffers
    if ensure_sharded and not sharded:
        rank, nranks = _ranks(engine)
        if nranks > 1:
            for c, t in out.items():
                parts = torch.chunk(t, nranks)
                out[c] = parts[rank] if rank < len(parts) else t[:0]
    return out


def _cuda_library() -> str:
    """The path of ladle's CUDA library, as the engine finds it: $LADLE_CUDA_LIB, else
    beside this package's extension."""
    import os
    from pathlib import Path

    env = os.environ.get("LADLE_CUDA_LIB")
    path = Path(env) if env else Path(__file__).resolve().parent / "libladle_cuda.so"
    if not path.is_file():
        raise LadleError(
            N.LADLE_EDEVICE,
            f"ladle.torch_allocator: no CUDA library at {path} (ladle builds libladle_cuda.so "
            "when nvcc is on PATH at build time; LADLE_CUDA_LIB names another)",
        )
    return str(path)


def torch_allocator() -> Any:
    """A torch CUDA allocator over ladle's device memory pool:

        torch.cuda.memory.change_current_allocator(ladle.torch_allocator())

    before torch allocates anything on the GPU. torch's tensors then come from the
    device's default stream-ordered pool (cudaMallocAsync), the pool ladle's GPU
    engines allocate from, so one process keeps one pool instead of torch's caching
    allocator and ladle's each holding memory the other cannot use. torch's memory
    statistics (memory_allocated and the like) are not kept for a pluggable
    allocator; ``ladle.torch_allocator_bytes()`` gives (bytes held now, peak)."""
    import torch

    return torch.cuda.memory.CUDAPluggableAllocator(_cuda_library(), "ladle_torch_malloc", "ladle_torch_free")


def torch_allocator_bytes() -> tuple[int, int]:
    """(bytes torch holds through ladle.torch_allocator() now, the most it held)."""
    import ctypes

    lib = ctypes.CDLL(_cuda_library())
    cur, peak = ctypes.c_int64(), ctypes.c_int64()
    lib.ladle_torch_bytes(ctypes.byref(cur), ctypes.byref(peak))
    return int(cur.value), int(peak.value)
