/* groupby_fast.c — group ids for one integer-like or string key column without
 * the row encoding of keys.c: each thread maps its own range of rows with a
 * private open-addressing table (groups numbered in order of appearance), then
 * the ranges' groups are merged in range order, so global ids are in order of
 * first appearance, and a last parallel pass renumbers the rows. Low- and
 * medium-cardinality keys (user, movie, category ids) stay in cache; there is
 * no partition scatter. */
#include "cpu.h"

typedef struct gslot {
  uint64_t key;  /* the integer, or the string's hash */
  uint64_t gid1; /* group id + 1; 0: empty */
} gslot;

typedef struct gmap {
  gslot *slots;
  uint64_t mask;
  int64_t *first; /* per group: its first row */
  uint64_t *keys; /* per group: integer key or string hash */
  int64_t ngroups, cap;
  int64_t null_gid; /* -1: no null key yet */
} gmap;

typedef struct fast_ctx {
  const ladle_column *key;
  bool str;
  bool packed;        /* strings tabled as packed integers (see ladle_pack_short) */
  _Atomic bool long_; /* packed: some chunk met a string too long to pack */
  uint64_t range;     /* > 0: every key is below it; tabled by direct index */
  int64_t n, chunk;
  size_t nchunks;
  uint32_t *ids;
  gmap *local;
  uint32_t **remap;
} fast_ctx;

/* Slots come from the engine's block cache (ladle_scratch_alloc) where big:
 * a join's per-partition tables at SF10 are megabytes each, and malloc
 * faulted them in afresh on every query. */
static void gmap_free(gmap *m) {
  ladle_scratch_free(m->slots);
  free(m->first);
  free(m->keys);
  memset(m, 0, sizeof *m);
}

static bool gmap_init(gmap *m, int64_t expect) {
  memset(m, 0, sizeof *m);
  uint64_t cap = 256;
  while (cap < (uint64_t)expect * 2 && cap < ((uint64_t)1 << 20)) cap <<= 1;
  m->mask = cap - 1;
  m->slots = ladle_scratch_alloc(cap * sizeof *m->slots, true);
  m->cap = 64;
  m->first = malloc((size_t)m->cap * sizeof *m->first);
  m->keys = malloc((size_t)m->cap * sizeof *m->keys);
  m->null_gid = -1;
  return m->slots && m->first && m->keys;
}

/* What row i's key is tabled by: the integer itself (w: its width in bytes),
 * or for w == 0 the string's hash. */
static inline uint64_t raw_key(const ladle_column *c, int64_t i, int w) {
  switch (w) {
    case 0:
      return ladle_hash_bytes(ladle_str_ptr(c, i), (size_t)ladle_str_len(c, i), 0x51);
    case 1:
      return ((const uint8_t *)c->values)[i];
    case 2:
      return ((const uint16_t *)c->values)[i];
    case 4:
      return ((const uint32_t *)c->values)[i];
    default:
      return ((const uint64_t *)c->values)[i];
  }
}

/* The width raw_key takes for column c. */
static inline int key_width(const ladle_column *c, bool str) {
  return str ? 0 : ladle_type_width(c->type.id);
}

/* Value i of a 32-bit (w 4: signed or not) or 64-bit integer key, as int64
 * (uint64 as its bits: a bijection, so ranges over it still hold). */
static inline int64_t int_key_at(const void *values, int w, bool sgn, int64_t i) {
  if (w == 4)
    return sgn ? (int64_t)((const int32_t *)values)[i] : (int64_t)((const uint32_t *)values)[i];
  return ((const int64_t *)values)[i];
}

/* Integers go through a bijective mixer, so equal mixed keys are equal keys;
 * strings are already hashed. */
static inline uint64_t slot_of(uint64_t key, bool str) { return str ? key : ladle_hash_mix(key); }

/* String i of a equals string j of b; short ones without a library call. */
static inline bool str_eq2(const ladle_column *a, int64_t i, const ladle_column *b, int64_t j) {
  int64_t la = ladle_str_len(a, i), lb = ladle_str_len(b, j);
  if (la != lb) return false;
  const char *x = ladle_str_ptr(a, i), *y = ladle_str_ptr(b, j);
  if (la < 4) {
    for (int64_t k = 0; k < la; k++)
      if (x[k] != y[k]) return false;
    return true;
  }
  if (la < 8) {
    uint32_t a0, b0, a1, b1;
    memcpy(&a0, x, 4);
    memcpy(&b0, y, 4);
    memcpy(&a1, x + la - 4, 4);
    memcpy(&b1, y + la - 4, 4);
    return a0 == b0 && a1 == b1;
  }
  if (la <= 16) {
    uint64_t a0, b0, a1, b1;
    memcpy(&a0, x, 8);
    memcpy(&b0, y, 8);
    memcpy(&a1, x + la - 8, 8);
    memcpy(&b1, y + la - 8, 8);
    return a0 == b0 && a1 == b1;
  }
  return memcmp(x, y, (size_t)la) == 0;
}
static inline bool str_eq(const ladle_column *c, int64_t i, int64_t j) {
  return str_eq2(c, i, c, j);
}

static bool gmap_grow(gmap *m) {
  uint64_t cap = (m->mask + 1) * 2;
  gslot *s = ladle_scratch_alloc(cap * sizeof *s, true);
  if (s == NULL) return false;
  for (uint64_t k = 0; k <= m->mask; k++) {
    gslot e = m->slots[k];
    if (e.gid1 == 0) continue;
    uint64_t h = e.key; /* slots hold the hashed key */
    for (uint64_t q = h & (cap - 1);; q = (q + 1) & (cap - 1))
      if (s[q].gid1 == 0) {
        s[q] = e;
        break;
      }
  }
  ladle_scratch_free(m->slots);
  m->slots = s;
  m->mask = cap - 1;
  return true;
}

/* Adds a group with key k (first row `row`); returns its id or -1 (no memory). */
static int64_t gmap_add(gmap *m, uint64_t k, int64_t row) {
  if (m->ngroups == m->cap) {
    int64_t cap = m->cap * 2;
    int64_t *f = realloc(m->first, (size_t)cap * sizeof *f);
    if (f == NULL) return -1;
    m->first = f;
    uint64_t *kk = realloc(m->keys, (size_t)cap * sizeof *kk);
    if (kk == NULL) return -1;
    m->keys = kk;
    m->cap = cap;
  }
  m->first[m->ngroups] = row;
  m->keys[m->ngroups] = k;
  return m->ngroups++;
}

/* The group of key k (first seen at `row`) in m, added when new; strings are
 * compared with row cmp_row of column c. -1: out of memory. */
static inline int64_t gmap_find_h(gmap *m, const ladle_column *c, bool str, uint64_t k, uint64_t hk,
                                  int64_t row, int64_t cmp_row);
static inline int64_t gmap_find(gmap *m, const ladle_column *c, bool str, uint64_t k, int64_t row,
                                int64_t cmp_row) {
  return gmap_find_h(m, c, str, k, slot_of(k, str), row, cmp_row);
}
/* The same with the slot hash hk of k already known. */
static inline int64_t gmap_find_h(gmap *m, const ladle_column *c, bool str, uint64_t k, uint64_t hk,
                                  int64_t row, int64_t cmp_row) {
  for (uint64_t s = hk & m->mask;; s = (s + 1) & m->mask) {
    gslot e = m->slots[s];
    if (e.gid1 == 0) {
      int64_t g = gmap_add(m, k, row);
      if (g < 0) return -1;
      m->slots[s].key = hk;
      m->slots[s].gid1 = (uint64_t)g + 1;
      if ((uint64_t)m->ngroups * 2 > m->mask && !gmap_grow(m)) return -1;
      return g;
    }
    if (e.key == hk && (!str || str_eq(c, m->first[e.gid1 - 1], cmp_row)))
      return (int64_t)e.gid1 - 1;
  }
}

