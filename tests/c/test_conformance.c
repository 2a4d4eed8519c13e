/* test_conformance.c — the backend conformance suite: given a kernel table
 * (backend.h), every column kernel is checked against a simple reference
 * written here, on random columns of every type, with nulls, empty, one row
 * and large, through the backend's own copies to and from its device. The CPU
 * table runs it always; the CUDA table (libladle_cuda.so, built where nvcc is
 * found) runs it where a GPU is: on a machine without one the CUDA part is
 * skipped with the loader's message, or fails when LADLE_REQUIRE_CUDA=1 (how
 * the GPU machine runs it: see the README).
 *
 * Outputs come from a memory resource over the backend's allocator, which must
 * be back to 0 bytes when every column is released (no device leak), and a
 * resource with a small limit must turn a large output into a clean
 * LADLE_ENOMEM that leaves the backend usable. A backend may answer
 * LADLE_ENOTSUP for a type it cannot run yet: that is counted and printed
 * (never for the CPU table, which is complete). */
#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>
#endif
#include "backend/backend.h"
#include "harness.h"

typedef struct suite {
  const ladle_backend *be;
  ladle_kctx ctx;
  ladle_mr *mr;
  bool strict; /* ENOTSUP is a failure */
  int unsupported;
  int64_t large; /* rows of the large case */
} suite;

static const ladle_type_id TYPES[] = {
    LADLE_TYPE_BOOL,     LADLE_TYPE_INT8,     LADLE_TYPE_INT16,   LADLE_TYPE_INT32,
    LADLE_TYPE_INT64,    LADLE_TYPE_UINT8,    LADLE_TYPE_UINT16,  LADLE_TYPE_UINT32,
    LADLE_TYPE_UINT64,   LADLE_TYPE_FLOAT32,  LADLE_TYPE_FLOAT64, LADLE_TYPE_DATE,
    LADLE_TYPE_DATETIME, LADLE_TYPE_DURATION, LADLE_TYPE_STRING,
};
enum { NTYPES = sizeof TYPES / sizeof TYPES[0] };

static ladle_dtype dtype_of(ladle_type_id id) {
  ladle_dtype t = ladle_dtype_make(id);
  if (id == LADLE_TYPE_DATETIME || id == LADLE_TYPE_DURATION)
    t = ladle_dtype_temporal(id, LADLE_TIME_US, NULL);
  return t;
}

static const char *tname(ladle_type_id id) { return ladle_dtype_name(dtype_of(id), NULL, 0); }

/* ------------------------------------------------------- random columns */

/* n random values of type id on the host; about one in null_every null (0:
 * none, 1: all). Floats include NaN, -0.0 and infinities; strings are 0 to 20
 * bytes, some of them multi-byte UTF-8. */
static ladle_column random_column(ladle_type_id id, int64_t n, int null_every) {
  ladle_column c;
  memset(&c, 0, sizeof c);
  ladle_dtype t = dtype_of(id);
  int64_t chars = id == LADLE_TYPE_STRING ? n * 20 : 0;
  if (ladle_column_alloc(t, n, null_every > 0, chars, &c, &err_) != LADLE_OK) {
    fprintf(stderr, "random_column: %s\n", err_.message);
    failures_++;
    return c;
  }
  if (id == LADLE_TYPE_STRING) {
    int64_t *off = LADLE_COL_MUT(&c, int64_t);
    char *data = LADLE_COL_CHARS_MUT(&c);
    off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      int len = (int)(test_rand() % 21), k = 0;
      while (k < len) {
        if (k + 2 <= len && test_rand() % 5 == 0) { /* é */
          data[off[i] + k++] = (char)0xc3;
          data[off[i] + k++] = (char)0xa9;
        } else {
          data[off[i] + k++] = (char)('a' + test_rand() % 26);
        }
      }
      off[i + 1] = off[i] + k;
    }
  } else {
    size_t w = ladle_type_width(id);
    uint8_t *v = LADLE_COL_MUT(&c, uint8_t);
    for (int64_t i = 0; i < n; i++) {
      uint64_t r = test_rand();
      if (id == LADLE_TYPE_BOOL) {
        v[i] = (uint8_t)(r & 1);
      } else if (id == LADLE_TYPE_FLOAT64) {
        double d = (double)(int64_t)(r % 2000001) / 1000.0 - 1000.0;
        if (r % 97 == 0) d = NAN;
        if (r % 89 == 0) d = -0.0;
        if (r % 211 == 0) d = r % 2 ? INFINITY : -INFINITY;
        memcpy(v + i * 8, &d, 8);
      } else if (id == LADLE_TYPE_FLOAT32) {
        float f = (float)(int64_t)(r % 20001) / 100.0f - 100.0f;
        if (r % 97 == 0) f = NAN;
        if (r % 89 == 0) f = -0.0f;
        memcpy(v + i * 4, &f, 4);
      } else {
        memcpy(v + i * w, &r, w); /* any bits, extremes included */
      }
    }
  }
  if (null_every > 0) {
    uint8_t *bits = LADLE_COL_VALIDITY_MUT(&c);
    for (int64_t i = 0; i < n; i++)
      if (null_every == 1 || test_rand() % (uint64_t)null_every == 0) ladle_bit_set(bits, i, false);
    ladle_column_finish_nulls(&c);
  }
  return c;
}

/* An INT64 index column of n rows into `rows` rows: some -1, some null
 * (when with_nulls), the rest random in range. */
static ladle_column random_indices(int64_t n, int64_t rows, bool with_nulls) {
  ladle_column c;
  if (ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT64), n, with_nulls, 0, &c, &err_) !=
      LADLE_OK) {
    failures_++;
    memset(&c, 0, sizeof c);
    return c;
  }
  int64_t *v = LADLE_COL_MUT(&c, int64_t);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = test_rand();
    v[i] = rows == 0 || r % 13 == 0 ? -1 : (int64_t)(r % (uint64_t)rows);
    if (with_nulls && r % 11 == 0) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), i, false);
  }
  ladle_column_finish_nulls(&c);
  return c;
}

/* ----------------------------------------------------------- comparison */

static bool valid_at(const ladle_column *c, int64_t i) { return ladle_column_valid(c, i); }

/* Whether host columns a and b hold the same rows (values compared where
 * valid, bit for bit but NaN equal to NaN), with the same type and a
 * null_count that matches the bitmap. */
static bool same_column(const char *what, const ladle_column *a, const ladle_column *b) {
  char ta[64], tb[64];
  if (!ladle_dtype_equal(a->type, b->type) || a->length != b->length) {
    fprintf(stderr, "  %s: %s[%lld] vs expected %s[%lld]\n", what,
            ladle_dtype_name(a->type, ta, sizeof ta), (long long)a->length,
            ladle_dtype_name(b->type, tb, sizeof tb), (long long)b->length);
    return false;
  }
  int64_t nulls = a->validity == NULL ? 0 : ladle_bitmap_count_unset(a->validity, a->length);
  if (nulls != a->null_count) {
    fprintf(stderr, "  %s: null_count %lld but the bitmap has %lld\n", what,
            (long long)a->null_count, (long long)nulls);
    return false;
  }
  for (int64_t i = 0; i < a->length; i++) {
    bool va = valid_at(a, i), vb = valid_at(b, i);
    if (va != vb) {
      fprintf(stderr, "  %s: row %lld valid %d, expected %d\n", what, (long long)i, va, vb);
      return false;
    }
    if (!va) continue;
    bool eq;
    if (ladle_type_is_varlen(a->type.id)) {
      eq = ladle_str_cmp(a, i, b, i) == 0;
    } else if (a->type.id == LADLE_TYPE_FLOAT64) {
      double x = ((const double *)a->values)[i], y = ((const double *)b->values)[i];
      eq = (isnan(x) && isnan(y)) || memcmp(&x, &y, 8) == 0;
    } else if (a->type.id == LADLE_TYPE_FLOAT32) {
      float x = ((const float *)a->values)[i], y = ((const float *)b->values)[i];
      eq = (isnan(x) && isnan(y)) || memcmp(&x, &y, 4) == 0;
    } else if (a->type.id == LADLE_TYPE_BOOL) {
      eq = (((const uint8_t *)a->values)[i] != 0) == (((const uint8_t *)b->values)[i] != 0);
    } else {
      size_t w = ladle_type_width(a->type.id);
      eq = memcmp((const uint8_t *)a->values + i * w, (const uint8_t *)b->values + i * w, w) == 0;
    }
    if (!eq) {
      fprintf(stderr, "  %s: row %lld differs\n", what, (long long)i);
      return false;
    }
  }
  return true;
}

/* ------------------------------------------------- references (host) */

/* rows of src at idx (-1 or a null index: null), built row by row */
static ladle_column ref_take(const ladle_column *src, const int64_t *idx, const uint8_t *idx_valid,
                             int64_t n) {
  ladle_column o;
  int64_t chars = 0;
  bool var = ladle_type_is_varlen(src->type.id);
  for (int64_t i = 0; var && i < n; i++)
    if ((idx_valid == NULL || ladle_bit_get(idx_valid, i)) && idx[i] >= 0)
      chars += ladle_str_len(src, idx[i]);
  if (ladle_column_alloc(src->type, n, true, chars, &o, &err_) != LADLE_OK) {
    failures_++;
    memset(&o, 0, sizeof o);
    return o;
  }
  size_t w = ladle_type_width(src->type.id);
  int64_t *off = var ? LADLE_COL_MUT(&o, int64_t) : NULL;
  for (int64_t i = 0; i < n; i++) {
    int64_t j = (idx_valid == NULL || ladle_bit_get(idx_valid, i)) ? idx[i] : -1;
    bool v = j >= 0 && valid_at(src, j);
    ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), i, v);
    if (var) {
      int64_t len = v ? ladle_str_len(src, j) : 0;
      if (len > 0) memcpy(LADLE_COL_CHARS_MUT(&o) + off[i], ladle_str_ptr(src, j), (size_t)len);
      off[i + 1] = off[i] + len;
    } else {
      if (v)
        memcpy(LADLE_COL_MUT(&o, uint8_t) + i * w, (const uint8_t *)src->values + j * w, w);
      else
        memset(LADLE_COL_MUT(&o, uint8_t) + i * w, 0, w);
    }
  }
  ladle_column_finish_nulls(&o);
  return o;
}

/* the positions where mask is true and valid */
static int64_t ref_select(const ladle_column *mask, int64_t *out) {
  int64_t k = 0;
  for (int64_t i = 0; i < mask->length; i++)
    if (((const uint8_t *)mask->values)[i] != 0 && valid_at(mask, i)) out[k++] = i;
  return k;
}

/* ------------------------------------------------------------ harness */

/* The status of a kernel call: OK, or ENOTSUP where allowed (counted, and
 * returned so the caller skips its comparison), else a failure. */
static bool ran(suite *s, ladle_status st, const char *what) {
  if (st == LADLE_OK) return true;
  if (st == LADLE_ENOTSUP && !s->strict) {
    if (s->unsupported++ < 8)
      printf("  [%s] not supported: %s: %s\n", s->be->name, what, err_.message);
    return false;
  }
  fprintf(stderr, "  [%s] %s failed: %s: %s\n", s->be->name, what, ladle_status_name(st),
          err_.message);
  failures_++;
  return false;
}

/* host column -> device -> host: what a kernel's output looks like here */
static bool up(suite *s, const ladle_column *h, ladle_column *d, const char *what) {
  return ran(s, s->be->to_device(&s->ctx, h, d, &err_), what);
}
static bool down(suite *s, const ladle_column *d, ladle_column *h, const char *what) {
  return ran(s, s->be->to_host(&s->ctx, d, h, &err_), what);
}

/* A kernel's output d brought down and compared with the reference ref (a
 * failure counted when they differ). */
static void same_down(suite *s, const ladle_column *d, const ladle_column *ref, const char *what) {
  ladle_column h;
  if (!down(s, d, &h, what)) return;
  if (!same_column(what, &h, ref)) failures_++;
  ladle_column_release(&h);
}

static int64_t lengths(const suite *s, int64_t *out) {
  int64_t v[] = {0, 1, 2, 31, 32, 33, 1000, 4099, s->large};
  int64_t n = (int64_t)(sizeof v / sizeof v[0]);
  memcpy(out, v, sizeof v);
  return n;
}
static const int NULLS[] = {0, 3, 1}; /* none, about a third, all */

static void check_copies(suite *s) {
  int64_t len[16], nl = lengths(s, len);
  for (int t = 0; t < NTYPES; t++)
    for (int64_t li = 0; li < nl; li++)
      for (int ni = 0; ni < 3; ni++) {
        ladle_column h = random_column(TYPES[t], len[li], NULLS[ni]), d, back;
        char what[96];
        snprintf(what, sizeof what, "copy of %s[%lld] nulls=%d", tname(TYPES[t]),
                 (long long)len[li], NULLS[ni]);
        if (up(s, &h, &d, what)) {
          if (d.owners[1] != NULL && d.owners[1]->device != s->be->device) {
            fprintf(stderr, "  [%s] %s: the copy is not on the backend's device\n", s->be->name,
                    what);
            failures_++;
          }
          if (down(s, &d, &back, what)) {
            if (!same_column(what, &back, &h)) failures_++;
            ladle_column_release(&back);
          }
          /* a copy on the device in buffers of its own, of the whole column
           * and of a slice past its first 8 rows (String offsets not from 0) */
          for (int sl = 0; sl < 2 && s->be->copy != NULL; sl++) {
            int64_t at = sl && d.length >= 8 ? 8 : 0; /* on a byte: device validity */
            ladle_column part, c, want;
            if (ladle_column_slice(&h, at, h.length - at, &want, &err_) != LADLE_OK) {
              fprintf(stderr, "  %s: slice failed: %s\n", what, err_.message);
              failures_++;
              break;
            }
            /* the device column's slice by hand: ladle_column_slice counts
             * the nulls in the bitmap, which the host cannot read there */
            ladle_column_copy_ref(&d, &part);
            part.length = want.length;
            part.null_count = want.null_count;
            if (part.validity != NULL) part.validity += at / 8;
            if (ladle_type_is_varlen(d.type.id))
              part.values = (const int64_t *)d.values + at;
            else if (d.values != NULL)
              part.values = (const char *)d.values + at * (int64_t)ladle_type_width(d.type.id);
            if (ran(s, s->be->copy(&s->ctx, &part, &c, &err_), what)) {
              bool own =
                  c.length == 0 || (c.owners[1] != part.owners[1] &&
                                    (c.owners[1] == NULL || c.owners[1]->device == s->be->device));
              if (!own) {
                fprintf(stderr, "  [%s] %s: the copy shares the input's buffer\n", s->be->name,
                        what);
                failures_++;
              }
              same_down(s, &c, &want, what);
              ladle_column_release(&c);
            }
            ladle_column_release(&part);
            ladle_column_release(&want);
          }
          ladle_column_release(&d);
        }
        ladle_column_release(&h);
      }
}

/* stream ordering against the legacy default stream (1) and the per-thread
 * one (2), both ways, and against its own stream: returns, and the next
 * kernels still run */
static void check_stream_wait(suite *s) {
  if (s->be->stream_wait == NULL) return;
  void *others[] = {(void *)(uintptr_t)1, (void *)(uintptr_t)2, s->ctx.stream, NULL};
  for (size_t i = 0; i < sizeof others / sizeof *others; i++)
    for (int w = 0; w < 2; w++) {
      char what[64];
      snprintf(what, sizeof what, "stream_wait %zu ours_waits=%d", i, w);
      ran(s, s->be->stream_wait(&s->ctx, others[i], w, &err_), what);
    }
  ladle_column h = random_column(LADLE_TYPE_INT64, 1000, 3), d;
  if (up(s, &h, &d, "a copy after stream_wait")) {
    same_down(s, &d, &h, "a copy after stream_wait");
    ladle_column_release(&d);
  }
  ladle_column_release(&h);
}

/* Boolean bytes to Arrow's bits, against the bits computed here */
static void check_pack_bits(suite *s) {
  int64_t len[16], nl = lengths(s, len);
  for (int64_t li = 0; li < nl && s->be->pack_bits != NULL; li++) {
    ladle_column h = random_column(LADLE_TYPE_BOOL, len[li], 3), d, bits;
    char what[64];
    snprintf(what, sizeof what, "pack_bits of bool[%lld]", (long long)len[li]);
    int64_t nb = ladle_bitmap_bytes(h.length);
    ladle_column want;
    if (ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT8), nb, false, 0, &want, &err_) !=
        LADLE_OK) {
      failures_++;
      ladle_column_release(&h);
      return;
    }
    uint8_t *w = LADLE_COL_MUT(&want, uint8_t);
    if (nb > 0) memset(w, 0, (size_t)nb);
    for (int64_t i = 0; i < h.length; i++)
      if (((const uint8_t *)h.values)[i] != 0) w[i / 8] |= (uint8_t)(1u << (i % 8));
    if (up(s, &h, &d, what)) {
      if (ran(s, s->be->pack_bits(&s->ctx, &d, &bits, &err_), what)) {
        same_down(s, &bits, &want, what);
        ladle_column_release(&bits);
      }
      ladle_column_release(&d);
    }
    ladle_column_release(&want);
    ladle_column_release(&h);
  }
}

static void check_select_take_filter(suite *s) {
  int64_t len[16], nl = lengths(s, len);
  for (int64_t li = 0; li < nl; li++)
    for (int ni = 0; ni < 3; ni++) {
      int64_t n = len[li];
      ladle_column mask = random_column(LADLE_TYPE_BOOL, n, NULLS[ni]), dmask, dsel, hsel;
      int64_t *expect = malloc((size_t)LADLE_MAX(n, 1) * sizeof *expect);
      int64_t k = ref_select(&mask, expect);
      char what[96];
      snprintf(what, sizeof what, "select of a mask[%lld] nulls=%d", (long long)n, NULLS[ni]);
      if (up(s, &mask, &dmask, what)) {
        if (ran(s, s->be->select(&s->ctx, &dmask, &dsel, &err_), what)) {
          if (down(s, &dsel, &hsel, what)) {
            bool ok = hsel.type.id == LADLE_TYPE_INT64 && hsel.length == k && hsel.null_count == 0;
            for (int64_t i = 0; ok && i < k; i++)
              ok = ((const int64_t *)hsel.values)[i] == expect[i];
            if (!ok) {
              fprintf(stderr, "  [%s] %s: %lld rows, expected %lld\n", s->be->name, what,
                      (long long)hsel.length, (long long)k);
              failures_++;
            }
            ladle_column_release(&hsel);
          }
          ladle_column_release(&dsel);
        }
        /* filter and take of every type by this mask */
        for (int t = 0; t < NTYPES; t++) {
          ladle_column src = random_column(TYPES[t], n, NULLS[(ni + t) % 3]), dsrc, dout, hout;
          snprintf(what, sizeof what, "filter of %s[%lld] nulls=%d", tname(TYPES[t]), (long long)n,
                   NULLS[(ni + t) % 3]);
          ladle_column want = ref_take(&src, expect, NULL, k);
          if (up(s, &src, &dsrc, what)) {
            if (ran(s, s->be->filter(&s->ctx, &dsrc, &dmask, &dout, &err_), what)) {
              if (down(s, &dout, &hout, what)) {
                if (!same_column(what, &hout, &want)) failures_++;
                ladle_column_release(&hout);
              }
              ladle_column_release(&dout);
            }
            ladle_column idx = random_indices(n / 2 + 3 * (n > 0), n, ni != 0), didx;
            snprintf(what, sizeof what, "take of %s[%lld] at %lld indices", tname(TYPES[t]),
                     (long long)n, (long long)idx.length);
            ladle_column want2 = ref_take(&src, idx.values, idx.validity, idx.length);
            if (up(s, &idx, &didx, what)) {
              if (ran(s, s->be->take(&s->ctx, &dsrc, &didx, &dout, &err_), what)) {
                if (down(s, &dout, &hout, what)) {
                  if (!same_column(what, &hout, &want2)) failures_++;
                  ladle_column_release(&hout);
                }
                ladle_column_release(&dout);
              }
              ladle_column_release(&didx);
            }
            ladle_column_release(&want2);
            ladle_column_release(&idx);
            ladle_column_release(&dsrc);
          }
          ladle_column_release(&want);
          ladle_column_release(&src);
        }
        ladle_column_release(&dmask);
      }
      free(expect);
      ladle_column_release(&mask);
    }
}

/* sum(x) by the reference: wrapping integers, floats in long double (the
 * backend's order of additions may differ: compared within a bound) */
