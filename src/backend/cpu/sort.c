/* sort.c — stable multi-key sorting and ranking.
 *
 * Keys are sorted least significant first, each by a stable pass: numeric keys
 * become order-preserving uint64 ("normalized keys") and go through an LSD radix
 * sort that skips bytes every key shares; strings go through a stable merge
 * sort; a last stable pass per key moves nulls to the front or the back. Floats
 * order as Polars does: -0.0 equals 0.0, NaN after +inf.
 */
#include "cpu.h"

static uint64_t norm_key(const ladle_column *c, int64_t i) {
  switch (ladle_type_phys(c->type.id)) {
    case LADLE_PHYS_U8:
      return ((const uint8_t *)c->values)[i];
    case LADLE_PHYS_U16:
      return ((const uint16_t *)c->values)[i];
    case LADLE_PHYS_U32:
      return ((const uint32_t *)c->values)[i];
    case LADLE_PHYS_U64:
      return ((const uint64_t *)c->values)[i];
    case LADLE_PHYS_I8:
      return (uint64_t)(int64_t)((const int8_t *)c->values)[i] ^ (1ULL << 63);
    case LADLE_PHYS_I16:
      return (uint64_t)(int64_t)((const int16_t *)c->values)[i] ^ (1ULL << 63);
    case LADLE_PHYS_I32:
      return (uint64_t)(int64_t)((const int32_t *)c->values)[i] ^ (1ULL << 63);
    case LADLE_PHYS_I64:
      return (uint64_t)((const int64_t *)c->values)[i] ^ (1ULL << 63);
    case LADLE_PHYS_F32:
    case LADLE_PHYS_F64: {
      double d = c->type.id == LADLE_TYPE_FLOAT32 ? (double)((const float *)c->values)[i]
                                                  : ((const double *)c->values)[i];
      if (d != d) return UINT64_MAX; /* NaN after everything */
      if (d == 0) d = 0.0;
      uint64_t b;
      memcpy(&b, &d, 8);
      return (b >> 63) ? ~b : b | (1ULL << 63);
    }
    default:
      return 0;
  }
}

/* Stable LSD radix sort of perm by keys (keys[i] belongs to perm[i]). */
static ladle_status radix_sort(uint64_t *keys, int64_t *perm, int64_t n, ladle_error *err) {
  uint64_t *k2 = malloc((size_t)LADLE_MAX(n, 1) * 8);
  int64_t *p2 = malloc((size_t)LADLE_MAX(n, 1) * 8);
  if (k2 == NULL || p2 == NULL) {
    free(k2);
    free(p2);
    return LADLE_OOM(err, "sort");
  }
  uint64_t *ks = keys, *kd = k2;
  int64_t *ps = perm, *pd = p2;
  for (int shift = 0; shift < 64; shift += 8) {
    int64_t count[257] = {0};
    for (int64_t i = 0; i < n; i++) count[((ks[i] >> shift) & 0xff) + 1]++;
    bool trivial = false;
    for (int b = 1; b <= 256; b++)
      if (count[b] == n) trivial = true;
    if (trivial) continue;
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    for (int64_t i = 0; i < n; i++) {
      int64_t d = count[(ks[i] >> shift) & 0xff]++;
      kd[d] = ks[i];
      pd[d] = ps[i];
    }
    uint64_t *tk = ks;
    ks = kd;
    kd = tk;
    int64_t *tp = ps;
    ps = pd;
    pd = tp;
  }
  if (ps != perm) memcpy(perm, ps, (size_t)n * 8);
  free(k2);
  free(p2);
  return LADLE_OK;
}

/* Strings in sort order, all nulls equal (before every value; the nulls pass
 * puts them where asked): a null row's bytes are whatever the slot holds and
 * must not order it. */
static inline int str_cmp_nulls(const ladle_column *c, int64_t i, int64_t j) {
  bool vi = ladle_column_valid(c, i), vj = ladle_column_valid(c, j);
  if (!vi || !vj) return (int)vi - (int)vj;
  return ladle_str_cmp(c, i, c, j);
}

