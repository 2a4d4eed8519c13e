/* op_join.c — JOIN: every join type (inner, left, right, full, semi, anti,
 * cross) on the backend's hash join, its output gathered partition by
 * partition from the sides' partitions.
 *
 * The physical plan may run the right side first (for the SEMI_FILTER it
 * feeds), and may defer a FILTER side: then the join gathers that side's
 * other columns straight from the filter's input through its kept rows. */
#include <stdio.h>
#include <stdlib.h>

#include "operator.h"

/* The rows idx (n of them, -1: none) of a deferred side, as rows of its input;
 * idx NULL: rows 0..n. */
static ladle_status defer_compose(exec_state *s, const join_defer *d, const int64_t *idx, int64_t n,
                                  int64_t **out, ladle_error *err) {
  int64_t *c = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *c, false);
  if (c == NULL) return LADLE_OOM(err, "join");
  ladle_status st = s->be->index_compose(&s->k, idx, n, d->sel, 0, c, err);
  if (st != LADLE_OK) {
    ladle_scratch_free(c);
    return st;
  }
  *out = c;
  return LADLE_OK;
}

/* Puts a join's pairs in the order the plan promises (ladle_join_order). The
 * kernels give them left row first (right row first for RIGHT joins), each
 * side's rows in order; the other order is a stable counting sort by the
 * other side's row, rows without one last. */
bool exec_join_reorders(const ladle_plan *p) {
  ladle_join_order o = p->join.order;
  bool by_right = o == LADLE_JOIN_ORDER_RIGHT || o == LADLE_JOIN_ORDER_RIGHT_LEFT;
  bool by_left = o == LADLE_JOIN_ORDER_LEFT || o == LADLE_JOIN_ORDER_LEFT_RIGHT;
  return (by_right || by_left) && by_right != (p->join.how == LADLE_JOIN_RIGHT) &&
         p->join.how != LADLE_JOIN_SEMI && p->join.how != LADLE_JOIN_ANTI;
}

typedef struct fill_job {
  const ladle_backend *be;
  const ladle_kctx *k;
  const ladle_join_runs *runs;
  int64_t n, part;
  int64_t *left, *right;
} fill_job;

static ladle_status fill_task(void *vctx, size_t i, ladle_error *err) {
  fill_job *j = vctx;
  int64_t a = (int64_t)i * j->part, len = LADLE_MIN(j->part, j->n - a);
  return j->be->join_pairs_fill(j->k, j->runs, a, len, j->left + a, j->right + a, err);
}

/* A join's pairs kept as runs written out as left/right arrays, in parallel. */
static ladle_status pairs_materialize(exec_state *s, ladle_join_pairs *pairs, ladle_error *err) {
  if (pairs->runs == NULL) return LADLE_OK;
  int64_t n = pairs->n;
  fill_job j = {s->be, &s->k, pairs->runs, n, LADLE_MAX(s->k.morsel_rows, 1 << 16), NULL, NULL};
  j.left = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *j.left, false);
  j.right = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *j.right, false);
  ladle_status st = j.left && j.right ? LADLE_OK : LADLE_OOM(err, "join pairs");
  if (st == LADLE_OK)
    st = ladle_pool_run(s->k.pool, (size_t)((n + j.part - 1) / j.part), fill_task, &j, err);
  if (st != LADLE_OK) {
    ladle_scratch_free(j.left);
    ladle_scratch_free(j.right);
    return st;
  }
  s->be->join_runs_free(pairs->runs);
  pairs->runs = NULL;
  pairs->left = j.left;
  pairs->right = j.right;
  return LADLE_OK;
}

static ladle_status join_order(exec_state *s, const ladle_plan *p, ladle_join_pairs *pairs,
                               int64_t nl, int64_t nr, ladle_error *err) {
  ladle_join_order o = p->join.order;
  bool by_right = o == LADLE_JOIN_ORDER_RIGHT || o == LADLE_JOIN_ORDER_RIGHT_LEFT;
  if (pairs->right == NULL || pairs->n < 2 || !exec_join_reorders(p)) return LADLE_OK;
  /* a stable counting sort by the other side's row, rows without one last */
  return s->be->join_pairs_sort(&s->k, pairs, by_right, by_right ? nr : nl, err);
}

/* Whether p, a left join, gives every left row exactly once and in left order
 * without looking: no output column from the right side, no order by the
 * right, and right keys all distinct (nulls counted as a value,
 * so at most one right row can match a left one). Checked only when the
 * right side is at most half the left, where grouping it costs little next to
 * the probe it saves. */
static bool left_lookup_is_identity(exec_state *s, const ladle_plan *p, const ladle_table *lc,
                                    const ladle_table *rc, const ladle_column *rk, bool coalesce,
                                    ladle_status *st, ladle_error *err) {
  *st = LADLE_OK;
  if (p->join.how != LADLE_JOIN_LEFT || coalesce || exec_join_reorders(p) || p->nkeys == 0 ||
      rc->num_rows > lc->num_rows / 2)
    return false;
  for (size_t i = 0; i < p->schema.n; i++)
    if (p->out_map[i] < 0) return false;
  if (rc->num_rows == 0) return true; /* every left row with nulls: none from the right */
  ladle_groups g;
  memset(&g, 0, sizeof g);
  *st = s->be->group_ids(&s->k, rk, p->nkeys, &g, err);
  bool distinct = *st == LADLE_OK && g.ngroups == rc->num_rows;
  if (*st == LADLE_OK) ladle_groups_release(&g);
  return distinct;
}

