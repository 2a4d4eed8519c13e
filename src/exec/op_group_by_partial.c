/* op_group_by_partial.c — GROUP_BY_PARTIAL: a group_by as a partial step per
 * morsel (a pipeline's sink) and a final
 * step over the partials, where every output is an aggregation that splits
 * that way (sum, min, max, first, last, count, null_count, len, mean).
 *
 * Partial: each chunk of the input, on its own task, evaluates its keys and
 * the aggregations' inputs (so no input expression is ever materialised for
 * the whole table), numbers its groups and aggregates them: one row per group
 * of the chunk, the keys at the group's first row, then the partial columns
 * (mean: a Float64 sum and a count). Final: the partial rows, concatenated in
 * chunk order, grouped again by the keys and aggregated once more (sums of
 * sums and of counts, min of mins, first of firsts; mean: sum / count, null
 * where the count is 0). Chunk order keeps what depends on order: a group's
 * first row, first/last, and which of -0.0 and 0.0 a min returns; with
 * maintain_order each chunk's groups are numbered by first appearance, so the
 * final groups are too.
 *
 * With several ranks the exchange sits between the partial rows and the
 * final step (hash-partitioned by key). The planner plans the split
 * (GROUP_BY_PARTIAL under GROUP_BY_FINAL); the sink's first morsel, consumed
 * alone, turns it down when groups are many (partials as long as the input
 * only add work), and the whole group_by runs instead. LADLE_PARTIAL_AGG=0 turns it
 * off, =1 uses it for every input it can run (the tests), and by default it
 * runs on inputs of at least PARTIAL_MIN_ROWS rows in four chunks or more, the
 * first of them at most a quarter of the rows. */
#include <stdlib.h>

#include "operator.h"

enum { PARTIAL_MIN_ROWS = 100000 };

typedef struct pa_expr {
  const ladle_bexpr *e;
  const ladle_bexpr *arg; /* NULL: len() */
  ladle_agg_op op;
  size_t first;  /* index of its first partial column (after the keys) */
  size_t nparts; /* 1, 2 for mean (sum, count), 3 for var/std (count, mean, m2) */
} pa_expr;

/* Releases cols[0..n) (the array stays). */
static void release_n(ladle_column *cols, size_t n) {
  for (size_t i = 0; cols != NULL && i < n; i++) ladle_column_release(&cols[i]);
}

/* What the partial path can run; fills x (p->nexprs of them) and *ncols. p
 * is a GROUP_BY, or a SELECT whose every expression is an aggregation (one
 * group of every row, as a GROUP_BY without keys). With several ranks a sum
 * or mean of floats over all rows is taken in partials too: the whole data
 * is on no rank to add in Polars' order, so it equals Polars' to rounding. */
static bool pa_eligible(const ladle_plan *p, int ranks, pa_expr *x, size_t *ncols) {
  if (p->kind != LADLE_NODE_GROUP_BY && p->kind != LADLE_NODE_SELECT) return false;
  bool exact = ranks <= 1;
  size_t c = p->nkeys;
  for (size_t i = 0; i < p->nkeys; i++)
    if (!exec_row_wise(p->keys[i]) || p->keys[i]->type.id == LADLE_TYPE_LIST) return false;
  for (size_t i = 0; i < p->nexprs; i++) {
    const ladle_bexpr *e = p->exprs[i];
    while (e->kind == LADLE_EX_ALIAS && e->nargs == 1) e = e->args[0];
    pa_expr *q = &x[i];
    memset(q, 0, sizeof *q);
    q->e = e;
    q->first = c;
    q->nparts = 1;
    if (e->has_window) return false;
    if (e->kind == LADLE_EX_LEN) {
      if (e->nargs != 0) return false;
      q->op = LADLE_AGG_LEN;
      c++;
      continue;
    }
    if (e->kind != LADLE_EX_AGG || e->nargs != 1 || !exec_row_wise(e->args[0])) return false;
    q->arg = e->args[0];
    q->op = (ladle_agg_op)e->op;
    ladle_type_id t = q->arg->type.id;
    if (t == LADLE_TYPE_LIST || ladle_type_is_carried(t) || t == LADLE_TYPE_CATEGORICAL)
      return false;
    switch (q->op) {
      case LADLE_AGG_SUM:
        if (!(ladle_type_is_numeric(t) || t == LADLE_TYPE_BOOL || t == LADLE_TYPE_DURATION))
          return false;
        /* over all rows (no keys) a float sum is Polars' pairwise one, bit
         * for bit, which per-chunk partials would not keep */
        if (p->nkeys == 0 && ladle_type_is_float(t) && exact) return false;
        break;
      case LADLE_AGG_MEAN:
        if (!(ladle_type_is_numeric(t) || t == LADLE_TYPE_BOOL) ||
            (exact && (e->aopts.polars_order || p->nkeys == 0)))
          return false;
        q->nparts = 2;
        break;
      case LADLE_AGG_VAR:
      case LADLE_AGG_STD:
        /* over all rows across ranks: each partial's count, mean and sum of
         * squared deviations, combined pairwise (Chan et al.) by the final
         * step, which has one group then (a group's mean broadcast, no
         * gather by group) */
        if (!(ladle_type_is_numeric(t) || t == LADLE_TYPE_BOOL) || exact || p->nkeys != 0)
          return false;
        q->nparts = 3;
        break;
      case LADLE_AGG_MIN:
      case LADLE_AGG_MAX:
      case LADLE_AGG_FIRST:
      case LADLE_AGG_LAST:
      case LADLE_AGG_COUNT:
      case LADLE_AGG_NULL_COUNT:
      case LADLE_AGG_LEN:
        break;
      default:
        return false;
    }
    c += q->nparts;
  }
  *ncols = c;
  return true;
}

