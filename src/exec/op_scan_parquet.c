/* op_scan_parquet.c — SCAN_PARQUET: the Parquet scan node: its builder (reads and checks every
 * footer) and its execution (one partition per (file, row group); pages decoded in
 * parallel over row groups and columns). With several ranks each reads a contiguous
 * share of the (file, row group) units, balanced by rows and computed from the footers
 * alone, so that every rank finds the same split and the ranks' rows in rank order are
 * the one-rank scan's. */
#include <assert.h>
#include <stdio.h>

#include "../io/parquet/parquet.h"
#include "operator.h"

typedef struct pq_filter {
  char *column;
  ladle_binary_op op;
  int kind;
  int64_t i64;
  double f64;
  char *str;
  size_t str_len;
  size_t *col_index; /* per file, or SIZE_MAX when the file lacks it */
} pq_filter;

typedef struct pq_source {
  size_t nfilters;
  pq_filter *filters;
  size_t nfiles;
  ladle_pq_file **files;
  size_t ncols;
  size_t *col_index;           /* per file: ncols indices (files[i] -> col_index[i * ncols + k]) */
  int64_t n_rows;              /* < 0: all */
  size_t unit_begin, unit_end; /* the row groups read, numbered over every file in order */
} pq_source;

/* Is row group number u (over every file's row groups in order) one the scan reads? */
static bool pq_selected(const pq_source *s, size_t u) {
  return u >= s->unit_begin && u < s->unit_end;
}

static void pq_source_free(void *v) {
  pq_source *s = v;
  if (s == NULL) return;
  for (size_t i = 0; s->filters && i < s->nfilters; i++) {
    free(s->filters[i].column);
    free(s->filters[i].str);
    free(s->filters[i].col_index);
  }
  free(s->filters);
  for (size_t i = 0; i < s->nfiles; i++) ladle_pq_close(s->files[i]);
  free(s->files);
  free(s->col_index);
  free(s);
}

ladle_status ladle_plan_scan_parquet(size_t n_paths, const char *const *paths,
                                     const ladle_parquet_opts *opts, ladle_plan **out,
                                     ladle_error *err) {
  if (n_paths == 0) return ladle_err_set(err, LADLE_EINVAL, "scan_parquet: no files");
  ladle_parquet_opts o;
  memset(&o, 0, sizeof o);
  if (opts != NULL) o = *opts;
  pq_source *s = calloc(1, sizeof *s);
  ladle_plan *p = ladle_plan_node_new(LADLE_NODE_SCAN_PARQUET, 0);
  if (s == NULL || p == NULL) {
    free(s);
    ladle_plan_destroy(p);
    return LADLE_OOM(err, "parquet scan");
  }
  p->source = s;
  p->source_free = pq_source_free;
  s->n_rows = o.n_rows_set ? LADLE_MAX(o.n_rows, 0) : -1;
  ladle_status st = LADLE_OK;
  s->files = calloc(n_paths, sizeof *s->files);
  if (s->files == NULL) st = LADLE_OOM(err, "parquet scan");
  for (size_t i = 0; st == LADLE_OK && i < n_paths; i++) {
    st = ladle_pq_open(paths[i], &s->files[i], err);
    if (st == LADLE_OK) s->nfiles++;
  }
  size_t nunits = 0;
  for (size_t i = 0; st == LADLE_OK && i < s->nfiles; i++) nunits += s->files[i]->nrow_groups;
  s->unit_begin = 0;
  s->unit_end = SIZE_MAX;
  if (st == LADLE_OK && o.units_set) {
    if (o.unit_begin > o.unit_end || o.unit_end > nunits)
      st = ladle_err_set(err, LADLE_EINVAL,
                         "scan_parquet: row groups [%zu, %zu) asked of %zu in %zu file(s) (%s%s)",
                         o.unit_begin, o.unit_end, nunits, s->nfiles, paths[0],
                         s->nfiles > 1 ? ", ..." : "");
    s->unit_begin = o.unit_begin;
    s->unit_end = o.unit_end;
  }
  if (st != LADLE_OK) {
    ladle_plan_destroy(p);
    return st;
  }
  const ladle_pq_file *f0 = s->files[0];
  s->ncols = o.n_columns > 0 ? o.n_columns : f0->ncolumns;
  s->col_index = calloc(LADLE_MAX(s->ncols * s->nfiles, 1), sizeof *s->col_index);
  st = s->col_index ? ladle_schema_init(&p->schema, s->ncols, err) : LADLE_OOM(err, "parquet scan");
  for (size_t f = 0; st == LADLE_OK && f < s->nfiles; f++) {
    const ladle_pq_file *file = s->files[f];
    for (size_t k = 0; st == LADLE_OK && k < s->ncols; k++) {
      const char *name = o.n_columns > 0 ? o.columns[k] : f0->columns[k].name;
      size_t j = 0;
      while (j < file->ncolumns && strcmp(file->columns[j].name, name) != 0) j++;
      if (j == file->ncolumns && f > 0 && o.insert_missing_columns) {
        s->col_index[f * s->ncols + k] = SIZE_MAX; /* all null in this file */
        continue;
      }
      if (j == file->ncolumns) {
        st = ladle_err_set(err, LADLE_ENOCOL, "%s: no column '%s'%s", file->path, name,
                           f > 0 ? " (Polars' missing_columns='insert' makes it null there)" : "");
        break;
      }
      const ladle_pq_column *c = &file->columns[j];
      if (!c->supported) {
        st = ladle_err_set(err, LADLE_ENOTSUP, "%s: column '%s': %s", file->path, name, c->why);
        break;
      }
      if (f == 0) {
        st = ladle_schema_set(&p->schema, k, name, c->type, err);
      } else if (!ladle_dtype_equal(c->type, p->schema.types[k])) {
        char b1[64], b2[64];
        st = ladle_err_set(err, LADLE_ETYPE, "%s: column '%s' is %s, but %s in %s", file->path,
                           name, ladle_dtype_name(c->type, b1, sizeof b1),
                           ladle_dtype_name(p->schema.types[k], b2, sizeof b2), f0->path);
      }
      s->col_index[f * s->ncols + k] = j;
    }
  }
  for (size_t f = 1; st == LADLE_OK && o.raise_on_extra_columns && f < s->nfiles; f++) {
    const ladle_pq_file *file = s->files[f];
    for (size_t j = 0; st == LADLE_OK && j < file->ncolumns; j++) {
      size_t i = 0;
      while (i < f0->ncolumns && strcmp(f0->columns[i].name, file->columns[j].name) != 0) i++;
      if (i == f0->ncolumns)
        st = ladle_err_set(err, LADLE_EINVAL,
                           "%s: extra column '%s' that %s does not have (Polars' "
                           "extra_columns='ignore' drops it)",
                           file->path, file->columns[j].name, f0->path);
    }
  }
  /* statistics filters: copy them and find their column in each file */
  if (st == LADLE_OK && o.n_filters > 0) {
    s->filters = calloc(o.n_filters, sizeof *s->filters);
    if (s->filters == NULL) st = LADLE_OOM(err, "parquet filters");
    for (size_t k = 0; st == LADLE_OK && k < o.n_filters; k++) {
      const ladle_pq_filter *in = &o.filters[k];
      pq_filter *fl = &s->filters[k];
      s->nfilters++;
      fl->op = in->op;
      fl->kind = in->kind;
      fl->i64 = in->i64;
      fl->f64 = in->f64;
      fl->column = ladle_strdup(in->column);
      fl->col_index = malloc(s->nfiles * sizeof *fl->col_index);
      if (in->kind == 2) {
        fl->str = malloc(in->str_len + 1);
        if (fl->str) memcpy(fl->str, in->str, in->str_len);
        fl->str_len = in->str_len;
      }
      if (fl->column == NULL || fl->col_index == NULL || (in->kind == 2 && fl->str == NULL)) {
        st = LADLE_OOM(err, "parquet filters");
        break;
      }
      for (size_t f = 0; f < s->nfiles; f++) {
        const ladle_pq_file *file = s->files[f];
        fl->col_index[f] = SIZE_MAX;
        for (size_t j = 0; j < file->ncolumns; j++)
          if (strcmp(file->columns[j].name, fl->column) == 0 && file->columns[j].supported)
            fl->col_index[f] = j;
      }
    }
  }
  if (st != LADLE_OK) {
    ladle_plan_destroy(p);
    return st;
  }
  *out = p;
  return LADLE_OK;
}

