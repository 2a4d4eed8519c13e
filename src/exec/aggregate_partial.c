/* aggregate_partial.c — group_by as a partial step per morsel and a final
 * step over the partials, where every output is an aggregation that splits
 * that way (sum, min, max, first, last, count, null_count, len, mean).
 *
 * Partial: each chunk of the input, on its own task, evaluates its keys and
 * the aggregations' inputs (so no input expression is ever materialised for
 * the whole table), numbers its groups and aggregates them: one row per group
 * of the chunk, the keys at the group's first row, then the partial columns
 * (mean: a Float64 sum and a count). Final: the partial rows, concatenated in
 * chunk order, grouped again by the keys and aggregated once more (sums of
 * sums and of counts, min of mins, first of firsts; mean: sum / count, null
 * where the count is 0). Chunk order keeps what depends on order: a group's
 * first row, first/last, and which of -0.0 and 0.0 a min returns; with
 * maintain_order each chunk's groups are numbered by first appearance, so the
 * final groups are too.
 *
 * This is where an exchange will sit with several ranks (hash-partition the
 * partial rows by key). Today it is chosen at run time by exec_group_by, not
 * planned; a probe of the first chunk turns it down when groups are many
 * (partials as long as the input only add work). LADLE_PARTIAL_AGG=0 turns it
 * off, =1 uses it for every input it can run (the tests), and by default it
 * runs on inputs of at least PARTIAL_MIN_ROWS rows in four chunks or more, the
 * first of them at most a quarter of the rows. */
#include "exec.h"

enum { PARTIAL_MIN_ROWS = 100000 };

typedef struct pa_expr {
  const ladle_bexpr *e;
  const ladle_bexpr *arg; /* NULL: len() */
  ladle_agg_op op;
  size_t first;  /* index of its first partial column (after the keys) */
  size_t nparts; /* 1, or 2 for mean (sum, count) */
} pa_expr;

/* Releases cols[0..n) (the array stays). */
static void release_n(ladle_column *cols, size_t n) {
  for (size_t i = 0; cols != NULL && i < n; i++) ladle_column_release(&cols[i]);
}

static bool rowwise(const ladle_bexpr *e) { return !e->has_agg && !e->has_window && !e->scalar; }

/* What the partial path can run; fills x (p->nexprs of them) and *ncols. */
static bool pa_eligible(const ladle_plan *p, pa_expr *x, size_t *ncols) {
  size_t c = p->nkeys;
  for (size_t i = 0; i < p->nkeys; i++)
    if (!rowwise(p->keys[i]) || p->keys[i]->type.id == LADLE_TYPE_LIST) return false;
  for (size_t i = 0; i < p->nexprs; i++) {
    const ladle_bexpr *e = p->exprs[i];
    while (e->kind == LADLE_EX_ALIAS && e->nargs == 1) e = e->args[0];
    pa_expr *q = &x[i];
    memset(q, 0, sizeof *q);
    q->e = e;
    q->first = c;
    q->nparts = 1;
    if (e->has_window) return false;
    if (e->kind == LADLE_EX_LEN) {
      if (e->nargs != 0) return false;
      q->op = LADLE_AGG_LEN;
      c++;
      continue;
    }
    if (e->kind != LADLE_EX_AGG || e->nargs != 1 || !rowwise(e->args[0])) return false;
    q->arg = e->args[0];
    q->op = (ladle_agg_op)e->op;
    ladle_type_id t = q->arg->type.id;
    if (t == LADLE_TYPE_LIST || ladle_type_is_carried(t) || t == LADLE_TYPE_CATEGORICAL)
      return false;
    switch (q->op) {
      case LADLE_AGG_SUM:
        if (!(ladle_type_is_numeric(t) || t == LADLE_TYPE_BOOL || t == LADLE_TYPE_DURATION))
          return false;
        /* over all rows (no keys) a float sum is Polars' pairwise one, bit
         * for bit, which per-chunk partials would not keep */
        if (p->nkeys == 0 && ladle_type_is_float(t)) return false;
        break;
      case LADLE_AGG_MEAN:
        if (!(ladle_type_is_numeric(t) || t == LADLE_TYPE_BOOL) || e->aopts.polars_order ||
            p->nkeys == 0)
          return false;
        q->nparts = 2;
        break;
      case LADLE_AGG_MIN:
      case LADLE_AGG_MAX:
      case LADLE_AGG_FIRST:
      case LADLE_AGG_LAST:
      case LADLE_AGG_COUNT:
      case LADLE_AGG_NULL_COUNT:
      case LADLE_AGG_LEN:
        break;
      default:
        return false;
    }
    c += q->nparts;
  }
  *ncols = c;
  return true;
}

