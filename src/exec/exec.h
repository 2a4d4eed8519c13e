/* exec.h — the executor's internal state, shared by the node walker (exec.c)
 * and the expression evaluator (eval.c). */
#ifndef LADLE_EXEC_H
#define LADLE_EXEC_H

#include "../backend/backend.h"
#include "../dist/comm.h"
#include "../plan/plan.h"
#include "physical.h"

struct ladle_engine {
  ladle_engine_opts opts;
  ladle_pool *pool;
  const ladle_backend *backend;
  ladle_comm *comm; /* the job's ranks: the caller's (opts.comm) or a one-rank one */
  bool own_comm;    /* created here ("self"), destroyed with the engine */
  ladle_mr *mr;     /* where a query's buffers and scratch come from */
  /* A GPU engine: `backend` is the device's table, and its queries run on
   * the column kernels (exec_state.columns) with buffers from dev_mr on
   * `stream`; `host_backend` (the CPU table) runs what the GPU refuses when
   * the caller asks (ladle_engine_execute_host). A CPU engine: both the CPU
   * table; `columns` set by LADLE_COLUMN_KERNELS=1 runs its queries on the
   * column kernels too, which is how CI tests that path without a GPU. */
  const ladle_backend *host_backend;
  ladle_mr *dev_mr;
  struct exec_dev_cache *dcache; /* scanned columns kept on the device (device.c) */
  void *stream;
  bool columns;
  struct ladle_view_cache *views; /* string-view conversions kept across scans */
  int64_t morsel_rows;
  int64_t queries; /* with several ranks: executions so far (their fingerprints' order) */
  atomic_llong row_groups_read, row_groups_skipped, rows_transferred;
  atomic_llong dict_chunks, dict_chunks_rowwise; /* ladle_engine_stats */
  atomic_llong chunks_split;
  atomic_llong row_groups_streamed;
  atomic_llong partial_rows_passed;
};

struct ladle_result {
  ladle_table *table; /* may hold view-only columns: see ladle_result_plain */
  int threads;        /* the engine's, for work on the result (its export) */
  ladle_mr *mr;       /* the engine's resource (a reference): exports allocate from it */
  /* A GPU engine's result stays on its device: `dev` holds it there (every
   * column), `table` is NULL until something asks for it on the host
   * (ladle_result_plain copies it down once and keeps both). `be` and `k`
   * are the device's table and a context on its stream for those copies
   * and for exports (k.mr a reference, k.pool NULL). */
  ladle_table *dev;
  const ladle_backend *be;
  ladle_kctx k;
  bool sharded; /* this rank's part of a result sharded over several ranks */
};

/* Turns the result's view-only columns (ladle_column.views) into offsets and
 * bytes, once; everything but an export as string views calls it first. */
ladle_status ladle_result_plain(const ladle_result *r, ladle_error *err);
/* A device result's copy on the host, made the first time it is asked for
 * (r->table set; view-only columns left as they are). */
ladle_status ladle_result_host(const ladle_result *r, ladle_error *err);

typedef struct exec_cache_entry {
  const ladle_pnode *node;
  ladle_table *table;
} exec_cache_entry;

/* A scalar subexpression computed once and read by every chunk. */
typedef struct exec_hoisted {
  const ladle_bexpr *e;
  ladle_column col;
  /* NULL, or why computing e failed, for an e in a when/then branch: the
   * error is raised where a row reads e, and not at all if none does */
  ladle_error *failed;
} exec_hoisted;

/* How a HASH exchange that keeps its deal (pn->xkeep) sent its rows: its
 * partition's permutation (input row perm[j] went out j-th, part after
 * part) and the rows it received from each rank (recv, one per rank), for
 * the RETURN exchange that sends them back. */
typedef struct exec_layout {
  ladle_column perm; /* Int64; no buffers: not kept (yet) */
  int64_t *recv;
} exec_layout;

