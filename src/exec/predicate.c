/* predicate.c — a filter's predicate as one pass of keep bytes per partition.
 *
 * A predicate that is a conjunction (a & b & ...) splits into its terms. A
 * term that compares a numeric, temporal or string column with a constant, or puts it
 * between two constants (is_between), runs as the backend's compare_into,
 * which ANDs its result straight into the partition's keep bytes (a null test
 * of a column, is_null or is_not_null, as its valid_into, from the column's
 * validity eight rows a step); any other
 * term is evaluated as usual and its mask ANDed in. A row is kept when every
 * term is true and not null: a filter drops null and false rows alike, and a
 * Kleene conjunction is true only when every term is. So no boolean column
 * (with its validity) is built per comparison and per AND, and the keep bytes
 * the compaction reads come out of the last term directly.
 *
 * A term that is a disjunction (a | b | ...) is a clause: each of its terms
 * (comparisons fused as above, anything else as a mask) written as keep bytes,
 * ORed together (the backend's mask_or), then ANDed in. A row is kept when
 * some term is true, which is when a Kleene disjunction is true: null or false
 * terms drop it only if no term is true. (x.is_not_null() | (y == 1) built
 * three boolean columns with validity and took a Kleene OR before.)
 *
 * Over a Parquet scan, terms that read one String column and nothing else,
 * row by row (a dictionary term: comparisons, is_in with a list, string
 * tests, null tests and logic of them), are evaluated by the scan on each
 * chunk's dictionary (exec_pred_dict_columns picks the columns,
 * exec_pred_compile_dict compiles their terms for the scan): the scan hands
 * the filter a Boolean column of keep bytes in that column's place, and the
 * filter's predicate, compiled with `dict`, ANDs that column in instead of
 * those terms (a mask term).
 */
#include <stdlib.h>
#include <string.h>

#include "exec.h"

typedef struct pred_term {
  const ladle_bexpr *e; /* a general term: evaluated as a mask */
  int64_t col;          /* or: column col compared with k[0] (and k[1]) */
  int op[2];            /* op[1] < 0: a single comparison */
  ladle_column k[2];
  struct pred_term *alt; /* or (e NULL, col < 0): the disjunction of alt[0..nalt) */
  size_t nalt;
  bool mask; /* (e NULL) column col is 0/1 keep bytes (a dictionary column's terms) */
  /* (e NULL) col.is_null() or is_not_null(), through valid_into (evaluated
   * as a mask for a column not of the chunk's height) */
  const ladle_bexpr *nulltest;
} pred_term;

struct exec_pred {
  pred_term *t;
  size_t n, cap;
};

static void terms_release(pred_term *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (t[i].nalt > 0) terms_release(t[i].alt, t[i].nalt);
    free(t[i].alt);
    if (t[i].e == NULL)
      for (int j = 0; j < 2; j++)
        if (t[i].op[j] >= 0) ladle_column_release(&t[i].k[j]);
  }
}

void exec_pred_destroy(exec_pred *p) {
  if (p == NULL) return;
  terms_release(p->t, p->n);
  free(p->t);
  free(p);
}

/* Whether e reads no row: no column, no row count, no aggregation. */
static bool is_constant(const ladle_bexpr *e) {
  if (e->kind == LADLE_EX_COL || e->kind == LADLE_EX_LEN || e->kind == LADLE_EX_AGG ||
      e->kind == LADLE_EX_RANK || e->kind == LADLE_EX_OVER || e->has_agg || e->has_window)
    return false;
  if (e->kind == LADLE_EX_LIT) return e->lit.length == 1;
  for (size_t i = 0; i < e->nargs; i++)
    if (!is_constant(e->args[i])) return false;
  return true;
}

static bool fusable_type(ladle_dtype t) {
  return (ladle_type_is_numeric(t.id) || t.id == LADLE_TYPE_DATE || t.id == LADLE_TYPE_DATETIME ||
          t.id == LADLE_TYPE_DURATION || t.id == LADLE_TYPE_STRING);
}

/* The constant e as a valid length-1 column of type t; false when it is not
 * one (a null constant, another type): the term stays general. */
