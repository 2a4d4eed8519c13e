"""Pieces bench/bench.py and bench/scaling.py share: the TPC-H tables as Parquet
files (dbgen's SF0.1 from ../shared, other scale factors from tpch_gen.py), the
check of a peer's answer against Polars', and what machine and versions ran.

Importing this module imports Polars: a script that sets POLARS_MAX_THREADS
must do so before importing it.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
from polars.testing import assert_frame_equal

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT / "bench", ROOT / "tests" / "python"):
    if str(_p) not in sys.path:
        sys.path.append(str(_p))

TABLES = ["region", "nation", "supplier", "part", "partsupp", "customer", "orders", "lineitem"]


def tpch_dir(data: Path, sf: float) -> Path:
    return data / f"tpch-sf{sf:g}"


def tpch_files(args: Any) -> dict[str, Path]:
    """The eight tables under args.data/tpch-sf<args.sf>/ as Parquet, written on
    first use: SF0.1 from dbgen's files in ../shared where they are, others (and
    SF0.1 without ../shared) from tpch_gen.py."""
    d = tpch_dir(args.data, args.sf)
    paths = {t: d / f"{t}.parquet" for t in TABLES}
    if all(p.exists() for p in paths.values()):
        return paths
    d.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    if dbgen_sf01(args.sf):
        from tpch_queries import load_all
        frames = load_all("sf0.1")
        how = "dbgen's SF0.1 files from ../shared"
    else:
        from tpch_gen import generate
        frames = generate(args.sf)
        how = "bench/tpch_gen.py"
    for name, df in frames.items():
        df.write_parquet(paths[name], row_group_size=1 << 17)
    print(f"TPC-H SF{args.sf:g} written to {d} from {how} in {time.perf_counter() - t:.1f}s", flush=True)
    return paths


def dbgen_sf01(sf: float) -> bool:
    """SF0.1 comes from dbgen's files in ../shared where they are (not on a
    machine that has only the checkout); everything else from tpch_gen.py."""
    from tpch_queries import DATA_DIR

    return sf == 0.1 and (DATA_DIR / "sf0.1" / "lineitem.tbl.zst").exists()


def tpch_source(sf: float) -> str:
    return "dbgen SF0.1 (../shared)" if dbgen_sf01(sf) else "bench/tpch_gen.py (numpy, from the spec)"


def same_frame(got: pl.DataFrame, ref: pl.DataFrame, ordered: bool, rel_tol: float = 1e-6) -> None:
    """ladle's (or Polars' own) answer against the reference: names, dtypes and
    values, floats within rel_tol. Raises AssertionError."""
    assert_frame_equal(got, ref, check_row_order=ordered, check_exact=False, rel_tol=rel_tol, abs_tol=1e-9)


def same_values(a: Any, b: pl.DataFrame, ordered: bool, rel_tol: float) -> None:
    """DuckDB's result against Polars': the same columns by position, numbers
    compared as Float64 within rel_tol, rows in order or as multisets."""
    assert isinstance(a, pl.DataFrame)
    assert a.shape == b.shape, f"shape {a.shape} vs {b.shape}"

    def norm(df: pl.DataFrame) -> pl.DataFrame:
        df = df.rename({c: f"c{i}" for i, c in enumerate(df.columns)})
        return df.with_columns(pl.col(pl.NUMERIC_DTYPES if hasattr(pl, "NUMERIC_DTYPES") else []).cast(pl.Float64)) \
            .with_columns([pl.col(c).cast(pl.Float64) for c, t in df.schema.items() if t.is_numeric() or t == pl.Boolean])

    a, b = norm(a), norm(b)
    if not ordered:
        a, b = a.sort(a.columns), b.sort(b.columns)
    assert_frame_equal(a, b, check_exact=False, rel_tol=rel_tol, abs_tol=1e-6, check_dtypes=False)


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kb = next(int(l.split()[1]) for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
    except (OSError, StopIteration):
        mem_kb = 0
    return {"host": socket.gethostname(), "cores": os.cpu_count(), "memory_gib": round(mem_kb / 2**20, 1),
            "cpu_model": model, "platform": platform.platform(), "python": platform.python_version()}


def git_commit() -> str:
    """$LADLE_COMMIT when set (a copy of the tree on another machine, whose .git
    may be a stale one: the device's), else HEAD with -dirty when tracked files
    changed, or "unknown"."""
    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "unknown"

    if os.environ.get("LADLE_COMMIT"):
        return os.environ["LADLE_COMMIT"]
    commit = git("rev-parse", "HEAD")
    if commit == "unknown":
        return "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "-dirty"
    return commit
