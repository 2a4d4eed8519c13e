/* types.c — type descriptors: widths, classes, names and Polars' supertype rules
 * (the type both sides of an arithmetic or comparison are cast to). */
#include <stdio.h>

#include "core.h"

ladle_dtype ladle_dtype_make(ladle_type_id id) {
  ladle_dtype t;
  memset(&t, 0, sizeof t);
  t.id = id;
  if (id == LADLE_TYPE_DATETIME || id == LADLE_TYPE_DURATION) t.unit = LADLE_TIME_US;
  return t;
}

ladle_dtype ladle_dtype_temporal(ladle_type_id id, ladle_time_unit unit, const char *tz) {
  ladle_dtype t = ladle_dtype_make(id);
  t.unit = unit;
  if (tz != NULL) {
    strncpy(t.tz, tz, sizeof t.tz - 1);
    t.tz[sizeof t.tz - 1] = '\0';
  }
  return t;
}

ladle_dtype ladle_dtype_decimal(int precision, int scale) {
  ladle_dtype t = ladle_dtype_make(LADLE_TYPE_DECIMAL);
  t.precision = (int8_t)precision;
  t.scale = (int8_t)scale;
  return t;
}

/* Children of LIST types point here, so a dtype stays a plain value. */
static const ladle_dtype k_list_children[LADLE_TYPE_COUNT_] = {
    [LADLE_TYPE_BOOL] = {.id = LADLE_TYPE_BOOL},
    [LADLE_TYPE_INT8] = {.id = LADLE_TYPE_INT8},
    [LADLE_TYPE_INT16] = {.id = LADLE_TYPE_INT16},
    [LADLE_TYPE_INT32] = {.id = LADLE_TYPE_INT32},
    [LADLE_TYPE_INT64] = {.id = LADLE_TYPE_INT64},
    [LADLE_TYPE_UINT8] = {.id = LADLE_TYPE_UINT8},
    [LADLE_TYPE_UINT16] = {.id = LADLE_TYPE_UINT16},
    [LADLE_TYPE_UINT32] = {.id = LADLE_TYPE_UINT32},
    [LADLE_TYPE_UINT64] = {.id = LADLE_TYPE_UINT64},
    [LADLE_TYPE_FLOAT32] = {.id = LADLE_TYPE_FLOAT32},
    [LADLE_TYPE_FLOAT64] = {.id = LADLE_TYPE_FLOAT64},
    [LADLE_TYPE_STRING] = {.id = LADLE_TYPE_STRING},
    [LADLE_TYPE_BINARY] = {.id = LADLE_TYPE_BINARY},
    [LADLE_TYPE_DATE] = {.id = LADLE_TYPE_DATE},
    [LADLE_TYPE_TIME] = {.id = LADLE_TYPE_TIME},
};

ladle_dtype ladle_dtype_list(ladle_type_id child) {
  if ((int)child <= 0 || child >= LADLE_TYPE_COUNT_ || k_list_children[child].id != child)
    return ladle_dtype_make(LADLE_TYPE_NULL);
  ladle_dtype t = ladle_dtype_make(LADLE_TYPE_LIST);
  t.child = &k_list_children[child];
  return t;
}

bool ladle_dtype_equal(ladle_dtype a, ladle_dtype b) {
  if (a.id != b.id) return false;
  if (a.id == LADLE_TYPE_DATETIME) return a.unit == b.unit && strcmp(a.tz, b.tz) == 0;
  if (a.id == LADLE_TYPE_DURATION) return a.unit == b.unit;
  if (a.id == LADLE_TYPE_DECIMAL) return a.precision == b.precision && a.scale == b.scale;
  if (a.id == LADLE_TYPE_LIST)
    return a.child != NULL && b.child != NULL && ladle_dtype_equal(*a.child, *b.child);
  return true;
}

static const char *unit_name(ladle_time_unit u) {
  return u == LADLE_TIME_NS ? "ns" : u == LADLE_TIME_US ? "μs" : "ms";
}

const char *ladle_dtype_name(ladle_dtype t, char *buf, size_t buf_len) {
  static const char *names[LADLE_TYPE_COUNT_] = {
      "null",    "bool", "i8",  "i16",  "i32",    "i64",  "u8",       "u16",
      "u32",     "u64",  "f32", "f64",  "str",    "date", "datetime", "duration",
      "decimal", "list", "cat", "time", "binary", "i128", "u128"};
  if ((int)t.id < 0 || t.id >= LADLE_TYPE_COUNT_) return "?";
  if ((t.id == LADLE_TYPE_DATETIME || t.id == LADLE_TYPE_DURATION) && buf != NULL) {
    if (t.tz[0] != '\0')
      snprintf(buf, buf_len, "%s[%s, %s]", names[t.id], unit_name(t.unit), t.tz);
    else
      snprintf(buf, buf_len, "%s[%s]", names[t.id], unit_name(t.unit));
    return buf;
  }
  if (t.id == LADLE_TYPE_LIST && t.child != NULL && buf != NULL) {
    snprintf(buf, buf_len, "list[%s]", names[t.child->id]);
    return buf;
  }
  if (t.id == LADLE_TYPE_DECIMAL && buf != NULL) {
    snprintf(buf, buf_len, "decimal[%d,%d]", t.precision, t.scale);
    return buf;
  }
  return names[t.id];
}

