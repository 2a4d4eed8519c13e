/* writer.c — a ladle table to a Parquet file: one row group per `row_group_size`
 * rows, every column OPTIONAL, data pages v1 with bit-packed definition levels,
 * PLAIN or dictionary (RLE_DICTIONARY) values, a codec per file, and min, max and
 * null_count statistics in the logical type's sort order. The thrift compact
 * protocol writer is the mirror of thrift.c. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#ifdef LADLE_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef LADLE_HAVE_SNAPPY
#include <snappy-c.h>
#endif
#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>
#endif

#include "parquet.h"

/* ------------------------------------------------------------- byte buffer */

typedef struct bbuf {
  uint8_t *p;
  int64_t len, cap;
  bool oom;
} bbuf;

/* Room for n more bytes (the buffer doubles); false (and b->oom) when out of
 * memory. */
static bool bb_room(bbuf *b, int64_t n) {
  if (b->oom) return false;
  if (b->len + n <= b->cap) return true;
  int64_t cap = LADLE_MAX(b->cap * 2, b->len + n + 256);
  uint8_t *p = realloc(b->p, (size_t)cap);
  if (p == NULL) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}
static void bb_put(bbuf *b, const void *src, int64_t n) {
  if (n <= 0 || !bb_room(b, n)) return;
  memcpy(b->p + b->len, src, (size_t)n);
  b->len += n;
}
static void bb_byte(bbuf *b, uint8_t v) { bb_put(b, &v, 1); }
/* n zero bytes appended; where they start (NULL when out of memory) */
static uint8_t *bb_zeros(bbuf *b, int64_t n) {
  if (!bb_room(b, n)) return NULL;
  memset(b->p + b->len, 0, (size_t)n);
  b->len += n;
  return b->p + b->len - n;
}
static void bb_uvarint(bbuf *b, uint64_t v) {
  while (v >= 0x80) {
    bb_byte(b, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  bb_byte(b, (uint8_t)v);
}
static void bb_u32(bbuf *b, uint32_t v) {
  uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  bb_put(b, x, 4);
}

/* ---------------------------------------------------------- thrift writer */

typedef struct tw {
  bbuf *b;
  int16_t last[16];
  int depth;
} tw;

static void tw_field(tw *t, int16_t id, int type) {
  int16_t delta = (int16_t)(id - t->last[t->depth]);
  if (delta > 0 && delta <= 15) {
    bb_byte(t->b, (uint8_t)(delta << 4 | type));
  } else {
    bb_byte(t->b, (uint8_t)type);
    bb_uvarint(t->b, (uint64_t)(((int64_t)id << 1) ^ ((int64_t)id >> 63)));
  }
  t->last[t->depth] = id;
}
static void tw_i64(tw *t, int16_t id, int type, int64_t v) {
  tw_field(t, id, type);
  bb_uvarint(t->b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); /* zigzag; no signed shift */
}
static void tw_i32(tw *t, int16_t id, int64_t v) { tw_i64(t, id, LADLE_TT_I32, v); }
static void tw_bin(tw *t, int16_t id, const void *p, int64_t n) {
  tw_field(t, id, LADLE_TT_BINARY);
  bb_uvarint(t->b, (uint64_t)n);
  bb_put(t->b, p, n);
}
static void tw_bool(tw *t, int16_t id, bool v) {
  tw_field(t, id, v ? LADLE_TT_TRUE : LADLE_TT_FALSE);
}
static void tw_begin(tw *t, int16_t id) {
  tw_field(t, id, LADLE_TT_STRUCT);
  t->last[++t->depth] = 0;
}
static void tw_end(tw *t) {
  bb_byte(t->b, LADLE_TT_STOP);
  t->depth--;
}
static void tw_list(tw *t, int16_t id, int elem_type, int64_t n) {
  tw_field(t, id, LADLE_TT_LIST);
  if (n < 15) {
    bb_byte(t->b, (uint8_t)(n << 4 | elem_type));
  } else {
    bb_byte(t->b, (uint8_t)(0xf0 | elem_type));
    bb_uvarint(t->b, (uint64_t)n);
  }
}
/* a struct element of a list */
static void tw_elem_begin(tw *t) { t->last[++t->depth] = 0; }

/* ------------------------------------------------------------- the schema */

typedef struct colspec {
  int physical;
  int converted; /* -1 none */
  int logical;   /* LogicalType union id, 0 none */
  int int_bits;
  bool int_signed;
  bool ts_utc;
  int ts_unit; /* 1 millis 2 micros 3 nanos */
  bool unsigned_order;
  int type_length; /* FIXED_LEN_BYTE_ARRAY */
  int precision, scale;
  bool list; /* a LIST of the element type described by the rest */
} colspec;

static bool spec_of(ladle_dtype t, colspec *c) {
  memset(c, 0, sizeof *c);
  c->converted = -1;
  switch (t.id) {
    case LADLE_TYPE_BOOL:
      c->physical = LADLE_PQ_BOOLEAN;
      return true;
    case LADLE_TYPE_INT8:
    case LADLE_TYPE_INT16:
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_UINT8:
    case LADLE_TYPE_UINT16:
    case LADLE_TYPE_UINT32:
    case LADLE_TYPE_INT64:
    case LADLE_TYPE_UINT64: {
      int bits = (int)ladle_type_width(t.id) * 8;
      bool sign = ladle_type_is_signed(t.id);
      c->physical = bits == 64 ? LADLE_PQ_INT64 : LADLE_PQ_INT32;
      c->logical = 10;
      c->int_bits = bits;
      c->int_signed = sign;
      c->unsigned_order = !sign;
      if (bits != 32 || !sign)
        c->converted = sign ? (bits == 8    ? 15
                               : bits == 16 ? 16
                               : bits == 32 ? 17
                                            : 18)
                            : (bits == 8    ? 11
                               : bits == 16 ? 12
                               : bits == 32 ? 13
                                            : 14);
      if (bits == 64 && sign) c->logical = 0, c->converted = -1;
      if (bits == 32 && sign) c->logical = 0;
      return true;
    }
    case LADLE_TYPE_FLOAT32:
      c->physical = LADLE_PQ_FLOAT;
      return true;
    case LADLE_TYPE_FLOAT64:
      c->physical = LADLE_PQ_DOUBLE;
      return true;
    case LADLE_TYPE_STRING:
      c->physical = LADLE_PQ_BYTE_ARRAY;
      c->logical = 1;
      c->converted = 0;
      c->unsigned_order = true;
      return true;
    case LADLE_TYPE_DATE:
      c->physical = LADLE_PQ_INT32;
      c->logical = 6;
      c->converted = 6;
      return true;
    case LADLE_TYPE_DATETIME:
      c->physical = LADLE_PQ_INT64;
      c->logical = 8;
      c->ts_utc = t.tz[0] != '\0';
      c->ts_unit = t.unit == LADLE_TIME_MS ? 1 : t.unit == LADLE_TIME_US ? 2 : 3;
      if (t.unit != LADLE_TIME_NS) c->converted = t.unit == LADLE_TIME_MS ? 9 : 10;
      if (!c->ts_utc) c->converted = -1; /* converted types imply UTC */
      return true;
    case LADLE_TYPE_DURATION:
      c->physical = LADLE_PQ_INT64;
      return true;
    case LADLE_TYPE_TIME:
      c->physical = LADLE_PQ_INT64;
      c->logical = 7;
      c->ts_unit = 3; /* nanoseconds, not adjusted to UTC, as Polars writes it */
      return true;
    case LADLE_TYPE_BINARY:
      c->physical = LADLE_PQ_BYTE_ARRAY;
      c->unsigned_order = true;
      return true;
    case LADLE_TYPE_DECIMAL:
      /* 16 big-endian bytes, whatever the precision: every reader takes it */
      c->physical = LADLE_PQ_FIXED_LEN_BYTE_ARRAY;
      c->type_length = 16;
      c->logical = 5;
      c->converted = 5;
      c->precision = t.precision;
      c->scale = t.scale;
      return true;
    case LADLE_TYPE_LIST:
      if (t.child == NULL || !spec_of(*t.child, c)) return false;
      c->list = true;
      return true;
    default:
      return false;
  }
}

static void write_leaf_elem(tw *t, const char *name, const colspec *c) {
  tw_elem_begin(t);
  tw_i32(t, 1, c->physical);
  if (c->physical == LADLE_PQ_FIXED_LEN_BYTE_ARRAY) tw_i32(t, 2, c->type_length);
  tw_i32(t, 3, 1); /* OPTIONAL */
  tw_bin(t, 4, name, (int64_t)strlen(name));
  if (c->converted >= 0) tw_i32(t, 6, c->converted);
  if (c->logical == 5) {
    tw_i32(t, 7, c->scale);
    tw_i32(t, 8, c->precision);
  }
  if (c->logical != 0) {
    tw_begin(t, 10);
    tw_begin(t, (int16_t)c->logical);
    if (c->logical == 10) {
      tw_field(t, 1, LADLE_TT_I8);
      bb_byte(t->b, (uint8_t)c->int_bits);
      tw_bool(t, 2, c->int_signed);
    } else if (c->logical == 5) {
      tw_i32(t, 1, c->scale);
      tw_i32(t, 2, c->precision);
    } else if (c->logical == 8 || c->logical == 7) {
      tw_bool(t, 1, c->ts_utc);
      tw_begin(t, 2);
      tw_begin(t, (int16_t)c->ts_unit);
      tw_end(t);
      tw_end(t);
    }
    tw_end(t);
    tw_end(t);
  }
  tw_end(t);
}

/* Schema elements of one column; a list is the standard three levels:
 * optional group name (LIST) { repeated group list { optional element } }. */
static int64_t schema_elems(const colspec *c) { return c->list ? 3 : 1; }
static void write_schema_elem(tw *t, const char *name, const colspec *c) {
  if (!c->list) {
    write_leaf_elem(t, name, c);
    return;
  }
  tw_elem_begin(t);
  tw_i32(t, 3, 1); /* OPTIONAL */
  tw_bin(t, 4, name, (int64_t)strlen(name));
  tw_i32(t, 5, 1);
  tw_i32(t, 6, 3); /* converted LIST */
  tw_begin(t, 10);
  tw_begin(t, 3); /* LogicalType LIST */
  tw_end(t);
  tw_end(t);
  tw_end(t);
  tw_elem_begin(t);
  tw_i32(t, 3, 2); /* REPEATED */
  tw_bin(t, 4, "list", 4);
  tw_i32(t, 5, 1);
  tw_end(t);
  write_leaf_elem(t, "element", c);
}

/* ------------------------------------------------------------ compression */

/* *zctx: the chunk's zstd context, made on its first page and reused (making one
 * per page cost more than compressing a small page); freed by free_zctx. */
static ladle_status compress_page(int codec, int level, const bbuf *in, bbuf *out, void **zctx,
                                  ladle_error *err) {
  out->len = 0;
  switch (codec) {
    case 0:
      bb_put(out, in->p, in->len);
      break;
#ifdef LADLE_HAVE_SNAPPY
    case 1: {
      size_t cap = snappy_max_compressed_length((size_t)in->len);
      bb_put(out, NULL, 0);
      if (out->cap < (int64_t)cap) {
        uint8_t *p = realloc(out->p, cap);
        if (p == NULL) return LADLE_OOM(err, "snappy");
        out->p = p;
        out->cap = (int64_t)cap;
      }
      size_t n = cap;
      if (snappy_compress((const char *)in->p, (size_t)in->len, (char *)out->p, &n) != SNAPPY_OK)
        return ladle_err_set(err, LADLE_ECOMPUTE, "snappy_compress failed");
      out->len = (int64_t)n;
      break;
    }
#endif
#ifdef LADLE_HAVE_ZSTD
    case 6: {
      size_t cap = ZSTD_compressBound((size_t)in->len);
      if (out->cap < (int64_t)cap) {
        uint8_t *p = realloc(out->p, cap);
        if (p == NULL) return LADLE_OOM(err, "zstd");
        out->p = p;
        out->cap = (int64_t)cap;
      }
      if (*zctx == NULL && (*zctx = ZSTD_createCCtx()) == NULL)
        return LADLE_OOM(err, "zstd context");
      size_t n =
          ZSTD_compressCCtx(*zctx, out->p, cap, in->p, (size_t)in->len, level > 0 ? level : 3);
      if (ZSTD_isError(n))
        return ladle_err_set(err, LADLE_ECOMPUTE, "ZSTD_compress: %s", ZSTD_getErrorName(n));
      out->len = (int64_t)n;
      break;
    }
#endif
#ifdef LADLE_HAVE_ZLIB
    case 2: {
      uLong cap = compressBound((uLong)in->len) + 64;
      if (out->cap < (int64_t)cap) {
        uint8_t *p = realloc(out->p, cap);
        if (p == NULL) return LADLE_OOM(err, "gzip");
        out->p = p;
        out->cap = (int64_t)cap;
      }
      z_stream z;
      memset(&z, 0, sizeof z);
      if (deflateInit2(&z, level > 0 ? level : 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
          Z_OK)
        return ladle_err_set(err, LADLE_ECOMPUTE, "deflateInit2 failed");
      z.next_in = in->p;
      z.avail_in = (uInt)in->len;
      z.next_out = out->p;
      z.avail_out = (uInt)cap;
      int r = deflate(&z, Z_FINISH);
      out->len = (int64_t)z.total_out;
      deflateEnd(&z);
      if (r != Z_STREAM_END) return ladle_err_set(err, LADLE_ECOMPUTE, "gzip deflate failed");
      break;
    }
#endif
    default:
      return ladle_err_set(err, LADLE_ENOTSUP, "writing codec %s is not built into this ladle",
                           ladle_pq_codec_name(codec));
  }
  return out->oom ? LADLE_OOM(err, "page") : LADLE_OK;
}

/* ------------------------------------------------------------- the values */

/* PLAIN bytes of value i (non-null) of column c. */
static void plain_value(bbuf *b, const ladle_column *c, int64_t i, const colspec *s) {
  switch (s->physical) {
    case LADLE_PQ_INT32: {
      int32_t v = 0;
      switch (c->type.id) {
        case LADLE_TYPE_INT8:
          v = ((const int8_t *)c->values)[i];
          break;
        case LADLE_TYPE_INT16:
          v = ((const int16_t *)c->values)[i];
          break;
        case LADLE_TYPE_UINT8:
          v = ((const uint8_t *)c->values)[i];
          break;
        case LADLE_TYPE_UINT16:
          v = ((const uint16_t *)c->values)[i];
          break;
        default:
          memcpy(&v, (const char *)c->values + 4 * i, 4);
          break;
      }
      bb_put(b, &v, 4);
      break;
    }
    case LADLE_PQ_INT64:
    case LADLE_PQ_DOUBLE:
      bb_put(b, (const char *)c->values + 8 * i, 8);
      break;
    case LADLE_PQ_FLOAT:
      bb_put(b, (const char *)c->values + 4 * i, 4);
      break;
    case LADLE_PQ_FIXED_LEN_BYTE_ARRAY: { /* DECIMAL: little-endian int128 to big-endian */
      const uint8_t *v = (const uint8_t *)c->values + 16 * i;
      uint8_t be[16];
      for (int k = 0; k < 16; k++) be[k] = v[15 - k];
      bb_put(b, be, 16);
      break;
    }
    case LADLE_PQ_BYTE_ARRAY: {
      uint32_t len = (uint32_t)ladle_str_len(c, i);
      bb_u32(b, len);
      bb_put(b, ladle_str_ptr(c, i), len);
      break;
    }
    default:
      break;
  }
}

/* Whether plain_value writes a value's bytes as they lie in memory. */
static bool plain_is_memory(const ladle_column *c, const colspec *s) {
  if (ladle_type_is_varlen(c->type.id) || c->type.id == LADLE_TYPE_BOOL) return false;
  size_t w = ladle_type_width(c->type.id);
  switch (s->physical) {
    case LADLE_PQ_INT32:
    case LADLE_PQ_FLOAT:
      return w == 4;
    case LADLE_PQ_INT64:
    case LADLE_PQ_DOUBLE:
      return w == 8;
    default:
      return false;
  }
}

/* Ordering for statistics: <0, 0, >0 in the logical type's sort order. */
static int cmp_values(const ladle_column *c, int64_t i, int64_t j) {
  switch (c->type.id) {
    case LADLE_TYPE_STRING:
    case LADLE_TYPE_BINARY:
      return ladle_str_cmp(c, i, c, j);
    case LADLE_TYPE_DECIMAL: {
      __int128 a, b;
      memcpy(&a, (const char *)c->values + 16 * i, 16);
      memcpy(&b, (const char *)c->values + 16 * j, 16);
      return a < b ? -1 : a > b;
    }
#define CMP(T)                                                      \
  {                                                                 \
    T a = ((const T *)c->values)[i], b = ((const T *)c->values)[j]; \
    return a < b ? -1 : a > b;                                      \
  }
    case LADLE_TYPE_BOOL:
    case LADLE_TYPE_UINT8:
      CMP(uint8_t)
    case LADLE_TYPE_INT8:
      CMP(int8_t)
    case LADLE_TYPE_INT16:
      CMP(int16_t)
    case LADLE_TYPE_UINT16:
      CMP(uint16_t)
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_DATE:
      CMP(int32_t)
    case LADLE_TYPE_UINT32:
      CMP(uint32_t)
    case LADLE_TYPE_UINT64:
      CMP(uint64_t)
    case LADLE_TYPE_FLOAT32:
      CMP(float)
    case LADLE_TYPE_FLOAT64:
      CMP(double)
    default:
      CMP(int64_t)
#undef CMP
  }
}

static bool is_nan(const ladle_column *c, int64_t i) {
  if (c->type.id == LADLE_TYPE_FLOAT32)
    return ((const float *)c->values)[i] != ((const float *)c->values)[i];
  if (c->type.id == LADLE_TYPE_FLOAT64)
    return ((const double *)c->values)[i] != ((const double *)c->values)[i];
  return false;
}

/* value i's bytes for dictionary lookup */
static const uint8_t *key_of(const ladle_column *c, int64_t i, int64_t *len) {
  if (ladle_type_is_varlen(c->type.id)) {
    *len = ladle_str_len(c, i);
    return (const uint8_t *)ladle_str_ptr(c, i);
  }
  size_t w = ladle_type_width(c->type.id);
  *len = (int64_t)w;
  return (const uint8_t *)c->values + (int64_t)w * i;
}

/* Whether a dictionary built over the first i rows, with ne entries so far,
 * is given up on: checked every 65536 rows, a column whose values so far are
 * mostly distinct is written plain (it would spare little, and hashing half of
 * it first costs). Checked first after 4096 rows: 97% of them distinct means
 * more than about 67,000 values drawn at random, which the check at 65536 rows
 * gives up on too: a timestamp or a user id then hashes 4,096 rows, not
 * 65,536. (A column whose first 4,096 rows are distinct and repeat later, as a
 * tiled list of ids does, is written plain where it had a dictionary.) */
static inline bool dict_gives_up(int64_t i, int64_t ne) {
  if (i == 4095) return ne > 3973;
  return (i & 65535) == 65535 && ne * 2 > i;
}

/* The rows of the first smallest and the first largest valid value of c in its
 * logical order (NaN left out), -1 when there is none: one typed loop for
 * fixed-width columns, the general comparison otherwise. */
#define MINMAX_LOOP(T)                                                    \
  {                                                                       \
    const T *x = (const T *)c->values;                                    \
    T vlo = 0, vhi = 0;                                                   \
    for (int64_t i = 0; i < n; i++) {                                     \
      if ((nulls && !ladle_column_valid(c, i)) || x[i] != x[i]) continue; \
      if (*lo < 0) {                                                      \
        *lo = *hi = i;                                                    \
        vlo = vhi = x[i];                                                 \
        continue;                                                         \
      }                                                                   \
      if (x[i] < vlo) {                                                   \
        vlo = x[i];                                                       \
        *lo = i;                                                          \
      }                                                                   \
      if (x[i] > vhi) {                                                   \
        vhi = x[i];                                                       \
        *hi = i;                                                          \
      }                                                                   \
    }                                                                     \
    return;                                                               \
  }
/* Integers without nulls: the smallest and largest values in one branch-free
 * pass, then the first rows holding them. */
#define MINMAX_INT(T)                     \
  if (!nulls && n > 0) {                  \
    const T *x = (const T *)c->values;    \
    T vlo = x[0], vhi = x[0];             \
    for (int64_t i = 1; i < n; i++) {     \
      vlo = x[i] < vlo ? x[i] : vlo;      \
      vhi = x[i] > vhi ? x[i] : vhi;      \
    }                                     \
    for (*lo = 0; x[*lo] != vlo; ++*lo) { \
    }                                     \
    for (*hi = 0; x[*hi] != vhi; ++*hi) { \
    }                                     \
    return;                               \
  }                                       \
  MINMAX_LOOP(T)
static void minmax_rows(const ladle_column *c, int64_t *lo, int64_t *hi) {
  int64_t n = c->length;
  bool nulls = c->validity != NULL && c->null_count > 0;
  *lo = *hi = -1;
  switch (c->type.id) {
    case LADLE_TYPE_BOOL:
    case LADLE_TYPE_UINT8:
      MINMAX_LOOP(uint8_t)
    case LADLE_TYPE_INT8:
      MINMAX_INT(int8_t)
    case LADLE_TYPE_INT16:
      MINMAX_INT(int16_t)
    case LADLE_TYPE_UINT16:
      MINMAX_INT(uint16_t)
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_DATE:
      MINMAX_INT(int32_t)
    case LADLE_TYPE_UINT32:
      MINMAX_INT(uint32_t)
    case LADLE_TYPE_UINT64:
      MINMAX_INT(uint64_t)
    case LADLE_TYPE_FLOAT32:
      MINMAX_LOOP(float)
    case LADLE_TYPE_FLOAT64:
      MINMAX_LOOP(double)
    case LADLE_TYPE_STRING:
    case LADLE_TYPE_BINARY:
    case LADLE_TYPE_DECIMAL:
      break;
    default:
      if (ladle_type_width(c->type.id) == 8) {
        MINMAX_INT(int64_t)
      }
      break;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!ladle_column_valid(c, i) || is_nan(c, i)) continue;
    if (*lo < 0 || cmp_values(c, i, *lo) < 0) *lo = i;
    if (*hi < 0 || cmp_values(c, i, *hi) > 0) *hi = i;
  }
}
#undef MINMAX_INT
#undef MINMAX_LOOP

/* A dictionary slot of a fixed-width column: its value beside its entry (-1: empty). */
typedef struct kslot {
  uint64_t key;
  int64_t e;
} kslot;

/* Where value v's probe starts in a table of 2^(64 - shift) slots. */
static inline uint64_t kslot_home(uint64_t v, int shift) {
  return shift >= 64 ? 0 : (v * 0x9E3779B97F4A7C15ull) >> shift;
}

/* *ks doubled (*cap, *shift follow), its entries placed again; false when out of memory. */
static bool kslots_grow(kslot **ks, int64_t *cap, int *shift) {
  int64_t old = *cap, ncap = old * 2;
  kslot *g = malloc((size_t)ncap * sizeof *g);
  if (g == NULL) return false;
  for (int64_t k = 0; k < ncap; k++) g[k].e = -1;
  for (int64_t k = 0; k < old; k++) {
    if ((*ks)[k].e < 0) continue;
    uint64_t t = kslot_home((*ks)[k].key, *shift - 1);
    while (g[t].e >= 0) t = (t + 1) & (uint64_t)(ncap - 1);
    g[t] = (*ks)[k];
  }
  free(*ks);
  *ks = g;
  *cap = ncap;
  --*shift;
  return true;
}

/* The byte-keyed table *slots (entry numbers) doubled, its ne entries (first
 * rows fr of c) hashed again; false when out of memory. */
static bool slots_grow(const ladle_column *c, const int64_t *fr, int64_t ne, int64_t **slots,
                       int64_t *cap) {
  int64_t ncap = *cap * 2;
  int64_t *g = malloc((size_t)ncap * sizeof *g);
  if (g == NULL) return false;
  for (int64_t k = 0; k < ncap; k++) g[k] = -1;
  for (int64_t e = 0; e < ne; e++) {
    int64_t el;
    const uint8_t *ek = key_of(c, fr[e], &el);
    uint64_t t = ladle_hash_bytes(ek, (size_t)el, 7) & (uint64_t)(ncap - 1);
    while (g[t] >= 0) t = (t + 1) & (uint64_t)(ncap - 1);
    g[t] = e;
  }
  free(*slots);
  *slots = g;
  *cap = ncap;
  return true;
}

/* Dictionary of the non-null values: ids[i] for each row, first row of each entry.
 * Gives up (returns false) past max_entries. */
/* An integer column's dictionary when its values span at most DICT_SPAN_MAX
 * (and no more than four per row): each value's entry found at its distance
 * from the smallest value (row lo) in a table, without hashing. The entries,
 * their order and when it gives up are build_dict's. -1 when the column is not
 * such a column, else as build_dict. */
#define DICT_SPAN_MAX ((int64_t)1 << 20)
#define SPAN_LOOP(T)                                     \
  {                                                      \
    const T *x = (const T *)c->values;                   \
    const uint64_t base = (uint64_t)x[lo];               \
    for (int64_t i = 0; i < n; i++) {                    \
      if (dict_gives_up(i, ne)) {                        \
        ok = false;                                      \
        break;                                           \
      }                                                  \
      if (!dense && !ladle_column_valid(c, i)) continue; \
      uint32_t *e = &table[(uint64_t)x[i] - base];       \
      if (*e == UINT32_MAX) {                            \
        if (ne == max_entries) {                         \
          ok = false;                                    \
          break;                                         \
        }                                                \
        *e = (uint32_t)ne;                               \
        fr[ne++] = i;                                    \
      }                                                  \
      ids[i] = *e;                                       \
    }                                                    \
    break;                                               \
  }
/* Row i of an integer or temporal column of width 1, 2, 4 or 8 as 64 bits,
 * sign- or zero-extended by its type (as SPAN_LOOP widens it). */
static uint64_t widened(const ladle_column *c, int64_t i) {
  bool sgn = ladle_type_is_signed(c->type.id) || c->type.id == LADLE_TYPE_DATE;
  switch (ladle_type_width(c->type.id)) {
    case 1:
      return sgn ? (uint64_t)((const int8_t *)c->values)[i] : ((const uint8_t *)c->values)[i];
    case 2:
      return sgn ? (uint64_t)((const int16_t *)c->values)[i] : ((const uint16_t *)c->values)[i];
    case 4:
      return sgn ? (uint64_t)((const int32_t *)c->values)[i] : ((const uint32_t *)c->values)[i];
    default:
      return ((const uint64_t *)c->values)[i];
  }
}

static int build_dict_span(const ladle_column *c, int64_t lo, int64_t hi, int64_t max_entries,
                           uint32_t *ids, int64_t **first, int64_t *nentries, ladle_error *err,
                           ladle_status *st) {
  ladle_type_id id = c->type.id;
  size_t w = ladle_type_width(id);
  if (lo < 0 || !(ladle_type_is_integer(id) || id == LADLE_TYPE_DATE || id == LADLE_TYPE_DATETIME ||
                  id == LADLE_TYPE_DURATION || id == LADLE_TYPE_TIME))
    return -1;
  uint64_t vlo = widened(c, lo), vhi = widened(c, hi);
  uint64_t span = vhi - vlo; /* the values lie in [vlo, vlo + span], mod 2^64 */
  int64_t n = c->length;
  if (span >= (uint64_t)DICT_SPAN_MAX || span >= (uint64_t)LADLE_MAX(4 * n, 65536)) return -1;
  uint32_t *table = malloc((size_t)(span + 1) * sizeof *table);
  int64_t *fr = malloc((size_t)LADLE_MAX(max_entries, 1) * sizeof *fr);
  if (table == NULL || fr == NULL) {
    free(table);
    free(fr);
    *st = LADLE_OOM(err, "dictionary");
    return 0;
  }
  memset(table, 0xff, (size_t)(span + 1) * sizeof *table);
  const bool dense = c->validity == NULL || c->null_count == 0;
  int64_t ne = 0;
  bool ok = true;
  switch (id) {
    case LADLE_TYPE_INT8:
      SPAN_LOOP(int8_t)
    case LADLE_TYPE_UINT8:
      SPAN_LOOP(uint8_t)
    case LADLE_TYPE_INT16:
      SPAN_LOOP(int16_t)
    case LADLE_TYPE_UINT16:
      SPAN_LOOP(uint16_t)
    case LADLE_TYPE_UINT32:
      SPAN_LOOP(uint32_t)
    case LADLE_TYPE_UINT64:
      SPAN_LOOP(uint64_t)
    default:
      if (w == 4) SPAN_LOOP(int32_t)
      SPAN_LOOP(int64_t)
  }
  free(table);
  if (!ok) {
    free(fr);
    return 0;
  }
  *first = fr;
  *nentries = ne;
  return 1;
}
#undef SPAN_LOOP

static bool build_dict(const ladle_column *c, int64_t max_entries, uint32_t *ids, int64_t **first,
                       int64_t *nentries, ladle_error *err, ladle_status *st) {
  /* the table starts small and doubles at half full, up to twice the entries
   * allowed (a column of 20 values in a 700k-row chunk no longer sets 16 MB of
   * slots before its first value) */
  int64_t n = c->length, maxcap = 16;
  while (maxcap < max_entries * 2) maxcap <<= 1;
  int64_t cap = LADLE_MIN(maxcap, 16384);
  int64_t *fr = malloc((size_t)LADLE_MAX(max_entries, 1) * sizeof *fr);
  if (fr == NULL) {
    *st = LADLE_OOM(err, "dictionary");
    return false;
  }
  int64_t ne = 0;
  bool ok = true;
  size_t w = ladle_type_is_varlen(c->type.id) ? 0 : ladle_type_width(c->type.id);
  if (w == 4 || w == 8) {
    /* fixed 4- and 8-byte values: hashed and compared as integers (their bits:
     * -0.0 and 0.0 stay two entries, as the byte comparison below keeps them),
     * each slot holding its value beside its entry (one cache line a probe) */
    kslot *ks = malloc((size_t)cap * sizeof *ks);
    if (ks == NULL) {
      free(fr);
      *st = LADLE_OOM(err, "dictionary");
      return false;
    }
    for (int64_t k = 0; k < cap; k++) ks[k].e = -1;
    int shift = 64;
    for (int64_t k = cap; k > 1; k >>= 1) shift--;
    const bool dense = c->validity == NULL || c->null_count == 0;
    for (int64_t i = 0; i < n; i++) {
      if (dict_gives_up(i, ne)) {
        ok = false;
        break;
      }
      if (!dense && !ladle_column_valid(c, i)) continue;
      uint64_t v;
      if (w == 4) {
        uint32_t u;
        memcpy(&u, (const char *)c->values + 4 * i, 4);
        v = u;
      } else {
        memcpy(&v, (const char *)c->values + 8 * i, 8);
      }
      uint64_t sl = kslot_home(v, shift);
      for (;; sl = (sl + 1) & (uint64_t)(cap - 1)) {
        int64_t e = ks[sl].e;
        if (e < 0) {
          if (ne == max_entries) {
            ok = false;
            break;
          }
          ks[sl].key = v;
          ks[sl].e = ne;
          fr[ne] = i;
          ids[i] = (uint32_t)ne++;
          if (ne * 2 > cap && cap < maxcap && !kslots_grow(&ks, &cap, &shift)) {
            *st = LADLE_OOM(err, "dictionary");
            ok = false;
          }
          break;
        }
        if (ks[sl].key == v) {
          ids[i] = (uint32_t)e;
          break;
        }
      }
      if (!ok) break;
    }
    free(ks);
    if (!ok) {
      free(fr);
      return false;
    }
    *first = fr;
    *nentries = ne;
    return true;
  }
  int64_t *slots = malloc((size_t)cap * sizeof *slots);
  if (slots == NULL) {
    free(fr);
    *st = LADLE_OOM(err, "dictionary");
    return false;
  }
  for (int64_t k = 0; k < cap; k++) slots[k] = -1;
  for (int64_t i = 0; i < n && ok; i++) {
    if (dict_gives_up(i, ne)) {
      ok = false;
      break;
    }
    if (!ladle_column_valid(c, i)) continue;
    int64_t len;
    const uint8_t *key = key_of(c, i, &len);
    uint64_t h = ladle_hash_bytes(key, (size_t)len, 7);
    for (uint64_t s = h & (uint64_t)(cap - 1);; s = (s + 1) & (uint64_t)(cap - 1)) {
      if (slots[s] < 0) {
        if (ne == max_entries) {
          ok = false;
          break;
        }
        slots[s] = ne;
        fr[ne] = i;
        ids[i] = (uint32_t)ne++;
        if (ne * 2 > cap && cap < maxcap && !slots_grow(c, fr, ne, &slots, &cap)) {
          *st = LADLE_OOM(err, "dictionary");
          ok = false;
        }
        break;
      }
      int64_t olen;
      const uint8_t *ok_ = key_of(c, fr[slots[s]], &olen);
      if (olen == len && memcmp(ok_, key, (size_t)len) == 0) {
        ids[i] = (uint32_t)slots[s];
        break;
      }
    }
  }
  free(slots);
  if (!ok) {
    free(fr);
    return false;
  }
  *first = fr;
  *nentries = ne;
  return true;
}

typedef struct chunk_out {
  int64_t num_values, uncompressed, compressed;
  int64_t dict_offset, data_offset;
  bool dict;
  bool has_minmax;
  bbuf min, max;
  int64_t null_count;
  /* LADLE_TRACE=2: milliseconds this chunk's task spent on its rows (a
   * list's slots and levels with them), statistics, dictionary, pages (their
   * compression apart) and compression */
  double ms[5];
} chunk_out;

enum { MS_ROWS, MS_STATS, MS_DICT, MS_PAGES, MS_ZSTD };
/* a clock read only when tracing */
static inline double trace_ms(void) { return ladle_trace_level() >= 2 ? ladle_clock_ms() : 0.0; }

static void free_zctx(void *zctx) {
#ifdef LADLE_HAVE_ZSTD
  if (zctx != NULL) ZSTD_freeCCtx(zctx);
#else
  (void)zctx;
#endif
}

/* A page left uncompressed while its chunk encodes, for a batch compressor
 * (ladle_pq_compressor): compressed with the window's other pages, then
 * placed (place_chunk). */
typedef struct pend_page {
  int type, encoding;
  int64_t num_values;
  bbuf body;
} pend_page;

typedef struct pend_chunk {
  pend_page *p;
  size_t n, cap;
} pend_chunk;

static void pend_free(pend_chunk *pc) {
  for (size_t i = 0; i < pc->n; i++) free(pc->p[i].body.p);
  free(pc->p);
  memset(pc, 0, sizeof *pc);
}

/* Appends a page's header and its stored (compressed) bytes, `raw` bytes
 * before compression, to the file buffer. */
static ladle_status put_stored(bbuf *file, int type, int64_t raw, const uint8_t *z, int64_t zlen,
                               int64_t num_values, int encoding, chunk_out *co, ladle_error *err) {
  bbuf hdr = {0};
  tw t = {&hdr, {0}, 0};
  tw_i32(&t, 1, type);
  tw_i32(&t, 2, raw);
  tw_i32(&t, 3, zlen);
#ifdef LADLE_HAVE_ZLIB
  tw_i32(&t, 4, (int32_t)(uint32_t)crc32(0L, z, (uInt)zlen));
#endif
  if (type == 0) {
    tw_begin(&t, 5);
    tw_i32(&t, 1, num_values);
    tw_i32(&t, 2, encoding);
    tw_i32(&t, 3, 3); /* RLE definition levels */
    tw_i32(&t, 4, 3);
    tw_end(&t);
  } else {
    tw_begin(&t, 7);
    tw_i32(&t, 1, num_values);
    tw_i32(&t, 2, 0); /* PLAIN dictionary */
    tw_end(&t);
  }
  bb_byte(&hdr, LADLE_TT_STOP);
  bb_put(file, hdr.p, hdr.len);
  bb_put(file, z, zlen);
  co->uncompressed += hdr.len + raw;
  co->compressed += hdr.len + zlen;
  bool oom = hdr.oom || file->oom;
  free(hdr.p);
  return oom ? LADLE_OOM(err, "parquet page") : LADLE_OK;
}

/* Appends a page (header + compressed body) to the file buffer; with `pend`,
 * keeps the page's body there instead (body is left empty) for a batch
 * compressor. */
static ladle_status put_page(bbuf *file, int type, bbuf *body, int codec, int level,
                             int64_t num_values, int encoding, bbuf *scratch, void **zctx,
                             pend_chunk *pend, chunk_out *co, ladle_error *err) {
  if (pend != NULL) {
    if (pend->n == pend->cap) {
      size_t cap = pend->cap ? pend->cap * 2 : 8;
      pend_page *p = realloc(pend->p, cap * sizeof *p);
      if (p == NULL) return LADLE_OOM(err, "parquet pages");
      pend->p = p;
      pend->cap = cap;
    }
    pend->p[pend->n++] = (pend_page){type, encoding, num_values, *body};
    memset(body, 0, sizeof *body);
    return LADLE_OK;
  }
  double t0 = trace_ms();
  LADLE_RETURN_NOT_OK(compress_page(codec, level, body, scratch, zctx, err));
  co->ms[MS_ZSTD] += trace_ms() - t0;
  return put_stored(file, type, body->len, scratch->p, scratch->len, num_values, encoding, co, err);
}

/* Definition levels of rows [a, b) as one bit-packed run, length-prefixed. */
static void put_levels(bbuf *b, const ladle_column *c, int64_t a, int64_t n) {
  int64_t groups = (n + 7) / 8;
  bbuf runs = {0};
  bb_uvarint(&runs, (uint64_t)groups << 1 | 1);
  for (int64_t g = 0; g < groups; g++) {
    uint8_t byte = 0;
    for (int k = 0; k < 8; k++) {
      int64_t i = g * 8 + k;
      if (i < n && ladle_column_valid(c, a + i)) byte |= (uint8_t)(1u << k);
    }
    bb_byte(&runs, byte);
  }
  bb_u32(b, (uint32_t)runs.len);
  bb_put(b, runs.p, runs.len);
  b->oom |= runs.oom;
  free(runs.p);
}

/* Levels levels[a..a+n) of bit width bw as one length-prefixed bit-packed run. */
static void put_level_array(bbuf *b, const uint8_t *levels, int64_t a, int64_t n, int bw) {
  int64_t groups = (n + 7) / 8;
  bbuf runs = {0};
  bb_uvarint(&runs, (uint64_t)groups << 1 | 1);
  for (int64_t g = 0; g < groups; g++) {
    uint32_t acc = 0;
    for (int k = 0; k < 8; k++) {
      int64_t i = g * 8 + k;
      if (i < n) acc |= (uint32_t)levels[a + i] << (k * bw);
    }
    for (int byte = 0; byte < bw; byte++) bb_byte(&runs, (uint8_t)(acc >> (8 * byte)));
  }
  bb_u32(b, (uint32_t)runs.len);
  bb_put(b, runs.p, runs.len);
  b->oom |= runs.oom;
  free(runs.p);
}

/* The list rows of c as slots (one per element, and one for each null or
 * empty list) with their levels: rep 0 starts a row; def 0 null list, 1 empty
 * list, 2 null element, 3 element. */
static ladle_status list_slots(const ladle_column *c, ladle_column *slots, uint8_t **reps,
                               uint8_t **defs, ladle_error *err) {
  const int64_t *off = c->values;
  int64_t n = 0;
  for (int64_t r = 0; r < c->length; r++) n += LADLE_MAX(off[r + 1] - off[r], 1);
  int64_t *idx = malloc((size_t)LADLE_MAX(n, 1) * sizeof *idx);
  *reps = malloc((size_t)LADLE_MAX(n, 1));
  *defs = malloc((size_t)LADLE_MAX(n, 1));
  if (idx == NULL || *reps == NULL || *defs == NULL) {
    free(idx);
    free(*reps);
    free(*defs);
    *reps = *defs = NULL;
    return LADLE_OOM(err, "list levels");
  }
  if (c->null_count == 0 && n == off[c->length] - off[0]) {
    /* no null or empty list: the slots are the elements as they lie */
    free(idx);
    for (int64_t r = 0, k = 0; r < c->length; r++)
      for (int64_t e = off[r]; e < off[r + 1]; e++, k++) (*reps)[k] = e > off[r];
    if (c->child->null_count == 0) {
      memset(*defs, 3, (size_t)n);
    } else {
      for (int64_t k = 0; k < n; k++) (*defs)[k] = ladle_column_valid(c->child, off[0] + k) ? 3 : 2;
    }
    ladle_status st = ladle_column_slice(c->child, off[0], n, slots, err);
    if (st != LADLE_OK) {
      free(*reps);
      free(*defs);
      *reps = *defs = NULL;
    }
    return st;
  }
  int64_t k = 0;
  for (int64_t r = 0; r < c->length; r++) {
    bool valid = ladle_column_valid(c, r);
    if (!valid || off[r + 1] == off[r]) {
      idx[k] = -1;
      (*reps)[k] = 0;
      (*defs)[k++] = valid ? 1 : 0;
      continue;
    }
    for (int64_t e = off[r]; e < off[r + 1]; e++) {
      idx[k] = e;
      (*reps)[k] = e > off[r];
      (*defs)[k++] = ladle_column_valid(c->child, e) ? 3 : 2;
    }
  }
  ladle_status st = ladle_column_gather(c->child, idx, n, slots, err);
  free(idx);
  if (st != LADLE_OK) {
    free(*reps);
    free(*defs);
    *reps = *defs = NULL;
  }
  return st;
}

/* Data pages end after PAGE_ROWS rows or about PAGE_BYTES of levels and values
 * before compression, whichever comes first: a page of at most one zstd block
 * (128 KiB) is compressed with zstd's small-input parameters, at level 3 as
 * fast or faster than a larger page of the same values and about as small
 * (random 32-bit ids below 2^18: 4x faster than in 256 KiB pages; below 1,000
 * or 60,000: 1.3x; 64-bit values, doubles, text: within 10%). */
#define PAGE_ROWS ((int64_t)1 << 16)
#define PAGE_BYTES ((int64_t)128 * 1024 - 64) /* the runs' headers and lengths inside */

/* The rows of the page starting at row a of c's n: bits per row from the
 * encoding (levels, then dictionary ids of bw bits, BOOLEAN bits, fixed-width
 * values), or the strings' own lengths; at least one row. A list's page is
 * extended by the caller to its last row's end. */
static int64_t page_rows(const ladle_column *c, const colspec *s, bool list, bool dict, int bw,
                         int64_t a, int64_t n) {
  int64_t left = LADLE_MIN(PAGE_ROWS, n - a);
  int64_t level_bits = list ? 3 : 1;
  if (!dict && s->physical == LADLE_PQ_BYTE_ARRAY) {
    int64_t bytes = 0, m = 0;
    const bool dense = c->null_count == 0;
    for (; m < left; m++) {
      int64_t v = dense || ladle_column_valid(c, a + m) ? 4 + ladle_str_len(c, a + m) : 0;
      if (m > 0 && bytes + v + (m * level_bits + 7) / 8 > PAGE_BYTES) break;
      bytes += v;
    }
    return LADLE_MAX(m, 1);
  }
  int64_t value_bits = dict                                           ? bw
                       : c->type.id == LADLE_TYPE_BOOL                ? 1
                       : s->physical == LADLE_PQ_INT32                ? 32
                       : s->physical == LADLE_PQ_FLOAT                ? 32
                       : s->physical == LADLE_PQ_FIXED_LEN_BYTE_ARRAY ? 8 * (int64_t)s->type_length
                                                                      : 64;
  return LADLE_MAX(LADLE_MIN(left, PAGE_BYTES * 8 / (level_bits + value_bits)), 1);
}

/* A column chunk; for a list, c holds its slots and reps/defs their levels. */
static ladle_status write_chunk(bbuf *file, int64_t base, const ladle_column *c, const colspec *s,
                                const uint8_t *reps, const uint8_t *defs,
                                const ladle_parquet_write_opts *o, pend_chunk *pend, chunk_out *co,
                                ladle_error *err) {
  int64_t n = c->length;
  co->num_values = n;
  co->dict_offset = -1;
  co->null_count = c->null_count;
  double t0 = trace_ms();
  /* statistics */
  int64_t lo = -1, hi = -1;
  if (o->statistics) {
    minmax_rows(c, &lo, &hi);
    if (lo >= 0) {
      co->has_minmax = true;
      bbuf tmp = {0};
      plain_value(&tmp, c, lo, s);
      int64_t skip = s->physical == LADLE_PQ_BYTE_ARRAY ? 4 : 0; /* statistics hold raw bytes */
      if (c->type.id == LADLE_TYPE_BOOL) {
        uint8_t v = ((const uint8_t *)c->values)[lo];
        bb_put(&co->min, &v, 1);
      } else {
        bb_put(&co->min, tmp.p + skip, tmp.len - skip);
      }
      tmp.len = 0;
      plain_value(&tmp, c, hi, s);
      if (c->type.id == LADLE_TYPE_BOOL) {
        uint8_t v = ((const uint8_t *)c->values)[hi];
        bb_put(&co->max, &v, 1);
      } else {
        bb_put(&co->max, tmp.p + skip, tmp.len - skip);
      }
      free(tmp.p);
    }
  }
  uint32_t *ids = NULL;
  int64_t *first = NULL, nentries = 0;
  ladle_status st = LADLE_OK;
  double t1 = trace_ms();
  co->ms[MS_STATS] += t1 - t0;
  if (o->dictionary && c->type.id != LADLE_TYPE_BOOL && n > 0) {
    ids = malloc((size_t)n * sizeof *ids);
    if (ids == NULL) return LADLE_OOM(err, "dictionary ids");
    int64_t nonnull = n - c->null_count;
    int64_t max_entries = LADLE_MAX(nonnull / 2, 1);
    int made = build_dict_span(c, lo, hi, max_entries, ids, &first, &nentries, err, &st);
    if (made == -1) made = build_dict(c, max_entries, ids, &first, &nentries, err, &st);
    if (!made) {
      free(ids);
      ids = NULL;
      if (st != LADLE_OK) return st;
    }
  }
  bbuf body = {0}, scratch = {0};
  void *zctx = NULL;
  double t2 = trace_ms(), z0 = co->ms[MS_ZSTD];
  co->ms[MS_DICT] += t2 - t1;
  if (ids != NULL) {
    co->dict = true;
    co->dict_offset = base + file->len;
    for (int64_t k = 0; k < nentries; k++) plain_value(&body, c, first[k], s);
    st = put_page(file, 2, &body, o->codec, o->compression_level, nentries, 0, &scratch, &zctx,
                  pend, co, err);
  }
  co->data_offset = base + file->len;
  int bw = 0;
  while (((int64_t)1 << bw) < nentries) bw++;
  for (int64_t a = 0, m = 0; st == LADLE_OK && (a < n || (n == 0 && a == 0)); a += m) {
    m = n == 0 ? 0 : page_rows(c, s, reps != NULL, ids != NULL, bw, a, n);
    while (reps != NULL && a + m < n && reps[a + m] != 0) m++; /* pages end between rows */
    body.len = 0;
    if (reps != NULL) {
      put_level_array(&body, reps, a, m, 1);
      put_level_array(&body, defs, a, m, 2);
    } else {
      put_levels(&body, c, a, m);
    }
    if (ids != NULL) {
      /* bit width, then the non-null indices as one bit-packed run */
      int64_t nn = 0;
      for (int64_t i = 0; i < m; i++) nn += ladle_column_valid(c, a + i);
      bb_byte(&body, (uint8_t)bw);
      int64_t groups = (nn + 7) / 8;
      bb_uvarint(&body, (uint64_t)groups << 1 | 1);
      int64_t bytes = groups * bw;
      uint8_t *dst = bb_zeros(&body, bytes); /* the run's bytes, zeroed */
      /* little-endian bit packing through a 64-bit accumulator, 32 bits stored
       * at a time (bw <= 32: what is held stays under 64 bits) */
      uint64_t acc = 0;
      int have = 0;
      const bool dense = c->null_count == 0;
      for (int64_t i = 0; i < m && dst != NULL; i++) {
        if (!dense && !ladle_column_valid(c, a + i)) continue;
        acc |= (uint64_t)ids[a + i] << have;
        have += bw;
        if (have >= 32) {
          uint32_t w32 = (uint32_t)acc;
          memcpy(dst, &w32, 4);
          dst += 4;
          acc >>= 32;
          have -= 32;
        }
      }
      for (; dst != NULL && have > 0; have -= 8, acc >>= 8) *dst++ = (uint8_t)acc;
    } else if (c->type.id == LADLE_TYPE_BOOL) {
      uint8_t byte = 0;
      int bits = 0;
      for (int64_t i = 0; i < m; i++) {
        if (!ladle_column_valid(c, a + i)) continue;
        if (((const uint8_t *)c->values)[a + i]) byte |= (uint8_t)(1u << bits);
        if (++bits == 8) {
          bb_byte(&body, byte);
          byte = 0;
          bits = 0;
        }
      }
      if (bits) bb_byte(&body, byte);
    } else if (c->null_count == 0 && plain_is_memory(c, s)) {
      int64_t w = (int64_t)ladle_type_width(c->type.id); /* the values as they lie */
      bb_put(&body, (const char *)c->values + w * a, w * m);
    } else {
      for (int64_t i = 0; i < m; i++)
        if (ladle_column_valid(c, a + i)) plain_value(&body, c, a + i, s);
    }
    if (body.oom) st = LADLE_OOM(err, "parquet page");
    if (st == LADLE_OK)
      st = put_page(file, 0, &body, o->codec, o->compression_level, m, ids ? 8 : 0, &scratch, &zctx,
                    pend, co, err);
    if (n == 0) break;
  }
  free(body.p);
  free(scratch.p);
  free_zctx(zctx);
  free(ids);
  free(first);
  co->ms[MS_PAGES] += trace_ms() - t2 - (co->ms[MS_ZSTD] - z0);
  return st;
}

/* One column chunk of the file, encoded on its own (offsets relative to the
 * chunk's start until it is placed). Chunks are encoded in parallel a window
 * at a time and written in file order while the window's later chunks still
 * encode: the task that finishes the next chunk to write writes it, and any
 * finished after it (the file's bytes go out under `mu`, one writer at a
 * time; what a busy writer leaves, the window's end writes). */
typedef struct chunk_job {
  const ladle_schema *schema;
  const ladle_table *t;
  const int64_t *starts; /* each of t's chunks' first row, and its row count last */
  const colspec *specs;
  const ladle_parquet_write_opts *o;
  chunk_out *outs;    /* every chunk's metadata, [group * ncols + col] */
  bbuf *bufs;         /* the window's encoded chunks */
  _Atomic bool *done; /* the window's chunks encoded */
  int64_t first;      /* the window's first chunk */
  int64_t n;          /* the window's chunks */
  int64_t nrows;
  pthread_mutex_t mu;
  FILE *fp;
  const char *path;
  int64_t next; /* the next chunk to write, within the window */
  int64_t pos;  /* the file's bytes so far */
  bool failed;  /* a write failed: nothing more is written */
  /* with a batch compressor: the window's chunks' pages as encoded, then
   * the window's pages compressed in one batch (zblock, page p's bytes at
   * zoff[p], zlen[p] of them; the pages of chunk k from zfirst[k]; zblock
   * NULL: the compressor declined, each page is compressed here) */
  const ladle_pq_compressor *comp;
  pend_chunk *pend;
  uint8_t *zblock;
  int64_t *zoff, *zlen;
  size_t *zfirst;
  double write_ms, batch_ms; /* LADLE_TRACE=2: in fwrite, in the batch compressor */
} chunk_job;

/* Writes the window's finished chunks from j->next on, in order, while they
 * are finished; the caller holds j->mu. False when a write failed. */
static bool write_ready(chunk_job *j) {
  double t0 = trace_ms();
  bool wrote = false;
  while (!j->failed && j->next < j->n &&
         atomic_load_explicit(&j->done[j->next], memory_order_acquire)) {
    bbuf *b = &j->bufs[j->next];
    chunk_out *co = &j->outs[j->first + j->next];
    if (co->dict) co->dict_offset += j->pos;
    co->data_offset += j->pos;
    if (b->len > 0 && fwrite(b->p, 1, (size_t)b->len, j->fp) != (size_t)b->len) j->failed = true;
    j->pos += b->len;
    free(b->p);
    memset(b, 0, sizeof *b);
    j->next++;
    wrote = true;
  }
  if (wrote) j->write_ms += trace_ms() - t0;
  return !j->failed;
}

/* After chunk k of the window is encoded: written, with those after it that
 * are ready, unless another task is writing (it or the window's end will). */
static ladle_status chunk_finished(chunk_job *j, size_t k, ladle_error *err) {
  atomic_store_explicit(&j->done[k], true, memory_order_release);
  while (pthread_mutex_trylock(&j->mu) == 0) {
    bool ok = write_ready(j);
    int64_t next = j->next;
    pthread_mutex_unlock(&j->mu);
    if (!ok) return ladle_err_set(err, LADLE_EIO, "%s: write failed", j->path);
    /* a chunk finished while this task held the lock may wait on it */
    if (next >= j->n || !atomic_load_explicit(&j->done[next], memory_order_acquire)) break;
  }
  return LADLE_OK;
}

/* Rows [a, a + m) of column i of the table: a slice of the one chunk that
 * holds them, or (a row group across chunks) their slices concatenated, by
 * the task that encodes the row group. */
static ladle_status rows_of(const chunk_job *j, size_t i, int64_t a, int64_t m, ladle_column *out,
                            ladle_error *err) {
  const ladle_table *t = j->t;
  if (t->nchunks == 0) return ladle_column_alloc(j->schema->types[i], 0, false, 0, out, err);
  /* the last chunk starting at or before a: the one holding row a (an empty
   * chunk starts where the next does), then those holding rows up to a + m */
  size_t k = 0, hi = t->nchunks;
  while (hi - k > 1) {
    size_t mid = k + (hi - k) / 2;
    if (j->starts[mid] <= a)
      k = mid;
    else
      hi = mid;
  }
  size_t e = k;
  while (e + 1 < t->nchunks && j->starts[e + 1] < a + m) e++;
  if (e == k || m == 0)
    return ladle_column_slice(&t->chunks[k].columns[i], a - j->starts[k], m, out, err);
  ladle_column *pieces = calloc(e - k + 1, sizeof *pieces);
  if (pieces == NULL) return LADLE_OOM(err, "parquet row group");
  ladle_status st = LADLE_OK;
  size_t made = 0;
  for (size_t c = k; st == LADLE_OK && c <= e; c++, made++) {
    int64_t s0 = LADLE_MAX(a, j->starts[c]), s1 = LADLE_MIN(a + m, j->starts[c + 1]);
    st = ladle_column_slice(&t->chunks[c].columns[i], s0 - j->starts[c], s1 - s0, &pieces[made],
                            err);
    if (st != LADLE_OK) break;
  }
  if (st == LADLE_OK) st = ladle_column_concat(pieces, made, out, err);
  for (size_t c = 0; c < made; c++) ladle_column_release(&pieces[c]);
  free(pieces);
  return st;
}

static ladle_status encode_chunk(void *ctx, size_t k, ladle_error *err) {
  chunk_job *j = ctx;
  int64_t idx = j->first + (int64_t)k, ncols = (int64_t)j->schema->n;
  int64_t g = idx / ncols, i = idx % ncols;
  int64_t a = g * j->o->row_group_size, m = LADLE_MIN(j->o->row_group_size, j->nrows - a);
  ladle_column part;
  double t0 = trace_ms();
  LADLE_RETURN_NOT_OK(rows_of(j, (size_t)i, a, m, &part, err));
  ladle_status st = LADLE_OK;
  uint8_t *reps = NULL, *defs = NULL;
  if (j->specs[i].list) {
    ladle_column slots;
    st = list_slots(&part, &slots, &reps, &defs, err);
    ladle_column_release(&part);
    part = slots;
    if (st != LADLE_OK) memset(&part, 0, sizeof part);
  }
  pend_chunk *pend = j->pend != NULL ? &j->pend[k] : NULL;
  j->outs[idx].ms[MS_ROWS] += trace_ms() - t0;
  if (st == LADLE_OK)
    st = write_chunk(&j->bufs[k], 0, &part, &j->specs[i], reps, defs, j->o, pend, &j->outs[idx],
                     err);
  free(reps);
  free(defs);
  ladle_column_release(&part);
  if (pend != NULL) return st; /* placed once the window's pages are compressed */
  return st == LADLE_OK ? chunk_finished(j, k, err) : st;
}

/* Chunk k of the window, its pages compressed by the batch (or here, where
 * the compressor declined), put together and written as encode_chunk writes
 * one: a dictionary page first, the data pages after it. */
static ladle_status place_chunk(void *ctx, size_t k, ladle_error *err) {
  chunk_job *j = ctx;
  pend_chunk *pc = &j->pend[k];
  chunk_out *co = &j->outs[j->first + (int64_t)k];
  bbuf *file = &j->bufs[k], scratch = {0};
  void *zctx = NULL;
  ladle_status st = LADLE_OK;
  co->dict_offset = co->dict ? 0 : -1;
  for (size_t p = 0; st == LADLE_OK && p < pc->n; p++) {
    const pend_page *pg = &pc->p[p];
    if (pg->type == 0 && (p == 0 || pc->p[p - 1].type != 0)) co->data_offset = file->len;
    if (j->zblock != NULL) {
      size_t z = j->zfirst[k] + p;
      st = put_stored(file, pg->type, pg->body.len, j->zblock + j->zoff[z], j->zlen[z],
                      pg->num_values, pg->encoding, co, err);
    } else {
      st = compress_page(j->o->codec, j->o->compression_level, &pg->body, &scratch, &zctx, err);
      if (st == LADLE_OK)
        st = put_stored(file, pg->type, pg->body.len, scratch.p, scratch.len, pg->num_values,
                        pg->encoding, co, err);
    }
  }
  free(scratch.p);
  free_zctx(zctx);
  pend_free(pc);
  return st == LADLE_OK ? chunk_finished(j, k, err) : st;
}

/* The window's encoded pages compressed in one batch by j->comp, then each
 * chunk placed on the pool's threads. A compressor that declines
 * (LADLE_ENOTSUP) or runs out of memory leaves the compression to the
 * chunks' tasks; another failure is the write's. */
static ladle_status compress_window(chunk_job *j, ladle_pool *pool, ladle_error *err) {
  size_t np = 0;
  for (int64_t k = 0; k < j->n; k++) np += j->pend[k].n;
  const uint8_t **in = malloc(LADLE_MAX(np, 1) * sizeof *in);
  int64_t *len = malloc(LADLE_MAX(np, 1) * sizeof *len);
  j->zoff = malloc(LADLE_MAX(np, 1) * sizeof *j->zoff);
  j->zlen = malloc(LADLE_MAX(np, 1) * sizeof *j->zlen);
  j->zfirst = malloc((size_t)LADLE_MAX(j->n, 1) * sizeof *j->zfirst);
  j->zblock = NULL;
  ladle_status st = LADLE_OK;
  if (in == NULL || len == NULL || j->zoff == NULL || j->zlen == NULL || j->zfirst == NULL)
    st = LADLE_OOM(err, "parquet pages");
  for (int64_t k = 0, z = 0; st == LADLE_OK && k < j->n; k++) {
    j->zfirst[k] = (size_t)z;
    for (size_t p = 0; p < j->pend[k].n; p++, z++) {
      in[z] = j->pend[k].p[p].body.p;
      len[z] = j->pend[k].p[p].body.len;
    }
  }
  if (st == LADLE_OK && np > 0) {
    ladle_error e2 = {0};
    double t0 = trace_ms();
    st = j->comp->run(j->comp->ctx, j->o->codec, np, in, len, &j->zblock, j->zoff, j->zlen, &e2);
    j->batch_ms += trace_ms() - t0;
    if (st == LADLE_ENOTSUP || st == LADLE_ENOMEM) {
      free(j->zblock);
      j->zblock = NULL;
      st = LADLE_OK;
    } else if (st != LADLE_OK) {
      *err = e2;
    }
  }
  free(in);
  free(len);
  if (st == LADLE_OK) {
    if (pool != NULL && j->n > 1)
      st = ladle_pool_run(pool, (size_t)j->n, place_chunk, j, err);
    else
      for (int64_t k = 0; st == LADLE_OK && k < j->n; k++) st = place_chunk(j, (size_t)k, err);
  }
  free(j->zblock);
  free(j->zoff);
  free(j->zlen);
  free(j->zfirst);
  j->zblock = NULL;
  j->zoff = j->zlen = NULL;
  j->zfirst = NULL;
  return st;
}

ladle_status ladle_pq_write(const ladle_table *table, const char *path,
                            const ladle_parquet_write_opts *opts, ladle_pool *pool,
                            const ladle_pq_compressor *comp, ladle_error *err) {
  const ladle_schema *schema = &table->schema;
  int64_t nrows = table->num_rows;
  ladle_parquet_write_opts o = *opts;
  double t_start = LADLE_PHASE_START();
  if (o.row_group_size <= 0) o.row_group_size = 512 * 512;
  colspec *specs = calloc(LADLE_MAX(schema->n, 1), sizeof *specs);
  if (specs == NULL) return LADLE_OOM(err, "parquet writer");
  for (size_t i = 0; i < schema->n; i++) {
    if (!spec_of(schema->types[i], &specs[i])) {
      char b1[64];
      free(specs);
      return ladle_err_set(err, LADLE_ENOTSUP,
                           "write_parquet: column '%s' of type %s cannot be written yet",
                           schema->names[i], ladle_dtype_name(schema->types[i], b1, sizeof b1));
    }
  }
  FILE *fp = fopen(path, "wb");
  if (fp == NULL) {
    free(specs);
    return ladle_err_set(err, LADLE_EIO, "%s: cannot create: %s", path, strerror(errno));
  }
  ladle_status st = LADLE_OK;
  int64_t pos = 4, ngroups = nrows == 0 ? 1 : (nrows + o.row_group_size - 1) / o.row_group_size;
  int64_t ncols = (int64_t)schema->n, nchunks = ngroups * ncols;
  chunk_out *outs = calloc((size_t)LADLE_MAX(nchunks, 1), sizeof *outs);
  int64_t *rg_rows = calloc((size_t)ngroups, sizeof *rg_rows);
  /* chunks are encoded (statistics, dictionary, pages, compression) in parallel,
   * a window of them at a time so that what waits to be written stays bounded, and
   * written in file order */
  int threads = pool != NULL ? ladle_pool_threads(pool) : 1;
  int64_t window = LADLE_MAX(LADLE_MIN(nchunks, (int64_t)threads * 16), 1);
  bbuf *bufs = calloc((size_t)window, sizeof *bufs);
  if (outs == NULL || rg_rows == NULL || bufs == NULL) st = LADLE_OOM(err, "parquet writer");
  for (int64_t g = 0; st == LADLE_OK && g < ngroups; g++)
    rg_rows[g] = LADLE_MIN(o.row_group_size, nrows - g * o.row_group_size);
  if (st == LADLE_OK && fwrite("PAR1", 1, 4, fp) != 4)
    st = ladle_err_set(err, LADLE_EIO, "%s: write failed", path);
  if (comp != NULL && o.codec == 0) comp = NULL;
  pend_chunk *pend = comp != NULL ? calloc((size_t)window, sizeof *pend) : NULL;
  if (comp != NULL && pend == NULL && st == LADLE_OK) st = LADLE_OOM(err, "parquet writer");
  _Atomic bool *done = calloc((size_t)window, sizeof *done);
  int64_t *starts = malloc((table->nchunks + 1) * sizeof *starts);
  if ((done == NULL || starts == NULL) && st == LADLE_OK) st = LADLE_OOM(err, "parquet writer");
  for (size_t k = 0; starts != NULL && k <= table->nchunks; k++)
    starts[k] = k == 0 ? 0 : starts[k - 1] + table->chunks[k - 1].length;
  chunk_job job = {.schema = schema,
                   .t = table,
                   .starts = starts,
                   .specs = specs,
                   .o = &o,
                   .outs = outs,
                   .bufs = bufs,
                   .done = done,
                   .nrows = nrows,
                   .fp = fp,
                   .path = path,
                   .pos = pos,
                   .comp = comp,
                   .pend = pend};
  pthread_mutex_init(&job.mu, NULL);
  for (int64_t first = 0; st == LADLE_OK && first < nchunks; first += window) {
    int64_t n = LADLE_MIN(window, nchunks - first);
    job.first = first;
    job.n = n;
    job.next = 0;
    for (int64_t k = 0; k < n; k++) atomic_store_explicit(&done[k], false, memory_order_relaxed);
    if (pool != NULL && n > 1) {
      st = ladle_pool_run(pool, (size_t)n, encode_chunk, &job, err);
    } else {
      for (int64_t k = 0; st == LADLE_OK && k < n; k++) st = encode_chunk(&job, (size_t)k, err);
    }
    if (st == LADLE_OK && pend != NULL) st = compress_window(&job, pool, err);
    /* what the tasks left unwritten (every task has returned) */
    if (st == LADLE_OK && !write_ready(&job))
      st = ladle_err_set(err, LADLE_EIO, "%s: write failed", path);
    for (int64_t k = 0; k < n; k++) {
      free(bufs[k].p);
      memset(&bufs[k], 0, sizeof bufs[k]);
      if (pend != NULL) pend_free(&pend[k]);
    }
  }
  free(pend);
  pos = job.pos;
  if (ladle_trace_level() >= 2) {
    /* each part's milliseconds summed over the tasks (thread time), beside the write's */
    static const char *what[5] = {
        "parquet write: rows sliced, lists' slots (task ms)", "parquet write: statistics (task ms)",
        "parquet write: dictionaries (task ms)", "parquet write: pages encoded (task ms)",
        "parquet write: pages compressed (task ms)"};
    double now = ladle_clock_ms();
    for (int w = 0; w < 5; w++) {
      double sum = 0;
      for (int64_t k = 0; k < nchunks; k++) sum += outs[k].ms[w];
      ladle_trace_phase(what[w], nrows, now - sum);
    }
    ladle_trace_phase("parquet write: fwrite, in order", nrows, now - job.write_ms);
    if (comp != NULL)
      ladle_trace_phase("parquet write: batch compressor", nrows, now - job.batch_ms);
    ladle_trace_phase("parquet write: chunks (wall)", nrows, t_start);
  }
  pthread_mutex_destroy(&job.mu);
  free(done);
  free(starts);
  free(bufs);
  /* the footer */
  bbuf foot = {0};
  if (st == LADLE_OK) {
    tw t = {&foot, {0}, 0};
    tw_i32(&t, 1, 1);
    int64_t nelems = 1;
    for (size_t i = 0; i < schema->n; i++) nelems += schema_elems(&specs[i]);
    tw_list(&t, 2, LADLE_TT_STRUCT, nelems);
    tw_elem_begin(&t);
    tw_bin(&t, 4, "schema", 6);
    tw_i32(&t, 5, (int64_t)schema->n);
    tw_end(&t);
    for (size_t i = 0; i < schema->n; i++) write_schema_elem(&t, schema->names[i], &specs[i]);
    tw_i64(&t, 3, LADLE_TT_I64, nrows);
    tw_list(&t, 4, LADLE_TT_STRUCT, ngroups);
    for (int64_t g = 0; g < ngroups; g++) {
      tw_elem_begin(&t);
      tw_list(&t, 1, LADLE_TT_STRUCT, (int64_t)schema->n);
      int64_t total = 0;
      for (size_t i = 0; i < schema->n; i++) {
        chunk_out *co = &outs[g * (int64_t)schema->n + (int64_t)i];
        total += co->uncompressed;
        tw_elem_begin(&t);
        tw_i64(&t, 2, LADLE_TT_I64, co->dict ? co->dict_offset : co->data_offset);
        tw_begin(&t, 3);
        tw_i32(&t, 1, specs[i].physical);
        tw_list(&t, 2, LADLE_TT_I32, co->dict ? 3 : 2);
        bb_uvarint(&foot, (uint64_t)(0 << 1));               /* PLAIN */
        bb_uvarint(&foot, (uint64_t)(3 << 1));               /* RLE */
        if (co->dict) bb_uvarint(&foot, (uint64_t)(8 << 1)); /* RLE_DICTIONARY */
        tw_list(&t, 3, LADLE_TT_BINARY, specs[i].list ? 3 : 1);
        bb_uvarint(&foot, strlen(schema->names[i]));
        bb_put(&foot, schema->names[i], (int64_t)strlen(schema->names[i]));
        if (specs[i].list) {
          bb_uvarint(&foot, 4);
          bb_put(&foot, "list", 4);
          bb_uvarint(&foot, 7);
          bb_put(&foot, "element", 7);
        }
        tw_i32(&t, 4, o.codec);
        tw_i64(&t, 5, LADLE_TT_I64, co->num_values);
        tw_i64(&t, 6, LADLE_TT_I64, co->uncompressed);
        tw_i64(&t, 7, LADLE_TT_I64, co->compressed);
        tw_i64(&t, 9, LADLE_TT_I64, co->data_offset);
        if (co->dict) tw_i64(&t, 11, LADLE_TT_I64, co->dict_offset);
        if (o.statistics) {
          tw_begin(&t, 12);
          tw_i64(&t, 3, LADLE_TT_I64, co->null_count);
          if (co->has_minmax) {
            tw_bin(&t, 5, co->max.p, co->max.len);
            tw_bin(&t, 6, co->min.p, co->min.len);
          }
          tw_end(&t);
        }
        tw_end(&t); /* ColumnMetaData */
        tw_end(&t); /* ColumnChunk */
      }
      tw_i64(&t, 2, LADLE_TT_I64, total);
      tw_i64(&t, 3, LADLE_TT_I64, rg_rows[g]);
      tw_end(&t);
    }
    tw_bin(&t, 6, "ladle " LADLE_VERSION, (int64_t)strlen("ladle " LADLE_VERSION));
    /* column_orders: TypeDefinedOrder for every column, so readers trust min/max */
    tw_list(&t, 7, LADLE_TT_STRUCT, (int64_t)schema->n);
    for (size_t i = 0; i < schema->n; i++) {
      tw_elem_begin(&t);
      tw_begin(&t, 1);
      tw_end(&t);
      tw_end(&t);
    }
    bb_byte(&foot, LADLE_TT_STOP);
    if (foot.oom) st = LADLE_OOM(err, "parquet footer");
  }
  if (st == LADLE_OK) {
    uint8_t tail[8] = {(uint8_t)foot.len,
                       (uint8_t)(foot.len >> 8),
                       (uint8_t)(foot.len >> 16),
                       (uint8_t)(foot.len >> 24),
                       'P',
                       'A',
                       'R',
                       '1'};
    if (fwrite(foot.p, 1, (size_t)foot.len, fp) != (size_t)foot.len || fwrite(tail, 1, 8, fp) != 8)
      st = ladle_err_set(err, LADLE_EIO, "%s: write failed", path);
  }
  if (fclose(fp) != 0 && st == LADLE_OK)
    st = ladle_err_set(err, LADLE_EIO, "%s: close failed", path);
  for (int64_t k = 0; outs && k < nchunks; k++) {
    free(outs[k].min.p);
    free(outs[k].max.p);
  }
  free(outs);
  free(rg_rows);
  free(foot.p);
  free(specs);
  if (st != LADLE_OK) remove(path);
  return st;
}