static ladle_kexpr kagg(ladle_agg_op op, ladle_dtype type, const ladle_bexpr *e) {
  ladle_kexpr k;
  memset(&k, 0, sizeof k);
  k.kind = op == LADLE_AGG_LEN ? LADLE_KEX_LEN : LADLE_KEX_AGG;
  k.op = (int)op;
  k.type = type;
  if (e != NULL) k.aopts = e->aopts;
  k.nargs = op == LADLE_AGG_LEN ? 0 : 1;
  k.arg_name = e != NULL && e->nargs > 0 && e->args[0]->name != NULL ? e->args[0]->name : "";
  return k;
}

static ladle_status groups_of(exec_state *s, const ladle_plan *p, const ladle_column *keys,
                              int64_t n, ladle_groups *g, ladle_error *err) {
  if (p->nkeys == 0) return ladle_exec_single_group(n, g, err);
  memset(g, 0, sizeof *g);
  ladle_status st = s->be->group_ids(&s->k, keys, p->nkeys, g, err);
  if (st == LADLE_OK && p->maintain_order) st = ladle_groups_order_by_first(g, err);
  if (st != LADLE_OK) ladle_groups_release(g);
  return st;
}

/* The row-wise nodes (FILTER, SELECT, WITH_COLUMNS, PROJECT) right under a
 * group_by, run chunk by chunk inside its partial step: a pipeline from the
 * node below them (the source, executed as usual) into the aggregation, with
 * no table in between. */
enum { CHAIN_MAX = 16 };
typedef struct pa_chain {
  size_t n; /* nodes, the one over the source first */
  const ladle_plan *node[CHAIN_MAX];
  bool *need[CHAIN_MAX];      /* per node: which of its outputs are read above */
  exec_pred *fast[CHAIN_MAX]; /* FILTER: its predicate as fused comparisons */
} pa_chain;

typedef struct pa_job {
  exec_state *s;
  const ladle_plan *p;
  const ladle_table *in; /* the group_by's input, or the chain's source */
  const pa_chain *chain;
  const pa_expr *x;
  size_t ncols;
  ladle_column *parts; /* nchunks rows of ncols */
  int64_t *rows;       /* per chunk: its groups (partial rows) */
  bool *done;
} pa_job;

/* keep[i] = whether row i of chunk c passes FILTER f's predicate (0/1), and
 * how many do. */
static ladle_status pa_keep(exec_state *s, const ladle_plan *f, const exec_pred *fast,
                            const ladle_chunk *c, uint8_t *keep, int64_t *kept, ladle_error *err) {
  int64_t n = c->length;
  if (fast != NULL) {
    LADLE_RETURN_NOT_OK(exec_pred_keep(s, fast, c, keep, err));
    /* counted only: mask NULL is true everywhere */
    return s->be->mask_and(&s->k, NULL, n, false, keep, kept, err);
  }
  ladle_column m;
  LADLE_RETURN_NOT_OK(ladle_eval_chunk(s, f->exprs[0], c, &m, err));
  ladle_status st = s->be->mask_and(&s->k, &m, n, true, keep, kept, err);
  ladle_column_release(&m);
  return st;
}

/* One chain node over chunk c (columns owned by the caller), into next
 * (node->schema.n columns, owned; *next_len its rows). */
