/* columns.c — the CPU backend's column kernels (backend.h): selection, take,
 * filter, reductions, sequences, the rank of one-value series and the copies between devices, which
 * on the host are references. Outputs and scratch come from ctx->mr: each entry makes it the
 * thread's current resource while it runs (what every host allocation reads). */
#include "cpu.h"

ladle_status ladle_cpu_to_host(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                               ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(err);
  ladle_column_copy_ref(in, out);
  return LADLE_OK;
}

/* A reference, as to_host; but a column of type Null is refused as a GPU's
 * copy refuses it (no device holds one), so that the executor's column-kernel
 * path, run on these kernels, meets here what it would meet on a GPU. */
ladle_status ladle_cpu_to_device(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                 ladle_error *err) {
  if (in->type.id == LADLE_TYPE_NULL)
    return ladle_err_set(err, LADLE_ENOTSUP, "a copy of a null column on the device");
  return ladle_cpu_to_host(ctx, in, out, err);
}

static bool mask_row(const ladle_column *m, int64_t i) {
  return ((const uint8_t *)m->values)[i] != 0 && ladle_column_valid(m, i);
}

static ladle_status check_mask(const ladle_column *mask, int64_t rows, ladle_error *err) {
  if (mask->type.id != LADLE_TYPE_BOOL && mask->type.id != LADLE_TYPE_NULL)
    return ladle_err_set(err, LADLE_EINVAL, "selection mask of type %s, not Boolean",
                         ladle_dtype_name(mask->type, NULL, 0));
  if (rows >= 0 && mask->length != rows)
    return ladle_err_set(err, LADLE_EINVAL, "selection mask of %lld rows for %lld",
                         (long long)mask->length, (long long)rows);
  return LADLE_OK;
}

static ladle_status select_on(const ladle_kctx *ctx, const ladle_column *mask, ladle_column *out,
                              ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_mask(mask, -1, err));
  int64_t n = mask->length, k = 0;
  bool null = mask->type.id == LADLE_TYPE_NULL;
  if (!null)
    for (int64_t i = 0; i < n; i++) k += mask_row(mask, i);
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc_with(NULL, ladle_dtype_make(LADLE_TYPE_INT64), k, false, 0, &o, err));
  int64_t *idx = LADLE_COL_MUT(&o, int64_t);
  k = 0;
  if (!null) /* exactly k entries: no branch-free write one past the last */
    for (int64_t i = 0; i < n; i++)
      if (mask_row(mask, i)) idx[k++] = i;
  *out = o;
  return LADLE_OK;
}

static ladle_status check_index(const ladle_column *src, const ladle_column *idx,
                                ladle_error *err) {
  if (idx->type.id != LADLE_TYPE_INT64)
    return ladle_err_set(err, LADLE_EINVAL, "take: index column of type %s, not Int64",
                         ladle_dtype_name(idx->type, NULL, 0));
  if (ladle_column_view_only(src))
    return ladle_err_set(err, LADLE_ENOTSUP, "take of a view-only column");
  return LADLE_OK;
}

static ladle_status take_on(const ladle_kctx *ctx, const ladle_column *src, const ladle_column *idx,
                            ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_index(src, idx, err));
  const int64_t *ix = idx->values;
  int64_t n = idx->length;
  for (int64_t i = 0; i < n; i++)
    if (ladle_column_valid(idx, i) && ix[i] >= src->length)
      return ladle_err_set(err, LADLE_EINVAL, "take: index %lld out of bounds for %lld rows",
                           (long long)ix[i], (long long)src->length);
  if (idx->null_count == 0) return ladle_column_gather(src, ix, n, out, err);
  /* a null index is a null row: as index -1 */
  int64_t *tmp = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *tmp, false);
  if (tmp == NULL) return LADLE_OOM(err, "take");
  for (int64_t i = 0; i < n; i++) tmp[i] = ladle_column_valid(idx, i) ? ix[i] : -1;
  ladle_status st = ladle_column_gather(src, tmp, n, out, err);
  ladle_scratch_free(tmp);
  LADLE_UNUSED(ctx);
  return st;
}

static ladle_status filter_on(const ladle_kctx *ctx, const ladle_column *src,
                              const ladle_column *mask, ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_mask(mask, src->length, err));
  int64_t n = src->length, k = 0;
  if (mask->type.id == LADLE_TYPE_NULL) return ladle_column_slice(src, 0, 0, out, err);
  uint8_t *keep = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1), false);
  if (keep == NULL) return LADLE_OOM(err, "filter");
  for (int64_t i = 0; i < n; i++) k += keep[i] = mask_row(mask, i);
  ladle_status st;
  if (src->type.id == LADLE_TYPE_LIST) {
    /* lists only gather */
    ladle_column sel;
    st = select_on(ctx, mask, &sel, err);
    if (st == LADLE_OK) {
      st = ladle_column_gather(src, sel.values, sel.length, out, err);
      ladle_column_release(&sel);
    }
  } else {
    st = ladle_column_compact(src, keep, k, out, err);
  }
  ladle_scratch_free(keep);
  return st;
}

