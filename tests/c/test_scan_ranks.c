/* test_scan_ranks.c — scans dealt out across the ranks of an SPMD job. Every rank runs the
 * same plan on an engine of its own; the ranks' rows in rank order must be the one-rank
 * scan's, value for value. Scans exchange nothing, so the ranks run one after another,
 * each on a fake communicator (its rank and size, and an allgather for the plan
 * fingerprint that answers as though every rank ran the same plan). Parquet over one file and
 * several (n_rows, a column selection, a filter that skips row groups by their statistics), CSV
 * over one file and several (n_rows, the file-path column, a filter, ignore_errors with a file
 * whose records are found again while parsing). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dist/comm.h"
#include "harness.h"

#define MAX_RANKS 8
static const int rank_counts[] = {1, 2, 3, 5, 7};
#define N_RANK_COUNTS (sizeof rank_counts / sizeof rank_counts[0])

/* One rank's run: its result and its engine's counters. */
typedef struct rank_run {
  ladle_result *r;
  ladle_engine_stats stats;
} rank_run;

/* A fake rank: a communicator that says it is rank `rank` of `size` and
 * answers an allgather as though every other rank had brought what this one
 * did (the plan fingerprint every execution compares first). Scans exchange
 * nothing, so that is all a scan's plan needs; any other collective is
 * refused, naming itself, so a plan that needs one fails here by name. */
static ladle_status fake_allgather(ladle_comm *c, const void *in, size_t bytes, void *out,
                                   ladle_comm_place where, ladle_error *err) {
  LADLE_UNUSED(where);
  LADLE_UNUSED(err);
  for (int r = 0; r < c->size; r++) memcpy((char *)out + (size_t)r * bytes, in, bytes);
  return LADLE_OK;
}
static ladle_status fake_allgatherv(ladle_comm *c, const void *in, const size_t *counts,
                                    const size_t *displs, void *out, ladle_comm_place where,
                                    ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(in);
  LADLE_UNUSED(counts);
  LADLE_UNUSED(displs);
  LADLE_UNUSED(out);
  LADLE_UNUSED(where);
  return ladle_err_set(err, LADLE_ENOTSUP, "the fake rank has no allgatherv");
}
static ladle_status fake_alltoallv(ladle_comm *c, const void *in, const size_t *sc,
                                   const size_t *sd, void *out, const size_t *rc, const size_t *rd,
                                   ladle_comm_place where, ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(in);
  LADLE_UNUSED(sc);
  LADLE_UNUSED(sd);
  LADLE_UNUSED(out);
  LADLE_UNUSED(rc);
  LADLE_UNUSED(rd);
  LADLE_UNUSED(where);
  return ladle_err_set(err, LADLE_ENOTSUP, "the fake rank has no alltoallv");
}
static ladle_status fake_bcast(ladle_comm *c, void *buf, size_t bytes, int root,
                               ladle_comm_place where, ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(buf);
  LADLE_UNUSED(bytes);
  LADLE_UNUSED(root);
  LADLE_UNUSED(where);
  return ladle_err_set(err, LADLE_ENOTSUP, "the fake rank has no bcast");
}
static ladle_status fake_allreduce(ladle_comm *c, const void *in, void *out, size_t n,
                                   ladle_comm_type type, ladle_comm_op op, ladle_comm_place where,
                                   ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(in);
  LADLE_UNUSED(out);
  LADLE_UNUSED(n);
  LADLE_UNUSED(type);
  LADLE_UNUSED(op);
  LADLE_UNUSED(where);
  return ladle_err_set(err, LADLE_ENOTSUP, "the fake rank has no allreduce");
}
static ladle_status fake_barrier(ladle_comm *c, ladle_error *err) {
  LADLE_UNUSED(c);
  LADLE_UNUSED(err);
  return LADLE_OK;
}
static void fake_destroy(ladle_comm *c) { free(c); }
static const ladle_comm_vtable fake_vt = {"fake rank",    fake_allgather, fake_allgatherv,
                                          fake_alltoallv, fake_bcast,     fake_allreduce,
                                          fake_barrier,   fake_destroy};

