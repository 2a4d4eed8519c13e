/* harness.h — a tiny test harness: TEST(name) functions, CHECK macros that
 * record failures and go on, and a main that runs every test and closes with
 * "N passed, N failed". Plus helpers to build tables and read results. */
#ifndef LADLE_TEST_HARNESS_H
#define LADLE_TEST_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "ladle.h"

/* Reproducible test data (xorshift64); a file sets its own seed by defining
 * TEST_RNG_SEED before it includes this header. */
#ifndef TEST_RNG_SEED
#define TEST_RNG_SEED 88172645463325252ULL
#endif
static uint64_t test_rng_ = TEST_RNG_SEED;
static inline uint64_t test_rand(void) {
  test_rng_ ^= test_rng_ << 13;
  test_rng_ ^= test_rng_ >> 7;
  test_rng_ ^= test_rng_ << 17;
  return test_rng_;
}

typedef void (*test_fn)(void);
static struct {
  const char *label;
  test_fn fn;
} tests_[256];
static int ntests_ = 0;
static int failures_ = 0;

#define TEST(name)                                                 \
  static void name(void);                                          \
  __attribute__((constructor)) static void register_##name(void) { \
    tests_[ntests_].label = #name;                                 \
    tests_[ntests_++].fn = name;                                   \
  }                                                                \
  static void name(void)

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      failures_++;                                                               \
    }                                                                            \
  } while (0)

#define CHECK_EQ_I(a, b)                                                                          \
  do {                                                                                            \
    long long a_ = (long long)(a), b_ = (long long)(b);                                           \
    if (a_ != b_) {                                                                               \
      fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, a_, \
              b_);                                                                                \
      failures_++;                                                                                \
    }                                                                                             \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                   \
  do {                                                                                          \
    double a_ = (double)(a), b_ = (double)(b);                                                  \
    if (!(fabs(a_ - b_) <= (tol) * (1 + fabs(b_)))) {                                           \
      fprintf(stderr, "  %s:%d: %s ~= %s failed: %.17g vs %.17g\n", __FILE__, __LINE__, #a, #b, \
              a_, b_);                                                                          \
      failures_++;                                                                              \
    }                                                                                           \
  } while (0)

