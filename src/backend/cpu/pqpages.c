/* pqpages.c — parquet_decode on the host (backend.h): a flat fixed-width
 * Parquet column from its decompressed pages, one page per task. It is the
 * reference a device's decoder is held to (the conformance suite) and what
 * the column-kernel engine runs on the CPU (LADLE_COLUMN_KERNELS=1), so that
 * the executor's device scan is tested without a GPU. The host engine reads
 * Parquet through the io layer's own reader, which is faster. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>
#endif

#include "cpu.h"

/* One RLE/bit-packed hybrid stream, value by value. */
typedef struct rle_stream {
  const uint8_t *p, *end;
  int bw;
  int64_t left; /* values left in the current run */
  bool packed;
  uint32_t value;      /* an RLE run's */
  const uint8_t *bits; /* a bit-packed run's, and its bits */
  int64_t bitpos, nbits;
} rle_stream;

/* The next value into *v; false on malformed or exhausted data. */
static bool rle_next(rle_stream *r, uint32_t *v) {
  while (r->left == 0) {
    uint64_t h;
    if (r->p >= r->end || !ladle_uvarint(&r->p, r->end, &h)) return false;
    int64_t avail = r->end - r->p;
    if (h & 1) {
      uint64_t groups = h >> 1;
      if (groups == 0 || groups > (uint64_t)avail + 1) return false;
      int64_t bytes = LADLE_MIN((int64_t)groups * r->bw, avail); /* a last run may be cut short */
      r->packed = true;
      r->bits = r->p;
      r->bitpos = 0;
      r->nbits = bytes * 8;
      r->left = r->bw == 0 ? (int64_t)groups * 8 : LADLE_MIN((int64_t)groups * 8, r->nbits / r->bw);
      r->p += bytes;
    } else {
      uint64_t count = h >> 1;
      int vbytes = (r->bw + 7) / 8;
      if (count == 0 || vbytes > avail || count > ((uint64_t)1 << 40)) return false;
      uint32_t x = 0;
      for (int k = 0; k < vbytes; k++) x |= (uint32_t)r->p[k] << (8 * k);
      if (r->bw < 32 && (x >> r->bw) != 0) return false;
      r->p += vbytes;
      r->packed = false;
      r->value = x;
      r->left = (int64_t)count;
    }
  }
  if (r->packed) {
    uint32_t x = 0;
    for (int b = 0; b < r->bw; b++, r->bitpos++)
      x |= (uint32_t)((r->bits[r->bitpos >> 3] >> (r->bitpos & 7)) & 1) << b;
    *v = x;
  } else {
    *v = r->value;
  }
  r->left--;
  return true;
}

typedef struct pq_job {
  const uint8_t *bytes;
  int64_t nbytes;
  const ladle_kpage *pages;
  size_t npages;
  int width;
  bool nullable;
  int64_t nrows;
  uint8_t *out;
  uint8_t *valid; /* NULL: not nullable */
  atomic_llong nulls;
  const uint8_t **dicts; /* per page: a dictionary page's entries (decompressed), else NULL */
  int64_t *dict_size;
  uint8_t **dict_held;
  /* strings (width 0): per row its entry (UINT32_MAX: null) and length, and
   * whether it is present; the dictionaries' entries as offsets and bytes */
  uint32_t *ix;
  int64_t *lens;
  uint8_t *present;
} pq_job;

static ladle_status bad(ladle_error *err, size_t page, const char *what) {
  return ladle_err_set(err, LADLE_ECORRUPT, "Parquet page %zu of the column: %s", page, what);
}

static ladle_status page_body(pq_job *j, size_t i, uint8_t **held, ladle_error *err);

/* Page i's bytes, decompressed where it has a codec (*held then owns them). */
static ladle_status page_bytes(const pq_job *j, size_t i, const uint8_t **out, int64_t *size,
                               uint8_t **held, ladle_error *err) {
  const ladle_kpage *pg = &j->pages[i];
  *held = NULL;
  if (pg->offset < 0 || pg->size < 0 || pg->offset > j->nbytes || pg->size > j->nbytes - pg->offset)
    return bad(err, i, "page outside the buffer");
  *out = j->bytes + pg->offset;
  *size = pg->size;
  if (pg->codec == LADLE_KCODEC_NONE) return LADLE_OK;
#ifdef LADLE_HAVE_ZSTD
  if (pg->codec == LADLE_KCODEC_ZSTD) {
    int64_t lv = pg->prefixed ? 0 : pg->def_len;
    if (lv < 0 || lv > pg->size || pg->len < lv || pg->len > ((int64_t)1 << 31))
      return bad(err, i, "bad sizes of a compressed page");
    uint8_t *d = malloc((size_t)LADLE_MAX(pg->len, 1));
    if (d == NULL) return LADLE_OOM(err, "parquet page");
    memcpy(d, *out, (size_t)lv);
    size_t r = ZSTD_decompress(d + lv, (size_t)(pg->len - lv), *out + lv, (size_t)(pg->size - lv));
    if (ZSTD_isError(r) || (int64_t)r != pg->len - lv) {
      free(d);
      return bad(err, i, "the page does not decompress to its size (zstd)");
    }
    *out = *held = d;
    *size = pg->len;
    return LADLE_OK;
  }
#endif
  return ladle_err_set(err, LADLE_ENOTSUP, "parquet_decode: pages of codec %d", pg->codec);
}

