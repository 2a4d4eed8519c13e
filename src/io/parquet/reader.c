/* reader.c — one column chunk of one row group into a ladle column: page headers,
 * CRCs, decompression, definition levels (RLE/bit-packed hybrid) and the value
 * encodings PLAIN, PLAIN_DICTIONARY/RLE_DICTIONARY, RLE (booleans),
 * DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and
 * BYTE_STREAM_SPLIT, for data pages v1 and v2.
 *
 * Values are first decoded into a physical form (an 8-byte slot per fixed-width
 * value, or pointer and length for byte arrays) and then scattered into the rows
 * whose definition level says "present", converting to the column's ladle type. */
#include <stdio.h>
#include <unistd.h>

#ifdef LADLE_HAVE_ZLIB
#include <zlib.h>
#endif

#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>
#endif

#include "parquet.h"

typedef struct ctx {
  const ladle_pq_file *f;
  const ladle_pq_column *col;
  ladle_error *err;
  int64_t page; /* for messages */
  size_t rg;    /* for messages */
} ctx;

static ladle_status corrupt(const ctx *c, const char *problem) {
  return ladle_err_set(c->err, LADLE_ECORRUPT, "%s: column '%s', row group %zu, page %lld: %s",
                       c->f->path, c->col->name, c->rg, (long long)c->page, problem);
}

/* ------------------------------------------------------------------ UTF-8 */

/* Whether the column's values become a String column: those must be valid
 * UTF-8 (Binary ones are not checked). */
static bool utf8_col(const ladle_pq_column *col) {
  return col->type.id == LADLE_TYPE_STRING && col->physical == LADLE_PQ_BYTE_ARRAY;
}

/* `what` is a printf format for i: "row %lld of the page", ... */
__attribute__((format(printf, 2, 0))) static ladle_status bad_utf8(const ctx *c, const char *what,
                                                                   int64_t i) {
  char where[64], msg[128];
  snprintf(where, sizeof where, what, (long long)i);
  snprintf(msg, sizeof msg, "invalid UTF-8 in a String column (%s)", where);
  return corrupt(c, msg);
}

/* ------------------------------------------------------------ bit reading */

static inline uint64_t read_bits(const uint8_t *base, int64_t bitpos, int bw) {
  /* bw <= 64; reads byte by byte so it never touches past the packed data */
  uint64_t v = 0;
  int got = 0;
  int64_t byte = bitpos >> 3;
  int shift = (int)(bitpos & 7);
  while (got < bw) {
    uint64_t b = base[byte] >> shift;
    int take = 8 - shift;
    v |= b << got;
    got += take;
    byte++;
    shift = 0;
  }
  return bw == 64 ? v : v & ((1ULL << bw) - 1);
}

/* Eight values of bw bits (1 to 32) from q: bw bytes, read as whole 8-byte
 * words (UNPACK_NEED(bw) bytes). Inlined with a constant bw, the shifts and
 * masks are constants. */
#define UNPACK_NEED(bw) (8 * (((bw) + 7) / 8))
static inline __attribute__((always_inline)) void unpack8(const uint8_t *q, int bw,
                                                          uint32_t *out) {
  uint64_t w[4] = {0, 0, 0, 0};
  memcpy(w, q, (size_t)UNPACK_NEED(bw));
  uint64_t mask = (1ULL << bw) - 1;
  for (int j = 0; j < 8; j++) {
    int sh = j * bw, wi = sh >> 6, off = sh & 63;
    uint64_t v = w[wi] >> off;
    if (off + bw > 64) v |= w[wi + 1] << (64 - off);
    out[j] = (uint32_t)(v & mask);
  }
}

/* Whole groups of 8 values of a bit-packed run, while the loads stay inside
 * its `bytes`; the number of values done. */
static int64_t unpack_groups(const uint8_t *p, int64_t bytes, int bw, int64_t count,
                             uint32_t *out) {
  int64_t whole = count / 8, g = 0;
  switch (bw) {
#define UNPACK_CASE(B)                                                                            \
  case B:                                                                                         \
    for (; g < whole && g * B + UNPACK_NEED(B) <= bytes; g++) unpack8(p + g * B, B, out + 8 * g); \
    break;
    UNPACK_CASE(1)
    UNPACK_CASE(2)
    UNPACK_CASE(3)
    UNPACK_CASE(4)
    UNPACK_CASE(5)
    UNPACK_CASE(6)
    UNPACK_CASE(7)
    UNPACK_CASE(8)
    UNPACK_CASE(9)
    UNPACK_CASE(10)
    UNPACK_CASE(11)
    UNPACK_CASE(12)
    UNPACK_CASE(13)
    UNPACK_CASE(14)
    UNPACK_CASE(15)
    UNPACK_CASE(16)
    UNPACK_CASE(17)
    UNPACK_CASE(18)
    UNPACK_CASE(19)
    UNPACK_CASE(20)
    UNPACK_CASE(21)
    UNPACK_CASE(22)
    UNPACK_CASE(23)
    UNPACK_CASE(24)
    UNPACK_CASE(25)
    UNPACK_CASE(26)
    UNPACK_CASE(27)
    UNPACK_CASE(28)
    UNPACK_CASE(29)
    UNPACK_CASE(30)
    UNPACK_CASE(31)
    UNPACK_CASE(32)
#undef UNPACK_CASE
    default:
      break;
  }
  return g * 8;
}

/* The RLE / bit-packed hybrid, decoded into an output: the values themselves
 * (levels, booleans, the indices of a page with nulls: rle_hybrid) or, for a
 * dictionary-encoded page whose every row has a value, straight through the
 * dictionary into fixed-width values or string views, 256 indices at a time
 * through a buffer on the stack (checked against the dictionary's size per
 * block) and a run of one index as a fill, so that such a page's indices are
 * never written out whole and read back. */
enum { DICT_U64, DICT_U32, DICT_F32, DICT_VIEW, DICT_INDEX, DICT_BYTE };

static inline float slot_f32(uint64_t v) {
  double d;
  memcpy(&d, &v, 8);
  return (float)d;
}

typedef struct dict_out {
  int kind;
  uint8_t *dst;          /* the first output row */
  const uint64_t *raw;   /* fixed-width entries, as slots */
  const uint8_t *views;  /* DICT_VIEW: the entries' 16-byte views; DICT_BYTE: one byte each */
  int64_t n;             /* entries (DICT_INDEX: 2^32, no limit) */
} dict_out;

static void dict_emit(const dict_out *d, int64_t at, const uint32_t *ix, int64_t n) {
  switch (d->kind) {
    case DICT_U64: {
      uint64_t *O = (uint64_t *)(void *)d->dst + at;
      for (int64_t i = 0; i < n; i++) O[i] = d->raw[ix[i]];
      break;
    }
    case DICT_U32: {
      uint32_t *O = (uint32_t *)(void *)d->dst + at;
      for (int64_t i = 0; i < n; i++) O[i] = (uint32_t)d->raw[ix[i]];
      break;
    }
    case DICT_F32: {
      float *O = (float *)(void *)d->dst + at;
      for (int64_t i = 0; i < n; i++) O[i] = slot_f32(d->raw[ix[i]]);
      break;
    }
    case DICT_VIEW: {
      uint8_t *O = d->dst + 16 * at;
      for (int64_t i = 0; i < n; i++) memcpy(O + 16 * i, d->views + 16 * (size_t)ix[i], 16);
      break;
    }
    case DICT_BYTE: {
      uint8_t *O = d->dst + at;
      for (int64_t i = 0; i < n; i++) O[i] = d->views[ix[i]];
      break;
    }
    default:
      memcpy((uint32_t *)(void *)d->dst + at, ix, (size_t)n * sizeof *ix);
      break;
  }
}

static void dict_fill(const dict_out *d, int64_t at, uint32_t v, int64_t n) {
  switch (d->kind) {
    case DICT_U64: {
      uint64_t *O = (uint64_t *)(void *)d->dst + at, x = d->raw[v];
      for (int64_t i = 0; i < n; i++) O[i] = x;
      break;
    }
    case DICT_U32: {
      uint32_t *O = (uint32_t *)(void *)d->dst + at, x = (uint32_t)d->raw[v];
      for (int64_t i = 0; i < n; i++) O[i] = x;
      break;
    }
    case DICT_F32: {
      float *O = (float *)(void *)d->dst + at, x = slot_f32(d->raw[v]);
      for (int64_t i = 0; i < n; i++) O[i] = x;
      break;
    }
    case DICT_VIEW: {
      uint8_t *O = d->dst + 16 * at;
      for (int64_t i = 0; i < n; i++) memcpy(O + 16 * i, d->views + 16 * (size_t)v, 16);
      break;
    }
    case DICT_BYTE:
      memset(d->dst + at, d->views[v], (size_t)n);
      break;
    default: {
      uint32_t *O = (uint32_t *)(void *)d->dst + at;
      for (int64_t i = 0; i < n; i++) O[i] = v;
      break;
    }
  }
}

/* n values of bit width bw into d. Returns NULL on success, else what is wrong. */
static const char *dict_decode(const uint8_t *p, const uint8_t *end, int bw, int64_t n, const dict_out *d) {
  if (bw < 0 || bw > 32) return "bad dictionary indices (RLE/bit-packed data)";
  uint32_t tmp[256];
  int64_t i = 0;
  int vbytes = (bw + 7) / 8;
  while (i < n) {
    uint64_t h;
    if (!ladle_uvarint(&p, end, &h)) return "bad dictionary indices (RLE/bit-packed data)";
    if (h & 1) {
      uint64_t groups = h >> 1;
      if (groups == 0 || groups > (uint64_t)(end - p) + 1) return "bad dictionary indices (RLE/bit-packed data)";
      int64_t bytes = LADLE_MIN((int64_t)groups * bw, end - p); /* a final run may be truncated */
      int64_t count = LADLE_MIN((int64_t)groups * 8, n - i);
      if ((count * bw + 7) / 8 > bytes) return "bad dictionary indices (RLE/bit-packed data)";
      if (bw == 0) {
        if (d->n < 1) return "dictionary index out of range";
        dict_fill(d, i, 0, count);
        i += count;
      } else {
        uint64_t mask = (1ULL << bw) - 1;
        for (int64_t k0 = 0; k0 < count; k0 += 256) {
          int64_t m = LADLE_MIN(count - k0, 256), bit0 = k0 * bw; /* k0 is a multiple of 8: whole bytes */
          const uint8_t *q = p + (bit0 >> 3);
          int64_t qbytes = bytes - (bit0 >> 3);
          int64_t k = unpack_groups(q, qbytes, bw, m, tmp);
          for (; k < m && (k * bw >> 3) + 8 <= qbytes; k++) {
            uint64_t w;
            memcpy(&w, q + (k * bw >> 3), 8);
            tmp[k] = (uint32_t)((w >> ((k * bw) & 7)) & mask);
          }
          for (; k < m; k++) tmp[k] = (uint32_t)read_bits(q, k * bw, bw);
          uint32_t top = 0;
          for (int64_t j = 0; j < m; j++) top = tmp[j] > top ? tmp[j] : top;
          if ((int64_t)top >= d->n) return "dictionary index out of range";
          dict_emit(d, i + k0, tmp, m);
        }
        i += count;
      }
      p += bytes;
    } else {
      uint64_t count = h >> 1;
      if (vbytes > end - p) return "bad dictionary indices (RLE/bit-packed data)";
      uint32_t v = 0;
      for (int k = 0; k < vbytes; k++) v |= (uint32_t)p[k] << (8 * k);
      p += vbytes;
      if ((bw < 32 && (v >> bw) != 0) || count == 0) return "bad dictionary indices (RLE/bit-packed data)";
      if ((int64_t)v >= d->n) return "dictionary index out of range";
      int64_t take = (int64_t)LADLE_MIN(count, (uint64_t)(n - i));
      dict_fill(d, i, v, take);
      i += take;
    }
  }
  return NULL;
}

/* n values of bw bits into out. */
static bool rle_hybrid(const uint8_t *p, const uint8_t *end, int bw, int64_t n, uint32_t *out) {
  dict_out d = {DICT_INDEX, (uint8_t *)out, NULL, NULL, (int64_t)1 << 32};
  return dict_decode(p, end, bw, n, &d) == NULL;
}

/* Of a page's n dictionary indices (bit width bw; every row a value), those
 * at rows sel[a..b) - row0 into ix[0..b-a), each checked against the
 * dictionary's dn entries: only the runs up to the last of those rows are
 * walked, and of a bit-packed run only their bits are read, for a selection
 * that keeps few rows of the page. NULL, or what is wrong. */
static const char *dict_pick(const uint8_t *p, const uint8_t *end, int bw, int64_t n,
                             const int64_t *sel, int64_t a, int64_t b, int64_t row0, int64_t dn,
                             uint32_t *ix) {
  static const char *bad = "bad dictionary indices (RLE/bit-packed data)";
  if (bw < 0 || bw > 32) return bad;
  int vbytes = (bw + 7) / 8;
  int64_t i = 0, k = a;
  while (i < n && k < b) {
    uint64_t h;
    if (!ladle_uvarint(&p, end, &h)) return bad;
    if (h & 1) {
      uint64_t groups = h >> 1;
      if (groups == 0 || groups > (uint64_t)(end - p) + 1) return bad;
      int64_t bytes = LADLE_MIN((int64_t)groups * bw, end - p); /* a final run may be truncated */
      int64_t count = LADLE_MIN((int64_t)groups * 8, n - i);
      if ((count * bw + 7) / 8 > bytes) return bad;
      for (; k < b && sel[k] - row0 < i + count; k++) {
        uint32_t v = bw == 0 ? 0 : (uint32_t)read_bits(p, (sel[k] - row0 - i) * bw, bw);
        if ((int64_t)v >= dn) return "dictionary index out of range";
        ix[k - a] = v;
      }
      i += count;
      p += bytes;
    } else {
      uint64_t count = h >> 1;
      if (vbytes > end - p) return bad;
      uint32_t v = 0;
      for (int j = 0; j < vbytes; j++) v |= (uint32_t)p[j] << (8 * j);
      p += vbytes;
      if ((bw < 32 && (v >> bw) != 0) || count == 0) return bad;
      int64_t take = (int64_t)LADLE_MIN(count, (uint64_t)(n - i));
      for (; k < b && sel[k] - row0 < i + take; k++) {
        if ((int64_t)v >= dn) return "dictionary index out of range";
        ix[k - a] = v;
      }
      i += take;
    }
  }
  return k < b ? bad : NULL;
}

/* Whether the first n levels of an RLE/bit-packed hybrid stream are all v,
 * as RLE runs (a column declared optional that holds no null: the levels of a
 * page are one run of the maximum), read without decoding them. */
static bool rle_all_equal(const uint8_t *p, const uint8_t *end, int bw, int64_t n, uint32_t v) {
  if (bw <= 0 || bw > 32) return false;
  int vbytes = (bw + 7) / 8;
  int64_t i = 0;
  while (i < n) {
    uint64_t h;
    if (!ladle_uvarint(&p, end, &h) || (h & 1) != 0 || (h >> 1) == 0 || vbytes > end - p)
      return false;
    uint32_t x = 0;
    for (int k = 0; k < vbytes; k++) x |= (uint32_t)p[k] << (8 * k);
    if (x != v) return false;
    p += vbytes;
    i += (int64_t)LADLE_MIN(h >> 1, (uint64_t)INT64_MAX / 2);
  }
  return true;
}

