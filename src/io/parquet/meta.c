/* meta.c — opening a Parquet file: magic bytes, the footer, and the thrift
 * FileMetaData (schema, row groups, column chunks, statistics). Leaf columns are
 * mapped to ladle types here; a column ladle cannot read is marked unsupported with
 * the reason, and the scan refuses it by name if it is selected. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parquet.h"

typedef struct schema_elem {
  int type, type_length, repetition, num_children, converted;
  int scale, precision;
  const uint8_t *name;
  int64_t name_len;
  int logical;     /* LogicalType union field id, 0 = none */
  int int_bits;    /* INTEGER */
  bool int_signed; /* INTEGER */
  bool ts_utc;     /* TIMESTAMP */
  int ts_unit;     /* 1 millis, 2 micros, 3 nanos */
} schema_elem;

static void read_time_unit(ladle_thrift *t, int *unit) {
  int16_t last = 0, id;
  int ft;
  while (ladle_thrift_field(t, &last, &id, &ft)) {
    *unit = id;
    ladle_thrift_skip(t, ft);
  }
}

static void read_logical(ladle_thrift *t, schema_elem *e) {
  int16_t last = 0, id;
  int ft;
  /* a LogicalType with no member (or only members that are not structs: a
   * damaged footer) is an undefined one: pyarrow then reads the physical type
   * alone, whatever the converted type says */
  e->logical = -1;
  while (ladle_thrift_field(t, &last, &id, &ft)) {
    if (ft != LADLE_TT_STRUCT) { /* every member is a struct */
      ladle_thrift_skip(t, ft);
      continue;
    }
    e->logical = id;
    int16_t l2 = 0, id2;
    int ft2;
    while (ladle_thrift_field(t, &l2, &id2, &ft2)) {
      if (id == 10 && id2 == 1) {
        /* bitWidth is an i8: a raw byte in the compact protocol, not a varint */
        if (ft2 == LADLE_TT_I8) {
          if (t->p >= t->end) ladle_thrift_fail(t, "truncated byte");
          else e->int_bits = (int8_t)*t->p++;
        } else {
          e->int_bits = (int)ladle_thrift_int(t);
        }
      }
      else if (id == 10 && id2 == 2) e->int_signed = ladle_thrift_bool(t, ft2);
      else if (id == 5 && id2 == 1) e->scale = (int)ladle_thrift_int(t);
      else if (id == 5 && id2 == 2) e->precision = (int)ladle_thrift_int(t);
      else if ((id == 8 || id == 7) && id2 == 1) e->ts_utc = ladle_thrift_bool(t, ft2);
      else if ((id == 8 || id == 7) && id2 == 2 && ft2 == LADLE_TT_STRUCT) read_time_unit(t, &e->ts_unit);
      else ladle_thrift_skip(t, ft2);
    }
  }
}

static void read_schema_elem(ladle_thrift *t, schema_elem *e) {
  memset(e, 0, sizeof *e);
  e->type = -1;
  e->converted = -1;
  int16_t last = 0, id;
  int ft;
  while (ladle_thrift_field(t, &last, &id, &ft)) {
    switch (id) {
      case 1: e->type = (int)ladle_thrift_int(t); break;
      case 2: e->type_length = (int)ladle_thrift_int(t); break;
      case 3: e->repetition = (int)ladle_thrift_int(t); break;
      case 4: e->name = ladle_thrift_binary(t, &e->name_len); break;
      case 5: e->num_children = (int)ladle_thrift_int(t); break;
      case 6: e->converted = (int)ladle_thrift_int(t); break;
      case 7: e->scale = (int)ladle_thrift_int(t); break;
      case 8: e->precision = (int)ladle_thrift_int(t); break;
      case 10:
        if (ft == LADLE_TT_STRUCT) read_logical(t, e);
        else ladle_thrift_skip(t, ft);
        break;
      default: ladle_thrift_skip(t, ft);
    }
  }
}

