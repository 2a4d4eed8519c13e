/* join.c — hash joins. The right side is built into a keymap (radix-partitioned
 * tables, see keys.c) and the left side probes it in parallel; matches come out
 * as (left row, right row) pairs in left order, right rows of a key in right
 * order. A right join is a left join with the sides swapped. Null keys match
 * only with nulls_equal. */
#include <pthread.h>

#include "cpu.h"

enum { LADLE_PACK_KEYS = 8 };

static ladle_status pairs_alloc(ladle_join_pairs *p, int64_t n, bool left, bool right,
                                ladle_error *err) {
  p->n = n;
  p->left = left ? ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *p->left, false) : NULL;
  p->right = right ? ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *p->right, false) : NULL;
  if ((left && p->left == NULL) || (right && p->right == NULL)) {
    ladle_scratch_free(p->left);
    ladle_scratch_free(p->right);
    memset(p, 0, sizeof *p);
    return LADLE_OOM(err, "join output");
  }
  return LADLE_OK;
}

/* Runs (backend.h): probe row i matches the build rows rows[offsets[group[i]]
 * .. offsets[group[i] + 1]) (rows NULL: the build rows themselves; none when
 * group[i] < 0), or, with keep and none, gives one pair with -1; its pairs
 * start at start[i]. swapped: the probe side is the right one (a right join).
 * offsets is malloc'd, the other arrays are scratch. */
struct ladle_join_runs {
  int64_t np;
  int64_t *start;   /* np + 1 */
  int64_t *group;   /* np */
  int64_t *offsets; /* groups + 1 */
  int64_t *rows;
  bool keep, swapped;
};

void ladle_cpu_join_runs_free(ladle_join_runs *r) {
  if (r == NULL) return;
  ladle_scratch_free(r->start);
  ladle_scratch_free(r->group);
  free(r->offsets);
  ladle_scratch_free(r->rows);
  free(r);
}

/* Takes group (np), offsets and rows over; start is computed here. */
static ladle_status runs_make(int64_t np, int64_t *group, int64_t *offsets, int64_t *rows,
                              bool keep, ladle_join_pairs *out, ladle_error *err) {
  ladle_join_runs *r = calloc(1, sizeof *r);
  int64_t *start = ladle_scratch_alloc((size_t)(np + 1) * sizeof *start, false);
  if (r == NULL || start == NULL) {
    free(r);
    ladle_scratch_free(start);
    ladle_scratch_free(group);
    free(offsets);
    ladle_scratch_free(rows);
    return LADLE_OOM(err, "join runs");
  }
  start[0] = 0;
  for (int64_t i = 0; i < np; i++) {
    int64_t g = group[i], c = g >= 0 ? offsets[g + 1] - offsets[g] : 0;
    start[i + 1] = start[i] + (c == 0 && keep ? 1 : c);
  }
  *r = (ladle_join_runs){np, start, group, offsets, rows, keep, false};
  memset(out, 0, sizeof *out);
  out->n = start[np];
  out->runs = r;
  return LADLE_OK;
}

ladle_status ladle_cpu_join_pairs_fill(const ladle_kctx *ctx, const ladle_join_runs *r,
                                       int64_t from, int64_t n, int64_t *left, int64_t *right,
                                       ladle_error *err) {
  LADLE_UNUSED(ctx);
  if (n <= 0) return LADLE_OK;
  if (from < 0 || from + n > r->start[r->np])
    return ladle_err_set(err, LADLE_EINVAL, "internal: join pairs %lld+%lld of %lld",
                         (long long)from, (long long)n, (long long)r->start[r->np]);
  int64_t *P = r->swapped ? right : left, *B = r->swapped ? left : right;
  /* the probe row whose pairs hold `from`: the last i with start[i] <= from */
  int64_t lo = 0, hi = r->np - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (r->start[mid] <= from)
      lo = mid;
    else
      hi = mid - 1;
  }
  int64_t i = lo, j = from - r->start[i], k = 0;
  while (k < n) {
    int64_t g = r->group[i], a = g >= 0 ? r->offsets[g] : 0, e = g >= 0 ? r->offsets[g + 1] : 0;
    if (a == e) { /* no match: one pair with -1 when kept, else none */
      if (r->keep) {
        if (P) P[k] = i;
        if (B) B[k] = -1;
        k++;
      }
      i++;
      j = 0;
      continue;
    }
    int64_t take = LADLE_MIN(e - a - j, n - k);
    if (P)
      for (int64_t t = 0; t < take; t++) P[k + t] = i;
    if (B) {
      if (r->rows)
        memcpy(B + k, r->rows + a + j, (size_t)take * sizeof *B);
      else
        for (int64_t t = 0; t < take; t++) B[k + t] = a + j + t;
    }
    k += take;
    j += take;
    if (a + j == e) {
      i++;
      j = 0;
    }
  }
  return LADLE_OK;
}

