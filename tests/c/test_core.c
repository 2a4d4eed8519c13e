/* test_core.c — the building blocks: thread pool, buffers, columns (slice,
 * concat, gather), supertypes, and the Arrow C stream both ways. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "harness.h"
#include "utf8_reference.h"

static ladle_status add_task(void *ctx, size_t i, ladle_error *err) {
  atomic_long *sum = ctx;
  atomic_fetch_add(sum, (long)i);
  (void)err;
  return LADLE_OK;
}

static ladle_status fail_task(void *ctx, size_t i, ladle_error *err) {
  (void)ctx;
  if (i == 37) return ladle_err_set(err, LADLE_ECOMPUTE, "task %zu failed", i);
  return LADLE_OK;
}

/* items 2 and 9 fail; 2 only after 9 has (it waits for the flag, up to a
 * second): the error returned is still item 2's, the lowest */
static ladle_status two_fail_task(void *ctx, size_t i, ladle_error *err) {
  atomic_int *nine_failed = ctx;
  if (i == 9) {
    atomic_store(nine_failed, 1);
    return ladle_err_set(err, LADLE_ECOMPUTE, "item 9 failed");
  }
  if (i == 2) {
    for (int t = 0; t < 1000 && !atomic_load(nine_failed); t++) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    return ladle_err_set(err, LADLE_EINVAL, "item 2 failed");
  }
  return LADLE_OK;
}

typedef struct nested {
  ladle_pool *pool;
  atomic_long total;
} nested;

static ladle_status nested_task(void *ctx, size_t i, ladle_error *err) {
  nested *n = ctx;
  atomic_long inner;
  atomic_init(&inner, 0);
  ladle_status st = ladle_pool_run(n->pool, 10, add_task, &inner, err);
  atomic_fetch_add(&n->total, atomic_load(&inner) + (long)i);
  return st;
}

TEST(pool_runs_every_item_once_and_reports_failures) {
  ladle_pool *pool;
  CHECK_OK(ladle_pool_create(4, &pool, &err_));
  for (int rep = 0; rep < 50; rep++) {
    atomic_long sum;
    atomic_init(&sum, 0);
    CHECK_OK(ladle_pool_run(pool, 1000, add_task, &sum, &err_));
    CHECK_EQ_I(atomic_load(&sum), 999 * 1000 / 2);
  }
  ladle_error e;
  CHECK(ladle_pool_run(pool, 100, fail_task, NULL, &e) == LADLE_ECOMPUTE);
  CHECK(strstr(e.message, "task 37") != NULL);
  /* of several failures, the lowest item's, whatever the threads' timing */
  for (int rep = 0; rep < 5; rep++) {
    atomic_int nine;
    atomic_init(&nine, 0);
    CHECK(ladle_pool_run(pool, 16, two_fail_task, &nine, &e) == LADLE_EINVAL);
    CHECK(strstr(e.message, "item 2 failed") != NULL);
  }
  nested n = {pool, 0};
  CHECK_OK(ladle_pool_run(pool, 8, nested_task, &n, &err_));
  CHECK_EQ_I(atomic_load(&n.total), 8 * 45 + 28);
  ladle_pool_destroy(pool);
}

/* Nested loops (pool.c): a loop of n items where w threads are available gives
 * each item w / n; an item with more than one thread runs its own loops on
 * threads the outer loop leaves idle; errors and sums come back through every
 * level. */
typedef struct nest2 {
  ladle_pool *pool;
  int width[8];    /* per outer item: ladle_pool_threads inside it */
  bool inline_[8]; /* per outer item: ladle_pool_nested inside it */
  int helpers[8];  /* per outer item: distinct threads that ran its inner items */
  pthread_t seen[8][64];
  atomic_int nseen[8];
  atomic_long sum;
  size_t fail_outer; /* an outer item whose inner loop fails (8: none) */
} nest2;

typedef struct nest2_inner {
  nest2 *n;
  size_t outer;
} nest2_inner;

static ladle_status nest2_inner_task(void *ctx, size_t i, ladle_error *err) {
  nest2_inner *in = ctx;
  nest2 *n = in->n;
  if (in->outer == n->fail_outer && i == 3)
    return ladle_err_set(err, LADLE_ECOMPUTE, "inner item %zu of outer %zu", i, in->outer);
  int k = atomic_fetch_add(&n->nseen[in->outer], 1);
  if (k < 64) n->seen[in->outer][k] = pthread_self();
  /* a third level: its items summed */
  atomic_long leaf;
  atomic_init(&leaf, 0);
  LADLE_RETURN_NOT_OK(ladle_pool_run(n->pool, 5, add_task, &leaf, err));
  atomic_fetch_add(&n->sum, atomic_load(&leaf) + (long)i);
  struct timespec ts = {0, 2000000}; /* 2 ms: long enough for idle workers to join */
  nanosleep(&ts, NULL);
  return LADLE_OK;
}

static ladle_status nest2_outer_task(void *ctx, size_t o, ladle_error *err) {
  nest2 *n = ctx;
  n->width[o] = ladle_pool_threads(n->pool);
  n->inline_[o] = ladle_pool_nested();
  nest2_inner in = {n, o};
  ladle_status st = ladle_pool_run(n->pool, 40, nest2_inner_task, &in, err);
  int k = LADLE_MIN(atomic_load(&n->nseen[o]), 64), distinct = 0;
  for (int a = 0; a < k; a++) {
    bool dup = false;
    for (int b = 0; b < a && !dup; b++) dup = pthread_equal(n->seen[o][a], n->seen[o][b]);
    distinct += !dup;
  }
  n->helpers[o] = distinct;
  return st;
}