/* Runs plan as rank `rank` of `size` (threads 2, partitions of 64 rows). */
static ladle_result *run_as_rank(const ladle_plan *p, int rank, int size,
                                 ladle_engine_stats *stats) {
  ladle_comm *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->vt = &fake_vt;
  c->rank = rank;
  c->size = size;
  ladle_engine_opts o = {.device = LADLE_DEVICE_CPU, .threads = 2, .morsel_rows = 64, .comm = c};
  ladle_engine *e = NULL;
  ladle_result *r = NULL;
  CHECK_OK(ladle_engine_create(&o, &e, &err_));
  if (e != NULL) {
    ladle_status st = ladle_engine_execute(e, p, &r, &err_);
    if (st != LADLE_OK) {
      fprintf(stderr, "  rank %d of %d: %s: %s\n", rank, size, ladle_status_name(st), err_.message);
      failures_++;
      r = NULL;
    }
    if (stats != NULL) *stats = ladle_engine_get_stats(e);
    ladle_engine_destroy(e);
  }
  ladle_comm_destroy(c);
  return r;
}

static bool same_value(const ladle_column *a, int64_t i, const ladle_column *b, int64_t j) {
  bool na = isnull(a, i), nb = isnull(b, j);
  if (na || nb) return na == nb;
  switch (a->type.id) {
    case LADLE_TYPE_STRING:
      return ladle_str_cmp(a, i, b, j) == 0;
    case LADLE_TYPE_FLOAT32:
    case LADLE_TYPE_FLOAT64: {
      double x = getf(a, i), y = getf(b, j);
      return memcmp(&x, &y, sizeof x) == 0;
    }
    default:
      return geti(a, i) == geti(b, j);
  }
}

/* Do the n parts, in order, hold one's rows: the same columns (names, types)
 * in every part, empty ones too, and the same values row for row? */
static bool parts_equal(const ladle_result *one, rank_run *parts, int n, const char *what) {
  ladle_table *t1 = ladle_result_table(one);
  int64_t rows = 0;
  bool ok = true;
  for (int r = 0; r < n; r++) {
    ladle_table *t = ladle_result_table(parts[r].r);
    if (t->schema.n != t1->schema.n) {
      fprintf(stderr, "  %s, %d ranks: rank %d has %zu columns, not %zu\n", what, n, r, t->schema.n,
              t1->schema.n);
      ok = false;
    }
    for (size_t k = 0; ok && k < t1->schema.n; k++)
      if (strcmp(t->schema.names[k], t1->schema.names[k]) != 0 ||
          !ladle_dtype_equal(t->schema.types[k], t1->schema.types[k])) {
        fprintf(stderr, "  %s, %d ranks: rank %d's column %zu is not %s's\n", what, n, r, k,
                t1->schema.names[k]);
        ok = false;
      }
    rows += t->num_rows;
    ladle_table_release(t);
  }
  if (ok && rows != t1->num_rows) {
    fprintf(stderr, "  %s, %d ranks: %lld rows, not %lld\n", what, n, (long long)rows,
            (long long)t1->num_rows);
    ok = false;
  }
  for (size_t k = 0; ok && k < t1->schema.n; k++) {
    ladle_column c1;
    if (ladle_table_concat_column(t1, k, &c1, &err_) != LADLE_OK) {
      ok = false;
      break;
    }
    int64_t at = 0;
    for (int r = 0; ok && r < n; r++) {
      ladle_table *t = ladle_result_table(parts[r].r);
      ladle_column c;
      memset(&c, 0, sizeof c);
      if (ladle_table_concat_column(t, k, &c, &err_) != LADLE_OK) ok = false;
      for (int64_t i = 0; ok && i < t->num_rows; i++, at++)
        if (!same_value(&c1, at, &c, i)) {
          fprintf(stderr, "  %s, %d ranks: column %s, rank %d's row %lld (row %lld of one rank)\n",
                  what, n, t1->schema.names[k], r, (long long)i, (long long)at);
          ok = false;
        }
      ladle_column_release(&c);
      ladle_table_release(t);
    }
    ladle_column_release(&c1);
  }
  ladle_table_release(t1);
  return ok;
}

/* What check_ranks saw: the one-rank run's counters and rows, and per count
 * of ranks (rank_counts[i]) the ranks' row groups read and skipped (summed),
 * how many ranks returned no rows and the most rows one rank returned. */
typedef struct ranked_check {
  ladle_engine_stats one;
  int64_t read[N_RANK_COUNTS], skipped[N_RANK_COUNTS];
  int64_t rows, empty_ranks[N_RANK_COUNTS], max_rank_rows[N_RANK_COUNTS];
} ranked_check;

