"""Shared fixtures: a raise_on_fail ladle engine and the differential check."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

sys.path.insert(0, str(Path(__file__).parent))

import ladle  # noqa: E402


@pytest.fixture(scope="session")
def engine() -> ladle.Engine:
    return ladle.Engine(raise_on_fail=True, threads=2)


@pytest.fixture(scope="session")
def small_engine() -> ladle.Engine:
    """Tiny morsels: every operator sees many partitions."""
    return ladle.Engine(raise_on_fail=True, threads=2, morsel_rows=7)


def assert_same(lf: pl.LazyFrame, engine: ladle.Engine, *, ordered: bool = True, **kw: object) -> pl.DataFrame:
    """The LazyFrame on ladle equals it on Polars' CPU engine."""
    expected = lf.collect(engine="in-memory")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ladle.FallbackWarning)
        got = lf.collect(engine=engine)
    assert engine.last_run == "ladle", f"ran on {engine.last_run}"
    assert_frame_equal(got, expected, check_row_order=ordered, **kw)  # type: ignore[arg-type]
    return got
