/* physical.c — the planner: a bound logical plan to a physical plan
 * (physical.h), and the physical plan's text for explain().
 *
 * One walk from the root down decides, for each node, what its parent lets it
 * leave out (a filter's columns nobody reads, the columns a deferred join
 * input gathers late) and which rewrites apply around it; the searches for a
 * semi-join reduction and a predicate transfer run where their join is
 * planned, and leave a pending SEMI_FILTER that the walk inserts when it
 * reaches the input it targets. */
#include "physical.h"

#include <stdio.h>

#include "exec.h"

enum { PENDING_MAX = 16 };

typedef struct pending {
  const ladle_plan *parent; /* the SEMI_FILTER goes between parent and ... */
  size_t input;             /* ... this input of it */
  ladle_pnode *semi;
  bool used;
} pending;

typedef struct memo {
  const ladle_plan *lp;
  ladle_pnode *pn;
} memo;

typedef struct planner {
  ladle_pplan *pp;
  const ladle_pplan_opts *o;
  pending pend[PENDING_MAX];
  size_t npend;
  memo *memo; /* CACHE nodes planned once */
  size_t nmemo, capmemo;
  bool oom;
} planner;

/* What a parent asks of its input. */
typedef struct want {
  const bool *need; /* output columns the parent reads (NULL: all) */
  bool defer;       /* a join's deferred FILTER input */
  bool views;       /* the query's result */
} want;

const char *ladle_pop_name(ladle_pop op) {
  static const char *const names[] = {
      "SCAN",        "SCAN_PARQUET",     "SCAN_CSV",       "FILTER",  "PROJECTION", "PROJECT",
      "GROUP_BY",    "GROUP_BY_PARTIAL", "GROUP_BY_FINAL", "JOIN",    "SORT",       "TOP_K",
      "SLICE",       "DISTINCT",         "UNION",          "HCONCAT", "CACHE",      "ROW_INDEX",
      "SEMI_FILTER", "EXCHANGE",         "EXPLODE"};
  return (size_t)op < sizeof names / sizeof *names ? names[op] : "?";
}

const char *ladle_exchange_name(ladle_exchange_kind kind) {
  switch (kind) {
    case LADLE_EXCHANGE_HASH:
      return "hash";
    case LADLE_EXCHANGE_BROADCAST:
      return "broadcast";
    case LADLE_EXCHANGE_GATHER:
      return "gather";
    case LADLE_EXCHANGE_RANGE:
      return "range";
    case LADLE_EXCHANGE_JOIN:
      return "join";
    case LADLE_EXCHANGE_RETURN:
      return "return";
  }
  return "?";
}

static ladle_pnode *pn_new(planner *P, ladle_pop op, const ladle_plan *lp, size_t ninputs) {
  ladle_pplan *pp = P->pp;
  if (P->oom) return NULL;
  if (pp->n == pp->cap) {
    size_t cap = pp->cap ? pp->cap * 2 : 16;
    ladle_pnode **v = realloc(pp->nodes, cap * sizeof *v);
    if (v == NULL) {
      P->oom = true;
      return NULL;
    }
    pp->nodes = v;
    pp->cap = cap;
  }
  ladle_pnode *pn = calloc(1, sizeof *pn);
  ladle_pnode **in = calloc(LADLE_MAX(ninputs, 1), sizeof *in);
  if (pn == NULL || in == NULL) {
    free(pn);
    free(in);
    P->oom = true;
    return NULL;
  }
  pn->op = op;
  pn->lp = lp;
  pn->schema = &lp->schema;
  pn->ninputs = ninputs;
  pn->inputs = in;
  pn->limit = -1;
  pn->probe = -1;
  pp->nodes[pp->n++] = pn;
  return pn;
}

static bool *bools_copy(planner *P, const bool *v, size_t n) {
  if (v == NULL) return NULL;
  bool *c = malloc(LADLE_MAX(n, 1) * sizeof *c);
  if (c == NULL) {
    P->oom = true;
    return NULL;
  }
  memcpy(c, v, n * sizeof *c);
  return c;
}

/* ---------------------------------------------------- shapes the rewrites need */

/* Whether a FILTER, SELECT or WITH_COLUMNS node works row by row (no
 * aggregation or window in its expressions). */
static bool exprs_row_wise(ladle_bexpr *const *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (e[i]->has_agg || e[i]->has_window) return false;
  return true;
}

static bool row_wise(const ladle_plan *r) { return exprs_row_wise(r->exprs, r->nexprs); }

/* Output column *c of a FILTER, SELECT, WITH_COLUMNS or PROJECT node as the
 * input column it is; false when it is computed. */
static bool col_below(const ladle_plan *r, int64_t *c) {
  const ladle_bexpr *e = NULL;
  if (r->kind == LADLE_NODE_FILTER) return true;
  if (r->kind == LADLE_NODE_PROJECT) {
    *c = r->out_map[*c];
    return *c >= 0;
  }
  if (r->kind == LADLE_NODE_SELECT)
    e = r->exprs[*c];
  else if (r->out_map[*c] >= 0)
    *c = r->out_map[*c];
  else
    e = r->exprs[-r->out_map[*c] - 1];
  if (e != NULL) {
    if (e->kind != LADLE_EX_COL) return false;
    *c = e->col;
  }
  return true;
}

/* Whether a FULL join coalesces a key (its sides' key columns merged whole). */
bool ladle_join_coalesces(const ladle_plan *p) {
  for (size_t i = 0; i < p->schema.n; i++)
    if (p->coalesce_rkey[i] >= 0) return true;
  return false;
}

/* Semi-join reduction. A join whose right side is a group-by on its join
 * keys, seen through row-wise filters and projections (TPC-H q21: orders with
 * more than one supplier, semi-joined to the few orders left after the nation
 * filter), needs only the groups whose keys the left side has; and a group's
 * rows are exactly the input rows with its keys. So the group-by's input can
 * first be cut to the rows whose keys are among the left side's (a semi
 * join), which changes no row the join keeps: for inner, left, semi and anti
 * joins without null equality the right rows of other keys are never output.
 * Shared subplans (CACHE) and anything that sees across rows (aggregations or
 * windows in a projection or filter, slices, sorts) stop the search. */
static const ladle_plan *sip_target(const ladle_plan *r, int64_t *cols, size_t nk) {
  for (;;) {
    switch (r->kind) {
      case LADLE_NODE_FILTER:
      case LADLE_NODE_SELECT:
      case LADLE_NODE_WITH_COLUMNS:
      case LADLE_NODE_PROJECT:
        if (r->kind != LADLE_NODE_PROJECT && !row_wise(r)) return NULL;
        for (size_t k = 0; k < nk; k++)
          if (!col_below(r, &cols[k])) return NULL;
        break;
      case LADLE_NODE_GROUP_BY:
        if (r->reduce || r->nkeys == 0) return NULL;
        for (size_t k = 0; k < nk; k++)
          if (cols[k] < 0 || (size_t)cols[k] >= r->nkeys) return NULL;
        return r;
      default:
        return NULL;
    }
    if (r->ninputs != 1) return NULL;
    r = r->inputs[0];
  }
}

/* Predicate transfer. An inner join whose right side is a short chain over
 * one table, filtered to a small part of it (TPC-H q21: the one nation of
 * SAUDI ARABIA, then its 400 suppliers), is computed right side first. Its
 * keys then bound which rows of the left side can take part; when the left
 * key column comes from below another join (q21: l_suppkey from the 3.8
 * million late lineitems, joined to orders before the suppliers), those rows
 * are dropped where the column enters (a semi join against the keys), before
 * the joins in between see them. That is the order DuckDB's optimizer picks
 * for q21 by moving the joins; ladle keeps Polars' join order and moves the
 * keys instead. The walk from the join down follows the column through
 * filters, projections and the preserved side of joins, and stops at
 * anything else (a scan, a shared subplan, a group-by). */
int64_t ladle_scan_parquet_rows(const ladle_plan *p);

/* The rows of the table at the bottom of a chain of single-input row-wise
 * nodes (-1: not such a chain). */
static int64_t chain_base_rows(const ladle_plan *r) {
  for (;;) {
    switch (r->kind) {
      case LADLE_NODE_SCAN:
        return r->table->num_rows;
      case LADLE_NODE_SCAN_PARQUET:
        return ladle_scan_parquet_rows(r);
      case LADLE_NODE_FILTER:
      case LADLE_NODE_SELECT:
      case LADLE_NODE_WITH_COLUMNS:
        if (!row_wise(r)) return -1;
        break;
      case LADLE_NODE_PROJECT:
        break;
      default:
        return -1;
    }
    if (r->ninputs != 1) return -1;
    r = r->inputs[0];
  }
}

static bool pending_at(const planner *P, const ladle_plan *parent, size_t input);

/* Whether input `side` of join p, a chain of single-input row-wise nodes, may
 * keep fewer rows than its table: it has a filter, or a SEMI_FILTER pending
 * in it (TPC-H q21's suppliers, cut to Saudi Arabia's 397 by the nation's
 * transfer, then cut lineitem by theirs). A side without either keeps every
 * row of its table and never feeds a transfer (which waits for a side that
 * kept an eighth or less). */
static bool chain_filters(const planner *P, const ladle_plan *p, size_t side) {
  const ladle_plan *parent = p;
  size_t input = side;
  for (;;) {
    if (pending_at(P, parent, input)) return true;
    const ladle_plan *r = parent->inputs[input];
    if (r->kind == LADLE_NODE_FILTER) return true;
    if (r->ninputs != 1) return false;
    parent = r;
    input = 0;
  }
}

/* Follows column *col of input *input of *parent down to where it enters;
 * true when it passed below a join on the way (only then is a transfer worth
 * it: the join itself does what the semi join would). */
static bool transfer_path(const ladle_plan **parent, size_t *input, int64_t *col) {
  bool joined = false;
  for (;;) {
    const ladle_plan *x = (*parent)->inputs[*input];
    int64_t c = *col;
    switch (x->kind) {
      case LADLE_NODE_FILTER:
      case LADLE_NODE_SELECT:
      case LADLE_NODE_WITH_COLUMNS:
      case LADLE_NODE_PROJECT:
        if ((x->kind != LADLE_NODE_PROJECT && !row_wise(x)) || !col_below(x, &c)) return joined;
        break;
      case LADLE_NODE_JOIN: {
        ladle_join_type how = x->join.how;
        int64_t m = x->out_map[c];
        if (ladle_join_coalesces(x) ||
            (m < 0 && how != LADLE_JOIN_INNER && how != LADLE_JOIN_CROSS) ||
            (how != LADLE_JOIN_INNER && how != LADLE_JOIN_CROSS && how != LADLE_JOIN_LEFT &&
             how != LADLE_JOIN_SEMI && how != LADLE_JOIN_ANTI))
          return joined;
        joined = true;
        *parent = x;
        *input = m >= 0 ? 0 : 1;
        *col = m >= 0 ? m : -m - 1;
        continue;
      }
      default:
        return joined;
    }
    if (x->ninputs != 1 || c < 0) return joined;
    *parent = x;
    *input = 0;
    *col = c;
  }
}

/* Whether join p's input `side` runs deferred (join_defer in exec.c): a FILTER
 * of which the keys do not read every column. *need: the columns they read. */
static bool join_defers(planner *P, const ladle_plan *p, size_t side, bool **need) {
  *need = NULL;
  const ladle_plan *f = p->inputs[side];
  /* (with several ranks an exchange sits between a join and its inputs) */
  if (!P->o->can_defer || P->o->ranks > 1 || f->kind != LADLE_NODE_FILTER ||
      ladle_join_coalesces(p) || p->join.how == LADLE_JOIN_CROSS)
    return false;
  bool *nd = calloc(LADLE_MAX(f->schema.n, 1), sizeof *nd);
  if (nd == NULL) {
    P->oom = true;
    return false;
  }
  ladle_bexpr *const *keys = side == 0 ? p->keys : p->rkeys;
  for (size_t k = 0; k < p->nkeys; k++) ladle_exec_mark_columns(keys[k], nd, f->schema.n);
  size_t used = 0;
  for (size_t i = 0; i < f->schema.n; i++) used += nd[i];
  if (used == f->schema.n) { /* every column a key's: nothing to put off */
    free(nd);
    return false;
  }
  *need = nd;
  return true;
}

/* ------------------------------------------------------------- pipelines */

/* Whether e's value can depend on the rows of the whole column it belongs
 * to (chunk->table_rows): a division by one value (Polars' formula) or a
 * when (Polars computes a branch no row takes by the frame's height). Inside
 * a pipeline, after a filter, that height is not known. */
