/* eval.c — expression evaluation.
 *
 * Elementwise subtrees run chunk by chunk on the thread pool, the whole subtree
 * per chunk, so intermediates stay in cache. Aggregations, ranks and windows
 * need whole columns: their inputs are evaluated chunkwise, concatenated, handed
 * to the backend with a grouping (one group in a select, the partition groups in
 * a window, the group_by groups in an aggregation), and the result is a scalar,
 * one value per group, or broadcast back to the rows.
 */
#include <math.h>

#include "exec.h"

void ladle_release_columns(ladle_column *cols, size_t n) {
  if (cols == NULL) return;
  for (size_t i = 0; i < n; i++) ladle_column_release(&cols[i]);
  free(cols);
}

/* is_in's values: a list of any length, not one value per row. */
static bool is_set_arg(const ladle_bexpr *e, size_t i) {
  return e->kind == LADLE_EX_FUNC && e->op == LADLE_FN_IS_IN && i == 1;
}

/* e lowered for a kernel (backend.h): the node's own fields, its first
 * argument's name, and its arguments' types in types[0..16) when there are
 * at most 16 of them (else NULL). */
static ladle_kexpr exec_lower(const ladle_bexpr *e, ladle_dtype *types) {
  ladle_kexpr k;
  memset(&k, 0, sizeof k);
  k.kind = e->kind == LADLE_EX_AGG   ? LADLE_KEX_AGG
           : e->kind == LADLE_EX_LEN ? LADLE_KEX_LEN
                                     : LADLE_KEX_FUNC;
  k.op = e->op;
  k.type = e->type;
  k.fopts = e->fopts;
  k.aopts = e->aopts;
  k.nargs = e->nargs;
  k.aux = e->aux;
  k.arg_name = e->nargs > 0 && e->args[0]->name != NULL ? e->args[0]->name : "";
  if (e->nargs <= 16) {
    for (size_t i = 0; i < e->nargs; i++) types[i] = e->args[i]->type;
    k.arg_types = types;
  }
  return k;
}

/* A function's arguments are as long as the first or single values; anything
 * else would have a kernel read past a column, so it is an error here. */
static ladle_status checked_func(exec_state *s, const ladle_bexpr *e, ladle_column *args,
                                 ladle_column *out, ladle_error *err) {
  for (size_t i = 1; i < e->nargs; i++)
    if (!is_set_arg(e, i) && args[i].length != 1 && args[i].length != args[0].length)
      return ladle_err_set(
          err, LADLE_EINVAL, "internal: argument %zu of %s has %lld rows, the first %lld", i,
          ladle_func_name((ladle_func)e->op), (long long)args[i].length, (long long)args[0].length);
  ladle_dtype types[16];
  ladle_kexpr k = exec_lower(e, types);
  return s->be->func(&s->k, &k, args, e->nargs, out, err);
}

/* The rows of the column a chunk's row-wise values belong to: its table's, or
 * its own for a chunk standing alone (NULL: single values). */
static int64_t chunk_rows(const ladle_chunk *chunk) {
  if (chunk == NULL) return 1;
  return chunk->table_rows > 0 ? chunk->table_rows : chunk->length;
}

/* Applies one elementwise node to its evaluated arguments; rows: the length
 * of the column the row-wise arguments are part of (< 0: they are whole). */
static ladle_status apply_node(exec_state *s, const ladle_bexpr *e, ladle_column *args,
                               int64_t rows, ladle_column *out, ladle_error *err) {
  const ladle_backend *be = s->be;
  /* a GPU table has some operations only inside row programs */
  bool lacks = (e->kind == LADLE_EX_BINARY && be->binary == NULL) ||
               (e->kind == LADLE_EX_FUNC && be->func == NULL) ||
               (e->kind == LADLE_EX_CAST && be->cast == NULL) ||
               (e->kind == LADLE_EX_WHEN && be->when == NULL);
  if (lacks)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "device '%s:%d': expression `%s` node by node (outside a row program) "
                         "has no GPU path yet",
                         be->name, s->k.device_id, e->name != NULL ? e->name : "?");
  switch (e->kind) {
    case LADLE_EX_ALIAS:
      ladle_column_copy_ref(&args[0], out);
      return LADLE_OK;
    case LADLE_EX_BINARY:
      if (rows > 1 && !e->args[0]->scalar && e->args[1]->scalar) {
        /* a chunk of a longer column by one value: as Polars divides the
         * whole column, through the reciprocal even on a chunk of one row */
        ladle_kctx k = s->k;
        k.many_rows = true;
        return be->binary(&k, e->op, &args[0], &args[1], e->type, out, err);
      }
      return be->binary(&s->k, e->op, &args[0], &args[1], e->type, out, err);
    case LADLE_EX_FUNC: {
      /* Kernels take their length from the first argument: a single value
       * there (pl.lit("p") + col, fill_null of a literal) is spread to the
       * length of the other arguments that are not single values first: the
       * rows, or the groups when they are aggregations in a group_by or a
       * window (0 of either included). A list literal (is_in's values) is not
       * a row-wise argument. */
      int64_t n = -1;
      for (size_t i = 1; i < e->nargs && n < 0; i++)
        if (args[i].length != 1 && !is_set_arg(e, i)) n = args[i].length;
      if (args[0].length != 1 || n < 0) return checked_func(s, e, args, out, err);
      ladle_column spread;
      LADLE_RETURN_NOT_OK(ladle_column_broadcast(&args[0], n, &spread, err));
      ladle_column_release(&args[0]);
      args[0] = spread;
      return checked_func(s, e, args, out, err);
    }
    case LADLE_EX_CAST:
      return be->cast(&s->k, &args[0], e->type, e->cast_mode, e->name, out, err);
    case LADLE_EX_WHEN: {
      int64_t n = 1;
      for (size_t i = 0; i < e->nargs; i++)
        if (args[i].length != 1) n = args[i].length;
      return be->when(&s->k, args, e->nargs, n, out, err);
    }
    default:
      return ladle_err_set(err, LADLE_EINVAL, "internal: node kind %d is not elementwise",
                           (int)e->kind);
  }
}

static ladle_status eval_chunk(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                               ladle_column *out, ladle_error *err);

/* Whether evaluating e can fail on a value (a strict cast, an integer power, a
 * truncation to months of a date out of chrono's range). */
static bool may_fail(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_CAST && e->cast_mode == LADLE_CAST_STRICT) return true;
  /* a cast Polars refuses fails in any mode where a value reaches it */
  if (e->kind == LADLE_EX_CAST && ladle_cast_refused(e->args[0]->type, e->type)) return true;
  if (e->kind == LADLE_EX_FUNC && e->op == LADLE_FN_POW) return true;
  if (e->kind == LADLE_EX_FUNC && e->op == LADLE_FN_DT_TRUNCATE && e->fopts.str != NULL &&
      strcmp(e->fopts.str, "1mo") == 0)
    return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (may_fail(e->args[i])) return true;
  return false;
}

