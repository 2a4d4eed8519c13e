/* bind.c — type resolution: turns an unbound expression into a bound one against
 * an input schema, following Polars' rules (supertypes, dynamic literals, output
 * names, aggregation result types) and inserting the implicit casts. Every error
 * names the expression and the column or type involved. */
#include <math.h>
#include <stdio.h>

#include "plan.h"

typedef struct bind_state {
  const ladle_schema *schema;
  ladle_bind_ctx ctx;
  bool in_agg;
  bool in_over;
  ladle_error *err;
} bind_state;

static ladle_bexpr *bnew(ladle_expr_kind kind, size_t nargs) {
  ladle_bexpr *b = calloc(1, sizeof *b);
  if (b == NULL) return NULL;
  b->kind = kind;
  b->col = -1;
  if (nargs > 0 && (b->args = calloc(nargs, sizeof *b->args)) == NULL) {
    free(b);
    return NULL;
  }
  b->nargs = nargs;
  return b;
}

void ladle_bexpr_destroy(ladle_bexpr *e) {
  if (e == NULL) return;
  for (size_t i = 0; i < e->nargs; i++) ladle_bexpr_destroy(e->args[i]);
  free(e->args);
  free(e->name);
  free((char *)(uintptr_t)e->fopts.str);
  ladle_column_release(&e->lit);
  free(e);
}

static const char *tname(ladle_dtype t, char *buf) { return ladle_dtype_name(t, buf, 64); }

/* The casts ladle runs (besides those Polars refuses at run time,
 * ladle_cast_refused, which fail there too). A time zone other than UTC to
 * String is not run (its text is local time); booleans and floats to and from
 * temporal types go through the physical integer in the translator. */
bool ladle_cast_supported(ladle_dtype from, ladle_dtype to) {
  ladle_type_id f = from.id, t = to.id;
  if (ladle_dtype_equal(from, to) || f == LADLE_TYPE_NULL) return true;
  if (f == LADLE_TYPE_DECIMAL) return ladle_type_is_float(t);
  if (f == LADLE_TYPE_TIME) return t == LADLE_TYPE_INT64;
  /* a list's elements, cast as a column of them */
  if (f == LADLE_TYPE_LIST && t == LADLE_TYPE_LIST)
    return from.child != NULL && to.child != NULL &&
           (ladle_cast_supported(*from.child, *to.child) ||
            ladle_cast_refused(*from.child, *to.child));
  /* INT128 and UINT128: to and from integers, booleans, floats and text */
  if (f == LADLE_TYPE_INT128 || f == LADLE_TYPE_UINT128 || t == LADLE_TYPE_INT128 ||
      t == LADLE_TYPE_UINT128) {
    ladle_type_id o = f == LADLE_TYPE_INT128 || f == LADLE_TYPE_UINT128 ? t : f;
    return o == LADLE_TYPE_INT128 || o == LADLE_TYPE_UINT128 || o == LADLE_TYPE_BOOL ||
           ladle_type_is_numeric(o) || o == LADLE_TYPE_STRING;
  }
  if (ladle_type_is_carried(f) || ladle_type_is_carried(t)) return false;
  bool fnum = ladle_type_is_numeric(f) || f == LADLE_TYPE_BOOL;
  bool tnum = ladle_type_is_numeric(t) || t == LADLE_TYPE_BOOL;
  if (fnum && tnum) return true;
  if (t == LADLE_TYPE_STRING)
    return fnum || f == LADLE_TYPE_DATE ||
           (f == LADLE_TYPE_DATETIME && (from.tz[0] == '\0' || strcmp(from.tz, "UTC") == 0));
  /* a Duration from text parses the integer, as Polars */
  if (f == LADLE_TYPE_STRING) return ladle_type_is_numeric(t) || t == LADLE_TYPE_DURATION;
  if (ladle_type_is_temporal(f) && ladle_type_is_integer(t)) return true;
  if (ladle_type_is_integer(f) && ladle_type_is_temporal(t)) return true;
  if ((f == LADLE_TYPE_DATE || f == LADLE_TYPE_DATETIME) &&
      (t == LADLE_TYPE_DATE || t == LADLE_TYPE_DATETIME))
    return true;
  if (f == LADLE_TYPE_DURATION && t == LADLE_TYPE_DURATION) return true;
  return false;
}

ladle_status ladle_bexpr_cast(ladle_bexpr *e, ladle_dtype to, ladle_cast_mode mode,
                              ladle_bexpr **out, ladle_error *err) {
  if (ladle_dtype_equal(e->type, to)) {
    *out = e;
    return LADLE_OK;
  }
  char b1[64], b2[64];
  if (!ladle_cast_supported(e->type, to)) {
    ladle_status st = ladle_err_set(err, LADLE_ETYPE, "cannot cast '%s' from %s to %s", e->name,
                                    tname(e->type, b1), tname(to, b2));
    ladle_bexpr_destroy(e);
    return st;
  }
  ladle_bexpr *c = bnew(LADLE_EX_CAST, 1);
  char *name = c ? ladle_strdup(e->name) : NULL;
  if (c == NULL || name == NULL) {
    free(c ? c->args : NULL);
    free(c);
    ladle_bexpr_destroy(e);
    return LADLE_OOM(err, "cast");
  }
  c->name = name;
  c->args[0] = e;
  c->type = to;
  c->cast_mode = mode;
  c->scalar = e->scalar;
  c->has_agg = e->has_agg;
  c->has_window = e->has_window;
  *out = c;
  return LADLE_OK;
}

static ladle_status set_name(ladle_bexpr *b, const char *name, ladle_error *err) {
  b->name = ladle_strdup(name);
  return b->name == NULL ? LADLE_OOM(err, "expression name") : LADLE_OK;
}

/* Is the expression a dynamic literal (adopts the other side's type)? */
static bool is_dyn(const ladle_expr *e, ladle_lit_kind *kind) {
  if (e->kind != LADLE_EX_LIT) return false;
  if (e->lit_kind == LADLE_LIT_DYN_INT || e->lit_kind == LADLE_LIT_DYN_FLOAT) {
    *kind = e->lit_kind;
    return true;
  }
  return false;
}

static bool int_fits(int64_t v, ladle_type_id id) {
  switch (id) {
    case LADLE_TYPE_INT8:
      return v >= INT8_MIN && v <= INT8_MAX;
    case LADLE_TYPE_INT16:
      return v >= INT16_MIN && v <= INT16_MAX;
    case LADLE_TYPE_INT32:
      return v >= INT32_MIN && v <= INT32_MAX;
    case LADLE_TYPE_INT64:
      return true;
    case LADLE_TYPE_UINT8:
      return v >= 0 && v <= UINT8_MAX;
    case LADLE_TYPE_UINT16:
      return v >= 0 && v <= UINT16_MAX;
    case LADLE_TYPE_UINT32:
      return v >= 0 && v <= (int64_t)UINT32_MAX;
    case LADLE_TYPE_UINT64:
      return v >= 0;
    default:
      return false;
  }
}

