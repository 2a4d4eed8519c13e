/* shim.c — libladle_mpi.so: ladle's collectives over one MPI library, the
 * only ladle code compiled against mpi.h. It exports ladle_mpi_shim_get and
 * nothing else of ladle (it does not link libladle): MPI types stay inside,
 * plain C types go out (shim.h).
 *
 * Every operation is nonblocking underneath (MPI_Iallgatherv, MPI_Ialltoallv,
 * MPI_Ibcast, MPI_Iallreduce, MPI_Ibarrier, or MPI_Isend/MPI_Irecv pairs) and
 * is polled with MPI_Testall and a growing sleep until it completes or the
 * handle's deadline passes. Counts that fit in int take the collectives with
 * MPI_BYTE; larger ones go pairwise in messages of at most 1 GiB, so buffers
 * past 2 GiB work. An alltoallv goes pairwise on every rank when it must on
 * any (a one-int allreduce first: each rank sees only its own counts and
 * displacements, and ranks that took different paths would both wait out
 * the timeout). A timeout or an MPI error breaks every handle of the
 * process for good: the operation that failed may still hold its buffers and
 * count arrays inside MPI (those arrays are leaked on purpose), so nothing is
 * sent or received through the shim again.
 *
 * Failure notices: each handle holds a second dup of MPI_COMM_WORLD on which
 * a receive of one notice (LADLE_MPI_NOTICE_BYTES, from any rank) stays
 * posted. A rank that gives up (notify) sends its reason there to every other
 * rank. Every wait of every operation tests the posted receives of all live
 * handles beside its own requests, as does the start of every operation, so
 * a notice ends whatever another rank waits in within one poll (1 ms at
 * most): the process breaks with "rank R failed: <why>" and the operation
 * returns LADLE_MPI_EPEER. The notice that arrives is the first failure; the
 * ranks that learn of it do not notify in turn (notify sends nothing then).
 *
 * Finalisation: when the shim initialised MPI it registers an atexit handler
 * that calls MPI_Finalize unless MPI is finalised already. It does so on a
 * broken process too: Open MPI's MPI_Finalize is a fence over the job's
 * processes, not over the communicator's pending requests, so it returns once
 * every rank reaches it (a rank that skipped a collective included; a rank
 * that died makes mpirun end the job anyway), and mpirun sees a clean exit.
 * Skipping it (or MPI_Abort) makes mpirun call the whole job failed. Whoever
 * finalises (this handler or the application, mpi4py's included), the posted
 * notice receives are cancelled first: the first init puts an attribute on
 * MPI_COMM_SELF whose delete callback, which MPI_Finalize runs before
 * anything else, cancels and completes them; free_handle does the same for
 * its own. */
#define _POSIX_C_SOURCE 200809L
#include "shim.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SHIM_API __attribute__((visibility("default")))

#define SHIM_CHUNK_MAX ((size_t)1 << 30) /* the pairwise path's largest message */
#define SHIM_TAG 0x1AD1                  /* the pairwise path's messages */
#define SHIM_NOTICE_TAG 0x1AD2           /* failure notices, on the notice communicator */
#define SHIM_NOTIFY_MAX_S 2.0            /* notify waits for its sends at most this long */

struct ladle_mpi_handle {
  MPI_Comm comm;                       /* a dup of MPI_COMM_WORLD, MPI_ERRORS_RETURN */
  MPI_Comm ctl;                        /* another: failure notices only */
  MPI_Request ctl_req;                 /* the posted notice receive (MPI_REQUEST_NULL: none) */
  char notice[LADLE_MPI_NOTICE_BYTES]; /* where it lands */
  int rank, size;                      /* in comm */
  double timeout_s;                    /* every operation's bound */
  size_t int_limit;                    /* a count or displacement above it goes pairwise */
  size_t chunk;                        /* the pairwise path's largest message */
  struct ladle_mpi_handle *next;       /* in g_live */
};

/* Why the process broke (g_broken): its own failure (a timeout, an MPI
 * error), another rank's notice, or its own notify. */
enum { BROKEN_NO = 0, BROKEN_HERE = 1, BROKEN_BY_PEER = 2, BROKEN_GAVE_UP = 3 };

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* init, the first failure, g_live */
static int g_atexit_registered;                          /* under g_mu */
static int g_finalize_hooked;                            /* under g_mu: the COMM_SELF attribute */
static ladle_mpi_handle *g_live;                         /* under g_mu: handles with notices */
static atomic_int g_broken;                              /* BROKEN_*: the first failure's kind */
static char g_why[320];                                  /* the first failure's message */

