/* op_filter.c — FILTER: the rows where the predicate is true (not null).
 *
 * Run on its own, it evaluates the predicate over every partition in
 * parallel and compacts each; the physical plan may ask it to compact only
 * the columns read above (pnode.need), to read the columns the predicate
 * does not from the Parquet files at the kept rows (pnode.late), or to hand
 * its input and kept rows to the join above (pnode.defer). Inside a pipeline
 * it streams: one morsel's kept rows at a time. */
#include <stdlib.h>

#include "operator.h"

/* Chunk c (ncols columns) through a predicate given as fused terms (pred) or
 * as a mask column m (c's rows, or one value when scalar): o->columns get
 * the kept rows of each column (placeholders for those need leaves out;
 * `late` ones untouched), o->length their number, and *kept (kept != NULL,
 * when not every row is kept) the kept rows as indices into c. */
static ladle_status filter_chunk(exec_state *s, const exec_pred *pred, const ladle_column *m,
                                 bool scalar, const bool *need, const bool *late, bool views,
                                 size_t ncols, const ladle_chunk *c, ladle_chunk *o, int64_t **kept,
                                 ladle_error *err) {
  bool all = false, none = false;
  if (m != NULL && scalar) {
    bool t = m->type.id != LADLE_TYPE_NULL && ladle_column_valid(m, 0) &&
             ((const uint8_t *)m->values)[0];
    all = t;
    none = !t;
  }
  int64_t *idx = NULL, n = c->length;
  uint8_t *keep = NULL; /* 0/1 per row: the mask with nulls as 0 */
  const uint8_t *kp = NULL;
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
      st = exec_pred_keep(s, pred, c, keep, err);
      if (st == LADLE_OK) st = s->be->mask_and(&s->k, NULL, c->length, false, keep, &n, err);
    } else {
      st = s->be->mask_and(&s->k, m, c->length, true, keep, &n, err);
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
      st = s->be->keep_to_indices(&s->k, kp, c->length, n, idx, err);
      kp = NULL;
      if (st != LADLE_OK) {
        free(keep);
        free(idx);
        return st;
      }
    }
  } else if (!all && !none) {
    LADLE_RETURN_NOT_OK(s->be->mask_to_indices(&s->k, m, &idx, &n, err));
    all = n == c->length;
  }
  if (kept != NULL && !all && idx == NULL) {
    /* the rows kept, for the late gathers (an index list made for the
     * gathers below is handed over after them instead) */
    int64_t *ki = malloc((size_t)(n + 1) * sizeof *ki);
    if (ki == NULL) {
      free(keep);
      return LADLE_OOM(err, "filter");
    }
    *kept = ki;
    if (!none && (st = s->be->keep_to_indices(&s->k, kp, c->length, n, ki, err)) != LADLE_OK) {
      free(keep);
      return st;
    }
  }
  for (size_t i = 0; i < ncols && st == LADLE_OK; i++) {
    if (late != NULL && late[i]) {
      continue; /* exec_filter reads it from the file at the kept rows */
    } else if (need != NULL && !need[i]) {
      /* a column only the predicate read: the parent drops it */
      exec_placeholder(&o->columns[i], none ? 0 : n);
    } else if (all)
      ladle_column_copy_ref(&c->columns[i], &o->columns[i]);
    else if (none)
      st = ladle_column_slice(&c->columns[i], 0, 0, &o->columns[i], err);
    else if (views && c->columns[i].views != NULL && c->columns[i].type.id == LADLE_TYPE_STRING)
      /* a result's string column: its views only (Polars takes views) */
      st = kp != NULL ? ladle_column_compact_views(&c->columns[i], kp, n, &o->columns[i], err)
                      : ladle_column_gather_views(&c->columns[i], idx, n, &o->columns[i], err);
    else if (kp != NULL)
      st = s->be->compact(&s->k, &c->columns[i], kp, n, &o->columns[i], err);
    else
      st = s->be->gather(&s->k, &c->columns[i], idx, n, &o->columns[i], err);
  }
  free(keep);
  o->length = none ? 0 : n;
  if (kept != NULL && !all && idx != NULL) {
    *kept = idx;
    idx = NULL;
  }
  free(idx);
  return st;
}

typedef struct filter_job {
  exec_state *s;
  const ladle_table *in;
  const bool *need;      /* NULL: every column; else those to compact */
  int64_t **kept;        /* deferred or late: per partition, the rows kept (NULL: all) */
  const bool *late;      /* columns the scan left out: read at the kept rows after */
  bool views;            /* string columns with views compacted as views only */
  const exec_pred *pred; /* the predicate as keep-byte terms, or NULL: */
  ladle_column *masks;   /* its value per partition (or one scalar) */
  bool scalar;
  ladle_table *out;
} filter_job;

