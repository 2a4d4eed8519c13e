/* arith.c — binary kernels: arithmetic with Polars' wrapping and flooring rules,
 * comparisons in total order (NaN == NaN, NaN sorts last), Kleene logic, string
 * comparison and concatenation. Length-1 operands broadcast. */
#include "cpu.h"
#include "temporal.h"

ladle_status ladle_cpu_merge_validity(const ladle_column *a, const ladle_column *b,
                                      ladle_column *out, ladle_error *err) {
  if (a->validity == NULL && (b == NULL || b->validity == NULL)) return LADLE_OK;
  LADLE_RETURN_NOT_OK(ladle_column_add_validity(out, err));
  uint8_t *bits = LADLE_COL_VALIDITY_MUT(out);
  int64_t n = out->length;
  const ladle_column *cols[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    const ladle_column *c = cols[k];
    if (c == NULL || c->validity == NULL) continue;
    if (c->length == 1 && n != 1) {
      if (!ladle_bit_get(c->validity, 0)) memset(bits, 0, (size_t)ladle_bitmap_bytes(n));
    } else {
      for (int64_t i = 0; i < ladle_bitmap_bytes(n); i++) bits[i] &= c->validity[i];
    }
  }
  return LADLE_OK;
}

/* Applies BODY for i in [0, n) with x = a[ia], y = b[ib] under all broadcast
 * shapes, so the compiler sees unit strides in the common case. */
#define BCAST_LOOP(A, B, n, BODY)               \
  do {                                          \
    if (a->length == (n) && b->length == (n)) { \
      for (int64_t i = 0; i < (n); i++) {       \
        __typeof__(A[0]) x = A[i];              \
        __typeof__(B[0]) y = B[i];              \
        BODY;                                   \
      }                                         \
    } else if (b->length != (n)) {              \
      __typeof__(B[0]) y = B[0];                \
      for (int64_t i = 0; i < (n); i++) {       \
        __typeof__(A[0]) x = A[i];              \
        BODY;                                   \
      }                                         \
    } else {                                    \
      __typeof__(A[0]) x = A[0];                \
      for (int64_t i = 0; i < (n); i++) {       \
        __typeof__(B[0]) y = B[i];              \
        BODY;                                   \
      }                                         \
    }                                           \
  } while (0)

#define IS_FLOAT_T(T) ((T)0.5 != 0)
#define IS_SIGNED_T(T) ((T)-1 < (T)0)
/* integer remainder that also compiles (unused) when T is a float type */
#define IMOD(T, x, y) \
  ((T)(IS_SIGNED_T(T) ? (T)((int64_t)(x) % (int64_t)(y)) : (T)((uint64_t)(x) % (uint64_t)(y))))

/* A float // or % whose right side is one value and left side several: Polars
 * then multiplies by the reciprocal, computed once (floor(x * (1 / y))), where
 * two columns, or one value on the left, divide row by row. Decided on the
 * lengths that reach the kernel, as Polars decides on the Series it holds, or
 * on `many` (ctx->many_rows) for a chunk of a longer column. */
#define FLOAT_BY_ONE_VALUE(a, b, n, many) \
  ((b)->length == 1 && (a)->length == (n) && ((n) > 1 || (many)))

