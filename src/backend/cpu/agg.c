/* agg.c — aggregations over groups (group_by, reduce, and windows). One pass
 * over the rows per aggregation with per-group accumulators; order statistics
 * (median, quantile) sort each group's values; n_unique groups (group, value)
 * pairs. Results follow Polars: nulls are skipped, NaN is ignored by min/max,
 * an empty or all-null group gives null (sum gives 0, count 0, any false, all
 * true). */
#include "cpu.h"

#define IS_FLOAT_T(T) ((T)0.5 != 0)

static void put_f(ladle_column *o, int64_t g, double v) {
  if (o->type.id == LADLE_TYPE_FLOAT32)
    LADLE_COL_MUT(o, float)[g] = (float)v;
  else
    LADLE_COL_MUT(o, double)[g] = v;
}

/* sum into the output type: integers wrap through uint64, floats add in double */
#define SUM_K(T, in, g, o)                                                             \
  {                                                                                    \
    const T *X = (in)->values;                                                         \
    if (IS_FLOAT_T(T)) {                                                               \
      double *acc = calloc((size_t)LADLE_MAX((g)->ngroups, 1), sizeof *acc);           \
      if (acc == NULL) {                                                               \
        st = LADLE_OOM(err, "sum");                                                    \
        break;                                                                         \
      }                                                                                \
      for (int64_t i = 0; i < (in)->length; i++)                                       \
        if (ladle_column_valid(in, i)) acc[(g)->ids[i]] += (double)X[i];               \
      for (int64_t k = 0; k < (g)->ngroups; k++) put_f(o, k, acc[k]);                  \
      free(acc);                                                                       \
    } else {                                                                           \
      uint64_t *acc = calloc((size_t)LADLE_MAX((g)->ngroups, 1), sizeof *acc);         \
      if (acc == NULL) {                                                               \
        st = LADLE_OOM(err, "sum");                                                    \
        break;                                                                         \
      }                                                                                \
      if ((in)->validity == NULL)                                                      \
        for (int64_t i = 0; i < (in)->length; i++) acc[(g)->ids[i]] += (uint64_t)X[i]; \
      else                                                                             \
        for (int64_t i = 0; i < (in)->length; i++)                                     \
          if (ladle_column_valid(in, i)) acc[(g)->ids[i]] += (uint64_t)X[i];           \
      size_t w = ladle_type_width((o)->type.id);                                       \
      for (int64_t k = 0; k < (g)->ngroups; k++)                                       \
        memcpy(LADLE_COL_MUT(o, char) + k * (int64_t)w, &acc[k], w);                   \
      free(acc);                                                                       \
    }                                                                                  \
  }

/* min/max: NaN only when a group has nothing else */
#define MINMAX_K(T, in, g, o, is_max)                               \
  {                                                                 \
    const T *X = (in)->values;                                      \
    T *O = LADLE_COL_MUT(o, T);                                     \
    uint8_t *state = calloc((size_t)LADLE_MAX((g)->ngroups, 1), 1); \
    if (state == NULL) {                                            \
      st = LADLE_OOM(err, "min/max");                               \
      break;                                                        \
    }                                                               \
    for (int64_t i = 0; i < (in)->length; i++) {                    \
      if (!ladle_column_valid(in, i)) continue;                     \
      uint32_t k = (g)->ids[i];                                     \
      T x = X[i];                                                   \
      bool nan = IS_FLOAT_T(T) && x != x;                           \
      /* state: 0 empty, 1 only NaN, 2 has a number */              \
      if (nan) {                                                    \
        if (state[k] == 0) {                                        \
          O[k] = x;                                                 \
          state[k] = 1;                                             \
        }                                                           \
        continue;                                                   \
      }                                                             \
      if (state[k] < 2 || (is_max ? x > O[k] : x < O[k])) {         \
        O[k] = x;                                                   \
        state[k] = 2;                                               \
      }                                                             \
    }                                                               \
    for (int64_t k = 0; k < (g)->ngroups; k++)                      \
      if (state[k] == 0) {                                          \
        O[k] = 0;                                                   \
        ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), k, false);         \
      }                                                             \
    free(state);                                                    \
  }