/* ------------------------------------------------------------------ errors */

/* Formats "rank R of S: <fmt>" into msg (when there is one). */
static void put_msg(const ladle_mpi_handle *h, char *msg, size_t cap, const char *fmt, va_list ap) {
  if (msg == NULL || cap == 0) return;
  int n = 0;
  if (h != NULL) n = snprintf(msg, cap, "rank %d of %d: ", h->rank, h->size);
  if (n < 0 || (size_t)n >= cap) return;
  vsnprintf(msg + n, cap - (size_t)n, fmt, ap);
}

/* Marks the process's MPI as broken for the reason `kind` (BROKEN_*),
 * keeping the first failure's kind and text. */
static void mark_broken(int kind, const char *why) {
  pthread_mutex_lock(&g_mu);
  if (!atomic_load(&g_broken)) {
    size_t n = strnlen(why, sizeof g_why - 1); /* the start says enough */
    memcpy(g_why, why, n);
    g_why[n] = '\0';
    atomic_store(&g_broken, kind);
  }
  pthread_mutex_unlock(&g_mu);
}

/* Fills msg and returns status; a timeout or a failure breaks the process. */
__attribute__((format(printf, 5, 6))) static int fail(const ladle_mpi_handle *h, int status,
                                                      char *msg, size_t cap, const char *fmt, ...) {
  char local[512];
  va_list ap;
  va_start(ap, fmt);
  put_msg(h, local, sizeof local, fmt, ap);
  va_end(ap);
  if (msg != NULL && cap > 0) snprintf(msg, cap, "%s", local);
  if (status == LADLE_MPI_EFAIL || status == LADLE_MPI_ETIMEOUT) mark_broken(BROKEN_HERE, local);
  return status;
}

/* An MPI call's failure: its name, the operation and MPI's text for code. */
static int mpi_fail(const ladle_mpi_handle *h, const char *call, int code, const char *what,
                    char *msg, size_t cap) {
  char text[MPI_MAX_ERROR_STRING + 1];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "code %d", code);
  text[len < 0 ? 0 : len > MPI_MAX_ERROR_STRING ? MPI_MAX_ERROR_STRING : len] = '\0';
  return fail(h, LADLE_MPI_EFAIL, msg, cap, "%s failed in MPI %s: %s", call, what, text);
}

/* The refusal of a broken process, naming the first failure. */
static int refuse_broken(const ladle_mpi_handle *h, const char *what, char *msg, size_t cap) {
  char why[sizeof g_why];
  pthread_mutex_lock(&g_mu);
  memcpy(why, g_why, sizeof why);
  pthread_mutex_unlock(&g_mu);
  return fail(h, LADLE_MPI_EBROKEN, msg, cap,
              "MPI %s refused: the MPI communicator broke earlier (%s); ladle does not "
              "recover from that: end the job",
              what, why);
}

/* ------------------------------------------------------------- completion */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Cancels h's posted notice receive and waits (1 s at most) for it to
 * complete; under g_mu or where no other thread can reach h. Returns 1 when
 * no receive is left posted (buffer and communicator free to go), with the
 * notice's text in why (cap > 0) when one had arrived before the cancel. */