/* The sum of the valid values of integer column c, wrapping in 64 bits. */
#define SUM_INT(T, c, acc)                                     \
  do {                                                         \
    const T *v__ = (const T *)(c)->values;                     \
    for (int64_t i = 0; i < (c)->length; i++)                  \
      if (ladle_column_valid((c), i)) acc += (uint64_t)v__[i]; \
  } while (0)

/* min/max of a whole column: the aggregation kernel over one group (the
 * executor's own path for a select of them, so the answers are the same). */
static ladle_status extreme_on(const ladle_kctx *ctx, bool is_max, const ladle_column *in,
                               ladle_column *out, ladle_error *err) {
  if (!ladle_reduce_extreme_type(in->type.id))
    return ladle_err_set(err, in->type.id == LADLE_TYPE_NULL ? LADLE_ENOTSUP : LADLE_EINVAL,
                         "%s of a %s column as a column kernel", is_max ? "max" : "min",
                         ladle_dtype_name(in->type, NULL, 0));
  ladle_groups g;
  memset(&g, 0, sizeof g);
  g.nrows = in->length;
  g.ngroups = 1;
  g.whole = true;
  g.first = ladle_scratch_alloc(sizeof *g.first, false);
  if (g.first == NULL) return LADLE_OOM(err, "groups");
  g.first[0] = in->length > 0 ? 0 : -1;
  ladle_kexpr k;
  memset(&k, 0, sizeof k);
  k.kind = LADLE_KEX_AGG;
  k.op = is_max ? LADLE_AGG_MAX : LADLE_AGG_MIN;
  k.type = in->type;
  k.nargs = 1;
  k.arg_types = &in->type;
  k.arg_name = "";
  ladle_status st = ladle_cpu_aggregate(ctx, &k, in, &g, out, err);
  ladle_groups_release(&g);
  return st;
}

static ladle_status reduce_on(const ladle_kctx *ctx, ladle_reduce_op op, const ladle_column *in,
                              ladle_column *out, ladle_error *err) {
  if (op == LADLE_REDUCE_MIN || op == LADLE_REDUCE_MAX)
    return extreme_on(ctx, op == LADLE_REDUCE_MAX, in, out, err);
  if (op == LADLE_REDUCE_COUNT) {
    uint32_t c = 0;
    LADLE_RETURN_NOT_OK(ladle_reduce_count_value(in, &c, err));
    ladle_column o;
    LADLE_RETURN_NOT_OK(
        ladle_column_alloc_with(NULL, ladle_dtype_make(LADLE_TYPE_UINT32), 1, false, 0, &o, err));
    LADLE_COL_MUT(&o, uint32_t)[0] = c;
    *out = o;
    return LADLE_OK;
  }
  if (op != LADLE_REDUCE_SUM)
    return ladle_err_set(err, LADLE_EINVAL, "reduction %d: no such reduction", (int)op);
  ladle_type_id id = in->type.id;
  if (!(ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL || id == LADLE_TYPE_DURATION ||
        id == LADLE_TYPE_NULL))
    return ladle_err_set(err, LADLE_EINVAL, "sum of a %s column",
                         ladle_dtype_name(in->type, NULL, 0));
  ladle_dtype ot = ladle_sum_type(in->type);
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(NULL, ot, 1, false, 0, &o, err));
  if (ladle_type_is_float(id)) {
    /* as Polars sums one array: nulls as 0 in their places, in double */
    int64_t n = in->length;
    double *f = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *f, false);
    if (f == NULL) {
      ladle_column_release(&o);
      return LADLE_OOM(err, "sum");
    }
    for (int64_t i = 0; i < n; i++)
      f[i] = ladle_column_valid(in, i) ? ladle_column_value_f64(in, i) : 0.0;
    double s = ladle_cpu_float_sum(f, n);
    ladle_scratch_free(f);
    if (id == LADLE_TYPE_FLOAT32)
      LADLE_COL_MUT(&o, float)[0] = (float)s;
    else
      LADLE_COL_MUT(&o, double)[0] = s;
  } else {
    uint64_t acc = 0;
    if (id != LADLE_TYPE_NULL) LADLE_DISPATCH_NUM(ladle_type_phys(id), SUM_INT, in, acc);
    /* the wrapped sum in the output's width (little-endian: its low bytes) */
    memcpy(LADLE_COL_MUT(&o, uint8_t), &acc, ladle_type_width(ot.id));
  }
  *out = o;
  return LADLE_OK;
}