static void check_sum(suite *s) {
  int64_t len[16], nl = lengths(s, len);
  for (int t = 0; t < NTYPES; t++) {
    ladle_type_id id = TYPES[t];
    bool summable = ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL || id == LADLE_TYPE_DURATION;
    for (int64_t li = 0; li < nl; li++)
      for (int ni = 0; ni < 3; ni++) {
        int64_t n = len[li];
        ladle_column h = random_column(id, n, NULLS[ni]), d, out, hout;
        char what[96];
        snprintf(what, sizeof what, "sum of %s[%lld] nulls=%d", tname(id), (long long)n, NULLS[ni]);
        if (!up(s, &h, &d, what)) {
          ladle_column_release(&h);
          continue;
        }
        ladle_status st = s->be->reduce(&s->ctx, LADLE_REDUCE_SUM, &d, &out, &err_);
        if (!summable) {
          /* a type that has no sum: an error, never a value */
          if (st == LADLE_OK) {
            fprintf(stderr, "  [%s] %s: answered\n", s->be->name, what);
            failures_++;
            ladle_column_release(&out);
          } else if (st != LADLE_EINVAL && st != LADLE_ENOTSUP) {
            fprintf(stderr, "  [%s] %s: %s\n", s->be->name, what, ladle_status_name(st));
            failures_++;
          }
        } else if (ran(s, st, what)) {
          if (down(s, &out, &hout, what)) {
            ladle_dtype want_t = ladle_sum_type(dtype_of(id));
            bool ok =
                ladle_dtype_equal(hout.type, want_t) && hout.length == 1 && hout.null_count == 0;
            if (ok && ladle_type_is_float(id)) {
              long double ref = 0, mag = 0;
              bool nan = false;
              for (int64_t i = 0; i < n; i++) {
                if (!valid_at(&h, i)) continue;
                double x = id == LADLE_TYPE_FLOAT32 ? (double)((const float *)h.values)[i]
                                                    : ((const double *)h.values)[i];
                nan |= isnan(x);
                ref += x;
                mag += fabs(x);
              }
              double got = id == LADLE_TYPE_FLOAT32 ? (double)((const float *)hout.values)[0]
                                                    : ((const double *)hout.values)[0];
              if (nan || isinf((double)ref) || isnan((double)ref))
                ok = isnan((double)ref) ? isnan(got) : (got == (double)ref || isnan(got));
              else
                ok = fabsl((long double)got - ref) <=
                     (id == LADLE_TYPE_FLOAT32 ? 1e-6L : 1e-12L) * (mag + 1);
            } else if (ok) {
              uint64_t acc = 0;
              size_t w = ladle_type_width(id);
              for (int64_t i = 0; i < n; i++) {
                if (!valid_at(&h, i)) continue;
                const uint8_t *p = (const uint8_t *)h.values + i * w;
                switch (ladle_type_phys(id)) {
                  case LADLE_PHYS_I8:
                    acc += (uint64_t)(int64_t) * (const int8_t *)p;
                    break;
                  case LADLE_PHYS_I16:
                    acc += (uint64_t)(int64_t) * (const int16_t *)p;
                    break;
                  case LADLE_PHYS_I32:
                    acc += (uint64_t)(int64_t) * (const int32_t *)p;
                    break;
                  case LADLE_PHYS_I64:
                    acc += (uint64_t) * (const int64_t *)p;
                    break;
                  case LADLE_PHYS_U8:
                    acc += *p;
                    break;
                  case LADLE_PHYS_U16:
                    acc += *(const uint16_t *)p;
                    break;
                  case LADLE_PHYS_U32:
                    acc += *(const uint32_t *)p;
                    break;
                  default:
                    acc += *(const uint64_t *)p;
                    break;
                }
              }
              ok = memcmp(hout.values, &acc, ladle_type_width(want_t.id)) == 0;
            }
            if (!ok) {
              fprintf(stderr, "  [%s] %s: wrong answer\n", s->be->name, what);
              failures_++;
            }
            ladle_column_release(&hout);
          }
          ladle_column_release(&out);
        }
        ladle_column_release(&d);
        ladle_column_release(&h);
      }
  }
}

/* Row i of fixed-width host column c as a long double (exact for every
 * 64-bit integer). */
static long double value_ld(const ladle_column *c, int64_t i) {
  const uint8_t *p = (const uint8_t *)c->values + i * (int64_t)ladle_type_width(c->type.id);
  switch (ladle_type_phys(c->type.id)) {
    case LADLE_PHYS_I8:
      return *(const int8_t *)p;
    case LADLE_PHYS_I16:
      return *(const int16_t *)p;
    case LADLE_PHYS_I32:
      return *(const int32_t *)p;
    case LADLE_PHYS_I64:
      return (long double)*(const int64_t *)p;
    case LADLE_PHYS_U16:
      return *(const uint16_t *)p;
    case LADLE_PHYS_U32:
      return *(const uint32_t *)p;
    case LADLE_PHYS_U64:
      return (long double)*(const uint64_t *)p;
    case LADLE_PHYS_F32:
      return *(const float *)p;
    case LADLE_PHYS_F64:
      return *(const double *)p;
    default:
      return *p; /* U8, Boolean's byte */
  }
}

/* min, max and count by the reference: over the valid values, NaN ignored
 * unless every valid value is NaN, null when none is valid (-0.0 and 0.0 are
 * equal here: which one a min of both gives depends on the order). */
static void check_min_max_count(suite *s) {
  int64_t len[16], nl = lengths(s, len);
  for (int t = 0; t < NTYPES; t++) {
    ladle_type_id id = TYPES[t];
    for (int64_t li = 0; li < nl; li++)
      for (int ni = 0; ni < 3; ni++) {
        int64_t n = len[li];
        ladle_column h = random_column(id, n, NULLS[ni]), d;
        char what[96];
        snprintf(what, sizeof what, "min/max/count of %s[%lld] nulls=%d", tname(id), (long long)n,
                 NULLS[ni]);
        if (!up(s, &h, &d, what)) {
          ladle_column_release(&h);
          continue;
        }
        for (int op = LADLE_REDUCE_MIN; op <= LADLE_REDUCE_COUNT; op++) {
          ladle_column out, hout;
          ladle_status st = s->be->reduce(&s->ctx, (ladle_reduce_op)op, &d, &out, &err_);
          if (op != LADLE_REDUCE_COUNT && !ladle_reduce_extreme_type(id)) {
            if (st == LADLE_OK) {
              fprintf(stderr, "  [%s] %s: answered a %s\n", s->be->name, what, tname(id));
              failures_++;
              ladle_column_release(&out);
            }
            continue;
          }
          if (!ran(s, st, what)) continue;
          if (down(s, &out, &hout, what)) {
            bool ok = hout.length == 1;
            if (op == LADLE_REDUCE_COUNT) {
              ok = ok && hout.type.id == LADLE_TYPE_UINT32 && hout.null_count == 0 &&
                   ((const uint32_t *)hout.values)[0] == (uint32_t)(n - h.null_count);
            } else {
              bool is_max = op == LADLE_REDUCE_MAX;
              long double best = 0;
              int64_t nums = 0, valid = 0;
              for (int64_t i = 0; i < n; i++) {
                if (!valid_at(&h, i)) continue;
                valid++;
                long double x = value_ld(&h, i);
                if (isnan(x)) continue;
                if (nums++ == 0 || (is_max ? x > best : x < best)) best = x;
              }
              ok = ok && ladle_dtype_equal(hout.type, h.type);
              if (ok && valid == 0) {
                ok = hout.null_count == 1 && !valid_at(&hout, 0);
              } else if (ok) {
                long double got = value_ld(&hout, 0);
                ok = hout.null_count == 0 && (nums == 0 ? isnan(got) : got == best);
              }
            }
            if (!ok) {
              fprintf(stderr, "  [%s] %s: wrong answer for %s\n", s->be->name, what,
                      op == LADLE_REDUCE_MIN   ? "min"
                      : op == LADLE_REDUCE_MAX ? "max"
                                               : "count");
              failures_++;
            }
            ladle_column_release(&hout);
          }
          ladle_column_release(&out);
        }
        ladle_column_release(&d);
        ladle_column_release(&h);
      }
  }
}

/* Row i (row 0 of a one-row side) of a op b by the reference: comparisons
 * with NaN equal to NaN and above every number; +, -, * wrapping for
 * integers, in the type's own precision for floats, one float minus many as
 * -(b - a) (Polars' order). Writes the output value's bytes to o. */
static void ref_binary(int op, const ladle_column *a, const ladle_column *b, int64_t i, int64_t n,
                       uint8_t *o) {
  int64_t ia = a->length == 1 ? 0 : i, ib = b->length == 1 ? 0 : i;
  ladle_type_id id = a->type.id;
  if (op >= LADLE_OP_EQ && op <= LADLE_OP_GE) {
    long double x = value_ld(a, ia), y = value_ld(b, ib);
    bool xn = isnan(x), yn = isnan(y);
    bool eq = x == y || (xn && yn), lt = x < y || (!xn && yn), gt = y < x || (!yn && xn);
    bool r = op == LADLE_OP_EQ   ? eq
             : op == LADLE_OP_NE ? !eq
             : op == LADLE_OP_LT ? lt
             : op == LADLE_OP_LE ? !gt
             : op == LADLE_OP_GT ? gt
                                 : !lt;
    o[0] = r;
    return;
  }
  if (id == LADLE_TYPE_FLOAT64 || id == LADLE_TYPE_FLOAT32) {
    bool neg = op == LADLE_OP_SUB && a->length == 1 && n > 1;
    if (id == LADLE_TYPE_FLOAT64) {
      double x = ((const double *)a->values)[ia], y = ((const double *)b->values)[ib];
      double r = op == LADLE_OP_ADD ? x + y : op == LADLE_OP_MUL ? x * y : neg ? -(y - x) : x - y;
      memcpy(o, &r, 8);
    } else {
      float x = ((const float *)a->values)[ia], y = ((const float *)b->values)[ib];
      float r = op == LADLE_OP_ADD ? x + y : op == LADLE_OP_MUL ? x * y : neg ? -(y - x) : x - y;
      memcpy(o, &r, 4);
    }
    return;
  }
  uint64_t x = (uint64_t)(int64_t)value_ld(a, ia), y = (uint64_t)(int64_t)value_ld(b, ib);
  if (ladle_type_phys(id) == LADLE_PHYS_U64) {
    x = (uint64_t)value_ld(a, ia);
    y = (uint64_t)value_ld(b, ib);
  }
  uint64_t r = op == LADLE_OP_ADD ? x + y : op == LADLE_OP_SUB ? x - y : x * y;
  if (op == LADLE_OP_MOD || op == LADLE_OP_FLOOR_DIV) {
    /* floored, as Polars: the remainder takes the divisor's sign; by -1 the
     * quotient wraps at the type's minimum; by 0 null (the caller's) */
    uint64_t q = 0;
    r = 0;
    if (y != 0 && !ladle_type_is_signed(id)) {
      q = x / y;
      r = x % y;
    } else if (y != 0 && (int64_t)y == -1) {
      q = 0 - x;
    } else if (y != 0) {
      int64_t xs = (int64_t)x, ys = (int64_t)y, qs = xs / ys, rs = xs % ys;
      if (rs != 0 && ((rs < 0) != (ys < 0))) {
        qs--;
        rs += ys;
      }
      q = (uint64_t)qs;
      r = (uint64_t)rs;
    }
    if (op == LADLE_OP_FLOOR_DIV) r = q;
  }
  memcpy(o, &r, ladle_type_width(id)); /* little-endian: the low bytes */
}

/* Integer columns made to hold the cases % and // turn on: every 7th value
 * of the divisor 0, every 11th all ones (-1 signed), every 13th of the
 * dividend the type's minimum (signed) or top bit. */
static void divisor_cases(ladle_column *a, ladle_column *b) {
  size_t w = ladle_type_width(a->type.id);
  if (!ladle_type_is_integer(a->type.id)) return;
  for (int64_t i = 0; i < b->length; i++) {
    uint8_t *v = (uint8_t *)b->values + (size_t)i * w;
    if (i % 7 == 3) memset(v, 0, w);
    if (i % 11 == 5) memset(v, 0xff, w);
  }
  for (int64_t i = 0; i < a->length; i++) {
    uint8_t *v = (uint8_t *)a->values + (size_t)i * w;
    if (i % 13 == 2) {
      memset(v, 0, w);
      v[w - 1] = 0x80;
    }
  }
}

/* binary: comparisons of every fixed-width type, +, -, * of the numeric ones,
 * % and // of the integers (by 0: null), Kleene and/or of Booleans; column
 * by column, and by a one-value host column (a literal) on either side. */
static void check_binary(suite *s) {
  static const int OPS[] = {LADLE_OP_EQ,  LADLE_OP_NE,  LADLE_OP_LT,        LADLE_OP_LE,
                            LADLE_OP_GT,  LADLE_OP_GE,  LADLE_OP_ADD,       LADLE_OP_SUB,
                            LADLE_OP_MUL, LADLE_OP_MOD, LADLE_OP_FLOOR_DIV, LADLE_OP_AND,
                            LADLE_OP_OR};
  int64_t len[16], nl = lengths(s, len);
  for (int t = 0; t < NTYPES; t++) {
    ladle_type_id id = TYPES[t];
    if (!ladle_reduce_extreme_type(id)) continue;
    for (int64_t li = 0; li < nl; li++)
      for (int shape = 0; shape < 3; shape++) { /* both columns, b one value, a one value */
        int64_t n = len[li];
        int ni = (int)((li + (int64_t)shape) % 3);
        ladle_column ha = random_column(id, shape == 2 ? 1 : n, NULLS[ni]);
        ladle_column hb = random_column(id, shape == 1 ? 1 : n, NULLS[(ni + 1) % 3]);
        if (shape == 2 && n == 0) n = 0;
        divisor_cases(&ha, &hb);
        ladle_column da, db;
        char what[96];
        snprintf(what, sizeof what, "binary of %s[%lld] shape=%d", tname(id), (long long)n, shape);
        bool up_a = shape == 2 || up(s, &ha, &da, what), up_b = shape == 1 || up(s, &hb, &db, what);
        for (size_t oi = 0; up_a && up_b && oi < sizeof OPS / sizeof OPS[0]; oi++) {
          int op = OPS[oi];
          bool cmp = op >= LADLE_OP_EQ && op <= LADLE_OP_GE;
          bool logic = op == LADLE_OP_AND || op == LADLE_OP_OR;
          if (logic != (id == LADLE_TYPE_BOOL) && !cmp) continue;
          if (!cmp && !logic && !ladle_type_is_numeric(id)) continue;
          bool divs = op == LADLE_OP_MOD || op == LADLE_OP_FLOOR_DIV;
          if (divs && !ladle_type_is_integer(id)) continue;
          ladle_dtype ot = cmp || logic ? ladle_dtype_make(LADLE_TYPE_BOOL) : dtype_of(id);
          ladle_column out, hout;
          ladle_status st = s->be->binary(&s->ctx, op, shape == 2 ? &ha : &da,
                                          shape == 1 ? &hb : &db, ot, &out, &err_);
          char w2[128];
          snprintf(w2, sizeof w2, "%s op=%d", what, op);
          if (!ran(s, st, w2)) continue;
          if (down(s, &out, &hout, w2)) {
            int64_t rows = shape == 2 ? hb.length : ha.length;
            bool ok = hout.length == rows && ladle_dtype_equal(hout.type, ot);
            size_t w = ladle_type_width(ot.id);
            for (int64_t i = 0; ok && i < rows; i++) {
              int64_t ia = ha.length == 1 ? 0 : i, ib = hb.length == 1 ? 0 : i;
              bool va = valid_at(&ha, ia), vb = valid_at(&hb, ib), valid;
              uint8_t want[8] = {0};
              if (logic) {
                bool x = va && ((const uint8_t *)ha.values)[ia],
                     y = vb && ((const uint8_t *)hb.values)[ib];
                bool and_ = op == LADLE_OP_AND;
                valid = and_ ? (va && vb) || (va && !x) || (vb && !y) : (va && vb) || x || y;
                want[0] = and_ ? x && y : x || y;
              } else {
                valid = va && vb && !(divs && value_ld(&hb, ib) == 0);
                if (valid) ref_binary(op, &ha, &hb, i, rows, want);
              }
              const uint8_t *got = (const uint8_t *)hout.values + (size_t)i * w;
              if (valid_at(&hout, i) != valid) {
                ok = false;
              } else if (valid && memcmp(got, want, w) != 0) {
                /* a NaN is a NaN whatever its sign and payload (a GPU writes the
                 * canonical one) */
                double g = ot.id == LADLE_TYPE_FLOAT32   ? (double)*(const float *)got
                           : ot.id == LADLE_TYPE_FLOAT64 ? *(const double *)got
                                                         : 0;
                double e = ot.id == LADLE_TYPE_FLOAT32   ? (double)*(const float *)want
                           : ot.id == LADLE_TYPE_FLOAT64 ? *(const double *)want
                                                         : 0;
                ok = ladle_type_is_float(ot.id) && isnan(g) && isnan(e);
              }
            }
            if (ok && hout.validity != NULL &&
                hout.null_count != ladle_bitmap_count_unset(hout.validity, rows))
              ok = false;
            if (!ok) {
              fprintf(stderr, "  [%s] %s: wrong answer\n", s->be->name, w2);
              failures_++;
            }
            ladle_column_release(&hout);
          }
          ladle_column_release(&out);
        }
        if (shape != 2 && up_a) ladle_column_release(&da);
        if (shape != 1 && up_b) ladle_column_release(&db);
        ladle_column_release(&ha);
        ladle_column_release(&hb);
      }
  }
}

/* Bad input: a clean error, never a crash. */
/* Row programs (eval_program) against the same operations run one by one
 * through the table's binary kernel, which check_binary holds to a
 * reference: comparisons and Kleene logic into a mask, and arithmetic with a
 * constant on either side (one float minus many is Polars' -(b - a)). */
static void check_program(suite *s) {
  if (s->be->eval_program == NULL) {
    if (s->strict) {
      fprintf(stderr, "  [%s] no eval_program\n", s->be->name);
      failures_++;
    }
    return;
  }
  static const ladle_type_id IDS[] = {LADLE_TYPE_INT8,    LADLE_TYPE_INT32,  LADLE_TYPE_INT64,
                                      LADLE_TYPE_UINT16,  LADLE_TYPE_UINT64, LADLE_TYPE_FLOAT32,
                                      LADLE_TYPE_FLOAT64, LADLE_TYPE_DATE,   LADLE_TYPE_DATETIME};
  ladle_dtype bt = ladle_dtype_make(LADLE_TYPE_BOOL);
  int64_t len[16], nl = lengths(s, len);
  for (size_t t = 0; t < sizeof IDS / sizeof IDS[0]; t++) {
    ladle_type_id id = IDS[t];
    ladle_dtype dt = dtype_of(id);
    bool num = ladle_type_is_numeric(id);
    for (int64_t li = 0; li < nl; li++) {
      int64_t n = len[li];
      if (n == 0) continue; /* a program's rows come from its columns */
      ladle_column h[3] = {random_column(id, n, NULLS[li % 3]), random_column(id, n, 3),
                           random_column(LADLE_TYPE_BOOL, n, NULLS[(li + 1) % 3])};
      divisor_cases(&h[0], &h[1]);
      ladle_column c = random_column(id, 1, 0), cnull = random_column(id, 1, 1);
      ladle_column d[3];
      char what[96];
      snprintf(what, sizeof what, "program over %s[%lld]", tname(id), (long long)n);
      int up_ok = 0;
      for (int k = 0; k < 3; k++) up_ok += up(s, &h[k], &d[k], what);
      for (int prog = 0; up_ok == 3 && prog < 14; prog++) {
        if (prog == 13 && !ladle_type_is_integer(id)) continue;
        if ((prog == 1 || prog == 3) && !num) continue;
        if (prog >= 7 && prog < 12 && id != LADLE_TYPE_DATE) continue; /* a Date's fields */
        if (prog == 5 && !ladle_type_is_float(id)) continue;
        if (prog == 6 && id == LADLE_TYPE_DATETIME) continue; /* one temporal type is enough */
        ladle_program p;
        memset(&p, 0, sizeof p);
#define INS(code_, op_, a_, b_, t_, v_) \
  p.ins[p.n++] = (ladle_pinstr) { LADLE_P_##code_, LADLE_OP_##op_, a_, b_, t_, v_, 0 }
        if (prog == 0) { /* (x > c & x <= y) | b */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(COL, ADD, 1, 0, dt, NULL);
          INS(CONST, ADD, 0, 0, dt, &c);
          INS(BINARY, GT, 0, 2, bt, NULL);
          INS(BINARY, LE, 0, 1, bt, NULL);
          INS(COL, ADD, 2, 0, bt, NULL);
          INS(BINARY, AND, 3, 4, bt, NULL);
          INS(BINARY, OR, 6, 5, bt, NULL);
        } else if (prog == 1) { /* (c - (x * c + y)) - x */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(COL, ADD, 1, 0, dt, NULL);
          INS(CONST, ADD, 0, 0, dt, &c);
          INS(BINARY, MUL, 0, 2, dt, NULL);
          INS(BINARY, ADD, 3, 1, dt, NULL);
          INS(BINARY, SUB, 2, 4, dt, NULL);
          INS(BINARY, SUB, 5, 0, dt, NULL);
        } else if (prog == 2) { /* x == null: all null; and b, as Kleene's and of null and false */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(CONST, ADD, 0, 0, dt, &cnull);
          INS(BINARY, EQ, 0, 1, bt, NULL);
          INS(COL, ADD, 2, 0, bt, NULL);
          INS(BINARY, AND, 2, 3, bt, NULL);
        } else if (prog == 3) { /* abs(-fill_null(x, y)) as Float64 */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(COL, ADD, 1, 0, dt, NULL);
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_FILL_NULL, 0, 1, dt, NULL, 0};
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_NEG, 2, 2, dt, NULL, 0};
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_ABS, 3, 3, dt, NULL, 0};
          p.ins[p.n++] =
              (ladle_pinstr){LADLE_P_CAST, 0, 4, 4, ladle_dtype_make(LADLE_TYPE_FLOAT64), NULL, 0};
        } else if (prog == 4) { /* !is_null(x) | (is_not_null(y) & !b) */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(COL, ADD, 1, 0, dt, NULL);
          INS(COL, ADD, 2, 0, bt, NULL);
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_IS_NULL, 0, 0, bt, NULL, 0};
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_NOT, 3, 3, bt, NULL, 0};
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_IS_NOT_NULL, 1, 1, bt, NULL, 0};
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_NOT, 2, 2, bt, NULL, 0};
          INS(BINARY, AND, 5, 6, bt, NULL);
          INS(BINARY, OR, 4, 7, bt, NULL);
        } else if (prog == 13) { /* (x % y) // c - x // y: integers, some divisors 0 */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(COL, ADD, 1, 0, dt, NULL);
          INS(CONST, ADD, 0, 0, dt, &c);
          INS(BINARY, MOD, 0, 1, dt, NULL);
          INS(BINARY, FLOOR_DIV, 3, 2, dt, NULL);
          INS(BINARY, FLOOR_DIV, 0, 1, dt, NULL);
          INS(BINARY, SUB, 4, 5, dt, NULL);
        } else if (prog == 12) { /* when(x > c).then(x).when(b).then(y).otherwise(null) */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(COL, ADD, 1, 0, dt, NULL);
          INS(CONST, ADD, 0, 0, dt, &c);
          INS(BINARY, GT, 0, 2, bt, NULL);
          INS(COL, ADD, 2, 0, bt, NULL);
          INS(CONST, ADD, 0, 0, dt, &cnull);
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_IF, 0, 4, 1, dt, NULL, 5};
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_IF, 0, 3, 0, dt, NULL, 6};
        } else if (prog >= 7) { /* a calendar field of x (random days: some out of range) */
          static const struct {
            ladle_func f;
            ladle_type_id t;
          } F[] = {{LADLE_FN_DT_YEAR, LADLE_TYPE_INT32},
                   {LADLE_FN_DT_MONTH, LADLE_TYPE_INT8},
                   {LADLE_FN_DT_DAY, LADLE_TYPE_INT8},
                   {LADLE_FN_DT_WEEKDAY, LADLE_TYPE_INT8},
                   {LADLE_FN_DT_ORDINAL_DAY, LADLE_TYPE_INT16}};
          INS(COL, ADD, 0, 0, dt, NULL);
          p.ins[p.n++] =
              (ladle_pinstr){LADLE_P_FUNC, F[prog - 7].f, 0, 0, dtype_of(F[prog - 7].t), NULL, 0};
        } else if (prog == 6) { /* y where x > c and b, else null */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(COL, ADD, 1, 0, dt, NULL);
          INS(CONST, ADD, 0, 0, dt, &c);
          INS(BINARY, GT, 0, 2, bt, NULL);
          INS(COL, ADD, 2, 0, bt, NULL);
          INS(BINARY, AND, 3, 4, bt, NULL);
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_WHERE, 0, 5, 1, dt, NULL, 0};
        } else { /* is_nan(x / c) | (x / y > c) with floats: a division by one value
                    through its reciprocal */
          INS(COL, ADD, 0, 0, dt, NULL);
          INS(COL, ADD, 1, 0, dt, NULL);
          INS(CONST, ADD, 0, 0, dt, &c);
          INS(BINARY, TRUE_DIV, 0, 2, dt, NULL);
          p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_IS_NAN, 3, 3, bt, NULL, 0};
          INS(BINARY, TRUE_DIV, 0, 1, dt, NULL);
          INS(BINARY, GT, 5, 2, bt, NULL);
          INS(BINARY, OR, 4, 6, bt, NULL);
        }