static ladle_status chain_step(exec_state *s, const pa_chain *ch, size_t i, const ladle_chunk *c,
                               ladle_column *next, int64_t *next_len, ladle_error *err) {
  const ladle_plan *r = ch->node[i];
  const bool *need = ch->need[i];
  size_t nout = r->schema.n, made = 0;
  ladle_status st = LADLE_OK;
  *next_len = c->length;
  switch (r->kind) {
    case LADLE_NODE_FILTER: {
      uint8_t *keep = malloc((size_t)LADLE_MAX(c->length, 1));
      if (keep == NULL) return LADLE_OOM(err, "filter");
      int64_t kept = 0;
      st = pa_keep(s, r, ch->fast[i], c, keep, &kept, err);
      for (; st == LADLE_OK && made < nout; made++) {
        if (!need[made])
          exec_placeholder(&next[made], kept);
        else if (kept == c->length)
          ladle_column_copy_ref(&c->columns[made], &next[made]);
        else
          st = s->be->compact(&s->k, &c->columns[made], keep, kept, &next[made], err);
      }
      if (st != LADLE_OK && made > 0) made--;
      free(keep);
      *next_len = kept;
      break;
    }
    case LADLE_NODE_PROJECT:
      for (; made < nout; made++)
        if (need[made])
          ladle_column_copy_ref(&c->columns[r->out_map[made]], &next[made]);
        else
          exec_placeholder(&next[made], c->length);
      break;
    case LADLE_NODE_SELECT:
    case LADLE_NODE_WITH_COLUMNS: {
      /* every expression computed (its errors are the query's), each as long
       * as the chunk */
      ladle_column *v = calloc(LADLE_MAX(r->nexprs, 1), sizeof *v);
      if (v == NULL) return LADLE_OOM(err, "select");
      size_t done = 0;
      for (; done < r->nexprs && st == LADLE_OK; done++) {
        ladle_column e;
        st = ladle_eval_chunk(s, r->exprs[done], c, &e, err);
        if (st == LADLE_OK && e.length != c->length) {
          st = ladle_column_broadcast(&e, c->length, &v[done], err);
          ladle_column_release(&e);
        } else if (st == LADLE_OK) {
          v[done] = e;
        }
      }
      if (st != LADLE_OK) done--;
      for (; st == LADLE_OK && made < nout; made++) {
        int64_t m = r->kind == LADLE_NODE_SELECT ? -(int64_t)made - 1 : r->out_map[made];
        if (!need[made])
          exec_placeholder(&next[made], c->length);
        else if (m >= 0)
          ladle_column_copy_ref(&c->columns[m], &next[made]);
        else
          ladle_column_copy_ref(&v[-m - 1], &next[made]);
      }
      release_n(v, done);
      free(v);
      break;
    }
    default:
      st = ladle_err_set(err, LADLE_EINVAL, "internal: node %d in a group_by's pipeline",
                         (int)r->kind);
  }
  if (st != LADLE_OK) release_n(next, made);
  return st;
}

/* Chunk src through the whole chain: *out gets columns (owned, the top
 * node's schema) and its rows. */
static ladle_status chain_apply(exec_state *s, const pa_chain *ch, const ladle_chunk *src,
                                size_t src_cols, ladle_chunk *out, ladle_error *err) {
  ladle_column *cur = calloc(LADLE_MAX(src_cols, 1), sizeof *cur);
  if (cur == NULL) return LADLE_OOM(err, "group_by");
  for (size_t c = 0; c < src_cols; c++) ladle_column_copy_ref(&src->columns[c], &cur[c]);
  ladle_chunk c = {src->length, cur, src->table_rows};
  size_t ncur = src_cols;
  ladle_status st = LADLE_OK;
  for (size_t i = 0; i < ch->n && st == LADLE_OK; i++) {
    size_t nout = ch->node[i]->schema.n;
    ladle_column *next = calloc(LADLE_MAX(nout, 1), sizeof *next);
    int64_t len = 0;
    st = next != NULL ? chain_step(s, ch, i, &c, next, &len, err) : LADLE_OOM(err, "group_by");
    release_n(cur, ncur);
    free(cur);
    cur = next;
    ncur = st == LADLE_OK ? nout : 0;
    /* table_rows: after a filter, the whole column's rows are not known here;
     * plans where they matter (a division, a when) are not run this way */
    c = (ladle_chunk){len, cur, src->table_rows};
  }
  if (st != LADLE_OK) {
    free(cur);
    return st;
  }
  *out = c;
  return LADLE_OK;
}

