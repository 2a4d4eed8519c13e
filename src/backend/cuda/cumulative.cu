/* cumulative.cu — running functions (cum_sum, cum_prod, cum_min, cum_max,
 * cum_count) and the rows a shift takes, over rows in order, restarting per
 * group.
 *
 * Groups come as a CSR (rows of group k at rows[offsets[k] .. offsets[k+1]),
 * ascending) with each row's group id. A running function whose operation is
 * associative on the values (integer sums and products wrap, so they are;
 * minimum, maximum and count) is one segmented scan: the values are gathered
 * into CSR order (reversed for `reverse`: the groups stay contiguous), a null
 * row given the operation's identity, scanned by group id with CUB, and
 * scattered back to their rows. Float sums and products are not associative:
 * Polars adds them in row order, so they run one thread per group walking its
 * rows in order (exact; a frame-wide one is one thread, slower than the CPU).
 * A float minimum or maximum skips NaN once a number was seen (NaN is its
 * identity) and between equal values keeps the later one, as the CPU's. */
#include <stdint.h>

#include <cub/cub.cuh>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#include "kernels.h"

namespace {

constexpr int THREADS = 256;

__device__ __forceinline__ bool bit_valid(const uint8_t *v, int64_t i) {
  return v == nullptr || ((v[i >> 3] >> (i & 7)) & 1);
}

/* The row at scan position p: CSR order, or 0..n, from the end for reverse. */
__device__ __forceinline__ int64_t row_at(const int64_t *rows, int64_t n, bool reverse, int64_t p) {
  int64_t q = reverse ? n - 1 - p : p;
  return rows != nullptr ? rows[q] : q;
}

template <typename T>
__device__ __forceinline__ bool is_nan(T v) {
  if constexpr (cuda::std::is_floating_point<T>::value)
    return v != v;
  else
    return false;
}

/* op(earlier, later); integers wrap through 64-bit unsigned arithmetic */
template <typename T, int OP>
struct Cum {
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (OP == LDC_CUM_SUM) {
      if constexpr (cuda::std::is_floating_point<T>::value)
        return a + b;
      else
        return (T)((uint64_t)a + (uint64_t)b);
    } else if constexpr (OP == LDC_CUM_PROD) {
      if constexpr (cuda::std::is_floating_point<T>::value)
        return a * b;
      else
        return (T)((uint64_t)a * (uint64_t)b);
    } else if constexpr (OP == LDC_CUM_MIN) {
      if (is_nan(a)) return b;
      if (is_nan(b)) return a;
      return a < b ? a : b;
    } else {
      if (is_nan(a)) return b;
      if (is_nan(b)) return a;
      return a > b ? a : b;
    }
  }
  /* what a null row contributes */
  __device__ __forceinline__ static T identity() {
    if constexpr (OP == LDC_CUM_SUM) {
      if constexpr (cuda::std::is_floating_point<T>::value)
        return (T)-0.0; /* -0.0 + x is x, -0.0 included */
      else
        return (T)0;
    } else if constexpr (OP == LDC_CUM_PROD) {
      return (T)1;
    } else if constexpr (cuda::std::is_floating_point<T>::value) {
      return cuda::std::numeric_limits<T>::quiet_NaN();
    } else if constexpr (OP == LDC_CUM_MIN) {
      return cuda::std::numeric_limits<T>::max();
    } else {
      return cuda::std::numeric_limits<T>::lowest();
    }
  }
};

template <typename T, int OP>
__global__ void gather_k(const T *x, const uint8_t *valid, const uint32_t *ids, const int64_t *rows,
                         int64_t n, bool reverse, T *vals, uint32_t *keys) {
  for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n;
       p += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = row_at(rows, n, reverse, p);
    vals[p] = bit_valid(valid, r) ? x[r] : Cum<T, OP>::identity();
    if (keys != nullptr) keys[p] = ids[r];
  }
}

/* count: 1 for a valid row */
__global__ void gather_count_k(const uint8_t *valid, const uint32_t *ids, const int64_t *rows,
                               int64_t n, bool reverse, uint32_t *vals, uint32_t *keys) {
  for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n;
       p += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = row_at(rows, n, reverse, p);
    vals[p] = bit_valid(valid, r) ? 1u : 0u;
    if (keys != nullptr) keys[p] = ids[r];
  }
}

