/* test_dist.c — the communicator table: the one-rank implementation (every
 * collective a copy into the output, the counts checked, device buffers only
 * through the copy a backend supplies); the in-process one of three threads
 * through every collective of comm_checks.h, a rank that skips a collective
 * (the others time out naming it, then refuse everything), a rank that
 * gives up (the others fail at once naming it and its reason) and ranks that
 * disagree; the MPI one's refusal when its library is missing (real ranks:
 * mpi_comm_check.c under mpirun); and the callbacks one forwarding to the
 * others (every check again) and broken by a failing callback; rows moved by
 * a permutation (ladle_dist_move_rows) arriving as the same rows gathered
 * first and moved as ranges. */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>

#include "comm_checks.h"
#include "dist/comm.h"
#include "dist/exchange.h"
#include "harness.h"

static const ladle_comm_place HOST = {LADLE_DEVICE_CPU, 0, NULL};

TEST(self_collectives_are_copies) {
  ladle_comm *c;
  CHECK_OK(ladle_comm_self_create(NULL, &c, &err_));
  CHECK_EQ_I(c->rank, 0);
  CHECK_EQ_I(c->size, 1);
  int64_t in[4] = {5, -7, 9, 11}, out[4] = {0};
  CHECK_OK(c->vt->allgather(c, in, sizeof in, out, HOST, &err_));
  CHECK(memcmp(in, out, sizeof in) == 0);
  char buf[16] = "abcdefgh", got[16] = {0};
  size_t cnt = 5, disp = 3;
  CHECK_OK(c->vt->allgatherv(c, buf, &cnt, &disp, got, HOST, &err_));
  CHECK(memcmp(got + 3, "abcde", 5) == 0 && got[2] == 0 && got[8] == 0);
  size_t sc = 4, sd = 2, rc = 4, rd = 1;
  memset(got, 0, sizeof got);
  CHECK_OK(c->vt->alltoallv(c, buf, &sc, &sd, got, &rc, &rd, HOST, &err_));
  CHECK(memcmp(got + 1, "cdef", 4) == 0 && got[0] == 0 && got[5] == 0);
  /* the counts of one rank's send and receive must agree */
  rc = 3;
  CHECK(c->vt->alltoallv(c, buf, &sc, &sd, got, &rc, &rd, HOST, &err_) == LADLE_EINVAL);
  CHECK(strstr(err_.message, "4 bytes sent to itself, 3 expected") != NULL);
  CHECK_OK(c->vt->bcast(c, buf, 8, 0, HOST, &err_));
  CHECK(c->vt->bcast(c, buf, 8, 1, HOST, &err_) == LADLE_EINVAL);
  CHECK(strstr(err_.message, "rank 1") != NULL);
  double d[3] = {1.5, -2, 3}, dout[3];
  CHECK_OK(c->vt->allreduce(c, d, dout, 3, LADLE_COMM_F64, LADLE_COMM_SUM, HOST, &err_));
  CHECK(dout[0] == 1.5 && dout[1] == -2 && dout[2] == 3);
  CHECK_OK(c->vt->allreduce(c, in, in, 4, LADLE_COMM_I64, LADLE_COMM_MAX, HOST, &err_));
  CHECK(in[1] == -7);
  CHECK(c->vt->allreduce(c, in, out, 4, (ladle_comm_type)99, LADLE_COMM_SUM, HOST, &err_) ==
        LADLE_EINVAL);
  CHECK_OK(c->vt->barrier(c, &err_));
  /* device buffers without a device copy: refused by name */
  ladle_comm_place dev = {LADLE_DEVICE_CUDA, 0, NULL};
  CHECK(c->vt->allgather(c, in, 8, out, dev, &err_) == LADLE_ENOTSUP);
  CHECK(strstr(err_.message, "device") != NULL);
  CHECK(c->fail == NULL); /* one rank: nobody to tell */
  ladle_comm_destroy(c);
}

static int copies_;
static ladle_status fake_device_copy(void *dst, const void *src, size_t bytes,
                                     ladle_comm_place where, ladle_error *err) {
  LADLE_UNUSED(err);
  copies_ += where.device == LADLE_DEVICE_CUDA;
  memcpy(dst, src, bytes);
  return LADLE_OK;
}

TEST(self_moves_device_buffers_through_the_backend_copy) {
  ladle_comm *c;
  CHECK_OK(ladle_comm_self_create(fake_device_copy, &c, &err_));
  ladle_comm_place dev = {LADLE_DEVICE_CUDA, 0, NULL};
  int64_t in[2] = {1, 2}, out[2] = {0};
  CHECK_OK(c->vt->allgather(c, in, sizeof in, out, dev, &err_));
  CHECK(out[0] == 1 && out[1] == 2);
  CHECK_EQ_I(copies_, 1);
  ladle_comm_destroy(c);
}

