/* rows.c — the CPU backend's host kernels over row indices (backend.h, host
 * kernels of the CPU executor): a filter's keep bytes and the rows they keep,
 * where rows land in a selection, row indices through row indices, the rows
 * of groups and those a distinct keeps, a join's pairs in another order and
 * its coalesced key's rows. They read and write host arrays the
 * executor hands them (or malloc/scratch arrays where their contract says so)
 * and run serially: the executor calls the per-partition ones from its own
 * partition tasks. */
#include "cpu.h"

ladle_status ladle_cpu_mask_or(const ladle_kctx *ctx, const uint8_t *src, int64_t n, uint8_t *keep,
                               ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(err);
  for (int64_t i = 0; i < n; i++) keep[i] |= src[i]; /* vectorizes */
  return LADLE_OK;
}

ladle_status ladle_cpu_mask_and(const ladle_kctx *ctx, const ladle_column *mask, int64_t n,
                                bool init, uint8_t *keep, int64_t *out_kept, ladle_error *err) {
  LADLE_UNUSED(ctx);
  if (mask == NULL) {
    if (init) memset(keep, 1, (size_t)n);
  } else if (mask->type.id != LADLE_TYPE_BOOL || mask->length == 0) {
    memset(keep, 0, (size_t)n); /* an all-null mask */
  } else if (mask->length == 1) {
    if (!(ladle_column_valid(mask, 0) && ((const uint8_t *)mask->values)[0]))
      memset(keep, 0, (size_t)n);
    else if (init)
      memset(keep, 1, (size_t)n);
  } else if (mask->length < n) {
    return ladle_err_set(err, LADLE_EINVAL, "filter mask of %lld rows for %lld",
                         (long long)mask->length, (long long)n);
  } else {
    /* separate simple loops: each vectorizes (a kernel may write any
     * nonzero byte for true; the compaction moves its cursor by 0/1) */
    const uint8_t *v = mask->values;
    if (init)
      for (int64_t i = 0; i < n; i++) keep[i] = v[i] != 0;
    else
      for (int64_t i = 0; i < n; i++) keep[i] &= (uint8_t)(v[i] != 0);
    const uint8_t *valid = mask->validity;
    if (valid != NULL) ladle_bitmap_and_bytes(valid, n, false, false, keep);
  }
  if (out_kept != NULL) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += keep[i];
    *out_kept = k;
  }
  return LADLE_OK;
}

/* Sparse (few kept): eight keep bytes a word, a word of none skipped and the
 * rows of the others found by their set bits; dense: branch-free, every row's
 * index written and the cursor moved by its keep byte (hence the room for one
 * more). */
ladle_status ladle_cpu_keep_to_indices(const ladle_kctx *ctx, const uint8_t *keep, int64_t n,
                                       int64_t n_kept, int64_t *idx, ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(err);
  int64_t i = 0, q = 0;
  if (n_kept < n / 8)
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      memcpy(&w, keep + i, 8);
      while (w != 0) {
        idx[q++] = i + (__builtin_ctzll(w) >> 3);
        w &= w - 1;
      }
    }
  for (; i < n; i++) {
    idx[q] = i;
    q += keep[i];
  }
  return LADLE_OK;
}

ladle_status ladle_cpu_selection_positions(const ladle_kctx *ctx, const int64_t *sel, int64_t cnt,
                                           int64_t n, int64_t *idx, ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(err);
  for (int64_t i = 0; i < n; i++) idx[i] = -1;
  for (int64_t j = 0; j < cnt; j++) idx[sel[j]] = j;
  return LADLE_OK;
}