/* Whether a join's n pairs over nl + nr input rows are better kept as runs. */
static bool expanding(int64_t n, int64_t nl, int64_t nr) { return n > 65536 && n / 2 > nl + nr; }

/* ------------------------------------------------ pairs and buckets, in parallel
 *
 * A join's output from its probe: each probe row falls in a group (or none),
 * and group g holds its rows of the other side, rows[off[g] .. off[g + 1]) in
 * order. Pairs come out probe row by probe row: per block of probe rows they
 * are counted, the counts summed into each block's first position, then each
 * block writes its own. */
typedef struct pairs_job {
  const int64_t *lg;   /* per probe row: its group, -1 for none; or NULL and: */
  const uint32_t *lid; /* per probe row: its group */
  const int64_t *off;  /* NULL: a group is one match, the build row first[g] */
  const int64_t *rows;
  const int64_t *first; /* (semi and anti joins: NULL, no build rows written) */
  ladle_join_type how;  /* SEMI or ANTI: probe rows alone; else pairs */
  bool keep;            /* a probe row without match gives (row, -1) */
  int64_t n, block;
  int64_t *start; /* per block: its count, then its first position */
  int64_t *left, *right;
  bool no_left; /* the left rows are the identity: not written (left NULL) */
  int phase;
} pairs_job;

static inline int64_t pairs_matches(const pairs_job *j, int64_t i, int64_t *g) {
  *g = j->lg ? j->lg[i] : (int64_t)j->lid[i];
  if (*g < 0) return 0;
  return j->off ? j->off[*g + 1] - j->off[*g] : 1;
}

static ladle_status pairs_block(void *vctx, size_t b, ladle_error *err) {
  LADLE_UNUSED(err);
  pairs_job *j = vctx;
  int64_t a = (int64_t)b * j->block, e = LADLE_MIN(a + j->block, j->n), g;
  bool filter = j->how == LADLE_JOIN_SEMI || j->how == LADLE_JOIN_ANTI;
  bool semi = j->how == LADLE_JOIN_SEMI;
  if (j->phase == 0) {
    int64_t c = 0;
    for (int64_t i = a; i < e; i++) {
      int64_t m = pairs_matches(j, i, &g);
      c += filter ? (m > 0) == semi : m == 0 && j->keep ? 1 : m;
    }
    j->start[b] = c;
    return LADLE_OK;
  }
  int64_t k = j->start[b];
  for (int64_t i = a; i < e; i++) {
    int64_t m = pairs_matches(j, i, &g);
    if (filter) {
      if ((m > 0) == semi) j->left[k++] = i;
      continue;
    }
    if (m == 0) {
      if (j->keep) {
        if (j->left != NULL) j->left[k] = i;
        j->right[k++] = -1;
      }
      continue;
    }
    if (j->off == NULL) {
      if (j->left != NULL) j->left[k] = i;
      j->right[k++] = j->first[g];
      continue;
    }
    for (int64_t r = j->off[g]; r < j->off[g + 1]; r++) {
      if (j->left != NULL) j->left[k] = i;
      j->right[k++] = j->rows[r];
    }
  }
  return LADLE_OK;
}

/* Counts j's output into *total (and each block's first position). */
static ladle_status pairs_count(const ladle_kctx *ctx, pairs_job *j, int64_t *total,
                                ladle_error *err) {
  j->block = ladle_cpu_block(ctx, j->n);
  size_t nb = (size_t)LADLE_MAX((j->n + j->block - 1) / j->block, 1);
  j->start = malloc(nb * sizeof *j->start);
  if (j->start == NULL) return LADLE_OOM(err, "join");
  j->start[0] = 0;
  j->phase = 0;
  ladle_status st = j->n > 0 ? ladle_pool_run(ctx->pool, nb, pairs_block, j, err) : LADLE_OK;
  if (st != LADLE_OK) {
    free(j->start);
    j->start = NULL;
  }
  int64_t run = 0;
  for (size_t b = 0; st == LADLE_OK && b < nb; b++) {
    int64_t c = j->start[b];
    j->start[b] = run;
    run += c;
  }
  *total = run;
  return st;
}

/* Allocates *out for n pairs (right rows too unless a semi or anti join; n
 * may exceed j's count, the rest the caller's) and writes j's output from
 * position 0; frees j->start either way. */