TEST(public_self_communicator) {
  ladle_comm *c = NULL;
  CHECK_OK(ladle_comm_create_self(&c, &err_));
  CHECK_EQ_I(ladle_comm_rank(c), 0);
  CHECK_EQ_I(ladle_comm_size(c), 1);
  CHECK(strcmp(ladle_comm_name(c), "self") == 0);
  ladle_comm_destroy(c);
  /* NULL is the job of one rank an engine without a communicator runs in */
  CHECK_EQ_I(ladle_comm_size(NULL), 1);
  ladle_comm_destroy(NULL);
}

/* ------------------------------------------------------ the local communicator */

#define LOCAL_RANKS 3

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One rank's thread: what it runs and what it found. */
typedef struct rank_job {
  cc_ctx x;
  void (*fn)(struct rank_job *j);
  ladle_status st, later; /* what the timed or disagreeing collective and the next one returned */
  double took;            /* seconds the timed collective took */
  char msg[LADLE_ERROR_MESSAGE_MAX], later_msg[LADLE_ERROR_MESSAGE_MAX];
} rank_job;

static void *rank_main(void *arg) {
  rank_job *j = arg;
  j->fn(j);
  return NULL;
}

/* Runs fn on each of LOCAL_RANKS threads, rank r on comms[r], and adds up
 * their failures. */
static void run_ranks(ladle_comm **comms, void (*fn)(rank_job *), rank_job *jobs) {
  pthread_t t[LOCAL_RANKS];
  for (int r = 0; r < LOCAL_RANKS; r++) {
    memset(&jobs[r], 0, sizeof jobs[r]);
    jobs[r].x.c = comms[r];
    jobs[r].fn = fn;
    CHECK(pthread_create(&t[r], NULL, rank_main, &jobs[r]) == 0);
  }
  for (int r = 0; r < LOCAL_RANKS; r++) {
    pthread_join(t[r], NULL);
    failures_ += jobs[r].x.fails;
  }
}

static void all_checks(rank_job *j) { cc_all(&j->x, 1000); }

TEST(local_collectives_across_three_threads) {
  ladle_comm *c[LOCAL_RANKS];
  CHECK_OK(ladle_comm_local_create(LOCAL_RANKS, 30, c, &err_));
  for (int r = 0; r < LOCAL_RANKS; r++) {
    CHECK_EQ_I(ladle_comm_rank(c[r]), r);
    CHECK_EQ_I(ladle_comm_size(c[r]), LOCAL_RANKS);
  }
  CHECK(strcmp(ladle_comm_name(c[0]), "local") == 0);
  rank_job jobs[LOCAL_RANKS];
  run_ranks(c, all_checks, jobs);
  run_ranks(c, all_checks, jobs); /* the rendezvous is reusable */
  for (int r = 0; r < LOCAL_RANKS; r++) ladle_comm_destroy(c[r]);
}

/* Rank r's columns for the permutation move: Int64 with nulls, String with
 * nulls and empty strings, Int8 without validity, Boolean; rows 0..n. */
static void perm_columns(int r, int64_t n, ladle_column *cols) {
  ladle_error e;
  CHECK_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT64), n, true, 0, &cols[0], &e));
  int64_t chars = 0;
  for (int64_t i = 0; i < n; i++) chars += (i * 7 + r) % 13;
  CHECK_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_STRING), n, true, chars, &cols[1], &e));
  CHECK_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT8), n, false, 0, &cols[2], &e));
  CHECK_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n, false, 0, &cols[3], &e));
  int64_t *of = LADLE_COL_MUT(&cols[1], int64_t), at = 0;
  for (int64_t i = 0; i < n; i++) {
    LADLE_COL_MUT(&cols[0], int64_t)[i] = i * 1000 + r;
    ladle_bit_set(LADLE_COL_VALIDITY_MUT(&cols[0]), i, i % 5 != 0);
    int64_t len = (i * 7 + r) % 13;
    of[i] = at;
    for (int64_t b = 0; b < len; b++)
      LADLE_COL_CHARS_MUT(&cols[1])[at + b] = (char)('a' + (i + b) % 26);
    at += len;
    ladle_bit_set(LADLE_COL_VALIDITY_MUT(&cols[1]), i, i % 3 != 1);
    LADLE_COL_MUT(&cols[2], int8_t)[i] = (int8_t)(i - 40);
    LADLE_COL_MUT(&cols[3], uint8_t)[i] = (uint8_t)(i % 2);
  }
  of[n] = at;
  cols[0].null_count = ladle_bitmap_count_unset(cols[0].validity, n);
  cols[1].null_count = ladle_bitmap_count_unset(cols[1].validity, n);
}