static ladle_status pa_rows(pa_job *j, size_t k, const ladle_chunk *c, ladle_error *err);

/* The partial rows of chunk k (through the chain, when there is one). */
static ladle_status pa_chunk(pa_job *j, size_t k, ladle_error *err) {
  const ladle_chunk *c = &j->in->chunks[k];
  if (j->chain == NULL || j->chain->n == 0) return pa_rows(j, k, c, err);
  ladle_chunk lc;
  LADLE_RETURN_NOT_OK(chain_apply(j->s, j->chain, c, j->in->schema.n, &lc, err));
  ladle_status st = pa_rows(j, k, &lc, err);
  release_n(lc.columns, j->p->inputs[0]->schema.n);
  free(lc.columns);
  return st;
}

/* The partial rows of chunk k, from its rows c. */
static ladle_status pa_rows(pa_job *j, size_t k, const ladle_chunk *c, ladle_error *err) {
  exec_state *s = j->s;
  const ladle_plan *p = j->p;
  ladle_column *out = j->parts + k * j->ncols;
  size_t nk = p->nkeys, made = 0;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  if (keys == NULL) return LADLE_OOM(err, "group_by");
  ladle_status st = LADLE_OK;
  size_t have = 0;
  for (; have < nk && st == LADLE_OK; have++)
    st = ladle_eval_chunk(s, p->keys[have], c, &keys[have], err);
  if (st != LADLE_OK) have--;
  ladle_groups g;
  memset(&g, 0, sizeof g);
  bool have_g = false;
  if (st == LADLE_OK) {
    st = groups_of(s, p, keys, c->length, &g, err);
    have_g = st == LADLE_OK;
  }
  for (size_t i = 0; st == LADLE_OK && i < nk; i++) {
    st = s->be->gather(&s->k, &keys[i], g.first, g.ngroups, &out[i], err);
    if (st == LADLE_OK) made++;
  }
  for (size_t i = 0; st == LADLE_OK && i < p->nexprs; i++) {
    const pa_expr *q = &j->x[i];
    ladle_column arg;
    memset(&arg, 0, sizeof arg);
    if (q->arg != NULL) {
      st = ladle_eval_chunk(s, q->arg, c, &arg, err);
      if (st != LADLE_OK) break;
    }
    if (q->op == LADLE_AGG_MEAN) {
      /* a Float64 sum and a count */
      ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64);
      ladle_column f;
      st = s->be->cast(&s->k, &arg, f64, LADLE_CAST_NON_STRICT, q->arg->name, &f, err);
      if (st == LADLE_OK) {
        ladle_kexpr ks = kagg(LADLE_AGG_SUM, f64, q->e);
        st = s->be->aggregate(&s->k, &ks, &f, &g, &out[q->first], err);
        ladle_column_release(&f);
      }
      if (st == LADLE_OK) {
        made++;
        ladle_kexpr kc = kagg(LADLE_AGG_COUNT, ladle_dtype_make(LADLE_TYPE_UINT32), q->e);
        st = s->be->aggregate(&s->k, &kc, &arg, &g, &out[q->first + 1], err);
        if (st == LADLE_OK) made++;
      }
    } else {
      /* a Float32 sum's partials in Float64: rounded once, at the end */
      ladle_dtype pt = q->e->type;
      if (q->op == LADLE_AGG_SUM && pt.id == LADLE_TYPE_FLOAT32)
        pt = ladle_dtype_make(LADLE_TYPE_FLOAT64);
      ladle_kexpr ka = kagg(q->op, pt, q->e);
      st = s->be->aggregate(&s->k, &ka, q->arg != NULL ? &arg : NULL, &g, &out[q->first], err);
      if (st == LADLE_OK) made++;
    }
    ladle_column_release(&arg);
  }
  j->rows[k] = have_g ? g.ngroups : 0;
  if (have_g) ladle_groups_release(&g);
  release_n(keys, have);
  free(keys);
  if (st != LADLE_OK) {
    release_n(out, made);
    memset(out, 0, j->ncols * sizeof *out);
    return st;
  }
  j->done[k] = true;
  return LADLE_OK;
}

static ladle_status pa_task(void *vctx, size_t k, ladle_error *err) {
  pa_job *j = vctx;
  return j->done[k] ? LADLE_OK : pa_chunk(j, k, err);
}