/* One query's run of a physical plan (physical.h). Everything the executor
 * decides is in the plan; the state holds only what runs produce. */
typedef struct exec_state {
  ladle_engine *eng;
  const ladle_backend *be;
  ladle_kctx k;
  const ladle_pplan *pp;
  exec_cache_entry *cache;
  size_t ncache, capcache;
  /* per node id - 1: the table a JOIN's first side hands to the SEMI_FILTER
   * it feeds, while its other side runs (NULL: none, or too big to help) */
  const ladle_table **fed;
  exec_layout *layouts; /* per node id - 1 */
  /* per node id - 1: a JOIN that decided its exchange at run time hashed
   * its sides (a side stayed and the other was hashed to its deal, or both
   * were hashed), so its output is partitioned by its left keys (every rank
   * decides alike) */
  bool *hashed;
  exec_hoisted *hoist; /* a stack; read-only while chunks run in parallel */
  size_t nhoist, caphoist;
  /* the query runs on the column kernels only (a GPU, or the CPU's table
   * under LADLE_COLUMN_KERNELS=1): tables are on the backend's device, one
   * partition each, and the operators take their column-kernel paths
   * (device.c says which nodes and expressions have one) */
  bool columns;
  /* some nodes run on the host (pn->host): the walk switches between the
   * device and the host at their edges (exec.c) */
  bool mixed;
} exec_state;

/* The (file, row group) of each chunk a Parquet scan made, for the late
 * reads of the FILTER above it. */
typedef struct exec_units {
  size_t *file, *rg;
} exec_units;

/* A column of n rows that only holds a place: no buffers, type NULL (a column
 * the parent drops, or one a scan leaves for a filter to read late). */
static inline void exec_placeholder(ladle_column *c, int64_t n) {
  memset(c, 0, sizeof *c);
  c->type = ladle_dtype_make(LADLE_TYPE_NULL);
  c->length = c->null_count = n;
}

/* Whether c may be exec_placeholder's: of type NULL without values (a
 * column of type Null is one too; callers tell them apart by the schema's
 * type where it matters). */
static inline bool exec_is_placeholder(const ladle_column *c) {
  return c->type.id == LADLE_TYPE_NULL && c->owners[1] == NULL;
}

/* A join input that is a FILTER runs deferred: it compacts only the columns
 * the join's keys read, and hands back its input and the rows it kept; the
 * join gathers every other column straight from that input, through the
 * kept rows, for the rows it outputs (a join that keeps 1% of lineitem no
 * longer copies half of lineitem's columns first). */
typedef struct join_defer {
  ladle_table *in; /* NULL: not deferred */
  int64_t *sel, n;
} join_defer;

/* What a parent takes from its input besides the table: a deferred FILTER's
 * input and kept rows (a JOIN), a Parquet scan's units (a late FILTER). */
typedef struct exec_side {
  join_defer *defer;
  exec_units *units;
} exec_side;

/* Runs physical node pn (operator.h) and materialises its output: the walk
 * every operator calls for its inputs. It checks for cancellation and, under
 * LADLE_TRACE, prints the node's rows and time. */
ladle_status ladle_exec_node(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                             exec_side *side, ladle_error *err);

/* ------------------------------------------------- shared helpers (gather.c) */

/* An empty table as one chunk of no rows rather than no chunks, so that the
 * expressions over it are evaluated once, as Polars evaluates them over an
 * empty frame (a strict cast of a literal fails there too). Lists, whose
 * empty column needs an element column, keep no chunks. */
ladle_status exec_empty_chunk(const ladle_schema *schema, ladle_table **out, ladle_error *err);
/* A one-chunk table of schema from whole columns (consumed, also on failure),
 * re-split into morsels. */
ladle_status exec_table_from_columns(exec_state *s, const ladle_schema *schema, ladle_column *cols,
                                     int64_t nrows, ladle_table **out, ladle_error *err);
