/* partition.cu — the CUDA backend's split of rows into parts for an
 * exchange between ranks (backend_cuda.c's hash_partition and
 * range_partition). One kernel finds each row's part: by the partition
 * hash, core.h's ladle_part_step over the keys with ladle_hash_bytes for
 * bytes, computed here bit for bit (every rank and device must agree on a
 * value's part), or by a binary search over the splitter rows in
 * sort_indices' order. CUB's stable radix sort of the row numbers by part
 * (only the bits the parts need) then lists each part's rows in input
 * order, as the CPU's counting sort does, and a binary search per part over
 * the sorted parts finds where each part starts. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <cub/device/device_radix_sort.cuh>

#include "kernels.h"
#include "keys.cuh"
#include "program.cuh"

namespace {

/* ---- the hash: core.h's lines, bit for bit ---- */

/* ladle_hash_mix */
__device__ __forceinline__ uint64_t part_mix(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

/* ladle_part_step */
__device__ __forceinline__ uint64_t part_step(uint64_t h, uint64_t v) {
  return part_mix((h * 0x9e3779b97f4a7c15ull) ^ v);
}

/* ladle_part_key_double: -0.0 as 0.0, every NaN as one NaN */
__device__ __forceinline__ uint64_t part_key_double(double d) {
  if (d != d) return 0x7ff8000000000000ull;
  if (d == 0) return 0;
  return (uint64_t)__double_as_longlong(d);
}

/* ladle_part_key_bytes: hash.c's ladle_hash_bytes seeded with the
 * partition seed, its 8-byte words read little-endian (one load where
 * the bytes are aligned, else byte by byte: nothing past the value is
 * read) */
__device__ uint64_t part_key_bytes(const uint8_t *p, uint64_t len) {
  uint64_t h = LDC_PART_SEED ^ (len * 0x9e3779b97f4a7c15ull);
  bool aligned = ((uintptr_t)p & 7) == 0;
  uint64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w = 0;
    if (aligned) {
      w = *(const uint64_t *)(p + i);
    } else {
      for (int k = 0; k < 8; k++) w |= (uint64_t)p[i + k] << (8 * k);
    }
    h = (h ^ part_mix(w)) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  for (uint64_t k = 0; i + k < len; k++) tail |= (uint64_t)p[i + k] << (8 * k);
  h ^= part_mix(tail ^ 0x2545f4914f6cdd1dull);
  return part_mix(h);
}

/* Key c's 64-bit value at valid row r (core.h's v_k): integers and
 * temporals widened (signed ones sign-extended), a Boolean 0 or 1, a float
 * as a double, bytes hashed. */
__device__ __forceinline__ uint64_t part_value(const ldc_pkey &c, int64_t r) {
  const void *v = c.values;
  switch (c.kind) {
    case LDC_U8:
      return ((const uint8_t *)v)[r];
    case LDC_U16:
      return ((const uint16_t *)v)[r];
    case LDC_U32:
      return ((const uint32_t *)v)[r];
    case LDC_U64:
      return ((const uint64_t *)v)[r];
    case LDC_I8:
      return (uint64_t)(int64_t)((const int8_t *)v)[r];
    case LDC_I16:
      return (uint64_t)(int64_t)((const int16_t *)v)[r];
    case LDC_I32:
      return (uint64_t)(int64_t)((const int32_t *)v)[r];
    case LDC_I64:
      return (uint64_t)((const int64_t *)v)[r];
    case LDC_F32:
      return part_key_double((double)((const float *)v)[r]);
    case LDC_F64:
      return part_key_double(((const double *)v)[r]);
    case LDC_PK_BOOL:
      return ((const uint8_t *)v)[r] != 0;
    case LDC_PK_STR: {
      const int64_t *off = (const int64_t *)v;
      return part_key_bytes((const uint8_t *)c.chars + off[r], (uint64_t)(off[r + 1] - off[r]));
    }
    case LDC_PK_B16:
      return part_key_bytes((const uint8_t *)v + 16 * r, 16);
    default: /* LDC_PK_NULL: no value */
      return LDC_PART_NULL;
  }
}

/* pid[i] = row i's part: h = the seed, stepped by each key's value (a null
 * LDC_PART_NULL), then core.h's ladle_part_of */
__global__ void hash_parts_kernel(const ldc_pkey *__restrict__ keys, int nkeys, int64_t n,
                                  int nparts, uint32_t *__restrict__ pid) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint64_t h = LDC_PART_SEED;
    for (int k = 0; k < nkeys; k++) {
      const ldc_pkey &c = keys[k];
      bool valid = c.kind != LDC_PK_NULL && bit(c.valid, i);
      h = part_step(h, valid ? part_value(c, i) : LDC_PART_NULL);
    }
    pid[i] = (uint32_t)(((h >> 32) * (uint64_t)nparts) >> 32);
  }
}

