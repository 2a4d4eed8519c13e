/* backend.h — the kernel table. The executor reaches every kernel through a
 * `struct ladle_backend`; the CPU table (cpu/) is complete, a CUDA table fills in
 * beside it. A NULL entry, or an entry returning LADLE_ENOTSUP, means the backend
 * cannot run that kernel; `supports_expr` lets the planner ask before running.
 *
 * Kernels take non-owning inputs and write owning outputs; outputs are written
 * only on success. Every kernel takes the context it runs on (thread pool, and
 * later stream and memory resource).
 */
#ifndef LADLE_BACKEND_H
#define LADLE_BACKEND_H

#include "../core/core.h"

typedef struct ladle_kctx {
  ladle_pool *pool;    /* threads for this call */
  int64_t morsel_rows; /* work unit for parallel loops */
  /* binary: the left operand is part of a column of more than one row (a
   * chunk, maybe of one row, of a longer one), the right one a single value:
   * Polars then divides through the reciprocal */
  bool many_rows;
  /* Where the column kernels below run and allocate: the device ordinal, the
   * stream (a cudaStream_t for CUDA, NULL on the host) and the memory
   * resource their outputs and scratch come from, the engine's for that
   * device (NULL: the calling thread's current resource, else the host
   * allocator; a GPU backend needs one over its device allocator). */
  int device_id;
  void *stream;
  ladle_mr *mr;
} ladle_kctx;

/* An expression node lowered for a kernel: what a function or aggregation
 * kernel needs to know of it, so that backends never see plan nodes (the
 * executor lowers a bound expression with exec_lower). */
typedef enum ladle_kexpr_kind {
  LADLE_KEX_FUNC, /* op is a ladle_func */
  LADLE_KEX_AGG,  /* op is a ladle_agg_op */
  LADLE_KEX_LEN   /* pl.len(): rows per group */
} ladle_kexpr_kind;

typedef struct ladle_kexpr {
  ladle_kexpr_kind kind;
  int op;
  ladle_dtype type; /* the output's type */
  ladle_func_opts fopts;
  ladle_agg_opts aopts;
  size_t nargs;
  const ladle_dtype *arg_types; /* nargs of them */
  const char *arg_name;         /* the first argument's output name, for messages */
  void *aux;                    /* kernel state prepared at bind time (a regex) */
} ladle_kexpr;

/* Dense group ids for rows of a set of key columns. */
typedef struct ladle_groups {
  int64_t nrows;
  int64_t ngroups;
  /* per row, in [0, ngroups); NULL for a `whole` group until a kernel that
   * reads them asks ladle_groups_ids (a global sum, min or max of 60M rows
   * reads none, and zeroing 240 MB of ids cost more than the sum) */
  uint32_t *ids;
  /* per group, its first row (ladle_scratch_alloc, as ids: freed by ladle_groups_release) */
  int64_t *first;
  /* One group standing for all rows: an aggregation outside group_by/over.
   * Polars breaks a few ties differently there (string arg_max). */
  bool whole;
  /* Rows ordered by group (CSR), built on demand (the CPU's ladle_cpu_groups_csr). */
  int64_t *offsets; /* ngroups + 1 */
  int64_t *rows;    /* nrows */
} ladle_groups;

void ladle_groups_release(ladle_groups *g);
/* g->ids made where they are not yet (a `whole` group's: all 0), safe to call
 * from several threads at once on the same groups (tasks of one group_by
 * share them); every kernel that reads ids calls it first. LADLE_ENOMEM
 * names "groups". */
ladle_status ladle_groups_ids(const ladle_groups *g, ladle_error *err);
/* Renumbers groups in order of first appearance. */
ladle_status ladle_groups_order_by_first(ladle_groups *g, ladle_error *err);

/* A hash table over the rows of key columns, built once and probed many times. */
typedef struct ladle_keymap ladle_keymap;

/* The pairs of a join whose output is much longer than its inputs (a key shared
 * by many rows on both sides, a cross join), kept as runs of the probe side's
 * rows instead of written out: backend-owned, read through join_pairs_fill,
 * freed with join_runs_free. */
typedef struct ladle_join_runs ladle_join_runs;

/* A join's build side kept for probes one morsel at a time (join_build): its
 * keys grouped into a hash table. Backend-owned; read-only once built, so
 * that probes may run from several threads at once. */
typedef struct ladle_join_ht ladle_join_ht;

/* Row-index pairs a join produces; -1 is "no row" (a null side). Either
 * left/right (scratch arrays, ladle_scratch_free) or runs. */
typedef struct ladle_join_pairs {
  int64_t n;
  int64_t *left;
  int64_t *right;
  ladle_join_runs *runs;
  /* the left rows are 0..n-1, each once and in order (a left or inner join
   * on unique right keys where every left row gave one pair): `join` may
   * then leave `left` NULL rather than write it */
  bool left_identity;
} ladle_join_pairs;

/* p's left rows written out as 0..n-1 where the kernel left them implied
 * (left_identity with left NULL), for a reader of them; false: out of
 * memory. Nothing to do otherwise. */
static inline bool ladle_join_pairs_write_left(ladle_join_pairs *p) {
  if (p->left != NULL || !p->left_identity || p->n <= 0) return true;
  p->left = (int64_t *)ladle_scratch_alloc((size_t)p->n * sizeof *p->left, false);
  if (p->left == NULL) return false;
  for (int64_t i = 0; i < p->n; i++) p->left[i] = i;
  return true;
}

/* Which rows of groups group_rows writes (see there). */
typedef enum ladle_group_rows_kind {
  LADLE_GROUP_ROWS_FIRST = 0, /* per group, its first row */
  LADLE_GROUP_ROWS_LAST,      /* per group, its last row */
  LADLE_GROUP_ROWS_ID         /* per row, its group id */
} ladle_group_rows_kind;

/* Reductions of a whole column to one value (the column kernels' `reduce`),
 * with Polars' answers for a select of them:
 * - SUM: ladle_sum_type, 0 when there are no valid values, integers wrapping;
 * - MIN, MAX: the input's type (fixed-width numbers, Boolean, Date, Datetime,
 *   Duration, Time), over the valid values, NaN ignored unless every valid
 *   value is NaN; null when there is no valid value;
 * - COUNT: UInt32, the valid values, of a column of any type. */
