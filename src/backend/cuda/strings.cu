/* strings.cu — String columns against one pattern: comparisons in Polars'
 * byte order, starts_with, ends_with and plain-substring contains; one
 * thread per row over its bytes (TPC-H's strings are tens of bytes). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "program.cuh"

namespace {

__device__ __forceinline__ bool same(const char *x, const char *p, int64_t len) {
  for (int64_t k = 0; k < len; k++)
    if (x[k] != p[k]) return false;
  return true;
}

/* bytes x[0..lx) op y[0..ly) in byte order, the shorter first on a tie
 * (op LDC_STR_EQ to LDC_STR_GE) */
__device__ __forceinline__ bool compare(int op, const char *x, int64_t lx, const char *y,
                                        int64_t ly) {
  int c = 0;
  int64_t m = lx < ly ? lx : ly;
  for (int64_t k = 0; c == 0 && k < m; k++) {
    unsigned char p = (unsigned char)x[k], q = (unsigned char)y[k];
    c = p < q ? -1 : p > q ? 1 : 0;
  }
  if (c == 0) c = lx < ly ? -1 : lx > ly ? 1 : 0;
  return op == LDC_STR_EQ   ? c == 0
         : op == LDC_STR_NE ? c != 0
         : op == LDC_STR_LT ? c < 0
         : op == LDC_STR_LE ? c <= 0
         : op == LDC_STR_GT ? c > 0
                            : c >= 0;
}

/* the pieces of pat (NUL-separated) in order within one line of x */
__device__ bool seq_in_lines(const char *x, int64_t len, const char *pat, int64_t plen) {
  int64_t line = 0;
  for (;;) {
    int64_t end = line;
    while (end < len && x[end] != '\n') end++;
    int64_t at = line;
    bool ok = true;
    for (int64_t a = 0; ok && a <= plen;) {
      int64_t b = a;
      while (b < plen && pat[b] != '\0') b++;
      if (b > a) {
        int64_t m = b - a, f = -1;
        for (int64_t k = at; f < 0 && k + m <= end; k++)
          if (same(x + k, pat + a, m)) f = k;
        ok = f >= 0;
        if (ok) at = f + m;
      }
      a = b + 1;
    }
    if (ok) return true;
    if (end >= len) return false;
    line = end + 1;
  }
}

__global__ void str_match_kernel(int op, const int64_t *off, const char *chars, int64_t n,
                                 const char *pat, int64_t plen, uint8_t *out) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const char *x = chars + off[i];
    int64_t len = off[i + 1] - off[i];
    bool r = false;
    switch (op) {
      case LDC_STR_STARTS_WITH:
        r = len >= plen && same(x, pat, plen);
        break;
      case LDC_STR_ENDS_WITH:
        r = len >= plen && same(x + len - plen, pat, plen);
        break;
      case LDC_STR_CONTAINS:
        for (int64_t k = 0; !r && k + plen <= len; k++) r = same(x + k, pat, plen);
        break;
      case LDC_STR_CONTAINS_SEQ:
        r = seq_in_lines(x, len, pat, plen);
        break;
      default:
        r = compare(op, x, len, pat, plen);
    }
    out[i] = r;
  }
}

/* a op b for rows of two String columns; validity: both valid, as 32-bit
 * words by warp ballots (threads of a warp take 32 consecutive rows), the
 * nulls counted into *d_nulls */
__global__ void str_compare_kernel(int op, const int64_t *aoff, const char *achars,
                                   const uint8_t *av, const int64_t *boff, const char *bchars,
                                   const uint8_t *bv, int64_t n, uint8_t *out, uint32_t *out_valid,
                                   unsigned long long *d_nulls) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i - (threadIdx.x & 31) < n;
       i += stride) {
    bool in = i < n, valid = in && bit(av, i) && bit(bv, i);
    if (in)
      out[i] = compare(op, achars + aoff[i], aoff[i + 1] - aoff[i], bchars + boff[i],
                       boff[i + 1] - boff[i]);
    unsigned ok = __ballot_sync(0xffffffffu, valid), rows = __ballot_sync(0xffffffffu, in);
    if ((threadIdx.x & 31) == 0) {
      out_valid[i >> 5] = ok;
      int nulls = __popc(rows & ~ok);
      if (nulls > 0) atomicAdd(d_nulls, (unsigned long long)nulls);
    }
  }
}

}  // namespace

extern "C" cudaError_t ldc_str_compare(int op, const int64_t *aoff, const char *achars,
                                       const uint8_t *av, const int64_t *boff, const char *bchars,
                                       const uint8_t *bv, int64_t n, uint8_t *out,
                                       uint32_t *out_valid, unsigned long long *d_nulls,
                                       cudaStream_t stream) {
  if (op < LDC_STR_EQ || op > LDC_STR_GE) return cudaErrorInvalidValue;
  cudaError_t e = cudaMemsetAsync(d_nulls, 0, sizeof *d_nulls, stream);
  if (e != cudaSuccess || n <= 0) return e;
  str_compare_kernel<<<grid_for(n), kBlock, 0, stream>>>(op, aoff, achars, av, boff, bchars, bv, n,
                                                         out, out_valid, d_nulls);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_str_match(int op, const int64_t *off, const char *chars, int64_t n,
                                     const char *pat, int64_t plen, uint8_t *out,
                                     cudaStream_t stream) {
  if (op < LDC_STR_EQ || op > LDC_STR_CONTAINS_SEQ || plen < 0) return cudaErrorInvalidValue;
  if (n <= 0) return cudaSuccess;
  str_match_kernel<<<grid_for(n), kBlock, 0, stream>>>(op, off, chars, n, pat, plen, out);
  return cudaGetLastError();
}
