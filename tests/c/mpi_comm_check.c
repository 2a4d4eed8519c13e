/* mpi_comm_check.c — the MPI communicator across real ranks, run by ctest
 * under mpirun (3 ranks, and 1) with LADLE_MPI_LIB naming the built
 * libladle_mpi.so: the collective checks of comm_checks.h on MPI's world; the
 * messages cut at the largest size (forced small by the test-only
 * LADLE_MPI_CHUNK_BYTES); and a timeout, where rank 1 skips a collective and
 * the others must fail with LADLE_ECOMM naming it within the timeout, then
 * refuse everything (MPI is dead for the process); or, with
 * LADLE_MPI_CHECK=fail in the environment instead, a rank that gives up:
 * rank 1 calls c->fail while the others wait in an alltoallv of a 30 s
 * timeout, they must fail within about a second naming rank 1 and its
 * reason, and every rank then recovers and goes on. The timeout kills MPI for
 * the process, so one run does one of them, last (with one rank: c->fail
 * alone, which tells nobody). Every rank then returns from main; the shim's
 * atexit handler calls MPI_Finalize (which returns despite a request left
 * pending and after the notice receives are cancelled) and mpirun sees every
 * rank exit 0. */
#define _GNU_SOURCE
#include <time.h>

#include "comm_checks.h"
#include "harness.h"

static ladle_comm *world_;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Counts rank-local failures into the harness's. */
static void run_checks(ladle_comm *c, size_t scale) {
  cc_ctx x = {c, {0}, 0};
  cc_all(&x, scale);
  failures_ += x.fails;
}

TEST(mpi_world_and_its_collectives) {
  CHECK_OK(ladle_comm_create_mpi(30, &world_, &err_));
  if (world_ == NULL) return;
  CHECK(strcmp(ladle_comm_name(world_), "mpi") == 0);
  CHECK(ladle_comm_size(world_) >= 1);
  CHECK(ladle_comm_rank(world_) >= 0 && ladle_comm_rank(world_) < ladle_comm_size(world_));
  if (ladle_comm_rank(world_) == 0) printf("mpi: %d ranks\n", ladle_comm_size(world_));
  run_checks(world_, 1000);
  /* a second communicator (another dup of the world) works beside the first */
  ladle_comm *again;
  CHECK_OK(ladle_comm_create_mpi(0, &again, &err_));
  if (again != NULL) {
    CHECK_EQ_I(ladle_comm_rank(again), ladle_comm_rank(world_));
    run_checks(again, 100);
    ladle_comm_destroy(again);
  }
}

/* LADLE_MPI_CHUNK_BYTES=4000 cuts every message past 4000 bytes into
 * messages of 4000 bytes, as buffers past 2 GiB are cut at 1 GiB. */
TEST(mpi_pairwise_path_for_large_counts) {
  if (world_ == NULL) return;
  setenv("LADLE_MPI_CHUNK_BYTES", "4000", 1);
  ladle_comm *c;
  CHECK_OK(ladle_comm_create_mpi(30, &c, &err_));
  unsetenv("LADLE_MPI_CHUNK_BYTES");
  if (c == NULL) return;
  cc_ctx x = {c, {0}, 0};
  cc_alltoallv(&x, 20, 4242, 300000); /* up to 300 KB a pair: ~75 messages each */
  cc_alltoallv(&x, 21, 77, 3000);     /* below the limit: one message a pair */
  cc_allgatherv(&x, 22, 50000);
  cc_allgather(&x, 23, 9000);
  cc_bcast(&x, 24, c->size - 1, 100001);
  cc_allreduce(&x, 2001);
  CC_OK(&x, c->vt->barrier(c, &x.err));
  failures_ += x.fails;
  ladle_comm_destroy(c);
}

/* Whether this run checks a rank that gives up rather than a timeout. */
static int fail_run(void) {
  const char *s = getenv("LADLE_MPI_CHECK");
  return s != NULL && strcmp(s, "fail") == 0;
}

/* Rank 1 skips an allreduce: ranks 0 and 2 fail within about the 2 s
 * timeout, naming it, and refuse what follows. Rank 1 goes on to exit. */
TEST(mpi_timeout_when_a_rank_skips_a_collective) {
  if (world_ == NULL || world_->size < 2 || fail_run()) return;
  ladle_comm *c;
  CHECK_OK(ladle_comm_create_mpi(2, &c, &err_));
  if (c == NULL) return;
  int64_t v = c->rank, sum = 0;
  if (c->rank != 1) {
    double t0 = now_s();
    ladle_status st =
        c->vt->allreduce(c, &v, &sum, 1, LADLE_COMM_I64, LADLE_COMM_SUM, CC_HOST, &err_);
    double took = now_s() - t0;
    CHECK_EQ_I(st, LADLE_ECOMM);
    CHECK(took >= 1.9 && took < 4);
    CHECK(strstr(err_.message, "allreduce") != NULL);
    CHECK(strstr(err_.message, "did not complete within 2 s") != NULL);
    char want[32];
    snprintf(want, sizeof want, "rank %d of %d", c->rank, c->size);
    CHECK(strstr(err_.message, want) != NULL);
    printf("rank %d: %s\n", c->rank, err_.message);
    /* broken for good, every communicator of the process: at once */
    t0 = now_s();
    CHECK_EQ_I(c->vt->barrier(c, &err_), LADLE_ECOMM);
    CHECK(strstr(err_.message, "broke earlier") != NULL);
    CHECK_EQ_I(world_->vt->barrier(world_, &err_), LADLE_ECOMM);
    ladle_comm *more = NULL;
    CHECK_EQ_I(ladle_comm_create_mpi(1, &more, &err_), LADLE_ECOMM);
    CHECK(more == NULL);
    CHECK(now_s() - t0 < 0.5);
  }
  ladle_comm_destroy(c);
  ladle_comm_destroy(world_);
  world_ = NULL;
}

