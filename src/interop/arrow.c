/* arrow.c — the Arrow C Data and Stream interfaces, both directions.
 *
 * Import: a stream of struct arrays becomes a table whose columns point into the
 * producer's buffers; each batch is moved into a refcounted holder and released
 * when the last column that uses it goes. Copies are made only where layouts
 * differ: bit-packed booleans (ladle keeps bytes), 32-bit string offsets,
 * bitmaps at odd bit offsets, string views, timestamps in seconds.
 * Export: a table's chunks (a result's partitions) become struct arrays whose
 * buffers are ladle's, kept alive by references held in the arrays' private data.
 * Tables only: plans and results are src/api's (see interop.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "interop.h"

/* ------------------------------------------------------------------ import */

typedef struct batch_holder {
  atomic_long refcount;
  struct ArrowArray array;
} batch_holder;

static void holder_release(void *owner) {
  batch_holder *h = owner;
  if (atomic_fetch_sub_explicit(&h->refcount, 1, memory_order_acq_rel) != 1) return;
  if (h->array.release != NULL) h->array.release(&h->array);
  free(h);
}

static ladle_status wrap(batch_holder *h, const void *ptr, size_t size, ladle_buffer **out,
                         ladle_error *err) {
  atomic_fetch_add_explicit(&h->refcount, 1, memory_order_relaxed);
  ladle_status st = ladle_buffer_wrap((void *)(uintptr_t)ptr, size, holder_release, h, out, err);
  if (st != LADLE_OK) holder_release(h);
  return st;
}

static ladle_status parse_format(const char *fmt, const char *name, ladle_dtype *out, int *seconds,
                                 bool *view, ladle_error *err) {
  *seconds = 0;
  *view = false;
  ladle_type_id id;
  if (strcmp(fmt, "n") == 0)
    id = LADLE_TYPE_NULL;
  else if (strcmp(fmt, "b") == 0)
    id = LADLE_TYPE_BOOL;
  else if (strcmp(fmt, "c") == 0)
    id = LADLE_TYPE_INT8;
  else if (strcmp(fmt, "s") == 0)
    id = LADLE_TYPE_INT16;
  else if (strcmp(fmt, "i") == 0)
    id = LADLE_TYPE_INT32;
  else if (strcmp(fmt, "l") == 0)
    id = LADLE_TYPE_INT64;
  else if (strcmp(fmt, "C") == 0)
    id = LADLE_TYPE_UINT8;
  else if (strcmp(fmt, "S") == 0)
    id = LADLE_TYPE_UINT16;
  else if (strcmp(fmt, "I") == 0)
    id = LADLE_TYPE_UINT32;
  else if (strcmp(fmt, "L") == 0)
    id = LADLE_TYPE_UINT64;
  else if (strcmp(fmt, "_pli128") == 0) /* Polars' extension formats */
    id = LADLE_TYPE_INT128;
  else if (strcmp(fmt, "_plu128") == 0)
    id = LADLE_TYPE_UINT128;
  else if (strcmp(fmt, "f") == 0)
    id = LADLE_TYPE_FLOAT32;
  else if (strcmp(fmt, "g") == 0)
    id = LADLE_TYPE_FLOAT64;
  else if (strcmp(fmt, "u") == 0 || strcmp(fmt, "U") == 0)
    id = LADLE_TYPE_STRING;
  else if (strcmp(fmt, "vu") == 0) {
    id = LADLE_TYPE_STRING;
    *view = true;
  } else if (strcmp(fmt, "z") == 0 || strcmp(fmt, "Z") == 0)
    id = LADLE_TYPE_BINARY;
  else if (strcmp(fmt, "vz") == 0) {
    id = LADLE_TYPE_BINARY;
    *view = true;
  } else if (strcmp(fmt, "ttn") == 0 || strcmp(fmt, "ttu") == 0) {
    *seconds = fmt[2] == 'u'; /* microseconds: scaled by 1000 like seconds to ms */
    id = LADLE_TYPE_TIME;
  } else if (strncmp(fmt, "d:", 2) == 0) {
    int p = 0, sc = 0, bits = 128, used = 0;
    int got = sscanf(fmt + 2, "%d,%d%n,%d", &p, &sc, &used, &bits);
    if (got < 2 || (got == 2 && fmt[2 + used] != '\0') || bits != 128 || p < 1 || p > 38 ||
        sc < 0 || sc > p)
      goto unsupported;
    *out = ladle_dtype_decimal(p, sc);
    return LADLE_OK;
  } else if (strcmp(fmt, "tdD") == 0)
    id = LADLE_TYPE_DATE;
  else if (strncmp(fmt, "ts", 2) == 0 && strlen(fmt) >= 4 && fmt[3] == ':') {
    char u = fmt[2];
    ladle_time_unit unit = u == 'n' ? LADLE_TIME_NS : u == 'u' ? LADLE_TIME_US : LADLE_TIME_MS;
    if (u == 's')
      *seconds = 1;
    else if (u != 'n' && u != 'u' && u != 'm')
      goto unsupported;
    *out = ladle_dtype_temporal(LADLE_TYPE_DATETIME, unit, fmt + 4);
    if (strlen(fmt + 4) >= LADLE_TZ_MAX)
      return ladle_err_set(err, LADLE_ENOTSUP, "column '%s': time zone name too long", name);
    return LADLE_OK;
  } else if (strncmp(fmt, "tD", 2) == 0 && strlen(fmt) == 3) {
    char u = fmt[2];
    if (u != 'n' && u != 'u' && u != 'm' && u != 's') goto unsupported;
    if (u == 's') *seconds = 1;
    *out = ladle_dtype_temporal(LADLE_TYPE_DURATION,
                                u == 'n'   ? LADLE_TIME_NS
                                : u == 'u' ? LADLE_TIME_US
                                           : LADLE_TIME_MS,
                                NULL);
    return LADLE_OK;
  } else
    goto unsupported;
  *out = ladle_dtype_make(id);
  return LADLE_OK;
unsupported:
  return ladle_err_set(err, LADLE_ENOTSUP,
                       "column '%s': Arrow format \"%s\" is not supported yet (ladle reads "
                       "null, bool, integers, floats, strings, binary, date32, time64, timestamp, "
                       "duration, decimal128)",
                       name, fmt);
}

/* parse_format for a whole field: a list ("+l", "+L") of a flat element type
 * becomes LIST. */
static ladle_status parse_field(const struct ArrowSchema *sch, const char *name, ladle_dtype *out,
                                int *seconds, bool *view, ladle_error *err) {
  if (strcmp(sch->format, "+l") == 0 || strcmp(sch->format, "+L") == 0) {
    if (sch->n_children != 1 || sch->children == NULL || sch->children[0] == NULL)
      return ladle_err_set(err, LADLE_ECORRUPT, "column '%s': a list without one child", name);
    ladle_dtype child;
    int s2;
    bool v2;
    LADLE_RETURN_NOT_OK(parse_field(sch->children[0], name, &child, &s2, &v2, err));
    *out = ladle_dtype_list(child.id);
    *seconds = 0;
    *view = false;
    if (out->id != LADLE_TYPE_LIST || (child.id == LADLE_TYPE_TIME && s2)) {
      char b[64];
      return ladle_err_set(err, LADLE_ENOTSUP,
                           "column '%s': lists of %s are not supported yet (lists of booleans, "
                           "integers, floats, strings, binary, dates and times are)",
                           name, ladle_dtype_name(child, b, sizeof b));
    }
    return LADLE_OK;
  }
  return parse_format(sch->format, name, out, seconds, view, err);
}

/* String views are converted to ladle's offsets and bytes. A big column's
 * conversion is put off until the whole stream is read and then done by a pool
 * in pieces: each piece counts its bytes, a prefix sum places the pieces, and
 * each copies its strings. */
