"""ladle's collectives over a torch.distributed process group: the object behind
``N.Comm("callbacks", ops=...)`` that ``SPMDEngine.from_torch_distributed`` makes.

ladle's C engine calls these methods (python/ladle/_native.c's trampolines) with
memoryviews over its own host buffers, counts and displacements in bytes. Each
becomes a uint8 tensor over the same memory (``torch.frombuffer``, no copy) and
one torch.distributed collective on CPU tensors, so the group must move CPU
tensors (gloo, or a group with a gloo part). Failures raise; the C side turns the
exception into LadleCommError and refuses every later collective. Timeouts are
the process group's own.

A rank whose query fails calls ``fail(why)``: the reason goes into the default
group's store (under a prefix of this communicator and epoch), and every rank's
wait for a collective (issued with ``async_op=True``, polled) checks the store
every 5 ms, so a rank that waits for one that gave up raises "rank R failed:
<why>" at once rather than at gloo's timeout. The notice carries how many
collectives its sender completed in this epoch, and a rank applies it only to
the collectives past those (the sender finished the others, so they finish
here too: a rank still in the closing barrier of a query that succeeded must
not abandon it because another rank went on and failed in the next one). gloo
cannot cancel the abandoned collective, which still holds its tensors: so every
collective moves torch-owned copies of ladle's buffers (a copy in, a copy out),
and an abandoned one's are kept alive for the life of the communicator. The
memory ladle passes in is only read or written during the call.

After a failed query every rank calls ``recover()`` (the engine does, once per
failed query on every rank): a fresh gloo group over the same ranks replaces
the one that holds the abandoned collective, and a new epoch's store prefix the
notice. Creating a group is collective (torch's new_group); a rank that died
makes it fail at the group's timeout. A failure gloo raised itself, with no rank
having told why (a connection lost), is not recovered from.
"""

from __future__ import annotations

import itertools
import time
import warnings
from typing import Any, Sequence

import torch
import torch.distributed as dist

_U8 = torch.uint8
_SIGN = -(1 << 63)  # flips the top bit: unsigned order becomes signed order
_OPS = (dist.ReduceOp.SUM, dist.ReduceOp.MIN, dist.ReduceOp.MAX)  # src/dist/comm.h's order
_TYPES = (torch.int64, torch.int64, torch.float64)  # int64, uint64 (as int64), float64
_CHECK_S = 0.005  # how often a wait looks in the store for another rank's failure
_COUNT = itertools.count()  # communicators made in this process: each one's store prefix


def _view(buf: memoryview, dtype: torch.dtype = _U8) -> torch.Tensor:
    """A tensor over buf's memory (an empty one for an empty buffer, which
    torch.frombuffer refuses). A read-only buffer gives a tensor that torch lets
    one write: nothing here writes to those."""
    if buf.nbytes == 0:
        return torch.empty(0, dtype=dtype)
    if buf.readonly:
        with warnings.catch_warnings():  # "The given buffer is not writable": known, never written
            warnings.simplefilter("ignore", UserWarning)
            return torch.frombuffer(buf, dtype=dtype)
    return torch.frombuffer(buf, dtype=dtype)


def _packed(counts: Sequence[int], displs: Sequence[int]) -> bool:
    """Whether the parts lie one after the other in rank order from byte 0."""
    at = 0
    for c, d in zip(counts, displs):
        if c and d != at:
            return False
        at += c
    return True