static int cancel_notice(ladle_mpi_handle *h, char *why, size_t cap) {
  if (cap > 0) why[0] = '\0';
  if (h->ctl_req == MPI_REQUEST_NULL) return 1;
  if (MPI_Cancel(&h->ctl_req) != MPI_SUCCESS) return 0;
  double deadline = now_s() + 1;
  for (;;) {
    int done = 0;
    MPI_Status st;
    if (MPI_Test(&h->ctl_req, &done, &st) != MPI_SUCCESS) return 0;
    if (done) {
      int cancelled = 1;
      MPI_Test_cancelled(&st, &cancelled);
      if (!cancelled && cap > 0) {
        h->notice[sizeof h->notice - 1] = '\0';
        snprintf(why, cap, "rank %d failed: %s", st.MPI_SOURCE, h->notice);
      }
      return 1;
    }
    if (now_s() >= deadline) return 0;
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
}

/* Tests the posted notice receive of every live handle; when one has
 * arrived, breaks the process ("rank R failed: <why>", also into why) and
 * returns 1. */
static int poll_notices(char *why, size_t cap) {
  int got = 0;
  pthread_mutex_lock(&g_mu);
  for (ladle_mpi_handle *h = g_live; h != NULL && !got; h = h->next) {
    if (h->ctl_req == MPI_REQUEST_NULL) continue;
    int done = 0;
    MPI_Status st;
    if (MPI_Test(&h->ctl_req, &done, &st) != MPI_SUCCESS || !done) continue;
    h->notice[sizeof h->notice - 1] = '\0';
    snprintf(why, cap, "rank %d failed: %s", st.MPI_SOURCE, h->notice);
    got = 1;
  }
  pthread_mutex_unlock(&g_mu);
  if (got) mark_broken(BROKEN_BY_PEER, why);
  return got;
}

/* Polls the n requests until all complete or bound_s passes: a few tests
 * back to back, then sleeps from 20 us growing to 1 ms. With watch, each
 * poll also tests the notices and gives up on one (LADLE_MPI_EPEER). On a
 * timeout or a notice the requests stay pending inside MPI (and the process
 * broken); a timeout's message is left to the caller (LADLE_MPI_ETIMEOUT
 * returned, nothing written). */
static int poll_all(const ladle_mpi_handle *h, int n, MPI_Request *reqs, double bound_s, int watch,
                    const char *what, char *msg, size_t cap) {
  double deadline = now_s() + bound_s;
  long sleep_ns = 20000;
  for (int spins = 0;; spins++) {
    int done = 0;
    int rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_fail(h, "MPI_Testall", rc, what, msg, cap);
    if (done) return LADLE_MPI_OK;
    char why[LADLE_MPI_NOTICE_BYTES + 32];
    if (watch && poll_notices(why, sizeof why))
      return fail(h, LADLE_MPI_EPEER, msg, cap, "MPI %s abandoned: %s", what, why);
    if (now_s() >= deadline) return LADLE_MPI_ETIMEOUT;
    if (spins < 16) continue;
    struct timespec ts = {0, sleep_ns};
    nanosleep(&ts, NULL);
    sleep_ns = sleep_ns * 3 / 2 > 1000000 ? 1000000 : sleep_ns * 3 / 2;
  }
}

/* Polls the n requests until all complete, the handle's timeout passes or
 * another rank's notice arrives. On a timeout or a notice the requests stay
 * pending inside MPI (and the process broken). */
static int wait_all(const ladle_mpi_handle *h, int n, MPI_Request *reqs, const char *what,
                    char *msg, size_t cap) {
  int st = poll_all(h, n, reqs, h->timeout_s, 1, what, msg, cap);
  if (st == LADLE_MPI_ETIMEOUT)
    return fail(h, LADLE_MPI_ETIMEOUT, msg, cap,
                "MPI %s did not complete within %g s: a rank died or the ranks ran different "
                "queries",
                what, h->timeout_s);
  return st;
}

/* The start of every operation: refused on a broken process or when
 * another rank's notice is in (which breaks it). */
static int begin(const ladle_mpi_handle *h, const char *what, char *msg, size_t cap) {
  if (atomic_load(&g_broken)) return refuse_broken(h, what, msg, cap);
  char why[LADLE_MPI_NOTICE_BYTES + 32];
  if (poll_notices(why, sizeof why))
    return fail(h, LADLE_MPI_EPEER, msg, cap, "MPI %s refused: %s", what, why);
  return LADLE_MPI_OK;
}

/* ---------------------------------------------------------- pairwise path */

/* Requests for messages of at most h->chunk bytes (a list that grows). */
typedef struct reqs {
  MPI_Request *r;
  int n, cap;
} reqs;

static int reqs_push(reqs *q) {
  if (q->n == q->cap) {
    int cap = q->cap ? q->cap * 2 : 64;
    MPI_Request *r = realloc(q->r, (size_t)cap * sizeof *r);
    if (r == NULL) return -1;
    q->r = r;
    q->cap = cap;
  }
  return q->n++;
}

/* Posts `bytes` bytes at base + at to (send) or from (recv) rank peer as
 * messages of at most h->chunk bytes, pointer arithmetic on base (which may
 * be NULL when there are no bytes). */
static int post_chunks(const ladle_mpi_handle *h, reqs *q, int send, const void *base, size_t at,
                       size_t bytes, int peer, const char *what, char *msg, size_t cap) {
  for (size_t off = 0; off < bytes; off += h->chunk) {
    size_t len = bytes - off < h->chunk ? bytes - off : h->chunk;
    char *p = (char *)base + at + off;
    int i = reqs_push(q);
    if (i < 0)
      return fail(h, LADLE_MPI_EFAIL, msg, cap, /* breaks: the posted ones stay pending */
                  "MPI %s: out of memory for %d requests", what, q->n);
    int rc = send ? MPI_Isend(p, (int)len, MPI_BYTE, peer, SHIM_TAG, h->comm, &q->r[i])
                  : MPI_Irecv(p, (int)len, MPI_BYTE, peer, SHIM_TAG, h->comm, &q->r[i]);
    if (rc != MPI_SUCCESS) return mpi_fail(h, send ? "MPI_Isend" : "MPI_Irecv", rc, what, msg, cap);
  }
  return LADLE_MPI_OK;
}

/* Sends to and receives from every other rank (the fallback of allgatherv
 * and alltoallv): rank r gets send_counts[r] bytes from in + send_displs[r]
 * and this rank gets recv_counts[r] bytes into out + recv_displs[r]; its own
 * part is a memmove. A NULL send_displs means in for every rank. Messages
 * between two ranks share one tag: MPI keeps them in order. */
static int pairwise(const ladle_mpi_handle *h, const void *in, const size_t *send_counts,
                    const size_t *send_displs, void *out, const size_t *recv_counts,
                    const size_t *recv_displs, const char *what, char *msg, size_t cap) {
  reqs q = {NULL, 0, 0};
  int st = LADLE_MPI_OK;
  /* receives first, then sends in rank order starting after this rank */
  for (int k = 1; k < h->size && st == LADLE_MPI_OK; k++) {
    int peer = (h->rank + h->size - k) % h->size;
    st = post_chunks(h, &q, 0, out, recv_displs[peer], recv_counts[peer], peer, what, msg, cap);
  }
  for (int k = 1; k < h->size && st == LADLE_MPI_OK; k++) {
    int peer = (h->rank + k) % h->size;
    size_t at = send_displs ? send_displs[peer] : 0;
    st = post_chunks(h, &q, 1, in, at, send_counts[peer], peer, what, msg, cap);
  }
  if (st == LADLE_MPI_OK && recv_counts[h->rank] > 0) {
    const char *src = (const char *)in + (send_displs ? send_displs[h->rank] : 0);
    char *dst = (char *)out + recv_displs[h->rank];
    if (src != dst) memmove(dst, src, recv_counts[h->rank]);
  }
  if (st == LADLE_MPI_OK) st = wait_all(h, q.n, q.r, what, msg, cap);
  free(q.r); /* MPI keeps no pointer into it, pending requests included */
  return st;
}

/* --------------------------------------------------------------- helpers */

/* Whether every one of the n values fits the handle's int limit. */
static int all_fit(const ladle_mpi_handle *h, const size_t *a, int n) {
  for (int i = 0; i < n; i++)
    if (a[i] > h->int_limit) return 0;
  return 1;
}

/* Whether any rank's alltoallv must go pairwise (into *any): each rank sees
 * only its own counts and displacements, so the ranks agree (a max over
 * them) lest some post the collective and others the pairwise messages and
 * both wait out the timeout. The flag is on the heap: a pending request may
 * still write it after a timeout (then it is leaked). */
static int agree_on_pairwise(const ladle_mpi_handle *h, int mine, int *any, const char *what,
                             char *msg, size_t cap) {
  *any = mine;
  if (h->size == 1) return LADLE_MPI_OK;
  int *flag = malloc(sizeof *flag);
  if (flag == NULL) return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  *flag = mine;
  MPI_Request req;
  int rc = MPI_Iallreduce(MPI_IN_PLACE, flag, 1, MPI_INT, MPI_MAX, h->comm, &req);
  int st = rc != MPI_SUCCESS ? mpi_fail(h, "MPI_Iallreduce", rc, what, msg, cap)
                             : wait_all(h, 1, &req, what, msg, cap);
  if (st == LADLE_MPI_OK) *any = *flag;
  if (rc != MPI_SUCCESS || st == LADLE_MPI_OK) free(flag);
  return st;
}

/* n size_t values as ints into a fresh array (NULL: out of memory). */
static int *to_ints(const size_t *a, int n) {
  int *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  if (v != NULL)
    for (int i = 0; i < n; i++) v[i] = (int)a[i];
  return v;
}

static size_t sum(const size_t *a, int n) {
  size_t s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

/* -------------------------------------------------------------- the table */

static void finalise_at_exit(void) {
  int fin = 1;
  if (MPI_Finalized(&fin) == MPI_SUCCESS && !fin) MPI_Finalize();
}

/* The delete callback of the attribute on MPI_COMM_SELF, which MPI_Finalize
 * runs first of all: cancels the live handles' posted notice receives, so
 * that no receive is left pending at finalisation (whoever finalises). */
static int notices_at_finalize(MPI_Comm comm, int key, void *value, void *extra) {
  (void)comm, (void)key, (void)value, (void)extra;
  pthread_mutex_lock(&g_mu);
  for (ladle_mpi_handle *h = g_live; h != NULL; h = h->next) cancel_notice(h, NULL, 0);
  pthread_mutex_unlock(&g_mu);
  return MPI_SUCCESS;
}

/* Parses the test-only LADLE_MPI_CHUNK_BYTES (0 when unset or invalid). */
static size_t test_chunk_bytes(void) {
  const char *s = getenv("LADLE_MPI_CHUNK_BYTES");
  if (s == NULL || *s == '\0') return 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  return *end == '\0' ? (size_t)v : 0;
}

static int shim_init(double timeout_s, ladle_mpi_handle **out, ladle_mpi_info *info, char *msg,
                     size_t cap) {
  *out = NULL;
  memset(info, 0, sizeof *info);
  int began = begin(NULL, "init", msg, cap);
  if (began != LADLE_MPI_OK) return began;
  ladle_mpi_handle *h = calloc(1, sizeof *h);
  if (h == NULL) return fail(NULL, LADLE_MPI_ENOMEM, msg, cap, "MPI init: out of memory");
  h->timeout_s = timeout_s > 0 ? timeout_s : 600;
  h->int_limit = INT_MAX;
  h->chunk = SHIM_CHUNK_MAX;
  size_t test = test_chunk_bytes();
  if (test > 0) {
    h->int_limit = test < h->int_limit ? test : h->int_limit;
    h->chunk = test < h->chunk ? test : h->chunk;
  }
  int rc = MPI_SUCCESS, inited = 0, fin = 0, provided = MPI_THREAD_SINGLE;
  const char *call = "MPI_Initialized";
  pthread_mutex_lock(&g_mu);
  if ((rc = MPI_Initialized(&inited)) == MPI_SUCCESS &&
      (call = "MPI_Finalized", rc = MPI_Finalized(&fin)) == MPI_SUCCESS && fin) {
    pthread_mutex_unlock(&g_mu);
    free(h);
    return fail(NULL, LADLE_MPI_EINVAL, msg, cap,
                "MPI init: MPI was finalised already in this process; it cannot start again");
  }
  if (rc == MPI_SUCCESS && !inited) {
    call = "MPI_Init_thread";
    rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (rc == MPI_SUCCESS) {
      info->initialised_here = 1;
      if (!g_atexit_registered) g_atexit_registered = atexit(finalise_at_exit) == 0;
    }
  } else if (rc == MPI_SUCCESS) {
    call = "MPI_Query_thread";
    rc = MPI_Query_thread(&provided);
  }
  if (rc == MPI_SUCCESS && !g_finalize_hooked) { /* without it MPI_Finalize cancels nothing */
    int key;
    g_finalize_hooked = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, notices_at_finalize, &key,
                                               NULL) == MPI_SUCCESS &&
                        MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL) == MPI_SUCCESS;
  }
  pthread_mutex_unlock(&g_mu);
  if (rc != MPI_SUCCESS) {
    free(h);
    return mpi_fail(NULL, call, rc, "init", msg, cap);
  }
  MPI_Request req[2];
  MPI_Comm_rank(MPI_COMM_WORLD, &h->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &h->size);
  h->ctl_req = MPI_REQUEST_NULL;
  if ((rc = MPI_Comm_idup(MPI_COMM_WORLD, &h->comm, &req[0])) != MPI_SUCCESS) {
    free(h);
    return mpi_fail(NULL, "MPI_Comm_idup", rc, "init", msg, cap);
  }
  if ((rc = MPI_Comm_idup(MPI_COMM_WORLD, &h->ctl, &req[1])) != MPI_SUCCESS)
    return mpi_fail(NULL, "MPI_Comm_idup", rc, "init", msg, cap); /* the first stays pending */
  /* the dups are collective: bounded like the rest (on a timeout they stay pending) */
  int st = wait_all(h, 2, req, "init (MPI_Comm_idup of MPI_COMM_WORLD, twice)", msg, cap);
  if (st != LADLE_MPI_OK) return st;
  call = "MPI_Comm_set_errhandler";
  if ((rc = MPI_Comm_set_errhandler(h->comm, MPI_ERRORS_RETURN)) == MPI_SUCCESS &&
      (rc = MPI_Comm_set_errhandler(h->ctl, MPI_ERRORS_RETURN)) == MPI_SUCCESS)
    call = "MPI_Irecv", rc = MPI_Irecv(h->notice, LADLE_MPI_NOTICE_BYTES, MPI_BYTE, MPI_ANY_SOURCE,
                                       SHIM_NOTICE_TAG, h->ctl, &h->ctl_req);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&h->comm);
    MPI_Comm_free(&h->ctl);
    free(h);
    return mpi_fail(NULL, call, rc, "init", msg, cap);
  }
  pthread_mutex_lock(&g_mu);
  h->next = g_live;
  g_live = h;
  pthread_mutex_unlock(&g_mu);
  info->rank = h->rank;
  info->size = h->size;
  info->thread_level = provided == MPI_THREAD_MULTIPLE     ? 3
                       : provided == MPI_THREAD_SERIALIZED ? 2
                       : provided == MPI_THREAD_FUNNELED   ? 1
                                                           : 0;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  int len = 0;
  if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
    lib[len < 0                                ? 0
        : len > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_LIBRARY_VERSION_STRING
                                               : len] = '\0';
    size_t n = strcspn(lib, "\n,");
    n = n < sizeof info->library - 1 ? n : sizeof info->library - 1;
    memcpy(info->library, lib, n);
    info->library[n] = '\0';
  }
  info->int_limit_bytes = h->int_limit;
  info->chunk_bytes = h->chunk;
  *out = h;
  return LADLE_MPI_OK;
}

