/* shim.c — libladle_mpi.so: ladle's collectives over one MPI library, the
 * only ladle code compiled against mpi.h. It exports ladle_mpi_shim_get and
 * nothing else of ladle (it does not link libladle): MPI types stay inside,
 * plain C types go out (shim.h).
 *
 * Every operation is point-to-point underneath: MPI_Irecv from and MPI_Isend
 * to every other rank (messages of at most 1 GiB, so buffers past 2 GiB
 * work), polled with MPI_Testall and a growing sleep until they complete or
 * the handle's deadline passes. allgatherv and alltoallv are one such round;
 * bcast is the root's sends; allreduce an allgather reduced on each rank in
 * rank order (every rank gets the same bits); barrier a byte to every rank.
 * Point-to-point, not MPI's nonblocking collectives, so that an operation a
 * failure interrupts can be taken apart: its receives cancelled (below).
 *
 * Failure notices: each handle holds a second dup of MPI_COMM_WORLD on which
 * a receive of one notice (LADLE_MPI_NOTICE_BYTES, from any rank) stays
 * posted. A rank that gives up (notify) sends its reason there to every other
 * rank, with the number of operations it completed in the epoch. Every wait
 * tests the handle's notice receive beside its own requests, as does the
 * start of every operation, so a notice ends whatever another rank waits in
 * for it within a poll: the operation returns LADLE_MPI_EPEER ("rank R
 * failed: <why>") and the handle is broken; not an operation the rank that
 * gave up completed (every rank joined it: it completes), which the notice
 * may overtake when that rank failed in the next query. The
 * interrupted operation's receives are cancelled and every one of them is
 * waited for until it is complete or cancelled (a receive already matched is
 * a live rank's message: it arrives), so that no receive writes into the
 * caller's buffers after the operation returned; its sends still pending go
 * to the rank that gave up, which never matched them: a rendezvous send is
 * not read again, and MPI_Request_free lets it go.
 *
 * Recovery (recover): a handle broken by a notice or by its own notify, whose
 * interrupted receives are all accounted for, starts a new epoch: every tag
 * of its messages and notices carries the epoch (mod SHIM_EPOCHS), so what
 * the failed query left in flight or unreceived never matches the next
 * query's receives, and a second notice of the same failure is never taken
 * for a new one. recover is local (no collective): the ranks agree that a
 * query failed because ladle ends every query on several ranks with a
 * barrier (exec.c), which no rank passes when one gave up.
 *
 * A timeout or an MPI error kills the process's MPI for good (g_dead): the
 * operation that failed may still hold its buffers and count arrays inside
 * MPI (those are leaked on purpose), so nothing is sent or received through
 * the shim again, on any handle.
 *
 * Finalisation: when the shim initialised MPI it registers an atexit handler
 * that calls MPI_Finalize unless MPI is finalised already. It does so after a
 * failure too: Open MPI's MPI_Finalize is a fence over the job's processes,
 * not over the communicator's pending requests, so it returns once every rank
 * reaches it (a rank that skipped a collective included; a rank that died
 * makes mpirun end the job anyway), and mpirun sees a clean exit. Skipping it
 * (or MPI_Abort) makes mpirun call the whole job failed. Whoever finalises
 * (this handler or the application, mpi4py's included), the posted notice
 * receives are cancelled first: the first init puts an attribute on
 * MPI_COMM_SELF whose delete callback, which MPI_Finalize runs before
 * anything else, cancels and completes them; free_handle does the same for
 * its own. */
#define _POSIX_C_SOURCE 200809L
#include "shim.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SHIM_API __attribute__((visibility("default")))

#define SHIM_CHUNK_MAX ((size_t)1 << 30) /* the largest message */
#define SHIM_TAG 0x100                   /* the first epoch's messages and notices */
#define SHIM_EPOCHS 16000                /* tags SHIM_TAG + epoch % SHIM_EPOCHS (<= 32767) */
#define SHIM_NOTIFY_MAX_S 2.0            /* notify waits for its sends at most this long */
#define SHIM_DRAIN_MAX_S 5.0             /* an interrupted operation's receives, at most */
#define SHIM_SPIN_S 0.5                  /* a wait tests back to back this long (poll_all) */
#define SHIM_NAP_MAX_NS 200000L          /* then sleeps between tests at most this long */

