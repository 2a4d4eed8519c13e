/* cpu.h — shared helpers of the CPU kernels: type dispatch macros, validity
 * merging and parallel loops over morsels. */
#ifndef LADLE_CPU_H
#define LADLE_CPU_H

#include <math.h>

#include "../backend.h"

/* Runs `call` with ctx->mr as the thread's resource (when it has one) and
 * returns its status: what a kernel table entry does around its work, so that
 * every host allocation inside it reads the engine's resource. */
#define WITH_MR(ctx, call)                                                      \
  do {                                                                          \
    ladle_mr *was__ = ladle_mr_set((ctx)->mr ? (ctx)->mr : ladle_mr_current()); \
    ladle_status st__ = (call);                                                 \
    ladle_mr_set(was__);                                                        \
    return st__;                                                                \
  } while (0)

/* Calls M(T, ...) with the C type of a physical class. BOOL is uint8_t. */
#define LADLE_DISPATCH_NUM(phys, M, ...) \
  switch (phys) {                        \
    case LADLE_PHYS_U8:                  \
      M(uint8_t, __VA_ARGS__);           \
      break;                             \
    case LADLE_PHYS_I8:                  \
      M(int8_t, __VA_ARGS__);            \
      break;                             \
    case LADLE_PHYS_I16:                 \
      M(int16_t, __VA_ARGS__);           \
      break;                             \
    case LADLE_PHYS_I32:                 \
      M(int32_t, __VA_ARGS__);           \
      break;                             \
    case LADLE_PHYS_I64:                 \
      M(int64_t, __VA_ARGS__);           \
      break;                             \
    case LADLE_PHYS_U16:                 \
      M(uint16_t, __VA_ARGS__);          \
      break;                             \
    case LADLE_PHYS_U32:                 \
      M(uint32_t, __VA_ARGS__);          \
      break;                             \
    case LADLE_PHYS_U64:                 \
      M(uint64_t, __VA_ARGS__);          \
      break;                             \
    case LADLE_PHYS_F32:                 \
      M(float, __VA_ARGS__);             \
      break;                             \
    case LADLE_PHYS_F64:                 \
      M(double, __VA_ARGS__);            \
      break;                             \
    default:                             \
      break;                             \
  }

/* A second copy, for dispatching on two types at once (macros do not recurse). */
#define LADLE_DISPATCH_NUM2(phys, M, ...) \
  switch (phys) {                         \
    case LADLE_PHYS_U8:                   \
      M(uint8_t, __VA_ARGS__);            \
      break;                              \
    case LADLE_PHYS_I8:                   \
      M(int8_t, __VA_ARGS__);             \
      break;                              \
    case LADLE_PHYS_I16:                  \
      M(int16_t, __VA_ARGS__);            \
      break;                              \
    case LADLE_PHYS_I32:                  \
      M(int32_t, __VA_ARGS__);            \
      break;                              \
    case LADLE_PHYS_I64:                  \
      M(int64_t, __VA_ARGS__);            \
      break;                              \
    case LADLE_PHYS_U16:                  \
      M(uint16_t, __VA_ARGS__);           \
      break;                              \
    case LADLE_PHYS_U32:                  \
      M(uint32_t, __VA_ARGS__);           \
      break;                              \
    case LADLE_PHYS_U64:                  \
      M(uint64_t, __VA_ARGS__);           \
      break;                              \
    case LADLE_PHYS_F32:                  \
      M(float, __VA_ARGS__);              \
      break;                              \
    case LADLE_PHYS_F64:                  \
      M(double, __VA_ARGS__);             \
      break;                              \
    default:                              \
      break;                              \
  }

/* Value i of a numeric or boolean column as a double. */
/* A string of at most 7 bytes as one integer: its bytes, little-endian and
 * zero-filled, with the length in the top byte, so equal integers are equal
 * strings and the key needs neither a byte hash nor a comparison with the
 * column. False for longer strings. `end` is the end of the column's bytes:
 * eight bytes are loaded at once wherever they lie before it. */
