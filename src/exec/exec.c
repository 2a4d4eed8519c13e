/* exec.c — the engine, the result, and the plan walker. Each node turns its
 * input tables (lists of partitions) into an output table. Partition-local work
 * (filters, projections, expressions) runs per partition on the pool; operators
 * that need co-located keys (group_by, join, distinct, sort) work on whole
 * columns and re-split their output into morsels for the operators above.
 * With one rank the exchange those operators need is a local concatenation. */
#include "exec.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../interop/interop.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* Operators allocate and free whole-column scratch. glibc hands blocks over
 * 128 KiB back to the kernel at once, so the next operator faults every page
 * in again, zeroed (a fifth of the time of a high-cardinality group-by). The
 * first engine raises the mmap threshold to glibc's maximum (32 MiB) and the
 * trim threshold to 1 GiB, so such blocks are reused; LADLE_MALLOC_TUNING=0
 * leaves malloc as it is. */
static void tune_malloc(void) {
#if defined(__GLIBC__)
  const char *v = getenv("LADLE_MALLOC_TUNING");
  if (v != NULL && strcmp(v, "0") == 0) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}
static pthread_once_t tune_once = PTHREAD_ONCE_INIT;

/* ----------------------------------------------------------------- helpers */

static ladle_status table_like(const ladle_schema *schema, size_t nchunks, ladle_table **out,
                               ladle_error *err) {
  return ladle_table_create(schema, nchunks, out, err);
}

/* An empty table as one chunk of no rows rather than no chunks, so that the
 * expressions over it are evaluated once, as Polars evaluates them over an
 * empty frame (a strict cast of a literal fails there too). Lists, whose
 * empty column needs an element column, keep no chunks. */
