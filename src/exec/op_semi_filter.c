/* op_semi_filter.c — SEMI_FILTER.
 *
 * Rows of `in` whose keys are among those of the side its JOIN handed over
 * (exec_state.fed), when that side is small enough to help; *out stays NULL
 * (pass `in` on) otherwise. physical.c says where and why these nodes are
 * planned. */
#include <stdio.h>
#include <stdlib.h>

#include "operator.h"

static ladle_status semi_filter(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                ladle_table **out, ladle_error *err) {
  *out = NULL;
  const ladle_table *side = s->fed[pn->id - 1];
  size_t nk = pn->nkeys;
  if (side == NULL || in->num_rows == 0) return LADLE_OK;
  ladle_column keys[2 * LADLE_SEMI_MAX_KEYS]; /* this input's, then the side's */
  ladle_status st;
  if (pn->semi == LADLE_SEMI_REDUCTION) {
    if (in->num_rows < 65536 || side->num_rows * 32 > in->num_rows) return LADLE_OK;
    LADLE_RETURN_NOT_OK(exec_eval_whole(s, (ladle_bexpr *const *)pn->keys, nk, in, keys, err));
    st = exec_eval_whole(s, pn->from_keys, nk, side, keys + nk, err);
    if (st != LADLE_OK) {
      for (size_t k = 0; k < nk; k++) ladle_column_release(&keys[k]);
      return st;
    }
  } else {
    if ((size_t)pn->key_col >= in->schema.n) return LADLE_OK;
    LADLE_RETURN_NOT_OK(ladle_table_concat_column(in, (size_t)pn->key_col, &keys[0], err));
    st = ladle_table_concat_column(side, (size_t)pn->from_col, &keys[1], err);
    if (st != LADLE_OK) {
      ladle_column_release(&keys[0]);
      return st;
    }
  }
  bool same = true; /* key types that differ (a cast in between): no cut */
  for (size_t k = 0; k < nk; k++) same &= ladle_dtype_equal(keys[k].type, keys[nk + k].type);
  ladle_join_pairs pairs = {0, NULL, NULL, NULL, false};
  st = LADLE_OK;
  if (same) st = s->be->join(&s->k, keys, keys + nk, nk, LADLE_JOIN_SEMI, false, &pairs, err);
  if (same && st == LADLE_OK && pairs.n < in->num_rows)
    st = exec_gather_rows(s, false, in, pairs.left, pairs.n, out, err);
  ladle_scratch_free(pairs.left);
  ladle_scratch_free(pairs.right);
  for (size_t k = 0; k < 2 * nk; k++) ladle_column_release(&keys[k]);
  if (st == LADLE_OK && same && pn->semi == LADLE_SEMI_TRANSFER) {
    atomic_fetch_add(&s->eng->rows_transferred, in->num_rows - pairs.n);
    if (ladle_trace_level() >= 1)
      fprintf(stderr, "ladle: transfer of %lld keys: %lld -> %lld rows\n",
              (long long)side->num_rows, (long long)in->num_rows, (long long)pairs.n);
  }
  return st;
}

/* in itself where the cut does not apply */
static ladle_status semi_filter_table(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                      ladle_table **out, ladle_error *err) {
  ladle_table *cut = NULL;
  LADLE_RETURN_NOT_OK(semi_filter(s, pn, in, &cut, err));
  *out = cut != NULL ? cut : ladle_table_ref(in);
  return LADLE_OK;
}

static ladle_status semi_filter_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                    ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  return exec_run_unary(s, pn, semi_filter_table, out, err);
}

/* ------------------------------------------------------------- streamed
 *
 * A predicate transfer's SEMI_FILTER inside a pipeline (physical.c): when
 * the pipeline opens, the keys its join fed it (if it fed any: the join's
 * side kept an eighth of its table or less) become a hash table, and each
 * morsel keeps the rows whose key it holds. The feeding join opens first:
 * it is above this node in the pipeline, or ran its side before this one. */

typedef struct semi_stream {
  ladle_column key; /* the fed side's key column, whole */
  ladle_join_ht *ht;
  const ladle_backend *be;
} semi_stream;

static void semi_stream_close(void *state) {
  semi_stream *ss = state;
  if (ss == NULL) return;
  if (ss->ht != NULL) ss->be->join_ht_free(ss->ht);
  ladle_column_release(&ss->key);
  free(ss);
}

static ladle_status semi_stream_open(exec_state *s, const ladle_pnode *pn, void **state,
                                     ladle_error *err) {
  *state = NULL; /* nothing fed: every row passes */
  const ladle_table *side = s->fed[pn->id - 1];
  if (side == NULL || pn->semi != LADLE_SEMI_TRANSFER || (size_t)pn->key_col >= pn->schema->n ||
      (size_t)pn->from_col >= side->schema.n)
    return LADLE_OK;
  ladle_dtype kt = pn->schema->types[pn->key_col];
  /* key types that differ (a cast in between): no cut */
  if (!ladle_dtype_equal(kt, side->schema.types[pn->from_col])) return LADLE_OK;
  semi_stream *ss = calloc(1, sizeof *ss);
  if (ss == NULL) return LADLE_OOM(err, "semi filter");
  ss->be = s->be;
  ladle_status st = ladle_table_concat_column(side, (size_t)pn->from_col, &ss->key, err);
  if (st == LADLE_OK) st = s->be->join_build(&s->k, &ss->key, 1, &kt, false, &ss->ht, err);
  if (st != LADLE_OK) {
    semi_stream_close(ss);
    return st;
  }
  if (ladle_trace_level() >= 1)
    fprintf(stderr, "ladle: #%d SEMI_FILTER: a transfer of %lld keys, streamed\n", pn->id,
            (long long)side->num_rows);
  *state = ss;
  return LADLE_OK;
}

static void semi_stream_needs(const ladle_pnode *pn, const bool *need, bool *in_need) {
  for (size_t c = 0; c < pn->schema->n; c++)
    in_need[c] = need == NULL || need[c] || (int64_t)c == pn->key_col;
}

static ladle_status semi_stream_morsel(exec_state *s, const ladle_pnode *pn, const void *state,
                                       const bool *need, const ladle_chunk *in, ladle_chunk *out,
                                       ladle_error *err) {
  const semi_stream *ss = state;
  ladle_join_pairs pairs = {0, NULL, NULL, NULL, false};
  ladle_status st = LADLE_OK;
  bool all = ss == NULL;
  if (!all) {
    st = s->be->join_probe(&s->k, ss->ht, &in->columns[pn->key_col], LADLE_JOIN_SEMI, &pairs, err);
    all = st == LADLE_OK && pairs.n == in->length; /* SEMI keeps rows in order */
  }
  int64_t n = all ? in->length : pairs.n;
  for (size_t c = 0; st == LADLE_OK && c < pn->schema->n; c++) {
    if (need != NULL && !need[c])
      exec_placeholder(&out->columns[c], n);
    else if (all)
      ladle_column_copy_ref(&in->columns[c], &out->columns[c]);
    else
      st = s->be->gather(&s->k, &in->columns[c], pairs.left, n, &out->columns[c], err);
  }
  if (st == LADLE_OK) {
    out->length = n;
    if (ss != NULL) atomic_fetch_add(&s->eng->rows_transferred, in->length - n);
  }
  ladle_scratch_free(pairs.left);
  return st;
}

static const exec_stream_op semi_streaming = {semi_stream_needs, semi_stream_open,
                                              semi_stream_morsel, semi_stream_close};

const exec_operator exec_op_semi_filter = {LADLE_POP_SEMI_FILTER, semi_filter_run, &semi_streaming,
                                           NULL, NULL};