/* -------------------------------------------------------- physical values */

typedef struct pvals {
  int64_t n;
  const uint8_t *end;     /* byte arrays: the end of the buffer their bytes are in */
  uint64_t *raw;          /* fixed width: one slot per value */
  const uint8_t **ptr;    /* byte arrays */
  int32_t *len;
  uint8_t *owned;         /* bytes DELTA_BYTE_ARRAY had to build */
  int64_t owned_len;
} pvals;

static void pvals_free(pvals *v) {
  free(v->raw);
  free(v->ptr);
  free(v->len);
  free(v->owned);
  memset(v, 0, sizeof *v);
}

/* Values kept as (pointer, length): byte arrays, and fixed-length byte arrays
 * other than FLOAT16 (binary and DECIMAL). */
static bool is_bytes(const ladle_pq_column *col) {
  return col->physical == LADLE_PQ_BYTE_ARRAY ||
         (col->physical == LADLE_PQ_FIXED_LEN_BYTE_ARRAY && col->type.id != LADLE_TYPE_FLOAT32);
}

static ladle_status pvals_alloc(const ctx *c, pvals *v, int64_t n) {
  memset(v, 0, sizeof *v);
  v->n = n;
  if (is_bytes(c->col)) {
    v->ptr = malloc((size_t)LADLE_MAX(n, 1) * sizeof *v->ptr);
    v->len = malloc((size_t)LADLE_MAX(n, 1) * sizeof *v->len);
    if (v->ptr == NULL || v->len == NULL) {
      pvals_free(v);
      return LADLE_OOM(c->err, "parquet values");
    }
  } else {
    v->raw = malloc((size_t)LADLE_MAX(n, 1) * sizeof *v->raw);
    if (v->raw == NULL) return LADLE_OOM(c->err, "parquet values");
  }
  return LADLE_OK;
}

/* The strings of one page or dictionary (`what` names an entry for the
 * message) are valid UTF-8, for a String column. They lie in order in one
 * buffer, so the span from the first to the end of the last is checked for
 * ASCII at once (PLAIN length prefixes below 128 are ASCII too); only when
 * that finds another byte, string by string. */
static ladle_status check_utf8(const ctx *c, const pvals *v, const char *what) {
  if (!utf8_col(c->col) || v->n == 0) return LADLE_OK;
  const uint8_t *lo = v->ptr[0], *hi = v->ptr[v->n - 1] + v->len[v->n - 1];
  if (hi >= lo && ladle_ascii_prefix(lo, hi - lo) == hi - lo) return LADLE_OK;
  for (int64_t i = 0; i < v->n; i++)
    if (ladle_utf8_check(v->ptr[i], v->len[i]) >= 0) return bad_utf8(c, what, i);
  return LADLE_OK;
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal */
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        exp--;
      }
      man &= 0x3ff;
      bits = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* One fixed-width value from w little-endian bytes, into its 8-byte slot. */
static uint64_t fixed_slot(int physical, const uint8_t *p) {
  switch (physical) {
    case LADLE_PQ_INT32: {
      int32_t v;
      memcpy(&v, p, 4);
      return (uint64_t)(int64_t)v;
    }
    case LADLE_PQ_INT64: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v;
    }
    case LADLE_PQ_FLOAT: {
      float f;
      memcpy(&f, p, 4);
      double d = f;
      uint64_t v;
      memcpy(&v, &d, 8);
      return v;
    }
    case LADLE_PQ_DOUBLE: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v;
    }
    case LADLE_PQ_INT96: {
      /* nanoseconds of the day (signed), then the Julian day (unsigned), as
       * Polars reads them: (day - the epoch's) x ns per day + nanoseconds,
       * and INT64_MAX (2262-04-11 23:47:16.854775807) when either step
       * overflows, before 1677 too (Polars saturates every overflow to the
       * maximum; Spark writes such dates) */
      int64_t nanos, r;
      uint32_t jd;
      memcpy(&nanos, p, 8);
      memcpy(&jd, p + 8, 4);
      if (__builtin_mul_overflow((int64_t)jd - 2440588, (int64_t)86400000000000, &r) ||
          __builtin_add_overflow(r, nanos, &r))
        r = INT64_MAX;
      return (uint64_t)r;
    }
    case LADLE_PQ_FIXED_LEN_BYTE_ARRAY: { /* FLOAT16 */
      uint16_t h = (uint16_t)(p[0] | p[1] << 8);
      double d = half_to_float(h);
      uint64_t v;
      memcpy(&v, &d, 8);
      return v;
    }
    default: return 0;
  }
}

static int fixed_width(const ladle_pq_column *col) {
  switch (col->physical) {
    case LADLE_PQ_INT32:
    case LADLE_PQ_FLOAT: return 4;
    case LADLE_PQ_INT64:
    case LADLE_PQ_DOUBLE: return 8;
    case LADLE_PQ_INT96: return 12;
    case LADLE_PQ_FIXED_LEN_BYTE_ARRAY: return col->type_length;
    default: return 0;
  }
}

/* The next PLAIN byte array at *p: its length into *len and *p moved to its
 * bytes; NULL, or what is wrong. */
static inline const char *plain_next(const uint8_t **p, const uint8_t *end, uint32_t *len) {
  if (end - *p < 4) return "PLAIN byte array length runs past the page";
  memcpy(len, *p, 4);
  *p += 4;
  return (int64_t)*len > end - *p ? "PLAIN byte array runs past the page" : NULL;
}

static ladle_status decode_plain(const ctx *c, const uint8_t *p, const uint8_t *end, pvals *v) {
  int64_t n = v->n;
  v->end = end;
  int phys = c->col->physical;
  if (phys == LADLE_PQ_BOOLEAN) {
    if ((n + 7) / 8 > end - p) return corrupt(c, "PLAIN booleans run past the page");
    for (int64_t i = 0; i < n; i++) v->raw[i] = (p[i >> 3] >> (i & 7)) & 1;
    return LADLE_OK;
  }
  if (phys == LADLE_PQ_BYTE_ARRAY) {
    for (int64_t i = 0; i < n; i++) {
      uint32_t len;
      const char *bad = plain_next(&p, end, &len);
      if (bad != NULL) return corrupt(c, bad);
      v->ptr[i] = p;
      v->len[i] = (int32_t)len;
      p += len;
    }
    return LADLE_OK;
  }
  int w = fixed_width(c->col);
  if (phys == LADLE_PQ_FIXED_LEN_BYTE_ARRAY && is_bytes(c->col)) {
    if (w < 0 || (int64_t)w * n > end - p) return corrupt(c, "PLAIN values run past the page");
    for (int64_t i = 0; i < n; i++) {
      v->ptr[i] = p + (int64_t)i * w;
      v->len[i] = w;
    }
    return LADLE_OK;
  }
  if (w <= 0 || (int64_t)w * n > end - p) return corrupt(c, "PLAIN values run past the page");
  /* the common types a loop of their own (a dictionary page's entries, a
   * page that is not the output's bytes), the rest value by value */
  switch (phys) {
    case LADLE_PQ_INT64:
    case LADLE_PQ_DOUBLE:
      memcpy(v->raw, p, (size_t)n * 8);
      break;
    case LADLE_PQ_INT32:
      for (int64_t i = 0; i < n; i++) {
        int32_t x;
        memcpy(&x, p + 4 * i, 4);
        v->raw[i] = (uint64_t)(int64_t)x;
      }
      break;
    default:
      for (int64_t i = 0; i < n; i++) v->raw[i] = fixed_slot(phys, p + (int64_t)i * w);
  }
  return LADLE_OK;
}

/* BYTE_STREAM_SPLIT: the page's values are its non-null values, byte k of
 * value i at k * n + i, so the stride n is both the count of values and the
 * data's size over the width; a page whose size says another stride is
 * refused rather than read with one of the two. */
static ladle_status bss_size(const ctx *c, int w, int64_t n, int64_t have) {
  char msg[160];
  snprintf(msg, sizeof msg,
           "BYTE_STREAM_SPLIT data of %lld bytes does not hold %lld values of %d bytes",
           (long long)have, (long long)n, w);
  return corrupt(c, msg);
}

static ladle_status decode_byte_stream_split(const ctx *c, const uint8_t *p, const uint8_t *end, pvals *v) {
  int w = fixed_width(c->col);
  int64_t n = v->n;
  if (is_bytes(c->col)) {
    /* fixed-length byte arrays (DECIMAL, binary): byte k of value i is at
     * k * n + i; the values are put back together in a buffer of their own */
    if (w <= 0 || (int64_t)w * n != end - p) return bss_size(c, w, n, end - p);
    v->owned = malloc((size_t)LADLE_MAX((int64_t)w * n, 1));
    if (v->owned == NULL) return LADLE_OOM(c->err, "parquet values");
    v->owned_len = (int64_t)w * n;
    for (int k = 0; k < w; k++) {
      const uint8_t *src = p + (int64_t)k * n;
      for (int64_t i = 0; i < n; i++) v->owned[i * w + k] = src[i];
    }
    for (int64_t i = 0; i < n; i++) {
      v->ptr[i] = v->owned + i * w;
      v->len[i] = w;
    }
    v->end = v->owned + v->owned_len;
    return LADLE_OK;
  }
  if (w <= 0 || w > 16 || (int64_t)w * n != end - p) return bss_size(c, w, n, end - p);
  uint8_t tmp[16];
  for (int64_t i = 0; i < n; i++) {
    for (int k = 0; k < w; k++) tmp[k] = p[(int64_t)k * n + i];
    v->raw[i] = fixed_slot(c->col->physical, tmp);
  }
  return LADLE_OK;
}

/* DELTA_BINARY_PACKED: n values (<= max) into out; *pp advances past the data. */
static ladle_status delta_binary(const ctx *c, const uint8_t **pp, const uint8_t *end, int64_t max,
                                 int64_t *out_n, uint64_t *out) {
  const uint8_t *p = *pp;
  uint64_t block, minis, total, zz;
  if (!ladle_uvarint(&p, end, &block) || !ladle_uvarint(&p, end, &minis) ||
      !ladle_uvarint(&p, end, &total) || !ladle_uvarint(&p, end, &zz))
    return corrupt(c, "truncated DELTA_BINARY_PACKED header");
  if (block == 0 || block % 128 != 0 || minis == 0 || block % minis != 0 || (block / minis) % 32 != 0 ||
      block > (1u << 20))
    return corrupt(c, "DELTA_BINARY_PACKED block sizes are invalid");
  if ((int64_t)total > max || total > (uint64_t)INT64_MAX) return corrupt(c, "DELTA_BINARY_PACKED has more values than the page");
  uint64_t per_mini = block / minis;
  int64_t i = 0;
  uint64_t prev = (zz >> 1) ^ (0 - (zz & 1));
  if (total > 0) out[i++] = prev;
  uint8_t widths[1024];
  if (minis > sizeof widths) return corrupt(c, "DELTA_BINARY_PACKED has too many miniblocks");
  while ((uint64_t)i < total) {
    uint64_t mzz;
    if (!ladle_uvarint(&p, end, &mzz)) return corrupt(c, "truncated DELTA_BINARY_PACKED block");
    uint64_t min_delta = (mzz >> 1) ^ (0 - (mzz & 1));
    if ((int64_t)minis > end - p) return corrupt(c, "truncated DELTA_BINARY_PACKED bit widths");
    memcpy(widths, p, minis);
    p += minis;
    for (uint64_t m = 0; m < minis && (uint64_t)i < total; m++) {
      int bw = widths[m];
      if (bw > 64) return corrupt(c, "DELTA_BINARY_PACKED bit width over 64");
      int64_t bytes = (int64_t)(per_mini * (uint64_t)bw / 8);
      if (bytes > end - p) {
        /* the last miniblock may be cut to the bytes its values need */
        int64_t need = (int64_t)(((total - (uint64_t)i) * (uint64_t)bw + 7) / 8);
        if (need > end - p) return corrupt(c, "truncated DELTA_BINARY_PACKED miniblock");
        bytes = end - p;
      }
      for (uint64_t k = 0; k < per_mini && (uint64_t)i < total; k++) {
        uint64_t d = bw == 0 ? 0 : read_bits(p, (int64_t)(k * (uint64_t)bw), bw);
        prev = prev + min_delta + d; /* wraps, as the spec says */
        out[i++] = prev;
      }
      p += bytes;
    }
  }
  *pp = p;
  *out_n = (int64_t)total;
  return LADLE_OK;
}

static ladle_status decode_delta_binary(const ctx *c, const uint8_t *p, const uint8_t *end, pvals *v) {
  int64_t got;
  LADLE_RETURN_NOT_OK(delta_binary(c, &p, end, v->n, &got, v->raw));
  if (got != v->n) return corrupt(c, "DELTA_BINARY_PACKED holds fewer values than the page");
  if (c->col->physical == LADLE_PQ_INT32)
    for (int64_t i = 0; i < v->n; i++) v->raw[i] = (uint64_t)(int64_t)(int32_t)(uint32_t)v->raw[i];
  return LADLE_OK;
}

static ladle_status decode_delta_length(const ctx *c, const uint8_t *p, const uint8_t *end, pvals *v) {
  v->end = end;
  uint64_t *lens = malloc((size_t)LADLE_MAX(v->n, 1) * 8);
  if (lens == NULL) return LADLE_OOM(c->err, "parquet lengths");
  int64_t got;
  ladle_status st = delta_binary(c, &p, end, v->n, &got, lens);
  if (st == LADLE_OK && got != v->n) st = corrupt(c, "DELTA_LENGTH_BYTE_ARRAY holds fewer lengths than values");
  for (int64_t i = 0; st == LADLE_OK && i < v->n; i++) {
    if ((int64_t)lens[i] < 0 || (int64_t)lens[i] > end - p) {
      st = corrupt(c, "DELTA_LENGTH_BYTE_ARRAY value runs past the page");
      break;
    }
    v->ptr[i] = p;
    v->len[i] = (int32_t)lens[i];
    p += lens[i];
  }
  free(lens);
  return st;
}