/* Rows idx of every column of a one-chunk table, in parallel. */
ladle_status exec_gather_columns(exec_state *s, const ladle_column *cols, size_t ncols,
                                 const int64_t *idx, int64_t n, ladle_column *out,
                                 ladle_error *err);

/* A source column of a gather: one whole column, or the pieces of one column
 * across a table's partitions (px != NULL) taken as one. */
typedef struct gather_src {
  const ladle_column *col;
  const ladle_pieces *px;
  bool views; /* a result's column: a string column with views gathers only those */
} gather_src;

/* A table's partitions seen as whole columns without concatenating them:
 * column i is pieces cols[i * nchunks ..] under one piece index. A table of
 * one partition (or a backend without gather_pieces) is combined instead. */
typedef struct piece_table {
  ladle_table *whole; /* combined, or NULL */
  ladle_column *cols;
  ladle_column *views; /* per column: its pieces as one view (length 0: none) */
  size_t nchunks, ncols;
  ladle_pieces px;
} piece_table;

ladle_status exec_pieces_make(exec_state *s, ladle_table *t, piece_table *pt, ladle_error *err);
void exec_pieces_release(piece_table *pt);
gather_src exec_pieces_src(const piece_table *pt, size_t i);
/* A table of n rows whose column c is rows idx[c] of src[c] (idx[c] NULL: rows
 * 0..n-1; or a join's pairs as runs, from_right[c] saying which side), built
 * one morsel partition at a time: (partition, column) pieces are gathered in
 * parallel and become the partitions themselves, so nothing is copied twice. */
ladle_status exec_gather_table(exec_state *s, const ladle_schema *schema, const gather_src *src,
                               const int64_t *const *idx, const ladle_join_runs *runs,
                               const bool *from_right, int64_t n, ladle_table **out,
                               ladle_error *err);
/* Rows idx[0..n) of every column of t, read from its partitions (string
 * columns as views when `views`: a result's columns). */
ladle_status exec_gather_rows(exec_state *s, bool views, ladle_table *t, const int64_t *idx,
                              int64_t n, ladle_table **out, ladle_error *err);
/* Evaluates n expressions over t into whole columns of t's height (scalars
 * broadcast). */
/* A source of fewer partitions than twice the threads (Polars' frames come in
 * chunks of 100k rows and more: TPC-H's 200k parts in 2, its 1.5M orders in
 * 12; a Parquet file of one row group in 1) leaves threads idle in every
 * per-morsel operator: the rows of the slices to cut it into (about a
 * quarter of each thread's share, at least 8192; ladle_table_split), or 0
 * to keep it as it is. */
int64_t exec_split_rows(const exec_state *s, const ladle_table *t);
ladle_status exec_eval_whole(exec_state *s, ladle_bexpr *const *exprs, size_t n,
                             const ladle_table *t, ladle_column *out, ladle_error *err);
/* The same over one morsel c: out[i] of c's length (scalars broadcast); on
 * failure nothing is left in out. */
ladle_status exec_eval_morsel(exec_state *s, ladle_bexpr *const *exprs, size_t n,
                              const ladle_chunk *c, ladle_column *out, ladle_error *err);
/* Rows idx[0..n) (-1: null) of a gather source, whole column or pieces. */
ladle_status exec_gather_src(exec_state *s, const gather_src *g, const int64_t *idx, int64_t n,
                             ladle_column *out, ladle_error *err);

/* Whether e is computed row by row: no aggregation, no window, not a single
 * value. */
static inline bool exec_row_wise(const ladle_bexpr *e) {
  return !e->has_agg && !e->has_window && !e->scalar;
}

/* Scan pn (a SCAN_PARQUET): its `late` columns left out as placeholders, and
 * with units != NULL the chunks' units kept there (the caller frees them). */
ladle_status ladle_exec_scan_parquet(exec_state *st, const ladle_pnode *pn, ladle_table **out,
                                     exec_units *units, ladle_error *err);
