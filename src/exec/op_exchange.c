/* op_exchange.c — EXCHANGE: moving rows between ranks through the engine's
 * communicator (src/dist/comm.h), between the partial and final steps of an
 * aggregation (hash partitioning by its keys), before a join (both sides
 * hashed by their keys), a distinct (hashed by its subset), a sort (ranges
 * of the sort keys by splitters sampled on every rank), and for results that
 * every rank needs whole (broadcast). With one rank every exchange is the
 * identity: the columns pass on as they are and no collective runs.
 *
 * The backend orders each destination's rows together (hash_partition,
 * range_partition), the rows are gathered in that order, and src/dist moves
 * the columns' buffers. A sort's ranges use the sort keys plus each row's
 * rank and position as the last keys, so that every row is distinct and
 * rows with equal keys reach their rank in the job's row order (rank 0's
 * first): the stable local sort after the exchange then gives the order one
 * rank would. Host columns only for now: a GPU engine with several ranks is
 * refused by name. */
#include "../dist/exchange.h"
#include "operator.h"

enum { SAMPLES_PER_RANK = 64 };

static const ladle_comm_place HOST = {LADLE_DEVICE_CPU, 0, NULL};

/* the columns released, the array kept (ladle_release_columns frees it) */
static void release_n(ladle_column *cols, size_t n) {
  for (size_t i = 0; cols != NULL && i < n; i++) ladle_column_release(&cols[i]);
}

/* perm's rows of cols (a permutation column from a partition kernel),
 * moved: counts[r] consecutive rows of it to rank r, packed straight from
 * the columns; list columns are gathered first (their elements move as a
 * range). */
static ladle_status move_parts(exec_state *s, const ladle_column *cols, size_t ncols,
                               const ladle_column *perm, const int64_t *counts, ladle_column *out,
                               int64_t *out_rows, ladle_error *err) {
  ladle_comm *c = s->eng->comm;
  int64_t rows = perm->length;
  const int64_t *idx = (const int64_t *)perm->values;
  bool lists = false;
  for (size_t i = 0; i < ncols; i++) lists |= cols[i].type.id == LADLE_TYPE_LIST;
  if (!lists) {
    double t0 = LADLE_PHASE_START();
    ladle_status st =
        ladle_dist_move_rows(c, cols, ncols, rows, idx, counts, s->k.pool, out, out_rows, err);
    LADLE_PHASE_END("exchange move", rows, t0);
    return st;
  }
  int n = c->size;
  ladle_column *g = calloc(LADLE_MAX(ncols, 1), sizeof *g);
  int64_t *start = calloc((size_t)n, sizeof *start);
  ladle_status st = g && start ? LADLE_OK : LADLE_OOM(err, "exchange");
  if (st == LADLE_OK) st = exec_gather_columns(s, cols, ncols, idx, rows, g, err);
  if (st == LADLE_OK) {
    for (int r = 1; r < n; r++) start[r] = start[r - 1] + counts[r - 1];
    st = ladle_dist_move_columns(c, g, ncols, rows, start, counts, out, out_rows, err);
    release_n(g, ncols);
  }
  free(g);
  free(start);
  return st;
}

/* The splitters of a range exchange: every rank's sample of its keys
 * (evenly spaced rows), gathered everywhere, sorted, and nranks - 1 of them
 * cut at equal distances (the same on every rank). *nsamples: the job's
 * sample rows (0: no rows anywhere; no splitters). */