/* Can any row of row group rg satisfy the filter, going by the chunk statistics?
 * Conservative: true whenever the statistics cannot tell. */
static bool may_match(const ladle_pq_file *f, size_t rg, const pq_filter *fl, size_t col) {
  if (col == SIZE_MAX) return true;
  const ladle_pq_column *pc = &f->columns[col];
  const ladle_pq_chunk_meta *m = &f->row_groups[rg].columns[col];
  int64_t nrows = f->row_groups[rg].num_rows;
  const ladle_pq_stats *s = &m->stats;
  if (s->has_null_count && nrows > 0 && s->null_count == nrows) return false; /* all null */
  if (!s->has_min || !s->has_max) return true;
  int c_min, c_max; /* sign of (min - v), (max - v) */
  ladle_type_id t = pc->type.id;
  if (fl->kind == 0) {
    if (!(ladle_type_is_integer(t) && ladle_type_is_signed(t)) && t != LADLE_TYPE_DATE &&
        t != LADLE_TYPE_DATETIME)
      return true;
    int64_t lo, hi;
    if (pc->physical == LADLE_PQ_INT32 && s->min_len == 4 && s->max_len == 4) {
      int32_t a, b;
      memcpy(&a, s->min, 4);
      memcpy(&b, s->max, 4);
      lo = a;
      hi = b;
    } else if (pc->physical == LADLE_PQ_INT64 && s->min_len == 8 && s->max_len == 8) {
      memcpy(&lo, s->min, 8);
      memcpy(&hi, s->max, 8);
    } else {
      return true;
    }
    c_min = lo < fl->i64 ? -1 : lo > fl->i64;
    c_max = hi < fl->i64 ? -1 : hi > fl->i64;
  } else if (fl->kind == 1) {
    if (!ladle_type_is_float(t)) return true;
    /* NaN sorts above everything in Polars and is absent from statistics: a
     * greater-than test can always match */
    if (fl->op == LADLE_OP_GT || fl->op == LADLE_OP_GE || fl->f64 != fl->f64) return true;
    double lo, hi;
    if (pc->physical == LADLE_PQ_FLOAT && s->min_len == 4 && s->max_len == 4) {
      float a, b;
      memcpy(&a, s->min, 4);
      memcpy(&b, s->max, 4);
      lo = a;
      hi = b;
    } else if (pc->physical == LADLE_PQ_DOUBLE && s->min_len == 8 && s->max_len == 8) {
      memcpy(&lo, s->min, 8);
      memcpy(&hi, s->max, 8);
    } else {
      return true;
    }
    if (lo != lo || hi != hi) return true;
    c_min = lo < fl->f64 ? -1 : lo > fl->f64;
    c_max = hi < fl->f64 ? -1 : hi > fl->f64;
  } else {
    if (t != LADLE_TYPE_STRING) return true;
    int r1 = memcmp(s->min, fl->str, (size_t)LADLE_MIN((size_t)s->min_len, fl->str_len));
    c_min = r1 != 0 ? (r1 < 0 ? -1 : 1)
                    : ((size_t)s->min_len < fl->str_len ? -1 : (size_t)s->min_len > fl->str_len);
    int r2 = memcmp(s->max, fl->str, (size_t)LADLE_MIN((size_t)s->max_len, fl->str_len));
    c_max = r2 != 0 ? (r2 < 0 ? -1 : 1)
                    : ((size_t)s->max_len < fl->str_len ? -1 : (size_t)s->max_len > fl->str_len);
  }
  switch (fl->op) {
    case LADLE_OP_LT:
      return c_min < 0;
    case LADLE_OP_LE:
      return c_min <= 0;
    case LADLE_OP_GT:
      return c_max > 0;
    case LADLE_OP_GE:
      return c_max >= 0;
    case LADLE_OP_EQ:
      return c_min <= 0 && c_max >= 0;
    default:
      return true;
  }
}

int64_t ladle_scan_parquet_rows(const ladle_plan *p);
int64_t ladle_scan_parquet_rows(const ladle_plan *p) {
  const pq_source *s = p->source;
  int64_t rows = 0;
  size_t u = 0;
  for (size_t f = 0; f < s->nfiles; f++)
    for (size_t g = 0; g < s->files[f]->nrow_groups; g++, u++)
      if (pq_selected(s, u)) rows += s->files[f]->row_groups[g].num_rows;
  return s->n_rows >= 0 ? LADLE_MIN(rows, s->n_rows) : rows;
}

typedef struct read_job {
  exec_state *st;
  const pq_source *s;
  size_t *unit_file, *unit_rg; /* per output chunk */
  ladle_table *t;
  bool views;              /* the scan is the result: strings as views (ladle_column.views) */
  const bool *late_cols;   /* these columns not at all (read late by the filter) */
  exec_pred **dict;        /* per column: the filter's terms on it, evaluated on the
                              dictionary into keep bytes (NULL: none) */
  const ladle_schema *in;  /* the scan's schema (dictionary columns are strings) */
  size_t *order;           /* the tasks, costliest first */
  struct read_part *parts; /* with few tasks: the pool's tasks, parts of them */
  ladle_column *pieces;    /* per part: its rows (a column's read) */
} read_job;

/* Part of decoding task `task`: rows [lo, hi) of its chunk, whole pages
 * (hi < 0: the task whole, not split). */
typedef struct read_part {
  size_t task;
  int64_t lo, hi;
} read_part;

typedef struct dict_eval_ctx {
  exec_state *st;
  const exec_pred *pred;
  const ladle_schema *in;
  size_t col;
} dict_eval_ctx;

/* keep[0..c.length) = the terms of column `col` over `c`, a chunk of the
 * scan's schema holding only that column (the others placeholders); ctx is a
 * dict_eval_ctx (a ladle_pq_dict_eval, over a chunk's dictionary). */
static ladle_status dict_keep(void *ctx, const ladle_column *c, uint8_t *keep, ladle_error *err) {
  const dict_eval_ctx *d = ctx;
  size_t n = d->in->n;
  ladle_column *cols = calloc(LADLE_MAX(n, 1), sizeof *cols);
  if (cols == NULL) return LADLE_OOM(err, "dictionary predicate");
  for (size_t i = 0; i < n; i++)
    if (i != d->col) exec_placeholder(&cols[i], c->length);
  cols[d->col] = *c;
  ladle_chunk ch = {.columns = cols, .length = c->length};
  ladle_status st = exec_pred_keep(d->st, d->pred, &ch, keep, err);
  free(cols);
  return st;
}

/* Column k (file column col) of row group rg of file f as the keep bytes of
 * its dictionary terms `pred` (a Boolean column without nulls) into *o:
 * through the chunk's dictionary when every page is dictionary-encoded, else
 * over the column read whole; in: the scan's schema. */
static ladle_status dict_read(exec_state *st, const pq_source *s, size_t f, size_t rg, size_t k,
                              size_t col, const exec_pred *pred, const ladle_schema *in,
                              ladle_column *o, ladle_error *err) {
  int64_t n = s->files[f]->row_groups[rg].num_rows;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n, false, 0, o, err));
  dict_eval_ctx d = {st, pred, in, k};
  bool whole = false;
  ladle_status rc = LADLE_OK;
  if (col != SIZE_MAX)
    rc = ladle_pq_read_chunk_dict_keep(s->files[f], rg, col, dict_keep, &d,
                                       LADLE_COL_MUT(o, uint8_t), &whole, err);
  atomic_fetch_add(whole ? &st->eng->dict_chunks : &st->eng->dict_chunks_rowwise, 1);
  if (rc == LADLE_OK && !whole) { /* row by row */
    ladle_column c;
    rc = col == SIZE_MAX ? ladle_column_nulls(in->types[k], n, &c, err)
                         : ladle_pq_read_chunk(s->files[f], rg, col, &c, err);
    if (rc == LADLE_OK) {
      rc = dict_keep(&d, &c, LADLE_COL_MUT(o, uint8_t), err);
      ladle_column_release(&c);
    }
  }
  if (rc != LADLE_OK) ladle_column_release(o);
  return rc;
}