/* out[row] = scanned value; a null row 0 (its validity bit says null) */
template <typename T>
__global__ void scatter_k(const T *scanned, const uint8_t *valid, const int64_t *rows, int64_t n,
                          bool reverse, bool count, T *out) {
  for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n;
       p += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = row_at(rows, n, reverse, p);
    out[r] = count || bit_valid(valid, r) ? scanned[p] : (T)0;
  }
}

/* One thread per group, its rows in order: float sums and products. */
template <typename T, int OP>
__global__ void sequential_k(const T *x, const uint8_t *valid, const int64_t *rows,
                             const int64_t *offsets, int64_t ngroups, int64_t n, bool reverse,
                             T *out) {
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < ngroups;
       k += (int64_t)gridDim.x * blockDim.x) {
    int64_t a = offsets != nullptr ? offsets[k] : 0, e = offsets != nullptr ? offsets[k + 1] : n;
    T acc = Cum<T, OP>::identity();
    bool seen = false;
    for (int64_t j = 0; j < e - a; j++) {
      int64_t q = reverse ? e - 1 - j : a + j;
      int64_t r = rows != nullptr ? rows[q] : q;
      if (!bit_valid(valid, r)) {
        out[r] = (T)0;
        continue;
      }
      acc = seen ? Cum<T, OP>()(acc, x[r]) : x[r];
      seen = true;
      out[r] = acc;
    }
  }
}

int blocks_for(int64_t n) {
  int64_t b = (n + THREADS - 1) / THREADS;
  return (int)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

struct Scratch {
  const ldc_alloc *a;
  void *p[3] = {nullptr, nullptr, nullptr};
  size_t sz[3] = {0, 0, 0};
  explicit Scratch(const ldc_alloc *al) : a(al) {}
  void *get(int i, size_t bytes) {
    sz[i] = bytes < 1 ? 1 : bytes;
    p[i] = a->alloc(a->ctx, sz[i]);
    return p[i];
  }
  ~Scratch() {
    for (int i = 0; i < 3; i++)
      if (p[i] != nullptr) a->free(a->ctx, p[i], sz[i]);
  }
};

/* the scan itself over vals (count or an associative op), by key where keys */
template <typename T, typename Op>
cudaError_t scan(const T *vals, const uint32_t *keys, T *outv, int64_t n, Op op, Scratch &sc,
                 cudaStream_t s) {
  size_t bytes = 0;
  cudaError_t e = keys != nullptr
                      ? cub::DeviceScan::InclusiveScanByKey(nullptr, bytes, keys, vals, outv, op, n,
                                                            cuda::std::equal_to<uint32_t>(), s)
                      : cub::DeviceScan::InclusiveScan(nullptr, bytes, vals, outv, op, n, s);
  if (e != cudaSuccess) return e;
  void *tmp = sc.get(2, bytes);
  if (tmp == nullptr) return cudaErrorMemoryAllocation;
  return keys != nullptr ? cub::DeviceScan::InclusiveScanByKey(tmp, bytes, keys, vals, outv, op, n,
                                                               cuda::std::equal_to<uint32_t>(), s)
                         : cub::DeviceScan::InclusiveScan(tmp, bytes, vals, outv, op, n, s);
}

template <typename T, int OP>
cudaError_t run(const void *in, const uint8_t *valid, const uint32_t *ids, const int64_t *rows,
                const int64_t *offsets, int64_t ngroups, int64_t n, bool reverse, void *out,
                const ldc_alloc *scratch, cudaStream_t s) {
  const T *x = (const T *)in;
  if constexpr (cuda::std::is_floating_point<T>::value &&
                (OP == LDC_CUM_SUM || OP == LDC_CUM_PROD)) {
    (void)ids;
    (void)scratch;
    int64_t ng = offsets != nullptr ? ngroups : 1;
    sequential_k<T, OP>
        <<<blocks_for(ng), THREADS, 0, s>>>(x, valid, rows, offsets, ng, n, reverse, (T *)out);
    return cudaGetLastError();
  } else {
    Scratch sc(scratch);
    T *vals = (T *)sc.get(0, (size_t)n * sizeof(T) * 2);
    uint32_t *keys = ids != nullptr ? (uint32_t *)sc.get(1, (size_t)n * sizeof(uint32_t)) : nullptr;
    if (vals == nullptr || (ids != nullptr && keys == nullptr)) return cudaErrorMemoryAllocation;
    T *scanned = vals + n;
    gather_k<T, OP><<<blocks_for(n), THREADS, 0, s>>>(x, valid, ids, rows, n, reverse, vals, keys);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = scan(vals, keys, scanned, n, Cum<T, OP>(), sc, s);
    if (e == cudaSuccess)
      scatter_k<T>
          <<<blocks_for(n), THREADS, 0, s>>>(scanned, valid, rows, n, reverse, false, (T *)out);
    return e == cudaSuccess ? cudaGetLastError() : e;
  }
}

template <typename T>
cudaError_t by_op(int op, const void *in, const uint8_t *valid, const uint32_t *ids,
                  const int64_t *rows, const int64_t *offsets, int64_t ngroups, int64_t n,
                  bool reverse, void *out, const ldc_alloc *scratch, cudaStream_t s) {
  switch (op) {
    case LDC_CUM_SUM:
      return run<T, LDC_CUM_SUM>(in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                                 s);
    case LDC_CUM_PROD:
      return run<T, LDC_CUM_PROD>(in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                                  s);
    case LDC_CUM_MIN:
      return run<T, LDC_CUM_MIN>(in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                                 s);
    case LDC_CUM_MAX:
      return run<T, LDC_CUM_MAX>(in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                                 s);
    default:
      return cudaErrorInvalidValue;
  }
}

/* idx[rows[p]] = rows[p - by] within p's group, else -1 */
__global__ void shift_k(const uint32_t *ids, const int64_t *rows, const int64_t *offsets,
                        int64_t nrows, int64_t by, int64_t *out) {
  for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < nrows;
       p += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = rows != nullptr ? rows[p] : p;
    int64_t a = 0, len = nrows;
    if (offsets != nullptr) {
      uint32_t k = ids[r];
      a = offsets[k];
      len = offsets[k + 1] - a;
    }
    int64_t j = p - a; /* r's place in its group */
    /* j - by in [0, len) without overflow: by may be any int64 */
    bool in_range = by >= 0 ? (by <= j) : (j < len + by);
    out[r] = in_range ? (rows != nullptr ? rows[p - by] : p - by) : -1;
  }
}

}  // namespace