static ladle_status splitters_of(exec_state *s, const ladle_column *keys, size_t nk,
                                 const bool *desc, const bool *nl, ladle_column *spl,
                                 int64_t *nsamples, ladle_error *err) {
  ladle_comm *c = s->eng->comm;
  int n = c->size;
  int64_t rows = keys[0].length, m = LADLE_MIN(rows, (int64_t)SAMPLES_PER_RANK * n);
  int64_t *idx = malloc((size_t)LADLE_MAX(m, n) * sizeof *idx);
  ladle_column *mine = calloc(nk, sizeof *mine), *all = calloc(nk, sizeof *all);
  int64_t *perm = NULL, total = 0;
  bool have_mine = false, have_all = false;
  ladle_status st = idx && mine && all ? LADLE_OK : LADLE_OOM(err, "sort exchange");
  if (st == LADLE_OK) {
    for (int64_t i = 0; i < m; i++) idx[i] = i * rows / m;
    st = exec_gather_columns(s, keys, nk, idx, m, mine, err);
    have_mine = st == LADLE_OK;
  }
  if (st == LADLE_OK) {
    st = ladle_dist_allgather_columns(c, mine, nk, m, all, &total, err);
    have_all = st == LADLE_OK;
  }
  if (st == LADLE_OK && total > 0) st = s->be->sort_indices(&s->k, all, nk, desc, nl, &perm, err);
  if (st == LADLE_OK && total > 0) {
    for (int r = 1; r < n; r++) idx[r - 1] = perm[(int64_t)r * total / n];
    st = exec_gather_columns(s, all, nk, idx, n - 1, spl, err);
  }
  if (st == LADLE_OK) *nsamples = total;
  if (have_mine) release_n(mine, nk);
  if (have_all) release_n(all, nk);
  free(mine);
  free(all);
  free(idx);
  free(perm);
  return st;
}

/* A range exchange of cols by the sort keys (nk of them, options desc and
 * nl): the keys get this rank and each row's position as two more. */
static ladle_status range_move(exec_state *s, const ladle_column *cols, size_t ncols,
                               const ladle_column *keys, size_t nk, const bool *desc,
                               const bool *nl, ladle_column *out, int64_t *out_rows,
                               ladle_error *err) {
  ladle_comm *c = s->eng->comm;
  int n = c->size;
  int64_t rows = ncols > 0 ? cols[0].length : keys[0].length;
  size_t nk2 = nk + 2;
  ladle_column *k2 = calloc(nk2, sizeof *k2), *spl = calloc(nk2, sizeof *spl);
  bool *d2 = calloc(nk2 * 2, sizeof *d2);
  int64_t *counts = calloc((size_t)n, sizeof *counts);
  ladle_column one, perm;
  memset(&one, 0, sizeof one);
  memset(&perm, 0, sizeof perm);
  int64_t nsamples = 0;
  bool have_spl = false, have_perm = false;
  ladle_status st = k2 && spl && d2 && counts ? LADLE_OK : LADLE_OOM(err, "sort exchange");
  if (st != LADLE_OK) goto done;
  if (s->be->range_partition == NULL) {
    st = ladle_err_set(err, LADLE_ENOTSUP,
                       "a sort across ranks: backend '%s' has no range_partition", s->be->name);
    goto done;
  }
  for (size_t i = 0; i < nk; i++) {
    ladle_column_copy_ref(&keys[i], &k2[i]);
    d2[i] = desc[i];
    d2[nk2 + i] = nl[i];
  }
  /* this rank, and each row's position: every row distinct, ties in job order */
  st = s->be->sequence(&s->k, c->rank, 1, ladle_dtype_make(LADLE_TYPE_INT64), &one, err);
  if (st == LADLE_OK) st = ladle_column_broadcast(&one, rows, &k2[nk], err);
  if (st == LADLE_OK)
    st = s->be->sequence(&s->k, 0, rows, ladle_dtype_make(LADLE_TYPE_INT64), &k2[nk + 1], err);
  if (st == LADLE_OK) st = splitters_of(s, k2, nk2, d2, d2 + nk2, spl, &nsamples, err);
  if (st != LADLE_OK) goto done;
  have_spl = nsamples > 0;
  if (nsamples == 0) { /* no rows on any rank */
    st = ladle_dist_move_columns(c, cols, ncols, rows, counts, counts, out, out_rows, err);
    goto done;
  }
  st = s->be->range_partition(&s->k, k2, spl, nk2, d2, d2 + nk2, n, &perm, counts, err);
  have_perm = st == LADLE_OK;
  if (st == LADLE_OK) st = move_parts(s, cols, ncols, &perm, counts, out, out_rows, err);
done:
  if (k2 != NULL)
    for (size_t i = 0; i < nk2; i++) ladle_column_release(&k2[i]);
  if (have_spl) release_n(spl, nk2);
  if (have_perm) ladle_column_release(&perm);
  ladle_column_release(&one);
  free(k2);
  free(spl);
  free(d2);
  free(counts);
  return st;
}