size_t ladle_type_width(ladle_type_id id) {
  switch (id) {
    case LADLE_TYPE_BOOL:
    case LADLE_TYPE_INT8:
    case LADLE_TYPE_UINT8:
      return 1;
    case LADLE_TYPE_INT16:
    case LADLE_TYPE_UINT16:
      return 2;
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_UINT32:
    case LADLE_TYPE_FLOAT32:
    case LADLE_TYPE_DATE:
      return 4;
    case LADLE_TYPE_INT64:
    case LADLE_TYPE_UINT64:
    case LADLE_TYPE_FLOAT64:
    case LADLE_TYPE_DATETIME:
    case LADLE_TYPE_DURATION:
    case LADLE_TYPE_TIME:
      return 8;
    case LADLE_TYPE_DECIMAL:
    case LADLE_TYPE_INT128:
    case LADLE_TYPE_UINT128:
      return 16;
    default:
      return 0;
  }
}

bool ladle_type_is_integer(ladle_type_id id) {
  return id >= LADLE_TYPE_INT8 && id <= LADLE_TYPE_UINT64;
}
bool ladle_type_is_signed(ladle_type_id id) {
  return (id >= LADLE_TYPE_INT8 && id <= LADLE_TYPE_INT64) || ladle_type_is_float(id);
}
bool ladle_type_is_float(ladle_type_id id) {
  return id == LADLE_TYPE_FLOAT32 || id == LADLE_TYPE_FLOAT64;
}
bool ladle_type_is_numeric(ladle_type_id id) {
  return ladle_type_is_integer(id) || ladle_type_is_float(id);
}
bool ladle_type_is_temporal(ladle_type_id id) {
  return id == LADLE_TYPE_DATE || id == LADLE_TYPE_DATETIME || id == LADLE_TYPE_DURATION;
}

ladle_phys ladle_type_phys(ladle_type_id id) {
  switch (id) {
    case LADLE_TYPE_BOOL:
    case LADLE_TYPE_UINT8:
      return LADLE_PHYS_U8;
    case LADLE_TYPE_INT8:
      return LADLE_PHYS_I8;
    case LADLE_TYPE_INT16:
      return LADLE_PHYS_I16;
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_DATE:
      return LADLE_PHYS_I32;
    case LADLE_TYPE_INT64:
    case LADLE_TYPE_DATETIME:
    case LADLE_TYPE_DURATION:
      return LADLE_PHYS_I64;
    case LADLE_TYPE_UINT16:
      return LADLE_PHYS_U16;
    case LADLE_TYPE_UINT32:
      return LADLE_PHYS_U32;
    case LADLE_TYPE_UINT64:
      return LADLE_PHYS_U64;
    case LADLE_TYPE_FLOAT32:
      return LADLE_PHYS_F32;
    case LADLE_TYPE_FLOAT64:
      return LADLE_PHYS_F64;
    case LADLE_TYPE_STRING:
      return LADLE_PHYS_STR;
    default:
      return LADLE_PHYS_NULL;
  }
}

static ladle_type_id signed_of_width(size_t w) {
  return w == 1   ? LADLE_TYPE_INT8
         : w == 2 ? LADLE_TYPE_INT16
         : w == 4 ? LADLE_TYPE_INT32
                  : LADLE_TYPE_INT64;
}
static ladle_type_id unsigned_of_width(size_t w) {
  return w == 1   ? LADLE_TYPE_UINT8
         : w == 2 ? LADLE_TYPE_UINT16
         : w == 4 ? LADLE_TYPE_UINT32
                  : LADLE_TYPE_UINT64;
}

