/* keys.c — hashing and grouping of key rows.
 *
 * Key columns are first encoded row-wise into bytes (a validity byte, then the
 * value; floats canonicalised so NaN == NaN and -0.0 == 0.0; strings with a
 * length prefix), so that hashing and equality are one memcmp whatever the key
 * types. Rows are then radix-partitioned by the top bits of their hash, and each
 * partition builds its own open-addressing table in parallel: tables stay small
 * enough for the cache and no locks are needed. Group ids are dense, partition by
 * partition; ladle_groups_order_by_first renumbers them in order of appearance.
 */
#include "cpu.h"

typedef struct rowkeys {
  int64_t n;
  size_t width; /* > 0: every row has this many bytes; 0: see offsets */
  uint8_t *data;
  int64_t *offsets; /* variable width: n + 1 */
  uint64_t *hash;
  uint8_t *has_null; /* per row: some key is null */
} rowkeys;

static void rowkeys_free(rowkeys *r) {
  ladle_scratch_free(r->data);
  ladle_scratch_free(r->offsets);
  ladle_scratch_free(r->hash);
  ladle_scratch_free(r->has_null);
  memset(r, 0, sizeof *r);
}

static inline const uint8_t *row_ptr(const rowkeys *r, int64_t i, size_t *len) {
  if (r->width > 0) {
    *len = r->width;
    return r->data + (size_t)i * r->width;
  }
  *len = (size_t)(r->offsets[i + 1] - r->offsets[i]);
  return r->data + r->offsets[i];
}

/* Row a of ra equals row b of rb (same key types). */
static inline bool rows_equal(const rowkeys *ra, int64_t a, const rowkeys *rb, int64_t b) {
  if (ra->width > 0) {
    const uint8_t *x = ra->data + (size_t)a * ra->width, *y = rb->data + (size_t)b * rb->width;
    for (size_t w = 0; w < ra->width; w += 8) {
      uint64_t u, v;
      memcpy(&u, x + w, 8);
      memcpy(&v, y + w, 8);
      if (u != v) return false;
    }
    return true;
  }
  size_t la, lb;
  const uint8_t *x = row_ptr(ra, a, &la), *y = row_ptr(rb, b, &lb);
  return la == lb && memcmp(x, y, la) == 0;
}

typedef struct encode_ctx {
  const ladle_column *keys;
  size_t nkeys;
  rowkeys *r;
  int64_t morsel;
} encode_ctx;

static void encode_value(const ladle_column *c, int64_t i, uint8_t *p, size_t *pos) {
  bool valid = ladle_column_valid(c, i) && c->type.id != LADLE_TYPE_NULL;
  p[(*pos)++] = valid;
  if (c->type.id == LADLE_TYPE_NULL) return;
  if (c->type.id == LADLE_TYPE_STRING) {
    uint32_t len = valid ? (uint32_t)ladle_str_len(c, i) : 0;
    memcpy(p + *pos, &len, 4);
    *pos += 4;
    if (len) memcpy(p + *pos, ladle_str_ptr(c, i), len);
    *pos += len;
    return;
  }
  size_t w = ladle_type_width(c->type.id);
  if (!valid) {
    memset(p + *pos, 0, w);
  } else if (c->type.id == LADLE_TYPE_FLOAT64) {
    double d = ((const double *)c->values)[i];
    if (d != d) d = __builtin_nan("");
    if (d == 0) d = 0.0;
    memcpy(p + *pos, &d, 8);
  } else if (c->type.id == LADLE_TYPE_FLOAT32) {
    float f = ((const float *)c->values)[i];
    if (f != f) f = __builtin_nanf("");
    if (f == 0) f = 0.0f;
    memcpy(p + *pos, &f, 4);
  } else {
    memcpy(p + *pos, (const char *)c->values + (size_t)i * w, w);
  }
  *pos += w;
}