/* cols moved by kind: keys (nk columns) for HASH and JOIN, with desc and nl
 * for RANGE. */
/* The rows' parts by the hash of their keys, one per rank: the permutation
 * that puts each part's rows together (part after part) and *counts (malloc'ed,
 * one per rank). */
static ladle_status hash_parts(exec_state *s, ladle_exchange_kind kind, const ladle_column *keys,
                               size_t nk, int64_t rows, ladle_column *perm, int64_t **counts,
                               ladle_error *err) {
  int n = s->eng->comm->size;
  if (s->be->hash_partition == NULL)
    return ladle_err_set(err, LADLE_ENOTSUP, "a %s exchange: backend '%s' has no hash_partition",
                         ladle_exchange_name(kind), s->be->name);
  *counts = calloc((size_t)n, sizeof **counts);
  if (*counts == NULL) return LADLE_OOM(err, "exchange");
  double t0 = LADLE_PHASE_START();
  ladle_status st = s->be->hash_partition(&s->k, keys, nk, n, perm, *counts, err);
  LADLE_PHASE_END("exchange hash partition", rows, t0);
  if (st != LADLE_OK) {
    free(*counts);
    *counts = NULL;
  }
  return st;
}

static ladle_status exchange_columns(exec_state *s, ladle_exchange_kind kind,
                                     const ladle_column *cols, size_t ncols, int64_t rows,
                                     const ladle_column *keys, size_t nk, const bool *desc,
                                     const bool *nl, ladle_column *out, int64_t *out_rows,
                                     ladle_error *err) {
  ladle_comm *c = s->eng->comm;
  int n = c->size;
  switch (kind) {
    case LADLE_EXCHANGE_BROADCAST:
      return ladle_dist_allgather_columns(c, cols, ncols, rows, out, out_rows, err);
    case LADLE_EXCHANGE_GATHER: {
      int64_t *sr = calloc((size_t)n * 2, sizeof *sr);
      if (sr == NULL) return LADLE_OOM(err, "exchange");
      sr[n] = rows; /* every row to rank 0 */
      ladle_status st =
          ladle_dist_move_columns(c, cols, ncols, rows, sr, sr + n, out, out_rows, err);
      free(sr);
      return st;
    }
    case LADLE_EXCHANGE_RANGE:
      return range_move(s, cols, ncols, keys, nk, desc, nl, out, out_rows, err);
    case LADLE_EXCHANGE_HASH:
    case LADLE_EXCHANGE_JOIN: {
      /* a join's sides are both hashed for now; broadcasting a small right
       * side needs both ranks of its decision before either side moves */
      ladle_column perm;
      int64_t *counts = NULL;
      LADLE_RETURN_NOT_OK(hash_parts(s, kind, keys, nk, rows, &perm, &counts, err));
      ladle_status st = move_parts(s, cols, ncols, &perm, counts, out, out_rows, err);
      ladle_column_release(&perm);
      free(counts);
      return st;
    }
    case LADLE_EXCHANGE_RETURN:
      break; /* exec_exchange_table's: it needs the exchange it undoes */
  }
  return ladle_err_set(err, LADLE_EINVAL, "internal: exchange kind %d", (int)kind);
}