static ladle_kexpr kagg(ladle_agg_op op, ladle_dtype type, const ladle_bexpr *e) {
  ladle_kexpr k;
  memset(&k, 0, sizeof k);
  k.kind = op == LADLE_AGG_LEN ? LADLE_KEX_LEN : LADLE_KEX_AGG;
  k.op = (int)op;
  k.type = type;
  if (e != NULL) k.aopts = e->aopts;
  k.nargs = op == LADLE_AGG_LEN ? 0 : 1;
  k.arg_name = e != NULL && e->nargs > 0 && e->args[0]->name != NULL ? e->args[0]->name : "";
  return k;
}

static ladle_status groups_of(exec_state *s, const ladle_plan *p, const ladle_column *keys,
                              int64_t n, ladle_groups *g, ladle_error *err) {
  if (p->nkeys == 0) return ladle_exec_single_group(n, g, err);
  memset(g, 0, sizeof *g);
  ladle_status st = s->be->group_ids(&s->k, keys, p->nkeys, g, err);
  if (st == LADLE_OK && p->maintain_order) st = ladle_groups_order_by_first(g, err);
  if (st != LADLE_OK) ladle_groups_release(g);
  return st;
}

/* var/std's partial columns of one morsel over `arg` grouped by g: the valid
 * values' count (UInt32), their mean and the sum of their squared deviations
 * from it (m2 = population variance * count), Float64, null without values. */
static ladle_status pa_moments(exec_state *s, const pa_expr *q, const ladle_column *arg,
                               ladle_groups *g, ladle_column *out, ladle_error *err) {
  ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64), u32 = ladle_dtype_make(LADLE_TYPE_UINT32);
  ladle_column f, var, nf;
  LADLE_RETURN_NOT_OK(s->be->cast(&s->k, arg, f64, LADLE_CAST_NON_STRICT, q->arg->name, &f, err));
  ladle_kexpr kc = kagg(LADLE_AGG_COUNT, u32, q->e), km = kagg(LADLE_AGG_MEAN, f64, q->e),
              kv = kagg(LADLE_AGG_VAR, f64, q->e);
  km.aopts.polars_order = false;
  kv.aopts.ddof = 0;
  size_t made = 0;
  ladle_status st = s->be->aggregate(&s->k, &kc, &f, g, &out[0], err);
  if (st == LADLE_OK && ++made) st = s->be->aggregate(&s->k, &km, &f, g, &out[1], err);
  if (st == LADLE_OK && ++made) st = s->be->aggregate(&s->k, &kv, &f, g, &var, err);
  ladle_column_release(&f);
  if (st == LADLE_OK) {
    st = s->be->cast(&s->k, &out[0], f64, LADLE_CAST_NON_STRICT, "count", &nf, err);
    if (st == LADLE_OK) {
      st = s->be->binary(&s->k, LADLE_OP_MUL, &var, &nf, f64, &out[2], err);
      ladle_column_release(&nf);
    }
    ladle_column_release(&var);
  }
  if (st != LADLE_OK) release_n(out, made);
  return st;
}

/* var/std over all rows from the partial rows' (count, mean, m2) in
 * part[0..3), one group: N = sum(n); mean = sum(n * mean_i) / N;
 * M2 = sum(m2_i + n_i * (mean_i - mean)^2); var = M2 / (N - ddof), null
 * where N - ddof <= 0 (as Polars); std its square root. */
