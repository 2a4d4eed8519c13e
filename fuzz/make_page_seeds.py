"""Writes seed inputs for fuzz_parquet_pages (its input layout is described at
the top of fuzz/fuzz_parquet_pages.c) into tests/data/fuzz/: one valid column
of each physical type and encoding, flat, optional and in a list, data pages
v1 and v2, each codec; and a few for fuzz_csv_gen (fuzz/fuzz_csv_gen.c). Run
once; the seeds are committed (with the inputs the fuzzers found worth
keeping)."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

PHYS = {"bool": 0, "i32": 1, "i64": 2, "i96": 3, "f32": 4, "f64": 5, "bytes": 6, "flba": 7}
LOGICAL = {"none": 0, "string": 1, "date": 2, "decimal9": 5, "int8": 7}
CODEC = {"none": 0, "snappy": 1, "gzip": 2, "zstd": 3, "lz4raw": 4}
ENC = {"plain": 0, "plain_dict": 1, "rle": 2, "delta": 3, "delta_len": 4, "delta_bytes": 5, "rle_dict": 6, "bss": 7}


def varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v: int) -> bytes:
    return varint((v << 1) ^ (v >> 63) if v < 0 else v << 1)


def delta(values: list[int]) -> bytes:
    """DELTA_BINARY_PACKED, one block of 128 in 4 miniblocks."""
    out = varint(128) + varint(4) + varint(len(values)) + zigzag(values[0] if values else 0)
    for i in range(1, len(values), 128):
        d = [values[i + k] - values[i + k - 1] for k in range(min(128, len(values) - i))]
        mind = min(d)
        d += [mind] * (128 - len(d))
        out += zigzag(mind)
        widths = [max((x - mind).bit_length() for x in d[j * 32:(j + 1) * 32]) for j in range(4)]
        out += bytes(widths)
        for j in range(4):
            bits = 0
            acc = 0
            for k, x in enumerate(d[j * 32:(j + 1) * 32]):
                acc |= (x - mind) << (k * widths[j])
            bits = 32 * widths[j]
            out += acc.to_bytes(bits // 8, "little")
    return out


def rle(count: int, value: int, width: int) -> bytes:
    return varint(count << 1) + value.to_bytes((width + 7) // 8, "little")


def bitpack(values: list[int], width: int) -> bytes:
    """A bit-packed run of the RLE/bit-packed hybrid (padded to groups of 8)."""
    values = values + [0] * (-len(values) % 8)
    acc = sum(v << (i * width) for i, v in enumerate(values))
    return varint(len(values) // 8 << 1 | 1) + acc.to_bytes(len(values) * width // 8, "little")


def levels_v1(block: bytes) -> bytes:
    return struct.pack("<I", len(block)) + block


def page(kind: str, enc: str, nvals: int, body: bytes, nulls: int = 0, rep: bytes = b"", defs: bytes = b"",
         v2_raw: bool = False) -> bytes:
    k = {"v1": 0, "dict": 1, "v2": 2}[kind] | ENC[enc] << 2 | (32 if v2_raw else 0)
    data = rep + defs + body if kind == "v2" else body
    return (bytes([k]) + struct.pack("<H", nvals) + bytes([nulls, len(rep), len(defs)]) +
            struct.pack("<H", len(data)) + data)


def seed(phys: str, logical: str, codec: str, rows: int, pages: list[bytes], optional: bool = False,
         lst: bool = False, tlen: int = 0, crc: bool = False) -> bytes:
    flags = (1 if optional else 0) | (2 if lst else 0) | (8 if crc else 0)
    return (bytes([PHYS[phys], LOGICAL[logical], CODEC[codec], flags]) + struct.pack("<H", rows) +
            bytes([tlen]) + struct.pack("<H", 0) + b"".join(pages))


def plain_strings(words: list[bytes]) -> bytes:
    return b"".join(struct.pack("<I", len(w)) + w for w in words)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/fuzz")
    words = [b"", b"a", "\u00e9t\u00e9".encode(), b"twelve bytes", b"a longer string than twelve", b"x" * 40]
    ints = [3, -1, 7, 1 << 20, -(1 << 30), 0, 42, 5] * 4
    seeds = {
        "i32-plain": seed("i32", "none", "none", 32, [page("v1", "plain", 32, struct.pack("<32i", *ints))]),
        "i64-optional-snappy": seed("i64", "none", "snappy", 32, [page(
            "v1", "plain", 32, levels_v1(rle(16, 1, 1) + rle(8, 0, 1) + rle(8, 1, 1)) +
            struct.pack("<24q", *ints[:24]))], optional=True),
        "string-dict-gzip": seed("bytes", "string", "gzip", 48, [
            page("dict", "plain", len(words), plain_strings(words)),
            page("v1", "rle_dict", 48, bytes([3]) + bitpack([i * 5 % 6 for i in range(48)], 3))]),
        "string-delta-length": seed("bytes", "string", "zstd", 6, [page(
            "v1", "delta_len", 6, delta([len(w) for w in words]) + b"".join(words))]),
        "string-delta-bytes": seed("bytes", "string", "none", 6, [page(
            "v1", "delta_bytes", 6, delta([0, 0, 1, 2, 3, 0]) + delta([0, 1, 1, 1, 1, 2]) + b"abcd\xc3\xa9")]),
        "f32-bss": seed("f32", "none", "lz4raw", 4, [page(
            "v1", "bss", 4, bytes(b for k in range(4) for b in [struct.pack("<4f", 1.5, -2.0, 3.25, 1e9)[i * 4 + k] for i in range(4)]))]),
        "i64-delta": seed("i64", "none", "none", 200, [page("v1", "delta", 200, delta([i * i - 50 * i for i in range(200)]))]),
        "bool-rle": seed("bool", "none", "none", 20, [page("v1", "rle", 20, struct.pack("<I", 4) + rle(12, 1, 1) + rle(8, 0, 1))]),
        "i32-list": seed("i32", "none", "none", 3, [page(
            "v1", "plain", 5, levels_v1(bitpack([0, 1, 0, 0, 1], 1)) +
            levels_v1(bitpack([3] * 5, 2)) + struct.pack("<5i", 1, 2, 3, 4, 5))],
            optional=True, lst=True),
        "i32-v2-optional": seed("i32", "date", "snappy", 8, [page(
            "v2", "plain", 8, struct.pack("<6i", 1, 2, 3, 4, 5, 6), nulls=2, defs=varint(1 << 1 | 1) + bytes([0b11011011]))],
            optional=True, crc=True),
        "i96-plain": seed("i96", "none", "none", 2, [page("v1", "plain", 2, struct.pack("<qIqI", 0, 2440588, -1, 0x80000000))]),
        "flba-decimal": seed("flba", "decimal9", "none", 3, [page("v1", "plain", 3, b"\x00\x00\x01\x00\xff\xff\xff\xfe\x00\x00\x00\x07")], tlen=4),
        "string-plain-invalid-utf8": seed("bytes", "string", "snappy", 3, [page("v1", "plain", 3, plain_strings([b"ok", b"ok\xff\xfe", b"x"]))]),
        "int8-dict-v2": seed("i32", "int8", "zstd", 16, [
            page("dict", "plain", 3, struct.pack("<3i", -5, 0, 127)),
            page("v2", "rle_dict", 16, bytes([2]) + varint(2 << 1 | 1) + bytes([0x24, 0x49, 0x92, 0x24]), v2_raw=True)]),
    }
    out.mkdir(parents=True, exist_ok=True)
    for name, data in seeds.items():
        (out / f"parquet_pages-{name}").write_bytes(data)
    # fuzz_csv_gen: 4 option bytes, then elements (fuzz/fuzz_csv_gen.c)
    csv = {
        "numbers-and-words": bytes([0x00, 0x00, 0x00, 0x05]) + bytes([13, 0, 8, 7, 0, 11, 3, 3, 21, 5, 14, 1, 9, 200, 4]),
        "quoted-and-comments": bytes([0x20, 0x01, 0x00, 0x00]) + bytes([7 | 0x60, 0x1B, 0, 23, 4, 3, 16, 1, 6, 3, 18, 0, 19 | 0x20, 3]),
        "schema-dates": bytes([0x05, 0x04, 0x40, 0x12]) + bytes([12, 40, 0, 8, 9, 1, 13, 7, 5, 12, 99, 0, 10, 3, 17, 22]),
        "no-header-crlf": bytes([0x10, 0x02, 0x85, 0x00]) + bytes([8, 1, 1, 8, 2, 5, 8, 3, 1, 8, 4, 5, 6, 3]),
    }
    for name, data in csv.items():
        (out / f"csv_gen-{name}").write_bytes(data)
    print(f"{len(seeds) + len(csv)} seeds in {out}")


if __name__ == "__main__":
    main()
