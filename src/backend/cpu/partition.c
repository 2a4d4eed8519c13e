/* partition.c — the rows of an exchange between ranks split into parts, two
 * column kernels (backend.h): hash_partition, by the partition hash of the
 * keys (ladle_part_step, core.h: the same bits on every rank and device), and
 * range_partition, by a binary search over splitter rows in sort_indices'
 * order (sort.c's ladle_cpu_sort_cmp, or for one fixed-width key its order
 * codes: one ordering, not a second that could disagree). Both end in one
 * stable counting sort: each block of rows finds and counts its rows' parts,
 * the counts become where each block's rows of each part start (part after
 * part, block after block within one), and each block writes its rows there
 * in row order. Blocks run on ctx's pool. The
 * output and scratch come from ctx->mr (made the thread's resource). */
#include "cpu.h"

typedef unsigned __int128 ladle_u128;

/* Rows hashed a chunk at a time, key by key, in a block's local array. */
enum { HASH_CHUNK = 1024 };
/* The most histogram slots (blocks times parts) a call counts in. */
enum { MAX_SLOTS = 1 << 22 };

typedef struct part_job {
  const ladle_column *keys, *splitters;
  size_t nkeys;
  const bool *desc, *nulls_last;
  int nparts;
  bool range;
  int64_t n, piece;
  size_t nblocks;
  uint32_t *pid; /* per row, its part */
  int64_t *hist; /* nblocks * nparts: each block's counts, then where its rows go */
  int64_t *perm; /* the output's values */
  int phase;     /* 0: find and count parts; 1: write the rows */
  /* range over one fixed-width key: each splitter's rank (range_rows_coded) */
  const ladle_u128 *srank;
} part_job;

/* ------------------------------------------------------------ the hash */

/* h[i - a] = ladle_part_step(h[i - a], v_i) over rows [a, e) of column c,
 * v_i its key value (core.h) under EXPR, a null LADLE_PART_NULL. */
#define STEP_ROWS(EXPR)                                                                          \
  do {                                                                                           \
    if (c->validity == NULL) {                                                                   \
      for (int64_t i = a; i < e; i++) h[i - a] = ladle_part_step(h[i - a], (EXPR));              \
    } else {                                                                                     \
      for (int64_t i = a; i < e; i++)                                                            \
        h[i - a] =                                                                               \
            ladle_part_step(h[i - a], ladle_bit_get(c->validity, i) ? (EXPR) : LADLE_PART_NULL); \
    }                                                                                            \
  } while (0)
#define STEP_SIGNED(T) STEP_ROWS((uint64_t)(int64_t)((const T *)c->values)[i])
#define STEP_UNSIGNED(T) STEP_ROWS((uint64_t)((const T *)c->values)[i])

static void hash_key(const ladle_column *c, int64_t a, int64_t e, uint64_t *h) {
  switch (c->type.id) {
    case LADLE_TYPE_NULL:
      for (int64_t i = a; i < e; i++) h[i - a] = ladle_part_step(h[i - a], LADLE_PART_NULL);
      break;
    case LADLE_TYPE_BOOL:
      STEP_ROWS((uint64_t)(((const uint8_t *)c->values)[i] != 0));
      break;
    case LADLE_TYPE_INT8:
      STEP_SIGNED(int8_t);
      break;
    case LADLE_TYPE_INT16:
      STEP_SIGNED(int16_t);
      break;
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_DATE:
      STEP_SIGNED(int32_t);
      break;
    case LADLE_TYPE_INT64:
    case LADLE_TYPE_DATETIME:
    case LADLE_TYPE_DURATION:
    case LADLE_TYPE_TIME:
      STEP_SIGNED(int64_t);
      break;
    case LADLE_TYPE_UINT8:
      STEP_UNSIGNED(uint8_t);
      break;
    case LADLE_TYPE_UINT16:
      STEP_UNSIGNED(uint16_t);
      break;
    case LADLE_TYPE_UINT32:
      STEP_UNSIGNED(uint32_t);
      break;
    case LADLE_TYPE_UINT64:
      STEP_UNSIGNED(uint64_t);
      break;
    case LADLE_TYPE_FLOAT32:
      STEP_ROWS(ladle_part_key_double((double)((const float *)c->values)[i]));
      break;
    case LADLE_TYPE_FLOAT64:
      STEP_ROWS(ladle_part_key_double(((const double *)c->values)[i]));
      break;
    case LADLE_TYPE_STRING:
    case LADLE_TYPE_BINARY:
      STEP_ROWS(ladle_part_key_bytes(ladle_str_ptr(c, i), (size_t)ladle_str_len(c, i)));
      break;
    case LADLE_TYPE_DECIMAL:
    case LADLE_TYPE_INT128:
    case LADLE_TYPE_UINT128:
      STEP_ROWS(ladle_part_key_bytes((const uint8_t *)c->values + 16 * i, 16));
      break;
    default: /* refused by ladle_cpu_partition_check_keys */
      break;
  }
}

