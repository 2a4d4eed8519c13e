/* plan.c — plan node builders: each binds its expressions against its input's
 * schema, checks what Polars would check, computes its output schema, and
 * consumes its arguments whatever happens. Also `explain`. */
#include "plan.h"

#include <stdio.h>

ladle_plan *ladle_plan_node_new(ladle_node_kind kind, size_t ninputs) {
  ladle_plan *p = calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  atomic_init(&p->refcount, 1);
  p->kind = kind;
  p->limit = -1;
  p->length = -1;
  if (ninputs > 0 && (p->inputs = calloc(ninputs, sizeof *p->inputs)) == NULL) {
    free(p);
    return NULL;
  }
  p->ninputs = ninputs;
  return p;
}

ladle_plan *ladle_plan_ref(ladle_plan *p) {
  if (p != NULL) atomic_fetch_add_explicit(&p->refcount, 1, memory_order_relaxed);
  return p;
}

void ladle_plan_destroy(ladle_plan *p) {
  if (p == NULL) return;
  if (atomic_fetch_sub_explicit(&p->refcount, 1, memory_order_acq_rel) != 1) return;
  for (size_t i = 0; i < p->ninputs; i++) ladle_plan_destroy(p->inputs[i]);
  free(p->inputs);
  ladle_table_release(p->table);
  for (size_t i = 0; i < p->nexprs; i++) ladle_bexpr_destroy(p->exprs[i]);
  free(p->exprs);
  for (size_t i = 0; i < p->nkeys; i++) {
    ladle_bexpr_destroy(p->keys[i]);
    if (p->rkeys != NULL) ladle_bexpr_destroy(p->rkeys[i]);
  }
  free(p->keys);
  free(p->rkeys);
  free((char *)(uintptr_t)p->join.suffix);
  free(p->out_map);
  free(p->coalesce_rkey);
  free(p->descending);
  free(p->nulls_last);
  free(p->subset);
  if (p->source_free != NULL) p->source_free(p->source);
  ladle_schema_release(&p->schema);
  free(p);
}

size_t ladle_plan_num_columns(const ladle_plan *p) { return p->schema.n; }
const char *ladle_plan_column_name(const ladle_plan *p, size_t i) {
  return i < p->schema.n ? p->schema.names[i] : NULL;
}
ladle_dtype ladle_plan_column_type(const ladle_plan *p, size_t i) {
  return i < p->schema.n ? p->schema.types[i] : ladle_dtype_make(LADLE_TYPE_NULL);
}

static void destroy_exprs(size_t n, ladle_expr *const *e) {
  for (size_t i = 0; i < n; i++)
    if (e != NULL) ladle_expr_destroy(e[i]);
}

/* Binds n expressions into a fresh array. */
static ladle_status bind_all(size_t n, ladle_expr *const *exprs, const ladle_schema *s,
                             ladle_bind_ctx ctx, ladle_bexpr ***out, ladle_error *err) {
  ladle_bexpr **b = calloc(LADLE_MAX(n, 1), sizeof *b);
  if (b == NULL) return LADLE_OOM(err, "expressions");
  for (size_t i = 0; i < n; i++) {
    ladle_status st = ladle_bind(exprs[i], s, ctx, &b[i], err);
    if (st != LADLE_OK) {
      for (size_t k = 0; k < i; k++) ladle_bexpr_destroy(b[k]);
      free(b);
      return st;
    }
  }
  *out = b;
  return LADLE_OK;
}

/* Keys are hashed, compared and ordered: carried types cannot be keys yet. */
static ladle_status check_key_type(const char *what, const char *name, ladle_dtype t,
                                   ladle_error *err) {
  char b[64];
  if (ladle_type_is_carried(t.id))
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "%s: key '%s' is %s; ladle carries this type through the plan but "
                         "cannot use it as a key yet",
                         what, name, ladle_dtype_name(t, b, sizeof b));
  return LADLE_OK;
}
static ladle_status check_keys(const char *what, size_t n, ladle_bexpr *const *keys,
                               ladle_error *err) {
  for (size_t i = 0; i < n; i++)
    LADLE_RETURN_NOT_OK(check_key_type(what, keys[i]->name, keys[i]->type, err));
  return LADLE_OK;
}

static ladle_status check_unique_names(const ladle_schema *s, const char *where, ladle_error *err) {
  for (size_t i = 0; i < s->n; i++)
    for (size_t j = i + 1; j < s->n; j++)
      if (strcmp(s->names[i], s->names[j]) == 0)
        return ladle_err_set(err, LADLE_EINVAL,
                             "%s: duplicate output column name '%s'; use alias to rename one",
                             where, s->names[i]);
  return LADLE_OK;
}

/* Finishes a builder: on failure destroys the node (and with it its inputs). */
static ladle_status finish(ladle_plan *p, ladle_status st, ladle_plan **out) {
  if (st != LADLE_OK) {
    ladle_plan_destroy(p);
    return st;
  }
  *out = p;
  return LADLE_OK;
}