void exec_layout_release(exec_layout *l) {
  ladle_column_release(&l->perm);
  free(l->recv);
  memset(l, 0, sizeof *l);
}

/* A hash exchange that keeps its deal in *l: the partition's permutation and
 * the rows each rank sent here (every rank's counts, allgathered: the part
 * of each for this rank). */
static ladle_status hash_move_keep(exec_state *s, const ladle_column *cols, size_t ncols,
                                   int64_t rows, const ladle_column *keys, size_t nk,
                                   exec_layout *l, ladle_column *out, int64_t *out_rows,
                                   ladle_error *err) {
  ladle_comm *c = s->eng->comm;
  int n = c->size;
  int64_t *counts = NULL, *all = NULL;
  exec_layout_release(l);
  LADLE_RETURN_NOT_OK(hash_parts(s, LADLE_EXCHANGE_HASH, keys, nk, rows, &l->perm, &counts, err));
  all = calloc((size_t)n * (size_t)n, sizeof *all);
  l->recv = calloc((size_t)n, sizeof *l->recv);
  ladle_status st = all && l->recv ? LADLE_OK : LADLE_OOM(err, "exchange");
  if (st == LADLE_OK) st = c->vt->allgather(c, counts, (size_t)n * sizeof *counts, all, HOST, err);
  for (int r = 0; st == LADLE_OK && r < n; r++)
    l->recv[r] = all[(size_t)r * (size_t)n + (size_t)c->rank];
  if (st == LADLE_OK) st = move_parts(s, cols, ncols, &l->perm, counts, out, out_rows, err);
  free(counts);
  free(all);
  return st;
}

/* A RETURN exchange: the rows of `in` (a HASH exchange's rows, in the order
 * it received them: rank 0's, then rank 1's, ..., as l->recv counts them,
 * each kept in its place by the nodes between) sent back to the ranks they
 * came from, then each put in its place there: the j-th row back is input
 * row perm[j] of that exchange (its parts came back in rank order), so the
 * output is the rows gathered through perm's inverse (its sort). */
static ladle_status return_move(exec_state *s, const ladle_pnode *pn, const ladle_column *cols,
                                size_t ncols, int64_t rows, const exec_layout *l, ladle_column *out,
                                int64_t *out_rows, ladle_error *err) {
  ladle_comm *c = s->eng->comm;
  int64_t sent = 0;
  for (int r = 0; l->recv != NULL && r < c->size; r++) sent += l->recv[r];
  if (l->recv == NULL || sent != rows)
    return ladle_err_set(err, LADLE_EINVAL,
                         "internal: exchange #%d returns %lld rows where #%d brought %lld", pn->id,
                         (long long)rows, pn->xfrom->id, (long long)sent);
  ladle_column ident, *back = calloc(LADLE_MAX(ncols, 1), sizeof *back);
  if (back == NULL) return LADLE_OOM(err, "exchange");
  int64_t got = 0, *inv = NULL;
  ladle_status st =
      s->be->sequence(&s->k, 0, rows, ladle_dtype_make(LADLE_TYPE_INT64), &ident, err);
  if (st == LADLE_OK) {
    st = move_parts(s, cols, ncols, &ident, l->recv, back, &got, err);
    ladle_column_release(&ident);
  }
  if (st == LADLE_OK && got != l->perm.length)
    st = ladle_err_set(err, LADLE_EINVAL,
                       "internal: exchange #%d brought back %lld rows of the %lld sent", pn->id,
                       (long long)got, (long long)l->perm.length);
  if (st == LADLE_OK) {
    bool asc = false, nl = false;
    st = s->be->sort_indices(&s->k, &l->perm, 1, &asc, &nl, &inv, err);
  }
  if (st == LADLE_OK) st = exec_gather_columns(s, back, ncols, inv, got, out, err);
  if (st == LADLE_OK) *out_rows = got;
  free(inv);
  release_n(back, ncols);
  free(back);
  return st;
}

