/* test_tpch.c — TPC-H q1, q3 and q18 built through the C API over small tables
 * made here, checked against answers computed independently by nested loops. */
#define TEST_RNG_SEED 88172645463325252ULL
#include "harness.h"

#define NC 12
#define NO 60
#define NL 300

/* customer */
static int64_t c_custkey[NC];
static const char *c_name[NC];
static const char *c_mktsegment[NC];
static char names[NC][32];
/* orders */
static int64_t o_orderkey[NO], o_custkey[NO], o_shippriority[NO];
static int32_t o_orderdate[NO];
static double o_totalprice[NO];
/* lineitem */
static int64_t l_orderkey[NL];
static double l_quantity[NL], l_extendedprice[NL], l_discount[NL], l_tax[NL];
static const char *l_returnflag[NL], *l_linestatus[NL];
static int32_t l_shipdate[NL];

static const int32_t D1995_03_15 = 9204; /* days since epoch */
static const int32_t D1998_09_02 = 10471;

static void gen(void) {
  static const char *seg[] = {"BUILDING", "AUTOMOBILE", "MACHINERY"};
  static const char *rf[] = {"A", "N", "R"}, *ls[] = {"F", "O"};
  for (int i = 0; i < NC; i++) {
    c_custkey[i] = i + 1;
    snprintf(names[i], sizeof names[i], "Customer#%03d", i + 1);
    c_name[i] = names[i];
    c_mktsegment[i] = seg[test_rand() % 3];
  }
  for (int i = 0; i < NO; i++) {
    o_orderkey[i] = 1000 + i * 3;
    o_custkey[i] = (int64_t)(test_rand() % NC) + 1;
    o_orderdate[i] = D1995_03_15 - 60 + (int32_t)(test_rand() % 120);
    o_shippriority[i] = 0;
    o_totalprice[i] = (double)(test_rand() % 100000) / 100.0;
  }
  for (int i = 0; i < NL; i++) {
    l_orderkey[i] = o_orderkey[test_rand() % NO];
    l_quantity[i] = (double)(test_rand() % 50 + 1);
    l_extendedprice[i] = (double)(test_rand() % 1000000) / 100.0;
    l_discount[i] = (double)(test_rand() % 11) / 100.0;
    l_tax[i] = (double)(test_rand() % 9) / 100.0;
    l_returnflag[i] = rf[test_rand() % 3];
    l_linestatus[i] = ls[test_rand() % 2];
    l_shipdate[i] = D1995_03_15 - 30 + (int32_t)(test_rand() % 1400);
  }
}

static ladle_table *customer, *orders, *lineitem;

static void make_tables(void) {
  if (customer) return;
  gen();
  colspec c[] = {{"c_custkey", LADLE_TYPE_INT64, c_custkey, NULL},
                 {"c_name", LADLE_TYPE_STRING, c_name, NULL},
                 {"c_mktsegment", LADLE_TYPE_STRING, c_mktsegment, NULL}};
  colspec o[] = {{"o_orderkey", LADLE_TYPE_INT64, o_orderkey, NULL},
                 {"o_custkey", LADLE_TYPE_INT64, o_custkey, NULL},
                 {"o_orderdate", LADLE_TYPE_DATE, o_orderdate, NULL},
                 {"o_shippriority", LADLE_TYPE_INT64, o_shippriority, NULL},
                 {"o_totalprice", LADLE_TYPE_FLOAT64, o_totalprice, NULL}};
  colspec l[] = {{"l_orderkey", LADLE_TYPE_INT64, l_orderkey, NULL},
                 {"l_quantity", LADLE_TYPE_FLOAT64, l_quantity, NULL},
                 {"l_extendedprice", LADLE_TYPE_FLOAT64, l_extendedprice, NULL},
                 {"l_discount", LADLE_TYPE_FLOAT64, l_discount, NULL},
                 {"l_tax", LADLE_TYPE_FLOAT64, l_tax, NULL},
                 {"l_returnflag", LADLE_TYPE_STRING, l_returnflag, NULL},
                 {"l_linestatus", LADLE_TYPE_STRING, l_linestatus, NULL},
                 {"l_shipdate", LADLE_TYPE_DATE, l_shipdate, NULL}};
  customer = make_table(NC, 3, c, 5);
  orders = make_table(NO, 5, o, 16);
  lineitem = make_table(NL, 8, l, 64);
}

