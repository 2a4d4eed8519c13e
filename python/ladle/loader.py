"""ladle.Loader: shuffled batches of tensors for a training loop, the same number on
every rank (DDP-safe), prepared ahead on a background thread.

    loader = ladle.Loader(engine.execute(lf), batch_size=4096, device="cuda")
    for epoch in range(epochs):
        loader.set_epoch(epoch)                 # a fresh shuffle, the same on every rank
        for batch in loader:                    # {"x": tensor, "ids": (values, offsets), ...}
            ...

Sources
    a ladle.Result, a dict of tensors, a polars LazyFrame (or DataFrame) run on
    ``engine``, or Parquet files (a path, a directory, a glob or a list) streamed
    by row group with a window shuffle, never loaded whole.

Ranks
    ``rank=``/``world_size=`` when given, else the SPMDEngine's (``engine``), else
    torch.distributed's when initialised, else one rank. A *replicated* source (every
    rank holds every row: a dict, a LazyFrame on a plain Engine, a Result that is not
    ``sharded``) is split by the loader: every rank draws the same permutation of all
    rows from (seed, epoch) and takes its own contiguous part of it (the parts differ
    by at most one row). A *sharded* source (``Result.sharded``, or ``sharded=True``)
    is this rank's rows; the ranks' row counts are agreed once, at construction,
    through a collective (the SPMDEngine's allgather, or torch.distributed's
    all_gather on the backend's device) or given as ``shard_rows=``. Parquet files
    are dealt out by row groups; every rank computes every rank's rows from the
    footers, so no communication is needed.

Equal batch counts (what keeps DDP from hanging when shards are uneven)
    drop_last=True: every rank yields min over ranks of (rows // batch_size) full
    batches; the rows past those at the end of each rank's epoch order are dropped.
    drop_last=False: every rank yields ceil(max rows / batch_size) batches of the same
    sizes (the last one may be short, equally on every rank): a rank with fewer rows
    than the largest pads its epoch order to the largest rank's row count by repeating
    its own rows from the start of its epoch order (its first rows, cyclically), so the
    padding rows are rows this rank already yields in the same epoch. A rank that holds
    no rows at all repeats rows it can reach: the first rows of its position in the
    global order (replicated sources) or of the epoch's first row group (Parquet); a
    sharded Result with an empty rank and drop_last=False raises ValueError, naming the
    rank. An empty source (no rows on any rank) gives zero batches.

Batches
    ``dict[str, Tensor]`` in the order of ``columns``; a List column is a tuple
    ``(values, offsets)`` with int64 offsets of length B (each row's first position in
    values), what ``torch.nn.EmbeddingBag(...)(values, offsets)`` takes. Without shuffle
    batches of an in-memory source may be views of it: do not write into them.

How
    Shuffles: the permutation of an epoch is torch.randperm with a CPU generator seeded
    from (seed, epoch) for a host source, and the order of splitmix64(i + key) (a
    bijection, so no ties; the same on any GPU) computed by a sort on the GPU for a GPU
    source; every rank of a job must hold its source on the same kind of device. Once an
    epoch is handed over the producer makes the next epoch's permutation ahead.
    Gathers: ``index_select`` per column over about 64K rows at a time on the host,
    cut into batch views (measured on a 2-core VM: as fast or faster than a gather per
    batch below 64K-row batches and than permuting every row once per epoch, which
    also needs a copy of the data); for a CUDA output about 2M rows at a time
    (``gather_rows``), so a batch costs no kernel launch. Host to GPU: pinned memory, ``non_blocking`` copies on a
    side stream, the consumer's current stream waits on an event and the tensors are
    ``record_stream``-ed to it.
    Parquet: the units are (file, row group) with row counts from the footers
    (pyarrow.parquet.read_metadata); each epoch the units are shuffled from (seed,
    epoch) alike on every rank and dealt to ranks balanced by rows (each to the rank
    with the fewest rows so far); a rank reads its units one at a time with ladle's
    Parquet scan asked for that one row group (``_native.scan_parquet``'s unit range:
    only its pages are read and decoded), gathers them into a window of
    ``shuffle_window`` rows, draws a
    permutation of the window, hands out all but window // 2 of its rows as batches
    (one gather per batch) and keeps those back to mix with the next row groups.
    The thread: a daemon thread per iteration, stopped and joined when the iteration
    ends early (break, an exception, garbage collection of the iterator, interpreter
    exit); an exception in it is raised in the consumer, after the batches made before.
"""

from __future__ import annotations

import atexit
import collections
import functools
import glob as _glob
import heapq
import os
import queue
import threading
import warnings
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, NamedTuple, Sequence, Union

import numpy as np
import polars as pl
import torch
from torch.utils.data import IterableDataset

if TYPE_CHECKING:  # pragma: no cover
    from .result import Result

__all__ = ["Loader"]

Batch = dict[str, Union[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]]
Source = Union["Result", Mapping[str, Any], pl.LazyFrame, pl.DataFrame, str, os.PathLike, Sequence[Any]]

_M64 = (1 << 64) - 1
_DEFAULT_WINDOW = 1 << 20

# polars types a column may have: numeric and Boolean (Int128/UInt128 and Decimal have
# no torch type)
_PL_OK = (pl.Boolean, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64,
          pl.Float16, pl.Float32, pl.Float64)


class _CSR(NamedTuple):
    """A List column: row i is values[offsets[i]:offsets[i + 1]] (offsets: n + 1 int64)."""

    values: torch.Tensor
    offsets: torch.Tensor


Col = Union[torch.Tensor, _CSR]


# ------------------------------------------------------------------ seeds, permutations


def _splitmix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _key(*parts: int) -> int:
    """A 63-bit seed from integers (seed, epoch, purpose, rank ...): the same on every
    process, unlike hash()."""
    h = 0x6A09E667F3BCC908
    for p in parts:
        h = _splitmix(h ^ (int(p) & _M64))
    return h & ((1 << 63) - 1)


def _signed(c: int) -> int:
    return c - (1 << 64) if c >= 1 << 63 else c


