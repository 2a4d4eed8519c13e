"""ladle.Loader: every row once per epoch (padding accounted for) from each kind of
source, equal batch counts on uneven ranks (simulated in one process, and under a real
2-process gloo job through torchrun), shuffles per epoch agreed across ranks, List
columns for EmbeddingBag, the background thread's shutdown and errors.

Expected values are computed here from the data (ids are row numbers; every other
column is a function of the id), never from the loader.

    python -m torch.distributed.run --nproc-per-node 2 --standalone \\
        tests/python/test_loader.py ranks <out dir>      # the torchrun worker
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

torch = pytest.importorskip("torch")

import ladle  # noqa: E402

# ------------------------------------------------------------------------ data


def frame(ids: np.ndarray) -> dict[str, Any]:
    """Columns that are functions of the id: x = id / 2 (float32), y = id % 7 (int32),
    flag = id odd, tags = [10 * id + j for j < id % 4] (a List[int64])."""
    ids = np.asarray(ids, dtype=np.int64)
    return {
        "id": ids,
        "x": (ids / 2).astype(np.float32),
        "y": (ids % 7).astype(np.int32),
        "flag": (ids % 2 == 1),
        "tags": [[int(10 * i + j) for j in range(int(i) % 4)] for i in ids],
    }


def tensors(ids: np.ndarray, lists: bool = False) -> dict[str, Any]:
    f = frame(ids)
    out: dict[str, Any] = {k: torch.from_numpy(np.ascontiguousarray(f[k])) for k in ("id", "x", "y", "flag")}
    if lists:
        lens = np.array([len(t) for t in f["tags"]], dtype=np.int64)
        offs = np.concatenate([[0], np.cumsum(lens)])
        vals = np.array([v for t in f["tags"] for v in t], dtype=np.int64)
        out["tags"] = (torch.from_numpy(vals), torch.from_numpy(offs))
    return out


def check_batch(b: dict[str, Any], lists: bool = True) -> np.ndarray:
    """Each row's columns agree with its id (so rows were gathered whole); the ids."""
    ids = b["id"].numpy()
    assert b["id"].dtype == torch.int64
    np.testing.assert_array_equal(b["x"].numpy(), (ids / 2).astype(np.float32))
    np.testing.assert_array_equal(b["y"].numpy(), (ids % 7).astype(np.int32))
    np.testing.assert_array_equal(b["flag"].numpy(), ids % 2 == 1)
    if lists and "tags" in b:
        vals, offs = b["tags"]
        assert offs.dtype == torch.int64 and offs.shape == (len(ids),)
        ends = np.append(offs.numpy()[1:], len(vals))
        for k, i in enumerate(ids):
            got = vals.numpy()[offs[k]:ends[k]].tolist()
            assert got == [10 * int(i) + j for j in range(int(i) % 4)], (i, got)
    return ids


def run(loader: Any) -> list[np.ndarray]:
    """The ids of every batch of one epoch (checking every row)."""
    return [check_batch(b) for b in loader]


@pytest.fixture(scope="module")
def engine() -> ladle.Engine:
    return ladle.Engine(threads=2, raise_on_fail=True)


N = 1003


@pytest.fixture(scope="module")
def pq_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three files of 400, 250 and 353 rows (ids 0..1002), row groups of 60 rows: 7 +
    5 + 6 = 18 units of uneven sizes."""
    d = tmp_path_factory.mktemp("pq")
    at = 0
    for i, n in enumerate((400, 250, 353)):
        f = frame(np.arange(at, at + n))
        t = pa.table({k: (pa.array(v, pa.list_(pa.int64())) if k == "tags" else pa.array(v)) for k, v in f.items()})
        pq.write_table(t, d / f"part{i}.parquet", row_group_size=60)
        at += n
    assert at == N
    return d


def make_source(kind: str, ids: np.ndarray, engine: ladle.Engine, pq_dir: Path) -> Any:
    if kind == "dict":
        return tensors(ids, lists=True)
    if kind == "parquet":
        return pq_dir
    df = pl.DataFrame(frame(ids), schema_overrides={"tags": pl.List(pl.Int64)})
    if kind == "lazyframe":
        return df.lazy()
    if kind == "result":
        return engine.execute(df.lazy())
    raise AssertionError(kind)


KINDS = ["dict", "result", "lazyframe", "parquet"]

# ------------------------------------------------------------- every row once


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_every_row_once(kind: str, shuffle: bool, drop_last: bool, engine: ladle.Engine, pq_dir: Path) -> None:
    b = 64
    src = make_source(kind, np.arange(N), engine, pq_dir)
    loader = ladle.Loader(src, b, shuffle=shuffle, drop_last=drop_last, seed=5, engine=engine, shuffle_window=150)
    assert loader.columns == ["id", "x", "y", "flag", "tags"]
    got = run(loader)
    want_batches = N // b if drop_last else -(-N // b)
    assert len(loader) == want_batches == len(got)
    sizes = [len(g) for g in got]
    assert sizes == [b] * (N // b) + ([] if drop_last else [N % b])
    ids = np.concatenate(got)
    assert len(np.unique(ids)) == len(ids)  # no row twice
    if drop_last:
        assert set(ids) <= set(range(N)) and len(ids) == (N // b) * b
    else:
        np.testing.assert_array_equal(np.sort(ids), np.arange(N))
    if not shuffle and kind != "parquet":
        np.testing.assert_array_equal(ids, np.arange(len(ids)))  # in order
    if shuffle:
        assert not np.array_equal(ids, np.sort(ids))
        # the same epoch again: the same order
        np.testing.assert_array_equal(np.concatenate(run(loader)), ids)


def test_parquet_no_shuffle_keeps_row_groups_in_order(pq_dir: Path) -> None:
    """Without shuffle each row group's rows come in file order, row groups in order."""
    ids = np.concatenate(run(ladle.Loader(pq_dir, 50, shuffle=False)))
    np.testing.assert_array_equal(ids, np.arange(N))


