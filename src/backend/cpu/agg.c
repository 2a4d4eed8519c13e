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

/* Scatter aggregations (sum, min, max, the counts, the moments' sums) are
 * row-parallel: the rows are cut into one piece per thread, each piece
 * accumulates into per-group arrays of its own, and the pieces' arrays are
 * then merged into the first piece's, group range by group range, also in
 * parallel. With one piece (few rows, one thread, or inside another parallel
 * task such as the group-by's shared aggregations) the one array is the
 * result. With many groups (more than the rows per group pay for in arrays
 * per piece) the groups are cut instead: each task owns a range of groups,
 * reads every row's id and accumulates the rows of its own groups, in row
 * order, into the one array. Accumulators: sums in double (floats) or wrapping uint64 (integers),
 * min/max in the value's own type, counts and squared deviations per group. */
typedef enum scat_kind {
  SCAT_SUM,   /* acc: sum of valid values, in double for floats, else wrapping uint64 */
  SCAT_FSUM,  /* acc: sum of valid values in double, whatever the type */
  SCAT_MIN,   /* acc: least valid value (NaN only when nothing else); cnt */
  SCAT_MAX,   /* acc: greatest valid value; cnt */
  SCAT_LEN,   /* cnt: rows */
  SCAT_COUNT, /* cnt: valid rows */
  SCAT_DSUM,  /* acc: sum of valid values' deviations from mean[group] (an anchor) */
  SCAT_M2     /* acc: squared deviations of valid values from mean[group] */
} scat_kind;

typedef struct scat_job {
  const ladle_column *in; /* the first of nins consecutive pieces of the input */
  size_t nins;
  const int64_t *starts; /* nins > 1: each piece's first row */
  const uint32_t *ids;
  const double *mean; /* SCAT_DSUM, SCAT_M2 */
  scat_kind kind;
  ladle_phys ph;
  int64_t n, ng, piece, gpiece;
  size_t pieces;
  bool want_cnt;
  int64_t lanes; /* accumulators per group and piece (see SCAT_SLOT) */
  void **acc;    /* per piece: ng 8-byte accumulators, or NULL */
  int64_t **cnt; /* per piece: ng counts, or NULL */
  int64_t own;   /* > 0: groups owned per task (one array, every task reads every row) */
  /* owner mode: the least and greatest id of each block of rows (the input
   * pieces, or blocks of `blk` rows of one input), so that a task skips the
   * blocks without a group of its own: rows sorted or clustered by key have
   * narrow blocks (ids that ascend with the key, as dense_build's) */
  uint32_t *bmin, *bmax;
  size_t nblk;
  int64_t blk;
} scat_job;

#define SCAT_SIGNED(T) ((T)-1 < (T)0)
#define SCAT_TMAX(T) \
  (SCAT_SIGNED(T) ? (T)((((uint64_t)1 << (8 * sizeof(T) - 1)) - 1)) : (T) ~(uint64_t)0)
#define SCAT_TMIN(T) (SCAT_SIGNED(T) ? (T)(-SCAT_TMAX(T) - 1) : (T)0)

/* `better(x, b)`: x replaces the running min/max b. For floats a NaN b (the
 * start, or NaN seen so far) gives way to anything, and a NaN x never wins
 * against a number: NaN only where a group has nothing else, as Polars. */
#define SCAT_BETTER(T, x, b, is_max) \
  ((is_max ? (x) > (b) : (x) < (b)) || (IS_FLOAT_T(T) && (b) != (b)))

#define SCAT_INIT(T, j, acc, lo, hi)                                                      \
  {                                                                                       \
    T *A = (T *)(acc);                                                                    \
    double nan_ = NAN;                                                                    \
    T v0 = IS_FLOAT_T(T) ? (T)nan_ : (j)->kind == SCAT_MAX ? SCAT_TMIN(T) : SCAT_TMAX(T); \
    for (int64_t k = lo; k < hi; k++) A[k] = v0;                                          \
  }

/* Row i's accumulator. With few groups, runs of one group would chain every
 * update through one memory slot; each group then has `lanes` accumulators
 * (lane-major, row i in lane i mod lanes), folded together after the rows. */
#define SCAT_SLOT(i, GID) ((size_t)((i) & (lanes - 1)) * (size_t)ng + GID(i))
/* a row's group: from the ids, or 0 when there is one group (the ids, all 0,
 * are not read) */
#define SCAT_GID_IDS(i) G[i]
#define SCAT_GID_ONE(i) 0
/* whether row i is the task's to accumulate: every row, or (owner mode) the
 * rows of groups [lo, lo + span) */
#define SCAT_OWN_ALL(i) 1
#define SCAT_OWN_RANGE(i) ((uint32_t)(G[i] - lo) < span)

/* min (is_max false) or max of rows [a, e), is_max a constant */
#define SCAT_EXTREME(T, X, G, V, acc, cnt, a, e, is_max, GID, OWN)  \
  {                                                                 \
    T *A = (acc);                                                   \
    for (int64_t i = a; i < e; i++) {                               \
      if (!OWN(i) || (V != NULL && !ladle_bit_get(V, i))) continue; \
      size_t k = SCAT_SLOT(i, GID);                                 \
      T x = X[i], b = A[k];                                         \
      A[k] = SCAT_BETTER(T, x, b, is_max) ? x : b;                  \
      cnt[k]++;                                                     \
    }                                                               \
  }

/* rows [a, e) into one piece's arrays; every loop comes with and without a
 * validity bitmap */
#define SCAT_ROWS(T, j, in, G, acc, cnt, a, e, GID, OWN)                                 \
  {                                                                                      \
    const T *X = (in)->values;                                                           \
    const uint8_t *V = (in)->validity;                                                   \
    switch ((j)->kind) {                                                                 \
      case SCAT_SUM:                                                                     \
      case SCAT_FSUM:                                                                    \
        if (IS_FLOAT_T(T) || (j)->kind == SCAT_FSUM) {                                   \
          double *A = (acc);                                                             \
          if (V == NULL)                                                                 \
            for (int64_t i = a; i < e; i++) {                                            \
              if (OWN(i)) A[SCAT_SLOT(i, GID)] += (double)X[i];                          \
            }                                                                            \
          else                                                                           \
            for (int64_t i = a; i < e; i++)                                              \
              if (OWN(i) && ladle_bit_get(V, i)) A[SCAT_SLOT(i, GID)] += (double)X[i];   \
        } else {                                                                         \
          uint64_t *A = (acc);                                                           \
          if (V == NULL)                                                                 \
            for (int64_t i = a; i < e; i++) {                                            \
              if (OWN(i)) A[SCAT_SLOT(i, GID)] += (uint64_t)X[i];                        \
            }                                                                            \
          else                                                                           \
            for (int64_t i = a; i < e; i++)                                              \
              if (OWN(i) && ladle_bit_get(V, i)) A[SCAT_SLOT(i, GID)] += (uint64_t)X[i]; \
        }                                                                                \
        break;                                                                           \
      case SCAT_MIN:                                                                     \
        SCAT_EXTREME(T, X, G, V, acc, cnt, a, e, false, GID, OWN);                       \
        break;                                                                           \
      case SCAT_MAX:                                                                     \
        SCAT_EXTREME(T, X, G, V, acc, cnt, a, e, true, GID, OWN);                        \
        break;                                                                           \
      case SCAT_DSUM:                                                                    \
      case SCAT_M2: {                                                                    \
        double *A = (acc);                                                               \
        const double *M = (j)->mean;                                                     \
        bool sq = (j)->kind == SCAT_M2;                                                  \
        for (int64_t i = a; i < e; i++) {                                                \
          if (!OWN(i) || (V != NULL && !ladle_bit_get(V, i))) continue;                  \
          double d = (double)X[i] - M[GID(i)];                                           \
          A[SCAT_SLOT(i, GID)] += sq ? d * d : d;                                        \
        }                                                                                \
        break;                                                                           \
      }                                                                                  \
      default:                                                                           \
        break;                                                                           \
    }                                                                                    \
    if ((j)->want_cnt && (j)->kind != SCAT_MIN && (j)->kind != SCAT_MAX) {               \
      if (V == NULL || (j)->kind == SCAT_LEN)                                            \
        for (int64_t i = a; i < e; i++) {                                                \
          if (OWN(i)) cnt[SCAT_SLOT(i, GID)]++;                                          \
        }                                                                                \
      else                                                                               \
        for (int64_t i = a; i < e; i++)                                                  \
          if (OWN(i)) cnt[SCAT_SLOT(i, GID)] += ladle_bit_get(V, i);                     \
    }                                                                                    \
  }

