/* backend_cpu.c — the CPU kernel table, and the helpers every CPU kernel shares:
 * morsel-parallel loops, selection and gathering. */
#include <pthread.h>

#include "cpu.h"

typedef struct range_job {
  ladle_range_fn fn;
  void *ctx;
  int64_t n, morsel;
} range_job;

static ladle_status range_task(void *vctx, size_t i, ladle_error *err) {
  range_job *j = vctx;
  int64_t begin = (int64_t)i * j->morsel;
  return j->fn(j->ctx, begin, LADLE_MIN(begin + j->morsel, j->n), err);
}

ladle_status ladle_cpu_parallel(const ladle_kctx *k, int64_t n, ladle_range_fn fn, void *ctx,
                                ladle_error *err) {
  if (n <= 0) return LADLE_OK;
  int64_t morsel = ladle_cpu_block(k, n);
  range_job j = {fn, ctx, n, morsel};
  return ladle_pool_run(k->pool, (size_t)((n + morsel - 1) / morsel), range_task, &j, err);
}

static ladle_status cpu_mask_to_indices(const ladle_kctx *ctx, const ladle_column *mask,
                                        int64_t **out_idx, int64_t *out_n, ladle_error *err) {
  LADLE_UNUSED(ctx);
  int64_t n = mask->length, k = 0;
  const uint8_t *m = mask->values;
  int64_t *idx = malloc((size_t)LADLE_MAX(n, 1) * sizeof *idx);
  if (idx == NULL) return LADLE_OOM(err, "filter");
  if (mask->type.id == LADLE_TYPE_NULL) {
    *out_idx = idx;
    *out_n = 0;
    return LADLE_OK;
  }
  if (mask->validity == NULL) {
    for (int64_t i = 0; i < n; i++) {
      idx[k] = i;
      k += m[i] != 0;
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      idx[k] = i;
      k += (m[i] != 0) & ladle_bit_get(mask->validity, i);
    }
  }
  *out_idx = idx;
  *out_n = k;
  return LADLE_OK;
}

/* A fixed-width gather in pieces: one pass finds whether an index is -1 (a
 * null row), then each piece writes its rows of the output. */
typedef struct pgather {
  const ladle_column *src;
  const int64_t *idx;
  int64_t n, piece;
  atomic_bool neg;
  ladle_column *out;
  int phase;
} pgather;

static ladle_status pgather_piece(void *vctx, size_t p, ladle_error *err) {
  LADLE_UNUSED(err);
  pgather *j = vctx;
  int64_t a = (int64_t)p * j->piece, e = LADLE_MIN(a + j->piece, j->n);
  if (j->phase == 0) {
    uint64_t any = 0;
    for (int64_t i = a; i < e; i++) any |= (uint64_t)j->idx[i];
    if (any >> 63) atomic_store_explicit(&j->neg, true, memory_order_relaxed);
    return LADLE_OK;
  }
  ladle_column_gather_rows(j->src, j->idx, a, e, atomic_load(&j->neg), j->out);
  return LADLE_OK;
}

static ladle_status cpu_gather(const ladle_kctx *ctx, const ladle_column *src, const int64_t *idx,
                               int64_t n, ladle_column *out, ladle_error *err) {
  ladle_type_id t = src->type.id;
  pgather j;
  memset(&j, 0, sizeof j);
  size_t pieces = ladle_type_is_varlen(t) || t == LADLE_TYPE_LIST || t == LADLE_TYPE_NULL
                      ? 1
                      : ladle_cpu_pieces(ctx, n, 1 << 16, 2, 64, &j.piece);
  if (pieces <= 1) return ladle_column_gather(src, idx, n, out, err);
  j.src = src;
  j.idx = idx;
  j.n = n;
  atomic_init(&j.neg, false);
  LADLE_RETURN_NOT_OK(ladle_pool_run(ctx->pool, pieces, pgather_piece, &j, err));
  bool neg = atomic_load(&j.neg);
  ladle_column c;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(src->type, n, neg || src->validity != NULL, 0, &c, err));
  j.out = &c;
  j.phase = 1;
  ladle_status st = ladle_pool_run(ctx->pool, pieces, pgather_piece, &j, err);
  if (st != LADLE_OK) {
    ladle_column_release(&c);
    return st;
  }
  ladle_column_finish_nulls(&c);
  *out = c;
  return LADLE_OK;
}

static ladle_status cpu_gather_pieces(const ladle_kctx *ctx, const ladle_column *src,
                                      const ladle_pieces *px, const int64_t *idx, int64_t n,
                                      ladle_column *out, ladle_error *err) {
  LADLE_UNUSED(ctx);
  return ladle_column_gather_pieces(src, px, idx, n, out, err);
}

static ladle_status cpu_compact(const ladle_kctx *ctx, const ladle_column *src, const uint8_t *keep,
                                int64_t n_keep, ladle_column *out, ladle_error *err) {
  LADLE_UNUSED(ctx);
  return ladle_column_compact(src, keep, n_keep, out, err);
}

static bool cpu_supports(const ladle_kexpr *e, ladle_error *err) {
  LADLE_UNUSED(e);
  LADLE_UNUSED(err);
  return true; /* the CPU table is complete: every bound expression runs */
}