ladle_status ladle_plan_scan_table(ladle_table *table, ladle_plan **out, ladle_error *err) {
  if (table == NULL) return ladle_err_set(err, LADLE_EINVAL, "scan: no table");
  ladle_plan *p = ladle_plan_node_new(LADLE_NODE_SCAN, 0);
  if (p == NULL) return LADLE_OOM(err, "plan node");
  p->table = ladle_table_ref(table);
  return finish(p, ladle_schema_copy(&table->schema, &p->schema, err), out);
}

ladle_status ladle_plan_filter(ladle_plan *input, ladle_expr *pred, ladle_plan **out,
                               ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_FILTER, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    ladle_expr_destroy(pred);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  ladle_status st = bind_all(1, &pred, &input->schema, LADLE_CTX_ROWS, &p->exprs, err);
  ladle_expr_destroy(pred);
  if (st == LADLE_OK) {
    p->nexprs = 1;
    char b1[64];
    if (p->exprs[0]->type.id != LADLE_TYPE_BOOL)
      st = ladle_err_set(err, LADLE_ETYPE, "filter: predicate '%s' is %s, not bool",
                         p->exprs[0]->name, ladle_dtype_name(p->exprs[0]->type, b1, sizeof b1));
  }
  if (st == LADLE_OK) st = ladle_schema_copy(&input->schema, &p->schema, err);
  if (st != LADLE_OK) st = ladle_err_context(err, st, "in filter");
  return finish(p, st, out);
}

static ladle_status schema_from_exprs(ladle_plan *p, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_schema_init(&p->schema, p->nexprs, err));
  for (size_t i = 0; i < p->nexprs; i++)
    LADLE_RETURN_NOT_OK(ladle_schema_set(&p->schema, i, p->exprs[i]->name, p->exprs[i]->type, err));
  return LADLE_OK;
}

ladle_status ladle_plan_select(ladle_plan *input, size_t n, ladle_expr *const *exprs,
                               ladle_plan **out, ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_SELECT, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    destroy_exprs(n, exprs);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  ladle_status st = bind_all(n, exprs, &input->schema, LADLE_CTX_ROWS, &p->exprs, err);
  destroy_exprs(n, exprs);
  if (st == LADLE_OK) {
    p->nexprs = n;
    st = schema_from_exprs(p, err);
  }
  if (st == LADLE_OK) st = check_unique_names(&p->schema, "select", err);
  if (st != LADLE_OK) st = ladle_err_context(err, st, "in select");
  return finish(p, st, out);
}

ladle_status ladle_plan_reduce(ladle_plan *input, size_t n, ladle_expr *const *exprs,
                               ladle_plan **out, ladle_error *err) {
  ladle_plan *p = NULL;
  ladle_status st = ladle_plan_select(input, n, exprs, &p, err);
  if (st != LADLE_OK) return st;
  for (size_t i = 0; i < p->nexprs; i++)
    if (!p->exprs[i]->scalar) {
      st = ladle_err_set(err, LADLE_EINVAL, "in reduce: '%s' is not an aggregation",
                         p->exprs[i]->name);
      ladle_plan_destroy(p);
      return st;
    }
  *out = p;
  return LADLE_OK;
}

ladle_status ladle_plan_with_columns(ladle_plan *input, size_t n, ladle_expr *const *exprs,
                                     ladle_plan **out, ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_WITH_COLUMNS, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    destroy_exprs(n, exprs);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  ladle_status st = bind_all(n, exprs, &input->schema, LADLE_CTX_ROWS, &p->exprs, err);
  destroy_exprs(n, exprs);
  if (st != LADLE_OK) return finish(p, ladle_err_context(err, st, "in with_columns"), out);
  p->nexprs = n;
  const ladle_schema *in = &input->schema;
  /* output: input columns, replaced in place by name, then new ones appended */
  size_t nout = in->n;
  int64_t *map = malloc((in->n + n + 1) * sizeof *map);
  if (map == NULL) return finish(p, LADLE_OOM(err, "with_columns"), out);
  p->out_map = map;
  for (size_t i = 0; i < in->n; i++) map[i] = (int64_t)i;
  for (size_t k = 0; k < n; k++) {
    for (size_t j = k + 1; j < n; j++)
      if (strcmp(p->exprs[k]->name, p->exprs[j]->name) == 0)
        return finish(
            p,
            ladle_err_set(err, LADLE_EINVAL, "in with_columns: duplicate output column name '%s'",
                          p->exprs[k]->name),
            out);
    int64_t i = ladle_schema_find(in, p->exprs[k]->name);
    if (i >= 0)
      map[i] = -(int64_t)k - 1;
    else
      map[nout++] = -(int64_t)k - 1;
  }
  st = ladle_schema_init(&p->schema, nout, err);
  for (size_t i = 0; i < nout && st == LADLE_OK; i++) {
    if (map[i] >= 0)
      st = ladle_schema_set(&p->schema, i, in->names[map[i]], in->types[map[i]], err);
    else
      st = ladle_schema_set(&p->schema, i, p->exprs[-map[i] - 1]->name, p->exprs[-map[i] - 1]->type,
                            err);
  }
  return finish(p, st, out);
}