static bool uses_height(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_WHEN) return true;
  if (e->kind == LADLE_EX_BINARY &&
      (e->op == LADLE_OP_TRUE_DIV || e->op == LADLE_OP_FLOOR_DIV || e->op == LADLE_OP_MOD))
    return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (uses_height(e->args[i])) return true;
  return false;
}

static bool any_uses_height(ladle_bexpr *const *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (uses_height(e[i])) return true;
  return false;
}

/* The longest chain of streaming nodes a pipeline takes. */
enum { CHAIN_MAX = 48 };

/* Whether logical node r can stream, one morsel at a time (operator.h):
 * a filter or projection whose expressions are row-wise, or a pick. */
static bool streams(const ladle_plan *r) {
  if (r->ninputs != 1) return false;
  switch (r->kind) {
    case LADLE_NODE_FILTER:
      return r->nexprs == 1 && exec_row_wise(r->exprs[0]) &&
             (r->exprs[0]->type.id == LADLE_TYPE_BOOL || r->exprs[0]->type.id == LADLE_TYPE_NULL) &&
             r->inputs[0]->schema.n == r->schema.n;
    case LADLE_NODE_PROJECT:
      return true;
    case LADLE_NODE_SELECT:
    case LADLE_NODE_WITH_COLUMNS: {
      bool rows = r->kind == LADLE_NODE_WITH_COLUMNS; /* a select of single values is one row */
      for (size_t i = 0; i < r->nexprs; i++) {
        if (r->exprs[i]->has_agg || r->exprs[i]->has_window) return false;
        rows |= !r->exprs[i]->scalar;
      }
      return rows && r->nexprs > 0;
    }
    default:
      return false;
  }
}

/* Whether the chain node[0..n) (top first) may run as a pipeline: above its
 * lowest filter or join (either changes the height) nothing may depend on
 * the column's height, nor may the sink's expressions (sink, nsink) when
 * there is one. */
static bool chain_fits(const ladle_plan *const *node, size_t n, ladle_bexpr *const *sink,
                       size_t nsink, ladle_bexpr *const *sink2, size_t nsink2) {
  size_t f = n; /* the lowest filter or join, counted from the top */
  for (size_t i = n; i-- > 0 && f == n;)
    if (node[i]->kind == LADLE_NODE_FILTER || node[i]->kind == LADLE_NODE_JOIN) f = i;
  if (f == n) return true;
  for (size_t i = 0; i < f; i++)
    if (any_uses_height(node[i]->exprs, node[i]->nexprs)) return false;
  return !any_uses_height(sink, nsink) && !any_uses_height(sink2, nsink2);
}

/* The node under group_by p's chain of streaming nodes, which then run
 * morsel by morsel into its partial step; NULL where p does not run so. */
static const ladle_plan *group_by_source(const ladle_plan *p) {
  const ladle_plan *node[CHAIN_MAX];
  size_t n = 0;
  const ladle_plan *r = p->inputs[0];
  for (; streams(r); r = r->inputs[0]) {
    if (n == CHAIN_MAX) return NULL;
    node[n++] = r;
  }
  if (n == 0 || !chain_fits(node, n, p->keys, p->nkeys, p->exprs, p->nexprs)) return NULL;
  return r;
}

/* Whether physical node pn streams inside a pipeline: its logical node
 * does, and no rewrite of its own needs the whole table (a late read, a
 * deferral); or it is a join that probes with one side's morsels, or (where
 * joins stream: sj) a predicate transfer's SEMI_FILTER, which probes the
 * keys its join's build side fed it. */
static bool pn_streams(const ladle_pnode *pn, int sj) {
  if (pn->pipelined) return false;
  if (pn->op == LADLE_POP_JOIN) return pn->probe >= 0 && !pn->stream_src && !ladle_pnode_marks(pn);
  if (pn->op == LADLE_POP_SEMI_FILTER) return sj > 0 && pn->semi == LADLE_SEMI_TRANSFER;
  if (pn->ninputs != 1) return false;
  switch (pn->op) {
    case LADLE_POP_FILTER:
      return pn->late == NULL && !pn->defer && streams(pn->lp);
    case LADLE_POP_PROJECT:
    case LADLE_POP_PROJECTION:
      return streams(pn->lp);
    default:
      return false;
  }
}

/* A SEMI_FILTER's logical node is the one it sits under: in a chain it
 * stands as a filter that evaluates nothing (it changes the height). */
static const ladle_plan semi_cut = {.kind = LADLE_NODE_FILTER};

static const ladle_plan *chain_lp(const ladle_pnode *pn) {
  return pn->op == LADLE_POP_SEMI_FILTER ? &semi_cut : pn->lp;
}

/* The node under pn in its chain (a join's probe side). */
static ladle_pnode *stream_in(const ladle_pnode *pn) {
  return pn->inputs[ladle_pnode_stream_input(pn)];
}

/* Whether chain[from..n) has a join. */
static bool chain_joins(ladle_pnode *const *chain, size_t from, size_t n) {
  for (size_t i = from; i < n; i++)
    if (chain[i]->op == LADLE_POP_JOIN) return true;
  return false;
}

/* A late filter at the bottom r of a chain lps[0..n) may be made row group
 * by row group where the chain would fit with the filter in it. */
static void late_source(ladle_pnode *r, const ladle_plan **lps, size_t n, ladle_bexpr *const *sink,
                        size_t nsink, ladle_bexpr *const *sink2, size_t nsink2) {
  if (r->op == LADLE_POP_FILTER && r->late != NULL && n < CHAIN_MAX) {
    lps[n] = r->lp;
    r->stream_src = chain_fits(lps, n + 1, sink, nsink, sink2, nsink2);
  }
}

/* A chain chain[0..n) whose lowest node is a streamed join right over a
 * Parquet scan (its source) ends above that join instead, which becomes the
 * pipeline's made source: it decodes each row group's probe keys, probes,
 * and reads the other columns at the matched rows only (op_join.c). The
 * join's probe keys must be the scan's columns. Returns the new n. */
static size_t join_as_source(ladle_pnode **chain, size_t n) {
  ladle_pnode *j = chain[n - 1];
  if (j->op != LADLE_POP_JOIN || j->probe < 0) return n;
  const ladle_pnode *in = j->inputs[j->probe];
  if (in->op != LADLE_POP_SCAN_PARQUET || in->late != NULL || in->dict != NULL) return n;
  ladle_bexpr *const *pk = j->probe == 0 ? j->lp->keys : j->lp->rkeys;
  for (size_t k = 0; k < j->lp->nkeys; k++)
    if (pk[k]->kind != LADLE_EX_COL) return n;
  j->stream_src = true;
  return n - 1;
}

/* A group-by's pipeline (GROUP_BY_FINAL g over its partial step) carried on
 * down through the streaming nodes under its source, joins among them, as
 * far as the chain fits with the group-by's expressions as its sink; and a
 * group-by with no pipeline whose input is a streaming join given one. */
static void extend_group_by(ladle_pnode *g, int sj) {
  const ladle_pnode *part = g->inputs[0];
  while (part->op == LADLE_POP_EXCHANGE) part = part->inputs[0];
  if (part->op != LADLE_POP_GROUP_BY_PARTIAL) return;
  const ladle_plan *lp = g->lp;
  ladle_pnode *chain[CHAIN_MAX];
  const ladle_plan *lps[CHAIN_MAX];
  size_t n = 0;
  ladle_pnode *r = part->inputs[0];
  if (g->source != NULL) {
    for (; r != g->source && n < CHAIN_MAX; r = stream_in(r)) {
      chain[n] = r;
      lps[n++] = chain_lp(r);
    }
    if (r != g->source) return;
  }
  size_t had = n;
  for (; n < CHAIN_MAX && pn_streams(r, sj); r = stream_in(r)) {
    chain[n] = r;
    lps[n] = chain_lp(r);
    if (!chain_fits(lps, n + 1, lp->keys, lp->nkeys, lp->exprs, lp->nexprs)) break;
    n++;
  }
  /* no pipeline before: only through a join (a projection or filter alone
   * over a table gains nothing from it) */
  if (n == had || (had == 0 && !chain_joins(chain, had, n))) return;
  /* (the join at the bottom of a pipeline that already had one made it) */
  size_t m = join_as_source(chain, n);
  for (size_t i = had; i < m; i++) chain[i]->pipelined = true;
  if (m < n) {
    g->source = chain[m];
    return;
  }
  ladle_pnode *below = stream_in(chain[n - 1]);
  g->source = below;
  late_source(below, lps, n, lp->keys, lp->nkeys, lp->exprs, lp->nexprs);
}

/* A semi or anti join streamed into marks (ladle_pnode_marks): its right
 * side's pipeline, the chain of streaming nodes under it that fits with the
 * right keys as its sink, ends in the join's sink (op_join.c); j->source is
 * the node whose output the pipeline reads (the right input itself where
 * nothing streams: its table's partitions, or a late filter's row groups). */
static void extend_mark_join(ladle_pnode *j, int sj) {
  const ladle_plan *lp = j->lp;
  ladle_pnode *chain[CHAIN_MAX];
  const ladle_plan *lps[CHAIN_MAX];
  size_t n = 0;
  ladle_pnode *r = j->inputs[1];
  for (; n < CHAIN_MAX && pn_streams(r, sj); r = stream_in(r)) {
    chain[n] = r;
    lps[n] = chain_lp(r);
    if (!chain_fits(lps, n + 1, lp->rkeys, lp->nkeys, NULL, 0)) break;
    n++;
  }
  size_t m = n > 0 ? join_as_source(chain, n) : 0;
  for (size_t i = 0; i < m; i++) chain[i]->pipelined = true;
  if (m < n) {
    j->source = chain[m];
    return;
  }
  ladle_pnode *below = n > 0 ? stream_in(chain[n - 1]) : j->inputs[1];
  j->source = below;
  late_source(below, lps, n, lp->rkeys, lp->nkeys, NULL, 0);
}

/* Pipelines into a collected table: under any node, a chain of two or more
 * streaming nodes runs morsel by morsel from the node below it, with no
 * table between them (one node alone already runs per morsel; a join alone
 * does not, and streams its probe side alone); and the group-by pipelines
 * carried on down through joins. The inputs a chain's joins build from are
 * planned as any other node. */
static void plan_pipelines(ladle_pnode *pn, bool *seen, size_t nseen, int sj) {
  if (pn->id < 1 || (size_t)pn->id > nseen || seen[pn->id - 1]) return;
  seen[pn->id - 1] = true;
  if (pn->op == LADLE_POP_GROUP_BY_FINAL) extend_group_by(pn, sj);
  if (ladle_pnode_marks(pn)) extend_mark_join(pn, sj);
  if (pn_streams(pn, sj)) {
    ladle_pnode *chain[CHAIN_MAX];
    const ladle_plan *lps[CHAIN_MAX];
    size_t n = 0;
    for (ladle_pnode *r = pn; n < CHAIN_MAX && pn_streams(r, sj); r = stream_in(r)) {
      chain[n] = r;
      lps[n++] = chain_lp(r);
    }
    /* a chain through a join that does not fit whole may fit down to one
     * of its lower nodes (the rest may make a chain of their own) */
    if (chain_joins(chain, 0, n))
      while (n > 0 && !chain_fits(lps, n, NULL, 0, NULL, 0)) n--;
    bool join = chain_joins(chain, 0, n);
    if ((n >= 2 || (n == 1 && join)) && chain_fits(lps, n, NULL, 0, NULL, 0)) {
      /* (a join alone keeps streaming its scan: as the source it would be no
       * pipeline's) */
      ladle_pnode *below = stream_in(chain[n - 1]);
      size_t m = n >= 2 ? join_as_source(chain, n) : n;
      for (size_t i = 0; i < m; i++) chain[i]->pipelined = true;
      pn->source = m < n ? chain[m] : below;
      if (m == n) late_source(below, lps, n, NULL, 0, NULL, 0);
    }
  }
  for (size_t i = 0; i < pn->ninputs; i++) plan_pipelines(pn->inputs[i], seen, nseen, sj);
}

/* Whether WITH_COLUMNS p can hand its input's view-only string columns
 * on (ladle_column_view_only): none of its expressions reads a string. */
