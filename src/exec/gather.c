/* gather.c — the executor's shared helpers: tables from columns, gathers of
 * rows from a table's partitions (without concatenating them), and whole
 * columns evaluated over a table. Every operator file uses them. */
#include <stdlib.h>

#include "exec.h"

ladle_status exec_empty_chunk(const ladle_schema *schema, ladle_table **out, ladle_error *err) {
  for (size_t i = 0; i < schema->n; i++)
    if (schema->types[i].id == LADLE_TYPE_LIST) return ladle_table_create(schema, 0, out, err);
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_table_create(schema, 1, &t, err));
  ladle_status st = LADLE_OK;
  for (size_t i = 0; i < schema->n && st == LADLE_OK; i++)
    st = ladle_column_alloc(schema->types[i], 0, false, 0, &t->chunks[0].columns[i], err);
  ladle_table_seal(t);
  if (st != LADLE_OK) {
    ladle_table_release(t);
    return st;
  }
  *out = t;
  return LADLE_OK;
}

ladle_status exec_table_from_columns(exec_state *s, const ladle_schema *schema, ladle_column *cols,
                                     int64_t nrows, ladle_table **out, ladle_error *err) {
  ladle_table *t;
  ladle_status st = ladle_table_create(schema, 1, &t, err);
  if (st != LADLE_OK) {
    for (size_t i = 0; i < schema->n; i++) ladle_column_release(&cols[i]);
    return st;
  }
  for (size_t i = 0; i < schema->n; i++) {
    t->chunks[0].columns[i] = cols[i];
    memset(&cols[i], 0, sizeof cols[i]);
  }
  t->chunks[0].length = nrows;
  ladle_table_seal(t);
  if (nrows <= s->k.morsel_rows) {
    *out = t;
    return LADLE_OK;
  }
  st = ladle_table_rechunk(t, s->k.morsel_rows, out, err);
  ladle_table_release(t);
  return st;
}

typedef struct gather_job {
  const ladle_column *src; /* per column */
  const int64_t *idx;
  int64_t n;
  ladle_column *out;
  const ladle_backend *be;
  const ladle_kctx *k;
} gather_job;

static ladle_status gather_task(void *vctx, size_t i, ladle_error *err) {
  gather_job *j = vctx;
  return j->be->gather(j->k, &j->src[i], j->idx, j->n, &j->out[i], err);
}

/* Gathers rows idx of every column of a one-chunk table, in parallel. */
ladle_status exec_gather_columns(exec_state *s, const ladle_column *cols, size_t ncols,
                                 const int64_t *idx, int64_t n, ladle_column *out,
                                 ladle_error *err) {
  gather_job j = {cols, idx, n, out, s->be, &s->k};
  ladle_status st = ladle_pool_run(s->k.pool, ncols, gather_task, &j, err);
  if (st != LADLE_OK)
    for (size_t i = 0; i < ncols; i++) ladle_column_release(&out[i]);
  return st;
}

ladle_status exec_pieces_make(exec_state *s, ladle_table *t, piece_table *pt, ladle_error *err) {
  memset(pt, 0, sizeof *pt);
  if (t->nchunks <= 1 || s->be->gather_pieces == NULL || t->schema.n == 0 || t->num_rows == 0)
    return ladle_table_combine(t, &pt->whole, err);
  size_t nc = t->schema.n, nk = t->nchunks;
  pt->nchunks = nk;
  pt->ncols = nc;
  pt->cols = malloc(nc * nk * sizeof *pt->cols);
  pt->views = calloc(nc, sizeof *pt->views);
  if (pt->cols == NULL || pt->views == NULL) {
    free(pt->cols);
    free(pt->views);
    memset(pt, 0, sizeof *pt);
    return LADLE_OOM(err, "pieces");
  }
  for (size_t i = 0; i < nc; i++) {
    for (size_t k = 0; k < nk; k++) pt->cols[i * nk + k] = t->chunks[k].columns[i]; /* borrowed */
    /* morsels of one column (a frame re-split) are one column again for free */
    if (!ladle_column_concat_view(&pt->cols[i * nk], nk, &pt->views[i]))
      memset(&pt->views[i], 0, sizeof pt->views[i]);
  }
  ladle_status st = ladle_pieces_index(pt->cols, nk, &pt->px, err);
  if (st != LADLE_OK) exec_pieces_release(pt);
  return st;
}

void exec_pieces_release(piece_table *pt) {
  ladle_table_release(pt->whole);
  for (size_t i = 0; pt->views != NULL && i < pt->ncols; i++)
    if (pt->views[i].length > 0) ladle_column_release(&pt->views[i]);
  free(pt->views);
  free(pt->cols);
  ladle_pieces_release(&pt->px);
  memset(pt, 0, sizeof *pt);
}

