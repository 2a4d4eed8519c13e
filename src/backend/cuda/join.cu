/* join.cu — the CUDA backend's hash join. The build side (a join's right
 * side; its left for a right join) is grouped by key as a group-by groups
 * (groupby.cu's table, groups numbered by first row, each group's rows in
 * ascending order); every probe row looks its keys up in that table, and
 * its pairs are counted, numbered by an exclusive scan and written: per
 * probe row in order, its matches in build order, the host kernel's order.
 * A FULL join's build rows that no probe row met follow, in order. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <cub/device/device_scan.cuh>

#include "keys.cuh"

namespace {

__global__ void probe_kernel(const ldc_keys b, const ldc_keys p, int64_t np, const uint64_t *bhash,
                             const int32_t *slots, const int32_t *gid, uint64_t mask,
                             const int64_t *offsets, int how, bool nulls_equal, int32_t *pgroup,
                             int64_t *cnt, uint8_t *hit) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np;
       i += (int64_t)gridDim.x * blockDim.x) {
    int32_t g = -1;
    if (nulls_equal || !any_null(p, i)) {
      uint64_t h = row_hash(p, i);
      for (uint64_t pos = h & mask;; pos = (pos + 1) & mask) {
        int32_t cur = slots[pos];
        if (cur < 0) break;
        if (bhash[cur] == h && keys_equal(p, i, b, cur)) {
          g = gid[pos];
          break;
        }
      }
    }
    pgroup[i] = g;
    int64_t c;
    switch (how) {
      case LDC_J_INNER:
        c = g >= 0 ? offsets[g + 1] - offsets[g] : 0;
        break;
      case LDC_J_SEMI:
        c = g >= 0;
        break;
      case LDC_J_ANTI:
        c = g < 0;
        break;
      default: /* LEFT, FULL */
        c = g >= 0 ? offsets[g + 1] - offsets[g] : 1;
    }
    cnt[i] = c;
    if (how == LDC_J_FULL && g >= 0) hit[g] = 1;
  }
}

/* FULL: 1 for a build row whose group no probe row met */
__global__ void unmet_kernel(const uint32_t *bids, int64_t nb, const uint8_t *hit, int64_t *flag) {
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < nb;
       j += (int64_t)gridDim.x * blockDim.x)
    flag[j] = !hit[bids[j]];
}

__global__ void emit_kernel(const int32_t *pgroup, const int64_t *start, int64_t np,
                            const int64_t *rows, const int64_t *offsets, int how, int64_t *pout,
                            int64_t *bout) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < np;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t s = start[i];
    if (how == LDC_J_SEMI || how == LDC_J_ANTI) {
      if (start[i + 1] > s) pout[s] = i;
      continue;
    }
    int32_t g = pgroup[i];
    if (g < 0) {
      if (how != LDC_J_INNER) {
        pout[s] = i;
        bout[s] = -1;
      }
      continue;
    }
    int64_t o0 = offsets[g], o1 = offsets[g + 1];
    for (int64_t k = o0; k < o1; k++) {
      pout[s + k - o0] = i;
      bout[s + k - o0] = rows[k];
    }
  }
}

__global__ void emit_unmet_kernel(const uint32_t *bids, int64_t nb, const uint8_t *hit,
                                  const int64_t *brank, const int64_t *base_at, int64_t *pout,
                                  int64_t *bout) {
  int64_t base = *base_at;
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < nb;
       j += (int64_t)gridDim.x * blockDim.x)
    if (!hit[bids[j]]) {
      pout[base + brank[j]] = -1;
      bout[base + brank[j]] = j;
    }
}

__global__ void cross_kernel(int64_t nl, int64_t nr, int64_t *left, int64_t *right) {
  int64_t n = nl * nr;
  for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
       k += (int64_t)gridDim.x * blockDim.x) {
    left[k] = k / nr;
    right[k] = k % nr;
  }
}

/* out[0..n] = the exclusive sum of in[0..n) and in[n] = 0 (in has n + 1) */
cudaError_t exclusive_sum(int64_t *in, int64_t *out, int64_t n, Scratch &sc, cudaStream_t s) {
  cudaError_t e = cudaMemsetAsync(in + n, 0, sizeof *in, s);
  if (e != cudaSuccess) return e;
  size_t bytes = 0;
  e = cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n + 1, s);
  if (e != cudaSuccess) return e;
  void *tmp = sc.get(bytes);
  if (tmp == nullptr) return cudaErrorMemoryAllocation;
  return cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n + 1, s);
}

}  // namespace

extern "C" cudaError_t ldc_join_probe(const ldc_keys *build, const ldc_gtable *t,
                                      const int64_t *offsets, const uint32_t *bids, int64_t nb,
                                      int64_t ngroups, const ldc_keys *probe, int64_t np, int how,
                                      bool nulls_equal, int32_t *pgroup, int64_t *start,
                                      uint8_t *hit, int64_t *brank, const ldc_alloc *scratch,
                                      cudaStream_t stream) {
  if (np >= INT32_MAX || nb >= INT32_MAX || build->n != probe->n) return cudaErrorInvalidValue;
  bool full = how == LDC_J_FULL;
  Scratch sc(scratch);
  cudaError_t e = cudaSuccess;
  if (full && ngroups > 0) e = cudaMemsetAsync(hit, 0, (size_t)ngroups, stream);
  if (e != cudaSuccess) return e;
  int64_t *cnt = (int64_t *)sc.get((size_t)(np + 1) * 8);
  if (cnt == nullptr) return cudaErrorMemoryAllocation;
  if (np > 0) {
    /* with no build row the table is empty: every lookup finds nothing */
    probe_kernel<<<grid_for(np), kBlock, 0, stream>>>(*build, *probe, np, t->hash, t->slots, t->gid,
                                                      t->cap - 1, offsets, how, nulls_equal, pgroup,
                                                      cnt, hit);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  e = exclusive_sum(cnt, start, np, sc, stream);
  if (e != cudaSuccess || !full) return e;
  int64_t *flag = (int64_t *)sc.get((size_t)(nb + 1) * 8);
  if (flag == nullptr) return cudaErrorMemoryAllocation;
  if (nb > 0) unmet_kernel<<<grid_for(nb), kBlock, 0, stream>>>(bids, nb, hit, flag);
  return exclusive_sum(flag, brank, nb, sc, stream);
}

extern "C" cudaError_t ldc_join_emit(const int32_t *pgroup, const int64_t *start, int64_t np,
                                     const int64_t *rows, const int64_t *offsets, int how,
                                     const uint8_t *hit, const uint32_t *bids, const int64_t *brank,
                                     int64_t nb, int64_t *pout, int64_t *bout,
                                     cudaStream_t stream) {
  if (np > 0)
    emit_kernel<<<grid_for(np), kBlock, 0, stream>>>(pgroup, start, np, rows, offsets, how, pout,
                                                     bout);
  if (how == LDC_J_FULL && nb > 0)
    emit_unmet_kernel<<<grid_for(nb), kBlock, 0, stream>>>(bids, nb, hit, brank, start + np, pout,
                                                           bout);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_cross_pairs(int64_t nl, int64_t nr, int64_t *left, int64_t *right,
                                       cudaStream_t stream) {
  if (nl <= 0 || nr <= 0) return cudaSuccess;
  cross_kernel<<<grid_for(nl * nr), kBlock, 0, stream>>>(nl, nr, left, right);
  return cudaGetLastError();
}