static bool passes_views(const ladle_plan *p) {
  if (p->kind != LADLE_NODE_WITH_COLUMNS) return false;
  const ladle_schema *in = &p->inputs[0]->schema;
  bool *read = calloc(LADLE_MAX(in->n, 1), sizeof *read);
  if (read == NULL) return false;
  for (size_t i = 0; i < p->nexprs; i++) ladle_exec_mark_columns(p->exprs[i], read, in->n);
  bool ok = true;
  for (size_t c = 0; c < in->n && ok; c++)
    ok = !read[c] || (in->types[c].id != LADLE_TYPE_STRING && in->types[c].id != LADLE_TYPE_BINARY);
  free(read);
  return ok;
}

/* ------------------------------------------------------------------ the walk */

static ladle_pnode *plan_node(planner *P, const ladle_plan *p, const want *w);

static bool pending_at(const planner *P, const ladle_plan *parent, size_t input) {
  for (size_t k = 0; k < P->npend; k++)
    if (P->pend[k].parent == parent && P->pend[k].input == input && !P->pend[k].used) return true;
  return false;
}

/* Input i of p, planned with w, under the SEMI_FILTERs pending for it. */
static ladle_pnode *plan_input(planner *P, const ladle_plan *p, size_t i, const want *w) {
  ladle_pnode *c = plan_node(P, p->inputs[i], w);
  for (size_t k = 0; c != NULL && k < P->npend; k++) {
    pending *q = &P->pend[k];
    if (q->parent != p || q->input != i || q->used) continue;
    q->semi->inputs[0] = c;
    q->semi->schema = c->schema;
    q->semi->dist = c->dist;
    q->used = true;
    c = q->semi;
  }
  return c;
}

static ladle_pnode *exchange(planner *P, ladle_pnode *in, ladle_exchange_kind kind,
                             ladle_bexpr *const *keys, size_t nkeys) {
  if (in == NULL) return NULL;
  ladle_pnode *x = pn_new(P, LADLE_POP_EXCHANGE, in->lp, 1);
  if (x == NULL) return NULL;
  x->schema = in->schema;
  x->inputs[0] = in;
  x->xkind = kind;
  x->xkeys = keys;
  x->xnkeys = nkeys;
  x->dist = kind == LADLE_EXCHANGE_BROADCAST ? LADLE_DIST_REPLICATED : LADLE_DIST_SHARDED;
  /* rows on every rank already: hashing them to their ranks would give each
   * rank a copy from every rank; each keeps its own part instead */
  x->xlocal = (kind == LADLE_EXCHANGE_HASH || kind == LADLE_EXCHANGE_GATHER) &&
              in->dist == LADLE_DIST_REPLICATED;
  return x;
}

/* Below a node that needs every row of a key on one rank (or every row on
 * every rank): the exchange, unless there is one rank or the rows are on
 * every rank already. */
static ladle_pnode *exchange_for(planner *P, ladle_pnode *in, ladle_exchange_kind kind,
                                 ladle_bexpr *const *keys, size_t nkeys) {
  if (in == NULL || P->o->ranks <= 1 || in->dist == LADLE_DIST_REPLICATED) return in;
  return exchange(P, in, kind, keys, nkeys);
}

/* Whether e needs rows other than its own only through windows (over)
 * partitioned by the same plain columns: the first window's keys in *keys
 * (*nk of them), every later one compared. False for an aggregation, len or
 * rank outside a window, is_in against a column, or windows by other keys. */
static bool window_keys(const ladle_bexpr *e, ladle_bexpr *const **keys, size_t *nk) {
  if (!e->has_agg && !e->has_window) return true; /* row-wise below here */
  if (e->kind == LADLE_EX_OVER) {
    size_t k = e->nargs - 1;
    if (k == 0) return false;
    for (size_t i = 1; i < e->nargs; i++)
      if (e->args[i]->kind != LADLE_EX_COL || e->args[i]->type.id == LADLE_TYPE_LIST ||
          e->args[i]->type.id == LADLE_TYPE_CATEGORICAL)
        return false; /* hash_partition takes neither */
    if (*keys == NULL) {
      *keys = e->args + 1;
      *nk = k;
      return true;
    }
    if (*nk != k) return false;
    for (size_t i = 0; i < k; i++)
      if ((*keys)[i]->col != e->args[i + 1]->col) return false;
    return true;
  }
  if (e->kind == LADLE_EX_AGG || e->kind == LADLE_EX_LEN || e->kind == LADLE_EX_RANK ||
      e->kind == LADLE_EX_CUM || (e->kind == LADLE_EX_FUNC && e->op == LADLE_FN_IS_IN))
    return false;
  for (size_t i = 0; i < e->nargs; i++)
    if (!window_keys(e->args[i], keys, nk)) return false;
  return true;
}

/* The column e reads as it is (through aliases), or -1. */
static int64_t plain_col(const ladle_bexpr *e) {
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  return e->kind == LADLE_EX_COL ? e->col : -1;
}

static size_t hash_parted(const ladle_pnode *pn, int64_t *cols, const ladle_pnode **cond);
static ladle_pnode *skip_if(ladle_pnode *x, bool parted, const ladle_pnode *cond);

/* Whether in's rows are hash-partitioned (as hash_parted says, under *cond)
 * by columns that are all plain keys of group-by p: equal keys, one rank. */
static bool grouped_by(const ladle_pnode *in, const ladle_plan *p, const ladle_pnode **cond) {
  int64_t cols[LADLE_SEMI_MAX_KEYS];
  size_t n = hash_parted(in, cols, cond);
  for (size_t i = 0; i < n; i++) {
    bool key = false;
    for (size_t k = 0; k < p->nkeys && !key; k++) key = plain_col(p->keys[k]) == cols[i];
    if (!key) return false;
  }
  return n > 0;
}

static ladle_pnode *plan_group_by(planner *P, const ladle_plan *p, const want *w) {
  bool reduced = pending_at(P, p, 0); /* a semi-join reduction cuts its input */
  /* keys computed over every row (an aggregation or window in them): with
   * several ranks every rank takes all rows, and groups them all */
  bool keys_whole = P->o->ranks > 1 && !exprs_row_wise(p->keys, p->nkeys);
  /* the column kernels group a whole partition at once */
  bool splits = !P->o->columns && ladle_exec_group_by_splits(p, P->o->ranks);
  const ladle_plan *src = splits && !reduced && !keys_whole ? group_by_source(p) : NULL;
  /* no rewrite may sit inside the pipeline (it would not run there) */
  for (const ladle_plan *r = p; src != NULL && r != src; r = r->inputs[0])
    if (pending_at(P, r, 0) || (r != p && r->kind == LADLE_NODE_CACHE)) src = NULL;
  ladle_pnode *top = pn_new(P, splits ? LADLE_POP_GROUP_BY_FINAL : LADLE_POP_GROUP_BY, p, 1);
  if (top == NULL) return NULL;
  top->views = w->views;
  top->partial = splits;
  want none = {NULL, false, false};
  ladle_pnode *in;
  if (src != NULL) {
    /* the chain between the group-by and its source runs pipelined */
    ladle_pnode *chain_top = NULL, *prev = NULL;
    const ladle_plan *r = p->inputs[0];
    for (; r != src; r = r->inputs[0]) {
      ladle_pop op = r->kind == LADLE_NODE_FILTER    ? LADLE_POP_FILTER
                     : r->kind == LADLE_NODE_PROJECT ? LADLE_POP_PROJECT
                                                     : LADLE_POP_PROJECTION;
      ladle_pnode *c = pn_new(P, op, r, 1);
      if (c == NULL) return NULL;
      c->pipelined = true;
      if (prev != NULL)
        prev->inputs[0] = c;
      else
        chain_top = c;
      prev = c;
    }
    ladle_pnode *s = plan_node(P, src, &none);
    if (s == NULL) return NULL;
    prev->inputs[0] = s;
    for (ladle_pnode *c = chain_top; c != s; c = c->inputs[0]) c->dist = s->dist;
    top->source = s;
    in = chain_top;
  } else {
    in = plan_input(P, p, 0, &none);
    if (keys_whole) in = exchange_for(P, in, LADLE_EXCHANGE_BROADCAST, NULL, 0);
  }
  if (in == NULL) return NULL;
  ladle_exchange_kind xk = p->nkeys > 0 ? LADLE_EXCHANGE_HASH : LADLE_EXCHANGE_BROADCAST;
  bool replicated = in->dist == LADLE_DIST_REPLICATED || (P->o->ranks > 1 && p->nkeys == 0);
  /* rows partitioned by some of the key columns already (a join below that
   * hashed its sides by them): the rows of each group are on one rank */
  const ladle_pnode *cond = NULL;
  bool parted = P->o->copartition && src == NULL && !keys_whole && xk == LADLE_EXCHANGE_HASH &&
                grouped_by(in, p, &cond);
  if (splits) {
    ladle_pnode *part = pn_new(P, LADLE_POP_GROUP_BY_PARTIAL, p, 1);
    if (part == NULL) return NULL;
    part->inputs[0] = in;
    part->dist = in->dist;
    in = skip_if(exchange_for(P, part, xk, p->keys, p->nkeys), parted, cond);
  } else {
    in = skip_if(exchange_for(P, in, xk, p->keys, p->nkeys), parted, cond);
  }
  top->inputs[0] = in;
  top->dist = replicated ? LADLE_DIST_REPLICATED : LADLE_DIST_SHARDED;
  return in ? top : NULL;
}

/* Whether join p's keys allow a predicate transfer: one key column on each
 * side, no null equality, not the column kernels. With several ranks the
 * feeding side's rows are gathered from every rank first (op_join.c
 * feed_table). */
static bool transfer_keys(const planner *P, const ladle_plan *p) {
  return !P->o->columns && p->nkeys == 1 && !p->join.nulls_equal &&
         p->keys[0]->kind == LADLE_EX_COL && p->rkeys[0]->kind == LADLE_EX_COL;
}

/* Whether join p may take a predicate transfer either way: an inner join
 * whose keys allow one. */
static bool transfer_fits(const planner *P, const ladle_plan *p) {
  return transfer_keys(P, p) && p->join.how == LADLE_JOIN_INNER;
}

/* A transfer from join p's side `from` (base: the rows of the table under
 * it) into its other side, where that side's key column enters below a join:
 * *t the pending SEMI_FILTER (t->semi NULL when the column's path does not
 * allow one), pn->feeds it. false: out of memory. */
static bool plan_transfer(planner *P, const ladle_plan *p, ladle_pnode *pn, size_t from,
                          int64_t base, pending *t) {
  const ladle_plan *parent = p;
  size_t input = 1 - from;
  ladle_bexpr *const *fk = from == 1 ? p->rkeys : p->keys; /* the feeding side's */
  ladle_bexpr *const *tk = from == 1 ? p->keys : p->rkeys;
  int64_t col = tk[0]->col;
  ladle_dtype kt = p->inputs[from]->schema.types[fk[0]->col];
  /* on one rank the cut pays only below a join (the join itself would drop
   * the same rows); across ranks anywhere below the side's exchange: the
   * rows cut never move */
  if (!transfer_path(&parent, &input, &col) && P->o->ranks <= 1) return true;
  const ladle_plan *f = parent->inputs[input];
  /* a deferred join input is cut by the join, later: no transfer there */
  bool *nd = NULL;
  bool deferred =
      parent->kind == LADLE_NODE_JOIN && input < 2 && join_defers(P, parent, input, &nd);
  free(nd);
  if (deferred || P->npend >= PENDING_MAX || (size_t)col >= f->schema.n ||
      !ladle_dtype_equal(f->schema.types[col], kt))
    return true;
  ladle_pnode *sf = pn_new(P, LADLE_POP_SEMI_FILTER, parent, 1);
  if (sf == NULL) return false;
  sf->semi = LADLE_SEMI_TRANSFER;
  sf->from = pn;
  sf->from_side = from;
  sf->nkeys = 1;
  sf->key_col = col;
  sf->from_col = fk[0]->col;
  sf->base_rows = base;
  *t = (pending){parent, input, sf, false};
  pn->feeds = sf;
  return true;
}

/* ------------------------------------------------------------ streamed joins
 *
 * A join streams one side (its probe side) through a pipeline, morsel by
 * morsel, and builds a hash table of the other when the pipeline opens
 * (op_join.c): the big side of a join is then never a table, and the joins,
 * filters and projections over a scan up to a group-by's partial step make
 * one pipeline (TPC-H q5: lineitem's row groups through the joins with the
 * orders of Asia's customers and the suppliers into the partial sums).
 *
 * Chosen by the sides' sizes estimated before running: a side is a probe
 * candidate when it is a chain of filters, projections and streamed joins
 * over a Parquet scan (or, with LADLE_STREAM_JOIN=2, any scan); rows are
 * estimated from the scans, a quarter of them kept by each filter. The left
 * side probes (every join type but a full one, cross or right, in the order
 * the whole join gives: by left row, each one's matches by right row) when
 * it is PROBE_RATIO times the right or more; the right side probes an inner
 * join that promises no order when it is PROBE_RATIO times the left (the
 * order is then the right side's, as Polars' own join gives when the right
 * side is the bigger). Between those the whole join runs, and builds on the
 * side that turns out smaller (TPC-H q12's lineitem filtered to 4% against
 * all of orders), maybe cutting the other by a predicate transfer first. */

