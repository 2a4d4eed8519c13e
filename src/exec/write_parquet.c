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
  ladle_column *cols = calloc(LADLE_MAX(t->schema.n, 1), sizeof *cols);
  if (cols == NULL) return LADLE_OOM(err, "write_parquet");
  ladle_status st = LADLE_OK;
  size_t made = 0;
  for (; st == LADLE_OK && made < t->schema.n; made++) {
    st = ladle_table_concat_column(t, made, &cols[made], err);
    if (st != LADLE_OK) break;
  }
  /* the engine's thread count: a pool of its own for the encoding (the result
   * holds no pool; starting threads costs far less than compressing a file) */
  ladle_pool *pool = NULL;
  if (st == LADLE_OK && r->threads > 1 && t->num_rows > 65536 &&
      ladle_pool_create(r->threads, &pool, NULL) != LADLE_OK)
    pool = NULL; /* no threads: written on this one */
  if (st == LADLE_OK) st = ladle_pq_write(&t->schema, cols, t->num_rows, path, &o, pool, err);
  if (pool != NULL) ladle_pool_destroy(pool);
  for (size_t i = 0; i < made; i++) ladle_column_release(&cols[i]);
  free(cols);
  return st;
}
