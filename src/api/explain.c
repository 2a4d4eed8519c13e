/* explain.c — ladle_engine_explain: the plan's text, then how the executor
 * runs it: its pipelines (row-wise nodes run chunk by chunk into a pipeline
 * breaker) and its exchanges. Today the group-by is the only breaker with
 * partial and final steps; every other node runs on its own and materialises
 * its output (docs/architecture.md). */
#include <stdio.h>

#include "../exec/exec.h"

static const char *kind_name(ladle_node_kind k) {
  static const char *const names[] = {"SCAN",     "FILTER",    "SELECT",       "WITH_COLUMNS",
                                      "GROUP_BY", "JOIN",      "SORT",         "SLICE",
                                      "DISTINCT", "UNION",     "HCONCAT",      "CACHE",
                                      "PROJECT",  "ROW_INDEX", "SCAN_PARQUET", "SCAN_CSV"};
  return (int)k >= 0 && (size_t)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static void pipelines(const ladle_engine *e, const ladle_plan *p, int *n, ladle_strbuf *b) {
  for (size_t i = 0; i < p->ninputs; i++) pipelines(e, p->inputs[i], n, b);
  if (p->kind != LADLE_NODE_GROUP_BY || !ladle_exec_group_by_splits(p)) return;
  const ladle_plan *src = ladle_exec_group_by_source(p);
  ladle_strbuf_printf(b, "  %d. ", ++*n);
  if (src != NULL) {
    const ladle_plan *chain[64];
    size_t k = 0;
    for (const ladle_plan *r = p->inputs[0]; r != src && k < 64; r = r->inputs[0]) chain[k++] = r;
    ladle_strbuf_printf(b, "%s (its output) -> ", kind_name(src->kind));
    while (k > 0) ladle_strbuf_printf(b, "%s -> ", kind_name(chain[--k]->kind));
  } else {
    ladle_strbuf_printf(b, "%s (its output) -> ", kind_name(p->inputs[0]->kind));
  }
  ladle_strbuf_printf(
      b, "GROUP_BY partial, per chunk | EXCHANGE %s%s (%d rank%s%s) | GROUP_BY final\n",
      p->nkeys > 0 ? "hash" : "gather", p->nkeys > 0 ? " by the keys" : " to one rank",
      e->comm->size, e->comm->size == 1 ? "" : "s", e->comm->size == 1 ? ": the identity" : "");
}

ladle_status ladle_engine_explain(const ladle_engine *e, const ladle_plan *p, char **out_text,
                                  ladle_error *err) {
  if (e == NULL || p == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "ladle_engine_explain: no engine or plan");
  char *plan = NULL;
  LADLE_RETURN_NOT_OK(ladle_plan_explain(p, &plan, err));
  ladle_strbuf b = {NULL, 0, 0, false};
  ladle_strbuf_printf(&b, "%s", plan);
  free(plan);
  int n = 0;
  ladle_strbuf_printf(&b, "\npipelines (engine: %d threads, %d rank%s):\n",
                      ladle_pool_threads(e->pool), e->comm->size, e->comm->size == 1 ? "" : "s");
  pipelines(e, p, &n, &b);
  if (n == 0) ladle_strbuf_printf(&b, "  none\n");
  ladle_strbuf_printf(
      &b,
      "  (a group-by takes its pipeline on inputs of 100,000 rows or more in four "
      "chunks or more and fewer than one group per 8 rows; every other node runs on "
      "its own and materialises its output)\n");
  if (b.failed || b.data == NULL) {
    free(b.data);
    return LADLE_OOM(err, "explain text");
  }
  *out_text = b.data;
  return LADLE_OK;
}
