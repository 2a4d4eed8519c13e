/* test_backend.c — kernel entries of the backend table checked against simple
 * references on random columns (every key type, nulls, empty, one row, many
 * rows): the start of the conformance suite that every backend's table must
 * pass. Today: top_k_indices against sort_indices; mask_to_indices, gather,
 * sequence and the host kernels over row indices (mask_and, keep_to_indices,
 * selection_positions, mask_take, index_compose, index_is_identity,
 * group_rows, distinct_rows, join_pairs_sort, join_pairs_coalesce, moments,
 * rank_of_singletons) against loops. */
#include "backend/backend.h"
#include "backend/cpu/cpu.h"
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

/* Row i of a column random_column makes, as a double. */
static double value_f64(const ladle_column *c, int64_t i) {
  switch (c->type.id) {
    case LADLE_TYPE_INT32:
      return ((const int32_t *)c->values)[i];
    case LADLE_TYPE_UINT8:
      return ((const uint8_t *)c->values)[i];
    case LADLE_TYPE_FLOAT64:
      return ((const double *)c->values)[i];
    default:
      return (double)((const int64_t *)c->values)[i];
  }
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
        keys[k] = random_column(types[test_rand() % 5], n, 2 + (int)(test_rand() % 60),
                                (int)(test_rand() % 4) * 3);
        desc[k] = test_rand() % 2;
        nl[k] = test_rand() % 2;
      }
      int64_t kk =
          (int64_t)(test_rand() % 4 == 0 ? test_rand() % (uint64_t)(n + 2) : test_rand() % 50);
      int64_t *perm = NULL, *top = NULL;
      CHECK(be->sort_indices(&ctx, keys, nk, desc, nl, &perm, &err_) == LADLE_OK);
      CHECK(be->top_k_indices(&ctx, keys, nk, desc, nl, kk, &top, &err_) == LADLE_OK);
      int64_t m = kk < n ? kk : n;
      int64_t bad = 0;
      for (int64_t i = 0; perm && top && i < m; i++) bad += perm[i] != top[i];
      if (bad)
        fprintf(stderr, "  n=%lld k=%lld keys=%zu: %lld rows differ\n", (long long)n, (long long)kk,
                nk, (long long)bad);
      CHECK(bad == 0);
      free(perm);
      free(top);
      for (size_t k = 0; k < nk; k++) ladle_column_release(&keys[k]);
    }
  }
  ladle_pool_destroy(pool);
}

/* sort_indices is a stable sort: each row after the one before it in the
 * keys' order (ladle_cpu_sort_cmp), or equal to it and after it in the input,
 * on 3 threads (the parallel radix sort and the runs of ties) as on one; keys
 * of few values (long runs), of every 64 bits with nulls (a null flag and the
 * value as two fields), strings and floats. */
TEST(sort_indices_is_a_stable_sort_on_any_threads) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_pool *pool = NULL;
  CHECK(ladle_pool_create(3, &pool, &err_) == LADLE_OK);
  const ladle_type_id types[] = {LADLE_TYPE_INT32, LADLE_TYPE_UINT8, LADLE_TYPE_FLOAT64,
                                 LADLE_TYPE_STRING, LADLE_TYPE_INT64};
  const int64_t sizes[] = {0, 1, 70000, 250000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (int trial = 0; trial < 6; trial++) {
      int64_t n = sizes[si];
      size_t nk = 1 + (size_t)(test_rand() % 3);
      ladle_column keys[3];
      bool desc[3], nl[3];
      for (size_t k = 0; k < nk; k++) {
        ladle_type_id t = types[test_rand() % 5];
        int domain = trial % 2 ? 1000000 : 2 + (int)(test_rand() % 60);
        keys[k] = random_column(t, n, domain, (int)(test_rand() % 4) * 3);
        if (t == LADLE_TYPE_INT64 && trial % 3 == 2) /* every bit */
          for (int64_t i = 0; i < n; i++)
            LADLE_COL_MUT(&keys[k], int64_t)[i] = (int64_t)test_rand();
        desc[k] = test_rand() % 2;
        nl[k] = test_rand() % 2;
      }
      for (int threads = 0; threads < 2; threads++) {
        ladle_kctx ctx = {.pool = threads ? pool : NULL, .morsel_rows = 1000};
        int64_t *perm = NULL, bad = 0;
        CHECK(be->sort_indices(&ctx, keys, nk, desc, nl, &perm, &err_) == LADLE_OK);
        uint8_t *seen = calloc((size_t)n + 1, 1);
        for (int64_t i = 0; perm != NULL && seen != NULL && i < n; i++) {
          bool in = perm[i] >= 0 && perm[i] < n && !seen[perm[i]]; /* a permutation */
          bad += !in;
          if (in) seen[perm[i]] = 1;
        }
        free(seen);
        for (int64_t i = 0; perm != NULL && bad == 0 && i + 1 < n; i++) {
          int c = ladle_cpu_sort_cmp(keys, perm[i], keys, perm[i + 1], nk, desc, nl);
          bad += c > 0 || (c == 0 && perm[i] > perm[i + 1]);
        }
        if (bad)
          fprintf(stderr, "  n=%lld keys=%zu pool=%d: %lld rows out of order\n", (long long)n, nk,
                  threads, (long long)bad);
        CHECK(bad == 0);
        free(perm);
      }
      for (size_t k = 0; k < nk; k++) ladle_column_release(&keys[k]);
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
    CHECK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n, true, 0, &mask, &err_) ==
          LADLE_OK);
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

/* A BOOL mask of n rows whose true bytes are any nonzero value (kernels may
 * write more than 1), true about one row in `every`, with nulls or not. */