/* v[i] = start + i for i < n, in the column's type (the caller checked the range). */
#define FILL_SEQUENCE(T, col, start, n)                          \
  do {                                                           \
    T *v__ = LADLE_COL_MUT(col, T);                              \
    for (int64_t i = 0; i < (n); i++) v__[i] = (T)((start) + i); \
  } while (0)

static ladle_status sequence_on(const ladle_kctx *ctx, int64_t start, int64_t n, ladle_dtype type,
                                ladle_column *out, ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_RETURN_NOT_OK(ladle_sequence_check(start, n, type, err));
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(NULL, type, n, false, 0, &o, err));
  switch (type.id) {
    case LADLE_TYPE_INT32:
      FILL_SEQUENCE(int32_t, &o, start, n);
      break;
    case LADLE_TYPE_UINT32:
      FILL_SEQUENCE(uint32_t, &o, start, n);
      break;
    case LADLE_TYPE_UINT64:
      FILL_SEQUENCE(uint64_t, &o, start, n);
      break;
    default:
      FILL_SEQUENCE(int64_t, &o, start, n);
  }
  *out = o;
  return LADLE_OK;
}

static ladle_status rank_of_singletons_on(const ladle_column *in, ladle_dtype type,
                                          ladle_column *out, ladle_error *err) {
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc_with(NULL, type, in->length, in->validity != NULL, 0, &o, err));
  for (int64_t i = 0; i < in->length; i++) {
    if (type.id == LADLE_TYPE_FLOAT64)
      LADLE_COL_MUT(&o, double)[i] = 1.0;
    else
      LADLE_COL_MUT(&o, uint32_t)[i] = 1;
    if (in->validity != NULL)
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), i, ladle_column_valid(in, i));
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}

ladle_status ladle_cpu_select(const ladle_kctx *ctx, const ladle_column *mask, ladle_column *out,
                              ladle_error *err) {
  WITH_MR(ctx, select_on(ctx, mask, out, err));
}

ladle_status ladle_cpu_take(const ladle_kctx *ctx, const ladle_column *src, const ladle_column *idx,
                            ladle_column *out, ladle_error *err) {
  WITH_MR(ctx, take_on(ctx, src, idx, out, err));
}

ladle_status ladle_cpu_filter(const ladle_kctx *ctx, const ladle_column *src,
                              const ladle_column *mask, ladle_column *out, ladle_error *err) {
  WITH_MR(ctx, filter_on(ctx, src, mask, out, err));
}

ladle_status ladle_cpu_reduce(const ladle_kctx *ctx, ladle_reduce_op op, const ladle_column *in,
                              ladle_column *out, ladle_error *err) {
  WITH_MR(ctx, reduce_on(ctx, op, in, out, err));
}

ladle_status ladle_cpu_rank_of_singletons(const ladle_kctx *ctx, const ladle_column *in,
                                          ladle_dtype type, ladle_column *out, ladle_error *err) {
  if (type.id != LADLE_TYPE_FLOAT64 && type.id != LADLE_TYPE_UINT32)
    return ladle_err_set(err, LADLE_ENOTSUP, "rank of type %s", ladle_dtype_name(type, NULL, 0));
  WITH_MR(ctx, rank_of_singletons_on(in, type, out, err));
}

ladle_status ladle_cpu_sequence(const ladle_kctx *ctx, int64_t start, int64_t n, ladle_dtype type,
                                ladle_column *out, ladle_error *err) {
  WITH_MR(ctx, sequence_on(ctx, start, n, type, out, err));
}

/* A row program node by node through the binary kernel: the reference a
 * fused backend must agree with (the conformance suite compares them). */