typedef struct view_job {
  batch_holder *h; /* a reference: the views and data buffers stay alive */
  const uint8_t *views;
  ladle_viewbufs vb; /* the array's data buffers */
  int64_t n;
  ladle_column *out; /* its type and validity set; bytes filled by the job */
  const char *name;
} view_job;

typedef struct view_jobs {
  view_job *jobs;
  size_t n, cap;
  /* the job being run */
  const view_job *cur;
  int64_t piece, npieces;
  int64_t *start; /* per piece: its first byte in the output */
  int64_t *o;
  char *chars;
  int64_t total; /* bytes of the column */
  _Atomic bool bad;
  ladle_view_cache *cache; /* conversions kept across imports, or NULL */
} view_jobs;

enum { VIEW_PARALLEL_MIN = 1 << 16 };

static int64_t views_bytes(const uint8_t *views, int64_t a, int64_t e) {
  int64_t chars = 0;
  for (int64_t i = a; i < e; i++) {
    int32_t len;
    memcpy(&len, views + 16 * i, 4);
    chars += len < 0 ? 0 : len;
  }
  return chars;
}

static ladle_status view_count_piece(void *ctx, size_t k, ladle_error *err) {
  LADLE_UNUSED(err);
  view_jobs *v = ctx;
  int64_t a = (int64_t)k * v->piece, e = LADLE_MIN(a + v->piece, v->cur->n);
  v->start[k] = a < e ? views_bytes(v->cur->views, a, e) : 0;
  return LADLE_OK;
}

static ladle_status view_copy_piece(void *ctx, size_t k, ladle_error *err) {
  LADLE_UNUSED(err);
  view_jobs *v = ctx;
  const view_job *j = v->cur;
  int64_t a = (int64_t)k * v->piece, e = LADLE_MIN(a + v->piece, j->n);
  if (a >= e) return LADLE_OK;
  v->o[a] = v->start[k];
  int64_t limit = (int64_t)k + 1 < v->npieces ? v->start[k + 1] : v->total;
  if (!ladle_views_copy(j->views, &j->vb, a, e, v->o, v->chars, limit))
    atomic_store_explicit(&v->bad, true, memory_order_relaxed);
  return LADLE_OK;
}

/* Conversions kept across queries (an engine's cache: ladle_view_cache). A
 * DataFrame queried again hands over the
 * same Arrow buffers, so a big view column's conversion is kept, keyed by the
 * addresses of its views and data buffers, together with a reference to the
 * batch that holds them: while the entry lives the keyed memory cannot be
 * freed (so no other column can come to sit at those addresses) and, shared,
 * cannot be changed in place by its producer (Arrow arrays are immutable, and
 * Polars copies a buffer it does not own alone before writing to it). Entries
 * go least recently used first past a budget: LADLE_VIEW_CACHE_MB, by default
 * 1/16 of the memory up to 16 GiB (2 GiB held TPC-H SF10's lineitem flags
 * for one query only: q1 converted 1 GB of them on every run); 0 turns the
 * cache off. The budget counts the converted column and the view column it
 * came from. Destroying the cache (its
 * engine) drops every entry and the references they hold. */
typedef struct view_cache_entry {
  const uint8_t *views;
  int64_t n, ndata;
  const void **data; /* the data buffers' addresses */
  int64_t *sizes;    /* and sizes (NULL: the producer gave none) */
  batch_holder *h;
  ladle_buffer *offsets, *chars; /* references (chars NULL: no bytes) */
  const void *values, *bytes_at; /* the converted column's offsets and bytes */
  size_t bytes;
  uint64_t used;
} view_cache_entry;

struct ladle_view_cache {
  pthread_mutex_t mu;
  view_cache_entry *e;
  size_t n, cap, bytes;
  uint64_t clock, hits;
};

ladle_view_cache *ladle_view_cache_create(void) {
  ladle_view_cache *c = calloc(1, sizeof *c);
  if (c != NULL) pthread_mutex_init(&c->mu, NULL);
  return c;
}

static size_t view_cache_budget(void) {
  const char *v = getenv("LADLE_VIEW_CACHE_MB");
  if (v != NULL && *v != '\0') return (size_t)strtoull(v, NULL, 10) << 20;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t mem = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 30;
  return LADLE_MIN(mem / 16, (size_t)16 << 30);
}

static void view_cache_drop(ladle_view_cache *vc, size_t k) {
  view_cache_entry *e = &vc->e[k];
  vc->bytes -= e->bytes;
  ladle_buffer_release(e->offsets);
  ladle_buffer_release(e->chars);
  holder_release(e->h);
  free(e->data);
  free(e->sizes);
  vc->e[k] = vc->e[--vc->n];
}

static bool view_cache_match(const view_cache_entry *e, const view_job *j) {
  int64_t ndata = j->vb.n;
  if (e->views != j->views || e->n != j->n || e->ndata != ndata) return false;
  const int64_t *sizes = j->vb.sizes;
  for (int64_t b = 0; b < ndata; b++)
    if (e->data[b] != j->vb.data[b] || (e->sizes != NULL) != (sizes != NULL) ||
        (sizes != NULL && e->sizes[b] != sizes[b]))
      return false;
  return true;
}

/* The kept conversion of j into c (offsets and bytes), if there is one. */
static bool view_cache_get(ladle_view_cache *vc, const view_job *j, ladle_column *c) {
  if (vc == NULL || j->n < VIEW_PARALLEL_MIN || j->vb.n < 0 || view_cache_budget() == 0)
    return false;
  bool hit = false;
  pthread_mutex_lock(&vc->mu);
  for (size_t k = 0; k < vc->n && !hit; k++) {
    view_cache_entry *e = &vc->e[k];
    if (!view_cache_match(e, j)) continue;
    e->used = ++vc->clock;
    c->owners[1] = ladle_buffer_ref(e->offsets);
    c->owners[2] = ladle_buffer_ref(e->chars);
    c->values = e->values;
    c->chars = e->bytes_at;
    vc->hits++;
    hit = true;
  }
  pthread_mutex_unlock(&vc->mu);
  return hit;
}

/* Keeps the conversion c of j, within the budget (best effort: no memory, no
 * entry). */
static void view_cache_put(ladle_view_cache *vc, const view_job *j, const ladle_column *c) {
  if (vc == NULL || j->n < VIEW_PARALLEL_MIN || j->vb.n < 0) return;
  int64_t ndata = j->vb.n;
  const int64_t *sizes = j->vb.sizes;
  const int64_t *o = c->values;
  size_t bytes = (size_t)(j->n + 1) * 8 + (size_t)(o[j->n] - o[0]) + (size_t)j->n * 16;
  for (int64_t b = 0; sizes != NULL && b < ndata; b++) bytes += (size_t)LADLE_MAX(sizes[b], 0);
  size_t budget = view_cache_budget();
  if (bytes > budget) return;
  view_cache_entry e;
  memset(&e, 0, sizeof e);
  e.views = j->views;
  e.n = j->n;
  e.ndata = ndata;
  e.data = malloc((size_t)LADLE_MAX(ndata, 1) * sizeof *e.data);
  e.sizes = sizes ? malloc((size_t)LADLE_MAX(ndata, 1) * sizeof *e.sizes) : NULL;
  if (e.data == NULL || (sizes != NULL && e.sizes == NULL)) {
    free(e.data);
    free(e.sizes);
    return;
  }
  for (int64_t b = 0; b < ndata; b++) {
    e.data[b] = j->vb.data[b];
    if (sizes) e.sizes[b] = sizes[b];
  }
  e.bytes = bytes;
  pthread_mutex_lock(&vc->mu);
  for (size_t k = 0; k < vc->n; k++)
    if (view_cache_match(&vc->e[k], j)) { /* another thread kept it first */
      pthread_mutex_unlock(&vc->mu);
      free(e.data);
      free(e.sizes);
      return;
    }
  while (vc->n > 0 && vc->bytes + bytes > budget) {
    size_t lru = 0;
    for (size_t k = 1; k < vc->n; k++)
      if (vc->e[k].used < vc->e[lru].used) lru = k;
    view_cache_drop(vc, lru);
  }
  if (vc->n == vc->cap) {
    size_t cap = vc->cap ? 2 * vc->cap : 16;
    view_cache_entry *ne = realloc(vc->e, cap * sizeof *ne);
    if (ne == NULL) {
      pthread_mutex_unlock(&vc->mu);
      free(e.data);
      free(e.sizes);
      return;
    }
    vc->e = ne;
    vc->cap = cap;
  }
  atomic_fetch_add_explicit(&j->h->refcount, 1, memory_order_relaxed);
  e.h = j->h;
  e.offsets = ladle_buffer_ref(c->owners[1]);
  e.chars = ladle_buffer_ref(c->owners[2]);
  e.values = c->values;
  e.bytes_at = c->chars;
  e.used = ++vc->clock;
  vc->e[vc->n++] = e;
  vc->bytes += bytes;
  pthread_mutex_unlock(&vc->mu);
}