static ladle_column random_mask(int64_t n, int every, bool nulls) {
  ladle_column m;
  CHECK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n, nulls, 0, &m, &err_) == LADLE_OK);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = test_rand();
    LADLE_COL_MUT(&m, uint8_t)[i] = r % (uint64_t)every == 0 ? (uint8_t)(1 + (r >> 8) % 255) : 0;
    if (nulls) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&m), i, (r >> 20) % 4 != 0);
  }
  if (nulls) ladle_column_finish_nulls(&m);
  return m;
}

/* Row i of mask m (NULL: true; one row: for every row; not BOOL or no rows: null). */
static bool mask_ref(const ladle_column *m, int64_t i) {
  if (m == NULL) return true;
  if (m->type.id != LADLE_TYPE_BOOL || m->length == 0) return false;
  int64_t r = m->length == 1 ? 0 : i;
  return ladle_column_valid(m, r) && ((const uint8_t *)m->values)[r] != 0;
}

TEST(mask_and_and_keep_to_indices_equal_loops) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 2, 7, 8, 9, 63, 64, 65, 1000, 100003};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int64_t n = sizes[si];
    uint8_t *keep = malloc((size_t)n + 1), *want = malloc((size_t)n + 1);
    int64_t *idx = malloc(((size_t)n + 2) * sizeof *idx);
    for (int kind = 0; kind < 9; kind++) {
      ladle_column m;
      memset(&m, 0, sizeof m);
      const ladle_column *mp = &m;
      switch (kind) {
        case 0: /* dense, with nulls */
          m = random_mask(n, 2, true);
          break;
        case 1: /* sparse, no nulls */
          m = random_mask(n, 20, false);
          break;
        case 2: /* very sparse, with nulls */
          m = random_mask(n, 200, true);
          break;
        case 3: /* one row: true */
        case 4: /* one row: false */
          m = random_mask(1, 1, false);
          if (kind == 4) LADLE_COL_MUT(&m, uint8_t)[0] = 0;
          break;
        case 5: /* one row: null */
          CHECK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), 1, true, 0, &m, &err_) ==
                LADLE_OK);
          LADLE_COL_MUT(&m, uint8_t)[0] = 1;
          ladle_bit_set(LADLE_COL_VALIDITY_MUT(&m), 0, false);
          ladle_column_finish_nulls(&m);
          break;
        case 6: /* a NULL column */
          CHECK(ladle_column_nulls(ladle_dtype_make(LADLE_TYPE_NULL), n, &m, &err_) == LADLE_OK);
          break;
        case 7: /* no rows */
          m = random_mask(0, 1, false);
          break;
        default: /* none: true everywhere */
          mp = NULL;
      }
      for (int init = 0; init < 2; init++) {
        for (int64_t i = 0; i < n; i++) keep[i] = want[i] = (uint8_t)(test_rand() % 2);
        int64_t wn = 0, got = -1;
        for (int64_t i = 0; i < n; i++) {
          want[i] = (uint8_t)((init ? 1 : want[i]) & mask_ref(mp, i));
          wn += want[i];
        }
        CHECK(be->mask_and(&ctx, mp, n, init, keep, &got, &err_) == LADLE_OK);
        CHECK_EQ_I(got, wn);
        CHECK(n == 0 || memcmp(keep, want, (size_t)n) == 0);
        /* the same without a count */
        for (int64_t i = 0; i < n; i++) keep[i] = (uint8_t)(test_rand() % 2);
        if (!init) memcpy(keep, want, (size_t)n); /* ANDing in again changes nothing */
        CHECK(be->mask_and(&ctx, mp, n, init, keep, NULL, &err_) == LADLE_OK);
        CHECK(n == 0 || memcmp(keep, want, (size_t)n) == 0);
        /* the rows kept, as indices */
        for (int64_t i = 0; i <= n; i++) idx[i] = -7;
        CHECK(be->keep_to_indices(&ctx, keep, n, wn, idx, &err_) == LADLE_OK);
        int64_t q = 0, bad = 0;
        for (int64_t i = 0; i < n; i++)
          if (want[i]) bad += idx[q++] != i;
        CHECK_EQ_I(bad, 0);
        CHECK_EQ_I(q, wn);
      }
      if (kind <= 2 && n > 1) {
        /* a mask of fewer rows: an error, keep untouched; of more: the first rows */
        memcpy(keep, want, (size_t)n);
        CHECK(be->mask_and(&ctx, &m, n + 1, true, keep, NULL, &err_) == LADLE_EINVAL);
        CHECK(memcmp(keep, want, (size_t)n) == 0);
        int64_t got = -1, wn = 0;
        CHECK(be->mask_and(&ctx, &m, n - 1, true, keep, &got, &err_) == LADLE_OK);
        for (int64_t i = 0; i < n - 1; i++) wn += keep[i] != mask_ref(&m, i) ? 1000000 : keep[i];
        CHECK_EQ_I(got, wn);
      }
      if (mp != NULL) ladle_column_release(&m);
    }
    free(keep);
    free(want);
    free(idx);
  }
}

/* valid_into: a column's validity (or its complement) written or ANDed into
 * keep bytes, against a loop over the bits; ladle_bitmap_and_bytes beneath it
 * over every length around its eight-row steps; compare_into's validity too. */