/* The type a dynamic literal takes next to an operand of type `other`. */
static ladle_dtype dyn_type(const ladle_expr *lit, ladle_lit_kind kind, ladle_dtype other) {
  if (kind == LADLE_LIT_DYN_INT) {
    int64_t v = *(const int64_t *)lit->lit.values;
    if (ladle_type_is_float(other.id)) return other;
    if (ladle_type_is_integer(other.id) && int_fits(v, other.id)) return other;
    if (other.id == LADLE_TYPE_DURATION || other.id == LADLE_TYPE_DATETIME) return other;
    return ladle_dtype_make(int_fits(v, LADLE_TYPE_INT32) ? LADLE_TYPE_INT32 : LADLE_TYPE_INT64);
  }
  if (ladle_type_is_float(other.id)) return other;
  return ladle_dtype_make(LADLE_TYPE_FLOAT64);
}

static ladle_status bind_rec(const ladle_expr *e, bind_state *s, ladle_bexpr **out);

/* Binds children, propagating flags; fills b->args. */
static ladle_status bind_args(const ladle_expr *e, bind_state *s, ladle_bexpr *b) {
  for (size_t i = 0; i < e->nargs; i++) LADLE_RETURN_NOT_OK(bind_rec(e->args[i], s, &b->args[i]));
  bool scalar = e->nargs > 0;
  for (size_t i = 0; i < e->nargs; i++) {
    scalar &= b->args[i]->scalar;
    b->has_agg |= b->args[i]->has_agg;
    b->has_window |= b->args[i]->has_window;
  }
  b->scalar = scalar;
  return LADLE_OK;
}

static ladle_status coerce(ladle_bexpr **slot, ladle_dtype to, ladle_error *err) {
  return ladle_bexpr_cast(*slot, to, LADLE_CAST_NON_STRICT, slot, err);
}

/* Brings args[i] and args[j] to one type; dynamic literals adopt the other. */
static ladle_status unify_pair(const ladle_expr *e, size_t i, size_t j, ladle_bexpr *b,
                               const char *what, ladle_dtype *out, ladle_error *err) {
  ladle_lit_kind k;
  ladle_dtype ti = b->args[i]->type, tj = b->args[j]->type;
  bool di = is_dyn(e->args[i], &k) && !is_dyn(e->args[j], &k);
  bool dj = !is_dyn(e->args[i], &k) && is_dyn(e->args[j], &k);
  if (di) {
    is_dyn(e->args[i], &k);
    ti = dyn_type(e->args[i], k, tj);
  } else if (dj) {
    is_dyn(e->args[j], &k);
    tj = dyn_type(e->args[j], k, ti);
  }
  ladle_dtype st;
  char b1[64], b2[64];
  if (!ladle_type_supertype(ti, tj, &st))
    return ladle_err_set(err, LADLE_ETYPE, "%s: no common type for '%s' (%s) and '%s' (%s)", what,
                         b->args[i]->name, tname(b->args[i]->type, b1), b->args[j]->name,
                         tname(b->args[j]->type, b2));
  LADLE_RETURN_NOT_OK(coerce(&b->args[i], st, err));
  LADLE_RETURN_NOT_OK(coerce(&b->args[j], st, err));
  *out = st;
  return LADLE_OK;
}

const char *ladle_binop_name(int op) {
  static const char *n[LADLE_OP_COUNT_] = {
      "+",  "-", "*",  "/",          "//",         "%", "==", "!=", "<",
      "<=", ">", ">=", "eq_missing", "ne_missing", "&", "|",  "^"};
  return op >= 0 && op < LADLE_OP_COUNT_ ? n[op] : "?";
}