static ladle_status map_chunk(void *vctx, size_t ci, ladle_error *err) {
  fast_ctx *f = vctx;
  const ladle_column *c = f->key;
  int64_t a = (int64_t)ci * f->chunk, e = LADLE_MIN(a + f->chunk, f->n);
  gmap *m = &f->local[ci];
  if (!gmap_init(m, 1024)) return LADLE_OOM(err, "group-by table");
  if (f->range > 0) {
    const uint64_t *v = c->values;
    uint32_t *dir = ladle_zalloc(f->range * sizeof *dir); /* key -> local id + 1 */
    if (dir == NULL) return LADLE_OOM(err, "group-by table");
    for (int64_t i = a; i < e; i++) {
      uint64_t k = v[i];
      uint32_t g1 = dir[k];
      if (g1 == 0) {
        int64_t g = gmap_add(m, k, i);
        if (g < 0) {
          free(dir);
          return LADLE_OOM(err, "group-by table");
        }
        g1 = dir[k] = (uint32_t)g + 1;
      }
      f->ids[i] = g1 - 1;
    }
    free(dir);
    return LADLE_OK;
  }
  if (f->packed) {
    const char *end = ladle_str_end(c);
    for (int64_t i = a; i < e; i++) {
      int64_t g;
      uint64_t k;
      if (!ladle_column_valid(c, i)) {
        if (m->null_gid < 0) m->null_gid = gmap_add(m, 0, i);
        g = m->null_gid;
      } else if (ladle_pack_short(c, i, end, &k)) {
        g = gmap_find(m, c, false, k, i, i);
      } else {
        atomic_store_explicit(&f->long_, true, memory_order_relaxed);
        return LADLE_OK;
      }
      if (g < 0) return LADLE_OOM(err, "group-by table");
      f->ids[i] = (uint32_t)g;
      if ((i & 4095) == 0 && atomic_load_explicit(&f->long_, memory_order_relaxed)) return LADLE_OK;
    }
    return LADLE_OK;
  }
  int w = key_width(c, f->str);
  for (int64_t i = a; i < e; i++) {
    int64_t g;
    if (!ladle_column_valid(c, i)) {
      if (m->null_gid < 0) m->null_gid = gmap_add(m, 0, i);
      g = m->null_gid;
    } else {
      uint64_t k = raw_key(c, i, w);
      g = gmap_find(m, c, f->str, k, i, i);
    }
    if (g < 0) return LADLE_OOM(err, "group-by table");
    f->ids[i] = (uint32_t)g;
  }
  return LADLE_OK;
}

static ladle_status relabel_chunk(void *vctx, size_t ci, ladle_error *err) {
  LADLE_UNUSED(err);
  fast_ctx *f = vctx;
  int64_t a = (int64_t)ci * f->chunk, e = LADLE_MIN(a + f->chunk, f->n);
  const uint32_t *r = f->remap[ci];
  for (int64_t i = a; i < e; i++) f->ids[i] = r[f->ids[i]];
  return LADLE_OK;
}

static bool fast_key(const ladle_column *c) {
  ladle_type_id t = c->type.id;
  return t == LADLE_TYPE_STRING || t == LADLE_TYPE_BOOL || ladle_type_is_integer(t) ||
         t == LADLE_TYPE_DATE || t == LADLE_TYPE_DATETIME || t == LADLE_TYPE_DURATION;
}

/* The distinct values among 4096 evenly spaced rows of c (0 below 16384
 * rows): whether the key probably has more groups than one merged table
 * handles well (tens of thousands and up). With G uniform groups the sample
 * holds G(1 - e^(-4096/G)) of them, above 95% of the sample from about G =
 * 40,000 (or, below 4096 * 20 rows, when nearly every row is its own group).
 * Such keys take dense_build or the radix-partitioned build, which spread a
 * big table over threads. */
static int sample_groups(const ladle_column *c, bool str) {
  enum { S = 4096, SLOTS = 8192 };
  int64_t n = c->length;
  if (n < 16384) return 0; /* a dimension's 57k keys: partitioned, not one serial table */
  int w = key_width(c, str);
  uint64_t *set = calloc(SLOTS, sizeof *set);
  if (set == NULL) return 0;
  int d = 0;
  for (int k = 0; k < S; k++) {
    int64_t i = (int64_t)((double)k * (double)n / S);
    uint64_t h = !ladle_column_valid(c, i) ? 1 : slot_of(raw_key(c, i, w), str);
    h |= 1; /* 0 marks an empty slot */
    for (uint64_t s = h & (SLOTS - 1);; s = (s + 1) & (SLOTS - 1)) {
      if (set[s] == 0) {
        set[s] = h;
        d++;
        break;
      }
      if (set[s] == h) break;
    }
  }
  free(set);
  return d;
}

struct ladle_fastmap {
  gmap *parts;   /* key -> group id within its partition */
  int64_t *base; /* the first global id of each partition */
  size_t nparts;
  int pbits; /* partition = top pbits bits of the slot hash; 0: one table */
  const ladle_column *key;
  bool str;
  bool packed; /* strings tabled by ladle_pack_short */
  /* or (dense_build's) an array over the key's range: dir[value - dlo] is
   * the value's group + 1, 0 for none; dnull the nulls' group or -1 */
  uint32_t *dir;
  int64_t dlo;
  uint64_t drange;
  int dw;
  bool dsgn;
  int64_t dnull;
};

bool ladle_fastmap_eligible(const ladle_column *keys, size_t nkeys) {
  return nkeys == 1 && fast_key(&keys[0]) && keys[0].length <= (int64_t)UINT32_MAX;
}

void ladle_fastmap_destroy(ladle_fastmap *fm) {
  if (fm == NULL) return;
  for (size_t p = 0; fm->parts && p < fm->nparts; p++) gmap_free(&fm->parts[p]);
  free(fm->parts);
  free(fm->base);
  ladle_scratch_free(fm->dir); /* dense_build's, from the block cache */
  free(fm);
}

static ladle_status fast_build(const ladle_kctx *ctx, const ladle_column *c, ladle_groups *out,
                               ladle_fastmap **map, ladle_error *err);
static ladle_status merged_build(const ladle_kctx *ctx, const ladle_column *c, uint64_t range,
                                 ladle_groups *out, ladle_fastmap **map, ladle_error *err);
static ladle_status parted_build(const ladle_kctx *ctx, const ladle_column *c, ladle_groups *out,
                                 ladle_fastmap **map, ladle_error *err);

static ladle_status dense_build(const ladle_kctx *ctx, const ladle_column *c, ladle_groups *out,
                                ladle_fastmap **map, ladle_error *err);

/* Few groups: per-thread tables merged in row order (ids in order of first
 * appearance). Many: an integer key of a range not much wider than its rows
 * numbered by value (dense_build), any other rows radix-partitioned by hash
 * and a table per partition (ids partition by partition). */
static ladle_status fast_build(const ladle_kctx *ctx, const ladle_column *c, ladle_groups *out,
                               ladle_fastmap **map, ladle_error *err) {
  bool str = c->type.id == LADLE_TYPE_STRING;
  int d = sample_groups(c, str);
  bool many = d > 4096 * 95 / 100;
  /* Thousands of groups over many rows (TPC-H q15's 10,000 suppliers over
   * 225,000 lines) too: the per-thread tables' groups would be merged on one
   * thread, 16 tables of them at 16 threads; an integer key of a narrow
   * range is numbered by value in parallel instead. */
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  if (many || (!str && d >= 1024 && threads > 2 && c->length >= 65536)) {
    ladle_status st = dense_build(ctx, c, out, map, err);
    if (st != LADLE_ENOTSUP) return st;
  }
  return many ? parted_build(ctx, c, out, map, err) : merged_build(ctx, c, 0, out, map, err);
}

/* Composites up to this many values are grouped by direct index (a 4 MiB
 * array of uint32 per thread at most) instead of a hash table. */
enum { DIRECT_MAX = 1 << 20 };

/* An integer-like key of a small range (at most RANGED_MAX values, nulls one
 * more) numbered by value instead of hashing: id = value - minimum, nulls the
 * range itself. The ids are not dense and `first` is not filled: multi_key
 * only folds them. LADLE_ENOTSUP when the key does not qualify. */
enum { RANGED_MAX = 1 << 24 };
/* Strings of at most 2 bytes (flags, codes: TPC-H's l_returnflag) numbered
 * by their bytes: "" 0, one byte b 1 + b, two 257 + b0 + 256 b1; nulls 65793. */
