/* codec.c — page decompression through Debian's libraries. Each codec is optional
 * at build time (LADLE_HAVE_<CODEC>); a file that needs a missing one fails with
 * an error naming the codec. */
#include "parquet.h"

#ifdef LADLE_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef LADLE_HAVE_SNAPPY
#include <snappy-c.h>
#endif
#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef LADLE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#if defined(LADLE_HAVE_ZSTD) || defined(LADLE_HAVE_LIBDEFLATE)
#include <pthread.h>
#endif
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

ladle_status ladle_pq_decompress(int codec, const uint8_t *src, int64_t src_len, uint8_t *dst,
                                 int64_t dst_len, ladle_error *err) {
  switch (codec) {
    case 0:
      if (src_len != dst_len) return bad(codec, "sizes differ", err);
      memcpy(dst, src, (size_t)src_len);
      return LADLE_OK;
    case 1: {
#ifdef LADLE_HAVE_SNAPPY
      size_t n = 0;
      if (snappy_uncompressed_length((const char *)src, (size_t)src_len, &n) != SNAPPY_OK || (int64_t)n != dst_len)
        return bad(codec, "the uncompressed length does not match the page header", err);
      size_t out_len = (size_t)dst_len;
      if (snappy_uncompress((const char *)src, (size_t)src_len, (char *)dst, &out_len) != SNAPPY_OK ||
          (int64_t)out_len != dst_len)
        return bad(codec, "invalid snappy stream", err);
      return LADLE_OK;
#else
      return missing(codec, err);
#endif
    }
    case 2: {
#ifdef LADLE_HAVE_LIBDEFLATE
      /* libdeflate first (about twice zlib's speed); zlib framing, a stream of
       * several members or damage go on to zlib, which also names the failure */
      codec_ctx *cc = thread_ctx();
      struct libdeflate_decompressor *d =
          cc == NULL ? NULL : cc->deflate != NULL ? cc->deflate : (cc->deflate = libdeflate_alloc_decompressor());
      size_t used = 0, made = 0;
      if (d != NULL && libdeflate_gzip_decompress_ex(d, src, (size_t)src_len, dst, (size_t)dst_len, &used, &made) ==
                           LIBDEFLATE_SUCCESS &&
          (int64_t)made == dst_len)
        return LADLE_OK;
#endif
#ifdef LADLE_HAVE_ZLIB
      z_stream z;
      memset(&z, 0, sizeof z);
      if (inflateInit2(&z, 15 + 32) != Z_OK) return bad(codec, "inflateInit2 failed", err); /* gzip or zlib */
      z.next_in = (Bytef *)(uintptr_t)src;
      z.avail_in = (uInt)src_len;
      z.next_out = dst;
      z.avail_out = (uInt)dst_len;
      int r = inflate(&z, Z_FINISH);
      int64_t got = (int64_t)z.total_out;
      inflateEnd(&z);
      if ((r != Z_STREAM_END && r != Z_OK && r != Z_BUF_ERROR) || got != dst_len)
        return bad(codec, "inflate failed or gave the wrong size", err);
      return LADLE_OK;
#elif defined(LADLE_HAVE_LIBDEFLATE)
      return bad(codec, "libdeflate failed or gave the wrong size", err);
#else
      return missing(codec, err);
#endif
    }
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
