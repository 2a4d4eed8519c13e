/* temporal.h — the CPU kernels' temporal helpers on top of core's civil
 * calendar (../../core/temporal.h): floor division and the range of days that
 * chrono, and so Polars, can turn into a calendar date. */
#ifndef LADLE_CPU_TEMPORAL_H
#define LADLE_CPU_TEMPORAL_H
#include <stdbool.h>
#include <stdint.h>

#include "../../core/temporal.h"

/* a / b rounded toward negative infinity (C division truncates toward zero). */
static inline int64_t ladle_floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

/* The days chrono, and so Polars, can turn into a calendar date: -262143-01-02
 * to +262142-12-31 (Polars 2.1, by experiment: the first day of -262143 is
 * already out, for Date and Datetime alike). Outside them
 * Polars' calendar fields are null, its text is null and its month truncation
 * panics; fields it computes from the day count alone (weekday, truncation to a
 * day) are not limited. A Datetime in ns is always inside. */
enum { LADLE_CHRONO_MIN_DAY = -96465292, LADLE_CHRONO_MAX_DAY = 95026236 };

static inline bool ladle_day_in_chrono_range(int64_t days) {
  return days >= LADLE_CHRONO_MIN_DAY && days <= LADLE_CHRONO_MAX_DAY;
}

#endif