TEST(valid_into_equals_a_loop_over_the_bits) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 100003};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int64_t n = sizes[si];
    uint8_t *keep = malloc((size_t)n + 1), *want = malloc((size_t)n + 1);
    for (int kind = 0; kind < 4; kind++) {
      /* with nulls (a quarter, or almost all), without a validity, of type null */
      ladle_column x = random_mask(n, 2, kind == 0);
      if (kind == 1) {
        ladle_column_release(&x);
        CHECK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n, true, 0, &x, &err_) ==
              LADLE_OK);
        for (int64_t i = 0; i < n; i++) {
          LADLE_COL_MUT(&x, uint8_t)[i] = (uint8_t)(test_rand() % 2);
          ladle_bit_set(LADLE_COL_VALIDITY_MUT(&x), i, test_rand() % 16 == 0);
        }
        ladle_column_finish_nulls(&x);
      }
      if (kind == 3) {
        ladle_column_release(&x);
        CHECK(ladle_column_nulls(ladle_dtype_make(LADLE_TYPE_NULL), n, &x, &err_) == LADLE_OK);
      }
      for (int negate = 0; negate < 2; negate++)
        for (int init = 0; init < 2; init++) {
          for (int64_t i = 0; i < n; i++) keep[i] = want[i] = (uint8_t)(test_rand() % 2);
          keep[n] = want[n] = 0xAB; /* the byte past the end stays */
          ladle_status st = be->valid_into(&ctx, &x, negate, init, keep, &err_);
          if (kind == 3) { /* type null: not supported, keep untouched */
            CHECK(st == LADLE_ENOTSUP);
            CHECK(memcmp(keep, want, (size_t)n + 1) == 0);
            continue;
          }
          CHECK(st == LADLE_OK);
          for (int64_t i = 0; i < n; i++)
            want[i] = (uint8_t)((init ? 1 : want[i]) & (ladle_column_valid(&x, i) != negate));
          CHECK(memcmp(keep, want, (size_t)n + 1) == 0);
        }
      if (kind == 0 && n > 0) {
        /* compare_into ANDs the column's validity in: x != 0 on a BOOL
         * column is not supported, so on its bytes seen as UINT8 */
        ladle_column u = x, k;
        u.type = ladle_dtype_make(LADLE_TYPE_UINT8);
        CHECK(ladle_column_alloc(u.type, 1, false, 0, &k, &err_) == LADLE_OK);
        LADLE_COL_MUT(&k, uint8_t)[0] = 0;
        CHECK(be->compare_into(&ctx, LADLE_OP_NE, &u, &k, true, keep, &err_) == LADLE_OK);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++)
          bad += keep[i] != (ladle_column_valid(&x, i) && ((const uint8_t *)x.values)[i] != 0);
        CHECK_EQ_I(bad, 0);
        ladle_column_release(&k);
      }
      ladle_column_release(&x);
    }
    free(keep);
    free(want);
  }
}

TEST(selection_positions_inverts_a_selection) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 2, 17, 5000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int64_t n = sizes[si];
    int64_t *sel = malloc(((size_t)n + 1) * sizeof *sel), cnt = 0;
    int64_t *idx = malloc(((size_t)n + 1) * sizeof *idx);
    for (int64_t i = 0; i < n; i++)
      if (test_rand() % 3 != 0) sel[cnt++] = i;
    for (int64_t j = cnt - 1; j > 0; j--) { /* any order */
      int64_t r = (int64_t)(test_rand() % (uint64_t)(j + 1)), x = sel[j];
      sel[j] = sel[r];
      sel[r] = x;
    }
    CHECK(be->selection_positions(&ctx, sel, cnt, n, idx, &err_) == LADLE_OK);
    int64_t bad = 0, hit = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t w = -1;
      for (int64_t j = 0; j < cnt && w < 0; j++)
        if (sel[j] == i) w = j;
      bad += idx[i] != w;
      hit += w >= 0;
    }
    CHECK_EQ_I(bad, 0);
    CHECK_EQ_I(hit, cnt);
    free(sel);
    free(idx);
  }
}

TEST(sequence_counts_from_start_in_its_type) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const ladle_type_id types[] = {LADLE_TYPE_INT32, LADLE_TYPE_INT64, LADLE_TYPE_UINT32,
                                 LADLE_TYPE_UINT64};
  const int64_t starts[] = {0, 5, -3, 4294967290LL};
  const int64_t sizes[] = {0, 1, 6, 70000};
  for (size_t ti = 0; ti < 4; ti++)
    for (size_t a = 0; a < 4; a++)
      for (size_t si = 0; si < 4; si++) {
        ladle_dtype t = ladle_dtype_make(types[ti]);
        int64_t start = starts[a], n = sizes[si], last = start + n - 1;
        bool fits =
            n == 0 || (types[ti] == LADLE_TYPE_INT32    ? start >= INT32_MIN && last <= INT32_MAX
                       : types[ti] == LADLE_TYPE_UINT32 ? start >= 0 && last <= UINT32_MAX
                       : types[ti] == LADLE_TYPE_UINT64 ? start >= 0
                                                        : true);
        ladle_column c;
        memset(&c, 0, sizeof c);
        ladle_status st = be->sequence(&ctx, start, n, t, &c, &err_);
        CHECK_EQ_I(st, fits ? LADLE_OK : LADLE_EINVAL);
        if (st != LADLE_OK) continue;
        CHECK(c.type.id == types[ti] && c.length == n && c.null_count == 0 && c.validity == NULL);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
          int64_t v;
          switch (types[ti]) {
            case LADLE_TYPE_INT32:
              v = ((const int32_t *)c.values)[i];
              break;
            case LADLE_TYPE_UINT32:
              v = ((const uint32_t *)c.values)[i];
              break;
            default:
              v = ((const int64_t *)c.values)[i];
          }
          bad += v != start + i;
        }
        CHECK_EQ_I(bad, 0);
        ladle_column_release(&c);
      }
  ladle_column c;
  CHECK(be->sequence(&ctx, 0, -1, ladle_dtype_make(LADLE_TYPE_INT64), &c, &err_) == LADLE_EINVAL);
  CHECK(be->sequence(&ctx, INT64_MAX, 2, ladle_dtype_make(LADLE_TYPE_INT64), &c, &err_) ==
        LADLE_EINVAL);
  CHECK(be->sequence(&ctx, 0, 3, ladle_dtype_make(LADLE_TYPE_FLOAT64), &c, &err_) == LADLE_ENOTSUP);
}