/* Runs p on one rank and on each count of ranks; checks (CHECK) that the
 * rank-order concatenation is the one-rank result. */

static ranked_check check_ranks(const ladle_plan *p, const char *what) {
  ranked_check rc;
  memset(&rc, 0, sizeof rc);
  ladle_result *one = run_as_rank(p, 0, 1, &rc.one);
  CHECK(one != NULL);
  if (one == NULL) return rc;
  rc.rows = ladle_result_num_rows(one);
  for (size_t ci = 0; ci < N_RANK_COUNTS; ci++) {
    int n = rank_counts[ci];
    rank_run parts[MAX_RANKS];
    memset(parts, 0, sizeof parts);
    bool all = true;
    for (int r = 0; r < n; r++) {
      parts[r].r = run_as_rank(p, r, n, &parts[r].stats);
      all = all && parts[r].r != NULL;
      if (parts[r].r == NULL) continue;
      int64_t rows = ladle_result_num_rows(parts[r].r);
      rc.read[ci] += parts[r].stats.row_groups_read;
      rc.skipped[ci] += parts[r].stats.row_groups_skipped;
      rc.empty_ranks[ci] += rows == 0;
      if (rows > rc.max_rank_rows[ci]) rc.max_rank_rows[ci] = rows;
    }
    CHECK(all);
    if (all && !parts_equal(one, parts, n, what)) {
      fprintf(stderr, "  (%s with %d ranks)\n", what, n);
      failures_++;
    }
    for (int r = 0; r < n; r++) ladle_result_destroy(parts[r].r);
  }
  ladle_result_destroy(one);
  return rc;
}

/* ------------------------------------------------------------------ Parquet */

static char dir[] = "/tmp/ladle-ranks-XXXXXX";
static char pq_paths[5][64];
static int64_t next_id = 0;

/* Writes `n` rows (id counting on from the last file's, x with nulls, s with
 * nulls and long strings) as Parquet in row groups of `rg` rows, statistics
 * on. */
static bool write_pq(const char *path, int64_t n, int64_t rg) {
  int64_t *id = malloc((size_t)(n + 1) * sizeof *id);
  double *x = malloc((size_t)(n + 1) * sizeof *x);
  uint8_t *xv = malloc((size_t)(n + 1));
  const char **s = malloc((size_t)(n + 1) * sizeof *s), **m = malloc((size_t)(n + 1) * sizeof *m);
  char(*buf)[48] = malloc((size_t)(n + 1) * sizeof *buf);
  bool ok = id && x && xv && s && m && buf;
  for (int64_t i = 0; ok && i < n; i++) {
    id[i] = next_id++;
    x[i] = (double)(test_rand() % 1000) / 1000.0;
    xv[i] = id[i] % 7 != 3;
    snprintf(buf[i], sizeof buf[i], id[i] % 11 == 0 ? "row %lld, a string longer than 12" : "r%lld",
             (long long)id[i]);
    s[i] = id[i] % 5 == 2 ? NULL : buf[i];
    m[i] = id[i] % 3 == 0 ? NULL : id[i] % 3 == 1 ? "MAIL" : "AIR"; /* dictionary-encoded */
  }
  colspec cols[] = {{"id", LADLE_TYPE_INT64, id, NULL},
                    {"x", LADLE_TYPE_FLOAT64, x, xv},
                    {"s", LADLE_TYPE_STRING, s, NULL},
                    {"m", LADLE_TYPE_STRING, m, NULL}};
  ladle_table *t = ok ? make_table(n, 4, cols, 100) : NULL;
  ladle_plan *p = t ? scan(t) : NULL;
  ladle_result *r = p ? run_plan(p, 2, 0) : NULL;
  ladle_parquet_write_opts wo = {.row_group_size = rg, .statistics = true, .dictionary = true};
  ok = r != NULL && ladle_result_write_parquet(r, path, &wo, &err_) == LADLE_OK;
  if (!ok) fprintf(stderr, "  write_pq %s: %s\n", path, err_.message);
  ladle_result_destroy(r);
  ladle_plan_destroy(p);
  ladle_table_release(t);
  free(id);
  free(x);
  free(xv);
  free(s);
  free(m);
  free(buf);
  return ok;
}

