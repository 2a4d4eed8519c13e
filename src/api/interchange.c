/* interchange.c — the public entry points (ladle.h) that join src/interop's
 * conversions of tables to plans and results: an imported Arrow stream becomes
 * a plan's scan, a result's table goes out as an Arrow stream or a DLPack
 * tensor. src/api is the facade: it may use every layer; the conversions
 * themselves use core only. */
#include "../exec/exec.h"
#include "../interop/interop.h"

ladle_status ladle_plan_scan_arrow(struct ArrowArrayStream *stream, ladle_plan **out_plan,
                                   ladle_error *err) {
  return ladle_plan_scan_arrow_threads(stream, 1, out_plan, err);
}

/* The plan scanning t, imported with status st; the plan holds its own
 * reference. */
static ladle_status plan_of(ladle_status st, ladle_table *t, ladle_plan **out_plan,
                            ladle_error *err) {
  if (st != LADLE_OK) return st;
  st = ladle_plan_scan_table(t, out_plan, err);
  ladle_table_release(t);
  return st;
}

ladle_status ladle_plan_scan_arrow_threads(struct ArrowArrayStream *stream, int threads,
                                           ladle_plan **out_plan, ladle_error *err) {
  ladle_table *t = NULL;
  ladle_status st = ladle_table_import_stream(stream, threads, NULL, NULL, &t, err);
  return plan_of(st, t, out_plan, err);
}

/* An import for engine e (NULL: one thread, no cache): on its pool, into its
 * view cache, allocating from its resource (counted, its block cache). */
typedef struct engine_import {
  int threads;
  ladle_pool *pool;
  ladle_view_cache *views;
  ladle_mr *was;
} engine_import;

static engine_import import_begin(ladle_engine *e) {
  engine_import im = {1, NULL, NULL, ladle_mr_current()};
  if (e != NULL) {
    im = (engine_import){ladle_pool_threads(e->pool), e->pool, e->views, ladle_mr_current()};
    ladle_mr_set(e->mr);
  }
  return im;
}

ladle_status ladle_plan_scan_arrow_engine(struct ArrowArrayStream *stream, ladle_engine *e,
                                          ladle_plan **out_plan, ladle_error *err) {
  ladle_table *t = NULL;
  engine_import im = import_begin(e);
  ladle_status st = ladle_table_import_stream(stream, im.threads, im.pool, im.views, &t, err);
  ladle_mr_set(im.was);
  return plan_of(st, t, out_plan, err);
}

ladle_status ladle_plan_scan_arrow_columns(struct ArrowArrayStream *streams, size_t ncols,
                                           const char *const *names, ladle_engine *e,
                                           ladle_plan **out_plan, ladle_error *err) {
  ladle_table *t = NULL;
  engine_import im = import_begin(e);
  ladle_status st =
      ladle_table_import_columns(streams, ncols, names, im.threads, im.pool, im.views, &t, err);
  ladle_mr_set(im.was);
  return plan_of(st, t, out_plan, err);
}

void ladle_engine_view_cache_clear(ladle_engine *e) {
  if (e != NULL) ladle_view_cache_clear(e->views);
}

void ladle_engine_view_cache_stats(ladle_engine *e, size_t *entries, size_t *bytes,
                                   uint64_t *hits) {
  ladle_view_cache_stats(e != NULL ? e->views : NULL, entries, bytes, hits);
}

ladle_status ladle_result_export_stream(const ladle_result *r, struct ArrowArrayStream *out,
                                        ladle_error *err) {
  ladle_table *t = ladle_result_table(r);
  if (t == NULL) return LADLE_OOM(err, "result table");
  ladle_mr *was = ladle_mr_set(r->mr); /* the engine's resource, while it lives */
  ladle_status st = ladle_table_export_stream(t, false, 1, out, err);
  ladle_mr_set(was);
  ladle_table_release(t);
  return st;
}

/* The result's table as it is, view-only string columns included: they go out
 * as views without being turned into offsets first. */
ladle_status ladle_result_export_stream_views(const ladle_result *r, struct ArrowArrayStream *out,
                                              ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_result_host(r, err));
  ladle_table *t = ladle_table_ref(r->table);
  ladle_mr *was = ladle_mr_set(r->mr);
  ladle_status st = ladle_table_export_stream(t, true, r->threads, out, err);
  ladle_mr_set(was);
  ladle_table_release(t);
  return st;
}

ladle_status ladle_result_export_dlpack(const ladle_result *r, size_t column, DLManagedTensor **out,
                                        ladle_error *err) {
  return ladle_result_export_dlpack_on(r, column, (void *)(uintptr_t)1, true, out, err);
}

/* What a device tensor's deleter needs: its buffers are freed on ladle's
 * stream once the consumer's stream has done with them. */
typedef struct dl_fence {
  const ladle_backend *be;
  ladle_kctx k; /* device and stream only */
  void *stream;
  bool sync;
} dl_fence;

static void dl_fence_release(void *arg) {
  dl_fence *f = arg;
  ladle_error e;
  /* the consumer's kernels queued before the tensor went may still read
   * it: frees queued on ladle's stream wait for them */
  if (f->sync && f->be->stream_wait != NULL) f->be->stream_wait(&f->k, f->stream, true, &e);
  free(f);
}