/* Whether two columns hold the same rows (values of null rows ignored). */
static bool same_rows(const ladle_column *a, const ladle_column *b) {
  if (a->length != b->length || a->null_count != b->null_count) return false;
  size_t w = ladle_type_width(a->type.id);
  for (int64_t i = 0; i < a->length; i++) {
    bool va = ladle_column_valid(a, i), vb = ladle_column_valid(b, i);
    if (va != vb) return false;
    if (!va) continue;
    if (ladle_type_is_varlen(a->type.id)) {
      const int64_t *oa = a->values, *ob = b->values;
      int64_t la = oa[i + 1] - oa[i], lb = ob[i + 1] - ob[i];
      if (la != lb || memcmp(a->chars + oa[i], b->chars + ob[i], (size_t)la) != 0) return false;
    } else if (memcmp((const uint8_t *)a->values + (size_t)i * w,
                      (const uint8_t *)b->values + (size_t)i * w, w) != 0) {
      return false;
    }
  }
  return true;
}

enum { PERM_COLS = 4 };

static void perm_move(rank_job *j) {
  ladle_comm *c = j->x.c;
  int r = c->rank, n = c->size;
  int64_t rows = 1000 + 333 * r - (r == 1 ? 1333 : 0); /* rank 1 sends nothing */
  ladle_column cols[PERM_COLS], g[PERM_COLS], a[PERM_COLS], b[PERM_COLS];
  perm_columns(r, rows, cols);
  /* destination of row i: (i * 5 + r) % n, rank 2 sending none to rank 0 */
  int64_t counts[LOCAL_RANKS] = {0}, *perm = malloc((size_t)LADLE_MAX(rows, 1) * sizeof *perm);
  int64_t *start = calloc((size_t)n, sizeof *start), *fill = calloc((size_t)n, sizeof *fill);
  for (int64_t i = 0; i < rows; i++) {
    int d = (int)((i * 5 + r) % n);
    if (r == 2 && d == 0) d = 1;
    counts[d]++;
  }
  for (int q = 1; q < n; q++) start[q] = start[q - 1] + counts[q - 1];
  for (int64_t i = rows - 1; i >= 0; i--) { /* the rows of each destination, last first */
    int d = (int)((i * 5 + r) % n);
    if (r == 2 && d == 0) d = 1;
    perm[start[d] + fill[d]++] = i;
  }
  int64_t got_a = -1, got_b = -1;
  ladle_error e;
  ladle_status sa =
      ladle_dist_move_rows(c, cols, PERM_COLS, rows, perm, counts, NULL, a, &got_a, &e);
  if (sa != LADLE_OK) fprintf(stderr, "move_rows: %s\n", e.message);
  CHECK_OK(sa);
  for (int i = 0; i < PERM_COLS; i++) { /* the same rows gathered, moved as ranges */
    ladle_column_alloc(
        cols[i].type, rows, cols[i].validity != NULL,
        ladle_type_is_varlen(cols[i].type.id) ? ((const int64_t *)cols[i].values)[rows] : 0, &g[i],
        &e);
    int64_t at = 0;
    for (int64_t k = 0; k < rows; k++) {
      int64_t s = perm[k];
      if (cols[i].validity != NULL)
        ladle_bit_set(LADLE_COL_VALIDITY_MUT(&g[i]), k, ladle_bit_get(cols[i].validity, s));
      if (ladle_type_is_varlen(cols[i].type.id)) {
        const int64_t *of = cols[i].values;
        LADLE_COL_MUT(&g[i], int64_t)[k] = at;
        memcpy(LADLE_COL_CHARS_MUT(&g[i]) + at, cols[i].chars + of[s], (size_t)(of[s + 1] - of[s]));
        at += of[s + 1] - of[s];
      } else {
        size_t w = ladle_type_width(cols[i].type.id);
        memcpy((uint8_t *)g[i].values + (size_t)k * w,
               (const uint8_t *)cols[i].values + (size_t)s * w, w);
      }
    }
    if (ladle_type_is_varlen(cols[i].type.id)) LADLE_COL_MUT(&g[i], int64_t)[rows] = at;
    g[i].null_count = g[i].validity != NULL ? ladle_bitmap_count_unset(g[i].validity, rows) : 0;
  }
  CHECK_OK(ladle_dist_move_columns(c, g, PERM_COLS, rows, start, counts, b, &got_b, &e));
  CHECK_EQ_I(got_a, got_b);
  for (int i = 0; i < PERM_COLS; i++) {
    if (!same_rows(&a[i], &b[i])) {
      fprintf(stderr, "rank %d column %d differs\n", r, i);
      j->x.fails++;
    }
    ladle_column_release(&a[i]);
    ladle_column_release(&b[i]);
    ladle_column_release(&g[i]);
    ladle_column_release(&cols[i]);
  }
  /* a permutation whose parts do not cover its rows is refused */
  counts[0] += 1;
  ladle_status bad = ladle_dist_move_rows(c, cols, 0, rows, perm, counts, NULL, a, &got_a, &e);
  if (bad != LADLE_EINVAL) j->x.fails++;
  free(perm);
  free(start);
  free(fill);
}

