"""ladle.persisted_to_torch: zero-copy tensors from a Result (shown by data pointers
against the Result's own Arrow buffers), consumption, errors, ensure_sharded as
torch.chunk splits. The multi-rank case (a sharded result comes back unchanged) runs
under mpirun in spmd_worker.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
import torch

import ladle


@pytest.fixture(scope="module")
def engine() -> ladle.Engine:
    return ladle.Engine(threads=2, raise_on_fail=True)


def _frame(n: int = 1000) -> pl.DataFrame:
    rng = np.random.default_rng(7)
    return pl.DataFrame(
        {
            "i64": rng.integers(-(2**40), 2**40, n),
            "i32": rng.integers(-1000, 1000, n).astype(np.int32),
            "u8": rng.integers(0, 255, n).astype(np.uint8),
            "f32": rng.standard_normal(n).astype(np.float32),
            "f64": rng.standard_normal(n),
            "b": rng.integers(0, 2, n).astype(bool),
        }
    )


def test_values_and_types(engine: ladle.Engine) -> None:
    df = _frame()
    lf = df.lazy().with_columns((pl.col("f64") * 2).alias("g"), (pl.col("i64") + 1).alias("j"))
    want = lf.collect()
    got = ladle.persisted_to_torch(engine.execute(lf))
    assert list(got) == want.columns
    for c in want.columns:
        ref = torch.from_numpy(want[c].to_numpy().copy())
        assert got[c].dtype == ref.dtype, c
        assert got[c].device.type == "cpu"
        assert torch.equal(got[c], ref), c


def test_zero_copy(engine: ladle.Engine) -> None:
    # a column the engine computed lies in one buffer: the tensor is that buffer
    lf = _frame().lazy().select((pl.col("f64") + 1).alias("x"), (pl.col("i32") * 3).alias("y"))
    res = engine.execute(lf)
    tab = res.to_arrow()  # shares the buffers (Arrow C stream, no copy)
    addr = {}
    for c in ("x", "y"):
        col = tab.column(c)
        assert col.num_chunks == 1
        addr[c] = col.chunk(0).buffers()[1].address
    got = ladle.persisted_to_torch(res)
    for c in ("x", "y"):
        assert got[c].data_ptr() == addr[c], c
    # the tensors outlive the result and its Arrow export
    del res, tab
    want = lf.collect()
    assert torch.equal(got["x"], torch.from_numpy(want["x"].to_numpy().copy()))


def test_consumed(engine: ladle.Engine) -> None:
    res = engine.execute(_frame().lazy().select("i64"))
    ladle.persisted_to_torch(res)
    for use in (lambda: res.num_rows, lambda: res.to_polars(), lambda: res.column("i64").__dlpack__(),
                lambda: ladle.persisted_to_torch(res)):
        with pytest.raises(ladle.LadleError, match="consumed by ladle.persisted_to_torch"):
            use()
    assert "consumed" in repr(res)


def test_columns_subset_and_order(engine: ladle.Engine) -> None:
    df = _frame()
    got = ladle.persisted_to_torch(engine.execute(df.lazy()), columns=["f32", "i64"])
    assert list(got) == ["f32", "i64"]
    assert torch.equal(got["i64"], torch.from_numpy(df["i64"].to_numpy().copy()))
    with pytest.raises(KeyError, match="'nope'"):
        ladle.persisted_to_torch(engine.execute(df.lazy()), columns=["nope"])
    with pytest.raises(TypeError, match="list of names"):
        ladle.persisted_to_torch(engine.execute(df.lazy()), columns="i64")


@pytest.mark.parametrize(
    "frame, column, why",
    [
        (pl.DataFrame({"a": [1, 2], "s": ["x", "y"]}), "s", "String"),
        (pl.DataFrame({"a": [1.0, None, 3.0]}), "a", "null"),
        (pl.DataFrame({"a": [[1], [2, 3]]}), "a", "List"),
    ],
)
def test_refused_columns_leave_the_result(engine: ladle.Engine, frame: pl.DataFrame, column: str, why: str) -> None:
    res = engine.execute(frame.lazy())
    with pytest.raises(TypeError, match=f"'{column}'.*{why}|{why}.*'{column}'|'{column}' has .*{why}"):
        ladle.persisted_to_torch(res)
    # refused before anything was consumed: the result is still whole
    assert res.to_polars().equals(frame)


def test_not_a_result() -> None:
    with pytest.raises(TypeError, match="ladle.Result"):
        ladle.persisted_to_torch(pl.DataFrame({"a": [1]}))  # type: ignore[arg-type]


class _Ranks:
    """An engine as persisted_to_torch sees one: a rank and a rank count."""

    def __init__(self, rank: int, nranks: int) -> None:
        self.rank, self.nranks = rank, nranks


@pytest.mark.parametrize("n, nranks", [(10, 3), (9, 3), (2, 4), (0, 2), (1000, 7)])
def test_ensure_sharded_splits_as_torch_chunk(engine: ladle.Engine, n: int, nranks: int) -> None:
    df = pl.DataFrame({"a": np.arange(n, dtype=np.int64), "b": np.arange(n, dtype=np.float32) / 2})
    whole = torch.arange(n, dtype=torch.int64)
    seen: list[Any] = []
    for rank in range(nranks):
        res = engine.execute(df.lazy())
        assert not res.sharded
        got = ladle.persisted_to_torch(res, engine=_Ranks(rank, nranks), ensure_sharded=True)
        parts = torch.chunk(whole, nranks)
        want = parts[rank] if rank < len(parts) else whole[:0]
        assert torch.equal(got["a"], want)
        assert torch.equal(got["b"], want.to(torch.float32) / 2)
        seen.extend(got["a"].tolist())
    assert seen == list(range(n))  # every row on exactly one rank


def test_ensure_sharded_one_rank_is_whole(engine: ladle.Engine) -> None:
    df = _frame(50)
    got = ladle.persisted_to_torch(engine.execute(df.lazy()), ensure_sharded=True)
    assert got["i64"].shape[0] == 50
