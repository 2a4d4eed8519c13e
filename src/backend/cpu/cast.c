/* cast.c — casts between numeric, boolean, string and temporal types, with
 * Polars 2.1's rules (docs/semantics.md, "Casts"). A value that does not fit is
 * an error in a strict cast (naming the column, the row and the value), null in
 * a non-strict one; a wrapping cast wraps integers and saturates floats (NaN is
 * 0). Temporal casts convert units first (Datetime and dates floor, Durations
 * truncate; a unit change that overflows fails in every mode) and then move the
 * integer into the target's physical type under the cast's mode. Pairs this
 * file does not know (Duration -> String, String -> Date, ...) are refused with
 * LADLE_ENOTSUP, as the binder refuses them. Text is read and written in the C
 * locale whatever the process's locale. */
#define _GNU_SOURCE
#include <float.h>
#include <locale.h>
#include <stdio.h>

#include "cpu.h"
#include "temporal.h"

uint64_t ladle_cpu_int_value(const ladle_column *c, int64_t i, bool *neg) {
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

/* The integer type that holds a type's values: Date is Int32, Datetime and
 * Duration Int64. */
static ladle_type_id int_storage(ladle_type_id id) {
  if (id == LADLE_TYPE_DATE) return LADLE_TYPE_INT32;
  if (id == LADLE_TYPE_DATETIME || id == LADLE_TYPE_DURATION) return LADLE_TYPE_INT64;
  return id;
}

/* Does the integer (neg, raw) fit type id (or its integer storage)? */
static bool int_fits(ladle_type_id id, bool neg, uint64_t raw) {
  int64_t s = (int64_t)raw;
  switch (int_storage(id)) {
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

/* Stores the low bytes of raw (two's complement wrapping). */
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

/* Row i does not convert: null in the output, remembered for a strict cast. */
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

static void note_fail_int(cast_fail *f, ladle_column *o, int64_t i, bool neg, uint64_t raw) {
  char buf[32];
  int len = neg ? snprintf(buf, sizeof buf, "%lld", (long long)(int64_t)raw)
                : snprintf(buf, sizeof buf, "%llu", (unsigned long long)raw);
  note_fail(f, o, i, buf, (size_t)len);
}

/* Stores integer (neg, raw) into row i of o under the cast's mode. */
static void store_int(ladle_column *o, int64_t i, bool neg, uint64_t raw, ladle_cast_mode mode,
                      cast_fail *f) {
  if (mode != LADLE_CAST_WRAP && !int_fits(o->type.id, neg, raw))
    note_fail_int(f, o, i, neg, raw);
  else
    put_int(o, i, raw);
}

/* Rust's `as` from a float: truncates toward zero, saturates at the type's
 * bounds, NaN is 0 (Polars' wrapping cast). */
static uint64_t saturate(double v, ladle_type_id to) {
  if (v != v) return 0;
  v = trunc(v);
  int bits = 8 * (int)ladle_type_width(to);
  if (ladle_type_is_signed(to)) {
    double hi = ldexp(1.0, bits - 1);
    if (v >= hi) return (uint64_t)(((uint64_t)1 << (bits - 1)) - 1);
    if (v <= -hi) return (uint64_t)(-((int64_t)1 << (bits - 2)) * 2);
    return (uint64_t)(int64_t)v;
  }
  if (v <= 0) return 0;
  if (v >= ldexp(1.0, bits)) return bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  return (uint64_t)v;
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

/* (the length in a local: a store through O could alias the column struct,
 * and the loop would reload it every row instead of vectorising) */
#define PLAIN_INNER(U, T, in, o)                     \
  {                                                  \
    const T *X = (in)->values;                       \
    U *O = LADLE_COL_MUT(o, U);                      \
    int64_t n_ = (in)->length;                       \
    for (int64_t i = 0; i < n_; i++) O[i] = (U)X[i]; \
  }
#define PLAIN_OUTER(T, in, o) \
  LADLE_DISPATCH_NUM2(ladle_type_phys((o)->type.id), PLAIN_INNER, T, in, o)

/* numeric/bool -> numeric/bool */
static void cast_numeric(const ladle_column *in, ladle_column *o, cast_fail *f,
                         ladle_cast_mode mode) {
  ladle_type_id from = in->type.id, to = o->type.id;
  bool ffloat = ladle_type_is_float(from);
  for (int64_t i = 0; i < in->length; i++) {
    if (!ladle_column_valid(in, i)) {
      put_int(o, i, 0);
      continue;
    }
    bool neg = false;
    uint64_t raw = ffloat ? 0 : ladle_cpu_int_value(in, i, &neg);
    double v = ffloat ? ladle_column_value_f64(in, i) : neg ? (double)(int64_t)raw : (double)raw;
    if (to == LADLE_TYPE_BOOL) {
      LADLE_COL_MUT(o, uint8_t)[i] = ffloat ? v != 0 : raw != 0;
    } else if (ladle_type_is_float(to)) {
      put_f64(o, i, v);
    } else if (!ffloat) {
      store_int(o, i, neg, raw, mode, f);
    } else if (mode == LADLE_CAST_WRAP) {
      put_int(o, i, saturate(v, to));
    } else {
      double t = trunc(v);
      bool ok = t == t && t >= -9223372036854775808.0 && t < 18446744073709551616.0;
      uint64_t r = !ok ? 0 : t < 0 ? (uint64_t)(int64_t)t : (uint64_t)t;
      if (ok && int_fits(to, t < 0, r)) {
        put_int(o, i, r);
      } else {
        char buf[40];
        int len = snprintf(buf, sizeof buf, "%g", v);
        note_fail(f, o, i, buf, (size_t)len);
      }
    }
  }
}

/* ---------------------------------------------------------------- to text */

/* Parses the "d.ddde+XX" of printf's %e: the digits as an integer, the exponent. */
static uint64_t e_digits(const char *s, int *exp) {
  uint64_t m = 0;
  for (; *s != 'e'; s++)
    if (*s >= '0' && *s <= '9') m = m * 10 + (uint64_t)(*s - '0');
  *exp = atoi(s + 1);
  return m;
}

/* The shortest decimal digits that read back to v (a float when f32), the
 * closest to v among them: digits in *dig (no trailing zeros), *exp the power
 * of ten of the first digit. v is finite and not zero. Every decimal of up to
 * 15 digits (Float32: 6) reads back as itself and is the only one of its
 * length near v, so when v rounded to 15 digits reads back, those digits
 * without their trailing zeros are the answer: one try for most data. Past
 * that, 16 then 17 digits (7, 8, 9), each rounded or, next to a power of two
 * where the interval that reads back is lopsided, one unit off. Subnormals
 * try every length. */
static int shortest_digits(double v, bool f32, char *dig, int *exp) {
  char buf[40];
  /* subnormals have fewer digits of precision: there, try every length */
  bool sub = f32 ? fabs(v) < FLT_MIN : fabs(v) < DBL_MIN;
  int first = sub ? 1 : f32 ? 6 : 15, last = f32 ? 9 : 17;
  uint64_t best = 0;
  int e = 0, p = first;
  for (; p <= last; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    best = e_digits(buf, &e);
    if (p == last || (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)) break;
    if (p == first && !sub) continue;
    bool found = false;
    for (int k = -1; k <= 1 && !found; k += 2) {
      uint64_t c = best + (uint64_t)(int64_t)k;
      snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)c, e - (p - 1));
      found = f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v;
      if (found) best = c;
    }
    if (found) break;
  }
  int n = snprintf(dig, 24, "%llu", (unsigned long long)best);
  *exp = e + (n - p); /* one unit off may have carried into a new digit, or lost one */
  while (n > 1 && dig[n - 1] == '0') dig[--n] = '\0';
  return n;
}

/* Polars' text for a float: the shortest digits that read back, positional
 * for exponents -5..15 (Float32: -6..12) with ".0" on integral values, else
 * scientific ("1e+16", "2.5e-7"). At most 26 bytes: 17 digits, a sign, "0."
 * and 5 zeros, or a mantissa and "e-324". */
static int format_float(double v, bool f32, char *buf) {
  if (v != v) return sprintf(buf, "NaN");
  if (isinf(v)) return sprintf(buf, v > 0 ? "inf" : "-inf");
  if (v == 0) return sprintf(buf, signbit(v) ? "-0.0" : "0.0");
  char dig[24];
  int e, n = shortest_digits(fabs(v), f32, dig, &e);
  char *w = buf;
  if (v < 0) *w++ = '-';
  if (e < (f32 ? -6 : -5) || e > (f32 ? 12 : 15)) {
    *w++ = dig[0];
    if (n > 1) w += sprintf(w, ".%s", dig + 1);
    w += sprintf(w, "e%c%d", e < 0 ? '-' : '+', abs(e));
  } else if (e < 0) { /* 0.000ddd */
    *w++ = '0';
    *w++ = '.';
    for (int k = 0; k < -e - 1; k++) *w++ = '0';
    w += sprintf(w, "%s", dig);
  } else { /* ddd.ddd, or ddd000.0 */
    for (int k = 0; k <= e; k++) *w++ = k < n ? dig[k] : '0';
    *w++ = '.';
    w += sprintf(w, "%s", n > e + 1 ? dig + e + 1 : "0");
  }
  return (int)(w - buf);
}

/* v in decimal, at least `width` digits (zero-padded); returns the end. */
static char *put_uint(char *w, uint64_t v, int width) {
  char tmp[20];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n < width) tmp[n++] = '0';
  while (n > 0) *w++ = tmp[--n];
  return w;
}

/* YYYY-MM-DD; years outside 0..9999 carry a sign (chrono's %Y). NULL when the
 * day is out of the printable range. */
static char *put_date(char *w, int64_t days) {
  if (!ladle_day_in_chrono_range(days)) return NULL;
  int64_t y;
  unsigned m, d;
  ladle_civil_from_days(days, &y, &m, &d);
  if (y < 0 || y > 9999) *w++ = y < 0 ? '-' : '+';
  w = put_uint(w, (uint64_t)llabs(y), 4);
  *w++ = '-';
  w = put_uint(w, m, 2);
  *w++ = '-';
  return put_uint(w, d, 2);
}

/* Text of row i at buf (40 bytes at most); its length, or -1 when Polars
 * cannot print the value. */
static int format_value(const ladle_column *in, int64_t i, char *buf) {
  ladle_type_id id = in->type.id;
  char *w = buf;
  if (id == LADLE_TYPE_BOOL) {
    bool b = ((const uint8_t *)in->values)[i];
    memcpy(buf, b ? "true" : "false", b ? 4 : 5);
    return b ? 4 : 5;
  }
  if (ladle_type_is_float(id))
    return format_float(ladle_column_value_f64(in, i), id == LADLE_TYPE_FLOAT32, buf);
  if (id == LADLE_TYPE_DATE) {
    w = put_date(w, ((const int32_t *)in->values)[i]);
  } else if (id == LADLE_TYPE_DATETIME) {
    int64_t v = ((const int64_t *)in->values)[i], per = ladle_unit_per_sec((int)in->type.unit);
    int64_t secs = ladle_floor_div(v, per), frac = v - secs * per;
    int64_t days = ladle_floor_div(secs, 86400), sod = secs - days * 86400;
    w = put_date(w, days);
    if (w == NULL) return -1;
    *w++ = ' ';
    w = put_uint(w, (uint64_t)(sod / 3600), 2);
    *w++ = ':';
    w = put_uint(w, (uint64_t)(sod / 60 % 60), 2);
    *w++ = ':';
    w = put_uint(w, (uint64_t)(sod % 60), 2);
    *w++ = '.';
    w = put_uint(w, (uint64_t)frac, per == 1000000000 ? 9 : per == 1000000 ? 6 : 3);
    if (in->type.tz[0] != '\0') { /* UTC: the binder refuses other zones */
      memcpy(w, "+00:00", 6);
      w += 6;
    }
  } else {
    bool neg;
    uint64_t raw = ladle_cpu_int_value(in, i, &neg);
    if (neg) *w++ = '-';
    w = put_uint(w, neg ? (uint64_t)0 - raw : raw, 1);
  }
  return w == NULL ? -1 : (int)(w - buf);
}

/* Formats every valid row once into a growing scratch buffer, then copies
 * the bytes into the column. */
static ladle_status cast_to_string(const ladle_column *in, ladle_column *o, const char *name,
                                   ladle_error *err) {
  int64_t n = in->length, cap = LADLE_MAX(n * 8, 64), pos = 0;
  int64_t *off = malloc((size_t)(n + 1) * sizeof *off);
  char *bytes = malloc((size_t)cap);
  ladle_status st = LADLE_OK;
  if (off == NULL || bytes == NULL) st = LADLE_OOM(err, "cast to str");
  for (int64_t i = 0; i < n && st == LADLE_OK; i++) {
    off[i] = pos;
    if (!ladle_column_valid(in, i)) continue;
    if (pos + 48 > cap) {
      cap = cap * 2;
      char *b = realloc(bytes, (size_t)cap);
      if (b == NULL) {
        st = LADLE_OOM(err, "cast to str");
        break;
      }
      bytes = b;
    }
    int len = format_value(in, i, bytes + pos);
    if (len < 0)
      st = ladle_err_set(err, LADLE_ECOMPUTE,
                         "cast of '%s' to str: a value outside the years -262143..262142 "
                         "that Polars can print",
                         name);
    else
      pos += len;
  }
  if (st == LADLE_OK) st = ladle_column_alloc(o->type, n, false, pos, o, err);
  if (st == LADLE_OK) {
    off[n] = pos;
    memcpy(LADLE_COL_MUT(o, int64_t), off, (size_t)(n + 1) * sizeof *off);
    if (pos > 0) memcpy(LADLE_COL_CHARS_MUT(o), bytes, (size_t)pos);
  }
  free(off);
  free(bytes);
  return st;
}

/* -------------------------------------------------------------- from text */

/* Polars' integers: an optional sign, then ASCII digits only (leading zeros
 * skipped), no spaces; '-' is refused for unsigned types, even "-0". */
static bool parse_int(const char *s, int64_t len, ladle_type_id to, bool *neg, uint64_t *raw) {
  int64_t k = 0;
  *neg = len > 0 && s[0] == '-';
  if (len > 0 && (s[0] == '-' || s[0] == '+')) k = 1;
  if (k == len || (*neg && !ladle_type_is_signed(to))) return false;
  uint64_t v = 0;
  for (; k < len; k++) {
    unsigned d = (unsigned)(unsigned char)s[k] - '0';
    if (d > 9) return false;
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (*neg) {
    if (v > (uint64_t)INT64_MAX + 1) return false;
    v = (uint64_t)0 - v;
  }
  *raw = v;
  return int_fits(to, *neg && v != 0, v);
}

static bool ascii_ieq(const char *s, int64_t len, const char *word) {
  int64_t n = (int64_t)strlen(word);
  if (len != n) return false;
  for (int64_t k = 0; k < n; k++)
    if ((s[k] | 0x20) != word[k]) return false;
  return true;
}

/* Polars' floats: [+-] then inf, infinity or nan in any case, or digits with
 * an optional '.' (a digit on either side) and exponent [eE][+-]digits. No
 * spaces, hex, underscores or "nan(...)". *special: 1 inf, 2 nan. */
static bool float_syntax(const char *s, int64_t len, int *special) {
  int64_t k = len > 0 && (s[0] == '+' || s[0] == '-');
  *special = 0;
  if (ascii_ieq(s + k, len - k, "inf") || ascii_ieq(s + k, len - k, "infinity")) {
    *special = 1;
    return true;
  }
  if (ascii_ieq(s + k, len - k, "nan")) {
    *special = 2;
    return true;
  }
  int64_t digits = 0;
  while (k < len && s[k] >= '0' && s[k] <= '9') k++, digits++;
  if (k < len && s[k] == '.') {
    k++;
    while (k < len && s[k] >= '0' && s[k] <= '9') k++, digits++;
  }
  if (digits == 0) return false;
  if (k < len && (s[k] == 'e' || s[k] == 'E')) {
    k++;
    if (k < len && (s[k] == '+' || s[k] == '-')) k++;
    int64_t ed = 0;
    while (k < len && s[k] >= '0' && s[k] <= '9') k++, ed++;
    if (ed == 0) return false;
  }
  return k == len;
}

typedef struct scratch {
  char *p;
  size_t cap;
} scratch;

/* s as a NUL-terminated string in the scratch buffer; NULL: no memory. */
static char *scratch_cstr(scratch *b, const char *s, int64_t len) {
  if ((size_t)len + 1 > b->cap) {
    size_t cap = LADLE_MAX((size_t)len + 1, b->cap * 2);
    char *p = realloc(b->p, cap);
    if (p == NULL) return NULL;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p, s, (size_t)len);
  b->p[len] = '\0';
  return b->p;
}

static ladle_status cast_from_string(const ladle_column *in, ladle_column *o, cast_fail *f,
                                     ladle_error *err) {
  ladle_type_id to = o->type.id;
  scratch b = {NULL, 0};
  for (int64_t i = 0; i < in->length; i++) {
    if (!ladle_column_valid(in, i)) {
      memset(LADLE_COL_MUT(o, char) + i * (int64_t)ladle_type_width(to), 0, ladle_type_width(to));
      continue;
    }
    const char *s = ladle_str_ptr(in, i);
    int64_t len = ladle_str_len(in, i);
    bool ok;
    if (ladle_type_is_float(to)) {
      int special;
      ok = float_syntax(s, len, &special);
      if (ok && special != 0) {
        double v = special == 1 ? INFINITY : NAN;
        put_f64(o, i, s[0] == '-' ? -v : v);
      } else if (ok) {
        char *c = scratch_cstr(&b, s, len);
        if (c == NULL) {
          free(b.p);
          return LADLE_OOM(err, "cast scratch");
        }
        if (to == LADLE_TYPE_FLOAT32) /* rounded once, straight to a float */
          LADLE_COL_MUT(o, float)[i] = strtof(c, NULL);
        else
          LADLE_COL_MUT(o, double)[i] = strtod(c, NULL);
      }
    } else {
      bool neg;
      uint64_t raw;
      ok = parse_int(s, len, to, &neg, &raw);
      if (ok) put_int(o, i, raw);
    }
    if (!ok) note_fail(f, o, i, s, (size_t)len);
  }
  free(b.p);
  return LADLE_OK;
}

/* --------------------------------------------------------------- temporal */

/* Value v of `from` in `to`'s unit: Date <-> Datetime and unit changes.
 * Datetimes floor toward the past, Durations truncate toward zero; false when
 * the value overflows int64. Other pairs pass v through. */
static bool convert_unit(int64_t v, ladle_dtype from, ladle_dtype to, int64_t *out) {
  int64_t pf = ladle_unit_per_sec((int)from.unit), pt = ladle_unit_per_sec((int)to.unit);
  if (from.id == LADLE_TYPE_DATE && to.id == LADLE_TYPE_DATETIME)
    return !__builtin_mul_overflow(v, 86400 * pt, out);
  if (from.id == LADLE_TYPE_DATETIME && to.id == LADLE_TYPE_DATE) {
    *out = ladle_floor_div(v, 86400 * pf);
    return true;
  }
  if (from.id == to.id && (from.id == LADLE_TYPE_DATETIME || from.id == LADLE_TYPE_DURATION)) {
    if (pt >= pf) return !__builtin_mul_overflow(v, pt / pf, out);
    *out = from.id == LADLE_TYPE_DATETIME ? ladle_floor_div(v, pf / pt) : v / (pf / pt);
    return true;
  }
  *out = v;
  return true;
}

static void cast_temporal(const ladle_column *in, ladle_column *o, cast_fail *f,
                          ladle_cast_mode mode) {
  bool units = ladle_type_is_temporal(in->type.id) && ladle_type_is_temporal(o->type.id);
  for (int64_t i = 0; i < in->length; i++) {
    if (!ladle_column_valid(in, i)) {
      put_int(o, i, 0);
      continue;
    }
    bool neg;
    uint64_t raw = ladle_cpu_int_value(in, i, &neg);
    if (units) {
      int64_t r;
      if (!convert_unit((int64_t)raw, in->type, o->type, &r)) {
        note_fail_int(f, o, i, neg, raw); /* null even in a wrapping cast */
        continue;
      }
      neg = r < 0;
      raw = (uint64_t)r;
    }
    store_int(o, i, neg, raw, mode, f);
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

static bool is_num(ladle_type_id id) { return ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL; }

static bool is_int_or_temporal(ladle_type_id id) {
  return ladle_type_is_integer(id) || id == LADLE_TYPE_DATE || id == LADLE_TYPE_DATETIME ||
         id == LADLE_TYPE_DURATION;
}

/* Which text casts this file runs: to String from numbers, booleans, dates and
 * naive or UTC datetimes; from String to numbers (not booleans or dates,
 * which Polars refuses). */
static bool text_cast_known(ladle_dtype from, ladle_dtype to) {
  if (to.id == LADLE_TYPE_STRING)
    return is_num(from.id) || from.id == LADLE_TYPE_DATE ||
           (from.id == LADLE_TYPE_DATETIME && (from.tz[0] == '\0' || strcmp(from.tz, "UTC") == 0));
  return from.id == LADLE_TYPE_STRING && ladle_type_is_numeric(to.id);
}

static bool temporal_cast_known(ladle_type_id from, ladle_type_id to) {
  if (!ladle_type_is_temporal(from) && !ladle_type_is_temporal(to)) return false;
  if (!is_int_or_temporal(from) || !is_int_or_temporal(to)) return false;
  if (ladle_type_is_integer(from) || ladle_type_is_integer(to)) return true;
  if (from == LADLE_TYPE_DURATION || to == LADLE_TYPE_DURATION) return from == to;
  return true; /* Date and Datetime */
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
  if (from == LADLE_TYPE_LIST && to.id == LADLE_TYPE_LIST)
    return ladle_cpu_list_cast(ctx, in, to, mode, name, out, err);
  if (ladle_cast_refused(in->type, to)) {
    if (in->null_count == n) return ladle_column_nulls(to, n, out, err);
    return ladle_err_set(err, LADLE_ECOMPUTE, "casting from %s to %s not supported (column '%s')",
                         ladle_dtype_name(in->type, b1, sizeof b1),
                         ladle_dtype_name(to, b2, sizeof b2), name);
  }
  if (from == LADLE_TYPE_STRING && to.id == LADLE_TYPE_DURATION) {
    /* the text of an integer, as Polars reads it */
    ladle_column i64;
    ladle_status st =
        ladle_cpu_cast(ctx, in, ladle_dtype_make(LADLE_TYPE_INT64), mode, name, &i64, err);
    if (st == LADLE_ECOMPUTE) {
      char why[LADLE_ERROR_MESSAGE_MAX];
      snprintf(why, sizeof why, "%s", err->message);
      return ladle_err_set(err, st, "cast of '%s' from str to %s (through i64) failed: %s", name,
                           ladle_dtype_name(to, b2, sizeof b2), why);
    }
    if (st != LADLE_OK) return st;
    *out = i64;
    out->type = to;
    return LADLE_OK;
  }
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
  if (ladle_cpu_cast128_known(in->type, to)) return ladle_cpu_cast128(in, to, mode, name, out, err);
  bool numeric = is_num(from) && is_num(to.id);
  bool decimal = from == LADLE_TYPE_DECIMAL && ladle_type_is_float(to.id);
  bool text = text_cast_known(in->type, to), temporal = temporal_cast_known(from, to.id);
  if (!numeric && !decimal && !text && !temporal)
    return ladle_err_set(err, LADLE_ENOTSUP, "cast of '%s' from %s to %s", name,
                         ladle_dtype_name(in->type, b1, sizeof b1),
                         ladle_dtype_name(to, b2, sizeof b2));
  /* the C locale for printf/strtod ('.' as the decimal point) */
  locale_t c_loc = text ? newlocale(LC_NUMERIC_MASK, "C", (locale_t)0) : (locale_t)0;
  if (text && c_loc == (locale_t)0) return LADLE_OOM(err, "C locale");
  locale_t old = text ? uselocale(c_loc) : (locale_t)0;
  ladle_column o;
  cast_fail f = {false, 0, ""};
  ladle_status st = LADLE_OK;
  if (to.id == LADLE_TYPE_STRING) {
    o.type = to;
    st = cast_to_string(in, &o, name, err);
    if (st == LADLE_OK && in->validity != NULL) {
      st = ladle_column_add_validity(&o, err);
      if (st == LADLE_OK)
        memcpy(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n));
      else
        ladle_column_release(&o);
    }
  } else if ((st = ladle_column_alloc(to, n, true, 0, &o, err)) == LADLE_OK) {
    if (in->validity != NULL)
      memcpy(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n));
    if (decimal) {
      decimal_to_float(in, &o);
    } else if ((numeric && cast_is_plain(from, to.id)) ||
               (temporal && !(ladle_type_is_temporal(from) && ladle_type_is_temporal(to.id)) &&
                cast_is_plain(int_storage(from), int_storage(to.id)))) {
      /* (a Date to Int64, an Int32 to a Datetime: their integers, no unit
       * to convert, none out of range) */
      LADLE_DISPATCH_NUM(ladle_type_phys(from), PLAIN_OUTER, in, &o)
    } else if (numeric) {
      cast_numeric(in, &o, &f, mode);
    } else if (text) {
      st = cast_from_string(in, &o, &f, err);
      if (st != LADLE_OK) ladle_column_release(&o);
    } else {
      cast_temporal(in, &o, &f, mode);
    }
  }
  if (text) {
    uselocale(old);
    freelocale(c_loc);
  }
  if (st != LADLE_OK) return st;
  if (f.failed && mode == LADLE_CAST_STRICT) {
    ladle_column_release(&o);
    return ladle_err_set(err, LADLE_ECOMPUTE,
                         "strict cast of '%s' from %s to %s failed for value '%s'; "
                         "use strict=False to get null instead",
                         name, ladle_dtype_name(in->type, b1, sizeof b1),
                         ladle_dtype_name(to, b2, sizeof b2), f.value);
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}
