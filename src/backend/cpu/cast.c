/* cast.c — casts between numeric, boolean, string and temporal types. Strict
 * casts fail with the column, the value and the row; non-strict casts give null
 * where a value does not fit. Float to integer truncates toward zero. */
#include <errno.h>
#include <stdio.h>

#include "cpu.h"
#include "temporal.h"

/* Reads value i of a numeric column as double / int64 / uint64. */

/* Integer value of row i: sets *neg for negative signed values; returns |v| or v. */
static uint64_t get_int(const ladle_column *c, int64_t i, bool *neg) {
  *neg = false;
  switch (ladle_type_phys(c->type.id)) {
#define S(T)                               \
  {                                        \
    int64_t v = ((const T *)c->values)[i]; \
    *neg = v < 0;                          \
    return (uint64_t)v;                    \
  }
#define U(T) return ((const T *)c->values)[i];
    case LADLE_PHYS_I8:
      S(int8_t)
    case LADLE_PHYS_I16:
      S(int16_t)
    case LADLE_PHYS_I32:
      S(int32_t)
    case LADLE_PHYS_I64:
      S(int64_t)
    case LADLE_PHYS_U8:
      U(uint8_t)
    case LADLE_PHYS_U16:
      U(uint16_t)
    case LADLE_PHYS_U32:
      U(uint32_t)
    case LADLE_PHYS_U64:
      U(uint64_t)
#undef S
#undef U
    default:
      return 0;
  }
}

/* Does integer (neg, raw) fit type id? raw is the two's complement value. */
static bool int_fits(ladle_type_id id, bool neg, uint64_t raw) {
  int64_t s = (int64_t)raw;
  switch (id) {
    case LADLE_TYPE_INT8:
      return s >= INT8_MIN && s <= INT8_MAX && (neg || raw <= INT8_MAX);
    case LADLE_TYPE_INT16:
      return s >= INT16_MIN && s <= INT16_MAX && (neg || raw <= INT16_MAX);
    case LADLE_TYPE_INT32:
      return s >= INT32_MIN && s <= INT32_MAX && (neg || raw <= INT32_MAX);
    case LADLE_TYPE_INT64:
      return neg || raw <= INT64_MAX;
    case LADLE_TYPE_UINT8:
      return !neg && raw <= UINT8_MAX;
    case LADLE_TYPE_UINT16:
      return !neg && raw <= UINT16_MAX;
    case LADLE_TYPE_UINT32:
      return !neg && raw <= UINT32_MAX;
    case LADLE_TYPE_UINT64:
      return !neg;
    default:
      return true;
  }
}

static void put_int(ladle_column *o, int64_t i, uint64_t raw) {
  switch (ladle_type_width(o->type.id)) {
    case 1:
      LADLE_COL_MUT(o, uint8_t)[i] = (uint8_t)raw;
      break;
    case 2:
      LADLE_COL_MUT(o, uint16_t)[i] = (uint16_t)raw;
      break;
    case 4:
      LADLE_COL_MUT(o, uint32_t)[i] = (uint32_t)raw;
      break;
    default:
      LADLE_COL_MUT(o, uint64_t)[i] = raw;
      break;
  }
}

static void put_f64(ladle_column *o, int64_t i, double v) {
  if (o->type.id == LADLE_TYPE_FLOAT32)
    LADLE_COL_MUT(o, float)[i] = (float)v;
  else
    LADLE_COL_MUT(o, double)[i] = v;
}

typedef struct cast_fail {
  bool failed;
  int64_t row;
  char value[64];
} cast_fail;

static void note_fail(cast_fail *f, ladle_column *o, int64_t i, const char *value, size_t len) {
  if (!f->failed) {
    f->failed = true;
    f->row = i;
    snprintf(f->value, sizeof f->value, "%.*s", (int)LADLE_MIN(len, 48), value);
  }
  ladle_bit_set(LADLE_COL_VALIDITY_MUT(o), i, false);
  if (o->values != NULL && o->type.id != LADLE_TYPE_STRING)
    memset(LADLE_COL_MUT(o, char) + i * (int64_t)ladle_type_width(o->type.id), 0,
           ladle_type_width(o->type.id));
}

/* Can every value of `from` be converted to `to` by C's own conversion, with the
 * result Polars gives? (to a float; or to an integer type that holds them all) */