static ladle_status pairs_emit(const ladle_kctx *ctx, pairs_job *j, int64_t n,
                               ladle_join_pairs *out, ladle_error *err) {
  bool right = j->how != LADLE_JOIN_SEMI && j->how != LADLE_JOIN_ANTI;
  ladle_status st = pairs_alloc(out, n, !j->no_left, right, err);
  if (st == LADLE_OK && j->n > 0) {
    j->left = out->left;
    j->right = out->right;
    j->phase = 1;
    size_t nb = (size_t)LADLE_MAX((j->n + j->block - 1) / j->block, 1);
    st = ladle_pool_run(ctx->pool, nb, pairs_block, j, err);
  }
  free(j->start);
  j->start = NULL;
  return st;
}

static ladle_status cross_join(const ladle_column *l, const ladle_column *r, ladle_join_pairs *out,
                               ladle_error *err) {
  int64_t nl = l->length, nr = r->length;
  if (nr > 0 && nl > INT64_MAX / 16 / nr)
    return ladle_err_set(err, LADLE_ENOMEM, "cross join of %lld x %lld rows is too large",
                         (long long)nl, (long long)nr);
  if (expanding(nl * nr, nl, nr)) {
    int64_t *group = ladle_scratch_alloc((size_t)LADLE_MAX(nl, 1) * sizeof *group, false);
    int64_t *offsets = malloc(2 * sizeof *offsets);
    if (group == NULL || offsets == NULL) {
      ladle_scratch_free(group);
      free(offsets);
      return LADLE_OOM(err, "join runs");
    }
    for (int64_t i = 0; i < nl; i++) group[i] = 0;
    offsets[0] = 0;
    offsets[1] = nr;
    return runs_make(nl, group, offsets, NULL, false, out, err);
  }
  LADLE_RETURN_NOT_OK(pairs_alloc(out, nl * nr, true, true, err));
  int64_t k = 0;
  for (int64_t i = 0; i < nl; i++)
    for (int64_t j = 0; j < nr; j++, k++) {
      out->left[k] = i;
      out->right[k] = j;
    }
  return LADLE_OK;
}

/* Several integer keys packed into one: each key's value less its build-side
 * minimum, in mixed radix over the build-side ranges, so that equal packs are
 * equal key tuples. A probe row with a key outside the build's range gets
 * `miss` (the product of the ranges), which no build row has; a row with a
 * null key is null. */
typedef struct key_pack {
  const ladle_column *keys;
  size_t nkeys;
  int64_t lo[LADLE_PACK_KEYS];
  uint64_t range[LADLE_PACK_KEYS];
  uint64_t miss;
  uint64_t *out;
  uint8_t *valid; /* NULL: no key has nulls */
  int64_t piece;  /* rows per task, a multiple of 8 (tasks share no validity byte) */
} key_pack;

/* Key k's rows [a, a + m) folded into acc (times its range, plus its value
 * less its minimum), and a row whose value is outside the range marked in
 * `out_of`: one typed loop per key and block, the compiler's to vectorise. */
#define PACK_FOLD(T)                             \
  {                                              \
    const T *x = (const T *)c->values + a;       \
    for (int64_t i = 0; i < m; i++) {            \
      uint64_t d = (uint64_t)(int64_t)x[i] - lo; \
      out_of[i] |= d >= r;                       \
      acc[i] = acc[i] * r + d;                   \
    }                                            \
  }

static ladle_status pack_piece(void *vctx, size_t piece, ladle_error *err) {
  LADLE_UNUSED(err);
  key_pack *kp = vctx;
  int64_t a0 = (int64_t)piece * kp->piece, e = LADLE_MIN(a0 + kp->piece, kp->keys[0].length);
  enum { B = 2048 };
  uint8_t out_of[B];
  for (int64_t a = a0; a < e; a += B) {
    int64_t m = LADLE_MIN((int64_t)B, e - a);
    uint64_t *acc = kp->out + a;
    memset(acc, 0, (size_t)m * sizeof *acc);
    memset(out_of, 0, (size_t)m);
    for (size_t k = 0; k < kp->nkeys; k++) {
      const ladle_column *c = &kp->keys[k];
      uint64_t lo = (uint64_t)kp->lo[k], r = kp->range[k];
      switch (ladle_type_phys(c->type.id)) {
        case LADLE_PHYS_I8:
          PACK_FOLD(int8_t);
          break;
        case LADLE_PHYS_U8:
          PACK_FOLD(uint8_t);
          break;
        case LADLE_PHYS_I16:
          PACK_FOLD(int16_t);
          break;
        case LADLE_PHYS_U16:
          PACK_FOLD(uint16_t);
          break;
        case LADLE_PHYS_I32:
          PACK_FOLD(int32_t);
          break;
        case LADLE_PHYS_U32:
          PACK_FOLD(uint32_t);
          break;
        default:
          PACK_FOLD(int64_t);
          break;
      }
    }
    for (int64_t i = 0; i < m; i++) acc[i] = out_of[i] ? kp->miss : acc[i];
    if (kp->valid != NULL)
      for (int64_t i = a; i < a + m; i++) {
        bool valid = true;
        for (size_t k = 0; k < kp->nkeys; k++) valid &= ladle_column_valid(&kp->keys[k], i);
        if (valid)
          kp->valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        else
          kp->valid[i >> 3] &= (uint8_t) ~(1u << (i & 7));
      }
  }
  return LADLE_OK;
}
#undef PACK_FOLD

