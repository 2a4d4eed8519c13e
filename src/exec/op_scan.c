/* op_scan.c — SCAN: an in-memory table (a Polars frame imported column by
 * column), its partitions the morsels; a table of one big partition, or of
 * too few for the threads, is re-split into morsels (slices: nothing is
 * copied). */
#include "operator.h"

static ladle_status scan_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                             ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  const ladle_table *t = pn->lp->table;
  if (s->columns) return exec_columns_scan(s, t, true, out, err);
  if (exec_table_on_device(t)) {
    /* a GPU result scanned again, by its engine's host fallback: down once */
    ladle_table *h;
    LADLE_RETURN_NOT_OK(exec_table_to_host(s, t, &h, err));
    ladle_status st = ladle_table_rechunk(h, s->k.morsel_rows, out, err);
    ladle_table_release(h);
    return st;
  }
  int64_t want = exec_split_rows(s, t);
  if (want > 0) return ladle_table_split(t, want, out, err);
  if (t->nchunks == 1 && t->num_rows > s->k.morsel_rows)
    return ladle_table_rechunk(t, s->k.morsel_rows, out, err);
  if (t->nchunks == 0) return exec_empty_chunk(&t->schema, out, err);
  *out = ladle_table_ref((ladle_table *)(uintptr_t)t);
  return LADLE_OK;
}

const exec_operator exec_op_scan = {LADLE_POP_SCAN, scan_run, NULL, NULL, NULL};