/* What decoding task i (unit i / ncols, column i % ncols) should cost, roughly:
 * half a unit per decompressed byte of the chunk, 8 per row for the output (the
 * sizes in the footer only order the tasks; nothing is allocated from them). */
static int64_t task_cost(const read_job *j, size_t i) {
  size_t u = i / j->s->ncols, k = i % j->s->ncols, f = j->unit_file[u];
  size_t col = j->s->col_index[f * j->s->ncols + k];
  const ladle_pq_row_group *g = &j->s->files[f]->row_groups[j->unit_rg[u]];
  if (col == SIZE_MAX) return 0;
  const ladle_pq_chunk_meta *m = &g->columns[col];
  int64_t bytes =
      m->total_uncompressed_size > 0 ? m->total_uncompressed_size : m->total_compressed_size;
  return LADLE_MAX(bytes, 0) / 2 + 8 * g->num_rows;
}

/* LADLE_SPLIT_PAGES=0: a scan of few row groups reads each column chunk
 * on one thread (for A/B runs); =1: every chunk of several pages splits,
 * into 4 parts at most, whatever the tasks and threads (for tests); unset:
 * split_tasks decides. */
static int split_pages_mode(void) {
  const char *v = getenv("LADLE_SPLIT_PAGES");
  if (v != NULL && strcmp(v, "0") == 0) return 0;
  if (v != NULL && strcmp(v, "1") == 0) return 1;
  return -1;
}

typedef struct costed_task {
  int64_t cost;
  size_t i;
} costed_task;

static int by_cost_desc(const void *a, const void *b) {
  const costed_task *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
  return (x->i > y->i) - (x->i < y->i);
}

static ladle_status read_task(void *vctx, size_t i, ladle_error *err);

/* Part i of a task split by pages: a dictionary column's keep bytes at its
 * rows, else its rows into pieces[i] (joined when every part is done). */
static ladle_status read_part_task(void *vctx, size_t i, ladle_error *err) {
  read_job *j = vctx;
  const read_part *pt = &j->parts[i];
  if (pt->hi < 0) return read_task(vctx, pt->task, err);
  size_t u = pt->task / j->s->ncols, k = pt->task % j->s->ncols;
  size_t f = j->unit_file[u], rg = j->unit_rg[u], col = j->s->col_index[f * j->s->ncols + k];
  bool keep = j->dict != NULL && j->dict[k] != NULL;
  ladle_column *c = &j->pieces[i];
  LADLE_RETURN_NOT_OK(
      ladle_pq_read_chunk_rows(j->s->files[f], rg, col, j->views && !keep, pt->lo, pt->hi, c, err));
  if (!keep) return LADLE_OK;
  dict_eval_ctx d = {j->st, j->dict[k], j->in, k};
  ladle_status st =
      dict_keep(&d, c, LADLE_COL_MUT(&j->t->chunks[u].columns[k], uint8_t) + pt->lo, err);
  ladle_column_release(c);
  return st;
}

static ladle_status read_task(void *vctx, size_t i, ladle_error *err) {
  read_job *j = vctx;
  if (j->order != NULL) i = j->order[i];
  size_t u = i / j->s->ncols, k = i % j->s->ncols;
  size_t f = j->unit_file[u], col = j->s->col_index[f * j->s->ncols + k];
  if (j->dict != NULL && j->dict[k] != NULL)
    return dict_read(j->st, j->s, f, j->unit_rg[u], k, col, j->dict[k], j->in,
                     &j->t->chunks[u].columns[k], err);
  if (col == SIZE_MAX)
    return ladle_column_nulls(j->t->schema.types[k],
                              j->s->files[f]->row_groups[j->unit_rg[u]].num_rows,
                              &j->t->chunks[u].columns[k], err);
  if (j->late_cols != NULL && j->late_cols[k]) { /* read after the filter's predicate */
    exec_placeholder(&j->t->chunks[u].columns[k], j->t->chunks[u].length);
    return LADLE_OK;
  }
  return (j->views ? ladle_pq_read_chunk_views : ladle_pq_read_chunk)(
      j->s->files[f], j->unit_rg[u], col, &j->t->chunks[u].columns[k], err);
}

/* With fewer decoding tasks than twice the threads (a dimension table of a
 * row group or two: TPC-H's part, supplier and customer at SF1), the costly
 * ones split by their chunks' pages into j->parts, so that every thread
 * decompresses some: a column read as a predicate's keep bytes (its pages
 * not all dictionary-encoded) fills its rows of them; any other gets pieces
 * that split_join puts together. The tasks stay in j->order's order. */
static ladle_status split_tasks(read_job *j, size_t ntasks, int threads, bool force, size_t *nparts,
                                ladle_error *err) {
  /* a task splits into as many parts as its cost holds a thread's share of
   * the whole scan's (a thread's share or less: not split) */
  double total = 0;
  for (size_t i = 0; i < ntasks; i++) total += (double)task_cost(j, i);
  size_t cap = force ? 4 * ntasks : ntasks + (size_t)threads, n = 0;
  j->parts = malloc(cap * sizeof *j->parts);
  j->pieces = calloc(cap, sizeof *j->pieces);
  if (j->parts == NULL || j->pieces == NULL) return LADLE_OOM(err, "parquet scan");
  ladle_status rc = LADLE_OK;
  for (size_t x = 0; rc == LADLE_OK && x < ntasks; x++) {
    size_t i = j->order != NULL ? j->order[x] : x;
    size_t u = i / j->s->ncols, k = i % j->s->ncols, f = j->unit_file[u];
    size_t col = j->s->col_index[f * j->s->ncols + k];
    bool keep = j->dict != NULL && j->dict[k] != NULL;
    int64_t *at = NULL;
    size_t np = 0;
    bool all_dict = false;
    double share = total > 0 ? (double)task_cost(j, i) * threads / total : 0;
    if (col != SIZE_MAX && (keep || j->late_cols == NULL || !j->late_cols[k]) &&
        (force || share >= 2))
      rc = ladle_pq_chunk_page_rows(j->s->files[f], j->unit_rg[u], col, &at, &np, &all_dict);
    size_t m = LADLE_MIN(np, force ? 4 : (size_t)share);
    m = LADLE_MIN(m, cap - n - (ntasks - x - 1)); /* room left for the tasks after it */
    /* (a dictionary-encoded column's keep bytes come from its dictionary: cheap) */
    if (rc != LADLE_OK || m < 2 || (keep && all_dict)) {
      j->parts[n++] = (read_part){i, 0, -1};
      free(at);
      continue;
    }
    int64_t rows = j->s->files[f]->row_groups[j->unit_rg[u]].num_rows;
    atomic_fetch_add(&j->st->eng->chunks_split, 1);
    if (keep) {
      rc = ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), rows, false, 0,
                              &j->t->chunks[u].columns[k], err);
      atomic_fetch_add(&j->st->eng->dict_chunks_rowwise, 1);
    }
    for (size_t q = 0; rc == LADLE_OK && q < m; q++) {
      size_t a = q * np / m, b = (q + 1) * np / m;
      j->parts[n++] = (read_part){i, at[a], b < np ? at[b] : rows};
    }
    free(at);
  }
  *nparts = n;
  j->order = NULL; /* the parts are in its order */
  return rc;
}

/* The pieces of the tasks split_tasks split (keep bytes excepted) joined
 * into their columns. */
static ladle_status split_join(read_job *j, size_t nparts, ladle_error *err) {
  ladle_status rc = LADLE_OK;
  for (size_t a = 0; a < nparts;) {
    size_t b = a + 1;
    while (b < nparts && j->parts[b].task == j->parts[a].task) b++;
    size_t i = j->parts[a].task, u = i / j->s->ncols, k = i % j->s->ncols;
    if (rc == LADLE_OK && j->parts[a].hi >= 0 && (j->dict == NULL || j->dict[k] == NULL))
      rc = ladle_column_concat_pool(&j->pieces[a], b - a, j->st->k.pool,
                                    &j->t->chunks[u].columns[k], err);
    a = b;
  }
  return rc;
}