static ladle_status constant_of(exec_state *s, const ladle_bexpr *e, ladle_dtype t,
                                ladle_column *out, bool *ok, ladle_error *err) {
  *ok = false;
  if (!is_constant(e) || !ladle_dtype_equal(e->type, t)) return LADLE_OK;
  ladle_column c;
  LADLE_RETURN_NOT_OK(ladle_eval_chunk(s, e, NULL, &c, err));
  if (c.length == 1 && c.type.id == t.id && ladle_column_valid(&c, 0)) {
    *out = c;
    *ok = true;
  } else {
    ladle_column_release(&c);
  }
  return LADLE_OK;
}

static int flip(int op) {
  switch (op) {
    case LADLE_OP_LT:
      return LADLE_OP_GT;
    case LADLE_OP_LE:
      return LADLE_OP_GE;
    case LADLE_OP_GT:
      return LADLE_OP_LT;
    case LADLE_OP_GE:
      return LADLE_OP_LE;
    default:
      return op; /* EQ, NE */
  }
}

static ladle_status add_term(exec_pred *p, pred_term t, ladle_error *err) {
  if (p->n == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 8;
    pred_term *nt = realloc(p->t, cap * sizeof *nt);
    if (nt == NULL) return LADLE_OOM(err, "predicate");
    p->t = nt;
    p->cap = cap;
  }
  p->t[p->n++] = t;
  return LADLE_OK;
}

/* Adds e as a comparison term when it is one, else as a general term. */
static ladle_status compile_leaf(exec_state *s, exec_pred *p, const ladle_bexpr *e,
                                 const ladle_schema *in, ladle_error *err) {
  pred_term t;
  memset(&t, 0, sizeof t);
  t.e = e;
  t.col = -1;
  t.op[0] = t.op[1] = -1;
  bool ok = false;
  if (e->kind == LADLE_EX_BINARY && e->op >= LADLE_OP_EQ && e->op <= LADLE_OP_GE) {
    int side = e->args[0]->kind == LADLE_EX_COL ? 0 : e->args[1]->kind == LADLE_EX_COL ? 1 : -1;
    if (side >= 0) {
      const ladle_bexpr *c = e->args[side];
      ladle_dtype ct = in->types[c->col];
      if (fusable_type(ct)) {
        LADLE_RETURN_NOT_OK(constant_of(s, e->args[1 - side], ct, &t.k[0], &ok, err));
        if (ok) {
          t.e = NULL;
          t.col = c->col;
          t.op[0] = side == 0 ? e->op : flip(e->op);
        }
      }
    }
  } else if (e->kind == LADLE_EX_FUNC &&
             (e->op == LADLE_FN_IS_NULL || e->op == LADLE_FN_IS_NOT_NULL) && e->nargs == 1 &&
             e->args[0]->kind == LADLE_EX_COL && s->be->valid_into != NULL &&
             in->types[e->args[0]->col].id != LADLE_TYPE_NULL) {
    /* a null test: the column's validity straight into the keep bytes */
    t.e = NULL;
    t.col = e->args[0]->col;
    t.nulltest = e;
  } else if (e->kind == LADLE_EX_FUNC && e->op == LADLE_FN_IS_BETWEEN && e->nargs == 3 &&
             e->args[0]->kind == LADLE_EX_COL) {
    ladle_dtype ct = in->types[e->args[0]->col];
    if (fusable_type(ct)) {
      LADLE_RETURN_NOT_OK(constant_of(s, e->args[1], ct, &t.k[0], &ok, err));
      bool ok2 = false;
      if (ok) {
        ladle_status st = constant_of(s, e->args[2], ct, &t.k[1], &ok2, err);
        if (st != LADLE_OK || !ok2) ladle_column_release(&t.k[0]);
        LADLE_RETURN_NOT_OK(st);
      }
      if (ok2) {
        t.e = NULL;
        t.col = e->args[0]->col;
        exec_between_ops(e->fopts.closed, &t.op[0], &t.op[1]);
      }
    }
  }
  ladle_status st = add_term(p, t, err);
  if (st != LADLE_OK && t.e == NULL)
    for (int j = 0; j < 2; j++)
      if (t.op[j] >= 0) ladle_column_release(&t.k[j]);
  return st;
}