/* Rows and row groups of the files: a (1000 in 300s: 4 groups), b (250 in
 * 60s), c (1 row), d (777 in 128s), e (no rows). Files b, c, a, d, e are read
 * in that order, so ids are written in it too. */
static bool make_pq_files(void) {
  if (mkdtemp(dir) == NULL) return false;
  const char *names[] = {"b", "c", "a", "d", "e"};
  const int64_t rows[] = {250, 1, 1000, 777, 0}, rgs[] = {60, 0, 300, 128, 0};
  for (int i = 0; i < 5; i++) {
    snprintf(pq_paths[i], sizeof pq_paths[i], "%s/%s.parquet", dir, names[i]);
    if (!write_pq(pq_paths[i], rows[i], rgs[i])) return false;
  }
  return true;
}

static bool files_ready(void);

static ladle_plan *pq_scan(size_t n, const char *const *paths, const ladle_parquet_opts *o) {
  ladle_plan *p = NULL;
  CHECK_OK(ladle_plan_scan_parquet(n, paths, o, &p, &err_));
  return p;
}

static const char *const *all_pq(void) {
  static const char *paths[5];
  for (int i = 0; i < 5; i++) paths[i] = pq_paths[i];
  return paths;
}

TEST(parquet_one_file) {
  if (!files_ready()) return;
  const char *a[] = {pq_paths[2]};
  ladle_plan *p = pq_scan(1, a, NULL);
  if (p == NULL) return;
  ranked_check rc = check_ranks(p, "parquet a");
  CHECK_EQ_I(rc.rows, 1000);
  CHECK_EQ_I(rc.one.row_groups_read, 4);
  for (size_t ci = 0; ci < N_RANK_COUNTS; ci++) {
    CHECK_EQ_I(rc.read[ci], 4); /* each row group read by one rank */
    int n = rank_counts[ci];
    /* 4 row groups: with 5 and 7 ranks some ranks read none */
    CHECK(n <= 4 ? rc.empty_ranks[ci] == 0 : rc.empty_ranks[ci] == n - 4);
  }
  ladle_plan_destroy(p);
}

TEST(parquet_several_files) {
  if (!files_ready()) return;
  ladle_plan *p = pq_scan(5, all_pq(), NULL);
  if (p == NULL) return;
  ranked_check rc = check_ranks(p, "parquet b,c,a,d,e");
  CHECK_EQ_I(rc.rows, 2028);
  for (size_t ci = 0; ci < N_RANK_COUNTS; ci++) {
    CHECK_EQ_I(rc.read[ci], rc.one.row_groups_read);
    /* balanced by rows: no rank more than its share and a row group */
    CHECK(rc.max_rank_rows[ci] <= 2028 / rank_counts[ci] + 1 + 300);
  }
  ladle_plan_destroy(p);
  /* a selection of columns, in another order */
  const char *cols[] = {"s", "id"};
  ladle_parquet_opts o = {.n_columns = 2, .columns = cols};
  p = pq_scan(5, all_pq(), &o);
  if (p == NULL) return;
  check_ranks(p, "parquet [s, id]");
  ladle_plan_destroy(p);
}

TEST(parquet_n_rows) {
  if (!files_ready()) return;
  const int64_t limits[] = {0, 1, 59, 61, 251, 500, 1251, 2027, 2028, 100000};
  for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
    ladle_parquet_opts o = {.n_rows = limits[i], .n_rows_set = true};
    ladle_plan *p = pq_scan(5, all_pq(), &o);
    if (p == NULL) return;
    char what[64];
    snprintf(what, sizeof what, "parquet n_rows=%lld", (long long)limits[i]);
    ranked_check rc = check_ranks(p, what);
    CHECK_EQ_I(rc.rows, limits[i] < 2028 ? limits[i] : 2028);
    ladle_plan_destroy(p);
  }
}

/* 400 <= id < 1700, pushed to the scan as statistics filters and run by a
 * filter over it (which reads x and s late, at the rows it keeps), with
 * and without n_rows (which turns skipping off) and with more to the
 * predicate than the statistics know: x, m == "MAIL" (evaluated on m's
 * dictionaries) or s >= "r5" (s is not dictionary-encoded: row by row). */