ladle_status ladle_cpu_mask_take(const ladle_kctx *ctx, const ladle_column *mask, int64_t n,
                                 uint8_t *taken, int64_t *sel, int64_t *out_n, ladle_error *err) {
  LADLE_UNUSED(ctx);
  if (mask != NULL && mask->length != 1 && mask->length < n)
    return ladle_err_set(err, LADLE_EINVAL, "branch condition of %lld rows for %lld",
                         (long long)mask->length, (long long)n);
  int64_t cnt = 0;
  const uint8_t *c = mask ? mask->values : NULL;
  for (int64_t i = 0; i < n; i++) {
    if (taken[i]) continue;
    int64_t ci = mask && mask->length == 1 ? 0 : i;
    if (mask == NULL || (ladle_column_valid(mask, ci) && c[ci])) {
      taken[i] = 1;
      sel[cnt++] = i;
    }
  }
  *out_n = cnt;
  return LADLE_OK;
}

/* One loop per case, so that none tests for a missing array per row. */
ladle_status ladle_cpu_index_compose(const ladle_kctx *ctx, const int64_t *outer, int64_t n,
                                     const int64_t *inner, int64_t offset, int64_t *out,
                                     ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(err);
  if (outer == NULL && inner == NULL)
    for (int64_t k = 0; k < n; k++) out[k] = offset + k;
  else if (outer == NULL)
    for (int64_t k = 0; k < n; k++) out[k] = offset + inner[k];
  else if (inner == NULL)
    for (int64_t k = 0; k < n; k++) out[k] = outer[k] < 0 ? -1 : offset + outer[k];
  else
    for (int64_t k = 0; k < n; k++) {
      int64_t r = outer[k];
      out[k] = r < 0 ? -1 : offset + inner[r];
    }
  return LADLE_OK;
}

ladle_status ladle_cpu_index_is_identity(const ladle_kctx *ctx, const int64_t *idx, int64_t n,
                                         bool *out, ladle_error *err) {
  LADLE_UNUSED(ctx);
  LADLE_UNUSED(err);
  bool same = true;
  for (int64_t k = 0; same && k < n; k++) same = idx[k] == k;
  *out = same;
  return LADLE_OK;
}

typedef struct ids_job {
  const uint32_t *ids;
  int64_t *out;
} ids_job;

static ladle_status ids_range(void *vctx, int64_t a, int64_t e, ladle_error *err) {
  LADLE_UNUSED(err);
  ids_job *j = vctx;
  for (int64_t i = a; i < e; i++) j->out[i] = j->ids[i];
  return LADLE_OK;
}

ladle_status ladle_cpu_group_rows(const ladle_kctx *ctx, const ladle_groups *g,
                                  ladle_group_rows_kind which, int64_t *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_groups_ids(g, err));
  if (which == LADLE_GROUP_ROWS_ID) {
    /* a window's broadcast of 5M rows: in parallel */
    ids_job j = {g->ids, out};
    return ladle_cpu_parallel(ctx, g->nrows, ids_range, &j, err);
  }
  switch (which) {
    case LADLE_GROUP_ROWS_FIRST:
      for (int64_t k = 0; k < g->ngroups; k++) out[k] = g->first[k];
      return LADLE_OK;
    case LADLE_GROUP_ROWS_LAST: /* the last write of a group is its last row */
      for (int64_t i = 0; i < g->nrows; i++) out[g->ids[i]] = i;
      return LADLE_OK;
    case LADLE_GROUP_ROWS_ID:
      for (int64_t i = 0; i < g->nrows; i++) out[i] = g->ids[i];
      return LADLE_OK;
  }
  return ladle_err_set(err, LADLE_EINVAL, "group rows of kind %d", (int)which);
}