/* Computes branch b of a when/then no row takes, for its errors only, where it is
 * a function of literals that can fail (`pl.lit("x").str.strip_chars("a")
 * .cast(pl.Boolean)`): Polars computes such a branch where it computes the
 * branches' aggregations (eager_branch_aggs), and an otherwise on no rows at all
 * (qfuzz 4407:29779, 4407:96243, 4407:15613). Not a function of literals inside a
 * branch that reads columns or aggregations (`col.clip(-5, 300)` of a UInt8:
 * its bounds' cast is not computed there). */
static ladle_status eval_const_branch(exec_state *s, const ladle_bexpr *b, ladle_error *err) {
  if (b->kind == LADLE_EX_WHEN && !b->scalar) {
    /* a chain's next link (when/then/when/then is nested): its branches too */
    for (size_t i = 1; i < b->nargs; i += 2)
      LADLE_RETURN_NOT_OK(eval_const_branch(s, b->args[i], err));
    return eval_const_branch(s, b->args[b->nargs - 1], err);
  }
  if (!b->scalar || b->has_agg || b->has_window || !may_fail(b)) return LADLE_OK;
  ladle_column c;
  LADLE_RETURN_NOT_OK(eval_chunk(s, b, NULL, &c, err));
  ladle_column_release(&c);
  return LADLE_OK;
}

static int64_t max_col(const ladle_bexpr *e) {
  int64_t m = e->kind == LADLE_EX_COL ? e->col : -1;
  for (size_t i = 0; i < e->nargs; i++) m = LADLE_MAX(m, max_col(e->args[i]));
  return m;
}

static bool reads_col(const ladle_bexpr *e, int64_t c) {
  if (e->kind == LADLE_EX_COL && e->col == c) return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (reads_col(e->args[i], c)) return true;
  return false;
}

/* The hoisted value of e, if e was hoisted (NULL otherwise). */
static const exec_hoisted *hoisted(const exec_state *s, const ladle_bexpr *e) {
  for (size_t i = s->nhoist; i-- > 0;)
    if (s->hoist[i].e == e) return &s->hoist[i];
  return NULL;
}

/* Reads hoisted value h into out, or raises the error its computation met. */
static ladle_status read_hoisted(const exec_hoisted *h, ladle_column *out, ladle_error *err) {
  if (h->failed != NULL) {
    if (err != NULL) *err = *h->failed;
    return h->failed->code;
  }
  ladle_column_copy_ref(&h->col, out);
  return LADLE_OK;
}

/* Whether e gives one value per row of a chunk (it reads a column, or a
 * hoisted value as long as the rows) rather than a single value. */
static bool reads_rows(const exec_state *s, const ladle_bexpr *e) {
  const exec_hoisted *h = hoisted(s, e);
  if (h != NULL) return h->failed == NULL && h->col.length != 1;
  if (e->kind == LADLE_EX_COL) return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (reads_rows(s, e->args[i])) return true;
  return false;
}

/* Branch b of a when/then/otherwise, computed on the rows that take it (sel,
 * cnt of the chunk's n): as Polars, a branch no row takes is not computed (a
 * typed null stands in), and one some rows take is computed on those rows
 * only, so that a strict cast of a value the branch does not give fails
 * nothing. The result is as long as the chunk, or a single value. */
static ladle_status eval_branch(exec_state *s, const ladle_bexpr *b, const ladle_chunk *chunk,
                                const int64_t *sel, int64_t cnt, ladle_column *out,
                                ladle_error *err) {
  int64_t n = chunk ? chunk->length : 1;
  /* not computed; as long as the rows if it would have been */
  if (cnt == 0) return ladle_column_nulls(b->type, chunk && reads_rows(s, b) ? n : 1, out, err);
  if (cnt == n || chunk == NULL) return eval_chunk(s, b, chunk, out, err);
  /* a chunk of the taken rows, holding the columns the branch reads */
  ladle_chunk sub;
  sub.length = cnt;
  sub.table_rows = 0; /* Polars computes the branch on these rows alone */
  size_t nc = (size_t)(max_col(b) + 1);
  sub.columns = calloc(LADLE_MAX(nc, 1), sizeof *sub.columns);
  if (sub.columns == NULL) return LADLE_OOM(err, "when branch");
  ladle_status st = LADLE_OK;
  for (size_t c = 0; c < nc && st == LADLE_OK; c++)
    if (reads_col(b, (int64_t)c))
      st = ladle_column_gather(&chunk->columns[c], sel, cnt, &sub.columns[c], err);
  ladle_column part;
  if (st == LADLE_OK) st = eval_chunk(s, b, &sub, &part, err);
  ladle_release_columns(sub.columns, nc);
  if (st != LADLE_OK) return st;
  if (part.length == 1 && cnt != 1) {
    *out = part;
    return LADLE_OK;
  }
  /* back to the chunk's rows: each taken row's value, null elsewhere */
  int64_t *idx = malloc((size_t)LADLE_MAX(n, 1) * sizeof *idx);
  if (idx == NULL) {
    ladle_column_release(&part);
    return LADLE_OOM(err, "when branch");
  }
  st = s->be->selection_positions(&s->k, sel, cnt, n, idx, err);
  if (st == LADLE_OK) st = ladle_column_gather(&part, idx, n, out, err);
  free(idx);
  ladle_column_release(&part);
  return st;
}

static bool scalar_predicates(const ladle_bexpr *e);

/* Whether Polars computes a branch of when/then node e that no row of `rows`
 * takes where it is a function of literals (eval_const_branch): on a one-row
 * frame; where the predicates and the branches are all single values (the
 * when is one value: `when(lit("+4").str.contains("ab")).then(bad)
 * .otherwise(True)` raises, `.otherwise(pl.col("g"))` does not, qfuzz
 * 1796457486:1317); and the otherwise on no rows at all. */
static bool eager_const_branch(const ladle_bexpr *e, int64_t rows, bool otherwise) {
  return rows == 1 || (scalar_predicates(e) && e->scalar) || (otherwise && rows == 0);
}

/* A when/then/otherwise whose branches can fail, with each branch computed
 * only on the rows that take it (eval_branch). */