TEST(pool_nested_loops_share_threads) {
  ladle_pool *pool;
  CHECK_OK(ladle_pool_create(8, &pool, &err_));
  CHECK_EQ_I(ladle_pool_threads(pool), 8);
  CHECK(!ladle_pool_nested());
  /* two outer items on 8 threads: 4 each, inner loops run on several threads */
  nest2 n;
  memset(&n, 0, sizeof n);
  n.pool = pool;
  n.fail_outer = 8;
  CHECK_OK(ladle_pool_run(pool, 2, nest2_outer_task, &n, &err_));
  for (int o = 0; o < 2; o++) {
    CHECK_EQ_I(n.width[o], 4);
    CHECK(!n.inline_[o]);
    CHECK(n.helpers[o] > 1);
  }
  CHECK_EQ_I(atomic_load(&n.sum), 2 * (40 * 10 + 39 * 40 / 2));
  /* eight outer items: one thread each, inner loops inline on it */
  memset(&n, 0, sizeof n);
  n.pool = pool;
  n.fail_outer = 8;
  CHECK_OK(ladle_pool_run(pool, 8, nest2_outer_task, &n, &err_));
  for (int o = 0; o < 8; o++) {
    CHECK_EQ_I(n.width[o], 1);
    CHECK(n.inline_[o]);
    CHECK_EQ_I(n.helpers[o], 1);
  }
  CHECK_EQ_I(atomic_load(&n.sum), 8 * (40 * 10 + 39 * 40 / 2));
  /* a failure two levels down reaches the caller, and the pool stays usable */
  memset(&n, 0, sizeof n);
  n.pool = pool;
  n.fail_outer = 1;
  ladle_error e;
  CHECK(ladle_pool_run(pool, 2, nest2_outer_task, &n, &e) == LADLE_ECOMPUTE);
  CHECK(strstr(e.message, "inner item 3 of outer 1") != NULL);
  atomic_long sum;
  atomic_init(&sum, 0);
  CHECK_OK(ladle_pool_run(pool, 1000, add_task, &sum, &err_));
  CHECK_EQ_I(atomic_load(&sum), 999 * 1000 / 2);
  /* one item: it runs on the caller with every thread */
  memset(&n, 0, sizeof n);
  n.pool = pool;
  n.fail_outer = 8;
  CHECK_OK(ladle_pool_run(pool, 1, nest2_outer_task, &n, &err_));
  CHECK_EQ_I(n.width[0], 8);
  CHECK(n.helpers[0] > 1);
  ladle_pool_destroy(pool);
}

/* ladle_column_compact against a row-by-row reference: keep masks of every
 * density over nullable and non-null columns of lengths around byte and word
 * boundaries (its validity goes 8 rows a step, by pext where it is fast, by
 * a table of nibbles otherwise, the last rows one at a time; whole 64-bit
 * words stored). */
TEST(column_compact_matches_reference) {
  const int64_t lens[] = {1, 7, 8, 9, 63, 64, 65, 127, 129, 1000, 4099};
  const int dens[] = {0, 1, 30, 50, 77, 99, 100};
  for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
    for (size_t di = 0; di < sizeof dens / sizeof *dens; di++)
      for (int nullable = 0; nullable < 2; nullable++) {
        int64_t n = lens[li];
        ladle_column c;
        CHECK_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT64), n, nullable, 0, &c, &err_));
        int64_t *v = LADLE_COL_MUT(&c, int64_t);
        uint8_t *keep = malloc((size_t)n);
        int64_t nk = 0;
        for (int64_t i = 0; i < n; i++) {
          v[i] = (int64_t)(test_rand() % 1000);
          if (nullable && test_rand() % 3 == 0)
            LADLE_COL_VALIDITY_MUT(&c)[i >> 3] &= (uint8_t) ~(1u << (i & 7));
          keep[i] = (uint8_t)((int)(test_rand() % 100) < dens[di]);
          nk += keep[i];
        }
        ladle_column_finish_nulls(&c);
        ladle_column o;
        CHECK_OK(ladle_column_compact(&c, keep, nk, &o, &err_));
        CHECK_EQ_I(o.length, nk);
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
          if (!keep[i]) continue;
          CHECK_EQ_I(ladle_column_valid(&o, k), ladle_column_valid(&c, i));
          if (ladle_column_valid(&c, i)) CHECK_EQ_I(((const int64_t *)o.values)[k], v[i]);
          k++;
        }
        free(keep);
        ladle_column_release(&o);
        ladle_column_release(&c);
      }
}