#undef INS
        char w2[128];
        snprintf(w2, sizeof w2, "%s program %d", what, prog);
        ladle_column got;
        ladle_status st = s->be->eval_program(&s->ctx, &p, d, 3, &got, &err_);
        if (!ran(s, st, w2)) continue;
        /* the reference: the CPU's program over the host columns (node by
         * node through its binary, func and cast kernels) */
        ladle_kctx hk;
        memset(&hk, 0, sizeof hk);
        ladle_column ref, hg;
        bool ok = ran(s, ladle_backend_cpu()->eval_program(&hk, &p, h, 3, &ref, &err_), w2);
        if (ok && down(s, &got, &hg, w2)) {
          if (!same_column(w2, &hg, &ref)) failures_++;
          ladle_column_release(&hg);
        }
        /* its sum and count without a column: those of the column it makes */
        ladle_dtype pt = p.ins[p.n - 1].type;
        for (int r = 0; ok && s->be->reduce_program != NULL && r < 2; r++) {
          ladle_reduce_op rop = r == 0 ? LADLE_REDUCE_SUM : LADLE_REDUCE_COUNT;
          if (rop == LADLE_REDUCE_SUM && !ladle_type_is_numeric(pt.id) && pt.id != LADLE_TYPE_BOOL)
            continue;
          ladle_column a, b, ha, hb;
          char w3[160];
          snprintf(w3, sizeof w3, "%s reduce %d", w2, (int)rop);
          if (!ran(s, s->be->reduce_program(&s->ctx, rop, &p, d, 3, &a, &err_), w3)) continue;
          if (ran(s, s->be->reduce(&s->ctx, rop, &got, &b, &err_), w3)) {
            if (down(s, &a, &ha, w3)) {
              if (down(s, &b, &hb, w3)) {
                if (!same_column(w3, &ha, &hb)) failures_++;
                ladle_column_release(&hb);
              }
              ladle_column_release(&ha);
            }
            ladle_column_release(&b);
          }
          ladle_column_release(&a);
        }
        if (ok) ladle_column_release(&ref);
        ladle_column_release(&got);
      }
      for (int k = 0; k < up_ok; k++) ladle_column_release(&d[k]);
      for (int k = 0; k < 3; k++) ladle_column_release(&h[k]);
      ladle_column_release(&c);
      ladle_column_release(&cnull);
    }
  }
  /* an operand after its instruction is an error, not a read past the values */
  ladle_column h = random_column(LADLE_TYPE_INT64, 10, 0), d;
  if (up(s, &h, &d, "program errors")) {
    ladle_program p;
    memset(&p, 0, sizeof p);
    ladle_dtype it = ladle_dtype_make(LADLE_TYPE_INT64);
    p.ins[p.n++] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, it, NULL, 0};
    p.ins[p.n++] = (ladle_pinstr){LADLE_P_BINARY, LADLE_OP_ADD, 0, 1, it, NULL, 0};
    ladle_column out;
    CHECK(s->be->eval_program(&s->ctx, &p, &d, 1, &out, &err_) == LADLE_EINVAL);
    p.ins[1].a = 5;
    CHECK(s->be->eval_program(&s->ctx, &p, &d, 1, &out, &err_) == LADLE_EINVAL);
    ladle_column_release(&d);
  }
  ladle_column_release(&h);
}

/* ----------------------------------------------------------- group-by */

/* Keys with few distinct values: kind 0 Int32 in [0, m), 1 Float64 among
 * 0.0, -0.0, NaN, 1.5, -2.0 and inf, 2 String among six (empty and é
 * included), 3 Boolean; about one in three null when nulls. */
static ladle_column few_keys(int kind, int64_t n, int64_t m, bool nulls) {
  static const char *STRS[] = {"", "a", "kiwi", "\xc3\xa9t\xc3\xa9", "apple", "a much longer key"};
  ladle_type_id ids[] = {LADLE_TYPE_INT32, LADLE_TYPE_FLOAT64, LADLE_TYPE_STRING, LADLE_TYPE_BOOL};
  ladle_column c;
  memset(&c, 0, sizeof c);
  if (ladle_column_alloc(dtype_of(ids[kind]), n, nulls, kind == 2 ? n * 20 : 0, &c, &err_) !=
      LADLE_OK) {
    failures_++;
    return c;
  }
  static const double F[] = {0.0, -0.0, NAN, 1.5, -2.0, INFINITY};
  int64_t at = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = test_rand();
    if (kind == 0) {
      LADLE_COL_MUT(&c, int32_t)[i] = (int32_t)(r % (uint64_t)(m < 1 ? 1 : m));
    } else if (kind == 1) {
      LADLE_COL_MUT(&c, double)[i] = F[r % 6];
    } else if (kind == 2) {
      const char *k = STRS[r % 6];
      size_t len = strlen(k);
      memcpy(LADLE_COL_CHARS_MUT(&c) + at, k, len);
      LADLE_COL_MUT(&c, int64_t)[i] = at;
      at += (int64_t)len;
      LADLE_COL_MUT(&c, int64_t)[i + 1] = at;
    } else {
      LADLE_COL_MUT(&c, uint8_t)[i] = (uint8_t)(r & 1);
    }
    if (nulls && test_rand() % 3 == 0) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), i, false);
  }
  if (kind == 2 && n == 0) LADLE_COL_MUT(&c, int64_t)[0] = 0;
  if (nulls) ladle_column_finish_nulls(&c);
  return c;
}

/* Values whose sums are exact in any order: floats hold small integers
 * (NaN, infinities and -0.0 among them); integers any bits (sums wrap). */
static ladle_column exact_values(ladle_type_id id, int64_t n, int null_every) {
  ladle_column c = random_column(id, n, null_every);
  for (int64_t i = 0; i < n && ladle_type_is_float(id); i++) {
    uint64_t r = test_rand();
    double d = (double)(int64_t)(r % 17) - 8.0;
    if (r % 97 == 0) d = NAN;
    if (r % 89 == 0) d = -0.0;
    if (r % 1009 == 0) d = INFINITY;
    if (id == LADLE_TYPE_FLOAT32)
      LADLE_COL_MUT(&c, float)[i] = (float)d;
    else
      LADLE_COL_MUT(&c, double)[i] = d;
  }
  return c;
}

/* the four columns of g on the host, into h (ids, first, rows, offsets) */
static bool groups_down(suite *s, const ladle_dgroups *g, ladle_column *h, const char *what) {
  const ladle_column *c[4] = {&g->ids, &g->first, &g->rows, &g->offsets};
  for (int k = 0; k < 4; k++)
    if (!down(s, c[k], &h[k], what)) {
      for (int j = 0; j < k; j++) ladle_column_release(&h[j]);
      return false;
    }
  return true;
}

static void check_groups(suite *s) {
  if (s->be->group_keys == NULL || s->be->grouped_reduce == NULL) {
    if (s->strict) {
      fprintf(stderr, "  [%s] no group_keys/grouped_reduce\n", s->be->name);
      failures_++;
    }
    return;
  }
  static const ladle_type_id VALS[] = {LADLE_TYPE_BOOL,    LADLE_TYPE_INT8,   LADLE_TYPE_INT32,
                                       LADLE_TYPE_INT64,   LADLE_TYPE_UINT16, LADLE_TYPE_FLOAT32,
                                       LADLE_TYPE_FLOAT64, LADLE_TYPE_DATE};
  const ladle_backend *cpu = ladle_backend_cpu();
  ladle_kctx hk;
  memset(&hk, 0, sizeof hk);
  int64_t len[16], nl = lengths(s, len);
  for (int64_t li = 0; li < nl; li++)
    for (int set = 0; set < 6; set++) {
      int64_t n = len[li];
      /* key sets: few Int32, Float64 specials, String, all unique Int64,
       * String + Int32 + Boolean, Int32 of about n / 3 values */
      ladle_column h[3];
      size_t nk = 1;
      if (set == 0) h[0] = few_keys(0, n, 7, true);
      if (set == 1) h[0] = few_keys(1, n, 0, true);
      if (set == 2) h[0] = few_keys(2, n, 0, true);
      if (set == 3) h[0] = random_column(LADLE_TYPE_INT64, n, 0);
      if (set == 4) {
        h[0] = few_keys(2, n, 0, false);
        h[1] = few_keys(0, n, 3, true);
        h[2] = few_keys(3, n, 0, true);
        nk = 3;
      }
      if (set == 5) h[0] = few_keys(0, n, n / 3 + 1, false);
      char what[96];
      snprintf(what, sizeof what, "group_keys set %d [%lld rows]", set, (long long)n);
      ladle_column d[3];
      size_t up_ok = 0;
      while (up_ok < nk && up(s, &h[up_ok], &d[up_ok], what)) up_ok++;
      /* every other case groups a selection of the rows (a filter's kept rows) */
      bool use_sel = (set + li) % 2 == 1;
      ladle_column hsel, dsel;
      memset(&hsel, 0, sizeof hsel);
      memset(&dsel, 0, sizeof dsel);
      if (use_sel) {
        CHECK_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT64), n, false, 0, &hsel, &err_));
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
          if (test_rand() % 3 != 0) LADLE_COL_MUT(&hsel, int64_t)[m++] = i;
        hsel.length = m;
        use_sel = up(s, &hsel, &dsel, what);
      }
      ladle_dgroups g, ref;
      memset(&g, 0, sizeof g);
      bool got = up_ok == nk &&
                 ran(s, s->be->group_keys(&s->ctx, d, nk, use_sel ? &dsel : NULL, &g, &err_), what);
      bool have_ref =
          got && ran(s, cpu->group_keys(&hk, h, nk, use_sel ? &hsel : NULL, &ref, &err_), what);
      if (have_ref) {
        /* numbered by first row and rows in order: one answer, bit for bit */
        ladle_column hg[4];
        const ladle_column *rc[4] = {&ref.ids, &ref.first, &ref.rows, &ref.offsets};
        static const char *PART[] = {"ids", "first", "rows", "offsets"};
        CHECK_EQ_I(g.ngroups, ref.ngroups);
        if (g.ngroups == ref.ngroups && groups_down(s, &g, hg, what)) {
          for (int k = 0; k < 4; k++) {
            char w2[128];
            snprintf(w2, sizeof w2, "%s %s", what, PART[k]);
            if (!same_column(w2, &hg[k], rc[k])) failures_++;
            ladle_column_release(&hg[k]);
          }
        }
      }
      /* per value type, each reduction against the CPU's group_by kernel */
      for (size_t v = 0; have_ref && v < sizeof VALS / sizeof VALS[0]; v++) {
        ladle_type_id id = VALS[v];
        ladle_column hv = exact_values(id, n, NULLS[(li + v) % 3]), dv;
        if (!up(s, &hv, &dv, what)) {
          ladle_column_release(&hv);
          continue;
        }
        ladle_program p;
        memset(&p, 0, sizeof p);
        p.n = 1;
        p.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, dtype_of(id), NULL, 0};
        bool num = ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL;
        for (int op = -1; op < (int)LADLE_REDUCE_COUNT_; op++) {
          if ((op == LADLE_REDUCE_SUM || op == LADLE_REDUCE_MEAN) && !num) continue;
          if (op == -1 && v > 0) continue; /* len: once per key set */
          char w2[160];
          snprintf(w2, sizeof w2, "%s grouped %d of %s", what, op, tname(id));
          const ladle_program *pp = op < 0 ? NULL : &p;
          ladle_reduce_op rop = op < 0 ? LADLE_REDUCE_COUNT : (ladle_reduce_op)op;
          ladle_column a, b, ha;
          if (!ran(s, s->be->grouped_reduce(&s->ctx, rop, pp, &dv, 1, &g, &a, &err_), w2)) continue;
          if (ran(s, cpu->grouped_reduce(&hk, rop, pp, &hv, 1, &ref, &b, &err_), w2)) {
            if (down(s, &a, &ha, w2)) {
              bool ok = true;
              if ((op == LADLE_REDUCE_MEAN || op == LADLE_REDUCE_MIN || op == LADLE_REDUCE_MAX) &&
                  ladle_type_is_float(ha.type.id) && ladle_dtype_equal(ha.type, b.type) &&
                  ha.length == b.length) {
                /* a mean: a quotient of the same exact sum, equal to its last bit or
                 * two; min and max: equal values, but of 0.0 and -0.0 in one group
                 * either may come out (Polars does not say which either) */
                for (int64_t i = 0; i < ha.length && ok; i++) {
                  double x = ladle_column_value_f64(&ha, i), y = ladle_column_value_f64(&b, i);
                  ok = valid_at(&ha, i) == valid_at(&b, i) &&
                       (!valid_at(&ha, i) || (isnan(x) && isnan(y)) || x == y ||
                        fabs(x - y) <= 1e-6 * fabs(y));
                }
                if (!ok) fprintf(stderr, "  %s: a mean differs\n", w2);
              } else {
                ok = same_column(w2, &ha, &b);
              }
              if (!ok) failures_++;
              ladle_column_release(&ha);
            }
            ladle_column_release(&b);
          }
          ladle_column_release(&a);
        }
        ladle_column_release(&dv);
        ladle_column_release(&hv);
      }
      if (have_ref) ladle_dgroups_release(&ref);
      if (got) ladle_dgroups_release(&g);
      if (use_sel) ladle_column_release(&dsel);
      ladle_column_release(&hsel);
      for (size_t k = 0; k < up_ok; k++) ladle_column_release(&d[k]);
      for (size_t k = 0; k < nk; k++) ladle_column_release(&h[k]);
    }
}

/* ---------------------------------------------------------------- sort */

static void check_sort(suite *s) {
  if (s->be->sort_perm == NULL) {
    if (s->strict) {
      fprintf(stderr, "  [%s] no sort_perm\n", s->be->name);
      failures_++;
    }
    return;
  }
  const ladle_backend *cpu = ladle_backend_cpu();
  ladle_kctx hk;
  memset(&hk, 0, sizeof hk);
  int64_t len[16], nl = lengths(s, len);
  for (int64_t li = 0; li < nl; li++)
    for (int set = 0; set < 5; set++) {
      int64_t n = len[li];
      ladle_column h[2];
      size_t nk = 1;
      bool desc[2] = {false, false}, last[2] = {false, false};
      if (set == 0) { /* few values: ties kept in row order */
        h[0] = few_keys(0, n, 7, true);
        desc[0] = true;
        last[0] = true;
      }
      if (set == 1) h[0] = random_column(LADLE_TYPE_FLOAT64, n, NULLS[li % 3]);
      if (set == 2) {
        h[0] = few_keys(3, n, 0, true);
        h[1] = random_column(LADLE_TYPE_FLOAT32, n, 3);
        nk = 2;
        desc[0] = true;
        last[1] = true;
      }
      if (set == 3) {
        h[0] = random_column(LADLE_TYPE_UINT16, n, 3);
        desc[0] = true;
      }
      if (set == 4) {
        h[0] = random_column(LADLE_TYPE_DATE, n, 0);
        h[1] = random_column(LADLE_TYPE_INT64, n, 3);
        nk = 2;
        last[0] = true;
        desc[1] = true;
      }
      char what[96];
      snprintf(what, sizeof what, "sort_perm set %d [%lld rows]", set, (long long)n);
      ladle_column d[2];
      size_t up_ok = 0;
      while (up_ok < nk && up(s, &h[up_ok], &d[up_ok], what)) up_ok++;
      ladle_column got, ref;
      if (up_ok == nk && ran(s, s->be->sort_perm(&s->ctx, d, nk, desc, last, &got, &err_), what)) {
        if (ran(s, cpu->sort_perm(&hk, h, nk, desc, last, &ref, &err_), what)) {
          /* stable: one permutation, bit for bit */
          same_down(s, &got, &ref, what);
          ladle_column_release(&ref);
        }
        ladle_column_release(&got);
      }
      for (size_t k = 0; k < up_ok; k++) ladle_column_release(&d[k]);
      for (size_t k = 0; k < nk; k++) ladle_column_release(&h[k]);
    }
}

/* ------------------------------------------------------------- strings */

static void check_strings(suite *s) {
  if (s->be->str_match == NULL || s->be->str_compare == NULL) {
    if (s->strict) {
      fprintf(stderr, "  [%s] no str_match/str_compare\n", s->be->name);
      failures_++;
    }
    return;
  }
  const ladle_backend *cpu = ladle_backend_cpu();
  ladle_kctx hk;
  memset(&hk, 0, sizeof hk);
  /* patterns: empty, one letter, a two-byte letter, a prefix of many rows,
   * longer than every row */
  static const char *PATS[] = {"", "a", "\xc3\xa9", "ab", "abcdefghijklmnopqrstuvwxyz"};
  int64_t len[16], nl = lengths(s, len);
  for (int64_t li = 0; li < nl; li++) {
    int64_t n = len[li];
    ladle_column ha = random_column(LADLE_TYPE_STRING, n, NULLS[li % 3]);
    ladle_column hb = random_column(LADLE_TYPE_STRING, n, NULLS[(li + 1) % 3]);
    /* a third of b's rows a's, so that equal rows occur */
    ladle_column da, db;
    char what[96];
    snprintf(what, sizeof what, "strings [%lld rows]", (long long)n);
    bool ok_a = up(s, &ha, &da, what), ok_b = ok_a && up(s, &hb, &db, what);
    for (int op = LADLE_STR_EQ; ok_b && op <= LADLE_STR_CONTAINS; op++) {
      for (size_t k = 0; k < sizeof PATS / sizeof PATS[0]; k++) {
        char w2[160];
        snprintf(w2, sizeof w2, "%s str_match %d '%s'", what, op, PATS[k]);
        ladle_column got, ref;
        if (!ran(s,
                 s->be->str_match(&s->ctx, (ladle_str_op)op, &da, PATS[k], strlen(PATS[k]), &got,
                                  &err_),
                 w2))
          continue;
        if (ran(s,
                cpu->str_match(&hk, (ladle_str_op)op, &ha, PATS[k], strlen(PATS[k]), &ref, &err_),
                w2)) {
          same_down(s, &got, &ref, w2);
          ladle_column_release(&ref);
        }
        ladle_column_release(&got);
      }
      if (op == LADLE_STR_CONTAINS) { /* pieces in order: "a.*b" and the like */
        static const struct {
          const char *p;
          size_t n;
        } SEQ[] = {{"a\0b", 3}, {"ab\0\0c", 5}, {"\xc3\xa9\0a\0z", 6}, {"\0q", 2}};
        for (size_t k = 0; k < sizeof SEQ / sizeof SEQ[0]; k++) {
          char w2[160];
          snprintf(w2, sizeof w2, "%s contains_seq %zu", what, k);
          ladle_column got, ref;
          if (!ran(s,
                   s->be->str_match(&s->ctx, LADLE_STR_CONTAINS_SEQ, &da, SEQ[k].p, SEQ[k].n, &got,
                                    &err_),
                   w2))
            continue;
          if (ran(s,
                  cpu->str_match(&hk, LADLE_STR_CONTAINS_SEQ, &ha, SEQ[k].p, SEQ[k].n, &ref, &err_),
                  w2)) {
            same_down(s, &got, &ref, w2);
            ladle_column_release(&ref);
          }
          ladle_column_release(&got);
        }
      }
      if (op > LADLE_STR_GE) continue;
      for (int self = 0; self < 2; self++) { /* a with b, and a with itself */
        char w2[160];
        snprintf(w2, sizeof w2, "%s str_compare %d%s", what, op, self ? " (itself)" : "");
        ladle_column got, ref;
        if (!ran(s,
                 s->be->str_compare(&s->ctx, (ladle_str_op)op, &da, self ? &da : &db, &got, &err_),
                 w2))
          continue;
        if (ran(s, cpu->str_compare(&hk, (ladle_str_op)op, &ha, self ? &ha : &hb, &ref, &err_),
                w2)) {
          same_down(s, &got, &ref, w2);
          ladle_column_release(&ref);
        }
        ladle_column_release(&got);
      }
    }
    if (ok_b) ladle_column_release(&db);
    if (ok_a) ladle_column_release(&da);
    ladle_column_release(&ha);
    ladle_column_release(&hb);
  }
}