/* Integer +,-,* wrap as in Polars: compute in uint64_t and truncate. */
#define ARITH_KERNEL(T, op, a, b, out, nullbits, many)                                  \
  {                                                                                     \
    const T *A = (a)->values;                                                           \
    const T *B = (b)->values;                                                           \
    T *O = LADLE_COL_MUT(out, T);                                                       \
    int64_t len_ = (out)->length;                                                       \
    switch (op) {                                                                       \
      case LADLE_OP_ADD:                                                                \
        if (IS_FLOAT_T(T))                                                              \
          BCAST_LOOP(A, B, len_, O[i] = (T)(x + y));                                    \
        else                                                                            \
          BCAST_LOOP(A, B, len_, O[i] = (T)((uint64_t)x + (uint64_t)y));                \
        break;                                                                          \
      case LADLE_OP_SUB:                                                                \
        if (IS_FLOAT_T(T) && FLOAT_BY_ONE_VALUE(b, a, len_, many)) {                    \
          /* one value minus several: Polars negates several minus one value, so        \
           * 0.0 - 0.0 is -0.0 there */                                                 \
          T x_ = A[0];                                                                  \
          for (int64_t i = 0; i < len_; i++) O[i] = (T) - (T)(B[i] - x_);               \
        } else if (IS_FLOAT_T(T))                                                       \
          BCAST_LOOP(A, B, len_, O[i] = (T)(x - y));                                    \
        else                                                                            \
          BCAST_LOOP(A, B, len_, O[i] = (T)((uint64_t)x - (uint64_t)y));                \
        break;                                                                          \
      case LADLE_OP_MUL:                                                                \
        if (IS_FLOAT_T(T))                                                              \
          BCAST_LOOP(A, B, len_, O[i] = (T)(x * y));                                    \
        else                                                                            \
          BCAST_LOOP(A, B, len_, O[i] = (T)((uint64_t)x * (uint64_t)y));                \
        break;                                                                          \
      case LADLE_OP_TRUE_DIV:                                                           \
        /* Polars divides many floats by one value as a product with its                \
         * reciprocal (per-group aggregates by a literal); one by one is a quotient */  \
        if (IS_FLOAT_T(T) && FLOAT_BY_ONE_VALUE(a, b, len_, many)) {                    \
          T r_ = (T)((T)1 / B[0]);                                                      \
          for (int64_t i = 0; i < len_; i++) O[i] = (T)(A[i] * r_);                     \
        } else {                                                                        \
          BCAST_LOOP(A, B, len_, O[i] = (T)(x / (y == 0 && !IS_FLOAT_T(T) ? 1 : y)));   \
        }                                                                               \
        break;                                                                          \
      case LADLE_OP_FLOOR_DIV:                                                          \
        if (IS_FLOAT_T(T) && FLOAT_BY_ONE_VALUE(a, b, len_, many)) {                    \
          T y_ = B[0], inv_ = (T)((T)1 / y_);                                           \
          for (int64_t i = 0; i < len_; i++) O[i] = (T)floor((double)(T)(A[i] * inv_)); \
        } else if (IS_FLOAT_T(T)) {                                                     \
          BCAST_LOOP(A, B, len_, O[i] = (T)floor((double)(T)(x / y)));                  \
        } else {                                                                        \
          BCAST_LOOP(A, B, len_, {                                                      \
            if (y == 0) {                                                               \
              O[i] = 0;                                                                 \
              ladle_bit_set(nullbits, i, false);                                        \
            } else if (IS_SIGNED_T(T) && y == (T)-1) {                                  \
              O[i] = (T)(0 - (uint64_t)x);                                              \
            } else {                                                                    \
              T q = (T)(x / y);                                                         \
              if (IS_SIGNED_T(T) && (IMOD(T, x, y) != 0) && ((x < 0) != (y < 0))) q--;  \
              O[i] = q;                                                                 \
            }                                                                           \
          });                                                                           \
        }                                                                               \
        break;                                                                          \
      case LADLE_OP_MOD:                                                                \
        if (IS_FLOAT_T(T) && FLOAT_BY_ONE_VALUE(a, b, len_, many)) {                    \
          /* Polars' remainder by one value: x - y * floor(x * (1 / y)) */              \
          T y_ = B[0], inv_ = (T)((T)1 / y_);                                           \
          for (int64_t i = 0; i < len_; i++) {                                          \
            T q_ = (T)floor((double)(T)(A[i] * inv_));                                  \
            O[i] = (T)(A[i] - (T)(y_ * q_));                                            \
          }                                                                             \
        } else if (IS_FLOAT_T(T)) {                                                     \
          /* Polars' float remainder: x - floor(x / y) * y in T's precision */          \
          BCAST_LOOP(A, B, len_, {                                                      \
            T q_ = (T)floor((double)(T)(x / y));                                        \
            T p_ = (T)(q_ * y);                                                         \
            O[i] = (T)(x - p_);                                                         \
          });                                                                           \
        } else {                                                                        \
          BCAST_LOOP(A, B, len_, {                                                      \
            if (y == 0) {                                                               \
              O[i] = 0;                                                                 \
              ladle_bit_set(nullbits, i, false);                                        \
            } else if (IS_SIGNED_T(T) && y == (T)-1) {                                  \
              O[i] = 0;                                                                 \
            } else {                                                                    \
              T r = IMOD(T, x, y);                                                      \
              if (IS_SIGNED_T(T) && r != 0 && ((r < 0) != (y < 0))) r = (T)(r + y);     \
              O[i] = r;                                                                 \
            }                                                                           \
          });                                                                           \
        }                                                                               \
        break;                                                                          \
      default:                                                                          \
        break;                                                                          \
    }                                                                                   \
  }

