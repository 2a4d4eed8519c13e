/* op_explode.c — EXPLODE: list columns unnested into a row per element, the
 * other columns repeated (Polars' explode), partition by partition; the
 * backend's explode kernel decides the rows, its gather repeats the others. */
#include <stdlib.h>

#include "operator.h"

static ladle_status explode_chunk(exec_state *s, const ladle_plan *p, const ladle_chunk *c,
                                  ladle_column *lists, const char **names, ladle_chunk *o,
                                  ladle_error *err) {
  const ladle_schema *in = &p->inputs[0]->schema;
  for (size_t j = 0; j < p->nsubset; j++) {
    lists[j] = c->columns[p->subset[j]];
    names[j] = in->names[p->subset[j]];
  }
  ladle_column rows;
  ladle_column *outs = calloc(p->nsubset, sizeof *outs);
  if (outs == NULL) return LADLE_OOM(err, "explode");
  ladle_status st = s->be->explode(&s->k, lists, p->nsubset, p->empty_as_null, p->keep_nulls, names,
                                   &rows, outs, err);
  if (st != LADLE_OK) {
    free(outs);
    return st;
  }
  o->length = rows.length;
  for (size_t i = 0; st == LADLE_OK && i < p->schema.n; i++) {
    size_t j = 0;
    while (j < p->nsubset && (size_t)p->subset[j] != i) j++;
    if (j < p->nsubset) {
      o->columns[i] = outs[j];
      memset(&outs[j], 0, sizeof outs[j]);
    } else {
      st = s->be->gather(&s->k, &c->columns[i], rows.values, rows.length, &o->columns[i], err);
    }
  }
  for (size_t j = 0; j < p->nsubset; j++) ladle_column_release(&outs[j]);
  free(outs);
  ladle_column_release(&rows);
  return st;
}

static ladle_status explode_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                  ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  if (s->be->explode == NULL)
    return ladle_err_set(err, LADLE_ENOTSUP, "device '%s:%d': explode has no GPU path yet",
                         s->be->name, s->k.device_id);
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_table_create(&p->schema, in->nchunks, &t, err));
  ladle_column *lists = calloc(LADLE_MAX(p->nsubset, 1), sizeof *lists);
  const char **names = calloc(LADLE_MAX(p->nsubset, 1), sizeof *names);
  ladle_status st = lists && names ? LADLE_OK : LADLE_OOM(err, "explode");
  for (size_t k = 0; st == LADLE_OK && k < in->nchunks; k++)
    st = explode_chunk(s, p, &in->chunks[k], lists, names, &t->chunks[k], err);
  free(lists);
  free(names);
  ladle_table_seal(t);
  if (st != LADLE_OK) {
    ladle_table_release(t);
    return st;
  }
  *out = t;
  return LADLE_OK;
}

static ladle_status explode_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  return exec_run_unary(s, pn, explode_table, out, err);
}

const exec_operator exec_op_explode = {LADLE_POP_EXPLODE, explode_run, NULL, NULL, NULL};