/* A Parquet scan's units one at a time, for a pipeline that decodes them
 * itself (operator.h's exec_source): exec_pq_stream_open sets *out and src's
 * counts, or leaves *out NULL when the scan is better read whole (too few row
 * groups for the threads; LADLE_PARQUET_STREAM=0/1 forces either); unit u's
 * columns (need: NULL all; the late ones placeholders, the dictionary terms'
 * columns keep bytes) by exec_pq_stream_unit; a late column k at the unit's
 * rows kept (NULL: its first n) by exec_pq_stream_late (op_scan_parquet.c). */
typedef struct exec_pq_stream exec_pq_stream;
struct exec_source;
ladle_status exec_pq_stream_open(exec_state *st, const ladle_pnode *scan, exec_pq_stream **out,
                                 struct exec_source *src, ladle_error *err);
ladle_status exec_pq_stream_unit(exec_state *st, const exec_pq_stream *m, size_t u,
                                 const bool *need, ladle_chunk *out, ladle_error *err);
ladle_status exec_pq_stream_late(exec_state *st, const exec_pq_stream *m, size_t u, size_t k,
                                 const int64_t *kept, int64_t n, bool views, ladle_column *out,
                                 ladle_error *err);
void exec_pq_stream_close(void *m);
ladle_status ladle_exec_scan_csv(exec_state *st, const ladle_plan *p, ladle_table **out,
                                 ladle_error *err);
/* The columns `late` of a filter's output `out`, read from the Parquet files of
 * `scan` (whose output `in`, of `units`, the filter read) at the rows `kept` per
 * chunk (NULL: all), as views when `views` (op_scan_parquet.c). */
/* A GPU engine's Parquet scan, or late filter over one, decoded on the
 * device (op_scan_parquet.c): open lists the pages of the columns the
 * backend's parquet_decode takes (*out NULL: none, or no such backend; the
 * node is read on the host and copied up); host_part reads the others on the
 * host (the device's columns placeholders), and decode fills the device's
 * columns into t, the host part copied up (one partition). */
/* Whether late filter pn's predicate runs on the device as a FILTER node's
 * does (device.c): then its scan may be decoded there and the filter run over
 * it (exec_pq_device_open). */
bool exec_columns_pred_fits(exec_state *s, const ladle_pnode *pn);
typedef struct exec_pq_device exec_pq_device;
ladle_status exec_pq_device_open(exec_state *st, const ladle_pnode *pn, exec_pq_device **out,
                                 ladle_error *err);
ladle_status exec_pq_device_host_part(exec_state *st, const exec_pq_device *d, ladle_table **out,
                                      ladle_error *err);
ladle_status exec_pq_device_decode(exec_state *st, const exec_pq_device *d, ladle_table *t,
                                   ladle_error *err);
void exec_pq_device_free(exec_pq_device *d);
ladle_status ladle_exec_scan_parquet_late(exec_state *st, const struct ladle_plan *scan,
                                          const exec_units *units, const ladle_table *in,
                                          ladle_table *out, int64_t *const *kept, const bool *late,
                                          bool views, ladle_error *err);

/* Evaluates e over table t, one column per chunk of t (aligned with t's chunks),
 * or a single length-1 column when the expression is scalar (*out_scalar). The
 * caller releases the columns (t->nchunks of them, or 1). */
ladle_status ladle_eval_chunked(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                ladle_column **out_cols, bool *out_scalar, ladle_error *err);
/* Evaluates e over the whole of t as one column: length 1 (scalar), t's rows,
 * or, with groups and !broadcast, one value per group. */
ladle_status ladle_eval_full(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                             ladle_groups *groups, bool broadcast, ladle_column *out,
                             ladle_error *err);
/* Evaluates a row-wise e (no aggregation or window) over one chunk; chunk NULL
 * for an expression that reads no column. */
ladle_status ladle_eval_chunk(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                              ladle_column *out, ladle_error *err);

