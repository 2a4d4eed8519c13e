/* temporal.h — civil calendar arithmetic (proleptic Gregorian) on day counts. */
#ifndef LADLE_TEMPORAL_H
#define LADLE_TEMPORAL_H
#include <stdbool.h>
#include <stdint.h>

/* Days since 1970-01-01 of y-m-d. */
static inline int64_t ladle_days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static inline void ladle_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t yy = (int64_t)yoe + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yy + (*m <= 2);
}

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

/* Units of a datetime/duration per second. */
static inline int64_t ladle_unit_per_sec(int unit) {
  return unit == 0 ? 1000000000 : unit == 1 ? 1000000 : 1000;
}
#endif
