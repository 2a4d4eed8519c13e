/* op_exchange.c — EXCHANGE: moving rows between ranks through the engine's
 * communicator (src/dist/comm.h), between the partial and final steps of an
 * aggregation (hash partitioning by its keys), before a join (hash, or a
 * broadcast of the small side) and for results (gather). With one rank every
 * exchange is the identity: the columns pass on as they are, and no
 * collective runs. With more ranks the rows of each partition are packed per
 * destination and moved with alltoallv (the distributed issue). */
#include "operator.h"

ladle_status ladle_exec_exchange(exec_state *s, ladle_exchange_kind kind, const ladle_column *cols,
                                 size_t ncols, size_t nkeys, ladle_column *out, ladle_error *err) {
  const ladle_comm *c = s->eng->comm;
  if (nkeys > ncols || (kind == LADLE_EXCHANGE_HASH && nkeys == 0 && c->size > 1))
    return ladle_err_set(err, LADLE_EINVAL, "internal: a %s exchange of %zu columns by %zu keys",
                         ladle_exchange_name(kind), ncols, nkeys);
  if (c->size == 1) {
    for (size_t i = 0; i < ncols; i++) ladle_column_copy_ref(&cols[i], &out[i]);
    return LADLE_OK;
  }
  return ladle_err_set(err, LADLE_ENOTSUP,
                       "a %s exchange across %d ranks (communicator '%s'): multi-rank execution "
                       "is not built yet",
                       ladle_exchange_name(kind), c->size, c->vt->name);
}

/* The EXCHANGE node: the identity with one rank. */
static ladle_status exchange_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                 ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  if (s->eng->comm->size > 1)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "a %s exchange across %d ranks: multi-rank execution is not built yet",
                         ladle_exchange_name(pn->xkind), s->eng->comm->size);
  return exec_input(s, pn, out, NULL, err);
}

const exec_operator exec_op_exchange = {LADLE_POP_EXCHANGE, exchange_run, NULL, NULL};
