/* physical.h — the physical plan: how the executor runs a bound logical plan.
 *
 * The planner (physical.c) walks the logical plan once before execution and
 * decides every rewrite there, as explicit nodes and fields that explain()
 * prints: which filter columns are compacted, which are read late from the
 * Parquet files, which join inputs are deferred, which joins run their right
 * side first, where a join's keys cut rows early (SEMI_FILTER nodes), where a
 * group-by runs as partial and final steps over a pipeline, where a sort is a
 * top-k, and, with more than one rank, the EXCHANGE nodes between them. The
 * executor (exec.c) only reads it: there are no flags on shared state.
 *
 * Some choices stay adaptive and are made at run time inside the node that
 * owns them, from sizes only known then: a SEMI_FILTER applies only when its
 * source side turned out small; a partial group-by turns itself down when
 * groups are many; a top-k takes the full sort when k is not small. explain()
 * names each condition. */
#ifndef LADLE_PHYSICAL_H
#define LADLE_PHYSICAL_H

#include "../plan/plan.h"

typedef enum ladle_pop {
  LADLE_POP_SCAN,         /* an in-memory table */
  LADLE_POP_SCAN_PARQUET, /* leaves out `late` columns for the filter above */
  LADLE_POP_SCAN_CSV,
  LADLE_POP_FILTER,
  LADLE_POP_PROJECTION, /* SELECT or WITH_COLUMNS */
  LADLE_POP_PROJECT,    /* columns picked and renamed */
  LADLE_POP_GROUP_BY,   /* keys and aggregations over every input row */
  LADLE_POP_GROUP_BY_PARTIAL,
  LADLE_POP_GROUP_BY_FINAL,
  LADLE_POP_JOIN,
  LADLE_POP_SORT,
  LADLE_POP_TOP_K,
  LADLE_POP_SLICE,
  LADLE_POP_DISTINCT,
  LADLE_POP_UNION,
  LADLE_POP_HCONCAT,
  LADLE_POP_CACHE, /* one node, several parents: run once */
  LADLE_POP_ROW_INDEX,
  LADLE_POP_SEMI_FILTER, /* rows whose keys a join's other side has */
  LADLE_POP_EXCHANGE,
  LADLE_POP_EXPLODE /* list columns unnested, row by row */
} ladle_pop;

/* What a SEMI_FILTER is for. */
typedef enum ladle_semi_kind {
  /* a group-by under a join's right side keeps only the groups whose keys the
   * join's left side has: its input rows are cut to those keys */
  LADLE_SEMI_REDUCTION,
  /* a join computes its right side first; when that side kept a small part of
   * its table, its keys cut the left side's rows where the key column enters,
   * below the joins in between */
  LADLE_SEMI_TRANSFER
} ladle_semi_kind;

/* How rows move between ranks. */
typedef enum ladle_exchange_kind {
  LADLE_EXCHANGE_HASH,      /* rows to rank hash(keys) % ranks */
  LADLE_EXCHANGE_BROADCAST, /* every rank gets every row (an allgather) */
  LADLE_EXCHANGE_GATHER,    /* rank 0 gets every row */
  LADLE_EXCHANGE_RANGE,     /* rows to ranks by splitters sampled from the sort keys */
  LADLE_EXCHANGE_JOIN,      /* a join side: hashed by the keys, or the right side broadcast
                               when it is small (decided by its size at run time) */
  LADLE_EXCHANGE_RETURN     /* the rows of a HASH exchange (`xfrom`, which kept how it dealt
                               them: `xkeep`) back to the ranks and places they came from */
} ladle_exchange_kind;