void ladle_view_cache_stats(ladle_view_cache *vc, size_t *entries, size_t *bytes, uint64_t *hits) {
  *entries = *bytes = 0;
  *hits = 0;
  if (vc == NULL) return;
  pthread_mutex_lock(&vc->mu);
  *entries = vc->n;
  *bytes = vc->bytes;
  *hits = vc->hits;
  pthread_mutex_unlock(&vc->mu);
}

void ladle_view_cache_clear(ladle_view_cache *vc) {
  if (vc == NULL) return;
  pthread_mutex_lock(&vc->mu);
  while (vc->n > 0) view_cache_drop(vc, vc->n - 1);
  free(vc->e);
  vc->e = NULL;
  vc->cap = 0;
  pthread_mutex_unlock(&vc->mu);
}

void ladle_view_cache_destroy(ladle_view_cache *vc) {
  if (vc == NULL) return;
  ladle_view_cache_clear(vc);
  pthread_mutex_destroy(&vc->mu);
  free(vc);
}

/* Converts view column j into a fresh offsets-and-bytes column, with `pool`
 * (NULL: on this thread). */
static ladle_status view_run(view_jobs *v, const view_job *j, ladle_pool *pool, ladle_error *err) {
  if (view_cache_get(v->cache, j, j->out)) return LADLE_OK;
  int threads = pool ? ladle_pool_threads(pool) : 1;
  v->cur = j;
  v->npieces = j->n < VIEW_PARALLEL_MIN ? 1 : (int64_t)threads * 4;
  v->piece = LADLE_MAX((j->n + v->npieces - 1) / v->npieces, 1);
  v->start = malloc((size_t)v->npieces * sizeof *v->start);
  if (v->start == NULL) return LADLE_OOM(err, "string views");
  ladle_status st = ladle_pool_run(pool, (size_t)v->npieces, view_count_piece, v, err);
  int64_t chars = 0;
  for (int64_t k = 0; k < v->npieces; k++) {
    int64_t c = v->start[k];
    v->start[k] = chars;
    chars += c;
  }
  ladle_column s;
  if (st == LADLE_OK) st = ladle_column_alloc(j->out->type, j->n, false, chars, &s, err);
  if (st == LADLE_OK) {
    v->o = LADLE_COL_MUT(&s, int64_t);
    v->chars = LADLE_COL_CHARS_MUT(&s);
    v->total = chars;
    v->o[0] = 0;
    atomic_store(&v->bad, false);
    st = ladle_pool_run(pool, (size_t)v->npieces, view_copy_piece, v, err);
    if (st == LADLE_OK && atomic_load(&v->bad))
      st = ladle_err_set(err, LADLE_ECORRUPT,
                         "column '%s': a string view points outside its buffers", j->name);
    if (st == LADLE_OK) {
      ladle_column *c = j->out;
      c->owners[1] = s.owners[1];
      c->owners[2] = s.owners[2];
      c->values = s.values;
      c->chars = s.chars;
      s.owners[1] = s.owners[2] = NULL;
      view_cache_put(v->cache, j, c);
    }
    ladle_column_release(&s);
  }
  free(v->start);
  v->start = NULL;
  return st;
}

/* Runs every put-off conversion with a pool of `threads`, and drops the jobs. */
static ladle_status view_jobs_finish(view_jobs *v, int threads, ladle_pool *shared, bool run,
                                     ladle_error *err) {
  ladle_status st = LADLE_OK;
  ladle_pool *pool = shared, *own = NULL;
  if (threads <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cores > 0 ? (int)cores : 1;
  }
  if (run && v->n > 0 && pool == NULL && threads > 1) st = ladle_pool_create(threads, &own, err);
  if (own != NULL) pool = own;
  for (size_t k = 0; k < v->n; k++) {
    if (run && st == LADLE_OK) st = view_run(v, &v->jobs[k], pool, err);
    holder_release(v->jobs[k].h);
  }
  ladle_pool_destroy(own);
  free(v->jobs);
  memset(v, 0, sizeof *v);
  return st;
}

/* An imported view column's data buffers, for the views it keeps (see
 * ladle_column.views): they point into the batch, which they hold. */
typedef struct held_viewbufs {
  ladle_viewbufs vb;
  batch_holder *h;
} held_viewbufs;

static void held_viewbufs_release(void *owner) {
  held_viewbufs *hv = owner;
  holder_release(hv->h);
  free(hv);
}

/* A view array's data buffers: its buffers are validity, views, the data
 * buffers, then their sizes (int64; n < 0 when the array has too few). */
static ladle_viewbufs arrow_viewbufs(const struct ArrowArray *a) {
  static const int64_t no_sizes[1] = {0};
  ladle_viewbufs vb = {a->n_buffers - 3, (const char *const *)a->buffers + 2, NULL};
  if (a->n_buffers >= 3) vb.sizes = a->buffers[a->n_buffers - 1];
  if (vb.sizes == NULL && vb.n == 0) vb.sizes = no_sizes; /* no data buffers */
  return vb;
}

/* Keeps the Arrow views of a STRING column c (rows from `views`) with it. */
static ladle_status keep_views(batch_holder *h, const ladle_viewbufs *vb, const uint8_t *views,
                               ladle_column *c, ladle_error *err) {
  if (c->type.id != LADLE_TYPE_STRING || vb->sizes == NULL || vb->n < 0) return LADLE_OK;
  held_viewbufs *hv = malloc(sizeof *hv);
  if (hv == NULL) return LADLE_OOM(err, "string views");
  hv->vb = *vb;
  atomic_fetch_add_explicit(&h->refcount, 1, memory_order_relaxed);
  hv->h = h;
  ladle_status st =
      ladle_buffer_wrap(hv, sizeof *hv, held_viewbufs_release, hv, &c->vowners[1], err);
  if (st != LADLE_OK) {
    held_viewbufs_release(hv);
    return st;
  }
  st = wrap(h, views, (size_t)LADLE_MAX(c->length, 1) * 16, &c->vowners[0], err);
  if (st != LADLE_OK) return st;
  c->views = views;
  c->vbufs = &hv->vb;
  return LADLE_OK;
}

static ladle_status import_column(batch_holder *h, const struct ArrowSchema *sch,
                                  const struct ArrowArray *a, view_jobs *vj, ladle_column *out,
                                  ladle_error *err);