gather_src exec_pieces_src(const piece_table *pt, size_t i) {
  gather_src g;
  g.views = false;
  if (pt->whole != NULL) {
    g.col = &pt->whole->chunks[0].columns[i];
    g.px = NULL;
  } else if (pt->views[i].length > 0) {
    g.col = &pt->views[i];
    g.px = NULL;
  } else {
    g.col = &pt->cols[i * pt->nchunks];
    g.px = &pt->px;
  }
  return g;
}

typedef struct pgather_job {
  const gather_src *src;     /* per output column */
  const int64_t *const *idx; /* per output column; NULL: rows 0..n-1 of src */
  /* or a join's pairs as runs, and per column whether it takes the right rows */
  const ladle_join_runs *runs;
  const bool *from_right;
  size_t ncols;
  int64_t n, part_rows;
  ladle_table *t;
  const ladle_backend *be;
  const ladle_kctx *k;
} pgather_job;

static ladle_status gather_one(const ladle_backend *be, const ladle_kctx *k, const gather_src *g,
                               const int64_t *idx, int64_t n, ladle_column *out, ladle_error *err) {
  return g->px ? be->gather_pieces(k, g->col, g->px, idx, n, out, err)
               : be->gather(k, g->col, idx, n, out, err);
}

/* Whether g's rows go out as the 16-byte views of its strings (no bytes
 * gathered): a result's string column that has views, in one piece. */
static bool gather_views(const gather_src *g) {
  return g->views && g->px == NULL && g->col->views != NULL && g->col->type.id == LADLE_TYPE_STRING;
}

ladle_status exec_gather_src(exec_state *s, const gather_src *g, const int64_t *idx, int64_t n,
                             ladle_column *out, ladle_error *err) {
  if (gather_views(g)) return ladle_column_gather_views(g->col, idx, n, out, err);
  return gather_one(s->be, &s->k, g, idx, n, out, err);
}

static ladle_status pgather_task(void *vctx, size_t i, ladle_error *err) {
  pgather_job *j = vctx;
  size_t part = i / j->ncols, col = i % j->ncols;
  int64_t a = (int64_t)part * j->part_rows, len = LADLE_MIN(j->part_rows, j->n - a);
  ladle_column *o = &j->t->chunks[part].columns[col];
  const gather_src *g = &j->src[col];
  bool views = gather_views(g);
  if (j->runs != NULL) {
    /* this partition's pairs, written for it alone */
    int64_t *idx = malloc((size_t)LADLE_MAX(len, 1) * sizeof *idx);
    if (idx == NULL) return LADLE_OOM(err, "join rows");
    bool right = j->from_right[col];
    ladle_status st =
        j->be->join_pairs_fill(j->k, j->runs, a, len, right ? NULL : idx, right ? idx : NULL, err);
    if (st == LADLE_OK && views)
      st = ladle_column_gather_views(g->col, idx, len, o, err);
    else if (st == LADLE_OK)
      st = gather_one(j->be, j->k, g, idx, len, o, err);
    free(idx);
    return st;
  }
  if (j->idx[col] == NULL)
    return g->px ? ladle_column_slice_pieces(g->col, g->px, a, len, o, err)
                 : ladle_column_slice(g->col, a, len, o, err);
  if (views) return ladle_column_gather_views(g->col, j->idx[col] + a, len, o, err);
  return gather_one(j->be, j->k, g, j->idx[col] + a, len, o, err);
}

/* A table of n rows whose column c is rows idx[c] of src[c], built one morsel
 * partition at a time: (partition, column) pieces are gathered in parallel and
 * become the partitions themselves, so nothing is copied twice. */
ladle_status exec_gather_table(exec_state *s, const ladle_schema *schema, const gather_src *src,
                               const int64_t *const *idx, const ladle_join_runs *runs,
                               const bool *from_right, int64_t n, ladle_table **out,
                               ladle_error *err) {
  /* morsel-sized partitions, but at most MAX_GATHER_PARTS of them: a join that
   * explodes under tiny morsels (tests use 7 rows) would otherwise make a task
   * per few rows per column */
  enum { MAX_GATHER_PARTS = 16384 };
  /* and below a morsel where that gives each thread two partitions, down to
   * 4096 rows: a join output of 100k rows would otherwise be two tasks a column */
  int threads = s->k.pool ? ladle_pool_threads(s->k.pool) : 1;
  int64_t small = LADLE_MAX((n + 2 * (int64_t)threads - 1) / (2 * (int64_t)threads), 4096);
  int64_t part_rows = LADLE_MAX(LADLE_MIN(LADLE_MAX(s->k.morsel_rows, 1), (small + 63) / 64 * 64),
                                (n + MAX_GATHER_PARTS - 1) / MAX_GATHER_PARTS);
  size_t nparts = (size_t)LADLE_MAX((n + part_rows - 1) / part_rows, 1);
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_table_create(schema, nparts, &t, err));
  for (size_t k = 0; k < nparts; k++)
    t->chunks[k].length = LADLE_MIN(part_rows, n - (int64_t)k * part_rows);
  pgather_job j = {src, idx, runs, from_right, schema->n, n, part_rows, t, s->be, &s->k};
  ladle_status st = schema->n == 0
                        ? LADLE_OK
                        : ladle_pool_run(s->k.pool, nparts * schema->n, pgather_task, &j, err);
  ladle_table_seal(t);
  if (st != LADLE_OK) {
    ladle_table_release(t);
    return st;
  }
  *out = t;
  return LADLE_OK;
}