ladle_status ladle_cpu_eval_program(const ladle_kctx *ctx, const ladle_program *p,
                                    const ladle_column *inputs, size_t ninputs, ladle_column *out,
                                    ladle_error *err) {
  if (p->n == 0 || p->n > LADLE_PROG_MAX)
    return ladle_err_set(err, LADLE_EINVAL, "a row program of %zu instructions", p->n);
  ladle_column v[LADLE_PROG_MAX];
  memset(v, 0, sizeof v);
  size_t done = 0;
  ladle_status st = LADLE_OK;
  for (; done < p->n && st == LADLE_OK; done++) {
    const ladle_pinstr *in = &p->ins[done];
    switch (in->code) {
      case LADLE_P_COL:
        if (in->a < 0 || (size_t)in->a >= ninputs) {
          st = ladle_err_set(err, LADLE_EINVAL, "a row program reads input %d of %zu", in->a,
                             ninputs);
          break;
        }
        ladle_column_copy_ref(&inputs[in->a], &v[done]);
        break;
      case LADLE_P_CONST:
        ladle_column_copy_ref(in->value, &v[done]);
        break;
      case LADLE_P_CAST:
        if (in->a < 0 || (size_t)in->a >= done) {
          st = ladle_err_set(err, LADLE_EINVAL, "a row program's operand is not before it");
          break;
        }
        st = ladle_cpu_cast(ctx, &v[in->a], in->type, LADLE_CAST_NON_STRICT, "program", &v[done],
                            err);
        break;
      case LADLE_P_IF: {
        if (in->a < 0 || in->b < 0 || in->c < 0 || (size_t)in->a >= done || (size_t)in->b >= done ||
            (size_t)in->c >= done || v[in->a].type.id != LADLE_TYPE_BOOL ||
            !ladle_dtype_equal(v[in->b].type, v[in->c].type) ||
            ladle_type_is_varlen(v[in->b].type.id)) {
          st = ladle_err_set(err, LADLE_EINVAL, "a row program's if is not over earlier values");
          break;
        }
        /* per row, b's value and validity where a is true and valid, else c's */
        const ladle_column *c = &v[in->a], *x = &v[in->b], *y = &v[in->c];
        int64_t n = LADLE_MAX(c->length, LADLE_MAX(x->length, y->length));
        ladle_column o;
        st = ladle_column_alloc(x->type, n, true, 0, &o, err);
        if (st != LADLE_OK) break;
        size_t w = ladle_type_width(x->type.id);
        for (int64_t r = 0; r < n; r++) {
          int64_t ic = c->length == 1 ? 0 : r;
          bool take = ladle_column_valid(c, ic) && ((const uint8_t *)c->values)[ic];
          const ladle_column *z = take ? x : y;
          int64_t iz = z->length == 1 ? 0 : r;
          memcpy(LADLE_COL_MUT(&o, uint8_t) + (size_t)r * w,
                 (const uint8_t *)z->values + (size_t)iz * w, w);
          ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), r, ladle_column_valid(z, iz));
        }
        ladle_column_finish_nulls(&o);
        v[done] = o;
        break;
      }
      case LADLE_P_WHERE: {
        if (in->a < 0 || in->b < 0 || (size_t)in->a >= done || (size_t)in->b >= done ||
            v[in->a].type.id != LADLE_TYPE_BOOL) {
          st = ladle_err_set(err, LADLE_EINVAL, "a row program's where is not over earlier values");
          break;
        }
        /* b's buffers, its validity and-ed with a's true and valid rows */
        const ladle_column *c = &v[in->a], *x = &v[in->b];
        int64_t n = LADLE_MAX(c->length, x->length);
        ladle_column o;
        st = ladle_column_alloc(x->type, n, true, 0, &o, err);
        if (st != LADLE_OK) break;
        size_t w = ladle_type_width(x->type.id);
        for (int64_t r = 0; r < n; r++) {
          int64_t ic = c->length == 1 ? 0 : r, ix = x->length == 1 ? 0 : r;
          memcpy(LADLE_COL_MUT(&o, uint8_t) + (size_t)r * w,
                 (const uint8_t *)x->values + (size_t)ix * w, w);
          bool keep = ladle_column_valid(c, ic) && ((const uint8_t *)c->values)[ic] &&
                      ladle_column_valid(x, ix);
          ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), r, keep);
        }
        ladle_column_finish_nulls(&o);
        v[done] = o;
        break;
      }
      case LADLE_P_FUNC: {
        bool two = in->op == LADLE_FN_FILL_NULL;
        if (in->a < 0 || (size_t)in->a >= done || (two && (in->b < 0 || (size_t)in->b >= done))) {
          st = ladle_err_set(err, LADLE_EINVAL, "a row program's operand is not before it");
          break;
        }
        ladle_dtype at[2] = {v[in->a].type, two ? v[in->b].type : v[in->a].type};
        ladle_kexpr k;
        memset(&k, 0, sizeof k);
        k.kind = LADLE_KEX_FUNC;
        k.op = in->op;
        k.type = in->type;
        k.nargs = two ? 2 : 1;
        k.arg_types = at;
        k.arg_name = "program";
        ladle_column args[2];
        args[0] = v[in->a];
        if (two) args[1] = v[in->b];
        st = ladle_cpu_func(ctx, &k, args, k.nargs, &v[done], err);
        break;
      }
      default: {
        if (in->a < 0 || in->b < 0 || (size_t)in->a >= done || (size_t)in->b >= done) {
          st = ladle_err_set(err, LADLE_EINVAL, "a row program's operand is not before it");
          break;
        }
        /* a column by one value: as the executor calls binary (Polars
         * divides such a column through the reciprocal) */
        ladle_kctx k = *ctx;
        k.many_rows = p->ins[in->a].code != LADLE_P_CONST && p->ins[in->b].code == LADLE_P_CONST &&
                      v[in->a].length > 1;
        st = ladle_cpu_binary(&k, in->op, &v[in->a], &v[in->b], in->type, &v[done], err);
      }
    }
    if (st != LADLE_OK) break;
  }
  if (st == LADLE_OK) ladle_column_copy_ref(&v[p->n - 1], out);
  for (size_t i = 0; i < done; i++) ladle_column_release(&v[i]);
  return st;
}