TEST(group_rows_and_distinct_rows_equal_loops) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_pool *pool = NULL;
  CHECK(ladle_pool_create(2, &pool, &err_) == LADLE_OK);
  ladle_kctx ctx = {.pool = pool, .morsel_rows = 1000};
  const int64_t sizes[] = {0, 1, 2, 17, 5000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    for (int trial = 0; trial < 4; trial++) {
      int64_t n = sizes[si];
      ladle_column key = random_column(trial % 2 ? LADLE_TYPE_STRING : LADLE_TYPE_INT64, n,
                                       1 + (int)(test_rand() % (uint64_t)(n / 2 + 2)), trial * 2);
      ladle_groups g;
      memset(&g, 0, sizeof g);
      CHECK(be->group_ids(&ctx, &key, 1, &g, &err_) == LADLE_OK);
      int64_t ng = g.ngroups;
      /* reference: first and last row and size of each group, by scanning */
      int64_t *first = malloc(((size_t)ng + 1) * sizeof *first);
      int64_t *last = malloc(((size_t)ng + 1) * sizeof *last);
      int64_t *size = calloc((size_t)ng + 1, sizeof *size);
      int64_t *out = malloc(((size_t)LADLE_MAX(ng, n) + 1) * sizeof *out);
      for (int64_t k = 0; k < ng; k++) first[k] = -1;
      for (int64_t i = 0; i < n; i++) {
        if (first[g.ids[i]] < 0) first[g.ids[i]] = i;
        last[g.ids[i]] = i;
        size[g.ids[i]]++;
      }
      int64_t bad = 0;
      CHECK(be->group_rows(&ctx, &g, LADLE_GROUP_ROWS_FIRST, out, &err_) == LADLE_OK);
      for (int64_t k = 0; k < ng; k++) bad += out[k] != first[k];
      CHECK(be->group_rows(&ctx, &g, LADLE_GROUP_ROWS_LAST, out, &err_) == LADLE_OK);
      for (int64_t k = 0; k < ng; k++) bad += out[k] != last[k];
      CHECK(be->group_rows(&ctx, &g, LADLE_GROUP_ROWS_ID, out, &err_) == LADLE_OK);
      for (int64_t i = 0; i < n; i++) bad += out[i] != (int64_t)g.ids[i];
      CHECK_EQ_I(bad, 0);
      const ladle_keep kinds[] = {LADLE_KEEP_ANY, LADLE_KEEP_FIRST, LADLE_KEEP_LAST,
                                  LADLE_KEEP_NONE};
      for (int kk = 0; kk < 4; kk++) {
        int64_t *rows = NULL, m = -1, q = 0;
        CHECK(be->distinct_rows(&ctx, &g, kinds[kk], &rows, &m, &err_) == LADLE_OK);
        bad = 0;
        for (int64_t i = 0; i < n; i++) {
          uint32_t k = g.ids[i];
          bool kept = kinds[kk] == LADLE_KEEP_LAST   ? last[k] == i
                      : kinds[kk] == LADLE_KEEP_NONE ? size[k] == 1
                                                     : first[k] == i;
          if (kept) bad += q >= m || rows[q++] != i;
        }
        CHECK_EQ_I(bad, 0);
        CHECK_EQ_I(q, m);
        free(rows);
      }
      free(first);
      free(last);
      free(size);
      free(out);
      ladle_groups_release(&g);
      ladle_column_release(&key);
    }
  }
  ladle_pool_destroy(pool);
}

/* ladle_cpu_bucket against a serial stable counting sort: few groups (a
 * histogram per block), many (partitions of groups, then a count per
 * partition), items in no group, items given as rows or as positions, and
 * 1 to 16 threads. */
TEST(bucket_equals_a_stable_counting_sort) {
  const int nthreads[] = {1, 3, 16};
  const int64_t shapes[][2] = {{0, 1},           {7, 3},           {5000, 40},      {200000, 17},
                               {200000, 150000}, {300000, 300000}, {100000, 99999}, {70000, 5000}};
  for (size_t ti = 0; ti < sizeof nthreads / sizeof *nthreads; ti++) {
    ladle_pool *pool = NULL;
    CHECK(ladle_pool_create(nthreads[ti], &pool, &err_) == LADLE_OK);
    ladle_kctx ctx = {.pool = pool, .morsel_rows = 65536};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
      for (int trial = 0; trial < 2; trial++) {
        int64_t n = shapes[si][0], ng = shapes[si][1];
        int64_t *grp = malloc((size_t)LADLE_MAX(n, 1) * sizeof *grp);
        uint32_t *gid = malloc((size_t)LADLE_MAX(n, 1) * sizeof *gid);
        int64_t *row = malloc((size_t)LADLE_MAX(n, 1) * sizeof *row);
        for (int64_t i = 0; i < n; i++) {
          gid[i] = (uint32_t)(test_rand() % (uint64_t)ng);
          grp[i] = test_rand() % 9 == 0 ? -1 : (int64_t)gid[i];
          row[i] = (int64_t)(test_rand() % 1000000);
        }
        bool by_gid = trial == 0;
        const int64_t *rows_in = trial == 1 ? row : NULL;
        int64_t *off = NULL, *rows = NULL;
        CHECK(ladle_cpu_bucket(&ctx, by_gid ? NULL : grp, gid, rows_in, n, ng, &off, &rows,
                               &err_) == LADLE_OK);
        /* reference: counts, offsets, then items in order */
        int64_t *ref_off = calloc((size_t)ng + 1, sizeof *ref_off);
        int64_t *cur = calloc((size_t)ng + 1, sizeof *cur);
        for (int64_t i = 0; i < n; i++) {
          int64_t g = by_gid ? (int64_t)gid[i] : grp[i];
          if (g >= 0) ref_off[g + 1]++;
        }
        for (int64_t g = 0; g < ng; g++) ref_off[g + 1] += ref_off[g];
        int64_t *ref_rows = malloc((size_t)LADLE_MAX(ref_off[ng], 1) * sizeof *ref_rows);
        for (int64_t g = 0; g < ng; g++) cur[g] = ref_off[g];
        for (int64_t i = 0; i < n; i++) {
          int64_t g = by_gid ? (int64_t)gid[i] : grp[i];
          if (g >= 0) ref_rows[cur[g]++] = rows_in ? rows_in[i] : i;
        }
        int64_t bad = 0;
        for (int64_t g = 0; off && g <= ng; g++) bad += off[g] != ref_off[g];
        for (int64_t i = 0; rows && bad == 0 && i < ref_off[ng]; i++) bad += rows[i] != ref_rows[i];
        if (bad)
          fprintf(stderr, "  threads=%d n=%lld ng=%lld trial=%d: %lld differ\n", nthreads[ti],
                  (long long)n, (long long)ng, trial, (long long)bad);
        CHECK_EQ_I(bad, 0);
        free(off);
        ladle_scratch_free(rows);
        free(ref_off);
        free(cur);
        free(ref_rows);
        free(grp);
        free(gid);
        free(row);
      }
    }
    ladle_pool_destroy(pool);
  }
}