extern "C" cudaError_t ldc_cumulative(ldc_num kind, int op, bool reverse, const void *in,
                                      const uint8_t *valid, const uint32_t *ids,
                                      const int64_t *rows, const int64_t *offsets, int64_t ngroups,
                                      int64_t n, void *out, const ldc_alloc *scratch,
                                      cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (op == LDC_CUM_COUNT) {
    Scratch sc(scratch);
    uint32_t *vals = (uint32_t *)sc.get(0, (size_t)n * sizeof(uint32_t) * 2);
    uint32_t *keys = ids != nullptr ? (uint32_t *)sc.get(1, (size_t)n * sizeof(uint32_t)) : nullptr;
    if (vals == nullptr || (ids != nullptr && keys == nullptr)) return cudaErrorMemoryAllocation;
    gather_count_k<<<blocks_for(n), THREADS, 0, s>>>(valid, ids, rows, n, reverse, vals, keys);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = scan(vals, keys, vals + n, n, cuda::std::plus<uint32_t>(), sc, s);
    if (e == cudaSuccess)
      scatter_k<uint32_t><<<blocks_for(n), THREADS, 0, s>>>(vals + n, valid, rows, n, reverse, true,
                                                            (uint32_t *)out);
    return e == cudaSuccess ? cudaGetLastError() : e;
  }
  switch (kind) {
    case LDC_U8:
      return by_op<uint8_t>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                            s);
    case LDC_I8:
      return by_op<int8_t>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch, s);
    case LDC_I16:
      return by_op<int16_t>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                            s);
    case LDC_U16:
      return by_op<uint16_t>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                             s);
    case LDC_I32:
      return by_op<int32_t>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                            s);
    case LDC_U32:
      return by_op<uint32_t>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                             s);
    case LDC_I64:
      return by_op<int64_t>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                            s);
    case LDC_U64:
      return by_op<uint64_t>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch,
                             s);
    case LDC_F32:
      return by_op<float>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch, s);
    case LDC_F64:
      return by_op<double>(op, in, valid, ids, rows, offsets, ngroups, n, reverse, out, scratch, s);
  }
  return cudaErrorInvalidValue;
}

extern "C" cudaError_t ldc_shift_rows(const uint32_t *ids, const int64_t *rows,
                                      const int64_t *offsets, int64_t nrows, int64_t by,
                                      int64_t *out, cudaStream_t s) {
  if (nrows == 0) return cudaSuccess;
  shift_k<<<blocks_for(nrows), THREADS, 0, s>>>(ids, rows, offsets, nrows, by, out);
  return cudaGetLastError();
}
