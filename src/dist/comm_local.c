/* comm_local.c — an in-process communicator for tests: `size` ranks that are
 * threads of one process, meeting at one rendezvous (a mutex, a condition
 * variable on CLOCK_MONOTONIC and a generation counter). Each collective is
 * two barriers: every rank publishes its slot (op, pointers, counts) and waits
 * for all (bounded by the timeout); then every rank checks every slot the same
 * way (so all ranks agree on a mismatch), copies what it receives straight from
 * the other ranks' buffers, and waits for all again (unbounded: everyone is
 * past the first barrier and only copying) so no buffer is left or reused
 * while another rank still reads it.
 *
 * As with MPI, a rank that times out or sees a mismatch breaks its own
 * communicator for good; the shared state is freed by the last rank's
 * destroy.
 *
 * A rank that gives up (c->fail) records itself, its reason and its epoch
 * (the failures it recovered from) in the rendezvous (the first such rank of
 * an epoch only) and wakes every waiter. A rank waiting at the first barrier
 * then withdraws, as on a timeout, and fails with "rank R failed: <why>"; one
 * that arrives later fails at once. A failure counts for every rank whose
 * epoch is not past it; c->recover moves a rank to the next epoch, where the
 * failure no longer counts. No rank
 * has read another's buffers before the first barrier completes, and a
 * barrier a failing rank has not reached never completes, so nothing is read
 * from the buffers of a rank that has left. The second barrier ignores
 * failures: every rank in it is past the first, so each one still missing is
 * only copying, maybe from this rank's buffers, and must be waited for (a
 * failure recorded meanwhile fails the next collective instead).
 *
 * In and out buffers must not overlap except in place (allreduce in == out,
 * allgather(v) in == out at this rank's displacement). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "comm.h"

enum local_op { L_ALLGATHER = 1, L_ALLGATHERV, L_ALLTOALLV, L_BCAST, L_ALLREDUCE, L_BARRIER };
static const char *const local_op_names[] = {"?",     "allgather", "allgatherv", "alltoallv",
                                             "bcast", "allreduce", "barrier"};

/* What one rank brings to a collective. */
typedef struct local_slot {
  int op;                          /* enum local_op */
  const void *in;                  /* allgather(v), alltoallv, allreduce; bcast: the buffer */
  void *out;                       /* where this rank receives */
  size_t bytes;                    /* allgather, bcast: bytes; allreduce: elements */
  const size_t *counts, *displs;   /* allgatherv: everyone's; alltoallv: this rank's sends */
  const size_t *rcounts, *rdispls; /* alltoallv: this rank's receives */
  int root;                        /* bcast */
  int type, rop;                   /* allreduce */
} local_slot;

/* The rendezvous all the ranks share. */
typedef struct local_shared {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* waits on CLOCK_MONOTONIC */
  int size;
  int arrived;          /* ranks waiting at the current barrier */
  unsigned round_epoch; /* the epoch of the ranks waiting there (first barriers) */
  uint64_t gen;         /* completed barriers */
  int refs;             /* communicators not yet destroyed */
  local_slot *slots;    /* size of them, one per rank */
  int failed_rank;      /* the first rank that gave up (c->fail) in failed_epoch, -1: none */
  unsigned failed_epoch;
  char failed_why[256];
} local_shared;

typedef struct local_comm {
  local_shared *sh;
  double timeout_s;
  bool broken;    /* a failure: a rank gave up, a timeout, a mismatch */
  bool for_good;  /* a timeout or a mismatch: recover refuses */
  unsigned epoch; /* failures recovered from */
  char why[320];  /* what broke it */
} local_comm;

/* Whether a failure recorded counts for a rank in epoch *epoch (NULL: none
 * counts); under sh->mu. */
static bool failure_counts(const local_shared *sh, const unsigned *epoch) {
  return epoch != NULL && sh->failed_rank >= 0 && sh->failed_epoch >= *epoch;
}

/* Waits until every rank reaches the barrier. With a deadline, a rank that
 * waits past it withdraws and gets ETIMEDOUT (unless the barrier completed
 * meanwhile). With heed_epoch, a rank that finds a failure that counts in
 * that epoch, on arriving or while it waits, leaves (withdrawing) with
 * ECANCELED; and a barrier is of one epoch: a rank that arrives while ranks
 * of another epoch wait waits first for them to leave (they are of an epoch
 * that failed: a rank recovered from it), lest a rank that recovered and
 * went on complete a barrier with ranks that have not yet seen the failure
 * (ranks 1 and 2 in the barrier ending a query, rank 0 in the next query's
 * first collective). */