typedef enum ladle_reduce_op {
  LADLE_REDUCE_SUM = 0,
  LADLE_REDUCE_MIN,
  LADLE_REDUCE_MAX,
  LADLE_REDUCE_COUNT,
  LADLE_REDUCE_MEAN, /* grouped_reduce only: the mean of the valid values,
                        summed in double; Float32 for Float32, else Float64;
                        null when there is none */
  LADLE_REDUCE_COUNT_
} ladle_reduce_op;

/* COUNT's answer for column in: its valid values, which fit UInt32 (Polars'
 * type for count()) or are an error naming the count. */
static inline ladle_status ladle_reduce_count_value(const ladle_column *in, uint32_t *v,
                                                    ladle_error *err) {
  int64_t c = in->type.id == LADLE_TYPE_NULL ? 0 : in->length - in->null_count;
  if (c > (int64_t)UINT32_MAX)
    return ladle_err_set(err, LADLE_EINVAL, "count of %lld values does not fit UInt32",
                         (long long)c);
  *v = (uint32_t)c;
  return LADLE_OK;
}

/* Whether `reduce` takes MIN and MAX of a column of type id. */
static inline bool ladle_reduce_extreme_type(ladle_type_id id) {
  return ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL || id == LADLE_TYPE_DATE ||
         id == LADLE_TYPE_DATETIME || id == LADLE_TYPE_DURATION || id == LADLE_TYPE_TIME;
}

/* Whether casting a to out cannot fail on any value (what a row program's
 * CAST takes): to a float (not Float64 to Float32), or an integer (or a
 * Boolean, as 0 and 1) to an integer type holding every value of it. */
static inline bool ladle_cast_lossless(ladle_dtype a, ladle_dtype out) {
  if (!ladle_type_is_numeric(a.id) && a.id != LADLE_TYPE_BOOL) return false;
  if (ladle_type_is_float(out.id))
    return a.id != LADLE_TYPE_FLOAT64 || out.id == LADLE_TYPE_FLOAT64;
  if (!ladle_type_is_integer(out.id) || ladle_type_is_float(a.id)) return false;
  if (a.id == LADLE_TYPE_BOOL) return true;
  size_t wa = ladle_type_width(a.id), wo = ladle_type_width(out.id);
  bool sa = ladle_type_is_signed(a.id), so = ladle_type_is_signed(out.id);
  return (sa == so && wo >= wa) || (!sa && so && wo > wa);
}

/* Polars' type of sum(x): Boolean counts as UInt32, the small integers widen
 * to Int64, the rest keep their type. */
static inline ladle_dtype ladle_sum_type(ladle_dtype t) {
  switch (t.id) {
    case LADLE_TYPE_BOOL:
      return ladle_dtype_make(LADLE_TYPE_UINT32);
    case LADLE_TYPE_INT8:
    case LADLE_TYPE_INT16:
    case LADLE_TYPE_UINT8:
    case LADLE_TYPE_UINT16:
    case LADLE_TYPE_NULL:
      return ladle_dtype_make(LADLE_TYPE_INT64);
    default:
      return t;
  }
}

/* Whether op of a group_by takes values of type id: count any, min and max
 * those `reduce` takes, sum and mean numbers and Booleans (a backend may
 * take fewer types still: those its programs hold). */
static inline bool ladle_grouped_takes(ladle_reduce_op op, ladle_type_id id) {
  switch (op) {
    case LADLE_REDUCE_COUNT:
      return true;
    case LADLE_REDUCE_MIN:
    case LADLE_REDUCE_MAX:
      return ladle_reduce_extreme_type(id);
    case LADLE_REDUCE_SUM:
    case LADLE_REDUCE_MEAN:
      return ladle_type_is_numeric(id) || id == LADLE_TYPE_BOOL;
    default:
      return false;
  }
}

/* The type grouped_reduce gives op over values of type t (Polars' type of
 * the aggregation in a group_by). */
static inline ladle_dtype ladle_grouped_type(ladle_reduce_op op, ladle_dtype t) {
  switch (op) {
    case LADLE_REDUCE_SUM:
      return ladle_sum_type(t);
    case LADLE_REDUCE_COUNT:
      return ladle_dtype_make(LADLE_TYPE_UINT32);
    case LADLE_REDUCE_MEAN:
      return ladle_dtype_make(t.id == LADLE_TYPE_FLOAT32 ? LADLE_TYPE_FLOAT32 : LADLE_TYPE_FLOAT64);
    default:
      return t;
  }
}

/* A row program: an elementwise expression (columns, constants and binary
 * operations) flattened into instructions, for `eval_program` to compute in
 * one pass over the rows with no column between the operations (fused).
 * Instruction i computes value i from earlier ones; the program's value is
 * its last instruction's. A BINARY instruction means what `binary` means on
 * the same operands (a CONST is the one-row side), so a backend answers for
 * it by binary_supports. */
enum { LADLE_PROG_MAX = 64, LADLE_PROG_INPUTS = 32 };

typedef enum ladle_pcode {
  LADLE_P_COL,    /* input column `a` */
  LADLE_P_CONST,  /* `value`, a one-row host column */
  LADLE_P_BINARY, /* `op` (a ladle_binary_op) of values a and b */
  LADLE_P_FUNC,   /* `op` (a ladle_func) of value a (and b: fill_null's value) */
  LADLE_P_CAST,   /* value a as `type` (a cast no value can fail) */
  LADLE_P_WHERE,  /* value b where Boolean value a is true, else null (a filter
                     folded into what reads its rows: an aggregation) */
  LADLE_P_IF      /* value b where Boolean value a is true (and valid), else value
                     c: a when/then/otherwise branch */
} ladle_pcode;

typedef struct ladle_pinstr {
  ladle_pcode code;
  int op;
  int a, b;
  ladle_dtype type; /* the value's type */
  const ladle_column *value;
  int c; /* IF: the value where a is not true */
} ladle_pinstr;

typedef struct ladle_program {
  size_t n;
  ladle_pinstr ins[LADLE_PROG_MAX];
} ladle_program;

/* Rows grouped by their keys on a backend's device (group_keys), for
 * grouped_reduce: groups are numbered in the order of their first rows
 * (what group_by(maintain_order=True) shows), whatever the kernel. */