/* An alltoallv of `per` bytes a pair that rank 1 does not join: it gives up
 * (c->fail, after a pause) instead. The others must fail within about a
 * second naming rank 1 and why (not at the 30 s timeout), refuse what follows
 * at once, and tell nobody when they give up in turn. */
static void interrupted_alltoallv(ladle_comm *c, size_t per, const char *why) {
  int n = c->size;
  size_t *v = malloc(4 * (size_t)n * sizeof *v);
  for (int r = 0; r < n; r++) v[r] = v[2 * n + r] = per, v[n + r] = v[3 * n + r] = (size_t)r * per;
  unsigned char *in = malloc(per * (size_t)n), *out = malloc(per * (size_t)n);
  memset(in, c->rank, per * (size_t)n);
  double t0 = now_s();
  char want[200];
  if (c->rank == 1 || n == 1) {
    if (n > 1) {
      struct timespec pause = {0, 300000000};
      nanosleep(&pause, NULL);
    }
    t0 = now_s();
    c->fail(c, why);
    double took = now_s() - t0;
    CHECK(took < 2.5);
    printf("rank %d: gave up in %.3f s\n", c->rank, took);
    CHECK_EQ_I(c->vt->barrier(c, &err_), LADLE_ECOMM);
    CHECK(strstr(err_.message, "barrier") != NULL);
    snprintf(want, sizeof want, "the query failed (this rank gave up: %s)", why);
    CHECK(strstr(err_.message, want) != NULL);
  } else {
    ladle_status st = c->vt->alltoallv(c, in, v, v + n, out, v + 2 * n, v + 3 * n, CC_HOST, &err_);
    double took = now_s() - t0;
    CHECK_EQ_I(st, LADLE_ECOMM);
    CHECK(took < 1.5); /* rank 1's 0.3 s pause, then a poll: not the 30 s timeout */
    snprintf(want, sizeof want, "rank %d of %d: MPI alltoallv (sending %zu bytes, receiving %zu ",
             c->rank, n, per * (size_t)n, per * (size_t)n);
    CHECK(strstr(err_.message, want) != NULL);
    /* "abandoned" while it waited; "refused" had the notice come before it started */
    char a[160], r[160];
    snprintf(a, sizeof a, "abandoned: rank 1 failed: %s", why);
    snprintf(r, sizeof r, "refused: rank 1 failed: %s", why);
    CHECK(strstr(err_.message, a) != NULL || strstr(err_.message, r) != NULL);
    printf("rank %d: %.3f s: %s\n", c->rank, took, err_.message);
    t0 = now_s();
    CHECK_EQ_I(c->vt->barrier(c, &err_), LADLE_ECOMM);
    snprintf(want, sizeof want, "the query failed (rank 1 failed: %s)", why);
    CHECK(strstr(err_.message, want) != NULL);
    /* giving up in turn tells nobody (the job knows) and keeps the first reason */
    c->fail(c, "me too");
    CHECK_EQ_I(c->vt->barrier(c, &err_), LADLE_ECOMM);
    CHECK(strstr(err_.message, want) != NULL);
    CHECK(now_s() - t0 < 0.5);
  }
  /* the buffers go: nothing of the interrupted operation writes into them */
  memset(out, 0xAB, per * (size_t)n);
  free(in);
  free(out);
  free(v);
}

/* A rank that gives up (LADLE_MPI_CHECK=fail; with one rank, c->fail alone,
 * which tells nobody): the others stop at once, naming it; another
 * communicator of the process is untouched; every rank recovers its own
 * (c->recover, no collective) and the next collectives give every byte right,
 * nothing of the failed one's messages matching them; twice, the second time
 * with messages of 4 MB a pair (rendezvous sends to the rank that gave up,
 * still pending when the others let go). */
TEST(mpi_rank_that_gives_up_fails_the_others_at_once_and_all_go_on) {
  if (world_ == NULL || (world_->size > 1 && !fail_run())) return;
  ladle_comm *c;
  CHECK_OK(ladle_comm_create_mpi(30, &c, &err_));
  if (c == NULL) return;
  CHECK(c->fail != NULL && c->recover != NULL);
  const char *whys[2] = {"boom", "bang"};
  size_t pers[2] = {8, 4 << 20};
  for (int round = 0; round < 2; round++) {
    interrupted_alltoallv(c, pers[round], whys[round]);
    CHECK_OK(world_->vt->barrier(world_, &err_)); /* the world's communicator still works */
    CHECK_OK(c->recover(c, &err_));
    CHECK_OK(c->recover(c, &err_)); /* on a communicator that works: nothing to do */
    cc_ctx x = {c, {0}, 0};
    cc_alltoallv(&x, 30 + round, 777, 300000);
    cc_alltoallv(&x, 32 + round, 4242, 5 << 20);
    cc_allgatherv(&x, 34 + round, 1000);
    cc_allreduce(&x, 100);
    cc_bcast(&x, 36, c->size - 1, 1000);
    CC_OK(&x, c->vt->barrier(c, &x.err));
    failures_ += x.fails;
    if (c->rank == 0) printf("round %d: recovered, collectives right\n", round);
  }
  ladle_comm *more = NULL;
  CHECK_OK(ladle_comm_create_mpi(5, &more, &err_));
  if (more != NULL) run_checks(more, 100);
  ladle_comm_destroy(more);
  ladle_comm_destroy(c);
  ladle_comm_destroy(world_);
  world_ = NULL;
}
