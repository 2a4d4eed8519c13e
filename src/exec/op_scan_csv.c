/* op_scan_csv.c — SCAN_CSV: the CSV scan node: its builder (loads each file, finds records,
 * infers or takes the column types) and its execution (records parsed in parallel,
 * one partition per range of records). With several ranks each parses its share: whole
 * files when there are as many files as ranks, else a range of the global records; the
 * ranks' rows in rank order are the one-rank scan's (rank_ranges says how). */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../io/csv/csv.h"
#include "operator.h"

typedef struct csv_source {
  ladle_csv_opts o; /* strings owned below */
  char *comment;
  char **nulls;
  char *path_column;
  char **named; /* 2 * n_named_nulls: column, value, column, value ... */
  const char **named_cols, **named_vals;
  size_t nfiles;
  ladle_csv_file **files;
  size_t ncols;
  size_t *which; /* per file: ncols indices */
  ladle_dtype *types;
} csv_source;

static void csv_source_free(void *v) {
  csv_source *s = v;
  if (s == NULL) return;
  for (size_t i = 0; i < s->nfiles; i++) ladle_csv_close(s->files[i]);
  free(s->files);
  free(s->which);
  free(s->types);
  free(s->comment);
  for (size_t i = 0; s->nulls && i < s->o.n_null_values; i++) free(s->nulls[i]);
  free(s->nulls);
  for (size_t i = 0; s->named && i < 2 * s->o.n_named_nulls; i++) free(s->named[i]);
  free(s->named);
  free(s->named_cols);
  free(s->named_vals);
  free(s->path_column);
  free(s);
}