#define CMP_KERNEL(T, op, a, b, out)                       \
  {                                                        \
    const T *A = (a)->values;                              \
    const T *B = (b)->values;                              \
    uint8_t *O = LADLE_COL_MUT(out, uint8_t);              \
    int64_t len_ = (out)->length;                          \
    if (IS_FLOAT_T(T)) {                                   \
      switch (op) {                                        \
        case LADLE_OP_EQ:                                  \
        case LADLE_OP_EQ_MISSING:                          \
          BCAST_LOOP(A, B, len_, O[i] = LADLE_FEQ(x, y));  \
          break;                                           \
        case LADLE_OP_NE:                                  \
        case LADLE_OP_NE_MISSING:                          \
          BCAST_LOOP(A, B, len_, O[i] = !LADLE_FEQ(x, y)); \
          break;                                           \
        case LADLE_OP_LT:                                  \
          BCAST_LOOP(A, B, len_, O[i] = LADLE_FLT(x, y));  \
          break;                                           \
        case LADLE_OP_LE:                                  \
          BCAST_LOOP(A, B, len_, O[i] = !LADLE_FLT(y, x)); \
          break;                                           \
        case LADLE_OP_GT:                                  \
          BCAST_LOOP(A, B, len_, O[i] = LADLE_FLT(y, x));  \
          break;                                           \
        case LADLE_OP_GE:                                  \
          BCAST_LOOP(A, B, len_, O[i] = !LADLE_FLT(x, y)); \
          break;                                           \
        default:                                           \
          break;                                           \
      }                                                    \
    } else {                                               \
      switch (op) {                                        \
        case LADLE_OP_EQ:                                  \
        case LADLE_OP_EQ_MISSING:                          \
          BCAST_LOOP(A, B, len_, O[i] = x == y);           \
          break;                                           \
        case LADLE_OP_NE:                                  \
        case LADLE_OP_NE_MISSING:                          \
          BCAST_LOOP(A, B, len_, O[i] = x != y);           \
          break;                                           \
        case LADLE_OP_LT:                                  \
          BCAST_LOOP(A, B, len_, O[i] = x < y);            \
          break;                                           \
        case LADLE_OP_LE:                                  \
          BCAST_LOOP(A, B, len_, O[i] = x <= y);           \
          break;                                           \
        case LADLE_OP_GT:                                  \
          BCAST_LOOP(A, B, len_, O[i] = x > y);            \
          break;                                           \
        case LADLE_OP_GE:                                  \
          BCAST_LOOP(A, B, len_, O[i] = x >= y);           \
          break;                                           \
        default:                                           \
          break;                                           \
      }                                                    \
    }                                                      \
  }

static bool cmp_result(int op, int c) {
  switch (op) {
    case LADLE_OP_EQ:
    case LADLE_OP_EQ_MISSING:
      return c == 0;
    case LADLE_OP_NE:
    case LADLE_OP_NE_MISSING:
      return c != 0;
    case LADLE_OP_LT:
      return c < 0;
    case LADLE_OP_LE:
      return c <= 0;
    case LADLE_OP_GT:
      return c > 0;
    default:
      return c >= 0;
  }
}

/* Whether string i of offsets o and bytes d equals the kl bytes at kp: the
 * lengths first, then the bytes (inline up to 16: flags like "R", modes like
 * "NONE"). */
static inline bool str_eq_at(const int64_t *o, const char *d, int64_t i, const char *kp,
                             int64_t kl) {
  int64_t l = o[i + 1] - o[i];
  if (l != kl) return false;
  const char *p = d + o[i];
  if (kl == 1) return p[0] == kp[0];
  if (kl <= 16) { /* short: inline, no call */
    for (int64_t j = 0; j < kl; j++)
      if (p[j] != kp[j]) return false;
    return true;
  }
  return memcmp(p, kp, (size_t)kl) == 0;
}

