/* op_group_by.c — GROUP_BY: keys and aggregations over every input row.
 *
 * It first tries the partial step (op_group_by_partial.c) over its input's
 * morsels; where that does not apply or turns itself down, the whole
 * group_by: group ids over the keys, then every aggregation as its own task
 * (the aggregations repeated inside expressions computed once first). */
#include <stdlib.h>

#include "operator.h"

typedef struct agg_job {
  exec_state *s;
  const ladle_plan *p;
  const ladle_table *in;
  ladle_groups *g; /* read only while the tasks run */
  ladle_column *out;
  bool *done;
} agg_job;

static ladle_status agg_task(void *vctx, size_t i, ladle_error *err) {
  agg_job *j = vctx;
  ladle_column c;
  LADLE_RETURN_NOT_OK(ladle_eval_full(j->s, j->p->exprs[i], j->in, j->g, false, &c, err));
  ladle_status st = LADLE_OK;
  if (c.length != j->g->ngroups) {
    st = ladle_column_broadcast(&c, j->g->ngroups, &j->out[i], err);
    ladle_column_release(&c);
  } else {
    j->out[i] = c;
  }
  if (st == LADLE_OK) j->done[i] = true;
  return st;
}

/* The aggregations inside a group_by's expressions, computed before the
 * expressions themselves: each distinct one once (r^2 written out with sums
 * repeats sum(v1) three times), all of them in parallel (one expression of
 * seven sums would otherwise run on one thread). */
typedef struct subaggs {
  const ladle_bexpr **node; /* every aggregation node found */
  size_t *rep;              /* per node: the index of the node computed for it */
  size_t n, cap;
  ladle_column *col; /* per node (representatives only): its value per group */
  bool *done;
} subaggs;

static bool lit_same(const ladle_column *a, const ladle_column *b) {
  if (a->length != 1 || b->length != 1 || a->null_count != b->null_count) return false;
  if (a->null_count == 1) return true;
  if (ladle_type_is_varlen(a->type.id))
    return ladle_str_len(a, 0) == ladle_str_len(b, 0) &&
           memcmp(ladle_str_ptr(a, 0), ladle_str_ptr(b, 0), (size_t)ladle_str_len(a, 0)) == 0;
  if (a->type.id == LADLE_TYPE_LIST) return false;
  return memcmp(a->values, b->values, ladle_type_width(a->type.id)) == 0;
}

/* Whether two bound expressions compute the same thing (names aside). */
static bool bexpr_same(const ladle_bexpr *a, const ladle_bexpr *b) {
  if (a == b) return true;
  if (a->kind != b->kind || a->op != b->op || !ladle_dtype_equal(a->type, b->type) ||
      a->col != b->col || a->cast_mode != b->cast_mode || a->descending != b->descending ||
      a->nargs != b->nargs)
    return false;
  const ladle_func_opts *f = &a->fopts, *g = &b->fopts;
  if (f->i64 != g->i64 || f->i64b != g->i64b || f->u64 != g->u64 ||
      memcmp(&f->f64, &g->f64, sizeof f->f64) != 0 || f->literal != g->literal ||
      f->closed != g->closed || (f->str == NULL) != (g->str == NULL) ||
      (f->str != NULL && strcmp(f->str, g->str) != 0))
    return false;
  if (a->aopts.ddof != b->aopts.ddof ||
      memcmp(&a->aopts.quantile, &b->aopts.quantile, sizeof(double)) != 0 ||
      a->aopts.interpolation != b->aopts.interpolation ||
      a->aopts.polars_order != b->aopts.polars_order)
    return false;
  if (a->kind == LADLE_EX_LIT && !lit_same(&a->lit, &b->lit)) return false;
  for (size_t i = 0; i < a->nargs; i++)
    if (!bexpr_same(a->args[i], b->args[i])) return false;
  return true;
}

