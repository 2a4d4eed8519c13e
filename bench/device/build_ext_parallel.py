"""`python setup.py build_ext --inplace` with the extension's C sources compiled
in parallel (setuptools compiles one extension's sources one after another).
Run from the repository root: python3 bench/device/build_ext_parallel.py"""

from __future__ import annotations

import os
import runpy
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import setuptools  # noqa: F401  (puts setuptools' distutils in place)
from distutils import ccompiler


def compile_parallel(self: Any, sources: list[str], output_dir: str | None = None, macros: Any = None,
                     include_dirs: Any = None, debug: int = 0, extra_preargs: Any = None,
                     extra_postargs: Any = None, depends: Any = None) -> list[str]:
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)

    def one(obj: str) -> None:
        src, ext = build[obj]
        self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

    with ThreadPoolExecutor(os.cpu_count() or 1) as ex:
        list(ex.map(one, [o for o in objects if o in build]))
    return objects


ccompiler.CCompiler.compile = compile_parallel
sys.argv = ["setup.py", "build_ext", "--inplace"]
runpy.run_path("setup.py", run_name="__main__")
