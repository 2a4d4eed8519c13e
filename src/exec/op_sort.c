/* op_sort.c — SORT and TOP_K: the backend's sort indices over the keys (a
 * top-k kernel when k is well below the rows), then the rows gathered. */
#include <stdlib.h>

#include "operator.h"

static ladle_status sort_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                               ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  size_t nk = p->nexprs;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  int64_t *perm = NULL;
  ladle_status st = keys ? exec_eval_whole(s, p->exprs, nk, in, keys, err) : LADLE_OOM(err, "sort");
  bool have_keys = st == LADLE_OK;
  int64_t n = in->num_rows;
  /* a sort under head(k) with k well below the rows: the backend's top-k */
  bool top_k = p->limit >= 0 && p->limit <= n / 8 && p->limit <= ((int64_t)1 << 20) &&
               s->be->top_k_indices != NULL;
  double t0 = LADLE_PHASE_START();
  if (st == LADLE_OK && top_k)
    st = s->be->top_k_indices(&s->k, keys, nk, p->descending, p->nulls_last, p->limit, &perm, err);
  else if (st == LADLE_OK)
    st = s->be->sort_indices(&s->k, keys, nk, p->descending, p->nulls_last, &perm, err);
  LADLE_PHASE_END(top_k ? "top-k indices" : "sort indices", n, t0);
  if (p->limit >= 0 && p->limit < n) n = p->limit;
  t0 = LADLE_PHASE_START();
  if (st == LADLE_OK) st = exec_gather_rows(s, pn->views, in, perm, n, out, err);
  LADLE_PHASE_END("sort gather", n, t0);
  if (have_keys)
    for (size_t i = 0; i < nk; i++) ladle_column_release(&keys[i]);
  free(keys);
  free(perm);
  return st;
}

static ladle_status sort_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                             ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  if (s->columns) return exec_columns_sort(s, pn, out, err);
  return exec_run_unary(s, pn, sort_table, out, err);
}

const exec_operator exec_op_sort = {LADLE_POP_SORT, sort_run, NULL, NULL, NULL};
const exec_operator exec_op_top_k = {LADLE_POP_TOP_K, sort_run, NULL, NULL, NULL};