static int local_barrier(local_shared *sh, const struct timespec *deadline,
                         const unsigned *heed_epoch) {
  pthread_mutex_lock(&sh->mu);
  int rc = 0;
  while (heed_epoch != NULL && sh->arrived > 0 && sh->round_epoch != *heed_epoch && rc == 0 &&
         !failure_counts(sh, heed_epoch))
    rc = deadline != NULL ? pthread_cond_timedwait(&sh->cv, &sh->mu, deadline)
                          : pthread_cond_wait(&sh->cv, &sh->mu);
  if (failure_counts(sh, heed_epoch) || rc != 0) {
    pthread_mutex_unlock(&sh->mu);
    return rc != 0 ? ETIMEDOUT : ECANCELED;
  }
  if (heed_epoch != NULL && sh->arrived == 0) sh->round_epoch = *heed_epoch;
  uint64_t g = sh->gen;
  if (++sh->arrived == sh->size) {
    sh->arrived = 0;
    sh->gen++;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    return 0;
  }
  while (sh->gen == g) {
    if (failure_counts(sh, heed_epoch)) {
      sh->arrived--;
      pthread_cond_broadcast(&sh->cv); /* a rank of a later epoch may wait for this one */
      pthread_mutex_unlock(&sh->mu);
      return ECANCELED;
    }
    rc = deadline != NULL ? pthread_cond_timedwait(&sh->cv, &sh->mu, deadline)
                          : pthread_cond_wait(&sh->cv, &sh->mu);
    if (rc == ETIMEDOUT && sh->gen == g) {
      sh->arrived--;
      pthread_cond_broadcast(&sh->cv);
      pthread_mutex_unlock(&sh->mu);
      return ETIMEDOUT;
    }
  }
  pthread_mutex_unlock(&sh->mu);
  return 0;
}

/* "allgatherv (sending 5 bytes, ...)" for slot s of rank c into buf. */
static void describe(const ladle_comm *c, const local_slot *s, char *buf, size_t cap) {
  size_t a = 0, b = 0;
  switch (s->op) {
    case L_ALLGATHER:
      snprintf(buf, cap, "allgather (%zu bytes from each of %d ranks)", s->bytes, c->size);
      return;
    case L_ALLGATHERV:
      for (int r = 0; r < c->size; r++) a += s->counts[r];
      snprintf(buf, cap, "allgatherv (sending %zu bytes, receiving %zu from %d ranks)",
               s->counts[c->rank], a, c->size);
      return;
    case L_ALLTOALLV:
      for (int r = 0; r < c->size; r++) a += s->counts[r], b += s->rcounts[r];
      snprintf(buf, cap, "alltoallv (sending %zu bytes, receiving %zu over %d ranks)", a, b,
               c->size);
      return;
    case L_BCAST:
      snprintf(buf, cap, "bcast (%zu bytes from rank %d of %d)", s->bytes, s->root, c->size);
      return;
    case L_ALLREDUCE:
      snprintf(buf, cap, "allreduce (%zu values of type %d, operation %d, over %d ranks)", s->bytes,
               s->type, s->rop, c->size);
      return;
    default:
      snprintf(buf, cap, "barrier (%d ranks)", c->size);
  }
}

/* Checks that the ranks' slots describe one collective with matching sizes;
 * a description of the first mismatch into why (every rank finds the same). */
static bool slots_agree(const local_shared *sh, char *why, size_t cap) {
  const local_slot *s = sh->slots, *s0 = &sh->slots[0];
  int n = sh->size;
  for (int r = 1; r < n; r++) {
    if (s[r].op != s0->op) {
      snprintf(why, cap, "rank 0 called %s while rank %d called %s", local_op_names[s0->op], r,
               local_op_names[s[r].op]);
      return false;
    }
    bool same = true;
    switch (s0->op) {
      case L_ALLGATHER:
        same = s[r].bytes == s0->bytes;
        break;
      case L_BCAST:
        same = s[r].bytes == s0->bytes && s[r].root == s0->root;
        break;
      case L_ALLREDUCE:
        same = s[r].bytes == s0->bytes && s[r].type == s0->type && s[r].rop == s0->rop;
        break;
      default:
        break;
    }
    if (!same) {
      snprintf(why, cap, "rank 0 and rank %d disagree on the %s's size, root, type or operation", r,
               local_op_names[s0->op]);
      return false;
    }
  }
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      if (s0->op == L_ALLGATHERV && s[a].counts[b] != s[b].counts[b]) {
        snprintf(why, cap, "allgatherv: rank %d expects %zu bytes from rank %d, which sends %zu", a,
                 s[a].counts[b], b, s[b].counts[b]);
        return false;
      }
      if (s0->op == L_ALLTOALLV && s[a].counts[b] != s[b].rcounts[a]) {
        snprintf(why, cap, "alltoallv: rank %d sends %zu bytes to rank %d, which expects %zu", a,
                 s[a].counts[b], b, s[b].rcounts[a]);
        return false;
      }
    }
  if (s0->op == L_BCAST && (s0->root < 0 || s0->root >= n)) {
    snprintf(why, cap, "bcast from rank %d in a job of %d ranks", s0->root, n);
    return false;
  }
  if (s0->op == L_ALLREDUCE && (s0->type < 0 || s0->type >= LADLE_COMM_TYPE_COUNT_ || s0->rop < 0 ||
                                s0->rop >= LADLE_COMM_OP_COUNT_)) {
    snprintf(why, cap, "allreduce: unknown type %d or operation %d", s0->type, s0->rop);
    return false;
  }
  return true;
}

