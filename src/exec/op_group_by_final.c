/* op_group_by_final.c — GROUP_BY_FINAL: a group_by planned as partial and
 * final steps.
 *
 * Its input is GROUP_BY_PARTIAL (under an EXCHANGE with several ranks).
 * Where the planner found a pipeline under it (pnode.source), the source's
 * morsels stream through the row-wise nodes in between into the partial
 * step's sink; otherwise the partial step reads its input's table. Where the
 * partial step does not apply or turns itself down, the whole group_by runs
 * over the pipeline's collected output. */
#include "operator.h"

static ladle_status final_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                              ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  const ladle_pnode *part = pn->inputs[0];
  while (part->op == LADLE_POP_EXCHANGE) part = part->inputs[0];
  const ladle_pnode *top = part->inputs[0]; /* the partial step's input */
  const ladle_pnode *source = pn->source != NULL ? pn->source : top;
  ladle_table *got;
  bool declined = false;
  double t0 = LADLE_PHASE_START();
  ladle_status st = exec_pipeline_run(s, top, source, NULL, exec_op_group_by_partial.sink, pn, &got,
                                      &declined, err);
  LADLE_PHASE_END(!declined ? "group_by partial and final" : "group_by partial declined",
                  st == LADLE_OK ? got->num_rows : 0, t0);
  bool ranks = s->eng->comm->size > 1;
  if (st != LADLE_OK || !declined) {
    if (st == LADLE_OK) *out = got;
    return st;
  }
  /* turned down: the whole group_by over the pipeline's output (never with
   * several ranks: the partial step holds the exchange) */
  if (ranks) {
    ladle_table_release(got);
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "a group_by across %d ranks whose aggregations do not split into "
                         "partial and final steps",
                         s->eng->comm->size);
  }
  st = exec_group_by_table(s, pn, top, got, false, out, err);
  ladle_table_release(got);
  return st;
}

const exec_operator exec_op_group_by_final = {LADLE_POP_GROUP_BY_FINAL, final_run, NULL, NULL,
                                              NULL};