/* Whether every one of n expressions gives a single value. */
static bool all_scalar(ladle_bexpr *const *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!e[i]->scalar) return false;
  return true;
}

/* The rows r gives, estimated from the tables under it (-1: not known), and
 * *base the rows of the biggest table under it (before filters): a quarter
 * of its input for a filter; projections, group-bys and the like as their
 * input; an inner join as a key of one side joined to the other's own key,
 * the side with fewer rows underneath (a dimension) keeping the rows of the
 * other that its own filters keep: est(A) * est(B) / min(base A, base B)
 * (TPC-H q9's green parts, a quarter of the parts, keep a quarter of
 * partsupp); a cross join as the product of its sides; a semi, anti or
 * left join as its left; a select of single values as one row. */
static int64_t rows_estimate(const ladle_plan *r, int depth, int64_t *base) {
  int64_t b;
  if (base == NULL) base = &b;
  *base = -1;
  if (depth > 64) return -1;
  switch (r->kind) {
    case LADLE_NODE_SCAN:
      return *base = r->table->num_rows;
    case LADLE_NODE_SCAN_PARQUET:
      return *base = ladle_scan_parquet_rows(r);
    case LADLE_NODE_FILTER: {
      int64_t in = rows_estimate(r->inputs[0], depth + 1, base);
      return in < 0 ? -1 : LADLE_MAX(in / 4, 1);
    }
    case LADLE_NODE_SELECT:
      /* a select of single values only (a global mean) gives one row */
      if (r->ninputs == 1 && r->nexprs > 0 && all_scalar(r->exprs, r->nexprs)) {
        rows_estimate(r->inputs[0], depth + 1, base);
        return 1;
      }
      return r->ninputs == 1 ? rows_estimate(r->inputs[0], depth + 1, base) : -1;
    case LADLE_NODE_WITH_COLUMNS:
    case LADLE_NODE_PROJECT:
    case LADLE_NODE_GROUP_BY:
    case LADLE_NODE_DISTINCT:
    case LADLE_NODE_SORT:
    case LADLE_NODE_CACHE:
      return r->ninputs == 1 ? rows_estimate(r->inputs[0], depth + 1, base) : -1;
    case LADLE_NODE_JOIN: {
      int64_t lb, rb;
      int64_t l = rows_estimate(r->inputs[0], depth + 1, &lb);
      if (r->join.how == LADLE_JOIN_SEMI || r->join.how == LADLE_JOIN_ANTI ||
          r->join.how == LADLE_JOIN_LEFT) {
        *base = lb;
        return l;
      }
      int64_t rr = rows_estimate(r->inputs[1], depth + 1, &rb);
      if (r->join.how == LADLE_JOIN_CROSS && l >= 0 && rr >= 0) {
        /* (TPC-H q22's customers beside their one mean balance) */
        *base = LADLE_MAX(lb, rb);
        double est = (double)l * (double)rr;
        return est >= (double)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)est;
      }
      if (l < 0 || rr < 0 || lb <= 0 || rb <= 0 || r->join.how == LADLE_JOIN_CROSS) return -1;
      *base = LADLE_MAX(lb, rb);
      double est = (double)l * (double)rr / (double)LADLE_MIN(lb, rb);
      return est >= (double)INT64_MAX / 2 ? INT64_MAX / 2 : LADLE_MAX((int64_t)est, 1);
    }
    default:
      return -1;
  }
}

static int join_probe_side(const planner *P, const ladle_plan *p, int depth);

/* The rows estimated of r when r is a probe candidate (see above), else -1:
 * rows_estimate of the whole chain, its joins included (TPC-H q8's lineitem
 * joined to a 1/150 of the parts meets 455k orders: counting the chain as
 * lineitem's 6M rows streamed it into a hash table of all those orders, 28
 * ms at SF1 and 2 threads against 18 when the whole join builds on the
 * 40k rows). */
static int64_t probe_chain_rows(const planner *P, const ladle_plan *r, int depth) {
  const ladle_plan *top = r;
  int top_depth = depth;
  for (; depth < 64; depth++) {
    if (r->kind == LADLE_NODE_SCAN_PARQUET || (r->kind == LADLE_NODE_SCAN && P->o->stream_join > 1))
      return rows_estimate(top, top_depth, NULL);
    if (r->kind == LADLE_NODE_JOIN) {
      int side = join_probe_side(P, r, depth + 1);
      if (side < 0) return -1;
      r = r->inputs[side];
      continue;
    }
    if (!streams(r)) return -1;
    r = r->inputs[0];
  }
  return -1;
}

/* How many times the build side's estimated rows the probe side's must be:
 * where the sides are nearer in size, the whole join chooses its build side
 * by the rows it meets (TPC-H q9's 3.2M rows of lineitem and green parts
 * against all 15M orders: the whole join builds the former). */
enum { PROBE_RATIO = 8 };

/* The same for a semi or anti join marked by its right side (see "marks" in
 * op_join.c): the whole join would materialise the right side and build on
 * the smaller side, so marking pays as soon as the right side is likely the
 * bigger; twice the left's estimate leaves room for the estimates' quarter
 * per filter (TPC-H q4: a quarter's orders, 1/28 of them, are estimated at a
 * quarter; the lineitems received late, 63%, at a quarter too). */
enum { MARK_RATIO = 2 };

/* Whether p's subtree reads an in-memory frame: with several ranks each rank
 * holds its own rows of it, so estimates over it differ from rank to rank, and
 * a plan chosen by them would too (the ranks would then call different
 * collectives). */
static bool reads_local_frame(const ladle_plan *p, int depth) {
  if (p->kind == LADLE_NODE_SCAN || depth > 64) return true;
  for (size_t i = 0; i < p->ninputs; i++)
    if (reads_local_frame(p->inputs[i], depth + 1)) return true;
  return false;
}

/* The side join p probes with when it streams (0 left, 1 right), or -1.
 * With several ranks a streamed join's build side is broadcast and each rank
 * probes with its own rows (plan_join), so the build side must be smaller by
 * the ratio times the ranks it reaches beyond its own: the rows it moves are
 * then fewer than hashing both sides would move. */
static int join_probe_side(const planner *P, const ladle_plan *p, int depth) {
  size_t nk = p->nkeys;
  ladle_join_type how = p->join.how;
  int64_t ratio = PROBE_RATIO * (int64_t)LADLE_MAX(P->o->ranks - 1, 1);
  if (P->o->stream_join == 0 || P->o->columns || nk == 0 || depth > 64 || ladle_join_coalesces(p) ||
      exec_join_reorders(p) || !exprs_row_wise(p->keys, nk) || !exprs_row_wise(p->rkeys, nk) ||
      any_uses_height(p->keys, nk) || any_uses_height(p->rkeys, nk) ||
      (how != LADLE_JOIN_INNER && how != LADLE_JOIN_LEFT && how != LADLE_JOIN_SEMI &&
       how != LADLE_JOIN_ANTI))
    return -1;
  /* with several ranks the choice must be every rank's: estimates from files'
   * footers only */
  if (P->o->ranks > 1 &&
      (reads_local_frame(p->inputs[0], depth) || reads_local_frame(p->inputs[1], depth)))
    return -1;
  /* across ranks a join in the right side's order keeps that side's rows
   * where they are (plan_join): they are no probe side streamed by rank */
  if (P->o->ranks > 1 &&
      (p->join.order == LADLE_JOIN_ORDER_RIGHT || p->join.order == LADLE_JOIN_ORDER_RIGHT_LEFT))
    return -1;
  /* the right side streams an inner join that promises no order, or a semi
   * or anti join (into marks on the left's rows, which keep their order;
   * across ranks the marks are summed bytewise: fewer than 256 ranks) */
  bool marks =
      (how == LADLE_JOIN_SEMI || how == LADLE_JOIN_ANTI) && P->o->mark_join && P->o->ranks < 256;
  if ((how == LADLE_JOIN_INNER && p->join.order == LADLE_JOIN_ORDER_NONE) || marks) {
    int64_t rr = probe_chain_rows(P, p->inputs[1], depth + 1);
    int64_t le = rr >= 0 ? rows_estimate(p->inputs[0], depth + 1, NULL) : -1;
    if (le >= 0 && rr >= (marks ? MARK_RATIO : ratio) * le) return 1;
  }
  int64_t lr = probe_chain_rows(P, p->inputs[0], depth + 1);
  int64_t re = lr >= 0 ? rows_estimate(p->inputs[1], depth + 1, NULL) : -1;
  return re >= 0 && lr >= ratio * re ? 0 : -1;
}

/* The input column (the left side's, for a join) that output column j of a
 * projection or join passes on as it is, or -1. */
static int64_t passed_from(const ladle_plan *lp, size_t j) {
  switch (lp->kind) {
    case LADLE_NODE_PROJECT:
    case LADLE_NODE_WITH_COLUMNS: /* out_map: < 0 an expression */
      return lp->out_map[j];
    case LADLE_NODE_SELECT: {
      if (j >= lp->nexprs) return -1;
      const ladle_bexpr *e = lp->exprs[j];
      while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
      return e->kind == LADLE_EX_COL ? e->col : -1;
    }
    case LADLE_NODE_JOIN: /* a semi or anti join's output is its left side */
      return lp->join.how == LADLE_JOIN_SEMI || lp->join.how == LADLE_JOIN_ANTI ? (int64_t)j
                                                                                : lp->out_map[j];
    default:
      return -1;
  }
}

/* The n partitioning columns `in` of lp's input as lp's output columns in
 * *cols: n, or 0 when one of them is not passed on. */
static size_t parted_out(const ladle_plan *lp, const int64_t *in, size_t n, int64_t *cols) {
  for (size_t k = 0; k < n; k++) {
    int64_t at = -1;
    for (size_t j = 0; at < 0 && j < lp->schema.n; j++)
      if (passed_from(lp, j) == in[k]) at = (int64_t)j;
    if (at < 0) return 0;
    cols[k] = at;
  }
  return n;
}

/* Whether join pn's keys are plain columns of equal types on both sides, so
 * that rows hashed by them (equal types hash alike) leave its output
 * partitioned by its left key columns (`in`). */
static bool plain_keys(const ladle_pnode *pn, int64_t *in) {
  const ladle_plan *lp = pn->lp;
  if (lp->nkeys == 0 || lp->nkeys > LADLE_SEMI_MAX_KEYS) return false;
  for (size_t k = 0; k < lp->nkeys; k++)
    if ((in[k] = plain_col(lp->keys[k])) < 0 ||
        !ladle_dtype_equal(lp->keys[k]->type, lp->rkeys[k]->type))
      return false;
  return true;
}

/* The input under a group-by's exchange (below its partial step). */
static const ladle_pnode *group_by_input(const ladle_pnode *x) {
  const ladle_pnode *in = x->inputs[0];
  return in->op == LADLE_POP_GROUP_BY_PARTIAL ? in->inputs[0] : in;
}

/* Plan-time partitioning across ranks: the output columns (at most
 * LADLE_SEMI_MAX_KEYS, in *cols) whose values every row shares with the rows
 * on its rank only, each row on the rank the backend's hash_partition of
 * those columns gives it, or 0 when that is not known when planning. *cond:
 * NULL, or the JOIN whose run-time exchange must hash its sides for it to
 * hold (exec_state.hashed). A hash exchange by plain columns makes it, and
 * so does a group-by's (its key columns, first in its output); filters, semi
 * filters, caches and projections that pass the columns on keep it, and so
 * does a join whose sides were hashed by its keys or co-partitioned by them
 * (its left key columns; on JOIN exchanges, when it hashes at run time) or
 * whose left rows stay where they are (a streamed probe of the left side, or
 * one taking the right side whole); an exchange skipped (xskip) passes its
 * input's on. */