static ladle_status bind_binary(const ladle_expr *e, bind_state *s, ladle_bexpr *b) {
  ladle_error *err = s->err;
  char what[96], b1[64], b2[64];
  snprintf(what, sizeof what, "'%s' %s '%s'", b->args[0]->name, ladle_binop_name(e->op),
           b->args[1]->name);
  ladle_dtype l = b->args[0]->type, r = b->args[1]->type;
  int op = e->op;
  if (op == LADLE_OP_AND || op == LADLE_OP_OR || op == LADLE_OP_XOR) {
    for (int i = 0; i < 2; i++) {
      ladle_dtype t = b->args[i]->type;
      if (t.id == LADLE_TYPE_NULL)
        LADLE_RETURN_NOT_OK(coerce(&b->args[i], ladle_dtype_make(LADLE_TYPE_BOOL), err));
      else if (t.id != LADLE_TYPE_BOOL)
        return ladle_err_set(err, LADLE_ETYPE, "%s: logical operators need booleans, '%s' is %s",
                             what, b->args[i]->name, tname(t, b1));
    }
    b->type = ladle_dtype_make(LADLE_TYPE_BOOL);
    return LADLE_OK;
  }
  bool cmp = op >= LADLE_OP_EQ && op <= LADLE_OP_NE_MISSING;
  /* Temporal arithmetic. */
  if (!cmp && (ladle_type_is_temporal(l.id) || ladle_type_is_temporal(r.id))) {
    ladle_dtype dur = ladle_dtype_make(LADLE_TYPE_DURATION);
    if (((op == LADLE_OP_ADD || op == LADLE_OP_SUB) && l.id == LADLE_TYPE_DATETIME &&
         r.id == LADLE_TYPE_DURATION) ||
        (op == LADLE_OP_ADD && l.id == LADLE_TYPE_DURATION && r.id == LADLE_TYPE_DATETIME)) {
      /* as in Polars, in the coarser of the two units (ns < us < ms) */
      size_t at = l.id == LADLE_TYPE_DATETIME ? 0 : 1;
      ladle_dtype ts = b->args[at]->type;
      ladle_time_unit u = l.unit > r.unit ? l.unit : r.unit;
      dur.unit = u;
      ts.unit = u;
      LADLE_RETURN_NOT_OK(coerce(&b->args[at], ts, err));
      LADLE_RETURN_NOT_OK(coerce(&b->args[1 - at], dur, err));
      b->type = ts;
      return LADLE_OK;
    }
    if ((op == LADLE_OP_ADD || op == LADLE_OP_SUB) && l.id == LADLE_TYPE_DURATION &&
        r.id == LADLE_TYPE_DURATION) {
      ladle_dtype st;
      ladle_type_supertype(l, r, &st);
      LADLE_RETURN_NOT_OK(coerce(&b->args[0], st, err));
      LADLE_RETURN_NOT_OK(coerce(&b->args[1], st, err));
      b->type = st;
      return LADLE_OK;
    }
    if (op == LADLE_OP_SUB && l.id == r.id &&
        (l.id == LADLE_TYPE_DATETIME || l.id == LADLE_TYPE_DATE)) {
      ladle_dtype st;
      if (!ladle_type_supertype(l, r, &st))
        return ladle_err_set(err, LADLE_ETYPE, "%s: time zones differ", what);
      LADLE_RETURN_NOT_OK(coerce(&b->args[0], st, err));
      LADLE_RETURN_NOT_OK(coerce(&b->args[1], st, err));
      dur.unit = l.id == LADLE_TYPE_DATE ? LADLE_TIME_US : st.unit; /* as Polars 2.x */
      b->type = dur;
      return LADLE_OK;
    }
    if ((op == LADLE_OP_ADD || op == LADLE_OP_SUB) && l.id == LADLE_TYPE_DATE &&
        r.id == LADLE_TYPE_DURATION) {
      /* Polars: the Date becomes a Datetime in microseconds (milliseconds for
       * a ms duration) and the sum is floored to a Date; a ns duration is
       * truncated to microseconds first */
      dur.unit = r.unit == LADLE_TIME_MS ? LADLE_TIME_MS : LADLE_TIME_US;
      LADLE_RETURN_NOT_OK(coerce(&b->args[1], dur, err));
      b->type = l;
      return LADLE_OK;
    }
    if ((op == LADLE_OP_MUL || op == LADLE_OP_FLOOR_DIV) && l.id == LADLE_TYPE_DURATION &&
        ladle_type_is_integer(r.id)) {
      LADLE_RETURN_NOT_OK(coerce(&b->args[1], ladle_dtype_make(LADLE_TYPE_INT64), err));
      b->type = l;
      return LADLE_OK;
    }
    return ladle_err_set(err, LADLE_ETYPE, "%s: not defined for %s and %s", what, tname(l, b1),
                         tname(r, b2));
  }
  if (!cmp && (l.id == LADLE_TYPE_STRING || r.id == LADLE_TYPE_STRING)) {
    if (op == LADLE_OP_ADD && l.id == LADLE_TYPE_STRING && r.id == LADLE_TYPE_STRING) {
      b->type = l; /* string concatenation */
      return LADLE_OK;
    }
    return ladle_err_set(err, LADLE_ETYPE, "%s: arithmetic is not defined for %s and %s", what,
                         tname(l, b1), tname(r, b2));
  }
  if (!cmp && l.id == LADLE_TYPE_BOOL && r.id == LADLE_TYPE_BOOL) {
    /* Polars adds booleans as UInt32 counts */
    ladle_dtype u =
        ladle_dtype_make(op == LADLE_OP_TRUE_DIV ? LADLE_TYPE_FLOAT64 : LADLE_TYPE_UINT32);
    LADLE_RETURN_NOT_OK(coerce(&b->args[0], u, err));
    LADLE_RETURN_NOT_OK(coerce(&b->args[1], u, err));
    b->type = u;
    return LADLE_OK;
  }
  ladle_dtype st;
  LADLE_RETURN_NOT_OK(unify_pair(e, 0, 1, b, what, &st, err));
  if (cmp) {
    b->type = ladle_dtype_make(LADLE_TYPE_BOOL);
    return LADLE_OK;
  }
  if (op == LADLE_OP_TRUE_DIV && !ladle_type_is_float(st.id)) {
    st = ladle_dtype_make(LADLE_TYPE_FLOAT64);
    LADLE_RETURN_NOT_OK(coerce(&b->args[0], st, err));
    LADLE_RETURN_NOT_OK(coerce(&b->args[1], st, err));
  }
  if (st.id == LADLE_TYPE_NULL) {
    st = ladle_dtype_make(LADLE_TYPE_INT32);
    LADLE_RETURN_NOT_OK(coerce(&b->args[0], st, err));
    LADLE_RETURN_NOT_OK(coerce(&b->args[1], st, err));
  }
  b->type = st;
  return LADLE_OK;
}

static ladle_status need(bool ok, bind_state *s, ladle_bexpr *b, const char *what) {
  if (ok) return LADLE_OK;
  char b1[64];
  return ladle_err_set(s->err, LADLE_ETYPE, "%s on '%s': not defined for type %s (needs %s)",
                       ladle_func_name((ladle_func)b->op), b->args[0]->name,
                       tname(b->args[0]->type, b1), what);
}