TEST(column_slice_concat_gather_keep_validity) {
  const int32_t v[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const uint8_t valid[] = {1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1};
  colspec c[] = {{"v", LADLE_TYPE_INT32, v, valid}};
  ladle_table *t = make_table(12, 1, c, 0);
  const ladle_column *col = &t->chunks[0].columns[0];
  CHECK_EQ_I(col->null_count, 3);
  ladle_column s1, s2, cat;
  CHECK_OK(ladle_column_slice(col, 3, 6, &s1, &err_)); /* odd offset: bitmap is copied */
  CHECK_OK(ladle_column_slice(col, 8, 4, &s2, &err_));
  CHECK_EQ_I(s1.null_count, 1);
  CHECK(isnull(&s1, 1) && !isnull(&s1, 0));
  ladle_column parts[] = {s1, s2};
  CHECK_OK(ladle_column_concat(parts, 2, &cat, &err_));
  CHECK_EQ_I(cat.length, 10);
  CHECK_EQ_I(cat.null_count, 2);
  CHECK(isnull(&cat, 1) && isnull(&cat, 7) && !isnull(&cat, 6));
  CHECK_EQ_I(geti(&cat, 6), 8);
  const int64_t idx[] = {9, -1, 0};
  ladle_column g;
  CHECK_OK(ladle_column_gather(&cat, idx, 3, &g, &err_));
  CHECK(!isnull(&g, 0) && isnull(&g, 1));
  CHECK_EQ_I(geti(&g, 0), 11);
  CHECK_EQ_I(geti(&g, 2), 3);
  ladle_column_release(&s1);
  ladle_column_release(&s2);
  ladle_column_release(&cat);
  ladle_column_release(&g);
  CHECK_EQ_I(ladle_column_slice(col, 10, 5, &s1, &err_), LADLE_EINVAL);
  ladle_table_release(t);
}

/* A LIST<int32> column: rows [0,1], null, [], [2], [3,4,5] */
static void make_list(ladle_column *out) {
  ladle_dtype lt = ladle_dtype_list(LADLE_TYPE_INT32);
  CHECK_OK(ladle_column_alloc(lt, 5, true, 0, out, &err_));
  const int64_t off[] = {0, 2, 2, 2, 3, 6};
  memcpy(LADLE_COL_MUT(out, int64_t), off, sizeof off);
  ladle_bit_set(LADLE_COL_VALIDITY_MUT(out), 1, false);
  ladle_column_finish_nulls(out);
  ladle_column child;
  CHECK_OK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_INT32), 6, false, 0, &child, &err_));
  for (int i = 0; i < 6; i++) LADLE_COL_MUT(&child, int32_t)[i] = i;
  CHECK_OK(ladle_column_set_child(out, &child, &err_));
}

/* row r of a LIST<int32> as "a,b,c", "null" or "" */
static const char *list_row(const ladle_column *c, int64_t r, char *buf) {
  if (!ladle_column_valid(c, r)) return "null";
  const int64_t *o = c->values;
  buf[0] = 0;
  for (int64_t e = o[r]; e < o[r + 1]; e++)
    sprintf(buf + strlen(buf), "%s%d", e > o[r] ? "," : "", ((const int32_t *)c->child->values)[e]);
  return buf;
}

TEST(list_columns_slice_concat_gather) {
  ladle_column l, s, cat, g;
  char b[64];
  make_list(&l);
  CHECK(ladle_dtype_equal(l.type, ladle_dtype_list(LADLE_TYPE_INT32)));
  CHECK(!ladle_dtype_equal(l.type, ladle_dtype_list(LADLE_TYPE_INT64)));
  CHECK_EQ_I(ladle_dtype_list(LADLE_TYPE_DECIMAL).id, LADLE_TYPE_NULL);
  CHECK_EQ_I(l.null_count, 1);
  CHECK_OK(ladle_column_slice(&l, 3, 2, &s, &err_)); /* offsets start at 2, not 0 */
  CHECK(strcmp(list_row(&s, 1, b), "3,4,5") == 0);
  ladle_column parts[] = {s, l};
  CHECK_OK(ladle_column_concat(parts, 2, &cat, &err_));
  CHECK_EQ_I(cat.length, 7);
  CHECK_EQ_I(cat.child->length, 10);
  const char *want[] = {"2", "3,4,5", "0,1", "null", "", "2", "3,4,5"};
  for (int r = 0; r < 7; r++) CHECK(strcmp(list_row(&cat, r, b), want[r]) == 0);
  const int64_t idx[] = {6, -1, 3, 2, 2};
  CHECK_OK(ladle_column_gather(&cat, idx, 5, &g, &err_));
  const char *want2[] = {"3,4,5", "null", "null", "0,1", "0,1"};
  for (int r = 0; r < 5; r++) CHECK(strcmp(list_row(&g, r, b), want2[r]) == 0);
  CHECK_EQ_I(g.null_count, 2);
  /* the same rows from the two pieces, without putting them together (a
   * slice's offsets start past 0 in a child both pieces share) */
  ladle_pieces px;
  CHECK_OK(ladle_pieces_index(parts, 2, &px, &err_));
  const int64_t idx2[] = {6, -1, 3, 2, 2, 0, 1, 4, 5};
  ladle_column gp;
  CHECK_OK(ladle_column_gather_pieces(parts, &px, idx2, 9, &gp, &err_));
  const char *want3[] = {"3,4,5", "null", "null", "0,1", "0,1", "2", "3,4,5", "", "2"};
  CHECK_EQ_I(gp.length, 9);
  for (int r = 0; r < 9; r++) CHECK(strcmp(list_row(&gp, r, b), want3[r]) == 0);
  CHECK_EQ_I(gp.null_count, 2);
  CHECK_EQ_I(gp.child->length, 12);
  ladle_column_release(&gp);
  ladle_pieces_release(&px);
  ladle_column_release(&l); /* the others keep their elements alive */
  CHECK(strcmp(list_row(&g, 0, b), "3,4,5") == 0);
  ladle_column nulls;
  CHECK_OK(ladle_column_nulls(g.type, 3, &nulls, &err_));
  CHECK(strcmp(list_row(&nulls, 2, b), "null") == 0);
  ladle_column_release(&nulls);
  ladle_column_release(&s);
  ladle_column_release(&cat);
  ladle_column_release(&g);
}