static void read_stats(ladle_thrift *t, ladle_pq_stats *s) {
  int16_t last = 0, id;
  int ft;
  const uint8_t *old_min = NULL, *old_max = NULL;
  int64_t old_min_len = 0, old_max_len = 0;
  while (ladle_thrift_field(t, &last, &id, &ft)) {
    switch (id) {
      case 1: old_max = ladle_thrift_binary(t, &old_max_len); break;
      case 2: old_min = ladle_thrift_binary(t, &old_min_len); break;
      case 3:
        s->null_count = ladle_thrift_int(t);
        s->has_null_count = true;
        break;
      case 5:
        s->max = ladle_thrift_binary(t, &s->max_len);
        s->has_max = true;
        break;
      case 6:
        s->min = ladle_thrift_binary(t, &s->min_len);
        s->has_min = true;
        break;
      default: ladle_thrift_skip(t, ft);
    }
  }
  (void)old_min;
  (void)old_max;
  (void)old_min_len;
  (void)old_max_len; /* the deprecated min/max have an unreliable order; unused */
}

static void read_column_meta(ladle_thrift *t, ladle_pq_chunk_meta *m) {
  int16_t last = 0, id;
  int ft;
  unsigned have = 0; /* the required fields seen, bit = field id */
  while (ladle_thrift_field(t, &last, &id, &ft)) {
    if (id > 0 && id < 16) have |= 1u << id;
    switch (id) {
      case 1: m->physical = (int)ladle_thrift_int(t); break;
      case 4: m->codec = (int)ladle_thrift_int(t); break;
      case 5: m->num_values = ladle_thrift_int(t); break;
      case 6: m->total_uncompressed_size = ladle_thrift_int(t); break;
      case 7: m->total_compressed_size = ladle_thrift_int(t); break;
      case 9: m->data_page_offset = ladle_thrift_int(t); break;
      case 11: m->dictionary_page_offset = ladle_thrift_int(t); break;
      case 12:
        if (ft == LADLE_TT_STRUCT) read_stats(t, &m->stats);
        else ladle_thrift_skip(t, ft);
        break;
      default: ladle_thrift_skip(t, ft);
    }
  }
  /* type, codec, num_values, both sizes and data_page_offset are required: a
   * footer without them (a mutated one, misread past a broken field) would read
   * as a chunk of no values */
  unsigned need = 1u << 1 | 1u << 4 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 9;
  if (!t->failed && (have & need) != need)
    ladle_thrift_fail(t, "column chunk metadata without its required fields (type, codec, num_values, sizes, data_page_offset)");
}

static void read_column_chunk(ladle_thrift *t, ladle_pq_chunk_meta *m) {
  int16_t last = 0, id;
  int ft;
  m->dictionary_page_offset = -1;
  m->data_page_offset = -1;
  bool have_meta = false;
  while (ladle_thrift_field(t, &last, &id, &ft)) {
    if (id == 1) {
      ladle_thrift_fail(t, "column chunks in other files (file_path) are not supported");
    } else if (id == 3 && ft == LADLE_TT_STRUCT) {
      read_column_meta(t, m);
      have_meta = true;
    } else {
      ladle_thrift_skip(t, ft);
    }
  }
  if (!have_meta && !t->failed) ladle_thrift_fail(t, "a column chunk without metadata");
}