/* Stable merge sort of perm[0..n) by cmp (< 0: a before b). */
typedef int (*row_cmp_fn)(const void *ctx, int64_t a, int64_t b);
static ladle_status merge_sort(int64_t *perm, int64_t n, row_cmp_fn cmp, const void *ctx,
                               ladle_error *err) {
  int64_t *tmp = malloc((size_t)LADLE_MAX(n, 1) * 8);
  if (tmp == NULL) return LADLE_OOM(err, "sort");
  int64_t *src = perm, *dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = LADLE_MIN(lo + width, n), hi = LADLE_MIN(lo + 2 * width, n);
      int64_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) dst[k++] = cmp(ctx, src[b], src[a]) < 0 ? src[b++] : src[a++];
      while (a < mid) dst[k++] = src[a++];
      while (b < hi) dst[k++] = src[b++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != perm) memcpy(perm, src, (size_t)n * 8);
  free(tmp);
  return LADLE_OK;
}

typedef struct str_order {
  const ladle_column *c;
  bool desc;
} str_order;

static int str_order_cmp(const void *ctx, int64_t a, int64_t b) {
  const str_order *o = ctx;
  int r = str_cmp_nulls(o->c, a, b);
  return o->desc ? -r : r;
}

/* Stable merge sort of perm by string value. */
static ladle_status string_sort(const ladle_column *c, int64_t *perm, int64_t n, bool desc,
                                ladle_error *err) {
  str_order o = {c, desc};
  return merge_sort(perm, n, str_order_cmp, &o, err);
}

static ladle_status nulls_pass(const ladle_column *c, int64_t *perm, int64_t n, bool nulls_last,
                               ladle_error *err) {
  if (c->validity == NULL && c->type.id != LADLE_TYPE_NULL) return LADLE_OK;
  int64_t *tmp = malloc((size_t)LADLE_MAX(n, 1) * 8);
  if (tmp == NULL) return LADLE_OOM(err, "sort");
  int64_t k = 0;
  for (int pass = 0; pass < 2; pass++) {
    bool want_null = (pass == 0) != nulls_last;
    for (int64_t i = 0; i < n; i++) {
      bool isnull = c->type.id == LADLE_TYPE_NULL || !ladle_column_valid(c, perm[i]);
      if (isnull == want_null) tmp[k++] = perm[i];
    }
  }
  memcpy(perm, tmp, (size_t)n * 8);
  free(tmp);
  return LADLE_OK;
}

/* A string key's distinct strings (grouped by hash, nulls one group) sorted
 * once: g groups c's rows and (*rank)[group] is its string's rank, ascending
 * (the nulls' group first). Rows then sort by rank with a radix pass, so the
 * string comparisons number (distinct strings) log (distinct strings)
 * instead of rows log rows. On success g and *rank are the caller's. */
static ladle_status string_ranks(const ladle_kctx *ctx, const ladle_column *c, ladle_groups *g,
                                 uint64_t **rank, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_cpu_group_ids(ctx, c, 1, g, err));
  int64_t ng = g->ngroups;
  int64_t *order = malloc((size_t)LADLE_MAX(ng, 1) * sizeof *order);
  *rank = malloc((size_t)LADLE_MAX(ng, 1) * sizeof **rank);
  ladle_status st = order && *rank ? LADLE_OK : LADLE_OOM(err, "sort");
  if (st == LADLE_OK) {
    memcpy(order, g->first, (size_t)ng * sizeof *order); /* a row of each string */
    st = string_sort(c, order, ng, false, err);
  }
  if (st == LADLE_OK)
    for (int64_t k = 0; k < ng; k++) (*rank)[g->ids[order[k]]] = (uint64_t)k;
  free(order);
  if (st != LADLE_OK) {
    free(*rank);
    *rank = NULL;
    ladle_groups_release(g);
  }
  return st;
}

/* perm sorted by a string key's ranks (string_ranks), stable: equal strings
 * share a rank; nulls share one too and the nulls pass places them after. */
static ladle_status rank_sort(const ladle_groups *g, const uint64_t *rank, int64_t *perm,
                              uint64_t *nk, int64_t n, bool desc, ladle_error *err) {
  uint64_t top = (uint64_t)LADLE_MAX(g->ngroups, 1) - 1;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rank[g->ids[perm[i]]];
    nk[i] = desc ? top - r : r;
  }
  return radix_sort(nk, perm, n, err);
}