ladle_status ladle_plan_group_by(ladle_plan *input, size_t n_keys, ladle_expr *const *keys,
                                 size_t n_aggs, ladle_expr *const *aggs, bool maintain_order,
                                 ladle_plan **out, ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_GROUP_BY, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    destroy_exprs(n_keys, keys);
    destroy_exprs(n_aggs, aggs);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  p->maintain_order = maintain_order;
  p->reduce = n_keys == 0;
  ladle_status st = bind_all(n_keys, keys, &input->schema, LADLE_CTX_ROWS, &p->keys, err);
  if (st == LADLE_OK) p->nkeys = n_keys;
  if (st == LADLE_OK) st = check_keys("group_by", n_keys, p->keys, err);
  if (st == LADLE_OK) st = bind_all(n_aggs, aggs, &input->schema, LADLE_CTX_GROUPS, &p->exprs, err);
  if (st == LADLE_OK) p->nexprs = n_aggs;
  destroy_exprs(n_keys, keys);
  destroy_exprs(n_aggs, aggs);
  for (size_t i = 0; st == LADLE_OK && i < p->nkeys; i++)
    if (p->keys[i]->has_agg || p->keys[i]->has_window)
      st = ladle_err_set(err, LADLE_EINVAL, "key '%s' is an aggregation or a window",
                         p->keys[i]->name);
  if (st == LADLE_OK) st = ladle_schema_init(&p->schema, p->nkeys + p->nexprs, err);
  for (size_t i = 0; st == LADLE_OK && i < p->nkeys; i++)
    st = ladle_schema_set(&p->schema, i, p->keys[i]->name, p->keys[i]->type, err);
  for (size_t i = 0; st == LADLE_OK && i < p->nexprs; i++)
    st = ladle_schema_set(&p->schema, p->nkeys + i, p->exprs[i]->name, p->exprs[i]->type, err);
  if (st == LADLE_OK) st = check_unique_names(&p->schema, "group_by", err);
  if (st != LADLE_OK) st = ladle_err_context(err, st, "in group_by");
  return finish(p, st, out);
}

static bool is_plain_col(const ladle_bexpr *e) { return e->kind == LADLE_EX_COL; }