static bool subaggs_collect(subaggs *a, const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_OVER || e->kind == LADLE_EX_RANK || e->kind == LADLE_EX_CUM) return false;
  if (e->kind != LADLE_EX_AGG && e->kind != LADLE_EX_LEN) {
    for (size_t i = 0; i < e->nargs; i++)
      if (!subaggs_collect(a, e->args[i])) return false;
    return true;
  }
  if (e->has_window) return false;
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 16;
    const ladle_bexpr **nn = realloc(a->node, cap * sizeof *nn);
    if (nn != NULL) a->node = nn;
    size_t *rr = realloc(a->rep, cap * sizeof *rr);
    if (rr != NULL) a->rep = rr;
    if (nn == NULL || rr == NULL) return false;
    a->cap = cap;
  }
  size_t k = a->n++;
  a->node[k] = e;
  a->rep[k] = k;
  for (size_t j = 0; j < k; j++)
    if (a->rep[j] == j && bexpr_same(a->node[j], e)) {
      a->rep[k] = j;
      break;
    }
  return true;
}

static void subaggs_free(subaggs *a) {
  for (size_t i = 0; i < a->n; i++)
    if (a->col != NULL && a->done[i]) ladle_column_release(&a->col[i]);
  free(a->node);
  free(a->rep);
  free(a->col);
  free(a->done);
  memset(a, 0, sizeof *a);
}

typedef struct subagg_job {
  exec_state *s;
  const ladle_table *in;
  ladle_groups *g;
  subaggs *a;
  size_t *todo; /* representative nodes */
} subagg_job;

static ladle_status subagg_task(void *vctx, size_t i, ladle_error *err) {
  subagg_job *j = vctx;
  size_t k = j->todo[i];
  LADLE_RETURN_NOT_OK(ladle_eval_full(j->s, j->a->node[k], j->in, j->g, false, &j->a->col[k], err));
  j->a->done[k] = true;
  return LADLE_OK;
}

/* Computes the aggregations of p's expressions and pushes them on the hoist
 * stack (read-only while the expressions then run in parallel). False with
 * LADLE_OK in *st when it is not worth it (one aggregation per expression,
 * none repeated) or not possible (windows). */
static bool hoist_subaggs(exec_state *s, const ladle_plan *p, const ladle_table *in,
                          ladle_groups *g, subaggs *a, ladle_status *st, ladle_error *err) {
  *st = LADLE_OK;
  memset(a, 0, sizeof *a);
  bool ok = true;
  for (size_t i = 0; ok && i < p->nexprs; i++) ok = subaggs_collect(a, p->exprs[i]);
  size_t reps = 0;
  for (size_t k = 0; ok && k < a->n; k++) reps += a->rep[k] == k;
  if (!ok || (a->n <= p->nexprs && reps == a->n)) return false;
  a->col = calloc(a->n, sizeof *a->col);
  a->done = calloc(a->n, sizeof *a->done);
  size_t *todo = malloc(LADLE_MAX(reps, 1) * sizeof *todo);
  if (a->col == NULL || a->done == NULL || todo == NULL) {
    free(todo);
    *st = LADLE_OOM(err, "group_by aggregations");
    return true;
  }
  for (size_t k = 0, q = 0; k < a->n; k++)
    if (a->rep[k] == k) todo[q++] = k;
  subagg_job j = {s, in, g, a, todo};
  *st = ladle_pool_run(s->k.pool, reps, subagg_task, &j, err);
  free(todo);
  if (*st != LADLE_OK) return true;
  for (size_t k = 0; *st == LADLE_OK && k < a->n; k++) {
    ladle_column c;
    ladle_column_copy_ref(&a->col[a->rep[k]], &c);
    *st = ladle_exec_hoist(s, a->node[k], &c, err);
  }
  return true;
}

