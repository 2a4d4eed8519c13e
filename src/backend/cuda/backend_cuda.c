/* backend_cuda.c — the CUDA kernel table (so far: the column kernels
 * select, take and filter of every fixed-width and string type, reduce (sum,
 * min, max, count), binary (comparisons, +, -, *, and/or) and the copies
 * between host and device), its stream-ordered device allocator, and the entry point
 * the loader (../loader.c) finds with dlsym. Built into libladle_cuda.so when nvcc is on PATH at
 * build time; nothing else in ladle links the CUDA runtime.
 *
 * Every CUDA call is checked and a failure becomes a status whose message
 * names the call. Kernels run on the device's stream; an entry whose output
 * length depends on the data (select, filter) or that drops an all-valid
 * bitmap (take) waits for the stream before it returns. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "../backend.h"
#include "../cpu/cpu.h" /* sort.c's order: the splitters' codes and order check */
#include "kernels.h"

#define LADLE_EXPORT __attribute__((visibility("default")))

enum { MAX_DEVICES = 64 };

enum { STAGES = 2 };

typedef struct cuda_dev {
  int id;
  bool ready;
  cudaStream_t stream;
  ladle_allocator alloc; /* stream-ordered: ctx is this */
  char name[16];
  /* pinned host buffers copies to the device go through (made on first use,
   * kept for the process): host threads fill one while the DMA engine reads
   * the other */
  pthread_mutex_t stage_mu;
  void *stage[STAGES];
  cudaEvent_t stage_done[STAGES];
  size_t stage_bytes;
} cuda_dev;

static pthread_mutex_t dev_mu = PTHREAD_MUTEX_INITIALIZER;
static cuda_dev devs[MAX_DEVICES];

static ladle_status cu_fail(cudaError_t e, const char *call, ladle_error *err) {
  cudaGetLastError(); /* clear a non-sticky error */
  return ladle_err_set(err, e == cudaErrorMemoryAllocation ? LADLE_ENOMEM : LADLE_EDEVICE,
                       "CUDA: %s failed: %s (%s)", call, cudaGetErrorString(e),
                       cudaGetErrorName(e));
}
#define CU(call)                                             \
  do {                                                       \
    cudaError_t e__ = (call);                                \
    if (e__ != cudaSuccess) return cu_fail(e__, #call, err); \
  } while (0)
#define CU_GOTO(call)                \
  do {                               \
    cudaError_t e__ = (call);        \
    if (e__ != cudaSuccess) {        \
      st = cu_fail(e__, #call, err); \
      goto done;                     \
    }                                \
  } while (0)

static void *dev_alloc(void *ctx, size_t size) {
  cuda_dev *d = ctx;
  void *p = NULL;
  if (cudaSetDevice(d->id) != cudaSuccess ||
      cudaMallocAsync(&p, LADLE_MAX(size, (size_t)1), d->stream) != cudaSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return p;
}

static void dev_free(void *ctx, void *p, size_t size) {
  LADLE_UNUSED(size);
  cuda_dev *d = ctx;
  cudaSetDevice(d->id);
  if (cudaFreeAsync(p, d->stream) != cudaSuccess) cudaGetLastError();
}

static cuda_dev *dev_of(const ladle_kctx *ctx) { return &devs[ctx->device_id]; }
static cudaStream_t stream_of(const ladle_kctx *ctx) { return (cudaStream_t)ctx->stream; }
static const ladle_allocator *alloc_of(const ladle_kctx *ctx) {
  return ctx->mr != NULL ? ladle_mr_allocator(ctx->mr) : &dev_of(ctx)->alloc;
}

static ladle_status check_ctx(const ladle_kctx *ctx, ladle_error *err) {
  if (ctx == NULL || ctx->device_id < 0 || ctx->device_id >= MAX_DEVICES ||
      !devs[ctx->device_id].ready)
    return ladle_err_set(err, LADLE_EINVAL, "CUDA kernel called for a device not opened");
  CU(cudaSetDevice(ctx->device_id));
  return LADLE_OK;
}

static bool on_device(const ladle_column *c) {
  bool list = c->type.id == LADLE_TYPE_LIST; /* its owners[2] keeps the child's struct */
  for (int i = 0; i < (list ? 2 : 3); i++)
    if (c->owners[i] != NULL && c->owners[i]->device != LADLE_DEVICE_CUDA) return false;
  return !list || c->child == NULL || on_device(c->child);
}

/* Types whose rows are one fixed-width value (and BOOL's byte). */
static bool fixed(ladle_type_id id) {
  return id != LADLE_TYPE_NULL && !ladle_type_is_varlen(id) && id != LADLE_TYPE_LIST &&
         ladle_type_width(id) > 0 && ladle_type_width(id) <= 8;
}

static ladle_status check_column(const char *what, const ladle_column *c, bool strings,
                                 ladle_error *err) {
  if (c->type.id == LADLE_TYPE_LIST || ladle_column_view_only(c) ||
      (!fixed(c->type.id) && !(strings && ladle_type_is_varlen(c->type.id))))
    return ladle_err_set(err, LADLE_ENOTSUP, "%s of a %s column on the GPU", what,
                         ladle_dtype_name(c->type, NULL, 0));
  return LADLE_OK;
}

/* A column the moving kernels (copies, take, filter) take: check_column's,
 * or a List of such elements. */
static ladle_status check_moved(const char *what, const ladle_column *c, ladle_error *err) {
  if (c->type.id != LADLE_TYPE_LIST) return check_column(what, c, true, err);
  if (c->child == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "%s of a List column without elements", what);
  return check_moved(what, c->child, err);
}

/* ------------------------------------------------------------- copies */

/* Copies to the device go through pinned staging buffers (about 55 GB/s over
 * PCIe on an H200 host, where pageable memory gave 6-9 GB/s): each chunk is
 * copied into a pinned buffer by the engine's threads, then DMA'd while the
 * next chunk fills the other buffer. LADLE_CUDA_STAGING_BYTES sets the chunk
 * (default 32 MiB; the tests make it small so that large columns take many
 * chunks); copies under 1 MiB go straight from pageable memory (8 MB of
 * Parquet pages went up at 4.5 GB/s so, on an H100 host). */
static size_t staging_bytes(void) {
  const char *v = getenv("LADLE_CUDA_STAGING_BYTES");
  long long b = v != NULL ? atoll(v) : 0;
  return b >= 4096 ? (size_t)b / 4096 * 4096 : (size_t)32 << 20;
}

typedef struct fill_job {
  char *dst;
  const char *src;
  size_t bytes, part;
  int64_t sub; /* subtracted from each int64 (offsets rebased), or 0: a plain copy */
} fill_job;

static ladle_status fill_task(void *ctx, size_t i, ladle_error *err) {
  LADLE_UNUSED(err);
  fill_job *j = ctx;
  size_t from = i * j->part, n = LADLE_MIN(j->part, j->bytes - from);
  if (j->sub == 0) {
    memcpy(j->dst + from, j->src + from, n);
  } else {
    int64_t *d = (int64_t *)(void *)(j->dst + from);
    const int64_t *x = (const int64_t *)(const void *)(j->src + from);
    for (size_t k = 0; k < n / 8; k++) d[k] = x[k] - j->sub;
  }
  return LADLE_OK;
}

/* d's staging buffers, chunk bytes each (made, or remade at another size);
 * the caller holds d->stage_mu */
static ladle_status stage_buffers(cuda_dev *d, size_t chunk, ladle_error *err) {
  ladle_status st = LADLE_OK;
  if (d->stage_bytes == chunk) return LADLE_OK;
  for (int k = 0; k < STAGES; k++) {
    if (d->stage[k] != NULL) {
      cudaEventSynchronize(d->stage_done[k]);
      cudaFreeHost(d->stage[k]);
      cudaEventDestroy(d->stage_done[k]);
      d->stage[k] = NULL;
    }
  }
  d->stage_bytes = 0;
  for (int k = 0; k < STAGES && st == LADLE_OK; k++) {
    cudaError_t e = cudaMallocHost(&d->stage[k], chunk);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&d->stage_done[k], cudaEventDisableTiming);
    if (e != cudaSuccess) {
      if (d->stage[k] != NULL) cudaFreeHost(d->stage[k]);
      d->stage[k] = NULL;
      st = cu_fail(e, "pinned staging (cudaMallocHost)", err);
    }
  }
  if (st == LADLE_OK) d->stage_bytes = chunk;
  return st;
}

/* j's parts copied (or rebased) by the engine's threads, or by this one */
static ladle_status fill_run(const ladle_kctx *ctx, fill_job *j, ladle_error *err) {
  size_t parts = (j->bytes + j->part - 1) / j->part;
  if (ctx->pool != NULL && parts > 1) return ladle_pool_run(ctx->pool, parts, fill_task, j, err);
  for (size_t i = 0; i < parts; i++) fill_task(j, i, err);
  return LADLE_OK;
}

/* Staging buffer b free again: its last DMA done (the caller holds
 * d->stage_mu). */
static ladle_status stage_ready(cuda_dev *d, int b, ladle_error *err) {
  cudaError_t e = cudaEventSynchronize(d->stage_done[b]);
  return e == cudaSuccess ? LADLE_OK : cu_fail(e, "waiting for a staging buffer", err);
}

/* m bytes of staging buffer b DMA'd to device dst on stream s, its event
 * recorded after them (the caller holds d->stage_mu). */
static ladle_status stage_up(cuda_dev *d, cudaStream_t s, void *dst, int b, size_t m,
                             ladle_error *err) {
  cudaError_t e = cudaMemcpyAsync(dst, d->stage[b], m, cudaMemcpyHostToDevice, s);
  if (e == cudaSuccess) e = cudaEventRecord(d->stage_done[b], s);
  return e == cudaSuccess ? LADLE_OK : cu_fail(e, "a staged copy to the GPU", err);
}

/* The end of a staged copy: the buffers are reused by the next one, so
 * every DMA queued on them (even after a failure) finishes first; then
 * d->stage_mu is released. */
static void stage_end(cuda_dev *d) {
  for (int k = 0; k < STAGES && d->stage_bytes != 0; k++) cudaEventSynchronize(d->stage_done[k]);
  pthread_mutex_unlock(&d->stage_mu);
}

/* bytes from host src to device dst on ctx's stream, through the staging
 * buffers (sub: as fill_job); enqueued, the caller synchronises */
static ladle_status stage_copy(const ladle_kctx *ctx, void *dst, const void *src, size_t bytes,
                               int64_t sub, ladle_error *err) {
  cuda_dev *d = dev_of(ctx);
  cudaStream_t s = stream_of(ctx);
  size_t chunk = staging_bytes();
  if (bytes < ((size_t)1 << 20) && sub == 0) { /* small: straight from pageable memory */
    CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return LADLE_OK;
  }
  pthread_mutex_lock(&d->stage_mu);
  ladle_status st = stage_buffers(d, chunk, err);
  for (size_t off = 0, k = 0; st == LADLE_OK && off < bytes; off += chunk, k++) {
    int b = (int)(k % STAGES);
    size_t n = LADLE_MIN(chunk, bytes - off);
    if ((st = stage_ready(d, b, err)) != LADLE_OK) break;
    fill_job j = {d->stage[b], (const char *)src + off, n, 1 << 20, sub};
    if ((st = fill_run(ctx, &j, err)) != LADLE_OK) break;
    st = stage_up(d, s, (char *)dst + off, b, n, err);
  }
  stage_end(d);
  return st;
}

/* Chunk k (of `chunk` bytes) of device src's `bytes` DMA'd into staging
 * buffer k % STAGES on stream s, its event recorded after it (the caller
 * holds d->stage_mu). */
static ladle_status stage_down(cuda_dev *d, cudaStream_t s, const void *src, size_t bytes,
                               size_t chunk, size_t k, ladle_error *err) {
  size_t off = k * chunk;
  cudaError_t e = cudaMemcpyAsync(d->stage[k % STAGES], (const char *)src + off,
                                  LADLE_MIN(chunk, bytes - off), cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaEventRecord(d->stage_done[k % STAGES], s);
  return e == cudaSuccess ? LADLE_OK : cu_fail(e, "a staged copy from the GPU", err);
}

/* bytes from device src to host dst through the staging buffers (pageable
 * memory took the DMA at a few GB/s, the driver touching each fresh page):
 * chunk k+1 is DMA'd into one pinned buffer while the engine's threads copy
 * chunk k out of the other (sub: as fill_job, each int64 rebased on the way).
 * Synchronous: dst holds the bytes when this returns. */
static ladle_status stage_copy_down(const ladle_kctx *ctx, void *dst, const void *src, size_t bytes,
                                    int64_t sub, ladle_error *err) {
  cuda_dev *d = dev_of(ctx);
  cudaStream_t s = stream_of(ctx);
  size_t chunk = staging_bytes();
  if (bytes == 0) return LADLE_OK;
  if (bytes < ((size_t)1 << 20) && sub == 0) { /* small: straight into pageable memory */
    CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    return LADLE_OK;
  }
  pthread_mutex_lock(&d->stage_mu);
  ladle_status st = stage_buffers(d, chunk, err);
  size_t nchunks = (bytes + chunk - 1) / chunk;
  /* the first STAGES chunks' DMAs, then each chunk copied out as the next goes down */
  for (size_t k = 0; st == LADLE_OK && k < nchunks && k < STAGES; k++)
    st = stage_down(d, s, src, bytes, chunk, k, err);
  for (size_t k = 0; st == LADLE_OK && k < nchunks; k++) {
    int b = (int)(k % STAGES);
    size_t off = k * chunk;
    if ((st = stage_ready(d, b, err)) != LADLE_OK) break;
    fill_job j = {(char *)dst + off, d->stage[b], LADLE_MIN(chunk, bytes - off), 1 << 20, sub};
    if ((st = fill_run(ctx, &j, err)) != LADLE_OK) break;
    if (k + STAGES < nchunks) st = stage_down(d, s, src, bytes, chunk, k + STAGES, err);
  }
  stage_end(d);
  return st;
}

static ladle_status cuda_to_device(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                   ladle_error *err);
static ladle_status cuda_to_host(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                 ladle_error *err);

/* A List column to the device: its validity, its offsets rebased to 0 and
 * the elements of its rows (a slice of the child, copied as a column). */
static ladle_status list_to_device(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                   ladle_error *err) {
  int64_t n = in->length;
  const int64_t *off = in->values;
  int64_t c0 = n > 0 ? off[0] : 0, c1 = n > 0 ? off[n] : 0;
  ladle_column o, hs, dc;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc_with(alloc_of(ctx), in->type, n, in->validity != NULL, 0, &o, err));
  ladle_status st = LADLE_OK;
  cudaStream_t s = stream_of(ctx);
  if (in->validity != NULL && (st = stage_copy(ctx, LADLE_COL_VALIDITY_MUT(&o), in->validity,
                                               (size_t)ladle_bitmap_bytes(n), 0, err)) != LADLE_OK)
    goto done;
  if (n > 0) {
    if ((st = stage_copy(ctx, LADLE_COL_MUT(&o, int64_t), off, (size_t)(n + 1) * 8, c0, err)) !=
        LADLE_OK)
      goto done;
  } else {
    CU_GOTO(cudaMemsetAsync(LADLE_COL_MUT(&o, int64_t), 0, 8, s));
  }
  if ((st = ladle_column_slice(in->child, c0, c1 - c0, &hs, err)) != LADLE_OK) goto done;
  st = cuda_to_device(ctx, &hs, &dc, err);
  ladle_column_release(&hs);
  if (st == LADLE_OK) st = ladle_column_set_child(&o, &dc, err);
  if (st == LADLE_OK) CU_GOTO(cudaStreamSynchronize(s)); /* the host memory may go */
  o.null_count = in->null_count;
done:
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* A List column on the device to the host: validity, offsets (from 0 on the
 * device: to_device and take make them so) and the elements. */
static ladle_status list_to_host(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                 ladle_error *err) {
  int64_t n = in->length, c0 = 0;
  cudaStream_t s = stream_of(ctx);
  CU(cudaMemcpyAsync(&c0, in->values, 8, cudaMemcpyDeviceToHost, s));
  CU(cudaStreamSynchronize(s));
  if (c0 != 0)
    return ladle_err_set(err, LADLE_EINVAL,
                         "internal: a List column on the GPU whose offsets start at %lld",
                         (long long)c0);
  ladle_column o, hc;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(NULL, in->type, n, in->validity != NULL, 0, &o, err));
  ladle_status st = LADLE_OK;
  if (in->validity != NULL)
    st = stage_copy_down(ctx, LADLE_COL_VALIDITY_MUT(&o), in->validity,
                         (size_t)ladle_bitmap_bytes(n), 0, err);
  if (st == LADLE_OK)
    st = stage_copy_down(ctx, LADLE_COL_MUT(&o, int64_t), in->values, (size_t)(n + 1) * 8, 0, err);
  if (st == LADLE_OK) st = cuda_to_host(ctx, in->child, &hc, err);
  if (st == LADLE_OK) st = ladle_column_set_child(&o, &hc, err);
  o.null_count = in->null_count;
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

static ladle_status cuda_to_device(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                   ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(check_moved("a copy", in, err));
  if (in->owners[1] != NULL && in->owners[1]->device == LADLE_DEVICE_CUDA) {
    ladle_column_copy_ref(in, out); /* already there */
    return LADLE_OK;
  }
  if (in->owners[1] == NULL && in->length > 0)
    return ladle_err_set(err, LADLE_EINVAL, "a copy to the GPU of a column without buffers");
  if (in->type.id == LADLE_TYPE_LIST) return list_to_device(ctx, in, out, err);
  int64_t n = in->length;
  bool var = ladle_type_is_varlen(in->type.id);
  const int64_t *off = in->values;
  int64_t c0 = var ? off[0] : 0, c1 = var ? off[n] : 0;
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc_with(alloc_of(ctx), in->type, n, in->validity != NULL, c1 - c0, &o, err));
  ladle_status st = LADLE_OK;
  cudaStream_t s = stream_of(ctx);
  if (in->validity != NULL && (st = stage_copy(ctx, LADLE_COL_VALIDITY_MUT(&o), in->validity,
                                               (size_t)ladle_bitmap_bytes(n), 0, err)) != LADLE_OK)
    goto done;
  if (var) {
    /* offsets from 0 (rebased on the way when the rows start past the first
     * byte): the bytes copied are those of these rows only */
    if ((st = stage_copy(ctx, LADLE_COL_MUT(&o, int64_t), off, (size_t)(n + 1) * 8, c0, err)) !=
        LADLE_OK)
      goto done;
    if (c1 > c0 && (st = stage_copy(ctx, LADLE_COL_CHARS_MUT(&o), in->chars + c0, (size_t)(c1 - c0),
                                    0, err)) != LADLE_OK)
      goto done;
  } else if (n > 0) {
    if ((st = stage_copy(ctx, LADLE_COL_MUT(&o, uint8_t), in->values,
                         (size_t)n * ladle_type_width(in->type.id), 0, err)) != LADLE_OK)
      goto done;
  }
  CU_GOTO(cudaStreamSynchronize(s)); /* the host memory may go once this returns */
  o.null_count = in->null_count;
done:
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

static ladle_status cuda_to_host(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                 ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(check_moved("a copy", in, err));
  if (!on_device(in))
    return ladle_err_set(err, LADLE_EINVAL, "a copy to the host of a column not on the GPU");
  if (in->type.id == LADLE_TYPE_LIST) return list_to_host(ctx, in, out, err);
  int64_t n = in->length;
  bool var = ladle_type_is_varlen(in->type.id);
  cudaStream_t s = stream_of(ctx);
  int64_t c0 = 0, c1 = 0;
  if (var) {
    CU(cudaMemcpyAsync(&c0, (const int64_t *)in->values, 8, cudaMemcpyDeviceToHost, s));
    CU(cudaMemcpyAsync(&c1, (const int64_t *)in->values + n, 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
  }
  ladle_column o;
  /* the host's memory resource: the calling thread's, else the host allocator */
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc_with(NULL, in->type, n, in->validity != NULL, c1 - c0, &o, err));
  ladle_status st = LADLE_OK;
  if (in->validity != NULL)
    st = stage_copy_down(ctx, LADLE_COL_VALIDITY_MUT(&o), in->validity,
                         (size_t)ladle_bitmap_bytes(n), 0, err);
  if (st == LADLE_OK && var) {
    st = stage_copy_down(ctx, LADLE_COL_MUT(&o, int64_t), in->values, (size_t)(n + 1) * 8, c0, err);
    if (st == LADLE_OK && c1 > c0)
      st = stage_copy_down(ctx, LADLE_COL_CHARS_MUT(&o), in->chars + c0, (size_t)(c1 - c0), 0, err);
  } else if (st == LADLE_OK && n > 0) {
    st = stage_copy_down(ctx, LADLE_COL_MUT(&o, uint8_t), in->values,
                         (size_t)n * ladle_type_width(in->type.id), 0, err);
  }
  o.null_count = in->null_count;
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* o's null count; an all-valid column keeps no bitmap. */
static void set_nulls(ladle_column *o, unsigned long long nulls) {
  o->null_count = (int64_t)nulls;
  if (nulls == 0) {
    ladle_buffer_release(o->owners[0]);
    o->owners[0] = NULL;
    o->validity = NULL;
  }
}

/* An entry's end: its scratch released, o handed out (or released on failure). */
static ladle_status finish(ladle_status st, ladle_column *o, ladle_buffer *scratch,
                           ladle_column *out) {
  ladle_buffer_release(scratch);
  if (st != LADLE_OK) {
    ladle_column_release(o);
    return st;
  }
  *out = *o;
  return LADLE_OK;
}

/* ---------------------------------------------------------- selection */

static ladle_status scalar_scratch(const ladle_kctx *ctx, ladle_buffer **b, ladle_error *err) {
  return ladle_buffer_alloc(alloc_of(ctx), 16, b, err);
}

static ladle_status check_mask(const ladle_column *mask, int64_t rows, ladle_error *err) {
  if (mask->type.id != LADLE_TYPE_BOOL)
    return ladle_err_set(err, LADLE_EINVAL, "selection mask of type %s, not Boolean",
                         ladle_dtype_name(mask->type, NULL, 0));
  if (rows >= 0 && mask->length != rows)
    return ladle_err_set(err, LADLE_EINVAL, "selection mask of %lld rows for %lld",
                         (long long)mask->length, (long long)rows);
  if (!on_device(mask)) return ladle_err_set(err, LADLE_EINVAL, "a selection mask not on the GPU");
  return LADLE_OK;
}

static ladle_status cuda_select(const ladle_kctx *ctx, const ladle_column *mask, ladle_column *out,
                                ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(check_mask(mask, -1, err));
  int64_t n = mask->length, count = 0;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ladle_dtype_make(LADLE_TYPE_INT64), n,
                                              false, 0, &o, err));
  ladle_buffer *cnt = NULL;
  ladle_status st = scalar_scratch(ctx, &cnt, err);
  if (st != LADLE_OK) goto done;
  if (n > 0) {
    const ladle_allocator *a = alloc_of(ctx);
    ldc_alloc scratch = {a->alloc, a->free, a->ctx};
    CU_GOTO(ldc_select(mask->values, mask->validity, n, LADLE_COL_MUT(&o, int64_t), cnt->data,
                       &scratch, stream_of(ctx)));
    CU_GOTO(cudaMemcpyAsync(&count, cnt->data, 8, cudaMemcpyDeviceToHost, stream_of(ctx)));
    CU_GOTO(cudaStreamSynchronize(stream_of(ctx)));
  }
  o.length = count; /* the buffer keeps its n rows of room */
done:
  return finish(st, &o, cnt, out);
}

/* The first pass of a take of a STRING, BINARY or LIST column (offsets
 * into bytes or elements): o gets src's type, n = idx's rows, validity and
 * offsets by a scan of the rows' lengths (a null row or index: null, none);
 * *total is the bytes or elements to take, *nulls the null rows, *cnt the
 * scratch the caller releases (finish). */
static ladle_status take_offsets(const ladle_kctx *ctx, const ladle_column *src,
                                 const ladle_column *idx, ladle_column *o, ladle_buffer **cnt,
                                 int64_t *total, unsigned long long *nulls, ladle_error *err) {
  int64_t n = idx->length;
  const ladle_allocator *a = alloc_of(ctx);
  ldc_alloc scratch = {a->alloc, a->free, a->ctx};
  cudaStream_t s = stream_of(ctx);
  memset(o, 0, sizeof *o);
  o->type = src->type;
  o->length = n;
  *cnt = NULL;
  ladle_status st = ladle_buffer_alloc(a, (size_t)(n + 31) / 32 * 4, &o->owners[0], err);
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)(n + 1) * 8, &o->owners[1], err);
  if (st == LADLE_OK) st = scalar_scratch(ctx, cnt, err);
  if (st != LADLE_OK) return st;
  o->validity = o->owners[0]->data;
  o->values = o->owners[1]->data;
  CU(ldc_take_string_offsets(src->values, src->validity, idx->values, idx->validity, n,
                             LADLE_COL_MUT(o, int64_t), (uint32_t *)LADLE_COL_VALIDITY_MUT(o),
                             (*cnt)->data, &scratch, s));
  CU(cudaMemcpyAsync(total, (const int64_t *)o->values + n, 8, cudaMemcpyDeviceToHost, s));
  CU(cudaMemcpyAsync(nulls, (*cnt)->data, 8, cudaMemcpyDeviceToHost, s));
  CU(cudaStreamSynchronize(s));
  return LADLE_OK;
}

/* take of a STRING or BINARY column: the offsets (take_offsets), then the
 * bytes, into a buffer allocated between the two. */
static ladle_status take_strings(const ladle_kctx *ctx, const ladle_column *src,
                                 const ladle_column *idx, ladle_column *out, ladle_error *err) {
  int64_t total = 0;
  unsigned long long nulls = 0;
  ladle_column o;
  ladle_buffer *cnt = NULL;
  ladle_status st = take_offsets(ctx, src, idx, &o, &cnt, &total, &nulls, err);
  if (st == LADLE_OK) st = ladle_buffer_alloc(alloc_of(ctx), (size_t)total, &o.owners[2], err);
  if (st != LADLE_OK) goto done;
  o.chars = o.owners[2]->data;
  CU_GOTO(ldc_take_string_chars(src->values, src->chars, idx->values, idx->length, o.values,
                                LADLE_COL_CHARS_MUT(&o), stream_of(ctx)));
  set_nulls(&o, nulls);
done:
  return finish(st, &o, cnt, out);
}

static ladle_status cuda_take(const ladle_kctx *ctx, const ladle_column *src,
                              const ladle_column *idx, ladle_column *out, ladle_error *err);

/* take of a LIST column: the offsets (take_offsets, as a String's), then
 * each output element's index into the source's elements, and the elements
 * taken at them (recursively). */
static ladle_status take_list(const ladle_kctx *ctx, const ladle_column *src,
                              const ladle_column *idx, ladle_column *out, ladle_error *err) {
  int64_t total = 0;
  unsigned long long nulls = 0;
  ladle_column o, ei, ch;
  memset(&ei, 0, sizeof ei);
  ladle_buffer *cnt = NULL;
  ladle_status st = take_offsets(ctx, src, idx, &o, &cnt, &total, &nulls, err);
  if (st == LADLE_OK)
    st = ladle_column_alloc_with(alloc_of(ctx), ladle_dtype_make(LADLE_TYPE_INT64), total, false, 0,
                                 &ei, err);
  if (st != LADLE_OK) goto done;
  CU_GOTO(ldc_list_child_index(src->values, idx->values, idx->length, o.values,
                               LADLE_COL_MUT(&ei, int64_t), stream_of(ctx)));
  st = cuda_take(ctx, src->child, &ei, &ch, err);
  if (st == LADLE_OK) st = ladle_column_set_child(&o, &ch, err);
  if (st == LADLE_OK) set_nulls(&o, nulls);
done:
  ladle_column_release(&ei);
  return finish(st, &o, cnt, out);
}

static ladle_status cuda_take(const ladle_kctx *ctx, const ladle_column *src,
                              const ladle_column *idx, ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(check_moved("take", src, err));
  if (idx->type.id != LADLE_TYPE_INT64)
    return ladle_err_set(err, LADLE_EINVAL, "take: index column of type %s, not Int64",
                         ladle_dtype_name(idx->type, NULL, 0));
  if (!on_device(src) || !on_device(idx))
    return ladle_err_set(err, LADLE_EINVAL, "take: a column not on the GPU");
  if (src->type.id == LADLE_TYPE_LIST) return take_list(ctx, src, idx, out, err);
  if (ladle_type_is_varlen(src->type.id)) return take_strings(ctx, src, idx, out, err);
  int64_t n = idx->length;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), src->type, n, true, 0, &o, err));
  ladle_buffer *cnt = NULL;
  unsigned long long nulls = 0;
  ladle_status st = scalar_scratch(ctx, &cnt, err);
  if (st != LADLE_OK) goto done;
  if (n > 0) {
    CU_GOTO(ldc_take((int)ladle_type_width(src->type.id), src->values, src->validity, idx->values,
                     idx->validity, n, LADLE_COL_MUT(&o, uint8_t),
                     (uint32_t *)LADLE_COL_VALIDITY_MUT(&o), cnt->data, stream_of(ctx)));
    CU_GOTO(cudaMemcpyAsync(&nulls, cnt->data, 8, cudaMemcpyDeviceToHost, stream_of(ctx)));
    CU_GOTO(cudaStreamSynchronize(stream_of(ctx)));
  }
  set_nulls(&o, nulls);