#define ARG_K(T, in, g, pos, best, bestv, is_max)            \
  {                                                          \
    const T *X = (in)->values;                               \
    T *BV = (T *)(bestv);                                    \
    for (int64_t i = 0; i < (in)->length; i++) {             \
      uint32_t k = (g)->ids[i];                              \
      int64_t p = pos[k]++;                                  \
      if (!ladle_column_valid(in, i)) continue;              \
      T x = X[i];                                            \
      if (IS_FLOAT_T(T) && x != x) continue;                 \
      if (best[k] < 0 || (is_max ? x > BV[k] : x < BV[k])) { \
        best[k] = p;                                         \
        BV[k] = x;                                           \
      }                                                      \
    }                                                        \
  }

static double quantile_of(const double *v, int64_t n, double q, ladle_interpolation m) {
  if (n == 1) return v[0];
  double pos = q * (double)(n - 1);
  int64_t lo = (int64_t)floor(pos), hi = (int64_t)ceil(pos);
  switch (m) {
    case LADLE_INTERP_LOWER:
      return v[lo];
    case LADLE_INTERP_HIGHER:
      return v[hi];
    case LADLE_INTERP_MIDPOINT:
      return (v[lo] + v[hi]) / 2;
    case LADLE_INTERP_NEAREST: {
      int64_t k = (int64_t)round(pos); /* ties away from zero, as Polars 2.1 (Rust's round) */
      return v[LADLE_MIN(k, n - 1)];
    }
    case LADLE_INTERP_EQUIPROBABLE: {
      int64_t k = (int64_t)ceil(q * (double)n) - 1;
      return v[LADLE_MIN(LADLE_MAX(k, 0), n - 1)];
    }
    default:
      return lo == hi ? v[lo] : v[lo] + (pos - (double)lo) * (v[hi] - v[lo]);
  }
}

/* Median and quantiles: one stable radix sort of (group, value) with nulls
 * last, then each group's values are a sorted run. */
static ladle_status order_stat(const ladle_kctx *ctx, const ladle_bexpr *agg,
                               const ladle_column *in, ladle_groups *g, ladle_column *o,
                               ladle_error *err) {
  ladle_column keys[2];
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT32), g->nrows, false, 0, &keys[0], err));
  memcpy(LADLE_COL_MUT(&keys[0], uint32_t), g->ids, (size_t)g->nrows * 4);
  keys[1] = *in;
  bool desc[2] = {false, false}, nulls_last[2] = {false, true};
  int64_t *perm;
  ladle_status st = ladle_cpu_sort_indices(ctx, keys, 2, desc, nulls_last, &perm, err);
  ladle_column_release(&keys[0]);
  if (st != LADLE_OK) return st;
  double *buf = malloc((size_t)LADLE_MAX(in->length, 1) * sizeof *buf);
  if (buf == NULL) {
    free(perm);
    return LADLE_OOM(err, "quantile");
  }
  double q = agg->op == LADLE_AGG_MEDIAN ? 0.5 : agg->aopts.quantile;
  ladle_interpolation m =
      agg->op == LADLE_AGG_MEDIAN ? LADLE_INTERP_LINEAR : agg->aopts.interpolation;
  uint8_t *seen = calloc((size_t)LADLE_MAX(g->ngroups, 1), 1);
  if (seen == NULL) {
    free(perm);
    free(buf);
    return LADLE_OOM(err, "quantile");
  }
  for (int64_t a = 0; a < g->nrows;) {
    uint32_t k = g->ids[perm[a]];
    int64_t n = 0, b = a;
    for (; b < g->nrows && g->ids[perm[b]] == k; b++)
      if (ladle_column_valid(in, perm[b])) buf[n++] = ladle_cpu_value_f64(in, perm[b]);
    seen[k] = 1;
    if (n == 0) {
      put_f(o, k, 0);
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), k, false);
    } else {
      put_f(o, k, quantile_of(buf, n, q, m));
    }
    a = b;
  }
  for (int64_t k = 0; k < g->ngroups; k++)
    if (!seen[k]) { /* a group with no rows (a reduce over nothing) */
      put_f(o, k, 0);
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), k, false);
    }
  free(seen);
  free(perm);
  free(buf);
  return LADLE_OK;
}

/* mean, var and std in two passes (sum and count, then squared deviations from
 * the mean): no division per row and no loss of precision from sum-of-squares. */
