/* device.c — which physical plans run on the column kernels alone (a GPU
 * engine, or a CPU engine under LADLE_COLUMN_KERNELS=1), asked before
 * anything runs: a plan with a node or an expression that has no
 * column-kernel path yet is refused with LADLE_ENOTSUP naming them, and the
 * caller runs it on the CPU's kernels instead (the Python engine warns).
 *
 * What runs today: in-memory scans (their columns copied to the device as
 * one partition), filters and projections of row-wise expressions built of
 * columns, literals, aliases and the binary operations the backend takes
 * (binary_supports), column picks and renames, selects of whole-column
 * aggregations, group_by, joins, sorts, slices (a row sequence taken),
 * unique (group_keys; the kept rows sorted into order of appearance) and
 * windows of one aggregation (agg(x).over(keys)).
 * Everything else is named as not built yet. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "operator.h"

typedef struct dev_check {
  exec_state *s;
  ladle_error *err;
  char where[64]; /* "device 'cuda:0'" */
} dev_check;

static bool type_on_device(ladle_type_id id) {
  return ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL || id == LADLE_TYPE_STRING ||
         id == LADLE_TYPE_DATE || id == LADLE_TYPE_DATETIME || id == LADLE_TYPE_DURATION ||
         id == LADLE_TYPE_TIME;
}

/* A column type the device holds and moves: type_on_device's, or a List of
 * them where the backend moves lists (carried through filters, joins, sorts
 * and slices, never computed on). */
static bool column_on_device(const exec_state *s, ladle_dtype t) {
  if (t.id == LADLE_TYPE_LIST)
    return s->be->moves_lists && t.child != NULL && column_on_device(s, *t.child);
  return type_on_device(t.id);
}

/* Fails the check naming node pn, expression e (NULL: none) of its input
 * schema, and why. */
static ladle_status refuse(dev_check *c, const ladle_pnode *pn, const ladle_bexpr *e,
                           const char *why) {
  ladle_strbuf b = {0};
  if (e != NULL) ladle_bexpr_explain(e, &pn->lp->inputs[0]->schema, &b);
  ladle_status st = ladle_err_set(
      c->err, LADLE_ENOTSUP, "%s: #%d %s%s%s%s: %s", c->where, pn->id, ladle_pnode_name(pn),
      e != NULL ? " `" : "", e != NULL && b.data != NULL ? b.data : "", e != NULL ? "`" : "", why);
  free(b.data);
  return st;
}

static const ladle_bexpr *unalias(const ladle_bexpr *e);
static bool reduce_op_of(ladle_agg_op op, ladle_reduce_op *r);

static const char *type_name(ladle_dtype t, char *buf, size_t cap) {
  return ladle_dtype_name(t, buf, cap);
}

/* A table on the device is one partition: an error naming the count else. */
static ladle_status one_partition(const ladle_table *t, ladle_error *err) {
  return t->nchunks == 1 ? LADLE_OK
                         : ladle_err_set(err, LADLE_EINVAL,
                                         "internal: %zu partitions on the device", t->nchunks);
}

/* An aggregation's result of the plan's type, else an internal error (the
 * result released). */
static ladle_status plan_typed(const char *what, ladle_column *res, ladle_dtype want,
                               ladle_error *err) {
  if (ladle_dtype_equal(res->type, want)) return LADLE_OK;
  char x[48], y[48];
  ladle_status st =
      ladle_err_set(err, LADLE_EINVAL, "internal: %s gave %s where the plan has %s", what,
                    type_name(res->type, x, sizeof x), type_name(want, y, sizeof y));
  ladle_column_release(res);
  return st;
}

/* whether the backend's binary kernel (and so a row program) takes op of a
 * and b into out */
static bool takes_binary(const exec_state *s, int op, ladle_dtype a, ladle_dtype b,
                         ladle_dtype out) {
  const ladle_backend *be = s->be;
  return be->binary != NULL && (be->binary_supports == NULL || be->binary_supports(op, a, b, out));
}

/* whether a row program takes an instruction of code and op */
static bool takes_instr(const exec_state *s, ladle_pcode code, int op, ladle_dtype a, ladle_dtype b,
                        ladle_dtype out) {
  const ladle_backend *be = s->be;
  return be->eval_program != NULL &&
         (be->program_supports == NULL || be->program_supports(code, op, a, b, out));
}

static bool reads_columns(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_COL) return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (reads_columns(e->args[i])) return true;
  return false;
}

/* functions a row program computes (LADLE_P_FUNC) */
static bool fusable_func(int op) {
  switch (op) {
    case LADLE_FN_NOT:
    case LADLE_FN_NEG:
    case LADLE_FN_ABS:
    case LADLE_FN_IS_NULL:
    case LADLE_FN_IS_NOT_NULL:
    case LADLE_FN_IS_NAN:
    case LADLE_FN_IS_NOT_NAN:
    case LADLE_FN_FILL_NULL:
    case LADLE_FN_DT_YEAR:
    case LADLE_FN_DT_MONTH:
    case LADLE_FN_DT_DAY:
    case LADLE_FN_DT_WEEKDAY:
    case LADLE_FN_DT_ORDINAL_DAY:
    case LADLE_FN_SQRT:
      return true;
    default:
      return false;
  }
}

bool exec_host_scalar(const ladle_bexpr *e) {
  return e->scalar && !e->has_agg && !e->has_window && e->kind != LADLE_EX_LIT && !reads_columns(e);
}

/* A String predicate the backend computes as a column of its own (a row
 * program then reads it as an input): a comparison of a String column with
 * a String literal (str_match) or with another String column (str_compare),
 * or starts_with, ends_with or contains (a plain substring, or plain pieces
 * joined by ".*") of a String column. */
enum { STR_PAT_MAX = 256 };

typedef struct str_test {
  const ladle_bexpr *col, *col2; /* col2: str_compare's other column, or NULL */
  ladle_str_op op;
  const char *pat; /* str_match's pattern: pat_len bytes */
  size_t pat_len;
  char buf[STR_PAT_MAX]; /* CONTAINS_SEQ's pieces, NUL-separated */
} str_test;

static bool str_pred(const exec_state *s, const ladle_bexpr *e, str_test *t) {
  t->col2 = NULL;
  if (s->be->str_match == NULL) return false;
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  if (e->kind == LADLE_EX_BINARY && e->nargs == 2) {
    static const struct {
      int op;
      ladle_str_op as, mirrored;
    } CMP[] = {
        {LADLE_OP_EQ, LADLE_STR_EQ, LADLE_STR_EQ}, {LADLE_OP_NE, LADLE_STR_NE, LADLE_STR_NE},
        {LADLE_OP_LT, LADLE_STR_LT, LADLE_STR_GT}, {LADLE_OP_LE, LADLE_STR_LE, LADLE_STR_GE},
        {LADLE_OP_GT, LADLE_STR_GT, LADLE_STR_LT}, {LADLE_OP_GE, LADLE_STR_GE, LADLE_STR_LE}};
    for (size_t k = 0; k < sizeof CMP / sizeof CMP[0]; k++) {
      if (CMP[k].op != e->op) continue;
      const ladle_bexpr *a = e->args[0], *b = e->args[1];
      while (a->kind == LADLE_EX_ALIAS) a = a->args[0];
      while (b->kind == LADLE_EX_ALIAS) b = b->args[0];
      if (a->kind == LADLE_EX_COL && b->kind == LADLE_EX_COL && !a->scalar && !b->scalar &&
          a->type.id == LADLE_TYPE_STRING && b->type.id == LADLE_TYPE_STRING &&
          s->be->str_compare != NULL) { /* two columns: str_compare's */
        t->col = a;
        t->col2 = b;
        t->op = CMP[k].as;
        t->pat = NULL;
        t->pat_len = 0;
        return true;
      }
      for (int side = 0; side < 2; side++) {
        const ladle_bexpr *c = e->args[side], *l = e->args[1 - side];
        while (c->kind == LADLE_EX_ALIAS) c = c->args[0];
        if (c->kind != LADLE_EX_COL || c->type.id != LADLE_TYPE_STRING || c->scalar ||
            l->kind != LADLE_EX_LIT || !l->scalar || l->lit.length != 1 ||
            l->lit.type.id != LADLE_TYPE_STRING || !ladle_column_valid(&l->lit, 0))
          continue;
        t->col = c;
        t->op = side == 0 ? CMP[k].as : CMP[k].mirrored;
        t->pat = ladle_str_ptr(&l->lit, 0);
        t->pat_len = (size_t)ladle_str_len(&l->lit, 0);
        return true;
      }
    }
    return false;
  }
  if (e->kind != LADLE_EX_FUNC || e->nargs != 1 || e->fopts.str == NULL) return false;
  const ladle_bexpr *c = e->args[0];
  while (c->kind == LADLE_EX_ALIAS) c = c->args[0];
  if (c->kind != LADLE_EX_COL || c->type.id != LADLE_TYPE_STRING || c->scalar) return false;
  const char *p = e->fopts.str;
  switch (e->op) {
    case LADLE_FN_STR_STARTS_WITH:
      t->op = LADLE_STR_STARTS_WITH;
      break;
    case LADLE_FN_STR_ENDS_WITH:
      t->op = LADLE_STR_ENDS_WITH;
      break;
    case LADLE_FN_STR_CONTAINS: {
      t->op = LADLE_STR_CONTAINS;
      if (e->fopts.literal || strpbrk(p, "\\.^$|?*+()[]{}") == NULL) break;
      /* plain pieces joined by ".*" ("special.*requests"): the pieces in order
       * within a line, NUL-separated in t->buf */
      size_t n = 0, pieces = 0;
      for (const char *q = p;; pieces++) {
        const char *dot = strstr(q, ".*");
        size_t l = dot != NULL ? (size_t)(dot - q) : strlen(q);
        for (size_t k = 0; k < l; k++)
          if (strchr("\\.^$|?*+()[]{}\n", q[k]) != NULL) return false;
        if (pieces == 8 || n + l + 1 > STR_PAT_MAX) return false;
        memcpy(t->buf + n, q, l);
        n += l;
        if (dot == NULL) break;
        t->buf[n++] = '\0';
        q = dot + 2;
      }
      t->col = c;
      t->op = LADLE_STR_CONTAINS_SEQ;
      t->pat = t->buf;
      t->pat_len = n;
      return true;
    }
    default:
      return false;
  }
  t->col = c;
  t->pat = p;
  t->pat_len = strlen(p);
  return true;
}

/* is_in of a literal list the column kernels compute as a disjunction of
 * equalities (str_match's for a String column): its list, of 1 to 8 values
 * of the input's type, not a float (is_in's NaN and -0.0 are not =='s). */
static const ladle_column *is_in_list(const exec_state *s, const ladle_bexpr *e) {
  if (e->kind != LADLE_EX_FUNC || e->op != LADLE_FN_IS_IN || e->nargs != 2) return NULL;
  const ladle_bexpr *x = e->args[0], *l = e->args[1];
  const ladle_column *v = &l->lit;
  if (l->kind != LADLE_EX_LIT || v->length < 1 || v->length > 8 || v->null_count == v->length ||
      !ladle_dtype_equal(v->type, x->type) || ladle_type_is_float(x->type.id) || x->scalar)
    return NULL;
  if (x->type.id == LADLE_TYPE_STRING) {
    while (x->kind == LADLE_EX_ALIAS) x = x->args[0];
    return x->kind == LADLE_EX_COL && s->be->str_match != NULL ? v : NULL;
  }
  ladle_dtype b = ladle_dtype_make(LADLE_TYPE_BOOL);
  return takes_binary(s, LADLE_OP_EQ, x->type, x->type, b) && takes_binary(s, LADLE_OP_OR, b, b, b)
             ? v
             : NULL;
}

static const char *running_why(const exec_state *s, const ladle_bexpr *e, char *buf, size_t cap);

static ladle_status running_of(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                               const ladle_dgroups *g, ladle_column *out, ladle_error *err);
/* A window (window_why said it fits) over one chunk's rows (exec_columns_window). */
static ladle_status window_of(exec_state *s, const ladle_bexpr *e, const ladle_chunk *c,
                              ladle_column *out, ladle_error *err);
static const char *window_why(const exec_state *s, const ladle_bexpr *w, char *buf, size_t cap);
static bool has_over(const ladle_bexpr *e);

/* exec_columns_program with running functions restarting in groups wg */
static ladle_status program_of(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                               const ladle_dgroups *wg, ladle_column *out, bool *done,
                               ladle_error *err);
static ladle_status too_big(const exec_state *s, const char *what, const char *inputs,
                            ladle_error *err);

/* A row-wise expression the column kernels evaluate: NULL, else why not
 * (into buf). With `running` (a select's or with_columns' expression, or
 * the argument of a window), running functions of row-wise expressions
 * (cum_*, shift) may be inside: each is computed over the whole column (per
 * window group) first, an input of the row program (emit). */
static const char *rowwise_in(const exec_state *s, const ladle_bexpr *e, bool running, char *buf,
                              size_t cap) {
  char t1[48], t2[48];
  str_test st;
  if (str_pred(s, e, &st)) return NULL; /* a column of its own */
  if (is_in_list(s, e) != NULL)
    return e->args[0]->type.id == LADLE_TYPE_STRING ? NULL
                                                    : rowwise_in(s, e->args[0], running, buf, cap);
  if (exec_host_scalar(e)) {
    /* one value made of literals, on the host (eval_chunk) */
    if (!type_on_device(e->type.id) || ladle_type_is_varlen(e->type.id)) {
      snprintf(buf, cap, "a single value of type %s", type_name(e->type, t1, sizeof t1));
      return buf;
    }
    return NULL;
  }
  switch (e->kind) {
    case LADLE_EX_COL:
      if (!type_on_device(e->type.id)) {
        snprintf(buf, cap, "a column of type %s", type_name(e->type, t1, sizeof t1));
        return buf;
      }
      return NULL;
    case LADLE_EX_LIT:
      if (!e->scalar || e->lit.length != 1 || ladle_type_is_varlen(e->type.id) ||
          !type_on_device(e->type.id)) {
        snprintf(buf, cap, "a literal of type %s", type_name(e->type, t1, sizeof t1));
        return buf;
      }
      return NULL;
    case LADLE_EX_ALIAS:
      return rowwise_in(s, e->args[0], running, buf, cap);
    case LADLE_EX_BINARY: {
      for (size_t i = 0; i < 2; i++) {
        const char *why = rowwise_in(s, e->args[i], running, buf, cap);
        if (why != NULL) return why;
      }
      if (e->args[0]->scalar && e->args[1]->scalar) {
        snprintf(buf, cap, "an operation on two single values");
        return buf;
      }
      if (!takes_binary(s, e->op, e->args[0]->type, e->args[1]->type, e->type)) {
        snprintf(buf, cap, "binary operation '%s' of %s and %s", ladle_binop_name(e->op),
                 type_name(e->args[0]->type, t1, sizeof t1),
                 type_name(e->args[1]->type, t2, sizeof t2));
        return buf;
      }
      return NULL;
    }
    case LADLE_EX_FUNC:
      if (e->op == LADLE_FN_IS_BETWEEN && e->nargs == 3) {
        /* two comparisons and an and in a row program (emit) */
        for (size_t i = 0; i < 3; i++) {
          const char *why = rowwise_in(s, e->args[i], running, buf, cap);
          if (why != NULL) return why;
        }
        ladle_dtype b = ladle_dtype_make(LADLE_TYPE_BOOL), x = e->args[0]->type;
        if (!e->args[0]->scalar && takes_binary(s, LADLE_OP_GE, x, e->args[1]->type, b) &&
            takes_binary(s, LADLE_OP_LE, x, e->args[2]->type, b) &&
            takes_binary(s, LADLE_OP_AND, b, b, b))
          return NULL;
        snprintf(buf, cap, "is_between of %s by %s and %s", type_name(x, t1, sizeof t1),
                 type_name(e->args[1]->type, t2, sizeof t2),
                 ladle_dtype_name(e->args[2]->type, NULL, 0));
        return buf;
      }
      if (fusable_func(e->op) && e->nargs == (e->op == LADLE_FN_FILL_NULL ? 2u : 1u)) {
        /* computed inside a row program only */
        for (size_t i = 0; i < e->nargs; i++) {
          const char *why = rowwise_in(s, e->args[i], running, buf, cap);
          if (why != NULL) return why;
        }
        ladle_dtype a = e->args[0]->type, b = e->nargs > 1 ? e->args[1]->type : a;
        if (takes_instr(s, LADLE_P_FUNC, e->op, a, b, e->type)) return NULL;
        snprintf(buf, cap, "function '%s' of %s", ladle_func_name(e->op),
                 type_name(a, t1, sizeof t1));
        return buf;
      }
      snprintf(buf, cap, "function '%s'", ladle_func_name(e->op));
      return buf;
    case LADLE_EX_CAST: {
      const char *why = rowwise_in(s, e->args[0], running, buf, cap);
      if (why != NULL) return why;
      if (ladle_cast_lossless(e->args[0]->type, e->type) &&
          takes_instr(s, LADLE_P_CAST, 0, e->args[0]->type, e->args[0]->type, e->type))
        return NULL;
      snprintf(buf, cap, "a cast of %s to %s", type_name(e->args[0]->type, t2, sizeof t2),
               type_name(e->type, t1, sizeof t1));
      return buf;
    }
    case LADLE_EX_WHEN: {
      /* IF instructions: conditions Boolean, branches of the output type */
      for (size_t i = 0; i < e->nargs; i++) {
        const char *why = rowwise_in(s, e->args[i], running, buf, cap);
        if (why != NULL) return why;
        bool cond = i + 1 < e->nargs && i % 2 == 0;
        if (!cond && !ladle_dtype_equal(e->args[i]->type, e->type) &&
            e->args[i]->type.id != LADLE_TYPE_NULL)
          return "when/then/otherwise of branches of different types";
      }
      if (e->nargs < 3 || e->nargs % 2 == 0 ||
          !takes_instr(s, LADLE_P_IF, 0, ladle_dtype_make(LADLE_TYPE_BOOL), e->type, e->type)) {
        snprintf(buf, cap, "when/then/otherwise of %s", type_name(e->type, t1, sizeof t1));
        return buf;
      }
      return NULL;
    }
    case LADLE_EX_AGG:
    case LADLE_EX_LEN:
      return "an aggregation inside a row-wise expression";
    case LADLE_EX_RANK:
      return "rank";
    case LADLE_EX_OVER:
      /* with `running`: a window of its own inside a row program (emit) */
      if (running) return window_why(s, e, buf, cap);
      return "a window (over)";
    case LADLE_EX_CUM:
      if (running) return running_why(s, e, buf, cap);
      return e->op == LADLE_CUM_SHIFT ? "shift" : "a cumulative function (cum_*)";
  }
  return "this expression";
}