static ladle_status pa_moments_final(exec_state *s, const pa_expr *q, const ladle_column *part,
                                     ladle_groups *g, ladle_column *out, ladle_error *err) {
  const ladle_backend *be = s->be;
  ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64), u32 = ladle_dtype_make(LADLE_TYPE_UINT32),
              b8 = ladle_dtype_make(LADLE_TYPE_BOOL);
  ladle_kctx k = s->k;
  k.many_rows = false; /* plain divisions */
  ladle_kexpr ks = kagg(LADLE_AGG_SUM, f64, q->e), kn = kagg(LADLE_AGG_SUM, u32, q->e);
  enum { N, NF, NM, S, MEAN, D, D2, ND2, T, M2, DDOF, DEN, VAR, NUL, LE0, RES, NTMP };
  ladle_column c[NTMP];
  memset(c, 0, sizeof c);
  ladle_status st = be->aggregate(&s->k, &kn, &part[0], g, &c[N], err);
  if (st == LADLE_OK) st = be->cast(&k, &part[0], f64, LADLE_CAST_NON_STRICT, "n", &c[NF], err);
  if (st == LADLE_OK) st = be->binary(&k, LADLE_OP_MUL, &c[NF], &part[1], f64, &c[NM], err);
  if (st == LADLE_OK) st = be->aggregate(&s->k, &ks, &c[NM], g, &c[S], err);
  ladle_column nsum;
  memset(&nsum, 0, sizeof nsum);
  if (st == LADLE_OK) st = be->cast(&k, &c[N], f64, LADLE_CAST_NON_STRICT, "n", &nsum, err);
  if (st == LADLE_OK) st = be->binary(&k, LADLE_OP_TRUE_DIV, &c[S], &nsum, f64, &c[MEAN], err);
  /* the deviations of the partial means from the mean (one value: broadcast) */
  if (st == LADLE_OK) st = be->binary(&k, LADLE_OP_SUB, &part[1], &c[MEAN], f64, &c[D], err);
  if (st == LADLE_OK) st = be->binary(&k, LADLE_OP_MUL, &c[D], &c[D], f64, &c[D2], err);
  if (st == LADLE_OK) st = be->binary(&k, LADLE_OP_MUL, &c[NF], &c[D2], f64, &c[ND2], err);
  if (st == LADLE_OK) st = be->binary(&k, LADLE_OP_ADD, &part[2], &c[ND2], f64, &c[T], err);
  if (st == LADLE_OK) st = be->aggregate(&s->k, &ks, &c[T], g, &c[M2], err);
  if (st == LADLE_OK) st = ladle_column_alloc(f64, 1, false, 0, &c[DDOF], err);
  if (st == LADLE_OK) {
    LADLE_COL_MUT(&c[DDOF], double)[0] = (double)q->e->aopts.ddof;
    st = be->binary(&k, LADLE_OP_SUB, &nsum, &c[DDOF], f64, &c[DEN], err);
  }
  if (st == LADLE_OK) st = be->binary(&k, LADLE_OP_TRUE_DIV, &c[M2], &c[DEN], f64, &c[VAR], err);
  if (st == LADLE_OK && q->op == LADLE_AGG_STD) {
    ladle_kexpr sq;
    memset(&sq, 0, sizeof sq);
    sq.kind = LADLE_KEX_FUNC;
    sq.op = LADLE_FN_SQRT;
    sq.type = f64;
    sq.nargs = 1;
    sq.arg_name = q->arg->name != NULL ? q->arg->name : "";
    ladle_column r;
    st = be->func(&k, &sq, &c[VAR], 1, &r, err);
    if (st == LADLE_OK) {
      ladle_column_release(&c[VAR]);
      c[VAR] = r;
    }
  }
  /* null where N - ddof <= 0 (also no value at all) */
  ladle_column zero;
  memset(&zero, 0, sizeof zero);
  if (st == LADLE_OK) st = ladle_column_alloc(f64, 1, false, 0, &zero, err);
  if (st == LADLE_OK) {
    LADLE_COL_MUT(&zero, double)[0] = 0.0;
    st = be->binary(&k, LADLE_OP_LE, &c[DEN], &zero, b8, &c[LE0], err);
  }
  if (st == LADLE_OK) st = ladle_column_nulls(f64, 1, &c[NUL], err);
  if (st == LADLE_OK) {
    ladle_column args[3] = {c[LE0], c[NUL], c[VAR]};
    st = be->when(&k, args, 3, c[VAR].length, &c[RES], err);
  }
  if (st == LADLE_OK) {
    if (q->e->type.id == LADLE_TYPE_FLOAT64) {
      *out = c[RES];
      memset(&c[RES], 0, sizeof c[RES]);
    } else {
      st = be->cast(&k, &c[RES], q->e->type, LADLE_CAST_NON_STRICT, q->e->name, out, err);
    }
  }
  ladle_column_release(&zero);
  ladle_column_release(&nsum);
  for (int i = 0; i < NTMP; i++) ladle_column_release(&c[i]);
  return st;
}

/* The sink's state: per morsel (its local state), the partial rows. */
typedef struct pa_sink {
  const ladle_plan *p;
  pa_expr *x;
  size_t ncols; /* keys, then the partial columns */
  size_t nch;
  ladle_column *parts; /* nch rows of ncols */
  int64_t *rows;       /* per morsel: its groups (partial rows) */
  bool *done;
  int mode;
  int64_t first_len;        /* the source's first morsel's rows */
  int ranks;                /* the job's */
  bool pass;                /* morsels after the first go through ungrouped (below) */
  const ladle_pnode *xnode; /* that EXCHANGE (a table's aggregations: NULL) */
  bool exchange;            /* an EXCHANGE between the partial and final steps (several
                               ranks, rows not on every rank already) */
} pa_sink;