static ladle_status one_empty_chunk(const ladle_schema *schema, ladle_table **out,
                                    ladle_error *err) {
  for (size_t i = 0; i < schema->n; i++)
    if (schema->types[i].id == LADLE_TYPE_LIST) return table_like(schema, 0, out, err);
  ladle_table *t;
  LADLE_RETURN_NOT_OK(table_like(schema, 1, &t, err));
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

/* A one-chunk table from whole columns (consumed), re-split into morsels. */
static ladle_status table_from_columns(exec_state *s, const ladle_schema *schema,
                                       ladle_column *cols, int64_t nrows, ladle_table **out,
                                       ladle_error *err) {
  ladle_table *t;
  ladle_status st = table_like(schema, 1, &t, err);
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
static ladle_status gather_columns(exec_state *s, const ladle_column *cols, size_t ncols,
                                   const int64_t *idx, int64_t n, ladle_column *out,
                                   ladle_error *err) {
  gather_job j = {cols, idx, n, out, s->be, &s->k};
  ladle_status st = ladle_pool_run(s->k.pool, ncols, gather_task, &j, err);
  if (st != LADLE_OK)
    for (size_t i = 0; i < ncols; i++) ladle_column_release(&out[i]);
  return st;
}

/* A source column of a gather: one whole column, or the pieces of one column
 * across a table's partitions (px != NULL) taken as one. */
typedef struct gather_src {
  const ladle_column *col;
  const ladle_pieces *px;
  bool views; /* a result's column: a string column with views gathers only those */
} gather_src;

/* A table's partitions seen as whole columns without concatenating them:
 * column i is pieces cols[i * nchunks ..] under one piece index. A table of
 * one partition (or a backend without gather_pieces) is combined instead. */
typedef struct piece_table {
  ladle_table *whole; /* combined, or NULL */
  ladle_column *cols;
  ladle_column *views; /* per column: its pieces as one view (length 0: none) */
  size_t nchunks, ncols;
  ladle_pieces px;
} piece_table;

static void piece_table_release(piece_table *pt);

static ladle_status piece_table_make(exec_state *s, ladle_table *t, piece_table *pt,
                                     ladle_error *err) {
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
  if (st != LADLE_OK) piece_table_release(pt);
  return st;
}

static void piece_table_release(piece_table *pt) {
  ladle_table_release(pt->whole);
  for (size_t i = 0; pt->views != NULL && i < pt->ncols; i++)
    if (pt->views[i].length > 0) ladle_column_release(&pt->views[i]);
  free(pt->views);
  free(pt->cols);
  ladle_pieces_release(&pt->px);
  memset(pt, 0, sizeof *pt);
}

static gather_src piece_table_src(const piece_table *pt, size_t i) {
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

static ladle_status pgather_task(void *vctx, size_t i, ladle_error *err) {
  pgather_job *j = vctx;
  size_t part = i / j->ncols, col = i % j->ncols;
  int64_t a = (int64_t)part * j->part_rows, len = LADLE_MIN(j->part_rows, j->n - a);
  ladle_column *o = &j->t->chunks[part].columns[col];
  const gather_src *g = &j->src[col];
  bool views =
      g->views && g->px == NULL && g->col->views != NULL && g->col->type.id == LADLE_TYPE_STRING;
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
      st = g->px ? j->be->gather_pieces(j->k, g->col, g->px, idx, len, o, err)
                 : j->be->gather(j->k, g->col, idx, len, o, err);
    free(idx);
    return st;
  }
  if (j->idx[col] == NULL)
    return g->px ? ladle_column_slice_pieces(g->col, g->px, a, len, o, err)
                 : ladle_column_slice(g->col, a, len, o, err);
  if (views) return ladle_column_gather_views(g->col, j->idx[col] + a, len, o, err);
  return g->px ? j->be->gather_pieces(j->k, g->col, g->px, j->idx[col] + a, len, o, err)
               : j->be->gather(j->k, g->col, j->idx[col] + a, len, o, err);
}

/* A table of n rows whose column c is rows idx[c] of src[c], built one morsel
 * partition at a time: (partition, column) pieces are gathered in parallel and
 * become the partitions themselves, so nothing is copied twice. */
static ladle_status gather_table(exec_state *s, const ladle_schema *schema, const gather_src *src,
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
  LADLE_RETURN_NOT_OK(table_like(schema, nparts, &t, err));
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
static ladle_status gather_rows(exec_state *s, bool views, ladle_table *t, const int64_t *idx,
                                int64_t n, ladle_table **out, ladle_error *err) {
  size_t nc = t->schema.n;
  piece_table pt;
  gather_src *src = calloc(LADLE_MAX(nc, 1), sizeof *src);
  const int64_t **ix = calloc(LADLE_MAX(nc, 1), sizeof *ix);
  ladle_status st = src && ix ? piece_table_make(s, t, &pt, err) : LADLE_OOM(err, "gather");
  if (st == LADLE_OK) {
    for (size_t i = 0; i < nc; i++) {
      src[i] = piece_table_src(&pt, i);
      src[i].views = views;
      ix[i] = idx;
    }
    st = gather_table(s, &t->schema, src, ix, NULL, NULL, n, out, err);
    piece_table_release(&pt);
  }
  free(src);
  free(ix);
  return st;
}

/* A join input that is a FILTER runs deferred: it compacts only the columns
 * the join's keys read, and hands back its input and the rows it kept; the
 * join gathers every other column straight from that input, through the
 * kept rows, for the rows it outputs (a join that keeps 1% of lineitem no
 * longer copies half of lineitem's columns first). */
typedef struct join_defer {
  ladle_table *in; /* NULL: not deferred */
  int64_t *sel, n;
} join_defer;

/* What a parent takes from its input besides the table: a deferred FILTER's
 * input and kept rows (a JOIN), a Parquet scan's units (a late FILTER). */
typedef struct exec_side {
  join_defer *defer;
  exec_units *units;
} exec_side;

static ladle_status exec_node(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                              exec_side *side, ladle_error *err);

/* Evaluates n expressions over t into whole columns of t's height (scalars
 * broadcast when broadcast_to >= 0). */
static ladle_status eval_whole(exec_state *s, ladle_bexpr *const *exprs, size_t n,
                               const ladle_table *t, ladle_column *out, ladle_error *err) {
  ladle_status st = LADLE_OK;
  size_t done = 0;
  for (; done < n && st == LADLE_OK; done++) {
    ladle_column c;
    st = ladle_eval_full(s, exprs[done], t, NULL, false, &c, err);
    if (st == LADLE_OK && c.length != t->num_rows) {
      st = ladle_column_broadcast(&c, t->num_rows, &out[done], err);
      ladle_column_release(&c);
    } else if (st == LADLE_OK) {
      out[done] = c;
    }
  }
  if (st != LADLE_OK)
    for (size_t i = 0; i + 1 < done; i++) ladle_column_release(&out[i]);
  return st;
}

/* ------------------------------------------------------------------- nodes */

typedef struct filter_job {
  exec_state *s;
  const ladle_table *in;
  const bool *need;      /* NULL: every column; else those to compact */
  int64_t **kept;        /* deferred: per partition, the rows kept (NULL: all) */
  const bool *late;      /* columns the scan left out: read at the kept rows after */
  const exec_pred *pred; /* the predicate as keep-byte terms, or NULL: */
  ladle_column *masks;   /* its value per partition (or one scalar) */
  bool scalar;
  ladle_table *out;
} filter_job;

static ladle_status filter_task(void *vctx, size_t k, ladle_error *err) {
  filter_job *j = vctx;
  const ladle_chunk *c = &j->in->chunks[k];
  ladle_chunk *o = &j->out->chunks[k];
  const ladle_column *m = j->pred ? NULL : &j->masks[j->scalar ? 0 : k];
  bool all = false, none = false;
  if (m != NULL && j->scalar) {
    bool t = m->type.id != LADLE_TYPE_NULL && ladle_column_valid(m, 0) &&
             ((const uint8_t *)m->values)[0];
    all = t;
    none = !t;
  }
  int64_t *idx = NULL, n = c->length;
  uint8_t *keep = NULL; /* 0/1 per row: the mask with nulls as 0 */
  const uint8_t *kp = NULL;
  size_t ncols = j->in->schema.n;
  bool lists = false;
  for (size_t i = 0; i < ncols; i++) lists |= c->columns[i].type.id == LADLE_TYPE_LIST;
  ladle_status st = LADLE_OK;
  if (!all && !none && (m == NULL || m->type.id == LADLE_TYPE_BOOL)) {
    /* 0/1 bytes whatever the kernel that made the mask wrote for true: the
     * compaction moves its cursor by them */
    keep = malloc((size_t)LADLE_MAX(c->length, 1));
    if (keep == NULL) return LADLE_OOM(err, "filter");
    if (m == NULL) {
      /* the predicate's terms, then the rows kept counted */
      st = exec_pred_keep(j->s, j->pred, c, keep, err);
      if (st == LADLE_OK) st = j->s->be->mask_and(&j->s->k, NULL, c->length, false, keep, &n, err);
    } else {
      st = j->s->be->mask_and(&j->s->k, m, c->length, true, keep, &n, err);
    }
    if (st != LADLE_OK) {
      free(keep);
      return st;
    }
    kp = keep;
    all = n == c->length;
    none = n == 0;
    if (!all && !none && (lists || n < c->length / 4)) {
      /* few rows kept: gathering them by index reads less than a pass over
       * every row of every column (and lists only gather) */
      idx = malloc((size_t)(n + 1) * sizeof *idx);
      if (idx == NULL) {
        free(keep);
        return LADLE_OOM(err, "filter");
      }
      st = j->s->be->keep_to_indices(&j->s->k, kp, c->length, n, idx, err);
      kp = NULL;
      if (st != LADLE_OK) {
        free(keep);
        free(idx);
        return st;
      }
    }
  } else if (!all && !none) {
    LADLE_RETURN_NOT_OK(j->s->be->mask_to_indices(&j->s->k, m, &idx, &n, err));
    all = n == c->length;
  }
  if (j->kept != NULL && !all && idx == NULL) {
    /* the rows kept, for the late gathers (an index list made for the
     * gathers below is handed over after them instead) */
    int64_t *ki = malloc((size_t)(n + 1) * sizeof *ki);
    if (ki == NULL) {
      free(keep);
      return LADLE_OOM(err, "filter");
    }
    j->kept[k] = ki;
    if (!none &&
        (st = j->s->be->keep_to_indices(&j->s->k, kp, c->length, n, ki, err)) != LADLE_OK) {
      free(keep);
      return st;
    }
  }
  for (size_t i = 0; i < ncols && st == LADLE_OK; i++) {
    if (j->late != NULL && j->late[i]) {
      continue; /* exec_filter reads it from the file at the kept rows */
    } else if (j->need != NULL && !j->need[i]) {
      /* a column only the predicate read: the parent drops it */
      exec_placeholder(&o->columns[i], none ? 0 : n);
    } else if (all)
      ladle_column_copy_ref(&c->columns[i], &o->columns[i]);
    else if (none)
      st = ladle_column_slice(&c->columns[i], 0, 0, &o->columns[i], err);
    else if (kp != NULL)
      st = j->s->be->compact(&j->s->k, &c->columns[i], kp, n, &o->columns[i], err);
    else
      st = j->s->be->gather(&j->s->k, &c->columns[i], idx, n, &o->columns[i], err);
  }
  free(keep);
  o->length = none ? 0 : n;
  if (j->kept != NULL && !all && idx != NULL) {
    j->kept[k] = idx;
    idx = NULL;
  }
  free(idx);
  return st;
}

static ladle_status exec_filter(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                const exec_units *units, join_defer *jd, ladle_table **out,
                                ladle_error *err) {
  const ladle_plan *p = pn->lp;
  const bool *need = pn->need, *late = units != NULL ? pn->late : NULL;
  bool defer = jd != NULL;
  ladle_column *masks = NULL;
  bool scalar = false;
  exec_pred *pred;
  LADLE_RETURN_NOT_OK(exec_pred_compile(s, p->exprs[0], &in->schema, &pred, err));
  ladle_status st = pred ? LADLE_OK : ladle_eval_chunked(s, p->exprs[0], in, &masks, &scalar, err);
  ladle_table *t;
  if (st == LADLE_OK) st = table_like(&p->schema, in->nchunks, &t, err);
  if (st == LADLE_OK) {
    filter_job j = {s, in, need, NULL, late, pred, masks, scalar, t};
    if ((defer || late != NULL) &&
        (j.kept = calloc(LADLE_MAX(in->nchunks, 1), sizeof *j.kept)) == NULL)
      st = LADLE_OOM(err, "filter");
    if (st == LADLE_OK) st = ladle_pool_run(s->k.pool, in->nchunks, filter_task, &j, err);
    ladle_table_seal(t);
    if (st == LADLE_OK && late != NULL) {
      /* the columns the predicate did not read, from the file at the kept rows */
      bool *lneed = malloc(LADLE_MAX(p->schema.n, 1) * sizeof *lneed);
      if (lneed == NULL) st = LADLE_OOM(err, "filter");
      for (size_t i = 0; st == LADLE_OK && i < p->schema.n; i++) {
        lneed[i] = late[i] && (need == NULL || need[i]);
        if (late[i] && !lneed[i]) /* the parent drops it: a placeholder */
          for (size_t k = 0; k < t->nchunks; k++)
            exec_placeholder(&t->chunks[k].columns[i], t->chunks[k].length);
      }
      if (st == LADLE_OK)
        st = ladle_exec_scan_parquet_late(s, p->inputs[0], units, in, t, j.kept, lneed, pn->views,
                                          err);
      free(lneed);
    }
    if (st == LADLE_OK && defer) {
      /* the kept rows as indices into the whole input */
      int64_t *sel = ladle_scratch_alloc((size_t)LADLE_MAX(t->num_rows, 1) * sizeof *sel, false);
      if (sel == NULL) st = LADLE_OOM(err, "filter");
      int64_t q = 0, base = 0;
      for (size_t k = 0; st == LADLE_OK && k < in->nchunks; k++) {
        int64_t m = t->chunks[k].length;
        /* the partition's kept rows (NULL: all), after the rows before it */
        st = s->be->index_compose(&s->k, j.kept[k], m, NULL, base, sel + q, err);
        q += m;
        base += in->chunks[k].length;
      }
      if (st == LADLE_OK) {
        jd->in = ladle_table_ref(in);
        jd->sel = sel;
        jd->n = t->num_rows;
      } else {
        ladle_scratch_free(sel);
      }
    }
    if (j.kept != NULL)
      for (size_t k = 0; k < in->nchunks; k++) free(j.kept[k]);
    free(j.kept);
    if (st != LADLE_OK)
      ladle_table_release(t);
    else
      *out = t;
  }
  if (masks) ladle_release_columns(masks, scalar ? 1 : in->nchunks);
  exec_pred_destroy(pred);
  return st;
}

/* Builds output chunks from per-expression chunked results. src_map gives, per
 * output column, an input column index (>= 0) or -(expr index) - 1. */
static ladle_status assemble(exec_state *s, const ladle_plan *p, ladle_table *in,
                             ladle_column **vals, const bool *scalar, const int64_t *src_map,
                             bool all_scalar, ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(s);
  size_t nchunks = all_scalar ? 1 : in->nchunks;
  ladle_table *t;
  LADLE_RETURN_NOT_OK(table_like(&p->schema, nchunks, &t, err));
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

static ladle_status exec_projection(exec_state *s, const ladle_plan *p, ladle_table *in,
                                    ladle_table **out, ladle_error *err) {
  size_t n = p->nexprs;
  ladle_column **vals = calloc(LADLE_MAX(n, 1), sizeof *vals);
  bool *scalar = calloc(LADLE_MAX(n, 1), sizeof *scalar);
  int64_t *map = NULL;
  ladle_status st = vals && scalar ? LADLE_OK : LADLE_OOM(err, "select");
  size_t done = 0;
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
  free(vals);
  free(scalar);
  free(map);
  return st;
}

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
  if (e->kind == LADLE_EX_OVER || e->kind == LADLE_EX_RANK) return false;
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

ladle_status ladle_exec_table_from_columns(exec_state *s, const ladle_schema *schema,
                                           ladle_column *cols, int64_t nrows, ladle_table **out,
                                           ladle_error *err) {
  return table_from_columns(s, schema, cols, nrows, out, err);
}

static ladle_status exec_group_by(exec_state *s, const ladle_plan *p, ladle_table *in,
                                  ladle_table **out, ladle_error *err) {
  bool partial = false;
  double t0 = LADLE_PHASE_START();
  LADLE_RETURN_NOT_OK(ladle_exec_group_by_partial(s, p, in, out, &partial, err));
  LADLE_PHASE_END(partial ? "group_by partial and final" : "group_by partial declined",
                  in->num_rows, t0);
  if (partial) return LADLE_OK;
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
  ladle_status st = eval_whole(s, p->keys, nk, in, keys, err);
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
    st = gather_columns(s, keys, nk, g.first, g.ngroups, cols, err);
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
    st = table_from_columns(s, &p->schema, cols, ngroups, out, err);
  else
    for (size_t i = 0; i < made; i++) ladle_column_release(&cols[i]);
  free(cols);
  LADLE_PHASE_END("group_by output table", ngroups, t0);
  return st;
}

/* The rows idx (n of them, -1: none) of a deferred side, as rows of its input;
 * idx NULL: rows 0..n. */
static ladle_status defer_compose(exec_state *s, const join_defer *d, const int64_t *idx, int64_t n,
                                  int64_t **out, ladle_error *err) {
  int64_t *c = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *c, false);
  if (c == NULL) return LADLE_OOM(err, "join");
  ladle_status st = s->be->index_compose(&s->k, idx, n, d->sel, 0, c, err);
  if (st != LADLE_OK) {
    ladle_scratch_free(c);
    return st;
  }
  *out = c;
  return LADLE_OK;
}

/* Puts a join's pairs in the order the plan promises (ladle_join_order). The
 * kernels give them left row first (right row first for RIGHT joins), each
 * side's rows in order; the other order is a stable counting sort by the
 * other side's row, rows without one last. */
static bool join_reorders(const ladle_plan *p) {
  ladle_join_order o = p->join.order;
  bool by_right = o == LADLE_JOIN_ORDER_RIGHT || o == LADLE_JOIN_ORDER_RIGHT_LEFT;
  bool by_left = o == LADLE_JOIN_ORDER_LEFT || o == LADLE_JOIN_ORDER_LEFT_RIGHT;
  return (by_right || by_left) && by_right != (p->join.how == LADLE_JOIN_RIGHT) &&
         p->join.how != LADLE_JOIN_SEMI && p->join.how != LADLE_JOIN_ANTI;
}

typedef struct fill_job {
  const ladle_backend *be;
  const ladle_kctx *k;
  const ladle_join_runs *runs;
  int64_t n, part;
  int64_t *left, *right;
} fill_job;

static ladle_status fill_task(void *vctx, size_t i, ladle_error *err) {
  fill_job *j = vctx;
  int64_t a = (int64_t)i * j->part, len = LADLE_MIN(j->part, j->n - a);
  return j->be->join_pairs_fill(j->k, j->runs, a, len, j->left + a, j->right + a, err);
}

/* A join's pairs kept as runs written out as left/right arrays, in parallel. */
static ladle_status pairs_materialize(exec_state *s, ladle_join_pairs *pairs, ladle_error *err) {
  if (pairs->runs == NULL) return LADLE_OK;
  int64_t n = pairs->n;
  fill_job j = {s->be, &s->k, pairs->runs, n, LADLE_MAX(s->k.morsel_rows, 1 << 16), NULL, NULL};
  j.left = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *j.left, false);
  j.right = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *j.right, false);
  ladle_status st = j.left && j.right ? LADLE_OK : LADLE_OOM(err, "join pairs");
  if (st == LADLE_OK)
    st = ladle_pool_run(s->k.pool, (size_t)((n + j.part - 1) / j.part), fill_task, &j, err);
  if (st != LADLE_OK) {
    ladle_scratch_free(j.left);
    ladle_scratch_free(j.right);
    return st;
  }
  s->be->join_runs_free(pairs->runs);
  pairs->runs = NULL;
  pairs->left = j.left;
  pairs->right = j.right;
  return LADLE_OK;
}

static ladle_status join_order(exec_state *s, const ladle_plan *p, ladle_join_pairs *pairs,
                               int64_t nl, int64_t nr, ladle_error *err) {
  ladle_join_order o = p->join.order;
  bool by_right = o == LADLE_JOIN_ORDER_RIGHT || o == LADLE_JOIN_ORDER_RIGHT_LEFT;
  if (pairs->right == NULL || pairs->n < 2 || !join_reorders(p)) return LADLE_OK;
  /* a stable counting sort by the other side's row, rows without one last */
  return s->be->join_pairs_sort(&s->k, pairs, by_right, by_right ? nr : nl, err);
}

static ladle_status exec_join(exec_state *s, const ladle_pnode *pn, ladle_table *l, ladle_table *r,
                              const join_defer *jd, ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  size_t nk = p->nkeys;
  ladle_table *lc = NULL, *rc = NULL;
  piece_table lp, rp; /* the sides' columns, for the gathers */
  memset(&lp, 0, sizeof lp);
  memset(&rp, 0, sizeof rp);
  bool coalesce = ladle_join_coalesces(p);
  ladle_column *lk = calloc(LADLE_MAX(nk, 1), sizeof *lk);
  ladle_column *rk = calloc(LADLE_MAX(nk, 1), sizeof *rk);
  ladle_column *cols = calloc(LADLE_MAX(p->schema.n, 1), sizeof *cols);
  ladle_join_pairs pairs = {0, NULL, NULL, NULL};
  ladle_status st = lk && rk && cols ? LADLE_OK : LADLE_OOM(err, "join");
  bool have_lk = false, have_rk = false;
  if (coalesce) {
    /* a full join's coalesced key merges the sides' key columns: whole ones */
    if (st == LADLE_OK) st = ladle_table_combine(l, &lc, err);
    if (st == LADLE_OK) st = ladle_table_combine(r, &rc, err);
  } else {
    lc = ladle_table_ref(l);
    rc = ladle_table_ref(r);
    if (st == LADLE_OK) st = piece_table_make(s, jd[0].in ? jd[0].in : l, &lp, err);
    if (st == LADLE_OK) st = piece_table_make(s, jd[1].in ? jd[1].in : r, &rp, err);
  }
  double t0 = LADLE_PHASE_START();
  if (st == LADLE_OK && p->join.how != LADLE_JOIN_CROSS) {
    st = eval_whole(s, p->keys, nk, lc, lk, err);
    have_lk = st == LADLE_OK;
    if (st == LADLE_OK) st = eval_whole(s, p->rkeys, nk, rc, rk, err);
    have_rk = st == LADLE_OK;
  }
  if (st == LADLE_OK) {
    if (p->join.how == LADLE_JOIN_CROSS) {
      ladle_column a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      a.length = lc->num_rows;
      b.length = rc->num_rows;
      st = s->be->join(&s->k, &a, &b, 1, LADLE_JOIN_CROSS, false, &pairs, err);
    } else {
      LADLE_PHASE_END("join keys", lc->num_rows + rc->num_rows, t0);
      t0 = LADLE_PHASE_START();
      st = s->be->join(&s->k, lk, rk, nk, p->join.how, p->join.nulls_equal, &pairs, err);
    }
    LADLE_PHASE_END("join kernel", pairs.n, t0);
  }
  t0 = LADLE_PHASE_START();
  /* runs are gathered from partition by partition unless the output needs the
   * pairs whole */
  if (st == LADLE_OK && pairs.runs != NULL &&
      (coalesce || jd[0].in != NULL || jd[1].in != NULL || join_reorders(p)))
    st = pairs_materialize(s, &pairs, err);
  if (st == LADLE_OK) st = join_order(s, p, &pairs, lc->num_rows, rc->num_rows, err);
  /* a join whose left rows come out exactly once and in order (a lookup into a
   * dimension table, the common case) need not copy the left columns */
  bool left_identity =
      st == LADLE_OK && pairs.left != NULL && lc != NULL && pairs.n == lc->num_rows;
  if (left_identity) st = s->be->index_is_identity(&s->k, pairs.left, pairs.n, &left_identity, err);
  LADLE_PHASE_END("join order", pairs.n, t0);
  t0 = LADLE_PHASE_START();
  ladle_table *gathered = NULL; /* the output, when built partition by partition */
  if (st == LADLE_OK && !coalesce) {
    /* the output partition by partition, gathered in parallel */
    gather_src *src = calloc(LADLE_MAX(p->schema.n, 1), sizeof *src);
    const int64_t **idx = calloc(LADLE_MAX(p->schema.n, 1), sizeof *idx);
    if (src == NULL || idx == NULL) st = LADLE_OOM(err, "join");
    /* deferred sides' rows, as rows of their inputs */
    int64_t *comp[2] = {NULL, NULL};
    for (int k = 0; st == LADLE_OK && k < 2; k++) {
      const int64_t *side = k == 0 ? (left_identity ? NULL : pairs.left) : pairs.right;
      bool rows = side != NULL || (k == 0 && left_identity); /* semi/anti: no right rows */
      if (jd[k].in != NULL && rows) st = defer_compose(s, &jd[k], side, pairs.n, &comp[k], err);
    }
    for (size_t i = 0; st == LADLE_OK && i < p->schema.n; i++) {
      int64_t m = p->out_map[i];
      src[i] = m >= 0 ? piece_table_src(&lp, (size_t)m) : piece_table_src(&rp, (size_t)(-m - 1));
      src[i].views = pn->views;
      idx[i] = m >= 0 ? (comp[0]         ? comp[0]
                         : left_identity ? NULL
                                         : pairs.left)
                      : (comp[1] ? comp[1] : pairs.right);
    }
    bool *from_right = pairs.runs ? calloc(LADLE_MAX(p->schema.n, 1), sizeof *from_right) : NULL;
    if (pairs.runs != NULL && from_right == NULL) st = LADLE_OOM(err, "join");
    for (size_t i = 0; from_right != NULL && i < p->schema.n; i++)
      from_right[i] = p->out_map[i] < 0;
    if (st == LADLE_OK)
      st = gather_table(s, &p->schema, src, idx, pairs.runs, from_right, pairs.n, &gathered, err);
    free(from_right);
    ladle_scratch_free(comp[0]);
    ladle_scratch_free(comp[1]);
    free(src);
    free(idx);
  }
  LADLE_PHASE_END("join gather", pairs.n, t0);
  size_t made = 0;
  for (size_t i = 0; st == LADLE_OK && coalesce && i < p->schema.n; i++) {
    int64_t m = p->out_map[i];
    const ladle_column *src = m >= 0 ? &lc->chunks[0].columns[m] : &rc->chunks[0].columns[-m - 1];
    const int64_t *idx = m >= 0 ? pairs.left : pairs.right;
    if (m >= 0 && left_identity)
      ladle_column_copy_ref(src, &cols[i]); /* every left row once, in order: share it */
    else
      st = s->be->gather(&s->k, src, idx, pairs.n, &cols[i], err);
    if (st != LADLE_OK) break;
    made++;
    int64_t ck = p->coalesce_rkey[i];
    if (ck >= 0) {
      /* FULL join, coalesced key: take the right key where the left has none */
      int64_t *both = malloc((size_t)LADLE_MAX(pairs.n, 1) * sizeof *both);
      if (both == NULL) {
        st = LADLE_OOM(err, "join");
        break;
      }
      ladle_column parts[2] = {lc->chunks[0].columns[m], rc->chunks[0].columns[ck]}, all, merged;
      st = s->be->join_pairs_coalesce(&s->k, &pairs, lc->num_rows, both, err);
      if (st == LADLE_OK) st = ladle_column_concat(parts, 2, &all, err);
      if (st == LADLE_OK) {
        st = ladle_column_gather(&all, both, pairs.n, &merged, err);
        ladle_column_release(&all);
        if (st == LADLE_OK) {
          ladle_column_release(&cols[i]);
          cols[i] = merged;
        }
      }
      free(both);
    }
  }
  int64_t nrows = pairs.n;
  ladle_scratch_free(pairs.left);
  ladle_scratch_free(pairs.right);
  if (pairs.runs != NULL) s->be->join_runs_free(pairs.runs);
  if (have_lk)
    for (size_t i = 0; i < nk; i++) ladle_column_release(&lk[i]);
  if (have_rk)
    for (size_t i = 0; i < nk; i++) ladle_column_release(&rk[i]);
  free(lk);
  free(rk);
  ladle_table_release(lc);
  ladle_table_release(rc);
  piece_table_release(&lp);
  piece_table_release(&rp);
  if (!coalesce) {
    free(cols);
    if (st == LADLE_OK) *out = gathered;
    return st;
  }
  if (st == LADLE_OK)
    st = table_from_columns(s, &p->schema, cols, nrows, out, err);
  else
    for (size_t i = 0; i < made; i++) ladle_column_release(&cols[i]);
  free(cols);
  return st;
}

static ladle_status exec_sort(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                              ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  size_t nk = p->nexprs;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  int64_t *perm = NULL;
  ladle_status st = keys ? eval_whole(s, p->exprs, nk, in, keys, err) : LADLE_OOM(err, "sort");
  bool have_keys = st == LADLE_OK;
  int64_t n = in->num_rows;
  /* a sort under head(k) with k well below the rows: the backend's top-k */
  bool top_k = p->limit >= 0 && p->limit <= n / 8 && p->limit <= ((int64_t)1 << 20) &&
               s->be->top_k_indices != NULL;
  if (st == LADLE_OK && top_k)
    st = s->be->top_k_indices(&s->k, keys, nk, p->descending, p->nulls_last, p->limit, &perm, err);
  else if (st == LADLE_OK)
    st = s->be->sort_indices(&s->k, keys, nk, p->descending, p->nulls_last, &perm, err);
  if (p->limit >= 0 && p->limit < n) n = p->limit;
  if (st == LADLE_OK) st = gather_rows(s, pn->views, in, perm, n, out, err);
  if (have_keys)
    for (size_t i = 0; i < nk; i++) ladle_column_release(&keys[i]);
  free(keys);
  free(perm);
  return st;
}

static ladle_status exec_slice(const ladle_plan *p, ladle_table *in, ladle_table **out,
                               ladle_error *err) {
  int64_t n = in->num_rows, off = p->offset;
  if (off < 0) off = LADLE_MAX(n + off, 0);
  off = LADLE_MIN(off, n);
  int64_t len = p->length < 0 ? n - off : LADLE_MIN(p->length, n - off);
  if (p->offset < 0 && p->length >= 0 && n + p->offset < 0) {
    /* a window that starts before the first row keeps only its overlap */
    len = LADLE_MAX(0, LADLE_MIN(p->length + (n + p->offset), n));
  }
  size_t nchunks = 0;
  int64_t pos = 0;
  for (size_t k = 0; k < in->nchunks; k++) {
    int64_t a = pos, b = pos + in->chunks[k].length;
    if (b > off && a < off + len) nchunks++;
    pos = b;
  }
  ladle_table *t;
  LADLE_RETURN_NOT_OK(table_like(&p->schema, nchunks, &t, err));
  pos = 0;
  size_t j = 0;
  ladle_status st = LADLE_OK;
  for (size_t k = 0; k < in->nchunks && st == LADLE_OK; k++) {
    int64_t a = pos, b = pos + in->chunks[k].length;
    pos = b;
    if (!(b > off && a < off + len)) continue;
    int64_t s0 = LADLE_MAX(off, a) - a, e0 = LADLE_MIN(off + len, b) - a;
    t->chunks[j].length = e0 - s0;
    for (size_t i = 0; i < p->schema.n && st == LADLE_OK; i++)
      st =
          ladle_column_slice(&in->chunks[k].columns[i], s0, e0 - s0, &t->chunks[j].columns[i], err);
    j++;
  }
  ladle_table_seal(t);
  if (st != LADLE_OK) {
    ladle_table_release(t);
    return st;
  }
  *out = t;
  return LADLE_OK;
}

static ladle_status exec_distinct(exec_state *s, const ladle_plan *p, ladle_table *in,
                                  ladle_table **out, ladle_error *err) {
  ladle_table *c;
  LADLE_RETURN_NOT_OK(ladle_table_combine(in, &c, err));
  size_t nk = p->nsubset, nc = p->schema.n;
  ladle_column *keys = malloc(LADLE_MAX(nk, 1) * sizeof *keys);
  ladle_column *cols = calloc(LADLE_MAX(nc, 1), sizeof *cols);
  ladle_groups g;
  memset(&g, 0, sizeof g);
  int64_t *rows = NULL, n = 0;
  ladle_status st = keys && cols ? LADLE_OK : LADLE_OOM(err, "unique");
  for (size_t i = 0; st == LADLE_OK && i < nk; i++) keys[i] = c->chunks[0].columns[p->subset[i]];
  if (st == LADLE_OK) st = s->be->group_ids(&s->k, keys, nk, &g, err);
  /* the rows kept, in order of appearance (Polars promises it with
   * maintain_order; ladle always keeps it) */
  if (st == LADLE_OK) st = s->be->distinct_rows(&s->k, &g, p->keep, &rows, &n, err);
  if (st == LADLE_OK) st = gather_columns(s, c->chunks[0].columns, nc, rows, n, cols, err);
  ladle_groups_release(&g);
  free(keys);
  free(rows);
  ladle_table_release(c);
  if (st == LADLE_OK) st = table_from_columns(s, &p->schema, cols, n, out, err);
  free(cols);
  return st;
}

static ladle_status exec_union(const ladle_plan *p, ladle_table **ins, ladle_table **out,
                               ladle_error *err) {
  size_t total = 0;
  for (size_t i = 0; i < p->ninputs; i++) total += ins[i] ? ins[i]->nchunks : 0;
  ladle_table *t;
  LADLE_RETURN_NOT_OK(table_like(&p->schema, total, &t, err));
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

static ladle_status exec_hconcat(exec_state *s, const ladle_plan *p, ladle_table **ins,
                                 ladle_table **out, ladle_error *err) {
  int64_t height = 0;
  for (size_t i = 0; i < p->ninputs; i++) height = LADLE_MAX(height, ins[i]->num_rows);
  for (size_t i = 0; p->strict && i < p->ninputs; i++)
    if (ins[i]->num_rows != height)
      return ladle_err_set(err, LADLE_ECOMPUTE,
                           "horizontal concat of inputs of different heights (%lld and %lld rows); "
                           "Polars' how='horizontal_extend' pads the shorter ones with nulls",
                           (long long)ins[i]->num_rows, (long long)height);
  ladle_column *cols = calloc(LADLE_MAX(p->schema.n, 1), sizeof *cols);
  if (cols == NULL) return LADLE_OOM(err, "hconcat");
  size_t j = 0;
  ladle_status st = LADLE_OK;
  for (size_t i = 0; i < p->ninputs && st == LADLE_OK; i++) {
    for (size_t c = 0; c < ins[i]->schema.n && st == LADLE_OK; c++, j++) {
      ladle_column whole;
      st = ladle_table_concat_column(ins[i], c, &whole, err);
      if (st != LADLE_OK) break;
      if (whole.length == height) {
        cols[j] = whole;
        continue;
      }
      ladle_column pad, parts[2];
      st = ladle_column_nulls(whole.type, height - whole.length, &pad, err);
      if (st == LADLE_OK) {
        parts[0] = whole;
        parts[1] = pad;
        st = ladle_column_concat(parts, 2, &cols[j], err);
        ladle_column_release(&pad);
      }
      ladle_column_release(&whole);
    }
  }
  if (st == LADLE_OK)
    st = table_from_columns(s, &p->schema, cols, height, out, err);
  else
    for (size_t i = 0; i < j; i++) ladle_column_release(&cols[i]);
  free(cols);
  return st;
}

static ladle_status exec_project(const ladle_plan *p, ladle_table *in, ladle_table **out,
                                 ladle_error *err) {
  ladle_table *t;
  LADLE_RETURN_NOT_OK(table_like(&p->schema, in->nchunks, &t, err));
  for (size_t k = 0; k < in->nchunks; k++) {
    t->chunks[k].length = in->chunks[k].length;
    for (size_t i = 0; i < p->schema.n; i++)
      ladle_column_copy_ref(&in->chunks[k].columns[p->out_map[i]], &t->chunks[k].columns[i]);
  }
  ladle_table_seal(t);
  *out = t;
  return LADLE_OK;
}

static ladle_status exec_row_index(exec_state *s, const ladle_plan *p, ladle_table *in,
                                   ladle_table **out, ladle_error *err) {
  if (in->num_rows + p->offset > (int64_t)UINT32_MAX + 1)
    return ladle_err_set(err, LADLE_ECOMPUTE, "with_row_index: %lld rows overflow UInt32",
                         (long long)in->num_rows);
  ladle_table *t;
  LADLE_RETURN_NOT_OK(table_like(&p->schema, in->nchunks, &t, err));
  int64_t pos = p->offset;
  for (size_t k = 0; k < in->nchunks; k++) {
    int64_t len = in->chunks[k].length;
    t->chunks[k].length = len;
    /* the row numbers pos, pos + 1, ... of the chunk (in UInt32: checked above) */
    ladle_status st = s->be->sequence(&s->k, pos, len, ladle_dtype_make(LADLE_TYPE_UINT32),
                                      &t->chunks[k].columns[0], err);
    if (st != LADLE_OK) {
      ladle_table_release(t);
      return st;
    }
    pos += len;
    for (size_t i = 1; i < p->schema.n; i++)
      ladle_column_copy_ref(&in->chunks[k].columns[i - 1], &t->chunks[k].columns[i]);
  }
  ladle_table_seal(t);
  *out = t;
  return LADLE_OK;
}

static ladle_status exec_node_run(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                  exec_side *side, ladle_error *err);

/* need[c] = true for every column c that e reads. */
void ladle_exec_mark_columns(const ladle_bexpr *e, bool *need, size_t n) {
  if (e->kind == LADLE_EX_COL && e->col >= 0 && (size_t)e->col < n) need[e->col] = true;
  for (size_t i = 0; i < e->nargs; i++) ladle_exec_mark_columns(e->args[i], need, n);
}

static int trace_on(void) { return ladle_trace_level() >= 1; }

/* ------------------------------------------------------------ SEMI_FILTER
 *
 * Rows of `in` whose keys are among those of the side its JOIN handed over
 * (exec_state.fed), when that side is small enough to help; *out stays NULL
 * (pass `in` on) otherwise. physical.c says where and why these nodes are
 * planned. */
static ladle_status semi_filter(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                ladle_table **out, ladle_error *err) {
  *out = NULL;
  const ladle_table *side = s->fed[pn->id - 1];
  size_t nk = pn->nkeys;
  if (side == NULL || in->num_rows == 0) return LADLE_OK;
  ladle_column keys[2 * LADLE_SEMI_MAX_KEYS]; /* this input's, then the side's */
  ladle_status st;
  if (pn->semi == LADLE_SEMI_REDUCTION) {
    if (in->num_rows < 65536 || side->num_rows * 32 > in->num_rows) return LADLE_OK;
    LADLE_RETURN_NOT_OK(eval_whole(s, (ladle_bexpr *const *)pn->keys, nk, in, keys, err));
    st = eval_whole(s, pn->from_keys, nk, side, keys + nk, err);
    if (st != LADLE_OK) {
      for (size_t k = 0; k < nk; k++) ladle_column_release(&keys[k]);
      return st;
    }
  } else {
    if ((size_t)pn->key_col >= in->schema.n) return LADLE_OK;
    LADLE_RETURN_NOT_OK(ladle_table_concat_column(in, (size_t)pn->key_col, &keys[0], err));
    st = ladle_table_concat_column(side, (size_t)pn->from_col, &keys[1], err);
    if (st != LADLE_OK) {
      ladle_column_release(&keys[0]);
      return st;
    }
  }
  bool same = true; /* key types that differ (a cast in between): no cut */
  for (size_t k = 0; k < nk; k++) same &= ladle_dtype_equal(keys[k].type, keys[nk + k].type);
  ladle_join_pairs pairs = {0, NULL, NULL, NULL};
  st = LADLE_OK;
  if (same) st = s->be->join(&s->k, keys, keys + nk, nk, LADLE_JOIN_SEMI, false, &pairs, err);
  if (same && st == LADLE_OK && pairs.n < in->num_rows)
    st = gather_rows(s, false, in, pairs.left, pairs.n, out, err);
  ladle_scratch_free(pairs.left);
  ladle_scratch_free(pairs.right);
  for (size_t k = 0; k < 2 * nk; k++) ladle_column_release(&keys[k]);
  if (st == LADLE_OK && same && pn->semi == LADLE_SEMI_TRANSFER) {
    atomic_fetch_add(&s->eng->rows_transferred, in->num_rows - pairs.n);
    if (trace_on())
      fprintf(stderr, "ladle: transfer of %lld keys: %lld -> %lld rows\n",
              (long long)side->num_rows, (long long)in->num_rows, (long long)pairs.n);
  }
  return st;
}

/* --------------------------------------------------------------- the walk */

/* LADLE_TRACE=1 prints, per physical node as it finishes, its id, operator,
 * output rows and milliseconds (its inputs' time included) to stderr,
 * indented by depth: the profile of a query by operator. */
static ladle_status exec_node(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                              exec_side *side, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_cancel_check(err));
  if (!trace_on()) return exec_node_run(s, pn, out, side, err);
  static _Thread_local int depth;
  double t0 = ladle_clock_ms();
  depth++;
  ladle_status st = exec_node_run(s, pn, out, side, err);
  depth--;
  fprintf(stderr, "ladle: %*s#%d %s rows=%lld chunks=%zu %.2f ms\n", 2 * depth, "", pn->id,
          ladle_pnode_name(pn), st == LADLE_OK ? (long long)(*out)->num_rows : -1LL,
          st == LADLE_OK ? (*out)->nchunks : (size_t)0, ladle_clock_ms() - t0);
  return st;
}

static ladle_status exec_cached(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                ladle_error *err) {
  for (size_t i = 0; i < s->ncache; i++)
    if (s->cache[i].node == pn) {
      *out = ladle_table_ref(s->cache[i].table);
      return LADLE_OK;
    }
  if (s->ncache == s->capcache) {
    size_t cap = s->capcache ? s->capcache * 2 : 4;
    exec_cache_entry *c = realloc(s->cache, cap * sizeof *c);
    if (c == NULL) return LADLE_OOM(err, "cache");
    s->cache = c;
    s->capcache = cap;
  }
  ladle_table *t;
  LADLE_RETURN_NOT_OK(exec_node(s, pn->inputs[0], &t, NULL, err));
  s->cache[s->ncache].node = pn;
  s->cache[s->ncache++].table = t;
  *out = ladle_table_ref(t);
  return LADLE_OK;
}

static ladle_status exec_join_node(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                   ladle_error *err) {
  ladle_table *ins[2] = {NULL, NULL};
  join_defer jd[2];
  memset(jd, 0, sizeof jd);
  ladle_status st = LADLE_OK;
  const ladle_pnode *f = pn->feeds;
  for (size_t i = 0; i < 2 && st == LADLE_OK; i++) {
    size_t k = pn->right_first ? 1 - i : i;
    exec_side side = {pn->defer_side[k] ? &jd[k] : NULL, NULL};
    st = exec_node(s, pn->inputs[k], &ins[k], &side, err);
    /* the first side feeds its SEMI_FILTER while the other runs: a
     * transfer only when the right side kept an eighth of its table */
    if (st == LADLE_OK && i == 0 && f != NULL &&
        (f->semi == LADLE_SEMI_REDUCTION || ins[k]->num_rows * 8 <= f->base_rows))
      s->fed[f->id - 1] = ins[k];
  }
  if (f != NULL) s->fed[f->id - 1] = NULL;
  if (st == LADLE_OK) st = exec_join(s, pn, ins[0], ins[1], jd, out, err);
  for (int k = 0; k < 2; k++) {
    ladle_table_release(ins[k]);
    ladle_table_release(jd[k].in);
    ladle_scratch_free(jd[k].sel);
  }
  return st;
}

/* The inputs of a UNION (in order, stopping once they hold its limit) or an
 * HCONCAT, then the node. */
static ladle_status exec_many(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                              ladle_error *err) {
  const ladle_plan *p = pn->lp;
  ladle_table *ins_small[4] = {NULL, NULL, NULL, NULL};
  ladle_table **ins = p->ninputs <= 4 ? ins_small : calloc(p->ninputs, sizeof *ins);
  if (ins == NULL) return LADLE_OOM(err, "inputs");
  ladle_status st = LADLE_OK;
  int64_t rows = 0;
  for (size_t i = 0; i < pn->ninputs && st == LADLE_OK; i++) {
    st = exec_node(s, pn->inputs[i], &ins[i], NULL, err);
    if (st == LADLE_OK && pn->limit >= 0 && (rows += ins[i]->num_rows) >= pn->limit)
      break; /* the slice above has its rows: the later inputs are not run */
  }
  if (st == LADLE_OK)
    st = pn->op == LADLE_POP_UNION ? exec_union(p, ins, out, err)
                                   : exec_hconcat(s, p, ins, out, err);
  for (size_t i = 0; i < pn->ninputs; i++) ladle_table_release(ins[i]);
  if (ins != ins_small) free(ins);
  return st;
}

/* GROUP_BY_FINAL: its partial step over its pipeline from `source` (or over
 * its input's table), the exchange, the final step; the whole group-by where
 * the partial step turns itself down. */
static ladle_status exec_group_by_final(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                        ladle_error *err) {
  const ladle_plan *p = pn->lp;
  ladle_table *src, *mid = NULL;
  if (pn->source != NULL) {
    LADLE_RETURN_NOT_OK(exec_node(s, pn->source, &src, NULL, err));
    ladle_status st = ladle_exec_group_by_pipeline(s, p, src, out, &mid, err);
    ladle_table_release(src);
    if (st == LADLE_OK && mid != NULL) {
      st = exec_group_by(s, p, mid, out, err);
      ladle_table_release(mid);
    }
    return st;
  }
  const ladle_pnode *part = pn->inputs[0];
  while (part->op == LADLE_POP_EXCHANGE) part = part->inputs[0];
  LADLE_RETURN_NOT_OK(exec_node(s, part->inputs[0], &src, NULL, err));
  ladle_status st = exec_group_by(s, p, src, out, err);
  ladle_table_release(src);
  return st;
}

static ladle_status exec_node_run(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                  exec_side *side, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  switch (pn->op) {
    case LADLE_POP_SCAN:
      if (p->table->nchunks == 1 && p->table->num_rows > s->k.morsel_rows)
        return ladle_table_rechunk(p->table, s->k.morsel_rows, out, err);
      if (p->table->nchunks == 0) return one_empty_chunk(&p->table->schema, out, err);
      *out = ladle_table_ref(p->table);
      return LADLE_OK;
    case LADLE_POP_SCAN_PARQUET:
      return ladle_exec_scan_parquet(s, pn, out, side != NULL ? side->units : NULL, err);
    case LADLE_POP_SCAN_CSV:
      return ladle_exec_scan_csv(s, p, out, err);
    case LADLE_POP_CACHE:
      return exec_cached(s, pn, out, err);
    case LADLE_POP_JOIN:
      return exec_join_node(s, pn, out, err);
    case LADLE_POP_UNION:
    case LADLE_POP_HCONCAT:
      return exec_many(s, pn, out, err);
    case LADLE_POP_GROUP_BY_FINAL:
      return exec_group_by_final(s, pn, out, err);
    case LADLE_POP_GROUP_BY_PARTIAL:
      return ladle_err_set(err, LADLE_EINVAL,
                           "internal: a partial group-by outside its final step");
    default:
      break;
  }
  /* one input */
  exec_units units = {NULL, NULL};
  exec_side in_side = {NULL, pn->op == LADLE_POP_FILTER && pn->late != NULL ? &units : NULL};
  ladle_table *in;
  LADLE_RETURN_NOT_OK(exec_node(s, pn->inputs[0], &in, &in_side, err));
  ladle_status st = LADLE_OK;
  switch (pn->op) {
    case LADLE_POP_FILTER:
      st = exec_filter(s, pn, in, units.file != NULL ? &units : NULL,
                       side != NULL && pn->defer ? side->defer : NULL, out, err);
      break;
    case LADLE_POP_PROJECTION:
      st = exec_projection(s, p, in, out, err);
      break;
    case LADLE_POP_PROJECT:
      st = exec_project(p, in, out, err);
      break;
    case LADLE_POP_GROUP_BY:
      st = exec_group_by(s, p, in, out, err);
      break;
    case LADLE_POP_SORT:
    case LADLE_POP_TOP_K:
      st = exec_sort(s, pn, in, out, err);
      break;
    case LADLE_POP_SLICE:
      st = exec_slice(p, in, out, err);
      break;
    case LADLE_POP_DISTINCT:
      st = exec_distinct(s, p, in, out, err);
      break;
    case LADLE_POP_ROW_INDEX:
      st = exec_row_index(s, p, in, out, err);
      break;
    case LADLE_POP_SEMI_FILTER: {
      ladle_table *cut = NULL;
      st = semi_filter(s, pn, in, &cut, err);
      if (st == LADLE_OK) *out = cut != NULL ? cut : ladle_table_ref(in);
      break;
    }
    case LADLE_POP_EXCHANGE:
      if (s->eng->comm->size == 1) {
        *out = ladle_table_ref(in);
        break;
      }
      st = ladle_err_set(err, LADLE_ENOTSUP,
                         "a %s exchange across %d ranks: multi-rank execution is not built yet",
                         ladle_exchange_name(pn->xkind), s->eng->comm->size);
      break;
    default:
      st = ladle_err_set(err, LADLE_ENOTSUP, "physical operator %s", ladle_pop_name(pn->op));
  }
  ladle_table_release(in);
  free(units.file);
  free(units.rg);
  return st;
}

/* ------------------------------------------------------------ engine, result */

static ladle_status engine_execute(ladle_engine *eng, const ladle_plan *plan, ladle_result **out,
                                   ladle_error *err);

ladle_status ladle_engine_create(const ladle_engine_opts *opts, ladle_engine **out,
                                 ladle_error *err) {
  ladle_engine_opts o = {LADLE_DEVICE_CPU, 0, 0, 0, 0};
  if (opts != NULL) o = *opts;
  pthread_once(&tune_once, tune_malloc);
  if (o.device == 0) o.device = LADLE_DEVICE_CPU;
  if (o.device == LADLE_DEVICE_CUDA)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "device 'cuda': the CUDA backend is not built yet; use device 'cpu'");
  if (o.device != LADLE_DEVICE_CPU)
    return ladle_err_set(err, LADLE_EINVAL, "unknown device type %d", (int)o.device);
  /* More threads than cores this process may run on only cost memory and
   * switches for a CPU-bound engine: capped, and 0 means all of them. */
  int cores = ladle_cpu_count();
  if (o.threads < 0)
    return ladle_err_set(err, LADLE_EINVAL, "threads=%d: must be 0 (one per core) or more",
                         o.threads);
  if (o.threads == 0 || o.threads > cores) o.threads = cores;
  if (o.morsel_rows < 0) return ladle_err_set(err, LADLE_EINVAL, "morsel_rows must be >= 0");
  ladle_engine *e = calloc(1, sizeof *e);
  if (e == NULL) return LADLE_OOM(err, "engine");
  e->opts = o;
  e->morsel_rows = o.morsel_rows > 0 ? o.morsel_rows : 65536;
  e->backend = ladle_backend_cpu();
  ladle_status st = ladle_pool_create(o.threads, &e->pool, err);
  if (st == LADLE_OK) st = ladle_comm_self_create(NULL, &e->comm, err);
  if (st == LADLE_OK) st = ladle_mr_create(ladle_allocator_host(), o.memory_limit, &e->mr, err);
  if (st == LADLE_OK && (e->views = ladle_view_cache_create()) == NULL)
    st = LADLE_OOM(err, "engine view cache");
  if (st != LADLE_OK) {
    ladle_engine_destroy(e);
    return st;
  }
  *out = e;
  return LADLE_OK;
}