/* The final value of expression q over the partial columns `part` grouped by g. */
static ladle_status pa_final(exec_state *s, const pa_expr *q, const ladle_column *part,
                             ladle_groups *g, ladle_column *out, ladle_error *err) {
  switch (q->op) {
    case LADLE_AGG_COUNT:
    case LADLE_AGG_NULL_COUNT:
    case LADLE_AGG_LEN: {
      ladle_kexpr k = kagg(LADLE_AGG_SUM, q->e->type, q->e);
      return s->be->aggregate(&s->k, &k, part, g, out, err);
    }
    case LADLE_AGG_MEAN:
      break;
    default: {
      ladle_kexpr k = kagg(q->op, q->e->type, q->e);
      return s->be->aggregate(&s->k, &k, part, g, out, err);
    }
  }
  /* mean: the sum of the sums over the sum of the counts, null where that is 0 */
  ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64), u32 = ladle_dtype_make(LADLE_TYPE_UINT32);
  ladle_kctx k = s->k;
  k.many_rows = false; /* group by group: a plain division */
  ladle_column sum, cnt, cntf, div, zero, isz, nul, res;
  ladle_kexpr ks = kagg(LADLE_AGG_SUM, f64, q->e), kc = kagg(LADLE_AGG_SUM, u32, q->e);
  LADLE_RETURN_NOT_OK(s->be->aggregate(&s->k, &ks, &part[0], g, &sum, err));
  ladle_status st = s->be->aggregate(&s->k, &kc, &part[1], g, &cnt, err);
  if (st != LADLE_OK) {
    ladle_column_release(&sum);
    return st;
  }
  st = s->be->cast(&k, &cnt, f64, LADLE_CAST_NON_STRICT, "count", &cntf, err);
  ladle_column_release(&cnt);
  if (st == LADLE_OK) {
    st = s->be->binary(&k, LADLE_OP_TRUE_DIV, &sum, &cntf, f64, &div, err);
    if (st == LADLE_OK) {
      st = ladle_column_alloc(f64, 1, false, 0, &zero, err);
      if (st == LADLE_OK) {
        LADLE_COL_MUT(&zero, double)[0] = 0.0;
        st = s->be->binary(&k, LADLE_OP_EQ, &cntf, &zero, ladle_dtype_make(LADLE_TYPE_BOOL), &isz,
                           err);
        ladle_column_release(&zero);
      }
      if (st == LADLE_OK) {
        st = ladle_column_nulls(f64, 1, &nul, err);
        if (st == LADLE_OK) {
          ladle_column args[3] = {isz, nul, div};
          st = s->be->when(&k, args, 3, div.length, &res, err);
          ladle_column_release(&nul);
        }
        ladle_column_release(&isz);
      }
      ladle_column_release(&div);
    }
    ladle_column_release(&cntf);
  }
  ladle_column_release(&sum);
  if (st != LADLE_OK) return st;
  if (q->e->type.id == LADLE_TYPE_FLOAT64) {
    *out = res;
    return LADLE_OK;
  }
  st = s->be->cast(&k, &res, q->e->type, LADLE_CAST_NON_STRICT, q->e->name, out, err);
  ladle_column_release(&res);
  return st;
}

static int partial_mode(void) {
  const char *v = getenv("LADLE_PARTIAL_AGG");
  if (v != NULL && strcmp(v, "0") == 0) return 0;
  if (v != NULL && strcmp(v, "1") == 0) return 1;
  return -1; /* by size */
}

/* Whether e's value can depend on the rows of the whole column it belongs
 * to (chunk->table_rows): a division by one value (Polars' formula) or a
 * when (Polars computes a branch no row takes by the frame's height). After
 * a filter run per chunk that height is not known. */
static bool uses_height(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_WHEN) return true;
  if (e->kind == LADLE_EX_BINARY &&
      (e->op == LADLE_OP_TRUE_DIV || e->op == LADLE_OP_FLOOR_DIV || e->op == LADLE_OP_MOD))
    return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (uses_height(e->args[i])) return true;
  return false;
}

