/* op_hconcat.c — HCONCAT: the inputs' columns side by side (horizontal
 * concat); shorter inputs padded with nulls unless strict. */
#include <stdlib.h>

#include "operator.h"

static ladle_status hconcat_table(exec_state *s, const ladle_plan *p, ladle_table **ins,
                                  ladle_table **out, ladle_error *err) {
  int64_t height = 0;
  for (size_t i = 0; i < p->ninputs; i++) height = LADLE_MAX(height, ins[i]->num_rows);
  for (size_t i = 0; p->strict && i < p->ninputs; i++)
    if (ins[i]->num_rows != height)
      return ladle_err_set(err, LADLE_ECOMPUTE,
                           "horizontal concat of inputs of different heights (%lld and %lld rows); "
                           "Polars' how='horizontal_extend' pads the shorter ones with nulls",
                           (long long)ins[i]->num_rows, (long long)height);
  ladle_column *cols = calloc(LADLE_MAX(p->schema.n, 1), sizeof *cols);
  if (cols == NULL) return LADLE_OOM(err, "hconcat");
  size_t j = 0;
  ladle_status st = LADLE_OK;
  for (size_t i = 0; i < p->ninputs && st == LADLE_OK; i++) {
    for (size_t c = 0; c < ins[i]->schema.n && st == LADLE_OK; c++, j++) {
      ladle_column whole;
      st = ladle_table_concat_column(ins[i], c, &whole, err);
      if (st != LADLE_OK) break;
      if (whole.length == height) {
        cols[j] = whole;
        continue;
      }
      ladle_column pad, parts[2];
      st = ladle_column_nulls(whole.type, height - whole.length, &pad, err);
      if (st == LADLE_OK) {
        parts[0] = whole;
        parts[1] = pad;
        st = ladle_column_concat(parts, 2, &cols[j], err);
        ladle_column_release(&pad);
      }
      ladle_column_release(&whole);
    }
  }
  if (st == LADLE_OK)
    st = exec_table_from_columns(s, &p->schema, cols, height, out, err);
  else
    for (size_t i = 0; i < j; i++) ladle_column_release(&cols[i]);
  free(cols);
  return st;
}

static ladle_status hconcat_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  ladle_table **ins = calloc(LADLE_MAX(pn->ninputs, 1), sizeof *ins);
  if (ins == NULL) return LADLE_OOM(err, "inputs");
  ladle_status st = exec_inputs_run(s, pn, ins, err);
  if (st == LADLE_OK) st = hconcat_table(s, pn->lp, ins, out, err);
  for (size_t i = 0; i < pn->ninputs; i++) ladle_table_release(ins[i]);
  free(ins);
  return st;
}

const exec_operator exec_op_hconcat = {LADLE_POP_HCONCAT, hconcat_run, NULL, NULL, NULL};
