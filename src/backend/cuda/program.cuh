/* program.cuh — device functions shared by the CUDA backend's kernels
 * (kernels.cu, groupby.cu): validity bits, Polars' float order, and a row
 * program's evaluation at one row (eval_row), values as 64-bit slots. */
#ifndef LADLE_CUDA_PROGRAM_CUH
#define LADLE_CUDA_PROGRAM_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "kernels.h"

namespace {

constexpr int kBlock = 256; /* threads per block of a grid-stride kernel */

/* blocks of a grid-stride kernel over n rows */
inline int grid_for(int64_t n) {
  int64_t g = (n + kBlock - 1) / kBlock;
  return (int)(g < 1 ? 1 : (g > 65535 * 32 ? 65535 * 32 : g));
}

/* a[i] = i for i < n: row numbers */
template <typename T>
__global__ void iota_kernel(T *a, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    a[i] = (T)i;
}

__device__ __forceinline__ bool bit(const uint8_t *bits, int64_t i) {
  return bits == nullptr || ((bits[i >> 3] >> (i & 7)) & 1);
}

/* Kleene's and/or of x and y (xv, yv: their validity): false and anything
 * is false, true or anything is true, else null where a side is. The value
 * (false where null), its validity in *valid. */
__device__ __forceinline__ bool kleene(bool is_and, bool xv, bool x, bool yv, bool y, bool *valid) {
  x = xv && x;
  y = yv && y;
  bool r;
  if (is_and) {
    r = x && y;
    *valid = (xv && yv) || (xv && !x) || (yv && !y);
  } else {
    r = x || y;
    *valid = (xv && yv) || x || y;
  }
  return *valid && r;
}

/* NaN as Polars orders it: equal to itself, above every number. */
template <typename T>
__device__ __forceinline__ bool feq(T x, T y) {
  return x == y || (x != x && y != y);
}
template <typename T>
__device__ __forceinline__ bool flt(T x, T y) {
  return x < y || (x == x && y != y);
}
/* ---- row programs: one pass over the rows, values in registers ---- */

template <typename T>
__device__ __forceinline__ T from_slot(uint64_t s) {
  T t;
  memcpy(&t, &s, sizeof(T));
  return t;
}
template <typename T>
__device__ __forceinline__ uint64_t to_slot(T t) {
  uint64_t s = 0;
  memcpy(&s, &t, sizeof(T));
  return s;
}

/* x op y for operands of type T, as binary_kernel computes it */
template <typename T>
__device__ __forceinline__ uint64_t op_as(int op, uint64_t xs, uint64_t ys) {
  constexpr bool kFloat = std::is_floating_point<T>::value;
  T x = from_slot<T>(xs), y = from_slot<T>(ys);
  switch (op) {
    case LDC_EQ:
      return feq(x, y);
    case LDC_NE:
      return !feq(x, y);
    case LDC_LT:
      return flt(x, y);
    case LDC_LE:
      return !flt(y, x);
    case LDC_GT:
      return flt(y, x);
    case LDC_GE:
      return !flt(x, y);
    case LDC_ADD:
      return to_slot<T>(kFloat ? x + y : (T)((unsigned long long)x + (unsigned long long)y));
    case LDC_SUB:
      return to_slot<T>(kFloat ? x - y : (T)((unsigned long long)x - (unsigned long long)y));
    case LDC_NEG_SUB:
      return to_slot<T>((T)(-(y - x)));
    case LDC_DIV:
      return to_slot<T>((T)(x / y));
    case LDC_DIV_RECIP:
      return to_slot<T>((T)(x * (T(1) / y)));
    case LDC_MOD:
    case LDC_FLOOR_DIV:
      if constexpr (kFloat) {
        return 0; /* integers only (cuda_binary_supports) */
      } else {
        if (y == 0) return 0; /* null (op_valid) */
        if constexpr (std::is_signed<T>::value) {
          /* by -1: no overflow at the type's minimum (x / -1 wraps) */
          if (y == T(-1))
            return to_slot<T>(op == LDC_MOD ? T(0) : (T)(0ULL - (unsigned long long)x));
        }
        T q = (T)(x / y), r = (T)(x % y);
        if constexpr (std::is_signed<T>::value) {
          if (r != 0 && ((r < 0) != (y < 0))) { /* floored: towards the divisor's sign */
            q = (T)(q - 1);
            r = (T)(r + y);
          }
        }
        return to_slot<T>(op == LDC_MOD ? r : q);
      }
    default:
      return to_slot<T>(kFloat ? x * y : (T)((unsigned long long)x * (unsigned long long)y));
  }
}

/* Whether x op y has a value where both operands do: not an integer
 * remainder or floored quotient by 0 (null, as Polars). */
__device__ __forceinline__ bool op_valid(int op, uint64_t y) {
  return (op != LDC_MOD && op != LDC_FLOOR_DIV) || y != 0;
}

__device__ __forceinline__ uint64_t op_kind(int kind, int op, uint64_t x, uint64_t y) {
  switch (kind) {
    case LDC_U8:
      return op_as<uint8_t>(op, x, y);
    case LDC_I8:
      return op_as<int8_t>(op, x, y);
    case LDC_I16:
      return op_as<int16_t>(op, x, y);
    case LDC_U16:
      return op_as<uint16_t>(op, x, y);
    case LDC_I32:
      return op_as<int32_t>(op, x, y);
    case LDC_U32:
      return op_as<uint32_t>(op, x, y);
    case LDC_I64:
      return op_as<int64_t>(op, x, y);
    case LDC_U64:
      return op_as<uint64_t>(op, x, y);
    case LDC_F32:
      return op_as<float>(op, x, y);
    default:
      return op_as<double>(op, x, y);
  }
}

/* A number's 64-bit key in sort order (sort.cu, partition.cu; sort.c's
 * codes): unsigned values as they are, signed ones with the sign bit
 * flipped, floats by their bits flipped so that they order as numbers, NaN
 * after everything, -0.0 as 0.0 (kind: an ldc_num) */
__device__ __forceinline__ uint64_t norm_key(int kind, const void *v, int64_t i) {
  switch (kind) {
    case LDC_U8:
      return ((const uint8_t *)v)[i];
    case LDC_U16:
      return ((const uint16_t *)v)[i];
    case LDC_U32:
      return ((const uint32_t *)v)[i];
    case LDC_U64:
      return ((const uint64_t *)v)[i];
    case LDC_I8:
      return (uint64_t)(int64_t)((const int8_t *)v)[i] ^ (1ull << 63);
    case LDC_I16:
      return (uint64_t)(int64_t)((const int16_t *)v)[i] ^ (1ull << 63);
    case LDC_I32:
      return (uint64_t)(int64_t)((const int32_t *)v)[i] ^ (1ull << 63);
    case LDC_I64:
      return (uint64_t)((const int64_t *)v)[i] ^ (1ull << 63);
    default: {
      double d = kind == LDC_F32 ? (double)((const float *)v)[i] : ((const double *)v)[i];
      if (d != d) return ~0ull; /* NaN after everything */
      if (d == 0) d = 0.0;
      uint64_t b = (uint64_t)__double_as_longlong(d);
      return (b >> 63) ? ~b : b | (1ull << 63);
    }
  }
}

__device__ __forceinline__ uint64_t load_kind(int kind, const void *col, int64_t i) {
  switch (kind) {
    case LDC_U8:
    case LDC_I8:
      return ((const uint8_t *)col)[i];
    case LDC_I16:
    case LDC_U16:
      return ((const uint16_t *)col)[i];
    case LDC_I32:
    case LDC_U32:
    case LDC_F32:
      return ((const uint32_t *)col)[i];
    default:
      return ((const uint64_t *)col)[i];
  }
}

__device__ __forceinline__ void store_kind(int kind, void *out, int64_t i, uint64_t v) {
  switch (kind) {
    case LDC_U8:
    case LDC_I8:
      ((uint8_t *)out)[i] = (uint8_t)v;
      break;
    case LDC_I16:
    case LDC_U16:
      ((uint16_t *)out)[i] = (uint16_t)v;
      break;
    case LDC_I32:
    case LDC_U32:
    case LDC_F32:
      ((uint32_t *)out)[i] = (uint32_t)v;
      break;
    default:
      ((uint64_t *)out)[i] = v;
  }
}

/* A Date's calendar field f (LDC_F_YEAR ...) of day count v: as the CPU's
 * dt functions (Polars' calendar: null outside chrono's range; the weekday
 * from Polars' 32-bit (v - 4)) */
__device__ __forceinline__ void date_field(int f, int32_t v, uint64_t *r, bool *rv) {
  int64_t days = v;
  if (f == LDC_F_WEEKDAY) {
    days = (int64_t)(int32_t)((uint32_t)v - 4u) + 4;
    *r = to_slot<int8_t>((int8_t)(((days % 7) + 7 + 3) % 7 + 1));
    return;
  }
  if (days < -96465292 || days > 95026236) { /* chrono's first and last days */
    *rv = false;
    *r = 0;
    return;
  }
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  unsigned d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  int64_t y = (int64_t)yoe + era * 400 + (m <= 2);
  if (f == LDC_F_YEAR) {
    *r = to_slot<int32_t>((int32_t)y);
  } else if (f == LDC_F_MONTH) {
    *r = to_slot<int8_t>((int8_t)m);
  } else if (f == LDC_F_DAY) {
    *r = to_slot<int8_t>((int8_t)d);
  } else { /* the day of the year: days since January 1st, from 1 */
    int64_t y1 = y - 1, era1 = (y1 >= 0 ? y1 : y1 - 399) / 400;
    unsigned yoe1 = (unsigned)(y1 - era1 * 400);
    unsigned doe1 = yoe1 * 365 + yoe1 / 4 - yoe1 / 100 + 306; /* March 1st of y - 1 + 306 */
    int64_t jan1 = era1 * 146097 + (int64_t)doe1 - 719468;
    *r = to_slot<int16_t>((int16_t)(days - jan1 + 1));
  }
}

/* f of x (a value of type T; y: fill_null's value), into *r and *rv */
template <typename T>
__device__ __forceinline__ void func_as(int f, uint64_t xs, bool xv, uint64_t ys, bool yv,
                                        uint64_t *r, bool *rv) {
  constexpr bool kFloat = std::is_floating_point<T>::value;
  T x = from_slot<T>(xs);
  *rv = xv;
  switch (f) {
    case LDC_F_NOT:
      *r = xs == 0;
      break;
    case LDC_F_NEG:
      *r = to_slot<T>(kFloat ? -x : (T)(0ULL - (unsigned long long)x));
      break;
    case LDC_F_ABS:
      if (kFloat) /* the sign bit cleared, as Polars (abs(-0.0) is 0.0) */
        *r = xs & (sizeof(T) == 4 ? 0x7fffffffULL : 0x7fffffffffffffffULL);
      else
        *r = to_slot<T>(std::is_signed<T>::value && xs >> (8 * sizeof(T) - 1) & 1
                            ? (T)(0ULL - (unsigned long long)x)
                            : x);
      break;
    case LDC_F_IS_NULL:
      *r = !xv;
      *rv = true;
      break;
    case LDC_F_IS_NOT_NULL:
      *r = xv;
      *rv = true;
      break;
    case LDC_F_IS_NAN:
      *r = x != x;
      break;
    case LDC_F_IS_NOT_NAN:
      *r = x == x;
      break;
    case LDC_F_FILL_NULL:
      *r = xv ? xs : ys;
      *rv = xv || yv;
      break;
    case LDC_F_SQRT:
      if constexpr (kFloat)
        *r = to_slot<T>(sqrt(x)); /* IEEE square root: NaN below zero, -0.0 kept */
      else
        *r = 0;
      break;
    default: /* a Date's fields: T is its int32 */
      *r = 0;
      if (xv) date_field(f, (int32_t)x, r, rv);
  }
}

__device__ __forceinline__ void func_kind(int kind, int f, uint64_t x, bool xv, uint64_t y, bool yv,
                                          uint64_t *r, bool *rv) {
  switch (kind) {
    case LDC_U8:
      return func_as<uint8_t>(f, x, xv, y, yv, r, rv);
    case LDC_I8:
      return func_as<int8_t>(f, x, xv, y, yv, r, rv);
    case LDC_I16:
      return func_as<int16_t>(f, x, xv, y, yv, r, rv);
    case LDC_U16:
      return func_as<uint16_t>(f, x, xv, y, yv, r, rv);
    case LDC_I32:
      return func_as<int32_t>(f, x, xv, y, yv, r, rv);
    case LDC_U32:
      return func_as<uint32_t>(f, x, xv, y, yv, r, rv);
    case LDC_I64:
      return func_as<int64_t>(f, x, xv, y, yv, r, rv);
    case LDC_U64:
      return func_as<uint64_t>(f, x, xv, y, yv, r, rv);
    case LDC_F32:
      return func_as<float>(f, x, xv, y, yv, r, rv);
    default:
      return func_as<double>(f, x, xv, y, yv, r, rv);
  }
}

/* x of type F as type T (a cast no value fails: the caller chose it) */
template <typename F>
__device__ __forceinline__ uint64_t cast_from(int to, uint64_t xs) {
  F x = from_slot<F>(xs);
  switch (to) {
    case LDC_U8:
      return to_slot<uint8_t>((uint8_t)x);
    case LDC_I8:
      return to_slot<int8_t>((int8_t)x);
    case LDC_I16:
      return to_slot<int16_t>((int16_t)x);
    case LDC_U16:
      return to_slot<uint16_t>((uint16_t)x);
    case LDC_I32:
      return to_slot<int32_t>((int32_t)x);
    case LDC_U32:
      return to_slot<uint32_t>((uint32_t)x);
    case LDC_I64:
      return to_slot<int64_t>((int64_t)x);
    case LDC_U64:
      return to_slot<uint64_t>((uint64_t)x);
    case LDC_F32:
      return to_slot<float>((float)x);
    default:
      return to_slot<double>((double)x);
  }
}

__device__ __forceinline__ uint64_t cast_kind(int from, int to, uint64_t x) {
  switch (from) {
    case LDC_U8:
      return cast_from<uint8_t>(to, x);
    case LDC_I8:
      return cast_from<int8_t>(to, x);
    case LDC_I16:
      return cast_from<int16_t>(to, x);
    case LDC_U16:
      return cast_from<uint16_t>(to, x);
    case LDC_I32:
      return cast_from<int32_t>(to, x);
    case LDC_U32:
      return cast_from<uint32_t>(to, x);
    case LDC_I64:
      return cast_from<int64_t>(to, x);
    case LDC_U64:
      return cast_from<uint64_t>(to, x);
    case LDC_F32:
      return cast_from<float>(to, x);
    default:
      return cast_from<double>(to, x);
  }
}

/* Row i of program p (its instructions in `ins`, a block's shared copy):
 * the last instruction's value bits and validity. Each value lives in a
 * thread's local array; the first instructions are loads. */
static_assert(LDC_PROG_MAX <= 64, "eval_row keeps the values' validity in 64 bits");

__device__ __forceinline__ void eval_row(const ldc_ins *ins, const ldc_prog &p, int64_t i,
                                         uint64_t *out, bool *out_valid) {
  uint64_t v[LDC_PROG_MAX];
  uint64_t ok = 0; /* bit k: value k is valid */
  for (int k = 0; k < p.n; k++) {
    const ldc_ins in = ins[k];
    uint64_t r;
    bool rv;
    if (in.code == LDC_I_COL) {
      r = load_kind(in.kind, p.col[in.a], i);
      rv = bit(p.colv[in.a], i);
    } else if (in.code == LDC_I_CONST) {
      r = in.cbits;
      rv = in.cvalid != 0;
    } else if (in.code == LDC_I_FUNC) {
      bool xv = (ok >> in.a) & 1, yv = (ok >> in.b) & 1;
      func_kind(in.kind, in.op, v[in.a], xv, v[in.b], yv, &r, &rv);
    } else if (in.code == LDC_I_IF) {
      bool take = ((ok >> in.a) & 1) && v[in.a] != 0;
      int from = take ? in.b : in.c;
      r = v[from];
      rv = (ok >> from) & 1;
    } else if (in.code == LDC_I_WHERE) {
      r = v[in.b];
      rv = ((ok >> in.a) & 1) && v[in.a] != 0 && ((ok >> in.b) & 1);
    } else if (in.code == LDC_I_CAST) {
      r = cast_kind(in.kind, in.op, v[in.a]);
      rv = (ok >> in.a) & 1;
    } else {
      bool xv = (ok >> in.a) & 1, yv = (ok >> in.b) & 1;
      if (in.op == LDC_AND || in.op == LDC_OR) {
        r = kleene(in.op == LDC_AND, xv, v[in.a] != 0, yv, v[in.b] != 0, &rv);
      } else {
        r = op_kind(in.kind, in.op, v[in.a], v[in.b]);
        rv = xv && yv && op_valid(in.op, v[in.b]);
      }
    }
    v[k] = r;
    ok |= (uint64_t)rv << k;
  }
  *out = v[p.n - 1];
  *out_valid = (ok >> (p.n - 1)) & 1;
}

}  // namespace

#endif /* LADLE_CUDA_PROGRAM_CUH */
