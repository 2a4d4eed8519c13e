/* test_edges.c — every operator over the edge shapes: an empty table, one row,
 * all-null columns, and 1.1 million rows in many partitions. Each result is
 * checked against a brute-force computation over the same generated data. */
#include "harness.h"

typedef struct shape {
  const char *name;
  int64_t n;
  bool all_null;
} shape;

typedef struct data {
  int64_t n;
  int64_t *k; /* 0..99, null every 11th (all null in the all-null shape) */
  uint8_t *kv;
  double *v;
  uint8_t *vv;
  ladle_table *t;
} data;

static data gen(shape s) {
  data d;
  d.n = s.n;
  d.k = malloc((size_t)(s.n + 1) * 8);
  d.kv = malloc((size_t)s.n + 1);
  d.v = malloc((size_t)(s.n + 1) * 8);
  d.vv = malloc((size_t)s.n + 1);
  for (int64_t i = 0; i < s.n; i++) {
    d.k[i] = (i * 31 + 7) % 100;
    d.kv[i] = !s.all_null && i % 11 != 3;
    d.v[i] = (double)((i * 17) % 23) - 11.5;
    d.vv[i] = !s.all_null && i % 7 != 2;
  }
  colspec c[] = {{"k", LADLE_TYPE_INT64, d.k, d.kv}, {"v", LADLE_TYPE_FLOAT64, d.v, d.vv}};
  d.t = make_table(s.n, 2, c, 50000);
  return d;
}

static void release(data *d) {
  free(d->k);
  free(d->kv);
  free(d->v);
  free(d->vv);
  ladle_table_release(d->t);
}

static ladle_result *go(ladle_plan *p) {
  ladle_result *r = run_plan(p, 2, 50000);
  ladle_plan_destroy(p);
  CHECK(r != NULL);
  return r;
}