static const char *rowwise(const exec_state *s, const ladle_bexpr *e, char *buf, size_t cap) {
  return rowwise_in(s, e, false, buf, cap);
}

/* Why running function e (a CUM node) has no column-kernel path, or NULL:
 * the device's cumulative (shift: shift_rows and take), of a row-wise
 * argument of many rows. */
static const char *running_why(const exec_state *s, const ladle_bexpr *e, char *buf, size_t cap) {
  bool shift = e->op == LADLE_CUM_SHIFT;
  const char *what = shift ? "shift" : "a cumulative function (cum_*)";
  if (shift ? s->be->shift_rows == NULL || s->be->take == NULL : s->be->cumulative == NULL)
    return what;
  const ladle_bexpr *a = e->args[0];
  if (e->scalar || a->has_agg) {
    snprintf(buf, cap, "%s of a single value or an aggregation", what);
    return buf;
  }
  if (!type_on_device(e->type.id)) {
    char t1[48];
    snprintf(buf, cap, "%s of type %s", what, type_name(e->type, t1, sizeof t1));
    return buf;
  }
  /* of running functions too (x.cum_sum().shift(1)): a window or rank there is
   * refused by rowwise_in */
  return rowwise_in(s, a, true, buf, cap);
}

/* Whether whole-column var/std e runs on the column kernels (var_whole):
 * Float64 of integers up to 32 bits or of Float64, as grouped ones. */
static bool var_whole_fits(const exec_state *s, const ladle_bexpr *e) {
  const ladle_bexpr *a = e->args[0];
  ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64);
  ladle_type_id id = a->type.id;
  bool in_ok = id == LADLE_TYPE_FLOAT64 ||
               (ladle_type_is_integer(id) && ladle_type_width(id) <= 4 && id != LADLE_TYPE_BOOL);
  return in_ok && e->type.id == LADLE_TYPE_FLOAT64 && s->be->eval_program != NULL &&
         s->be->reduce != NULL && s->be->to_host != NULL &&
         (id == LADLE_TYPE_FLOAT64 || takes_instr(s, LADLE_P_CAST, 0, a->type, a->type, f64)) &&
         takes_binary(s, LADLE_OP_SUB, f64, f64, f64) &&
         takes_binary(s, LADLE_OP_MUL, f64, f64, f64);
}

/* A whole-column aggregation the column kernels compute (reduce): sum, min,
 * max, count and len of a row-wise expression, under an alias or not. */
static const char *whole_agg(const exec_state *s, const ladle_bexpr *e, char *buf, size_t cap) {
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  if (e->kind == LADLE_EX_LEN) return NULL;
  if (e->kind != LADLE_EX_AGG) return "a single value that is not an aggregation";
  char t1[48];
  const ladle_bexpr *a = e->args[0];
  const char *why = rowwise(s, a, buf, cap);
  if (why != NULL) return why;
  if (a->scalar) return "an aggregation of a single value";
  switch ((ladle_agg_op)e->op) {
    case LADLE_AGG_LEN:
    case LADLE_AGG_COUNT:
      return NULL;
    case LADLE_AGG_SUM:
      if (ladle_type_is_numeric(a->type.id) || a->type.id == LADLE_TYPE_BOOL) return NULL;
      break;
    case LADLE_AGG_MIN:
    case LADLE_AGG_MAX:
      if (ladle_reduce_extreme_type(a->type.id)) return NULL;
      break;
    case LADLE_AGG_MEAN: /* a sum (in double) and a count, divided on the host */
      if (ladle_type_is_numeric(a->type.id) || a->type.id == LADLE_TYPE_BOOL) return NULL;
      break;
    case LADLE_AGG_VAR: /* two passes (var_whole) */
    case LADLE_AGG_STD:
      if (var_whole_fits(s, e)) return NULL;
      break;
    default:
      snprintf(buf, cap, "aggregation '%s'", ladle_agg_name((ladle_agg_op)e->op));
      return buf;
  }
  snprintf(buf, cap, "aggregation '%s' of %s", ladle_agg_name((ladle_agg_op)e->op),
           type_name(a->type, t1, sizeof t1));
  return buf;
}

/* An aggregation of a group_by the column kernels compute (grouped_reduce):
 * len, or sum, min, max, count or mean of a row-wise expression of a fixed-
 * width type, under an alias or not, of the type Polars gives it. */
/* Whether grouped var/std e runs on the column kernels (grouped_var): of a
 * Float64 output, of integers of up to 32 bits or Float64 (widened to
 * Float64 inside the program without loss), with the instructions it needs. */
static bool var_fits(const exec_state *s, const ladle_bexpr *e) {
  const ladle_bexpr *a = e->args[0];
  ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64), u32 = ladle_dtype_make(LADLE_TYPE_UINT32),
              i64 = ladle_dtype_make(LADLE_TYPE_INT64), b = ladle_dtype_make(LADLE_TYPE_BOOL);
  ladle_type_id id = a->type.id;
  bool in_ok = id == LADLE_TYPE_FLOAT64 ||
               (ladle_type_is_integer(id) && ladle_type_width(id) <= 4 && id != LADLE_TYPE_BOOL);
  return in_ok && e->type.id == LADLE_TYPE_FLOAT64 && s->be->take != NULL &&
         s->be->eval_program != NULL && ladle_grouped_takes(LADLE_REDUCE_MEAN, id) &&
         ladle_grouped_takes(LADLE_REDUCE_SUM, LADLE_TYPE_FLOAT64) &&
         (id == LADLE_TYPE_FLOAT64 || takes_instr(s, LADLE_P_CAST, 0, a->type, a->type, f64)) &&
         takes_instr(s, LADLE_P_CAST, 0, u32, u32, i64) &&
         takes_instr(s, LADLE_P_CAST, 0, u32, u32, f64) &&
         takes_binary(s, LADLE_OP_SUB, f64, f64, f64) &&
         takes_binary(s, LADLE_OP_MUL, f64, f64, f64) &&
         takes_binary(s, LADLE_OP_TRUE_DIV, f64, f64, f64) &&
         takes_binary(s, LADLE_OP_GT, f64, f64, b) && takes_instr(s, LADLE_P_IF, 0, b, f64, f64) &&
         (e->op != LADLE_AGG_STD || takes_instr(s, LADLE_P_FUNC, LADLE_FN_SQRT, f64, f64, f64));
}

static const char *grouped_agg(const exec_state *s, const ladle_bexpr *e, char *buf, size_t cap) {
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  if (s->be->grouped_reduce == NULL) return "a group_by (no grouped reductions)";
  if (e->kind == LADLE_EX_LEN || (e->kind == LADLE_EX_AGG && e->op == LADLE_AGG_LEN))
    return e->type.id == LADLE_TYPE_UINT32 ? NULL : "len of another type than UInt32";
  if (e->kind != LADLE_EX_AGG) return "an expression of aggregations (only plain aggregations)";
  char t1[48];
  const ladle_bexpr *a = e->args[0];
  const char *why = rowwise(s, a, buf, cap);
  if (why != NULL) return why;
  if (a->scalar) return "an aggregation of a single value";
  if (e->op == LADLE_AGG_N_UNIQUE) { /* group_keys over (group, value) pairs */
    if (s->be->group_keys != NULL && e->type.id == LADLE_TYPE_UINT32 &&
        type_on_device(a->type.id) &&
        (!ladle_type_is_varlen(a->type.id) || unalias(a)->kind == LADLE_EX_COL))
      return NULL;
    snprintf(buf, cap, "aggregation 'n_unique' of %s", type_name(a->type, t1, sizeof t1));
    return buf;
  }
  if (e->op == LADLE_AGG_FIRST || e->op == LADLE_AGG_LAST) { /* take by each group's row */
    ladle_dtype i64 = ladle_dtype_make(LADLE_TYPE_INT64);
    if (s->be->take != NULL && column_on_device(s, a->type) &&
        ladle_dtype_equal(a->type, e->type) &&
        (e->op == LADLE_AGG_FIRST || takes_binary(s, LADLE_OP_SUB, i64, i64, i64)))
      return NULL;
    snprintf(buf, cap, "aggregation '%s' of %s", ladle_agg_name((ladle_agg_op)e->op),
             type_name(a->type, t1, sizeof t1));
    return buf;
  }
  if (e->op == LADLE_AGG_VAR || e->op == LADLE_AGG_STD) {
    if (var_fits(s, e)) return NULL;
    snprintf(buf, cap, "aggregation '%s' of %s", ladle_agg_name((ladle_agg_op)e->op),
             type_name(a->type, t1, sizeof t1));
    return buf;
  }
  ladle_reduce_op op;
  if (!reduce_op_of((ladle_agg_op)e->op, &op)) {
    snprintf(buf, cap, "aggregation '%s'", ladle_agg_name((ladle_agg_op)e->op));
    return buf;
  }
  bool ok = type_on_device(a->type.id) && !ladle_type_is_varlen(a->type.id) &&
            ladle_grouped_takes(op, a->type.id) &&
            ladle_dtype_equal(ladle_grouped_type(op, a->type), e->type);
  if (ok) return NULL;
  snprintf(buf, cap, "aggregation '%s' of %s", ladle_agg_name((ladle_agg_op)e->op),
           type_name(a->type, t1, sizeof t1));
  return buf;
}

/* An expression over aggregations (`0.2 * mean(x)`, `sum(a) / sum(b)`): NULL
 * when each aggregation in it is one `leaf` computes and the nodes between
 * are row-wise operations a row program holds (grouped: over the groups'
 * columns) or, whole, binary operations of one-row columns. */
static const char *agg_expr(const exec_state *s, const ladle_bexpr *e, bool grouped, char *buf,
                            size_t cap) {
  char t1[48], t2[48];
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  if (e->kind == LADLE_EX_AGG || e->kind == LADLE_EX_LEN)
    return grouped ? grouped_agg(s, e, buf, cap) : whole_agg(s, e, buf, cap);
  if (!e->has_agg) {
    if (e->kind == LADLE_EX_LIT && e->scalar && e->lit.length == 1 &&
        !ladle_type_is_varlen(e->type.id) && type_on_device(e->type.id))
      return NULL;
    return "a column outside the aggregations of an expression of aggregations";
  }
  switch (e->kind) {
    case LADLE_EX_BINARY:
      for (size_t i = 0; i < 2; i++) {
        const char *why = agg_expr(s, e->args[i], grouped, buf, cap);
        if (why != NULL) return why;
      }
      if (takes_binary(s, e->op, e->args[0]->type, e->args[1]->type, e->type) &&
          (grouped || s->be->binary_supports == NULL ||
           s->be->binary_supports(e->op, e->args[0]->type, e->args[1]->type, e->type)))
        return NULL;
      snprintf(buf, cap, "binary operation '%s' of %s and %s", ladle_binop_name(e->op),
               type_name(e->args[0]->type, t1, sizeof t1),
               type_name(e->args[1]->type, t2, sizeof t2));
      return buf;
    case LADLE_EX_CAST:
      if (!grouped) break;
      if (ladle_cast_lossless(e->args[0]->type, e->type) &&
          takes_instr(s, LADLE_P_CAST, 0, e->args[0]->type, e->args[0]->type, e->type))
        return agg_expr(s, e->args[0], grouped, buf, cap);
      break;
    default:
      break;
  }
  return grouped ? "an expression of aggregations with more than arithmetic and casts between"
                 : "an expression of aggregations with more than arithmetic between";
}

/* Why window w (an OVER) has no column-kernel path, or NULL: one aggregation
 * a group_by computes there (grouped_agg) of a row-wise argument, over
 * row-wise keys (String keys plain columns). */
static const char *window_keys_why(const exec_state *s, const ladle_bexpr *w, char *buf,
                                   size_t cap);

static const char *window_why(const exec_state *s, const ladle_bexpr *w, char *buf, size_t cap) {
  const ladle_bexpr *a = unalias(w->args[0]);
  if (s->be->group_keys == NULL || s->be->take == NULL || s->be->eval_program == NULL)
    return "a window (no group_keys)";
  const char *why;
  if (a->kind != LADLE_EX_AGG && a->kind != LADLE_EX_LEN) {
    /* running functions per window group inside a row-wise expression
     * (x.shift(1).over("g"), (x - x.shift(1)).over("g")) */
    if (!a->has_window || a->has_agg || a->scalar || has_over(a))
      return "a window of another expression than one aggregation or running functions";
    if ((why = rowwise_in(s, a, true, buf, cap)) != NULL) return why;
    return window_keys_why(s, w, buf, cap);
  }
  if (a->kind == LADLE_EX_AGG &&
      (a->args[0]->scalar || a->args[0]->has_agg || a->args[0]->has_window))
    return "a window of an aggregation of single values";
  why = grouped_agg(s, a, buf, cap);
  if (why != NULL) return why;
  if (a->kind == LADLE_EX_AGG && (why = rowwise(s, a->args[0], buf, cap)) != NULL) return why;
  ladle_dtype u32 = ladle_dtype_make(LADLE_TYPE_UINT32), i64 = ladle_dtype_make(LADLE_TYPE_INT64);
  if (!takes_instr(s, LADLE_P_CAST, 0, u32, u32, i64)) return "a window (no UInt32 to Int64 cast)";
  return window_keys_why(s, w, buf, cap);
}

/* Why window w's keys have no column-kernel path, or NULL: row-wise, of many
 * rows, String keys plain columns. */
static const char *window_keys_why(const exec_state *s, const ladle_bexpr *w, char *buf,
                                   size_t cap) {
  const char *why;
  for (size_t i = 1; i < w->nargs; i++) {
    const ladle_bexpr *k = w->args[i];
    if ((why = rowwise(s, k, buf, cap)) != NULL) return why;
    if (k->scalar) return "a window key of one value";
    if (ladle_type_is_varlen(k->type.id) && unalias(k)->kind != LADLE_EX_COL)
      return "a computed String window key";
  }
  return NULL;
}

/* Whether e holds a window (over). */
static bool has_over(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_OVER) return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (has_over(e->args[i])) return true;
  return false;
}