static ladle_status decode_delta_byte_array(const ctx *c, const uint8_t *p, const uint8_t *end, pvals *v) {
  int64_t n = v->n;
  uint64_t *pre = malloc((size_t)LADLE_MAX(n, 1) * 8), *suf = malloc((size_t)LADLE_MAX(n, 1) * 8);
  ladle_status st = pre && suf ? LADLE_OK : LADLE_OOM(c->err, "parquet lengths");
  int64_t g1 = 0, g2 = 0;
  if (st == LADLE_OK) st = delta_binary(c, &p, end, n, &g1, pre);
  if (st == LADLE_OK) st = delta_binary(c, &p, end, n, &g2, suf);
  if (st == LADLE_OK && (g1 != n || g2 != n)) st = corrupt(c, "DELTA_BYTE_ARRAY holds fewer lengths than values");
  /* the suffixes lie one after another from p: their running sum (not each
   * alone) must stay inside the page */
  int64_t total = 0, suffixes = 0;
  for (int64_t i = 0; st == LADLE_OK && i < n; i++) {
    int64_t prevlen = i > 0 ? (int64_t)(pre[i - 1] + suf[i - 1]) : 0; /* both checked below */
    if ((int64_t)suf[i] < 0 || (int64_t)suf[i] > end - p - suffixes) {
      st = corrupt(c, "DELTA_BYTE_ARRAY suffix runs past the page");
    } else if (pre[i] > (uint64_t)prevlen) {
      st = corrupt(c, "DELTA_BYTE_ARRAY prefix longer than the previous value");
    } else {
      suffixes += (int64_t)suf[i];
      total += (int64_t)(pre[i] + suf[i]);
      if (total > (int64_t)1 << 31) st = corrupt(c, "DELTA_BYTE_ARRAY values are too large");
    }
  }
  if (st == LADLE_OK && (v->owned = malloc((size_t)LADLE_MAX(total, 1))) == NULL) st = LADLE_OOM(c->err, "parquet strings");
  int64_t pos = 0;
  const uint8_t *prev = NULL;
  for (int64_t i = 0; st == LADLE_OK && i < n; i++) {
    uint8_t *dst = v->owned + pos;
    if (pre[i] > 0) memcpy(dst, prev, pre[i]);
    memcpy(dst + pre[i], p, suf[i]);
    p += suf[i];
    v->ptr[i] = dst;
    v->len[i] = (int32_t)(pre[i] + suf[i]);
    prev = dst;
    pos += v->len[i];
  }
  free(pre);
  free(suf);
  return st;
}

/* ---------------------------------------------------------------- scatter */

typedef struct sink {
  ladle_column *out;
  uint8_t *chars;
  int64_t chars_len, chars_cap;
  int64_t row; /* next row to fill */
} sink;

/* Appends bytes; the buffer keeps 16 bytes of slack so that short strings are
 * copied with two fixed 8-byte moves instead of a library call. The source may
 * be read up to 16 bytes past its end only when those bytes are still inside the
 * page buffer, which `src_end` bounds. */
/* Room for `need` bytes in the sink's bytes (doubling, so appends stay
 * linear); false when out of memory. */
static inline bool sink_reserve(sink *s, int64_t need) {
  if (need <= s->chars_cap) return true;
  int64_t cap = LADLE_MAX(s->chars_cap * 2, need + 4096);
  uint8_t *c = realloc(s->chars, (size_t)cap);
  if (c == NULL) return false;
  s->chars = c;
  s->chars_cap = cap;
  return true;
}

static inline bool sink_bytes(sink *s, const uint8_t *p, int32_t len, const uint8_t *src_end) {
  if (!sink_reserve(s, s->chars_len + len + 16)) return false;
  uint8_t *dst = s->chars + s->chars_len;
  if (len <= 16 && src_end != NULL && p + 16 <= src_end) {
    memcpy(dst, p, 8);
    memcpy(dst + 8, p + 8, 8);
  } else {
    memcpy(dst, p, (size_t)len);
  }
  s->chars_len += len;
  return true;
}

/* PLAIN strings of a page straight into offsets and bytes (no per-value
 * arrays): the page's size bounds its strings' bytes, so the bytes grow once. */
static ladle_status plain_strings(const ctx *c, sink *s, int64_t count, const uint8_t *present,
                                  const uint8_t *p, const uint8_t *end) {
  ladle_column *o = s->out;
  if (!sink_reserve(s, s->chars_len + (end - p) + 16)) return LADLE_OOM(c->err, "parquet strings");
  uint8_t *d = s->chars;
  int64_t pos = s->chars_len;
  int64_t *O = LADLE_COL_MUT(o, int64_t) + s->row + 1;
  for (int64_t r = 0; r < count; r++) {
    if (present != NULL && !present[r]) {
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), s->row + r, false);
      O[r] = pos;
      continue;
    }
    uint32_t len;
    const char *bad = plain_next(&p, end, &len);
    if (bad != NULL) return corrupt(c, bad);
    if (len <= 16 && end - p >= 16) { /* 16 spare bytes at the end of d */
      memcpy(d + pos, p, 8);
      memcpy(d + pos + 8, p + 8, 8);
    } else {
      memcpy(d + pos, p, len);
    }
    pos += len;
    O[r] = pos;
    p += len;
  }
  /* the page's strings, as they now lie in the output: checked at once */
  int64_t bad = utf8_col(c->col) ? ladle_utf8_check_strings(d, O - 1, count) : -1;
  if (bad >= 0) return bad_utf8(c, "row %lld of the page", bad);
  s->chars_len = pos;
  s->row += count;
  return LADLE_OK;
}

/* Whether every one of count dictionary indices is below n: one pass (a max),
 * before a page's values are gathered without a check per row. */
static bool dict_indices_ok(const uint32_t *idx, int64_t count, int64_t n) {
  uint32_t top = 0;
  for (int64_t r = 0; r < count; r++) top = idx[r] > top ? idx[r] : top;
  return count == 0 || top < n;
}

/* Fills `count` rows of a fixed-width output from slots, one type switch per
 * page rather than per row. */
#define SCATTER_LOOP(T, CONV)                                                    \
  do {                                                                           \
    T *O = LADLE_COL_MUT(o, T) + s->row; /* (a local: stores to O cannot     \
                                               move s->row) */                  \
    if (present == NULL && idx != NULL) {                                        \
      /* every row a value through the dictionary: the indices checked in one  \
       * pass, then a plain gather */                                            \
      if (!dict_indices_ok(idx, count, src->n))                                  \
        return corrupt(c, "dictionary index out of range");                      \
      const uint64_t *D = src->raw;                                              \
      for (int64_t r = 0; r < count; r++) {                                      \
        uint64_t v = D[idx[r]];                                                  \
        O[r] = CONV;                                                             \
      }                                                                          \
      break;                                                                     \
    }                                                                            \
    O -= s->row;                                                                 \
    for (int64_t r = 0; r < count; r++) {                                        \
      int64_t row = s->row + r;                                                  \
      if (present != NULL && !present[r]) {                                      \
        O[row] = 0;                                                              \
        ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), row, false);                    \
        continue;                                                                \
      }                                                                          \
      int64_t j = k++;                                                           \
      if (idx != NULL) {                                                         \
        j = idx[j];                                                              \
        if (j >= src->n) return corrupt(c, "dictionary index out of range");     \
      }                                                                          \
      uint64_t v = src->raw[j];                                                  \
      O[row] = CONV;                                                             \
    }                                                                            \
  } while (0)

/* DECIMAL rows as little-endian int128: from INT32/INT64 slots (sign-extended)
 * or from big-endian two's-complement bytes (FIXED_LEN_BYTE_ARRAY, BYTE_ARRAY). */
static ladle_status scatter_decimal(const ctx *c, sink *s, int64_t count, const uint8_t *present,
                                    const pvals *src, const uint32_t *idx) {
  ladle_column *o = s->out;
  char *O = LADLE_COL_MUT(o, char);
  bool bytes = is_bytes(c->col);
  int64_t k = 0;
  for (int64_t r = 0; r < count; r++) {
    int64_t row = s->row + r;
    __int128 x = 0;
    if (present != NULL && !present[r]) {
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), row, false);
    } else {
      int64_t j = k++;
      if (idx != NULL) {
        j = idx[j];
        if (j >= src->n) return corrupt(c, "dictionary index out of range");
      }
      if (!bytes) {
        x = (__int128)(int64_t)src->raw[j];
      } else {
        const uint8_t *p = src->ptr[j];
        int32_t len = src->len[j];
        if (len > 16) return corrupt(c, "DECIMAL value longer than 16 bytes");
        unsigned __int128 u = len > 0 && (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
        for (int32_t b = 0; b < len; b++) u = (u << 8) | p[b];
        x = (__int128)u;
      }
    }
    memcpy(O + 16 * row, &x, 16);
  }
  s->row += count;
  return LADLE_OK;
}

/* Strings of a page whose every row has a value, through the dictionary: the
 * indices checked and the bytes counted first, so the output grows once and
 * each string up to 64 bytes goes as two fixed 16- or 32-byte moves (the
 * dictionary has 64 readable bytes past its end, the output 64 spare). */
static ladle_status scatter_dict_strings(const ctx *c, sink *s, int64_t count, const pvals *src,
                                         const uint32_t *idx) {
  int64_t total = 0;
  if (!dict_indices_ok(idx, count, src->n)) return corrupt(c, "dictionary index out of range");
  for (int64_t r = 0; r < count; r++) total += src->len[idx[r]];
  if (!sink_reserve(s, s->chars_len + total + 64)) return LADLE_OOM(c->err, "parquet strings");
  uint8_t *d = s->chars;
  int64_t pos = s->chars_len;
  int64_t *o = LADLE_COL_MUT(s->out, int64_t) + s->row + 1;
  for (int64_t r = 0; r < count; r++) {
    const uint8_t *p = src->ptr[idx[r]];
    int32_t len = src->len[idx[r]];
    if (len <= 32 && p + 32 <= src->end) {
      memcpy(d + pos, p, 16);
      memcpy(d + pos + 16, p + 16, 16);
    } else if (len <= 64 && p + 64 <= src->end) {
      memcpy(d + pos, p, 32);
      memcpy(d + pos + 32, p + 32, 32);
    } else {
      memcpy(d + pos, p, (size_t)len);
    }
    pos += len;
    o[r] = pos;
  }
  s->chars_len = pos;
  s->row += count;
  return LADLE_OK;
}

/* Fills `count` rows: present[k] says whether row k has a value; values come from
 * vals in order, through dict indices when idx != NULL. */
static ladle_status scatter(const ctx *c, sink *s, int64_t count, const uint8_t *present,
                            const pvals *vals, const uint32_t *idx, const pvals *dict) {
  ladle_column *o = s->out;
  const pvals *src = idx != NULL ? dict : vals;
  if (idx != NULL && dict == NULL) return corrupt(c, "dictionary-encoded page without a dictionary");
  int64_t k = 0;
  if (o->type.id == LADLE_TYPE_DECIMAL) return scatter_decimal(c, s, count, present, src, idx);
  if (o->type.id == LADLE_TYPE_TIME && c->col->time_mul != 1) {
    uint64_t mul = (uint64_t)c->col->time_mul;
    SCATTER_LOOP(uint64_t, v * mul);
    s->row += count;
    return LADLE_OK;
  }
  if (!ladle_type_is_varlen(o->type.id)) {
    switch (ladle_type_width(o->type.id)) {
      case 1: SCATTER_LOOP(uint8_t, (uint8_t)v); break;
      case 2: SCATTER_LOOP(uint16_t, (uint16_t)v); break;
      case 4:
        if (o->type.id == LADLE_TYPE_FLOAT32) SCATTER_LOOP(float, slot_f32(v));
        else SCATTER_LOOP(uint32_t, (uint32_t)v);
        break;
      default: SCATTER_LOOP(uint64_t, v); break;
    }
    s->row += count;
    return LADLE_OK;
  }
  if (present == NULL && idx != NULL && src->end != NULL)
    return scatter_dict_strings(c, s, count, src, idx);
  for (int64_t r = 0; r < count; r++, s->row++) {
    if (present != NULL && !present[r]) {
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), s->row, false);
      LADLE_COL_MUT(o, int64_t)[s->row + 1] = s->chars_len;
      continue;
    }
    int64_t j = k++;
    if (idx != NULL) {
      j = idx[j];
      if (j >= src->n) return corrupt(c, "dictionary index out of range");
    }
    if (!sink_bytes(s, src->ptr[j], src->len[j], src->end)) return LADLE_OOM(c->err, "parquet strings");
    LADLE_COL_MUT(o, int64_t)[s->row + 1] = s->chars_len;
  }
  return LADLE_OK;
}

/* ------------------------------------------------------ strings as views */

/* A chunk's strings as views: dictionary strings point into the dictionary
 * (buffer 0, kept whole), other long strings are copied into the sink's bytes
 * (buffer 1); `dviews` are the dictionary entries' views, made once. */
typedef struct vsink {
  uint8_t *views;
  uint8_t *dviews;
  const uint8_t *dict_base;
} vsink;

/* The dictionary entries' views, made once per chunk. */
static ladle_status dict_views(const ctx *c, vsink *vs, const pvals *dict) {
  if (vs->dviews != NULL) return LADLE_OK;
  vs->dviews = malloc((size_t)LADLE_MAX(dict->n, 1) * 16);
  if (vs->dviews == NULL) return LADLE_OOM(c->err, "parquet string views");
  for (int64_t e = 0; e < dict->n; e++)
    ladle_view_make(vs->dviews + 16 * e, dict->ptr[e], dict->len[e], 0, (int32_t)(dict->ptr[e] - vs->dict_base));
  return LADLE_OK;
}

static ladle_status scatter_views(const ctx *c, sink *s, vsink *vs, int64_t count, const uint8_t *present,
                                  const pvals *vals, const uint32_t *idx, const pvals *dict) {
  const pvals *src = idx != NULL ? dict : vals;
  if (idx != NULL && dict == NULL) return corrupt(c, "dictionary-encoded page without a dictionary");
  if (idx != NULL) LADLE_RETURN_NOT_OK(dict_views(c, vs, dict));
  uint8_t *V = vs->views + 16 * s->row;
  if (present == NULL && idx != NULL) {
    if (!dict_indices_ok(idx, count, src->n)) return corrupt(c, "dictionary index out of range");
    for (int64_t r = 0; r < count; r++) memcpy(V + 16 * r, vs->dviews + 16 * idx[r], 16);
    s->row += count;
    return LADLE_OK;
  }
  int64_t k = 0;
  for (int64_t r = 0; r < count; r++) {
    if (present != NULL && !present[r]) {
      memset(V + 16 * r, 0, 16);
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(s->out), s->row + r, false);
      continue;
    }
    int64_t j = k++;
    if (idx != NULL) {
      j = idx[j];
      if (j >= src->n) return corrupt(c, "dictionary index out of range");
      memcpy(V + 16 * r, vs->dviews + 16 * j, 16);
      continue;
    }
    int32_t len = src->len[j];
    int64_t off = s->chars_len;
    if (len > 12) {
      if (off > INT32_MAX - len) return LADLE_ENOTSUP; /* past a view's offset: read as offsets */
      if (!sink_bytes(s, src->ptr[j], len, src->end)) return LADLE_OOM(c->err, "parquet strings");
    }
    ladle_view_make(V + 16 * r, src->ptr[j], len, 1, (int32_t)off);
  }
  s->row += count;
  return LADLE_OK;
}

/* Decompressed pages of PLAIN strings that views point into, kept whole
 * instead of copying their long strings out (view buffers 2, 3, ...). */
typedef struct kept_pages {
  uint8_t **buf;
  int64_t *len;
  size_t n, cap;
} kept_pages;

