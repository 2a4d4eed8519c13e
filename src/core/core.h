/* core.h — ladle's internal building blocks: errors, allocators, refcounted
 * device-tagged buffers, columns, tables, bitmaps, hashing and the thread pool.
 *
 * Invariants
 *  - A column is Arrow layout except booleans, which keep one byte per value (as
 *    libcudf's BOOL8; DLPack and torch want bytes too). Validity is a bitmap that
 *    always starts at bit 0 of its pointer, or NULL when every value is valid.
 *  - String offsets are int64 (Arrow "large string"); offsets[0] may be nonzero.
 *  - Columns and tables never change after they are built; sharing is by
 *    reference on the buffers.
 */
#ifndef LADLE_CORE_H
#define LADLE_CORE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ladle.h"

#define LADLE_INTERNAL __attribute__((visibility("hidden")))

#define LADLE_RETURN_NOT_OK(expr)    \
  do {                               \
    ladle_status s__ = (expr);       \
    if (s__ != LADLE_OK) return s__; \
  } while (0)

#define LADLE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define LADLE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define LADLE_UNUSED(x) (void)(x)

/* ------------------------------------------------------------------ errors */

/* Fills err (if not NULL) and returns code. */
ladle_status ladle_err_set(ladle_error *err, ladle_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends context ("in filter: ") to an existing message; returns err->code. */
ladle_status ladle_err_context(ladle_error *err, ladle_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "out of memory: what", or, where this thread's last allocation was refused by
 * its memory resource's limit, what was asked, what was in use and the limit. */
ladle_status ladle_err_oom(ladle_error *err, const char *what);
#define LADLE_OOM(err, what) ladle_err_oom((err), (what))

/* -------------------------------------------------------------- allocators */

/* A table of functions; `ctx` is the allocator's own state. */
typedef struct ladle_allocator {
  void *(*alloc)(void *ctx, size_t size); /* 64-byte aligned; NULL on failure */
  void (*free)(void *ctx, void *p, size_t size);
  void *ctx;
  ladle_device_type device;
  int device_id;
  const char *name;
} ladle_allocator;

/* The host allocator (immutable, stateless). */
const ladle_allocator *ladle_allocator_host(void);

/* The directory of the object holding ladle's code (libladle.so or the
 * Python module), with a trailing '/', into buf; false when unknown. The
 * separately built CUDA backend and MPI shim are looked for there. */
bool ladle_own_dir(char *buf, size_t cap);

/* ------------------------------------------------------- memory resources */

/* A memory resource: an allocator over a parent (the host allocator today; a
 * device pool later) that counts the bytes it has handed out (current and
 * peak) and refuses an allocation that would take them past its limit (0: no
 * limit). The engine owns one; while a query runs, every buffer and scratch
 * array comes from it: the thread that executes sets it as its current
 * resource, and the thread pool hands the submitter's to its workers (as it
 * does the cancellation flag). Memory outlives the engine where a result does:
 * each live block holds a reference to the resource. Over the host allocator
 * it keeps released big blocks for reuse (buffer.c), until its owner releases
 * it. */
typedef struct ladle_mr ladle_mr;
ladle_status ladle_mr_create(const ladle_allocator *parent, int64_t limit, ladle_mr **out,
                             ladle_error *err);
void ladle_mr_release(ladle_mr *mr);  /* the owner's reference */
ladle_mr *ladle_mr_ref(ladle_mr *mr); /* another holder's (NULL passes) */
void ladle_mr_unref(ladle_mr *mr);    /* drops ladle_mr_ref's (NULL passes) */
ladle_mr *ladle_mr_set(ladle_mr *mr); /* this thread's current resource; returns the last one */
ladle_mr *ladle_mr_current(void);
int64_t ladle_mr_bytes(const ladle_mr *mr);
int64_t ladle_mr_peak(const ladle_mr *mr);
/* Bytes of released big blocks the resource keeps for reuse (its own cache,
 * unmapped when the owner releases it). */
int64_t ladle_mr_cached(const ladle_mr *mr);
/* A query on the resource ended: released big blocks it did not take again
 * (kept since an earlier query) go back to the system, so that an engine
 * idle after a run of different queries holds what the last one freed, not
 * the sum of every size any query used (TPC-H SF10's 22 queries held 16 GiB).
 * Blocks released during or after it stay for the next query. */
void ladle_mr_query_done(ladle_mr *mr);

/* ----------------------------------------------------------------- buffers */

/* A refcounted block of memory that knows its device. Either allocated by
 * `alloc`, or foreign (imported): then `foreign_release(owner)` runs when the last
 * reference goes. */
typedef struct ladle_buffer {
  atomic_long refcount;
  void *data;
  size_t size;
  ladle_device_type device;
  int device_id;
  const ladle_allocator *alloc; /* NULL when foreign */
  void (*foreign_release)(void *owner);
  void *owner;
} ladle_buffer;

ladle_status ladle_buffer_alloc(const ladle_allocator *alloc, size_t size, ladle_buffer **out,
                                ladle_error *err);
/* Wraps foreign host memory; release(owner) is called when the last ref goes. */
ladle_status ladle_buffer_wrap(void *data, size_t size, void (*release)(void *owner), void *owner,
                               ladle_buffer **out, ladle_error *err);
ladle_buffer *ladle_buffer_ref(ladle_buffer *b);
void ladle_buffer_release(ladle_buffer *b);

/* ------------------------------------------------------------------- types */

/* Bytes per value for fixed-width types (BOOL is 1); 0 for STRING and NULL. */
size_t ladle_type_width(ladle_type_id id);
bool ladle_type_is_integer(ladle_type_id id);
bool ladle_type_is_signed(ladle_type_id id);
bool ladle_type_is_float(ladle_type_id id);
bool ladle_type_is_numeric(ladle_type_id id); /* integer or float */
bool ladle_type_is_temporal(ladle_type_id id);
/* STRING and BINARY: int64 offsets[length + 1] in `values`, bytes in `chars`. */
static inline bool ladle_type_is_varlen(ladle_type_id id) {
  return id == LADLE_TYPE_STRING || id == LADLE_TYPE_BINARY;
}
/* DECIMAL, TIME, BINARY, LIST, INT128 and UINT128 are carried: moved by scans,
 * filters, slices, joins, sorts (as payload), unions and first/last; cast where
 * ladle_cast_supported says; never keys or arithmetic yet (but for the INT128
 * binary operators the binder lets through, see bind.c). */
static inline bool ladle_type_is_carried(ladle_type_id id) {
  return id == LADLE_TYPE_DECIMAL || id == LADLE_TYPE_TIME || id == LADLE_TYPE_BINARY ||
         id == LADLE_TYPE_LIST || id == LADLE_TYPE_INT128 || id == LADLE_TYPE_UINT128;
}
/* Polars' supertype for arithmetic and comparison; false if none. */
bool ladle_type_supertype(ladle_dtype a, ladle_dtype b, ladle_dtype *out);
/* Physical storage class used by kernels. */
typedef enum ladle_phys {
  LADLE_PHYS_NULL,
  LADLE_PHYS_U8, /* also BOOL */
  LADLE_PHYS_I8,
  LADLE_PHYS_I16,
  LADLE_PHYS_I32,
  LADLE_PHYS_I64,
  LADLE_PHYS_U16,
  LADLE_PHYS_U32,
  LADLE_PHYS_U64,
  LADLE_PHYS_F32,
  LADLE_PHYS_F64,
  LADLE_PHYS_STR
} ladle_phys;
ladle_phys ladle_type_phys(ladle_type_id id);

/* Names of functions and aggregations ("str.contains", "n_unique"). */
const char *ladle_func_name(ladle_func f);
const char *ladle_agg_name(ladle_agg_op a);

/* ----------------------------------------------------------------- bitmaps */

static inline bool ladle_bit_get(const uint8_t *bits, int64_t i) {
  return (bits[i >> 3] >> (i & 7)) & 1;
}
static inline void ladle_bit_set(uint8_t *bits, int64_t i, bool v) {
  if (v)
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  else
    bits[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}
static inline int64_t ladle_bitmap_bytes(int64_t n) { return (n + 7) / 8; }

/* Reads exactly len bytes at offset off of fd into buf (pread, retried on
 * short reads); an error names the path, the size and the offset. */
ladle_status ladle_read_at(int fd, const char *path, int64_t off, void *buf, int64_t len,
                           ladle_error *err);

/* Whether the file readers map files (the default) or read them into buffers
 * of their own: LADLE_MMAP=0 for filesystems where a mapping misbehaves, and
 * for the sanitizer tests and fuzzers, where a buffer sized exactly to the
 * data lets AddressSanitizer see any read past it. */
static inline bool ladle_use_mmap(void) {
  const char *v = getenv("LADLE_MMAP");
  return v == NULL || strcmp(v, "0") != 0;
}
int64_t ladle_bitmap_count_unset(const uint8_t *bits, int64_t n);

/* keep[i] = (init ? 1 : keep[i]) & (bit i of bits, or its complement with
 * negate) for i < n: 0/1 bytes from a bitmap, eight a step. */
void ladle_bitmap_and_bytes(const uint8_t *bits, int64_t n, bool negate, bool init, uint8_t *keep);

/* ----------------------------------------------------------------- columns */

/* The data buffers that string views point into (see ladle_column.views). */
typedef struct ladle_viewbufs {
  int64_t n;
  const char *const *data;
  const int64_t *sizes; /* bytes of each */
} ladle_viewbufs;

typedef struct ladle_column {
  ladle_dtype type;
  int64_t length;
  int64_t null_count;
  const uint8_t *validity; /* NULL: all valid */
  const void *values;      /* fixed: `length` values; STRING: int64 offsets[length+1] */
  const char *chars;       /* STRING bytes */
  ladle_buffer *owners[3]; /* keep validity, values, chars alive (any may be NULL) */
  /* LIST: `values` are int64 offsets[length + 1] into this column of elements
   * (offsets[0] need not be 0 after a slice); owners[2] keeps it alive. */
  const struct ladle_column *child;
  /* STRING, optional: the same strings as Arrow string views (16 bytes per
   * row: up to 12 bytes inline, else length, 4-byte prefix, index into vbufs
   * and offset), kept so that an export hands them over instead of building
   * them. Every operation that makes new rows drops them (a fresh column has
   * none); slices keep them. A column with views and no `values` is
   * "view-only": only a result on its way out holds one (exec.c), and
   * ladle_result_table turns it back into offsets before anything else sees
   * it. */
  const uint8_t *views;
  const ladle_viewbufs *vbufs;
  ladle_buffer *vowners[2]; /* keep views and vbufs (and their bytes) alive */
} ladle_column;

/* Writes the Arrow view of string (p, len): inline up to 12 bytes, else its
 * length, first 4 bytes, data buffer `buf` and offset `off` there. */
static inline void ladle_view_make(uint8_t *v, const void *p, int32_t len, int32_t buf,
                                   int32_t off) {
  memset(v, 0, 16);
  memcpy(v, &len, 4);
  if (len <= 12) {
    memcpy(v + 4, p, (size_t)len);
  } else {
    memcpy(v + 4, p, 4);
    memcpy(v + 8, &buf, 4);
    memcpy(v + 12, &off, 4);
  }
}

/* The bytes of view v (its length in *len): inline up to 12, else in data
 * buffer bi of vb at bo; NULL when it points outside vb. */
static inline const char *ladle_view_bytes(const uint8_t *v, const ladle_viewbufs *vb,
                                           int32_t *len) {
  int32_t bi, bo;
  memcpy(len, v, 4);
  if (*len <= 12) return (const char *)v + 4;
  memcpy(&bi, v + 8, 4);
  memcpy(&bo, v + 12, 4);
  if (bi < 0 || bo < 0 || bi >= vb->n || vb->data[bi] == NULL) return NULL;
  if (vb->sizes != NULL && (int64_t)bo + *len > vb->sizes[bi]) return NULL;
  return vb->data[bi] + bo;
}

/* Converts views [a, e) into offsets o (o[a] already set) and bytes from
 * chars + o[a], writing no byte at or past chars + limit. False when a view is
 * malformed. */
bool ladle_views_copy(const uint8_t *views, const ladle_viewbufs *vb, int64_t a, int64_t e,
                      int64_t *o, char *chars, int64_t limit);

static inline bool ladle_column_view_only(const ladle_column *c) {
  return c->views != NULL && c->values == NULL;
}
/* Counts a view-only column made (ladle_view_only_columns). */
void ladle_view_only_made(void);
/* A view-only column's strings as offsets and bytes (the views kept). */
ladle_status ladle_column_from_views(const ladle_column *c, ladle_column *out, ladle_error *err);
/* c with offsets and bytes: converted where it is view-only, else a reference
 * (what anything that reads `values` of a result's columns takes first:
 * an exchange's pack, a concatenation). */
ladle_status ladle_column_unviewed(const ladle_column *c, ladle_column *out, ladle_error *err);
/* The rows of a STRING column with views where keep (0/1 bytes, n of them
 * 1) is 1, as a view-only column sharing its data buffers. */
ladle_status ladle_column_compact_views(const ladle_column *src, const uint8_t *keep, int64_t n,
                                        ladle_column *out, ladle_error *err);
/* Rows idx[0..n) (-1: null) of a STRING column with views, as a view-only
 * column sharing its data buffers. */
ladle_status ladle_column_gather_views(const ladle_column *src, const int64_t *idx, int64_t n,
                                       ladle_column *out, ladle_error *err);

static inline bool ladle_column_valid(const ladle_column *c, int64_t i) {
  return c->validity == NULL || ladle_bit_get(c->validity, i);
}
#define LADLE_COL_MUT(c, T) ((T *)(uintptr_t)(c)->values)
#define LADLE_COL_VALIDITY_MUT(c) ((uint8_t *)(uintptr_t)(c)->validity)
#define LADLE_COL_CHARS_MUT(c) ((char *)(uintptr_t)(c)->chars)

/* Value i of a numeric (or Boolean, temporal) column as a double (0 for
 * another type). */
static inline double ladle_column_value_f64(const ladle_column *c, int64_t i) {
  switch (ladle_type_phys(c->type.id)) {
    case LADLE_PHYS_U8:
      return ((const uint8_t *)c->values)[i];
    case LADLE_PHYS_I8:
      return ((const int8_t *)c->values)[i];
    case LADLE_PHYS_I16:
      return ((const int16_t *)c->values)[i];
    case LADLE_PHYS_I32:
      return ((const int32_t *)c->values)[i];
    case LADLE_PHYS_I64:
      return (double)((const int64_t *)c->values)[i];
    case LADLE_PHYS_U16:
      return ((const uint16_t *)c->values)[i];
    case LADLE_PHYS_U32:
      return ((const uint32_t *)c->values)[i];
    case LADLE_PHYS_U64:
      return (double)((const uint64_t *)c->values)[i];
    case LADLE_PHYS_F32:
      return ((const float *)c->values)[i];
    case LADLE_PHYS_F64:
      return ((const double *)c->values)[i];
    default:
      return 0;
  }
}

/* Allocates a column of `length` values (uninitialised) with a validity bitmap
 * when `nullable` (all bits set valid) and, for STRING, `chars_size` bytes. */
ladle_status ladle_column_alloc(ladle_dtype type, int64_t length, bool nullable, int64_t chars_size,
                                ladle_column *out, ladle_error *err);
/* Whether the kernel table's `sequence` takes (start, n, type): LADLE_ENOTSUP
 * for a type other than INT32, INT64, UINT32 or UINT64, LADLE_EINVAL naming
 * the type when n < 0 or start + n - 1 does not fit it (one check for every
 * backend). */
ladle_status ladle_sequence_check(int64_t start, int64_t n, ladle_dtype type, ladle_error *err);
/* The same from allocator `a` (NULL: the thread's current memory resource,
 * else the host's). On a device (a->device is not the CPU) nothing is
 * written: the validity bitmap, when asked for, is padded to whole 32-bit
 * words and left for the caller to fill, as are offsets and values. */
ladle_status ladle_column_alloc_with(const ladle_allocator *a, ladle_dtype type, int64_t length,
                                     bool nullable, int64_t chars_size, ladle_column *out,
                                     ladle_error *err);
/* The allocator of a memory resource (for ladle_column_alloc_with and
 * ladle_kctx.alloc). */
const ladle_allocator *ladle_mr_allocator(ladle_mr *mr);
/* Adds a validity bitmap (all valid) to a column allocated without one. */
ladle_status ladle_column_add_validity(ladle_column *c, ladle_error *err);
/* Recomputes null_count from the bitmap and drops an all-valid bitmap. */
void ladle_column_finish_nulls(ladle_column *c);
/* A column of `length` nulls of `type`. */
ladle_status ladle_column_nulls(ladle_dtype type, int64_t length, ladle_column *out,
                                ladle_error *err);
/* Makes `child` (moved in; zeroed on return) the elements of LIST column c,
 * replacing any child it had. */
ladle_status ladle_column_set_child(ladle_column *c, ladle_column *child, ladle_error *err);
void ladle_column_release(ladle_column *c);
/* A new reference to the same buffers. */
void ladle_column_copy_ref(const ladle_column *src, ladle_column *dst);
ladle_status ladle_column_slice(const ladle_column *src, int64_t offset, int64_t length,
                                ladle_column *out, ladle_error *err);
ladle_status ladle_column_concat(const ladle_column *cols, size_t n, ladle_column *out,
                                 ladle_error *err);
/* The same, copying the pieces in parallel on `pool` (NULL: on this thread). */
struct ladle_pool;
ladle_status ladle_column_concat_pool(const ladle_column *cols, size_t n, struct ladle_pool *pool,
                                      ladle_column *out, ladle_error *err);
/* out[i] = src[idx[i]]; idx[i] < 0 gives null. */
/* Scratch memory for big transient arrays (group ids, join pairs, row
 * indices): like malloc/calloc, but arrays of 1 MiB and more reuse the size
 * classes of big buffers instead of fresh mappings. Free only with
 * ladle_scratch_free. */
void *ladle_scratch_alloc(size_t size, bool zero);
void ladle_scratch_free(void *p);
/* n zeroed bytes from malloc (free() them), zeroed by writing. calloc hands out
 * fresh pages untouched, mapped to the kernel's shared zero page at the first
 * read; a hash table or accumulator array is read before it is written, so
 * every page then takes a copy-on-write fault whose TLB flush interrupts every
 * thread of the process: at 16 threads that costs more than the work. Written
 * first, a page faults once, in place. */
void *ladle_zalloc(size_t n);

ladle_status ladle_column_gather(const ladle_column *src, const int64_t *idx, int64_t n,
                                 ladle_column *out, ladle_error *err);
/* Rows [a, e) of a gather of a fixed-width src into c, allocated for all n
 * rows with validity when src has some or neg (some index is -1): a piece of a
 * parallel gather. a is a multiple of 8 (pieces share no validity byte). */
void ladle_column_gather_rows(const ladle_column *src, const int64_t *idx, int64_t a, int64_t e,
                              bool neg, ladle_column *c);

/* The concatenation of cols as a view of their shared buffers, when they are
 * adjacent slices of one column (a table re-split into morsels); false when
 * not, with nothing done. */
bool ladle_column_concat_view(const ladle_column *cols, size_t n, ladle_column *out);
/* Consecutive pieces of one column (a table's partitions) seen as one: each
 * piece's first row, and per page of 2^shift rows the first piece in it. */
typedef struct ladle_pieces {
  size_t n;
  int64_t *starts; /* n + 1 */
  uint32_t *page;
  int shift;
} ladle_pieces;
ladle_status ladle_pieces_index(const ladle_column *src, size_t nsrc, ladle_pieces *out,
                                ladle_error *err);
void ladle_pieces_release(ladle_pieces *p);
/* What ladle_column_gather gives on the concatenation of the pieces src[0..px->n),
 * without making it; and a slice of that concatenation (a slice of one piece
 * when it lies in one). */
ladle_status ladle_column_gather_pieces(const ladle_column *src, const ladle_pieces *px,
                                        const int64_t *idx, int64_t n, ladle_column *out,
                                        ladle_error *err);
ladle_status ladle_column_slice_pieces(const ladle_column *src, const ladle_pieces *px,
                                       int64_t offset, int64_t length, ladle_column *out,
                                       ladle_error *err);
/* The rows of src whose keep byte is 1 (n_keep of them, counted by the
 * caller), in order, without an index array; src not a LIST. */
ladle_status ladle_column_compact(const ladle_column *src, const uint8_t *keep, int64_t n_keep,
                                  ladle_column *out, ladle_error *err);
/* Repeats row 0 of src `length` times (broadcast of a scalar). */
ladle_status ladle_column_broadcast(const ladle_column *src, int64_t length, ladle_column *out,
                                    ladle_error *err);
static inline int64_t ladle_str_len(const ladle_column *c, int64_t i) {
  const int64_t *o = (const int64_t *)c->values;
  return o[i + 1] - o[i];
}
static inline const char *ladle_str_ptr(const ladle_column *c, int64_t i) {
  return c->chars + ((const int64_t *)c->values)[i];
}

/* Byte-wise order of string a[i] and b[j] (UTF-8 sorts by code point this way). */
static inline int ladle_str_cmp(const ladle_column *a, int64_t i, const ladle_column *b,
                                int64_t j) {
  int64_t la = ladle_str_len(a, i), lb = ladle_str_len(b, j);
  int64_t n = la < lb ? la : lb;
  int c = n > 0 ? memcmp(ladle_str_ptr(a, i), ladle_str_ptr(b, j), (size_t)n) : 0;
  if (c != 0) return c;
  return la < lb ? -1 : la > lb;
}

/* ------------------------------------------------------------------ tables */

typedef enum ladle_distribution {
  LADLE_DIST_LOCAL = 0, /* one process's private data */
  LADLE_DIST_SHARDED,   /* ranks hold different rows */
  LADLE_DIST_REPLICATED /* every rank holds all rows */
} ladle_distribution;

typedef struct ladle_schema {
  size_t n;
  char **names;
  ladle_dtype *types;
} ladle_schema;

ladle_status ladle_schema_init(ladle_schema *s, size_t n, ladle_error *err);
ladle_status ladle_schema_set(ladle_schema *s, size_t i, const char *name, ladle_dtype type,
                              ladle_error *err);
ladle_status ladle_schema_copy(const ladle_schema *src, ladle_schema *dst, ladle_error *err);
void ladle_schema_release(ladle_schema *s);
/* Index of `name`, or -1. */
int64_t ladle_schema_find(const ladle_schema *s, const char *name);

/* One partition: `length` rows of every column of the table. */
typedef struct ladle_chunk {
  int64_t length;
  ladle_column *columns; /* schema.n of them */
  /* the rows of the table this chunk is part of (ladle_table_seal); 0 for a
   * chunk standing alone: a row-wise expression's column is that long, which
   * picks Polars' formula for a division by one value */
  int64_t table_rows;
} ladle_chunk;

struct ladle_table {
  atomic_long refcount;
  ladle_schema schema;
  size_t nchunks;
  ladle_chunk *chunks;
  int64_t num_rows;
  ladle_distribution dist;
};

/* A table with `nchunks` empty chunks (columns zeroed) and refcount 1. */
ladle_status ladle_table_create(const ladle_schema *schema, size_t nchunks, ladle_table **out,
                                ladle_error *err);
/* Recomputes num_rows from the chunks. */
void ladle_table_seal(ladle_table *t);
/* The whole table's column i as one column (a reference when one chunk). */
ladle_status ladle_table_concat_column(const ladle_table *t, size_t i, ladle_column *out,
                                       ladle_error *err);
/* The same, the pieces copied in parallel on pool (NULL: this thread). */
ladle_status ladle_table_concat_column_pool(const ladle_table *t, size_t i, struct ladle_pool *pool,
                                            ladle_column *out, ladle_error *err);
/* A table with one chunk holding all rows. */
ladle_status ladle_table_combine(const ladle_table *t, ladle_table **out, ladle_error *err);
/* Splits t into chunks of at most `rows` rows (zero copy slices). */
ladle_status ladle_table_rechunk(const ladle_table *t, int64_t rows, ladle_table **out,
                                 ladle_error *err);
/* The same with each chunk longer than `rows` cut into equal slices (a
 * multiple of 64 rows each, but the last) of at most `rows`. */
ladle_status ladle_table_split(const ladle_table *t, int64_t rows, ladle_table **out,
                               ladle_error *err);

/* ----------------------------------------------------------------- hashing */

static inline uint64_t ladle_hash_mix(uint64_t x) {
  /* A 64-bit finalizer (xor-shift-multiply), good avalanche for integer keys. */
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return x;
}
static inline uint64_t ladle_hash_combine(uint64_t h, uint64_t v) {
  return ladle_hash_mix(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}
uint64_t ladle_hash_bytes(const void *data, size_t len, uint64_t seed);

/* The partition hash: which of nparts parts a row goes to in an exchange
 * between ranks (the kernel table's hash_partition). It must be the same on
 * every rank, process and device, so every backend computes it bit for bit
 * as written here (a CUDA kernel copies these lines and ladle_hash_bytes):
 *
 *   h = LADLE_PART_SEED
 *   for each key column k, first to last: h = ladle_part_step(h, v_k)
 *   part = ladle_part_of(h, nparts)
 *
 * where v_k, the row's 64-bit key value in column k, is
 *  - a null (any type, and every row of a NULL column): LADLE_PART_NULL;
 *  - an integer of any width and signedness, DATE, DATETIME, DURATION, TIME:
 *    its value widened to 64 bits, two's complement (Int32 5 and Int64 5 are
 *    both 5; a UInt64 above INT64_MAX is its bit pattern); BOOL 0 or 1;
 *  - FLOAT32 and FLOAT64: ladle_part_key_double of the value as a double
 *    (-0.0 as 0.0, every NaN as one NaN);
 *  - STRING and BINARY: ladle_part_key_bytes of its bytes;
 *  - DECIMAL, INT128, UINT128: ladle_part_key_bytes of its 16 bytes
 *    (little-endian, as stored).
 * The part is a multiply-shift of the high 32 bits of h, not h % nparts. */
#define LADLE_PART_SEED 0x243f6a8885a308d3ULL /* pi's first hex digits */
#define LADLE_PART_NULL 0x13198a2e03707344ULL /* the next ones */
static inline uint64_t ladle_part_step(uint64_t h, uint64_t v) {
  return ladle_hash_mix((h * 0x9e3779b97f4a7c15ULL) ^ v);
}
static inline uint64_t ladle_part_key_double(double d) {
  if (d != d) return 0x7ff8000000000000ULL; /* the one NaN */
  if (d == 0) return 0;                     /* -0.0 as 0.0 */
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}
static inline uint64_t ladle_part_key_bytes(const void *p, size_t len) {
  return ladle_hash_bytes(p, len, LADLE_PART_SEED);
}
/* In [0, nparts) for nparts >= 1: ((h >> 32) * nparts) >> 32. */
static inline int ladle_part_of(uint64_t h, int nparts) {
  return (int)(((h >> 32) * (uint64_t)nparts) >> 32);
}

/* -------------------------------------------------------------------- UTF-8 */

/* The number of leading bytes of s[0..n) below 0x80 (n when all are ASCII);
 * 32 bytes a step. */
int64_t ladle_ascii_prefix(const uint8_t *s, int64_t n);
/* An unsigned LEB128 varint at *p (not past end) into *out, *p moved past
 * it; false when it is cut short or longer than 64 bits (Parquet's
 * RLE/bit-packed run headers, Thrift's compact integers). */
static inline bool ladle_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*p >= end) return false;
    uint8_t b = *(*p)++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

/* Whether s[0..n) is valid UTF-8 (Unicode's definition: no overlong forms, no
 * surrogates, nothing past U+10FFFF, no sequence cut off at the end): -1 when
 * it is, else the offset of the first byte of the first invalid sequence.
 * Every String a reader makes passes through here (or the next function). */
int64_t ladle_utf8_check(const uint8_t *s, int64_t n);
/* The same for n strings: string i is chars[offsets[i], offsets[i + 1]). The
 * concatenation is checked once (an ASCII one costs nothing more), then, only
 * when it holds a non-ASCII byte, that no string starts inside a character.
 * Returns -1 when every string is valid, else the index of the first that is
 * not. */
int64_t ladle_utf8_check_strings(const uint8_t *chars, const int64_t *offsets, int64_t n);

/* ------------------------------------------------------------- thread pool */

typedef struct ladle_pool ladle_pool;
/* A task: do item i of a parallel loop. */
typedef ladle_status (*ladle_task_fn)(void *ctx, size_t i, ladle_error *err);

ladle_status ladle_pool_create(int threads, ladle_pool **out, ladle_error *err);
/* The calling thread's cancellation flag (NULL: none): parallel loops it starts
 * stop with LADLE_ECANCELED once *flag is nonzero. Returns the previous one. */
const int *ladle_cancel_set(const int *flag);
/* LADLE_ECANCELED with a message when the calling thread's query was cancelled. */
ladle_status ladle_cancel_check(ladle_error *err);
/* The number of cores this process may run on (its CPU affinity), at least 1. */
int ladle_cpu_count(void);
void ladle_pool_destroy(ladle_pool *pool);
/* The threads a loop started here may use: all of the pool's outside a task;
 * inside one, the task's share of its loop's (see pool.c). */
int ladle_pool_threads(const ladle_pool *pool);
/* Whether the calling thread is inside a task whose loops run inline (a share
 * of one thread). */
bool ladle_pool_nested(void);
/* Runs fn(ctx, i) for i in [0, n) on the pool's threads and the caller's. Returns
 * the first failure (later items are skipped). A call from inside a task runs
 * in parallel when the task's share of threads is more than one, else inline
 * on the calling thread. */
ladle_status ladle_pool_run(ladle_pool *pool, size_t n, ladle_task_fn fn, void *ctx,
                            ladle_error *err);

/* ------------------------------------------------------------------ misc */

char *ladle_strdup(const char *s);
/* Profiling by environment: LADLE_TRACE=1 prints each plan node's rows and
 * milliseconds as it finishes; LADLE_TRACE=2 adds the phases inside kernels
 * (build, probe, pair output...), each with its rows and milliseconds, so that
 * what does not shrink with more threads shows. Read once per process. */
int ladle_trace_level(void);
double ladle_clock_ms(void); /* a monotonic clock */
/* Prints "ladle:   <what> rows=<rows> <ms since t0> ms" at LADLE_TRACE >= 2. */
void ladle_trace_phase(const char *what, int64_t rows, double t0_ms);
#define LADLE_PHASE_START() (ladle_trace_level() >= 2 ? ladle_clock_ms() : 0.0)
#define LADLE_PHASE_END(what, rows, t0)                                    \
  do {                                                                     \
    if (ladle_trace_level() >= 2) ladle_trace_phase((what), (rows), (t0)); \
  } while (0)

/* A growable text buffer for explain output. */
typedef struct ladle_strbuf {
  char *data;
  size_t len, cap;
  bool failed;
} ladle_strbuf;
void ladle_strbuf_printf(ladle_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Casts Polars refuses whenever a value reaches them (String -> Boolean, Date,
 * Datetime or Time; Duration -> String; temporal -> Boolean): an error at run
 * time, as Polars', unless every value is null. */
bool ladle_cast_refused(ladle_dtype from, ladle_dtype to);

#endif /* LADLE_CORE_H */
