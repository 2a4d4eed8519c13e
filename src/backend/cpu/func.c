/* func.c — scalar functions: null and NaN handling, math, membership, hashing
 * and when/then/otherwise. String and temporal functions live in strings.c and
 * datetime.c. Inputs are already of the types the binder chose. */
#include "cpu.h"

ladle_status ladle_cpu_str_func(const ladle_kctx *ctx, const ladle_kexpr *e,
                                const ladle_column *args, size_t nargs, ladle_column *out,
                                ladle_error *err);
ladle_status ladle_cpu_dt_func(const ladle_kctx *ctx, const ladle_kexpr *e, const ladle_column *in,
                               ladle_column *out, ladle_error *err);

/* Output with the input's validity (a new copy of the bitmap). */
/* out[i] = whether row i of x is valid (or, with `nulls`, null), as 0/1
 * bytes: the validity bitmap unpacked a byte (eight rows) at a time. */
static void validity_bytes(const ladle_column *x, bool nulls, uint8_t *out) {
  int64_t n = x->length;
  bool all_null = x->type.id == LADLE_TYPE_NULL;
  if (all_null || x->validity == NULL) { /* every row null, or every row valid */
    memset(out, all_null == nulls, (size_t)n);
    return;
  }
  ladle_bitmap_and_bytes(x->validity, n, nulls, true, out);
}

static ladle_status alloc_like(const ladle_column *in, ladle_dtype t, ladle_column *o,
                               ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_column_alloc(t, in->length, in->validity != NULL, 0, o, err));
  if (in->validity != NULL)
    memcpy(LADLE_COL_VALIDITY_MUT(o), in->validity, (size_t)ladle_bitmap_bytes(in->length));
  o->null_count = in->null_count;
  return LADLE_OK;
}

#define UNARY_NUM(T, in, o, EXPR)                \
  {                                              \
    const T *X = (in)->values;                   \
    T *O = LADLE_COL_MUT(o, T);                  \
    for (int64_t i = 0; i < (in)->length; i++) { \
      T v_ = X[i];                               \
      O[i] = (T)(EXPR);                          \
    }                                            \
  }
#define IS_FLOAT_T(T) ((T)0.5 != 0)
#define NEG_K(T, in, o) UNARY_NUM(T, in, o, IS_FLOAT_T(T) ? -v_ : (T)(0 - (uint64_t)v_))
/* floats: the sign bit cleared (abs(-0.0) is 0.0, as Polars: 1 // abs(-0.0) is inf) */
#define ABS_K(T, in, o) \
  UNARY_NUM(T, in, o, IS_FLOAT_T(T) ? (T)fabs((double)v_) : v_ < 0 ? (T)(0 - (uint64_t)v_) : v_)

#define CLIP_K(T, in, lo, hi, o)                                                                \
  {                                                                                             \
    const T *X = (in)->values;                                                                  \
    T *O = LADLE_COL_MUT(o, T);                                                                 \
    bool hl = (lo)->length > 0 && ladle_column_valid(lo, 0);                                    \
    bool hh = (hi)->length > 0 && ladle_column_valid(hi, 0);                                    \
    int64_t sl = (lo)->length == 1 ? 0 : 1, sh = (hi)->length == 1 ? 0 : 1;                     \
    for (int64_t i = 0; i < (in)->length; i++) {                                                \
      T v_ = X[i];                                                                              \
      /* as Polars: below the lower bound gives it, else above the upper gives                  \
       * that (so with lower > upper, a value below both gives the lower) */                    \
      if ((sl ? ladle_column_valid(lo, i) : hl) && v_ < ((const T *)(lo)->values)[i * sl])      \
        v_ = ((const T *)(lo)->values)[i * sl];                                                 \
      else if ((sh ? ladle_column_valid(hi, i) : hh) && v_ > ((const T *)(hi)->values)[i * sh]) \
        v_ = ((const T *)(hi)->values)[i * sh];                                                 \
      O[i] = v_;                                                                                \
    }                                                                                           \
  }

#define HASH_K(T, in, O, seed)                   \
  {                                              \
    const T *X = (in)->values;                   \
    for (int64_t i = 0; i < (in)->length; i++) { \
      T v_ = X[i];                               \
      uint64_t bits = 0;                         \
      if (IS_FLOAT_T(T)) {                       \
        double d = (double)v_;                   \
        if (d != d) d = __builtin_nan("");       \
        if (d == 0) d = 0.0;                     \
        memcpy(&bits, &d, 8);                    \
      } else {                                   \
        bits = (uint64_t)v_;                     \
      }                                          \
      O[i] = ladle_hash_combine(seed, bits);     \
    }                                            \
  }

