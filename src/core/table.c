/* table.c — schemas, refcounted tables of partitions, and the public table
 * builder. A table owns its schema and chunks; columns in chunks own buffer refs. */
#include "core.h"

ladle_status ladle_schema_init(ladle_schema *s, size_t n, ladle_error *err) {
  s->n = n;
  s->names = calloc(LADLE_MAX(n, 1), sizeof *s->names);
  s->types = calloc(LADLE_MAX(n, 1), sizeof *s->types);
  if (s->names == NULL || s->types == NULL) {
    free(s->names);
    free(s->types);
    memset(s, 0, sizeof *s);
    return LADLE_OOM(err, "schema");
  }
  return LADLE_OK;
}

ladle_status ladle_schema_set(ladle_schema *s, size_t i, const char *name, ladle_dtype type,
                              ladle_error *err) {
  char *copy = ladle_strdup(name);
  if (copy == NULL) return LADLE_OOM(err, "column name");
  free(s->names[i]);
  s->names[i] = copy;
  s->types[i] = type;
  return LADLE_OK;
}

ladle_status ladle_schema_copy(const ladle_schema *src, ladle_schema *dst, ladle_error *err) {
  ladle_schema s;
  LADLE_RETURN_NOT_OK(ladle_schema_init(&s, src->n, err));
  for (size_t i = 0; i < src->n; i++) {
    ladle_status st = ladle_schema_set(&s, i, src->names[i], src->types[i], err);
    if (st != LADLE_OK) {
      ladle_schema_release(&s);
      return st;
    }
  }
  *dst = s;
  return LADLE_OK;
}

void ladle_schema_release(ladle_schema *s) {
  if (s->names != NULL)
    for (size_t i = 0; i < s->n; i++) free(s->names[i]);
  free(s->names);
  free(s->types);
  memset(s, 0, sizeof *s);
}

int64_t ladle_schema_find(const ladle_schema *s, const char *name) {
  for (size_t i = 0; i < s->n; i++)
    if (s->names[i] != NULL && strcmp(s->names[i], name) == 0) return (int64_t)i;
  return -1;
}

ladle_status ladle_table_create(const ladle_schema *schema, size_t nchunks, ladle_table **out,
                                ladle_error *err) {
  ladle_table *t = calloc(1, sizeof *t);
  if (t == NULL) return LADLE_OOM(err, "table");
  atomic_init(&t->refcount, 1);
  ladle_status st = ladle_schema_copy(schema, &t->schema, err);
  if (st != LADLE_OK) {
    free(t);
    return st;
  }
  t->nchunks = nchunks;
  t->chunks = calloc(LADLE_MAX(nchunks, 1), sizeof *t->chunks);
  if (t->chunks == NULL) goto oom;
  for (size_t k = 0; k < nchunks; k++) {
    t->chunks[k].columns = calloc(LADLE_MAX(schema->n, 1), sizeof(ladle_column));
    if (t->chunks[k].columns == NULL) goto oom;
  }
  *out = t;
  return LADLE_OK;
oom:
  ladle_table_release(t);
  return LADLE_OOM(err, "table chunks");
}

void ladle_table_seal(ladle_table *t) {
  t->num_rows = 0;
  for (size_t k = 0; k < t->nchunks; k++) t->num_rows += t->chunks[k].length;
  for (size_t k = 0; k < t->nchunks; k++) t->chunks[k].table_rows = t->num_rows;
}

ladle_table *ladle_table_ref(ladle_table *t) {
  if (t != NULL) atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
  return t;
}

void ladle_table_release(ladle_table *t) {
  if (t == NULL) return;
  if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
  if (t->chunks != NULL) {
    for (size_t k = 0; k < t->nchunks; k++) {
      if (t->chunks[k].columns == NULL) continue;
      for (size_t i = 0; i < t->schema.n; i++) ladle_column_release(&t->chunks[k].columns[i]);
      free(t->chunks[k].columns);
    }
  }
  free(t->chunks);
  ladle_schema_release(&t->schema);
  free(t);
}

int64_t ladle_table_num_rows(const ladle_table *t) { return t->num_rows; }
size_t ladle_table_num_columns(const ladle_table *t) { return t->schema.n; }