static ladle_status short_string_ids(const ladle_column *c, ladle_groups *out, ladle_error *err) {
  int64_t n = c->length;
  const int64_t *o = c->values;
  int64_t longest = 0;
  for (int64_t i = 0; i < n; i++) longest |= o[i + 1] - o[i] > 2;
  if (n == 0 || longest) return LADLE_ENOTSUP;
  enum { CODES = 1 + 256 + 65536 };
  memset(out, 0, sizeof *out);
  out->ids = ladle_scratch_alloc((size_t)n * sizeof *out->ids, false);
  if (out->ids == NULL) return LADLE_OOM(err, "group-by");
  out->nrows = n;
  out->ngroups = CODES + (c->validity != NULL);
  const unsigned char *b = (const unsigned char *)c->chars;
  for (int64_t i = 0; i < n; i++) {
    int64_t len = o[i + 1] - o[i];
    uint32_t id = len == 0 ? 0 : len == 1 ? 1u + b[o[i]] : 257u + b[o[i]] + 256u * b[o[i] + 1];
    out->ids[i] = ladle_column_valid(c, i) ? id : (uint32_t)CODES;
  }
  return LADLE_OK;
}

/* A parallel pass of ranged_ids and multi_key over rows [a, e). */
typedef struct ranged_job {
  const ladle_column *c;
  int64_t lo;
  uint32_t range;
  uint32_t *ids;     /* phase 1: the ids */
  const uint32_t *g; /* phase 2: a key's ids folded into acc */
  uint64_t *acc, gk;
  int phase; /* 0: min and max; 1: ids; 2: acc[i] = acc[i] * gk + g[i] (acc = g first) */
  _Atomic int64_t min, max;
} ranged_job;

static ladle_status ranged_range(void *vctx, int64_t a, int64_t e, ladle_error *err) {
  LADLE_UNUSED(err);
  ranged_job *j = vctx;
  const ladle_column *c = j->c;
  if (j->phase == 2) {
    if (j->gk == 0)
      for (int64_t i = a; i < e; i++) j->acc[i] = j->g[i];
    else
      for (int64_t i = a; i < e; i++) j->acc[i] = j->acc[i] * j->gk + j->g[i];
    return LADLE_OK;
  }
  if (j->phase == 1) {
    int64_t v = 0;
    for (int64_t i = a; i < e; i++) {
      ladle_int_value(c, i, &v);
      j->ids[i] = ladle_column_valid(c, i) ? (uint32_t)((uint64_t)v - (uint64_t)j->lo) : j->range;
    }
    return LADLE_OK;
  }
  /* nulls hold some value too: they only widen the range */
  int64_t lo = INT64_MAX, hi = INT64_MIN;
#define MINMAX(T)                     \
  do {                                \
    const T *x = c->values;           \
    T l = x[a], h = x[a];             \
    for (int64_t i = a; i < e; i++) { \
      l = x[i] < l ? x[i] : l;        \
      h = x[i] > h ? x[i] : h;        \
    }                                 \
    lo = (int64_t)l;                  \
    hi = (int64_t)h;                  \
  } while (0)
  switch (c->type.id) {
    case LADLE_TYPE_INT8:
      MINMAX(int8_t);
      break;
    case LADLE_TYPE_UINT8:
    case LADLE_TYPE_BOOL:
      MINMAX(uint8_t);
      break;
    case LADLE_TYPE_INT16:
      MINMAX(int16_t);
      break;
    case LADLE_TYPE_UINT16:
      MINMAX(uint16_t);
      break;
    case LADLE_TYPE_UINT32:
      MINMAX(uint32_t);
      break;
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_DATE:
      MINMAX(int32_t);
      break;
    default:
      MINMAX(int64_t);
      break;
  }
#undef MINMAX
  int64_t m = atomic_load_explicit(&j->min, memory_order_relaxed);
  while (lo < m && !atomic_compare_exchange_weak(&j->min, &m, lo)) {
  }
  m = atomic_load_explicit(&j->max, memory_order_relaxed);
  while (hi > m && !atomic_compare_exchange_weak(&j->max, &m, hi)) {
  }
  return LADLE_OK;
}

static ladle_status ranged_ids(const ladle_kctx *ctx, const ladle_column *c, ladle_groups *out,
                               ladle_error *err) {
  int64_t n = c->length, v;
  if (c->type.id == LADLE_TYPE_STRING) return short_string_ids(c, out, err);
  if (n == 0 || !ladle_int_value(c, 0, &v)) return LADLE_ENOTSUP;
  ranged_job j;
  memset(&j, 0, sizeof j);
  j.c = c;
  atomic_init(&j.min, INT64_MAX);
  atomic_init(&j.max, INT64_MIN);
  LADLE_RETURN_NOT_OK(ladle_cpu_parallel(ctx, n, ranged_range, &j, err));
  int64_t lo = atomic_load(&j.min), hi = atomic_load(&j.max);
  uint64_t range = (uint64_t)hi - (uint64_t)lo + 1;
  if (range == 0 || range > RANGED_MAX) return LADLE_ENOTSUP;
  memset(out, 0, sizeof *out);
  out->ids = ladle_scratch_alloc((size_t)n * sizeof *out->ids, false);
  if (out->ids == NULL) return LADLE_OOM(err, "group-by");
  out->nrows = n;
  out->ngroups = (int64_t)range + (c->validity != NULL);
  j.lo = lo;
  j.range = (uint32_t)range;
  j.ids = out->ids;
  j.phase = 1;
  ladle_status st = ladle_cpu_parallel(ctx, n, ranged_range, &j, err);
  if (st != LADLE_OK) ladle_groups_release(out);
  return st;
}

/* Several keys: the group ids of each key alone, folded into one composite
 * integer per row (id * groups_next + id_next; regrouped to dense ids first
 * whenever the product would not fit 64 bits) and grouped once more. Equal
 * composites are equal rows, nulls included, and ids stay in order of first
 * appearance. */
static ladle_status multi_key(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                              ladle_groups *out, ladle_error *err) {
  int64_t n = keys[0].length;
  ladle_column acc;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT64), n, false, 0, &acc, err));
  ranged_job fold;
  memset(&fold, 0, sizeof fold);
  fold.acc = LADLE_COL_MUT(&acc, uint64_t);
  fold.phase = 2;
  uint64_t groups = 1;
  ladle_status st = LADLE_OK;
  for (size_t k = 0; st == LADLE_OK && k < nkeys; k++) {
    ladle_groups g;
    st = ranged_ids(ctx, &keys[k], &g, err);
    if (st == LADLE_ENOTSUP) st = fast_build(ctx, &keys[k], &g, NULL, err);
    if (st != LADLE_OK) break;
    uint64_t gk = (uint64_t)LADLE_MAX(g.ngroups, 1);
    if (k > 0 && groups > UINT64_MAX / gk) {
      ladle_groups d;
      st = fast_build(ctx, &acc, &d, NULL, err);
      if (st == LADLE_OK) {
        fold.g = d.ids;
        fold.gk = 0;
        st = ladle_cpu_parallel(ctx, n, ranged_range, &fold, err);
        groups = (uint64_t)LADLE_MAX(d.ngroups, 1);
        ladle_groups_release(&d);
      }
    }
    if (st == LADLE_OK) {
      fold.g = g.ids;
      fold.gk = k == 0 ? 0 : gk;
      st = ladle_cpu_parallel(ctx, n, ranged_range, &fold, err);
      groups = k == 0 ? gk : groups * gk;
    }
    ladle_groups_release(&g);
  }
  /* many composites: numbered by value in parallel (dense_build); few: the
   * per-thread direct tables of merged_build */
  if (st == LADLE_OK && groups > 65536) {
    st = dense_build(ctx, &acc, out, NULL, err);
    if (st == LADLE_ENOTSUP) st = fast_build(ctx, &acc, out, NULL, err);
  } else if (st == LADLE_OK) {
    st = groups <= DIRECT_MAX ? merged_build(ctx, &acc, groups, out, NULL, err)
                              : fast_build(ctx, &acc, out, NULL, err);
  }
  ladle_column_release(&acc);
  return st;
}

bool ladle_cpu_group_ids_fast(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                              ladle_groups *out, ladle_error *err, ladle_status *st) {
  if (nkeys == 0 || keys[0].length > (int64_t)UINT32_MAX) return false;
  for (size_t k = 0; k < nkeys; k++)
    if (!fast_key(&keys[k])) return false;
  *st = nkeys == 1 ? fast_build(ctx, &keys[0], out, NULL, err)
                   : multi_key(ctx, keys, nkeys, out, err);
  return true;
}