static ladle_status fill_null(const ladle_column *x, const ladle_column *v, ladle_column *out,
                              ladle_error *err) {
  int64_t n = x->length;
  if (x->validity == NULL) {
    ladle_column_copy_ref(x, out);
    return LADLE_OK;
  }
  size_t w = ladle_type_width(x->type.id);
  if (v->length == 1 && ladle_dtype_equal(x->type, v->type) && ladle_column_valid(v, 0) &&
      !ladle_type_is_varlen(x->type.id) && x->type.id != LADLE_TYPE_LIST &&
      (w == 1 || w == 2 || w == 4 || w == 8)) {
    /* a valid scalar of x's type: x's values with the nulls' slots replaced,
     * a select per row, no validity */
    LADLE_RETURN_NOT_OK(ladle_column_alloc(x->type, n, false, 0, out, err));
    const uint8_t *V = x->validity;
#define FILL_W(W, T)                                                            \
  case W: {                                                                     \
    const T *X = x->values;                                                     \
    T f, *O = LADLE_COL_MUT(out, T);                                            \
    memcpy(&f, v->values, sizeof f);                                            \
    for (int64_t i = 0; i < n; i++) {                                           \
      T m_ = (T)0 - (T)((V[i >> 3] >> (i & 7)) & 1); /* all ones where valid */ \
      O[i] = (T)((X[i] & m_) | (f & (T)~m_));                                   \
    }                                                                           \
    break;                                                                      \
  }
    switch (w) {
      FILL_W(1, uint8_t)
      FILL_W(2, uint16_t)
      FILL_W(4, uint32_t)
      FILL_W(8, uint64_t)
      default:
        break;
    }
#undef FILL_W
    ladle_column_finish_nulls(out);
    return LADLE_OK;
  }
  int64_t *idx = malloc((size_t)LADLE_MAX(n, 1) * sizeof *idx);
  if (idx == NULL) return LADLE_OOM(err, "fill_null");
  /* gather from the concatenation [x, v]: x's row i, or v's row (0 or i) */
  ladle_column both, parts[2] = {*x, *v};
  ladle_status st = ladle_column_concat(parts, 2, &both, err);
  if (st == LADLE_OK) {
    for (int64_t i = 0; i < n; i++)
      idx[i] = ladle_column_valid(x, i) ? i : n + (v->length == 1 ? 0 : i);
    st = ladle_column_gather(&both, idx, n, out, err);
    ladle_column_release(&both);
  }
  free(idx);
  return st;
}

static ladle_status fill_nan(const ladle_column *x, const ladle_column *v, ladle_column *out,
                             ladle_error *err) {
  int64_t n = x->length;
  if (!ladle_type_is_float(x->type.id)) {
    ladle_column_copy_ref(x, out);
    return LADLE_OK;
  }
  int64_t *idx = malloc((size_t)LADLE_MAX(n, 1) * sizeof *idx);
  if (idx == NULL) return LADLE_OOM(err, "fill_nan");
  ladle_column both, parts[2] = {*x, *v};
  ladle_status st = ladle_column_concat(parts, 2, &both, err);
  if (st == LADLE_OK) {
    for (int64_t i = 0; i < n; i++) {
      double d = x->type.id == LADLE_TYPE_FLOAT32 ? ((const float *)x->values)[i]
                                                  : ((const double *)x->values)[i];
      bool nan = ladle_column_valid(x, i) && d != d;
      idx[i] = nan ? n + (v->length == 1 ? 0 : i) : i;
    }
    st = ladle_column_gather(&both, idx, n, out, err);
    ladle_column_release(&both);
  }
  free(idx);
  return st;
}

enum { SMALL_SET = 16 };

/* is_in against a few values of x's own type (a literal list): each row is
 * compared with every value, without a hash table. Strings compare as packed
 * integers when every value is 7 bytes or shorter (a longer row cannot match),
 * else by length and bytes. False when the set does not qualify. Nulls in the
 * set match nothing; null rows are masked by the caller's validity. */