/* Why a handle broke: another rank's notice, or its own notify. */
enum { BROKEN_NO = 0, BROKEN_BY_PEER = 1, BROKEN_GAVE_UP = 2 };

struct ladle_mpi_handle {
  MPI_Comm comm;                       /* a dup of MPI_COMM_WORLD, MPI_ERRORS_RETURN */
  MPI_Comm ctl;                        /* another: failure notices only */
  MPI_Request ctl_req;                 /* the posted notice receive (MPI_REQUEST_NULL: none) */
  char notice[LADLE_MPI_NOTICE_BYTES]; /* where it lands */
  int rank, size;                      /* in comm */
  double timeout_s;                    /* every operation's bound */
  size_t chunk;                        /* the largest message */
  unsigned epoch;                      /* failures recovered from (the tags' epoch) */
  unsigned ops, done;                  /* operations begun and completed in this epoch */
  int told;                            /* a notice came: told_why, from a rank that */
  unsigned told_ops;                   /* had completed told_ops operations */
  char told_why[LADLE_MPI_NOTICE_BYTES + 32];
  int broken;                    /* BROKEN_*: why this handle stopped */
  char why[320];                 /* the failure that broke it */
  struct ladle_mpi_handle *next; /* in g_live */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* init, the first failure, g_live */
static int g_atexit_registered;                          /* under g_mu */
static int g_finalize_hooked;                            /* under g_mu: the COMM_SELF attribute */
static ladle_mpi_handle *g_live;                         /* under g_mu: handles with notices */
static atomic_int g_dead;    /* a timeout or an MPI error: the process's MPI is done */
static char g_dead_why[320]; /* the first such failure's message (under g_mu) */

/* The tag of h's messages and notices in its current epoch. */
static int tag_of(const ladle_mpi_handle *h) { return SHIM_TAG + (int)(h->epoch % SHIM_EPOCHS); }

/* ------------------------------------------------------------------ errors */

/* Formats "rank R of S: <fmt>" into msg (when there is one). */
static void put_msg(const ladle_mpi_handle *h, char *msg, size_t cap, const char *fmt, va_list ap) {
  if (msg == NULL || cap == 0) return;
  int n = 0;
  if (h != NULL) n = snprintf(msg, cap, "rank %d of %d: ", h->rank, h->size);
  if (n < 0 || (size_t)n >= cap) return;
  vsnprintf(msg + n, cap - (size_t)n, fmt, ap);
}

/* Kills the process's MPI (g_dead), keeping the first failure's text. */
static void mark_dead(const char *why) {
  pthread_mutex_lock(&g_mu);
  if (!atomic_load(&g_dead)) {
    size_t n = strnlen(why, sizeof g_dead_why - 1); /* the start says enough */
    memcpy(g_dead_why, why, n);
    g_dead_why[n] = '\0';
    atomic_store(&g_dead, 1);
  }
  pthread_mutex_unlock(&g_mu);
}

/* Breaks h for the reason `kind` (BROKEN_*), keeping its first failure. */
static void mark_broken(ladle_mpi_handle *h, int kind, const char *why) {
  if (h == NULL || h->broken) return;
  size_t n = strnlen(why, sizeof h->why - 1);
  memcpy(h->why, why, n);
  h->why[n] = '\0';
  h->broken = kind;
}

/* Fills msg and returns status; a timeout or an MPI failure kills MPI. */
__attribute__((format(printf, 5, 6))) static int fail(const ladle_mpi_handle *h, int status,
                                                      char *msg, size_t cap, const char *fmt, ...) {
  char local[512];
  va_list ap;
  va_start(ap, fmt);
  put_msg(h, local, sizeof local, fmt, ap);
  va_end(ap);
  if (msg != NULL && cap > 0) snprintf(msg, cap, "%s", local);
  if (status == LADLE_MPI_EFAIL || status == LADLE_MPI_ETIMEOUT) mark_dead(local);
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

/* The refusal of a dead process or a broken handle, naming the failure. */
static int refuse_broken(const ladle_mpi_handle *h, const char *what, char *msg, size_t cap) {
  char why[sizeof g_dead_why];
  int dead = atomic_load(&g_dead);
  pthread_mutex_lock(&g_mu);
  memcpy(why, dead ? g_dead_why : h->why, sizeof why);
  pthread_mutex_unlock(&g_mu);
  if (dead)
    return fail(h, LADLE_MPI_EBROKEN, msg, cap,
                "MPI %s refused: the MPI communicator broke earlier (%s); ladle does not "
                "recover from that: end the job",
                what, why);
  return fail(h, LADLE_MPI_EBROKEN, msg, cap,
              "MPI %s refused: the query failed (%s); the communicator is used again after "
              "recover",
              what, why);
}

/* ------------------------------------------------------------- completion */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void nap(long ns) {
  struct timespec ts = {0, ns};
  nanosleep(&ts, NULL);
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
    nap(100000);
  }
}

/* Posts h's notice receive for its current epoch. */
static int post_notice(ladle_mpi_handle *h) {
  return MPI_Irecv(h->notice, LADLE_MPI_NOTICE_BYTES, MPI_BYTE, MPI_ANY_SOURCE, tag_of(h), h->ctl,
                   &h->ctl_req);
}

/* Tests h's posted notice receive; a notice ("<operations completed>\n<why>")
 * is kept until it applies: to the operation h is in or starts when the rank
 * that gave up did not complete it (an operation that rank completed, every
 * rank joined: it completes here too, though the notice came first; the rank
 * may have gone on to fail in the next query). Then breaks h ("rank R
 * failed: <why>", also into why) and returns 1. */
static int poll_notice(ladle_mpi_handle *h, char *why, size_t cap) {
  if (h == NULL) return 0;
  if (!h->told && h->ctl_req != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Status st;
    if (MPI_Test(&h->ctl_req, &done, &st) != MPI_SUCCESS || !done) return 0;
    h->notice[sizeof h->notice - 1] = '\0';
    char *text = NULL;
    unsigned long ops = strtoul(h->notice, &text, 10);
    text = text != NULL && *text == '\n' ? text + 1 : h->notice;
    h->told = 1;
    h->told_ops = (unsigned)ops;
    snprintf(h->told_why, sizeof h->told_why, "rank %d failed: %s", st.MPI_SOURCE, text);
  }
  if (!h->told || h->ops == 0 || h->ops - 1 < h->told_ops) return 0;
  snprintf(why, cap, "%s", h->told_why);
  mark_broken(h, BROKEN_BY_PEER, why);
  return 1;
}

/* Polls the n requests until all complete or bound_s passes. MPI moves a
 * message's bytes only inside its calls (Open MPI's TCP and shared-memory
 * transports have no progress thread), so the first SHIM_SPIN_S of a wait
 * test back to back, yielding the core between tests; a longer wait is for a
 * rank still computing, and sleeps between tests from 20 us growing to
 * SHIM_NAP_MAX_NS. (Sleeping from the start, up to 1 ms, made a 2-rank
 * alltoallv of 1 MiB a pair take 4.2 ms on loopback TCP where MPI's blocking
 * one took 0.26.) With watch (h), each poll also tests h's notice and gives
 * up on one (LADLE_MPI_EPEER, the requests left as they are). A timeout's
 * message is left to the caller (LADLE_MPI_ETIMEOUT returned, nothing
 * written). */
static int poll_all(ladle_mpi_handle *h, int n, MPI_Request *reqs, double bound_s,
                    ladle_mpi_handle *watch, const char *what, char *msg, size_t cap) {
  double start = now_s(), deadline = start + bound_s, spin_until = start + SHIM_SPIN_S;
  long sleep_ns = 20000;
  for (unsigned tests = 0;; tests++) {
    int done = 0;
    int rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_fail(h, "MPI_Testall", rc, what, msg, cap);
    if (done) return LADLE_MPI_OK;
    char why[LADLE_MPI_NOTICE_BYTES + 32];
    if (poll_notice(watch, why, sizeof why))
      return fail(h, LADLE_MPI_EPEER, msg, cap, "MPI %s abandoned: %s", what, why);
    double t = now_s();
    if (t >= deadline) return LADLE_MPI_ETIMEOUT;
    if (t < spin_until) {
      sched_yield();
      continue;
    }
    nap(sleep_ns);
    sleep_ns = sleep_ns * 3 / 2 > SHIM_NAP_MAX_NS ? SHIM_NAP_MAX_NS : sleep_ns * 3 / 2;
  }
}

/* After a notice interrupted an operation: cancels its receives
 * (reqs[0..nrecv)), waits until each is complete or cancelled, and lets its
 * sends still pending go (MPI_Request_free). A receive still pending after
 * SHIM_DRAIN_MAX_S (or the timeout) would write into the caller's buffer
 * later: MPI is killed then. */
static void drain(ladle_mpi_handle *h, int n, int nrecv, MPI_Request *reqs, const char *what) {
  int ok = 1;
  for (int i = 0; i < nrecv && ok; i++)
    if (reqs[i] != MPI_REQUEST_NULL) ok = MPI_Cancel(&reqs[i]) == MPI_SUCCESS;
  double bound = h->timeout_s < SHIM_DRAIN_MAX_S ? h->timeout_s : SHIM_DRAIN_MAX_S;
  if (ok) ok = poll_all(h, nrecv, reqs, bound, NULL, what, NULL, 0) == LADLE_MPI_OK;
  if (!ok) {
    char why[400];
    snprintf(why, sizeof why,
             "rank %d of %d: MPI %s: a receive of the operation another rank's failure "
             "interrupted could not be cancelled",
             h->rank, h->size, what);
    mark_dead(why);
    return;
  }
  for (int i = nrecv; i < n; i++) {
    int done = 0;
    if (reqs[i] != MPI_REQUEST_NULL &&
        MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
      MPI_Request_free(&reqs[i]);
  }
}

/* Polls the n requests (the first nrecv of them receives) until all
 * complete, the handle's timeout passes or another rank's notice arrives
 * (then the receives are drained: nothing writes into the caller's buffers
 * after this returns, unless MPI was killed). */
static int wait_all(ladle_mpi_handle *h, int n, int nrecv, MPI_Request *reqs, const char *what,
                    char *msg, size_t cap) {
  int st = poll_all(h, n, reqs, h->timeout_s, h, what, msg, cap);
  if (st == LADLE_MPI_ETIMEOUT)
    return fail(h, LADLE_MPI_ETIMEOUT, msg, cap,
                "MPI %s did not complete within %g s: a rank died or the ranks ran different "
                "queries",
                what, h->timeout_s);
  if (st == LADLE_MPI_EPEER) drain(h, n, nrecv, reqs, what);
  return st;
}

/* The start of every operation: refused on a dead process or a broken
 * handle, or when another rank's notice applies to it (which breaks it). */
static int begin(ladle_mpi_handle *h, const char *what, char *msg, size_t cap) {
  if (atomic_load(&g_dead) || (h != NULL && h->broken)) return refuse_broken(h, what, msg, cap);
  if (h != NULL) h->ops++;
  char why[LADLE_MPI_NOTICE_BYTES + 32];
  if (poll_notice(h, why, sizeof why))
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
      return fail(h, LADLE_MPI_EFAIL, msg, cap, /* kills: the posted ones stay pending */
                  "MPI %s: out of memory for %d requests", what, q->n);
    int rc = send ? MPI_Isend(p, (int)len, MPI_BYTE, peer, tag_of(h), h->comm, &q->r[i])
                  : MPI_Irecv(p, (int)len, MPI_BYTE, peer, tag_of(h), h->comm, &q->r[i]);
    if (rc != MPI_SUCCESS) return mpi_fail(h, send ? "MPI_Isend" : "MPI_Irecv", rc, what, msg, cap);
  }
  return LADLE_MPI_OK;
}

/* Sends to and receives from every other rank, every operation's one round:
 * rank r gets send_counts[r] bytes from in + send_displs[r] and this rank
 * gets recv_counts[r] bytes into out + recv_displs[r]; its own part is a
 * memmove. A NULL send_displs means in for every rank. Messages between two
 * ranks share one tag: MPI keeps them in order. */
static int pairwise(ladle_mpi_handle *h, const void *in, const size_t *send_counts,
                    const size_t *send_displs, void *out, const size_t *recv_counts,
                    const size_t *recv_displs, const char *what, char *msg, size_t cap) {
  reqs q = {NULL, 0, 0};
  int st = LADLE_MPI_OK;
  /* receives first, then sends in rank order starting after this rank */
  for (int k = 1; k < h->size && st == LADLE_MPI_OK; k++) {
    int peer = (h->rank + h->size - k) % h->size;
    st = post_chunks(h, &q, 0, out, recv_displs[peer], recv_counts[peer], peer, what, msg, cap);
  }
  int nrecv = q.n;
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
  if (st == LADLE_MPI_OK) st = wait_all(h, q.n, nrecv, q.r, what, msg, cap);
  if (st == LADLE_MPI_OK) h->done++; /* every operation is one round */
  free(q.r);                         /* MPI keeps no pointer into it, pending requests included */
  return st;
}

/* --------------------------------------------------------------- helpers */

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
  h->chunk = SHIM_CHUNK_MAX;
  size_t test = test_chunk_bytes();
  if (test > 0 && test < h->chunk) h->chunk = test;
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
  int st = poll_all(h, 2, req, h->timeout_s, NULL, "init", msg, cap);
  if (st == LADLE_MPI_ETIMEOUT)
    st = fail(h, st, msg, cap,
              "MPI init (MPI_Comm_idup of MPI_COMM_WORLD, twice) did not complete within %g s: "
              "a rank died or did not create its engine",
              h->timeout_s);
  if (st != LADLE_MPI_OK) return st;
  call = "MPI_Comm_set_errhandler";
  if ((rc = MPI_Comm_set_errhandler(h->comm, MPI_ERRORS_RETURN)) == MPI_SUCCESS &&
      (rc = MPI_Comm_set_errhandler(h->ctl, MPI_ERRORS_RETURN)) == MPI_SUCCESS)
    call = "MPI_Irecv", rc = post_notice(h);
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
  size_t *sc = malloc((size_t)h->size * sizeof *sc);
  if (sc == NULL) return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  for (int r = 0; r < h->size; r++) sc[r] = counts[h->rank];
  int st = pairwise(h, in, sc, NULL, out, counts, displs, what, msg, cap);
  free(sc);
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
  return pairwise(h, in, send_counts, send_displs, out, recv_counts, recv_displs, what, msg, cap);
}