static bool kept_pages_push(kept_pages *k, uint8_t *buf, int64_t len) {
  if (k->n == k->cap) {
    size_t cap = k->cap ? 2 * k->cap : 8;
    uint8_t **b = realloc(k->buf, cap * sizeof *b);
    if (b == NULL) return false;
    k->buf = b;
    int64_t *l = realloc(k->len, cap * sizeof *l);
    if (l == NULL) return false;
    k->len = l;
    k->cap = cap;
  }
  k->buf[k->n] = buf;
  k->len[k->n++] = len;
  return true;
}

static void kept_pages_free(kept_pages *k) {
  for (size_t i = 0; i < k->n; i++) free(k->buf[i]);
  free(k->buf);
  free(k->len);
  memset(k, 0, sizeof *k);
}

/* PLAIN strings of a decompressed page straight into views: long ones point into
 * the page itself (view buffer `buf`, offsets from `base`), whose long-string
 * bytes are added to *long_bytes; no copy and no per-value arrays. */
static ladle_status plain_views(const ctx *c, sink *s, vsink *vs, int64_t count, const uint8_t *present,
                                const uint8_t *base, const uint8_t *p, const uint8_t *end, int32_t buf,
                                int64_t *long_bytes) {
  uint8_t *V = vs->views + 16 * s->row;
  int64_t lb = 0;
  /* an all-ASCII page (length prefixes included) needs no check per string */
  bool check = utf8_col(c->col) && ladle_ascii_prefix(p, end - p) != end - p;
  for (int64_t r = 0; r < count; r++) {
    if (present != NULL && !present[r]) {
      memset(V + 16 * r, 0, 16);
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(s->out), s->row + r, false);
      continue;
    }
    uint32_t len;
    const char *bad = plain_next(&p, end, &len);
    if (bad != NULL) return corrupt(c, bad);
    if (check && ladle_utf8_check(p, len) >= 0) return bad_utf8(c, "row %lld of the page", r);
    uint8_t *v = V + 16 * r;
    if (len <= 12) {
      /* the 16 bytes from p - 4 are the length and up to 12 inline bytes when
       * they are inside the page; the tail past len is zeroed */
      if (end - p >= 12) {
        uint64_t a, b;
        memcpy(&a, p - 4, 8);
        memcpy(&b, p + 4, 8);
        int tail = 12 - (int)len; /* bytes of b past the string */
        if (tail >= 8) {
          a &= len >= 4 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * (4 + len))) - 1;
          b = 0;
        } else {
          b &= tail == 0 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * (8 - tail))) - 1;
        }
        memcpy(v, &a, 8);
        memcpy(v + 8, &b, 8);
      } else {
        ladle_view_make(v, p, (int32_t)len, 0, 0);
      }
    } else {
      memcpy(v, &len, 4);
      memcpy(v + 4, p, 4);
      int32_t off = (int32_t)(p - base);
      memcpy(v + 8, &buf, 4);
      memcpy(v + 12, &off, 4);
      lb += len;
    }
    p += len;
  }
  s->row += count;
  *long_bytes += lb;
  return LADLE_OK;
}

/* Views [row, row + count) that point into buffer `buf` move their bytes into
 * the sink's copied bytes (buffer 1): for a page whose long strings are too
 * few to be worth keeping the page for. */
static ladle_status views_to_sink(const ctx *c, sink *s, uint8_t *views, int64_t row, int64_t count,
                                  const uint8_t *base, const uint8_t *end, int32_t buf) {
  for (int64_t r = row; r < row + count; r++) {
    uint8_t *v = views + 16 * r;
    int32_t len, b, off;
    memcpy(&len, v, 4);
    if (len <= 12) continue;
    memcpy(&b, v + 8, 4);
    if (b != buf) continue;
    memcpy(&off, v + 12, 4);
    int64_t at = s->chars_len;
    if (at > INT32_MAX - len) return LADLE_ENOTSUP; /* past a view's offset: read as offsets */
    if (!sink_bytes(s, base + off, len, end)) return LADLE_OOM(c->err, "parquet strings");
    int32_t one = 1, o32 = (int32_t)at;
    memcpy(v + 8, &one, 4);
    memcpy(v + 12, &o32, 4);
  }
  return LADLE_OK;
}

/* What a chunk read as views keeps: the dictionary (buffer 0), the copied
 * bytes (1) and the kept pages (2, ...). */
typedef struct held_bytes {
  ladle_viewbufs vb;
  const char **data;
  int64_t *sizes;
  uint8_t *dict, *chars;
  kept_pages pages;
} held_bytes;

static void held_bytes_free(void *owner) {
  held_bytes *h = owner;
  free(h->data);
  free(h->sizes);
  free(h->dict);
  free(h->chars);
  kept_pages_free(&h->pages);
  free(h);
}

/* PLAIN pages of a column without nulls whose bytes already are the output
 * layout (int32/date, int64/timestamp, float, double) are copied directly. */
static bool plain_copies_directly(const ladle_pq_column *pc) {
  ladle_type_id t = pc->type.id;
  switch (pc->physical) {
    case LADLE_PQ_INT32: return t == LADLE_TYPE_INT32 || t == LADLE_TYPE_DATE || t == LADLE_TYPE_UINT32;
    case LADLE_PQ_INT64:
      return t == LADLE_TYPE_INT64 || t == LADLE_TYPE_UINT64 || t == LADLE_TYPE_DATETIME ||
             t == LADLE_TYPE_DURATION;
    case LADLE_PQ_FLOAT: return t == LADLE_TYPE_FLOAT32;
    case LADLE_PQ_DOUBLE: return t == LADLE_TYPE_FLOAT64;
    default: return false;
  }
}

/* ------------------------------------------------------------------ pages */

typedef struct page_header {
  int type;
  int64_t uncompressed, compressed;
  bool has_crc;
  uint32_t crc;
  int64_t num_values, num_nulls, num_rows;
  int encoding;
  int64_t def_len, rep_len;
  bool v2_compressed;
  int header_field; /* which of the type-specific headers came (5, 7, 8; 0: none) */
} page_header;

static void read_data_header(ladle_thrift *t, page_header *h, bool v2) {
  int16_t last = 0, id;
  int ft;
  while (ladle_thrift_field(t, &last, &id, &ft)) {
    if (id == 1) h->num_values = ladle_thrift_int(t);
    else if (!v2 && id == 2) h->encoding = (int)ladle_thrift_int(t);
    else if (v2 && id == 2) h->num_nulls = ladle_thrift_int(t);
    else if (v2 && id == 3) h->num_rows = ladle_thrift_int(t);
    else if (v2 && id == 4) h->encoding = (int)ladle_thrift_int(t);
    else if (v2 && id == 5) h->def_len = ladle_thrift_int(t);
    else if (v2 && id == 6) h->rep_len = ladle_thrift_int(t);
    else if (v2 && id == 7) h->v2_compressed = ladle_thrift_bool(t, ft);
    else ladle_thrift_skip(t, ft);
  }
}

static ladle_status read_page_header(const ctx *c, const uint8_t **pp, const uint8_t *end, page_header *h) {
  char what[600];
  snprintf(what, sizeof what, "%s: column '%s', row group %zu, page %lld header", c->f->path,
           c->col->name, c->rg, (long long)c->page);
  ladle_thrift t = {*pp, end, what, c->err, false, 0, 0};
  memset(h, 0, sizeof *h);
  h->type = -1;
  h->v2_compressed = true;
  int16_t last = 0, id;
  int ft;
  while (ladle_thrift_field(&t, &last, &id, &ft)) {
    switch (id) {
      case 1: h->type = (int)ladle_thrift_int(&t); break;
      case 2: h->uncompressed = ladle_thrift_int(&t); break;
      case 3: h->compressed = ladle_thrift_int(&t); break;
      case 4:
        h->crc = (uint32_t)ladle_thrift_int(&t);
        h->has_crc = true;
        break;
      case 5:
      case 7:
      case 8:
        if (ft == LADLE_TT_STRUCT) {
          read_data_header(&t, h, id == 8);
          h->header_field = id;
        } else {
          ladle_thrift_skip(&t, ft);
        }
        break;
      default: ladle_thrift_skip(&t, ft);
    }
  }
  if (t.failed) return LADLE_ECORRUPT;
  *pp = t.p;
  /* a data or dictionary page's counts come from its own kind of header: a v1
   * page carrying only a v2 header (or none) is out of specification (Polars
   * raises; pyarrow reads no rows where the row group promises some) */
  static const struct {
    int type, field;
    const char *what;
  } kinds[] = {
      {0, 5, "the page header's type is a v1 data page but its v1 header is missing"},
      {2, 7, "the page header's type is a dictionary page but its dictionary header is missing"},
      {3, 8, "the page header's type is a v2 data page but its v2 header is missing"}};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    if (h->type == kinds[k].type && h->header_field != kinds[k].field)
      return corrupt(c, kinds[k].what);
  if (h->compressed < 0 || h->uncompressed < 0 || h->num_values < 0 || h->def_len < 0 || h->rep_len < 0)
    return corrupt(c, "negative size in the page header");
  if (h->compressed > end - *pp) return corrupt(c, "page runs past the column chunk");
  /* no page may claim more memory than a generous compression ratio allows */
  if (h->uncompressed > h->compressed * 4096 + (1 << 20) || h->uncompressed > ((int64_t)1 << 31))
    return corrupt(c, "uncompressed page size is implausibly large for its compressed size");
  return LADLE_OK;
}

/* Whether a page's src_len stored bytes are its dst_len bytes as they are
 * (no codec, or an empty page: some writers store no bytes at all where the
 * codec's empty stream would have some, as in
 * datapage_v2_empty_datapage.snappy.parquet); a size mismatch there is
 * corrupt. */
static ladle_status as_stored(const ctx *c, int codec, int64_t src_len, int64_t dst_len,
                              bool *same) {
  *same = codec == 0 || (src_len == 0 && dst_len == 0);
  return *same && src_len != dst_len ? corrupt(c, "uncompressed page sizes differ") : LADLE_OK;
}

/* src decompressed into exactly dst_len bytes at dst, a failure naming the page. */
static ladle_status decompress_into(const ctx *c, int codec, const uint8_t *src, int64_t src_len,
                                    uint8_t *dst, int64_t dst_len) {
  ladle_status st = ladle_pq_decompress(codec, src, src_len, dst, dst_len, c->err);
  if (st != LADLE_OK)
    return ladle_err_context(c->err, st, "%s: column '%s', row group %zu, page %lld", c->f->path,
                             c->col->name, c->rg, (long long)c->page);
  return LADLE_OK;
}

/* The page's bytes after decompression (into *scratch, of *cap bytes, grown
 * as needed; or pointing at src). */
static ladle_status page_bytes(const ctx *c, int codec, const uint8_t *src, int64_t src_len, int64_t dst_len,
                               uint8_t **scratch, int64_t *cap, const uint8_t **out) {
  bool same;
  LADLE_RETURN_NOT_OK(as_stored(c, codec, src_len, dst_len, &same));
  if (same) {
    *out = src;
    return LADLE_OK;
  }
  if (*scratch == NULL || dst_len > *cap) { /* reused from page to page: fresh memory costs page faults */
    free(*scratch);
    *cap = 0;
    *scratch = malloc((size_t)LADLE_MAX(dst_len, 1));
    if (*scratch == NULL) return LADLE_OOM(c->err, "parquet page");
    *cap = dst_len;
  }
  LADLE_RETURN_NOT_OK(decompress_into(c, codec, src, src_len, *scratch, dst_len));
  *out = *scratch;
  return LADLE_OK;
}

/* The chunk's next page at *p: its header read and checked, its stored
 * bytes at *raw (their CRC checked where zlib is built in), *p past them. */
static ladle_status next_page(const ctx *c, const uint8_t **p, const uint8_t *end, page_header *h,
                              const uint8_t **raw) {
  if (*p >= end) return corrupt(c, "the column chunk ends before the row group's rows");
  LADLE_RETURN_NOT_OK(read_page_header(c, p, end, h));
  *raw = *p;
  *p += h->compressed;
#ifdef LADLE_HAVE_ZLIB
  if (h->has_crc && (uint32_t)crc32(0L, *raw, (uInt)h->compressed) != h->crc)
    return corrupt(c, "page CRC does not match its data");
#endif
  return LADLE_OK;
}

static ladle_status decode_values(const ctx *c, int encoding, const uint8_t *p, const uint8_t *end, int64_t n,
                                  pvals *vals, uint32_t **idx, const pvals *dict) {
  LADLE_RETURN_NOT_OK(pvals_alloc(c, vals, n));
  int phys = c->col->physical;
  switch (encoding) {
    case 0: return decode_plain(c, p, end, vals);
    case 2:
    case 8: {
      if (dict == NULL) return corrupt(c, "dictionary-encoded page without a dictionary page");
      if (p >= end) return n == 0 ? LADLE_OK : corrupt(c, "empty dictionary-encoded page");
      int bw = *p++;
      *idx = malloc((size_t)LADLE_MAX(n, 1) * sizeof **idx);
      if (*idx == NULL) return LADLE_OOM(c->err, "dictionary indices");
      if (!rle_hybrid(p, end, bw, n, *idx)) return corrupt(c, "bad dictionary indices (RLE/bit-packed data)");
      return LADLE_OK;
    }
    case 3: {
      if (phys != LADLE_PQ_BOOLEAN) return corrupt(c, "RLE values on a non-boolean column");
      if (end - p < 4) return corrupt(c, "truncated RLE booleans");
      uint32_t len;
      memcpy(&len, p, 4);
      p += 4;
      if ((int64_t)len > end - p) return corrupt(c, "RLE booleans run past the page");
      uint32_t *tmp = malloc((size_t)LADLE_MAX(n, 1) * 4);
      if (tmp == NULL) return LADLE_OOM(c->err, "booleans");
      bool ok = rle_hybrid(p, p + len, 1, n, tmp);
      for (int64_t i = 0; ok && i < n; i++) vals->raw[i] = tmp[i];
      free(tmp);
      return ok ? LADLE_OK : corrupt(c, "bad RLE booleans");
    }
    case 5:
      if (phys != LADLE_PQ_INT32 && phys != LADLE_PQ_INT64) return corrupt(c, "DELTA_BINARY_PACKED on a non-integer column");
      return decode_delta_binary(c, p, end, vals);
    case 6:
      if (phys != LADLE_PQ_BYTE_ARRAY) return corrupt(c, "DELTA_LENGTH_BYTE_ARRAY on a non-byte-array column");
      return decode_delta_length(c, p, end, vals);
    case 7:
      if (phys != LADLE_PQ_BYTE_ARRAY) return ladle_err_set(c->err, LADLE_ENOTSUP, "%s: column '%s': DELTA_BYTE_ARRAY on fixed-length arrays is not supported yet", c->f->path, c->col->name);
      return decode_delta_byte_array(c, p, end, vals);
    case 9:
      if (phys == LADLE_PQ_BOOLEAN || phys == LADLE_PQ_BYTE_ARRAY) return corrupt(c, "BYTE_STREAM_SPLIT on a variable-width column");
      return decode_byte_stream_split(c, p, end, vals);
    default:
      return ladle_err_set(c->err, LADLE_ENOTSUP, "%s: column '%s': encoding %d is not supported", c->f->path,
                           c->col->name, encoding);
  }
}