ladle_status ladle_fastmap_build(const ladle_kctx *ctx, const ladle_column *key, ladle_groups *out,
                                 ladle_fastmap **map, ladle_error *err) {
  return fast_build(ctx, key, out, map, err);
}

/* range > 0: c is an unsigned integer column below range (a composite of
 * multi_key), tabled per thread by direct index instead of hashing. */
static ladle_status merged_build(const ladle_kctx *ctx, const ladle_column *c, uint64_t range,
                                 ladle_groups *out, ladle_fastmap **map, ladle_error *err) {
  ladle_status stv, *st = &stv;
  int64_t n = c->length;
  fast_ctx f;
  memset(&f, 0, sizeof f);
  f.key = c;
  f.str = c->type.id == LADLE_TYPE_STRING;
  f.n = n;
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  f.nchunks = n < 65536 ? 1 : (size_t)LADLE_MAX(threads, 1);
  f.chunk = LADLE_MAX((n + (int64_t)f.nchunks - 1) / (int64_t)f.nchunks, 1);
  f.ids = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *f.ids, false);
  f.local = calloc(f.nchunks, sizeof *f.local);
  f.remap = calloc(f.nchunks, sizeof *f.remap);
  gmap global;
  memset(&global, 0, sizeof global);
  *st = f.ids && f.local && f.remap ? LADLE_OK : LADLE_OOM(err, "group-by");
  /* Strings are first tried as packed integers; the first string longer than
   * 7 bytes stops that and the column is tabled by hash instead. */
  f.packed = f.str;
  f.range = range;
  atomic_init(&f.long_, false);
  if (*st == LADLE_OK) *st = ladle_pool_run(ctx->pool, f.nchunks, map_chunk, &f, err);
  if (*st == LADLE_OK && f.packed && atomic_load(&f.long_)) {
    for (size_t ci = 0; ci < f.nchunks; ci++) gmap_free(&f.local[ci]);
    f.packed = false;
    *st = ladle_pool_run(ctx->pool, f.nchunks, map_chunk, &f, err);
  }
  bool cmp_str = f.str && !f.packed;
  /* merge the ranges' groups in range order: ids in order of first appearance */
  if (*st == LADLE_OK && f.nchunks > 1) {
    if (!gmap_init(&global, f.local[0].ngroups)) *st = LADLE_OOM(err, "group-by table");
    for (size_t ci = 0; *st == LADLE_OK && ci < f.nchunks; ci++) {
      gmap *m = &f.local[ci];
      f.remap[ci] = malloc((size_t)LADLE_MAX(m->ngroups, 1) * sizeof **f.remap);
      if (f.remap[ci] == NULL) {
        *st = LADLE_OOM(err, "group-by");
        break;
      }
      for (int64_t g = 0; g < m->ngroups; g++) {
        int64_t gg;
        if (g == m->null_gid) {
          if (global.null_gid < 0) global.null_gid = gmap_add(&global, 0, m->first[g]);
          gg = global.null_gid;
        } else {
          gg = gmap_find(&global, c, cmp_str, m->keys[g], m->first[g], m->first[g]);
        }
        if (gg < 0) {
          *st = LADLE_OOM(err, "group-by table");
          break;
        }
        f.remap[ci][g] = (uint32_t)gg;
      }
    }
    if (*st == LADLE_OK) *st = ladle_pool_run(ctx->pool, f.nchunks, relabel_chunk, &f, err);
  }
  gmap *res = f.nchunks > 1 ? &global : (f.local ? &f.local[0] : NULL);
  ladle_fastmap *fm = NULL;
  if (*st == LADLE_OK && map != NULL) {
    fm = calloc(1, sizeof *fm);
    if (fm == NULL) *st = LADLE_OOM(err, "join table");
  }
  if (*st == LADLE_OK) {
    memset(out, 0, sizeof *out);
    out->nrows = n;
    out->ngroups = res->ngroups;
    out->ids = f.ids;
    out->first =
        ladle_scratch_alloc((size_t)LADLE_MAX(res->ngroups, 1) * sizeof *out->first, false);
    if (out->first == NULL) {
      *st = LADLE_OOM(err, "groups");
      free(fm);
      fm = NULL;
    } else {
      memcpy(out->first, res->first, (size_t)res->ngroups * sizeof *out->first);
      f.ids = NULL;
    }
  }
  if (fm != NULL) {
    fm->parts = malloc(sizeof *fm->parts);
    fm->base = calloc(1, sizeof *fm->base);
    if (fm->parts == NULL || fm->base == NULL) {
      free(fm->parts);
      free(fm->base);
      free(fm);
      fm = NULL;
      *st = LADLE_OOM(err, "join table");
      ladle_groups_release(out);
    } else {
      fm->parts[0] = *res; /* the map moves out; its slots are what probes read */
      memset(res, 0, sizeof *res);
      fm->nparts = 1;
      fm->key = c;
      fm->str = f.str;
      fm->packed = f.packed;
      *map = fm;
    }
  }
  for (size_t ci = 0; f.local && ci < f.nchunks; ci++) {
    gmap_free(&f.local[ci]);
    if (f.remap) free(f.remap[ci]);
  }
  gmap_free(&global);
  free(f.local);
  free(f.remap);
  ladle_scratch_free(f.ids);
  return *st;
}

/* A string key's first 16 bytes and length, copied into partition order so
 * that the per-partition build compares keys without touching the column. */
typedef struct str_rec {
  uint64_t w0, w1;
  uint32_t len;
} str_rec;

typedef struct parted_ctx {
  const ladle_column *c;
  bool str;
  int pbits;
  size_t nparts, nblocks;
  int64_t n, block;
  uint64_t *hk;   /* per row: the slot hash (0 for nulls) */
  int64_t *hist;  /* nblocks x nparts: counts, then write cursors */
  int64_t *order; /* rows in partition order (rows of a partition ascending) */
  uint64_t *phk;  /* the slot hashes in partition order */
  str_rec *prec;  /* strings: their records in partition order */
  uint32_t *lid;  /* per position: the group within the partition */
  int64_t *pstart;
  uint32_t *ids;
  gmap *parts;
  int64_t *base;
  int64_t *first;
  int phase;
} parted_ctx;

static inline size_t part_of_hash(const parted_ctx *p, uint64_t hk) {
  return p->pbits ? (size_t)(hk >> (64 - p->pbits)) : 0;
}

static ladle_status parted_block(void *vctx, size_t b, ladle_error *err) {
  LADLE_UNUSED(err);
  parted_ctx *p = vctx;
  int64_t a = (int64_t)b * p->block, e = LADLE_MIN(a + p->block, p->n);
  int64_t *h = p->hist + b * p->nparts;
  int w = key_width(p->c, p->str);
  if (p->phase == 0) {
    for (int64_t i = a; i < e; i++) {
      uint64_t hk;
      if (!ladle_column_valid(p->c, i))
        hk = 0; /* nulls: partition 0 */
      else
        hk = slot_of(raw_key(p->c, i, w), p->str);
      p->hk[i] = hk;
      h[part_of_hash(p, hk)]++;
    }
    return LADLE_OK;
  }
  for (int64_t i = a; i < e; i++) {
    uint64_t hk = p->hk[i];
    int64_t pos = h[part_of_hash(p, hk)]++;
    p->order[pos] = i;
    p->phk[pos] = hk;
    if (p->str) {
      str_rec r = {0, 0, 0};
      if (ladle_column_valid(p->c, i)) {
        int64_t len = ladle_str_len(p->c, i);
        uint8_t buf[16] = {0};
        memcpy(buf, ladle_str_ptr(p->c, i), (size_t)LADLE_MIN(len, 16));
        memcpy(&r.w0, buf, 8);
        memcpy(&r.w1, buf + 8, 8);
        r.len = (uint32_t)LADLE_MIN(len, (int64_t)UINT32_MAX);
      }
      p->prec[pos] = r;
    }
  }
  return LADLE_OK;
}

/* Keys at partition positions x and y (same hash) are equal. */
static inline bool pos_equal(const parted_ctx *p, int64_t x, int64_t y) {
  if (!p->str) return true; /* integers: equal mixed keys are equal keys */
  const str_rec *a = &p->prec[x], *b = &p->prec[y];
  if (a->len != b->len || a->w0 != b->w0 || a->w1 != b->w1) return false;
  return a->len <= 16 || str_eq(p->c, p->order[x], p->order[y]);
}

