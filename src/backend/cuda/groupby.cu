/* groupby.cu — the CUDA backend's group-by: rows grouped by key through an
 * open-addressing hash table of our own, and per-group reductions of a row
 * program's value in an order fixed by the groups (so a float sum is the
 * same every run).
 *
 * Grouping (ldc_group_keys): a 64-bit hash per row over its keys; each row
 * claims a slot of a table of at least 2n slots by compare-and-swap, or
 * joins the row already there when its keys are equal (linear probing); each
 * slot keeps its least row (atomicMin). A row that is its slot's least is a
 * group's first row: an exclusive scan over those flags numbers the groups
 * in the order of their first rows, whatever order the threads ran in.
 * ldc_group_rows then sorts the row numbers by group id (CUB's stable radix
 * sort, only the bits the ids need), which gives each group's rows in
 * ascending order and, where the id changes, the offsets.
 *
 * Reduction (ldc_grouped_reduce): a group's rows are cut into tiles of
 * kTile rows; one warp folds a tile (each lane its rows in order, then a
 * shuffle tree), and one warp per group folds the group's tiles. Integer
 * sums, counts, min and max do not depend on the order; float sums do, and
 * this order depends on the groups alone. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels.h"
#include "keys.cuh"
#include "program.cuh"

namespace {

constexpr int kTile = 256; /* rows of a group one warp folds */

/* the row of position j among the rows grouped (sel NULL: all rows) */
__device__ __forceinline__ int64_t row_at(const int64_t *sel, int64_t j) {
  return sel == nullptr ? j : sel[j];
}

__global__ void hash_kernel(const ldc_keys k, const int64_t *sel, int64_t n, uint64_t *hash) {
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
       j += (int64_t)gridDim.x * blockDim.x)
    hash[j] = row_hash(k, row_at(sel, j));
}

/* Each row into the table: the slot holding a row of equal keys, or an
 * empty one it claims; the slot's least position kept in slot_min. Slots and
 * positions are positions j among the grouped rows (sel). */
__global__ void insert_kernel(const ldc_keys k, const int64_t *sel, int64_t n, const uint64_t *hash,
                              int32_t *slots, uint64_t mask, int32_t *slot_of, int32_t *slot_min) {
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
       j += (int64_t)gridDim.x * blockDim.x) {
    uint64_t h = hash[j];
    uint64_t pos = h & mask;
    for (;;) {
      int32_t cur = slots[pos];
      if (cur < 0) {
        cur = atomicCAS(&slots[pos], -1, (int32_t)j);
        if (cur < 0) break; /* claimed */
      }
      if (hash[cur] == h && keys_equal(k, row_at(sel, cur), k, row_at(sel, j))) break;
      pos = (pos + 1) & mask;
    }
    slot_of[j] = (int32_t)pos;
    if ((int32_t)j < slot_min[pos]) atomicMin(&slot_min[pos], (int32_t)j);
  }
}

__global__ void first_flag_kernel(int64_t n, const int32_t *slot_of, const int32_t *slot_min,
                                  int32_t *flag) {
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < n;
       r += (int64_t)gridDim.x * blockDim.x)
    flag[r] = slot_min[slot_of[r]] == (int32_t)r;
}

/* group numbers of the first rows' slots, and the first rows */
__global__ void number_kernel(const int64_t *sel, int64_t n, const int32_t *slot_of,
                              const int32_t *flag, const int32_t *rank, int32_t *gid_of_slot,
                              int64_t *first, int64_t *ngroups) {
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < n;
       r += (int64_t)gridDim.x * blockDim.x) {
    if (flag[r]) {
      gid_of_slot[slot_of[r]] = rank[r];
      first[rank[r]] = row_at(sel, r);
    }
    if (r == n - 1) *ngroups = (int64_t)rank[r] + flag[r];
  }
}

__global__ void ids_kernel(int64_t n, const int32_t *slot_of, const int32_t *gid_of_slot,
                           uint32_t *ids) {
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < n;
       r += (int64_t)gridDim.x * blockDim.x)
    ids[r] = (uint32_t)gid_of_slot[slot_of[r]];
}

/* offsets where the sorted ids change (every group has rows) */
__global__ void offsets_kernel(const uint32_t *sorted, int64_t n, int64_t ngroups,
                               int64_t *offsets) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    if (i == 0 || sorted[i] != sorted[i - 1]) offsets[sorted[i]] = i;
  if (blockIdx.x == 0 && threadIdx.x == 0) offsets[ngroups] = n;
}