/* The first global row of rank `rank`'s share when `total` rows are dealt to
 * `size` ranks: rank * total / size, exactly and without overflow (with
 * total = q * size + m it is rank * q + rank * m / size, and rank * m < size^2).
 * Rank r's share is [exec_rank_bound(total, r, size), exec_rank_bound(total,
 * r + 1, size)); the CSV scan deals its rows by the same bounds. */
int64_t exec_rank_bound(int64_t total, int rank, int size);
int64_t exec_rank_bound(int64_t total, int rank, int size) {
  assert(total >= 0 && size > 0 && rank >= 0 && rank <= size);
  int64_t q = total / size, m = total % size;
  return (int64_t)rank * q + (int64_t)rank * m / size;
}

/* The units (file, row group) this rank reads, in order: its share, stopping
 * at the global n_rows, less those the statistics rule out (*skipped of
 * them); *limit: of the global first n_rows, how many are in these units
 * (without skipping they follow each other), or -1. */
static ladle_status pq_units(const exec_state *st, const pq_source *s, size_t **unit_file,
                             size_t **unit_rg, size_t *nunits, size_t *skipped, int64_t *limit,
                             ladle_error *err) {
  /* this rank's share: the units whose first row's global position (rows in
   * every unit before it, all files in order, before any skipping) is in
   * [lo, hi); one rank: all of them */
  size_t all = 0;
  int64_t total = 0;
  for (size_t f = 0; f < s->nfiles; f++)
    for (size_t g = 0; g < s->files[f]->nrow_groups; g++, all++)
      if (pq_selected(s, all)) total += s->files[f]->row_groups[g].num_rows;
  const ladle_comm *comm = st->eng->comm;
  int64_t lo = 0, hi = INT64_MAX;
  if (comm != NULL && comm->size > 1) {
    lo = exec_rank_bound(total, comm->rank, comm->size);
    hi = exec_rank_bound(total, comm->rank + 1, comm->size);
  }
  size_t *uf = malloc(LADLE_MAX(all, 1) * sizeof *uf), *ur = malloc(LADLE_MAX(all, 1) * sizeof *ur);
  if (uf == NULL || ur == NULL) {
    free(uf);
    free(ur);
    return LADLE_OOM(err, "parquet units");
  }
  size_t n = 0;
  *skipped = 0;
  int64_t at = 0, first = -1; /* the unit's global first row; the first read's */
  size_t u = 0;
  for (size_t f = 0; f < s->nfiles; f++)
    for (size_t g = 0; g < s->files[f]->nrow_groups; g++, u++) {
      if (!pq_selected(s, u)) continue; /* not asked for: no rows, no position */
      int64_t start = at;
      at += s->files[f]->row_groups[g].num_rows;
      if (start < lo || start >= hi) continue; /* another rank's */
      if (s->n_rows >= 0 && start >= s->n_rows) continue;
      if (s->files[f]->row_groups[g].num_rows == 0) continue;
      bool keep = true;
      /* skipping changes which rows n_rows keeps, so only without n_rows */
      for (size_t k = 0; keep && s->n_rows < 0 && k < s->nfilters; k++)
        keep = may_match(s->files[f], g, &s->filters[k], s->filters[k].col_index[f]);
      if (!keep) {
        ++*skipped;
        continue;
      }
      if (first < 0) first = start;
      uf[n] = f;
      ur[n++] = g;
    }
  *unit_file = uf;
  *unit_rg = ur;
  *nunits = n;
  *limit = s->n_rows >= 0 && first >= 0 ? s->n_rows - first : -1;
  return LADLE_OK;
}

/* A scan's units found once (pq_units), for a read of some of its columns
 * after another's (the device scan's host part and fallbacks). */
typedef struct pq_unitset {
  size_t *uf, *ur, n;
  int64_t limit;
} pq_unitset;

static ladle_status scan_read(exec_state *st, const ladle_pnode *pn, const bool *skip, bool dict,
                              const pq_unitset *given, ladle_table **out, exec_units *units,
                              ladle_error *err);

ladle_status ladle_exec_scan_parquet(exec_state *st, const ladle_pnode *pn, ladle_table **out,
                                     exec_units *units, ladle_error *err) {
  return scan_read(st, pn, pn->late, true, NULL, out, units, err);
}

/* The scan's units read (`given`, else found and counted here), the columns
 * `skip` marks (NULL: none) left as placeholders; with `units` (not with
 * `given`), the units go there, and with `dict` too a late filter's
 * dictionary columns are read as its keep bytes. */
static ladle_status scan_read(exec_state *st, const ladle_pnode *pn, const bool *skip, bool dict,
                              const pq_unitset *given, ladle_table **out, exec_units *units,
                              ladle_error *err) {
  const ladle_plan *p = pn->lp;
  const pq_source *s = p->source;
  size_t *uf, *ur, n, skipped;
  int64_t limit;
  if (given != NULL) {
    uf = given->uf;
    ur = given->ur;
    n = given->n;
    limit = given->limit;
    units = NULL;
  } else {
    LADLE_RETURN_NOT_OK(pq_units(st, s, &uf, &ur, &n, &skipped, &limit, err));
    atomic_fetch_add(&st->eng->row_groups_skipped, skipped);
    atomic_fetch_add(&st->eng->row_groups_read, n);
  }
  ladle_table *t;
  ladle_status rc = ladle_table_create(&p->schema, n, &t, err);
  if (rc == LADLE_OK) {
    for (size_t u = 0; u < n; u++)
      t->chunks[u].length = s->files[uf[u]]->row_groups[ur[u]].num_rows;
    read_job j = {.st = st, .s = s, .unit_file = uf, .unit_rg = ur, .t = t, .views = pn->views};
    j.late_cols = skip;
    j.in = &p->schema;
    /* a late filter's dictionary columns (only for it: it reads the keep bytes) */
    if (dict && units != NULL && pn->dict != NULL) {
      j.dict = calloc(LADLE_MAX(s->ncols, 1), sizeof *j.dict);
      if (j.dict == NULL) rc = LADLE_OOM(err, "parquet dictionary predicates");
      for (size_t k = 0; rc == LADLE_OK && k < s->ncols; k++)
        if (pn->dict[k]) {
          rc = exec_pred_compile_dict(st, pn->dict_pred, &p->schema, k, &j.dict[k], err);
          t->schema.types[k] = ladle_dtype_make(LADLE_TYPE_BOOL);
        }
    }
    /* costliest first, so that no thread starts a large chunk while the others
     * run out of work (without the order the scan ends on the last row group's
     * widest column) */
    size_t ntasks = n * s->ncols;
    costed_task *ct = malloc(LADLE_MAX(ntasks, 1) * sizeof *ct);
    j.order = malloc(LADLE_MAX(ntasks, 1) * sizeof *j.order);
    if (ct != NULL && j.order != NULL) {
      for (size_t i = 0; i < ntasks; i++) ct[i] = (costed_task){task_cost(&j, i), i};
      qsort(ct, ntasks, sizeof *ct, by_cost_desc);
      for (size_t i = 0; i < ntasks; i++) j.order[i] = ct[i].i;
    } else {
      free(j.order); /* without memory for the order: in plain order */
      j.order = NULL;
    }
    free(ct);
    int threads = st->k.pool != NULL ? ladle_pool_threads(st->k.pool) : 1;
    size_t *order = j.order, nparts = 0;
    int split = split_pages_mode();
    if (rc == LADLE_OK && ntasks > 0 &&
        (split == 1 || (split < 0 && threads > 1 && ntasks < 2 * (size_t)threads)))
      rc = split_tasks(&j, ntasks, threads, split == 1, &nparts, err);
    if (rc == LADLE_OK)
      rc = j.parts != NULL ? ladle_pool_run(st->k.pool, nparts, read_part_task, &j, err)
                           : ladle_pool_run(st->k.pool, ntasks, read_task, &j, err);
    if (rc == LADLE_OK && j.parts != NULL) rc = split_join(&j, nparts, err);
    for (size_t i = 0; j.pieces != NULL && i < nparts; i++) ladle_column_release(&j.pieces[i]);
    free(j.parts);
    free(j.pieces);
    free(order);
    for (size_t k = 0; j.dict != NULL && k < s->ncols; k++) exec_pred_destroy(j.dict[k]);
    free(j.dict);
    ladle_table_seal(t);
  }
  if (units != NULL && rc == LADLE_OK) { /* for the late reads */
    units->file = uf;
    units->rg = ur;
    uf = ur = NULL;
  }
  if (given == NULL) {
    free(uf);
    free(ur);
  }
  if (rc != LADLE_OK) {
    ladle_table_release(t);
    return rc;
  }
  if (limit >= 0 && t->num_rows > limit) {
    /* trim the last partition to n_rows */
    int64_t keep = limit;
    for (size_t k = 0; k < t->nchunks; k++) {
      ladle_chunk *c = &t->chunks[k];
      int64_t len = LADLE_MIN(c->length, keep);
      if (len < c->length) {
        for (size_t i = 0; rc == LADLE_OK && i < t->schema.n; i++) {
          ladle_column sl;
          rc = ladle_column_slice(&c->columns[i], 0, len, &sl, err);
          if (rc == LADLE_OK) {
            ladle_column_release(&c->columns[i]);
            c->columns[i] = sl;
          }
        }
        c->length = len;
      }
      keep -= len;
    }
    ladle_table_seal(t);
  }
  *out = t;
  return rc;
}

