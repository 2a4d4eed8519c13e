/* sort.cu — the CUDA backend's sort permutation: least significant key
 * first, each key a stable radix sort (CUB) of the row numbers by the key's
 * normalised 64-bit value (integers with the sign bit flipped, floats by
 * their bits flipped so that they order as numbers, NaN last, -0.0 as 0.0;
 * descending: every bit inverted), then, when the key has nulls, a stable
 * one-bit sort putting them first or last. Stable throughout: rows with
 * equal keys keep their order, as the CPU's sort_indices keeps it. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <cub/device/device_radix_sort.cuh>

#include "kernels.h"
#include "program.cuh"

namespace {

/* keys[i] of the row perm[i]: the key's value (0 for a null), or with
 * nulls_pass whether it goes after the others (null and nulls last, or
 * valid and nulls first) */
__global__ void key_kernel(int kind, const void *v, const uint8_t *valid, bool desc,
                           bool nulls_pass, bool nulls_last, const int64_t *perm, int64_t n,
                           uint64_t *keys) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = perm[i];
    bool ok = bit(valid, r);
    if (nulls_pass) {
      keys[i] = ok == nulls_last ? 0 : 1;
    } else {
      uint64_t x = ok ? norm_key(kind, v, r) : 0;
      keys[i] = desc ? ~x : x;
    }
  }
}

}  // namespace

extern "C" cudaError_t ldc_sort_perm(const ldc_sort_key *keys, int nkeys, int64_t n, int64_t *perm,
                                     const ldc_alloc *scratch, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (n >= INT32_MAX) return cudaErrorInvalidValue;
  size_t bytes = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, bytes, (const uint64_t *)nullptr,
                                                  (uint64_t *)nullptr, (const int64_t *)nullptr,
                                                  (int64_t *)nullptr, (int)n, 0, 64, stream);
  if (e != cudaSuccess) return e;
  size_t kb = (size_t)n * 8;
  uint64_t *k1 = (uint64_t *)scratch->alloc(scratch->ctx, kb);
  uint64_t *k2 = (uint64_t *)scratch->alloc(scratch->ctx, kb);
  int64_t *p2 = (int64_t *)scratch->alloc(scratch->ctx, kb);
  void *tmp = scratch->alloc(scratch->ctx, bytes < 1 ? 1 : bytes);
  if (k1 == nullptr || k2 == nullptr || p2 == nullptr || tmp == nullptr) {
    e = cudaErrorMemoryAllocation;
  } else {
    int g = grid_for(n);
    iota_kernel<<<g, kBlock, 0, stream>>>(perm, n);
    for (int k = nkeys - 1; k >= 0 && e == cudaSuccess; k--) {
      const ldc_sort_key &key = keys[k];
      for (int pass = 0; pass < 2 && e == cudaSuccess; pass++) {
        bool nulls = pass == 1;
        if (nulls && !key.has_nulls) continue;
        key_kernel<<<g, kBlock, 0, stream>>>(key.kind, key.values, key.valid, key.desc, nulls,
                                               key.nulls_last, perm, n, k1);
        int end = nulls ? 1 : key.bits;
        e = cub::DeviceRadixSort::SortPairs(tmp, bytes, k1, k2, perm, p2, (int)n, 0, end, stream);
        if (e == cudaSuccess) e = cudaMemcpyAsync(perm, p2, kb, cudaMemcpyDeviceToDevice, stream);
      }
    }
    if (e == cudaSuccess) e = cudaGetLastError();
  }
  if (tmp != nullptr) scratch->free(scratch->ctx, tmp, bytes < 1 ? 1 : bytes);
  if (p2 != nullptr) scratch->free(scratch->ctx, p2, kb);
  if (k2 != nullptr) scratch->free(scratch->ctx, k2, kb);
  if (k1 != nullptr) scratch->free(scratch->ctx, k1, kb);
  return e;
}