/* A file scan, or a late filter with its Parquet scan: read on the host (the
 * CPU's reader, late materialisation and all) and copied to the device. */
static bool upload_source(const ladle_pnode *pn) {
  return pn->op == LADLE_POP_SCAN_PARQUET || pn->op == LADLE_POP_SCAN_CSV ||
         (pn->op == LADLE_POP_FILTER && pn->late != NULL && !pn->defer && pn->ninputs == 1 &&
          pn->inputs[0]->op == LADLE_POP_SCAN_PARQUET);
}

bool exec_columns_pred_fits(exec_state *s, const ladle_pnode *pn) {
  char buf[160];
  return pn->lp->nexprs == 1 && rowwise(s, pn->lp->exprs[0], buf, sizeof buf) == NULL;
}

/* Whether an upload source's output can go to the device, else the refusal. */
static ladle_status check_upload(dev_check *c, const ladle_pnode *pn) {
  if (c->s->be->to_device == NULL) return refuse(c, pn, NULL, "no copies to the device");
  const ladle_schema *sc = pn->schema;
  for (size_t i = 0; i < sc->n; i++)
    if (!column_on_device(c->s, sc->types[i])) {
      char buf[160], t1[48];
      snprintf(buf, sizeof buf, "column '%s' of type %s", sc->names[i],
               type_name(sc->types[i], t1, sizeof t1));
      return refuse(c, pn, NULL, buf);
    }
  return LADLE_OK;
}

static ladle_status check_node(dev_check *c, const ladle_pnode *pn) {
  char buf[160];
  const ladle_plan *p = pn->lp;
  if (upload_source(pn)) return check_upload(c, pn);
  switch (pn->op) {
    case LADLE_POP_SCAN:
      for (size_t i = 0; i < p->schema.n; i++)
        if (!column_on_device(c->s, p->schema.types[i])) {
          char t1[48];
          snprintf(buf, sizeof buf, "column '%s' of type %s", p->schema.names[i],
                   type_name(p->schema.types[i], t1, sizeof t1));
          return refuse(c, pn, NULL, buf);
        }
      break;
    case LADLE_POP_FILTER: {
      if (pn->late != NULL || pn->defer) return refuse(c, pn, NULL, "a late or deferred filter");
      /* one value (Polars' `& true` for a dynamic predicate): decided on the host;
       * windows and running functions in it over the table's one partition */
      const char *why = rowwise_in(c->s, p->exprs[0], true, buf, sizeof buf);
      if (why != NULL) return refuse(c, pn, p->exprs[0], why);
      break;
    }
    case LADLE_POP_PROJECTION: {
      bool sel = p->kind == LADLE_NODE_SELECT;
      size_t nscalar = 0;
      for (size_t i = 0; i < p->nexprs; i++) nscalar += p->exprs[i]->scalar;
      for (size_t i = 0; i < p->nexprs; i++) {
        const ladle_bexpr *e = p->exprs[i];
        const char *why;
        if (unalias(e)->kind == LADLE_EX_OVER)
          why = window_why(c->s, unalias(e), buf, sizeof buf);
        else if (e->type.id == LADLE_TYPE_LIST && unalias(e)->kind == LADLE_EX_COL &&
                 column_on_device(c->s, e->type))
          why = NULL; /* a List column passed on as it is */
        else if (e->scalar && (!sel || nscalar != p->nexprs))
          why = "a single value spread over the rows";
        else if (e->scalar)
          why = agg_expr(c->s, e, false, buf, sizeof buf);
        else
          why = rowwise_in(c->s, e, true, buf, sizeof buf);
        if (why != NULL) return refuse(c, pn, e, why);
      }
      break;
    }
    case LADLE_POP_PROJECT:
    case LADLE_POP_CACHE: /* a shared subplan's table, kept for its other parents */
      break;
    case LADLE_POP_GROUP_BY: {
      if (p->nkeys == 0 || c->s->be->group_keys == NULL)
        return refuse(c, pn, NULL, "a group_by without keys");
      for (size_t i = 0; i < p->nkeys; i++) {
        const ladle_bexpr *k = p->keys[i];
        const char *why = rowwise(c->s, k, buf, sizeof buf);
        if (why == NULL && k->scalar) why = "a key of one value";
        if (why == NULL && ladle_type_is_varlen(k->type.id) && unalias(k)->kind != LADLE_EX_COL)
          why = "a computed String key";
        if (why != NULL) return refuse(c, pn, k, why);
      }
      for (size_t i = 0; i < p->nexprs; i++) {
        const char *why = agg_expr(c->s, p->exprs[i], true, buf, sizeof buf);
        if (why != NULL) return refuse(c, pn, p->exprs[i], why);
      }
      break;
    }
    case LADLE_POP_JOIN: {
      if (c->s->be->join_rows == NULL)
        return refuse(c, pn, NULL, "this operator has no GPU path yet");
      if (pn->defer_side[0] || pn->defer_side[1] || pn->feeds != NULL)
        return refuse(c, pn, NULL, "a join rewritten for the CPU's pipelines");
      if (exec_join_reorders(p) && c->s->be->sort_perm == NULL)
        return refuse(c, pn, NULL, "a join's maintain_order");
      for (size_t side = 0; side < 2; side++)
        for (size_t i = 0; i < p->nkeys; i++) {
          const ladle_bexpr *k = side == 0 ? p->keys[i] : p->rkeys[i];
          const char *why = rowwise(c->s, k, buf, sizeof buf);
          if (why == NULL && k->scalar) why = "a join key of one value";
          if (why == NULL && ladle_type_is_varlen(k->type.id) && unalias(k)->kind != LADLE_EX_COL)
            why = "a computed String key";
          if (why == NULL && k->type.id == LADLE_TYPE_NULL) why = "a join key of type null";
          if (why == NULL && side == 1 && !ladle_dtype_equal(p->keys[i]->type, k->type)) {
            char t1[48], t2[48];
            snprintf(buf, sizeof buf, "join keys of types %s and %s",
                     type_name(p->keys[i]->type, t1, sizeof t1), type_name(k->type, t2, sizeof t2));
            why = buf;
          }
          if (why != NULL) {
            if (side == 0) return refuse(c, pn, k, why);
            char b2[200];
            snprintf(b2, sizeof b2, "right key %zu: %s", i, why);
            return refuse(c, pn, NULL, b2);
          }
        }
      for (size_t i = 0; i < p->schema.n; i++) {
        ladle_dtype t = p->schema.types[i];
        if (p->coalesce_rkey[i] >= 0 &&
            (ladle_type_is_varlen(t.id) ||
             !takes_instr(c->s, LADLE_P_FUNC, LADLE_FN_FILL_NULL, t, t, t))) {
          char t1[48];
          snprintf(buf, sizeof buf, "a coalesced key '%s' of type %s", p->schema.names[i],
                   type_name(t, t1, sizeof t1));
          return refuse(c, pn, NULL, buf);
        }
      }
      break;
    }
    case LADLE_POP_SORT:
    case LADLE_POP_TOP_K: {
      if (c->s->be->sort_perm == NULL || p->nexprs == 0 || pn->partial)
        return refuse(c, pn, NULL, "this operator has no GPU path yet");
      for (size_t i = 0; i < p->nexprs; i++) {
        const ladle_bexpr *k = p->exprs[i];
        const char *why = rowwise(c->s, k, buf, sizeof buf);
        if (why == NULL && k->scalar) why = "a sort key of one value";
        if (why == NULL && (ladle_type_is_varlen(k->type.id) || k->type.id == LADLE_TYPE_NULL))
          why = "a sort by a String key";
        if (why != NULL) return refuse(c, pn, k, why);
      }
      break;
    }
    case LADLE_POP_ROW_INDEX: /* the row numbers: a sequence (op_row_index.c) */
      if (c->s->be->sequence == NULL)
        return refuse(c, pn, NULL, "this operator has no GPU path yet");
      break;
    case LADLE_POP_SLICE:
      if (c->s->be->sequence == NULL || c->s->be->take == NULL)
        return refuse(c, pn, NULL, "this operator has no GPU path yet");
      break;
    case LADLE_POP_DISTINCT: {
      const ladle_backend *be = c->s->be;
      ladle_dtype u32 = ladle_dtype_make(LADLE_TYPE_UINT32);
      if (pn->partial || be->group_keys == NULL || be->sort_perm == NULL || be->take == NULL ||
          be->grouped_reduce == NULL || be->filter == NULL || be->sequence == NULL ||
          p->nsubset == 0 ||
          (p->keep == LADLE_KEEP_NONE && (!takes_instr(c->s, LADLE_P_CONST, 0, u32, u32, u32) ||
                                          !takes_instr(c->s, LADLE_P_BINARY, LADLE_OP_EQ, u32, u32,
                                                       ladle_dtype_make(LADLE_TYPE_BOOL)))))
        return refuse(c, pn, NULL, "this operator has no GPU path yet");
      for (size_t i = 0; i < p->nsubset; i++) {
        ladle_dtype t = p->inputs[0]->schema.types[p->subset[i]];
        if (!type_on_device(t.id) || t.id == LADLE_TYPE_TIME) {
          char t1[48];
          snprintf(buf, sizeof buf, "a unique key '%s' of type %s",
                   p->inputs[0]->schema.names[p->subset[i]], type_name(t, t1, sizeof t1));
          return refuse(c, pn, NULL, buf);
        }
      }
      break;
    }
    default:
      return refuse(c, pn, NULL, "this operator has no GPU path yet");
  }
  return LADLE_OK;
}

/* check_node with its reason into e, whatever c reports into */
static ladle_status check_quiet(const dev_check *c, const ladle_pnode *pn, ladle_error *e) {
  dev_check one = *c;
  one.err = e;
  return check_node(&one, pn);
}

/* Whether the subtree of pn ends in a node whose output is typically much
 * smaller than its input (a group_by, a select of aggregations): worth
 * running on the device even when its parent runs on the host. */
static bool reduces(const ladle_pnode *pn) {
  if (pn->op == LADLE_POP_GROUP_BY) return true;
  if ((pn->op == LADLE_POP_SORT || pn->op == LADLE_POP_TOP_K) && pn->lp->limit >= 0)
    return true; /* top-k */
  if (pn->op == LADLE_POP_PROJECTION && pn->lp->kind == LADLE_NODE_SELECT && pn->lp->nexprs > 0) {
    bool all = true;
    for (size_t i = 0; i < pn->lp->nexprs; i++) all = all && pn->lp->exprs[i]->scalar;
    if (all) return true;
  }
  for (size_t i = 0; i < pn->ninputs; i++)
    if (reduces(pn->inputs[i])) return true;
  return false;
}

static void mark_host(ladle_pnode *pn) {
  pn->host = true;
  for (size_t i = 0; i < pn->ninputs; i++) mark_host(pn->inputs[i]);
}

/* Places pn's subtree: a node runs on the device when it and its inputs can
 * (check_node); true when pn does. The first refusal goes to c->err. */
static bool place(dev_check *c, ladle_pnode *pn, bool *refused) {
  if (pn->op == LADLE_POP_EXCHANGE) {
    /* rows between ranks move through the host for now: the input's output
     * copied down, the exchange on the host's kernels and communicator, its
     * output copied up for a parent on the device (node_run_placed) */
    for (size_t i = 0; i < pn->ninputs; i++) place(c, pn->inputs[i], refused);
    pn->host = true;
    return true;
  }
  if (upload_source(pn)) {
    ladle_error e;
    bool ok = check_quiet(c, pn, &e) == LADLE_OK;
    if (!ok && !*refused) *c->err = e;
    *refused = *refused || !ok;
    pn->upload = ok;
    pn->host = !ok;
    for (size_t i = 0; i < pn->ninputs; i++) mark_host(pn->inputs[i]); /* read there */
    if (ok) { /* offsets and bytes for the copy, not string views for an export */
      pn->views = false;
      for (size_t i = 0; i < pn->ninputs; i++) pn->inputs[i]->views = false;
    }
    return ok;
  }
  bool ok = true;
  for (size_t i = 0; i < pn->ninputs; i++) ok = place(c, pn->inputs[i], refused) && ok;
  if (ok) {
    ladle_error e;
    if (check_quiet(c, pn, &e) != LADLE_OK) {
      ok = false;
      if (!*refused) *c->err = e; /* the first reason found */
      *refused = true;
    }
  }
  pn->host = !ok;
  if (!ok) /* an input on the device hands its rows to the host: only a small result */
    for (size_t i = 0; i < pn->ninputs; i++)
      if (!pn->inputs[i]->host && !reduces(pn->inputs[i])) mark_host(pn->inputs[i]);
  return ok;
}

/* A node on the device whose input runs on the host: a shared subplan
 * (CACHE) that one parent moved to the host, read by another on the device. */
static const ladle_pnode *split_input(const ladle_pnode *pn) {
  if (pn->upload && !pn->host) return NULL; /* its inputs run on the host by design */
  if (pn->op == LADLE_POP_EXCHANGE) {       /* a host node both ways by design */
    for (size_t i = 0; i < pn->ninputs; i++) {
      const ladle_pnode *f = split_input(pn->inputs[i]);
      if (f != NULL) return f;
    }
    return NULL;
  }
  for (size_t i = 0; i < pn->ninputs; i++) {
    if (!pn->host && pn->inputs[i]->host && pn->inputs[i]->op != LADLE_POP_EXCHANGE) return pn;
    const ladle_pnode *f = split_input(pn->inputs[i]);
    if (f != NULL) return f;
  }
  return NULL;
}

static bool any_on_device(const ladle_pnode *pn) {
  if (!pn->host) return true;
  for (size_t i = 0; i < pn->ninputs; i++)
    if (any_on_device(pn->inputs[i])) return true;
  return false;
}

/* the host nodes right above the device part, and why, into notes */
static void note_boundary(dev_check *c, const ladle_pnode *pn, ladle_strbuf *notes) {
  if (!pn->host) return;
  bool edge = false;
  for (size_t i = 0; i < pn->ninputs; i++) edge = edge || !pn->inputs[i]->host;
  ladle_error e;
  if (edge && check_quiet(c, pn, &e) != LADLE_OK) ladle_strbuf_printf(notes, "  %s\n", e.message);
  for (size_t i = 0; i < pn->ninputs; i++) note_boundary(c, pn->inputs[i], notes);
}

ladle_status exec_columns_check(exec_state *s, ladle_pplan *pp, ladle_strbuf *notes,
                                ladle_error *err) {
  dev_check c = {s, err, ""};
  if (s->be->device == LADLE_DEVICE_CPU)
    snprintf(c.where, sizeof c.where, "the column kernels (LADLE_COLUMN_KERNELS=1)");
  else
    snprintf(c.where, sizeof c.where, "device '%s:%d'", s->be->name, s->k.device_id);
  /* the first refusal found bottom-up is the one reported */
  ladle_error first;
  dev_check fc = c;
  fc.err = &first;
  bool refused = false;
  place(&fc, pp->root, &refused);
  const ladle_pnode *split = split_input(pp->root);
  if (split != NULL) {
    mark_host(pp->root);
    return refuse(&c, split, NULL,
                  "a shared subplan (cache) its parents read on the host and "
                  "on the device");
  }
  if (!pp->root->host) return LADLE_OK;
  if (!any_on_device(pp->root)) {
    *err = first;
    return first.code;
  }
  if (notes != NULL) note_boundary(&c, pp->root, notes);
  return LADLE_OK;
}

/* ------------------------------------------------------ the column cache */

/* A scanned column's copy on the device (one partition), kept for the next
 * query that scans the same host memory: in-memory Polars frames do not
 * change, and an entry holds references to the host buffers it was made
 * from, so that their addresses, the key, cannot be reused while it lives.
 * Least recently used entries go past the cap; all go when a query runs out
 * of device memory (the engine then runs it again) or with the engine. */
typedef struct dev_entry {
  size_t nchunks;
  ladle_column *host; /* the host column's pieces (references) */
  ladle_column dev;
  int64_t bytes;
  uint64_t used;
} dev_entry;

struct exec_dev_cache {
  pthread_mutex_t mu;
  dev_entry *e;
  size_t n, cap;
  int64_t bytes, limit;
  uint64_t tick;
  int64_t hits, misses;
};

exec_dev_cache *exec_dev_cache_create(int64_t limit) {
  exec_dev_cache *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  pthread_mutex_init(&c->mu, NULL);
  c->limit = limit;
  return c;
}