/* ---------------------------------------------------------------- join */

/* Keys of a join's side of n rows for key set `set` (both sides drawn alike,
 * so that they share values): 0 Int32 among about `m` (nulls), 1 Float64
 * specials (nulls), 2 String (nulls), 3 Int64 from a pool of `m` random
 * values or not among them, 4 String + Int32 + Boolean, 5 two Int32 (the
 * first with nulls; packed into one by their ranges). Returns the keys. */
static size_t join_keys(int set, int64_t n, int64_t m, const int64_t *pool, ladle_column *h) {
  if (set == 5) {
    h[0] = few_keys(0, n, 7, true);
    h[1] = few_keys(0, n, m, false);
    return 2;
  }
  if (set == 0) h[0] = few_keys(0, n, m, true);
  if (set == 1) h[0] = few_keys(1, n, 0, true);
  if (set == 2) h[0] = few_keys(2, n, 0, true);
  if (set == 3) {
    h[0] = random_column(LADLE_TYPE_INT64, n, 0);
    for (int64_t i = 0; i < n; i++)
      if (test_rand() % 4 != 0) LADLE_COL_MUT(&h[0], int64_t)[i] = pool[test_rand() % (uint64_t)m];
  }
  if (set == 4) {
    h[0] = few_keys(2, n, 0, false);
    h[1] = few_keys(0, n, 3, true);
    h[2] = few_keys(3, n, 0, true);
    return 3;
  }
  return 1;
}

/* Both sides of join case (length index li, key set `set`): the left nl =
 * len[li] rows, the right about a third (one of the other lengths for the
 * small ones), drawn from one pool of about nl / 2 values. Returns the keys
 * per side, 0 when out of memory (a failure counted). */
static size_t join_sides(const int64_t *len, int64_t nlen, int64_t li, int set, ladle_column *hl,
                         ladle_column *hr) {
  int64_t nl = len[li], nr = nl > 1000 ? nl / 3 + 1 : len[(li + 3) % nlen] % 2000;
  int64_t m = nl / 2 + 1;
  int64_t *pool = malloc((size_t)m * sizeof *pool);
  if (pool == NULL) {
    failures_++;
    return 0;
  }
  for (int64_t i = 0; i < m; i++) pool[i] = (int64_t)test_rand();
  size_t nk = join_keys(set, nl, m, pool, hl);
  join_keys(set, nr, m, pool, hr);
  free(pool);
  return nk;
}

static void check_join(suite *s) {
  if (s->be->join_rows == NULL) {
    if (s->strict) {
      fprintf(stderr, "  [%s] no join_rows\n", s->be->name);
      failures_++;
    }
    return;
  }
  static const ladle_join_type HOW[] = {LADLE_JOIN_INNER, LADLE_JOIN_LEFT, LADLE_JOIN_RIGHT,
                                        LADLE_JOIN_FULL,  LADLE_JOIN_SEMI, LADLE_JOIN_ANTI,
                                        LADLE_JOIN_CROSS};
  const ladle_backend *cpu = ladle_backend_cpu();
  ladle_kctx hk;
  memset(&hk, 0, sizeof hk);
  int64_t len[16], nlen = lengths(s, len);
  for (int64_t li = 0; li < nlen; li++)
    for (int set = 0; set < 5; set++) {
      /* few distinct keys only where the output stays small */
      if ((set == 1 || set == 2 || set == 4) && len[li] > 4099) continue;
      ladle_column hl[3], hr[3], dl[3], dr[3];
      size_t nk = join_sides(len, nlen, li, set, hl, hr);
      if (nk == 0) return;
      int64_t nl = hl[0].length, nr = hr[0].length;
      char what[96];
      snprintf(what, sizeof what, "join_rows set %d [%lld x %lld rows]", set, (long long)nl,
               (long long)nr);
      size_t upl = 0, upr = 0;
      while (upl < nk && up(s, &hl[upl], &dl[upl], what)) upl++;
      while (upr < nk && up(s, &hr[upr], &dr[upr], what)) upr++;
      for (size_t hw = 0; upl == nk && upr == nk && hw < sizeof HOW / sizeof HOW[0]; hw++) {
        ladle_join_type how = HOW[hw];
        if (how == LADLE_JOIN_CROSS && (set != 0 || nl > 1000)) continue;
        for (int ne = 0; ne < 2; ne++) {
          /* null keys (a third of the rows) all match each other: small sides only */
          if ((how == LADLE_JOIN_CROSS || nl > 4099) && ne) continue;
          size_t k = how == LADLE_JOIN_CROSS ? 0 : nk;
          char w2[160];
          snprintf(w2, sizeof w2, "%s how %d%s", what, (int)how, ne ? " nulls equal" : "");
          ladle_djoin got, ref;
          if (!ran(s, s->be->join_rows(&s->ctx, dl, dr, k, nl, nr, how, ne, &got, &err_), w2))
            continue;
          if (ran(s, cpu->join_rows(&hk, hl, hr, k, nl, nr, how, ne, &ref, &err_), w2)) {
            /* pairs in one order (by left row, matches by right row): bit for bit */
            CHECK_EQ_I(got.n, ref.n);
            bool two = how != LADLE_JOIN_SEMI && how != LADLE_JOIN_ANTI;
            if (got.n == ref.n) same_down(s, &got.left, &ref.left, w2);
            if (got.n == ref.n && two) same_down(s, &got.right, &ref.right, w2);
            if (!two && got.right.owners[1] != NULL) {
              fprintf(stderr, "  %s: a semi/anti join gave right rows\n", w2);
              failures_++;
            }
            ladle_djoin_release(&ref);
          }
          ladle_djoin_release(&got);
        }
      }
      for (size_t i = 0; i < upl; i++) ladle_column_release(&dl[i]);
      for (size_t i = 0; i < upr; i++) ladle_column_release(&dr[i]);
      for (size_t i = 0; i < nk; i++) {
        ladle_column_release(&hl[i]);
        ladle_column_release(&hr[i]);
      }
    }
}

/* join_build / join_probe (host arrays, a host backend's): the right keys
 * built once, the left keys probed in morsels of `step` rows, the morsels'
 * pairs (probe rows offset by the morsel's start) one after the other equal
 * to join_rows' pairs for INNER, LEFT, SEMI and ANTI, bit for bit: by left
 * row, each one's matches by right row. */
static void probe_morsels(suite *s, const ladle_column *hl, const ladle_column *hr, size_t nk,
                          ladle_join_type how, bool ne, int64_t step, const ladle_djoin *ref,
                          const char *what) {
  int64_t nl = hl[0].length;
  ladle_dtype pt[3];
  for (size_t k = 0; k < nk; k++) pt[k] = hl[k].type;
  ladle_join_ht *ht = NULL;
  if (!ran(s, s->be->join_build(&s->ctx, hr, nk, pt, ne, &ht, &err_), what)) return;
  bool two = how != LADLE_JOIN_SEMI && how != LADLE_JOIN_ANTI;
  const int64_t *rl = (const int64_t *)ref->left.values;
  const int64_t *rr = two ? (const int64_t *)ref->right.values : NULL;
  int64_t at = 0; /* pairs compared so far */
  bool bad = false;
  for (int64_t a = 0; a < nl && !bad; a += step) {
    int64_t len = LADLE_MIN(step, nl - a);
    ladle_column m[3];
    size_t sliced = 0;
    while (sliced < nk && ladle_column_slice(&hl[sliced], a, len, &m[sliced], &err_) == LADLE_OK)
      sliced++;
    ladle_join_pairs p = {0, NULL, NULL, NULL, false};
    if (sliced == nk && ran(s, s->be->join_probe(&s->ctx, ht, m, how, &p, &err_), what)) {
      if (p.runs != NULL || (two && p.n > 0 && p.right == NULL) || (!two && p.right != NULL) ||
          (p.n > 0 && p.left == NULL)) {
        fprintf(stderr, "  %s: join_probe gave pairs of the wrong shape\n", what);
        bad = true;
      }
      for (int64_t i = 0; p.left_identity && i < p.n && !bad; i++)
        if (p.left[i] != i) {
          fprintf(stderr, "  %s: join_probe said identity, row %lld is %lld\n", what, (long long)i,
                  (long long)p.left[i]);
          bad = true;
        }
      for (int64_t i = 0; i < p.n && !bad; i++, at++) {
        if (at >= ref->n || p.left[i] + a != rl[at] || (two && p.right[i] != rr[at])) {
          fprintf(stderr, "  %s: morsel at %lld (of %lld rows), pair %lld differs\n", what,
                  (long long)a, (long long)step, (long long)i);
          bad = true;
        }
      }
    } else {
      bad = true;
    }
    ladle_scratch_free(p.left);
    ladle_scratch_free(p.right);
    for (size_t k = 0; k < sliced; k++) ladle_column_release(&m[k]);
  }
  if (!bad && at != ref->n) {
    fprintf(stderr, "  %s: the morsels gave %lld pairs, join_rows %lld\n", what, (long long)at,
            (long long)ref->n);
    bad = true;
  }
  failures_ += bad;
  s->be->join_ht_free(ht);
}

/* join_probe_mark: the right keys built once, the left keys probed in
 * morsels of `step` rows marking the right rows they meet; the right rows
 * marked (semi: value 1 over zeros) or left unmarked (anti: value 0 over
 * ones) equal to join_rows' rows of the right side semi or anti joined to
 * the left. */
static void probe_marks(suite *s, const ladle_column *hl, const ladle_column *hr, size_t nk,
                        bool anti, bool ne, int64_t step, const ladle_djoin *ref,
                        const char *what) {
  int64_t nl = hl[0].length, nr = hr[0].length;
  ladle_dtype pt[3];
  for (size_t k = 0; k < nk; k++) pt[k] = hl[k].type;
  ladle_join_ht *ht = NULL;
  if (!ran(s, s->be->join_build(&s->ctx, hr, nk, pt, ne, &ht, &err_), what)) return;
  uint8_t *marks = malloc((size_t)LADLE_MAX(nr, 1));
  bool bad = marks == NULL;
  if (marks != NULL) memset(marks, anti ? 1 : 0, (size_t)nr);
  for (int64_t a = 0; a < nl && !bad; a += step) {
    int64_t len = LADLE_MIN(step, nl - a);
    ladle_column m[3];
    size_t sliced = 0;
    while (sliced < nk && ladle_column_slice(&hl[sliced], a, len, &m[sliced], &err_) == LADLE_OK)
      sliced++;
    bad = sliced != nk ||
          !ran(s, s->be->join_probe_mark(&s->ctx, ht, m, anti ? 0 : 1, marks, &err_), what);
    for (size_t k = 0; k < sliced; k++) ladle_column_release(&m[k]);
  }
  const int64_t *rl = (const int64_t *)ref->left.values;
  int64_t at = 0;
  for (int64_t r = 0; r < nr && !bad; r++) {
    bool want = at < ref->n && rl[at] == r;
    at += want;
    if (marks[r] > 1 || (marks[r] == 1) != want) {
      fprintf(stderr, "  %s (marks, morsels of %lld): right row %lld is %d, want %d\n", what,
              (long long)step, (long long)r, marks[r], want);
      bad = true;
    }
  }
  failures_ += bad;
  free(marks);
  s->be->join_ht_free(ht);
}

static void check_join_probe(suite *s) {
  if (s->be->join_build == NULL || s->be->join_probe == NULL || s->be->join_ht_free == NULL)
    return; /* optional: the planner streams no join on such a backend */
  static const ladle_join_type HOW[] = {LADLE_JOIN_INNER, LADLE_JOIN_LEFT, LADLE_JOIN_SEMI,
                                        LADLE_JOIN_ANTI};
  const ladle_backend *cpu = ladle_backend_cpu();
  ladle_kctx hk;
  memset(&hk, 0, sizeof hk);
  int64_t len[16], nlen = lengths(s, len);
  for (int64_t li = 0; li < nlen; li++)
    for (int set = 0; set < 6; set++) {
      if (set != 0 && set != 3 && set != 5 && len[li] > 4099) continue;
      ladle_column hl[3], hr[3];
      size_t nk = join_sides(len, nlen, li, set, hl, hr);
      if (nk == 0) return;
      int64_t nl = hl[0].length, nr = hr[0].length;
      for (size_t hw = 0; hw < sizeof HOW / sizeof HOW[0]; hw++)
        for (int ne = 0; ne < 2; ne++) {
          if (nl > 4099 && ne) continue;
          char what[160];
          snprintf(what, sizeof what, "join_probe set %d [%lld x %lld rows] how %d%s", set,
                   (long long)nl, (long long)nr, (int)HOW[hw], ne ? " nulls equal" : "");
          ladle_djoin ref;
          if (!ran(s, cpu->join_rows(&hk, hl, hr, nk, nl, nr, HOW[hw], ne, &ref, &err_), what))
            continue;
          int64_t steps[] = {LADLE_MAX(nl, 1), 7, 1000};
          for (size_t k = 0; k < 3; k++)
            if (k == 0 || steps[k] < nl)
              probe_morsels(s, hl, hr, nk, HOW[hw], ne, steps[k], &ref, what);
          ladle_djoin_release(&ref);
          /* the mirror: the left side's rows mark the right's */
          bool semi = HOW[hw] == LADLE_JOIN_SEMI, anti = HOW[hw] == LADLE_JOIN_ANTI;
          if ((!semi && !anti) || s->be->join_probe_mark == NULL) continue;
          if (!ran(s, cpu->join_rows(&hk, hr, hl, nk, nr, nl, HOW[hw], ne, &ref, &err_), what))
            continue;
          for (size_t k = 0; k < 3; k++)
            if (k == 0 || steps[k] < nl) probe_marks(s, hl, hr, nk, anti, ne, steps[k], &ref, what);
          ladle_djoin_release(&ref);
        }
      for (size_t i = 0; i < nk; i++) {
        ladle_column_release(&hl[i]);
        ladle_column_release(&hr[i]);
      }
    }
}

/* ---------------------------------------------------------- partitions */

static const int NPARTS[] = {1, 2, 3, 7};

/* Row i's 64-bit key value under the partition hash, as core.h defines it,
 * written out here again (with its constants) so that a backend, or a change
 * to core.h, that hashes differently fails: ranks must agree bit for bit. */
static uint64_t ref_part_value(const ladle_column *c, int64_t i) {
  if (c->type.id == LADLE_TYPE_NULL || !valid_at(c, i)) return 0x13198a2e03707344ULL;
  const void *v = c->values;
  switch (c->type.id) {
    case LADLE_TYPE_BOOL:
      return ((const uint8_t *)v)[i] != 0;
    case LADLE_TYPE_INT8:
      return (uint64_t)(int64_t)((const int8_t *)v)[i];
    case LADLE_TYPE_INT16:
      return (uint64_t)(int64_t)((const int16_t *)v)[i];
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_DATE:
      return (uint64_t)(int64_t)((const int32_t *)v)[i];
    case LADLE_TYPE_INT64:
    case LADLE_TYPE_DATETIME:
    case LADLE_TYPE_DURATION:
    case LADLE_TYPE_TIME:
      return (uint64_t)((const int64_t *)v)[i];
    case LADLE_TYPE_UINT8:
      return ((const uint8_t *)v)[i];
    case LADLE_TYPE_UINT16:
      return ((const uint16_t *)v)[i];
    case LADLE_TYPE_UINT32:
      return ((const uint32_t *)v)[i];
    case LADLE_TYPE_UINT64:
      return ((const uint64_t *)v)[i];
    case LADLE_TYPE_FLOAT32:
    case LADLE_TYPE_FLOAT64: {
      double d =
          c->type.id == LADLE_TYPE_FLOAT32 ? (double)((const float *)v)[i] : ((const double *)v)[i];
      if (isnan(d)) return 0x7ff8000000000000ULL;
      if (d == 0) return 0;
      uint64_t b;
      memcpy(&b, &d, 8);
      return b;
    }
    case LADLE_TYPE_STRING:
    case LADLE_TYPE_BINARY:
      return ladle_hash_bytes(ladle_str_ptr(c, i), (size_t)ladle_str_len(c, i),
                              0x243f6a8885a308d3ULL);
    default: /* DECIMAL, INT128, UINT128 */
      return ladle_hash_bytes((const uint8_t *)v + 16 * i, 16, 0x243f6a8885a308d3ULL);
  }
}

static int ref_hash_part(const ladle_column *keys, size_t nk, int64_t i, int nparts) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (size_t k = 0; k < nk; k++)
    h = ladle_hash_mix((h * 0x9e3779b97f4a7c15ULL) ^ ref_part_value(&keys[k], i));
  return (int)(((h >> 32) * (uint64_t)nparts) >> 32);
}

/* The order of valid values a[i] and b[j] (one type): integers by value,
 * floats with -0.0 equal to 0.0 and NaN equal to NaN, above everything,
 * strings bytewise; the values of other types by their bytes. */
static int ref_value_cmp(const ladle_column *a, int64_t i, const ladle_column *b, int64_t j) {
  ladle_type_id t = a->type.id;
  if (ladle_type_is_varlen(t)) {
    int r = ladle_str_cmp(a, i, b, j);
    return (r > 0) - (r < 0);
  }
  if (ladle_type_is_float(t)) {
    double x = ladle_column_value_f64(a, i), y = ladle_column_value_f64(b, j);
    if (isnan(x) || isnan(y)) return (int)isnan(x) - (int)isnan(y);
    return (x > y) - (x < y);
  }
  if (t == LADLE_TYPE_BOOL) {
    int x = ((const uint8_t *)a->values)[i] != 0, y = ((const uint8_t *)b->values)[j] != 0;
    return x - y;
  }
  if (t == LADLE_TYPE_UINT64) {
    uint64_t x = ((const uint64_t *)a->values)[i], y = ((const uint64_t *)b->values)[j];
    return (x > y) - (x < y);
  }
  if (ladle_type_is_integer(t) || ladle_type_is_temporal(t)) {
    int64_t x = (int64_t)ladle_column_value_f64(a, i), y = (int64_t)ladle_column_value_f64(b, j);
    if (ladle_type_width(t) == 8) { /* exact, not through a double */
      x = ((const int64_t *)a->values)[i];
      y = ((const int64_t *)b->values)[j];
    }
    return (x > y) - (x < y);
  }
  size_t w = ladle_type_width(t);
  int r = memcmp((const uint8_t *)a->values + (int64_t)w * i,
                 (const uint8_t *)b->values + (int64_t)w * j, w);
  return (r > 0) - (r < 0);
}

/* Rows a[i] and b[j] of nk keys in sort order: key by key, nulls first or
 * last (either NULL: all false), values descending or not. */
static int ref_row_cmp(const ladle_column *a, int64_t i, const ladle_column *b, int64_t j,
                       size_t nk, const bool *desc, const bool *last) {
  for (size_t k = 0; k < nk; k++) {
    if (a[k].type.id == LADLE_TYPE_NULL) continue;
    bool va = valid_at(&a[k], i), vb = valid_at(&b[k], j);
    bool nl = last ? last[k] : false;
    if (va != vb) return va == nl ? -1 : 1;
    if (!va) continue;
    int r = ref_value_cmp(&a[k], i, &b[k], j);
    if (desc && desc[k]) r = -r;
    if (r != 0) return r;
  }
  return 0;
}

/* qsort's view of rows of keys: by value (ascending, nulls first), then by row */
static const ladle_column *qkeys_;
static size_t qnk_;
static int q_row_cmp(const void *x, const void *y) {
  int64_t i = *(const int64_t *)x, j = *(const int64_t *)y;
  int r = ref_row_cmp(qkeys_, i, qkeys_, j, qnk_, NULL, NULL);
  return r != 0 ? r : (i > j) - (i < j);
}

/* A partition's output checked for its shape: perm an INT64 column of n
 * rows without nulls, a permutation of 0..n-1, each part's rows ascending,
 * counts >= 0 adding up to n. Returns each row's part (malloc; n entries),
 * or NULL with a failure counted. */
static int *part_shape(suite *s, const char *what, const ladle_column *dperm, int64_t n,
                       const int64_t *counts, int nparts) {
  ladle_column h;
  if (!down(s, dperm, &h, what)) return NULL;
  int *part = malloc((size_t)LADLE_MAX(n, 1) * sizeof *part);
  bool ok = part != NULL;
  if (ok && (h.type.id != LADLE_TYPE_INT64 || h.length != n || h.null_count != 0)) {
    fprintf(stderr, "  %s: perm %s[%lld] with %lld nulls, expected i64[%lld] without\n", what,
            ladle_dtype_name(h.type, NULL, 0), (long long)h.length, (long long)h.null_count,
            (long long)n);
    ok = false;
  }
  int64_t total = 0;
  for (int p = 0; ok && p < nparts; p++) {
    if (counts[p] < 0) ok = false;
    total += counts[p];
  }
  if (ok && total != n) {
    fprintf(stderr, "  %s: counts add up to %lld for %lld rows\n", what, (long long)total,
            (long long)n);
    ok = false;
  }
  for (int64_t i = 0; ok && i < n; i++) part[i] = -1;
  const int64_t *pv = h.values;
  int64_t at = 0;
  for (int p = 0; ok && p < nparts; at += counts[p++])
    for (int64_t k = at; ok && k < at + counts[p]; k++) {
      int64_t r = pv[k];
      if (r < 0 || r >= n || part[r] != -1) {
        fprintf(stderr, "  %s: perm[%lld] = %lld, not a row or twice\n", what, (long long)k,
                (long long)r);
        ok = false;
      } else if (k > at && pv[k - 1] >= r) {
        fprintf(stderr, "  %s: part %d's rows not ascending at %lld\n", what, p, (long long)k);
        ok = false;
      } else {
        part[r] = p;
      }
    }
  ladle_column_release(&h);
  if (!ok) {
    failures_++;
    free(part);
    return NULL;
  }
  return part;
}