/* A v1 data page's level block: a 4-byte length, then that many bytes of
 * RLE/bit-packed levels; *p moves past it. */
static ladle_status level_block(const ctx *c, const uint8_t **p, const uint8_t *end, const char *what,
                                const uint8_t **start, const uint8_t **stop) {
  char msg[64];
  if (end - *p < 4) {
    snprintf(msg, sizeof msg, "truncated %s levels", what);
    return corrupt(c, msg);
  }
  uint32_t len;
  memcpy(&len, *p, 4);
  *p += 4;
  if ((int64_t)len > end - *p) {
    snprintf(msg, sizeof msg, "%s levels run past the page", what);
    return corrupt(c, msg);
  }
  *start = *p;
  *stop = *p + len;
  *p += len;
  return LADLE_OK;
}

/* Turns the slot column *o (one entry per level pair; values where def is the
 * maximum) into the LIST column of `nrows` rows. A row starts at repetition 0;
 * def < list_def: a null list; def == list_def: an empty list; above: an
 * element (null unless def is the maximum). */
static ladle_status assemble_list(const ctx *c, const ladle_pq_column *lc, int64_t nrows, int64_t nslots,
                                  const uint8_t *reps, const uint8_t *defs, ladle_column *o) {
  int64_t rows = 0, nelem = 0;
  for (int64_t i = 0; i < nslots; i++) {
    rows += reps[i] == 0;
    nelem += defs[i] > lc->list_def;
  }
  if (rows != nrows || (nslots > 0 && reps[0] != 0))
    return corrupt(c, "repetition levels do not start the row group's rows");
  ladle_column out, child;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(lc->type, nrows, true, 0, &out, c->err));
  int64_t *off = LADLE_COL_MUT(&out, int64_t);
  int64_t *eidx = nelem < nslots ? malloc((size_t)LADLE_MAX(nelem, 1) * sizeof *eidx) : NULL;
  if (nelem < nslots && eidx == NULL) {
    ladle_column_release(&out);
    return LADLE_OOM(c->err, "list elements");
  }
  int64_t r = -1, e = 0;
  for (int64_t i = 0; i < nslots; i++) {
    if (reps[i] == 0) {
      if (r >= 0) off[r + 1] = e;
      r++;
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(&out), r, defs[i] >= lc->list_def);
    }
    if (defs[i] > lc->list_def) {
      if (eidx != NULL) eidx[e] = i;
      e++;
    }
  }
  if (r >= 0) off[r + 1] = e;
  ladle_status st;
  if (eidx == NULL) {
    child = *o; /* every slot is an element: the slots are the child */
    memset(o, 0, sizeof *o);
    ladle_column_finish_nulls(&child);
    st = LADLE_OK;
  } else {
    ladle_column_finish_nulls(o);
    st = ladle_column_gather(o, eidx, nelem, &child, c->err);
    free(eidx);
    ladle_column_release(o);
  }
  if (st == LADLE_OK) st = ladle_column_set_child(&out, &child, c->err);
  if (st != LADLE_OK) {
    ladle_column_release(&out);
    return st;
  }
  ladle_column_finish_nulls(&out);
  *o = out;
  return LADLE_OK;
}

static ladle_status read_chunk_range(const ladle_pq_file *f, size_t rg, size_t col, bool as_views,
                                     const int64_t *sel, int64_t nsel, int64_t lo, int64_t hi,
                                     ladle_column *out, ladle_error *err);

static ladle_status read_chunk(const ladle_pq_file *f, size_t rg, size_t col, bool as_views,
                               const int64_t *sel, int64_t nsel, ladle_column *out,
                               ladle_error *err) {
  return read_chunk_range(f, rg, col, as_views, sel, nsel, 0, -1, out, err);
}

ladle_status ladle_pq_read_chunk(const ladle_pq_file *f, size_t rg, size_t col, ladle_column *out,
                                 ladle_error *err) {
  return read_chunk(f, rg, col, false, NULL, 0, out, err);
}

ladle_status ladle_pq_read_chunk_views(const ladle_pq_file *f, size_t rg, size_t col, ladle_column *out,
                                       ladle_error *err) {
  return ladle_pq_read_chunk_rows(f, rg, col, true, 0, -1, out, err);
}

/* Whether read_chunk can decode only the selected rows of a column: flat, and
 * fixed-width or read as views (strings as offsets and bytes, and lists, are
 * read whole and gathered). */
static bool selective_decode_ok(const ladle_pq_column *pc, bool as_views) {
  if (pc->max_rep > 0) return false;
  if (as_views && pc->type.id == LADLE_TYPE_STRING && pc->physical == LADLE_PQ_BYTE_ARRAY) return true;
  return !ladle_type_is_varlen(pc->type.id) && pc->type.id != LADLE_TYPE_LIST && ladle_type_width(pc->type.id) > 0;
}

ladle_status ladle_pq_read_chunk_sel(const ladle_pq_file *f, size_t rg, size_t col, const int64_t *sel,
                                     int64_t nsel, bool as_views, ladle_column *out, ladle_error *err) {
  if (rg >= f->nrow_groups || col >= f->ncolumns)
    return ladle_err_set(err, LADLE_EINVAL, "%s: no row group %zu / column %zu", f->path, rg, col);
  int64_t rows = f->row_groups[rg].num_rows;
  for (int64_t i = 0; i < nsel; i++)
    if (sel[i] < 0 || sel[i] >= rows || (i > 0 && sel[i] <= sel[i - 1]))
      return ladle_err_set(err, LADLE_EINVAL, "%s: row selection not ascending within the row group's %lld rows",
                           f->path, (long long)rows);
  const ladle_pq_column *pc = &f->columns[col];
  if (pc->supported && !as_views && pc->max_rep == 0 && utf8_col(pc)) {
    /* strings: the selected rows as views (only the pages that hold them
     * decoded, only their strings moved), then as offsets and bytes */
    ladle_column v;
    ladle_status st = read_chunk(f, rg, col, true, sel, nsel, &v, err);
    if (st == LADLE_OK) {
      st = ladle_column_from_views(&v, out, err);
      ladle_column_release(&v);
      return st;
    }
    if (st != LADLE_ENOTSUP) return st;
  }
  if (pc->supported && selective_decode_ok(pc, as_views)) {
    ladle_status st = read_chunk(f, rg, col, as_views, sel, nsel, out, err);
    if (st != LADLE_ENOTSUP || !as_views) return st;
    as_views = false; /* strings past what a view's offsets reach */
  }
  ladle_column whole;
  LADLE_RETURN_NOT_OK(as_views ? ladle_pq_read_chunk_views(f, rg, col, &whole, err)
                               : ladle_pq_read_chunk(f, rg, col, &whole, err));
  ladle_status st = ladle_column_view_only(&whole) ? ladle_column_gather_views(&whole, sel, nsel, out, err)
                                                   : ladle_column_gather(&whole, sel, nsel, out, err);
  ladle_column_release(&whole);
  return st;
}

static ladle_status chunk_bytes(const ctx *c, const ladle_pq_chunk_meta *m, const uint8_t **chunk,
                                int64_t *size, uint8_t **buf);

ladle_status ladle_pq_read_chunk_rows(const ladle_pq_file *f, size_t rg, size_t col, bool as_views,
                                      int64_t lo, int64_t hi, ladle_column *out, ladle_error *err) {
  if (rg >= f->nrow_groups || col >= f->ncolumns)
    return ladle_err_set(err, LADLE_EINVAL, "%s: no row group %zu / column %zu", f->path, rg, col);
  ladle_status st = read_chunk_range(f, rg, col, as_views, NULL, 0, lo, hi, out, err);
  /* strings past what a view's offsets reach: as offsets and bytes */
  if (st == LADLE_ENOTSUP && as_views && f->columns[col].supported)
    st = read_chunk_range(f, rg, col, false, NULL, 0, lo, hi, out, err);
  return st;
}

ladle_status ladle_pq_chunk_page_rows(const ladle_pq_file *f, size_t rg, size_t col,
                                      int64_t **starts, size_t *n, bool *all_dict) {
  *starts = NULL;
  *n = 0;
  *all_dict = false;
  if (rg >= f->nrow_groups || col >= f->ncolumns) return LADLE_OK;
  const ladle_pq_column *pc = &f->columns[col];
  const ladle_pq_chunk_meta *m = &f->row_groups[rg].columns[col];
  int64_t nrows = f->row_groups[rg].num_rows, size;
  if (!pc->supported || pc->max_rep > 0 || m->physical != pc->physical || m->num_values != nrows ||
      nrows <= 0)
    return LADLE_OK;
  ladle_error e; /* what is wrong is for the whole read to name */
  ctx c = {f, pc, &e, 0, rg};
  const uint8_t *chunk;
  uint8_t *buf = NULL;
  if (chunk_bytes(&c, m, &chunk, &size, &buf) != LADLE_OK) return LADLE_OK;
  size_t cap = 0, k = 0;
  int64_t *at = NULL, done = 0;
  bool dict = true, ok = true;
  const uint8_t *p = chunk, *end = chunk + size;
  while (ok && done < nrows) {
    page_header h;
    if (p >= end || read_page_header(&c, &p, end, &h) != LADLE_OK) {
      ok = false;
      break;
    }
    p += h.compressed;
    if ((h.type != 0 && h.type != 3) || h.num_values == 0) continue;
    if (h.num_values < 0 || h.num_values > nrows - done) {
      ok = false;
      break;
    }
    if (h.encoding != 2 && h.encoding != 8) dict = false;
    if (k == cap) {
      cap = cap ? 2 * cap : 16;
      int64_t *a = realloc(at, cap * sizeof *a);
      if (a == NULL) {
        ok = false;
        break;
      }
      at = a;
    }
    at[k++] = done;
    done += h.num_values;
  }
  free(buf);
  if (!ok || done != nrows) {
    free(at);
    return LADLE_OK;
  }
  *starts = at;
  *n = k;
  *all_dict = dict;
  return LADLE_OK;
}

/* Moves rows sel[a..b) (row numbers from row0, the page's first row) of the
 * page just decoded at rows [0, nv) of `tmp` (and views `tv`; or, a PLAIN
 * page whose bytes are the values, from the page itself: `pv`) into rows
 * [a, b) of `fin` (views `fv`); when the page had nulls, their bits too, and
 * tmp's rows are marked valid again for the next page. */
static void sel_move(const ladle_column *tmp, const uint8_t *tv, const uint8_t *pv,
                     ladle_column *fin, uint8_t *fv, size_t w, const int64_t *sel, int64_t a,
                     int64_t b, int64_t row0, int64_t nv, bool nulls) {
  const uint8_t *src = pv != NULL ? pv : tv != NULL ? tv : (const uint8_t *)tmp->values;
  uint8_t *dst = fv != NULL ? fv : LADLE_COL_MUT(fin, uint8_t);
  const uint8_t *tval = tmp->validity;
  uint8_t *fval = LADLE_COL_VALIDITY_MUT(fin);
  switch (w) {
    case 1:
      for (int64_t k = a; k < b; k++) dst[k] = src[sel[k] - row0];
      break;
    case 2:
      for (int64_t k = a; k < b; k++) memcpy(dst + 2 * k, src + 2 * (sel[k] - row0), 2);
      break;
    case 4:
      for (int64_t k = a; k < b; k++) memcpy(dst + 4 * k, src + 4 * (sel[k] - row0), 4);
      break;
    case 8:
      for (int64_t k = a; k < b; k++) memcpy(dst + 8 * k, src + 8 * (sel[k] - row0), 8);
      break;
    case 16:
      for (int64_t k = a; k < b; k++) memcpy(dst + 16 * k, src + 16 * (sel[k] - row0), 16);
      break;
    default:
      for (int64_t k = a; k < b; k++) memcpy(dst + w * (size_t)k, src + w * (size_t)(sel[k] - row0), w);
  }
  if (nulls) {
    for (int64_t k = a; k < b; k++)
      if (!ladle_bit_get(tval, sel[k] - row0)) ladle_bit_set(fval, k, false);
    memset(LADLE_COL_VALIDITY_MUT(tmp), 0xff, (size_t)ladle_bitmap_bytes(nv));
  }
}

/* The same for a dictionary page decoded as indices `ix` (no nulls): the kept
 * rows' values or views through the dictionary, straight into the output.
 * `picked`: ix holds the kept rows' indices only (dict_pick), else the page's. */
static void sel_move_dict(int kind, const uint32_t *ix, bool picked, const uint64_t *raw,
                          const uint8_t *dviews, uint8_t *dst, const int64_t *sel, int64_t a,
                          int64_t b, int64_t row0) {
#define SEL_IX(k) (picked ? ix[(k)-a] : ix[sel[k] - row0])
  switch (kind) {
    case DICT_U64:
      for (int64_t k = a; k < b; k++) ((uint64_t *)(void *)dst)[k] = raw[SEL_IX(k)];
      break;
    case DICT_U32:
      for (int64_t k = a; k < b; k++) ((uint32_t *)(void *)dst)[k] = (uint32_t)raw[SEL_IX(k)];
      break;
    case DICT_F32:
      for (int64_t k = a; k < b; k++) ((float *)(void *)dst)[k] = slot_f32(raw[SEL_IX(k)]);
      break;
    default: /* DICT_VIEW */
      for (int64_t k = a; k < b; k++) memcpy(dst + 16 * k, dviews + 16 * (size_t)SEL_IX(k), 16);
  }
#undef SEL_IX
}

/* A chunk's output column of n rows, all valid: values of the column's type,
 * or (views) validity and 16-byte views only. */
static ladle_status alloc_output(const ladle_pq_column *pc, bool views, int64_t n, ladle_column *o,
                                 ladle_error *err) {
  if (!views) return ladle_column_alloc(pc->type, n, true, 0, o, err);
  LADLE_RETURN_NOT_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_NULL), n, true, 0, o, err));
  memset(LADLE_COL_VALIDITY_MUT(o), 0xff, (size_t)ladle_bitmap_bytes(n));
  o->type = pc->type;
  o->null_count = 0;
  ladle_status st = ladle_buffer_alloc(NULL, (size_t)LADLE_MAX(n, 1) * 16, &o->vowners[0], err);
  if (st != LADLE_OK) {
    ladle_column_release(o);
    return st;
  }
  o->views = o->vowners[0]->data;
  return LADLE_OK;
}

/* Bytes a column read by plain_direct keeps ahead of its first row: room for
 * what a v1 page's stream holds before its values (the definition levels'
 * length and, for a page without nulls, their one run). */
enum { PLAIN_HEAD = 64 };

/* The output of a flat column of n rows whose PLAIN bytes are its values
 * (plain_copies_directly), all valid, with PLAIN_HEAD bytes of its buffer
 * ahead of its first row (what a slice of a longer column looks like). */
static ladle_status alloc_output_head(const ladle_pq_column *pc, int64_t n, ladle_column *o,
                                      ladle_error *err) {
  size_t w = ladle_type_width(pc->type.id);
  int64_t pad = (PLAIN_HEAD + (int64_t)w - 1) / (int64_t)w;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(pc->type, n + pad, true, 0, o, err));
  o->values = (const uint8_t *)o->values + pad * (int64_t)w;
  o->length = n;
  return LADLE_OK;
}

