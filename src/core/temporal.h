/* temporal.h — civil calendar arithmetic (proleptic Gregorian) on day counts,
 * and time units, for every layer that reads or computes dates: the CSV reader
 * parses them, the CPU kernels compute with them. Header only: each function is
 * a few integer operations that callers run once per value in their loops. */
#ifndef LADLE_CORE_TEMPORAL_H
#define LADLE_CORE_TEMPORAL_H
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

/* The y-m-d of a count of days since 1970-01-01: the inverse of the above. */
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

/* Units of a datetime/duration per second (unit: a ladle_time_unit). */
static inline int64_t ladle_unit_per_sec(int unit) {
  return unit == 0 ? 1000000000 : unit == 1 ? 1000000 : 1000;
}
#endif