static ladle_status import_column(batch_holder *h, const struct ArrowSchema *sch,
                                  const struct ArrowArray *a, view_jobs *vj, ladle_column *out,
                                  ladle_error *err) {
  ladle_dtype t;
  int seconds;
  bool view;
  const char *name = sch->name ? sch->name : "?";
  LADLE_RETURN_NOT_OK(parse_field(sch, name, &t, &seconds, &view, err));
  if (sch->dictionary != NULL)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "column '%s': dictionary-encoded (categorical) "
                         "columns are not supported yet",
                         name);
  int64_t n = a->length, off = a->offset;
  ladle_column c;
  memset(&c, 0, sizeof c);
  c.type = t;
  c.length = n;
  ladle_status st = LADLE_OK;
  if (t.id == LADLE_TYPE_NULL) return ladle_column_nulls(t, n, out, err);
  const uint8_t *valid = a->n_buffers > 0 ? a->buffers[0] : NULL;
  if (a->null_count == 0) valid = NULL;
  /* validity */
  if (valid != NULL) {
    if (off % 8 == 0) {
      st = wrap(h, valid + off / 8, (size_t)ladle_bitmap_bytes(n), &c.owners[0], err);
      if (st != LADLE_OK) return st;
      c.validity = valid + off / 8;
    } else {
      st = ladle_buffer_alloc(NULL, (size_t)ladle_bitmap_bytes(n), &c.owners[0], err);
      if (st != LADLE_OK) return st;
      uint8_t *bits = c.owners[0]->data;
      memset(bits, 0, (size_t)ladle_bitmap_bytes(n));
      for (int64_t i = 0; i < n; i++)
        if (ladle_bit_get(valid, off + i)) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
      c.validity = bits;
    }
  }
  if (t.id == LADLE_TYPE_LIST) {
    /* offsets (widened from int32 for "+l"), then the elements as a column */
    bool small = strcmp(sch->format, "+l") == 0;
    if (a->n_children != 1 || a->children == NULL || a->n_buffers < 2) {
      st = ladle_err_set(err, LADLE_ECORRUPT, "column '%s': a list array without one child", name);
    } else if (small) {
      st = ladle_buffer_alloc(NULL, (size_t)(n + 1) * 8, &c.owners[1], err);
      if (st == LADLE_OK) {
        const int32_t *o32 = (const int32_t *)a->buffers[1] + off;
        int64_t *o = c.owners[1]->data;
        for (int64_t i = 0; i <= n; i++) o[i] = o32[i];
        c.values = o;
      }
    } else {
      const int64_t *o64 = (const int64_t *)a->buffers[1] + off;
      st = wrap(h, o64, (size_t)(n + 1) * 8, &c.owners[1], err);
      c.values = o64;
    }
    ladle_column child;
    if (st == LADLE_OK) st = import_column(h, sch->children[0], a->children[0], NULL, &child, err);
    if (st == LADLE_OK) {
      const int64_t *o = c.values;
      if (o[0] < 0 || o[n] < o[0] || o[n] > child.length) {
        ladle_column_release(&child);
        st = ladle_err_set(err, LADLE_ECORRUPT, "column '%s': list offsets run past the elements",
                           name);
      } else {
        st = ladle_column_set_child(&c, &child, err);
      }
    }
  } else if (t.id == LADLE_TYPE_BOOL) {
    st = ladle_buffer_alloc(NULL, (size_t)LADLE_MAX(n, 1), &c.owners[1], err);
    if (st == LADLE_OK) {
      uint8_t *v = c.owners[1]->data;
      const uint8_t *bits = a->buffers[1];
      for (int64_t i = 0; i < n; i++) v[i] = ladle_bit_get(bits, off + i);
      c.values = v;
    }
  } else if (ladle_type_is_varlen(t.id) && view) {
    /* string views: 16-byte views, inline up to 12 bytes, else (buffer, offset) */
    const uint8_t *views = (const uint8_t *)a->buffers[1] + 16 * off;
    ladle_viewbufs vb = arrow_viewbufs(a);
    st = keep_views(h, &vb, views, &c, err);
    if (st != LADLE_OK) {
      ladle_column_release(&c);
      return st;
    }
    if (vj != NULL && n >= VIEW_PARALLEL_MIN) {
      /* put off: the column is filled by view_jobs_finish */
      if (vj->n == vj->cap) {
        size_t cap = vj->cap ? vj->cap * 2 : 8;
        view_job *jj = realloc(vj->jobs, cap * sizeof *jj);
        if (jj == NULL) {
          ladle_column_release(&c);
          return LADLE_OOM(err, "string views");
        }
        vj->jobs = jj;
        vj->cap = cap;
      }
      atomic_fetch_add_explicit(&h->refcount, 1, memory_order_relaxed);
      vj->jobs[vj->n++] = (view_job){h, views, vb, n, out, name};
    } else {
      view_jobs one;
      memset(&one, 0, sizeof one);
      view_job j = {h, views, vb, n, &c, name};
      st = view_run(&one, &j, NULL, err);
    }
  } else if (ladle_type_is_varlen(t.id) &&
             (strcmp(sch->format, "u") == 0 || strcmp(sch->format, "z") == 0)) {
    st = ladle_buffer_alloc(NULL, (size_t)(n + 1) * 8, &c.owners[1], err);
    if (st == LADLE_OK) {
      const int32_t *o32 = (const int32_t *)a->buffers[1] + off;
      int64_t *o = c.owners[1]->data;
      for (int64_t i = 0; i <= n; i++) o[i] = o32[i];
      c.values = o;
      st = wrap(h, a->buffers[2], 0, &c.owners[2], err);
      c.chars = a->buffers[2];
    }
  } else if (ladle_type_is_varlen(t.id)) {
    const int64_t *o64 = (const int64_t *)a->buffers[1] + off;
    st = wrap(h, o64, (size_t)(n + 1) * 8, &c.owners[1], err);
    c.values = o64;
    if (st == LADLE_OK) st = wrap(h, a->buffers[2], 0, &c.owners[2], err);
    c.chars = a->buffers[2];
  } else if (seconds) {
    st = ladle_buffer_alloc(NULL, (size_t)LADLE_MAX(n, 1) * 8, &c.owners[1], err);
    if (st == LADLE_OK) {
      const int64_t *s = (const int64_t *)a->buffers[1] + off;
      int64_t *v = c.owners[1]->data;
      for (int64_t i = 0; i < n; i++) v[i] = (int64_t)((uint64_t)s[i] * 1000u);
      c.values = v;
    }
  } else {
    size_t w = ladle_type_width(t.id);
    const char *v = (const char *)a->buffers[1] + off * (int64_t)w;
    st = wrap(h, v, (size_t)n * w, &c.owners[1], err);
    c.values = v;
  }
  if (st != LADLE_OK) {
    ladle_column_release(&c);
    return st;
  }
  c.null_count = c.validity ? ladle_bitmap_count_unset(c.validity, n) : 0;
  if (c.null_count == 0 && c.validity != NULL) {
    ladle_buffer_release(c.owners[0]);
    c.owners[0] = NULL;
    c.validity = NULL;
  }
  *out = c;
  return LADLE_OK;
}