/* ---- the range: sort_indices' order ---- */

/* Key c's order code at valid row r: a number's norm_key, a Boolean its
 * byte (strings compare their bytes instead: split_cmp) */
__device__ __forceinline__ uint64_t order_code(const ldc_pkey &c, int64_t r) {
  if (c.kind == LDC_PK_BOOL) return ((const uint8_t *)c.values)[r];
  return c.kind < LDC_PK_BOOL ? norm_key(c.kind, c.values, r) : 0;
}

/* row r's class for key c: 0 a null placed first, 1 a value, 2 a null
 * placed last (as the splitters' classes) */
__device__ __forceinline__ int row_class(const ldc_pkey &c, int64_t r) {
  return bit(c.valid, r) ? 1 : c.nulls_last ? 2 : 0;
}

/* bytes a[0..la) against b[0..lb) as memcmp and then the lengths: < 0, 0, > 0 */
__device__ int bytes_cmp(const unsigned char *a, int64_t la, const unsigned char *b, int64_t lb) {
  int64_t m = la < lb ? la : lb;
  for (int64_t i = 0; i < m; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return la < lb ? -1 : la > lb;
}

/* Splitter s against row r in sort_indices' order over keys [from, nkeys)
 * (ns splitters; slot k * ns + s of scls/scode): < 0, 0 or > 0, as
 * sort.c's ladle_cpu_sort_cmp(splitters, s, keys, r). */
__device__ int split_cmp(const ldc_pkey *keys, int nkeys, int from, const uint8_t *scls,
                         const uint64_t *scode, int ns, int s, int64_t r) {
  for (int k = from; k < nkeys; k++) {
    const ldc_pkey &c = keys[k];
    if (c.kind == LDC_PK_NULL) continue; /* its rows are all equal */
    int64_t slot = (int64_t)k * ns + s;
    int sc = scls[slot], rc = row_class(c, r);
    if (sc != rc) return sc < rc ? -1 : 1;
    if (rc != 1) continue; /* both null */
    if (c.kind == LDC_PK_STR) {
      const int64_t *ro = (const int64_t *)c.values;
      int x = bytes_cmp((const unsigned char *)c.schars + c.soff[s], c.soff[s + 1] - c.soff[s],
                        (const unsigned char *)c.chars + ro[r], ro[r + 1] - ro[r]);
      if (c.desc) x = -x;
      if (x != 0) return x;
    } else {
      uint64_t x = scode[slot], y = order_code(c, r);
      if (c.desc) y = ~y;
      if (x != y) return x < y ? -1 : 1;
    }
  }
  return 0;
}

/* pid[i] = how many of the ns splitters (in order) are at or below row i.
 * The first key's class and code are found once a row when it has a code:
 * most comparisons end there. */
__global__ void range_parts_kernel(const ldc_pkey *__restrict__ keys, int nkeys,
                                   const uint8_t *__restrict__ scls,
                                   const uint64_t *__restrict__ scode, int ns, int64_t n,
                                   uint32_t *__restrict__ pid) {
  const ldc_pkey &c0 = keys[0];
  bool coded = c0.kind != LDC_PK_STR && c0.kind != LDC_PK_NULL;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int rc = 0;
    uint64_t y = 0;
    if (coded) {
      rc = row_class(c0, i);
      y = rc == 1 ? order_code(c0, i) : 0;
      if (c0.desc) y = ~y;
    }
    int lo = 0, hi = ns;
    while (lo < hi) {
      int mid = lo + (hi - lo) / 2, r;
      if (!coded) {
        r = split_cmp(keys, nkeys, 0, scls, scode, ns, mid, i);
      } else if (scls[mid] != rc) {
        r = scls[mid] < rc ? -1 : 1;
      } else if (rc == 1 && scode[mid] != y) {
        r = scode[mid] < y ? -1 : 1;
      } else {
        r = split_cmp(keys, nkeys, 1, scls, scode, ns, mid, i);
      }
      if (r <= 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    pid[i] = (uint32_t)lo;
  }
}

/* ---- the stable sort by part ---- */

/* starts[p] = the first position of sorted (n parts, ascending) holding
 * part p or above, for p <= nparts */
__global__ void starts_kernel(const uint32_t *sorted, int64_t n, int nparts, int64_t *starts) {
  for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p <= nparts;
       p += (int64_t)gridDim.x * blockDim.x) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if ((int64_t)sorted[mid] < p)
        lo = mid + 1;
      else
        hi = mid;
    }
    starts[p] = lo;
  }
}

