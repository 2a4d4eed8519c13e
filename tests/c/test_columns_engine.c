/* test_columns_engine.c — queries on the column kernels alone (the GPU's
 * path: exec_state.columns), against the same plans on the CPU engine: on
 * the CPU's table under LADLE_COLUMN_KERNELS=1 always, and on the GPU where
 * one is (LADLE_REQUIRE_CUDA=1 makes its absence a failure). Filters,
 * projections, whole-column aggregations, group_by (and a sort of its
 * groups on the host: a plan partly on the device), sorts and top-k, joins
 * (left, and full with coalesced keys and maintain_order), a plan
 * the path lacks (refused
 * with the node's name, then run on the host side), scanned columns kept for
 * the next query, and running out of memory. */
#include <math.h>
#include <stdlib.h>

#include "harness.h"

enum { N = 1000003 };

static ladle_table *table_(void) {
  static int64_t i64[N];
  static int32_t i32[N], d[N];
  static double f64[N], fn[N];
  static uint8_t fnv[N], b[N];
  static const char *s[N];
  static const char *words[] = {"apple", "", "kiwi", "a string longer than twelve bytes"};
  uint64_t x = 42;
  for (int64_t i = 0; i < N; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t r = x >> 11;
    i64[i] = (int64_t)(r * 2654435761ULL - (r << 20));
    i32[i] = (int32_t)(r % 2001) - 1000;
    d[i] = 8000 + (int32_t)(r % 4000);
    f64[i] = (double)(r % 100000) / 50000.0 - 1.0;
    if (r % 97 == 0) f64[i] = NAN;
    fn[i] = (double)((r >> 7) % 1000) / 7.0;
    fnv[i] = (r >> 17) % 5 != 0;
    b[i] = (r >> 23) & 1;
    s[i] = words[(r >> 29) % 4];
  }
  colspec c[] = {{"i64", LADLE_TYPE_INT64, i64, NULL}, {"i32", LADLE_TYPE_INT32, i32, NULL},
                 {"d", LADLE_TYPE_DATE, d, NULL},      {"f64", LADLE_TYPE_FLOAT64, f64, NULL},
                 {"fn", LADLE_TYPE_FLOAT64, fn, fnv},  {"b", LADLE_TYPE_BOOL, b, NULL},
                 {"s", LADLE_TYPE_STRING, s, NULL}};
  return make_table(N, 7, c, 100000); /* partitions, concatenated on the way in */
}

static ladle_expr *date_lit(int32_t v) {
  return ladle_expr_lit_temporal(v, ladle_dtype_make(LADLE_TYPE_DATE));
}