#define MOMENT_PASS1(T, in, g, sum, cnt)           \
  {                                                \
    const T *X = (in)->values;                     \
    if ((in)->validity == NULL) {                  \
      for (int64_t i = 0; i < (in)->length; i++) { \
        sum[(g)->ids[i]] += (double)X[i];          \
        cnt[(g)->ids[i]]++;                        \
      }                                            \
    } else {                                       \
      for (int64_t i = 0; i < (in)->length; i++)   \
        if (ladle_bit_get((in)->validity, i)) {    \
          sum[(g)->ids[i]] += (double)X[i];        \
          cnt[(g)->ids[i]]++;                      \
        }                                          \
    }                                              \
  }
#define MOMENT_PASS2(T, in, g, mean, m2)             \
  {                                                  \
    const T *X = (in)->values;                       \
    for (int64_t i = 0; i < (in)->length; i++)       \
      if (ladle_column_valid(in, i)) {               \
        double d = (double)X[i] - mean[(g)->ids[i]]; \
        m2[(g)->ids[i]] += d * d;                    \
      }                                              \
  }

#define ONE_GROUP_MOMENTS(T, in, mean, m2, cnt, second)                   \
  {                                                                       \
    const T *X = (in)->values;                                            \
    int64_t n = (in)->length, i = 0;                                      \
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                \
    for (; i + 4 <= n; i += 4) {                                          \
      s0 += (double)X[i];                                                 \
      s1 += (double)X[i + 1];                                             \
      s2 += (double)X[i + 2];                                             \
      s3 += (double)X[i + 3];                                             \
    }                                                                     \
    for (; i < n; i++) s0 += (double)X[i];                                \
    cnt[0] = n;                                                           \
    mean[0] = n > 0 ? ((s0 + s1) + (s2 + s3)) / (double)n : 0;            \
    if (second) {                                                         \
      double mu = mean[0], q0 = 0, q1 = 0, q2 = 0, q3 = 0;                \
      for (i = 0; i + 4 <= n; i += 4) {                                   \
        double d0 = (double)X[i] - mu, d1 = (double)X[i + 1] - mu;        \
        double d2 = (double)X[i + 2] - mu, d3 = (double)X[i + 3] - mu;    \
        q0 += d0 * d0;                                                    \
        q1 += d1 * d1;                                                    \
        q2 += d2 * d2;                                                    \
        q3 += d3 * d3;                                                    \
      }                                                                   \
      for (; i < n; i++) q0 += ((double)X[i] - mu) * ((double)X[i] - mu); \
      m2[0] = (q0 + q1) + (q2 + q3);                                      \
    }                                                                     \
  }

static ladle_status moments(const ladle_bexpr *agg, const ladle_column *in, ladle_groups *g,
                            ladle_column *o, ladle_error *err) {
  int64_t ng = g->ngroups;
  double *mean = calloc((size_t)LADLE_MAX(ng, 1), sizeof *mean);
  double *m2 = calloc((size_t)LADLE_MAX(ng, 1), sizeof *m2);
  int64_t *cnt = calloc((size_t)LADLE_MAX(ng, 1), sizeof *cnt);
  if (mean == NULL || m2 == NULL || cnt == NULL) {
    free(mean);
    free(m2);
    free(cnt);
    return LADLE_OOM(err, "mean/var");
  }
  ladle_phys ph = ladle_type_phys(in->type.id);
  if (ng == 1 && in->validity == NULL) {
    /* one group without nulls (a select-level mean/std): plain reductions with
     * independent accumulators, which vectorize */
    LADLE_DISPATCH_NUM(ph, ONE_GROUP_MOMENTS, in, mean, m2, cnt, agg->op != LADLE_AGG_MEAN)
    goto finish;
  }
  LADLE_DISPATCH_NUM(ph, MOMENT_PASS1, in, g, mean, cnt)
  for (int64_t k = 0; k < ng; k++)
    if (cnt[k] > 0) mean[k] /= (double)cnt[k];
  if (agg->op != LADLE_AGG_MEAN) LADLE_DISPATCH_NUM(ph, MOMENT_PASS2, in, g, mean, m2)
finish:
  for (int64_t k = 0; k < ng; k++) {
    double v;
    bool valid;
    if (agg->op == LADLE_AGG_MEAN) {
      valid = cnt[k] > 0;
      v = valid ? mean[k] : 0;
    } else {
      int64_t dof = cnt[k] - agg->aopts.ddof;
      valid = cnt[k] > 0 && dof > 0;
      v = valid ? m2[k] / (double)dof : 0;
      if (valid && agg->op == LADLE_AGG_STD) v = sqrt(v);
    }
    put_f(o, k, v);
    if (!valid) ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), k, false);
  }
  free(mean);
  free(m2);
  free(cnt);
  return LADLE_OK;
}

