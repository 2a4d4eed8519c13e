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

ladle_status ladle_cpu_moments(const ladle_kctx *ctx, const ladle_column *c, bool second,
                               int64_t *cnt, double *sum, double *mean, double *m2,
                               ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(err);
  switch (ladle_type_phys(c->type.id)) {
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