typedef struct ladle_dgroups {
  int64_t nrows, ngroups;
  /* UInt32 per row grouped (in row order): its group */
  ladle_column ids;
  /* Int64 per group: its first row */
  ladle_column first;
  /* Int64, every row grouped, by group, ascending within one */
  ladle_column rows;
  /* Int64, ngroups + 1: group g's rows are rows[offsets[g], offsets[g + 1]) */
  ladle_column offsets;
  /* the rows grouped (group_keys' sel), or no buffers: every row */
  ladle_column sel;
} ladle_dgroups;

static inline void ladle_dgroups_release(ladle_dgroups *g) {
  ladle_column_release(&g->ids);
  ladle_column_release(&g->first);
  ladle_column_release(&g->rows);
  ladle_column_release(&g->offsets);
  ladle_column_release(&g->sel);
  memset(g, 0, sizeof *g);
}

/* Groups of the CPU's executor (ladle_groups, host arrays) seen as
 * ladle_dgroups for a kernel that takes those: columns over g's ids, and
 * over its CSR rows and offsets where built (else left without buffers);
 * owning nothing (nothing to release; g must outlive the view). g->ids must
 * have been made (ladle_groups_ids). */
static inline void ladle_dgroups_view(const ladle_groups *g, ladle_dgroups *d) {
  memset(d, 0, sizeof *d);
  d->nrows = g->nrows;
  d->ngroups = g->ngroups;
  d->ids.type = ladle_dtype_make(LADLE_TYPE_UINT32);
  d->ids.length = g->nrows;
  d->ids.values = g->ids;
  if (g->offsets != NULL) {
    d->rows.type = d->offsets.type = ladle_dtype_make(LADLE_TYPE_INT64);
    d->rows.length = g->nrows;
    d->rows.values = g->rows;
    d->offsets.length = g->ngroups + 1;
    d->offsets.values = g->offsets;
  }
}

/* A String column's rows against one pattern (str_match). Comparisons order
 * bytes as Polars orders strings (memcmp, then the shorter first). */
typedef enum ladle_str_op {
  LADLE_STR_EQ = 0,
  LADLE_STR_NE,
  LADLE_STR_LT,
  LADLE_STR_LE,
  LADLE_STR_GT,
  LADLE_STR_GE,
  LADLE_STR_STARTS_WITH,
  LADLE_STR_ENDS_WITH,
  LADLE_STR_CONTAINS, /* a plain substring, not a regex */
  /* the pattern's pieces (split at NUL bytes; empty ones skipped) one after
   * the other within one line: the regex "p1.*p2" ('.' skips newlines) */
  LADLE_STR_CONTAINS_SEQ
} ladle_str_op;

/* The row pairs of a join on a backend's device (join_rows): n pairs, as
 * Int64 columns of n rows without nulls, -1 for "no row" (the null side of
 * an outer join's row); `right` has no buffers for SEMI and ANTI joins. */
/* A page of a Parquet column chunk as parquet_decode reads it: its bytes in
 * one buffer with the other pages of the column (the format's structure is
 * the io layer's; this is what a decoder needs of it). A data page's bytes,
 * decompressed, start with its definition levels (RLE/bit-packed hybrid of
 * bit width 1; none when the column is required): def_len bytes of them, or,
 * `prefixed` (a v1 page), a 4-byte little-endian length and that many bytes.
 * Its values follow: PLAIN fixed-width values of the present rows, or (DICT)
 * the indices' bit width in one byte and the dictionary indices as an
 * RLE/bit-packed hybrid. A dictionary page's bytes are its entries, PLAIN.
 * With `codec` set the bytes are as stored: a v2 page's def_len bytes of
 * levels uncompressed, then its values compressed; any other page compressed
 * whole; `len` the bytes decompressed (levels included). */
typedef enum ladle_kpage_kind {
  LADLE_KPAGE_PLAIN,     /* a data page of PLAIN values */
  LADLE_KPAGE_DICT,      /* a data page of dictionary indices */
  LADLE_KPAGE_DICTIONARY /* a dictionary page */
} ladle_kpage_kind;

/* Codecs of stored pages, numbered as Parquet's CompressionCodec. */
enum { LADLE_KCODEC_NONE = 0, LADLE_KCODEC_ZSTD = 6 };

typedef struct ladle_kpage {
  int64_t offset, size; /* its bytes in the buffer */
  int64_t len;          /* codec set: its bytes decompressed */
  int64_t row;          /* a data page: its first row in the output */
  int64_t num_values;   /* rows of a data page (one level each); entries of a dictionary */
  int64_t num_nulls;    /* a data page's nulls as its header states them (-1: not stated) */
  int32_t def_len;
  int32_t kind;     /* ladle_kpage_kind */
  int32_t dict;     /* a DICT page: its dictionary page's index in the pages */
  int32_t codec;    /* LADLE_KCODEC_*: 0, the bytes are decompressed already */
  int32_t prefixed; /* the levels come after their 4-byte length (def_len unused) */
  int32_t pad;
} ladle_kpage;

/* What is wrong with a String column's dictionary page as parquet_decode
 * takes it (size bytes at d: n + 1 Int64 offsets from 0, rising and inside
 * the page, then the entries' bytes), or NULL: every backend checks it so
 * before it trusts the offsets. */
static inline const char *ladle_kpage_dict_strings_problem(const uint8_t *d, int64_t size,
                                                           int64_t n) {
  if (n < 0 || size < 8 || n > (size - 8) / 8) return "dictionary offsets run past the page";
  if (((uintptr_t)d & 7) != 0) return "a misaligned dictionary";
  const int64_t *off = (const int64_t *)(const void *)d;
  int64_t room = size - (n + 1) * 8;
  if (off[0] != 0) return "dictionary offsets do not start at 0";
  for (int64_t k = 0; k < n; k++)
    if (off[k + 1] < off[k] || off[k + 1] > room) return "bad dictionary offsets";
  return NULL;
}

typedef struct ladle_djoin {
  int64_t n;
  ladle_column left, right;
} ladle_djoin;

static inline void ladle_djoin_release(ladle_djoin *j) {
  ladle_column_release(&j->left);
  ladle_column_release(&j->right);
  memset(j, 0, sizeof *j);
}

/* The version of this table's layout a separately built backend (the CUDA
 * shared object) must have been compiled against. */
#define LADLE_BACKEND_ABI 17