static ladle_status bind_func(const ladle_expr *e, bind_state *s, ladle_bexpr *b) {
  ladle_error *err = s->err;
  ladle_func f = (ladle_func)e->op;
  static const int8_t nargs[LADLE_FN_COUNT_] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 1, 1, 1,
                                                1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1,
                                                1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  if ((int)f < 0 || f >= LADLE_FN_COUNT_)
    return ladle_err_set(err, LADLE_EINVAL, "unknown function %d", (int)f);
  if ((nargs[f] >= 0 && (size_t)nargs[f] != e->nargs) || e->nargs == 0)
    return ladle_err_set(err, LADLE_EINVAL, "%s takes %d argument(s), got %zu", ladle_func_name(f),
                         nargs[f], e->nargs);
  ladle_dtype t = b->args[0]->type;
  ladle_type_id id = t.id;
  bool num = ladle_type_is_numeric(id);
  switch (f) {
    case LADLE_FN_NOT:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_BOOL, s, b, "bool"));
      b->type = t;
      break;
    case LADLE_FN_NEG:
      LADLE_RETURN_NOT_OK(
          need((num && ladle_type_is_signed(id)) || id == LADLE_TYPE_DURATION, s, b, "signed"));
      b->type = t;
      break;
    case LADLE_FN_ABS:
      LADLE_RETURN_NOT_OK(need(num || id == LADLE_TYPE_DURATION, s, b, "numeric"));
      b->type = t;
      break;
    case LADLE_FN_IS_NULL:
    case LADLE_FN_IS_NOT_NULL:
      b->type = ladle_dtype_make(LADLE_TYPE_BOOL);
      break;
    case LADLE_FN_IS_NAN:
    case LADLE_FN_IS_NOT_NAN:
      LADLE_RETURN_NOT_OK(need(num, s, b, "numeric"));
      b->type = ladle_dtype_make(LADLE_TYPE_BOOL);
      break;
    case LADLE_FN_FILL_NULL: {
      ladle_dtype st;
      LADLE_RETURN_NOT_OK(unify_pair(e, 0, 1, b, "fill_null", &st, err));
      b->type = st;
      break;
    }
    case LADLE_FN_FILL_NAN: {
      LADLE_RETURN_NOT_OK(need(num, s, b, "numeric"));
      ladle_dtype st;
      LADLE_RETURN_NOT_OK(unify_pair(e, 0, 1, b, "fill_nan", &st, err));
      b->type = st;
      break;
    }
    case LADLE_FN_IS_IN: {
      ladle_dtype st;
      LADLE_RETURN_NOT_OK(unify_pair(e, 0, 1, b, "is_in", &st, err));
      b->type = ladle_dtype_make(LADLE_TYPE_BOOL);
      if (e->args[1]->kind != LADLE_EX_LIT) b->has_window = true; /* needs the whole column */
      break;
    }
    case LADLE_FN_IS_BETWEEN: {
      ladle_dtype st1, st2;
      LADLE_RETURN_NOT_OK(unify_pair(e, 0, 1, b, "is_between", &st1, err));
      LADLE_RETURN_NOT_OK(unify_pair(e, 0, 2, b, "is_between", &st2, err));
      if (!ladle_dtype_equal(st1, st2))
        LADLE_RETURN_NOT_OK(unify_pair(e, 0, 1, b, "is_between", &st1, err));
      b->type = ladle_dtype_make(LADLE_TYPE_BOOL);
      break;
    }
    case LADLE_FN_CLIP:
      LADLE_RETURN_NOT_OK(need(num || ladle_type_is_temporal(id), s, b, "numeric"));
      /* as in Polars, the bounds are cast to x's type strictly: a bound that
       * does not fit (clip(-5) on UInt32) is an error, not a wrapped value */
      for (size_t i = 1; i <= 2; i++)
        if (b->args[i]->type.id != LADLE_TYPE_NULL && !ladle_dtype_equal(b->args[i]->type, t))
          LADLE_RETURN_NOT_OK(ladle_bexpr_cast(b->args[i], t, LADLE_CAST_STRICT, &b->args[i], err));
        else
          LADLE_RETURN_NOT_OK(coerce(&b->args[i], t, err));
      b->type = t;
      break;
    case LADLE_FN_ROUND:
    case LADLE_FN_FLOOR:
    case LADLE_FN_CEIL:
      LADLE_RETURN_NOT_OK(need(num, s, b, "numeric"));
      b->type = t;
      break;
    case LADLE_FN_SQRT:
    case LADLE_FN_LOG:
    case LADLE_FN_LOG1P:
    case LADLE_FN_EXP: {
      LADLE_RETURN_NOT_OK(need(num || id == LADLE_TYPE_BOOL, s, b, "numeric"));
      ladle_dtype ft =
          ladle_dtype_make(id == LADLE_TYPE_FLOAT32 ? LADLE_TYPE_FLOAT32 : LADLE_TYPE_FLOAT64);
      LADLE_RETURN_NOT_OK(coerce(&b->args[0], ft, err));
      b->type = ft;
      break;
    }
    case LADLE_FN_POW: {
      LADLE_RETURN_NOT_OK(need(num, s, b, "numeric"));
      ladle_lit_kind k;
      ladle_dtype et = b->args[1]->type;
      if (is_dyn(e->args[1], &k)) et = dyn_type(e->args[1], k, t);
      ladle_dtype rt;
      if (ladle_type_is_float(id))
        rt = t;
      else if (ladle_type_is_integer(et.id))
        rt = t;
      else if (ladle_type_is_float(
                   et.id)) /* as Polars: an integer to a float power is the power's type */
        rt = ladle_dtype_make(et.id);
      else
        rt = ladle_dtype_make(LADLE_TYPE_FLOAT64);
      LADLE_RETURN_NOT_OK(coerce(&b->args[0], rt, err));
      if (ladle_type_is_float(rt.id))
        LADLE_RETURN_NOT_OK(coerce(&b->args[1], rt, err));
      else /* as Polars: a negative or too big integer exponent is an error */
        LADLE_RETURN_NOT_OK(ladle_bexpr_cast(b->args[1], ladle_dtype_make(LADLE_TYPE_UINT32),
                                             LADLE_CAST_STRICT, &b->args[1], err));
      b->type = rt;
      break;
    }
    case LADLE_FN_HASH:
      b->type = ladle_dtype_make(LADLE_TYPE_UINT64);
      break;
    case LADLE_FN_STR_LEN_BYTES:
    case LADLE_FN_STR_LEN_CHARS:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_STRING, s, b, "str"));
      b->type = ladle_dtype_make(LADLE_TYPE_UINT32);
      break;
    case LADLE_FN_STR_CONTAINS:
    case LADLE_FN_STR_STARTS_WITH:
    case LADLE_FN_STR_ENDS_WITH:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_STRING, s, b, "str"));
      if (e->fopts.str == NULL)
        return ladle_err_set(err, LADLE_EINVAL, "%s on '%s' needs a pattern", ladle_func_name(f),
                             b->args[0]->name);
      b->type = ladle_dtype_make(LADLE_TYPE_BOOL);
      break;
    case LADLE_FN_STR_TO_UPPER:
    case LADLE_FN_STR_TO_LOWER:
    case LADLE_FN_STR_SLICE:
    case LADLE_FN_STR_STRIP_CHARS:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_STRING, s, b, "str"));
      b->type = t;
      break;
    case LADLE_FN_STR_CONCAT:
      for (size_t i = 0; i < b->nargs; i++)
        LADLE_RETURN_NOT_OK(coerce(&b->args[i], ladle_dtype_make(LADLE_TYPE_STRING), err));
      b->type = ladle_dtype_make(LADLE_TYPE_STRING);
      break;
    case LADLE_FN_DT_YEAR:
    case LADLE_FN_DT_MONTH:
    case LADLE_FN_DT_DAY:
    case LADLE_FN_DT_WEEKDAY:
    case LADLE_FN_DT_ORDINAL_DAY:
    case LADLE_FN_DT_TRUNCATE:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_DATE || id == LADLE_TYPE_DATETIME, s, b, "date"));
      b->type = f == LADLE_FN_DT_YEAR          ? ladle_dtype_make(LADLE_TYPE_INT32)
                : f == LADLE_FN_DT_ORDINAL_DAY ? ladle_dtype_make(LADLE_TYPE_INT16)
                : f == LADLE_FN_DT_TRUNCATE    ? t
                                               : ladle_dtype_make(LADLE_TYPE_INT8);
      if (f == LADLE_FN_DT_TRUNCATE && (e->fopts.str == NULL || (strcmp(e->fopts.str, "1d") != 0 &&
                                                                 strcmp(e->fopts.str, "1mo") != 0)))
        return ladle_err_set(
            err, LADLE_ENOTSUP,
            "dt.truncate on '%s': only \"1d\" and \"1mo\" are supported, got \"%s\"",
            b->args[0]->name, e->fopts.str ? e->fopts.str : "(null)");
      break;
    case LADLE_FN_DT_HOUR:
    case LADLE_FN_DT_MINUTE:
    case LADLE_FN_DT_SECOND:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_DATETIME, s, b, "datetime"));
      b->type = ladle_dtype_make(LADLE_TYPE_INT8);
      break;
    case LADLE_FN_STR_SPLIT:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_STRING, s, b, "str"));
      if (e->fopts.str == NULL)
        return ladle_err_set(err, LADLE_EINVAL, "str.split on '%s' needs a separator",
                             b->args[0]->name);
      b->type = ladle_dtype_list(LADLE_TYPE_STRING);
      break;
    case LADLE_FN_LIST_LEN:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_LIST, s, b, "list"));
      b->type = ladle_dtype_make(LADLE_TYPE_UINT32);
      break;
    case LADLE_FN_LIST_SLICE:
      LADLE_RETURN_NOT_OK(need(id == LADLE_TYPE_LIST, s, b, "list"));
      b->type = t;
      break;
    default:
      return ladle_err_set(err, LADLE_ENOTSUP, "function %s", ladle_func_name(f));
  }
  b->fopts = e->fopts;
  b->fopts.str = NULL;
  if (e->fopts.str != NULL && (b->fopts.str = ladle_strdup(e->fopts.str)) == NULL)
    return LADLE_OOM(err, "function option");
  return LADLE_OK;
}