TEST(parquet_filter_skips_row_groups) {
  if (!files_ready()) return;
  ladle_pq_filter fl[] = {{.column = "id", .op = LADLE_OP_GE, .kind = 0, .i64 = 400},
                          {.column = "id", .op = LADLE_OP_LT, .kind = 0, .i64 = 1700}};
  for (int variant = 0; variant < 5; variant++) {
    ladle_parquet_opts o = {.n_filters = 2, .filters = fl};
    if (variant == 1) {
      o.n_rows = 1500;
      o.n_rows_set = true;
    }
    ladle_plan *p = pq_scan(5, all_pq(), &o), *f = NULL;
    if (p == NULL) return;
    ladle_expr *pred =
        ladle_expr_binary(LADLE_OP_AND,
                          ladle_expr_binary(LADLE_OP_GE, ladle_expr_col("id"),
                                            ladle_expr_lit_int(400, LADLE_TYPE_INT64)),
                          ladle_expr_binary(LADLE_OP_LT, ladle_expr_col("id"),
                                            ladle_expr_lit_int(1700, LADLE_TYPE_INT64)));
    if (variant == 2)
      pred = ladle_expr_binary(LADLE_OP_AND, pred,
                               ladle_expr_binary(LADLE_OP_GT, ladle_expr_col("x"),
                                                 ladle_expr_lit_float(0.5, LADLE_TYPE_FLOAT64)));
    if (variant >= 3)
      pred = ladle_expr_binary(
          LADLE_OP_AND, pred,
          variant == 3
              ? ladle_expr_binary(LADLE_OP_EQ, ladle_expr_col("m"), ladle_expr_lit_str("MAIL", 4))
              : ladle_expr_binary(LADLE_OP_GE, ladle_expr_col("s"), ladle_expr_lit_str("r5", 2)));
    CHECK_OK(ladle_plan_filter(p, pred, &f, &err_));
    if (f == NULL) return;
    const char *what[] = {"parquet filter", "parquet filter n_rows=1500", "parquet filter on x",
                          "parquet filter on m", "parquet filter on s"};
    ranked_check rc = check_ranks(f, what[variant]);
    if (variant == 3) { /* ids 400, 403, ..., 1699 */
      CHECK_EQ_I(rc.rows, 434);
      CHECK(rc.one.dict_chunks > 0);
      CHECK_EQ_I(rc.one.dict_chunks_rowwise, 0);
    }
    if (variant == 4) CHECK(rc.one.dict_chunks_rowwise > 0);
    if (variant == 1) {
      CHECK_EQ_I(rc.rows, 1100);
      CHECK_EQ_I(rc.one.row_groups_skipped, 0);
    } else {
      if (variant == 0) CHECK_EQ_I(rc.rows, 1300);
      CHECK(rc.one.row_groups_skipped > 0);
    }
    for (size_t ci = 0; ci < N_RANK_COUNTS; ci++) {
      CHECK_EQ_I(rc.read[ci], rc.one.row_groups_read);
      CHECK_EQ_I(rc.skipped[ci], rc.one.row_groups_skipped);
    }
    ladle_plan_destroy(f);
  }
}

/* ---------------------------------------------------------------------- CSV */

static char csv_paths[5][64];

/* Writes a header and `n` records (i counting on; s quoted, with separators
 * and newlines in some, empty (null) in others; f a float); with `bad`, two
 * records in the middle hold a quote inside an unquoted field, which Polars'
 * parser splits otherwise than quote parity does (read with ignore_errors). */
static bool write_csv(const char *path, int64_t n, bool bad) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return false;
  fputs("i,s,f\n", f);
  for (int64_t k = 0; k < n; k++, next_id++) {
    long long i = (long long)next_id;
    if (bad && (k == n / 2 || k == n / 2 + 1))
      fprintf(f, "%lld,a\"b%lld,%lld.5\n", i, i, i);
    else if (i % 9 == 4)
      fprintf(f, "%lld,\"line,%lld\nbreak\",%lld.25\n", i, i, i);
    else if (i % 6 == 1)
      fprintf(f, "%lld,,\n", i);
    else
      fprintf(f, "%lld,v%lld,%lld.75\n", i, i, i % 100);
  }
  return fclose(f) == 0;
}

/* Records of the files: a (1000), b (header only), c (1), d (300), e (50);
 * bad (400, with the malformed pair). */
