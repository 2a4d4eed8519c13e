/* lists.c — computing on LIST columns: str.split into lists, list.len,
 * list.slice, casts of a list's elements, implode (a group's values as one
 * list) and explode (lists unnested into rows). fill_null and when choose
 * whole lists through func.c's and ladle_cpu_when's concat + gather.
 *
 * A LIST column is int64 offsets[length + 1] into its child column of
 * elements (core.h); offsets[0] need not be 0 after a slice, so every
 * element range here is read as [offsets[i], offsets[i + 1]) of the child. */
#define _GNU_SOURCE /* memmem */
#include <string.h>

#include "cpu.h"

static inline int64_t list_start(const ladle_column *c, int64_t i) {
  return ((const int64_t *)c->values)[i];
}
static inline int64_t list_count(const ladle_column *c, int64_t i) {
  const int64_t *o = c->values;
  return o[i + 1] - o[i];
}

/* A LIST column of n rows whose offsets are o[0..n] (taken over) into `child`
 * (taken over), valid where `valid_from` is (NULL: all rows valid). */
static ladle_status make_list(ladle_dtype type, int64_t n, const int64_t *o,
                              const ladle_column *valid_from, ladle_column *child,
                              ladle_column *out, ladle_error *err) {
  ladle_column c;
  bool nullable = valid_from != NULL && valid_from->validity != NULL;
  ladle_status st = ladle_column_alloc(type, n, nullable, 0, &c, err);
  if (st != LADLE_OK) {
    ladle_column_release(child);
    return st;
  }
  memcpy(LADLE_COL_MUT(&c, int64_t), o, (size_t)(n + 1) * sizeof *o);
  if (nullable) memcpy(LADLE_COL_VALIDITY_MUT(&c), valid_from->validity, ladle_bitmap_bytes(n));
  st = ladle_column_set_child(&c, child, err);
  if (st != LADLE_OK) {
    ladle_column_release(&c);
    return st;
  }
  ladle_column_finish_nulls(&c);
  *out = c;
  return LADLE_OK;
}

/* ------------------------------------------------------------- str.split */

/* The byte length of the UTF-8 character at s (1 for a stray byte). */
static int64_t char_bytes(const char *s, int64_t left) {
  unsigned char b = (unsigned char)s[0];
  int64_t w = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return w <= left ? w : left;
}

/* Polars' str.split(by): the pieces between non-overlapping occurrences of
 * `by`, left to right ("" gives [""]); by "" the characters ("" gives []).
 * A null string gives a null list. */
static ladle_status str_split(const ladle_column *x, const char *by, ladle_column *out,
                              ladle_error *err) {
  int64_t n = x->length, blen = (int64_t)strlen(by), elems = 0, bytes = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!ladle_column_valid(x, i)) continue;
    const char *s = ladle_str_ptr(x, i);
    int64_t len = ladle_str_len(x, i);
    if (blen == 0) {
      for (int64_t p = 0; p < len; p += char_bytes(s + p, len - p)) elems++;
      bytes += len;
      continue;
    }
    elems++;
    bytes += len;
    for (const char *p = s, *end = s + len;;) {
      const char *h = memmem(p, (size_t)(end - p), by, (size_t)blen);
      if (h == NULL) break;
      elems++;
      bytes -= blen;
      p = h + blen;
    }
  }
  int64_t *o = malloc((size_t)(n + 1) * sizeof *o);
  if (o == NULL) return LADLE_OOM(err, "str.split");
  ladle_column child;
  ladle_status st =
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_STRING), elems, false, bytes, &child, err);
  if (st != LADLE_OK) {
    free(o);
    return st;
  }
  int64_t *co = LADLE_COL_MUT(&child, int64_t);
  char *cc = (char *)child.chars;
  int64_t e = 0, pos = 0;
  co[0] = 0;
  o[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    if (ladle_column_valid(x, i)) {
      const char *s = ladle_str_ptr(x, i);
      int64_t len = ladle_str_len(x, i);
      if (blen == 0) {
        for (int64_t p = 0; p < len;) {
          int64_t w = char_bytes(s + p, len - p);
          memcpy(cc + pos, s + p, (size_t)w);
          pos += w;
          co[++e] = pos;
          p += w;
        }
      } else {
        const char *p = s, *end = s + len;
        for (;;) {
          const char *h = memmem(p, (size_t)(end - p), by, (size_t)blen);
          const char *stop = h != NULL ? h : end;
          if (stop > p) memcpy(cc + pos, p, (size_t)(stop - p));
          pos += stop - p;
          co[++e] = pos;
          if (h == NULL) break;
          p = h + blen;
        }
      }
    }
    o[i + 1] = e;
  }
  st = make_list(ladle_dtype_list(LADLE_TYPE_STRING), n, o, x, &child, out, err);
  free(o);
  return st;
}

