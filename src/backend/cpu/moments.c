/* moments.c — a partition's share of a mean, var or std over a table of
 * several partitions (backend.h, moments): count, sum, anchored mean and the
 * sum of squared deviations, two passes over the partition; the executor
 * combines the partitions' shares in order. */
#include <math.h>

#include "cpu.h"

#define PARTIAL_MOMENTS(T, c, cnt, mean, m2, sum, second)                              \
  {                                                                                    \
    const T *X = (c)->values;                                                          \
    int64_t n_ = 0;                                                                    \
    double s_ = 0, q_ = 0, d_ = 0, a_ = 0; /* d_: deviations from the anchor a_ */     \
    bool anchored_ = false;                                                            \
    for (int64_t i = 0; i < (c)->length; i++)                                          \
      if (ladle_column_valid(c, i)) {                                                  \
        if (!anchored_) {                                                              \
          anchored_ = true;                                                            \
          a_ = isfinite((double)X[i]) ? (double)X[i] : 0;                              \
        }                                                                              \
        s_ += (double)X[i];                                                            \
        d_ += (double)X[i] - a_;                                                       \
        n_++;                                                                          \
      }                                                                                \
    /* var/std: deviations from the anchored mean (see agg.c's group_anchors) */       \
    double mu_ = n_ > 0 ? a_ + d_ / (double)n_ : 0;                                    \
    for (int64_t i = 0; (second) && i < (c)->length; i++)                              \
      if (ladle_column_valid(c, i)) q_ += ((double)X[i] - mu_) * ((double)X[i] - mu_); \
    *(cnt) = n_;                                                                       \
    *(sum) = s_;                                                                       \
    *(mean) = mu_;                                                                     \
    *(m2) = q_;                                                                        \
  }

/* The sum and count of an integer partition for a mean: eight double lanes
 * (exact, and so equal to a sum in row order, while every partial sum stays
 * below 2^53), no anchor. */
#define MEAN_SUM_INT(T, c, cnt, sum)                                                    \
  {                                                                                     \
    const T *X = (c)->values;                                                           \
    int64_t n_ = (c)->length, i = 0;                                                    \
    double l_[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                            \
    if ((c)->validity == NULL || (c)->null_count == 0) {                                \
      for (; i + 8 <= n_; i += 8)                                                       \
        for (int k = 0; k < 8; k++) l_[k] += (double)X[i + k];                          \
      for (; i < n_; i++) l_[0] += (double)X[i];                                        \
      *(cnt) = n_;                                                                      \
    } else {                                                                            \
      const uint8_t *V_ = (c)->validity;                                                \
      for (; i < n_; i++) l_[i & 7] += ladle_bit_get(V_, i) ? (double)X[i] : 0.0;       \
      *(cnt) = n_ - (c)->null_count;                                                    \
    }                                                                                   \
    *(sum) = ((l_[0] + l_[1]) + (l_[2] + l_[3])) + ((l_[4] + l_[5]) + (l_[6] + l_[7])); \
  }

ladle_status ladle_cpu_moments(const ladle_kctx *ctx, const ladle_column *c, bool second,
                               int64_t *cnt, double *sum, double *mean, double *m2,
                               ladle_error *err) {
  LADLE_UNUSED(ctx);
  if (!second && c->type.id == LADLE_TYPE_FLOAT64 && c->length > 0) {
    /* a Float64 mean: the partition's sum as Polars sums a chunk (pairwise,
     * nulls as 0 in their places), which also vectorises; the anchored mean
     * is only needed for the deviations of var/std */
    bool nulls = c->validity != NULL && c->null_count > 0;
    *cnt = c->length - (c->validity != NULL ? c->null_count : 0);
    *sum = ladle_cpu_float_sum_valid(c->values, nulls ? c->validity : NULL, c->length);
    *mean = *cnt > 0 ? *sum / (double)*cnt : 0;
    *m2 = 0;
    return LADLE_OK;
  }
  ladle_phys ph = ladle_type_phys(c->type.id);
  if (!second && (ph == LADLE_PHYS_I32 || ph == LADLE_PHYS_I64 || ph == LADLE_PHYS_U32)) {
    if (ph == LADLE_PHYS_I32)
      MEAN_SUM_INT(int32_t, c, cnt, sum)
    else if (ph == LADLE_PHYS_U32)
      MEAN_SUM_INT(uint32_t, c, cnt, sum)
    else
      MEAN_SUM_INT(int64_t, c, cnt, sum)
    *mean = *cnt > 0 ? *sum / (double)*cnt : 0;
    *m2 = 0;
    return LADLE_OK;
  }
  switch (ph) {
    case LADLE_PHYS_I8:
      PARTIAL_MOMENTS(int8_t, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_I16:
      PARTIAL_MOMENTS(int16_t, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_I32:
      PARTIAL_MOMENTS(int32_t, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_I64:
      PARTIAL_MOMENTS(int64_t, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_U8:
      PARTIAL_MOMENTS(uint8_t, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_U16:
      PARTIAL_MOMENTS(uint16_t, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_U32:
      PARTIAL_MOMENTS(uint32_t, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_U64:
      PARTIAL_MOMENTS(uint64_t, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_F32:
      PARTIAL_MOMENTS(float, c, cnt, mean, m2, sum, second)
      break;
    case LADLE_PHYS_F64:
      PARTIAL_MOMENTS(double, c, cnt, mean, m2, sum, second)
      break;
    default: /* no values */
      *cnt = 0;
      *sum = *mean = *m2 = 0;
      break;
  }
  return LADLE_OK;
}
