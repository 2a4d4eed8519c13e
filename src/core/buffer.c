/* buffer.c — the host allocator and refcounted, device-tagged buffers.
 * A buffer is freed by whoever drops the last reference, through the allocator
 * that made it, or through the foreign owner's release callback. */
#include "core.h"

static void *host_alloc(void *ctx, size_t size) {
  LADLE_UNUSED(ctx);
  void *p = NULL;
  /* Round up so that aligned_alloc's size rule holds; never ask for 0 bytes. */
  size_t n = (LADLE_MAX(size, (size_t)1) + 63) & ~(size_t)63;
  if (posix_memalign(&p, 64, n) != 0) return NULL;
  return p;
}

static void host_free(void *ctx, void *p, size_t size) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(size);
  free(p);
}

static const ladle_allocator host_allocator = {host_alloc,       host_free, NULL,
                                               LADLE_DEVICE_CPU, 0,         "host"};

const ladle_allocator *ladle_allocator_host(void) { return &host_allocator; }

ladle_status ladle_buffer_alloc(const ladle_allocator *alloc, size_t size, ladle_buffer **out,
                                ladle_error *err) {
  if (alloc == NULL) alloc = &host_allocator;
  ladle_buffer *b = malloc(sizeof *b);
  if (b == NULL) return LADLE_OOM(err, "buffer header");
  b->data = alloc->alloc(alloc->ctx, size);
  if (b->data == NULL) {
    free(b);
    return ladle_err_set(err, LADLE_ENOMEM, "out of memory: %zu bytes from the %s allocator", size,
                         alloc->name);
  }
  atomic_init(&b->refcount, 1);
  b->size = size;
  b->device = alloc->device;
  b->device_id = alloc->device_id;
  b->alloc = alloc;
  b->foreign_release = NULL;
  b->owner = NULL;
  *out = b;
  return LADLE_OK;
}

ladle_status ladle_buffer_wrap(void *data, size_t size, void (*release)(void *owner), void *owner,
                               ladle_buffer **out, ladle_error *err) {
  ladle_buffer *b = malloc(sizeof *b);
  if (b == NULL) return LADLE_OOM(err, "buffer header");
  atomic_init(&b->refcount, 1);
  b->data = data;
  b->size = size;
  b->device = LADLE_DEVICE_CPU;
  b->device_id = 0;
  b->alloc = NULL;
  b->foreign_release = release;
  b->owner = owner;
  *out = b;
  return LADLE_OK;
}

ladle_buffer *ladle_buffer_ref(ladle_buffer *b) {
  if (b != NULL) atomic_fetch_add_explicit(&b->refcount, 1, memory_order_relaxed);
  return b;
}

void ladle_buffer_release(ladle_buffer *b) {
  if (b == NULL) return;
  if (atomic_fetch_sub_explicit(&b->refcount, 1, memory_order_acq_rel) != 1) return;
  if (b->alloc != NULL)
    b->alloc->free(b->alloc->ctx, b->data, b->size);
  else if (b->foreign_release != NULL)
    b->foreign_release(b->owner);
  free(b);
}