static size_t hash_parted(const ladle_pnode *pn, int64_t *cols, const ladle_pnode **cond) {
  *cond = NULL;
  if (pn == NULL || pn->dist == LADLE_DIST_REPLICATED) return 0;
  switch (pn->op) {
    case LADLE_POP_GROUP_BY:
    case LADLE_POP_GROUP_BY_FINAL: {
      const ladle_pnode *x = pn->inputs[0];
      size_t nk = pn->lp->nkeys;
      if (x->op != LADLE_POP_EXCHANGE || x->xkind != LADLE_EXCHANGE_HASH || nk == 0 ||
          nk > LADLE_SEMI_MAX_KEYS)
        return 0;
      if (x->xskip) { /* partitioned as its input was: those key columns */
        int64_t in[LADLE_SEMI_MAX_KEYS];
        size_t n = hash_parted(group_by_input(x), in, cond);
        for (size_t i = 0; i < n; i++) {
          cols[i] = -1;
          for (size_t k = 0; k < nk && cols[i] < 0; k++)
            if (plain_col(pn->lp->keys[k]) == in[i]) cols[i] = (int64_t)k;
          if (cols[i] < 0) return 0;
        }
        return n;
      }
      for (size_t k = 0; k < nk; k++) cols[k] = (int64_t)k;
      return nk;
    }
    case LADLE_POP_EXCHANGE:
      /* (above a partial group-by its keys are over the group-by's input) */
      if (pn->xkind != LADLE_EXCHANGE_HASH || pn->xkeep ||
          pn->inputs[0]->op == LADLE_POP_GROUP_BY_PARTIAL)
        return 0;
      if (pn->xskip) return hash_parted(pn->inputs[0], cols, cond);
      if (pn->xnkeys == 0 || pn->xnkeys > LADLE_SEMI_MAX_KEYS) return 0;
      for (size_t k = 0; k < pn->xnkeys; k++)
        if ((cols[k] = plain_col(pn->xkeys[k])) < 0) return 0;
      return pn->xnkeys;
    case LADLE_POP_FILTER:
    case LADLE_POP_SEMI_FILTER:
    case LADLE_POP_CACHE:
      return hash_parted(pn->inputs[0], cols, cond);
    case LADLE_POP_PROJECT:
    case LADLE_POP_PROJECTION: {
      int64_t in[LADLE_SEMI_MAX_KEYS];
      size_t n = hash_parted(pn->inputs[0], in, cond);
      return parted_out(pn->lp, in, n, cols);
    }
    case LADLE_POP_JOIN: {
      const ladle_plan *lp = pn->lp;
      ladle_join_type how = lp->join.how;
      if (ladle_pnode_marks(pn) || (how != LADLE_JOIN_INNER && how != LADLE_JOIN_LEFT &&
                                    how != LADLE_JOIN_SEMI && how != LADLE_JOIN_ANTI))
        return 0;
      int64_t in[LADLE_SEMI_MAX_KEYS];
      size_t n = 0;
      const ladle_pnode *l = pn->inputs[0], *r = pn->inputs[1];
      bool xl = l->op == LADLE_POP_EXCHANGE, xr = r->op == LADLE_POP_EXCHANGE;
      if (pn->copart) {
        /* by the left keys' values: columns only where every key is a plain one */
        if (plain_keys(pn, in)) n = lp->nkeys;
      } else if (xl && xr && l->xkind == LADLE_EXCHANGE_JOIN && r->xkind == LADLE_EXCHANGE_JOIN) {
        /* the run-time choice: partitioned when it hashes (not when it
         * broadcasts a side); a join run otherwise never says so */
        if (pn->probe < 0 && !pn->defer_side[0] && !pn->defer_side[1] && plain_keys(pn, in)) {
          n = lp->nkeys;
          *cond = pn;
        }
      } else if (xl && xr && l->xkind == LADLE_EXCHANGE_HASH && r->xkind == LADLE_EXCHANGE_HASH &&
                 !l->xskip && !r->xskip) {
        if (plain_keys(pn, in)) n = lp->nkeys; /* both sides hashed by the keys */
      } else if (pn->probe == 0 || pn->inputs[1]->dist == LADLE_DIST_REPLICATED) {
        n = hash_parted(pn->inputs[0], in, cond); /* the left rows stay where they are */
      }
      return parted_out(lp, in, n, cols);
    }
    default:
      return 0;
  }
}

/* Whether side's partitioning (plan-time, or under *cond as hash_parted
 * says) is by exactly its join keys, in order (plain columns). */
static bool parted_by(const ladle_pnode *side, ladle_bexpr *const *keys, size_t nk,
                      const ladle_pnode **cond) {
  int64_t cols[LADLE_SEMI_MAX_KEYS];
  size_t n = hash_parted(side, cols, cond);
  if (n == 0 || n != nk) return false;
  for (size_t k = 0; k < nk; k++)
    if (keys[k]->kind != LADLE_EX_COL || keys[k]->col != cols[k]) return false;
  return true;
}

/* Exchange x's rows stay where they are when `parted` (its input already
 * partitioned as the node above needs) under condition `cond` (a JOIN's
 * run-time hash; NULL: always). Returns x. */
static ladle_pnode *skip_if(ladle_pnode *x, bool parted, const ladle_pnode *cond) {
  if (x != NULL && parted && x->op == LADLE_POP_EXCHANGE && x->xkind == LADLE_EXCHANGE_HASH &&
      !x->xkeep && !x->xlocal) {
    x->xskip = true;
    x->xskip_if = cond;
  }
  return x;
}

static ladle_pnode *plan_join(planner *P, const ladle_plan *p, const want *w) {
  ladle_pnode *pn = pn_new(P, LADLE_POP_JOIN, p, 2);
  if (pn == NULL) return NULL;
  pn->views = w->views;
  /* a streamed join defers no side, and takes the rewrites below only from
   * its build side (which runs first, whole) into its probe side */
  pn->probe = join_probe_side(P, p, 0);
  bool streamed = pn->probe >= 0;
  bool *need[2] = {NULL, NULL};
  for (size_t s = 0; s < 2 && !streamed; s++) pn->defer_side[s] = join_defers(P, p, s, &need[s]);
  size_t nk = p->nkeys, mark = P->npend;
  ladle_join_type how = p->join.how;
  int64_t base = -1;
  pending transfer = {NULL, 0, NULL, false};
  /* a predicate transfer: right side first, its keys to the left side's */
  /* (the column kernels run each node whole: none of these rewrites) */
  /* (with several ranks every rank decides alike from the rows of all, and
   * the feeding side's rows are allgathered: op_join.c feed_table) */
  bool tf = transfer_fits(P, p);
  if (tf && pn->probe != 1 && (base = chain_base_rows(p->inputs[1])) >= 0 &&
      chain_filters(P, p, 1)) {
    pn->right_first = true;
    if (!plan_transfer(P, p, pn, 1, base, &transfer)) return NULL;
  }
  /* a semi-join reduction: left side first (as always), its keys to a
   * group-by under the right side */
  /* (a join streamed into marks probes the right side's rows itself) */
  bool marks = ladle_pnode_marks(pn);
  bool fits = pn->probe != 0 && !marks && !P->o->columns && !pn->right_first && nk > 0 &&
              nk <= LADLE_SEMI_MAX_KEYS && !p->join.nulls_equal &&
              (how == LADLE_JOIN_INNER || how == LADLE_JOIN_LEFT || how == LADLE_JOIN_SEMI ||
               how == LADLE_JOIN_ANTI);
  int64_t cols[LADLE_SEMI_MAX_KEYS];
  for (size_t k = 0; fits && k < nk; k++) {
    fits = p->rkeys[k]->kind == LADLE_EX_COL;
    cols[k] = fits ? p->rkeys[k]->col : 0;
  }
  const ladle_plan *g = fits ? sip_target(p->inputs[1], cols, nk) : NULL;
  ladle_pnode *sip = NULL;
  /* the mirror of the transfer above: the left side is the short filtered
   * chain and the right key comes from below a join (TPC-H q2: its 787 brass
   * parts, joined to Europe's suppliers joined to partsupp; the keys cut
   * partsupp's 800,000 rows to 3,148 before they meet the suppliers). The
   * left side runs first anyway (with no transfer above: that one made the
   * right side run first). */
  /* across ranks also a semi, anti or left join's right side: rows whose
   * keys no left row has meet nothing there either (q4's lineitem by its
   * orders of one quarter) */
  bool tf0 = tf || (P->o->ranks > 1 && transfer_keys(P, p) &&
                    (how == LADLE_JOIN_SEMI || how == LADLE_JOIN_ANTI || how == LADLE_JOIN_LEFT));
  if (g == NULL && !pn->right_first && tf0 && pn->probe != 0 && !marks &&
      (base = chain_base_rows(p->inputs[0])) >= 0 && chain_filters(P, p, 0) &&
      !plan_transfer(P, p, pn, 0, base, &transfer))
    return NULL;
  if (g != NULL && P->npend < PENDING_MAX) {
    pn->feeds = NULL;
    sip = pn_new(P, LADLE_POP_SEMI_FILTER, g, 1);
    if (sip == NULL) return NULL;
    sip->semi = LADLE_SEMI_REDUCTION;
    sip->from = pn;
    sip->from_side = 0;
    sip->nkeys = nk;
    for (size_t k = 0; k < nk; k++) sip->keys[k] = g->keys[cols[k]];
    sip->from_keys = p->keys;
    pn->feeds = sip;
  }
  /* the inputs, in the order they run; a rewrite's target is planned after
   * the side that feeds it, so its pending SEMI_FILTER is pushed just before */
  for (size_t i = 0; i < 2; i++) {
    size_t s = pn->right_first ? 1 - i : i;
    want ws = {need[s], pn->defer_side[s], false};
    if (transfer.semi != NULL && s == 1 - transfer.semi->from_side) P->pend[P->npend++] = transfer;
    if (s == 1 && sip != NULL) P->pend[P->npend++] = (pending){g, 0, sip, false};
    pn->inputs[s] = plan_input(P, p, s, &ws);
    if (pn->inputs[s] == NULL) break;
  }
  free(need[0]);
  free(need[1]);
  /* a rewrite whose target the walk did not reach (it cannot: the searches
   * follow the walk) is dropped rather than left dangling */
  for (size_t k = mark; k < P->npend; k++)
    if (!P->pend[k].used && P->pend[k].semi == pn->feeds) pn->feeds = NULL;
  P->npend = mark;
  if (pn->inputs[0] == NULL || pn->inputs[1] == NULL) return NULL;
  /* with several ranks: the sides exchanged by their keys, or the small
   * right side broadcast (at run time, by its size) */
  if (!exprs_row_wise(p->keys, nk) || !exprs_row_wise(p->rkeys, nk)) {
    /* keys over every row of a side: every rank takes both sides whole */
    for (size_t s = 0; s < 2; s++)
      pn->inputs[s] = exchange_for(P, pn->inputs[s], LADLE_EXCHANGE_BROADCAST, NULL, 0);
    if (pn->inputs[0] == NULL || pn->inputs[1] == NULL) return NULL;
  }
  ladle_distribution dl = pn->inputs[0]->dist, dr = pn->inputs[1]->dist;
  bool rbcast = how == LADLE_JOIN_INNER || how == LADLE_JOIN_LEFT || how == LADLE_JOIN_SEMI ||
                how == LADLE_JOIN_ANTI || how == LADLE_JOIN_CROSS;
  pn->dist = dl == LADLE_DIST_REPLICATED && dr == LADLE_DIST_REPLICATED ? LADLE_DIST_REPLICATED
                                                                        : LADLE_DIST_SHARDED;
  /* a join that promises the left side's order (maintain_order="left" or
   * "left_right"; a semi or anti join with any order) keeps the left rows
   * where they are, in their order, and takes the right side whole on every
   * rank: the job's order (rank order) is then the left side's. A hash
   * exchange would interleave the ranks' rows (the workflow's multi-hot
   * Categorify implodes in that order). The mirror for the right side's
   * order ("right", "right_left") of an inner, right or cross join. The
   * other ordered joins (full; left in the right side's order, right in the
   * left's) are ordered by row positions the translator adds. */
  ladle_join_order jo = p->join.order;
  bool lorder = jo == LADLE_JOIN_ORDER_LEFT || jo == LADLE_JOIN_ORDER_LEFT_RIGHT;
  bool rorder = jo == LADLE_JOIN_ORDER_RIGHT || jo == LADLE_JOIN_ORDER_RIGHT_LEFT;
  bool lkeeps =
      (lorder && (how == LADLE_JOIN_INNER || how == LADLE_JOIN_LEFT || how == LADLE_JOIN_CROSS)) ||
      (jo != LADLE_JOIN_ORDER_NONE && (how == LADLE_JOIN_SEMI || how == LADLE_JOIN_ANTI));
  bool rkeeps =
      rorder && (how == LADLE_JOIN_INNER || how == LADLE_JOIN_RIGHT || how == LADLE_JOIN_CROSS);
  /* a streamed join across ranks: its build side broadcast, each rank probing
   * with its own rows of the probe side (its Parquet row groups), which never
   * move; the output is sharded as the probe side is, in its order */
  if (P->o->ranks > 1 && streamed) {
    size_t b = 1 - (size_t)pn->probe;
    pn->inputs[b] = exchange_for(P, pn->inputs[b], LADLE_EXCHANGE_BROADCAST, NULL, 0);
    if (pn->inputs[b] == NULL) return NULL;
    pn->dist = pn->inputs[pn->probe]->dist;
    return pn;
  }
  if (P->o->ranks > 1 && pn->dist == LADLE_DIST_SHARDED && (lkeeps || rkeeps)) {
    size_t b = lkeeps ? 1 : 0; /* the side every rank takes whole */
    pn->inputs[b] = exchange_for(P, pn->inputs[b], LADLE_EXCHANGE_BROADCAST, NULL, 0);
    if (pn->inputs[b] == NULL) return NULL;
    pn->dist = pn->inputs[1 - b]->dist;
    return pn;
  }
  if (P->o->ranks > 1 && pn->dist == LADLE_DIST_SHARDED &&
      !(dr == LADLE_DIST_REPLICATED && rbcast) &&
      !(dl == LADLE_DIST_REPLICATED &&
        (how == LADLE_JOIN_INNER || how == LADLE_JOIN_RIGHT || how == LADLE_JOIN_CROSS))) {
    /* a side already hash-partitioned by its keys stays; the other is hashed
     * to the same deal (hash_partition of equal types gives equal ranks) */
    bool copart =
        how != LADLE_JOIN_CROSS && nk > 0 && nk <= LADLE_SEMI_MAX_KEYS && P->o->copartition;
    for (size_t k = 0; copart && k < nk; k++) {
      ladle_type_id t = p->keys[k]->type.id;
      copart = ladle_dtype_equal(p->keys[k]->type, p->rkeys[k]->type) && t != LADLE_TYPE_LIST &&
               t != LADLE_TYPE_CATEGORICAL;
    }
    /* (partitioned under a condition, a side counts at run time only) */
    const ladle_pnode *lif = NULL, *rif = NULL;
    bool lpart =
        copart && dl != LADLE_DIST_REPLICATED && parted_by(pn->inputs[0], p->keys, nk, &lif);
    bool rpart =
        copart && dr != LADLE_DIST_REPLICATED && parted_by(pn->inputs[1], p->rkeys, nk, &rif);
    bool rep = dl == LADLE_DIST_REPLICATED || dr == LADLE_DIST_REPLICATED;
    bool lnow = lpart && lif == NULL, rnow = rpart && rif == NULL;
    /* both sides partitioned: nothing moves; one side, where no side may be
     * broadcast (a right or full join, or the other side on every rank): the
     * other side hashed to its deal; else the run-time choice (JOIN exchanges)
     * learns which side may stay */
    if ((lnow && rnow) || ((lnow || rnow) && (!rbcast || rep))) {
      pn->copart = true;
      /* (a side partitioned under a condition: its exchange skipped when it holds) */
      if (!lnow)
        pn->inputs[0] =
            skip_if(exchange(P, pn->inputs[0], LADLE_EXCHANGE_HASH, p->keys, nk), lpart, lif);
      if (!rnow)
        pn->inputs[1] =
            skip_if(exchange(P, pn->inputs[1], LADLE_EXCHANGE_HASH, p->rkeys, nk), rpart, rif);
    } else if (how == LADLE_JOIN_CROSS) {
      pn->inputs[1] = exchange(P, pn->inputs[1], LADLE_EXCHANGE_BROADCAST, NULL, 0);
    } else {
      /* a replicated side is cut to each rank's hash part (no move) and the
       * other hashed: the run-time join exchange, which may broadcast the
       * right side from every rank, is for two sharded sides only */
      ladle_exchange_kind xk = rbcast && !rep ? LADLE_EXCHANGE_JOIN : LADLE_EXCHANGE_HASH;
      pn->inputs[0] = exchange(P, pn->inputs[0], xk, p->keys, nk);
      pn->inputs[1] = exchange(P, pn->inputs[1], xk, p->rkeys, nk);
      pn->part_side[0] = lpart && xk == LADLE_EXCHANGE_JOIN;
      pn->part_side[1] = rpart && xk == LADLE_EXCHANGE_JOIN;
      pn->part_if[0] = lif;
      pn->part_if[1] = rif;
      if (xk ==
          LADLE_EXCHANGE_HASH) { /* a side partitioned under a condition stays when it holds */
        skip_if(pn->inputs[0], lpart, lif);
        skip_if(pn->inputs[1], rpart, rif);
      }
    }
    if (pn->inputs[0] == NULL || pn->inputs[1] == NULL) return NULL;
  }
  return pn;
}