static inline bool ladle_pack_short(const ladle_column *c, int64_t i, const char *end,
                                    uint64_t *out) {
  int64_t len = ladle_str_len(c, i);
  if (len > 7) return false;
  const char *p = ladle_str_ptr(c, i);
  uint64_t v = 0;
  if (end - p >= 8) {
    memcpy(&v, p, 8);
    v &= ((uint64_t)1 << (8 * len)) - 1;
  } else {
    for (int64_t k = 0; k < len; k++) v |= (uint64_t)(uint8_t)p[k] << (8 * k);
  }
  *out = v | (uint64_t)len << 56;
  return true;
}

static inline const char *ladle_str_end(const ladle_column *c) {
  return ladle_str_ptr(c, c->length);
}

/* An integer-like value (integers up to 32 bits unsigned or 64 signed, Bool,
 * Date, Datetime, Duration) as int64; false for other types. */
static inline bool ladle_int_value(const ladle_column *c, int64_t i, int64_t *v) {
  switch (c->type.id) {
    case LADLE_TYPE_INT8:
      *v = ((const int8_t *)c->values)[i];
      return true;
    case LADLE_TYPE_INT16:
      *v = ((const int16_t *)c->values)[i];
      return true;
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_DATE:
      *v = ((const int32_t *)c->values)[i];
      return true;
    case LADLE_TYPE_INT64:
    case LADLE_TYPE_DATETIME:
    case LADLE_TYPE_DURATION:
      *v = ((const int64_t *)c->values)[i];
      return true;
    case LADLE_TYPE_UINT8:
    case LADLE_TYPE_BOOL:
      *v = ((const uint8_t *)c->values)[i];
      return true;
    case LADLE_TYPE_UINT16:
      *v = ((const uint16_t *)c->values)[i];
      return true;
    case LADLE_TYPE_UINT32:
      *v = ((const uint32_t *)c->values)[i];
      return true;
    default:
      return false;
  }
}

/* Validity of out = valid(a) & valid(b), with broadcasting of length-1 inputs.
 * Allocates out's bitmap only when an input has nulls. */
ladle_status ladle_cpu_merge_validity(const ladle_column *a, const ladle_column *b,
                                      ladle_column *out, ladle_error *err);
/* 0/1 validity of row i of a column that may be broadcast. */
static inline bool ladle_cpu_valid_at(const ladle_column *c, int64_t i) {
  return c->validity == NULL || ladle_bit_get(c->validity, c->length == 1 ? 0 : i);
}
/* Float total-order helpers: NaN equals NaN and sorts last; -0.0 equals 0.0. */
/* Float order with NaN equal to itself and above everything (Polars' total
 * order), in bitwise operators so that loops over them vectorize. */
#define LADLE_FEQ(x, y) (((x) == (y)) | (((x) != (x)) & ((y) != (y))))
#define LADLE_FLT(x, y) (((x) < (y)) | (((x) == (x)) & ((y) != (y))))

/* n items bucketed by group, stable (a parallel counting sort): group g's
 * items are (*rows)[(*off)[g] .. (*off)[g + 1]), each item given as row[i]
 * (row NULL: i itself). The group of item i is grp[i] (-1: none) or, with grp
 * NULL, gid[i]. *off is malloc'd (ng + 1), *rows scratch. */
ladle_status ladle_cpu_bucket(const ladle_kctx *ctx, const int64_t *grp, const uint32_t *gid,
                              const int64_t *row, int64_t n, int64_t ng, int64_t **off,
                              int64_t **rows, ladle_error *err);
/* g's offsets and rows from its ids (stable: rows of a group stay in row order), in
 * parallel. */
ladle_status ladle_cpu_groups_csr(const ladle_kctx *ctx, ladle_groups *g, ladle_error *err);
/* cumulative.c: the backend's cumulative and shift_rows (backend.h) */
ladle_status ladle_cpu_cumulative(const ladle_kctx *ctx, const ladle_column *in,
                                  const ladle_dgroups *g, int op, bool reverse, ladle_column *out,
                                  ladle_error *err);
ladle_status ladle_cpu_shift_rows(const ladle_kctx *ctx, int64_t nrows, const ladle_dgroups *g,
                                  int64_t by, ladle_column *out, ladle_error *err);