class TorchCollectives:
    """The collectives ladle's "callbacks" communicator calls, over ``group``
    (a torch.distributed ProcessGroup that moves CPU tensors)."""

    name = "torch"  # what engine.comm reports

    def __init__(self, group: Any, timeout: float | None = None) -> None:
        self.group = group
        self.rank: int = dist.get_rank(group)
        self.size: int = dist.get_world_size(group)
        self._timeout = timeout  # a recovered group's (None: torch's default)
        # broadcast's src is a rank of the default group
        self._global = [dist.get_global_rank(group, r) for r in range(self.size)]
        self._ranks = dist.get_process_group_ranks(group)
        # every rank makes its communicators in the same order (the engine is
        # SPMD), so the n-th one's prefix is the same on every rank
        self._prefix = f"ladle/comm{next(_COUNT)}/"
        self._epoch = 0  # failed queries recovered from: the store's prefix
        self._store = self._epoch_store()
        self._ops = 0  # collectives begun in this epoch
        self._done = 0  # and completed
        self._gone: str | None = None  # why this communicator stopped
        self._fatal: str | None = None  # gloo's own failure: no recovery
        self._kept: list[Any] = []  # abandoned collectives and their tensors, old groups

    def _epoch_store(self) -> Any:
        return dist.PrefixStore(f"{self._prefix}e{self._epoch}/", dist.distributed_c10d._get_default_store())

    def fail(self, why: str) -> None:
        """This rank gives up on the query: tells the others (best effort)."""
        if self._gone is not None:  # told already, or told by another rank
            return
        self._gone = f"this rank gave up: {why}"
        try:  # the first rank to give up tells why (a reader's get waits for it)
            if self._store.add("failed", 1) == 1:
                self._store.set("why", f"{self._done}\nrank {self.rank} failed: {why}"[:4000])
        except Exception:  # noqa: BLE001 - the others then wait for gloo's timeout
            pass

    def _peer_failed(self, op: int) -> str | None:
        """Another rank's reason, when one gave up before completing collective op
        of this epoch (add(key, 0) reads without blocking)."""
        if self._store.add("failed", 0) <= 0:
            return None
        try:
            done, _, why = self._store.get("why").decode("utf-8", errors="replace").partition("\n")
            return why if op >= int(done) else None
        except Exception:  # noqa: BLE001
            return "another rank failed"

    def _wait(self, work: Any, *keep: torch.Tensor) -> None:
        """Waits for work; raises gloo's error, or another rank's failure (then work
        and the tensors it moves stay referenced: gloo cannot cancel it)."""
        op = self._ops
        self._ops += 1
        why, spins, last = None, 0, time.monotonic()
        while not work.is_completed():
            spins += 1
            if spins > 200:
                time.sleep(0.0001)
            now = time.monotonic()
            if now - last >= _CHECK_S:
                last = now
                why = self._peer_failed(op)
                if why is not None:
                    break
        if why is not None and not work.is_completed():
            self._kept.append((work, keep))
            self._gone = why
            raise RuntimeError(why)
        try:
            work.wait()
        except Exception as e:
            # gloo's own error: a rank that gave up may have gone on and closed its
            # connections before this wait looked in the store; its reason says more
            why = self._peer_failed(op)
            self._kept.append((work, keep))
            if why is None:
                self._fatal = f"{type(e).__name__}: {e}"[:1000]
                raise
            self._gone = why
            raise RuntimeError(why) from None
        self._done += 1

    def recover(self) -> None:
        """After a failed query (every rank calls it, once per failed query): a fresh
        gloo group over the same ranks, and the next epoch's notices."""
        if self._fatal is not None:
            raise RuntimeError(f"gloo failed on its own ({self._fatal}); the communicator cannot go on")
        from datetime import timedelta

        whole = len(self._ranks) == dist.get_world_size()
        old = self.group
        self.group = dist.new_group(
            self._ranks,
            timeout=timedelta(seconds=self._timeout) if self._timeout is not None else None,
            backend="gloo",
            use_local_synchronization=not whole,
        )
        self._kept.append(old)
        self._epoch += 1
        self._store = self._epoch_store()
        self._ops = self._done = 0
        self._gone = None

    def allgatherv(self, inbuf: memoryview, counts: list[int], displs: list[int], outbuf: memoryview) -> None:
        """Rank r's counts[r] bytes into outbuf at displs[r], on every rank."""
        n, g = self.size, self.group
        src, out = _view(inbuf), _view(outbuf)
        c = counts[0]
        if all(x == c for x in counts) and all(displs[r] == r * c for r in range(n)):
            if c == 0:
                return
            send, dst = src.clone(), torch.empty(n * c, dtype=_U8)
            self._wait(dist.all_gather_into_tensor(dst, send, group=g, async_op=True), dst, send)
            out[: n * c].copy_(dst)
            return
        # uneven counts or scattered parts: every rank sends the largest count
        m = max(counts)
        if m == 0:
            return
        send = torch.zeros(m, dtype=_U8)
        send[: src.numel()].copy_(src)
        gathered = torch.empty(n * m, dtype=_U8)
        self._wait(dist.all_gather_into_tensor(gathered, send, group=g, async_op=True), gathered, send)
        for r in range(n):
            if counts[r]:
                out[displs[r] : displs[r] + counts[r]].copy_(gathered[r * m : r * m + counts[r]])

    def alltoallv(self, inbuf: memoryview, send_counts: list[int], send_displs: list[int],
                  outbuf: memoryview, recv_counts: list[int], recv_displs: list[int]) -> None:
        """send_counts[r] bytes of inbuf at send_displs[r] to rank r; recv_counts[r]
        bytes from rank r into outbuf at recv_displs[r]. Parts that are not packed
        in rank order go through packed temporaries."""
        n = self.size
        src, out = _view(inbuf), _view(outbuf)
        stot, rtot = sum(send_counts), sum(recv_counts)
        if _packed(send_counts, send_displs):
            send = src[:stot].clone()
        else:
            send = torch.cat([src[send_displs[r] : send_displs[r] + send_counts[r]] for r in range(n)])
        recv_packed = _packed(recv_counts, recv_displs)
        recv = torch.empty(rtot, dtype=_U8)
        work = dist.all_to_all_single(recv, send, output_split_sizes=list(recv_counts),
                                      input_split_sizes=list(send_counts), group=self.group, async_op=True)
        self._wait(work, recv, send)
        if recv_packed:
            out[:rtot].copy_(recv)
        else:
            at = 0
            for r in range(n):
                c = recv_counts[r]
                if c:
                    out[recv_displs[r] : recv_displs[r] + c].copy_(recv[at : at + c])
                at += c

    def bcast(self, buf: memoryview, root: int) -> None:
        """root's bytes of buf into every rank's buf."""
        if buf.nbytes == 0:  # every rank has the same size: nothing to move
            return
        view = _view(buf)
        t = view.clone()
        self._wait(dist.broadcast(t, src=self._global[root], group=self.group, async_op=True), t)
        view.copy_(t)

    def allreduce(self, inbuf: memoryview, outbuf: memoryview, n: int, elem_type: int, op: int) -> None:
        """outbuf[i] = op over the ranks of inbuf[i], i < n. type 0 int64, 1 uint64,
        2 float64; op 0 sum, 1 min, 2 max. uint64 travels as int64: a sum is the
        same bits either way (modulo 2**64), and min/max flip the top bit before and
        after so that the signed order is the unsigned one."""
        if n == 0:
            return
        if not (0 <= elem_type < len(_TYPES) and 0 <= op < len(_OPS)):
            raise ValueError(f"allreduce: unknown type {elem_type} or operation {op}")
        dt = _TYPES[elem_type]
        t = _view(inbuf, dt).clone()
        flip = elem_type == 1 and op != 0
        if flip:
            t.bitwise_xor_(_SIGN)
        self._wait(dist.all_reduce(t, op=_OPS[op], group=self.group, async_op=True), t)
        if flip:
            t.bitwise_xor_(_SIGN)
        _view(outbuf, dt).copy_(t)

    def barrier(self) -> None:
        self._wait(dist.barrier(group=self.group, async_op=True))


def cpu_group(group: Any, timeout: float | None) -> Any:
    """A process group over group's ranks that moves CPU tensors: group itself when
    its backend does (gloo, or a "cpu:gloo,cuda:nccl" group) and no timeout is asked
    for, else a new gloo group over the same ranks (with timeout seconds, or
    torch's default). Creating one is collective: over the default group's every
    process for the default group, over group's members for a subgroup."""
    from datetime import timedelta

    backend = str(dist.get_backend(group)).lower()
    if timeout is None and any(b in backend for b in ("gloo", "mpi")):
        return group
    ranks = dist.get_process_group_ranks(group)
    whole = group is dist.group.WORLD or len(ranks) == dist.get_world_size()
    return dist.new_group(
        ranks,
        timeout=timedelta(seconds=timeout) if timeout is not None else None,
        backend="gloo",
        use_local_synchronization=not whole,
    )
