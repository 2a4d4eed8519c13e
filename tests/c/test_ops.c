/* test_ops.c — relational operators through the public API: filter, group_by
 * with every aggregation, reduce, joins of every type, sort, slice, distinct,
 * union, hconcat, cache, rename, drop, row index and windows; on nulls, empty
 * inputs, all-null columns, single rows and multi-partition inputs of a million
 * rows, checked against values computed here by brute force. */
#include "harness.h"

static ladle_result *run(ladle_plan *p) {
  ladle_result *r = run_plan(p, 2, 1000); /* small morsels: many partitions */
  ladle_plan_destroy(p);
  return r;
}

TEST(filter_nulls_are_false_and_empty_results_keep_schema) {
  const int64_t v[] = {1, 2, 3, 4};
  const uint8_t vv[] = {1, 0, 1, 1};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, vv}};
  ladle_table *t = make_table(4, 1, c, 0);
  ladle_plan *p;
  CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("v"), LIT(1)), &p, &err_));
  ladle_result *r = run(p);
  CHECK(r && ladle_result_num_rows(r) == 2);
  ladle_result_destroy(r);
  CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("v"), LIT(100)), &p, &err_));
  r = run(p);
  CHECK(r && ladle_result_num_rows(r) == 0 && ladle_result_num_columns(r) == 1);
  ladle_result_destroy(r);
  CHECK_OK(ladle_plan_filter(scan(t), ladle_expr_lit_bool(true), &p, &err_));
  r = run(p);
  CHECK(r && ladle_result_num_rows(r) == 4);
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(group_by_every_aggregation) {
  /* groups: a -> {1, null, 3}, b -> {4}, null key -> {5, 6} */
  const char *k[] = {"a", "a", "b", NULL, "a", NULL};
  const int64_t v[] = {1, 0, 4, 5, 3, 6};
  const uint8_t vv[] = {1, 0, 1, 1, 1, 1};
  const uint8_t bo[] = {1, 0, 0, 1, 1, 1};
  colspec c[] = {{"k", LADLE_TYPE_STRING, k, NULL},
                 {"v", LADLE_TYPE_INT64, v, vv},
                 {"b", LADLE_TYPE_BOOL, bo, NULL}};
  ladle_table *t = make_table(6, 3, c, 2);
  ladle_agg_opts q = {.ddof = 0, .quantile = 0.5, .interpolation = LADLE_INTERP_LOWER};
  ladle_expr *keys[] = {COL("k")};
  ladle_expr *aggs[] = {AS(AGG(SUM, COL("v")), "sum"),
                        AS(AGG(MEAN, COL("v")), "mean"),
                        AS(AGG(MIN, COL("v")), "min"),
                        AS(AGG(MAX, COL("v")), "max"),
                        AS(AGG(COUNT, COL("v")), "count"),
                        AS(AGG(NULL_COUNT, COL("v")), "nc"),
                        AS(ladle_expr_len(), "len"),
                        AS(AGG(N_UNIQUE, COL("v")), "nu"),
                        AS(AGG(FIRST, COL("v")), "first"),
                        AS(AGG(LAST, COL("v")), "last"),
                        AS(AGG(STD, COL("v")), "std"),
                        AS(AGG(VAR, COL("v")), "var"),
                        AS(AGG(MEDIAN, COL("v")), "median"),
                        AS(ladle_expr_agg(LADLE_AGG_QUANTILE, COL("v"), &q), "q"),
                        AS(AGG(ARG_MIN, COL("v")), "amin"),
                        AS(AGG(ARG_MAX, COL("v")), "amax"),
                        AS(AGG(ANY, COL("b")), "any"),
                        AS(AGG(ALL, COL("b")), "all"),
                        AS(BIN(SUB, AGG(MAX, COL("v")), AGG(MIN, COL("v"))), "range")};
  ladle_plan *p;
  CHECK_OK(ladle_plan_group_by(scan(t), 1, keys, 19, aggs, true, &p, &err_));
  ladle_result *r = run(p);
  CHECK(r && ladle_result_num_rows(r) == 3);
  if (r) {
    ladle_column kk = result_col(r, "k");
    /* maintain_order: a, b, null */
    CHECK(strcmp(gets_(&kk, 0), "a") == 0 && strcmp(gets_(&kk, 1), "b") == 0 && isnull(&kk, 2));
    const char *names[] = {"sum",  "mean",  "min",  "max", "count", "nc",     "len",
                           "nu",   "first", "last", "std", "var",   "median", "q",
                           "amin", "amax",  "any",  "all", "range"};
    /* rows a, b, null; NAN marks an expected null */
    const double exp[19][3] = {{4, 4, 11},
                               {2, 4, 5.5},
                               {1, 4, 5},
                               {3, 4, 6},
                               {2, 1, 2},
                               {1, 0, 0},
                               {3, 1, 2},
                               {3, 1, 2},
                               {1, 4, 5},
                               {3, 4, 6},
                               {sqrt(2.0), NAN, sqrt(0.5)},
                               {2, NAN, 0.5},
                               {2, 4, 5.5},
                               {1, 4, 5},
                               {0, 0, 0},
                               {2, 0, 1},
                               {1, 0, 1},
                               {0, 0, 1},
                               {2, 0, 1}};
    for (int a = 0; a < 19; a++) {
      ladle_column col = result_col(r, names[a]);
      for (int g = 0; g < 3; g++) {
        if (isnan(exp[a][g])) {
          if (!isnull(&col, g)) fprintf(stderr, "  %s[%d] should be null\n", names[a], g);
          CHECK(isnull(&col, g));
        } else {
          if (isnull(&col, g) || fabs(getf(&col, g) - exp[a][g]) > 1e-9)
            fprintf(stderr, "  %s[%d] = %g, expected %g\n", names[a], g,
                    isnull(&col, g) ? NAN : getf(&col, g), exp[a][g]);
          CHECK(!isnull(&col, g));
          CHECK_NEAR(getf(&col, g), exp[a][g], 1e-9);
        }
      }
      ladle_column_release(&col);
    }
    /* first of group a is 1 (row 0), and it is a value; types follow Polars */
    CHECK(ladle_result_column_type(r, 1).id == LADLE_TYPE_INT64);
    CHECK(ladle_result_column_type(r, 2).id == LADLE_TYPE_FLOAT64);
    CHECK(ladle_result_column_type(r, 5).id == LADLE_TYPE_UINT32);
    ladle_column_release(&kk);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(group_by_float_keys_nan_and_negative_zero) {
  const double k[] = {0.0, -0.0, NAN, NAN, 1.0};
  const int64_t v[] = {1, 2, 3, 4, 5};
  colspec c[] = {{"k", LADLE_TYPE_FLOAT64, k, NULL}, {"v", LADLE_TYPE_INT64, v, NULL}};
  ladle_table *t = make_table(5, 2, c, 0);
  ladle_expr *keys[] = {COL("k")};
  ladle_expr *aggs[] = {AGG(SUM, COL("v"))};
  ladle_plan *p;
  CHECK_OK(ladle_plan_group_by(scan(t), 1, keys, 1, aggs, true, &p, &err_));
  ladle_result *r = run(p);
  CHECK(r && ladle_result_num_rows(r) == 3);
  if (r) {
    ladle_column s = result_col(r, "v");
    CHECK_EQ_I(geti(&s, 0), 3);
    CHECK_EQ_I(geti(&s, 1), 7);
    CHECK_EQ_I(geti(&s, 2), 5);
    ladle_column_release(&s);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(reduce_on_empty_and_all_null_inputs) {
  const int64_t v[] = {0, 0};
  const uint8_t none[] = {0, 0};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, none}};
  for (int empty = 0; empty < 2; empty++) {
    ladle_table *t = make_table(empty ? 0 : 2, 1, c, 0);
    ladle_expr *e[] = {AS(AGG(SUM, COL("v")), "sum"), AS(AGG(MEAN, COL("v")), "mean"),
                       AS(AGG(MIN, COL("v")), "min"), AS(AGG(COUNT, COL("v")), "count"),
                       AS(ladle_expr_len(), "len"),   AS(AGG(FIRST, COL("v")), "first")};
    ladle_plan *p;
    CHECK_OK(ladle_plan_reduce(scan(t), 6, e, &p, &err_));
    ladle_result *r = run(p);
    CHECK(r && ladle_result_num_rows(r) == 1);
    if (r) {
      ladle_column s = result_col(r, "sum"), m = result_col(r, "mean"), mn = result_col(r, "min"),
                   cnt = result_col(r, "count"), len = result_col(r, "len"),
                   f = result_col(r, "first");
      CHECK_EQ_I(geti(&s, 0), 0);
      CHECK(!isnull(&s, 0));
      CHECK(isnull(&m, 0));
      CHECK(isnull(&mn, 0));
      CHECK_EQ_I(geti(&cnt, 0), 0);
      CHECK_EQ_I(geti(&len, 0), empty ? 0 : 2);
      CHECK(isnull(&f, 0));
      ladle_column cols[] = {s, m, mn, cnt, len, f};
      for (int i = 0; i < 6; i++) ladle_column_release(&cols[i]);
    }
    ladle_result_destroy(r);
    ladle_table_release(t);
  }
}

/* left: k = 1, 2, null, 3 ; right: k = 2, 3, 3, null, 5 */
static const int64_t LK[] = {1, 2, 0, 3}, LA[] = {10, 20, 30, 40};
static const uint8_t LKV[] = {1, 1, 0, 1};
static const int64_t RK[] = {2, 3, 3, 0, 5}, RB[] = {200, 300, 301, 500, 600};
static const uint8_t RKV[] = {1, 1, 1, 0, 1};

static ladle_plan *join_of(ladle_join_type how, bool nulls_equal, bool coalesce) {
  colspec lc[] = {{"k", LADLE_TYPE_INT64, LK, LKV}, {"a", LADLE_TYPE_INT64, LA, NULL}};
  colspec rc[] = {{"k", LADLE_TYPE_INT64, RK, RKV}, {"b", LADLE_TYPE_INT64, RB, NULL}};
  ladle_table *l = make_table(4, 2, lc, 0), *r = make_table(5, 2, rc, 2);
  ladle_expr *lo[] = {COL("k")}, *ro[] = {COL("k")};
  ladle_join_opts o = {how, nulls_equal, coalesce, NULL, NULL, LADLE_JOIN_ORDER_NONE};
  ladle_plan *p = NULL;
  if (ladle_plan_join(scan(l), scan(r), how == LADLE_JOIN_CROSS ? 0 : 1, lo, ro, &o, &p, &err_) !=
      LADLE_OK)
    fprintf(stderr, "  join build: %s\n", err_.message);
  if (how == LADLE_JOIN_CROSS) {
    ladle_expr_destroy(lo[0]);
    ladle_expr_destroy(ro[0]);
  }
  ladle_table_release(l);
  ladle_table_release(r);
  return p;
}

/* Sum over rows of (a or -1) * 1000 + (b or -1): an order-free fingerprint. */
static int64_t fingerprint(ladle_result *r) {
  ladle_column a = result_col(r, "a"), b = result_col(r, "b");
  int64_t s = 0;
  for (int64_t i = 0; i < ladle_result_num_rows(r); i++) {
    int64_t x = a.values && !isnull(&a, i) ? geti(&a, i) : -1;
    int64_t y = b.values && !isnull(&b, i) ? geti(&b, i) : -1;
    s += x * 1000 + y;
  }
  ladle_column_release(&a);
  ladle_column_release(&b);
  return s;
}

TEST(joins_of_every_type) {
  struct {
    ladle_join_type how;
    bool ne;
    int64_t rows, fp;
    size_t ncols;
  } cases[] = {
      {LADLE_JOIN_INNER, false, 3, 20 * 1000 + 200 + 40 * 1000 + 300 + 40 * 1000 + 301, 3},
      {LADLE_JOIN_LEFT, false, 5,
       10 * 1000 - 1 + 20 * 1000 + 200 + 30 * 1000 - 1 + 40 * 1000 + 300 + 40 * 1000 + 301, 3},
      {LADLE_JOIN_RIGHT, false, 5,
       20 * 1000 + 200 + 40 * 1000 + 300 + 40 * 1000 + 301 - 1000 + 500 - 1000 + 600, 3},
      {LADLE_JOIN_FULL, false, 7,
       10 * 1000 - 1 + 20 * 1000 + 200 + 30 * 1000 - 1 + 40 * 1000 + 300 + 40 * 1000 + 301 - 1000 +
           500 - 1000 + 600,
       4},
      {LADLE_JOIN_SEMI, false, 2, 0, 2},
      {LADLE_JOIN_ANTI, false, 2, 0, 2},
      {LADLE_JOIN_INNER, true, 4,
       20 * 1000 + 200 + 40 * 1000 + 300 + 40 * 1000 + 301 + 30 * 1000 + 500, 3},
      {LADLE_JOIN_CROSS, false, 20, 0, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ladle_plan *p = join_of(cases[i].how, cases[i].ne, cases[i].how != LADLE_JOIN_FULL);
    CHECK(p != NULL);
    if (p == NULL) continue;
    CHECK_EQ_I(ladle_plan_num_columns(p), cases[i].ncols);
    ladle_result *r = run(p);
    CHECK(r != NULL);
    if (r == NULL) continue;
    if (ladle_result_num_rows(r) != cases[i].rows)
      fprintf(stderr, "  case %zu rows %lld\n", i, (long long)ladle_result_num_rows(r));
    CHECK_EQ_I(ladle_result_num_rows(r), cases[i].rows);
    if (cases[i].how != LADLE_JOIN_SEMI && cases[i].how != LADLE_JOIN_ANTI &&
        cases[i].how != LADLE_JOIN_CROSS)
      CHECK_EQ_I(fingerprint(r), cases[i].fp);
    ladle_result_destroy(r);
  }
  /* names: the right key of a full join gets the suffix; right join puts left columns first */
  ladle_plan *p = join_of(LADLE_JOIN_FULL, false, false);
  CHECK(strcmp(ladle_plan_column_name(p, 2), "k_right") == 0);
  ladle_plan_destroy(p);
  p = join_of(LADLE_JOIN_RIGHT, false, true);
  CHECK(strcmp(ladle_plan_column_name(p, 0), "a") == 0 &&
        strcmp(ladle_plan_column_name(p, 1), "k") == 0);
  ladle_plan_destroy(p);
  /* full join with coalesce: the key column takes the right value for right-only rows */
  p = join_of(LADLE_JOIN_FULL, false, true);
  CHECK_EQ_I(ladle_plan_num_columns(p), 3);
  ladle_result *r = run(p);
  if (r) {
    ladle_column k = result_col(r, "k"), b = result_col(r, "b");
    bool saw5 = false;
    for (int64_t i = 0; i < ladle_result_num_rows(r); i++)
      if (!isnull(&b, i) && geti(&b, i) == 600) saw5 = !isnull(&k, i) && geti(&k, i) == 5;
    CHECK(saw5);
    ladle_column_release(&k);
    ladle_column_release(&b);
  }
  ladle_result_destroy(r);
}

/* Joins whose output is many times their inputs keep their pairs as runs and
 * write each output partition's rows alone (backend join_pairs_fill): counts
 * and an order-free fingerprint against a nested loop, for every join type
 * that can expand, with the output cut into 1000-row partitions. */
TEST(exploding_joins_match_a_nested_loop) {
  enum { NL = 700, NR = 400 };
  static int64_t lk[NL], la[NL], rk[NR], rb[NR];
  static uint8_t lv[NL], rv[NR];
  for (int64_t i = 0; i < NL; i++) {
    lk[i] = (i * 7) % 3;
    la[i] = i;
    lv[i] = i % 31 != 0;
  }
  for (int64_t j = 0; j < NR; j++) {
    rk[j] = (j * 5) % 4;
    rb[j] = 1000 + j;
    rv[j] = j % 17 != 0;
  }
  ladle_join_type hows[] = {LADLE_JOIN_INNER, LADLE_JOIN_LEFT, LADLE_JOIN_RIGHT, LADLE_JOIN_FULL,
                            LADLE_JOIN_CROSS};
  for (size_t h = 0; h < sizeof hows / sizeof *hows; h++) {
    ladle_join_type how = hows[h];
    int64_t rows = 0, fp = 0;
    bool rhit[NR] = {false};
    for (int64_t i = 0; i < NL; i++) {
      int64_t c = 0;
      for (int64_t j = 0; j < NR; j++) {
        bool m = how == LADLE_JOIN_CROSS || (lv[i] && rv[j] && lk[i] == rk[j]);
        if (!m) continue;
        c++;
        rhit[j] = true;
        fp += la[i] * 1000 + rb[j] % 1000 + (rb[j] / 1000) * 7;
      }
      if (c == 0 && (how == LADLE_JOIN_LEFT || how == LADLE_JOIN_FULL)) {
        c = 1;
        fp += la[i] * 1000 - 1;
      }
      rows += c;
    }
    for (int64_t j = 0; j < NR; j++)
      if (!rhit[j] && (how == LADLE_JOIN_RIGHT || how == LADLE_JOIN_FULL)) {
        rows++;
        fp += -1000 + rb[j] % 1000 + (rb[j] / 1000) * 7;
      }
    colspec lc[] = {{"k", LADLE_TYPE_INT64, lk, lv}, {"a", LADLE_TYPE_INT64, la, NULL}};
    colspec rc[] = {{"k", LADLE_TYPE_INT64, rk, rv}, {"b", LADLE_TYPE_INT64, rb, NULL}};
    ladle_table *l = make_table(NL, 2, lc, 128), *r = make_table(NR, 2, rc, 100);
    ladle_expr *lo[] = {COL("k")}, *ro[] = {COL("k")};
    bool cross = how == LADLE_JOIN_CROSS;
    ladle_join_opts o = {how, false, how != LADLE_JOIN_FULL, NULL, NULL, LADLE_JOIN_ORDER_NONE};
    ladle_plan *p = NULL;
    CHECK_OK(ladle_plan_join(scan(l), scan(r), cross ? 0 : 1, lo, ro, &o, &p, &err_));
    if (cross) {
      ladle_expr_destroy(lo[0]);
      ladle_expr_destroy(ro[0]);
    }
    ladle_table_release(l);
    ladle_table_release(r);
    ladle_result *res = p ? run(p) : NULL;
    CHECK(res != NULL);
    if (res == NULL) continue;
    CHECK(rows > 4 * (NL + NR)); /* the runs path: the output is many times the inputs */
    CHECK_EQ_I(ladle_result_num_rows(res), rows);
    ladle_column a = result_col(res, "a"), b = result_col(res, "b");
    int64_t got = 0;
    for (int64_t i = 0; i < ladle_result_num_rows(res); i++) {
      int64_t x = !isnull(&a, i) ? geti(&a, i) : -1, y = !isnull(&b, i) ? geti(&b, i) : -1;
      got += x * 1000 + (y >= 0 ? y % 1000 + (y / 1000) * 7 : -1);
    }
    CHECK_EQ_I(got, fp);
    ladle_column_release(&a);
    ladle_column_release(&b);
    ladle_result_destroy(res);
  }
}

TEST(sort_several_keys_nulls_and_stability) {
  const int64_t a[] = {2, 1, 2, 0, 1, 2};
  const uint8_t av[] = {1, 1, 1, 0, 1, 1};
  const char *s[] = {"b", "z", "a", "q", NULL, "b"};
  const int64_t id[] = {0, 1, 2, 3, 4, 5};
  colspec c[] = {{"a", LADLE_TYPE_INT64, a, av},
                 {"s", LADLE_TYPE_STRING, s, NULL},
                 {"id", LADLE_TYPE_INT64, id, NULL}};
  ladle_table *t = make_table(6, 3, c, 2);
  ladle_expr *by[] = {COL("a"), COL("s")};
  bool desc[] = {true, false}, nl[] = {true, false};
  ladle_plan *p;
  CHECK_OK(ladle_plan_sort(scan(t), 2, by, desc, nl, true, -1, &p, &err_));
  ladle_result *r = run(p);
  if (r) {
    ladle_column idc = result_col(r, "id");
    /* a desc (nulls last), then s asc (nulls first):
     * (2,a)=2,(2,b)=0,(2,b)=5,(1,null)=4,(1,z)=1,(null)=3 */
    const int64_t exp[] = {2, 0, 5, 4, 1, 3};
    for (int i = 0; i < 6; i++) CHECK_EQ_I(geti(&idc, i), exp[i]);
    ladle_column_release(&idc);
  }
  ladle_result_destroy(r);
  /* top-k */
  ladle_expr *by2[] = {COL("id")};
  bool d2[] = {true};
  CHECK_OK(ladle_plan_sort(scan(t), 1, by2, d2, NULL, false, 2, &p, &err_));
  r = run(p);
  if (r) {
    ladle_column idc = result_col(r, "id");
    CHECK_EQ_I(ladle_result_num_rows(r), 2);
    CHECK_EQ_I(geti(&idc, 0), 5);
    CHECK_EQ_I(geti(&idc, 1), 4);
    ladle_column_release(&idc);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(sort_floats_nan_last_and_negative_zero_stable) {
  const double f[] = {NAN, 1.0, -0.0, 0.0, -INFINITY, 2.0};
  const uint8_t fv[] = {1, 1, 1, 1, 1, 0};
  const int64_t id[] = {0, 1, 2, 3, 4, 5};
  colspec c[] = {{"f", LADLE_TYPE_FLOAT64, f, fv}, {"id", LADLE_TYPE_INT64, id, NULL}};
  ladle_table *t = make_table(6, 2, c, 0);
  ladle_expr *by[] = {COL("f")};
  ladle_plan *p;
  CHECK_OK(ladle_plan_sort(scan(t), 1, by, NULL, NULL, true, -1, &p, &err_));
  ladle_result *r = run(p);
  if (r) {
    ladle_column idc = result_col(r, "id");
    const int64_t exp[] = {5, 4, 2, 3, 1, 0};
    for (int i = 0; i < 6; i++) CHECK_EQ_I(geti(&idc, i), exp[i]);
    ladle_column_release(&idc);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(slice_head_tail_and_negative_offsets) {
  int64_t v[10];
  for (int i = 0; i < 10; i++) v[i] = i;
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, NULL}};
  ladle_table *t = make_table(10, 1, c, 3);
  struct {
    int64_t off, len, first, n;
  } cases[] = {{0, 3, 0, 3},  {-3, 3, 7, 3},  {4, -1, 4, 6}, {8, 5, 8, 2},
               {20, 5, 0, 0}, {-12, 4, 0, 2}, {2, 0, 0, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ladle_plan *p;
    CHECK_OK(ladle_plan_slice(scan(t), cases[i].off, cases[i].len, &p, &err_));
    ladle_result *r = run(p);
    CHECK(r != NULL);
    if (!r) continue;
    CHECK_EQ_I(ladle_result_num_rows(r), cases[i].n);
    if (cases[i].n > 0) {
      ladle_column col = result_col(r, "v");
      CHECK_EQ_I(geti(&col, 0), cases[i].first);
      ladle_column_release(&col);
    }
    ladle_result_destroy(r);
  }
  ladle_table_release(t);
}

TEST(distinct_keep_strategies) {
  const int64_t k[] = {1, 2, 1, 3, 2, 1};
  const int64_t id[] = {0, 1, 2, 3, 4, 5};
  colspec c[] = {{"k", LADLE_TYPE_INT64, k, NULL}, {"id", LADLE_TYPE_INT64, id, NULL}};
  ladle_table *t = make_table(6, 2, c, 2);
  const char *sub[] = {"k"};
  struct {
    ladle_keep keep;
    int64_t n;
    int64_t ids[3];
  } cases[] = {
      {LADLE_KEEP_FIRST, 3, {0, 1, 3}}, {LADLE_KEEP_LAST, 3, {3, 4, 5}}, {LADLE_KEEP_NONE, 1, {3}}};
  for (int i = 0; i < 3; i++) {
    ladle_plan *p;
    CHECK_OK(ladle_plan_distinct(scan(t), 1, sub, cases[i].keep, true, &p, &err_));
    ladle_result *r = run(p);
    if (!r) continue;
    CHECK_EQ_I(ladle_result_num_rows(r), cases[i].n);
    ladle_column idc = result_col(r, "id");
    for (int j = 0; j < cases[i].n; j++) CHECK_EQ_I(geti(&idc, j), cases[i].ids[j]);
    ladle_column_release(&idc);
    ladle_result_destroy(r);
  }
  /* all columns: every row is distinct */
  ladle_plan *p;
  CHECK_OK(ladle_plan_distinct(scan(t), 0, NULL, LADLE_KEEP_ANY, false, &p, &err_));
  ladle_result *r = run(p);
  CHECK(r && ladle_result_num_rows(r) == 6);
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(union_hconcat_cache_rename_drop_row_index) {
  const int64_t v[] = {1, 2, 3};
  const char *s[] = {"x", "y"};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, NULL}};
  colspec c2[] = {{"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(3, 1, c, 0), *t2 = make_table(2, 1, c2, 0);
  ladle_plan *cache;
  CHECK_OK(ladle_plan_cache(scan(t), &cache, &err_));
  ladle_plan *ins[] = {ladle_plan_ref(cache), cache}, *u;
  CHECK_OK(ladle_plan_union(2, ins, &u, &err_));
  ladle_plan *h[] = {u, scan(t2)}, *hc;
  CHECK_OK(ladle_plan_hconcat(2, h, &hc, &err_));
  const char *old[] = {"v"}, *nw[] = {"w"};
  ladle_plan *rn, *ri, *dr;
  CHECK_OK(ladle_plan_rename(hc, 1, old, nw, &rn, &err_));
  CHECK_OK(ladle_plan_row_index(rn, "idx", 10, &ri, &err_));
  const char *drop[] = {"s"};
  CHECK_OK(ladle_plan_drop(ri, 1, drop, &dr, &err_));
  CHECK_EQ_I(ladle_plan_num_columns(dr), 2);
  ladle_result *r = run(dr);
  CHECK(r && ladle_result_num_rows(r) == 6);
  if (r) {
    ladle_column idx = result_col(r, "idx"), w = result_col(r, "w");
    CHECK_EQ_I(geti(&idx, 0), 10);
    CHECK_EQ_I(geti(&idx, 5), 15);
    CHECK_EQ_I(geti(&w, 4), 2);
    ladle_column_release(&idx);
    ladle_column_release(&w);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
  ladle_table_release(t2);
}

TEST(filter_under_a_projection_leaves_out_predicate_columns) {
  /* FILTER under a drop (a PROJECT node): the column only the predicate reads
   * comes out of the filter as a placeholder, the others compacted */
  const int64_t v[] = {5, -1, 7, 0, 9, -3, 2};
  const char *s[] = {"a", "bb", "c", "dd", "e", "ff", "g"};
  const int64_t k[] = {1, 0, 1, 0, 1, 1, 0};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, NULL},
                 {"s", LADLE_TYPE_STRING, s, NULL},
                 {"k", LADLE_TYPE_INT64, k, NULL}};
  ladle_table *t = make_table(7, 3, c, 3);
  ladle_plan *f, *dr;
  CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("k"), LIT(0)), &f, &err_));
  const char *drop[] = {"k"};
  CHECK_OK(ladle_plan_drop(f, 1, drop, &dr, &err_));
  ladle_result *r = run(dr);
  CHECK(r && ladle_result_num_rows(r) == 4);
  if (r) {
    ladle_column vc = result_col(r, "v"), sc = result_col(r, "s");
    const int64_t want[] = {5, 7, 9, -3};
    const char *wants[] = {"a", "c", "e", "ff"};
    for (int i = 0; i < 4; i++) {
      CHECK_EQ_I(geti(&vc, i), want[i]);
      CHECK(ladle_str_len(&sc, i) == (int64_t)strlen(wants[i]) &&
            memcmp(ladle_str_ptr(&sc, i), wants[i], strlen(wants[i])) == 0);
    }
    ladle_column_release(&vc);
    ladle_column_release(&sc);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(windows_over_partitions) {
  const char *g[] = {"a", "b", "a", "a", "b"};
  const int64_t v[] = {1, 10, 3, 3, 20};
  colspec c[] = {{"g", LADLE_TYPE_STRING, g, NULL}, {"v", LADLE_TYPE_INT64, v, NULL}};
  ladle_table *t = make_table(5, 2, c, 2);
  ladle_expr *p1[] = {COL("g")}, *p2[] = {COL("g")}, *p3[] = {COL("g")};
  ladle_expr *e[] = {
      AS(ladle_expr_over(AGG(SUM, COL("v")), 1, p1), "s"),
      AS(ladle_expr_over(BIN(SUB, COL("v"), AGG(MEAN, COL("v"))), 1, p2), "c"),
      AS(ladle_expr_over(ladle_expr_rank(COL("v"), LADLE_RANK_DENSE, true), 1, p3), "r"),
      AS(BIN(TRUE_DIV, COL("v"), AGG(SUM, COL("v"))), "share")};
  ladle_plan *p;
  CHECK_OK(ladle_plan_with_columns(scan(t), 4, e, &p, &err_));
  ladle_result *r = run(p);
  if (r) {
    ladle_column s = result_col(r, "s"), cc = result_col(r, "c"), rk = result_col(r, "r"),
                 sh = result_col(r, "share");
    const int64_t es[] = {7, 30, 7, 7, 30};
    const double ec[] = {1 - 7.0 / 3, -5, 3 - 7.0 / 3, 3 - 7.0 / 3, 5};
    const int64_t er[] = {2, 2, 1, 1, 1};
    for (int i = 0; i < 5; i++) {
      CHECK_EQ_I(geti(&s, i), es[i]);
      CHECK_NEAR(getf(&cc, i), ec[i], 1e-12);
      CHECK_EQ_I(geti(&rk, i), er[i]);
      CHECK_NEAR(getf(&sh, i), (double)v[i] / 37, 1e-12);
    }
    ladle_column_release(&s);
    ladle_column_release(&cc);
    ladle_column_release(&rk);
    ladle_column_release(&sh);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(million_rows_many_partitions) {
  const int64_t n = 1200000;
  int64_t *k = malloc(n * 8), *v = malloc(n * 8);
  uint8_t *vv = malloc(n);
  for (int64_t i = 0; i < n; i++) {
    k[i] = (i * 7919) % 1009;
    v[i] = (i % 13) - 6;
    vv[i] = i % 17 != 0;
  }
  colspec c[] = {{"k", LADLE_TYPE_INT64, k, NULL}, {"v", LADLE_TYPE_INT64, v, vv}};
  ladle_table *t = make_table(n, 2, c, 65536);
  /* expected per-key sums and counts */
  int64_t sum[1009] = {0}, cnt[1009] = {0};
  int64_t filtered = 0;
  for (int64_t i = 0; i < n; i++) {
    if (vv[i]) {
      sum[k[i]] += v[i];
      cnt[k[i]]++;
      filtered += v[i] > 0;
    }
  }
  ladle_expr *keys[] = {COL("k")};
  ladle_expr *aggs[] = {AS(AGG(SUM, COL("v")), "s"), AS(AGG(COUNT, COL("v")), "c")};
  ladle_plan *p, *sorted;
  CHECK_OK(ladle_plan_group_by(scan(t), 1, keys, 2, aggs, false, &p, &err_));
  ladle_expr *by[] = {COL("k")};
  CHECK_OK(ladle_plan_sort(p, 1, by, NULL, NULL, false, -1, &sorted, &err_));
  ladle_result *r = run_plan(sorted, 2, 65536);
  ladle_plan_destroy(sorted);
  CHECK(r && ladle_result_num_rows(r) == 1009);
  if (r) {
    ladle_column kc = result_col(r, "k"), s = result_col(r, "s"), cc = result_col(r, "c");
    for (int i = 0; i < 1009; i++) {
      CHECK_EQ_I(geti(&kc, i), i);
      CHECK_EQ_I(geti(&s, i), sum[i]);
      CHECK_EQ_I(geti(&cc, i), cnt[i]);
    }
    ladle_column_release(&kc);
    ladle_column_release(&s);
    ladle_column_release(&cc);
  }
  ladle_result_destroy(r);
  /* filter + self join on a unique key keeps every row once */
  CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("v"), LIT(0)), &p, &err_));
  r = run_plan(p, 2, 65536);
  CHECK(r && ladle_result_num_rows(r) == filtered);
  ladle_result_destroy(r);
  ladle_plan_destroy(p);
  /* sort a million rows and check the order */
  ladle_expr *by2[] = {COL("v"), COL("k")};
  bool desc[] = {true, false};
  CHECK_OK(ladle_plan_sort(scan(t), 2, by2, desc, NULL, true, -1, &p, &err_));
  r = run_plan(p, 2, 65536);
  ladle_plan_destroy(p);
  if (r) {
    ladle_column vc = result_col(r, "v"), kc = result_col(r, "k");
    bool ok = true;
    for (int64_t i = 1; i < n; i++) {
      bool pn = isnull(&vc, i - 1), cn = isnull(&vc, i);
      if (!pn && cn) {
        if (ok) fprintf(stderr, "  null after value at %lld\n", (long long)i);
        ok = false; /* nulls first */
      }
      if (!pn && !cn) {
        int64_t a = geti(&vc, i - 1), b = geti(&vc, i);
        if (a < b || (a == b && geti(&kc, i - 1) > geti(&kc, i))) {
          if (ok)
            fprintf(stderr, "  order broken at %lld: (%lld,%lld) then (%lld,%lld)\n", (long long)i,
                    (long long)a, (long long)geti(&kc, i - 1), (long long)b,
                    (long long)geti(&kc, i));
          ok = false;
        }
      }
    }
    CHECK(ok);
    ladle_column_release(&vc);
    ladle_column_release(&kc);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
  free(k);
  free(v);
  free(vv);
}

TEST(invalid_plans_are_rejected_with_names) {
  const int64_t v[] = {1};
  const char *s[] = {"x"};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, NULL}, {"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(1, 2, c, 0);
  ladle_plan *p = NULL;
  ladle_status st = ladle_plan_filter(scan(t), BIN(GT, COL("nope"), LIT(1)), &p, &err_);
  CHECK(st == LADLE_ENOCOL && strstr(err_.message, "'nope'") && strstr(err_.message, "filter"));
  st = ladle_plan_filter(scan(t), COL("v"), &p, &err_);
  CHECK(st == LADLE_ETYPE && strstr(err_.message, "'v'"));
  ladle_expr *e1[] = {BIN(ADD, COL("v"), COL("s"))};
  st = ladle_plan_select(scan(t), 1, e1, &p, &err_);
  CHECK(st == LADLE_ETYPE && strstr(err_.message, "'v'") && strstr(err_.message, "'s'"));
  ladle_expr *e2[] = {AGG(SUM, AGG(MAX, COL("v")))};
  st = ladle_plan_select(scan(t), 1, e2, &p, &err_);
  CHECK(st == LADLE_EINVAL && strstr(err_.message, "aggregation inside an aggregation"));
  ladle_expr *keys[] = {COL("v")}, *aggs[] = {COL("s")};
  st = ladle_plan_group_by(scan(t), 1, keys, 1, aggs, false, &p, &err_);
  CHECK(st == LADLE_ENOTSUP && strstr(err_.message, "'s'"));
  ladle_expr *lo[] = {COL("v")}, *ro[] = {COL("s")};
  st = ladle_plan_join(scan(t), scan(t), 1, lo, ro, NULL, &p, &err_);
  CHECK(st == LADLE_ETYPE && strstr(err_.message, "key types differ"));
  ladle_expr *e3[] = {COL("v"), COL("v")};
  st = ladle_plan_select(scan(t), 2, e3, &p, &err_);
  CHECK(st == LADLE_EINVAL && strstr(err_.message, "duplicate"));
  ladle_expr *e4[] = {fn1(LADLE_FN_STR_TO_UPPER, COL("v"))};
  st = ladle_plan_select(scan(t), 1, e4, &p, &err_);
  CHECK(st == LADLE_ETYPE && strstr(err_.message, "str.to_uppercase"));
  ladle_engine_opts o = {LADLE_DEVICE_CUDA, 0, 1, 0, 0, NULL};
  ladle_engine *eng = NULL;
  st = ladle_engine_create(&o, &eng, &err_);
  if (st == LADLE_OK) {
    ladle_engine_destroy(eng); /* a GPU is there */
  } else {
    /* no GPU, or no CUDA library: a clean error that says which */
    CHECK((st == LADLE_ENOTSUP || st == LADLE_EDEVICE) && eng == NULL &&
          strstr(err_.message, "cuda") != NULL);
    CHECK(strstr(err_.message, "could not be loaded") != NULL ||
          strstr(err_.message, "no usable CUDA device") != NULL);
  }
  ladle_table_release(t);
}

TEST(explain_names_nodes_and_expressions) {
  const int64_t v[] = {1};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, NULL}};
  ladle_table *t = make_table(1, 1, c, 0);
  ladle_plan *p, *q;
  CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("v"), LIT(1)), &p, &err_));
  ladle_expr *e[] = {AS(AGG(SUM, COL("v")), "total")};
  CHECK_OK(ladle_plan_select(p, 1, e, &q, &err_));
  char *text = NULL;
  CHECK_OK(ladle_plan_explain(q, &text, &err_));
  CHECK(text && strstr(text, "SELECT [col(\"v\").sum().alias(\"total\")]") &&
        strstr(text, "FILTER [(col(\"v\") > 1:i64)]"));
  ladle_free(text);
  ladle_plan_destroy(q);
  ladle_table_release(t);
}

