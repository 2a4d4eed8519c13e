/* parquet.cu — Parquet pages decoded on the device (backend.h's
 * parquet_decode): flat fixed-width columns, PLAIN or dictionary-encoded,
 * with or without definition levels.
 *
 * One block per data page, a window of up to WINDOW rows at a time. The
 * RLE/bit-packed hybrid streams (definition levels, dictionary indices) are
 * sequential in their run headers only: the block's first thread reads the
 * headers that cover the window into segments in shared memory (a run of one
 * value, or bit-packed values from a bit offset), and every thread then finds
 * its rows' segment and reads its value on its own. A prefix sum over the
 * window's levels gives each present row its value's place. Everything read
 * is bounds-checked against the page; the first problem found is recorded
 * (code and page) and the block stops. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels.h"

namespace {

constexpr int THREADS = 256;
constexpr int PER_THREAD = 4;
constexpr int WINDOW = THREADS * PER_THREAD;
constexpr int SEGS = 64;

struct Seg {
  int start, n;        /* values [start, start + n) of the window */
  unsigned value;      /* an RLE run's */
  int packed;          /* bit-packed: value j at bit bit0 + j * bw of bits */
  const uint8_t *bits; /* the run's first byte */
  long long bit0;
};

/* A stream's state between windows (the first thread's). */
struct Rle {
  const uint8_t *p, *end;
  int bw;
  long long left;
  int packed;
  unsigned value;
  const uint8_t *bits;
  long long bitpos;
};

__device__ void fail(int *err, int code, long long page) {
  if (atomicCAS(err, 0, code) == 0) err[1] = (int)page;
}

/* The first thread: segments covering up to `want` next values of r (fewer
 * when SEGS runs are not enough); returns the count, or -1 on bad data. */
__device__ int fill(Rle &r, Seg *segs, int want, int *nseg) {
  int covered = 0, ns = 0;
  *nseg = 0;
  while (covered < want && ns < SEGS) {
    if (r.left == 0) {
      unsigned long long h = 0;
      int shift = 0;
      bool done = false;
      while (r.p < r.end && shift < 64) {
        uint8_t b = *r.p++;
        h |= (unsigned long long)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
          done = true;
          break;
        }
      }
      if (!done) return -1;
      long long avail = r.end - r.p;
      if (h & 1) {
        unsigned long long groups = h >> 1;
        if (groups == 0 || groups > (unsigned long long)avail + 1) return -1;
        long long bytes = (long long)groups * r.bw;
        if (bytes > avail) bytes = avail; /* a last run may be cut short */
        long long count = (long long)groups * 8;
        if (r.bw > 0 && count > bytes * 8 / r.bw) count = bytes * 8 / r.bw;
        r.packed = 1;
        r.bits = r.p;
        r.bitpos = 0;
        r.left = count;
        r.p += bytes;
      } else {
        unsigned long long count = h >> 1;
        int vbytes = (r.bw + 7) / 8;
        if (count == 0 || vbytes > avail || count > (1ull << 40)) return -1;
        unsigned x = 0;
        for (int k = 0; k < vbytes; k++) x |= (unsigned)r.p[k] << (8 * k);
        if (r.bw < 32 && (x >> r.bw) != 0) return -1;
        r.p += vbytes;
        r.packed = 0;
        r.value = x;
        r.left = (long long)count;
      }
      if (r.left == 0) continue; /* a bit-packed run of no whole value */
    }
    int take = (int)(r.left < (long long)(want - covered) ? r.left : (long long)(want - covered));
    segs[ns] = Seg{covered, take, r.value, r.packed, r.bits, r.bitpos};
    if (r.packed) r.bitpos += (long long)take * r.bw;
    r.left -= take;
    covered += take;
    ns++;
  }
  *nseg = ns;
  return covered;
}

/* Value i of the window from its segments (nseg of them, ascending). */
__device__ __forceinline__ unsigned seg_value(const Seg *segs, int nseg, int bw, int i) {
  int lo = 0, hi = nseg - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) >> 1;
    if (segs[mid].start <= i)
      lo = mid;
    else
      hi = mid - 1;
  }
  const Seg &s = segs[lo];
  if (!s.packed) return s.value;
  long long pos = s.bit0 + (long long)(i - s.start) * bw;
  const uint8_t *q = s.bits + (pos >> 3);
  int sh = (int)(pos & 7), need = (sh + bw + 7) >> 3;
  unsigned long long w = 0;
  for (int k = 0; k < need; k++) w |= (unsigned long long)q[k] << (8 * k);
  return (unsigned)((w >> sh) & ((bw == 32) ? 0xffffffffull : ((1ull << bw) - 1)));
}