/* Distinct values per group: the values get dense ids of their own (nulls one
 * more value, as Polars counts them), rows are bucketed by group, and each
 * group counts the ids it stamps first in an array indexed by id. No pair is
 * hashed, whatever the number of groups. */
static ladle_status n_unique(const ladle_kctx *ctx, const ladle_column *in, ladle_groups *g,
                             ladle_column *o, ladle_error *err) {
  ladle_groups v;
  LADLE_RETURN_NOT_OK(ladle_cpu_group_ids(ctx, in, 1, &v, err));
  ladle_status st = ladle_groups_csr(g, err);
  uint32_t *stamp = st == LADLE_OK ? calloc((size_t)LADLE_MAX(v.ngroups, 1), sizeof *stamp) : NULL;
  if (st == LADLE_OK && stamp == NULL) st = LADLE_OOM(err, "n_unique");
  if (st == LADLE_OK) {
    uint32_t *O = LADLE_COL_MUT(o, uint32_t);
    for (int64_t k = 0; k < g->ngroups; k++) {
      uint32_t c = 0, mark = (uint32_t)(k + 1);
      for (int64_t r = g->offsets[k]; r < g->offsets[k + 1]; r++) {
        uint32_t id = v.ids[g->rows[r]];
        c += stamp[id] != mark;
        stamp[id] = mark;
      }
      O[k] = c;
    }
  }
  free(stamp);
  ladle_groups_release(&v);
  return st;
}