/* ---- grouped reductions ---- */

/* A fold so far: v (a double's bits for float sums and means, a wrapping
 * uint64 for integer sums, the value's bits for min and max), the numbers
 * met (min/max: valid and not NaN; mean: valid) and the valid values. */
struct GAcc {
  uint64_t v;
  unsigned long long nums, valid;
};

template <typename T, int OP>
__device__ __forceinline__ GAcc g_zero() {
  GAcc a{0, 0, 0};
  if constexpr (OP == LDC_G_MEAN || (OP == LDC_G_SUM && std::is_floating_point<T>::value))
    a.v = to_slot<double>(0.0);
  return a;
}

template <typename T, int OP>
__device__ __forceinline__ void g_add(GAcc &a, const GAcc &b) {
  if constexpr (OP == LDC_G_MEAN || (OP == LDC_G_SUM && std::is_floating_point<T>::value)) {
    a.v = to_slot<double>(from_slot<double>(a.v) + from_slot<double>(b.v));
  } else if constexpr (OP == LDC_G_SUM) {
    a.v += b.v;
  } else if constexpr (OP == LDC_G_MIN || OP == LDC_G_MAX) {
    if (b.nums > 0) {
      T x = from_slot<T>(a.v), y = from_slot<T>(b.v);
      if (a.nums == 0 || (OP == LDC_G_MAX ? y > x : y < x)) a.v = b.v;
    }
  }
  a.nums += b.nums;
  a.valid += b.valid;
}

/* one row's value as a fold */
template <typename T, int OP>
__device__ __forceinline__ GAcc g_lift(uint64_t r, bool valid) {
  GAcc a = g_zero<T, OP>();
  if (!valid) return a;
  T x = from_slot<T>(r);
  a.valid = 1;
  if constexpr (OP == LDC_G_MEAN) {
    a.v = to_slot<double>((double)x);
    a.nums = 1;
  } else if constexpr (OP == LDC_G_SUM && std::is_floating_point<T>::value) {
    a.v = to_slot<double>((double)x);
  } else if constexpr (OP == LDC_G_SUM && std::is_signed<T>::value) {
    a.v = (uint64_t)(int64_t)x;
  } else if constexpr (OP == LDC_G_SUM) {
    a.v = (uint64_t)x;
  } else if constexpr (OP == LDC_G_MIN || OP == LDC_G_MAX) {
    a.v = to_slot<T>(x);
    a.nums = x == x;
  }
  return a;
}

template <typename T, int OP>
__device__ __forceinline__ GAcc warp_fold(GAcc a) {
  for (int off = 16; off > 0; off /= 2) {
    GAcc o;
    o.v = __shfl_down_sync(0xffffffffu, a.v, off);
    o.nums = __shfl_down_sync(0xffffffffu, a.nums, off);
    o.valid = __shfl_down_sync(0xffffffffu, a.valid, off);
    g_add<T, OP>(a, o);
  }
  return a;
}

