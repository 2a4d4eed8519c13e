/* plan.h — plan nodes and expressions, unbound (as built) and bound (typed).
 *
 * An expression as the user builds it (`ladle_expr`) is an untyped, shared,
 * immutable tree. A plan node binds its expressions against its input schema,
 * producing `ladle_bexpr` trees that carry resolved types, input column indices
 * and the implicit casts Polars would insert. Kernels only ever see bound trees,
 * whose binary operands already have one common type.
 */
#ifndef LADLE_PLAN_H
#define LADLE_PLAN_H

#include "../core/core.h"

typedef enum ladle_expr_kind {
  LADLE_EX_COL,
  LADLE_EX_LIT,
  LADLE_EX_ALIAS,
  LADLE_EX_BINARY,
  LADLE_EX_FUNC,
  LADLE_EX_CAST,
  LADLE_EX_WHEN, /* args: cond0, then0, cond1, then1, ..., otherwise */
  LADLE_EX_AGG,
  LADLE_EX_LEN,
  LADLE_EX_RANK,
  LADLE_EX_OVER, /* args: expr, partition keys... */
  LADLE_EX_CUM   /* a running function (op: ladle_cum_op; descending: reverse; offset: shift's n) */
} ladle_expr_kind;

typedef enum ladle_lit_kind {
  LADLE_LIT_TYPED = 0,
  LADLE_LIT_DYN_INT,
  LADLE_LIT_DYN_FLOAT,
  LADLE_LIT_SERIES
} ladle_lit_kind;

struct ladle_expr {
  atomic_long refcount;
  ladle_expr_kind kind;
  int op;           /* binary op, func, agg op or rank method */
  char *name;       /* COL: column name; ALIAS: new name */
  ladle_column lit; /* LIT: the value(s) */
  ladle_lit_kind lit_kind;
  ladle_func_opts fopts;     /* FUNC; fopts.str is owned */
  ladle_agg_opts aopts;      /* AGG */
  ladle_dtype cast_to;       /* CAST */
  ladle_cast_mode cast_mode; /* CAST */
  bool descending;           /* RANK; CUM: reverse */
  int64_t offset;            /* CUM shift: n */
  size_t nargs;
  ladle_expr **args;
};

/* The context an expression is bound in: rows of a table, or groups. */
typedef enum ladle_bind_ctx {
  LADLE_CTX_ROWS = 0, /* filter, select, with_columns, sort keys, join keys */
  LADLE_CTX_GROUPS    /* group_by(...).agg(...) */
} ladle_bind_ctx;

typedef struct ladle_bexpr {
  ladle_expr_kind kind;
  int op;
  ladle_dtype type; /* output type */
  char *name;       /* output name */
  int64_t col;      /* COL: input column index */
  ladle_column lit; /* LIT: length-1 column (or n for a series) of `type` */
  ladle_func_opts fopts;
  ladle_agg_opts aopts;
  ladle_cast_mode cast_mode; /* CAST */
  bool descending;
  int64_t offset;  /* CUM shift: n */
  bool scalar;     /* produces one value however many rows come in */
  bool has_agg;    /* an AGG/LEN below or here; an OVER hides those under it */
  bool has_window; /* an OVER, RANK or CUM below or here */
  bool all_rows;   /* WHEN: every branch on every row, as Polars in a group_by or a window */
  size_t nargs;
  struct ladle_bexpr **args;
  void *aux; /* kernel state prepared at bind time (e.g. a regex) */
} ladle_bexpr;

void ladle_bexpr_destroy(ladle_bexpr *e);
/* Binds `e` against `schema`. In LADLE_CTX_GROUPS every column reference must
 * sit under an aggregation (or be a group key, by `keys`). */
ladle_status ladle_bind(const ladle_expr *e, const ladle_schema *schema, ladle_bind_ctx ctx,
                        ladle_bexpr **out, ladle_error *err);
