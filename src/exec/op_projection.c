/* op_projection.c — PROJECTION: a SELECT or WITH_COLUMNS, its expressions
 * evaluated per partition.
 *
 * Run on its own, each expression is evaluated over every partition in
 * parallel (aggregations and windows over the whole input; scalars broadcast).
 * Inside a pipeline (row-wise expressions only) it streams: one morsel's
 * expressions at a time. */
#include <stdlib.h>

#include "operator.h"

/* Builds output chunks from per-expression chunked results. src_map gives, per
 * output column, an input column index (>= 0) or -(expr index) - 1. */
static ladle_status assemble(exec_state *s, const ladle_plan *p, ladle_table *in,
                             ladle_column **vals, const bool *scalar, const int64_t *src_map,
                             bool all_scalar, ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(s);
  size_t nchunks = all_scalar ? 1 : in->nchunks;
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_table_create(&p->schema, nchunks, &t, err));
  ladle_status st = LADLE_OK;
  for (size_t k = 0; k < nchunks && st == LADLE_OK; k++) {
    int64_t len = all_scalar ? 1 : in->chunks[k].length;
    t->chunks[k].length = len;
    for (size_t i = 0; i < p->schema.n && st == LADLE_OK; i++) {
      int64_t m = src_map[i];
      ladle_column *dst = &t->chunks[k].columns[i];
      if (m >= 0) {
        ladle_column_copy_ref(&in->chunks[k].columns[m], dst);
      } else {
        size_t e = (size_t)(-m - 1);
        const ladle_column *v = &vals[e][scalar[e] ? 0 : k];
        if (v->length == len)
          ladle_column_copy_ref(v, dst);
        else
          st = ladle_column_broadcast(v, len, dst, err);
      }
    }
  }
  ladle_table_seal(t);
  if (st != LADLE_OK) {
    ladle_table_release(t);
    return st;
  }
  *out = t;
  return LADLE_OK;
}

static ladle_status projection_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                     ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  size_t n = p->nexprs;
  ladle_column **vals = calloc(LADLE_MAX(n, 1), sizeof *vals);
  bool *scalar = calloc(LADLE_MAX(n, 1), sizeof *scalar);
  int64_t *map = NULL;
  ladle_status st = vals && scalar ? LADLE_OK : LADLE_OOM(err, "select");
  size_t done = 0, mark = s->nhoist;
  /* aggregations over every rank's rows, read as single values below */
  if (st == LADLE_OK && pn->global_aggs) st = exec_hoist_global_aggs(s, p->exprs, n, in, err);
  for (; done < n && st == LADLE_OK; done++)
    st = ladle_eval_chunked(s, p->exprs[done], in, &vals[done], &scalar[done], err);
  if (st != LADLE_OK && done > 0) done--;
  bool all_scalar = n > 0;
  for (size_t i = 0; i < n; i++) all_scalar &= scalar[i];
  if (st == LADLE_OK) {
    if (p->kind == LADLE_NODE_SELECT) {
      map = malloc(LADLE_MAX(n, 1) * sizeof *map);
      if (map == NULL) st = LADLE_OOM(err, "select");
      for (size_t i = 0; map && i < n; i++) map[i] = -(int64_t)i - 1;
      if (st == LADLE_OK) st = assemble(s, p, in, vals, scalar, map, all_scalar, out, err);
    } else {
      st = assemble(s, p, in, vals, scalar, p->out_map, false, out, err);
    }
  }
  for (size_t i = 0; i < done; i++) ladle_release_columns(vals[i], scalar[i] ? 1 : in->nchunks);
  ladle_exec_unhoist(s, mark);
  free(vals);
  free(scalar);
  free(map);
  return st;
}

static ladle_status projection_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                   ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  if (s->columns) {
    bool done = false;
    LADLE_RETURN_NOT_OK(exec_columns_select_filter(s, pn, out, &done, err));
    if (done) return LADLE_OK;
  }
  return exec_run_unary(s, pn, projection_table, out, err);
}

/* ------------------------------------------------------------- streaming */

static void projection_needs(const ladle_pnode *pn, const bool *need, bool *in_need) {
  const ladle_plan *r = pn->lp;
  size_t nin = r->inputs[0]->schema.n;
  if (r->kind == LADLE_NODE_WITH_COLUMNS)
    for (size_t c = 0; c < r->schema.n; c++)
      if ((need == NULL || need[c]) && r->out_map[c] >= 0) in_need[r->out_map[c]] = true;
  /* every expression is computed: its errors are the query's */
  for (size_t k = 0; k < r->nexprs; k++) ladle_exec_mark_columns(r->exprs[k], in_need, nin);
}

static ladle_status projection_morsel(exec_state *s, const ladle_pnode *pn, const void *state,
                                      const bool *need, const ladle_chunk *c, ladle_chunk *out,
                                      ladle_error *err) {
  LADLE_UNUSED(state);
  const ladle_plan *r = pn->lp;
  size_t nout = r->schema.n;
  ladle_column *v = calloc(LADLE_MAX(r->nexprs, 1), sizeof *v);
  if (v == NULL) return LADLE_OOM(err, "select");
  ladle_status st = exec_eval_morsel(s, r->exprs, r->nexprs, c, v, err);
  if (st != LADLE_OK) {
    free(v);
    return st;
  }
  for (size_t i = 0; i < nout; i++) {
    int64_t m = r->kind == LADLE_NODE_SELECT ? -(int64_t)i - 1 : r->out_map[i];
    if (need != NULL && !need[i])
      exec_placeholder(&out->columns[i], c->length);
    else if (m >= 0)
      ladle_column_copy_ref(&c->columns[m], &out->columns[i]);
    else
      ladle_column_copy_ref(&v[-m - 1], &out->columns[i]);
  }
  out->length = c->length;
  ladle_release_columns(v, r->nexprs); /* and the array */
  return LADLE_OK;
}

static const exec_stream_op projection_stream = {projection_needs, NULL, projection_morsel, NULL};

const exec_operator exec_op_projection = {LADLE_POP_PROJECTION, projection_run, &projection_stream,
                                          NULL, NULL};