/* hash_partition of host keys h (nk columns) on the backend into nparts:
 * each row's part (malloc) after part_shape's checks, or NULL (skipped or
 * failed). */
static int *run_hash(suite *s, const ladle_kctx *ctx, const ladle_column *h, size_t nk, int nparts,
                     const char *what) {
  ladle_column d[4], perm;
  size_t up_ok = 0;
  int *part = NULL;
  int64_t counts[8];
  while (up_ok < nk && up(s, &h[up_ok], &d[up_ok], what)) up_ok++;
  if (up_ok == nk &&
      ran(s, s->be->hash_partition(ctx, d, nk, nparts, &perm, counts, &err_), what)) {
    part = part_shape(s, what, &perm, h[0].length, counts, nparts);
    ladle_column_release(&perm);
  }
  for (size_t k = 0; k < up_ok; k++) ladle_column_release(&d[k]);
  return part;
}

/* The parts of hash_partition against the hash written out above, and rows
 * of equal keys in one part (found by sorting the rows by value). */
static void hash_parts_check(const char *what, const ladle_column *h, size_t nk, int nparts,
                             const int *part) {
  int64_t n = h[0].length;
  for (int64_t i = 0; i < n; i++) {
    int want = ref_hash_part(h, nk, i, nparts);
    if (part[i] != want) {
      fprintf(stderr, "  %s: row %lld in part %d, the partition hash says %d\n", what, (long long)i,
              part[i], want);
      failures_++;
      break;
    }
  }
  if (n > 100000) return; /* the sort below for the smaller inputs only */
  int64_t *ord = malloc((size_t)LADLE_MAX(n, 1) * sizeof *ord);
  if (ord == NULL) {
    failures_++;
    return;
  }
  for (int64_t i = 0; i < n; i++) ord[i] = i;
  qkeys_ = h;
  qnk_ = nk;
  qsort(ord, (size_t)n, sizeof *ord, q_row_cmp);
  for (int64_t k = 1; k < n; k++)
    if (ref_row_cmp(h, ord[k - 1], h, ord[k], nk, NULL, NULL) == 0 &&
        part[ord[k - 1]] != part[ord[k]]) {
      fprintf(stderr, "  %s: rows %lld and %lld have equal keys but parts %d and %d\n", what,
              (long long)ord[k - 1], (long long)ord[k], part[ord[k - 1]], part[ord[k]]);
      failures_++;
      break;
    }
  free(ord);
}

/* Whether two runs put every row in the same part. */
static void same_parts(const char *what, const int *a, const int *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (a[i] != b[i]) {
      fprintf(stderr, "  %s: row %lld in part %d, expected %d\n", what, (long long)i, a[i], b[i]);
      failures_++;
      return;
    }
}

/* A column of type id holding the values of Int64 column src (cast by C). */
static ladle_column cast_ints(const ladle_column *src, ladle_type_id id) {
  ladle_column c;
  memset(&c, 0, sizeof c);
  if (ladle_column_alloc(dtype_of(id), src->length, src->validity != NULL, 0, &c, &err_) !=
      LADLE_OK) {
    failures_++;
    return c;
  }
  const int64_t *v = src->values;
  for (int64_t i = 0; i < src->length; i++) {
    switch (id) {
#define SET_INT(ID, T)                 \
  case ID:                             \
    LADLE_COL_MUT(&c, T)[i] = (T)v[i]; \
    break;
      SET_INT(LADLE_TYPE_INT8, int8_t)
      SET_INT(LADLE_TYPE_INT16, int16_t)
      SET_INT(LADLE_TYPE_INT32, int32_t)
      SET_INT(LADLE_TYPE_DATE, int32_t)
      SET_INT(LADLE_TYPE_INT64, int64_t)
      SET_INT(LADLE_TYPE_DATETIME, int64_t)
      SET_INT(LADLE_TYPE_DURATION, int64_t)
      SET_INT(LADLE_TYPE_UINT8, uint8_t)
      SET_INT(LADLE_TYPE_UINT16, uint16_t)
      SET_INT(LADLE_TYPE_UINT32, uint32_t)
      SET_INT(LADLE_TYPE_UINT64, uint64_t)
      SET_INT(LADLE_TYPE_FLOAT32, float)
      SET_INT(LADLE_TYPE_FLOAT64, double)
#undef SET_INT
      default:
        break;
    }
  }
  if (src->validity != NULL) {
    memcpy(LADLE_COL_VALIDITY_MUT(&c), src->validity, (size_t)ladle_bitmap_bytes(src->length));
    ladle_column_finish_nulls(&c);
  }
  return c;
}

/* Columns of the types the suite's TYPES leave out, as hash_partition takes
 * them: Binary (a String's layout), Time, Decimal, Int128, UInt128. */
static ladle_column carried_column(ladle_type_id id, int64_t n) {
  ladle_column c;
  if (id == LADLE_TYPE_BINARY) {
    c = random_column(LADLE_TYPE_STRING, n, 4);
    c.type = ladle_dtype_make(LADLE_TYPE_BINARY);
    return c;
  }
  ladle_dtype t = id == LADLE_TYPE_DECIMAL ? ladle_dtype_decimal(20, 2) : ladle_dtype_make(id);
  memset(&c, 0, sizeof c);
  if (ladle_column_alloc(t, n, true, 0, &c, &err_) != LADLE_OK) {
    failures_++;
    return c;
  }
  size_t w = ladle_type_width(id);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = test_rand() % 50; /* few values: ties */
    memset(LADLE_COL_MUT(&c, uint8_t) + (int64_t)w * i, 0, w);
    memcpy(LADLE_COL_MUT(&c, uint8_t) + (int64_t)w * i, &r, 8);
    if (test_rand() % 4 == 0) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), i, false);
  }
  ladle_column_finish_nulls(&c);
  return c;
}

static void check_hash_partition(suite *s) {
  if (s->be->hash_partition == NULL) {
    printf("  [%s] hash_partition: not in the table, skipped\n", s->be->name);
    return;
  }
  ladle_pool *pool = NULL;
  CHECK_OK(ladle_pool_create(4, &pool, &err_));
  ladle_kctx pk = s->ctx; /* the same on 4 threads, in small blocks */
  pk.pool = pool;
  pk.morsel_rows = 4096;
  int64_t len[16], nl = lengths(s, len);
  char what[160];
  /* every type, with nulls, every length, into 1, 2, 3 and 7 parts (the large
   * ones for a few types, on one thread and on four) */
  for (int t = 0; t < NTYPES; t++)
    for (int64_t li = 0; li < nl; li++)
      for (int ni = 0; ni < 3; ni++)
        for (int pi = 0; pi < 4; pi++) {
          int64_t n = len[li];
          ladle_type_id id = TYPES[t];
          bool large = n == s->large;
          if (large &&
              (pi != 3 || ni == 2 ||
               (id != LADLE_TYPE_INT64 && id != LADLE_TYPE_STRING && id != LADLE_TYPE_FLOAT64)))
            continue;
          ladle_column h = random_column(id, n, NULLS[ni]);
          snprintf(what, sizeof what, "hash_partition %s[%lld] nulls=%d into %d", tname(id),
                   (long long)n, NULLS[ni], NPARTS[pi]);
          for (int run = 0; run < (large ? 2 : 1); run++) {
            int *part = run_hash(s, run ? &pk : &s->ctx, &h, 1, NPARTS[pi], what);
            if (part != NULL) hash_parts_check(what, &h, 1, NPARTS[pi], part);
            free(part);
          }
          ladle_column_release(&h);
        }
  /* several keys, few distinct values: equal rows together */
  for (int set = 0; set < 3; set++)
    for (int64_t li = 0; li < nl; li++)
      for (int pi = 0; pi < 4; pi++) {
        int64_t n = len[li];
        if (n == s->large && pi != 3) continue;
        ladle_column h[3];
        size_t nk = set == 0 ? 2 : 3;
        if (set == 0) {
          h[0] = few_keys(0, n, 5, true);
          h[1] = few_keys(2, n, 0, true);
        } else if (set == 1) {
          h[0] = few_keys(1, n, 0, true);
          h[1] = few_keys(3, n, 0, true);
          h[2] = few_keys(0, n, 3, false);
        } else {
          h[0] = random_column(LADLE_TYPE_DATE, n, 5);
          h[1] = few_keys(2, n, 0, false);
          h[2] = random_column(LADLE_TYPE_UINT16, n, 0);
        }
        snprintf(what, sizeof what, "hash_partition keys set %d [%lld] into %d", set, (long long)n,
                 NPARTS[pi]);
        int *part = run_hash(s, n == s->large ? &pk : &s->ctx, h, nk, NPARTS[pi], what);
        if (part != NULL) hash_parts_check(what, h, nk, NPARTS[pi], part);
        free(part);
        for (size_t k = 0; k < nk; k++) ladle_column_release(&h[k]);
      }
  /* an integer's part is its value's, whatever its width and signedness (and a
   * Date's, a Datetime's, a Duration's); a float's its value's as a double */
  static const ladle_type_id WIDE[] = {LADLE_TYPE_INT8,     LADLE_TYPE_INT16,   LADLE_TYPE_INT32,
                                       LADLE_TYPE_UINT8,    LADLE_TYPE_UINT16,  LADLE_TYPE_UINT32,
                                       LADLE_TYPE_UINT64,   LADLE_TYPE_DATE,    LADLE_TYPE_DATETIME,
                                       LADLE_TYPE_DURATION, LADLE_TYPE_FLOAT32, LADLE_TYPE_FLOAT64};
  for (int pi = 1; pi < 4; pi++) {
    int64_t n = 3001;
    ladle_column base = random_column(LADLE_TYPE_INT64, n, 4);
    for (int64_t i = 0; i < n; i++) LADLE_COL_MUT(&base, int64_t)[i] = (int64_t)(test_rand() % 120);
    snprintf(what, sizeof what, "hash_partition i64 in [0, 120) into %d", NPARTS[pi]);
    int *want = run_hash(s, &s->ctx, &base, 1, NPARTS[pi], what);
    ladle_column f64 = cast_ints(&base, LADLE_TYPE_FLOAT64);
    int *fwant = run_hash(s, &s->ctx, &f64, 1, NPARTS[pi], what);
    for (size_t w = 0; want != NULL && fwant != NULL && w < sizeof WIDE / sizeof WIDE[0]; w++) {
      ladle_column c = cast_ints(&base, WIDE[w]);
      snprintf(what, sizeof what, "hash_partition %s as i64 into %d", tname(WIDE[w]), NPARTS[pi]);
      int *part = run_hash(s, &s->ctx, &c, 1, NPARTS[pi], what);
      if (part != NULL) same_parts(what, part, ladle_type_is_float(WIDE[w]) ? fwant : want, n);
      free(part);
      ladle_column_release(&c);
    }
    /* a UInt64 above INT64_MAX goes where its bit pattern as an Int64 goes */
    ladle_column u = random_column(LADLE_TYPE_UINT64, n, 4), i64 = u;
    i64.type = ladle_dtype_make(LADLE_TYPE_INT64);
    snprintf(what, sizeof what, "hash_partition u64 as its bits into %d", NPARTS[pi]);
    int *pu = run_hash(s, &s->ctx, &u, 1, NPARTS[pi], what);
    int *pi64 = run_hash(s, &s->ctx, &i64, 1, NPARTS[pi], what);
    if (pu != NULL && pi64 != NULL) same_parts(what, pu, pi64, n);
    free(pu);
    free(pi64);
    ladle_column_release(&u);
    free(want);
    free(fwant);
    ladle_column_release(&f64);
    ladle_column_release(&base);
  }
  /* -0.0 with 0.0, every NaN (any sign or payload) with every other, in
   * Float64 and Float32 */
  {
    static const uint64_t F64[] = {0,
                                   0x8000000000000000ULL,
                                   0x7ff8000000000000ULL,
                                   0xfff8000000000000ULL,
                                   0x7ff0000000000001ULL,
                                   0x7ff8dead0000beefULL,
                                   0x3ff8000000000000ULL};
    static const uint32_t F32[] = {0,           0x80000000u, 0x7fc00000u, 0xffc00000u,
                                   0x7f800001u, 0x7fc0beefu, 0x3fc00000u};
    int64_t n = 700;
    ladle_column c[2];
    CHECK_OK(ladle_column_alloc(dtype_of(LADLE_TYPE_FLOAT64), n, false, 0, &c[0], &err_));
    CHECK_OK(ladle_column_alloc(dtype_of(LADLE_TYPE_FLOAT32), n, false, 0, &c[1], &err_));
    for (int64_t i = 0; i < n; i++) {
      memcpy(LADLE_COL_MUT(&c[0], uint64_t) + i, &F64[i % 7], 8);
      memcpy(LADLE_COL_MUT(&c[1], uint32_t) + i, &F32[i % 7], 4);
    }
    for (int k = 0; k < 2; k++)
      for (int pi = 1; pi < 4; pi++) {
        snprintf(what, sizeof what, "hash_partition %s zeros and NaNs into %d", k ? "f32" : "f64",
                 NPARTS[pi]);
        int *part = run_hash(s, &s->ctx, &c[k], 1, NPARTS[pi], what);
        for (int64_t i = 7; part != NULL && i < n; i++) {
          int64_t like = i % 7 == 1 ? 0 : i % 7 >= 3 && i % 7 <= 5 ? 2 : i % 7;
          if (part[i] != part[like]) {
            fprintf(stderr, "  %s: row %lld in part %d, row %lld (its equal) in %d\n", what,
                    (long long)i, part[i], (long long)like, part[like]);
            failures_++;
            break;
          }
        }
        if (part != NULL) hash_parts_check(what, &c[k], 1, NPARTS[pi], part);
        free(part);
      }
    ladle_column_release(&c[0]);
    ladle_column_release(&c[1]);
  }
  /* a value's part is the value's alone: a shuffled copy, and a slice whose
   * String offsets do not start at 0, put each value where the column did */
  for (int ty = 0; ty < 3; ty++)
    for (int pi = 1; pi < 4; pi++) {
      int64_t n = 5000;
      ladle_column h = ty == 0   ? random_column(LADLE_TYPE_STRING, n, 3)
                       : ty == 1 ? few_keys(2, n, 0, true)
                                 : random_column(LADLE_TYPE_FLOAT64, n, 3);
      snprintf(what, sizeof what, "hash_partition %s set %d into %d", tname(h.type.id), ty,
               NPARTS[pi]);
      int *part = run_hash(s, &s->ctx, &h, 1, NPARTS[pi], what);
      int64_t *shuf = malloc((size_t)n * sizeof *shuf);
      for (int64_t i = 0; shuf != NULL && i < n; i++) shuf[i] = i;
      for (int64_t i = n - 1; shuf != NULL && i > 0; i--) {
        int64_t j = (int64_t)(test_rand() % (uint64_t)(i + 1)), x = shuf[i];
        shuf[i] = shuf[j];
        shuf[j] = x;
      }
      ladle_column sh, sl;
      if (part != NULL && shuf != NULL &&
          ladle_column_gather(&h, shuf, n, &sh, &err_) == LADLE_OK) {
        char w2[200];
        snprintf(w2, sizeof w2, "%s shuffled", what);
        int *ps = run_hash(s, &pk, &sh, 1, NPARTS[pi], w2);
        for (int64_t i = 0; ps != NULL && i < n; i++)
          if (ps[i] != part[shuf[i]]) {
            fprintf(stderr, "  %s: row %lld in part %d, its value's row %lld in %d\n", w2,
                    (long long)i, ps[i], (long long)shuf[i], part[shuf[i]]);
            failures_++;
            break;
          }
        free(ps);
        ladle_column_release(&sh);
        int64_t at = 13;
        if (ladle_column_slice(&h, at, n - at - 5, &sl, &err_) == LADLE_OK) {
          snprintf(w2, sizeof w2, "%s sliced at %lld", what, (long long)at);
          int *pl = run_hash(s, &s->ctx, &sl, 1, NPARTS[pi], w2);
          if (pl != NULL) same_parts(w2, pl, part + at, sl.length);
          free(pl);
          ladle_column_release(&sl);
        } else {
          failures_++;
        }
      }
      free(shuf);
      free(part);
      ladle_column_release(&h);
    }
  /* Binary, Time, Decimal, Int128, UInt128 keys, alone and with another,
   * where the backend's device takes such columns at all */
  static const ladle_type_id CARRIED[] = {LADLE_TYPE_BINARY, LADLE_TYPE_TIME, LADLE_TYPE_DECIMAL,
                                          LADLE_TYPE_INT128, LADLE_TYPE_UINT128};
  for (size_t t = 0; t < sizeof CARRIED / sizeof CARRIED[0]; t++)
    for (int pi = 1; pi < 4; pi++) {
      ladle_column h[2];
      h[0] = carried_column(CARRIED[t], 2000);
      h[1] = few_keys(0, 2000, 4, true);
      ladle_column d;
      if (s->be->to_device(&s->ctx, &h[0], &d, &err_) != LADLE_OK) {
        if (pi == 1)
          printf("  [%s] hash_partition of %s keys skipped: %s\n", s->be->name,
                 ladle_dtype_name(h[0].type, NULL, 0), err_.message);
      } else {
        ladle_column_release(&d);
        for (size_t nk = 1; nk <= 2; nk++) {
          snprintf(what, sizeof what, "hash_partition %s (%zu keys) into %d",
                   ladle_dtype_name(h[0].type, NULL, 0), nk, NPARTS[pi]);
          int *part = run_hash(s, &s->ctx, h, nk, NPARTS[pi], what);
          if (part != NULL) hash_parts_check(what, h, nk, NPARTS[pi], part);
          free(part);
        }
      }
      ladle_column_release(&h[0]);
      ladle_column_release(&h[1]);
    }
  ladle_pool_destroy(pool);
}

/* range_partition of host keys h (nk columns) against host splitters spl
 * (nparts - 1 rows) on the backend: each row's part after part_shape's
 * checks, or NULL. */
static int *run_range(suite *s, const ladle_kctx *ctx, const ladle_column *h,
                      const ladle_column *spl, size_t nk, const bool *desc, const bool *last,
                      int nparts, const char *what) {
  ladle_column d[6], perm;
  size_t up_ok = 0;
  int *part = NULL;
  int64_t counts[8];
  while (up_ok < nk && up(s, &h[up_ok], &d[up_ok], what)) up_ok++;
  while (up_ok >= nk && up_ok < 2 * nk && up(s, &spl[up_ok - nk], &d[up_ok], what)) up_ok++;
  if (up_ok == 2 * nk &&
      ran(s, s->be->range_partition(ctx, d, d + nk, nk, desc, last, nparts, &perm, counts, &err_),
          what)) {
    part = part_shape(s, what, &perm, h[0].length, counts, nparts);
    ladle_column_release(&perm);
  }
  for (size_t k = 0; k < up_ok; k++) ladle_column_release(&d[k]);
  return part;
}

/* Each row's part against the reference: how many splitters are at or
 * below it in the order of ref_row_cmp. */
static void range_parts_check(const char *what, const ladle_column *h, const ladle_column *spl,
                              size_t nk, const bool *desc, const bool *last, int nparts,
                              const int *part) {
  for (int64_t i = 0; i < h[0].length; i++) {
    int want = 0;
    for (int p = 0; p + 1 < nparts; p++) want += ref_row_cmp(spl, p, h, i, nk, desc, last) <= 0;
    if (part[i] != want) {
      fprintf(stderr, "  %s: row %lld in part %d, expected %d\n", what, (long long)i, part[i],
              want);
      failures_++;
      return;
    }
  }
}

/* nparts - 1 splitters for keys h: a random sample of its rows (of `from`
 * when h has none) sorted by the CPU's sort_perm and taken at even steps.
 * The sample's sorted order is checked against ref_row_cmp, so that the
 * reference orders rows as sort_indices does. */
static bool make_splitters(const char *what, const ladle_column *h, const ladle_column *from,
                           size_t nk, const bool *desc, const bool *last, int nparts,
                           ladle_column *spl) {
  const ladle_column *src = h[0].length > 0 ? h : from;
  int64_t m = 40, n = src[0].length;
  int64_t *idx = malloc((size_t)m * sizeof *idx), pick[8];
  if (idx == NULL) return false;
  for (int64_t i = 0; i < m; i++) idx[i] = (int64_t)(test_rand() % (uint64_t)n);
  ladle_column sample[3], sperm;
  ladle_kctx hk;
  memset(&hk, 0, sizeof hk);
  bool ok = true;
  size_t made = 0;
  for (; made < nk && ok; made++)
    ok = ladle_column_gather(&src[made], idx, m, &sample[made], &err_) == LADLE_OK;
  if (!ok) made--;
  free(idx);
  if (ok)
    ok = ladle_backend_cpu()->sort_perm(&hk, sample, nk, desc, last, &sperm, &err_) == LADLE_OK;
  if (ok) {
    const int64_t *o = sperm.values;
    for (int64_t k = 1; k < m; k++)
      if (ref_row_cmp(sample, o[k - 1], sample, o[k], nk, desc, last) > 0) {
        fprintf(stderr, "  %s: the reference orders sample rows %lld and %lld unlike sort_perm\n",
                what, (long long)o[k - 1], (long long)o[k]);
        failures_++;
        break;
      }
    for (int p = 0; p + 1 < nparts; p++) pick[p] = o[(int64_t)(p + 1) * m / nparts];
    for (size_t k = 0; k < nk && ok; k++)
      if (ladle_column_gather(&sample[k], pick, nparts - 1, &spl[k], &err_) != LADLE_OK) {
        for (size_t j = 0; j < k; j++) ladle_column_release(&spl[j]);
        ok = false;
      }
    ladle_column_release(&sperm);
  }
  for (size_t k = 0; k < made; k++) ladle_column_release(&sample[k]);
  if (!ok) {
    fprintf(stderr, "  %s: splitters not made: %s\n", what, err_.message);
    failures_++;
  }
  return ok;
}