/* lists.c: str.split, list.len and list.slice; a cast of a list's elements;
 * implode; explode (backend.h). */
ladle_status ladle_cpu_list_func(const ladle_kctx *ctx, const ladle_kexpr *e,
                                 const ladle_column *args, size_t nargs, ladle_column *out,
                                 ladle_error *err);
ladle_status ladle_cpu_list_cast(const ladle_kctx *ctx, const ladle_column *in, ladle_dtype to,
                                 ladle_cast_mode mode, const char *name, ladle_column *out,
                                 ladle_error *err);
ladle_status ladle_cpu_implode(const ladle_kctx *ctx, const ladle_column *in, ladle_groups *g,
                               ladle_column *out, ladle_error *err);
ladle_status ladle_cpu_explode(const ladle_kctx *ctx, const ladle_column *lists, size_t nlists,
                               bool empty_as_null, bool keep_nulls, const char *const *names,
                               ladle_column *rows, ladle_column *outs, ladle_error *err);

/* Rows per block of a block-parallel pass over n rows: the morsel, or less so
 * that every thread gets about four blocks (a pass over 100k rows on 16
 * threads would otherwise be one or two morsels), never below 4096 rows;
 * below the morsel a multiple of 64 (blocks share no validity byte). */
static inline int64_t ladle_cpu_block(const ladle_kctx *k, int64_t n) {
  int64_t morsel = k->morsel_rows > 0 ? k->morsel_rows : 65536;
  int threads = k->pool && !ladle_pool_nested() ? ladle_pool_threads(k->pool) : 1;
  int64_t want = (n + 4 * (int64_t)threads - 1) / (4 * (int64_t)threads);
  want = LADLE_MAX((want + 63) / 64 * 64, 4096);
  return LADLE_MIN(want, morsel);
}

/* log2 of the partitions of a radix-partitioned build of n rows: about
 * part_rows rows each, at most 2^max_bits, and at least two per thread while
 * partitions keep 2048 rows. */
static inline int ladle_cpu_part_bits(const ladle_kctx *k, int64_t n, int64_t part_rows,
                                      int max_bits) {
  int bits = 0, threads = k->pool ? ladle_pool_threads(k->pool) : 1;
  while (bits < max_bits &&
         ((n >> bits) > part_rows || ((1 << bits) < 2 * threads && (n >> (bits + 1)) >= 2048)))
    bits++;
  return bits;
}

/* A radix pass's counts, hist[b * nparts + p] rows of block b in partition p,
 * turned into where those rows start (partition after partition, block after
 * block within one: stable); pstart[p] is partition p's first row and
 * pstart[nparts] the total, returned. */
static inline int64_t ladle_cpu_part_starts(int64_t *hist, size_t nblocks, size_t nparts,
                                            int64_t *pstart) {
  int64_t run = 0;
  for (size_t p = 0; p < nparts; p++) {
    pstart[p] = run;
    for (size_t b = 0; b < nblocks; b++) {
      int64_t c = hist[b * nparts + p];
      hist[b * nparts + p] = run;
      run += c;
    }
  }
  pstart[nparts] = run;
  return run;
}

/* Per-kernel parallel loop over [0, n) split into blocks (ladle_cpu_block). */
typedef ladle_status (*ladle_range_fn)(void *ctx, int64_t begin, int64_t end, ladle_error *err);
ladle_status ladle_cpu_parallel(const ladle_kctx *k, int64_t n, ladle_range_fn fn, void *ctx,
                                ladle_error *err);
/* How a pool task loop splits n items: one piece below `serial_below` items,
 * else `per_thread` pieces per thread; each piece a whole multiple of `align`
 * items (align 8: pieces share no validity byte). Sets *piece and returns the
 * number of pieces: 0 when n is 0. */
static inline size_t ladle_cpu_pieces(const ladle_kctx *k, int64_t n, int64_t serial_below,
                                      int per_thread, int64_t align, int64_t *piece) {
  /* inside a task the pool runs items inline: one piece does it all */
  int threads = k->pool && !ladle_pool_nested() ? ladle_pool_threads(k->pool) : 1;
  int64_t want = n < serial_below ? 1 : (int64_t)threads * per_thread;
  int64_t p = (n + want - 1) / want;
  *piece = LADLE_MAX((p + align - 1) / align * align, align);
  return (size_t)((n + *piece - 1) / *piece);
}

