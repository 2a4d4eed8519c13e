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

__all__ = [
    "Column",
    "Device",
    "Engine",
    "FallbackWarning",
    "LadleCommError",
    "LadleComputeError",
    "LadleError",
    "LadleMemoryError",
    "Result",
    "SPMDEngine",
    "UnsupportedError",
    "VersionError",
    "__version__",
    "devices",
    "use_gpu",
]
