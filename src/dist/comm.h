/* comm.h — the communicator table: collectives on host (and later device)
 * buffers. Implementations: self (one rank, here), MPI, NCCL and host callbacks
 * (to come with the distributed issue). The executor talks only to this table. */
#ifndef LADLE_COMM_H
#define LADLE_COMM_H

#include "../core/core.h"

typedef struct ladle_comm ladle_comm;

typedef struct ladle_comm_vtable {
  const char *name;
  /* every rank's `bytes` bytes into out (size * bytes) */
  ladle_status (*allgather)(ladle_comm *c, const void *in, size_t bytes, void *out,
                            ladle_error *err);
  /* sum of int64 values across ranks, in place */
  ladle_status (*allreduce_sum_i64)(ladle_comm *c, int64_t *values, size_t n, ladle_error *err);
  ladle_status (*barrier)(ladle_comm *c, ladle_error *err);
  void (*destroy)(ladle_comm *c);
} ladle_comm_vtable;

struct ladle_comm {
  const ladle_comm_vtable *vt;
  int rank;
  int size;
  void *impl;
};

/* The one-rank communicator: collectives are copies. */
ladle_status ladle_comm_self_create(ladle_comm **out, ladle_error *err);
void ladle_comm_destroy(ladle_comm *c);

#endif