static ladle_status eval_when_lazy(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                                   ladle_column *out, ladle_error *err) {
  size_t nb = (e->nargs - 1) / 2;
  int64_t n = chunk ? chunk->length : 1;
  ladle_column *a = calloc(e->nargs, sizeof *a);
  uint8_t *taken = ladle_zalloc((size_t)LADLE_MAX(n, 1));
  int64_t *sel = malloc((size_t)LADLE_MAX(n, 1) * sizeof *sel);
  ladle_status st = a && taken && sel ? LADLE_OK : LADLE_OOM(err, "when");
  size_t done = 0;
  for (size_t k = 0; k <= nb && st == LADLE_OK; k++) {
    int64_t cnt = 0;
    if (k < nb) {
      ladle_column *c = &a[2 * k];
      st = eval_chunk(s, e->args[2 * k], chunk, c, err);
      if (st != LADLE_OK) break;
      done = 2 * k + 1;
      /* the rows not taken yet where its condition is true (one value or
       * one per row) */
      st = s->be->mask_take(&s->k, c, n, taken, sel, &cnt, err);
    } else { /* otherwise: all the rest */
      st = s->be->mask_take(&s->k, NULL, n, taken, sel, &cnt, err);
    }
    if (st != LADLE_OK) break;
    size_t slot = k < nb ? 2 * k + 1 : e->nargs - 1;
    if (cnt == 0 && eager_const_branch(e, chunk_rows(chunk), k == nb))
      st = eval_const_branch(s, e->args[slot], err);
    if (st == LADLE_OK) st = eval_branch(s, e->args[slot], chunk, sel, cnt, &a[slot], err);
    if (st == LADLE_OK) done = slot + 1;
  }
  if (st == LADLE_OK) st = apply_node(s, e, a, chunk_rows(chunk), out, err);
  for (size_t i = 0; a != NULL && i < done; i++) ladle_column_release(&a[i]);
  free(a);
  free(taken);
  free(sel);
  return st;
}

/* Elementwise evaluation on one chunk (chunk may be NULL for constant trees). */
static ladle_status eval_chunk(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                               ladle_column *out, ladle_error *err) {
  const exec_hoisted *h = hoisted(s, e);
  if (h != NULL) return read_hoisted(h, out, err);
  if (e->kind == LADLE_EX_COL) {
    if (chunk == NULL) return ladle_err_set(err, LADLE_EINVAL, "internal: column outside rows");
    ladle_column_copy_ref(&chunk->columns[e->col], out);
    return LADLE_OK;
  }
  if (e->kind == LADLE_EX_LIT) {
    ladle_column_copy_ref(&e->lit, out);
    return LADLE_OK;
  }
  if (s->columns && exec_host_scalar(e)) {
    /* a function of literals alone (a literal's cast): one value, computed
     * by the host's kernels; the column kernels take it as a host operand */
    exec_state on_host = *s;
    on_host.columns = false;
    on_host.be = s->eng->host_backend;
    on_host.k.mr = NULL;
    on_host.k.stream = NULL;
    on_host.k.device_id = 0;
    return eval_chunk(&on_host, e, NULL, out, err);
  }
  if (s->columns && (e->kind == LADLE_EX_BINARY || e->kind == LADLE_EX_FUNC ||
                     e->kind == LADLE_EX_CAST || e->kind == LADLE_EX_WHEN)) {
    /* one pass over the rows for the whole tree */
    bool done = false;
    LADLE_RETURN_NOT_OK(exec_columns_program(s, e, chunk, out, &done, err));
    if (done) return LADLE_OK;
  }
  if (e->kind == LADLE_EX_WHEN && !e->all_rows && may_fail(e))
    return eval_when_lazy(s, e, chunk, out, err);
  ladle_column args[8];
  ladle_column *a = e->nargs <= 8 ? args : calloc(e->nargs, sizeof *a);
  if (a == NULL) return LADLE_OOM(err, "arguments");
  ladle_status st = LADLE_OK;
  size_t done = 0;
  for (; done < e->nargs && st == LADLE_OK; done++)
    st = eval_chunk(s, e->args[done], chunk, &a[done], err);
  if (st == LADLE_OK)
    st = apply_node(s, e, a, chunk_rows(chunk), out, err);
  else
    done--;
  for (size_t i = 0; i < done; i++) ladle_column_release(&a[i]);
  if (a != args) free(a);
  return st;
}

ladle_status ladle_eval_chunk(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                              ladle_column *out, ladle_error *err) {
  return eval_chunk(s, e, chunk, out, err);
}

typedef struct chunk_job {
  exec_state *s;
  const ladle_bexpr *e;
  const ladle_table *t;
  ladle_column *out;
} chunk_job;

static ladle_status chunk_task(void *vctx, size_t i, ladle_error *err) {
  chunk_job *j = vctx;
  return eval_chunk(j->s, j->e, &j->t->chunks[i], &j->out[i], err);
}

static bool needs_full(const ladle_bexpr *e) { return e->has_agg || e->has_window; }

ladle_status ladle_exec_single_group(int64_t n, ladle_groups *g, ladle_error *err) {
  memset(g, 0, sizeof *g);
  g->nrows = n;
  g->ngroups = 1;
  g->whole = true;
  g->ids = NULL; /* all 0: made by the kernels that read them (ladle_groups_ids) */
  g->first = ladle_scratch_alloc(sizeof *g->first, false);
  if (g->first == NULL) {
    ladle_groups_release(g);
    return LADLE_OOM(err, "groups");
  }
  g->first[0] = n > 0 ? 0 : -1;
  return LADLE_OK;
}

static ladle_status broadcast_groups(exec_state *s, const ladle_column *per_group,
                                     const ladle_groups *g, ladle_column *out, ladle_error *err) {
  int64_t *idx = malloc((size_t)LADLE_MAX(g->nrows, 1) * sizeof *idx);
  if (idx == NULL) return LADLE_OOM(err, "window");
  /* each row's group: the row of its value */
  ladle_status st = s->be->group_rows(&s->k, g, LADLE_GROUP_ROWS_ID, idx, err);
  if (st == LADLE_OK) st = s->be->gather(&s->k, per_group, idx, g->nrows, out, err);
  free(idx);
  return st;
}

/* mean/var/std over a whole multi-partition table: partial (count, mean, M2)
 * per partition in parallel, two passes each, combined in partition order
 * with Chan et al.'s formula. The partitions are never concatenated. */
typedef struct moments_job {
  exec_state *s;
  const ladle_column *cols;
  int64_t *cnt;
  double *mean, *m2, *sum;
  bool second; /* var/std: the sum of squared deviations too */
} moments_job;

static ladle_status moments_task(void *vctx, size_t ci, ladle_error *err) {
  moments_job *j = vctx;
  return j->s->be->moments(&j->s->k, &j->cols[ci], j->second, &j->cnt[ci], &j->sum[ci],
                           &j->mean[ci], &j->m2[ci], err);
}

static bool chunked_moments(const ladle_bexpr *e, const ladle_table *t, ladle_groups *groups) {
  if (groups != NULL || e->kind != LADLE_EX_AGG || t->nchunks < 2 || needs_full(e->args[0]))
    return false;
  ladle_agg_op op = (ladle_agg_op)e->op;
  ladle_type_id in = e->args[0]->type.id;
  return (op == LADLE_AGG_MEAN || op == LADLE_AGG_STD || op == LADLE_AGG_VAR) &&
         !e->aopts.polars_order && (ladle_type_is_numeric(in) || in == LADLE_TYPE_BOOL) &&
         ladle_type_is_float(e->type.id);
}

