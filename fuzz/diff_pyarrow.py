"""Differential fuzzing of ladle's Parquet reader against pyarrow.

Takes parquet-testing's files and files pyarrow writes from random tables
(every type ladle reads, nulls, dictionary on and off, DELTA and
BYTE_STREAM_SPLIT encodings, every codec, pages v1 and v2, CRCs, small pages
and row groups), mutates them (bytes anywhere; or, through tests/python/
pqcraft.py, a page's decompressed bytes recompressed so the change reaches the
decoders, a page header's counts, sizes or encoding, the footer's types,
counts and codec, pages dropped, doubled or swapped) and reads each mutant
with pyarrow (`pyarrow.parquet.read_table`) and with ladle
(`pl.scan_parquet(f).collect(engine=ladle.Engine(raise_on_fail=True))`):

- ladle fails only by raising a LadleError (or Polars' own error before ladle
  runs); any other exception, a crash or a hang is a failure;
- when both read, the values are equal (where they differ, Polars' own reader
  decides: ladle follows Polars, which differs from pyarrow on purpose in a few
  places, INT96 out of range among them);
- String columns that pyarrow reads but that are not valid UTF-8 (pyarrow does
  not check) must make ladle raise;
- where ladle reads a file pyarrow refuses, Polars' reader, if it reads it,
  must give ladle's values (the rest is counted: ladle more lenient than both).

A corrupt ZSTD page that the system's libzstd (ladle's) decodes to other
bytes than pyarrow's and Polars' (a stream without a checksum) is counted as
zstd-divergence, not a mismatch.

Cases run in batches in a worker process, so a crash is caught and its input
kept in fuzz/crashes/diff-*.parquet (and mismatches too). Usage:
    python fuzz/diff_pyarrow.py --seconds 60 [--seed N] [--out fuzz/crashes]
    python fuzz/diff_pyarrow.py --fast --jobs 16 --seconds 600   # fuzz/diff_pyarrow_fast.py
    python fuzz/diff_pyarrow.py --recheck fuzz/crashes/slow-SEED  # the fast mode's kept mutants
Exit status 1 when a failure was found. Prints counts per outcome.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

DATA = ROOT.parent / "shared" / "data" / "parquet-testing"
CODECS = {1: "snappy", 2: "gzip", 4: "brotli", 6: "zstd", 7: "lz4_raw"}  # Parquet codec id -> pyarrow codec


# ----------------------------------------------------------------- sources


def random_table(rng: random.Random, n: int):
    import numpy as np
    import pyarrow as pa

    g = np.random.default_rng(rng.randrange(1 << 30))
    mask = g.random(n) < rng.choice([0.0, 0.1, 0.5])
    words = ["", "a", "ladle", "\u00e9t\u00e9", "\u20ac", "\U0001f600 x", "x" * 20, "twelve bytes"]
    cols = {
        "i8": pa.array(g.integers(-128, 127, n, dtype=np.int8), mask=mask),
        "i32": pa.array(g.integers(-(2**31), 2**31 - 1, n, dtype=np.int32), mask=mask),
        "i64": pa.array(g.integers(-(2**62), 2**62, n, dtype=np.int64)),
        "u16": pa.array(g.integers(0, 65535, n, dtype=np.uint16), mask=mask),
        "f32": pa.array(g.normal(size=n).astype(np.float32), mask=mask),
        "f64": pa.array(g.normal(size=n)),
        "b": pa.array(g.random(n) < 0.5, mask=mask),
        "s": pa.array([None if m else words[i] for m, i in zip(mask, g.integers(0, len(words), n))], pa.string()),
        "bin": pa.array([None if m else bytes([i, 255 - i]) for m, i in zip(mask, g.integers(0, 255, n))], pa.binary()),
        "d": pa.array(g.integers(-1000, 20000, n).astype(np.int32), pa.int32(), mask=mask).cast(pa.date32()),
        "ts": pa.array(g.integers(0, 2**50, n), pa.int64(), mask=mask).cast(pa.timestamp(rng.choice(["ms", "us", "ns"]))),
        "dec": pa.array([None if m else __import__("decimal").Decimal(int(v)).scaleb(-3)
                         for m, v in zip(mask, g.integers(-(10**8), 10**8, n))], pa.decimal128(12, 3)),
        "l": pa.array([None if m else [int(x) for x in g.integers(0, 9, int(k))] for m, k in zip(mask, g.integers(0, 4, n))], pa.list_(pa.int64())),
        "ls": pa.array([None if m else [words[int(x)] for x in g.integers(0, len(words), int(k))] for m, k in zip(mask, g.integers(0, 3, n))], pa.list_(pa.string())),
    }
    keep = rng.sample(sorted(cols), rng.randint(1, 5))
    return pa.table({k: cols[k] for k in keep})


def write_random(rng: random.Random, sizes: tuple[int, ...] = (1, 7, 100, 1000, 5000)) -> bytes:
    import pyarrow.parquet as pq

    t = random_table(rng, rng.choice(sizes))
    opts: dict = dict(compression=rng.choice(["none", "snappy", "gzip", "zstd", "lz4", "brotli"]),
                      use_dictionary=rng.random() < 0.5, data_page_version=rng.choice(["1.0", "2.0"]),
                      data_page_size=rng.choice([256, 4096, 1 << 20]), write_page_checksum=rng.random() < 0.3,
                      store_schema=rng.random() < 0.8)
    if not opts["use_dictionary"] and rng.random() < 0.5:
        enc = {}
        for name in t.column_names:
            typ = str(t.schema.field(name).type)
            if typ in ("int32", "int64"):
                enc[name] = rng.choice(["DELTA_BINARY_PACKED", "BYTE_STREAM_SPLIT", "PLAIN"])
            elif typ in ("float", "double"):
                enc[name] = rng.choice(["BYTE_STREAM_SPLIT", "PLAIN"])
            elif typ in ("string", "binary"):
                enc[name] = rng.choice(["DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "PLAIN"])
        opts["column_encoding"] = enc
    if "ts" in t.column_names and rng.random() < 0.2:
        opts["use_deprecated_int96_timestamps"] = True
    buf = io.BytesIO()
    pq.write_table(t, buf, row_group_size=rng.choice([3, 500, 100000]), **opts)
    return buf.getvalue()


def sources() -> list[bytes]:
    import pyarrow.parquet as pq

    out = []
    for p in sorted(DATA.glob("*.parquet")):
        try:
            pq.read_table(p)
        except Exception:
            continue
        out.append(p.read_bytes())
    return out


# --------------------------------------------------------------- mutations


INTERESTING = [0, 1, 2, 7, 8, 15, 16, 127, 128, 255, 256, 4095, 65535, 2**31 - 1, -1, -(2**31)]


def mutate_bytes(rng: random.Random, b: bytearray, ops: int | None = None) -> bytearray:
    if not b:
        return b
    for _ in range(ops or rng.randint(1, 8)):
        op = rng.random()
        i = rng.randrange(len(b))
        if op < 0.5:
            b[i] ^= 1 << rng.randrange(8)
        elif op < 0.7:
            b[i] = rng.randrange(256)
        elif op < 0.8:
            del b[i : i + rng.randint(1, 8)]
        elif op < 0.9:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:
            v = rng.choice(INTERESTING) & 0xFFFFFFFF
            b[i : i + 4] = v.to_bytes(4, "little")
        if not b:
            break
    return b


def mutate_structure(rng: random.Random, raw: bytes) -> bytes:
    import pyarrow as pa
    import pqcraft as C

    pf = C.read(raw)
    chunks = [(g, c) for g, row in enumerate(pf.chunks) for c in range(len(row)) if row[c].pages]
    if not chunks:
        raise ValueError("no pages")
    g, c = rng.choice(chunks)
    chunk = pf.chunks[g][c]
    cmeta = chunk.cmeta
    codec = C.get(cmeta, 4)
    page = rng.choice(chunk.pages)
    sub = page.sub()
    op = rng.choice(["data", "data", "data", "header", "footer", "pages"])
    if op == "data":
        levels = (C.get(sub, 5) or 0) + (C.get(sub, 6) or 0) if page.type == C.DATA_PAGE_V2 else 0
        compressed = codec != 0 and (page.type != C.DATA_PAGE_V2 or C.get(sub, 7, True))
        head, body = page.data[:levels], page.data[levels:]
        if compressed and codec in CODECS:
            codec_ = pa.Codec(CODECS[codec])
            plain = codec_.decompress(body, decompressed_size=C.get(page.header, 2) - levels, asbytes=True)
            plain = bytes(mutate_bytes(rng, bytearray(plain)))
            body = codec_.compress(plain, asbytes=True)
            C.put(page.header, 2, C.I32, len(plain) + levels)
            page.data = head + body
        elif not compressed:
            page.data = bytes(mutate_bytes(rng, bytearray(page.data)))
            C.put(page.header, 2, C.I32, len(page.data))
        else:
            page.data = bytes(mutate_bytes(rng, bytearray(page.data)))
        C.with_crc(page)
    elif op == "header":
        target = rng.choice([page.header, sub]) if sub else page.header
        fid = rng.choice([f[0] for f in target if f[1] in (C.I32, C.I64, C.TRUE)] or [1])
        cur = C.get(target, fid, 0)
        if isinstance(cur, bool):
            C.put(target, fid, C.TRUE, not cur)
        else:
            C.put(target, fid, C.I32, rng.choice([cur + 1, cur - 1, 0, cur * 2, rng.choice(INTERESTING),
                                                  rng.choice([0, 2, 3, 5, 6, 7, 8, 9])]))
    elif op == "footer":
        kind = rng.random()
        if kind < 0.4:
            fid = rng.choice([1, 4, 5])  # type, codec, num_values
            C.put(cmeta, fid, C.I64 if fid == 5 else C.I32,
                  rng.choice([C.get(cmeta, fid, 0) + 1, C.get(cmeta, fid, 0) - 1, rng.randrange(8), rng.choice(INTERESTING)]))
        elif kind < 0.7:
            elems = pf.schema()
            e = rng.choice(elems[1:] or elems)
            fid = rng.choice([1, 2, 3, 6, 7, 8])
            C.put(e, fid, C.I32, rng.choice([rng.randrange(22), rng.choice(INTERESTING)]))
            if rng.random() < 0.3:  # a logical type
                C.put(e, 10, C.STRUCT, [[rng.choice([1, 4, 5, 6, 8, 10, 11, 12, 15]), C.STRUCT, []]])
        else:
            rg = C.get(pf.footer, 4)[1][g]
            C.put(rg, 3, C.I64, max(0, C.get(rg, 3, 0) + rng.choice([-1, 1, -5, 100])))
    else:
        pages = chunk.pages
        i = rng.randrange(len(pages))
        k = rng.random()
        if k < 0.4 and len(pages) > 1:
            del pages[i]
        elif k < 0.7:
            pages.insert(i, C.Page([list(f) for f in pages[i].header], pages[i].data))
        elif len(pages) > 1:
            j = rng.randrange(len(pages))
            pages[i], pages[j] = pages[j], pages[i]
    return C.write(pf)


def mutate(rng: random.Random, raw: bytes) -> bytes:
    r = rng.random()
    if r < 0.15:
        return bytes(mutate_bytes(rng, bytearray(raw)))
    if r < 0.2:
        return raw[: rng.randrange(len(raw))]
    try:
        out = raw
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            out = mutate_structure(rng, out)
        return out
    except Exception:
        return bytes(mutate_bytes(rng, bytearray(raw)))


def _int(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _is_struct(v) -> bool:
    """Whether a decoded value is a struct's field list ([id, type, value] each)."""
    return isinstance(v, list) and all(isinstance(f, (list, tuple)) and len(f) == 3 for f in v)