/* Packs `keys` (of any length) over the ranges in kp into a fresh UINT64
 * column. */
static ladle_status pack_column(const ladle_kctx *ctx, key_pack *kp, const ladle_column *keys,
                                ladle_column *out, ladle_error *err) {
  int64_t n = keys[0].length;
  bool nulls = false;
  for (size_t k = 0; k < kp->nkeys; k++) nulls |= keys[k].validity != NULL;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT64), n, nulls, 0, out, err));
  kp->keys = keys;
  kp->out = LADLE_COL_MUT(out, uint64_t);
  kp->valid = nulls ? LADLE_COL_VALIDITY_MUT(out) : NULL;
  if (nulls) memset(kp->valid, 0, (size_t)ladle_bitmap_bytes(n));
  size_t pieces = ladle_cpu_pieces(ctx, n, 65536, 4, 8, &kp->piece); /* whole validity bytes */
  ladle_status st = ladle_pool_run(ctx->pool, pieces, pack_piece, kp, err);
  if (st != LADLE_OK) {
    ladle_column_release(out);
    return st;
  }
  ladle_column_finish_nulls(out);
  return LADLE_OK;
}

/* Whether the keys of a several-key join can be packed into one integer (every
 * key an integer type of at most 32 bits, or a 64-bit one, the same type on
 * both sides, the product of the build side's ranges below 2^63, no null
 * equality), and if so the ranges. */
static bool pack_plan(const ladle_column *build, const ladle_dtype *probe, size_t nkeys,
                      bool nulls_equal, key_pack *kp) {
  if (nkeys < 2 || nkeys > LADLE_PACK_KEYS || nulls_equal || build[0].length == 0) return false;
  memset(kp, 0, sizeof *kp);
  kp->nkeys = nkeys;
  uint64_t total = 1;
  for (size_t k = 0; k < nkeys; k++) {
    int64_t v;
    if (!ladle_dtype_equal(build[k].type, probe[k]) || !ladle_int_value(&build[k], 0, &v))
      return false;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t i = 0; i < build[k].length; i++) {
      if (!ladle_column_valid(&build[k], i)) continue;
      ladle_int_value(&build[k], i, &v);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    if (lo > hi) lo = hi = 0; /* every key null: nothing can match */
    uint64_t r = (uint64_t)hi - (uint64_t)lo + 1;
    if (r == 0 || r > ((uint64_t)1 << 62) || total > ((uint64_t)1 << 62) / r) return false;
    total *= r;
    kp->lo[k] = lo;
    kp->range[k] = r;
  }
  kp->miss = total;
  return true;
}

/* Groups the build side's keys and finds, for each probe row, the group its
 * key falls in (-1: none): through the one-key map of groupby_fast.c when the
 * key allows it, else the row-encoded keymap of keys.c. With `hrows`, a probe
 * that mostly misses may answer sparsely (ladle_fastmap_probe_sparse): *nhits
 * >= 0 then, else -1. */
static ladle_status group_and_probe(const ladle_kctx *ctx, const ladle_column *build,
                                    const ladle_column *probe, size_t nkeys, bool nulls_equal,
                                    ladle_groups *g, int64_t *gid, int64_t *hrows, int64_t *nhits,
                                    ladle_error *err) {
  int64_t dense;
  if (nhits == NULL) nhits = &dense;
  *nhits = -1;
  key_pack kp;
  double tp = LADLE_PHASE_START();
  ladle_dtype pt[LADLE_PACK_KEYS];
  for (size_t k = 0; k < nkeys && k < LADLE_PACK_KEYS; k++) pt[k] = probe[k].type;
  if (pack_plan(build, pt, nkeys, nulls_equal, &kp)) {
    ladle_column bp, pp;
    LADLE_RETURN_NOT_OK(pack_column(ctx, &kp, build, &bp, err));
    ladle_status st = pack_column(ctx, &kp, probe, &pp, err);
    LADLE_PHASE_END("join pack keys", build[0].length + probe[0].length, tp);
    if (st == LADLE_OK) {
      st = group_and_probe(ctx, &bp, &pp, 1, nulls_equal, g, gid, hrows, nhits, err);
      ladle_column_release(&pp);
    }
    ladle_column_release(&bp);
    return st;
  }
  ladle_keymap *km = NULL;
  ladle_fastmap *fm = NULL;
  bool fast =
      ladle_fastmap_eligible(build, nkeys) && ladle_dtype_equal(build[0].type, probe[0].type);
  double t0 = LADLE_PHASE_START();
  ladle_status st = fast ? ladle_fastmap_build(ctx, &build[0], g, &fm, err)
                         : ladle_keymap_build(ctx, build, nkeys, &km, g, err);
  LADLE_PHASE_END(fast ? "join build (fastmap)" : "join build (keymap)", build[0].length, t0);
  t0 = LADLE_PHASE_START();
  if (st == LADLE_OK)
    st = fast ? ladle_fastmap_probe_sparse(ctx, fm, &probe[0], nulls_equal, gid, hrows, nhits, err)
              : ladle_keymap_probe(ctx, km, probe, nkeys, nulls_equal, gid, err);
  LADLE_PHASE_END("join probe", probe[0].length, t0);
  ladle_fastmap_destroy(fm);
  ladle_keymap_destroy(km);
  return st;
}