__device__ __forceinline__ void copy_value(uint8_t *dst, const uint8_t *src, int width) {
  if (width == 8) {
    unsigned long long v = 0;
    if (((uintptr_t)src & 7) == 0) {
      v = *(const unsigned long long *)src;
    } else {
      for (int k = 0; k < 8; k++) v |= (unsigned long long)src[k] << (8 * k);
    }
    *(unsigned long long *)dst = v;
  } else {
    unsigned v = 0;
    if (((uintptr_t)src & 3) == 0) {
      v = *(const unsigned *)src;
    } else {
      for (int k = 0; k < 4; k++) v |= (unsigned)src[k] << (8 * k);
    }
    *(unsigned *)dst = v;
  }
}

enum {
  E_PAGE = 1,
  E_ROWS,
  E_LEVELS,
  E_LEVEL_MAX,
  E_PLAIN,
  E_DICT_PAGE,
  E_INDICES,
  E_INDEX,
  E_NULLS,
  E_KIND
};

__global__ void __launch_bounds__(THREADS)
    decode_pages(const uint8_t *buf, long long nbytes, const ldc_pqpage *pages, int npages,
                 int width, int nullable, long long nrows, uint8_t *out, uint32_t *valid,
                 unsigned long long *nulls, int *err, uint32_t *ix, long long *lens) {
  typedef cub::BlockScan<int, THREADS> Scan;
  __shared__ union { typename Scan::TempStorage scan; } tmp;
  __shared__ Seg dsegs[SEGS], isegs[SEGS];
  __shared__ Rle defs, idx;
  __shared__ int s_cov, s_ndseg, s_icov, s_niseg, s_bad;
  __shared__ const uint8_t *s_vals, *s_vend, *s_dict;
  __shared__ long long s_dict_n;
  const long long pi = blockIdx.x;
  const ldc_pqpage pg = pages[pi];
  if (pg.kind == LDC_PQ_DICTIONARY) return;
  const int t = threadIdx.x;
  if (t == 0) {
    s_bad = 0;
    if (pg.kind != LDC_PQ_DICT && (pg.kind != LDC_PQ_PLAIN || width == 0)) s_bad = E_KIND;
    if (pg.offset < 0 || pg.size < 0 || pg.offset > nbytes || pg.size > nbytes - pg.offset)
      s_bad = E_PAGE;
    else if (pg.row < 0 || pg.num_values < 0 || pg.row > nrows || pg.num_values > nrows - pg.row)
      s_bad = E_ROWS;
    else if (pg.codec != 0)
      s_bad = E_KIND;
    else if (pg.def_len < 0 || pg.def_len > pg.size)
      s_bad = E_LEVELS;
    const uint8_t *base = buf + pg.offset;
    long long size = pg.size, def_len = pg.def_len;
    if (!s_bad && pg.prefixed) { /* a v1 page: the levels' length first */
      if (!nullable) {
        def_len = 0;
      } else if (size < 4) {
        s_bad = E_LEVELS;
      } else {
        def_len = (long long)base[0] | (long long)base[1] << 8 | (long long)base[2] << 16 |
                  (long long)base[3] << 24;
        base += 4;
        size -= 4;
        if (def_len > size) s_bad = E_LEVELS;
      }
    }
    if (!s_bad && nullable && def_len == 0 && pg.num_values > 0) s_bad = E_LEVELS;
    if (!s_bad) {
      defs = Rle{base, base + def_len, 1, 0, 0, 0, nullptr, 0};
      s_vals = base + def_len;
      s_vend = base + size;
      if (pg.kind == LDC_PQ_DICT) {
        if (pg.dict < 0 || pg.dict >= npages || pages[pg.dict].kind != LDC_PQ_DICTIONARY) {
          s_bad = E_DICT_PAGE;
        } else {
          const ldc_pqpage d = pages[pg.dict];
          /* strings (width 0): offsets, then bytes, checked on the host */
          if (d.offset < 0 || d.size < 0 || d.offset > nbytes || d.size > nbytes - d.offset ||
              d.num_values < 0 ||
              (width > 0 ? d.num_values > d.size / width : d.num_values > d.size / 8 - 1))
            s_bad = E_DICT_PAGE;
          s_dict = buf + d.offset;
          s_dict_n = d.num_values;
        }
        if (!s_bad && pg.num_values > 0) {
          if (s_vals >= s_vend || *s_vals > 32)
            s_bad = E_INDICES;
          else
            idx = Rle{s_vals + 1, s_vend, (int)*s_vals, 0, 0, 0, nullptr, 0};
        }
      }
    }
    if (s_bad) fail(err, s_bad, pi);
  }
  __syncthreads();
  if (s_bad) return;
  const long long n = pg.num_values;
  long long vbase = 0, page_nulls = 0;
  uint8_t *o = out + pg.row * width;
  for (long long w = 0; w < n;) {
    int want = (int)(n - w < WINDOW ? n - w : WINDOW);
    if (t == 0) {
      if (nullable) {
        int c = fill(defs, dsegs, want, &s_ndseg);
        if (c <= 0)
          s_bad = E_LEVELS;
        else
          s_cov = c;
      } else {
        s_cov = want;
      }
      if (s_bad) fail(err, s_bad, pi);
    }
    __syncthreads();
    if (s_bad) return;
    const int cov = s_cov;
    int present[PER_THREAD], pos[PER_THREAD];
    bool bad_level = false;
    for (int q = 0; q < PER_THREAD; q++) {
      int i = t * PER_THREAD + q;
      present[q] = 0;
      if (i < cov) {
        unsigned lv = nullable ? seg_value(dsegs, s_ndseg, 1, i) : 1u;
        bad_level |= lv > 1;
        present[q] = lv == 1;
      }
    }
    if (__syncthreads_or(bad_level)) {
      if (t == 0) fail(err, E_LEVEL_MAX, pi);
      return;
    }
    int total;
    Scan(tmp.scan).ExclusiveSum(present, pos, total);
    /* the rows' values */
    if (pg.kind == LDC_PQ_PLAIN) {
      if ((vbase + total) * width > (long long)(s_vend - s_vals)) {
        if (t == 0) fail(err, E_PLAIN, pi);
        return;
      }
      for (int q = 0; q < PER_THREAD; q++) {
        int i = t * PER_THREAD + q;
        if (i >= cov) break;
        uint8_t *dst = o + (w + i) * width;
        if (present[q]) copy_value(dst, s_vals + (vbase + pos[q]) * width, width);
      }
    } else {
      for (int a = 0; a < total;) {
        if (t == 0) {
          int c = fill(idx, isegs, total - a, &s_niseg);
          if (c <= 0) {
            s_bad = E_INDICES;
            fail(err, E_INDICES, pi);
          } else {
            s_icov = c;
          }
        }
        __syncthreads();
        if (s_bad) return;
        const int icov = s_icov;
        bool oob = false;
        for (int q = 0; q < PER_THREAD; q++) {
          int i = t * PER_THREAD + q;
          if (i < cov && present[q] && pos[q] >= a && pos[q] < a + icov) {
            unsigned k = seg_value(isegs, s_niseg, idx.bw, pos[q] - a);
            if ((long long)k >= s_dict_n) {
              oob = true;
            } else if (width == 0) {
              const long long *doff = (const long long *)s_dict;
              long long row = pg.row + w + i;
              ix[row] = k;
              lens[row] = doff[k + 1] - doff[k];
            } else {
              copy_value(o + (w + i) * width, s_dict + (long long)k * width, width);
            }
          }
        }
        /* (also every thread done with isegs before they are refilled) */
        if (__syncthreads_or(oob)) {
          if (t == 0) fail(err, E_INDEX, pi);
          return;
        }
        a += icov;
      }
    }
    /* validity: each warp's rows, whole words into the bitmap (pages and
     * windows share the words at their edges: or-ed in) */
    if (valid != nullptr) {
      long long r0 = pg.row + w + (long long)t * PER_THREAD;
      for (int q = 0; q < PER_THREAD; q++) {
        int i = t * PER_THREAD + q;
        if (i < cov && present[q]) atomicOr(&valid[(r0 + q) >> 5], 1u << ((r0 + q) & 31));
      }
    }
    vbase += total;
    page_nulls += cov - total;
    w += cov;
    __syncthreads();
  }
  if (t == 0) {
    if (pg.num_nulls >= 0 && pg.num_nulls != page_nulls) fail(err, E_NULLS, pi);
    if (page_nulls != 0) atomicAdd(nulls, (unsigned long long)page_nulls);
  }
}