/* ------------------------------------------------------------ groups */

/* a column of n values of type t copied from host array v (width bytes each) */
static ladle_status column_of(ladle_dtype t, const void *v, int64_t n, ladle_column *out,
                              ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_column_alloc(t, n, false, 0, out, err));
  if (n > 0) memcpy(LADLE_COL_MUT(out, uint8_t), v, (size_t)n * ladle_type_width(t.id));
  return LADLE_OK;
}

static ladle_status group_keys_on(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                  const ladle_column *sel, ladle_dgroups *out, ladle_error *err) {
  if (nkeys == 0) return ladle_err_set(err, LADLE_EINVAL, "group_keys of no key");
  if (sel != NULL && (sel->type.id != LADLE_TYPE_INT64 || sel->null_count != 0))
    return ladle_err_set(err, LADLE_EINVAL, "group-by rows: an Int64 column without nulls");
  /* the selected rows' keys, then row numbers mapped back through sel */
  ladle_column *picked = NULL;
  if (sel != NULL) {
    picked = calloc(nkeys, sizeof *picked);
    if (picked == NULL) return LADLE_OOM(err, "group_keys");
    for (size_t i = 0; i < nkeys; i++) {
      ladle_status st = take_on(ctx, &keys[i], sel, &picked[i], err);
      if (st != LADLE_OK) {
        for (size_t j = 0; j < i; j++) ladle_column_release(&picked[j]);
        free(picked);
        return st;
      }
    }
  }
  ladle_groups g;
  memset(&g, 0, sizeof g);
  ladle_status st = ladle_cpu_group_ids(ctx, picked != NULL ? picked : keys, nkeys, &g, err);
  for (size_t i = 0; picked != NULL && i < nkeys; i++) ladle_column_release(&picked[i]);
  free(picked);
  if (st != LADLE_OK) return st;
  st = ladle_groups_order_by_first(&g, err);
  if (st == LADLE_OK) st = ladle_cpu_groups_csr(ctx, &g, err);
  if (st == LADLE_OK && sel != NULL) {
    const int64_t *sv = sel->values;
    for (int64_t k = 0; k < g.ngroups; k++) g.first[k] = sv[g.first[k]];
    for (int64_t j = 0; j < g.nrows; j++) g.rows[j] = sv[g.rows[j]];
  }
  ladle_dgroups d;
  memset(&d, 0, sizeof d);
  d.nrows = g.nrows;
  d.ngroups = g.ngroups;
  ladle_dtype i64 = ladle_dtype_make(LADLE_TYPE_INT64);
  if (st == LADLE_OK)
    st = column_of(ladle_dtype_make(LADLE_TYPE_UINT32), g.ids, g.nrows, &d.ids, err);
  if (st == LADLE_OK) st = column_of(i64, g.first, g.ngroups, &d.first, err);
  if (st == LADLE_OK) st = column_of(i64, g.rows, g.nrows, &d.rows, err);
  if (st == LADLE_OK) st = column_of(i64, g.offsets, g.ngroups + 1, &d.offsets, err);
  if (st == LADLE_OK && sel != NULL) ladle_column_copy_ref(sel, &d.sel);
  ladle_groups_release(&g);
  if (st != LADLE_OK) {
    ladle_dgroups_release(&d);
    return st;
  }
  *out = d;
  return LADLE_OK;
}

ladle_status ladle_cpu_group_keys(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                  const ladle_column *sel, ladle_dgroups *out, ladle_error *err) {
  WITH_MR(ctx, group_keys_on(ctx, keys, nkeys, sel, out, err));
}

/* The reference for a device's grouped_reduce: the program's value as a
 * column, then the CPU group_by's own aggregation kernel over the groups. */