/* The column kernels (columns.c); the copies are references. */
ladle_status ladle_cpu_to_host(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                               ladle_error *err);
ladle_status ladle_cpu_to_device(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                 ladle_error *err);
ladle_status ladle_cpu_select(const ladle_kctx *ctx, const ladle_column *mask, ladle_column *out,
                              ladle_error *err);
ladle_status ladle_cpu_take(const ladle_kctx *ctx, const ladle_column *src, const ladle_column *idx,
                            ladle_column *out, ladle_error *err);
ladle_status ladle_cpu_filter(const ladle_kctx *ctx, const ladle_column *src,
                              const ladle_column *mask, ladle_column *out, ladle_error *err);
ladle_status ladle_cpu_eval_program(const ladle_kctx *ctx, const ladle_program *p,
                                    const ladle_column *inputs, size_t ninputs, ladle_column *out,
                                    ladle_error *err);
ladle_status ladle_cpu_reduce(const ladle_kctx *ctx, ladle_reduce_op op, const ladle_column *in,
                              ladle_column *out, ladle_error *err);
ladle_status ladle_cpu_sort_perm(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                 const bool *descending, const bool *nulls_last, ladle_column *out,
                                 ladle_error *err);
ladle_status ladle_cpu_group_keys(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                  const ladle_column *sel, ladle_dgroups *out, ladle_error *err);
ladle_status ladle_cpu_str_match(const ladle_kctx *ctx, ladle_str_op op, const ladle_column *in,
                                 const char *pat, size_t pat_len, ladle_column *out,
                                 ladle_error *err);
ladle_status ladle_cpu_pack_bits(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                 ladle_error *err);
ladle_status ladle_cpu_copy(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                            ladle_error *err);
ladle_status ladle_cpu_str_compare(const ladle_kctx *ctx, ladle_str_op op, const ladle_column *a,
                                   const ladle_column *b, ladle_column *out, ladle_error *err);
ladle_status ladle_cpu_join_rows(const ladle_kctx *ctx, const ladle_column *lkeys,
                                 const ladle_column *rkeys, size_t nkeys, int64_t nl, int64_t nr,
                                 ladle_join_type how, bool nulls_equal, ladle_djoin *out,
                                 ladle_error *err);
ladle_status ladle_cpu_grouped_reduce(const ladle_kctx *ctx, ladle_reduce_op op,
                                      const ladle_program *p, const ladle_column *inputs,
                                      size_t ninputs, const ladle_dgroups *g, ladle_column *out,
                                      ladle_error *err);
ladle_status ladle_cpu_sequence(const ladle_kctx *ctx, int64_t start, int64_t n, ladle_dtype type,
                                ladle_column *out, ladle_error *err);
/* partition.c: the exchange's row partitions (backend.h). */
/* The checks both partition kernels make, shared with a device's (the
 * same statuses, in the same order): parts, keys of one length, of types
 * `takes` accepts (ladle_cpu_hash_partition_takes, or ladle_cpu_sort_orders
 * for ranges), with offsets (not view-only strings); and a range
 * partition's splitters: each of its key's type, nparts - 1 rows, not
 * view-only (their order is the caller's to check). */
ladle_status ladle_cpu_partition_check_keys(const char *what, const ladle_column *keys,
                                            size_t nkeys, int nparts, const int64_t *counts,
                                            bool (*takes)(ladle_type_id), ladle_error *err);
bool ladle_cpu_hash_partition_takes(ladle_type_id id);
ladle_status ladle_cpu_partition_check_splitters(const char *what, const ladle_column *keys,
                                                 const ladle_column *splitters, size_t nkeys,
                                                 int nparts, ladle_error *err);
ladle_status ladle_cpu_hash_partition(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                      int nparts, ladle_column *perm, int64_t *counts,
                                      ladle_error *err);
