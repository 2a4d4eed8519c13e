"""Filter terms a Parquet scan evaluates on each chunk's dictionary.

A filter right over a Parquet scan hands the terms that read one String column
alone, row by row, to the scan, which evaluates them once per dictionary entry
(and once for null) and maps each row's index through them; the column itself
is read afterwards at the kept rows only, when something above reads it. A
chunk that is not wholly dictionary-encoded (the writer fell back to PLAIN), or
a column a file lacks, takes the same terms row by row. Every case is compared
with Polars; the engine's counters say which way each chunk went."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import assert_same

import ladle

WORDS = [None, "", "AIR", "AIR REG", "MAIL", "SHIP", "TRUCK", "FOB", "RAIL", "a string longer than twelve",
         "é ü ß", "MAILBOX"]


def table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(WORDS), n)
    return pa.table({
        "k": pa.array(rng.integers(0, 100, n)),
        "mode": pa.array([WORDS[i] for i in pick], pa.string()),
        "instr": pa.array([None if i % 17 == 0 else f"instr {i % 5}" for i in range(n)], pa.string()),
        "nonull": pa.array([f"w{i % 7}" for i in range(n)], pa.string()),
        "v": pa.array(rng.random(n)),
    })


@pytest.fixture(scope="module", params=["1.0", "2.0"])
def files(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same rows three ways: dictionary-encoded throughout (data pages
    v1 or v2), and with a dictionary too small for the column, so that the
    writer falls back to PLAIN pages part way through a chunk."""
    d = tmp_path_factory.mktemp("dictfilter")
    t = table(30_000, 11)
    paths = {"dict": d / "dict.parquet", "fallback": d / "fallback.parquet"}
    pq.write_table(t, paths["dict"], row_group_size=7_000, data_page_size=4096,
                   data_page_version=request.param, compression="zstd")
    pq.write_table(t, paths["fallback"], row_group_size=7_000, data_page_size=512,
                   data_page_version=request.param, dictionary_pagesize_limit=40)
    return paths


C = pl.col
PREDICATES = [
    C("mode") == "MAIL",
    C("mode") != "MAIL",
    C("mode").is_in(["AIR", "AIR REG", "nothing"]),
    ~C("mode").is_in(["AIR", "SHIP"]),
    C("mode").is_null(),
    C("mode").is_not_null(),
    C("mode").fill_null("RAIL") == "RAIL",
    C("mode").str.contains("AI"),
    C("mode").str.starts_with("MAIL"),
    C("mode").str.ends_with("REG"),
    C("mode").str.len_bytes() > 4,
    C("mode").str.to_lowercase() == "mail",
    (C("mode") == "MAIL") | (C("mode") == "SHIP"),
    C("mode") > "M",
    (C("mode") == "MAIL") & (C("k") < 50),
    C("mode").is_in(["AIR", "MAIL"]) & (C("instr") == "instr 1") & (C("v") > 0.3),
    (C("instr") == "instr 2") & C("nonull").is_in(["w1", "w3"]),
    C("mode") == "no such value",
]


@pytest.mark.parametrize("pred", PREDICATES, ids=str)
def test_dictionary_terms_equal_polars(files: dict[str, Path], pred: pl.Expr, engine: ladle.Engine) -> None:
    for kind, path in files.items():
        scan = pl.scan_parquet(path)
        plan = engine.explain(scan.filter(pred))
        assert "dictionary=" in plan, plan
        before = engine.stats()
        assert_same(scan.filter(pred), engine)  # the string columns read late, at the kept rows
        after = engine.stats()
        through = after["dict_chunks"] - before["dict_chunks"]
        rowwise = after["dict_chunks_rowwise"] - before["dict_chunks_rowwise"]
        assert through + rowwise > 0
        if kind == "dict":
            assert rowwise == 0 and through > 0, (through, rowwise)
        else:
            assert rowwise > 0, (through, rowwise)
        assert_same(scan.filter(pred).select("k", "v"), engine)  # the string columns never read
        assert_same(scan.filter(pred).select(pl.len()), engine)
        assert_same(scan.filter(pred).group_by("mode").agg(pl.len()), engine, ordered=False)
        assert_same(pl.scan_parquet(path, n_rows=9_000).filter(pred), engine)


def test_terms_that_are_not_dictionary_terms(files: dict[str, Path], engine: ladle.Engine) -> None:
    """A term reading a second column, a cast, when/then, or a column that
    another term reads too: the column is read and the predicate runs as
    before (no dictionary= in the plan, the counters unchanged)."""
    scan = pl.scan_parquet(files["dict"])
    for pred in [
        (C("mode") == "MAIL") | (C("k") < 3),
        C("mode") == C("instr"),
        (C("mode") == "MAIL") & (C("mode").cast(pl.Categorical).to_physical() >= 0),
        pl.when(C("k") > 50).then(C("mode") == "AIR").otherwise(C("mode") == "SHIP"),
        C("mode").is_in(["AIR"]) & ((C("mode") == "x") | (C("k") > 1)),
    ]:
        try:
            expected = scan.filter(pred).collect()
        except pl.exceptions.PolarsError:
            continue
        plan = engine.explain(scan.filter(pred))
        before = engine.stats()
        try:
            got = scan.filter(pred).collect(engine=engine)
        except ladle.LadleError:
            continue  # not run by ladle at all: nothing to compare
        assert got.equals(expected), pred
        if "dictionary=" not in plan:
            assert engine.stats()["dict_chunks"] == before["dict_chunks"], pred


def test_a_column_one_file_lacks(tmp_path: Path, engine: ladle.Engine) -> None:
    """Two files, the second without the column: its chunks are all null,
    the terms taken row by row over the nulls."""
    t = table(5_000, 3)
    pq.write_table(t, tmp_path / "a.parquet", row_group_size=2_000)
    pq.write_table(t.drop(["mode"]), tmp_path / "b.parquet", row_group_size=2_000)
    scan = pl.scan_parquet([tmp_path / "a.parquet", tmp_path / "b.parquet"], missing_columns="insert")
    for pred in [C("mode") == "MAIL", C("mode").is_null(), C("mode").fill_null("x") == "x"]:
        try:
            expected = scan.filter(pred).collect()
        except Exception:
            pytest.skip("Polars does not insert missing columns here")
        got = scan.filter(pred).collect(engine=engine)
        assert got.equals(expected), pred


def test_an_index_past_the_dictionary_is_an_error(tmp_path: Path, engine: ladle.Engine) -> None:
    """A data page whose indices point past the dictionary: a clear error
    naming the file, through the dictionary path as through the plain read."""
    import pqcraft

    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"s": pa.array(["x", "y"] * 500)}), path, compression="none",
                   use_dictionary=True, data_page_version="1.0")
    pf = pqcraft.read(path.read_bytes())
    page = next(p for p in pf.chunks[0][0].pages if p.type == pqcraft.DATA_PAGE)
    data = bytearray(page.data)
    levels = int.from_bytes(data[:4], "little")  # the definition levels' block, then the bit width
    assert data[4 + levels] == 1  # two entries: one bit
    data[4 + levels] = 8  # indices of a byte each: 0x?? values past the two entries
    page.data = bytes(data)
    path.write_bytes(pqcraft.write(pf))
    with pytest.raises(ladle.LadleError, match="bad.parquet"):
        pl.scan_parquet(path).filter(C("s") == "x").collect(engine=engine)
    with pytest.raises(ladle.LadleError, match="bad.parquet"):
        pl.scan_parquet(path).collect(engine=engine)
