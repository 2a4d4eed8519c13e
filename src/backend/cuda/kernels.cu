/* kernels.cu — the CUDA backend's device code, behind plain C launchers
 * (kernels.h) that take device pointers, a stream and a scratch allocator and
 * return a cudaError_t. The table and the columns live in backend_cuda.c;
 * nothing here knows ladle's structs.
 *
 * Validity is Arrow's bitmap (bit i of byte i / 8); outputs are written a
 * 32-bit word per warp (__ballot_sync), so output bitmaps are padded to whole
 * words (ladle_column_alloc_with does that on a device). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <type_traits>

#include "kernels.h"
#include "program.cuh"

namespace {

/* A row of a mask counts when its byte is nonzero and it is valid. */
struct MaskTrue {
  const uint8_t *values;
  const uint8_t *validity;
  __device__ __forceinline__ bool operator()(int64_t i) const {
    return values[i] != 0 && bit(validity, i);
  }
};

/* Every thread of a warp, row base + threadIdx.x (its warp's 32 rows starting
 * at a multiple of 32): the warp's validity word into out_valid (when not
 * NULL) and its nulls among rows below n added to *nulls. */
__device__ __forceinline__ void validity_word(bool valid, int64_t base, int64_t n,
                                              uint32_t *out_valid, unsigned long long *nulls) {
  unsigned word = __ballot_sync(0xffffffffu, valid);
  int64_t row = base + threadIdx.x;
  if ((threadIdx.x & 31) == 0 && row < n) {
    int64_t left = n - row;
    unsigned in_range = left >= 32 ? 0xffffffffu : ((1u << left) - 1u);
    if (out_valid != nullptr) out_valid[row >> 5] = word;
    int missing = __popc(in_range & ~word);
    if (missing != 0) atomicAdd(nulls, (unsigned long long)missing);
  }
}

/* out[i] = src[idx[i]] for element type T; a null or negative index, or a
 * null source row, gives a null row. Grid-stride; each warp owns 32 rows at a
 * time, so that it writes whole validity words. */
template <typename T>
__global__ void take_kernel(const T *src, const uint8_t *src_valid, const int64_t *idx,
                            const uint8_t *idx_valid, int64_t n, T *out, uint32_t *out_valid,
                            unsigned long long *nulls) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < n; base += stride) {
    int64_t i = base + threadIdx.x;
    bool valid = false;
    if (i < n) {
      int64_t j = idx[i];
      valid = bit(idx_valid, i) && j >= 0 && bit(src_valid, j);
      out[i] = valid ? src[j] : T(0);
    }
    validity_word(valid, base, n, out_valid, nulls);
  }
}

/* Strings, first pass: out_off[i] = the byte length of row idx[i] (0 for a
 * null row), validity and null count as take_kernel; out_off[n] = 0, so that
 * an exclusive scan of n + 1 entries gives the offsets and the total. */
__global__ void take_lengths_kernel(const int64_t *off, const uint8_t *src_valid,
                                    const int64_t *idx, const uint8_t *idx_valid, int64_t n,
                                    int64_t *out_off, uint32_t *out_valid,
                                    unsigned long long *nulls) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < n; base += stride) {
    int64_t i = base + threadIdx.x;
    bool valid = false;
    if (i < n) {
      int64_t j = idx[i];
      valid = bit(idx_valid, i) && j >= 0 && bit(src_valid, j);
      out_off[i] = valid ? off[j + 1] - off[j] : 0;
    }
    validity_word(valid, base, n, out_valid, nulls);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) out_off[n] = 0;
}

/* Strings, second pass: the bytes of each row, a warp per row (lanes stride
 * over its bytes), rows grid-strided by warps. */
__global__ void take_chars_kernel(const int64_t *src_off, const char *src_chars, const int64_t *idx,
                                  int64_t n, const int64_t *out_off, char *out_chars) {
  int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
  int lane = threadIdx.x & 31;
  for (int64_t i = warp; i < n; i += warps) {
    int64_t len = out_off[i + 1] - out_off[i];
    if (len == 0) continue;
    const char *from = src_chars + src_off[idx[i]];
    char *to = out_chars + out_off[i];
    for (int64_t b = lane; b < len; b += 32) to[b] = from[b];
  }
}