/* Each row its own group: the partial rows of a morsel that does not reduce. */
static ladle_status identity_groups(int64_t n, ladle_groups *g, ladle_error *err) {
  memset(g, 0, sizeof *g);
  g->nrows = g->ngroups = n;
  g->ids = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *g->ids, false);
  g->first = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *g->first, false);
  if (g->ids == NULL || g->first == NULL) {
    ladle_groups_release(g);
    return LADLE_OOM(err, "groups");
  }
  for (int64_t i = 0; i < n; i++) {
    g->ids[i] = (uint32_t)i;
    g->first[i] = i;
  }
  return LADLE_OK;
}

/* Across ranks a group_by never turns its partial step down (every rank must
 * take the same path to the exchange), so where the first morsel finds more
 * groups than half its rows, the later morsels skip the grouping: each row is
 * a partial row of its own (the aggregations over one-row groups: a sum's
 * value, a count's 0 or 1...), the exchange moves them as they are, and the
 * final step groups them once. The shape of the partial rows stays the same,
 * so each rank decides for itself. */
static bool pass_rows(const exec_state *s, const pa_sink *j, int64_t rows, int64_t groups) {
  return j->ranks > 1 && j->exchange && j->mode < 0 && j->p->nkeys > 0 && !s->columns && rows > 0 &&
         groups > rows / 2 && rows <= (int64_t)UINT32_MAX;
}

/* The partial rows of chunk k, from its rows c. */
static ladle_status pa_rows(exec_state *s, pa_sink *j, size_t k, const ladle_chunk *c,
                            ladle_error *err) {
  const ladle_plan *p = j->p;
  ladle_column *out = j->parts + k * j->ncols;
  size_t nk = p->nkeys, made = 0;
  ladle_column *keys = calloc(LADLE_MAX(nk, 1), sizeof *keys);
  if (keys == NULL) return LADLE_OOM(err, "group_by");
  ladle_status st = LADLE_OK;
  size_t have = 0;
  for (; have < nk && st == LADLE_OK; have++)
    st = ladle_eval_chunk(s, p->keys[have], c, &keys[have], err);
  if (st != LADLE_OK) have--;
  ladle_groups g;
  memset(&g, 0, sizeof g);
  bool have_g = false;
  if (st == LADLE_OK && nk == 0 && c->length == 0) {
    /* no rows, no partial row: an empty morsel (a rank without rows) must
     * not give a null first()/last() ahead of the others */
    memset(&g, 0, sizeof g);
    have_g = true;
  } else if (st == LADLE_OK && k > 0 && j->pass) {
    st = identity_groups(c->length, &g, err);
    have_g = st == LADLE_OK;
    if (have_g) atomic_fetch_add(&s->eng->partial_rows_passed, c->length);
  } else if (st == LADLE_OK) {
    st = groups_of(s, p, keys, c->length, &g, err);
    have_g = st == LADLE_OK;
    /* morsel 0 runs alone, before the others (pipeline.c) */
    if (have_g && k == 0 && pass_rows(s, j, c->length, g.ngroups)) j->pass = true;
  }
  bool identity = k > 0 && j->pass;
  for (size_t i = 0; st == LADLE_OK && i < nk; i++) {
    if (identity)
      ladle_column_copy_ref(&keys[i], &out[i]);
    else
      st = s->be->gather(&s->k, &keys[i], g.first, g.ngroups, &out[i], err);
    if (st == LADLE_OK) made++;
  }
  for (size_t i = 0; st == LADLE_OK && i < p->nexprs; i++) {
    const pa_expr *q = &j->x[i];
    ladle_column arg;
    memset(&arg, 0, sizeof arg);
    if (q->arg != NULL) {
      st = ladle_eval_chunk(s, q->arg, c, &arg, err);
      if (st != LADLE_OK) break;
    }
    if (q->op == LADLE_AGG_VAR || q->op == LADLE_AGG_STD) {
      st = pa_moments(s, q, &arg, &g, &out[q->first], err);
      if (st == LADLE_OK) made += 3;
    } else if (q->op == LADLE_AGG_MEAN) {
      /* a Float64 sum and a count */
      ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64);
      ladle_column f;
      st = s->be->cast(&s->k, &arg, f64, LADLE_CAST_NON_STRICT, q->arg->name, &f, err);
      if (st == LADLE_OK) {
        ladle_kexpr ks = kagg(LADLE_AGG_SUM, f64, q->e);
        st = s->be->aggregate(&s->k, &ks, &f, &g, &out[q->first], err);
        ladle_column_release(&f);
      }
      if (st == LADLE_OK) {
        made++;
        ladle_kexpr kc = kagg(LADLE_AGG_COUNT, ladle_dtype_make(LADLE_TYPE_UINT32), q->e);
        st = s->be->aggregate(&s->k, &kc, &arg, &g, &out[q->first + 1], err);
        if (st == LADLE_OK) made++;
      }
    } else {
      /* a Float32 sum's partials in Float64: rounded once, at the end */
      ladle_dtype pt = q->e->type;
      if (q->op == LADLE_AGG_SUM && pt.id == LADLE_TYPE_FLOAT32)
        pt = ladle_dtype_make(LADLE_TYPE_FLOAT64);
      ladle_kexpr ka = kagg(q->op, pt, q->e);
      st = s->be->aggregate(&s->k, &ka, q->arg != NULL ? &arg : NULL, &g, &out[q->first], err);
      if (st == LADLE_OK) made++;
    }
    ladle_column_release(&arg);
  }
  j->rows[k] = have_g ? g.ngroups : 0;
  if (have_g) ladle_groups_release(&g);
  release_n(keys, have);
  free(keys);
  if (st != LADLE_OK) {
    release_n(out, made);
    memset(out, 0, j->ncols * sizeof *out);
    return st;
  }
  j->done[k] = true;
  return LADLE_OK;
}