TEST(supertypes_follow_polars) {
  struct {
    ladle_type_id a, b, want; /* COUNT_ = no supertype */
  } cases[] = {{LADLE_TYPE_INT8, LADLE_TYPE_UINT8, LADLE_TYPE_INT16},
               {LADLE_TYPE_UINT32, LADLE_TYPE_INT32, LADLE_TYPE_INT64},
               {LADLE_TYPE_INT64, LADLE_TYPE_UINT64, LADLE_TYPE_COUNT_},
               {LADLE_TYPE_INT16, LADLE_TYPE_FLOAT32, LADLE_TYPE_FLOAT32},
               {LADLE_TYPE_INT32, LADLE_TYPE_FLOAT32, LADLE_TYPE_FLOAT64},
               {LADLE_TYPE_BOOL, LADLE_TYPE_INT8, LADLE_TYPE_INT8},
               {LADLE_TYPE_NULL, LADLE_TYPE_STRING, LADLE_TYPE_STRING},
               {LADLE_TYPE_STRING, LADLE_TYPE_INT8, LADLE_TYPE_COUNT_}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ladle_dtype out;
    bool ok = ladle_type_supertype(T_(cases[i].a), T_(cases[i].b), &out);
    CHECK(ok == (cases[i].want != LADLE_TYPE_COUNT_));
    if (ok) CHECK_EQ_I(out.id, cases[i].want);
  }
  char buf[64];
  CHECK(strcmp(ladle_dtype_name(ladle_dtype_temporal(LADLE_TYPE_DATETIME, LADLE_TIME_NS, "UTC"),
                                buf, sizeof buf),
               "datetime[ns, UTC]") == 0);
}

TEST(arrow_stream_round_trip_shares_buffers) {
  const int64_t v[] = {1, 2, 3, 4, 5};
  const uint8_t vv[] = {1, 0, 1, 1, 1};
  const uint8_t b[] = {1, 0, 1, 1, 0};
  const char *s[] = {"a", NULL, "ccc", "", "ü"};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, vv},
                 {"b", LADLE_TYPE_BOOL, b, NULL},
                 {"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(5, 3, c, 2);
  ladle_plan *p = scan(t);
  ladle_result *r = run_plan(p, 1, 2);
  ladle_plan_destroy(p);
  CHECK(r != NULL);
  if (!r) return;
  struct ArrowArrayStream stream;
  CHECK_OK(ladle_result_export_stream(r, &stream, &err_));
  ladle_result_destroy(r); /* the stream keeps the data alive */
  /* inspect the first batch as a consumer would */
  struct ArrowSchema sch;
  CHECK(stream.get_schema(&stream, &sch) == 0);
  CHECK(strcmp(sch.format, "+s") == 0 && sch.n_children == 3);
  CHECK(strcmp(sch.children[0]->format, "l") == 0 && strcmp(sch.children[1]->format, "b") == 0 &&
        strcmp(sch.children[2]->format, "U") == 0);
  sch.release(&sch);
  ladle_plan *back;
  CHECK_OK(ladle_plan_scan_arrow(&stream, &back, &err_)); /* consumes the stream */
  CHECK(stream.release == NULL);
  ladle_result *r2 = run_plan(back, 1, 0);
  ladle_plan_destroy(back);
  CHECK(r2 != NULL);
  if (r2) {
    CHECK_EQ_I(ladle_result_num_rows(r2), 5);
    ladle_column vc = result_col(r2, "v"), bc = result_col(r2, "b"), sc = result_col(r2, "s");
    CHECK(isnull(&vc, 1) && geti(&vc, 4) == 5);
    CHECK(geti(&bc, 0) == 1 && geti(&bc, 4) == 0);
    CHECK(isnull(&sc, 1) && strcmp(gets_(&sc, 2), "ccc") == 0 && strcmp(gets_(&sc, 4), "ü") == 0);
    ladle_column_release(&vc);
    ladle_column_release(&bc);
    ladle_column_release(&sc);
  }
  ladle_result_destroy(r2);
  ladle_table_release(t);
}

/* The public exports that src/api joins to src/interop: a result's column as a
 * DLPack tensor that outlives the result, its strings as an Arrow stream of
 * views, and that stream scanned back with threads. */