static bool is_bool_op(const ladle_bexpr *e, int op) {
  return e->kind == LADLE_EX_BINARY && e->op == op && e->type.id == LADLE_TYPE_BOOL &&
         e->args[0]->type.id == LADLE_TYPE_BOOL && e->args[1]->type.id == LADLE_TYPE_BOOL;
}

/* The terms of a disjunction, each a leaf (an AND inside is a general one). */
static ladle_status compile_or(exec_state *s, exec_pred *q, const ladle_bexpr *e,
                               const ladle_schema *in, ladle_error *err) {
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  if (is_bool_op(e, LADLE_OP_OR)) {
    LADLE_RETURN_NOT_OK(compile_or(s, q, e->args[0], in, err));
    return compile_or(s, q, e->args[1], in, err);
  }
  return compile_leaf(s, q, e, in, err);
}

/* Whether e reads no column but `*col` (set by the first one met), of type
 * String, and row by row: columns, single literals (and is_in's list),
 * aliases, binary operations and functions of those. Casts, when/then,
 * aggregations, windows and row counts are not. */
static bool dict_expr(const ladle_bexpr *e, int64_t *col) {
  switch (e->kind) {
    case LADLE_EX_COL:
      if (e->type.id != LADLE_TYPE_STRING || (*col >= 0 && e->col != *col)) return false;
      *col = e->col;
      return true;
    case LADLE_EX_LIT:
      return e->lit.length == 1;
    case LADLE_EX_ALIAS:
      return dict_expr(e->args[0], col);
    case LADLE_EX_BINARY:
      return dict_expr(e->args[0], col) && dict_expr(e->args[1], col);
    case LADLE_EX_FUNC:
      if (e->op == LADLE_FN_IS_IN)
        return e->nargs == 2 && e->args[1]->kind == LADLE_EX_LIT && dict_expr(e->args[0], col);
      for (size_t i = 0; i < e->nargs; i++)
        if (!dict_expr(e->args[i], col)) return false;
      return true;
    default:
      return false;
  }
}

/* The column a conjunction's term is a dictionary term of, or -1. */
static int64_t dict_term(const ladle_bexpr *e) {
  int64_t col = -1;
  if (e->type.id != LADLE_TYPE_BOOL || e->has_agg || e->has_window || !dict_expr(e, &col))
    return -1;
  return col;
}

static ladle_status compile_and(exec_state *s, exec_pred *p, const ladle_bexpr *e,
                                const ladle_schema *in, const bool *dict, ladle_error *err) {
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  if (is_bool_op(e, LADLE_OP_AND)) {
    LADLE_RETURN_NOT_OK(compile_and(s, p, e->args[0], in, dict, err));
    return compile_and(s, p, e->args[1], in, dict, err);
  }
  int64_t dc = dict != NULL ? dict_term(e) : -1;
  if (dc >= 0 && dict[dc]) return LADLE_OK; /* in the scan's keep bytes of column dc */
  if (is_bool_op(e, LADLE_OP_OR) && s->be->mask_or != NULL) {
    exec_pred q = {NULL, 0, 0};
    ladle_status st = compile_or(s, &q, e, in, err);
    pred_term t;
    memset(&t, 0, sizeof t);
    t.col = -1;
    t.op[0] = t.op[1] = -1;
    t.alt = q.t;
    t.nalt = q.n;
    if (st == LADLE_OK) st = add_term(p, t, err);
    if (st != LADLE_OK) {
      terms_release(q.t, q.n);
      free(q.t);
    }
    return st;
  }
  return compile_leaf(s, p, e, in, err);
}

/* Whether predicate e can be split into terms at all. */
static bool splits(const exec_state *s, const ladle_bexpr *e) {
  return s->be->compare_into != NULL && !e->has_agg && !e->has_window && !e->scalar &&
         e->type.id == LADLE_TYPE_BOOL;
}

