/* cumulative.c — running functions over rows in order (cum_sum, cum_prod,
 * cum_min, cum_max, cum_count) and the rows a shift takes, within groups.
 *
 * One pass over the rows (from the last for `reverse`), a running value per
 * group indexed by the group id: the rows of a group need not be adjacent. A
 * null row is null in the output and leaves its group's running value as it
 * was; cum_count counts the valid rows so far and is never null. Integer sums
 * and products wrap (computed in the unsigned type of the same width), float
 * ones are added and multiplied in the column's type in row order, as Polars
 * does. A float minimum or maximum keeps NaN only until a number comes (it is
 * skipped after), and between equal values takes the later one (so -0.0 and
 * 0.0 come out as Polars gives them). */
#include <math.h>

#include "cpu.h"

/* A running value per group: the rows in `order`, i = first, first + step, ... */
#define CUM_LOOP(T, BODY)                                   \
  do {                                                      \
    const T *x = (const T *)in->values;                     \
    T *o = LADLE_COL_MUT(out, T);                           \
    T *acc = calloc((size_t)LADLE_MAX(ng, 1), sizeof *acc); \
    if (acc == NULL) {                                      \
      free(seen);                                           \
      ladle_column_release(out);                            \
      return LADLE_OOM(err, "cumulative state");            \
    }                                                       \
    for (int64_t k = 0; k < n; k++) {                       \
      int64_t i = reverse ? n - 1 - k : k;                  \
      if (valid != NULL && !ladle_bit_get(valid, i)) {      \
        o[i] = 0;                                           \
        continue;                                           \
      }                                                     \
      uint32_t gi = ids != NULL ? ids[i] : 0;               \
      T v = x[i];                                           \
      if (!seen[gi]) {                                      \
        seen[gi] = 1;                                       \
        acc[gi] = v;                                        \
      } else {                                              \
        T a = acc[gi];                                      \
        BODY;                                               \
        acc[gi] = a;                                        \
      }                                                     \
      o[i] = acc[gi];                                       \
    }                                                       \
    free(acc);                                              \
  } while (0)

/* sum and product wrapping through the unsigned type U of T's width */
#define CUM_INT(T, U)                       \
  do {                                      \
    if (op == LADLE_CUM_SUM)                \
      CUM_LOOP(T, a = (T)(U)((U)a + (U)v)); \
    else if (op == LADLE_CUM_PROD)          \
      CUM_LOOP(T, a = (T)(U)((U)a * (U)v)); \
    else if (op == LADLE_CUM_MIN)           \
      CUM_LOOP(T, a = a < v ? a : v);       \
    else                                    \
      CUM_LOOP(T, a = a > v ? a : v);       \
  } while (0)

#define CUM_FLOAT(T)                                                \
  do {                                                              \
    if (op == LADLE_CUM_SUM)                                        \
      CUM_LOOP(T, a = a + v);                                       \
    else if (op == LADLE_CUM_PROD)                                  \
      CUM_LOOP(T, a = a * v);                                       \
    else if (op == LADLE_CUM_MIN)                                   \
      CUM_LOOP(T, a = isnan(a) ? v : isnan(v) ? a : a < v ? a : v); \
    else                                                            \
      CUM_LOOP(T, a = isnan(a) ? v : isnan(v) ? a : a > v ? a : v); \
  } while (0)