static ladle_status string_binary(int op, const ladle_column *a, const ladle_column *b, int64_t n,
                                  ladle_dtype out_type, ladle_column *out, ladle_error *err) {
  int64_t sa = a->length == 1 ? 0 : 1, sb = b->length == 1 ? 0 : 1;
  if (op == LADLE_OP_ADD) {
    int64_t chars = 0;
    for (int64_t i = 0; i < n; i++) chars += ladle_str_len(a, i * sa) + ladle_str_len(b, i * sb);
    LADLE_RETURN_NOT_OK(ladle_column_alloc(out_type, n, false, chars, out, err));
    int64_t *o = LADLE_COL_MUT(out, int64_t), pos = 0;
    char *d = LADLE_COL_CHARS_MUT(out);
    for (int64_t i = 0; i < n; i++) {
      int64_t la = ladle_str_len(a, i * sa), lb = ladle_str_len(b, i * sb);
      memcpy(d + pos, ladle_str_ptr(a, i * sa), (size_t)la);
      memcpy(d + pos + la, ladle_str_ptr(b, i * sb), (size_t)lb);
      pos += la + lb;
      o[i + 1] = pos;
    }
    return LADLE_OK;
  }
  LADLE_RETURN_NOT_OK(ladle_column_alloc(out_type, n, false, 0, out, err));
  uint8_t *o = LADLE_COL_MUT(out, uint8_t);
  if (op == LADLE_OP_EQ || op == LADLE_OP_NE || op == LADLE_OP_EQ_MISSING ||
      op == LADLE_OP_NE_MISSING) {
    /* (in)equality: no order needed, so the lengths decide most rows */
    uint8_t want = op == LADLE_OP_EQ || op == LADLE_OP_EQ_MISSING;
    const int64_t *oa = a->values;
    if (sa == 0 || sb == 0) {
      const ladle_column *v = sa == 0 ? b : a, *k = sa == 0 ? a : b;
      const int64_t *ov = v->values;
      const char *kp = ladle_str_ptr(k, 0);
      int64_t kl = ladle_str_len(k, 0);
      for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)(str_eq_at(ov, v->chars, i, kp, kl) == want);
    } else {
      for (int64_t i = 0; i < n; i++)
        o[i] =
            (uint8_t)(str_eq_at(oa, a->chars, i, ladle_str_ptr(b, i), ladle_str_len(b, i)) == want);
    }
    return LADLE_OK;
  }
  for (int64_t i = 0; i < n; i++) o[i] = cmp_result(op, ladle_str_cmp(a, i * sa, b, i * sb));
  return LADLE_OK;
}