/* is_between(x, lo, hi, closed) as (x lo_op lo) & (x hi_op hi). */
static inline void exec_between_ops(ladle_closed cl, int *lo_op, int *hi_op) {
  *lo_op = cl == LADLE_CLOSED_BOTH || cl == LADLE_CLOSED_LEFT ? LADLE_OP_GE : LADLE_OP_GT;
  *hi_op = cl == LADLE_CLOSED_BOTH || cl == LADLE_CLOSED_RIGHT ? LADLE_OP_LE : LADLE_OP_LT;
}

/* The column-kernel path (device.c; exec_state.columns): whether plan pp
 * runs there (LADLE_ENOTSUP naming the node and expression when not), an
 * in-memory table copied to the device as one partition, a filter by the
 * backend's `filter`, and a whole-column aggregation by its `reduce`. */
/* Scanned in-memory columns kept on the column kernels' device across
 * queries (device.c), up to `limit` bytes. */
typedef struct exec_dev_cache exec_dev_cache;
exec_dev_cache *exec_dev_cache_create(int64_t limit);
size_t exec_dev_cache_clear(exec_dev_cache *c); /* the entries it dropped */
void exec_dev_cache_destroy(exec_dev_cache *c);
void exec_dev_cache_stats(exec_dev_cache *c, int64_t *bytes, int64_t *hits, int64_t *misses);
/* A row-wise function of literals alone (no column, aggregation or window;
 * not a literal itself): the column path computes its one value on the host. */
bool exec_host_scalar(const ladle_bexpr *e);
/* Where each node of pp runs with the column kernels: on the device, or
 * (pn->host) on the host's CPU kernels when it or a node under it has no
 * device path; a device part whose result goes to the host must reduce its
 * rows (a group_by, a select of aggregations), else it runs on the host
 * too. LADLE_ENOTSUP naming a node and why when nothing would run on the
 * device; the host nodes right above the device part, and why, are added
 * to notes (when not NULL), one line each. */
ladle_status exec_columns_check(exec_state *s, ladle_pplan *pp, ladle_strbuf *notes,
                                ladle_error *err);
/* A GROUP_BY on the column kernels, its input run here: group_keys over its
 * keys, the keys' first rows taken, each aggregation a grouped_reduce of a
 * row program. Over a filter (through column picks, selects and
 * with_columns) nothing is compacted: the nodes between run over every row
 * of the filter's input and group_keys groups the rows the predicate keeps. */
ladle_status exec_columns_group_by(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                   ladle_error *err);
/* A JOIN on the column kernels: the sides' key columns to join_rows, the
 * output columns taken at its pairs (exec_join_reorders: reordered by the
 * other side's row first). */
ladle_status exec_columns_join(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                               ladle_error *err);
/* Whether join p's pairs are reordered for its maintain_order (the join
 * kernels give them by left row, by right row for a right join). */
bool exec_join_reorders(const ladle_plan *p);
/* How the planner may stream joins on backend be (ladle_pplan_opts.stream_join):
 * 0 where be has no join_build or runs the column kernels, else
 * LADLE_STREAM_JOIN (0 none, 1 over Parquet scans only; 2 over any scan, the
 * default). */
int exec_stream_join_mode(const ladle_backend *be, bool columns);
/* What the physical planner may plan for backend be with `ranks` ranks (and
 * on its column kernels alone when `columns`). */
ladle_pplan_opts exec_plan_opts(const ladle_backend *be, int ranks, bool columns);
/* A SORT on the column kernels, its input run here: sort_perm over its keys
 * (cut to the sort's limit), every column taken through it. */
/* SLICE's rows [off, off + len) of `in` on the column kernels (in borrowed). */
ladle_status exec_columns_slice(exec_state *s, const ladle_pnode *pn, ladle_table *in, int64_t off,
                                int64_t len, ladle_table **out, ladle_error *err);