static bool any_uses_height(ladle_bexpr *const *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (uses_height(e[i])) return true;
  return false;
}

/* Whether r can run chunk by chunk in a group_by's pipeline. */
static bool chain_node(const ladle_plan *r) {
  if (r->ninputs != 1) return false;
  switch (r->kind) {
    case LADLE_NODE_FILTER:
      return r->nexprs == 1 && rowwise(r->exprs[0]) &&
             (r->exprs[0]->type.id == LADLE_TYPE_BOOL || r->exprs[0]->type.id == LADLE_TYPE_NULL) &&
             r->inputs[0]->schema.n == r->schema.n;
    case LADLE_NODE_PROJECT:
      return true;
    case LADLE_NODE_SELECT:
    case LADLE_NODE_WITH_COLUMNS: {
      bool rows = r->kind == LADLE_NODE_WITH_COLUMNS; /* a select of single values is one row */
      for (size_t i = 0; i < r->nexprs; i++) {
        if (r->exprs[i]->has_agg || r->exprs[i]->has_window) return false;
        rows |= !r->exprs[i]->scalar;
      }
      return rows && r->nexprs > 0;
    }
    default:
      return false;
  }
}

/* The chain under p (nodes only, top first into ch->node in reverse), or
 * false when p does not run as a pipeline. */
static bool chain_shape(const ladle_plan *p, pa_chain *ch) {
  memset(ch, 0, sizeof *ch);
  if (partial_mode() == 0 || p->kind != LADLE_NODE_GROUP_BY || p->ninputs != 1) return false;
  const ladle_plan *top[CHAIN_MAX];
  size_t n = 0;
  for (const ladle_plan *r = p->inputs[0]; chain_node(r); r = r->inputs[0]) {
    if (n == CHAIN_MAX) return false;
    top[n++] = r;
  }
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++) ch->node[i] = top[n - 1 - i];
  ch->n = n;
  /* above the lowest filter, nothing may depend on the column's height */
  size_t f = n;
  for (size_t i = 0; i < n && f == n; i++)
    if (ch->node[i]->kind == LADLE_NODE_FILTER) f = i;
  for (size_t i = f + 1; i < n; i++)
    if (any_uses_height(ch->node[i]->exprs, ch->node[i]->nexprs)) return false;
  if (f < n && (any_uses_height(p->keys, p->nkeys) || any_uses_height(p->exprs, p->nexprs)))
    return false;
  return ladle_exec_group_by_splits(p);
}

static void chain_free(pa_chain *ch) {
  for (size_t i = 0; i < ch->n; i++) {
    free(ch->need[i]);
    if (ch->fast[i] != NULL) exec_pred_destroy(ch->fast[i]);
  }
  memset(ch, 0, sizeof *ch);
}

/* The needs (top down) and the filters' fused comparisons. */
static ladle_status chain_prepare(exec_state *s, const ladle_plan *p, pa_chain *ch,
                                  ladle_error *err) {
  for (size_t i = 0; i < ch->n; i++) {
    ch->need[i] = calloc(LADLE_MAX(ch->node[i]->schema.n, 1), sizeof(bool));
    if (ch->need[i] == NULL) return LADLE_OOM(err, "group_by");
  }
  const ladle_plan *t = ch->node[ch->n - 1];
  for (size_t i = 0; i < p->nkeys; i++)
    ladle_exec_mark_columns(p->keys[i], ch->need[ch->n - 1], t->schema.n);
  for (size_t i = 0; i < p->nexprs; i++)
    ladle_exec_mark_columns(p->exprs[i], ch->need[ch->n - 1], t->schema.n);
  for (size_t i = ch->n - 1; i > 0; i--) {
    const ladle_plan *r = ch->node[i];
    bool *in = ch->need[i - 1], *o = ch->need[i];
    size_t nin = r->inputs[0]->schema.n;
    switch (r->kind) {
      case LADLE_NODE_FILTER:
        for (size_t c = 0; c < nin; c++) in[c] |= o[c];
        ladle_exec_mark_columns(r->exprs[0], in, nin);
        break;
      case LADLE_NODE_PROJECT:
        for (size_t c = 0; c < r->schema.n; c++)
          if (o[c]) in[r->out_map[c]] = true;
        break;
      case LADLE_NODE_WITH_COLUMNS:
        for (size_t c = 0; c < r->schema.n; c++)
          if (o[c] && r->out_map[c] >= 0) in[r->out_map[c]] = true;
        for (size_t k = 0; k < r->nexprs; k++) ladle_exec_mark_columns(r->exprs[k], in, nin);
        break;
      default: /* SELECT: every expression is computed */
        for (size_t k = 0; k < r->nexprs; k++) ladle_exec_mark_columns(r->exprs[k], in, nin);
        break;
    }
  }
  for (size_t i = 0; i < ch->n; i++)
    if (ch->node[i]->kind == LADLE_NODE_FILTER)
      LADLE_RETURN_NOT_OK(exec_pred_compile(s, ch->node[i]->exprs[0],
                                            &ch->node[i]->inputs[0]->schema, &ch->fast[i], err));
  return LADLE_OK;
}