static void entry_free(dev_entry *e) {
  ladle_release_columns(e->host, e->nchunks); /* and the array */
  ladle_column_release(&e->dev);
}

size_t exec_dev_cache_clear(exec_dev_cache *c) {
  if (c == NULL) return 0;
  pthread_mutex_lock(&c->mu);
  size_t n = c->n;
  for (size_t i = 0; i < c->n; i++) entry_free(&c->e[i]);
  c->n = 0;
  c->bytes = 0;
  pthread_mutex_unlock(&c->mu);
  return n;
}

void exec_dev_cache_destroy(exec_dev_cache *c) {
  if (c == NULL) return;
  exec_dev_cache_clear(c);
  free(c->e);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

void exec_dev_cache_stats(exec_dev_cache *c, int64_t *bytes, int64_t *hits, int64_t *misses) {
  *bytes = *hits = *misses = 0;
  if (c == NULL) return;
  pthread_mutex_lock(&c->mu);
  *bytes = c->bytes;
  *hits = c->hits;
  *misses = c->misses;
  pthread_mutex_unlock(&c->mu);
}

static bool same_piece(const ladle_column *a, const ladle_column *b) {
  return ladle_dtype_equal(a->type, b->type) && a->length == b->length &&
         a->null_count == b->null_count && a->values == b->values && a->validity == b->validity &&
         a->chars == b->chars;
}

/* column i of t as cached (a reference into *out), or false */
static bool cache_find(exec_dev_cache *c, const ladle_table *t, size_t i, ladle_column *out) {
  bool hit = false;
  pthread_mutex_lock(&c->mu);
  for (size_t k = 0; k < c->n && !hit; k++) {
    dev_entry *e = &c->e[k];
    if (e->nchunks != t->nchunks) continue;
    hit = true;
    for (size_t j = 0; j < t->nchunks && hit; j++)
      hit = same_piece(&e->host[j], &t->chunks[j].columns[i]);
    if (hit) {
      e->used = ++c->tick;
      ladle_column_copy_ref(&e->dev, out);
    }
  }
  if (hit)
    c->hits++;
  else
    c->misses++;
  pthread_mutex_unlock(&c->mu);
  return hit;
}

static int64_t column_bytes(const ladle_column *c) {
  int64_t b = 0;
  for (size_t k = 0; k < 3; k++)
    if (c->owners[k] != NULL) b += (int64_t)c->owners[k]->size;
  return c->type.id == LADLE_TYPE_LIST && c->child != NULL ? b + column_bytes(c->child) : b;
}

/* keeps dev as column i of t (nothing when it would not fit, or no memory) */
static void cache_put(exec_dev_cache *c, const ladle_table *t, size_t i, const ladle_column *dev) {
  int64_t b = column_bytes(dev);
  if (b > c->limit || t->nchunks == 0) return;
  ladle_column *host = malloc(t->nchunks * sizeof *host);
  if (host == NULL) return;
  for (size_t j = 0; j < t->nchunks; j++) ladle_column_copy_ref(&t->chunks[j].columns[i], &host[j]);
  pthread_mutex_lock(&c->mu);
  while (c->n > 0 && c->bytes + b > c->limit) {
    size_t lru = 0;
    for (size_t k = 1; k < c->n; k++)
      if (c->e[k].used < c->e[lru].used) lru = k;
    c->bytes -= c->e[lru].bytes;
    entry_free(&c->e[lru]);
    c->e[lru] = c->e[--c->n];
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 16;
    dev_entry *e = realloc(c->e, cap * sizeof *e);
    if (e == NULL) {
      pthread_mutex_unlock(&c->mu);
      ladle_release_columns(host, t->nchunks);
      return;
    }
    c->e = e;
    c->cap = cap;
  }
  dev_entry *e = &c->e[c->n++];
  e->nchunks = t->nchunks;
  e->host = host;
  ladle_column_copy_ref(dev, &e->dev);
  e->bytes = b;
  e->used = ++c->tick;
  c->bytes += b;
  pthread_mutex_unlock(&c->mu);
}

ladle_status exec_columns_scan(exec_state *s, const ladle_table *t, bool cache, ladle_table **out,
                               ladle_error *err) {
  ladle_table *o;
  LADLE_RETURN_NOT_OK(ladle_table_create(&t->schema, 1, &o, err));
  o->chunks[0].length = t->num_rows;
  ladle_status st = LADLE_OK;
  exec_dev_cache *dc = cache ? s->eng->dcache : NULL;
  for (size_t i = 0; i < t->schema.n && st == LADLE_OK; i++) {
    ladle_column *dst = &o->chunks[0].columns[i];
    const ladle_buffer *vb = t->nchunks == 1 ? t->chunks[0].columns[i].owners[1] : NULL;
    if (vb != NULL && vb->device == s->be->device && vb->device != LADLE_DEVICE_CPU) {
      /* a result of this engine's device scanned again: already there */
      if (vb->device_id != s->k.device_id)
        st = ladle_err_set(err, LADLE_ENOTSUP, "a scan of a result on another GPU (cuda:%d)",
                           vb->device_id);
      else
        ladle_column_copy_ref(&t->chunks[0].columns[i], dst);
      continue;
    }
    if (dc != NULL && cache_find(dc, t, i, dst)) continue;
    bool unread = t->nchunks > 0 && t->schema.types[i].id != LADLE_TYPE_NULL;
    for (size_t k = 0; k < t->nchunks && unread; k++)
      unread = exec_is_placeholder(&t->chunks[k].columns[i]);
    if (unread) {
      /* a column the file's reader left unread (no node above reads it):
       * a placeholder on the device too */
      exec_placeholder(dst, t->num_rows);
      continue;
    }
    for (size_t k = 0; k < t->nchunks && st == LADLE_OK; k++)
      if (ladle_column_view_only(&t->chunks[k].columns[i]))
        st = ladle_err_set(err, LADLE_EINVAL, "internal: column '%s' as string views only",
                           t->schema.names[i]);
    if (st != LADLE_OK) break;
    ladle_column host;
    if (t->nchunks == 1)
      ladle_column_copy_ref(&t->chunks[0].columns[i], &host);
    else if (t->nchunks == 0)
      st = ladle_column_alloc(t->schema.types[i], 0, false, 0, &host, err);
    else /* the pieces side by side on the engine's threads, then up */
      st = ladle_table_concat_column_pool(t, i, s->k.pool, &host, err);
    if (st != LADLE_OK) break;
    st = s->be->to_device(&s->k, &host, dst, err);
    ladle_column_release(&host);
    if (st == LADLE_OK && dc != NULL) cache_put(dc, t, i, dst);
  }
  ladle_table_seal(o);
  if (st != LADLE_OK) {
    ladle_table_release(o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

ladle_status exec_columns_filter(exec_state *s, const ladle_pnode *pn, const ladle_table *in,
                                 ladle_table **out, ladle_error *err) {
  ladle_table *o;
  LADLE_RETURN_NOT_OK(ladle_table_create(&pn->lp->schema, in->nchunks, &o, err));
  ladle_status st = LADLE_OK;
  const ladle_bexpr *pred = pn->lp->exprs[0], *top = unalias(pred);
  /* a window or running function reads every row: the table's one partition */
  if (pred->has_window && in->nchunks > 1) st = one_partition(in, err);
  for (size_t k = 0; k < in->nchunks && st == LADLE_OK; k++) {
    const ladle_chunk *c = &in->chunks[k];
    ladle_chunk *oc = &o->chunks[k];
    ladle_column m;
    if (top->kind == LADLE_EX_OVER)
      st = window_of(s, top, c, &m, err);
    else if (top->kind == LADLE_EX_CUM)
      st = running_of(s, top, c, NULL, &m, err);
    else
      st = ladle_eval_chunk(s, pred, c, &m, err);
    if (st != LADLE_OK) break;
    if (pn->lp->exprs[0]->scalar) {
      /* one value on the host: every row or none (columns cut to no rows) */
      bool all = m.length == 1 && m.type.id == LADLE_TYPE_BOOL && ladle_column_valid(&m, 0) &&
                 ((const uint8_t *)m.values)[0] != 0;
      ladle_column_release(&m);
      int64_t n = all ? c->length : 0;
      for (size_t i = 0; i < in->schema.n; i++) {
        ladle_column_copy_ref(&c->columns[i], &oc->columns[i]);
        if (!all) oc->columns[i].length = oc->columns[i].null_count = 0;
      }
      oc->length = n;
      continue;
    }
    int64_t n = -1;
    for (size_t i = 0; i < in->schema.n && st == LADLE_OK; i++) {
      if (pn->need != NULL && !pn->need[i]) continue;
      st = s->be->filter(&s->k, &c->columns[i], &m, &oc->columns[i], err);
      if (st == LADLE_OK) n = oc->columns[i].length;
    }
    if (st == LADLE_OK && n < 0) {
      /* no column is compacted: the mask's own kept rows count them */
      ladle_column kept;
      st = s->be->filter(&s->k, &m, &m, &kept, err);
      if (st == LADLE_OK) n = kept.length;
      ladle_column_release(&kept);
    }
    ladle_column_release(&m);
    for (size_t i = 0; st == LADLE_OK && i < in->schema.n; i++)
      if (pn->need != NULL && !pn->need[i]) exec_placeholder(&oc->columns[i], n);
    oc->length = n < 0 ? 0 : n;
  }
  ladle_table_seal(o);
  if (st != LADLE_OK) {
    ladle_table_release(o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* The reduction computing aggregation op (len: count, over the rows a
 * program keeps valid; mean: grouped_reduce's, a whole column's is a sum
 * and a count), or false. */
static bool reduce_op_of(ladle_agg_op op, ladle_reduce_op *r) {
  switch (op) {
    case LADLE_AGG_SUM:
      *r = LADLE_REDUCE_SUM;
      return true;
    case LADLE_AGG_MIN:
      *r = LADLE_REDUCE_MIN;
      return true;
    case LADLE_AGG_MAX:
      *r = LADLE_REDUCE_MAX;
      return true;
    case LADLE_AGG_COUNT:
    case LADLE_AGG_LEN:
      *r = LADLE_REDUCE_COUNT;
      return true;
    case LADLE_AGG_MEAN:
      *r = LADLE_REDUCE_MEAN;
      return true;
    default:
      return false;
  }
}

/* one value of a one-row column (a reduce's) on the host, as a double */
static ladle_status host_value(exec_state *s, const ladle_column *c, double *v, bool *valid,
                               ladle_error *err) {
  ladle_column h;
  LADLE_RETURN_NOT_OK(s->be->to_host(&s->k, c, &h, err));
  *valid = h.length == 1 && ladle_column_valid(&h, 0);
  *v = *valid ? ladle_column_value_f64(&h, 0) : 0;
  ladle_column_release(&h);
  return LADLE_OK;
}

/* mean: the backend's sum and count, their quotient on the host (null where
 * no value is valid); whole_agg keeps integers to 32 bits, whose sum in 64
 * bits is exact */
/* sum / count as e's type on the host (null when count is 0) */
static ladle_status mean_of(exec_state *s, const ladle_bexpr *e, const ladle_column *sum,
                            const ladle_column *cnt, ladle_column *out, ladle_error *err) {
  double sv = 0, cv = 0;
  bool s_ok = false, c_ok = false;
  ladle_status st = host_value(s, sum, &sv, &s_ok, err);
  if (st == LADLE_OK) st = host_value(s, cnt, &cv, &c_ok, err);
  if (st != LADLE_OK) return st;
  if (e->type.id != LADLE_TYPE_FLOAT64 && e->type.id != LADLE_TYPE_FLOAT32)
    return ladle_err_set(err, LADLE_ENOTSUP, "a mean of type %s on the column kernels",
                         ladle_dtype_name(e->type, NULL, 0));
  LADLE_RETURN_NOT_OK(ladle_column_alloc(e->type, 1, true, 0, out, err));
  bool valid = c_ok && cv > 0;
  double m = valid ? sv / cv : 0;
  if (e->type.id == LADLE_TYPE_FLOAT32)
    LADLE_COL_MUT(out, float)[0] = (float)m;
  else
    LADLE_COL_MUT(out, double)[0] = m;
  if (!valid) ladle_bit_set(LADLE_COL_VALIDITY_MUT(out), 0, false);
  ladle_column_finish_nulls(out);
  return LADLE_OK;
}

/* What an aggregation reduces: a column, or a row program's value over its
 * inputs without the column (reduce_program, sums and counts only). */
typedef struct reducible {
  const ladle_column *col;
  const ladle_program *p;
  const ladle_column *cols;
  size_t ncols;
} reducible;

static ladle_status reduce_of(exec_state *s, ladle_reduce_op op, const reducible *r,
                              ladle_column *out, ladle_error *err) {
  return r->col != NULL ? s->be->reduce(&s->k, op, r->col, out, err)
                        : s->be->reduce_program(&s->k, op, r->p, r->cols, r->ncols, out, err);
}

/* Aggregation a (op: sum, min, max, count, mean; len as count) of r: a
 * mean as the sum and count, divided on the host. */
static ladle_status agg_of(exec_state *s, const ladle_bexpr *a, ladle_agg_op op, const reducible *r,
                           ladle_column *out, ladle_error *err) {
  ladle_dtype vt = r->col != NULL ? r->col->type : r->p->ins[r->p->n - 1].type;
  if (op == LADLE_AGG_MEAN && !ladle_type_is_float(vt.id)) {
    /* integers and Booleans summed as Float64 (their sum in their own type
     * wraps): the program with a cast at its end */
    ladle_program q;
    memset(&q, 0, sizeof q);
    const ladle_column *in = r->col != NULL ? r->col : r->cols;
    size_t nin = r->col != NULL ? 1 : r->ncols;
    if (r->col != NULL) {
      q.n = 1;
      q.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, vt, NULL, 0};
    } else {
      q = *r->p;
    }
    if (q.n == LADLE_PROG_MAX)
      return ladle_err_set(err, LADLE_ENOTSUP, "a mean of a row program of %d operations",
                           LADLE_PROG_MAX);
    int last = (int)q.n - 1;
    q.ins[q.n++] =
        (ladle_pinstr){LADLE_P_CAST, 0, last, last, ladle_dtype_make(LADLE_TYPE_FLOAT64), NULL, 0};
    if (s->be->reduce_program != NULL) {
      reducible rq = {NULL, &q, in, nin};
      return agg_of(s, a, op, &rq, out, err);
    }
    ladle_column v;
    LADLE_RETURN_NOT_OK(s->be->eval_program(&s->k, &q, in, nin, &v, err));
    reducible rv = {&v, NULL, NULL, 0};
    ladle_status st = agg_of(s, a, op, &rv, out, err);
    ladle_column_release(&v);
    return st;
  }
  if (op == LADLE_AGG_MEAN) {
    ladle_column sum, cnt;
    LADLE_RETURN_NOT_OK(reduce_of(s, LADLE_REDUCE_SUM, r, &sum, err));
    ladle_status st = reduce_of(s, LADLE_REDUCE_COUNT, r, &cnt, err);
    if (st == LADLE_OK) {
      st = mean_of(s, a, &sum, &cnt, out, err);
      ladle_column_release(&cnt);
    }
    ladle_column_release(&sum);
    return st;
  }
  ladle_reduce_op rop;
  if (!reduce_op_of(op, &rop))
    return ladle_err_set(err, LADLE_ENOTSUP, "aggregation '%s' on the column kernels",
                         ladle_agg_name(op));
  ladle_column res;
  LADLE_RETURN_NOT_OK(reduce_of(s, rop, r, &res, err));
  LADLE_RETURN_NOT_OK(plan_typed(ladle_agg_name(op), &res, a->type, err));
  *out = res;
  return LADLE_OK;
}

/* A whole-column aggregation (whole_agg said which) by `reduce`; len on
 * the host, from the rows. */
/* var(x, ddof) or std of a whole column (var_whole_fits said it fits): x in
 * Float64, its sum and count (the mean, on the host), then the sum of the
 * squared deviations from the mean; M2 / (count - ddof) on the host, null
 * where count <= ddof, std its square root. */
static ladle_status var_whole(exec_state *s, const ladle_bexpr *e, const ladle_column *in,
                              ladle_column *out, ladle_error *err) {
  ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64);
  ladle_column x, sum, cnt, sq, m2;
  memset(&sum, 0, sizeof sum);
  memset(&cnt, 0, sizeof cnt);
  memset(&sq, 0, sizeof sq);
  memset(&m2, 0, sizeof m2);
  ladle_status st = LADLE_OK;
  if (in->type.id == LADLE_TYPE_FLOAT64) {
    ladle_column_copy_ref(in, &x);
  } else {
    ladle_program p;
    memset(&p, 0, sizeof p);
    p.n = 2;
    p.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, in->type, NULL, 0};
    p.ins[1] = (ladle_pinstr){LADLE_P_CAST, 0, 0, 0, f64, NULL, 0};
    LADLE_RETURN_NOT_OK(s->be->eval_program(&s->k, &p, in, 1, &x, err));
  }
  double sv = 0, cv = 0, mv = 0;
  bool s_ok = false, c_ok = false, m_ok = false;
  st = s->be->reduce(&s->k, LADLE_REDUCE_SUM, &x, &sum, err);
  if (st == LADLE_OK) st = s->be->reduce(&s->k, LADLE_REDUCE_COUNT, &x, &cnt, err);
  if (st == LADLE_OK) st = host_value(s, &sum, &sv, &s_ok, err);
  if (st == LADLE_OK) st = host_value(s, &cnt, &cv, &c_ok, err);
  ladle_column mean;
  memset(&mean, 0, sizeof mean);
  if (st == LADLE_OK && c_ok && cv > 0) {
    st = ladle_column_alloc(f64, 1, false, 0, &mean, err);
    if (st == LADLE_OK) {
      LADLE_COL_MUT(&mean, double)[0] = sv / cv;
      ladle_program p;
      memset(&p, 0, sizeof p);
      p.n = 4;
      p.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, f64, NULL, 0};
      p.ins[1] = (ladle_pinstr){LADLE_P_CONST, 0, 0, 0, f64, &mean, 0};
      p.ins[2] = (ladle_pinstr){LADLE_P_BINARY, LADLE_OP_SUB, 0, 1, f64, NULL, 0};
      p.ins[3] = (ladle_pinstr){LADLE_P_BINARY, LADLE_OP_MUL, 2, 2, f64, NULL, 0};
      st = s->be->eval_program(&s->k, &p, &x, 1, &sq, err);
    }
    if (st == LADLE_OK) st = s->be->reduce(&s->k, LADLE_REDUCE_SUM, &sq, &m2, err);
    if (st == LADLE_OK) st = host_value(s, &m2, &mv, &m_ok, err);
  }
  if (st == LADLE_OK) st = ladle_column_alloc(f64, 1, true, 0, out, err);
  if (st == LADLE_OK) {
    double dof = cv - (double)e->aopts.ddof;
    bool valid = c_ok && m_ok && dof > 0;
    double v = valid ? mv / dof : 0;
    LADLE_COL_MUT(out, double)[0] = e->op == LADLE_AGG_STD ? sqrt(v) : v;
    if (!valid) ladle_bit_set(LADLE_COL_VALIDITY_MUT(out), 0, false);
    ladle_column_finish_nulls(out);
  }
  ladle_column_release(&mean);
  ladle_column_release(&x);
  ladle_column_release(&sum);
  ladle_column_release(&cnt);
  ladle_column_release(&sq);
  ladle_column_release(&m2);
  return st;
}

ladle_status exec_columns_agg(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                              ladle_column *out, ladle_error *err) {
  char tn[48];
  if (e->kind == LADLE_EX_LEN || (e->kind == LADLE_EX_AGG && e->op == LADLE_AGG_LEN)) {
    if (e->type.id != LADLE_TYPE_UINT32 || t->num_rows > (int64_t)UINT32_MAX)
      return ladle_err_set(err, LADLE_ENOTSUP, "len of %lld rows as %s on the column kernels",
                           (long long)t->num_rows, type_name(e->type, tn, sizeof tn));
    LADLE_RETURN_NOT_OK(ladle_column_alloc(e->type, 1, false, 0, out, err));
    LADLE_COL_MUT(out, uint32_t)[0] = (uint32_t)t->num_rows;
    return LADLE_OK;
  }
  ladle_column in;
  LADLE_RETURN_NOT_OK(ladle_eval_full(s, e->args[0], t, NULL, false, &in, err));
  if (e->kind == LADLE_EX_AGG && (e->op == LADLE_AGG_VAR || e->op == LADLE_AGG_STD)) {
    ladle_status st = var_whole(s, e, &in, out, err);
    ladle_column_release(&in);
    return st;
  }
  reducible r = {&in, NULL, NULL, 0};
  ladle_status st = agg_of(s, e, (ladle_agg_op)e->op, &r, out, err);
  ladle_column_release(&in);
  return st;
}

/* ------------------------------------------------------------ row programs */

typedef struct pcomp {
  exec_state *s;
  const ladle_chunk *chunk;
  ladle_program p;
  ladle_column consts[LADLE_PROG_MAX]; /* values computed on the host */
  size_t nconst;
  /* per input, the chunk's column, or -(j + 1): extra[j], a column computed
   * for the program by another kernel (str_match) */
  int64_t col[LADLE_PROG_INPUTS];
  size_t ncols;
  ladle_column extra[LADLE_PROG_INPUTS];
  size_t nextra;
  ladle_status st;
  ladle_error *err;
  bool dry; /* only whether it fits: functions of literals not computed */
  /* column picks between an aggregation and the filter under it: the
   * aggregation's column i is the filter input's remap[i] (NULL: none) */
  const int64_t *remap;
  /* an expression of a group_by's aggregations: each aggregation a column
   * of its own (grouped_of over agg_chunk's rows), the program over them */
  const ladle_dgroups *groups;
  const ladle_chunk *agg_chunk;
  /* running functions (cum_*, shift) restart in each of these groups (a
   * window's; NULL: the chunk is one group) */
  const ladle_dgroups *wgroups;
  bool full; /* an emit failed for the program's size */
} pcomp;

static ladle_status grouped_of(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                               const ladle_dgroups *g, ladle_column *out, ladle_error *err);

/* Running function e (cum_*, shift: running_why said it fits) of its row-wise
 * argument over the chunk's rows, restarting in each of groups g (NULL: one
 * group): the device's cumulative, or shift_rows and take. */
static ladle_status running_of(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                               const ladle_dgroups *g, ladle_column *out, ladle_error *err) {
  ladle_column in;
  if (e->args[0]->has_window) {
    /* of running functions (in the same groups): a program of its own */
    bool done = false;
    LADLE_RETURN_NOT_OK(program_of(s, e->args[0], chunk, g, &in, &done, err));
    if (!done) return too_big(s, "a running function's argument", "columns", err);
  } else {
    LADLE_RETURN_NOT_OK(ladle_eval_chunk(s, e->args[0], chunk, &in, err));
  }
  ladle_status st;
  if (e->op != LADLE_CUM_SHIFT) {
    st = s->be->cumulative(&s->k, &in, g, e->op, e->descending, out, err);
  } else {
    ladle_column idx;
    st = s->be->shift_rows(&s->k, in.length, g, e->offset, &idx, err);
    if (st == LADLE_OK) {
      st = s->be->take(&s->k, &in, &idx, out, err);
      ladle_column_release(&idx);
    }
  }
  ladle_column_release(&in);
  return st;
}

/* LADLE_ENOTSUP: `what` does not fit one row program */
static ladle_status too_big(const exec_state *s, const char *what, const char *inputs,
                            ladle_error *err) {
  return ladle_err_set(err, LADLE_ENOTSUP,
                       "device '%s:%d': %s of more than %d operations or %d %s (one row "
                       "program) has no GPU path yet",
                       s->be->name, s->k.device_id, what, LADLE_PROG_MAX, LADLE_PROG_INPUTS,
                       inputs);
}

/* -1 for an expression too big for one program (c->full: its operands may
 * still each fit one) */
static int full(pcomp *c) {
  c->full = true;
  return -1;
}

static int emit_ins(pcomp *c, ladle_pcode code, int op, int a, int b, ladle_dtype t,
                    const ladle_column *v) {
  if (c->p.n == LADLE_PROG_MAX) return full(c);
  ladle_pinstr *in = &c->p.ins[c->p.n];
  in->code = code;
  in->op = op;
  in->a = a;
  in->b = b;
  in->type = t;
  in->value = v;
  return (int)c->p.n++;
}

static int emit(pcomp *c, const ladle_bexpr *e);

/* emit, with an untyped null (a when without otherwise) as a null of type t */
static int emit_typed(pcomp *c, const ladle_bexpr *e, ladle_dtype t) {
  if (e->type.id != LADLE_TYPE_NULL || ladle_dtype_equal(t, e->type)) return emit(c, e);
  if (c->nconst == LADLE_PROG_MAX) return full(c);
  const ladle_column *v = NULL;
  if (!c->dry) {
    ladle_column *n = &c->consts[c->nconst];
    c->st = ladle_column_alloc(t, 1, true, 0, n, c->err);
    if (c->st != LADLE_OK) return -1;
    ladle_bit_set(LADLE_COL_VALIDITY_MUT(n), 0, false);
    ladle_column_finish_nulls(n);
    v = &c->consts[c->nconst++];
  }
  return emit_ins(c, LADLE_P_CONST, 0, 0, 0, t, v);
}

/* The program's next input: extra[nextra], which the caller has just
 * computed (dry: not), a value of type t; its COL instruction. */
static int extra_input(pcomp *c, ladle_dtype t) {
  size_t j = c->nextra++;
  c->col[c->ncols++] = -(int64_t)j - 1;
  return emit_ins(c, LADLE_P_COL, 0, (int)c->ncols - 1, 0, t, NULL);
}

/* A column expression's column in the chunk the program reads. */
static const ladle_column *chunk_column(const pcomp *c, const ladle_bexpr *col) {
  return &c->chunk->columns[c->remap != NULL ? c->remap[col->col] : col->col];
}

/* A String test's Bool column (str_match or str_compare), an input. */
static int emit_str_test(pcomp *c, const str_test *t) {
  if (c->ncols == LADLE_PROG_INPUTS) return full(c);
  ladle_column *o = &c->extra[c->nextra];
  if (!c->dry && t->col2 != NULL)
    c->st = c->s->be->str_compare(&c->s->k, t->op, chunk_column(c, t->col),
                                  chunk_column(c, t->col2), o, c->err);
  else if (!c->dry)
    c->st = c->s->be->str_match(&c->s->k, t->op, chunk_column(c, t->col), t->pat, t->pat_len, o,
                                c->err);
  return c->st != LADLE_OK ? -1 : extra_input(c, ladle_dtype_make(LADLE_TYPE_BOOL));
}

/* e into instructions; its value's instruction, or -1 (too big, or not a
 * node a program holds; c->st set on an error) */
static int emit(pcomp *c, const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_ALIAS) return emit(c, e->args[0]);
  if (e->kind == LADLE_EX_COL) {
    int64_t col = c->remap != NULL ? c->remap[e->col] : e->col;
    size_t k = 0;
    while (k < c->ncols && c->col[k] != col) k++;
    if (k == c->ncols) {
      if (k == LADLE_PROG_INPUTS) return full(c);
      c->col[c->ncols++] = col;
    }
    return emit_ins(c, LADLE_P_COL, 0, (int)k, 0, e->type, NULL);
  }
  if (e->kind == LADLE_EX_LIT && e->scalar && e->lit.length == 1)
    return emit_ins(c, LADLE_P_CONST, 0, 0, 0, e->type, &e->lit);
  if (c->groups != NULL && (e->kind == LADLE_EX_AGG || e->kind == LADLE_EX_LEN)) {
    /* an aggregation: its column per group, an input */
    if (c->ncols == LADLE_PROG_INPUTS) return full(c);
    c->st = grouped_of(c->s, e, c->agg_chunk, c->groups, &c->extra[c->nextra], c->err);
    return c->st != LADLE_OK ? -1 : extra_input(c, e->type);
  }
  if (e->kind == LADLE_EX_OVER && c->wgroups == NULL) {
    /* a window inside a row-wise expression (x - x.mean().over("g")): its
     * column over the chunk, an input */
    if (c->ncols == LADLE_PROG_INPUTS) return full(c);
    if (!c->dry) c->st = window_of(c->s, e, c->chunk, &c->extra[c->nextra], c->err);
    return c->st != LADLE_OK ? -1 : extra_input(c, e->type);
  }
  if (e->kind == LADLE_EX_CUM && !e->scalar) {
    /* a running function: its column over the chunk (per window group), an input */
    if (c->ncols == LADLE_PROG_INPUTS) return full(c);
    if (!c->dry) c->st = running_of(c->s, e, c->chunk, c->wgroups, &c->extra[c->nextra], c->err);
    return c->st != LADLE_OK ? -1 : extra_input(c, e->type);
  }
  str_test st;
  if (str_pred(c->s, e, &st)) return emit_str_test(c, &st);
  if (exec_host_scalar(e)) {
    if (c->nconst == LADLE_PROG_MAX) return full(c);
    if (c->dry) return emit_ins(c, LADLE_P_CONST, 0, 0, 0, e->type, NULL);
    c->st = ladle_eval_chunk(c->s, e, NULL, &c->consts[c->nconst], c->err);
    if (c->st != LADLE_OK) return -1;
    const ladle_column *v = &c->consts[c->nconst++];
    return emit_ins(c, LADLE_P_CONST, 0, 0, 0, v->type, v);
  }
  if (e->kind == LADLE_EX_BINARY) {
    int a = emit(c, e->args[0]);
    int b = a < 0 ? -1 : emit(c, e->args[1]);
    return b < 0 ? -1 : emit_ins(c, LADLE_P_BINARY, e->op, a, b, e->type, NULL);
  }
  if (e->kind == LADLE_EX_CAST && ladle_cast_lossless(e->args[0]->type, e->type)) {
    int a = emit(c, e->args[0]);
    return a < 0 ? -1 : emit_ins(c, LADLE_P_CAST, 0, a, a, e->type, NULL);
  }
  if (e->kind == LADLE_EX_FUNC && fusable_func(e->op) &&
      e->nargs == (e->op == LADLE_FN_FILL_NULL ? 2u : 1u)) {
    int a = emit(c, e->args[0]);
    int b = a < 0 || e->nargs < 2 ? a : emit(c, e->args[1]);
    return b < 0 ? -1 : emit_ins(c, LADLE_P_FUNC, e->op, a, b, e->type, NULL);
  }
  if (e->kind == LADLE_EX_WHEN && e->nargs >= 3 && e->nargs % 2 == 1) {
    /* when(c0).then(x0).when(c1).then(x1).otherwise(y): IF(c0, x0, IF(c1, x1, y)) */
    size_t nb = (e->nargs - 1) / 2;
    int acc = emit_typed(c, e->args[e->nargs - 1], e->type);
    for (size_t k = nb; acc >= 0 && k-- > 0;) {
      int cond = emit(c, e->args[2 * k]);
      int then = cond < 0 ? -1 : emit_typed(c, e->args[2 * k + 1], e->type);
      if (then < 0) return -1;
      int otherwise = acc;
      acc = emit_ins(c, LADLE_P_IF, 0, cond, then, e->type, NULL);
      if (acc >= 0) c->p.ins[acc].c = otherwise;
    }
    return acc;
  }
  const ladle_column *list = is_in_list(c->s, e);
  if (list != NULL) {
    /* x == v0 | x == v1 | ...: null rows stay null, null values match nothing */
    bool str = e->args[0]->type.id == LADLE_TYPE_STRING;
    const ladle_bexpr *x = e->args[0];
    while (x->kind == LADLE_EX_ALIAS) x = x->args[0];
    int xi = str ? 0 : emit(c, x), acc = -1;
    ladle_dtype b = ladle_dtype_make(LADLE_TYPE_BOOL);
    for (int64_t k = 0; xi >= 0 && k < list->length; k++) {
      if (!ladle_column_valid(list, k)) continue;
      int eq;
      if (str) {
        str_test eqs = {
            x, NULL, LADLE_STR_EQ, ladle_str_ptr(list, k), (size_t)ladle_str_len(list, k), {0}};
        eq = emit_str_test(c, &eqs);
      } else {
        if (c->nconst == LADLE_PROG_MAX) return full(c);
        const ladle_column *v = NULL;
        if (!c->dry) {
          c->st = ladle_column_slice(list, k, 1, &c->consts[c->nconst], c->err);
          if (c->st != LADLE_OK) return -1;
          v = &c->consts[c->nconst++];
        }
        int vi = emit_ins(c, LADLE_P_CONST, 0, 0, 0, x->type, v);
        eq = vi < 0 ? -1 : emit_ins(c, LADLE_P_BINARY, LADLE_OP_EQ, xi, vi, b, NULL);
      }
      acc = eq < 0 ? -1 : acc < 0 ? eq : emit_ins(c, LADLE_P_BINARY, LADLE_OP_OR, acc, eq, b, NULL);
      if (acc < 0) return -1;
    }
    return acc;
  }
  if (e->kind == LADLE_EX_FUNC && e->op == LADLE_FN_IS_BETWEEN && e->nargs == 3) {
    int lo, hi;
    exec_between_ops(e->fopts.closed, &lo, &hi);
    ladle_dtype b = ladle_dtype_make(LADLE_TYPE_BOOL);
    int x = emit(c, e->args[0]);
    int l = x < 0 ? -1 : emit(c, e->args[1]);
    int h = l < 0 ? -1 : emit(c, e->args[2]);
    if (h < 0) return -1;
    int ge = emit_ins(c, LADLE_P_BINARY, lo, x, l, b, NULL);
    int le = ge < 0 ? -1 : emit_ins(c, LADLE_P_BINARY, hi, x, h, b, NULL);
    return le < 0 ? -1 : emit_ins(c, LADLE_P_BINARY, LADLE_OP_AND, ge, le, b, NULL);
  }
  return -1;
}

/* A compiler of one row program over chunk's columns (pcomp_free ends it). */
static pcomp *pcomp_new(exec_state *s, const ladle_chunk *chunk, ladle_error *err) {
  pcomp *c = calloc(1, sizeof *c);
  if (c != NULL) {
    c->s = s;
    c->chunk = chunk;
    c->err = err;
  }
  return c;
}

/* the program's input columns, in its COL order, into cols */
static void pcomp_inputs(const pcomp *c, const ladle_chunk *chunk, ladle_column *cols) {
  for (size_t k = 0; k < c->ncols; k++)
    cols[k] = c->col[k] >= 0 ? chunk->columns[c->col[k]] : c->extra[-c->col[k] - 1];
}

static void pcomp_free(pcomp *c) {
  for (size_t k = 0; k < c->nconst; k++) ladle_column_release(&c->consts[k]);
  for (size_t k = 0; k < c->nextra; k++) ladle_column_release(&c->extra[k]);
  free(c);
}

ladle_status exec_columns_program(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                                  ladle_column *out, bool *done, ladle_error *err) {
  return program_of(s, e, chunk, NULL, out, done, err);
}

static ladle_status program_of(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                               const ladle_dgroups *wg, ladle_column *out, bool *done,
                               ladle_error *err) {
  *done = false;
  if (s->be->eval_program == NULL || chunk == NULL || e->scalar) return LADLE_OK;
  pcomp *c = pcomp_new(s, chunk, err);
  if (c == NULL) return LADLE_OOM(err, "row program");
  c->wgroups = wg;
  int last = emit(c, e);
  ladle_status st = c->st;
  if (st == LADLE_OK && last >= 0 && c->p.n == 1 && c->nextra == 1) {
    ladle_column_copy_ref(&c->extra[0], out); /* the predicate alone: its column */
    *done = true;
  } else if (st == LADLE_OK && last >= 0 && c->ncols > 0) {
    ladle_column in[LADLE_PROG_INPUTS];
    pcomp_inputs(c, chunk, in);
    st = s->be->eval_program(&s->k, &c->p, in, c->ncols, out, err);
    *done = st == LADLE_OK;
  } else if (st == LADLE_OK && c->full && e->kind == LADLE_EX_BINARY && !e->has_window &&
             takes_binary(s, e->op, e->args[0]->type, e->args[1]->type, e->type)) {
    /* too big for one program (TPC-H q19's predicate): each operand its own
     * program, then the operation over their columns */
    ladle_column a, b;
    st = ladle_eval_chunk(s, e->args[0], chunk, &a, err);
    if (st == LADLE_OK) {
      st = ladle_eval_chunk(s, e->args[1], chunk, &b, err);
      if (st == LADLE_OK) {
        st = s->be->binary(&s->k, e->op, &a, &b, e->type, out, err);
        ladle_column_release(&b);
      }
      ladle_column_release(&a);
    }
    *done = st == LADLE_OK;
  } else if (st == LADLE_OK && (s->be->func == NULL || e->has_window)) {
    /* node by node would need the kernels a GPU has only inside programs
     * (running functions: only as a program's inputs) */
    st = too_big(s, "an expression", "columns", err);
  }
  pcomp_free(c);
  return st;
}

/* ---------------------------------------- aggregations over a filter */

/* e stripped of aliases */
static const ladle_bexpr *unalias(const ladle_bexpr *e) {
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  return e;
}

/* The program where(pred, x) (x NULL: where(pred, pred), whose valid rows
 * are the kept ones) into c; false when it does not fit one. */
static bool emit_where(pcomp *c, const ladle_bexpr *pred, const ladle_bexpr *x,
                       const int64_t *remap) {
  c->remap = NULL;
  int p = emit(c, pred);
  c->remap = remap;
  int v = p < 0 ? -1 : x == NULL ? p : emit(c, x);
  c->remap = NULL;
  if (v < 0) return false;
  ladle_dtype t = x == NULL ? pred->type : x->type;
  return emit_ins(c, LADLE_P_WHERE, 0, p, v, t, NULL) >= 0;
}

/* One aggregation of the select over the filter's input rows where pred
 * holds: the reduce of the program where(pred, arg). */
static ladle_status agg_where(exec_state *s, const ladle_bexpr *e, const ladle_bexpr *pred,
                              const int64_t *remap, const ladle_table *t, ladle_column *out,
                              ladle_error *err) {
  const ladle_bexpr *a = unalias(e);
  bool len = a->kind == LADLE_EX_LEN || a->op == LADLE_AGG_LEN;
  ladle_agg_op op = len ? LADLE_AGG_COUNT : (ladle_agg_op)a->op;
  pcomp *c = pcomp_new(s, &t->chunks[0], err);
  if (c == NULL) return LADLE_OOM(err, "row program");
  ladle_status st = LADLE_OK;
  if (!emit_where(c, pred, len ? NULL : a->args[0], remap))
    st = c->st != LADLE_OK ? c->st
                           : ladle_err_set(err, LADLE_EINVAL,
                                           "internal: a filtered aggregation "
                                           "that fit a program no longer does");
  ladle_column cols[LADLE_PROG_INPUTS];
  pcomp_inputs(c, &t->chunks[0], cols);
  /* sums and counts straight from the program, with no column at all */
  bool direct = s->be->reduce_program != NULL &&
                (op == LADLE_AGG_SUM || op == LADLE_AGG_COUNT || op == LADLE_AGG_MEAN);
  reducible r = {NULL, &c->p, cols, c->ncols};
  ladle_column in;
  if (st == LADLE_OK && !direct) {
    st = s->be->eval_program(&s->k, &c->p, cols, c->ncols, &in, err);
    if (st == LADLE_OK) r.col = &in;
  }
  if (st == LADLE_OK) st = agg_of(s, a, op, &r, out, err);
  if (r.col != NULL) ladle_column_release(&in);
  pcomp_free(c);
  return st;
}

ladle_status exec_columns_select_filter(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                        bool *done, ladle_error *err) {
  *done = false;
  const ladle_plan *p = pn->lp;
  if (p->kind != LADLE_NODE_SELECT || pn->ninputs != 1 || p->nexprs == 0 ||
      s->be->eval_program == NULL)
    return LADLE_OK;
  /* column picks between (q6: the columns the sum reads), composed into
   * one map to the filter input's columns */
  const ladle_pnode *f = pn->inputs[0];
  size_t nmap = p->inputs[0]->schema.n;
  int64_t *map = malloc(LADLE_MAX(nmap, 1) * sizeof *map);
  if (map == NULL) return LADLE_OOM(err, "aggregations over a filter");
  for (size_t i = 0; i < nmap; i++) map[i] = (int64_t)i;
  bool picks = true;
  while (picks && f->ninputs == 1 && f->op != LADLE_POP_FILTER) {
    const ladle_plan *q = f->lp;
    if (f->op == LADLE_POP_PROJECT) {
      for (size_t i = 0; i < nmap; i++) map[i] = q->out_map[map[i]];
    } else if (f->op == LADLE_POP_PROJECTION && q->kind == LADLE_NODE_SELECT) {
      for (size_t i = 0; i < nmap && picks; i++) {
        const ladle_bexpr *x = unalias(q->exprs[map[i]]);
        if (x->kind != LADLE_EX_COL)
          picks = false;
        else
          map[i] = x->col;
      }
    } else {
      picks = false;
    }
    if (picks) f = f->inputs[0];
  }
  if (!picks || f->op != LADLE_POP_FILTER || f->late != NULL || f->defer) {
    free(map);
    return LADLE_OK;
  }
  const ladle_bexpr *pred = f->lp->exprs[0];
  char buf[160];
  for (size_t i = 0; i < p->nexprs; i++) {
    const ladle_bexpr *a = unalias(p->exprs[i]);
    bool fits = p->exprs[i]->scalar && whole_agg(s, p->exprs[i], buf, sizeof buf) == NULL &&
                (a->kind == LADLE_EX_LEN ||
                 (a->kind == LADLE_EX_AGG &&
                  (a->op == LADLE_AGG_SUM || a->op == LADLE_AGG_MIN || a->op == LADLE_AGG_MAX ||
                   a->op == LADLE_AGG_COUNT || a->op == LADLE_AGG_MEAN || a->op == LADLE_AGG_LEN)));
    /* the select reads the filter's output: its columns are the input's
     * (a filter keeps its input's schema) */
    pcomp dry;
    memset(&dry, 0, sizeof dry);
    dry.s = s;
    dry.dry = true;
    bool len = a->kind == LADLE_EX_LEN || a->op == LADLE_AGG_LEN;
    if (!fits || !emit_where(&dry, pred, len ? NULL : a->args[0], map)) {
      free(map);
      return LADLE_OK;
    }
  }
  ladle_table *in;
  ladle_status rst = exec_input(s, f, &in, NULL, err);
  if (rst != LADLE_OK) {
    free(map);
    return rst;
  }
  ladle_table *o = NULL;
  ladle_status st = one_partition(in, err);
  if (st == LADLE_OK) st = ladle_table_create(&p->schema, 1, &o, err);
  if (st == LADLE_OK) {
    o->chunks[0].length = 1;
    for (size_t i = 0; i < p->nexprs && st == LADLE_OK; i++)
      st = agg_where(s, p->exprs[i], pred, map, in, &o->chunks[0].columns[i], err);
    ladle_table_seal(o);
  }
  ladle_table_release(in);
  free(map);
  if (st != LADLE_OK) {
    ladle_table_release(o);
    return st;
  }
  *out = o;
  *done = true;
  return LADLE_OK;
}

/* ------------------------------------------------------------ group_by */

/* One aggregation of a group_by (grouped_agg said which) over the groups:
 * its argument compiled into a row program that grouped_reduce evaluates
 * at each group's rows (no column of it is written). */
/* n_unique per group of g: the (group, value) pairs grouped, each pair
 * group's group taken at its first row, and those grouped again: groups are
 * numbered by first row, and a group's first pair holds its first row, so
 * the second grouping numbers them as g does; its lengths are the counts.
 * A null is one value, as in Polars. */
static ladle_status grouped_n_unique(exec_state *s, const ladle_bexpr *x, const ladle_chunk *chunk,
                                     const ladle_dgroups *g, ladle_column *out, ladle_error *err) {
  ladle_column v, keys[2], gp;
  ladle_dgroups pairs, again;
  memset(&pairs, 0, sizeof pairs);
  memset(&again, 0, sizeof again);
  LADLE_RETURN_NOT_OK(ladle_eval_chunk(s, x, chunk, &v, err));
  ladle_status st = LADLE_OK;
  keys[0] = g->ids;
  if (g->sel.owners[1] != NULL) { /* the grouped rows' values, in the selection's order */
    st = s->be->take(&s->k, &v, &g->sel, &keys[1], err);
    ladle_column_release(&v);
  } else {
    keys[1] = v;
  }
  if (st != LADLE_OK) return st;
  st = s->be->group_keys(&s->k, keys, 2, NULL, &pairs, err);
  ladle_column_release(&keys[1]);
  if (st == LADLE_OK) st = s->be->take(&s->k, &g->ids, &pairs.first, &gp, err);
  ladle_dgroups_release(&pairs);
  if (st != LADLE_OK) return st;
  st = s->be->group_keys(&s->k, &gp, 1, NULL, &again, err);
  ladle_column_release(&gp);
  if (st == LADLE_OK && again.ngroups != g->ngroups)
    st = ladle_err_set(err, LADLE_EINVAL, "internal: n_unique regrouped %lld groups into %lld",
                       (long long)g->ngroups, (long long)again.ngroups);
  if (st == LADLE_OK)
    st = s->be->grouped_reduce(&s->k, LADLE_REDUCE_COUNT, NULL, NULL, 0, &again, out, err);
  ladle_dgroups_release(&again);
  return st;
}

/* first() or last() per group: x's value (null included) at each group's
 * first row (g->first), or at its last: rows[offsets[k + 1] - 1], the CSR's
 * rows ascending within a group (and already the chunk's rows where g has a
 * sel). */
static ladle_status grouped_first_last(exec_state *s, const ladle_bexpr *a,
                                       const ladle_chunk *chunk, const ladle_dgroups *g,
                                       ladle_column *out, ladle_error *err) {
  ladle_column v;
  LADLE_RETURN_NOT_OK(ladle_eval_chunk(s, a->args[0], chunk, &v, err));
  ladle_status st;
  if (a->op == LADLE_AGG_FIRST) {
    st = s->be->take(&s->k, &v, &g->first, out, err);
  } else {
    ladle_dtype i64 = ladle_dtype_make(LADLE_TYPE_INT64);
    ladle_column ends, one, pos, last;
    memset(&one, 0, sizeof one);
    memset(&pos, 0, sizeof pos);
    memset(&last, 0, sizeof last);
    st = ladle_column_slice(&g->offsets, 1, g->ngroups, &ends, err);
    if (st == LADLE_OK) {
      st = ladle_column_alloc(i64, 1, false, 0, &one, err);
      if (st == LADLE_OK) {
        LADLE_COL_MUT(&one, int64_t)[0] = 1;
        ladle_program p;
        memset(&p, 0, sizeof p);
        p.n = 3;
        p.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, i64, NULL, 0};
        p.ins[1] = (ladle_pinstr){LADLE_P_CONST, 0, 0, 0, i64, &one, 0};
        p.ins[2] = (ladle_pinstr){LADLE_P_BINARY, LADLE_OP_SUB, 0, 1, i64, NULL, 0};
        st = s->be->eval_program(&s->k, &p, &ends, 1, &pos, err);
      }
      if (st == LADLE_OK) st = s->be->take(&s->k, &g->rows, &pos, &last, err);
      if (st == LADLE_OK) st = s->be->take(&s->k, &v, &last, out, err);
      ladle_column_release(&ends);
    }
    ladle_column_release(&one);
    ladle_column_release(&pos);
    ladle_column_release(&last);
  }
  ladle_column_release(&v);
  return st;
}

/* var(x, ddof) or std per group (var_fits said it fits), in two passes as
 * the CPU's group_by: each group's mean (grouped MEAN of x in Float64), then
 * the sum of squared deviations from it (each row's group mean taken by its
 * group id), M2 / (count - ddof), null where count <= ddof, std its square
 * root. The groups cover every row of the chunk (no sel: a group_by with
 * var/std does not fuse the filter under it). */
static ladle_status grouped_var(exec_state *s, const ladle_bexpr *a, const ladle_chunk *chunk,
                                const ladle_dgroups *g, ladle_column *out, ladle_error *err) {
  if (g->sel.owners[1] != NULL)
    return ladle_err_set(err, LADLE_ENOTSUP, "a grouped %s over rows picked by a filter",
                         ladle_agg_name((ladle_agg_op)a->op));
  ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64), u32 = ladle_dtype_make(LADLE_TYPE_UINT32),
              i64 = ladle_dtype_make(LADLE_TYPE_INT64), b = ladle_dtype_make(LADLE_TYPE_BOOL);
  pcomp *c = pcomp_new(s, chunk, err);
  if (c == NULL) return LADLE_OOM(err, "row program");
  int x = emit(c, a->args[0]);
  if (x >= 0 && a->args[0]->type.id != LADLE_TYPE_FLOAT64)
    x = emit_ins(c, LADLE_P_CAST, 0, x, x, f64, NULL);
  ladle_status st = c->st;
  if (st == LADLE_OK && (x < 0 || c->ncols == 0 || c->ncols == LADLE_PROG_INPUTS))
    st = too_big(s, "an aggregation's argument", "columns", err);
  ladle_column mean, cnt, ids, mrow, m2, consts[2];
  memset(&mean, 0, sizeof mean);
  memset(&cnt, 0, sizeof cnt);
  memset(&ids, 0, sizeof ids);
  memset(&mrow, 0, sizeof mrow);
  memset(&m2, 0, sizeof m2);
  memset(consts, 0, sizeof consts);
  ladle_column cols[LADLE_PROG_INPUTS];
  if (st == LADLE_OK) {
    pcomp_inputs(c, chunk, cols);
    st = s->be->grouped_reduce(&s->k, LADLE_REDUCE_MEAN, &c->p, cols, c->ncols, g, &mean, err);
  }
  if (st == LADLE_OK)
    st = s->be->grouped_reduce(&s->k, LADLE_REDUCE_COUNT, &c->p, cols, c->ncols, g, &cnt, err);
  if (st == LADLE_OK) { /* each row's group mean */
    ladle_program pg;
    memset(&pg, 0, sizeof pg);
    pg.n = 2;
    pg.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, u32, NULL, 0};
    pg.ins[1] = (ladle_pinstr){LADLE_P_CAST, 0, 0, 0, i64, NULL, 0};
    st = s->be->eval_program(&s->k, &pg, &g->ids, 1, &ids, err);
  }
  if (st == LADLE_OK) st = s->be->take(&s->k, &mean, &ids, &mrow, err);
  if (st == LADLE_OK) { /* (x - mean)^2 summed per group */
    cols[c->ncols] = mrow;
    int m = emit_ins(c, LADLE_P_COL, 0, (int)c->ncols, 0, f64, NULL);
    int d = m < 0 ? -1 : emit_ins(c, LADLE_P_BINARY, LADLE_OP_SUB, x, m, f64, NULL);
    int sq = d < 0 ? -1 : emit_ins(c, LADLE_P_BINARY, LADLE_OP_MUL, d, d, f64, NULL);
    st = sq < 0 ? too_big(s, "an aggregation's argument", "columns", err)
                : s->be->grouped_reduce(&s->k, LADLE_REDUCE_SUM, &c->p, cols, c->ncols + 1, g, &m2,
                                        err);
  }
  if (st == LADLE_OK) {
    /* M2 / (count - ddof) where count > ddof, else null; std: its square root */
    st = ladle_column_alloc(f64, 1, false, 0, &consts[0], err);
    if (st == LADLE_OK) {
      LADLE_COL_MUT(&consts[0], double)[0] = (double)a->aopts.ddof;
      st = ladle_column_alloc(f64, 1, true, 0, &consts[1], err);
    }
    if (st == LADLE_OK) {
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(&consts[1]), 0, false);
      ladle_column_finish_nulls(&consts[1]);
      ladle_program p;
      memset(&p, 0, sizeof p);
      p.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, f64, NULL, 0};
      p.ins[1] = (ladle_pinstr){LADLE_P_COL, 0, 1, 0, u32, NULL, 0};
      p.ins[2] = (ladle_pinstr){LADLE_P_CAST, 0, 1, 1, f64, NULL, 0};
      p.ins[3] = (ladle_pinstr){LADLE_P_CONST, 0, 0, 0, f64, &consts[0], 0};
      p.ins[4] = (ladle_pinstr){LADLE_P_BINARY, LADLE_OP_GT, 2, 3, b, NULL, 0};
      p.ins[5] = (ladle_pinstr){LADLE_P_BINARY, LADLE_OP_SUB, 2, 3, f64, NULL, 0};
      p.ins[6] = (ladle_pinstr){LADLE_P_BINARY, LADLE_OP_TRUE_DIV, 0, 5, f64, NULL, 0};
      p.ins[7] = (ladle_pinstr){LADLE_P_CONST, 0, 0, 0, f64, &consts[1], 0};
      p.ins[8] = (ladle_pinstr){LADLE_P_IF, 0, 4, 6, f64, NULL, 7};
      p.n = 9;
      if (a->op == LADLE_AGG_STD)
        p.ins[p.n++] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_SQRT, 8, 8, f64, NULL, 0};
      ladle_column in[2] = {m2, cnt};
      st = s->be->eval_program(&s->k, &p, in, 2, out, err);
    }
  }
  ladle_column_release(&consts[0]);
  ladle_column_release(&consts[1]);
  ladle_column_release(&mean);
  ladle_column_release(&cnt);
  ladle_column_release(&ids);
  ladle_column_release(&mrow);
  ladle_column_release(&m2);
  pcomp_free(c);
  return st;
}