static ladle_status eval_chunked_moments(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                         ladle_column *out, ladle_error *err) {
  ladle_column *cols;
  bool scalar;
  LADLE_RETURN_NOT_OK(ladle_eval_chunked(s, e->args[0], t, &cols, &scalar, err));
  size_t n = scalar ? 1 : t->nchunks;
  int64_t *cnt = calloc(n, sizeof *cnt);
  double *mean = ladle_zalloc(n * sizeof *mean), *m2 = ladle_zalloc(n * sizeof *m2);
  double *sum = calloc(n, sizeof *sum);
  moments_job j = {s, cols, cnt, mean, m2, sum, e->op != LADLE_AGG_MEAN};
  ladle_status st = cnt && mean && m2 && sum ? ladle_pool_run(s->k.pool, n, moments_task, &j, err)
                                             : LADLE_OOM(err, "moments");
  /* the mean is the sum over the count, as Polars computes it (a running mean
   * of the pieces' means differs in the last bit, and is NaN for an infinity) */
  double N = 0, M = 0, Q = 0, S = 0;
  for (size_t i = 0; st == LADLE_OK && i < n; i++) {
    if (cnt[i] == 0) continue;
    S += sum[i];
    double nb = (double)cnt[i], tot = N + nb, d = mean[i] - M;
    if (N == 0) { /* the first piece as it is: d * d * 0 is NaN for a huge mean */
      M = mean[i];
      Q = m2[i];
    } else {
      double m = M + d * (nb / tot);
      Q += m2[i] + nb * (mean[i] - m) * d;
      M = m;
    }
    N = tot;
  }
  if (st == LADLE_OK) st = ladle_column_alloc(e->type, 1, true, 0, out, err);
  if (st == LADLE_OK) {
    ladle_agg_op op = (ladle_agg_op)e->op;
    double v = N > 0 ? S / N : 0, dof = N - (double)e->aopts.ddof;
    bool valid = N > 0;
    if (op != LADLE_AGG_MEAN) {
      valid = valid && dof > 0;
      v = valid ? Q / dof : 0;
      if (op == LADLE_AGG_STD) v = sqrt(v);
    }
    if (e->type.id == LADLE_TYPE_FLOAT32)
      LADLE_COL_MUT(out, float)[0] = (float)v;
    else
      LADLE_COL_MUT(out, double)[0] = v;
    if (!valid) ladle_bit_set(LADLE_COL_VALIDITY_MUT(out), 0, false);
    ladle_column_finish_nulls(out);
  }
  free(cnt);
  free(mean);
  free(m2);
  free(sum);
  ladle_release_columns(cols, n);
  return st;
}

/* Aggregation e of the input ins (n consecutive pieces; none for len) by
 * `groups` (NULL: one group), broadcast back to the rows when asked. */
static ladle_status agg_over(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                             ladle_groups *groups, bool broadcast, const ladle_column *ins,
                             size_t n, ladle_column *out, ladle_error *err) {
  ladle_groups one;
  ladle_groups *g = groups;
  ladle_status st = LADLE_OK;
  if (g == NULL) {
    st = ladle_exec_single_group(t->num_rows, &one, err);
    g = &one;
  }
  ladle_column agg;
  ladle_dtype types[16];
  ladle_kexpr k = exec_lower(e, types);
  if (st == LADLE_OK)
    st = n > 1 ? s->be->aggregate_chunks(&s->k, &k, ins, n, g, &agg, err)
               : s->be->aggregate(&s->k, &k, n ? ins : NULL, g, &agg, err);
  if (st == LADLE_OK) {
    if (groups != NULL && broadcast) {
      st = broadcast_groups(s, &agg, g, out, err);
      ladle_column_release(&agg);
    } else {
      *out = agg;
    }
  }
  if (g == &one) ladle_groups_release(&one);
  return st;
}

/* An aggregation whose input is evaluated partition by partition and handed
 * to the backend as those pieces, not concatenated first. */
static ladle_status eval_agg_chunks(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                    ladle_groups *groups, bool broadcast, ladle_column *out,
                                    ladle_error *err) {
  ladle_column *cols;
  bool scalar;
  LADLE_RETURN_NOT_OK(ladle_eval_chunked(s, e->args[0], t, &cols, &scalar, err));
  size_t n = scalar ? 1 : t->nchunks;
  ladle_status st = agg_over(s, e, t, groups, broadcast, cols, n, out, err);
  ladle_release_columns(cols, n);
  return st;
}

static bool null_lit(const ladle_bexpr *e) {
  return e->kind == LADLE_EX_LIT && e->lit.length == 1 && !ladle_column_valid(&e->lit, 0);
}

/* Whether e holds Polars' repeat() of a null literal (its optimizer's form of a
 * comparison with a null literal, `x > None`; the translator binds it as
 * when(x.is_null()).then(null).otherwise(null)): Polars does not push a
 * first()/last() through it, so every row is computed (qfuzz
 * 1796500001:30502). */
static bool repeats_null(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_WHEN && e->nargs == 3 && e->args[0]->kind == LADLE_EX_FUNC &&
      e->args[0]->op == LADLE_FN_IS_NULL && null_lit(e->args[1]) && null_lit(e->args[2]))
    return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (repeats_null(e->args[i])) return true;
  return false;
}

/* first()/last() of a row-wise expression that can fail (a strict cast): as
 * in Polars, the expression is computed on each group's first (last) row only,
 * so a value on another row fails nothing (unless it compares with a null
 * literal: repeats_null). */
static ladle_status eval_first_last_rows(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                         ladle_groups *groups, bool broadcast, ladle_column *out,
                                         ladle_error *err) {
  const ladle_bexpr *x = e->args[0];
  /* no rows and no groups: the expression runs over no rows (for the errors of
   * what it computes anyway, a strict cast of a literal), not over a null row
   * (fill_null(-129).cast(pl.UInt32) of that null failed; qfuzz 4401:197684) */
  bool empty = t->num_rows == 0;
  /* (a group_by's one `whole` group over no rows is a group without a row: no
   * row to take either; qfuzz 4801:46806 gathered row -1) */
  int64_t ng = empty ? 0 : groups ? groups->ngroups : 1;
  int64_t *rows = malloc((size_t)LADLE_MAX(ng, 1) * sizeof *rows);
  size_t nc = (size_t)(max_col(x) + 1);
  ladle_chunk c = {.length = ng, .columns = calloc(LADLE_MAX(nc, 1), sizeof(ladle_column))};
  ladle_status st = rows && c.columns ? LADLE_OK : LADLE_OOM(err, "first/last");
  if (st == LADLE_OK && groups != NULL && !empty)
    st = s->be->group_rows(
        &s->k, groups, e->op == LADLE_AGG_FIRST ? LADLE_GROUP_ROWS_FIRST : LADLE_GROUP_ROWS_LAST,
        rows, err);
  else if (st == LADLE_OK && ng > 0) /* one group of every row */
    rows[0] = e->op == LADLE_AGG_FIRST ? 0 : t->num_rows - 1;
  for (size_t col = 0; st == LADLE_OK && col < nc; col++) {
    if (!reads_col(x, (int64_t)col)) continue;
    ladle_column whole;
    st = ladle_table_concat_column(t, col, &whole, err);
    if (st != LADLE_OK) break;
    st = ladle_column_gather(&whole, rows, ng, &c.columns[col], err);
    ladle_column_release(&whole);
  }
  ladle_column r;
  if (st == LADLE_OK) st = eval_chunk(s, x, &c, &r, err);
  if (c.columns) ladle_release_columns(c.columns, nc);
  free(rows);
  if (st != LADLE_OK) return st;
  if (empty) {
    /* the first of no rows is null, whatever the expression makes of a null
     * (per group: a window over no rows has no rows) */
    ladle_column_release(&r);
    int64_t n = groups == NULL ? 1 : broadcast ? groups->nrows : groups->ngroups;
    return ladle_column_nulls(e->type, n, out, err);
  }
  if (groups != NULL && broadcast) {
    st = broadcast_groups(s, &r, groups, out, err);
    ladle_column_release(&r);
    return st;
  }
  *out = r;
  return LADLE_OK;
}

