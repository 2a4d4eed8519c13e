/* scan_parquet.c — the Parquet scan node: its builder (reads and checks every
 * footer) and its execution (one partition per (file, row group); pages decoded in
 * parallel over row groups and columns). The (file, row-group) units are what the
 * distributed layer will deal out to ranks. */
#include <stdio.h>

#include "../io/parquet/parquet.h"
#include "exec.h"

typedef struct pq_source {
  size_t nfiles;
  ladle_pq_file **files;
  size_t ncols;
  size_t *col_index; /* per file: ncols indices (files[i] -> col_index[i * ncols + k]) */
  int64_t n_rows;    /* < 0: all */
} pq_source;

static void pq_source_free(void *v) {
  pq_source *s = v;
  if (s == NULL) return;
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
      if (j == file->ncolumns) {
        st = ladle_err_set(err, LADLE_ENOCOL, "%s: no column '%s'", file->path, name);
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
        st = ladle_err_set(err, LADLE_ETYPE, "%s: column '%s' is %s, but %s in %s", file->path, name,
                           ladle_dtype_name(c->type, b1, sizeof b1),
                           ladle_dtype_name(p->schema.types[k], b2, sizeof b2), f0->path);
      }
      s->col_index[f * s->ncols + k] = j;
    }
  }
  if (st != LADLE_OK) {
    ladle_plan_destroy(p);
    return st;
  }
  *out = p;
  return LADLE_OK;
}

typedef struct read_job {
  const pq_source *s;
  size_t *unit_file, *unit_rg; /* per output chunk */
  ladle_table *t;
} read_job;

static ladle_status read_task(void *vctx, size_t i, ladle_error *err) {
  read_job *j = vctx;
  size_t u = i / j->s->ncols, k = i % j->s->ncols;
  size_t f = j->unit_file[u];
  return ladle_pq_read_chunk(j->s->files[f], j->unit_rg[u], j->s->col_index[f * j->s->ncols + k],
                             &j->t->chunks[u].columns[k], err);
}

ladle_status ladle_exec_scan_parquet(exec_state *st, const ladle_plan *p, ladle_table **out,
                                     ladle_error *err);
ladle_status ladle_exec_scan_parquet(exec_state *st, const ladle_plan *p, ladle_table **out,
                                     ladle_error *err) {
  const pq_source *s = p->source;
  /* the units to read: every (file, row group), stopping at n_rows */
  size_t nunits = 0;
  for (size_t f = 0; f < s->nfiles; f++) nunits += s->files[f]->nrow_groups;
  size_t *uf = malloc(LADLE_MAX(nunits, 1) * sizeof *uf), *ur = malloc(LADLE_MAX(nunits, 1) * sizeof *ur);
  if (uf == NULL || ur == NULL) {
    free(uf);
    free(ur);
    return LADLE_OOM(err, "parquet units");
  }
  size_t n = 0;
  int64_t rows = 0;
  for (size_t f = 0; f < s->nfiles; f++)
    for (size_t g = 0; g < s->files[f]->nrow_groups; g++) {
      if (s->n_rows >= 0 && rows >= s->n_rows) break;
      if (s->files[f]->row_groups[g].num_rows == 0) continue;
      uf[n] = f;
      ur[n++] = g;
      rows += s->files[f]->row_groups[g].num_rows;
    }
  ladle_table *t;
  ladle_status rc = ladle_table_create(&p->schema, n, &t, err);
  if (rc == LADLE_OK) {
    for (size_t u = 0; u < n; u++) t->chunks[u].length = s->files[uf[u]]->row_groups[ur[u]].num_rows;
    read_job j = {s, uf, ur, t};
    rc = ladle_pool_run(st->k.pool, n * s->ncols, read_task, &j, err);
    ladle_table_seal(t);
  }
  free(uf);
  free(ur);
  if (rc != LADLE_OK) {
    ladle_table_release(t);
    return rc;
  }
  if (s->n_rows >= 0 && t->num_rows > s->n_rows) {
    /* trim the last partition to n_rows */
    int64_t keep = s->n_rows;
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