done:
  return finish(st, &o, cnt, out);
}

static ladle_status cuda_filter(const ladle_kctx *ctx, const ladle_column *src,
                                const ladle_column *mask, ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(check_moved("filter", src, err));
  LADLE_RETURN_NOT_OK(check_mask(mask, src->length, err));
  ladle_column idx;
  LADLE_RETURN_NOT_OK(cuda_select(ctx, mask, &idx, err));
  ladle_status st = cuda_take(ctx, src, &idx, out, err);
  ladle_column_release(&idx);
  return st;
}

/* ---------------------------------------------------------- reductions */

static bool num_kind(ladle_type_id id, ldc_num *k) {
  switch (ladle_type_phys(id)) {
    case LADLE_PHYS_U8:
      *k = LDC_U8;
      return true;
    case LADLE_PHYS_I8:
      *k = LDC_I8;
      return true;
    case LADLE_PHYS_I16:
      *k = LDC_I16;
      return true;
    case LADLE_PHYS_U16:
      *k = LDC_U16;
      return true;
    case LADLE_PHYS_I32:
      *k = LDC_I32;
      return true;
    case LADLE_PHYS_U32:
      *k = LDC_U32;
      return true;
    case LADLE_PHYS_I64:
      *k = LDC_I64;
      return true;
    case LADLE_PHYS_U64:
      *k = LDC_U64;
      return true;
    case LADLE_PHYS_F32:
      *k = LDC_F32;
      return true;
    case LADLE_PHYS_F64:
      *k = LDC_F64;
      return true;
    default:
      return false;
  }
}

/* A one-row column on the device holding the `width` bytes at val (NULL:
 * a null row). */
static ladle_status one_value(const ladle_kctx *ctx, ladle_dtype t, const void *val,
                              ladle_column *out, ladle_error *err) {
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), t, 1, val == NULL, 0, &o, err));
  ladle_status st = LADLE_OK;
  cudaStream_t s = stream_of(ctx);
  uint8_t zero[8] = {0}, bits[4] = {0}; /* a null row: value 0, its bit clear */
  CU_GOTO(cudaMemcpyAsync(LADLE_COL_MUT(&o, uint8_t), val != NULL ? val : zero,
                          ladle_type_width(t.id), cudaMemcpyHostToDevice, s));
  if (val == NULL)
    CU_GOTO(
        cudaMemcpyAsync(LADLE_COL_VALIDITY_MUT(&o), bits, sizeof bits, cudaMemcpyHostToDevice, s));
  CU_GOTO(cudaStreamSynchronize(s)); /* the values are on the caller's stack */
  o.null_count = val == NULL;
done:
  return finish(st, &o, NULL, out);
}