static ladle_status grouped_reduce_on(const ladle_kctx *ctx, ladle_reduce_op op,
                                      const ladle_program *p, const ladle_column *inputs,
                                      size_t ninputs, const ladle_dgroups *d, ladle_column *out,
                                      ladle_error *err) {
  int64_t ng = d->ngroups;
  if (p == NULL) { /* len: each group's rows */
    ladle_column o;
    LADLE_RETURN_NOT_OK(
        ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT32), ng, false, 0, &o, err));
    const int64_t *off = d->offsets.values;
    for (int64_t k = 0; k < ng; k++)
      LADLE_COL_MUT(&o, uint32_t)[k] = (uint32_t)(off[k + 1] - off[k]);
    *out = o;
    return LADLE_OK;
  }
  static const ladle_agg_op aggs[LADLE_REDUCE_COUNT_] = {[LADLE_REDUCE_SUM] = LADLE_AGG_SUM,
                                                         [LADLE_REDUCE_MIN] = LADLE_AGG_MIN,
                                                         [LADLE_REDUCE_MAX] = LADLE_AGG_MAX,
                                                         [LADLE_REDUCE_COUNT] = LADLE_AGG_COUNT,
                                                         [LADLE_REDUCE_MEAN] = LADLE_AGG_MEAN};
  if ((int)op < 0 || op >= LADLE_REDUCE_COUNT_)
    return ladle_err_set(err, LADLE_EINVAL, "reduction %d: no such reduction", (int)op);
  /* the program's value at every row, then at the grouped rows (the
   * selection's, in its order): what the CPU's aggregation kernel reads with
   * the ids */
  ladle_column all, v;
  LADLE_RETURN_NOT_OK(ladle_cpu_eval_program(ctx, p, inputs, ninputs, &all, err));
  if (all.length < d->nrows) {
    ladle_column_release(&all);
    return ladle_err_set(err, LADLE_EINVAL, "grouped_reduce of %lld rows over groups of %lld",
                         (long long)all.length, (long long)d->nrows);
  }
  if (d->sel.owners[1] == NULL) {
    v = all;
  } else {
    /* ids follow the selection's order: the values at its rows */
    ladle_status st = take_on(ctx, &all, &d->sel, &v, err);
    ladle_column_release(&all);
    if (st != LADLE_OK) return st;
  }
  ladle_groups g;
  memset(&g, 0, sizeof g);
  g.nrows = d->nrows;
  g.ngroups = ng;
  g.ids = ladle_scratch_alloc((size_t)LADLE_MAX(g.nrows, 1) * sizeof *g.ids, false);
  g.first = ladle_scratch_alloc((size_t)LADLE_MAX(ng, 1) * sizeof *g.first, false);
  ladle_status st = g.ids && g.first ? LADLE_OK : LADLE_OOM(err, "groups");
  if (st == LADLE_OK) {
    if (g.nrows > 0) memcpy(g.ids, d->ids.values, (size_t)g.nrows * sizeof *g.ids);
    if (ng > 0) memcpy(g.first, d->first.values, (size_t)ng * sizeof *g.first);
    ladle_kexpr k;
    memset(&k, 0, sizeof k);
    k.kind = LADLE_KEX_AGG;
    k.op = aggs[op];
    k.type = ladle_grouped_type(op, v.type);
    k.nargs = 1;
    k.arg_types = &v.type;
    k.arg_name = "";
    st = ladle_cpu_aggregate(ctx, &k, &v, &g, out, err);
  }
  ladle_groups_release(&g);
  ladle_column_release(&v);
  return st;
}

ladle_status ladle_cpu_grouped_reduce(const ladle_kctx *ctx, ladle_reduce_op op,
                                      const ladle_program *p, const ladle_column *inputs,
                                      size_t ninputs, const ladle_dgroups *g, ladle_column *out,
                                      ladle_error *err) {
  WITH_MR(ctx, grouped_reduce_on(ctx, op, p, inputs, ninputs, g, out, err));
}

/* ------------------------------------------------------------ strings */

/* Whether the bytes s[0..n) hold p[0..m) at or after `from`: its offset, or -1. */
static int64_t find_from(const char *s, size_t n, size_t from, const char *p, size_t m) {
  for (size_t k = from; k + m <= n; k++)
    if (memcmp(s + k, p, m) == 0) return (int64_t)k;
  return -1;
}

/* LADLE_STR_CONTAINS_SEQ: the NUL-separated pieces of pat, in order, within
 * one line of x (each piece found at its earliest place after the last). */
static bool seq_in_lines(const char *x, size_t len, const char *pat, size_t plen) {
  size_t line = 0;
  for (;;) {
    size_t end = line;
    while (end < len && x[end] != '\n') end++;
    size_t at = line;
    bool ok = true;
    for (size_t a = 0; ok && a <= plen;) {
      size_t b = a;
      while (b < plen && pat[b] != '\0') b++;
      if (b > a) {
        int64_t f = find_from(x, end, at, pat + a, b - a);
        ok = f >= 0;
        if (ok) at = (size_t)f + (b - a);
      }
      a = b + 1;
    }
    if (ok) return true;
    if (end >= len) return false;
    line = end + 1;
  }
}

/* `x op pat` for one row's bytes x[0..len) */
static bool str_row_matches(ladle_str_op op, const char *x, size_t len, const char *pat,
                            size_t plen) {
  switch (op) {
    case LADLE_STR_STARTS_WITH:
      return len >= plen && memcmp(x, pat, plen) == 0;
    case LADLE_STR_ENDS_WITH:
      return len >= plen && memcmp(x + len - plen, pat, plen) == 0;
    case LADLE_STR_CONTAINS:
      return find_from(x, len, 0, pat, plen) >= 0;
    case LADLE_STR_CONTAINS_SEQ:
      return seq_in_lines(x, len, pat, plen);
    default: {
      int c = memcmp(x, pat, LADLE_MIN(len, plen));
      if (c == 0) c = len < plen ? -1 : len > plen ? 1 : 0;
      return op == LADLE_STR_EQ   ? c == 0
             : op == LADLE_STR_NE ? c != 0
             : op == LADLE_STR_LT ? c < 0
             : op == LADLE_STR_LE ? c <= 0
             : op == LADLE_STR_GT ? c > 0
                                  : c >= 0;
    }
  }
}