#define CHECK_OK(expr)                                                           \
  do {                                                                           \
    ladle_status s_ = (expr);                                                    \
    if (s_ != LADLE_OK) {                                                        \
      fprintf(stderr, "  %s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr, \
              ladle_status_name(s_), err_.message);                              \
      failures_++;                                                               \
    }                                                                            \
  } while (0)

/* Every test file has a `static ladle_error err_;` that calls pass. */
static ladle_error err_;

int main(void) {
  int passed = 0, failed = 0;
  for (int i = 0; i < ntests_; i++) {
    int before = failures_;
    tests_[i].fn();
    if (failures_ == before) {
      passed++;
    } else {
      failed++;
      fprintf(stderr, "FAIL %s\n", tests_[i].label);
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------- helpers */

static inline ladle_dtype T_(ladle_type_id id) { return ladle_dtype_make(id); }

/* Builds a table from (name, type, values, validity) quadruples. */
typedef struct colspec {
  const char *name;
  ladle_type_id type;
  const void *values;
  const uint8_t *validity;
} colspec;

static inline ladle_table *make_table(int64_t n, int ncols, const colspec *cols, int64_t morsel) {
  ladle_table_builder *b;
  if (ladle_table_builder_create(&b, &err_) != LADLE_OK) return NULL;
  for (int i = 0; i < ncols; i++) {
    ladle_dtype t = ladle_dtype_make(cols[i].type);
    if (ladle_table_builder_add(b, cols[i].name, t, n, cols[i].values, cols[i].validity, &err_) !=
        LADLE_OK) {
      fprintf(stderr, "make_table: %s\n", err_.message);
      ladle_table_builder_destroy(b);
      return NULL;
    }
  }
  ladle_table *t;
  if (ladle_table_builder_finish(b, morsel, &t, &err_) != LADLE_OK) return NULL;
  return t;
}

static inline ladle_plan *scan(ladle_table *t) {
  ladle_plan *p = NULL;
  if (ladle_plan_scan_table(t, &p, &err_) != LADLE_OK) return NULL;
  return p;
}

/* Runs a plan on a fresh engine (threads, morsel) and returns the result. */
static inline ladle_result *run_plan(ladle_plan *p, int threads, int64_t morsel) {
  ladle_engine_opts o = {LADLE_DEVICE_CPU, 0, threads, morsel, 0, NULL};
  ladle_engine *e;
  if (ladle_engine_create(&o, &e, &err_) != LADLE_OK) return NULL;
  ladle_result *r = NULL;
  if (ladle_engine_execute(e, p, &r, &err_) != LADLE_OK) {
    fprintf(stderr, "  execute failed: %s\n", err_.message);
    failures_++; /* run_plan is for plans that must run; expected failures call the API */
    r = NULL;
  }
  ladle_engine_destroy(e);
  return r;
}

/* Column `name` of a result, as one column (caller releases). */
static inline ladle_column result_col(ladle_result *r, const char *name) {
  ladle_column c;
  memset(&c, 0, sizeof c);
  ladle_table *t = ladle_result_table(r);
  int64_t i = ladle_schema_find(&t->schema, name);
  if (i < 0) {
    fprintf(stderr, "  no column '%s' in result\n", name);
  } else if (ladle_table_concat_column(t, (size_t)i, &c, &err_) != LADLE_OK) {
    fprintf(stderr, "  concat failed\n");
  }
  ladle_table_release(t);
  return c;
}

static inline int64_t geti(const ladle_column *c, int64_t i) {
  switch (ladle_type_width(c->type.id)) {
    case 1:
      return ladle_type_is_signed(c->type.id) ? ((const int8_t *)c->values)[i]
                                              : ((const uint8_t *)c->values)[i];
    case 2:
      return ladle_type_is_signed(c->type.id) ? ((const int16_t *)c->values)[i]
                                              : ((const uint16_t *)c->values)[i];
    case 4:
      if (c->type.id == LADLE_TYPE_FLOAT32) return (int64_t)((const float *)c->values)[i];
      if (ladle_type_is_signed(c->type.id) || c->type.id == LADLE_TYPE_DATE)
        return ((const int32_t *)c->values)[i];
      return ((const uint32_t *)c->values)[i];
    default:
      if (c->type.id == LADLE_TYPE_FLOAT64) return (int64_t)((const double *)c->values)[i];
      return ((const int64_t *)c->values)[i];
  }
}
static inline double getf(const ladle_column *c, int64_t i) {
  if (c->type.id == LADLE_TYPE_FLOAT32) return ((const float *)c->values)[i];
  if (c->type.id == LADLE_TYPE_FLOAT64) return ((const double *)c->values)[i];
  return (double)geti(c, i);
}
static inline bool isnull(const ladle_column *c, int64_t i) {
  return !ladle_column_valid(c, i) || c->type.id == LADLE_TYPE_NULL;
}
/* String value i as a NUL-terminated static buffer. */
static inline const char *gets_(const ladle_column *c, int64_t i) {
  static char buf[4][256];
  static int k = 0;
  char *b = buf[k++ & 3];
  int64_t len = ladle_str_len(c, i);
  if (len > 255) len = 255;
  memcpy(b, ladle_str_ptr(c, i), (size_t)len);
  b[len] = 0;
  return b;
}

/* Expression shorthands. */
#define COL(n) ladle_expr_col(n)
#define LIT(v) ladle_expr_lit_dyn_int(v)
#define LITF(v) ladle_expr_lit_dyn_float(v)
#define BIN(op, a, b) ladle_expr_binary(LADLE_OP_##op, a, b)
#define AGG(op, e) ladle_expr_agg(LADLE_AGG_##op, e, NULL)
#define AS(e, n) ladle_expr_alias(e, n)
static inline ladle_expr *fn1(ladle_func f, ladle_expr *a) {
  return ladle_expr_func(f, 1, &a, NULL);
}
static inline ladle_expr *fn1o(ladle_func f, ladle_expr *a, ladle_func_opts o) {
  return ladle_expr_func(f, 1, &a, &o);
}
static inline ladle_expr *fn2(ladle_func f, ladle_expr *a, ladle_expr *b) {
  ladle_expr *args[2] = {a, b};
  return ladle_expr_func(f, 2, args, NULL);
}
static inline ladle_expr *fn3(ladle_func f, ladle_expr *a, ladle_expr *b, ladle_expr *c) {
  ladle_expr *args[3] = {a, b, c};
  return ladle_expr_func(f, 3, args, NULL);
}

/* select exprs over table t and run it */
static inline ladle_result *select_run(ladle_table *t, size_t n, ladle_expr **exprs) {
  ladle_plan *p;
  if (ladle_plan_select(scan(t), n, exprs, &p, &err_) != LADLE_OK) {
    fprintf(stderr, "  select failed: %s\n", err_.message);
    return NULL;
  }
  ladle_result *r = run_plan(p, 2, 0);
  ladle_plan_destroy(p);
  return r;
}

#endif
