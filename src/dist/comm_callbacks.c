/* comm_callbacks.c — a communicator whose collectives are the caller's
 * functions (ladle_comm_callbacks in include/ladle.h): the Python module's
 * over torch.distributed, or any host transport an embedder already has.
 * allgather is built here from allgatherv; device buffers are refused by
 * name. A callback's failure becomes LADLE_ECOMM naming the rank and the
 * operation, and breaks the communicator: every later collective is refused
 * at once (the ranks can no longer be trusted to agree) until the failed
 * query's end calls c->recover, which the optional recover callback makes
 * (it starts the transport afresh; without it the break is for good). A rank
 * whose query fails calls the optional fail callback (c->fail), which tells
 * the others. The callbacks' own timeouts are the only ones: this file waits
 * for nothing. */
#include <stdio.h>

#include "comm.h"

_Static_assert((int)LADLE_COMM_I64 == 0 && (int)LADLE_COMM_U64 == 1 && (int)LADLE_COMM_F64 == 2,
               "allreduce types are the numbers include/ladle.h documents for callbacks");
_Static_assert((int)LADLE_COMM_SUM == 0 && (int)LADLE_COMM_MIN == 1 && (int)LADLE_COMM_MAX == 2,
               "allreduce operations are the numbers include/ladle.h documents for callbacks");

/* What a callback may write of its message: room is left for the prefix
 * ("rank R of N: name operation: ") in a ladle_error. */
#define CB_MSG_MAX 400

typedef struct cb_comm {
  ladle_comm_vtable vt;    /* a copy of cb_vt with this communicator's name */
  ladle_comm_callbacks cb; /* the caller's table; cb.user released by destroy */
  char name[32];           /* ladle_comm_name's answer */
  bool broken;             /* a callback failed on this rank */
  char why[CB_MSG_MAX];    /* the first failure, quoted by every refusal after it */
} cb_comm;

/* LADLE_OK when the communicator may run op on host buffers; else the
 * refusal, naming op. */
static ladle_status cb_enter(const ladle_comm *c, const char *op, ladle_comm_place where,
                             ladle_error *err) {
  const cb_comm *m = c->impl;
  if (where.device != LADLE_DEVICE_CPU && where.device != 0)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "rank %d of %d: %s %s: buffers on device type %d (id %d) are not "
                         "supported, the %s communicator takes host buffers only",
                         c->rank, c->size, m->name, op, (int)where.device, where.device_id,
                         m->name);
  if (m->broken)
    return ladle_err_set(err, LADLE_ECOMM,
                         "rank %d of %d: %s %s refused: the communicator broke earlier (%s)",
                         c->rank, c->size, m->name, op, m->why);
  return LADLE_OK;
}

/* A callback's return rc as a status: nonzero breaks the communicator and
 * becomes LADLE_ECOMM with the callback's message (msg, cap CB_MSG_MAX). */
static ladle_status cb_leave(ladle_comm *c, const char *op, int rc, char *msg, ladle_error *err) {
  if (rc == 0) return LADLE_OK;
  cb_comm *m = c->impl;
  msg[CB_MSG_MAX - 1] = '\0'; /* a callee that filled the buffer without a terminator */
  if (msg[0] == '\0') snprintf(msg, CB_MSG_MAX, "failed (%d) without a message", rc);
  m->broken = true;
  snprintf(m->why, sizeof m->why, "%s: %s", op, msg);
  return ladle_err_set(err, LADLE_ECOMM, "rank %d of %d: %s %s: %s", c->rank, c->size, m->name, op,
                       msg);
}

static ladle_status cb_allgatherv(ladle_comm *c, const void *in, const size_t *counts,
                                  const size_t *displs, void *out, ladle_comm_place where,
                                  ladle_error *err) {
  LADLE_RETURN_NOT_OK(cb_enter(c, "allgatherv", where, err));
  cb_comm *m = c->impl;
  char msg[CB_MSG_MAX] = "";
  int rc = m->cb.allgatherv(m->cb.user, in, counts, displs, out, msg, sizeof msg);
  return cb_leave(c, "allgatherv", rc, msg, err);
}

/* allgather is allgatherv with equal counts at r * bytes. */
static ladle_status cb_allgather(ladle_comm *c, const void *in, size_t bytes, void *out,
                                 ladle_comm_place where, ladle_error *err) {
  LADLE_RETURN_NOT_OK(cb_enter(c, "allgather", where, err));
  cb_comm *m = c->impl;
  size_t *v = malloc(2 * (size_t)c->size * sizeof *v);
  if (v == NULL) return LADLE_OOM(err, "allgather's counts");
  for (int r = 0; r < c->size; r++) {
    v[r] = bytes;
    v[c->size + r] = (size_t)r * bytes;
  }
  char msg[CB_MSG_MAX] = "";
  int rc = m->cb.allgatherv(m->cb.user, in, v, v + c->size, out, msg, sizeof msg);
  free(v);
  return cb_leave(c, "allgather", rc, msg, err);
}

static ladle_status cb_alltoallv(ladle_comm *c, const void *in, const size_t *send_counts,
                                 const size_t *send_displs, void *out, const size_t *recv_counts,
                                 const size_t *recv_displs, ladle_comm_place where,
                                 ladle_error *err) {
  LADLE_RETURN_NOT_OK(cb_enter(c, "alltoallv", where, err));
  cb_comm *m = c->impl;
  char msg[CB_MSG_MAX] = "";
  int rc = m->cb.alltoallv(m->cb.user, in, send_counts, send_displs, out, recv_counts, recv_displs,
                           msg, sizeof msg);
  return cb_leave(c, "alltoallv", rc, msg, err);
}