TEST(engine_explain_prints_the_physical_plan_and_exchanges) {
  const int64_t v[] = {1, 2, 3};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, NULL}};
  ladle_table *t = make_table(3, 1, c, 0);
  ladle_plan *p, *q;
  CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("v"), LIT(1)), &p, &err_));
  ladle_expr *e[] = {AS(AGG(SUM, COL("v")), "total")};
  CHECK_OK(ladle_plan_select(p, 1, e, &q, &err_));
  ladle_engine *eng = NULL;
  CHECK_OK(ladle_engine_create(NULL, &eng, &err_));
  char *one = NULL, *three = NULL, *bad = NULL;
  CHECK_OK(ladle_engine_explain(eng, q, &one, &err_));
  /* one rank: the select of an integer sum streams into partial rows */
  CHECK(one && strstr(one, "physical plan (engine: ") && strstr(one, "; 1 rank):") &&
        strstr(one, "#1 SELECT") && strstr(one, "one partial row a chunk") &&
        strstr(one, "#2 GROUP_BY_PARTIAL") && strstr(one, "#3 FILTER") &&
        strstr(one, "#4 SCAN memory") && !strstr(one, "EXCHANGE"));
  /* a select of a row-wise expression over the filter: the filter compacts v */
  ladle_plan *p2, *q2;
  CHECK_OK(ladle_plan_filter(scan(t), BIN(GT, COL("v"), LIT(1)), &p2, &err_));
  ladle_expr *e2[] = {AS(BIN(ADD, COL("v"), LIT(1)), "w")};
  CHECK_OK(ladle_plan_select(p2, 1, e2, &q2, &err_));
  char *rows = NULL;
  CHECK_OK(ladle_engine_explain(eng, q2, &rows, &err_));
  CHECK(rows && strstr(rows, "#1 SELECT") && strstr(rows, "#2 FILTER") &&
        strstr(rows, "compact=[\"v\"]") && strstr(rows, "#3 SCAN memory"));
  ladle_free(rows);
  ladle_plan_destroy(q2);
  /* three ranks: the select of a sum needs every row, and every rank gets it */
  CHECK_OK(ladle_engine_explain_ranks(eng, q, 3, &three, &err_));
  CHECK(three && strstr(three, "3 ranks, as planned for them") &&
        strstr(three, "#2 EXCHANGE broadcast") && strstr(three, "result: replicated") &&
        strstr(three, "[this rank's rows]"));
  CHECK(ladle_engine_explain_ranks(eng, q, -1, &bad, &err_) == LADLE_EINVAL && bad == NULL);
  ladle_free(one);
  ladle_free(three);
  ladle_engine_destroy(eng);
  ladle_plan_destroy(q);
  ladle_table_release(t);
}