static bool cast_is_plain(ladle_type_id from, ladle_type_id to) {
  if (to == LADLE_TYPE_BOOL) return false;
  if (ladle_type_is_float(to)) return true;
  if (!ladle_type_is_integer(to) || !(ladle_type_is_integer(from) || from == LADLE_TYPE_BOOL))
    return false;
  size_t wf = ladle_type_width(from), wt = ladle_type_width(to);
  bool sf = ladle_type_is_signed(from), st = ladle_type_is_signed(to);
  if (from == LADLE_TYPE_BOOL) return true;
  if (sf == st) return wt >= wf;
  return !sf && st && wt > wf; /* unsigned into a wider signed type */
}

#define PLAIN_INNER(U, T, in, o)                               \
  {                                                            \
    const T *X = (in)->values;                                 \
    U *O = LADLE_COL_MUT(o, U);                                \
    for (int64_t i = 0; i < (in)->length; i++) O[i] = (U)X[i]; \
  }
#define PLAIN_OUTER(T, in, o) \
  LADLE_DISPATCH_NUM2(ladle_type_phys((o)->type.id), PLAIN_INNER, T, in, o)

/* numeric/bool -> numeric/bool */
static void cast_numeric(const ladle_column *in, ladle_column *o, cast_fail *f, bool wrap) {
  ladle_type_id from = in->type.id, to = o->type.id;
  int64_t n = in->length;
  bool ffloat = ladle_type_is_float(from);
  for (int64_t i = 0; i < n; i++) {
    if (!ladle_column_valid(in, i)) {
      put_int(o, i, 0);
      continue;
    }
    if (to == LADLE_TYPE_BOOL) {
      LADLE_COL_MUT(o, uint8_t)
      [i] = ffloat ? ladle_cpu_value_f64(in, i) != 0 : ({
        bool ng;
        get_int(in, i, &ng) != 0;
      });
    } else if (ladle_type_is_float(to)) {
      if (ffloat) {
        put_f64(o, i, ladle_cpu_value_f64(in, i));
      } else {
        bool neg;
        uint64_t raw = get_int(in, i, &neg);
        put_f64(o, i, neg ? (double)(int64_t)raw : (double)raw);
      }
    } else if (ffloat) {
      double v = trunc(ladle_cpu_value_f64(in, i));
      bool ok = v == v && v >= -9223372036854775808.0 &&
                (ladle_type_is_signed(to) ? v < 9223372036854775808.0 : v < 18446744073709551616.0);
      uint64_t raw = 0;
      if (ok) raw = v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;
      if (ok) ok = int_fits(to, v < 0, raw);
      if (!ok) {
        char buf[40];
        int len = snprintf(buf, sizeof buf, "%g", ladle_cpu_value_f64(in, i));
        note_fail(f, o, i, buf, (size_t)len);
      } else {
        put_int(o, i, raw);
      }
    } else {
      bool neg;
      uint64_t raw = get_int(in, i, &neg);
      if (!wrap && !int_fits(to, neg, raw)) {
        char buf[40];
        int len = neg ? snprintf(buf, sizeof buf, "%lld", (long long)(int64_t)raw)
                      : snprintf(buf, sizeof buf, "%llu", (unsigned long long)raw);
        note_fail(f, o, i, buf, (size_t)len);
      } else {
        put_int(o, i, raw);
      }
    }
  }
}