ladle_status ladle_cpu_distinct_rows(const ladle_kctx *ctx, const ladle_groups *g, ladle_keep keep,
                                     int64_t **out_rows, int64_t *out_n, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_groups_ids(g, err));
  int64_t *rows = malloc((size_t)LADLE_MAX(g->ngroups, 1) * sizeof *rows);
  int64_t *count =
      keep == LADLE_KEEP_NONE ? ladle_zalloc((size_t)LADLE_MAX(g->ngroups, 1) * 8) : NULL;
  int64_t n = 0;
  if (rows == NULL || (keep == LADLE_KEEP_NONE && count == NULL)) {
    free(rows);
    free(count);
    return LADLE_OOM(err, "unique");
  }
  if (keep == LADLE_KEEP_NONE) {
    for (int64_t i = 0; i < g->nrows; i++) count[g->ids[i]]++;
    for (int64_t k = 0; k < g->ngroups; k++)
      if (count[k] == 1) rows[n++] = g->first[k];
  } else {
    ladle_status st = ladle_cpu_group_rows(
        ctx, g, keep == LADLE_KEEP_LAST ? LADLE_GROUP_ROWS_LAST : LADLE_GROUP_ROWS_FIRST, rows,
        err);
    if (st != LADLE_OK) {
      free(rows);
      return st;
    }
    n = g->ngroups;
  }
  free(count);
  /* in order of appearance (Polars promises it with maintain_order; ladle
   * always keeps it): mark the kept rows, then read the marks in row order */
  uint8_t *marks = ladle_zalloc((size_t)LADLE_MAX(g->nrows, 1));
  if (marks == NULL) {
    free(rows);
    return LADLE_OOM(err, "unique");
  }
  for (int64_t k = 0; k < n; k++) marks[rows[k]] = 1;
  int64_t j = 0;
  for (int64_t i = 0; i < g->nrows; i++)
    if (marks[i]) rows[j++] = i;
  free(marks);
  *out_rows = rows;
  *out_n = n;
  return LADLE_OK;
}

ladle_status ladle_cpu_join_pairs_sort(const ladle_kctx *ctx, ladle_join_pairs *pairs,
                                       bool by_right, int64_t m, ladle_error *err) {
  LADLE_UNUSED(ctx);
  if (pairs->runs != NULL || pairs->left == NULL || pairs->right == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "join pairs to sort not written out");
  const int64_t *key = by_right ? pairs->right : pairs->left;
  /* bucket b + 1 counts the pairs of row b; -1 goes to bucket m */
  int64_t *start = calloc((size_t)m + 2, sizeof *start);
  int64_t *nlft = ladle_scratch_alloc((size_t)pairs->n * sizeof *nlft, false);
  int64_t *nrgt = ladle_scratch_alloc((size_t)pairs->n * sizeof *nrgt, false);
  if (start == NULL || nlft == NULL || nrgt == NULL) {
    free(start);
    ladle_scratch_free(nlft);
    ladle_scratch_free(nrgt);
    return LADLE_OOM(err, "join order");
  }
  for (int64_t k = 0; k < pairs->n; k++) start[(key[k] < 0 ? m : key[k]) + 1]++;
  for (int64_t b = 0; b <= m; b++) start[b + 1] += start[b];
  for (int64_t k = 0; k < pairs->n; k++) {
    int64_t to = start[key[k] < 0 ? m : key[k]]++;
    nlft[to] = pairs->left[k];
    nrgt[to] = pairs->right[k];
  }
  free(start);
  ladle_scratch_free(pairs->left);
  ladle_scratch_free(pairs->right);
  pairs->left = nlft;
  pairs->right = nrgt;
  return LADLE_OK;
}

ladle_status ladle_cpu_join_pairs_coalesce(const ladle_kctx *ctx, const ladle_join_pairs *pairs,
                                           int64_t nl, int64_t *out, ladle_error *err) {
  LADLE_UNUSED(ctx);
  if (pairs->runs != NULL || pairs->left == NULL || pairs->right == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "join pairs to coalesce not written out");
  const int64_t *l = pairs->left, *r = pairs->right;
  for (int64_t k = 0; k < pairs->n; k++) out[k] = l[k] >= 0 ? l[k] : (r[k] >= 0 ? nl + r[k] : -1);
  return LADLE_OK;
}