static ladle_status cb_bcast(ladle_comm *c, void *buf, size_t bytes, int root,
                             ladle_comm_place where, ladle_error *err) {
  LADLE_RETURN_NOT_OK(cb_enter(c, "bcast", where, err));
  if (root < 0 || root >= c->size) /* refused before any rank waits on it */
    return ladle_err_set(err, LADLE_EINVAL, "rank %d of %d: bcast from rank %d", c->rank, c->size,
                         root);
  cb_comm *m = c->impl;
  char msg[CB_MSG_MAX] = "";
  int rc = m->cb.bcast(m->cb.user, buf, bytes, root, msg, sizeof msg);
  return cb_leave(c, "bcast", rc, msg, err);
}

static ladle_status cb_allreduce(ladle_comm *c, const void *in, void *out, size_t n,
                                 ladle_comm_type type, ladle_comm_op op, ladle_comm_place where,
                                 ladle_error *err) {
  LADLE_RETURN_NOT_OK(cb_enter(c, "allreduce", where, err));
  if ((int)type < 0 || type >= LADLE_COMM_TYPE_COUNT_ || (int)op < 0 || op >= LADLE_COMM_OP_COUNT_)
    return ladle_err_set(err, LADLE_EINVAL, "allreduce: unknown type %d or operation %d", (int)type,
                         (int)op);
  cb_comm *m = c->impl;
  char msg[CB_MSG_MAX] = "";
  int rc = m->cb.allreduce(m->cb.user, in, out, n, (int)type, (int)op, msg, sizeof msg);
  return cb_leave(c, "allreduce", rc, msg, err);
}

static ladle_status cb_barrier(ladle_comm *c, ladle_error *err) {
  ladle_comm_place host = {LADLE_DEVICE_CPU, 0, NULL};
  LADLE_RETURN_NOT_OK(cb_enter(c, "barrier", host, err));
  cb_comm *m = c->impl;
  char msg[CB_MSG_MAX] = "";
  int rc = m->cb.barrier(m->cb.user, msg, sizeof msg);
  return cb_leave(c, "barrier", rc, msg, err);
}

/* c->fail: the caller's fail callback tells the other ranks; this
 * communicator refuses everything after. */
static void cb_give_up(ladle_comm *c, const char *why) {
  cb_comm *m = c->impl;
  if (!m->broken) {
    m->broken = true;
    snprintf(m->why, sizeof m->why, "this rank gave up: %s", why);
  }
  m->cb.fail(m->cb.user, why);
}

/* c->recover: the caller's recover callback; the communicator takes
 * collectives again where it succeeds. */
static ladle_status cb_recover(ladle_comm *c, ladle_error *err) {
  cb_comm *m = c->impl;
  char msg[CB_MSG_MAX] = "";
  int rc = m->cb.recover(m->cb.user, msg, sizeof msg);
  if (rc == 0) {
    m->broken = false;
    m->why[0] = '\0';
    return LADLE_OK;
  }
  return cb_leave(c, "recover", rc, msg, err);
}

static void cb_destroy(ladle_comm *c) {
  cb_comm *m = c->impl;
  if (m->cb.release != NULL) m->cb.release(m->cb.user);
  free(m);
  free(c);
}

static const ladle_comm_vtable cb_vt = {"callbacks", cb_allgather, cb_allgatherv, cb_alltoallv,
                                        cb_bcast,    cb_allreduce, cb_barrier,    cb_destroy};

ladle_status ladle_comm_create_callbacks(const ladle_comm_callbacks *cb, int rank, int size,
                                         ladle_comm **out_comm, ladle_error *err) {
  if (out_comm == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "ladle_comm_create_callbacks: no out_comm");
  *out_comm = NULL;
  if (cb == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "ladle_comm_create_callbacks: no callbacks");
  const char *missing = cb->allgatherv == NULL  ? "allgatherv"
                        : cb->alltoallv == NULL ? "alltoallv"
                        : cb->bcast == NULL     ? "bcast"
                        : cb->allreduce == NULL ? "allreduce"
                        : cb->barrier == NULL   ? "barrier"
                                                : NULL;
  if (missing != NULL)
    return ladle_err_set(err, LADLE_EINVAL, "ladle_comm_create_callbacks: no %s callback", missing);
  if (size < 1 || rank < 0 || rank >= size)
    return ladle_err_set(err, LADLE_EINVAL,
                         "ladle_comm_create_callbacks: rank %d of %d (want 0 <= rank < size)", rank,
                         size);
  const char *name = cb->name != NULL && cb->name[0] != '\0' ? cb->name : "callbacks";
  cb_comm *m = calloc(1, sizeof *m);
  if (m == NULL) return LADLE_OOM(err, "communicator");
  if (strlen(name) >= sizeof m->name) {
    free(m);
    return ladle_err_set(err, LADLE_EINVAL,
                         "ladle_comm_create_callbacks: name '%s' is longer than %zu bytes", name,
                         sizeof m->name - 1);
  }
  ladle_comm *c = calloc(1, sizeof *c);
  if (c == NULL) {
    free(m);
    return LADLE_OOM(err, "communicator");
  }
  m->cb = *cb;
  strcpy(m->name, name);
  m->cb.name = m->name; /* the caller's string need not outlive this call */
  m->vt = cb_vt;
  m->vt.name = m->name;
  c->vt = &m->vt;
  c->rank = rank;
  c->size = size;
  c->impl = m;
  if (cb->fail != NULL) c->fail = cb_give_up;
  if (cb->recover != NULL) c->recover = cb_recover;
  *out_comm = c;
  return LADLE_OK;
}