static ladle_status cuda_extreme(const ladle_kctx *ctx, bool is_max, const ladle_column *in,
                                 ladle_column *out, ladle_error *err) {
  ldc_num kind;
  if (!ladle_reduce_extreme_type(in->type.id) || !num_kind(in->type.id, &kind))
    return ladle_err_set(err, in->type.id == LADLE_TYPE_NULL ? LADLE_ENOTSUP : LADLE_EINVAL,
                         "%s of a %s column on the GPU", is_max ? "max" : "min",
                         ladle_dtype_name(in->type, NULL, 0));
  if (!on_device(in))
    return ladle_err_set(err, LADLE_EINVAL, "%s of a column not on the GPU",
                         is_max ? "max" : "min");
  uint8_t val[8] = {0};
  unsigned long long counts[2] = {0, 0}; /* numbers, valid values */
  if (in->length > 0 && in->null_count < in->length) {
    ladle_buffer *part = NULL;
    LADLE_RETURN_NOT_OK(ladle_buffer_alloc(alloc_of(ctx), LDC_EXTREME_PART_BYTES + 32, &part, err));
    ladle_status st = LADLE_OK;
    cudaStream_t s = stream_of(ctx);
    char *res = (char *)part->data + LDC_EXTREME_PART_BYTES; /* value, then the counts */
    CU_GOTO(ldc_extreme(kind, is_max, in->values, in->validity, in->length, res,
                        (unsigned long long *)(res + 8), part->data, s));
    CU_GOTO(cudaMemcpyAsync(val, res, 8, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaMemcpyAsync(counts, res + 8, sizeof counts, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaStreamSynchronize(s));
  done:
    ladle_buffer_release(part);
    LADLE_RETURN_NOT_OK(st);
  }
  if (counts[0] == 0 && counts[1] > 0) { /* only NaN */
    if (in->type.id == LADLE_TYPE_FLOAT32) {
      float f = NAN;
      memcpy(val, &f, 4);
    } else {
      double d = NAN;
      memcpy(val, &d, 8);
    }
  }
  return one_value(ctx, in->type, counts[1] > 0 ? val : NULL, out, err);
}

/* A sum's accumulator (ldc_sum, ldc_program_sum): a double for floats, a
 * wrapping uint64 for integers. */
typedef union sum_acc {
  unsigned long long u;
  double d;
} sum_acc;

/* The accumulator as a value of the sum's type ot into val: a float
 * narrowed, an integer's wrapped sum cut to its width (little-endian: its
 * low bytes). */
static void sum_value(ladle_dtype ot, const sum_acc *acc, uint8_t val[8]) {
  if (ot.id == LADLE_TYPE_FLOAT32) {
    float f = (float)acc->d;
    memcpy(val, &f, 4);
  } else {
    memcpy(val, acc, 8);
  }
}

static ladle_status cuda_reduce(const ladle_kctx *ctx, ladle_reduce_op op, const ladle_column *in,
                                ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  if (op == LADLE_REDUCE_MIN || op == LADLE_REDUCE_MAX)
    return cuda_extreme(ctx, op == LADLE_REDUCE_MAX, in, out, err);
  if (op == LADLE_REDUCE_COUNT) {
    uint32_t c = 0;
    LADLE_RETURN_NOT_OK(ladle_reduce_count_value(in, &c, err));
    return one_value(ctx, ladle_dtype_make(LADLE_TYPE_UINT32), &c, out, err);
  }
  if (op != LADLE_REDUCE_SUM)
    return ladle_err_set(err, LADLE_EINVAL, "reduction %d: no such reduction", (int)op);
  ladle_type_id id = in->type.id;
  ldc_num kind;
  if (!(ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL || id == LADLE_TYPE_DURATION) ||
      !num_kind(id, &kind))
    return ladle_err_set(err, id == LADLE_TYPE_NULL ? LADLE_ENOTSUP : LADLE_EINVAL,
                         "sum of a %s column on the GPU", ladle_dtype_name(in->type, NULL, 0));
  if (!on_device(in)) return ladle_err_set(err, LADLE_EINVAL, "sum of a column not on the GPU");
  ladle_dtype ot = ladle_sum_type(in->type);
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ot, 1, false, 0, &o, err));
  ladle_buffer *part = NULL;
  sum_acc acc = {0};
  cudaStream_t s = stream_of(ctx);
  ladle_status st = ladle_buffer_alloc(alloc_of(ctx), (LDC_SUM_BLOCKS + 1) * 8, &part, err);
  if (st != LADLE_OK) goto done;
  if (in->length > 0) {
    CU_GOTO(ldc_sum(kind, in->values, in->validity, in->length, (char *)part->data,
                    (char *)part->data + 8, s));
    CU_GOTO(cudaMemcpyAsync(&acc, part->data, 8, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
  uint8_t val[8];
  sum_value(ot, &acc, val);
  CU_GOTO(cudaMemcpyAsync(LADLE_COL_MUT(&o, uint8_t), val, ladle_type_width(ot.id),
                          cudaMemcpyHostToDevice, s));
  CU_GOTO(cudaStreamSynchronize(s)); /* val is on this stack frame */
done:
  return finish(st, &o, part, out);
}

/* ---------------------------------------------------------- elementwise */

/* One side of a binary operation on the device: a column on it, or a
 * one-value host column (a literal) whose value and validity bit are copied
 * into `slot` (16 bytes of device scratch) first. */
static ladle_status side_on_device(const ladle_kctx *ctx, const ladle_column *c, char *slot,
                                   const void **v, const uint8_t **valid, ladle_error *err) {
  if (on_device(c)) {
    *v = c->values;
    *valid = c->validity;
    return LADLE_OK;
  }
  if (c->length != 1)
    return ladle_err_set(err, LADLE_EINVAL, "a binary operand of %lld rows not on the GPU",
                         (long long)c->length);
  uint8_t host[16] = {0};
  memcpy(host, c->values, ladle_type_width(c->type.id));
  host[8] = ladle_column_valid(c, 0) ? 1 : 0;
  CU(cudaMemcpyAsync(slot, host, sizeof host, cudaMemcpyHostToDevice, stream_of(ctx)));
  CU(cudaStreamSynchronize(stream_of(ctx))); /* host is on this stack */
  *v = slot;
  *valid = (const uint8_t *)slot + 8;
  return LADLE_OK;
}

/* ladle's binary op as the kernels' ldc_op, or -1 */
static int ldc_op_of(int op) {
  static const int ops[LADLE_OP_COUNT_] = {
      [LADLE_OP_ADD] = LDC_ADD + 1, [LADLE_OP_SUB] = LDC_SUB + 1,
      [LADLE_OP_MUL] = LDC_MUL + 1, [LADLE_OP_EQ] = LDC_EQ + 1,
      [LADLE_OP_NE] = LDC_NE + 1,   [LADLE_OP_LT] = LDC_LT + 1,
      [LADLE_OP_LE] = LDC_LE + 1,   [LADLE_OP_GT] = LDC_GT + 1,
      [LADLE_OP_GE] = LDC_GE + 1,   [LADLE_OP_AND] = LDC_AND + 1,
      [LADLE_OP_OR] = LDC_OR + 1,   [LADLE_OP_TRUE_DIV] = LDC_DIV + 1,
      [LADLE_OP_MOD] = LDC_MOD + 1, [LADLE_OP_FLOOR_DIV] = LDC_FLOOR_DIV + 1};
  return op >= 0 && op < LADLE_OP_COUNT_ ? ops[op] - 1 : -1;
}

/* comparisons of one fixed-width type, +, -, * of one numeric type into it,
 * / of floats, % and // of integers, and/or of booleans */
static bool cuda_binary_supports(int op, ladle_dtype a, ladle_dtype b, ladle_dtype out) {
  int k = ldc_op_of(op);
  ldc_num kind;
  bool logic = k == LDC_AND || k == LDC_OR, cmp = k >= LDC_EQ && k <= LDC_GE;
  return k >= 0 && ladle_dtype_equal(a, b) && num_kind(a.id, &kind) &&
         (logic          ? a.id == LADLE_TYPE_BOOL && out.id == LADLE_TYPE_BOOL
          : cmp          ? out.id == LADLE_TYPE_BOOL && ladle_reduce_extreme_type(a.id)
          : k == LDC_DIV ? ladle_type_is_float(a.id) && ladle_dtype_equal(out, a)
          : k == LDC_MOD || k == LDC_FLOOR_DIV
              ? ladle_type_is_integer(a.id) && ladle_dtype_equal(out, a)
              : ladle_type_is_numeric(a.id) && ladle_dtype_equal(out, a));
}

static int ldc_func_of(int f) {
  switch (f) {
    case LADLE_FN_NOT:
      return LDC_F_NOT;
    case LADLE_FN_NEG:
      return LDC_F_NEG;
    case LADLE_FN_ABS:
      return LDC_F_ABS;
    case LADLE_FN_IS_NULL:
      return LDC_F_IS_NULL;
    case LADLE_FN_IS_NOT_NULL:
      return LDC_F_IS_NOT_NULL;
    case LADLE_FN_IS_NAN:
      return LDC_F_IS_NAN;
    case LADLE_FN_IS_NOT_NAN:
      return LDC_F_IS_NOT_NAN;
    case LADLE_FN_FILL_NULL:
      return LDC_F_FILL_NULL;
    case LADLE_FN_DT_YEAR:
      return LDC_F_YEAR;
    case LADLE_FN_DT_MONTH:
      return LDC_F_MONTH;
    case LADLE_FN_DT_DAY:
      return LDC_F_DAY;
    case LADLE_FN_DT_WEEKDAY:
      return LDC_F_WEEKDAY;
    case LADLE_FN_DT_ORDINAL_DAY:
      return LDC_F_ORDINAL_DAY;
    case LADLE_FN_SQRT:
      return LDC_F_SQRT;
    default:
      return -1;
  }
}

static bool cuda_program_supports(ladle_pcode code, int op, ladle_dtype a, ladle_dtype b,
                                  ladle_dtype out) {
  ldc_num ka, ko;
  switch (code) {
    case LADLE_P_BINARY:
      return cuda_binary_supports(op, a, b, out);
    case LADLE_P_CAST:
      return num_kind(a.id, &ka) && num_kind(out.id, &ko) && ladle_cast_lossless(a, out);
    case LADLE_P_WHERE:
    case LADLE_P_IF: /* b: the then value's type; the else value's is out's */
      return a.id == LADLE_TYPE_BOOL && num_kind(b.id, &ka) && ladle_dtype_equal(b, out);
    case LADLE_P_FUNC:
      if (!num_kind(a.id, &ka) || !num_kind(out.id, &ko)) return false;
      switch (ldc_func_of(op)) {
        case LDC_F_NOT:
          return a.id == LADLE_TYPE_BOOL && out.id == LADLE_TYPE_BOOL;
        case LDC_F_NEG:
        case LDC_F_ABS:
          return ladle_type_is_numeric(a.id) && ladle_dtype_equal(a, out);
        case LDC_F_IS_NULL:
        case LDC_F_IS_NOT_NULL:
          return out.id == LADLE_TYPE_BOOL;
        case LDC_F_IS_NAN:
        case LDC_F_IS_NOT_NAN:
          return ladle_type_is_float(a.id) && out.id == LADLE_TYPE_BOOL;
        case LDC_F_FILL_NULL:
          return ladle_dtype_equal(a, b) && ladle_dtype_equal(a, out);
        case LDC_F_YEAR:
          return a.id == LADLE_TYPE_DATE && out.id == LADLE_TYPE_INT32;
        case LDC_F_MONTH:
        case LDC_F_DAY:
        case LDC_F_WEEKDAY:
          return a.id == LADLE_TYPE_DATE && out.id == LADLE_TYPE_INT8;
        case LDC_F_ORDINAL_DAY:
          return a.id == LADLE_TYPE_DATE && out.id == LADLE_TYPE_INT16;
        case LDC_F_SQRT:
          return ladle_type_is_float(a.id) && ladle_dtype_equal(a, out);
        default:
          return false;
      }
    default:
      return num_kind(out.id, &ko);
  }
}

static ladle_status cuda_binary(const ladle_kctx *ctx, int op, const ladle_column *a,
                                const ladle_column *b, ladle_dtype out_type, ladle_column *out,
                                ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  if (!cuda_binary_supports(op, a->type, b->type, out_type))
    return ladle_err_set(err, LADLE_ENOTSUP, "binary operation %d of %s and %s on the GPU", op,
                         ladle_dtype_name(a->type, NULL, 0), ladle_dtype_name(b->type, NULL, 0));
  int k = ldc_op_of(op);
  ldc_num kind = LDC_U8;
  num_kind(a->type.id, &kind);
  int64_t n = LADLE_MAX(a->length, b->length);
  if (a->length == 0 || b->length == 0) n = 0;
  if ((a->length != n && a->length != 1) || (b->length != n && b->length != 1))
    return ladle_err_set(err, LADLE_EINVAL, "binary operation on %lld and %lld rows",
                         (long long)a->length, (long long)b->length);
  bool a1 = a->length == 1 && n != 1, b1 = b->length == 1 && n != 1;
  if (k == LDC_SUB && ladle_type_is_float(a->type.id) && a->length == 1 && b->length == n &&
      (n > 1 || ctx->many_rows))
    k = LDC_NEG_SUB;
  if (k == LDC_DIV && b->length == 1 && a->length == n && (n > 1 || ctx->many_rows))
    k = LDC_DIV_RECIP;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), out_type, n, true, 0, &o, err));
  ladle_buffer *scratch = NULL;
  unsigned long long nulls = 0;
  ladle_status st = ladle_buffer_alloc(alloc_of(ctx), 48, &scratch, err);
  if (st != LADLE_OK) goto done;
  if (n > 0) {
    char *sc = scratch->data;
    const void *av, *bv;
    const uint8_t *aval, *bval;
    cudaStream_t s = stream_of(ctx);
    if ((st = side_on_device(ctx, a, sc + 16, &av, &aval, err)) != LADLE_OK ||
        (st = side_on_device(ctx, b, sc + 32, &bv, &bval, err)) != LADLE_OK)
      goto done;
    CU_GOTO(cudaMemsetAsync(sc, 0, 8, s));
    CU_GOTO(ldc_binary(kind, k, av, aval, a1, bv, bval, b1, n, LADLE_COL_MUT(&o, uint8_t),
                       (uint32_t *)LADLE_COL_VALIDITY_MUT(&o), (unsigned long long *)sc, s));
    CU_GOTO(cudaMemcpyAsync(&nulls, sc, 8, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
  set_nulls(&o, nulls);
done:
  return finish(st, &o, scratch, out);
}

/* A row program in one kernel: columns read once, every operation in
 * registers, one output column written (ldc_program). */
static ladle_status lower_program(const ladle_program *p, const ladle_column *inputs,
                                  size_t ninputs, ldc_prog *gp, int64_t *rows, ladle_error *err) {
  if (p->n == 0 || p->n > LDC_PROG_MAX || ninputs > LDC_PROG_INPUTS)
    return ladle_err_set(err, LADLE_EINVAL, "a row program of %zu instructions over %zu columns",
                         p->n, ninputs);
  ldc_prog g;
  memset(&g, 0, sizeof g);
  g.n = (int)p->n;
  int64_t n = -1;
  *rows = -1;
  for (size_t i = 0; i < ninputs; i++) {
    if (!on_device(&inputs[i]) && inputs[i].length > 0)
      return ladle_err_set(err, LADLE_EINVAL, "a row program's input %zu is not on the GPU", i);
    if (n >= 0 && inputs[i].length != n)
      return ladle_err_set(err, LADLE_EINVAL, "a row program over columns of %lld and %lld rows",
                           (long long)n, (long long)inputs[i].length);
    n = inputs[i].length;
    g.col[i] = inputs[i].values;
    g.colv[i] = inputs[i].validity;
  }
  if (n < 0) return ladle_err_set(err, LADLE_EINVAL, "a row program without a column");
  for (size_t k = 0; k < p->n; k++) {
    const ladle_pinstr *in = &p->ins[k];
    ldc_ins *o = &g.ins[k];
    ldc_num kind = LDC_U8;
    switch (in->code) {
      case LADLE_P_COL:
        if (in->a < 0 || (size_t)in->a >= ninputs || !num_kind(in->type.id, &kind) ||
            !ladle_dtype_equal(in->type, inputs[in->a].type))
          return ladle_err_set(err, LADLE_EINVAL, "a row program's column %d", in->a);
        o->code = LDC_I_COL;
        o->kind = (uint8_t)kind;
        o->a = (uint8_t)in->a;
        break;
      case LADLE_P_CONST:
        if (in->value == NULL || in->value->length != 1 || on_device(in->value) ||
            !num_kind(in->value->type.id, &kind))
          return ladle_err_set(err, LADLE_EINVAL, "a row program's constant is not one host value");
        o->code = LDC_I_CONST;
        o->kind = (uint8_t)kind;
        o->cvalid = ladle_column_valid(in->value, 0);
        memcpy(&o->cbits, in->value->values, ladle_type_width(in->value->type.id));
        break;
      case LADLE_P_IF: {
        if (in->a < 0 || in->b < 0 || in->c < 0 || (size_t)in->a >= k || (size_t)in->b >= k ||
            (size_t)in->c >= k || !ladle_dtype_equal(p->ins[in->c].type, in->type) ||
            !cuda_program_supports(LADLE_P_IF, 0, p->ins[in->a].type, p->ins[in->b].type, in->type))
          return ladle_err_set(err, LADLE_EINVAL, "a row program's if is not over earlier values");
        o->code = LDC_I_IF;
        o->a = (uint8_t)in->a;
        o->b = (uint8_t)in->b;
        o->c = (uint8_t)in->c;
        break;
      }
      case LADLE_P_WHERE: {
        if (in->a < 0 || in->b < 0 || (size_t)in->a >= k || (size_t)in->b >= k ||
            !cuda_program_supports(LADLE_P_WHERE, 0, p->ins[in->a].type, p->ins[in->b].type,
                                   in->type))
          return ladle_err_set(err, LADLE_EINVAL,
                               "a row program's where is not over earlier values");
        o->code = LDC_I_WHERE;
        o->a = (uint8_t)in->a;
        o->b = (uint8_t)in->b;
        break;
      }
      case LADLE_P_FUNC:
      case LADLE_P_CAST: {
        bool two = in->code == LADLE_P_FUNC && in->op == LADLE_FN_FILL_NULL;
        if (in->a < 0 || (size_t)in->a >= k || (two && (in->b < 0 || (size_t)in->b >= k)))
          return ladle_err_set(err, LADLE_EINVAL, "a row program's operand is not before it");
        ladle_dtype at = p->ins[in->a].type, bt = two ? p->ins[in->b].type : at;
        if (!cuda_program_supports(in->code, in->op, at, bt, in->type))
          return ladle_err_set(err, LADLE_ENOTSUP, "%s of %s into %s on the GPU",
                               in->code == LADLE_P_CAST ? "a cast" : "a function",
                               ladle_dtype_name(at, NULL, 0), ladle_dtype_name(in->type, NULL, 0));
        ldc_num ko = LDC_U8;
        num_kind(at.id, &kind);
        num_kind(in->type.id, &ko);
        o->code = in->code == LADLE_P_CAST ? LDC_I_CAST : LDC_I_FUNC;
        o->kind = (uint8_t)kind;
        o->op = (uint8_t)(in->code == LADLE_P_CAST ? (int)ko : ldc_func_of(in->op));
        o->a = (uint8_t)in->a;
        o->b = (uint8_t)(two ? in->b : in->a);
        break;
      }
      default: {
        if (in->a < 0 || in->b < 0 || (size_t)in->a >= k || (size_t)in->b >= k)
          return ladle_err_set(err, LADLE_EINVAL, "a row program's operand is not before it");
        const ladle_pinstr *x = &p->ins[in->a], *y = &p->ins[in->b];
        if (!cuda_binary_supports(in->op, x->type, y->type, in->type))
          return ladle_err_set(err, LADLE_ENOTSUP, "binary operation %d of %s and %s on the GPU",
                               in->op, ladle_dtype_name(x->type, NULL, 0),
                               ladle_dtype_name(y->type, NULL, 0));
        int op = ldc_op_of(in->op);
        /* one float minus many: -(b - a), as Polars (binary's rule) */
        if (op == LDC_SUB && ladle_type_is_float(x->type.id) && x->code == LADLE_P_CONST &&
            y->code != LADLE_P_CONST && n > 1)
          op = LDC_NEG_SUB;
        /* many floats by one: through its reciprocal (binary's rule) */
        if (op == LDC_DIV && y->code == LADLE_P_CONST && x->code != LADLE_P_CONST && n > 1)
          op = LDC_DIV_RECIP;
        num_kind(x->type.id, &kind);
        o->code = LDC_I_OP;
        o->kind = (uint8_t)kind;
        o->op = (uint8_t)op;
        o->a = (uint8_t)in->a;
        o->b = (uint8_t)in->b;
      }
    }
  }
  *gp = g;
  *rows = n;
  return LADLE_OK;
}

static ladle_status cuda_eval_program(const ladle_kctx *ctx, const ladle_program *p,
                                      const ladle_column *inputs, size_t ninputs, ladle_column *out,
                                      ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  ldc_prog g;
  int64_t n;
  LADLE_RETURN_NOT_OK(lower_program(p, inputs, ninputs, &g, &n, err));
  ldc_num out_kind;
  ladle_dtype t = p->ins[p->n - 1].type;
  if (!num_kind(t.id, &out_kind))
    return ladle_err_set(err, LADLE_ENOTSUP, "a row program into %s on the GPU",
                         ladle_dtype_name(t, NULL, 0));
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), t, n, true, 0, &o, err));
  ladle_buffer *scratch = NULL;
  unsigned long long nulls = 0;
  ladle_status st = ladle_buffer_alloc(alloc_of(ctx), 8, &scratch, err);
  if (st == LADLE_OK && n > 0) {
    cudaStream_t s = stream_of(ctx);
    CU_GOTO(cudaMemsetAsync(scratch->data, 0, 8, s));
    CU_GOTO(ldc_program(&g, out_kind, n, LADLE_COL_MUT(&o, uint8_t),
                        (uint32_t *)LADLE_COL_VALIDITY_MUT(&o), (unsigned long long *)scratch->data,
                        s));
    CU_GOTO(cudaMemcpyAsync(&nulls, scratch->data, 8, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
  if (st == LADLE_OK) set_nulls(&o, nulls);
done:
  return finish(st, &o, scratch, out);
}

/* The sum or count of a program's valid values in one kernel (no column). */
static ladle_status cuda_reduce_program(const ladle_kctx *ctx, ladle_reduce_op op,
                                        const ladle_program *p, const ladle_column *inputs,
                                        size_t ninputs, ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  if (op != LADLE_REDUCE_SUM && op != LADLE_REDUCE_COUNT)
    return ladle_err_set(err, LADLE_ENOTSUP, "reduction %d of a row program on the GPU", (int)op);
  ldc_prog g;
  int64_t n;
  LADLE_RETURN_NOT_OK(lower_program(p, inputs, ninputs, &g, &n, err));
  ladle_dtype t = p->ins[p->n - 1].type;
  ldc_num kind;
  if (!num_kind(t.id, &kind) ||
      (op == LADLE_REDUCE_SUM && !(ladle_type_is_numeric(t.id) || t.id == LADLE_TYPE_BOOL)))
    return ladle_err_set(err, LADLE_ENOTSUP, "a reduction of a row program of %s on the GPU",
                         ladle_dtype_name(t, NULL, 0));
  ladle_buffer *part = NULL;
  LADLE_RETURN_NOT_OK(ladle_buffer_alloc(alloc_of(ctx), (LDC_SUM_BLOCKS + 2) * 8, &part, err));
  sum_acc acc[2] = {{0}, {0}}; /* the sum, the count */
  cudaStream_t s = stream_of(ctx);
  ladle_status st = LADLE_OK;
  ladle_column o;
  memset(&o, 0, sizeof o);
  if (n > 0) {
    CU_GOTO(cudaMemsetAsync(part->data, 0, 16, s));
    CU_GOTO(ldc_program_sum(&g, kind, n, (char *)part->data, (char *)part->data + 16,
                            (unsigned long long *)((char *)part->data + 8), s));
    CU_GOTO(cudaMemcpyAsync(acc, part->data, 16, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
  if (op == LADLE_REDUCE_COUNT) {
    if (acc[1].u > UINT32_MAX) {
      st = ladle_err_set(err, LADLE_EINVAL, "count of %llu values does not fit UInt32", acc[1].u);
      goto done;
    }
    uint32_t c = (uint32_t)acc[1].u;
    st = one_value(ctx, ladle_dtype_make(LADLE_TYPE_UINT32), &c, &o, err);
  } else {
    /* the accumulator in the sum's type, as cuda_reduce writes it */
    ladle_dtype ot = ladle_sum_type(t);
    uint8_t val[8];
    sum_value(ot, &acc[0], val);
    st = one_value(ctx, ot, val, &o, err);
  }
done:
  return finish(st, &o, part, out);
}

/* ---------------------------------------------------------- group-by */

/* nkeys key columns of n rows on the device as the kernels' keys; `what`
 * names the operation in errors ("group-by", "join"). */
static ladle_status lower_keys(const ladle_column *keys, size_t nkeys, int64_t n, const char *what,
                               ldc_keys *k, ladle_error *err) {
  memset(k, 0, sizeof *k);
  k->n = (int)nkeys;
  for (size_t i = 0; i < nkeys; i++) {
    const ladle_column *c = &keys[i];
    ldc_num kind;
    bool str = ladle_type_is_varlen(c->type.id);
    if (c->length != n)
      return ladle_err_set(err, LADLE_EINVAL, "%s keys of %lld and %lld rows", what, (long long)n,
                           (long long)c->length);
    if ((!str && !num_kind(c->type.id, &kind)) || (!on_device(c) && c->length > 0))
      return ladle_err_set(err, LADLE_ENOTSUP, "a %s key of type %s on the GPU", what,
                           ladle_dtype_name(c->type, NULL, 0));
    k->width[i] = str ? 0 : (uint8_t)ladle_type_width(c->type.id);
    k->flt[i] = ladle_type_is_float(c->type.id) ? k->width[i] : 0;
    k->values[i] = c->values;
    k->valid[i] = c->validity;
    k->chars[i] = c->chars;
  }
  return LADLE_OK;
}

static ladle_status cuda_group_keys(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                    const ladle_column *sel, ladle_dgroups *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  if (nkeys == 0 || nkeys > LDC_KEYS_MAX)
    return ladle_err_set(err, LADLE_ENOTSUP, "a group-by of %zu keys on the GPU (at most %d)",
                         nkeys, LDC_KEYS_MAX);
  if (sel != NULL && (sel->type.id != LADLE_TYPE_INT64 || sel->null_count != 0 ||
                      (!on_device(sel) && sel->length > 0)))
    return ladle_err_set(err, LADLE_EINVAL,
                         "group-by rows: an Int64 column without nulls on the GPU");
  int64_t n = keys[0].length, m = sel != NULL ? sel->length : n;
  const int64_t *sv = sel != NULL ? sel->values : NULL;
  if (m >= INT32_MAX)
    return ladle_err_set(err, LADLE_ENOTSUP, "a group-by of %lld rows on the GPU (at most %d)",
                         (long long)m, INT32_MAX - 1);
  ldc_keys k;
  LADLE_RETURN_NOT_OK(lower_keys(keys, nkeys, n, "group-by", &k, err));
  const ladle_allocator *a = alloc_of(ctx);
  ldc_alloc scratch = {a->alloc, a->free, a->ctx};
  cudaStream_t s = stream_of(ctx);
  ladle_dtype i64 = ladle_dtype_make(LADLE_TYPE_INT64);
  ladle_dgroups d;
  memset(&d, 0, sizeof d);
  d.nrows = m;
  ladle_buffer *cnt = NULL;
  ladle_status st =
      ladle_column_alloc_with(a, ladle_dtype_make(LADLE_TYPE_UINT32), m, false, 0, &d.ids, err);
  if (st == LADLE_OK) st = ladle_column_alloc_with(a, i64, m, false, 0, &d.first, err);
  if (st == LADLE_OK) st = ladle_column_alloc_with(a, i64, m, false, 0, &d.rows, err);
  if (st == LADLE_OK) st = scalar_scratch(ctx, &cnt, err);
  if (st != LADLE_OK) goto done;
  int64_t ng = 0;
  if (m > 0) {
    CU_GOTO(ldc_group_keys(&k, sv, m, LADLE_COL_MUT(&d.ids, uint32_t),
                           LADLE_COL_MUT(&d.first, int64_t), cnt->data, &scratch, s));
    CU_GOTO(cudaMemcpyAsync(&ng, cnt->data, 8, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
  d.ngroups = ng;
  d.first.length = ng; /* the buffer keeps its room for n */
  if (sel != NULL) ladle_column_copy_ref(sel, &d.sel);
  st = ladle_column_alloc_with(a, i64, ng + 1, false, 0, &d.offsets, err);
  if (st != LADLE_OK) goto done;
  CU_GOTO(ldc_group_rows(LADLE_COL_MUT(&d.ids, uint32_t), sv, m, ng,
                         LADLE_COL_MUT(&d.rows, int64_t), LADLE_COL_MUT(&d.offsets, int64_t),
                         &scratch, s));
  CU_GOTO(cudaStreamSynchronize(s));
done:
  ladle_buffer_release(cnt);
  if (st != LADLE_OK) {
    ladle_dgroups_release(&d);
    return st;
  }
  *out = d;
  return LADLE_OK;
}

static ladle_status cuda_grouped_reduce(const ladle_kctx *ctx, ladle_reduce_op op,
                                        const ladle_program *p, const ladle_column *inputs,
                                        size_t ninputs, const ladle_dgroups *g, ladle_column *out,
                                        ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  static const int ops[LADLE_REDUCE_COUNT_] = {[LADLE_REDUCE_SUM] = LDC_G_SUM,
                                               [LADLE_REDUCE_MIN] = LDC_G_MIN,
                                               [LADLE_REDUCE_MAX] = LDC_G_MAX,
                                               [LADLE_REDUCE_COUNT] = LDC_G_COUNT,
                                               [LADLE_REDUCE_MEAN] = LDC_G_MEAN};
  if (p != NULL && ((int)op < 0 || op >= LADLE_REDUCE_COUNT_))
    return ladle_err_set(err, LADLE_EINVAL, "reduction %d: no such reduction", (int)op);
  ldc_prog gp;
  memset(&gp, 0, sizeof gp);
  ladle_dtype ot = ladle_dtype_make(LADLE_TYPE_UINT32);
  ldc_num kind = LDC_U8;
  if (p != NULL) {
    int64_t n;
    LADLE_RETURN_NOT_OK(lower_program(p, inputs, ninputs, &gp, &n, err));
    if (n < g->nrows)
      return ladle_err_set(err, LADLE_EINVAL, "grouped_reduce of %lld rows over groups of %lld",
                           (long long)n, (long long)g->nrows);
    ladle_dtype t = p->ins[p->n - 1].type;
    static const char *const names[LADLE_REDUCE_COUNT_] = {"sum", "min", "max", "count", "mean"};
    if (!num_kind(t.id, &kind) || !ladle_grouped_takes(op, t.id))
      return ladle_err_set(err, LADLE_ENOTSUP, "a grouped %s of %s on the GPU", names[op],
                           ladle_dtype_name(t, NULL, 0));
    ot = ladle_grouped_type(op, t);
  }
  int64_t ng = g->ngroups;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ot, ng, true, 0, &o, err));
  ladle_buffer *cnt = NULL;
  unsigned long long nulls = 0;
  ladle_status st = scalar_scratch(ctx, &cnt, err);
  if (st == LADLE_OK && ng > 0) {
    const ladle_allocator *a = alloc_of(ctx);
    ldc_alloc scratch = {a->alloc, a->free, a->ctx};
    cudaStream_t s = stream_of(ctx);
    CU_GOTO(ldc_grouped_reduce(p != NULL ? &gp : NULL, kind, p != NULL ? ops[op] : LDC_G_LEN,
                               (int)ladle_type_width(ot.id), g->rows.values, g->offsets.values,
                               g->ids.values, g->sel.owners[1] != NULL ? g->sel.values : NULL,
                               g->nrows, ng, LADLE_COL_MUT(&o, uint8_t),
                               (uint32_t *)LADLE_COL_VALIDITY_MUT(&o), cnt->data, &scratch, s));
    CU_GOTO(cudaMemcpyAsync(&nulls, cnt->data, 8, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
  if (st == LADLE_OK) set_nulls(&o, nulls);
done:
  return finish(st, &o, cnt, out);
}

/* ---------------------------------------------------------- strings */

_Static_assert((int)LADLE_STR_EQ == (int)LDC_STR_EQ && (int)LADLE_STR_GE == (int)LDC_STR_GE &&
                   (int)LADLE_STR_STARTS_WITH == (int)LDC_STR_STARTS_WITH &&
                   (int)LADLE_STR_CONTAINS == (int)LDC_STR_CONTAINS &&
                   (int)LADLE_STR_CONTAINS_SEQ == (int)LDC_STR_CONTAINS_SEQ,
               "ladle_str_op and the kernels' numbering");

static ladle_status cuda_str_match(const ladle_kctx *ctx, ladle_str_op op, const ladle_column *in,
                                   const char *pat, size_t pat_len, ladle_column *out,
                                   ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  if (in->type.id != LADLE_TYPE_STRING || (!on_device(in) && in->length > 0))
    return ladle_err_set(err, LADLE_ENOTSUP, "a string match of a %s column on the GPU",
                         ladle_dtype_name(in->type, NULL, 0));
  if ((int)op < (int)LADLE_STR_EQ || op > LADLE_STR_CONTAINS_SEQ)
    return ladle_err_set(err, LADLE_EINVAL, "string match %d: no such operation", (int)op);
  int64_t n = in->length;
  bool nulls = in->null_count > 0 && in->validity != NULL;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ladle_dtype_make(LADLE_TYPE_BOOL), n,
                                              nulls, 0, &o, err));
  ladle_buffer *p = NULL;
  ladle_status st = ladle_buffer_alloc(alloc_of(ctx), LADLE_MAX(pat_len, 1), &p, err);
  if (st == LADLE_OK && n > 0) {
    cudaStream_t s = stream_of(ctx);
    if (pat_len > 0) CU_GOTO(cudaMemcpyAsync(p->data, pat, pat_len, cudaMemcpyHostToDevice, s));
    if (nulls)
      CU_GOTO(cudaMemcpyAsync(LADLE_COL_VALIDITY_MUT(&o), in->validity,
                              (size_t)ladle_bitmap_bytes(n), cudaMemcpyDeviceToDevice, s));
    CU_GOTO(ldc_str_match((int)op, in->values, in->chars, n, p->data, (int64_t)pat_len,
                          LADLE_COL_MUT(&o, uint8_t), s));
    CU_GOTO(cudaStreamSynchronize(s));
    o.null_count = nulls ? in->null_count : 0;
  }
done:
  return finish(st, &o, p, out);
}

static ladle_status cuda_str_compare(const ladle_kctx *ctx, ladle_str_op op, const ladle_column *a,
                                     const ladle_column *b, ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  for (int k = 0; k < 2; k++) {
    const ladle_column *c = k == 0 ? a : b;
    if (c->type.id != LADLE_TYPE_STRING || (!on_device(c) && c->length > 0))
      return ladle_err_set(err, LADLE_ENOTSUP, "a string comparison of a %s column on the GPU",
                           ladle_dtype_name(c->type, NULL, 0));
  }
  if (a->length != b->length || (int)op < (int)LADLE_STR_EQ || op > LADLE_STR_GE)
    return ladle_err_set(err, LADLE_EINVAL, "string comparison %d of %lld and %lld rows", (int)op,
                         (long long)a->length, (long long)b->length);
  int64_t n = a->length;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ladle_dtype_make(LADLE_TYPE_BOOL), n,
                                              true, 0, &o, err));
  ladle_buffer *cnt = NULL;
  unsigned long long nulls = 0;
  ladle_status st = scalar_scratch(ctx, &cnt, err);
  if (st == LADLE_OK && n > 0) {
    cudaStream_t s = stream_of(ctx);
    CU_GOTO(ldc_str_compare((int)op, a->values, a->chars, a->validity, b->values, b->chars,
                            b->validity, n, LADLE_COL_MUT(&o, uint8_t),
                            (uint32_t *)LADLE_COL_VALIDITY_MUT(&o), cnt->data, s));
    CU_GOTO(cudaMemcpyAsync(&nulls, cnt->data, 8, cudaMemcpyDeviceToHost, s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
  if (st == LADLE_OK) set_nulls(&o, nulls);
done:
  return finish(st, &o, cnt, out);
}

/* ---------------------------------------------------------- joins */

static ladle_status cuda_join_rows(const ladle_kctx *ctx, const ladle_column *lkeys,
                                   const ladle_column *rkeys, size_t nkeys, int64_t nl, int64_t nr,
                                   ladle_join_type how, bool nulls_equal, ladle_djoin *out,
                                   ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  const ladle_allocator *a = alloc_of(ctx);
  cudaStream_t s = stream_of(ctx);
  ladle_dtype i64 = ladle_dtype_make(LADLE_TYPE_INT64);
  ladle_djoin d;
  memset(&d, 0, sizeof d);
  ladle_status st = LADLE_OK;
  /* the device buffers between the launchers: the build side's table
   * (hash, slots, gid), its group per row and first rows, its rows by group
   * and their offsets; per probe row its group and where its pairs start;
   * a full join's groups met and unmatched build rows' places; two counts */
  enum { HASH, SLOTS, GID, BIDS, FIRST, ROWS, OFFSETS, PGROUP, START, HIT, BRANK, COUNT, NBUF };
  ladle_buffer *b[NBUF] = {NULL};
  if (nl < 0 || nr < 0) return ladle_err_set(err, LADLE_EINVAL, "a join of sides of no height");
  if (how == LADLE_JOIN_CROSS) {
    if (nr > 0 && nl > INT64_MAX / 16 / nr)
      return ladle_err_set(err, LADLE_ENOMEM, "cross join of %lld x %lld rows is too large",
                           (long long)nl, (long long)nr);
    d.n = nl * nr;
    st = ladle_column_alloc_with(a, i64, d.n, false, 0, &d.left, err);
    if (st == LADLE_OK) st = ladle_column_alloc_with(a, i64, d.n, false, 0, &d.right, err);
    if (st == LADLE_OK && d.n > 0) {
      CU_GOTO(ldc_cross_pairs(nl, nr, LADLE_COL_MUT(&d.left, int64_t),
                              LADLE_COL_MUT(&d.right, int64_t), s));
      CU_GOTO(cudaStreamSynchronize(s));
    }
    goto done;
  }
  if (nkeys == 0 || nkeys > LDC_KEYS_MAX)
    return ladle_err_set(err, LADLE_ENOTSUP, "a join on %zu keys on the GPU (1 to %d)", nkeys,
                         LDC_KEYS_MAX);
  for (size_t i = 0; i < nkeys; i++)
    if (!ladle_dtype_equal(lkeys[i].type, rkeys[i].type)) {
      char t1[48], t2[48];
      return ladle_err_set(err, LADLE_ENOTSUP, "a join of a %s key with a %s key on the GPU",
                           ladle_dtype_name(lkeys[i].type, t1, sizeof t1),
                           ladle_dtype_name(rkeys[i].type, t2, sizeof t2));
    }
  /* the build side is the right one (the left for a right join, whose
   * pairs come out by right row) */
  bool swap = how == LADLE_JOIN_RIGHT;
  int64_t nb = swap ? nl : nr, np = swap ? nr : nl;
  if (nb >= INT32_MAX || np >= INT32_MAX)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "a join of %lld and %lld rows on the GPU (at most %d "
                         "a side)",
                         (long long)nl, (long long)nr, INT32_MAX - 1);
  ldc_keys bk, pk;
  LADLE_RETURN_NOT_OK(lower_keys(swap ? lkeys : rkeys, nkeys, nb, "join", &bk, err));
  LADLE_RETURN_NOT_OK(lower_keys(swap ? rkeys : lkeys, nkeys, np, "join", &pk, err));
  int jh = how == LADLE_JOIN_INNER  ? LDC_J_INNER
           : how == LADLE_JOIN_FULL ? LDC_J_FULL
           : how == LADLE_JOIN_SEMI ? LDC_J_SEMI
           : how == LADLE_JOIN_ANTI ? LDC_J_ANTI
                                    : LDC_J_LEFT; /* LEFT, and RIGHT swapped */
  bool full = jh == LDC_J_FULL, pairs = jh != LDC_J_SEMI && jh != LDC_J_ANTI;
  ldc_alloc scratch = {a->alloc, a->free, a->ctx};
  ldc_gtable t;
  t.cap = ldc_gtable_cap(nb);
  int64_t ng = 0, counts[2] = {0, 0};
  /* sizes known before the build side is grouped (the rest after) */
  size_t sizes[NBUF] = {[HASH] = (size_t)nb * 8,
                        [SLOTS] = t.cap * 4,
                        [GID] = t.cap * 4,
                        [BIDS] = (size_t)nb * 4,
                        [FIRST] = (size_t)nb * 8,
                        [ROWS] = (size_t)nb * 8,
                        [PGROUP] = (size_t)np * 4,
                        [START] = (size_t)(np + 1) * 8,
                        [COUNT] = 16};
  for (int i = 0; i < NBUF && st == LADLE_OK; i++)
    if (i != OFFSETS && i != HIT && i != BRANK) /* an empty side's too: 8 bytes */
      st = ladle_buffer_alloc(a, LADLE_MAX(sizes[i], 8), &b[i], err);
  if (st != LADLE_OK) goto done;
  t.hash = b[HASH]->data;
  t.slots = b[SLOTS]->data;
  t.gid = b[GID]->data;
  CU_GOTO(ldc_group_table(&bk, NULL, nb, &t, b[BIDS]->data, b[FIRST]->data, b[COUNT]->data,
                          &scratch, s));
  CU_GOTO(cudaMemcpyAsync(&ng, b[COUNT]->data, 8, cudaMemcpyDeviceToHost, s));
  CU_GOTO(cudaStreamSynchronize(s));
  st = ladle_buffer_alloc(a, (size_t)(ng + 1) * 8, &b[OFFSETS], err);
  if (st == LADLE_OK && full) st = ladle_buffer_alloc(a, (size_t)LADLE_MAX(ng, 1), &b[HIT], err);
  if (st == LADLE_OK && full) st = ladle_buffer_alloc(a, (size_t)(nb + 1) * 8, &b[BRANK], err);
  if (st != LADLE_OK) goto done;
  uint8_t *hit = full ? b[HIT]->data : NULL;
  int64_t *brank = full ? b[BRANK]->data : NULL;
  CU_GOTO(
      ldc_group_rows(b[BIDS]->data, NULL, nb, ng, b[ROWS]->data, b[OFFSETS]->data, &scratch, s));
  CU_GOTO(ldc_join_probe(&bk, &t, b[OFFSETS]->data, b[BIDS]->data, nb, ng, &pk, np, jh, nulls_equal,
                         b[PGROUP]->data, b[START]->data, hit, brank, &scratch, s));
  CU_GOTO(
      cudaMemcpyAsync(&counts[0], (int64_t *)b[START]->data + np, 8, cudaMemcpyDeviceToHost, s));
  if (full) CU_GOTO(cudaMemcpyAsync(&counts[1], brank + nb, 8, cudaMemcpyDeviceToHost, s));
  CU_GOTO(cudaStreamSynchronize(s));
  d.n = counts[0] + counts[1];
  st = ladle_column_alloc_with(a, i64, d.n, false, 0, &d.left, err);
  if (st == LADLE_OK && pairs) st = ladle_column_alloc_with(a, i64, d.n, false, 0, &d.right, err);
  if (st != LADLE_OK) goto done;
  int64_t *lo = LADLE_COL_MUT(&d.left, int64_t),
          *ro = pairs ? LADLE_COL_MUT(&d.right, int64_t) : NULL;
  CU_GOTO(ldc_join_emit(b[PGROUP]->data, b[START]->data, np, b[ROWS]->data, b[OFFSETS]->data, jh,
                        hit, b[BIDS]->data, brank, nb, swap ? ro : lo, swap ? lo : ro, s));
  CU_GOTO(cudaStreamSynchronize(s));
done:
  for (int i = 0; i < NBUF; i++) ladle_buffer_release(b[i]);
  if (st != LADLE_OK) {
    ladle_djoin_release(&d);
    return st;
  }
  *out = d;
  return LADLE_OK;
}

/* ---------------------------------------------------------- sort */

static ladle_status cuda_sort_perm(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                   const bool *descending, const bool *nulls_last,
                                   ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  enum { MAX_KEYS = 32 };
  if (nkeys == 0 || nkeys > MAX_KEYS)
    return ladle_err_set(err, LADLE_ENOTSUP, "a sort by %zu keys on the GPU (1 to %d)", nkeys,
                         (int)MAX_KEYS);
  int64_t n = keys[0].length;
  if (n >= INT32_MAX)
    return ladle_err_set(err, LADLE_ENOTSUP, "a sort of %lld rows on the GPU (at most %d)",
                         (long long)n, INT32_MAX - 1);
  ldc_sort_key k[MAX_KEYS];
  for (size_t i = 0; i < nkeys; i++) {
    const ladle_column *c = &keys[i];
    ldc_num kind;
    if (!num_kind(c->type.id, &kind) || (!on_device(c) && c->length > 0))
      return ladle_err_set(err, LADLE_ENOTSUP, "a sort key of type %s on the GPU",
                           ladle_dtype_name(c->type, NULL, 0));
    if (c->length != n)
      return ladle_err_set(err, LADLE_EINVAL, "sort keys of %lld and %lld rows", (long long)n,
                           (long long)c->length);
    k[i] = (ldc_sort_key){(int)kind,
                          c->values,
                          c->validity,
                          c->null_count > 0,
                          descending != NULL && descending[i],
                          nulls_last != NULL && nulls_last[i],
                          64};
  }
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ladle_dtype_make(LADLE_TYPE_INT64), n,
                                              false, 0, &o, err));
  ladle_status st = LADLE_OK;
  if (n > 0) {
    const ladle_allocator *a = alloc_of(ctx);
    ldc_alloc scratch = {a->alloc, a->free, a->ctx};
    CU_GOTO(ldc_sort_perm(k, (int)nkeys, n, LADLE_COL_MUT(&o, int64_t), &scratch, stream_of(ctx)));
    CU_GOTO(cudaStreamSynchronize(stream_of(ctx)));
  }
done:
  return finish(st, &o, NULL, out);
}

/* ---------------------------------------------------------- partitions
 *
 * hash_partition and range_partition: the checks and statuses of the CPU's
 * (cpu/partition.c), then partition.cu's kernels find each row's part and
 * sort the rows by part. A range partition's splitters (nparts - 1 rows)
 * come to the host, where sort.c orders them (out of order: an error) and
 * gives their order codes, the same ones the CPU compares. */

_Static_assert(LDC_PART_SEED == LADLE_PART_SEED && LDC_PART_NULL == LADLE_PART_NULL,
               "partition.cu's hash constants are core.h's");

/* A key type's kind for partition.cu; false for a type it has none for. */
static bool part_kind(ladle_type_id id, int *kind) {
  ldc_num k;
  switch (id) {
    case LADLE_TYPE_NULL:
      *kind = LDC_PK_NULL;
      return true;
    case LADLE_TYPE_BOOL:
      *kind = LDC_PK_BOOL;
      return true;
    case LADLE_TYPE_STRING:
    case LADLE_TYPE_BINARY:
      *kind = LDC_PK_STR;
      return true;
    case LADLE_TYPE_DECIMAL:
    case LADLE_TYPE_INT128:
    case LADLE_TYPE_UINT128:
      *kind = LDC_PK_B16;
      return true;
    case LADLE_TYPE_TIME:
      *kind = LDC_I64;
      return true;
    default:
      if (!num_kind(id, &k)) return false;
      *kind = (int)k;
      return true;
  }
}

/* The key types hash_partition takes: the CPU's, each with a kind here. */
static bool part_hash_takes(ladle_type_id id) {
  int kind;
  return ladle_cpu_hash_partition_takes(id) && part_kind(id, &kind);
}

/* The key types range_partition takes: those sort_indices orders. */
static bool part_range_takes(ladle_type_id id) {
  int kind;
  return ladle_cpu_sort_orders(id) && part_kind(id, &kind);
}

/* The arguments both entries share: the CPU's checks (the same statuses, in
 * the same order), then every key on the device. */
static ladle_status part_keys(const char *what, const ladle_column *keys, size_t nkeys, int nparts,
                              const int64_t *counts, bool (*takes)(ladle_type_id),
                              ladle_error *err) {
  LADLE_RETURN_NOT_OK(
      ladle_cpu_partition_check_keys(what, keys, nkeys, nparts, counts, takes, err));
  for (size_t i = 0; i < nkeys; i++)
    if (!on_device(&keys[i]) && keys[i].length > 0)
      return ladle_err_set(err, LADLE_EINVAL, "%s: a key not on the GPU", what);
  return LADLE_OK;
}

/* Checked keys as partition.cu takes them, into k (nkeys entries). */
static void part_lower(const ladle_column *keys, size_t nkeys, ldc_pkey *k) {
  for (size_t i = 0; i < nkeys; i++) {
    memset(&k[i], 0, sizeof k[i]);
    part_kind(keys[i].type.id, &k[i].kind);
    k[i].values = keys[i].values;
    k[i].valid = keys[i].validity;
    k[i].chars = keys[i].chars;
  }
}

/* The rows of keys k (n of them) into nparts parts by partition.cu (scls
 * NULL: by the hash), into *perm and host counts. */
static ladle_status part_run(const ladle_kctx *ctx, const char *what, const ldc_pkey *k,
                             size_t nkeys, const uint8_t *scls, const uint64_t *scode, int64_t n,
                             int nparts, ladle_column *perm, int64_t *counts, ladle_error *err) {
  if (nparts > 1 && n >= INT32_MAX)
    return ladle_err_set(err, LADLE_ENOTSUP, "%s of %lld rows on the GPU (at most %d)", what,
                         (long long)n, INT32_MAX - 1);
  const ladle_allocator *a = alloc_of(ctx);
  cudaStream_t s = stream_of(ctx);
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc_with(a, ladle_dtype_make(LADLE_TYPE_INT64), n, false, 0, &o, err));
  ladle_buffer *starts = NULL;
  int64_t *hs = malloc(((size_t)nparts + 1) * sizeof *hs);
  ladle_status st = hs != NULL ? ladle_buffer_alloc(a, ((size_t)nparts + 1) * 8, &starts, err)
                               : ladle_err_set(err, LADLE_ENOMEM, "%s: out of memory", what);
  if (st != LADLE_OK) goto done;
  ldc_alloc scratch = {a->alloc, a->free, a->ctx};
  CU_GOTO(ldc_partition(k, (int)nkeys, scls, scode, n, nparts, LADLE_COL_MUT(&o, int64_t),
                        starts->data, &scratch, s));
  CU_GOTO(cudaMemcpyAsync(hs, starts->data, ((size_t)nparts + 1) * 8, cudaMemcpyDeviceToHost, s));
  CU_GOTO(cudaStreamSynchronize(s));
  for (int p = 0; p < nparts; p++) counts[p] = hs[p + 1] - hs[p];
done:
  free(hs);
  return finish(st, &o, starts, perm);
}

static ladle_status cuda_hash_partition(const ladle_kctx *ctx, const ladle_column *keys,
                                        size_t nkeys, int nparts, ladle_column *perm,
                                        int64_t *counts, ladle_error *err) {
  const char *what = "hash_partition";
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(part_keys(what, keys, nkeys, nparts, counts, part_hash_takes, err));
  ldc_pkey *k = malloc(nkeys * sizeof *k);
  if (k == NULL) return ladle_err_set(err, LADLE_ENOMEM, "%s: out of memory", what);
  part_lower(keys, nkeys, k);
  ladle_status st =
      part_run(ctx, what, k, nkeys, NULL, NULL, keys[0].length, nparts, perm, counts, err);
  free(k);
  return st;
}

/* The splitters' checks (the CPU's, then on the device, then in order).
 * Their copies on the host into hs (nkeys columns, released by the caller
 * when *nhs says they were made), then per key and splitter its class and
 * order code into scls and scode (nkeys * (nparts - 1) slots); string keys'
 * splitters stay on the device for partition.cu (in k). */
static ladle_status part_splitters(const ladle_kctx *ctx, const char *what,
                                   const ladle_column *keys, const ladle_column *splitters,
                                   size_t nkeys, const bool *descending, const bool *nulls_last,
                                   int nparts, ladle_column *hs, size_t *nhs, uint8_t *scls,
                                   uint64_t *scode, ldc_pkey *k, ladle_error *err) {
  int ns = nparts - 1;
  LADLE_RETURN_NOT_OK(
      ladle_cpu_partition_check_splitters(what, keys, splitters, nkeys, nparts, err));
  for (size_t i = 0; splitters != NULL && i < nkeys; i++)
    if (!on_device(&splitters[i]) && splitters[i].length > 0)
      return ladle_err_set(err, LADLE_EINVAL, "%s: a splitter not on the GPU", what);
  if (ns == 0) return LADLE_OK;
  /* on the host (a NULL column has no buffers: it stands for itself) */
  for (; *nhs < nkeys; (*nhs)++) {
    const ladle_column *c = &splitters[*nhs];
    if (c->type.id != LADLE_TYPE_NULL) {
      LADLE_RETURN_NOT_OK(cuda_to_host(ctx, c, &hs[*nhs], err));
    } else {
      memset(&hs[*nhs], 0, sizeof hs[*nhs]);
      hs[*nhs].type = c->type;
      hs[*nhs].length = c->length;
      hs[*nhs].null_count = c->length;
    }
  }
  for (int p = 1; p < ns; p++)
    if (ladle_cpu_sort_cmp(hs, p - 1, hs, p, nkeys, descending, nulls_last) > 0)
      return ladle_err_set(err, LADLE_EINVAL, "%s: splitter rows %d and %d out of order", what,
                           p - 1, p);
  for (size_t i = 0; i < nkeys; i++) {
    const ladle_column *c = &hs[i];
    bool desc = descending != NULL && descending[i], last = nulls_last != NULL && nulls_last[i];
    uint8_t *cls = scls + i * (size_t)ns;
    uint64_t *code = scode + i * (size_t)ns;
    ladle_type_id t = c->type.id;
    if (t == LADLE_TYPE_STRING || t == LADLE_TYPE_NULL)
      memset(code, 0, (size_t)ns * sizeof *code);
    else
      ladle_cpu_sort_codes(c, 0, ns, code);
    for (int p = 0; p < ns; p++) {
      cls[p] = t == LADLE_TYPE_NULL ? 0 : ladle_column_valid(c, p) ? 1 : last ? 2 : 0;
      if (desc) code[p] = ~code[p];
    }
    k[i].desc = desc;
    k[i].nulls_last = last;
    k[i].soff = splitters[i].values;
    k[i].schars = splitters[i].chars;
  }
  return LADLE_OK;
}

static ladle_status cuda_range_partition(const ladle_kctx *ctx, const ladle_column *keys,
                                         const ladle_column *splitters, size_t nkeys,
                                         const bool *descending, const bool *nulls_last, int nparts,
                                         ladle_column *perm, int64_t *counts, ladle_error *err) {
  const char *what = "range_partition";
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(part_keys(what, keys, nkeys, nparts, counts, part_range_takes, err));
  size_t ns = (size_t)nparts - 1, nhs = 0;
  ldc_pkey *k = malloc(nkeys * sizeof *k);
  ladle_column *hs = malloc(nkeys * sizeof *hs);
  uint8_t *scls = malloc(LADLE_MAX(nkeys * ns, (size_t)1));
  uint64_t *scode = malloc(LADLE_MAX(nkeys * ns, (size_t)1) * sizeof *scode);
  ladle_status st = k != NULL && hs != NULL && scls != NULL && scode != NULL
                        ? LADLE_OK
                        : ladle_err_set(err, LADLE_ENOMEM, "%s: out of memory", what);
  if (st == LADLE_OK) {
    part_lower(keys, nkeys, k);
    st = part_splitters(ctx, what, keys, splitters, nkeys, descending, nulls_last, nparts, hs, &nhs,
                        scls, scode, k, err);
  }
  if (st == LADLE_OK)
    st = part_run(ctx, what, k, nkeys, scls, scode, keys[0].length, nparts, perm, counts, err);
  for (size_t i = 0; i < nhs; i++) ladle_column_release(&hs[i]);
  free(k);
  free(hs);
  free(scls);
  free(scode);
  return st;
}

/* A device-to-device copy; a String column keeps its offsets as they are
 * (the bytes from the buffer's start to the last row's end come along). */
static ladle_status cuda_copy(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                              ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(check_column("a copy", in, true, err));
  if (!on_device(in))
    return ladle_err_set(err, LADLE_EINVAL, "a copy on the GPU of a column not on the GPU");
  int64_t n = in->length, c1 = 0;
  bool var = ladle_type_is_varlen(in->type.id);
  cudaStream_t s = stream_of(ctx);
  if (var) {
    CU(cudaMemcpyAsync(&c1, (const int64_t *)in->values + n, 8, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
  }
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc_with(alloc_of(ctx), in->type, n, in->validity != NULL, c1, &o, err));
  ladle_status st = LADLE_OK;
  if (in->validity != NULL)
    CU_GOTO(cudaMemcpyAsync(LADLE_COL_VALIDITY_MUT(&o), in->validity, (size_t)ladle_bitmap_bytes(n),
                            cudaMemcpyDeviceToDevice, s));
  if (var) {
    CU_GOTO(cudaMemcpyAsync(LADLE_COL_MUT(&o, int64_t), in->values, (size_t)(n + 1) * 8,
                            cudaMemcpyDeviceToDevice, s));
    if (c1 > 0)
      CU_GOTO(cudaMemcpyAsync(LADLE_COL_CHARS_MUT(&o), in->chars, (size_t)c1,
                              cudaMemcpyDeviceToDevice, s));
  } else if (n > 0) {
    CU_GOTO(cudaMemcpyAsync(LADLE_COL_MUT(&o, uint8_t), in->values,
                            (size_t)n * ladle_type_width(in->type.id), cudaMemcpyDeviceToDevice,
                            s));
  }
  o.null_count = in->null_count;
done:
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* ------------------------------------------------------------- Parquet */

_Static_assert(sizeof(ldc_pqpage) == sizeof(ladle_kpage) &&
                   offsetof(ldc_pqpage, len) == offsetof(ladle_kpage, len) &&
                   offsetof(ldc_pqpage, def_len) == offsetof(ladle_kpage, def_len) &&
                   offsetof(ldc_pqpage, dict) == offsetof(ladle_kpage, dict) &&
                   offsetof(ldc_pqpage, prefixed) == offsetof(ladle_kpage, prefixed) &&
                   (int)LDC_PQ_DICTIONARY == (int)LADLE_KPAGE_DICTIONARY &&
                   (int)LDC_PQ_DICT == (int)LADLE_KPAGE_DICT,
               "ldc_pqpage and ladle_kpage differ");

/* nvCOMP's batched zstd decompression, loaded at run time (dlopen) where the
 * build found its headers: LADLE_NVCOMP_LIB names the library, else the one
 * the build found. Without it, parquet_codecs is 0 and the executor
 * decompresses pages on the host. */
#ifdef LADLE_HAVE_NVCOMP
#include <dlfcn.h>
#include <nvcomp/zstd.h>

typedef nvcompStatus_t (*zstd_temp_fn)(size_t, size_t, nvcompBatchedZstdDecompressOpts_t, size_t *,
                                       size_t, cudaStream_t);
typedef nvcompStatus_t (*zstd_async_fn)(const void *const *, const size_t *, const size_t *,
                                        size_t *, size_t, void *const, size_t, void *const *,
                                        nvcompBatchedZstdDecompressOpts_t, nvcompStatus_t *,
                                        cudaStream_t);
static struct {
  pthread_once_t once;
  zstd_temp_fn temp;
  zstd_async_fn run;
  /* compression (nvCOMP 5 and later; the decompression alone where missing) */
  __typeof__(nvcompBatchedZstdCompressGetTempSize) *ctemp;
  __typeof__(nvcompBatchedZstdCompressGetMaxOutputChunkSize) *cmax;
  __typeof__(nvcompBatchedZstdCompressAsync) *crun;
} nvc = {PTHREAD_ONCE_INIT, NULL, NULL, NULL, NULL, NULL};

static void nvcomp_load(void) {
  const char *path = getenv("LADLE_NVCOMP_LIB");
  if (path != NULL && strcmp(path, "0") == 0) return;
  void *h = dlopen(path != NULL ? path : LADLE_NVCOMP_PATH, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) h = dlopen("libnvcomp.so.6", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return;
  nvc.temp = (zstd_temp_fn)(uintptr_t)dlsym(h, "nvcompBatchedZstdDecompressGetTempSize");
  nvc.run = (zstd_async_fn)(uintptr_t)dlsym(h, "nvcompBatchedZstdDecompressAsync");
  if (nvc.temp == NULL || nvc.run == NULL) nvc.temp = NULL, nvc.run = NULL;
  nvc.ctemp = (__typeof__(nvc.ctemp))(uintptr_t)dlsym(h, "nvcompBatchedZstdCompressGetTempSize");
  nvc.cmax =
      (__typeof__(nvc.cmax))(uintptr_t)dlsym(h, "nvcompBatchedZstdCompressGetMaxOutputChunkSize");
  nvc.crun = (__typeof__(nvc.crun))(uintptr_t)dlsym(h, "nvcompBatchedZstdCompressAsync");
  if (nvc.ctemp == NULL || nvc.cmax == NULL || nvc.crun == NULL)
    nvc.ctemp = NULL, nvc.cmax = NULL, nvc.crun = NULL;
}
#endif

/* The codecs nvCOMP decompresses (or compresses), once it is loaded. */
static unsigned nvcomp_codecs(bool compress) {
#ifdef LADLE_HAVE_NVCOMP
  pthread_once(&nvc.once, nvcomp_load);
  return (compress ? nvc.crun != NULL : nvc.run != NULL) ? 1u << LADLE_KCODEC_ZSTD : 0;
#else
  LADLE_UNUSED(compress);
  return 0;
#endif
}

static unsigned cuda_parquet_codecs(const ladle_kctx *ctx) {
  LADLE_UNUSED(ctx);
  return nvcomp_codecs(false);
}

/* The compressed pages of `pages` decompressed on the device: *dout (a new
 * buffer) holds every page decompressed, and pages[] (the caller's copy) is
 * rewritten to point there; *dstat gets nvCOMP's per-page statuses and sizes
 * (read after the stream's next synchronisation: npz of each). */
static ladle_status decompress_pages(const ladle_kctx *ctx, const uint8_t *dbuf, ladle_kpage *pages,
                                     size_t npages, ladle_buffer **dout, int64_t *dbytes,
                                     ladle_buffer **dstat, size_t *npz, ladle_error *err) {
#ifndef LADLE_HAVE_NVCOMP
  LADLE_UNUSED(ctx), LADLE_UNUSED(dbuf), LADLE_UNUSED(pages), LADLE_UNUSED(npages);
  LADLE_UNUSED(dout), LADLE_UNUSED(dbytes), LADLE_UNUSED(dstat), LADLE_UNUSED(npz);
  return ladle_err_set(err, LADLE_ENOTSUP, "parquet_decode: compressed pages without nvCOMP");
#else
  cudaStream_t s = stream_of(ctx);
  const ladle_allocator *a = alloc_of(ctx);
  if (cuda_parquet_codecs(ctx) == 0)
    return ladle_err_set(err, LADLE_ENOTSUP, "parquet_decode: compressed pages without nvCOMP");
  size_t nz = 0, nspan = 0;
  int64_t total = 0, maxz = 0;
  int64_t *noff = malloc(LADLE_MAX(npages, 1) * sizeof *noff);
  if (noff == NULL) return LADLE_OOM(err, "parquet pages");
  for (size_t i = 0; i < npages; i++) {
    ladle_kpage *p = &pages[i];
    if (p->codec != LADLE_KCODEC_NONE && p->codec != LADLE_KCODEC_ZSTD) {
      free(noff);
      return ladle_err_set(err, LADLE_ENOTSUP, "parquet_decode: pages of codec %d", p->codec);
    }
    int64_t lv = p->codec != 0 && !p->prefixed ? p->def_len : 0, dl = p->codec ? p->len : p->size;
    if (p->size < lv || dl < lv || p->offset < 0 || dl > ((int64_t)1 << 31)) {
      free(noff);
      return ladle_err_set(err, LADLE_ECORRUPT, "Parquet page %zu of the column: bad sizes", i);
    }
    noff[i] = ((total + lv + 7) & ~(int64_t)7) - lv; /* the values 8-aligned, as nvCOMP asks */
    total = noff[i] + dl;
    nz += p->codec != 0;
    nspan += p->codec == 0 || lv > 0;
    if (p->codec != 0) maxz = LADLE_MAX(maxz, dl - lv);
  }
  /* one host block: nvCOMP's arrays (pointers and sizes of each compressed
   * page's values, in and out) and the spans copied as they are */
  size_t zb = nz * (4 * sizeof(void *)), sb = nspan * sizeof(ldc_span);
  uint8_t *h = malloc(LADLE_MAX(zb + sb, 1));
  ladle_buffer *arr = NULL, *tmp = NULL;
  ladle_status st = h != NULL ? LADLE_OK : LADLE_OOM(err, "parquet pages");
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)LADLE_MAX(total, 1), dout, err);
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, LADLE_MAX(zb + sb, 1), &arr, err);
  /* statuses and the sizes decompressed */
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, LADLE_MAX(nz, 1) * 16, dstat, err);
  size_t temp = 0;
  if (st == LADLE_OK && nz > 0 &&
      nvc.temp(nz, (size_t)maxz, nvcompBatchedZstdDecompressDefaultOpts, &temp, (size_t)total, s) !=
          nvcompSuccess)
    st = ladle_err_set(err, LADLE_EDEVICE, "nvCOMP: nvcompBatchedZstdDecompressGetTempSize failed");
  if (st == LADLE_OK && temp > 0) st = ladle_buffer_alloc(a, temp, &tmp, err);
  if (st == LADLE_OK) {
    uint8_t *out = (*dout)->data;
    const void **in_p = (const void **)(void *)h;
    size_t *in_n = (size_t *)(void *)(h + nz * sizeof(void *));
    size_t *out_n = (size_t *)(void *)(h + 2 * nz * sizeof(void *));
    void **out_p = (void **)(void *)(h + 3 * nz * sizeof(void *));
    ldc_span *sp = (ldc_span *)(void *)(h + zb);
    size_t z = 0, k = 0;
    for (size_t i = 0; i < npages; i++) {
      ladle_kpage *p = &pages[i];
      int64_t lv = p->codec != 0 && !p->prefixed ? p->def_len : 0;
      if (p->codec == 0) {
        sp[k++] = (ldc_span){dbuf + p->offset, out + noff[i], p->size};
      } else {
        if (lv > 0) sp[k++] = (ldc_span){dbuf + p->offset, out + noff[i], lv};
        in_p[z] = dbuf + p->offset + lv;
        in_n[z] = (size_t)(p->size - lv);
        out_n[z] = (size_t)(p->len - lv);
        out_p[z++] = out + noff[i] + lv;
        p->size = p->len;
        p->codec = 0;
      }
      p->offset = noff[i];
    }
    uint8_t *d = arr->data;
    cudaError_t e = cudaMemcpyAsync(d, h, zb + sb, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = ldc_copy_spans((const ldc_span *)(d + zb), (int)nspan, s);
    if (e != cudaSuccess) st = cu_fail(e, "a copy of Parquet pages", err);
    nvcompStatus_t *stat = (nvcompStatus_t *)(*dstat)->data;
    size_t *got = (size_t *)(void *)((uint8_t *)(*dstat)->data + 8 * LADLE_MAX(nz, 1));
    if (st == LADLE_OK && nz > 0 &&
        nvc.run((const void *const *)(void *)d, (const size_t *)(void *)(d + nz * sizeof(void *)),
                (const size_t *)(void *)(d + 2 * nz * sizeof(void *)), got, nz,
                tmp != NULL ? tmp->data : NULL, temp,
                (void *const *)(void *)(d + 3 * nz * sizeof(void *)),
                nvcompBatchedZstdDecompressDefaultOpts, stat, s) != nvcompSuccess)
      st = ladle_err_set(err, LADLE_EDEVICE, "nvCOMP: nvcompBatchedZstdDecompressAsync failed");
  }
  /* the arrays are read by work queued on the stream: freed in its order */
  ladle_buffer_release(arr);
  ladle_buffer_release(tmp);
  free(h);
  free(noff);
  *dbytes = total;
  *npz = nz;
  if (st != LADLE_OK) {
    ladle_buffer_release(*dout);
    ladle_buffer_release(*dstat);
    *dout = *dstat = NULL;
  }
  return st;
#endif
}

static unsigned cuda_compress_codecs(const ladle_kctx *ctx) {
  LADLE_UNUSED(ctx);
  return nvcomp_codecs(true);
}

#ifdef LADLE_HAVE_NVCOMP
/* Host buffers gathered into one device region through the staging
 * buffers: buffer i (len[i] bytes at in[i]) to dst + doff[i] (doff rising,
 * the buffers apart); each staging chunk is filled by the engine's threads,
 * one task per buffer reaching into it, while the other chunk's DMA runs.
 * Enqueued: the caller synchronises before the buffers change. */
typedef struct gather_job {
  char *stage;
  int64_t base, n; /* the chunk: dst bytes [base, base + n) */
  const uint8_t *const *in;
  const int64_t *len, *doff;
  size_t first; /* the first buffer reaching into the chunk */
} gather_job;

static ladle_status gather_task(void *ctx, size_t i, ladle_error *err) {
  LADLE_UNUSED(err);
  gather_job *j = ctx;
  size_t b = j->first + i;
  int64_t lo = LADLE_MAX(j->doff[b], j->base),
          hi = LADLE_MIN(j->doff[b] + j->len[b], j->base + j->n);
  if (hi > lo) memcpy(j->stage + (lo - j->base), j->in[b] + (lo - j->doff[b]), (size_t)(hi - lo));
  return LADLE_OK;
}

static ladle_status stage_gather(const ladle_kctx *ctx, uint8_t *dst, size_t n,
                                 const uint8_t *const *in, const int64_t *len, const int64_t *doff,
                                 int64_t total, ladle_error *err) {
  cuda_dev *d = dev_of(ctx);
  cudaStream_t s = stream_of(ctx);
  int64_t chunk = (int64_t)staging_bytes();
  pthread_mutex_lock(&d->stage_mu);
  ladle_status st = stage_buffers(d, (size_t)chunk, err);
  size_t first = 0;
  for (int64_t base = 0, k = 0; st == LADLE_OK && base < total; base += chunk, k++) {
    int b = (int)(k % STAGES);
    int64_t m = LADLE_MIN(chunk, total - base);
    while (first < n && doff[first] + len[first] <= base) first++;
    size_t last = first;
    while (last < n && doff[last] < base + m) last++;
    if ((st = stage_ready(d, b, err)) != LADLE_OK) break;
    gather_job j = {d->stage[b], base, m, in, len, doff, first};
    if (ctx->pool != NULL && last - first > 1)
      st = ladle_pool_run(ctx->pool, last - first, gather_task, &j, err);
    else
      for (size_t i = 0; i < last - first; i++) gather_task(&j, i, err);
    if (st != LADLE_OK) break;
    st = stage_up(d, s, dst + base, b, (size_t)m, err);
  }
  stage_end(d);
  return st;
}

#endif

/* Pages compressed on the device by nvCOMP's batched zstd: gathered up
 * (8-byte aligned) through the staging buffers, compressed into room of
 * nvCOMP's bound each, the sizes and statuses read back, the frames packed
 * one after another by one block each (ldc_copy_spans), and the packed
 * bytes copied down through the staging buffers. */
static ladle_status cuda_compress_pages(const ladle_kctx *ctx, int codec, size_t n,
                                        const uint8_t *const *in, const int64_t *len,
                                        uint8_t **block, int64_t *off, int64_t *outlen,
                                        ladle_error *err) {
  *block = NULL;
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  if (codec != LADLE_KCODEC_ZSTD || !(cuda_compress_codecs(ctx) >> codec & 1u))
    return ladle_err_set(err, LADLE_ENOTSUP, "compress_pages: codec %d on the GPU", codec);
#ifndef LADLE_HAVE_NVCOMP
  LADLE_UNUSED(n), LADLE_UNUSED(in), LADLE_UNUSED(len), LADLE_UNUSED(off), LADLE_UNUSED(outlen);
  return ladle_err_set(err, LADLE_ENOTSUP, "compress_pages: built without nvCOMP");
#else
  if (n == 0) {
    *block = malloc(1);
    return *block != NULL ? LADLE_OK : LADLE_OOM(err, "compressed pages");
  }
  if (n > (size_t)INT32_MAX)
    return ladle_err_set(err, LADLE_EINVAL, "compress_pages: %zu pages", n);
  cudaStream_t s = stream_of(ctx);
  const ladle_allocator *a = alloc_of(ctx);
  /* where each page goes in and comes out (8-aligned), and nvCOMP's arrays:
   * input pointers and sizes, output pointers, then (written by nvCOMP) the
   * compressed sizes and statuses */
  int64_t *doff = malloc(n * sizeof *doff), *zoff = malloc(n * sizeof *zoff);
  size_t ab = n * (3 * sizeof(void *) + sizeof(size_t) + 8);
  uint8_t *h = malloc(ab);
  ldc_span *sp = malloc(n * sizeof *sp);
  ladle_buffer *din = NULL, *dout = NULL, *arr = NULL, *tmp = NULL, *packed = NULL, *dsp = NULL;
  ladle_status st = doff && zoff && h && sp ? LADLE_OK : LADLE_OOM(err, "compressed pages");
  int64_t total = 0, ztotal = 0, maxlen = 0;
  const size_t max_page = (size_t)16 << 20;
  for (size_t i = 0; st == LADLE_OK && i < n; i++) {
    size_t bound = 0;
    if (len[i] < 0 || (size_t)len[i] > max_page)
      st = ladle_err_set(err, LADLE_ENOTSUP, "compress_pages: a page of %lld bytes (16 MiB most)",
                         (long long)len[i]);
    else if (nvc.cmax((size_t)LADLE_MAX(len[i], 1), nvcompBatchedZstdCompressDefaultOpts, &bound) !=
             nvcompSuccess)
      st = ladle_err_set(err, LADLE_EDEVICE,
                         "nvCOMP: nvcompBatchedZstdCompressGetMaxOutputChunkSize failed");
    if (st != LADLE_OK) break;
    doff[i] = total;
    total = (total + len[i] + 7) & ~(int64_t)7;
    zoff[i] = ztotal;
    ztotal = (ztotal + (int64_t)bound + 7) & ~(int64_t)7;
    maxlen = LADLE_MAX(maxlen, len[i]);
  }
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)LADLE_MAX(total, 8), &din, err);
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)LADLE_MAX(ztotal, 8), &dout, err);
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, ab, &arr, err);
  size_t temp = 0;
  if (st == LADLE_OK &&
      nvc.ctemp(n, (size_t)LADLE_MAX(maxlen, 1), nvcompBatchedZstdCompressDefaultOpts, &temp,
                (size_t)total, s) != nvcompSuccess)
    st = ladle_err_set(err, LADLE_EDEVICE, "nvCOMP: nvcompBatchedZstdCompressGetTempSize failed");
  if (st == LADLE_OK && temp > 0) st = ladle_buffer_alloc(a, temp, &tmp, err);
  const void **in_p = (const void **)(void *)h;
  size_t *in_n = (size_t *)(void *)(h + n * sizeof(void *));
  void **out_p = (void **)(void *)(h + 2 * n * sizeof(void *));
  size_t *out_n = (size_t *)(void *)(h + 3 * n * sizeof(void *));
  nvcompStatus_t *stat =
      (nvcompStatus_t *)(void *)(h + 3 * n * sizeof(void *) + n * sizeof(size_t));
  if (st == LADLE_OK) {
    uint8_t *d = arr->data;
    for (size_t i = 0; i < n; i++) {
      in_p[i] = din->data + doff[i];
      in_n[i] = (size_t)len[i];
      out_p[i] = dout->data + zoff[i];
    }
    st = stage_gather(ctx, din->data, n, in, len, doff, total, err);
    cudaError_t e = cudaSuccess;
    if (st == LADLE_OK && (e = cudaMemcpyAsync(d, h, 3 * n * sizeof(void *), cudaMemcpyHostToDevice,
                                               s)) != cudaSuccess)
      st = cu_fail(e, "a copy of nvCOMP's arrays", err);
    size_t *d_out_n = (size_t *)(void *)(d + 3 * n * sizeof(void *));
    nvcompStatus_t *d_stat =
        (nvcompStatus_t *)(void *)(d + 3 * n * sizeof(void *) + n * sizeof(size_t));
    if (st == LADLE_OK &&
        nvc.crun((const void *const *)(void *)d, (const size_t *)(void *)(d + n * sizeof(void *)),
                 (size_t)LADLE_MAX(maxlen, 1), n, tmp != NULL ? tmp->data : NULL, temp,
                 (void *const *)(void *)(d + 2 * n * sizeof(void *)), d_out_n,
                 nvcompBatchedZstdCompressDefaultOpts, d_stat, s) != nvcompSuccess)
      st = ladle_err_set(err, LADLE_EDEVICE, "nvCOMP: nvcompBatchedZstdCompressAsync failed");
    /* the sizes and statuses */
    if (st == LADLE_OK && ((e = cudaMemcpyAsync(out_n, d_out_n, n * (sizeof(size_t) + 8),
                                                cudaMemcpyDeviceToHost, s)) != cudaSuccess ||
                           (e = cudaStreamSynchronize(s)) != cudaSuccess))
      st = cu_fail(e, "nvCOMP's compressed sizes", err);
  }
  int64_t packed_total = 0;
  for (size_t i = 0; st == LADLE_OK && i < n; i++) {
    int64_t room = (i + 1 < n ? zoff[i + 1] : ztotal) - zoff[i];
    if (stat[i] != nvcompSuccess || (int64_t)out_n[i] > room) {
      st = ladle_err_set(err, LADLE_EDEVICE, "nvCOMP: page %zu of %zu (%lld bytes): status %d", i,
                         n, (long long)len[i], (int)stat[i]);
      break;
    }
    off[i] = packed_total;
    outlen[i] = (int64_t)out_n[i];
    packed_total += outlen[i];
  }
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)LADLE_MAX(packed_total, 8), &packed, err);
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, n * sizeof *sp, &dsp, err);
  if (st == LADLE_OK) {
    for (size_t i = 0; i < n; i++)
      sp[i] = (ldc_span){dout->data + zoff[i], packed->data + off[i], outlen[i]};
    cudaError_t e = cudaMemcpyAsync(dsp->data, sp, n * sizeof *sp, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = ldc_copy_spans((const ldc_span *)dsp->data, (int)n, s);
    if (e != cudaSuccess) st = cu_fail(e, "packing compressed pages", err);
  }
  if (st == LADLE_OK && (*block = malloc((size_t)LADLE_MAX(packed_total, 1))) == NULL)
    st = LADLE_OOM(err, "compressed pages");
  if (st == LADLE_OK) st = stage_copy_down(ctx, *block, packed->data, (size_t)packed_total, 0, err);
  if (st != LADLE_OK) {
    free(*block);
    *block = NULL;
    cudaStreamSynchronize(s); /* nothing queued still reads the host arrays */
  }
  ladle_buffer_release(din);
  ladle_buffer_release(dout);
  ladle_buffer_release(arr);
  ladle_buffer_release(tmp);
  ladle_buffer_release(packed);
  ladle_buffer_release(dsp);
  free(doff);
  free(zoff);
  free(h);
  free(sp);
  return st;
#endif
}