/* A String column's bytes: each DICT page's rows (one block a page) copy
 * their entries to their offsets. */
__global__ void string_chars(const uint8_t *buf, const ldc_pqpage *pages, const uint32_t *ix,
                             const long long *offsets, uint8_t *chars) {
  const ldc_pqpage pg = pages[blockIdx.x];
  if (pg.kind != LDC_PQ_DICT) return;
  const ldc_pqpage d = pages[pg.dict];
  const long long *doff = (const long long *)(buf + d.offset);
  const uint8_t *dch = buf + d.offset + (d.num_values + 1) * 8;
  for (long long r = threadIdx.x; r < pg.num_values; r += blockDim.x) {
    long long row = pg.row + r;
    uint32_t k = ix[row];
    if (k == 0xffffffffu) continue;
    long long a = doff[k], n = doff[k + 1] - a;
    uint8_t *dst = chars + offsets[row];
    for (long long b = 0; b < n; b++) dst[b] = dch[a + b];
  }
}

__global__ void copy_spans(const ldc_span *spans) {
  const ldc_span sp = spans[blockIdx.x];
  for (long long i = threadIdx.x; i < sp.n; i += blockDim.x) sp.dst[i] = sp.src[i];
}

}  // namespace

extern "C" cudaError_t ldc_copy_spans(const ldc_span *spans, int n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  copy_spans<<<n, 256, 0, stream>>>(spans);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_parquet_decode(const uint8_t *buf, int64_t nbytes,
                                          const ldc_pqpage *pages, int npages, int width,
                                          int nullable, int64_t nrows, void *out, uint32_t *valid,
                                          unsigned long long *d_nulls, int *d_err, uint32_t *ix,
                                          int64_t *lens, cudaStream_t stream) {
  if (npages <= 0) return cudaSuccess;
  decode_pages<<<npages, THREADS, 0, stream>>>(buf, nbytes, pages, npages, width, nullable, nrows,
                                               (uint8_t *)out, valid, d_nulls, d_err, ix,
                                               (long long *)lens);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_parquet_string_chars(const uint8_t *buf, const ldc_pqpage *pages,
                                                int npages, const uint32_t *ix,
                                                const int64_t *offsets, uint8_t *chars,
                                                cudaStream_t stream) {
  if (npages <= 0) return cudaSuccess;
  string_chars<<<npages, 256, 0, stream>>>(buf, pages, ix, (const long long *)offsets, chars);
  return cudaGetLastError();
}

extern "C" cudaError_t ldc_scan_i64(const int64_t *in, int64_t *out, int64_t n,
                                    const ldc_alloc *scratch, cudaStream_t stream) {
  size_t bytes = 0;
  cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n, stream);
  if (e != cudaSuccess) return e;
  void *tmp = scratch->alloc(scratch->ctx, bytes);
  if (tmp == nullptr) return cudaErrorMemoryAllocation;
  e = cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n, stream);
  scratch->free(scratch->ctx, tmp, bytes);
  return e;
}

extern "C" const char *ldc_parquet_error(int code) {
  switch (code) {
    case E_PAGE:
      return "page outside the buffer";
    case E_ROWS:
      return "rows outside the column";
    case E_LEVELS:
      return "bad definition levels (RLE/bit-packed data)";
    case E_LEVEL_MAX:
      return "definition level above the schema's maximum";
    case E_PLAIN:
      return "PLAIN values run past the page";
    case E_DICT_PAGE:
      return "no dictionary page, or its entries run past it";
    case E_INDICES:
      return "bad dictionary indices (RLE/bit-packed data)";
    case E_INDEX:
      return "dictionary index out of range";
    case E_NULLS:
      return "the page header's null count differs from its levels";
    case E_KIND:
      return "unknown page kind, or a page left compressed";
    default:
      return "unknown problem";
  }
}