TEST(dlpack_and_string_view_exports_outlive_the_result) {
  const int64_t v[] = {1, 2, 3, 4, 5};
  const double d[] = {0.5, 1.5, 2.5, 3.5, 4.5};
  const uint8_t dv[] = {1, 1, 0, 1, 1};
  const char *s[] = {"a", NULL, "a string longer than twelve bytes", "", "ü"};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, NULL},
                 {"d", LADLE_TYPE_FLOAT64, d, dv},
                 {"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(5, 3, c, 2);
  ladle_plan *p = scan(t);
  ladle_result *r = run_plan(p, 2, 2);
  ladle_plan_destroy(p);
  CHECK(r != NULL);
  if (!r) {
    ladle_table_release(t);
    return;
  }
  DLManagedTensor *m = NULL;
  CHECK(ladle_result_export_dlpack(r, 3, &m, &err_) == LADLE_EINVAL && m == NULL);
  CHECK(ladle_result_export_dlpack(r, 1, &m, &err_) == LADLE_ETYPE && m == NULL &&
        strstr(err_.message, "'d' has 1 nulls") != NULL);
  CHECK(ladle_result_export_dlpack(r, 2, &m, &err_) == LADLE_ETYPE && m == NULL &&
        strstr(err_.message, "'s' is") != NULL);
  CHECK_OK(ladle_result_export_dlpack(r, 0, &m, &err_));
  struct ArrowArrayStream stream;
  CHECK_OK(ladle_result_export_stream_views(r, &stream, &err_));
  ladle_result_destroy(r); /* the tensor and the stream keep the data alive */
  if (m != NULL) {
    CHECK(m->dl_tensor.ndim == 1 && m->dl_tensor.shape[0] == 5);
    CHECK(m->dl_tensor.dtype.code == 0 && m->dl_tensor.dtype.bits == 64);
    CHECK(m->dl_tensor.device.device_type == LADLE_DEVICE_CPU);
    const int64_t *x = m->dl_tensor.data;
    CHECK(x[0] == 1 && x[4] == 5);
    m->deleter(m);
  }
  struct ArrowSchema sch;
  CHECK(stream.get_schema(&stream, &sch) == 0);
  CHECK(sch.n_children == 3 && strcmp(sch.children[2]->format, "vu") == 0);
  sch.release(&sch);
  ladle_plan *back = NULL;
  CHECK_OK(ladle_plan_scan_arrow_threads(&stream, 2, &back, &err_)); /* consumes the stream */
  CHECK(stream.release == NULL);
  CHECK(ladle_plan_scan_arrow_threads(&stream, 2, &back, &err_) == LADLE_EINVAL &&
        strstr(err_.message, "scan_arrow") != NULL);
  ladle_result *r2 = back ? run_plan(back, 1, 0) : NULL;
  ladle_plan_destroy(back);
  CHECK(r2 != NULL);
  if (r2) {
    CHECK_EQ_I(ladle_result_num_rows(r2), 5);
    ladle_column dc = result_col(r2, "d"), sc = result_col(r2, "s");
    CHECK(isnull(&dc, 2) && getf(&dc, 4) == 4.5);
    CHECK(isnull(&sc, 1) && strcmp(gets_(&sc, 2), "a string longer than twelve bytes") == 0 &&
          strcmp(gets_(&sc, 3), "") == 0 && strcmp(gets_(&sc, 4), "ü") == 0);
    ladle_column_release(&dc);
    ladle_column_release(&sc);
  }
  ladle_result_destroy(r2);
  ladle_table_release(t);
}

TEST(table_builder_rejects_mismatched_columns) {
  ladle_table_builder *b;
  const int64_t v[] = {1, 2};
  CHECK_OK(ladle_table_builder_create(&b, &err_));
  CHECK_OK(ladle_table_builder_add(b, "a", T_(LADLE_TYPE_INT64), 2, v, NULL, &err_));
  CHECK(ladle_table_builder_add(b, "b", T_(LADLE_TYPE_INT64), 1, v, NULL, &err_) == LADLE_EINVAL);
  CHECK(strstr(err_.message, "'b'") != NULL);
  CHECK(ladle_table_builder_add(b, "a", T_(LADLE_TYPE_INT64), 2, v, NULL, &err_) == LADLE_EINVAL);
  ladle_table_builder_destroy(b);
}

static void *failing_alloc(void *ctx, size_t size) {
  (void)ctx;
  (void)size;
  return NULL;
}
static void failing_free(void *ctx, void *p, size_t size) {
  (void)ctx;
  (void)p;
  (void)size;
}

TEST(allocation_failure_is_a_status) {
  ladle_allocator a = {failing_alloc, failing_free, NULL, LADLE_DEVICE_CPU, 0, "failing"};
  ladle_buffer *b = NULL;
  ladle_status st = ladle_buffer_alloc(&a, 1 << 20, &b, &err_);
  CHECK(st == LADLE_ENOMEM && b == NULL);
  CHECK(strstr(err_.message, "failing") != NULL);
  /* an absurd size from the host allocator fails cleanly too */
  st = ladle_buffer_alloc(NULL, (size_t)1 << 62, &b, &err_);
  CHECK(st == LADLE_ENOMEM && b == NULL);
}

/* ------------------------------------------------------- memory resources */

typedef struct mr_job {
  atomic_long failed;
} mr_job;

/* Each item takes a 1 MiB buffer and a 64 KiB scratch array from the thread's
 * current resource (the submitter's, handed over by the pool), and gives them
 * back; with the limit below, some are refused. */
static ladle_status mr_task(void *ctx, size_t i, ladle_error *err) {
  mr_job *j = ctx;
  (void)i;
  if (ladle_mr_current() == NULL) return ladle_err_set(err, LADLE_EINVAL, "no current resource");
  ladle_buffer *b = NULL;
  ladle_error e;
  if (ladle_buffer_alloc(NULL, 1 << 20, &b, &e) != LADLE_OK) {
    if (strstr(e.message, "memory limit exceeded") == NULL)
      return ladle_err_set(err, LADLE_EINVAL, "%s", e.message);
    atomic_fetch_add(&j->failed, 1);
    return LADLE_OK;
  }
  void *s = ladle_scratch_alloc(64 << 10, true);
  if (s != NULL) ((char *)s)[0] = 1;
  ladle_scratch_free(s);
  ladle_buffer_release(b);
  return LADLE_OK;
}