bool ladle_type_supertype(ladle_dtype a, ladle_dtype b, ladle_dtype *out) {
  if (ladle_dtype_equal(a, b)) {
    *out = a;
    return true;
  }
  if (a.id == LADLE_TYPE_NULL) {
    *out = b;
    return true;
  }
  if (b.id == LADLE_TYPE_NULL) {
    *out = a;
    return true;
  }
  /* Int128 with an integer or a boolean is Int128, as Polars (with a float
   * Polars casts to Float64 in its plan: not decided here) */
  if (a.id == LADLE_TYPE_INT128 || b.id == LADLE_TYPE_INT128) {
    ladle_type_id o = a.id == LADLE_TYPE_INT128 ? b.id : a.id;
    *out = ladle_dtype_make(LADLE_TYPE_INT128);
    return ladle_type_is_integer(o) || o == LADLE_TYPE_BOOL;
  }
  if (a.id == LADLE_TYPE_BOOL && ladle_type_is_numeric(b.id)) {
    *out = b;
    return true;
  }
  if (b.id == LADLE_TYPE_BOOL && ladle_type_is_numeric(a.id)) {
    *out = a;
    return true;
  }
  if (ladle_type_is_integer(a.id) && ladle_type_is_integer(b.id)) {
    size_t wa = ladle_type_width(a.id), wb = ladle_type_width(b.id);
    bool sa = ladle_type_is_signed(a.id), sb = ladle_type_is_signed(b.id);
    if (sa == sb) {
      *out = ladle_dtype_make(sa ? signed_of_width(LADLE_MAX(wa, wb))
                                 : unsigned_of_width(LADLE_MAX(wa, wb)));
      return true;
    }
    size_t ws = sa ? wa : wb, wu = sa ? wb : wa;
    if (ws > wu) {
      *out = ladle_dtype_make(signed_of_width(ws));
      return true;
    }
    if (wu >= 8) return false; /* Polars goes to Int128 here */
    *out = ladle_dtype_make(signed_of_width(wu * 2));
    return true;
  }
  if (ladle_type_is_numeric(a.id) && ladle_type_is_numeric(b.id)) {
    ladle_dtype f = ladle_type_is_float(a.id) ? a : b;
    ladle_dtype o = ladle_type_is_float(a.id) ? b : a;
    if (f.id == LADLE_TYPE_FLOAT64 || o.id == LADLE_TYPE_FLOAT64) {
      *out = ladle_dtype_make(LADLE_TYPE_FLOAT64);
    } else if (ladle_type_is_float(o.id) || ladle_type_width(o.id) <= 2) {
      *out = ladle_dtype_make(LADLE_TYPE_FLOAT32);
    } else {
      *out = ladle_dtype_make(LADLE_TYPE_FLOAT64);
    }
    return true;
  }
  if ((a.id == LADLE_TYPE_DATE && b.id == LADLE_TYPE_DATETIME) ||
      (a.id == LADLE_TYPE_DATETIME && b.id == LADLE_TYPE_DATE)) {
    *out = a.id == LADLE_TYPE_DATETIME ? a : b;
    return true;
  }
  if (a.id == b.id && (a.id == LADLE_TYPE_DATETIME || a.id == LADLE_TYPE_DURATION) &&
      strcmp(a.tz, b.tz) == 0) {
    /* as in Polars, the coarser unit wins (ns < us < ms in the enum):
     * Datetime(ns) compared with Datetime(us) compares microseconds */
    *out = a.unit > b.unit ? a : b;
    return true;
  }
  return false;
}

bool ladle_cast_refused(ladle_dtype from, ladle_dtype to) {
  ladle_type_id f = from.id, t = to.id;
  if (f == LADLE_TYPE_STRING)
    return t == LADLE_TYPE_BOOL || t == LADLE_TYPE_DATE || t == LADLE_TYPE_DATETIME ||
           t == LADLE_TYPE_TIME;
  if (f == LADLE_TYPE_DURATION && t == LADLE_TYPE_STRING) return true;
  return t == LADLE_TYPE_BOOL &&
         (f == LADLE_TYPE_DATE || f == LADLE_TYPE_DATETIME || f == LADLE_TYPE_DURATION);
}

/* The names of functions and aggregations, for plans' text and kernels'
 * messages. */
const char *ladle_func_name(ladle_func f) {
  static const char *names[LADLE_FN_COUNT_] = {"not",
                                               "neg",
                                               "abs",
                                               "is_null",
                                               "is_not_null",
                                               "is_nan",
                                               "is_not_nan",
                                               "fill_null",
                                               "fill_nan",
                                               "is_in",
                                               "is_between",
                                               "clip",
                                               "round",
                                               "floor",
                                               "ceil",
                                               "sqrt",
                                               "log",
                                               "exp",
                                               "pow",
                                               "hash",
                                               "str.len_bytes",
                                               "str.len_chars",
                                               "str.contains",
                                               "str.starts_with",
                                               "str.ends_with",
                                               "str.to_uppercase",
                                               "str.to_lowercase",
                                               "str.slice",
                                               "str.strip_chars",
                                               "concat_str",
                                               "dt.year",
                                               "dt.month",
                                               "dt.day",
                                               "dt.hour",
                                               "dt.minute",
                                               "dt.second",
                                               "dt.weekday",
                                               "dt.ordinal_day",
                                               "dt.truncate",
                                               "log1p",
                                               "str.split",
                                               "list.len",
                                               "list.slice"};
  return (int)f >= 0 && f < LADLE_FN_COUNT_ ? names[f] : "?";
}

const char *ladle_agg_name(ladle_agg_op a) {
  static const char *names[LADLE_AGG_COUNT_] = {
      "sum",      "mean",    "min",  "max", "count",  "null_count", "len",
      "n_unique", "first",   "last", "std", "var",    "median",     "quantile",
      "arg_min",  "arg_max", "any",  "all", "implode"};
  return (int)a >= 0 && a < LADLE_AGG_COUNT_ ? names[a] : "?";
}