/* the group holding tile t: the last g with tile_off[g] <= t */
__device__ __forceinline__ int64_t group_of_tile(const int64_t *tile_off, int64_t ngroups,
                                                 int64_t t) {
  int64_t lo = 0, hi = ngroups - 1;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (tile_off[mid] <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* one warp per tile: its rows' values folded into part[t] */
template <typename T, int OP>
__global__ void tile_kernel(const ldc_prog p, const int64_t *rows, const int64_t *offsets,
                            const int64_t *tile_off, int64_t ngroups, GAcc *part) {
  __shared__ ldc_ins ins[LDC_PROG_MAX];
  for (int k = threadIdx.x; k < p.n; k += blockDim.x) ins[k] = p.ins[k];
  __syncthreads();
  int lane = threadIdx.x & 31;
  int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  int64_t nt = tile_off[ngroups];
  for (int64_t t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; t < nt; t += warps) {
    int64_t g = group_of_tile(tile_off, ngroups, t);
    int64_t start = offsets[g] + (t - tile_off[g]) * kTile;
    int64_t end = min(start + (int64_t)kTile, offsets[g + 1]);
    GAcc a = g_zero<T, OP>();
    for (int64_t j = start + lane; j < end; j += 32) {
      uint64_t r;
      bool valid;
      eval_row(ins, p, rows[j], &r, &valid);
      g_add<T, OP>(a, g_lift<T, OP>(r, valid));
    }
    a = warp_fold<T, OP>(a);
    if (lane == 0) part[t] = a;
  }
}

template <typename T, int OP>
__device__ __forceinline__ void g_store(const GAcc &a, int out_width, void *out, int64_t g,
                                        bool *valid) {
  *valid = true;
  if constexpr (OP == LDC_G_COUNT) {
    ((uint32_t *)out)[g] = (uint32_t)a.valid;
  } else if constexpr (OP == LDC_G_MEAN || (OP == LDC_G_SUM && std::is_floating_point<T>::value)) {
    double d = from_slot<double>(a.v);
    if (OP == LDC_G_MEAN) {
      *valid = a.nums > 0;
      d = *valid ? d / (double)a.nums : 0.0;
    }
    if (out_width == 4)
      ((float *)out)[g] = (float)d;
    else
      ((double *)out)[g] = d;
  } else if constexpr (OP == LDC_G_SUM) {
    int k = out_width == 1 ? LDC_U8 : out_width == 2 ? LDC_U16 : out_width == 4 ? LDC_U32 : LDC_U64;
    store_kind(k, out, g, a.v);
  } else {
    *valid = a.valid > 0;
    T x = from_slot<T>(a.v);
    if (a.nums == 0) {
      x = T(0);
      if constexpr (std::is_floating_point<T>::value)
        if (a.valid > 0) x = (T)NAN; /* only NaN met */
    }
    ((T *)out)[g] = x;
  }
}

/* one warp per group: its tiles folded in order, the value stored */
template <typename T, int OP>
__global__ void final_kernel(const GAcc *part, const int64_t *tile_off, int64_t ngroups,
                             int out_width, void *out, uint32_t *out_valid,
                             unsigned long long *nulls) {
  int lane = threadIdx.x & 31;
  int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  for (int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; g < ngroups; g += warps) {
    GAcc a = g_zero<T, OP>();
    for (int64_t t = tile_off[g] + lane; t < tile_off[g + 1]; t += 32) g_add<T, OP>(a, part[t]);
    a = warp_fold<T, OP>(a);
    if (lane == 0) {
      bool valid;
      g_store<T, OP>(a, out_width, out, g, &valid);
      if (valid)
        atomicOr(&out_valid[g >> 5], 1u << (g & 31));
      else
        atomicAdd(nulls, 1ull);
    }
  }
}

__global__ void tiles_of_kernel(const int64_t *offsets, int64_t ngroups, int64_t *tiles) {
  for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g <= ngroups;
       g += (int64_t)gridDim.x * blockDim.x)
    tiles[g] = g < ngroups ? (offsets[g + 1] - offsets[g] + kTile - 1) / kTile : 0;
}

__global__ void len_kernel(const int64_t *offsets, int64_t ngroups, uint32_t *out,
                           uint32_t *out_valid) {
  for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < ngroups;
       g += (int64_t)gridDim.x * blockDim.x) {
    out[g] = (uint32_t)(offsets[g + 1] - offsets[g]);
    atomicOr(&out_valid[g >> 5], 1u << (g & 31));
  }
}

/* ---- few groups: each column read once, in row order ---- */

constexpr int kFewThreads = 128;
constexpr int kFewChunk = 4096; /* rows per block, at least */

/* Block b folds positions [b * chunk, (b + 1) * chunk): thread t the
 * positions t, t + 128, ... of it into its own accumulator of each group,
 * then a tree over the threads per group; part[g * blocks + b]. */
template <typename T, int OP>
__global__ void few_kernel(const ldc_prog p, const uint32_t *ids, const int64_t *sel, int64_t m,
                           int ngroups, int64_t chunk, GAcc *part) {
  __shared__ ldc_ins ins[LDC_PROG_MAX];
  __shared__ GAcc acc[LDC_FEW_GROUPS][kFewThreads];
  int t = threadIdx.x;
  for (int k = t; k < p.n; k += blockDim.x) ins[k] = p.ins[k];
  for (int g = 0; g < ngroups; g++) acc[g][t] = g_zero<T, OP>();
  __syncthreads();
  int64_t start = (int64_t)blockIdx.x * chunk, end = min(start + chunk, m);
  for (int64_t j = start + t; j < end; j += kFewThreads) {
    uint64_t r;
    bool valid;
    eval_row(ins, p, row_at(sel, j), &r, &valid);
    g_add<T, OP>(acc[ids[j]][t], g_lift<T, OP>(r, valid));
  }
  __syncthreads();
  for (int w = kFewThreads / 2; w > 0; w /= 2) {
    if (t < w)
      for (int g = 0; g < ngroups; g++) g_add<T, OP>(acc[g][t], acc[g][t + w]);
    __syncthreads();
  }
  if (t < ngroups) part[(int64_t)t * gridDim.x + blockIdx.x] = acc[t][0];
}