/* groups [a, e): every other piece merged into piece 0 */
#define SCAT_MERGE(T, j, a, e)                                                                   \
  {                                                                                              \
    bool is_max = (j)->kind == SCAT_MAX;                                                         \
    for (size_t p = 1; p < (j)->pieces; p++) {                                                   \
      if ((j)->kind == SCAT_MIN || (j)->kind == SCAT_MAX) {                                      \
        T *A = (j)->acc[0], *B = (j)->acc[p];                                                    \
        for (int64_t k = a; k < e; k++)                                                          \
          if ((j)->cnt[p][k] > 0 && ((j)->cnt[0][k] == 0 || SCAT_BETTER(T, B[k], A[k], is_max))) \
            A[k] = B[k];                                                                         \
      } else if ((j)->kind == SCAT_M2 || (j)->kind == SCAT_DSUM || (j)->kind == SCAT_FSUM ||     \
                 (IS_FLOAT_T(T) && (j)->kind == SCAT_SUM)) {                                     \
        double *A = (j)->acc[0], *B = (j)->acc[p];                                               \
        for (int64_t k = a; k < e; k++) A[k] += B[k];                                            \
      } else if ((j)->kind == SCAT_SUM) {                                                        \
        uint64_t *A = (j)->acc[0], *B = (j)->acc[p];                                             \
        for (int64_t k = a; k < e; k++) A[k] += B[k];                                            \
      }                                                                                          \
      if ((j)->cnt != NULL)                                                                      \
        for (int64_t k = a; k < e; k++) (j)->cnt[0][k] += (j)->cnt[p][k];                        \
    }                                                                                            \
  }

/* Groups [a, e) of every other array of j (pieces, or one piece's lanes)
 * merged into its first. */
static void merge_range(const scat_job *j, int64_t a, int64_t e) {
  if (j->kind == SCAT_LEN || j->kind == SCAT_COUNT) {
    for (size_t p = 1; p < j->pieces; p++)
      for (int64_t k = a; k < e; k++) j->cnt[0][k] += j->cnt[p][k];
    return;
  }
  LADLE_DISPATCH_NUM(j->ph, SCAT_MERGE, j, a, e)
}

/* The sum of rows [a, e) into one group's 8 lanes (row i into lane i mod 8,
 * in row order: the scatter's own order, so the same bits), the lanes held in
 * registers, eight rows a step. */
#define SCAT_SUM_ONE_T(T, U, A, X, a, e)                     \
  {                                                          \
    U s_[8];                                                 \
    memcpy(s_, A, sizeof s_);                                \
    int64_t i = a;                                           \
    for (; i < e && (i & 7) != 0; i++) s_[i & 7] += (U)X[i]; \
    for (; i + 8 <= e; i += 8)                               \
      for (int l = 0; l < 8; l++) s_[l] += (U)X[i + l];      \
    for (; i < e; i++) s_[i & 7] += (U)X[i];                 \
    memcpy(A, s_, sizeof s_);                                \
  }
/* x where valid, else a zero of its type, without a branch (a null's
 * slot may hold anything: its bits are masked, not multiplied) */
static inline uint64_t sum_keep_uint64_t(uint64_t x, bool valid) {
  return x & ((uint64_t)0 - (uint64_t)valid);
}
static inline double sum_keep_double(double x, bool valid) {
  uint64_t b;
  memcpy(&b, &x, 8);
  b &= (uint64_t)0 - (uint64_t)valid;
  memcpy(&x, &b, 8);
  return x;
}

/* The same with a validity bitmap: a null row adds a zero instead of a branch
 * (the lanes start at +0.0 and so are never -0.0, which x + 0.0 would turn
 * into +0.0: the sums are the scatter's bit for bit). */
#define SCAT_SUM_ONE_V(T, U, A, X, V, a, e)                                                  \
  {                                                                                          \
    U s_[8];                                                                                 \
    memcpy(s_, A, sizeof s_);                                                                \
    for (int64_t i = a; i < e; i++) s_[i & 7] += sum_keep_##U((U)X[i], ladle_bit_get(V, i)); \
    memcpy(A, s_, sizeof s_);                                                                \
  }
#define SCAT_SUM_ONE(T, j, in, acc, a, e)                         \
  {                                                               \
    const T *X = (in)->values;                                    \
    const uint8_t *V_ = (in)->validity;                           \
    bool f_ = IS_FLOAT_T(T) || (j)->kind == SCAT_FSUM;            \
    if (f_ && V_ != NULL)                                         \
      SCAT_SUM_ONE_V(T, double, (double *)(acc), X, V_, a, e)     \
    else if (f_)                                                  \
      SCAT_SUM_ONE_T(T, double, (double *)(acc), X, a, e)         \
    else if (V_ != NULL)                                          \
      SCAT_SUM_ONE_V(T, uint64_t, (uint64_t *)(acc), X, V_, a, e) \
    else                                                          \
      SCAT_SUM_ONE_T(T, uint64_t, (uint64_t *)(acc), X, a, e)     \
  }

/* The min or max of rows [a, e) into one group's 8 lanes (row i in lane i
 * mod 8, the scatter's own slots, so the merge is unchanged) without a
 * validity bitmap: the lanes held in registers, each lane's count (every row
 * of it has a value) added at the end. Floats: a lane that is NaN (its start,
 * or only NaN so far) runs from -inf (max) or +inf (min) with a count of the
 * numbers it met, and is NaN again at the end when it met none, so that the
 * loop is a plain max or min, which the compiler vectorises (the scatter's
 * test for a NaN running value kept it scalar). */
#define SCAT_EXTREME_LANES(T, X, A, a, e, is_max)                                    \
  {                                                                                  \
    T s_[8];                                                                         \
    int64_t nn_[8];                                                                  \
    bool was_nan_[8];                                                                \
    double inf_ = is_max ? -INFINITY : INFINITY;                                     \
    for (int l = 0; l < 8; l++) {                                                    \
      s_[l] = A[l];                                                                  \
      nn_[l] = 0;                                                                    \
      was_nan_[l] = IS_FLOAT_T(T) && s_[l] != s_[l];                                 \
      if (was_nan_[l]) s_[l] = (T)inf_;                                              \
    }                                                                                \
    int64_t i = a;                                                                   \
    for (; i < e && (i & 7) != 0; i++) {                                             \
      T x_ = X[i];                                                                   \
      s_[i & 7] = (is_max ? x_ > s_[i & 7] : x_ < s_[i & 7]) ? x_ : s_[i & 7];       \
      nn_[i & 7] += x_ == x_;                                                        \
    }                                                                                \
    for (; i + 8 <= e; i += 8)                                                       \
      for (int l = 0; l < 8; l++) {                                                  \
        T x_ = X[i + l];                                                             \
        s_[l] = (is_max ? x_ > s_[l] : x_ < s_[l]) ? x_ : s_[l];                     \
        if (IS_FLOAT_T(T)) nn_[l] += x_ == x_;                                       \
      }                                                                              \
    for (; i < e; i++) {                                                             \
      T x_ = X[i];                                                                   \
      s_[i & 7] = (is_max ? x_ > s_[i & 7] : x_ < s_[i & 7]) ? x_ : s_[i & 7];       \
      nn_[i & 7] += x_ == x_;                                                        \
    }                                                                                \
    double nan_ = NAN;                                                               \
    for (int l = 0; l < 8; l++) A[l] = was_nan_[l] && nn_[l] == 0 ? (T)nan_ : s_[l]; \
  }
/* The same with a validity bitmap V: a null row leaves its lane as it is (the
 * value compared is the lane's own, a select the compiler vectorises, where a
 * branch per row kept the loop scalar), and each lane counts its valid rows.
 * Rows 8k..8k+7 are lanes 0..7, so a byte of V holds the eight lanes' bits. */
/* one row i of SCAT_EXTREME_LANES_V outside whole bytes of the bitmap, in
 * its lane i & 7 (a null row skipped) */
#define SCAT_EXTREME_ROW_V(T, X, V, i, is_max)                               \
  if (ladle_bit_get(V, i)) {                                                 \
    T x_ = X[i];                                                             \
    s_[i & 7] = (is_max ? x_ > s_[i & 7] : x_ < s_[i & 7]) ? x_ : s_[i & 7]; \
    nn_[i & 7] += x_ == x_;                                                  \
    vc_[i & 7]++;                                                            \
  }

#define SCAT_EXTREME_LANES_V(T, X, V, A, cnt, a, e, is_max)      \
  {                                                              \
    T s_[8];                                                     \
    int64_t nn_[8], vc_[8];                                      \
    bool was_nan_[8];                                            \
    double inf_ = is_max ? -INFINITY : INFINITY;                 \
    for (int l = 0; l < 8; l++) {                                \
      s_[l] = A[l];                                              \
      nn_[l] = vc_[l] = 0;                                       \
      was_nan_[l] = IS_FLOAT_T(T) && s_[l] != s_[l];             \
      if (was_nan_[l]) s_[l] = (T)inf_;                          \
    }                                                            \
    int64_t i = a;                                               \
    for (; i < e && ((i & 7) != 0 || i + 8 > e); i++) {          \
      SCAT_EXTREME_ROW_V(T, X, V, i, is_max)                     \
    }                                                            \
    for (; i + 8 <= e; i += 8) {                                 \
      unsigned b_ = V[i >> 3];                                   \
      for (int l = 0; l < 8; l++) {                              \
        int v_ = (b_ & (1u << l)) != 0;                          \
        T x_ = v_ ? X[i + l] : s_[l];                            \
        s_[l] = (is_max ? x_ > s_[l] : x_ < s_[l]) ? x_ : s_[l]; \
        if (IS_FLOAT_T(T)) nn_[l] += v_ & (x_ == x_);            \
        vc_[l] += v_;                                            \
      }                                                          \
    }                                                            \
    for (; i < e; i++) {                                         \
      SCAT_EXTREME_ROW_V(T, X, V, i, is_max)                     \
    }                                                            \
    double nan_ = NAN;                                           \
    for (int l = 0; l < 8; l++) {                                \
      A[l] = was_nan_[l] && nn_[l] == 0 ? (T)nan_ : s_[l];       \
      cnt[l] += vc_[l];                                          \
    }                                                            \
  }