static int shim_allgatherv(ladle_mpi_handle *h, const void *in, const size_t *counts,
                           const size_t *displs, void *out, char *msg, size_t cap) {
  char what[160];
  snprintf(what, sizeof what, "allgatherv (sending %zu bytes, receiving %zu from %d ranks)",
           counts[h->rank], sum(counts, h->size), h->size);
  int began = begin(h, what, msg, cap);
  if (began != LADLE_MPI_OK) return began;
  if (!all_fit(h, counts, h->size) || !all_fit(h, displs, h->size)) {
    size_t *sc = malloc((size_t)h->size * sizeof *sc);
    if (sc == NULL) return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
    for (int r = 0; r < h->size; r++) sc[r] = counts[h->rank];
    int st = pairwise(h, in, sc, NULL, out, counts, displs, what, msg, cap);
    free(sc);
    return st;
  }
  int *ic = to_ints(counts, h->size), *id = to_ints(displs, h->size);
  if (ic == NULL || id == NULL) {
    free(ic);
    free(id);
    return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  }
  const void *send = (const char *)in == (char *)out + displs[h->rank] ? MPI_IN_PLACE : in;
  MPI_Request req;
  int rc = MPI_Iallgatherv(send, ic[h->rank], MPI_BYTE, out, ic, id, MPI_BYTE, h->comm, &req);
  int st = rc != MPI_SUCCESS ? mpi_fail(h, "MPI_Iallgatherv", rc, what, msg, cap)
                             : wait_all(h, 1, &req, what, msg, cap);
  if (rc != MPI_SUCCESS || st == LADLE_MPI_OK) { /* a pending request may still read them */
    free(ic);
    free(id);
  }
  return st;
}