/* Lists, second pass: each output element's index into the source's
 * elements, a warp per row as take_chars_kernel (a null row has none). */
__global__ void list_child_index_kernel(const int64_t *src_off, const int64_t *idx, int64_t n,
                                        const int64_t *out_off, int64_t *eidx) {
  int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
  int lane = threadIdx.x & 31;
  for (int64_t i = warp; i < n; i += warps) {
    int64_t len = out_off[i + 1] - out_off[i];
    if (len == 0) continue;
    int64_t from = src_off[idx[i]];
    int64_t *to = eidx + out_off[i];
    for (int64_t b = lane; b < len; b += 32) to[b] = from + b;
  }
}

/* Per block, the sum of its grid-stride share of the valid values (as Acc:
 * wrapping uint64 for integers, double for floats), into part[blockIdx.x]. */
template <typename T, typename Acc>
__global__ void sum_partial(const T *v, const uint8_t *valid, int64_t n, Acc *part) {
  __shared__ Acc s[kBlock];
  Acc acc = Acc(0);
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    if (bit(valid, i)) acc += (Acc)v[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kBlock / 2; w > 0; w /= 2) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) part[blockIdx.x] = s[0];
}

/* One block: the sum of the partials, in a fixed order (deterministic). */
template <typename Acc>
__global__ void sum_final(const Acc *part, int n, Acc *out) {
  __shared__ Acc s[kBlock];
  Acc acc = Acc(0);
  for (int i = threadIdx.x; i < n; i += kBlock) acc += part[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kBlock / 2; w > 0; w /= 2) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}

template <typename T, typename Acc>
cudaError_t sum_as(const void *v, const uint8_t *valid, int64_t n, void *acc, void *part,
                   cudaStream_t stream) {
  int blocks = LDC_SUM_BLOCKS;
  sum_partial<T, Acc><<<blocks, kBlock, 0, stream>>>((const T *)v, valid, n, (Acc *)part);
  sum_final<Acc><<<1, kBlock, 0, stream>>>((const Acc *)part, blocks, (Acc *)acc);
  return cudaGetLastError();
}

/* out[i] = a[i] op b[i] (a row of a one-value side: its value), T the
 * operands' type, O the output's (Boolean's byte for comparisons); the
 * validity of both sides combined, as take_kernel writes it. */
template <typename T, typename O>
__global__ void binary_kernel(int op, const T *a, const uint8_t *av, bool a1, const T *b,
                              const uint8_t *bv, bool b1, int64_t n, O *out, uint32_t *out_valid,
                              unsigned long long *nulls) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  T x0 = a1 ? a[0] : T(0), y0 = b1 ? b[0] : T(0);
  bool xv0 = bit(av, 0), yv0 = bit(bv, 0);
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < n; base += stride) {
    int64_t i = base + threadIdx.x;
    bool valid = false;
    if (i < n) {
      T x = a1 ? x0 : a[i], y = b1 ? y0 : b[i];
      /* the operation's rules in one place: op_as and op_valid (program.cuh) */
      valid = (a1 ? xv0 : bit(av, i)) && (b1 ? yv0 : bit(bv, i)) && op_valid(op, to_slot<T>(y));
      out[i] = from_slot<O>(op_as<T>(op, to_slot<T>(x), to_slot<T>(y)));
    }
    validity_word(valid, base, n, out_valid, nulls);
  }
}

/* Kleene and/or over Boolean bytes: false and anything is false, true or
 * anything is true, else null where a side is. */
__global__ void logic_kernel(bool is_and, const uint8_t *a, const uint8_t *av, bool a1,
                             const uint8_t *b, const uint8_t *bv, bool b1, int64_t n, uint8_t *out,
                             uint32_t *out_valid, unsigned long long *nulls) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < n; base += stride) {
    int64_t i = base + threadIdx.x;
    bool valid = false;
    if (i < n) {
      int64_t ia = a1 ? 0 : i, ib = b1 ? 0 : i;
      out[i] = kleene(is_and, bit(av, ia), a[ia] != 0, bit(bv, ib), b[ib] != 0, &valid);
    }
    validity_word(valid, base, n, out_valid, nulls);
  }
}