static ladle_status grouped_of(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                               const ladle_dgroups *g, ladle_column *out, ladle_error *err) {
  const ladle_bexpr *a = unalias(e);
  ladle_status st;
  if (a->kind == LADLE_EX_AGG && a->op == LADLE_AGG_N_UNIQUE) {
    st = grouped_n_unique(s, a->args[0], chunk, g, out, err);
  } else if (a->kind == LADLE_EX_AGG && (a->op == LADLE_AGG_VAR || a->op == LADLE_AGG_STD)) {
    st = grouped_var(s, a, chunk, g, out, err);
  } else if (a->kind == LADLE_EX_AGG && (a->op == LADLE_AGG_FIRST || a->op == LADLE_AGG_LAST)) {
    st = grouped_first_last(s, a, chunk, g, out, err);
  } else if (a->kind == LADLE_EX_LEN || a->op == LADLE_AGG_LEN) {
    st = s->be->grouped_reduce(&s->k, LADLE_REDUCE_COUNT, NULL, NULL, 0, g, out, err);
  } else {
    ladle_reduce_op op = LADLE_REDUCE_SUM;
    reduce_op_of((ladle_agg_op)a->op, &op);
    pcomp *c = pcomp_new(s, chunk, err);
    if (c == NULL) return LADLE_OOM(err, "row program");
    int last = emit(c, a->args[0]);
    st = c->st;
    if (st == LADLE_OK && (last < 0 || c->ncols == 0))
      st = too_big(s, "an aggregation's argument", "columns", err);
    if (st == LADLE_OK) {
      ladle_column cols[LADLE_PROG_INPUTS];
      pcomp_inputs(c, chunk, cols);
      st = s->be->grouped_reduce(&s->k, op, &c->p, cols, c->ncols, g, out, err);
    }
    pcomp_free(c);
  }
  if (st == LADLE_OK) st = plan_typed("a grouped aggregation", out, a->type, err);
  return st;
}

