/* operator.h — the operator interface.
 *
 * Every physical operator (physical.h's ladle_pop) is one exec_operator,
 * defined in a file of its own (op_*.c, scan_*.c): a `run` that executes the
 * node and materialises its output, pulling its inputs through
 * ladle_exec_node; and, where the operator can take part in a pipeline, a
 * streaming form (one morsel in, one morsel out) or a sink form (consumes a
 * pipeline's morsels, then combines and finalises).
 *
 * A pipeline (pipeline.c) is a source's morsels pushed through a chain of
 * streaming operators into a sink, morsel by morsel, every morsel a task on
 * the engine's pool: nothing between source and sink is materialised as a
 * table. The physical planner decides the pipelines (pnode.pipelined and
 * pnode.source) and explain() prints them.
 *
 * Local state is per morsel rather than per thread: a sink combines its
 * morsels' states in morsel order, which is how ladle keeps the row order
 * Polars promises without a sort; the states are small where it matters (a
 * partial aggregation's groups). Morsels are the source table's partitions,
 * whose size is the backend's choice (ladle_kctx.morsel_rows: small on the
 * CPU; a GPU backend picks large ones). */
#ifndef LADLE_OPERATOR_H
#define LADLE_OPERATOR_H

#include "exec.h"

/* One morsel in, one morsel out; nothing kept across morsels but what open
 * prepared (read-only while morsels run in parallel). */
typedef struct exec_stream_op {
  /* in_need[c] set for each input column c that pn reads to make its outputs
   * `need` (NULL: all of them) */
  void (*needs)(const ladle_pnode *pn, const bool *need, bool *in_need);
  /* state for one run of a pipeline (a compiled predicate); may stay NULL */
  ladle_status (*open)(exec_state *s, const ladle_pnode *pn, void **state, ladle_error *err);
  /* morsel `in` (borrowed) through pn: out->columns (pn's schema, allocated
   * by the caller) get owned columns, placeholders where `need` (NULL: all)
   * leaves a column out, and out->length its rows */
  ladle_status (*morsel)(exec_state *s, const ladle_pnode *pn, const void *state, const bool *need,
                         const ladle_chunk *in, ladle_chunk *out, ladle_error *err);
  void (*close)(void *state);
} exec_stream_op;

/* A pipeline's source: its morsels, either the partitions of a table its node
 * made (`table`), or made one at a time by the pipeline's tasks (`make`): a
 * Parquet scan's row groups decoded into the pipeline instead of into a table
 * first, so that a pipeline over a file holds a few row groups at a time, not
 * the file. */
typedef struct exec_source {
  size_t n;                 /* morsels */
  int64_t rows;             /* their rows in all */
  int64_t first_rows;       /* morsel 0's */
  const ladle_table *table; /* morsel k: table->chunks[k]; NULL: made */
  /* made: morsel k into out->columns (the source node's schema, zeroed by the
   * caller): owned columns, placeholders where need (NULL: all) leaves one
   * out, and out->length. Called from the pipeline's tasks (in parallel), and
   * for morsel 0 from the driver alone, where its own loops run in parallel */
  ladle_status (*make)(exec_state *s, void *ctx, size_t k, const bool *need, ladle_chunk *out,
                       ladle_error *err);
  void *ctx;
  void (*close)(void *ctx);
} exec_source;

/* Consumes a pipeline: each morsel into its own local state (in parallel),
 * then the states combined in morsel order and the output finalised. */
typedef struct exec_sink_op {
  /* state for the pipeline whose morsels are src's and whose rows reach the
   * sink with `in` columns;
   * need[c] (calloc'ed by the caller) set for each column it reads. *state
   * NULL and LADLE_OK: the sink does not apply (the caller collects) */
  ladle_status (*open)(exec_state *s, const ladle_pnode *pn, const exec_source *src,
                       const ladle_schema *in, bool *need, void **state, ladle_error *err);
  /* morsel k's rows (borrowed: a sink keeps what it needs by reference) */
  ladle_status (*consume)(exec_state *s, void *state, size_t k, ladle_chunk *c, ladle_error *err);
  /* asked after the first morsel, consumed alone: false turns the pipeline
   * down, and its output is collected as a table instead (a partial
   * aggregation that meets as many groups as rows) */
  bool (*accepts)(const void *state);
  /* the morsels' states combined in order, then the output */
  ladle_status (*finish)(exec_state *s, void *state, ladle_table **out, ladle_error *err);
  void (*close)(void *state);
} exec_sink_op;

typedef struct exec_operator {
  ladle_pop op;
  /* runs pn: its inputs, then its output as a table; side: what a parent
   * takes besides the table (exec.h) */
  ladle_status (*run)(exec_state *s, const ladle_pnode *pn, exec_side *side, ladle_table **out,
                      ladle_error *err);
  const exec_stream_op *stream; /* NULL: never inside a pipeline */
  const exec_sink_op *sink;     /* NULL: never a pipeline's sink */
  /* pn as a pipeline's made source (exec_source.make), where it can be one
   * now; out->make NULL and LADLE_OK: it cannot (the node is run instead) */
  ladle_status (*source)(exec_state *s, const ladle_pnode *pn, exec_source *out, ladle_error *err);
} exec_operator;

extern const exec_operator exec_op_scan, exec_op_scan_parquet, exec_op_scan_csv, exec_op_filter,
    exec_op_projection, exec_op_project, exec_op_group_by, exec_op_group_by_partial,
    exec_op_group_by_final, exec_op_join, exec_op_sort, exec_op_top_k, exec_op_slice,
    exec_op_distinct, exec_op_union, exec_op_hconcat, exec_op_cache, exec_op_row_index,
    exec_op_semi_filter, exec_op_exchange, exec_op_explode;

/* The operator of a physical node kind. */
const exec_operator *exec_operator_of(ladle_pop op);

/* The one input of pn, run. */
static inline ladle_status exec_input(exec_state *s, const ladle_pnode *pn, ladle_table **in,
                                      exec_side *side, ladle_error *err) {
  return ladle_exec_node(s, pn->inputs[0], in, side, err);
}

/* The morsels of node pn as a pipeline's source: made by the pipeline where
 * pn's operator can (exec_operator.source), else pn run and its table's
 * partitions. exec_source_close releases them. */
ladle_status exec_source_open(exec_state *s, const ladle_pnode *pn, exec_source *out,
                              ladle_error *err);
void exec_source_close(exec_source *src);
/* The source over table t (a reference of its own). */
void exec_source_of_table(const ladle_table *t, exec_source *out);

/* Runs the pipeline whose top streaming node is `top` (pn.pipelined, down to
 * `source`, whose output is the morsels src; top == source: no streaming
 * node) into `sink` for node sink_pn (NULL: the morsels collected into *out
 * as a table of top's schema). *declined: the sink turned the pipeline down,
 * and *out is the collected table instead of the sink's output. src NULL:
 * source is opened here (exec_source_open), after the chain's operators
 * opened, since a join's build may feed a SEMI_FILTER under it; with
 * several ranks a sink then sees one empty morsel rather than none. */
ladle_status exec_pipeline_run(exec_state *s, const ladle_pnode *top, const ladle_pnode *source,
                               const exec_source *src, const exec_sink_op *sink,
                               const ladle_pnode *sink_pn, ladle_table **out, bool *declined,
                               ladle_error *err);

#endif
