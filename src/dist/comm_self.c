/* comm_self.c — the single-rank communicator. A process is a job of one rank,
 * so exchanges degenerate to local copies and the same executor path serves a
 * laptop and a cluster. */
#include "comm.h"

static ladle_status self_allgather(ladle_comm *c, const void *in, size_t bytes, void *out,
                                   ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(err);
  if (bytes) memmove(out, in, bytes);
  return LADLE_OK;
}

static ladle_status self_allreduce(ladle_comm *c, int64_t *v, size_t n, ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(v);
  LADLE_UNUSED(n);
  LADLE_UNUSED(err);
  return LADLE_OK;
}

static ladle_status self_barrier(ladle_comm *c, ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(err);
  return LADLE_OK;
}

static void self_destroy(ladle_comm *c) { free(c); }

static const ladle_comm_vtable self_vt = {"self", self_allgather, self_allreduce, self_barrier,
                                          self_destroy};

ladle_status ladle_comm_self_create(ladle_comm **out, ladle_error *err) {
  ladle_comm *c = calloc(1, sizeof *c);
  if (c == NULL) return LADLE_OOM(err, "communicator");
  c->vt = &self_vt;
  c->rank = 0;
  c->size = 1;
  *out = c;
  return LADLE_OK;
}

void ladle_comm_destroy(ladle_comm *c) {
  if (c != NULL) c->vt->destroy(c);
}
