/* comm_self.c — the single-rank communicator. A process is a job of one rank,
 * so every collective is a copy from the input to the output (none when they
 * are the same buffer), and the same executor path serves a laptop and a
 * cluster. */
#include "comm.h"

static ladle_status copy(ladle_comm *c, void *dst, const void *src, size_t bytes,
                         ladle_comm_place where, ladle_error *err) {
  if (bytes == 0 || dst == src) return LADLE_OK;
  if (where.device == LADLE_DEVICE_CPU || where.device == 0) {
    memmove(dst, src, bytes);
    return LADLE_OK;
  }
  if (c->device_copy == NULL)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "the one-rank communicator has no copy for device type %d buffers",
                         (int)where.device);
  return c->device_copy(dst, src, bytes, where, err);
}

static ladle_status self_allgather(ladle_comm *c, const void *in, size_t bytes, void *out,
                                   ladle_comm_place where, ladle_error *err) {
  return copy(c, out, in, bytes, where, err);
}

static ladle_status self_allgatherv(ladle_comm *c, const void *in, const size_t *counts,
                                    const size_t *displs, void *out, ladle_comm_place where,
                                    ladle_error *err) {
  return copy(c, (char *)out + displs[0], in, counts[0], where, err);
}

static ladle_status self_alltoallv(ladle_comm *c, const void *in, const size_t *send_counts,
                                   const size_t *send_displs, void *out, const size_t *recv_counts,
                                   const size_t *recv_displs, ladle_comm_place where,
                                   ladle_error *err) {
  if (send_counts[0] != recv_counts[0])
    return ladle_err_set(err, LADLE_EINVAL,
                         "alltoallv on one rank: %zu bytes sent to itself, %zu expected",
                         send_counts[0], recv_counts[0]);
  return copy(c, (char *)out + recv_displs[0], (const char *)in + send_displs[0], send_counts[0],
              where, err);
}

static ladle_status self_bcast(ladle_comm *c, void *buf, size_t bytes, int root,
                               ladle_comm_place where, ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(buf);
  LADLE_UNUSED(bytes);
  LADLE_UNUSED(where);
  if (root != 0)
    return ladle_err_set(err, LADLE_EINVAL, "bcast from rank %d in a job of one rank", root);
  return LADLE_OK;
}

static ladle_status self_allreduce(ladle_comm *c, const void *in, void *out, size_t n,
                                   ladle_comm_type type, ladle_comm_op op, ladle_comm_place where,
                                   ladle_error *err) {
  if ((int)type < 0 || type >= LADLE_COMM_TYPE_COUNT_ || (int)op < 0 || op >= LADLE_COMM_OP_COUNT_)
    return ladle_err_set(err, LADLE_EINVAL, "allreduce: unknown type %d or operation %d", (int)type,
                         (int)op);
  return copy(c, out, in, n * 8, where, err); /* every type is 8 bytes */
}

static ladle_status self_barrier(ladle_comm *c, ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(err);
  return LADLE_OK;
}

static void self_destroy(ladle_comm *c) { free(c); }

static const ladle_comm_vtable self_vt = {"self",         self_allgather, self_allgatherv,
                                          self_alltoallv, self_bcast,     self_allreduce,
                                          self_barrier,   self_destroy};

ladle_status ladle_comm_self_create(ladle_comm_copy_fn device_copy, ladle_comm **out,
                                    ladle_error *err) {
  ladle_comm *c = calloc(1, sizeof *c);
  if (c == NULL) return LADLE_OOM(err, "communicator");
  c->vt = &self_vt;
  c->rank = 0;
  c->size = 1;
  c->device_copy = device_copy;
  *out = c;
  return LADLE_OK;
}