typedef struct ladle_pnode ladle_pnode;
struct ladle_pnode {
  ladle_pop op;
  int id; /* pre-order number, from 1: explain's #id and the executor's slots */
  /* the logical node it runs: expressions, options and output schema (for a
   * SEMI_FILTER or EXCHANGE, the node it sits under) */
  const ladle_plan *lp;
  const ladle_schema *schema; /* output */
  size_t ninputs;
  ladle_pnode **inputs;
  ladle_distribution dist; /* with several ranks: LOCAL and SHARDED are the same here */
  bool views;              /* its output is the query's result: string gathers may keep views */
  /* streams morsel by morsel inside a pipeline (operator.h): into the
   * partial group-by step above it (see GROUP_BY_FINAL.source), or, for the
   * chain's top node when its `source` is set, collected as a table for its
   * parent; no table between the nodes of the chain */
  bool pipelined;
  /* with the column kernels (a GPU engine): runs on the host's CPU kernels
   * instead, over its inputs' results copied to the host; set by
   * exec_columns_check for the nodes above one the device cannot run (the
   * device runs the part of the plan below them) */
  bool host;
  /* with the column kernels: a Parquet or CSV scan (or a late FILTER with the
   * Parquet scan under it) read by the host's CPU kernels and its output
   * copied to the device as one partition (set by exec_columns_check; its
   * inputs are marked host) */
  bool upload;
  /* FILTER */
  bool *need; /* output columns compacted (NULL: all); the rest, unread above, are
                 placeholders */
  bool *late; /* over a SCAN_PARQUET: columns read from the files after the
                 predicate, at the kept rows only (the scan's `late` too) */
  /* a late FILTER that is a pipeline's source: the pipeline may make its
     morsels row group by row group (exec_source), since no node above reads
     the height of its output (which it knows only at the end) */
  bool stream_src;
  bool *dict; /* over a SCAN_PARQUET, late too: String columns whose predicate
                 terms the scan evaluates on each chunk's dictionary (the
                 scan's `dict` too, with dict_pred the predicate); the scan's
                 output holds Boolean keep bytes there (exec_pred_dict_columns) */
  const ladle_bexpr *dict_pred;
  bool defer; /* compacts the join keys only and hands its input and kept rows to
                 the JOIN above, which gathers the other columns at its output rows */
  /* JOIN */
  bool right_first;         /* right side first, for the SEMI_FILTER it feeds */
  bool defer_side[2];       /* which inputs are deferred FILTERs */
  const ladle_pnode *feeds; /* the SEMI_FILTER its first side feeds, or NULL */
  /* the side a JOIN probes with morsel by morsel when pipelined (0 left, 1
   * right; -1: it runs whole): the other side is run and built into a hash
   * table when the pipeline opens, and this side streams through */
  int probe;
  /* GROUP_BY_FINAL, or the top of a collected pipeline: the node whose
   * output the pipeline reads (the nodes between run pipelined), or NULL:
   * the partial step reads its input's table. GROUP_BY and GROUP_BY_FINAL
   * try the partial step at run time either way (op_group_by_partial.c) and
   * fall back to the whole. */
  const ladle_pnode *source;
  bool partial; /* GROUP_BY_FINAL (true) or GROUP_BY (false) */
  /* PROJECTION, FILTER with several ranks: aggregations in the expressions
   * computed across ranks from partial rows and hoisted; the rows stay */
  bool global_aggs;
  /* EXCHANGE hash over a replicated input (every rank holds every row): each
   * rank keeps the rows that hash to it; gather: rank 0 keeps them all and the
   * others none; nothing moves */
  bool xlocal;
  /* UNION under SLICE(offset >= 0, length >= 0): inputs run in order until
   * they hold this many rows (-1: all) */
  int64_t limit;
  /* SEMI_FILTER: the JOIN that feeds it, its side, and the keys */
  ladle_semi_kind semi;
  const ladle_pnode *from;
  size_t from_side;
  size_t nkeys;
  ladle_bexpr *keys[8];          /* over this node's input (REDUCTION) */
  ladle_bexpr *const *from_keys; /* over the feeding side (REDUCTION) */
  int64_t key_col, from_col;     /* TRANSFER: the column here and the side's key */
  int64_t base_rows;             /* TRANSFER: rows of the table under the feeding
                                    side: it feeds when it kept an eighth or less */
  /* EXCHANGE */
  ladle_exchange_kind xkind;
  size_t xnkeys;
  ladle_bexpr *const *xkeys; /* HASH, RANGE, JOIN: over the input */
  const ladle_plan *xfor;    /* the SORT (RANGE: its options) or DISTINCT (HASH without
                                xkeys: its subset) the exchange is for, or NULL */
  /* HASH: keeps how it dealt its rows (exec_state.layouts) for the RETURN
   * exchange above, whose `xfrom` it is */
  bool xkeep;
  const ladle_pnode *xfrom;
  /* HASH: its input is already partitioned as the node above needs (a
   * group-by: by some of its plain key columns; a join side: by exactly its
   * keys), so its rows stay where they are: always (xskip_if NULL), or when
   * the JOIN xskip_if chose to hash its sides at run time (exec_state.hashed;
   * its output is then partitioned by its left keys) */
  bool xskip;
  const ladle_pnode *xskip_if;
  /* JOIN with several ranks: a side already hash-partitioned by its keys
   * (plan-time: a group-by's exchange by the same columns below it, kept
   * through filters, projections and such joins), so that side stays where
   * it is and the other side is hashed to the same deal (or stays too, when
   * it is partitioned alike): no run-time broadcast choice */
  bool copart;
  /* JOIN on JOIN exchanges: which sides are already hash-partitioned by their
   * keys (as copart); the run-time choice may then leave that side where it
   * is and hash only the other (op_join.c join_exchanged_inputs) */
  bool part_side[2];
  /* the JOIN whose run-time hash a side's partitioning depends on (as
   * xskip_if), or NULL */
  const ladle_pnode *part_if[2];
};