ladle_status ladle_cpu_range_partition(const ladle_kctx *ctx, const ladle_column *keys,
                                       const ladle_column *splitters, size_t nkeys,
                                       const bool *descending, const bool *nulls_last, int nparts,
                                       ladle_column *perm, int64_t *counts, ladle_error *err);
/* The host kernels over row indices (rows.c). */
ladle_status ladle_cpu_mask_or(const ladle_kctx *ctx, const uint8_t *src, int64_t n, uint8_t *keep,
                               ladle_error *err);
ladle_status ladle_cpu_mask_and(const ladle_kctx *ctx, const ladle_column *mask, int64_t n,
                                bool init, uint8_t *keep, int64_t *out_kept, ladle_error *err);
ladle_status ladle_cpu_keep_to_indices(const ladle_kctx *ctx, const uint8_t *keep, int64_t n,
                                       int64_t n_kept, int64_t *idx, ladle_error *err);
ladle_status ladle_cpu_selection_positions(const ladle_kctx *ctx, const int64_t *sel, int64_t cnt,
                                           int64_t n, int64_t *idx, ladle_error *err);
ladle_status ladle_cpu_mask_take(const ladle_kctx *ctx, const ladle_column *mask, int64_t n,
                                 uint8_t *taken, int64_t *sel, int64_t *out_n, ladle_error *err);
ladle_status ladle_cpu_rank_of_singletons(const ladle_kctx *ctx, const ladle_column *in,
                                          ladle_dtype type, ladle_column *out, ladle_error *err);
/* moments.c */
ladle_status ladle_cpu_moments(const ladle_kctx *ctx, const ladle_column *in, bool second,
                               int64_t *cnt, double *sum, double *mean, double *m2,
                               ladle_error *err);
ladle_status ladle_cpu_index_compose(const ladle_kctx *ctx, const int64_t *outer, int64_t n,
                                     const int64_t *inner, int64_t offset, int64_t *out,
                                     ladle_error *err);
ladle_status ladle_cpu_index_is_identity(const ladle_kctx *ctx, const int64_t *idx, int64_t n,
                                         bool *out, ladle_error *err);
ladle_status ladle_cpu_join_pairs_coalesce(const ladle_kctx *ctx, const ladle_join_pairs *pairs,
                                           int64_t nl, int64_t *out, ladle_error *err);
ladle_status ladle_cpu_group_rows(const ladle_kctx *ctx, const ladle_groups *g,
                                  ladle_group_rows_kind which, int64_t *out, ladle_error *err);
ladle_status ladle_cpu_distinct_rows(const ladle_kctx *ctx, const ladle_groups *g, ladle_keep keep,
                                     int64_t **out_rows, int64_t *out_n, ladle_error *err);
ladle_status ladle_cpu_join_pairs_sort(const ladle_kctx *ctx, ladle_join_pairs *pairs,
                                       bool by_right, int64_t m, ladle_error *err);
/* Polars' sum of n doubles (its order of additions: pairwise blocks of 128). */
double ladle_cpu_float_sum(const double *f, int64_t n);
/* The same over x with the rows whose validity bit is clear as 0 (valid
 * NULL: every row), without a copy of x. */
double ladle_cpu_float_sum_valid(const double *x, const uint8_t *valid, int64_t n);
ladle_status ladle_cpu_compare_into(const ladle_kctx *ctx, int op, const ladle_column *in,
                                    const ladle_column *k, bool init, uint8_t *keep,
                                    ladle_error *err);
ladle_status ladle_cpu_valid_into(const ladle_kctx *ctx, const ladle_column *in, bool negate,
                                  bool init, uint8_t *keep, ladle_error *err);
ladle_status ladle_cpu_binary(const ladle_kctx *ctx, int op, const ladle_column *a,
                              const ladle_column *b, ladle_dtype out_type, ladle_column *out,
                              ladle_error *err);
ladle_status ladle_cpu_func(const ladle_kctx *ctx, const ladle_kexpr *e, const ladle_column *args,
                            size_t nargs, ladle_column *out, ladle_error *err);
/* cast.c: row i of a BOOL or integer column (up to 64 bits) as its two's
 * complement value widened to 64 bits; *neg for negative signed values. */
