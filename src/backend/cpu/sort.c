/* sort.c — stable multi-key sorting and ranking.
 *
 * Numbers, temporals, booleans and strings become order-preserving codes
 * packed into 64-bit segments ("keys as codes" below): the rows are sorted by
 * the first segment with a parallel radix sort, and the runs that tie on it by
 * the next. Keys without a code (lists, 128-bit values) are sorted least
 * significant first, each by a stable pass. Floats order as Polars does: -0.0
 * equals 0.0, NaN after +inf.
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

/* ------------------------------------------------------ parallel radix sort
 *
 * Pairs (key, row) sorted by key, stable. Below PAR_MIN_ROWS or on one thread,
 * an LSD radix sort over the bytes in which the keys differ (one pass counts
 * every byte's histogram). Above, an MSD pass on the highest byte that differs
 * scatters the pairs stably into 256 buckets (each chunk of rows its own
 * offsets, the chunks in row order), and the buckets are then sorted apart in
 * parallel, a bucket of more than a thread's share by the same two steps. */

enum { PAR_MIN_ROWS = 1 << 16, SMALL_RUN = 24 };

/* Sorts (ka, pa)[0..n) using (kb, pb) as scratch; the result ends in b when
 * in_b, else in a. */
static void lsd_sort(uint64_t *ka, int64_t *pa, uint64_t *kb, int64_t *pb, int64_t n, bool in_b) {
  int64_t count[8][256];
  memset(count, 0, sizeof count);
  uint64_t diff = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = ka[i];
    diff |= k ^ ka[0];
    for (int b = 0; b < 8; b++) count[b][(k >> (8 * b)) & 0xff]++;
  }
  uint64_t *ks = ka, *kd = kb;
  int64_t *ps = pa, *pd = pb;
  for (int b = 0; b < 8; b++) {
    if (((diff >> (8 * b)) & 0xff) == 0) continue; /* every key shares this byte */
    int64_t pos[256], sum = 0;
    for (int d = 0; d < 256; d++) {
      pos[d] = sum;
      sum += count[b][d];
    }
    int shift = 8 * b;
    for (int64_t i = 0; i < n; i++) {
      int64_t d = pos[(ks[i] >> shift) & 0xff]++;
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
  uint64_t *kw = in_b ? kb : ka;
  int64_t *pw = in_b ? pb : pa;
  if (ks != kw && n > 0) {
    memcpy(kw, ks, (size_t)n * sizeof *kw);
    memcpy(pw, ps, (size_t)n * sizeof *pw);
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
  lsd_sort(keys, perm, k2, p2, n, false);
  free(k2);
  free(p2);
  return LADLE_OK;
}

typedef struct prad_job {
  uint64_t *ka, *kb;
  int64_t *pa, *pb;
  int64_t n, chunk;
  size_t nchunks;
  int shift;
  bool in_b;
  uint64_t *diff; /* per chunk */
  int64_t *hist;  /* per chunk, 256 counts, then the chunk's write positions */
  int64_t bstart[257];
  int *small; /* buckets sorted by the parallel loop */
  size_t nsmall;
  const ladle_kctx *ctx;
} prad_job;

static ladle_status prad_diff(void *v, size_t c, ladle_error *err) {
  LADLE_UNUSED(err);
  prad_job *j = v;
  int64_t a = (int64_t)c * j->chunk, e = LADLE_MIN(a + j->chunk, j->n);
  uint64_t d = 0, k0 = j->ka[0];
  for (int64_t i = a; i < e; i++) d |= j->ka[i] ^ k0;
  j->diff[c] = d;
  return LADLE_OK;
}

static ladle_status prad_hist(void *v, size_t c, ladle_error *err) {
  LADLE_UNUSED(err);
  prad_job *j = v;
  int64_t a = (int64_t)c * j->chunk, e = LADLE_MIN(a + j->chunk, j->n);
  int64_t *h = j->hist + c * 256;
  memset(h, 0, 256 * sizeof *h);
  int shift = j->shift;
  for (int64_t i = a; i < e; i++) h[(j->ka[i] >> shift) & 0xff]++;
  return LADLE_OK;
}

static ladle_status prad_scatter(void *v, size_t c, ladle_error *err) {
  LADLE_UNUSED(err);
  prad_job *j = v;
  int64_t a = (int64_t)c * j->chunk, e = LADLE_MIN(a + j->chunk, j->n);
  int64_t *pos = j->hist + c * 256;
  int shift = j->shift;
  for (int64_t i = a; i < e; i++) {
    int64_t d = pos[(j->ka[i] >> shift) & 0xff]++;
    j->kb[d] = j->ka[i];
    j->pb[d] = j->pa[i];
  }
  return LADLE_OK;
}

static ladle_status par_radix(const ladle_kctx *ctx, uint64_t *ka, int64_t *pa, uint64_t *kb,
                              int64_t *pb, int64_t n, bool in_b, ladle_error *err);

/* A parallel loop's chunks over n rows: a few per thread, of 16k rows or more. */
static size_t par_chunks(const ladle_kctx *ctx, int64_t n, int64_t *chunk) {
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  size_t nc = (size_t)LADLE_MAX(LADLE_MIN((int64_t)threads * 4, (n + 16383) / 16384), 1);
  *chunk = (n + (int64_t)nc - 1) / (int64_t)nc;
  return nc;
}

static ladle_status prad_bucket(void *v, size_t i, ladle_error *err) {
  prad_job *j = v;
  int d = j->small[i];
  int64_t a = j->bstart[d], len = j->bstart[d + 1] - a;
  /* the bucket is in b now: sorted there, the result where the caller wants it */
  return par_radix(j->ctx, j->kb + a, j->pb + a, j->ka + a, j->pa + a, len, !j->in_b, err);
}

/* the buckets b[0..n) largest first (the parallel loop starts the long ones first) */
static void buckets_by_size(int *b, int n, const int64_t *bstart) {
  for (int i = 1; i < n; i++) {
    int d = b[i], m = i;
    int64_t len = bstart[d + 1] - bstart[d];
    while (m > 0 && bstart[b[m - 1] + 1] - bstart[b[m - 1]] < len) {
      b[m] = b[m - 1];
      m--;
    }
    b[m] = d;
  }
}

static ladle_status par_radix(const ladle_kctx *ctx, uint64_t *ka, int64_t *pa, uint64_t *kb,
                              int64_t *pb, int64_t n, bool in_b, ladle_error *err) {
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  if (n < PAR_MIN_ROWS || threads <= 1) {
    lsd_sort(ka, pa, kb, pb, n, in_b);
    return LADLE_OK;
  }
  prad_job j;
  memset(&j, 0, sizeof j);
  j.ka = ka, j.kb = kb, j.pa = pa, j.pb = pb, j.n = n, j.in_b = in_b, j.ctx = ctx;
  j.nchunks = par_chunks(ctx, n, &j.chunk);
  j.diff = malloc(j.nchunks * sizeof *j.diff);
  j.hist = malloc(j.nchunks * 256 * sizeof *j.hist);
  j.small = malloc(256 * sizeof *j.small);
  ladle_status st = j.diff && j.hist && j.small ? LADLE_OK : LADLE_OOM(err, "sort");
  if (st == LADLE_OK) st = ladle_pool_run(ctx->pool, j.nchunks, prad_diff, &j, err);
  uint64_t diff = 0;
  for (size_t c = 0; st == LADLE_OK && c < j.nchunks; c++) diff |= j.diff[c];
  if (st == LADLE_OK && diff == 0) { /* every key equal: already in order */
    if (in_b) {
      memcpy(kb, ka, (size_t)n * sizeof *kb);
      memcpy(pb, pa, (size_t)n * sizeof *pb);
    }
    goto done;
  }
  if (st == LADLE_OK) {
    int top = 63 - __builtin_clzll(diff);
    j.shift = top / 8 * 8;
    st = ladle_pool_run(ctx->pool, j.nchunks, prad_hist, &j, err);
  }
  if (st == LADLE_OK) {
    /* each chunk's first write position per bucket: the buckets in order, and
     * within one the chunks in row order (what keeps it stable) */
    int64_t sum = 0;
    for (int d = 0; d < 256; d++) {
      j.bstart[d] = sum;
      for (size_t c = 0; c < j.nchunks; c++) {
        int64_t cnt = j.hist[c * 256 + (size_t)d];
        j.hist[c * 256 + (size_t)d] = sum;
        sum += cnt;
      }
    }
    j.bstart[256] = sum;
    st = ladle_pool_run(ctx->pool, j.nchunks, prad_scatter, &j, err);
  }
  if (st == LADLE_OK && j.shift > 0) {
    /* a bucket of more than a thread's share: parallel by itself; the others
     * in one parallel loop, largest first */
    int64_t share = LADLE_MAX(n / threads, (int64_t)PAR_MIN_ROWS);
    for (int d = 0; d < 256 && st == LADLE_OK; d++) {
      int64_t len = j.bstart[d + 1] - j.bstart[d];
      if (len > share)
        st = par_radix(ctx, kb + j.bstart[d], pb + j.bstart[d], ka + j.bstart[d], pa + j.bstart[d],
                       len, !in_b, err);
      else if (len > 0)
        j.small[j.nsmall++] = d;
    }
    buckets_by_size(j.small, (int)j.nsmall, j.bstart);
    if (st == LADLE_OK && j.nsmall > 0)
      st = ladle_pool_run(ctx->pool, j.nsmall, prad_bucket, &j, err);
  } else if (st == LADLE_OK && !in_b) { /* the lowest byte: the scatter sorted it */
    memcpy(ka, kb, (size_t)n * sizeof *ka);
    memcpy(pa, pb, (size_t)n * sizeof *pa);
  }
done:
  free(j.diff);
  free(j.hist);
  free(j.small);
  return st;
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

/* --------------------------------------------------------- keys as codes
 *
 * Every key becomes an order-preserving code of few bits: an integer minus the
 * least, a string's rank among the distinct strings, nulls one code below or
 * above the values, descending keys reversed. A key whose values take all 64
 * bits and that has nulls becomes two fields, a null flag and the value. The
 * fields are packed most significant first into 64-bit segments (TPC-H q16's
 * four keys take 24 bits: one segment). The rows are sorted by the first
 * segment's code with the parallel radix sort; each run of rows that tie on it
 * is then sorted by the next segment, and so on (few runs when the first key
 * is nearly unique, as a shuffle's hash; large runs in parallel by themselves,
 * the rest in one parallel loop). */
typedef struct code_key {
  uint64_t lo, span; /* valid values' codes are v - lo, in [0, span); 0: 2^64 */
  bool nulls;
  bool codable;
  uint64_t *rank; /* strings: per group, the rank of its string */
  ladle_groups g;
} code_key;

enum { FIELD_WHOLE, FIELD_FLAG, FIELD_VALUE };
typedef struct sort_field {
  size_t key;
  int part, bits;
} sort_field;

typedef struct sort_job {
  const ladle_kctx *ctx;
  const ladle_column *keys;
  size_t nkeys;
  const bool *desc, *nulls_last;
  code_key *ck;
  sort_field *fields;
  size_t *seg; /* segment s: fields [seg[s], seg[s + 1]) */
  size_t nseg;
  int64_t n;
} sort_job;

static int bits_for(uint64_t values) {
  int b = 0;
  while (b < 64 && (values - 1) >> b != 0) b++;
  return b;
}

static inline uint64_t field_code(const sort_job *j, const sort_field *f, int64_t row) {
  const ladle_column *c = &j->keys[f->key];
  const code_key *q = &j->ck[f->key];
  bool last = j->nulls_last ? j->nulls_last[f->key] : false;
  bool valid = ladle_column_valid(c, row);
  if (f->part == FIELD_FLAG) return valid == last ? 0 : 1; /* the nulls' side first */
  if (!valid) return f->part == FIELD_VALUE ? 0 : (last ? q->span : 0);
  uint64_t v = c->type.id == LADLE_TYPE_STRING ? q->rank[q->g.ids[row]] : norm_key(c, row) - q->lo;
  if (j->desc && j->desc[f->key]) v = q->span - 1 - v;
  return v + (f->part == FIELD_WHOLE && q->nulls && !last);
}

static inline uint64_t seg_code(const sort_job *j, size_t s, int64_t row) {
  uint64_t code = 0;
  for (size_t f = j->seg[s]; f < j->seg[s + 1]; f++) {
    const sort_field *sf = &j->fields[f];
    uint64_t v = field_code(j, sf, row);
    code = sf->bits == 64 ? v : (code << sf->bits) | v;
  }
  return code;
}

/* codes[i] = segment s's code of row perm[i], i in [a, e) */
static void seg_codes(const sort_job *j, size_t s, const int64_t *perm, uint64_t *codes, int64_t a,
                      int64_t e) {
  if (j->seg[s + 1] - j->seg[s] == 1) { /* one field: the common loops without the packing */
    const sort_field *sf = &j->fields[j->seg[s]];
    const ladle_column *c = &j->keys[sf->key];
    const code_key *q = &j->ck[sf->key];
    bool desc = j->desc && j->desc[sf->key];
    if (sf->part == FIELD_WHOLE && c->validity == NULL && c->type.id != LADLE_TYPE_STRING) {
      uint64_t lo = q->lo, top = q->span - 1;
#define SEG_INT(T, bias)                                          \
  do {                                                            \
    const T *x = c->values;                                       \
    for (int64_t i = a; i < e; i++) {                             \
      uint64_t v = ((uint64_t)(int64_t)x[perm[i]] ^ (bias)) - lo; \
      codes[i] = desc ? top - v : v;                              \
    }                                                             \
  } while (0)
      switch (ladle_type_phys(c->type.id)) {
        case LADLE_PHYS_I64:
          SEG_INT(int64_t, 1ULL << 63);
          return;
        case LADLE_PHYS_I32:
          SEG_INT(int32_t, 1ULL << 63);
          return;
        case LADLE_PHYS_U32: {
          const uint32_t *x = c->values;
          for (int64_t i = a; i < e; i++) {
            uint64_t v = (uint64_t)x[perm[i]] - lo;
            codes[i] = desc ? top - v : v;
          }
          return;
        }
        case LADLE_PHYS_U64: {
          const uint64_t *x = c->values;
          for (int64_t i = a; i < e; i++) {
            uint64_t v = x[perm[i]] - lo;
            codes[i] = desc ? top - v : v;
          }
          return;
        }
        default:
          break;
      }
#undef SEG_INT
    }
  }
  for (int64_t i = a; i < e; i++) codes[i] = seg_code(j, s, perm[i]);
}

typedef struct range_job {
  const sort_job *sj;
  size_t s;
  const int64_t *perm;
  uint64_t *codes;
  int64_t n, chunk;
  const ladle_column *c; /* min/max: the key */
  uint64_t *lo, *hi;     /* per chunk */
} range_job;

static ladle_status codes_task(void *v, size_t c, ladle_error *err) {
  LADLE_UNUSED(err);
  range_job *r = v;
  int64_t a = (int64_t)c * r->chunk, e = LADLE_MIN(a + r->chunk, r->n);
  seg_codes(r->sj, r->s, r->perm, r->codes, a, e);
  return LADLE_OK;
}

static ladle_status minmax_task(void *vctx, size_t c, ladle_error *err) {
  LADLE_UNUSED(err);
  range_job *r = vctx;
  int64_t a = (int64_t)c * r->chunk, e = LADLE_MIN(a + r->chunk, r->n);
  uint64_t lo = UINT64_MAX, hi = 0;
  const ladle_column *col = r->c;
  if (col->validity == NULL && ladle_type_phys(col->type.id) == LADLE_PHYS_I64) {
    const int64_t *x = col->values;
    for (int64_t i = a; i < e; i++) {
      uint64_t v = (uint64_t)x[i] ^ (1ULL << 63);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  } else {
    for (int64_t i = a; i < e; i++) {
      if (!ladle_column_valid(col, i)) continue;
      uint64_t v = norm_key(col, i);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  }
  r->lo[c] = lo;
  r->hi[c] = hi;
  return LADLE_OK;
}

/* The key's least and greatest normalized values (valid rows), in parallel. */
static ladle_status key_range(const sort_job *sj, const ladle_column *c, uint64_t *lo, uint64_t *hi,
                              ladle_error *err) {
  range_job r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.n = c->length;
  size_t nc = par_chunks(sj->ctx, r.n, &r.chunk);
  r.lo = malloc(nc * sizeof *r.lo);
  r.hi = malloc(nc * sizeof *r.hi);
  ladle_status st = r.lo && r.hi ? LADLE_OK : LADLE_OOM(err, "sort");
  if (st == LADLE_OK && r.n > 0) st = ladle_pool_run(sj->ctx->pool, nc, minmax_task, &r, err);
  *lo = UINT64_MAX, *hi = 0;
  for (size_t k = 0; st == LADLE_OK && r.n > 0 && k < nc; k++) {
    *lo = r.lo[k] < *lo ? r.lo[k] : *lo;
    *hi = r.hi[k] > *hi ? r.hi[k] : *hi;
  }
  free(r.lo);
  free(r.hi);
  return st;
}

static void insertion_sort(uint64_t *k, int64_t *p, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    uint64_t kv = k[i];
    int64_t pv = p[i], m = i;
    while (m > 0 && k[m - 1] > kv) { /* strictly greater: stable */
      k[m] = k[m - 1];
      p[m] = p[m - 1];
      m--;
    }
    k[m] = kv;
    p[m] = pv;
  }
}

static ladle_status sort_level(const sort_job *j, size_t s, int64_t *perm, uint64_t *codes,
                               int64_t *sp, uint64_t *sk, int64_t n, bool par, ladle_error *err);

typedef struct runs_job {
  const sort_job *sj;
  size_t s;
  int64_t *perm, *sp;
  uint64_t *codes, *sk;
  const int64_t *run;  /* starts and ends, pairs */
  const size_t *batch; /* batch b: runs [batch[b], batch[b + 1]) */
} runs_job;

static ladle_status runs_task(void *v, size_t b, ladle_error *err) {
  runs_job *r = v;
  ladle_status st = LADLE_OK;
  for (size_t i = r->batch[b]; i < r->batch[b + 1] && st == LADLE_OK; i++) {
    int64_t a = r->run[2 * i], len = r->run[2 * i + 1] - a;
    st = sort_level(r->sj, r->s, r->perm + a, r->codes + a, r->sp + a, r->sk + a, len, false, err);
  }
  return st;
}

/* perm[0..n) (rows tied on every segment before s, in row order) sorted by
 * segments s and later; codes, sp and sk are scratch of n. */
static ladle_status sort_level(const sort_job *j, size_t s, int64_t *perm, uint64_t *codes,
                               int64_t *sp, uint64_t *sk, int64_t n, bool par, ladle_error *err) {
  if (n < 2) return LADLE_OK;
  ladle_status st = LADLE_OK;
  if (par) {
    range_job r;
    memset(&r, 0, sizeof r);
    r.sj = j, r.s = s, r.perm = perm, r.codes = codes, r.n = n;
    size_t nc = par_chunks(j->ctx, n, &r.chunk);
    LADLE_RETURN_NOT_OK(ladle_pool_run(j->ctx->pool, nc, codes_task, &r, err));
    LADLE_RETURN_NOT_OK(par_radix(j->ctx, codes, perm, sk, sp, n, false, err));
  } else {
    seg_codes(j, s, perm, codes, 0, n);
    if (n <= SMALL_RUN)
      insertion_sort(codes, perm, n);
    else
      lsd_sort(codes, perm, sk, sp, n, false);
  }
  if (s + 1 == j->nseg) return LADLE_OK;
  /* the runs of equal codes, each sorted by the next segment */
  size_t nruns = 0, cap = 0;
  int64_t *run = NULL;
  for (int64_t a = 0; a < n && st == LADLE_OK;) {
    int64_t e = a + 1;
    while (e < n && codes[e] == codes[a]) e++;
    if (e - a > 1) {
      if (!par) {
        st = sort_level(j, s + 1, perm + a, codes + a, sp + a, sk + a, e - a, false, err);
      } else {
        if (nruns == cap) {
          cap = cap ? 2 * cap : 64;
          int64_t *g = realloc(run, cap * 2 * sizeof *run);
          if (g == NULL) {
            st = LADLE_OOM(err, "sort");
            break;
          }
          run = g;
        }
        run[2 * nruns] = a;
        run[2 * nruns + 1] = e;
        nruns++;
      }
    }
    a = e;
  }
  if (par && st == LADLE_OK && nruns > 0) {
    /* a run of more than a thread's share by itself, in parallel; the others
     * batched into tasks of a few thousand rows or more */
    int threads = j->ctx->pool ? ladle_pool_threads(j->ctx->pool) : 1;
    int64_t share = LADLE_MAX(n / threads, (int64_t)PAR_MIN_ROWS);
    size_t *batch = malloc((nruns + 1) * sizeof *batch);
    size_t nb = 0, k = 0;
    st = batch ? LADLE_OK : LADLE_OOM(err, "sort");
    for (size_t i = 0; i < nruns && st == LADLE_OK; i++) {
      int64_t a = run[2 * i], e = run[2 * i + 1];
      if (e - a > share)
        st = sort_level(j, s + 1, perm + a, codes + a, sp + a, sk + a, e - a, true, err);
      else
        run[2 * k] = a, run[2 * k + 1] = e, k++;
    }
    int64_t rows = 0, want = LADLE_MAX(n / (8 * (int64_t)threads), 4096);
    for (size_t i = 0; i < k && st == LADLE_OK; i++) {
      if (rows == 0) batch[nb++] = i;
      rows += run[2 * i + 1] - run[2 * i];
      if (rows >= want) rows = 0;
    }
    if (st == LADLE_OK && nb > 0) {
      batch[nb] = k;
      runs_job rj = {j, s + 1, perm, sp, codes, sk, run, batch};
      st = ladle_pool_run(j->ctx->pool, nb, runs_task, &rj, err);
    }
    free(batch);
  }
  free(run);
  return st;
}

/* Sorts perm (the identity on entry) through the codes when every key has one
 * (numbers, temporals, booleans, strings); returns false, with *st LADLE_OK,
 * when a key has none (the pass per key then sorts). */
static bool coded_sort(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                       const bool *descending, const bool *nulls_last, code_key *ck, int64_t *perm,
                       uint64_t *nk, int64_t n, ladle_status *st, ladle_error *err) {
  *st = LADLE_OK;
  if (n < 2) return false;
  sort_job j = {ctx, keys, nkeys, descending, nulls_last, ck, NULL, NULL, 0, n};
  for (size_t k = 0; k < nkeys; k++) {
    const ladle_column *c = &keys[k];
    if (c->type.id != LADLE_TYPE_NULL && c->type.id != LADLE_TYPE_STRING &&
        (ladle_type_width(c->type.id) <= 0 || ladle_type_is_varlen(c->type.id) ||
         c->type.id == LADLE_TYPE_INT128 || c->type.id == LADLE_TYPE_DECIMAL))
      return false; /* lists, 128-bit values */
  }
  j.fields = calloc(LADLE_MAX(2 * nkeys, 1), sizeof *j.fields);
  j.seg = calloc(2 * nkeys + 1, sizeof *j.seg);
  if (j.fields == NULL || j.seg == NULL) {
    *st = LADLE_OOM(err, "sort");
    goto out;
  }
  size_t nf = 0;
  for (size_t k = 0; k < nkeys && *st == LADLE_OK; k++) {
    const ladle_column *c = &keys[k];
    code_key *q = &ck[k];
    if (c->type.id == LADLE_TYPE_NULL) continue; /* every row equal */
    q->nulls = c->validity != NULL && c->null_count != 0;
    if (c->type.id == LADLE_TYPE_STRING) {
      *st = string_ranks(ctx, c, &q->g, &q->rank, err);
      q->lo = 0;
      q->span = (uint64_t)LADLE_MAX(q->g.ngroups, 1);
    } else {
      uint64_t lo, hi;
      *st = key_range(&j, c, &lo, &hi, err);
      if (lo > hi) lo = hi = 0;
      q->lo = lo;
      q->span = hi - lo + 1; /* 0: the whole 64 bits */
    }
    if (*st != LADLE_OK) break;
    if (q->span == 0 && q->nulls) { /* 65 bits: a null flag, then the value */
      j.fields[nf++] = (sort_field){k, FIELD_FLAG, 1};
      j.fields[nf++] = (sort_field){k, FIELD_VALUE, 64};
    } else {
      int bits = bits_for(q->span + q->nulls);
      if (bits > 0) j.fields[nf++] = (sort_field){k, FIELD_WHOLE, bits};
    }
  }
  if (*st == LADLE_OK) {
    int used = 0;
    for (size_t f = 0; f < nf; f++) {
      if (f == 0 || used + j.fields[f].bits > 64) {
        j.seg[j.nseg++] = f;
        used = 0;
      }
      used += j.fields[f].bits;
    }
    j.seg[j.nseg] = nf;
  }
  if (*st == LADLE_OK && j.nseg > 0) {
    int64_t *sp = malloc((size_t)n * sizeof *sp);
    uint64_t *sk = malloc((size_t)n * sizeof *sk);
    *st = sp && sk ? sort_level(&j, 0, perm, nk, sp, sk, n, true, err) : LADLE_OOM(err, "sort");
    free(sp);
    free(sk);
  }
out:
  free(j.fields);
  free(j.seg);
  return true;
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
  bool coded = st == LADLE_OK &&
               coded_sort(ctx, keys, nkeys, descending, nulls_last, ck, perm, nk, n, &st, err);
  /* a key without a code (a list, a 128-bit value): a stable pass per key,
   * least significant first */
  for (size_t kk = nkeys; !coded && kk-- > 0 && st == LADLE_OK;) {
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

/* Row i offered to the max-heap h of *m (at most t->k) best rows. */
static inline void topk_offer(const topk_job *t, int64_t *h, int64_t *m, int64_t i) {
  if (*m < t->k) {
    /* sift up */
    int64_t j = (*m)++;
    h[j] = i;
    while (j > 0 && topk_cmp(t, h[(j - 1) / 2], h[j]) < 0) {
      int64_t x = h[j];
      h[j] = h[(j - 1) / 2];
      h[(j - 1) / 2] = x;
      j = (j - 1) / 2;
    }
  } else if (topk_cmp(t, i, h[0]) < 0) {
    h[0] = i;
    topk_sift_down(t, h, *m, 0);
  }
}

static ladle_status topk_part(void *vctx, size_t part, ladle_error *err) {
  (void)err;
  topk_job *t = vctx;
  int64_t lo = (int64_t)part * t->part, hi = LADLE_MIN(lo + t->part, t->n);
  int64_t *h = t->cand + (int64_t)part * t->k, m = 0;
  for (int64_t i = lo; i < hi; i++) topk_offer(t, h, &m, i);
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
  /* many partitions (many threads) leave many candidates: the k best of them
   * through one more heap first, so that the serial sort takes k, not
   * partitions x k (64,000 at 16 threads and k = 1000) */
  if (st == LADLE_OK && m > 2 * k) {
    int64_t *h = malloc((size_t)LADLE_MAX(k, 1) * sizeof *h), hm = 0;
    if (h == NULL) {
      st = LADLE_OOM(err, "top-k");
    } else {
      for (int64_t i = 0; i < m; i++) topk_offer(&t, h, &hm, t.cand[i]);
      memcpy(t.cand, h, (size_t)hm * sizeof *h);
      m = hm;
      free(h);
    }
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