ladle_status exec_group_by_table(exec_state *s, const ladle_pnode *pn, const ladle_pnode *in_pn,
                                 ladle_table *in, bool try_partial, ladle_table **out,
                                 ladle_error *err) {
  const ladle_plan *p = pn->lp;
  double t0 = LADLE_PHASE_START();
  if (try_partial) {
    /* the partial step as a pipeline of no streaming node over `in` */
    bool declined = false;
    ladle_table *got;
    exec_source src;
    exec_source_of_table(in, &src);
    ladle_status st = exec_pipeline_run(s, NULL, in_pn, &src, exec_op_group_by_partial.sink, pn,
                                        &got, &declined, err);
    exec_source_close(&src);
    LADLE_RETURN_NOT_OK(st);
    LADLE_PHASE_END(!declined ? "group_by partial and final" : "group_by partial declined",
                    in->num_rows, t0);
    if (!declined) {
      *out = got;
      return LADLE_OK;
    }
    ladle_table_release(got); /* `in` itself */
  }
  size_t nk = p->nkeys, na = p->nexprs;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  ladle_column *cols = calloc(nk + na + 1, sizeof *cols);
  if (keys == NULL || cols == NULL) {
    free(keys);
    free(cols);
    return LADLE_OOM(err, "group_by");
  }
  ladle_groups g;
  memset(&g, 0, sizeof g);
  t0 = LADLE_PHASE_START();
  ladle_status st = exec_eval_whole(s, p->keys, nk, in, keys, err);
  size_t have_keys = st == LADLE_OK ? nk : 0;
  LADLE_PHASE_END("group_by keys", in->num_rows, t0);
  if (st == LADLE_OK) {
    if (nk > 0) {
      t0 = LADLE_PHASE_START();
      st = s->be->group_ids(&s->k, keys, nk, &g, err);
      if (st == LADLE_OK && p->maintain_order) st = ladle_groups_order_by_first(&g, err);
      LADLE_PHASE_END("group_by group ids", g.ngroups, t0);
    } else {
      st = ladle_exec_single_group(in->num_rows, &g, err); /* reduce: one row even of none */
    }
  }
  size_t made = 0;
  t0 = LADLE_PHASE_START();
  if (st == LADLE_OK && nk > 0) {
    st = exec_gather_columns(s, keys, nk, g.first, g.ngroups, cols, err);
    if (st == LADLE_OK) made = nk;
  }
  LADLE_PHASE_END("group_by gather keys", g.ngroups, t0);
  subaggs sa;
  memset(&sa, 0, sizeof sa);
  size_t mark = s->nhoist;
  if (st == LADLE_OK && na > 0) {
    ladle_status hs;
    if (hoist_subaggs(s, p, in, &g, &sa, &hs, err)) st = hs;
  }
  t0 = LADLE_PHASE_START();
  if (st == LADLE_OK && na > 0) {
    /* the aggregations of one group_by are independent: one task each */
    agg_job j = {s, p, in, &g, cols + nk, NULL};
    j.done = calloc(na, sizeof *j.done);
    st = j.done ? ladle_pool_run(s->k.pool, na, agg_task, &j, err) : LADLE_OOM(err, "group_by");
    if (st == LADLE_OK) {
      made = nk + na;
    } else if (j.done != NULL) {
      for (size_t i = 0; i < na; i++)
        if (j.done[i]) ladle_column_release(&cols[nk + i]);
    }
    free(j.done);
  }
  LADLE_PHASE_END("group_by aggregations", g.ngroups, t0);
  ladle_exec_unhoist(s, mark);
  subaggs_free(&sa);
  int64_t ngroups = g.ngroups;
  ladle_groups_release(&g);
  for (size_t i = 0; i < have_keys; i++) ladle_column_release(&keys[i]);
  free(keys);
  t0 = LADLE_PHASE_START();
  if (st == LADLE_OK)
    st = exec_table_from_columns(s, &p->schema, cols, ngroups, out, err);
  else
    for (size_t i = 0; i < made; i++) ladle_column_release(&cols[i]);
  free(cols);
  LADLE_PHASE_END("group_by output table", ngroups, t0);
  return st;
}

static ladle_status group_by_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                   ladle_table **out, ladle_error *err) {
  /* with several ranks its input was exchanged by the keys already: the
   * partial step (which exchanges) is not tried */
  return exec_group_by_table(s, pn, pn->inputs[0], in, s->eng->comm->size == 1, out, err);
}

static ladle_status group_by_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                 ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  if (s->columns) return exec_columns_group_by(s, pn, out, err);
  return exec_run_unary(s, pn, group_by_table, out, err);
}

const exec_operator exec_op_group_by = {LADLE_POP_GROUP_BY, group_by_run, NULL, NULL, NULL};