/* The nodes between a GROUP_BY and a FILTER under it that a filter commutes
 * with (column picks, selects and with_columns of row-wise expressions):
 * their count, up to `cap`, into chain (top first), and the filter; NULL
 * when the group_by's input is not such a chain over a plain filter. */
static const ladle_pnode *filter_under(const ladle_pnode *pn, const ladle_pnode **chain, size_t cap,
                                       size_t *n) {
  *n = 0;
  const ladle_pnode *f = pn->inputs[0];
  while (f->ninputs == 1 && f->op != LADLE_POP_FILTER && !f->host) {
    bool row_wise = f->op == LADLE_POP_PROJECT;
    if (f->op == LADLE_POP_PROJECTION) {
      row_wise = f->lp->nexprs > 0;
      for (size_t i = 0; i < f->lp->nexprs; i++) row_wise = row_wise && !f->lp->exprs[i]->scalar;
    }
    const exec_operator *op = exec_operator_of(f->op);
    if (!row_wise || *n == cap || op == NULL || op->stream == NULL || op->stream->morsel == NULL ||
        op->stream->open != NULL)
      return NULL;
    chain[(*n)++] = f;
    f = f->inputs[0];
  }
  if (f->op != LADLE_POP_FILTER || f->late != NULL || f->defer || f->host) return NULL;
  return f;
}