ladle_status ladle_plan_join(ladle_plan *left, ladle_plan *right, size_t n_keys,
                             ladle_expr *const *left_on, ladle_expr *const *right_on,
                             const ladle_join_opts *opts, ladle_plan **out, ladle_error *err) {
  ladle_plan *p = left && right ? ladle_plan_node_new(LADLE_NODE_JOIN, 2) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(left);
    ladle_plan_destroy(right);
    destroy_exprs(n_keys, left_on);
    destroy_exprs(n_keys, right_on);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = left;
  p->inputs[1] = right;
  ladle_join_opts o = {LADLE_JOIN_INNER, false, true, NULL, NULL, LADLE_JOIN_ORDER_NONE};
  if (opts != NULL) o = *opts;
  p->join = o;
  p->join.suffix = ladle_strdup(o.suffix ? o.suffix : "_right");
  ladle_status st = p->join.suffix ? LADLE_OK : LADLE_OOM(err, "suffix");
  if (st == LADLE_OK && o.how == LADLE_JOIN_CROSS && n_keys > 0)
    st = ladle_err_set(err, LADLE_EINVAL, "a cross join takes no keys");
  if (st == LADLE_OK && o.how != LADLE_JOIN_CROSS && n_keys == 0)
    st = ladle_err_set(err, LADLE_EINVAL, "a %s join needs at least one key",
                       o.how == LADLE_JOIN_LEFT ? "left" : "keyed");
  if (st == LADLE_OK) st = bind_all(n_keys, left_on, &left->schema, LADLE_CTX_ROWS, &p->keys, err);
  if (st == LADLE_OK) {
    p->nkeys = n_keys;
    st = bind_all(n_keys, right_on, &right->schema, LADLE_CTX_ROWS, &p->rkeys, err);
    if (st == LADLE_OK) {
      ladle_status kst = check_keys("join", n_keys, p->keys, err);
      if (kst == LADLE_OK) kst = check_keys("join", n_keys, p->rkeys, err);
      if (kst != LADLE_OK) {
        for (size_t i = 0; i < n_keys; i++) ladle_bexpr_destroy(p->rkeys[i]);
        free(p->rkeys);
        p->rkeys = NULL;
        st = kst;
      }
    }
    if (st != LADLE_OK) {
      for (size_t i = 0; i < n_keys; i++) ladle_bexpr_destroy(p->keys[i]);
      free(p->keys);
      p->keys = NULL;
      p->nkeys = 0;
    }
  }
  destroy_exprs(n_keys, left_on);
  destroy_exprs(n_keys, right_on);
  for (size_t i = 0; st == LADLE_OK && i < n_keys; i++) {
    char b1[64], b2[64];
    ladle_bexpr *l = p->keys[i], *r = p->rkeys[i];
    if (l->has_agg || r->has_agg || l->has_window || r->has_window)
      st = ladle_err_set(err, LADLE_EINVAL, "key '%s' is an aggregation or a window", l->name);
    else if (!ladle_dtype_equal(l->type, r->type))
      st = ladle_err_set(err, LADLE_ETYPE,
                         "key types differ: left '%s' is %s, right '%s' is %s; cast one side",
                         l->name, ladle_dtype_name(l->type, b1, sizeof b1), r->name,
                         ladle_dtype_name(r->type, b2, sizeof b2));
  }
  if (st != LADLE_OK) return finish(p, ladle_err_context(err, st, "in join"), out);

  const ladle_schema *ls = &left->schema, *rs = &right->schema;
  size_t cap = ls->n + rs->n;
  p->out_map = malloc(LADLE_MAX(cap, 1) * sizeof *p->out_map);
  p->coalesce_rkey = malloc(LADLE_MAX(cap, 1) * sizeof *p->coalesce_rkey);
  char **names = calloc(LADLE_MAX(cap, 1), sizeof *names);
  if (p->out_map == NULL || p->coalesce_rkey == NULL || names == NULL) {
    free(names);
    return finish(p, LADLE_OOM(err, "join"), out);
  }
  /* which keys are merged into one output column: plain columns on both sides,
   * coalesced per key (Polars coalesces the keys the user gave, not the equality
   * keys its optimizer adds) */
  bool *merged = calloc(LADLE_MAX(n_keys, 1), sizeof *merged);
  if (merged == NULL) {
    free(names);
    return finish(p, LADLE_OOM(err, "join"), out);
  }
  bool any_merged = false;
  for (size_t k = 0; k < n_keys; k++) {
    bool ck = o.coalesce_keys ? o.coalesce_keys[k] : o.coalesce;
    merged[k] =
        ck && o.how != LADLE_JOIN_CROSS && is_plain_col(p->keys[k]) && is_plain_col(p->rkeys[k]);
    any_merged |= merged[k];
  }
  p->join.coalesce_keys = NULL; /* not kept: the caller's array */
  size_t n = 0;
  ladle_join_type how = o.how;
  for (size_t i = 0; i < ls->n; i++) {
    bool drop = false;
    int64_t from_right = -1;
    for (size_t k = 0; k < n_keys; k++) {
      if (!merged[k] || p->keys[k]->col != (int64_t)i) continue;
      if (how == LADLE_JOIN_RIGHT) drop = true; /* a right join keeps the right key */
      /* a left key used twice is coalesced with its first partner, as Polars */
      if (how == LADLE_JOIN_FULL && from_right < 0) from_right = p->rkeys[k]->col;
    }
    if (drop) continue;
    p->out_map[n] = (int64_t)i;
    p->coalesce_rkey[n] = from_right;
    names[n++] = ls->names[i];
  }
  if (how != LADLE_JOIN_SEMI && how != LADLE_JOIN_ANTI) {
    for (size_t j = 0; j < rs->n; j++) {
      bool drop = false;
      for (size_t k = 0; k < n_keys; k++)
        drop |= merged[k] && how != LADLE_JOIN_RIGHT && p->rkeys[k]->col == (int64_t)j;
      if (drop) continue;
      p->out_map[n] = -(int64_t)j - 1;
      p->coalesce_rkey[n] = -1;
      names[n++] = rs->names[j];
    }
  }
  free(merged);
  (void)any_merged;
  st = ladle_schema_init(&p->schema, n, err);
  size_t nleft = 0;
  for (size_t i = 0; i < n; i++) nleft += p->out_map[i] >= 0;
  for (size_t i = 0; st == LADLE_OK && i < n; i++) {
    int64_t m = p->out_map[i];
    ladle_dtype t = m >= 0 ? ls->types[m] : rs->types[-m - 1];
    const char *name = names[i];
    char buf[512];
    if (m < 0) {
      bool clash = false;
      for (size_t k = 0; k < nleft; k++) clash |= strcmp(names[k], name) == 0;
      if (clash) {
        snprintf(buf, sizeof buf, "%s%s", name, p->join.suffix);
        name = buf;
      }
    }
    st = ladle_schema_set(&p->schema, i, name, t, err);
  }
  free(names);
  if (st == LADLE_OK) st = check_unique_names(&p->schema, "join", err);
  if (st != LADLE_OK) st = ladle_err_context(err, st, "in join");
  return finish(p, st, out);
}

