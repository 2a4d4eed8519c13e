/* op_row_index.c — ROW_INDEX: a UInt32 (or UInt64) row number column in
 * front, each partition's numbers from the rows before it. */
#include <stdlib.h>

#include "operator.h"

static ladle_status row_index_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                    ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  /* sharded over ranks: numbered in the job's row order (rank order) */
  int64_t before = 0, total = in->num_rows;
  if (pn->dist != LADLE_DIST_REPLICATED)
    LADLE_RETURN_NOT_OK(exec_rank_rows(s, in->num_rows, &before, &total, err));
  ladle_dtype type = p->schema.types[0];
  if (type.id == LADLE_TYPE_UINT32 && total + p->offset > (int64_t)UINT32_MAX + 1)
    return ladle_err_set(err, LADLE_ECOMPUTE, "with_row_index: %lld rows overflow UInt32",
                         (long long)total);
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_table_create(&p->schema, in->nchunks, &t, err));
  int64_t pos = p->offset + before;
  for (size_t k = 0; k < in->nchunks; k++) {
    int64_t len = in->chunks[k].length;
    t->chunks[k].length = len;
    /* the row numbers pos, pos + 1, ... of the chunk (in UInt32: checked above) */
    ladle_status st = s->be->sequence(&s->k, pos, len, type, &t->chunks[k].columns[0], err);
    if (st != LADLE_OK) {
      ladle_table_release(t);
      return st;
    }
    pos += len;
    for (size_t i = 1; i < p->schema.n; i++)
      ladle_column_copy_ref(&in->chunks[k].columns[i - 1], &t->chunks[k].columns[i]);
  }
  ladle_table_seal(t);
  *out = t;
  return LADLE_OK;
}

static ladle_status row_index_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                  ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  return exec_run_unary(s, pn, row_index_table, out, err);
}

const exec_operator exec_op_row_index = {LADLE_POP_ROW_INDEX, row_index_run, NULL, NULL, NULL};