/* group g's partials are part[g * blocks, (g + 1) * blocks): final_kernel's tiles */
__global__ void few_tiles_kernel(int64_t ngroups, int64_t blocks, int64_t *tile_off) {
  for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g <= ngroups;
       g += (int64_t)gridDim.x * blockDim.x)
    tile_off[g] = g * blocks;
}

/* scratch from the engine's allocator, freed (stream-ordered) at scope end */

/* the grouped reduction's plan: tiles of each group's rows (rows, offsets),
 * or with few groups chunks of the rows in order (ids, sel) */
struct GPlan {
  const int64_t *rows, *offsets, *tile_off;
  int64_t max_tiles, ngroups;
  const uint32_t *ids;
  const int64_t *sel;
  int64_t m, few_blocks, few_chunk; /* few_blocks 0: tiles */
};

template <typename T, int OP>
cudaError_t reduce_as(const ldc_prog *p, int out_width, const GPlan &pl, GAcc *part, void *out,
                      uint32_t *out_valid, unsigned long long *nulls, cudaStream_t s) {
  int64_t warps_per_block = kBlock / 32;
  if (pl.few_blocks > 0) {
    few_kernel<T, OP><<<(int)pl.few_blocks, kFewThreads, 0, s>>>(
        *p, pl.ids, pl.sel, pl.m, (int)pl.ngroups, pl.few_chunk, part);
  } else {
    int64_t tb = (pl.max_tiles + warps_per_block - 1) / warps_per_block;
    int tblocks = (int)(tb < 1 ? 1 : tb > 65535 * 8 ? 65535 * 8 : tb);
    tile_kernel<T, OP>
        <<<tblocks, kBlock, 0, s>>>(*p, pl.rows, pl.offsets, pl.tile_off, pl.ngroups, part);
  }
  int64_t gb = (pl.ngroups + warps_per_block - 1) / warps_per_block;
  int gblocks = (int)(gb < 1 ? 1 : gb > 65535 * 8 ? 65535 * 8 : gb);
  final_kernel<T, OP>
      <<<gblocks, kBlock, 0, s>>>(part, pl.tile_off, pl.ngroups, out_width, out, out_valid, nulls);
  return cudaGetLastError();
}

template <int OP>
cudaError_t reduce_kind(int kind, const ldc_prog *p, int out_width, const GPlan &pl, GAcc *part,
                        void *out, uint32_t *out_valid, unsigned long long *nulls, cudaStream_t s) {
#define LDC_RED(T) return reduce_as<T, OP>(p, out_width, pl, part, out, out_valid, nulls, s)
  switch (kind) {
    case LDC_U8:
      LDC_RED(uint8_t);
    case LDC_I8:
      LDC_RED(int8_t);
    case LDC_I16:
      LDC_RED(int16_t);
    case LDC_U16:
      LDC_RED(uint16_t);
    case LDC_I32:
      LDC_RED(int32_t);
    case LDC_U32:
      LDC_RED(uint32_t);
    case LDC_I64:
      LDC_RED(int64_t);
    case LDC_U64:
      LDC_RED(uint64_t);
    case LDC_F32:
      LDC_RED(float);
    case LDC_F64:
      LDC_RED(double);
  }
#undef LDC_RED
  return cudaErrorInvalidValue;
}

}  // namespace

extern "C" uint64_t ldc_gtable_cap(int64_t n) {
  uint64_t cap = 1024;
  while (cap < 2 * (uint64_t)n) cap *= 2;
  return cap;
}