static int shim_alltoallv(ladle_mpi_handle *h, const void *in, const size_t *send_counts,
                          const size_t *send_displs, void *out, const size_t *recv_counts,
                          const size_t *recv_displs, char *msg, size_t cap) {
  char what[160];
  snprintf(what, sizeof what, "alltoallv (sending %zu bytes, receiving %zu over %d ranks)",
           sum(send_counts, h->size), sum(recv_counts, h->size), h->size);
  int began = begin(h, what, msg, cap);
  if (began != LADLE_MPI_OK) return began;
  if (send_counts[h->rank] != recv_counts[h->rank])
    return fail(h, LADLE_MPI_EINVAL, msg, cap,
                "MPI %s: %zu bytes sent to this rank itself, %zu expected", what,
                send_counts[h->rank], recv_counts[h->rank]);
  int n = h->size, big = 0;
  int st = agree_on_pairwise(h,
                             !all_fit(h, send_counts, n) || !all_fit(h, send_displs, n) ||
                                 !all_fit(h, recv_counts, n) || !all_fit(h, recv_displs, n),
                             &big, what, msg, cap);
  if (st != LADLE_MPI_OK) return st;
  if (big)
    return pairwise(h, in, send_counts, send_displs, out, recv_counts, recv_displs, what, msg, cap);
  int *v[4] = {to_ints(send_counts, n), to_ints(send_displs, n), to_ints(recv_counts, n),
               to_ints(recv_displs, n)};
  if (v[0] == NULL || v[1] == NULL || v[2] == NULL || v[3] == NULL) {
    for (int i = 0; i < 4; i++) free(v[i]);
    return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  }
  MPI_Request req;
  int rc = MPI_Ialltoallv(in, v[0], v[1], MPI_BYTE, out, v[2], v[3], MPI_BYTE, h->comm, &req);
  st = rc != MPI_SUCCESS ? mpi_fail(h, "MPI_Ialltoallv", rc, what, msg, cap)
                         : wait_all(h, 1, &req, what, msg, cap);
  if (rc != MPI_SUCCESS || st == LADLE_MPI_OK) /* a pending request may still read them */
    for (int i = 0; i < 4; i++) free(v[i]);
  return st;
}