/* A join whose right side is much bigger than its left (a filtered dimension
 * semi-joined to a fact table, orders joined to lineitem): the left keys are
 * grouped and the right side probes them, so the table built is the small
 * one. Right rows are then bucketed by the left group they hit (a counting
 * sort, keeping right order), and pairs come out in left order with each left
 * row's right rows in right order: the same output as building on the right. */
static ladle_status join_build_left(const ladle_kctx *ctx, const ladle_column *lkeys,
                                    const ladle_column *rkeys, size_t nkeys, ladle_join_type how,
                                    bool nulls_equal, ladle_join_pairs *out, ladle_error *err) {
  int64_t nl = lkeys[0].length, nr = rkeys[0].length;
  ladle_groups g;
  memset(&g, 0, sizeof g);
  int64_t *rg = ladle_scratch_alloc((size_t)LADLE_MAX(nr, 1) * sizeof *rg, false);
  /* the right rows that hit, when the probe answers sparsely (few do) */
  int64_t *hr = ladle_scratch_alloc((size_t)LADLE_MAX(nr, 1) * sizeof *hr, false);
  int64_t *off = NULL, *rows = NULL, nh = -1;
  ladle_status st = rg == NULL || hr == NULL ? LADLE_OOM(err, "join")
                                             : group_and_probe(ctx, lkeys, rkeys, nkeys,
                                                               nulls_equal, &g, rg, hr, &nh, err);
  if (st != LADLE_OK) goto done;
  double t0 = LADLE_PHASE_START();
  /* a left null-key group only ever matches through nulls_equal, which the
   * probe already decided; right rows by left group, in right order */
  st = ladle_cpu_bucket(ctx, rg, NULL, nh >= 0 ? hr : NULL, nh >= 0 ? nh : nr, g.ngroups, &off,
                        &rows, err);
  LADLE_PHASE_END("join bucket right rows", nh >= 0 ? nh : nr, t0);
  if (st != LADLE_OK) goto done;
  t0 = LADLE_PHASE_START();
  pairs_job pj;
  memset(&pj, 0, sizeof pj);
  pj.lid = g.ids;
  pj.off = off;
  pj.rows = rows;
  pj.how = how;
  pj.keep = how == LADLE_JOIN_LEFT;
  pj.n = nl;
  int64_t n = 0;
  st = pairs_count(ctx, &pj, &n, err);
  if (st == LADLE_OK && how != LADLE_JOIN_SEMI && how != LADLE_JOIN_ANTI && expanding(n, nl, nr)) {
    free(pj.start);
    int64_t *group = ladle_scratch_alloc((size_t)LADLE_MAX(nl, 1) * sizeof *group, false);
    if (group == NULL) {
      st = LADLE_OOM(err, "join runs");
      goto done;
    }
    for (int64_t i = 0; i < nl; i++) group[i] = g.ids[i];
    st = runs_make(nl, group, off, rows, pj.keep, out, err);
    off = NULL;
    rows = NULL;
    goto done;
  }
  if (st == LADLE_OK) st = pairs_emit(ctx, &pj, n, out, err);
  LADLE_PHASE_END("join pairs (build left)", n, t0);
done:
  ladle_scratch_free(rg);
  ladle_scratch_free(hr);
  free(off);
  ladle_scratch_free(rows);
  ladle_groups_release(&g);
  return st;
}