ladle_status ladle_plan_scan_csv(size_t n_paths, const char *const *paths,
                                 const ladle_csv_opts *opts, ladle_plan **out, ladle_error *err) {
  if (n_paths == 0) return ladle_err_set(err, LADLE_EINVAL, "scan_csv: no files");
  csv_source *s = calloc(1, sizeof *s);
  ladle_plan *p = ladle_plan_node_new(LADLE_NODE_SCAN_CSV, 0);
  if (s == NULL || p == NULL) {
    free(s);
    ladle_plan_destroy(p);
    return LADLE_OOM(err, "csv scan");
  }
  p->source = s;
  p->source_free = csv_source_free;
  s->o = opts ? *opts : ladle_csv_opts_default();
  ladle_status st = LADLE_OK;
  /* own the option strings */
  if (s->o.comment_prefix != NULL) {
    s->comment = ladle_strdup(s->o.comment_prefix);
    if (s->comment == NULL) st = LADLE_OOM(err, "csv options");
    s->o.comment_prefix = s->comment;
  }
  if (st == LADLE_OK && s->o.n_null_values > 0) {
    s->nulls = calloc(s->o.n_null_values, sizeof *s->nulls);
    if (s->nulls == NULL) st = LADLE_OOM(err, "csv options");
    for (size_t i = 0; st == LADLE_OK && i < s->o.n_null_values; i++)
      if ((s->nulls[i] = ladle_strdup(opts->null_values[i])) == NULL)
        st = LADLE_OOM(err, "csv options");
    s->o.null_values = (const char *const *)s->nulls;
  }
  if (st == LADLE_OK && s->o.n_named_nulls > 0) {
    size_t n = s->o.n_named_nulls;
    s->named = calloc(2 * n, sizeof *s->named);
    s->named_cols = calloc(n, sizeof *s->named_cols);
    s->named_vals = calloc(n, sizeof *s->named_vals);
    if (s->named == NULL || s->named_cols == NULL || s->named_vals == NULL)
      st = LADLE_OOM(err, "csv options");
    for (size_t i = 0; st == LADLE_OK && i < n; i++) {
      s->named_cols[i] = s->named[2 * i] = ladle_strdup(opts->named_null_columns[i]);
      s->named_vals[i] = s->named[2 * i + 1] = ladle_strdup(opts->named_null_values[i]);
      if (s->named[2 * i] == NULL || s->named[2 * i + 1] == NULL)
        st = LADLE_OOM(err, "csv options");
    }
    s->o.named_null_columns = s->named_cols;
    s->o.named_null_values = s->named_vals;
  }
  if (st == LADLE_OK && s->o.path_column != NULL) {
    if ((s->path_column = ladle_strdup(s->o.path_column)) == NULL)
      st = LADLE_OOM(err, "csv options");
    s->o.path_column = s->path_column;
  }
  s->o.columns = NULL;
  s->o.types = NULL;
  if (st == LADLE_OK && (s->files = calloc(n_paths, sizeof *s->files)) == NULL)
    st = LADLE_OOM(err, "csv scan");
  /* records are found now (the plan needs the columns and their types), with a
   * pool of this call's own: a thread per 4 MiB of input, at most one per core
   * this process may run on (a small file on a 128-core machine starts no
   * 128 threads) */
  ladle_pool *pool = NULL;
  int64_t bytes = 0;
  for (size_t i = 0; i < n_paths; i++) {
    struct stat sb;
    if (stat(paths[i], &sb) == 0 && sb.st_size > 0) bytes += (int64_t)sb.st_size;
  }
  int64_t want = bytes / ((int64_t)4 << 20) + 1;
  int threads = (int)LADLE_MIN(want, (int64_t)ladle_cpu_count());
  if (st == LADLE_OK) st = ladle_pool_create(LADLE_MAX(threads, 1), &pool, err);
  for (size_t i = 0; st == LADLE_OK && i < n_paths; i++) {
    st = ladle_csv_open(paths[i], &s->o, pool, &s->files[i], err);
    if (st == LADLE_OK) s->nfiles++;
  }
  ladle_pool_destroy(pool);
  if (st != LADLE_OK) {
    ladle_plan_destroy(p);
    return st;
  }
  const ladle_csv_file *f0 = s->files[0];
  bool none = opts && opts->no_columns;
  size_t n = none ? 0 : opts && opts->n_columns > 0 ? opts->n_columns : f0->ncols;
  s->ncols = n;
  s->which = calloc(LADLE_MAX(n * s->nfiles, 1), sizeof *s->which);
  s->types = calloc(LADLE_MAX(n, 1), sizeof *s->types);
  ladle_dtype *inferred = calloc(LADLE_MAX(f0->ncols, 1), sizeof *inferred);
  if (s->which == NULL || s->types == NULL || inferred == NULL) st = LADLE_OOM(err, "csv scan");
  bool need_infer = !none && !(opts && opts->n_columns > 0 && opts->types != NULL);
  if (st == LADLE_OK && need_infer) st = ladle_csv_infer(f0, &s->o, inferred, err);
  if (st == LADLE_OK) st = ladle_schema_init(&p->schema, n + (s->path_column != NULL), err);
  if (st == LADLE_OK && s->path_column != NULL)
    st = ladle_schema_set(&p->schema, n, s->path_column, ladle_dtype_make(LADLE_TYPE_STRING), err);
  for (size_t fi = 0; st == LADLE_OK && fi < s->nfiles; fi++) {
    const ladle_csv_file *f = s->files[fi];
    bool policies = s->o.insert_missing_columns || s->o.ignore_extra_columns;
    if (fi > 0 && f->ncols != f0->ncols && !policies)
      st = ladle_err_set(err, LADLE_EINVAL, "%s has %zu columns, %s has %zu", f->path, f->ncols,
                         f0->path, f0->ncols);
    /* a later file's column the first file lacks: an error unless ignored */
    for (size_t j = 0;
         st == LADLE_OK && fi > 0 && policies && !s->o.ignore_extra_columns && j < f->ncols; j++) {
      size_t i = 0;
      while (i < f0->ncols && strcmp(f0->names[i], f->names[j]) != 0) i++;
      if (i == f0->ncols)
        st = ladle_err_set(err, LADLE_EINVAL, "%s has a column '%s' that %s lacks", f->path,
                           f->names[j], f0->path);
    }
    for (size_t k = 0; st == LADLE_OK && k < n; k++) {
      const char *name = opts && opts->n_columns > 0 ? opts->columns[k] : f0->names[k];
      size_t j = 0;
      while (j < f->ncols && strcmp(f->names[j], name) != 0) j++;
      if (j == f->ncols && s->o.insert_missing_columns &&
          (fi > 0 || (opts && opts->types != NULL))) {
        j = SIZE_MAX; /* all null in this file (parsing reads past the record's fields) */
      } else if (j == f->ncols) {
        st = ladle_err_set(err, LADLE_ENOCOL, "%s: no column '%s'", f->path, name);
        break;
      }
      s->which[fi * n + k] = j;
      if (fi == 0) {
        s->types[k] =
            opts && opts->n_columns > 0 && opts->types != NULL ? opts->types[k] : inferred[j];
        ladle_type_id id = s->types[k].id;
        if (id == LADLE_TYPE_DURATION || id >= LADLE_TYPE_DECIMAL) {
          char b1[64];
          st = ladle_err_set(err, LADLE_ENOTSUP,
                             "%s: column '%s': reading %s from CSV is not supported", f->path, name,
                             ladle_dtype_name(s->types[k], b1, sizeof b1));
          break;
        }
        st = ladle_schema_set(&p->schema, k, name, s->types[k], err);
      }
    }
  }
  free(inferred);
  if (st != LADLE_OK) {
    ladle_plan_destroy(p);
    return st;
  }
  *out = p;
  return LADLE_OK;
}