def zstd_divergence(raw: bytes) -> bool:
    """Whether a ZSTD page of the file decompresses, without an error, to
    other bytes with the system's libzstd (the one ladle links) than with
    pyarrow's (which Polars' agrees with): a corrupt stream without a checksum
    that zstd versions decode differently. No reader is wrong there."""
    import ctypes
    import ctypes.util

    import pyarrow as pa
    import pyarrow.parquet as pq
    import pqcraft as C

    name = ctypes.util.find_library("zstd")
    try:
        md = pq.read_metadata(pa.BufferReader(raw))
        lib = ctypes.CDLL(name) if name else None
    except Exception:
        return False
    if lib is None:
        return False
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    lib.ZSTD_isError.restype = ctypes.c_uint
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    z = pa.Codec("zstd")
    for g in range(md.num_row_groups):
        for c in range(md.num_columns):
            cc = md.row_group(g).column(c)
            if cc.compression != "ZSTD":
                continue
            pos = cc.dictionary_page_offset if cc.has_dictionary_page and cc.dictionary_page_offset else cc.data_page_offset
            end = min(len(raw), pos + cc.total_compressed_size)
            while 0 <= pos < end:
                try:
                    header, pos = C.decode_struct(raw, pos)
                    if not _is_struct(header):
                        break
                except Exception:
                    break
                # a mutated header may hold any type in any field: only integers count
                size, usize = _int(C.get(header, 3)), _int(C.get(header, 2))
                data, pos = raw[pos : pos + max(size, 0)], pos + max(size, 0)
                levels = 0
                if C.get(header, 1) == C.DATA_PAGE_V2:
                    sub = C.get(header, 8) or []
                    if not _is_struct(sub):
                        continue
                    levels = _int(C.get(sub, 5)) + _int(C.get(sub, 6))
                    if not C.get(sub, 7, True):
                        continue
                n = usize - levels
                if size <= 0 or not 0 < n <= 1 << 26:
                    continue
                body = data[levels:]
                try:
                    theirs = z.decompress(body, decompressed_size=n, asbytes=True)
                except Exception:
                    continue
                buf = ctypes.create_string_buffer(n)
                r = lib.ZSTD_decompress(buf, n, body, len(body))
                if not lib.ZSTD_isError(r) and r == n and buf.raw[:n] != theirs:
                    return True
    return False