/* An aggregation of a scalar (pl.lit(1).sum()): as in Polars, the input is that
 * one value, not the value on every row, so each group (or the whole table,
 * empty or not) aggregates one row. */
static ladle_status eval_agg_of_scalar(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                       ladle_groups *groups, bool broadcast, ladle_column *out,
                                       ladle_error *err) {
  ladle_column in, agg;
  LADLE_RETURN_NOT_OK(ladle_eval_full(s, e->args[0], t, NULL, false, &in, err));
  if (groups != NULL && e->op == LADLE_AGG_ALL && in.length == 1 &&
      (in.type.id == LADLE_TYPE_NULL || !ladle_column_valid(&in, 0))) {
    /* Polars' quirk, followed: all() of a null literal is true on its own
     * but false per group (in a group_by or a window) */
    ladle_column_release(&in);
    ladle_column f;
    LADLE_RETURN_NOT_OK(ladle_column_alloc(e->type, 1, false, 0, &f, err));
    LADLE_COL_MUT(&f, uint8_t)[0] = 0;
    ladle_status fs =
        ladle_column_broadcast(&f, broadcast ? groups->nrows : groups->ngroups, out, err);
    ladle_column_release(&f);
    return fs;
  }
  ladle_groups one;
  ladle_status st = ladle_exec_single_group(1, &one, err);
  if (st == LADLE_OK) {
    ladle_dtype types[16];
    ladle_kexpr k = exec_lower(e, types);
    st = s->be->aggregate(&s->k, &k, &in, &one, &agg, err);
    ladle_groups_release(&one);
  }
  ladle_column_release(&in);
  /* per group (not broadcast to rows) it stays one value, as Polars keeps it:
   * arithmetic on it then takes the one-value forms (lit(100.0).max() / 1e300
   * is a quotient, not a product with the reciprocal); the group_by spreads
   * what is left single at the end */
  if (st != LADLE_OK || groups == NULL || !broadcast) {
    if (st == LADLE_OK) *out = agg;
    return st;
  }
  st = ladle_column_broadcast(&agg, broadcast ? groups->nrows : groups->ngroups, out, err);
  ladle_column_release(&agg);
  return st;
}

static bool eager_branch_aggs(const ladle_bexpr *e, const ladle_table *t);

/* Computes the aggregations and windows in e (the outermost ones) for their
 * errors only. */
static ladle_status eval_aggs_only(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                   ladle_error *err) {
  if (!e->has_agg && !e->has_window) return LADLE_OK;
  if (e->kind == LADLE_EX_AGG || e->kind == LADLE_EX_OVER) {
    ladle_column c;
    LADLE_RETURN_NOT_OK(ladle_eval_full(s, e, t, NULL, false, &c, err));
    ladle_column_release(&c);
    return LADLE_OK;
  }
  for (size_t i = 0; i < e->nargs; i++) LADLE_RETURN_NOT_OK(eval_aggs_only(s, e->args[i], t, err));
  return LADLE_OK;
}

/* A when/then/otherwise above aggregations or windows whose branches can
 * fail, outside a group context: as Polars, a branch no row takes is not
 * computed; one that some rows take is computed on those rows only when it is
 * row-wise, and whole (on every row) when it holds an aggregation or a window. */
static ladle_status eval_when_full_lazy(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                        ladle_column *out, ladle_error *err) {
  size_t nb = (e->nargs - 1) / 2;
  /* a when of single values is one row whatever the table's (none included) */
  int64_t n = e->scalar ? 1 : t->num_rows;
  ladle_column *a = calloc(e->nargs, sizeof *a);
  uint8_t *taken = ladle_zalloc((size_t)LADLE_MAX(n, 1));
  int64_t *sel = malloc((size_t)LADLE_MAX(n, 1) * sizeof *sel);
  ladle_status st = a && taken && sel ? LADLE_OK : LADLE_OOM(err, "when");
  size_t done = 0;
  for (size_t k = 0; k <= nb && st == LADLE_OK; k++) {
    int64_t cnt = 0;
    if (k < nb) {
      ladle_column *c = &a[2 * k];
      st = ladle_eval_full(s, e->args[2 * k], t, NULL, false, c, err);
      if (st != LADLE_OK) break;
      done = 2 * k + 1;
      /* the rows not taken yet where its condition is true (one value or
       * one per row) */
      st = s->be->mask_take(&s->k, c, n, taken, sel, &cnt, err);
    } else { /* otherwise: all the rest */
      st = s->be->mask_take(&s->k, NULL, n, taken, sel, &cnt, err);
    }
    if (st != LADLE_OK) break;
    size_t slot = k < nb ? 2 * k + 1 : e->nargs - 1;
    const ladle_bexpr *b = e->args[slot];
    if (cnt == 0) {
      /* no row takes it; Polars may still compute its aggregations and
       * windows (eager_branch_aggs), not what is above them: `when(lit(False))
       * .then(x.cast(pl.Datetime).over(f))` raises for an x out of range
       * (qfuzz 1796493202:7085) */
      if ((b->has_agg || b->has_window) && eager_branch_aggs(e, t))
        st = eval_aggs_only(s, b, t, err);
      if (st == LADLE_OK && eager_const_branch(e, t->num_rows, k == nb))
        st = eval_const_branch(s, b, err);
      if (st == LADLE_OK) st = ladle_column_nulls(b->type, b->scalar ? 1 : n, &a[slot], err);
    } else if (needs_full(b) || b->scalar || cnt == n) {
      st = ladle_eval_full(s, b, t, NULL, false, &a[slot], err);
    } else {
      /* row-wise, on part of the rows: the columns it reads, whole */
      size_t nc = (size_t)(max_col(b) + 1);
      ladle_chunk whole = {.length = n, .columns = calloc(LADLE_MAX(nc, 1), sizeof(ladle_column))};
      st = whole.columns ? LADLE_OK : LADLE_OOM(err, "when branch");
      for (size_t col = 0; st == LADLE_OK && col < nc; col++)
        if (reads_col(b, (int64_t)col))
          st = ladle_table_concat_column(t, col, &whole.columns[col], err);
      if (st == LADLE_OK) st = eval_branch(s, b, &whole, sel, cnt, &a[slot], err);
      if (whole.columns) ladle_release_columns(whole.columns, nc);
    }
    if (st == LADLE_OK) done = slot + 1;
  }
  if (st == LADLE_OK) st = apply_node(s, e, a, -1, out, err);
  for (size_t i = 0; a != NULL && i < done; i++) ladle_column_release(&a[i]);
  free(a);
  free(taken);
  free(sel);
  return st;
}