static void check_range_partition(suite *s) {
  if (s->be->range_partition == NULL) {
    printf("  [%s] range_partition: not in the table, skipped\n", s->be->name);
    return;
  }
  ladle_pool *pool = NULL;
  CHECK_OK(ladle_pool_create(4, &pool, &err_));
  ladle_kctx pk = s->ctx;
  pk.pool = pool;
  pk.morsel_rows = 4096;
  int64_t len[16], nl = lengths(s, len);
  char what[160];
  /* one key of every type, ascending and descending, nulls first and last */
  for (int t = 0; t < NTYPES; t++)
    for (int64_t li = 0; li < nl; li++)
      for (int ni = 0; ni < 3; ni++)
        for (int pi = 0; pi < 4; pi++) {
          int64_t n = len[li];
          ladle_type_id id = TYPES[t];
          bool large = n == s->large;
          if (large &&
              (pi != 3 || ni == 2 ||
               (id != LADLE_TYPE_INT32 && id != LADLE_TYPE_STRING && id != LADLE_TYPE_FLOAT32)))
            continue;
          bool desc = (t + li + pi) % 2, last = (t + ni + pi / 2) % 2;
          ladle_column h = random_column(id, n, NULLS[ni]), from = random_column(id, 50, 3), spl;
          snprintf(what, sizeof what, "range_partition %s[%lld] nulls=%d%s%s into %d", tname(id),
                   (long long)n, NULLS[ni], desc ? " desc" : "", last ? " nulls last" : "",
                   NPARTS[pi]);
          if (make_splitters(what, &h, &from, 1, &desc, &last, NPARTS[pi], &spl)) {
            for (int run = 0; run < (large ? 2 : 1); run++) {
              int *part =
                  run_range(s, run ? &pk : &s->ctx, &h, &spl, 1, &desc, &last, NPARTS[pi], what);
              if (part != NULL)
                range_parts_check(what, &h, &spl, 1, &desc, &last, NPARTS[pi], part);
              free(part);
            }
            ladle_column_release(&spl);
          }
          ladle_column_release(&h);
          ladle_column_release(&from);
        }
  /* several keys, few values (many rows equal to a splitter), mixed orders */
  for (int set = 0; set < 3; set++)
    for (int64_t li = 0; li < nl; li++)
      for (int pi = 0; pi < 4; pi++) {
        int64_t n = len[li];
        if (n == s->large && pi != 3) continue;
        ladle_column h[3], from[3], spl[3];
        size_t nk = set == 2 ? 3 : 2;
        bool desc[3] = {false, false, false}, last[3] = {false, false, false};
        for (int side = 0; side < 2; side++) {
          ladle_column *c = side ? from : h;
          int64_t m = side ? 50 : n;
          if (set == 0) {
            c[0] = few_keys(3, m, 0, true);
            c[1] = random_column(LADLE_TYPE_FLOAT32, m, 3);
          } else if (set == 1) {
            c[0] = few_keys(0, m, 4, true);
            c[1] = random_column(LADLE_TYPE_INT64, m, 3);
          } else {
            c[0] = few_keys(2, m, 0, true);
            c[1] = few_keys(0, m, 3, true);
            c[2] = few_keys(1, m, 0, true);
          }
        }
        if (set == 0) {
          desc[0] = true;
          last[0] = true;
          last[1] = pi % 2;
        } else if (set == 1) {
          last[0] = true;
          desc[1] = true;
        } else {
          desc[1] = true;
          last[1] = true;
          desc[2] = pi % 2;
        }
        snprintf(what, sizeof what, "range_partition keys set %d [%lld] into %d", set, (long long)n,
                 NPARTS[pi]);
        if (make_splitters(what, h, from, nk, desc, last, NPARTS[pi], spl)) {
          int *part =
              run_range(s, n == s->large ? &pk : &s->ctx, h, spl, nk, desc, last, NPARTS[pi], what);
          if (part != NULL) range_parts_check(what, h, spl, nk, desc, last, NPARTS[pi], part);
          free(part);
          for (size_t k = 0; k < nk; k++) ladle_column_release(&spl[k]);
        }
        for (size_t k = 0; k < nk; k++) {
          ladle_column_release(&h[k]);
          ladle_column_release(&from[k]);
        }
      }
  /* by hand: a row equal to a splitter goes to the part above it */
  {
    static const int32_t V[] = {5, 1, 5, 3, 5, 7};
    static const int64_t WANT[2][6] = {{1, 3, 0, 2, 4, 5}, {5, 0, 1, 2, 3, 4}};
    static const int64_t WANT_COUNTS[2][2] = {{2, 4}, {1, 5}};
    ladle_column h, spl, dh, ds, perm, hp;
    CHECK_OK(ladle_column_alloc(dtype_of(LADLE_TYPE_INT32), 6, false, 0, &h, &err_));
    CHECK_OK(ladle_column_alloc(dtype_of(LADLE_TYPE_INT32), 1, false, 0, &spl, &err_));
    memcpy(LADLE_COL_MUT(&h, int32_t), V, sizeof V);
    LADLE_COL_MUT(&spl, int32_t)[0] = 5;
    if (up(s, &h, &dh, "range ties") && up(s, &spl, &ds, "range ties")) {
      for (int dsc = 0; dsc < 2; dsc++) {
        bool desc = dsc, last = false;
        int64_t counts[2];
        if (!ran(
                s,
                s->be->range_partition(&s->ctx, &dh, &ds, 1, &desc, &last, 2, &perm, counts, &err_),
                "range ties"))
          continue;
        if (down(s, &perm, &hp, "range ties")) {
          CHECK(hp.length == 6 && memcmp(hp.values, WANT[dsc], sizeof WANT[dsc]) == 0);
          CHECK(counts[0] == WANT_COUNTS[dsc][0] && counts[1] == WANT_COUNTS[dsc][1]);
          ladle_column_release(&hp);
        }
        ladle_column_release(&perm);
      }
      /* bad splitters: too few rows, another type, out of order */
      bool f = false;
      int64_t counts[3];
      CHECK(s->be->range_partition(&s->ctx, &dh, &ds, 1, &f, &f, 3, &perm, counts, &err_) ==
            LADLE_EINVAL);
      CHECK(s->be->range_partition(&s->ctx, &dh, &dh, 1, &f, &f, 0, &perm, counts, &err_) ==
            LADLE_EINVAL);
      ladle_column_release(&ds);
      ladle_column_release(&dh);
    }
    ladle_column_release(&h);
    ladle_column_release(&spl);
    ladle_column wrong = random_column(LADLE_TYPE_INT64, 1, 0),
                 keys = random_column(LADLE_TYPE_INT32, 9, 0);
    ladle_column two = random_column(LADLE_TYPE_INT32, 2, 0), dw, dk, dt;
    LADLE_COL_MUT(&two, int32_t)[0] = 9;
    LADLE_COL_MUT(&two, int32_t)[1] = 2;
    if (up(s, &wrong, &dw, "range errors")) {
      if (up(s, &keys, &dk, "range errors")) {
        bool f = false;
        int64_t counts[3];
        CHECK(s->be->range_partition(&s->ctx, &dk, &dw, 1, &f, &f, 2, &perm, counts, &err_) ==
              LADLE_EINVAL);
        CHECK(strstr(err_.message, "type") != NULL);
        if (up(s, &two, &dt, "range errors")) {
          CHECK(s->be->range_partition(&s->ctx, &dk, &dt, 1, &f, &f, 3, &perm, counts, &err_) ==
                LADLE_EINVAL);
          CHECK(strstr(err_.message, "order") != NULL);
          ladle_column_release(&dt);
        }
        ladle_column_release(&dk);
      }
      ladle_column_release(&dw);
    }
    ladle_column_release(&wrong);
    ladle_column_release(&keys);
    ladle_column_release(&two);
  }
  ladle_pool_destroy(pool);
}

/* Keys the kernels refuse: a clean LADLE_ENOTSUP naming the type; bad
 * arguments LADLE_EINVAL. */
static void check_partition_errors(suite *s) {
  if (s->be->hash_partition == NULL && s->be->range_partition == NULL) return;
  static const int64_t OFF[4] = {0, 0, 0, 0};
  static const uint32_t CODES[3] = {0, 1, 0};
  ladle_column child = random_column(LADLE_TYPE_INT32, 0, 0), lists, cats;
  memset(&lists, 0, sizeof lists);
  lists.type = ladle_dtype_list(LADLE_TYPE_INT32);
  lists.length = 3;
  lists.values = OFF;
  lists.child = &child;
  memset(&cats, 0, sizeof cats);
  cats.type = ladle_dtype_make(LADLE_TYPE_CATEGORICAL);
  cats.length = 3;
  cats.values = CODES;
  ladle_column perm;
  int64_t counts[2];
  bool f = false;
  const ladle_column *bad[2] = {&lists, &cats};
  const char *names[2] = {"list", "cat"};
  for (int b = 0; b < 2; b++) {
    ladle_column d;
    if (s->be->to_device(&s->ctx, bad[b], &d, &err_) != LADLE_OK) continue;
    if (s->be->hash_partition != NULL) {
      CHECK(s->be->hash_partition(&s->ctx, &d, 1, 2, &perm, counts, &err_) == LADLE_ENOTSUP);
      CHECK(strstr(err_.message, names[b]) != NULL);
    }
    if (s->be->range_partition != NULL) {
      CHECK(s->be->range_partition(&s->ctx, &d, &d, 1, &f, &f, 1, &perm, counts, &err_) ==
            LADLE_ENOTSUP);
      CHECK(strstr(err_.message, names[b]) != NULL);
    }
    ladle_column_release(&d);
  }
  ladle_column_release(&child);
  ladle_column h = random_column(LADLE_TYPE_INT64, 10, 0),
               h9 = random_column(LADLE_TYPE_INT64, 9, 0);
  ladle_column d[2];
  if (up(s, &h, &d[0], "partition errors")) {
    if (up(s, &h9, &d[1], "partition errors")) {
      if (s->be->hash_partition != NULL) {
        CHECK(s->be->hash_partition(&s->ctx, d, 1, 0, &perm, counts, &err_) == LADLE_EINVAL);
        CHECK(s->be->hash_partition(&s->ctx, d, 0, 2, &perm, counts, &err_) == LADLE_EINVAL);
        CHECK(s->be->hash_partition(&s->ctx, d, 2, 2, &perm, counts, &err_) == LADLE_EINVAL);
        CHECK(strstr(err_.message, "rows") != NULL);
      }
      ladle_column_release(&d[1]);
    }
    ladle_column_release(&d[0]);
  }
  ladle_column_release(&h);
  ladle_column_release(&h9);
}

static void check_errors(suite *s) {
  ladle_column h = random_column(LADLE_TYPE_INT32, 10, 0),
               mask = random_column(LADLE_TYPE_BOOL, 9, 0);
  ladle_column d, dm, out;
  if (up(s, &h, &d, "errors") && up(s, &mask, &dm, "errors")) {
    /* a mask of another length */
    ladle_status st = s->be->filter(&s->ctx, &d, &dm, &out, &err_);
    CHECK(st == LADLE_EINVAL);
    CHECK(strstr(err_.message, "9 rows for 10") != NULL);
    /* a mask that is not Boolean */
    st = s->be->select(&s->ctx, &d, &out, &err_);
    CHECK(st == LADLE_EINVAL);
    CHECK(strstr(err_.message, "not Boolean") != NULL);
    /* an index column that is not Int64 */
    st = s->be->take(&s->ctx, &d, &d, &out, &err_);
    CHECK(st == LADLE_EINVAL);
    CHECK(strstr(err_.message, "not Int64") != NULL);
    ladle_column_release(&dm);
    ladle_column_release(&d);
  }
  ladle_column_release(&mask);
  ladle_column_release(&h);
}

/* An output past the resource's limit: LADLE_ENOMEM naming the limit, and
 * the backend works after it. */
static void check_limit(suite *s, const ladle_allocator *parent) {
  ladle_mr *small;
  CHECK_OK(ladle_mr_create(parent, 1 << 20, &small, &err_));
  ladle_kctx ctx = s->ctx;
  ctx.mr = small;
  ladle_column h = random_column(LADLE_TYPE_INT64, 200000, 0), d, out;
  /* the input from the unlimited resource, the output from the small one */
  if (up(s, &h, &d, "limit")) {
    ladle_column idx = random_indices(200000, 200000, false), didx;
    if (up(s, &idx, &didx, "limit")) {
      ladle_status st = s->be->take(&ctx, &d, &didx, &out, &err_);
      CHECK(st == LADLE_ENOMEM);
      CHECK(strstr(err_.message, "memory limit exceeded") != NULL ||
            strstr(err_.message, "out of memory") != NULL);
      if (st == LADLE_OK) ladle_column_release(&out);
      CHECK_EQ_I(ladle_mr_bytes(small), 0);
      /* the same kernel under the unlimited resource still answers */
      st = s->be->take(&s->ctx, &d, &didx, &out, &err_);
      CHECK_OK(st);
      if (st == LADLE_OK) ladle_column_release(&out);
      ladle_column_release(&didx);
    }
    ladle_column_release(&idx);
    ladle_column_release(&d);
  }
  ladle_column_release(&h);
  ladle_mr_release(small);
}

/* sequence: start, start + 1, ... in each integer type, against a loop; a
 * last value past the type and a type it does not take are errors */
/* ------------------------------------------------ running functions */

/* Whether a type's values are signed integers (DATE, DATETIME, DURATION too). */
static bool phys_signed(ladle_type_id id) {
  ladle_phys p = ladle_type_phys(id);
  return p == LADLE_PHYS_I8 || p == LADLE_PHYS_I16 || p == LADLE_PHYS_I32 || p == LADLE_PHYS_I64;
}

/* Value i of fixed-width column c, sign-extended where signed, else
 * zero-extended, as a 64-bit integer. */
static int64_t sval(const ladle_column *c, int64_t i) {
  const uint8_t *p = (const uint8_t *)c->values + i * (int64_t)ladle_type_width(c->type.id);
  switch (ladle_type_width(c->type.id)) {
    case 1:
      return phys_signed(c->type.id) ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
    case 2: {
      uint16_t u;
      memcpy(&u, p, 2);
      return phys_signed(c->type.id) ? (int64_t)(int16_t)u : (int64_t)u;
    }
    case 4: {
      uint32_t u;
      memcpy(&u, p, 4);
      return phys_signed(c->type.id) ? (int64_t)(int32_t)u : (int64_t)u;
    }
    default: {
      int64_t v;
      memcpy(&v, p, 8);
      return v;
    }
  }
}

/* The reference of cumulative(op, reverse) of host column in within groups
 * `ids` (NULL: one group): a running value per group, walked row by row. */
/* A running float sum or product a device computed in a scan's order
 * against the reference's row order: the same nulls, and each value the
 * same, both NaN, or within a relative 1e-4 (Float32) or 1e-9 (Float64) of
 * the larger magnitude; an infinity must be the same infinity. */
static void near_running_down(suite *s, const ladle_column *d, const ladle_column *ref,
                              const char *what) {
  ladle_column h;
  if (!down(s, d, &h, what)) return;
  bool ok = ladle_dtype_equal(h.type, ref->type) && h.length == ref->length;
  double tol = h.type.id == LADLE_TYPE_FLOAT32 ? 1e-4 : 1e-9;
  for (int64_t i = 0; ok && i < h.length; i++) {
    ok = valid_at(&h, i) == valid_at(ref, i);
    if (!ok || !valid_at(&h, i)) continue;
    double x = ladle_column_value_f64(&h, i), y = ladle_column_value_f64(ref, i);
    ok = (isnan(x) && isnan(y)) || x == y ||
         (isfinite(x) && isfinite(y) && fabs(x - y) <= tol * fmax(fabs(x), fabs(y)) + 1e-300);
    if (!ok) fprintf(stderr, "  %s: row %lld %.17g, expected %.17g\n", what, (long long)i, x, y);
  }
  if (!ok) failures_++;
  ladle_column_release(&h);
}

static ladle_column ref_cumulative(const ladle_column *in, const uint32_t *ids, int64_t ngroups,
                                   int op, bool reverse) {
  int64_t n = in->length;
  ladle_column o;
  bool count = op == LADLE_CUM_COUNT;
  ladle_dtype t = count ? ladle_dtype_make(LADLE_TYPE_UINT32) : in->type;
  if (ladle_column_alloc(t, n, !count && in->null_count > 0, 0, &o, &err_) != LADLE_OK) {
    failures_++;
    memset(&o, 0, sizeof o);
    return o;
  }
  size_t w = ladle_type_width(t.id);
  bool f64 = t.id == LADLE_TYPE_FLOAT64, f32 = t.id == LADLE_TYPE_FLOAT32;
  bool sgn = phys_signed(t.id);
  uint64_t mask = w == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * w)) - 1;
  uint64_t *iacc = calloc((size_t)LADLE_MAX(ngroups, 1), sizeof *iacc);
  double *dacc = calloc((size_t)LADLE_MAX(ngroups, 1), sizeof *dacc);
  float *facc = calloc((size_t)LADLE_MAX(ngroups, 1), sizeof *facc);
  bool *seen = calloc((size_t)LADLE_MAX(ngroups, 1), sizeof *seen);
  for (int64_t k = 0; k < n; k++) {
    int64_t i = reverse ? n - 1 - k : k;
    int64_t g = ids ? ids[i] : 0;
    bool valid = valid_at(in, i);
    if (count) {
      if (valid) iacc[g]++;
      uint32_t c = (uint32_t)iacc[g];
      memcpy(LADLE_COL_MUT(&o, uint8_t) + 4 * i, &c, 4);
      continue;
    }
    if (!valid) {
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), i, false);
      continue;
    }
    if (f64 || f32) {
      double v = f64 ? ((const double *)in->values)[i] : (double)((const float *)in->values)[i];
      float fv = f32 ? ((const float *)in->values)[i] : 0.0f;
      if (!seen[g]) {
        dacc[g] = v;
        facc[g] = fv;
      } else if (op == LADLE_CUM_SUM) {
        dacc[g] += v;
        facc[g] += fv;
      } else if (op == LADLE_CUM_PROD) {
        dacc[g] *= v;
        facc[g] *= fv;
      } else {
        /* NaN only until a number; between equal values the later one */
        double a = f32 ? (double)facc[g] : dacc[g];
        bool take = isnan(a) || (!isnan(v) && (op == LADLE_CUM_MIN ? !(a < v) : !(a > v)));
        if (take) {
          dacc[g] = v;
          facc[g] = fv;
        }
      }
      seen[g] = true;
      if (f64)
        memcpy(LADLE_COL_MUT(&o, uint8_t) + 8 * i, &dacc[g], 8);
      else
        memcpy(LADLE_COL_MUT(&o, uint8_t) + 4 * i, &facc[g], 4);
      continue;
    }
    uint64_t u = (uint64_t)sval(in, i) & mask;
    if (!seen[g]) {
      iacc[g] = u;
    } else if (op == LADLE_CUM_SUM) {
      iacc[g] = (iacc[g] + u) & mask;
    } else if (op == LADLE_CUM_PROD) {
      iacc[g] = (iacc[g] * u) & mask;
    } else {
      /* compare as the type's values: sign-extend where signed */
      uint64_t top = (uint64_t)1 << (8 * w - 1);
      int64_t a = sgn && (iacc[g] & top) && w < 8 ? (int64_t)(iacc[g] | ~mask) : (int64_t)iacc[g];
      int64_t b = sgn && (u & top) && w < 8 ? (int64_t)(u | ~mask) : (int64_t)u;
      bool less = sgn ? b < a : u < iacc[g], more = sgn ? b > a : u > iacc[g];
      if (op == LADLE_CUM_MIN ? !more : !less) iacc[g] = u;
      (void)less;
    }
    seen[g] = true;
    memcpy(LADLE_COL_MUT(&o, uint8_t) + w * (size_t)i, &iacc[g], w); /* little-endian */
  }
  free(iacc);
  free(dacc);
  free(facc);
  free(seen);
  ladle_column_finish_nulls(&o);
  return o;
}