static ladle_status join_table(exec_state *s, const ladle_pnode *pn, ladle_table *l, ladle_table *r,
                               const join_defer *jd, ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  size_t nk = p->nkeys;
  ladle_table *lc = NULL, *rc = NULL;
  piece_table lp, rp; /* the sides' columns, for the gathers */
  memset(&lp, 0, sizeof lp);
  memset(&rp, 0, sizeof rp);
  bool coalesce = ladle_join_coalesces(p);
  ladle_column *lk = calloc(LADLE_MAX(nk, 1), sizeof *lk);
  ladle_column *rk = calloc(LADLE_MAX(nk, 1), sizeof *rk);
  ladle_column *cols = calloc(LADLE_MAX(p->schema.n, 1), sizeof *cols);
  ladle_join_pairs pairs = {0, NULL, NULL, NULL, false};
  ladle_status st = lk && rk && cols ? LADLE_OK : LADLE_OOM(err, "join");
  bool have_lk = false, have_rk = false;
  if (coalesce) {
    /* a full join's coalesced key merges the sides' key columns: whole ones */
    if (st == LADLE_OK) st = ladle_table_combine(l, &lc, err);
    if (st == LADLE_OK) st = ladle_table_combine(r, &rc, err);
  } else {
    lc = ladle_table_ref(l);
    rc = ladle_table_ref(r);
    if (st == LADLE_OK) st = exec_pieces_make(s, jd[0].in ? jd[0].in : l, &lp, err);
    if (st == LADLE_OK) st = exec_pieces_make(s, jd[1].in ? jd[1].in : r, &rp, err);
  }
  double t0 = LADLE_PHASE_START();
  if (st == LADLE_OK && p->join.how != LADLE_JOIN_CROSS) {
    st = exec_eval_whole(s, p->keys, nk, lc, lk, err);
    have_lk = st == LADLE_OK;
    if (st == LADLE_OK) st = exec_eval_whole(s, p->rkeys, nk, rc, rk, err);
    have_rk = st == LADLE_OK;
  }
  /* a left join that takes no column from the right side, whose right keys are
   * all distinct (a lookup into a dimension table whose columns the query then
   * drops, as a workflow's fit does): every left row comes out once, in order,
   * so the output is the left side itself, with no probe and no pairs */
  bool lookup = st == LADLE_OK && left_lookup_is_identity(s, p, lc, rc, rk, coalesce, &st, err);
  if (lookup) {
    pairs.n = lc->num_rows;
  } else if (st == LADLE_OK) {
    if (p->join.how == LADLE_JOIN_CROSS) {
      ladle_column a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      a.length = lc->num_rows;
      b.length = rc->num_rows;
      st = s->be->join(&s->k, &a, &b, 1, LADLE_JOIN_CROSS, false, &pairs, err);
    } else {
      LADLE_PHASE_END("join keys", lc->num_rows + rc->num_rows, t0);
      t0 = LADLE_PHASE_START();
      st = s->be->join(&s->k, lk, rk, nk, p->join.how, p->join.nulls_equal, &pairs, err);
    }
    LADLE_PHASE_END("join kernel", pairs.n, t0);
  }
  t0 = LADLE_PHASE_START();
  /* left rows the kernel left out as 0..n-1, written where a reorder or a
   * coalesced key reads them */
  if (st == LADLE_OK && pairs.left == NULL && pairs.left_identity && pairs.n > 0 &&
      (coalesce || exec_join_reorders(p))) {
    if (!ladle_join_pairs_write_left(&pairs)) st = LADLE_OOM(err, "join");
    pairs.left_identity = false;
  }
  /* runs are gathered from partition by partition unless the output needs the
   * pairs whole */
  if (st == LADLE_OK && pairs.runs != NULL &&
      (coalesce || jd[0].in != NULL || jd[1].in != NULL || exec_join_reorders(p)))
    st = pairs_materialize(s, &pairs, err);
  if (st == LADLE_OK) st = join_order(s, p, &pairs, lc->num_rows, rc->num_rows, err);
  /* a join whose left rows come out exactly once and in order (a lookup into a
   * dimension table, the common case) need not copy the left columns */
  bool left_identity =
      lookup || (st == LADLE_OK && pairs.left_identity && pairs.left == NULL) ||
      (st == LADLE_OK && pairs.left != NULL && lc != NULL && pairs.n == lc->num_rows);
  if (left_identity && !lookup && pairs.left != NULL)
    st = s->be->index_is_identity(&s->k, pairs.left, pairs.n, &left_identity, err);
  LADLE_PHASE_END("join order", pairs.n, t0);
  t0 = LADLE_PHASE_START();
  ladle_table *gathered = NULL; /* the output, when built partition by partition */
  if (st == LADLE_OK && !coalesce) {
    /* the output partition by partition, gathered in parallel */
    gather_src *src = calloc(LADLE_MAX(p->schema.n, 1), sizeof *src);
    const int64_t **idx = calloc(LADLE_MAX(p->schema.n, 1), sizeof *idx);
    if (src == NULL || idx == NULL) st = LADLE_OOM(err, "join");
    /* deferred sides' rows, as rows of their inputs */
    int64_t *comp[2] = {NULL, NULL};
    for (int k = 0; st == LADLE_OK && k < 2; k++) {
      const int64_t *side = k == 0 ? (left_identity ? NULL : pairs.left) : pairs.right;
      bool rows = side != NULL || (k == 0 && left_identity); /* semi/anti: no right rows */
      /* a deferred filter that kept every row: its input's rows are its own */
      bool all = jd[k].in != NULL && jd[k].n == jd[k].in->num_rows;
      if (jd[k].in != NULL && rows && !all)
        st = defer_compose(s, &jd[k], side, pairs.n, &comp[k], err);
    }
    for (size_t i = 0; st == LADLE_OK && i < p->schema.n; i++) {
      int64_t m = p->out_map[i];
      src[i] = m >= 0 ? exec_pieces_src(&lp, (size_t)m) : exec_pieces_src(&rp, (size_t)(-m - 1));
      src[i].views = pn->views;
      idx[i] = m >= 0 ? (comp[0]         ? comp[0]
                         : left_identity ? NULL
                                         : pairs.left)
                      : (comp[1] ? comp[1] : pairs.right);
    }
    bool *from_right = pairs.runs ? calloc(LADLE_MAX(p->schema.n, 1), sizeof *from_right) : NULL;
    if (pairs.runs != NULL && from_right == NULL) st = LADLE_OOM(err, "join");
    for (size_t i = 0; from_right != NULL && i < p->schema.n; i++)
      from_right[i] = p->out_map[i] < 0;
    if (st == LADLE_OK)
      st = exec_gather_table(s, &p->schema, src, idx, pairs.runs, from_right, pairs.n, &gathered,
                             err);
    free(from_right);
    ladle_scratch_free(comp[0]);
    ladle_scratch_free(comp[1]);
    free(src);
    free(idx);
  }
  LADLE_PHASE_END("join gather", pairs.n, t0);
  size_t made = 0;
  for (size_t i = 0; st == LADLE_OK && coalesce && i < p->schema.n; i++) {
    int64_t m = p->out_map[i];
    const ladle_column *src = m >= 0 ? &lc->chunks[0].columns[m] : &rc->chunks[0].columns[-m - 1];
    const int64_t *idx = m >= 0 ? pairs.left : pairs.right;
    if (m >= 0 && left_identity)
      ladle_column_copy_ref(src, &cols[i]); /* every left row once, in order: share it */
    else
      st = s->be->gather(&s->k, src, idx, pairs.n, &cols[i], err);
    if (st != LADLE_OK) break;
    made++;
    int64_t ck = p->coalesce_rkey[i];
    if (ck >= 0) {
      /* FULL join, coalesced key: take the right key where the left has none */
      int64_t *both = malloc((size_t)LADLE_MAX(pairs.n, 1) * sizeof *both);
      if (both == NULL) {
        st = LADLE_OOM(err, "join");
        break;
      }
      ladle_column parts[2] = {lc->chunks[0].columns[m], rc->chunks[0].columns[ck]}, all, merged;
      st = s->be->join_pairs_coalesce(&s->k, &pairs, lc->num_rows, both, err);
      if (st == LADLE_OK) st = ladle_column_concat(parts, 2, &all, err);
      if (st == LADLE_OK) {
        st = ladle_column_gather(&all, both, pairs.n, &merged, err);
        ladle_column_release(&all);
        if (st == LADLE_OK) {
          ladle_column_release(&cols[i]);
          cols[i] = merged;
        }
      }
      free(both);
    }
  }
  int64_t nrows = pairs.n;
  ladle_scratch_free(pairs.left);
  ladle_scratch_free(pairs.right);
  if (pairs.runs != NULL) s->be->join_runs_free(pairs.runs);
  if (have_lk)
    for (size_t i = 0; i < nk; i++) ladle_column_release(&lk[i]);
  if (have_rk)
    for (size_t i = 0; i < nk; i++) ladle_column_release(&rk[i]);
  free(lk);
  free(rk);
  ladle_table_release(lc);
  ladle_table_release(rc);
  exec_pieces_release(&lp);
  exec_pieces_release(&rp);
  if (!coalesce) {
    free(cols);
    if (st == LADLE_OK) *out = gathered;
    return st;
  }
  if (st == LADLE_OK)
    st = exec_table_from_columns(s, &p->schema, cols, nrows, out, err);
  else
    for (size_t i = 0; i < made; i++) ladle_column_release(&cols[i]);
  free(cols);
  return st;
}

