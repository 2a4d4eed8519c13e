/* pq_craft.h — builds a Parquet file of one column chunk around given pages, for
 * the tests and the page-level fuzzer: the pages' bytes reach the decoders as
 * they are, with a footer and page headers that are well formed (or as wrong as
 * the caller asks). Header only; the thrift compact protocol written by hand.
 *
 * pqc_file() lays out "PAR1", each page (its header, then its stored bytes:
 * compressed here when the page asks, else as given), the FileMetaData of one
 * row group, its length and "PAR1". The caller frees the result with free().
 */
#ifndef LADLE_PQ_CRAFT_H
#define LADLE_PQ_CRAFT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef LADLE_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef LADLE_HAVE_SNAPPY
#include <snappy-c.h>
#endif
#ifdef LADLE_HAVE_LZ4
#include <lz4.h>
#endif

typedef struct pqc_buf {
  uint8_t *p;
  size_t n, cap;
  bool oom;
} pqc_buf;

static inline void pqc_put(pqc_buf *b, const void *src, size_t n) {
  if (b->oom) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (p == NULL) {
      b->oom = true;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, src, n);
  b->n += n;
}

static inline void pqc_byte(pqc_buf *b, uint8_t v) { pqc_put(b, &v, 1); }

static inline void pqc_varint(pqc_buf *b, uint64_t v) {
  while (v >= 0x80) {
    pqc_byte(b, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  pqc_byte(b, (uint8_t)v);
}

static inline void pqc_zigzag(pqc_buf *b, int64_t v) {
  pqc_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* thrift compact types */
enum { PQC_I32 = 5, PQC_I64 = 6, PQC_BIN = 8, PQC_LIST = 9, PQC_STRUCT = 12 };

/* A field header; `last` is the previous field id of the struct being written. */
static inline void pqc_field(pqc_buf *b, int16_t *last, int16_t id, int type) {
  int d = id - *last;
  if (d > 0 && d <= 15) {
    pqc_byte(b, (uint8_t)(d << 4 | type));
  } else {
    pqc_byte(b, (uint8_t)type);
    pqc_zigzag(b, id);
  }
  *last = id;
}
static inline void pqc_int(pqc_buf *b, int16_t *last, int16_t id, int type, int64_t v) {
  pqc_field(b, last, id, type);
  pqc_zigzag(b, v);
}
static inline void pqc_bool(pqc_buf *b, int16_t *last, int16_t id, bool v) {
  pqc_field(b, last, id, v ? 1 : 2);
}
static inline void pqc_bin(pqc_buf *b, int16_t *last, int16_t id, const char *s) {
  pqc_field(b, last, id, PQC_BIN);
  pqc_varint(b, strlen(s));
  pqc_put(b, s, strlen(s));
}
static inline void pqc_list_head(pqc_buf *b, int elem_type, size_t n) {
  if (n < 15) {
    pqc_byte(b, (uint8_t)(n << 4 | (size_t)elem_type));
  } else {
    pqc_byte(b, (uint8_t)(0xf0 | elem_type));
    pqc_varint(b, n);
  }
}
static inline void pqc_stop(pqc_buf *b) { pqc_byte(b, 0); }

/* The column: its physical type and what the schema says of it. */
typedef struct pqc_column {
  int physical;    /* 0 BOOLEAN ... 7 FIXED_LEN_BYTE_ARRAY */
  int type_length; /* FIXED_LEN_BYTE_ARRAY */
  int converted;   /* ConvertedType, or -1 */
  int logical; /* LogicalType union field (1 STRING, 5 DECIMAL, 6 DATE, 8 TIMESTAMP, 15 FLOAT16), or
                  0 */
  int precision, scale; /* DECIMAL */
  int ts_unit;          /* TIMESTAMP: 1 millis, 2 micros, 3 nanos */
  bool optional;        /* the leaf (or, for a list, the element) may be null */
  bool list;            /* a three-level LIST of the leaf: max_rep 1 */
  int codec;
} pqc_column;

typedef struct pqc_page {
  int type;                                /* 0 data v1, 2 dictionary, 3 data v2 */
  int encoding;                            /* of the values */
  int32_t num_values, num_nulls, num_rows; /* v2: nulls and rows as given */
  const uint8_t *levels;    /* v2: repetition then definition level bytes, stored raw */
  int64_t rep_len, def_len; /* as written in the header (the bytes stored: at most 1 MiB) */
  const uint8_t *data;      /* v1: levels and values; v2: the values; dictionary: the entries */
  size_t len;
  bool compress;        /* compress data with the column's codec here (else store it as given) */
  bool v2_compressed;   /* v2's is_compressed */
  int64_t uncompressed; /* < 0: the true size */
  bool crc;             /* write a correct CRC32 (with zlib) */
} pqc_page;

/* data compressed with codec into out (false: codec not available here) */
static inline bool pqc_compress(int codec, const uint8_t *src, size_t n, pqc_buf *out) {
  size_t cap;
  switch (codec) {
    case 0:
      pqc_put(out, src, n);
      return true;
#ifdef LADLE_HAVE_SNAPPY
    case 1: {
      cap = snappy_max_compressed_length(n);
      char *d = malloc(cap ? cap : 1);
      if (d == NULL) return false;
      bool ok = snappy_compress((const char *)src, n, d, &cap) == SNAPPY_OK;
      if (ok) pqc_put(out, d, cap);
      free(d);
      return ok;
    }
#endif
#ifdef LADLE_HAVE_ZLIB
    case 2: {
      z_stream z;
      memset(&z, 0, sizeof z);
      if (deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
      cap = deflateBound(&z, (uLong)n) + 32;
      uint8_t *d = malloc(cap);
      bool ok = d != NULL;
      if (ok) {
        z.next_in = (Bytef *)(uintptr_t)src;
        z.avail_in = (uInt)n;
        z.next_out = d;
        z.avail_out = (uInt)cap;
        ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
        if (ok) pqc_put(out, d, z.total_out);
      }
      deflateEnd(&z);
      free(d);
      return ok;
    }
#endif
#ifdef LADLE_HAVE_ZSTD
    case 6: {
      cap = ZSTD_compressBound(n);
      uint8_t *d = malloc(cap);
      if (d == NULL) return false;
      size_t r = ZSTD_compress(d, cap, src, n, 1);
      bool ok = !ZSTD_isError(r);
      if (ok) pqc_put(out, d, r);
      free(d);
      return ok;
    }
#endif
#ifdef LADLE_HAVE_LZ4
    case 7: {
      int c = LZ4_compressBound((int)n);
      char *d = malloc((size_t)c + 1);
      if (d == NULL) return false;
      int r = LZ4_compress_default((const char *)src, d, (int)n, c);
      if (r > 0) pqc_put(out, d, (size_t)r);
      free(d);
      return r > 0 || n == 0;
    }
#endif
    default:
      return false;
  }
}

static inline void pqc_schema_elem(pqc_buf *b, const char *name, int type, int type_length,
                                   int repetition, int num_children, int converted,
                                   const pqc_column *leaf) {
  int16_t last = 0;
  if (type >= 0) pqc_int(b, &last, 1, PQC_I32, type);
  if (type == 7) pqc_int(b, &last, 2, PQC_I32, type_length);
  if (repetition >= 0) pqc_int(b, &last, 3, PQC_I32, repetition);
  pqc_bin(b, &last, 4, name);
  if (num_children > 0) pqc_int(b, &last, 5, PQC_I32, num_children);
  if (converted >= 0) pqc_int(b, &last, 6, PQC_I32, converted);
  if (leaf != NULL && (leaf->converted == 5 || leaf->logical == 5)) {
    pqc_int(b, &last, 7, PQC_I32, leaf->scale);
    pqc_int(b, &last, 8, PQC_I32, leaf->precision);
  }
  if (leaf != NULL && leaf->logical > 0) {
    pqc_field(b, &last, 10, PQC_STRUCT); /* LogicalType: a union */
    int16_t ll = 0;
    pqc_field(b, &ll, (int16_t)leaf->logical, PQC_STRUCT);
    int16_t l2 = 0;
    if (leaf->logical == 5) {
      pqc_int(b, &l2, 1, PQC_I32, leaf->scale);
      pqc_int(b, &l2, 2, PQC_I32, leaf->precision);
    } else if (leaf->logical == 8) {
      pqc_bool(b, &l2, 1, false); /* isAdjustedToUTC */
      pqc_field(b, &l2, 2, PQC_STRUCT);
      int16_t l3 = 0;
      pqc_field(b, &l3, (int16_t)(leaf->ts_unit >= 1 && leaf->ts_unit <= 3 ? leaf->ts_unit : 2),
                PQC_STRUCT);
      pqc_stop(b);
      pqc_stop(b);
    }
    pqc_stop(b); /* the type's struct */
    pqc_stop(b); /* the union */
  }
  pqc_stop(b);
}

/* The file: `pages` of column `col` as the one column chunk of one row group of
 * `num_rows` rows; the chunk's num_values is `num_values` (< 0: the sum of the
 * data pages'). Returns the file's bytes (free()) and its length in *len, or
 * NULL when a codec is missing or memory runs out. */
static inline uint8_t *pqc_file(const pqc_column *col, int64_t num_rows, int64_t num_values,
                                const pqc_page *pages, int npages, size_t *len) {
  pqc_buf f = {0};
  pqc_put(&f, "PAR1", 4);
  int64_t start = 4, dict_off = -1, data_off = -1, values = 0, usize = 0;
  for (int i = 0; i < npages; i++) {
    const pqc_page *pg = &pages[i];
    pqc_buf body = {0};
    /* (level lengths past 1 MiB are only written in the header: nothing stored) */
    bool small = pg->rep_len >= 0 && pg->def_len >= 0 && pg->rep_len <= (1 << 20) &&
                 pg->def_len <= (1 << 20);
    int64_t stored = small ? pg->rep_len + pg->def_len : 0;
    if (pg->type == 3 && pg->levels != NULL && stored > 0)
      pqc_put(&body, pg->levels, (size_t)stored);
    size_t before = body.n;
    if (!(pg->compress ? pqc_compress(col->codec, pg->data, pg->len, &body)
                       : (pqc_put(&body, pg->data, pg->len), true)) ||
        body.oom) {
      free(body.p);
      free(f.p);
      return NULL;
    }
    int64_t unc = pg->uncompressed >= 0 ? pg->uncompressed : (int64_t)pg->len + (int64_t)before;
    if (pg->type == 2 && dict_off < 0 && data_off < 0) dict_off = (int64_t)f.n;
    if (pg->type != 2 && data_off < 0) data_off = (int64_t)f.n;
    if (pg->type != 2) values += pg->num_values;
    pqc_buf h = {0};
    int16_t last = 0;
    pqc_int(&h, &last, 1, PQC_I32, pg->type);
    pqc_int(&h, &last, 2, PQC_I32, unc);
    pqc_int(&h, &last, 3, PQC_I32, (int64_t)body.n);
#ifdef LADLE_HAVE_ZLIB
    if (pg->crc) pqc_int(&h, &last, 4, PQC_I32, (int32_t)crc32(0L, body.p, (uInt)body.n));
#endif
    int16_t sub = 0;
    if (pg->type == 0) {
      pqc_field(&h, &last, 5, PQC_STRUCT);
      pqc_int(&h, &sub, 1, PQC_I32, pg->num_values);
      pqc_int(&h, &sub, 2, PQC_I32, pg->encoding);
      pqc_int(&h, &sub, 3, PQC_I32, 3); /* RLE levels */
      pqc_int(&h, &sub, 4, PQC_I32, 3);
      pqc_stop(&h);
    } else if (pg->type == 2) {
      pqc_field(&h, &last, 7, PQC_STRUCT);
      pqc_int(&h, &sub, 1, PQC_I32, pg->num_values);
      pqc_int(&h, &sub, 2, PQC_I32, pg->encoding);
      pqc_stop(&h);
    } else {
      pqc_field(&h, &last, 8, PQC_STRUCT);
      pqc_int(&h, &sub, 1, PQC_I32, pg->num_values);
      pqc_int(&h, &sub, 2, PQC_I32, pg->num_nulls);
      pqc_int(&h, &sub, 3, PQC_I32, pg->num_rows);
      pqc_int(&h, &sub, 4, PQC_I32, pg->encoding);
      pqc_int(&h, &sub, 5, PQC_I32, pg->def_len);
      pqc_int(&h, &sub, 6, PQC_I32, pg->rep_len);
      pqc_bool(&h, &sub, 7, pg->v2_compressed);
      pqc_stop(&h);
    }
    pqc_stop(&h);
    usize += (int64_t)h.n + unc;
    pqc_put(&f, h.p, h.n);
    pqc_put(&f, body.p, body.n);
    free(h.p);
    free(body.p);
  }
  if (data_off < 0) data_off = start;
  int64_t chunk_len = (int64_t)f.n - start;
  if (num_values < 0) num_values = values;
  /* FileMetaData */
  pqc_buf m = {0};
  int16_t last = 0;
  pqc_int(&m, &last, 1, PQC_I32, 1);
  pqc_field(&m, &last, 2, PQC_LIST);
  int leaf_rep = col->optional ? 1 : 0;
  if (col->list) {
    pqc_list_head(&m, PQC_STRUCT, 4);
    pqc_schema_elem(&m, "schema", -1, 0, -1, 1, -1, NULL);
    pqc_schema_elem(&m, "c", -1, 0, 1, 1, 3 /* LIST */, NULL);
    pqc_schema_elem(&m, "list", -1, 0, 2, 1, -1, NULL);
    pqc_schema_elem(&m, "element", col->physical, col->type_length, leaf_rep, 0, col->converted,
                    col);
  } else {
    pqc_list_head(&m, PQC_STRUCT, 2);
    pqc_schema_elem(&m, "schema", -1, 0, -1, 1, -1, NULL);
    pqc_schema_elem(&m, "c", col->physical, col->type_length, leaf_rep, 0, col->converted, col);
  }
  pqc_int(&m, &last, 3, PQC_I64, num_rows);
  pqc_field(&m, &last, 4, PQC_LIST);
  pqc_list_head(&m, PQC_STRUCT, 1);
  {
    int16_t rl = 0;
    pqc_field(&m, &rl, 1, PQC_LIST);
    pqc_list_head(&m, PQC_STRUCT, 1);
    int16_t cl = 0;
    pqc_int(&m, &cl, 2, PQC_I64, start);
    pqc_field(&m, &cl, 3, PQC_STRUCT);
    int16_t ml = 0;
    pqc_int(&m, &ml, 1, PQC_I32, col->physical);
    pqc_field(&m, &ml, 2, PQC_LIST);
    pqc_list_head(&m, PQC_I32, 2);
    pqc_zigzag(&m, 0);
    pqc_zigzag(&m, 3);
    pqc_field(&m, &ml, 3, PQC_LIST);
    if (col->list) {
      pqc_list_head(&m, PQC_BIN, 3);
      pqc_varint(&m, 1);
      pqc_put(&m, "c", 1);
      pqc_varint(&m, 4);
      pqc_put(&m, "list", 4);
      pqc_varint(&m, 7);
      pqc_put(&m, "element", 7);
    } else {
      pqc_list_head(&m, PQC_BIN, 1);
      pqc_varint(&m, 1);
      pqc_put(&m, "c", 1);
    }
    pqc_int(&m, &ml, 4, PQC_I32, col->codec);
    pqc_int(&m, &ml, 5, PQC_I64, num_values);
    pqc_int(&m, &ml, 6, PQC_I64, usize);
    pqc_int(&m, &ml, 7, PQC_I64, chunk_len);
    pqc_int(&m, &ml, 9, PQC_I64, data_off);
    if (dict_off >= 0) pqc_int(&m, &ml, 11, PQC_I64, dict_off);
    pqc_stop(&m); /* ColumnMetaData */
    pqc_stop(&m); /* ColumnChunk */
    pqc_int(&m, &rl, 2, PQC_I64, chunk_len);
    pqc_int(&m, &rl, 3, PQC_I64, num_rows);
    pqc_stop(&m); /* RowGroup */
  }
  pqc_stop(&m); /* FileMetaData */
  pqc_put(&f, m.p, m.n);
  uint32_t ml32 = (uint32_t)m.n;
  uint8_t le[4] = {(uint8_t)ml32, (uint8_t)(ml32 >> 8), (uint8_t)(ml32 >> 16),
                   (uint8_t)(ml32 >> 24)};
  pqc_put(&f, le, 4);
  pqc_put(&f, "PAR1", 4);
  bool oom = f.oom || m.oom;
  free(m.p);
  if (oom) {
    free(f.p);
    return NULL;
  }
  *len = f.n;
  return f.p;
}

/* Helpers for page bodies: little-endian values, PLAIN byte arrays, and
 * RLE runs of levels (bit width bw: a run of `count` copies of v). */
static inline void pqc_le32(pqc_buf *b, uint32_t v) {
  uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  pqc_put(b, x, 4);
}
static inline void pqc_plain_str(pqc_buf *b, const void *s, size_t n) {
  pqc_le32(b, (uint32_t)n);
  pqc_put(b, s, n);
}
static inline void pqc_rle_run(pqc_buf *b, int bw, uint32_t count, uint32_t v) {
  pqc_varint(b, (uint64_t)count << 1);
  for (int k = 0; k < (bw + 7) / 8; k++) pqc_byte(b, (uint8_t)(v >> (8 * k)));
}

/* DELTA_BINARY_PACKED: blocks of 128 values in 4 miniblocks of 32, each
 * miniblock at the bit width its largest delta needs. */
static inline void pqc_delta(pqc_buf *b, const int64_t *v, int64_t n) {
  pqc_varint(b, 128);
  pqc_varint(b, 4);
  pqc_varint(b, (uint64_t)n);
  pqc_zigzag(b, n > 0 ? v[0] : 0);
  for (int64_t i = 1; i < n; i += 128) {
    int64_t m = n - i < 128 ? n - i : 128;
    uint64_t d[128];
    int64_t mind = INT64_MAX;
    for (int64_t k = 0; k < m; k++) {
      d[k] = (uint64_t)v[i + k] - (uint64_t)v[i + k - 1];
      if ((int64_t)d[k] < mind) mind = (int64_t)d[k];
    }
    for (int64_t k = m; k < 128; k++) d[k] = (uint64_t)mind;
    pqc_zigzag(b, mind);
    uint8_t w[4] = {0, 0, 0, 0};
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 32 && j * 32 < m; k++) {
        uint64_t x = d[j * 32 + k] - (uint64_t)mind;
        while (w[j] < 64 && (x >> w[j]) != 0) w[j]++;
      }
    pqc_put(b, w, 4);
    for (int j = 0; j < 4 && j * 32 < m; j++) {
      uint64_t acc = 0;
      int bits = 0;
      for (int k = 0; k < 32; k++) {
        uint64_t x = d[j * 32 + k] - (uint64_t)mind;
        for (int bit = 0; bit < w[j]; bit++) {
          acc |= ((x >> bit) & 1) << bits;
          if (++bits == 8) {
            pqc_byte(b, (uint8_t)acc);
            acc = 0;
            bits = 0;
          }
        }
      }
    }
  }
}

#endif