static void check_cumulative(suite *s) {
  if (s->be->cumulative == NULL || s->be->shift_rows == NULL) {
    if (s->strict) {
      fprintf(stderr, "  [%s] no cumulative/shift_rows\n", s->be->name);
      failures_++;
    }
    return;
  }
  static const ladle_type_id VALS[] = {LADLE_TYPE_INT8,    LADLE_TYPE_INT32,  LADLE_TYPE_INT64,
                                       LADLE_TYPE_UINT16,  LADLE_TYPE_UINT64, LADLE_TYPE_FLOAT32,
                                       LADLE_TYPE_FLOAT64, LADLE_TYPE_DATE};
  static const char *OPS[] = {"sum", "prod", "min", "max", "count"};
  /* groups: none (gi 0); grouped on the device by group_keys over the ids (gi
   * 1: ids, rows and offsets); on the host also a view of the executor's
   * groups holding ids alone (gi 2: the kernel buckets the rows itself) */
  bool host = s->be->device == LADLE_DEVICE_CPU;
  int64_t len[16], nl = lengths(s, len);
  for (int64_t li = 0; li < nl; li++) {
    int64_t n = len[li];
    ladle_column hid, did;
    if (ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT32), n, false, 0, &hid, &err_) !=
        LADLE_OK) {
      failures_++;
      return;
    }
    uint32_t *ids = LADLE_COL_MUT(&hid, uint32_t);
    for (int64_t i = 0; i < n; i++) ids[i] = (uint32_t)(test_rand() % 5);
    ladle_dgroups dg;
    memset(&dg, 0, sizeof dg);
    bool grouped = s->be->group_keys != NULL && up(s, &hid, &did, "cumulative groups");
    if (grouped) {
      grouped = ran(s, s->be->group_keys(&s->ctx, &did, 1, NULL, &dg, &err_), "cumulative groups");
      ladle_column_release(&did);
    }
    ladle_groups hg;
    memset(&hg, 0, sizeof hg);
    hg.nrows = n;
    hg.ngroups = 5;
    hg.ids = ids;
    ladle_dgroups hview;
    ladle_dgroups_view(&hg, &hview);
    for (int gi = 0; gi < (host ? 3 : 2); gi++) {
      if (gi == 1 && !grouped) continue;
      const ladle_dgroups *gp = gi == 0 ? NULL : gi == 1 ? &dg : &hview;
      const char *gname = gi == 0 ? "" : gi == 1 ? " in 5 groups" : " in 5 groups (ids only)";
      for (size_t ti = 0; ti < sizeof VALS / sizeof VALS[0]; ti++)
        for (int ni = 0; ni < 3; ni++) {
          ladle_column h = random_column(VALS[ti], n, NULLS[ni]), d;
          if (!up(s, &h, &d, "cumulative input")) {
            ladle_column_release(&h);
            continue;
          }
          for (int op = LADLE_CUM_SUM; op <= LADLE_CUM_COUNT; op++)
            for (int rev = 0; rev < 2; rev++) {
              if (VALS[ti] == LADLE_TYPE_DATE && (op == LADLE_CUM_SUM || op == LADLE_CUM_PROD))
                continue;
              char what[128];
              snprintf(what, sizeof what, "cum_%s%s of %s[%lld] nulls=%d%s", OPS[op],
                       rev ? "(reverse)" : "", tname(VALS[ti]), (long long)n, NULLS[ni], gname);
              ladle_column ref = ref_cumulative(&h, gi ? ids : NULL, gi ? 5 : 1, op, rev), out;
              if (ran(s, s->be->cumulative(&s->ctx, &d, gp, op, rev != 0, &out, &err_), what)) {
                /* a device may add and multiply floats in a scan's order */
                bool reassoc = !host && ladle_type_is_float(VALS[ti]) &&
                               (op == LADLE_CUM_SUM || op == LADLE_CUM_PROD);
                if (reassoc)
                  near_running_down(s, &out, &ref, what);
                else
                  same_down(s, &out, &ref, what);
                ladle_column_release(&out);
              }
              ladle_column_release(&ref);
            }
          ladle_column_release(&d);
          ladle_column_release(&h);
        }
      /* shift_rows: the row `by` places before in the group, or -1 */
      int64_t bys[] = {0, 1, 3, -2, n + 1, -(n + 1), INT64_MIN, INT64_MAX};
      for (size_t bi = 0; bi < sizeof bys / sizeof bys[0]; bi++) {
        char what[96];
        snprintf(what, sizeof what, "shift_rows(%lld) of %lld rows%s", (long long)bys[bi],
                 (long long)n, gname);
        ladle_column ref;
        if (ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT64), n, false, 0, &ref, &err_) !=
            LADLE_OK) {
          failures_++;
          continue;
        }
        int64_t *rv = LADLE_COL_MUT(&ref, int64_t);
        for (int64_t i = 0; i < n; i++) {
          /* the group's rows in order: walk from i by one row of the group at a time */
          int64_t by = bys[bi], j = i, step = by >= 0 ? -1 : 1;
          uint64_t left = by >= 0 ? (uint64_t)by : (uint64_t)0 - (uint64_t)by;
          if (left > (uint64_t)n) {
            rv[i] = -1; /* past any end */
            continue;
          }
          while (left > 0 && j >= 0 && j < n) {
            j += step;
            while (j >= 0 && j < n && gi && ids[j] != ids[i]) j += step;
            left--;
          }
          rv[i] = left == 0 && j >= 0 && j < n ? j : -1;
        }
        ladle_column out;
        if (ran(s, s->be->shift_rows(&s->ctx, n, gp, bys[bi], &out, &err_), what)) {
          same_down(s, &out, &ref, what);
          ladle_column_release(&out);
        }
        ladle_column_release(&ref);
      }
    }
    ladle_dgroups_release(&dg);
    ladle_column_release(&hid);
  }
}

static void check_sequence(suite *s) {
  if (s->be->sequence == NULL) return;
  static const ladle_type_id types[] = {LADLE_TYPE_INT32, LADLE_TYPE_UINT32, LADLE_TYPE_INT64,
                                        LADLE_TYPE_UINT64};
  int64_t len[16], nl = lengths(s, len);
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
    ladle_dtype t = ladle_dtype_make(types[ti]);
    bool is_signed = ladle_type_is_signed(types[ti]);
    size_t w = ladle_type_width(types[ti]);
    for (int64_t li = 0; li < nl; li++) {
      int64_t n = len[li];
      /* from 0, from below zero where signed, and ending at the type's last value */
      int64_t top = w == 4 ? (is_signed ? INT32_MAX : (int64_t)UINT32_MAX) : INT64_MAX;
      int64_t starts[] = {0, is_signed ? -7 : 7, n > 0 ? top - (n - 1) : top};
      for (size_t si = 0; si < 3; si++) {
        char what[96];
        snprintf(what, sizeof what, "sequence %s[%lld] from %lld", ladle_dtype_name(t, NULL, 0),
                 (long long)n, (long long)starts[si]);
        ladle_column want, d;
        if (ladle_column_alloc(t, n, false, 0, &want, &err_) != LADLE_OK) {
          failures_++;
          return;
        }
        for (int64_t i = 0; i < n; i++) {
          int64_t v = starts[si] + i;
          if (w == 4) {
            uint32_t u = (uint32_t)v;
            memcpy(LADLE_COL_MUT(&want, uint8_t) + 4 * i, &u, 4);
          } else {
            memcpy(LADLE_COL_MUT(&want, uint8_t) + 8 * i, &v, 8);
          }
        }
        if (ran(s, s->be->sequence(&s->ctx, starts[si], n, t, &d, &err_), what)) {
          same_down(s, &d, &want, what);
          ladle_column_release(&d);
        }
        ladle_column_release(&want);
      }
      if (n > 0) {
        int64_t past = w == 4 ? (is_signed ? INT32_MAX : (int64_t)UINT32_MAX) : INT64_MAX;
        ladle_column bad;
        ladle_status st = s->be->sequence(&s->ctx, past, n + 1, t, &bad, &err_);
        if (st != LADLE_EINVAL || strstr(err_.message, "overflows") == NULL) {
          fprintf(stderr, "  [%s] sequence of %lld past the end of %s: %s (%s)\n", s->be->name,
                  (long long)n + 1, ladle_dtype_name(t, NULL, 0), ladle_status_name(st),
                  err_.message);
          failures_++;
          if (st == LADLE_OK) ladle_column_release(&bad);
        }
      }
    }
  }
  ladle_column d;
  ladle_status st = s->be->sequence(&s->ctx, 0, 4, ladle_dtype_make(LADLE_TYPE_FLOAT64), &d, &err_);
  if (st != LADLE_ENOTSUP) {
    fprintf(stderr, "  [%s] sequence of Float64: %s, not ENOTSUP\n", s->be->name,
            ladle_status_name(st));
    failures_++;
    if (st == LADLE_OK) ladle_column_release(&d);
  }
}

/* ---------------------------------------------------------------- lists */

/* A LIST column of n rows on the host: 0 to 4 elements a row (random_column's
 * of type elem, a quarter of them null), about one row in null_every null;
 * with `sliced`, rows [3, 3 + n) of a longer one, so that its offsets start
 * past 0 and its child past the rows' elements. */
static ladle_column random_list(ladle_type_id elem, int64_t n, int null_every, bool sliced) {
  ladle_column c, whole;
  memset(&c, 0, sizeof c);
  int64_t rows = sliced ? n + 6 : n;
  if (ladle_column_alloc(ladle_dtype_list(elem), rows, null_every > 0, 0, &whole, &err_) !=
      LADLE_OK) {
    failures_++;
    return c;
  }
  int64_t *off = LADLE_COL_MUT(&whole, int64_t);
  off[0] = 0;
  for (int64_t i = 0; i < rows; i++) off[i + 1] = off[i] + (int64_t)(test_rand() % 5);
  for (int64_t i = 0; null_every > 0 && i < rows; i++)
    if (null_every == 1 || test_rand() % (uint64_t)null_every == 0)
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(&whole), i, false);
  if (null_every > 0) ladle_column_finish_nulls(&whole);
  ladle_column child = random_column(elem, off[rows], 4);
  if (ladle_column_set_child(&whole, &child, &err_) != LADLE_OK) failures_++;
  if (!sliced) return whole;
  if (ladle_column_slice(&whole, 3, n, &c, &err_) != LADLE_OK) failures_++;
  ladle_column_release(&whole);
  return c;
}

/* element i of a and j of b: the same validity and, where valid, value */
static bool same_elem(const ladle_column *a, int64_t i, const ladle_column *b, int64_t j) {
  bool va = valid_at(a, i), vb = valid_at(b, j);
  if (va != vb) return false;
  if (!va) return true;
  if (ladle_type_is_varlen(a->type.id)) return ladle_str_cmp(a, i, b, j) == 0;
  if (a->type.id == LADLE_TYPE_BOOL)
    return (((const uint8_t *)a->values)[i] != 0) == (((const uint8_t *)b->values)[j] != 0);
  if (a->type.id == LADLE_TYPE_FLOAT64) {
    double x = ((const double *)a->values)[i], y = ((const double *)b->values)[j];
    return (isnan(x) && isnan(y)) || memcmp(&x, &y, 8) == 0;
  }
  size_t w = ladle_type_width(a->type.id);
  return memcmp((const uint8_t *)a->values + i * w, (const uint8_t *)b->values + j * w, w) == 0;
}

/* Whether host LIST column got holds, row by row, rows idx[i] of src (idx
 * NULL: row i; -1 or a null index: a null row), and a null_count that
 * matches its bitmap. */
static bool list_rows_are(const char *what, const ladle_column *got, const ladle_column *src,
                          const int64_t *idx, const uint8_t *idx_valid, int64_t n) {
  if (!ladle_dtype_equal(got->type, src->type) || got->length != n || got->child == NULL) {
    fprintf(stderr, "  %s: %lld rows of another type or without elements, expected %lld\n", what,
            (long long)got->length, (long long)n);
    return false;
  }
  int64_t nulls = got->validity == NULL ? 0 : ladle_bitmap_count_unset(got->validity, n);
  if (nulls != got->null_count) {
    fprintf(stderr, "  %s: null_count %lld, the bitmap %lld\n", what, (long long)got->null_count,
            (long long)nulls);
    return false;
  }
  const int64_t *go = got->values, *so = src->values;
  for (int64_t i = 0; i < n; i++) {
    int64_t j = idx == NULL ? i : (idx_valid == NULL || ladle_bit_get(idx_valid, i)) ? idx[i] : -1;
    bool want = j >= 0 && valid_at(src, j);
    if (valid_at(got, i) != want) {
      fprintf(stderr, "  %s: row %lld valid %d, expected %d\n", what, (long long)i,
              valid_at(got, i), want);
      return false;
    }
    if (!want) continue;
    int64_t len = so[j + 1] - so[j];
    bool ok = go[i + 1] - go[i] == len;
    for (int64_t e = 0; ok && e < len; e++)
      ok = same_elem(got->child, go[i] + e, src->child, so[j] + e);
    if (!ok) {
      fprintf(stderr, "  %s: row %lld differs\n", what, (long long)i);
      return false;
    }
  }
  return true;
}

/* LIST columns where the backend moves them (moves_lists): copies both ways
 * (a sliced column's offsets rebased), filter and take (null and -1 indices:
 * null rows), for elements of several types with nulls. */
static void check_lists(suite *s) {
  if (!s->be->moves_lists) /* the kernels checked all the same: what turning it on waits for */
    printf("  [%s] moves_lists is off: queries do not carry List columns here yet\n", s->be->name);
  static const ladle_type_id elems[] = {LADLE_TYPE_INT64, LADLE_TYPE_INT32, LADLE_TYPE_FLOAT64,
                                        LADLE_TYPE_BOOL, LADLE_TYPE_STRING};
  int64_t len[16], nl = lengths(s, len);
  for (int64_t li = 0; li < nl; li++)
    for (size_t t = 0; t < sizeof elems / sizeof *elems; t++) {
      int64_t n = len[li];
      int ni = (int)((li + (int64_t)t) % 3);
      bool sliced = (li + (int64_t)t) % 2 == 1;
      char what[96];
      ladle_column src = random_list(elems[t], n, NULLS[ni], sliced), dsrc, h, dout;
      snprintf(what, sizeof what, "a copy of list[%s][%lld] nulls=%d%s", tname(elems[t]),
               (long long)n, NULLS[ni], sliced ? " (sliced)" : "");
      if (!up(s, &src, &dsrc, what)) {
        ladle_column_release(&src);
        continue;
      }
      if (down(s, &dsrc, &h, what)) {
        if (!list_rows_are(what, &h, &src, NULL, NULL, n)) failures_++;
        ladle_column_release(&h);
      }
      ladle_column mask = random_column(LADLE_TYPE_BOOL, n, NULLS[(ni + 1) % 3]), dmask;
      int64_t *expect = malloc((size_t)LADLE_MAX(n, 1) * sizeof *expect);
      int64_t k = ref_select(&mask, expect);
      snprintf(what, sizeof what, "filter of list[%s][%lld]", tname(elems[t]), (long long)n);
      if (up(s, &mask, &dmask, what)) {
        if (ran(s, s->be->filter(&s->ctx, &dsrc, &dmask, &dout, &err_), what)) {
          if (down(s, &dout, &h, what)) {
            if (!list_rows_are(what, &h, &src, expect, NULL, k)) failures_++;
            ladle_column_release(&h);
          }
          ladle_column_release(&dout);
        }
        ladle_column_release(&dmask);
      }
      ladle_column idx = random_indices(n / 2 + 3 * (n > 0), n, ni != 0), didx;
      snprintf(what, sizeof what, "take of list[%s][%lld] at %lld indices", tname(elems[t]),
               (long long)n, (long long)idx.length);
      if (up(s, &idx, &didx, what)) {
        if (ran(s, s->be->take(&s->ctx, &dsrc, &didx, &dout, &err_), what)) {
          if (down(s, &dout, &h, what)) {
            if (!list_rows_are(what, &h, &src, idx.values, idx.validity, idx.length)) failures_++;
            ladle_column_release(&h);
          }
          ladle_column_release(&dout);
        }
        ladle_column_release(&didx);
      }
      ladle_column_release(&idx);
      free(expect);
      ladle_column_release(&mask);
      ladle_column_release(&dsrc);
      ladle_column_release(&src);
    }
}

/* ------------------------------------------------------------ Parquet pages */

/* A growing byte buffer for the pages the Parquet case writes. */
typedef struct pbuf {
  uint8_t *p;
  int64_t n, cap;
} pbuf;

static void pb_put(pbuf *b, const void *src, int64_t n) {
  if (n <= 0) return;
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, (size_t)b->cap);
  }
  memcpy(b->p + b->n, src, (size_t)n);
  b->n += n;
}

static void pb_varint(pbuf *b, uint64_t v) {
  do {
    uint8_t x = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) x |= 0x80;
    pb_put(b, &x, 1);
  } while (v);
}

/* v[0..n) as an RLE/bit-packed hybrid of bit width bw: runs of 8 or more
 * equal values as RLE runs, the rest bit-packed in groups of 8 (the last
 * group padded), runs of one kind of up to 64 values at a time. */
static void pb_hybrid(pbuf *b, const uint32_t *v, int64_t n, int bw) {
  for (int64_t i = 0; i < n;) {
    int64_t r = i + 1;
    while (r < n && v[r] == v[i]) r++;
    if (r - i >= 8) {
      pb_varint(b, (uint64_t)(r - i) << 1);
      for (int k = 0; k < (bw + 7) / 8; k++) {
        uint8_t x = (uint8_t)(v[i] >> (8 * k));
        pb_put(b, &x, 1);
      }
      i = r;
      continue;
    }
    int64_t m = LADLE_MIN(n - i, 64), groups = (m + 7) / 8;
    pb_varint(b, (uint64_t)groups << 1 | 1);
    uint8_t bytes[64 * 4];
    memset(bytes, 0, sizeof bytes);
    for (int64_t j = 0; j < m; j++)
      for (int k = 0; k < bw; k++)
        if (v[i + j] >> k & 1) bytes[(j * bw + k) >> 3] |= (uint8_t)(1 << ((j * bw + k) & 7));
    pb_put(b, bytes, groups * bw);
    i += m;
  }
}

/* The pages pg[0..np) of b rewritten into b2/p2 as `form` says: 1, some
 * data pages as v1 pages (their levels' length first); 2, those and every
 * page zstd-compressed (a v2 page's values only), but a String column's
 * dictionaries, which the caller parses and never compresses. */
static void reform_pages(const pbuf *b, const ladle_kpage *pg, size_t np, bool nullable,
                         bool strings, int form, pbuf *b2, ladle_kpage *p2) {
  for (size_t i = 0; i < np; i++) {
    ladle_kpage q = pg[i];
    pbuf page = {NULL, 0, 0};
    bool data = q.kind != LADLE_KPAGE_DICTIONARY;
    bool v1 = data && form >= 1 && (form == 1 || i % 2 == (strings ? 1u : 0u));
    if (v1) {
      uint32_t l = (uint32_t)q.def_len;
      if (nullable) pb_put(&page, &l, 4);
      q.prefixed = 1;
      q.def_len = 0;
    }
    pb_put(&page, b->p + pg[i].offset, pg[i].size);
    while (b2->n % 8) pb_put(b2, "", 1);
    q.offset = b2->n;
#ifdef LADLE_HAVE_ZSTD
    if (form == 2 && (data || !strings)) {
      int64_t lvn = v1 ? 0 : q.def_len;
      size_t cap = ZSTD_compressBound((size_t)(page.n - lvn));
      uint8_t *z = malloc(cap + 1);
      size_t zn = ZSTD_compress(z, cap, page.p + lvn, (size_t)(page.n - lvn), 1);
      pb_put(b2, page.p, lvn);
      pb_put(b2, z, (int64_t)zn);
      free(z);
      q.len = page.n;
      q.size = lvn + (int64_t)zn;
      q.codec = LADLE_KCODEC_ZSTD;
    } else
#endif
    {
      pb_put(b2, page.p, page.n);
      q.size = page.n;
    }
    free(page.p);
    p2[i] = q;
  }
}

/* parquet_decode against the values the pages were written from: row groups
 * of a dictionary page and data pages alternately PLAIN and dictionary, with
 * definition levels (nulls in runs and alone) or none, 4- and 8-byte values;
 * then corrupt pages (an index past the dictionary, cut-off runs, a level
 * above 1, a wrong null count), which must be LADLE_ECORRUPT. */