typedef struct csv_job {
  const csv_source *s;
  ladle_csv_file *const *files; /* the source's, or copies with the parser's records */
  size_t *file;
  int64_t *begin, *end;
  ladle_table *t;
} csv_job;

/* The unit's rows' file path as a String column (include_file_paths). */
static ladle_status path_column(const char *path, int64_t n, ladle_column *out, ladle_error *err) {
  size_t len = strlen(path);
  ladle_column one;
  ladle_status st =
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_STRING), 1, false, (int64_t)len, &one, err);
  if (st != LADLE_OK) return st;
  int64_t *off = LADLE_COL_MUT(&one, int64_t);
  off[0] = 0;
  off[1] = (int64_t)len;
  memcpy((char *)one.chars, path, len);
  st = ladle_column_broadcast(&one, n, out, err);
  ladle_column_release(&one);
  return st;
}

static ladle_status csv_task(void *vctx, size_t u, ladle_error *err) {
  csv_job *j = vctx;
  const csv_source *s = j->s;
  size_t f = j->file[u];
  ladle_column *cols = j->t->chunks[u].columns;
  ladle_status st = ladle_csv_parse(j->files[f], &s->o, j->begin[u], j->end[u], s->ncols,
                                    s->which + f * s->ncols, s->types, cols, err);
  if (st == LADLE_OK && s->path_column != NULL) {
    st = path_column(j->files[f]->path, j->end[u] - j->begin[u], &cols[s->ncols], err);
    if (st != LADLE_OK)
      for (size_t k = 0; k < s->ncols; k++) ladle_column_release(&cols[k]);
  }
  return st;
}

/* Parses records [lo[f], hi[f]) of each file f in units of a morsel, in
 * parallel, into *out. */
static ladle_status run_units(exec_state *st, const ladle_plan *p, ladle_csv_file *const *files,
                              const int64_t *lo, const int64_t *hi, ladle_table **out,
                              ladle_error *err) {
  const csv_source *s = p->source;
  int64_t morsel = st->k.morsel_rows;
  size_t nunits = 0;
  for (size_t f = 0; f < s->nfiles; f++) nunits += (size_t)((hi[f] - lo[f] + morsel - 1) / morsel);
  size_t *uf = malloc(LADLE_MAX(nunits, 1) * sizeof *uf);
  int64_t *ub = malloc(LADLE_MAX(nunits, 1) * sizeof *ub),
          *ue = malloc(LADLE_MAX(nunits, 1) * sizeof *ue);
  ladle_table *t = NULL;
  ladle_status rc = uf && ub && ue ? ladle_table_create(&p->schema, nunits, &t, err)
                                   : LADLE_OOM(err, "csv units");
  if (rc == LADLE_OK) {
    size_t u = 0;
    for (size_t f = 0; f < s->nfiles; f++)
      for (int64_t a = lo[f]; a < hi[f]; a += morsel, u++) {
        uf[u] = f;
        ub[u] = a;
        ue[u] = LADLE_MIN(a + morsel, hi[f]);
        t->chunks[u].length = ue[u] - ub[u];
      }
    csv_job j = {s, files, uf, ub, ue, t};
    rc = ladle_pool_run(st->k.pool, nunits, csv_task, &j, err);
    ladle_table_seal(t);
  }
  free(uf);
  free(ub);
  free(ue);
  if (rc != LADLE_OK) {
    ladle_table_release(t);
    return rc;
  }
  *out = t;
  return LADLE_OK;
}