static bool make_csv_files(void) {
  const char *names[] = {"a", "b", "c", "d", "e"};
  const int64_t rows[] = {1000, 0, 1, 300, 50};
  for (int i = 0; i < 5; i++) {
    snprintf(csv_paths[i], sizeof csv_paths[i], "%s/%s.csv", dir, names[i]);
    if (!write_csv(csv_paths[i], rows[i], false)) return false;
  }
  return true;
}

/* Writes the files on the first call (every test starts with it); false when
 * they cannot be written. */
static bool files_ready(void) {
  static int state = 0; /* 0 not yet, 1 written, -1 failed */
  if (state == 0) state = make_pq_files() && make_csv_files() ? 1 : -1;
  if (state < 0) {
    fprintf(stderr, "  cannot write the test files under %s\n", dir);
    failures_++;
  }
  return state > 0;
}

static ladle_plan *csv_scan(size_t n, const char *const *paths, const ladle_csv_opts *o) {
  ladle_plan *p = NULL;
  CHECK_OK(ladle_plan_scan_csv(n, paths, o, &p, &err_));
  return p;
}

static const char *const *all_csv(void) {
  static const char *paths[5];
  for (int i = 0; i < 5; i++) paths[i] = csv_paths[i];
  return paths;
}

/* Parquet scans streamed into their pipelines (LADLE_PARQUET_STREAM=1: every
 * row group decoded by the pipeline's task) against the same plans read
 * whole (=0), here under the sanitizers: a late filter (dictionary terms on
 * m; x and s read late) under a chain of projections, collected, also on
 * 2-4 ranks; a group_by over a filter over the scan (into the partial step). */
TEST(parquet_streamed_pipelines) {
  if (!files_ready()) return;
  for (int variant = 0; variant < 2; variant++) {
    ladle_plan *p = pq_scan(5, all_pq(), NULL), *f = NULL, *w = NULL, *q = NULL;
    if (p == NULL) return;
    ladle_expr *pred = ladle_expr_binary(LADLE_OP_GE, ladle_expr_col("id"),
                                         ladle_expr_lit_int(100, LADLE_TYPE_INT64));
    if (variant == 0)
      pred = ladle_expr_binary(
          LADLE_OP_AND, pred,
          ladle_expr_binary(LADLE_OP_EQ, ladle_expr_col("m"), ladle_expr_lit_str("MAIL", 4)));
    CHECK_OK(ladle_plan_filter(p, pred, &f, &err_));
    if (f == NULL) return;
    if (variant == 0) {
      ladle_expr *wc[] = {
          ladle_expr_alias(ladle_expr_binary(LADLE_OP_MUL, ladle_expr_col("x"),
                                             ladle_expr_lit_float(2.0, LADLE_TYPE_FLOAT64)),
                           "x2")};
      CHECK_OK(ladle_plan_with_columns(f, 1, wc, &w, &err_));
      ladle_expr *sel[] = {ladle_expr_col("id"), ladle_expr_col("x2"), ladle_expr_col("s")};
      if (w != NULL) CHECK_OK(ladle_plan_select(w, 3, sel, &q, &err_));
    } else {
      ladle_expr *keys[] = {ladle_expr_col("m")};
      ladle_expr *aggs[] = {
          ladle_expr_alias(ladle_expr_agg(LADLE_AGG_SUM, ladle_expr_col("id"), NULL), "sum_id"),
          ladle_expr_alias(ladle_expr_agg(LADLE_AGG_MAX, ladle_expr_col("x"), NULL), "max_x"),
          ladle_expr_alias(ladle_expr_agg(LADLE_AGG_COUNT, ladle_expr_col("s"), NULL), "n_s")};
      CHECK_OK(ladle_plan_group_by(f, 1, keys, 3, aggs, true, &q, &err_));
    }
    if (q == NULL) return;
    const char *what =
        variant == 0 ? "streamed late filter under projections" : "streamed group_by over a filter";
    rank_run streamed;
    memset(&streamed, 0, sizeof streamed);
    ladle_engine_stats whole_stats;
    setenv("LADLE_PARQUET_STREAM", "0", 1);
    ladle_result *whole = run_as_rank(q, 0, 1, &whole_stats);
    setenv("LADLE_PARQUET_STREAM", "1", 1);
    streamed.r = run_as_rank(q, 0, 1, &streamed.stats);
    CHECK(whole != NULL && streamed.r != NULL);
    if (whole != NULL && streamed.r != NULL) {
      CHECK_EQ_I(whole_stats.row_groups_streamed, 0);
      CHECK(streamed.stats.row_groups_streamed > 0);
      CHECK_EQ_I(streamed.stats.row_groups_read, whole_stats.row_groups_read);
      if (!parts_equal(whole, &streamed, 1, what)) failures_++;
      if (variant == 0) check_ranks(q, what); /* streamed on every rank */
    }
    unsetenv("LADLE_PARQUET_STREAM");
    ladle_result_destroy(whole);
    ladle_result_destroy(streamed.r);
    ladle_plan_destroy(q);
  }
}