/* Maps a leaf to a ladle type, or says why not. */
static void map_type(const schema_elem *e, ladle_pq_column *c) {
  c->supported = true;
  c->time_mul = 1;
  int lt = e->logical, cv = e->converted;
  if (lt < 0) lt = 0, cv = -1; /* an undefined logical type: the physical type alone */
  if (lt == 11) { /* UNKNOWN: a column of nulls (pyarrow's and Polars' Null), whatever is stored */
    c->type = ladle_dtype_make(LADLE_TYPE_NULL);
    return;
  }
  if (lt == 5 || cv == 5) {
    /* DECIMAL on INT32, INT64, FIXED_LEN_BYTE_ARRAY (<= 16 bytes) or BYTE_ARRAY */
    bool phys_ok = e->type == LADLE_PQ_INT32 || e->type == LADLE_PQ_INT64 ||
                   e->type == LADLE_PQ_BYTE_ARRAY ||
                   (e->type == LADLE_PQ_FIXED_LEN_BYTE_ARRAY && e->type_length >= 1 &&
                    e->type_length <= 16);
    if (phys_ok && e->precision >= 1 && e->precision <= 38 && e->scale >= 0 &&
        e->scale <= e->precision) {
      c->type = ladle_dtype_decimal(e->precision, e->scale);
      return;
    }
    c->supported = false;
    snprintf(c->why, sizeof c->why,
             "DECIMAL(%d, %d) on physical type %d is not supported (precision 1..38 in at most 16 bytes)",
             e->precision, e->scale, e->type);
    return;
  }
  if ((lt == 7 || cv == 7 || cv == 8) && (e->type == LADLE_PQ_INT32 || e->type == LADLE_PQ_INT64)) {
    /* TIME: millis in INT32, micros or nanos in INT64; ladle keeps nanoseconds */
    int unit = lt == 7 ? e->ts_unit : cv == 7 ? 1 : 2;
    if ((e->type == LADLE_PQ_INT32) == (unit == 1) && unit >= 1 && unit <= 3) {
      c->type = ladle_dtype_make(LADLE_TYPE_TIME);
      c->time_mul = unit == 1 ? 1000000 : unit == 2 ? 1000 : 1;
      return;
    }
  }
  switch (e->type) {
    case LADLE_PQ_BOOLEAN: c->type = ladle_dtype_make(LADLE_TYPE_BOOL); return;
    case LADLE_PQ_INT32:
      if (lt == 6 || cv == 6) {
        c->type = ladle_dtype_make(LADLE_TYPE_DATE);
      } else if (lt == 10 || (cv >= 11 && cv <= 17)) {
        int bits = lt == 10 ? e->int_bits : (cv == 11 || cv == 15) ? 8 : (cv == 12 || cv == 16) ? 16 : 32;
        bool sign = lt == 10 ? e->int_signed : cv >= 15;
        ladle_type_id id = bits == 8    ? (sign ? LADLE_TYPE_INT8 : LADLE_TYPE_UINT8)
                           : bits == 16 ? (sign ? LADLE_TYPE_INT16 : LADLE_TYPE_UINT16)
                                        : (sign ? LADLE_TYPE_INT32 : LADLE_TYPE_UINT32);
        c->type = ladle_dtype_make(id);
      } else if (lt == 5 || cv == 5) {
        break;
      } else if (lt == 7 || cv == 7) {
        break;
      } else {
        c->type = ladle_dtype_make(LADLE_TYPE_INT32);
      }
      return;
    case LADLE_PQ_INT64:
      if (lt == 8 || cv == 9 || cv == 10) {
        int unit = lt == 8 ? e->ts_unit : cv == 9 ? 1 : 2;
        bool utc = lt == 8 ? e->ts_utc : true;
        ladle_time_unit u = unit == 1 ? LADLE_TIME_MS : unit == 3 ? LADLE_TIME_NS : LADLE_TIME_US;
        c->type = ladle_dtype_temporal(LADLE_TYPE_DATETIME, u, utc ? "UTC" : NULL);
      } else if (lt == 10 || cv == 14 || cv == 18) {
        bool sign = lt == 10 ? e->int_signed : cv == 18;
        c->type = ladle_dtype_make(sign ? LADLE_TYPE_INT64 : LADLE_TYPE_UINT64);
      } else if (lt == 5 || cv == 5 || lt == 7 || cv == 8) {
        break;
      } else {
        c->type = ladle_dtype_make(LADLE_TYPE_INT64);
      }
      return;
    case LADLE_PQ_INT96: c->type = ladle_dtype_temporal(LADLE_TYPE_DATETIME, LADLE_TIME_NS, NULL); return;
    case LADLE_PQ_FLOAT: c->type = ladle_dtype_make(LADLE_TYPE_FLOAT32); return;
    case LADLE_PQ_DOUBLE: c->type = ladle_dtype_make(LADLE_TYPE_FLOAT64); return;
    case LADLE_PQ_BYTE_ARRAY:
      if (lt == 1 || lt == 4 || lt == 12 || cv == 0 || cv == 4 || cv == 19) {
        c->type = ladle_dtype_make(LADLE_TYPE_STRING);
        return;
      }
      c->type = ladle_dtype_make(LADLE_TYPE_BINARY);
      return;
    case LADLE_PQ_FIXED_LEN_BYTE_ARRAY:
      if (lt == 15 && e->type_length == 2) {
        c->type = ladle_dtype_make(LADLE_TYPE_FLOAT32); /* FLOAT16, widened */
        return;
      }
      if (lt == 0 && cv < 0 && e->type_length >= 0) {
        c->type = ladle_dtype_make(LADLE_TYPE_BINARY); /* fixed-size bytes, as Polars */
        return;
      }
      break;
    default: break;
  }
  c->supported = false;
  snprintf(c->why, sizeof c->why, "physical type %d with logical type %d / converted type %d is not supported yet",
           e->type, lt, cv);
  if (lt == 7 || cv == 7 || cv == 8) snprintf(c->why, sizeof c->why, "TIME in physical type %d is not valid", e->type);
}