def self_test_corrupt(df):
    """ladle's answer made wrong under LADLE_DIFF_SELF_TEST=corrupt: the
    harness's own test that a wrong answer is reported."""
    if os.environ.get("LADLE_DIFF_SELF_TEST") == "corrupt" and len(df) > 0:
        return df.slice(1)
    return df


# ------------------------------------------------------------------ worker


def frames_equal(a, b) -> str | None:
    """None when equal, else what differs."""
    from polars.testing import assert_frame_equal

    try:
        assert_frame_equal(a, b, check_exact=False, rel_tol=1e-12)
        return None
    except AssertionError as e:
        return str(e)[:300]


def utf8_invalid(table) -> bool:
    """Whether a string column (or a list of strings) holds invalid UTF-8:
    pyarrow reads such bytes without a check; full validation of those columns
    alone looks (other columns can fail it for other reasons, a decimal past
    its precision)."""
    import pyarrow as pa

    for col in table.columns:
        t = col.type
        while pa.types.is_list(t) or pa.types.is_large_list(t):
            t = t.value_type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
            continue
        try:
            col.validate(full=True)
        except Exception:
            return True
    return False


def int96_columns(path: str) -> set[str]:
    import pyarrow.parquet as pq

    schema = pq.read_metadata(path).schema
    return {schema.column(i).name for i in range(len(schema)) if schema.column(i).physical_type == "INT96"}