ladle_status ladle_table_import_stream(struct ArrowArrayStream *stream, int threads,
                                       ladle_pool *pool, ladle_view_cache *cache, ladle_table **out,
                                       ladle_error *err) {
  view_jobs vj;
  memset(&vj, 0, sizeof vj);
  vj.cache = cache;
  if (stream == NULL || stream->release == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "scan_arrow: released or NULL stream");
  struct ArrowSchema sch;
  memset(&sch, 0, sizeof sch);
  ladle_status st = LADLE_OK;
  ladle_table *t = NULL;
  ladle_schema schema;
  memset(&schema, 0, sizeof schema);
  ladle_chunk *chunks = NULL;
  size_t nchunks = 0, cap = 0;
  if (stream->get_schema(stream, &sch) != 0) {
    const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    st = ladle_err_set(err, LADLE_EIO, "scan_arrow: get_schema failed: %s", m ? m : "(no message)");
    goto done;
  }
  if (strcmp(sch.format, "+s") != 0) {
    st = ladle_err_set(err, LADLE_EINVAL, "scan_arrow: expected a struct stream, got format \"%s\"",
                       sch.format);
    goto done;
  }
  st = ladle_schema_init(&schema, (size_t)sch.n_children, err);
  for (int64_t i = 0; st == LADLE_OK && i < sch.n_children; i++) {
    ladle_dtype dt;
    int sec;
    bool view;
    const char *name = sch.children[i]->name ? sch.children[i]->name : "";
    st = parse_field(sch.children[i], name, &dt, &sec, &view, err);
    if (st == LADLE_OK) st = ladle_schema_set(&schema, (size_t)i, name, dt, err);
  }
  for (;;) {
    if (st != LADLE_OK) break;
    batch_holder *h = calloc(1, sizeof *h);
    if (h == NULL) {
      st = LADLE_OOM(err, "arrow batch");
      break;
    }
    atomic_init(&h->refcount, 1);
    if (stream->get_next(stream, &h->array) != 0) {
      const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
      free(h);
      st = ladle_err_set(err, LADLE_EIO, "scan_arrow: get_next failed: %s", m ? m : "(no message)");
      break;
    }
    if (h->array.release == NULL) {
      free(h);
      break; /* end of stream */
    }
    if (h->array.n_children != (int64_t)schema.n) {
      st = ladle_err_set(err, LADLE_ECORRUPT, "scan_arrow: batch has %lld children, schema %zu",
                         (long long)h->array.n_children, schema.n);
      holder_release(h);
      break;
    }
    if (nchunks == cap) {
      cap = cap ? cap * 2 : 8;
      ladle_chunk *c = realloc(chunks, cap * sizeof *c);
      if (c == NULL) {
        holder_release(h);
        st = LADLE_OOM(err, "chunks");
        break;
      }
      chunks = c;
    }
    ladle_chunk *ck = &chunks[nchunks];
    ck->length = h->array.length;
    ck->columns = calloc(LADLE_MAX(schema.n, 1), sizeof *ck->columns);
    if (ck->columns == NULL) {
      holder_release(h);
      st = LADLE_OOM(err, "chunk");
      break;
    }
    nchunks++;
    for (size_t i = 0; st == LADLE_OK && i < schema.n; i++) {
      struct ArrowArray *child = h->array.children[i];
      struct ArrowArray shifted = *child;
      shifted.offset += h->array.offset;
      if (child->length < h->array.length + h->array.offset) {
        st = ladle_err_set(err, LADLE_ECORRUPT, "scan_arrow: column '%s' is shorter than its batch",
                           schema.names[i]);
        break;
      }
      shifted.length = h->array.length;
      st = import_column(h, sch.children[i], &shifted, &vj, &ck->columns[i], err);
    }
    holder_release(h); /* the columns hold their own references */
  }
  {
    ladle_status vs = view_jobs_finish(&vj, threads, pool, st == LADLE_OK, err);
    if (st == LADLE_OK) st = vs;
  }
  if (st == LADLE_OK) {
    st = ladle_table_create(&schema, 0, &t, err);
    if (st == LADLE_OK) {
      free(t->chunks);
      t->chunks = chunks;
      t->nchunks = nchunks;
      chunks = NULL;
      nchunks = 0;
      ladle_table_seal(t);
    }
  }
done:
  for (size_t k = 0; k < nchunks; k++) {
    for (size_t i = 0; chunks[k].columns && i < schema.n; i++)
      ladle_column_release(&chunks[k].columns[i]);
    free(chunks[k].columns);
  }
  free(chunks);
  if (sch.release) sch.release(&sch);
  stream->release(stream);
  ladle_schema_release(&schema);
  if (st == LADLE_OK)
    *out = t;
  else
    ladle_table_release(t);
  return st;
}

/* One stream per column (a Polars Series' own stream: a batch per chunk,
 * nothing concatenated). Every batch is fetched first and imported into its
 * place, then the columns' pieces are cut to common chunk boundaries (zero-copy
 * slices; none when the columns are chunked alike, the usual case). */
typedef struct col_pieces {
  struct ArrowSchema sch;
  ladle_column *p; /* the imported pieces */
  int64_t *len;
  batch_holder **h; /* fetched, not yet imported */
  size_t n, cap;
  int64_t rows;
} col_pieces;

static ladle_status fetch_column(struct ArrowArrayStream *s, const char *name, col_pieces *c,
                                 ladle_error *err) {
  for (;;) {
    batch_holder *h = calloc(1, sizeof *h);
    if (h == NULL) return LADLE_OOM(err, "arrow batch");
    atomic_init(&h->refcount, 1);
    if (s->get_next(s, &h->array) != 0) {
      const char *m = s->get_last_error ? s->get_last_error(s) : NULL;
      free(h);
      return ladle_err_set(err, LADLE_EIO, "scan_arrow: column '%s': get_next failed: %s", name,
                           m ? m : "(no message)");
    }
    if (h->array.release == NULL) {
      free(h);
      return LADLE_OK;
    }
    if (h->array.length == 0) { /* an empty chunk adds nothing */
      holder_release(h);
      continue;
    }
    if (c->n == c->cap) {
      size_t cap = c->cap ? 2 * c->cap : 8;
      batch_holder **nh = realloc(c->h, cap * sizeof *nh);
      if (nh == NULL) {
        holder_release(h);
        return LADLE_OOM(err, "arrow batches");
      }
      c->h = nh;
      c->cap = cap;
    }
    c->h[c->n++] = h;
    c->rows += h->array.length;
  }
}

