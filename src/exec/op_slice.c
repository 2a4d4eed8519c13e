/* op_slice.c — SLICE: a window of rows (negative offsets from the end), as
 * slices of the partitions it covers; nothing is copied. */
#include <stdlib.h>

#include "operator.h"

static ladle_status slice_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  /* sharded over ranks: the window of the job's rows in rank order, each
   * rank keeping its part of it */
  int64_t mine = in->num_rows, before = 0, n = mine;
  if (pn->dist != LADLE_DIST_REPLICATED)
    LADLE_RETURN_NOT_OK(exec_rank_rows(s, mine, &before, &n, err));
  int64_t off = p->offset;
  if (off < 0) off = LADLE_MAX(n + off, 0);
  off = LADLE_MIN(off, n);
  int64_t len = p->length < 0 ? n - off : LADLE_MIN(p->length, n - off);
  if (p->offset < 0 && p->length >= 0 && n + p->offset < 0) {
    /* a window that starts before the first row keeps only its overlap */
    len = LADLE_MAX(0, LADLE_MIN(p->length + (n + p->offset), n));
  }
  if (n != mine || before != 0) { /* this rank's rows [before, before + mine) */
    int64_t lo = LADLE_MAX(off, before), hi = LADLE_MIN(off + len, before + mine);
    off = hi > lo ? lo - before : 0;
    len = LADLE_MAX(hi - lo, 0);
  }
  if (s->columns) return exec_columns_slice(s, pn, in, off, len, out, err);
  size_t nchunks = 0;
  int64_t pos = 0;
  for (size_t k = 0; k < in->nchunks; k++) {
    int64_t a = pos, b = pos + in->chunks[k].length;
    if (b > off && a < off + len) nchunks++;
    pos = b;
  }
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_table_create(&p->schema, nchunks, &t, err));
  pos = 0;
  size_t j = 0;
  ladle_status st = LADLE_OK;
  for (size_t k = 0; k < in->nchunks && st == LADLE_OK; k++) {
    int64_t a = pos, b = pos + in->chunks[k].length;
    pos = b;
    if (!(b > off && a < off + len)) continue;
    int64_t s0 = LADLE_MAX(off, a) - a, e0 = LADLE_MIN(off + len, b) - a;
    t->chunks[j].length = e0 - s0;
    for (size_t i = 0; i < p->schema.n && st == LADLE_OK; i++)
      st =
          ladle_column_slice(&in->chunks[k].columns[i], s0, e0 - s0, &t->chunks[j].columns[i], err);
    j++;
  }
  ladle_table_seal(t);
  if (st != LADLE_OK) {
    ladle_table_release(t);
    return st;
  }
  *out = t;
  return LADLE_OK;
}

static ladle_status slice_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                              ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  return exec_run_unary(s, pn, slice_table, out, err);
}

const exec_operator exec_op_slice = {LADLE_POP_SLICE, slice_run, NULL, NULL, NULL};