static bool small_is_in(const ladle_column *x, const ladle_column *set, uint8_t *o) {
  if (set->length > SMALL_SET || !ladle_dtype_equal(x->type, set->type)) return false;
  int64_t n = x->length, m = 0;
  uint64_t v[SMALL_SET];
  if (x->type.id == LADLE_TYPE_STRING) {
    bool packed = true;
    const char *send = ladle_str_end(set);
    for (int64_t k = 0; k < set->length; k++)
      if (ladle_column_valid(set, k)) packed &= ladle_pack_short(set, k, send, &v[m++]);
    if (packed) {
      const char *end = ladle_str_end(x);
      for (int64_t i = 0; i < n; i++) {
        uint64_t key;
        bool hit = false;
        if (ladle_pack_short(x, i, end, &key))
          for (int64_t k = 0; k < m; k++) hit |= key == v[k];
        o[i] = hit;
      }
    } else {
      for (int64_t i = 0; i < n; i++) {
        bool hit = false;
        for (int64_t k = 0; k < set->length && !hit; k++)
          hit =
              ladle_column_valid(set, k) && ladle_str_len(set, k) == ladle_str_len(x, i) &&
              memcmp(ladle_str_ptr(set, k), ladle_str_ptr(x, i), (size_t)ladle_str_len(x, i)) == 0;
        o[i] = hit;
      }
    }
    return true;
  }
  ladle_type_id t = x->type.id;
  if (!(ladle_type_is_integer(t) || t == LADLE_TYPE_BOOL || t == LADLE_TYPE_DATE ||
        t == LADLE_TYPE_DATETIME || t == LADLE_TYPE_DURATION || t == LADLE_TYPE_TIME))
    return false;
  switch (ladle_type_width(t)) {
#define SMALL_IN(W, T)                                                      \
  case W: {                                                                 \
    T s[SMALL_SET];                                                         \
    for (int64_t k = 0; k < set->length; k++)                               \
      if (ladle_column_valid(set, k)) s[m++] = ((const T *)set->values)[k]; \
    const T *X = x->values;                                                 \
    for (int64_t i = 0; i < n; i++) {                                       \
      bool hit = false;                                                     \
      for (int64_t k = 0; k < m; k++) hit |= X[i] == s[k];                  \
      o[i] = hit;                                                           \
    }                                                                       \
    return true;                                                            \
  }
    SMALL_IN(1, uint8_t)
    SMALL_IN(2, uint16_t)
    SMALL_IN(4, uint32_t)
    SMALL_IN(8, uint64_t)
#undef SMALL_IN
    default:
      return false;
  }
}