/* A compressed PLAIN data page of a flat column whose bytes are its values,
 * every row present, decompressed straight into its rows of the output at
 * `out` (nv values of w bytes; PLAIN_HEAD writable bytes before it): no
 * scratch buffer and no copy. A v1 page's stream puts its definition levels
 * before the values, so it is decompressed to start that many bytes earlier
 * (the page's size less its values'), over the end of the rows before (or
 * the head), which are saved and put back; its levels must then say that
 * every row is present. A v2 page's levels come first, uncompressed, and are
 * read before. *direct: the page is done. Otherwise nothing has changed,
 * except where a v1 page turned out to hold other levels: then its bytes are
 * in *scratch (*in_scratch) for the general path. */
static ladle_status plain_direct(const ctx *c, int codec, const page_header *h, const uint8_t *raw,
                                 int def_bw, uint8_t *out, size_t w, uint8_t **scratch,
                                 int64_t *cap, bool *direct, bool *in_scratch) {
  const ladle_pq_column *pc = c->col;
  int64_t nv = h->num_values, vbytes = nv * (int64_t)w;
  *direct = *in_scratch = false;
  if (h->encoding != 0 || pc->max_rep != 0) return LADLE_OK;
  if (h->type == 3) {
    if (!h->v2_compressed || h->rep_len != 0 || h->num_nulls != 0 || h->num_rows != nv ||
        h->def_len > h->compressed || h->uncompressed - h->def_len != vbytes)
      return LADLE_OK;
    const uint8_t *defs = raw + h->rep_len;
    if (pc->max_def > 0 &&
        !rle_all_equal(defs, defs + h->def_len, def_bw, nv, (uint32_t)pc->max_def))
      return LADLE_OK;
    bool same;
    LADLE_RETURN_NOT_OK(as_stored(c, codec, h->compressed - h->def_len, vbytes, &same));
    if (same) return LADLE_OK;
    LADLE_RETURN_NOT_OK(
        decompress_into(c, codec, defs + h->def_len, h->compressed - h->def_len, out, vbytes));
    *direct = true;
    return LADLE_OK;
  }
  if (h->type != 0) return LADLE_OK;
  int64_t pre = h->uncompressed - vbytes; /* the levels' bytes, if every row is present */
  if (pc->max_def == 0 ? pre != 0 : pre < 5 || pre > PLAIN_HEAD) return LADLE_OK;
  bool same;
  LADLE_RETURN_NOT_OK(as_stored(c, codec, h->compressed, h->uncompressed, &same));
  if (same) return LADLE_OK;
  uint8_t saved[PLAIN_HEAD], lev[PLAIN_HEAD];
  uint8_t *dst = out - pre;
  memcpy(saved, dst, (size_t)pre);
  ladle_status st = decompress_into(c, codec, raw, h->compressed, dst, h->uncompressed);
  memcpy(lev, dst, (size_t)pre);
  memcpy(dst, saved, (size_t)pre);
  LADLE_RETURN_NOT_OK(st);
  uint32_t len = 0;
  if (pc->max_def > 0) memcpy(&len, lev, 4);
  if (pc->max_def == 0 || ((int64_t)len + 4 == pre &&
                           rle_all_equal(lev + 4, lev + pre, def_bw, nv, (uint32_t)pc->max_def))) {
    *direct = true;
    return LADLE_OK;
  }
  /* levels with nulls (or not only runs): the page as decompressed, for the
   * general path */
  if (*scratch == NULL || h->uncompressed > *cap) {
    free(*scratch);
    *cap = 0;
    if ((*scratch = malloc((size_t)LADLE_MAX(h->uncompressed, 1))) == NULL)
      return LADLE_OOM(c->err, "parquet page");
    *cap = h->uncompressed;
  }
  memcpy(*scratch, lev, (size_t)pre);
  memcpy(*scratch + pre, out, (size_t)vbytes);
  *in_scratch = true;
  return LADLE_OK;
}

/* A data page's value bytes (decompressed into *scratch when they need it;
 * `have`: a v1 page's bytes are there already) and its level blocks: a v1
 * page holds its levels inside the decompressed bytes, a v2 page ahead of
 * them, uncompressed. A block the column has none of is NULL (a v2 page's
 * repetition levels are its first rep_len bytes). */
static ladle_status page_data(const ctx *c, const ladle_pq_chunk_meta *m, const page_header *h,
                              const uint8_t *raw, bool have, uint8_t **scratch, int64_t *cap,
                              const uint8_t **data, const uint8_t **data_end, const uint8_t **reps,
                              const uint8_t **reps_end, const uint8_t **defs,
                              const uint8_t **defs_end) {
  const ladle_pq_column *pc = c->col;
  *reps = *reps_end = *defs = *defs_end = NULL;
  if (h->type == 0) {
    if (have)
      *data = *scratch;
    else
      LADLE_RETURN_NOT_OK(
          page_bytes(c, m->codec, raw, h->compressed, h->uncompressed, scratch, cap, data));
    *data_end = *data + h->uncompressed;
    if (pc->max_rep > 0)
      LADLE_RETURN_NOT_OK(level_block(c, data, *data_end, "repetition", reps, reps_end));
    if (pc->max_def > 0)
      LADLE_RETURN_NOT_OK(level_block(c, data, *data_end, "definition", defs, defs_end));
    return LADLE_OK;
  }
  if (h->def_len > h->compressed || h->rep_len > h->compressed - h->def_len ||
      h->def_len + h->rep_len > h->uncompressed)
    return corrupt(c, "level lengths exceed the page");
  *reps = raw;
  *reps_end = raw + h->rep_len;
  if (pc->max_def > 0) {
    *defs = raw + h->rep_len;
    *defs_end = *defs + h->def_len;
  }
  const uint8_t *vsrc = raw + h->rep_len + h->def_len;
  int64_t vlen = h->compressed - h->rep_len - h->def_len,
          ulen = h->uncompressed - h->rep_len - h->def_len;
  LADLE_RETURN_NOT_OK(
      page_bytes(c, h->v2_compressed ? m->codec : 0, vsrc, vlen, ulen, scratch, cap, data));
  *data_end = *data + ulen;
  return LADLE_OK;
}

/* Which of a page's nv values are present, from its definition levels:
 * *present NULL when every one is (a run of the maximum, found without
 * decoding it, unless `decode` asks for the levels anyway), else one byte per
 * value; their count in *present_n. The levels go into *levels (nv entries,
 * reallocated; untouched when not decoded). */
static ladle_status page_presence(const ctx *c, const uint8_t *defs, const uint8_t *defs_end,
                                  int bw, int64_t nv, bool decode, uint32_t **levels,
                                  uint8_t **present, int64_t *present_n) {
  const ladle_pq_column *pc = c->col;
  free(*present);
  *present = NULL;
  *present_n = nv;
  if (pc->max_def == 0 || (!decode && rle_all_equal(defs, defs_end, bw, nv, (uint32_t)pc->max_def)))
    return LADLE_OK;
  free(*levels);
  *levels = malloc((size_t)LADLE_MAX(nv, 1) * 4);
  *present = malloc((size_t)LADLE_MAX(nv, 1));
  if (*levels == NULL || *present == NULL) return LADLE_OOM(c->err, "definition levels");
  if (!rle_hybrid(defs, defs_end, bw, nv, *levels)) return corrupt(c, "bad definition levels");
  int64_t n = 0;
  for (int64_t i = 0; i < nv; i++) {
    if ((*levels)[i] > (uint32_t)pc->max_def)
      return corrupt(c, "definition level above the schema's maximum");
    (*present)[i] = (*levels)[i] == (uint32_t)pc->max_def;
    n += (*present)[i];
  }
  *present_n = n;
  return LADLE_OK;
}

/* A v2 page header's counts agree with its levels (Polars trusts num_nulls,
 * skipping the levels when it is 0). */
static ladle_status v2_counts(const ctx *c, const page_header *h, int64_t nv, int64_t present_n,
                              int64_t rows) {
  if (h->num_nulls == nv - present_n && h->num_rows == rows) return LADLE_OK;
  char msg[160];
  snprintf(msg, sizeof msg,
           "the page header counts %lld nulls in %lld rows, its levels %lld in %lld",
           (long long)h->num_nulls, (long long)h->num_rows, (long long)(nv - present_n),
           (long long)rows);
  return corrupt(c, msg);
}

/* The column chunk's bytes [*chunk, *chunk + *size): in the file's mapping
 * (bounds checked when the footer was read), or read into *buf (the caller
 * frees it). */
static ladle_status chunk_bytes(const ctx *c, const ladle_pq_chunk_meta *m, const uint8_t **chunk,
                                int64_t *size, uint8_t **buf) {
  const ladle_pq_file *f = c->f;
  int64_t start = m->dictionary_page_offset >= 4 && m->dictionary_page_offset < m->data_page_offset
                      ? m->dictionary_page_offset
                      : m->data_page_offset;
  int64_t n = m->total_compressed_size;
  if (start < 0 || n < 0 || start > f->file_size || n > f->file_size - start)
    return corrupt(c, "column chunk lies outside the file");
  *buf = NULL;
  *size = n;
  *chunk = f->map != NULL ? f->map + start : NULL;
  if (*chunk == NULL) {
    if ((*buf = malloc((size_t)LADLE_MAX(n, 1))) == NULL) return LADLE_OOM(c->err, "column chunk");
    ladle_status rs = ladle_read_at(f->fd, f->path, start, *buf, n, c->err);
    if (rs != LADLE_OK) {
      free(*buf);
      *buf = NULL;
      return ladle_err_context(c->err, rs, "column '%s'", c->col->name);
    }
    *chunk = *buf;
  }
  return LADLE_OK;
}

/* The chunk's rows sel[0..nsel) (sel NULL: all), or with hi >= 0 its rows
 * [lo, hi) of a flat column, lo and hi where pages start or end (a page
 * across either: LADLE_ENOTSUP); the pages before lo are not decompressed. */