/* Fixed-width rows, column at a time: one type switch per column and morsel. */
static void encode_fixed(encode_ctx *e, int64_t begin, int64_t end) {
  rowkeys *r = e->r;
  size_t W = r->width, off = 0;
  for (int64_t i = begin; i < end; i++) r->has_null[i] = 0;
  for (size_t k = 0; k < e->nkeys; k++) {
    const ladle_column *c = &e->keys[k];
    size_t w = ladle_type_width(c->type.id);
    uint8_t *base = r->data + off;
    if (c->type.id == LADLE_TYPE_NULL) {
      for (int64_t i = begin; i < end; i++) {
        base[(size_t)i * W] = 0;
        r->has_null[i] = 1;
      }
    } else {
      for (int64_t i = begin; i < end; i++) {
        bool valid = ladle_column_valid(c, i);
        base[(size_t)i * W] = valid;
        r->has_null[i] |= !valid;
      }
      switch (c->type.id) {
        case LADLE_TYPE_FLOAT64:
        case LADLE_TYPE_FLOAT32:
          for (int64_t i = begin; i < end; i++) {
            size_t pos = 0;
            encode_value(c, i, base + (size_t)i * W, &pos);
          }
          break;
        default:
#define COPY_W(WIDTH, T)                           \
  case WIDTH: {                                    \
    const T *v = c->values;                        \
    for (int64_t i = begin; i < end; i++) {        \
      T x = base[(size_t)i * W] ? v[i] : 0;        \
      memcpy(base + (size_t)i * W + 1, &x, WIDTH); \
    }                                              \
    break;                                         \
  }
          switch (w) {
            COPY_W(1, uint8_t)
            COPY_W(2, uint16_t)
            COPY_W(4, uint32_t)
            COPY_W(8, uint64_t)
            default:
              break;
          }
#undef COPY_W
      }
    }
    off += 1 + w;
  }
  for (int64_t i = begin; i < end; i++) {
    uint8_t *p = r->data + (size_t)i * W;
    memset(p + off, 0, W - off);
    uint64_t h = 0x1234567;
    for (size_t x = 0; x < W; x += 8) {
      uint64_t word;
      memcpy(&word, p + x, 8);
      h = ladle_hash_combine(h, word);
    }
    r->hash[i] = h;
  }
}

static ladle_status encode_range(void *vctx, int64_t begin, int64_t end, ladle_error *err) {
  LADLE_UNUSED(err);
  encode_ctx *e = vctx;
  rowkeys *r = e->r;
  if (r->width > 0) {
    encode_fixed(e, begin, end);
    return LADLE_OK;
  }
  for (int64_t i = begin; i < end; i++) {
    uint8_t *p = r->data + r->offsets[i];
    size_t pos = 0;
    bool null = false;
    for (size_t k = 0; k < e->nkeys; k++) {
      encode_value(&e->keys[k], i, p, &pos);
      null |= !ladle_column_valid(&e->keys[k], i) || e->keys[k].type.id == LADLE_TYPE_NULL;
    }
    r->has_null[i] = null;
    r->hash[i] = ladle_hash_bytes(p, pos, 0x1234567);
  }
  return LADLE_OK;
}

static ladle_status encode_keys(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                rowkeys *r, ladle_error *err) {
  memset(r, 0, sizeof *r);
  int64_t n = nkeys > 0 ? keys[0].length : 0;
  r->n = n;
  size_t fixed = 0;
  bool var = false;
  for (size_t k = 0; k < nkeys; k++) {
    if (keys[k].type.id == LADLE_TYPE_STRING) var = true;
    fixed += 1 + ladle_type_width(keys[k].type.id);
  }
  r->hash = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * 8, false);
  r->has_null = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1), false);
  if (r->hash == NULL || r->has_null == NULL) goto oom;
  if (!var) {
    r->width = (LADLE_MAX(fixed, 1) + 7) & ~(size_t)7; /* whole words: compare and hash by word */
    r->data = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * r->width, false);
    if (r->data == NULL) goto oom;
  } else {
    r->offsets = ladle_scratch_alloc((size_t)(n + 1) * 8, false);
    if (r->offsets == NULL) goto oom;
    r->offsets[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t sz = (int64_t)fixed;
      for (size_t k = 0; k < nkeys; k++)
        if (keys[k].type.id == LADLE_TYPE_STRING)
          sz += 4 + (ladle_column_valid(&keys[k], i) ? ladle_str_len(&keys[k], i) : 0);
      r->offsets[i + 1] = r->offsets[i] + sz;
    }
    r->data = ladle_scratch_alloc((size_t)LADLE_MAX(r->offsets[n], 1), false);
    if (r->data == NULL) goto oom;
  }
  encode_ctx ec = {keys, nkeys, r, ladle_cpu_block(ctx, n)};
  return ladle_cpu_parallel(ctx, n, encode_range, &ec, err);
oom:
  rowkeys_free(r);
  return LADLE_OOM(err, "key encoding");
}

/* ------------------------------------------------------------------ keymap */

/* One partition's open-addressing table. A slot packs the upper 32 bits of the
 * hash with the local group id + 1 (0 = empty), so most mismatches are decided
 * without touching the key rows. Tables start small and double at half load, so
 * low-cardinality keys never pay for a table sized by rows. */
typedef struct part_table {
  int64_t nrows; /* rows of this partition */
  int64_t ngroups;
  uint64_t mask; /* slots - 1 */
  uint64_t *slots;
  int64_t *first; /* per local group: its first row */
  int64_t cap;    /* capacity of first */
} part_table;