static ladle_status parted_part(void *vctx, size_t q, ladle_error *err) {
  parted_ctx *p = vctx;
  gmap *m = &p->parts[q];
  int64_t a = p->pstart[q], e = p->pstart[q + 1];
  if (!gmap_init(m, (e - a) / 2 + 1)) return LADLE_OOM(err, "group-by table");
  /* m->keys holds each group's first position, for comparing; m->first its row */
  for (int64_t k = a; k < e; k++) {
    int64_t i = p->order[k], g = -1;
    if (!ladle_column_valid(p->c, i)) {
      if (m->null_gid < 0) m->null_gid = gmap_add(m, (uint64_t)k, i);
      g = m->null_gid;
    } else {
      uint64_t hk = p->phk[k];
      for (uint64_t sl = hk & m->mask;; sl = (sl + 1) & m->mask) {
        gslot en = m->slots[sl];
        if (en.gid1 == 0) {
          g = gmap_add(m, (uint64_t)k, i);
          if (g < 0) break;
          m->slots[sl].key = hk;
          m->slots[sl].gid1 = (uint64_t)g + 1;
          if ((uint64_t)m->ngroups * 2 > m->mask && !gmap_grow(m)) g = -1;
          break;
        }
        if (en.key == hk && pos_equal(p, (int64_t)m->keys[en.gid1 - 1], k)) {
          g = (int64_t)en.gid1 - 1;
          break;
        }
      }
    }
    if (g < 0) return LADLE_OOM(err, "group-by table");
    p->lid[k] = (uint32_t)g;
  }
  return LADLE_OK;
}

static ladle_status parted_relabel(void *vctx, size_t q, ladle_error *err) {
  LADLE_UNUSED(err);
  parted_ctx *p = vctx;
  uint32_t base = (uint32_t)p->base[q];
  for (int64_t k = p->pstart[q]; k < p->pstart[q + 1]; k++) p->ids[p->order[k]] = base + p->lid[k];
  memcpy(p->first + p->base[q], p->parts[q].first, (size_t)p->parts[q].ngroups * sizeof *p->first);
  return LADLE_OK;
}

/* Many groups: one pass hashes the keys and counts rows per (block,
 * partition); a second scatters row numbers into partition order (stable);
 * then each partition builds its own table in parallel, small enough for the
 * cache, and a last pass adds each partition's first id. */
static ladle_status parted_build(const ladle_kctx *ctx, const ladle_column *c, ladle_groups *out,
                                 ladle_fastmap **map, ladle_error *err) {
  parted_ctx p;
  memset(&p, 0, sizeof p);
  p.c = c;
  p.str = c->type.id == LADLE_TYPE_STRING;
  p.n = c->length;
  /* about 32K rows per partition, at most 1024 */
  p.pbits = ladle_cpu_part_bits(ctx, p.n, 32768, 10);
  p.nparts = (size_t)1 << p.pbits;
  p.block = LADLE_MAX(ladle_cpu_block(ctx, p.n), 4096);
  p.nblocks = (size_t)LADLE_MAX((p.n + p.block - 1) / p.block, 1);
  p.hk = ladle_scratch_alloc((size_t)LADLE_MAX(p.n, 1) * sizeof *p.hk, false);
  p.hist = ladle_zalloc(p.nblocks * p.nparts * sizeof *p.hist);
  p.order = ladle_scratch_alloc((size_t)LADLE_MAX(p.n, 1) * sizeof *p.order, false);
  p.phk = ladle_scratch_alloc((size_t)LADLE_MAX(p.n, 1) * sizeof *p.phk, false);
  p.lid = ladle_scratch_alloc((size_t)LADLE_MAX(p.n, 1) * sizeof *p.lid, false);
  p.prec = p.str ? ladle_scratch_alloc((size_t)LADLE_MAX(p.n, 1) * sizeof *p.prec, false) : NULL;
  p.pstart = calloc(p.nparts + 1, sizeof *p.pstart);
  p.ids = ladle_scratch_alloc((size_t)LADLE_MAX(p.n, 1) * sizeof *p.ids, false);
  p.parts = calloc(p.nparts, sizeof *p.parts);
  p.base = calloc(p.nparts + 1, sizeof *p.base);
  ladle_status st = p.hk && p.hist && p.order && p.phk && p.lid && (p.prec || !p.str) && p.pstart &&
                            p.ids && p.parts && p.base
                        ? LADLE_OK
                        : LADLE_OOM(err, "group-by partitions");
  if (st == LADLE_OK) st = ladle_pool_run(ctx->pool, p.nblocks, parted_block, &p, err);
  if (st == LADLE_OK) {
    ladle_cpu_part_starts(p.hist, p.nblocks, p.nparts, p.pstart);
    p.phase = 1;
    st = ladle_pool_run(ctx->pool, p.nblocks, parted_block, &p, err);
  }
  if (st == LADLE_OK) st = ladle_pool_run(ctx->pool, p.nparts, parted_part, &p, err);
  if (st == LADLE_OK) {
    for (size_t q = 0; q < p.nparts; q++) p.base[q + 1] = p.base[q] + p.parts[q].ngroups;
    p.first = ladle_scratch_alloc((size_t)LADLE_MAX(p.base[p.nparts], 1) * sizeof *p.first, false);
    st = p.first ? ladle_pool_run(ctx->pool, p.nparts, parted_relabel, &p, err)
                 : LADLE_OOM(err, "groups");
  }
  ladle_fastmap *fm = NULL;
  if (st == LADLE_OK && map != NULL) {
    fm = calloc(1, sizeof *fm);
    if (fm == NULL) st = LADLE_OOM(err, "join table");
  }
  if (st == LADLE_OK) {
    memset(out, 0, sizeof *out);
    out->nrows = p.n;
    out->ngroups = p.base[p.nparts];
    out->ids = p.ids;
    out->first = p.first;
    p.ids = NULL;
    p.first = NULL;
    if (fm != NULL) {
      fm->parts = p.parts;
      fm->base = p.base;
      fm->nparts = p.nparts;
      fm->pbits = p.pbits;
      fm->key = c;
      fm->str = p.str;
      p.parts = NULL;
      p.base = NULL;
      *map = fm;
    }
  }
  for (size_t q = 0; p.parts && q < p.nparts; q++) gmap_free(&p.parts[q]);
  free(p.parts);
  free(p.base);
  ladle_scratch_free(p.first);
  ladle_scratch_free(p.ids);
  free(p.pstart);
  ladle_scratch_free(p.order);
  ladle_scratch_free(p.phk);
  ladle_scratch_free(p.lid);
  ladle_scratch_free(p.prec);
  free(p.hist);
  ladle_scratch_free(p.hk);
  return st;
}

typedef struct probe_job {
  const ladle_fastmap *fm;
  const ladle_column *key;
  bool nulls_equal;
  int64_t *gid;
  int64_t n, chunk;
  uint64_t *filter; /* NULL, or a blocked Bloom filter of the table's slot hashes */
  uint64_t fmask;   /* its words - 1 */
  uint64_t *bits;   /* NULL, or one bit per integer key in [lo, lo + span] */
  int32_t *direct;  /* NULL, or the group (-1: none) of each integer key in [lo, lo + span] */
  uint64_t lo, span;
  int64_t *rows; /* sparse: the rows that hit, each chunk's from its first row */
  int64_t *nhit; /* sparse: per chunk, its hits */
} probe_job;

/* The filter: one 64-bit word per key hash (bits 24 and up), three bits in
 * it (bits 0-17 of the hash). */
static inline uint64_t filter_bits(uint64_t hk) {
  return (1ull << (hk & 63)) | (1ull << ((hk >> 6) & 63)) | (1ull << ((hk >> 12) & 63));
}
static inline bool filter_has(const uint64_t *f, uint64_t fmask, uint64_t hk) {
  uint64_t b = filter_bits(hk);
  return (f[(hk >> 24) & fmask] & b) == b;
}

static ladle_status filter_part(void *vctx, size_t part, ladle_error *err) {
  LADLE_UNUSED(err);
  probe_job *j = vctx;
  const gmap *m = &j->fm->parts[part];
  for (uint64_t s = 0; m->slots != NULL && s <= m->mask; s++)
    if (m->slots[s].gid1 != 0) {
      uint64_t hk = m->slots[s].key;
      __atomic_fetch_or(&j->filter[(hk >> 24) & j->fmask], filter_bits(hk), __ATOMIC_RELAXED);
    }
  return LADLE_OK;
}