static ladle_status cumulative(const ladle_kctx *ctx, const ladle_column *in,
                               const ladle_dgroups *g, int op, bool reverse, ladle_column *out,
                               ladle_error *err) {
  (void)ctx;
  int64_t n = in->length;
  if (g != NULL && (g->nrows != n || g->ids.length != n || (n > 0 && g->ids.values == NULL)))
    return ladle_err_set(err, LADLE_EINVAL, "cumulative: %lld rows in %lld groups' rows",
                         (long long)n, (long long)g->nrows);
  const uint32_t *ids = g != NULL ? g->ids.values : NULL;
  int64_t ng = g != NULL ? g->ngroups : 1;
  const uint8_t *valid = in->null_count > 0 ? in->validity : NULL;
  if (op == LADLE_CUM_COUNT) {
    LADLE_RETURN_NOT_OK(
        ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT32), n, false, 0, out, err));
    uint32_t *cnt = calloc((size_t)LADLE_MAX(ng, 1), sizeof *cnt);
    if (cnt == NULL) {
      ladle_column_release(out);
      return LADLE_OOM(err, "cumulative state");
    }
    uint32_t *o = LADLE_COL_MUT(out, uint32_t);
    for (int64_t k = 0; k < n; k++) {
      int64_t i = reverse ? n - 1 - k : k;
      uint32_t gi = ids != NULL ? ids[i] : 0;
      if (valid == NULL || ladle_bit_get(valid, i)) cnt[gi]++;
      o[i] = cnt[gi];
    }
    free(cnt);
    return LADLE_OK;
  }
  if (op < LADLE_CUM_SUM || op > LADLE_CUM_MAX)
    return ladle_err_set(err, LADLE_EINVAL, "cumulative: op %d", op);
  LADLE_RETURN_NOT_OK(ladle_column_alloc(in->type, n, valid != NULL, 0, out, err));
  if (valid != NULL) memcpy(LADLE_COL_VALIDITY_MUT(out), valid, (size_t)ladle_bitmap_bytes(n));
  uint8_t *seen = calloc((size_t)LADLE_MAX(ng, 1), 1);
  if (seen == NULL) {
    ladle_column_release(out);
    return LADLE_OOM(err, "cumulative state");
  }
  switch (ladle_type_phys(in->type.id)) {
    case LADLE_PHYS_I8:
      CUM_INT(int8_t, uint8_t);
      break;
    case LADLE_PHYS_I16:
      CUM_INT(int16_t, uint16_t);
      break;
    case LADLE_PHYS_I32:
      CUM_INT(int32_t, uint32_t);
      break;
    case LADLE_PHYS_I64:
      CUM_INT(int64_t, uint64_t);
      break;
    case LADLE_PHYS_U8:
      CUM_INT(uint8_t, uint8_t);
      break;
    case LADLE_PHYS_U16:
      CUM_INT(uint16_t, uint16_t);
      break;
    case LADLE_PHYS_U32:
      CUM_INT(uint32_t, uint32_t);
      break;
    case LADLE_PHYS_U64:
      CUM_INT(uint64_t, uint64_t);
      break;
    case LADLE_PHYS_F32:
      CUM_FLOAT(float);
      break;
    case LADLE_PHYS_F64:
      CUM_FLOAT(double);
      break;
    default: {
      free(seen);
      ladle_column_release(out);
      char t[64];
      return ladle_err_set(err, LADLE_ENOTSUP, "cumulative functions of %s",
                           ladle_dtype_name(in->type, t, sizeof t));
    }
  }
  free(seen);
  ladle_column_finish_nulls(out);
  return LADLE_OK;
}

ladle_status ladle_cpu_cumulative(const ladle_kctx *ctx, const ladle_column *in,
                                  const ladle_dgroups *g, int op, bool reverse, ladle_column *out,
                                  ladle_error *err) {
  WITH_MR(ctx, cumulative(ctx, in, g, op, reverse, out, err));
}

static ladle_status shift_rows(const ladle_kctx *ctx, int64_t nrows, const ladle_dgroups *g,
                               int64_t by, ladle_column *out, ladle_error *err) {
  if (g != NULL && (g->nrows != nrows || g->ids.length != nrows))
    return ladle_err_set(err, LADLE_EINVAL, "shift: %lld rows in %lld groups' rows",
                         (long long)nrows, (long long)g->nrows);
  /* the groups' CSR: given, or bucketed here from the ids (a view of the
   * executor's groups before anything built it) */
  const int64_t *offsets = NULL, *rows = NULL;
  int64_t *own_off = NULL, *own_rows = NULL;
  if (g != NULL && g->offsets.values != NULL) {
    offsets = g->offsets.values;
    rows = g->rows.values;
  } else if (g != NULL) {
    LADLE_RETURN_NOT_OK(ladle_cpu_bucket(ctx, NULL, g->ids.values, NULL, nrows, g->ngroups,
                                         &own_off, &own_rows, err));
    offsets = own_off;
    rows = own_rows;
  }
  ladle_status st =
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT64), nrows, false, 0, out, err);
  if (st == LADLE_OK) {
    int64_t *idx = LADLE_COL_MUT(out, int64_t);
    if (g == NULL) {
      for (int64_t i = 0; i < nrows; i++) {
        /* i - by without overflow: by may be any int64 */
        bool in_range = by >= 0 ? (by <= i) : (i < nrows + by);
        idx[i] = in_range ? i - by : -1;
      }
    } else {
      /* a group's rows, ascending (the CSR is a stable bucketing) */
      for (int64_t k = 0; k < g->ngroups; k++) {
        const int64_t *r = rows + offsets[k];
        int64_t len = offsets[k + 1] - offsets[k];
        for (int64_t j = 0; j < len; j++) {
          bool in_range = by >= 0 ? (by <= j) : (j < len + by);
          idx[r[j]] = in_range ? r[j - by] : -1;
        }
      }
    }
  }
  free(own_off);
  ladle_scratch_free(own_rows);
  return st;
}

ladle_status ladle_cpu_shift_rows(const ladle_kctx *ctx, int64_t nrows, const ladle_dgroups *g,
                                  int64_t by, ladle_column *out, ladle_error *err) {
  WITH_MR(ctx, shift_rows(ctx, nrows, g, by, out, err));
}