/* The most rows a join's right side may have to be broadcast at run time
 * (LADLE_JOIN_BROADCAST_ROWS; 0 turns it off). */
static int64_t broadcast_cap(void) {
  const char *v = getenv("LADLE_JOIN_BROADCAST_ROWS");
  return v != NULL ? strtoll(v, NULL, 10) : (int64_t)1 << 22;
}

/* The most rows (across ranks) a join side may have to feed a SEMI_FILTER
 * when the ranks must first gather it. */
#define FEED_MAX_ROWS ((int64_t)1 << 21)

/* Whether a join side of `rows` rows is small enough to feed SEMI_FILTER f
 * (`base`: the rows of the table f cuts): a reduction's always, a
 * transfer's when the side kept an eighth of its table. */
static bool feed_helps(const ladle_pnode *f, int64_t rows, int64_t base) {
  return f->semi == LADLE_SEMI_REDUCTION || rows * 8 <= base;
}

/* What a join's first side t (below or above its exchange: side_pn the node
 * that made it) hands its SEMI_FILTER f: t itself with one rank or where t
 * is the whole side on every rank (replicated); with several ranks and t
 * this rank's share, every rank's rows allgathered (a transfer's keys must
 * be the whole side's: a rank's own would cut rows that meet another rank's).
 * Only when the side is small enough to help (an eighth of the rows the
 * filter cuts, or a reduction's; at most FEED_MAX_ROWS to gather), decided
 * from every rank's numbers so that all gather alike (the sum of the side's
 * rows, the largest base: an in-memory table's base rows are its rank's
 * own): *fed a new reference, or NULL (nothing fed: the filter passes every
 * row). A collective with several ranks. */
static ladle_status feed_table(exec_state *s, const ladle_pnode *side_pn, const ladle_pnode *f,
                               ladle_table *t, ladle_table **fed, ladle_error *err) {
  *fed = NULL;
  ladle_comm *c = s->eng->comm;
  int64_t rows = t->num_rows, base = f->base_rows;
  bool whole = c->size <= 1 || side_pn->dist == LADLE_DIST_REPLICATED;
  if (!whole) {
    int64_t mine[2] = {rows, base}, *all = calloc((size_t)c->size * 2, sizeof *all);
    if (all == NULL) return LADLE_OOM(err, "join");
    ladle_comm_place host = {LADLE_DEVICE_CPU, 0, NULL};
    ladle_status st = c->vt->allgather(c, mine, sizeof mine, all, host, err);
    rows = 0;
    for (int r = 0; r < c->size && st == LADLE_OK; r++) {
      rows += all[2 * r];
      base = LADLE_MAX(base, all[2 * r + 1]);
    }
    free(all);
    LADLE_RETURN_NOT_OK(st);
  }
  if (!feed_helps(f, rows, base)) return LADLE_OK;
  if (whole) {
    *fed = ladle_table_ref(t);
    return LADLE_OK;
  }
  if (rows > FEED_MAX_ROWS) return LADLE_OK;
  return exec_exchange_table(s, side_pn, LADLE_EXCHANGE_BROADCAST, ladle_table_ref(t), fed, err);
}