TEST(join_pairs_sort_is_a_stable_sort_by_one_side) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 2, 33, 3000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    for (int by_right = 0; by_right < 2; by_right++) {
      int64_t n = sizes[si], rows = 1 + (int64_t)(test_rand() % 50);
      ladle_join_pairs pr = {n, NULL, NULL, NULL, false};
      pr.left = ladle_scratch_alloc(((size_t)n + 1) * sizeof *pr.left, false);
      pr.right = ladle_scratch_alloc(((size_t)n + 1) * sizeof *pr.right, false);
      int64_t *ol = malloc(((size_t)n + 1) * sizeof *ol),
              *orr = malloc(((size_t)n + 1) * sizeof *orr);
      for (int64_t k = 0; k < n; k++) {
        /* the sorted side in [0, rows) or -1; the other side says where the pair was */
        int64_t key = test_rand() % 7 == 0 ? -1 : (int64_t)(test_rand() % (uint64_t)rows);
        (by_right ? pr.right : pr.left)[k] = ol[k] = key;
        (by_right ? pr.left : pr.right)[k] = orr[k] = k;
      }
      CHECK(be->join_pairs_sort(&ctx, &pr, by_right, rows, &err_) == LADLE_OK);
      /* reference: each row's pairs in their order, then those of none */
      int64_t q = 0, bad = 0;
      for (int64_t b = 0; b <= rows; b++)
        for (int64_t k = 0; k < n; k++) {
          if (!(b == rows ? ol[k] < 0 : ol[k] == b)) continue;
          bad += (by_right ? pr.right : pr.left)[q] != ol[k];
          bad += (by_right ? pr.left : pr.right)[q] != orr[k];
          q++;
        }
      CHECK_EQ_I(bad, 0);
      CHECK_EQ_I(q, n);
      ladle_scratch_free(pr.left);
      ladle_scratch_free(pr.right);
      free(ol);
      free(orr);
    }
  }
  /* pairs kept as runs are not sorted here */
  ladle_join_pairs runs = {2, NULL, NULL, NULL, false};
  CHECK(be->join_pairs_sort(&ctx, &runs, false, 2, &err_) == LADLE_EINVAL);
}

TEST(index_compose_and_index_is_identity_equal_loops) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 2, 17, 5000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int64_t n = sizes[si], m = n + 3; /* inner: m rows */
    int64_t *outer = malloc(((size_t)n + 1) * sizeof *outer);
    int64_t *inner = malloc(((size_t)m + 1) * sizeof *inner);
    int64_t *out = malloc(((size_t)n + 1) * sizeof *out);
    for (int64_t k = 0; k < n; k++)
      outer[k] = test_rand() % 5 == 0 ? -1 : (int64_t)(test_rand() % (uint64_t)(k < m ? m : 1));
    for (int64_t r = 0; r < m; r++) inner[r] = (int64_t)(test_rand() % 100000);
    for (int mode = 0; mode < 4; mode++) {
      const int64_t *o = mode & 1 ? outer : NULL, *in = mode & 2 ? inner : NULL;
      int64_t offset = mode * 1000 - 1500;
      CHECK(be->index_compose(&ctx, o, n, in, offset, out, &err_) == LADLE_OK);
      int64_t bad = 0;
      for (int64_t k = 0; k < n; k++) {
        int64_t r = o ? o[k] : k;
        bad += out[k] != (r < 0 ? -1 : offset + (in ? in[r] : r));
      }
      CHECK_EQ_I(bad, 0);
    }
    /* identity: 0, 1, ... and that with one entry changed */
    for (int64_t k = 0; k < n; k++) out[k] = k;
    bool same = false;
    CHECK(be->index_is_identity(&ctx, out, n, &same, &err_) == LADLE_OK);
    CHECK(same);
    if (n > 0) {
      int64_t at = (int64_t)(test_rand() % (uint64_t)n);
      out[at] = test_rand() % 2 ? -1 : at + 1;
      CHECK(be->index_is_identity(&ctx, out, n, &same, &err_) == LADLE_OK);
      CHECK(!same);
    }
    free(outer);
    free(inner);
    free(out);
  }
}