static int shim_bcast(ladle_mpi_handle *h, void *buf, size_t bytes, int root, char *msg,
                      size_t cap) {
  char what[160];
  snprintf(what, sizeof what, "bcast (%zu bytes from rank %d of %d)", bytes, root, h->size);
  int began = begin(h, what, msg, cap);
  if (began != LADLE_MPI_OK) return began;
  if (root < 0 || root >= h->size)
    return fail(h, LADLE_MPI_EINVAL, msg, cap, "MPI %s: no such root rank", what);
  /* the root sends to every rank; the others receive from it alone */
  size_t *v = calloc(3 * (size_t)h->size, sizeof *v);
  if (v == NULL) return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  size_t *sc = v, *rc = v + h->size, *at = v + 2 * (size_t)h->size; /* at: all 0 */
  for (int r = 0; r < h->size && h->rank == root; r++) sc[r] = r == root ? 0 : bytes;
  if (h->rank != root) rc[root] = bytes;
  int st = pairwise(h, buf, sc, at, buf, rc, at, what, msg, cap);
  free(v);
  return st;
}

/* The i-th of n values, every rank's n values back to back in all (bytes
 * each): op over the ranks in rank order into out's i-th. A signed sum wraps
 * as MPI's does, without undefined behaviour (added as unsigned). */