/* The group_by's input over a filter, without compacting it: the filter's
 * input and the rows its predicate keeps (*sel), the nodes between run over
 * every row (*chunk: their output, owned; a filter commutes with row-wise
 * nodes, and a program over all rows costs less than compacting each column
 * the group_by reads). *done false: not that shape. */
static ladle_status input_over_filter(exec_state *s, const ladle_pnode *pn, ladle_table **base,
                                      ladle_chunk *chunk, ladle_column *sel, bool *done,
                                      ladle_error *err) {
  *done = false;
  enum { CAP = 16 };
  const ladle_pnode *chain[CAP];
  size_t n;
  const ladle_pnode *f = filter_under(pn, chain, CAP, &n);
  if (f == NULL || s->be->select == NULL) return LADLE_OK;
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_exec_node(s, f->inputs[0], &t, NULL, err));
  double t0 = LADLE_PHASE_START();
  ladle_status st = one_partition(t, err);
  ladle_column m;
  memset(&m, 0, sizeof m);
  if (st == LADLE_OK) st = ladle_eval_chunk(s, f->lp->exprs[0], &t->chunks[0], &m, err);
  if (st == LADLE_OK) st = s->be->select(&s->k, &m, sel, err);
  ladle_column_release(&m);
  /* the chain, bottom up, over the whole chunk */
  ladle_chunk cur = {0};
  size_t ncur = t->schema.n;
  if (st == LADLE_OK) {
    cur.length = t->chunks[0].length;
    cur.columns = calloc(LADLE_MAX(ncur, 1), sizeof *cur.columns);
    if (cur.columns == NULL) st = LADLE_OOM(err, "group_by input");
    for (size_t i = 0; st == LADLE_OK && i < ncur; i++)
      ladle_column_copy_ref(&t->chunks[0].columns[i], &cur.columns[i]);
  }
  for (size_t k = n; st == LADLE_OK && k > 0; k--) {
    const ladle_pnode *c = chain[k - 1];
    size_t nn = c->schema->n;
    ladle_chunk next = {0};
    next.columns = calloc(LADLE_MAX(nn, 1), sizeof *next.columns);
    if (next.columns == NULL) {
      st = LADLE_OOM(err, "group_by input");
      break;
    }
    /* on failure a morsel leaves out's columns empty */
    st = exec_operator_of(c->op)->stream->morsel(s, c, NULL, NULL, &cur, &next, err);
    ladle_release_columns(cur.columns, ncur); /* and the array */
    cur = next;
    ncur = nn;
  }
  LADLE_PHASE_END("group_by over a filter: predicate and nodes between (device)", cur.length, t0);
  if (st != LADLE_OK) {
    if (cur.columns != NULL) ladle_release_columns(cur.columns, ncur);
    ladle_column_release(sel); /* zeroed by the caller when select did not run */
    ladle_table_release(t);
    return st;
  }
  *base = t;
  *chunk = cur;
  *done = true;
  return LADLE_OK;
}

/* An expression of aggregations per group: a row program over the
 * aggregations' columns (grouped_of each). */
static ladle_status grouped_expr(exec_state *s, const ladle_bexpr *e, const ladle_chunk *chunk,
                                 const ladle_dgroups *g, ladle_column *out, ladle_error *err) {
  pcomp *c = pcomp_new(s, NULL, err);
  if (c == NULL) return LADLE_OOM(err, "row program");
  c->groups = g;
  c->agg_chunk = chunk;
  int last = emit(c, e);
  ladle_status st = c->st;
  if (st == LADLE_OK && (last < 0 || c->nextra == 0))
    st = too_big(s, "an expression of aggregations", "aggregations", err);
  if (st == LADLE_OK) {
    ladle_column cols[LADLE_PROG_INPUTS];
    pcomp_inputs(c, NULL, cols);
    st = s->be->eval_program(&s->k, &c->p, cols, c->ncols, out, err);
  }
  pcomp_free(c);
  if (st == LADLE_OK) st = plan_typed("an expression of aggregations", out, e->type, err);
  return st;
}

/* the group_by of chunk's rows (sel NULL: all; else those rows) */
static ladle_status group_chunk(exec_state *s, const ladle_pnode *pn, const ladle_chunk *chunk,
                                const ladle_column *sel, ladle_table **out, ladle_error *err);

/* Whether e holds a var or std aggregation. */
static bool has_moments(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_AGG && (e->op == LADLE_AGG_VAR || e->op == LADLE_AGG_STD)) return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (has_moments(e->args[i])) return true;
  return false;
}

ladle_status exec_columns_group_by(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                   ladle_error *err) {
  ladle_table *base = NULL;
  ladle_chunk chunk = {0};
  ladle_column sel;
  memset(&sel, 0, sizeof sel);
  bool done = false;
  /* var/std read every grouped row twice by its place: the filter under is
   * compacted first (no sel) */
  bool moments = false;
  for (size_t i = 0; i < pn->lp->nexprs; i++) moments = moments || has_moments(pn->lp->exprs[i]);
  if (!moments) LADLE_RETURN_NOT_OK(input_over_filter(s, pn, &base, &chunk, &sel, &done, err));
  ladle_status st;
  if (done) {
    st = group_chunk(s, pn, &chunk, &sel, out, err);
    ladle_release_columns(chunk.columns, pn->inputs[0]->schema->n);
    ladle_column_release(&sel);
    ladle_table_release(base);
    return st;
  }
  ladle_table *in;
  LADLE_RETURN_NOT_OK(ladle_exec_node(s, pn->inputs[0], &in, NULL, err));
  st = one_partition(in, err);
  if (st == LADLE_OK) st = group_chunk(s, pn, &in->chunks[0], NULL, out, err);
  ladle_table_release(in);
  return st;
}

