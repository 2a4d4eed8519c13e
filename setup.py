"""Builds ladle._native: the CPython extension (python/ladle/_native.c, which
sees only include/ladle.h) linked with the engine's C sources."""
from glob import glob

from setuptools import Extension, setup

engine_sources = sorted(
    glob("src/core/*.c")
    + glob("src/plan/*.c")
    + glob("src/exec/*.c")
    + glob("src/backend/cpu/*.c")
    + glob("src/dist/*.c")
    + glob("src/interop/*.c")
)

setup(
    ext_modules=[
        Extension(
            "ladle._native",
            sources=["python/ladle/_native.c", *engine_sources],
            include_dirs=["include"],
            define_macros=[("LADLE_BUILDING", "1")],
            extra_compile_args=[
                "-std=gnu11",
                "-O2",
                "-fvisibility=hidden",
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
                "-Wno-type-limits",
                "-Wno-missing-field-initializers",
                "-Wno-cast-function-type",
            ],
            libraries=["m", "pthread"],
        )
    ]
)