/* A window agg(x).over(keys) over table t on the column kernels. */
ladle_status exec_columns_window(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                 ladle_column *out, ladle_error *err);
/* DISTINCT on the column kernels. */
ladle_status exec_columns_distinct(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                   ladle_error *err);
ladle_status exec_columns_sort(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                               ladle_error *err);
/* Does any column of t lie on a device? (Only a table of one partition can.) */
bool exec_table_on_device(const ladle_table *t);
/* A table's device columns (a GPU result scanned again) copied to the host
 * through the engine's device table; host columns are references. */
ladle_status exec_table_to_host(exec_state *s, const ladle_table *t, ladle_table **out,
                                ladle_error *err);
/* t's columns on the device, one partition each; with cache, kept for the
 * next scan of the same host memory (in-memory frames: a file scan's fresh
 * buffers are never scanned again) */
ladle_status exec_columns_scan(exec_state *s, const ladle_table *t, bool cache, ladle_table **out,
                               ladle_error *err);
ladle_status exec_columns_filter(exec_state *s, const ladle_pnode *pn, const ladle_table *in,
                                 ladle_table **out, ladle_error *err);
/* A row-wise e over chunk as one row program (backend eval_program): *done
 * when it ran; not when the backend has none or e does not fit one (the
 * caller then evaluates it node by node). */
ladle_status exec_columns_program(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                                  ladle_column *out, bool *done, ladle_error *err);
/* A select of whole-column aggregations right over a filter, on the column
 * kernels: each aggregation reduces the program where(predicate, its
 * argument) over the filter's input, so that no column is compacted (*done;
 * not when the shapes differ, and the caller runs the two nodes). */
ladle_status exec_columns_select_filter(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                        bool *done, ladle_error *err);
ladle_status exec_columns_agg(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                              ladle_column *out, ladle_error *err);

/* A filter's predicate as a conjunction of terms evaluated into keep bytes
 * (predicate.c). */
typedef struct exec_pred exec_pred;
/* *out is NULL when the predicate does not split into fusable terms (no term
 * compares a column with a constant, or it aggregates, or the backend has no
 * compare_into): the caller evaluates it as a mask. */
ladle_status exec_pred_compile(exec_state *s, const ladle_bexpr *e, const ladle_schema *in,
                               const bool *dict, exec_pred **out, ladle_error *err);
/* The columns of predicate e (over n columns) a Parquet scan can evaluate on
 * its dictionaries (dict[c] set): String columns that only conjunction terms
 * reading that column alone, row by row, read. Returns how many. The filter
 * then compiles e with `dict` (those terms left out, the scan's keep-byte
 * column c ANDed in) and the scan each column's terms with
 * exec_pred_compile_dict (over a chunk whose column col is the dictionary). */
size_t exec_pred_dict_columns(const ladle_bexpr *e, size_t n, bool *dict);
ladle_status exec_pred_compile_dict(exec_state *s, const ladle_bexpr *e, const ladle_schema *in,
                                    size_t col, exec_pred **out, ladle_error *err);
/* keep[0..c->length) = 1 where every term is true (not null) on the row. */
ladle_status exec_pred_keep(exec_state *s, const exec_pred *p, const ladle_chunk *c, uint8_t *keep,
                            ladle_error *err);
void exec_pred_destroy(exec_pred *p);

/* Whether EXCHANGE x leaves its rows where they are in this run (x->xskip,
 * under its condition: every rank decides alike). */
static inline bool exec_exchange_skipped(const exec_state *s, const ladle_pnode *x) {
  return x->xskip && (x->xskip_if == NULL || s->hashed[x->xskip_if->id - 1]);
}

void ladle_release_columns(ladle_column *cols, size_t n);
/* One group of n rows (an aggregation over all rows: one row even over no
 * rows; g->whole set). */