static ladle_pnode *plan_node(planner *P, const ladle_plan *p, const want *w) {
  want none = {NULL, false, false};
  ladle_pnode *pn = NULL;
  switch (p->kind) {
    case LADLE_NODE_SCAN:
    case LADLE_NODE_SCAN_PARQUET:
    case LADLE_NODE_SCAN_CSV:
      pn = pn_new(P,
                  p->kind == LADLE_NODE_SCAN           ? LADLE_POP_SCAN
                  : p->kind == LADLE_NODE_SCAN_PARQUET ? LADLE_POP_SCAN_PARQUET
                                                       : LADLE_POP_SCAN_CSV,
                  p, 0);
      if (pn != NULL) pn->views = w->views;
      /* with several ranks each holds its own rows of a scan */
      if (pn != NULL && P->o->ranks > 1) pn->dist = LADLE_DIST_SHARDED;
      return pn;
    case LADLE_NODE_FILTER: {
      pn = pn_new(P, LADLE_POP_FILTER, p, 1);
      if (pn == NULL) return NULL;
      pn->views = w->views;
      pn->need = bools_copy(P, w->need, p->schema.n);
      pn->defer = w->defer;
      /* right over a Parquet scan (not deferred, not cut by a transfer in
       * between): the scan reads the columns the predicate reads, and the
       * filter the others from the files at the rows it keeps (late
       * materialisation, as Polars' reader does) */
      const ladle_plan *in = p->inputs[0];
      if (!w->defer && in->kind == LADLE_NODE_SCAN_PARQUET && in->schema.n == p->schema.n &&
          !pending_at(P, p, 0)) {
        size_t n = p->schema.n, nlate = 0;
        bool *late = calloc(LADLE_MAX(n, 1), sizeof *late);
        if (late == NULL) {
          P->oom = true;
          return NULL;
        }
        ladle_exec_mark_columns(p->exprs[0], late, n); /* read by the predicate, for now */
        for (size_t i = 0; i < n; i++) nlate += (late[i] = !late[i]);
        /* String columns only single-column terms read: the scan evaluates
         * those terms on each chunk's dictionary and hands the filter keep
         * bytes in the column's place; the column itself, when read above, is
         * read late like the others (not with the column kernels: their
         * filter evaluates the predicate whole) */
        bool *dict = P->o->columns ? NULL : malloc(n * sizeof *dict);
        if (dict != NULL && exec_pred_dict_columns(p->exprs[0], n, dict) > 0) {
          for (size_t i = 0; i < n; i++) nlate += dict[i] && !late[i];
          for (size_t i = 0; i < n; i++) late[i] |= dict[i];
          pn->dict = dict;
        } else {
          free(dict);
        }
        if (nlate > 0)
          pn->late = late;
        else
          free(late);
      }
      pn->inputs[0] = plan_input(P, p, 0, &none);
      if (pn->inputs[0] == NULL) return NULL;
      /* a predicate over every row (an aggregation, a window): every rank
       * needs them all, unless its aggregations split (computed across ranks
       * from partial rows: the rows stay) */
      if (!row_wise(p) && P->o->ranks > 1 && !P->o->columns &&
          pn->inputs[0]->dist == LADLE_DIST_SHARDED &&
          ladle_exec_aggs_split(p->exprs, 1, P->o->ranks)) {
        pn->global_aggs = true;
      } else if (!row_wise(p)) {
        pn->inputs[0] = exchange_for(P, pn->inputs[0], LADLE_EXCHANGE_BROADCAST, NULL, 0);
        if (pn->inputs[0] == NULL) return NULL;
      }
      if (pn->late != NULL && pn->inputs[0]->op == LADLE_POP_SCAN_PARQUET) {
        pn->inputs[0]->late = pn->late; /* the scan, nothing between */
        pn->inputs[0]->dict = pn->dict;
        pn->inputs[0]->dict_pred = p->exprs[0];
      } else if (pn->late != NULL) {
        free(pn->late);
        pn->late = NULL;
      }
      if (pn->late == NULL) { /* (a dictionary column is a late one) */
        free(pn->dict);
        pn->dict = NULL;
      }
      pn->dist = pn->inputs[0]->dist;
      return pn;
    }
    case LADLE_NODE_SELECT:
    case LADLE_NODE_WITH_COLUMNS:
    case LADLE_NODE_PROJECT: {
      /* a select of aggregations that split runs as a group_by without keys:
       * its input streams into one partial row a morsel (min, max, counts,
       * first, last, integer sums; on one rank not float sums and means,
       * whose rounding follows Polars' whole-column sum), and with several
       * ranks each rank's partial row is broadcast, not its rows */
      if (p->kind == LADLE_NODE_SELECT && !P->o->columns &&
          ladle_exec_group_by_splits(p, P->o->ranks))
        return plan_group_by(P, p, w);
      bool pick = p->kind == LADLE_NODE_PROJECT;
      pn = pn_new(P, pick ? LADLE_POP_PROJECT : LADLE_POP_PROJECTION, p, 1);
      if (pn == NULL) return NULL;
      pn->views = w->views;
      /* a pick passes the result on; so does a with_columns whose
       * expressions read no string column (its others pass through as they
       * are, and may stay views) */
      want wi = {NULL, false, w->views && (pick || passes_views(p))};
      bool *need = NULL;
      const ladle_plan *f = p->inputs[0];
      if (p->kind != LADLE_NODE_WITH_COLUMNS && f->kind == LADLE_NODE_FILTER) {
        /* a filter's columns the parent does not read are not compacted */
        need = calloc(LADLE_MAX(f->schema.n, 1), sizeof *need);
        if (need == NULL) {
          P->oom = true;
          return NULL;
        }
        if (!pick)
          for (size_t i = 0; i < p->nexprs; i++)
            ladle_exec_mark_columns(p->exprs[i], need, f->schema.n);
        else
          for (size_t i = 0; i < p->schema.n; i++)
            if (p->out_map[i] >= 0 && (size_t)p->out_map[i] < f->schema.n)
              need[p->out_map[i]] = true;
        wi.need = need;
      }
      pn->inputs[0] = plan_input(P, p, 0, &wi);
      free(need);
      if (pn->inputs[0] == NULL) return NULL;
      pn->dist = pn->inputs[0]->dist;
      /* windows by one set of key columns and nothing else over other rows:
       * the rows hashed by those keys (every partition on one rank, its rows
       * in the job's order), the windows computed there, and the rows sent
       * back to the ranks and places they came from (a RETURN exchange: the
       * job's order, Polars' order, and each rank's rows its own again) */
      ladle_bexpr *const *wk = NULL;
      size_t wnk = 0;
      bool by_keys =
          !pick && !row_wise(p) && P->o->ranks > 1 && pn->inputs[0]->dist == LADLE_DIST_SHARDED;
      for (size_t i = 0; by_keys && i < p->nexprs; i++)
        by_keys = window_keys(p->exprs[i], &wk, &wnk);
      if (by_keys && wk != NULL) {
        ladle_pnode *x = exchange(P, pn->inputs[0], LADLE_EXCHANGE_HASH, wk, wnk);
        if (x == NULL) return NULL;
        x->xkeep = true;
        pn->inputs[0] = x;
        pn->dist = LADLE_DIST_SHARDED;
        ladle_pnode *back = exchange(P, pn, LADLE_EXCHANGE_RETURN, NULL, 0);
        if (back == NULL) return NULL;
        back->xfrom = x;
        return back;
      }
      /* aggregations that split, row-wise around them: computed across ranks
       * from partial rows, the rows staying (a select of single values then
       * gives every rank the same row: replicated) */
      if (!pick && !row_wise(p) && P->o->ranks > 1 && !P->o->columns &&
          pn->inputs[0]->dist == LADLE_DIST_SHARDED &&
          ladle_exec_aggs_split(p->exprs, p->nexprs, P->o->ranks)) {
        pn->global_aggs = true;
        if (p->kind == LADLE_NODE_SELECT && p->nexprs > 0 && all_scalar(p->exprs, p->nexprs))
          pn->dist = LADLE_DIST_REPLICATED;
        return pn;
      }
      /* a select of single values that read no row (literals, functions of
       * them): one row, the same on every rank */
      bool lits = p->kind == LADLE_NODE_SELECT && p->nexprs > 0 && row_wise(p);
      for (size_t i = 0; lits && i < p->nexprs; i++) lits = p->exprs[i]->scalar;
      if (lits && P->o->ranks > 1) {
        pn->dist = LADLE_DIST_REPLICATED;
        return pn;
      }
      if (!pick && !row_wise(p)) /* windows, aggregations: over every row */
        pn->inputs[0] = exchange_for(P, pn->inputs[0], LADLE_EXCHANGE_BROADCAST, NULL, 0);
      if (pn->inputs[0] == NULL) return NULL;
      if (!pick && !row_wise(p)) pn->dist = pn->inputs[0]->dist;
      return pn;
    }
    case LADLE_NODE_GROUP_BY:
      return plan_group_by(P, p, w);
    case LADLE_NODE_JOIN:
      return plan_join(P, p, w);
    case LADLE_NODE_SORT: {
      bool topk = p->limit >= 0;
      pn = pn_new(P, topk ? LADLE_POP_TOP_K : LADLE_POP_SORT, p, 1);
      if (pn == NULL) return NULL;
      pn->views = w->views;
      ladle_pnode *in = plan_input(P, p, 0, &none);
      if (in == NULL) return NULL;
      if (!exprs_row_wise(p->exprs, p->nexprs)) /* keys over every row: all on every rank */
        in = exchange_for(P, in, LADLE_EXCHANGE_BROADCAST, NULL, 0);
      if (in == NULL) return NULL;
      if (P->o->ranks > 1 && in->dist != LADLE_DIST_REPLICATED) {
        if (topk) { /* each rank's top k, every rank's gathered, the top k of them */
          ladle_pnode *local = pn_new(P, LADLE_POP_TOP_K, p, 1);
          if (local == NULL) return NULL;
          local->partial = true;
          local->inputs[0] = in;
          in = exchange(P, local, LADLE_EXCHANGE_BROADCAST, NULL, 0);
        } else { /* a sample sort: ranges by sampled splitters, then each sorted */
          in = exchange(P, in, LADLE_EXCHANGE_RANGE, p->exprs, p->nexprs);
          if (in != NULL) in->xfor = p;
        }
        if (in == NULL) return NULL;
      }
      pn->inputs[0] = in;
      pn->dist = in->dist;
      return pn;
    }
    case LADLE_NODE_DISTINCT: {
      pn = pn_new(P, LADLE_POP_DISTINCT, p, 1);
      if (pn == NULL) return NULL;
      pn->views = w->views;
      ladle_pnode *in = plan_input(P, p, 0, &none);
      if (in == NULL) return NULL;
      if (P->o->ranks > 1 && in->dist != LADLE_DIST_REPLICATED) {
        if (p->keep != LADLE_KEEP_NONE) { /* the rank's distinct rows first */
          ladle_pnode *local = pn_new(P, LADLE_POP_DISTINCT, p, 1);
          if (local == NULL) return NULL;
          local->partial = true;
          local->inputs[0] = in;
          local->dist = in->dist;
          in = local;
        }
        in = exchange(P, in, LADLE_EXCHANGE_HASH, NULL, 0); /* by the subset's columns */
        if (in == NULL) return NULL;
        in->xfor = p;
      }
      pn->inputs[0] = in;
      pn->dist = in->dist;
      return pn;
    }
    case LADLE_NODE_EXPLODE: {
      /* row by row: each rank unnests its own rows */
      pn = pn_new(P, LADLE_POP_EXPLODE, p, 1);
      if (pn == NULL) return NULL;
      pn->inputs[0] = plan_input(P, p, 0, &none);
      if (pn->inputs[0] == NULL) return NULL;
      pn->dist = pn->inputs[0]->dist;
      return pn;
    }
    case LADLE_NODE_SLICE:
    case LADLE_NODE_ROW_INDEX: {
      pn = pn_new(P, p->kind == LADLE_NODE_SLICE ? LADLE_POP_SLICE : LADLE_POP_ROW_INDEX, p, 1);
      if (pn == NULL) return NULL;
      pn->views = w->views;
      pn->inputs[0] = plan_input(P, p, 0, &none);
      if (pn->inputs[0] == NULL) return NULL;
      /* a slice of a union runs the union's inputs until it has its rows */
      if (p->kind == LADLE_NODE_SLICE && P->o->ranks <= 1 && p->offset >= 0 && p->length >= 0 &&
          pn->inputs[0]->op == LADLE_POP_UNION && pn->inputs[0]->lp == p->inputs[0])
        pn->inputs[0]->limit = p->offset + p->length;
      pn->dist = pn->inputs[0]->dist;
      return pn;
    }
    case LADLE_NODE_UNION:
    case LADLE_NODE_HCONCAT: {
      bool h = p->kind == LADLE_NODE_HCONCAT;
      pn = pn_new(P, h ? LADLE_POP_HCONCAT : LADLE_POP_UNION, p, p->ninputs);
      if (pn == NULL) return NULL;
      pn->views = w->views;
      pn->dist = LADLE_DIST_REPLICATED;
      for (size_t i = 0; i < p->ninputs; i++) {
        ladle_pnode *c = plan_input(P, p, i, &none);
        /* side by side needs the rows in one order: every rank all of them */
        if (h) c = exchange_for(P, c, LADLE_EXCHANGE_BROADCAST, NULL, 0);
        if (c == NULL) return NULL;
        pn->inputs[i] = c;
        if (c->dist == LADLE_DIST_SHARDED) pn->dist = LADLE_DIST_SHARDED;
      }
      /* a sharded union: an input on every rank already keeps its rows on
       * rank 0 only (else each rank's copy would be in the whole) */
      for (size_t i = 0; !h && pn->dist == LADLE_DIST_SHARDED && i < p->ninputs; i++)
        if (pn->inputs[i]->dist == LADLE_DIST_REPLICATED &&
            (pn->inputs[i] = exchange(P, pn->inputs[i], LADLE_EXCHANGE_GATHER, NULL, 0)) == NULL)
          return NULL;
      return pn;
    }
    case LADLE_NODE_CACHE: {
      for (size_t i = 0; i < P->nmemo; i++)
        if (P->memo[i].lp == p) return P->memo[i].pn;
      if (P->nmemo == P->capmemo) {
        size_t cap = P->capmemo ? P->capmemo * 2 : 4;
        memo *m = realloc(P->memo, cap * sizeof *m);
        if (m == NULL) {
          P->oom = true;
          return NULL;
        }
        P->memo = m;
        P->capmemo = cap;
      }
      pn = pn_new(P, LADLE_POP_CACHE, p, 1);
      if (pn == NULL) return NULL;
      P->memo[P->nmemo++] = (memo){p, pn};
      pn->inputs[0] = plan_node(P, p->inputs[0], &none); /* no rewrite reaches in */
      if (pn->inputs[0] == NULL) return NULL;
      pn->dist = pn->inputs[0]->dist;
      return pn;
    }
  }
  return NULL; /* a node kind the planner does not know */
}