static ladle_status logic_binary(int op, const ladle_column *a, const ladle_column *b, int64_t n,
                                 ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n,
                                         a->validity || b->validity, 0, out, err));
  const uint8_t *A = a->values, *B = b->values;
  uint8_t *O = LADLE_COL_MUT(out, uint8_t);
  if (a->validity == NULL && b->validity == NULL) {
    if (op == LADLE_OP_AND)
      BCAST_LOOP(A, B, n, O[i] = x & y);
    else if (op == LADLE_OP_OR)
      BCAST_LOOP(A, B, n, O[i] = x | y);
    else
      BCAST_LOOP(A, B, n, O[i] = x ^ y);
    return LADLE_OK;
  }
  uint8_t *bits = LADLE_COL_VALIDITY_MUT(out);
  int64_t sa = a->length == 1 ? 0 : 1, sb = b->length == 1 ? 0 : 1;
  /* eight rows a step, on bit masks: values packed to bits, validity bytes
   * as they are (a bitmap starts at bit 0), Kleene's rules as bit logic; a
   * one-row operand is the same mask every step */
  const uint8_t ca = !sa && A[0] ? 0xff : 0, cb = !sb && B[0] ? 0xff : 0;
  const uint8_t cva = !sa && ladle_cpu_valid_at(a, 0) ? 0xff : 0;
  const uint8_t cvb = !sb && ladle_cpu_valid_at(b, 0) ? 0xff : 0;
  int64_t full = n / 8 * 8;
  for (int64_t i = 0; i < full; i += 8) {
    uint8_t x = ca, y = cb, va = 0xff, vb = 0xff;
    if (sa) {
      x = 0;
      for (int k = 0; k < 8; k++) x |= (uint8_t)((A[i + k] != 0) << k);
      if (a->validity != NULL) va = a->validity[i >> 3];
    } else {
      va = cva;
    }
    if (sb) {
      y = 0;
      for (int k = 0; k < 8; k++) y |= (uint8_t)((B[i + k] != 0) << k);
      if (b->validity != NULL) vb = b->validity[i >> 3];
    } else {
      vb = cvb;
    }
    uint8_t r, v;
    if (op == LADLE_OP_AND) {
      uint8_t f = (uint8_t)((va & ~x) | (vb & ~y)); /* a valid false decides */
      r = (uint8_t)~f;
      v = (uint8_t)(f | (va & vb));
    } else if (op == LADLE_OP_OR) {
      uint8_t t = (uint8_t)((va & x) | (vb & y)); /* a valid true decides */
      r = t;
      v = (uint8_t)(t | (va & vb));
    } else {
      r = (uint8_t)(x ^ y);
      v = (uint8_t)(va & vb);
    }
    for (int k = 0; k < 8; k++) O[i + k] = (uint8_t)((r >> k) & 1);
    bits[i >> 3] = v;
  }
  for (int64_t i = full; i < n; i++) {
    bool va = ladle_cpu_valid_at(a, i), vb = ladle_cpu_valid_at(b, i);
    uint8_t x = A[i * sa], y = B[i * sb];
    bool valid;
    uint8_t r;
    if (op == LADLE_OP_AND) {
      if ((va && !x) || (vb && !y)) {
        r = 0;
        valid = true;
      } else {
        r = 1;
        valid = va && vb;
      }
    } else if (op == LADLE_OP_OR) {
      if ((va && x) || (vb && y)) {
        r = 1;
        valid = true;
      } else {
        r = 0;
        valid = va && vb;
      }
    } else {
      r = x ^ y;
      valid = va && vb;
    }
    O[i] = r;
    ladle_bit_set(bits, i, valid);
  }
  ladle_column_finish_nulls(out);
  return LADLE_OK;
}

/* Date (days) as microseconds, as Polars converts a Date before temporal
 * arithmetic; false when that overflows int64 (beyond +-292,000 years). */
static bool date_us(int32_t days, int64_t *us) {
  return !__builtin_mul_overflow((int64_t)days, (int64_t)86400000000, us);
}

/* Date +/- Duration (in us or ms; the binder brought ns to us), as Polars:
 * the date in microseconds (null past int64), for a ms duration then in
 * milliseconds, plus the duration with wrapping, floored to whole days (null
 * past Int32's days). False: null. */
static inline bool date_plus_one(int op, bool ms, int32_t x, int64_t y, int32_t *out) {
  int64_t t, d = INT64_MAX;
  if (date_us(x, &t)) {
    if (ms) t /= 1000; /* exact: whole days */
    uint64_t r = op == LADLE_OP_ADD ? (uint64_t)t + (uint64_t)y : (uint64_t)t - (uint64_t)y;
    d = ladle_floor_div((int64_t)r, ms ? 86400000 : 86400000000);
  }
  bool ok = d >= INT32_MIN && d <= INT32_MAX;
  *out = ok ? (int32_t)d : 0;
  return ok;
}

/* Date - Date: a Duration in microseconds, each date converted first (null
 * past int64), the difference wrapping (as Polars). False: null. */
static inline bool date_minus_one(int32_t x, int32_t y, int64_t *out) {
  int64_t tx, ty;
  bool ok = date_us(x, &tx) && date_us(y, &ty);
  *out = ok ? (int64_t)((uint64_t)tx - (uint64_t)ty) : 0;
  return ok;
}

/* Both over columns; nb: the output's validity, cleared where null. */
static void date_plus_duration(int op, const ladle_column *a, const ladle_column *b, int64_t n,
                               int32_t *O, uint8_t *nb) {
  const int32_t *A = a->values;
  const int64_t *B = b->values;
  bool ms = b->type.unit == LADLE_TIME_MS;
  BCAST_LOOP(A, B, n, if (!date_plus_one(op, ms, x, y, &O[i])) ladle_bit_set(nb, i, false));
}

static void date_minus_date(const ladle_column *a, const ladle_column *b, int64_t n, int64_t *O,
                            uint8_t *nb) {
  const int32_t *A = a->values, *B = b->values;
  BCAST_LOOP(A, B, n, if (!date_minus_one(x, y, &O[i])) ladle_bit_set(nb, i, false));
}