def int96_saturated(got, want) -> bool:
    """Whether every value where ladle and pyarrow differ is INT64_MAX on
    ladle's side: an INT96 past the nanosecond range, which Polars saturates
    (to 2262-04-11 23:47:16.854775807) and pyarrow wraps."""
    import polars as pl

    g, w = got.cast(pl.Int64), want.cast(pl.Int64)
    differ = (g != w).fill_null(True) & ~(g.is_null() & w.is_null())
    return bool((g.filter(differ) == 2**63 - 1).all())


def planned_type_agrees(path: str, name: str, got, want) -> bool:
    """Where Polars cannot read a column: is ladle's type the one Polars' scan plans
    for it, with pyarrow's values (the same physical values)? A footer whose
    LogicalType is malformed beside a converted type (a DATE member that is an i64
    next to converted DATE): pyarrow reads Int32, Polars plans Date and then fails,
    ladle reads Date, as Polars' plan says."""
    import polars as pl

    try:
        planned = pl.scan_parquet(path).collect_schema().get(name)
        if planned is None or planned != got.dtype or len(got) != len(want):
            return False
        a = got.to_physical().cast(pl.Int64, strict=False)
        b = want.to_physical().cast(pl.Int64, strict=False)
        return bool(a.eq_missing(b).all()) and a.null_count() == got.null_count()
    except BaseException:  # noqa: BLE001 - no plan, no agreement
        return False