ladle_status ladle_table_import_columns(struct ArrowArrayStream *streams, size_t ncols,
                                        const char *const *names, int threads, ladle_pool *pool,
                                        ladle_view_cache *cache, ladle_table **out,
                                        ladle_error *err) {
  view_jobs vj;
  memset(&vj, 0, sizeof vj);
  vj.cache = cache;
  ladle_schema schema;
  memset(&schema, 0, sizeof schema);
  ladle_table *t = NULL;
  col_pieces *cp = calloc(LADLE_MAX(ncols, 1), sizeof *cp);
  ladle_status st = cp ? ladle_schema_init(&schema, ncols, err) : LADLE_OOM(err, "columns");
  for (size_t i = 0; st == LADLE_OK && i < ncols; i++) {
    struct ArrowArrayStream *s = &streams[i];
    if (s->release == NULL) {
      st = ladle_err_set(err, LADLE_EINVAL, "scan_arrow: column '%s': released stream", names[i]);
      break;
    }
    if (s->get_schema(s, &cp[i].sch) != 0) {
      const char *m = s->get_last_error ? s->get_last_error(s) : NULL;
      st = ladle_err_set(err, LADLE_EIO, "scan_arrow: column '%s': get_schema failed: %s", names[i],
                         m ? m : "(no message)");
      break;
    }
    ladle_dtype dt;
    int sec;
    bool view;
    st = parse_field(&cp[i].sch, names[i], &dt, &sec, &view, err);
    if (st == LADLE_OK) st = ladle_schema_set(&schema, i, names[i], dt, err);
    if (st == LADLE_OK) st = fetch_column(s, names[i], &cp[i], err);
    if (st == LADLE_OK && i > 0 && cp[i].rows != cp[0].rows)
      st = ladle_err_set(err, LADLE_ECORRUPT,
                         "scan_arrow: column '%s' has %lld rows, column '%s' %lld", names[i],
                         (long long)cp[i].rows, names[0], (long long)cp[0].rows);
    if (st == LADLE_OK) {
      cp[i].p = calloc(LADLE_MAX(cp[i].n, 1), sizeof *cp[i].p);
      cp[i].len = calloc(LADLE_MAX(cp[i].n, 1), sizeof *cp[i].len);
      if (cp[i].p == NULL || cp[i].len == NULL) st = LADLE_OOM(err, "columns");
    }
    /* the pieces import into their places (view conversions put off into vj) */
    for (size_t k = 0; st == LADLE_OK && k < cp[i].n; k++) {
      batch_holder *h = cp[i].h[k];
      cp[i].len[k] = h->array.length;
      st = import_column(h, &cp[i].sch, &h->array, &vj, &cp[i].p[k], err);
    }
  }
  {
    ladle_status vs = view_jobs_finish(&vj, threads, pool, st == LADLE_OK, err);
    if (st == LADLE_OK) st = vs;
  }
  /* chunks at the union of the columns' piece boundaries: counted, then cut */
  size_t *at = calloc(LADLE_MAX(ncols, 1), sizeof *at);      /* the piece now read */
  int64_t *base = calloc(LADLE_MAX(ncols, 1), sizeof *base); /* its first row */
  if (st == LADLE_OK && (at == NULL || base == NULL)) st = LADLE_OOM(err, "columns");
  int64_t rows = ncols > 0 && cp != NULL ? cp[0].rows : 0;
  for (int pass = 0; pass < 2 && st == LADLE_OK; pass++) {
    size_t k = 0;
    int64_t row = 0;
    memset(at, 0, LADLE_MAX(ncols, 1) * sizeof *at);
    memset(base, 0, LADLE_MAX(ncols, 1) * sizeof *base);
    while (st == LADLE_OK && row < rows) {
      int64_t end = rows;
      for (size_t i = 0; i < ncols; i++) end = LADLE_MIN(end, base[i] + cp[i].len[at[i]]);
      ladle_chunk *ck = pass == 1 ? &t->chunks[k] : NULL;
      if (ck != NULL) ck->length = end - row;
      for (size_t i = 0; st == LADLE_OK && i < ncols; i++) {
        int64_t stop = base[i] + cp[i].len[at[i]];
        if (ck != NULL && row == base[i] && end == stop)
          ladle_column_copy_ref(&cp[i].p[at[i]], &ck->columns[i]);
        else if (ck != NULL)
          st = ladle_column_slice(&cp[i].p[at[i]], row - base[i], end - row, &ck->columns[i], err);
        if (end == stop) {
          base[i] = end;
          at[i]++;
        }
      }
      row = end;
      k++;
    }
    if (pass == 0 && st == LADLE_OK) st = ladle_table_create(&schema, k, &t, err);
  }
  if (st == LADLE_OK) ladle_table_seal(t);
  free(at);
  free(base);
  for (size_t i = 0; cp != NULL && i < ncols; i++) {
    for (size_t k = 0; k < cp[i].n; k++) {
      if (cp[i].p != NULL) ladle_column_release(&cp[i].p[k]);
      holder_release(cp[i].h[k]); /* the columns hold their own references */
    }
    free(cp[i].p);
    free(cp[i].len);
    free(cp[i].h);
    if (cp[i].sch.release) cp[i].sch.release(&cp[i].sch);
  }
  for (size_t i = 0; i < ncols; i++)
    if (streams[i].release != NULL) streams[i].release(&streams[i]);
  free(cp);
  ladle_schema_release(&schema);
  if (st == LADLE_OK)
    *out = t;
  else
    ladle_table_release(t);
  return st;
}

/* ------------------------------------------------------------------ export */

typedef struct schema_private {
  char *format;
  char *name;
  struct ArrowSchema **children;
  int64_t n;
} schema_private;

static void schema_release(struct ArrowSchema *s) {
  if (s == NULL || s->release == NULL) return;
  schema_private *p = s->private_data;
  for (int64_t i = 0; i < p->n; i++) {
    if (p->children[i]->release) p->children[i]->release(p->children[i]);
    free(p->children[i]);
  }
  free(p->children);
  free(p->format);
  free(p->name);
  free(p);
  s->release = NULL;
}

static char *format_of(ladle_dtype t) {
  char buf[64];
  const char *f;
  switch (t.id) {
    case LADLE_TYPE_NULL:
      f = "n";
      break;
    case LADLE_TYPE_BOOL:
      f = "b";
      break;
    case LADLE_TYPE_INT8:
      f = "c";
      break;
    case LADLE_TYPE_INT16:
      f = "s";
      break;
    case LADLE_TYPE_INT32:
      f = "i";
      break;
    case LADLE_TYPE_INT64:
      f = "l";
      break;
    case LADLE_TYPE_UINT8:
      f = "C";
      break;
    case LADLE_TYPE_UINT16:
      f = "S";
      break;
    case LADLE_TYPE_UINT32:
      f = "I";
      break;
    case LADLE_TYPE_UINT64:
      f = "L";
      break;
    case LADLE_TYPE_FLOAT32:
      f = "f";
      break;
    case LADLE_TYPE_FLOAT64:
      f = "g";
      break;
    case LADLE_TYPE_STRING:
      f = "U";
      break;
    case LADLE_TYPE_BINARY:
      f = "Z";
      break;
    case LADLE_TYPE_TIME:
      f = "ttn";
      break;
    case LADLE_TYPE_INT128:
      f = "_pli128";
      break;
    case LADLE_TYPE_UINT128:
      f = "_plu128";
      break;
    case LADLE_TYPE_DECIMAL:
      snprintf(buf, sizeof buf, "d:%d,%d", t.precision, t.scale);
      f = buf;
      break;
    case LADLE_TYPE_LIST:
      f = "+L";
      break;
    case LADLE_TYPE_DATE:
      f = "tdD";
      break;
    case LADLE_TYPE_DATETIME:
      snprintf(buf, sizeof buf, "ts%c:%s", "num"[t.unit], t.tz);
      f = buf;
      break;
    case LADLE_TYPE_DURATION:
      snprintf(buf, sizeof buf, "tD%c", "num"[t.unit]);
      f = buf;
      break;
    default:
      return NULL;
  }
  return ladle_strdup(f);
}

static ladle_status schema_make(const char *format, const char *name, int64_t n,
                                struct ArrowSchema *out, ladle_error *err) {
  schema_private *p = calloc(1, sizeof *p);
  if (p == NULL) return LADLE_OOM(err, "arrow schema");
  p->format = ladle_strdup(format);
  p->name = ladle_strdup(name ? name : "");
  p->children = calloc((size_t)LADLE_MAX(n, 1), sizeof *p->children);
  if (p->format == NULL || p->name == NULL || p->children == NULL) {
    free(p->format);
    free(p->name);
    free(p->children);
    free(p);
    return LADLE_OOM(err, "arrow schema");
  }
  memset(out, 0, sizeof *out);
  out->format = p->format;
  out->name = p->name;
  out->flags = ARROW_FLAG_NULLABLE;
  out->n_children = 0;
  out->children = p->children;
  out->release = schema_release;
  out->private_data = p;
  return LADLE_OK;
}

/* Appends child c (made with status st) to parent's children; on failure
 * frees c and releases the parent. */
static ladle_status adopt_child(struct ArrowSchema *parent, struct ArrowSchema *c,
                                ladle_status st) {
  if (st != LADLE_OK) {
    free(c);
    schema_release(parent);
    return st;
  }
  schema_private *p = parent->private_data;
  p->children[p->n++] = c;
  parent->n_children = p->n;
  return LADLE_OK;
}

/* The schema of one field; a LIST gets its element field "item". */
static ladle_status field_schema(ladle_dtype t, const char *name, struct ArrowSchema *out,
                                 ladle_error *err) {
  char *fmt = format_of(t);
  bool list = t.id == LADLE_TYPE_LIST && t.child != NULL;
  ladle_status st =
      fmt ? schema_make(fmt, name, list ? 1 : 0, out, err) : LADLE_OOM(err, "arrow schema");
  free(fmt);
  if (st != LADLE_OK || !list) return st;
  struct ArrowSchema *c = calloc(1, sizeof *c);
  st = c ? field_schema(*t.child, "item", c, err) : LADLE_OOM(err, "arrow schema");
  return adopt_child(out, c, st);
}

