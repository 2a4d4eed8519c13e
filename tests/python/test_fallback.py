"""Fallback: what ladle cannot run goes to Polars with a warning that names it,
raises with raise_on_fail (or LADLE_RAISE_ON_FAIL=1), and a query whose only
unsupported part is a file scan runs as a mixed plan."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import ladle

DF = pl.DataFrame({"a": [1, 2, 3, 4], "s": ["x", "y", "x", "z"]})


def unsupported_query() -> pl.LazyFrame:
    # rolling windows are not in ladle yet
    return DF.lazy().select(pl.col("a").rolling_mean(2))


def test_unsupported_expression_warns_and_answers() -> None:
    engine = ladle.Engine(raise_on_fail=False)
    with pytest.warns(ladle.FallbackWarning, match="Rolling|function"):
        got = unsupported_query().collect(engine=engine)
    assert engine.last_run == "polars"
    assert_frame_equal(got, unsupported_query().collect())


def test_raise_on_fail_raises_with_the_reason() -> None:
    engine = ladle.Engine(raise_on_fail=True)
    with pytest.raises(ladle.UnsupportedError, match="Rolling|function"):
        unsupported_query().collect(engine=engine)


def test_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LADLE_RAISE_ON_FAIL", "1")
    with pytest.raises(ladle.UnsupportedError):
        ladle.Engine().collect(unsupported_query())


def test_unsupported_dtype_is_a_fallback_not_a_crash() -> None:
    df = pl.DataFrame({"l": [{"x": 1}, {"x": 2}], "a": [1, 2]})
    engine = ladle.Engine()
    with pytest.warns(ladle.FallbackWarning, match="Struct"):
        got = df.lazy().select(pl.col("l"), pl.col("a") + 1).collect(engine=engine)
    assert_frame_equal(got, df.lazy().select(pl.col("l"), pl.col("a") + 1).collect())


def test_explain_marks_fallback() -> None:
    text = ladle.Engine().explain(unsupported_query())
    assert text.startswith("FALLBACK") and "Polars' plan" in text
    ok = ladle.Engine().explain(DF.lazy().filter(pl.col("a") > 1))
    assert "FILTER" in ok and "SCAN" in ok


def test_mixed_plan_scans_on_polars_rest_on_ladle(tmp_path: Path) -> None:
    path = tmp_path / "data.arrow"  # ladle has no IPC reader: the scan runs on Polars
    DF.write_ipc(path)
    lf = pl.scan_ipc(path).group_by("s").agg(pl.col("a").sum()).sort("s")
    engine = ladle.Engine()
    with pytest.warns(ladle.FallbackWarning, match="mixed plan"):
        got = lf.collect(engine=engine)
    assert engine.last_run == "mixed"
    assert_frame_equal(got, lf.collect())
    with pytest.raises(ladle.UnsupportedError):
        ladle.Engine(raise_on_fail=True).collect(lf)
    assert "MIXED" in engine.explain(lf)


def test_runtime_errors_are_raised_not_retried() -> None:
    lf = pl.DataFrame({"s": ["1", "x"]}).lazy().select(pl.col("s").cast(pl.Int32))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ladle.FallbackWarning)
        with pytest.raises(ladle.LadleError, match="'x'"):
            ladle.Engine().collect(lf)


def test_a_series_literal_falls_back_naming_it() -> None:
    lf = DF.lazy().with_columns(pl.Series("r", [4, 3, 2, 1]))
    with pytest.warns(ladle.FallbackWarning, match="Series literal 'r'"):
        got = lf.collect(engine=ladle.Engine(raise_on_fail=False))
    assert_frame_equal(got, lf.collect())
    with pytest.raises(ladle.UnsupportedError, match="a Series inside an expression"):
        lf.collect(engine=ladle.Engine(raise_on_fail=True))