/* Joins that stream their probe side (the five files) against a hash table of
 * the build side (one file, filtered), one row group at a time: the join under
 * a projection is the pipeline's made source, reading the probe side's other
 * columns (a string among them) at the matched rows. Under the sanitizers in
 * `make test-asan`; the answers equal the whole joins'. */
TEST(parquet_streamed_joins) {
  if (!files_ready()) return;
  static const ladle_join_type HOW[] = {LADLE_JOIN_INNER, LADLE_JOIN_LEFT, LADLE_JOIN_SEMI,
                                        LADLE_JOIN_ANTI};
  for (size_t h = 0; h < sizeof HOW / sizeof HOW[0]; h++) {
    ladle_plan *l = pq_scan(5, all_pq(), NULL), *r = pq_scan(1, all_pq(), NULL), *f = NULL,
               *j = NULL, *q = NULL;
    if (l == NULL || r == NULL) return;
    ladle_expr *pred = ladle_expr_binary(LADLE_OP_LT, ladle_expr_col("id"),
                                         ladle_expr_lit_int(300, LADLE_TYPE_INT64));
    CHECK_OK(ladle_plan_filter(r, pred, &f, &err_));
    if (f == NULL) return;
    ladle_join_opts o = {HOW[h], false, true, NULL, NULL, LADLE_JOIN_ORDER_LEFT_RIGHT};
    ladle_expr *lk[] = {ladle_expr_col("id")}, *rk[] = {ladle_expr_col("id")};
    CHECK_OK(ladle_plan_join(l, f, 1, lk, rk, &o, &j, &err_));
    if (j == NULL) return;
    bool two = HOW[h] == LADLE_JOIN_INNER || HOW[h] == LADLE_JOIN_LEFT;
    ladle_expr *sel[] = {ladle_expr_col("s"), ladle_expr_col("x"),
                         ladle_expr_col(two ? "s_right" : "m")};
    CHECK_OK(ladle_plan_select(j, 3, sel, &q, &err_));
    if (q == NULL) return;
    char what[64];
    snprintf(what, sizeof what, "streamed join how %d", (int)HOW[h]);
    rank_run streamed;
    memset(&streamed, 0, sizeof streamed);
    ladle_engine_stats whole_stats;
    setenv("LADLE_PARQUET_STREAM", "1", 1);
    setenv("LADLE_STREAM_JOIN", "0", 1);
    ladle_result *whole = run_as_rank(q, 0, 1, &whole_stats);
    unsetenv("LADLE_STREAM_JOIN");
    streamed.r = run_as_rank(q, 0, 1, &streamed.stats);
    CHECK(whole != NULL && streamed.r != NULL);
    if (whole != NULL && streamed.r != NULL) {
      CHECK(streamed.stats.row_groups_streamed > 0);
      if (!parts_equal(whole, &streamed, 1, what)) failures_++;
    }
    ladle_engine_opts eo = {.device = LADLE_DEVICE_CPU, .threads = 2};
    ladle_engine *e = NULL;
    char *text = NULL;
    CHECK_OK(ladle_engine_create(&eo, &e, &err_));
    if (e != NULL) CHECK_OK(ladle_engine_explain(e, q, &text, &err_));
    if (text != NULL && strstr(text, "read at the matched rows") == NULL) {
      fprintf(stderr, "  %s: the join is not the pipeline's source:\n%s\n", what, text);
      failures_++;
    }
    free(text);
    ladle_engine_destroy(e);
    unsetenv("LADLE_PARQUET_STREAM");
    ladle_result_destroy(whole);
    ladle_result_destroy(streamed.r);
    ladle_plan_destroy(q);
  }
}