typedef struct dict_walk {
  bool *cand, *other; /* columns of dictionary terms; columns any other term reads */
  size_t n;
} dict_walk;

static void dict_walk_and(dict_walk *w, const ladle_bexpr *e) {
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  if (is_bool_op(e, LADLE_OP_AND)) {
    dict_walk_and(w, e->args[0]);
    dict_walk_and(w, e->args[1]);
    return;
  }
  int64_t c = dict_term(e);
  if (c >= 0 && (size_t)c < w->n)
    w->cand[c] = true;
  else
    ladle_exec_mark_columns(e, w->other, w->n);
}

size_t exec_pred_dict_columns(const ladle_bexpr *e, size_t n, bool *dict) {
  memset(dict, 0, n * sizeof *dict);
  if (e->has_agg || e->has_window || e->scalar || e->type.id != LADLE_TYPE_BOOL || n == 0) return 0;
  bool *other = calloc(n, sizeof *other);
  if (other == NULL) return 0; /* without memory: none, the plain filter */
  dict_walk w = {dict, other, n};
  dict_walk_and(&w, e);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += (dict[i] = dict[i] && !other[i]);
  free(other);
  return k;
}

static ladle_status compile_dict_terms(exec_state *s, exec_pred *p, const ladle_bexpr *e,
                                       const ladle_schema *in, int64_t col, ladle_error *err) {
  while (e->kind == LADLE_EX_ALIAS) e = e->args[0];
  if (is_bool_op(e, LADLE_OP_AND)) {
    LADLE_RETURN_NOT_OK(compile_dict_terms(s, p, e->args[0], in, col, err));
    return compile_dict_terms(s, p, e->args[1], in, col, err);
  }
  return dict_term(e) == col ? compile_and(s, p, e, in, NULL, err) : LADLE_OK;
}

ladle_status exec_pred_compile_dict(exec_state *s, const ladle_bexpr *e, const ladle_schema *in,
                                    size_t col, exec_pred **out, ladle_error *err) {
  *out = NULL;
  if (!splits(s, e))
    return ladle_err_set(err, LADLE_EINVAL, "a dictionary predicate the backend cannot split");
  exec_pred *p = calloc(1, sizeof *p);
  if (p == NULL) return LADLE_OOM(err, "predicate");
  ladle_status st = compile_dict_terms(s, p, e, in, (int64_t)col, err);
  if (st != LADLE_OK) {
    exec_pred_destroy(p);
    return st;
  }
  *out = p;
  return LADLE_OK;
}

ladle_status exec_pred_compile(exec_state *s, const ladle_bexpr *e, const ladle_schema *in,
                               const bool *dict, exec_pred **out, ladle_error *err) {
  *out = NULL;
  if (!splits(s, e)) {
    if (dict != NULL) /* the planner split it: this backend must too */
      return ladle_err_set(err, LADLE_EINVAL, "a dictionary predicate the backend cannot split");
    return LADLE_OK;
  }
  exec_pred *p = calloc(1, sizeof *p);
  if (p == NULL) return LADLE_OOM(err, "predicate");
  ladle_status st = compile_and(s, p, e, in, dict, err);
  for (size_t i = 0; st == LADLE_OK && dict != NULL && i < in->n; i++)
    if (dict[i]) { /* the scan's keep bytes for the terms left out */
      pred_term t;
      memset(&t, 0, sizeof t);
      t.col = (int64_t)i;
      t.op[0] = t.op[1] = -1;
      t.mask = true;
      st = add_term(p, t, err);
    }
  bool any = false;
  for (size_t i = 0; st == LADLE_OK && i < p->n; i++) any |= p->t[i].e == NULL;
  if (st != LADLE_OK || !any) {
    exec_pred_destroy(p);
    return st;
  }
  /* comparisons first: they are cheap; then disjunctions; a general term
   * after them sees the keep bytes already made (stable within each kind) */
  size_t w = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = w; i < p->n; i++)
      if (p->t[i].e == NULL && (pass == 0) == (p->t[i].nalt == 0)) {
        pred_term t = p->t[i];
        memmove(&p->t[w + 1], &p->t[w], (i - w) * sizeof t);
        p->t[w++] = t;
      }
  *out = p;
  return LADLE_OK;
}