static ladle_status is_in(const ladle_kctx *ctx, const ladle_column *x, const ladle_column *set,
                          ladle_column *out, ladle_error *err) {
  int64_t n = x->length;
  ladle_column o;
  LADLE_RETURN_NOT_OK(alloc_like(x, ladle_dtype_make(LADLE_TYPE_BOOL), &o, err));
  if (set->length == 0 || x->type.id == LADLE_TYPE_NULL) {
    memset(LADLE_COL_MUT(&o, uint8_t), 0, (size_t)n);
    *out = o;
    return LADLE_OK;
  }
  if (small_is_in(x, set, LADLE_COL_MUT(&o, uint8_t))) {
    *out = o;
    return LADLE_OK;
  }
  ladle_keymap *km = NULL;
  ladle_groups g;
  memset(&g, 0, sizeof g);
  int64_t *gid = malloc((size_t)LADLE_MAX(n, 1) * sizeof *gid);
  ladle_status st = gid ? ladle_keymap_build(ctx, set, 1, &km, &g, err) : LADLE_OOM(err, "is_in");
  if (st == LADLE_OK) st = ladle_keymap_probe(ctx, km, x, 1, false, gid, err);
  if (st == LADLE_OK)
    for (int64_t i = 0; i < n; i++) LADLE_COL_MUT(&o, uint8_t)[i] = gid[i] >= 0;
  ladle_keymap_destroy(km);
  ladle_groups_release(&g);
  free(gid);
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

static ladle_status is_between(const ladle_kctx *ctx, const ladle_column *args, ladle_closed c,
                               ladle_column *out, ladle_error *err) {
  ladle_dtype b = ladle_dtype_make(LADLE_TYPE_BOOL);
  ladle_column lo, hi;
  int op_lo = (c == LADLE_CLOSED_BOTH || c == LADLE_CLOSED_LEFT) ? LADLE_OP_GE : LADLE_OP_GT;
  int op_hi = (c == LADLE_CLOSED_BOTH || c == LADLE_CLOSED_RIGHT) ? LADLE_OP_LE : LADLE_OP_LT;
  LADLE_RETURN_NOT_OK(ladle_cpu_binary(ctx, op_lo, &args[0], &args[1], b, &lo, err));
  ladle_status st = ladle_cpu_binary(ctx, op_hi, &args[0], &args[2], b, &hi, err);
  if (st == LADLE_OK) {
    st = ladle_cpu_binary(ctx, LADLE_OP_AND, &lo, &hi, b, out, err);
    ladle_column_release(&hi);
  }
  ladle_column_release(&lo);
  return st;
}

static uint64_t ipow(uint64_t base, uint32_t e) {
  uint64_t r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

static ladle_status math_func(const ladle_kexpr *e, const ladle_column *args, ladle_column *out,
                              ladle_error *err) {
  const ladle_column *x = &args[0];
  ladle_func f = (ladle_func)e->op;
  bool f32 = x->type.id == LADLE_TYPE_FLOAT32;
  if (!ladle_type_is_float(x->type.id) &&
      (f == LADLE_FN_ROUND || f == LADLE_FN_FLOOR || f == LADLE_FN_CEIL)) {
    ladle_column_copy_ref(x, out);
    return LADLE_OK;
  }
  ladle_column o;
  if (f == LADLE_FN_POW) {
    const ladle_column *y = &args[1];
    LADLE_RETURN_NOT_OK(ladle_column_alloc(e->type, x->length, false, 0, &o, err));
    int64_t sy = y->length == 1 ? 0 : 1;
    /* Polars, for one exponent (a literal): 0.5 is sqrt, and 2..9 multiply
     * the base by itself, one rounding per product */
    int special = 0;
    if (sy == 0 && ladle_type_is_float(e->type.id) && ladle_cpu_valid_at(y, 0)) {
      double p = f32 ? ((const float *)y->values)[0] : ((const double *)y->values)[0];
      special = p == 0.5 ? 1 : (p >= 2 && p <= 9 && p == floor(p)) ? (int)p : 0;
    }
    for (int64_t i = 0; i < x->length; i++) {
      if (ladle_type_is_float(e->type.id)) {
        double b = f32 ? ((const float *)x->values)[i] : ((const double *)x->values)[i];
        double p = f32 ? ((const float *)y->values)[i * sy] : ((const double *)y->values)[i * sy];
        double r = b;
        if (special == 1)
          r = f32 ? sqrtf((float)b) : sqrt(b);
        else if (special > 1)
          for (int k = 1; k < special; k++) r = f32 ? (float)(r * b) : r * b;
        else
          r = f32 ? powf((float)b, (float)p) : pow(b, p);
        if (f32)
          LADLE_COL_MUT(&o, float)[i] = (float)r;
        else
          LADLE_COL_MUT(&o, double)[i] = r;
      } else {
        uint32_t p = ((const uint32_t *)y->values)[i * sy];
        uint64_t b = 0;
        memcpy(&b, (const char *)x->values + i * (int64_t)ladle_type_width(x->type.id),
               ladle_type_width(x->type.id));
        if (ladle_type_is_signed(x->type.id)) {
          /* sign-extend the narrow value */
          int shift = 64 - 8 * (int)ladle_type_width(x->type.id);
          b = (uint64_t)(((int64_t)(b << shift)) >> shift);
        }
        uint64_t r = ipow(b, p);
        memcpy(LADLE_COL_MUT(&o, char) + i * (int64_t)ladle_type_width(x->type.id), &r,
               ladle_type_width(x->type.id));
      }
    }
    ladle_status st = ladle_cpu_merge_validity(x, y, &o, err);
    if (st != LADLE_OK) {
      ladle_column_release(&o);
      return st;
    }
    ladle_column_finish_nulls(&o);
    *out = o;
    return LADLE_OK;
  }
  LADLE_RETURN_NOT_OK(alloc_like(x, e->type, &o, err));
  double scale = f == LADLE_FN_ROUND ? pow(10.0, (double)e->fopts.i64) : 1.0;
  double lbase = f == LADLE_FN_LOG && e->fopts.f64 > 0 ? log(e->fopts.f64) : 1.0;
  if (f32 && (f == LADLE_FN_LOG || f == LADLE_FN_EXP || f == LADLE_FN_LOG1P)) {
    /* Float32 in single precision with the C library's float functions, as
     * Rust's f32 methods compute them (log(base) is ln(x) / ln(base)) */
    float fbase = f == LADLE_FN_LOG && e->fopts.f64 > 0 ? logf((float)e->fopts.f64) : 1.0f;
    const float *X = x->values;
    float *O = LADLE_COL_MUT(&o, float);
    for (int64_t i = 0; i < x->length; i++)
      O[i] = f == LADLE_FN_LOG     ? logf(X[i]) / fbase
             : f == LADLE_FN_LOG1P ? log1pf(X[i])
                                   : expf(X[i]);
    *out = o;
    return LADLE_OK;
  }
  for (int64_t i = 0; i < x->length; i++) {
    double v = f32 ? ((const float *)x->values)[i] : ((const double *)x->values)[i], r;
    switch (f) {
      case LADLE_FN_ROUND:
        r = e->fopts.i64 == 0 ? rint(v) : rint(v * scale) / scale;
        /* a value so large that v * 10^d overflows has no digits to round: as
         * Polars, it is kept (round(2) of 1e308 is 1e308, not inf) */
        if (!isfinite(r) && isfinite(v)) r = v;
        break;
      case LADLE_FN_FLOOR:
        r = floor(v);
        break;
      case LADLE_FN_CEIL:
        r = ceil(v);
        break;
      case LADLE_FN_SQRT:
        r = sqrt(v);
        break;
      case LADLE_FN_LOG:
        r = log(v) / lbase;
        break;
      case LADLE_FN_LOG1P:
        r = log1p(v);
        break;
      default:
        r = exp(v);
        break;
    }
    if (f32)
      LADLE_COL_MUT(&o, float)[i] = (float)r;
    else
      LADLE_COL_MUT(&o, double)[i] = r;
  }
  *out = o;
  return LADLE_OK;
}

static ladle_status hash_func(const ladle_column *x, uint64_t seed, ladle_column *out,
                              ladle_error *err) {
  ladle_column o;
  LADLE_RETURN_NOT_OK(
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_UINT64), x->length, false, 0, &o, err));
  uint64_t *O = LADLE_COL_MUT(&o, uint64_t);
  uint64_t s = ladle_hash_mix(seed ^ 0x51ed270b27a3c5f1ULL);
  if (x->type.id == LADLE_TYPE_STRING) {
    for (int64_t i = 0; i < x->length; i++)
      O[i] = ladle_hash_bytes(ladle_str_ptr(x, i), (size_t)ladle_str_len(x, i), s);
  } else {
    LADLE_DISPATCH_NUM(ladle_type_phys(x->type.id), HASH_K, x, O, s)
  }
  if (x->validity != NULL || x->type.id == LADLE_TYPE_NULL)
    for (int64_t i = 0; i < x->length; i++)
      if (x->type.id == LADLE_TYPE_NULL || !ladle_column_valid(x, i))
        O[i] = ladle_hash_combine(s, 0x9ae16a3b2f90404fULL);
  *out = o;
  return LADLE_OK;
}