static ladle_status read_chunk_range(const ladle_pq_file *f, size_t rg, size_t col, bool as_views,
                                     const int64_t *sel, int64_t nsel, int64_t lo, int64_t hi,
                                     ladle_column *out, ladle_error *err) {
  const ladle_pq_column *pc = &f->columns[col];
  bool range = hi >= 0;
  if (range &&
      (sel != NULL || pc->max_rep > 0 || lo < 0 || lo > hi || hi > f->row_groups[rg].num_rows))
    return ladle_err_set(err, LADLE_EINVAL, "%s: column '%s': rows [%lld, %lld) of row group %zu",
                         f->path, pc->name, (long long)lo, (long long)hi, rg);
  const ladle_pq_chunk_meta *m = &f->row_groups[rg].columns[col];
  if (!pc->supported)
    return ladle_err_set(err, LADLE_ENOTSUP, "%s: column '%s': %s", f->path, pc->name, pc->why);
  /* a list decodes its leaf as a flat column of slots (one per level entry),
   * then assembles offsets from the levels */
  ladle_pq_column leafcol;
  const ladle_pq_column *list = NULL;
  if (pc->max_rep > 0) {
    list = pc;
    leafcol = *pc;
    leafcol.type = pc->elem;
    pc = &leafcol;
  }
  ctx c = {f, pc, err, 0, rg};
  if (m->physical != pc->physical) return corrupt(&c, "chunk and schema disagree on the physical type");
  /* a Null column: nulls, whatever the pages hold */
  if (pc->type.id == LADLE_TYPE_NULL && list == NULL)
    return ladle_column_alloc(pc->type,
                              sel != NULL ? nsel
                              : range     ? hi - lo
                                          : f->row_groups[rg].num_rows,
                              true, 0, out, err);
  int64_t nrows = f->row_groups[rg].num_rows;
  int64_t size = m->total_compressed_size;
  /* a row count the chunk cannot hold (every value takes at least a bit or a run) */
  if (nrows < 0 || (nrows > size * 8 * 1024 + 1024 * 1024)) return corrupt(&c, "row count is implausible for the chunk size");
  int64_t nslots = list ? m->num_values : nrows;
  if (nslots < 0 || (nslots > size * 8 * 1024 + 1024 * 1024)) return corrupt(&c, "value count is implausible for the chunk size");
  if (!list && m->num_values != nrows) {
    /* a flat column holds one value (or null) per row: the footer contradicts
     * itself (pyarrow then reads as many rows as the chunk says, Polars panics) */
    char msg[160];
    snprintf(msg, sizeof msg, "the column chunk counts %lld values in a row group of %lld rows",
             (long long)m->num_values, (long long)nrows);
    return corrupt(&c, msg);
  }
  int64_t before = 0; /* a range's rows still to pass over */
  if (range) {
    nslots = hi - lo;
    before = lo;
  }
  int def_bw = pc->max_def <= 1 ? pc->max_def : pc->max_def <= 3 ? 2 : 3;
  uint8_t *buf = NULL;
  const uint8_t *chunk;
  LADLE_RETURN_NOT_OK(chunk_bytes(&c, m, &chunk, &size, &buf));
  bool str = ladle_type_is_varlen(pc->type.id);
  /* views: a flat string column read straight into Arrow views */
  bool views = as_views && !list && pc->type.id == LADLE_TYPE_STRING && pc->physical == LADLE_PQ_BYTE_ARRAY;
  vsink vs = {NULL, NULL, NULL};
  /* the output: the selected rows (fin) of a page at a time decoded into rows
   * [0, nv) of o (so only a page's worth of o's memory is touched), or o */
  ladle_column o, fin;
  memset(&fin, 0, sizeof fin);
  /* a whole flat column whose PLAIN bytes are its values: the output keeps
   * PLAIN_HEAD bytes ahead of its first row, so that such pages decompress
   * straight into it (plain_direct) */
  bool head = sel == NULL && !views && !list && plain_copies_directly(pc);
  size_t head_w = head ? ladle_type_width(pc->type.id) : 0;
  ladle_status st =
      head ? alloc_output_head(pc, nslots, &o, err) : alloc_output(pc, views, nslots, &o, err);
  if (st == LADLE_OK && sel != NULL && (st = alloc_output(pc, views, nsel, &fin, err)) != LADLE_OK)
    ladle_column_release(&o);
  if (st != LADLE_OK) {
    free(buf);
    return st;
  }
  vs.views = (uint8_t *)(uintptr_t)o.views;
  uint8_t *fin_views = (uint8_t *)(uintptr_t)fin.views;
  size_t sel_w = views ? 16 : ladle_type_width(pc->type.id);
  uint32_t *sel_ix = NULL; /* a dictionary page's indices, for a selection */
  int64_t sel_ix_cap = 0;
  int64_t done = 0, sa = 0; /* chunk rows decoded; selected rows moved */
  uint8_t *reps_all = NULL, *defs_all = NULL;
  if (list) {
    reps_all = malloc((size_t)LADLE_MAX(nslots, 1));
    defs_all = malloc((size_t)LADLE_MAX(nslots, 1));
    if (reps_all == NULL || defs_all == NULL) st = LADLE_OOM(err, "list levels");
  }
  sink s = {&o, NULL, 0, 0, 0};
  pvals dict, vals;
  memset(&dict, 0, sizeof dict);
  memset(&vals, 0, sizeof vals);
  bool have_dict = false;
  uint8_t *dict_scratch = NULL, *dict_padded = NULL, *scratch = NULL, *present = NULL;
  int64_t dict_cap = 0, scratch_cap = 0;
  uint32_t *idx = NULL, *levels = NULL;
  kept_pages kp = {NULL, NULL, 0, 0};
  const uint8_t *p = chunk, *end = chunk + size;
  while (st == LADLE_OK && done < nslots) {
    page_header h;
    const uint8_t *raw = NULL;
    if ((st = next_page(&c, &p, end, &h, &raw)) != LADLE_OK) break;
    if (h.type == 2) { /* dictionary page */
      if (have_dict) {
        st = corrupt(&c, "a second dictionary page");
        break;
      }
      const uint8_t *d;
      st = page_bytes(&c, m->codec, raw, h.compressed, h.uncompressed, &dict_scratch, &dict_cap, &d);
      if (st == LADLE_OK && h.num_values > h.uncompressed * 8 + 8) st = corrupt(&c, "dictionary claims more values than its bytes hold");
      if (st == LADLE_OK) st = pvals_alloc(&c, &dict, h.num_values);
      if (st == LADLE_OK && is_bytes(pc) && pc->physical == LADLE_PQ_BYTE_ARRAY) {
        /* strings are copied out of the dictionary row by row: 64 readable
         * bytes past its end let every short one go as fixed-size moves */
        uint8_t *padded = malloc((size_t)h.uncompressed + 64);
        if (padded == NULL) {
          st = LADLE_OOM(err, "parquet dictionary");
          break;
        }
        memcpy(padded, d, (size_t)h.uncompressed);
        memset(padded + h.uncompressed, 0, 64);
        free(dict_padded);
        dict_padded = padded;
        d = padded;
        vs.dict_base = padded;
        if (h.uncompressed > INT32_MAX) views = false, st = as_views ? LADLE_ENOTSUP : st;
        st = decode_plain(&c, d, d + h.uncompressed, &dict);
        if (st == LADLE_OK) /* the dictionary's strings once, not per row */
          st = check_utf8(&c, &dict, "dictionary entry %lld");
        dict.end = d + h.uncompressed + 64;
      } else if (st == LADLE_OK) {
        st = decode_plain(&c, d, d + h.uncompressed, &dict);
      }
      have_dict = true;
      c.page++;
      continue;
    }
    if (h.type != 0 && h.type != 3) { /* index pages and unknown kinds are skipped */
      c.page++;
      continue;
    }
    int64_t nv = h.num_values;
    if (nv == 0) { /* a page of no values adds nothing: not decoded (as a selection skips it) */
      c.page++;
      continue;
    }
    if (range && (before > 0 || nv > nslots - done)) {
      if (before >= nv) { /* a page before the range: not decompressed */
        before -= nv;
        c.page++;
        continue;
      }
      st = ladle_err_set(err, LADLE_ENOTSUP, "%s: column '%s': a page across row %lld", f->path,
                         pc->name, (long long)(before > 0 ? lo : hi));
      break;
    }
    if (nv > nslots - done) {
      st = corrupt(&c, list ? "page holds more values than the column chunk says"
                            : "page holds more values than the row group has rows left");
      break;
    }
    int64_t sb = sa, plain_bi = -1;
    int sel_dict = -1; /* a dictionary page decoded as indices into sel_ix */
    const uint8_t *sel_plain = NULL; /* a PLAIN page's values, for a selection */
    bool sel_picked = false;         /* sel_ix holds the kept rows' indices only */
    const uint8_t *plain_base = NULL, *plain_end = NULL;
    if (sel != NULL) {
      while (sb < nsel && sel[sb] < done + nv) sb++;
      if (sb == sa) { /* no selected row on this page: not even decompressed */
        done += nv;
        c.page++;
        continue;
      }
      s.row = 0;
    }
    bool in_scratch = false;
    if (head) {
      bool direct = false;
      st = plain_direct(&c, m->codec, &h, raw, def_bw,
                        LADLE_COL_MUT(&o, uint8_t) + s.row * (int64_t)head_w, head_w, &scratch,
                        &scratch_cap, &direct, &in_scratch);
      if (st != LADLE_OK) break;
      if (direct) {
        s.row += nv;
        goto page_done;
      }
    }
    const uint8_t *data, *data_end, *defs, *defs_end, *reps, *reps_end;
    st = page_data(&c, m, &h, raw, in_scratch, &scratch, &scratch_cap, &data, &data_end, &reps,
                   &reps_end, &defs, &defs_end);
    if (st != LADLE_OK) break;
    /* definition levels -> which rows hold values (a list keeps them all) */
    int64_t present_n;
    st = page_presence(&c, defs, defs_end, def_bw, nv, list, &levels, &present, &present_n);
    if (st != LADLE_OK) break;
    for (int64_t i = 0; list && pc->max_def > 0 && i < nv; i++)
      defs_all[s.row + i] = (uint8_t)levels[i];
    if (list) {
      if (!rle_hybrid(reps, reps_end, 1, nv, levels)) {
        st = corrupt(&c, "bad repetition levels");
        break;
      }
      for (int64_t i = 0; i < nv; i++) {
        if (levels[i] > 1) {
          st = corrupt(&c, "repetition level above the schema's maximum");
          break;
        }
        reps_all[s.row + i] = (uint8_t)levels[i];
      }
      if (st != LADLE_OK) break;
    }
    if (h.type == 3) {
      int64_t rows = list ? 0 : nv;
      for (int64_t i = 0; list && i < nv; i++) rows += reps_all[s.row + i] == 0;
      if ((st = v2_counts(&c, &h, nv, present_n, rows)) != LADLE_OK) break;
    }
    pvals_free(&vals);
    free(idx);
    idx = NULL;
    if (h.encoding == 0 && present_n == nv && plain_copies_directly(pc)) {
      size_t w = ladle_type_width(pc->type.id);
      if ((int64_t)w * nv > data_end - data) {
        st = corrupt(&c, "PLAIN values run past the page");
        break;
      }
      if (sel != NULL)
        sel_plain = data; /* the kept rows move straight from the page */
      else
        memcpy(LADLE_COL_MUT(&o, char) + s.row * (int64_t)w, data, (size_t)nv * w);
      s.row += nv;
      goto page_done;
    }
    /* a dictionary page without nulls, into fixed-width values or views: fused */
    int dkind = -1;
    size_t dw = 16;
    if ((h.encoding == 2 || h.encoding == 8) && have_dict && present == NULL && !list && present_n == nv) {
      if (views) {
        dkind = DICT_VIEW;
      } else if (!ladle_type_is_varlen(o.type.id) && o.type.id != LADLE_TYPE_DECIMAL &&
                 !(o.type.id == LADLE_TYPE_TIME && pc->time_mul != 1)) {
        dw = ladle_type_width(o.type.id);
        dkind = dw == 8 ? DICT_U64 : dw == 4 ? (o.type.id == LADLE_TYPE_FLOAT32 ? DICT_F32 : DICT_U32) : -1;
      }
    }
    if (dkind >= 0) {
      if (data >= data_end) {
        if (nv > 0) st = corrupt(&c, "empty dictionary-encoded page");
        goto page_done;
      }
      if (dkind == DICT_VIEW && (st = dict_views(&c, &vs, &dict)) != LADLE_OK) break;
      if (sel != NULL) {
        /* only the indices (checked against the dictionary); the kept rows go
         * through the dictionary as they move */
        if (nv > sel_ix_cap) {
          uint32_t *ix = realloc(sel_ix, (size_t)nv * sizeof *ix);
          if (ix == NULL) {
            st = LADLE_OOM(err, "dictionary indices");
            break;
          }
          sel_ix = ix;
          sel_ix_cap = nv;
        }
        /* few kept rows (under one in 8 of the page): only theirs */
        sel_picked = (sb - sa) * 8 < nv;
        dict_out d = {DICT_INDEX, (uint8_t *)sel_ix, NULL, NULL, dict.n};
        const char *bad = sel_picked ? dict_pick(data + 1, data_end, data[0], nv, sel, sa, sb, done,
                                                 dict.n, sel_ix)
                                     : dict_decode(data + 1, data_end, data[0], nv, &d);
        if (bad != NULL) st = corrupt(&c, bad);
        sel_dict = dkind;
        s.row += nv;
        goto page_done;
      }
      dict_out d = {dkind, dkind == DICT_VIEW ? vs.views + 16 * s.row : LADLE_COL_MUT(&o, uint8_t) + s.row * (int64_t)dw,
                    dict.raw, vs.dviews, dict.n};
      const char *bad = dict_decode(data + 1, data_end, data[0], nv, &d);
      if (bad != NULL) st = corrupt(&c, bad);
      s.row += nv;
      goto page_done;
    }
    /* PLAIN strings as views into the page (offsets from pbase): for a
     * selection the kept rows' long strings are copied out as they move; for
     * a whole decompressed page, the column keeps the page when its long
     * strings are at least half its bytes, else they are copied out and the
     * buffer serves the next page */
    const uint8_t *pbase = sel != NULL ? data : scratch;
    if (views && h.encoding == 0 && (sel != NULL || (scratch != NULL && data >= scratch && data_end <= scratch + scratch_cap)) &&
        data_end - pbase <= INT32_MAX && kp.n < INT32_MAX - 2) {
      int32_t bi = (int32_t)(2 + kp.n);
      int64_t row0 = s.row, long_bytes = 0;
      st = plain_views(&c, &s, &vs, nv, present, pbase, data, data_end, bi, &long_bytes);
      if (sel != NULL) {
        plain_bi = bi;
        plain_base = pbase;
        plain_end = data_end;
      } else if (st == LADLE_OK && long_bytes * 2 >= data_end - scratch) {
        if (kept_pages_push(&kp, scratch, data_end - scratch)) {
          scratch = NULL;
          scratch_cap = 0;
        } else {
          st = LADLE_OOM(err, "parquet pages");
        }
      } else if (st == LADLE_OK) {
        st = views_to_sink(&c, &s, vs.views, row0, nv, scratch, data_end, bi);
      }
      goto page_done;
    }
    if (!views && str && h.encoding == 0 && pc->physical == LADLE_PQ_BYTE_ARRAY) {
      st = plain_strings(&c, &s, nv, present, data, data_end);
      goto page_done;
    }
    st = decode_values(&c, h.encoding, data, data_end, present_n, &vals, &idx, have_dict ? &dict : NULL);
    if (st == LADLE_OK && idx == NULL) st = check_utf8(&c, &vals, "value %lld of the page");
    if (st == LADLE_OK && views)
      st = scatter_views(&c, &s, &vs, nv, present, &vals, idx, have_dict ? &dict : NULL);
    else if (st == LADLE_OK)
      st = scatter(&c, &s, nv, present, &vals, idx, have_dict ? &dict : NULL);
  page_done:
    c.page++;
    if (sel == NULL) {
      done = s.row;
    } else if (st == LADLE_OK) {
      if (sel_dict >= 0)
        sel_move_dict(sel_dict, sel_ix, sel_picked, dict.raw, vs.dviews,
                      fin_views != NULL ? fin_views : LADLE_COL_MUT(&fin, uint8_t), sel, sa, sb,
                      done);
      else
        sel_move(&o, views ? vs.views : NULL, sel_plain, &fin, fin_views, sel_w, sel, sa, sb, done,
                 nv, present != NULL);
      if (plain_bi >= 0) st = views_to_sink(&c, &s, fin_views, sa, sb - sa, plain_base, plain_end, (int32_t)plain_bi);
      sa = sb;
      done += nv;
    }
  }
  if (sel != NULL && st == LADLE_OK) {
    /* the selected rows are the column */
    ladle_column_release(&o);
    o = fin;
    memset(&fin, 0, sizeof fin);
    vs.views = fin_views;
  }
  if (st == LADLE_OK && views) {
    /* the dictionary and the copied bytes move into the column: no copy */
    held_bytes *hb = calloc(1, sizeof *hb);
    size_t nb = 2 + kp.n;
    if (hb != NULL) {
      hb->data = malloc(nb * sizeof *hb->data);
      hb->sizes = malloc(nb * sizeof *hb->sizes);
    }
    if (hb == NULL || hb->data == NULL || hb->sizes == NULL) {
      if (hb != NULL) held_bytes_free(hb);
      st = LADLE_OOM(err, "parquet strings");
    }
    if (st == LADLE_OK) {
      hb->dict = dict_padded;
      hb->chars = s.chars;
      hb->pages = kp;
      hb->data[0] = dict_padded != NULL ? (const char *)dict_padded : "";
      hb->data[1] = s.chars != NULL ? (const char *)s.chars : "";
      hb->sizes[0] = have_dict && dict_padded != NULL ? (int64_t)(dict.end - dict_padded) - 64 : 0;
      hb->sizes[1] = s.chars_len;
      for (size_t i = 0; i < kp.n; i++) {
        hb->data[2 + i] = (const char *)kp.buf[i];
        hb->sizes[2 + i] = kp.len[i];
      }
      hb->vb.n = (int64_t)nb;
      hb->vb.data = hb->data;
      hb->vb.sizes = hb->sizes;
      dict_padded = NULL;
      s.chars = NULL;
      memset(&kp, 0, sizeof kp);
      st = ladle_buffer_wrap(hb, sizeof *hb, held_bytes_free, hb, &o.vowners[1], err);
      if (st != LADLE_OK) held_bytes_free(hb);
    }
    if (st == LADLE_OK) {
      o.vbufs = &((held_bytes *)o.vowners[1]->data)->vb;
      ladle_view_only_made();
    }
  } else if (st == LADLE_OK && str) {
    /* the bytes move into the column as they are: no copy */
    if (s.chars == NULL && (s.chars = malloc(16)) == NULL) st = LADLE_OOM(err, "parquet strings");
    ladle_buffer *b = NULL;
    if (st == LADLE_OK)
      st = ladle_buffer_wrap(s.chars, (size_t)s.chars_len, free, s.chars, &b, err);
    if (st == LADLE_OK) {
      ladle_buffer_release(o.owners[2]);
      o.owners[2] = b;
      o.chars = (const char *)s.chars;
      s.chars = NULL;
    }
  }
  if (st == LADLE_OK && list) st = assemble_list(&c, list, nrows, nslots, reps_all, defs_all, &o);
  free(reps_all);
  free(defs_all);
  pvals_free(&dict);
  pvals_free(&vals);
  free(idx);
  free(levels);
  free(present);
  free(scratch);
  free(dict_scratch);
  free(dict_padded);
  free(s.chars);
  free(vs.dviews);
  kept_pages_free(&kp);
  free(buf);
  if (sel != NULL) ladle_column_release(&fin);
  free(sel_ix);
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}

/* ------------------------------------------- a predicate on the dictionary */