/* The final value of expression q over the partial columns `part` grouped by g. */
static ladle_status pa_final(exec_state *s, const pa_expr *q, const ladle_column *part,
                             ladle_groups *g, ladle_column *out, ladle_error *err) {
  switch (q->op) {
    case LADLE_AGG_COUNT:
    case LADLE_AGG_NULL_COUNT:
    case LADLE_AGG_LEN: {
      ladle_kexpr k = kagg(LADLE_AGG_SUM, q->e->type, q->e);
      return s->be->aggregate(&s->k, &k, part, g, out, err);
    }
    case LADLE_AGG_MEAN:
      break;
    case LADLE_AGG_VAR:
    case LADLE_AGG_STD:
      return pa_moments_final(s, q, part, g, out, err);
    default: {
      ladle_kexpr k = kagg(q->op, q->e->type, q->e);
      return s->be->aggregate(&s->k, &k, part, g, out, err);
    }
  }
  /* mean: the sum of the sums over the sum of the counts, null where that is 0 */
  ladle_dtype f64 = ladle_dtype_make(LADLE_TYPE_FLOAT64), u32 = ladle_dtype_make(LADLE_TYPE_UINT32);
  ladle_kctx k = s->k;
  k.many_rows = false; /* group by group: a plain division */
  ladle_column sum, cnt, cntf, div, zero, isz, nul, res;
  ladle_kexpr ks = kagg(LADLE_AGG_SUM, f64, q->e), kc = kagg(LADLE_AGG_SUM, u32, q->e);
  LADLE_RETURN_NOT_OK(s->be->aggregate(&s->k, &ks, &part[0], g, &sum, err));
  ladle_status st = s->be->aggregate(&s->k, &kc, &part[1], g, &cnt, err);
  if (st != LADLE_OK) {
    ladle_column_release(&sum);
    return st;
  }
  st = s->be->cast(&k, &cnt, f64, LADLE_CAST_NON_STRICT, "count", &cntf, err);
  ladle_column_release(&cnt);
  if (st == LADLE_OK) {
    st = s->be->binary(&k, LADLE_OP_TRUE_DIV, &sum, &cntf, f64, &div, err);
    if (st == LADLE_OK) {
      st = ladle_column_alloc(f64, 1, false, 0, &zero, err);
      if (st == LADLE_OK) {
        LADLE_COL_MUT(&zero, double)[0] = 0.0;
        st = s->be->binary(&k, LADLE_OP_EQ, &cntf, &zero, ladle_dtype_make(LADLE_TYPE_BOOL), &isz,
                           err);
        ladle_column_release(&zero);
      }
      if (st == LADLE_OK) {
        st = ladle_column_nulls(f64, 1, &nul, err);
        if (st == LADLE_OK) {
          ladle_column args[3] = {isz, nul, div};
          st = s->be->when(&k, args, 3, div.length, &res, err);
          ladle_column_release(&nul);
        }
        ladle_column_release(&isz);
      }
      ladle_column_release(&div);
    }
    ladle_column_release(&cntf);
  }
  ladle_column_release(&sum);
  if (st != LADLE_OK) return st;
  if (q->e->type.id == LADLE_TYPE_FLOAT64) {
    *out = res;
    return LADLE_OK;
  }
  st = s->be->cast(&k, &res, q->e->type, LADLE_CAST_NON_STRICT, q->e->name, out, err);
  ladle_column_release(&res);
  return st;
}

static int partial_mode(void) {
  const char *v = getenv("LADLE_PARTIAL_AGG");
  if (v != NULL && strcmp(v, "0") == 0) return 0;
  if (v != NULL && strcmp(v, "1") == 0) return 1;
  return -1; /* by size */
}