/* The rank of one value (of an aggregation, per group under over()): 1 where
 * the value is there, null where it is null, as Polars ranks a one-value Series
 * (qfuzz 1001:34004: the per-group arg_min of only nulls is null). */
static ladle_status rank_of_one_value(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                      ladle_groups *groups, bool broadcast, ladle_column *out,
                                      ladle_error *err) {
  ladle_column in;
  LADLE_RETURN_NOT_OK(ladle_eval_full(s, e->args[0], t, groups, broadcast, &in, err));
  ladle_status st = s->be->rank_of_singletons(&s->k, &in, e->type, out, err);
  ladle_column_release(&in);
  return st;
}

/* Whether e's only nodes over other rows are running functions and windows
 * (no rank or aggregation outside a window): on the column kernels, one row
 * program, each of those an input of it (device.c's emit). */
static bool running_rowwise(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_OVER) return true;
  if (e->kind == LADLE_EX_RANK || e->kind == LADLE_EX_AGG || e->kind == LADLE_EX_LEN) return false;
  for (size_t i = 0; i < e->nargs; i++)
    if (!running_rowwise(e->args[i])) return false;
  return true;
}

ladle_status ladle_eval_full(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                             ladle_groups *groups, bool broadcast, ladle_column *out,
                             ladle_error *err) {
  const exec_hoisted *h = hoisted(s, e);
  if (h != NULL) return read_hoisted(h, out, err);
  if (!needs_full(e)) {
    if (e->scalar) return eval_chunk(s, e, NULL, out, err);
    ladle_column *cols;
    bool scalar;
    LADLE_RETURN_NOT_OK(ladle_eval_chunked(s, e, t, &cols, &scalar, err));
    size_t n = scalar ? 1 : t->nchunks;
    ladle_status st = n == 0 ? ladle_column_alloc(e->type, 0, false, 0, out, err)
                             : ladle_column_concat_pool(cols, n, s->k.pool, out, err);
    ladle_release_columns(cols, n);
    return st;
  }
  ladle_status st = LADLE_OK;
  if (e->kind == LADLE_EX_AGG && e->args[0]->scalar)
    return eval_agg_of_scalar(s, e, t, groups, broadcast, out, err);
  if (chunked_moments(e, t, groups)) return eval_chunked_moments(s, e, t, out, err);
  if (s->columns && groups == NULL && !e->has_agg && !e->scalar && e->kind != LADLE_EX_CUM &&
      e->kind != LADLE_EX_OVER && running_rowwise(e)) {
    /* running functions and windows inside a row-wise expression (x -
     * x.shift(1), x - x.mean().over("g")) on the column kernels: one row
     * program over the table's one chunk, each of them an input of it
     * (device.c's emit) */
    if (t->num_rows == 0) return ladle_column_alloc(e->type, 0, false, 0, out, err);
    if (t->nchunks == 1) {
      bool done = false;
      LADLE_RETURN_NOT_OK(exec_columns_program(s, e, &t->chunks[0], out, &done, err));
      if (done) return LADLE_OK;
    }
  }
  switch (e->kind) {
    case LADLE_EX_AGG:
    case LADLE_EX_LEN: {
      if (s->columns && groups == NULL) return exec_columns_agg(s, e, t, out, err);
      if (e->kind == LADLE_EX_AGG && (e->op == LADLE_AGG_FIRST || e->op == LADLE_AGG_LAST) &&
          !needs_full(e->args[0]) && e->args[0]->kind != LADLE_EX_COL && may_fail(e->args[0]) &&
          !repeats_null(e->args[0]))
        return eval_first_last_rows(s, e, t, groups, broadcast, out, err);
      if (e->kind == LADLE_EX_AGG && t->nchunks > 1 && s->be->aggregate_chunks != NULL &&
          !needs_full(e->args[0]) && !e->args[0]->scalar)
        return eval_agg_chunks(s, e, t, groups, broadcast, out, err);
      ladle_column in;
      memset(&in, 0, sizeof in);
      bool have_in = e->kind == LADLE_EX_AGG;
      /* under over(), a window function under the aggregation is computed per
       * window group too: x.rank().max().over("g") ranks within each group (it
       * ranked the whole column) */
      bool per_group = groups != NULL && have_in && e->args[0]->has_window;
      if (have_in)
        LADLE_RETURN_NOT_OK(
            ladle_eval_full(s, e->args[0], t, per_group ? groups : NULL, per_group, &in, err));
      st = agg_over(s, e, t, groups, broadcast, &in, have_in ? 1 : 0, out, err);
      ladle_column_release(&in);
      return st;
    }
    case LADLE_EX_RANK: {
      ladle_column in;
      if (e->scalar) return rank_of_one_value(s, e, t, groups, broadcast, out, err);
      /* under over(), the ranked values' own aggregations are per window group
       * (`when(x.max() > 1).then(x).otherwise(-1).rank().over("g")`) */
      LADLE_RETURN_NOT_OK(
          ladle_eval_full(s, e->args[0], t, broadcast ? groups : NULL, broadcast, &in, err));
      st = s->be->rank(&s->k, &in, broadcast && !e->scalar ? groups : NULL,
                       (ladle_rank_method)e->op, e->descending, out, err);
      ladle_column_release(&in);
      return st;
    }
    case LADLE_EX_CUM: {
      /* in row order, per window group under over() (as rank) */
      bool shift = e->op == LADLE_CUM_SHIFT;
      if ((shift ? s->be->shift_rows == NULL || s->be->take == NULL : s->be->cumulative == NULL))
        return ladle_err_set(err, LADLE_ENOTSUP, "%s: not supported on this device yet",
                             shift ? "shift" : "cumulative functions (cum_*)");
      ladle_column in;
      if (e->scalar) {
        /* of one value (per window group): a series of one row, whose running
         * value is itself, its count 1 or 0, its shift by n != 0 null */
        LADLE_RETURN_NOT_OK(ladle_eval_full(s, e->args[0], t, groups, broadcast, &in, err));
        if (shift && e->offset != 0) {
          st = ladle_column_nulls(e->type, in.length, out, err);
          ladle_column_release(&in);
        } else if (e->op == LADLE_CUM_COUNT) {
          ladle_column valid;
          ladle_dtype at = in.type;
          ladle_kexpr k;
          memset(&k, 0, sizeof k);
          k.kind = LADLE_KEX_FUNC;
          k.op = LADLE_FN_IS_NOT_NULL;
          k.type = ladle_dtype_make(LADLE_TYPE_BOOL);
          k.nargs = 1;
          k.arg_types = &at;
          k.arg_name = e->args[0]->name != NULL ? e->args[0]->name : "";
          st = s->be->func(&s->k, &k, &in, 1, &valid, err);
          if (st == LADLE_OK) {
            st = s->be->cast(&s->k, &valid, e->type, LADLE_CAST_STRICT, e->name, out, err);
            ladle_column_release(&valid);
          }
          ladle_column_release(&in);
        } else {
          *out = in;
        }
        return st;
      }
      LADLE_RETURN_NOT_OK(
          ladle_eval_full(s, e->args[0], t, broadcast ? groups : NULL, broadcast, &in, err));
      /* the window's groups as the kernels take them (a view of its ids) */
      ladle_dgroups view;
      const ladle_dgroups *g = NULL;
      if (broadcast && groups != NULL) {
        st = ladle_groups_ids(groups, err);
        if (st != LADLE_OK) {
          ladle_column_release(&in);
          return st;
        }
        ladle_dgroups_view(groups, &view);
        g = &view;
      }
      if (!shift) {
        st = s->be->cumulative(&s->k, &in, g, e->op, e->descending, out, err);
      } else {
        ladle_column idx;
        st = s->be->shift_rows(&s->k, in.length, g, e->offset, &idx, err);
        if (st == LADLE_OK) {
          st = s->be->take(&s->k, &in, &idx, out, err);
          ladle_column_release(&idx);
        }
      }
      ladle_column_release(&in);
      return st;
    }
    case LADLE_EX_OVER: {
      /* as Polars, a window over no rows computes nothing (so nothing in
       * it fails): it is an empty column */
      if (t->num_rows == 0) return ladle_column_alloc(e->type, 0, false, 0, out, err);
      if (s->columns) return exec_columns_window(s, e, t, out, err);
      size_t nk = e->nargs - 1;
      ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
      if (keys == NULL) return LADLE_OOM(err, "window keys");
      size_t done = 0;
      for (; done < nk && st == LADLE_OK; done++)
        st = ladle_eval_full(s, e->args[done + 1], t, NULL, false, &keys[done], err);
      if (st != LADLE_OK) done--;
      for (size_t i = 0; st == LADLE_OK && i < nk; i++)
        if (keys[i].length != t->num_rows) {
          ladle_column b;
          st = ladle_column_broadcast(&keys[i], t->num_rows, &b, err);
          if (st == LADLE_OK) {
            ladle_column_release(&keys[i]);
            keys[i] = b;
          }
        }
      ladle_groups wg;
      memset(&wg, 0, sizeof wg);
      if (st == LADLE_OK) st = s->be->group_ids(&s->k, keys, nk, &wg, err);
      ladle_release_columns(keys, done);
      if (st == LADLE_OK) {
        ladle_column r;
        st = ladle_eval_full(s, e->args[0], t, &wg, true, &r, err);
        if (st == LADLE_OK && r.length != t->num_rows) {
          st = ladle_column_broadcast(&r, t->num_rows, out, err);
          ladle_column_release(&r);
        } else if (st == LADLE_OK) {
          *out = r;
        }
      }
      ladle_groups_release(&wg);
      return st;
    }
    default:
      break;
  }
  if (e->kind == LADLE_EX_WHEN && !e->all_rows && may_fail(e) && groups == NULL)
    return eval_when_full_lazy(s, e, t, out, err);
  if (groups != NULL && broadcast && e->scalar && !e->has_window) {
    /* under over(), an elementwise node of per-group values (aggregations,
     * literals) is computed once per group, then spread to the rows, as
     * Polars does: (pl.lit(7).median() / -2.5).over("g") on one group is a
     * quotient of one value, not a product with the reciprocal on each row */
    ladle_column r;
    LADLE_RETURN_NOT_OK(ladle_eval_full(s, e, t, groups, false, &r, err));
    if (r.length == 1)
      st = ladle_column_broadcast(&r, groups->nrows, out, err);
    else
      st = broadcast_groups(s, &r, groups, out, err);
    ladle_column_release(&r);
    return st;
  }
  /* an elementwise node above aggregations or windows */
  ladle_column *args = calloc(LADLE_MAX(e->nargs, 1), sizeof *args);
  if (args == NULL) return LADLE_OOM(err, "arguments");
  size_t done = 0;
  for (; done < e->nargs && st == LADLE_OK; done++)
    st = ladle_eval_full(s, e->args[done], t, groups, broadcast, &args[done], err);
  if (st == LADLE_OK)
    st = apply_node(s, e, args, -1, out, err);
  else
    done--;
  ladle_release_columns(args, done);
  return st;
}