TEST(local_move_by_permutation_equals_gathered_ranges) {
  ladle_comm *c[LOCAL_RANKS];
  CHECK_OK(ladle_comm_local_create(LOCAL_RANKS, 30, c, &err_));
  rank_job jobs[LOCAL_RANKS];
  run_ranks(c, perm_move, jobs);
  for (int r = 0; r < LOCAL_RANKS; r++) ladle_comm_destroy(c[r]);
}

TEST(local_communicator_of_one_rank_and_bad_sizes) {
  ladle_comm *c[1];
  CHECK_OK(ladle_comm_local_create(1, 0, c, &err_));
  cc_ctx x = {c[0], {0}, 0};
  cc_all(&x, 100);
  failures_ += x.fails;
  ladle_comm_destroy(c[0]);
  CHECK(ladle_comm_local_create(0, 1, c, &err_) == LADLE_EINVAL);
  CHECK(strstr(err_.message, "0 ranks") != NULL);
  CHECK(ladle_comm_local_create(2, -1, c, &err_) == LADLE_EINVAL);
}

/* Rank 1 skips the allgather the others wait in. */
static void skip_on_rank_1(rank_job *j) {
  ladle_comm *c = j->x.c;
  if (c->rank == 1) return;
  int64_t v = c->rank, out[LOCAL_RANKS];
  double t0 = now_s();
  j->st = c->vt->allgather(c, &v, 8, out, CC_HOST, &j->x.err);
  j->took = now_s() - t0;
  snprintf(j->msg, sizeof j->msg, "%s", j->x.err.message);
  t0 = now_s();
  j->later = c->vt->barrier(c, &j->x.err);
  snprintf(j->later_msg, sizeof j->later_msg, "%s", j->x.err.message);
  j->took += (now_s() - t0) * 1000; /* the refusal must not wait: > 1000 s if it did */
}

TEST(local_timeout_when_a_rank_skips_a_collective) {
  ladle_comm *c[LOCAL_RANKS];
  CHECK_OK(ladle_comm_local_create(LOCAL_RANKS, 0.5, c, &err_));
  rank_job jobs[LOCAL_RANKS];
  run_ranks(c, skip_on_rank_1, jobs);
  for (int r = 0; r < LOCAL_RANKS; r += 2) {
    CHECK_EQ_I(jobs[r].st, LADLE_ECOMM);
    CHECK(jobs[r].took >= 0.45 && jobs[r].took < 3);
    CHECK(strstr(jobs[r].msg,
                 "allgather (8 bytes from each of 3 ranks) did not complete within "
                 "0.5 s") != NULL);
    char want[32];
    snprintf(want, sizeof want, "rank %d of 3", r);
    CHECK(strstr(jobs[r].msg, want) != NULL);
    CHECK_EQ_I(jobs[r].later, LADLE_ECOMM);
    CHECK(strstr(jobs[r].later_msg, "barrier") != NULL);
    CHECK(strstr(jobs[r].later_msg, "broke earlier") != NULL);
  }
  /* the rank that skipped waits alone now, and times out too */
  double t0 = now_s();
  CHECK(c[1]->vt->barrier(c[1], &err_) == LADLE_ECOMM);
  CHECK(now_s() - t0 >= 0.45);
  CHECK(strstr(err_.message, "rank 1 of 3: local barrier (3 ranks) did not complete") != NULL);
  for (int r = 0; r < LOCAL_RANKS; r++) ladle_comm_destroy(c[r]);
}

/* Rank 1 gives up instead of joining the alltoallv the others wait in (it
 * lets them start waiting first); then every rank tries a barrier. */