#define SCAT_EXTREME_ONE(T, j, in, acc, cnt, a, e)                                     \
  {                                                                                    \
    const T *X = (in)->values;                                                         \
    const uint8_t *V_ = (in)->validity;                                                \
    T *A_ = (acc);                                                                     \
    if (V_ != NULL) {                                                                  \
      if ((j)->kind == SCAT_MAX)                                                       \
        SCAT_EXTREME_LANES_V(T, X, V_, A_, cnt, a, e, true)                            \
      else                                                                             \
        SCAT_EXTREME_LANES_V(T, X, V_, A_, cnt, a, e, false)                           \
    } else {                                                                           \
      if ((j)->kind == SCAT_MAX)                                                       \
        SCAT_EXTREME_LANES(T, X, A_, a, e, true)                                       \
      else                                                                             \
        SCAT_EXTREME_LANES(T, X, A_, a, e, false)                                      \
      /* rows of [a, e) in lane l: those below e less those below a */                 \
      for (int64_t l = 0; l < 8; l++) cnt[l] += ((e) + 7 - l) / 8 - ((a) + 7 - l) / 8; \
    }                                                                                  \
  }

/* rows [a, e) of `in`, whose ids are G, into one piece's arrays */
static void scat_rows(const scat_job *j, const ladle_column *in, const uint32_t *G, void *acc,
                      int64_t *cnt, int64_t a, int64_t e, uint32_t lo, uint32_t span) {
  int64_t lanes = j->lanes, ng = j->ng;
  if (j->kind == SCAT_LEN || j->kind == SCAT_COUNT) {
    /* no values read: any type (strings, lists, null) */
    const uint8_t *V = j->kind == SCAT_COUNT ? in->validity : NULL;
    if (j->own > 0) {
      for (int64_t i = a; i < e; i++)
        if (SCAT_OWN_RANGE(i)) cnt[G[i]] += V == NULL || ladle_bit_get(V, i);
    } else if (V == NULL) {
      for (int64_t i = a; i < e; i++) cnt[SCAT_SLOT(i, SCAT_GID_IDS)]++;
    } else {
      for (int64_t i = a; i < e; i++) cnt[SCAT_SLOT(i, SCAT_GID_IDS)] += ladle_bit_get(V, i);
    }
    return;
  }
  if (j->own > 0) {
    LADLE_DISPATCH_NUM(j->ph, SCAT_ROWS, j, in, G, acc, cnt, a, e, SCAT_GID_IDS, SCAT_OWN_RANGE)
    return;
  }
  LADLE_UNUSED(lo);
  LADLE_UNUSED(span);
  if (ng == 1 && lanes == 8 && !j->want_cnt && (j->kind == SCAT_SUM || j->kind == SCAT_FSUM))
    LADLE_DISPATCH_NUM(j->ph, SCAT_SUM_ONE, j, in, acc, a, e)
  else if (ng == 1 && lanes == 8 && (j->kind == SCAT_MIN || j->kind == SCAT_MAX))
    LADLE_DISPATCH_NUM(j->ph, SCAT_EXTREME_ONE, j, in, acc, cnt, a, e)
  else if (ng == 1)
    LADLE_DISPATCH_NUM(j->ph, SCAT_ROWS, j, in, G, acc, cnt, a, e, SCAT_GID_ONE, SCAT_OWN_ALL)
  else
    LADLE_DISPATCH_NUM(j->ph, SCAT_ROWS, j, in, G, acc, cnt, a, e, SCAT_GID_IDS, SCAT_OWN_ALL)
}

static ladle_status scat_piece(void *vctx, size_t p, ladle_error *err) {
  LADLE_UNUSED(err);
  scat_job *j = vctx;
  int64_t lanes = j->lanes, ng = j->ng;
  if (j->own > 0) {
    /* groups [lo, hi) of every row, into the one array */
    int64_t lo = (int64_t)p * j->own, hi = LADLE_MIN(lo + j->own, ng);
    void *acc = j->acc ? j->acc[0] : NULL;
    int64_t *cnt = j->cnt ? j->cnt[0] : NULL;
    if (acc != NULL && (j->kind == SCAT_MIN || j->kind == SCAT_MAX))
      LADLE_DISPATCH_NUM(j->ph, SCAT_INIT, j, acc, lo, hi)
    for (size_t b = 0; b < j->nblk; b++) {
      if (j->bmax[b] < (uint64_t)lo || j->bmin[b] >= (uint64_t)hi) continue;
      if (j->nins > 1)
        scat_rows(j, &j->in[b], j->ids + j->starts[b], acc, cnt, 0, j->in[b].length, (uint32_t)lo,
                  (uint32_t)(hi - lo));
      else
        scat_rows(j, j->in, j->ids, acc, cnt, (int64_t)b * j->blk,
                  LADLE_MIN((int64_t)(b + 1) * j->blk, j->n), (uint32_t)lo, (uint32_t)(hi - lo));
    }
    return LADLE_OK;
  }
  void *acc = j->acc ? j->acc[p] : NULL;
  int64_t *cnt = j->cnt ? j->cnt[p] : NULL;
  if (acc != NULL && (j->kind == SCAT_MIN || j->kind == SCAT_MAX))
    LADLE_DISPATCH_NUM(j->ph, SCAT_INIT, j, acc, 0, ng * lanes)
  if (j->nins > 1) {
    /* a run of whole input pieces */
    size_t c0 = p * (size_t)j->piece, c1 = LADLE_MIN(c0 + (size_t)j->piece, j->nins);
    for (size_t c = c0; c < c1; c++)
      scat_rows(j, &j->in[c], j->ids + j->starts[c], acc, cnt, 0, j->in[c].length, 0, 0);
  } else {
    int64_t a = (int64_t)p * j->piece, e = LADLE_MIN(a + j->piece, j->n);
    scat_rows(j, j->in, j->ids, acc, cnt, a, e, 0, 0);
  }
  if (lanes > 1) {
    /* the lanes folded into the first, which is what the pieces merge */
    enum { MAX_LANES = 8 };
    void *lacc[MAX_LANES];
    int64_t *lcnt[MAX_LANES];
    scat_job f = *j;
    /* min/max keep the value's own type, the others 8-byte accumulators */
    size_t es = j->kind == SCAT_MIN || j->kind == SCAT_MAX ? ladle_type_width(j->in->type.id) : 8;
    f.pieces = (size_t)lanes;
    f.acc = acc ? lacc : NULL;
    f.cnt = cnt ? lcnt : NULL;
    for (int64_t l = 0; l < lanes; l++) {
      lacc[l] = acc ? (char *)acc + (size_t)(l * ng) * es : NULL;
      lcnt[l] = cnt ? cnt + l * ng : NULL;
    }
    merge_range(&f, 0, ng);
  }
  return LADLE_OK;
}

/* block b's least and greatest id (owner mode) */
static ladle_status scat_span(void *vctx, size_t b, ladle_error *err) {
  LADLE_UNUSED(err);
  scat_job *j = vctx;
  int64_t a = j->nins > 1 ? j->starts[b] : (int64_t)b * j->blk;
  int64_t e = j->nins > 1 ? a + j->in[b].length : LADLE_MIN(a + j->blk, j->n);
  uint32_t l = UINT32_MAX, h = 0;
  for (int64_t i = a; i < e; i++) {
    uint32_t g = j->ids[i];
    l = g < l ? g : l;
    h = g > h ? g : h;
  }
  j->bmin[b] = l;
  j->bmax[b] = h;
  return LADLE_OK;
}

static ladle_status scat_merge(void *vctx, size_t q, ladle_error *err) {
  LADLE_UNUSED(err);
  scat_job *j = vctx;
  int64_t a = (int64_t)q * j->gpiece, e = LADLE_MIN(a + j->gpiece, j->ng);
  merge_range(j, a, e);
  return LADLE_OK;
}

/* Runs one scatter aggregation of `in` by g's ids. On success *acc (ng
 * accumulators, or NULL for the counts) and *cnt (ng counts, when asked or
 * needed) belong to the caller (ladle_scratch_free). */
