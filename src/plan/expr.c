/* expr.c — building and sharing unbound expressions. A builder that receives a
 * NULL argument (a failed allocation upstream) releases the rest and returns
 * NULL; the plan builder that gets the NULL reports LADLE_ENOMEM. */
#include "plan.h"

static ladle_expr *expr_new(ladle_expr_kind kind, size_t nargs) {
  ladle_expr *e = calloc(1, sizeof *e);
  if (e == NULL) return NULL;
  atomic_init(&e->refcount, 1);
  e->kind = kind;
  if (nargs > 0) {
    e->args = calloc(nargs, sizeof *e->args);
    if (e->args == NULL) {
      free(e);
      return NULL;
    }
  }
  e->nargs = nargs;
  return e;
}

ladle_expr *ladle_expr_ref(ladle_expr *e) {
  if (e != NULL) atomic_fetch_add_explicit(&e->refcount, 1, memory_order_relaxed);
  return e;
}

void ladle_expr_destroy(ladle_expr *e) {
  if (e == NULL) return;
  if (atomic_fetch_sub_explicit(&e->refcount, 1, memory_order_acq_rel) != 1) return;
  for (size_t i = 0; i < e->nargs; i++) ladle_expr_destroy(e->args[i]);
  free(e->args);
  free(e->name);
  free((char *)(uintptr_t)e->fopts.str);
  ladle_column_release(&e->lit);
  free(e);
}

/* Takes ownership of args; on any NULL releases all and returns NULL. */
static ladle_expr *expr_with_args(ladle_expr_kind kind, size_t n, ladle_expr *const *args) {
  bool ok = true;
  for (size_t i = 0; i < n; i++) ok &= args[i] != NULL;
  ladle_expr *e = ok ? expr_new(kind, n) : NULL;
  if (e == NULL) {
    for (size_t i = 0; i < n; i++) ladle_expr_destroy(args[i]);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) e->args[i] = args[i];
  return e;
}

ladle_expr *ladle_expr_col(const char *name) {
  if (name == NULL) return NULL;
  ladle_expr *e = expr_new(LADLE_EX_COL, 0);
  if (e == NULL) return NULL;
  e->name = ladle_strdup(name);
  if (e->name == NULL) {
    ladle_expr_destroy(e);
    return NULL;
  }
  return e;
}

static ladle_expr *lit_fixed(ladle_dtype type, const void *value, size_t width) {
  ladle_expr *e = expr_new(LADLE_EX_LIT, 0);
  if (e == NULL) return NULL;
  if (ladle_column_alloc(type, 1, value == NULL, 0, &e->lit, NULL) != LADLE_OK) {
    ladle_expr_destroy(e);
    return NULL;
  }
  if (value == NULL) {
    if (type.id != LADLE_TYPE_NULL) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&e->lit), 0, false);
    if (type.id == LADLE_TYPE_STRING)
      LADLE_COL_MUT(&e->lit, int64_t)[1] = 0;
    else if (width > 0)
      memset(LADLE_COL_MUT(&e->lit, char), 0, width);
    e->lit.null_count = 1;
  } else {
    memcpy(LADLE_COL_MUT(&e->lit, char), value, width);
  }
  return e;
}

ladle_expr *ladle_expr_lit_null(ladle_dtype type) {
  return lit_fixed(type, NULL, ladle_type_width(type.id));
}

ladle_expr *ladle_expr_lit_bool(bool value) {
  uint8_t v = value;
  return lit_fixed(ladle_dtype_make(LADLE_TYPE_BOOL), &v, 1);
}

ladle_expr *ladle_expr_lit_int(int64_t value, ladle_type_id id) {
  if (!ladle_type_is_integer(id)) return NULL;
  ladle_dtype t = ladle_dtype_make(id);
  size_t w = ladle_type_width(id);
  /* Little-endian: the low bytes of the int64 are the narrow value. The plan
   * builder checks the range when it binds. */
  return lit_fixed(t, &value, w);
}

ladle_expr *ladle_expr_lit_uint(uint64_t value, ladle_type_id id) {
  if (!ladle_type_is_integer(id)) return NULL;
  return lit_fixed(ladle_dtype_make(id), &value, ladle_type_width(id));
}

ladle_expr *ladle_expr_lit_int128(uint64_t hi, uint64_t lo, ladle_type_id id) {
  if (id != LADLE_TYPE_INT128 && id != LADLE_TYPE_UINT128) return NULL;
  uint64_t v[2] = {lo, hi}; /* little-endian: the low half first */
  return lit_fixed(ladle_dtype_make(id), v, 16);
}