#define LOCAL_REDUCE(T, ADD)                                              \
  do {                                                                    \
    T *o = tmp;                                                           \
    memcpy(o, s[0].in, n * 8);                                            \
    for (int r = 1; r < sh->size; r++) {                                  \
      const T *x = s[r].in;                                               \
      for (size_t i = 0; i < n; i++)                                      \
        o[i] = me->rop == LADLE_COMM_SUM   ? ADD(o[i], x[i])              \
               : me->rop == LADLE_COMM_MIN ? (x[i] < o[i] ? x[i] : o[i])  \
                                           : (x[i] > o[i] ? x[i] : o[i]); \
    }                                                                     \
  } while (0)
#define LOCAL_ADD(a, b) ((a) + (b))
#define LOCAL_ADD_WRAP(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b))) /* as MPI: wraps */

/* This rank's part of the collective once every slot is in: copies (or
 * reduces into tmp) what it receives from the others' buffers. */
static void local_move(const ladle_comm *c, const local_shared *sh, void *tmp) {
  const local_slot *s = sh->slots, *me = &sh->slots[c->rank];
  switch (me->op) {
    case L_ALLGATHER:
      for (int r = 0; r < sh->size && me->bytes > 0; r++) {
        char *dst = (char *)me->out + (size_t)r * me->bytes;
        if (dst != s[r].in) memcpy(dst, s[r].in, me->bytes);
      }
      break;
    case L_ALLGATHERV:
      for (int r = 0; r < sh->size; r++) {
        if (me->counts[r] == 0) continue;
        char *dst = (char *)me->out + me->displs[r];
        if (dst != s[r].in) memcpy(dst, s[r].in, me->counts[r]);
      }
      break;
    case L_ALLTOALLV:
      for (int r = 0; r < sh->size; r++)
        if (me->rcounts[r] > 0)
          memcpy((char *)me->out + me->rdispls[r], (const char *)s[r].in + s[r].displs[c->rank],
                 me->rcounts[r]);
      break;
    case L_BCAST:
      if (c->rank != me->root && me->bytes > 0) memcpy(me->out, s[me->root].in, me->bytes);
      break;
    case L_ALLREDUCE: {
      size_t n = me->bytes;
      if (n == 0) break;
      if (me->type == LADLE_COMM_I64)
        LOCAL_REDUCE(int64_t, LOCAL_ADD_WRAP);
      else if (me->type == LADLE_COMM_U64)
        LOCAL_REDUCE(uint64_t, LOCAL_ADD);
      else
        LOCAL_REDUCE(double, LOCAL_ADD);
      break;
    }
    default:
      break;
  }
}

