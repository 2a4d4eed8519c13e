/* comm.h — the communicator table: the collectives an exchange needs, over
 * buffers on the host or on a device, ordered on a stream (NULL on the host),
 * as MPI's and NCCL's are. Implementations: self (one rank, comm_self.c),
 * MPI (comm_mpi.c over libladle_mpi.so, built from mpi/shim.c), threads of
 * one process for tests (comm_local.c), the caller's host callbacks
 * (comm_callbacks.c: torch.distributed); NCCL to come. The executor talks
 * only to this table; with one rank its exchanges are identities and never
 * call it for data.
 *
 * Counts and displacements are in bytes. Every rank calls every collective in
 * the same order with matching sizes; a rank that cannot go on returns an
 * error naming itself, and the implementation fails the others within its
 * timeout rather than hang (at once where the rank tells them, c->fail), and
 * where it can, goes on after the failed query (c->recover). */
#ifndef LADLE_COMM_H
#define LADLE_COMM_H

#include "../core/core.h"

typedef struct ladle_comm ladle_comm;

/* Element types and operations of allreduce. */
typedef enum ladle_comm_type {
  LADLE_COMM_I64,
  LADLE_COMM_U64,
  LADLE_COMM_F64,
  LADLE_COMM_TYPE_COUNT_
} ladle_comm_type;
typedef enum ladle_comm_op {
  LADLE_COMM_SUM,
  LADLE_COMM_MIN,
  LADLE_COMM_MAX,
  LADLE_COMM_OP_COUNT_
} ladle_comm_op;

/* Where a collective's buffers are: the device they live on and the stream
 * the operation is ordered on (NULL: the host, synchronous). */
typedef struct ladle_comm_place {
  ladle_device_type device;
  int device_id;
  void *stream;
} ladle_comm_place;

typedef struct ladle_comm_vtable {
  const char *name;
  /* every rank's `bytes` bytes into out (size * bytes, in rank order) */
  ladle_status (*allgather)(ladle_comm *c, const void *in, size_t bytes, void *out,
                            ladle_comm_place where, ladle_error *err);
  /* rank r's in (counts[r] bytes) into out at displs[r] */
  ladle_status (*allgatherv)(ladle_comm *c, const void *in, const size_t *counts,
                             const size_t *displs, void *out, ladle_comm_place where,
                             ladle_error *err);
  /* send_counts[r] bytes from in at send_displs[r] to rank r; recv_counts[r]
   * bytes from rank r into out at recv_displs[r] (a hash partition's move) */
  ladle_status (*alltoallv)(ladle_comm *c, const void *in, const size_t *send_counts,
                            const size_t *send_displs, void *out, const size_t *recv_counts,
                            const size_t *recv_displs, ladle_comm_place where, ladle_error *err);
  /* root's `bytes` bytes of buf to every rank's buf */
  ladle_status (*bcast)(ladle_comm *c, void *buf, size_t bytes, int root, ladle_comm_place where,
                        ladle_error *err);
  /* out[i] = op over ranks of in[i], i < n (in == out allowed) */
  ladle_status (*allreduce)(ladle_comm *c, const void *in, void *out, size_t n,
                            ladle_comm_type type, ladle_comm_op op, ladle_comm_place where,
                            ladle_error *err);
  ladle_status (*barrier)(ladle_comm *c, ladle_error *err);
  void (*destroy)(ladle_comm *c);
} ladle_comm_vtable;

/* Copies bytes between buffers of one device on a stream: what a one-rank
 * communicator needs for device buffers (the device's backend supplies it). */
typedef ladle_status (*ladle_comm_copy_fn)(void *dst, const void *src, size_t bytes,
                                           ladle_comm_place where, ladle_error *err);

struct ladle_comm {
  const ladle_comm_vtable *vt;
  int rank;
  int size;
  ladle_comm_copy_fn device_copy; /* NULL: host buffers only */
  void *impl;
  /* rows moved by exchanges through it (exchange.c): bytes this rank sent to
   * the others (not to itself) and the milliseconds the moves took */
  int64_t moved_bytes;
  double moved_ms;
  /* This rank gives up on the job's current work (its query failed): tells
   * the other ranks, whose pending and later collectives then fail with
   * LADLE_ECOMM saying "rank R failed: <why>", and breaks this communicator
   * (its later collectives fail, saying so). Never blocks past the
   * communicator's timeout; best effort. NULL: nothing to tell (one rank). */
  void (*fail)(ladle_comm *c, const char *why);
  /* After a failed query (this rank's, told with fail, or another rank's,
   * which failed a collective here with "rank R failed"): the communicator
   * works again for the next query. Each rank calls it on its own once it
   * knows the query failed; for every rank to know, a query on several ranks
   * ends with a barrier (exec.c), which no rank passes when one gave up. A
   * collective that failed so has let go of its buffers: nothing writes into
   * them after it returned. LADLE_ECOMM when the communicator cannot go on
   * (a timeout: a rank died or ran another query; a transport error). NULL:
   * a failed query breaks the communicator for good. */
  ladle_status (*recover)(ladle_comm *c, ladle_error *err);
};

/* This rank's query failed before the engine saw it: c->fail and
 * c->recover, where the communicator recovers (ladle_engine_give_up). */
ladle_status ladle_comm_give_up(ladle_comm *c, const char *why, ladle_error *err);

/* The one-rank communicator: collectives are copies (device buffers through
 * device_copy, which may be NULL: then they are refused). */
ladle_status ladle_comm_self_create(ladle_comm_copy_fn device_copy, ladle_comm **out,
                                    ladle_error *err);
void ladle_comm_destroy(ladle_comm *c);

/* For tests: `size` communicators (out[0..size-1], rank r in out[r]) of one
 * job whose ranks are threads of this process, each used by its own thread.
 * Host buffers only; a collective not complete within timeout_s (0: 600)
 * fails with LADLE_ECOMM naming it, as does one whose ranks disagree, and the
 * rank's communicator refuses everything after. Destroy each with
 * ladle_comm_destroy (the last frees what they share). comm_local.c. */
ladle_status ladle_comm_local_create(int size, double timeout_s, ladle_comm **out,
                                     ladle_error *err);

#endif