ladle_status ladle_plan_sort(ladle_plan *input, size_t n_keys, ladle_expr *const *by,
                             const bool *descending, const bool *nulls_last, bool maintain_order,
                             int64_t limit, ladle_plan **out, ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_SORT, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    destroy_exprs(n_keys, by);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  p->maintain_order = maintain_order;
  p->limit = limit;
  ladle_status st = n_keys == 0
                        ? ladle_err_set(err, LADLE_EINVAL, "sort needs at least one key")
                        : bind_all(n_keys, by, &input->schema, LADLE_CTX_ROWS, &p->exprs, err);
  destroy_exprs(n_keys, by);
  if (st == LADLE_OK) {
    p->nexprs = n_keys;
    st = check_keys("sort", n_keys, p->exprs, err);
  }
  if (st == LADLE_OK) {
    p->descending = calloc(n_keys, sizeof(bool));
    p->nulls_last = calloc(n_keys, sizeof(bool));
    if (p->descending == NULL || p->nulls_last == NULL) st = LADLE_OOM(err, "sort");
  }
  for (size_t i = 0; st == LADLE_OK && i < n_keys; i++) {
    p->descending[i] = descending ? descending[i] : false;
    p->nulls_last[i] = nulls_last ? nulls_last[i] : false;
    if (p->exprs[i]->has_agg && p->exprs[i]->scalar)
      st = ladle_err_set(err, LADLE_EINVAL, "sort key '%s' is an aggregation", p->exprs[i]->name);
  }
  if (st == LADLE_OK) st = ladle_schema_copy(&input->schema, &p->schema, err);
  if (st != LADLE_OK) st = ladle_err_context(err, st, "in sort");
  return finish(p, st, out);
}

ladle_status ladle_plan_slice(ladle_plan *input, int64_t offset, int64_t length, ladle_plan **out,
                              ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_SLICE, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  p->offset = offset;
  p->length = length;
  return finish(p, ladle_schema_copy(&input->schema, &p->schema, err), out);
}

ladle_status ladle_plan_distinct(ladle_plan *input, size_t n_subset, const char *const *subset,
                                 ladle_keep keep, bool maintain_order, ladle_plan **out,
                                 ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_DISTINCT, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  p->keep = keep;
  p->maintain_order = maintain_order;
  size_t n = n_subset > 0 ? n_subset : input->schema.n;
  p->subset = malloc(LADLE_MAX(n, 1) * sizeof *p->subset);
  ladle_status st = p->subset ? LADLE_OK : LADLE_OOM(err, "distinct");
  for (size_t i = 0; st == LADLE_OK && i < n; i++) {
    int64_t c = n_subset > 0 ? ladle_schema_find(&input->schema, subset[i]) : (int64_t)i;
    if (c < 0)
      st = ladle_err_set(err, LADLE_ENOCOL, "in unique: subset column '%s' not found", subset[i]);
    p->subset[i] = c;
    if (st == LADLE_OK)
      st = check_key_type("unique", input->schema.names[c], input->schema.types[c], err);
  }
  p->nsubset = n;
  if (st == LADLE_OK) st = ladle_schema_copy(&input->schema, &p->schema, err);
  return finish(p, st, out);
}

ladle_status ladle_plan_union(size_t n, ladle_plan *const *inputs, ladle_plan **out,
                              ladle_error *err) {
  bool ok = n > 0;
  for (size_t i = 0; i < n; i++) ok &= inputs[i] != NULL;
  ladle_plan *p = ok ? ladle_plan_node_new(LADLE_NODE_UNION, n) : NULL;
  if (p == NULL) {
    for (size_t i = 0; i < n; i++) ladle_plan_destroy(inputs[i]);
    return n == 0 ? ladle_err_set(err, LADLE_EINVAL, "union of no inputs")
                  : LADLE_OOM(err, "plan node");
  }
  for (size_t i = 0; i < n; i++) p->inputs[i] = inputs[i];
  ladle_status st = LADLE_OK;
  const ladle_schema *s0 = &inputs[0]->schema;
  for (size_t i = 1; st == LADLE_OK && i < n; i++) {
    const ladle_schema *s = &inputs[i]->schema;
    if (s->n != s0->n) {
      st = ladle_err_set(err, LADLE_EINVAL, "union: input %zu has %zu columns, input 0 has %zu", i,
                         s->n, s0->n);
      break;
    }
    for (size_t c = 0; c < s->n; c++) {
      char b1[64], b2[64];
      if (strcmp(s->names[c], s0->names[c]) != 0 || !ladle_dtype_equal(s->types[c], s0->types[c])) {
        st = ladle_err_set(err, LADLE_ETYPE,
                           "union: column %zu of input %zu is '%s' (%s), of input 0 '%s' (%s)", c,
                           i, s->names[c], ladle_dtype_name(s->types[c], b1, sizeof b1),
                           s0->names[c], ladle_dtype_name(s0->types[c], b2, sizeof b2));
        break;
      }
    }
  }
  if (st == LADLE_OK) st = ladle_schema_copy(s0, &p->schema, err);
  return finish(p, st, out);
}