template <typename T>
cudaError_t binary_as(int op, const void *a, const uint8_t *av, bool a1, const void *b,
                      const uint8_t *bv, bool b1, int64_t n, void *out, uint32_t *out_valid,
                      unsigned long long *nulls, cudaStream_t stream) {
  if (op <= LDC_GE)
    binary_kernel<T, uint8_t><<<grid_for(n), kBlock, 0, stream>>>(
        op, (const T *)a, av, a1, (const T *)b, bv, b1, n, (uint8_t *)out, out_valid, nulls);
  else
    binary_kernel<T, T><<<grid_for(n), kBlock, 0, stream>>>(op, (const T *)a, av, a1, (const T *)b,
                                                            bv, b1, n, (T *)out, out_valid, nulls);
  return cudaGetLastError();
}

/* The program into a column: a copy of it in shared memory per block. */
__global__ void program_kernel(const ldc_prog p, int out_kind, int64_t n, void *out,
                               uint32_t *out_valid, unsigned long long *nulls) {
  __shared__ ldc_ins ins[LDC_PROG_MAX];
  for (int k = threadIdx.x; k < p.n; k += blockDim.x) ins[k] = p.ins[k];
  __syncthreads();
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < n; base += stride) {
    int64_t i = base + threadIdx.x;
    bool valid = false;
    if (i < n) {
      uint64_t r;
      eval_row(ins, p, i, &r, &valid);
      store_kind(out_kind, out, i, r);
    }
    validity_word(valid, base, n, out_valid, nulls);
  }
}

/* The sum (as Acc) and count of the program's valid values, no column
 * written: each block's partial sum into part (a fixed order, as
 * sum_partial), the count added into *count. */
template <typename T, typename Acc>
__global__ void program_sum_partial(const ldc_prog p, int64_t n, Acc *part,
                                    unsigned long long *count) {
  __shared__ ldc_ins ins[LDC_PROG_MAX];
  __shared__ Acc s[kBlock];
  __shared__ unsigned long long c[kBlock];
  for (int k = threadIdx.x; k < p.n; k += blockDim.x) ins[k] = p.ins[k];
  __syncthreads();
  Acc acc = Acc(0);
  unsigned long long cnt = 0;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint64_t r;
    bool valid;
    eval_row(ins, p, i, &r, &valid);
    if (valid) {
      acc += (Acc)from_slot<T>(r);
      cnt++;
    }
  }
  s[threadIdx.x] = acc;
  c[threadIdx.x] = cnt;
  __syncthreads();
  for (int w = kBlock / 2; w > 0; w /= 2) {
    if ((int)threadIdx.x < w) {
      s[threadIdx.x] += s[threadIdx.x + w];
      c[threadIdx.x] += c[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    part[blockIdx.x] = s[0];
    if (c[0] != 0) atomicAdd(count, c[0]);
  }
}

template <typename T, typename Acc>
cudaError_t program_sum_as(const ldc_prog *p, int64_t n, void *acc, void *part,
                           unsigned long long *count, cudaStream_t stream) {
  int blocks = LDC_SUM_BLOCKS;
  program_sum_partial<T, Acc><<<blocks, kBlock, 0, stream>>>(*p, n, (Acc *)part, count);
  sum_final<Acc><<<1, kBlock, 0, stream>>>((const Acc *)part, blocks, (Acc *)acc);
  return cudaGetLastError();
}

/* A min or max so far: its value, the numbers (valid, not NaN) that made it,
 * and the valid values met (NaN among them). */
template <typename T>
struct Ext {
  T v;
  unsigned long long nums, valid;
};

template <typename T>
__device__ __forceinline__ void ext_add(Ext<T> &a, const Ext<T> &b, bool is_max) {
  if (b.nums > 0 && (a.nums == 0 || (is_max ? b.v > a.v : b.v < a.v))) a.v = b.v;
  a.nums += b.nums;
  a.valid += b.valid;
}

/* Per block, the extreme of its grid-stride share into part[blockIdx.x]; with
 * final, one block folds the n partials of part into *out in order. */
template <typename T>
__global__ void extreme_kernel(const T *v, const uint8_t *valid, int64_t n, bool is_max,
                               Ext<T> *part, const Ext<T> *in_part, int n_part, Ext<T> *out) {
  __shared__ Ext<T> s[kBlock];
  Ext<T> a{T(0), 0, 0};
  if (in_part == nullptr) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
      if (!bit(valid, i)) continue;
      T x = v[i];
      Ext<T> b{x, x == x ? 1ull : 0ull, 1};
      ext_add(a, b, is_max);
    }
  } else {
    for (int i = threadIdx.x; i < n_part; i += kBlock) ext_add(a, in_part[i], is_max);
  }
  s[threadIdx.x] = a;
  __syncthreads();
  for (int w = kBlock / 2; w > 0; w /= 2) {
    if ((int)threadIdx.x < w) ext_add(s[threadIdx.x], s[threadIdx.x + w], is_max);
    __syncthreads();
  }
  if (threadIdx.x == 0) (in_part == nullptr ? part[blockIdx.x] : *out) = s[0];
}

