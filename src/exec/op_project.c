/* op_project.c — PROJECT: columns picked and renamed, no expression
 * evaluated; the output shares the input's buffers. */
#include "operator.h"

static ladle_status project_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  const ladle_plan *p = pn->lp;
  ladle_table *in, *t;
  LADLE_RETURN_NOT_OK(exec_input(s, pn, &in, NULL, err));
  ladle_status st = ladle_table_create(&p->schema, in->nchunks, &t, err);
  for (size_t k = 0; st == LADLE_OK && k < in->nchunks; k++) {
    t->chunks[k].length = in->chunks[k].length;
    for (size_t i = 0; i < p->schema.n; i++)
      ladle_column_copy_ref(&in->chunks[k].columns[p->out_map[i]], &t->chunks[k].columns[i]);
  }
  ladle_table_release(in);
  if (st != LADLE_OK) return st;
  ladle_table_seal(t);
  *out = t;
  return LADLE_OK;
}

static void project_needs(const ladle_pnode *pn, const bool *need, bool *in_need) {
  for (size_t c = 0; c < pn->schema->n; c++)
    if (need == NULL || need[c]) in_need[pn->lp->out_map[c]] = true;
}

static ladle_status project_morsel(exec_state *s, const ladle_pnode *pn, const void *state,
                                   const bool *need, const ladle_chunk *c, ladle_chunk *out,
                                   ladle_error *err) {
  LADLE_UNUSED(s);
  LADLE_UNUSED(state);
  LADLE_UNUSED(err);
  for (size_t i = 0; i < pn->schema->n; i++)
    if (need == NULL || need[i])
      ladle_column_copy_ref(&c->columns[pn->lp->out_map[i]], &out->columns[i]);
    else
      exec_placeholder(&out->columns[i], c->length);
  out->length = c->length;
  return LADLE_OK;
}

static const exec_stream_op project_stream = {project_needs, NULL, project_morsel, NULL};

const exec_operator exec_op_project = {LADLE_POP_PROJECT, project_run, &project_stream, NULL, NULL};
