/* explain.c — ladle_engine_explain: the logical plan as bound, then the
 * physical plan the executor runs (src/exec/physical.c): its nodes with the
 * rewrites chosen and the run-time conditions they keep, its pipelines, and,
 * planned for more than one rank, its exchanges. */
#include <stdio.h>
#include <string.h>

#include "../exec/exec.h"

ladle_status ladle_engine_explain_ranks(const ladle_engine *e, const ladle_plan *p, int ranks,
                                        char **out_text, ladle_error *err) {
  if (e == NULL || p == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "ladle_engine_explain: no engine or plan");
  if (ranks < 0) return ladle_err_set(err, LADLE_EINVAL, "ladle_engine_explain: %d ranks", ranks);
  if (ranks == 0) ranks = e->comm->size;
  /* a column-kernel engine (a GPU's) plans for them, and says so, or why
   * the query runs on ladle's CPU kernels instead */
  char where[640] = "";
  bool columns = e->columns;
  ladle_pplan *pp = NULL;
  ladle_strbuf notes = {NULL, 0, 0, false};
  if (columns) {
    ladle_pplan_opts co = exec_plan_opts(e->backend, ranks, true);
    LADLE_RETURN_NOT_OK(ladle_pplan_build(p, &co, &pp, err));
    exec_state s;
    memset(&s, 0, sizeof s);
    s.eng = (ladle_engine *)(uintptr_t)e;
    s.be = e->backend;
    s.k.device_id = e->opts.device_id;
    s.columns = true;
    ladle_error why;
    if (exec_columns_check(&s, pp, &notes, &why) == LADLE_OK) {
      snprintf(where, sizeof where, "on %s: column kernels, one partition per table%s\n",
               e->backend->device == LADLE_DEVICE_CPU ? "the CPU" : e->backend->name,
               notes.data != NULL ? "; the nodes marked [host] run on ladle's CPU kernels over "
                                    "the device's results, because of"
                                  : "");
    } else {
      snprintf(where, sizeof where, "not on the column kernels (%s): on ladle's CPU backend\n",
               why.message);
      columns = false;
      ladle_pplan_destroy(pp);
      pp = NULL;
    }
  }
  if (pp == NULL) {
    ladle_pplan_opts po = exec_plan_opts(e->host_backend, ranks, columns);
    ladle_status bst = ladle_pplan_build(p, &po, &pp, err);
    if (bst != LADLE_OK) {
      free(notes.data);
      return bst;
    }
  }
  char *plan = NULL;
  ladle_status st = ladle_plan_explain(p, &plan, err);
  if (st != LADLE_OK) {
    ladle_pplan_destroy(pp);
    free(notes.data);
    return st;
  }
  ladle_strbuf b = {NULL, 0, 0, false};
  ladle_strbuf_printf(&b, "logical plan:\n%s\nphysical plan (engine: %d threads; %d rank%s%s):\n",
                      plan, ladle_pool_threads(e->pool), ranks, ranks == 1 ? "" : "s",
                      ranks != e->comm->size ? ", as planned for them" : "");
  free(plan);
  if (*where != '\0') ladle_strbuf_printf(&b, "%s", where);
  if (notes.data != NULL) ladle_strbuf_printf(&b, "%s", notes.data);
  free(notes.data);
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
