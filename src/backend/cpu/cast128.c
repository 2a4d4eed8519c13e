/* cast128.c — casts to and from INT128 and UINT128 with Polars 2.1's rules:
 * integers and booleans in and out (a value that does not fit fails under the
 * cast's mode, a wrapping cast keeps the low bytes), floats in (truncated; NaN,
 * infinities and values past the range fail, a wrapping cast saturates as
 * Rust's `as`) and out (rounded to nearest, as Rust's `as`), and text both ways
 * (an optional sign and ASCII digits, nothing else). Values are read and
 * written with memcpy: buffers from Arrow may be only 8-aligned. */
#include <stdio.h>

#include "cpu.h"

typedef unsigned __int128 u128;
typedef __int128 i128;

#define I128_MAX ((i128)(((u128)1 << 127) - 1))
#define I128_MIN (-I128_MAX - 1)

bool ladle_cpu_is_int128(ladle_type_id id) {
  return id == LADLE_TYPE_INT128 || id == LADLE_TYPE_UINT128;
}

/* Row i of a BOOL or integer column as a two's complement 128-bit value;
 * *neg for negative signed values. */
static u128 get_wide(const ladle_column *c, int64_t i, bool *neg) {
  *neg = false;
  if (ladle_cpu_is_int128(c->type.id)) {
    u128 v;
    memcpy(&v, (const char *)c->values + 16 * i, 16);
    *neg = c->type.id == LADLE_TYPE_INT128 && (i128)v < 0;
    return v;
  }
  /* narrower: the 64-bit two's complement value, sign-extended */
  uint64_t v = ladle_cpu_int_value(c, i, neg);
  return *neg ? (u128)(i128)(int64_t)v : (u128)v;
}

/* Does the integer (neg, v) fit the BOOL-free integer type `to`? */
static bool wide_fits(ladle_type_id to, bool neg, u128 v) {
  i128 s = (i128)v;
  if (to == LADLE_TYPE_UINT128) return !neg;
  if (to == LADLE_TYPE_INT128) return neg || s >= 0;
  size_t bits = 8 * ladle_type_width(to);
  if (ladle_type_is_signed(to)) {
    i128 hi = ((i128)1 << (bits - 1)) - 1;
    return neg ? s >= -hi - 1 : v <= (u128)hi;
  }
  return !neg && v <= (((u128)1 << bits) - 1);
}

/* Stores the low bytes of v (two's complement wrapping) in row i. */
static void put_wide(ladle_column *o, int64_t i, u128 v) {
  char *d = LADLE_COL_MUT(o, char);
  switch (ladle_type_width(o->type.id)) {
    case 1: {
      uint8_t x = (uint8_t)v;
      d[i] = (char)x;
      break;
    }
    case 2: {
      uint16_t x = (uint16_t)v;
      memcpy(d + 2 * i, &x, 2);
      break;
    }
    case 4: {
      uint32_t x = (uint32_t)v;
      memcpy(d + 4 * i, &x, 4);
      break;
    }
    case 8: {
      uint64_t x = (uint64_t)v;
      memcpy(d + 8 * i, &x, 8);
      break;
    }
    default:
      memcpy(d + 16 * i, &v, 16);
      break;
  }
}

/* Decimal text of (neg, v) in buf (at least 41 bytes); returns its length. */
static int format_wide(bool neg, u128 v, char *buf) {
  char tmp[48];
  int n = 0;
  u128 m = neg ? (u128)0 - v : v;
  do {
    tmp[n++] = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m != 0);
  int k = 0;
  if (neg) buf[k++] = '-';
  while (n > 0) buf[k++] = tmp[--n];
  buf[k] = '\0';
  return k;
}

/* Polars' integer text: an optional sign, then ASCII digits only; '-' is
 * refused for UINT128, even "-0". */
