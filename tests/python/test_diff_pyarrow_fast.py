"""The differential fuzzer's fast mode (fuzz/diff_pyarrow.py --fast) runs clean
for a few seconds, and reports what it must: a wrong answer (through its slow
check with Polars), a crash, a hang and an exception that is not ladle's own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "fuzz" / "diff_pyarrow.py"


def run_fast(tmp_path: Path, seconds: float, *extra: str) -> tuple[int, str, dict[str, int]]:
    """(exit status, output, counts per outcome) of a fast run."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--fast", "--jobs", "2", "--seconds", str(seconds), "--seed", "7",
         "--out", str(tmp_path), "--recheck-seconds", "20", *extra],
        capture_output=True, text=True, env=env, timeout=120,
    )
    out = proc.stdout + proc.stderr
    counts = {m[2]: int(m[1]) for m in re.finditer(r"^\s+(\d+)  (.+)$", proc.stdout, re.M)}
    return proc.returncode, out, counts


def summary(out: str) -> re.Match:
    m = re.search(r"^diff_pyarrow: fast: (\d+) executions .* (\d+) failures", out, re.M)
    assert m, out[-3000:]
    return m


def test_a_short_run_is_clean(tmp_path: Path) -> None:
    rc, out, counts = run_fast(tmp_path, 3)
    m = summary(out)
    assert int(m[1]) > 0
    assert int(m[2]) == 0 and rc == 0, out[-3000:]
    assert counts.get("ladle:ok pyarrow:ok -> equal", 0) > 0


def test_a_wrong_answer_is_a_failure(tmp_path: Path) -> None:
    # ladle's table loses its first row: the fast mode keeps the mutants for
    # the slow check, which (the same flag on its side) confirms them
    rc, out, counts = run_fast(tmp_path, 2, "--self-test", "corrupt")
    assert rc == 1 and int(summary(out)[2]) > 0, out[-3000:]
    assert counts.get("ladle:ok pyarrow:ok -> needs-slow-check", 0) > 0
    assert any(k.startswith("slow check: ") and k.endswith("-> mismatch") for k in counts), counts
    assert list(tmp_path.glob("slow-7/diff-slow-*.parquet"))


@pytest.mark.parametrize("kind", ["crash", "hang", "raise"])
def test_a_crash_a_hang_or_a_foreign_exception_is_a_failure(kind: str, tmp_path: Path) -> None:
    rc, out, counts = run_fast(tmp_path, 2, "--self-test", kind, "--no-recheck", "--timeout", "1")
    assert rc == 1 and int(summary(out)[2]) > 0, out[-3000:]
    if kind in ("crash", "hang"):
        assert counts.get(f"{kind} in ladle", 0) > 0, counts
        assert list(tmp_path.glob(f"diff-{kind}-*.parquet"))
    else:
        assert counts.get("ladle:unclean", 0) > 0, counts
        assert list(tmp_path.glob("diff-fast-*.parquet"))


def test_gate_crash_reports_a_wrong_answer_without_failing_but_fails_on_a_crash(tmp_path: Path) -> None:
    # what `make test` runs (FUZZ_DIFF_GATE=crash): a new seed each run, so a
    # differing answer is reported with its kept file, and only a crash fails
    rc, out, _ = run_fast(tmp_path / "a", 2, "--self-test", "corrupt", "--gate", "crash")
    assert rc == 0 and int(summary(out)[2]) > 0 and "--gate crash" in out, out[-3000:]
    rc, out, _ = run_fast(tmp_path / "b", 2, "--self-test", "raise", "--no-recheck", "--timeout", "1", "--gate", "crash")
    assert rc == 1, out[-3000:]


def test_a_column_polars_plans_but_cannot_read_agrees_by_its_planned_type(tmp_path: Path) -> None:
    # the slow check's rule for a malformed LogicalType beside converted DATE: pyarrow reads
    # Int32, Polars plans Date and fails to read; ladle's Date with pyarrow's days agrees
    import importlib.util

    import polars as pl

    spec = importlib.util.spec_from_file_location("diff_pyarrow", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path = str(tmp_path / "d.parquet")
    pl.DataFrame({"d": pl.Series([0, 19000, None], dtype=pl.Int32).cast(pl.Date)}).write_parquet(path)
    got = pl.Series("d", [0, 19000, None], dtype=pl.Int32).cast(pl.Date)
    assert mod.planned_type_agrees(path, "d", got, pl.Series("d", [0, 19000, None], dtype=pl.Int32))
    assert not mod.planned_type_agrees(path, "d", got, pl.Series("d", [0, 19001, None], dtype=pl.Int32))
    assert not mod.planned_type_agrees(path, "d", got.cast(pl.Int32), pl.Series("d", [0, 19000, None], dtype=pl.Int32))
    assert not mod.planned_type_agrees(path, "nope", got, pl.Series("d", [0, 19000, None], dtype=pl.Int32))