#define SHIM_FOLD(NAME, T, ADD)                                                                \
  static void NAME(const void *all, size_t bytes, size_t ranks, size_t i, int op, void *out) { \
    T acc, x;                                                                                  \
    memcpy(&acc, (const char *)all + i * 8, 8);                                                \
    for (size_t r = 1; r < ranks; r++) {                                                       \
      memcpy(&x, (const char *)all + r * bytes + i * 8, 8);                                    \
      acc = op == LADLE_MPI_SUM   ? ADD(acc, x)                                                \
            : op == LADLE_MPI_MIN ? (x < acc ? x : acc)                                        \
                                  : (x > acc ? x : acc);                                       \
    }                                                                                          \
    memcpy((char *)out + i * 8, &acc, 8);                                                      \
  }
#define SHIM_PLUS(a, b) ((a) + (b))
#define SHIM_WRAP_PLUS(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
SHIM_FOLD(fold_f64, double, SHIM_PLUS)
SHIM_FOLD(fold_u64, uint64_t, SHIM_PLUS)
SHIM_FOLD(fold_i64, int64_t, SHIM_WRAP_PLUS)
#undef SHIM_FOLD

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
  /* every rank's values gathered, then reduced here in rank order: the same
   * bits on every rank, floats included */
  size_t ranks = (size_t)h->size, bytes = n * 8;
  if (n > 0 && bytes / 8 != n)
    return fail(h, LADLE_MPI_EINVAL, msg, cap, "MPI %s: too many values", what);
  void *all = malloc(bytes * ranks > 0 ? bytes * ranks : 1);
  size_t *v = malloc(2 * ranks * sizeof *v);
  if (all == NULL || v == NULL) {
    free(all);
    free(v);
    return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  }
  for (size_t r = 0; r < ranks; r++) {
    v[r] = bytes;
    v[ranks + r] = r * bytes;
  }
  int st = pairwise(h, in, v, NULL, all, v, v + ranks, what, msg, cap);
  for (size_t i = 0; i < n && st == LADLE_MPI_OK; i++) {
    if (type == LADLE_MPI_F64)
      fold_f64(all, bytes, ranks, i, op, out);
    else if (type == LADLE_MPI_U64)
      fold_u64(all, bytes, ranks, i, op, out);
    else
      fold_i64(all, bytes, ranks, i, op, out);
  }
  free(all);
  free(v);
  return st;
}