/* A bound cast node over `e` (consumes e). */
ladle_status ladle_bexpr_cast(ladle_bexpr *e, ladle_dtype to, ladle_cast_mode mode,
                              ladle_bexpr **out, ladle_error *err);
/* A binary operator's symbol ("+", ">=", "&"). */
const char *ladle_binop_name(int op);
/* Appends a one-line text of a bound expression to b. */
void ladle_bexpr_explain(const ladle_bexpr *e, const ladle_schema *in, ladle_strbuf *b);
/* Whether casting from -> to is supported by the kernels. */
bool ladle_cast_supported(ladle_dtype from, ladle_dtype to);

typedef enum ladle_node_kind {
  LADLE_NODE_SCAN,
  LADLE_NODE_FILTER,
  LADLE_NODE_SELECT,
  LADLE_NODE_WITH_COLUMNS,
  LADLE_NODE_GROUP_BY,
  LADLE_NODE_JOIN,
  LADLE_NODE_SORT,
  LADLE_NODE_SLICE,
  LADLE_NODE_DISTINCT,
  LADLE_NODE_UNION,
  LADLE_NODE_HCONCAT,
  LADLE_NODE_CACHE,
  LADLE_NODE_PROJECT, /* rename and drop: pick input columns by index */
  LADLE_NODE_ROW_INDEX,
  LADLE_NODE_SCAN_PARQUET, /* `source` is the executor's (src/exec/op_scan_parquet.c) */
  LADLE_NODE_SCAN_CSV,     /* `source` is the executor's (src/exec/op_scan_csv.c) */
  LADLE_NODE_EXPLODE       /* subset: the LIST columns unnested (ladle_plan_explode) */
} ladle_node_kind;

struct ladle_plan {
  atomic_long refcount;
  ladle_node_kind kind;
  ladle_schema schema; /* output */
  size_t ninputs;
  ladle_plan **inputs;
  ladle_table *table; /* SCAN */
  size_t nexprs;      /* SELECT, WITH_COLUMNS, FILTER (1), GROUP_BY aggs, SORT keys */
  ladle_bexpr **exprs;
  size_t nkeys; /* GROUP_BY keys, JOIN left keys */
  ladle_bexpr **keys;
  ladle_bexpr **rkeys;    /* JOIN right keys */
  ladle_join_opts join;   /* suffix owned */
  int64_t *out_map;       /* JOIN: per output column, left index (>= 0) or
                             -(right index) - 1; PROJECT: input indices;
                             WITH_COLUMNS: input index or -(expr index) - 1 */
  int64_t *coalesce_rkey; /* JOIN (FULL with coalesce / RIGHT): per output, the
                             right column that fills nulls, or -1 */
  bool *descending;       /* SORT */
  bool *nulls_last;       /* SORT */
  bool maintain_order;    /* SORT, GROUP_BY, DISTINCT */
  int64_t limit;          /* SORT top-k, < 0 none */
  int64_t offset;         /* SLICE, ROW_INDEX */
  int64_t length;         /* SLICE */
  size_t nsubset;         /* DISTINCT */
  int64_t *subset;
  ladle_keep keep;                /* DISTINCT */
  bool reduce;                    /* GROUP_BY with no keys: one row */
  bool strict;                    /* HCONCAT: inputs of different heights are an error */
  bool empty_as_null, keep_nulls; /* EXPLODE */
  void *source;                   /* file scans: the reader's state */
  void (*source_free)(void *source);
};

/* Appends one node's line (no indent, no newline) of ladle_plan_explain. */
void ladle_plan_node_text(const ladle_plan *p, ladle_strbuf *b);

/* A node with refcount 1 and `ninputs` empty input slots (for node builders
 * outside plan.c, such as file scans). */
ladle_plan *ladle_plan_node_new(ladle_node_kind kind, size_t ninputs);

#endif /* LADLE_PLAN_H */