/* A LIST-annotated group of one primitive element, as one leaf column named
 * after the group: three levels (`group (LIST) { repeated group list {
 * element } }`) or the legacy two (`group (LIST) { repeated element }`).
 * Consumes the group's elements and returns true; false (nothing consumed)
 * for other shapes, which the caller walks as nested columns. */
static bool list_column(ladle_thrift *t, const schema_elem *elems, int64_t nelems, int64_t *pos,
                        ladle_pq_column *cols, size_t *ncols) {
  const schema_elem *g = &elems[*pos], *r = &elems[*pos + 1], *leaf;
  if (r->repetition != 2) return false;
  int64_t used;
  if (r->num_children == 0) {
    leaf = r; /* two levels: the repeated field is the element, never null */
    used = 2;
  } else if (r->num_children == 1 && *pos + 2 < nelems && elems[*pos + 2].num_children == 0 &&
             elems[*pos + 2].repetition != 2) {
    leaf = &elems[*pos + 2];
    used = 3;
  } else {
    return false;
  }
  ladle_pq_column *c = &cols[(*ncols)++];
  char name[512];
  if (snprintf(name, sizeof name, "%.*s", (int)g->name_len, g->name ? (const char *)g->name : "") < 0)
    name[0] = '\0';
  c->name = ladle_strdup(name);
  if (c->name == NULL) ladle_thrift_fail(t, "out of memory for a column name");
  c->physical = leaf->type;
  c->type_length = leaf->type_length;
  c->max_rep = 1;
  c->list_def = g->repetition == 1 ? 1 : 0;
  c->max_def = c->list_def + 1 + (used == 3 && leaf->repetition == 1 ? 1 : 0);
  map_type(leaf, c);
  c->elem = c->type;
  if (c->supported) {
    c->type = ladle_dtype_list(c->elem.id);
    if (c->elem.id == LADLE_TYPE_NULL) {
      c->supported = false;
      snprintf(c->why, sizeof c->why,
               "a List(Null) column (a list of logical type UNKNOWN) is not supported yet");
    } else if (c->type.id != LADLE_TYPE_LIST) {
      char b[64];
      c->supported = false;
      snprintf(c->why, sizeof c->why, "lists of %s are not supported yet",
               ladle_dtype_name(c->elem, b, sizeof b));
    }
  }
  *pos += used;
  return true;
}