TEST(join_pairs_coalesce_takes_the_left_row_else_the_right_one) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 2, 33, 3000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int64_t n = sizes[si], nl = (int64_t)(test_rand() % 40);
    ladle_join_pairs pr = {n, NULL, NULL, NULL, false};
    pr.left = ladle_scratch_alloc(((size_t)n + 1) * sizeof *pr.left, false);
    pr.right = ladle_scratch_alloc(((size_t)n + 1) * sizeof *pr.right, false);
    int64_t *out = malloc(((size_t)n + 1) * sizeof *out);
    for (int64_t k = 0; k < n; k++) {
      pr.left[k] = test_rand() % 3 == 0 || nl == 0 ? -1 : (int64_t)(test_rand() % (uint64_t)nl);
      pr.right[k] = test_rand() % 3 == 0 ? -1 : (int64_t)(test_rand() % 40);
    }
    CHECK(be->join_pairs_coalesce(&ctx, &pr, nl, out, &err_) == LADLE_OK);
    int64_t bad = 0;
    for (int64_t k = 0; k < n; k++) {
      int64_t want = -1;
      if (pr.left[k] >= 0)
        want = pr.left[k];
      else if (pr.right[k] >= 0)
        want = nl + pr.right[k];
      bad += out[k] != want;
    }
    CHECK_EQ_I(bad, 0);
    ladle_scratch_free(pr.left);
    ladle_scratch_free(pr.right);
    free(out);
  }
  ladle_join_pairs runs = {2, NULL, NULL, NULL, false};
  int64_t out[2];
  CHECK(be->join_pairs_coalesce(&ctx, &runs, 1, out, &err_) == LADLE_EINVAL);
}

TEST(mask_take_takes_the_rows_not_taken_yet) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 2, 17, 5000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int64_t n = sizes[si];
    uint8_t *taken = malloc((size_t)n + 1), *want = malloc((size_t)n + 1);
    int64_t *sel = malloc(((size_t)n + 1) * sizeof *sel);
    for (int64_t i = 0; i < n; i++) taken[i] = want[i] = test_rand() % 4 == 0;
    /* branches: a mask per row with nulls, one of no nulls, a one-row true
     * and false, then the otherwise branch */
    for (int b = 0; b < 5; b++) {
      ladle_column m;
      memset(&m, 0, sizeof m);
      const ladle_column *mp = b == 4 ? NULL : &m;
      if (b < 2) m = random_mask(n, 3, b == 0);
      if (b == 2 || b == 3) {
        m = random_mask(1, 1, false);
        LADLE_COL_MUT(&m, uint8_t)[0] = b == 2;
      }
      int64_t cnt = -1, q = 0, bad = 0;
      CHECK(be->mask_take(&ctx, mp, n, taken, sel, &cnt, &err_) == LADLE_OK);
      for (int64_t i = 0; i < n; i++) {
        if (want[i] || !mask_ref(mp, i)) continue;
        want[i] = 1;
        bad += q >= cnt || sel[q] != i;
        q++;
      }
      CHECK_EQ_I(bad, 0);
      CHECK_EQ_I(q, cnt);
      CHECK(n == 0 || memcmp(taken, want, (size_t)n) == 0);
      if (b < 2 && n > 1) /* a condition of fewer rows */
        CHECK(be->mask_take(&ctx, mp, n + 1, taken, sel, &cnt, &err_) == LADLE_EINVAL);
      if (mp != NULL) ladle_column_release(&m);
    }
    for (int64_t i = 0; i < n; i++) CHECK(taken[i] == 1);
    free(taken);
    free(want);
    free(sel);
  }
}

TEST(moments_equal_a_two_pass_mean_and_sum_of_squares) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 2, 17, 5000};
  const ladle_type_id types[] = {LADLE_TYPE_INT32, LADLE_TYPE_INT64, LADLE_TYPE_UINT8,
                                 LADLE_TYPE_FLOAT64};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (size_t ti = 0; ti < 4; ti++)
      for (int second = 0; second < 2; second++) {
        int64_t n = sizes[si];
        ladle_column c = random_column(types[ti], n, 1000, (int)(test_rand() % 3) * 2);
        if (types[ti] == LADLE_TYPE_FLOAT64) /* no NaN: finite values compare */
          for (int64_t i = 0; i < n; i++)
            if (isnan(((double *)c.values)[i])) LADLE_COL_MUT(&c, double)[i] = 123.25;
        int64_t cnt = -1, wc = 0;
        double sum = -1, mean = -1, m2 = -1, ws = 0, wq = 0;
        CHECK(be->moments(&ctx, &c, second, &cnt, &sum, &mean, &m2, &err_) == LADLE_OK);
        for (int64_t i = 0; i < n; i++)
          if (ladle_column_valid(&c, i)) {
            ws += value_f64(&c, i);
            wc++;
          }
        double wm = wc ? ws / (double)wc : 0;
        for (int64_t i = 0; second && i < n; i++)
          if (ladle_column_valid(&c, i)) {
            double d = value_f64(&c, i) - wm;
            wq += d * d;
          }
        CHECK_EQ_I(cnt, wc);
        CHECK(sum == ws);
        CHECK(fabs(mean - wm) <= 1e-9 * (1 + fabs(wm)));
        CHECK(fabs(m2 - wq) <= 1e-9 * (1 + wq));
        ladle_column_release(&c);
      }
  /* a column of another type has no values */
  ladle_column nul;
  CHECK(ladle_column_nulls(ladle_dtype_make(LADLE_TYPE_NULL), 3, &nul, &err_) == LADLE_OK);
  int64_t cnt = -1;
  double sum = -1, mean = -1, m2 = -1;
  CHECK(be->moments(&ctx, &nul, true, &cnt, &sum, &mean, &m2, &err_) == LADLE_OK);
  CHECK(cnt == 0 && sum == 0 && mean == 0 && m2 == 0);
  ladle_column_release(&nul);
}