/* With several ranks, a join whose sides both sit on JOIN exchanges: both
 * sides' rows first, then one choice that every rank makes alike from the
 * allgathered row counts: the right side broadcast when it is small against
 * the left (R * (ranks - 1) < L: fewer rows move than by hashing both, and
 * the left rows stay where they are); for an inner join the mirror, the left
 * side broadcast when L * (ranks - 1) < R (a filtered dimension on the left
 * of a fact table: TPC-H q2's 312 parts against 61,440 rows of suppliers'
 * strings); else both sides hashed by the keys. A left, semi or anti join
 * keeps its left rows where they are (each must appear once), so only the
 * right side is ever broadcast there. */
static bool decides_exchange(const exec_state *s, const ladle_pnode *pn) {
  if (s->eng->comm->size < 2 || pn->defer_side[0] || pn->defer_side[1]) return false;
  for (int k = 0; k < 2; k++)
    if (pn->inputs[k]->op != LADLE_POP_EXCHANGE || pn->inputs[k]->xkind != LADLE_EXCHANGE_JOIN)
      return false;
  return true;
}

static ladle_status join_exchanged_inputs(exec_state *s, const ladle_pnode *pn, ladle_table **ins,
                                          ladle_error *err) {
  ladle_table *raw[2] = {NULL, NULL}, *fed = NULL;
  ladle_status st = LADLE_OK;
  const ladle_pnode *f = pn->feeds;
  for (size_t i = 0; i < 2 && st == LADLE_OK; i++) {
    size_t k = pn->right_first ? 1 - i : i;
    st = ladle_exec_node(s, pn->inputs[k]->inputs[0], &raw[k], NULL, err);
    /* the first side's rows (every rank's) feed its SEMI_FILTER, below the
     * other side's exchange: the cut rows never move */
    if (st == LADLE_OK && i == 0 && f != NULL) {
      st = feed_table(s, pn->inputs[k]->inputs[0], f, raw[k], &fed, err);
      s->fed[f->id - 1] = fed;
    }
  }
  if (f != NULL) s->fed[f->id - 1] = NULL;
  ladle_table_release(fed);
  int64_t before, rows[2] = {0, 0};
  for (int k = 0; k < 2 && st == LADLE_OK; k++)
    st = exec_rank_rows(s, raw[k]->num_rows, &before, &rows[k], err);
  if (st != LADLE_OK) {
    ladle_table_release(raw[0]);
    ladle_table_release(raw[1]);
    return st;
  }
  int64_t cap = broadcast_cap(), ranks = s->eng->comm->size;
  bool bcast = rows[1] <= cap && rows[1] * (ranks - 1) < rows[0];
  bool lbcast = !bcast && pn->lp->join.how == LADLE_JOIN_INNER && rows[0] <= cap &&
                rows[0] * (ranks - 1) < rows[1];
  /* a side already partitioned by the keys (planned: a group-by's exchange by
   * them) stays, the other hashed to its deal: (ranks - 1) / ranks of the other
   * side's rows move, fewer than a broadcast of that side; broadcasting the
   * partitioned side instead when that moves fewer rows still */
  int stay = -1;
  for (int k = 0; k < 2 && stay < 0; k++) {
    /* (a side partitioned only when a join below it hashed its own sides) */
    if (!pn->part_side[k] || (pn->part_if[k] != NULL && !s->hashed[pn->part_if[k]->id - 1]))
      continue;
    /* broadcasting the partitioned side moves fewer rows (a left side: an inner join's only) */
    bool tiny = rows[k] <= cap && rows[k] * ranks < rows[1 - k];
    bcast = k == 1 && tiny;
    lbcast = k == 0 && tiny && pn->lp->join.how == LADLE_JOIN_INNER;
    if (!bcast && !lbcast) stay = k;
  }
  LADLE_PHASE_END(
      bcast       ? "join exchange: right side broadcast (its rows)"
      : lbcast    ? "join exchange: left side broadcast (the right rows)"
      : stay == 1 ? "join exchange: left side hashed to the right's deal (the right rows)"
      : stay == 0 ? "join exchange: right side hashed to the left's deal (the right rows)"
                  : "join exchange: both sides hashed (the right rows)",
      rows[1], LADLE_PHASE_START());
  /* the output's rows then sit on their left keys' hash ranks */
  s->hashed[pn->id - 1] = !bcast && !lbcast;
  if (stay >= 0) {
    int m = 1 - stay;
    ins[stay] = raw[stay];
    raw[stay] = NULL;
    st = exec_exchange_table(s, pn->inputs[m], LADLE_EXCHANGE_JOIN, raw[m], &ins[m], err);
    raw[m] = NULL;
  } else if (bcast) {
    ins[0] = raw[0];
    raw[0] = NULL;
    st = exec_exchange_table(s, pn->inputs[1], LADLE_EXCHANGE_BROADCAST, raw[1], &ins[1], err);
  } else if (lbcast) {
    ins[1] = raw[1];
    st = exec_exchange_table(s, pn->inputs[0], LADLE_EXCHANGE_BROADCAST, raw[0], &ins[0], err);
    raw[0] = NULL;
  } else {
    st = exec_exchange_table(s, pn->inputs[0], LADLE_EXCHANGE_JOIN, raw[0], &ins[0], err);
    raw[0] = NULL;
    if (st == LADLE_OK)
      st = exec_exchange_table(s, pn->inputs[1], LADLE_EXCHANGE_JOIN, raw[1], &ins[1], err);
    else
      ladle_table_release(raw[1]);
  }
  ladle_table_release(raw[0]);
  return st;
}

static ladle_status join_marks_run(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                   ladle_error *err);