/* The reference for a device's str_match: each row by memcmp. */
static ladle_status str_match_on(ladle_str_op op, const ladle_column *in, const char *pat,
                                 size_t plen, const ladle_column *b, ladle_column *out,
                                 ladle_error *err) {
  for (int k = 0; k < (b != NULL ? 2 : 1); k++) {
    const ladle_column *c = k == 0 ? in : b;
    if (c->type.id != LADLE_TYPE_STRING)
      return ladle_err_set(err, LADLE_EINVAL, "a string match of a %s column, not String",
                           ladle_dtype_name(c->type, NULL, 0));
  }
  if (b != NULL && (b->length != in->length || op > LADLE_STR_GE))
    return ladle_err_set(err, LADLE_EINVAL, "str_compare %d of %lld and %lld rows", (int)op,
                         (long long)in->length, (long long)b->length);
  int64_t n = in->length;
  bool nulls = in->null_count > 0 || (b != NULL && b->null_count > 0);
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n, nulls, 0, &o, err));
  for (int64_t i = 0; i < n; i++) {
    bool valid = ladle_column_valid(in, i) && (b == NULL || ladle_column_valid(b, i));
    if (nulls) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), i, valid);
    const char *p = b != NULL && valid ? ladle_str_ptr(b, i) : pat; /* str_compare: b's row */
    size_t pl = b != NULL && valid ? (size_t)ladle_str_len(b, i) : plen;
    LADLE_COL_MUT(&o, uint8_t)
    [i] = valid && str_row_matches(op, ladle_str_ptr(in, i), (size_t)ladle_str_len(in, i), p, pl);
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}

ladle_status ladle_cpu_str_match(const ladle_kctx *ctx, ladle_str_op op, const ladle_column *in,
                                 const char *pat, size_t pat_len, ladle_column *out,
                                 ladle_error *err) {
  WITH_MR(ctx, str_match_on(op, in, pat, pat_len, NULL, out, err));
}

ladle_status ladle_cpu_str_compare(const ladle_kctx *ctx, ladle_str_op op, const ladle_column *a,
                                   const ladle_column *b, ladle_column *out, ladle_error *err) {
  WITH_MR(ctx, str_match_on(op, a, NULL, 0, b, out, err));
}

/* ------------------------------------------------------------ copies */

static ladle_status copy_on(const ladle_column *in, ladle_column *out, ladle_error *err) {
  if (in->type.id == LADLE_TYPE_LIST || ladle_column_view_only(in))
    return ladle_err_set(err, LADLE_ENOTSUP, "a copy of a %s column",
                         in->type.id == LADLE_TYPE_LIST ? "List" : "view-only");
  int64_t n = in->length;
  bool var = ladle_type_is_varlen(in->type.id);
  const int64_t *off = var ? (const int64_t *)in->values : NULL;
  int64_t c0 = var ? off[0] : 0, c1 = var ? off[n] : 0;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(in->type, n, in->validity != NULL, c1 - c0, &o, err));
  if (in->validity != NULL)
    memcpy(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n));
  if (var) {
    for (int64_t i = 0; i <= n; i++) LADLE_COL_MUT(&o, int64_t)[i] = off[i] - c0;
    if (c1 > c0) memcpy(LADLE_COL_CHARS_MUT(&o), in->chars + c0, (size_t)(c1 - c0));
  } else if (n > 0) {
    memcpy(LADLE_COL_MUT(&o, uint8_t), in->values, (size_t)n * ladle_type_width(in->type.id));
  }
  o.null_count = in->null_count;
  *out = o;
  return LADLE_OK;
}

ladle_status ladle_cpu_copy(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                            ladle_error *err) {
  WITH_MR(ctx, copy_on(in, out, err));
}

static ladle_status pack_bits_on(const ladle_column *in, ladle_column *out, ladle_error *err) {
  if (in->type.id != LADLE_TYPE_BOOL)
    return ladle_err_set(err, LADLE_EINVAL, "pack_bits of a %s column, not Boolean",
                         ladle_dtype_name(in->type, NULL, 0));
  int64_t nb = ladle_bitmap_bytes(in->length);
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT8), nb, false, 0, &o, err));
  uint8_t *bits = LADLE_COL_MUT(&o, uint8_t);
  const uint8_t *v = in->values;
  if (nb > 0) memset(bits, 0, (size_t)nb);
  for (int64_t i = 0; i < in->length; i++)
    if (v[i]) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  *out = o;
  return LADLE_OK;
}