ladle_expr *ladle_expr_lit_float(double value, ladle_type_id id) {
  if (id == LADLE_TYPE_FLOAT32) {
    float f = (float)value;
    return lit_fixed(ladle_dtype_make(id), &f, 4);
  }
  if (id != LADLE_TYPE_FLOAT64) return NULL;
  return lit_fixed(ladle_dtype_make(id), &value, 8);
}

ladle_expr *ladle_expr_lit_dyn_int(int64_t value) {
  ladle_expr *e = ladle_expr_lit_int(value, LADLE_TYPE_INT64);
  if (e != NULL) e->lit_kind = LADLE_LIT_DYN_INT;
  return e;
}

ladle_expr *ladle_expr_lit_dyn_float(double value) {
  ladle_expr *e = ladle_expr_lit_float(value, LADLE_TYPE_FLOAT64);
  if (e != NULL) e->lit_kind = LADLE_LIT_DYN_FLOAT;
  return e;
}

ladle_expr *ladle_expr_lit_str(const char *value, size_t len) {
  ladle_expr *e = expr_new(LADLE_EX_LIT, 0);
  if (e == NULL) return NULL;
  bool null = value == NULL;
  if (ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_STRING), 1, null, null ? 0 : (int64_t)len,
                         &e->lit, NULL) != LADLE_OK) {
    ladle_expr_destroy(e);
    return NULL;
  }
  LADLE_COL_MUT(&e->lit, int64_t)[1] = null ? 0 : (int64_t)len;
  if (null) {
    ladle_bit_set(LADLE_COL_VALIDITY_MUT(&e->lit), 0, false);
    e->lit.null_count = 1;
  } else {
    memcpy(LADLE_COL_CHARS_MUT(&e->lit), value, len);
  }
  return e;
}

ladle_expr *ladle_expr_lit_temporal(int64_t value, ladle_dtype type) {
  if (type.id == LADLE_TYPE_DATE) {
    int32_t d = (int32_t)value;
    return lit_fixed(type, &d, 4);
  }
  if (type.id != LADLE_TYPE_DATETIME && type.id != LADLE_TYPE_DURATION) return NULL;
  return lit_fixed(type, &value, 8);
}

ladle_expr *ladle_expr_lit_series(size_t n, ladle_expr *const *items) {
  bool ok = true;
  ladle_dtype t = ladle_dtype_make(LADLE_TYPE_NULL);
  for (size_t i = 0; i < n; i++) {
    ok &= items[i] != NULL && items[i]->kind == LADLE_EX_LIT && items[i]->lit.length == 1;
    if (ok && items[i]->lit.type.id != LADLE_TYPE_NULL) {
      if (t.id == LADLE_TYPE_NULL)
        t = items[i]->lit.type;
      else
        ok &= ladle_dtype_equal(t, items[i]->lit.type);
    }
  }
  ladle_expr *e = ok ? expr_new(LADLE_EX_LIT, 0) : NULL;
  if (e != NULL) {
    ladle_column *cols = malloc(LADLE_MAX(n, 1) * sizeof *cols);
    ok = cols != NULL;
    for (size_t i = 0; ok && i < n; i++) {
      cols[i] = items[i]->lit;
      if (cols[i].type.id == LADLE_TYPE_NULL && t.id != LADLE_TYPE_NULL) {
        /* a typed null in place of an untyped one */
        ok = false;
      }
    }
    if (ok) {
      ok = (n == 0 ? ladle_column_alloc(t, 0, false, 0, &e->lit, NULL)
                   : ladle_column_concat(cols, n, &e->lit, NULL)) == LADLE_OK;
    }
    free(cols);
    e->lit_kind = LADLE_LIT_SERIES;
    if (!ok) {
      ladle_expr_destroy(e);
      e = NULL;
    }
  }
  for (size_t i = 0; i < n; i++) ladle_expr_destroy(items[i]);
  return e;
}

ladle_expr *ladle_expr_alias(ladle_expr *e, const char *name) {
  ladle_expr *a = expr_with_args(LADLE_EX_ALIAS, 1, &e);
  if (a == NULL) return NULL;
  a->name = ladle_strdup(name);
  if (a->name == NULL) {
    ladle_expr_destroy(a);
    return NULL;
  }
  return a;
}