static ladle_status filter_task(void *vctx, size_t k, ladle_error *err) {
  filter_job *j = vctx;
  const ladle_column *m = j->pred ? NULL : &j->masks[j->scalar ? 0 : k];
  return filter_chunk(j->s, j->pred, m, j->scalar, j->need, j->late, j->views, j->in->schema.n,
                      &j->in->chunks[k], &j->out->chunks[k], j->kept ? &j->kept[k] : NULL, err);
}

static ladle_status filter_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                 const exec_units *units, join_defer *jd, ladle_table **out,
                                 ladle_error *err) {
  const ladle_plan *p = pn->lp;
  const bool *need = pn->need, *late = units != NULL ? pn->late : NULL;
  bool defer = jd != NULL;
  ladle_column *masks = NULL;
  bool scalar = false;
  exec_pred *pred;
  size_t mark = s->nhoist;
  if (pn->global_aggs) /* the predicate's aggregations over every rank's rows */
    LADLE_RETURN_NOT_OK(exec_hoist_global_aggs(s, p->exprs, 1, in, err));
  ladle_status cst =
      exec_pred_compile(s, p->exprs[0], &in->schema, units != NULL ? pn->dict : NULL, &pred, err);
  if (cst != LADLE_OK) {
    ladle_exec_unhoist(s, mark);
    return cst;
  }
  ladle_status st = pred ? LADLE_OK : ladle_eval_chunked(s, p->exprs[0], in, &masks, &scalar, err);
  ladle_table *t;
  if (st == LADLE_OK) st = ladle_table_create(&p->schema, in->nchunks, &t, err);
  if (st == LADLE_OK) {
    filter_job j = {s, in, need, NULL, late, pn->views, pred, masks, scalar, t};
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
  ladle_exec_unhoist(s, mark);
  return st;
}

static ladle_status filter_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                               ladle_table **out, ladle_error *err) {
  exec_units units = {NULL, NULL};
  exec_side in_side = {NULL, pn->late != NULL ? &units : NULL};
  ladle_table *in;
  LADLE_RETURN_NOT_OK(exec_input(s, pn, &in, &in_side, err));
  if (s->columns) {
    ladle_status st = exec_columns_filter(s, pn, in, out, err);
    ladle_table_release(in);
    return st;
  }
  ladle_status st = filter_table(s, pn, in, units.file != NULL ? &units : NULL,
                                 side != NULL && pn->defer ? side->defer : NULL, out, err);
  ladle_table_release(in);
  free(units.file);
  free(units.rg);
  return st;
}

/* ------------------------------------------------------------- streaming */

static void filter_needs(const ladle_pnode *pn, const bool *need, bool *in_need) {
  size_t n = pn->schema->n;
  for (size_t c = 0; c < n; c++) in_need[c] |= need == NULL || need[c];
  ladle_exec_mark_columns(pn->lp->exprs[0], in_need, n);
}

static ladle_status filter_open(exec_state *s, const ladle_pnode *pn, void **state,
                                ladle_error *err) {
  exec_pred *pred = NULL;
  LADLE_RETURN_NOT_OK(
      exec_pred_compile(s, pn->lp->exprs[0], &pn->lp->inputs[0]->schema, NULL, &pred, err));
  *state = pred;
  return LADLE_OK;
}

/* Morsel `in` through pn's predicate: its fused terms `pred`, or else (a
 * row-wise predicate: the planner's condition) its mask over the morsel;
 * `late` and `kept` as filter_chunk's. */
static ladle_status filter_one(exec_state *s, const ladle_pnode *pn, const exec_pred *pred,
                               const bool *need, const bool *late, const ladle_chunk *in,
                               ladle_chunk *out, int64_t **kept, ladle_error *err) {
  if (pred != NULL)
    return filter_chunk(s, pred, NULL, false, need, late, pn->views, pn->schema->n, in, out, kept,
                        err);
  ladle_column m;
  LADLE_RETURN_NOT_OK(ladle_eval_chunk(s, pn->lp->exprs[0], in, &m, err));
  ladle_status st = filter_chunk(s, NULL, &m, m.length == 1 && in->length != 1, need, late,
                                 pn->views, pn->schema->n, in, out, kept, err);
  ladle_column_release(&m);
  return st;
}

static ladle_status filter_morsel(exec_state *s, const ladle_pnode *pn, const void *state,
                                  const bool *need, const ladle_chunk *in, ladle_chunk *out,
                                  ladle_error *err) {
  return filter_one(s, pn, state, need, NULL, in, out, NULL, err);
}

static void filter_close(void *state) {
  if (state != NULL) exec_pred_destroy(state);
}

/* ------------------------------------------------------------- made source */