ladle_status ladle_plan_hconcat(size_t n, ladle_plan *const *inputs, ladle_plan **out,
                                ladle_error *err) {
  bool ok = n > 0;
  for (size_t i = 0; i < n; i++) ok &= inputs[i] != NULL;
  ladle_plan *p = ok ? ladle_plan_node_new(LADLE_NODE_HCONCAT, n) : NULL;
  if (p == NULL) {
    for (size_t i = 0; i < n; i++) ladle_plan_destroy(inputs[i]);
    return n == 0 ? ladle_err_set(err, LADLE_EINVAL, "hconcat of no inputs")
                  : LADLE_OOM(err, "plan node");
  }
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    p->inputs[i] = inputs[i];
    total += inputs[i]->schema.n;
  }
  ladle_status st = ladle_schema_init(&p->schema, total, err);
  size_t k = 0;
  for (size_t i = 0; st == LADLE_OK && i < n; i++)
    for (size_t c = 0; st == LADLE_OK && c < inputs[i]->schema.n; c++)
      st = ladle_schema_set(&p->schema, k++, inputs[i]->schema.names[c], inputs[i]->schema.types[c],
                            err);
  if (st == LADLE_OK) st = check_unique_names(&p->schema, "hconcat", err);
  return finish(p, st, out);
}

ladle_status ladle_plan_hconcat_strict(size_t n, ladle_plan *const *inputs, ladle_plan **out,
                                       ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_plan_hconcat(n, inputs, out, err));
  (*out)->strict = true;
  return LADLE_OK;
}

ladle_status ladle_plan_cache(ladle_plan *input, ladle_plan **out, ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_CACHE, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  return finish(p, ladle_schema_copy(&input->schema, &p->schema, err), out);
}