/* The dictionary's strings as a String column of n + 1 rows, the last null. */
static ladle_status dict_column(const ctx *c, const pvals *d, ladle_column *out) {
  int64_t chars = 0;
  for (int64_t i = 0; i < d->n; i++) chars += d->len[i];
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_STRING), d->n + 1, true, chars, &o, c->err));
  int64_t *off = LADLE_COL_MUT(&o, int64_t);
  char *ch = LADLE_COL_CHARS_MUT(&o);
  uint8_t *v = LADLE_COL_VALIDITY_MUT(&o);
  memset(v, 0xff, (size_t)ladle_bitmap_bytes(d->n + 1));
  ladle_bit_set(v, d->n, false);
  o.null_count = 1;
  off[0] = 0;
  for (int64_t i = 0; i < d->n; i++) {
    memcpy(ch + off[i], d->ptr[i], (size_t)d->len[i]);
    off[i + 1] = off[i] + d->len[i];
  }
  off[d->n + 1] = off[d->n];
  *out = o;
  return LADLE_OK;
}

ladle_status ladle_pq_read_chunk_dict_keep(const ladle_pq_file *f, size_t rg, size_t col,
                                           ladle_pq_dict_eval eval, void *ectx, uint8_t *keep,
                                           bool *whole, ladle_error *err) {
  *whole = false;
  if (rg >= f->nrow_groups || col >= f->ncolumns)
    return ladle_err_set(err, LADLE_EINVAL, "%s: no row group %zu / column %zu", f->path, rg, col);
  const ladle_pq_column *pc = &f->columns[col];
  const ladle_pq_chunk_meta *m = &f->row_groups[rg].columns[col];
  int64_t nrows = f->row_groups[rg].num_rows;
  /* anything but a flat String column the footer describes consistently:
   * the whole read (which names what is wrong) */
  if (!pc->supported || pc->max_rep > 0 || !utf8_col(pc) || m->physical != pc->physical ||
      m->num_values != nrows || nrows <= 0)
    return LADLE_OK;
  ctx c = {f, pc, err, 0, rg};
  const uint8_t *chunk;
  int64_t size;
  uint8_t *buf = NULL;
  LADLE_RETURN_NOT_OK(chunk_bytes(&c, m, &chunk, &size, &buf));
  int def_bw = pc->max_def <= 1 ? pc->max_def : pc->max_def <= 3 ? 2 : 3;
  pvals dict;
  memset(&dict, 0, sizeof dict);
  bool have_dict = false, plain = false;
  uint8_t *ent = NULL, *dict_scratch = NULL, *scratch = NULL, *present = NULL;
  int64_t dict_cap = 0, scratch_cap = 0, done = 0;
  uint32_t *levels = NULL, *idx = NULL;
  ladle_status st = LADLE_OK;
  const uint8_t *p = chunk, *end = chunk + size;
  while (st == LADLE_OK && done < nrows) {
    page_header h;
    const uint8_t *raw = NULL;
    if ((st = next_page(&c, &p, end, &h, &raw)) != LADLE_OK) break;
    if (h.type == 2) { /* the dictionary: the predicate once per entry */
      if (have_dict) {
        st = corrupt(&c, "a second dictionary page");
        break;
      }
      const uint8_t *d;
      st =
          page_bytes(&c, m->codec, raw, h.compressed, h.uncompressed, &dict_scratch, &dict_cap, &d);
      if (st == LADLE_OK && h.num_values > h.uncompressed * 8 + 8)
        st = corrupt(&c, "dictionary claims more values than its bytes hold");
      if (st == LADLE_OK) st = pvals_alloc(&c, &dict, h.num_values);
      if (st == LADLE_OK) st = decode_plain(&c, d, d + h.uncompressed, &dict);
      if (st == LADLE_OK) st = check_utf8(&c, &dict, "dictionary entry %lld");
      ladle_column dc;
      if (st == LADLE_OK && (st = dict_column(&c, &dict, &dc)) == LADLE_OK) {
        if ((ent = malloc((size_t)dict.n + 1)) == NULL) st = LADLE_OOM(err, "dictionary predicate");
        if (st == LADLE_OK) st = eval(ectx, &dc, ent, err);
        ladle_column_release(&dc);
      }
      have_dict = true;
      c.page++;
      continue;
    }
    if (h.type != 0 && h.type != 3) { /* index pages and unknown kinds are skipped */
      c.page++;
      continue;
    }
    int64_t nv = h.num_values;
    if (nv == 0) {
      c.page++;
      continue;
    }
    if (nv > nrows - done) {
      st = corrupt(&c, "page holds more values than the row group has rows left");
      break;
    }
    if (!have_dict || (h.encoding != 2 && h.encoding != 8)) {
      plain = true; /* a page of values: the whole read */
      break;
    }
    const uint8_t *data, *data_end, *defs, *defs_end, *reps, *reps_end;
    st = page_data(&c, m, &h, raw, false, &scratch, &scratch_cap, &data, &data_end, &reps,
                   &reps_end, &defs, &defs_end);
    int64_t present_n = nv;
    if (st == LADLE_OK)
      st = page_presence(&c, defs, defs_end, def_bw, nv, false, &levels, &present, &present_n);
    if (st == LADLE_OK && h.type == 3) st = v2_counts(&c, &h, nv, present_n, nv);
    if (st != LADLE_OK) break;
    if (present_n > 0 && data >= data_end) {
      st = corrupt(&c, "empty dictionary-encoded page");
      break;
    }
    const char *bad = NULL;
    if (present == NULL) { /* every row a value: the indices through the entries' bytes */
      dict_out d = {DICT_BYTE, keep + done, NULL, ent, dict.n};
      bad = dict_decode(data + 1, data_end, data[0], nv, &d);
    } else {
      free(idx);
      if ((idx = malloc((size_t)LADLE_MAX(present_n, 1) * sizeof *idx)) == NULL) {
        st = LADLE_OOM(err, "dictionary indices");
        break;
      }
      dict_out d = {DICT_INDEX, (uint8_t *)idx, NULL, NULL, dict.n};
      if (present_n > 0) bad = dict_decode(data + 1, data_end, data[0], present_n, &d);
      for (int64_t i = 0, j = 0; bad == NULL && i < nv; i++)
        keep[done + i] = present[i] ? ent[idx[j++]] : ent[dict.n];
    }
    if (bad != NULL) {
      st = corrupt(&c, bad);
      break;
    }
    done += nv;
    c.page++;
  }
  *whole = st == LADLE_OK && !plain && done == nrows;
  pvals_free(&dict);
  free(ent);
  free(dict_scratch);
  free(scratch);
  free(present);
  free(levels);
  free(idx);
  free(buf);
  return st;
}

/* ------------------------------------------------------- pages for a device
 *
 * A flat fixed-width column chunk as its pages, for a decoder elsewhere (a
 * GPU's, through the executor): the headers read and checked here as
 * read_chunk checks them, the bytes decompressed into the caller's buffer. */

int ladle_pq_column_raw_width(const ladle_pq_column *pc) {
  if (!pc->supported || pc->max_rep != 0 || pc->max_def > 1 || !plain_copies_directly(pc)) return 0;
  return pc->physical == LADLE_PQ_INT32 || pc->physical == LADLE_PQ_FLOAT ? 4 : 8;
}

bool ladle_pq_column_dict_strings(const ladle_pq_column *pc) {
  return pc->supported && pc->max_rep == 0 && pc->max_def <= 1 && utf8_col(pc);
}

int64_t ladle_pq_dict_strings_bytes(const ladle_pq_page *pg) {
  return (pg->num_values + 1) * 8 + pg->len;
}

ladle_status ladle_pq_dict_strings_read(const ladle_pq_file *f, size_t rg, size_t col,
                                        const ladle_pq_pages *pp, size_t i, uint8_t *dst,
                                        int64_t *used, ladle_error *err) {
  const ladle_pq_page *pg = &pp->pages[i];
  const ladle_pq_column *pc = &f->columns[col];
  ctx c = {f, pc, err, pg->index, rg};
  uint8_t *raw = malloc((size_t)LADLE_MAX(pg->len, 1));
  if (raw == NULL) return LADLE_OOM(err, "parquet dictionary");
  ladle_status st = ladle_pq_page_read(f, rg, col, pp, i, raw, err);
  int64_t n = pg->num_values, at = 0;
  int64_t *off = (int64_t *)(void *)dst;
  uint8_t *chars = dst + (n + 1) * 8;
  const uint8_t *p = raw, *end = raw + pg->len;
  off[0] = 0;
  for (int64_t k = 0; st == LADLE_OK && k < n; k++) {
    uint32_t len;
    const char *bad = plain_next(&p, end, &len);
    if (bad != NULL) {
      st = corrupt(&c, bad);
      break;
    }
    if (ladle_utf8_check(p, len) >= 0) {
      st = bad_utf8(&c, "dictionary entry %lld", k);
      break;
    }
    memcpy(chars + at, p, len);
    at += len;
    off[k + 1] = at;
    p += len;
  }
  free(raw);
  *used = (n + 1) * 8 + at;
  return st;
}

void ladle_pq_pages_free(ladle_pq_pages *pp) {
  if (pp == NULL) return;
  free(pp->pages);
  free(pp->buf);
  memset(pp, 0, sizeof *pp);
}

ladle_status ladle_pq_chunk_pages(const ladle_pq_file *f, size_t rg, size_t col,
                                  ladle_pq_pages *out, ladle_error *err) {
  memset(out, 0, sizeof *out);
  const ladle_pq_column *pc = &f->columns[col];
  const ladle_pq_chunk_meta *m = &f->row_groups[rg].columns[col];
  ctx c = {f, pc, err, 0, rg};
  bool strings = ladle_pq_column_dict_strings(pc);
  if (ladle_pq_column_raw_width(pc) == 0 && !strings)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "%s: column '%s': not a flat fixed-width or String column", f->path,
                         pc->name);
  if (m->physical != pc->physical)
    return corrupt(&c, "chunk and schema disagree on the physical type");
  int64_t nrows = f->row_groups[rg].num_rows, size;
  if (m->num_values != nrows) {
    char msg[160];
    snprintf(msg, sizeof msg, "the column chunk counts %lld values in a row group of %lld rows",
             (long long)m->num_values, (long long)nrows);
    return corrupt(&c, msg);
  }
  const uint8_t *chunk;
  LADLE_RETURN_NOT_OK(chunk_bytes(&c, m, &chunk, &size, &out->buf));
  out->codec = m->codec;
  size_t cap = 0;
  int64_t done = 0;
  bool have_dict = false;
  ladle_status st = LADLE_OK;
  const uint8_t *p = chunk, *end = chunk + size;
  while (st == LADLE_OK && done < nrows) {
    page_header h;
    const uint8_t *raw = NULL;
    if ((st = next_page(&c, &p, end, &h, &raw)) != LADLE_OK) break;
    int64_t index = c.page++;
    if (h.type != 0 && h.type != 2 && h.type != 3) continue; /* index pages, unknown kinds */
    if (h.type == 2) {
      if (have_dict) {
        st = corrupt(&c, "a second dictionary page");
        break;
      }
      have_dict = true;
      if (h.num_values > h.uncompressed * 8 + 8) {
        st = corrupt(&c, "dictionary claims more values than its bytes hold");
        break;
      }
    } else {
      if (h.num_values == 0) continue; /* adds nothing, as read_chunk skips it */
      if (h.num_values > nrows - done) {
        st = corrupt(&c, "page holds more values than the row group has rows left");
        break;
      }
      if ((h.encoding != 0 || strings) && h.encoding != 2 && h.encoding != 8) {
        st = ladle_err_set(err, LADLE_ENOTSUP,
                           "%s: column '%s', row group %zu, page %lld: encoding %d", f->path,
                           pc->name, rg, (long long)index, h.encoding);
        break;
      }
      if ((h.encoding == 2 || h.encoding == 8) && !have_dict) {
        st = corrupt(&c, "dictionary-encoded page without a dictionary page");
        break;
      }
      if (h.type == 3 &&
          (h.def_len > h.compressed || h.rep_len != 0 || h.def_len > h.uncompressed)) {
        st = corrupt(&c, "level lengths exceed the page");
        break;
      }
      done += h.num_values;
    }
    if (out->n == cap) {
      size_t nc = cap ? 2 * cap : 8;
      ladle_pq_page *np = realloc(out->pages, nc * sizeof *np);
      if (np == NULL) {
        st = LADLE_OOM(err, "parquet pages");
        break;
      }
      out->pages = np;
      cap = nc;
    }
    out->pages[out->n++] = (ladle_pq_page){h.type,
                                           h.encoding,
                                           h.num_values,
                                           h.type == 3 ? h.num_nulls : -1,
                                           raw,
                                           h.compressed,
                                           h.uncompressed,
                                           h.type == 3 ? h.def_len : 0,
                                           h.type != 3 || h.v2_compressed,
                                           index};
  }
  if (st != LADLE_OK) ladle_pq_pages_free(out);
  return st;
}

ladle_status ladle_pq_page_read(const ladle_pq_file *f, size_t rg, size_t col,
                                const ladle_pq_pages *pp, size_t i, uint8_t *dst,
                                ladle_error *err) {
  const ladle_pq_page *pg = &pp->pages[i];
  const ladle_pq_column *pc = &f->columns[col];
  ctx c = {f, pc, err, pg->index, rg};
  /* v2: the levels as stored, then the values (compressed or not) */
  int64_t lv = pg->type == 3 ? pg->def_len : 0;
  if (lv > 0) memcpy(dst, pg->raw, (size_t)lv);
  int codec = pg->compressed ? pp->codec : 0;
  int64_t src_len = pg->raw_len - lv, dst_len = pg->len - lv;
  bool same;
  LADLE_RETURN_NOT_OK(as_stored(&c, codec, src_len, dst_len, &same));
  if (!same) return decompress_into(&c, codec, pg->raw + lv, src_len, dst + lv, dst_len);
  memcpy(dst + lv, pg->raw + lv, (size_t)src_len);
  return LADLE_OK;
}

ladle_status ladle_pq_page_check_stored(const ladle_pq_file *f, size_t rg, size_t col,
                                        const ladle_pq_pages *pp, size_t i, ladle_error *err) {
  const ladle_pq_page *pg = &pp->pages[i];
  ctx c = {f, &f->columns[col], err, pg->index, rg};
  int64_t lv = pg->type == 3 ? pg->def_len : 0;
  if (!pg->compressed || pp->codec == 0) return LADLE_OK;
#ifdef LADLE_HAVE_ZSTD
  if (pp->codec == 6) {
    const uint8_t *src = pg->raw + lv;
    size_t n = (size_t)(pg->raw_len - lv);
    size_t one = ZSTD_findFrameCompressedSize(src, n);
    if (ZSTD_isError(one)) return corrupt(&c, "zstd: not a zstd frame");
    if (one != n)
      return ladle_err_set(err, LADLE_ENOTSUP, "%s: column '%s': a page of several zstd frames",
                           f->path, f->columns[col].name);
    unsigned long long content = ZSTD_getFrameContentSize(src, n);
    if (content == ZSTD_CONTENTSIZE_ERROR ||
        (content != ZSTD_CONTENTSIZE_UNKNOWN && content != (unsigned long long)(pg->len - lv)))
      return corrupt(&c, "zstd: the frame's content size differs from the page header's");
    return LADLE_OK;
  }
#endif
  return ladle_err_set(err, LADLE_ENOTSUP, "%s: codec %d", f->path, pp->codec);
}