void ladle_engine_destroy(ladle_engine *e) {
  if (e == NULL) return;
  ladle_view_cache_destroy(e->views); /* its references to callers' frames go too */
  ladle_pool_destroy(e->pool);
  ladle_comm_destroy(e->comm);
  ladle_mr_release(e->mr);
  free(e);
}

int ladle_engine_threads(const ladle_engine *e) { return e->opts.threads; }

ladle_engine_stats ladle_engine_get_stats(const ladle_engine *e) {
  ladle_engine_stats s = {atomic_load(&((ladle_engine *)(uintptr_t)e)->row_groups_read),
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->row_groups_skipped),
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->rows_transferred),
                          ladle_mr_bytes(e->mr), ladle_mr_peak(e->mr)};
  return s;
}

ladle_status ladle_engine_execute(ladle_engine *eng, const ladle_plan *plan, ladle_result **out,
                                  ladle_error *err) {
  return ladle_engine_execute_cancellable(eng, plan, NULL, out, err);
}

ladle_status ladle_engine_execute_cancellable(ladle_engine *eng, const ladle_plan *plan,
                                              const int *cancel, ladle_result **out,
                                              ladle_error *err) {
  const int *was = ladle_cancel_set(cancel);
  ladle_mr *was_mr = ladle_mr_set(eng != NULL ? eng->mr : NULL);
  ladle_status st = engine_execute(eng, plan, out, err);
  ladle_mr_set(was_mr);
  ladle_cancel_set(was);
  return st;
}