/* ---------------------------------------------------- list.len, list.slice */

static ladle_status list_len(const ladle_column *x, ladle_column *out, ladle_error *err) {
  int64_t n = x->length;
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT32), n, x->validity != NULL, 0, &o, err));
  uint32_t *O = LADLE_COL_MUT(&o, uint32_t);
  for (int64_t i = 0; i < n; i++) O[i] = (uint32_t)list_count(x, i);
  if (x->validity != NULL) memcpy(LADLE_COL_VALIDITY_MUT(&o), x->validity, ladle_bitmap_bytes(n));
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}

/* Polars' slice window of a list of `len` elements: [offset, offset + length)
 * with a negative offset from the end, clamped to [0, len] (the part before
 * the start is lost); length < 0: to the end. */
static void slice_window(int64_t offset, int64_t length, int64_t len, int64_t *a, int64_t *b) {
  int64_t start = offset >= 0 ? offset : len + offset;
  int64_t stop = length < 0 || start > INT64_MAX - length ? INT64_MAX : start + length;
  *a = LADLE_MIN(LADLE_MAX(start, 0), len);
  *b = LADLE_MIN(LADLE_MAX(stop, *a), len);
}

static ladle_status list_slice(const ladle_column *x, int64_t offset, int64_t length,
                               ladle_column *out, ladle_error *err) {
  int64_t n = x->length, total = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t a, b;
    slice_window(offset, length, list_count(x, i), &a, &b);
    total += b - a;
  }
  int64_t *o = malloc((size_t)(n + 1) * sizeof *o);
  int64_t *idx = malloc((size_t)LADLE_MAX(total, 1) * sizeof *idx);
  if (o == NULL || idx == NULL) {
    free(o);
    free(idx);
    return LADLE_OOM(err, "list.slice");
  }
  int64_t e = 0;
  o[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t a, b, s = list_start(x, i);
    slice_window(offset, length, list_count(x, i), &a, &b);
    for (int64_t k = a; k < b; k++) idx[e++] = s + k;
    o[i + 1] = e;
  }
  ladle_column child;
  ladle_status st = ladle_column_gather(x->child, idx, total, &child, err);
  free(idx);
  if (st == LADLE_OK) st = make_list(x->type, n, o, x, &child, out, err);
  free(o);
  return st;
}

ladle_status ladle_cpu_list_func(const ladle_kctx *ctx, const ladle_kexpr *e,
                                 const ladle_column *args, size_t nargs, ladle_column *out,
                                 ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(nargs);
  const ladle_column *x = &args[0];
  switch ((ladle_func)e->op) {
    case LADLE_FN_STR_SPLIT:
      if (x->type.id == LADLE_TYPE_NULL)
        return ladle_column_nulls(ladle_dtype_list(LADLE_TYPE_STRING), x->length, out, err);
      return str_split(x, e->fopts.str != NULL ? e->fopts.str : "", out, err);
    case LADLE_FN_LIST_LEN:
      return list_len(x, out, err);
    case LADLE_FN_LIST_SLICE:
      return list_slice(x, e->fopts.i64, e->fopts.i64b, out, err);
    default:
      return ladle_err_set(err, LADLE_ENOTSUP, "function %s on lists",
                           ladle_func_name((ladle_func)e->op));
  }
}

/* ------------------------------------------------------------------ casts */

ladle_status ladle_cpu_list_cast(const ladle_kctx *ctx, const ladle_column *in, ladle_dtype to,
                                 ladle_cast_mode mode, const char *name, ladle_column *out,
                                 ladle_error *err) {
  /* the elements the rows reach, cast as a column of their own */
  int64_t n = in->length, a = n > 0 ? list_start(in, 0) : 0, b = n > 0 ? list_start(in, n) : 0;
  ladle_column part, child;
  LADLE_RETURN_NOT_OK(ladle_column_slice(in->child, a, b - a, &part, err));
  ladle_status st = ladle_cpu_cast(ctx, &part, *to.child, mode, name, &child, err);
  ladle_column_release(&part);
  if (st != LADLE_OK) return st;
  int64_t *o = malloc((size_t)(n + 1) * sizeof *o);
  if (o == NULL) {
    ladle_column_release(&child);
    return LADLE_OOM(err, "list cast");
  }
  for (int64_t i = 0; i <= n; i++) o[i] = list_start(in, i) - a;
  st = make_list(to, n, o, in, &child, out, err);
  free(o);
  return st;
}