/* A hash exchange of rows every rank holds: this rank's part of them, by the
 * same partition a moving exchange uses, gathered here; nothing moves. */
static ladle_status keep_own_part(exec_state *s, const ladle_column *cols, size_t ncols,
                                  const ladle_column *keys, size_t nk, ladle_column *out,
                                  int64_t *out_rows, ladle_error *err) {
  ladle_comm *c = s->eng->comm;
  ladle_column perm;
  int64_t *counts = NULL, rows = nk > 0 ? keys[0].length : 0;
  LADLE_RETURN_NOT_OK(hash_parts(s, LADLE_EXCHANGE_HASH, keys, nk, rows, &perm, &counts, err));
  int64_t start = 0;
  for (int r = 0; r < c->rank; r++) start += counts[r];
  ladle_status st = exec_gather_columns(s, cols, ncols, (const int64_t *)perm.values + start,
                                        counts[c->rank], out, err);
  if (st == LADLE_OK) *out_rows = counts[c->rank];
  ladle_column_release(&perm);
  free(counts);
  return st;
}

static ladle_status refuse_device(exec_state *s, ladle_error *err) {
  if (!s->columns) return LADLE_OK;
  return ladle_err_set(err, LADLE_ENOTSUP,
                       "an exchange across %d ranks on the column kernels (a GPU engine): "
                       "multi-rank execution runs on CPU engines for now",
                       s->eng->comm->size);
}

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
  LADLE_RETURN_NOT_OK(refuse_device(s, err));
  if (kind == LADLE_EXCHANGE_RANGE)
    return ladle_err_set(err, LADLE_EINVAL, "internal: a range exchange without sort options");
  int64_t rows = ncols > 0 ? cols[0].length : 0, got = 0;
  return exchange_columns(s, kind, cols, ncols, rows, cols, nkeys, NULL, NULL, out, &got, err);
}

ladle_status exec_exchange_table(exec_state *s, const ladle_pnode *pn, ladle_exchange_kind kind,
                                 ladle_table *in, ladle_table **out, ladle_error *err) {
  const ladle_schema *sch = pn->schema;
  ladle_table *one = NULL;
  size_t ncols = sch->n, nk = 0;
  ladle_column *keys = NULL, *moved = calloc(LADLE_MAX(ncols, 1), sizeof *moved);
  bool own_keys = false;
  const bool *desc = NULL, *nl = NULL;
  int64_t got = 0;
  ladle_status st = moved ? ladle_table_combine(in, &one, err) : LADLE_OOM(err, "exchange");
  ladle_table_release(in);
  if (st != LADLE_OK) goto done;
  if (one->nchunks == 0) { /* no partitions: one of no rows to move */
    ladle_table_release(one);
    one = NULL;
    st = exec_empty_chunk(sch, &one, err);
    if (st != LADLE_OK) goto done;
  }
  const ladle_column *cols = one->nchunks > 0 ? one->chunks[0].columns : NULL;
  int64_t rows = one->num_rows;
  if (cols == NULL && ncols > 0) {
    st = ladle_err_set(err, LADLE_EINVAL, "internal: an exchange input without a partition");
    goto done;
  }
  const ladle_plan *f = pn->xfor;
  if (kind == LADLE_EXCHANGE_HASH && pn->xnkeys == 0 && f != NULL &&
      f->kind == LADLE_NODE_DISTINCT) {
    /* a distinct's rows hashed by its subset's columns */
    nk = f->nsubset;
    keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
    if (keys == NULL) {
      st = LADLE_OOM(err, "exchange");
      goto done;
    }
    for (size_t i = 0; i < nk; i++) ladle_column_copy_ref(&cols[f->subset[i]], &keys[i]);
    own_keys = true;
  } else if (kind == LADLE_EXCHANGE_HASH || kind == LADLE_EXCHANGE_JOIN ||
             kind == LADLE_EXCHANGE_RANGE) {
    nk = pn->xnkeys;
    keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
    if (keys == NULL) {
      st = LADLE_OOM(err, "exchange");
      goto done;
    }
    st = exec_eval_whole(s, pn->xkeys, nk, one, keys, err);
    if (st != LADLE_OK) goto done;
    own_keys = true;
    if (kind == LADLE_EXCHANGE_RANGE) {
      if (f == NULL || f->kind != LADLE_NODE_SORT) {
        st = ladle_err_set(err, LADLE_EINVAL, "internal: a range exchange without its sort");
        goto done;
      }
      desc = f->descending;
      nl = f->nulls_last;
    }
  }
  if (nk == 0 && (kind == LADLE_EXCHANGE_HASH || kind == LADLE_EXCHANGE_JOIN ||
                  kind == LADLE_EXCHANGE_RANGE)) {
    st = ladle_err_set(err, LADLE_EINVAL, "internal: a %s exchange without keys",
                       ladle_exchange_name(kind));
    goto done;
  }
  if (kind == LADLE_EXCHANGE_RETURN) {
    st = return_move(s, pn, cols, ncols, rows, &s->layouts[pn->xfrom->id - 1], moved, &got, err);
    exec_layout_release(&s->layouts[pn->xfrom->id - 1]); /* its deal is done with */
  } else if (pn->xlocal && kind == LADLE_EXCHANGE_HASH)
    st = keep_own_part(s, cols, ncols, keys, nk, moved, &got, err);
  else if (pn->xkeep && kind == LADLE_EXCHANGE_HASH)
    st = hash_move_keep(s, cols, ncols, rows, keys, nk, &s->layouts[pn->id - 1], moved, &got, err);
  else
    st = exchange_columns(s, kind, cols, ncols, rows, keys, nk, desc, nl, moved, &got, err);
  if (st == LADLE_OK) st = exec_table_from_columns(s, sch, moved, got, out, err);
done:
  if (own_keys) release_n(keys, nk);
  free(keys);
  free(moved);
  ladle_table_release(one);
  return st;
}