static ladle_status page_task(void *vctx, size_t i, ladle_error *err) {
  pq_job *j = vctx;
  if (j->pages[i].kind == LADLE_KPAGE_DICTIONARY) return LADLE_OK;
  uint8_t *held = NULL;
  ladle_status st = page_body(j, i, &held, err);
  free(held);
  return st;
}

static ladle_status page_body(pq_job *j, size_t i, uint8_t **held, ladle_error *err) {
  const ladle_kpage *pg = &j->pages[i];
  if (pg->kind != LADLE_KPAGE_PLAIN && pg->kind != LADLE_KPAGE_DICT)
    return bad(err, i, "unknown page kind");
  int64_t w = j->width, n = pg->num_values, size;
  if (pg->row < 0 || n < 0 || pg->row > j->nrows || n > j->nrows - pg->row)
    return bad(err, i, "rows outside the column");
  const uint8_t *base;
  LADLE_RETURN_NOT_OK(page_bytes(j, i, &base, &size, held, err));
  int64_t def_len = pg->def_len;
  if (pg->prefixed && j->nullable) { /* a v1 page: the levels' length first */
    uint32_t l = 0;
    if (size < 4) return bad(err, i, "truncated definition levels");
    memcpy(&l, base, 4);
    if ((int64_t)l > size - 4) return bad(err, i, "definition levels run past the page");
    base += 4;
    size -= 4;
    def_len = l;
  } else if (pg->prefixed) {
    def_len = 0;
  }
  if (def_len < 0 || def_len > size || (j->nullable && def_len == 0 && n > 0))
    return bad(err, i, "bad definition levels");
  const uint8_t *vals = base + def_len, *vend = base + size;
  rle_stream defs = {base, base + def_len, 1, 0, false, 0, NULL, 0, 0};
  rle_stream idx;
  const uint8_t *dict = NULL;
  int64_t dict_n = 0;
  if (pg->kind == LADLE_KPAGE_DICT) {
    if (pg->dict < 0 || (size_t)pg->dict >= j->npages ||
        j->pages[pg->dict].kind != LADLE_KPAGE_DICTIONARY)
      return bad(err, i, "no dictionary page");
    const ladle_kpage *d = &j->pages[pg->dict];
    dict = j->dicts[pg->dict];
    /* (strings: checked when the entry read the dictionaries) */
    if (dict == NULL || d->num_values < 0 || (w > 0 && d->num_values > j->dict_size[pg->dict] / w))
      return bad(err, i, "dictionary entries run past the dictionary page");
    dict_n = d->num_values;
    if (n > 0 && vals >= vend) return bad(err, i, "no dictionary indices");
    int bw = n > 0 ? *vals : 0;
    if (bw > 32) return bad(err, i, "bad dictionary index bit width");
    idx = (rle_stream){vals + (n > 0), vend, bw, 0, false, 0, NULL, 0, 0};
  }
  if (w == 0 && pg->kind != LADLE_KPAGE_DICT) return bad(err, i, "PLAIN strings");
  uint8_t *o = w > 0 ? j->out + pg->row * w : NULL;
  int64_t vi = 0, nulls = 0;
  for (int64_t r = 0; r < n; r++) {
    bool present = true;
    if (j->nullable) {
      uint32_t lv;
      if (!rle_next(&defs, &lv)) return bad(err, i, "bad definition levels (RLE/bit-packed data)");
      if (lv > 1) return bad(err, i, "definition level above the schema's maximum");
      present = lv == 1;
    }
    if (!present && w == 0) {
      j->ix[pg->row + r] = UINT32_MAX;
      j->lens[pg->row + r] = 0;
      j->present[pg->row + r] = 0;
      nulls++;
      continue;
    }
    if (!present) {
      /* the bitmap came all valid; pages share the bytes at their edges */
      int64_t at = pg->row + r;
      __atomic_fetch_and(&j->valid[at >> 3], (uint8_t) ~(1u << (at & 7)), __ATOMIC_RELAXED);
      memset(o + r * w, 0, (size_t)w);
      nulls++;
      continue;
    }
    if (pg->kind == LADLE_KPAGE_PLAIN) {
      if ((vi + 1) * w > vend - vals) return bad(err, i, "PLAIN values run past the page");
      memcpy(o + r * w, vals + vi * w, (size_t)w);
    } else {
      uint32_t k;
      if (!rle_next(&idx, &k)) return bad(err, i, "bad dictionary indices (RLE/bit-packed data)");
      if ((int64_t)k >= dict_n) return bad(err, i, "dictionary index out of range");
      if (w == 0) {
        const int64_t *doff = (const int64_t *)(const void *)dict;
        j->ix[pg->row + r] = k;
        j->lens[pg->row + r] = doff[k + 1] - doff[k];
        j->present[pg->row + r] = 1;
      } else {
        memcpy(o + r * w, dict + (int64_t)k * w, (size_t)w);
      }
    }
    vi++;
  }
  if (pg->num_nulls >= 0 && pg->num_nulls != nulls) {
    char msg[128];
    snprintf(msg, sizeof msg, "the page header counts %lld nulls, its levels %lld",
             (long long)pg->num_nulls, (long long)nulls);
    return bad(err, i, msg);
  }
  atomic_fetch_add(&j->nulls, nulls);
  return LADLE_OK;
}

