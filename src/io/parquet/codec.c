/* codec.c — page decompression through Debian's libraries. Each codec is optional
 * at build time (LADLE_HAVE_<CODEC>); a file that needs a missing one fails with
 * an error naming the codec. */
#include "parquet.h"

#ifdef LADLE_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef LADLE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#include <pthread.h>
#ifdef LADLE_HAVE_LZ4
#include <lz4.h>
#endif
#ifdef LADLE_HAVE_BROTLI
#include <brotli/decode.h>
#endif

const char *ladle_pq_codec_name(int codec) {
  static const char *names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP",  "LZO",
                                "BROTLI",       "LZ4",    "ZSTD",  "LZ4_RAW"};
  return codec >= 0 && codec < 8 ? names[codec] : "UNKNOWN";
}

#if defined(LADLE_HAVE_ZSTD) || defined(LADLE_HAVE_LIBDEFLATE)
/* Decompression contexts, one set per thread, kept between pages and freed
 * when the thread ends: ZSTD_decompress would allocate (and the kernel zero) a
 * fresh ~100 KiB context for every page. */
typedef struct codec_ctx {
#ifdef LADLE_HAVE_ZSTD
  ZSTD_DCtx *zstd;
#endif
#ifdef LADLE_HAVE_LIBDEFLATE
  struct libdeflate_decompressor *deflate;
#endif
} codec_ctx;

static pthread_key_t ctx_key;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static bool ctx_key_ok;

static void ctx_free(void *p) {
  codec_ctx *c = p;
#ifdef LADLE_HAVE_ZSTD
  ZSTD_freeDCtx(c->zstd);
#endif
#ifdef LADLE_HAVE_LIBDEFLATE
  if (c->deflate) libdeflate_free_decompressor(c->deflate);
#endif
  free(c);
}
static void ctx_key_init(void) { ctx_key_ok = pthread_key_create(&ctx_key, ctx_free) == 0; }

/* This thread's contexts (NULL when out of memory: callers use the one-shot calls) */
static codec_ctx *thread_ctx(void) {
  pthread_once(&ctx_once, ctx_key_init);
  if (!ctx_key_ok) return NULL;
  codec_ctx *c = pthread_getspecific(ctx_key);
  if (c == NULL && (c = calloc(1, sizeof *c)) != NULL && pthread_setspecific(ctx_key, c) != 0) {
    free(c);
    c = NULL;
  }
  return c;
}
#endif

static ladle_status missing(int codec, ladle_error *err) {
  return ladle_err_set(err, LADLE_ENOTSUP,
                       "codec %s is not built into this ladle (install its -dev package and rebuild)",
                       ladle_pq_codec_name(codec));
}

static ladle_status bad(int codec, const char *detail, ladle_error *err) {
  return ladle_err_set(err, LADLE_ECORRUPT, "%s data does not decompress: %s", ladle_pq_codec_name(codec),
                       detail);
}

#ifdef LADLE_HAVE_LZ4
/* Hadoop's LZ4 framing: blocks of [u32 BE decompressed size][u32 BE compressed
 * size][lz4 block]; some writers used plain LZ4 blocks under the same codec id, so
 * the caller falls back to raw LZ4 when the framing does not fit. */
static bool lz4_hadoop(const uint8_t *src, int64_t src_len, uint8_t *dst, int64_t dst_len) {
  int64_t in = 0, out = 0;
  while (in < src_len) {
    if (src_len - in < 8) return false;
    uint32_t dsz = (uint32_t)src[in] << 24 | (uint32_t)src[in + 1] << 16 | (uint32_t)src[in + 2] << 8 | src[in + 3];
    uint32_t csz = (uint32_t)src[in + 4] << 24 | (uint32_t)src[in + 5] << 16 | (uint32_t)src[in + 6] << 8 | src[in + 7];
    in += 8;
    if ((int64_t)csz > src_len - in || (int64_t)dsz > dst_len - out) return false;
    int r = LZ4_decompress_safe((const char *)src + in, (char *)dst + out, (int)csz, (int)dsz);
    if (r < 0 || (uint32_t)r != dsz) return false;
    in += csz;
    out += dsz;
  }
  return out == dst_len;
}
#endif