template <typename T>
cudaError_t extreme_as(const void *v, const uint8_t *valid, int64_t n, bool is_max, void *out,
                       unsigned long long *counts, void *part, cudaStream_t stream) {
  int blocks = LDC_SUM_BLOCKS;
  Ext<T> *p = (Ext<T> *)part, *o = p + blocks;
  extreme_kernel<T>
      <<<blocks, kBlock, 0, stream>>>((const T *)v, valid, n, is_max, p, nullptr, 0, nullptr);
  extreme_kernel<T><<<1, kBlock, 0, stream>>>(nullptr, nullptr, 0, is_max, nullptr, p, blocks, o);
  cudaError_t e = cudaMemcpyAsync(out, &o->v, sizeof(T), cudaMemcpyDeviceToDevice, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(counts, &o->nums, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToDevice,
                        stream);
  return e != cudaSuccess ? e : cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t ldc_select(const uint8_t *mask, const uint8_t *validity, int64_t n,
                                  int64_t *out_idx, int64_t *d_count, const ldc_alloc *scratch,
                                  cudaStream_t stream) {
  thrust::counting_iterator<int64_t> first(0);
  MaskTrue pred{mask, validity};
  size_t bytes = 0;
  cudaError_t e = cub::DeviceSelect::If(nullptr, bytes, first, out_idx, d_count, n, pred, stream);
  if (e != cudaSuccess) return e;
  void *tmp = scratch->alloc(scratch->ctx, bytes);
  if (tmp == nullptr) return cudaErrorMemoryAllocation;
  e = cub::DeviceSelect::If(tmp, bytes, first, out_idx, d_count, n, pred, stream);
  scratch->free(scratch->ctx, tmp, bytes); /* stream-ordered: after the selection */
  return e;
}

extern "C" cudaError_t ldc_take(int width, const void *src, const uint8_t *src_valid,
                                const int64_t *idx, const uint8_t *idx_valid, int64_t n, void *out,
                                uint32_t *out_valid, unsigned long long *d_nulls,
                                cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(d_nulls, 0, sizeof *d_nulls, stream);
  if (e != cudaSuccess || n == 0) return e;
  int g = grid_for(n);
#define LDC_TAKE(T)                                                                                \
  take_kernel<T><<<g, kBlock, 0, stream>>>((const T *)src, src_valid, idx, idx_valid, n, (T *)out, \
                                           out_valid, d_nulls)
  switch (width) {
    case 1:
      LDC_TAKE(uint8_t);
      break;
    case 2:
      LDC_TAKE(uint16_t);
      break;
    case 4:
      LDC_TAKE(uint32_t);
      break;
    case 8:
      LDC_TAKE(uint64_t);
      break;
    default:
      return cudaErrorInvalidValue;
  }
#undef LDC_TAKE
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_take_string_offsets(const int64_t *off, const uint8_t *src_valid,
                                               const int64_t *idx, const uint8_t *idx_valid,
                                               int64_t n, int64_t *out_off, uint32_t *out_valid,
                                               unsigned long long *d_nulls,
                                               const ldc_alloc *scratch, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(d_nulls, 0, sizeof *d_nulls, stream);
  if (e != cudaSuccess) return e;
  take_lengths_kernel<<<grid_for(n), kBlock, 0, stream>>>(off, src_valid, idx, idx_valid, n,
                                                          out_off, out_valid, d_nulls);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  size_t bytes = 0;
  e = cub::DeviceScan::ExclusiveSum(nullptr, bytes, out_off, out_off, n + 1, stream);
  if (e != cudaSuccess) return e;
  void *tmp = scratch->alloc(scratch->ctx, bytes);
  if (tmp == nullptr) return cudaErrorMemoryAllocation;
  e = cub::DeviceScan::ExclusiveSum(tmp, bytes, out_off, out_off, n + 1, stream);
  scratch->free(scratch->ctx, tmp, bytes);
  return e;
}

extern "C" cudaError_t ldc_take_string_chars(const int64_t *src_off, const char *src_chars,
                                             const int64_t *idx, int64_t n, const int64_t *out_off,
                                             char *out_chars, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  int64_t blocks = (n * 32 + kBlock - 1) / kBlock;
  int g = (int)(blocks > 65535 * 32 ? 65535 * 32 : blocks);
  take_chars_kernel<<<g, kBlock, 0, stream>>>(src_off, src_chars, idx, n, out_off, out_chars);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_list_child_index(const int64_t *src_off, const int64_t *idx, int64_t n,
                                            const int64_t *out_off, int64_t *eidx,
                                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  int64_t blocks = (n * 32 + kBlock - 1) / kBlock;
  int g = (int)(blocks > 65535 * 32 ? 65535 * 32 : blocks);
  list_child_index_kernel<<<g, kBlock, 0, stream>>>(src_off, idx, n, out_off, eidx);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_sum(ldc_num kind, const void *v, const uint8_t *valid, int64_t n,
                               void *acc, void *part, cudaStream_t stream) {
  switch (kind) {
    case LDC_U8:
      return sum_as<uint8_t, unsigned long long>(v, valid, n, acc, part, stream);
    case LDC_I8:
      return sum_as<int8_t, unsigned long long>(v, valid, n, acc, part, stream);
    case LDC_I16:
      return sum_as<int16_t, unsigned long long>(v, valid, n, acc, part, stream);
    case LDC_U16:
      return sum_as<uint16_t, unsigned long long>(v, valid, n, acc, part, stream);
    case LDC_I32:
      return sum_as<int32_t, unsigned long long>(v, valid, n, acc, part, stream);
    case LDC_U32:
      return sum_as<uint32_t, unsigned long long>(v, valid, n, acc, part, stream);
    case LDC_I64:
      return sum_as<int64_t, unsigned long long>(v, valid, n, acc, part, stream);
    case LDC_U64:
      return sum_as<uint64_t, unsigned long long>(v, valid, n, acc, part, stream);
    case LDC_F32:
      return sum_as<float, double>(v, valid, n, acc, part, stream);
    case LDC_F64:
      return sum_as<double, double>(v, valid, n, acc, part, stream);
  }
  return cudaErrorInvalidValue;
}

extern "C" cudaError_t ldc_extreme(ldc_num kind, bool is_max, const void *v, const uint8_t *valid,
                                   int64_t n, void *out, unsigned long long *counts, void *part,
                                   cudaStream_t stream) {
  switch (kind) {
    case LDC_U8:
      return extreme_as<uint8_t>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_I8:
      return extreme_as<int8_t>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_I16:
      return extreme_as<int16_t>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_U16:
      return extreme_as<uint16_t>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_I32:
      return extreme_as<int32_t>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_U32:
      return extreme_as<uint32_t>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_I64:
      return extreme_as<int64_t>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_U64:
      return extreme_as<uint64_t>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_F32:
      return extreme_as<float>(v, valid, n, is_max, out, counts, part, stream);
    case LDC_F64:
      return extreme_as<double>(v, valid, n, is_max, out, counts, part, stream);
  }
  return cudaErrorInvalidValue;
}

extern "C" cudaError_t ldc_binary(ldc_num kind, int op, const void *a, const uint8_t *av, bool a1,
                                  const void *b, const uint8_t *bv, bool b1, int64_t n, void *out,
                                  uint32_t *out_valid, unsigned long long *d_nulls,
                                  cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (op == LDC_AND || op == LDC_OR) {
    logic_kernel<<<grid_for(n), kBlock, 0, stream>>>(op == LDC_AND, (const uint8_t *)a, av, a1,
                                                     (const uint8_t *)b, bv, b1, n, (uint8_t *)out,
                                                     out_valid, d_nulls);
    return cudaGetLastError();
  }
  switch (kind) {
    case LDC_U8:
      return binary_as<uint8_t>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_I8:
      return binary_as<int8_t>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_I16:
      return binary_as<int16_t>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_U16:
      return binary_as<uint16_t>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_I32:
      return binary_as<int32_t>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_U32:
      return binary_as<uint32_t>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_I64:
      return binary_as<int64_t>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_U64:
      return binary_as<uint64_t>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_F32:
      return binary_as<float>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
    case LDC_F64:
      return binary_as<double>(op, a, av, a1, b, bv, b1, n, out, out_valid, d_nulls, stream);
  }
  return cudaErrorInvalidValue;
}

extern "C" cudaError_t ldc_program(const ldc_prog *p, int out_kind, int64_t n, void *out,
                                   uint32_t *out_valid, unsigned long long *d_nulls,
                                   cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (p->n < 1 || p->n > LDC_PROG_MAX) return cudaErrorInvalidValue;
  program_kernel<<<grid_for(n), kBlock, 0, stream>>>(*p, out_kind, n, out, out_valid, d_nulls);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_program_sum(const ldc_prog *p, int kind, int64_t n, void *acc,
                                       void *part, unsigned long long *d_count,
                                       cudaStream_t stream) {
  if (p->n < 1 || p->n > LDC_PROG_MAX) return cudaErrorInvalidValue;
  switch (kind) {
    case LDC_U8:
      return program_sum_as<uint8_t, unsigned long long>(p, n, acc, part, d_count, stream);
    case LDC_I8:
      return program_sum_as<int8_t, unsigned long long>(p, n, acc, part, d_count, stream);
    case LDC_I16:
      return program_sum_as<int16_t, unsigned long long>(p, n, acc, part, d_count, stream);
    case LDC_U16:
      return program_sum_as<uint16_t, unsigned long long>(p, n, acc, part, d_count, stream);
    case LDC_I32:
      return program_sum_as<int32_t, unsigned long long>(p, n, acc, part, d_count, stream);
    case LDC_U32:
      return program_sum_as<uint32_t, unsigned long long>(p, n, acc, part, d_count, stream);
    case LDC_I64:
      return program_sum_as<int64_t, unsigned long long>(p, n, acc, part, d_count, stream);
    case LDC_U64:
      return program_sum_as<uint64_t, unsigned long long>(p, n, acc, part, d_count, stream);
    case LDC_F32:
      return program_sum_as<float, double>(p, n, acc, part, d_count, stream);
    case LDC_F64:
      return program_sum_as<double, double>(p, n, acc, part, d_count, stream);
  }
  return cudaErrorInvalidValue;
}

/* one output byte per thread: eight Boolean bytes to their bits, LSB first */
__global__ void pack_bits_kernel(const uint8_t *v, int64_t n, uint8_t *bits) {
  int64_t nb = (n + 7) / 8;
  for (int64_t b = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; b < nb;
       b += (int64_t)gridDim.x * blockDim.x) {
    uint8_t o = 0;
    int64_t base = b * 8;
    for (int k = 0; k < 8 && base + k < n; k++) o |= (uint8_t)((v[base + k] != 0) << k);
    bits[b] = o;
  }
}

/* v[i] = start + i in T (the caller checked that the last value fits) */
template <typename T>
__global__ void sequence_kernel(int64_t start, int64_t n, T *v) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    v[i] = (T)(start + i);
}

extern "C" cudaError_t ldc_sequence(int width, int64_t start, int64_t n, void *out,
                                    cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (width == 4)
    sequence_kernel<uint32_t><<<grid_for(n), kBlock, 0, stream>>>(start, n, (uint32_t *)out);
  else if (width == 8)
    sequence_kernel<uint64_t><<<grid_for(n), kBlock, 0, stream>>>(start, n, (uint64_t *)out);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_pack_bits(const uint8_t *v, int64_t n, uint8_t *bits,
                                     cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  pack_bits_kernel<<<grid_for((n + 7) / 8), kBlock, 0, stream>>>(v, n, bits);
  return cudaGetLastError();
}
