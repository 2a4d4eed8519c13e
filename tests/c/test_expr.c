/* test_expr.c — expression kernels through the public API: arithmetic and its
 * Polars rules, comparisons, Kleene logic, null handling, casts, when/then,
 * membership, math, strings and temporal functions. Expected values are worked
 * out by hand from Polars' documented semantics. */
#include "backend/cpu/cpu.h"
#include "harness.h"

static const int64_t A[] = {7, -7, 7, -7, 1, 0};
static const int64_t B[] = {2, 2, -2, -2, 0, 3};
static const uint8_t AV[] = {1, 1, 1, 1, 1, 0};

static ladle_table *ab(void) {
  colspec c[] = {{"a", LADLE_TYPE_INT64, A, AV}, {"b", LADLE_TYPE_INT64, B, NULL}};
  return make_table(6, 2, c, 0);
}

TEST(floor_div_and_mod_follow_python) {
  ladle_table *t = ab();
  ladle_expr *e[] = {AS(BIN(FLOOR_DIV, COL("a"), COL("b")), "fd"),
                     AS(BIN(MOD, COL("a"), COL("b")), "m"),
                     AS(BIN(TRUE_DIV, COL("a"), COL("b")), "td")};
  ladle_result *r = select_run(t, 3, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column fd = result_col(r, "fd"), m = result_col(r, "m"), td = result_col(r, "td");
    const int64_t efd[] = {3, -4, -4, 3}, em[] = {1, 1, -1, -1};
    for (int i = 0; i < 4; i++) {
      CHECK_EQ_I(geti(&fd, i), efd[i]);
      CHECK_EQ_I(geti(&m, i), em[i]);
    }
    CHECK(isnull(&fd, 4)); /* x // 0 is null for integers */
    CHECK(isnull(&m, 4));
    CHECK(isnull(&fd, 5)); /* null input */
    CHECK(td.type.id == LADLE_TYPE_FLOAT64);
    CHECK_NEAR(getf(&td, 1), -3.5, 1e-12);
    CHECK(isinf(getf(&td, 4)) && !isnull(&td, 4));
    ladle_column_release(&fd);
    ladle_column_release(&m);
    ladle_column_release(&td);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(integer_overflow_wraps_and_types_promote) {
  const int8_t x[] = {100, -128};
  const uint8_t u[] = {250, 3};
  const int32_t i32[] = {2147483647, 1};
  const float f[] = {1.5f, 2.0f};
  colspec c[] = {{"x", LADLE_TYPE_INT8, x, NULL},
                 {"u", LADLE_TYPE_UINT8, u, NULL},
                 {"i", LADLE_TYPE_INT32, i32, NULL},
                 {"f", LADLE_TYPE_FLOAT32, f, NULL}};
  ladle_table *t = make_table(2, 4, c, 0);
  ladle_expr *e[] = {
      AS(BIN(MUL, COL("x"), LIT(2)), "x2"),    AS(BIN(ADD, COL("u"), LIT(10)), "u10"),
      AS(BIN(ADD, COL("i"), LIT(1)), "i1"),    AS(BIN(ADD, COL("u"), COL("x")), "ux"),
      AS(BIN(MUL, COL("f"), LITF(2.0)), "f2"), AS(BIN(ADD, COL("i"), COL("f")), "if"),
      AS(fn1(LADLE_FN_NEG, COL("x")), "neg")};
  ladle_result *r = select_run(t, 7, e);
  CHECK(r != NULL);
  if (r) {
    CHECK(ladle_result_column_type(r, 0).id == LADLE_TYPE_INT8);
    CHECK(ladle_result_column_type(r, 1).id == LADLE_TYPE_UINT8);
    CHECK(ladle_result_column_type(r, 2).id == LADLE_TYPE_INT32);
    CHECK(ladle_result_column_type(r, 3).id == LADLE_TYPE_INT16);
    CHECK(ladle_result_column_type(r, 4).id == LADLE_TYPE_FLOAT32);
    CHECK(ladle_result_column_type(r, 5).id == LADLE_TYPE_FLOAT64);
    ladle_column x2 = result_col(r, "x2"), u10 = result_col(r, "u10"), i1 = result_col(r, "i1"),
                 ux = result_col(r, "ux"), neg = result_col(r, "neg");
    CHECK_EQ_I(geti(&x2, 0), -56); /* 200 wraps in i8 */
    CHECK_EQ_I(geti(&x2, 1), 0);   /* -256 wraps to 0 */
    CHECK_EQ_I(geti(&u10, 0), 4);  /* 260 wraps in u8 */
    CHECK_EQ_I(geti(&i1, 0), INT32_MIN);
    CHECK_EQ_I(geti(&ux, 0), 350);
    CHECK_EQ_I(geti(&neg, 1), -128); /* -(-128) wraps */
    ladle_column_release(&x2);
    ladle_column_release(&u10);
    ladle_column_release(&i1);
    ladle_column_release(&ux);
    ladle_column_release(&neg);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(float_comparisons_in_total_order) {
  const double a[] = {NAN, 1.0, 0.0, 2.0, -0.0};
  const double b[] = {NAN, NAN, 1.0, 3.0, 0.0};
  const uint8_t av[] = {1, 1, 0, 1, 1};
  colspec c[] = {{"a", LADLE_TYPE_FLOAT64, a, av}, {"b", LADLE_TYPE_FLOAT64, b, NULL}};
  ladle_table *t = make_table(5, 2, c, 0);
  ladle_expr *e[] = {AS(BIN(EQ, COL("a"), COL("b")), "eq"), AS(BIN(LT, COL("a"), COL("b")), "lt"),
                     AS(BIN(GT, COL("a"), COL("b")), "gt"),
                     AS(BIN(EQ_MISSING, COL("a"), COL("b")), "eqm")};
  ladle_result *r = select_run(t, 4, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column eq = result_col(r, "eq"), lt = result_col(r, "lt"), gt = result_col(r, "gt"),
                 eqm = result_col(r, "eqm");
    CHECK_EQ_I(geti(&eq, 0), 1); /* NaN == NaN */
    CHECK_EQ_I(geti(&lt, 0), 0);
    CHECK_EQ_I(geti(&lt, 1), 1); /* 1 < NaN */
    CHECK_EQ_I(geti(&gt, 1), 0);
    CHECK(isnull(&eq, 2));
    CHECK(!isnull(&eqm, 2));
    CHECK_EQ_I(geti(&eqm, 2), 0);
    CHECK_EQ_I(geti(&eq, 4), 1); /* -0.0 == 0.0 */
    ladle_column_release(&eq);
    ladle_column_release(&lt);
    ladle_column_release(&gt);
    ladle_column_release(&eqm);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(kleene_logic) {
  const uint8_t x[] = {1, 1, 1, 0, 0, 0, 0, 0, 0};
  const uint8_t xv[] = {1, 1, 1, 1, 1, 1, 0, 0, 0};
  const uint8_t y[] = {1, 0, 0, 1, 0, 0, 1, 0, 0};
  const uint8_t yv[] = {1, 1, 0, 1, 1, 0, 1, 1, 0};
  colspec c[] = {{"x", LADLE_TYPE_BOOL, x, xv}, {"y", LADLE_TYPE_BOOL, y, yv}};
  ladle_table *t = make_table(9, 2, c, 0);
  ladle_expr *e[] = {AS(BIN(AND, COL("x"), COL("y")), "and"), AS(BIN(OR, COL("x"), COL("y")), "or"),
                     AS(fn1(LADLE_FN_NOT, COL("x")), "not")};
  ladle_result *r = select_run(t, 3, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column a = result_col(r, "and"), o = result_col(r, "or"), n = result_col(r, "not");
    /* -1 is null */
    const int ea[] = {1, 0, -1, 0, 0, 0, -1, 0, -1};
    const int eo[] = {1, 1, 1, 1, 0, -1, 1, -1, -1};
    for (int i = 0; i < 9; i++) {
      if (ea[i] < 0)
        CHECK(isnull(&a, i));
      else {
        CHECK(!isnull(&a, i));
        CHECK_EQ_I(geti(&a, i), ea[i]);
      }
      if (eo[i] < 0)
        CHECK(isnull(&o, i));
      else {
        CHECK(!isnull(&o, i));
        CHECK_EQ_I(geti(&o, i), eo[i]);
      }
    }
    CHECK(isnull(&n, 6));
    CHECK_EQ_I(geti(&n, 0), 0);
    ladle_column_release(&a);
    ladle_column_release(&o);
    ladle_column_release(&n);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(null_functions_and_when) {
  ladle_table *t = ab();
  ladle_expr *conds[2] = {BIN(GT, COL("a"), LIT(5)), BIN(LT, COL("a"), LIT(0))};
  ladle_expr *thens[2] = {LIT(100), COL("b")};
  ladle_expr *e[] = {AS(fn1(LADLE_FN_IS_NULL, COL("a")), "isn"),
                     AS(fn2(LADLE_FN_FILL_NULL, COL("a"), LIT(-1)), "fill"),
                     AS(ladle_expr_when(2, conds, thens, LIT(0)), "w")};
  ladle_result *r = select_run(t, 3, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column isn = result_col(r, "isn"), fill = result_col(r, "fill"), w = result_col(r, "w");
    CHECK_EQ_I(geti(&isn, 5), 1);
    CHECK_EQ_I(geti(&isn, 0), 0);
    CHECK_EQ_I(geti(&fill, 5), -1);
    CHECK_EQ_I(geti(&fill, 1), -7);
    CHECK(fill.null_count == 0);
    const int64_t ew[] = {100, 2, 100, -2, 0, 0};
    for (int i = 0; i < 6; i++) CHECK_EQ_I(geti(&w, i), ew[i]);
    CHECK(!isnull(&w, 5)); /* null condition falls through to otherwise */
    ladle_column_release(&isn);
    ladle_column_release(&fill);
    ladle_column_release(&w);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(casts_strict_and_not) {
  const char *s[] = {"12", "x", NULL, "-5", "300"};
  colspec c[] = {{"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(5, 1, c, 0);
  ladle_expr *e[] = {AS(ladle_expr_cast(COL("s"), T_(LADLE_TYPE_INT16), false), "i16"),
                     AS(ladle_expr_cast(COL("s"), T_(LADLE_TYPE_UINT8), false), "u8")};
  ladle_result *r = select_run(t, 2, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column a = result_col(r, "i16"), b = result_col(r, "u8");
    CHECK_EQ_I(geti(&a, 0), 12);
    CHECK(isnull(&a, 1));
    CHECK(isnull(&a, 2));
    CHECK_EQ_I(geti(&a, 3), -5);
    CHECK_EQ_I(geti(&a, 4), 300);
    CHECK(isnull(&b, 3)); /* -5 does not fit u8 */
    CHECK(isnull(&b, 4));
    ladle_column_release(&a);
    ladle_column_release(&b);
  }
  ladle_result_destroy(r);
  /* strict: a clear error naming the column and the value */
  ladle_expr *e2[] = {ladle_expr_cast(COL("s"), T_(LADLE_TYPE_INT32), true)};
  ladle_plan *p;
  CHECK_OK(ladle_plan_select(scan(t), 1, e2, &p, &err_));
  ladle_engine *eng;
  CHECK_OK(ladle_engine_create(NULL, &eng, &err_));
  ladle_result *r2 = NULL;
  ladle_status st = ladle_engine_execute(eng, p, &r2, &err_);
  CHECK(st == LADLE_ECOMPUTE);
  CHECK(strstr(err_.message, "'s'") != NULL && strstr(err_.message, "'x'") != NULL);
  CHECK(r2 == NULL);
  ladle_engine_destroy(eng);
  ladle_plan_destroy(p);
  /* numeric <-> string round trip */
  const double d[] = {1.0, 0.1, -2.5e-7};
  colspec c2[] = {{"d", LADLE_TYPE_FLOAT64, d, NULL}};
  ladle_table *t2 = make_table(3, 1, c2, 0);
  ladle_expr *e3[] = {ladle_expr_cast(COL("d"), T_(LADLE_TYPE_STRING), true)};
  ladle_result *r3 = select_run(t2, 1, e3);
  CHECK(r3 != NULL);
  if (r3) {
    ladle_column s3 = result_col(r3, "d");
    CHECK(strcmp(gets_(&s3, 0), "1.0") == 0);
    CHECK(strcmp(gets_(&s3, 1), "0.1") == 0);
    CHECK(strtod(gets_(&s3, 2), NULL) == -2.5e-7);
    ladle_column_release(&s3);
  }
  ladle_result_destroy(r3);
  ladle_table_release(t2);
  ladle_table_release(t);
}

TEST(is_in_between_clip_round) {
  const int64_t v[] = {1, 5, 9, 3};
  const uint8_t vv[] = {1, 1, 1, 0};
  const double f[] = {1.5, 2.5, -0.5, 0.125};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, vv}, {"f", LADLE_TYPE_FLOAT64, f, NULL}};
  ladle_table *t = make_table(4, 2, c, 0);
  ladle_expr *items[] = {ladle_expr_lit_int(5, LADLE_TYPE_INT64),
                         ladle_expr_lit_int(9, LADLE_TYPE_INT64)};
  ladle_func_opts r1 = {0};
  r1.i64 = 1;
  ladle_expr *e[] = {AS(fn2(LADLE_FN_IS_IN, COL("v"), ladle_expr_lit_series(2, items)), "in"),
                     AS(fn3(LADLE_FN_IS_BETWEEN, COL("v"), LIT(2), LIT(5)), "btw"),
                     AS(fn3(LADLE_FN_CLIP, COL("v"), LIT(2), LIT(6)), "clip"),
                     AS(fn1(LADLE_FN_ROUND, COL("f")), "round"),
                     AS(fn1o(LADLE_FN_ROUND, COL("f"), r1), "round1"),
                     AS(fn1(LADLE_FN_SQRT, COL("v")), "sqrt")};
  ladle_result *r = select_run(t, 6, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column in = result_col(r, "in"), btw = result_col(r, "btw"), clip = result_col(r, "clip"),
                 rd = result_col(r, "round"), rd1 = result_col(r, "round1"),
                 sq = result_col(r, "sqrt");
    CHECK_EQ_I(geti(&in, 0), 0);
    CHECK_EQ_I(geti(&in, 1), 1);
    CHECK_EQ_I(geti(&in, 2), 1);
    CHECK(isnull(&in, 3));
    CHECK_EQ_I(geti(&btw, 1), 1);
    CHECK_EQ_I(geti(&btw, 2), 0);
    CHECK_EQ_I(geti(&clip, 0), 2);
    CHECK_EQ_I(geti(&clip, 2), 6);
    CHECK(isnull(&clip, 3));
    CHECK_NEAR(getf(&rd, 0), 2.0, 0); /* half to even */
    CHECK_NEAR(getf(&rd, 1), 2.0, 0);
    CHECK_NEAR(getf(&rd1, 3), 0.1, 1e-12);
    CHECK(sq.type.id == LADLE_TYPE_FLOAT64);
    CHECK_NEAR(getf(&sq, 2), 3.0, 1e-12);
    ladle_column_release(&in);
    ladle_column_release(&btw);
    ladle_column_release(&clip);
    ladle_column_release(&rd);
    ladle_column_release(&rd1);
    ladle_column_release(&sq);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(string_functions) {
  const char *s[] = {"Hello", "  padded  ", "ünïcödé", NULL, ""};
  colspec c[] = {{"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(5, 1, c, 0);
  ladle_func_opts lit = {0}, re = {0}, sl = {0}, pre = {0};
  lit.str = "ell";
  lit.literal = true;
  re.str = "^[HP]e+l";
  sl.i64 = -3;
  sl.i64b = 2;
  pre.str = "He";
  ladle_expr *cc[2] = {COL("s"), ladle_expr_lit_str("!", 1)};
  ladle_expr *e[] = {AS(fn1(LADLE_FN_STR_LEN_BYTES, COL("s")), "lb"),
                     AS(fn1(LADLE_FN_STR_LEN_CHARS, COL("s")), "lc"),
                     AS(fn1o(LADLE_FN_STR_CONTAINS, COL("s"), lit), "cl"),
                     AS(fn1o(LADLE_FN_STR_CONTAINS, COL("s"), re), "cr"),
                     AS(fn1(LADLE_FN_STR_TO_UPPER, COL("s")), "up"),
                     AS(fn1o(LADLE_FN_STR_SLICE, COL("s"), sl), "sl"),
                     AS(fn1(LADLE_FN_STR_STRIP_CHARS, COL("s")), "st"),
                     AS(fn1o(LADLE_FN_STR_STARTS_WITH, COL("s"), pre), "sw"),
                     AS(ladle_expr_func(LADLE_FN_STR_CONCAT, 2, cc, NULL), "cat")};
  ladle_result *r = select_run(t, 9, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column lb = result_col(r, "lb"), lc = result_col(r, "lc"), cl = result_col(r, "cl"),
                 cr = result_col(r, "cr"), up = result_col(r, "up"), sl2 = result_col(r, "sl"),
                 st = result_col(r, "st"), sw = result_col(r, "sw"), cat = result_col(r, "cat");
    CHECK_EQ_I(geti(&lb, 2), 11);
    CHECK_EQ_I(geti(&lc, 2), 7);
    CHECK(isnull(&lc, 3));
    CHECK_EQ_I(geti(&cl, 0), 1);
    CHECK_EQ_I(geti(&cl, 1), 0);
    CHECK_EQ_I(geti(&cr, 0), 1);
    CHECK(strcmp(gets_(&up, 0), "HELLO") == 0);
    CHECK(strcmp(gets_(&up, 2), "ÜNÏCÖDÉ") == 0);
    CHECK(strcmp(gets_(&sl2, 0), "ll") == 0);
    CHECK(strcmp(gets_(&sl2, 2), "öd") == 0);
    CHECK(strcmp(gets_(&st, 1), "padded") == 0);
    CHECK_EQ_I(geti(&sw, 0), 1);
    CHECK(strcmp(gets_(&cat, 0), "Hello!") == 0);
    CHECK(isnull(&cat, 3));
    CHECK(strcmp(gets_(&cat, 4), "!") == 0);
    ladle_column cols[] = {lb, lc, cl, cr, up, sl2, st, sw, cat};
    for (int i = 0; i < 9; i++) ladle_column_release(&cols[i]);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(temporal_fields_and_arithmetic) {
  /* 2024-02-29 = 19782 days; 1969-12-31 = -1 */
  const int32_t d[] = {19782, -1, 0};
  const int64_t ts[] = {(int64_t)19782 * 86400000000LL + 3723000000LL, -1, 0}; /* 01:02:03 */
  colspec c[] = {{"d", LADLE_TYPE_DATE, d, NULL}};
  ladle_table_builder *b;
  CHECK_OK(ladle_table_builder_create(&b, &err_));
  CHECK_OK(ladle_table_builder_add(b, "d", T_(LADLE_TYPE_DATE), 3, d, NULL, &err_));
  CHECK_OK(ladle_table_builder_add(
      b, "ts", ladle_dtype_temporal(LADLE_TYPE_DATETIME, LADLE_TIME_US, NULL), 3, ts, NULL, &err_));
  ladle_table *t;
  CHECK_OK(ladle_table_builder_finish(b, 0, &t, &err_));
  (void)c;
  ladle_func_opts mo = {0};
  mo.str = "1mo";
  ladle_expr *e[] = {
      AS(fn1(LADLE_FN_DT_YEAR, COL("d")), "y"),
      AS(fn1(LADLE_FN_DT_MONTH, COL("d")), "m"),
      AS(fn1(LADLE_FN_DT_DAY, COL("d")), "dd"),
      AS(fn1(LADLE_FN_DT_WEEKDAY, COL("d")), "wd"),
      AS(fn1(LADLE_FN_DT_ORDINAL_DAY, COL("d")), "od"),
      AS(fn1(LADLE_FN_DT_HOUR, COL("ts")), "h"),
      AS(fn1(LADLE_FN_DT_SECOND, COL("ts")), "s"),
      AS(fn1o(LADLE_FN_DT_TRUNCATE, COL("d"), mo), "tr"),
      AS(BIN(ADD, COL("ts"),
             ladle_expr_lit_temporal(
                 86400000000LL, ladle_dtype_temporal(LADLE_TYPE_DURATION, LADLE_TIME_US, NULL))),
         "plus"),
      AS(ladle_expr_cast(COL("d"), T_(LADLE_TYPE_STRING), true), "str")};
  ladle_result *r = select_run(t, 10, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column y = result_col(r, "y"), m = result_col(r, "m"), dd = result_col(r, "dd"),
                 wd = result_col(r, "wd"), od = result_col(r, "od"), h = result_col(r, "h"),
                 s = result_col(r, "s"), tr = result_col(r, "tr"), plus = result_col(r, "plus"),
                 str = result_col(r, "str");
    CHECK_EQ_I(geti(&y, 0), 2024);
    CHECK_EQ_I(geti(&m, 0), 2);
    CHECK_EQ_I(geti(&dd, 0), 29);
    CHECK_EQ_I(geti(&y, 1), 1969);
    CHECK_EQ_I(geti(&dd, 1), 31);
    CHECK_EQ_I(geti(&wd, 0), 4); /* a Thursday */
    CHECK_EQ_I(geti(&wd, 2), 4); /* 1970-01-01 was a Thursday */
    CHECK_EQ_I(geti(&od, 0), 60);
    CHECK_EQ_I(geti(&h, 0), 1);
    CHECK_EQ_I(geti(&s, 0), 3);
    CHECK_EQ_I(geti(&h, 1), 23); /* -1us is 23:59:59.999999 the day before */
    CHECK_EQ_I(geti(&tr, 0), 19782 - 28);
    CHECK_EQ_I(geti(&plus, 2), 86400000000LL);
    CHECK(strcmp(gets_(&str, 0), "2024-02-29") == 0);
    ladle_column cols[] = {y, m, dd, wd, od, h, s, tr, plus, str};
    for (int i = 0; i < 10; i++) ladle_column_release(&cols[i]);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(hash_is_deterministic_and_seeded) {
  const int64_t v[] = {1, 2, 1};
  colspec c[] = {{"v", LADLE_TYPE_INT64, v, NULL}};
  ladle_table *t = make_table(3, 1, c, 0);
  ladle_func_opts s1 = {0}, s2 = {0};
  s1.u64 = 1;
  s2.u64 = 2;
  ladle_expr *e[] = {AS(fn1o(LADLE_FN_HASH, COL("v"), s1), "h1"),
                     AS(fn1o(LADLE_FN_HASH, COL("v"), s2), "h2")};
  ladle_result *r = select_run(t, 2, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column h1 = result_col(r, "h1"), h2 = result_col(r, "h2");
    CHECK(h1.type.id == LADLE_TYPE_UINT64);
    CHECK(geti(&h1, 0) == geti(&h1, 2));
    CHECK(geti(&h1, 0) != geti(&h1, 1));
    CHECK(geti(&h1, 0) != geti(&h2, 0));
    ladle_column_release(&h1);
    ladle_column_release(&h2);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

/* A one-column table of a temporal type. */
static ladle_table *temporal_table(const char *name, ladle_dtype type, int64_t n,
                                   const void *values) {
  ladle_table_builder *b;
  ladle_table *t = NULL;
  CHECK_OK(ladle_table_builder_create(&b, &err_));
  CHECK_OK(ladle_table_builder_add(b, name, type, n, values, NULL, &err_));
  CHECK_OK(ladle_table_builder_finish(b, 0, &t, &err_));
  return t;
}

/* Runs select(exprs) expecting the execution to fail with `want`. */
static void expect_exec_error(ladle_table *t, size_t n, ladle_expr **e, ladle_status want) {
  ladle_plan *p;
  CHECK_OK(ladle_plan_select(scan(t), n, e, &p, &err_));
  ladle_engine *eng;
  CHECK_OK(ladle_engine_create(NULL, &eng, &err_));
  ladle_result *r = NULL;
  CHECK(ladle_engine_execute(eng, p, &r, &err_) == want);
  CHECK(r == NULL);
  ladle_engine_destroy(eng);
  ladle_plan_destroy(p);
}

TEST(casts_polars_refuses_fail_at_run_time) {
  /* Duration -> String crashed (15.1). Polars refuses it where a value reaches
   * the cast: the plan binds, the execution fails naming the column, and the
   * kernel called directly fails without touching memory */
  const int64_t ms[] = {-1000, 5, INT64_MIN};
  ladle_dtype dur = ladle_dtype_temporal(LADLE_TYPE_DURATION, LADLE_TIME_MS, NULL);
  ladle_table *t = temporal_table("d", dur, 3, ms);
  ladle_expr *e[] = {ladle_expr_cast(COL("d"), T_(LADLE_TYPE_STRING), false)};
  expect_exec_error(t, 1, e, LADLE_ECOMPUTE);
  CHECK(strstr(err_.message, "'d'") != NULL);
  ladle_column c, out;
  CHECK_OK(ladle_column_alloc(dur, 3, false, 0, &c, &err_));
  memcpy(LADLE_COL_MUT(&c, int64_t), ms, sizeof ms);
  ladle_kctx k = {0};
  memset(&out, 0, sizeof out);
  CHECK(ladle_cpu_cast(&k, &c, T_(LADLE_TYPE_STRING), LADLE_CAST_NON_STRICT, "d", &out, &err_) ==
        LADLE_ECOMPUTE);
  CHECK(out.values == NULL);
  ladle_column_release(&c);
  /* all null: nulls of the target type, as Polars */
  CHECK_OK(ladle_column_nulls(dur, 2, &c, &err_));
  CHECK_OK(ladle_cpu_cast(&k, &c, T_(LADLE_TYPE_STRING), LADLE_CAST_STRICT, "d", &out, &err_));
  CHECK(out.type.id == LADLE_TYPE_STRING && out.length == 2 && out.null_count == 2);
  ladle_column_release(&out);
  ladle_column_release(&c);
  ladle_table_release(t);
  /* String -> Boolean, Date, Datetime: Polars refuses them */
  const char *s[] = {"true", "2020-01-01"};
  colspec cs[] = {{"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *ts = make_table(2, 1, cs, 0);
  ladle_dtype to[] = {T_(LADLE_TYPE_BOOL), T_(LADLE_TYPE_DATE),
                      ladle_dtype_temporal(LADLE_TYPE_DATETIME, LADLE_TIME_US, NULL)};
  for (int i = 0; i < 3; i++) {
    ladle_expr *e2[] = {ladle_expr_cast(COL("s"), to[i], false)};
    expect_exec_error(ts, 1, e2, LADLE_ECOMPUTE);
    CHECK(strstr(err_.message, "not supported") != NULL);
  }
  ladle_table_release(ts);
}

TEST(casts_parse_text_as_polars) {
  const char *s[] = {"+4", " 7", "0x10", "1e3", "-0", "-INFINITY", "1_0", "007", ".5", "1."};
  colspec c[] = {{"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(10, 1, c, 0);
  ladle_expr *e[] = {AS(ladle_expr_cast(COL("s"), T_(LADLE_TYPE_INT32), false), "i"),
                     AS(ladle_expr_cast(COL("s"), T_(LADLE_TYPE_FLOAT64), false), "f"),
                     AS(ladle_expr_cast(COL("s"), T_(LADLE_TYPE_UINT8), false), "u")};
  ladle_result *r = select_run(t, 3, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column i = result_col(r, "i"), f = result_col(r, "f"), u = result_col(r, "u");
    CHECK_EQ_I(geti(&i, 0), 4); /* a '+' sign is fine */
    CHECK(isnull(&i, 1));       /* no spaces */
    CHECK(isnull(&f, 1));
    CHECK(isnull(&f, 2)); /* no hex */
    CHECK(getf(&f, 3) == 1000.0);
    CHECK(isnull(&i, 3));
    CHECK_EQ_I(geti(&i, 4), 0);
    CHECK(isnull(&u, 4)); /* "-0" is no unsigned number */
    CHECK(isinf(getf(&f, 5)) && getf(&f, 5) < 0);
    CHECK(isnull(&i, 6) && isnull(&f, 6)); /* no underscores */
    CHECK_EQ_I(geti(&u, 7), 7);
    CHECK(getf(&f, 8) == 0.5 && getf(&f, 9) == 1.0);
    ladle_column cols[] = {i, f, u};
    for (int k = 0; k < 3; k++) ladle_column_release(&cols[k]);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(casts_float_wrap_saturates_and_text) {
  const double f[] = {NAN, INFINITY, -1e300, -1.5, 300.7, 100.0, 1e16, 1e-6, -0.0, 2.5e-7};
  colspec c[] = {{"f", LADLE_TYPE_FLOAT64, f, NULL}};
  ladle_table *t = make_table(10, 1, c, 0);
  ladle_expr *e[] = {
      AS(ladle_expr_cast_mode(COL("f"), T_(LADLE_TYPE_INT8), LADLE_CAST_WRAP), "i8"),
      AS(ladle_expr_cast_mode(COL("f"), T_(LADLE_TYPE_UINT8), LADLE_CAST_WRAP), "u8"),
      AS(ladle_expr_cast(COL("f"), T_(LADLE_TYPE_STRING), false), "s")};
  ladle_result *r = select_run(t, 3, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column i8 = result_col(r, "i8"), u8 = result_col(r, "u8"), s = result_col(r, "s");
    const int64_t ei[] = {0, 127, -128, -1, 127}, eu[] = {0, 255, 0, 0, 255};
    for (int k = 0; k < 5; k++) {
      CHECK(!isnull(&i8, k) && !isnull(&u8, k));
      CHECK_EQ_I(geti(&i8, k), ei[k]);
      CHECK_EQ_I(geti(&u8, k), eu[k]);
    }
    const char *es[] = {"NaN",   "inf",   "-1e+300", "-1.5", "300.7",
                        "100.0", "1e+16", "1e-6",    "-0.0", "2.5e-7"};
    for (int k = 0; k < 10; k++) CHECK(strcmp(gets_(&s, k), es[k]) == 0);
    ladle_column cols[] = {i8, u8, s};
    for (int k = 0; k < 3; k++) ladle_column_release(&cols[k]);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(casts_temporal_units_and_overflow) {
  const int64_t v[] = {-1500, 4611686018427387904LL}; /* 2^62 */
  ladle_dtype dur_ns = ladle_dtype_temporal(LADLE_TYPE_DURATION, LADLE_TIME_NS, NULL);
  ladle_dtype dt_ns = ladle_dtype_temporal(LADLE_TYPE_DATETIME, LADLE_TIME_NS, NULL);
  ladle_dtype dt_us = ladle_dtype_temporal(LADLE_TYPE_DATETIME, LADLE_TIME_US, NULL);
  ladle_dtype dt_ms = ladle_dtype_temporal(LADLE_TYPE_DATETIME, LADLE_TIME_MS, NULL);
  ladle_dtype dur_us = ladle_dtype_temporal(LADLE_TYPE_DURATION, LADLE_TIME_US, NULL);
  ladle_table *tdur = temporal_table("d", dur_ns, 2, v), *tdt = temporal_table("t", dt_ns, 2, v),
              *tms = temporal_table("m", dt_ms, 2, v);
  ladle_expr *e1[] = {ladle_expr_cast(COL("d"), dur_us, false)};
  ladle_expr *e2[] = {AS(ladle_expr_cast(COL("t"), dt_us, false), "us"),
                      AS(ladle_expr_cast(COL("t"), T_(LADLE_TYPE_STRING), false), "s")};
  ladle_expr *e3[] = {ladle_expr_cast(COL("m"), dt_ns, false)};
  ladle_result *r1 = select_run(tdur, 1, e1), *r2 = select_run(tdt, 2, e2),
               *r3 = select_run(tms, 1, e3);
  CHECK(r1 && r2 && r3);
  if (r1 && r2 && r3) {
    ladle_column d = result_col(r1, "d"), t = result_col(r2, "us"), s = result_col(r2, "s"),
                 ns = result_col(r3, "m");
    CHECK_EQ_I(geti(&d, 0), -1); /* a Duration truncates */
    CHECK_EQ_I(geti(&t, 0), -2); /* a Datetime floors */
    CHECK(strcmp(gets_(&s, 0), "1969-12-31 23:59:59.999998500") == 0);
    CHECK(isnull(&ns, 1)); /* 2^62 ms does not fit in ns */
    CHECK_EQ_I(geti(&ns, 0), -1500000000LL);
    ladle_column cols[] = {d, t, ns, s};
    for (int k = 0; k < 4; k++) ladle_column_release(&cols[k]);
  }
  ladle_result_destroy(r1);
  ladle_result_destroy(r2);
  ladle_result_destroy(r3);
  /* 2^62 ms is in the year 146 million: Polars cannot print it (it panics) */
  ladle_expr *e7[] = {ladle_expr_cast(COL("m"), T_(LADLE_TYPE_STRING), false)};
  expect_exec_error(tms, 1, e7, LADLE_ECOMPUTE);
  /* strict: an error, not a wrapped value (16.4) */
  ladle_expr *e4[] = {ladle_expr_cast(COL("m"), dt_ns, true)};
  expect_exec_error(tms, 1, e4, LADLE_ECOMPUTE);
  const int32_t days[] = {376200, 2932897}; /* 3000-01-01, 10000-01-01 */
  ladle_table *td = temporal_table("d", T_(LADLE_TYPE_DATE), 2, days);
  ladle_expr *e5[] = {ladle_expr_cast(COL("d"), dt_ns, true)};
  expect_exec_error(td, 1, e5, LADLE_ECOMPUTE);
  ladle_expr *e6[] = {ladle_expr_cast(COL("d"), T_(LADLE_TYPE_STRING), true)};
  ladle_result *r6 = select_run(td, 1, e6);
  CHECK(r6 != NULL);
  if (r6) {
    ladle_column s = result_col(r6, "d");
    CHECK(strcmp(gets_(&s, 0), "3000-01-01") == 0);
    CHECK(strcmp(gets_(&s, 1), "+10000-01-01") == 0);
    ladle_column_release(&s);
  }
  ladle_result_destroy(r6);
  ladle_table_release(tdur);
  ladle_table_release(tdt);
  ladle_table_release(tms);
  ladle_table_release(td);
}

TEST(strings_unicode_case_strip_slice) {
  const char *s[] = {"straße", "ΟΔΟΣ ΟΔΟΣ.", "İ", "\xe3\x80\x80x\xe2\x80\x83", "abc", "ΑΣΑ"};
  colspec c[] = {{"s", LADLE_TYPE_STRING, s, NULL}};
  ladle_table *t = make_table(6, 1, c, 0);
  ladle_func_opts sl = {0};
  sl.i64 = -5;
  sl.i64b = 3;
  ladle_expr *e[] = {AS(fn1(LADLE_FN_STR_TO_UPPER, COL("s")), "up"),
                     AS(fn1(LADLE_FN_STR_TO_LOWER, COL("s")), "lo"),
                     AS(fn1(LADLE_FN_STR_STRIP_CHARS, COL("s")), "st"),
                     AS(fn1o(LADLE_FN_STR_SLICE, COL("s"), sl), "sl")};
  ladle_result *r = select_run(t, 4, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column up = result_col(r, "up"), lo = result_col(r, "lo"), st = result_col(r, "st"),
                 sl2 = result_col(r, "sl");
    CHECK(strcmp(gets_(&up, 0), "STRASSE") == 0);
    CHECK(strcmp(gets_(&lo, 1), "οδος οδος.") == 0); /* final sigma at each word's end */
    CHECK(strcmp(gets_(&lo, 2), "i\xcc\x87") == 0);  /* i + combining dot above */
    CHECK(strcmp(gets_(&lo, 5), "ασα") == 0);        /* not final inside a word */
    CHECK(strcmp(gets_(&st, 3), "x") == 0);          /* Unicode White_Space */
    CHECK(strcmp(gets_(&sl2, 4), "a") == 0);         /* [-2, 1) of "abc" */
    ladle_column cols[] = {up, lo, st, sl2};
    for (int k = 0; k < 4; k++) ladle_column_release(&cols[k]);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

TEST(pow_special_exponents_as_polars) {
  const double x[] = {-0.0, -INFINITY, 1.1};
  const int64_t i[] = {2, 3, 4};
  colspec c[] = {{"x", LADLE_TYPE_FLOAT64, x, NULL}, {"i", LADLE_TYPE_INT64, i, NULL}};
  ladle_table *t = make_table(3, 2, c, 0);
  ladle_expr *e[] = {AS(fn2(LADLE_FN_POW, COL("x"), LITF(0.5)), "sq"),
                     AS(fn2(LADLE_FN_POW, COL("x"), LIT(3)), "cube")};
  ladle_result *r = select_run(t, 2, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column sq = result_col(r, "sq"), cube = result_col(r, "cube");
    CHECK(getf(&sq, 0) == 0 && signbit(getf(&sq, 0))); /* sqrt(-0.0) */
    CHECK(isnan(getf(&sq, 1)));                        /* sqrt(-inf) */
    CHECK(getf(&cube, 2) == 1.1 * 1.1 * 1.1);          /* multiplied, not pow() */
    ladle_column_release(&sq);
    ladle_column_release(&cube);
  }
  ladle_result_destroy(r);
  /* an integer to a negative power is an error (16.14) */
  ladle_expr *e2[] = {fn2(LADLE_FN_POW, COL("i"), LIT(-1))};
  expect_exec_error(t, 1, e2, LADLE_ECOMPUTE);
  ladle_table_release(t);
}

TEST(date_arithmetic_overflow_is_null) {
  /* the last Int32 day + 100 days wrapped to a negative day (16.4) */
  const int32_t d[] = {2147483647 - 50, 0, 100000000, 106751992};
  ladle_table *t = temporal_table("d", T_(LADLE_TYPE_DATE), 4, d);
  ladle_dtype us = ladle_dtype_temporal(LADLE_TYPE_DURATION, LADLE_TIME_US, NULL);
  ladle_expr *e[] = {AS(BIN(ADD, COL("d"), ladle_expr_lit_temporal(100 * 86400000000LL, us)), "p"),
                     AS(BIN(SUB, COL("d"), COL("d")), "z")};
  ladle_result *r = select_run(t, 2, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column p = result_col(r, "p"), z = result_col(r, "z");
    CHECK(isnull(&p, 0));
    CHECK_EQ_I(geti(&p, 1), 100);
    CHECK_EQ_I(geti(&p, 2), 100000100);
    CHECK(isnull(&p, 3)); /* past int64 microseconds */
    CHECK(isnull(&z, 0) && !isnull(&z, 2) && isnull(&z, 3));
    ladle_column_release(&p);
    ladle_column_release(&z);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}

/* Int128: wrapping + and *, flooring // and % (null for 0, MIN // -1 wraps),
 * comparisons, casts to text and back; 16-byte values read with memcpy. */
TEST(int128_arithmetic_and_casts) {
  const __int128 max = (__int128)(((unsigned __int128)1 << 127) - 1), min = -max - 1;
  const __int128 a[] = {max, min, -7, 7, 0};
  const __int128 b[] = {1, -1, 2, 0, -3};
  colspec c[] = {{"a", LADLE_TYPE_INT128, a, NULL}, {"b", LADLE_TYPE_INT128, b, NULL}};
  ladle_table *t = make_table(5, 2, c, 0);
  ladle_expr *e[] = {
      AS(BIN(ADD, COL("a"), COL("b")), "add"),
      AS(BIN(FLOOR_DIV, COL("a"), COL("b")), "fdiv"),
      AS(BIN(MOD, COL("a"), COL("b")), "mod"),
      AS(BIN(LT, COL("a"), COL("b")), "lt"),
      AS(ladle_expr_cast(COL("a"), T_(LADLE_TYPE_STRING), false), "s"),
      AS(ladle_expr_cast(COL("a"), T_(LADLE_TYPE_INT64), false), "i64"),
      AS(BIN(MUL, COL("a"), ladle_expr_lit_int128(0, 2, LADLE_TYPE_INT128)), "mul"),
  };
  ladle_result *r = select_run(t, 7, e);
  CHECK(r != NULL);
  if (r) {
    ladle_column add = result_col(r, "add"), fd = result_col(r, "fdiv"), md = result_col(r, "mod");
    ladle_column lt = result_col(r, "lt"), s = result_col(r, "s"), i64 = result_col(r, "i64");
    ladle_column mul = result_col(r, "mul");
    __int128 v[5];
    memcpy(v, add.values, sizeof v);
    CHECK(v[0] == min && v[1] == max && v[2] == -5); /* wraps both ways */
    memcpy(v, fd.values, sizeof v);
    CHECK(v[0] == max && v[1] == min && v[2] == -4 && v[4] == 0);
    CHECK(isnull(&fd, 3) && isnull(&md, 3));
    memcpy(v, md.values, sizeof v);
    CHECK(v[1] == 0 && v[2] == 1 && v[4] == 0);
    memcpy(v, mul.values, sizeof v);
    CHECK(v[0] == -2 && v[1] == 0 && v[2] == -14);
    CHECK(geti(&lt, 0) == 0 && geti(&lt, 1) == 1 && geti(&lt, 2) == 1);
    CHECK(strcmp(gets_(&s, 1), "-170141183460469231731687303715884105728") == 0);
    CHECK(strcmp(gets_(&s, 3), "7") == 0);
    CHECK(isnull(&i64, 0) && geti(&i64, 2) == -7);
    ladle_column *cols[] = {&add, &fd, &md, &lt, &s, &i64, &mul};
    for (size_t k = 0; k < 7; k++) ladle_column_release(cols[k]);
  }
  ladle_result_destroy(r);
  ladle_table_release(t);
}