ladle_status ladle_exec_hoist(exec_state *s, const ladle_bexpr *e, ladle_column *col,
                              ladle_error *err) {
  if (s->nhoist == s->caphoist) {
    size_t cap = s->caphoist ? s->caphoist * 2 : 8;
    exec_hoisted *h = realloc(s->hoist, cap * sizeof *h);
    if (h == NULL) {
      ladle_column_release(col);
      return LADLE_OOM(err, "hoisted aggregates");
    }
    s->hoist = h;
    s->caphoist = cap;
  }
  s->hoist[s->nhoist].e = e;
  s->hoist[s->nhoist].failed = NULL;
  s->hoist[s->nhoist++].col = *col;
  return LADLE_OK;
}

void ladle_exec_unhoist(exec_state *s, size_t to) {
  while (s->nhoist > to) {
    exec_hoisted *h = &s->hoist[--s->nhoist];
    if (h->failed == NULL) ladle_column_release(&h->col);
    free(h->failed);
  }
}

/* Whether b is a branch (a then or the otherwise) of when/then node e that
 * computes its branches only on the rows that take them. */
static bool lazy_branch(const ladle_bexpr *e, size_t i) {
  return e->kind == LADLE_EX_WHEN && !e->all_rows && may_fail(e) &&
         (i % 2 == 1 || i == e->nargs - 1);
}

/* Whether when/then node e picks its branches by single values only (literal or
 * aggregated predicates). */
static bool scalar_predicates(const ladle_bexpr *e) {
  for (size_t k = 0; k + 1 < e->nargs; k += 2)
    if (!e->args[k]->scalar) return false;
  return true;
}

