/* write_parquet.c — a result to a Parquet file (the public entry point; the
 * encoding lives in src/io/parquet/writer.c). */
#include <stdlib.h>
#include <string.h>

#include "../io/parquet/parquet.h"
#include "exec.h"

/* A GPU result's pages compressed on its device (the backend's
 * compress_pages), the engine's threads copying them in and out. */
typedef struct device_compressor {
  const ladle_backend *be;
  ladle_kctx k;
} device_compressor;

static ladle_status device_compress(void *ctx, int codec, size_t n, const uint8_t *const *in,
                                    const int64_t *len, uint8_t **block, int64_t *off,
                                    int64_t *outlen, ladle_error *err) {
  device_compressor *d = ctx;
  return d->be->compress_pages(&d->k, codec, n, in, len, block, off, outlen, err);
}

/* Whether a result's pages go to its device for compression: asked for
 * (LADLE_DEVICE_COMPRESS=1), a GPU result whose backend compresses the codec.
 * Off by default: on an H100 host with 16 cores, the demo's 25M-row files
 * took 1.23 s with nvCOMP compressing 512 KiB pages in one batch a window
 * against 0.73 s with zstd on the host's threads (the host copies down
 * through the pinned staging buffers); nvCOMP's files were 4% smaller. A
 * host with few cores per GPU may gain. */
static bool device_compresses(const ladle_result *r, int codec) {
  const char *v = getenv("LADLE_DEVICE_COMPRESS");
  if (v == NULL || strcmp(v, "1") != 0) return false;
  return r->dev != NULL && r->be != NULL && r->be->compress_pages != NULL &&
         r->be->compress_codecs != NULL && codec > 0 && codec < 32 &&
         (r->be->compress_codecs(&r->k) >> codec & 1u);
}

ladle_status ladle_result_write_parquet(const ladle_result *r, const char *path,
                                        const ladle_parquet_write_opts *opts, ladle_error *err) {
  ladle_parquet_write_opts o = {6, 0, 0, true, true};
  if (opts != NULL) o = *opts;
  double t0 = LADLE_PHASE_START();
  LADLE_RETURN_NOT_OK(ladle_result_plain(r, err));
  const ladle_table *t = r->table;
  LADLE_PHASE_END(r->dev != NULL ? "write_parquet: the result copied to the host"
                                 : "write_parquet: the result's columns made plain",
                  t->num_rows, t0);
  /* the engine's thread count: a pool of its own for the encoding (the result
   * holds no pool; starting threads costs far less than compressing a file) */
  ladle_pool *pool = NULL;
  if (r->threads > 1 && t->num_rows > 65536 &&
      ladle_pool_create(r->threads, &pool, NULL) != LADLE_OK)
    pool = NULL; /* no threads: written on this one */
  device_compressor dc = {r->be, r->k};
  dc.k.pool = pool;
  ladle_pq_compressor comp = {device_compress, &dc};
  ladle_status st =
      ladle_pq_write(t, path, &o, pool, device_compresses(r, o.codec) ? &comp : NULL, err);
  if (pool != NULL) ladle_pool_destroy(pool);
  return st;
}