static ladle_expr *date_lit(int32_t d) { return ladle_expr_lit_temporal(d, T_(LADLE_TYPE_DATE)); }
static ladle_expr *disc_price(void) {
  return BIN(MUL, COL("l_extendedprice"), BIN(SUB, LITF(1.0), COL("l_discount")));
}

TEST(tpch_q1) {
  make_tables();
  ladle_plan *p;
  CHECK_OK(ladle_plan_filter(scan(lineitem), BIN(LE, COL("l_shipdate"), date_lit(D1998_09_02)), &p,
                             &err_));
  ladle_expr *keys[] = {COL("l_returnflag"), COL("l_linestatus")};
  ladle_expr *aggs[] = {
      AS(AGG(SUM, COL("l_quantity")), "sum_qty"),
      AS(AGG(SUM, COL("l_extendedprice")), "sum_base_price"),
      AS(AGG(SUM, disc_price()), "sum_disc_price"),
      AS(AGG(SUM, BIN(MUL, disc_price(), BIN(ADD, LITF(1.0), COL("l_tax")))), "sum_charge"),
      AS(AGG(MEAN, COL("l_quantity")), "avg_qty"),
      AS(AGG(MEAN, COL("l_extendedprice")), "avg_price"),
      AS(AGG(MEAN, COL("l_discount")), "avg_disc"),
      AS(ladle_expr_len(), "count_order")};
  ladle_plan *g, *s;
  CHECK_OK(ladle_plan_group_by(p, 2, keys, 8, aggs, false, &g, &err_));
  ladle_expr *by[] = {COL("l_returnflag"), COL("l_linestatus")};
  CHECK_OK(ladle_plan_sort(g, 2, by, NULL, NULL, false, -1, &s, &err_));
  ladle_result *r = run_plan(s, 2, 50);
  ladle_plan_destroy(s);
  CHECK(r != NULL);
  if (!r) return;
  /* independent answer: for each (flag, status) in sorted order */
  static const char *rf[] = {"A", "N", "R"}, *ls[] = {"F", "O"};
  ladle_column f = result_col(r, "l_returnflag"), st = result_col(r, "l_linestatus"),
               sq = result_col(r, "sum_qty"), sd = result_col(r, "sum_disc_price"),
               sc = result_col(r, "sum_charge"), aq = result_col(r, "avg_qty"),
               cnt = result_col(r, "count_order");
  int row = 0;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 2; b++) {
      double qty = 0, disc = 0, charge = 0;
      int64_t n = 0;
      for (int i = 0; i < NL; i++) {
        if (l_shipdate[i] > D1998_09_02 || strcmp(l_returnflag[i], rf[a]) ||
            strcmp(l_linestatus[i], ls[b]))
          continue;
        qty += l_quantity[i];
        disc += l_extendedprice[i] * (1 - l_discount[i]);
        charge += l_extendedprice[i] * (1 - l_discount[i]) * (1 + l_tax[i]);
        n++;
      }
      if (n == 0) continue;
      CHECK(row < ladle_result_num_rows(r));
      if (row >= ladle_result_num_rows(r)) break;
      CHECK(strcmp(gets_(&f, row), rf[a]) == 0 && strcmp(gets_(&st, row), ls[b]) == 0);
      CHECK_NEAR(getf(&sq, row), qty, 1e-9);
      CHECK_NEAR(getf(&sd, row), disc, 1e-9);
      CHECK_NEAR(getf(&sc, row), charge, 1e-9);
      CHECK_NEAR(getf(&aq, row), qty / (double)n, 1e-9);
      CHECK_EQ_I(geti(&cnt, row), n);
      row++;
    }
  CHECK_EQ_I(ladle_result_num_rows(r), row);
  ladle_column cols[] = {f, st, sq, sd, sc, aq, cnt};
  for (int i = 0; i < 7; i++) ladle_column_release(&cols[i]);
  ladle_result_destroy(r);
}