/* One term's keep bytes: written (init) or ANDed into keep. */
static ladle_status term_keep(exec_state *s, const pred_term *t, const ladle_chunk *c, bool init,
                              uint8_t *keep, ladle_error *err) {
  int64_t n = c->length;
  if (t->nalt > 0) {
    /* a disjunction: its terms' bytes ORed in cb (keep itself when it
     * holds nothing yet), then cb ANDed into keep */
    size_t w = (size_t)LADLE_MAX(n, 1);
    uint8_t *tmp = malloc(init ? w : 2 * w); /* and cb after it, when keep is taken */
    uint8_t *cb = init || tmp == NULL ? keep : tmp + w;
    ladle_status st = tmp ? LADLE_OK : LADLE_OOM(err, "predicate");
    for (size_t j = 0; st == LADLE_OK && j < t->nalt; j++) {
      st = term_keep(s, &t->alt[j], c, true, j == 0 ? cb : tmp, err);
      if (st == LADLE_OK && j > 0) st = s->be->mask_or(&s->k, tmp, n, cb, err);
    }
    if (st == LADLE_OK && !init) {
      ladle_column v; /* cb seen as a BOOL column without nulls */
      memset(&v, 0, sizeof v);
      v.type = ladle_dtype_make(LADLE_TYPE_BOOL);
      v.length = n;
      v.values = cb;
      st = s->be->mask_and(&s->k, &v, n, false, keep, NULL, err);
    }
    free(tmp);
    return st;
  }
  if (t->mask) /* keep bytes the scan made from the dictionary */
    return s->be->mask_and(&s->k, &c->columns[t->col], n, init, keep, NULL, err);
  if (t->nulltest != NULL && c->columns[t->col].length == n)
    return s->be->valid_into(&s->k, &c->columns[t->col], t->nulltest->op == LADLE_FN_IS_NULL, init,
                             keep, err);
  if (t->e == NULL && c->columns[t->col].length == n) {
    for (int j = 0; j < 2 && t->op[j] >= 0; j++) {
      LADLE_RETURN_NOT_OK(
          s->be->compare_into(&s->k, t->op[j], &c->columns[t->col], &t->k[j], init, keep, err));
      init = false;
    }
    return LADLE_OK;
  }
  /* a general term (or a column not of the chunk's height): its mask, null
   * as false, ANDed in (written, for the first term) */
  ladle_column m;
  ladle_status st;
  if (t->e != NULL || t->nulltest != NULL) {
    LADLE_RETURN_NOT_OK(ladle_eval_chunk(s, t->e != NULL ? t->e : t->nulltest, c, &m, err));
    st = s->be->mask_and(&s->k, &m, n, init, keep, NULL, err);
    ladle_column_release(&m);
    return st;
  }
  for (int j = 0; j < 2 && t->op[j] >= 0; j++) {
    LADLE_RETURN_NOT_OK(s->be->binary(&s->k, t->op[j], &c->columns[t->col], &t->k[j],
                                      ladle_dtype_make(LADLE_TYPE_BOOL), &m, err));
    st = s->be->mask_and(&s->k, &m, n, init, keep, NULL, err);
    init = false;
    ladle_column_release(&m);
    LADLE_RETURN_NOT_OK(st);
  }
  return LADLE_OK;
}

ladle_status exec_pred_keep(exec_state *s, const exec_pred *p, const ladle_chunk *c, uint8_t *keep,
                            ladle_error *err) {
  bool init = true; /* keep holds nothing yet: the first term writes it */
  for (size_t i = 0; i < p->n; i++) {
    LADLE_RETURN_NOT_OK(term_keep(s, &p->t[i], c, init, keep, err));
    init = false;
  }
  /* no term wrote keep (none at all): every row */
  if (init) return s->be->mask_and(&s->k, NULL, c->length, true, keep, NULL, err);
  return LADLE_OK;
}
