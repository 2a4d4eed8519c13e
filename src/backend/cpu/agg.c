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

/* The k-th smallest of v[0..n) (NaN above every number, as in sorting) moved
 * to v[k], smaller ones before it, larger after: quickselect with a
 * three-way partition (runs of equal values, common in integer data, end the
 * search at once) around a median of three; after 2 log2(n) rounds without
 * converging it sorts what is left. */
static int cmp_total(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return LADLE_FLT(a, b) ? -1 : LADLE_FLT(b, a) ? 1 : 0;
}

static void select_k(double *v, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n; /* the k-th lies in [lo, hi) */
  int rounds = 0, limit = 2;
  for (int64_t m = n; m > 1; m >>= 1) limit += 2;
  while (hi - lo > 16) {
    if (++rounds > limit) break;
    double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi - 1];
    double p = LADLE_FLT(a, b) ? (LADLE_FLT(b, c)   ? b
                                  : LADLE_FLT(a, c) ? c
                                                    : a)
                               : (LADLE_FLT(a, c)   ? a
                                  : LADLE_FLT(b, c) ? c
                                                    : b);
    /* [lo, lt) < p, [lt, i) == p, (gt, hi) > p */
    int64_t lt = lo, i = lo, gt = hi - 1;
    while (i <= gt) {
      double x = v[i];
      if (LADLE_FLT(x, p)) {
        v[i++] = v[lt];
        v[lt++] = x;
      } else if (LADLE_FLT(p, x)) {
        v[i] = v[gt];
        v[gt--] = x;
      } else {
        i++;
      }
    }
    if (k < lt)
      hi = lt;
    else if (k > gt)
      lo = gt + 1;
    else
      return; /* v[k] equals the pivot, in place */
  }
  qsort(v + lo, (size_t)(hi - lo), sizeof *v, cmp_total);
}

/* The smallest of v[0..n). */
static double min_total(const double *v, int64_t n) {
  double m = v[0];
  for (int64_t i = 1; i < n; i++) m = LADLE_FLT(v[i], m) ? v[i] : m;
  return m;
}

/* The q-quantile of v[0..n) under interpolation m, as Polars computes it on
 * the sorted values, without sorting: only the order statistics it needs are
 * selected (v is reordered). */
static double quantile_sel(double *v, int64_t n, double q, ladle_interpolation m) {
  if (n == 1) return v[0];
  double pos = q * (double)(n - 1);
  int64_t lo = (int64_t)floor(pos), hi = (int64_t)ceil(pos), k;
  switch (m) {
    case LADLE_INTERP_LOWER:
      k = lo;
      break;
    case LADLE_INTERP_HIGHER:
      k = hi;
      break;
    case LADLE_INTERP_NEAREST:
      /* ties away from zero, as Polars 2.1 (Rust's round) */
      k = LADLE_MIN((int64_t)round(pos), n - 1);
      break;
    case LADLE_INTERP_EQUIPROBABLE:
      k = LADLE_MIN(LADLE_MAX((int64_t)ceil(q * (double)n) - 1, 0), n - 1);
      break;
    default: { /* linear, midpoint: v[lo] and v[hi] */
      select_k(v, n, lo);
      double a = v[lo], b = hi == lo ? a : min_total(v + lo + 1, n - lo - 1);
      if (m == LADLE_INTERP_MIDPOINT) return (a + b) / 2;
      return lo == hi ? a : a + (pos - (double)lo) * (b - a);
    }
  }
  select_k(v, n, k);
  return v[k];
}

/* Median and quantiles: each group's non-null values gathered together (a
 * counting sort by group), then per group, in parallel, a selection of the
 * order statistics the quantile needs. */
typedef struct ostat_job {
  const int64_t *off; /* per group: its values in vals[off[k], off[k+1]) */
  double *vals;
  double q;
  ladle_interpolation m;
  ladle_column *o;
  int64_t ngroups, piece;
} ostat_job;

static ladle_status ostat_piece(void *vctx, size_t piece, ladle_error *err) {
  LADLE_UNUSED(err);
  ostat_job *j = vctx;
  int64_t a = (int64_t)piece * j->piece, e = LADLE_MIN(a + j->piece, j->ngroups);
  for (int64_t k = a; k < e; k++) {
    int64_t n = j->off[k + 1] - j->off[k];
    if (n == 0) {
      put_f(j->o, k, 0);
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(j->o), k, false); /* pieces hold whole bytes */
    } else {
      put_f(j->o, k, quantile_sel(j->vals + j->off[k], n, j->q, j->m));
    }
  }
  return LADLE_OK;
}

static ladle_status order_stat(const ladle_kctx *ctx, const ladle_bexpr *agg,
                               const ladle_column *in, ladle_groups *g, ladle_column *o,
                               ladle_error *err) {
  int64_t ng = g->ngroups;
  int64_t *off = calloc((size_t)ng + 2, sizeof *off);
  double *vals = ladle_scratch_alloc((size_t)LADLE_MAX(in->length, 1) * sizeof *vals, false);
  if (off == NULL || vals == NULL) {
    free(off);
    ladle_scratch_free(vals);
    return LADLE_OOM(err, "quantile");
  }
  for (int64_t i = 0; i < g->nrows; i++) off[g->ids[i] + 2] += ladle_column_valid(in, i);
  for (int64_t k = 0; k < ng; k++) off[k + 2] += off[k + 1];
  /* off[k + 1] is now group k's write cursor; after the scatter, its end */
  for (int64_t i = 0; i < g->nrows; i++)
    if (ladle_column_valid(in, i)) vals[off[g->ids[i] + 1]++] = ladle_cpu_value_f64(in, i);
  ostat_job j;
  j.off = off;
  j.vals = vals;
  j.q = agg->op == LADLE_AGG_MEDIAN ? 0.5 : agg->aopts.quantile;
  j.m = agg->op == LADLE_AGG_MEDIAN ? LADLE_INTERP_LINEAR : agg->aopts.interpolation;
  j.o = o;
  j.ngroups = ng;
  size_t pieces = ladle_cpu_pieces(ctx, ng, 64, 8, 8, &j.piece); /* whole validity bytes */
  ladle_status st = ladle_pool_run(ctx->pool, pieces, ostat_piece, &j, err);
  free(off);
  ladle_scratch_free(vals);
  return st;
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