typedef struct ladle_backend {
  const char *name;
  ladle_device_type device;
  int abi;            /* LADLE_BACKEND_ABI */
  size_t struct_size; /* sizeof(ladle_backend) where it was built */

  /* ---- Column kernels: device-neutral. Inputs and outputs are columns on
   * this backend's device (ctx->device_id), outputs allocated from
   * ctx->mr; nothing is handed back as a raw host array. An entry a
   * backend lacks is NULL or returns LADLE_ENOTSUP with the reason. ---- */

  /* A copy of host column `in` on this backend's device, and back. The CPU
   * backend's are references. Outputs are complete when they return. */
  ladle_status (*to_device)(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                            ladle_error *err);
  ladle_status (*to_host)(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                          ladle_error *err);
  /* The positions (ascending, an INT64 column without nulls) of the rows of
   * BOOL `mask` that are true and valid. */
  ladle_status (*select)(const ladle_kctx *ctx, const ladle_column *mask, ladle_column *out,
                         ladle_error *err);
  /* out[i] = src[idx[i]] for the INT64 column idx; a null or negative index
   * gives a null row. Indices must be < src->length. */
  ladle_status (*take)(const ladle_kctx *ctx, const ladle_column *src, const ladle_column *idx,
                       ladle_column *out, ladle_error *err);
  /* The rows of src where BOOL `mask` (same length) is true and valid, in order. */
  ladle_status (*filter)(const ladle_kctx *ctx, const ladle_column *src, const ladle_column *mask,
                         ladle_column *out, ladle_error *err);
  /* One row: op over the valid values of `in` (ladle_reduce_op says what
   * each gives). */
  ladle_status (*reduce)(const ladle_kctx *ctx, ladle_reduce_op op, const ladle_column *in,
                         ladle_column *out, ladle_error *err);
  /* n rows start, start + 1, ..., start + n - 1 (row numbers, identity
   * indices) as a column of integer type `type` (INT32, INT64, UINT32 or
   * UINT64) without nulls. LADLE_EINVAL, naming the type, when a value does
   * not fit it (n > 0 only) or n < 0; LADLE_ENOTSUP for another type. */
  ladle_status (*sequence)(const ladle_kctx *ctx, int64_t start, int64_t n, ladle_dtype type,
                           ladle_column *out, ladle_error *err);
  /* Whether `binary` takes op over columns of types a and b into out (the
   * planner asks before a query runs on the column kernels alone). NULL:
   * every operation the binder makes. */
  bool (*binary_supports)(int op, ladle_dtype a, ladle_dtype b, ladle_dtype out);
  /* Program p over `inputs` (ninputs columns of one length, on the device;
   * at least one COL reads them) into out: its value per row. */
  ladle_status (*eval_program)(const ladle_kctx *ctx, const ladle_program *p,
                               const ladle_column *inputs, size_t ninputs, ladle_column *out,
                               ladle_error *err);
  /* `reduce` (SUM or COUNT; others LADLE_ENOTSUP) of program p's value over
   * inputs, without the column eval_program would write: a filter folded
   * into an aggregation reads its columns once. NULL: eval_program, then
   * reduce. */
  ladle_status (*reduce_program)(const ladle_kctx *ctx, ladle_reduce_op op, const ladle_program *p,
                                 const ladle_column *inputs, size_t ninputs, ladle_column *out,
                                 ladle_error *err);
  /* Whether eval_program takes an instruction of `code` and `op` over values
   * of types a (and b) into `out` (NULL: every one the binder makes; BINARY
   * instructions answer as binary_supports). */
  bool (*program_supports)(ladle_pcode code, int op, ladle_dtype a, ladle_dtype b, ladle_dtype out);
  /* Rows grouped by nkeys key columns of one length on the device (types a
   * row program reads, and strings), as group_by groups them: NaN equals
   * NaN, -0.0 equals 0.0, null equals null. sel: the rows grouped, an Int64
   * column of row numbers, ascending, no nulls (a filter's kept rows: the
   * columns need not be compacted); NULL: every row. out->nrows is how many
   * rows are grouped; first and rows hold row numbers of the key columns.
   * LADLE_ENOTSUP for another key type or 2^31 - 1 rows or more. */
  ladle_status (*group_keys)(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                             const ladle_column *sel, ladle_dgroups *out, ladle_error *err);
  /* Per group of g, op (SUM, MIN, MAX, COUNT, MEAN: as ladle_reduce_op and
   * a group_by's aggregation in Polars) over the valid values of program
   * p's value at the group's rows (inputs: columns as long as group_keys'
   * key columns), into a column of g->ngroups rows of
   * ladle_grouped_type; p NULL: each group's rows (len), UInt32. Floats
   * are summed in double in an order fixed by the groups alone: the same
   * answer every run. */
  ladle_status (*grouped_reduce)(const ladle_kctx *ctx, ladle_reduce_op op, const ladle_program *p,
                                 const ladle_column *inputs, size_t ninputs, const ladle_dgroups *g,
                                 ladle_column *out, ladle_error *err);
  /* The stable permutation (an Int64 column on the device, one row per row)
   * that sorts the rows by nkeys key columns of one length (fixed-width
   * types), the first most significant: each descending or not, its nulls
   * first or last, NaN above every number, -0.0 equal to 0.0; as the host
   * kernel sort_indices orders them. */
  ladle_status (*sort_perm)(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                            const bool *descending, const bool *nulls_last, ladle_column *out,
                            ladle_error *err);
  /* The pairs of rows a join of type `how` matches, in the host kernel
   * join's order: by left row, each left row's matches by right row (a LEFT
   * or FULL join's left row without a match paired with -1); a FULL join's
   * right rows without a match after those, ascending; a RIGHT join the
   * same with the sides swapped (by right row); SEMI and ANTI the left rows
   * kept, ascending; CROSS every left row with every right row, left-major.
   * lkeys and rkeys: nkeys key columns per side on the device, of equal
   * types pairwise (types a row program reads, and strings), nl and nr rows
   * (CROSS: nkeys 0, the sides' heights). Keys compare as group_by's do;
   * null keys match each other only with nulls_equal. LADLE_ENOTSUP for
   * other key types, or 2^31 - 1 rows or more on a side. */
  ladle_status (*join_rows)(const ladle_kctx *ctx, const ladle_column *lkeys,
                            const ladle_column *rkeys, size_t nkeys, int64_t nl, int64_t nr,
                            ladle_join_type how, bool nulls_equal, ladle_djoin *out,
                            ladle_error *err);
  /* Per row of String column `in` (on the device), `row op pat` for the
   * pat_len bytes at host pointer pat: a Bool column, null where in is. */
  ladle_status (*str_match)(const ladle_kctx *ctx, ladle_str_op op, const ladle_column *in,
                            const char *pat, size_t pat_len, ladle_column *out, ladle_error *err);
  /* Per row, `a op b` of two String columns of one length on the device
   * (op EQ to GE): a Bool column, null where either is. */
  ladle_status (*str_compare)(const ladle_kctx *ctx, ladle_str_op op, const ladle_column *a,
                              const ladle_column *b, ladle_column *out, ladle_error *err);
  /* A copy of `in` in buffers of its own on this backend's device (a
   * result column handed to a consumer that may write into it, such as
   * torch through DLPack, while the engine still shares its buffers). */
  ladle_status (*copy)(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                       ladle_error *err);
  /* The values of BOOL column `in` (one byte each) as Arrow's bits, LSB
   * first: a UINT8 column of (length + 7) / 8 bytes, the last byte's unused
   * bits zero, without nulls (in's validity is not looked at). */
  ladle_status (*pack_bits)(const ladle_kctx *ctx, const ladle_column *in, ladle_column *out,
                            ladle_error *err);
  /* Orders ctx's stream against another stream of the same device (for CUDA
   * a cudaStream_t, with DLPack's 1 and 2 the legacy and per-thread default
   * streams): ours_waits, work on ctx's stream queued after this waits for
   * what `other` has queued so far (a consumer's kernels still reading a
   * buffer before ladle frees it); else the other waits for ours (a consumer
   * reads a result ladle wrote). Returns without blocking; with `other`
   * NULL, the calling thread waits for ctx's stream instead. NULL on the
   * host, which has no streams. */
  ladle_status (*stream_wait)(const ladle_kctx *ctx, void *other, bool ours_waits,
                              ladle_error *err);
  /* The device's free and total memory in bytes (NULL on the host). */
  ladle_status (*memory_info)(const ladle_kctx *ctx, int64_t *free_bytes, int64_t *total_bytes,
                              ladle_error *err);

  /* ---- Host kernels of the CPU executor (being moved onto the column
   * kernels above; a GPU backend leaves them NULL). ---- */

  /* Can this backend run the function or aggregation node e (its argument
   * types in e->arg_types)? Fills err with the reason when not; the caller
   * asks for every node of a tree before it runs any. */
  bool (*supports)(const ladle_kexpr *e, ladle_error *err);

  /* Elementwise. Inputs have equal length or length 1 (broadcast). Its
   * signature is already a column kernel's, and the CUDA table implements
   * it (comparisons of fixed-width types, +, -, * of numbers, Kleene and/or;
   * the rest LADLE_ENOTSUP): columns on the backend's device, except that a
   * one-row operand may be a host column (a literal, as the executor holds
   * it), whose value the kernel reads on the host. */
  ladle_status (*binary)(const ladle_kctx *ctx, int op, const ladle_column *a,
                         const ladle_column *b, ladle_dtype out_type, ladle_column *out,
                         ladle_error *err);
  ladle_status (*func)(const ladle_kctx *ctx, const ladle_kexpr *e, const ladle_column *args,
                       size_t nargs, ladle_column *out, ladle_error *err);
  ladle_status (*cast)(const ladle_kctx *ctx, const ladle_column *in, ladle_dtype to,
                       ladle_cast_mode mode, const char *name, ladle_column *out, ladle_error *err);
  /* args: cond0, then0, ..., otherwise; all of the output type but conds. */
  ladle_status (*when)(const ladle_kctx *ctx, const ladle_column *args, size_t nargs,
                       int64_t length, ladle_column *out, ladle_error *err);

  /* Selection. mask is BOOL; null counts as false. */
  ladle_status (*mask_to_indices)(const ladle_kctx *ctx, const ladle_column *mask,
                                  int64_t **out_idx, int64_t *out_n, ladle_error *err);
  ladle_status (*gather)(const ladle_kctx *ctx, const ladle_column *src, const int64_t *idx,
                         int64_t n, ladle_column *out, ladle_error *err);
  /* The same from consecutive pieces src[0..px->n) (a table's partitions)
   * taken as one column; NULL: the caller concatenates them. */
  ladle_status (*gather_pieces)(const ladle_kctx *ctx, const ladle_column *src,
                                const ladle_pieces *px, const int64_t *idx, int64_t n,
                                ladle_column *out, ladle_error *err);
  /* The rows of src whose keep byte is 1 (n_keep of them), in order; src not a
   * list. */
  ladle_status (*compact)(const ladle_kctx *ctx, const ladle_column *src, const uint8_t *keep,
                          int64_t n_keep, ladle_column *out, ladle_error *err);
  /* A filter's comparison of a numeric, temporal or string column with a constant
   * (length 1, valid, of the column's type), ANDed into 0/1 keep bytes:
   * keep[i] = (init ? 1 : keep[i]) & (in[i] op k) & in[i] is valid. op is
   * EQ, NE, LT, LE, GT or GE in total order (NaN equals NaN and sorts last).
   * NULL: the executor evaluates the comparison as a mask column. */
  ladle_status (*compare_into)(const ladle_kctx *ctx, int op, const ladle_column *in,
                               const ladle_column *k, bool init, uint8_t *keep, ladle_error *err);
  /* A filter's null test of a column, ANDed into 0/1 keep bytes (host memory):
   * keep[i] = (init ? 1 : keep[i]) & (in[i] is valid, or with negate is null)
   * for i < in->length. NULL: the executor evaluates the test as a mask column.
   * Serial: called from a partition's task. */
  ladle_status (*valid_into)(const ladle_kctx *ctx, const ladle_column *in, bool negate, bool init,
                             uint8_t *keep, ladle_error *err);
  /* A filter's mask ANDed into n 0/1 keep bytes (host memory), and the rows
   * kept counted: keep[i] = (init ? 1 : keep[i]) & (mask[i] is valid and
   * nonzero) for i < n. `mask` has n rows, or one that stands for all n; a
   * mask of no rows or not of type BOOL (a NULL column) is all null and
   * clears every byte; mask NULL is true everywhere (with init: every byte
   * 1; without: keep is only counted). *out_kept, when out_kept is not NULL,
   * is the number of bytes set afterwards. LADLE_EINVAL (keep untouched) for
   * a mask of fewer rows (but more than one); of more, the first n count.
   * Serial: called from a partition's task. */
  ladle_status (*mask_and)(const ladle_kctx *ctx, const ladle_column *mask, int64_t n, bool init,
                           uint8_t *keep, int64_t *out_kept, ladle_error *err);
  /* The rows whose keep byte is 1 among n 0/1 keep bytes, ascending, into
   * host array idx; n_kept is how many bytes are set (mask_and's count) and
   * idx has room for n_kept + 1 entries (the one past the last may be
   * written). Serial: called from a partition's task. */
  ladle_status (*keep_to_indices)(const ladle_kctx *ctx, const uint8_t *keep, int64_t n,
                                  int64_t n_kept, int64_t *idx, ladle_error *err);
  /* Where each of n rows landed in a selection of cnt of them: idx[sel[j]]
   * = j for j < cnt, -1 at every row not in sel (distinct rows in [0, n));
   * host arrays, idx of n entries. Serial. */
  ladle_status (*selection_positions)(const ladle_kctx *ctx, const int64_t *sel, int64_t cnt,
                                      int64_t n, int64_t *idx, ladle_error *err);
  /* The rows of n not taken yet (taken[i] == 0) where `mask` (BOOL, n rows
   * or one for all; NULL: every row) is true and valid: set to 1 in taken,
   * listed ascending in sel (room for n) and counted in *out_n; a when/then
   * branch's rows. LADLE_EINVAL (nothing written) for a mask of fewer rows
   * (but more than one); of more, the first n count. Host arrays. Serial. */
  ladle_status (*mask_take)(const ladle_kctx *ctx, const ladle_column *mask, int64_t n,
                            uint8_t *taken, int64_t *sel, int64_t *out_n, ladle_error *err);
  /* Row indices through row indices, into host array out of n entries:
   * out[k] = r < 0 ? -1 : offset + (inner ? inner[r] : r), where r = outer ?
   * outer[k] : k (outer NULL: the identity; -1 stays "no row"). Serial. */
  ladle_status (*index_compose)(const ladle_kctx *ctx, const int64_t *outer, int64_t n,
                                const int64_t *inner, int64_t offset, int64_t *out,
                                ladle_error *err);
  /* *out = whether idx[k] == k for every k < n (host array; true for n 0). */
  ladle_status (*index_is_identity)(const ladle_kctx *ctx, const int64_t *idx, int64_t n, bool *out,
                                    ladle_error *err);

  /* Keys. NaN equals NaN, -0.0 equals 0.0, null equals null (as in group_by). */
  ladle_status (*group_ids)(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                            ladle_groups *out, ladle_error *err);
  ladle_status (*aggregate)(const ladle_kctx *ctx, const ladle_kexpr *agg, const ladle_column *in,
                            ladle_groups *groups, ladle_column *out, ladle_error *err);
  /* The same with the input in nins consecutive pieces (a table's partitions)
   * whose lengths add up to the groups' rows; NULL: the caller concatenates. */
  ladle_status (*aggregate_chunks)(const ladle_kctx *ctx, const ladle_kexpr *agg,
                                   const ladle_column *ins, size_t nins, ladle_groups *groups,
                                   ladle_column *out, ladle_error *err);
  /* A partition's share of a mean, var or std combined across partitions
   * (Chan et al.): of the valid values of numeric or BOOL column `in`, their
   * count *cnt, their sum *sum (in row order, in double), their mean *mean
   * (anchored: the first finite value a plus the mean of the deviations from
   * a; 0 when none) and, with `second`, *m2, the sum of squared deviations
   * from that mean (else 0). A column of another type has no values. Serial:
   * called per partition. */
  ladle_status (*moments)(const ladle_kctx *ctx, const ladle_column *in, bool second, int64_t *cnt,
                          double *sum, double *mean, double *m2, ladle_error *err);
  /* Rows of groups into host array out: FIRST and LAST, per group its first
   * or last row (groups->ngroups entries); ID, per row its group id
   * (groups->nrows entries, in parallel); FIRST and LAST serial. */
  ladle_status (*group_rows)(const ladle_kctx *ctx, const ladle_groups *groups,
                             ladle_group_rows_kind which, int64_t *out, ladle_error *err);
  /* The rows a distinct keeps of rows grouped by key (group_ids): of each
   * group its first row (LADLE_KEEP_FIRST, LADLE_KEEP_ANY), its last
   * (LADLE_KEEP_LAST), or its only row when it has one (LADLE_KEEP_NONE;
   * groups of more rows keep none), ascending. *out_rows is a host array
   * (malloc; the caller frees it) of at least one entry, *out_n the rows in
   * it. LADLE_ENOMEM names "unique". */
  ladle_status (*distinct_rows)(const ladle_kctx *ctx, const ladle_groups *groups, ladle_keep keep,
                                int64_t **out_rows, int64_t *out_n, ladle_error *err);
  ladle_status (*join)(const ladle_kctx *ctx, const ladle_column *lkeys, const ladle_column *rkeys,
                       size_t nkeys, ladle_join_type how, bool nulls_equal, ladle_join_pairs *out,
                       ladle_error *err);
  /* Pairs [from, from + n) of runs, their left rows into left and right rows
   * into right (either may be NULL). Safe to call from several threads. */
  ladle_status (*join_pairs_fill)(const ladle_kctx *ctx, const ladle_join_runs *runs, int64_t from,
                                  int64_t n, int64_t *left, int64_t *right, ladle_error *err);
  void (*join_runs_free)(ladle_join_runs *runs);
  /* Reorders written-out pairs (left and right, not runs) by a stable
   * counting sort on their right row (by_right) or left row, each in [0,
   * rows) or -1 (those last). The arrays are replaced by new scratch arrays
   * (ladle_scratch_free) and the old ones freed; on error pairs is left as
   * it was. Host kernel of the CPU executor. */
  ladle_status (*join_pairs_sort)(const ladle_kctx *ctx, ladle_join_pairs *pairs, bool by_right,
                                  int64_t rows, ladle_error *err);
  /* A full join's coalesced key, as rows of its sides' key columns taken one
   * after the other (left rows 0..nl, then right row r at nl + r): per pair
   * its left row, else nl + its right row, else -1; into host array out of
   * pairs->n entries. Pairs written out (not runs). Host kernel of the CPU
   * executor. */
  ladle_status (*join_pairs_coalesce)(const ladle_kctx *ctx, const ladle_join_pairs *pairs,
                                      int64_t nl, int64_t *out, ladle_error *err);
  /* A stable permutation that sorts rows by the keys. */
  ladle_status (*sort_indices)(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                               const bool *descending, const bool *nulls_last, int64_t **out_perm,
                               ladle_error *err);
  /* The first min(k, rows) entries of sort_indices' permutation (a sort under
   * head(k)); *out_idx may hold more, the first ones counting. NULL: the
   * executor sorts every row. */
  ladle_status (*top_k_indices)(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                const bool *descending, const bool *nulls_last, int64_t k,
                                int64_t **out_idx, ladle_error *err);
  /* rank of `in` within groups (NULL groups: one group). */
  ladle_status (*rank)(const ladle_kctx *ctx, const ladle_column *in, ladle_groups *groups,
                       ladle_rank_method method, bool descending, ladle_column *out,
                       ladle_error *err);
  /* The rank of each row of `in` taken as a series of one value: 1 where it
   * is valid, null where it is null, of `type` FLOAT64 (1.0) or UINT32 (1;
   * LADLE_ENOTSUP for another type); a column of in's length allocated from
   * ctx->mr. */
  ladle_status (*rank_of_singletons)(const ladle_kctx *ctx, const ladle_column *in,
                                     ladle_dtype type, ladle_column *out, ladle_error *err);
  /* keep[i] |= src[i] over n 0/1 keep bytes (host memory): a filter's
   * disjunction of terms, each written as keep bytes. NULL: the executor
   * evaluates a disjunction as a mask column. Serial: called from a
   * partition's task. */
  ladle_status (*mask_or)(const ladle_kctx *ctx, const uint8_t *src, int64_t n, uint8_t *keep,
                          ladle_error *err);

  /* ---- Column kernels of ABI 8 (device-neutral, as those above): the rows
   * of an exchange between ranks split into parts. ---- */

  /* Rows to nparts parts by a hash of their keys (nkeys columns of one
   * length), the same on every rank, process and device for equal values:
   * integers of any width and signedness, DATE, DATETIME, DURATION and TIME
   * hash as their value widened to 64 bits (so an Int32 5 and an Int64 5 go
   * to the same part; unsigned values above INT64_MAX as their bit pattern);
   * BOOL as 0/1; FLOAT32/FLOAT64 as doubles with -0.0 as 0.0 and every NaN as
   * one NaN; STRING and BINARY by their bytes; DECIMAL/INT128/UINT128 by their
   * 16 bytes; a null as one fixed value per key position (the definition, bit
   * for bit: ladle_part_step in core.h). *perm: an INT64 column (no nulls) of
   * the rows' indices part by part, each part's rows in input order (a stable
   * counting sort); counts[p] (nparts host slots) the rows of part p.
   * LADLE_ENOTSUP naming the type for other key types (LIST, CATEGORICAL);
   * LADLE_EINVAL for nparts < 1, nkeys 0 or keys of different lengths. */
  ladle_status (*hash_partition)(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                                 int nparts, ladle_column *perm, int64_t *counts, ladle_error *err);
  /* Rows to nparts parts by their order against nparts - 1 splitter rows
   * (splitters: nkeys columns of nparts - 1 rows, themselves in order, each
   * of its key's type), the order being sort_indices' (each key descending or
   * not, its nulls first or last, NaN above every number, -0.0 equal to 0.0):
   * part p takes the rows r with splitter[p - 1] <= r < splitter[p] (part 0:
   * r < splitter[0]; the last: splitter[nparts - 2] <= r), so a row equal to
   * a splitter goes to the higher part. perm and counts as hash_partition's.
   * LADLE_ENOTSUP naming the type for a key type sort_indices does not order
   * (LIST, CATEGORICAL, BINARY, TIME, DECIMAL, INT128, UINT128); LADLE_EINVAL
   * for splitters of another type or length, or out of order. */
  ladle_status (*range_partition)(const ladle_kctx *ctx, const ladle_column *keys,
                                  const ladle_column *splitters, size_t nkeys,
                                  const bool *descending, const bool *nulls_last, int nparts,
                                  ladle_column *perm, int64_t *counts, ladle_error *err);

  /* ---- lists ---- */

  /* Unnests nlists LIST columns of one length (Polars' explode; names[j]
   * names lists[j] in messages): per output row, *rows (an INT64 column, no
   * nulls) holds the input row it comes from and outs[j] (of lists[j]'s
   * element type) its element. A row gives its lists' element count; a null
   * list one row of nulls when keep_nulls, else none; an empty list one row
   * of nulls when empty_as_null, else none. Rows whose lists give different
   * counts: LADLE_ECOMPUTE naming the columns and the row. NULL: the device
   * has no list columns (a query with one fails naming it). */
  ladle_status (*explode)(const ladle_kctx *ctx, const ladle_column *lists, size_t nlists,
                          bool empty_as_null, bool keep_nulls, const char *const *names,
                          ladle_column *rows, ladle_column *outs, ladle_error *err);
  /* Whether to_device, to_host, take and filter move LIST columns (of
   * fixed-width, String or List elements): a query may then carry them
   * through its filters, joins, sorts and slices on this device. */
  bool moves_lists;
  /* A join in a pipeline (op_join.c's streaming form): the build side's
   * keys (nkeys columns, whole) grouped once into a table that probes of the
   * other side's keys, of types probe_types, then read morsel by morsel. The
   * keys are kept by reference. NULL: the backend joins whole sides only
   * (join), and the planner streams no join. */
  ladle_status (*join_build)(const ladle_kctx *ctx, const ladle_column *keys, size_t nkeys,
                             const ladle_dtype *probe_types, bool nulls_equal, ladle_join_ht **out,
                             ladle_error *err);
  /* The pairs of one morsel's probe keys against ht, as `join` gives them
   * with the probe side as the left: out->left the probe rows (of this
   * morsel, from 0) in order, out->right each one's build rows ascending;
   * how INNER (matches only), LEFT (a probe row without match once, with
   * -1), SEMI or ANTI (probe rows alone, right NULL). Never runs; `left` is
   * always written, and left_identity set where it is 0..n-1 (every probe
   * row once: the morsel's columns are the output's). Safe to call from
   * several threads at once. */
  ladle_status (*join_probe)(const ladle_kctx *ctx, const ladle_join_ht *ht,
                             const ladle_column *keys, ladle_join_type how, ladle_join_pairs *out,
                             ladle_error *err);
  void (*join_ht_free)(ladle_join_ht *ht);

  /* ---- Column kernels of ABI 13 ---- */

  /* A flat fixed-width Parquet column decoded on this backend's device from
   * its pages (host memory: `bytes`, nbytes of them, pages[0..npages) in it,
   * each row group's dictionary page before its data pages): values of
   * `width` bytes (4 or 8: INT32, INT64, FLOAT, DOUBLE) into a column of
   * `type` (of that width) and nrows rows, each data page's rows from its
   * `row`; nullable: the pages have definition levels (a column whose rows all
   * come out valid gets no validity). Every size, level, run and index is
   * checked: bad data is LADLE_ECORRUPT naming the page (its index in pages)
   * and what is wrong, never a read outside the pages. NULL: the backend
   * reads no Parquet (the executor decodes on the host and copies up).
   * Pages with a codec are decompressed first, where parquet_codecs has it. */
  ladle_status (*parquet_decode)(const ladle_kctx *ctx, const uint8_t *bytes, int64_t nbytes,
                                 const ladle_kpage *pages, size_t npages, int width,
                                 ladle_dtype type, bool nullable, int64_t nrows, ladle_column *out,
                                 ladle_error *err);
  /* The codecs whose pages parquet_decode takes as stored (bit 1 << codec;
   * NULL or 0: the caller decompresses every page). */
  unsigned (*parquet_codecs)(const ladle_kctx *ctx);

  /* ---- Column kernels of ABI 14 ---- */

  /* A semi or anti join streamed on its right side (op_join.c's mark
   * sink): one morsel's probe keys against ht (built from the left side's
   * keys), `value` written into marks[r] (host bytes, one per build row) for
   * every build row r that one of the probe rows matches (as join_probe's
   * INNER pairs would pair them). Safe to call from several threads at once
   * on the same marks. NULL: the planner streams no semi or anti join on
   * its right side. */
  ladle_status (*join_probe_mark)(const ladle_kctx *ctx, const ladle_join_ht *ht,
                                  const ladle_column *keys, uint8_t value, uint8_t *marks,
                                  ladle_error *err);

  /* ---- Column kernels of ABI 15 ---- */

  /* n buffers of host memory (in[i], len[i] bytes each, at most 16 MiB)
   * compressed on this backend's device with `codec` (LADLE_KCODEC_*), each
   * as one standalone frame a host decompressor reads: *block (malloc'd, the
   * caller frees it) holds them one after another, buffer i's at off[i],
   * outlen[i] bytes. ctx->pool, where set, copies the buffers in and out.
   * The Parquet writer compresses a GPU result's pages with it. NULL, or
   * compress_codecs without bit 1 << codec: the host compresses. */
  ladle_status (*compress_pages)(const ladle_kctx *ctx, int codec, size_t n,
                                 const uint8_t *const *in, const int64_t *len, uint8_t **block,
                                 int64_t *off, int64_t *outlen, ladle_error *err);
  unsigned (*compress_codecs)(const ladle_kctx *ctx);

  /* ---- Column kernels of ABI 16 (groups as ladle_dgroups since ABI 17) ---- */

  /* A running function (ladle_cum_op but SHIFT) of `in` in row order
   * (reverse: from the last row), restarting in each group (NULL groups: one
   * group; the rows of a group need not be adjacent): a null row is null and
   * skipped; COUNT is UInt32, never null; the others are in's type, integers
   * wrapping, a float MIN/MAX skipping NaN once a number was seen, equal
   * values giving the later one. Groups on this backend's device, every row
   * of `in` grouped (no sel): ids and ngroups are read, and rows and offsets
   * where a kernel wants them (a view of the CPU's ladle_groups may leave
   * them without buffers: ladle_dgroups_view). Float sums and products may
   * be added in another order than row order (a GPU scans in parallel: the
   * last bits differ). out allocated from ctx->mr. NULL: the device has none
   * (the query falls back naming the function). */
  ladle_status (*cumulative)(const ladle_kctx *ctx, const ladle_column *in,
                             const ladle_dgroups *groups, int op, bool reverse, ladle_column *out,
                             ladle_error *err);
  /* The rows shift(n) takes, as an INT64 column of nrows rows for take: row i
   * the row n places before it in its group (n < 0: after), or -1 (a null
   * row) where that is past the group's ends. NULL groups: one group; else
   * as cumulative's (every row grouped, ids always there). */
  ladle_status (*shift_rows)(const ladle_kctx *ctx, int64_t nrows, const ladle_dgroups *groups,
                             int64_t n, ladle_column *out, ladle_error *err);
} ladle_backend;