static ladle_status export_schema(const ladle_schema *s, const bool *views, struct ArrowSchema *out,
                                  ladle_error *err) {
  LADLE_RETURN_NOT_OK(schema_make("+s", "", (int64_t)s->n, out, err));
  for (size_t i = 0; i < s->n; i++) {
    struct ArrowSchema *c = calloc(1, sizeof *c);
    ladle_status st = !c                          ? LADLE_OOM(err, "arrow schema")
                      : views != NULL && views[i] ? schema_make("vu", s->names[i], 0, c, err)
                                                  : field_schema(s->types[i], s->names[i], c, err);
    LADLE_RETURN_NOT_OK(adopt_child(out, c, st));
  }
  return LADLE_OK;
}

typedef struct array_private {
  ladle_column col;   /* references keeping the buffers alive */
  ladle_buffer *bits; /* bit-packed booleans, or string views, made for export */
  int64_t sizes[1];   /* string views: the byte size of the one data buffer */
  const void *buffers[4];
  const void **more; /* kept string views with other than one data buffer */
  struct ArrowArray **children;
  int64_t n;
} array_private;

static void array_release(struct ArrowArray *a) {
  if (a == NULL || a->release == NULL) return;
  array_private *p = a->private_data;
  for (int64_t i = 0; i < p->n; i++) {
    if (p->children[i]->release) p->children[i]->release(p->children[i]);
    free(p->children[i]);
  }
  free(p->children);
  ladle_column_release(&p->col);
  ladle_buffer_release(p->bits);
  free(p->more);
  free(p);
  a->release = NULL;
}

/* Arrow string views ("vu") over the column's own bytes: a 16-byte view per
 * value (short strings inline, longer ones as prefix + offset into the one data
 * buffer, which is the column's chars). Polars keeps strings as views, so it
 * takes these without converting every value. */
static ladle_status views_build(const ladle_column *c, ladle_buffer **out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_buffer_alloc(NULL, (size_t)LADLE_MAX(c->length, 1) * 16, out, err));
  uint8_t *v = (*out)->data;
  const int64_t *o = c->values;
  int64_t base = c->length > 0 ? o[0] : 0, last = c->length > 0 ? o[c->length] : 0;
  int64_t i = 0;
  /* while 16 bytes can be read at the string: whole-word loads, the bytes past
   * an inline string masked off */
  for (; i < c->length && o[i] + 16 <= last; i++) {
    const char *p = c->chars + o[i];
    int64_t len = o[i + 1] - o[i];
    uint64_t a, b, v0, v1;
    memcpy(&a, p, 8);
    memcpy(&b, p + 8, 8);
    if (len <= 12) {
      a &= len >= 8 ? ~0ull : (1ull << (8 * len)) - 1;
      b &= len <= 8 ? 0 : (1ull << (8 * (len - 8))) - 1;
      v0 = (uint64_t)len | (a << 32);
      v1 = (a >> 32) | (b << 32);
    } else {
      v0 = (uint64_t)len | (a << 32);     /* length, then a 4-byte prefix */
      v1 = (uint64_t)(o[i] - base) << 32; /* buffer 0, then the offset */
    }
    memcpy(v + 16 * i, &v0, 8);
    memcpy(v + 16 * i + 8, &v1, 8);
  }
  for (; i < c->length; i++)
    ladle_view_make(v + 16 * i, c->chars + o[i], (int32_t)(o[i + 1] - o[i]), 0,
                    (int32_t)(o[i] - base));
  return LADLE_OK;
}

/* A column's kept views (ladle_column.views) go out as they are, with the
 * buffers they point into. */
static ladle_status export_kept_views(const ladle_column *c, array_private *p,
                                      struct ArrowArray *out, ladle_error *err) {
  const ladle_viewbufs *vb = c->vbufs;
  int64_t nb = 3 + vb->n;
  p->more = malloc((size_t)nb * sizeof *p->more);
  if (p->more == NULL) return LADLE_OOM(err, "arrow array");
  p->more[0] = c->validity;
  p->more[1] = c->views;
  for (int64_t b = 0; b < vb->n; b++) p->more[2 + b] = vb->data[b];
  p->more[nb - 1] = vb->sizes;
  out->buffers = p->more;
  out->n_buffers = nb;
  return LADLE_OK;
}

/* `prebuilt`: the views already made (taken over), or NULL to make them. */
static ladle_status export_views(const ladle_column *c, ladle_buffer *prebuilt, array_private *p,
                                 struct ArrowArray *out, ladle_error *err) {
  if (c->views != NULL) {
    ladle_buffer_release(prebuilt);
    return export_kept_views(c, p, out, err);
  }
  if (prebuilt != NULL)
    p->bits = prebuilt;
  else
    LADLE_RETURN_NOT_OK(views_build(c, &p->bits, err));
  const int64_t *o = c->values;
  int64_t base = c->length > 0 ? o[0] : 0;
  p->sizes[0] = c->length > 0 ? o[c->length] - base : 0;
  p->buffers[1] = p->bits->data;
  p->buffers[2] = c->chars + base;
  p->buffers[3] = p->sizes;
  out->n_buffers = 4;
  return LADLE_OK;
}

/* Whether a STRING column can go out as views: each piece's bytes fit the
 * int32 offsets of a view. */
static bool views_fit(const ladle_table *t, size_t col) {
  if (t->schema.types[col].id != LADLE_TYPE_STRING) return false;
  for (size_t k = 0; k < t->nchunks; k++) {
    const ladle_column *c = &t->chunks[k].columns[col];
    if (c->views != NULL) continue; /* kept views: they fit */
    const int64_t *o = c->values;
    if (c->length > 0 && o[c->length] - o[0] > INT32_MAX) return false;
  }
  return true;
}

static ladle_status export_column(const ladle_column *c, bool views, ladle_buffer *prebuilt,
                                  struct ArrowArray *out, ladle_error *err);