TEST(csv_one_file) {
  if (!files_ready()) return;
  const char *a[] = {csv_paths[0]};
  ladle_plan *p = csv_scan(1, a, NULL);
  if (p == NULL) return;
  ranked_check rc = check_ranks(p, "csv a");
  CHECK_EQ_I(rc.rows, 1000);
  for (size_t ci = 0; ci < N_RANK_COUNTS; ci++) /* records dealt evenly */
    CHECK(rc.max_rank_rows[ci] <= (1000 + rank_counts[ci] - 1) / rank_counts[ci]);
  ladle_plan_destroy(p);
}

TEST(csv_several_files) {
  if (!files_ready()) return;
  ladle_plan *p = csv_scan(5, all_csv(), NULL);
  if (p == NULL) return;
  ranked_check rc = check_ranks(p, "csv a,b,c,d,e");
  CHECK_EQ_I(rc.rows, 1351);
  ladle_plan_destroy(p);
  /* each row's file path (include_file_paths) */
  ladle_csv_opts o = ladle_csv_opts_default();
  o.path_column = "path";
  p = csv_scan(5, all_csv(), &o);
  if (p == NULL) return;
  check_ranks(p, "csv with paths");
  ladle_plan_destroy(p);
  /* a filter over the scan */
  p = csv_scan(5, all_csv(), NULL);
  ladle_plan *f = NULL;
  if (p == NULL) return;
  CHECK_OK(ladle_plan_filter(p,
                             ladle_expr_binary(LADLE_OP_GT, ladle_expr_col("f"),
                                               ladle_expr_lit_float(40, LADLE_TYPE_FLOAT64)),
                             &f, &err_));
  if (f == NULL) return;
  check_ranks(f, "csv filter");
  ladle_plan_destroy(f);
}

TEST(csv_n_rows) {
  if (!files_ready()) return;
  const int64_t limits[] = {0, 1, 7, 999, 1000, 1001, 1002, 1301, 1350, 100000};
  for (int files = 1; files <= 5; files += 4)
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
      ladle_csv_opts o = ladle_csv_opts_default();
      o.n_rows = limits[i];
      o.n_rows_set = true;
      ladle_plan *p = csv_scan((size_t)files, all_csv(), &o);
      if (p == NULL) return;
      char what[64];
      snprintf(what, sizeof what, "csv %d files n_rows=%lld", files, (long long)limits[i]);
      ranked_check rc = check_ranks(p, what);
      int64_t total = files == 1 ? 1000 : 1351;
      CHECK_EQ_I(rc.rows, limits[i] < total ? limits[i] : total);
      ladle_plan_destroy(p);
    }
}

/* ignore_errors: every rank parses every file and keeps its share of the
 * rows; here one file's records are found again while parsing. */
TEST(csv_ignore_errors) {
  if (!files_ready()) return;
  char bad[64];
  snprintf(bad, sizeof bad, "%s/bad.csv", dir);
  CHECK(write_csv(bad, 400, true));
  static const char *cols[] = {"i", "s", "f"};
  ladle_dtype types[] = {T_(LADLE_TYPE_INT64), T_(LADLE_TYPE_STRING), T_(LADLE_TYPE_STRING)};
  ladle_csv_opts o = ladle_csv_opts_default();
  o.ignore_errors = true;
  o.n_columns = 3;
  o.columns = cols;
  o.types = types;
  const char *paths[] = {csv_paths[3], bad, csv_paths[4]};
  for (int variant = 0; variant < 3; variant++) {
    o.n_rows_set = variant == 2;
    o.n_rows = 500;
    size_t n = variant == 0 ? 1 : 3;
    ladle_plan *p = csv_scan(n, variant == 0 ? paths + 1 : paths, &o);
    if (p == NULL) break;
    ranked_check rc = check_ranks(p, variant == 0   ? "csv ignore_errors"
                                     : variant == 1 ? "csv ignore_errors, 3 files"
                                                    : "csv ignore_errors, n_rows");
    CHECK_EQ_I(rc.rows, variant == 0 ? 400 : variant == 1 ? 750 : 500);
    ladle_plan_destroy(p);
  }
  unlink(bad);
}

__attribute__((destructor)) static void remove_files(void) {
  if (dir[strlen(dir) - 1] == 'X') return; /* never made */
  for (int i = 0; i < 5; i++) {
    unlink(pq_paths[i]);
    unlink(csv_paths[i]);
  }
  rmdir(dir);
}