static ladle_status bind_agg(const ladle_expr *e, bind_state *s, ladle_bexpr *b) {
  char b1[64];
  ladle_agg_op op = (ladle_agg_op)e->op;
  if ((int)op < 0 || op >= LADLE_AGG_COUNT_)
    return ladle_err_set(s->err, LADLE_EINVAL, "unknown aggregation %d", (int)op);
  ladle_dtype t = b->args[0]->type;
  ladle_type_id id = t.id;
  bool num = ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL;
  ladle_dtype u32 = ladle_dtype_make(LADLE_TYPE_UINT32);
  ladle_dtype fl =
      ladle_dtype_make(id == LADLE_TYPE_FLOAT32 ? LADLE_TYPE_FLOAT32 : LADLE_TYPE_FLOAT64);
  bool ok = true;
  switch (op) {
    case LADLE_AGG_SUM:
      ok = num || id == LADLE_TYPE_DURATION || id == LADLE_TYPE_NULL || id == LADLE_TYPE_INT128;
      if (id == LADLE_TYPE_BOOL)
        b->type = u32;
      else if (id == LADLE_TYPE_INT8 || id == LADLE_TYPE_INT16 || id == LADLE_TYPE_UINT8 ||
               id == LADLE_TYPE_UINT16 || id == LADLE_TYPE_NULL)
        b->type = ladle_dtype_make(LADLE_TYPE_INT64);
      else
        b->type = t;
      break;
    case LADLE_AGG_MEAN:
    case LADLE_AGG_STD:
    case LADLE_AGG_VAR:
    case LADLE_AGG_MEDIAN:
    case LADLE_AGG_QUANTILE:
      ok = num || id == LADLE_TYPE_NULL;
      b->type = fl;
      if (op == LADLE_AGG_QUANTILE && !(e->aopts.quantile >= 0.0 && e->aopts.quantile <= 1.0))
        return ladle_err_set(s->err, LADLE_EINVAL, "quantile of '%s': %g is not in [0, 1]",
                             b->args[0]->name, e->aopts.quantile);
      break;
    case LADLE_AGG_MIN:
    case LADLE_AGG_MAX:
    case LADLE_AGG_FIRST:
    case LADLE_AGG_LAST:
      b->type = t;
      break;
    case LADLE_AGG_COUNT:
    case LADLE_AGG_NULL_COUNT:
    case LADLE_AGG_LEN:
    case LADLE_AGG_N_UNIQUE:
      b->type = u32;
      break;
    case LADLE_AGG_ARG_MIN:
    case LADLE_AGG_ARG_MAX:
      ok = num || id == LADLE_TYPE_STRING || ladle_type_is_temporal(id);
      b->type = u32;
      break;
    case LADLE_AGG_ANY:
    case LADLE_AGG_ALL:
      ok = id == LADLE_TYPE_BOOL;
      b->type = t;
      break;
    case LADLE_AGG_IMPLODE:
      /* a list of one level of a flat type (ladle_dtype_list gives Null else) */
      b->type = ladle_dtype_list(id);
      ok = b->type.id == LADLE_TYPE_LIST;
      break;
    default:
      break;
  }
  if (!ok)
    return ladle_err_set(s->err, LADLE_ETYPE, "%s of '%s': not defined for type %s",
                         ladle_agg_name(op), b->args[0]->name, tname(t, b1));
  b->aopts = e->aopts;
  return LADLE_OK;
}

/* Whether `e` accepts arguments of carried types (DECIMAL, TIME, BINARY):
 * the expressions that move or test values without computing on them. */
static bool carries(const ladle_expr *e) {
  switch (e->kind) {
    case LADLE_EX_ALIAS:
    case LADLE_EX_CAST:
      return true;
    case LADLE_EX_FUNC:
      return e->op == LADLE_FN_IS_NULL || e->op == LADLE_FN_IS_NOT_NULL;
    case LADLE_EX_AGG:
      return e->op == LADLE_AGG_FIRST || e->op == LADLE_AGG_LAST || e->op == LADLE_AGG_COUNT ||
             e->op == LADLE_AGG_NULL_COUNT || e->op == LADLE_AGG_LEN || e->op == LADLE_AGG_IMPLODE;
    default:
      return false;
  }
}
/* Whether e, with bound arguments b, computes on INT128 or UINT128 where ladle
 * can: an arithmetic operator or a comparison between INT128 and INT128,
 * another integer or a boolean; when/then/otherwise and fill_null, which only
 * move values (their binder still asks for a common type); sum, min and max
 * of INT128 (agg.c). */