/* Snappy, decoded here rather than by libsnappy (about a fifth faster on
 * Parquet pages, whose streams are mostly short copies and short literals, and
 * always available: libsnappy is needed only to write). The stream is the
 * uncompressed length as a varint, then tagged elements: a literal (the low two
 * tag bits 0; length in the tag, or in 1-4 bytes after it) or a copy of
 * 4-11 bytes with an 11-bit offset (1), of 1-64 bytes with a 16-bit (2) or a
 * 32-bit offset (3). Every length and offset is checked against the input and
 * the output written so far. While 21 input and 80 output bytes remain, a
 * short literal and every copy move as fixed 16-byte blocks without other
 * checks; a copy whose offset is below 16 repeats its period 8 bytes at a
 * time. */
static inline uint16_t snappy_copy_entry(int tag) {
  /* length | extra bytes << 8 | offset high bits << 11 */
  int k = tag & 3;
  if (k == 1) return (uint16_t)((4 + ((tag >> 2) & 7)) | 1 << 8 | (tag >> 5) << 11);
  return (uint16_t)((1 + (tag >> 2)) | (k == 2 ? 2 : 4) << 8);
}

static uint16_t snappy_table[256];
static pthread_once_t snappy_once = PTHREAD_ONCE_INIT;
static void snappy_table_init(void) {
  for (int t = 0; t < 256; t++) snappy_table[t] = (t & 3) ? snappy_copy_entry(t) : 0;
}

/* Copies len bytes from off bytes back (off >= 1), 16-byte blocks when the
 * period allows; 64 + 16 bytes of the output past o may be written. */
static inline void snappy_copy_fast(uint8_t *o, int64_t off, int64_t len) {
  const uint8_t *from = o - off;
  if (off >= 16) {
    memcpy(o, from, 16);
    for (int64_t k = 16; k < len; k += 16) memcpy(o + k, from + k, 16);
    return;
  }
  /* a short period: each 8-byte store's first (q - from) bytes are final;
   * the distance doubles until it reaches 8 */
  uint8_t *q = o;
  int64_t left = len;
  uint64_t w;
  while (q - from < 8) {
    memcpy(&w, from, 8);
    memcpy(q, &w, 8);
    left -= q - from;
    q += q - from;
  }
  for (; left > 0; left -= 8, q += 8, from += 8) {
    memcpy(&w, from, 8);
    memcpy(q, &w, 8);
  }
}