def test_columns_pick_and_order(engine: ladle.Engine, pq_dir: Path) -> None:
    for kind in KINDS:
        src = make_source(kind, np.arange(100), engine, pq_dir)
        loader = ladle.Loader(src, 16, columns=["y", "id"], engine=engine)
        for bt in loader:
            assert list(bt) == ["y", "id"]
            np.testing.assert_array_equal(bt["y"].numpy(), bt["id"].numpy() % 7)


def test_prefetch_zero_same_batches() -> None:
    src = tensors(np.arange(500))
    a = [b["id"] for b in ladle.Loader(src, 33, seed=2, prefetch=0)]
    c = [b["id"] for b in ladle.Loader(src, 33, seed=2, prefetch=7)]
    assert len(a) == len(c) == 16
    assert all(torch.equal(x, y) for x, y in zip(a, c))


@pytest.mark.parametrize("w", [1, 3])
def test_gather_rows_chunks_same_batches(w: int) -> None:
    """Several batches gathered at once and cut into views (the default for a GPU
    output) give the batches a gather per batch gives, List columns and padding too."""
    src = tensors(np.arange(1001), lists=True)
    for r in range(w):
        for shuffle in (False, True):
            a = list(ladle.Loader(src, 32, shuffle=shuffle, seed=4, rank=r, world_size=w))
            c = list(ladle.Loader(src, 32, shuffle=shuffle, seed=4, rank=r, world_size=w, gather_rows=100))
            assert len(a) == len(c) == -(-max(split_sizes(1001, w)) // 32)
            for x, y in zip(a, c):
                check_batch(y)
                assert torch.equal(x["id"], y["id"]) and torch.equal(x["x"], y["x"])
                assert torch.equal(x["tags"][0], y["tags"][0]) and torch.equal(x["tags"][1], y["tags"][1])


def test_next_epoch_made_ahead_is_the_same() -> None:
    """The producer makes the next epoch's permutation once it has handed everything
    over; using it gives what a fresh loader draws for that epoch."""
    src = tensors(np.arange(3000))
    loader = ladle.Loader(src, 100, seed=8)
    run(loader)
    time.sleep(0.2)
    loader.set_epoch(1)
    ahead = np.concatenate(run(loader))
    fresh = ladle.Loader(src, 100, seed=8)
    fresh.set_epoch(1)
    np.testing.assert_array_equal(ahead, np.concatenate(run(fresh)))
    loader.set_epoch(5)  # not the one made ahead (2)
    fresh.set_epoch(5)
    np.testing.assert_array_equal(np.concatenate(run(loader)), np.concatenate(run(fresh)))


def test_multidim_and_numpy_columns() -> None:
    ids = np.arange(100)
    emb = torch.arange(300, dtype=torch.float32).reshape(100, 3)
    loader = ladle.Loader({"id": ids, "emb": emb}, 10, seed=1)
    for b in loader:
        assert b["emb"].shape == (10, 3)
        torch.testing.assert_close(b["emb"], emb[b["id"]])


# ------------------------------------------------------------------- ranks


def split_sizes(n: int, w: int) -> list[int]:
    return sorted(len(p) for p in np.array_split(np.arange(n), w))


@pytest.mark.parametrize("w", [2, 3, 4])
@pytest.mark.parametrize("shuffle", [False, True])
def test_replicated_split_across_ranks(w: int, shuffle: bool) -> None:
    """A replicated source: each rank's own rows (disjoint, together every row once),
    the same batch count everywhere, padding = the rank's first rows again."""
    n, b = 1001, 32
    src = tensors(np.arange(n))
    per = []
    for r in range(w):
        loader = ladle.Loader(src, b, shuffle=shuffle, seed=9, rank=r, world_size=w)
        loader.set_epoch(3)
        per.append((len(loader), [check_batch(x) for x in loader]))
    big = max(split_sizes(n, w))
    assert {p[0] for p in per} == {-(-big // b)}
    assert all(len(p[1]) == p[0] for p in per)
    own = []
    for nb, batches in per:
        ids = np.concatenate(batches)
        assert len(ids) == big  # every rank yields the largest rank's row count
        k = len(np.unique(ids))
        assert len(np.unique(ids[:k])) == k  # its own rows first, each once
        np.testing.assert_array_equal(ids[k:], np.resize(ids[:k], len(ids) - k))  # then its first rows again
        own.append(ids[:k])
    assert sorted(len(o) for o in own) == split_sizes(n, w)
    every = np.concatenate(own)
    np.testing.assert_array_equal(np.sort(every), np.arange(n))  # disjoint, complete: one permutation
    # drop_last: the smallest rank's full batches everywhere, rows still disjoint
    got = [np.concatenate(run(ladle.Loader(src, b, shuffle=shuffle, seed=9, drop_last=True, rank=r, world_size=w)))
           for r in range(w)]
    small = min(split_sizes(n, w))
    assert all(len(g) == (small // b) * b for g in got)
    allids = np.concatenate(got)
    assert len(np.unique(allids)) == len(allids)


def test_replicated_fewer_rows_than_ranks() -> None:
    src = tensors(np.arange(3))
    got = [np.concatenate(run(ladle.Loader(src, 4, rank=r, world_size=5))) for r in range(5)]
    assert all(len(g) == 1 for g in got)  # every rank one batch of one row
    assert set(np.concatenate(got)) == {0, 1, 2}
    assert all(len(run(ladle.Loader(src, 4, rank=r, world_size=5, drop_last=True))) == 0 for r in range(5))


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_sharded_uneven_ranks(drop_last: bool, shuffle: bool) -> None:
    """Each rank its own rows (50, 23, 37): equal batch counts; padding repeats the
    rank's own first rows; drop_last keeps the smallest rank's full batches."""
    sizes, b = [50, 23, 37], 8
    starts = np.cumsum([0] + sizes)
    per = []
    for r, n in enumerate(sizes):
        mine = np.arange(starts[r], starts[r] + n)
        loader = ladle.Loader(tensors(mine), b, shuffle=shuffle, drop_last=drop_last, seed=1, rank=r,
                              world_size=3, sharded=True, shard_rows=sizes)
        assert loader.rows_per_rank() == sizes
        batches = run(loader)
        assert len(batches) == len(loader)
        per.append((mine, batches))
    nb = min(sizes) // b if drop_last else -(-max(sizes) // b)
    for mine, batches in per:
        assert len(batches) == nb
        ids = np.concatenate(batches) if batches else np.zeros(0, np.int64)
        assert [len(x) for x in batches] == ([b] * nb if drop_last else [b] * (nb - 1) + [max(sizes) - b * (nb - 1)])
        if drop_last:
            assert len(np.unique(ids)) == len(ids) and set(ids) <= set(mine)
        else:
            n = len(mine)
            np.testing.assert_array_equal(np.sort(ids[:n]), mine)  # its rows once
            np.testing.assert_array_equal(ids[n:], np.resize(ids[:n], max(sizes) - n))  # its first rows again
        if not shuffle:
            np.testing.assert_array_equal(ids[: min(len(ids), len(mine))], mine[: min(len(ids), len(mine))])


@pytest.mark.parametrize("w", [2, 3, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_parquet_ranks(w: int, drop_last: bool, pq_dir: Path) -> None:
    """Row groups dealt out: equal batch counts with no communication; no row twice
    across ranks except each rank's padding (its own first rows)."""
    b = 16
    for epoch in (0, 1):
        per = []
        for r in range(w):
            loader = ladle.Loader(pq_dir, b, drop_last=drop_last, seed=4, rank=r, world_size=w, shuffle_window=100)
            loader.set_epoch(epoch)
            per.append((len(loader), loader.rows_per_rank(), run(loader)))
        counts = per[0][1]
        assert all(p[1] == counts for p in per) and sum(counts) == N
        assert max(counts) - min(counts) <= 60  # balanced to within a row group
        nb = min(counts) // b if drop_last else -(-max(counts) // b)
        assert all(p[0] == nb and len(p[2]) == nb for p in per)
        real = []
        for r, (_, _, batches) in enumerate(per):
            ids = np.concatenate(batches)
            if drop_last:
                assert len(ids) == nb * b
                real.append(ids)
            else:
                n = counts[r]
                assert len(ids) == max(counts)
                np.testing.assert_array_equal(ids[n:], np.resize(ids[:n], len(ids) - n))
                real.append(ids[:n])
        every = np.concatenate(real)
        assert len(np.unique(every)) == len(every)
        if not drop_last:
            np.testing.assert_array_equal(np.sort(every), np.arange(N))


def test_parquet_streams_row_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Row groups are read one at a time as the batches are consumed: stopping after the
    first batch leaves most of the 40 row groups unread; a whole epoch reads each once."""
    pq.write_table(pa.table({"id": np.arange(400_000)}), tmp_path / "big.parquet", row_group_size=10_000)
    reads: list[int] = []
    from ladle import _native

    real = _native.scan_parquet

    def counted(*a: Any) -> Any:
        assert len(a) == 8 and a[7] == a[6] + 1, a  # one row group at a time
        reads.append(a[6])
        return real(*a)

    monkeypatch.setattr(_native, "scan_parquet", counted)
    for shuffle in (False, True):
        reads.clear()
        loader = ladle.Loader(tmp_path / "big.parquet", 1000, shuffle=shuffle, prefetch=1, shuffle_window=20_000)
        it = iter(loader)
        next(it)
        time.sleep(0.3)  # the producer runs ahead as far as prefetch lets it
        it.close()
        assert 1 <= len(reads) <= 6, reads  # the window (2) + prefetch + a little
        reads.clear()
        assert sum(len(b["id"]) for b in loader) == 400_000
        assert sorted(reads) == list(range(40))


def test_parquet_more_ranks_than_row_groups(tmp_path: Path) -> None:
    """A rank dealt no row group pads with the epoch's first row group's rows."""
    pq.write_table(pa.table({"id": np.arange(10)}), tmp_path / "a.parquet", row_group_size=5)  # two units
    got = [np.concatenate([x["id"].numpy() for x in ladle.Loader(tmp_path, 4, rank=r, world_size=3)])
           for r in range(3)]
    assert [len(g) for g in got] == [5, 5, 5]
    assert sorted(np.concatenate(got[:2]).tolist()) == list(range(10))  # ranks 0 and 1: a row group each
    # rank 2, dealt nothing, repeats one whole row group (the epoch's first)
    assert sorted(got[2].tolist()) in (list(range(5)), list(range(5, 10)))
    assert all(len(list(ladle.Loader(tmp_path, 4, rank=r, world_size=3, drop_last=True))) == 0 for r in range(3))


# ---------------------------------------------------------------- shuffles


def test_shuffle_per_epoch_and_agreed() -> None:
    src = tensors(np.arange(2000))

    def order(epoch: int, seed: int = 0, rank: int = 0, w: int = 1) -> np.ndarray:
        loader = ladle.Loader(src, 100, seed=seed, rank=rank, world_size=w)
        loader.set_epoch(epoch)
        return np.concatenate(run(loader))

    e0, e1 = order(0), order(1)
    assert not np.array_equal(e0, e1)
    np.testing.assert_array_equal(np.sort(e0), np.sort(e1))
    np.testing.assert_array_equal(order(1), e1)  # a function of (seed, epoch)
    assert not np.array_equal(order(1, seed=1), e1)
    # two ranks of one job: shares of one permutation (disjoint, complete), per epoch
    for epoch in (0, 1):
        a, b = order(epoch, rank=0, w=2), order(epoch, rank=1, w=2)
        np.testing.assert_array_equal(np.sort(np.concatenate([a, b])), np.arange(2000))
    assert not np.array_equal(order(0, rank=0, w=2), order(1, rank=0, w=2))


def test_parquet_shuffle_per_epoch(pq_dir: Path) -> None:
    loader = ladle.Loader(pq_dir, 50, seed=3, shuffle_window=200)
    e0 = np.concatenate(run(loader))
    loader.set_epoch(1)
    e1 = np.concatenate(run(loader))
    assert not np.array_equal(e0, e1)
    np.testing.assert_array_equal(np.sort(e0), np.arange(N))
    np.testing.assert_array_equal(np.sort(e1), np.arange(N))
    # the window mixes rows of several row groups within a batch
    starts = np.array([0, 400, 650])
    f = np.searchsorted(starts, e0[:50], side="right") - 1
    units = f * 100 + (e0[:50] - starts[f]) // 60
    assert len(set(units.tolist())) > 1


def test_hash_permutation_matches_numpy() -> None:
    """The permutation a GPU source uses, run on the CPU here: a permutation, equal to
    numpy's uint64 splitmix64 ordering (signed order of the hashed values)."""
    from ladle.loader import _hash_permutation

    n, key = 5000, 123456789
    got = _hash_permutation(n, key, torch.device("cpu")).numpy()
    with np.errstate(over="ignore"):
        z = np.arange(n, dtype=np.uint64) + np.uint64((key + 0x9E3779B97F4A7C15) % (1 << 64))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    want = np.argsort(z.view(np.int64), kind="stable")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.sort(got), np.arange(n))


# ------------------------------------------------------------------ lists


def test_list_column_embedding_bag(engine: ladle.Engine) -> None:
    ids = np.arange(200)
    f = frame(ids)
    res = engine.execute(pl.DataFrame(f, schema_overrides={"tags": pl.List(pl.Int64)}).lazy())
    emb = torch.nn.EmbeddingBag(10 * 200, 4, mode="sum")
    w = emb.weight.detach()
    seen = 0
    for b in ladle.Loader(res, 32, seed=7, columns=["id", "tags"]):
        vals, offs = b["tags"]
        assert offs.shape == b["id"].shape and offs.dtype == torch.int64
        out = emb(vals, offs)
        for k, i in enumerate(b["id"].tolist()):
            want = w[[10 * i + j for j in range(i % 4)]].sum(0) if i % 4 else torch.zeros(4)
            torch.testing.assert_close(out[k], want)
        seen += len(b["id"])
    assert seen == 200


def test_list_column_from_dict_and_sliced_result(engine: ladle.Engine) -> None:
    """(values, offsets) given with rows + 1 offsets; and a Result whose list column
    starts inside its values buffer (a slice)."""
    run(ladle.Loader(tensors(np.arange(300), lists=True), 17, seed=1))
    df = pl.DataFrame(frame(np.arange(400)), schema_overrides={"tags": pl.List(pl.Int64)})
    res = engine.execute(df.lazy().slice(123, 200))
    ids = np.concatenate(run(ladle.Loader(res, 64, shuffle=False)))
    np.testing.assert_array_equal(ids, np.arange(123, 323))


# ------------------------------------------------------------ the thread


def loader_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ladle-loader" and t.is_alive()]


def wait_no_threads(timeout: float = 5.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        gc.collect()
        if not loader_threads():
            return True
        time.sleep(0.02)
    return False


def test_early_break_stops_thread() -> None:
    assert wait_no_threads()
    loader = ladle.Loader(tensors(np.arange(100_000)), 10, prefetch=4)
    for i, _ in enumerate(loader):
        if i == 3:
            break
    assert wait_no_threads(), loader_threads()
    it = iter(loader)
    next(it)
    assert loader_threads()
    del it  # garbage collection
    assert wait_no_threads()
    with pytest.raises(KeyError):
        for b in loader:
            b["nope"]  # an exception in the loop body
    assert wait_no_threads()
    it = iter(loader)
    next(it)
    it.close()
    assert not loader_threads()
    with pytest.raises(StopIteration):
        next(it)


def test_no_hang_at_exit(tmp_path: Path) -> None:
    """A script that leaves an iteration half done (and one whose producer is blocked)
    exits promptly."""
    script = tmp_path / "s.py"
    script.write_text(
        "import sys; sys.path.insert(0, %r)\n"
        "import numpy as np, torch, ladle\n"
        "L = ladle.Loader({'x': torch.arange(10**6)}, 7, prefetch=3)\n"
        "it = iter(L); next(it)\n"
        "keep = [it]\n"
        "print('ok')\n" % str(ROOT / "python")
    )
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-2000:]
    assert time.monotonic() - t0 < 30


def test_exit_right_after_an_epoch(tmp_path: Path) -> None:
    """An epoch run to its end leaves the producer making the next epoch's permutation;
    exiting at once must neither hang nor abort (a daemon thread inside a torch kernel
    while the process tears torch down)."""
    script = tmp_path / "e.py"
    script.write_text(
        "import sys; sys.path.insert(0, %r)\n"
        "import torch, ladle\n"
        "L = ladle.Loader({'x': torch.arange(3 * 10**6)}, 10**6)\n"
        "for b in L: pass\n"
        "print('ok')\n" % str(ROOT / "python")
    )
    for _ in range(2):
        p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and p.stdout.strip() == "ok", (p.returncode, p.stderr[-2000:])


def test_producer_exception_reraised(tmp_path: Path) -> None:
    """A null in a later row group: the producer raises while reading it; the consumer
    gets the batches made before, then that ValueError naming the column and file."""
    ids = np.arange(500)
    x = pa.array([None if i == 450 else float(i) for i in ids], pa.float64())
    pq.write_table(pa.table({"id": ids, "x": x}), tmp_path / "n.parquet", row_group_size=100)
    loader = ladle.Loader(tmp_path / "n.parquet", 50, shuffle=False, prefetch=2)
    got = []
    with pytest.raises(ValueError, match=r"column 'x'.*n\.parquet.*row group 4.*null"):
        for b in loader:
            got.append(b["id"])
    assert len(got) == 8  # the first four row groups' batches came through
    assert wait_no_threads()


def test_producer_exception_type_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception of any type in the producer reaches the consumer as itself, after
    the batches made before it."""
    import ladle.loader as L

    class Boom(RuntimeError):
        pass

    calls = {"n": 0}
    real = L._table_take

    def flaky(t: Any, idx: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 4:
            raise Boom("injected")
        return real(t, idx)

    monkeypatch.setattr(L, "_table_take", flaky)
    loader = ladle.Loader({"id": torch.arange(1000)}, 10, gather_rows=20)  # 2 batches per gather
    got = []
    with pytest.raises(Boom, match="injected"):
        for b in loader:
            got.append(b["id"])
    assert len(got) == 6
    assert wait_no_threads()


# -------------------------------------------------------------------- errors


def test_errors(engine: ladle.Engine, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="batch_size=0"):
        ladle.Loader(tensors(np.arange(5)), 0)
    with pytest.raises(ValueError, match="batch_size=-3"):
        ladle.Loader(tensors(np.arange(5)), -3)
    with pytest.raises(TypeError, match="batch_size"):
        ladle.Loader(tensors(np.arange(5)), 2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unequal lengths.*'a': 3.*'b': 4"):
        ladle.Loader({"a": torch.zeros(3), "b": torch.zeros(4)}, 2)
    with pytest.raises(TypeError, match="column 's'"):
        ladle.Loader({"s": ["a", "b"]}, 2)
    res = engine.execute(pl.LazyFrame({"a": [1, None, 3], "s": ["x", "y", "z"], "b": [1.0, 2.0, 3.0]}))
    with pytest.raises(ValueError, match=r"column 'a' has null"):
        ladle.Loader(res, 2, columns=["b", "a"])
    with pytest.raises(TypeError, match=r"column 's' is String"):
        ladle.Loader(res, 2)
    with pytest.raises(ValueError, match=r"no column 'zz'"):
        ladle.Loader(res, 2, columns=["zz"])
    assert len(ladle.Loader(res, 2, columns=["b"])) == 2  # the others are fine
    pq.write_table(pa.table({"id": [1, 2], "s": ["a", "b"]}), tmp_path / "s.parquet")
    with pytest.raises(TypeError, match=r"column 's'.*s\.parquet"):
        ladle.Loader(tmp_path / "s.parquet", 2)
    assert len(ladle.Loader(tmp_path / "s.parquet", 2, columns=["id"])) == 1
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no \\*.parquet files"):
        ladle.Loader(tmp_path / "empty", 2)
    with pytest.raises(TypeError, match="source is int"):
        ladle.Loader(5, 2)  # type: ignore[arg-type]
    # ranks
    with pytest.raises(ValueError, match=r"rank=2, world_size=2"):
        ladle.Loader(tensors(np.arange(5)), 2, rank=2, world_size=2)
    with pytest.raises(ValueError, match="rank count mismatch"):
        ladle.Loader(tensors(np.arange(5)), 2, rank=0, world_size=2, sharded=True, shard_rows=[5, 5, 5])
    with pytest.raises(ValueError, match="needs every rank's row count"):
        ladle.Loader(tensors(np.arange(5)), 2, rank=0, world_size=2, sharded=True)
    with pytest.raises(ValueError, match=r"rank\(s\) \[1\] hold no rows"):
        ladle.Loader(tensors(np.arange(5)), 2, rank=0, world_size=2, sharded=True, shard_rows=[5, 0])
    assert len(ladle.Loader(tensors(np.arange(5)), 2, rank=0, world_size=2, sharded=True, shard_rows=[5, 0],
                            drop_last=True)) == 0
    with pytest.raises(ValueError, match="rank count mismatch"):
        ladle.Loader(tensors(np.arange(5)), 2, engine=ladle.SPMDEngine(comm="self", threads=1), world_size=2,
                     rank=0, sharded=True)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda"):
            ladle.Loader(tensors(np.arange(5)), 2, device="cuda")


def test_empty_source_gives_no_batches(engine: ladle.Engine, tmp_path: Path) -> None:
    pq.write_table(pa.table({"id": pa.array([], pa.int64())}), tmp_path / "e.parquet")
    for src in (tensors(np.arange(0)), engine.execute(pl.LazyFrame({"id": pl.Series([], dtype=pl.Int64)})),
                tmp_path / "e.parquet"):
        for dl in (False, True):
            loader = ladle.Loader(src, 4, drop_last=dl)
            assert len(loader) == 0 and list(loader) == []


def test_inside_torch_dataloader() -> None:
    """As an IterableDataset: DataLoader(loader, batch_size=None), also with two
    workers (each takes every other batch; the DataLoader interleaves them back)."""
    from torch.utils.data import DataLoader, IterableDataset

    loader = ladle.Loader(tensors(np.arange(300)), 16, seed=3)
    assert isinstance(loader, IterableDataset)
    direct = [b["id"] for b in loader]
    for workers in (0, 2):
        dl = DataLoader(loader, batch_size=None, num_workers=workers)
        assert len(dl) == len(direct) == 19
        got = [b["id"] for b in dl]
        assert len(got) == len(direct) and all(torch.equal(a, b) for a, b in zip(got, direct))


# ------------------------------------------------------------------- CUDA
# Not run on a machine without a GPU; they check the CUDA paths where one is.

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def to_host(b: dict[str, Any]) -> dict[str, Any]:
    return {k: (tuple(x.cpu() for x in v) if isinstance(v, tuple) else v.cpu()) for k, v in b.items()}


@cuda
@pytest.mark.parametrize("where", ["gpu_source", "host_to_gpu", "parquet_to_gpu", "gpu_to_host"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_cuda_every_row_once(where: str, shuffle: bool, pq_dir: Path) -> None:
    dev = torch.device("cuda", torch.cuda.current_device())
    src: Any = tensors(np.arange(N), lists=True)
    if where in ("gpu_source", "gpu_to_host"):
        src = {k: (tuple(x.to(dev) for x in v) if isinstance(v, tuple) else v.to(dev)) for k, v in src.items()}
    if where == "parquet_to_gpu":
        src = pq_dir
    device = {"gpu_source": None, "host_to_gpu": "cuda", "parquet_to_gpu": "cuda", "gpu_to_host": "cpu"}[where]
    for w in (1, 3):
        seen = []
        for r in range(w):
            loader = ladle.Loader(src, 64, shuffle=shuffle, seed=2, device=device, rank=r, world_size=w,
                                  gather_rows=256)
            loader.set_epoch(1)
            n = 0
            for b in loader:
                want = "cpu" if where == "gpu_to_host" else "cuda"
                assert all(t.device.type == want for v in b.values() for t in (v if isinstance(v, tuple) else (v,)))
                x = b["x"] * 2  # used on the consumer's stream before the host copy
                hb = to_host(b)
                np.testing.assert_array_equal(x.cpu().numpy(), hb["id"].numpy().astype(np.float32))
                seen.append(check_batch(hb))
                n += 1
            assert n == len(loader)
        ids = np.concatenate(seen)
        assert set(ids.tolist()) == set(range(N))


@cuda
def test_cuda_result_source(engine: ladle.Engine) -> None:
    gpu = ladle.Engine(device="cuda")
    df = pl.DataFrame({"id": np.arange(5000), "x": (np.arange(5000) / 2).astype(np.float32)})
    res = gpu.execute(df.lazy().select("id", "x"))
    loader = ladle.Loader(res, 512, device="cuda", seed=1)
    ids = []
    for b in loader:
        assert b["id"].is_cuda
        torch.testing.assert_close(b["x"], (b["id"] / 2).float())
        ids.append(b["id"].cpu().numpy())
    np.testing.assert_array_equal(np.sort(np.concatenate(ids)), np.arange(5000))


@cuda
def test_cuda_hash_permutation_same_as_cpu() -> None:
    from ladle.loader import _hash_permutation

    for n in (1, 1000, 1 << 20):
        a = _hash_permutation(n, 42, torch.device("cpu"))
        b = _hash_permutation(n, 42, torch.device("cuda")).cpu()
        assert torch.equal(a, b)


# ------------------------------------------------------------- real ranks


def _worker(out: Path, data: Path) -> None:
    """One rank of a 2-process gloo job: sharded and replicated sources, Parquet, and
    an SPMDEngine's result; every batch followed by an all_reduce, as DDP's backward
    does (a rank short of batches would leave the other waiting: gloo times out)."""
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    r, w = dist.get_rank(), dist.get_world_size()
    found: dict[str, Any] = {"rank": r, "world": w}

    def drive(name: str, loader: Any) -> None:
        ids, steps = [], 0
        for b in loader:
            ids.append(b["id"].tolist())
            t = torch.ones(1)
            dist.all_reduce(t)  # every rank must be here for every batch
            steps += 1
        found[name] = {"len": len(loader), "steps": steps, "ids": ids}

    sizes = [45, 17]
    start = sum(sizes[:r])
    mine = tensors(np.arange(start, start + sizes[r]))
    for dl in (False, True):
        loader = ladle.Loader(mine, 8, sharded=True, drop_last=dl, seed=2)  # counts agreed via all_gather
        found[f"sharded_counts_{dl}"] = loader.rows_per_rank()
        drive(f"sharded_{dl}", loader)
    drive("replicated", ladle.Loader(tensors(np.arange(101)), 10, seed=2))
    loader = ladle.Loader(data, 32, seed=2, shuffle_window=100)
    loader.set_epoch(1)
    found["parquet_counts"] = loader.rows_per_rank()
    drive("parquet", loader)
    try:  # a "replicated" source that differs between the ranks
        ladle.Loader(mine, 8)
        found["mismatch"] = ""
    except ValueError as e:
        found["mismatch"] = str(e)
    with ladle.SPMDEngine.from_torch_distributed(threads=1) as eng:
        lf = pl.DataFrame(frame(np.arange(start, start + sizes[r]))).lazy().select("id", "x", "y", "flag")
        found["spmd_sharded"] = eng.execute(lf).sharded
        # the LazyFrame run on the engine: a sharded Result, counts agreed by its allgather
        drive("spmd", ladle.Loader(lf, 8, engine=eng, seed=2))
    (out / f"rank{r}.json").write_text(json.dumps(found))
    dist.destroy_process_group()


def test_two_ranks_under_torchrun(pq_dir: Path, tmp_path: Path) -> None:
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_gloo_available()):
        pytest.skip("torch.distributed with gloo is not available")
    out = tmp_path / "out"
    out.mkdir()
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), e.get("PYTHONPATH", "")])
    e["OMP_NUM_THREADS"] = "1"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
           __file__, "ranks", str(out), str(pq_dir)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e,
                         start_new_session=True)
    try:
        text, _ = p.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        text, _ = p.communicate()
        pytest.fail(f"torchrun did not finish (a rank waiting for a batch?):\n{text[-3000:]}")
    assert p.returncode == 0, text[-4000:]
    f = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    for name in ("sharded_False", "sharded_True", "replicated", "parquet", "spmd"):
        assert f[0][name]["len"] == f[1][name]["len"] == f[0][name]["steps"] == f[1][name]["steps"], name
    assert f[0]["sharded_counts_False"] == [45, 17]
    assert f[0]["sharded_False"]["len"] == 6 and f[0]["sharded_True"]["len"] == 2
    # rank 1 pads its 17 rows to 45 with its own first rows
    ids1 = sum(f[1]["sharded_False"]["ids"], [])
    assert sorted(ids1[:17]) == list(range(45, 62)) and ids1[17:] == (ids1[:17] * 3)[:28]
    assert sorted(sum(f[0]["sharded_False"]["ids"], [])) == list(range(45))
    rep = sum(f[0]["replicated"]["ids"], []) + sum(f[1]["replicated"]["ids"], [])
    assert sorted(set(rep)) == list(range(101)) and len(rep) == 102  # 50 + 51 rows, one padded
    counts = f[0]["parquet_counts"]
    assert counts == f[1]["parquet_counts"] and sum(counts) == N
    own = [sum(x["parquet"]["ids"], [])[:c] for x, c in zip(f, counts)]  # then padding
    assert sorted(own[0] + own[1]) == list(range(N))  # disjoint, complete
    assert f[0]["parquet"]["len"] == -(-max(counts) // 32)
    assert "same rows on every rank" in f[0]["mismatch"] and "[45, 17]" in f[1]["mismatch"]
    assert f[0]["spmd_sharded"] is True and f[1]["spmd_sharded"] is True
    assert f[0]["spmd"]["len"] == 6
    assert sorted(sum(f[1]["spmd"]["ids"], [])[:17]) == list(range(45, 62))


if __name__ == "__main__":
    {"ranks": _worker}[sys.argv[1]](Path(sys.argv[2]), Path(sys.argv[3]))
