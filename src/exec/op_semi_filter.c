/* op_semi_filter.c — SEMI_FILTER.
 *
 * Rows of `in` whose keys are among those of the side its JOIN handed over
 * (exec_state.fed), when that side is small enough to help; *out stays NULL
 * (pass `in` on) otherwise. physical.c says where and why these nodes are
 * planned. */
#include <stdio.h>

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
  ladle_join_pairs pairs = {0, NULL, NULL, NULL};
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

const exec_operator exec_op_semi_filter = {LADLE_POP_SEMI_FILTER, semi_filter_run, NULL, NULL,
                                           NULL};