static bool snappy_decode(const uint8_t *src, int64_t n, uint8_t *dst, int64_t dst_len) {
  static const uint32_t mask[5] = {0, 0xff, 0xffff, 0xffffff, 0xffffffff};
  pthread_once(&snappy_once, snappy_table_init);
  const uint8_t *p = src, *end = src + n;
  uint64_t ulen = 0;
  for (int shift = 0;; shift += 7) {
    if (p >= end || shift > 28) return false;
    uint8_t b = *p++;
    ulen |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if ((int64_t)ulen != dst_len) return false;
  uint8_t *o = dst, *oend = dst + dst_len;
  for (;;) {
    while (end - p >= 21 && oend - o >= 80) {
      uint8_t tag = *p++;
      if ((tag & 3) == 0) {
        int64_t len = (tag >> 2) + 1;
        if (len > 16) {
          p--; /* a long literal: the checked path */
          break;
        }
        memcpy(o, p, 16);
        o += len;
        p += len;
        continue;
      }
      uint32_t e = snappy_table[tag], w;
      int extra = (e >> 8) & 7;
      memcpy(&w, p, 4);
      int64_t off = (int64_t)((e >> 11) << 8) + (w & mask[extra]), len = e & 0xff;
      p += extra;
      if (off == 0 || off > o - dst) return false;
      snappy_copy_fast(o, off, len);
      o += len;
    }
    if (p >= end) break;
    uint8_t tag = *p++;
    int64_t len;
    if ((tag & 3) == 0) {
      len = (tag >> 2) + 1;
      if (len > 60) {
        int k = (int)len - 60;
        if (end - p < k) return false;
        uint32_t v = 0;
        for (int i = 0; i < k; i++) v |= (uint32_t)p[i] << (8 * i);
        len = (int64_t)v + 1;
        p += k;
      }
      if (len > end - p || len > oend - o) return false;
      memcpy(o, p, (size_t)len);
      o += len;
      p += len;
      continue;
    }
    uint32_t e = snappy_table[tag], w = 0;
    int extra = (e >> 8) & 7;
    if (end - p < extra) return false;
    for (int i = 0; i < extra; i++) w |= (uint32_t)p[i] << (8 * i);
    int64_t off = (int64_t)((e >> 11) << 8) + w;
    len = e & 0xff;
    p += extra;
    if (off == 0 || off > o - dst || len > oend - o) return false;
    if (oend - o >= 80) {
      snappy_copy_fast(o, off, len);
    } else {
      const uint8_t *from = o - off;
      for (int64_t k = 0; k < len; k++) o[k] = from[k];
    }
    o += len;
  }
  return o == oend;
}

/* GZIP pages: one gzip member (RFC 1952) or several back to back (as
 * pyarrow and Polars read them), or a zlib stream (RFC 1950, which some
 * writers use), decompressing to exactly dst_len bytes with every member's
 * CRC-32 and ISIZE (a zlib stream's Adler-32) checked: a stream that inflates
 * past the page's uncompressed size is an error (its trailer never reached),
 * as is one that stops short, and bytes after the last member that do not
 * start another. libdeflate decodes gzip members where it is built in (about
 * twice zlib's speed); zlib the rest, and everything when `zlib_only` (the
 * tests' way to reach that path). */
static ladle_status gzip_decode(const uint8_t *src, int64_t src_len, uint8_t *dst, int64_t dst_len,
                                bool zlib_only, ladle_error *err) {
  bool gzip = src_len >= 2 && src[0] == 0x1f && src[1] == 0x8b;
#ifdef LADLE_HAVE_LIBDEFLATE
  codec_ctx *cc = zlib_only || !gzip ? NULL : thread_ctx();
  struct libdeflate_decompressor *d = cc == NULL ? NULL
                                      : cc->deflate != NULL
                                          ? cc->deflate
                                          : (cc->deflate = libdeflate_alloc_decompressor());
  if (d != NULL) {
    int64_t in = 0, out = 0;
    while (in < src_len) {
      if (src_len - in < 2 || src[in] != 0x1f || src[in + 1] != 0x8b)
        return bad(2, "bytes after the last gzip member", err);
      size_t used = 0, made = 0;
      enum libdeflate_result r = libdeflate_gzip_decompress_ex(
          d, src + in, (size_t)(src_len - in), dst + out, (size_t)(dst_len - out), &used, &made);
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
        return bad(2, "inflates past the page's uncompressed size", err);
      if (r != LIBDEFLATE_SUCCESS)
        return bad(2, "corrupt deflate data, or a CRC-32/ISIZE mismatch", err);
      in += (int64_t)used;
      out += (int64_t)made;
    }
    if (out != dst_len) return bad(2, "inflates to less than the page's uncompressed size", err);
    return LADLE_OK;
  }
#endif
#ifdef LADLE_HAVE_ZLIB
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK)
    return bad(2, "inflateInit2 failed", err); /* gzip or zlib */
  z.next_in = (Bytef *)(uintptr_t)src;
  z.avail_in = (uInt)src_len;
  z.next_out = dst;
  z.avail_out = (uInt)dst_len;
  const char *why = NULL;
  for (;;) {
    int r = inflate(&z, Z_FINISH);
    if (r == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      /* another gzip member may follow a gzip member */
      if (!gzip || z.avail_in < 2 || z.next_in[0] != 0x1f || z.next_in[1] != 0x8b) {
        why = "bytes after the last gzip member";
        break;
      }
      if (inflateReset(&z) != Z_OK) {
        why = "inflateReset failed";
        break;
      }
      continue;
    }
    if (r == Z_BUF_ERROR || r == Z_OK)
      why =
          z.avail_out == 0 ? "inflates past the page's uncompressed size" : "the stream is cut off";
    else
      why = z.msg != NULL ? z.msg : "inflate failed";
    break;
  }
  if (why == NULL && z.avail_out != 0) why = "inflates to less than the page's uncompressed size";
  ladle_status st = why != NULL ? bad(2, why, err) : LADLE_OK; /* before inflateEnd frees z.msg */
  inflateEnd(&z);
  return st;
#else
  (void)gzip;
  (void)zlib_only;
  return missing(2, err);
#endif
}

