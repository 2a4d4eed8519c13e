"""ladle: Polars queries on ladle's C engine, results to PyTorch without copies.

    import polars as pl, ladle
    engine = ladle.Engine()
    df = lf.collect(engine=engine)          # or engine.collect(lf)
    res = engine.execute(lf)                # stays in ladle's memory
    t = torch.from_dlpack(res.column("x"))  # zero copy
"""

from __future__ import annotations

from . import _version

_version.check()

from ._errors import (  # noqa: E402
    FallbackWarning,
    LadleCommError,
    LadleComputeError,
    LadleError,
    LadleMemoryError,
    UnsupportedError,
    VersionError,
)
from .devices import Device, devices, use_gpu  # noqa: E402
from .engine import Engine  # noqa: E402
from .result import Column, Result  # noqa: E402
from .spmd import SPMDEngine  # noqa: E402

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # the torch side (issue 20) imports torch, which takes a second or two: only
    # when asked for
    if name in ("persisted_to_torch", "torch_allocator", "torch_allocator_bytes"):
        from . import torch_interop

        return getattr(torch_interop, name)
    if name == "Loader":
        from .loader import Loader

        return Loader
    if name == "workflow":
        import importlib

        return importlib.import_module(".workflow", __name__)
    raise AttributeError(f"module 'ladle' has no attribute {name!r}")


__all__ = [
    "Column",
    "Device",
    "Engine",
    "FallbackWarning",
    "LadleCommError",
    "LadleComputeError",
    "LadleError",
    "LadleMemoryError",
    "Loader",
    "Result",
    "SPMDEngine",
    "UnsupportedError",
    "VersionError",
    "__version__",
    "devices",
    "persisted_to_torch",
    "torch_allocator",
    "torch_allocator_bytes",
    "use_gpu",
    "workflow",
]