/* every row in part 0 (one part, or no rows): starts 0, then n */
__global__ void one_part_kernel(int64_t n, int nparts, int64_t *starts) {
  for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p <= nparts;
       p += (int64_t)gridDim.x * blockDim.x)
    starts[p] = p == 0 ? 0 : n;
}

}  // namespace

extern "C" cudaError_t ldc_partition(const ldc_pkey *keys, int nkeys, const uint8_t *scls,
                                     const uint64_t *scode, int64_t n, int nparts, int64_t *perm,
                                     int64_t *starts, const ldc_alloc *scratch,
                                     cudaStream_t stream) {
  if (nkeys < 1 || nparts < 1 || n < 0) return cudaErrorInvalidValue;
  int g = grid_for(n), gp = grid_for((int64_t)nparts + 1);
  if (nparts == 1 || n == 0) { /* the rows in order */
    if (n > 0) iota_kernel<<<g, kBlock, 0, stream>>>(perm, n);
    one_part_kernel<<<gp, kBlock, 0, stream>>>(n, nparts, starts);
    return cudaGetLastError();
  }
  if (n >= INT32_MAX) return cudaErrorInvalidValue; /* CUB's item count is an int */
  int ns = nparts - 1;
  size_t nslots = (size_t)nkeys * (size_t)ns;
  Scratch sc(scratch);
  ldc_pkey *dkeys = (ldc_pkey *)sc.get((size_t)nkeys * sizeof *dkeys);
  uint32_t *pid = (uint32_t *)sc.get((size_t)n * 4);
  uint32_t *sorted = (uint32_t *)sc.get((size_t)n * 4);
  int64_t *seq = (int64_t *)sc.get((size_t)n * 8);
  uint8_t *dcls = scls != nullptr ? (uint8_t *)sc.get(nslots) : nullptr;
  uint64_t *dcode = scls != nullptr ? (uint64_t *)sc.get(nslots * 8) : nullptr;
  if (dkeys == nullptr || pid == nullptr || sorted == nullptr || seq == nullptr ||
      (scls != nullptr && (dcls == nullptr || dcode == nullptr)))
    return cudaErrorMemoryAllocation;
  /* the host arrays are copied out before these calls return (pageable
   * memory goes through the driver's staging) */
  cudaError_t e =
      cudaMemcpyAsync(dkeys, keys, (size_t)nkeys * sizeof *dkeys, cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess && scls != nullptr)
    e = cudaMemcpyAsync(dcls, scls, nslots, cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess && scls != nullptr)
    e = cudaMemcpyAsync(dcode, scode, nslots * 8, cudaMemcpyHostToDevice, stream);
  if (e != cudaSuccess) return e;
  if (scls == nullptr)
    hash_parts_kernel<<<g, kBlock, 0, stream>>>(dkeys, nkeys, n, nparts, pid);
  else
    range_parts_kernel<<<g, kBlock, 0, stream>>>(dkeys, nkeys, dcls, dcode, ns, n, pid);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  iota_kernel<<<g, kBlock, 0, stream>>>(seq, n);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  int bits = 1;
  while (bits < 32 && ((uint64_t)1 << bits) < (uint64_t)nparts) bits++;
  size_t bytes = 0;
  e = cub::DeviceRadixSort::SortPairs(nullptr, bytes, pid, sorted, seq, perm, (int)n, 0, bits,
                                      stream);
  if (e != cudaSuccess) return e;
  void *tmp = sc.get(bytes);
  if (tmp == nullptr) return cudaErrorMemoryAllocation;
  e = cub::DeviceRadixSort::SortPairs(tmp, bytes, pid, sorted, seq, perm, (int)n, 0, bits, stream);
  if (e != cudaSuccess) return e;
  starts_kernel<<<gp, kBlock, 0, stream>>>(sorted, n, nparts, starts);
  return cudaGetLastError();
}