bool ladle_exec_group_by_splits(const ladle_plan *p) {
  if (p->kind != LADLE_NODE_GROUP_BY || partial_mode() == 0) return false;
  pa_expr *x = calloc(LADLE_MAX(p->nexprs, 1), sizeof *x);
  size_t ncols = 0;
  bool ok = x != NULL && pa_eligible(p, x, &ncols);
  free(x);
  return ok;
}

const ladle_plan *ladle_exec_group_by_source(const ladle_plan *p) {
  pa_chain ch;
  return chain_shape(p, &ch) ? ch.node[0]->inputs[0] : NULL;
}

static ladle_status run_partial(exec_state *s, const ladle_plan *p, const ladle_table *in,
                                const pa_chain *chain, ladle_table **out, bool *used,
                                ladle_error *err) {
  *used = false;
  int mode = partial_mode();
  if (mode == 0 || in->nchunks == 0) return LADLE_OK;
  /* by default: enough rows, and chunks enough that the probe (the first
   * chunk, on this thread) is a small part of them */
  if (mode < 0 && (in->nchunks < 4 || in->num_rows < PARTIAL_MIN_ROWS ||
                   in->chunks[0].length > in->num_rows / 4))
    return LADLE_OK;
  size_t nk = p->nkeys, na = p->nexprs, ncols = 0;
  pa_expr *x = calloc(LADLE_MAX(na, 1), sizeof *x);
  if (x == NULL) return LADLE_OOM(err, "group_by");
  if (!pa_eligible(p, x, &ncols)) {
    free(x);
    return LADLE_OK;
  }
  size_t nch = in->nchunks;
  pa_job j = {s, p, in, chain, x, ncols, NULL, NULL, NULL};
  j.parts = calloc(nch * ncols, sizeof *j.parts);
  j.rows = calloc(nch, sizeof *j.rows);
  j.done = calloc(nch, sizeof *j.done);
  ladle_column *cat = calloc(ncols, sizeof *cat);
  ladle_column *tmp = calloc(nch, sizeof *tmp);
  ladle_column *cols = calloc(nk + na + 1, sizeof *cols);
  ladle_status st = LADLE_OK;
  size_t ncat = 0, made = 0;
  ladle_groups g;
  bool have_g = false;
  if (j.parts == NULL || j.rows == NULL || j.done == NULL || cat == NULL || tmp == NULL ||
      cols == NULL) {
    st = LADLE_OOM(err, "group_by");
    goto done;
  }
  /* the probe: the first chunk alone; many groups per row turn the path down */
  st = pa_chunk(&j, 0, err);
  if (st != LADLE_OK) goto done;
  if (mode < 0 && nk > 0 && j.rows[0] > in->chunks[0].length / 8) goto done;
  *used = true;
  st = ladle_pool_run(s->k.pool, nch, pa_task, &j, err);
  if (st != LADLE_OK) goto done;
  /* the partial rows in chunk order */
  for (; ncat < ncols && st == LADLE_OK; ncat++) {
    for (size_t k = 0; k < nch; k++) tmp[k] = j.parts[k * ncols + ncat];
    st = ladle_column_concat_pool(tmp, nch, s->k.pool, &cat[ncat], err);
  }
  if (st != LADLE_OK) {
    ncat--;
    goto done;
  }
  {
    /* EXCHANGE: the partial rows to the rank that owns their keys (a
     * reduction's to one rank); with one rank they stay as they are */
    ladle_column *moved = calloc(ncols, sizeof *moved);
    if (moved == NULL) {
      st = LADLE_OOM(err, "group_by");
      goto done;
    }
    st = ladle_exec_exchange(s, nk > 0 ? LADLE_EXCHANGE_HASH : LADLE_EXCHANGE_BROADCAST, cat, ncols,
                             nk, moved, err);
    if (st != LADLE_OK) {
      free(moved);
      goto done;
    }
    release_n(cat, ncat);
    free(cat);
    cat = moved;
  }
  int64_t prow = cat[0].length;
  st = groups_of(s, p, cat, prow, &g, err);
  if (st != LADLE_OK) goto done;
  have_g = true;
  for (size_t i = 0; i < nk && st == LADLE_OK; i++) {
    st = s->be->gather(&s->k, &cat[i], g.first, g.ngroups, &cols[i], err);
    if (st == LADLE_OK) made++;
  }
  for (size_t i = 0; i < na && st == LADLE_OK; i++) {
    st = pa_final(s, &x[i], &cat[x[i].first], &g, &cols[nk + i], err);
    if (st == LADLE_OK) made++;
  }
  if (st == LADLE_OK) {
    int64_t ngroups = g.ngroups;
    made = 0; /* handed over */
    st = ladle_exec_table_from_columns(s, &p->schema, cols, ngroups, out, err);
  }
done:
  if (have_g) ladle_groups_release(&g);
  release_n(cols, made);
  release_n(cat, ncat);
  if (j.parts != NULL)
    for (size_t k = 0; k < nch; k++)
      if (j.done != NULL && j.done[k]) release_n(j.parts + k * ncols, ncols);
  free(j.parts);
  free(j.rows);
  free(j.done);
  free(cat);
  free(tmp);
  free(cols);
  free(x);
  if (st != LADLE_OK) *used = true; /* an error of the query's own: not retried */
  return st;
}

