/* datetime.c — temporal field extraction and truncation on Date (days) and
 * Datetime (int64 in a unit). Fields are computed in UTC; a Datetime with a
 * time zone other than UTC is refused until time zone conversion exists. */
#include "cpu.h"
#include "temporal.h"

ladle_status ladle_cpu_dt_func(const ladle_kctx *ctx, const ladle_kexpr *e, const ladle_column *in,
                               ladle_column *out, ladle_error *err) {
  LADLE_UNUSED(ctx);
  ladle_func f = (ladle_func)e->op;
  bool dt = in->type.id == LADLE_TYPE_DATETIME;
  if (dt && in->type.tz[0] != '\0' && strcmp(in->type.tz, "UTC") != 0)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "%s on '%s': time zone '%s' is not supported yet (only naive and UTC)",
                         ladle_func_name(f), e->arg_name, in->type.tz);
  int64_t n = in->length;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(e->type, n, in->validity != NULL, 0, &o, err));
  if (in->validity) memcpy(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n));
  int64_t per = dt ? ladle_unit_per_sec((int)in->type.unit) : 1;
  /* Weekday and truncation to a day are day-count arithmetic in Polars; the
   * other fields go through chrono's calendar, null outside its range. */
  bool calendar =
      f != LADLE_FN_DT_WEEKDAY && !(f == LADLE_FN_DT_TRUNCATE && strcmp(e->fopts.str, "1mo") != 0);
  ladle_status st = LADLE_OK;
  for (int64_t i = 0; i < n && st == LADLE_OK; i++) {
    int64_t v = dt ? ((const int64_t *)in->values)[i] : ((const int32_t *)in->values)[i];
    int64_t secs = dt ? ladle_floor_div(v, per) : v * 86400;
    int64_t days = ladle_floor_div(secs, 86400), sod = secs - days * 86400;
    if (calendar && !ladle_day_in_chrono_range(days) &&
        (in->validity == NULL || ladle_bit_get(in->validity, i))) {
      if (f == LADLE_FN_DT_TRUNCATE) { /* Polars panics: "invalid or out-of-range datetime" */
        st = ladle_err_set(err, LADLE_ECOMPUTE,
                           "dt.truncate('1mo') on '%s': row %lld is out of the range of dates "
                           "(-262143-01-02 to 262142-12-31)",
                           e->arg_name, (long long)i);
        break;
      }
      if (o.validity == NULL) st = ladle_column_add_validity(&o, err);
      if (st == LADLE_OK) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&o), i, false);
      continue;
    }
    int64_t y;
    unsigned m, d;
    ladle_civil_from_days(days, &y, &m, &d);
    switch (f) {
      case LADLE_FN_DT_YEAR:
        LADLE_COL_MUT(&o, int32_t)[i] = (int32_t)y;
        break;
      case LADLE_FN_DT_MONTH:
        LADLE_COL_MUT(&o, int8_t)[i] = (int8_t)m;
        break;
      case LADLE_FN_DT_DAY:
        LADLE_COL_MUT(&o, int8_t)[i] = (int8_t)d;
        break;
      case LADLE_FN_DT_HOUR:
        LADLE_COL_MUT(&o, int8_t)[i] = (int8_t)(sod / 3600);
        break;
      case LADLE_FN_DT_MINUTE:
        LADLE_COL_MUT(&o, int8_t)[i] = (int8_t)(sod / 60 % 60);
        break;
      case LADLE_FN_DT_SECOND:
        LADLE_COL_MUT(&o, int8_t)[i] = (int8_t)(sod % 60);
        break;
      case LADLE_FN_DT_WEEKDAY:
        /* Polars counts a Date's weekday from (days - 4) in 32 bits, which wraps
         * for the four smallest days. */
        if (!dt) days = (int64_t)(int32_t)((uint32_t)(int32_t)v - 4u) + 4;
        LADLE_COL_MUT(&o, int8_t)[i] = (int8_t)(((days % 7) + 7 + 3) % 7 + 1);
        break;
      case LADLE_FN_DT_ORDINAL_DAY:
        LADLE_COL_MUT(&o, int16_t)[i] = (int16_t)(days - ladle_days_from_civil(y, 1, 1) + 1);
        break;
      case LADLE_FN_DT_TRUNCATE: {
        bool month = strcmp(e->fopts.str, "1mo") == 0;
        int64_t td = month ? ladle_days_from_civil(y, m, 1) : days;
        /* The first day in range is not a month's first; Polars gives it back. */
        if (month && td < LADLE_CHRONO_MIN_DAY) td = LADLE_CHRONO_MIN_DAY;
        if (dt)
          LADLE_COL_MUT(&o, int64_t)[i] = td * 86400 * per;
        else
          LADLE_COL_MUT(&o, int32_t)[i] = (int32_t)td;
        break;
      }
      default:
        ladle_column_release(&o);
        return ladle_err_set(err, LADLE_ENOTSUP, "%s on the CPU", ladle_func_name(f));
    }
  }
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}