typedef struct late_job {
  exec_state *st;
  const pq_source *s;
  const size_t *unit_file, *unit_rg;
  ladle_table *out;     /* the filter's */
  int64_t *const *kept; /* per chunk: the rows kept, NULL: all */
  const size_t *cols;   /* the late columns */
  size_t ncols;
  bool views; /* the filter is the result: strings as views */
} late_job;

/* A late column of `type` (file column col of row group rg of pf; SIZE_MAX:
 * the file lacks it, nulls) at the rows kept (NULL: the row group's first n,
 * all of it or a part cut short by n_rows), as views when `views` and a
 * String: the whole table's late reads and the streamed filter's. */
static ladle_status late_read(exec_state *st, const ladle_pq_file *pf, size_t rg, size_t col,
                              ladle_dtype type, const int64_t *kept, int64_t n, bool views,
                              ladle_column *out, ladle_error *err) {
  if (col == SIZE_MAX) return ladle_column_nulls(type, n, out, err);
  views = views && type.id == LADLE_TYPE_STRING;
  if (kept == NULL && n == pf->row_groups[rg].num_rows)
    return (views ? ladle_pq_read_chunk_views : ladle_pq_read_chunk)(pf, rg, col, out, err);
  ladle_column all; /* every row of a unit cut short by n_rows: 0, 1, ... */
  memset(&all, 0, sizeof all);
  if (kept == NULL)
    LADLE_RETURN_NOT_OK(
        st->be->sequence(&st->k, 0, n, ladle_dtype_make(LADLE_TYPE_INT64), &all, err));
  ladle_status rc =
      ladle_pq_read_chunk_sel(pf, rg, col, kept ? kept : all.values, n, views, out, err);
  ladle_column_release(&all);
  return rc;
}

static ladle_status late_task(void *vctx, size_t i, ladle_error *err) {
  late_job *j = vctx;
  size_t u = i / j->ncols, k = j->cols[i % j->ncols];
  size_t f = j->unit_file[u], col = j->s->col_index[f * j->s->ncols + k];
  return late_read(j->st, j->s->files[f], j->unit_rg[u], col, j->out->schema.types[k], j->kept[u],
                   j->out->chunks[u].length, j->views, &j->out->chunks[u].columns[k], err);
}

ladle_status ladle_exec_scan_parquet_late(exec_state *st, const ladle_plan *scan,
                                          const exec_units *units, const ladle_table *in,
                                          ladle_table *out, int64_t *const *kept, const bool *late,
                                          bool views, ladle_error *err) {
  const pq_source *s = scan->source;
  size_t *cols = malloc(LADLE_MAX(out->schema.n, 1) * sizeof *cols), nc = 0;
  if (cols == NULL) return LADLE_OOM(err, "parquet columns");
  for (size_t i = 0; i < out->schema.n; i++)
    if (late[i]) cols[nc++] = i;
  late_job j = {st, s, units->file, units->rg, out, kept, cols, nc, views};
  ladle_status rc = nc == 0 || in->nchunks == 0
                        ? LADLE_OK
                        : ladle_pool_run(st->k.pool, in->nchunks * nc, late_task, &j, err);
  free(cols);
  ladle_table_seal(out);
  return rc;
}

/* ------------------------------------------------------------ made source */

/* The scan's units one at a time, for a pipeline's made source (the scan's
 * own, or the late filter's over it): unit u's columns decoded by the task
 * that pushes it through the pipeline. */
struct exec_pq_stream {
  const pq_source *s;
  const ladle_schema *schema; /* the scan's */
  size_t *unit_file, *unit_rg;
  int64_t *len;     /* per unit: its rows read (the last one cut short by n_rows) */
  const bool *late; /* columns left to the filter's late reads (NULL: none) */
  exec_pred **dict; /* per column: the filter's terms on it as keep bytes (NULL: none) */
  bool views;
};

void exec_pq_stream_close(void *ctx) {
  exec_pq_stream *m = ctx;
  if (m == NULL) return;
  for (size_t k = 0; m->dict != NULL && k < m->schema->n; k++) exec_pred_destroy(m->dict[k]);
  free(m->dict);
  free(m->unit_file);
  free(m->unit_rg);
  free(m->len);
  free(m);
}

/* LADLE_PARQUET_STREAM=0: a pipeline's Parquet scan is read whole first;
 * =1: streamed whatever its row groups (for tests); unset: by row groups */
static int stream_mode(void) {
  const char *v = getenv("LADLE_PARQUET_STREAM");
  if (v != NULL && strcmp(v, "0") == 0) return 0;
  if (v != NULL && strcmp(v, "1") == 0) return 1;
  return -1;
}

/* Streams when the pipeline's tasks find enough row groups to share: two per
 * thread at least (fewer, and the scan reads them whole, column by column in
 * parallel, and splits them for the threads: exec_split_rows). Not on the
 * column kernels (a GPU engine's scan is copied up whole). */
ladle_status exec_pq_stream_open(exec_state *st, const ladle_pnode *scan, exec_pq_stream **out,
                                 exec_source *src, ladle_error *err) {
  *out = NULL;
  int mode = stream_mode();
  if (mode == 0 || st->columns || st->mixed || scan->upload) return LADLE_OK;
  const pq_source *s = scan->lp->source;
  int threads = st->k.pool ? ladle_pool_threads(st->k.pool) : 1;
  exec_pq_stream *m = calloc(1, sizeof *m);
  if (m == NULL) return LADLE_OOM(err, "parquet scan");
  m->s = s;
  m->schema = &scan->lp->schema;
  size_t n, skipped;
  int64_t limit;
  ladle_status rc = pq_units(st, s, &m->unit_file, &m->unit_rg, &n, &skipped, &limit, err);
  if (rc != LADLE_OK || n == 0 || (mode < 0 && n < 2 * (size_t)threads)) {
    exec_pq_stream_close(m);
    return rc;
  }
  m->views = scan->views;
  m->late = scan->late;
  m->len = malloc(n * sizeof *m->len);
  if (m->len == NULL) rc = LADLE_OOM(err, "parquet scan");
  if (rc == LADLE_OK && scan->late != NULL && scan->dict != NULL) {
    m->dict = calloc(LADLE_MAX(s->ncols, 1), sizeof *m->dict);
    if (m->dict == NULL) rc = LADLE_OOM(err, "parquet dictionary predicates");
    for (size_t k = 0; rc == LADLE_OK && k < s->ncols; k++)
      if (scan->dict[k])
        rc = exec_pred_compile_dict(st, scan->dict_pred, m->schema, k, &m->dict[k], err);
  }
  if (rc != LADLE_OK) {
    exec_pq_stream_close(m);
    return rc;
  }
  int64_t rows = 0;
  for (size_t u = 0; u < n; u++) {
    int64_t r = s->files[m->unit_file[u]]->row_groups[m->unit_rg[u]].num_rows;
    if (limit >= 0) r = LADLE_MAX(LADLE_MIN(r, limit - rows), 0);
    m->len[u] = r;
    rows += r;
  }
  atomic_fetch_add(&st->eng->row_groups_skipped, skipped);
  atomic_fetch_add(&st->eng->row_groups_read, n);
  atomic_fetch_add(&st->eng->row_groups_streamed, n);
  *src = (exec_source){n, rows, m->len[0], NULL, NULL, NULL, NULL};
  *out = m;
  return LADLE_OK;
}

