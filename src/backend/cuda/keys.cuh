/* keys.cuh — device functions over the key columns of a group-by or a join
 * (groupby.cu, join.cu): a 64-bit hash of a row's keys, and whether two rows
 * (of one key set, or of two sets of the same types: a join's sides) have
 * equal keys. NaN equals NaN, -0.0 equals 0.0, null equals null. */
#ifndef LADLE_CUDA_KEYS_CUH
#define LADLE_CUDA_KEYS_CUH

#include "program.cuh"

namespace {

__device__ __forceinline__ uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* Key c of row r as the bits equal keys share (a float's NaN and -0.0
 * made one value). */
__device__ __forceinline__ uint64_t key_bits(const ldc_keys &k, int c, int64_t r) {
  const void *v = k.values[c];
  switch (k.width[c]) {
    case 1:
      return ((const uint8_t *)v)[r];
    case 2:
      return ((const uint16_t *)v)[r];
    case 4: {
      uint32_t b = ((const uint32_t *)v)[r];
      if (k.flt[c]) {
        float f = __uint_as_float(b);
        if (f != f) return 0x7fc00000u;
        if (f == 0.0f) return 0;
      }
      return b;
    }
    default: {
      uint64_t b = ((const uint64_t *)v)[r];
      if (k.flt[c]) {
        double d = __longlong_as_double((long long)b);
        if (d != d) return 0x7ff8000000000000ull;
        if (d == 0.0) return 0;
      }
      return b;
    }
  }
}

__device__ uint64_t row_hash(const ldc_keys &k, int64_t r) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int c = 0; c < k.n; c++) {
    uint64_t x;
    if (!bit(k.valid[c], r)) {
      x = 0x5bd1e9955bd1e995ull; /* null */
    } else if (k.width[c] != 0) {
      x = key_bits(k, c, r);
    } else {
      const int64_t *off = (const int64_t *)k.values[c];
      const unsigned char *s = (const unsigned char *)k.chars[c] + off[r];
      int64_t len = off[r + 1] - off[r];
      x = 0xcbf29ce484222325ull ^ (uint64_t)len; /* FNV-1a over the bytes */
      for (int64_t i = 0; i < len; i++) x = (x ^ s[i]) * 0x100000001b3ull;
    }
    h = mix64(h ^ (x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
  }
  return h;
}

/* whether row a of keys ka and row b of kb (keys of the same types) are equal */
__device__ bool keys_equal(const ldc_keys &ka, int64_t a, const ldc_keys &kb, int64_t b) {
  for (int c = 0; c < ka.n; c++) {
    bool va = bit(ka.valid[c], a), vb = bit(kb.valid[c], b);
    if (va != vb) return false;
    if (!va) continue;
    if (ka.width[c] != 0) {
      if (key_bits(ka, c, a) != key_bits(kb, c, b)) return false;
    } else {
      const int64_t *oa = (const int64_t *)ka.values[c], *ob = (const int64_t *)kb.values[c];
      int64_t la = oa[a + 1] - oa[a], lb = ob[b + 1] - ob[b];
      if (la != lb) return false;
      const char *x = ka.chars[c] + oa[a], *y = kb.chars[c] + ob[b];
      for (int64_t i = 0; i < la; i++)
        if (x[i] != y[i]) return false;
    }
  }
  return true;
}

/* whether row r has a null key */
__device__ __forceinline__ bool any_null(const ldc_keys &k, int64_t r) {
  for (int c = 0; c < k.n; c++)
    if (!bit(k.valid[c], r)) return true;
  return false;
}

__global__ void fill_i32_kernel(int32_t *a, int64_t n, int32_t v) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    a[i] = v;
}

/* Stream-ordered scratch memory of one launcher, freed when it returns. */
struct Scratch {
  const ldc_alloc *a;
  void *p[16];
  size_t size[16];
  int n = 0;
  explicit Scratch(const ldc_alloc *al) : a(al) {}
  void *get(size_t bytes) {
    if (n == 16) return nullptr;
    void *q = a->alloc(a->ctx, bytes < 1 ? 1 : bytes);
    if (q != nullptr) {
      p[n] = q;
      size[n++] = bytes;
    }
    return q;
  }
  ~Scratch() {
    for (int i = n - 1; i >= 0; i--) a->free(a->ctx, p[i], size[i]);
  }
};

}  // namespace

#endif /* LADLE_CUDA_KEYS_CUH */