bool ladle_exec_group_by_splits(const ladle_plan *p, int ranks) {
  if (p->kind == LADLE_NODE_SELECT ? p->nexprs == 0 || (ranks <= 1 && partial_mode() == 0)
                                   : p->kind != LADLE_NODE_GROUP_BY || partial_mode() == 0)
    return false;
  pa_expr *x = calloc(LADLE_MAX(p->nexprs, 1), sizeof *x);
  size_t ncols = 0;
  bool ok = x != NULL && pa_eligible(p, ranks, x, &ncols);
  free(x);
  return ok;
}

static void pa_close(void *state) {
  pa_sink *j = state;
  if (j == NULL) return;
  for (size_t k = 0; j->parts != NULL && k < j->nch; k++)
    if (j->done[k]) release_n(j->parts + k * j->ncols, j->ncols);
  free(j->parts);
  free(j->rows);
  free(j->done);
  free(j->x);
  free(j);
}

static ladle_status pa_open(exec_state *s, const ladle_pnode *pn, const exec_source *src,
                            const ladle_schema *in, bool *need, void **state, ladle_error *err) {
  *state = NULL;
  const ladle_plan *p = pn->lp;
  int mode = partial_mode();
  /* with several ranks the exchange sits inside this path: every rank takes
   * it, whatever its own rows (GROUP_BY_FINAL hands over one empty
   * partition where a rank has none) */
  bool ranks = s->eng->comm->size > 1;
  if (ranks && mode == 0) mode = 1;
  /* a select of aggregations: one partial row a morsel, never more work
   * than the whole; its scan streams into it rather than being built first */
  if (p->kind == LADLE_NODE_SELECT && mode < 0) mode = 1;
  if (mode == 0 || src->n == 0) return LADLE_OK;
  /* by default: enough rows, and morsels enough that the probe (the first
   * morsel, alone) is a small part of them */
  if (mode < 0 && !ranks &&
      (src->n < 4 || src->rows < PARTIAL_MIN_ROWS || src->first_rows > src->rows / 4))
    return LADLE_OK;
  pa_sink *j = calloc(1, sizeof *j);
  if (j == NULL) return LADLE_OOM(err, "group_by");
  j->p = p;
  j->ranks = s->eng->comm->size;
  j->exchange = pn->ninputs > 0 && pn->inputs[0]->op == LADLE_POP_EXCHANGE;
  j->xnode = j->exchange ? pn->inputs[0] : NULL;
  j->mode = mode;
  j->nch = src->n;
  j->first_len = src->first_rows;
  j->x = calloc(LADLE_MAX(p->nexprs, 1), sizeof *j->x);
  if (j->x == NULL || !pa_eligible(p, j->ranks, j->x, &j->ncols)) {
    bool oom = j->x == NULL;
    pa_close(j);
    return oom ? LADLE_OOM(err, "group_by") : LADLE_OK;
  }
  j->parts = calloc(j->nch * j->ncols, sizeof *j->parts);
  j->rows = calloc(j->nch, sizeof *j->rows);
  j->done = calloc(j->nch, sizeof *j->done);
  if (j->parts == NULL || j->rows == NULL || j->done == NULL) {
    pa_close(j);
    return LADLE_OOM(err, "group_by");
  }
  for (size_t i = 0; i < p->nkeys; i++) ladle_exec_mark_columns(p->keys[i], need, in->n);
  for (size_t i = 0; i < p->nexprs; i++) ladle_exec_mark_columns(p->exprs[i], need, in->n);
  *state = j;
  return LADLE_OK;
}

static ladle_status pa_consume(exec_state *s, void *state, size_t k, ladle_chunk *c,
                               ladle_error *err) {
  return pa_rows(s, state, k, c, err);
}

/* many groups per row in the first morsel turn the path down */
static bool pa_accepts(const void *state) {
  const pa_sink *j = state;
  /* with several ranks every rank must take the same path (the exchange
   * sits inside the partial one): never turned down there */
  if (j->ranks > 1) return true;
  return !(j->mode < 0 && j->p->nkeys > 0 && j->rows[0] > j->first_len / 8);
}

/* The partial rows in morsel order, exchanged (with several ranks), grouped
 * again and aggregated once more: the keys, then the aggregations, in cols
 * (nkeys + nexprs of them, *ngroups rows). */