static ladle_status join_run(exec_state *s, const ladle_pnode *pn, exec_side *side_in,
                             ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side_in);
  if (s->columns) return exec_columns_join(s, pn, out, err);
  if (ladle_pnode_marks(pn)) return join_marks_run(s, pn, out, err);
  ladle_table *ins[2] = {NULL, NULL};
  join_defer jd[2];
  memset(jd, 0, sizeof jd);
  ladle_status st = LADLE_OK;
  const ladle_pnode *f = pn->feeds;
  if (decides_exchange(s, pn)) {
    st = join_exchanged_inputs(s, pn, ins, err);
    if (st == LADLE_OK) st = join_table(s, pn, ins[0], ins[1], jd, out, err);
    ladle_table_release(ins[0]);
    ladle_table_release(ins[1]);
    return st;
  }
  ladle_table *fed = NULL;
  for (size_t i = 0; i < 2 && st == LADLE_OK; i++) {
    size_t k = pn->right_first ? 1 - i : i;
    exec_side side = {pn->defer_side[k] ? &jd[k] : NULL, NULL};
    st = ladle_exec_node(s, pn->inputs[k], &ins[k], &side, err);
    /* the first side feeds its SEMI_FILTER while the other runs: a
     * transfer only when that side kept an eighth of its table */
    if (st == LADLE_OK && i == 0 && f != NULL) {
      st = feed_table(s, pn->inputs[k], f, ins[k], &fed, err);
      s->fed[f->id - 1] = fed;
    }
  }
  if (f != NULL) s->fed[f->id - 1] = NULL;
  ladle_table_release(fed);
  if (st == LADLE_OK) st = join_table(s, pn, ins[0], ins[1], jd, out, err);
  for (int k = 0; k < 2; k++) {
    ladle_table_release(ins[k]);
    ladle_table_release(jd[k].in);
    ladle_scratch_free(jd[k].sel);
  }
  return st;
}

int exec_stream_join_mode(const ladle_backend *be, bool columns) {
  if (columns || be->join_build == NULL || be->join_probe == NULL || be->gather == NULL) return 0;
  const char *v = getenv("LADLE_STREAM_JOIN");
  return v == NULL || *v == '\0' ? 2 : (int)LADLE_MIN(LADLE_MAX(strtol(v, NULL, 10), 0), 2);
}

/* ------------------------------------------------------------- streamed
 *
 * Inside a pipeline (pn->probe set by the planner, physical.c): when the
 * pipeline opens, the build side (the other input) runs and its keys become
 * a hash table (the backend's join_build); each morsel of the probe side is
 * then probed on its own (join_probe) and the output morsel gathered from
 * the morsel's columns and the build side's partitions. The order is the
 * probe side's rows, each one's matches by build row: a left probe gives
 * the order of the whole join. */

typedef struct join_stream {
  ladle_table *build;
  const ladle_table **fed; /* the SEMI_FILTER slot the build side feeds, or NULL */
  piece_table bp;          /* the build side's columns, for gathers */
  ladle_column *bkey;      /* its keys, whole (the table keeps them) */
  size_t nkeys;
  ladle_join_ht *ht;
  const ladle_backend *be;
} join_stream;

static void join_stream_close(void *state) {
  join_stream *js = state;
  if (js == NULL) return;
  if (js->fed != NULL) *js->fed = NULL;
  if (js->ht != NULL) js->be->join_ht_free(js->ht);
  if (js->bkey != NULL)
    for (size_t k = 0; k < js->nkeys; k++) ladle_column_release(&js->bkey[k]);
  free(js->bkey);
  exec_pieces_release(&js->bp);
  ladle_table_release(js->build);
  free(js);
}

/* The keys of join pn's build side (its input 1 - pn->probe, run: `build`),
 * evaluated whole into *bkey (nkeys columns; left NULL on failure) and grouped
 * into *ht for probes by the other side's keys: a streamed join's table, or a
 * marked one's. */
static ladle_status build_keys(exec_state *s, const ladle_pnode *pn, const ladle_table *build,
                               ladle_column **bkey, ladle_join_ht **ht, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  size_t nk = p->nkeys;
  bool left = pn->probe == 1;
  ladle_bexpr *const *bk = left ? p->keys : p->rkeys, *const *pk = left ? p->rkeys : p->keys;
  ladle_dtype *pt = calloc(LADLE_MAX(nk, 1), sizeof *pt);
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  ladle_status st = pt != NULL && keys != NULL ? LADLE_OK : LADLE_OOM(err, "join");
  for (size_t k = 0; st == LADLE_OK && k < nk; k++) pt[k] = pk[k]->type;
  if (st == LADLE_OK) st = exec_eval_whole(s, bk, nk, build, keys, err);
  if (st == LADLE_OK) {
    *bkey = keys; /* (on failure exec_eval_whole leaves nothing in it) */
    keys = NULL;
    st = s->be->join_build(&s->k, *bkey, nk, pt, p->join.nulls_equal, ht, err);
  }
  free(keys);
  free(pt);
  return st;
}

static ladle_status join_stream_open(exec_state *s, const ladle_pnode *pn, void **state,
                                     ladle_error *err) {
  const ladle_plan *p = pn->lp;
  int b = 1 - pn->probe;
  if (pn->probe < 0 || s->be->join_build == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "internal: join #%d does not stream", pn->id);
  join_stream *js = calloc(1, sizeof *js);
  if (js == NULL) return LADLE_OOM(err, "join");
  js->be = s->be;
  js->nkeys = p->nkeys;
  ladle_status st = ladle_exec_node(s, pn->inputs[b], &js->build, NULL, err);
  /* the build side feeds its SEMI_FILTER below the probe side, as a whole
   * join's first side does (join_run) */
  const ladle_pnode *f = pn->feeds;
  if (st == LADLE_OK && f != NULL && feed_helps(f, js->build->num_rows, f->base_rows)) {
    js->fed = &s->fed[f->id - 1];
    *js->fed = js->build;
  }
  if (st == LADLE_OK) st = exec_pieces_make(s, js->build, &js->bp, err);
  if (st == LADLE_OK) st = build_keys(s, pn, js->build, &js->bkey, &js->ht, err);
  if (ladle_trace_level() >= 1 && st == LADLE_OK)
    fprintf(stderr, "ladle: #%d JOIN built #%d (%lld rows) for its streamed %s side\n", pn->id,
            pn->inputs[b]->id, (long long)js->build->num_rows, pn->probe == 0 ? "left" : "right");
  if (st != LADLE_OK) {
    join_stream_close(js);
    return st;
  }
  *state = js;
  return LADLE_OK;
}