/* A row's answer: its group (dense), or, sparse, appended when it hits. */
#define PROBE_OUT(ROW, G) \
  do {                    \
    int64_t g_ = (G);     \
    if (hrow == NULL) {   \
      j->gid[ROW] = g_;   \
    } else if (g_ >= 0) { \
      hrow[nh] = (ROW);   \
      hgid[nh++] = g_;    \
    }                     \
  } while (0)

static ladle_status probe_chunk(void *vctx, size_t ci, ladle_error *err) {
  LADLE_UNUSED(err);
  probe_job *j = vctx;
  const ladle_fastmap *fm = j->fm;
  const ladle_column *c = j->key, *r = fm->key;
  bool str = fm->str;
  const char *end = fm->packed ? ladle_str_end(c) : NULL;
  int w = key_width(c, str);
  int64_t a = (int64_t)ci * j->chunk, e = LADLE_MIN(a + j->chunk, j->n);
  int64_t *hrow = j->rows != NULL ? j->rows + a : NULL, *hgid = j->gid + a, nh = 0;
  if (fm->dir != NULL) {
    /* dense_build's array: the group straight from the value */
    for (int64_t i = a; i < e; i++) {
      if (!ladle_column_valid(c, i)) {
        PROBE_OUT(i, j->nulls_equal ? fm->dnull : -1);
        continue;
      }
      uint64_t d = (uint64_t)int_key_at(c->values, fm->dw, fm->dsgn, i) - (uint64_t)fm->dlo;
      PROBE_OUT(i, d < fm->drange ? (int64_t)fm->dir[d] - 1 : -1);
    }
    if (hrow != NULL) j->nhit[ci] = nh;
    return LADLE_OK;
  }
  for (int64_t i = a; i < e; i++) {
    if (!ladle_column_valid(c, i)) {
      /* nulls live in partition 0 */
      PROBE_OUT(i, j->nulls_equal && fm->parts[0].null_gid >= 0
                       ? fm->base[0] + fm->parts[0].null_gid
                       : -1);
      continue;
    }
    if (j->direct != NULL) {
      uint64_t d = raw_key(c, i, w) - j->lo;
      PROBE_OUT(i, d <= j->span ? (int64_t)j->direct[d] : -1);
      continue;
    }
    uint64_t hk;
    bool cmp = str;
    if (j->bits != NULL) {
      uint64_t d = raw_key(c, i, w) - j->lo;
      if (d > j->span || ((j->bits[d >> 6] >> (d & 63)) & 1) == 0) {
        PROBE_OUT(i, -1); /* no key of the table has this value */
        continue;
      }
    }
    if (fm->packed) {
      uint64_t k;
      if (!ladle_pack_short(c, i, end, &k)) {
        PROBE_OUT(i, -1); /* longer than every key of the table */
        continue;
      }
      hk = slot_of(k, false);
      cmp = false;
    } else {
      hk = slot_of(raw_key(c, i, w), str);
    }
    if (j->filter != NULL && !filter_has(j->filter, j->fmask, hk)) {
      PROBE_OUT(i, -1); /* surely not in the table */
      continue;
    }
    size_t part = fm->pbits ? (size_t)(hk >> (64 - fm->pbits)) : 0;
    const gmap *m = &fm->parts[part];
    int64_t g = -1;
    for (uint64_t s = hk & m->mask;; s = (s + 1) & m->mask) {
      gslot sl = m->slots[s];
      if (sl.gid1 == 0) break;
      if (sl.key == hk && (!cmp || str_eq2(r, m->first[sl.gid1 - 1], c, i))) {
        g = fm->base[part] + (int64_t)sl.gid1 - 1;
        break;
      }
    }
    PROBE_OUT(i, g);
  }
  if (hrow != NULL) j->nhit[ci] = nh;
  return LADLE_OK;
}
#undef PROBE_OUT

ladle_status ladle_fastmap_probe(const ladle_kctx *ctx, const ladle_fastmap *fm,
                                 const ladle_column *key, bool nulls_equal, int64_t *gid,
                                 ladle_error *err) {
  int64_t nhits;
  return ladle_fastmap_probe_sparse(ctx, fm, key, nulls_equal, gid, NULL, &nhits, err);
}

/* The aids of j (a probe of fm by `key`) chosen from a sample of key's first
 * rows: a bitmap or group array over a narrow range of integer keys, or a
 * Bloom filter of a big table that the sample mostly misses. gid gets the
 * sample's groups (it holds min(rows, 4096) entries at least). *sparse: the
 * sample hits so rarely that a sparse answer pays (want_sparse only).
 * big_probe: the probe side is much bigger than the table (every row of it
 * probed, in one call or morsel by morsel). */