/* the plans the path runs */
static ladle_plan *plan_(ladle_table *t, int which) {
  ladle_plan *p = NULL, *f = NULL;
  switch (which) {
    case 0:
      CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("i64"), LIT(0)), &p, &err_));
      break;
    case 1: {
      ladle_expr *pred = BIN(
          OR, BIN(AND, BIN(GE, COL("f64"), LITF(0.25)), BIN(LT, COL("i32"), LIT(100))), COL("b"));
      CHECK_OK(ladle_plan_filter(scan(t), pred, &f, &err_));
      ladle_expr *e[] = {AS(BIN(ADD, BIN(MUL, COL("i64"), LIT(3)), COL("i64")), "x"),
                         AS(BIN(SUB, COL("f64"), BIN(MUL, COL("fn"), LITF(2.5))), "y"),
                         AS(BIN(SUB, LITF(1.5), COL("fn")), "z"),
                         COL("s"),
                         COL("d"),
                         AS(BIN(GT, COL("f64"), COL("fn")), "c")};
      CHECK_OK(ladle_plan_select(f, 6, e, &p, &err_));
      break;
    }
    case 2: {
      ladle_func_opts o = {0};
      o.closed = LADLE_CLOSED_LEFT;
      ladle_expr *a[] = {COL("d"), date_lit(8766), date_lit(9131)};
      ladle_expr *btw = ladle_expr_func(LADLE_FN_IS_BETWEEN, 3, a, &o);
      CHECK_OK(ladle_plan_filter(scan(t), BIN(AND, btw, BIN(LT, COL("i32"), LIT(240))), &f, &err_));
      ladle_expr *e[] = {AS(AGG(SUM, BIN(MUL, COL("f64"), COL("fn"))), "rev"),
                         AS(AGG(SUM, COL("i64")), "isum"),
                         AS(AGG(MIN, COL("f64")), "fmin"),
                         AS(AGG(MAX, COL("fn")), "fmax"),
                         AS(AGG(MAX, COL("d")), "dmax"),
                         AS(AGG(COUNT, COL("fn")), "cnt"),
                         AS(ladle_expr_len(), "len"),
                         AS(AGG(SUM, COL("b")), "bsum"),
                         AS(AGG(MEAN, COL("fn")), "fmean"),
                         AS(AGG(MEAN, COL("i32")), "imean")};
      CHECK_OK(ladle_plan_select(f, 10, e, &p, &err_));
      break;
    }
    case 3: /* keeps nothing */
      CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("i32"), LIT(5000)), &f, &err_));
      ladle_expr *e[] = {AS(AGG(SUM, COL("f64")), "s"), AS(AGG(MAX, COL("i32")), "m"),
                         AS(ladle_expr_len(), "len")};
      CHECK_OK(ladle_plan_select(f, 3, e, &p, &err_));
      break;
    case 4: { /* TPC-H q1's shape: a group_by on the device, its groups sorted on the host */
      CHECK_OK(ladle_plan_filter(scan(t), BIN(LE, COL("d"), date_lit(11000)), &f, &err_));
      ladle_expr *k[] = {COL("s"), COL("b")};
      ladle_expr *a[] = {AS(AGG(SUM, COL("fn")), "sum_fn"),
                         AS(AGG(SUM, BIN(MUL, COL("fn"), BIN(SUB, LITF(1.0), COL("f64")))), "disc"),
                         AS(AGG(MEAN, COL("i32")), "avg_i32"),
                         AS(AGG(MEAN, COL("fn")), "avg_fn"),
                         AS(AGG(COUNT, COL("fn")), "cnt"),
                         AS(ladle_expr_len(), "len")};
      ladle_plan *g;
      CHECK_OK(ladle_plan_group_by(f, 2, k, 6, a, false, &g, &err_));
      ladle_expr *by[] = {COL("s"), COL("b")};
      bool desc[] = {false, true}, nl[] = {false, false};
      CHECK_OK(ladle_plan_sort(g, 2, by, desc, nl, true, -1, &p, &err_));
      break;
    }
    case 5: { /* 2001 groups in the order of their first rows */
      ladle_expr *k[] = {COL("i32")};
      ladle_expr *a[] = {AS(AGG(SUM, COL("f64")), "sum_f64"), AS(AGG(MIN, COL("d")), "dmin"),
                         AS(AGG(MAX, COL("i64")), "imax"),    AS(AGG(MAX, COL("fn")), "fmax"),
                         AS(AGG(SUM, COL("b")), "bsum"),      AS(ladle_expr_len(), "len")};
      CHECK_OK(ladle_plan_group_by(scan(t), 1, k, 6, a, true, &p, &err_));
      break;
    }
    case 6: { /* a sort of every row: ties in i32 broken by fn, then the rows' order */
      ladle_expr *by[] = {COL("i32"), COL("fn")};
      bool desc[] = {true, false}, nl[] = {false, true};
      CHECK_OK(ladle_plan_sort(scan(t), 2, by, desc, nl, true, -1, &p, &err_));
      break;
    }
    case 7: { /* top-k over a filter, NaN among the keys */
      CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("i32"), LIT(-500)), &f, &err_));
      ladle_expr *by[] = {BIN(MUL, COL("f64"), LITF(-2.0))};
      bool desc[] = {false}, nl[] = {false};
      CHECK_OK(ladle_plan_sort(f, 1, by, desc, nl, true, 1000, &p, &err_));
      break;
    }
    case 8: { /* a left join of a filter to a group_by of the same table (a dimension) */
      CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("fn"), LITF(20.0)), &f, &err_));
      ladle_expr *k[] = {COL("i32")};
      ladle_expr *a[] = {AS(AGG(SUM, COL("f64")), "tot"), AS(ladle_expr_len(), "cnt")};
      ladle_plan *g;
      CHECK_OK(ladle_plan_group_by(scan(t), 1, k, 2, a, true, &g, &err_));
      ladle_plan *gf;
      CHECK_OK(ladle_plan_filter(g, BIN(GT, COL("i32"), LIT(-900)), &gf, &err_));
      ladle_expr *lo[] = {COL("i32")}, *ro[] = {COL("i32")};
      ladle_join_opts jo = {LADLE_JOIN_LEFT, false, true, NULL, NULL, LADLE_JOIN_ORDER_NONE};
      CHECK_OK(ladle_plan_join(f, gf, 1, lo, ro, &jo, &p, &err_));
      break;
    }
    case 9: { /* a full join of two group_bys on (i32, s), coalesced, right rows kept in
                 order of their left rows */
      CHECK_OK(ladle_plan_filter(scan(t), BIN(LT, COL("i32"), LIT(500)), &f, &err_));
      ladle_expr *k1[] = {COL("i32"), COL("b")}, *k2[] = {COL("i32"), COL("b")};
      ladle_expr *a1[] = {AS(AGG(MAX, COL("d")), "dmax")};
      ladle_expr *a2[] = {AS(AGG(MIN, COL("fn")), "fmin")};
      ladle_plan *g1, *g2, *f2;
      CHECK_OK(ladle_plan_group_by(f, 2, k1, 1, a1, true, &g1, &err_));
      CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("f64"), LITF(0.0)), &f2, &err_));
      CHECK_OK(ladle_plan_group_by(f2, 2, k2, 1, a2, true, &g2, &err_));
      ladle_expr *lo[] = {COL("i32"), COL("b")}, *ro[] = {COL("i32"), COL("b")};
      ladle_join_opts jo = {LADLE_JOIN_FULL, false, true, NULL, NULL, LADLE_JOIN_ORDER_RIGHT_LEFT};
      CHECK_OK(ladle_plan_join(g1, g2, 2, lo, ro, &jo, &p, &err_));
      break;
    }
  }
  return p;
}