static bool int128_computes(const ladle_expr *e, const ladle_bexpr *b) {
  if (e->kind == LADLE_EX_AGG && e->nargs == 1)
    return b->args[0]->type.id == LADLE_TYPE_INT128 &&
           (e->op == LADLE_AGG_SUM || e->op == LADLE_AGG_MIN || e->op == LADLE_AGG_MAX);
  bool when = e->kind == LADLE_EX_WHEN || (e->kind == LADLE_EX_FUNC && e->op == LADLE_FN_FILL_NULL);
  if (!when && (e->kind != LADLE_EX_BINARY || e->op == LADLE_OP_AND || e->op == LADLE_OP_OR ||
                e->op == LADLE_OP_XOR))
    return false;
  bool wide = false;
  for (size_t i = 0; i < e->nargs; i++) {
    ladle_type_id t = b->args[i]->type.id;
    bool w = t == LADLE_TYPE_INT128 || (when && t == LADLE_TYPE_UINT128);
    wide |= w;
    if (when ? !w && ladle_type_is_carried(t)
             : !w && t != LADLE_TYPE_NULL && t != LADLE_TYPE_BOOL && !ladle_type_is_integer(t))
      return false;
  }
  return wide;
}
/* Whether e, with bound arguments b, computes on LIST where ladle can: the
 * list functions on their list, when/then/otherwise and fill_null moving
 * whole lists (every argument but the conditions a LIST or a null). */
static bool list_computes(const ladle_expr *e, const ladle_bexpr *b) {
  if (e->kind == LADLE_EX_FUNC && (e->op == LADLE_FN_LIST_LEN || e->op == LADLE_FN_LIST_SLICE))
    return e->nargs == 1 && b->args[0]->type.id == LADLE_TYPE_LIST;
  bool when = e->kind == LADLE_EX_WHEN;
  if (!when && !(e->kind == LADLE_EX_FUNC && e->op == LADLE_FN_FILL_NULL)) return false;
  bool list = false;
  for (size_t i = 0; i < e->nargs; i++) {
    ladle_type_id t = b->args[i]->type.id;
    if (when && i % 2 == 0 && i + 1 < e->nargs) continue; /* a condition */
    if (t != LADLE_TYPE_LIST && t != LADLE_TYPE_NULL) return false;
    list |= t == LADLE_TYPE_LIST;
  }
  return list;
}

static const char *cum_name(int op) {
  static const char *names[] = {"cum_sum", "cum_prod", "cum_min", "cum_max", "cum_count", "shift"};
  return op >= 0 && op <= LADLE_CUM_SHIFT ? names[op] : "cumulative";
}

static const char *expr_kind_name(const ladle_expr *e) {
  switch (e->kind) {
    case LADLE_EX_BINARY:
      return ladle_binop_name(e->op);
    case LADLE_EX_FUNC:
      return "this function";
    case LADLE_EX_AGG:
      return ladle_agg_name((ladle_agg_op)e->op);
    case LADLE_EX_WHEN:
      return "when/then";
    case LADLE_EX_RANK:
      return "rank";
    case LADLE_EX_OVER:
      return "windows";
    case LADLE_EX_CUM:
      return cum_name(e->op);
    default:
      return "this expression";
  }
}

/* A running function's type, as Polars gives it: cum_sum of Boolean UInt32 and
 * of 8/16-bit integers Int64; cum_prod of integers Int64 (UInt64 stays); the
 * others the input's type (cum_count UInt32). The input is cast to the output
 * type here, so that the kernel accumulates in it. */
static ladle_status bind_cumulative(bind_state *s, ladle_bexpr *b, ladle_error *err) {
  const char *what = cum_name(b->op);
  if (s->ctx == LADLE_CTX_GROUPS && !s->in_over)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "%s inside group_by().agg() gives a list per group (List type, not "
                         "supported yet)",
                         what);
  ladle_bexpr *a = b->args[0];
  ladle_type_id id = a->type.id;
  /* integers of at most 64 bits (Int128 is carried, not accumulated) */
  bool integer = ladle_type_is_integer(id) && id != LADLE_TYPE_INT128 && id != LADLE_TYPE_UINT128,
       flt = id == LADLE_TYPE_FLOAT32 || id == LADLE_TYPE_FLOAT64;
  ladle_dtype to = a->type;
  bool ok = true;
  switch ((ladle_cum_op)b->op) {
    case LADLE_CUM_SUM:
      if (id == LADLE_TYPE_BOOL)
        to = ladle_dtype_make(LADLE_TYPE_UINT32);
      else if (id == LADLE_TYPE_INT8 || id == LADLE_TYPE_INT16 || id == LADLE_TYPE_UINT8 ||
               id == LADLE_TYPE_UINT16)
        to = ladle_dtype_make(LADLE_TYPE_INT64);
      else
        ok = integer || flt || id == LADLE_TYPE_DURATION;
      break;
    case LADLE_CUM_PROD:
      if (id == LADLE_TYPE_BOOL || (integer && id != LADLE_TYPE_UINT64))
        to = ladle_dtype_make(LADLE_TYPE_INT64);
      ok = id == LADLE_TYPE_BOOL || integer || flt;
      break;
    case LADLE_CUM_MIN:
    case LADLE_CUM_MAX:
      ok = integer || flt || id == LADLE_TYPE_DATE || id == LADLE_TYPE_DATETIME ||
           id == LADLE_TYPE_DURATION;
      break;
    case LADLE_CUM_COUNT:
      b->type = ladle_dtype_make(LADLE_TYPE_UINT32);
      b->has_window = true;
      b->scalar = a->scalar; /* of one value: one value */
      return set_name(b, a->name, err);
    case LADLE_CUM_SHIFT:
      ok = id != LADLE_TYPE_NULL;
      break;
    default:
      ok = false;
  }
  if (!ok) {
    char t[64];
    return ladle_err_set(err, LADLE_ENOTSUP, "%s of %s is not supported yet", what,
                         tname(a->type, t));
  }
  if (!ladle_dtype_equal(to, a->type))
    LADLE_RETURN_NOT_OK(ladle_bexpr_cast(b->args[0], to, LADLE_CAST_WRAP, &b->args[0], err));
  b->type = to;
  b->has_window = true;
  b->scalar = b->args[0]->scalar;
  return set_name(b, b->args[0]->name, err);
}

