/* comm.c — the public face of communicators (include/ladle.h): creating the
 * one-rank one, asking any of them its rank, size and name, giving up on a
 * query before the engine saw it, destroying it through its table. The
 * implementations are comm_self.c, comm_mpi.c, comm_callbacks.c and, for
 * tests, comm_local.c. */
#include "comm.h"

ladle_status ladle_comm_create_self(ladle_comm **out_comm, ladle_error *err) {
  if (out_comm == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "ladle_comm_create_self: no out_comm");
  return ladle_comm_self_create(NULL, out_comm, err);
}

/* NULL is the job of one rank an engine without a communicator runs in. */
int ladle_comm_rank(const ladle_comm *comm) { return comm != NULL ? comm->rank : 0; }

int ladle_comm_size(const ladle_comm *comm) { return comm != NULL ? comm->size : 1; }

const char *ladle_comm_name(const ladle_comm *comm) {
  return comm != NULL ? comm->vt->name : "self";
}

void ladle_comm_destroy(ladle_comm *c) {
  if (c != NULL) c->vt->destroy(c);
}

/* comm.h. Only where the communicator recovers: a front end's failure is
 * most often every rank's alike (a query ladle cannot run), and telling the
 * others would end a communicator that cannot recover (torch's) for
 * nothing. */
ladle_status ladle_comm_give_up(ladle_comm *c, const char *why, ladle_error *err) {
  if (c == NULL || c->size <= 1 || c->recover == NULL) return LADLE_OK;
  if (c->fail != NULL) c->fail(c, why != NULL ? why : "(no reason given)");
  return c->recover(c, err);
}