ladle_status ladle_table_concat_column_pool(const ladle_table *t, size_t i, struct ladle_pool *pool,
                                            ladle_column *out, ladle_error *err) {
  if (t->nchunks == 0) return ladle_column_alloc(t->schema.types[i], 0, false, 0, out, err);
  ladle_column *cols = malloc(t->nchunks * sizeof *cols);
  if (cols == NULL) return LADLE_OOM(err, "concat");
  for (size_t k = 0; k < t->nchunks; k++) cols[k] = t->chunks[k].columns[i];
  ladle_status st = ladle_column_concat_pool(cols, t->nchunks, pool, out, err);
  free(cols);
  return st;
}

ladle_status ladle_table_concat_column(const ladle_table *t, size_t i, ladle_column *out,
                                       ladle_error *err) {
  return ladle_table_concat_column_pool(t, i, NULL, out, err);
}

ladle_status ladle_table_combine(const ladle_table *t, ladle_table **out, ladle_error *err) {
  ladle_table *r;
  LADLE_RETURN_NOT_OK(ladle_table_create(&t->schema, 1, &r, err));
  for (size_t i = 0; i < t->schema.n; i++) {
    ladle_status st = ladle_table_concat_column(t, i, &r->chunks[0].columns[i], err);
    if (st != LADLE_OK) {
      ladle_table_release(r);
      return st;
    }
  }
  r->chunks[0].length = t->num_rows;
  r->dist = t->dist;
  ladle_table_seal(r);
  *out = r;
  return LADLE_OK;
}

/* Rows per slice when a chunk of len rows is cut into slices of at most
 * `rows`: equal slices (a multiple of 64 rows, but the last) with `even`,
 * else `rows` each. */
static int64_t slice_rows(int64_t len, int64_t rows, bool even) {
  if (!even || len <= rows) return rows;
  int64_t pieces = (len + rows - 1) / rows;
  int64_t r = (len + pieces - 1) / pieces;
  return LADLE_MIN((r + 63) / 64 * 64, rows);
}

static ladle_status rechunk(const ladle_table *t, int64_t rows, bool even, ladle_table **out,
                            ladle_error *err);

ladle_status ladle_table_rechunk(const ladle_table *t, int64_t rows, ladle_table **out,
                                 ladle_error *err) {
  return rechunk(t, rows, false, out, err);
}

ladle_status ladle_table_split(const ladle_table *t, int64_t rows, ladle_table **out,
                               ladle_error *err) {
  return rechunk(t, rows, true, out, err);
}

static ladle_status rechunk(const ladle_table *t, int64_t rows, bool even, ladle_table **out,
                            ladle_error *err) {
  if (rows <= 0) rows = INT64_MAX;
  size_t n = 0;
  for (size_t k = 0; k < t->nchunks; k++) {
    int64_t r = slice_rows(t->chunks[k].length, rows, even);
    n += (size_t)((t->chunks[k].length + r - 1) / r);
  }
  ladle_table *r;
  LADLE_RETURN_NOT_OK(ladle_table_create(&t->schema, n, &r, err));
  size_t j = 0;
  for (size_t k = 0; k < t->nchunks; k++) {
    int64_t step = slice_rows(t->chunks[k].length, rows, even);
    for (int64_t off = 0; off < t->chunks[k].length; off += step, j++) {
      int64_t len = LADLE_MIN(step, t->chunks[k].length - off);
      r->chunks[j].length = len;
      for (size_t i = 0; i < t->schema.n; i++) {
        ladle_status st =
            ladle_column_slice(&t->chunks[k].columns[i], off, len, &r->chunks[j].columns[i], err);
        if (st != LADLE_OK) {
          ladle_table_release(r);
          return st;
        }
      }
    }
  }
  r->dist = t->dist;
  ladle_table_seal(r);
  *out = r;
  return LADLE_OK;
}

/* ------------------------------------------------------------ the builder */

struct ladle_table_builder {
  ladle_schema schema;
  ladle_column *cols;
  size_t n, cap;
  int64_t length;
};

ladle_status ladle_table_builder_create(ladle_table_builder **out, ladle_error *err) {
  ladle_table_builder *b = calloc(1, sizeof *b);
  if (b == NULL) return LADLE_OOM(err, "table builder");
  b->length = -1;
  *out = b;
  return LADLE_OK;
}

void ladle_table_builder_destroy(ladle_table_builder *b) {
  if (b == NULL) return;
  for (size_t i = 0; i < b->n; i++) {
    free(b->schema.names[i]);
    ladle_column_release(&b->cols[i]);
  }
  free(b->schema.names);
  free(b->schema.types);
  free(b->cols);
  free(b);
}