static void check_parquet(suite *s) {
  if (s->be->parquet_decode == NULL) return;
  int64_t len[16], nl = lengths(s, len);
  for (int wi = 0; wi < 2; wi++)
    for (int64_t li = 0; li < nl; li++)
      for (int nullable = 0; nullable < 2; nullable++) {
        int w = wi ? 8 : 4;
        int64_t n = LADLE_MIN(len[li], 300007);
        ladle_dtype t = ladle_dtype_make(w == 8 ? LADLE_TYPE_INT64 : LADLE_TYPE_INT32);
        ladle_column want;
        if (ladle_column_alloc(t, n, nullable, 0, &want, &err_) != LADLE_OK) {
          failures_++;
          return;
        }
        pbuf b = {NULL, 0, 0};
        ladle_kpage *pg = calloc((size_t)(2 * n + 8), sizeof *pg);
        int64_t last_present = 0;
        size_t np = 0;
        uint32_t *lv = malloc((size_t)LADLE_MAX(n, 1) * 4),
                 *ix = malloc((size_t)LADLE_MAX(n, 1) * 4);
        for (int64_t row = 0, page = 0; row < n; page++) {
          /* a row group: its dictionary, then pages */
          int64_t rg_want = 1 + (int64_t)(test_rand() % 70000),
                  rg_rows = LADLE_MIN(n - row, rg_want);
          int dn = 1 + (int)(test_rand() % (page % 3 == 0 ? 3 : 5000));
          int bw = 0;
          while ((1 << bw) < dn) bw++;
          uint8_t dict[5000 * 8];
          for (int k = 0; k < dn * w; k++) dict[k] = (uint8_t)test_rand();
          while (b.n % 8) pb_put(&b, "", 1);
          int32_t dpage = (int32_t)np;
          pg[np++] = (ladle_kpage){.offset = b.n,
                                   .size = (int64_t)dn * w,
                                   .num_values = dn,
                                   .num_nulls = -1,
                                   .kind = LADLE_KPAGE_DICTIONARY,
                                   .dict = -1};
          pb_put(&b, dict, (int64_t)dn * w);
          for (int64_t end = row + rg_rows; row < end;) {
            int64_t m_want = 1 + (int64_t)(test_rand() % 30000), m = LADLE_MIN(end - row, m_want);
            bool dictp = (np + page) % 2 == 0;
            int64_t present = 0, nulls = 0;
            for (int64_t i = 0; i < m; i++) {
              uint64_t r = test_rand();
              lv[i] = nullable ? (r % 7 == 0 || (i / 100) % 9 == 4 ? 0 : 1) : 1;
              nulls += lv[i] == 0;
              if (nullable) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&want), row + i, lv[i] == 1);
              uint8_t *o = LADLE_COL_MUT(&want, uint8_t) + (row + i) * w;
              if (lv[i] == 0) {
                memset(o, 0, (size_t)w);
                continue;
              }
              uint32_t k = (uint32_t)((i / 16) % 3 == 0 ? (uint32_t)(i / 16) % (uint32_t)dn
                                                        : (uint32_t)(r >> 20) % (uint32_t)dn);
              ix[present++] = k;
              memcpy(o, dict + (int64_t)k * w, (size_t)w);
            }
            while (b.n % 8) pb_put(&b, "", 1);
            int64_t start = b.n;
            if (nullable) pb_hybrid(&b, lv, m, 1);
            int32_t def_len = (int32_t)(b.n - start);
            if (dictp) {
              uint8_t x = (uint8_t)bw;
              pb_put(&b, &x, 1);
              pb_hybrid(&b, ix, present, bw);
            } else {
              for (int64_t i = 0; i < present; i++) pb_put(&b, dict + (int64_t)ix[i] * w, w);
            }
            pg[np++] = (ladle_kpage){.offset = start,
                                     .size = b.n - start,
                                     .row = row,
                                     .num_values = m,
                                     .num_nulls = page % 2 ? nulls : -1,
                                     .def_len = def_len,
                                     .kind = dictp ? LADLE_KPAGE_DICT : LADLE_KPAGE_PLAIN,
                                     .dict = dpage};
            last_present = present;
            row += m;
          }
        }
        if (nullable) ladle_column_finish_nulls(&want);
        char what[96];
        snprintf(what, sizeof what, "parquet_decode of %d-byte values [%lld] nullable=%d", w,
                 (long long)n, nullable);
        ladle_column d;
        if (ran(s, s->be->parquet_decode(&s->ctx, b.p, b.n, pg, np, w, t, nullable, n, &d, &err_),
                what)) {
          same_down(s, &d, &want, what);
          ladle_column_release(&d);
        }
        /* the same pages as v1 pages (the levels' length first) and, where the
         * backend decompresses zstd, compressed: v1 pages whole, v2 pages' values */
        for (int form = 1; form <= 2; form++) {
          if (form == 2 && (s->be->parquet_codecs == NULL ||
                            !(s->be->parquet_codecs(&s->ctx) >> LADLE_KCODEC_ZSTD & 1)))
            break;
          pbuf b2 = {NULL, 0, 0};
          ladle_kpage *p2 = malloc(LADLE_MAX(np, 1) * sizeof *p2);
          reform_pages(&b, pg, np, nullable, false, form, &b2, p2);
          char what2[160];
          snprintf(what2, sizeof what2, "%s, %s", what, form == 1 ? "v1 pages" : "zstd pages");
          if (ran(s,
                  s->be->parquet_decode(&s->ctx, b2.p, b2.n, p2, np, w, t, nullable, n, &d, &err_),
                  what2)) {
            same_down(s, &d, &want, what2);
            ladle_column_release(&d);
          }
          /* a compressed page cut short does not decompress: corrupt */
          if (form == 2 && np > 1) {
            p2[np - 1].size = p2[np - 1].size > 8 ? p2[np - 1].size - 4 : p2[np - 1].size;
            p2[np - 1].len += 1;
            ladle_status st2 =
                s->be->parquet_decode(&s->ctx, b2.p, b2.n, p2, np, w, t, nullable, n, &d, &err_);
            if (st2 == LADLE_OK) ladle_column_release(&d);
            if (st2 != LADLE_ECORRUPT) {
              fprintf(stderr, "  [%s] %s, a cut compressed page: %s\n", s->be->name, what2,
                      ladle_status_name(st2));
              failures_++;
            }
          }
          free(b2.p);
          free(p2);
        }
        /* corrupt: each kind on a copy of the page table or bytes */
        for (int c = 0; c < 4 && n > 1000; c++) {
          if (c == 0 && last_present == 0) continue;
          ladle_kpage *bad = malloc(np * sizeof *bad);
          memcpy(bad, pg, np * sizeof *bad);
          uint8_t *bb = malloc((size_t)b.n);
          memcpy(bb, b.p, (size_t)b.n);
          size_t at = np - 1;                           /* the last data page */
          if (c == 0) bad[bad[at].dict].num_values = 0; /* every index out of range */
          if (c == 1) bad[at].size = bad[at].def_len + (nullable ? 0 : 1); /* values cut off */
          if (c == 2 && nullable) bad[at].def_len = 1;                     /* levels cut off */
          if (c == 2 && !nullable) bad[at].num_values = n + 1;    /* rows past the column */
          if (c == 3) bad[at].num_nulls = bad[at].num_values + 1; /* a wrong null count */
          if (c == 0 && bad[at].kind == LADLE_KPAGE_PLAIN) bad[at].kind = LADLE_KPAGE_DICT;
          ladle_status st =
              s->be->parquet_decode(&s->ctx, bb, b.n, bad, np, w, t, nullable, n, &d, &err_);
          if (st == LADLE_OK) ladle_column_release(&d);
          if (st != LADLE_ECORRUPT) {
            fprintf(stderr, "  [%s] %s, corrupt case %d: %s (%s)\n", s->be->name, what, c,
                    ladle_status_name(st), st == LADLE_OK ? "no error" : err_.message);
            failures_++;
          }
          free(bad);
          free(bb);
        }
        ladle_column_release(&want);
        free(b.p);
        free(pg);
        free(lv);
        free(ix);
      }
}

/* parquet_decode of a String column (width 0): dictionary pages as the
 * caller parses them (Int64 offsets from 0, then the bytes), DICT data pages
 * with levels or none, as v2 pages, v1 pages and (where the backend takes
 * zstd) compressed; and a dictionary whose offsets run past its page. */
static void check_parquet_strings(suite *s) {
  if (s->be->parquet_decode == NULL) return;
  int64_t len[16], nl = lengths(s, len);
  ladle_dtype t = ladle_dtype_make(LADLE_TYPE_STRING);
  bool zstd =
      s->be->parquet_codecs != NULL && (s->be->parquet_codecs(&s->ctx) >> LADLE_KCODEC_ZSTD & 1);
  for (int64_t li = 0; li < nl; li++)
    for (int nullable = 0; nullable < 2; nullable++) {
      int64_t n = LADLE_MIN(len[li], 200003);
      uint32_t *lv = malloc((size_t)LADLE_MAX(n, 1) * 4), *ix = malloc((size_t)LADLE_MAX(n, 1) * 4);
      uint32_t *rowent = malloc((size_t)LADLE_MAX(n, 1) * 4);
      ladle_kpage *pg = calloc((size_t)(2 * n + 8), sizeof *pg);
      char ***ents = NULL; /* each row group's dictionary entries, freed at the end */
      int *dns = NULL, nrg = 0;
      pbuf b = {NULL, 0, 0};
      size_t np = 0;
      /* the rows' strings, kept to build the reference */
      char **want_s = calloc((size_t)LADLE_MAX(n, 1), sizeof *want_s);
      for (int64_t row = 0, page = 0; row < n; page++) {
        int64_t rg_want = 1 + (int64_t)(test_rand() % 50000), rg_rows = LADLE_MIN(n - row, rg_want);
        int dn = 1 + (int)(test_rand() % (page % 2 ? 3 : 900));
        int bw = 0;
        while ((1 << bw) < dn) bw++;
        /* the dictionary: offsets, then the entries (some empty, some long) */
        while (b.n % 8) pb_put(&b, "", 1);
        int32_t dpage = (int32_t)np;
        int64_t doff0 = b.n, at = 0;
        char **ent = malloc((size_t)dn * sizeof *ent);
        int64_t *off = malloc((size_t)(dn + 1) * 8);
        off[0] = 0;
        for (int k = 0; k < dn; k++) {
          int l = k % 7 == 3 ? 0 : (int)(test_rand() % (k % 11 == 5 ? 300 : 12));
          ent[k] = malloc((size_t)l + 1);
          for (int c = 0; c < l; c++) ent[k][c] = (char)('a' + test_rand() % 26);
          ent[k][l] = 0;
          at += l;
          off[k + 1] = at;
        }
        pb_put(&b, off, (int64_t)(dn + 1) * 8);
        for (int k = 0; k < dn; k++) pb_put(&b, ent[k], (int64_t)strlen(ent[k]));
        pg[np++] = (ladle_kpage){.offset = doff0,
                                 .size = b.n - doff0,
                                 .num_values = dn,
                                 .num_nulls = -1,
                                 .kind = LADLE_KPAGE_DICTIONARY,
                                 .dict = -1};
        for (int64_t end = row + rg_rows; row < end;) {
          int64_t m_want = 1 + (int64_t)(test_rand() % 20000), m = LADLE_MIN(end - row, m_want);
          int64_t present = 0;
          for (int64_t i = 0; i < m; i++) {
            lv[i] = nullable ? (test_rand() % 5 == 0 ? 0 : 1) : 1;
            if (lv[i] == 0) {
              rowent[row + i] = UINT32_MAX;
              continue;
            }
            uint32_t k =
                (uint32_t)((i / 32) % 2 ? (i / 32) % (uint64_t)dn : test_rand() % (uint64_t)dn);
            ix[present++] = k;
            rowent[row + i] = k;
            want_s[row + i] = ent[k];
          }
          while (b.n % 8) pb_put(&b, "", 1);
          int64_t start = b.n;
          if (nullable) pb_hybrid(&b, lv, m, 1);
          int32_t def_len = (int32_t)(b.n - start);
          uint8_t x = (uint8_t)bw;
          pb_put(&b, &x, 1);
          pb_hybrid(&b, ix, present, bw);
          pg[np++] = (ladle_kpage){.offset = start,
                                   .size = b.n - start,
                                   .row = row,
                                   .num_values = m,
                                   .num_nulls = -1,
                                   .def_len = def_len,
                                   .kind = LADLE_KPAGE_DICT,
                                   .dict = dpage};
          row += m;
        }
        free(off);
        ents = realloc(ents, sizeof *ents * (size_t)(nrg + 1));
        dns = realloc(dns, sizeof *dns * (size_t)(nrg + 1));
        ents[nrg] = ent;
        dns[nrg++] = dn;
      }
      /* the reference column */
      int64_t total = 0;
      for (int64_t r = 0; r < n; r++)
        total += rowent[r] != UINT32_MAX ? (int64_t)strlen(want_s[r]) : 0;
      ladle_column want;
      if (ladle_column_alloc(t, n, nullable, total, &want, &err_) != LADLE_OK) {
        failures_++;
        return;
      }
      int64_t *wo = LADLE_COL_MUT(&want, int64_t);
      wo[0] = 0;
      for (int64_t r = 0; r < n; r++) {
        bool v = rowent[r] != UINT32_MAX;
        int64_t l = v ? (int64_t)strlen(want_s[r]) : 0;
        if (l > 0) memcpy(LADLE_COL_CHARS_MUT(&want) + wo[r], want_s[r], (size_t)l);
        wo[r + 1] = wo[r] + l;
        if (nullable) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&want), r, v);
      }
      if (nullable) ladle_column_finish_nulls(&want);
      for (int form = 0; form <= 2; form++) {
        if (form == 2 && !zstd) break;
        pbuf b2 = {NULL, 0, 0};
        ladle_kpage *p2 = malloc(LADLE_MAX(np, 1) * sizeof *p2);
        reform_pages(&b, pg, np, nullable, true, form, &b2, p2);
        char what[128];
        snprintf(what, sizeof what, "parquet_decode of strings [%lld] nullable=%d form=%d",
                 (long long)n, nullable, form);
        ladle_column d;
        if (ran(s, s->be->parquet_decode(&s->ctx, b2.p, b2.n, p2, np, 0, t, nullable, n, &d, &err_),
                what)) {
          same_down(s, &d, &want, what);
          ladle_column_release(&d);
        }
        if (form == 0 && np > 1) { /* a dictionary offset past its page */
          int64_t *o0 = (int64_t *)(void *)(b2.p + p2[0].offset);
          o0[p2[0].num_values] = p2[0].size;
          ladle_status st =
              s->be->parquet_decode(&s->ctx, b2.p, b2.n, p2, np, 0, t, nullable, n, &d, &err_);
          if (st == LADLE_OK) ladle_column_release(&d);
          if (st != LADLE_ECORRUPT) {
            fprintf(stderr, "  [%s] %s, a bad dictionary: %s\n", s->be->name, what,
                    ladle_status_name(st));
            failures_++;
          }
        }
        free(b2.p);
        free(p2);
      }
      ladle_column_release(&want);
      for (int g = 0; g < nrg; g++) {
        for (int k = 0; k < dns[g]; k++) free(ents[g][k]);
        free(ents[g]);
      }
      free(ents);
      free(dns);
      free(b.p);
      free(pg);
      free(lv);
      free(ix);
      free(rowent);
      free(want_s);
    }
}

/* compress_pages against the host's zstd: batches of 1 to 300 pages of many
 * sizes (empty, odd, 64 KiB and a byte over, the large case's) and kinds (one
 * byte repeated, bytes that do not compress, counters), each frame found
 * where off/outlen say, one frame exactly, and decompressed here to the
 * page; a page over 16 MiB and another codec are LADLE_ENOTSUP. */
static void check_compress(suite *s) {
#ifdef LADLE_HAVE_ZSTD
  if (s->be->compress_pages == NULL || s->be->compress_codecs == NULL ||
      !(s->be->compress_codecs(&s->ctx) >> LADLE_KCODEC_ZSTD & 1))
    return;
  const int64_t sizes[] = {0, 1, 7, 8, 9, 4095, 65536, 65537, 524291, s->large};
  const size_t ns = sizeof sizes / sizeof sizes[0], counts[] = {1, 3, 40, 300};
  uint64_t x = 88172645463325252ull;
  for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
    size_t n = counts[ci];
    uint8_t **pg = calloc(n, sizeof *pg);
    int64_t *len = calloc(n, sizeof *len), *off = calloc(n, sizeof *off),
            *zl = calloc(n, sizeof *zl);
    for (size_t i = 0; i < n; i++) {
      len[i] = sizes[(i * 7 + ci) % ns];
      pg[i] = malloc((size_t)LADLE_MAX(len[i], 1));
      for (int64_t b = 0; b < len[i]; b++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        pg[i][b] = i % 3 == 0 ? (uint8_t)i : i % 3 == 1 ? (uint8_t)x : (uint8_t)(b / 8 >> (b % 8));
      }
    }
    uint8_t *block = NULL;
    char what[96];
    snprintf(what, sizeof what, "compress_pages of %zu pages", n);
    if (ran(s,
            s->be->compress_pages(&s->ctx, LADLE_KCODEC_ZSTD, n, (const uint8_t *const *)pg, len,
                                  &block, off, zl, &err_),
            what)) {
      int bad = 0;
      int64_t end = 0;
      for (size_t i = 0; i < n && bad < 3; i++) {
        uint8_t *back = malloc((size_t)len[i] + 1);
        const uint8_t *f = block + off[i];
        size_t fz = ZSTD_findFrameCompressedSize(f, (size_t)zl[i]);
        size_t got = ZSTD_decompress(back, (size_t)len[i] + 1, f, (size_t)zl[i]);
        if (off[i] != end || zl[i] <= 0 || ZSTD_isError(fz) || fz != (size_t)zl[i] ||
            ZSTD_isError(got) || got != (size_t)len[i] || memcmp(back, pg[i], got) != 0) {
          fprintf(stderr, "  [%s] %s: page %zu (%lld bytes) at %lld, %lld stored: wrong\n",
                  s->be->name, what, i, (long long)len[i], (long long)off[i], (long long)zl[i]);
          failures_++;
          bad++;
        }
        end = off[i] + zl[i];
        free(back);
      }
    }
    free(block);
    for (size_t i = 0; i < n; i++) free(pg[i]);
    free(pg);
    free(len);
    free(off);
    free(zl);
  }
  /* what it must refuse */
  int64_t big = ((int64_t)16 << 20) + 1, one = 1, o1, z1;
  uint8_t *bp = malloc((size_t)big), *block = NULL;
  memset(bp, 5, (size_t)big);
  const uint8_t *bpp = bp;
  ladle_status st =
      s->be->compress_pages(&s->ctx, LADLE_KCODEC_ZSTD, 1, &bpp, &big, &block, &o1, &z1, &err_);
  CHECK_EQ_I(st, LADLE_ENOTSUP);
  CHECK(block == NULL);
  free(block);
  block = NULL;
  st = s->be->compress_pages(&s->ctx, 1 /* snappy */, 1, &bpp, &one, &block, &o1, &z1, &err_);
  CHECK_EQ_I(st, LADLE_ENOTSUP);
  CHECK(block == NULL);
  free(block);
  free(bp);
#else
  LADLE_UNUSED(s);
#endif
}

static void run_suite(suite *s, const ladle_allocator *parent) {
  int before = failures_;
  printf(
      "[%s] conformance: copies, sequence, running functions and shifts, select, filter, take, "
      "lists, sum, min/max/count, "
      "binary, row "
      "programs, "
      "group-by, sort, join, strings, hash and range partitions, "
      "errors, limits "
      "(large: "
      "%lld rows)\n",
      s->be->name, (long long)s->large);
  check_copies(s);
  check_stream_wait(s);
  check_pack_bits(s);
  check_sequence(s);
  check_cumulative(s);
  check_select_take_filter(s);
  check_lists(s);
  check_sum(s);
  check_min_max_count(s);
  check_binary(s);
  check_program(s);
  check_groups(s);
  check_sort(s);
  check_join(s);
  check_join_probe(s);
  check_strings(s);
  check_parquet(s);
  check_parquet_strings(s);
  check_compress(s);
  check_hash_partition(s);
  check_range_partition(s);
  check_partition_errors(s);
  check_errors(s);
  check_limit(s, parent);
  int64_t left = ladle_mr_bytes(s->mr);
  if (left != 0) {
    fprintf(stderr, "  [%s] %lld bytes still allocated after every column was released\n",
            s->be->name, (long long)left);
    failures_++;
  }
  printf("[%s] %s, %d not supported, peak %lld bytes\n", s->be->name,
         failures_ == before ? "passed" : "FAILED", s->unsupported,
         (long long)ladle_mr_peak(s->mr));
}

/* Large inputs are smaller under the sanitizers. */
#if defined(__SANITIZE_ADDRESS__)
#define LARGE_ROWS 70001
#else
#define LARGE_ROWS 1000003
#endif

TEST(cpu_backend_conforms) {
  suite s = {0};
  s.be = ladle_backend_cpu();
  s.strict = true;
  s.large = LARGE_ROWS;
  CHECK_OK(ladle_mr_create(ladle_allocator_host(), 0, &s.mr, &err_));
  s.ctx.mr = s.mr;
  CHECK(s.be->abi == LADLE_BACKEND_ABI && s.be->struct_size == sizeof(ladle_backend));
  run_suite(&s, ladle_allocator_host());
  CHECK_EQ_I(s.unsupported, 0);
  ladle_mr_release(s.mr);
}

TEST(cuda_backend_conforms_or_says_why_not) {
  const ladle_backend *be = NULL;
  const ladle_allocator *dev = NULL;
  void *stream = NULL;
  ladle_status st = ladle_backend_open("cuda", 0, &be, &dev, &stream, &err_);
  const char *req = getenv("LADLE_REQUIRE_CUDA");
  if (st != LADLE_OK) {
    /* no GPU here, or the backend not built: a clear message that says which */
    CHECK(strstr(err_.message, "cuda") != NULL);
    CHECK(strstr(err_.message, "could not be loaded") != NULL ||
          strstr(err_.message, "no usable CUDA device") != NULL ||
          strstr(err_.message, "CUDA device") != NULL ||
          strstr(err_.message, "built for another version of ladle") != NULL);
    printf("SKIP cuda: %s: %s\n", ladle_status_name(st), err_.message);
    if (req != NULL && strcmp(req, "1") == 0) {
      fprintf(stderr, "  LADLE_REQUIRE_CUDA=1 but the CUDA backend did not open\n");
      failures_++;
    }
    return;
  }
  /* an ordinal past the devices: a clean error naming how many there are */
  const ladle_backend *be2;
  const ladle_allocator *dev2;
  void *stream2;
  CHECK(ladle_backend_open("cuda", 63, &be2, &dev2, &stream2, &err_) == LADLE_EDEVICE);
  CHECK(strstr(err_.message, "cuda:63") != NULL);
  suite s = {0};
  s.be = be;
  s.strict = true;           /* the tracer bullet's entries run every type the suite makes */
  s.large = 1 << 22 | 12345; /* 4.2M rows: the sum's grid-stride loop goes round */
  /* smaller under compute-sanitizer, whose checks slow every access
   * (tools/gpu/test_gpu.sh sets it for its memcheck runs) */
  const char *lg = getenv("LADLE_CONFORMANCE_LARGE");
  if (lg != NULL && atol(lg) > 0) s.large = atol(lg);
  CHECK_OK(ladle_mr_create(dev, 0, &s.mr, &err_));
  s.ctx.mr = s.mr;
  s.ctx.stream = stream;
  s.ctx.device_id = 0;
  CHECK(be->device == LADLE_DEVICE_CUDA && be->abi == LADLE_BACKEND_ABI);
  run_suite(&s, dev);
  ladle_mr_release(s.mr);
}