/* A String column's dictionary pages (offsets from 0, then the entries'
 * bytes, parsed by the caller on the host and never compressed) checked here,
 * before the device trusts them: offsets rising and inside the page. */
static ladle_status check_dict_strings(const uint8_t *bytes, int64_t nbytes,
                                       const ladle_kpage *pages, size_t npages, ladle_error *err) {
  for (size_t i = 0; i < npages; i++) {
    const ladle_kpage *d = &pages[i];
    if (d->kind != LADLE_KPAGE_DICTIONARY) continue;
    const char *why =
        d->codec != 0 || d->offset < 0 || d->size < 0 || d->offset > nbytes ||
                d->size > nbytes - d->offset
            ? "a dictionary outside the pages, or compressed"
            : ladle_kpage_dict_strings_problem(bytes + d->offset, d->size, d->num_values);
    if (why != NULL)
      return ladle_err_set(err, LADLE_ECORRUPT, "Parquet page %zu of the column: %s", i, why);
  }
  return LADLE_OK;
}

/* The pages' bytes go up through the staging buffers (compressed, where
 * nvCOMP decompresses them on the device; else as the host decompressed
 * them), the page table after them, and one block per page decodes
 * (parquet.cu). A String column (width 0) takes two more steps: its rows'
 * lengths summed into offsets, then the bytes copied. */