def run_case(path: str, stage: list) -> dict:
    import warnings

    import polars as pl
    import pyarrow.parquet as pq

    import ladle

    warnings.simplefilter("ignore")
    out: dict = {}
    stage[0] = "ladle"
    try:
        got = pl.scan_parquet(path).collect(engine=ladle.Engine(raise_on_fail=True, threads=2))
        out["ladle"] = "ok"
        got = self_test_corrupt(got)
    except ladle.UnsupportedError as e:
        out["ladle"] = "unsupported"
        out["ladle_msg"] = str(e)[:200]
        got = None
    except ladle.LadleError as e:
        out["ladle"] = "error"
        out["ladle_msg"] = str(e)[:200]
        got = None
    except pl.exceptions.PolarsError as e:  # Polars failed on the footer before ladle ran
        out["ladle"] = "polars-error"
        out["ladle_msg"] = str(e)[:200]
        got = None
    except BaseException as e:  # anything else is a bug: not a clean error
        out["ladle"] = "unclean"
        out["ladle_msg"] = f"{type(e).__name__}: {str(e)[:300]}"
        if "Panic" in type(e).__name__:
            # a fallback ran Polars' own reader on the file: does it panic alone?
            stage[0] = "polars-alone"
            try:
                pl.read_parquet(path)
            except BaseException as e2:
                if "Panic" in type(e2).__name__:
                    out["ladle"] = "polars-panic"  # Polars' reader, run by a fallback: not ladle's reader
        return out
    stage[0] = "pyarrow"
    try:
        table = pq.read_table(path)
        out["pyarrow"] = "ok"
    except BaseException as e:
        out["pyarrow"] = "error"
        out["pyarrow_msg"] = str(e)[:120]
        if got is not None:  # ladle reads what pyarrow refuses: Polars, the specification, decides
            stage[0] = "polars"
            try:
                theirs = pl.read_parquet(path)
                out["verdict"] = "polars-agrees" if frames_equal(got, theirs) is None else "mismatch-polars"
                if out["verdict"] == "mismatch-polars":
                    out["diff"] = frames_equal(got, theirs)
                    if zstd_divergence(Path(path).read_bytes()):
                        out["verdict"] = "zstd-divergence"
            except BaseException as e2:
                out["verdict"] = "polars-refuses-too"
                out["polars_msg"] = f"{type(e2).__name__}: {str(e2)[:120]}"
        return out
    if got is None:
        return out
    if utf8_invalid(table):
        out["verdict"] = "ladle-read-invalid-utf8"  # pyarrow read bytes that are not UTF-8; ladle must raise
        return out
    stage[0] = "compare"
    try:
        want = pl.from_arrow(table)
        diff = frames_equal(got, want)
    except BaseException as e:
        out["verdict"] = "incomparable"
        out["why"] = f"{type(e).__name__}: {str(e)[:200]}"
        return out
    if diff is None:
        out["verdict"] = "equal"
        return out
    stage[0] = "polars"  # pyarrow and ladle differ: ladle follows Polars, column by column
    out["verdict"] = "equal-polars"
    int96 = int96_columns(path)
    for name in got.columns:
        if name not in want.columns or frames_equal(got.select(name), want.select(name)) is None:
            continue
        if name in int96 and int96_saturated(got[name], want[name]):
            continue  # out of the ns range: Polars (and ladle) saturate, pyarrow wraps
        try:
            theirs = pl.read_parquet(path, columns=[name])
            if frames_equal(got.select(name), theirs) is not None:
                out["verdict"] = "mismatch"
        except BaseException as e:
            if planned_type_agrees(path, name, got[name], want[name]):
                continue  # Polars plans ladle's type, then cannot read the column
            out["verdict"] = "mismatch"
            out["polars_msg"] = f"{type(e).__name__}: {str(e)[:200]}"
    out["diff"] = diff
    if out["verdict"] == "mismatch" and zstd_divergence(Path(path).read_bytes()):
        out["verdict"] = "zstd-divergence"  # a corrupt page that other zstd versions decode otherwise
    return out


