"""Builds ladle._native: the CPython extension (python/ladle/_native.c, which
sees only include/ladle.h) linked with the engine's C sources."""
import os
from glob import glob

from setuptools import Extension, setup

# Parquet codecs, each optional: (define, header, library)
CODECS = [
    ("LADLE_HAVE_ZLIB", "zlib.h", "z"),
    ("LADLE_HAVE_ZSTD", "zstd.h", "zstd"),
    ("LADLE_HAVE_SNAPPY", "snappy-c.h", "snappy"),
    ("LADLE_HAVE_LZ4", "lz4.h", "lz4"),
    ("LADLE_HAVE_BROTLI", "brotli/decode.h", "brotlidec"),
    ("LADLE_HAVE_LIBDEFLATE", "libdeflate.h", "deflate"),  # faster GZIP pages; zlib still needed
]
found = [(d, lib) for d, h, lib in CODECS if os.path.exists(os.path.join("/usr/include", h))]


def _march() -> list[str]:
    """x86-64-v3 (AVX2, FMA, BMI2: what Polars' default wheels require) when the
    building machine has it, so the kernels' loops vectorize; the extension is
    built where it runs. LADLE_MARCH overrides: a -march value, or "" for none."""
    if "LADLE_MARCH" in os.environ:
        m = os.environ["LADLE_MARCH"]
        return [f"-march={m}"] if m else []
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
    except OSError:
        return []
    need = {"avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "popcnt", "sse4_2"}
    return ["-march=x86-64-v3"] if need <= set(flags) else []


engine_sources = sorted(
    glob("src/core/*.c")
    + glob("src/plan/*.c")
    + glob("src/exec/*.c")
    + glob("src/backend/*.c")
    + glob("src/backend/cpu/*.c")
    + glob("src/dist/*.c")
    + glob("src/interop/*.c")
    + glob("src/io/parquet/*.c")
    + glob("src/io/csv/*.c")
    + glob("src/api/*.c")
)

setup(
    ext_modules=[
        Extension(
            "ladle._native",
            sources=["python/ladle/_native.c", *engine_sources],
            include_dirs=["include"],
            define_macros=[("LADLE_BUILDING", "1")] + [(d, "1") for d, _ in found],
            extra_compile_args=[
                "-std=gnu11",
                "-O3",
                *_march(),
                # no fused multiply-add contraction: float results must equal
                # Polars' (Rust never contracts a * b + c)
                "-ffp-contract=off",
                "-fvisibility=hidden",
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
                "-Wno-type-limits",
                "-Wno-missing-field-initializers",
                "-Wno-cast-function-type",
            ],
            libraries=["m", "pthread", "dl"] + [lib for _, lib in found],
        )
    ]
)