typedef struct pq_unit_job {
  exec_state *st;
  const exec_pq_stream *m;
  size_t u;
  const bool *need;
  ladle_chunk *out;
} pq_unit_job;

static ladle_status pq_unit_column(void *vctx, size_t k, ladle_error *err) {
  const pq_unit_job *j = vctx;
  const exec_pq_stream *m = j->m;
  size_t f = m->unit_file[j->u], rg = m->unit_rg[j->u];
  size_t col = m->s->col_index[f * m->s->ncols + k];
  int64_t rows = m->s->files[f]->row_groups[rg].num_rows, len = m->len[j->u];
  ladle_column *o = &j->out->columns[k];
  ladle_status st = LADLE_OK;
  if (m->dict != NULL && m->dict[k] != NULL) {
    st = dict_read(j->st, m->s, f, rg, k, col, m->dict[k], m->schema, o, err);
  } else if ((j->need != NULL && !j->need[k]) || (m->late != NULL && m->late[k])) {
    exec_placeholder(o, len);
    return LADLE_OK;
  } else if (col == SIZE_MAX) {
    return ladle_column_nulls(m->schema->types[k], len, o, err);
  } else {
    st = (m->views ? ladle_pq_read_chunk_views : ladle_pq_read_chunk)(m->s->files[f], rg, col, o,
                                                                      err);
  }
  if (st != LADLE_OK || len == rows) return st;
  ladle_column cut; /* the rows past n_rows dropped */
  st = ladle_column_slice(o, 0, len, &cut, err);
  ladle_column_release(o);
  if (st == LADLE_OK) *o = cut;
  return st;
}

ladle_status exec_pq_stream_unit(exec_state *st, const exec_pq_stream *m, size_t u,
                                 const bool *need, ladle_chunk *out, ladle_error *err) {
  pq_unit_job j = {st, m, u, need, out};
  out->length = m->len[u];
  /* the columns in parallel where this is the driver's first morsel, alone;
   * inline inside a pipeline task */
  ladle_status rc = ladle_pool_run(st->k.pool, m->schema->n, pq_unit_column, &j, err);
  if (rc != LADLE_OK)
    for (size_t c = 0; c < m->schema->n; c++) ladle_column_release(&out->columns[c]);
  return rc;
}

ladle_status exec_pq_stream_late(exec_state *st, const exec_pq_stream *m, size_t u, size_t k,
                                 const int64_t *kept, int64_t n, bool views, ladle_column *out,
                                 ladle_error *err) {
  size_t f = m->unit_file[u];
  return late_read(st, m->s->files[f], m->unit_rg[u], m->s->col_index[f * m->s->ncols + k],
                   m->schema->types[k], kept, n, views, out, err);
}

static ladle_status pq_make(exec_state *s, void *ctx, size_t k, const bool *need, ladle_chunk *out,
                            ladle_error *err) {
  return exec_pq_stream_unit(s, ctx, k, need, out, err);
}

/* The scan on its own (no late filter above) as a pipeline's made source. */
static ladle_status scan_parquet_source(exec_state *st, const ladle_pnode *pn, exec_source *out,
                                        ladle_error *err) {
  memset(out, 0, sizeof *out);
  if (pn->late != NULL) return LADLE_OK; /* the filter above streams it */
  exec_pq_stream *m;
  LADLE_RETURN_NOT_OK(exec_pq_stream_open(st, pn, &m, out, err));
  if (m != NULL) {
    out->make = pq_make;
    out->ctx = m;
    out->close = exec_pq_stream_close;
  }
  return LADLE_OK;
}

static ladle_status scan_parquet_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                     ladle_table **out, ladle_error *err) {
  exec_units *units = side != NULL ? side->units : NULL;
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_exec_scan_parquet(s, pn, &t, units, err));
  /* few row groups: sliced for the threads, unless late reads address the
   * partitions by row group */
  int64_t want = units == NULL ? exec_split_rows(s, t) : 0;
  if (want == 0) {
    *out = t;
    return LADLE_OK;
  }
  ladle_status st = ladle_table_split(t, want, out, err);
  ladle_table_release(t);
  return st;
}

const exec_operator exec_op_scan_parquet = {LADLE_POP_SCAN_PARQUET, scan_parquet_run, NULL, NULL,
                                            scan_parquet_source};

/* ------------------------------------------------------ decoded on a device
 *
 * A GPU engine's Parquet scan (or late filter over one, pn.upload) whose
 * backend decodes pages (parquet_decode): each flat fixed-width column's pages
 * are listed and decompressed on the host, into one buffer per column, and
 * decoded on the device, so that what crosses to the device is the pages'
 * bytes (dictionary indices of a few bits instead of values of 4 or 8 bytes)
 * and the host does no decoding. Other columns (strings, lists, other
 * encodings) are read on the host and copied up as before. A late filter's
 * columns are all read this way and the filter runs on the device: its late
 * reads would cost the host more than the device's compaction. */

struct exec_pq_device {
  const ladle_pnode *scan;
  const pq_source *s;
  pq_unitset units;        /* found once, for the host's columns too */
  size_t *uf, *ur, nunits; /* units.uf, units.ur, units.n */
  bool *want;              /* per column of the scan: read at all */
  bool *dev;               /* per column: decoded on the device */
  ladle_pq_pages **pages;  /* per column, per unit (dev columns) */
};

void exec_pq_device_free(exec_pq_device *d) {
  if (d == NULL) return;
  for (size_t k = 0; d->pages != NULL && k < d->s->ncols; k++) {
    for (size_t u = 0; d->pages[k] != NULL && u < d->units.n; u++)
      ladle_pq_pages_free(&d->pages[k][u]);
    free(d->pages[k]);
  }
  free(d->pages);
  free(d->want);
  free(d->dev);
  free(d->units.uf);
  free(d->units.ur);
  free(d);
}

/* LADLE_GPU_PARQUET=0 keeps a GPU engine's Parquet decoding on the host */
static bool device_decode_on(void) {
  const char *v = getenv("LADLE_GPU_PARQUET");
  return v == NULL || strcmp(v, "0") != 0;
}

typedef struct list_job {
  exec_pq_device *d;
  size_t k;
} list_job;

static ladle_status list_task(void *vctx, size_t u, ladle_error *err) {
  list_job *j = vctx;
  exec_pq_device *d = j->d;
  size_t f = d->units.uf[u], col = d->s->col_index[f * d->s->ncols + j->k];
  return ladle_pq_chunk_pages(d->s->files[f], d->units.ur[u], col, &d->pages[j->k][u], err);
}