static void give_up_on_rank_1(rank_job *j) {
  ladle_comm *c = j->x.c;
  size_t counts[LOCAL_RANKS] = {8, 8, 8}, displs[LOCAL_RANKS] = {0, 8, 16};
  int64_t in[LOCAL_RANKS] = {c->rank, c->rank, c->rank}, out[LOCAL_RANKS];
  double t0 = now_s();
  if (c->rank == 1) {
    struct timespec pause = {0, 200000000};
    nanosleep(&pause, NULL);
    t0 = now_s();
    c->fail(c, "boom");
    j->st = LADLE_OK;
  } else {
    j->st = c->vt->alltoallv(c, in, counts, displs, out, counts, displs, CC_HOST, &j->x.err);
    snprintf(j->msg, sizeof j->msg, "%s", j->x.err.message);
  }
  j->took = now_s() - t0;
  t0 = now_s();
  j->later = c->vt->barrier(c, &j->x.err);
  snprintf(j->later_msg, sizeof j->later_msg, "%s", j->x.err.message);
  j->took += (now_s() - t0) * 1000; /* the refusal must not wait: > 1000 s if it did */
}

TEST(local_rank_that_gives_up_fails_the_others_at_once) {
  ladle_comm *c[LOCAL_RANKS];
  CHECK_OK(ladle_comm_local_create(LOCAL_RANKS, 30, c, &err_));
  CHECK(c[0]->fail != NULL);
  rank_job jobs[LOCAL_RANKS];
  run_ranks(c, give_up_on_rank_1, jobs);
  for (int r = 0; r < LOCAL_RANKS; r += 2) {
    CHECK_EQ_I(jobs[r].st, LADLE_ECOMM);
    /* they waited for rank 1's 0.2 s pause, then no longer than a wake-up */
    CHECK(jobs[r].took < 1.2);
    char want[160];
    snprintf(want, sizeof want,
             "rank %d of 3: local alltoallv (sending 24 bytes, receiving 24 over 3 ranks) "
             "abandoned: rank 1 failed: boom",
             r);
    CHECK(strstr(jobs[r].msg, want) != NULL);
    CHECK_EQ_I(jobs[r].later, LADLE_ECOMM);
    snprintf(want, sizeof want,
             "rank %d of 3: local barrier (3 ranks) refused: the communicator broke earlier "
             "(rank 1 failed: boom)",
             r);
    CHECK(strstr(jobs[r].later_msg, want) != NULL);
    printf("  rank %d: %.3f s: %s\n", r, jobs[r].took, jobs[r].msg);
  }
  CHECK(jobs[1].took < 0.1); /* fail itself does not wait */
  CHECK_EQ_I(jobs[1].later, LADLE_ECOMM);
  CHECK(strstr(jobs[1].later_msg,
               "rank 1 of 3: local barrier (3 ranks) refused: the communicator broke earlier "
               "(this rank gave up: boom)") != NULL);
  /* a second failure does not replace the first, and a failed rank can say so again */
  c[0]->fail(c[0], "later");
  c[1]->fail(c[1], "again");
  CHECK(c[2]->vt->barrier(c[2], &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message, "(rank 1 failed: boom)") != NULL);
  for (int r = 0; r < LOCAL_RANKS; r++) ladle_comm_destroy(c[r]);

  /* a collective that starts after a rank gave up fails at once */
  CHECK_OK(ladle_comm_local_create(LOCAL_RANKS, 30, c, &err_));
  c[2]->fail(c[2], NULL);
  double t0 = now_s();
  int64_t v = 1;
  CHECK(c[0]->vt->allreduce(c[0], &v, &v, 1, LADLE_COMM_I64, LADLE_COMM_SUM, CC_HOST, &err_) ==
        LADLE_ECOMM);
  CHECK(now_s() - t0 < 0.5);
  CHECK(strstr(err_.message, "rank 0 of 3: local allreduce") != NULL);
  CHECK(strstr(err_.message, "abandoned: rank 2 failed: (no reason given)") != NULL);
  CHECK(c[1]->vt->barrier(c[1], &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message, "rank 2 failed") != NULL);
  CHECK(c[2]->vt->barrier(c[2], &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message, "this rank gave up: (no reason given)") != NULL);
  for (int r = 0; r < LOCAL_RANKS; r++) ladle_comm_destroy(c[r]);
}

/* Rank 2 calls a barrier where the others allgather; then the ranks agree on
 * the collective but not on its size. */
static void disagree(rank_job *j) {
  ladle_comm *c = j->x.c;
  int64_t v[2] = {c->rank, c->rank}, out[2 * LOCAL_RANKS];
  j->st = c->rank == 2 ? c->vt->barrier(c, &j->x.err)
                       : c->vt->allgather(c, v, 8, out, CC_HOST, &j->x.err);
  snprintf(j->msg, sizeof j->msg, "%s", j->x.err.message);
}