ladle_status ladle_table_builder_add(ladle_table_builder *b, const char *name, ladle_dtype type,
                                     int64_t length, const void *values, const uint8_t *validity,
                                     ladle_error *err) {
  if (b->length >= 0 && length != b->length)
    return ladle_err_set(err, LADLE_EINVAL, "column '%s' has %lld rows, the table has %lld", name,
                         (long long)length, (long long)b->length);
  for (size_t i = 0; i < b->n; i++)
    if (strcmp(b->schema.names[i], name) == 0)
      return ladle_err_set(err, LADLE_EINVAL, "duplicate column name '%s'", name);
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 8;
    char **names = realloc(b->schema.names, cap * sizeof *names);
    if (names == NULL) return LADLE_OOM(err, "builder");
    b->schema.names = names;
    ladle_dtype *types = realloc(b->schema.types, cap * sizeof *types);
    if (types == NULL) return LADLE_OOM(err, "builder");
    b->schema.types = types;
    ladle_column *cols = realloc(b->cols, cap * sizeof *cols);
    if (cols == NULL) return LADLE_OOM(err, "builder");
    b->cols = cols;
    b->cap = cap;
  }
  if (type.id == LADLE_TYPE_BINARY || type.id == LADLE_TYPE_LIST ||
      type.id == LADLE_TYPE_CATEGORICAL)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "table builder: column '%s' of type %s; import it "
                         "through the Arrow C Data Interface instead",
                         name, ladle_dtype_name(type, NULL, 0));
  bool nullable = validity != NULL || type.id == LADLE_TYPE_NULL;
  int64_t chars = 0;
  const char *const *strs = values;
  if (type.id == LADLE_TYPE_STRING)
    for (int64_t i = 0; i < length; i++) {
      if (strs[i] != NULL)
        chars += (int64_t)strlen(strs[i]);
      else
        nullable = true;
    }
  ladle_column c;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(type, length, nullable, chars, &c, err));
  if (type.id == LADLE_TYPE_STRING) {
    int64_t *o = LADLE_COL_MUT(&c, int64_t), pos = 0;
    for (int64_t i = 0; i < length; i++) {
      bool valid = strs[i] != NULL && (validity == NULL || validity[i]);
      if (valid) {
        size_t len = strlen(strs[i]);
        memcpy(LADLE_COL_CHARS_MUT(&c) + pos, strs[i], len);
        pos += (int64_t)len;
      }
      o[i + 1] = pos;
      if (!valid) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), i, false);
    }
  } else if (type.id != LADLE_TYPE_NULL) {
    size_t w = ladle_type_width(type.id);
    memcpy(LADLE_COL_MUT(&c, char), values, (size_t)length * w);
    if (type.id == LADLE_TYPE_BOOL) {
      uint8_t *v = LADLE_COL_MUT(&c, uint8_t);
      for (int64_t i = 0; i < length; i++) v[i] = v[i] != 0;
    }
    if (validity != NULL)
      for (int64_t i = 0; i < length; i++)
        if (!validity[i]) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), i, false);
  }
  ladle_column_finish_nulls(&c);
  char *copy = ladle_strdup(name);
  if (copy == NULL) {
    ladle_column_release(&c);
    return LADLE_OOM(err, "column name");
  }
  b->schema.names[b->n] = copy;
  b->schema.types[b->n] = type;
  b->cols[b->n] = c;
  b->n++;
  b->schema.n = b->n;
  b->length = length;
  return LADLE_OK;
}

ladle_status ladle_table_builder_finish(ladle_table_builder *b, int64_t morsel_rows,
                                        ladle_table **out_table, ladle_error *err) {
  ladle_table *one;
  ladle_status st = ladle_table_create(&b->schema, 1, &one, err);
  if (st != LADLE_OK) {
    ladle_table_builder_destroy(b);
    return st;
  }
  for (size_t i = 0; i < b->n; i++) {
    one->chunks[0].columns[i] = b->cols[i];
    memset(&b->cols[i], 0, sizeof b->cols[i]);
  }
  one->chunks[0].length = b->length < 0 ? 0 : b->length;
  ladle_table_seal(one);
  ladle_table_builder_destroy(b);
  if (morsel_rows <= 0 || one->num_rows <= morsel_rows) {
    *out_table = one;
    return LADLE_OK;
  }
  st = ladle_table_rechunk(one, morsel_rows, out_table, err);
  ladle_table_release(one);
  return st;
}