static ladle_status cuda_parquet_decode(const ladle_kctx *ctx, const uint8_t *bytes, int64_t nbytes,
                                        const ladle_kpage *pages, size_t npages, int width,
                                        ladle_dtype type, bool nullable, int64_t nrows,
                                        ladle_column *out, ladle_error *err) {
  memset(out, 0, sizeof *out);
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  bool strings = width == 0 && type.id == LADLE_TYPE_STRING;
  if (!strings && ((width != 4 && width != 8) || ladle_type_width(type.id) != (size_t)width))
    return ladle_err_set(err, LADLE_ENOTSUP, "parquet_decode: %d-byte values into %s", width,
                         ladle_dtype_name(type, NULL, 0));
  if (nrows < 0 || nbytes < 0 || npages > (size_t)INT32_MAX)
    return ladle_err_set(err, LADLE_EINVAL, "parquet_decode: sizes");
  if (strings) LADLE_RETURN_NOT_OK(check_dict_strings(bytes, nbytes, pages, npages, err));
  cudaStream_t s = stream_of(ctx);
  const ladle_allocator *a = alloc_of(ctx);
  ldc_alloc scratch = {a->alloc, a->free, a->ctx};
  ladle_column o;
  memset(&o, 0, sizeof o);
  ladle_buffer *dbuf = NULL, *dpages = NULL, *cnt = NULL, *dz = NULL, *zstat = NULL;
  ladle_buffer *ixb = NULL, *lensb = NULL; /* strings: rows' entries and lengths */
  ladle_kpage *pg = malloc(LADLE_MAX(npages, 1) * sizeof *pg);
  /* LADLE_TRACE=2: each step's time on the stream (events), and its rate */
  bool trace = ladle_trace_level() >= 2;
  cudaEvent_t ev[4] = {NULL, NULL, NULL, NULL};
  unsigned long long info[3] = {0, 0, 0}; /* nulls; the error code and page; strings' bytes */
  size_t nz = 0;
  size_t *zh = NULL;
  bool compressed = false;
  for (size_t i = 0; i < npages; i++) compressed = compressed || pages[i].codec != 0;
  ladle_status st = pg != NULL ? LADLE_OK : LADLE_OOM(err, "parquet pages");
  if (st == LADLE_OK && !strings)
    st = ladle_column_alloc_with(a, type, nrows, nullable, 0, &o, err);
  if (st == LADLE_OK && strings) {
    o.type = type;
    o.length = nrows;
    if (nullable) st = ladle_buffer_alloc(a, (size_t)(nrows + 31) / 32 * 4, &o.owners[0], err);
    if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)(nrows + 1) * 8, &o.owners[1], err);
    if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)LADLE_MAX(nrows, 1) * 4, &ixb, err);
    if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)(nrows + 1) * 8, &lensb, err);
    if (st == LADLE_OK) {
      o.validity = nullable ? o.owners[0]->data : NULL;
      o.values = o.owners[1]->data;
    }
  }
  if (st == LADLE_OK) {
    memcpy(pg, pages, npages * sizeof *pg);
    st = ladle_buffer_alloc(a, (size_t)LADLE_MAX(nbytes, 1), &dbuf, err);
  }
  if (st == LADLE_OK)
    st = ladle_buffer_alloc(a, LADLE_MAX(npages, 1) * sizeof(ladle_kpage), &dpages, err);
  if (st == LADLE_OK) st = ladle_buffer_alloc(a, 32, &cnt, err);
  if (st != LADLE_OK) goto done;
  for (int k = 0; trace && k < 4; k++)
    if (cudaEventCreate(&ev[k]) != cudaSuccess) trace = false;
  double t_up = trace ? ladle_clock_ms() : 0;
  if (nbytes > 0) st = stage_copy(ctx, dbuf->data, bytes, (size_t)nbytes, 0, err);
  if (trace) cudaStreamSynchronize(s), t_up = ladle_clock_ms() - t_up, cudaEventRecord(ev[0], s);
  const uint8_t *src = dbuf->data;
  int64_t srcn = nbytes;
  if (st == LADLE_OK && compressed) {
    st = decompress_pages(ctx, dbuf->data, pg, npages, &dz, &srcn, &zstat, &nz, err);
    if (st == LADLE_OK) src = dz->data;
  }
  if (trace) cudaEventRecord(ev[1], s);
  if (st != LADLE_OK) goto done;
  if (npages > 0)
    CU_GOTO(cudaMemcpyAsync(dpages->data, pg, npages * sizeof *pg, cudaMemcpyHostToDevice, s));
  CU_GOTO(cudaMemsetAsync(cnt->data, 0, 32, s));
  if (nrows > 0 && !strings)
    CU_GOTO(cudaMemsetAsync(LADLE_COL_MUT(&o, uint8_t), 0, (size_t)(nrows * width), s));
  if (strings) {
    CU_GOTO(cudaMemsetAsync(lensb->data, 0, (size_t)(nrows + 1) * 8, s));
    if (nrows > 0) CU_GOTO(cudaMemsetAsync(ixb->data, 0xff, (size_t)nrows * 4, s));
  }
  if (nullable && nrows > 0)
    CU_GOTO(cudaMemsetAsync(LADLE_COL_VALIDITY_MUT(&o), 0, (size_t)((nrows + 31) / 32 * 4), s));
  CU_GOTO(ldc_parquet_decode(src, srcn, dpages->data, (int)npages, width, nullable, nrows,
                             strings ? NULL : LADLE_COL_MUT(&o, uint8_t),
                             nullable ? (uint32_t *)LADLE_COL_VALIDITY_MUT(&o) : NULL,
                             (unsigned long long *)cnt->data, (int *)((char *)cnt->data + 8),
                             strings ? (uint32_t *)ixb->data : NULL,
                             strings ? (int64_t *)lensb->data : NULL, s));
  if (strings) {
    CU_GOTO(ldc_scan_i64(lensb->data, LADLE_COL_MUT(&o, int64_t), nrows + 1, &scratch, s));
    CU_GOTO(cudaMemcpyAsync((char *)cnt->data + 16, (const int64_t *)o.values + nrows, 8,
                            cudaMemcpyDeviceToDevice, s));
  }
  if (trace) cudaEventRecord(ev[2], s);
  CU_GOTO(cudaMemcpyAsync(info, cnt->data, 24, cudaMemcpyDeviceToHost, s));
  if (nz > 0) {
    /* nvCOMP's statuses and sizes, checked before the decoder's findings
     * (which a page that did not decompress explains) */
    zh = malloc(nz * 16);
    if (zh == NULL) {
      st = LADLE_OOM(err, "parquet pages");
      goto done;
    }
    CU_GOTO(cudaMemcpyAsync(zh, zstat->data, nz * 16, cudaMemcpyDeviceToHost, s));
  }
  CU_GOTO(cudaStreamSynchronize(s));
  if (trace) {
    float dz_ms = 0, dec_ms = 0;
    cudaEventElapsedTime(&dz_ms, ev[0], ev[1]);
    cudaEventElapsedTime(&dec_ms, ev[1], ev[2]);
    double outb = strings ? (double)(nrows + 1) * 8 + (double)info[2] : (double)nrows * width;
    fprintf(stderr,
            "ladle:     . parquet on cuda: %zu pages; %.1f MB up in %.2f ms (%.1f GB/s); "
            "%zu decompressed to %.1f MB in %.2f ms; %lld rows decoded (%.1f MB out) in %.2f ms "
            "(%.1f GB/s of output)\n",
            npages, nbytes / 1e6, t_up, nbytes / 1e6 / LADLE_MAX(t_up, 1e-3), nz, srcn / 1e6, dz_ms,
            (long long)nrows, outb / 1e6, dec_ms, outb / 1e6 / LADLE_MAX(dec_ms, 1e-3));
  }
  for (size_t z = 0, i = 0; zh != NULL && i < npages && st == LADLE_OK; i++) {
    if (pages[i].codec == 0) continue;
    int stat_z;
    memcpy(&stat_z, (char *)zh + sizeof(int) * z, sizeof stat_z); /* nvcompStatus_t: an int */
    size_t got = zh[nz + z];
    int64_t lv = pages[i].prefixed ? 0 : pages[i].def_len;
    if (stat_z != 0 || (int64_t)got != pages[i].len - lv)
      st = ladle_err_set(err, LADLE_ECORRUPT,
                         "Parquet page %zu of the column: zstd decompression on the GPU failed "
                         "(nvCOMP status %d, %zu bytes of %lld)",
                         i, stat_z, got, (long long)(pages[i].len - lv));
    z++;
  }
  if (st != LADLE_OK) goto done;
  int code, page;
  memcpy(&code, (char *)info + 8, 4);
  memcpy(&page, (char *)info + 12, 4);
  if (code != 0) {
    st = ladle_err_set(err, LADLE_ECORRUPT, "Parquet page %d of the column: %s", page,
                       ldc_parquet_error(code));
    goto done;
  }
  if (strings) {
    int64_t total = (int64_t)info[2];
    st = ladle_buffer_alloc(a, (size_t)LADLE_MAX(total, 1), &o.owners[2], err);
    if (st != LADLE_OK) goto done;
    o.chars = o.owners[2]->data;
    CU_GOTO(ldc_parquet_string_chars(src, dpages->data, (int)npages, ixb->data, o.values,
                                     (uint8_t *)o.owners[2]->data, s));
  }
  if (nullable)
    set_nulls(&o, info[0]);
  else
    o.null_count = 0;