TEST(rank_of_singletons_is_one_where_valid) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 9, 1000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (int nulls = 0; nulls < 2; nulls++)
      for (int f = 0; f < 2; f++) {
        int64_t n = sizes[si];
        ladle_column in = random_column(LADLE_TYPE_INT64, n, 50, nulls ? 3 : 0), out;
        ladle_dtype t = ladle_dtype_make(f ? LADLE_TYPE_FLOAT64 : LADLE_TYPE_UINT32);
        CHECK(be->rank_of_singletons(&ctx, &in, t, &out, &err_) == LADLE_OK);
        CHECK(out.type.id == t.id && out.length == n && out.null_count == in.null_count);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
          bool v = ladle_column_valid(&in, i);
          bad += ladle_column_valid(&out, i) != v;
          if (v)
            bad +=
                f ? ((const double *)out.values)[i] != 1.0 : ((const uint32_t *)out.values)[i] != 1;
        }
        CHECK_EQ_I(bad, 0);
        ladle_column_release(&out);
        ladle_column_release(&in);
      }
  ladle_column in = random_column(LADLE_TYPE_INT64, 3, 5, 0), out;
  CHECK(be->rank_of_singletons(&ctx, &in, ladle_dtype_make(LADLE_TYPE_INT64), &out, &err_) ==
        LADLE_ENOTSUP);
  ladle_column_release(&in);
}

/* A LIST of INT64 of n rows over a random child: lengths 0-4, about one list in
 * six null, one element in five null; a slice of it (offsets not from 0) when
 * `sliced`. */
static ladle_column random_lists(int64_t n, bool sliced) {
  int64_t m = n + (sliced ? 3 : 0);
  int64_t *len = malloc((size_t)(m + 1) * sizeof *len), total = 0;
  for (int64_t i = 0; i < m; i++) total += len[i] = (int64_t)(test_rand() % 5);
  ladle_column child = random_column(LADLE_TYPE_INT64, total, 1000, 5), c;
  CHECK(ladle_column_alloc(ladle_dtype_list(LADLE_TYPE_INT64), m, true, 0, &c, &err_) == LADLE_OK);
  int64_t *o = LADLE_COL_MUT(&c, int64_t);
  o[0] = 0;
  for (int64_t i = 0; i < m; i++) {
    o[i + 1] = o[i] + len[i];
    ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), i, test_rand() % 6 != 0);
  }
  CHECK(ladle_column_set_child(&c, &child, &err_) == LADLE_OK);
  ladle_column_finish_nulls(&c);
  free(len);
  if (!sliced) return c;
  ladle_column s;
  CHECK(ladle_column_slice(&c, 2, n, &s, &err_) == LADLE_OK);
  ladle_column_release(&c);
  return s;
}

static int64_t elem(const ladle_column *c, int64_t e, bool *valid) {
  *valid = ladle_column_valid(c, e);
  return ((const int64_t *)c->values)[e];
}

TEST(explode_equals_a_loop_over_the_lists) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  const int64_t sizes[] = {0, 1, 7, 5000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (int flags = 0; flags < 8; flags++) {
      bool ean = flags & 1, keep = flags & 2, sliced = flags & 4;
      int64_t n = sizes[si];
      ladle_column l = random_lists(n, sliced), rows, out;
      const char *names[] = {"l"};
      CHECK(be->explode(&ctx, &l, 1, ean, keep, names, &rows, &out, &err_) == LADLE_OK);
      const int64_t *off = l.values, *R = rows.values;
      int64_t e = 0, bad = 0;
      for (int64_t i = 0; i < n; i++) {
        bool v = ladle_column_valid(&l, i);
        int64_t k = off[i + 1] - off[i];
        if (!v || k == 0) {
          if (v ? ean : keep) {
            bad += e >= rows.length || R[e] != i || ladle_column_valid(&out, e);
            e++;
          }
          continue;
        }
        for (int64_t q = 0; q < k; q++, e++) {
          bool va, vb = false;
          int64_t a = elem(l.child, off[i] + q, &va), b = e < out.length ? elem(&out, e, &vb) : 0;
          bad += e >= rows.length || R[e] != i || va != vb || (va && a != b);
        }
      }
      CHECK_EQ_I(bad, 0);
      CHECK_EQ_I(rows.length, e);
      CHECK_EQ_I(out.length, e);
      /* two lists of one shape explode together; a different shape is refused */
      if (n > 0) {
        ladle_column two[2] = {l, l}, outs[2], other = random_lists(n, !sliced), rows2;
        CHECK(be->explode(&ctx, two, 2, ean, keep, (const char *[]){"a", "b"}, &rows2, outs,
                          &err_) == LADLE_OK);
        CHECK_EQ_I(rows2.length, e);
        ladle_column_release(&rows2);
        ladle_column_release(&outs[0]);
        ladle_column_release(&outs[1]);
        two[1] = other;
        ladle_status st =
            be->explode(&ctx, two, 2, ean, keep, (const char *[]){"a", "b"}, &rows2, outs, &err_);
        if (n == 5000) CHECK(st == LADLE_ECOMPUTE && strstr(err_.message, "'a' and 'b'") != NULL);
        if (st == LADLE_OK) {
          ladle_column_release(&rows2);
          ladle_column_release(&outs[0]);
          ladle_column_release(&outs[1]);
        }
        ladle_column_release(&other);
      }
      ladle_column_release(&rows);
      ladle_column_release(&out);
      ladle_column_release(&l);
    }
}