ladle_status ladle_cpu_func(const ladle_kctx *ctx, const ladle_kexpr *e, const ladle_column *args,
                            size_t nargs, ladle_column *out, ladle_error *err) {
  ladle_func f = (ladle_func)e->op;
  const ladle_column *x = &args[0];
  int64_t n = x->length;
  ladle_column o;
  if (f >= LADLE_FN_STR_LEN_BYTES && f <= LADLE_FN_STR_CONCAT)
    return ladle_cpu_str_func(ctx, e, args, nargs, out, err);
  if (f >= LADLE_FN_DT_YEAR && f <= LADLE_FN_DT_TRUNCATE)
    return ladle_cpu_dt_func(ctx, e, x, out, err);
  if (f == LADLE_FN_STR_SPLIT || f == LADLE_FN_LIST_LEN || f == LADLE_FN_LIST_SLICE)
    return ladle_cpu_list_func(ctx, e, args, nargs, out, err);
  ladle_phys ph = ladle_type_phys(x->type.id);
  switch (f) {
    case LADLE_FN_NOT:
      LADLE_RETURN_NOT_OK(alloc_like(x, e->type, &o, err));
      for (int64_t i = 0; i < n; i++)
        LADLE_COL_MUT(&o, uint8_t)[i] = !((const uint8_t *)x->values)[i];
      break;
    case LADLE_FN_NEG:
      LADLE_RETURN_NOT_OK(alloc_like(x, e->type, &o, err));
      LADLE_DISPATCH_NUM(ph, NEG_K, x, &o)
      break;
    case LADLE_FN_ABS:
      LADLE_RETURN_NOT_OK(alloc_like(x, e->type, &o, err));
      LADLE_DISPATCH_NUM(ph, ABS_K, x, &o)
      break;
    case LADLE_FN_IS_NULL:
    case LADLE_FN_IS_NOT_NULL:
      LADLE_RETURN_NOT_OK(ladle_column_alloc(e->type, n, false, 0, &o, err));
      validity_bytes(x, f == LADLE_FN_IS_NULL, LADLE_COL_MUT(&o, uint8_t));
      break;
    case LADLE_FN_IS_NAN:
    case LADLE_FN_IS_NOT_NAN:
      LADLE_RETURN_NOT_OK(alloc_like(x, e->type, &o, err));
      for (int64_t i = 0; i < n; i++) {
        bool nan = false;
        if (x->type.id == LADLE_TYPE_FLOAT32) nan = isnan(((const float *)x->values)[i]);
        if (x->type.id == LADLE_TYPE_FLOAT64) nan = isnan(((const double *)x->values)[i]);
        LADLE_COL_MUT(&o, uint8_t)[i] = (f == LADLE_FN_IS_NAN) == nan;
      }
      break;
    case LADLE_FN_FILL_NULL:
      return fill_null(x, &args[1], out, err);
    case LADLE_FN_FILL_NAN:
      return fill_nan(x, &args[1], out, err);
    case LADLE_FN_IS_IN:
      return is_in(ctx, x, &args[1], out, err);
    case LADLE_FN_IS_BETWEEN:
      return is_between(ctx, args, e->fopts.closed, out, err);
    case LADLE_FN_CLIP:
      LADLE_RETURN_NOT_OK(alloc_like(x, e->type, &o, err));
      LADLE_DISPATCH_NUM(ph, CLIP_K, x, &args[1], &args[2], &o)
      break;
    case LADLE_FN_ROUND:
    case LADLE_FN_FLOOR:
    case LADLE_FN_CEIL:
    case LADLE_FN_SQRT:
    case LADLE_FN_LOG:
    case LADLE_FN_EXP:
    case LADLE_FN_LOG1P:
    case LADLE_FN_POW:
      return math_func(e, args, out, err);
    case LADLE_FN_HASH:
      return hash_func(x, e->fopts.u64, out, err);
    default:
      return ladle_err_set(err, LADLE_ENOTSUP, "function %s on the CPU", ladle_func_name(f));
  }
  *out = o;
  return LADLE_OK;
}