static void join_stream_needs(const ladle_pnode *pn, const bool *need, bool *in_need) {
  const ladle_plan *p = pn->lp;
  size_t nin = pn->inputs[pn->probe]->schema->n;
  ladle_bexpr *const *pk = pn->probe == 0 ? p->keys : p->rkeys;
  for (size_t k = 0; k < p->nkeys; k++) ladle_exec_mark_columns(pk[k], in_need, nin);
  for (size_t i = 0; i < p->schema.n; i++) {
    int64_t m = p->out_map[i];
    if ((need == NULL || need[i]) && (m >= 0) == (pn->probe == 0))
      in_need[m >= 0 ? m : -m - 1] = true;
  }
}

static ladle_status join_stream_morsel(exec_state *s, const ladle_pnode *pn, const void *state,
                                       const bool *need, const ladle_chunk *in, ladle_chunk *out,
                                       ladle_error *err) {
  const join_stream *js = state;
  const ladle_plan *p = pn->lp;
  size_t nk = p->nkeys;
  ladle_bexpr *const *pk = pn->probe == 0 ? p->keys : p->rkeys;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  if (keys == NULL) return LADLE_OOM(err, "join");
  ladle_status st = exec_eval_morsel(s, pk, nk, in, keys, err);
  if (st != LADLE_OK) {
    free(keys);
    return st;
  }
  ladle_join_pairs pairs = {0, NULL, NULL, NULL, false};
  /* a probe on the right of an inner join is the same inner join */
  st = s->be->join_probe(&s->k, js->ht, keys, p->join.how, &pairs, err);
  ladle_release_columns(keys, nk); /* and the array */
  /* every probe row once, in order (a lookup into a dimension's key): the
   * morsel's columns are the output's */
  bool same = st == LADLE_OK && pairs.left_identity;
  /* (on failure the pipeline releases the output columns made) */
  for (size_t i = 0; st == LADLE_OK && i < p->schema.n; i++) {
    int64_t m = p->out_map[i];
    size_t c = (size_t)(m >= 0 ? m : -m - 1);
    ladle_column *o = &out->columns[i];
    if (need != NULL && !need[i]) {
      exec_placeholder(o, pairs.n);
    } else if ((m >= 0) == (pn->probe == 0)) {
      gather_src g = {&in->columns[c], NULL, pn->views};
      if (same)
        ladle_column_copy_ref(&in->columns[c], o);
      else
        st = exec_gather_src(s, &g, pairs.left, pairs.n, o, err);
    } else {
      gather_src g = exec_pieces_src(&js->bp, c);
      g.views = pn->views;
      st = exec_gather_src(s, &g, pairs.right, pairs.n, o, err);
    }
  }
  if (st == LADLE_OK) out->length = pairs.n;
  ladle_scratch_free(pairs.left);
  ladle_scratch_free(pairs.right);
  return st;
}

static const exec_stream_op join_streaming = {join_stream_needs, join_stream_open,
                                              join_stream_morsel, join_stream_close};

/* ------------------------------------------------------------- marked
 *
 * A semi or anti join whose right side is the big one (TPC-H q4: a quarter's
 * orders against the lineitems received late, 38M rows at SF10) is the sink
 * of the right side's pipeline (ladle_pnode_marks, physical.c): the left
 * side runs first, whole, and its keys become the hash table; each morsel
 * of the right side probes it and marks the left rows it meets
 * (join_probe_mark), so the right side is never a table. At the end the
 * left rows marked (semi) or never marked (anti) come out, in the left
 * side's order, as the whole join gives them.
 *
 * Across ranks the left side is broadcast (every rank holds it whole, in its
 * order) and each rank's right rows, which never move, mark it. Where the
 * right side is sharded, a left row is met if any rank met it: the marks
 * are "met" bytes on every rank, summed across ranks as 64-bit words of 8
 * bytes (a byte's sum is at most the ranks, fewer than 256, so no carry
 * crosses bytes: one allreduce of n/8 words), and the sums compared with 0.
 * Each rank then keeps its share of the kept rows, a contiguous slice in
 * rank order: the job's order is the left side's, and the output sharded.
 * Where the right side is replicated every rank's marks are whole already,
 * and the output is replicated. */

typedef struct join_marks {
  const ladle_pnode *pn;
  ladle_table *build;
  ladle_column *bkey; /* the left side's keys, whole (the table keeps them) */
  size_t nkeys;
  ladle_join_ht *ht;
  uint8_t *marks; /* per left row: 1 kept (the left join's output); across
                     ranks, 1 met (padded with zeros to whole 8-byte words) */
  uint8_t value;  /* written where a right row meets the left row: 1 semi, 0 anti;
                     across ranks 1 */
  bool across;    /* the right side sharded over several ranks: marks combined */
  const ladle_backend *be;
} join_marks;

static void join_marks_close(void *state) {
  join_marks *jm = state;
  if (jm == NULL) return;
  if (jm->ht != NULL) jm->be->join_ht_free(jm->ht);
  if (jm->bkey != NULL)
    for (size_t k = 0; k < jm->nkeys; k++) ladle_column_release(&jm->bkey[k]);
  free(jm->bkey);
  ladle_scratch_free(jm->marks);
  ladle_table_release(jm->build);
  free(jm);
}