/* The EXCHANGE node: its input's rows moved (the identity with one rank). */
static ladle_status exchange_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                 ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  ladle_comm *c = s->eng->comm;
  if (c->size == 1) return exec_input(s, pn, out, NULL, err);
  /* rows already partitioned as the node above needs (every rank decides alike) */
  if (exec_exchange_skipped(s, pn)) return exec_input(s, pn, out, NULL, err);
  LADLE_RETURN_NOT_OK(refuse_device(s, err));
  ladle_table *in = NULL;
  LADLE_RETURN_NOT_OK(exec_input(s, pn, &in, NULL, err));
  if (pn->xlocal && pn->xkind == LADLE_EXCHANGE_GATHER) { /* rows on every rank: rank 0's */
    if (c->rank == 0) {
      *out = in;
      return LADLE_OK;
    }
    ladle_table_release(in);
    return exec_empty_chunk(pn->schema, out, err);
  }
  return exec_exchange_table(s, pn, pn->xkind, in, out, err);
}

const exec_operator exec_op_exchange = {LADLE_POP_EXCHANGE, exchange_run, NULL, NULL, NULL};

ladle_status exec_rank_rows(exec_state *s, int64_t rows, int64_t *before, int64_t *total,
                            ladle_error *err) {
  ladle_comm *c = s->eng->comm;
  *before = 0;
  *total = rows;
  if (c->size == 1) return LADLE_OK;
  int64_t *all = calloc((size_t)c->size, sizeof *all);
  if (all == NULL) return LADLE_OOM(err, "exchange");
  ladle_status st = c->vt->allgather(c, &rows, sizeof rows, all, HOST, err);
  if (st == LADLE_OK) {
    *total = 0;
    for (int r = 0; r < c->size; r++) {
      if (r < c->rank) *before += all[r];
      *total += all[r];
    }
  }
  free(all);
  return st;
}