TEST(tpch_q3) {
  make_tables();
  ladle_plan *c, *o, *l, *co, *col, *g, *s;
  CHECK_OK(ladle_plan_filter(
      scan(customer), BIN(EQ, COL("c_mktsegment"), ladle_expr_lit_str("BUILDING", 8)), &c, &err_));
  CHECK_OK(ladle_plan_filter(scan(orders), BIN(LT, COL("o_orderdate"), date_lit(D1995_03_15)), &o,
                             &err_));
  CHECK_OK(ladle_plan_filter(scan(lineitem), BIN(GT, COL("l_shipdate"), date_lit(D1995_03_15)), &l,
                             &err_));
  ladle_expr *k1[] = {COL("c_custkey")}, *k2[] = {COL("o_custkey")};
  CHECK_OK(ladle_plan_join(c, o, 1, k1, k2, NULL, &co, &err_));
  ladle_expr *k3[] = {COL("o_orderkey")}, *k4[] = {COL("l_orderkey")};
  CHECK_OK(ladle_plan_join(co, l, 1, k3, k4, NULL, &col, &err_));
  ladle_expr *keys[] = {COL("o_orderkey"), COL("o_orderdate"), COL("o_shippriority")};
  ladle_expr *aggs[] = {AS(AGG(SUM, disc_price()), "revenue")};
  CHECK_OK(ladle_plan_group_by(col, 3, keys, 1, aggs, false, &g, &err_));
  ladle_expr *by[] = {COL("revenue"), COL("o_orderdate")};
  bool desc[] = {true, false};
  CHECK_OK(ladle_plan_sort(g, 2, by, desc, NULL, false, 10, &s, &err_));
  ladle_result *r = run_plan(s, 2, 32);
  ladle_plan_destroy(s);
  CHECK(r != NULL);
  if (!r) return;
  /* independent answer */
  double rev[NO];
  int n = 0;
  int idx[NO];
  for (int j = 0; j < NO; j++) {
    rev[j] = 0;
    bool building = strcmp(c_mktsegment[o_custkey[j] - 1], "BUILDING") == 0;
    bool any = false;
    if (!building || o_orderdate[j] >= D1995_03_15) continue;
    for (int i = 0; i < NL; i++)
      if (l_orderkey[i] == o_orderkey[j] && l_shipdate[i] > D1995_03_15) {
        rev[j] += l_extendedprice[i] * (1 - l_discount[i]);
        any = true;
      }
    if (any) idx[n++] = j;
  }
  for (int a = 0; a < n; a++) /* selection sort by revenue desc, date asc */
    for (int b = a + 1; b < n; b++)
      if (rev[idx[b]] > rev[idx[a]] ||
          (rev[idx[b]] == rev[idx[a]] && o_orderdate[idx[b]] < o_orderdate[idx[a]])) {
        int t = idx[a];
        idx[a] = idx[b];
        idx[b] = t;
      }
  int expect = n < 10 ? n : 10;
  CHECK(n > 0);
  CHECK_EQ_I(ladle_result_num_rows(r), expect);
  ladle_column ok = result_col(r, "o_orderkey"), rv = result_col(r, "revenue"),
               od = result_col(r, "o_orderdate");
  for (int a = 0; a < expect && a < ladle_result_num_rows(r); a++) {
    CHECK_EQ_I(geti(&ok, a), o_orderkey[idx[a]]);
    CHECK_NEAR(getf(&rv, a), rev[idx[a]], 1e-9);
    CHECK_EQ_I(geti(&od, a), o_orderdate[idx[a]]);
  }
  CHECK(strcmp(ladle_result_column_name(r, 3), "revenue") == 0);
  ladle_column_release(&ok);
  ladle_column_release(&rv);
  ladle_column_release(&od);
  ladle_result_destroy(r);
}