static ladle_status join_marks_open(exec_state *s, const ladle_pnode *pn, const exec_source *src,
                                    const ladle_schema *in, bool *need, void **state,
                                    ladle_error *err) {
  LADLE_UNUSED(src);
  const ladle_plan *p = pn->lp;
  size_t nk = p->nkeys;
  *state = NULL;
  join_marks *jm = calloc(1, sizeof *jm);
  ladle_status st = jm != NULL ? LADLE_OK : LADLE_OOM(err, "join");
  if (st == LADLE_OK) {
    jm->pn = pn;
    jm->be = s->be;
    jm->nkeys = nk;
    jm->across = s->eng->comm->size > 1 && pn->inputs[1]->dist != LADLE_DIST_REPLICATED;
    jm->value = p->join.how == LADLE_JOIN_SEMI || jm->across ? 1 : 0;
    st = ladle_exec_node(s, pn->inputs[0], &jm->build, NULL, err);
  }
  for (size_t k = 0; st == LADLE_OK && k < nk; k++)
    ladle_exec_mark_columns(p->rkeys[k], need, in->n);
  if (st == LADLE_OK) {
    size_t bytes = LADLE_MAX(((size_t)jm->build->num_rows + 7) / 8 * 8, 8); /* whole words */
    jm->marks = ladle_scratch_alloc(bytes, false);
    st = jm->marks != NULL ? LADLE_OK : LADLE_OOM(err, "join");
    if (st == LADLE_OK) memset(jm->marks, 1 - jm->value, bytes);
  }
  if (st == LADLE_OK) st = build_keys(s, pn, jm->build, &jm->bkey, &jm->ht, err);
  if (ladle_trace_level() >= 1 && st == LADLE_OK)
    fprintf(stderr, "ladle: #%d JOIN built #%d (%lld rows), marked by its streamed right side\n",
            pn->id, pn->inputs[0]->id, (long long)jm->build->num_rows);
  if (st != LADLE_OK) {
    join_marks_close(jm);
    return st;
  }
  *state = jm;
  return LADLE_OK;
}

static ladle_status join_marks_consume(exec_state *s, void *state, size_t k, ladle_chunk *c,
                                       ladle_error *err) {
  LADLE_UNUSED(k);
  join_marks *jm = state;
  const ladle_plan *p = jm->pn->lp;
  size_t nk = p->nkeys;
  if (c->length == 0 || jm->build->num_rows == 0) return LADLE_OK;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  if (keys == NULL) return LADLE_OOM(err, "join");
  ladle_status st = exec_eval_morsel(s, p->rkeys, nk, c, keys, err);
  if (st != LADLE_OK) {
    free(keys);
    return st;
  }
  st = s->be->join_probe_mark(&s->k, jm->ht, keys, jm->value, jm->marks, err);
  ladle_release_columns(keys, nk); /* and the array */
  return st;
}

static ladle_status join_marks_finish(exec_state *s, void *state, ladle_table **out,
                                      ladle_error *err) {
  join_marks *jm = state;
  const ladle_pnode *pn = jm->pn;
  const ladle_plan *p = pn->lp;
  int64_t n = jm->build->num_rows, kept = 0;
  uint8_t *keep = jm->marks;
  uint8_t *met = NULL; /* across ranks: the rows kept by the summed marks */
  ladle_status st = LADLE_OK;
  ladle_comm *c = s->eng->comm;
  if (jm->across) {
    ladle_comm_place host = {LADLE_DEVICE_CPU, 0, NULL};
    st = c->vt->allreduce(c, jm->marks, jm->marks, ((size_t)n + 7) / 8, LADLE_COMM_U64,
                          LADLE_COMM_SUM, host, err);
    met = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1), false);
    if (st == LADLE_OK && met == NULL) st = LADLE_OOM(err, "join");
    uint8_t zero = 0;
    ladle_column sums, k;
    memset(&sums, 0, sizeof sums);
    memset(&k, 0, sizeof k);
    sums.type.id = k.type.id = LADLE_TYPE_UINT8;
    sums.length = n;
    sums.values = jm->marks;
    k.length = 1;
    k.values = &zero;
    if (st == LADLE_OK)
      st = s->be->compare_into(&s->k, p->join.how == LADLE_JOIN_SEMI ? LADLE_OP_GT : LADLE_OP_EQ,
                               &sums, &k, true, met, err);
    keep = met;
  }
  if (st == LADLE_OK) st = s->be->mask_and(&s->k, NULL, n, false, keep, &kept, err);
  int64_t *idx = NULL, lo = 0, hi = kept;
  if (st == LADLE_OK && jm->across) {
    lo = kept * c->rank / c->size;
    hi = kept * (c->rank + 1) / c->size;
  }
  /* (every row kept on one rank: the left side as it is) */
  if (st == LADLE_OK && (kept < n || jm->across)) {
    idx = ladle_scratch_alloc((size_t)(kept + 1) * sizeof *idx, false);
    st = idx == NULL ? LADLE_OOM(err, "join")
                     : s->be->keep_to_indices(&s->k, keep, n, kept, idx, err);
  }
  ladle_scratch_free(met);
  piece_table lp;
  memset(&lp, 0, sizeof lp);
  if (st == LADLE_OK) st = exec_pieces_make(s, jm->build, &lp, err);
  gather_src *src = calloc(LADLE_MAX(p->schema.n, 1), sizeof *src);
  const int64_t **at = calloc(LADLE_MAX(p->schema.n, 1), sizeof *at);
  if (st == LADLE_OK && (src == NULL || at == NULL)) st = LADLE_OOM(err, "join");
  for (size_t i = 0; st == LADLE_OK && i < p->schema.n; i++) {
    src[i] = exec_pieces_src(&lp, (size_t)p->out_map[i]); /* semi, anti: left columns */
    src[i].views = pn->views;
    at[i] = idx != NULL ? idx + lo : NULL;
  }
  if (st == LADLE_OK) st = exec_gather_table(s, &p->schema, src, at, NULL, NULL, hi - lo, out, err);
  free(src);
  free(at);
  exec_pieces_release(&lp);
  ladle_scratch_free(idx);
  return st;
}

static const exec_sink_op join_marks_sink = {join_marks_open, join_marks_consume, NULL,
                                             join_marks_finish, join_marks_close};

/* The right side's pipeline (from pn->source up to pn->inputs[1]; no node
 * between them where the source is the input itself) into the marks. */