bool ladle_cpu_hash_partition_takes(ladle_type_id id) {
  switch (id) {
    case LADLE_TYPE_LIST:
    case LADLE_TYPE_CATEGORICAL:
      return false;
    default:
      return (int)id >= 0 && id < LADLE_TYPE_COUNT_;
  }
}

/* The parts of rows [a, e) by the hash, into pid. */
static void hash_rows(const part_job *j, int64_t a0, int64_t e0) {
  uint64_t h[HASH_CHUNK];
  for (int64_t a = a0; a < e0; a += HASH_CHUNK) {
    int64_t e = LADLE_MIN(a + HASH_CHUNK, e0);
    for (int64_t i = a; i < e; i++) h[i - a] = LADLE_PART_SEED;
    for (size_t k = 0; k < j->nkeys; k++) hash_key(&j->keys[k], a, e, h);
    for (int64_t i = a; i < e; i++) j->pid[i] = (uint32_t)ladle_part_of(h[i - a], j->nparts);
  }
}

/* ------------------------------------------------------------ the range */

/* Row i's part: how many splitters are at or below it (they are in order). */
static int range_part(const part_job *j, int64_t i) {
  int lo = 0, hi = j->nparts - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (ladle_cpu_sort_cmp(j->splitters, mid, j->keys, i, j->nkeys, j->desc, j->nulls_last) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The same for a single fixed-width key, a chunk of rows at a time: each
 * row as a 128-bit rank, its class (0: a null placed first, 1: a value, 2: a
 * null placed last) above its value's order code (sort.c's, inverted when
 * descending), as the splitters are ranked (part_job.srank): integers that
 * order rows as ladle_cpu_sort_cmp does, searched without branches. */
static void range_rows_coded(const part_job *j, int64_t a0, int64_t e0) {
  const ladle_column *c = &j->keys[0];
  bool desc = j->desc && j->desc[0], last = j->nulls_last && j->nulls_last[0];
  ladle_u128 null_rank = (ladle_u128)(last ? 2 : 0) << 64;
  uint64_t code[HASH_CHUNK];
  for (int64_t a = a0; a < e0; a += HASH_CHUNK) {
    int64_t e = LADLE_MIN(a + HASH_CHUNK, e0);
    ladle_cpu_sort_codes(c, a, e, code);
    for (int64_t i = a; i < e; i++) {
      uint64_t v = desc ? ~code[i - a] : code[i - a];
      ladle_u128 r = ladle_column_valid(c, i) ? (ladle_u128)1 << 64 | v : null_rank;
      /* how many splitters are at or below r: a lower bound over nparts - 1 */
      int lo = 0, len = j->nparts - 1;
      while (len > 0) {
        int half = len / 2;
        bool le = j->srank[lo + half] <= r;
        lo = le ? lo + half + 1 : lo;
        len = le ? len - half - 1 : half;
      }
      j->pid[i] = (uint32_t)lo;
    }
  }
}

/* ---------------------------------------------------- the counting sort */

static ladle_status part_block(void *vctx, size_t b, ladle_error *err) {
  LADLE_UNUSED(err);
  part_job *j = vctx;
  int64_t a = (int64_t)b * j->piece, e = LADLE_MIN(a + j->piece, j->n);
  int64_t *slot = j->hist + b * (size_t)j->nparts;
  if (j->phase == 0) {
    if (j->srank != NULL) {
      range_rows_coded(j, a, e);
    } else if (j->range) {
      for (int64_t i = a; i < e; i++) j->pid[i] = (uint32_t)range_part(j, i);
    } else {
      hash_rows(j, a, e);
    }
    for (int64_t i = a; i < e; i++) slot[j->pid[i]]++;
  } else {
    for (int64_t i = a; i < e; i++) j->perm[slot[j->pid[i]]++] = i;
  }
  return LADLE_OK;
}

static ladle_status fill_identity(void *vctx, int64_t a, int64_t e, ladle_error *err) {
  LADLE_UNUSED(err);
  int64_t *p = vctx;
  for (int64_t i = a; i < e; i++) p[i] = i;
  return LADLE_OK;
}

/* The stable counting sort of j's rows by part into *out and counts. */
static ladle_status partition_rows(const ladle_kctx *ctx, part_job *j, ladle_column *out,
                                   int64_t *counts, ladle_error *err) {
  int64_t n = j->n;
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc_with(NULL, ladle_dtype_make(LADLE_TYPE_INT64), n, false, 0, &o, err));
  j->perm = LADLE_COL_MUT(&o, int64_t);
  if (j->nparts == 1 || n == 0) { /* every row in part 0, in order */
    ladle_status st = ladle_cpu_parallel(ctx, n, fill_identity, j->perm, err);
    if (st != LADLE_OK) {
      ladle_column_release(&o);
      return st;
    }
    for (int p = 0; p < j->nparts; p++) counts[p] = p == 0 ? n : 0;
    *out = o;
    return LADLE_OK;
  }
  j->nblocks = ladle_cpu_pieces(ctx, n, 1 << 14, 4, 64, &j->piece);
  size_t most = LADLE_MAX((size_t)MAX_SLOTS / (size_t)j->nparts, (size_t)1);
  if (j->nblocks > most) { /* many parts: fewer, longer blocks */
    j->piece = (n + (int64_t)most - 1) / (int64_t)most;
    j->nblocks = (size_t)((n + j->piece - 1) / j->piece);
  }
  j->pid = ladle_scratch_alloc((size_t)n * sizeof *j->pid, false);
  j->hist = ladle_scratch_alloc(j->nblocks * (size_t)j->nparts * sizeof *j->hist, true);
  int64_t *pstart = malloc(((size_t)j->nparts + 1) * sizeof *pstart);
  ladle_status st = j->pid && j->hist && pstart ? LADLE_OK : LADLE_OOM(err, "partition");
  if (st == LADLE_OK) {
    j->phase = 0;
    st = ladle_pool_run(ctx->pool, j->nblocks, part_block, j, err);
  }
  if (st == LADLE_OK) {
    ladle_cpu_part_starts(j->hist, j->nblocks, (size_t)j->nparts, pstart);
    j->phase = 1;
    st = ladle_pool_run(ctx->pool, j->nblocks, part_block, j, err);
  }
  if (st == LADLE_OK)
    for (int p = 0; p < j->nparts; p++) counts[p] = pstart[p + 1] - pstart[p];
  if (j->pid) ladle_scratch_free(j->pid);
  if (j->hist) ladle_scratch_free(j->hist);
  free(pstart);
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* --------------------------------------------------------------- checks */

static ladle_status refuse_type(const char *what, const ladle_column *c, ladle_error *err) {
  char buf[64];
  return ladle_err_set(err, LADLE_ENOTSUP, "%s: a key of type %s", what,
                       ladle_dtype_name(c->type, buf, sizeof buf));
}

ladle_status ladle_cpu_partition_check_keys(const char *what, const ladle_column *keys,
                                            size_t nkeys, int nparts, const int64_t *counts,
                                            bool (*takes)(ladle_type_id), ladle_error *err) {
  if (nparts < 1) return ladle_err_set(err, LADLE_EINVAL, "%s into %d parts", what, nparts);
  if (nkeys == 0 || keys == NULL) return ladle_err_set(err, LADLE_EINVAL, "%s without keys", what);
  if (counts == NULL) return ladle_err_set(err, LADLE_EINVAL, "%s without counts", what);
  for (size_t k = 0; k < nkeys; k++) {
    const ladle_column *c = &keys[k];
    if (c->length != keys[0].length)
      return ladle_err_set(err, LADLE_EINVAL, "%s: key %zu of %lld rows, key 0 of %lld", what, k,
                           (long long)c->length, (long long)keys[0].length);
    if (!takes(c->type.id)) return refuse_type(what, c, err);
    if (ladle_column_view_only(c))
      return ladle_err_set(err, LADLE_ENOTSUP, "%s: a view-only key", what);
  }
  return LADLE_OK;
}

ladle_status ladle_cpu_partition_check_splitters(const char *what, const ladle_column *keys,
                                                 const ladle_column *splitters, size_t nkeys,
                                                 int nparts, ladle_error *err) {
  if (splitters == NULL && nparts > 1)
    return ladle_err_set(err, LADLE_EINVAL, "%s into %d parts without splitters", what, nparts);
  for (size_t k = 0; splitters != NULL && k < nkeys; k++) {
    const ladle_column *s = &splitters[k];
    char ta[64], tb[64];
    if (!ladle_dtype_equal(s->type, keys[k].type))
      return ladle_err_set(err, LADLE_EINVAL, "%s: splitter %zu of type %s for a key of type %s",
                           what, k, ladle_dtype_name(s->type, ta, sizeof ta),
                           ladle_dtype_name(keys[k].type, tb, sizeof tb));
    if (s->length != nparts - 1)
      return ladle_err_set(err, LADLE_EINVAL, "%s: splitter %zu of %lld rows for %d parts", what, k,
                           (long long)s->length, nparts);
    if (ladle_column_view_only(s))
      return ladle_err_set(err, LADLE_ENOTSUP, "%s: a view-only splitter", what);
  }
  return LADLE_OK;
}

static ladle_status hash_partition_on(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                      int nparts, ladle_column *perm, int64_t *counts,
                                      ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_cpu_partition_check_keys("hash_partition", keys, nkeys, nparts, counts,
                                                     ladle_cpu_hash_partition_takes, err));
  part_job j;
  memset(&j, 0, sizeof j);
  j.keys = keys;
  j.nkeys = nkeys;
  j.nparts = nparts;
  j.n = keys[0].length;
  return partition_rows(ctx, &j, perm, counts, err);
}

