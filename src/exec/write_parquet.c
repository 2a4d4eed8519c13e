/* write_parquet.c — a result to a Parquet file (the public entry point; the
 * encoding lives in src/io/parquet/writer.c). */
#include "../io/parquet/parquet.h"
#include "exec.h"

ladle_status ladle_result_write_parquet(const ladle_result *r, const char *path,
                                        const ladle_parquet_write_opts *opts, ladle_error *err) {
  ladle_parquet_write_opts o = {6, 0, 0, true, true};
  if (opts != NULL) o = *opts;
  LADLE_RETURN_NOT_OK(ladle_result_plain(r, err));
  const ladle_table *t = r->table;
  /* the engine's thread count: a pool of its own for the encoding (the result
   * holds no pool; starting threads costs far less than compressing a file) */
  ladle_pool *pool = NULL;
  if (r->threads > 1 && t->num_rows > 65536 &&
      ladle_pool_create(r->threads, &pool, NULL) != LADLE_OK)
    pool = NULL; /* no threads: written on this one */
  ladle_status st = ladle_pq_write(t, path, &o, pool, err);
  if (pool != NULL) ladle_pool_destroy(pool);
  return st;
}
