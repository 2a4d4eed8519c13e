"""ladle's collectives over a torch.distributed process group: the object behind
``N.Comm("callbacks", ops=...)`` that ``SPMDEngine.from_torch_distributed`` makes.

ladle's C engine calls these methods (python/ladle/_native.c's trampolines) with
memoryviews over its own host buffers, counts and displacements in bytes. Each
becomes a uint8 tensor over the same memory (``torch.frombuffer``, no copy) and
one torch.distributed collective on CPU tensors, so the group must move CPU
tensors (gloo, or a group with a gloo part). A view is valid only during the
call: nothing here keeps one. Failures raise; the C side turns the exception
into LadleCommError and refuses every later collective. Timeouts are the process
group's own.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import torch
import torch.distributed as dist

_U8 = torch.uint8
_SIGN = -(1 << 63)  # flips the top bit: unsigned order becomes signed order
_OPS = (dist.ReduceOp.SUM, dist.ReduceOp.MIN, dist.ReduceOp.MAX)  # src/dist/comm.h's order
_TYPES = (torch.int64, torch.int64, torch.float64)  # int64, uint64 (as int64), float64


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


def _overlap(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two byte tensors share memory."""
    if a.numel() == 0 or b.numel() == 0:
        return False
    return a.data_ptr() < b.data_ptr() + b.numel() and b.data_ptr() < a.data_ptr() + a.numel()


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

    def __init__(self, group: Any) -> None:
        self.group = group
        self.rank: int = dist.get_rank(group)
        self.size: int = dist.get_world_size(group)
        # broadcast's src is a rank of the default group
        self._global = [dist.get_global_rank(group, r) for r in range(self.size)]

    def allgatherv(self, inbuf: memoryview, counts: list[int], displs: list[int], outbuf: memoryview) -> None:
        """Rank r's counts[r] bytes into outbuf at displs[r], on every rank."""
        n, g = self.size, self.group
        src, out = _view(inbuf), _view(outbuf)
        c = counts[0]
        if all(x == c for x in counts) and all(displs[r] == r * c for r in range(n)):
            if c == 0:
                return
            dst = out[: n * c]
            if _overlap(src, dst):  # in place: this rank's part of out is its input
                src = src.clone()
            dist.all_gather_into_tensor(dst, src, group=g)
            return
        # uneven counts or scattered parts: every rank sends the largest count
        m = max(counts)
        if m == 0:
            return
        send = src
        if src.numel() != m:
            send = torch.zeros(m, dtype=_U8)
            send[: src.numel()].copy_(src)
        gathered = torch.empty(n * m, dtype=_U8)
        dist.all_gather_into_tensor(gathered, send, group=g)
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
            send = src[:stot]
        else:
            send = torch.cat([src[send_displs[r] : send_displs[r] + send_counts[r]] for r in range(n)])
        recv_packed = _packed(recv_counts, recv_displs)
        recv = out[:rtot] if recv_packed else torch.empty(rtot, dtype=_U8)
        dist.all_to_all_single(recv, send, output_split_sizes=list(recv_counts),
                               input_split_sizes=list(send_counts), group=self.group)
        if not recv_packed:
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
        dist.broadcast(_view(buf), src=self._global[root], group=self.group)

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
        out = _view(outbuf, dt)
        src = _view(inbuf, dt)
        if src.data_ptr() != out.data_ptr():
            out.copy_(src)
        flip = elem_type == 1 and op != 0
        if flip:
            out.bitwise_xor_(_SIGN)
        dist.all_reduce(out, op=_OPS[op], group=self.group)
        if flip:
            out.bitwise_xor_(_SIGN)

    def barrier(self) -> None:
        dist.barrier(group=self.group)


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