static int shim_bcast(ladle_mpi_handle *h, void *buf, size_t bytes, int root, char *msg,
                      size_t cap) {
  char what[160];
  snprintf(what, sizeof what, "bcast (%zu bytes from rank %d of %d)", bytes, root, h->size);
  int began = begin(h, what, msg, cap);
  if (began != LADLE_MPI_OK) return began;
  if (root < 0 || root >= h->size)
    return fail(h, LADLE_MPI_EINVAL, msg, cap, "MPI %s: no such root rank", what);
  /* past the int limit: one Ibcast per chunk, all in flight at once */
  size_t step = bytes <= h->int_limit ? (bytes > 0 ? bytes : 1) : h->chunk;
  size_t nreq = bytes == 0 ? 1 : (bytes + step - 1) / step;
  MPI_Request one, *r = nreq == 1 ? &one : malloc(nreq * sizeof *r);
  if (r == NULL) return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  int st = LADLE_MPI_OK;
  size_t posted = 0;
  for (size_t off = 0; posted < nreq; off += step, posted++) {
    size_t len = bytes - off < step ? bytes - off : step;
    int rc = MPI_Ibcast((char *)buf + off, (int)len, MPI_BYTE, root, h->comm, &r[posted]);
    if (rc != MPI_SUCCESS) {
      st = mpi_fail(h, "MPI_Ibcast", rc, what, msg, cap);
      break;
    }
  }
  if (st == LADLE_MPI_OK) st = wait_all(h, (int)nreq, r, what, msg, cap);
  if (r != &one) free(r); /* MPI keeps no pointer into it */
  return st;
}