/* Runs one collective for rank c: publish, meet, check, move, meet. */
static ladle_status local_run(ladle_comm *c, const local_slot *slot, ladle_error *err) {
  local_comm *lc = c->impl;
  local_shared *sh = lc->sh;
  char what[160];
  describe(c, slot, what, sizeof what);
  if (lc->broken)
    return ladle_err_set(err, LADLE_ECOMM,
                         "rank %d of %d: local %s refused: the communicator broke earlier (%s)",
                         c->rank, c->size, what, lc->why);
  void *tmp = NULL;
  if (slot->op == L_ALLREDUCE && slot->bytes > 0) {
    tmp = malloc(slot->bytes * 8);
    if (tmp == NULL) return LADLE_OOM(err, "local allreduce's result");
  }
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  double whole = (double)(time_t)lc->timeout_s;
  deadline.tv_sec += (time_t)whole;
  deadline.tv_nsec += (long)((lc->timeout_s - whole) * 1e9);
  if (deadline.tv_nsec >= 1000000000L) deadline.tv_sec++, deadline.tv_nsec -= 1000000000L;

  sh->slots[c->rank] = *slot; /* no rank reads it before the first barrier completes */
  int met = local_barrier(sh, &deadline, &lc->epoch);
  if (met == ECANCELED) {
    free(tmp);
    lc->broken = true;
    pthread_mutex_lock(&sh->mu);
    snprintf(lc->why, sizeof lc->why, "rank %d failed: %s", sh->failed_rank, sh->failed_why);
    pthread_mutex_unlock(&sh->mu);
    return ladle_err_set(err, LADLE_ECOMM, "rank %d of %d: local %s abandoned: %s", c->rank,
                         c->size, what, lc->why);
  }
  if (met != 0) {
    free(tmp);
    lc->broken = lc->for_good = true;
    snprintf(lc->why, sizeof lc->why, "local %s timed out", what);
    return ladle_err_set(err, LADLE_ECOMM,
                         "rank %d of %d: local %s did not complete within %g s: a rank died or "
                         "the ranks ran different queries",
                         c->rank, c->size, what, lc->timeout_s);
  }
  char why[200];
  bool ok = slots_agree(sh, why, sizeof why);
  if (ok) local_move(c, sh, tmp);
  local_barrier(sh, NULL, NULL);
  if (!ok) {
    free(tmp);
    lc->broken = lc->for_good = true;
    snprintf(lc->why, sizeof lc->why, "%s", why);
    return ladle_err_set(err, LADLE_ECOMM, "rank %d of %d: local %s: the ranks disagree: %s",
                         c->rank, c->size, what, why);
  }
  if (tmp != NULL) memcpy(slot->out, tmp, slot->bytes * 8);
  free(tmp);
  return LADLE_OK;
}

/* LADLE_OK for host buffers; a device place is refused, naming op. */
static ladle_status local_host_only(const ladle_comm *c, const char *op, ladle_comm_place where,
                                    ladle_error *err) {
  if (where.device == LADLE_DEVICE_CPU || where.device == 0) return LADLE_OK;
  return ladle_err_set(err, LADLE_ENOTSUP,
                       "rank %d of %d: local %s: buffers on device type %d (id %d) are not "
                       "supported, the local communicator takes host buffers only",
                       c->rank, c->size, op, (int)where.device, where.device_id);
}

static ladle_status local_allgather(ladle_comm *c, const void *in, size_t bytes, void *out,
                                    ladle_comm_place where, ladle_error *err) {
  LADLE_RETURN_NOT_OK(local_host_only(c, "allgather", where, err));
  local_slot s = {.op = L_ALLGATHER, .in = in, .out = out, .bytes = bytes};
  return local_run(c, &s, err);
}

static ladle_status local_allgatherv(ladle_comm *c, const void *in, const size_t *counts,
                                     const size_t *displs, void *out, ladle_comm_place where,
                                     ladle_error *err) {
  LADLE_RETURN_NOT_OK(local_host_only(c, "allgatherv", where, err));
  local_slot s = {.op = L_ALLGATHERV, .in = in, .out = out, .counts = counts, .displs = displs};
  return local_run(c, &s, err);
}

static ladle_status local_alltoallv(ladle_comm *c, const void *in, const size_t *send_counts,
                                    const size_t *send_displs, void *out, const size_t *recv_counts,
                                    const size_t *recv_displs, ladle_comm_place where,
                                    ladle_error *err) {
  LADLE_RETURN_NOT_OK(local_host_only(c, "alltoallv", where, err));
  local_slot s = {.op = L_ALLTOALLV,
                  .in = in,
                  .out = out,
                  .counts = send_counts,
                  .displs = send_displs,
                  .rcounts = recv_counts,
                  .rdispls = recv_displs};
  return local_run(c, &s, err);
}

static ladle_status local_bcast(ladle_comm *c, void *buf, size_t bytes, int root,
                                ladle_comm_place where, ladle_error *err) {
  LADLE_RETURN_NOT_OK(local_host_only(c, "bcast", where, err));
  local_slot s = {.op = L_BCAST, .in = buf, .out = buf, .bytes = bytes, .root = root};
  return local_run(c, &s, err);
}

static ladle_status local_allreduce(ladle_comm *c, const void *in, void *out, size_t n,
                                    ladle_comm_type type, ladle_comm_op op, ladle_comm_place where,
                                    ladle_error *err) {
  LADLE_RETURN_NOT_OK(local_host_only(c, "allreduce", where, err));
  local_slot s = {
      .op = L_ALLREDUCE, .in = in, .out = out, .bytes = n, .type = (int)type, .rop = (int)op};
  return local_run(c, &s, err);
}