ladle_status ladle_pq_inflate(const uint8_t *src, int64_t src_len, uint8_t *dst, int64_t dst_len,
                              bool zlib_only, ladle_error *err) {
  return gzip_decode(src, src_len, dst, dst_len, zlib_only, err);
}

/* for the tests: the decoder on its own */
bool ladle_pq_snappy_decode(const uint8_t *src, int64_t n, uint8_t *dst, int64_t dst_len) {
  return snappy_decode(src, n, dst, dst_len);
}

ladle_status ladle_pq_decompress(int codec, const uint8_t *src, int64_t src_len, uint8_t *dst,
                                 int64_t dst_len, ladle_error *err) {
  switch (codec) {
    case 0:
      if (src_len != dst_len) return bad(codec, "sizes differ", err);
      memcpy(dst, src, (size_t)src_len);
      return LADLE_OK;
    case 1:
      if (!snappy_decode(src, src_len, dst, dst_len)) return bad(codec, "invalid snappy stream or wrong length", err);
      return LADLE_OK;
    case 2:
      return gzip_decode(src, src_len, dst, dst_len, false, err);
    case 4: {
#ifdef LADLE_HAVE_BROTLI
      size_t out_len = (size_t)dst_len;
      if (BrotliDecoderDecompress((size_t)src_len, src, &out_len, dst) != BROTLI_DECODER_RESULT_SUCCESS ||
          (int64_t)out_len != dst_len)
        return bad(codec, "BrotliDecoderDecompress failed", err);
      return LADLE_OK;
#else
      return missing(codec, err);
#endif
    }
    case 5:
    case 7: {
#ifdef LADLE_HAVE_LZ4
      if (codec == 5 && lz4_hadoop(src, src_len, dst, dst_len)) return LADLE_OK;
      int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)src_len, (int)dst_len);
      if (r < 0 || r != dst_len) return bad(codec, "LZ4_decompress_safe failed", err);
      return LADLE_OK;
#else
      return missing(codec, err);
#endif
    }
    case 6: {
#ifdef LADLE_HAVE_ZSTD
      codec_ctx *cc = thread_ctx();
      ZSTD_DCtx *z = cc == NULL ? NULL : cc->zstd != NULL ? cc->zstd : (cc->zstd = ZSTD_createDCtx());
      size_t r = z != NULL ? ZSTD_decompressDCtx(z, dst, (size_t)dst_len, src, (size_t)src_len)
                           : ZSTD_decompress(dst, (size_t)dst_len, src, (size_t)src_len);
      if (ZSTD_isError(r) || (int64_t)r != dst_len) return bad(codec, ZSTD_isError(r) ? ZSTD_getErrorName(r) : "wrong size", err);
      return LADLE_OK;
#else
      return missing(codec, err);
#endif
    }
    default: return missing(codec, err);
  }
}