static ladle_status group_chunk(exec_state *s, const ladle_pnode *pn, const ladle_chunk *chunk,
                                const ladle_column *sel, ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  size_t nk = p->nkeys, na = p->nexprs;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  if (keys == NULL) return LADLE_OOM(err, "group_by keys");
  size_t have = 0;
  ladle_status st = LADLE_OK;
  for (; have < nk && st == LADLE_OK; have++) {
    st = ladle_eval_chunk(s, p->keys[have], chunk, &keys[have], err);
    if (st != LADLE_OK) break;
  }
  ladle_dgroups g;
  memset(&g, 0, sizeof g);
  /* LADLE_TRACE=2: each step's time (every kernel call waits for the device) */
  double t0 = LADLE_PHASE_START();
  if (st == LADLE_OK) st = s->be->group_keys(&s->k, keys, nk, sel, &g, err);
  LADLE_PHASE_END("group_by group_keys (device)", g.nrows, t0);
  ladle_table *o = NULL;
  if (st == LADLE_OK) st = ladle_table_create(&p->schema, 1, &o, err);
  if (st == LADLE_OK) {
    ladle_chunk *oc = &o->chunks[0];
    oc->length = g.ngroups;
    for (size_t i = 0; i < nk && st == LADLE_OK; i++)
      st = s->be->take(&s->k, &keys[i], &g.first, &oc->columns[i], err);
    for (size_t i = 0; i < na && st == LADLE_OK; i++) {
      t0 = LADLE_PHASE_START();
      const ladle_bexpr *a = unalias(p->exprs[i]);
      if (a->kind == LADLE_EX_AGG || a->kind == LADLE_EX_LEN)
        st = grouped_of(s, p->exprs[i], chunk, &g, &oc->columns[nk + i], err);
      else
        st = grouped_expr(s, p->exprs[i], chunk, &g, &oc->columns[nk + i], err);
      LADLE_PHASE_END("group_by grouped_reduce (device)", g.ngroups, t0);
    }
    ladle_table_seal(o);
  }
  ladle_dgroups_release(&g);
  for (size_t i = 0; i < have; i++) ladle_column_release(&keys[i]);
  free(keys);
  if (st != LADLE_OK) {
    if (o != NULL) ladle_table_release(o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* ------------------------------------------------------------ sort */

/* A one-partition table of `schema` whose every column is c's taken at the
 * Int64 rows `idx` (columns no node above reads stay placeholders). */
static ladle_status take_rows(exec_state *s, const ladle_schema *schema, const ladle_chunk *c,
                              const ladle_column *idx, ladle_table **out, ladle_error *err) {
  ladle_table *o = NULL;
  LADLE_RETURN_NOT_OK(ladle_table_create(schema, 1, &o, err));
  ladle_status st = LADLE_OK;
  o->chunks[0].length = idx->length;
  for (size_t i = 0; i < schema->n && st == LADLE_OK; i++) {
    const ladle_column *src = &c->columns[i];
    if (exec_is_placeholder(src))
      exec_placeholder(&o->chunks[0].columns[i], idx->length); /* unread above */
    else
      st = s->be->take(&s->k, src, idx, &o->chunks[0].columns[i], err);
  }
  ladle_table_seal(o);
  if (st != LADLE_OK) {
    ladle_table_release(o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

ladle_status exec_columns_sort(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                               ladle_error *err) {
  const ladle_plan *p = pn->lp;
  ladle_table *in;
  LADLE_RETURN_NOT_OK(ladle_exec_node(s, pn->inputs[0], &in, NULL, err));
  ladle_status st = one_partition(in, err);
  size_t nk = p->nexprs, have = 0;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  if (keys == NULL && st == LADLE_OK) st = LADLE_OOM(err, "sort keys");
  const ladle_chunk *c = st == LADLE_OK ? &in->chunks[0] : NULL;
  for (; st == LADLE_OK && have < nk; have++) {
    st = ladle_eval_chunk(s, p->exprs[have], c, &keys[have], err);
    if (st != LADLE_OK) break;
  }
  ladle_column perm;
  memset(&perm, 0, sizeof perm);
  double t0 = LADLE_PHASE_START();
  if (st == LADLE_OK)
    st = s->be->sort_perm(&s->k, keys, nk, p->descending, p->nulls_last, &perm, err);
  LADLE_PHASE_END("sort permutation (device)", perm.length, t0);
  for (size_t i = 0; i < have; i++) ladle_column_release(&keys[i]);
  free(keys);
  if (st == LADLE_OK && p->limit >= 0 && p->limit < perm.length) perm.length = p->limit;
  if (st == LADLE_OK) st = take_rows(s, &p->schema, c, &perm, out, err);
  ladle_column_release(&perm);
  ladle_table_release(in);
  return st;
}

/* ------------------------------------------------------------ join */

/* j's pairs reordered by their `by_right` side's row, stably, pairs without
 * one last (a join's maintain_order): the rows as UInt64 (-1 the largest). */
static ladle_status join_pairs_order(exec_state *s, ladle_djoin *j, bool by_right,
                                     ladle_error *err) {
  ladle_column key, perm, l, r;
  ladle_column_copy_ref(by_right ? &j->right : &j->left, &key);
  key.type = ladle_dtype_make(LADLE_TYPE_UINT64);
  bool desc = false, last = true;
  ladle_status st = s->be->sort_perm(&s->k, &key, 1, &desc, &last, &perm, err);
  ladle_column_release(&key);
  if (st != LADLE_OK) return st;
  st = s->be->take(&s->k, &j->left, &perm, &l, err);
  if (st == LADLE_OK) {
    st = s->be->take(&s->k, &j->right, &perm, &r, err);
    if (st == LADLE_OK) {
      ladle_column_release(&j->left);
      ladle_column_release(&j->right);
      j->left = l;
      j->right = r;
    } else {
      ladle_column_release(&l);
    }
  }
  ladle_column_release(&perm);
  return st;
}

/* Output column i of join p: its side's column at the pairs' rows; a
 * coalesced key takes the right key where the left row has none. */
static ladle_status join_column(exec_state *s, const ladle_plan *p, size_t i,
                                const ladle_chunk *const c[2], const ladle_djoin *j,
                                ladle_column *out, ladle_error *err) {
  int64_t m = p->out_map[i];
  const ladle_column *src = m >= 0 ? &c[0]->columns[m] : &c[1]->columns[-m - 1];
  if (exec_is_placeholder(src)) {
    exec_placeholder(out, j->n); /* unread above */
    return LADLE_OK;
  }
  LADLE_RETURN_NOT_OK(s->be->take(&s->k, src, m >= 0 ? &j->left : &j->right, out, err));
  int64_t ck = p->coalesce_rkey[i];
  if (ck < 0) return LADLE_OK;
  ladle_column in[2];
  in[0] = *out;
  ladle_status st = s->be->take(&s->k, &c[1]->columns[ck], &j->right, &in[1], err);
  if (st == LADLE_OK) {
    ladle_dtype t = out->type;
    ladle_program pg;
    memset(&pg, 0, sizeof pg);
    pg.n = 3;
    pg.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, t, NULL, 0};
    pg.ins[1] = (ladle_pinstr){LADLE_P_COL, 0, 1, 0, t, NULL, 0};
    pg.ins[2] = (ladle_pinstr){LADLE_P_FUNC, LADLE_FN_FILL_NULL, 0, 1, t, NULL, 0};
    st = s->be->eval_program(&s->k, &pg, in, 2, out, err);
    ladle_column_release(&in[1]);
  }
  ladle_column_release(&in[0]);
  return st;
}

ladle_status exec_columns_join(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                               ladle_error *err) {
  const ladle_plan *p = pn->lp;
  ladle_table *in[2] = {NULL, NULL};
  ladle_status st = LADLE_OK;
  for (size_t k = 0; k < 2 && st == LADLE_OK; k++) {
    st = ladle_exec_node(s, pn->inputs[k], &in[k], NULL, err);
    if (st == LADLE_OK) st = one_partition(in[k], err);
  }
  bool cross = p->join.how == LADLE_JOIN_CROSS;
  size_t nk = cross ? 0 : p->nkeys, have[2] = {0, 0};
  ladle_column *keys[2] = {calloc(LADLE_MAX(nk, 1), sizeof(ladle_column)),
                           calloc(LADLE_MAX(nk, 1), sizeof(ladle_column))};
  if (st == LADLE_OK && (keys[0] == NULL || keys[1] == NULL)) st = LADLE_OOM(err, "join keys");
  const ladle_chunk *c[2] = {NULL, NULL};
  if (st == LADLE_OK) {
    c[0] = &in[0]->chunks[0];
    c[1] = &in[1]->chunks[0];
  }
  for (size_t k = 0; k < 2 && st == LADLE_OK; k++)
    for (; have[k] < nk; have[k]++) {
      st =
          ladle_eval_chunk(s, (k == 0 ? p->keys : p->rkeys)[have[k]], c[k], &keys[k][have[k]], err);
      if (st != LADLE_OK) break;
    }
  ladle_djoin j;
  memset(&j, 0, sizeof j);
  double t0 = LADLE_PHASE_START();
  if (st == LADLE_OK)
    st = s->be->join_rows(&s->k, keys[0], keys[1], nk, c[0]->length, c[1]->length, p->join.how,
                          p->join.nulls_equal, &j, err);
  LADLE_PHASE_END("join rows (device)", j.n, t0);
  for (size_t k = 0; k < 2; k++) {
    for (size_t i = 0; i < have[k]; i++) ladle_column_release(&keys[k][i]);
    free(keys[k]);
  }
  if (st == LADLE_OK && j.n > 1 && exec_join_reorders(p)) {
    ladle_join_order o = p->join.order;
    st = join_pairs_order(s, &j, o == LADLE_JOIN_ORDER_RIGHT || o == LADLE_JOIN_ORDER_RIGHT_LEFT,
                          err);
  }
  ladle_table *o = NULL;
  if (st == LADLE_OK) st = ladle_table_create(&p->schema, 1, &o, err);
  if (st == LADLE_OK) {
    o->chunks[0].length = j.n;
    t0 = LADLE_PHASE_START();
    for (size_t i = 0; i < p->schema.n && st == LADLE_OK; i++)
      st = join_column(s, p, i, c, &j, &o->chunks[0].columns[i], err);
    LADLE_PHASE_END("join gather (device)", j.n, t0);
    ladle_table_seal(o);
  }
  ladle_djoin_release(&j);
  ladle_table_release(in[0]);
  ladle_table_release(in[1]);
  if (st != LADLE_OK) {
    if (o != NULL) ladle_table_release(o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* ------------------------------------------------------------ slice */

/* Rows [off, off + len) of the one partition on the device: a sequence of
 * row numbers, then each column taken at them (a slice of device buffers
 * would cut validity bits on the host). */
ladle_status exec_columns_slice(exec_state *s, const ladle_pnode *pn, ladle_table *in, int64_t off,
                                int64_t len, ladle_table **out, ladle_error *err) {
  const ladle_plan *p = pn->lp;
  if (in->nchunks == 0) { /* no partition, no row */
    LADLE_RETURN_NOT_OK(ladle_table_create(&p->schema, 0, out, err));
    ladle_table_seal(*out);
    return LADLE_OK;
  }
  ladle_status st = one_partition(in, err);
  ladle_column idx;
  memset(&idx, 0, sizeof idx);
  if (st == LADLE_OK)
    st = s->be->sequence(&s->k, off, len, ladle_dtype_make(LADLE_TYPE_INT64), &idx, err);
  if (st == LADLE_OK) st = take_rows(s, &p->schema, &in->chunks[0], &idx, out, err);
  ladle_column_release(&idx);
  return st;
}

/* ------------------------------------------------------------ distinct */

/* unique(subset, keep): the rows grouped by the subset's columns
 * (group_keys), one row kept per group (first/any: its first row; last: the
 * largest row number, a grouped MAX over the row numbers; none: the first
 * row of the groups of one row), in order of appearance (the kept rows
 * sorted), every column taken at them. */
ladle_status exec_columns_distinct(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                   ladle_error *err) {
  const ladle_plan *p = pn->lp;
  const ladle_backend *be = s->be;
  ladle_table *in;
  LADLE_RETURN_NOT_OK(ladle_exec_node(s, pn->inputs[0], &in, NULL, err));
  if (in->nchunks == 0) { /* no partition, no row */
    ladle_table_release(in);
    LADLE_RETURN_NOT_OK(ladle_table_create(&p->schema, 0, out, err));
    ladle_table_seal(*out);
    return LADLE_OK;
  }
  ladle_status st = one_partition(in, err);
  const ladle_chunk *c = st == LADLE_OK ? &in->chunks[0] : NULL;
  size_t nk = p->nsubset;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  if (keys == NULL && st == LADLE_OK) st = LADLE_OOM(err, "unique keys");
  for (size_t i = 0; st == LADLE_OK && i < nk; i++) keys[i] = c->columns[p->subset[i]];
  ladle_dgroups g;
  memset(&g, 0, sizeof g);
  enum { KEPT, SEQ, LEN, ONE, MASK, PERM, ROWS, NTMP };
  ladle_column t[NTMP];
  memset(t, 0, sizeof t);
  ladle_dtype i64 = ladle_dtype_make(LADLE_TYPE_INT64), u32 = ladle_dtype_make(LADLE_TYPE_UINT32);
  if (st == LADLE_OK) st = be->group_keys(&s->k, keys, nk, NULL, &g, err);
  free(keys);
  if (st == LADLE_OK && p->keep == LADLE_KEEP_LAST) {
    st = be->sequence(&s->k, 0, c->length, i64, &t[SEQ], err);
    if (st == LADLE_OK) {
      ladle_program pg;
      memset(&pg, 0, sizeof pg);
      pg.n = 1;
      pg.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, i64, NULL, 0};
      st = be->grouped_reduce(&s->k, LADLE_REDUCE_MAX, &pg, &t[SEQ], 1, &g, &t[KEPT], err);
    }
  } else if (st == LADLE_OK && p->keep == LADLE_KEEP_NONE) {
    /* the groups of one row: their rows counted, compared with a constant 1 */
    st = be->grouped_reduce(&s->k, LADLE_REDUCE_COUNT, NULL, NULL, 0, &g, &t[LEN], err);
    if (st == LADLE_OK) st = ladle_column_alloc(u32, 1, false, 0, &t[ONE], err);
    if (st == LADLE_OK) {
      LADLE_COL_MUT(&t[ONE], uint32_t)[0] = 1;
      ladle_program pg;
      memset(&pg, 0, sizeof pg);
      pg.n = 3;
      pg.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, u32, NULL, 0};
      pg.ins[1] = (ladle_pinstr){LADLE_P_CONST, 0, 0, 0, u32, &t[ONE], 0};
      pg.ins[2] = (ladle_pinstr){
          LADLE_P_BINARY, LADLE_OP_EQ, 0, 1, ladle_dtype_make(LADLE_TYPE_BOOL), NULL, 0};
      st = be->eval_program(&s->k, &pg, &t[LEN], 1, &t[MASK], err);
    }
    if (st == LADLE_OK) st = be->filter(&s->k, &g.first, &t[MASK], &t[KEPT], err);
  } else if (st == LADLE_OK) {
    ladle_column_copy_ref(&g.first, &t[KEPT]);
  }
  if (st == LADLE_OK) {
    bool desc = false, last = true;
    st = be->sort_perm(&s->k, &t[KEPT], 1, &desc, &last, &t[PERM], err);
  }
  if (st == LADLE_OK) st = be->take(&s->k, &t[KEPT], &t[PERM], &t[ROWS], err);
  if (st == LADLE_OK) st = take_rows(s, &p->schema, c, &t[ROWS], out, err);
  for (int i = 0; i < NTMP; i++) ladle_column_release(&t[i]);
  ladle_dgroups_release(&g);
  ladle_table_release(in);
  return st;
}

/* ------------------------------------------------------------ windows */

/* agg(x).over(keys) on the column kernels (window_why said it fits): the rows
 * grouped by the keys (group_keys), the aggregation per group (as a
 * group_by's), each row given its group's value (take by the group ids,
 * widened to Int64). A row-wise expression of running functions over keys
 * (x.shift(1).over("g")): one row program, each running function an input
 * computed per group. */
ladle_status exec_columns_window(exec_state *s, const ladle_bexpr *e, const ladle_table *t,
                                 ladle_column *out, ladle_error *err) {
  LADLE_RETURN_NOT_OK(one_partition(t, err));
  return window_of(s, e, &t->chunks[0], out, err);
}

static ladle_status window_of(exec_state *s, const ladle_bexpr *e, const ladle_chunk *c,
                              ladle_column *out, ladle_error *err) {
  const ladle_bexpr *w = unalias(e);
  size_t nk = w->nargs - 1, have = 0;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  if (keys == NULL) return LADLE_OOM(err, "window keys");
  ladle_status st = LADLE_OK;
  for (; have < nk && st == LADLE_OK; have++) {
    st = ladle_eval_chunk(s, w->args[have + 1], c, &keys[have], err);
    if (st != LADLE_OK) break;
  }
  ladle_dgroups g;
  memset(&g, 0, sizeof g);
  ladle_column vals, ids;
  memset(&vals, 0, sizeof vals);
  memset(&ids, 0, sizeof ids);
  if (st == LADLE_OK) st = s->be->group_keys(&s->k, keys, nk, NULL, &g, err);
  for (size_t i = 0; i < have; i++) ladle_column_release(&keys[i]);
  free(keys);
  const ladle_bexpr *a = unalias(w->args[0]);
  if (st == LADLE_OK && a->kind != LADLE_EX_AGG && a->kind != LADLE_EX_LEN) {
    /* running functions restarting per group, inside a row-wise expression */
    bool done = false;
    st = program_of(s, w->args[0], c, &g, out, &done, err);
    if (st == LADLE_OK && !done) st = too_big(s, "a window's expression", "columns", err);
    ladle_dgroups_release(&g);
    return st;
  }
  if (st == LADLE_OK) st = grouped_of(s, w->args[0], c, &g, &vals, err);
  if (st == LADLE_OK) {
    ladle_dtype u32 = ladle_dtype_make(LADLE_TYPE_UINT32), i64 = ladle_dtype_make(LADLE_TYPE_INT64);
    ladle_program pg;
    memset(&pg, 0, sizeof pg);
    pg.n = 2;
    pg.ins[0] = (ladle_pinstr){LADLE_P_COL, 0, 0, 0, u32, NULL, 0};
    pg.ins[1] = (ladle_pinstr){LADLE_P_CAST, 0, 0, 0, i64, NULL, 0};
    st = s->be->eval_program(&s->k, &pg, &g.ids, 1, &ids, err);
  }
  if (st == LADLE_OK) st = s->be->take(&s->k, &vals, &ids, out, err);
  ladle_column_release(&vals);
  ladle_column_release(&ids);
  ladle_dgroups_release(&g);
  return st;
}