/* Walks the schema tree in DFS order, appending leaves. */
static void walk_schema(ladle_thrift *t, const schema_elem *elems, int64_t nelems, int64_t *pos,
                        const char *prefix, bool nested, ladle_pq_column *cols, size_t *ncols,
                        size_t cap) {
  if (t->depth > 32) {
    ladle_thrift_fail(t, "schema nested more than 32 levels deep");
    return;
  }
  if (*pos >= nelems) {
    ladle_thrift_fail(t, "schema has fewer elements than its children counts say");
    return;
  }
  const schema_elem *e = &elems[*pos];
  if (!nested && e->num_children == 1 && e->repetition != 2 && (e->converted == 3 || e->logical == 3) &&
      *pos + 1 < nelems && *ncols < cap) {
    if (list_column(t, elems, nelems, pos, cols, ncols)) return;
  }
  (*pos)++;
  char name[512];
  /* long nested names are cut at 511 bytes (truncation is intended) */
  if (snprintf(name, sizeof name, "%s%s%.*s", prefix, prefix[0] ? "." : "", (int)e->name_len,
               e->name ? (const char *)e->name : "") < 0)
    name[0] = '\0';
  if (e->num_children > 0) {
    if (e->num_children > nelems) {
      ladle_thrift_fail(t, "schema element with more children than elements");
      return;
    }
    t->depth++;
    for (int i = 0; i < e->num_children && !t->failed; i++)
      walk_schema(t, elems, nelems, pos, name, true, cols, ncols, cap);
    t->depth--;
    return;
  }
  if (*ncols >= cap) {
    ladle_thrift_fail(t, "more leaf columns than schema elements");
    return;
  }
  ladle_pq_column *c = &cols[(*ncols)++];
  c->name = ladle_strdup(name);
  c->physical = e->type;
  c->type_length = e->type_length;
  c->max_def = e->repetition == 1 ? 1 : 0;
  if (nested || e->repetition == 2) {
    c->supported = false;
    snprintf(c->why, sizeof c->why, "nested and repeated columns (lists, structs) are not supported yet");
  } else {
    map_type(e, c);
  }
}

void ladle_pq_close(ladle_pq_file *f) {
  if (f == NULL) return;
  if (f->fd >= 0) close(f->fd);
  if (f->map != NULL) munmap((void *)f->map, (size_t)f->file_size);
  for (size_t i = 0; i < f->ncolumns; i++) free(f->columns[i].name);
  free(f->columns);
  for (size_t g = 0; g < f->nrow_groups; g++) free(f->row_groups[g].columns);
  free(f->row_groups);
  free(f->footer);
  free(f->path);
  free(f);
}