#define SLOT_GID(s) ((int64_t)((s)&0xffffffffu))
#define SLOT_TAG(h) ((h) >> 32)

static bool part_grow(part_table *t, const rowkeys *rk) {
  uint64_t nslots = (t->mask + 1) * 2;
  uint64_t *slots = ladle_zalloc(nslots * sizeof *slots);
  if (slots == NULL) return false;
  for (int64_t g = 0; g < t->ngroups; g++) {
    uint64_t h = rk->hash[t->first[g]];
    uint64_t s = h & (nslots - 1);
    while (slots[s] != 0) s = (s + 1) & (nslots - 1);
    slots[s] = (SLOT_TAG(h) << 32) | (uint64_t)(g + 1);
  }
  free(t->slots);
  t->slots = slots;
  t->mask = nslots - 1;
  return true;
}

struct ladle_keymap {
  rowkeys rk;     /* fixed width: in partition order (see `reordered`) */
  bool reordered; /* rk rows are in partition order, not input order */
  int pbits;
  size_t nparts;
  part_table *parts;
  int64_t *base; /* global id of each partition's local group 0 */
  int64_t ngroups;
};

void ladle_keymap_destroy(ladle_keymap *km) {
  if (km == NULL) return;
  rowkeys_free(&km->rk);
  if (km->parts != NULL)
    for (size_t p = 0; p < km->nparts; p++) {
      free(km->parts[p].slots);
      free(km->parts[p].first);
    }
  free(km->parts);
  free(km->base);
  free(km);
}

static inline size_t part_of(const ladle_keymap *km, uint64_t h) {
  return km->pbits == 0 ? 0 : (size_t)(h >> (64 - km->pbits));
}

typedef struct build_ctx {
  ladle_keymap *km;
  const int64_t *order;  /* rows grouped by partition */
  const int64_t *pstart; /* nparts + 1 */
  uint32_t *ids;         /* local ids, later global */
} build_ctx;

static ladle_status build_part(void *vctx, size_t p, ladle_error *err) {
  build_ctx *b = vctx;
  ladle_keymap *km = b->km;
  part_table *t = &km->parts[p];
  int64_t begin = b->pstart[p], end = b->pstart[p + 1];
  t->nrows = end - begin;
  t->mask = 255;
  t->cap = LADLE_MIN(LADLE_MAX(t->nrows, 1), 1024);
  t->slots = ladle_zalloc((t->mask + 1) * sizeof *t->slots);
  t->first = malloc((size_t)t->cap * sizeof *t->first);
  if (t->slots == NULL || t->first == NULL) return LADLE_OOM(err, "hash table");
  const rowkeys *rk = &km->rk;
  for (int64_t k = begin; k < end; k++) {
    int64_t row = b->order[k];             /* the input row */
    int64_t pos = km->reordered ? k : row; /* its key in rk */
    uint64_t h = rk->hash[pos], tag = SLOT_TAG(h);
    for (uint64_t s = h & t->mask;; s = (s + 1) & t->mask) {
      uint64_t slot = t->slots[s];
      if (slot == 0) {
        if (t->ngroups == t->cap) {
          int64_t cap = LADLE_MIN(t->cap * 2, t->nrows);
          int64_t *f = realloc(t->first, (size_t)cap * sizeof *f);
          if (f == NULL) return LADLE_OOM(err, "hash table");
          t->first = f;
          t->cap = cap;
        }
        t->first[t->ngroups] = pos;
        t->slots[s] = (tag << 32) | (uint64_t)++t->ngroups;
        b->ids[row] = (uint32_t)(t->ngroups - 1);
        if ((uint64_t)t->ngroups * 2 > t->mask && !part_grow(t, rk))
          return LADLE_OOM(err, "hash table");
        break;
      }
      if ((slot >> 32) == tag && rows_equal(rk, t->first[SLOT_GID(slot) - 1], rk, pos)) {
        b->ids[row] = (uint32_t)(SLOT_GID(slot) - 1);
        break;
      }
    }
  }
  return LADLE_OK;
}

typedef struct relabel_ctx {
  ladle_keymap *km;
  const int64_t *order;
  const int64_t *pstart;
  uint32_t *ids;
  int64_t *first;
} relabel_ctx;

static ladle_status relabel_part(void *vctx, size_t p, ladle_error *err) {
  LADLE_UNUSED(err);
  relabel_ctx *r = vctx;
  int64_t base = r->km->base[p];
  for (int64_t k = r->pstart[p]; k < r->pstart[p + 1]; k++) {
    int64_t row = r->order[k];
    r->ids[row] = (uint32_t)(base + r->ids[row]);
  }
  part_table *t = &r->km->parts[p];
  for (int64_t g = 0; g < t->ngroups; g++)
    r->first[base + g] = r->km->reordered ? r->order[t->first[g]] : t->first[g];
  return LADLE_OK;
}