class _Stage(list):
    """The stage a case is in, printed as it changes: a crash's last line says
    whose code crashed."""

    def __setitem__(self, i, v):  # type: ignore[override]
        print(json.dumps({"stage": v}), flush=True)
        super().__setitem__(i, v)


def worker(case_dir: str) -> None:
    """Reads every case file of the directory in order, one JSON line each;
    "start <name>" before each so that the parent knows which one crashed."""
    stage = _Stage([""])
    for name in sorted(os.listdir(case_dir)):
        print(json.dumps({"start": name}), flush=True)
        res = run_case(os.path.join(case_dir, name), stage)
        res["case"] = name
        print(json.dumps(res), flush=True)


# ------------------------------------------------------------------ parent


def bad(r: dict) -> bool:
    """Whether a case's result is a failure."""
    return r["ladle"] == "unclean" or r.get("verdict") in ("mismatch", "mismatch-polars", "ladle-read-invalid-utf8")


def result_key(r: dict) -> str:
    key = f"ladle:{r['ladle']}" + (f" pyarrow:{r['pyarrow']}" if "pyarrow" in r else "")
    return key + (f" -> {r['verdict']}" if "verdict" in r else "")


def run_batch(files: list[bytes], env: dict, timeout: float) -> tuple[list[dict], dict | None]:
    """Runs the cases in a worker process: (results in order, the crash or
    None); a crash is {"index", "stage", "returncode", "stderr"}. The cases
    after a crash are not run."""
    with tempfile.TemporaryDirectory() as d:
        for k, b in enumerate(files):
            Path(d, f"{k:04d}.parquet").write_bytes(b)
        try:
            proc = subprocess.run([sys.executable, __file__, "--worker", d], capture_output=True, text=True, env=env,
                                  timeout=timeout)
            stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stderr, rc = f"timed out after {timeout:.0f}s", -9
    started, stage, results = None, "", []
    for line in stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "start" in r:
            started = r["start"]
        elif "stage" in r:
            stage = r["stage"]
        else:
            r["index"] = int(r["case"][:4])
            results.append(r)
    crash = None
    if rc != 0 and started is not None and int(started[:4]) not in {r["index"] for r in results}:
        crash = {"index": int(started[:4]), "stage": stage, "returncode": rc, "stderr": stderr[-600:]}
    return results, crash