int64_t exec_rank_bound(int64_t total, int rank, int size); /* op_scan_parquet.c */

/* Which records of each file f this rank parses: [lo[f], hi[f]). The global
 * record sequence is every file's records in file order, cut at n_rows; with
 * `size` ranks rank r's share of it is [r * total / size, (r + 1) * total / size)
 * (exec_rank_bound), which every rank computes alike from the record counts the
 * builder found. With at least as many files as ranks the share is dealt in
 * whole files: the files whose first record falls in it. With fewer, it is the
 * records themselves, cut across files. Either way the builder has already
 * loaded every file and found its records on every rank (what the plan costs
 * each rank); this rank parses only its share. */
static void rank_ranges(const csv_source *s, ladle_csv_file *const *files, int rank, int size,
                        int64_t *lo, int64_t *hi) {
  int64_t limit = s->o.n_rows_set ? LADLE_MAX(s->o.n_rows, 0) : INT64_MAX, total = 0;
  for (size_t f = 0; f < s->nfiles; f++) total += LADLE_MIN(files[f]->nrecords, limit - total);
  int64_t a = exec_rank_bound(total, rank, size), b = exec_rank_bound(total, rank + 1, size);
  bool whole = s->nfiles >= (size_t)size;
  int64_t at = 0; /* the file's first record in the global sequence */
  for (size_t f = 0; f < s->nfiles; f++) {
    int64_t n = LADLE_MIN(files[f]->nrecords, limit - at);
    if (size <= 1 || whole) {
      lo[f] = 0;
      hi[f] = size <= 1 || (at >= a && at < b) ? n : 0;
    } else {
      lo[f] = LADLE_MIN(LADLE_MAX(a - at, 0), n);
      hi[f] = LADLE_MAX(LADLE_MIN(b - at, n), lo[f]);
    }
    at += n;
  }
}

/* Rows [a, b) of t (slices of its partitions: nothing is copied). */
static ladle_status keep_rows(const ladle_table *t, int64_t a, int64_t b, ladle_table **out,
                              ladle_error *err) {
  size_t nchunks = 0;
  int64_t pos = 0;
  for (size_t k = 0; k < t->nchunks; pos += t->chunks[k++].length)
    if (pos + t->chunks[k].length > a && pos < b) nchunks++;
  ladle_table *r;
  LADLE_RETURN_NOT_OK(ladle_table_create(&t->schema, nchunks, &r, err));
  ladle_status st = LADLE_OK;
  size_t j = 0;
  pos = 0;
  for (size_t k = 0; st == LADLE_OK && k < t->nchunks; pos += t->chunks[k++].length) {
    const ladle_chunk *c = &t->chunks[k];
    if (!(pos + c->length > a && pos < b)) continue;
    int64_t s0 = LADLE_MAX(a, pos) - pos, e0 = LADLE_MIN(b, pos + c->length) - pos;
    r->chunks[j].length = e0 - s0;
    for (size_t i = 0; st == LADLE_OK && i < t->schema.n; i++)
      st = ladle_column_slice(&c->columns[i], s0, e0 - s0, &r->chunks[j].columns[i], err);
    j++;
  }
  ladle_table_seal(r);
  if (st != LADLE_OK) {
    ladle_table_release(r);
    return st;
  }
  *out = r;
  return LADLE_OK;
}