static void disagree_on_size(rank_job *j) {
  ladle_comm *c = j->x.c;
  int64_t v[2] = {c->rank, c->rank}, out[2 * LOCAL_RANKS];
  j->st = c->vt->allgather(c, v, c->rank == 0 ? 16 : 8, out, CC_HOST, &j->x.err);
  snprintf(j->msg, sizeof j->msg, "%s", j->x.err.message);
}

TEST(local_ranks_that_disagree_fail_together) {
  ladle_comm *c[LOCAL_RANKS];
  rank_job jobs[LOCAL_RANKS];
  CHECK_OK(ladle_comm_local_create(LOCAL_RANKS, 5, c, &err_));
  run_ranks(c, disagree, jobs);
  for (int r = 0; r < LOCAL_RANKS; r++) {
    CHECK_EQ_I(jobs[r].st, LADLE_ECOMM);
    CHECK(strstr(jobs[r].msg, "rank 0 called allgather while rank 2 called barrier") != NULL);
  }
  for (int r = 0; r < LOCAL_RANKS; r++) ladle_comm_destroy(c[r]);
  CHECK_OK(ladle_comm_local_create(LOCAL_RANKS, 5, c, &err_));
  run_ranks(c, disagree_on_size, jobs);
  for (int r = 0; r < LOCAL_RANKS; r++) {
    CHECK_EQ_I(jobs[r].st, LADLE_ECOMM);
    CHECK(strstr(jobs[r].msg, "disagree") != NULL);
  }
  for (int r = 0; r < LOCAL_RANKS; r++) ladle_comm_destroy(c[r]);
}

/* -------------------------------------------------------- the MPI communicator */

TEST(mpi_communicator_without_its_library) {
  const char *old = getenv("LADLE_MPI_LIB");
  char *saved = old != NULL ? strdup(old) : NULL;
  setenv("LADLE_MPI_LIB", "/nonexistent/libladle_mpi.so", 1);
  ladle_comm *c = (ladle_comm *)&c; /* must be cleared */
  CHECK(ladle_comm_create_mpi(5, &c, &err_) == LADLE_ENOTSUP);
  CHECK(c == NULL);
  CHECK(strstr(err_.message, "communicator 'mpi'") != NULL);
  CHECK(strstr(err_.message, "could not be loaded") != NULL);
  CHECK(strstr(err_.message, "/nonexistent/libladle_mpi.so") != NULL);
  CHECK(strstr(err_.message, "LADLE_MPI_LIB") != NULL);
  CHECK(ladle_comm_create_mpi(-1, &c, &err_) == LADLE_EINVAL);
  if (saved != NULL) {
    setenv("LADLE_MPI_LIB", saved, 1);
    free(saved);
  } else {
    unsetenv("LADLE_MPI_LIB");
  }
}

/* --------------------------------------------------- the callbacks communicator */

/* Callbacks that forward to another communicator (user): the one-rank one or
 * a thread's local one, so comm_checks.h checks what the table passes on. */
static const ladle_comm_place CB_HOST = {LADLE_DEVICE_CPU, 0, NULL};
static int cb_released_;

static int fwd_result(ladle_status st, const ladle_error *e, char *msg, size_t cap) {
  if (st != LADLE_OK) snprintf(msg, cap, "%s", e->message);
  return st != LADLE_OK;
}
static int fwd_allgatherv(void *user, const void *in, const size_t *counts, const size_t *displs,
                          void *out, char *msg, size_t cap) {
  ladle_comm *c = user;
  ladle_error e;
  return fwd_result(c->vt->allgatherv(c, in, counts, displs, out, CB_HOST, &e), &e, msg, cap);
}
static int fwd_alltoallv(void *user, const void *in, const size_t *sc, const size_t *sd, void *out,
                         const size_t *rc, const size_t *rd, char *msg, size_t cap) {
  ladle_comm *c = user;
  ladle_error e;
  return fwd_result(c->vt->alltoallv(c, in, sc, sd, out, rc, rd, CB_HOST, &e), &e, msg, cap);
}
static int fwd_bcast(void *user, void *buf, size_t bytes, int root, char *msg, size_t cap) {
  ladle_comm *c = user;
  ladle_error e;
  return fwd_result(c->vt->bcast(c, buf, bytes, root, CB_HOST, &e), &e, msg, cap);
}
static int fwd_allreduce(void *user, const void *in, void *out, size_t n, int type, int op,
                         char *msg, size_t cap) {
  ladle_comm *c = user;
  ladle_error e;
  return fwd_result(
      c->vt->allreduce(c, in, out, n, (ladle_comm_type)type, (ladle_comm_op)op, CB_HOST, &e), &e,
      msg, cap);
}
static int fwd_barrier(void *user, char *msg, size_t cap) {
  ladle_comm *c = user;
  ladle_error e;
  return fwd_result(c->vt->barrier(c, &e), &e, msg, cap);
}
static void fwd_release(void *user) {
  cb_released_++;
  ladle_comm_destroy(user);
}

