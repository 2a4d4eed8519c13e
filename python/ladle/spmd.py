"""ladle.SPMDEngine: the same script on every rank of a job (``mpirun``/``srun``),
each rank one engine over its share of the data.

    with ladle.SPMDEngine() as engine:          # MPI under mpirun/srun, else one rank
        part = lf.collect(engine=engine)         # this rank's rows
        res = engine.execute(lf)                 # res.sharded: rows spread over ranks?
        whole = engine.allgather(res)            # every rank's rows, rank 0's first

Scans of Parquet and CSV files are dealt out across the ranks (by row groups);
in-memory frames are each rank's own rows. Group-by, join, distinct and sort
exchange rows between the ranks; a sort's result is sharded in global order (rank
0 holds the first rows); a global aggregation or ``sort().head(k)`` is replicated
(every rank the same rows). Every rank must run the same queries in the same
order: each execution first compares a fingerprint of the plan on every rank, and
a rank that runs another query makes every rank raise LadleCommError naming it.
A rank that stops answering makes the others raise within ``timeout`` seconds.

Under torchrun, ``SPMDEngine.from_torch_distributed()`` (after
``torch.distributed.init_process_group``) takes its ranks from a process group
and exchanges rows through its collectives (python/ladle/_torch_comm.py).

An SPMD engine never falls back to Polars (Polars would run the query on one
rank's data alone): what ladle cannot run raises UnsupportedError. A GPU engine
runs multi-rank queries on ladle's CPU kernels for now, with a FallbackWarning.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any

import polars as pl

from . import _native as N
from ._errors import FallbackWarning, LadleError, UnsupportedError
from .engine import Engine, _native_error
from .result import Result

_MPI_ENV = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


def _launched_by_mpi() -> bool:
    """Whether this process was started by mpirun/mpiexec or srun as one of
    several ranks (their launchers' environment variables)."""
    if any(k in os.environ for k in _MPI_ENV):
        return True
    return int(os.environ.get("SLURM_NTASKS", "1") or 1) > 1 and "SLURM_PROCID" in os.environ


class SPMDEngine(Engine):
    """One rank of an SPMD job running Polars LazyFrames on ladle.

    Parameters
    ----------
    device, threads, morsel_rows, memory_limit
        As ladle.Engine's, for this rank.
    comm
        "auto" (the default): MPI when launched by mpirun, mpiexec or srun, else a
        job of one rank; "mpi" or "self" to choose.
    timeout
        Seconds a collective may wait for the other ranks before this rank raises
        LadleCommError (a rank died or ran something else). After that the engine
        refuses further queries.
    """

    def __init__(
        self,
        device: str | int = "cpu",
        threads: int | None = None,
        *,
        comm: str = "auto",
        timeout: float = 600.0,
        morsel_rows: int | None = None,
        memory_limit: int | None = None,
        _native_comm: Any = None,
    ) -> None:
        if comm not in ("auto", "mpi", "self"):
            raise ValueError(f"ladle.SPMDEngine(comm={comm!r}): 'auto', 'mpi' or 'self'")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"ladle.SPMDEngine(timeout={timeout!r}): a positive number of seconds")
        kind = ("mpi" if _launched_by_mpi() else "self") if comm == "auto" else comm
        try:
            # an N.Comm made by the caller (from_torch_distributed), or one of kind
            self._comm: Any = _native_comm if _native_comm is not None else N.Comm(kind, float(timeout))
        except N.LadleError as e:
            raise _native_error(e) from None
        super().__init__(
            device, threads, raise_on_fail=False, morsel_rows=morsel_rows, memory_limit=memory_limit,
            _comm=self._comm,
        )

    def _visit(self, lf: pl.LazyFrame, optimizations: Any) -> Any:
        # Polars' optimizer decides from the in-memory frame it sees, which is this
        # rank's alone: it slices the frame itself when a head or slice reaches it
        # (slice pushdown), where the job's slice is of every rank's rows, and drops
        # a sort over a frame of at most one row (sort collapse), where the job's
        # rows are more: ranks of one row each gave their rows unsorted, as one
        # plan (spmd_fuzz seed 41); and it reorders joins by the frames' heights
        # (join order), which differ between ranks: "the ranks ran different
        # queries" (seed 46). ladle plans those slices and sorts itself (a sort's
        # first rows become its top-k in the translator), and its joins as written.
        # Without slice pushdown, Polars' pass that drops the order of a join
        # nothing above observes also dropped that of one a last() above reads
        # (`join(maintain_order="right_left").select((when(g).then(..)..).last() -
        # e.null_count())`: the join's order "none", the last row any rank's; seed
        # 48): the joins keep the order asked for, and the translator's own
        # analysis (_order_free) finds what nothing observes. Fast projection also
        # computes a select of literals over an in-memory frame into a frame of one
        # row, on every rank: the job's one row came back once a rank (spmd_fuzz
        # seed 73).
        flags = pl.QueryOptFlags() if optimizations is None else optimizations.__copy__()
        flags.fast_projection = False
        flags.slice_pushdown = False
        flags.sort_collapse = False
        flags.join_order = False
        flags.check_order_observe = False
        return super()._visit(lf, flags)

    @classmethod
    def from_torch_distributed(
        cls,
        group: Any = None,
        device: str | int = "cpu",
        threads: int | None = None,
        *,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> "SPMDEngine":
        """One rank of a torch.distributed job (torchrun, or any launcher after
        ``dist.init_process_group``): the ranks are those of ``group`` (None: the
        default group), and ladle's exchanges are its collectives (engine.comm is
        "torch"). Call it on every rank of the group, at the same point.

        ladle's exchanges move host memory, so they run over a gloo group: ``group``
        itself when its backend has gloo (e.g. init_process_group("gloo") or a
        "cpu:gloo,cuda:nccl" group), else a gloo group ladle creates over the same
        ranks (dist.new_group: for the default group, every process calls it).

        Parameters
        ----------
        group
            A torch.distributed ProcessGroup this process is a member of; None: the
            default one.
        device, threads, morsel_rows, memory_limit
            As ladle.Engine's, for this rank. device="cuda" is this process's current
            CUDA device (torch.cuda.current_device(), as torch.cuda.set_device left it).
        timeout
            None: a collective waits as long as the group's own timeout allows (the
            init_process_group/new_group timeout; torch's default is 30 minutes), then
            raises LadleCommError. Seconds: ladle creates its own gloo group over the
            ranks with that timeout. A query that fails on one rank fails on every
            rank within milliseconds; each then makes a fresh gloo group over the
            ranks (collective, as torch's new_group is) and the next query runs on
            it. A failure gloo raises itself (a lost connection, its timeout) ends
            the engine's communicator: later queries are refused.

        As torch asks, call ``torch.distributed.destroy_process_group()`` before the
        process exits (it also destroys a gloo group ladle made).
        """
        for k in ("comm", "_native_comm"):
            if k in kwargs:
                raise TypeError(f"ladle.SPMDEngine.from_torch_distributed: no {k}= (the communicator is torch's)")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not timeout > 0):
            raise ValueError(f"ladle.SPMDEngine.from_torch_distributed(timeout={timeout!r}): "
                             "a positive number of seconds, or None for the group's own")
        try:
            import torch
            import torch.distributed as dist
        except ImportError as e:
            raise UnsupportedError(
                f"ladle.SPMDEngine.from_torch_distributed needs PyTorch ({e}); install torch, "
                "or launch with mpirun and use ladle.SPMDEngine()"
            ) from None
        if not dist.is_available() or not dist.is_initialized():
            raise LadleError(
                N.LADLE_EINVAL,
                "ladle.SPMDEngine.from_torch_distributed: torch.distributed is not initialised in "
                "this process; call torch.distributed.init_process_group() first (under torchrun, "
                'e.g. dist.init_process_group("gloo"), or "cpu:gloo,cuda:nccl" in a GPU job), '
                "or use ladle.SPMDEngine() under mpirun",
            )
        from ._torch_comm import TorchCollectives, cpu_group

        g = dist.group.WORLD if group is None else group
        if g is dist.GroupMember.NON_GROUP_MEMBER or dist.get_rank(g) < 0:
            raise ValueError("ladle.SPMDEngine.from_torch_distributed: this process is not a member of group")
        if device == "cuda" and torch.cuda.is_available():
            device = f"cuda:{torch.cuda.current_device()}"
        t = None if timeout is None else float(timeout)
        ops = TorchCollectives(cpu_group(g, t), t)
        try:
            native = N.Comm("callbacks", 0.0, ops=ops)
        except N.LadleError as e:
            raise _native_error(e) from None
        return cls(device, threads, _native_comm=native, **kwargs)

    @property
    def rank(self) -> int:
        """This process's rank, 0 .. nranks - 1."""
        return int(self._comm.rank())

    @property
    def nranks(self) -> int:
        """The job's ranks."""
        return int(self._comm.size())

    def _job_ranks(self) -> int:
        return self.nranks

    @property
    def comm(self) -> str:
        """The communicator: "mpi", "self" or "torch" (from_torch_distributed)."""
        return str(self._comm.name())

    def __repr__(self) -> str:
        return (
            f"ladle.SPMDEngine(device={self.device!r}, threads={self.threads}, "
            f"rank={self.rank}, nranks={self.nranks}, comm={self.comm!r})"
        )

    def __enter__(self) -> "SPMDEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Releases the engine, then the communicator (MPI itself is finalised at
        process exit). Results already made stay usable."""
        self.__dict__.pop("_engine", None)
        self.__dict__.pop("_comm", None)

    def _query_plan(self, lf: pl.LazyFrame, optimizations: Any) -> tuple[N.Plan | None, str, dict[str, Any] | None]:
        # A query that fails here, before ladle's engine sees it (Polars panics
        # planning this rank's frames, a plan ladle cannot run), fails on this rank
        # alone: the others would wait for it in the query's first collective until
        # the timeout. Tell them (they raise naming this rank) and recover, as a
        # query that fails inside the engine does.
        try:
            plan, note, sink = super()._query_plan(lf, optimizations)
            if plan is None or note:
                self._fallback(note)
            return plan, note, sink
        except BaseException as e:
            try:
                self._engine.give_up(f"{type(e).__name__}: {e}"[:400])
            except N.LadleError:  # the communicator cannot go on: the next query says so
                pass
            raise

    def _fallback(self, why: str) -> None:
        raise UnsupportedError(
            f"ladle cannot run this query: {why} (an SPMD engine does not fall back to "
            "Polars, which would run it on this rank's data alone)"
        )

    def _run(self, plan: N.Plan, note: str) -> Result:
        if note:  # a mixed plan: its scans on Polars would read every rank's rows
            self._fallback(note)
        self.last_run = "ladle"
        main = threading.current_thread() is threading.main_thread()
        try:
            return Result(self._engine.execute(plan, main), plan)
        except N.LadleError as e:
            if not self._columns or e.args[0] != N.LADLE_ENOTSUP:
                raise _native_error(e) from None
            why = e.args[1]
        # every rank refuses the same plan the same way: all run it on the CPU
        warnings.warn(f"ladle: {why}; the query ran on ladle's CPU backend instead", FallbackWarning, stacklevel=3)
        self.last_run = "ladle-cpu"
        try:
            return Result(self._engine.execute(plan, main, True), plan)
        except N.LadleError as e:
            raise _native_error(e) from None

    def allgather(self, x: Result | pl.DataFrame) -> Any:
        """The whole of a sharded result on every rank: every rank's rows in rank
        order (rank 0's first). A Result gives a Result; a polars DataFrame (this
        rank's fragment) gives a DataFrame. A replicated Result comes back as it is.
        Every rank must call it at the same point."""
        if isinstance(x, pl.DataFrame):
            plan = N.scan_arrow(x)
            try:
                part = self._engine.execute(plan)
                return Result(self._engine.allgather(part), plan).to_polars()
            except N.LadleError as e:
                raise _native_error(e) from None
        if not isinstance(x, Result):
            raise TypeError(f"allgather: a ladle.Result or a polars.DataFrame, got {type(x).__name__}")
        try:
            return Result(self._engine.allgather(x._native), x._plan)
        except N.LadleError as e:
            raise _native_error(e) from None
