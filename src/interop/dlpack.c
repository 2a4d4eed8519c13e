/* dlpack.c — a table's column (a result's) as a DLPack tensor. The tensor keeps
 * a reference on the column's buffer, so it stays valid after the table and the
 * result are destroyed; the deleter drops that reference. A column whose values
 * ladle borrowed from the caller (an in-memory frame's Arrow buffers) is copied
 * first: consumers such as torch ignore DLPack's read-only flag, and a write
 * through the tensor must not change the caller's frame. */
#include "interop.h"

typedef struct dl_ctx {
  ladle_column col; /* the references that keep data alive */
  int64_t shape[1];
  void (*before_release)(void *arg);
  void *arg;
} dl_ctx;

static void dl_deleter(DLManagedTensor *t) {
  if (t == NULL) return;
  dl_ctx *c = t->manager_ctx;
  if (c->before_release != NULL) c->before_release(c->arg);
  ladle_column_release(&c->col);
  free(c);
  free(t);
}

ladle_status ladle_dlpack_dtype(const char *name, ladle_dtype ty, int64_t nulls, DLDataType *out,
                                ladle_error *err) {
  char b1[64];
  DLDataType dt = {0, (uint8_t)(8 * ladle_type_width(ty.id)), 1};
  if (ty.id == LADLE_TYPE_BOOL)
    dt.code = 6;
  else if (ladle_type_is_float(ty.id))
    dt.code = 2;
  else if (ladle_type_is_integer(ty.id))
    dt.code = ladle_type_is_signed(ty.id) ? 0 : 1;
  else
    return ladle_err_set(err, LADLE_ETYPE,
                         "dlpack: column '%s' is %s; only numeric and boolean columns export "
                         "(cast it first)",
                         name, ladle_dtype_name(ty, b1, sizeof b1));
  if (nulls > 0)
    return ladle_err_set(err, LADLE_ETYPE,
                         "dlpack: column '%s' has %lld nulls; DLPack has no validity, use "
                         "fill_null first",
                         name, (long long)nulls);
  *out = dt;
  return LADLE_OK;
}

ladle_status ladle_dlpack_wrap(ladle_column *col, DLDataType dt, ladle_device_type device,
                               int device_id, void (*before_release)(void *arg), void *arg,
                               DLManagedTensor **out, ladle_error *err) {
  dl_ctx *c = calloc(1, sizeof *c);
  DLManagedTensor *m = calloc(1, sizeof *m);
  if (c == NULL || m == NULL) {
    free(c);
    free(m);
    return LADLE_OOM(err, "dlpack tensor");
  }
  c->col = *col;
  memset(col, 0, sizeof *col);
  c->shape[0] = c->col.length;
  c->before_release = before_release;
  c->arg = arg;
  m->dl_tensor.data = (void *)(uintptr_t)c->col.values;
  m->dl_tensor.device.device_type = device;
  m->dl_tensor.device.device_id = device_id;
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype = dt;
  m->dl_tensor.shape = c->shape;
  m->dl_tensor.strides = NULL;
  m->dl_tensor.byte_offset = 0;
  m->manager_ctx = c;
  m->deleter = dl_deleter;
  *out = m;
  return LADLE_OK;
}

/* Do the chunks' values sit back to back in one buffer? */
static bool contiguous(const ladle_table *t, size_t i) {
  size_t w = ladle_type_width(t->schema.types[i].id);
  for (size_t k = 1; k < t->nchunks; k++) {
    const ladle_column *a = &t->chunks[k - 1].columns[i], *b = &t->chunks[k].columns[i];
    if (a->owners[1] != b->owners[1]) return false;
    if ((const char *)a->values + a->length * (int64_t)w != (const char *)b->values) return false;
  }
  return true;
}

ladle_status ladle_table_export_dlpack(const ladle_table *t, size_t column, DLManagedTensor **out,
                                       ladle_error *err) {
  if (column >= t->schema.n)
    return ladle_err_set(err, LADLE_EINVAL, "dlpack: column %zu out of %zu", column, t->schema.n);
  int64_t nulls = 0;
  for (size_t k = 0; k < t->nchunks; k++) nulls += t->chunks[k].columns[column].null_count;
  DLDataType dt;
  LADLE_RETURN_NOT_OK(
      ladle_dlpack_dtype(t->schema.names[column], t->schema.types[column], nulls, &dt, err));
  ladle_column col;
  ladle_status st = LADLE_OK;
  bool borrowed = false;
  for (size_t k = 0; k < t->nchunks; k++) {
    const ladle_buffer *b = t->chunks[k].columns[column].owners[1];
    borrowed |= b != NULL && b->alloc == NULL;
  }
  if (t->nchunks > 0 && contiguous(t, column) && !borrowed) {
    ladle_column_copy_ref(&t->chunks[0].columns[column], &col);
    col.length = t->num_rows;
  } else if (borrowed) {
    /* the identity gather: a copy of the values in a buffer of ladle's own */
    ladle_column whole;
    st = ladle_table_concat_column(t, column, &whole, err);
    if (st == LADLE_OK) {
      int64_t *idx = malloc((size_t)LADLE_MAX(whole.length, 1) * sizeof *idx);
      if (idx == NULL) st = LADLE_OOM(err, "dlpack copy");
      for (int64_t i = 0; idx != NULL && i < whole.length; i++) idx[i] = i;
      if (st == LADLE_OK) st = ladle_column_gather(&whole, idx, whole.length, &col, err);
      free(idx);
      ladle_column_release(&whole);
    }
  } else {
    st = ladle_table_concat_column(t, column, &col, err);
  }
  if (st != LADLE_OK) return st;
  st = ladle_dlpack_wrap(&col, dt, LADLE_DEVICE_CPU, 0, NULL, NULL, out, err);
  if (st != LADLE_OK) ladle_column_release(&col);
  return st;
}