static int shim_allreduce(ladle_mpi_handle *h, const void *in, void *out, size_t n, int type,
                          int op, char *msg, size_t cap) {
  static const char *const type_names[] = {"int64", "uint64", "float64"};
  static const char *const op_names[] = {"sum", "min", "max"};
  char what[160];
  if (type < 0 || type > 2 || op < 0 || op > 2)
    return fail(h, LADLE_MPI_EINVAL, msg, cap, "MPI allreduce: unknown type %d or operation %d",
                type, op);
  snprintf(what, sizeof what, "allreduce (%s of %zu %s values over %d ranks)", op_names[op], n,
           type_names[type], h->size);
  int began = begin(h, what, msg, cap);
  if (began != LADLE_MPI_OK) return began;
  MPI_Datatype dt = type == LADLE_MPI_I64   ? MPI_INT64_T
                    : type == LADLE_MPI_U64 ? MPI_UINT64_T
                                            : MPI_DOUBLE;
  MPI_Op mop = op == LADLE_MPI_SUM ? MPI_SUM : op == LADLE_MPI_MIN ? MPI_MIN : MPI_MAX;
  int in_place = in == out;
  size_t step = n * 8 <= h->int_limit ? (n > 0 ? n : 1) : h->chunk >= 8 ? h->chunk / 8 : 1;
  size_t nreq = n == 0 ? 1 : (n + step - 1) / step;
  MPI_Request one, *r = nreq == 1 ? &one : malloc(nreq * sizeof *r);
  if (r == NULL) return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  int st = LADLE_MPI_OK;
  size_t posted = 0;
  for (size_t off = 0; posted < nreq; off += step, posted++) {
    size_t len = n - off < step ? n - off : step;
    const void *send = in_place ? MPI_IN_PLACE : (const void *)((const char *)in + off * 8);
    int rc = MPI_Iallreduce(send, (char *)out + off * 8, (int)len, dt, mop, h->comm, &r[posted]);
    if (rc != MPI_SUCCESS) {
      st = mpi_fail(h, "MPI_Iallreduce", rc, what, msg, cap);
      break;
    }
  }
  if (st == LADLE_MPI_OK) st = wait_all(h, (int)nreq, r, what, msg, cap);
  if (r != &one) free(r); /* MPI keeps no pointer into it */
  return st;
}