/* A String column's dictionaries (offsets from 0, then the entries' bytes)
 * checked: the offsets rise and stay inside the page. */
static ladle_status check_dict_strings(const pq_job *j, size_t i, ladle_error *err) {
  const char *why =
      ladle_kpage_dict_strings_problem(j->dicts[i], j->dict_size[i], j->pages[i].num_values);
  return why != NULL ? bad(err, i, why) : LADLE_OK;
}

typedef struct chars_job {
  const pq_job *j;
  const int64_t *offsets;
  uint8_t *chars;
} chars_job;

static ladle_status chars_task(void *vctx, size_t i, ladle_error *err) {
  LADLE_UNUSED(err);
  const chars_job *c = vctx;
  const ladle_kpage *pg = &c->j->pages[i];
  if (pg->kind == LADLE_KPAGE_DICTIONARY) return LADLE_OK;
  const uint8_t *dict = c->j->dicts[pg->dict];
  const int64_t *doff = (const int64_t *)(const void *)dict;
  const uint8_t *dchars = dict + (c->j->pages[pg->dict].num_values + 1) * 8;
  for (int64_t r = pg->row; r < pg->row + pg->num_values; r++) {
    uint32_t k = c->j->ix[r];
    if (k != UINT32_MAX)
      memcpy(c->chars + c->offsets[r], dchars + doff[k], (size_t)(doff[k + 1] - doff[k]));
  }
  return LADLE_OK;
}

/* width 0: a String column from dictionary pages (their entries parsed by
 * the caller) and DICT data pages: the rows' entries and lengths first, the
 * offsets from them, then the bytes. */