static ladle_status pa_finish_cols(exec_state *s, pa_sink *j, ladle_column *cols, int64_t *ngroups,
                                   ladle_error *err) {
  const ladle_plan *p = j->p;
  const pa_expr *x = j->x;
  size_t nk = p->nkeys, na = p->nexprs, ncols = j->ncols, nch = j->nch;
  ladle_column *cat = calloc(ncols, sizeof *cat);
  ladle_column *tmp = calloc(nch, sizeof *tmp);
  ladle_status st = LADLE_OK;
  size_t ncat = 0, made = 0;
  ladle_groups g;
  bool have_g = false;
  if (cat == NULL || tmp == NULL) {
    st = LADLE_OOM(err, "group_by");
    goto done;
  }
  /* the partial rows in chunk order */
  double t0 = LADLE_PHASE_START();
  for (; ncat < ncols && st == LADLE_OK; ncat++) {
    for (size_t k = 0; k < nch; k++) tmp[k] = j->parts[k * ncols + ncat];
    st = ladle_column_concat_pool(tmp, nch, s->k.pool, &cat[ncat], err);
  }
  if (st != LADLE_OK) {
    ncat--;
    goto done;
  }
  LADLE_PHASE_END("group_by partials concatenated", cat[0].length, t0);
  /* (rows already partitioned by keys of theirs stay: the exchange skipped) */
  if (j->exchange && (j->xnode == NULL || !exec_exchange_skipped(s, j->xnode))) {
    /* EXCHANGE: the partial rows to the rank that owns their keys (a
     * reduction's to every rank); with one rank they stay as they are */
    ladle_column *moved = calloc(ncols, sizeof *moved);
    if (moved == NULL) {
      st = LADLE_OOM(err, "group_by");
      goto done;
    }
    st = ladle_exec_exchange(s, nk > 0 ? LADLE_EXCHANGE_HASH : LADLE_EXCHANGE_BROADCAST, cat, ncols,
                             nk, moved, err);
    if (st != LADLE_OK) {
      free(moved);
      goto done;
    }
    release_n(cat, ncat);
    free(cat);
    cat = moved;
  }
  int64_t prow = cat[0].length;
  t0 = LADLE_PHASE_START();
  st = groups_of(s, p, cat, prow, &g, err);
  LADLE_PHASE_END("group_by final groups", prow, t0);
  if (st != LADLE_OK) goto done;
  have_g = true;
  for (size_t i = 0; i < nk && st == LADLE_OK; i++) {
    st = s->be->gather(&s->k, &cat[i], g.first, g.ngroups, &cols[i], err);
    if (st == LADLE_OK) made++;
  }
  for (size_t i = 0; i < na && st == LADLE_OK; i++) {
    st = pa_final(s, &x[i], &cat[x[i].first], &g, &cols[nk + i], err);
    if (st == LADLE_OK) made++;
  }
  if (st == LADLE_OK) {
    *ngroups = g.ngroups;
    made = 0; /* handed over */
  }
done:
  if (have_g) ladle_groups_release(&g);
  release_n(cols, made);
  release_n(cat, ncat);
  free(cat);
  free(tmp);
  return st;
}

static ladle_status pa_finish(exec_state *s, void *state, ladle_table **out, ladle_error *err) {
  pa_sink *j = state;
  const ladle_plan *p = j->p;
  ladle_column *cols = calloc(p->nkeys + p->nexprs + 1, sizeof *cols);
  if (cols == NULL) return LADLE_OOM(err, "group_by");
  int64_t ngroups = 0;
  ladle_status st = pa_finish_cols(s, j, cols, &ngroups, err);
  if (st == LADLE_OK) st = exec_table_from_columns(s, &p->schema, cols, ngroups, out, err);
  free(cols);
  return st;
}

/* ------------------------------------------------- aggregations across ranks
 *
 * A projection or filter whose expressions are row-wise around aggregations
 * that split (`x - x.mean()`, `x / x.sum()`, `x > x.mean()`) leaves its rows
 * where they are with several ranks: each aggregation is computed as the
 * partial group-by without keys computes a select of aggregations (each
 * rank's partial row broadcast, the final step over them), and hoisted, so
 * that the expressions read it as a single value (eval.c). */

/* The outermost aggregations (AGG, LEN) of e into out (NULL: counted only). */
static void outer_aggs(const ladle_bexpr *e, const ladle_bexpr **out, size_t *n) {
  if (!e->has_agg) return;
  if (e->kind == LADLE_EX_AGG || e->kind == LADLE_EX_LEN) {
    if (out != NULL) out[*n] = e;
    (*n)++;
    return;
  }
  for (size_t i = 0; i < e->nargs; i++) outer_aggs(e->args[i], out, n);
}

/* An aggregation under a when/then: Polars computes a branch only where rows
 * take it, and a hoisted aggregation would be computed regardless. */
static bool agg_in_branch(const ladle_bexpr *e) {
  if (!e->has_agg) return false;
  if (e->kind == LADLE_EX_WHEN) return true;
  for (size_t i = 0; i < e->nargs; i++)
    if (agg_in_branch(e->args[i])) return true;
  return false;
}

/* The outermost aggregations of exprs, malloc'ed (*n of them), or NULL with
 * *n 0 when there are none or the expressions do not qualify. */
static const ladle_bexpr **aggs_of(ladle_bexpr *const *exprs, size_t nexprs, size_t *n) {
  *n = 0;
  for (size_t i = 0; i < nexprs; i++) {
    if (exprs[i]->has_window || agg_in_branch(exprs[i])) return NULL;
    outer_aggs(exprs[i], NULL, n);
  }
  const ladle_bexpr **a = *n > 0 ? malloc(*n * sizeof *a) : NULL;
  size_t k = 0;
  for (size_t i = 0; a != NULL && i < nexprs; i++) outer_aggs(exprs[i], a, &k);
  if (a == NULL) *n = 0;
  return a;
}

