"""The workflow's own integer mix and string hash, the same on every engine.

ladle's ``expr.hash(seed)`` is not Polars' (docs/semantics.md), and ladle runs no
bitwise operator on integers, so a bucket that must be the same on ladle (CPU, GPU,
ranks) and on Polars is computed from what both engines compute bit for bit:
Int64 ``+`` and ``*`` wrapping at 64 bits, ``//`` flooring and ``%`` taking the
divisor's sign. ``mix`` is a finalizer in the style of splitmix64 where each
xor-shift is replaced by adding the floor-shifted value (``h + h // 2**k``):

    h = x + K(seed)             K(seed) = (seed + 1) * 0x9E3779B97F4A7C15 mod 2^64
    h = h * 0xBF58476D1CE4E5B9
    h = h + h // 2**32
    h = h * 0x94D049BB133111EB
    h = h + h // 2**29
    bucket = h mod n            (0 <= bucket < n)

every step in signed 64-bit two's complement. Strings have no such path (ladle has
no string-to-bytes function Polars computes alike), so a string's integer is its
FNV-1a 64-bit hash of the UTF-8 bytes, computed here in Python (numpy,
vectorised) and handed to the engine as a table (value -> bucket) that the
transform joins against.
"""

from __future__ import annotations

import numpy as np
import polars as pl

_M64 = 1 << 64
GOLDEN = 0x9E3779B97F4A7C15
C1 = 0xBF58476D1CE4E5B9
C2 = 0x94D049BB133111EB
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


def _s64(v: int) -> int:
    """v as a signed 64-bit integer (two's complement)."""
    v &= _M64 - 1
    return v - _M64 if v >= 1 << 63 else v


def seed_offset(seed: int) -> int:
    """K(seed): the signed 64-bit constant the mix adds first."""
    return _s64((int(seed) + 1) * GOLDEN)


def _lit(v: int) -> pl.Expr:
    return pl.lit(_s64(v), dtype=pl.Int64)


def mix_expr(x: pl.Expr, seed: int) -> pl.Expr:
    """The mix of an Int64 expression as a Polars expression ladle runs as Polars does."""
    h = x + _lit(seed_offset(seed))
    h = h * _lit(C1)
    h = h + h // _lit(1 << 32)
    h = h * _lit(C2)
    return h + h // _lit(1 << 29)


def bucket_expr(x: pl.Expr, dtype: pl.DataType, seed: int, n: int) -> pl.Expr:
    """The bucket (0 <= b < n, Int64) of an integer, Boolean or temporal expression;
    null stays null. Integers are taken as Int64 (UInt64 above 2^63 - 1 wraps),
    Booleans as 0/1, dates and datetimes as their physical integer."""
    if dtype != pl.Int64:
        x = x.cast(pl.Int64, wrap_numerical=True) if dtype.is_integer() else x.cast(pl.Int64)
    return mix_expr(x, seed) % pl.lit(int(n), dtype=pl.Int64)


def mix_numpy(x: np.ndarray, seed: int) -> np.ndarray:
    """mix_expr on an int64 numpy array (numpy's int64 arithmetic wraps, // floors)."""
    h = x.astype(np.int64, copy=True)
    with np.errstate(over="ignore"):
        h += np.int64(seed_offset(seed))
        h *= np.int64(_s64(C1))
        h += h // np.int64(1 << 32)
        h *= np.int64(_s64(C2))
        h += h // np.int64(1 << 29)
    return h


def fnv1a64(values: pl.Series) -> np.ndarray:
    """FNV-1a 64 of each string's UTF-8 bytes, as int64 (the bits of the uint64).
    ``values`` must hold no nulls."""
    import pyarrow as pa

    arr = values.cast(pl.String).to_arrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr = arr.cast(pa.large_string())
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.null_count:
        raise ValueError("fnv1a64: null values have no hash")
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset: arr.offset + n + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    lens = np.diff(offs)
    # longest first: at step j the strings still going are a prefix
    order = np.argsort(-lens, kind="stable")
    starts = offs[:-1][order]
    slens = lens[order]
    h = np.full(n, FNV_OFFSET, dtype=np.uint64)
    prime = np.uint64(FNV_PRIME)
    maxlen = int(slens[0]) if n else 0
    # active[j]: how many strings are longer than j
    active = np.searchsorted(-slens, -np.arange(maxlen), side="left") if maxlen else np.zeros(0, np.int64)
    with np.errstate(over="ignore"):
        for j in range(maxlen):
            a = int(active[j])
            h[:a] ^= data[starts[:a] + j].astype(np.uint64)
            h[:a] *= prime
    out = np.empty(n, dtype=np.uint64)
    out[order] = h
    return out.view(np.int64)


def string_buckets(values: pl.Series, seed: int, n: int) -> np.ndarray:
    """The bucket (0 <= b < n) of each non-null string: mix(FNV-1a 64(utf8), seed) mod n."""
    return mix_numpy(fnv1a64(values), seed) % np.int64(n)


def int_buckets(values: np.ndarray, seed: int, n: int) -> np.ndarray:
    """bucket_expr's value for int64 values, in numpy (for strings' tables and checks)."""
    return mix_numpy(values.astype(np.int64), seed) % np.int64(n)