typedef struct part_job {
  const ladle_keymap *km;
  rowkeys *dst;   /* phase 1 with fixed-width keys: the partition-ordered copy */
  int64_t *order; /* phase 1: input row of each partition-ordered position */
  int64_t *hist;  /* nblocks x nparts: counts (phase 0), then write cursors */
  int64_t block;
  size_t nblocks;
  int phase;
} part_job;

static ladle_status part_task(void *vctx, size_t b, ladle_error *err) {
  LADLE_UNUSED(err);
  part_job *j = vctx;
  const ladle_keymap *km = j->km;
  const rowkeys *rk = &km->rk;
  int64_t a = (int64_t)b * j->block, e = LADLE_MIN(a + j->block, rk->n);
  int64_t *h = j->hist + b * km->nparts;
  if (j->phase == 0) {
    for (int64_t i = a; i < e; i++) h[part_of(km, rk->hash[i])]++;
    return LADLE_OK;
  }
  if (j->dst == NULL) {
    for (int64_t i = a; i < e; i++) j->order[h[part_of(km, rk->hash[i])]++] = i;
    return LADLE_OK;
  }
  size_t w = rk->width;
  for (int64_t i = a; i < e; i++) {
    uint64_t hv = rk->hash[i];
    int64_t d = h[part_of(km, hv)]++;
    j->order[d] = i;
    j->dst->hash[d] = hv;
    j->dst->has_null[d] = rk->has_null[i];
    memcpy(j->dst->data + (size_t)d * w, rk->data + (size_t)i * w, w);
  }
  return LADLE_OK;
}

ladle_status ladle_keymap_build(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                ladle_keymap **out, ladle_groups *groups, ladle_error *err) {
  ladle_keymap *km = calloc(1, sizeof *km);
  if (km == NULL) return LADLE_OOM(err, "keymap");
  ladle_status st = encode_keys(ctx, keys, nkeys, &km->rk, err);
  if (st != LADLE_OK) {
    free(km);
    return st;
  }
  int64_t n = km->rk.n;
  if (n > (int64_t)UINT32_MAX) {
    ladle_keymap_destroy(km);
    return ladle_err_set(err, LADLE_ENOTSUP, "grouping %lld rows: more than 2^32 in one partition",
                         (long long)n);
  }
  /* about 16K rows per partition, at most 256 partitions */
  int pbits = ladle_cpu_part_bits(ctx, n, 16384, 8);
  km->pbits = pbits;
  km->nparts = (size_t)1 << pbits;
  km->parts = calloc(km->nparts, sizeof *km->parts);
  km->base = malloc((km->nparts + 1) * sizeof *km->base);
  int64_t *pstart = calloc(km->nparts + 1, sizeof *pstart);
  int64_t *order = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *order, false);
  uint32_t *ids = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *ids, false);
  int64_t *cursor = malloc(km->nparts * sizeof *cursor);
  if (km->parts == NULL || km->base == NULL || pstart == NULL || order == NULL || ids == NULL ||
      cursor == NULL) {
    st = LADLE_OOM(err, "keymap partitions");
    goto done;
  }
  /* counting sort of rows by partition, block-parallel and stable (blocks keep
   * their order, rows within a block theirs), so first rows come first */
  part_job pj = {km, NULL, order, NULL, 0, 0, 0};
  pj.block = ladle_cpu_block(ctx, n);
  pj.nblocks = (size_t)((n + pj.block - 1) / pj.block);
  pj.hist = ladle_zalloc(LADLE_MAX(pj.nblocks, 1) * km->nparts * sizeof *pj.hist);
  if (pj.hist == NULL) {
    st = LADLE_OOM(err, "keymap partitions");
    goto done;
  }
  pj.phase = 0;
  st = ladle_pool_run(ctx->pool, pj.nblocks, part_task, &pj, err);
  if (st != LADLE_OK) {
    free(pj.hist);
    goto done;
  }
  /* hist[b][p] becomes where block b's rows of partition p start */
  ladle_cpu_part_starts(pj.hist, pj.nblocks, km->nparts, pstart);
  if (km->rk.width > 0) {
    /* scatter hashes and keys into partition order, so that each partition's
     * build reads its rows sequentially */
    rowkeys prk = km->rk;
    size_t w = prk.width;
    prk.data = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * w, false);
    prk.hash = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * 8, false);
    prk.has_null = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1), false);
    if (prk.data == NULL || prk.hash == NULL || prk.has_null == NULL) {
      ladle_scratch_free(prk.data);
      ladle_scratch_free(prk.hash);
      ladle_scratch_free(prk.has_null);
      free(pj.hist);
      st = LADLE_OOM(err, "keymap partitions");
      goto done;
    }
    pj.dst = &prk;
    pj.phase = 1;
    st = ladle_pool_run(ctx->pool, pj.nblocks, part_task, &pj, err);
    rowkeys_free(&km->rk);
    km->rk = prk;
    km->reordered = true;
  } else {
    pj.phase = 1;
    st = ladle_pool_run(ctx->pool, pj.nblocks, part_task, &pj, err);
  }
  free(pj.hist);
  if (st != LADLE_OK) goto done;
  build_ctx bc = {km, order, pstart, ids};
  st = ladle_pool_run(ctx->pool, km->nparts, build_part, &bc, err);
  if (st != LADLE_OK) goto done;
  km->base[0] = 0;
  for (size_t p = 0; p < km->nparts; p++) km->base[p + 1] = km->base[p] + km->parts[p].ngroups;
  km->ngroups = km->base[km->nparts];
  if (groups != NULL) {
    memset(groups, 0, sizeof *groups);
    groups->first =
        ladle_scratch_alloc((size_t)LADLE_MAX(km->ngroups, 1) * sizeof *groups->first, false);
    if (groups->first == NULL) {
      st = LADLE_OOM(err, "groups");
      goto done;
    }
    relabel_ctx rc = {km, order, pstart, ids, groups->first};
    st = ladle_pool_run(ctx->pool, km->nparts, relabel_part, &rc, err);
    if (st != LADLE_OK) {
      ladle_scratch_free(groups->first);
      groups->first = NULL;
      goto done;
    }
    groups->nrows = n;
    groups->ngroups = km->ngroups;
    groups->whole = false;
    groups->ids = ids;
    ids = NULL;
  }