TEST(memory_resource_counts_limits_and_follows_pool_tasks) {
  ladle_mr *mr;
  CHECK(ladle_mr_create(NULL, -1, &mr, &err_) == LADLE_EINVAL);
  CHECK_OK(ladle_mr_create(NULL, 3 << 20, &mr, &err_));
  ladle_mr *was = ladle_mr_set(mr);
  /* counted: a buffer, a scratch array (with its header), then both given back */
  ladle_buffer *b = NULL;
  CHECK_OK(ladle_buffer_alloc(NULL, 1 << 20, &b, &err_));
  CHECK_EQ_I(ladle_mr_bytes(mr), 1 << 20);
  void *s = ladle_scratch_alloc(1000, false);
  CHECK(s != NULL);
  CHECK(ladle_mr_bytes(mr) > (1 << 20) + 1000);
  ladle_scratch_free(s);
  CHECK_EQ_I(ladle_mr_bytes(mr), 1 << 20);
  /* refused past the limit, with the sizes named; nothing is counted for it */
  ladle_buffer *big = NULL;
  ladle_error e;
  CHECK(ladle_buffer_alloc(NULL, 4 << 20, &big, &e) == LADLE_ENOMEM && big == NULL);
  CHECK(strstr(e.message, "memory limit exceeded") != NULL);
  CHECK(strstr(e.message, "4194304 bytes") != NULL && strstr(e.message, "3145728") != NULL);
  CHECK(ladle_scratch_alloc(4 << 20, false) == NULL);
  CHECK(LADLE_OOM(&e, "a hash table") == LADLE_ENOMEM &&
        strstr(e.message, "a hash table needed") != NULL);
  CHECK(LADLE_OOM(&e, "x") == LADLE_ENOMEM &&
        strcmp(e.message, "out of memory: x") == 0); /* once */
  CHECK_EQ_I(ladle_mr_bytes(mr), 1 << 20);
  CHECK(ladle_mr_peak(mr) >= (1 << 20) + 1000);
  /* pool workers allocate from the submitter's resource; at most 2 of their
   * 1 MiB buffers fit beside the one held here */
  ladle_pool *pool;
  CHECK_OK(ladle_pool_create(4, &pool, &err_));
  mr_job j;
  atomic_init(&j.failed, 0);
  CHECK_OK(ladle_pool_run(pool, 400, mr_task, &j, &err_));
  CHECK(ladle_mr_peak(mr) <= 3 << 20);
  CHECK_EQ_I(ladle_mr_bytes(mr), 1 << 20);
  ladle_pool_destroy(pool);
  /* a block outlives its resource's owner: the resource goes with the last block */
  ladle_mr_set(was);
  ladle_mr_release(mr);
  memset(b->data, 7, 1 << 20);
  ladle_buffer_release(b);
  /* without a current resource, buffers come from the host allocator uncounted */
  CHECK(ladle_mr_current() == was);
}

/* The resource's own cache of big blocks (buffer.c): reused while its owner
 * holds it, unmapped when the owner releases it (an engine destroyed), and
 * never kept afterwards for blocks of results that outlive it. Sanitizer
 * builds map and unmap every block (nothing is cached). */
#if defined(__SANITIZE_ADDRESS__)
#define BIG_CACHED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIG_CACHED 0
#endif
#endif
#ifndef BIG_CACHED
#if defined(__linux__)
#define BIG_CACHED 1
#else
#define BIG_CACHED 0
#endif
#endif
TEST(memory_resource_caches_big_blocks_until_released) {
  ladle_mr *mr;
  CHECK_OK(ladle_mr_create(NULL, 0, &mr, &err_));
  ladle_mr *was = ladle_mr_set(mr);
  ladle_buffer *a = NULL, *b = NULL, *live = NULL;
  CHECK_OK(ladle_buffer_alloc(NULL, 4 << 20, &a, &err_));
  CHECK_OK(ladle_buffer_alloc(NULL, 3 << 20, &live, &err_));
  memset(a->data, 1, 4 << 20);
  void *at = a->data;
  CHECK_EQ_I(ladle_mr_cached(mr), 0);
  ladle_buffer_release(a);
  if (BIG_CACHED) {
    CHECK(ladle_mr_cached(mr) >= 4 << 20);
    CHECK_OK(ladle_buffer_alloc(NULL, 4 << 20, &b, &err_));
    CHECK(b->data == at); /* the same block again */
    CHECK_EQ_I(ladle_mr_cached(mr), 0);
    ladle_buffer_release(b);
    void *s = ladle_scratch_alloc((4 << 20) - 4096, true); /* the same size class */
    CHECK(s != NULL && ((const char *)s)[100] == 0);       /* zeroed though reused */
    ladle_scratch_free(s);
    CHECK(ladle_mr_cached(mr) >= 4 << 20);
  } else {
    CHECK_EQ_I(ladle_mr_cached(mr), 0);
  }
  /* another resource does not see this one's blocks */
  ladle_mr *other;
  CHECK_OK(ladle_mr_create(NULL, 0, &other, &err_));
  CHECK_EQ_I(ladle_mr_cached(other), 0);
  ladle_mr_release(other);
  /* the owner lets go with a block still alive: the cache is emptied now, and
   * the live block goes back to the system when freed */
  ladle_mr_set(was);
  ladle_mr *keep = ladle_mr_ref(mr);
  ladle_mr_release(mr);
  CHECK_EQ_I(ladle_mr_cached(keep), 0);
  memset(live->data, 2, 3 << 20);
  ladle_buffer_release(live);
  CHECK_EQ_I(ladle_mr_cached(keep), 0);
  CHECK_EQ_I(ladle_mr_bytes(keep), 0);
  ladle_mr_unref(keep);
}

