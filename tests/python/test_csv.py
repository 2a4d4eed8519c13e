"""CSV on ladle against Polars' reader: quoting (separators and newlines inside
quotes, also across the reader's chunk boundaries), headers, nulls, comments,
skipped rows, dates, schema overrides, errors, compression, projections and
predicates, and the TPC-H .tbl files."""

from __future__ import annotations

import gzip
import random
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import pyarrow as pa
from conftest import assert_same
from polars.testing import assert_frame_equal

import ladle

TPCH = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tpch" / "sf0.1"


def write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


CASES = {
    "basic": ("a,b,c\n1,x,2.5\n2,\"y,z\",\n3,,-1e3\n", {}),
    "quoted_newlines": ('id,text\n1,"line one\nline two"\n2,"say ""hi"""\n3,plain\n', {}),
    "no_header": ("1|a|2020-01-02|\n2|b|2021-03-04|\n", {"separator": "|", "has_header": False}),
    "nulls": ("a,b\nNA,x\n1,NA\n,\n", {"null_values": ["NA"]}),
    "comments_and_skips": ("junk line\n#comment\na;b\n#c2\n1;2\n\n3;4\n", {"separator": ";", "skip_rows": 1, "comment_prefix": "#"}),
    "dates": ("d,t\n2020-01-01,2020-01-01 10:11:12\n1999-12-31,1999-12-31T23:59:59.5\n", {"try_parse_dates": True}),
    "bools_floats": ("b,f,i\ntrue,1.5,1\nFalse,nan,-2\ntrue,inf,3\n", {}),
    "unicode": ("名前,値\nünïcödé,1\n\"€ \"\"q\"\"\",2\n", {}),
    "overrides": ("a,b,c\n1,2,3\n4,5,6\n", {"schema_overrides": {"a": pl.Int8, "b": pl.Float32, "c": pl.String}}),
    "crlf": ("a,b\r\n1,2\r\n3,4\r\n", {}),
    "no_final_newline": ("a,b\n1,2\n3,4", {}),
    "ragged_truncate": ("a,b\n1,2,3\n4,5\n", {"truncate_ragged_lines": True}),
    "ignore_errors": ("a,b\n1,2\nx,3\n", {"schema_overrides": {"a": pl.Int64}, "ignore_errors": True}),
    "header_only": ("a,b\n", {}),
    "duplicate_names": ("a,a,b\n1,2,3\n", {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_csv_cases(name: str, tmp_path: Path, engine) -> None:
    text, opts = CASES[name]
    p = write(tmp_path, text)
    assert_same(pl.scan_csv(p, **opts), engine)


def test_projection_predicate_row_index_n_rows(tmp_path: Path, engine) -> None:
    rng = np.random.default_rng(5)
    df = pl.DataFrame({"k": rng.integers(0, 50, 20_000), "v": rng.random(20_000), "s": rng.integers(0, 9, 20_000).astype(str)})
    p = tmp_path / "big.csv"
    df.write_csv(p)
    assert_same(pl.scan_csv(p).filter(pl.col("k") > 25).select("s", "v"), engine)
    assert_same(pl.scan_csv(p, row_index_name="i", row_index_offset=10).filter(pl.col("k") == 3), engine)
    assert_same(pl.scan_csv(p, n_rows=1234), engine)
    assert_same(pl.scan_csv(p).group_by("k").agg(pl.col("v").sum()), engine, ordered=False)


def test_quotes_across_chunk_boundaries(tmp_path: Path, engine) -> None:
    # > 3 MiB so that record finding runs in several chunks; every record holds a
    # quoted field with separators and newlines in it
    rows = [f'{i},"multi\nline, {i} ""quoted""",{i * 0.5}' for i in range(90_000)]
    p = write(tmp_path, "id,text,x\n" + "\n".join(rows) + "\n")
    assert p.stat().st_size > 3 << 20
    got = assert_same(pl.scan_csv(p), engine)
    assert got.height == 90_000


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_compressed(codec: str, tmp_path: Path, engine) -> None:
    text = "a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(5000))
    p = tmp_path / f"t.csv.{codec}"
    if codec == "gzip":
        p.write_bytes(gzip.compress(text.encode()))
    else:
        with pa.CompressedOutputStream(str(p), "zstd") as out:
            out.write(text.encode())
    assert_same(pl.scan_csv(p), engine)


@pytest.mark.parametrize("table", ["lineitem", "orders", "customer", "nation", "region", "part", "partsupp", "supplier"])
def test_tpch_tbl_files(table: str, engine) -> None:
    assert_same(pl.scan_csv(TPCH / f"{table}.tbl.zst", separator="|", has_header=False), engine)


def test_bad_values_name_record_and_column(tmp_path: Path) -> None:
    p = write(tmp_path, "a,b\n1,2\nx,3\n")
    with pytest.raises(ladle.LadleError, match=r"record 2, column 'a': 'x'"):
        ladle.Engine().collect(pl.scan_csv(p, schema_overrides={"a": pl.Int64}))
    with pytest.raises(ladle.LadleError, match="record 1 has 3 fields"):
        ladle.Engine().collect(pl.scan_csv(write(tmp_path, "a,b\n1,2,3\n", "r.csv")))


def test_decimal_floats_parse_to_the_nearest_double(tmp_path: Path, engine) -> None:
    """Plain decimals take a short path (mantissa over a power of ten); it must
    give the very double Polars' parser and Python's float() give: every digit
    count up to the path's limits and past them, fractions of 0 to 25 digits,
    mantissas around 2^53, signs, leading zeros, '1.', '.5', '-0.0', exponents,
    inf and nan (which go the long way)."""
    rng = np.random.default_rng(61)
    texts = ["0", "-0.0", "+1.5", "1.", ".5", "-.25", "007.0100", "9007199254740992", "9007199254740993",
             "900719925474099.3", "0.1", "0.3", "1e5", "-2.5E-3", "inf", "-inf", "nan", "123456789012345678",
             "1234567890123456789", "0.0000000000000000000001", "0.00000000000000000000001", "1.7976931348623157"]
    for _ in range(20_000):
        ip = str(rng.integers(0, 10 ** int(rng.integers(1, 12))))
        fp = "".join(str(d) for d in rng.integers(0, 10, int(rng.integers(0, 26))))
        sign = ["", "-", "+"][int(rng.integers(0, 3))]
        texts.append(f"{sign}{ip}.{fp}" if fp or rng.random() < 0.3 else f"{sign}{ip}")
    p = write(tmp_path, "x\n" + "\n".join(texts) + "\n")
    got = assert_same(pl.scan_csv(p, schema_overrides={"x": pl.Float64}), engine, check_exact=True)
    want = [float(t) for t in texts]
    assert [v for v in got["x"].to_list() if v == v] == [v for v in want if v == v]
    assert_same(pl.scan_csv(p, schema_overrides={"x": pl.Float32}), engine, check_exact=True)


def _random_csv(rng: np.random.Generator, n: int, final_newline: bool, eol: str) -> str:
    """Records of 1 to ~300 bytes: unquoted fields, quoted ones holding separators,
    doubled quotes and newlines (in any field, so a quote can first appear past
    the first 64 bytes of a record), empty fields; every field length, so
    separators land on and around the reader's 64-byte block edges."""
    alphabet = np.array(list("abcxyz0123456789 ;:-_."))
    lines = ["i,a,b,c,d"]
    for i in range(n):
        fields = [str(i)]
        for _ in range(4):
            k = int(rng.integers(0, 80))
            body = "".join(rng.choice(alphabet, k))
            roll = rng.random()
            if roll < 0.08:
                cut = int(rng.integers(0, k + 1))
                body = body[:cut] + rng.choice([",", "\n", '""', ",\n"]) + body[cut:]
                fields.append(f'"{body}"')
            elif roll < 0.12:
                fields.append("")
            else:
                fields.append(body)
        lines.append(",".join(fields))
    return eol.join(lines) + (eol if final_newline else "")


@pytest.mark.parametrize("final_newline,eol,mmap", [(True, "\n", "1"), (False, "\n", "1"), (True, "\r\n", "1"),
                                                    (False, "\n", "0")])
def test_random_quoting_across_blocks_and_chunks(final_newline: bool, eol: str, mmap: str, tmp_path: Path,
                                                 engine, monkeypatch: pytest.MonkeyPatch) -> None:
    # > 3 MiB: records are found in several chunks, each read 64 bytes a step
    # for quotes and newlines; fields are split 64 bytes a step until a quote.
    # The file is mapped, or read into memory (LADLE_MMAP=0)
    monkeypatch.setenv("LADLE_MMAP", mmap)
    rng = np.random.default_rng(11 + final_newline + len(eol))
    p = write(tmp_path, _random_csv(rng, 22_000, final_newline, eol))
    assert p.stat().st_size > 3 << 20
    got = assert_same(pl.scan_csv(p, schema_overrides={c: pl.String for c in "abcd"}), engine)
    assert got.height == 22_000
    assert got["a"].str.contains("\n").any() and got["b"].str.contains(",").any()


def test_dates_check_the_calendar(tmp_path: Path, engine) -> None:
    # leap days are dates only in leap years (2000 yes, 1900 no); a column with
    # an impossible day stays a string column, as in Polars
    good = ["2000-02-29", "2024-02-29", "1900-02-28", "2023-12-31", "2023-04-30", "0001-01-01", "9999-12-31"]
    bad = ["1900-02-29", "2023-02-29", "2023-04-31", "2023-13-01", "2023-00-10", "2023-01-00"]
    for i, b in enumerate(bad):
        p = write(tmp_path, "d,e\n" + "".join(f"{g},{g}\n" for g in good) + f"{good[0]},{b}\n", f"d{i}.csv")
        got = assert_same(pl.scan_csv(p, try_parse_dates=True), engine)
        assert got.schema["d"] == pl.Date and got.schema["e"] == pl.String
        # read as dates regardless: the impossible day is an error, or a null
        # with ignore_errors
        got = assert_same(pl.scan_csv(p, schema_overrides={"e": pl.Date}, ignore_errors=True), engine)
        assert got["e"].null_count() == 1 and got["e"][-1] is None
        with pytest.raises(ladle.LadleError, match=f"column 'e': '{b}' is not a valid date"):
            ladle.Engine(raise_on_fail=True).collect(pl.scan_csv(p, schema_overrides={"e": pl.Date}))


@pytest.mark.parametrize("values", [
    ["999999999999999999", "-999999999999999999", "+123", "0", "-0"],  # 18 digits: the unchecked loop
    ["9223372036854775807", "-9223372036854775808", "1000000000000000000"],  # 19 digits: the range ends
    ["9223372036854775808", "1"],  # one past: not an Int64
    ["-9223372036854775809", "1"],
    ["18446744073709551616", "1"],  # past 2^64
    ["12a", "1"], ["1-", "2"], ["-", "3"], ["+", "4"],
])
def test_integers_at_their_limits(values: list[str], tmp_path: Path, engine) -> None:
    p = write(tmp_path, "x\n" + "\n".join(values) + "\n")
    if pl.scan_csv(p).collect_schema()["x"] != pl.Int128:  # Polars' choice past Int64; ladle has no Int128
        assert_same(pl.scan_csv(p), engine)
    assert_same(pl.scan_csv(p, schema_overrides={"x": pl.Int64}, ignore_errors=True), engine)


SKIPS = {
    # a skipped row whose quoted field holds a newline is one row (skip_rows),
    # two lines (skip_lines)
    "rows_quoted": ('x,"multi\nline"\na,b\n1,2\n3,4\n', {"skip_rows": 1}),
    "lines_plain": ('junk "with, quotes"\na,b\n1,2\n', {"skip_lines": 1}),
    "lines_quoted_2": ('x,"multi\nline"\na,b\n1,2\n', {"skip_lines": 2}),
    # comment lines are not rows
    "rows_comments": ("#c\nj\na,b\n1,2\n", {"skip_rows": 1, "comment_prefix": "#"}),
    "rows_comments_2": ("#c\nj\n#d\nk\na,b\n1,2\n", {"skip_rows": 2, "comment_prefix": "#"}),
    "after_header_quoted": ('a,b\n"1\n2",3\n4,5\n6,7\n', {"skip_rows_after_header": 1}),
    "after_header_comments": ("a,b\n#c\n1,2\n4,5\n6,7\n", {"skip_rows_after_header": 1, "comment_prefix": "#"}),
    "after_header_two": ('a,b\n"1\n2",3\n"x\n\ny",5\n6,7\n', {"skip_rows_after_header": 2}),
}


@pytest.mark.parametrize("name", sorted(SKIPS))
def test_skipping_rows_and_lines(name: str, tmp_path: Path, engine) -> None:
    text, opts = SKIPS[name]
    p = write(tmp_path, text)
    got = assert_same(pl.scan_csv(p, **opts), engine)
    assert got.columns == ["a", "b"] and got.height >= 1


@pytest.mark.parametrize("nulls", [
    {"a": "NA", "c": "-"},
    {"b": "NA"},  # a string column: "NA" elsewhere stays text
    {"a": "NA", "b": "x"},
    {"c": "?"},  # a column in which the text never appears
])
def test_per_column_null_values(nulls: dict[str, str], tmp_path: Path, engine) -> None:
    rng = np.random.default_rng(9)
    rows = ["a,b,c"]
    for i in range(3_000):
        a = rng.choice(["NA", str(i), "-"]) if i % 5 else "NA"
        b = rng.choice(["NA", "x", "y", '"NA"', "-"])
        c = rng.choice(["-", str(i * 2), "NA"]) if i % 7 else "-"
        rows.append(f"{a},{b},{c}")
    p = write(tmp_path, "\n".join(rows) + "\n")
    lf = pl.scan_csv(p, null_values=nulls, schema_overrides={"a": pl.String, "c": pl.String})
    got = assert_same(lf, engine)
    for col, text in nulls.items():
        assert (got[col] == text).sum() == 0  # the text became null in its column only
    assert_same(pl.scan_csv(p, null_values={"a": "NA", "c": "-"}, ignore_errors=True), engine)


def test_decimal_comma(tmp_path: Path, engine) -> None:
    rng = np.random.default_rng(4)
    vals = np.round(rng.normal(size=4_000) * 1e4, 3)
    text = ["x;y;s"]
    for i, v in enumerate(vals):
        x = str(v).replace(".", ",")
        y = f'"{x}"' if i % 3 == 0 else (str(v) if i % 3 == 1 else x)  # quoted, a point, a comma
        text.append(f"{x};{y};{'' if i % 11 == 0 else 'k' + str(i)}")
    p = write(tmp_path, "\n".join(text) + "\n")
    got = assert_same(pl.scan_csv(p, separator=";", decimal_comma=True), engine)
    assert got.schema["x"] == pl.Float64
    assert_same(pl.scan_csv(p, separator=";", decimal_comma=True, schema_overrides={"y": pl.Float64}), engine)
    assert_same(pl.scan_csv(p, separator=";", decimal_comma=True, schema_overrides={"y": pl.Float32, "x": pl.Float32}), engine)


def test_multi_file_column_policies(tmp_path: Path, engine) -> None:
    # Polars' missing_columns='insert' (nulls where a file lacks a column) and
    # extra_columns='ignore' over CSV files whose headers differ
    files = {
        "m1": "a,b,c\n1,x,2.5\n2,y,3.5\n",
        "m2": "a,c\n3,4.5\n",  # lacks b
        "m3": "c,a,b,d\n5.5,4,z,9\n",  # other order, one more column
        "m4": "a,b,c\n6,w,1.5\n",
    }
    paths = {k: write(tmp_path, v, f"{k}.csv") for k, v in files.items()}
    scan = lambda names, **kw: pl.scan_csv([paths[n] for n in names], **kw)  # noqa: E731
    got = assert_same(scan(["m1", "m2"], missing_columns="insert"), engine)
    assert got["b"].null_count() == 1
    assert_same(scan(["m1", "m3", "m2"], missing_columns="insert", extra_columns="ignore"), engine)
    assert_same(scan(["m1", "m3", "m2", "m4"], missing_columns="insert", extra_columns="ignore").select("d", "a"), engine)
    assert_same(scan(["m1", "m4"]), engine)
    assert_same(scan(["m1", "m2"], missing_columns="insert").filter(pl.col("b").is_null()), engine)
    # a later file with a column the first lacks, without 'ignore': Polars'
    # merged schema decides, so ladle hands the scan to Polars
    with pytest.warns(UserWarning, match="lacks"):
        got = ladle.Engine().collect(scan(["m2", "m1"], missing_columns="insert"))
    assert_frame_equal(got, scan(["m2", "m1"], missing_columns="insert").collect())


def test_include_file_paths(tmp_path: Path, engine) -> None:
    rng = np.random.default_rng(2)
    paths = []
    for i in range(3):
        df = pl.DataFrame({"a": rng.integers(0, 100, 40_000 + i * 7), "s": rng.integers(0, 9, 40_000 + i * 7).astype(str)})
        paths.append(tmp_path / f"part{i}.csv")
        df.write_csv(paths[-1])
    lf = pl.scan_csv(paths, include_file_paths="file")
    got = assert_same(lf, engine)
    assert got["file"].n_unique() == 3 and got.columns[-1] == "file"
    assert_same(lf.filter(pl.col("file").str.ends_with("part1.csv")).select("file", "a"), engine)
    assert_same(pl.scan_csv(paths, include_file_paths="file", row_index_name="i").slice(79_990, 30), engine)
    assert_same(lf.group_by("file").agg(pl.len(), pl.col("a").sum()), engine, ordered=False)


def test_glob_over_partition_directories(tmp_path: Path, engine) -> None:
    """Polars' scan_csv has no hive partitioning: a glob over key=value/
    directories reads the files as they are, without partition columns; ladle
    answers the same, with the files in path order, and with include_file_paths
    the directory names are in the path column only."""
    for k, rows in [("b", [3, 4]), ("a", [1, 2]), ("c", [5])]:
        d = tmp_path / f"k={k}"
        d.mkdir()
        pl.DataFrame({"x": rows, "s": [f"{k}{r}" for r in rows]}).write_csv(d / "part.csv")
    glob = str(tmp_path / "**" / "*.csv")
    got = assert_same(pl.scan_csv(glob), engine)
    assert got.columns == ["x", "s"] and got["x"].to_list() == [1, 2, 3, 4, 5]
    assert_same(pl.scan_csv(glob).filter(pl.col("x") > 1), engine)
    assert_same(pl.scan_csv(glob, include_file_paths="path"), engine)


def test_invalid_utf8_raises_naming_file_record_and_column(tmp_path: Path, engine) -> None:
    """Invalid UTF-8 never reaches a String column (Polars raises ComputeError
    "invalid utf-8 sequence"; its String column once held the bytes and a later
    Polars call crashed): plain and quoted fields, a character cut by a
    newline, every kind of invalid sequence, a comment line; with the file read
    in many small units (the check runs once per unit)."""
    cases = [b"a,b\n1,\xff\xfe\n2,x\n", b'a,b\n1,"x\xff"\n', b"a,b\n1,\xc3\n2,\xa9\n", b"a,b\n1,\xed\xa0\x80\n",
             b"a,b\n1,\xc0\xaf\n", b"a,b\n1,\xf4\x90\x80\x80\n", b"a,b\n1,x\n#\xff\n",
             b"a,b\n" + b"".join(b"%d,word %d\n" % (i, i) for i in range(5000)) + b"5000,\xe2\x82\n"]
    small = ladle.Engine(raise_on_fail=True, threads=2, morsel_rows=7)
    for k, data in enumerate(cases):
        p = tmp_path / f"bad{k}.csv"
        p.write_bytes(data)
        lf = pl.scan_csv(p, comment_prefix="#")
        with pytest.raises(pl.exceptions.ComputeError, match="invalid utf-8"):
            lf.collect()
        for eng in (engine, small):
            with pytest.raises(ladle.LadleError, match=rf"bad{k}\.csv: (record \d+, column 'b': invalid UTF-8|invalid UTF-8 in a comment line)"):
                lf.collect(engine=eng)
    # valid text in every length of character reads
    p = tmp_path / "ok.csv"
    p.write_bytes("a,b\n1,é\n2,€ uro\n3,😀\n4,\"q\"\"é\"\"\"\n".encode())
    assert_same(pl.scan_csv(p), engine)


# Quoting and separators, checked against Polars 2.1 under every combination
# of schema (inferred; Int64/String; all String; all Int64), ignore_errors,
# projection and comment prefix: where Polars raises ladle raises, where it
# reads ladle reads the same values. Known differences (docs/semantics.md):
# Polars panics on a lone quote at the end of the data in an Int64 column.
QUOTE_CASES = [
    b'a,b\n1,"ab"cd\n2,x\n', b'a,b\n1,ab"cd\n2,x\n', b'a,b\n1,ab"c"d\n2,x\n', b'a,b\n1,"abc\n2,x\n', b'a,b\n1,x\n2,"abc',
    b'a,b\n1,x\n2,"abc\n', b'a,b\n1,"ab" \n2,x\n', b'a,b\n"1,x\n', b'a,b\n1,"2\n', b'a,b\n1,"2\n3,4\n', b'a,b\n1,x"\ny"\n',
    b'a,b\n1,ab"c\n2,x"y\n', b'a,b\n1,ab"cd', b'a,b\n1,"x"y"z"\n', b'a,b\n1,ab"c,"x\ny"\n3,4\n', b'a,b\n"1"2,x\n',
    b'a,b\n1,"x"\r\n2,y', b'a,b\n1,"x"\n#"\n2,y\n', b'a,b\n#"\n1,x\n#"\n2,y\n', b'a,b\n1,"x\n#y"\n2,z\n', b'a,b\n1,""""',
    b'a,b\n"x\n', b'a,b\n"x', b'a,b\n1,"ab""\n', b'a,b\n1,"ab""', b'a,b\n1,"x"\ry\n', b'a,b\n"a""b",c\n',
    b'a,b\n1,2,', b'a,b\n3,4\n1,2,', b'a,b\n1,,', b'a,b\n1,2,\n', b'a,b\n1,"2",', b'a,b\n1,"",', b'a,b\n1,2,,',
    b'a,b\n1,2,\n3,4', b'a,b\n1,2,\r\n', b'a,b\n1,"x",\n', b'a;b\n1;"x;y";\n',
]


@pytest.mark.parametrize("data", QUOTE_CASES, ids=[repr(c)[2:-1] for c in QUOTE_CASES])
def test_quotes_and_separators_as_polars(data: bytes, tmp_path: Path) -> None:
    import itertools

    p = tmp_path / "q.csv"
    p.write_bytes(data)
    sep = ";" if data.startswith(b"a;b") else ","
    engine = ladle.Engine(raise_on_fail=True, threads=2, morsel_rows=1)
    schemas = [None, {"a": pl.Int64, "b": pl.String}, {"a": pl.String, "b": pl.String}, {"a": pl.Int64, "b": pl.Int64}]
    for schema, ignore, select, comment in itertools.product(schemas, [False, True], [None, ["a"]], [None, "#"]):
        lf = pl.scan_csv(p, separator=sep, schema=schema, ignore_errors=ignore, comment_prefix=comment)
        if select:
            lf = lf.select(select)
        try:
            expected = lf.collect()
        except pl.exceptions.PolarsError:
            with pytest.raises(ladle.LadleError):
                lf.collect(engine=engine)
            continue
        except BaseException as e:  # a Polars panic: nothing to compare with
            assert "PanicException" in type(e).__name__
            continue
        assert_frame_equal(lf.collect(engine=engine), expected)


def test_header_names_with_invalid_utf8_as_polars(tmp_path: Path, engine) -> None:
    """Header names with invalid UTF-8 become Polars' names, each invalid
    sequence one U+FFFD as Rust's from_utf8_lossy makes them (ladle kept the
    bytes, so no name matched and the query fell back)."""
    for k, data in enumerate([b"a,\xffb\n1,2\n", b"\xe2\x82x,\xed\xa0\x80\n1,2\n", b"\xf0\x9f\x98,\xc3\xa9\n1,2\n",
                              b"\xf4\x90\x80\x80z,y\xc0\xaf\n1,2\n", b'"\xff",b\n1,2\n', b"a\x80\x80b,c\n1,2\n"]):
        p = tmp_path / f"h{k}.csv"
        p.write_bytes(data)
        assert_same(pl.scan_csv(p), engine)


def test_quote_char_none_reads_quotes_as_text(tmp_path: Path, engine) -> None:
    """With quote_char=None every quote is text, whatever the shape, as Polars."""
    for k, data in enumerate(QUOTE_CASES):
        p = tmp_path / f"n{k}.csv"
        p.write_bytes(data)
        sep = ";" if data.startswith(b"a;b") else ","
        for ignore in (False, True):
            lf = pl.scan_csv(p, separator=sep, quote_char=None, ignore_errors=ignore, comment_prefix="#")
            try:
                expected = lf.collect()
            except pl.exceptions.PolarsError:
                with pytest.raises(ladle.LadleError):
                    lf.collect(engine=engine)
                continue
            assert_frame_equal(lf.collect(engine=engine), expected)


NUMERIC_TOKENS = ["0", "-0", "+4", "127", "128", "-128", "-129", "32767", "32768", "2147483647",
                  "2147483648", "-2147483649", "999999999999999999", "9223372036854775807",
                  "-9223372036854775808", "00012", "12a", "", " 7", "7 ", "1e5", "3.25", ".5", "5.",
                  "-.5", "nan", "inf", "-inf", "1.7976931348623157e308", "0x10", "-", "+", '"12"',
                  '"3.5"', "0.1", "123456.789", "1_000", "\t-7", " +7", "\v7", "\f7", " 0x10", "-0x10",
                  "+0x10", "nan(1)", "infinity", "-INF", " 1.5", '" 7"', " -", " "]


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("ragged", [False, True])
def test_numbers_of_every_width_from_random_tokens(eol: str, ragged: bool, tmp_path: Path, engine) -> None:
    """Records of numeric columns (the reader's one-pass path for plain records)
    against Polars: random tokens at each type's limits, malformed numbers, empty
    and quoted fields, a column not read, CRLF, and (ragged) records with fields
    missing or added, with ignore_errors; plain numbers alone without it. Numbers
    may start with spaces and tabs (Polars reads them; ladle read ' 7' as null);
    not with other whitespace, nor be hex or nan(...) (strtod read those)."""
    rng = np.random.default_rng(7 + ragged)
    names = ["i8", "i16", "i32", "i64", "f32", "f64", "skip"]
    lines = [",".join(names)]
    clean = [",".join(names)]
    for r in range(3000):
        fields = [NUMERIC_TOKENS[k] for k in rng.integers(0, len(NUMERIC_TOKENS), len(names))]
        if ragged and r % 17 == 0:
            fields = fields[: int(rng.integers(1, len(names)))]
        elif ragged and r % 23 == 0:
            fields.append("9")
        lines.append(",".join(fields))
        clean.append(",".join(str(int(v)) for v in rng.integers(-100, 100, len(names))))
    schema = {"i8": pl.Int8, "i16": pl.Int16, "i32": pl.Int32, "i64": pl.Int64, "f32": pl.Float32,
              "f64": pl.Float64, "skip": pl.String}
    p = write(tmp_path, eol.join(lines) + eol)
    lf = pl.scan_csv(p, schema=schema, ignore_errors=True, truncate_ragged_lines=ragged)
    assert_same(lf.select(names[:6]), engine)
    assert_same(lf.select("f64", "i8", "i64"), engine)
    q = write(tmp_path, eol.join(clean) + eol, "clean.csv")
    assert_same(pl.scan_csv(q, schema=schema).select(names[:6]), engine)
    assert_same(pl.scan_csv(q, schema_overrides={"f32": pl.Float32, "i8": pl.Int8}), engine)


# Dates and datetimes of a given type: Polars reads a column through a class of
# chrono formats that its first readable value picks (day-month-year or
# year-month-day, `-`, `/` or `.` between; for a Datetime a time after `T` or a
# space, and the class with an offset); chrono allows whitespace before each
# number, a sign or 1 to 4 digits of year, 1 or 2 of the other fields, any
# fraction digits. A Datetime value failing Polars' pattern check reads only
# through the format of the value before. The tokens below mix all of that.
DATE_YEARS = ["2020", "1999", "0001", "0000", "9999", "1677", "2262", "3000", "1970", "-0044", "+2020",
              "+12020", "-262143", "+262142", "+262143", "20", "202", "1", "02020", "-1"]
DATE_TIMES = ["10:00:00", "23:59:59", "00:00", "1:2:3", "10:00:60", "23:59:60", "24:00:00", "10:60",
              "100000", "1000", "10:0000", "10:00:00.5", "10:00:00.123456789", "10:00:00.1234567891",
              "1:0:0.25", "100000.5", "10:00:00.", "10"]
DATE_OFFSETS = ["Z", "z", "+01:00", "+0100", "+01", "-05:30", " +01:00", " UTC", "UTC", "+24:00", "-0000",
                "+01:60", "+1", " Z", "+01:", "\u221201:00", "+01:00:00"]
DATE_SPACES = [" ", "  ", "\t", "\xa0", "\u3000", "\u2009", "+", "-", "0", "x"]


def _date_token(rng) -> str:
    """A random date or datetime text (no separator, quote or line end)."""
    y = rng.choice(DATE_YEARS)
    m = rng.choice(["01", "1", "12", "2", "02", "13", "00", "0", "001", "10"])
    d = rng.choice(["01", "1", "29", "30", "31", "28", "00", "32", "15", "5", "011"])
    sep = rng.choice(["-", "-", "-", "-", "/", ".", ""])
    sep2 = sep if rng.random() < 0.9 else rng.choice(["-", "/", "."])
    text = y + sep + m + sep2 + d if rng.random() < 0.75 else d + sep + m + sep2 + y
    if rng.random() < 0.6:
        text += rng.choice(["T", " ", " ", "T", "  ", "", "t", "\t"]) + rng.choice(DATE_TIMES)
        if rng.random() < 0.3:
            text += rng.choice(DATE_OFFSETS)
    if rng.random() < 0.25:
        at = rng.randrange(len(text) + 1)
        text = text[:at] + rng.choice(DATE_SPACES) + text[at:]
    if rng.random() < 0.06:
        text = rng.choice(["", "abc", "10:00:00", "20200101", "20200101T100000", "2020031T100000", " "])
    return text


DATE_FIRSTS = ["2020-01-01", "2020-1-1", " 2020-01-01", "+2020-01-01", "2020-01-01 10:00:00",
               "2020-01-01T10:00:00.123", "2020-01-01 10:00", "2020/01/01 10:00:00", "01-02-2020",
               "1.2.2020 10:00", "2020-01-01T10:00:00Z", "2020-01-01 10:00:00+01:00", "1-1-1", "abc", ""]

DATE_CLEAN = {True: ["2020-01-01", "2020-1-1", " 2020-01-01", "+2020-01-01", "2020/1/2", "1999.12.31", "",
                     "\t2020-2-29", "-0044-03-01"],
              False: ["2020-01-01", "2020-1-1 10:00", "2020-01-01T10:00:00.5", "2020/01/01 1:2:3", "",
                      "2020-01-01 100000", "2020-01-01 10:00:60", "1999.12.31T23:59:59.999999999"]}

DATE_TYPES = {"date": pl.Date, "ns": pl.Datetime("ns"), "us": pl.Datetime("us"),
              "ms_utc": pl.Datetime("ms", "UTC"), "us_tz": pl.Datetime("us", "Europe/Amsterdam")}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", sorted(DATE_TYPES))
def test_dates_of_a_given_type_from_random_texts(kind: str, seed: int, tmp_path: Path, engine) -> None:
    """Date and Datetime columns of a given type against Polars, each column a
    random mix of texts after a first value of its own: ISO and not, day or year
    first, separators, times with and without seconds, fractions, offsets,
    whitespace and signs in between, impossible days and times, junk. With
    ignore_errors in one scan; without, column by column (an error in Polars is
    one in ladle). ladle used to read all but plain ISO forms as null."""
    rng = random.Random(seed * 101 + sorted(DATE_TYPES).index(kind))
    ncols, nrows = 48, 10
    cols = []
    for c in range(ncols):
        vals = [_date_token(rng) for _ in range(nrows)]
        if c % 3 == 0:
            vals[0] = rng.choice(DATE_FIRSTS)
        if c % 4 == 1:  # texts of one class that Polars reads without an error
            vals = [rng.choice(DATE_CLEAN[kind == "date"]) for _ in range(nrows)]
        if c % 7 == 2:
            vals = [f'"{v}"' if rng.random() < 0.5 else v for v in vals]  # quoted
        cols.append(vals)
    names = [f"c{c}" for c in range(ncols)]
    text = ",".join(names) + "\n" + "".join(",".join(col[r] for col in cols) + "\n" for r in range(nrows))
    p = write(tmp_path, text)
    assert p.stat().st_size < 16_000  # one chunk of Polars' reader: one state per column
    schema = {n: DATE_TYPES[kind] for n in names}
    got = assert_same(pl.scan_csv(p, schema=schema, ignore_errors=True), engine)
    assert sum(got[n].null_count() for n in names) < ncols * nrows  # not all null
    errors = 0
    for n in names:
        lf = pl.scan_csv(p, schema=schema).select(n)
        try:
            lf.collect(engine="in-memory")
        except pl.exceptions.ComputeError:
            errors += 1
            with pytest.raises(ladle.LadleError, match=f"column '{n}'"):
                engine.collect(lf)
            continue
        assert_same(lf, engine)
    assert 0 < errors < ncols


@pytest.mark.parametrize("values, expected", [
    # the examples measured: one column each, read alone
    (["2020-1-1", "2020-01-1", " 2020-01-01", "  2020-1-01", "+2020-01-01"], [date(2020, 1, 1)] * 5),
    (["2020-01-01 ", "02020-01-01"], [None, None]),
    # the first value picks day-month-year; a year-first value is then null
    (["01-02-2020", "2020-01-01", "1.2.2020"], [date(2020, 2, 1), None, date(2020, 2, 1)]),
    (["2020-01-01", "01-02-2020", "2020/1/2"], [date(2020, 1, 1), None, date(2020, 1, 2)]),
])
def test_dates_of_a_given_type_as_polars_reads_them(values, expected, tmp_path: Path, engine) -> None:
    p = write(tmp_path, "d\n" + "\n".join(values) + "\n")
    got = assert_same(pl.scan_csv(p, schema={"d": pl.Date}, ignore_errors=True), engine)
    assert got["d"].to_list() == expected


def test_datetimes_of_a_given_type_as_polars_reads_them(tmp_path: Path, engine) -> None:
    values = ["2020-1-1", "2020-01-01 10:00", " 2020-01-01 10:00:00", "2020-01-01 10:00:00", " 2020-01-01 10:00:00",
              "2020-01-01T10:00:00.5", "2020-01-01 10:00:60", "-2020-01-01 10:00", "2020-01-01T10:00:00Z"]
    p = write(tmp_path, "d\n" + "\n".join(values) + "\n")
    got = assert_same(pl.scan_csv(p, schema={"d": pl.Datetime("us")}, ignore_errors=True), engine)
    # a leading space reads only after a value of the format that reads it
    assert got["d"].is_null().to_list() == [False, False, True, False, False, False, False, False, True]
    q = write(tmp_path, "d\n2020-01-01T10:00:00Z\n2020-01-01 11:00+01:00\n2020-01-01\n", "z.csv")
    got = assert_same(pl.scan_csv(q, schema={"d": pl.Datetime("ms", "UTC")}, ignore_errors=True), engine)
    assert got["d"].dt.hour().to_list() == [10, 10, None]


@pytest.mark.parametrize("order", ["ymd", "dmy"])
def test_dates_of_a_given_type_across_partitions(order: str, tmp_path: Path, small_engine) -> None:
    """Many partitions (7 rows each) and Polars' several chunks: values of one
    class whose reading does not hang on the value before (Datetime values pass
    Polars' pattern check) read the same wherever a partition or chunk starts."""
    rng = random.Random(3 if order == "ymd" else 4)
    rows = ["d,t"]
    for _ in range(3000):
        y, m, d = rng.randint(1000, 2999), rng.randint(1, 12), rng.randint(1, 31)
        sep = rng.choice("-/.")
        md = [rng.choice([f"{m}", f"{m:02}"]), rng.choice([f"{d}", f"{d:02}"])]
        date_ = f"{y}{sep}{md[0]}{sep}{md[1]}" if order == "ymd" else f"{md[1]}{sep}{md[0]}{sep}{y}"
        ws = rng.choice(["", "", "", " ", "\t"])  # chrono allows these in a date
        time_ = rng.choice(["", f"T{rng.randint(0, 24)}:{rng.randint(0, 59):02}",
                            f" {rng.randint(0, 23):02}:{rng.randint(0, 59):02}:{rng.randint(0, 60):02}",
                            f" {rng.randint(0, 23)}{rng.randint(10, 59)}{rng.randint(10, 59)}.{rng.randint(0, 10**7)}"])
        rows.append(f"{ws}{date_ if rng.random() > 0.03 else ''},{date_}{time_}")
    p = write(tmp_path, "\n".join(rows) + "\n")
    schema = {"d": pl.Date, "t": pl.Datetime("ns")}
    got = assert_same(pl.scan_csv(p, schema=schema, ignore_errors=True), small_engine)
    assert got["d"].null_count() < 500 and got["t"].null_count() < 1000


@pytest.mark.parametrize("ty", [pl.Int8, pl.Int32, pl.Int64, pl.UInt8, pl.UInt64, pl.Float32, pl.Float64])
@pytest.mark.parametrize("blank", [" ", "  ", "\t", " \t "])
def test_blank_numbers_are_null(ty: pl.DataType, blank: str, tmp_path: Path, engine) -> None:
    """A field of spaces and tabs alone is a null number in Polars, without
    ignore_errors too (ladle failed on it)."""
    p = write(tmp_path, f"a,b\n{blank},1\n7,2\n{blank}{blank},3\n")
    assert_same(pl.scan_csv(p, schema={"a": ty, "b": pl.Int64}), engine)
    assert_same(pl.scan_csv(p, schema={"a": ty, "b": pl.Int64}, ignore_errors=True), engine)


@pytest.mark.parametrize("named", [{"b": "x"}, {"a": "x"}, {"a": "x", "b": "y"}, {"c": "z"}])
def test_quoted_empty_strings_under_named_null_values(named: dict, tmp_path: Path, engine) -> None:
    """With null values named per column, a quoted empty field ("") of a String
    column that has none of its own is null in Polars; one of a column that has
    some stays an empty string (ladle read "" everywhere)."""
    p = write(tmp_path, 'a,b,c\n"",1,""\nq,"",r\n"x","y",""\n,,\n')
    assert_same(pl.scan_csv(p, null_values=named), engine)
    assert_same(pl.scan_csv(p, null_values=named, schema={"a": pl.String, "b": pl.String, "c": pl.String}), engine)


MIXED_TOKENS = ["true", "false", "True", "FALSE", "tRuE", "1", "0", "", "NA", "null", "x", '"a,b"', '"q""q"',
                '""', '" "', "  ", "\t", "é", "1.5", "-3", '"true"', '"1"', "NaN", "t", "f", "yes"]


@pytest.mark.parametrize("seed", [0, 1])
def test_small_files_of_random_tokens_and_options(seed: int, tmp_path: Path, engine) -> None:
    """Small files of random tokens (booleans, numbers, quoted and blank fields,
    null texts) under random null_values (none, a list, per column), with and
    without a schema and ignore_errors, against Polars: the same frame, or both
    raise. Found the quoted empty strings under named null values and the blank
    numbers."""
    import random

    rnd = random.Random(seed)
    names = ["b", "s", "i", "f"]
    schema = {"b": pl.Boolean, "s": pl.String, "i": pl.Int64, "f": pl.Float64}
    p = tmp_path / "t.csv"
    for trial in range(150):
        rows = [",".join(rnd.choice(MIXED_TOKENS) for _ in names) for _ in range(rnd.randint(1, 6))]
        p.write_text(",".join(names) + "\n" + "\n".join(rows) + rnd.choice(["\n", "", "\r\n"]), encoding="utf-8")
        opts = rnd.choice([{}, {"null_values": ["NA"]}, {"null_values": ["NA", "null"]}, {"null_values": {"s": "x"}},
                           {"null_values": {"b": "NA", "f": "x"}}])
        lf = pl.scan_csv(p, schema=rnd.choice([schema, None]), ignore_errors=rnd.choice([True, False]), **opts)
        try:
            want = lf.collect(engine="in-memory")
        except pl.exceptions.PolarsError:
            with pytest.raises(Exception):
                lf.collect(engine=engine)
            continue
        got = lf.collect(engine=engine)
        assert engine.last_run == "ladle", (trial, opts)
        assert_frame_equal(got, want)


COUNT_FILES = {
    "plain": "a,b\n1,2\n3,4\n",
    "no_final_newline": "a,b\n1,2\n3,4",
    "empty_lines": "a,b\n1,2\n\n3,4\n\n",
    "quoted_newline": 'a,b\n"x\ny",2\n3,4\n',
    "comment": "a,b\n#c\n1,2\n3,4\n",
    "crlf": "a,b\r\n1,2\r\n3,4\r\n",
    "ragged": "a,b\n1,2,3\n4\n",
    "header_only": "a,b\n",
    "many": "a,b\n" + "".join(f"{i},\"x{i}\ny\"\n" for i in range(70_000)),
}
COUNT_OPTIONS = [{}, {"comment_prefix": "#"}, {"skip_rows": 1}, {"has_header": False},
                 {"skip_rows_after_header": 1}, {"skip_lines": 1}, {"n_rows": 1}]


@pytest.mark.parametrize("name", sorted(COUNT_FILES))
def test_fast_count_of_records(name: str, tmp_path: Path, engine) -> None:
    """`scan_csv(...).select(pl.len())`, which Polars plans as a fast count
    (MapFunction fast_count), runs on ladle: the records its reader would read
    under each option (quoted newlines, comments, empty lines, skips, n_rows,
    records of any width) and Polars' name and type. It fell back before."""
    p = write(tmp_path, COUNT_FILES[name])
    for opts in COUNT_OPTIONS:
        for lf in (pl.scan_csv(p, **opts).select(pl.len()),
                   pl.scan_csv([p, p], **opts).select(pl.len().alias("n"))):
            try:
                want = lf.collect()
            except pl.exceptions.PolarsError:
                with pytest.raises(Exception):
                    lf.collect(engine=engine)
                continue
            assert ("FAST COUNT" in lf.explain()) == ("n_rows" not in opts)  # n_rows: a scan of no columns
            got = lf.collect(engine=engine)
            assert engine.last_run == "ladle", opts
            assert_frame_equal(got, want)


def test_fast_count_of_a_file_ending_inside_quotes_raises(tmp_path: Path, engine) -> None:
    """Polars' fast count does not check quotes (it gives 0 records for a file whose
    data ends inside a quoted field, and its full read raises); ladle counts by
    reading the records and raises naming the file, as its full read does."""
    p = write(tmp_path, 'a,b\n1,"2\n3,4\n')
    with pytest.raises(ladle.LadleError, match="quote is not closed"):
        pl.scan_csv(p).select(pl.len()).collect(engine=engine)


def test_a_scan_of_no_columns_parses_no_field(tmp_path: Path, engine) -> None:
    """A CSV scan whose query reads no column (`select(pl.len() - lit.count())`)
    counts the records without parsing a field: ladle read every column with
    types inferred from the first file, and failed on a later file's String
    column ('0x10' is not a valid f64; qfuzz 4802:43619)."""
    a = write(tmp_path, "g,h\n-3.5,1\n2,2\n", "a.csv")
    b = write(tmp_path, "g,h\n0x10,3\ntrue,4\n", "b.csv")
    schema = {"g": pl.String, "h": pl.Int64}
    for lf in (pl.scan_csv([a, b], schema=schema).select(pl.len() - pl.lit(1).count()),
               pl.scan_csv([a, b]).select(pl.len()),
               pl.scan_csv([a, b], schema=schema).select(pl.len(), pl.col("h").sum())):
        assert_same(lf, engine)
        assert engine.last_run == "ladle"