done:
  free(pstart);
  ladle_scratch_free(order);
  ladle_scratch_free(ids);
  free(cursor);
  if (st != LADLE_OK) {
    ladle_keymap_destroy(km);
    return st;
  }
  *out = km;
  return LADLE_OK;
}

typedef struct probe_ctx {
  const ladle_keymap *km;
  const rowkeys *rk;
  bool nulls_equal;
  int64_t *gid;
} probe_ctx;

static ladle_status probe_range(void *vctx, int64_t begin, int64_t end, ladle_error *err) {
  LADLE_UNUSED(err);
  probe_ctx *pc = vctx;
  const ladle_keymap *km = pc->km;
  const rowkeys *rk = pc->rk;
  for (int64_t i = begin; i < end; i++) {
    pc->gid[i] = -1;
    if (!pc->nulls_equal && rk->has_null[i]) continue;
    uint64_t h = rk->hash[i], tag = SLOT_TAG(h);
    size_t p = part_of(km, h);
    const part_table *t = &km->parts[p];
    if (t->slots == NULL) continue;
    for (uint64_t s = h & t->mask;; s = (s + 1) & t->mask) {
      uint64_t slot = t->slots[s];
      if (slot == 0) break;
      if ((slot >> 32) == tag && rows_equal(&km->rk, t->first[SLOT_GID(slot) - 1], rk, i)) {
        pc->gid[i] = km->base[p] + SLOT_GID(slot) - 1;
        break;
      }
    }
  }
  return LADLE_OK;
}

ladle_status ladle_keymap_probe(const ladle_kctx *ctx, const ladle_keymap *km,
                                const ladle_column *keys, size_t nkeys, bool nulls_equal,
                                int64_t *gid, ladle_error *err) {
  rowkeys rk;
  LADLE_RETURN_NOT_OK(encode_keys(ctx, keys, nkeys, &rk, err));
  probe_ctx pc = {km, &rk, nulls_equal, gid};
  ladle_status st = ladle_cpu_parallel(ctx, rk.n, probe_range, &pc, err);
  rowkeys_free(&rk);
  return st;
}

/* ------------------------------------------------------------------ groups */

void ladle_groups_release(ladle_groups *g) {
  if (g == NULL) return;
  ladle_scratch_free(g->ids);
  ladle_scratch_free(g->first);
  free(g->offsets);
  ladle_scratch_free(g->rows);
  memset(g, 0, sizeof *g);
}