static ladle_status engine_execute(ladle_engine *eng, const ladle_plan *plan, ladle_result **out,
                                   ladle_error *err) {
  if (eng == NULL || plan == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "execute: NULL engine or plan");
  exec_state s;
  memset(&s, 0, sizeof s);
  s.eng = eng;
  s.be = eng->backend;
  s.k.pool = eng->pool;
  s.k.morsel_rows = eng->morsel_rows;
  ladle_result *r = calloc(1, sizeof *r);
  if (r == NULL) return LADLE_OOM(err, "result");
  r->threads = eng->pool ? ladle_pool_threads(eng->pool) : 1;
  r->mr = ladle_mr_ref(eng->mr);
  ladle_pplan *pp;
  ladle_pplan_opts po = {eng->comm->size, s.be->gather_pieces != NULL, s.be->top_k_indices != NULL};
  ladle_status st = ladle_pplan_build(plan, &po, &pp, err);
  if (st != LADLE_OK) {
    ladle_result_destroy(r);
    return st;
  }
  s.pp = pp;
  s.fed = calloc(LADLE_MAX(pp->n, 1), sizeof *s.fed);
  st = s.fed != NULL ? exec_node(&s, pp->root, &r->table, NULL, err) : LADLE_OOM(err, "execute");
  for (size_t i = 0; i < s.ncache; i++) ladle_table_release(s.cache[i].table);
  free(s.cache);
  free(s.fed);
  ladle_pplan_destroy(pp);
  ladle_exec_unhoist(&s, 0);
  free(s.hoist);
  if (st != LADLE_OK) {
    ladle_result_destroy(r);
    return st;
  }
  *out = r;
  return LADLE_OK;
}