ladle_status ladle_cpu_pack_bits(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                 ladle_error *err) {
  WITH_MR(ctx, pack_bits_on(in, out, err));
}

/* ------------------------------------------------------------ joins */

/* The reference for a device's join_rows: the host join kernel's pairs (runs
 * written out) as columns. */
static ladle_status join_rows_on(const ladle_kctx *ctx, const ladle_column *lkeys,
                                 const ladle_column *rkeys, size_t nkeys, int64_t nl, int64_t nr,
                                 ladle_join_type how, bool nulls_equal, ladle_djoin *out,
                                 ladle_error *err) {
  if (how != LADLE_JOIN_CROSS && nkeys == 0)
    return ladle_err_set(err, LADLE_EINVAL, "a keyed join of no key");
  for (size_t i = 0; i < nkeys; i++)
    if (lkeys[i].length != nl || rkeys[i].length != nr)
      return ladle_err_set(err, LADLE_EINVAL,
                           "join keys of %lld and %lld rows for sides of %lld "
                           "and %lld",
                           (long long)lkeys[i].length, (long long)rkeys[i].length, (long long)nl,
                           (long long)nr);
  ladle_column h[2]; /* a cross join's sides: their heights */
  memset(h, 0, sizeof h);
  h[0].length = nl;
  h[1].length = nr;
  bool cross = how == LADLE_JOIN_CROSS;
  ladle_join_pairs pr;
  memset(&pr, 0, sizeof pr);
  LADLE_RETURN_NOT_OK(ladle_cpu_join(ctx, cross ? &h[0] : lkeys, cross ? &h[1] : rkeys,
                                     cross ? 1 : nkeys, how, nulls_equal, &pr, err));
  bool two = how != LADLE_JOIN_SEMI && how != LADLE_JOIN_ANTI;
  ladle_dtype i64 = ladle_dtype_make(LADLE_TYPE_INT64);
  ladle_djoin d;
  memset(&d, 0, sizeof d);
  d.n = pr.n;
  ladle_status st = ladle_column_alloc(i64, pr.n, false, 0, &d.left, err);
  if (st == LADLE_OK && two) st = ladle_column_alloc(i64, pr.n, false, 0, &d.right, err);
  if (st == LADLE_OK && pr.runs != NULL)
    st = ladle_cpu_join_pairs_fill(ctx, pr.runs, 0, pr.n, LADLE_COL_MUT(&d.left, int64_t),
                                   two ? LADLE_COL_MUT(&d.right, int64_t) : NULL, err);
  else if (st == LADLE_OK && pr.n > 0) {
    int64_t *l = LADLE_COL_MUT(&d.left, int64_t);
    if (pr.left != NULL)
      memcpy(l, pr.left, (size_t)pr.n * sizeof *pr.left);
    else /* left_identity */
      for (int64_t i = 0; i < pr.n; i++) l[i] = i;
    if (two) memcpy(LADLE_COL_MUT(&d.right, int64_t), pr.right, (size_t)pr.n * sizeof *pr.right);
  }
  ladle_scratch_free(pr.left);
  ladle_scratch_free(pr.right);
  if (pr.runs != NULL) ladle_cpu_join_runs_free(pr.runs);
  if (st != LADLE_OK) {
    ladle_djoin_release(&d);
    return st;
  }
  *out = d;
  return LADLE_OK;
}

ladle_status ladle_cpu_join_rows(const ladle_kctx *ctx, const ladle_column *lkeys,
                                 const ladle_column *rkeys, size_t nkeys, int64_t nl, int64_t nr,
                                 ladle_join_type how, bool nulls_equal, ladle_djoin *out,
                                 ladle_error *err) {
  WITH_MR(ctx, join_rows_on(ctx, lkeys, rkeys, nkeys, nl, nr, how, nulls_equal, out, err));
}

/* ------------------------------------------------------------ sort */

static ladle_status sort_perm_on(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                 const bool *descending, const bool *nulls_last, ladle_column *out,
                                 ladle_error *err) {
  int64_t *perm = NULL;
  LADLE_RETURN_NOT_OK(ladle_cpu_sort_indices(ctx, keys, nkeys, descending, nulls_last, &perm, err));
  int64_t n = nkeys > 0 ? keys[0].length : 0;
  ladle_status st = column_of(ladle_dtype_make(LADLE_TYPE_INT64), perm, n, out, err);
  free(perm);
  return st;
}

ladle_status ladle_cpu_sort_perm(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                 const bool *descending, const bool *nulls_last, ladle_column *out,
                                 ladle_error *err) {
  WITH_MR(ctx, sort_perm_on(ctx, keys, nkeys, descending, nulls_last, out, err));
}