/* INT128 as stored in a column: only 8-aligned when it comes from Arrow. */
typedef __int128 i128_slot __attribute__((aligned(8)));

/* INT128 +, -, * wrap; // and % floor, null for a zero divisor, x // -1
 * wrapping and x % -1 zero (as Polars); comparisons in integer order. The
 * output is allocated; nb: its validity, present for // and %. */
static void int128_binary(int op, const ladle_column *a, const ladle_column *b, ladle_column *o,
                          uint8_t *nb) {
  const i128_slot *A = a->values, *B = b->values;
  int64_t n = o->length;
  typedef unsigned __int128 u128;
  if (op >= LADLE_OP_EQ && op <= LADLE_OP_NE_MISSING) {
    uint8_t *O = LADLE_COL_MUT(o, uint8_t);
    BCAST_LOOP(A, B, n, O[i] = cmp_result(op, (x > y) - (x < y)));
    return;
  }
  i128_slot *O = LADLE_COL_MUT(o, i128_slot);
  switch (op) {
    case LADLE_OP_ADD:
      BCAST_LOOP(A, B, n, O[i] = (__int128)((u128)x + (u128)y));
      break;
    case LADLE_OP_SUB:
      BCAST_LOOP(A, B, n, O[i] = (__int128)((u128)x - (u128)y));
      break;
    case LADLE_OP_MUL:
      BCAST_LOOP(A, B, n, O[i] = (__int128)((u128)x * (u128)y));
      break;
    case LADLE_OP_FLOOR_DIV:
    case LADLE_OP_MOD:
      BCAST_LOOP(A, B, n, {
        __int128 q = 0;
        __int128 r = 0;
        if (y == 0) {
          ladle_bit_set(nb, i, false);
        } else if (y == -1) {
          q = (__int128)((u128)0 - (u128)x);
        } else {
          q = x / y;
          r = x % y;
          if (r != 0 && ((r < 0) != (y < 0))) {
            q--;
            r += y;
          }
        }
        O[i] = op == LADLE_OP_MOD ? r : q;
      });
      break;
    default:
      break;
  }
}