ladle_status ladle_cpu_join(const ladle_kctx *ctx, const ladle_column *lkeys,
                            const ladle_column *rkeys, size_t nkeys, ladle_join_type how,
                            bool nulls_equal, ladle_join_pairs *out, ladle_error *err) {
  memset(out, 0, sizeof *out);
  if (how == LADLE_JOIN_CROSS) return cross_join(&lkeys[0], &rkeys[0], out, err);
  if (how == LADLE_JOIN_RIGHT) {
    ladle_join_pairs sw;
    LADLE_RETURN_NOT_OK(
        ladle_cpu_join(ctx, rkeys, lkeys, nkeys, LADLE_JOIN_LEFT, nulls_equal, &sw, err));
    if (!ladle_join_pairs_write_left(&sw)) { /* the right rows of a right join */
      ladle_scratch_free(sw.right);
      return LADLE_OOM(err, "join");
    }
    sw.left_identity = false;
    out->n = sw.n;
    out->left = sw.right;
    out->right = sw.left;
    out->runs = sw.runs;
    if (out->runs != NULL) out->runs->swapped = true;
    return LADLE_OK;
  }
  int64_t nl = lkeys[0].length, nr = rkeys[0].length;
  if ((how == LADLE_JOIN_INNER || how == LADLE_JOIN_LEFT || how == LADLE_JOIN_SEMI ||
       how == LADLE_JOIN_ANTI) &&
      nr > 4 * nl && nr > 65536)
    return join_build_left(ctx, lkeys, rkeys, nkeys, how, nulls_equal, out, err);
  ladle_groups g;
  memset(&g, 0, sizeof g);
  int64_t *lg = ladle_scratch_alloc((size_t)LADLE_MAX(nl, 1) * sizeof *lg, false);
  uint8_t *hit = NULL;
  ladle_status st =
      lg == NULL ? LADLE_OOM(err, "join")
                 : group_and_probe(ctx, rkeys, lkeys, nkeys, nulls_equal, &g, lg, NULL, NULL, err);
  if (st != LADLE_OK) goto done;
  pairs_job pj;
  memset(&pj, 0, sizeof pj);
  pj.lg = lg;
  pj.how = how;
  pj.keep = how == LADLE_JOIN_LEFT || how == LADLE_JOIN_FULL;
  pj.n = nl;
  int64_t n = 0;
  if (how == LADLE_JOIN_SEMI || how == LADLE_JOIN_ANTI) {
    st = pairs_count(ctx, &pj, &n, err);
    if (st == LADLE_OK) st = pairs_emit(ctx, &pj, n, out, err);
    goto done;
  }
  double t0 = LADLE_PHASE_START();
  if (g.ngroups == nr) {
    pj.first = g.first; /* unique build keys (a dimension's primary key): no CSR */
  } else {
    st = ladle_cpu_groups_csr(ctx, &g, err);
    if (st != LADLE_OK) goto done;
    pj.off = g.offsets;
    pj.rows = g.rows;
  }
  LADLE_PHASE_END("join csr", nr, t0);
  t0 = LADLE_PHASE_START();
  st = pairs_count(ctx, &pj, &n, err);
  if (st != LADLE_OK) goto done;
  if (pj.off != NULL && (how == LADLE_JOIN_INNER || how == LADLE_JOIN_LEFT) &&
      expanding(n, nl, nr)) {
    free(pj.start);
    st = runs_make(nl, lg, g.offsets, g.rows, pj.keep, out, err);
    lg = NULL;
    g.offsets = NULL;
    g.rows = NULL;
    goto done;
  }
  int64_t npairs = n;
  /* a pair per left row (a left join of as many pairs as left rows; an inner
   * one on unique right keys): the left rows are 0..nl-1, not written (the
   * executor then shares the left columns as they are) */
  pj.no_left = n == nl && (how == LADLE_JOIN_LEFT || (how == LADLE_JOIN_INNER && pj.off == NULL));
  out->left_identity = pj.no_left;
  if (how == LADLE_JOIN_FULL) {
    hit = calloc((size_t)LADLE_MAX(g.ngroups, 1), 1);
    if (hit == NULL) {
      free(pj.start);
      st = LADLE_OOM(err, "join");
      goto done;
    }
    for (int64_t i = 0; i < nl; i++)
      if (lg[i] >= 0) hit[lg[i]] = 1;
    for (int64_t j = 0; j < nr; j++) n += !hit[g.ids[j]];
  }
  st = pairs_emit(ctx, &pj, n, out, err);
  if (st != LADLE_OK) goto done;
  int64_t k = npairs;
  if (how == LADLE_JOIN_FULL)
    for (int64_t j = 0; j < nr; j++)
      if (!hit[g.ids[j]]) {
        out->left[k] = -1;
        out->right[k++] = j;
      }
  LADLE_PHASE_END("join pairs", n, t0);
done:
  ladle_scratch_free(lg);
  free(hit);
  ladle_groups_release(&g);
  return st;
}