TEST(tpch_q18) {
  make_tables();
  const double threshold = 80;
  ladle_plan *big, *bigf, *o, *oc, *ocl, *g, *s;
  ladle_expr *k0[] = {COL("l_orderkey")};
  ladle_expr *a0[] = {AS(AGG(SUM, COL("l_quantity")), "sum_qty")};
  CHECK_OK(ladle_plan_group_by(scan(lineitem), 1, k0, 1, a0, false, &big, &err_));
  CHECK_OK(ladle_plan_filter(big, BIN(GT, COL("sum_qty"), LITF(threshold)), &bigf, &err_));
  ladle_expr *k1[] = {COL("o_orderkey")}, *k2[] = {COL("l_orderkey")};
  ladle_join_opts semi = {LADLE_JOIN_SEMI, false, true, NULL, NULL, LADLE_JOIN_ORDER_NONE};
  CHECK_OK(ladle_plan_join(scan(orders), bigf, 1, k1, k2, &semi, &o, &err_));
  ladle_expr *k3[] = {COL("o_custkey")}, *k4[] = {COL("c_custkey")};
  CHECK_OK(ladle_plan_join(o, scan(customer), 1, k3, k4, NULL, &oc, &err_));
  ladle_expr *k5[] = {COL("o_orderkey")}, *k6[] = {COL("l_orderkey")};
  CHECK_OK(ladle_plan_join(oc, scan(lineitem), 1, k5, k6, NULL, &ocl, &err_));
  ladle_expr *keys[] = {COL("c_name"), COL("o_custkey"), COL("o_orderkey"), COL("o_orderdate"),
                        COL("o_totalprice")};
  ladle_expr *aggs[] = {AS(AGG(SUM, COL("l_quantity")), "col6")};
  CHECK_OK(ladle_plan_group_by(ocl, 5, keys, 1, aggs, false, &g, &err_));
  ladle_expr *by[] = {COL("o_totalprice"), COL("o_orderdate")};
  bool desc[] = {true, false};
  CHECK_OK(ladle_plan_sort(g, 2, by, desc, NULL, false, 100, &s, &err_));
  ladle_result *r = run_plan(s, 2, 32);
  ladle_plan_destroy(s);
  CHECK(r != NULL);
  if (!r) return;
  /* independent answer */
  int idx[NO], n = 0;
  double qty[NO];
  for (int j = 0; j < NO; j++) {
    qty[j] = 0;
    for (int i = 0; i < NL; i++)
      if (l_orderkey[i] == o_orderkey[j]) qty[j] += l_quantity[i];
    if (qty[j] > threshold) idx[n++] = j;
  }
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      if (o_totalprice[idx[b]] > o_totalprice[idx[a]] ||
          (o_totalprice[idx[b]] == o_totalprice[idx[a]] &&
           o_orderdate[idx[b]] < o_orderdate[idx[a]])) {
        int t = idx[a];
        idx[a] = idx[b];
        idx[b] = t;
      }
  CHECK(n > 0);
  CHECK_EQ_I(ladle_result_num_rows(r), n);
  ladle_column ok = result_col(r, "o_orderkey"), q = result_col(r, "col6"),
               nm = result_col(r, "c_name");
  for (int a = 0; a < n && a < ladle_result_num_rows(r); a++) {
    CHECK_EQ_I(geti(&ok, a), o_orderkey[idx[a]]);
    CHECK_NEAR(getf(&q, a), qty[idx[a]], 1e-9);
    CHECK(strcmp(gets_(&nm, a), c_name[o_custkey[idx[a]] - 1]) == 0);
  }
  ladle_column_release(&ok);
  ladle_column_release(&q);
  ladle_column_release(&nm);
  ladle_result_destroy(r);
}

__attribute__((destructor)) static void release_tables(void) {
  ladle_table_release(customer);
  ladle_table_release(orders);
  ladle_table_release(lineitem);
}