ladle_status ladle_cpu_binary(const ladle_kctx *ctx, int op, const ladle_column *a,
                              const ladle_column *b, ladle_dtype out_type, ladle_column *out,
                              ladle_error *err) {
  int64_t n = LADLE_MAX(a->length, b->length);
  if (a->length == 0 || b->length == 0) n = 0;
  if (op == LADLE_OP_AND || op == LADLE_OP_OR || op == LADLE_OP_XOR)
    return logic_binary(op, a, b, n, out, err);
  bool missing = op == LADLE_OP_EQ_MISSING || op == LADLE_OP_NE_MISSING;
  ladle_column o;
  memset(&o, 0, sizeof o);
  ladle_status st;
  if (a->type.id == LADLE_TYPE_NULL || b->type.id == LADLE_TYPE_NULL) {
    if (!missing) return ladle_column_nulls(out_type, n, out, err);
    /* eq_missing against an all-null side: true exactly where the other is null */
    const ladle_column *other = a->type.id == LADLE_TYPE_NULL ? b : a;
    LADLE_RETURN_NOT_OK(ladle_column_alloc(out_type, n, false, 0, &o, err));
    for (int64_t i = 0; i < n; i++) {
      bool isnull = other->type.id == LADLE_TYPE_NULL || !ladle_cpu_valid_at(other, i);
      LADLE_COL_MUT(&o, uint8_t)[i] = (op == LADLE_OP_EQ_MISSING) == isnull;
    }
    *out = o;
    return LADLE_OK;
  }
  if (a->type.id == LADLE_TYPE_STRING) {
    st = string_binary(op, a, b, n, out_type, &o, err);
  } else if (a->type.id == LADLE_TYPE_DATE && b->type.id == LADLE_TYPE_DURATION) {
    st = ladle_column_alloc(out_type, n, true, 0, &o, err);
    if (st == LADLE_OK)
      date_plus_duration(op, a, b, n, LADLE_COL_MUT(&o, int32_t), LADLE_COL_VALIDITY_MUT(&o));
  } else if (a->type.id == LADLE_TYPE_DATE && out_type.id == LADLE_TYPE_DURATION) {
    st = ladle_column_alloc(out_type, n, true, 0, &o, err);
    if (st == LADLE_OK)
      date_minus_date(a, b, n, LADLE_COL_MUT(&o, int64_t), LADLE_COL_VALIDITY_MUT(&o));
  } else if (a->type.id == LADLE_TYPE_INT128 && b->type.id == LADLE_TYPE_INT128) {
    st = ladle_column_alloc(out_type, n, false, 0, &o, err);
    if (st == LADLE_OK && (op == LADLE_OP_FLOOR_DIV || op == LADLE_OP_MOD))
      st = ladle_column_add_validity(&o, err);
    if (st == LADLE_OK) int128_binary(op, a, b, &o, LADLE_COL_VALIDITY_MUT(&o));
  } else {
    bool cmp = op >= LADLE_OP_EQ && op <= LADLE_OP_NE_MISSING;
    st = ladle_column_alloc(out_type, n, false, 0, &o, err);
    if (st == LADLE_OK && !cmp && (op == LADLE_OP_FLOOR_DIV || op == LADLE_OP_MOD) &&
        ladle_type_is_integer(ladle_type_is_temporal(a->type.id) ? LADLE_TYPE_INT64 : a->type.id))
      st = ladle_column_add_validity(&o, err);
    if (st == LADLE_OK) {
      ladle_phys ph = ladle_type_phys(a->type.id);
      uint8_t *nb = LADLE_COL_VALIDITY_MUT(&o);
      bool many = ctx != NULL && ctx->many_rows;
      if (cmp) {
        LADLE_DISPATCH_NUM(ph, CMP_KERNEL, op, a, b, &o)
      } else {
        LADLE_DISPATCH_NUM(ph, ARITH_KERNEL, op, a, b, &o, nb, many)
      }
    }
  }
  if (st != LADLE_OK) return st;
  if (missing) {
    /* null-aware equality: both null -> equal, one null -> not equal */
    if (a->validity || b->validity) {
      uint8_t *O = LADLE_COL_MUT(&o, uint8_t);
      for (int64_t i = 0; i < n; i++) {
        bool va = ladle_cpu_valid_at(a, i), vb = ladle_cpu_valid_at(b, i);
        if (!va || !vb) O[i] = (op == LADLE_OP_EQ_MISSING) == (!va && !vb);
      }
    }
    *out = o;
    return LADLE_OK;
  }
  if (o.validity != NULL) {
    /* kernel-made nulls (x // 0) combine with input nulls */
    uint8_t *bits = LADLE_COL_VALIDITY_MUT(&o);
    for (int64_t i = 0; i < n; i++)
      if (!ladle_cpu_valid_at(a, i) || !ladle_cpu_valid_at(b, i)) ladle_bit_set(bits, i, false);
  } else {
    st = ladle_cpu_merge_validity(a, b, &o, err);
    if (st != LADLE_OK) {
      ladle_column_release(&o);
      return st;
    }
  }
  ladle_column_finish_nulls(&o);
  *out = o;
  return LADLE_OK;
}

/* keep[i] (&)= in[i] op y: one pass per comparison, written so the compiler
 * vectorizes it (the result is 0/1 and the AND is bitwise). */
#define CMP_INTO(T, op, in, k, init, keep)                                \
  {                                                                       \
    const T *X = (in)->values;                                            \
    const T y = ((const T *)(k)->values)[0];                              \
    int64_t n_ = (in)->length;                                            \
    switch (op) {                                                         \
      case LADLE_OP_EQ:                                                   \
        CMP_INTO_LOOP(T, init, keep, n_, X, y, LADLE_FEQ(x, y), x == y);  \
        break;                                                            \
      case LADLE_OP_NE:                                                   \
        CMP_INTO_LOOP(T, init, keep, n_, X, y, !LADLE_FEQ(x, y), x != y); \
        break;                                                            \
      case LADLE_OP_LT:                                                   \
        CMP_INTO_LOOP(T, init, keep, n_, X, y, LADLE_FLT(x, y), x < y);   \
        break;                                                            \
      case LADLE_OP_LE:                                                   \
        CMP_INTO_LOOP(T, init, keep, n_, X, y, !LADLE_FLT(y, x), x <= y); \
        break;                                                            \
      case LADLE_OP_GT:                                                   \
        CMP_INTO_LOOP(T, init, keep, n_, X, y, LADLE_FLT(y, x), x > y);   \
        break;                                                            \
      default:                                                            \
        CMP_INTO_LOOP(T, init, keep, n_, X, y, !LADLE_FLT(x, y), x >= y); \
        break;                                                            \
    }                                                                     \
  }
