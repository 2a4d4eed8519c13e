/* op_distinct.c — DISTINCT: group ids over the subset's columns, the row
 * kept per group (first, last, any, or none of a repeated key), in order of
 * appearance. */
#include <stdlib.h>

#include "operator.h"

static ladle_status distinct_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                   ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  ladle_table *c;
  LADLE_RETURN_NOT_OK(ladle_table_combine(in, &c, err));
  size_t nk = p->nsubset, nc = p->schema.n;
  ladle_column *keys = malloc(LADLE_MAX(nk, 1) * sizeof *keys);
  ladle_column *cols = calloc(LADLE_MAX(nc, 1), sizeof *cols);
  ladle_groups g;
  memset(&g, 0, sizeof g);
  int64_t *rows = NULL, n = 0;
  ladle_status st = keys && cols ? LADLE_OK : LADLE_OOM(err, "unique");
  for (size_t i = 0; st == LADLE_OK && i < nk; i++) keys[i] = c->chunks[0].columns[p->subset[i]];
  if (st == LADLE_OK) st = s->be->group_ids(&s->k, keys, nk, &g, err);
  /* the rows kept, in order of appearance (Polars promises it with
   * maintain_order; ladle always keeps it) */
  if (st == LADLE_OK) st = s->be->distinct_rows(&s->k, &g, p->keep, &rows, &n, err);
  if (st == LADLE_OK) st = exec_gather_columns(s, c->chunks[0].columns, nc, rows, n, cols, err);
  ladle_groups_release(&g);
  free(keys);
  free(rows);
  ladle_table_release(c);
  if (st == LADLE_OK) st = exec_table_from_columns(s, &p->schema, cols, n, out, err);
  free(cols);
  return st;
}

static ladle_status distinct_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                 ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  if (s->columns) return exec_columns_distinct(s, pn, out, err);
  return exec_run_unary(s, pn, distinct_table, out, err);
}

const exec_operator exec_op_distinct = {LADLE_POP_DISTINCT, distinct_run, NULL, NULL, NULL};