ladle_status ladle_exec_group_by_partial(exec_state *s, const ladle_plan *p, const ladle_table *in,
                                         ladle_table **out, bool *used, ladle_error *err) {
  return run_partial(s, p, in, NULL, out, used, err);
}

typedef struct mid_job {
  exec_state *s;
  const pa_chain *ch;
  const ladle_table *src;
  ladle_table *mid;
} mid_job;

static ladle_status mid_task(void *vctx, size_t k, ladle_error *err) {
  mid_job *j = vctx;
  ladle_chunk c;
  LADLE_RETURN_NOT_OK(chain_apply(j->s, j->ch, &j->src->chunks[k], j->src->schema.n, &c, err));
  ladle_chunk *o = &j->mid->chunks[k];
  o->length = c.length;
  for (size_t i = 0; i < j->mid->schema.n; i++) o->columns[i] = c.columns[i];
  free(c.columns);
  return LADLE_OK;
}

ladle_status ladle_exec_group_by_pipeline(exec_state *s, const ladle_plan *p,
                                          const ladle_table *src, ladle_table **out,
                                          ladle_table **mid, ladle_error *err) {
  *out = NULL;
  *mid = NULL;
  pa_chain ch;
  if (!chain_shape(p, &ch))
    return ladle_err_set(err, LADLE_EINVAL, "internal: a group_by without a pipeline");
  ladle_status st = chain_prepare(s, p, &ch, err);
  bool used = false;
  if (st == LADLE_OK) st = run_partial(s, p, src, &ch, out, &used, err);
  if (st == LADLE_OK && !used) {
    /* turned down: the pipeline's output as a table, for the plain group_by */
    ladle_table *t;
    st = ladle_table_create(&p->inputs[0]->schema, src->nchunks, &t, err);
    if (st == LADLE_OK) {
      mid_job j = {s, &ch, src, t};
      st = ladle_pool_run(s->k.pool, src->nchunks, mid_task, &j, err);
      ladle_table_seal(t);
      if (st == LADLE_OK)
        *mid = t;
      else
        ladle_table_release(t);
    }
  }
  chain_free(&ch);
  return st;
}