/* Every file's records up to n_rows, as one rank reads them. */
static ladle_status scan_all(exec_state *st, const ladle_plan *p, ladle_table **out,
                             ladle_error *err) {
  const csv_source *s = p->source;
  int64_t *lo = malloc(LADLE_MAX(s->nfiles, 1) * sizeof *lo),
          *hi = malloc(LADLE_MAX(s->nfiles, 1) * sizeof *hi);
  ladle_csv_file **copies = NULL;
  ladle_status rc = lo && hi ? LADLE_OK : LADLE_OOM(err, "csv units");
  if (rc == LADLE_OK) {
    rank_ranges(s, s->files, 0, 1, lo, hi);
    rc = run_units(st, p, s->files, lo, hi, out, err);
  }
  if (rc == LADLE_CSV_REREAD) {
    /* with ignore_errors, a file where quote parity and Polars' parser find
     * other records: every file read again with the parser's records (up to
     * the last column read, as Polars reads them); found while parsing, so a
     * well-formed file pays nothing */
    copies = calloc(s->nfiles, sizeof *copies);
    rc = copies != NULL ? LADLE_OK : LADLE_OOM(err, "csv records");
    for (size_t f = 0; rc == LADLE_OK && f < s->nfiles; f++) {
      size_t last = SIZE_MAX;
      for (size_t k = 0; k < s->ncols; k++) {
        size_t c = s->which[f * s->ncols + k];
        if (c < s->files[f]->ncols && (last == SIZE_MAX || c > last)) last = c;
      }
      rc = ladle_csv_parser_records(s->files[f], &s->o, last, &copies[f], err);
    }
    if (rc == LADLE_OK) {
      rank_ranges(s, copies, 0, 1, lo, hi);
      rc = run_units(st, p, copies, lo, hi, out, err);
    }
    if (rc == LADLE_CSV_REREAD)
      rc = ladle_err_context(err, LADLE_ECORRUPT, "malformed quoting"); /* cannot happen twice */
  }
  for (size_t f = 0; copies != NULL && f < s->nfiles; f++) ladle_csv_close(copies[f]);
  free(copies);
  free(lo);
  free(hi);
  return rc;
}

ladle_status ladle_exec_scan_csv(exec_state *st, const ladle_plan *p, ladle_table **out,
                                 ladle_error *err);
ladle_status ladle_exec_scan_csv(exec_state *st, const ladle_plan *p, ladle_table **out,
                                 ladle_error *err) {
  const csv_source *s = p->source;
  const ladle_comm *comm = st->eng->comm;
  if (comm == NULL || comm->size <= 1) return scan_all(st, p, out, err);
  if (s->o.ignore_errors) {
    /* the records a malformed file yields with ignore_errors are known only
     * after parsing it (the reread above), and which records are global rows
     * depends on every file's: each rank parses every file, as one rank does,
     * and keeps its share of the rows. That costs every rank the whole scan;
     * only ignore_errors pays it */
    ladle_table *all;
    LADLE_RETURN_NOT_OK(scan_all(st, p, &all, err));
    int64_t total = all->num_rows;
    ladle_status rc = keep_rows(all, exec_rank_bound(total, comm->rank, comm->size),
                                exec_rank_bound(total, comm->rank + 1, comm->size), out, err);
    ladle_table_release(all);
    return rc;
  }
  /* without ignore_errors the builder's records are the rows (a malformed
   * record is an error, raised by the rank whose share holds it) */
  int64_t *lo = malloc(LADLE_MAX(s->nfiles, 1) * sizeof *lo),
          *hi = malloc(LADLE_MAX(s->nfiles, 1) * sizeof *hi);
  ladle_status rc = lo && hi ? LADLE_OK : LADLE_OOM(err, "csv units");
  if (rc == LADLE_OK) {
    rank_ranges(s, s->files, comm->rank, comm->size, lo, hi);
    rc = run_units(st, p, s->files, lo, hi, out, err);
  }
  if (rc == LADLE_CSV_REREAD) /* (only with ignore_errors) */
    rc = ladle_err_context(err, LADLE_ECORRUPT, "malformed quoting");
  free(lo);
  free(hi);
  return rc;
}

static ladle_status scan_csv_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                 ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  return ladle_exec_scan_csv(s, pn->lp, out, err);
}

const exec_operator exec_op_scan_csv = {LADLE_POP_SCAN_CSV, scan_csv_run, NULL, NULL, NULL};