ladle_status ladle_result_export_dlpack_on(const ladle_result *r, size_t column, void *stream,
                                           bool sync, DLManagedTensor **out, ladle_error *err) {
  /* numbers and booleans only: never a view-only column, so the result's
   * strings need not be turned back into offsets (ladle_result_plain) */
  if (r->dev == NULL) return ladle_table_export_dlpack(r->table, column, out, err);
  const ladle_table *t = r->dev;
  if (column >= t->schema.n)
    return ladle_err_set(err, LADLE_EINVAL, "dlpack: column %zu out of %zu", column, t->schema.n);
  const ladle_column *c = &t->chunks[0].columns[column]; /* one partition: exec.c */
  DLDataType dt;
  LADLE_RETURN_NOT_OK(ladle_dlpack_dtype(t->schema.names[column], t->schema.types[column],
                                         c->null_count, &dt, err));
  /* the buffer is the result's alone, or the tensor gets a copy: the engine
   * keeps scanned columns on the device for later queries, and a consumer
   * may write through the tensor */
  const ladle_buffer *b = c->owners[1];
  bool alone = b != NULL && atomic_load(&((ladle_buffer *)(uintptr_t)b)->refcount) == 1;
  ladle_column col;
  if (alone) {
    ladle_column_copy_ref(c, &col);
  } else if (r->be->copy == NULL) {
    return ladle_err_set(err, LADLE_ENOTSUP, "dlpack: %s cannot copy column '%s'", r->be->name,
                         t->schema.names[column]);
  } else {
    LADLE_RETURN_NOT_OK(r->be->copy(&r->k, c, &col, err));
  }
  dl_fence *f = calloc(1, sizeof *f);
  ladle_status st = f != NULL ? LADLE_OK : LADLE_OOM(err, "dlpack tensor");
  if (st == LADLE_OK) {
    f->be = r->be;
    f->k.device_id = r->k.device_id;
    f->k.stream = r->k.stream;
    f->stream = stream;
    f->sync = sync;
    /* the consumer's stream waits for the kernels that wrote the result */
    if (sync && r->be->stream_wait != NULL) st = r->be->stream_wait(&r->k, stream, false, err);
  }
  if (st == LADLE_OK)
    st = ladle_dlpack_wrap(&col, dt, r->be->device, r->k.device_id, dl_fence_release, f, out, err);
  if (st != LADLE_OK) {
    free(f);
    ladle_column_release(&col);
  }
  return st;
}

ladle_status ladle_plan_scan_result(const ladle_result *r, ladle_engine *eng, ladle_plan **out,
                                    ladle_error *err) {
  if (r == NULL) return ladle_err_set(err, LADLE_EINVAL, "scan_result: no result");
  int rid = 0, eid = 0;
  ladle_device_type rd = ladle_result_device(r, &rid);
  bool same = rd != LADLE_DEVICE_CPU && eng != NULL && ladle_engine_columns(eng) &&
              ladle_engine_device(eng, &eid) == rd && eid == rid;
  if (same) return ladle_plan_scan_table(r->dev, out, err);
  /* another engine, or a CPU one: the result's host copy (made once) */
  LADLE_RETURN_NOT_OK(ladle_result_plain(r, err));
  return ladle_plan_scan_table(r->table, out, err);
}

ladle_status ladle_result_export_device_array(const ladle_result *r, struct ArrowSchema *schema,
                                              struct ArrowDeviceArray *out, ladle_error *err) {
  if (r->dev == NULL) {
    /* on the host: one partition (a result of several is concatenated) */
    ladle_table *t = ladle_result_table(r);
    if (t == NULL) return LADLE_OOM(err, "result table");
    ladle_table *one = t;
    ladle_status st = LADLE_OK;
    ladle_mr *was = ladle_mr_set(r->mr);
    if (t->nchunks > 1) {
      st = ladle_table_create(&t->schema, 1, &one, err);
      if (st == LADLE_OK) {
        one->chunks[0].length = t->num_rows;
        for (size_t i = 0; st == LADLE_OK && i < t->schema.n; i++)
          st = ladle_table_concat_column(t, i, &one->chunks[0].columns[i], err);
        ladle_table_seal(one);
      }
    }
    if (st == LADLE_OK)
      st = ladle_table_export_device_array(one, NULL, LADLE_DEVICE_CPU, 0, schema, out, err);
    ladle_mr_set(was);
    if (one != t && one != NULL) ladle_table_release(one);
    ladle_table_release(t);
    return st;
  }
  /* on the device: Booleans packed there, then the stream done */
  const ladle_table *t = r->dev;
  size_t n = t->schema.n;
  ladle_buffer **bits = calloc(LADLE_MAX(n, 1), sizeof *bits);
  if (bits == NULL) return LADLE_OOM(err, "device array");
  ladle_status st = LADLE_OK;
  for (size_t i = 0; st == LADLE_OK && i < n && t->nchunks == 1; i++) {
    if (t->schema.types[i].id != LADLE_TYPE_BOOL) continue;
    if (r->be->pack_bits == NULL) {
      st = ladle_err_set(err, LADLE_ENOTSUP, "Arrow device export: %s cannot pack Booleans",
                         r->be->name);
      break;
    }
    ladle_column packed;
    st = r->be->pack_bits(&r->k, &t->chunks[0].columns[i], &packed, err);
    if (st == LADLE_OK) {
      bits[i] = ladle_buffer_ref(packed.owners[1]);
      ladle_column_release(&packed);
    }
  }
  if (st == LADLE_OK && r->be->stream_wait != NULL)
    st = r->be->stream_wait(&r->k, NULL, false, err);
  if (st == LADLE_OK)
    st = ladle_table_export_device_array(t, bits, r->be->device, r->k.device_id, schema, out, err);
  for (size_t i = 0; i < n; i++) ladle_buffer_release(bits[i]); /* those not taken over */
  free(bits);
  return st;
}