static int shim_barrier(ladle_mpi_handle *h, char *msg, size_t cap) {
  char what[64];
  snprintf(what, sizeof what, "barrier (%d ranks)", h->size);
  int began = begin(h, what, msg, cap);
  if (began != LADLE_MPI_OK) return began;
  /* a byte to and from every other rank */
  size_t ranks = (size_t)h->size;
  size_t *v = calloc(3 * ranks, sizeof *v);
  char *got = malloc(ranks);
  if (v == NULL || got == NULL) {
    free(v);
    free(got);
    return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI %s: out of memory", what);
  }
  for (size_t r = 0; r < ranks; r++) {
    v[r] = r == (size_t)h->rank ? 0 : 1;
    v[2 * ranks + r] = r;
  }
  static const char one = 1;
  int st = pairwise(h, &one, v, NULL, got, v, v + 2 * ranks, what, msg, cap);
  free(v);
  free(got);
  return st;
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
  if (!atomic_load(&g_dead)) {
    MPI_Comm_free(&h->comm); /* sends let go still complete (or not) inside MPI */
    if (quiet) MPI_Comm_free(&h->ctl);
  }
  if (quiet) free(h); /* else the receive may still land in h->notice: leaked */
}

static int shim_notify(ladle_mpi_handle *h, const char *why, char *msg, size_t cap) {
  if (msg != NULL && cap > 0) msg[0] = '\0';
  if (why == NULL || *why == '\0') why = "(no reason given)";
  char mine[sizeof h->why];
  snprintf(mine, sizeof mine, "this rank gave up: %s", why);
  int told = h->broken != BROKEN_NO, fin = 1; /* a peer's notice, or this rank's: told */
  mark_broken(h, BROKEN_GAVE_UP, mine);       /* first: no operation starts from here on */
  if (told || atomic_load(&g_dead) || h->size < 2 || MPI_Finalized(&fin) != MPI_SUCCESS || fin)
    return LADLE_MPI_OK;
  char *text = malloc(LADLE_MPI_NOTICE_BYTES); /* kept while a send may read it */
  MPI_Request *r = malloc((size_t)(h->size - 1) * sizeof *r);
  if (text == NULL || r == NULL) {
    free(text);
    free(r);
    return fail(h, LADLE_MPI_ENOMEM, msg, cap, "MPI notify: out of memory");
  }
  /* the operations this rank completed, so that a rank still in one of them
   * waits for it to complete rather than give up (poll_notice) */
  int at = snprintf(text, LADLE_MPI_NOTICE_BYTES, "%u\n", h->done);
  snprintf(text + at, LADLE_MPI_NOTICE_BYTES - (size_t)at, "%s", why);
  size_t len = strlen(text);
  int st = LADLE_MPI_OK, n = 0;
  for (int k = 1; k < h->size; k++, n++) {
    int rc =
        MPI_Isend(text, (int)len + 1, MPI_BYTE, (h->rank + k) % h->size, tag_of(h), h->ctl, &r[n]);
    if (rc != MPI_SUCCESS) {
      st = mpi_fail(h, "MPI_Isend", rc, "notify", msg, cap);
      break;
    }
  }
  double bound = h->timeout_s < SHIM_NOTIFY_MAX_S ? h->timeout_s : SHIM_NOTIFY_MAX_S;
  int sent = n == 0 ? LADLE_MPI_OK : poll_all(h, n, r, bound, NULL, "notify", msg, cap);
  if (sent == LADLE_MPI_ETIMEOUT)
    fail(h, sent, msg, cap, "MPI notify: %d notices not delivered within %g s", n, bound);
  if (st == LADLE_MPI_OK) st = sent;
  if (sent == LADLE_MPI_OK) free(text);
  free(r); /* MPI keeps no pointer into it */
  return st;
}

