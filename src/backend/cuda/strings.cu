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
      default: {
        int c = 0;
        int64_t m = len < plen ? len : plen;
        for (int64_t k = 0; c == 0 && k < m; k++) {
          unsigned char a = (unsigned char)x[k], b = (unsigned char)pat[k];
          c = a < b ? -1 : a > b ? 1 : 0;
        }
        if (c == 0) c = len < plen ? -1 : len > plen ? 1 : 0;
        r = op == LDC_STR_EQ   ? c == 0
            : op == LDC_STR_NE ? c != 0
            : op == LDC_STR_LT ? c < 0
            : op == LDC_STR_LE ? c <= 0
            : op == LDC_STR_GT ? c > 0
                               : c >= 0;
      }
    }
    out[i] = r;
  }
}

}  // namespace

extern "C" cudaError_t ldc_str_match(int op, const int64_t *off, const char *chars, int64_t n,
                                     const char *pat, int64_t plen, uint8_t *out,
                                     cudaStream_t stream) {
  if (op < LDC_STR_EQ || op > LDC_STR_CONTAINS || plen < 0) return cudaErrorInvalidValue;
  if (n <= 0) return cudaSuccess;
  str_match_kernel<<<grid_for(n), kBlock, 0, stream>>>(op, off, chars, n, pat, plen, out);
  return cudaGetLastError();
}