static ladle_status bind_rec(const ladle_expr *e, bind_state *s, ladle_bexpr **out) {
  ladle_error *err = s->err;
  if (e == NULL) return LADLE_OOM(err, "expression (a builder returned NULL)");
  ladle_bexpr *b = bnew(e->kind, e->nargs);
  if (b == NULL) return LADLE_OOM(err, "bound expression");
  b->op = e->op;
  if (e->kind == LADLE_EX_CUM) {
    b->descending = e->descending;
    b->offset = e->offset;
  }
  ladle_status st = LADLE_OK;
  char b1[64], b2[64];
  /* Aggregations and windows change the context of their children. */
  bool was_agg = s->in_agg, was_over = s->in_over;
  /* pl.len() too where the group is not the input: under an aggregation of a
   * group_by or a window (an implode of `pl.len() + col`, a max of
   * `col * pl.len()`) Polars' len() is the group's height, not the input's; in
   * a select or with_columns the group is the input, and len() its height */
  if (e->kind == LADLE_EX_AGG || e->kind == LADLE_EX_LEN) {
    if (s->in_agg && !(e->kind == LADLE_EX_LEN && s->ctx != LADLE_CTX_GROUPS && !s->in_over)) {
      st = ladle_err_set(err, LADLE_EINVAL, "%s: an aggregation inside an aggregation",
                         e->kind == LADLE_EX_LEN ? "len" : ladle_agg_name((ladle_agg_op)e->op));
      goto done;
    }
    s->in_agg = true;
  }
  if (e->kind == LADLE_EX_OVER) {
    /* a window under an aggregation of a select or with_columns is a column of
     * the rows, aggregated over them all ((x - x.mean().over("g")).abs().max());
     * under a group_by's aggregation or another window it is not supported */
    if (s->in_over || s->ctx == LADLE_CTX_GROUPS) {
      st = ladle_err_set(err, LADLE_ENOTSUP,
                         "a window (over) inside an aggregation or another window");
      goto done;
    }
    s->in_over = true;
  }
  if (e->kind != LADLE_EX_OVER) {
    st = bind_args(e, s, b);
  } else {
    /* the partition keys are row-wise expressions of the input; the window's
     * own aggregations are its groups', whatever aggregates the window */
    bool agg = s->in_agg;
    s->in_agg = false;
    st = bind_rec(e->args[0], s, &b->args[0]);
    s->in_over = false;
    for (size_t i = 1; st == LADLE_OK && i < e->nargs; i++) {
      st = bind_rec(e->args[i], s, &b->args[i]);
      if (st == LADLE_OK && b->args[i]->has_agg)
        st = ladle_err_set(err, LADLE_EINVAL, "over: partition key '%s' is an aggregation",
                           b->args[i]->name);
    }
    s->in_agg = agg;
  }
  s->in_agg = was_agg;
  s->in_over = was_over;
  if (st != LADLE_OK) goto done;
  if (!carries(e) && !int128_computes(e, b) && !list_computes(e, b)) {
    for (size_t i = 0; i < e->nargs; i++)
      if (b->args[i] != NULL && ladle_type_is_carried(b->args[i]->type.id)) {
        st = ladle_err_set(err, LADLE_ENOTSUP,
                           "'%s' is %s: ladle carries this type through scans, filters, joins, "
                           "sorts and casts, but does not compute %s on it yet",
                           b->args[i]->name, tname(b->args[i]->type, b1), expr_kind_name(e));
        goto done;
      }
  }
  switch (e->kind) {
    case LADLE_EX_COL: {
      int64_t i = ladle_schema_find(s->schema, e->name);
      if (i < 0) {
        st = ladle_err_set(err, LADLE_ENOCOL, "column '%s' not found", e->name);
        break;
      }
      b->col = i;
      b->type = s->schema->types[i];
      b->scalar = false;
      if (s->ctx == LADLE_CTX_GROUPS && !s->in_agg && !s->in_over) b->scalar = false;
      st = set_name(b, e->name, err);
      break;
    }
    case LADLE_EX_LIT:
      ladle_column_copy_ref(&e->lit, &b->lit);
      b->type = e->lit.type;
      b->scalar = e->lit_kind != LADLE_LIT_SERIES;
      if (e->lit_kind == LADLE_LIT_SERIES) b->scalar = true; /* only is_in takes these */
      st = set_name(b, "literal", err);
      break;
    case LADLE_EX_ALIAS:
      b->type = b->args[0]->type;
      st = set_name(b, e->name, err);
      break;
    case LADLE_EX_BINARY:
      if ((st = bind_binary(e, s, b)) == LADLE_OK) st = set_name(b, b->args[0]->name, err);
      break;
    case LADLE_EX_FUNC:
      if ((st = bind_func(e, s, b)) == LADLE_OK) st = set_name(b, b->args[0]->name, err);
      break;
    case LADLE_EX_CAST:
      b->type = e->cast_to;
      b->cast_mode = e->cast_mode;
      if (!ladle_cast_supported(b->args[0]->type, e->cast_to) &&
          !ladle_cast_refused(b->args[0]->type, e->cast_to)) {
        st = ladle_err_set(err, LADLE_ETYPE, "cast of '%s' from %s to %s is not supported",
                           b->args[0]->name, tname(b->args[0]->type, b1), tname(e->cast_to, b2));
        break;
      }
      st = set_name(b, b->args[0]->name, err);
      break;
    case LADLE_EX_WHEN: {
      size_t n = (e->nargs - 1) / 2;
      ladle_dtype t = b->args[e->nargs - 1]->type;
      for (size_t i = 0; i < n && st == LADLE_OK; i++) {
        ladle_bexpr *c = b->args[2 * i];
        /* as Polars, an untyped null is not a condition (a typed one is) */
        if (c->type.id != LADLE_TYPE_BOOL)
          st = ladle_err_set(err, LADLE_ETYPE, "when: condition '%s' is %s, not bool", c->name,
                             tname(c->type, b1));
      }
      /* the result type is the supertype of every branch; dyn literals adopt it */
      bool have = false;
      for (size_t i = 0; i <= n && st == LADLE_OK; i++) {
        size_t k = i < n ? 2 * i + 1 : e->nargs - 1;
        ladle_lit_kind lk;
        if (is_dyn(e->args[k], &lk)) continue;
        if (!have) {
          t = b->args[k]->type;
          have = true;
        } else if (!ladle_type_supertype(t, b->args[k]->type, &t)) {
          st = ladle_err_set(err, LADLE_ETYPE, "when/then: branches of types %s and %s",
                             tname(t, b1), tname(b->args[k]->type, b2));
        }
      }
      for (size_t i = 0; i <= n && st == LADLE_OK; i++) {
        size_t k = i < n ? 2 * i + 1 : e->nargs - 1;
        ladle_lit_kind lk;
        if (is_dyn(e->args[k], &lk)) {
          ladle_dtype dt = have ? dyn_type(e->args[k], lk, t) : b->args[k]->type;
          if (!have) {
            t = dt;
            have = true;
          } else if (!ladle_dtype_equal(dt, t)) {
            ladle_type_supertype(t, dt, &t);
          }
        }
      }
      for (size_t i = 0; i <= n && st == LADLE_OK; i++) {
        size_t k = i < n ? 2 * i + 1 : e->nargs - 1;
        st = coerce(&b->args[k], t, err);
      }
      b->type = t;
      /* Polars computes a branch only on the rows that take it in a select,
       * but on all of them per group (group_by, over) */
      b->all_rows = s->ctx == LADLE_CTX_GROUPS || s->in_over;
      if (st == LADLE_OK) st = set_name(b, n > 0 ? b->args[1]->name : b->args[0]->name, err);
      break;
    }
    case LADLE_EX_AGG:
      if ((st = bind_agg(e, s, b)) == LADLE_OK) st = set_name(b, b->args[0]->name, err);
      b->has_agg = true;
      b->scalar = true;
      break;
    case LADLE_EX_LEN:
      b->type = ladle_dtype_make(LADLE_TYPE_UINT32);
      b->has_agg = true;
      b->scalar = true;
      st = set_name(b, "len", err);
      break;
    case LADLE_EX_RANK:
      if (s->ctx == LADLE_CTX_GROUPS && !s->in_over) {
        st = ladle_err_set(
            err, LADLE_ENOTSUP,
            "rank inside group_by().agg() gives a list per group (List type, not supported yet)");
        break;
      }
      b->type =
          ladle_dtype_make(e->op == LADLE_RANK_AVERAGE ? LADLE_TYPE_FLOAT64 : LADLE_TYPE_UINT32);
      b->descending = e->descending;
      b->has_window = true;
      b->scalar = b->args[0]->scalar; /* the rank of one value is 1 */
      st = set_name(b, b->args[0]->name, err);
      break;
    case LADLE_EX_OVER:
      b->type = b->args[0]->type;
      b->has_window = true;
      b->has_agg = false;
      b->scalar = false;
      st = set_name(b, b->args[0]->name, err);
      break;
    case LADLE_EX_CUM:
      st = bind_cumulative(s, b, err);
      break;
  }
done:
  if (st != LADLE_OK) {
    ladle_bexpr_destroy(b);
    return st;
  }
  *out = b;
  return LADLE_OK;
}