ladle_status ladle_groups_ids(const ladle_groups *g, ladle_error *err) {
  if (__atomic_load_n(&g->ids, __ATOMIC_ACQUIRE) != NULL) return LADLE_OK;
  uint32_t *ids = ladle_scratch_alloc((size_t)LADLE_MAX(g->nrows, 1) * sizeof *ids, true);
  if (ids == NULL) return LADLE_OOM(err, "groups");
  /* the ids are logically part of g (a whole group's are all 0): published
   * once, by whichever thread gets there first */
  uint32_t *none = NULL;
  uint32_t **slot = (uint32_t **)(uintptr_t)&g->ids;
  if (!__atomic_compare_exchange_n(slot, &none, ids, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ladle_scratch_free(ids);
  return LADLE_OK;
}

/* ------------------------------------------------- bucketing rows by group
 *
 * Items (rows, or a join's hits) bucketed by the group each falls in, stable:
 * off[g] .. off[g + 1] are group g's positions in rows. In parallel over
 * blocks of items with a histogram per block (a counting sort), as many blocks
 * as there are items enough per group to pay for the histograms. */
typedef struct bucket_job {
  const int64_t *grp;  /* per item: its group, -1 for none; or NULL and: */
  const uint32_t *gid; /* per item: its group */
  const int64_t *row;  /* per item: its row; NULL: the item's index */
  int64_t n, ng, block, gpiece;
  size_t nblocks;
  int64_t *hist; /* nblocks x ng: counts, then cursors */
  int64_t *off;  /* ng + 1 */
  int64_t *cur;  /* ng: cursors while turning counts into positions */
  int64_t *rows;
  int phase;
} bucket_job;

static ladle_status bucket_task(void *vctx, size_t t, ladle_error *err) {
  LADLE_UNUSED(err);
  bucket_job *j = vctx;
  if (j->phase == 0 || j->phase == 3) { /* block t of the items */
    int64_t a = (int64_t)t * j->block, e = LADLE_MIN(a + j->block, j->n);
    int64_t *h = j->hist + (size_t)t * (size_t)j->ng;
    for (int64_t i = a; i < e; i++) {
      int64_t g = j->grp ? j->grp[i] : (int64_t)j->gid[i];
      if (g < 0) continue;
      if (j->phase == 0)
        h[g]++;
      else
        j->rows[h[g]++] = j->row ? j->row[i] : i;
    }
    return LADLE_OK;
  }
  int64_t a = (int64_t)t * j->gpiece, e = LADLE_MIN(a + j->gpiece, j->ng);
  if (j->phase == 1) { /* groups [a, e): their totals */
    for (int64_t g = a; g < e; g++) j->off[g + 1] = 0;
    for (size_t b = 0; b < j->nblocks; b++) {
      const int64_t *h = j->hist + b * (size_t)j->ng;
      for (int64_t g = a; g < e; g++) j->off[g + 1] += h[g];
    }
    return LADLE_OK;
  }
  /* phase 2: each block's first position per group */
  for (int64_t g = a; g < e; g++) j->cur[g] = j->off[g];
  for (size_t b = 0; b < j->nblocks; b++) {
    int64_t *h = j->hist + b * (size_t)j->ng;
    for (int64_t g = a; g < e; g++) {
      int64_t c = h[g];
      h[g] = j->cur[g];
      j->cur[g] += c;
    }
  }
  return LADLE_OK;
}

/* With many groups (more than a thread's share of the items) a histogram per
 * block would be bigger than the items: two passes instead. Items go first to
 * partitions of 2^shift consecutive groups (a small histogram per block),
 * stable; then each partition, one task, counts its items by group into a
 * histogram that fits in cache and writes its groups' offsets and rows. No
 * step runs over all the groups on one thread. */
typedef struct radix_item {
  int64_t g, row;
} radix_item;

typedef struct radix_job {
  const int64_t *grp;
  const uint32_t *gid;
  const int64_t *row;
  int64_t n, ng, block;
  size_t nblocks, nparts;
  int shift;
  int64_t *hist;   /* nblocks x nparts: counts, then cursors */
  int64_t *pstart; /* nparts + 1: each partition's first item */
  radix_item *items;
  int64_t *off, *rows;
  int phase;
} radix_job;

static ladle_status radix_task(void *vctx, size_t t, ladle_error *err) {
  radix_job *j = vctx;
  if (j->phase == 0 || j->phase == 1) { /* block t: count, then scatter to partitions */
    int64_t a = (int64_t)t * j->block, e = LADLE_MIN(a + j->block, j->n);
    int64_t *h = j->hist + t * j->nparts;
    for (int64_t i = a; i < e; i++) {
      int64_t g = j->grp ? j->grp[i] : (int64_t)j->gid[i];
      if (g < 0) continue;
      if (j->phase == 0)
        h[g >> j->shift]++;
      else
        j->items[h[g >> j->shift]++] = (radix_item){g, j->row ? j->row[i] : i};
    }
    return LADLE_OK;
  }
  /* phase 2: partition t's groups [g0, g1) counted, then its rows placed;
   * it writes off[g0 .. g1) only (off[ng] is written at the end) */
  int64_t g0 = (int64_t)t << j->shift, g1 = LADLE_MIN(g0 + ((int64_t)1 << j->shift), j->ng);
  int64_t a = j->pstart[t], e = j->pstart[t + 1];
  int64_t *cur = ladle_zalloc((size_t)LADLE_MAX(g1 - g0, 1) * sizeof *cur);
  if (cur == NULL) return LADLE_OOM(err, "buckets");
  for (int64_t i = a; i < e; i++) cur[j->items[i].g - g0]++;
  int64_t pos = a;
  for (int64_t g = g0; g < g1; g++) {
    int64_t c = cur[g - g0];
    j->off[g] = cur[g - g0] = pos;
    pos += c;
  }
  for (int64_t i = a; i < e; i++) {
    const radix_item *it = &j->items[i];
    j->rows[cur[it->g - g0]++] = it->row;
  }
  free(cur);
  return LADLE_OK;
}

static ladle_status bucket_radix(const ladle_kctx *ctx, const int64_t *grp, const uint32_t *gid,
                                 const int64_t *row, int64_t n, int64_t ng, int64_t **off_out,
                                 int64_t **rows_out, ladle_error *err) {
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  radix_job j;
  memset(&j, 0, sizeof j);
  j.grp = grp;
  j.gid = gid;
  j.row = row;
  j.n = n;
  j.ng = ng;
  /* partitions of at most 2^14 groups (128 KiB of counters), and at least
   * eight per thread so that they balance */
  j.shift = 14;
  while (j.shift > 6 && ((ng - 1) >> j.shift) + 1 < (int64_t)threads * 8) j.shift--;
  j.nparts = (size_t)(((ng - 1) >> j.shift) + 1);
  j.nblocks = (size_t)LADLE_MAX(LADLE_MIN((int64_t)threads * 4, n / 4096), 1);
  j.block = (n + (int64_t)j.nblocks - 1) / (int64_t)j.nblocks;
  j.nblocks = (size_t)((n + j.block - 1) / j.block);
  j.hist = ladle_scratch_alloc(j.nblocks * j.nparts * sizeof *j.hist, true);
  j.pstart = malloc((j.nparts + 1) * sizeof *j.pstart);
  j.off = malloc((size_t)(ng + 1) * sizeof *j.off);
  ladle_status st = j.hist && j.pstart && j.off ? LADLE_OK : LADLE_OOM(err, "buckets");
  if (st == LADLE_OK) st = ladle_pool_run(ctx->pool, j.nblocks, radix_task, &j, err);
  int64_t total = 0;
  if (st == LADLE_OK) { /* per partition, per block: first places (stable) */
    total = ladle_cpu_part_starts(j.hist, j.nblocks, j.nparts, j.pstart);
    j.items = ladle_scratch_alloc((size_t)LADLE_MAX(total, 1) * sizeof *j.items, false);
    j.rows = ladle_scratch_alloc((size_t)LADLE_MAX(total, 1) * sizeof *j.rows, false);
    if (j.items == NULL || j.rows == NULL) st = LADLE_OOM(err, "buckets");
  }
  if (st == LADLE_OK) {
    j.phase = 1;
    st = ladle_pool_run(ctx->pool, j.nblocks, radix_task, &j, err);
  }
  if (st == LADLE_OK) {
    j.phase = 2;
    st = ladle_pool_run(ctx->pool, j.nparts, radix_task, &j, err);
  }
  if (st == LADLE_OK) j.off[ng] = total;
  ladle_scratch_free(j.hist);
  ladle_scratch_free(j.items);
  free(j.pstart);
  if (st != LADLE_OK) {
    free(j.off);
    ladle_scratch_free(j.rows);
    return st;
  }
  *off_out = j.off;
  *rows_out = j.rows;
  return LADLE_OK;
}

ladle_status ladle_cpu_bucket(const ladle_kctx *ctx, const int64_t *grp, const uint32_t *gid,
                              const int64_t *row, int64_t n, int64_t ng, int64_t **off_out,
                              int64_t **rows_out, ladle_error *err) {
  bucket_job j;
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  /* a histogram per block costs ng counters: blocks while they hold two
   * items per group at least; where the histograms would still outweigh half
   * the items (many groups, or items mostly in none, as a join's probe rows),
   * two passes instead */
  int64_t nb = n < 65536 ? 1 : LADLE_MIN((int64_t)threads * 2, 2 * n / LADLE_MAX(ng, 1));
  if (threads > 1 && n >= 65536 && ng > 4096 && (double)LADLE_MAX(nb, 1) * (double)ng > n / 2.0)
    return bucket_radix(ctx, grp, gid, row, n, ng, off_out, rows_out, err);
  memset(&j, 0, sizeof j);
  j.grp = grp;
  j.gid = gid;
  j.row = row;
  j.n = n;
  j.ng = ng;
  j.nblocks = (size_t)LADLE_MAX(nb, 1);
  j.block = LADLE_MAX((n + (int64_t)j.nblocks - 1) / (int64_t)j.nblocks, 1);
  j.nblocks = (size_t)LADLE_MAX((n + j.block - 1) / j.block, 1);
  j.off = malloc((size_t)(ng + 1) * sizeof *j.off);
  j.cur = malloc((size_t)LADLE_MAX(ng, 1) * sizeof *j.cur);
  j.hist = ladle_scratch_alloc(j.nblocks * (size_t)LADLE_MAX(ng, 1) * sizeof *j.hist, true);
  ladle_status st = j.off && j.cur && j.hist ? LADLE_OK : LADLE_OOM(err, "join");
  size_t ngp = 0;
  if (st == LADLE_OK) {
    ngp = ladle_cpu_pieces(ctx, ng, 1 << 14, 2, 64, &j.gpiece);
    j.off[0] = 0;
    j.phase = 0;
    st = ladle_pool_run(ctx->pool, j.nblocks, bucket_task, &j, err);
  }
  if (st == LADLE_OK && ng > 0) {
    j.phase = 1;
    st = ladle_pool_run(ctx->pool, ngp, bucket_task, &j, err);
  }
  if (st == LADLE_OK) {
    for (int64_t g = 0; g < ng; g++) j.off[g + 1] += j.off[g];
    j.rows = ladle_scratch_alloc((size_t)LADLE_MAX(j.off[ng], 1) * sizeof *j.rows, false);
    if (j.rows == NULL) st = LADLE_OOM(err, "join");
  }
  if (st == LADLE_OK && ng > 0) {
    j.phase = 2;
    st = ladle_pool_run(ctx->pool, ngp, bucket_task, &j, err);
  }
  if (st == LADLE_OK) {
    j.phase = 3;
    st = ladle_pool_run(ctx->pool, j.nblocks, bucket_task, &j, err);
  }
  ladle_scratch_free(j.hist);
  free(j.cur);
  if (st != LADLE_OK) {
    free(j.off);
    ladle_scratch_free(j.rows);
    return st;
  }
  *off_out = j.off;
  *rows_out = j.rows;
  return LADLE_OK;
}

ladle_status ladle_cpu_groups_csr(const ladle_kctx *ctx, ladle_groups *g, ladle_error *err) {
  if (g->offsets != NULL) return LADLE_OK;
  LADLE_RETURN_NOT_OK(ladle_groups_ids(g, err));
  return ladle_cpu_bucket(ctx, NULL, g->ids, NULL, g->nrows, g->ngroups, &g->offsets, &g->rows,
                          err);
}

ladle_status ladle_groups_order_by_first(ladle_groups *g, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_groups_ids(g, err));
  /* groups by first row: mark each group's first row, then number in row order */
  int64_t *newid = malloc((size_t)LADLE_MAX(g->ngroups, 1) * sizeof *newid);
  uint8_t *is_first = ladle_zalloc((size_t)LADLE_MAX(g->nrows, 1));
  if (newid == NULL || is_first == NULL) {
    free(newid);
    free(is_first);
    return LADLE_OOM(err, "group order");
  }
  for (int64_t k = 0; k < g->ngroups; k++) is_first[g->first[k]] = 1;
  int64_t next = 0;
  for (int64_t i = 0; i < g->nrows; i++)
    if (is_first[i]) {
      newid[g->ids[i]] = next;
      g->first[next] = i;
      next++;
    }
  for (int64_t i = 0; i < g->nrows; i++) g->ids[i] = (uint32_t)newid[g->ids[i]];
  free(newid);
  free(is_first);
  free(g->offsets);
  ladle_scratch_free(g->rows);
  g->offsets = NULL;
  g->rows = NULL;
  return LADLE_OK;
}

ladle_status ladle_cpu_group_ids(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                 ladle_groups *out, ladle_error *err) {
  ladle_status st;
  if (ladle_cpu_group_ids_fast(ctx, keys, nkeys, out, err, &st)) return st;
  ladle_keymap *km;
  LADLE_RETURN_NOT_OK(ladle_keymap_build(ctx, keys, nkeys, &km, out, err));
  ladle_keymap_destroy(km);
  return LADLE_OK;
}