/* ---------------------------------------------------------------- implode */

ladle_status ladle_cpu_implode(const ladle_kctx *ctx, const ladle_column *in, ladle_groups *g,
                               ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_cpu_groups_csr(ctx, g, err));
  ladle_dtype lt = ladle_dtype_list(in->type.id);
  if (lt.id != LADLE_TYPE_LIST)
    return ladle_err_set(err, LADLE_ENOTSUP, "implode of a %s column",
                         ladle_dtype_name(in->type, NULL, 0));
  ladle_column child;
  LADLE_RETURN_NOT_OK(ladle_column_gather(in, g->rows, g->nrows, &child, err));
  child.type = *lt.child; /* a TIME or BINARY child keeps its own type */
  return make_list(lt, g->ngroups, g->offsets, NULL, &child, out, err);
}

/* ---------------------------------------------------------------- explode */

/* The rows row i of the lists gives: its element count, or one null row for
 * a null list (keep_nulls) or an empty one (empty_as_null), or none. */
static inline int64_t explode_rows(const ladle_column *c, int64_t i, bool empty_as_null,
                                   bool keep_nulls, bool *nul) {
  *nul = false;
  if (!ladle_column_valid(c, i)) {
    *nul = keep_nulls;
    return keep_nulls ? 1 : 0;
  }
  int64_t k = list_count(c, i);
  if (k == 0 && empty_as_null) {
    *nul = true;
    return 1;
  }
  return k;
}

ladle_status ladle_cpu_explode(const ladle_kctx *ctx, const ladle_column *lists, size_t nlists,
                               bool empty_as_null, bool keep_nulls, const char *const *names,
                               ladle_column *rows, ladle_column *outs, ladle_error *err) {
  LADLE_UNUSED(ctx);
  if (nlists == 0) return ladle_err_set(err, LADLE_EINVAL, "explode of no column");
  int64_t n = lists[0].length, total = 0;
  for (size_t j = 0; j < nlists; j++)
    if (lists[j].type.id != LADLE_TYPE_LIST || lists[j].length != n)
      return ladle_err_set(err, LADLE_EINVAL, "explode: '%s' is not a list column of %lld rows",
                           names[j], (long long)n);
  for (int64_t i = 0; i < n; i++) {
    bool nul;
    int64_t k = explode_rows(&lists[0], i, empty_as_null, keep_nulls, &nul);
    for (size_t j = 1; j < nlists; j++) {
      bool nj;
      if (explode_rows(&lists[j], i, empty_as_null, keep_nulls, &nj) != k || nj != nul)
        return ladle_err_set(err, LADLE_ECOMPUTE,
                             "explode: columns '%s' and '%s' hold different numbers of "
                             "elements on row %lld",
                             names[0], names[j], (long long)i);
    }
    total += k;
  }
  ladle_column r;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT64), total, false, 0, &r, err));
  int64_t *R = LADLE_COL_MUT(&r, int64_t);
  int64_t *idx = malloc((size_t)LADLE_MAX(total, 1) * sizeof *idx);
  if (idx == NULL) {
    ladle_column_release(&r);
    return LADLE_OOM(err, "explode");
  }
  ladle_status st = LADLE_OK;
  size_t done = 0;
  for (; done < nlists && st == LADLE_OK; done++) {
    const ladle_column *c = &lists[done];
    int64_t e = 0;
    for (int64_t i = 0; i < n; i++) {
      bool nul;
      int64_t k = explode_rows(c, i, empty_as_null, keep_nulls, &nul);
      if (nul) {
        R[e] = i;
        idx[e++] = -1;
        continue;
      }
      int64_t s = list_start(c, i);
      for (int64_t q = 0; q < k; q++) {
        R[e] = i;
        idx[e++] = s + q;
      }
    }
    st = ladle_column_gather(c->child, idx, total, &outs[done], err);
  }
  free(idx);
  if (st != LADLE_OK) {
    for (size_t j = 0; j + 1 < done; j++) ladle_column_release(&outs[j]);
    ladle_column_release(&r);
    return st;
  }
  *rows = r;
  return LADLE_OK;
}