static ladle_status join_marks_run(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                   ladle_error *err) {
  const ladle_pnode *in = pn->inputs[1];
  const ladle_pnode *source = pn->source != NULL ? pn->source : in;
  const ladle_pnode *top = in->pipelined ? in : source;
  return exec_pipeline_run(s, top, source, NULL, &join_marks_sink, pn, out, NULL, err);
}

/* ------------------------------------------------------------- made source
 *
 * A streamed join right over a Parquet scan as its pipeline's made source
 * (pn->stream_src, physical.c): per row group, the probe keys' columns are
 * decoded, probed, and the other columns of the probe side read from the
 * file at the matched rows only, as a late filter reads its late columns
 * (TPC-H q5: 3% of lineitem's rows meet the orders of Asia's customers in
 * 1994; its supplier key and prices are decoded for those). */

typedef struct join_late {
  const ladle_pnode *pn;
  join_stream *js;
  exec_pq_stream *m;
} join_late;

static void join_late_close(void *ctx) {
  join_late *jl = ctx;
  if (jl == NULL) return;
  join_stream_close(jl->js);
  exec_pq_stream_close(jl->m);
  free(jl);
}

static ladle_status join_late_make(exec_state *s, void *ctx, size_t u, const bool *need,
                                   ladle_chunk *out, ladle_error *err) {
  const join_late *jl = ctx;
  const ladle_pnode *pn = jl->pn;
  const ladle_plan *p = pn->lp;
  size_t nk = p->nkeys, nin = pn->inputs[pn->probe]->schema->n;
  ladle_bexpr *const *pk = pn->probe == 0 ? p->keys : p->rkeys;
  bool *decoded = calloc(LADLE_MAX(nin, 1), sizeof *decoded);
  ladle_chunk c = {0, calloc(LADLE_MAX(nin, 1), sizeof(ladle_column)), 0};
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  ladle_join_pairs pairs = {0, NULL, NULL, NULL, false};
  int64_t *kept = NULL, *pos = NULL, nkept = 0;
  ladle_status st = decoded && c.columns && keys ? LADLE_OK : LADLE_OOM(err, "join");
  for (size_t k = 0; st == LADLE_OK && k < nk; k++) decoded[pk[k]->col] = true;
  if (st == LADLE_OK) st = exec_pq_stream_unit(s, jl->m, u, decoded, &c, err);
  for (size_t k = 0; st == LADLE_OK && k < nk; k++) keys[k] = c.columns[pk[k]->col]; /* borrowed */
  if (st == LADLE_OK) st = s->be->join_probe(&s->k, jl->js->ht, keys, p->join.how, &pairs, err);
  /* the probe rows matched (ascending: pairs come by probe row), and where a
   * row has several matches, each pair's place among them */
  if (st == LADLE_OK) {
    kept = malloc((size_t)LADLE_MAX(pairs.n, 1) * sizeof *kept);
    pos = malloc((size_t)LADLE_MAX(pairs.n, 1) * sizeof *pos);
    if (kept == NULL || pos == NULL) st = LADLE_OOM(err, "join");
  }
  for (int64_t i = 0; st == LADLE_OK && i < pairs.n; i++) {
    if (i == 0 || pairs.left[i] != pairs.left[i - 1]) kept[nkept++] = pairs.left[i];
    pos[i] = nkept - 1;
  }
  bool several = nkept < pairs.n;
  for (size_t i = 0; st == LADLE_OK && i < p->schema.n; i++) {
    int64_t mo = p->out_map[i];
    size_t col = (size_t)(mo >= 0 ? mo : -mo - 1);
    ladle_column *o = &out->columns[i];
    if (need != NULL && !need[i]) {
      exec_placeholder(o, pairs.n);
    } else if ((mo >= 0) != (pn->probe == 0)) {
      gather_src g = exec_pieces_src(&jl->js->bp, col);
      g.views = pn->views;
      st = exec_gather_src(s, &g, pairs.right, pairs.n, o, err);
    } else if (decoded[col]) {
      st = s->be->gather(&s->k, &c.columns[col], pairs.left, pairs.n, o, err);
    } else if (!several) {
      st = exec_pq_stream_late(s, jl->m, u, col, kept, nkept, false, o, err);
    } else {
      ladle_column at;
      st = exec_pq_stream_late(s, jl->m, u, col, kept, nkept, false, &at, err);
      if (st == LADLE_OK) {
        st = s->be->gather(&s->k, &at, pos, pairs.n, o, err);
        ladle_column_release(&at);
      }
    }
  }
  if (st == LADLE_OK) out->length = pairs.n;
  free(kept);
  free(pos);
  ladle_scratch_free(pairs.left);
  ladle_scratch_free(pairs.right);
  free(keys);
  if (c.columns != NULL) {
    for (size_t i = 0; i < nin; i++) ladle_column_release(&c.columns[i]);
    free(c.columns);
  }
  free(decoded);
  return st;
}

static ladle_status join_source(exec_state *s, const ladle_pnode *pn, exec_source *out,
                                ladle_error *err) {
  memset(out, 0, sizeof *out);
  if (!pn->stream_src || pn->probe < 0 || s->columns || s->be->join_build == NULL ||
      pn->inputs[pn->probe]->op != LADLE_POP_SCAN_PARQUET)
    return LADLE_OK;
  join_late *jl = calloc(1, sizeof *jl);
  if (jl == NULL) return LADLE_OOM(err, "join");
  jl->pn = pn;
  ladle_status st = exec_pq_stream_open(s, pn->inputs[pn->probe], &jl->m, out, err);
  void *js = NULL;
  if (st == LADLE_OK && jl->m != NULL) st = join_stream_open(s, pn, &js, err);
  jl->js = js;
  if (st != LADLE_OK || jl->m == NULL) {
    /* too few row groups for the threads: the join runs whole */
    join_late_close(jl);
    memset(out, 0, sizeof *out);
    return st;
  }
  out->make = join_late_make;
  out->ctx = jl;
  out->close = join_late_close;
  return LADLE_OK;
}

const exec_operator exec_op_join = {LADLE_POP_JOIN, join_run, &join_streaming, NULL, join_source};