static ladle_comm_callbacks fwd_callbacks(ladle_comm *to) {
  ladle_comm_callbacks cb = {.user = to,
                             .allgatherv = fwd_allgatherv,
                             .alltoallv = fwd_alltoallv,
                             .bcast = fwd_bcast,
                             .allreduce = fwd_allreduce,
                             .barrier = fwd_barrier,
                             .release = fwd_release,
                             .name = "fwd"};
  return cb;
}

TEST(callbacks_of_one_rank) {
  ladle_comm *self, *c = NULL;
  CHECK_OK(ladle_comm_self_create(NULL, &self, &err_));
  ladle_comm_callbacks cb = fwd_callbacks(self);
  cb.name = NULL;
  cb_released_ = 0;
  CHECK_OK(ladle_comm_create_callbacks(&cb, 0, 1, &c, &err_));
  CHECK(strcmp(ladle_comm_name(c), "callbacks") == 0);
  CHECK_EQ_I(ladle_comm_rank(c), 0);
  CHECK_EQ_I(ladle_comm_size(c), 1);
  cc_ctx x = {c, {0}, 0};
  cc_all(&x, 100);
  failures_ += x.fails;
  /* checked here, before a callback is called */
  int64_t v = 1;
  CHECK(c->vt->bcast(c, &v, 8, 1, CB_HOST, &err_) == LADLE_EINVAL);
  CHECK(c->vt->allreduce(c, &v, &v, 1, (ladle_comm_type)7, LADLE_COMM_SUM, CB_HOST, &err_) ==
        LADLE_EINVAL);
  CHECK_OK(c->vt->barrier(c, &err_)); /* refusals do not break it */
  ladle_comm_destroy(c);
  CHECK_EQ_I(cb_released_, 1);
}

static void cb_checks(rank_job *j) { cc_all(&j->x, 1000); }

TEST(callbacks_across_three_threads) {
  ladle_comm *local[LOCAL_RANKS], *c[LOCAL_RANKS];
  CHECK_OK(ladle_comm_local_create(LOCAL_RANKS, 30, local, &err_));
  cb_released_ = 0;
  for (int r = 0; r < LOCAL_RANKS; r++) {
    ladle_comm_callbacks cb = fwd_callbacks(local[r]);
    CHECK_OK(ladle_comm_create_callbacks(&cb, r, LOCAL_RANKS, &c[r], &err_));
  }
  CHECK(strcmp(ladle_comm_name(c[2]), "fwd") == 0);
  rank_job jobs[LOCAL_RANKS];
  run_ranks(c, cb_checks, jobs);
  for (int r = 0; r < LOCAL_RANKS; r++) ladle_comm_destroy(c[r]);
  CHECK_EQ_I(cb_released_, LOCAL_RANKS);
}

/* Callbacks of rank 1 of 2 whose alltoallv fails; counts the calls. */
static int failing_calls_;
static int failing_alltoallv(void *user, const void *in, const size_t *sc, const size_t *sd,
                             void *out, const size_t *rc, const size_t *rd, char *msg, size_t cap) {
  LADLE_UNUSED(user), LADLE_UNUSED(in), LADLE_UNUSED(sc), LADLE_UNUSED(sd);
  LADLE_UNUSED(out), LADLE_UNUSED(rc), LADLE_UNUSED(rd);
  failing_calls_++;
  snprintf(msg, cap, "RuntimeError: peer 0 closed the connection");
  return 1;
}
static int silent_barrier(void *user, char *msg, size_t cap) {
  LADLE_UNUSED(user), LADLE_UNUSED(msg), LADLE_UNUSED(cap);
  failing_calls_++;
  return -5; /* fails without a message */
}

/* recovers once, then refuses */
static int recovers_;
static int counted_recover(void *user, char *msg, size_t cap) {
  LADLE_UNUSED(user);
  if (recovers_++ == 0) return 0;
  snprintf(msg, cap, "RuntimeError: no second chance");
  return 1;
}

