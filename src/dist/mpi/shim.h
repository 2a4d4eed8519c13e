/* shim.h — the table between libladle (comm_mpi.c, built without mpi.h) and
 * libladle_mpi.so (shim.c, built against one MPI). Only plain C types cross
 * it: sizes in bytes as size_t, statuses as int, messages into the caller's
 * buffer. The library exports one symbol, ladle_mpi_shim_get; a table whose
 * `abi` differs from the caller's is refused by the library (it returns NULL).
 *
 * Every operation is collective over the handle's ranks and blocks until it
 * completes or the handle's timeout passes. After a timeout or any MPI error
 * every handle of the process is dead: every later call fails at once with a
 * message that says so and names the first failure (ladle does not drive
 * MPI again once an operation is left pending).
 *
 * A rank whose query fails calls notify: every other rank's pending or next
 * operation then fails within a poll (LADLE_MPI_EPEER, "rank R failed:
 * <why>") instead of waiting out its timeout, and both sides' handles are
 * broken until recover, which each rank calls on its own once it knows the
 * query failed. */
#ifndef LADLE_DIST_MPI_SHIM_H
#define LADLE_DIST_MPI_SHIM_H

#include <stddef.h>

#define LADLE_MPI_SHIM_ABI 3 /* 2: notify, LADLE_MPI_EPEER; 3: recover */
#define LADLE_MPI_SHIM_SYMBOL "ladle_mpi_shim_get"

/* Statuses the table's functions return. */
enum {
  LADLE_MPI_OK = 0,
  LADLE_MPI_EFAIL = 1,    /* an MPI call failed (its name and MPI's text in the message) */
  LADLE_MPI_ETIMEOUT = 2, /* the operation did not complete in time */
  LADLE_MPI_EBROKEN = 3,  /* an earlier failure broke the handle (or killed MPI) */
  LADLE_MPI_EINVAL = 4,   /* a bad argument (root, type, operation); the handle stays usable */
  LADLE_MPI_ENOMEM = 5,   /* the shim could not allocate its request arrays */
  LADLE_MPI_EPEER = 6     /* another rank gave up (notify): "rank R failed: <why>" */
};

/* allreduce's element types and operations (every type is 8 bytes). */
enum { LADLE_MPI_I64 = 0, LADLE_MPI_U64 = 1, LADLE_MPI_F64 = 2 };
enum { LADLE_MPI_SUM = 0, LADLE_MPI_MIN = 1, LADLE_MPI_MAX = 2 };

typedef struct ladle_mpi_handle ladle_mpi_handle; /* two dups of MPI_COMM_WORLD */

/* The longest reason notify sends, its terminating NUL included (longer
 * ones are cut). */
#define LADLE_MPI_NOTICE_BYTES 512

/* What init found (for error messages and the report). */
typedef struct ladle_mpi_info {
  int rank, size;
  int thread_level;     /* granted: 0 single, 1 funneled, 2 serialized, 3 multiple */
  int initialised_here; /* 1: the shim called MPI_Init_thread (and finalises at exit) */
  char library[128];    /* MPI_Get_library_version, first line */
  size_t chunk_bytes;   /* the largest message (1 GiB or the test's) */
} ladle_mpi_info;

typedef struct ladle_mpi_shim {
  int abi; /* LADLE_MPI_SHIM_ABI */
  /* Initialises MPI unless it already is (MPI_Init_thread asking for
   * MPI_THREAD_SERIALIZED), duplicates MPI_COMM_WORLD with MPI_ERRORS_RETURN
   * twice into *out (one for the operations, one for failure notices, where a
   * receive from any rank stays posted; free with free_handle) and fills
   * *info. timeout_s (> 0) bounds every later operation on the handle. Every
   * operation's wait also watches the handle's notices. */
  int (*init)(double timeout_s, ladle_mpi_handle **out, ladle_mpi_info *info, char *msg,
              size_t cap);
  /* rank r's `counts[r]` bytes (this rank sends in, counts[rank] bytes) into
   * out at displs[r] on every rank */
  int (*allgatherv)(ladle_mpi_handle *h, const void *in, const size_t *counts, const size_t *displs,
                    void *out, char *msg, size_t cap);
  /* send_counts[r] bytes from in at send_displs[r] to rank r; recv_counts[r]
   * bytes from rank r into out at recv_displs[r] */
  int (*alltoallv)(ladle_mpi_handle *h, const void *in, const size_t *send_counts,
                   const size_t *send_displs, void *out, const size_t *recv_counts,
                   const size_t *recv_displs, char *msg, size_t cap);
  /* root's `bytes` bytes of buf into every rank's buf */
  int (*bcast)(ladle_mpi_handle *h, void *buf, size_t bytes, int root, char *msg, size_t cap);
  /* out[i] = op over the ranks of in[i] for i < n (8-byte elements of `type`;
   * in == out allowed) */
  int (*allreduce)(ladle_mpi_handle *h, const void *in, void *out, size_t n, int type, int op,
                   char *msg, size_t cap);
  int (*barrier)(ladle_mpi_handle *h, char *msg, size_t cap);
  /* Cancels the posted notice receive, MPI_Comm_free of both communicators
   * (skipped on a dead process: a pending request keeps the communicator)
   * and the handle's memory. NULL passes. */
  void (*free_handle)(ladle_mpi_handle *h);
  /* ABI 2. This rank gives up on the job: sends why (cut to
   * LADLE_MPI_NOTICE_BYTES - 1 bytes) to every other rank on the notice
   * communicator, waits for the sends at most min(timeout, 2 s), and breaks
   * the handle first ("this rank gave up: <why>"). Not collective; sends
   * nothing when the handle broke earlier on another rank's notice or its own
   * (the job has been told). LADLE_MPI_OK, or why the sends failed or did not
   * complete (the handle is broken either way). */
  int (*notify)(ladle_mpi_handle *h, const char *why, char *msg, size_t cap);
  /* ABI 3. After a failed query (this rank's notify, or another rank's
   * notice that failed an operation here): the handle starts a new epoch, in
   * which nothing the failed query left in flight matches, and works again.
   * Local, not collective: every rank calls it once it knows the query
   * failed (ladle ends each query with a barrier no rank passes then).
   * LADLE_MPI_OK (also on a handle that is not broken), or EBROKEN when the
   * process's MPI is dead (a timeout, an MPI error, an interrupted receive
   * that could not be cancelled). */
  int (*recover)(ladle_mpi_handle *h, char *msg, size_t cap);
} ladle_mpi_shim;

/* The table, or NULL when abi is not LADLE_MPI_SHIM_ABI. */
typedef const ladle_mpi_shim *(*ladle_mpi_shim_get_fn)(int abi);

#endif