/* Results a and b equal: ints, dates, bools and strings exactly, floats to
 * the last bits (a GPU adds them in another order), NaN as NaN. */
static void same_results(ladle_result *a, ladle_result *b, int which) {
  CHECK(a != NULL && b != NULL);
  if (a == NULL || b == NULL) return;
  CHECK_EQ_I(ladle_result_num_rows(a), ladle_result_num_rows(b));
  CHECK_EQ_I((int64_t)ladle_result_num_columns(a), (int64_t)ladle_result_num_columns(b));
  for (size_t i = 0; i < ladle_result_num_columns(a); i++) {
    const char *name = ladle_result_column_name(a, i);
    CHECK(strcmp(name, ladle_result_column_name(b, i)) == 0);
    CHECK(ladle_dtype_equal(ladle_result_column_type(a, i), ladle_result_column_type(b, i)));
    ladle_column x = result_col(a, name), y = result_col(b, name);
    CHECK_EQ_I(x.length, y.length);
    int64_t bad = 0;
    for (int64_t r = 0; r < x.length && r < y.length; r++) {
      bool ok;
      if (isnull(&x, r) || isnull(&y, r))
        ok = isnull(&x, r) && isnull(&y, r);
      else if (x.type.id == LADLE_TYPE_STRING)
        ok = strcmp(gets_(&x, r), gets_(&y, r)) == 0;
      else if (x.type.id == LADLE_TYPE_BOOL)
        ok = (((const uint8_t *)x.values)[r] != 0) == (((const uint8_t *)y.values)[r] != 0);
      else if (ladle_type_is_float(x.type.id)) {
        double u = getf(&x, r), v = getf(&y, r);
        ok = (isnan(u) && isnan(v)) || u == v || fabs(u - v) <= 1e-9 * fmax(fabs(u), fabs(v));
      } else
        ok = geti(&x, r) == geti(&y, r);
      if (!ok && bad++ < 3)
        fprintf(stderr, "  plan %d column %s row %lld differs\n", which, name, (long long)r);
    }
    CHECK_EQ_I(bad, 0);
    ladle_column_release(&x);
    ladle_column_release(&y);
  }
}