/* ------------------------------------------------ a build side kept for probes
 *
 * The streaming join's table (backend.h join_build): the build keys packed
 * when several integers allow it, grouped through the one-key map or the
 * row-encoded keymap, and their rows by group (CSR) unless every key is
 * unique. A probe is one morsel's keys: packed over the build's ranges,
 * looked up, and its pairs written probe row by probe row, serially (the
 * pipeline runs the morsels in parallel). */
struct ladle_join_ht {
  size_t nkeys; /* 1 when packed */
  bool nulls_equal, packed, empty;
  key_pack kp;        /* packed: the build's ranges (kp.keys/out/valid unused) */
  ladle_column *keys; /* the build's keys (nkeys of them, or the packed one), kept */
  size_t nheld;
  ladle_fastmap *fm; /* or km */
  ladle_keymap *km;
  ladle_groups g;
  /* fm's probe aids, made by the first probe from its keys (a sample of the
   * probe side), under `mu`; `aided` set once they are there */
  pthread_mutex_t mu;
  atomic_bool aided;
  ladle_fastmap_aids *aids;
};

void ladle_cpu_join_ht_free(ladle_join_ht *ht) {
  if (ht == NULL) return;
  ladle_fastmap_aids_free(ht->aids);
  pthread_mutex_destroy(&ht->mu);
  for (size_t i = 0; i < ht->nheld; i++) ladle_column_release(&ht->keys[i]);
  free(ht->keys);
  ladle_fastmap_destroy(ht->fm);
  ladle_keymap_destroy(ht->km);
  ladle_groups_release(&ht->g);
  free(ht);
}

ladle_status ladle_cpu_join_build(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                  const ladle_dtype *probe_types, bool nulls_equal,
                                  ladle_join_ht **out, ladle_error *err) {
  *out = NULL;
  if (nkeys == 0) return ladle_err_set(err, LADLE_EINVAL, "internal: a streamed join without keys");
  ladle_join_ht *ht = calloc(1, sizeof *ht);
  if (ht == NULL) return LADLE_OOM(err, "join");
  pthread_mutex_init(&ht->mu, NULL);
  atomic_init(&ht->aided, false);
  ht->nulls_equal = nulls_equal;
  ht->nkeys = nkeys;
  ht->empty = keys[0].length == 0;
  ladle_status st = LADLE_OK;
  double t0 = LADLE_PHASE_START();
  if (pack_plan(keys, probe_types, nkeys, nulls_equal, &ht->kp)) {
    ht->keys = calloc(1, sizeof *ht->keys);
    st = ht->keys == NULL ? LADLE_OOM(err, "join") : pack_column(ctx, &ht->kp, keys, ht->keys, err);
    if (st == LADLE_OK) {
      ht->nheld = 1;
      ht->packed = true;
      ht->nkeys = 1;
    }
  } else {
    ht->keys = calloc(nkeys, sizeof *ht->keys);
    if (ht->keys == NULL) st = LADLE_OOM(err, "join");
    for (size_t k = 0; st == LADLE_OK && k < nkeys; k++)
      ladle_column_copy_ref(&keys[k], &ht->keys[k]);
    if (st == LADLE_OK) ht->nheld = nkeys;
  }
  if (st == LADLE_OK && !ht->empty) {
    bool fast = ladle_fastmap_eligible(ht->keys, ht->nkeys) &&
                (ht->packed || ladle_dtype_equal(ht->keys[0].type, probe_types[0]));
    st = fast ? ladle_fastmap_build(ctx, &ht->keys[0], &ht->g, &ht->fm, err)
              : ladle_keymap_build(ctx, ht->keys, ht->nkeys, &ht->km, &ht->g, err);
    if (st == LADLE_OK && ht->g.ngroups < ht->g.nrows) st = ladle_cpu_groups_csr(ctx, &ht->g, err);
  }
  LADLE_PHASE_END("join build (kept for probes)", keys[0].length, t0);
  if (st != LADLE_OK) {
    ladle_cpu_join_ht_free(ht);
    return st;
  }
  *out = ht;
  return LADLE_OK;
}