/* Shortest text that reads back to the same double, with ".0" on integers. */
static int format_float(double v, bool is_f32, char *buf, size_t cap) {
  if (v != v) return snprintf(buf, cap, "NaN");
  if (isinf(v)) return snprintf(buf, cap, v > 0 ? "inf" : "-inf");
  int len = 0;
  for (int prec = 1; prec <= 17; prec++) {
    len = snprintf(buf, cap, "%.*g", prec, v);
    if (is_f32 ? (float)strtod(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
  }
  if (strpbrk(buf, ".eEn") == NULL) len += snprintf(buf + len, cap - (size_t)len, ".0");
  return len;
}

static int format_date(int64_t days, char *buf, size_t cap) {
  int64_t y;
  unsigned m, d;
  ladle_civil_from_days(days, &y, &m, &d);
  return snprintf(buf, cap, "%04lld-%02u-%02u", (long long)y, m, d);
}

static int format_value(const ladle_column *in, int64_t i, char *buf, size_t cap) {
  ladle_type_id id = in->type.id;
  if (id == LADLE_TYPE_BOOL)
    return snprintf(buf, cap, ((const uint8_t *)in->values)[i] ? "true" : "false");
  if (ladle_type_is_float(id))
    return format_float(ladle_cpu_value_f64(in, i), id == LADLE_TYPE_FLOAT32, buf, cap);
  if (id == LADLE_TYPE_DATE) return format_date(((const int32_t *)in->values)[i], buf, cap);
  if (id == LADLE_TYPE_DATETIME) {
    int64_t v = ((const int64_t *)in->values)[i], per = ladle_unit_per_sec((int)in->type.unit);
    int64_t secs = ladle_floor_div(v, per), frac = v - secs * per;
    int64_t days = ladle_floor_div(secs, 86400), sod = secs - days * 86400;
    int len = format_date(days, buf, cap);
    len += snprintf(buf + len, cap - (size_t)len, " %02lld:%02lld:%02lld", (long long)(sod / 3600),
                    (long long)(sod / 60 % 60), (long long)(sod % 60));
    if (frac != 0) {
      int digits = in->type.unit == LADLE_TIME_NS ? 9 : in->type.unit == LADLE_TIME_US ? 6 : 3;
      len += snprintf(buf + len, cap - (size_t)len, ".%0*lld", digits, (long long)frac);
    }
    return len;
  }
  bool neg;
  uint64_t raw = get_int(in, i, &neg);
  return neg ? snprintf(buf, cap, "%lld", (long long)(int64_t)raw)
             : snprintf(buf, cap, "%llu", (unsigned long long)raw);
}

static ladle_status cast_to_string(const ladle_column *in, ladle_column *o, ladle_error *err) {
  int64_t n = in->length;
  char buf[96];
  int64_t chars = 0;
  for (int64_t i = 0; i < n; i++)
    if (ladle_column_valid(in, i)) chars += format_value(in, i, buf, sizeof buf);
  LADLE_RETURN_NOT_OK(ladle_column_alloc(o->type, n, false, chars, o, err));
  int64_t *off = LADLE_COL_MUT(o, int64_t), pos = 0;
  for (int64_t i = 0; i < n; i++) {
    if (ladle_column_valid(in, i)) {
      int len = format_value(in, i, buf, sizeof buf);
      memcpy(LADLE_COL_CHARS_MUT(o) + pos, buf, (size_t)len);
      pos += len;
    }
    off[i + 1] = pos;
  }
  return LADLE_OK;
}

/* Parses "YYYY-MM-DD" at s (len bytes); returns chars used or 0. */
static int parse_date(const char *s, int64_t len, int64_t *days) {
  if (len < 10 || s[4] != '-' || s[7] != '-') return 0;
  for (int k = 0; k < 10; k++)
    if (k != 4 && k != 7 && (s[k] < '0' || s[k] > '9')) return 0;
  int64_t y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  unsigned m = (unsigned)((s[5] - '0') * 10 + (s[6] - '0'));
  unsigned d = (unsigned)((s[8] - '0') * 10 + (s[9] - '0'));
  if (m < 1 || m > 12 || d < 1 || d > 31) return 0;
  int64_t z = ladle_days_from_civil(y, m, d);
  int64_t yy;
  unsigned mm, dd;
  ladle_civil_from_days(z, &yy, &mm, &dd);
  if (mm != m || dd != d) return 0; /* 2023-02-30 */
  *days = z;
  return 10;
}

static bool parse_datetime(const char *s, int64_t len, int unit, int64_t *out) {
  int64_t days;
  if (parse_date(s, len, &days) == 0) return false;
  int64_t per = ladle_unit_per_sec(unit), v = days * 86400 * per;
  if (len == 10) {
    *out = v;
    return true;
  }
  if (len < 19 || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':') return false;
  int fields[3];
  for (int k = 0; k < 3; k++) {
    const char *p = s + 11 + 3 * k;
    if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9') return false;
    fields[k] = (p[0] - '0') * 10 + (p[1] - '0');
  }
  if (fields[0] > 23 || fields[1] > 59 || fields[2] > 59) return false;
  v += ((int64_t)fields[0] * 3600 + fields[1] * 60 + fields[2]) * per;
  int64_t pos = 19;
  if (pos < len && s[pos] == '.') {
    pos++;
    int64_t frac = 0, scale = per;
    while (pos < len && s[pos] >= '0' && s[pos] <= '9') {
      if (scale > 1) {
        scale /= 10;
        frac += (s[pos] - '0') * scale;
      }
      pos++;
    }
    v += frac;
  }
  if (pos != len) return false;
  *out = v;
  return true;
}

static void cast_from_string(const ladle_column *in, ladle_column *o, cast_fail *f) {
  int64_t n = in->length;
  ladle_type_id to = o->type.id;
  char buf[128];
  for (int64_t i = 0; i < n; i++) {
    if (!ladle_column_valid(in, i)) {
      if (to != LADLE_TYPE_STRING)
        memset(LADLE_COL_MUT(o, char) + i * (int64_t)ladle_type_width(to), 0, ladle_type_width(to));
      continue;
    }
    const char *s = ladle_str_ptr(in, i);
    int64_t len = ladle_str_len(in, i);
    bool ok = len > 0 && len < (int64_t)sizeof buf;
    if (ok) {
      memcpy(buf, s, (size_t)len);
      buf[len] = '\0';
    }
    if (ok && to == LADLE_TYPE_BOOL) {
      ok = strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0;
      if (ok) LADLE_COL_MUT(o, uint8_t)[i] = buf[0] == 't';
    } else if (ok && ladle_type_is_float(to)) {
      char *end;
      errno = 0;
      double v = strtod(buf, &end);
      ok = *end == '\0';
      if (ok) put_f64(o, i, v);
    } else if (ok && ladle_type_is_integer(to)) {
      char *end;
      errno = 0;
      bool neg = buf[0] == '-';
      uint64_t raw;
      if (neg) {
        long long v = strtoll(buf, &end, 10);
        raw = (uint64_t)v;
      } else {
        raw = strtoull(buf, &end, 10);
      }
      ok = *end == '\0' && errno == 0 && buf[0] != '+' && int_fits(to, neg, raw);
      if (ok) put_int(o, i, raw);
    } else if (ok && to == LADLE_TYPE_DATE) {
      int64_t d;
      ok = parse_date(s, len, &d) == len && d >= INT32_MIN && d <= INT32_MAX;
      if (ok) LADLE_COL_MUT(o, int32_t)[i] = (int32_t)d;
    } else if (ok && to == LADLE_TYPE_DATETIME) {
      int64_t v;
      ok = parse_datetime(s, len, (int)o->type.unit, &v);
      if (ok) LADLE_COL_MUT(o, int64_t)[i] = v;
    }
    if (!ok) note_fail(f, o, i, s, (size_t)len);
  }
}

static int64_t unit_scale(int from, int to, bool *mul) {
  int64_t pf = ladle_unit_per_sec(from), pt = ladle_unit_per_sec(to);
  *mul = pt >= pf;
  return *mul ? pt / pf : pf / pt;
}

static void cast_temporal(const ladle_column *in, ladle_column *o, cast_fail *f) {
  int64_t n = in->length;
  ladle_type_id from = in->type.id, to = o->type.id;
  for (int64_t i = 0; i < n; i++) {
    bool valid = ladle_column_valid(in, i);
    int64_t v = from == LADLE_TYPE_DATE       ? ((const int32_t *)in->values)[i]
                : ladle_type_is_integer(from) ? ({
                    bool ng;
                    (int64_t) get_int(in, i, &ng);
                  })
                                              : ((const int64_t *)in->values)[i];
    int64_t r = v;
    if (from == LADLE_TYPE_DATE && to == LADLE_TYPE_DATETIME) {
      r = v * 86400 * ladle_unit_per_sec((int)o->type.unit);
    } else if (from == LADLE_TYPE_DATETIME && to == LADLE_TYPE_DATE) {
      r = ladle_floor_div(v, 86400 * ladle_unit_per_sec((int)in->type.unit));
    } else if ((from == LADLE_TYPE_DATETIME || from == LADLE_TYPE_DURATION) && from == to) {
      bool mul;
      int64_t s = unit_scale((int)in->type.unit, (int)o->type.unit, &mul);
      r = mul ? (int64_t)((uint64_t)v * (uint64_t)s) : ladle_floor_div(v, s);
    }
    if (!valid) r = 0;
    if (ladle_type_is_integer(to)) {
      bool neg = r < 0;
      if (valid && !int_fits(to, neg, (uint64_t)r)) {
        char buf[32];
        int len = snprintf(buf, sizeof buf, "%lld", (long long)r);
        note_fail(f, o, i, buf, (size_t)len);
        continue;
      }
      put_int(o, i, (uint64_t)r);
    } else if (to == LADLE_TYPE_DATE) {
      if (valid && (r < INT32_MIN || r > INT32_MAX)) {
        note_fail(f, o, i, "out of range", 12);
        continue;
      }
      LADLE_COL_MUT(o, int32_t)[i] = (int32_t)r;
    } else {
      LADLE_COL_MUT(o, int64_t)[i] = r;
    }
  }
}

/* DECIMAL to float: the unscaled integer divided by 10^scale, one rounding
 * when the integer fits 2^53 and the scale 22 (both exact in a double). */
static void decimal_to_float(const ladle_column *in, ladle_column *o) {
  const char *v = in->values;
  double div = 1.0;
  for (int k = 0; k < in->type.scale; k++) div *= 10.0;
  for (int64_t i = 0; i < in->length; i++) {
    __int128 x;
    memcpy(&x, v + 16 * i, 16); /* buffers from Arrow may be 8-aligned */
    double d = (double)x / div;
    if (o->type.id == LADLE_TYPE_FLOAT32)
      LADLE_COL_MUT(o, float)[i] = (float)d;
    else
      LADLE_COL_MUT(o, double)[i] = d;
  }
}

ladle_status ladle_cpu_cast(const ladle_kctx *ctx, const ladle_column *in, ladle_dtype to,
                            ladle_cast_mode mode, const char *name, ladle_column *out,
                            ladle_error *err) {
  LADLE_UNUSED(ctx);
  char b1[64], b2[64];
  if (ladle_dtype_equal(in->type, to)) {
    ladle_column_copy_ref(in, out);
    return LADLE_OK;
  }
  int64_t n = in->length;
  if (in->type.id == LADLE_TYPE_NULL) return ladle_column_nulls(to, n, out, err);
  ladle_type_id from = in->type.id;
  /* same physical layout, no range change: share the buffers */
  if ((from == LADLE_TYPE_DATE && to.id == LADLE_TYPE_INT32) ||
      (from == LADLE_TYPE_INT32 && to.id == LADLE_TYPE_DATE) ||
      ((from == LADLE_TYPE_DATETIME || from == LADLE_TYPE_DURATION) && to.id == LADLE_TYPE_INT64) ||
      (from == LADLE_TYPE_INT64 &&
       (to.id == LADLE_TYPE_DATETIME || to.id == LADLE_TYPE_DURATION)) ||
      (from == LADLE_TYPE_TIME && to.id == LADLE_TYPE_INT64) ||
      (from == LADLE_TYPE_DATETIME && to.id == LADLE_TYPE_DATETIME && in->type.unit == to.unit)) {
    ladle_column_copy_ref(in, out);
    out->type = to;
    return LADLE_OK;
  }
  ladle_column o;
  cast_fail f = {false, 0, ""};
  ladle_status st;
  bool fnum = ladle_type_is_numeric(from) || from == LADLE_TYPE_BOOL;
  bool tnum = ladle_type_is_numeric(to.id) || to.id == LADLE_TYPE_BOOL;
  if (to.id == LADLE_TYPE_STRING && from != LADLE_TYPE_DURATION) {
    o.type = to;
    st = cast_to_string(in, &o, err);
    if (st == LADLE_OK && in->validity != NULL) {
      st = ladle_column_add_validity(&o, err);
      if (st == LADLE_OK)
        memcpy(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n));
    }
    if (st != LADLE_OK) return st;
    ladle_column_finish_nulls(&o);
    *out = o;
    return LADLE_OK;
  }
  LADLE_RETURN_NOT_OK(ladle_column_alloc(to, n, true, 0, &o, err));
  if (in->validity != NULL)
    memcpy(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n));
  if (from == LADLE_TYPE_DECIMAL && ladle_type_is_float(to.id)) {
    decimal_to_float(in, &o);
    ladle_column_finish_nulls(&o);
    *out = o;
    return LADLE_OK;
  }
  if (fnum && tnum && cast_is_plain(from, to.id)) {
    LADLE_DISPATCH_NUM(ladle_type_phys(from), PLAIN_OUTER, in, &o)
  } else if (fnum && tnum)
    cast_numeric(in, &o, &f, mode == LADLE_CAST_WRAP);
  else if (from == LADLE_TYPE_STRING)
    cast_from_string(in, &o, &f);
  else if (ladle_type_is_temporal(from) || ladle_type_is_temporal(to.id))
    cast_temporal(in, &o, &f);
  else {
    ladle_column_release(&o);
    return ladle_err_set(err, LADLE_ENOTSUP, "cast of '%s' from %s to %s", name,
                         ladle_dtype_name(in->type, b1, sizeof b1),
                         ladle_dtype_name(to, b2, sizeof b2));
  }
  if (f.failed && mode == LADLE_CAST_STRICT) {
    ladle_column_release(&o);
    return ladle_err_set(err, LADLE_ECOMPUTE,
                         "strict cast of '%s' from %s to %s failed at row %lld: value '%s'; "
                         "use strict=False to get null instead",
                         name, ladle_dtype_name(in->type, b1, sizeof b1),
                         ladle_dtype_name(to, b2, sizeof b2), (long long)f.row, f.value);
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}