def _lsr(z: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 (torch's >> is arithmetic)."""
    return (z >> k) & ((1 << (64 - k)) - 1)


def _hash_permutation(n: int, key: int, device: torch.device) -> torch.Tensor:
    """A permutation of range(n) computed on ``device``: the order of splitmix64(i + key),
    a bijection of 64-bit integers, so the keys are distinct and the sort is the same on
    any device and any number of threads. Used for sources on a GPU, where a CPU
    randperm would cost a host pass and a copy per epoch."""
    z = torch.arange(n, dtype=torch.int64, device=device)
    z = z + _signed((key + 0x9E3779B97F4A7C15) & _M64)
    z = (z ^ _lsr(z, 30)) * _signed(0xBF58476D1CE4E5B9)
    z = (z ^ _lsr(z, 27)) * _signed(0x94D049BB133111EB)
    z = z ^ _lsr(z, 31)
    return torch.argsort(z, stable=True)


def _permutation(n: int, key: int, device: torch.device) -> torch.Tensor:
    """A permutation of range(n) from key: torch.randperm with a seeded CPU generator
    for a host source, _hash_permutation on a GPU."""
    if device.type == "cpu":
        g = torch.Generator()
        g.manual_seed(key)
        return torch.randperm(n, generator=g)
    return _hash_permutation(n, key, device)


# ----------------------------------------------------------------------- row operations


def _nrows(c: Col) -> int:
    return int(c.offsets.shape[0] - 1) if isinstance(c, _CSR) else int(c.shape[0])


def _take(c: Col, idx: torch.Tensor, out: torch.Tensor | None = None) -> Col:
    """Rows idx of c (a gather on c's device)."""
    if not isinstance(c, _CSR):
        if out is not None:
            return torch.index_select(c, 0, idx, out=out)
        return c.index_select(0, idx)
    starts = c.offsets.index_select(0, idx)
    lens = c.offsets.index_select(0, idx + 1) - starts
    offs = torch.zeros(idx.shape[0] + 1, dtype=torch.int64, device=idx.device)
    torch.cumsum(lens, 0, out=offs[1:])
    total = int(offs[-1])
    if total == 0:
        return _CSR(c.values[:0], offs)
    # element j of the output row k is values[starts[k] + j]: position p of the
    # output reads p + (starts[k] - offs[k])
    shift = torch.repeat_interleave(starts - offs[:-1], lens, output_size=total)
    pos = torch.arange(total, dtype=torch.int64, device=idx.device) + shift
    return _CSR(c.values.index_select(0, pos), offs)


def _slice(c: Col, s: int, e: int) -> Col:
    """Rows s..e of c as views (a List column's offsets rebased to 0)."""
    if not isinstance(c, _CSR):
        return c[s:e]
    o = c.offsets[s : e + 1]
    lo, hi = int(o[0]), int(o[-1])
    return _CSR(c.values[lo:hi], o - lo if lo else o)


def _cat(parts: list[Col]) -> Col:
    if len(parts) == 1:
        return parts[0]
    if not isinstance(parts[0], _CSR):
        return torch.cat(parts)  # type: ignore[arg-type]
    vals, offs, at = [], [], 0
    for p in parts:
        assert isinstance(p, _CSR)
        lo, hi = int(p.offsets[0]), int(p.offsets[-1])
        vals.append(p.values[lo:hi])
        offs.append(p.offsets[:-1] - lo + at)
        at += hi - lo
    offs.append(torch.tensor([at], dtype=torch.int64, device=parts[0].offsets.device))
    return _CSR(torch.cat(vals), torch.cat(offs))


def _output(c: Col) -> Any:
    """A column as a batch holds it: a tensor, or (values, offsets of length B)."""
    if not isinstance(c, _CSR):
        return c
    lo = int(c.offsets[0]) if c.offsets.shape[0] else 0
    if lo:
        return (c.values[lo : int(c.offsets[-1])], c.offsets[:-1] - lo)
    return (c.values[: int(c.offsets[-1])] if c.offsets.shape[0] else c.values[:0], c.offsets[:-1])


def _table_take(t: dict[str, Col], idx: torch.Tensor) -> dict[str, Col]:
    return {k: _take(c, idx) for k, c in t.items()}


def _table_slice(t: dict[str, Col], s: int, e: int) -> dict[str, Col]:
    return {k: _slice(c, s, e) for k, c in t.items()}


def _table_cat(parts: list[dict[str, Col]]) -> dict[str, Col]:
    if len(parts) == 1:
        return parts[0]
    return {k: _cat([p[k] for p in parts]) for k in parts[0]}


def _table_rows(t: dict[str, Col]) -> int:
    return _nrows(next(iter(t.values()))) if t else 0


def _tensors(c: Col) -> list[torch.Tensor]:
    return list(c) if isinstance(c, _CSR) else [c]


def _np_tensor(a: np.ndarray) -> torch.Tensor:
    """torch.from_numpy of an array that may be read-only (Arrow's buffers: never written)."""
    if not a.flags.writeable:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(a)
    return torch.from_numpy(a)


class _Seg(NamedTuple):
    """Rows of a host table: table[idx[lo:hi]], or table[lo:hi] when idx is None."""

    table: dict[str, Col]
    idx: torch.Tensor | None
    lo: int
    hi: int

    @property
    def rows(self) -> int:
        return self.hi - self.lo

    def cut(self, s: int, e: int) -> "_Seg":
        return _Seg(self.table, self.idx, self.lo + s, self.lo + e)

    def rows_of(self) -> dict[str, Col]:
        if self.idx is None:
            return _table_slice(self.table, self.lo, self.hi)
        return _table_take(self.table, self.idx[self.lo : self.hi])


# --------------------------------------------------------------------------- CUDA plumbing


class _Sync:
    """A chunk made on the producer's side stream. Before a batch of it is handed out,
    the consumer's current stream waits for the chunk's event (once per stream), and
    each of the batch's tensors is marked as used by that stream (record_stream), so
    that the caching allocator does not give their memory to the side stream again
    while the consumer's kernels may still read it."""

    __slots__ = ("event", "device", "_seen")

    def __init__(self, event: Any, device: torch.device) -> None:
        self.event = event
        self.device = device
        self._seen: set[int] = set()

    def wait(self, batch: Batch) -> None:
        cur = torch.cuda.current_stream(self.device)
        sid = int(cur.cuda_stream)
        if sid not in self._seen:
            cur.wait_event(self.event)
            self._seen.add(sid)
        for v in batch.values():
            for t in v if isinstance(v, tuple) else (v,):
                if t.is_cuda:
                    t.record_stream(cur)


class _Stage:
    """Where the producer makes chunks: nothing for a CPU output; for a CUDA output a
    side stream on that device (waiting first for the consumer's stream as it was when
    the iteration began, so that the source is ready)."""

    def __init__(self, out: torch.device | None, src: torch.device) -> None:
        self.out = out
        self.src = src
        self.cuda = (out is not None and out.type == "cuda") or src.type == "cuda"
        self.dev = out if out is not None and out.type == "cuda" else src
        self.stream: Any = None
        self.start: Any = None
        if self.cuda:
            # recorded in the consumer's thread, where __iter__ runs
            self.start = torch.cuda.Event()
            self.start.record(torch.cuda.current_stream(self.dev))

    def begin(self) -> None:
        """In the producer's thread, before any work."""
        if self.cuda and self.stream is None:
            # no set_device: with prefetch=0 this runs on the caller's thread, and
            # torch.cuda.stream(s) (ctx) makes s's device current while it is entered
            self.stream = torch.cuda.Stream(self.dev)
            self.stream.wait_event(self.start)

    def ctx(self) -> Any:
        if self.cuda:
            return torch.cuda.stream(self.stream)
        return _NullCtx()

    def finish(self, chunk: dict[str, Col], pinned: bool) -> tuple[dict[str, Col], _Sync | None]:
        """chunk (made inside ctx()) moved to the output device; its sync object."""
        if not self.cuda:
            return chunk, None
        with torch.cuda.stream(self.stream):
            if self.out is not None and self.out != self.src:
                if self.out.type == "cuda":
                    chunk = {k: _to(c, self.out, non_blocking=pinned) for k, c in chunk.items()}
                else:  # a GPU source, host batches: a synchronous copy down
                    chunk = {k: _to(c, self.out, non_blocking=False) for k, c in chunk.items()}
                    return chunk, None
            ev = torch.cuda.Event()
            ev.record(self.stream)
        return chunk, _Sync(ev, self.dev)


class _NullCtx:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


def _to(c: Col, device: torch.device, non_blocking: bool) -> Col:
    if isinstance(c, _CSR):
        return _CSR(c.values.to(device, non_blocking=non_blocking), c.offsets.to(device, non_blocking=non_blocking))
    return c.to(device, non_blocking=non_blocking)


def _pinned_take(c: Col, idx: torch.Tensor | None, s: int, e: int) -> Col:
    """Rows (idx, or s..e) of a host column gathered into pinned memory, ready for an
    asynchronous copy to a GPU."""
    if isinstance(c, _CSR):
        part = _take(c, idx) if idx is not None else _slice(c, s, e)
        assert isinstance(part, _CSR)
        return _CSR(part.values.pin_memory(), part.offsets.pin_memory())
    k = int(idx.shape[0]) if idx is not None else e - s
    out = torch.empty((k,) + tuple(c.shape[1:]), dtype=c.dtype, pin_memory=True)
    if idx is not None:
        torch.index_select(c, 0, idx, out=out)
    else:
        out.copy_(c[s:e])
    return out


# ------------------------------------------------------------------- the prefetch thread

_END = object()


class _Failure:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _produce(items: Iterator[Any], q: "queue.Queue[Any]", stop: threading.Event, group: int,
             after: Callable[[], None] | None) -> None:
    """The producer thread: items into q, in lists of ``group`` (fewer hand-offs between
    the threads: each costs tens of microseconds of GIL traffic, as much as gathering a
    small batch), until they end, fail, or stop is set. It holds no reference to the
    consumer's iterator object, so that one can be collected."""

    def put(x: Any) -> bool:
        while not stop.is_set():
            try:
                q.put(x, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    buf: list[Any] = []
    me = threading.current_thread()
    with _RUNNING_LOCK:
        _RUNNING[me] = stop
    try:
        for x in items:
            buf.append(x)
            if len(buf) >= group:
                if not put(buf):
                    return
                buf = []
        if buf and not put(buf):
            return
        if put(_END) and after is not None and not stop.is_set():
            try:
                after()  # work for later, once the consumer has everything
            except Exception:  # noqa: BLE001 - an optimisation only
                pass
    except BaseException as e:  # noqa: BLE001 - handed to the consumer
        if not buf or put(buf):  # the batches made before the failure, then the failure
            put(_Failure(e))
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001
                pass
        with _RUNNING_LOCK:
            _RUNNING.pop(me, None)


# producer threads still running (an iterator run to its end may leave one making the
# next epoch's permutation): stopped and joined at interpreter exit, since a daemon
# thread inside a torch kernel while the process tears torch down aborts it
_RUNNING: dict[threading.Thread, threading.Event] = {}
_RUNNING_LOCK = threading.Lock()
_LIVE: "weakref.WeakSet[_BatchIterator]" = weakref.WeakSet()


class _BatchIterator:
    """One pass over the loader's batches (one epoch). With prefetch > 0 a daemon
    thread prepares up to ``prefetch`` batches ahead; ``close()`` (called when the
    iteration ends, on an exception, on garbage collection and at interpreter exit)
    stops it and joins it."""

    def __init__(self, items: Iterator[Any], prefetch: int, length: int, group: int = 1,
                 after: Callable[[], None] | None = None) -> None:
        self._length = length
        self._done = False
        self._thread: threading.Thread | None = None
        self._pending: collections.deque[Any] = collections.deque()
        if prefetch <= 0:
            self._items: Iterator[Any] | None = items
            return
        self._items = None
        self._q: "queue.Queue[Any]" = queue.Queue(maxsize=max(1, -(-prefetch // group)))
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=_produce, args=(items, self._q, self._stop, group, after), name="ladle-loader", daemon=True
        )
        _LIVE.add(self)
        self._thread.start()

    def __iter__(self) -> "_BatchIterator":
        return self

    def __len__(self) -> int:
        return self._length

    def _get(self) -> Any:
        assert self._thread is not None
        while True:
            try:
                return self._q.get(timeout=0.5)
            except queue.Empty:
                if not self._thread.is_alive() and self._q.empty():
                    return _Failure(RuntimeError("ladle.Loader: the producer thread stopped without a result"))

    def __next__(self) -> Batch:
        if self._done:
            raise StopIteration
        if self._thread is None:
            assert self._items is not None
            try:
                item = next(self._items)
            except StopIteration:
                self.close()
                raise
            except BaseException:
                self.close()
                raise
        elif self._pending:
            item = self._pending.popleft()
        else:
            got = self._get()
            if got is _END:
                # the producer ends on its own (after making the next epoch's permutation
                # ahead, perhaps): not waited for
                self._done = True
                _LIVE.discard(self)
                raise StopIteration
            if isinstance(got, _Failure):
                self.close()
                raise got.exc
            self._pending.extend(got)
            item = self._pending.popleft()
        batch, sync = item
        if sync is not None:
            sync.wait(batch)
        return batch

    def close(self) -> None:
        """Stops the producer (if any) and waits for it (an iterator run to its end has
        nothing left to stop)."""
        if self._done and self._thread is not None and self not in _LIVE:
            return
        self._done = True
        self._pending.clear()
        if self._thread is None:
            items, self._items = self._items, None
            close = getattr(items, "close", None)
            if close is not None:
                close()
            return
        self._stop.set()
        try:  # unblock a put; drop the prepared batches
            while True:
                self._q.get_nowait()
        except queue.Empty:
            pass
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10.0)
        _LIVE.discard(self)

    def __enter__(self) -> "_BatchIterator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


@atexit.register
def _close_all() -> None:
    for it in list(_LIVE):
        try:
            it.close()
        except Exception:  # noqa: BLE001
            pass
    with _RUNNING_LOCK:
        running = list(_RUNNING.items())
    for t, stop in running:
        stop.set()
    for t, _ in running:
        if t is not threading.current_thread():
            t.join(timeout=30.0)


# ---------------------------------------------------------------------------- ranks


def _is_spmd(engine: Any) -> bool:
    return engine is not None and hasattr(engine, "nranks") and hasattr(engine, "allgather")


def _dist_ready() -> bool:
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def _resolve_ranks(engine: Any, rank: int | None, world_size: int | None) -> tuple[int, int, str]:
    """(rank, world_size, where they came from: "explicit", "engine", "torch", "single")."""
    for name, v in (("rank", rank), ("world_size", world_size)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError(f"ladle.Loader({name}={v!r}): an int")
    if _is_spmd(engine):
        r, w, origin = int(engine.rank), int(engine.nranks), "engine"
    elif _dist_ready():
        import torch.distributed as dist

        r, w, origin = int(dist.get_rank()), int(dist.get_world_size()), "torch"
    else:
        r, w, origin = 0, 1, "single"
    if rank is not None or world_size is not None:
        r = r if rank is None else rank
        w = w if world_size is None else world_size
        origin = "explicit"
    if w < 1:
        raise ValueError(f"ladle.Loader(world_size={w}): at least 1")
    if not 0 <= r < w:
        raise ValueError(f"ladle.Loader(rank={r}, world_size={w}): rank must be in 0..{w - 1}")
    return r, w, origin


def _gather_counts(n: int, rank: int, world: int, engine: Any, origin: str) -> list[int] | None:
    """Every rank's n through a collective (the SPMDEngine's allgather, or
    torch.distributed's all_gather on the backend's device); None when there is none
    to use. Raises ValueError when the collective's ranks are not (rank, world)."""
    if _is_spmd(engine):
        er, ew = int(engine.rank), int(engine.nranks)
        if (er, ew) != (rank, world):
            raise ValueError(
                f"ladle.Loader: rank count mismatch: rank={rank}, world_size={world} given, but the "
                f"SPMDEngine is rank {er} of {ew}"
            )
        if world == 1:
            return [n]
        mine = pl.DataFrame({"rank": [rank], "rows": [n]}, schema={"rank": pl.Int64, "rows": pl.Int64})
        df = engine.allgather(mine)
        got = sorted(zip(df["rank"].to_list(), df["rows"].to_list()))
        if [r for r, _ in got] != list(range(world)):
            raise ValueError(
                "ladle.Loader: rank count mismatch: "
                f"the engine's allgather gave ranks {[r for r, _ in got]}"
            )
        return [int(c) for _, c in got]
    if _dist_ready():
        import torch.distributed as dist

        dr, dw = int(dist.get_rank()), int(dist.get_world_size())
        if (dr, dw) != (rank, world):
            if origin == "explicit":
                return None
            raise ValueError(
                f"ladle.Loader: rank count mismatch: rank {rank} of {world}, but torch.distributed "
                f"is rank {dr} of {dw}"
            )
        if world == 1:
            return [n]
        backend = str(dist.get_backend()).lower()
        dev = torch.device("cpu")
        if "nccl" in backend and not any(b in backend for b in ("gloo", "mpi", "cpu:")):
            dev = torch.device("cuda", torch.cuda.current_device())
        mine = torch.tensor([n], dtype=torch.int64, device=dev)
        every = [torch.zeros(1, dtype=torch.int64, device=dev) for _ in range(world)]
        dist.all_gather(every, mine)
        return [int(t.item()) for t in every]
    if world == 1:
        return [n]
    return None


def _plan(counts: Sequence[int], batch_size: int, drop_last: bool) -> tuple[int, int]:
    """(batches per rank, rows each rank yields) from every rank's row count."""
    if not counts or max(counts) == 0:
        return 0, 0
    if drop_last:
        nb = min(c // batch_size for c in counts)
        return nb, nb * batch_size
    big = max(counts)
    return -(-big // batch_size), big


# ------------------------------------------------------------------------- sources


def _device_of(d: Any) -> torch.device | None:
    if d is None:
        return None
    if isinstance(d, bool):
        raise TypeError(f"ladle.Loader(device={d!r}): None, 'cpu', 'cuda', 'cuda:N', an int or a torch.device")
    dev = torch.device(d) if not isinstance(d, int) else torch.device("cuda", d)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"ladle.Loader(device={d!r}): torch.cuda.is_available() is False")
        if dev.index is None:
            dev = torch.device("cuda", torch.cuda.current_device())
    elif dev.type != "cpu":
        raise ValueError(f"ladle.Loader(device={d!r}): 'cpu' or a CUDA device")
    return dev


def _pick_columns(names: list[str], columns: Sequence[str] | None, what: str) -> list[str]:
    if columns is None:
        return list(names)
    if isinstance(columns, str):
        raise TypeError("ladle.Loader: columns= is a list of names, not one string")
    picked = list(columns)
    if not picked:
        raise ValueError("ladle.Loader: columns= is empty")
    for c in picked:
        if not isinstance(c, str):
            raise TypeError(f"ladle.Loader: columns= holds {c!r}, not a column name")
        if c not in names:
            raise ValueError(f"ladle.Loader: no column {c!r} in {what} (columns: {names})")
    if len(set(picked)) != len(picked):
        raise ValueError(f"ladle.Loader: columns={picked} names a column twice")
    return picked


def _arrow_column(name: str, arr: Any, where: str) -> Col:
    """A numeric, Boolean or List column of an Arrow array/ChunkedArray as a tensor or
    _CSR on the host; ValueError for nulls, TypeError for other types."""
    import pyarrow as pa
    import pyarrow.types as pt

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    if pt.is_list(t) or pt.is_large_list(t):
        inner = t.value_type
        if not (pt.is_integer(inner) or pt.is_floating(inner) or pt.is_boolean(inner)):
            raise TypeError(
                f"ladle.Loader: column {name!r}{where} is a list of {inner}; "
                "lists of numbers or Booleans only"
            )
        if arr.null_count:
            raise ValueError(
                f"ladle.Loader: column {name!r}{where} has {arr.null_count} null lists; "
                "fill or drop them first"
            )
        offs = arr.offsets.to_numpy().astype(np.int64, copy=False)
        vals = arr.values
        lo, hi = int(offs[0]), int(offs[-1])
        inside = vals.slice(lo, hi - lo)
        if inside.null_count:
            raise ValueError(
                f"ladle.Loader: column {name!r}{where} has {inside.null_count} null list elements; "
                "fill them first"
            )
        v = _np_tensor(inside.to_numpy(zero_copy_only=False))
        return _CSR(v, torch.from_numpy(offs - lo) if lo else _np_tensor(offs))
    if not (pt.is_integer(t) or pt.is_floating(t) or pt.is_boolean(t)):
        raise TypeError(
            f"ladle.Loader: column {name!r}{where} is {t}; "
            "numeric, Boolean and List columns only (cast or encode it first)"
        )
    if arr.null_count:
        raise ValueError(
            f"ladle.Loader: column {name!r}{where} has {arr.null_count} null values; "
            "fill_null or drop_nulls first"
        )
    return _np_tensor(arr.to_numpy(zero_copy_only=False))


def _check_arrow_type(name: str, t: Any, where: str) -> str:
    """"dense" or "list" for a column type the loader takes; TypeError otherwise."""
    import pyarrow.types as pt

    def ok(x: Any) -> bool:
        return pt.is_integer(x) or pt.is_floating(x) or pt.is_boolean(x)

    if ok(t):
        return "dense"
    if (pt.is_list(t) or pt.is_large_list(t)) and ok(t.value_type):
        return "list"
    raise TypeError(
        f"ladle.Loader: column {name!r}{where} is {t}; "
        "numeric, Boolean and List columns only (cast or encode it first)"
    )


def _from_dict(src: Mapping[str, Any], columns: Sequence[str] | None) -> dict[str, Col]:
    names = list(src.keys())
    for k in names:
        if not isinstance(k, str):
            raise TypeError(f"ladle.Loader: dict keys are column names (str), got {k!r}")
    picked = _pick_columns(names, columns, "the dict")
    out: dict[str, Col] = {}
    for k in picked:
        v = src[k]
        if isinstance(v, tuple) and len(v) == 2:
            vals, offs = (_as_tensor(k, x) for x in v)
            if offs.ndim != 1 or offs.dtype not in (torch.int32, torch.int64) or offs.shape[0] < 1:
                raise TypeError(
                    f"ladle.Loader: column {k!r}: "
                    "a list column is (values, offsets) with 1-D integer offsets of length rows + 1"
                )
            offs = offs.to(torch.int64)
            if vals.device != offs.device:
                raise ValueError(f"ladle.Loader: column {k!r}: values on {vals.device}, offsets on {offs.device}")
            bad = offs.shape[0] > 1 and (
                bool((offs[1:] < offs[:-1]).any()) or int(offs[0]) < 0 or int(offs[-1]) > vals.shape[0]
            )
            if bad:
                raise ValueError(f"ladle.Loader: column {k!r}: offsets must be non-decreasing within 0..len(values)")
            out[k] = _CSR(vals, offs)
        else:
            t = _as_tensor(k, v)
            if t.ndim == 0:
                raise ValueError(f"ladle.Loader: column {k!r} is a 0-d tensor; rows are along dimension 0")
            out[k] = t
    lens = {k: _nrows(c) for k, c in out.items()}
    if len(set(lens.values())) > 1:
        raise ValueError(f"ladle.Loader: the tensors have unequal lengths: {lens}")
    devs = {str(t.device) for c in out.values() for t in _tensors(c)}
    if len(devs) > 1:
        raise ValueError(f"ladle.Loader: the tensors are on different devices: {sorted(devs)}")
    return out


def _as_tensor(name: str, v: Any) -> torch.Tensor:
    if isinstance(v, torch.Tensor):
        return v.detach()
    if isinstance(v, np.ndarray):
        if v.dtype.kind not in "biuf":
            raise TypeError(f"ladle.Loader: column {name!r} is a numpy array of {v.dtype}; numeric or Boolean only")
        return torch.from_numpy(np.ascontiguousarray(v))
    raise TypeError(
        f"ladle.Loader: column {name!r} is {type(v).__name__}; "
        "a torch.Tensor, a numpy array or (values, offsets)"
    )


def _from_result(res: "Result", columns: Sequence[str] | None, where: str = "") -> dict[str, Col]:
    schema = res.schema
    names = list(schema.names())
    picked = _pick_columns(names, columns, "the result")
    lists = []
    for c in picked:
        dt = schema[c]
        if isinstance(dt, pl.List):
            inner = dt.inner
            if inner is None or not any(inner == k for k in _PL_OK):
                raise TypeError(f"ladle.Loader: column {c!r} is {dt}; lists of numbers or Booleans only")
            lists.append(c)
        elif not any(dt == k for k in _PL_OK):
            raise TypeError(
                f"ladle.Loader: column {c!r} is {dt}; "
                "numeric, Boolean and List columns only (cast or encode it first)"
            )
    out: dict[str, Col] = {}
    table = res.to_arrow() if lists else None
    dev = res.device
    for c in picked:
        if c in lists:
            assert table is not None
            col = _arrow_column(c, table.column(c), where)
            out[c] = _to(col, torch.device(dev), non_blocking=False) if dev != "cpu" else col
            continue
        try:
            out[c] = torch.from_dlpack(res.column(c))
        except TypeError as e:
            msg = str(e)
            if "null" in msg:
                raise ValueError(
                    f"ladle.Loader: column {c!r}{where} has null values ({msg}); "
                    "fill_null or drop_nulls first"
                ) from None
            raise TypeError(f"ladle.Loader: column {c!r}{where}: {msg}") from None
    return out


def _parquet_paths(src: Any) -> list[str] | None:
    """The files of a Parquet source, or None when src is not one."""

    def expand(p: Any) -> list[str]:
        s = os.fspath(p)
        if os.path.isdir(s):
            found = sorted(str(f) for f in Path(s).rglob("*.parquet") if f.is_file())
            if not found:
                raise ValueError(f"ladle.Loader: no *.parquet files under {s!r}")
            return found
        if any(ch in s for ch in "*?[") and not os.path.exists(s):
            found = sorted(_glob.glob(s, recursive=True))
            if not found:
                raise ValueError(f"ladle.Loader: no files match {s!r}")
            return found
        if not os.path.exists(s):
            raise FileNotFoundError(f"ladle.Loader: no such file: {s!r}")
        return [s]

    if isinstance(src, (str, os.PathLike)):
        return expand(src)
    if isinstance(src, (list, tuple)) and src and all(isinstance(p, (str, os.PathLike)) for p in src):
        out: list[str] = []
        for p in src:
            out += expand(p)
        return out
    return None


class _Parquet:
    """Parquet files as units (file, row group) with row counts from the footers
    (pyarrow's); a unit is read by ladle's scan of that row group (its pages only)."""

    def __init__(self, files: list[str], columns: Sequence[str] | None) -> None:
        import pyarrow.parquet as pq

        self.files = files
        first = pq.read_schema(files[0])
        self.columns = _pick_columns(list(first.names), columns, f"{files[0]!r}")
        self.kinds = {c: _check_arrow_type(c, first.field(c).type, f" of {files[0]!r}") for c in self.columns}
        self.types = {c: first.field(c).type for c in self.columns}
        self.units: list[tuple[int, int, int]] = []  # (file index, row group, rows)
        for i, f in enumerate(files):
            md = pq.read_metadata(f)
            if i:
                sch = md.schema.to_arrow_schema()
                for c in self.columns:
                    if c not in sch.names:
                        raise ValueError(f"ladle.Loader: {f!r} has no column {c!r} (the first file {files[0]!r} has)")
                    if sch.field(c).type != self.types[c]:
                        raise TypeError(
                            "ladle.Loader: "
                            f"column {c!r} is {sch.field(c).type} in {f!r} but {self.types[c]} in {files[0]!r}"
                        )
            for g in range(md.num_row_groups):
                n = md.row_group(g).num_rows
                if n:
                    self.units.append((i, g, n))
        self.total = sum(u[2] for u in self.units)

    def reader(self) -> Callable[[tuple[int, int, int]], dict[str, Col]]:
        """A function reading one unit: ladle's scan of that one row group (its pages
        only), on an engine of the loader's own."""
        from . import _native as N
        from .engine import Engine

        eng = Engine()

        def read(unit: tuple[int, int, int]) -> dict[str, Col]:
            fi, g, n = unit
            plan = N.scan_parquet([self.files[fi]], self.columns, -1, None, False, False, g, g + 1)
            res = eng._run(plan, "")
            if res.num_rows != n:
                raise ValueError(
                    "ladle.Loader: "
                    f"{self.files[fi]!r} row group {g} has {res.num_rows} rows, its footer said {n}"
                )
            return _from_result(res, self.columns, f" in {self.files[fi]!r} row group {g}")

        return read

    def deal(self, order: Sequence[int], world: int) -> tuple[list[list[int]], list[int]]:
        """Units (in ``order``) dealt to ranks: each to the rank with the fewest rows so
        far (ties: the lowest rank). Every rank computes the same."""
        heap = [(0, r) for r in range(world)]
        mine: list[list[int]] = [[] for _ in range(world)]
        rows = [0] * world
        for u in order:
            load, r = heapq.heappop(heap)
            mine[r].append(u)
            rows[r] = load + self.units[u][2]
            heapq.heappush(heap, (rows[r], r))
        return mine, rows


# ---------------------------------------------------------------------------- the loader


class Loader(IterableDataset):
    """Shuffled batches of tensors from a ladle.Result, a dict of tensors, a LazyFrame or
    Parquet files; the same number of batches on every rank; prepared ahead on a thread.

    Parameters
    ----------
    source
        A ``ladle.Result`` (numeric, Boolean and List columns; DLPack views, the Result
        stays usable), a ``dict[str, Tensor]`` (equal lengths along dimension 0; numpy
        arrays are taken too, and a List column as ``(values, offsets)`` with rows + 1
        offsets), a ``polars.LazyFrame`` or ``DataFrame`` (run on ``engine``; default a
        ``ladle.Engine()``), or Parquet files: a path, a directory (its ``*.parquet``,
        recursively, sorted), a glob, or a list of those, streamed by row group.
    batch_size
        Rows per batch (> 0).
    shuffle
        A new permutation each epoch from (seed, epoch) (``set_epoch``). For Parquet:
        the row groups' order, then rows within a window of ``shuffle_window`` rows.
    seed
        The shuffle's seed; the same on every rank.
    drop_last
        True: every rank yields min over ranks of rows // batch_size full batches.
        False: every rank yields ceil(max rows / batch_size) batches, a short rank
        padded by repeating its first rows of the epoch (see the module's docstring).
    device
        Where batches go: None (where the source is), "cpu", "cuda", "cuda:N" or an int.
        A host source to a GPU is gathered into pinned memory and copied with
        non_blocking on a side stream; the consumer's current stream waits on an event.
        A source on a GPU is gathered there.
    prefetch
        Batches prepared ahead on a background thread; 0: made when asked for, on the
        calling thread. Batches of an in-memory source smaller than 64K rows travel
        between the threads in groups of up to 64K rows (a hand-off costs about what a
        256-row gather does), so up to about prefetch groups are ahead; Parquet
        batches travel one by one.
    columns
        The columns to yield, in this order (default: all).

    Keyword-only
    ------------
    engine
        The engine a LazyFrame runs on, and the ranks when it is a ladle.SPMDEngine.
    rank, world_size
        Override the ranks (else the SPMDEngine's, torch.distributed's, or one rank).
    sharded
        Whether the source holds this rank's rows only (default: ``Result.sharded``;
        False for other in-memory sources). The ranks' row counts are then agreed at
        construction through a collective: every rank must construct the loader.
    shard_rows
        Every rank's row count of a sharded source, instead of the collective.
    shuffle_window
        Parquet: rows shuffled together (at least one row group); half of each window
        is kept back to mix with the next row groups. Memory is about the window plus
        a row group plus ``prefetch`` batches.
    gather_rows
        Rows gathered per step (rounded up to a multiple of batch_size, then cut into
        batch views): default about 64K rows on the host (fewer, larger gathers than one
        per batch; no copy of the whole source as a permutation per epoch would need),
        about 2M rows for a CUDA output (fewer kernel launches and copies per batch).
    """

    def __init__(
        self,
        source: Source,
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
        device: str | int | torch.device | None = None,
        prefetch: int = 2,
        columns: Sequence[str] | None = None,
        *,
        engine: Any = None,
        rank: int | None = None,
        world_size: int | None = None,
        sharded: bool | None = None,
        shard_rows: Sequence[int] | None = None,
        shuffle_window: int = _DEFAULT_WINDOW,
        gather_rows: int | None = None,
    ) -> None:
        super().__init__()
        if isinstance(batch_size, bool) or not isinstance(batch_size, int):
            raise TypeError(f"ladle.Loader(batch_size={batch_size!r}): an int")
        if batch_size <= 0:
            raise ValueError(f"ladle.Loader(batch_size={batch_size}): must be > 0")
        if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 0:
            raise ValueError(f"ladle.Loader(prefetch={prefetch!r}): an int >= 0")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"ladle.Loader(seed={seed!r}): an int")
        if isinstance(shuffle_window, bool) or not isinstance(shuffle_window, int) or shuffle_window < 1:
            raise ValueError(f"ladle.Loader(shuffle_window={shuffle_window!r}): a positive int")
        if gather_rows is not None and (
            isinstance(gather_rows, bool) or not isinstance(gather_rows, int) or gather_rows < 1
        ):
            raise ValueError(f"ladle.Loader(gather_rows={gather_rows!r}): a positive int or None")
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.seed = seed
        self.drop_last = bool(drop_last)
        self.prefetch = prefetch
        self.shuffle_window = shuffle_window
        self._gather_rows = gather_rows
        self._epoch = 0
        self.device = _device_of(device)
        self.rank, self.world_size, origin = _resolve_ranks(engine, rank, world_size)
        self._parquet: _Parquet | None = None
        self._table: dict[str, Col] = {}
        # a permutation made ahead: ((rows, key), done, [perm])
        self._spec: tuple[tuple[int, int], threading.Event, list[torch.Tensor]] | None = None
        self._spec_lock = threading.Lock()

        files = None if isinstance(source, (Mapping, pl.LazyFrame, pl.DataFrame)) else _parquet_paths(source)
        from .result import Result

        if files is not None:
            if sharded or shard_rows is not None:
                raise ValueError(
                    "ladle.Loader: Parquet files are dealt out by the loader; "
                    "sharded=/shard_rows= do not apply"
                )
            self._parquet = _Parquet(files, columns)
            self.columns = list(self._parquet.columns)
            self.sharded = False
            self._src_device = torch.device("cpu")
            self._counts_cache: dict[int, tuple[list[list[int]], list[int], list[int]]] = {}
            return

        if isinstance(source, pl.DataFrame):
            source = source.lazy()
        if isinstance(source, pl.LazyFrame):
            if engine is None:
                from .engine import Engine

                engine = Engine()
            if columns is not None:  # only those columns are computed
                picked = _pick_columns(list(source.collect_schema().names()), columns, "the LazyFrame")
                source = source.select(picked)
            source = engine.execute(source)
        if isinstance(source, Result):
            is_sharded = source.sharded if sharded is None else bool(sharded)
            self._table = _from_result(source, columns)
        elif isinstance(source, Mapping):
            is_sharded = bool(sharded)
            self._table = _from_dict(source, columns)
        else:
            raise TypeError(
                f"ladle.Loader: source is {type(source).__name__}; a ladle.Result, a dict of tensors, a polars "
                "LazyFrame/DataFrame, or Parquet path(s)"
            )
        self.columns = list(self._table.keys())
        if not self.columns:
            raise ValueError("ladle.Loader: the source has no columns")
        self.sharded = is_sharded
        first = next(iter(self._table.values()))
        self._src_device = _tensors(first)[0].device
        if self.device is not None and self.device.type == "cuda" and self._src_device.type == "cuda" \
                and self.device != self._src_device:
            # another GPU than the batches': copied there once (the gathers, events and
            # streams then live on one device)
            self._table = {k: _to(c, self.device, non_blocking=False) for k, c in self._table.items()}
            self._src_device = self.device
        n = _table_rows(self._table)
        self._local_rows = n
        if is_sharded:
            counts = self._agree_sharded(n, engine, origin, shard_rows)
        else:
            if shard_rows is not None:
                raise ValueError("ladle.Loader: shard_rows= is for a sharded source")
            if origin in ("engine", "torch") and self.world_size > 1:
                every = _gather_counts(n, self.rank, self.world_size, engine, origin)
                if every is not None and len(set(every)) > 1:
                    raise ValueError(
                        f"ladle.Loader: a replicated source must hold the same rows on every rank, but the ranks "
                        f"hold {every} rows; pass sharded=True if each rank holds its own rows"
                    )
            w = self.world_size
            counts = [(r + 1) * n // w - r * n // w for r in range(w)]
        self._counts = counts
        self._nb, self._emit = _plan(counts, batch_size, self.drop_last)
        if is_sharded and self._emit > 0 and 0 in counts:  # raised on every rank alike
            empty = [r for r, c in enumerate(counts) if c == 0]
            raise ValueError(
                f"ladle.Loader: rank(s) {empty} hold no rows of this sharded source while others hold up to "
                f"{max(counts)}: with drop_last=False there is nothing to pad their batches with (use "
                "drop_last=True, or spread the rows)"
            )

    def _agree_sharded(self, n: int, engine: Any, origin: str, shard_rows: Sequence[int] | None) -> list[int]:
        if shard_rows is not None:
            counts = [int(c) for c in shard_rows]
            if len(counts) != self.world_size:
                raise ValueError(
                    "ladle.Loader: rank count mismatch: "
                    f"shard_rows has {len(counts)} entries for world_size={self.world_size}"
                )
            if counts[self.rank] != n:
                raise ValueError(
                    "ladle.Loader: "
                    f"shard_rows[{self.rank}] is {counts[self.rank]} but this rank holds {n} rows"
                )
            return counts
        every = _gather_counts(n, self.rank, self.world_size, engine, origin)
        if every is None:
            raise ValueError(
                f"ladle.Loader: a sharded source on rank {self.rank} of {self.world_size} needs every rank's row "
                "count: pass shard_rows=, or use a ladle.SPMDEngine or an initialised torch.distributed group of "
                "that size"
            )
        if len(every) != self.world_size:
            raise ValueError(
                "ladle.Loader: rank count mismatch: "
                f"{len(every)} ranks answered, world_size={self.world_size}"
            )
        return every

    # ------------------------------------------------------------------ public API

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch: the next iteration's shuffle is drawn from (seed, epoch), the same
        on every rank. Call it with the same value on every rank before each epoch."""
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise TypeError(f"ladle.Loader.set_epoch({epoch!r}): an int")
        self._epoch = epoch

    @property
    def epoch(self) -> int:
        return self._epoch

    def rows_per_rank(self) -> list[int]:
        """Every rank's rows this epoch before padding or dropping."""
        if self._parquet is not None:
            return list(self._parquet_epoch(self._epoch)[1])
        return list(self._counts)

    def __len__(self) -> int:
        """Batches this epoch on this rank; the same on every rank. (For Parquet the row
        groups are dealt anew each epoch, so it may change with set_epoch.)"""
        if self._parquet is not None:
            return self._parquet_plan(self._epoch)[0]
        return self._nb

    def __iter__(self) -> _BatchIterator:
        epoch = self._epoch
        wid, nw = 0, 1
        from torch.utils.data import get_worker_info

        info = get_worker_info()
        if info is not None and info.num_workers > 1:
            # inside a DataLoader's worker: every worker takes every nw-th batch, which
            # its round-robin reassembles in order
            wid, nw = int(info.id), int(info.num_workers)
        nb = len(self)
        stage = _Stage(self.device, self._src_device)
        if self._parquet is not None:
            items = self._parquet_items(epoch, stage, wid, nw)
        else:
            items = self._resident_items(epoch, stage, wid, nw)
        # small batches of an in-memory source travel between the threads in groups of
        # up to 64K rows (a hand-off costs about what gathering 256 rows does); Parquet
        # batches one by one, so that reading ahead stays within prefetch batches
        group = 1 if self._parquet is not None else max(1, min(256, (1 << 16) // self.batch_size))
        after = None
        if self._parquet is None and self.shuffle and self._src_device.type == "cpu" and nw == 1:
            after = functools.partial(self._speculate, epoch + 1)
        return _BatchIterator(items, self.prefetch, len(range(wid, nb, nw)), group, after)

    def __repr__(self) -> str:
        kind = "parquet" if self._parquet is not None else ("sharded" if self.sharded else "replicated")
        return (
            f"ladle.Loader({kind}, columns={self.columns}, batch_size={self.batch_size}, shuffle={self.shuffle}, "
            f"drop_last={self.drop_last}, rank={self.rank}, world_size={self.world_size}, epoch={self._epoch}, "
            f"batches={len(self)})"
        )

    # --------------------------------------------------------------- in-memory sources

    def _chunk_rows(self, nw: int) -> int:
        b = self.batch_size
        if nw > 1:
            return b
        if self._gather_rows is not None:
            return -(-self._gather_rows // b) * b
        out = self.device if self.device is not None else self._src_device
        if out.type == "cuda":
            return b * max(1, (1 << 21) // b)
        # host: about 64K rows at a time (measured: a gather per batch loses to this
        # below 64K-row batches, by up to 25% at 1K rows; a whole-epoch permutation
        # loses above)
        return b * max(1, (1 << 16) // b)

    def _order(self, epoch: int) -> tuple[torch.Tensor | None, int]:
        """This rank's epoch order: (indices into the source, None) or (None, first row)
        for a contiguous run of rows (no shuffle, no padding)."""
        n, w, r, emit = self._local_rows, self.world_size, self.rank, self._emit
        dev = self._src_device
        if self.sharded:
            lo, n_r, total = 0, n, n
        else:
            lo, total = r * n // w, n
            n_r = (r + 1) * n // w - lo
        if emit <= n_r and not self.shuffle:
            return None, lo
        if self.shuffle:
            perm = self._permutation(epoch)
        else:
            perm = None
        if emit <= n_r:
            assert perm is not None
            return perm[lo : lo + emit], lo
        # padding: this rank's first rows again, cyclically (a rank with no rows of a
        # replicated source: the rows from its position in the global order)
        pos = torch.arange(emit, dtype=torch.int64, device=dev)
        pos = (pos % n_r + lo) if n_r else ((pos + lo) % total)
        return (perm.index_select(0, pos) if perm is not None else pos), lo

    def _perm_args(self, epoch: int) -> tuple[int, int]:
        """(rows, key) of the epoch's permutation: of every row of a replicated source
        (the same on every rank), of this rank's rows of a sharded one."""
        if self.sharded:
            return self._local_rows, _key(self.seed, epoch, 1, self.rank)
        return self._local_rows, _key(self.seed, epoch, 0)

    def _permutation(self, epoch: int) -> torch.Tensor:
        args = self._perm_args(epoch)
        with self._spec_lock:
            spec, self._spec = self._spec, None
        if spec is not None and spec[0] == args:
            spec[1].wait()  # being made: wait for it rather than make it twice
            if spec[2]:
                return spec[2][0]
        return _permutation(args[0], args[1], self._src_device)

    def _speculate(self, epoch: int) -> None:
        """In the producer thread, once an epoch's batches are all handed over: the
        permutation of ``epoch`` (the next one, usually), so that a host source's next
        epoch does not start with a randperm of every row (0.6 s for 20M rows)."""
        args = self._perm_args(epoch)
        done, box = threading.Event(), []  # type: ignore[var-annotated]
        with self._spec_lock:
            if self._spec is not None and self._spec[0] == args:
                return
            self._spec = (args, done, box)
        try:
            box.append(_permutation(args[0], args[1], self._src_device))
        finally:
            done.set()

    def _resident_items(self, epoch: int, stage: _Stage, wid: int, nw: int) -> Iterator[tuple[Batch, Any]]:
        table, b, nb, emit = self._table, self.batch_size, self._nb, self._emit
        chunk = self._chunk_rows(nw)
        pinned = stage.out is not None and stage.out.type == "cuda" and stage.src.type == "cpu"
        names = self.columns

        def gen() -> Iterator[tuple[Batch, Any]]:
            stage.begin()
            with stage.ctx():  # a GPU source's permutation: on the side stream
                idx_all, lo = self._order(epoch)
            if (not stage.cuda and nw == 1 and chunk == b and idx_all is not None
                    and not any(isinstance(c, _CSR) for c in table.values())):
                # the common host case, kept lean: one index_select per column per batch
                cols = [(k, table[k]) for k in names]
                for s0 in range(0, emit, b):
                    idx = idx_all[s0 : s0 + b]
                    yield {k: c.index_select(0, idx) for k, c in cols}, None
                return
            for c0 in range(0, emit, chunk):
                c1 = min(emit, c0 + chunk)
                first = -(-c0 // b)
                wanted = [i for i in range(first, -(-c1 // b)) if i % nw == wid]
                if not wanted:
                    continue
                # everything on the side stream (a List column's slicing reads offsets
                # back: in that stream's order)
                with stage.ctx():
                    if idx_all is None and not pinned and (stage.out is None or stage.out == stage.src):
                        # contiguous rows on their own device: views, no copy
                        part = _table_slice(table, lo + c0, lo + c1)
                        sync = None
                    else:
                        if pinned:
                            idx = idx_all[c0:c1] if idx_all is not None else None
                            part = {k: _pinned_take(c, idx, lo + c0, lo + c1) for k, c in table.items()}
                        elif idx_all is not None:
                            part = _table_take(table, idx_all[c0:c1])
                        else:
                            part = _table_slice(table, lo + c0, lo + c1)
                        part, sync = stage.finish(part, pinned)
                    if len(wanted) == 1 and c1 - c0 <= b:
                        out = [({k: _output(part[k]) for k in names}, sync)]
                    else:
                        out = []
                        for i in wanted:
                            s, e = i * b - c0, min(emit, (i + 1) * b) - c0
                            out.append(({k: _output(_slice(part[k], s, e)) for k in names}, sync))
                yield from out

        assert nb == -(-emit // b)
        return gen()

    # ------------------------------------------------------------------------ Parquet

    def _parquet_epoch(self, epoch: int) -> tuple[list[list[int]], list[int], list[int]]:
        """(units of every rank, rows of every rank, the epoch's unit order)."""
        cached = self._counts_cache.get(epoch)
        if cached is not None:
            return cached
        pq_ = self._parquet
        assert pq_ is not None
        nu = len(pq_.units)
        if self.shuffle and nu:
            order = _permutation(nu, _key(self.seed, epoch, 2), torch.device("cpu")).tolist()
        else:
            order = list(range(nu))
        mine, rows = pq_.deal(order, self.world_size)
        self._counts_cache = {epoch: (mine, rows, order)}
        return mine, rows, order

    def _parquet_plan(self, epoch: int) -> tuple[int, int]:
        _, rows, _ = self._parquet_epoch(epoch)
        return _plan(rows, self.batch_size, self.drop_last)

    def _parquet_items(self, epoch: int, stage: _Stage, wid: int, nw: int) -> Iterator[tuple[Batch, Any]]:
        pq_ = self._parquet
        assert pq_ is not None
        mine, rows, order = self._parquet_epoch(epoch)
        nb, emit = self._parquet_plan(epoch)
        my_units = mine[self.rank]
        n_r = rows[self.rank]
        b, window, shuffle, names = self.batch_size, self.shuffle_window, self.shuffle, self.columns
        wkey = _key(self.seed, epoch, 3, self.rank)
        to_gpu = stage.out is not None and stage.out.type == "cuda"

        def segments(read: Callable[[tuple[int, int, int]], dict[str, Col]]) -> Iterator[_Seg]:
            """This rank's rows in its epoch order: without shuffle each row group as
            read; with shuffle, row groups are gathered into a window of at least
            ``window`` rows, a permutation of the window is drawn, its first rows go out
            (as indices into the window: each batch is one gather) and the last
            window // 2 rows are kept back to mix with the next row groups."""
            if not shuffle:
                for u in my_units:
                    blk = read(pq_.units[u])
                    yield _Seg(blk, None, 0, _table_rows(blk))
                return
            g = torch.Generator()
            g.manual_seed(wkey)
            buf: list[dict[str, Col]] = []
            have = 0
            keep = window // 2
            for u in my_units:
                blk = read(pq_.units[u])
                buf.append(blk)
                have += _table_rows(blk)
                if have >= window:
                    whole = _table_cat(buf)
                    p = torch.randperm(have, generator=g)
                    yield _Seg(whole, p, 0, have - keep)
                    buf, have = [_table_take(whole, p[have - keep :])], keep
            if have:
                whole = _table_cat(buf)
                yield _Seg(whole, torch.randperm(have, generator=g), 0, have)

        def padded(read: Callable[[tuple[int, int, int]], dict[str, Col]]) -> Iterator[_Seg]:
            """segments(), cut at ``emit`` rows, then padded to ``emit`` rows by repeating
            this rank's first rows (with no rows: the epoch's first row group's)."""
            need = emit - n_r
            head: list[dict[str, Col]] = []
            kept = 0
            sent = 0
            for seg in segments(read):
                k = seg.rows
                if sent + k > emit:
                    seg = seg.cut(0, emit - sent)
                    k = emit - sent
                if need > 0 and kept < need:
                    take = min(k, need - kept)
                    head.append(seg.cut(0, take).rows_of())  # a copy: the window is not kept
                    kept += take
                yield seg
                sent += k
                if sent >= emit:
                    return
            if need <= 0:
                return
            if not head:  # this rank has no rows: borrow the epoch's first row group
                blk = read(pq_.units[order[0]])
                head = [_table_slice(blk, 0, min(need, _table_rows(blk)))]
            pad = _table_cat(head)
            m = _table_rows(pad)
            while need > 0:
                k = min(m, need)
                yield _Seg(pad, None, 0, k)
                need -= k

        def emit_batch(t: dict[str, Col]) -> tuple[Batch, Any]:
            host = {k: _output(t[k]) for k in names}
            if not to_gpu:
                return host, None
            # pinned copies of the host batch, then one asynchronous copy each
            flat = {}
            for k, v in host.items():
                for j, x in enumerate(v if isinstance(v, tuple) else (v,)):
                    flat[f"{j}:{k}"] = _pinned_take(x, None, 0, x.shape[0])
            moved, sync = stage.finish(flat, True)  # type: ignore[arg-type]
            out: Batch = {}
            for k, v in host.items():
                if isinstance(v, tuple):
                    out[k] = (moved[f"0:{k}"], moved[f"1:{k}"])  # type: ignore[assignment]
                else:
                    out[k] = moved[f"0:{k}"]  # type: ignore[assignment]
            return out, sync

        def gen() -> Iterator[tuple[Batch, Any]]:
            stage.begin()
            read = pq_.reader()
            pending: collections.deque[_Seg] = collections.deque()
            have = 0
            i = 0

            def next_batch(k: int) -> dict[str, Col] | None:
                """The next k rows of pending as a table (None when this worker skips
                the batch: the rows are only consumed)."""
                nonlocal have
                pieces: list[_Seg] = []
                left = k
                while left:
                    seg = pending[0]
                    if seg.rows <= left:
                        pieces.append(pending.popleft())
                        left -= seg.rows
                    else:
                        pieces.append(seg.cut(0, left))
                        pending[0] = seg.cut(left, seg.rows)
                        left = 0
                have -= k
                if i % nw != wid:
                    return None
                return _table_cat([x.rows_of() for x in pieces])

            for seg in padded(read):
                pending.append(seg)
                have += seg.rows
                while have >= b:
                    t = next_batch(b)
                    if t is not None:
                        yield emit_batch(t)
                    i += 1
            if have and i < nb:
                t = next_batch(have)
                if t is not None:
                    yield emit_batch(t)
                i += 1
            if i != nb:
                raise RuntimeError(f"ladle.Loader: made {i} batches of Parquet rows, planned {nb} (a file changed?)")

        return gen()