ladle_expr *ladle_expr_binary(ladle_binary_op op, ladle_expr *left, ladle_expr *right) {
  ladle_expr *args[2] = {left, right};
  ladle_expr *e = expr_with_args(LADLE_EX_BINARY, 2, args);
  if (e != NULL) e->op = (int)op;
  return e;
}

ladle_expr *ladle_expr_func(ladle_func fn, size_t nargs, ladle_expr *const *args,
                            const ladle_func_opts *opts) {
  ladle_expr *e = expr_with_args(LADLE_EX_FUNC, nargs, args);
  if (e == NULL) return NULL;
  e->op = (int)fn;
  if (opts != NULL) {
    e->fopts = *opts;
    e->fopts.str = NULL;
    if (opts->str != NULL && (e->fopts.str = ladle_strdup(opts->str)) == NULL) {
      ladle_expr_destroy(e);
      return NULL;
    }
  }
  return e;
}

ladle_expr *ladle_expr_cast_mode(ladle_expr *e, ladle_dtype to, ladle_cast_mode mode) {
  ladle_expr *c = expr_with_args(LADLE_EX_CAST, 1, &e);
  if (c == NULL) return NULL;
  c->cast_to = to;
  c->cast_mode = mode;
  return c;
}

ladle_expr *ladle_expr_cast(ladle_expr *e, ladle_dtype to, bool strict) {
  return ladle_expr_cast_mode(e, to, strict ? LADLE_CAST_STRICT : LADLE_CAST_NON_STRICT);
}

ladle_expr *ladle_expr_when(size_t n, ladle_expr *const *conds, ladle_expr *const *thens,
                            ladle_expr *otherwise) {
  ladle_expr **args = malloc((2 * n + 1) * sizeof *args);
  if (args == NULL) {
    for (size_t i = 0; i < n; i++) {
      ladle_expr_destroy(conds[i]);
      ladle_expr_destroy(thens[i]);
    }
    ladle_expr_destroy(otherwise);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    args[2 * i] = conds[i];
    args[2 * i + 1] = thens[i];
  }
  args[2 * n] = otherwise;
  ladle_expr *e = expr_with_args(LADLE_EX_WHEN, 2 * n + 1, args);
  free(args);
  return e;
}

ladle_expr *ladle_expr_agg(ladle_agg_op op, ladle_expr *e, const ladle_agg_opts *opts) {
  ladle_expr *a = expr_with_args(LADLE_EX_AGG, 1, &e);
  if (a == NULL) return NULL;
  a->op = (int)op;
  if (opts != NULL) a->aopts = *opts;
  if (op == LADLE_AGG_STD || op == LADLE_AGG_VAR) {
    if (opts == NULL) a->aopts.ddof = 1;
  }
  return a;
}

ladle_expr *ladle_expr_len(void) { return expr_new(LADLE_EX_LEN, 0); }

ladle_expr *ladle_expr_rank(ladle_expr *e, ladle_rank_method method, bool descending) {
  ladle_expr *r = expr_with_args(LADLE_EX_RANK, 1, &e);
  if (r == NULL) return NULL;
  r->op = (int)method;
  r->descending = descending;
  return r;
}

ladle_expr *ladle_expr_cumulative(ladle_expr *e, ladle_cum_op op, bool reverse) {
  ladle_expr *r = expr_with_args(LADLE_EX_CUM, 1, &e);
  if (r == NULL) return NULL;
  r->op = (int)op;
  r->descending = reverse;
  return r;
}

ladle_expr *ladle_expr_shift(ladle_expr *e, int64_t n) {
  ladle_expr *r = expr_with_args(LADLE_EX_CUM, 1, &e);
  if (r == NULL) return NULL;
  r->op = (int)LADLE_CUM_SHIFT;
  r->offset = n;
  return r;
}

ladle_expr *ladle_expr_over(ladle_expr *e, size_t n, ladle_expr *const *partition_by) {
  ladle_expr **args = malloc((n + 1) * sizeof *args);
  if (args == NULL) {
    ladle_expr_destroy(e);
    for (size_t i = 0; i < n; i++) ladle_expr_destroy(partition_by[i]);
    return NULL;
  }
  args[0] = e;
  for (size_t i = 0; i < n; i++) args[i + 1] = partition_by[i];
  ladle_expr *o = expr_with_args(LADLE_EX_OVER, n + 1, args);
  free(args);
  return o;
}