ladle_status exec_pq_device_open(exec_state *st, const ladle_pnode *pn, exec_pq_device **out,
                                 ladle_error *err) {
  *out = NULL;
  const ladle_pnode *scan = pn->op == LADLE_POP_FILTER ? pn->inputs[0] : pn;
  if (st->be->parquet_decode == NULL || !device_decode_on() || scan->op != LADLE_POP_SCAN_PARQUET ||
      (pn->op == LADLE_POP_FILTER && !exec_columns_pred_fits(st, pn)))
    return LADLE_OK;
  const pq_source *s = scan->lp->source;
  if (s->n_rows >= 0) return LADLE_OK; /* a head: the host reads only its rows */
  exec_pq_device *d = calloc(1, sizeof *d);
  if (d == NULL) return LADLE_OOM(err, "parquet scan");
  d->scan = scan;
  d->s = s;
  size_t nc = s->ncols;
  d->want = calloc(LADLE_MAX(nc, 1), sizeof *d->want);
  d->dev = calloc(LADLE_MAX(nc, 1), sizeof *d->dev);
  d->pages = calloc(LADLE_MAX(nc, 1), sizeof *d->pages);
  ladle_status st2 = d->want && d->dev && d->pages ? LADLE_OK : LADLE_OOM(err, "parquet scan");
  /* the columns read: a scan's all; a filter's, those its predicate reads and
   * those its parent does */
  for (size_t k = 0; st2 == LADLE_OK && k < nc; k++)
    d->want[k] = pn->op != LADLE_POP_FILTER || pn->need == NULL || pn->need[k];
  if (st2 == LADLE_OK && pn->op == LADLE_POP_FILTER)
    ladle_exec_mark_columns(pn->lp->exprs[0], d->want, nc);
  size_t skipped = 0;
  pq_unitset *us = &d->units;
  if (st2 == LADLE_OK) st2 = pq_units(st, s, &us->uf, &us->ur, &us->n, &skipped, &us->limit, err);
  if (st2 == LADLE_OK) {
    atomic_fetch_add(&st->eng->row_groups_skipped, skipped);
    atomic_fetch_add(&st->eng->row_groups_read, us->n);
  }
  bool any = false;
  for (size_t k = 0; st2 == LADLE_OK && k < nc; k++) {
    if (!d->want[k]) continue;
    bool ok = d->units.n > 0;
    int max_def = -1;
    for (size_t f = 0; ok && f < s->nfiles; f++) {
      size_t col = s->col_index[f * nc + k];
      ok = col != SIZE_MAX &&
           (ladle_pq_column_raw_width(&s->files[f]->columns[col]) > 0 ||
            ladle_pq_column_dict_strings(&s->files[f]->columns[col])) &&
           (max_def < 0 || max_def == s->files[f]->columns[col].max_def);
      if (ok) max_def = s->files[f]->columns[col].max_def;
    }
    if (!ok) continue;
    d->pages[k] = calloc(d->units.n, sizeof *d->pages[k]);
    if (d->pages[k] == NULL) {
      st2 = LADLE_OOM(err, "parquet pages");
      break;
    }
    list_job j = {d, k};
    ladle_error e;
    ladle_status ls = ladle_pool_run(st->k.pool, d->units.n, list_task, &j, &e);
    if (ls == LADLE_ENOTSUP || ls == LADLE_ECORRUPT) {
      /* an encoding the device does not decode, or a page the host reader
       * will name: this column is read on the host */
      for (size_t u = 0; u < d->units.n; u++) ladle_pq_pages_free(&d->pages[k][u]);
      free(d->pages[k]);
      d->pages[k] = NULL;
      continue;
    }
    if (ls != LADLE_OK) {
      *err = e;
      st2 = ls;
      break;
    }
    d->dev[k] = any = true;
  }
  if (st2 != LADLE_OK || !any) {
    exec_pq_device_free(d);
    return st2;
  }
  *out = d;
  return LADLE_OK;
}

ladle_status exec_pq_device_host_part(exec_state *st, const exec_pq_device *d, ladle_table **out,
                                      ladle_error *err) {
  size_t nc = d->s->ncols;
  bool *skip = malloc(LADLE_MAX(nc, 1) * sizeof *skip);
  if (skip == NULL) return LADLE_OOM(err, "parquet scan");
  for (size_t k = 0; k < nc; k++) skip[k] = d->dev[k] || !d->want[k];
  ladle_status rc = scan_read(st, d->scan, skip, false, &d->units, out, NULL, err);
  free(skip);
  return rc;
}

typedef struct fill_job {
  exec_state *st;
  const exec_pq_device *d;
  size_t k;
  bool stored;       /* pages go as stored (the backend decompresses them) */
  bool strings;      /* a String column: dictionaries parsed here */
  size_t *first;     /* per unit: its first page in kp */
  int64_t *rowstart; /* per unit: its first row */
  ladle_kpage *kp;
  uint8_t *buf;
} fill_job;

/* The bytes page pg takes in the buffer, and where they start after `at`:
 * 8-aligned, and stored compressed values 8-aligned after a v2 page's levels
 * (a device decompressor's alignment). */
static int64_t page_place(const ladle_pq_page *pg, bool stored, bool strings, int64_t at,
                          int64_t *bytes) {
  if (strings && pg->type == 2) { /* parsed here: offsets, then the entries */
    *bytes = ladle_pq_dict_strings_bytes(pg);
    return (at + 7) & ~(int64_t)7;
  }
  bool raw = stored && pg->compressed;
  int64_t lv = raw && pg->type == 3 ? pg->def_len : 0;
  *bytes = raw ? pg->raw_len : pg->len;
  return ((at + lv + 7) & ~(int64_t)7) - lv;
}

static ladle_status fill_task(void *vctx, size_t u, ladle_error *err) {
  fill_job *j = vctx;
  const exec_pq_device *d = j->d;
  size_t f = d->units.uf[u], col = d->s->col_index[f * d->s->ncols + j->k];
  const ladle_pq_pages *pp = &d->pages[j->k][u];
  const ladle_pq_file *file = d->s->files[f];
  bool optional = file->columns[col].max_def > 0;
  int64_t row = j->rowstart[u];
  int32_t dict = -1;
  for (size_t i = 0; i < pp->n; i++) {
    const ladle_pq_page *pg = &pp->pages[i];
    ladle_kpage *kp = &j->kp[j->first[u] + i];
    bool raw = j->stored && pg->compressed && pp->codec != 0;
    if (j->strings && pg->type == 2) {
      int64_t used;
      LADLE_RETURN_NOT_OK(ladle_pq_dict_strings_read(file, d->units.ur[u], col, pp, i,
                                                     j->buf + kp->offset, &used, err));
      kp->size = used;
    } else if (raw) {
      LADLE_RETURN_NOT_OK(ladle_pq_page_check_stored(file, d->units.ur[u], col, pp, i, err));
      memcpy(j->buf + kp->offset, pg->raw, (size_t)pg->raw_len);
      kp->size = pg->raw_len;
      kp->len = pg->len;
      kp->codec = pp->codec;
    } else {
      LADLE_RETURN_NOT_OK(
          ladle_pq_page_read(file, d->units.ur[u], col, pp, i, j->buf + kp->offset, err));
      kp->size = pg->len;
    }
    kp->num_values = pg->num_values;
    kp->num_nulls = pg->num_nulls;
    if (pg->type == 2) {
      kp->kind = LADLE_KPAGE_DICTIONARY;
      dict = (int32_t)(j->first[u] + i);
      continue;
    }
    if (pg->type == 3)
      kp->def_len = (int32_t)pg->def_len;
    else
      kp->prefixed = optional; /* a v1 page: its levels' length first */
    kp->kind = pg->encoding == 0 ? LADLE_KPAGE_PLAIN : LADLE_KPAGE_DICT;
    kp->dict = dict;
    kp->row = row;
    row += pg->num_values;
  }
  return LADLE_OK;
}

/* The pages a column needs before they go to the device as stored
 * (LADLE_GPU_STORED_MIN_PAGES, default 512): nvCOMP's batched zstd works a
 * page per block, and with few pages it is slower than the host's threads.
 * On an H100 with 16 cores: SF1's l_quantity (91 pages of 1 MB) took 19 ms
 * to decompress on the GPU where TPC-H q1 ran in 60 ms with the host
 * decompressing (134 with nvCOMP); at SF10 (915 pages) 21 ms for 480 MB, and
 * q1 in 268 ms against 426. */
static int64_t stored_min_pages(void) {
  const char *v = getenv("LADLE_GPU_STORED_MIN_PAGES");
  return v != NULL && *v != '\0' ? strtoll(v, NULL, 10) : 512;
}

/* A column's pages in one host buffer, ready for parquet_decode. */
typedef struct dev_col {
  size_t k;
  size_t np;
  int64_t total, rows;
  bool stored, strings;
  size_t *first;
  int64_t *rowstart;
  ladle_kpage *kp;
  uint8_t *buf;
  ladle_status rc; /* of the preparation */
  ladle_error err;
} dev_col;

static void dev_col_free(dev_col *c) {
  free(c->buf);
  free(c->kp);
  free(c->first);
  free(c->rowstart);
  memset(c, 0, sizeof *c);
}

