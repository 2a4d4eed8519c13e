/* op_scan.c — SCAN: an in-memory table (a Polars frame imported column by
 * column), its partitions the morsels; a table of one big partition, or of
 * too few for the threads, is re-split into morsels (slices: nothing is
 * copied). */
#include "operator.h"

static ladle_status scan_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                             ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  const ladle_table *t = pn->lp->table;
  int threads = s->k.pool ? ladle_pool_threads(s->k.pool) : 1;
  /* Fewer partitions than twice the threads (Polars' frames come in chunks
   * of 100k rows and more: TPC-H's 200k parts in 2, its 1.5M orders in 12)
   * leave threads idle in every per-morsel operator: cut into slices of
   * about a quarter of each thread's share, not below 8192 rows. */
  if (t->nchunks > 0 && t->nchunks < 2 * (size_t)threads && t->num_rows >= 2 * 8192) {
    int64_t want = (t->num_rows + 4 * threads - 1) / (4 * threads);
    want = LADLE_MIN(LADLE_MAX(want, 8192), s->k.morsel_rows);
    int64_t longest = 0;
    for (size_t k = 0; k < t->nchunks; k++) longest = LADLE_MAX(longest, t->chunks[k].length);
    if (longest > want + want / 2) return ladle_table_split(t, want, out, err);
  }
  if (t->nchunks == 1 && t->num_rows > s->k.morsel_rows)
    return ladle_table_rechunk(t, s->k.morsel_rows, out, err);
  if (t->nchunks == 0) return exec_empty_chunk(&t->schema, out, err);
  *out = ladle_table_ref((ladle_table *)(uintptr_t)t);
  return LADLE_OK;
}

const exec_operator exec_op_scan = {LADLE_POP_SCAN, scan_run, NULL, NULL};