ladle_status ladle_pq_open(const char *path, ladle_pq_file **out, ladle_error *err) {
  ladle_pq_file *f = calloc(1, sizeof *f);
  if (f == NULL) return LADLE_OOM(err, "parquet file");
  f->fd = -1;
  f->path = ladle_strdup(path);
  ladle_status st = LADLE_OK;
  schema_elem *elems = NULL;
  if (f->path == NULL) {
    st = LADLE_OOM(err, "path");
    goto done;
  }
  f->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (f->fd < 0) {
    st = ladle_err_set(err, LADLE_EIO, "%s: cannot open: %s", path, strerror(errno));
    goto done;
  }
  struct stat sb;
  if (fstat(f->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = ladle_err_set(err, LADLE_EIO, "%s: not a regular file", path);
    goto done;
  }
  f->file_size = (int64_t)sb.st_size;
  /* column chunks are read from a read-only mapping (the page cache's pages,
   * not a copy); where the file cannot be mapped, with pread */
  if (f->file_size > 0 && ladle_use_mmap()) {
    void *map = mmap(NULL, (size_t)f->file_size, PROT_READ, MAP_PRIVATE, f->fd, 0);
    f->map = map == MAP_FAILED ? NULL : map;
  }
  uint8_t tail[8], head[4];
  if (f->file_size < 12) {
    st = ladle_err_set(err, LADLE_ECORRUPT, "%s: %lld bytes is too small for a Parquet file", path,
                       (long long)f->file_size);
    goto done;
  }
  if ((st = ladle_read_at(f->fd, path, 0, head, 4, err)) != LADLE_OK) goto done;
  if ((st = ladle_read_at(f->fd, path, f->file_size - 8, tail, 8, err)) != LADLE_OK) goto done;
  if (memcmp(head, "PAR1", 4) != 0 || memcmp(tail + 4, "PAR1", 4) != 0) {
    st = ladle_err_set(err, LADLE_ECORRUPT,
                       memcmp(tail + 4, "PARE", 4) == 0
                           ? "%s: encrypted Parquet files are not supported"
                           : "%s: not a Parquet file (no PAR1 magic bytes)",
                       path);
    goto done;
  }
  uint32_t flen = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
  if ((int64_t)flen > f->file_size - 12 || flen == 0) {
    st = ladle_err_set(err, LADLE_ECORRUPT, "%s: footer length %u does not fit a file of %lld bytes",
                       path, flen, (long long)f->file_size);
    goto done;
  }
  f->footer = malloc(flen);
  if (f->footer == NULL) {
    st = LADLE_OOM(err, "footer");
    goto done;
  }
  if ((st = ladle_read_at(f->fd, path, f->file_size - 8 - flen, f->footer, flen, err)) != LADLE_OK) goto done;
  char what[600];
  snprintf(what, sizeof what, "%s: footer", path);
  ladle_thrift t = {f->footer, f->footer + flen, what, err, false, 0, 0};
  int16_t last = 0, id;
  int ft;
  int64_t nelems = 0;
  bool have_schema = false;
  while (ladle_thrift_field(&t, &last, &id, &ft)) {
    if (id == 2 && ft == LADLE_TT_LIST) {
      if (have_schema) {
        ladle_thrift_fail(&t, "two schemas");
        break;
      }
      int et;
      nelems = ladle_thrift_list(&t, &et);
      elems = calloc((size_t)LADLE_MAX(nelems, 1), sizeof *elems);
      if (elems == NULL) {
        st = LADLE_OOM(err, "schema");
        goto done;
      }
      for (int64_t i = 0; i < nelems && !t.failed; i++) read_schema_elem(&t, &elems[i]);
      have_schema = true;
    } else if (id == 3) {
      f->num_rows = ladle_thrift_int(&t);
    } else if (id == 4 && ft == LADLE_TT_LIST) {
      if (!have_schema) {
        ladle_thrift_fail(&t, "row groups before the schema");
        break;
      }
      /* leaves first, so each row group knows its column count */
      if (f->columns == NULL) {
        f->columns = calloc((size_t)LADLE_MAX(nelems, 1), sizeof *f->columns);
        if (f->columns == NULL) {
          st = LADLE_OOM(err, "columns");
          goto done;
        }
        int64_t pos = 0;
        if (nelems == 0) ladle_thrift_fail(&t, "empty schema");
        else {
          const schema_elem *root = &elems[pos++];
          for (int i = 0; i < root->num_children && !t.failed; i++)
            walk_schema(&t, elems, nelems, &pos, "", false, f->columns, &f->ncolumns, (size_t)nelems);
        }
      }
      int et;
      if (f->row_groups != NULL) {
        ladle_thrift_fail(&t, "two row group lists");
        break;
      }
      int64_t ng = ladle_thrift_list(&t, &et);
      f->row_groups = calloc((size_t)LADLE_MAX(ng, 1), sizeof *f->row_groups);
      if (f->row_groups == NULL) {
        st = LADLE_OOM(err, "row groups");
        goto done;
      }
      for (int64_t g = 0; g < ng && !t.failed; g++) {
        ladle_pq_row_group *rg = &f->row_groups[g];
        f->nrow_groups++;
        int16_t l2 = 0, id2;
        int ft2;
        bool have_rows = false;
        while (ladle_thrift_field(&t, &l2, &id2, &ft2)) {
          if (id2 == 1 && ft2 == LADLE_TT_LIST) {
            if (rg->columns != NULL) {
              ladle_thrift_fail(&t, "a row group with two column lists");
              break;
            }
            int et2;
            int64_t nc = ladle_thrift_list(&t, &et2);
            if (nc != (int64_t)f->ncolumns) {
              ladle_thrift_fail(&t, "a row group's column count differs from the schema's");
              break;
            }
            rg->columns = calloc((size_t)LADLE_MAX(nc, 1), sizeof *rg->columns);
            if (rg->columns == NULL) {
              st = LADLE_OOM(err, "row group");
              goto done;
            }
            for (int64_t c = 0; c < nc && !t.failed; c++) read_column_chunk(&t, &rg->columns[c]);
          } else if (id2 == 3) {
            rg->num_rows = ladle_thrift_int(&t);
            have_rows = true;
          } else {
            ladle_thrift_skip(&t, ft2);
          }
        }
        if (!t.failed && rg->columns == NULL && f->ncolumns > 0) ladle_thrift_fail(&t, "a row group without columns");
        if (!t.failed && rg->num_rows < 0) ladle_thrift_fail(&t, "negative row count");
        if (!t.failed && !have_rows) ladle_thrift_fail(&t, "a row group without its row count");
      }
    } else {
      ladle_thrift_skip(&t, ft);
    }
  }
  if (t.failed) {
    st = LADLE_ECORRUPT;
    goto done;
  }
  if (!have_schema) {
    st = ladle_err_set(err, LADLE_ECORRUPT, "%s: footer has no schema", path);
    goto done;
  }
  if (f->columns == NULL) { /* no row groups: still list the columns */
    f->columns = calloc((size_t)LADLE_MAX(nelems, 1), sizeof *f->columns);
    if (f->columns == NULL) {
      st = LADLE_OOM(err, "columns");
      goto done;
    }
    int64_t pos = 0;
    if (nelems > 0) {
      const schema_elem *root = &elems[pos++];
      for (int i = 0; i < root->num_children && !t.failed; i++)
        walk_schema(&t, elems, nelems, &pos, "", false, f->columns, &f->ncolumns, (size_t)nelems);
    }
    if (t.failed) {
      st = LADLE_ECORRUPT;
      goto done;
    }
  }
  for (size_t i = 0; i < f->ncolumns; i++)
    if (f->columns[i].name == NULL) {
      st = LADLE_OOM(err, "column name");
      goto done;
    }
  /* every chunk's bytes must lie inside the file */
  for (size_t g = 0; g < f->nrow_groups; g++)
    for (size_t c = 0; c < f->ncolumns; c++) {
      const ladle_pq_chunk_meta *m = &f->row_groups[g].columns[c];
      if (f->row_groups[g].num_rows == 0 && m->num_values == 0) continue; /* nothing to read */
      int64_t start = m->dictionary_page_offset >= 4 && m->dictionary_page_offset < m->data_page_offset
                          ? m->dictionary_page_offset
                          : m->data_page_offset;
      if (start < 4 || m->total_compressed_size < 0 || start > f->file_size ||
          m->total_compressed_size > f->file_size - start || m->num_values < 0) {
        st = ladle_err_set(err, LADLE_ECORRUPT,
                           "%s: column '%s' of row group %zu points outside the file (offset %lld, %lld bytes)",
                           path, f->columns[c].name, g, (long long)start, (long long)m->total_compressed_size);
        goto done;
      }
    }
done:
  free(elems);
  if (st != LADLE_OK) {
    ladle_pq_close(f);
    return st;
  }
  *out = f;
  return LADLE_OK;
}