static ladle_status local_barrier_op(ladle_comm *c, ladle_error *err) {
  local_slot s = {.op = L_BARRIER};
  return local_run(c, &s, err);
}

/* c->fail: records this rank as the one that gave up (unless one did
 * already in this epoch or a later one) and wakes every waiter; breaks this
 * rank's communicator until recover. */
static void local_fail(ladle_comm *c, const char *why) {
  local_comm *lc = c->impl;
  local_shared *sh = lc->sh;
  if (why == NULL || *why == '\0') why = "(no reason given)";
  pthread_mutex_lock(&sh->mu);
  if (sh->failed_rank < 0 || sh->failed_epoch < lc->epoch) {
    sh->failed_rank = c->rank;
    sh->failed_epoch = lc->epoch;
    snprintf(sh->failed_why, sizeof sh->failed_why, "%s", why);
  }
  pthread_cond_broadcast(&sh->cv);
  pthread_mutex_unlock(&sh->mu);
  if (!lc->broken) {
    lc->broken = true;
    snprintf(lc->why, sizeof lc->why, "this rank gave up: %s", why);
  }
}

/* c->recover: the next epoch, where the failure that broke this rank no
 * longer counts (refused after a timeout or a mismatch). */
static ladle_status local_recover(ladle_comm *c, ladle_error *err) {
  local_comm *lc = c->impl;
  if (!lc->broken) return LADLE_OK;
  if (lc->for_good)
    return ladle_err_set(err, LADLE_ECOMM,
                         "rank %d of %d: local communicator: cannot go on after %s", c->rank,
                         c->size, lc->why);
  lc->epoch++;
  lc->broken = false;
  lc->why[0] = '\0';
  return LADLE_OK;
}

/* Frees this rank's communicator; the last one frees the rendezvous. */
static void local_destroy(ladle_comm *c) {
  local_comm *lc = c->impl;
  local_shared *sh = lc->sh;
  pthread_mutex_lock(&sh->mu);
  bool last = --sh->refs == 0;
  pthread_mutex_unlock(&sh->mu);
  if (last) {
    pthread_mutex_destroy(&sh->mu);
    pthread_cond_destroy(&sh->cv);
    free(sh->slots);
    free(sh);
  }
  free(lc);
  free(c);
}

static const ladle_comm_vtable local_vt = {"local",          local_allgather, local_allgatherv,
                                           local_alltoallv,  local_bcast,     local_allreduce,
                                           local_barrier_op, local_destroy};

ladle_status ladle_comm_local_create(int size, double timeout_s, ladle_comm **out,
                                     ladle_error *err) {
  if (size < 1)
    return ladle_err_set(err, LADLE_EINVAL, "local communicator of %d ranks: needs one or more",
                         size);
  if (!(timeout_s >= 0))
    return ladle_err_set(err, LADLE_EINVAL, "local communicator: timeout %g s is negative",
                         timeout_s);
  local_shared *sh = calloc(1, sizeof *sh);
  if (sh == NULL) return LADLE_OOM(err, "local communicator");
  sh->slots = calloc((size_t)size, sizeof *sh->slots);
  pthread_condattr_t ca;
  bool cv_ok = false;
  if (pthread_condattr_init(&ca) == 0) {
    cv_ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
            pthread_cond_init(&sh->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
  }
  if (sh->slots == NULL || !cv_ok || pthread_mutex_init(&sh->mu, NULL) != 0) {
    if (cv_ok) pthread_cond_destroy(&sh->cv);
    free(sh->slots);
    free(sh);
    return LADLE_OOM(err, "local communicator's rendezvous");
  }
  sh->size = size;
  sh->failed_rank = -1;
  for (int r = 0; r < size; r++) {
    ladle_comm *c = calloc(1, sizeof *c);
    local_comm *lc = calloc(1, sizeof *lc);
    if (c == NULL || lc == NULL) {
      free(c);
      free(lc);
      if (r == 0) { /* nothing refers to the rendezvous yet */
        pthread_mutex_destroy(&sh->mu);
        pthread_cond_destroy(&sh->cv);
        free(sh->slots);
        free(sh);
      }
      for (int k = 0; k < r; k++) ladle_comm_destroy(out[k]); /* the last frees sh */
      return LADLE_OOM(err, "local communicator");
    }
    lc->sh = sh;
    lc->timeout_s = timeout_s > 0 ? timeout_s : 600;
    c->vt = &local_vt;
    c->rank = r;
    c->size = size;
    c->impl = lc;
    c->fail = local_fail;
    c->recover = local_recover;
    sh->refs++;
    out[r] = c;
  }
  return LADLE_OK;
}
