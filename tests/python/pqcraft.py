"""Parquet files taken apart and put back together, for tests and the differential
fuzzer: the thrift compact protocol as generic values, a file as its footer and
each column chunk's pages (header + raw bytes), and a writer that lays the pages
out again with every offset and size in the footer recomputed.

A thrift struct is a list of [field id, compact type, value]; a list is
(element type, [values]); binary is bytes; booleans, integers and doubles are
Python values. Field ids follow parquet.thrift (FileMetaData, RowGroup,
ColumnChunk, ColumnMetaData, PageHeader, ...). Nothing here validates: it
writes what it is given, so a test can build a file that breaks any rule.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)

# physical types, encodings, codecs, page types (parquet.thrift)
BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE_T, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY = range(8)
PLAIN, PLAIN_DICTIONARY, RLE, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY = 0, 2, 3, 5, 6, 7
RLE_DICTIONARY, BYTE_STREAM_SPLIT = 8, 9
UNCOMPRESSED, SNAPPY, GZIP, BROTLI, LZ4, ZSTD, LZ4_RAW = 0, 1, 2, 4, 5, 6, 7
DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 2, 3


# ------------------------------------------------------------------ decoding


class _Reader:
    def __init__(self, buf: bytes, pos: int = 0) -> None:
        self.b, self.p = buf, pos

    def byte(self) -> int:
        v = self.b[self.p]
        self.p += 1
        return v

    def varint(self) -> int:
        v = shift = 0
        while True:
            b = self.byte()
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    def zigzag(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def value(self, t: int) -> Any:
        if t in (TRUE, FALSE):  # in a list: one byte each
            return self.byte() == TRUE
        if t == BYTE:
            v = self.byte()
            return v - 256 if v > 127 else v
        if t in (I16, I32, I64):
            return self.zigzag()
        if t == DOUBLE:
            v = struct.unpack_from("<d", self.b, self.p)[0]
            self.p += 8
            return v
        if t == BINARY:
            n = self.varint()
            v = bytes(self.b[self.p : self.p + n])
            self.p += n
            return v
        if t in (LIST, SET):
            h = self.byte()
            n, et = h >> 4, h & 0x0F
            if n == 15:
                n = self.varint()
            return (et, [self.value(et) for _ in range(n)])
        if t == MAP:
            n = self.varint()
            kv = self.byte() if n else 0
            return (kv >> 4, kv & 0x0F, [(self.value(kv >> 4), self.value(kv & 0x0F)) for _ in range(n)])
        if t == STRUCT:
            return self.struct()
        raise ValueError(f"thrift type {t}")

    def struct(self) -> list:
        out: list = []
        last = 0
        while True:
            h = self.byte()
            if h == STOP:
                return out
            t, delta = h & 0x0F, h >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            if t in (TRUE, FALSE):
                out.append([fid, TRUE, t == TRUE])
            else:
                out.append([fid, t, self.value(t)])


def decode_struct(buf: bytes, pos: int = 0) -> tuple[list, int]:
    """A struct at buf[pos:]: (fields, position after it)."""
    r = _Reader(buf, pos)
    return r.struct(), r.p


# ------------------------------------------------------------------ encoding


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(v: int) -> bytes:
    return _varint((v << 1) ^ (v >> 63) if v < 0 else v << 1)


def _value(t: int, v: Any) -> bytes:
    if t in (TRUE, FALSE):
        return bytes([TRUE if v else FALSE])
    if t == BYTE:
        return bytes([v & 0xFF])
    if t in (I16, I32, I64):
        return _zigzag(v)
    if t == DOUBLE:
        return struct.pack("<d", v)
    if t == BINARY:
        return _varint(len(v)) + v
    if t in (LIST, SET):
        et, items = v
        head = bytes([(len(items) << 4) | et]) if len(items) < 15 else bytes([0xF0 | et]) + _varint(len(items))
        return head + b"".join(_value(et, x) for x in items)
    if t == MAP:
        kt, vt, items = v
        body = b"".join(_value(kt, k) + _value(vt, x) for k, x in items)
        return _varint(len(items)) + (bytes([(kt << 4) | vt]) if items else b"") + body
    if t == STRUCT:
        return encode_struct(v)
    raise ValueError(f"thrift type {t}")


def encode_struct(fields: list) -> bytes:
    out = bytearray()
    last = 0
    for fid, t, v in sorted(fields, key=lambda f: f[0]):
        ct = (TRUE if v else FALSE) if t in (TRUE, FALSE) else t
        delta = fid - last
        if 0 < delta <= 15:
            out.append((delta << 4) | ct)
        else:
            out.append(ct)
            out += _zigzag(fid)
        last = fid
        if t not in (TRUE, FALSE):
            out += _value(t, v)
    out.append(STOP)
    return bytes(out)


# -------------------------------------------------------- field access helpers


def get(fields: list, fid: int, default: Any = None) -> Any:
    for f in fields:
        if f[0] == fid:
            return f[2]
    return default


def put(fields: list, fid: int, t: int, v: Any) -> None:
    """Sets field fid (adding it when absent)."""
    for f in fields:
        if f[0] == fid:
            f[1], f[2] = t, v
            return
    fields.append([fid, t, v])


def drop(fields: list, *fids: int) -> None:
    fields[:] = [f for f in fields if f[0] not in fids]


# -------------------------------------------------------------- whole files


@dataclass
class Page:
    header: list  # PageHeader fields
    data: bytes  # the page's bytes as stored (compressed)

    @property
    def type(self) -> int:
        return get(self.header, 1)

    def sub(self) -> list:
        """The data/dictionary page header inside (fields 5, 7 or 8)."""
        for fid in (5, 7, 8):
            s = get(self.header, fid)
            if s is not None:
                return s
        return []


@dataclass
class Chunk:
    meta: list  # ColumnChunk fields
    pages: list[Page] = field(default_factory=list)

    @property
    def cmeta(self) -> list:
        return get(self.meta, 3)


@dataclass
class ParquetFile:
    footer: list  # FileMetaData fields
    chunks: list[list[Chunk]]  # [row group][column]

    def schema(self) -> list[list]:
        return get(self.footer, 2)[1]


def read(buf: bytes) -> ParquetFile:
    """Takes a file apart: the footer, and each chunk's pages from its first page
    offset up to its total_compressed_size."""
    assert buf[:4] == b"PAR1" and buf[-4:] == b"PAR1"
    flen = struct.unpack_from("<I", buf, len(buf) - 8)[0]
    footer, _ = decode_struct(buf, len(buf) - 8 - flen)
    chunks = []
    for rg in get(footer, 4)[1]:
        row = []
        for cc in get(rg, 1)[1]:
            cm = get(cc, 3)
            start = get(cm, 9)
            dict_off = get(cm, 11)
            if dict_off is not None and 0 < dict_off < start:
                start = dict_off
            end = start + get(cm, 7)
            pages, p = [], start
            while p < end:
                h, p = decode_struct(buf, p)
                n = get(h, 3)
                pages.append(Page(h, bytes(buf[p : p + n])))
                p += n
            row.append(Chunk(cc, pages))
        chunks.append(row)
    return ParquetFile(footer, chunks)


def write(pf: ParquetFile, fix_sizes: bool = True) -> bytes:
    """Lays the pages out again and recomputes the footer's offsets and sizes
    (page headers' compressed sizes too, when fix_sizes); column and offset
    indexes and bloom filters are dropped."""
    out = bytearray(b"PAR1")
    for rg, row in zip(get(pf.footer, 4)[1], pf.chunks):
        rg_start, rg_total = len(out), 0
        for cc, chunk in zip(get(rg, 1)[1], row):
            cm = get(cc, 3)
            start = len(out)
            dict_off = data_off = None
            usize = 0
            for page in chunk.pages:
                if fix_sizes:
                    put(page.header, 3, I32, len(page.data))
                if page.type == DICTIONARY_PAGE and dict_off is None and data_off is None:
                    dict_off = len(out)
                elif data_off is None and page.type != DICTIONARY_PAGE:
                    data_off = len(out)
                h = encode_struct(page.header)
                out += h + page.data
                usize += len(h) + (get(page.header, 2) or 0)
            if data_off is None:
                data_off = start
            put(cm, 9, I64, data_off)
            if dict_off is not None:
                put(cm, 11, I64, dict_off)
            else:
                drop(cm, 11)
            drop(cm, 10, 14, 15)
            put(cm, 7, I64, len(out) - start)
            put(cm, 6, I64, usize)
            put(cc, 2, I64, start)
            drop(cc, 4, 5, 6, 7)
            rg_total += len(out) - start
        put(rg, 5, I64, rg_start)
        put(rg, 6, I64, rg_total)
    footer = encode_struct(pf.footer)
    out += footer + struct.pack("<I", len(footer)) + b"PAR1"
    return bytes(out)


def with_crc(page: Page) -> None:
    """Sets the page header's CRC32 to its data's (or keeps none)."""
    if get(page.header, 4) is not None:
        put(page.header, 4, I32, struct.unpack("<i", struct.pack("<I", zlib.crc32(page.data)))[0])