static ladle_status export_column(const ladle_column *c, bool views, ladle_buffer *prebuilt,
                                  struct ArrowArray *out, ladle_error *err) {
  array_private *p = calloc(1, sizeof *p);
  if (p == NULL) return LADLE_OOM(err, "arrow array");
  ladle_column_copy_ref(c, &p->col);
  memset(out, 0, sizeof *out);
  out->length = c->length;
  out->null_count = c->type.id == LADLE_TYPE_NULL ? c->length : c->null_count;
  out->buffers = p->buffers;
  out->release = array_release;
  out->private_data = p;
  if (c->type.id == LADLE_TYPE_NULL) {
    out->n_buffers = 0;
    return LADLE_OK;
  }
  p->buffers[0] = c->validity;
  if (c->type.id == LADLE_TYPE_BOOL && prebuilt != NULL) {
    p->bits = prebuilt; /* packed already, on the column's device */
    p->buffers[1] = prebuilt->data;
    out->n_buffers = 2;
  } else if (c->type.id == LADLE_TYPE_BOOL) {
    ladle_status st =
        ladle_buffer_alloc(NULL, (size_t)ladle_bitmap_bytes(c->length), &p->bits, err);
    if (st != LADLE_OK) {
      array_release(out);
      return st;
    }
    uint8_t *bits = p->bits->data;
    memset(bits, 0, (size_t)ladle_bitmap_bytes(c->length));
    const uint8_t *v = c->values;
    int64_t n = c->length, i = 0;
    /* eight bytes to one: each nonzero byte to its high bit, down to bit 0
     * of the byte, and one multiply moves byte k's bit to bit 56 + k (the
     * partial products land on distinct bits, so nothing carries) */
    for (; i + 8 <= n; i += 8) {
      uint64_t x;
      memcpy(&x, v + i, 8);
      x = (((x & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | x) & 0x8080808080808080ULL;
      bits[i >> 3] = (uint8_t)(((x >> 7) * 0x0102040810204080ULL) >> 56);
    }
    for (; i < n; i++)
      if (v[i]) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    p->buffers[1] = bits;
    out->n_buffers = 2;
  } else if (views && c->type.id == LADLE_TYPE_STRING) {
    ladle_status st = export_views(c, prebuilt, p, out, err);
    if (st != LADLE_OK) {
      array_release(out);
      return st;
    }
  } else if (ladle_type_is_varlen(c->type.id)) {
    p->buffers[1] = c->values;
    p->buffers[2] = c->chars;
    out->n_buffers = 3;
  } else if (c->type.id == LADLE_TYPE_LIST) {
    p->buffers[1] = c->values;
    out->n_buffers = 2;
    struct ArrowArray *child = calloc(1, sizeof *child);
    p->children = calloc(1, sizeof *p->children);
    ladle_status st = child && p->children ? export_column(c->child, false, NULL, child, err)
                                           : LADLE_OOM(err, "arrow array");
    if (st != LADLE_OK) {
      free(child);
      array_release(out);
      return st;
    }
    p->children[p->n++] = child;
    out->n_children = 1;
    out->children = p->children;
  } else {
    p->buffers[1] = c->values;
    out->n_buffers = 2;
  }
  return LADLE_OK;
}

/* prebuilt: NULL, or per column the chunk's views made ahead (taken over) */
static ladle_status export_chunk(const ladle_table *t, size_t k, const bool *views,
                                 ladle_buffer **prebuilt, struct ArrowArray *out,
                                 ladle_error *err) {
  array_private *p = calloc(1, sizeof *p);
  size_t n = t->schema.n;
  if (p == NULL || (p->children = calloc(LADLE_MAX(n, 1), sizeof *p->children)) == NULL) {
    free(p);
    return LADLE_OOM(err, "arrow array");
  }
  memset(out, 0, sizeof *out);
  out->length = t->chunks[k].length;
  out->n_buffers = 1;
  out->buffers = p->buffers;
  out->children = p->children;
  out->release = array_release;
  out->private_data = p;
  for (size_t i = 0; i < n; i++) {
    struct ArrowArray *c = calloc(1, sizeof *c);
    ladle_buffer *pre = prebuilt != NULL ? prebuilt[i] : NULL;
    if (prebuilt != NULL) prebuilt[i] = NULL;
    ladle_status st =
        c ? export_column(&t->chunks[k].columns[i], views != NULL && views[i], pre, c, err)
          : (ladle_buffer_release(pre), LADLE_OOM(err, "arrow array"));
    if (st != LADLE_OK) {
      free(c);
      array_release(out);
      return st;
    }
    p->children[p->n++] = c;
    out->n_children = p->n;
  }
  return LADLE_OK;
}

typedef struct stream_private {
  ladle_table *table;
  size_t next;
  bool *views;          /* per column: STRING exported as views */
  ladle_buffer **built; /* NULL, or per (chunk, column) views made ahead in parallel */
  ladle_error err;
} stream_private;

typedef struct views_ahead {
  const ladle_table *t;
  const bool *views;
  ladle_buffer **built;
} views_ahead;

static ladle_status views_ahead_task(void *ctx, size_t i, ladle_error *err) {
  views_ahead *v = ctx;
  size_t n = v->t->schema.n, k = i / n, col = i % n;
  if (!v->views[col] || v->t->chunks[k].columns[col].views != NULL) return LADLE_OK;
  return views_build(&v->t->chunks[k].columns[col], &v->built[i], err);
}

/* Makes every chunk's string views ahead with `threads` threads, when there are
 * enough rows to pay for a pool; p->built stays NULL otherwise. */
static ladle_status views_make_ahead(stream_private *p, int threads, ladle_error *err) {
  const ladle_table *t = p->table;
  size_t n = t->schema.n, cols = 0;
  for (size_t i = 0; i < n; i++) cols += p->views[i];
  if (threads <= 1 || cols == 0 || t->nchunks < 2 || t->num_rows < VIEW_PARALLEL_MIN)
    return LADLE_OK;
  p->built = calloc(t->nchunks * n, sizeof *p->built);
  if (p->built == NULL) return LADLE_OOM(err, "string views");
  ladle_pool *pool = NULL;
  ladle_status st = ladle_pool_create(threads, &pool, err);
  views_ahead v = {t, p->views, p->built};
  if (st == LADLE_OK) st = ladle_pool_run(pool, t->nchunks * n, views_ahead_task, &v, err);
  ladle_pool_destroy(pool);
  return st;
}

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  stream_private *p = s->private_data;
  return export_schema(&p->table->schema, p->views, out, &p->err) == LADLE_OK ? 0 : 12 /* ENOMEM */;
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  stream_private *p = s->private_data;
  if (p->next >= p->table->nchunks) {
    memset(out, 0, sizeof *out);
    return 0;
  }
  size_t k = p->next++;
  ladle_buffer **pre = p->built != NULL ? &p->built[k * p->table->schema.n] : NULL;
  return export_chunk(p->table, k, p->views, pre, out, &p->err) == LADLE_OK ? 0 : 12;
}

static const char *stream_last_error(struct ArrowArrayStream *s) {
  stream_private *p = s->private_data;
  return p->err.message;
}

static void stream_release(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) return;
  stream_private *p = s->private_data;
  for (size_t i = 0; p->built != NULL && i < p->table->nchunks * p->table->schema.n; i++)
    ladle_buffer_release(p->built[i]); /* chunks never asked for */
  free(p->built);
  ladle_table_release(p->table);
  free(p->views);
  free(p);
  s->release = NULL;
}

/* threads > 1: string views made ahead in parallel */
ladle_status ladle_table_export_stream(ladle_table *t, bool string_views, int threads,
                                       struct ArrowArrayStream *out, ladle_error *err) {
  stream_private *p = calloc(1, sizeof *p);
  if (p == NULL) return LADLE_OOM(err, "arrow stream");
  if (string_views) {
    p->views = calloc(LADLE_MAX(t->schema.n, 1), sizeof *p->views);
    if (p->views == NULL) {
      free(p);
      return LADLE_OOM(err, "arrow stream");
    }
    for (size_t i = 0; i < t->schema.n; i++) p->views[i] = views_fit(t, i);
  }
  p->table = ladle_table_ref(t);
  if (string_views) {
    ladle_status st = views_make_ahead(p, threads, err);
    if (st != LADLE_OK) {
      out->private_data = p;
      out->release = stream_release;
      stream_release(out);
      return st;
    }
  }
  out->get_schema = stream_get_schema;
  out->get_next = stream_get_next;
  out->get_last_error = stream_last_error;
  out->release = stream_release;
  out->private_data = p;
  return LADLE_OK;
}

ladle_status ladle_table_export_device_array(const ladle_table *t, ladle_buffer **bits,
                                             ladle_device_type device, int device_id,
                                             struct ArrowSchema *schema,
                                             struct ArrowDeviceArray *out, ladle_error *err) {
  if (t->nchunks > 1)
    return ladle_err_set(err, LADLE_EINVAL, "a device array of %zu partitions", t->nchunks);
  memset(out, 0, sizeof *out);
  LADLE_RETURN_NOT_OK(export_schema(&t->schema, NULL, schema, err));
  ladle_status st;
  if (t->nchunks == 1) {
    st = export_chunk(t, 0, NULL, bits, &out->array, err);
  } else {
    /* no partition: a struct array of no rows over empty columns */
    ladle_table *e = NULL;
    st = ladle_table_create(&t->schema, 1, &e, err);
    for (size_t i = 0; st == LADLE_OK && i < t->schema.n; i++)
      st = ladle_column_alloc(t->schema.types[i], 0, false, 0, &e->chunks[0].columns[i], err);
    if (st == LADLE_OK) {
      ladle_table_seal(e);
      st = export_chunk(e, 0, NULL, NULL, &out->array, err);
    }
    if (e != NULL) ladle_table_release(e);
  }
  if (st != LADLE_OK) {
    schema->release(schema);
    return st;
  }
  out->device_id = device_id;
  out->device_type = (ArrowDeviceType)device;
  out->sync_event = NULL;
  return LADLE_OK;
}