TEST(list_functions_and_implode_equal_loops) {
  const ladle_backend *be = ladle_backend_cpu();
  ladle_kctx ctx = {.morsel_rows = 4096};
  /* str.split by "|" and by "" */
  const char *text[] = {"a|b", "", "||", "é|", NULL, "xyz"};
  int64_t n = 6, chars = 0;
  for (int64_t i = 0; i < n; i++) chars += text[i] ? (int64_t)strlen(text[i]) : 0;
  ladle_column s;
  CHECK(ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_STRING), n, true, chars, &s, &err_) ==
        LADLE_OK);
  int64_t *so = LADLE_COL_MUT(&s, int64_t);
  so[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t len = text[i] ? (int64_t)strlen(text[i]) : 0;
    memcpy(LADLE_COL_CHARS_MUT(&s) + so[i], text[i] ? text[i] : "", (size_t)len);
    so[i + 1] = so[i] + len;
    ladle_bit_set(LADLE_COL_VALIDITY_MUT(&s), i, text[i] != NULL);
  }
  ladle_column_finish_nulls(&s);
  const char *want_bar[] = {"a", "b", "", "", "", "", "é", "", "xyz"};
  const int64_t rows_bar[] = {2, 1, 3, 2, 0, 1};
  const char *want_chars[] = {"a", "|", "b", "|", "|", "é", "|", "x", "y", "z"};
  const int64_t rows_chars[] = {3, 0, 2, 2, 0, 3};
  for (int by = 0; by < 2; by++) {
    ladle_kexpr k;
    memset(&k, 0, sizeof k);
    k.kind = LADLE_KEX_FUNC;
    k.op = LADLE_FN_STR_SPLIT;
    k.nargs = 1;
    k.fopts.str = by == 0 ? "|" : "";
    k.type = ladle_dtype_list(LADLE_TYPE_STRING);
    ladle_column out;
    CHECK(be->func(&ctx, &k, &s, 1, &out, &err_) == LADLE_OK);
    const char **want = by == 0 ? want_bar : want_chars;
    const int64_t *rows = by == 0 ? rows_bar : rows_chars, *o = out.values;
    int64_t e = 0, bad = 0;
    for (int64_t i = 0; i < n; i++) {
      bad += ladle_column_valid(&out, i) != (text[i] != NULL) || o[i + 1] - o[i] != rows[i];
      for (int64_t q = o[i]; q < o[i + 1]; q++, e++)
        bad += ladle_str_len(out.child, q) != (int64_t)strlen(want[e]) ||
               memcmp(ladle_str_ptr(out.child, q), want[e], strlen(want[e])) != 0;
    }
    CHECK_EQ_I(bad, 0);
    ladle_column_release(&out);
  }
  ladle_column_release(&s);
  /* list.slice windows and list.len on a sliced list column */
  ladle_column l = random_lists(300, true);
  const int64_t *lo = l.values;
  const int64_t win[][2] = {{0, 0}, {1, 2}, {-2, -1}, {-6, 3}, {7, 1}};
  for (size_t w = 0; w < sizeof win / sizeof *win; w++) {
    ladle_kexpr k;
    memset(&k, 0, sizeof k);
    k.kind = LADLE_KEX_FUNC;
    k.op = LADLE_FN_LIST_SLICE;
    k.nargs = 1;
    k.fopts.i64 = win[w][0];
    k.fopts.i64b = win[w][1];
    k.type = l.type;
    ladle_column out;
    CHECK(be->func(&ctx, &k, &l, 1, &out, &err_) == LADLE_OK);
    const int64_t *o = out.values;
    int64_t bad = 0;
    for (int64_t i = 0; i < l.length; i++) {
      int64_t len = lo[i + 1] - lo[i], off = win[w][0], cnt = win[w][1];
      int64_t a = off >= 0 ? off : len + off, b = cnt < 0 ? len : a + cnt;
      a = a < 0 ? 0 : a > len ? len : a;
      b = b < a ? a : b > len ? len : b;
      bad += o[i + 1] - o[i] != b - a || ladle_column_valid(&out, i) != ladle_column_valid(&l, i);
      for (int64_t q = 0; q < b - a && o[i + 1] - o[i] == b - a; q++) {
        bool va, vb;
        bad += elem(l.child, lo[i] + a + q, &va) != elem(out.child, o[i] + q, &vb) || va != vb;
      }
    }
    CHECK_EQ_I(bad, 0);
    ladle_column_release(&out);
  }
  ladle_column_release(&l);
  /* implode: groups' values in row order */
  ladle_column v = random_column(LADLE_TYPE_INT64, 2000, 100, 4), out;
  ladle_groups g;
  memset(&g, 0, sizeof g);
  g.nrows = v.length;
  g.ngroups = 7;
  g.ids = ladle_scratch_alloc((size_t)v.length * sizeof *g.ids, false);
  g.first = ladle_scratch_alloc(7 * sizeof *g.first, false);
  for (int64_t i = 0; i < v.length; i++)
    g.ids[i] = (uint32_t)(i < 7 ? (uint64_t)i : test_rand() % 7);
  for (int64_t k = 0; k < 7; k++) g.first[k] = k;
  ladle_kexpr agg;
  memset(&agg, 0, sizeof agg);
  agg.kind = LADLE_KEX_AGG;
  agg.op = LADLE_AGG_IMPLODE;
  agg.nargs = 1;
  agg.type = ladle_dtype_list(LADLE_TYPE_INT64);
  CHECK(be->aggregate(&ctx, &agg, &v, &g, &out, &err_) == LADLE_OK);
  CHECK_EQ_I(out.length, 7);
  int64_t bad = 0, *pos = calloc(7, sizeof *pos);
  const int64_t *o = out.values;
  for (int64_t i = 0; i < v.length; i++) {
    uint32_t k = g.ids[i];
    int64_t e = o[k] + pos[k]++;
    bool va, vb;
    bad += e >= o[k + 1] || elem(&v, i, &va) != elem(out.child, e, &vb) || va != vb;
  }
  for (int64_t k = 0; k < 7; k++) bad += o[k] + pos[k] != o[k + 1];
  CHECK_EQ_I(bad, 0);
  free(pos);
  ladle_groups_release(&g);
  ladle_column_release(&out);
  ladle_column_release(&v);
}