ladle_status ladle_exec_single_group(int64_t n, ladle_groups *g, ladle_error *err);
/* need[c] = true for every input column c < n that e reads. */
void ladle_exec_mark_columns(const ladle_bexpr *e, bool *need, size_t n);
/* EXCHANGE (op_exchange.c): cols (ncols, the first nkeys the keys of a hash
 * exchange) moved between ranks through the engine's communicator; out
 * (ncols columns, owned) holds this rank's rows after it. The identity with
 * one rank. */
/* Exchange node pn's move of `in` (consumed) as `kind` (pn's own, or a JOIN
 * exchange's runtime choice: BROADCAST), into *out. */
ladle_status exec_exchange_table(exec_state *s, const ladle_pnode *pn, ladle_exchange_kind kind,
                                 ladle_table *in, ladle_table **out, ladle_error *err);
ladle_status ladle_exec_exchange(exec_state *s, ladle_exchange_kind kind, const ladle_column *cols,
                                 size_t ncols, size_t nkeys, ladle_column *out, ladle_error *err);
void exec_layout_release(exec_layout *l);
/* With several ranks: the rows of the ranks before this one and of all of
 * them, from every rank's `rows` (an allgather; every rank calls it at the
 * same point). One rank: 0 and rows. */
ladle_status exec_rank_rows(exec_state *s, int64_t rows, int64_t *before, int64_t *total,
                            ladle_error *err);
/* Whether a FULL join coalesces a key (its sides' key columns merged whole). */
bool ladle_join_coalesces(const ladle_plan *p);
/* Whether group_by p's aggregations split into partial and final steps
 * (op_group_by_partial.c); with several ranks also a select whose every
 * expression is such an aggregation (one group of all rows: each rank's
 * partial row broadcast, then the final step, instead of every row). */
bool ladle_exec_group_by_splits(const ladle_plan *p, int ranks);
/* Whether exprs (a projection's, a filter's predicate) are row-wise around
 * aggregations that split (no window, none under a when/then), so that with
 * `ranks` ranks each aggregation can be computed from every rank's partial
 * row and the rows stay where they are (op_group_by_partial.c). */
bool ladle_exec_aggs_split(ladle_bexpr *const *exprs, size_t nexprs, int ranks);
/* Those aggregations over t and every other rank's rows (each rank calls it
 * at the same point: it exchanges), hoisted (ladle_exec_hoist) for the
 * expressions to read as single values; the caller unhoists. */
ladle_status exec_hoist_global_aggs(exec_state *s, ladle_bexpr *const *exprs, size_t nexprs,
                                    const ladle_table *t, ladle_error *err);
/* The group_by of node pn over `in`, the output of node in_pn: the partial
 * step first when try_partial, the whole group_by where it does not apply
 * (op_group_by.c). */
ladle_status exec_group_by_table(exec_state *s, const ladle_pnode *pn, const ladle_pnode *in_pn,
                                 ladle_table *in, bool try_partial, ladle_table **out,
                                 ladle_error *err);
/* A one-input operator's body: its input's table in, its output out. */
typedef ladle_status (*exec_unary_fn)(exec_state *s, const ladle_pnode *pn, ladle_table *in,
                                      ladle_table **out, ladle_error *err);
/* Runs pn's one input, then fn over its table (released after). */
ladle_status exec_run_unary(exec_state *s, const ladle_pnode *pn, exec_unary_fn fn,
                            ladle_table **out, ladle_error *err);
/* Runs every input of pn into ins (pn->ninputs slots, NULL-initialised; the
 * caller releases them): in order, stopping once they hold pn->limit rows. */
ladle_status exec_inputs_run(exec_state *s, const ladle_pnode *pn, ladle_table **ins,
                             ladle_error *err);
/* Pushes e's value (col, taken over) on the hoist stack, where evaluation finds
 * it instead of computing e; ladle_exec_unhoist pops back to a mark. */
ladle_status ladle_exec_hoist(exec_state *s, const ladle_bexpr *e, ladle_column *col,
                              ladle_error *err);
void ladle_exec_unhoist(exec_state *s, size_t to);

#endif