extern "C" cudaError_t ldc_group_table(const ldc_keys *k, const int64_t *sel, int64_t n,
                                       const ldc_gtable *t, uint32_t *ids, int64_t *first,
                                       int64_t *d_ngroups, const ldc_alloc *scratch,
                                       cudaStream_t stream) {
  uint64_t cap = t->cap;
  if (n <= 0) { /* an empty table (a join's probe may still look into it) */
    if (cap > 0) fill_i32_kernel<<<grid_for((int64_t)cap), kBlock, 0, stream>>>(t->slots, cap, -1);
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaMemsetAsync(d_ngroups, 0, sizeof *d_ngroups, stream);
  }
  if (n >= INT32_MAX || k->n < 1 || k->n > LDC_KEYS_MAX || cap < 2 * (uint64_t)n ||
      (cap & (cap - 1)) != 0)
    return cudaErrorInvalidValue;
  Scratch sc(scratch);
  int32_t *slot_of = (int32_t *)sc.get((size_t)n * 4);
  int32_t *flag = (int32_t *)sc.get((size_t)n * 4);
  int32_t *rank = (int32_t *)sc.get((size_t)n * 4);
  if (slot_of == nullptr || flag == nullptr || rank == nullptr) return cudaErrorMemoryAllocation;
  int g = grid_for(n), gc = grid_for((int64_t)cap);
  hash_kernel<<<g, kBlock, 0, stream>>>(*k, sel, n, t->hash);
  fill_i32_kernel<<<gc, kBlock, 0, stream>>>(t->slots, (int64_t)cap, -1);
  fill_i32_kernel<<<gc, kBlock, 0, stream>>>(t->gid, (int64_t)cap, INT32_MAX);
  insert_kernel<<<g, kBlock, 0, stream>>>(*k, sel, n, t->hash, t->slots, cap - 1, slot_of, t->gid);
  first_flag_kernel<<<g, kBlock, 0, stream>>>(n, slot_of, t->gid, flag);
  size_t bytes = 0;
  cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, bytes, flag, rank, (int)n, stream);
  if (e != cudaSuccess) return e;
  void *tmp = sc.get(bytes);
  if (tmp == nullptr) return cudaErrorMemoryAllocation;
  e = cub::DeviceScan::ExclusiveSum(tmp, bytes, flag, rank, (int)n, stream);
  if (e != cudaSuccess) return e;
  /* the slots' group numbers replace their least positions */
  number_kernel<<<g, kBlock, 0, stream>>>(sel, n, slot_of, flag, rank, t->gid, first, d_ngroups);
  ids_kernel<<<g, kBlock, 0, stream>>>(n, slot_of, t->gid, ids);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_group_keys(const ldc_keys *k, const int64_t *sel, int64_t n,
                                      uint32_t *ids, int64_t *first, int64_t *d_ngroups,
                                      const ldc_alloc *scratch, cudaStream_t stream) {
  if (n <= 0) return cudaMemsetAsync(d_ngroups, 0, sizeof *d_ngroups, stream);
  if (n >= INT32_MAX) return cudaErrorInvalidValue;
  ldc_gtable t;
  t.cap = ldc_gtable_cap(n);
  Scratch sc(scratch);
  t.hash = (uint64_t *)sc.get((size_t)n * 8);
  t.slots = (int32_t *)sc.get(t.cap * 4);
  t.gid = (int32_t *)sc.get(t.cap * 4);
  if (t.hash == nullptr || t.slots == nullptr || t.gid == nullptr) return cudaErrorMemoryAllocation;
  return ldc_group_table(k, sel, n, &t, ids, first, d_ngroups, scratch, stream);
}