/* Pre-order ids from 1, each node once (CACHE nodes have several parents). */
static void number(ladle_pnode *pn, int *next, ladle_pnode **order) {
  if (pn->id != 0) return;
  pn->id = (*next)++;
  order[pn->id - 1] = pn;
  for (size_t i = 0; i < pn->ninputs; i++) number(pn->inputs[i], next, order);
}

static void pnode_free(ladle_pnode *pn) {
  if (pn->op == LADLE_POP_FILTER) {
    free(pn->need);
    free(pn->late); /* the scan's is the same array */
    free(pn->dict); /* and this */
  }
  free(pn->inputs);
  free(pn);
}

void ladle_pplan_destroy(ladle_pplan *pp) {
  if (pp == NULL) return;
  for (size_t i = 0; i < pp->n; i++) pnode_free(pp->nodes[i]);
  free(pp->nodes);
  free(pp);
}

ladle_status ladle_pplan_build(const ladle_plan *lp, const ladle_pplan_opts *opts,
                               ladle_pplan **out, ladle_error *err) {
  ladle_pplan *pp = calloc(1, sizeof *pp);
  if (pp == NULL) return LADLE_OOM(err, "physical plan");
  pp->ranks = LADLE_MAX(opts->ranks, 1);
  planner P;
  memset(&P, 0, sizeof P);
  P.pp = pp;
  P.o = opts;
  want top = {NULL, false, true};
  pp->root = plan_node(&P, lp, &top);
  free(P.memo);
  ladle_pnode **order = NULL;
  if (pp->root != NULL && !P.oom) order = calloc(LADLE_MAX(pp->n, 1), sizeof *order);
  if (order == NULL) {
    bool unknown = pp->root == NULL && !P.oom;
    ladle_pplan_destroy(pp);
    return unknown ? ladle_err_set(err, LADLE_ENOTSUP,
                                   "physical plan: a plan node kind it "
                                   "does not know")
                   : LADLE_OOM(err, "physical plan");
  }
  int next = 1;
  number(pp->root, &next, order);
  /* nodes made but not reached (none, by construction) are freed here */
  size_t reached = (size_t)(next - 1);
  for (size_t i = 0; i < pp->n; i++)
    if (pp->nodes[i]->id == 0) pnode_free(pp->nodes[i]);
  free(pp->nodes);
  pp->nodes = order;
  pp->n = reached;
  bool *seen = calloc(LADLE_MAX(reached, 1), sizeof *seen);
  if (seen == NULL) {
    ladle_pplan_destroy(pp);
    return LADLE_OOM(err, "physical plan");
  }
  if (!opts->columns) plan_pipelines(pp->root, seen, reached, opts->stream_join);
  free(seen);
  *out = pp;
  return LADLE_OK;
}

/* ------------------------------------------------------------------- explain */

/* The operator's name as the logical plan's text starts it. */
const char *ladle_pnode_name(const ladle_pnode *pn) {
  switch (pn->op) {
    case LADLE_POP_SCAN:
    case LADLE_POP_SCAN_PARQUET:
    case LADLE_POP_SCAN_CSV:
      return "SCAN";
    case LADLE_POP_PROJECTION:
      return pn->lp->kind == LADLE_NODE_SELECT ? "SELECT" : "WITH_COLUMNS";
    default:
      return ladle_pop_name(pn->op);
  }
}

static void names_of(ladle_strbuf *b, const ladle_schema *s, const bool *which, bool value) {
  ladle_strbuf_printf(b, "[");
  bool first = true;
  for (size_t i = 0; i < s->n; i++)
    if (which[i] == value) {
      ladle_strbuf_printf(b, "%s\"%s\"", first ? "" : ", ", s->names[i]);
      first = false;
    }
  ladle_strbuf_printf(b, "]");
}

static void exprs_of(ladle_strbuf *b, ladle_bexpr *const *e, size_t n, const ladle_schema *in) {
  ladle_strbuf_printf(b, "[");
  for (size_t i = 0; i < n; i++) {
    if (i > 0) ladle_strbuf_printf(b, ", ");
    ladle_bexpr_explain(e[i], in, b);
  }
  ladle_strbuf_printf(b, "]");
}