static ladle_status cpu_explode(const ladle_kctx *ctx, const ladle_column *lists, size_t nlists,
                                bool empty_as_null, bool keep_nulls, const char *const *names,
                                ladle_column *rows, ladle_column *outs, ladle_error *err) {
  WITH_MR(ctx,
          ladle_cpu_explode(ctx, lists, nlists, empty_as_null, keep_nulls, names, rows, outs, err));
}

static const ladle_backend cpu_backend = {
    "cpu",
    LADLE_DEVICE_CPU,
    LADLE_BACKEND_ABI,
    sizeof(ladle_backend),
    ladle_cpu_to_device,
    ladle_cpu_to_host,
    ladle_cpu_select,
    ladle_cpu_take,
    ladle_cpu_filter,
    ladle_cpu_reduce,
    ladle_cpu_sequence,
    NULL, /* binary_supports: every operation the binder makes */
    ladle_cpu_eval_program,
    NULL, /* reduce_program: eval_program, then reduce */
    NULL, /* program_supports: every instruction */
    ladle_cpu_group_keys,
    ladle_cpu_grouped_reduce,
    ladle_cpu_sort_perm,
    ladle_cpu_join_rows,
    ladle_cpu_str_match,
    ladle_cpu_str_compare,
    ladle_cpu_copy,
    ladle_cpu_pack_bits,
    NULL, /* stream_wait: the host has no streams */
    NULL, /* memory_info: the host's is not the engine's to ask */
    cpu_supports,
    ladle_cpu_binary,
    ladle_cpu_func,
    ladle_cpu_cast,
    ladle_cpu_when,
    cpu_mask_to_indices,
    cpu_gather,
    cpu_gather_pieces,
    cpu_compact,
    ladle_cpu_compare_into,
    ladle_cpu_valid_into,
    ladle_cpu_mask_and,
    ladle_cpu_keep_to_indices,
    ladle_cpu_selection_positions,
    ladle_cpu_mask_take,
    ladle_cpu_index_compose,
    ladle_cpu_index_is_identity,
    ladle_cpu_group_ids,
    ladle_cpu_aggregate,
    ladle_cpu_aggregate_chunks,
    ladle_cpu_moments,
    ladle_cpu_group_rows,
    ladle_cpu_distinct_rows,
    ladle_cpu_join,
    ladle_cpu_join_pairs_fill,
    ladle_cpu_join_runs_free,
    ladle_cpu_join_pairs_sort,
    ladle_cpu_join_pairs_coalesce,
    ladle_cpu_sort_indices,
    ladle_cpu_top_k_indices,
    ladle_cpu_rank,
    ladle_cpu_rank_of_singletons,
    ladle_cpu_mask_or,
    ladle_cpu_hash_partition,
    ladle_cpu_range_partition,
    cpu_explode,
    true, /* moves_lists */
    ladle_cpu_join_build,
    ladle_cpu_join_probe,
    ladle_cpu_join_ht_free,
    ladle_cpu_parquet_decode,
    ladle_cpu_parquet_codecs,
    ladle_cpu_join_probe_mark,
    NULL, /* compress_pages: the host's writer compresses its pages itself */
    NULL,
    ladle_cpu_cumulative,
    ladle_cpu_shift_rows,
};

/* The CPU table as a GPU engine's executor sees a GPU's: the column kernels
 * (hash_partition and range_partition among them) and binary, every other
 * host kernel NULL (LADLE_COLUMN_KERNELS=1 tests the GPU's paths on it, so
 * that a path that would call a kernel a GPU lacks fails here too). */
static ladle_backend cpu_columns_backend;
static pthread_once_t columns_once = PTHREAD_ONCE_INIT;

static void columns_init(void) {
  ladle_backend b = cpu_backend;
  b.supports = NULL;
  b.func = NULL;
  b.explode = NULL; /* as a GPU's: no list columns */
  b.cast = NULL;
  b.when = NULL;
  b.mask_to_indices = NULL;
  b.gather = NULL;
  b.gather_pieces = NULL;
  b.compact = NULL;
  b.compare_into = NULL;
  b.valid_into = NULL;
  b.mask_and = NULL;
  b.keep_to_indices = NULL;
  b.selection_positions = NULL;
  b.mask_take = NULL;
  b.index_compose = NULL;
  b.index_is_identity = NULL;
  b.group_ids = NULL;
  b.aggregate = NULL;
  b.aggregate_chunks = NULL;
  b.moments = NULL;
  b.group_rows = NULL;
  b.distinct_rows = NULL;
  b.join = NULL;
  b.join_pairs_fill = NULL;
  b.join_runs_free = NULL;
  b.join_pairs_sort = NULL;
  b.join_pairs_coalesce = NULL;
  b.join_build = NULL;
  b.join_probe = NULL;
  b.join_ht_free = NULL;
  b.join_probe_mark = NULL;
  b.sort_indices = NULL;
  b.top_k_indices = NULL;
  b.rank = NULL;
  b.rank_of_singletons = NULL;
  b.mask_or = NULL;
  cpu_columns_backend = b;
}

const ladle_backend *ladle_backend_cpu_columns(void) {
  pthread_once(&columns_once, columns_init);
  return &cpu_columns_backend;
}

const ladle_backend *ladle_backend_cpu(void) { return &cpu_backend; }