done:
  for (int k = 0; k < 4; k++)
    if (ev[k] != NULL) cudaEventDestroy(ev[k]);
  free(zh);
  free(pg);
  ladle_buffer_release(dbuf);
  ladle_buffer_release(dpages);
  ladle_buffer_release(dz);
  ladle_buffer_release(zstat);
  ladle_buffer_release(ixb);
  ladle_buffer_release(lensb);
  return finish(st, &o, cnt, out);
}

static ladle_status cuda_sequence(const ladle_kctx *ctx, int64_t start, int64_t n, ladle_dtype type,
                                  ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(ladle_sequence_check(start, n, type, err));
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), type, n, false, 0, &o, err));
  ladle_status st = LADLE_OK;
  CU_GOTO(ldc_sequence((int)ladle_type_width(type.id), start, n, LADLE_COL_MUT(&o, uint8_t),
                       stream_of(ctx)));
done:
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* ------------------------------------------------- running functions */

_Static_assert((int)LADLE_CUM_SUM == LDC_CUM_SUM && (int)LADLE_CUM_PROD == LDC_CUM_PROD &&
                   (int)LADLE_CUM_MIN == LDC_CUM_MIN && (int)LADLE_CUM_MAX == LDC_CUM_MAX &&
                   (int)LADLE_CUM_COUNT == LDC_CUM_COUNT,
               "ladle_cum_op and the kernels' numbering");