/* Every key as an order-preserving code of few bits (an integer minus the
 * least, a string's rank among the distinct strings, nulls one code below or
 * above the values, descending keys reversed), packed most significant key
 * first into one 64-bit key when the bits add up to 64 at most: one stable
 * radix sort instead of a pass (and a nulls pass) per key, and only over the
 * bytes the codes use (TPC-H q16's four keys take 24 bits). Sets *st and
 * returns true when it sorted perm (the identity on entry); otherwise the
 * string keys' ranks it made in ck serve the pass per key. */
typedef struct code_key {
  uint64_t lo, span; /* valid values' codes are v - lo, in [0, span) */
  bool nulls;
  int bits;
  uint64_t *rank; /* strings: per group, the rank of its string */
  ladle_groups g;
} code_key;

static int bits_for(uint64_t values) {
  int b = 0;
  while (b < 64 && (values - 1) >> b != 0) b++;
  return b;
}

static bool packed_sort(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                        const bool *descending, const bool *nulls_last, code_key *ck, int64_t *perm,
                        uint64_t *nk, int64_t n, ladle_status *st, ladle_error *err) {
  if (n < 2) return false;
  int total = 0;
  bool ok = true;
  *st = LADLE_OK;
  for (size_t k = 0; k < nkeys && ok; k++) {
    const ladle_column *c = &keys[k];
    code_key *q = &ck[k];
    if (c->type.id == LADLE_TYPE_NULL) continue; /* every row equal */
    q->nulls = c->validity != NULL && c->null_count != 0;
    if (c->type.id == LADLE_TYPE_STRING) {
      *st = string_ranks(ctx, c, &q->g, &q->rank, err);
      if (*st != LADLE_OK) break;
      q->lo = 0;
      q->span = (uint64_t)LADLE_MAX(q->g.ngroups, 1);
    } else if (ladle_type_width(c->type.id) > 0 && !ladle_type_is_varlen(c->type.id) &&
               c->type.id != LADLE_TYPE_INT128 && c->type.id != LADLE_TYPE_DECIMAL) {
      uint64_t lo = UINT64_MAX, hi = 0;
      for (int64_t i = 0; i < n; i++) {
        if (!ladle_column_valid(c, i)) continue;
        uint64_t v = norm_key(c, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      if (lo > hi) lo = hi = 0;
      q->lo = lo;
      q->span = hi - lo + 1; /* 0: the whole 64 bits */
      if (q->span == 0) ok = false;
    } else {
      ok = false; /* lists, 128-bit values: the per-key passes */
      break;
    }
    if (!ok) break;
    q->bits = bits_for(q->span + q->nulls);
    total += q->bits;
    if (total > 64) ok = false;
  }
  if (*st == LADLE_OK && ok) {
    for (int64_t i = 0; i < n; i++) {
      uint64_t code = 0;
      for (size_t k = 0; k < nkeys; k++) {
        const ladle_column *c = &keys[k];
        const code_key *q = &ck[k];
        if (q->bits == 0) continue;
        uint64_t v;
        bool last = nulls_last ? nulls_last[k] : false;
        if (!ladle_column_valid(c, i)) {
          v = last ? q->span : 0; /* past every value, or before */
        } else {
          v = c->type.id == LADLE_TYPE_STRING ? q->rank[q->g.ids[i]] : norm_key(c, i) - q->lo;
          if (descending && descending[k]) v = q->span - 1 - v;
          v += q->nulls && !last;
        }
        code = q->bits == 64 ? v : (code << q->bits) | v; /* 64: the only key */
      }
      nk[i] = code;
    }
    *st = radix_sort(nk, perm, n, err);
  }
  return *st != LADLE_OK || ok;
}

ladle_status ladle_cpu_sort_indices(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                    const bool *descending, const bool *nulls_last,
                                    int64_t **out_perm, ladle_error *err) {
  int64_t n = nkeys > 0 ? keys[0].length : 0;
  int64_t *perm = malloc((size_t)LADLE_MAX(n, 1) * 8);
  uint64_t *nk = malloc((size_t)LADLE_MAX(n, 1) * 8);
  if (perm == NULL || nk == NULL) {
    free(perm);
    free(nk);
    return LADLE_OOM(err, "sort");
  }
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  code_key *ck = calloc(LADLE_MAX(nkeys, 1), sizeof *ck);
  ladle_status st = ck != NULL ? LADLE_OK : LADLE_OOM(err, "sort");
  bool packed = st == LADLE_OK &&
                packed_sort(ctx, keys, nkeys, descending, nulls_last, ck, perm, nk, n, &st, err);
  for (size_t kk = nkeys; !packed && kk-- > 0 && st == LADLE_OK;) {
    const ladle_column *c = &keys[kk];
    bool desc = descending ? descending[kk] : false;
    code_key *q = &ck[kk];
    if (c->type.id == LADLE_TYPE_STRING && (n >= 2048 || q->rank != NULL)) {
      if (q->rank == NULL) st = string_ranks(ctx, c, &q->g, &q->rank, err);
      if (st == LADLE_OK) st = rank_sort(&q->g, q->rank, perm, nk, n, desc, err);
    } else if (c->type.id == LADLE_TYPE_STRING) {
      st = string_sort(c, perm, n, desc, err);
    } else if (c->type.id != LADLE_TYPE_NULL) {
      for (int64_t i = 0; i < n; i++) {
        uint64_t v = ladle_column_valid(c, perm[i]) ? norm_key(c, perm[i]) : 0;
        nk[i] = desc ? ~v : v;
      }
      st = radix_sort(nk, perm, n, err);
    }
    if (st == LADLE_OK) st = nulls_pass(c, perm, n, nulls_last ? nulls_last[kk] : false, err);
  }
  for (size_t k = 0; ck != NULL && k < nkeys; k++) {
    free(ck[k].rank);
    if (ck[k].g.ids != NULL) ladle_groups_release(&ck[k].g);
  }
  free(ck);
  free(nk);
  if (st != LADLE_OK) {
    free(perm);
    return st;
  }
  *out_perm = perm;
  return LADLE_OK;
}

/* ----------------------------------------------------------------- top-k
 *
 * The first k rows of the stable sort order without sorting every row (a sort
 * followed by head(k), Polars' sort with a slice): each partition of the rows
 * keeps its k best rows in a max-heap (its worst on top, so a row that does not
 * beat it costs one comparison), and the candidates of all partitions are then
 * sorted and cut to k. Rows compare key by key as sort_indices orders them
 * (nulls where nulls_last puts them, then values, descending flips values only)
 * and finally by row index, which keeps it stable. */

typedef struct topk_job {
  const ladle_column *keys;
  size_t nkeys;
  const bool *desc, *nulls_last;
  int64_t n, k, part;
  int64_t *cand; /* k slots per partition */
  int64_t *ncand;
} topk_job;

void ladle_cpu_sort_codes(const ladle_column *c, int64_t a, int64_t e, uint64_t *out) {
  for (int64_t i = a; i < e; i++) out[i - a] = norm_key(c, i);
}

bool ladle_cpu_sort_orders(ladle_type_id id) {
  return id == LADLE_TYPE_NULL || id == LADLE_TYPE_STRING || id == LADLE_TYPE_BOOL ||
         ladle_type_is_numeric(id) || ladle_type_is_temporal(id);
}

int ladle_cpu_sort_cmp(const ladle_column *a, int64_t i, const ladle_column *b, int64_t j,
                       size_t nkeys, const bool *descending, const bool *nulls_last) {
  for (size_t kk = 0; kk < nkeys; kk++) {
    const ladle_column *c = &a[kk], *d = &b[kk];
    if (c->type.id == LADLE_TYPE_NULL) continue;
    bool va = ladle_column_valid(c, i), vb = ladle_column_valid(d, j);
    bool nl = nulls_last ? nulls_last[kk] : false;
    if (va != vb) return va ? (nl ? -1 : 1) : (nl ? 1 : -1);
    if (!va) continue;
    int r;
    if (c->type.id == LADLE_TYPE_STRING) {
      r = ladle_str_cmp(c, i, d, j);
      r = (r > 0) - (r < 0);
    } else {
      uint64_t x = norm_key(c, i), y = norm_key(d, j);
      r = (x > y) - (x < y);
    }
    if (descending && descending[kk]) r = -r;
    if (r != 0) return r;
  }
  return 0;
}

static int topk_cmp(const void *ctx, int64_t a, int64_t b) {
  const topk_job *t = ctx;
  int r = ladle_cpu_sort_cmp(t->keys, a, t->keys, b, t->nkeys, t->desc, t->nulls_last);
  return r != 0 ? r : (a > b) - (a < b);
}

static void topk_sift_down(const topk_job *t, int64_t *h, int64_t n, int64_t i) {
  for (;;) {
    int64_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && topk_cmp(t, h[l], h[m]) > 0) m = l;
    if (r < n && topk_cmp(t, h[r], h[m]) > 0) m = r;
    if (m == i) return;
    int64_t x = h[i];
    h[i] = h[m];
    h[m] = x;
    i = m;
  }
}

static ladle_status topk_part(void *vctx, size_t part, ladle_error *err) {
  (void)err;
  topk_job *t = vctx;
  int64_t lo = (int64_t)part * t->part, hi = LADLE_MIN(lo + t->part, t->n);
  int64_t *h = t->cand + (int64_t)part * t->k, m = 0;
  for (int64_t i = lo; i < hi; i++) {
    if (m < t->k) {
      /* sift up */
      int64_t j = m++;
      h[j] = i;
      while (j > 0 && topk_cmp(t, h[(j - 1) / 2], h[j]) < 0) {
        int64_t x = h[j];
        h[j] = h[(j - 1) / 2];
        h[(j - 1) / 2] = x;
        j = (j - 1) / 2;
      }
    } else if (topk_cmp(t, i, h[0]) < 0) {
      h[0] = i;
      topk_sift_down(t, h, m, 0);
    }
  }
  t->ncand[part] = m;
  return LADLE_OK;
}

ladle_status ladle_cpu_top_k_indices(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                     const bool *descending, const bool *nulls_last, int64_t k,
                                     int64_t **out_idx, ladle_error *err) {
  int64_t n = nkeys > 0 ? keys[0].length : 0;
  k = LADLE_MAX(LADLE_MIN(k, n), 0);
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  /* partitions of at least 64k rows and 8 k, a few per thread */
  int64_t part = LADLE_MAX(LADLE_MAX(n / LADLE_MAX(4 * threads, 1), (int64_t)1 << 16), 8 * k);
  size_t nparts = (size_t)((n + part - 1) / LADLE_MAX(part, 1));
  topk_job t = {keys, nkeys, descending, nulls_last, n, k, part, NULL, NULL};
  t.cand = malloc((size_t)LADLE_MAX((int64_t)nparts * k, 1) * sizeof *t.cand);
  t.ncand = calloc(LADLE_MAX(nparts, 1), sizeof *t.ncand);
  ladle_status st = t.cand && t.ncand ? LADLE_OK : LADLE_OOM(err, "top-k");
  /* k = 0: nothing to keep (every partition's heap would share one slot) */
  if (st == LADLE_OK && nparts > 0 && k > 0)
    st = ladle_pool_run(ctx->pool, nparts, topk_part, &t, err);
  int64_t m = 0;
  for (size_t p = 0; st == LADLE_OK && p < nparts; p++) {
    memmove(t.cand + m, t.cand + (int64_t)p * k, (size_t)t.ncand[p] * sizeof *t.cand);
    m += t.ncand[p];
  }
  /* the index tie-break of topk_cmp makes any order of equal keys come out by row */
  if (st == LADLE_OK) st = merge_sort(t.cand, m, topk_cmp, &t, err);
  free(t.ncand);
  if (st != LADLE_OK) {
    free(t.cand);
    return st;
  }
  *out_idx = t.cand; /* its first k are the answer */
  return LADLE_OK;
}

static bool same_value(const ladle_column *c, int64_t i, int64_t j) {
  if (c->type.id == LADLE_TYPE_STRING) return ladle_str_cmp(c, i, c, j) == 0;
  return norm_key(c, i) == norm_key(c, j);
}

/* Rank within groups of a numeric column: rows gathered by group (the
 * groups' CSR, rows ascending), then each group's valid rows sorted on their
 * own, in parallel, by (order key, row) and ranked there: the same ranks as one
 * stable sort of (group, value), without sorting every row against every
 * other. Null rows stay null. */
typedef struct rank_pair {
  uint64_t key;
  int64_t row;
} rank_pair;

static int rank_pair_cmp(const void *x, const void *y) {
  const rank_pair *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

typedef struct grank_job {
  const ladle_column *in;
  bool desc;
  ladle_rank_method method;
  const int64_t *off;
  const int64_t *rows; /* the groups' rows, group after group */
  double *of;          /* AVERAGE: the ranks */
  uint32_t *ou;        /* the others */
  int64_t ngroups, piece;
} grank_job;

static ladle_status grank_piece(void *vctx, size_t piece, ladle_error *err) {
  grank_job *j = vctx;
  int64_t a0 = (int64_t)piece * j->piece, e0 = LADLE_MIN(a0 + j->piece, j->ngroups);
  rank_pair *buf = NULL;
  int64_t cap = 0;
  for (int64_t k = a0; k < e0; k++) {
    int64_t a = j->off[k], m = j->off[k + 1] - a;
    if (m > cap) {
      cap = LADLE_MAX(m, cap * 2);
      rank_pair *nb = realloc(buf, (size_t)cap * sizeof *nb);
      if (nb == NULL) {
        free(buf);
        return LADLE_OOM(err, "rank");
      }
      buf = nb;
    }
    int64_t nv = 0;
    for (int64_t i = 0; i < m; i++) {
      int64_t r = j->rows[a + i];
      if (ladle_column_valid(j->in, r)) {
        uint64_t v = norm_key(j->in, r);
        buf[nv].key = j->desc ? ~v : v;
        buf[nv++].row = r;
      } else if (j->of) { /* null in, null out (the validity is the input's) */
        j->of[r] = 0;
      } else {
        j->ou[r] = 0;
      }
    }
    qsort(buf, (size_t)nv, sizeof *buf, rank_pair_cmp);
    /* ties: equal order keys (norm_key is canonical: -0.0 is 0.0, NaN one value) */
    int64_t dense = 0;
    for (int64_t x = 0; x < nv;) {
      int64_t y = x + 1;
      while (y < nv && buf[y].key == buf[x].key) y++;
      dense++;
      for (int64_t t = x; t < y; t++) {
        int64_t r = buf[t].row;
        switch (j->method) {
          case LADLE_RANK_AVERAGE:
            j->of[r] = (double)(x + 1 + x + (y - x)) / 2.0;
            break;
          case LADLE_RANK_MIN:
            j->ou[r] = (uint32_t)(x + 1);
            break;
          case LADLE_RANK_MAX:
            j->ou[r] = (uint32_t)y;
            break;
          case LADLE_RANK_DENSE:
            j->ou[r] = (uint32_t)dense;
            break;
          default:
            j->ou[r] = (uint32_t)(t + 1);
            break;
        }
      }
      x = y;
    }
  }
  free(buf);
  return LADLE_OK;
}

/* Ranks of numeric `in` within groups g into o (whose validity is in's). */
static ladle_status group_rank(const ladle_kctx *ctx, const ladle_column *in, ladle_groups *g,
                               ladle_rank_method method, bool descending, ladle_column *o,
                               ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_cpu_groups_csr(ctx, g, err));
  grank_job j = {in, descending, method, g->offsets, g->rows, NULL, NULL, g->ngroups, 0};
  if (method == LADLE_RANK_AVERAGE)
    j.of = LADLE_COL_MUT(o, double);
  else
    j.ou = LADLE_COL_MUT(o, uint32_t);
  size_t pieces = ladle_cpu_pieces(ctx, g->ngroups, 64, 8, 1, &j.piece);
  return ladle_pool_run(ctx->pool, pieces, grank_piece, &j, err);
}

ladle_status ladle_cpu_rank(const ladle_kctx *ctx, const ladle_column *in, ladle_groups *g,
                            ladle_rank_method method, bool descending, ladle_column *out,
                            ladle_error *err) {
  if (g != NULL) LADLE_RETURN_NOT_OK(ladle_groups_ids(g, err));
  int64_t n = in->length;
  ladle_column keys[2];
  size_t nk = 0;
  ladle_phys ph = ladle_type_phys(in->type.id);
  bool numeric = in->type.id != LADLE_TYPE_STRING && in->type.id != LADLE_TYPE_NULL &&
                 (ph == LADLE_PHYS_U8 || ph == LADLE_PHYS_U16 || ph == LADLE_PHYS_U32 ||
                  ph == LADLE_PHYS_U64 || ph == LADLE_PHYS_I8 || ph == LADLE_PHYS_I16 ||
                  ph == LADLE_PHYS_I32 || ph == LADLE_PHYS_I64 || ph == LADLE_PHYS_F32 ||
                  ph == LADLE_PHYS_F64);
  int64_t *perm = NULL;
  ladle_status st;
  if (g != NULL && numeric && g->nrows == n) {
    ladle_column o;
    ladle_dtype t =
        ladle_dtype_make(method == LADLE_RANK_AVERAGE ? LADLE_TYPE_FLOAT64 : LADLE_TYPE_UINT32);
    LADLE_RETURN_NOT_OK(ladle_column_alloc(t, n, in->validity != NULL, 0, &o, err));
    if (in->validity != NULL)
      memcpy(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n));
    st = group_rank(ctx, in, g, method, descending, &o, err);
    if (st != LADLE_OK) {
      ladle_column_release(&o);
      return st;
    }
    ladle_column_finish_nulls(&o);
    *out = o;
    return LADLE_OK;
  }
  if (g != NULL) {
    LADLE_RETURN_NOT_OK(
        ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT32), n, false, 0, &keys[0], err));
    memcpy(LADLE_COL_MUT(&keys[0], uint32_t), g->ids, (size_t)n * 4);
    nk = 1;
  }
  keys[nk++] = *in;
  bool desc[2] = {false, descending};
  bool nl[2] = {false, true};
  if (nk == 1) {
    desc[0] = descending;
    nl[0] = true;
  }
  st = ladle_cpu_sort_indices(ctx, keys, nk, desc, nl, &perm, err);
  if (g != NULL) ladle_column_release(&keys[0]);
  if (st != LADLE_OK) return st;
  ladle_dtype t =
      ladle_dtype_make(method == LADLE_RANK_AVERAGE ? LADLE_TYPE_FLOAT64 : LADLE_TYPE_UINT32);
  ladle_column o;
  st = ladle_column_alloc(t, n, in->validity != NULL, 0, &o, err);
  if (st != LADLE_OK) {
    free(perm);
    return st;
  }
  int64_t i = 0;
  while (i < n) {
    /* one group: [i, gend) */
    int64_t gend = i;
    uint32_t gid = g ? g->ids[perm[i]] : 0;
    while (gend < n && (g ? g->ids[perm[gend]] : 0) == gid) gend++;
    int64_t pos = 0, dense = 0;
    for (int64_t a = i; a < gend;) {
      int64_t row = perm[a];
      if (!ladle_column_valid(in, row)) {
        for (; a < gend; a++) {
          ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), perm[a], false);
          if (method == LADLE_RANK_AVERAGE)
            LADLE_COL_MUT(&o, double)[perm[a]] = 0;
          else
            LADLE_COL_MUT(&o, uint32_t)[perm[a]] = 0;
        }
        break;
      }
      int64_t b = a + 1;
      while (b < gend && ladle_column_valid(in, perm[b]) && same_value(in, row, perm[b])) b++;
      dense++;
      for (int64_t k = a; k < b; k++) {
        int64_t r = perm[k];
        switch (method) {
          case LADLE_RANK_AVERAGE:
            LADLE_COL_MUT(&o, double)[r] = (double)(pos + 1 + pos + (b - a)) / 2.0;
            break;
          case LADLE_RANK_MIN:
            LADLE_COL_MUT(&o, uint32_t)[r] = (uint32_t)(pos + 1);
            break;
          case LADLE_RANK_MAX:
            LADLE_COL_MUT(&o, uint32_t)[r] = (uint32_t)(pos + (b - a));
            break;
          case LADLE_RANK_DENSE:
            LADLE_COL_MUT(&o, uint32_t)[r] = (uint32_t)dense;
            break;
          default:
            LADLE_COL_MUT(&o, uint32_t)[r] = (uint32_t)(pos + 1 + (k - a));
            break;
        }
      }
      pos += b - a;
      a = b;
    }
    i = gend;
  }
  free(perm);
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}