uint64_t ladle_cpu_int_value(const ladle_column *c, int64_t i, bool *neg);

/* cast128.c: INT128 or UINT128 (ladle_cpu_is_int128). ladle_cpu_cast128 runs
 * the casts ladle_cpu_cast128_known accepts: between these two, integers and
 * booleans both ways, floats and strings both ways. */
bool ladle_cpu_is_int128(ladle_type_id id);
bool ladle_cpu_cast128_known(ladle_dtype from, ladle_dtype to);
ladle_status ladle_cpu_cast128(const ladle_column *in, ladle_dtype to, ladle_cast_mode mode,
                               const char *name, ladle_column *out, ladle_error *err);
ladle_status ladle_cpu_cast(const ladle_kctx *ctx, const ladle_column *in, ladle_dtype to,
                            ladle_cast_mode mode, const char *name, ladle_column *out,
                            ladle_error *err);
ladle_status ladle_cpu_when(const ladle_kctx *ctx, const ladle_column *args, size_t nargs,
                            int64_t length, ladle_column *out, ladle_error *err);
/* Group ids for a single integer-like or string key by per-thread tables
 * merged in row order; false (nothing done) for other keys. */
bool ladle_cpu_group_ids_fast(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                              ladle_groups *out, ladle_error *err, ladle_status *st);
/* The same map kept for probing (joins): group ids of `key`'s rows in *out,
 * and for each row of another column of the same type its group or -1. */
typedef struct ladle_fastmap ladle_fastmap;
bool ladle_fastmap_eligible(const ladle_column *keys, size_t nkeys);
ladle_status ladle_fastmap_build(const ladle_kctx *ctx, const ladle_column *key, ladle_groups *out,
                                 ladle_fastmap **map, ladle_error *err);
ladle_status ladle_fastmap_probe(const ladle_kctx *ctx, const ladle_fastmap *fm,
                                 const ladle_column *key, bool nulls_equal, int64_t *gid,
                                 ladle_error *err);
/* The same, allowed to answer sparsely when most rows miss: then the rows
 * that hit, ascending, are rows[0..*nhits) and their groups gid[0..*nhits)
 * (both arrays sized for every row, only that much written); *nhits = -1
 * when it answered densely (gid per row, rows untouched). */
ladle_status ladle_fastmap_probe_sparse(const ladle_kctx *ctx, const ladle_fastmap *fm,
                                        const ladle_column *key, bool nulls_equal, int64_t *gid,
                                        int64_t *rows, int64_t *nhits, ladle_error *err);
void ladle_fastmap_destroy(ladle_fastmap *fm);
/* Aids of a probe (a bitmap or group array over a narrow integer range, a
 * Bloom filter of a big table) chosen once from a sample of the probe side,
 * for the probes of a streamed join's morsels: ladle_fastmap_probe_aided
 * probes one morsel serially with them (aids NULL: none). */
typedef struct ladle_fastmap_aids ladle_fastmap_aids;
ladle_status ladle_fastmap_aids_make(const ladle_kctx *ctx, const ladle_fastmap *fm,
                                     const ladle_column *sample, ladle_fastmap_aids **out,
                                     ladle_error *err);
void ladle_fastmap_aids_free(ladle_fastmap_aids *a);
ladle_status ladle_fastmap_probe_aided(const ladle_kctx *ctx, const ladle_fastmap *fm,
                                       const ladle_fastmap_aids *aids, const ladle_column *key,
                                       bool nulls_equal, int64_t *gid, ladle_error *err);
ladle_status ladle_cpu_group_ids(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                 ladle_groups *out, ladle_error *err);
ladle_status ladle_cpu_aggregate(const ladle_kctx *ctx, const ladle_kexpr *agg,
                                 const ladle_column *in, ladle_groups *g, ladle_column *out,
                                 ladle_error *err);
/* The same over nins consecutive pieces of the input (a table's partitions),
 * without concatenating them where the aggregation allows. */
ladle_status ladle_cpu_aggregate_chunks(const ladle_kctx *ctx, const ladle_kexpr *agg,
                                        const ladle_column *ins, size_t nins, ladle_groups *g,
                                        ladle_column *out, ladle_error *err);