static int shim_recover(ladle_mpi_handle *h, char *msg, size_t cap) {
  if (msg != NULL && cap > 0) msg[0] = '\0';
  if (atomic_load(&g_dead)) return refuse_broken(h, "recover", msg, cap);
  if (!h->broken) return LADLE_MPI_OK;
  /* the epoch's notice receive: one from this epoch arriving later is the
   * same failure told again (two ranks gave up at once), not a new one */
  if (!cancel_notice(h, NULL, 0))
    return fail(h, LADLE_MPI_EFAIL, msg, cap,
                "MPI recover: the notice receive of epoch %u could not be cancelled", h->epoch);
  h->epoch++;
  h->ops = h->done = 0;
  h->told = 0;
  int rc = post_notice(h);
  if (rc != MPI_SUCCESS) return mpi_fail(h, "MPI_Irecv", rc, "recover", msg, cap);
  h->broken = BROKEN_NO;
  h->why[0] = '\0';
  return LADLE_MPI_OK;
}

static const ladle_mpi_shim shim_table = {
    LADLE_MPI_SHIM_ABI, shim_init,    shim_allgatherv,  shim_alltoallv, shim_bcast,
    shim_allreduce,     shim_barrier, shim_free_handle, shim_notify,    shim_recover};

/* The one exported symbol: the table when abi is the one this library was
 * built with, else NULL. */
SHIM_API const ladle_mpi_shim *ladle_mpi_shim_get(int abi) {
  return abi == LADLE_MPI_SHIM_ABI ? &shim_table : NULL;
}