#define CMP_INTO_LOOP(T, init, keep, n, X, y, FCMP, ICMP) \
  do {                                                    \
    if (IS_FLOAT_T(T)) {                                  \
      if (init)                                           \
        for (int64_t i = 0; i < (n); i++) {               \
          T x = X[i];                                     \
          keep[i] = (uint8_t)(FCMP);                      \
        }                                                 \
      else                                                \
        for (int64_t i = 0; i < (n); i++) {               \
          T x = X[i];                                     \
          keep[i] &= (uint8_t)(FCMP);                     \
        }                                                 \
    } else {                                              \
      if (init)                                           \
        for (int64_t i = 0; i < (n); i++) {               \
          T x = X[i];                                     \
          keep[i] = (uint8_t)(ICMP);                      \
        }                                                 \
      else                                                \
        for (int64_t i = 0; i < (n); i++) {               \
          T x = X[i];                                     \
          keep[i] &= (uint8_t)(ICMP);                     \
        }                                                 \
    }                                                     \
  } while (0)

/* keep[i] (&)= string i op the constant k: equality by length first, then
 * the bytes (one byte compared inline: a flag column like "R"). */
static void compare_strings_into(int op, const ladle_column *in, const ladle_column *k, bool init,
                                 uint8_t *keep) {
  const int64_t *o = in->values;
  const char *kp = ladle_str_ptr(k, 0);
  int64_t kl = ladle_str_len(k, 0), n = in->length;
  if (op == LADLE_OP_EQ || op == LADLE_OP_NE) {
    uint8_t want = op == LADLE_OP_EQ;
    for (int64_t i = 0; i < n; i++) {
      uint8_t r = (uint8_t)(str_eq_at(o, in->chars, i, kp, kl) == want);
      keep[i] = init ? r : (uint8_t)(keep[i] & r);
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    uint8_t r = cmp_result(op, ladle_str_cmp(in, i, k, 0));
    keep[i] = init ? r : (uint8_t)(keep[i] & r);
  }
}

ladle_status ladle_cpu_compare_into(const ladle_kctx *ctx, int op, const ladle_column *in,
                                    const ladle_column *k, bool init, uint8_t *keep,
                                    ladle_error *err) {
  LADLE_UNUSED(ctx);
  ladle_phys ph = ladle_type_phys(in->type.id);
  if (in->type.id == LADLE_TYPE_STRING && k->type.id == LADLE_TYPE_STRING && k->length == 1 &&
      ladle_column_valid(k, 0) && op >= LADLE_OP_EQ && op <= LADLE_OP_GE) {
    compare_strings_into(op, in, k, init, keep);
  } else if (op < LADLE_OP_EQ || op > LADLE_OP_GE || k->length != 1 || !ladle_column_valid(k, 0) ||
             k->type.id != in->type.id || ph == LADLE_PHYS_NULL || ph == LADLE_PHYS_STR ||
             in->type.id == LADLE_TYPE_BOOL) {
    return ladle_err_set(err, LADLE_ENOTSUP, "compare_into: unsupported operands");
  } else {
    LADLE_DISPATCH_NUM(ph, CMP_INTO, op, in, k, init, keep)
  }
  if (in->validity != NULL) ladle_bitmap_and_bytes(in->validity, in->length, false, false, keep);
  return LADLE_OK;
}

ladle_status ladle_cpu_valid_into(const ladle_kctx *ctx, const ladle_column *in, bool negate,
                                  bool init, uint8_t *keep, ladle_error *err) {
  LADLE_UNUSED(ctx);
  if (in->type.id == LADLE_TYPE_NULL)
    return ladle_err_set(err, LADLE_ENOTSUP, "valid_into: a column of type null");
  int64_t n = in->length;
  if (in->validity != NULL)
    ladle_bitmap_and_bytes(in->validity, n, negate, init, keep);
  else if (negate) /* is_null of a column without nulls: no row */
    memset(keep, 0, (size_t)n);
  else if (init)
    memset(keep, 1, (size_t)n);
  return LADLE_OK;
}