/* groups as the kernels take them: NULL, or on the device with their CSR */
static ladle_status cum_groups(const char *what, const ladle_dgroups *g, int64_t n,
                               ladle_error *err) {
  if (g == NULL) return LADLE_OK;
  if (g->nrows != n || g->ids.length != n || g->sel.owners[1] != NULL)
    return ladle_err_set(err, LADLE_EINVAL, "%s: %lld rows in %lld groups' rows", what,
                         (long long)n, (long long)g->nrows);
  if (n > 0 && (g->rows.values == NULL || g->offsets.values == NULL || !on_device(&g->ids) ||
                !on_device(&g->rows) || !on_device(&g->offsets)))
    return ladle_err_set(err, LADLE_EINVAL, "%s: groups not on the GPU with their rows", what);
  return LADLE_OK;
}

static ladle_status cuda_cumulative(const ladle_kctx *ctx, const ladle_column *in,
                                    const ladle_dgroups *g, int op, bool reverse, ladle_column *out,
                                    ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  int64_t n = in->length;
  if (n > 0) LADLE_RETURN_NOT_OK(check_moved("cumulative", in, err));
  if (n > 0 && !on_device(in))
    return ladle_err_set(err, LADLE_EINVAL, "cumulative: a column not on the GPU");
  LADLE_RETURN_NOT_OK(cum_groups("cumulative", g, n, err));
  if (op < LADLE_CUM_SUM || op > LADLE_CUM_COUNT)
    return ladle_err_set(err, LADLE_EINVAL, "cumulative: op %d", op);
  bool count = op == LADLE_CUM_COUNT;
  ldc_num kind = LDC_U32;
  if (!count && !num_kind(in->type.id, &kind))
    return ladle_err_set(err, LADLE_ENOTSUP, "cumulative functions of %s on the GPU",
                         ladle_dtype_name(in->type, NULL, 0));
  bool nulls = in->null_count > 0 && in->validity != NULL;
  ladle_dtype ot = count ? ladle_dtype_make(LADLE_TYPE_UINT32) : in->type;
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ot, n, nulls && !count, 0, &o, err));
  ladle_status st = LADLE_OK;
  if (n > 0) {
    const ladle_allocator *a = alloc_of(ctx);
    ldc_alloc scratch = {a->alloc, a->free, a->ctx};
    cudaStream_t s = stream_of(ctx);
    if (nulls && !count) {
      CU_GOTO(cudaMemcpyAsync(LADLE_COL_VALIDITY_MUT(&o), in->validity,
                              (size_t)ladle_bitmap_bytes(n), cudaMemcpyDeviceToDevice, s));
      o.null_count = in->null_count;
    }
    CU_GOTO(ldc_cumulative(kind, op, reverse, in->values, nulls ? in->validity : NULL,
                           g != NULL ? g->ids.values : NULL, g != NULL ? g->rows.values : NULL,
                           g != NULL ? g->offsets.values : NULL, g != NULL ? g->ngroups : 1, n,
                           LADLE_COL_MUT(&o, uint8_t), &scratch, s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
done:
  return finish(st, &o, NULL, out);
}

static ladle_status cuda_shift_rows(const ladle_kctx *ctx, int64_t nrows, const ladle_dgroups *g,
                                    int64_t by, ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(cum_groups("shift", g, nrows, err));
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ladle_dtype_make(LADLE_TYPE_INT64),
                                              nrows, false, 0, &o, err));
  ladle_status st = LADLE_OK;
  if (nrows > 0) {
    cudaStream_t s = stream_of(ctx);
    CU_GOTO(ldc_shift_rows(g != NULL ? g->ids.values : NULL, g != NULL ? g->rows.values : NULL,
                           g != NULL ? g->offsets.values : NULL, nrows, by,
                           LADLE_COL_MUT(&o, int64_t), s));
    CU_GOTO(cudaStreamSynchronize(s));
  }
done:
  return finish(st, &o, NULL, out);
}

