/* explain.c — ladle_engine_explain: the logical plan as bound, then the
 * physical plan the executor runs (src/exec/physical.c): its nodes with the
 * rewrites chosen and the run-time conditions they keep, its pipelines, and,
 * planned for more than one rank, its exchanges. */
#include <stdio.h>

#include "../exec/exec.h"

ladle_status ladle_engine_explain_ranks(const ladle_engine *e, const ladle_plan *p, int ranks,
                                        char **out_text, ladle_error *err) {
  if (e == NULL || p == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "ladle_engine_explain: no engine or plan");
  if (ranks < 0) return ladle_err_set(err, LADLE_EINVAL, "ladle_engine_explain: %d ranks", ranks);
  if (ranks == 0) ranks = e->comm->size;
  ladle_pplan_opts po = {ranks, e->backend->gather_pieces != NULL,
                         e->backend->top_k_indices != NULL};
  ladle_pplan *pp;
  LADLE_RETURN_NOT_OK(ladle_pplan_build(p, &po, &pp, err));
  char *plan = NULL;
  ladle_status st = ladle_plan_explain(p, &plan, err);
  if (st != LADLE_OK) {
    ladle_pplan_destroy(pp);
    return st;
  }
  ladle_strbuf b = {NULL, 0, 0, false};
  ladle_strbuf_printf(&b, "logical plan:\n%s\nphysical plan (engine: %d threads; %d rank%s%s):\n",
                      plan, ladle_pool_threads(e->pool), ranks, ranks == 1 ? "" : "s",
                      ranks != e->comm->size ? ", as planned for them" : "");
  free(plan);
  ladle_pplan_explain(pp, &b);
  ladle_pplan_destroy(pp);
  if (b.failed || b.data == NULL) {
    free(b.data);
    return LADLE_OOM(err, "explain text");
  }
  *out_text = b.data;
  return LADLE_OK;
}

ladle_status ladle_engine_explain(const ladle_engine *e, const ladle_plan *p, char **out_text,
                                  ladle_error *err) {
  return ladle_engine_explain_ranks(e, p, 0, out_text, err);
}