/* The plan the partial step reads for aggregations a (a select of them). */
static void aggs_plan(ladle_plan *p, const ladle_bexpr **a, size_t n) {
  memset(p, 0, sizeof *p);
  p->kind = LADLE_NODE_SELECT;
  p->exprs = (ladle_bexpr **)(uintptr_t)a;
  p->nexprs = n;
}

bool ladle_exec_aggs_split(ladle_bexpr *const *exprs, size_t nexprs, int ranks) {
  if (ranks <= 1 || partial_mode() == 0) return false;
  size_t n = 0;
  const ladle_bexpr **a = aggs_of(exprs, nexprs, &n);
  pa_expr *x = a != NULL ? calloc(n, sizeof *x) : NULL;
  ladle_plan p;
  size_t ncols = 0;
  bool ok = false;
  if (x != NULL) {
    aggs_plan(&p, a, n);
    ok = pa_eligible(&p, ranks, x, &ncols);
  }
  free(x);
  free(a);
  return ok;
}

typedef struct global_job {
  exec_state *s;
  pa_sink *j;
  const ladle_table *t;
} global_job;

static ladle_status global_task(void *ctx, size_t k, ladle_error *err) {
  global_job *g = ctx;
  return pa_rows(g->s, g->j, k, &g->t->chunks[k], err);
}

ladle_status exec_hoist_global_aggs(exec_state *s, ladle_bexpr *const *exprs, size_t nexprs,
                                    const ladle_table *t, ladle_error *err) {
  size_t n = 0;
  const ladle_bexpr **a = aggs_of(exprs, nexprs, &n);
  if (a == NULL)
    return n == 0 ? ladle_err_set(err, LADLE_EINVAL, "internal: no aggregations to hoist")
                  : LADLE_OOM(err, "aggregations");
  ladle_plan p;
  aggs_plan(&p, a, n);
  ladle_table *empty = NULL;
  ladle_column *cols = calloc(n + 1, sizeof *cols);
  pa_sink *j = calloc(1, sizeof *j);
  ladle_status st = cols != NULL && j != NULL ? LADLE_OK : LADLE_OOM(err, "aggregations");
  /* a rank without rows still brings its (empty) partials to the exchange */
  if (st == LADLE_OK && t->nchunks == 0) {
    st = exec_empty_chunk(&t->schema, &empty, err);
    if (st == LADLE_OK) t = empty;
  }
  if (st == LADLE_OK) {
    j->p = &p;
    j->ranks = s->eng->comm->size;
    j->exchange = j->ranks > 1;
    j->mode = 1;
    j->nch = t->nchunks;
    j->first_len = t->chunks[0].length;
    j->x = calloc(n, sizeof *j->x);
    j->parts = calloc(j->nch * n * 3 + 1, sizeof *j->parts);
    j->rows = calloc(j->nch, sizeof *j->rows);
    j->done = calloc(j->nch, sizeof *j->done);
    if (j->x == NULL || j->parts == NULL || j->rows == NULL || j->done == NULL)
      st = LADLE_OOM(err, "aggregations");
    else if (!pa_eligible(&p, j->ranks, j->x, &j->ncols))
      st = ladle_err_set(err, LADLE_EINVAL, "internal: aggregations that do not split hoisted");
  }
  if (st == LADLE_OK) {
    global_job g = {s, j, t};
    st = ladle_pool_run(s->k.pool, j->nch, global_task, &g, err);
  }
  int64_t ngroups = 0;
  if (st == LADLE_OK) st = pa_finish_cols(s, j, cols, &ngroups, err);
  size_t hoisted = 0;
  for (; st == LADLE_OK && hoisted < n; hoisted++)
    st = ladle_exec_hoist(s, a[hoisted], &cols[hoisted], err);
  /* ladle_exec_hoist takes its column, or releases it on failure; the
   * columns not reached (zeroed where pa_finish_cols did not fill them) */
  for (size_t i = hoisted; st != LADLE_OK && cols != NULL && i < n; i++)
    ladle_column_release(&cols[i]);
  pa_close(j);
  ladle_table_release(empty);
  free(cols);
  free(a);
  return st;
}

static const exec_sink_op partial_sink = {pa_open, pa_consume, pa_accepts, pa_finish, pa_close};

static ladle_status partial_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                                ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(s);
  LADLE_UNUSED(pn);
  LADLE_UNUSED(side);
  LADLE_UNUSED(out);
  return ladle_err_set(err, LADLE_EINVAL, "internal: a partial group-by outside its final step");
}

/* a sink, run by the GROUP_BY_FINAL above it */
const exec_operator exec_op_group_by_partial = {LADLE_POP_GROUP_BY_PARTIAL, partial_run, NULL,
                                                &partial_sink, NULL};