int64_t ladle_result_num_rows(const ladle_result *r) { return r->table->num_rows; }
size_t ladle_result_num_columns(const ladle_result *r) { return r->table->schema.n; }
const char *ladle_result_column_name(const ladle_result *r, size_t i) {
  return i < r->table->schema.n ? r->table->schema.names[i] : NULL;
}
ladle_dtype ladle_result_column_type(const ladle_result *r, size_t i) {
  return i < r->table->schema.n ? r->table->schema.types[i] : ladle_dtype_make(LADLE_TYPE_NULL);
}
/* A result's view-only columns (a join's pass-through strings on their way to
 * an export as views) become offsets and bytes the first time anything else
 * asks for the table. */
static pthread_mutex_t result_mu = PTHREAD_MUTEX_INITIALIZER;

ladle_status ladle_result_plain(const ladle_result *r, ladle_error *err) {
  ladle_result *m = (ladle_result *)(uintptr_t)r;
  ladle_status st = LADLE_OK;
  pthread_mutex_lock(&result_mu);
  ladle_mr *was = ladle_mr_set(r->mr);
  const ladle_table *t = m->table;
  bool any = false;
  for (size_t k = 0; k < t->nchunks && !any; k++)
    for (size_t i = 0; i < t->schema.n && !any; i++)
      any = ladle_column_view_only(&t->chunks[k].columns[i]);
  ladle_table *n = NULL;
  if (any) st = table_like(&t->schema, t->nchunks, &n, err);
  for (size_t k = 0; any && st == LADLE_OK && k < t->nchunks; k++) {
    n->chunks[k].length = t->chunks[k].length;
    for (size_t i = 0; st == LADLE_OK && i < t->schema.n; i++) {
      const ladle_column *c = &t->chunks[k].columns[i];
      if (ladle_column_view_only(c))
        st = ladle_column_from_views(c, &n->chunks[k].columns[i], err);
      else
        ladle_column_copy_ref(c, &n->chunks[k].columns[i]);
    }
  }
  if (any && st == LADLE_OK) {
    ladle_table_seal(n);
    ladle_table_release(m->table);
    m->table = n;
  } else if (any) {
    ladle_table_release(n);
  }
  ladle_mr_set(was);
  pthread_mutex_unlock(&result_mu);
  return st;
}

ladle_table *ladle_result_table(const ladle_result *r) {
  ladle_error err;
  if (ladle_result_plain(r, &err) != LADLE_OK) return NULL;
  return ladle_table_ref(r->table);
}
void ladle_result_destroy(ladle_result *r) {
  if (r == NULL) return;
  ladle_table_release(r->table);
  ladle_mr_unref(r->mr);
  free(r);
}