static ladle_status scatter(const ladle_kctx *ctx, scat_kind kind, const ladle_column *in,
                            size_t nins, const ladle_groups *g, const double *mean, bool want_cnt,
                            void **acc_out, int64_t **cnt_out, ladle_error *err) {
  scat_job j;
  memset(&j, 0, sizeof j);
  j.in = in;
  j.nins = nins;
  j.ids = g->ids;
  j.mean = mean;
  j.kind = kind;
  j.ph = ladle_type_phys(in->type.id);
  j.n = nins > 1 ? g->nrows : in->length;
  j.ng = g->ngroups;
  int64_t *starts = NULL;
  if (nins > 1) {
    starts = malloc(nins * sizeof *starts);
    if (starts == NULL) return LADLE_OOM(err, "aggregation");
    for (size_t c = 0, r = 0; c < nins; r += (size_t)in[c].length, c++) starts[c] = (int64_t)r;
    j.starts = starts;
  }
  j.want_cnt =
      want_cnt || kind == SCAT_MIN || kind == SCAT_MAX || kind == SCAT_LEN || kind == SCAT_COUNT;
  bool has_acc = kind != SCAT_LEN && kind != SCAT_COUNT;
  /* a piece per thread, and only where the rows outnumber the groups enough
   * to pay for the extra arrays and their merge */
  j.pieces = j.n >= 4 * j.ng ? ladle_cpu_pieces(ctx, j.n, (int64_t)1 << 16, 1, 64, &j.piece) : 1;
  /* many groups: arrays per piece would outweigh the rows (q18's 1.5M orders
   * over 6M lines: 16 arrays of 12 MB, zeroed and merged); tasks own group
   * ranges instead, when each reads the ids of every row cheaper than that */
  int threads = ctx->pool ? ladle_pool_threads(ctx->pool) : 1;
  size_t owners = 0;
  if (threads > 1 && j.ng >= 65536 && j.n >= 1 << 16 && (j.pieces <= 1 || j.ng * 16 > j.n)) {
    j.own = (j.ng + threads - 1) / threads;
    owners = (size_t)((j.ng + j.own - 1) / j.own);
  }
  if (j.pieces <= 1 || owners > 0) {
    j.pieces = 1;
    j.piece = LADLE_MAX(j.n, 1);
  }
  if (nins > 1) {
    /* pieces of whole input pieces: j.piece of them each */
    j.pieces = LADLE_MIN(j.pieces, nins);
    j.piece = (int64_t)((nins + j.pieces - 1) / j.pieces);
    j.pieces = (nins + (size_t)j.piece - 1) / (size_t)j.piece;
  }
  j.lanes = j.ng <= 512 && j.n >= 64 * j.ng ? 8 : 1;
  size_t bytes = (size_t)LADLE_MAX(j.ng, 1) * (size_t)j.lanes * 8;
  void *accs[64];
  int64_t *cnts[64];
  if (j.pieces > 64) {
    int64_t items = nins > 1 ? (int64_t)nins : j.n;
    j.piece = (items + 63) / 64;
    j.pieces = (size_t)((items + j.piece - 1) / j.piece);
  }
  ladle_status st = LADLE_OK;
  if (owners > 0) {
    j.blk = 1 << 16;
    j.nblk = nins > 1 ? nins : (size_t)((j.n + j.blk - 1) / j.blk);
    j.bmin = malloc(LADLE_MAX(j.nblk, 1) * sizeof *j.bmin);
    j.bmax = malloc(LADLE_MAX(j.nblk, 1) * sizeof *j.bmax);
    st = j.bmin && j.bmax ? ladle_pool_run(ctx->pool, j.nblk, scat_span, &j, err)
                          : LADLE_OOM(err, "aggregation");
  }
  for (size_t p = 0; p < j.pieces; p++) {
    accs[p] = has_acc ? ladle_scratch_alloc(bytes, true) : NULL;
    cnts[p] = j.want_cnt ? ladle_scratch_alloc(bytes, true) : NULL;
    if ((has_acc && accs[p] == NULL) || (j.want_cnt && cnts[p] == NULL))
      st = LADLE_OOM(err, "aggregation");
  }
  j.acc = has_acc ? accs : NULL;
  j.cnt = j.want_cnt ? cnts : NULL;
  if (st == LADLE_OK)
    st = ladle_pool_run(ctx->pool, owners > 0 ? owners : j.pieces, scat_piece, &j, err);
  if (st == LADLE_OK && j.pieces > 1) {
    size_t m = ladle_cpu_pieces(ctx, j.ng, 1 << 14, 2, 64, &j.gpiece);
    st = ladle_pool_run(ctx->pool, m, scat_merge, &j, err);
  }
  for (size_t p = st == LADLE_OK ? 1 : 0; p < j.pieces; p++) {
    ladle_scratch_free(accs[p]);
    ladle_scratch_free(cnts[p]);
  }
  free(starts);
  free(j.bmin);
  free(j.bmax);
  if (st != LADLE_OK) return st;
  *acc_out = accs[0];
  if (cnt_out != NULL)
    *cnt_out = cnts[0];
  else
    ladle_scratch_free(cnts[0]);
  return LADLE_OK;
}

/* The min/max accumulators of type T into o, null where a group had no value. */
#define SCAT_PUT(T, o, acc, cnt, ng)                                       \
  {                                                                        \
    const T *A = (acc);                                                    \
    T *O = LADLE_COL_MUT(o, T);                                            \
    for (int64_t k = 0; k < (ng); k++) {                                   \
      O[k] = cnt[k] > 0 ? A[k] : (T)0;                                     \
      if (cnt[k] == 0) ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), k, false); \
    }                                                                      \
  }

#define ARG_K(T, in, g, pos, best, bestv, is_max)                              \
  {                                                                            \
    const T *X = (in)->values;                                                 \
    T *BV = (T *)(bestv);                                                      \
    for (int64_t i = 0; i < (in)->length; i++) {                               \
      uint32_t k = (g)->ids[i];                                                \
      int64_t p = pos[k]++;                                                    \
      if (!ladle_column_valid(in, i)) continue;                                \
      T x = X[i];                                                              \
      /* NaN is skipped, but a group of only NaN (and nulls)                   \
       * gives its first NaN, as Polars */                                     \
      bool nan_ = IS_FLOAT_T(T) && x != x;                                     \
      if (best[k] >= 0 && nan_) continue;                                      \
      if (best[k] < 0 || BV[k] != BV[k] || (is_max ? x > BV[k] : x < BV[k])) { \
        best[k] = p;                                                           \
        BV[k] = x;                                                             \
      }                                                                        \
    }                                                                          \
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
 * selected (v is reordered). `nulls` is the number of nulls beside the n
 * values: Polars sorts them first and reckons the fractional position among
 * all the rows, (n - 1) * q + nulls, so that position's rounding (and the
 * linear weight) is the one of the shifted sum; without nulls it is
 * (n - 1) * q. */
static double quantile_sel(double *v, int64_t n, int64_t nulls, double q, ladle_interpolation m) {
  if (n == 1) return v[0];
  double pos = (double)(n - 1) * q + (double)nulls;
  int64_t lo = (int64_t)pos, hi = (int64_t)ceil(pos), k;
  switch (m) {
    case LADLE_INTERP_LOWER:
      k = lo - nulls;
      break;
    case LADLE_INTERP_HIGHER:
      k = hi - nulls;
      break;
    case LADLE_INTERP_NEAREST:
      /* ties away from zero, as Polars 2.1 (Rust's round) */
      k = (int64_t)round(pos) - nulls;
      break;
    case LADLE_INTERP_EQUIPROBABLE:
      k = (int64_t)ceil(q * (double)n) - 1;
      break;
    default: { /* linear, midpoint: v[lo] and v[hi] */
      int64_t a_at = LADLE_MIN(LADLE_MAX(lo - nulls, 0), n - 1);
      select_k(v, n, a_at);
      double a = v[a_at];
      if (hi == lo || a_at == n - 1) return a;
      double b = min_total(v + a_at + 1, n - a_at - 1);
      if (a == b) return a; /* as Polars: the median of [inf, inf] is inf, not NaN */
      if (m == LADLE_INTERP_MIDPOINT) return (a + b) / 2;
      return (pos - (double)lo) * (b - a) + a;
    }
  }
  k = LADLE_MIN(LADLE_MAX(k, 0), n - 1);
  select_k(v, n, k);
  return v[k];
}

/* Median and quantiles: each group's non-null values gathered together (a
 * counting sort by group), then per group, in parallel, a selection of the
 * order statistics the quantile needs. */
typedef struct ostat_job {
  const int64_t *off;  /* per group: its values in vals[off[k], off[k+1]) */
  const int64_t *rows; /* per group: its rows, nulls included */
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
      put_f(j->o, k, quantile_sel(j->vals + j->off[k], n, j->rows[k] - n, j->q, j->m));
    }
  }
  return LADLE_OK;
}

static ladle_status order_stat(const ladle_kctx *ctx, const ladle_kexpr *agg,
                               const ladle_column *in, ladle_groups *g, ladle_column *o,
                               ladle_error *err) {
  int64_t ng = g->ngroups;
  int64_t *off = ladle_zalloc(((size_t)ng + 2) * sizeof *off);
  int64_t *rows = ladle_zalloc((size_t)LADLE_MAX(ng, 1) * sizeof *rows);
  double *vals = ladle_scratch_alloc((size_t)LADLE_MAX(in->length, 1) * sizeof *vals, false);
  if (off == NULL || rows == NULL || vals == NULL) {
    free(off);
    free(rows);
    ladle_scratch_free(vals);
    return LADLE_OOM(err, "quantile");
  }
  for (int64_t i = 0; i < g->nrows; i++) {
    off[g->ids[i] + 2] += ladle_column_valid(in, i);
    rows[g->ids[i]]++;
  }
  for (int64_t k = 0; k < ng; k++) off[k + 2] += off[k + 1];
  /* off[k + 1] is now group k's write cursor; after the scatter, its end */
  for (int64_t i = 0; i < g->nrows; i++)
    if (ladle_column_valid(in, i)) vals[off[g->ids[i] + 1]++] = ladle_column_value_f64(in, i);
  ostat_job j;
  j.off = off;
  j.rows = rows;
  j.vals = vals;
  j.q = agg->op == LADLE_AGG_MEDIAN ? 0.5 : agg->aopts.quantile;
  j.m = agg->op == LADLE_AGG_MEDIAN ? LADLE_INTERP_LINEAR : agg->aopts.interpolation;
  j.o = o;
  j.ngroups = ng;
  size_t pieces = ladle_cpu_pieces(ctx, ng, 64, 8, 8, &j.piece); /* whole validity bytes */
  ladle_status st = ladle_pool_run(ctx->pool, pieces, ostat_piece, &j, err);
  free(off);
  free(rows);
  ladle_scratch_free(vals);
  return st;
}