/* Whether Polars computes the aggregations in every branch of when/then node e
 * over `rows` rows, taken or not (their errors raised): when its predicates are
 * single values, or on a one-row frame, whose predicates it takes as one value. */
static bool eager_branches(const ladle_bexpr *e, int64_t rows) {
  return scalar_predicates(e) || rows == 1;
}

static bool eager_branch_aggs(const ladle_bexpr *e, const ladle_table *t) {
  return eager_branches(e, t->num_rows);
}

/* Computes every maximal scalar aggregate subtree of e once (x - x.mean() needs
 * the mean once, not per chunk) and pushes it on the hoist stack. One in a
 * when/then branch (in_branch) may be one no row takes, which Polars does not
 * compute: its failure is kept with it, for the rows that read it to raise.
 * Except (eager_aggs, a when/then whose predicates are single values, or any
 * when/then on a one-row frame, whose predicates Polars takes as one value): there
 * Polars' in-memory engine computes the aggregations of every branch, and only
 * what is above them on the rows that take it: `when(pl.lit(True)).then(0)
 * .otherwise(x - x.cast(pl.Int8).max())` raises for an x out of range. */
static ladle_status hoist_scalars(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                  bool in_branch, bool eager_aggs, ladle_error *err) {
  if (!e->has_agg) return LADLE_OK;
  if (e->scalar && in_branch && eager_aggs && e->kind != LADLE_EX_AGG) {
    /* the aggregations inside first, their failures raised; then the rest, with
     * its failure kept */
    for (size_t i = 0; i < e->nargs; i++)
      LADLE_RETURN_NOT_OK(hoist_scalars(s, e->args[i], t, in_branch, eager_aggs, err));
  }
  if (e->scalar) {
    ladle_column c;
    ladle_status st = ladle_eval_full(s, e, t, NULL, false, &c, err);
    if (st == LADLE_OK) return ladle_exec_hoist(s, e, &c, err);
    if (!in_branch || st == LADLE_ENOMEM || (eager_aggs && e->kind == LADLE_EX_AGG)) return st;
    ladle_error *why = calloc(1, sizeof *why);
    if (why == NULL) return LADLE_OOM(err, "hoisted aggregates");
    if (err != NULL) *why = *err;
    why->code = st;
    memset(&c, 0, sizeof c);
    if ((st = ladle_exec_hoist(s, e, &c, err)) != LADLE_OK) {
      free(why);
      return st;
    }
    s->hoist[s->nhoist - 1].failed = why;
    return LADLE_OK;
  }
  for (size_t i = 0; i < e->nargs; i++) {
    bool lazy = lazy_branch(e, i);
    LADLE_RETURN_NOT_OK(hoist_scalars(s, e->args[i], t, in_branch || lazy,
                                      lazy ? eager_branch_aggs(e, t) : eager_aggs, err));
  }
  return LADLE_OK;
}

/* A table without chunks (an empty result of a slice, a filter, a join): Polars
 * still computes an expression once over no rows, and its errors (a strict
 * cast of a literal, clip's bounds) are raised, so ladle evaluates one that
 * can fail on one empty chunk, for its errors only. */
static ladle_status probe_no_rows(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                  ladle_error *err) {
  size_t nc = t->schema.n;
  ladle_chunk c = {.length = 0, .columns = calloc(LADLE_MAX(nc, 1), sizeof(ladle_column))};
  ladle_status st = c.columns ? LADLE_OK : LADLE_OOM(err, "columns");
  for (size_t i = 0; st == LADLE_OK && i < nc; i++)
    st = ladle_column_alloc(t->schema.types[i], 0, false, 0, &c.columns[i], err);
  ladle_column r;
  if (st == LADLE_OK && (st = eval_chunk(s, e, &c, &r, err)) == LADLE_OK) ladle_column_release(&r);
  if (c.columns) ladle_release_columns(c.columns, nc);
  return st;
}

ladle_status ladle_eval_chunked(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                ladle_column **out_cols, bool *out_scalar, ladle_error *err) {
  size_t n = t->nchunks;
  if (n == 0 && !e->has_agg && !e->has_window && may_fail(e))
    LADLE_RETURN_NOT_OK(probe_no_rows(s, e, t, err));
  if (e->has_agg && !e->has_window && !e->scalar) {
    /* aggregates under elementwise operators: hoist them, then go chunk by chunk */
    size_t mark = s->nhoist;
    ladle_status st = hoist_scalars(s, e, t, false, false, err);
    ladle_column *cols = st == LADLE_OK ? calloc(LADLE_MAX(n, 1), sizeof *cols) : NULL;
    if (st == LADLE_OK && cols == NULL) st = LADLE_OOM(err, "columns");
    if (st == LADLE_OK) {
      chunk_job j = {s, e, t, cols};
      st = ladle_pool_run(s->k.pool, n, chunk_task, &j, err);
      if (st != LADLE_OK) {
        ladle_release_columns(cols, n);
        cols = NULL;
      }
    }
    ladle_exec_unhoist(s, mark);
    if (st != LADLE_OK) return st;
    *out_scalar = false;
    *out_cols = cols;
    return LADLE_OK;
  }
  ladle_column *cols = calloc(LADLE_MAX(n, 1), sizeof *cols);
  if (cols == NULL) return LADLE_OOM(err, "columns");
  ladle_status st;
  if (!needs_full(e)) {
    if (e->scalar) {
      st = eval_chunk(s, e, NULL, &cols[0], err);
      *out_scalar = true;
    } else {
      chunk_job j = {s, e, t, cols};
      st = ladle_pool_run(s->k.pool, n, chunk_task, &j, err);
      *out_scalar = false;
    }
    if (st != LADLE_OK) {
      ladle_release_columns(cols, n);
      return st;
    }
    *out_cols = cols;
    return LADLE_OK;
  }
  ladle_column full;
  st = ladle_eval_full(s, e, t, NULL, false, &full, err);
  if (st != LADLE_OK) {
    free(cols);
    return st;
  }
  if (full.length == 1 && e->scalar) {
    cols[0] = full;
    *out_scalar = true;
    *out_cols = cols;
    return LADLE_OK;
  }
  if (full.length != t->num_rows) {
    /* the message before the release (which zeroes the column) */
    st = ladle_err_set(err, LADLE_ECOMPUTE, "expression '%s' gave %lld rows for a table of %lld",
                       e->name, (long long)full.length, (long long)t->num_rows);
    ladle_column_release(&full);
    free(cols);
    return st;
  }
  int64_t off = 0;
  for (size_t k = 0; k < n && st == LADLE_OK; k++) {
    st = ladle_column_slice(&full, off, t->chunks[k].length, &cols[k], err);
    off += t->chunks[k].length;
  }
  ladle_column_release(&full);
  if (st != LADLE_OK) {
    ladle_release_columns(cols, n);
    return st;
  }
  *out_scalar = false;
  *out_cols = cols;
  return LADLE_OK;
}