ladle_status ladle_cpu_hash_partition(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                      int nparts, ladle_column *perm, int64_t *counts,
                                      ladle_error *err) {
  WITH_MR(ctx, hash_partition_on(ctx, keys, nkeys, nparts, perm, counts, err));
}

static ladle_status range_partition_on(const ladle_kctx *ctx, const ladle_column *keys,
                                       const ladle_column *splitters, size_t nkeys,
                                       const bool *descending, const bool *nulls_last, int nparts,
                                       ladle_column *perm, int64_t *counts, ladle_error *err) {
  const char *what = "range_partition";
  LADLE_RETURN_NOT_OK(ladle_cpu_partition_check_keys(what, keys, nkeys, nparts, counts,
                                                     ladle_cpu_sort_orders, err));
  LADLE_RETURN_NOT_OK(
      ladle_cpu_partition_check_splitters(what, keys, splitters, nkeys, nparts, err));
  for (int p = 1; p + 1 < nparts; p++)
    if (ladle_cpu_sort_cmp(splitters, p - 1, splitters, p, nkeys, descending, nulls_last) > 0)
      return ladle_err_set(err, LADLE_EINVAL, "%s: splitter rows %d and %d out of order", what,
                           p - 1, p);
  part_job j;
  memset(&j, 0, sizeof j);
  j.keys = keys;
  j.splitters = splitters;
  j.nkeys = nkeys;
  j.desc = descending;
  j.nulls_last = nulls_last;
  j.nparts = nparts;
  j.range = true;
  j.n = keys[0].length;
  ladle_type_id t = keys[0].type.id;
  if (nkeys > 1 || nparts == 1 || t == LADLE_TYPE_STRING || t == LADLE_TYPE_NULL)
    return partition_rows(ctx, &j, perm, counts, err);
  /* one fixed-width key: the splitters ranked once, the rows a chunk at a time */
  uint64_t *scode = malloc((size_t)nparts * sizeof *scode);
  ladle_u128 *srank = malloc((size_t)nparts * sizeof *srank);
  if (scode == NULL || srank == NULL) {
    free(scode);
    free(srank);
    return LADLE_OOM(err, "partition");
  }
  bool desc = descending && descending[0], last = nulls_last && nulls_last[0];
  ladle_cpu_sort_codes(&splitters[0], 0, nparts - 1, scode);
  for (int p = 0; p + 1 < nparts; p++) {
    uint64_t v = desc ? ~scode[p] : scode[p];
    srank[p] = ladle_column_valid(&splitters[0], p) ? (ladle_u128)1 << 64 | v
                                                    : (ladle_u128)(last ? 2 : 0) << 64;
  }
  free(scode);
  j.srank = srank;
  ladle_status st = partition_rows(ctx, &j, perm, counts, err);
  free(srank);
  return st;
}

ladle_status ladle_cpu_range_partition(const ladle_kctx *ctx, const ladle_column *keys,
                                       const ladle_column *splitters, size_t nkeys,
                                       const bool *descending, const bool *nulls_last, int nparts,
                                       ladle_column *perm, int64_t *counts, ladle_error *err) {
  WITH_MR(ctx, range_partition_on(ctx, keys, splitters, nkeys, descending, nulls_last, nparts, perm,
                                  counts, err));
}