/* mean, var and std in two passes (sum and count, then squared deviations from
 * the mean, both row-parallel scatters): no division per row and no loss of
 * precision from sum-of-squares. */
#define ONE_GROUP_MOMENTS(T, in, mean, m2, cnt, second)                   \
  {                                                                       \
    const T *X = (in)->values;                                            \
    int64_t n = (in)->length, i = 0;                                      \
    /* var/std: sums of deviations from an anchor (group_anchors) */      \
    double a_ = (second) && n > 0 ? (double)X[0] : 0;                     \
    if (!isfinite(a_)) a_ = 0;                                            \
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                \
    for (; i + 4 <= n; i += 4) {                                          \
      s0 += (double)X[i] - a_;                                            \
      s1 += (double)X[i + 1] - a_;                                        \
      s2 += (double)X[i + 2] - a_;                                        \
      s3 += (double)X[i + 3] - a_;                                        \
    }                                                                     \
    for (; i < n; i++) s0 += (double)X[i] - a_;                           \
    cnt[0] = n;                                                           \
    mean[0] = n > 0 ? a_ + ((s0 + s1) + (s2 + s3)) / (double)n : 0;       \
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

/* Polars' float sum of 128 values: 16 lanes, each summing every 16th value,
 * folded in halves down to four lanes, added as (0 + 2) + (1 + 3). */
enum { POLARS_BLOCK = 128, POLARS_STRIPE = 16 };

static double polars_block_sum(const double *f) {
  double v[POLARS_STRIPE] = {0};
  for (int c = 0; c < POLARS_BLOCK; c += POLARS_STRIPE)
    for (int k = 0; k < POLARS_STRIPE; k++) v[k] += f[c + k];
  for (int w = POLARS_STRIPE; w > 4; w /= 2)
    for (int k = 0; k < w / 2; k++) v[k] += v[w / 2 + k];
  return (v[0] + v[2]) + (v[1] + v[3]);
}

/* n is a positive multiple of 128: halves by whole blocks, the left one
 * smaller when the blocks are odd. */
static double polars_pairwise(const double *f, int64_t n) {
  if (n == POLARS_BLOCK) return polars_block_sum(f);
  int64_t left = n / POLARS_BLOCK / 2 * POLARS_BLOCK;
  return polars_pairwise(f, left) + polars_pairwise(f + left, n - left);
}

/* Polars' sum of n doubles: the n % 128 first ones one after the other, the
 * rest pairwise, the pairwise part first. */
static double polars_sum(const double *f, int64_t n) {
  int64_t rest = n % POLARS_BLOCK;
  double head = 0;
  for (int64_t i = 0; i < rest; i++) head += f[i];
  return (n > rest ? polars_pairwise(f + rest, n - rest) : 0.0) + head;
}

double ladle_cpu_float_sum(const double *f, int64_t n) { return polars_sum(f, n); }

/* rows [a, a + m) of x into buf, a null row as +0.0: its bits and'ed with a
 * mask made from its validity bit, without a branch (a null in three rows at
 * random mispredicted a branch per row) */
static void masked_copy(const double *x, const uint8_t *v, int64_t a, int64_t m, double *buf) {
  for (int64_t r = 0; r < m; r++) {
    uint64_t b;
    memcpy(&b, &x[a + r], 8);
    b &= (uint64_t)0 - (uint64_t)ladle_bit_get(v, a + r);
    memcpy(&buf[r], &b, 8);
  }
}

/* polars_pairwise of x with nulls as 0, each block of 128 masked into a
 * buffer on the stack just before it is summed (the same values, so the
 * same bits as summing a masked copy of the whole array, without one) */
static double pairwise_valid(const double *x, const uint8_t *v, int64_t a, int64_t n) {
  if (n == POLARS_BLOCK) {
    double b[POLARS_BLOCK];
    masked_copy(x, v, a, POLARS_BLOCK, b);
    return polars_block_sum(b);
  }
  int64_t left = n / POLARS_BLOCK / 2 * POLARS_BLOCK;
  double l = pairwise_valid(x, v, a, left);
  return l + pairwise_valid(x, v, a + left, n - left);
}

double ladle_cpu_float_sum_valid(const double *x, const uint8_t *valid, int64_t n) {
  if (valid == NULL) return polars_sum(x, n);
  int64_t rest = n % POLARS_BLOCK;
  double headv[POLARS_BLOCK], head = 0;
  masked_copy(x, valid, 0, rest, headv);
  for (int64_t i = 0; i < rest; i++) head += headv[i];
  return (n > rest ? pairwise_valid(x, valid, rest, n - rest) : 0.0) + head;
}

/* mean with polars_order (see ladle_agg_opts): over all rows (g->whole), the
 * values as doubles, nulls as 0 in their places, summed as Polars sums one
 * array; per group, a Kahan sum of the group's values in row order, as
 * Polars' in-memory group_by does (checked on up to 3000 rows; on larger
 * inputs its partitioned group_by can round differently). The input's pieces
 * are one sequence of rows: Polars' own chunks are not known here. */
/* The whole-column mean's sum (ordered_mean over g->whole) in parallel, bit
 * for bit Polars' sum of the values as one array (nulls as 0 in their
 * places): polars_pairwise's tree is cut at a fixed depth into leaves, each
 * leaf's values converted to doubles and summed by a task, and the leaves'
 * sums added in the tree's own order; the n % 128 values in front are added
 * one after the other, as polars_sum does. */
enum { PSUM_DEPTH = 6 }; /* up to 64 leaves */

typedef struct psum_job {
  const ladle_column *in;
  size_t nins;
  const int64_t *starts; /* nins + 1: each piece's first row, then n */
  int64_t off[1 << PSUM_DEPTH], len[1 << PSUM_DEPTH];
  double sum[1 << PSUM_DEPTH];
  size_t nleaves;
} psum_job;

static void psum_leaves(psum_job *j, int64_t off, int64_t n, int depth) {
  if (depth == 0 || n == POLARS_BLOCK) {
    j->off[j->nleaves] = off;
    j->len[j->nleaves++] = n;
    return;
  }
  int64_t left = n / POLARS_BLOCK / 2 * POLARS_BLOCK;
  psum_leaves(j, off, left, depth - 1);
  psum_leaves(j, off + left, n - left, depth - 1);
}

static double psum_combine(const psum_job *j, size_t *k, int64_t n, int depth) {
  if (depth == 0 || n == POLARS_BLOCK) return j->sum[(*k)++];
  int64_t left = n / POLARS_BLOCK / 2 * POLARS_BLOCK;
  double a = psum_combine(j, k, left, depth - 1);
  return a + psum_combine(j, k, n - left, depth - 1);
}

#define PSUM_TO_F64(T, X, buf, m) \
  for (int64_t r_ = 0; r_ < (m); r_++) (buf)[r_] = (double)((const T *)(X))[r_];

/* rows [a, a + n) of the pieces as doubles, nulls as 0 */
static void psum_values(const psum_job *j, int64_t a, int64_t n, double *buf) {
  size_t p = 0;
  while (p + 1 < j->nins && j->starts[p + 1] <= a) p++;
  for (int64_t w = 0; w < n; p++) {
    const ladle_column *c = &j->in[p];
    int64_t i0 = a + w - j->starts[p], m = LADLE_MIN(c->length - i0, n - w);
    if (m <= 0) continue;
    ladle_phys ph = ladle_type_phys(c->type.id);
    const char *X = (const char *)c->values + (size_t)i0 * ladle_type_width(c->type.id);
    LADLE_DISPATCH_NUM(ph, PSUM_TO_F64, X, buf + w, m)
    if (c->validity != NULL)
      for (int64_t r = 0; r < m; r++)
        if (!ladle_bit_get(c->validity, i0 + r)) buf[w + r] = 0.0;
    w += m;
  }
}

static ladle_status psum_task(void *vctx, size_t k, ladle_error *err) {
  psum_job *j = vctx;
  double *buf = ladle_scratch_alloc((size_t)LADLE_MAX(j->len[k], 1) * sizeof *buf, false);
  if (buf == NULL) return LADLE_OOM(err, "mean");
  psum_values(j, j->off[k], j->len[k], buf);
  j->sum[k] = polars_pairwise(buf, j->len[k]);
  ladle_scratch_free(buf);
  return LADLE_OK;
}

/* Whether every piece's values convert with psum_values (numeric and BOOL). */
static bool psum_types_ok(const ladle_column *in, size_t nins) {
  for (size_t p = 0; p < nins; p++) {
    ladle_type_id t = in[p].type.id;
    if (!(ladle_type_is_numeric(t) || t == LADLE_TYPE_BOOL) || t == LADLE_TYPE_DECIMAL ||
        t == LADLE_TYPE_INT128 || ladle_type_width(t) == 0)
      return false;
  }
  return true;
}

static ladle_status whole_mean_sum(const ladle_kctx *ctx, const ladle_column *in, size_t nins,
                                   int64_t n, double *out, ladle_error *err) {
  psum_job *j = calloc(1, sizeof *j);
  int64_t *starts = malloc((nins + 1) * sizeof *starts);
  if (j == NULL || starts == NULL) {
    free(j);
    free(starts);
    return LADLE_OOM(err, "mean");
  }
  starts[0] = 0;
  for (size_t p = 0; p < nins; p++) starts[p + 1] = starts[p] + in[p].length;
  j->in = in;
  j->nins = nins;
  j->starts = starts;
  int64_t rest = n % POLARS_BLOCK;
  ladle_status st = LADLE_OK;
  double pair = 0.0;
  if (n > rest) {
    psum_leaves(j, rest, n - rest, PSUM_DEPTH);
    st = ladle_pool_run(ctx->pool, j->nleaves, psum_task, j, err);
    size_t k = 0;
    if (st == LADLE_OK) pair = psum_combine(j, &k, n - rest, PSUM_DEPTH);
  }
  double headv[POLARS_BLOCK], head = 0;
  psum_values(j, 0, rest, headv);
  for (int64_t i = 0; i < rest; i++) head += headv[i];
  *out = pair + head;
  free(starts);
  free(j);
  return st;
}

static ladle_status ordered_mean(const ladle_kctx *ctx, const ladle_kexpr *agg,
                                 const ladle_column *in, size_t nins, ladle_groups *g,
                                 ladle_column *o, ladle_error *err) {
  LADLE_UNUSED(agg);
  int64_t ng = g->ngroups, n = 0;
  for (size_t p = 0; p < nins; p++) n += in[p].length;
  if (g->whole && ng == 1 && n >= 4 * POLARS_BLOCK && psum_types_ok(in, nins)) {
    /* one group, large: in parallel, the same bits */
    double sum;
    LADLE_RETURN_NOT_OK(whole_mean_sum(ctx, in, nins, n, &sum, err));
    int64_t valid = 0;
    for (size_t p = 0; p < nins; p++) valid += in[p].length - in[p].null_count;
    put_f(o, 0, valid > 0 ? sum / (double)valid : 0);
    if (valid == 0) ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), 0, false);
    return LADLE_OK;
  }
  double *s = ladle_zalloc((size_t)LADLE_MAX(ng, 1) * sizeof *s);
  double *c = ladle_zalloc((size_t)LADLE_MAX(ng, 1) * sizeof *c);
  int64_t *cnt = ladle_zalloc((size_t)LADLE_MAX(ng, 1) * sizeof *cnt);
  double *all = g->whole ? malloc((size_t)LADLE_MAX(n, 1) * sizeof *all) : NULL;
  if (s == NULL || c == NULL || cnt == NULL || (g->whole && all == NULL)) {
    free(s);
    free(c);
    free(cnt);
    free(all);
    return LADLE_OOM(err, "mean");
  }
  int64_t row = 0;
  for (size_t p = 0; p < nins; p++) {
    const ladle_column *col = &in[p];
    for (int64_t i = 0; i < col->length; i++, row++) {
      bool valid = col->validity == NULL || ladle_bit_get(col->validity, i);
      double x = valid ? ladle_column_value_f64(col, i) : 0.0;
      if (all != NULL) {
        all[row] = x;
        cnt[0] += valid;
      } else if (valid) {
        uint32_t k = g->ids[row];
        double y = x - c[k], t = s[k] + y;
        c[k] = (t - s[k]) - y;
        s[k] = t;
        cnt[k]++;
      }
    }
  }
  if (all != NULL && ng > 0) s[0] = polars_sum(all, n);
  for (int64_t k = 0; k < ng; k++) {
    put_f(o, k, cnt[k] > 0 ? s[k] / (double)cnt[k] : 0);
    if (cnt[k] == 0) ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), k, false);
  }
  free(s);
  free(c);
  free(cnt);
  free(all);
  return LADLE_OK;
}