enum { LADLE_SEMI_MAX_KEYS = 8 };

typedef struct ladle_pplan {
  ladle_pnode *root;
  ladle_pnode **nodes; /* every node, by id - 1 */
  size_t n, cap;
  int ranks;
} ladle_pplan;

typedef struct ladle_pplan_opts {
  int ranks;      /* EXCHANGE nodes are planned when > 1 */
  bool can_defer; /* the backend gathers from partitions (gather_pieces) */
  bool has_top_k; /* the backend has a top-k kernel */
  /* the query runs on the column kernels alone (exec_state.columns): no
   * pipelines; each node runs whole over one partition on the device */
  bool columns;
  /* joins that may stream their probe side (the backend has join_build):
   * 0 none, 1 where that side is a Parquet scan's chain, 2 over any scan
   * (LADLE_STREAM_JOIN) */
  int stream_join;
  /* semi and anti joins may stream their right side into marks on the
   * left's rows (the backend has join_probe_mark) */
  bool mark_join;
  /* a join whose side is already hash-partitioned by its keys keeps that
   * side where it is (ladle_pnode.copart; LADLE_COPARTITION=0 turns it off) */
  bool copartition;
} ladle_pplan_opts;

/* The input through which pn's morsels arrive inside a pipeline: a JOIN's
 * probe side, else its only input. */
static inline size_t ladle_pnode_stream_input(const ladle_pnode *pn) {
  return pn->op == LADLE_POP_JOIN && pn->probe > 0 ? 1 : 0;
}

/* Whether JOIN pn is a semi or anti join streamed on its right side: the
 * right side's pipeline is its sink's (op_join.c's marks), the left side
 * the hash table. */
static inline bool ladle_pnode_marks(const ladle_pnode *pn) {
  return pn->op == LADLE_POP_JOIN && pn->probe == 1 &&
         (pn->lp->join.how == LADLE_JOIN_SEMI || pn->lp->join.how == LADLE_JOIN_ANTI);
}

ladle_status ladle_pplan_build(const ladle_plan *lp, const ladle_pplan_opts *opts,
                               ladle_pplan **out, ladle_error *err);
void ladle_pplan_destroy(ladle_pplan *pp);
/* The physical plan's text: one line per node, indented, with its rewrites
 * and run-time conditions, then its pipelines. */
void ladle_pplan_explain(const ladle_pplan *pp, ladle_strbuf *b);
const char *ladle_pop_name(ladle_pop op);
/* SCAN for every scan, SELECT or WITH_COLUMNS for a PROJECTION, else the
 * operator's name. */
const char *ladle_pnode_name(const ladle_pnode *pn);
const char *ladle_exchange_name(ladle_exchange_kind kind);

#endif