static ladle_status project(ladle_plan *input, size_t n, const int64_t *idx,
                            const char *const *names, ladle_plan **out, ladle_error *err) {
  ladle_plan *p = ladle_plan_node_new(LADLE_NODE_PROJECT, 1);
  if (p == NULL) {
    ladle_plan_destroy(input);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  p->out_map = malloc(LADLE_MAX(n, 1) * sizeof *p->out_map);
  ladle_status st = p->out_map ? ladle_schema_init(&p->schema, n, err) : LADLE_OOM(err, "project");
  for (size_t i = 0; st == LADLE_OK && i < n; i++) {
    p->out_map[i] = idx[i];
    st = ladle_schema_set(&p->schema, i, names[i], input->schema.types[idx[i]], err);
  }
  if (st == LADLE_OK) st = check_unique_names(&p->schema, "rename", err);
  return finish(p, st, out);
}

ladle_status ladle_plan_rename(ladle_plan *input, size_t n, const char *const *old_names,
                               const char *const *new_names, ladle_plan **out, ladle_error *err) {
  if (input == NULL) return LADLE_OOM(err, "plan node");
  size_t m = input->schema.n;
  int64_t *idx = malloc(LADLE_MAX(m, 1) * sizeof *idx);
  const char **names = malloc(LADLE_MAX(m, 1) * sizeof *names);
  ladle_status st = idx && names ? LADLE_OK : LADLE_OOM(err, "rename");
  for (size_t i = 0; st == LADLE_OK && i < m; i++) {
    idx[i] = (int64_t)i;
    names[i] = input->schema.names[i];
  }
  for (size_t k = 0; st == LADLE_OK && k < n; k++) {
    int64_t c = ladle_schema_find(&input->schema, old_names[k]);
    if (c < 0)
      st = ladle_err_set(err, LADLE_ENOCOL, "in rename: column '%s' not found", old_names[k]);
    else
      names[c] = new_names[k];
  }
  if (st == LADLE_OK)
    st = project(input, m, idx, names, out, err);
  else
    ladle_plan_destroy(input);
  free(idx);
  free(names);
  return st;
}

ladle_status ladle_plan_drop(ladle_plan *input, size_t n, const char *const *drop, ladle_plan **out,
                             ladle_error *err) {
  if (input == NULL) return LADLE_OOM(err, "plan node");
  size_t m = input->schema.n;
  int64_t *idx = malloc(LADLE_MAX(m, 1) * sizeof *idx);
  const char **names = malloc(LADLE_MAX(m, 1) * sizeof *names);
  bool *gone = calloc(LADLE_MAX(m, 1), sizeof *gone);
  ladle_status st = idx && names && gone ? LADLE_OK : LADLE_OOM(err, "drop");
  for (size_t k = 0; st == LADLE_OK && k < n; k++) {
    int64_t c = ladle_schema_find(&input->schema, drop[k]);
    if (c < 0)
      st = ladle_err_set(err, LADLE_ENOCOL, "in drop: column '%s' not found", drop[k]);
    else
      gone[c] = true;
  }
  size_t j = 0;
  for (size_t i = 0; st == LADLE_OK && i < m; i++)
    if (!gone[i]) {
      idx[j] = (int64_t)i;
      names[j++] = input->schema.names[i];
    }
  if (st == LADLE_OK)
    st = project(input, j, idx, names, out, err);
  else
    ladle_plan_destroy(input);
  free(idx);
  free(names);
  free(gone);
  return st;
}

static ladle_status row_index_of(ladle_plan *input, const char *name, int64_t offset,
                                 ladle_type_id type, ladle_plan **out, ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_ROW_INDEX, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  p->offset = offset;
  ladle_status st = LADLE_OK;
  if (offset < 0 || (type == LADLE_TYPE_UINT32 && offset > (int64_t)UINT32_MAX))
    st = ladle_err_set(err, LADLE_EINVAL, "row index offset %lld does not fit %s",
                       (long long)offset, type == LADLE_TYPE_UINT32 ? "UInt32" : "UInt64");
  if (st == LADLE_OK) st = ladle_schema_init(&p->schema, input->schema.n + 1, err);
  if (st == LADLE_OK) st = ladle_schema_set(&p->schema, 0, name, ladle_dtype_make(type), err);
  for (size_t i = 0; st == LADLE_OK && i < input->schema.n; i++)
    st = ladle_schema_set(&p->schema, i + 1, input->schema.names[i], input->schema.types[i], err);
  if (st == LADLE_OK) st = check_unique_names(&p->schema, "with_row_index", err);
  return finish(p, st, out);
}

ladle_status ladle_plan_row_index(ladle_plan *input, const char *name, int64_t offset,
                                  ladle_plan **out, ladle_error *err) {
  return row_index_of(input, name, offset, LADLE_TYPE_UINT32, out, err);
}

ladle_status ladle_plan_row_index_u64(ladle_plan *input, const char *name, int64_t offset,
                                      ladle_plan **out, ladle_error *err) {
  return row_index_of(input, name, offset, LADLE_TYPE_UINT64, out, err);
}

ladle_status ladle_plan_explode(ladle_plan *input, size_t ncols, const char *const *names,
                                bool empty_as_null, bool keep_nulls, ladle_plan **out,
                                ladle_error *err) {
  ladle_plan *p = input ? ladle_plan_node_new(LADLE_NODE_EXPLODE, 1) : NULL;
  if (p == NULL) {
    ladle_plan_destroy(input);
    return LADLE_OOM(err, "plan node");
  }
  p->inputs[0] = input;
  p->empty_as_null = empty_as_null;
  p->keep_nulls = keep_nulls;
  ladle_status st = LADLE_OK;
  char b1[64];
  if (ncols == 0) st = ladle_err_set(err, LADLE_EINVAL, "explode of no column");
  if (st == LADLE_OK && (p->subset = calloc(ncols, sizeof *p->subset)) == NULL)
    st = LADLE_OOM(err, "explode");
  if (st == LADLE_OK) st = ladle_schema_init(&p->schema, input->schema.n, err);
  for (size_t i = 0; st == LADLE_OK && i < input->schema.n; i++)
    st = ladle_schema_set(&p->schema, i, input->schema.names[i], input->schema.types[i], err);
  for (size_t j = 0; st == LADLE_OK && j < ncols; j++) {
    int64_t c = ladle_schema_find(&input->schema, names[j]);
    if (c < 0) {
      st = ladle_err_set(err, LADLE_ENOCOL, "explode: column '%s' not found", names[j]);
      break;
    }
    for (size_t k = 0; k < j && st == LADLE_OK; k++)
      if (p->subset[k] == c)
        st = ladle_err_set(err, LADLE_EINVAL, "explode: column '%s' named twice", names[j]);
    ladle_dtype t = input->schema.types[c];
    if (st == LADLE_OK && t.id != LADLE_TYPE_LIST)
      st = ladle_err_set(err, LADLE_ETYPE, "explode: column '%s' is %s, not a list", names[j],
                         ladle_dtype_name(t, b1, sizeof b1));
    if (st != LADLE_OK) break;
    p->subset[j] = c;
    p->nsubset = j + 1;
    p->schema.types[c] = *t.child; /* the element type */
  }
  return finish(p, st, out);
}

/* ----------------------------------------------------------------- explain */

static void explain_exprs(ladle_strbuf *b, const char *label, size_t n, ladle_bexpr **e,
                          const ladle_schema *in) {
  ladle_strbuf_printf(b, "%s[", label);
  for (size_t i = 0; i < n; i++) {
    if (i > 0) ladle_strbuf_printf(b, ", ");
    ladle_bexpr_explain(e[i], in, b);
  }
  ladle_strbuf_printf(b, "]");
}

void ladle_plan_node_text(const ladle_plan *p, ladle_strbuf *b) {
  static const char *join_names[] = {"inner", "left", "right", "full", "semi", "anti", "cross"};
  static const char *keep_names[] = {"any", "first", "last", "none"};
  const ladle_schema *in = p->ninputs > 0 ? &p->inputs[0]->schema : &p->schema;
  switch (p->kind) {
    case LADLE_NODE_SCAN:
      ladle_strbuf_printf(b, "SCAN memory: %zu columns, %lld rows, %zu partitions", p->schema.n,
                          (long long)p->table->num_rows, p->table->nchunks);
      break;
    case LADLE_NODE_FILTER:
      explain_exprs(b, "FILTER ", 1, p->exprs, in);
      break;
    case LADLE_NODE_SELECT:
      explain_exprs(b, "SELECT ", p->nexprs, p->exprs, in);
      break;
    case LADLE_NODE_WITH_COLUMNS:
      explain_exprs(b, "WITH_COLUMNS ", p->nexprs, p->exprs, in);
      break;
    case LADLE_NODE_GROUP_BY:
      explain_exprs(b, "GROUP_BY ", p->nkeys, p->keys, in);
      explain_exprs(b, " AGG ", p->nexprs, p->exprs, in);
      if (p->maintain_order) ladle_strbuf_printf(b, " maintain_order");
      break;
    case LADLE_NODE_JOIN:
      ladle_strbuf_printf(b, "JOIN %s", join_names[p->join.how]);
      explain_exprs(b, " left_on=", p->nkeys, p->keys, in);
      explain_exprs(b, " right_on=", p->nkeys, p->rkeys, &p->inputs[1]->schema);
      if (p->join.nulls_equal) ladle_strbuf_printf(b, " nulls_equal");
      break;
    case LADLE_NODE_SORT:
      explain_exprs(b, "SORT ", p->nexprs, p->exprs, in);
      for (size_t i = 0; i < p->nexprs; i++)
        ladle_strbuf_printf(b, "%s%s%s", i ? "," : " ", p->descending[i] ? "desc" : "asc",
                            p->nulls_last[i] ? "/nulls_last" : "");
      if (p->limit >= 0) ladle_strbuf_printf(b, " limit=%lld", (long long)p->limit);
      break;
    case LADLE_NODE_SLICE:
      ladle_strbuf_printf(b, "SLICE offset=%lld length=%lld", (long long)p->offset,
                          (long long)p->length);
      break;
    case LADLE_NODE_DISTINCT:
      ladle_strbuf_printf(b, "UNIQUE keep=%s subset=[", keep_names[p->keep]);
      for (size_t i = 0; i < p->nsubset; i++)
        ladle_strbuf_printf(b, "%s\"%s\"", i ? ", " : "", in->names[p->subset[i]]);
      ladle_strbuf_printf(b, "]%s", p->maintain_order ? " maintain_order" : "");
      break;
    case LADLE_NODE_UNION:
      ladle_strbuf_printf(b, "UNION %zu inputs", p->ninputs);
      break;
    case LADLE_NODE_HCONCAT:
      ladle_strbuf_printf(b, "HCONCAT %zu inputs", p->ninputs);
      break;
    case LADLE_NODE_CACHE:
      ladle_strbuf_printf(b, "CACHE %p", (const void *)p);
      break;
    case LADLE_NODE_PROJECT:
      ladle_strbuf_printf(b, "PROJECT [");
      for (size_t i = 0; i < p->schema.n; i++)
        ladle_strbuf_printf(b, "%s\"%s\"", i ? ", " : "", p->schema.names[i]);
      ladle_strbuf_printf(b, "]");
      break;
    case LADLE_NODE_ROW_INDEX:
      ladle_strbuf_printf(b, "ROW_INDEX \"%s\" offset=%lld", p->schema.names[0],
                          (long long)p->offset);
      break;
    case LADLE_NODE_EXPLODE:
      ladle_strbuf_printf(b, "EXPLODE [");
      for (size_t i = 0; i < p->nsubset; i++)
        ladle_strbuf_printf(b, "%s\"%s\"", i ? ", " : "", p->schema.names[p->subset[i]]);
      ladle_strbuf_printf(b, "]%s%s", p->empty_as_null ? " empty_as_null" : "",
                          p->keep_nulls ? " keep_nulls" : "");
      break;
    case LADLE_NODE_SCAN_PARQUET:
    case LADLE_NODE_SCAN_CSV:
      ladle_strbuf_printf(b, "SCAN %s: %zu columns [",
                          p->kind == LADLE_NODE_SCAN_CSV ? "csv" : "parquet", p->schema.n);
      for (size_t i = 0; i < p->schema.n; i++)
        ladle_strbuf_printf(b, "%s\"%s\"", i ? ", " : "", p->schema.names[i]);
      ladle_strbuf_printf(b, "]");
      break;
  }
}

static void explain_rec(const ladle_plan *p, int depth, ladle_strbuf *b) {
  ladle_strbuf_printf(b, "%*s", depth * 2, "");
  ladle_plan_node_text(p, b);
  ladle_strbuf_printf(b, "\n");
  for (size_t i = 0; i < p->ninputs; i++) explain_rec(p->inputs[i], depth + 1, b);
}

ladle_status ladle_plan_explain(const ladle_plan *p, char **out_text, ladle_error *err) {
  ladle_strbuf b = {NULL, 0, 0, false};
  explain_rec(p, 0, &b);
  if (b.failed || b.data == NULL) {
    free(b.data);
    return LADLE_OOM(err, "explain text");
  }
  *out_text = b.data;
  return LADLE_OK;
}