static ladle_status decode_strings(const ladle_kctx *ctx, const uint8_t *bytes, int64_t nbytes,
                                   const ladle_kpage *pages, size_t npages, bool nullable,
                                   int64_t nrows, ladle_column *out, ladle_error *err) {
  if (nrows < 0 || nbytes < 0) return ladle_err_set(err, LADLE_EINVAL, "parquet_decode: sizes");
  pq_job j;
  memset(&j, 0, sizeof j);
  j.bytes = bytes;
  j.nbytes = nbytes;
  j.pages = pages;
  j.npages = npages;
  j.nullable = nullable;
  j.nrows = nrows;
  j.dicts = calloc(LADLE_MAX(npages, 1), sizeof *j.dicts);
  j.dict_size = calloc(LADLE_MAX(npages, 1), sizeof *j.dict_size);
  j.dict_held = calloc(LADLE_MAX(npages, 1), sizeof *j.dict_held);
  j.ix = malloc((size_t)LADLE_MAX(nrows, 1) * sizeof *j.ix);
  j.lens = calloc((size_t)LADLE_MAX(nrows, 1), sizeof *j.lens);
  j.present = calloc((size_t)LADLE_MAX(nrows, 1), 1);
  ladle_status st = j.dicts && j.dict_size && j.dict_held && j.ix && j.lens && j.present
                        ? LADLE_OK
                        : LADLE_OOM(err, "parquet pages");
  for (int64_t r = 0; st == LADLE_OK && r < nrows; r++) j.ix[r] = UINT32_MAX;
  for (size_t i = 0; st == LADLE_OK && i < npages; i++)
    if (pages[i].kind == LADLE_KPAGE_DICTIONARY) {
      st = page_bytes(&j, i, &j.dicts[i], &j.dict_size[i], &j.dict_held[i], err);
      if (st == LADLE_OK) st = check_dict_strings(&j, i, err);
    }
  if (st == LADLE_OK) st = ladle_pool_run(ctx->pool, npages, page_task, &j, err);
  int64_t total = 0;
  for (int64_t r = 0; st == LADLE_OK && r < nrows; r++) total += j.lens[r];
  ladle_column o;
  memset(&o, 0, sizeof o);
  if (st == LADLE_OK)
    st = ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_STRING), nrows, nullable, total, &o, err);
  if (st == LADLE_OK) {
    int64_t *offsets = LADLE_COL_MUT(&o, int64_t);
    offsets[0] = 0;
    for (int64_t r = 0; r < nrows; r++) {
      offsets[r + 1] = offsets[r] + j.lens[r];
      if (nullable) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), r, j.present[r]);
    }
    chars_job c = {&j, offsets, (uint8_t *)(uintptr_t)o.chars};
    st = ladle_pool_run(ctx->pool, npages, chars_task, &c, err);
    if (nullable) ladle_column_finish_nulls(&o);
  }
  for (size_t i = 0; j.dict_held != NULL && i < npages; i++) free(j.dict_held[i]);
  free(j.dicts);
  free(j.dict_size);
  free(j.dict_held);
  free(j.ix);
  free(j.lens);
  free(j.present);
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

ladle_status ladle_cpu_parquet_decode(const ladle_kctx *ctx, const uint8_t *bytes, int64_t nbytes,
                                      const ladle_kpage *pages, size_t npages, int width,
                                      ladle_dtype type, bool nullable, int64_t nrows,
                                      ladle_column *out, ladle_error *err) {
  memset(out, 0, sizeof *out);
  if (width == 0 && type.id == LADLE_TYPE_STRING)
    return decode_strings(ctx, bytes, nbytes, pages, npages, nullable, nrows, out, err);
  if ((width != 4 && width != 8) || ladle_type_width(type.id) != (size_t)width)
    return ladle_err_set(err, LADLE_ENOTSUP, "parquet_decode: %d-byte values into %s", width,
                         ladle_dtype_name(type, NULL, 0));
  if (nrows < 0 || nbytes < 0) return ladle_err_set(err, LADLE_EINVAL, "parquet_decode: sizes");
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(type, nrows, nullable, 0, &o, err));
  /* rows no page covers stay nulls (nullable) or zeros: the pages are checked
   * to cover each row once by the caller; a short column is corrupt there */
  if (nrows > 0) memset(LADLE_COL_MUT(&o, uint8_t), 0, (size_t)(nrows * width));
  pq_job j = {bytes,
              nbytes,
              pages,
              npages,
              width,
              nullable,
              nrows,
              LADLE_COL_MUT(&o, uint8_t),
              nullable ? LADLE_COL_VALIDITY_MUT(&o) : NULL,
              0,
              NULL,
              NULL,
              NULL,
              NULL,
              NULL,
              NULL};
  j.dicts = calloc(LADLE_MAX(npages, 1), sizeof *j.dicts);
  j.dict_size = calloc(LADLE_MAX(npages, 1), sizeof *j.dict_size);
  j.dict_held = calloc(LADLE_MAX(npages, 1), sizeof *j.dict_held);
  ladle_status st =
      j.dicts && j.dict_size && j.dict_held ? LADLE_OK : LADLE_OOM(err, "parquet pages");
  /* the dictionaries first, decompressed where stored so */
  for (size_t i = 0; st == LADLE_OK && i < npages; i++)
    if (pages[i].kind == LADLE_KPAGE_DICTIONARY)
      st = page_bytes(&j, i, &j.dicts[i], &j.dict_size[i], &j.dict_held[i], err);
  if (st == LADLE_OK) st = ladle_pool_run(ctx->pool, npages, page_task, &j, err);
  for (size_t i = 0; j.dict_held != NULL && i < npages; i++) free(j.dict_held[i]);
  free(j.dicts);
  free(j.dict_size);
  free(j.dict_held);
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  if (nullable) ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}

unsigned ladle_cpu_parquet_codecs(const ladle_kctx *ctx) {
  LADLE_UNUSED(ctx);
#ifdef LADLE_HAVE_ZSTD
  return 1u << LADLE_KCODEC_ZSTD;
#else
  return 0;
#endif
}