/* The offsets of column c's pages in its buffer, stored or decompressed. */
static void dev_col_place(const exec_pq_device *d, dev_col *c) {
  c->total = 0;
  for (size_t u = 0; u < d->units.n; u++)
    for (size_t i = 0; i < d->pages[c->k][u].n; i++) {
      int64_t bytes;
      c->kp[c->first[u] + i].offset = c->total =
          page_place(&d->pages[c->k][u].pages[i], c->stored, c->strings, c->total, &bytes);
      c->total += bytes;
    }
}

/* Column k's pages listed, placed and copied (or decompressed) into c->buf on
 * the host's threads. */
static ladle_status dev_col_prepare(exec_state *st, const exec_pq_device *d, size_t k, dev_col *c,
                                    ladle_error *err) {
  const pq_source *s = d->s;
  size_t nu = d->units.n;
  memset(c, 0, sizeof *c);
  c->k = k;
  c->first = malloc((nu + 1) * sizeof *c->first);
  c->rowstart = malloc((nu + 1) * sizeof *c->rowstart);
  if (c->first == NULL || c->rowstart == NULL) return LADLE_OOM(err, "parquet pages");
  /* pages as stored where the backend decompresses every chunk's codec, and
   * the column has pages enough for a device's batch (stored_min_pages) */
  unsigned codecs = st->be->parquet_codecs != NULL ? st->be->parquet_codecs(&st->k) : 0;
  c->strings = ladle_type_is_varlen(d->scan->lp->schema.types[k].id);
  c->stored = codecs != 0;
  for (size_t u = 0; u < nu; u++) {
    c->first[u] = c->np;
    c->rowstart[u] = c->rows;
    c->np += d->pages[k][u].n;
    c->rows += s->files[d->units.uf[u]]->row_groups[d->units.ur[u]].num_rows;
    int cd = d->pages[k][u].codec;
    c->stored = c->stored && (cd == 0 || (cd < 32 && (codecs >> cd & 1)));
  }
  c->stored = c->stored && (int64_t)c->np >= stored_min_pages();
  c->kp = calloc(LADLE_MAX(c->np, 1), sizeof *c->kp);
  if (c->kp == NULL) return LADLE_OOM(err, "parquet pages");
  dev_col_place(d, c);
  c->buf = malloc((size_t)LADLE_MAX(c->total, 1));
  if (c->buf == NULL) return LADLE_OOM(err, "parquet pages");
  fill_job j = {st, d, k, c->stored, c->strings, c->first, c->rowstart, c->kp, c->buf};
  ladle_status rc = ladle_pool_run(st->k.pool, nu, fill_task, &j, err);
  if (rc == LADLE_ENOTSUP && c->stored) {
    /* a page the device's decompressor does not take (several zstd frames):
     * every page decompressed here instead */
    memset(c->kp, 0, LADLE_MAX(c->np, 1) * sizeof *c->kp);
    free(c->buf);
    c->stored = false;
    dev_col_place(d, c);
    c->buf = malloc((size_t)LADLE_MAX(c->total, 1));
    j.stored = false;
    j.buf = c->buf;
    rc = c->buf != NULL ? ladle_pool_run(st->k.pool, nu, fill_task, &j, err)
                        : LADLE_OOM(err, "parquet pages");
  }
  return rc;
}

/* Column c (prepared: c->rc) decoded on the device into *out; where the
 * device refuses it, read by the host's reader and copied up. */
static ladle_status dev_col_decode(exec_state *st, const exec_pq_device *d, dev_col *c,
                                   ladle_column *out, ladle_error *err) {
  const pq_source *s = d->s;
  size_t k = c->k;
  const ladle_pq_file *f0 = s->files[d->units.uf[0]];
  const ladle_pq_column *pc = &f0->columns[s->col_index[d->units.uf[0] * s->ncols + k]];
  ladle_status rc = c->rc;
  if (rc != LADLE_OK) *err = c->err;
  if (rc == LADLE_OK) {
    double t0 = LADLE_PHASE_START();
    rc = st->be->parquet_decode(&st->k, c->buf, c->total, c->kp, c->np,
                                c->strings ? 0 : ladle_pq_column_raw_width(pc),
                                d->scan->lp->schema.types[k], pc->max_def > 0, c->rows, out, err);
    LADLE_PHASE_END(
        c->stored ? "parquet decompress and decode on the device" : "parquet decode on the device",
        c->rows, t0);
  }
  if (rc == LADLE_ECORRUPT || rc == LADLE_ENOTSUP) {
    /* (ENOTSUP: the backend does not decode this column after all) the
     * host's reader names the file, row group and page where it can; where
     * it reads every chunk (a page the device's decompressor would not take),
     * its column goes up instead, as the scan's host part does */
    ladle_error e2;
    bool *skip = malloc(LADLE_MAX(s->ncols, 1) * sizeof *skip);
    ladle_table *h = NULL, *t = NULL;
    ladle_status r2 = skip != NULL ? LADLE_OK : LADLE_OOM(&e2, "parquet scan");
    for (size_t i = 0; skip != NULL && i < s->ncols; i++) skip[i] = i != k;
    if (r2 == LADLE_OK) r2 = scan_read(st, d->scan, skip, false, &d->units, &h, NULL, &e2);
    if (r2 == LADLE_OK) r2 = exec_columns_scan(st, h, false, &t, &e2);
    if (r2 == LADLE_OK) {
      if (ladle_trace_level() >= 1)
        fprintf(stderr, "ladle: column '%s' read on the host after the device's decoder: %s\n",
                pc->name, err->message);
      ladle_column_copy_ref(&t->chunks[0].columns[k], out);
    }
    ladle_table_release(h);
    ladle_table_release(t);
    free(skip);
    rc = r2;
    if (rc != LADLE_OK) *err = e2;
  }
  return rc;
}

/* Two steps at once: column `dec` decoded on the device while column `prep`
 * is prepared on the host (each a task of the pool, its loops half as wide). */
typedef struct step_job {
  exec_state *st;
  const exec_pq_device *d;
  dev_col *dec, *prep;
  size_t prep_k;
  ladle_column out;
} step_job;

static ladle_status step_task(void *vctx, size_t i, ladle_error *err) {
  step_job *j = vctx;
  if (i == 0) return j->dec != NULL ? dev_col_decode(j->st, j->d, j->dec, &j->out, err) : LADLE_OK;
  if (j->prep == NULL) return LADLE_OK;
  /* a preparation's failure is the column's own, reported when it is decoded */
  j->prep->rc = dev_col_prepare(j->st, j->d, j->prep_k, j->prep, &j->prep->err);
  return LADLE_OK;
}

ladle_status exec_pq_device_decode(exec_state *st, const exec_pq_device *d, ladle_table *t,
                                   ladle_error *err) {
  size_t nc = d->s->ncols;
  dev_col cols[2];
  memset(cols, 0, sizeof cols);
  ladle_status rc = LADLE_OK;
  /* the device's columns in order: each one's host part overlaps the device
   * part of the one before it */
  size_t next = 0;
  while (next < nc && !d->dev[next]) next++;
  int cur = -1; /* the slot holding the prepared column, or none */
  while (rc == LADLE_OK && (cur >= 0 || next < nc)) {
    int slot = cur < 0 ? 0 : 1 - cur;
    step_job j;
    memset(&j, 0, sizeof j);
    j.st = st;
    j.d = d;
    j.dec = cur >= 0 ? &cols[cur] : NULL;
    j.prep = next < nc ? &cols[slot] : NULL;
    j.prep_k = next;
    if (j.dec == NULL || j.prep == NULL) { /* one step alone: every thread for it */
      rc = step_task(&j, j.dec == NULL ? 1 : 0, err);
    } else {
      rc = ladle_pool_run(st->k.pool, 2, step_task, &j, err);
    }
    if (rc == LADLE_OK && cur >= 0) {
      size_t k = cols[cur].k;
      ladle_column_release(&t->chunks[0].columns[k]);
      t->chunks[0].columns[k] = j.out;
    } else {
      ladle_column_release(&j.out); /* (nothing, unless a decode outlived a failure) */
    }
    if (cur >= 0) dev_col_free(&cols[cur]);
    cur = next < nc ? slot : -1;
    if (next < nc) {
      next++;
      while (next < nc && !d->dev[next]) next++;
    }
  }
  dev_col_free(&cols[0]);
  dev_col_free(&cols[1]);
  return rc;
}