/* Per group, the value its deviations are summed from in var/std: its first
 * row's value where that row is valid and finite, else 0. The mean is then the
 * anchor plus the mean deviation, exact for a group of equal values (every
 * deviation is 0), where the sum over the count can be an ulp off and the
 * squares of that ulp overflow for large values (Polars anchors the same way:
 * the std of [1e300] * 13 is 0, not inf). NULL when out of memory. */
static double *group_anchors(const ladle_column *in, size_t nins, const ladle_groups *g) {
  int64_t ng = g->ngroups;
  double *a = ladle_scratch_alloc((size_t)LADLE_MAX(ng, 1) * sizeof *a, true);
  if (a == NULL || g->first == NULL) return a;
  int64_t *starts = malloc((nins + 1) * sizeof *starts);
  if (starts == NULL) {
    ladle_scratch_free(a);
    return NULL;
  }
  starts[0] = 0;
  for (size_t c = 0; c < nins; c++) starts[c + 1] = starts[c] + in[c].length;
  for (int64_t k = 0; k < ng; k++) {
    int64_t r = g->first[k];
    if (r < 0 || r >= starts[nins]) continue;
    size_t lo = 0, hi = nins; /* the piece holding row r: starts[lo] <= r < starts[lo + 1] */
    while (hi - lo > 1) {
      size_t mid = (lo + hi) / 2;
      if (starts[mid] <= r)
        lo = mid;
      else
        hi = mid;
    }
    const ladle_column *c = &in[lo];
    int64_t i = r - starts[lo];
    if (!ladle_column_valid(c, i)) continue;
    double x = ladle_column_value_f64(c, i);
    if (isfinite(x)) a[k] = x;
  }
  free(starts);
  return a;
}

