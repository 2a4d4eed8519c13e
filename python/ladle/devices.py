"""Which GPUs ladle can use, and restricting the process to one of them."""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

from . import _native
from ._errors import LadleError


class Device(NamedTuple):
    """A CUDA device this process sees: ``ladle.Engine(device=f"cuda:{id}")`` runs on it."""

    id: int
    name: str
    memory_bytes: int
    compute_capability: tuple[int, int]

    def __str__(self) -> str:
        return f"cuda:{self.id} ({self.name}, {self.memory_bytes / 2**30:.0f} GiB)"


def devices() -> list[Device]:
    """The CUDA devices a GPU engine can run on (CUDA_VISIBLE_DEVICES applies).

    An empty list when there is none, or no driver, or ladle was built without its
    CUDA library; ``ladle.Engine(device="cuda")`` then says which. The first call
    loads ladle's CUDA library and initialises the driver (after it, ``use_gpu``
    refuses)."""
    found, _why = _native.cuda_devices()
    if found is None:
        return []
    return [Device(i, name, mem, (major, minor)) for i, name, mem, major, minor in found]


def _driver_initialized_by() -> str | None:
    if _native.cuda_initialized():
        return "ladle (a GPU engine or ladle.devices())"
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return "torch"
        except Exception:  # pragma: no cover - a torch without CUDA support
            pass
    return None


def use_gpu(i: int) -> None:
    """Restricts this process to GPU ``i`` (an ordinal among the GPUs it sees now) by
    setting CUDA_VISIBLE_DEVICES, so that ``device="cuda"`` is that GPU for ladle and
    any other library. The driver reads the variable once, when it initialises: this
    raises LadleError if ladle or torch initialised it already in this process (other
    libraries cannot be seen; call it first), and ValueError for a bad ordinal."""
    if isinstance(i, bool) or not isinstance(i, int) or i < 0:
        raise ValueError(f"use_gpu: the GPU is an ordinal (an int >= 0), not {i!r}")
    by = _driver_initialized_by()
    if by is not None:
        raise LadleError(
            _native.LADLE_EDEVICE,
            f"use_gpu({i}): the CUDA driver is already initialised in this process (by {by}), "
            "so CUDA_VISIBLE_DEVICES no longer applies; call ladle.use_gpu before any GPU "
            "engine, ladle.devices() or CUDA use"
        )
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() != "":
        ids = [v.strip() for v in visible.split(",") if v.strip() != ""]
        if i >= len(ids):
            raise LadleError(
                _native.LADLE_EINVAL,
                f"use_gpu({i}): CUDA_VISIBLE_DEVICES={visible!r} leaves {len(ids)} GPU"
                f"{'' if len(ids) == 1 else 's'} visible"
            )
        os.environ["CUDA_VISIBLE_DEVICES"] = ids[i]
    else:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(i)