ladle_status ladle_cpu_aggregate(const ladle_kctx *ctx, const ladle_bexpr *agg,
                                 const ladle_column *in, ladle_groups *g, ladle_column *out,
                                 ladle_error *err) {
  int64_t ng = g->ngroups;
  ladle_agg_op op = agg->kind == LADLE_EX_LEN ? LADLE_AGG_LEN : (ladle_agg_op)agg->op;
  ladle_column o;
  ladle_status st = LADLE_OK;
  ladle_phys ph = in ? ladle_type_phys(in->type.id) : LADLE_PHYS_NULL;
  bool nullable = !(op == LADLE_AGG_SUM || op == LADLE_AGG_COUNT || op == LADLE_AGG_NULL_COUNT ||
                    op == LADLE_AGG_LEN || op == LADLE_AGG_N_UNIQUE || op == LADLE_AGG_ANY ||
                    op == LADLE_AGG_ALL);
  if (op == LADLE_AGG_FIRST || op == LADLE_AGG_LAST) {
    int64_t *rows = malloc((size_t)LADLE_MAX(ng, 1) * sizeof *rows);
    if (rows == NULL) return LADLE_OOM(err, "first/last");
    if (op == LADLE_AGG_FIRST) {
      for (int64_t k = 0; k < ng; k++) rows[k] = g->first[k];
    } else {
      for (int64_t k = 0; k < ng; k++) rows[k] = -1;
      for (int64_t i = 0; i < g->nrows; i++) rows[g->ids[i]] = i;
    }
    st = ladle_column_gather(in, rows, ng, out, err);
    free(rows);
    return st;
  }
  if (in != NULL && in->type.id == LADLE_TYPE_NULL && op != LADLE_AGG_LEN &&
      op != LADLE_AGG_NULL_COUNT && op != LADLE_AGG_COUNT && op != LADLE_AGG_SUM)
    return ladle_column_nulls(agg->type, ng, out, err);
  LADLE_RETURN_NOT_OK(ladle_column_alloc(agg->type, ng, nullable, 0, &o, err));
  switch (op) {
    case LADLE_AGG_LEN:
    case LADLE_AGG_COUNT:
    case LADLE_AGG_NULL_COUNT: {
      uint32_t *O = LADLE_COL_MUT(&o, uint32_t);
      memset(O, 0, (size_t)ng * 4);
      for (int64_t i = 0; i < g->nrows; i++) {
        bool valid = in != NULL && in->type.id != LADLE_TYPE_NULL && ladle_column_valid(in, i);
        if (op == LADLE_AGG_LEN || (op == LADLE_AGG_COUNT) == valid) O[g->ids[i]]++;
      }
      break;
    }
    case LADLE_AGG_SUM:
      if (in->type.id == LADLE_TYPE_NULL) {
        memset(LADLE_COL_MUT(&o, char), 0, (size_t)ng * ladle_type_width(o.type.id));
        break;
      }
      LADLE_DISPATCH_NUM(ph, SUM_K, in, g, &o)
      break;
    case LADLE_AGG_MIN:
    case LADLE_AGG_MAX:
      if (in->type.id == LADLE_TYPE_STRING) {
        int64_t *best = malloc((size_t)LADLE_MAX(ng, 1) * sizeof *best);
        if (best == NULL) {
          st = LADLE_OOM(err, "min/max");
          break;
        }
        for (int64_t k = 0; k < ng; k++) best[k] = -1;
        for (int64_t i = 0; i < in->length; i++) {
          if (!ladle_column_valid(in, i)) continue;
          int64_t *b = &best[g->ids[i]];
          if (*b < 0)
            *b = i;
          else {
            int c = ladle_str_cmp(in, i, in, *b);
            if (op == LADLE_AGG_MAX ? c > 0 : c < 0) *b = i;
          }
        }
        ladle_column_release(&o);
        st = ladle_column_gather(in, best, ng, &o, err);
        free(best);
        if (st != LADLE_OK) return st;
        break;
      }
      if (op == LADLE_AGG_MAX) {
        LADLE_DISPATCH_NUM(ph, MINMAX_K, in, g, &o, true)
      } else {
        LADLE_DISPATCH_NUM(ph, MINMAX_K, in, g, &o, false)
      }
      break;
    case LADLE_AGG_MEAN:
    case LADLE_AGG_STD:
    case LADLE_AGG_VAR:
      st = moments(agg, in, g, &o, err);
      break;
    case LADLE_AGG_MEDIAN:
    case LADLE_AGG_QUANTILE:
      st = order_stat(ctx, agg, in, g, &o, err);
      break;
    case LADLE_AGG_N_UNIQUE:
      st = n_unique(ctx, in, g, &o, err);
      break;
    case LADLE_AGG_ARG_MIN:
    case LADLE_AGG_ARG_MAX: {
      int64_t *pos = calloc((size_t)LADLE_MAX(ng, 1), sizeof *pos);
      int64_t *best = malloc((size_t)LADLE_MAX(ng, 1) * sizeof *best);
      uint64_t *bestv = calloc((size_t)LADLE_MAX(ng, 1), 8);
      if (pos == NULL || best == NULL || bestv == NULL) {
        free(pos);
        free(best);
        free(bestv);
        st = LADLE_OOM(err, "arg_min/arg_max");
        break;
      }
      for (int64_t k = 0; k < ng; k++) best[k] = -1;
      if (in->type.id == LADLE_TYPE_STRING) {
        int64_t *brow = (int64_t *)bestv;
        for (int64_t i = 0; i < in->length; i++) {
          uint32_t k = g->ids[i];
          int64_t p = pos[k]++;
          if (!ladle_column_valid(in, i)) continue;
          int c = best[k] < 0 ? 0 : ladle_str_cmp(in, i, in, brow[k]);
          if (best[k] < 0 || (op == LADLE_AGG_ARG_MAX ? c > 0 : c < 0)) {
            best[k] = p;
            brow[k] = i;
          }
        }
      } else if (op == LADLE_AGG_ARG_MAX) {
        LADLE_DISPATCH_NUM(ph, ARG_K, in, g, pos, best, bestv, true)
      } else {
        LADLE_DISPATCH_NUM(ph, ARG_K, in, g, pos, best, bestv, false)
      }
      for (int64_t k = 0; k < ng; k++) {
        LADLE_COL_MUT(&o, uint32_t)[k] = best[k] < 0 ? 0 : (uint32_t)best[k];
        if (best[k] < 0) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), k, false);
      }
      free(pos);
      free(best);
      free(bestv);
      break;
    }
    case LADLE_AGG_ANY:
    case LADLE_AGG_ALL: {
      uint8_t *O = LADLE_COL_MUT(&o, uint8_t);
      memset(O, op == LADLE_AGG_ALL, (size_t)ng);
      const uint8_t *X = in->values;
      for (int64_t i = 0; i < in->length; i++) {
        if (!ladle_column_valid(in, i)) continue;
        if (op == LADLE_AGG_ANY && X[i]) O[g->ids[i]] = 1;
        if (op == LADLE_AGG_ALL && !X[i]) O[g->ids[i]] = 0;
      }
      break;
    }
    default:
      st = ladle_err_set(err, LADLE_ENOTSUP, "aggregation %s on the CPU", ladle_agg_name(op));
  }
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}