static int shim_barrier(ladle_mpi_handle *h, char *msg, size_t cap) {
  char what[64];
  snprintf(what, sizeof what, "barrier (%d ranks)", h->size);
  int began = begin(h, what, msg, cap);
  if (began != LADLE_MPI_OK) return began;
  MPI_Request req;
  int rc = MPI_Ibarrier(h->comm, &req);
  if (rc != MPI_SUCCESS) return mpi_fail(h, "MPI_Ibarrier", rc, what, msg, cap);
  return wait_all(h, 1, &req, what, msg, cap);
}

static void shim_free_handle(ladle_mpi_handle *h) {
  if (h == NULL) return;
  pthread_mutex_lock(&g_mu);
  for (ladle_mpi_handle **p = &g_live; *p != NULL; p = &(*p)->next)
    if (*p == h) {
      *p = h->next;
      break;
    }
  pthread_mutex_unlock(&g_mu);
  int fin = 1;
  if (MPI_Finalized(&fin) != MPI_SUCCESS || fin) { /* MPI writes nowhere any more */
    free(h);
    return;
  }
  char why[LADLE_MPI_NOTICE_BYTES + 32];
  int quiet = cancel_notice(h, why, sizeof why);
  if (why[0] != '\0') mark_broken(BROKEN_BY_PEER, why); /* a rank gave up after the last wait */
  if (!atomic_load(&g_broken)) {
    MPI_Comm_free(&h->comm);
    if (quiet) MPI_Comm_free(&h->ctl);
  }
  if (quiet) free(h); /* else the receive may still land in h->notice: leaked */
}

static int shim_notify(ladle_mpi_handle *h, const char *why, char *msg, size_t cap) {
  if (msg != NULL && cap > 0) msg[0] = '\0';
  if (why == NULL || *why == '\0') why = "(no reason given)";
  char mine[sizeof g_why];
  snprintf(mine, sizeof mine, "this rank gave up: %s", why);
  int told = atomic_load(&g_broken), fin = 1;
  told = told == BROKEN_BY_PEER || told == BROKEN_GAVE_UP; /* the job knows already */
  mark_broken(BROKEN_GAVE_UP, mine); /* first: no operation starts from here on */
  if (told || h->size < 2 || MPI_Finalized(&fin) != MPI_SUCCESS || fin) return LADLE_MPI_OK;
  size_t len = strnlen(why, LADLE_MPI_NOTICE_BYTES - 1);
  char *text = malloc(LADLE_MPI_NOTICE_BYTES); /* kept while a send may read it */
  MPI_Request *r = malloc((size_t)(h->size - 1) * sizeof *r);
  if (text == NULL || r == NULL) {
    free(text);
    free(r);
    return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI notify: out of memory");
  }
  memcpy(text, why, len);
  text[len] = '\0';
  int st = LADLE_MPI_OK, n = 0;
  for (int k = 1; k < h->size; k++, n++) {
    int rc = MPI_Isend(text, (int)len + 1, MPI_BYTE, (h->rank + k) % h->size, SHIM_NOTICE_TAG,
                       h->ctl, &r[n]);
    if (rc != MPI_SUCCESS) {
      st = mpi_fail(h, "MPI_Isend", rc, "notify", msg, cap);
      break;
    }
  }
  double bound = h->timeout_s < SHIM_NOTIFY_MAX_S ? h->timeout_s : SHIM_NOTIFY_MAX_S;
  int sent = n == 0 ? LADLE_MPI_OK : poll_all(h, n, r, bound, 0, "notify", msg, cap);
  if (sent == LADLE_MPI_ETIMEOUT)
    fail(h, sent, msg, cap, "MPI notify: %d notices not delivered within %g s", n, bound);
  if (st == LADLE_MPI_OK) st = sent;
  if (sent == LADLE_MPI_OK) free(text);
  free(r); /* MPI keeps no pointer into it */
  return st;
}

static const ladle_mpi_shim shim_table = {LADLE_MPI_SHIM_ABI, shim_init,        shim_allgatherv,
                                          shim_alltoallv,     shim_bcast,       shim_allreduce,
                                          shim_barrier,       shim_free_handle, shim_notify};

/* The one exported symbol: the table when abi is the one this library was
 * built with, else NULL. */
SHIM_API const ladle_mpi_shim *ladle_mpi_shim_get(int abi) {
  return abi == LADLE_MPI_SHIM_ABI ? &shim_table : NULL;
}