static void check_shape(shape s) {
  data d = gen(s);
  int64_t n = d.n;
  /* brute force */
  int64_t cnt_k[100] = {0}, groups = 0, nnk = 0, pos = 0, nnv = 0;
  double sum_k[100] = {0}, sum = 0, mn = INFINITY, mx = -INFINITY;
  bool null_group = false;
  for (int64_t i = 0; i < n; i++) {
    if (d.kv[i]) {
      if (cnt_k[d.k[i]]++ == 0) groups++;
      nnk++;
      if (d.vv[i]) sum_k[d.k[i]] += d.v[i];
    } else {
      null_group = true;
    }
    if (d.vv[i]) {
      sum += d.v[i];
      nnv++;
      pos += d.v[i] > 0;
      mn = fmin(mn, d.v[i]);
      mx = fmax(mx, d.v[i]);
    }
  }
  int64_t ngroups = groups + null_group;
  int64_t self_join = 0;
  for (int k = 0; k < 100; k++) self_join += cnt_k[k] * cnt_k[k];
  ladle_plan *p;
  ladle_result *r;

  /* filter */
  CHECK_OK(ladle_plan_filter(scan(d.t), BIN(GT, COL("v"), LITF(0)), &p, &err_));
  if ((r = go(p))) CHECK_EQ_I(ladle_result_num_rows(r), pos);
  ladle_result_destroy(r);

  /* select and with_columns */
  ladle_expr *e1[] = {AS(BIN(ADD, BIN(MUL, COL("v"), LITF(2)), LITF(1)), "w")};
  CHECK_OK(ladle_plan_select(scan(d.t), 1, e1, &p, &err_));
  if ((r = go(p))) {
    ladle_column w = result_col(r, "w");
    CHECK_EQ_I(w.length, n);
    CHECK_EQ_I(w.null_count, n - nnv);
    double tot = 0;
    for (int64_t i = 0; i < n; i++)
      if (!isnull(&w, i)) tot += getf(&w, i);
    CHECK_NEAR(tot, 2 * sum + (double)nnv, 1e-9);
    ladle_column_release(&w);
  }
  ladle_result_destroy(r);
  ladle_expr *e2[] = {fn2(LADLE_FN_FILL_NULL, COL("v"), LITF(0))};
  CHECK_OK(ladle_plan_with_columns(scan(d.t), 1, e2, &p, &err_));
  if ((r = go(p))) {
    ladle_column v = result_col(r, "v");
    CHECK_EQ_I(v.null_count, 0);
    CHECK_EQ_I(ladle_result_num_columns(r), 2);
    ladle_column_release(&v);
  }
  ladle_result_destroy(r);

  /* group_by */
  ladle_expr *keys[] = {COL("k")};
  ladle_expr *aggs[] = {AS(AGG(SUM, COL("v")), "s"), AS(ladle_expr_len(), "n")};
  CHECK_OK(ladle_plan_group_by(scan(d.t), 1, keys, 2, aggs, false, &p, &err_));
  if ((r = go(p))) {
    CHECK_EQ_I(ladle_result_num_rows(r), ngroups);
    ladle_column k = result_col(r, "k"), sc = result_col(r, "s"), nc = result_col(r, "n");
    int64_t total = 0;
    for (int64_t g = 0; g < ladle_result_num_rows(r); g++) {
      total += geti(&nc, g);
      if (!isnull(&k, g)) {
        CHECK_EQ_I(geti(&nc, g), cnt_k[geti(&k, g)]);
        CHECK_NEAR(getf(&sc, g), sum_k[geti(&k, g)], 1e-9);
      }
    }
    CHECK_EQ_I(total, n);
    ladle_column_release(&k);
    ladle_column_release(&sc);
    ladle_column_release(&nc);
  }
  ladle_result_destroy(r);

  /* reduce */
  ladle_expr *e3[] = {AS(AGG(SUM, COL("v")), "s"), AS(AGG(MIN, COL("v")), "mn"),
                      AS(AGG(MAX, COL("v")), "mx"), AS(AGG(COUNT, COL("v")), "c"),
                      AS(AGG(MEAN, COL("v")), "m")};
  CHECK_OK(ladle_plan_reduce(scan(d.t), 5, e3, &p, &err_));
  if ((r = go(p))) {
    ladle_column sc = result_col(r, "s"), a = result_col(r, "mn"), b = result_col(r, "mx"),
                 c = result_col(r, "c"), m = result_col(r, "m");
    CHECK_EQ_I(ladle_result_num_rows(r), 1);
    CHECK_NEAR(getf(&sc, 0), sum, 1e-9);
    CHECK_EQ_I(geti(&c, 0), nnv);
    if (nnv == 0) {
      CHECK(isnull(&a, 0) && isnull(&b, 0) && isnull(&m, 0));
    } else {
      CHECK_NEAR(getf(&a, 0), mn, 0);
      CHECK_NEAR(getf(&b, 0), mx, 0);
      CHECK_NEAR(getf(&m, 0), sum / (double)nnv, 1e-9);
    }
    ladle_column cols[] = {sc, a, b, c, m};
    for (int i = 0; i < 5; i++) ladle_column_release(&cols[i]);
  }
  ladle_result_destroy(r);

  /* self joins: inner counts pairs of equal non-null keys; left keeps every row */
  if (n <= 100000) {
    for (int how = 0; how < 2; how++) {
      ladle_expr *lo[] = {COL("k")}, *ro[] = {COL("k")};
      ladle_join_opts o = {
          how ? LADLE_JOIN_LEFT : LADLE_JOIN_INNER, false, true, NULL, NULL, LADLE_JOIN_ORDER_NONE};
      CHECK_OK(ladle_plan_join(scan(d.t), scan(d.t), 1, lo, ro, &o, &p, &err_));
      if ((r = go(p))) CHECK_EQ_I(ladle_result_num_rows(r), self_join + (how ? n - nnk : 0));
      ladle_result_destroy(r);
    }
  } else {
    /* a million-row probe against a unique build side */
    ladle_expr *k0[] = {COL("k")};
    ladle_expr *a0[] = {AS(ladle_expr_len(), "cnt")};
    ladle_plan *agg;
    CHECK_OK(ladle_plan_group_by(scan(d.t), 1, k0, 1, a0, false, &agg, &err_));
    ladle_expr *lo[] = {COL("k")}, *ro[] = {COL("k")};
    CHECK_OK(ladle_plan_join(scan(d.t), agg, 1, lo, ro, NULL, &p, &err_));
    if ((r = go(p))) CHECK_EQ_I(ladle_result_num_rows(r), nnk);
    ladle_result_destroy(r);
  }

  /* sort, slice, distinct, union, row index */
  ladle_expr *by[] = {COL("v")};
  CHECK_OK(ladle_plan_sort(scan(d.t), 1, by, NULL, NULL, true, -1, &p, &err_));
  if ((r = go(p))) {
    ladle_column v = result_col(r, "v");
    bool ok = true;
    for (int64_t i = 1; i < n; i++) {
      if (!isnull(&v, i - 1) && isnull(&v, i)) ok = false;
      if (!isnull(&v, i - 1) && !isnull(&v, i) && getf(&v, i - 1) > getf(&v, i)) ok = false;
    }
    CHECK(ok);
    CHECK_EQ_I(v.length, n);
    ladle_column_release(&v);
  }
  ladle_result_destroy(r);
  CHECK_OK(ladle_plan_slice(scan(d.t), 1, 3, &p, &err_));
  if ((r = go(p))) CHECK_EQ_I(ladle_result_num_rows(r), LADLE_MAX(0, LADLE_MIN(3, n - 1)));
  ladle_result_destroy(r);
  const char *sub[] = {"k"};
  CHECK_OK(ladle_plan_distinct(scan(d.t), 1, sub, LADLE_KEEP_FIRST, true, &p, &err_));
  if ((r = go(p))) CHECK_EQ_I(ladle_result_num_rows(r), ngroups);
  ladle_result_destroy(r);
  ladle_plan *two[] = {scan(d.t), scan(d.t)}, *u, *ri;
  CHECK_OK(ladle_plan_union(2, two, &u, &err_));
  CHECK_OK(ladle_plan_row_index(u, "i", 0, &ri, &err_));
  if ((r = go(ri))) {
    CHECK_EQ_I(ladle_result_num_rows(r), 2 * n);
    if (n > 0) {
      ladle_column i = result_col(r, "i");
      CHECK_EQ_I(geti(&i, 2 * n - 1), 2 * n - 1);
      ladle_column_release(&i);
    }
  }
  ladle_result_destroy(r);

  /* windows */
  ladle_expr *pb[] = {COL("k")};
  ladle_expr *e4[] = {AS(ladle_expr_over(AGG(SUM, COL("v")), 1, pb), "ws"),
                      AS(ladle_expr_rank(COL("v"), LADLE_RANK_ORDINAL, false), "rk")};
  CHECK_OK(ladle_plan_with_columns(scan(d.t), 2, e4, &p, &err_));
  if ((r = go(p))) {
    ladle_column ws = result_col(r, "ws"), rk = result_col(r, "rk");
    bool ok = ws.length == n;
    int64_t maxrank = 0;
    for (int64_t i = 0; ok && i < n; i++) {
      if (d.kv[i] && fabs(getf(&ws, i) - sum_k[d.k[i]]) > 1e-6) ok = false;
      if (!isnull(&rk, i)) maxrank = LADLE_MAX(maxrank, geti(&rk, i));
    }
    CHECK(ok);
    CHECK_EQ_I(maxrank, nnv);
    ladle_column_release(&ws);
    ladle_column_release(&rk);
  }
  ladle_result_destroy(r);
  release(&d);
}

TEST(empty_table) { check_shape((shape){"empty", 0, false}); }
TEST(single_row) { check_shape((shape){"single", 1, false}); }
TEST(all_null_columns) { check_shape((shape){"all-null", 1000, true}); }
TEST(small_with_nulls) { check_shape((shape){"small", 5000, false}); }
TEST(million_rows) { check_shape((shape){"large", 1100000, false}); }