/* Morsel-sized blocks (from 128 KiB) are kept too, each class on its own list,
 * the last released given out first, and no more than the budget is held:
 * past it the blocks released longest ago go back to the system. */
TEST(memory_resource_cache_keeps_morsel_blocks_within_budget) {
  setenv("LADLE_BUFFER_CACHE_MB", "2", 1);
  ladle_mr *mr;
  CHECK_OK(ladle_mr_create(NULL, 0, &mr, &err_));
  unsetenv("LADLE_BUFFER_CACHE_MB");
  ladle_mr *was = ladle_mr_set(mr);
  ladle_buffer *b[10] = {NULL};
  void *at[10];
  CHECK_OK(ladle_buffer_alloc(NULL, 300 << 10, &b[0], &err_));
  at[0] = b[0]->data;
  ladle_buffer_release(b[0]);
  if (BIG_CACHED) {
    CHECK(ladle_mr_cached(mr) >= 300 << 10);
    CHECK_OK(ladle_buffer_alloc(NULL, 290 << 10, &b[0], &err_)); /* the same class */
    CHECK(b[0]->data == at[0]);
    CHECK_EQ_I(ladle_mr_cached(mr), 0);
    ladle_buffer_release(b[0]);
  }
  for (int i = 0; i < 10; i++) {
    CHECK_OK(ladle_buffer_alloc(NULL, 512 << 10, &b[i], &err_));
    memset(b[i]->data, i, 512 << 10);
    at[i] = b[i]->data;
  }
  for (int i = 0; i < 10; i++) ladle_buffer_release(b[i]);
  if (BIG_CACHED) {
    int64_t held = ladle_mr_cached(mr);
    CHECK(held <= 2 << 20);
    CHECK(held >= 1 << 20);
    CHECK_OK(ladle_buffer_alloc(NULL, 512 << 10, &b[0], &err_));
    CHECK(b[0]->data == at[9]); /* the last released */
    ladle_buffer_release(b[0]);
  } else {
    CHECK_EQ_I(ladle_mr_cached(mr), 0);
  }
  ladle_mr_set(was);
  ladle_mr_release(mr);
}

/* The end of a query keeps the blocks released since the last query ended and
 * unmaps the older ones no query took again: an idle engine holds what its
 * last query freed, not the sum over every query it ran. */
TEST(memory_resource_query_end_drops_blocks_no_query_took) {
  ladle_mr *mr;
  CHECK_OK(ladle_mr_create(NULL, 0, &mr, &err_));
  ladle_mr *was = ladle_mr_set(mr);
  ladle_buffer *a = NULL, *b = NULL, *c = NULL;
  /* query 1 frees a 1 MiB and a 4 MiB block */
  CHECK_OK(ladle_buffer_alloc(NULL, 1 << 20, &a, &err_));
  CHECK_OK(ladle_buffer_alloc(NULL, 4 << 20, &b, &err_));
  void *b_at = b->data;
  ladle_buffer_release(a);
  ladle_buffer_release(b);
  ladle_mr_query_done(mr);
  if (BIG_CACHED) CHECK(ladle_mr_cached(mr) >= 5 << 20); /* both kept for the next */
  /* query 2 takes the 4 MiB block again and frees it; the 1 MiB one is left */
  CHECK_OK(ladle_buffer_alloc(NULL, 4 << 20, &b, &err_));
  if (BIG_CACHED) CHECK(b->data == b_at);
  ladle_buffer_release(b);
  ladle_mr_query_done(mr);
  if (BIG_CACHED) {
    int64_t held = ladle_mr_cached(mr);
    CHECK(held >= 4 << 20); /* the block query 2 released */
    CHECK(held < 5 << 20);  /* the 1 MiB one is gone */
  }
  /* a block freed between queries (a result dropped) counts for the next */
  CHECK_OK(ladle_buffer_alloc(NULL, 2 << 20, &c, &err_));
  ladle_mr_query_done(mr); /* query 3 takes nothing: the 4 MiB block goes */
  ladle_buffer_release(c);
  if (BIG_CACHED) {
    int64_t held = ladle_mr_cached(mr);
    CHECK(held >= 2 << 20 && held < 4 << 20);
  }
  ladle_mr_query_done(mr); /* query 4 could have taken it: kept */
  if (BIG_CACHED) CHECK(ladle_mr_cached(mr) >= 2 << 20);
  ladle_mr_query_done(mr); /* nor did query 5 */
  CHECK_EQ_I(ladle_mr_cached(mr), 0);
  ladle_mr_query_done(NULL); /* passes */
  ladle_mr_set(was);
  ladle_mr_release(mr);
}

/* ------------------------------------------------------------------ UTF-8 */

