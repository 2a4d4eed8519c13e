/* test_spmd.c — multi-rank execution in one process: three ranks as three
 * threads over the in-process communicator (comm_local.c), each an engine
 * over its own table, every query's allgathered result against one engine
 * over every rank's rows. The queries end in a sort (itself an exchange), so
 * the whole result has one order to compare (a window keeps the job's order
 * itself). Runs under the sanitizers. */
#include <pthread.h>

#include "dist/comm.h"
#include "harness.h"

enum { RANKS = 3 };

/* rank r's rows: k = (i * 7 + r) % 37 (nulls every 13th), x unique, s a string of k */
static ladle_table *rank_table(int r, int ranks, int64_t morsel) {
  int64_t n = 0, from = 0;
  for (int q = 0; q < ranks; q++) {
    int64_t m = 1000 + 150 * q;
    if (q < r) from += m;
    if (q == r) n = m;
  }
  if (r < 0) { /* every rank's rows, in rank order */
    for (int q = 0; q < ranks; q++) n += 1000 + 150 * q;
  }
  int64_t *k = malloc((size_t)n * 8), *x = malloc((size_t)n * 8);
  uint8_t *kv = malloc((size_t)n);
  const char **s = malloc((size_t)n * sizeof *s);
  /* each call its own names (make_table copies the bytes): the ranks build their
   * tables at once, and a shared static buffer being written by one while another
   * read it gave a rank empty strings now and then */
  char names[37][8];
  for (int i = 0; i < 37; i++) snprintf(names[i], sizeof names[i], "s%02d", i);
  for (int64_t i = 0; i < n; i++) {
    int64_t g = from + i; /* the row's number in the job */
    int q = 0;
    int64_t local = g;
    while (q < ranks && local >= 1000 + 150 * q) local -= 1000 + 150 * q++;
    k[i] = (local * 7 + q) % 37;
    kv[i] = g % 13 != 5;
    x[i] = g * 3 - 1000;
    s[i] = names[k[i]];
  }
  colspec c[] = {{"k", LADLE_TYPE_INT64, k, kv},
                 {"x", LADLE_TYPE_INT64, x, NULL},
                 {"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(n, 3, c, morsel);
  free(k);
  free(x);
  free(kv);
  free(s);
  return t;
}

/* rank r's dimension rows: keys 14r .. 14r + 13 (an in-memory frame is each
 * rank's own rows); r < 0: every rank's */
static ladle_table *dim_table(int r) {
  int64_t k[14 * RANKS], y[14 * RANKS], n = r < 0 ? 14 * RANKS : 14, from = r < 0 ? 0 : 14 * r;
  for (int64_t i = 0; i < n; i++) {
    k[i] = from + i;
    y[i] = (from + i) * 3;
  }
  colspec c[] = {{"k", LADLE_TYPE_INT64, k, NULL}, {"y", LADLE_TYPE_INT64, y, NULL}};
  return make_table(n, 2, c, 16);
}

typedef ladle_plan *(*query_fn)(ladle_table *t, ladle_table *dim);

static ladle_plan *sorted(ladle_plan *p, int nby, const char *const *by) {
  ladle_expr *e[4];
  bool desc[4] = {false}, nl[4] = {false};
  for (int i = 0; i < nby; i++) e[i] = COL(by[i]);
  ladle_plan *o = NULL;
  if (p != NULL) CHECK_OK(ladle_plan_sort(p, (size_t)nby, e, desc, nl, true, -1, &o, &err_));
  return o;
}

static ladle_plan *q_group_by(ladle_table *t, ladle_table *dim) {
  LADLE_UNUSED(dim);
  ladle_expr *keys[] = {COL("k")};
  ladle_expr *aggs[] = {AS(AGG(SUM, COL("x")), "sx"), AS(AGG(COUNT, COL("x")), "n"),
                        AS(AGG(MAX, COL("s")), "ms")};
  ladle_plan *p = NULL;
  CHECK_OK(ladle_plan_group_by(scan(t), 1, keys, 3, aggs, false, &p, &err_));
  const char *by[] = {"k"};
  return sorted(p, 1, by);
}

static ladle_plan *q_string_key(ladle_table *t, ladle_table *dim) {
  LADLE_UNUSED(dim);
  ladle_expr *keys[] = {COL("s")};
  ladle_expr *aggs[] = {AS(AGG(MIN, COL("x")), "mx")};
  ladle_plan *p = NULL;
  CHECK_OK(ladle_plan_group_by(scan(t), 1, keys, 1, aggs, false, &p, &err_));
  const char *by[] = {"s"};
  return sorted(p, 1, by);
}

static ladle_plan *q_join(ladle_table *t, ladle_table *dim) {
  ladle_expr *l[] = {COL("k")}, *r[] = {COL("k")};
  ladle_join_opts o = {LADLE_JOIN_LEFT, false, true, NULL, NULL, LADLE_JOIN_ORDER_NONE};
  ladle_plan *p = NULL;
  CHECK_OK(ladle_plan_join(scan(t), scan(dim), 1, l, r, &o, &p, &err_));
  const char *by[] = {"x"};
  return sorted(p, 1, by);
}

static ladle_plan *q_distinct(ladle_table *t, ladle_table *dim) {
  LADLE_UNUSED(dim);
  const char *sub[] = {"k"};
  ladle_plan *p = NULL, *q = NULL;
  CHECK_OK(ladle_plan_distinct(scan(t), 1, sub, LADLE_KEEP_FIRST, false, &p, &err_));
  const char *by[] = {"k"};
  q = sorted(p, 1, by);
  return q;
}

static ladle_plan *q_slice(ladle_table *t, ladle_table *dim) {
  LADLE_UNUSED(dim);
  const char *by[] = {"s", "x"};
  ladle_plan *p = sorted(scan(t), 2, by), *o = NULL;
  if (p != NULL) CHECK_OK(ladle_plan_slice(p, 900, 400, &o, &err_));
  return o;
}

static ladle_plan *q_top_k(ladle_table *t, ladle_table *dim) {
  LADLE_UNUSED(dim);
  ladle_expr *e[] = {COL("k"), COL("x")};
  bool desc[] = {true, false}, nl[] = {true, false};
  ladle_plan *o = NULL;
  CHECK_OK(ladle_plan_sort(scan(t), 2, e, desc, nl, true, 11, &o, &err_));
  return o;
}

/* windows by k: the rows hashed by k, then each sent back to its rank and
 * place (EXCHANGE return): the job's order, with no sort */
static ladle_plan *q_window(ladle_table *t, ladle_table *dim) {
  LADLE_UNUSED(dim);
  ladle_expr *by[] = {COL("k")}, *by2[] = {COL("k")};
  ladle_expr *e[] = {AS(ladle_expr_over(AGG(SUM, COL("x")), 1, by), "w"),
                     AS(ladle_expr_over(AGG(MAX, COL("s")), 1, by2), "ws")};
  ladle_plan *p = NULL;
  CHECK_OK(ladle_plan_with_columns(scan(t), 2, e, &p, &err_));
  return p;
}

static const struct {
  const char *name;
  query_fn fn;
} queries[] = {{"group_by", q_group_by}, {"string_key", q_string_key}, {"join", q_join},
               {"distinct", q_distinct}, {"slice", q_slice},           {"top_k", q_top_k},
               {"window", q_window}};
enum { NQ = sizeof queries / sizeof queries[0] };

typedef struct rank_job {
  ladle_comm *comm;
  int rank;
  ladle_result *whole[NQ]; /* allgathered */
  int sharded[NQ];
  ladle_status st;
  ladle_error err;
} rank_job;

/* Makes RANKS communicators into comms and runs fn on a thread per rank, job
 * r at (char *)jobs + r * size (a rank_job first: its comm and rank are set
 * here, the rest zeroed), and waits for them all. */
static void run_ranks(ladle_comm **comms, void *jobs, size_t size, void *(*fn)(void *)) {
  CHECK_OK(ladle_comm_local_create(RANKS, 30, comms, &err_));
  memset(jobs, 0, size * RANKS);
  pthread_t th[RANKS];
  for (int r = 0; r < RANKS; r++) {
    rank_job *j = (rank_job *)((char *)jobs + (size_t)r * size);
    j->comm = comms[r];
    j->rank = r;
    pthread_create(&th[r], NULL, fn, j);
  }
  for (int r = 0; r < RANKS; r++) pthread_join(th[r], NULL);
}

static void *rank_main(void *arg) {
  rank_job *j = arg;
  ladle_engine_opts o = {LADLE_DEVICE_CPU, 0, 2, 128, 0, j->comm};
  ladle_engine *e = NULL;
  j->st = ladle_engine_create(&o, &e, &j->err);
  ladle_table *t = rank_table(j->rank, RANKS, 128), *dim = dim_table(j->rank);
  for (int q = 0; q < NQ && j->st == LADLE_OK; q++) {
    ladle_plan *p = queries[q].fn(t, dim);
    ladle_result *r = NULL;
    j->st = ladle_engine_execute(e, p, &r, &j->err);
    if (j->st == LADLE_OK) {
      j->sharded[q] = ladle_result_sharded(r);
      j->st = ladle_engine_allgather(e, r, &j->whole[q], &j->err);
    }
    ladle_result_destroy(r);
    ladle_plan_destroy(p);
  }
  ladle_table_release(t);
  ladle_table_release(dim);
  ladle_engine_destroy(e);
  return NULL;
}

/* the results equal, column by column, row by row */
static void check_equal(ladle_result *got, ladle_result *exp, const char *what) {
  CHECK(got != NULL && exp != NULL);
  if (got == NULL || exp == NULL) return;
  if (ladle_result_num_rows(got) != ladle_result_num_rows(exp)) {
    fprintf(stderr, "  %s: %lld rows, expected %lld\n", what, (long long)ladle_result_num_rows(got),
            (long long)ladle_result_num_rows(exp));
    failures_++;
    return;
  }
  for (size_t c = 0; c < ladle_result_num_columns(exp); c++) {
    const char *name = ladle_result_column_name(exp, c);
    ladle_column a = result_col(got, name), b = result_col(exp, name);
    int64_t bad = -1;
    for (int64_t i = 0; i < b.length && bad < 0; i++) {
      bool va = a.validity == NULL || ladle_bit_get(a.validity, i);
      bool vb = b.validity == NULL || ladle_bit_get(b.validity, i);
      if (va != vb) bad = i;
      if (!va || !vb || bad >= 0) continue;
      if (b.type.id == LADLE_TYPE_STRING) {
        const int64_t *oa = a.values, *ob = b.values;
        if (oa[i + 1] - oa[i] != ob[i + 1] - ob[i] ||
            memcmp(a.chars + oa[i], b.chars + ob[i], (size_t)(ob[i + 1] - ob[i])) != 0)
          bad = i;
      } else {
        size_t w = ladle_type_width(b.type.id);
        if (a.type.id != b.type.id || memcmp((const char *)a.values + i * (int64_t)w,
                                             (const char *)b.values + i * (int64_t)w, w) != 0)
          bad = i;
      }
    }
    if (bad >= 0) {
      fprintf(stderr, "  %s: column %s differs at row %lld\n", what, name, (long long)bad);
      failures_++;
    }
    ladle_column_release(&a);
    ladle_column_release(&b);
  }
}

TEST(three_ranks_equal_one_engine) {
  ladle_comm *comms[RANKS];
  rank_job jobs[RANKS];
  run_ranks(comms, jobs, sizeof jobs[0], rank_main);
  for (int r = 0; r < RANKS; r++) {
    if (jobs[r].st != LADLE_OK) fprintf(stderr, "  rank %d: %s\n", r, jobs[r].err.message);
    CHECK(jobs[r].st == LADLE_OK);
  }
  ladle_table *all = rank_table(-1, RANKS, 128), *dim = dim_table(-1);
  for (int q = 0; q < NQ; q++) {
    ladle_plan *p = queries[q].fn(all, dim);
    ladle_result *exp = run_plan(p, 2, 128);
    for (int r = 0; r < RANKS; r++) {
      char what[64];
      snprintf(what, sizeof what, "%s on rank %d", queries[q].name, r);
      check_equal(jobs[r].whole[q], exp, what);
    }
    /* a top-k is replicated; the others are sharded in sort order */
    CHECK(jobs[0].sharded[q] == (strcmp(queries[q].name, "top_k") != 0));
    ladle_result_destroy(exp);
    ladle_plan_destroy(p);
  }
  for (int r = 0; r < RANKS; r++) {
    for (int q = 0; q < NQ; q++) ladle_result_destroy(jobs[r].whole[q]);
    ladle_comm_destroy(comms[r]);
  }
  ladle_table_release(all);
  ladle_table_release(dim);
}

/* a rank that runs another query: every rank fails, naming it */
static void *asym_main(void *arg) {
  rank_job *j = arg;
  ladle_engine_opts o = {LADLE_DEVICE_CPU, 0, 1, 0, 0, j->comm};
  ladle_engine *e = NULL;
  j->st = ladle_engine_create(&o, &e, &j->err);
  ladle_table *t = rank_table(j->rank, RANKS, 128), *dim = dim_table(j->rank);
  ladle_plan *p = (j->rank == 2 ? q_distinct : q_group_by)(t, dim);
  ladle_result *r = NULL;
  if (j->st == LADLE_OK) j->st = ladle_engine_execute(e, p, &r, &j->err);
  ladle_result_destroy(r);
  ladle_plan_destroy(p);
  ladle_table_release(t);
  ladle_table_release(dim);
  ladle_engine_destroy(e);
  return NULL;
}

TEST(a_rank_with_another_query_is_named_on_every_rank) {
  ladle_comm *comms[RANKS];
  rank_job jobs[RANKS];
  run_ranks(comms, jobs, sizeof jobs[0], asym_main);
  for (int r = 0; r < RANKS; r++) {
    CHECK(jobs[r].st == LADLE_ECOMM);
    CHECK(strstr(jobs[r].err.message, "rank 2 ran another query") != NULL);
    ladle_comm_destroy(comms[r]);
  }
}

/* A query that fails on one rank (a strict cast of rank 0's negative x to
 * UInt16): every rank's query fails, rank 0's with the cast's error and the
 * others naming rank 0, and the job goes on: the next queries give every rank
 * the right answer. Twice: before a group-by's exchange the others wait in,
 * and in a query with no exchange, which the others finish (the barrier that
 * ends a query tells them). */
typedef struct fail_job {
  rank_job base;
  ladle_status failed[2];
  ladle_error why[2];
} fail_job;

static ladle_plan *q_cast_fails_on_rank_0(ladle_table *t, bool then_group) {
  ladle_expr *e[] = {AS(ladle_expr_cast(COL("x"), ladle_dtype_make(LADLE_TYPE_UINT16), true), "u")};
  ladle_plan *p = NULL, *g = NULL;
  CHECK_OK(ladle_plan_with_columns(scan(t), 1, e, &p, &err_));
  if (!then_group) return p;
  ladle_expr *keys[] = {COL("k")};
  ladle_expr *aggs[] = {AS(AGG(SUM, COL("u")), "su")};
  if (p != NULL) CHECK_OK(ladle_plan_group_by(p, 1, keys, 1, aggs, false, &g, &err_));
  return g;
}

static void *fail_main(void *arg) {
  fail_job *f = arg;
  rank_job *j = &f->base;
  ladle_engine_opts o = {LADLE_DEVICE_CPU, 0, 2, 128, 0, j->comm};
  ladle_engine *e = NULL;
  j->st = ladle_engine_create(&o, &e, &j->err);
  ladle_table *t = rank_table(j->rank, RANKS, 128), *dim = dim_table(j->rank);
  ladle_plan *p;
  ladle_result *r;
  for (int k = 0; k < 2; k++) {
    p = q_cast_fails_on_rank_0(t, k == 0);
    r = NULL;
    f->failed[k] = j->st == LADLE_OK ? ladle_engine_execute(e, p, &r, &f->why[k]) : LADLE_OK;
    ladle_result_destroy(r);
    ladle_plan_destroy(p);
  }
  for (int q = 0; q < NQ && j->st == LADLE_OK; q++) {
    if (queries[q].fn != q_group_by && queries[q].fn != q_window) continue;
    p = queries[q].fn(t, dim);
    r = NULL;
    j->st = ladle_engine_execute(e, p, &r, &j->err);
    if (j->st == LADLE_OK) j->st = ladle_engine_allgather(e, r, &j->whole[q], &j->err);
    ladle_result_destroy(r);
    ladle_plan_destroy(p);
  }
  ladle_table_release(t);
  ladle_table_release(dim);
  ladle_engine_destroy(e);
  return NULL;
}

TEST(a_query_failing_on_one_rank_fails_on_all_and_the_job_goes_on) {
  ladle_comm *comms[RANKS];
  fail_job jobs[RANKS];
  run_ranks(comms, jobs, sizeof jobs[0], fail_main);
  for (int r = 0; r < RANKS; r++) {
    for (int k = 0; k < 2; k++) {
      CHECK(jobs[r].failed[k] != LADLE_OK);
      CHECK(strstr(jobs[r].why[k].message, "strict cast") != NULL);
      if (r > 0) {
        CHECK_EQ_I(jobs[r].failed[k], LADLE_ECOMM);
        CHECK(strstr(jobs[r].why[k].message, "rank 0 failed") != NULL);
      }
    }
    if (jobs[r].base.st != LADLE_OK)
      fprintf(stderr, "  rank %d: %s\n", r, jobs[r].base.err.message);
    CHECK(jobs[r].base.st == LADLE_OK);
  }
  ladle_table *all = rank_table(-1, RANKS, 128), *dim = dim_table(-1);
  for (int q = 0; q < NQ; q++) {
    if (queries[q].fn != q_group_by && queries[q].fn != q_window) continue;
    ladle_plan *p = queries[q].fn(all, dim);
    ladle_result *exp = run_plan(p, 2, 128);
    for (int r = 0; r < RANKS; r++) {
      char what[80];
      snprintf(what, sizeof what, "%s after the failure, on rank %d", queries[q].name, r);
      check_equal(jobs[r].base.whole[q], exp, what);
      ladle_result_destroy(jobs[r].base.whole[q]);
    }
    ladle_result_destroy(exp);
    ladle_plan_destroy(p);
  }
  for (int r = 0; r < RANKS; r++) ladle_comm_destroy(comms[r]);
  ladle_table_release(all);
  ladle_table_release(dim);
}