static ladle_status cuda_pack_bits(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                                   ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  LADLE_RETURN_NOT_OK(check_column("pack_bits", in, true, err));
  if (in->type.id != LADLE_TYPE_BOOL || !on_device(in))
    return ladle_err_set(err, LADLE_EINVAL, "pack_bits of a column that is not Boolean on the GPU");
  int64_t nb = ladle_bitmap_bytes(in->length);
  ladle_column o;
  LADLE_RETURN_NOT_OK(ladle_column_alloc_with(alloc_of(ctx), ladle_dtype_make(LADLE_TYPE_UINT8), nb,
                                              false, 0, &o, err));
  ladle_status st = LADLE_OK;
  CU_GOTO(ldc_pack_bits(in->values, in->length, LADLE_COL_MUT(&o, uint8_t), stream_of(ctx)));
done:
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* An event recorded on one stream and waited for on the other: neither the
 * host nor the other stream's queued work blocks. */
static ladle_status cuda_stream_wait(const ladle_kctx *ctx, void *other, bool ours_waits,
                                     ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  cudaStream_t mine = stream_of(ctx), theirs = (cudaStream_t)other;
  if (other == NULL) {
    CU(cudaStreamSynchronize(mine));
    return LADLE_OK;
  }
  if (theirs == mine) return LADLE_OK;
  cudaEvent_t ev;
  CU(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  cudaError_t e = cudaEventRecord(ev, ours_waits ? theirs : mine);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(ours_waits ? mine : theirs, ev, 0);
  cudaEventDestroy(ev); /* released once the wait is done with it */
  if (e != cudaSuccess) return cu_fail(e, "ordering ladle's stream against another", err);
  return LADLE_OK;
}

static ladle_status cuda_memory_info(const ladle_kctx *ctx, int64_t *free_bytes,
                                     int64_t *total_bytes, ladle_error *err) {
  LADLE_RETURN_NOT_OK(check_ctx(ctx, err));
  size_t f = 0, t = 0;
  CU(cudaMemGetInfo(&f, &t));
  *free_bytes = (int64_t)f;
  *total_bytes = (int64_t)t;
  return LADLE_OK;
}

static const ladle_backend cuda_backend = {
    .name = "cuda",
    .device = LADLE_DEVICE_CUDA,
    .abi = LADLE_BACKEND_ABI,
    .struct_size = sizeof(ladle_backend),
    .to_device = cuda_to_device,
    .to_host = cuda_to_host,
    .select = cuda_select,
    .take = cuda_take,
    .filter = cuda_filter,
    .reduce = cuda_reduce,
    .binary = cuda_binary,
    .binary_supports = cuda_binary_supports,
    .eval_program = cuda_eval_program,
    .reduce_program = cuda_reduce_program,
    .program_supports = cuda_program_supports,
    .group_keys = cuda_group_keys,
    .grouped_reduce = cuda_grouped_reduce,
    .sort_perm = cuda_sort_perm,
    .join_rows = cuda_join_rows,
    .str_match = cuda_str_match,
    .str_compare = cuda_str_compare,
    .copy = cuda_copy,
    .pack_bits = cuda_pack_bits,
    .sequence = cuda_sequence,
    .stream_wait = cuda_stream_wait,
    .memory_info = cuda_memory_info,
    /* to_device, to_host, take and filter move List columns (list_to_device,
     * take_list): the conformance suite's list cases and the column-kernel
     * Python tests passed on an H100 (make test-gpu) */
    .moves_lists = true,
    .parquet_decode = cuda_parquet_decode,
    .parquet_codecs = cuda_parquet_codecs,
    .compress_pages = cuda_compress_pages,
    .compress_codecs = cuda_compress_codecs,
    .hash_partition = cuda_hash_partition,
    .range_partition = cuda_range_partition,
    .cumulative = cuda_cumulative,
    .shift_rows = cuda_shift_rows,
    /* the other host kernels of the CPU executor stay NULL: the GPU gets
     * only column kernels (binary's signature is one) */
};

/* The staging buffers go back before the CUDA runtime's own teardown (its
 * exit handler was registered before this one, so it runs after): nothing
 * pinned is left when the process ends. */
static void stages_release(void) {
  for (int i = 0; i < MAX_DEVICES; i++) {
    cuda_dev *d = &devs[i];
    if (!d->ready || d->stage_bytes == 0) continue;
    if (cudaSetDevice(i) != cudaSuccess) continue;
    for (int k = 0; k < STAGES; k++) {
      cudaEventSynchronize(d->stage_done[k]);
      cudaEventDestroy(d->stage_done[k]);
      cudaFreeHost(d->stage[k]);
      d->stage[k] = NULL;
    }
    d->stage_bytes = 0;
  }
}

static void stages_at_exit(void) { atexit(stages_release); }
static pthread_once_t stages_once = PTHREAD_ONCE_INIT;

LADLE_EXPORT ladle_status ladle_backend_cuda_open(int abi, size_t struct_size, int device_id,
                                                  const ladle_backend **out,
                                                  const ladle_allocator **alloc, void **stream,
                                                  ladle_error *err) {
  if (abi != LADLE_BACKEND_ABI || struct_size != sizeof(ladle_backend))
    return ladle_err_set(err, LADLE_EDEVICE,
                         "libladle_cuda.so was built for another version of ladle (kernel table "
                         "%d/%zu bytes, this ladle %d/%zu): rebuild it",
                         LADLE_BACKEND_ABI, sizeof(ladle_backend), abi, struct_size);
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return ladle_err_set(err, LADLE_EDEVICE,
                         "device 'cuda:%d': no usable CUDA device (cudaGetDeviceCount: %s)",
                         device_id, cudaGetErrorString(e));
  }
  if (device_id < 0 || device_id >= count || device_id >= MAX_DEVICES)
    return ladle_err_set(err, LADLE_EDEVICE, "device 'cuda:%d': this process sees %d CUDA device%s",
                         device_id, count, count == 1 ? "" : "s");
  ladle_status st = LADLE_OK;
  pthread_mutex_lock(&dev_mu);
  cuda_dev *d = &devs[device_id];
  if (!d->ready) {
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX; /* freed blocks stay in the pool for the next query */
    if ((e = cudaSetDevice(device_id)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaDeviceGetDefaultMemPool(&pool, device_id)) != cudaSuccess ||
        (e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)) !=
            cudaSuccess) {
      st = cu_fail(e, "opening the device", err);
    } else {
      d->id = device_id;
      snprintf(d->name, sizeof d->name, "cuda:%d", device_id);
      d->alloc = (ladle_allocator){dev_alloc, dev_free, d, LADLE_DEVICE_CUDA, device_id, d->name};
      pthread_mutex_init(&d->stage_mu, NULL);
      d->ready = true;
      pthread_once(&stages_once, stages_at_exit);
    }
  }
  pthread_mutex_unlock(&dev_mu);
  if (st != LADLE_OK) return st;
  *out = &cuda_backend;
  *alloc = &d->alloc;
  *stream = d->stream;
  return LADLE_OK;
}

LADLE_EXPORT ladle_status ladle_backend_cuda_devices(int abi, ladle_device_info *out, size_t cap,
                                                     size_t *count, ladle_error *err) {
  *count = 0;
  if (abi != LADLE_BACKEND_ABI)
    return ladle_err_set(err, LADLE_EDEVICE,
                         "libladle_cuda.so was built for another version of ladle (kernel table "
                         "%d, this ladle %d): rebuild it",
                         LADLE_BACKEND_ABI, abi);
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return ladle_err_set(err, LADLE_EDEVICE, "no usable CUDA device (cudaGetDeviceCount: %s)",
                         cudaGetErrorString(e));
  }
  for (int i = 0; i < n && (size_t)i < cap; i++) {
    struct cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, i)) != cudaSuccess)
      return cu_fail(e, "cudaGetDeviceProperties", err);
    ladle_device_info *d = &out[i];
    memset(d, 0, sizeof *d);
    d->id = i;
    size_t len = strnlen(p.name, sizeof p.name);
    if (len >= sizeof d->name) len = sizeof d->name - 1;
    memcpy(d->name, p.name, len);
    d->memory_bytes = (int64_t)p.totalGlobalMem;
    d->major = p.major;
    d->minor = p.minor;
  }
  *count = (size_t)n;
  return LADLE_OK;
}

/* ---- torch's allocator over ladle's pool ------------------------------------
 * torch.cuda.memory.CUDAPluggableAllocator(<this library>, "ladle_torch_malloc",
 * "ladle_torch_free") (ladle.torch_allocator() in Python): torch's tensors come from
 * the device's default memory pool, the one ladle's engines allocate from with the
 * same release threshold, so one process holds one pool: what a query frees, a
 * tensor reuses, and the other way round, with no second cache holding memory back.
 * Allocation and free are ordered on the stream torch gives. */
static _Atomic int64_t torch_bytes, torch_peak;
static _Atomic unsigned char torch_pool_set[MAX_DEVICES];

LADLE_EXPORT void *ladle_torch_malloc(ssize_t size, int device, cudaStream_t stream) {
  if (size < 0 || device < 0 || device >= MAX_DEVICES) return NULL;
  int cur = -1;
  if (cudaGetDevice(&cur) != cudaSuccess ||
      (cur != device && cudaSetDevice(device) != cudaSuccess)) {
    cudaGetLastError();
    return NULL;
  }
  if (!atomic_load(&torch_pool_set[device])) {
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    cudaGetLastError();
    atomic_store(&torch_pool_set[device], 1);
  }
  void *p = NULL;
  if (cudaMallocAsync(&p, size > 0 ? (size_t)size : 1, stream) != cudaSuccess) {
    cudaGetLastError(); /* torch reports the out-of-memory itself */
    p = NULL;
  } else {
    int64_t now = atomic_fetch_add(&torch_bytes, (int64_t)size) + (int64_t)size;
    int64_t peak = atomic_load(&torch_peak);
    while (now > peak && !atomic_compare_exchange_weak(&torch_peak, &peak, now)) {
    }
  }
  if (cur != device) cudaSetDevice(cur);
  return p;
}

LADLE_EXPORT void ladle_torch_free(void *ptr, ssize_t size, int device, cudaStream_t stream) {
  (void)device;
  if (ptr == NULL) return;
  if (cudaFreeAsync(ptr, stream) != cudaSuccess) cudaGetLastError();
  atomic_fetch_sub(&torch_bytes, (int64_t)size);
}

/* Bytes torch holds through ladle_torch_malloc now, and the most it held. */
LADLE_EXPORT void ladle_torch_bytes(int64_t *current, int64_t *peak) {
  *current = atomic_load(&torch_bytes);
  *peak = atomic_load(&torch_peak);
}