ladle_status ladle_cpu_join(const ladle_kctx *ctx, const ladle_column *lkeys,
                            const ladle_column *rkeys, size_t nkeys, ladle_join_type how,
                            bool nulls_equal, ladle_join_pairs *out, ladle_error *err);
ladle_status ladle_cpu_join_pairs_fill(const ladle_kctx *ctx, const ladle_join_runs *runs,
                                       int64_t from, int64_t n, int64_t *left, int64_t *right,
                                       ladle_error *err);
void ladle_cpu_join_runs_free(ladle_join_runs *runs);
ladle_status ladle_cpu_join_build(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                  const ladle_dtype *probe_types, bool nulls_equal,
                                  ladle_join_ht **out, ladle_error *err);
ladle_status ladle_cpu_join_probe(const ladle_kctx *ctx, const ladle_join_ht *ht,
                                  const ladle_column *keys, ladle_join_type how,
                                  ladle_join_pairs *out, ladle_error *err);
ladle_status ladle_cpu_join_probe_mark(const ladle_kctx *ctx, const ladle_join_ht *ht,
                                       const ladle_column *keys, uint8_t value, uint8_t *marks,
                                       ladle_error *err);
void ladle_cpu_join_ht_free(ladle_join_ht *ht);
ladle_status ladle_cpu_sort_indices(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                    const bool *descending, const bool *nulls_last,
                                    int64_t **out_perm, ladle_error *err);
/* sort.c: row i of keys a against row j of keys b (nkeys columns each, of
 * one type pairwise) in sort_indices' order, without its tie-break by row:
 * < 0, 0 or > 0. Nulls first or last by nulls_last (either NULL: all false),
 * whatever descending says; values descending or not, NaN above every
 * number, -0.0 equal to 0.0, strings bytewise. */
int ladle_cpu_sort_cmp(const ladle_column *a, int64_t i, const ladle_column *b, int64_t j,
                       size_t nkeys, const bool *descending, const bool *nulls_last);
/* Whether sort_indices orders keys of type id by their values (numbers,
 * Booleans, Date, Datetime, Duration, strings; a NULL column's rows are all
 * equal); it takes rows of other types as equal. */
bool ladle_cpu_sort_orders(ladle_type_id id);
/* The same order as codes: out[i - a], for rows [a, e) of a column of
 * numbers, Booleans, Dates, Datetimes or Durations, is a 64-bit value whose
 * unsigned order is sort_indices' ascending order of the values (NaN above
 * every number, -0.0 equal to 0.0); validity is not looked at. */
void ladle_cpu_sort_codes(const ladle_column *c, int64_t a, int64_t e, uint64_t *out);
ladle_status ladle_cpu_top_k_indices(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                     const bool *descending, const bool *nulls_last, int64_t k,
                                     int64_t **out_idx, ladle_error *err);
ladle_status ladle_cpu_rank(const ladle_kctx *ctx, const ladle_column *in, ladle_groups *g,
                            ladle_rank_method method, bool descending, ladle_column *out,
                            ladle_error *err);

/* Keymap: built over key rows, probed with rows of the same key types. */
ladle_status ladle_keymap_build(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                ladle_keymap **out, ladle_groups *groups, ladle_error *err);
/* gid[i] = group of probe row i, or -1 (also for rows with a null key when
 * !nulls_equal). */
ladle_status ladle_keymap_probe(const ladle_kctx *ctx, const ladle_keymap *km,
                                const ladle_column *keys, size_t nkeys, bool nulls_equal,
                                int64_t *gid, ladle_error *err);
void ladle_keymap_destroy(ladle_keymap *km);

/* pqpages.c */
ladle_status ladle_cpu_parquet_decode(const ladle_kctx *ctx, const uint8_t *bytes, int64_t nbytes,
                                      const ladle_kpage *pages, size_t npages, int width,
                                      ladle_dtype type, bool nullable, int64_t nrows,
                                      ladle_column *out, ladle_error *err);
unsigned ladle_cpu_parquet_codecs(const ladle_kctx *ctx);

#endif
