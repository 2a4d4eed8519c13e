/* test_backend.c — kernel entries of the backend table checked against simple
 * references on random columns (every key type, nulls, empty, one row, many
 * rows): the start of the conformance suite that every backend's table must
 * pass. Today: top_k_indices against sort_indices, mask_to_indices and gather
 * against loops. */
#include "backend/backend.h"
#include "harness.h"

/* A column of n random values of type id drawn from `domain` values (ties),
 * about one in `null_every` null (0: none). */
static ladle_column random_column(ladle_type_id id, int64_t n, int domain, int null_every) {
  ladle_column c;
  memset(&c, 0, sizeof c);
  ladle_dtype t = ladle_dtype_make(id);
  if (id == LADLE_TYPE_STRING) {
    int64_t chars = n * 3;
    CHECK(ladle_column_alloc(t, n, null_every > 0, chars, &c, &err_) == LADLE_OK);
    int64_t *off = LADLE_COL_MUT(&c, int64_t);
    char *data = LADLE_COL_CHARS_MUT(&c);
    off[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      int v = (int)(test_rand() % (uint64_t)domain);
      int len = snprintf(data + off[i], 4, "%c%c", 'a' + v % 26, 'a' + (v / 26) % 26);
      off[i + 1] = off[i] + (v % 3 == 0 ? 1 : len); /* some one-letter prefixes */
    }
  } else {
    CHECK(ladle_column_alloc(t, n, null_every > 0, 0, &c, &err_) == LADLE_OK);
    for (int64_t i = 0; i < n; i++) {
      int64_t v = (int64_t)(test_rand() % (uint64_t)domain) - domain / 2;
      switch (id) {
        case LADLE_TYPE_INT32:
          LADLE_COL_MUT(&c, int32_t)[i] = (int32_t)v;
          break;
        case LADLE_TYPE_UINT8:
          LADLE_COL_MUT(&c, uint8_t)[i] = (uint8_t)(v + domain / 2);
          break;
        case LADLE_TYPE_FLOAT64: {
          double d = (double)v * 0.5;
          if (v == 0 && test_rand() % 2) d = -0.0;
          if (v == 1) d = NAN;
          LADLE_COL_MUT(&c, double)[i] = d;
          break;
        }
        default:
          LADLE_COL_MUT(&c, int64_t)[i] = v;
      }
    }
  }
  if (null_every > 0) {
    for (int64_t i = 0; i < n; i++)
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), i, test_rand() % (uint64_t)null_every != 0);
    ladle_column_finish_nulls(&c);
  }
  return c;
}

TEST(top_k_indices_equals_the_head_of_a_stable_sort) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_pool *pool = NULL;
  CHECK(ladle_pool_create(3, &pool, &err_) == LADLE_OK);
  ladle_kctx ctx = {.pool = pool, .morsel_rows = 1000};
  const ladle_type_id types[] = {LADLE_TYPE_INT32, LADLE_TYPE_UINT8, LADLE_TYPE_FLOAT64,
                                 LADLE_TYPE_STRING, LADLE_TYPE_INT64};
  const int64_t sizes[] = {0, 1, 2, 17, 5000, 300000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    for (int trial = 0; trial < 12; trial++) {
      int64_t n = sizes[si];
      size_t nk = 1 + (size_t)(test_rand() % 3);
      ladle_column keys[3];
      bool desc[3], nl[3];
      for (size_t k = 0; k < nk; k++) {
        keys[k] = random_column(types[test_rand() % 5], n, 2 + (int)(test_rand() % 60), (int)(test_rand() % 4) * 3);
        desc[k] = test_rand() % 2;
        nl[k] = test_rand() % 2;
      }
      int64_t kk = (int64_t)(test_rand() % 4 == 0 ? test_rand() % (uint64_t)(n + 2) : test_rand() % 50);
      int64_t *perm = NULL, *top = NULL;
      CHECK(be->sort_indices(&ctx, keys, nk, desc, nl, &perm, &err_) == LADLE_OK);
      CHECK(be->top_k_indices(&ctx, keys, nk, desc, nl, kk, &top, &err_) == LADLE_OK);
      int64_t m = kk < n ? kk : n;
      int64_t bad = 0;
      for (int64_t i = 0; perm && top && i < m; i++) bad += perm[i] != top[i];
      if (bad) fprintf(stderr, "  n=%lld k=%lld keys=%zu: %lld rows differ\n", (long long)n,
                       (long long)kk, nk, (long long)bad);
      CHECK(bad == 0);
      free(perm);
      free(top);
      for (size_t k = 0; k < nk; k++) ladle_column_release(&keys[k]);
    }
  }
  ladle_pool_destroy(pool);
}

TEST(mask_to_indices_and_gather_equal_loops) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_pool *pool = NULL;
  CHECK(ladle_pool_create(2, &pool, &err_) == LADLE_OK);
  ladle_kctx ctx = {.pool = pool, .morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 63, 64, 65, 100000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int64_t n = sizes[si];
    ladle_column mask;
    CHECK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n, true, 0, &mask, &err_) == LADLE_OK);
    for (int64_t i = 0; i < n; i++) {
      LADLE_COL_MUT(&mask, uint8_t)[i] = test_rand() % 3 == 0;
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(&mask), i, test_rand() % 5 != 0);
    }
    ladle_column_finish_nulls(&mask);
    int64_t *idx = NULL, m = -1;
    CHECK(be->mask_to_indices(&ctx, &mask, &idx, &m, &err_) == LADLE_OK);
    int64_t want = 0, bad = 0;
    for (int64_t i = 0; i < n; i++)
      if (ladle_column_valid(&mask, i) && ((const uint8_t *)mask.values)[i]) {
        bad += idx == NULL || want >= m || idx[want] != i;
        want++;
      }
    CHECK(m == want);
    CHECK(bad == 0);
    ladle_column src = random_column(LADLE_TYPE_INT64, n, 1000, 4), out;
    CHECK(be->gather(&ctx, &src, idx, m, &out, &err_) == LADLE_OK);
    for (int64_t i = 0; i < m; i++) {
      CHECK(ladle_column_valid(&out, i) == ladle_column_valid(&src, idx[i]));
      if (ladle_column_valid(&src, idx[i]))
        CHECK(((const int64_t *)out.values)[i] == ((const int64_t *)src.values)[idx[i]]);
    }
    ladle_column_release(&out);
    ladle_column_release(&src);
    ladle_column_release(&mask);
    free(idx);
  }
  ladle_pool_destroy(pool);
}