TEST(callbacks_failure_breaks_the_communicator) {
  ladle_comm *self, *c = (ladle_comm *)&c;
  CHECK_OK(ladle_comm_self_create(NULL, &self, &err_));
  ladle_comm_callbacks cb = fwd_callbacks(self);
  cb.name = "test";
  /* refused at creation, nothing released */
  cb_released_ = 0;
  CHECK(ladle_comm_create_callbacks(&cb, 2, 2, &c, &err_) == LADLE_EINVAL);
  CHECK(c == NULL);
  CHECK(strstr(err_.message, "rank 2 of 2") != NULL);
  cb.barrier = NULL;
  CHECK(ladle_comm_create_callbacks(&cb, 0, 2, &c, &err_) == LADLE_EINVAL);
  CHECK(strstr(err_.message, "no barrier callback") != NULL);
  cb.name = "a name far longer than thirty-one bytes";
  cb.barrier = fwd_barrier;
  CHECK(ladle_comm_create_callbacks(&cb, 0, 2, &c, &err_) == LADLE_EINVAL);
  CHECK(ladle_comm_create_callbacks(NULL, 0, 2, &c, &err_) == LADLE_EINVAL);
  CHECK_EQ_I(cb_released_, 0);

  cb.name = "test";
  cb.alltoallv = failing_alltoallv;
  failing_calls_ = 0;
  CHECK_OK(ladle_comm_create_callbacks(&cb, 1, 2, &c, &err_));
  size_t cnt[2] = {0, 0}, disp[2] = {0, 0};
  char buf[4];
  CHECK(c->vt->alltoallv(c, buf, cnt, disp, buf, cnt, disp, CB_HOST, &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message,
               "rank 1 of 2: test alltoallv: RuntimeError: peer 0 closed the connection") != NULL);
  CHECK_EQ_I(failing_calls_, 1);
  /* broken: every collective refused without calling back */
  CHECK(c->vt->barrier(c, &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message,
               "rank 1 of 2: test barrier refused: the communicator broke earlier "
               "(alltoallv: RuntimeError: peer 0 closed") != NULL);
  int64_t v[2] = {1, 2};
  CHECK(c->vt->allgather(c, v, 8, v, CB_HOST, &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message, "test allgather refused") != NULL);
  CHECK_EQ_I(failing_calls_, 1);
  ladle_comm_destroy(c);
  CHECK_EQ_I(cb_released_, 1);

  /* with a recover callback: c->recover takes collectives again where it
   * succeeds, and a failed recover ends the communicator */
  CHECK_OK(ladle_comm_self_create(NULL, &self, &err_));
  cb = fwd_callbacks(self);
  cb.alltoallv = failing_alltoallv;
  CHECK_OK(ladle_comm_create_callbacks(&cb, 1, 2, &c, &err_));
  CHECK(c->recover == NULL); /* none given: none made */
  ladle_comm_destroy(c);
  CHECK_OK(ladle_comm_self_create(NULL, &self, &err_));
  cb = fwd_callbacks(self);
  cb.alltoallv = failing_alltoallv;
  cb.recover = counted_recover;
  recovers_ = 0;
  CHECK_OK(ladle_comm_create_callbacks(&cb, 1, 2, &c, &err_));
  CHECK(c->recover != NULL);
  CHECK(c->vt->alltoallv(c, buf, cnt, disp, buf, cnt, disp, CB_HOST, &err_) == LADLE_ECOMM);
  CHECK(c->vt->barrier(c, &err_) == LADLE_ECOMM);
  CHECK_OK(c->recover(c, &err_));
  CHECK_EQ_I(recovers_, 1);
  CHECK_OK(c->vt->barrier(c, &err_)); /* called back again */
  CHECK(c->vt->alltoallv(c, buf, cnt, disp, buf, cnt, disp, CB_HOST, &err_) == LADLE_ECOMM);
  CHECK(c->recover(c, &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message, "rank 1 of 2: fwd recover: RuntimeError: no second chance") != NULL);
  CHECK(c->vt->barrier(c, &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message, "broke earlier (recover: RuntimeError: no second chance)") != NULL);
  ladle_comm_destroy(c);

  /* a failure without a message still says which and that it failed */
  CHECK_OK(ladle_comm_self_create(NULL, &self, &err_));
  cb = fwd_callbacks(self);
  cb.barrier = silent_barrier;
  CHECK_OK(ladle_comm_create_callbacks(&cb, 0, 1, &c, &err_));
  CHECK(c->vt->barrier(c, &err_) == LADLE_ECOMM);
  CHECK(strstr(err_.message, "rank 0 of 1: fwd barrier: failed (-5) without a message") != NULL);
  ladle_comm_destroy(c);
}
