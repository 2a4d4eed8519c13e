"""TPC-H q1-q22 on ladle (raise_on_fail) against Polars' CPU engine, SF 0.1."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import assert_same
from tpch_queries import QUERIES, load_all


@pytest.fixture(scope="module")
def tables() -> dict[str, pl.LazyFrame]:
    return {k: v.lazy() for k, v in load_all().items()}


@pytest.mark.parametrize("q", sorted(QUERIES))
def test_tpch(q: int, tables: dict[str, pl.LazyFrame], engine) -> None:
    lf = QUERIES[q](tables)
    got = assert_same(lf, engine, rel_tol=1e-9)
    assert got.height > 0, f"q{q} returned no rows: the test data or query is wrong"
