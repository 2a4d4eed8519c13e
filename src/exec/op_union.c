/* op_union.c — UNION: the inputs' partitions one after another (vertical
 * concat), sharing their buffers; under a slice, inputs run only until they
 * hold its rows. */
#include <stdlib.h>

#include "operator.h"

static ladle_status union_table(const ladle_plan *p, ladle_table **ins, ladle_table **out,
                                ladle_error *err) {
  size_t total = 0;
  for (size_t i = 0; i < p->ninputs; i++) total += ins[i] ? ins[i]->nchunks : 0;
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_table_create(&p->schema, total, &t, err));
  size_t j = 0;
  for (size_t i = 0; i < p->ninputs; i++)
    for (size_t k = 0; ins[i] && k < ins[i]->nchunks; k++, j++) {
      t->chunks[j].length = ins[i]->chunks[k].length;
      for (size_t c = 0; c < p->schema.n; c++)
        ladle_column_copy_ref(&ins[i]->chunks[k].columns[c], &t->chunks[j].columns[c]);
    }
  ladle_table_seal(t);
  *out = t;
  return LADLE_OK;
}

static ladle_status union_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                              ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  ladle_table **ins = calloc(LADLE_MAX(pn->ninputs, 1), sizeof *ins);
  if (ins == NULL) return LADLE_OOM(err, "inputs");
  ladle_status st = exec_inputs_run(s, pn, ins, err);
  if (st == LADLE_OK) st = union_table(pn->lp, ins, out, err);
  for (size_t i = 0; i < pn->ninputs; i++) ladle_table_release(ins[i]);
  free(ins);
  return st;
}

const exec_operator exec_op_union = {LADLE_POP_UNION, union_run, NULL, NULL, NULL};