static ladle_status moments(const ladle_kctx *ctx, const ladle_kexpr *agg, const ladle_column *in,
                            size_t nins, ladle_groups *g, ladle_column *o, ladle_error *err) {
  int64_t ng = g->ngroups;
  double *mean = NULL, *m2 = NULL;
  int64_t *cnt = NULL;
  ladle_phys ph = ladle_type_phys(in->type.id);
  ladle_status st = LADLE_OK;
  bool second = agg->op != LADLE_AGG_MEAN;
  if (!second && agg->aopts.polars_order) return ordered_mean(ctx, agg, in, nins, g, o, err);
  if (ng == 1 && nins == 1 && in->validity == NULL) {
    /* one group without nulls (a select-level mean/std): plain reductions with
     * independent accumulators, which vectorize */
    mean = ladle_scratch_alloc(sizeof *mean, true);
    m2 = ladle_scratch_alloc(sizeof *m2, true);
    cnt = ladle_scratch_alloc(sizeof *cnt, true);
    if (mean == NULL || m2 == NULL || cnt == NULL) st = LADLE_OOM(err, "mean/var");
    if (st == LADLE_OK) LADLE_DISPATCH_NUM(ph, ONE_GROUP_MOMENTS, in, mean, m2, cnt, second)
  } else if (!second) {
    void *acc = NULL;
    st = scatter(ctx, SCAT_FSUM, in, nins, g, NULL, true, &acc, &cnt, err);
    mean = acc;
    if (st == LADLE_OK)
      for (int64_t k = 0; k < ng; k++)
        if (cnt[k] > 0) mean[k] /= (double)cnt[k];
  } else {
    /* var/std: deviations from an anchored mean (group_anchors) */
    void *acc = NULL;
    double *anchor = group_anchors(in, nins, g);
    st = anchor != NULL ? scatter(ctx, SCAT_DSUM, in, nins, g, anchor, true, &acc, &cnt, err)
                        : LADLE_OOM(err, "var/std");
    mean = acc;
    if (st == LADLE_OK)
      for (int64_t k = 0; k < ng; k++)
        if (cnt[k] > 0) mean[k] = anchor[k] + mean[k] / (double)cnt[k];
    ladle_scratch_free(anchor);
    if (st == LADLE_OK) {
      st = scatter(ctx, SCAT_M2, in, nins, g, mean, false, &acc, NULL, err);
      m2 = acc;
    }
  }
  for (int64_t k = 0; st == LADLE_OK && k < ng; k++) {
    double v;
    bool valid;
    if (!second) {
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
  ladle_scratch_free(mean);
  ladle_scratch_free(m2);
  ladle_scratch_free(cnt);
  return st;
}

/* Distinct values per group: the values get dense ids of their own (nulls one
 * more value, as Polars counts them), rows are bucketed by group, and each
 * group counts the ids it stamps first in an array indexed by id. No pair is
 * hashed, whatever the number of groups. The groups are cut into one range per
 * thread, each with its own stamp array. */
typedef struct nuniq_job {
  const ladle_groups *g, *v;
  uint32_t *out;
  int64_t piece;
} nuniq_job;

static ladle_status nuniq_piece(void *vctx, size_t p, ladle_error *err) {
  nuniq_job *j = vctx;
  const ladle_groups *g = j->g;
  int64_t a = (int64_t)p * j->piece, e = LADLE_MIN(a + j->piece, g->ngroups);
  uint32_t *stamp = ladle_scratch_alloc((size_t)LADLE_MAX(j->v->ngroups, 1) * sizeof *stamp, true);
  if (stamp == NULL) return LADLE_OOM(err, "n_unique");
  for (int64_t k = a; k < e; k++) {
    uint32_t c = 0, mark = (uint32_t)(k - a + 1);
    for (int64_t r = g->offsets[k]; r < g->offsets[k + 1]; r++) {
      uint32_t id = j->v->ids[g->rows[r]];
      c += stamp[id] != mark;
      stamp[id] = mark;
    }
    j->out[k] = c;
  }
  ladle_scratch_free(stamp);
  return LADLE_OK;
}

static ladle_status n_unique(const ladle_kctx *ctx, const ladle_column *in, ladle_groups *g,
                             ladle_column *o, ladle_error *err) {
  ladle_groups v;
  LADLE_RETURN_NOT_OK(ladle_cpu_group_ids(ctx, in, 1, &v, err));
  ladle_status st = ladle_cpu_groups_csr(ctx, g, err);
  if (st == LADLE_OK) {
    nuniq_job j = {g, &v, LADLE_COL_MUT(o, uint32_t), 0};
    size_t pieces = ladle_cpu_pieces(ctx, g->ngroups, 1 << 12, 1, 1, &j.piece);
    st = ladle_pool_run(ctx->pool, pieces, nuniq_piece, &j, err);
  }
  ladle_groups_release(&v);
  return st;
}

/* One aggregation; its input is `in` (NULL for len), or for the scatter
 * kinds nins consecutive pieces of it starting at `in`. */
/* sum (wrapping, 0 for a group of nulls), min and max (null for one) of an
 * INT128 column of one piece, sequentially: o has a validity bitmap for min
 * and max. Values are moved with memcpy (Arrow buffers may be 8-aligned). */
static void int128_aggregate(ladle_agg_op op, const ladle_column *in, const ladle_groups *g,
                             ladle_column *o) {
  typedef unsigned __int128 u128;
  char *O = LADLE_COL_MUT(o, char);
  const char *X = in->values;
  uint8_t *bits = LADLE_COL_VALIDITY_MUT(o);
  memset(O, 0, (size_t)g->ngroups * 16);
  if (bits != NULL) memset(bits, 0, (size_t)ladle_bitmap_bytes(g->ngroups));
  for (int64_t i = 0; i < g->nrows; i++) {
    if (!ladle_column_valid(in, i)) continue;
    int64_t k = g->ids[i];
    __int128 x, acc;
    memcpy(&x, X + 16 * i, 16);
    memcpy(&acc, O + 16 * k, 16);
    if (op == LADLE_AGG_SUM) {
      acc = (__int128)((u128)acc + (u128)x);
    } else if (!ladle_bit_get(bits, k) || (op == LADLE_AGG_MIN ? x < acc : x > acc)) {
      acc = x;
      ladle_bit_set(bits, k, true);
    }
    memcpy(O + 16 * k, &acc, 16);
  }
}

static bool scatters(ladle_agg_op op, ladle_type_id type);
static bool string_extreme_applies(const ladle_kexpr *agg, const ladle_column *ins, size_t nins,
                                   const ladle_groups *g);
static ladle_status string_extreme_one(const ladle_kctx *ctx, const ladle_column *ins, size_t nins,
                                       bool max, ladle_column *out, ladle_error *err);

static ladle_status aggregate(const ladle_kctx *ctx, const ladle_kexpr *agg, const ladle_column *in,
                              size_t nins, ladle_groups *g, ladle_column *out, ladle_error *err) {
  int64_t ng = g->ngroups;
  ladle_agg_op op = agg->kind == LADLE_KEX_LEN ? LADLE_AGG_LEN : (ladle_agg_op)agg->op;
  ladle_column o;
  ladle_status st = LADLE_OK;
  ladle_phys ph = in ? ladle_type_phys(in->type.id) : LADLE_PHYS_NULL;
  bool nullable = !(op == LADLE_AGG_SUM || op == LADLE_AGG_COUNT || op == LADLE_AGG_NULL_COUNT ||
                    op == LADLE_AGG_LEN || op == LADLE_AGG_N_UNIQUE || op == LADLE_AGG_ANY ||
                    op == LADLE_AGG_ALL);
  /* one group: the scatters and the counts read no ids (SCAT_GID_ONE), the
   * rest are given them */
  bool counts = op == LADLE_AGG_LEN || op == LADLE_AGG_COUNT || op == LADLE_AGG_NULL_COUNT;
  if (!(ng == 1 && (counts || (in != NULL && scatters(op, in->type.id)))))
    LADLE_RETURN_NOT_OK(ladle_groups_ids(g, err));
  if (op == LADLE_AGG_IMPLODE) return ladle_cpu_implode(ctx, in, g, out, err);
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
  if (in != NULL && in->type.id == LADLE_TYPE_NULL && op == LADLE_AGG_N_UNIQUE) {
    /* a null is a value: one distinct value in a group with rows */
    LADLE_RETURN_NOT_OK(ladle_column_alloc(agg->type, ng, false, 0, &o, err));
    uint32_t *O = LADLE_COL_MUT(&o, uint32_t);
    memset(O, 0, (size_t)ng * sizeof *O);
    for (int64_t i = 0; i < g->nrows; i++) O[g->ids[i]] = 1;
    *out = o;
    return LADLE_OK;
  }
  if (in != NULL && in->type.id == LADLE_TYPE_NULL && op != LADLE_AGG_LEN &&
      op != LADLE_AGG_NULL_COUNT && op != LADLE_AGG_COUNT && op != LADLE_AGG_SUM)
    return ladle_column_nulls(agg->type, ng, out, err);
  LADLE_RETURN_NOT_OK(ladle_column_alloc(agg->type, ng, nullable, 0, &o, err));
  if (in != NULL && in->type.id == LADLE_TYPE_INT128 &&
      (op == LADLE_AGG_SUM || op == LADLE_AGG_MIN || op == LADLE_AGG_MAX)) {
    int128_aggregate(op, in, g, &o); /* one piece: scatters() leaves INT128 out */
    ladle_column_finish_nulls(&o);
    *out = o;
    return LADLE_OK;
  }
  switch (op) {
    case LADLE_AGG_LEN:
    case LADLE_AGG_COUNT:
    case LADLE_AGG_NULL_COUNT: {
      uint32_t *O = LADLE_COL_MUT(&o, uint32_t);
      bool all_null = in == NULL || in->type.id == LADLE_TYPE_NULL, some_null = false;
      for (size_t c = 0; c < nins; c++) some_null |= in[c].validity != NULL;
      if ((op == LADLE_AGG_COUNT && all_null) ||
          (op == LADLE_AGG_NULL_COUNT && !all_null && !some_null)) {
        memset(O, 0, (size_t)ng * 4);
        break;
      }
      if (ng == 1) {
        /* one group (a select's count): every row is in it, and each
         * column knows its null count; no ids to read */
        int64_t valid = 0;
        for (size_t c = 0; !all_null && c < nins; c++) valid += in[c].length - in[c].null_count;
        O[0] = (uint32_t)(op == LADLE_AGG_LEN || all_null ? g->nrows
                          : op == LADLE_AGG_COUNT         ? valid
                                                          : g->nrows - valid);
        break;
      }
      /* the rows per group (len, or the null count of an all-null input), the
       * valid rows (count), or both (null_count) */
      ladle_column rows;
      memset(&rows, 0, sizeof rows);
      rows.type.id = LADLE_TYPE_NULL;
      rows.length = g->nrows;
      void *acc = NULL;
      int64_t *len = NULL, *cnt = NULL;
      if (op != LADLE_AGG_COUNT)
        st = scatter(ctx, SCAT_LEN, &rows, 1, g, NULL, true, &acc, &len, err);
      if (st == LADLE_OK && !all_null)
        st = scatter(ctx, SCAT_COUNT, in, nins, g, NULL, true, &acc, &cnt, err);
      for (int64_t k = 0; st == LADLE_OK && k < ng; k++)
        O[k] = (uint32_t)(op == LADLE_AGG_LEN || all_null ? len[k]
                          : op == LADLE_AGG_COUNT         ? cnt[k]
                                                          : len[k] - cnt[k]);
      ladle_scratch_free(len);
      ladle_scratch_free(cnt);
      break;
    }
    case LADLE_AGG_SUM:
      if (in->type.id == LADLE_TYPE_NULL) {
        memset(LADLE_COL_MUT(&o, char), 0, (size_t)ng * ladle_type_width(o.type.id));
        break;
      }
      {
        void *acc = NULL;
        st = scatter(ctx, SCAT_SUM, in, nins, g, NULL, false, &acc, NULL, err);
        if (st != LADLE_OK) break;
        if (ladle_type_is_float(in->type.id)) {
          for (int64_t k = 0; k < ng; k++) put_f(&o, k, ((const double *)acc)[k]);
        } else {
          /* the wrapped sum in the output's width (little-endian: its low bytes) */
          size_t w = ladle_type_width(o.type.id);
          for (int64_t k = 0; k < ng; k++)
            memcpy(LADLE_COL_MUT(&o, char) + k * (int64_t)w, (const uint64_t *)acc + k, w);
        }
        ladle_scratch_free(acc);
      }
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
      {
        void *acc = NULL;
        int64_t *cnt = NULL;
        st = scatter(ctx, op == LADLE_AGG_MAX ? SCAT_MAX : SCAT_MIN, in, nins, g, NULL, true, &acc,
                     &cnt, err);
        if (st != LADLE_OK) break;
        LADLE_DISPATCH_NUM(ph, SCAT_PUT, &o, acc, cnt, ng)
        ladle_scratch_free(acc);
        ladle_scratch_free(cnt);
      }
      break;
    case LADLE_AGG_MEAN:
    case LADLE_AGG_STD:
    case LADLE_AGG_VAR:
      st = moments(ctx, agg, in, nins, g, &o, err);
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
      int64_t *pos = ladle_zalloc((size_t)LADLE_MAX(ng, 1) * sizeof *pos);
      int64_t *best = malloc((size_t)LADLE_MAX(ng, 1) * sizeof *best);
      uint64_t *bestv = ladle_zalloc((size_t)LADLE_MAX(ng, 1) * 8);
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
          /* ties: Polars' string arg_max over all rows takes the last, in
           * a group_by or over() the first; arg_min the first */
          if (best[k] < 0 || (op == LADLE_AGG_ARG_MAX ? (g->whole ? c >= 0 : c > 0) : c < 0)) {
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

ladle_status ladle_cpu_aggregate(const ladle_kctx *ctx, const ladle_kexpr *agg,
                                 const ladle_column *in, ladle_groups *g, ladle_column *out,
                                 ladle_error *err) {
  if (in != NULL && string_extreme_applies(agg, in, 1, g))
    return string_extreme_one(ctx, in, 1, agg->op == LADLE_AGG_MAX, out, err);
  return aggregate(ctx, agg, in, in != NULL ? 1 : 0, g, out, err);
}

/* Whether aggregation `op` of a `type` input runs on the input's pieces as
 * they are (a row-parallel scatter); the others need one column. */
static bool scatters(ladle_agg_op op, ladle_type_id type) {
  bool kind = op == LADLE_AGG_SUM || op == LADLE_AGG_MIN || op == LADLE_AGG_MAX ||
              op == LADLE_AGG_MEAN || op == LADLE_AGG_STD || op == LADLE_AGG_VAR ||
              op == LADLE_AGG_COUNT || op == LADLE_AGG_NULL_COUNT;
  return kind && type != LADLE_TYPE_STRING && type != LADLE_TYPE_LIST && type != LADLE_TYPE_NULL &&
         type != LADLE_TYPE_INT128 && !ladle_type_is_varlen(type);
}

/* ---- the min or max of strings over one group, in parallel, no concatenation */

typedef struct smm_job {
  const ladle_column *ins;
  const int64_t *task_piece, *task_a, *task_e;
  int64_t *best; /* per task: its row (in its piece), -1 when none valid */
  bool max;
} smm_job;

/* The first up-to-8 bytes of the string at s0 of len bytes as a big-endian
 * integer, zero-padded: two strings whose prefixes differ are ordered by
 * them. One 8-byte load, the bytes past the string cleared, where the
 * buffer (total bytes) has 8 from s0. */
static inline uint64_t str_prefix_at(const char *ch, int64_t s0, int64_t len, int64_t total) {
  if (s0 + 8 > total) {
    uint8_t b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t k = 0; k < len && k < 8; k++) b[k] = (uint8_t)ch[s0 + k];
    uint64_t v;
    memcpy(&v, b, 8);
    return __builtin_bswap64(v);
  }
  uint64_t v;
  memcpy(&v, ch + s0, 8);
  v = __builtin_bswap64(v);
  return len >= 8 ? v : len == 0 ? 0 : v & ~(~0ull >> (8 * len));
}

static ladle_status smm_task(void *vctx, size_t t, ladle_error *err) {
  LADLE_UNUSED(err);
  smm_job *j = vctx;
  const ladle_column *c = &j->ins[j->task_piece[t]];
  const int64_t *o = c->values;
  const char *ch = c->chars;
  int64_t total = o[c->length];
  /* each row's key: its prefix, then its length up to 9. Strings of at most
   * 8 bytes with equal prefixes differ only by trailing zero bytes (the
   * longer is the greater), and one of at most 8 bytes whose prefix equals a
   * longer string's is less than it: the key orders every pair but two
   * strings of 9 or more bytes with one prefix, which are compared whole.
   * The best row is kept without a branch on the (random) order; ties keep
   * the earlier row, as the grouped loop does. */
  int64_t b = -1;
  unsigned __int128 bk = 0;
  bool max = j->max;
  for (int64_t i = j->task_a[t]; i < j->task_e[t]; i++) {
    if (!ladle_column_valid(c, i)) continue;
    int64_t len = o[i + 1] - o[i];
    unsigned __int128 k = (unsigned __int128)str_prefix_at(ch, o[i], len, total) << 8 |
                          (unsigned __int128)(len < 9 ? len : 9);
    bool better;
    if (b < 0)
      better = true;
    else if (k == bk && len >= 9)
      better = max ? ladle_str_cmp(c, i, c, b) > 0 : ladle_str_cmp(c, i, c, b) < 0;
    else
      better = max ? k > bk : k < bk;
    b = better ? i : b;
    bk = better ? k : bk;
  }
  j->best[t] = b;
  return LADLE_OK;
}

/* min/max of the strings of pieces ins[0..nins) taken as one group */
static ladle_status string_extreme_one(const ladle_kctx *ctx, const ladle_column *ins, size_t nins,
                                       bool max, ladle_column *out, ladle_error *err) {
  enum { RANGE = 1 << 16 };
  size_t ntasks = 0;
  for (size_t p = 0; p < nins; p++) ntasks += (size_t)((ins[p].length + RANGE - 1) / RANGE);
  int64_t *tp = malloc(LADLE_MAX(ntasks, 1) * sizeof *tp),
          *ta = malloc(LADLE_MAX(ntasks, 1) * sizeof *ta);
  int64_t *te = malloc(LADLE_MAX(ntasks, 1) * sizeof *te),
          *best = malloc(LADLE_MAX(ntasks, 1) * sizeof *best);
  ladle_status st = tp && ta && te && best ? LADLE_OK : LADLE_OOM(err, "min/max");
  size_t t = 0;
  for (size_t p = 0; st == LADLE_OK && p < nins; p++)
    for (int64_t a = 0; a < ins[p].length; a += RANGE, t++) {
      tp[t] = (int64_t)p;
      ta[t] = a;
      te[t] = LADLE_MIN(a + RANGE, ins[p].length);
    }
  smm_job j = {ins, tp, ta, te, best, max};
  if (st == LADLE_OK && ntasks > 0) st = ladle_pool_run(ctx->pool, ntasks, smm_task, &j, err);
  int64_t bt = -1; /* the winning task, the earliest among equals */
  for (size_t k = 0; st == LADLE_OK && k < ntasks; k++) {
    if (best[k] < 0) continue;
    if (bt < 0) {
      bt = (int64_t)k;
      continue;
    }
    int c = ladle_str_cmp(&ins[tp[k]], best[k], &ins[tp[bt]], best[bt]);
    if (max ? c > 0 : c < 0) bt = (int64_t)k;
  }
  if (st == LADLE_OK) {
    int64_t row = bt < 0 ? -1 : best[bt];
    st = ladle_column_gather(&ins[bt < 0 ? 0 : tp[bt]], &row, 1, out, err);
  }
  free(tp);
  free(ta);
  free(te);
  free(best);
  return st;
}

static bool string_extreme_applies(const ladle_kexpr *agg, const ladle_column *ins, size_t nins,
                                   const ladle_groups *g) {
  if (nins == 0 || g->ngroups != 1 || agg->kind != LADLE_KEX_AGG ||
      (agg->op != LADLE_AGG_MIN && agg->op != LADLE_AGG_MAX))
    return false;
  for (size_t p = 0; p < nins; p++)
    if (ins[p].type.id != LADLE_TYPE_STRING || ladle_column_view_only(&ins[p])) return false;
  return true;
}

ladle_status ladle_cpu_aggregate_chunks(const ladle_kctx *ctx, const ladle_kexpr *agg,
                                        const ladle_column *ins, size_t nins, ladle_groups *g,
                                        ladle_column *out, ladle_error *err) {
  if (string_extreme_applies(agg, ins, nins, g))
    return string_extreme_one(ctx, ins, nins, agg->op == LADLE_AGG_MAX, out, err);
  if (nins <= 1) return ladle_cpu_aggregate(ctx, agg, nins ? ins : NULL, g, out, err);
  if (agg->kind == LADLE_KEX_AGG && scatters((ladle_agg_op)agg->op, ins[0].type.id))
    return aggregate(ctx, agg, ins, nins, g, out, err);
  ladle_column whole;
  LADLE_RETURN_NOT_OK(ladle_column_concat(ins, nins, &whole, err));
  ladle_status st = ladle_cpu_aggregate(ctx, agg, &whole, g, out, err);
  ladle_column_release(&whole);
  return st;
}