def recheck(paths: list[Path], seconds: float, env: dict) -> dict:
    """The slow mode (Polars' reader decides) on the fast mode's kept mutants,
    for at most `seconds`: {"counts", "failures", "cleared", "unchecked",
    "skipped"}; a failure is kept as diff-slow-*.parquet beside its mutant, a
    cleared mutant removed. skipped: why it could not run (no Polars)."""
    res: dict = {"counts": {}, "failures": [], "cleared": 0, "unchecked": len(paths), "skipped": ""}
    probe = subprocess.run([sys.executable, "-c", "import polars, pyarrow, ladle"], capture_output=True, text=True,
                           env=env)
    if probe.returncode != 0:
        res["skipped"] = "Polars or ladle's Python package does not import here"
        return res
    deadline = time.time() + seconds
    todo = list(paths)
    while todo and time.time() < deadline:
        batch, todo = todo[:20], todo[20:]
        results, crash = run_batch([p.read_bytes() for p in batch], env, timeout=max(120, len(batch) * 5))
        done = set()
        for r in results:
            p = batch[r["index"]]
            done.add(r["index"])
            key = result_key(r)
            res["counts"][key] = res["counts"].get(key, 0) + 1
            if bad(r):
                keep = p.with_name("diff-slow-" + p.name)
                p.rename(keep)
                if p.with_suffix(".txt").exists():
                    p.with_suffix(".txt").rename(keep.with_suffix(".txt"))
                line = f"{key}: {r.get('ladle_msg') or r.get('diff')} (kept {keep})"
                res["failures"].append(line)
                print("FAILURE " + line, flush=True)
            else:
                res["cleared"] += 1
                p.unlink()
                p.with_suffix(".txt").unlink(missing_ok=True)
        if crash is not None:
            p = batch[crash["index"]]
            done.add(crash["index"])
            key = f"crash in {crash['stage']}"
            res["counts"][key] = res["counts"].get(key, 0) + 1
            line = f"crash (exit {crash['returncode']}) in {crash['stage']} on {p}: {crash['stderr']}"
            if crash["stage"] == "ladle":
                res["failures"].append(line)
            print(f"{'FAILURE' if crash['stage'] == 'ladle' else 'note'}: {line}", flush=True)
        todo = [p for k, p in enumerate(batch) if k not in done] + todo  # after a crash: the rest again
        res["unchecked"] = len(todo)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description="Differential fuzzing of ladle's Parquet reader against pyarrow.")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--out", default=str(ROOT / "fuzz" / "crashes"))
    ap.add_argument("--worker", default=None)
    ap.add_argument("--verbose", action="store_true", help="list what ladle said where pyarrow read the file")
    ap.add_argument("--keep-lenient", default=None, help="keep the files ladle reads and pyarrow refuses here")
    ap.add_argument("--fast", action="store_true",
                    help="the fast mode (fuzz/diff_pyarrow_fast.py): ladle's native module and pyarrow only, "
                         "thousands of executions a second per job; what differs is checked with this slow mode")
    ap.add_argument("--jobs", type=int, default=1, help="fast mode: worker processes (one per core)")
    ap.add_argument("--timeout", type=float, default=10, help="fast mode: seconds without progress that make a hang")
    ap.add_argument("--mem-mb", type=int, default=4096, help="fast mode: address space per worker past its start")
    ap.add_argument("--recheck-seconds", type=float, default=120,
                    help="fast mode: at most this long for the slow check of what the workers kept")
    ap.add_argument("--no-recheck", action="store_true", help="fast mode: leave the kept mutants unchecked")
    ap.add_argument("--gate", choices=("all", "crash"), default="all",
                    help="fast mode: exit 1 on any failure (all), or only on a crash, a hang, an exception other "
                         "than ladle's or invalid Arrow (crash: a time-seeded run in `make test` reports a "
                         "differing answer with its kept file without failing)")
    ap.add_argument("--recheck", default=None, metavar="DIR",
                    help="only the slow check of the mutants a fast run kept in DIR (where Polars is installed)")
    ap.add_argument("--self-test", default=None, choices=["corrupt", "crash", "hang", "raise"], help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker)
        return 0
    if a.self_test:
        os.environ["LADLE_DIFF_SELF_TEST"] = a.self_test  # the slow check's workers see it too
    if a.recheck:
        paths = sorted(Path(a.recheck).glob("*.parquet"))
        paths = [p for p in paths if not p.name.startswith("diff-slow-")]
        r = recheck(paths, float("inf"), dict(os.environ))
        print(f"diff_pyarrow: recheck of {len(paths)}: {r['cleared']} cleared, {len(r['failures'])} failures"
              + (f" (skipped: {r['skipped']})" if r["skipped"] else ""))
        for k in sorted(r["counts"]):
            print(f"  {r['counts'][k]:6d}  {k}")
        return 1 if r["failures"] or r["skipped"] else 0
    if a.fast:
        import diff_pyarrow_fast

        return diff_pyarrow_fast.run(a)
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    pool = sources()
    counts: dict[str, int] = {}
    stricter: dict[str, int] = {}
    failures = 0
    deadline = time.time() + a.seconds
    n = 0
    env = dict(os.environ, LADLE_MMAP=rng.choice(["0", "1"]))
    while time.time() < deadline:
        files = []
        for _ in range(a.batch):
            base = rng.choice(pool) if pool and rng.random() < 0.4 else write_random(rng)
            files.append(mutate(rng, base))
        results, crash = run_batch(files, env, timeout=max(120, a.batch * 5))
        for r in results:
            n += 1
            key = result_key(r)
            if r["ladle"] in ("error", "unsupported") and r.get("pyarrow") == "ok":
                # where ladle is stricter than pyarrow: what it said, numbers and paths out
                import re

                msg = re.sub(r"\S*\.parquet", "F", r.get("ladle_msg", ""))
                msg = re.sub(r"\d+", "N", re.sub(r"column '[^']*'", "column C", msg))
                stricter[msg] = stricter.get(msg, 0) + 1
            counts[key] = counts.get(key, 0) + 1
            if a.keep_lenient and r["ladle"] == "ok" and r.get("pyarrow") == "error":
                # where ladle reads what pyarrow refuses: kept for a look
                Path(a.keep_lenient).mkdir(parents=True, exist_ok=True)
                Path(a.keep_lenient, f"lenient-{seed}-{n}.parquet").write_bytes(files[r["index"]])
                Path(a.keep_lenient, f"lenient-{seed}-{n}.txt").write_text(r.get("pyarrow_msg", ""))
            if bad(r):
                failures += 1
                keep = out / f"diff-{seed}-{n}.parquet"
                keep.write_bytes(files[r["index"]])
                print(f"FAILURE {key}: {r.get('ladle_msg') or r.get('diff')} (kept {keep})", flush=True)
        if crash is not None:
            n += 1
            keep = out / f"diff-crash-{seed}-{n}.parquet"
            keep.write_bytes(files[crash["index"]])
            stage = crash["stage"]
            counts[f"crash in {stage}"] = counts.get(f"crash in {stage}", 0) + 1
            if stage == "ladle":
                failures += 1
            print(f"{'FAILURE' if stage == 'ladle' else 'note'}: crash (exit {crash['returncode']}) in {stage} on {keep}: "
                  f"{crash['stderr']}", flush=True)
    print(f"diff_pyarrow: {n} cases in {a.seconds:.0f}s (seed {seed}), {failures} failures")
    for k in sorted(counts):
        print(f"  {counts[k]:6d}  {k}")
    if a.verbose:
        print("where pyarrow reads and ladle raises:")
        for m, c in sorted(stricter.items(), key=lambda kv: -kv[1]):
            print(f"  {c:6d}  {m[:160]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