static ladle_status probe_aids(const ladle_kctx *ctx, const ladle_fastmap *fm,
                               const ladle_column *key, int64_t *gid, bool want_sparse,
                               bool big_probe, probe_job *j, bool *sparse, ladle_error *err) {
  *sparse = false;
  int64_t slots = 0, groups = 0, sample = LADLE_MIN(key->length, 4096);
  for (size_t p = 0; p < fm->nparts; p++) {
    slots += fm->parts[p].slots != NULL ? (int64_t)fm->parts[p].mask + 1 : 0;
    groups += fm->parts[p].ngroups;
  }
  /* Integer keys of a narrow range (the dense keys of a dimension table: a
   * part's 1,328 keys among 200,000 meet 6 million lineitem rows) answer a
   * miss from a bitmap over the range, before any hashing, however small the
   * table. */
  const ladle_column *bk = fm->key;
  bool int_keys = fm->dir == NULL && !fm->str && !fm->packed &&
                  ladle_type_is_integer(bk->type.id) && bk->type.id == key->type.id &&
                  bk->length <= ((int64_t)1 << 22);
  if (!(slots >= ((int64_t)1 << 16) || int_keys || fm->dir != NULL) || sample == 0) return LADLE_OK;
  probe_job sj = *j;
  sj.gid = gid;
  sj.n = sample;
  sj.chunk = sample;
  LADLE_RETURN_NOT_OK(probe_chunk(&sj, 0, err));
  int64_t hits = 0;
  for (int64_t i = 0; i < sample; i++) hits += gid[i] >= 0;
  *sparse = want_sparse && hits * 8 < sample;
  uint64_t lo = UINT64_MAX, hi = 0;
  int bw = key_width(bk, false);
  if (int_keys && (hits * 4 < sample || big_probe))
    for (int64_t i = 0; i < bk->length; i++) {
      if (!ladle_column_valid(bk, i)) continue;
      uint64_t v = raw_key(bk, i, bw);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  if (hits * 4 < sample && int_keys && lo <= hi && hi - lo < ((uint64_t)1 << 23)) {
    j->bits = ladle_scratch_alloc(((hi - lo) / 64 + 1) * sizeof *j->bits, true);
    if (j->bits == NULL) return LADLE_OOM(err, "join filter");
    for (int64_t i = 0; i < bk->length; i++) {
      if (!ladle_column_valid(bk, i)) continue;
      uint64_t d = raw_key(bk, i, bw) - lo;
      j->bits[d >> 6] |= (uint64_t)1 << (d & 63);
    }
    j->lo = lo;
    j->span = hi - lo;
  } else if (int_keys && big_probe && lo <= hi && hi - lo < ((uint64_t)1 << 20) &&
             hi - lo <= 16 * (uint64_t)bk->length) {
    /* a narrow range that mostly hits: each key's group straight from an
     * array over the range (the build keys' groups found once), no hashing */
    int64_t *bg = malloc((size_t)LADLE_MAX(bk->length, 1) * sizeof *bg);
    j->direct = malloc((size_t)(hi - lo + 1) * sizeof *j->direct);
    if (bg == NULL || j->direct == NULL) {
      free(bg);
      free(j->direct);
      j->direct = NULL;
      return LADLE_OOM(err, "join lookup");
    }
    probe_job b = *j;
    b.key = bk;
    b.gid = bg;
    b.n = bk->length;
    b.chunk = bk->length;
    b.direct = NULL;
    ladle_status bs = probe_chunk(&b, 0, err);
    if (bs != LADLE_OK) {
      free(bg);
      free(j->direct);
      j->direct = NULL;
      return bs;
    }
    memset(j->direct, 0xff, (size_t)(hi - lo + 1) * sizeof *j->direct);
    for (int64_t i = 0; i < bk->length; i++)
      if (ladle_column_valid(bk, i)) j->direct[raw_key(bk, i, bw) - lo] = (int32_t)bg[i];
    free(bg);
    j->lo = lo;
    j->span = hi - lo;
  } else if (hits * 4 < sample && slots >= ((int64_t)1 << 16) && fm->dir == NULL) {
    uint64_t words = 64;
    while (words < (uint64_t)groups / 4) words <<= 1;
    j->filter = ladle_scratch_alloc(words * sizeof *j->filter, true);
    if (j->filter == NULL) return LADLE_OOM(err, "join filter");
    j->fmask = words - 1;
    ladle_status st = ladle_pool_run(ctx->pool, fm->nparts, filter_part, j, err);
    if (st != LADLE_OK) {
      ladle_scratch_free(j->filter);
      j->filter = NULL;
      return st;
    }
  }
  return LADLE_OK;
}

static void aids_free(probe_job *j) {
  free(j->direct);
  ladle_scratch_free(j->filter);
  ladle_scratch_free(j->bits);
  j->direct = NULL;
  j->filter = NULL;
  j->bits = NULL;
}

ladle_status ladle_fastmap_probe_sparse(const ladle_kctx *ctx, const ladle_fastmap *fm,
                                        const ladle_column *key, bool nulls_equal, int64_t *gid,
                                        int64_t *rows, int64_t *nhits, ladle_error *err) {
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  probe_job j = {fm, key, nulls_equal, gid, key->length, 0, NULL, 0, NULL, NULL, 0, 0, NULL, NULL};
  bool sparse = false; /* the sample says most rows miss */
  *nhits = -1;
  /* A big table (past what the caches hold) probed by rows that mostly miss
   * it (a selective join: 1% of lineitem meets the orders of one market
   * segment) costs a cache miss per row. When a sample of the probe misses
   * three times in four, a Bloom filter of the table's keys (16 bits a key,
   * one word per key) answers most misses from an array 1/8 of the table.
   * The array below pays for finding every build key's group only when the
   * probe side is much the bigger (TPC-H q14's 75k lineitems against 200k
   * parts lost time to it). */
  if (key->length >= 65536)
    LADLE_RETURN_NOT_OK(probe_aids(ctx, fm, key, gid, rows != NULL,
                                   key->length >= 8 * fm->key->length, &j, &sparse, err));
  j.n = key->length;
  size_t nchunks = key->length < 65536 ? 1 : (size_t)LADLE_MAX(threads, 1) * 4;
  j.chunk = LADLE_MAX((key->length + (int64_t)nchunks - 1) / (int64_t)nchunks, 1);
  if (sparse) {
    j.rows = rows;
    j.nhit = calloc(nchunks, sizeof *j.nhit);
    if (j.nhit == NULL) sparse = false, j.rows = NULL;
  }
  ladle_status st = ladle_pool_run(ctx->pool, nchunks, probe_chunk, &j, err);
  if (st == LADLE_OK && sparse) {
    /* each chunk's hits sit at its first row: close the gaps */
    int64_t n = 0;
    for (size_t c = 0; c < nchunks; c++) {
      int64_t a = (int64_t)c * j.chunk;
      if (a != n && j.nhit[c] > 0) {
        memmove(rows + n, rows + a, (size_t)j.nhit[c] * sizeof *rows);
        memmove(gid + n, gid + a, (size_t)j.nhit[c] * sizeof *gid);
      }
      n += j.nhit[c];
    }
    *nhits = n;
  }
  free(j.nhit);
  aids_free(&j);
  return st;
}

/* A probe's aids made once, for probes of many morsels (a streamed join). */
struct ladle_fastmap_aids {
  probe_job j; /* only its aids are read */
};

ladle_status ladle_fastmap_aids_make(const ladle_kctx *ctx, const ladle_fastmap *fm,
                                     const ladle_column *sample, ladle_fastmap_aids **out,
                                     ladle_error *err) {
  *out = calloc(1, sizeof **out);
  if (*out == NULL) return LADLE_OOM(err, "join");
  int64_t *gid = malloc(4096 * sizeof *gid);
  if (gid == NULL) {
    free(*out);
    *out = NULL;
    return LADLE_OOM(err, "join");
  }
  probe_job *j = &(*out)->j;
  j->fm = fm;
  j->key = sample;
  bool sparse;
  ladle_status st = probe_aids(ctx, fm, sample, gid, false, true, j, &sparse, err);
  free(gid);
  if (st != LADLE_OK) {
    aids_free(j);
    free(*out);
    *out = NULL;
  }
  return st;
}

void ladle_fastmap_aids_free(ladle_fastmap_aids *a) {
  if (a == NULL) return;
  aids_free(&a->j);
  free(a);
}

ladle_status ladle_fastmap_probe_aided(const ladle_kctx *ctx, const ladle_fastmap *fm,
                                       const ladle_fastmap_aids *aids, const ladle_column *key,
                                       bool nulls_equal, int64_t *gid, ladle_error *err) {
  LADLE_UNUSED(ctx);
  probe_job j = {fm, key,  nulls_equal, gid, key->length, key->length, NULL,
                 0,  NULL, NULL,        0,   0,           NULL,        NULL};
  if (aids != NULL) {
    j.filter = aids->j.filter;
    j.fmask = aids->j.fmask;
    j.bits = aids->j.bits;
    j.direct = aids->j.direct;
    j.lo = aids->j.lo;
    j.span = aids->j.span;
  }
  return key->length > 0 ? probe_chunk(&j, 0, err) : LADLE_OK;
}

/* Many groups of a 32- or 64-bit integer key whose values span a range not
 * much wider than the rows (order keys, user ids): no hashing and no
 * partition scatter. Four parallel passes: the range; a mark per present
 * value in an array over the range; the marks numbered in value order (so
 * that id = rank of the value among the present ones); every row's id from
 * its value, with each group's first row. Ids ascend with the values, so rows
 * sorted or clustered by the key get clustered ids, which the scatter
 * aggregations exploit (see agg.c). Nulls are the last group.
 * LADLE_ENOTSUP when the key does not qualify. */
enum { DENSE_MAX = 1 << 26 };

typedef struct dense_ctx {
  const ladle_column *c;
  int w; /* 4 or 8 */
  bool sgn;
  int64_t n, block, rblock;
  int64_t *lo, *hi; /* per row block: the least and greatest value */
  int64_t base;     /* the least value */
  uint64_t range;
  _Atomic uint32_t *dir; /* value - base -> group id + 1 (a mark first) */
  int64_t *cnt;          /* per range block: its present values, then its first id */
  uint32_t *ids;
  _Atomic int64_t *first;
  _Atomic int64_t nulls_at;
  uint32_t null_id;
  int phase;
} dense_ctx;

static inline int64_t dense_value(const dense_ctx *d, int64_t i) {
  return int_key_at(d->c->values, d->w, d->sgn, i);
}

static ladle_status dense_rows(void *vctx, size_t b, ladle_error *err) {
  LADLE_UNUSED(err);
  dense_ctx *d = vctx;
  int64_t a = (int64_t)b * d->block, e = LADLE_MIN(a + d->block, d->n);
  const ladle_column *c = d->c;
  if (d->phase == 0) {
    /* nulls hold some value too: they only widen the range */
    int64_t l = INT64_MAX, h = INT64_MIN;
    for (int64_t i = a; i < e; i++) {
      int64_t v = dense_value(d, i);
      l = v < l ? v : l;
      h = v > h ? v : h;
    }
    d->lo[b] = l;
    d->hi[b] = h;
    return LADLE_OK;
  }
  if (d->phase == 1) {
    for (int64_t i = a; i < e; i++)
      if (ladle_column_valid(c, i))
        atomic_store_explicit(&d->dir[(uint64_t)dense_value(d, i) - (uint64_t)d->base], 1u,
                              memory_order_relaxed);
    return LADLE_OK;
  }
  /* phase 3: ids, and each group's first row (the least row that saw it) */
  int64_t nfirst = INT64_MAX;
  for (int64_t i = a; i < e; i++) {
    uint32_t g;
    if (!ladle_column_valid(c, i)) {
      g = d->null_id;
      if (nfirst == INT64_MAX) nfirst = i;
    } else {
      g = atomic_load_explicit(&d->dir[(uint64_t)dense_value(d, i) - (uint64_t)d->base],
                               memory_order_relaxed) -
          1;
      int64_t f = atomic_load_explicit(&d->first[g], memory_order_relaxed);
      while (i < f && !atomic_compare_exchange_weak_explicit(
                          &d->first[g], &f, i, memory_order_relaxed, memory_order_relaxed)) {
      }
    }
    d->ids[i] = g;
  }
  if (nfirst != INT64_MAX) {
    int64_t f = atomic_load_explicit(&d->nulls_at, memory_order_relaxed);
    while (nfirst < f &&
           !atomic_compare_exchange_weak_explicit(&d->nulls_at, &f, nfirst, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
  }
  return LADLE_OK;
}

/* phase 2 over the range: marks counted (then numbered) per range block */
static ladle_status dense_range(void *vctx, size_t b, ladle_error *err) {
  LADLE_UNUSED(err);
  dense_ctx *d = vctx;
  uint64_t a = (uint64_t)b * (uint64_t)d->rblock, e = LADLE_MIN(a + (uint64_t)d->rblock, d->range);
  if (d->phase == 0) {
    /* the array zeroed block by block (a serial memset of SF10's 60M order
     * keys' 240 MB was a pass no thread count shortened) */
    memset((uint32_t *)d->dir + a, 0, (size_t)(e - a) * sizeof *d->dir);
    return LADLE_OK;
  }
  if (d->phase == 2) {
    int64_t k = 0;
    for (uint64_t v = a; v < e; v++) k += atomic_load_explicit(&d->dir[v], memory_order_relaxed);
    d->cnt[b] = k;
    return LADLE_OK;
  }
  uint32_t id = (uint32_t)d->cnt[b];
  for (uint64_t v = a; v < e; v++)
    if (atomic_load_explicit(&d->dir[v], memory_order_relaxed) != 0) {
      atomic_store_explicit(&d->first[id], INT64_MAX, memory_order_relaxed);
      atomic_store_explicit(&d->dir[v], ++id, memory_order_relaxed);
    }
  return LADLE_OK;
}

static ladle_status dense_build(const ladle_kctx *ctx, const ladle_column *c, ladle_groups *out,
                                ladle_fastmap **map, ladle_error *err) {
  ladle_type_id t = c->type.id;
  dense_ctx d;
  memset(&d, 0, sizeof d);
  d.c = c;
  d.n = c->length;
  if (t == LADLE_TYPE_INT32 || t == LADLE_TYPE_DATE || t == LADLE_TYPE_UINT32) {
    d.w = 4;
    d.sgn = t != LADLE_TYPE_UINT32;
  } else if (t == LADLE_TYPE_INT64 || t == LADLE_TYPE_DATETIME || t == LADLE_TYPE_DURATION ||
             t == LADLE_TYPE_UINT64) {
    /* uint64 as int64: a bijection, so the range test still holds */
    d.w = 8;
  } else {
    return LADLE_ENOTSUP;
  }
  if (d.n == 0 || d.n > (int64_t)UINT32_MAX - 1) return LADLE_ENOTSUP;
  /* the array over the range costs no more than about twice the ids; a
   * join's table, probed by many more rows (a filtered dimension's keys),
   * may be sparser. The range of 1024 evenly spaced rows is at most the
   * whole one: a key surely too wide costs no pass over every row. */
  uint64_t most = 2 * (uint64_t)d.n + 65536;
  if (map != NULL) most = LADLE_MAX(most, LADLE_MIN(16 * (uint64_t)d.n, (uint64_t)1 << 22));
  int64_t slo = INT64_MAX, shi = INT64_MIN;
  for (int k = 0; k < 1024; k++) {
    int64_t v = dense_value(&d, (int64_t)((double)k * (double)d.n / 1024));
    slo = LADLE_MIN(slo, v);
    shi = LADLE_MAX(shi, v);
  }
  if ((uint64_t)shi - (uint64_t)slo >= LADLE_MIN(most, (uint64_t)DENSE_MAX)) return LADLE_ENOTSUP;
  d.block = ladle_cpu_block(ctx, d.n);
  size_t nb = (size_t)((d.n + d.block - 1) / d.block);
  d.lo = malloc(nb * sizeof *d.lo);
  d.hi = malloc(nb * sizeof *d.hi);
  if (d.lo == NULL || d.hi == NULL) {
    free(d.lo);
    free(d.hi);
    return LADLE_OOM(err, "group-by");
  }
  ladle_status st = ladle_pool_run(ctx->pool, nb, dense_rows, &d, err);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t b = 0; b < nb; b++) {
    lo = LADLE_MIN(lo, d.lo[b]);
    hi = LADLE_MAX(hi, d.hi[b]);
  }
  free(d.lo);
  free(d.hi);
  if (st != LADLE_OK) return st;
  d.base = lo;
  d.range = (uint64_t)hi - (uint64_t)lo + 1;
  if (d.range == 0 || d.range > DENSE_MAX || d.range > most) return LADLE_ENOTSUP;
  /* from the engine's block cache, zeroed in parallel */
  d.dir = ladle_scratch_alloc(d.range * sizeof *d.dir, false);
  d.rblock = LADLE_MAX((int64_t)(d.range / 64), 65536);
  size_t nr = (size_t)((d.range + (uint64_t)d.rblock - 1) / (uint64_t)d.rblock);
  d.cnt = malloc(nr * sizeof *d.cnt);
  d.ids = ladle_scratch_alloc((size_t)d.n * sizeof *d.ids, false);
  st = d.dir && d.cnt && d.ids ? LADLE_OK : LADLE_OOM(err, "group-by");
  if (st == LADLE_OK) {
    d.phase = 0;
    st = ladle_pool_run(ctx->pool, nr, dense_range, &d, err);
  }
  if (st == LADLE_OK) {
    d.phase = 1;
    st = ladle_pool_run(ctx->pool, nb, dense_rows, &d, err);
  }
  int64_t groups = 0;
  if (st == LADLE_OK) {
    d.phase = 2;
    st = ladle_pool_run(ctx->pool, nr, dense_range, &d, err);
  }
  if (st == LADLE_OK) {
    for (size_t b = 0; b < nr; b++) {
      int64_t k = d.cnt[b];
      d.cnt[b] = groups;
      groups += k;
    }
    d.null_id = (uint32_t)groups;
    d.first = ladle_scratch_alloc((size_t)(groups + 1) * sizeof *d.first, false);
    if (d.first == NULL) st = LADLE_OOM(err, "groups");
  }
  if (st == LADLE_OK) {
    d.phase = 3;
    st = ladle_pool_run(ctx->pool, nr, dense_range, &d, err);
  }
  if (st == LADLE_OK) {
    atomic_init(&d.nulls_at, INT64_MAX);
    d.phase = 4;
    st = ladle_pool_run(ctx->pool, nb, dense_rows, &d, err);
  }
  free(d.cnt);
  ladle_fastmap *fm = NULL;
  if (st == LADLE_OK && map != NULL) {
    fm = calloc(1, sizeof *fm);
    if (fm == NULL) st = LADLE_OOM(err, "join table");
  }
  if (st != LADLE_OK) {
    ladle_scratch_free((void *)d.dir);
    ladle_scratch_free(d.ids);
    ladle_scratch_free((void *)d.first);
    return st;
  }
  int64_t nulls_at = atomic_load(&d.nulls_at);
  if (fm != NULL) {
    fm->key = c;
    fm->dir = (uint32_t *)d.dir;
    fm->dlo = d.base;
    fm->drange = d.range;
    fm->dw = d.w;
    fm->dsgn = d.sgn;
    fm->dnull = nulls_at != INT64_MAX ? groups : -1;
    *map = fm;
  } else {
    ladle_scratch_free((void *)d.dir);
  }
  memset(out, 0, sizeof *out);
  out->nrows = d.n;
  out->ngroups = groups + (nulls_at != INT64_MAX);
  out->ids = d.ids;
  out->first = (int64_t *)d.first;
  if (nulls_at != INT64_MAX) out->first[groups] = nulls_at;
  return LADLE_OK;
}