const ladle_backend *ladle_backend_cpu(void);
/* The CPU's column kernels with its other host kernels left out, as a GPU's
 * table has them (LADLE_COLUMN_KERNELS=1 runs on it). */
const ladle_backend *ladle_backend_cpu_columns(void);

/* A backend built as its own shared object (today "cuda": libladle_cuda.so),
 * opened on first use with dlopen, for device `device_id`. It is looked for
 * at $LADLE_CUDA_LIB, then beside the library or module holding this code,
 * then on the loader's path. *alloc is the device's stream-ordered allocator
 * (for a memory resource over it) and *stream the stream kernels run on.
 * Fails with a message that names what is missing: the shared object (the
 * backend was not built: no nvcc where ladle was compiled), the driver, or a
 * device. */
ladle_status ladle_backend_open(const char *name, int device_id, const ladle_backend **out,
                                const ladle_allocator **alloc, void **stream, ladle_error *err);

/* What a separately built backend exports, under this name. */
#define LADLE_BACKEND_OPEN_SYMBOL "ladle_backend_cuda_open"
typedef ladle_status (*ladle_backend_open_fn)(int abi, size_t struct_size, int device_id,
                                              const ladle_backend **out,
                                              const ladle_allocator **alloc, void **stream,
                                              ladle_error *err);

/* ... and the devices it sees (ladle_cuda_devices). */
#define LADLE_BACKEND_DEVICES_SYMBOL "ladle_backend_cuda_devices"
typedef ladle_status (*ladle_backend_devices_fn)(int abi, ladle_device_info *out, size_t cap,
                                                 size_t *count, ladle_error *err);

#endif /* LADLE_BACKEND_H */