static bool parse_wide(const char *s, int64_t len, ladle_type_id to, bool *neg, u128 *out) {
  int64_t k = 0;
  *neg = len > 0 && s[0] == '-';
  if (len > 0 && (s[0] == '-' || s[0] == '+')) k = 1;
  if (k == len || (*neg && to == LADLE_TYPE_UINT128)) return false;
  u128 v = 0, lim = to == LADLE_TYPE_UINT128 ? ~(u128)0 : *neg ? (u128)1 << 127 : (u128)I128_MAX;
  for (; k < len; k++) {
    unsigned d = (unsigned)(unsigned char)s[k] - '0';
    if (d > 9 || v > (lim - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = *neg ? (u128)0 - v : v;
  *neg = *neg && v != 0;
  return true;
}

/* A float truncated into `to` (INT128 or UINT128); false when NaN, infinite or
 * out of range. A wrapping cast saturates instead (NaN is 0), as Rust's `as`. */
static bool float_to_wide(double v, ladle_type_id to, bool wrap, u128 *out) {
  double t = trunc(v);
  double hi = to == LADLE_TYPE_INT128 ? ldexp(1.0, 127) : ldexp(1.0, 128);
  double lo = to == LADLE_TYPE_INT128 ? -ldexp(1.0, 127) : 0.0;
  if (t != t) {
    *out = 0;
    return wrap;
  }
  if (t >= hi) {
    *out = to == LADLE_TYPE_INT128 ? (u128)I128_MAX : ~(u128)0;
    return wrap;
  }
  if (t < lo) {
    *out = to == LADLE_TYPE_INT128 ? (u128)I128_MIN : 0;
    return wrap;
  }
  *out = to == LADLE_TYPE_INT128 ? (u128)(i128)t : (u128)t;
  return true;
}

bool ladle_cpu_cast128_known(ladle_dtype from, ladle_dtype to) {
  bool fw = ladle_cpu_is_int128(from.id), tw = ladle_cpu_is_int128(to.id);
  bool fi = ladle_type_is_integer(from.id) || from.id == LADLE_TYPE_BOOL;
  bool ti = ladle_type_is_integer(to.id) || to.id == LADLE_TYPE_BOOL;
  if (fw) return tw || ti || ladle_type_is_float(to.id) || to.id == LADLE_TYPE_STRING;
  if (tw) return fi || ladle_type_is_float(from.id) || from.id == LADLE_TYPE_STRING;
  return false;
}

ladle_status ladle_cpu_cast128(const ladle_column *in, ladle_dtype to, ladle_cast_mode mode,
                               const char *name, ladle_column *out, ladle_error *err) {
  char b1[64], b2[64], bad[48] = "";
  int64_t n = in->length, bad_row = -1;
  ladle_type_id from = in->type.id;
  ladle_column o;
  memset(&o, 0, sizeof o);
  ladle_status st;
  bool wrap = mode == LADLE_CAST_WRAP;
  if (to.id == LADLE_TYPE_STRING) {
    int64_t chars = 0;
    char buf[48];
    for (int64_t i = 0; i < n; i++) {
      bool neg;
      u128 v = get_wide(in, i, &neg);
      if (ladle_column_valid(in, i)) chars += format_wide(neg, v, buf);
    }
    st = ladle_column_alloc(to, n, in->validity != NULL, chars, &o, err);
    if (st != LADLE_OK) return st;
    int64_t *off = LADLE_COL_MUT(&o, int64_t), pos = 0;
    char *d = LADLE_COL_CHARS_MUT(&o);
    for (int64_t i = 0; i < n; i++) {
      if (ladle_column_valid(in, i)) {
        bool neg;
        u128 v = get_wide(in, i, &neg);
        int k = format_wide(neg, v, buf);
        memcpy(d + pos, buf, (size_t)k);
        pos += k;
      }
      off[i + 1] = pos;
    }
    if (in->validity != NULL)
      memcpy(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n));
    ladle_column_finish_nulls(&o);
    *out = o;
    return LADLE_OK;
  }
  LADLE_RETURN_NOT_OK(ladle_column_alloc(to, n, true, 0, &o, err));
  uint8_t *bits = LADLE_COL_VALIDITY_MUT(&o);
  memset(LADLE_COL_MUT(&o, char), 0, (size_t)n * ladle_type_width(to.id));
  for (int64_t i = 0; i < n; i++) {
    bool valid = ladle_column_valid(in, i);
    ladle_bit_set(bits, i, valid);
    if (!valid) continue;
    bool ok = true, neg = false;
    u128 v = 0;
    if (from == LADLE_TYPE_STRING) {
      ok = parse_wide(ladle_str_ptr(in, i), ladle_str_len(in, i), to.id, &neg, &v);
      if (!ok && bad_row < 0)
        snprintf(bad, sizeof bad, "%.*s", (int)LADLE_MIN(ladle_str_len(in, i), 40),
                 ladle_str_ptr(in, i));
    } else if (ladle_type_is_float(from)) {
      double x = ladle_column_value_f64(in, i);
      ok = float_to_wide(x, to.id, wrap, &v);
      if (!ok && bad_row < 0) snprintf(bad, sizeof bad, "%g", x);
    } else {
      v = get_wide(in, i, &neg);
      if (to.id != LADLE_TYPE_BOOL && !ladle_type_is_float(to.id) && !wrap &&
          !wide_fits(to.id, neg, v)) {
        ok = false;
        if (bad_row < 0) format_wide(neg, v, bad);
      }
    }
    if (!ok) {
      ladle_bit_set(bits, i, false);
      if (bad_row < 0) bad_row = i;
    } else if (to.id == LADLE_TYPE_BOOL) {
      LADLE_COL_MUT(&o, uint8_t)[i] = v != 0;
    } else if (to.id == LADLE_TYPE_FLOAT32) {
      LADLE_COL_MUT(&o, float)[i] = neg ? (float)(i128)v : (float)v;
    } else if (to.id == LADLE_TYPE_FLOAT64) {
      LADLE_COL_MUT(&o, double)[i] = neg ? (double)(i128)v : (double)v;
    } else {
      put_wide(&o, i, v);
    }
  }
  if (bad_row >= 0 && mode == LADLE_CAST_STRICT) {
    ladle_column_release(&o);
    return ladle_err_set(err, LADLE_ECOMPUTE,
                         "strict cast of '%s' from %s to %s failed for value '%s'; "
                         "use strict=False to get null instead",
                         name, ladle_dtype_name(in->type, b1, sizeof b1),
                         ladle_dtype_name(to, b2, sizeof b2), bad);
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}