/* Rows idx[0..n) of every column of t, read from its partitions. */
ladle_status exec_gather_rows(exec_state *s, bool views, ladle_table *t, const int64_t *idx,
                              int64_t n, ladle_table **out, ladle_error *err) {
  size_t nc = t->schema.n;
  piece_table pt;
  gather_src *src = calloc(LADLE_MAX(nc, 1), sizeof *src);
  const int64_t **ix = calloc(LADLE_MAX(nc, 1), sizeof *ix);
  ladle_status st = src && ix ? exec_pieces_make(s, t, &pt, err) : LADLE_OOM(err, "gather");
  if (st == LADLE_OK) {
    for (size_t i = 0; i < nc; i++) {
      src[i] = exec_pieces_src(&pt, i);
      src[i].views = views;
      ix[i] = idx;
    }
    st = exec_gather_table(s, &t->schema, src, ix, NULL, NULL, n, out, err);
    exec_pieces_release(&pt);
  }
  free(src);
  free(ix);
  return st;
}

/* n expressions over table t (whole columns) or morsel c (exactly one of
 * the two) into out, each of the input's height (a scalar broadcast); on
 * failure nothing is left in out. */
static ladle_status eval_n(exec_state *s, ladle_bexpr *const *exprs, size_t n, const ladle_table *t,
                           const ladle_chunk *c, ladle_column *out, ladle_error *err) {
  int64_t rows = t != NULL ? t->num_rows : c->length;
  ladle_status st = LADLE_OK;
  size_t done = 0;
  for (; done < n && st == LADLE_OK; done++) {
    ladle_column e;
    st = t != NULL ? ladle_eval_full(s, exprs[done], t, NULL, false, &e, err)
                   : ladle_eval_chunk(s, exprs[done], c, &e, err);
    if (st == LADLE_OK && e.length != rows) {
      st = ladle_column_broadcast(&e, rows, &out[done], err);
      ladle_column_release(&e);
    } else if (st == LADLE_OK) {
      out[done] = e;
    }
  }
  if (st != LADLE_OK)
    for (size_t i = 0; i + 1 < done; i++) ladle_column_release(&out[i]);
  return st;
}

/* Evaluates n expressions over t into whole columns of t's height (scalars
 * broadcast). */
ladle_status exec_eval_whole(exec_state *s, ladle_bexpr *const *exprs, size_t n,
                             const ladle_table *t, ladle_column *out, ladle_error *err) {
  return eval_n(s, exprs, n, t, NULL, out, err);
}

ladle_status exec_eval_morsel(exec_state *s, ladle_bexpr *const *exprs, size_t n,
                              const ladle_chunk *c, ladle_column *out, ladle_error *err) {
  return eval_n(s, exprs, n, NULL, c, out, err);
}

/* Runs every input of pn into ins (pn->ninputs slots, NULL-initialised; the
 * caller releases them): in order, stopping once they hold pn->limit rows
 * (a slice above a union needs no more; the later inputs are not run). */
ladle_status exec_inputs_run(exec_state *s, const ladle_pnode *pn, ladle_table **ins,
                             ladle_error *err) {
  int64_t rows = 0;
  for (size_t i = 0; i < pn->ninputs; i++) {
    LADLE_RETURN_NOT_OK(ladle_exec_node(s, pn->inputs[i], &ins[i], NULL, err));
    if (pn->limit >= 0 && (rows += ins[i]->num_rows) >= pn->limit) break;
  }
  return LADLE_OK;
}

ladle_status exec_run_unary(exec_state *s, const ladle_pnode *pn, exec_unary_fn fn,
                            ladle_table **out, ladle_error *err) {
  ladle_table *in;
  LADLE_RETURN_NOT_OK(ladle_exec_node(s, pn->inputs[0], &in, NULL, err));
  ladle_status st = fn(s, pn, in, out, err);
  ladle_table_release(in);
  return st;
}

int64_t exec_split_rows(const exec_state *s, const ladle_table *t) {
  int threads = s->k.pool ? ladle_pool_threads(s->k.pool) : 1;
  if (t->nchunks == 0 || t->nchunks >= 2 * (size_t)threads || t->num_rows < 2 * 8192) return 0;
  int64_t want = (t->num_rows + 4 * threads - 1) / (4 * threads);
  want = LADLE_MIN(LADLE_MAX(want, 8192), s->k.morsel_rows);
  int64_t longest = 0;
  for (size_t k = 0; k < t->nchunks; k++) longest = LADLE_MAX(longest, t->chunks[k].length);
  return longest > want + want / 2 ? want : 0;
}