/* The plans on engine e (the column kernels) against the CPU engine. */
static void conforms(ladle_engine *e, ladle_table *t) {
  ladle_engine_opts co = {LADLE_DEVICE_CPU, 0, 2, 0, 0, NULL};
  ladle_engine *cpu;
  CHECK_OK(ladle_engine_create(&co, &cpu, &err_));
  CHECK(!ladle_engine_columns(cpu) && ladle_engine_columns(e));
  for (int w = 0; w < 10; w++) {
    ladle_plan *p = plan_(t, w);
    ladle_result *a = NULL, *b = NULL;
    CHECK_OK(ladle_engine_execute(cpu, p, &a, &err_));
    CHECK_OK(ladle_engine_execute(e, p, &b, &err_));
    same_results(a, b, w);
    ladle_result_destroy(a);
    ladle_result_destroy(b);
    ladle_plan_destroy(p);
  }
  /* the same scan again: its columns were kept */
  ladle_engine_stats s0 = ladle_engine_get_stats(e);
  ladle_plan *p = plan_(t, 0);
  ladle_result *r = NULL;
  CHECK_OK(ladle_engine_execute(e, p, &r, &err_));
  ladle_result_destroy(r);
  ladle_plan_destroy(p);
  ladle_engine_stats s1 = ladle_engine_get_stats(e);
  CHECK_EQ_I(s1.device_cache_hits - s0.device_cache_hits, 7);
  CHECK_EQ_I(s1.device_cache_misses, s0.device_cache_misses);
  CHECK(s1.device_cache_bytes > 0);
  /* a distinct runs on the column kernels (group_keys, first rows in order) */
  const char *subset[] = {"i32"};
  ladle_result *a = NULL, *b = NULL;
  for (int keep = LADLE_KEEP_ANY; keep <= LADLE_KEEP_NONE; keep++) {
    CHECK_OK(ladle_plan_distinct(scan(t), 1, subset, (ladle_keep)keep, true, &p, &err_));
    CHECK_OK(ladle_engine_execute(cpu, p, &a, &err_));
    CHECK_OK(ladle_engine_execute(e, p, &b, &err_));
    same_results(a, b, 9);
    ladle_result_destroy(a);
    ladle_result_destroy(b);
    ladle_plan_destroy(p);
  }
  /* a union has no column-kernel path: refused by name before it runs
   * (the scans under it do not reduce their rows: nothing is left on the
   * device), then run on the engine's host side */
  ladle_plan *two[2] = {scan(t), scan(t)};
  CHECK_OK(ladle_plan_union(2, two, &p, &err_));
  CHECK(ladle_engine_execute(e, p, &r, &err_) == LADLE_ENOTSUP);
  CHECK(strstr(err_.message, "UNION") != NULL);
  CHECK_OK(ladle_engine_execute(cpu, p, &a, &err_));
  CHECK_OK(ladle_engine_execute_host(e, p, NULL, &b, &err_));
  same_results(a, b, 9);
  ladle_result_destroy(a);
  ladle_result_destroy(b);
  ladle_plan_destroy(p);
  ladle_engine_destroy(cpu);
}

TEST(column_kernels_on_the_cpu_table_equal_the_cpu_engine) {
  ladle_table *t = table_();
  setenv("LADLE_COLUMN_KERNELS", "1", 1);
  ladle_engine_opts o = {LADLE_DEVICE_CPU, 0, 2, 0, 0, NULL};
  ladle_engine *e;
  CHECK_OK(ladle_engine_create(&o, &e, &err_));
  unsetenv("LADLE_COLUMN_KERNELS");
  conforms(e, t);
  ladle_engine_destroy(e);
  ladle_table_release(t);
}

TEST(gpu_engine_equals_the_cpu_engine_or_says_why_not) {
  ladle_engine_opts o = {LADLE_DEVICE_CUDA, 0, 2, 0, 0, NULL};
  ladle_engine *e = NULL;
  ladle_status st = ladle_engine_create(&o, &e, &err_);
  const char *req = getenv("LADLE_REQUIRE_CUDA");
  /* the devices a GPU engine can use: some exactly when one could be made */
  ladle_device_info dev[8];
  size_t ndev = 99;
  ladle_error derr;
  ladle_status dst = ladle_cuda_devices(dev, 8, &ndev, &derr);
  CHECK((dst == LADLE_OK && ndev > 0) == (st == LADLE_OK));
  if (dst != LADLE_OK) CHECK(ndev == 0 && strlen(derr.message) > 0);
  for (size_t i = 0; dst == LADLE_OK && i < ndev && i < 8; i++)
    CHECK(dev[i].id == (int)i && strlen(dev[i].name) > 0 && dev[i].memory_bytes > 0);
  CHECK(ladle_cuda_initialized() || dst == LADLE_ENOTSUP);
  if (st != LADLE_OK) {
    CHECK(strstr(err_.message, "cuda") != NULL);
    printf("SKIP cuda: %s\n", err_.message);
    if (req != NULL && strcmp(req, "1") == 0) failures_++;
    return;
  }
  ladle_table *t = table_();
  conforms(e, t);
  /* out of device memory: a clean error naming the sizes; the engine stays usable */
  ladle_engine_opts small = {LADLE_DEVICE_CUDA, 0, 2, 0, 1 << 20, NULL};
  ladle_engine *e2;
  CHECK_OK(ladle_engine_create(&small, &e2, &err_));
  ladle_plan *p = plan_(t, 1);
  ladle_result *r = NULL;
  CHECK(ladle_engine_execute(e2, p, &r, &err_) == LADLE_ENOMEM);
  CHECK(strstr(err_.message, "limit") != NULL || strstr(err_.message, "bytes") != NULL);
  CHECK_OK(ladle_engine_execute_host(e2, p, NULL, &r, &err_));
  CHECK(r != NULL && ladle_result_num_rows(r) > 0);
  ladle_result_destroy(r);
  CHECK_EQ_I(ladle_engine_get_stats(e2).device_memory_bytes, 0);
  ladle_plan_destroy(p);
  ladle_engine_destroy(e2);
  ladle_engine_destroy(e);
  ladle_table_release(t);
}