ladle_status ladle_cpu_when(const ladle_kctx *ctx, const ladle_column *args, size_t nargs,
                            int64_t n, ladle_column *out, ladle_error *err) {
  LADLE_UNUSED(ctx);
  size_t nb = (nargs - 1) / 2;
  /* choose, per row, which branch supplies it; then gather from their concat */
  ladle_column *parts = malloc((nb + 1) * sizeof *parts);
  int64_t *base = malloc((nb + 1) * sizeof *base);
  int64_t *idx = malloc((size_t)LADLE_MAX(n, 1) * sizeof *idx);
  ladle_status st = parts && base && idx ? LADLE_OK : LADLE_OOM(err, "when");
  int64_t total = 0;
  for (size_t k = 0; st == LADLE_OK && k <= nb; k++) {
    parts[k] = args[k < nb ? 2 * k + 1 : nargs - 1];
    base[k] = total;
    total += parts[k].length;
  }
  if (st == LADLE_OK) {
    for (int64_t i = 0; i < n; i++) {
      size_t k = 0;
      for (; k < nb; k++) {
        const ladle_column *c = &args[2 * k];
        int64_t ci = c->length == 1 ? 0 : i;
        if (ladle_column_valid(c, ci) && ((const uint8_t *)c->values)[ci]) break;
      }
      idx[i] = base[k] + (parts[k].length == 1 ? 0 : i);
    }
    ladle_column all;
    st = ladle_column_concat(parts, nb + 1, &all, err);
    if (st == LADLE_OK) {
      st = ladle_column_gather(&all, idx, n, out, err);
      ladle_column_release(&all);
    }
  }
  free(parts);
  free(base);
  free(idx);
  return st;
}