TEST(utf8_edge_cases) {
  static const struct {
    const char *s;
    int64_t bad; /* -1: valid */
  } cases[] = {
      {"", -1},
      {"plain ascii", -1},
      {"\x7f", -1},
      {"\xc2\x80", -1},         /* U+0080, the first 2-byte */
      {"\xdf\xbf", -1},         /* U+07FF, the last 2-byte */
      {"\xe0\xa0\x80", -1},     /* U+0800 */
      {"\xed\x9f\xbf", -1},     /* U+D7FF, just below the surrogates */
      {"\xee\x80\x80", -1},     /* U+E000, just above */
      {"\xef\xbf\xbf", -1},     /* U+FFFF */
      {"\xf0\x90\x80\x80", -1}, /* U+10000 */
      {"\xf4\x8f\xbf\xbf", -1}, /* U+10FFFF, the last code point */
      {"a\xc3\xa9z\xe2\x82\xac\xf0\x9f\x98\x80", -1},
      {"\x80", 0}, /* a lone continuation byte */
      {"a\xbf", 1},
      {"\xc0\x80", 0},     /* overlong NUL */
      {"\xc1\xbf", 0},     /* overlong 2-byte */
      {"\xe0\x80\x80", 0}, /* overlong 3-byte */
      {"\xe0\x9f\xbf", 0},
      {"\xf0\x80\x80\x80", 0}, /* overlong 4-byte */
      {"\xf0\x8f\xbf\xbf", 0},
      {"\xed\xa0\x80", 0},       /* U+D800, a surrogate */
      {"\xed\xbf\xbf", 0},       /* U+DFFF */
      {"ab\xf4\x90\x80\x80", 2}, /* U+110000, past the last code point */
      {"\xf5\x80\x80\x80", 0},
      {"\xff", 0},
      {"\xfe\xff", 0},
      {"ok\xff\xfe", 2},
      {"\xc3", 0}, /* cut off at the end, each length */
      {"x\xe2\x82", 1},
      {"xy\xf0\x9f\x98", 2},
      {"\xc3(", 0}, /* a lead without its continuation */
      {"\xe2\x28\xa1", 0},
      {"\xe2\x82\x28", 0},
      {"\xf0\x28\x8c\xbc", 0},
      {"\xf0\x90\x28\xbc", 0},
      {"\xf0\x90\x8c\x28", 0},
      {"\xc3\xa9\xa9", 2}, /* one continuation too many */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const uint8_t *s = (const uint8_t *)cases[k].s;
    int64_t n = (int64_t)strlen(cases[k].s);
    int64_t got = ladle_utf8_check(s, n);
    if (got != cases[k].bad) fprintf(stderr, "  case %zu: got %lld\n", k, (long long)got);
    CHECK_EQ_I(got, cases[k].bad);
    CHECK_EQ_I(utf8_reference(s, n), cases[k].bad);
  }
  /* each case at every offset of ASCII text of every length up to 80, so that
   * the 32- and 8-byte steps meet it at each alignment and near each end */
  uint8_t buf[128];
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int64_t m = (int64_t)strlen(cases[k].s);
    for (int64_t total = m; total <= 80; total += 7)
      for (int64_t at = 0; at + m <= total; at++) {
        memset(buf, 'a', sizeof buf);
        memcpy(buf + at, cases[k].s, (size_t)m);
        int64_t want = utf8_reference(buf, total), got = ladle_utf8_check(buf, total);
        CHECK_EQ_I(got, want);
        CHECK_EQ_I(got, cases[k].bad < 0 ? -1 : at + cases[k].bad);
      }
  }
  /* every sequence of up to three bytes, and four-byte ones over every lead
   * byte and the continuation boundaries, against the reference */
  static const uint8_t edges[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0,
                                  0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
  int64_t mismatches = 0, checked = 0;
  for (uint32_t v = 0; v < (1u << 24); v++) {
    uint8_t b[3] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16)};
    for (int64_t len = 1; len <= 3; len++) {
      if (len < 3 && (v >> (8 * len)) != 0) continue;
      mismatches += ladle_utf8_check(b, len) != utf8_reference(b, len);
      checked++;
    }
  }
  for (int lead = 0xc0; lead <= 0xff; lead++)
    for (int c1 = 0; c1 < 256; c1++)
      for (size_t e2 = 0; e2 < sizeof edges; e2++)
        for (size_t e3 = 0; e3 < sizeof edges; e3++) {
          uint8_t b[4] = {(uint8_t)lead, (uint8_t)c1, edges[e2], edges[e3]};
          mismatches += ladle_utf8_check(b, 4) != utf8_reference(b, 4);
          checked++;
        }
  CHECK_EQ_I(mismatches, 0);
  CHECK(checked > (1 << 24));
  /* an ASCII prefix of any length */
  memset(buf, 'a', sizeof buf);
  for (int64_t n = 0; n <= 100; n++) {
    CHECK_EQ_I(ladle_ascii_prefix(buf, n), n);
    if (n < 100) {
      buf[n] = 0x80;
      CHECK_EQ_I(ladle_ascii_prefix(buf, 100), n);
      buf[n] = 'a';
    }
  }
}

TEST(utf8_strings_split_inside_a_character) {
  /* "é" is C3 A9: valid as one string, invalid split in two even though the
   * concatenation is valid; empty strings and offsets not starting at 0 */
  const uint8_t chars[] =
      "xx\xc3\xa9"
      "ab\xc3\xa9";
  int64_t whole[] = {2, 2, 4, 4, 8};
  CHECK_EQ_I(ladle_utf8_check_strings(chars, whole, 4), -1);
  int64_t split[] = {2, 3, 4, 8};
  CHECK_EQ_I(ladle_utf8_check_strings(chars, split, 3), 0);
  int64_t split_late[] = {2, 4, 4, 7, 8};
  CHECK_EQ_I(ladle_utf8_check_strings(chars, split_late, 4), 2);
  int64_t ascii[] = {0, 1, 2};
  CHECK_EQ_I(ladle_utf8_check_strings(chars, ascii, 2), -1);
  CHECK_EQ_I(ladle_utf8_check_strings(chars, ascii, 0), -1);
  const uint8_t bad[] = "okok\xff\xfex";
  int64_t o[] = {0, 2, 6, 7};
  CHECK_EQ_I(ladle_utf8_check_strings(bad, o, 3), 1);
}