/* A late filter over a Parquet scan as its pipeline's made source: for each
 * row group, the predicate's columns decoded (its dictionary terms as keep
 * bytes), the predicate, and the other columns read from the file at the
 * kept rows, all in the task that pushes the morsel on. */
typedef struct late_source {
  const ladle_pnode *pn;
  exec_pq_stream *m;
  exec_pred *pred; /* NULL: a row-wise Boolean, its mask per morsel */
  int64_t rows;    /* the scan's: the height a row-wise predicate's column has */
} late_source;

static void late_source_close(void *ctx) {
  late_source *ls = ctx;
  if (ls == NULL) return;
  exec_pred_destroy(ls->pred);
  exec_pq_stream_close(ls->m);
  free(ls);
}

static ladle_status late_make(exec_state *s, void *ctx, size_t u, const bool *need,
                              ladle_chunk *out, ladle_error *err) {
  const late_source *ls = ctx;
  const ladle_pnode *pn = ls->pn;
  size_t n = pn->schema->n;
  ladle_chunk c = {0, calloc(LADLE_MAX(n, 1), sizeof(ladle_column)), 0};
  bool *keep_need = calloc(LADLE_MAX(n, 1), sizeof *keep_need);
  int64_t *kept = NULL;
  ladle_status st = c.columns && keep_need ? LADLE_OK : LADLE_OOM(err, "filter");
  /* what is read of the output: what the pipeline reads, of what the plan
   * said the parent reads */
  for (size_t i = 0; st == LADLE_OK && i < n; i++)
    keep_need[i] = (need == NULL || need[i]) && (pn->need == NULL || pn->need[i]);
  if (st == LADLE_OK) st = exec_pq_stream_unit(s, ls->m, u, NULL, &c, err);
  c.table_rows = ls->rows; /* as over the scan's table */
  if (st == LADLE_OK) st = filter_one(s, pn, ls->pred, keep_need, pn->late, &c, out, &kept, err);
  for (size_t i = 0; st == LADLE_OK && i < n; i++) {
    if (!pn->late[i]) continue;
    if (!keep_need[i])
      exec_placeholder(&out->columns[i], out->length);
    else
      st = exec_pq_stream_late(s, ls->m, u, i, kept, out->length, pn->views, &out->columns[i], err);
  }
  if (c.columns != NULL) {
    for (size_t i = 0; i < n; i++) ladle_column_release(&c.columns[i]);
    free(c.columns);
  }
  free(kept);
  free(keep_need);
  if (st != LADLE_OK)
    for (size_t i = 0; i < n; i++) ladle_column_release(&out->columns[i]);
  return st;
}

static ladle_status filter_source(exec_state *s, const ladle_pnode *pn, exec_source *out,
                                  ladle_error *err) {
  memset(out, 0, sizeof *out);
  const ladle_pnode *scan = pn->inputs[0];
  if (!pn->stream_src || pn->late == NULL || pn->defer || s->columns ||
      scan->op != LADLE_POP_SCAN_PARQUET)
    return LADLE_OK;
  late_source *ls = calloc(1, sizeof *ls);
  if (ls == NULL) return LADLE_OOM(err, "filter");
  ls->pn = pn;
  /* the predicate first: as fused terms, or else row-wise over each morsel
   * (without dictionary terms); one that may read every row keeps the filter
   * whole, and the scan is then not opened (nor counted) twice */
  ladle_schema in; /* the scan's output: dictionary columns as keep bytes */
  ladle_status st = ladle_schema_copy(scan->schema, &in, err);
  if (st == LADLE_OK) {
    for (size_t k = 0; pn->dict != NULL && k < in.n; k++)
      if (pn->dict[k]) in.types[k] = ladle_dtype_make(LADLE_TYPE_BOOL);
    st = exec_pred_compile(s, pn->lp->exprs[0], &in, pn->dict, &ls->pred, err);
    ladle_schema_release(&in);
  }
  const ladle_bexpr *e = pn->lp->exprs[0];
  bool rows =
      ls->pred != NULL || (pn->dict == NULL && exec_row_wise(e) && e->type.id == LADLE_TYPE_BOOL);
  if (st == LADLE_OK && rows) st = exec_pq_stream_open(s, scan, &ls->m, out, err);
  if (st != LADLE_OK || ls->m == NULL) {
    late_source_close(ls);
    memset(out, 0, sizeof *out);
    return st;
  }
  ls->rows = out->rows;
  out->make = late_make;
  out->ctx = ls;
  out->close = late_source_close;
  return LADLE_OK;
}

static const exec_stream_op filter_stream = {filter_needs, filter_open, filter_morsel,
                                             filter_close};

const exec_operator exec_op_filter = {LADLE_POP_FILTER, filter_run, &filter_stream, NULL,
                                      filter_source};