/* Each of one morsel's probe keys' group in ht (-1: none) into gid (n). */
static ladle_status probe_groups(const ladle_kctx *ctx, const ladle_join_ht *ht,
                                 const ladle_column *keys, int64_t *gid, ladle_error *err) {
  int64_t n = keys[0].length;
  if (ht->empty) {
    for (int64_t i = 0; i < n; i++) gid[i] = -1;
    return LADLE_OK;
  }
  ladle_status st = LADLE_OK;
  ladle_column pk;
  bool packed = ht->packed;
  if (packed) {
    key_pack kp = ht->kp; /* its own: pack_column writes where it packs */
    st = pack_column(ctx, &kp, keys, &pk, err);
    packed = st == LADLE_OK;
  }
  const ladle_column *k = packed ? &pk : keys;
  if (st == LADLE_OK && ht->fm != NULL) {
    /* the aids a one-shot probe would choose from its sample, chosen once
     * from the first morsel's keys (a one-shot probe's per-call work, a
     * Bloom filter of the whole table, would be paid per morsel) */
    ladle_join_ht *w = (ladle_join_ht *)(uintptr_t)ht;
    if (!atomic_load_explicit(&w->aided, memory_order_acquire)) {
      pthread_mutex_lock(&w->mu);
      if (!atomic_load_explicit(&w->aided, memory_order_relaxed) && k->length > 0) {
        st = ladle_fastmap_aids_make(ctx, ht->fm, k, &w->aids, err);
        if (st == LADLE_OK) atomic_store_explicit(&w->aided, true, memory_order_release);
      }
      pthread_mutex_unlock(&w->mu);
    }
    if (st == LADLE_OK)
      st = ladle_fastmap_probe_aided(ctx, ht->fm, w->aids, k, ht->nulls_equal, gid, err);
  } else if (st == LADLE_OK) {
    st = ladle_keymap_probe(ctx, ht->km, k, ht->nkeys, ht->nulls_equal, gid, err);
  }
  if (packed) ladle_column_release(&pk);
  return st;
}

ladle_status ladle_cpu_join_probe(const ladle_kctx *ctx, const ladle_join_ht *ht,
                                  const ladle_column *keys, ladle_join_type how,
                                  ladle_join_pairs *out, ladle_error *err) {
  memset(out, 0, sizeof *out);
  if (how != LADLE_JOIN_INNER && how != LADLE_JOIN_LEFT && how != LADLE_JOIN_SEMI &&
      how != LADLE_JOIN_ANTI)
    return ladle_err_set(err, LADLE_EINVAL, "internal: a streamed %s join",
                         how == LADLE_JOIN_FULL ? "full" : "right or cross");
  int64_t n = keys[0].length;
  int64_t *gid = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *gid, false);
  if (gid == NULL) return LADLE_OOM(err, "join");
  ladle_status st = probe_groups(ctx, ht, keys, gid, err);
  if (st == LADLE_OK) {
    pairs_job pj;
    memset(&pj, 0, sizeof pj);
    pj.lg = gid;
    pj.how = how;
    pj.keep = how == LADLE_JOIN_LEFT;
    pj.n = n;
    if (ht->g.offsets != NULL) {
      pj.off = ht->g.offsets;
      pj.rows = ht->g.rows;
    } else {
      pj.first = ht->g.first;
    }
    int64_t total = 0;
    st = pairs_count(ctx, &pj, &total, err);
    if (st == LADLE_OK) st = pairs_emit(ctx, &pj, total, out, err);
    if (st == LADLE_OK) out->n = total;
    /* a pair per probe row: a left, semi or anti join of as many pairs as
     * rows, an inner one on unique build keys */
    out->left_identity =
        st == LADLE_OK && total == n && (how != LADLE_JOIN_INNER || pj.off == NULL);
  }
  ladle_scratch_free(gid);
  return st;
}

/* A build row's mark written where it differs (the bytes are shared by the
 * morsels' tasks: relaxed atomics, and no store, so no cache line taken,
 * where another task marked it already). */
static inline void mark_row(uint8_t *marks, int64_t r, uint8_t value) {
  if (__atomic_load_n(&marks[r], __ATOMIC_RELAXED) != value)
    __atomic_store_n(&marks[r], value, __ATOMIC_RELAXED);
}

ladle_status ladle_cpu_join_probe_mark(const ladle_kctx *ctx, const ladle_join_ht *ht,
                                       const ladle_column *keys, uint8_t value, uint8_t *marks,
                                       ladle_error *err) {
  int64_t n = keys[0].length;
  if (ht->empty || n == 0) return LADLE_OK;
  int64_t *gid = ladle_scratch_alloc((size_t)n * sizeof *gid, false);
  if (gid == NULL) return LADLE_OOM(err, "join");
  ladle_status st = probe_groups(ctx, ht, keys, gid, err);
  const int64_t *off = ht->g.offsets, *rows = ht->g.rows, *first = ht->g.first;
  for (int64_t i = 0; st == LADLE_OK && i < n; i++) {
    int64_t g = gid[i];
    if (g < 0) continue;
    if (off == NULL) {
      mark_row(marks, first[g], value);
      continue;
    }
    /* a group's rows are marked together: its first one marked, the group
     * is (or is being, by another task that finishes before the sink does) */
    if (__atomic_load_n(&marks[rows[off[g]]], __ATOMIC_RELAXED) == value) continue;
    for (int64_t j = off[g]; j < off[g + 1]; j++) mark_row(marks, rows[j], value);
  }
  ladle_scratch_free(gid);
  return st;
}