ladle_status ladle_bind(const ladle_expr *e, const ladle_schema *schema, ladle_bind_ctx ctx,
                        ladle_bexpr **out, ladle_error *err) {
  bind_state s = {schema, ctx, false, false, err};
  ladle_bexpr *b;
  LADLE_RETURN_NOT_OK(bind_rec(e, &s, &b));
  if (ctx == LADLE_CTX_GROUPS && !b->scalar) {
    ladle_status st = ladle_err_set(
        err, LADLE_ENOTSUP,
        "group_by: '%s' is not an aggregation; it would give a list per group (List type, not "
        "supported yet)",
        b->name);
    ladle_bexpr_destroy(b);
    return st;
  }
  *out = b;
  return LADLE_OK;
}

void ladle_bexpr_explain(const ladle_bexpr *e, const ladle_schema *in, ladle_strbuf *b) {
  char buf[64];
  switch (e->kind) {
    case LADLE_EX_COL:
      ladle_strbuf_printf(b, "col(\"%s\")", in->names[e->col]);
      return;
    case LADLE_EX_LIT:
      if (e->lit.length != 1 || e->lit.null_count == 1) {
        ladle_strbuf_printf(b, "lit(%s[%lld])", e->lit.null_count == 1 ? "null" : "series",
                            (long long)e->lit.length);
      } else if (ladle_type_is_float(e->type.id)) {
        double v = e->type.id == LADLE_TYPE_FLOAT32 ? *(const float *)e->lit.values
                                                    : *(const double *)e->lit.values;
        ladle_strbuf_printf(b, "%g", v);
      } else if (e->type.id == LADLE_TYPE_STRING) {
        ladle_strbuf_printf(b, "\"%.*s\"", (int)ladle_str_len(&e->lit, 0),
                            ladle_str_ptr(&e->lit, 0));
      } else {
        int64_t v = 0;
        memcpy(&v, e->lit.values, ladle_type_width(e->type.id));
        ladle_strbuf_printf(b, "%lld", (long long)v);
      }
      ladle_strbuf_printf(b, ":%s", ladle_dtype_name(e->type, buf, sizeof buf));
      return;
    case LADLE_EX_ALIAS:
      ladle_bexpr_explain(e->args[0], in, b);
      ladle_strbuf_printf(b, ".alias(\"%s\")", e->name);
      return;
    case LADLE_EX_BINARY:
      ladle_strbuf_printf(b, "(");
      ladle_bexpr_explain(e->args[0], in, b);
      ladle_strbuf_printf(b, " %s ", ladle_binop_name(e->op));
      ladle_bexpr_explain(e->args[1], in, b);
      ladle_strbuf_printf(b, ")");
      return;
    case LADLE_EX_CAST:
      ladle_bexpr_explain(e->args[0], in, b);
      ladle_strbuf_printf(b, ".cast(%s%s)", ladle_dtype_name(e->type, buf, sizeof buf),
                          e->cast_mode == LADLE_CAST_STRICT ? ", strict"
                          : e->cast_mode == LADLE_CAST_WRAP ? ", wrap"
                                                            : "");
      return;
    case LADLE_EX_LEN:
      ladle_strbuf_printf(b, "len()");
      return;
    case LADLE_EX_WHEN: {
      size_t n = (e->nargs - 1) / 2;
      for (size_t i = 0; i < n; i++) {
        ladle_strbuf_printf(b, i == 0 ? "when(" : ".when(");
        ladle_bexpr_explain(e->args[2 * i], in, b);
        ladle_strbuf_printf(b, ").then(");
        ladle_bexpr_explain(e->args[2 * i + 1], in, b);
        ladle_strbuf_printf(b, ")");
      }
      ladle_strbuf_printf(b, ".otherwise(");
      ladle_bexpr_explain(e->args[e->nargs - 1], in, b);
      ladle_strbuf_printf(b, ")");
      return;
    }
    default:
      break;
  }
  const char *fname = e->kind == LADLE_EX_FUNC   ? ladle_func_name((ladle_func)e->op)
                      : e->kind == LADLE_EX_AGG  ? ladle_agg_name((ladle_agg_op)e->op)
                      : e->kind == LADLE_EX_RANK ? "rank"
                                                 : "over";
  ladle_bexpr_explain(e->args[0], in, b);
  if (e->kind == LADLE_EX_CUM) {
    if (e->op == LADLE_CUM_SHIFT)
      ladle_strbuf_printf(b, ".shift(%lld)", (long long)e->offset);
    else
      ladle_strbuf_printf(b, ".%s(%s)", cum_name(e->op), e->descending ? "reverse=true" : "");
    return;
  }
  ladle_strbuf_printf(b, ".%s(", fname);
  for (size_t i = 1; i < e->nargs; i++) {
    if (i > 1) ladle_strbuf_printf(b, ", ");
    ladle_bexpr_explain(e->args[i], in, b);
  }
  if (e->fopts.str != NULL)
    ladle_strbuf_printf(b, "%s\"%s\"", e->nargs > 1 ? ", " : "", e->fopts.str);
  ladle_strbuf_printf(b, ")");
}