extern "C" cudaError_t ldc_group_rows(const uint32_t *ids, const int64_t *sel, int64_t n,
                                      int64_t ngroups, int64_t *rows, int64_t *offsets,
                                      const ldc_alloc *scratch, cudaStream_t stream) {
  if (n <= 0 || ngroups <= 0) return cudaMemsetAsync(offsets, 0, 8 * (size_t)(ngroups + 1), stream);
  if (n >= INT32_MAX) return cudaErrorInvalidValue;
  int bits = 1;
  while (bits < 32 && ((uint64_t)1 << bits) < (uint64_t)ngroups) bits++;
  Scratch sc(scratch);
  uint32_t *keys_out = (uint32_t *)sc.get((size_t)n * 4);
  int64_t *seq = sel != nullptr ? nullptr : (int64_t *)sc.get((size_t)n * 8);
  if (keys_out == nullptr || (sel == nullptr && seq == nullptr)) return cudaErrorMemoryAllocation;
  int g = grid_for(n);
  if (sel == nullptr) iota_kernel<<<g, kBlock, 0, stream>>>(seq, n);
  const int64_t *vals = sel != nullptr ? sel : seq;
  size_t bytes = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, bytes, ids, keys_out, vals, rows, (int)n,
                                                  0, bits, stream);
  if (e != cudaSuccess) return e;
  void *tmp = sc.get(bytes);
  if (tmp == nullptr) return cudaErrorMemoryAllocation;
  e = cub::DeviceRadixSort::SortPairs(tmp, bytes, ids, keys_out, vals, rows, (int)n, 0, bits,
                                      stream);
  if (e != cudaSuccess) return e;
  offsets_kernel<<<g, kBlock, 0, stream>>>(keys_out, n, ngroups, offsets);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_grouped_reduce(const ldc_prog *p, int kind, int op, int out_width,
                                          const int64_t *rows, const int64_t *offsets,
                                          const uint32_t *ids, const int64_t *sel, int64_t nrows,
                                          int64_t ngroups, void *out, uint32_t *out_valid,
                                          unsigned long long *d_nulls, const ldc_alloc *scratch,
                                          cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(d_nulls, 0, sizeof *d_nulls, stream);
  if (e == cudaSuccess && ngroups > 0)
    e = cudaMemsetAsync(out_valid, 0, (size_t)(ngroups + 31) / 32 * 4, stream);
  if (e != cudaSuccess || ngroups <= 0) return e;
  if (op == LDC_G_LEN) {
    len_kernel<<<grid_for(ngroups), kBlock, 0, stream>>>(offsets, ngroups, (uint32_t *)out,
                                                         out_valid);
    return cudaGetLastError();
  }
  if (p == nullptr || p->n < 1 || p->n > LDC_PROG_MAX) return cudaErrorInvalidValue;
  GPlan pl{rows, offsets, nullptr, 0, ngroups, ids, sel, nrows, 0, 0};
  Scratch sc(scratch);
  int64_t *tile_off = (int64_t *)sc.get((size_t)(ngroups + 1) * 8);
  if (tile_off == nullptr) return cudaErrorMemoryAllocation;
  GAcc *part;
  if (ngroups <= LDC_FEW_GROUPS && ids != nullptr) {
    /* fixed chunks of the rows: their number depends on the rows alone */
    int64_t blocks = (nrows + kFewChunk - 1) / kFewChunk;
    if (blocks > 2048) blocks = 2048;
    if (blocks < 1) blocks = 1;
    pl.few_blocks = blocks;
    pl.few_chunk = (nrows + blocks - 1) / blocks;
    pl.max_tiles = blocks * ngroups;
    part = (GAcc *)sc.get((size_t)pl.max_tiles * sizeof(GAcc));
    if (part == nullptr) return cudaErrorMemoryAllocation;
    few_tiles_kernel<<<1, kBlock, 0, stream>>>(ngroups, blocks, tile_off);
  } else {
    /* tiles per group, their offsets by a scan; at most nrows / kTile + ngroups */
    pl.max_tiles = nrows / kTile + ngroups + 1;
    int64_t *tiles = (int64_t *)sc.get((size_t)(ngroups + 1) * 8);
    part = (GAcc *)sc.get((size_t)pl.max_tiles * sizeof(GAcc));
    if (tiles == nullptr || part == nullptr) return cudaErrorMemoryAllocation;
    tiles_of_kernel<<<grid_for(ngroups + 1), kBlock, 0, stream>>>(offsets, ngroups, tiles);
    size_t bytes = 0;
    e = cub::DeviceScan::ExclusiveSum(nullptr, bytes, tiles, tile_off, ngroups + 1, stream);
    if (e != cudaSuccess) return e;
    void *tmp = sc.get(bytes);
    if (tmp == nullptr) return cudaErrorMemoryAllocation;
    e = cub::DeviceScan::ExclusiveSum(tmp, bytes, tiles, tile_off, ngroups + 1, stream);
    if (e != cudaSuccess) return e;
  }
  pl.tile_off = tile_off;
#define LDC_OP(OP) reduce_kind<OP>(kind, p, out_width, pl, part, out, out_valid, d_nulls, stream)
  switch (op) {
    case LDC_G_SUM:
      return LDC_OP(LDC_G_SUM);
    case LDC_G_MIN:
      return LDC_OP(LDC_G_MIN);
    case LDC_G_MAX:
      return LDC_OP(LDC_G_MAX);
    case LDC_G_COUNT:
      return reduce_as<uint8_t, LDC_G_COUNT>(p, out_width, pl, part, out, out_valid, d_nulls,
                                             stream);
    case LDC_G_MEAN:
      return LDC_OP(LDC_G_MEAN);
  }
#undef LDC_OP
  return cudaErrorInvalidValue;
}