static void explain_node(const ladle_pplan *pp, const ladle_pnode *pn, int depth, bool *seen,
                         ladle_strbuf *b) {
  ladle_strbuf_printf(b, "%*s#%d ", depth * 2, "", pn->id);
  if (seen[pn->id - 1]) { /* a CACHE node's second parent */
    ladle_strbuf_printf(b, "CACHE (shared, runs once: above)\n");
    return;
  }
  seen[pn->id - 1] = true;
  const ladle_plan *p = pn->lp;
  const ladle_schema *in = pn->ninputs > 0 ? pn->inputs[0]->schema : pn->schema;
  switch (pn->op) {
    case LADLE_POP_SEMI_FILTER:
      ladle_strbuf_printf(b, "SEMI_FILTER ");
      if (pn->semi == LADLE_SEMI_REDUCTION) {
        exprs_of(b, (ladle_bexpr *const *)pn->keys, pn->nkeys, in);
        ladle_strbuf_printf(b,
                            " in the keys of #%d's left side (semi-join reduction: at run time, "
                            "when that side has at most 1/32 of these rows and these are "
                            "65,536 or more)",
                            pn->from->id);
      } else {
        ladle_strbuf_printf(b,
                            "[col(\"%s\")] in the keys of #%d's %s side (predicate transfer: "
                            "at run time, when that side kept at most 1/8 of its %lld rows)",
                            in->names[pn->key_col], pn->from->id,
                            pn->from_side == 0 ? "left" : "right", (long long)pn->base_rows);
      }
      break;
    case LADLE_POP_EXCHANGE:
      ladle_strbuf_printf(b, "EXCHANGE %s", ladle_exchange_name(pn->xkind));
      if (pn->xnkeys > 0) {
        ladle_strbuf_printf(b, " by ");
        /* over partial rows: the group-by's keys, bound to the group-by's input */
        const ladle_pnode *c = pn->inputs[0];
        exprs_of(b, pn->xkeys, pn->xnkeys,
                 c->op == LADLE_POP_GROUP_BY_PARTIAL ? &c->lp->inputs[0]->schema : in);
      } else if (pn->xkind == LADLE_EXCHANGE_HASH) {
        ladle_strbuf_printf(b, " by the unique subset");
      }
      if (pn->xkind == LADLE_EXCHANGE_RETURN)
        ladle_strbuf_printf(b, " of #%d (each row back to the rank and place it came from)",
                            pn->xfrom->id);
      if (pn->xskip && pn->xskip_if == NULL)
        ladle_strbuf_printf(b, " [rows stay: already partitioned as needed]");
      else if (pn->xskip)
        ladle_strbuf_printf(b, " [rows stay when #%d hashes its sides: partitioned as needed]",
                            pn->xskip_if->id);
      if (pn->xkind == LADLE_EXCHANGE_JOIN)
        ladle_strbuf_printf(b,
                            " (at run time: the right side broadcast when its rows times "
                            "ranks - 1 are fewer than the left's, in an inner join the left "
                            "side when its rows times ranks - 1 are fewer than the right's, "
                            "else both sides hashed by the keys)");
      if (pn->xkind == LADLE_EXCHANGE_RANGE)
        ladle_strbuf_printf(b,
                            " (splitters sampled from every rank: rank 0 gets the first "
                            "rows)");
      break;
    case LADLE_POP_GROUP_BY_PARTIAL:
      ladle_strbuf_printf(b, "GROUP_BY_PARTIAL per chunk ");
      exprs_of(b, p->keys, p->nkeys, in);
      break;
    case LADLE_POP_GROUP_BY_FINAL:
      ladle_plan_node_text(p, b);
      if (pp->ranks > 1)
        ladle_strbuf_printf(b,
                            ", final step (every rank runs the partial step: the "
                            "exchange is inside it)");
      else if (p->kind == LADLE_NODE_SELECT)
        ladle_strbuf_printf(b, ", final step (one partial row a chunk)");
      else
        ladle_strbuf_printf(b,
                            ", final step (at run time the partial step is turned down when the "
                            "input is under 100,000 rows or four chunks, or has more than "
                            "one group per 8 rows: then the whole group-by)");
      break;
    case LADLE_POP_TOP_K:
      ladle_strbuf_printf(b, "TOP_K%s k=%lld ", pn->partial ? " (each rank's)" : "",
                          (long long)p->limit);
      ladle_plan_node_text(p, b);
      ladle_strbuf_printf(b,
                          " (the top-k kernel when k <= 1/8 of the rows and 2^20, else "
                          "a sort and its first k)");
      break;
    case LADLE_POP_DISTINCT:
      if (pn->partial) ladle_strbuf_printf(b, "(each rank's) ");
      ladle_plan_node_text(p, b);
      break;
    default:
      ladle_plan_node_text(p, b);
  }
  if (pn->op == LADLE_POP_FILTER && pn->need != NULL) {
    ladle_strbuf_printf(b, " compact=");
    names_of(b, pn->schema, pn->need, true);
  }
  if (pn->op == LADLE_POP_FILTER && pn->late != NULL) {
    ladle_strbuf_printf(b, " late=");
    names_of(b, pn->schema, pn->late, true);
    ladle_strbuf_printf(b, " (read from the files at the kept rows)");
  }
  if (pn->op == LADLE_POP_FILTER && pn->dict != NULL) {
    ladle_strbuf_printf(b, " dictionary=");
    names_of(b, pn->schema, pn->dict, true);
    ladle_strbuf_printf(b, " (their terms evaluated by the scan on each chunk's dictionary)");
  }
  if (pn->op == LADLE_POP_SCAN_PARQUET && pn->late != NULL) {
    ladle_strbuf_printf(b, " reads ");
    names_of(b, pn->schema, pn->late, false);
    ladle_strbuf_printf(b, " (the rest late, for #%d)", pn->id - 1);
    if (pn->dict != NULL) {
      ladle_strbuf_printf(b, " and the terms of #%d on ", pn->id - 1);
      names_of(b, pn->schema, pn->dict, true);
      ladle_strbuf_printf(b, " through their dictionaries");
    }
  }
  if (pn->op == LADLE_POP_FILTER && pn->defer)
    ladle_strbuf_printf(b,
                        " deferred (its input and kept rows go to the join, which gathers "
                        "the other columns at its output rows)");
  if (pn->xlocal)
    ladle_strbuf_printf(b, pn->xkind == LADLE_EXCHANGE_GATHER
                               ? " (its input on every rank: rank 0 keeps it, the others none)"
                               : " (its input on every rank: each keeps its own part)");
  if (pn->global_aggs)
    ladle_strbuf_printf(b,
                        " [its aggregations over every rank's rows: each rank's partial row "
                        "broadcast, the rows staying]");
  if (pn->op == LADLE_POP_JOIN && pn->right_first) ladle_strbuf_printf(b, " right side first");
  if (pn->op == LADLE_POP_JOIN && (pn->part_side[0] || pn->part_side[1])) {
    int k = pn->part_side[0] ? 0 : 1;
    ladle_strbuf_printf(b, " [the %s side already partitioned by the keys", k ? "right" : "left");
    if (pn->part_if[k] != NULL)
      ladle_strbuf_printf(b, " (when #%d hashes its sides)", pn->part_if[k]->id);
    ladle_strbuf_printf(b,
                        ": at run time the other side hashed to its deal, unless broadcasting a "
                        "side moves fewer rows]");
  }
  if (pn->op == LADLE_POP_JOIN && pn->copart)
    ladle_strbuf_printf(
        b, " [sides partitioned alike by the keys: %s]",
        pn->inputs[0]->op == LADLE_POP_EXCHANGE   ? "the left side hashed to the right's deal"
        : pn->inputs[1]->op == LADLE_POP_EXCHANGE ? "the right side hashed to the left's deal"
                                                  : "neither moves");
  if (pn->op == LADLE_POP_JOIN && pn->probe >= 0 && pn->pipelined)
    ladle_strbuf_printf(b, " streams its %s side (#%d built first, then probed morsel by morsel)",
                        pn->probe == 0 ? "left" : "right", pn->inputs[1 - pn->probe]->id);
  if (pn->op == LADLE_POP_JOIN && pn->probe >= 0 && pn->stream_src)
    ladle_strbuf_printf(b,
                        " streams its %s side (#%d built first, then probed row group by row "
                        "group: the keys decoded, the other columns read at the matched rows)",
                        pn->probe == 0 ? "left" : "right", pn->inputs[1 - pn->probe]->id);
  if (ladle_pnode_marks(pn))
    ladle_strbuf_printf(b,
                        " streams its right side into marks (#%d built first; each morsel of "
                        "#%d marks the rows it meets, the %s ones kept)",
                        pn->inputs[0]->id, pn->source != NULL ? pn->source->id : pn->inputs[1]->id,
                        pn->lp->join.how == LADLE_JOIN_SEMI ? "marked" : "unmarked");
  if (pn->op == LADLE_POP_JOIN && pn->feeds != NULL)
    ladle_strbuf_printf(b, " feeds #%d", pn->feeds->id);
  if (pn->op == LADLE_POP_UNION && pn->limit >= 0)
    ladle_strbuf_printf(b, " (inputs in order until %lld rows)", (long long)pn->limit);
  if (pp->ranks > 1 && (pn->op == LADLE_POP_SLICE || pn->op == LADLE_POP_ROW_INDEX) &&
      pn->dist != LADLE_DIST_REPLICATED)
    ladle_strbuf_printf(b, " [global: offsets from an allgather of each rank's row count]");
  if (pp->ranks > 1 && (pn->op == LADLE_POP_SCAN_PARQUET || pn->op == LADLE_POP_SCAN_CSV))
    ladle_strbuf_printf(b, " [this rank's share of the row groups]");
  if (pp->ranks > 1 && pn->op == LADLE_POP_SCAN) ladle_strbuf_printf(b, " [this rank's rows]");
  if (pn->pipelined) ladle_strbuf_printf(b, " [pipelined]");
  if (pn->host) ladle_strbuf_printf(b, " [host: ladle's CPU kernels]");
  if (pn->upload && !pn->host) ladle_strbuf_printf(b, " [read on the host, copied to the device]");
  ladle_strbuf_printf(b, "\n");
  for (size_t i = 0; i < pn->ninputs; i++) explain_node(pp, pn->inputs[i], depth + 1, seen, b);
}

void ladle_pplan_explain(const ladle_pplan *pp, ladle_strbuf *b) {
  bool *seen = calloc(LADLE_MAX(pp->n, 1), sizeof *seen);
  if (seen == NULL) {
    b->failed = true;
    return;
  }
  explain_node(pp, pp->root, 0, seen, b);
  free(seen);
  if (pp->ranks > 1)
    ladle_strbuf_printf(b, "result: %s\n",
                        pp->root->dist == LADLE_DIST_REPLICATED
                            ? "replicated (every rank the whole result)"
                            : "sharded (each rank its rows)");
  /* pipelines: the chains that run morsel by morsel into a sink */
  ladle_strbuf_printf(b, "\npipelines:\n");
  int n = 0;
  for (size_t i = 0; i < pp->n; i++) {
    const ladle_pnode *g = pp->nodes[i];
    bool agg = g->op == LADLE_POP_GROUP_BY_FINAL, marks = ladle_pnode_marks(g);
    if (!agg && !marks && !(g->pipelined && g->source != NULL)) continue;
    const ladle_pnode *part = g->inputs[0];
    while (agg && part->op == LADLE_POP_EXCHANGE) part = part->inputs[0];
    ladle_strbuf_printf(b, "  %d. ", ++n);
    const ladle_pnode *chain[64];
    size_t k = 0;
    const ladle_pnode *r = agg ? part->inputs[0] : marks ? g->inputs[1] : g;
    if (g->source != NULL)
      for (; r != g->source && k < 64; r = stream_in(r)) chain[k++] = r;
    /* a Parquet source may be made by the pipeline, one row group at a time
     * (op_scan_parquet.c decides when it runs: two row groups per thread) */
    bool pq = (r->op == LADLE_POP_SCAN_PARQUET && r->late == NULL) ||
              ((r->op == LADLE_POP_FILTER || r->op == LADLE_POP_JOIN) && r->stream_src);
    ladle_strbuf_printf(b, "#%d %s (its output%s) -> ", r->id, ladle_pnode_name(r),
                        pq ? "; streamed by row group" : "");
    while (k > 0) {
      k--;
      ladle_strbuf_printf(b, "#%d %s%s", chain[k]->id, ladle_pnode_name(chain[k]),
                          k > 0 || agg || marks ? " -> " : "");
    }
    if (marks)
      ladle_strbuf_printf(b, "#%d JOIN %s (marks)\n", g->id,
                          g->lp->join.how == LADLE_JOIN_SEMI ? "semi" : "anti");
    else if (agg)
      ladle_strbuf_printf(b, "#%d GROUP_BY_PARTIAL | %s | #%d GROUP_BY_FINAL\n", part->id,
                          pp->ranks > 1 ? "EXCHANGE" : "(1 rank: no exchange)", g->id);
    else
      ladle_strbuf_printf(b, " | collected\n");
  }
  if (n == 0) ladle_strbuf_printf(b, "  none\n");
  ladle_strbuf_printf(b,
                      "  (every other node runs on its own, each morsel in parallel, "
                      "and materialises its output)\n");
}
