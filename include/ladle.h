/* ladle.h — the one public C API of ladle.
 *
 * ladle builds a query plan (nodes over typed expressions), executes it on an
 * engine (CPU today; CUDA plugs in behind the same calls) and hands the result
 * out through the Arrow C Data Interface.
 *
 * Conventions
 *  - Every fallible call returns ladle_status (LADLE_OK == 0) and fills the
 *    optional `err` with a message that names the column, node or value involved.
 *  - Outputs (`out_*`) are written only on success.
 *  - Plan builders CONSUME their plan and expression arguments, on success and on
 *    failure alike: the caller never releases an argument it passed in.
 *  - Expression builders never fail loudly: they return NULL when memory runs out
 *    (or when an argument was NULL) and the plan builder that receives the NULL
 *    reports LADLE_ENOMEM. This keeps expression trees writable as nested calls.
 *  - Every create is matched by a destroy.
 */
#ifndef LADLE_H
#define LADLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LADLE_BUILDING)
#define LADLE_API __attribute__((visibility("default")))
#else
#define LADLE_API
#endif

#define LADLE_VERSION "0.1.0"

/* ------------------------------------------------------------------ status */

typedef enum ladle_status_code {
  LADLE_OK = 0,
  LADLE_EINVAL = 1,    /* invalid argument or invalid plan */
  LADLE_ENOMEM = 2,    /* an allocation failed */
  LADLE_ENOTSUP = 3,   /* valid, but not supported by this build or backend */
  LADLE_ETYPE = 4,     /* a type does not fit the operation */
  LADLE_ENOCOL = 5,    /* a column name that does not exist */
  LADLE_ECOMPUTE = 6,  /* a runtime failure: strict cast, bad value */
  LADLE_EIO = 7,       /* reading or writing a file failed */
  LADLE_ECORRUPT = 8,  /* input bytes that violate their format */
  LADLE_EDEVICE = 9,   /* a device (GPU) failure */
  LADLE_ECOMM = 10,    /* a communicator (MPI, NCCL) failure */
  LADLE_ECANCELED = 11 /* the caller cancelled the query */
} ladle_status_code;

typedef int ladle_status;

#define LADLE_ERROR_MESSAGE_MAX 512

/* A message buffer the caller owns (typically on its stack). */
typedef struct ladle_error {
  ladle_status code;                     /* the status the message belongs to */
  char message[LADLE_ERROR_MESSAGE_MAX]; /* NUL-terminated, human readable */
} ladle_error;

/* Static name of a status code, e.g. "LADLE_ETYPE". */
LADLE_API const char *ladle_status_name(ladle_status status);

/* ------------------------------------------------------------------- types */

typedef enum ladle_type_id {
  LADLE_TYPE_NULL = 0,
  LADLE_TYPE_BOOL,
  LADLE_TYPE_INT8,
  LADLE_TYPE_INT16,
  LADLE_TYPE_INT32,
  LADLE_TYPE_INT64,
  LADLE_TYPE_UINT8,
  LADLE_TYPE_UINT16,
  LADLE_TYPE_UINT32,
  LADLE_TYPE_UINT64,
  LADLE_TYPE_FLOAT32,
  LADLE_TYPE_FLOAT64,
  LADLE_TYPE_STRING,   /* UTF-8 */
  LADLE_TYPE_DATE,     /* int32 days since 1970-01-01 */
  LADLE_TYPE_DATETIME, /* int64 since the epoch in `unit`; `tz` is metadata */
  LADLE_TYPE_DURATION, /* int64 in `unit` */
  /* Carried (scanned, filtered, joined and sorted as payload, cast, written),
   * not yet computed on: see ladle_type_is_carried in docs/semantics.md. */
  LADLE_TYPE_DECIMAL, /* int128 (little-endian, two's complement) scaled by 10^-scale */
  /* Reserved so that the descriptor does not change shape when they land. */
  LADLE_TYPE_LIST,        /* one level of a flat child type by `child` (carried) */
  LADLE_TYPE_CATEGORICAL, /* uint32 codes over a string dictionary (not yet) */
  LADLE_TYPE_TIME,        /* int64 nanoseconds since midnight (carried) */
  LADLE_TYPE_BINARY,      /* bytes, laid out as STRING without the UTF-8 promise (carried) */
  LADLE_TYPE_INT128,      /* little-endian two's complement: cast, compared, +-*, // % (carried) */
  LADLE_TYPE_UINT128,     /* little-endian, unsigned: moved and cast only (carried) */
  LADLE_TYPE_COUNT_
} ladle_type_id;

typedef enum ladle_time_unit {
  LADLE_TIME_NS = 0,
  LADLE_TIME_US = 1,
  LADLE_TIME_MS = 2
} ladle_time_unit;

#define LADLE_TZ_MAX 40

/* A data type, passed by value. Zero-initialised it is Null. */
typedef struct ladle_dtype {
  ladle_type_id id;
  ladle_time_unit unit;            /* DATETIME, DURATION */
  int8_t precision;                /* DECIMAL */
  int8_t scale;                    /* DECIMAL */
  const struct ladle_dtype *child; /* LIST (reserved; static or interned) */
  char tz[LADLE_TZ_MAX];           /* DATETIME time zone name, "" for naive */
} ladle_dtype;

/* Convenience constructor for types without parameters. */
LADLE_API ladle_dtype ladle_dtype_make(ladle_type_id id);
/* A DATETIME or DURATION with a unit (tz may be NULL). */
LADLE_API ladle_dtype ladle_dtype_temporal(ladle_type_id id, ladle_time_unit unit, const char *tz);
/* A DECIMAL of precision 1..38 and scale 0..precision. */
LADLE_API ladle_dtype ladle_dtype_decimal(int precision, int scale);
/* A LIST of `child`, one of the types without parameters (BOOL, integers,
 * floats, STRING, BINARY, DATE, TIME); Null-typed when the child is not one. */
LADLE_API ladle_dtype ladle_dtype_list(ladle_type_id child);
/* Polars-style name ("i64", "str", "datetime[us, UTC]"); static or in `buf`. */
LADLE_API const char *ladle_dtype_name(ladle_dtype type, char *buf, size_t buf_len);
LADLE_API bool ladle_dtype_equal(ladle_dtype a, ladle_dtype b);

/* ------------------------------------------------- Arrow C Data Interface */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};
struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};
#endif
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *);
  void *private_data;
};
#endif

/* The Arrow C Device Data Interface: an array whose buffers lie on a device. */
#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE
typedef int32_t ArrowDeviceType;
#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
struct ArrowDeviceArray {
  struct ArrowArray array;
  int64_t device_id;
  ArrowDeviceType device_type;
  void *sync_event; /* NULL: the data is ready */
  int64_t reserved[3];
};
#endif

/* ------------------------------------------------------------------ DLPack */

#ifndef DLPACK_VERSION
/* The DLPack ABI (v0.8, unversioned DLManagedTensor), as in dmlc/dlpack. */
typedef struct {
  int32_t device_type; /* 1 = CPU, 2 = CUDA */
  int32_t device_id;
} DLDevice;
typedef struct {
  uint8_t code; /* 0 int, 1 uint, 2 float, 6 bool */
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* NULL: compact row-major */
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
#endif

/* ------------------------------------------------------------- expressions */

typedef struct ladle_expr ladle_expr;

typedef enum ladle_binary_op {
  LADLE_OP_ADD,
  LADLE_OP_SUB,
  LADLE_OP_MUL,
  LADLE_OP_TRUE_DIV,  /* `/`: always a float */
  LADLE_OP_FLOOR_DIV, /* `//`: floors toward -inf; integer x // 0 is null */
  LADLE_OP_MOD,       /* `%`: sign of the divisor; integer x % 0 is null */
  LADLE_OP_EQ,
  LADLE_OP_NE,
  LADLE_OP_LT,
  LADLE_OP_LE,
  LADLE_OP_GT,
  LADLE_OP_GE,
  LADLE_OP_EQ_MISSING, /* eq_missing: null == null is true */
  LADLE_OP_NE_MISSING,
  LADLE_OP_AND, /* Kleene */
  LADLE_OP_OR,  /* Kleene */
  LADLE_OP_XOR,
  LADLE_OP_COUNT_
} ladle_binary_op;

/* Scalar functions. The number of arguments and the options each one reads are
 * listed next to it; `args[0]` is the input. */
typedef enum ladle_func {
  LADLE_FN_NOT,             /* 1 */
  LADLE_FN_NEG,             /* 1 */
  LADLE_FN_ABS,             /* 1 */
  LADLE_FN_IS_NULL,         /* 1 */
  LADLE_FN_IS_NOT_NULL,     /* 1 */
  LADLE_FN_IS_NAN,          /* 1 */
  LADLE_FN_IS_NOT_NAN,      /* 1 */
  LADLE_FN_FILL_NULL,       /* 2: input, value */
  LADLE_FN_FILL_NAN,        /* 2: input, value */
  LADLE_FN_IS_IN,           /* 2: input, values (a column or a literal list via union) */
  LADLE_FN_IS_BETWEEN,      /* 3: input, lower, upper; opts.closed */
  LADLE_FN_CLIP,            /* 3: input, lower, upper (either may be a null literal) */
  LADLE_FN_ROUND,           /* 1; opts.i64 = decimals */
  LADLE_FN_FLOOR,           /* 1 */
  LADLE_FN_CEIL,            /* 1 */
  LADLE_FN_SQRT,            /* 1 */
  LADLE_FN_LOG,             /* 1; opts.f64 = base (0 means e) */
  LADLE_FN_EXP,             /* 1 */
  LADLE_FN_POW,             /* 2: base, exponent */
  LADLE_FN_HASH,            /* 1; opts.u64 = seed; ladle's own hash, a UInt64 */
  LADLE_FN_STR_LEN_BYTES,   /* 1 */
  LADLE_FN_STR_LEN_CHARS,   /* 1 */
  LADLE_FN_STR_CONTAINS,    /* 1; opts.str = pattern, opts.literal = not a regex */
  LADLE_FN_STR_STARTS_WITH, /* 1; opts.str */
  LADLE_FN_STR_ENDS_WITH,   /* 1; opts.str */
  LADLE_FN_STR_TO_UPPER,    /* 1 */
  LADLE_FN_STR_TO_LOWER,    /* 1 */
  LADLE_FN_STR_SLICE,       /* 1; opts.i64 = offset (chars, may be <0),
                               opts.i64b = length (<0: to the end) */
  LADLE_FN_STR_STRIP_CHARS, /* 1; opts.str = characters, NULL for whitespace */
  LADLE_FN_STR_CONCAT,      /* n >= 1: horizontal concat; opts.str = separator; opts.i64 = 1:
                               null inputs are left out (else any null gives null) */
  LADLE_FN_DT_YEAR,         /* 1 */
  LADLE_FN_DT_MONTH,
  LADLE_FN_DT_DAY,
  LADLE_FN_DT_HOUR,
  LADLE_FN_DT_MINUTE,
  LADLE_FN_DT_SECOND,
  LADLE_FN_DT_WEEKDAY,     /* ISO: Monday 1 .. Sunday 7 */
  LADLE_FN_DT_ORDINAL_DAY, /* 1 .. 366 */
  LADLE_FN_DT_TRUNCATE,    /* 1; opts.str = "1d" or "1mo" */
  LADLE_FN_LOG1P,          /* 1: ln(1 + x), exact near 0 */
  LADLE_FN_STR_SPLIT,      /* 1; opts.str = separator ("": into characters): a LIST of STRING */
  LADLE_FN_LIST_LEN,       /* 1: a LIST's element count, UInt32 */
  LADLE_FN_LIST_SLICE,     /* 1; opts.i64 = offset (< 0: from the end), opts.i64b = length
                              (< 0: to the end), Polars' slice window per list */
  LADLE_FN_COUNT_
} ladle_func;

typedef enum ladle_closed {
  LADLE_CLOSED_BOTH = 0,
  LADLE_CLOSED_LEFT,
  LADLE_CLOSED_RIGHT,
  LADLE_CLOSED_NONE
} ladle_closed;

typedef struct ladle_func_opts {
  int64_t i64;     /* see ladle_func */
  int64_t i64b;    /* see ladle_func */
  uint64_t u64;    /* hash seed */
  double f64;      /* log base */
  const char *str; /* pattern, prefix, characters; copied by the builder */
  bool literal;    /* STR_CONTAINS: pattern is a literal string */
  ladle_closed closed;
} ladle_func_opts;

typedef enum ladle_agg_op {
  LADLE_AGG_SUM,
  LADLE_AGG_MEAN,
  LADLE_AGG_MIN,
  LADLE_AGG_MAX,
  LADLE_AGG_COUNT, /* non-null values */
  LADLE_AGG_NULL_COUNT,
  LADLE_AGG_LEN,      /* all values, nulls included */
  LADLE_AGG_N_UNIQUE, /* null counts as a value, as in Polars */
  LADLE_AGG_FIRST,
  LADLE_AGG_LAST,
  LADLE_AGG_STD, /* opts.ddof */
  LADLE_AGG_VAR, /* opts.ddof */
  LADLE_AGG_MEDIAN,
  LADLE_AGG_QUANTILE, /* opts.quantile, opts.interpolation */
  LADLE_AGG_ARG_MIN,
  LADLE_AGG_ARG_MAX,
  LADLE_AGG_ANY,
  LADLE_AGG_ALL,
  LADLE_AGG_IMPLODE, /* the group's values as one LIST, in row order (a flat type) */
  LADLE_AGG_COUNT_
} ladle_agg_op;

typedef enum ladle_interpolation {
  LADLE_INTERP_NEAREST = 0,
  LADLE_INTERP_LOWER,
  LADLE_INTERP_HIGHER,
  LADLE_INTERP_MIDPOINT,
  LADLE_INTERP_LINEAR,
  LADLE_INTERP_EQUIPROBABLE
} ladle_interpolation;

typedef struct ladle_agg_opts {
  uint8_t ddof;                      /* STD, VAR */
  double quantile;                   /* QUANTILE, in [0, 1] */
  ladle_interpolation interpolation; /* QUANTILE */
  /* MEAN: sum in Polars' order, bit for bit: over all rows, its pairwise float
   * sum; per group, a compensated (Kahan) sum in row order. Temporal means need
   * it: their float result is cut to an integer tick, where a last-bit
   * difference shows. */
  bool polars_order;
} ladle_agg_opts;

typedef enum ladle_rank_method {
  LADLE_RANK_AVERAGE = 0,
  LADLE_RANK_MIN,
  LADLE_RANK_MAX,
  LADLE_RANK_DENSE,
  LADLE_RANK_ORDINAL
} ladle_rank_method;

/* Running functions over the rows in order (Polars' cum_* and shift). */
typedef enum ladle_cum_op {
  LADLE_CUM_SUM = 0, /* Boolean and 8/16-bit integers sum as Polars does (UInt32, Int64) */
  LADLE_CUM_PROD,    /* integers multiply in Int64 (UInt64 in UInt64) */
  LADLE_CUM_MIN,
  LADLE_CUM_MAX,
  LADLE_CUM_COUNT, /* the non-null values so far (UInt32, never null) */
  LADLE_CUM_SHIFT  /* shift(n): row i takes row i - n; null where that is past an end */
} ladle_cum_op;

/* A column by name. */
LADLE_API ladle_expr *ladle_expr_col(const char *name);
/* Typed literals. `lit_int` takes any integer type id (value is range-checked by
 * the plan builder); `dyn` literals adopt the type of the other operand as
 * Polars' dynamic int/float literals do. */
LADLE_API ladle_expr *ladle_expr_lit_null(ladle_dtype type);
LADLE_API ladle_expr *ladle_expr_lit_bool(bool value);
LADLE_API ladle_expr *ladle_expr_lit_int(int64_t value, ladle_type_id id);
LADLE_API ladle_expr *ladle_expr_lit_uint(uint64_t value, ladle_type_id id);
/* An INT128 or UINT128 literal from its high and low 64 bits; NULL for another id. */
LADLE_API ladle_expr *ladle_expr_lit_int128(uint64_t hi, uint64_t lo, ladle_type_id id);
LADLE_API ladle_expr *ladle_expr_lit_float(double value, ladle_type_id id);
LADLE_API ladle_expr *ladle_expr_lit_dyn_int(int64_t value);
LADLE_API ladle_expr *ladle_expr_lit_dyn_float(double value);
LADLE_API ladle_expr *ladle_expr_lit_str(const char *value, size_t len);
/* DATE (days), DATETIME or DURATION (in type.unit). */
LADLE_API ladle_expr *ladle_expr_lit_temporal(int64_t value, ladle_dtype type);
/* A list of literals of one type, for is_in; consumes `items`. */
LADLE_API ladle_expr *ladle_expr_lit_series(size_t n, ladle_expr *const *items);

LADLE_API ladle_expr *ladle_expr_alias(ladle_expr *e, const char *name);
LADLE_API ladle_expr *ladle_expr_binary(ladle_binary_op op, ladle_expr *left, ladle_expr *right);
LADLE_API ladle_expr *ladle_expr_func(ladle_func fn, size_t nargs, ladle_expr *const *args,
                                      const ladle_func_opts *opts);
typedef enum ladle_cast_mode {
  LADLE_CAST_NON_STRICT = 0, /* a value that does not fit becomes null */
  LADLE_CAST_STRICT = 1,     /* a value that does not fit is an error */
  LADLE_CAST_WRAP = 2        /* integers wrap (two's complement), other misfits are null */
} ladle_cast_mode;
/* cast(to, strict) is cast_mode(to, strict ? STRICT : NON_STRICT). */
LADLE_API ladle_expr *ladle_expr_cast(ladle_expr *e, ladle_dtype to, bool strict);
LADLE_API ladle_expr *ladle_expr_cast_mode(ladle_expr *e, ladle_dtype to, ladle_cast_mode mode);
/* when(conds[0]).then(thens[0]).when(...)...otherwise(otherwise). */
LADLE_API ladle_expr *ladle_expr_when(size_t n, ladle_expr *const *conds, ladle_expr *const *thens,
                                      ladle_expr *otherwise);
LADLE_API ladle_expr *ladle_expr_agg(ladle_agg_op op, ladle_expr *e, const ladle_agg_opts *opts);
/* pl.len(): the number of rows (of the group). */
LADLE_API ladle_expr *ladle_expr_len(void);
/* rank(method, descending) — an elementwise-shaped, order-dependent function. */
LADLE_API ladle_expr *ladle_expr_rank(ladle_expr *e, ladle_rank_method method, bool descending);
/* e.cum_sum() and the other running functions (reverse: from the last row to
 * the first), within each window group under over(): a null row stays null and
 * is skipped, integers wrap, a float minimum or maximum skips NaN once a number
 * was seen. Not inside group_by().agg() (each group would give a list). */
LADLE_API ladle_expr *ladle_expr_cumulative(ladle_expr *e, ladle_cum_op op, bool reverse);
/* e.shift(n) (n < 0: shifted up), within each window group under over(). */
LADLE_API ladle_expr *ladle_expr_shift(ladle_expr *e, int64_t n);
/* e.over(partition_by...) */
LADLE_API ladle_expr *ladle_expr_over(ladle_expr *e, size_t n, ladle_expr *const *partition_by);
/* Expressions are refcounted: ref adds an owner, destroy drops one. */
LADLE_API ladle_expr *ladle_expr_ref(ladle_expr *e);
LADLE_API void ladle_expr_destroy(ladle_expr *e);

/* ------------------------------------------------------------------- plans */

typedef struct ladle_plan ladle_plan;
typedef struct ladle_table ladle_table;

typedef enum ladle_join_type {
  LADLE_JOIN_INNER = 0,
  LADLE_JOIN_LEFT,
  LADLE_JOIN_RIGHT,
  LADLE_JOIN_FULL,
  LADLE_JOIN_SEMI,
  LADLE_JOIN_ANTI,
  LADLE_JOIN_CROSS
} ladle_join_type;

/* The row order a join promises (Polars' maintain_order). NONE leaves it to
 * ladle: left rows in order with their right rows in order, except for RIGHT
 * joins, right rows in order with their left rows in order. LEFT and
 * LEFT_RIGHT order by the left row, then the right row; rows without a left
 * row come last. RIGHT and RIGHT_LEFT the same with the sides swapped. */
typedef enum ladle_join_order {
  LADLE_JOIN_ORDER_NONE = 0,
  LADLE_JOIN_ORDER_LEFT,
  LADLE_JOIN_ORDER_RIGHT,
  LADLE_JOIN_ORDER_LEFT_RIGHT,
  LADLE_JOIN_ORDER_RIGHT_LEFT
} ladle_join_order;

typedef struct ladle_join_opts {
  ladle_join_type how;
  bool nulls_equal;          /* null keys match each other */
  bool coalesce;             /* one key column (Polars' default for all but FULL) */
  const char *suffix;        /* for clashing right names; NULL means "_right" */
  const bool *coalesce_keys; /* per key, overrides `coalesce`; NULL: all follow it */
  ladle_join_order order;    /* the row order of the output */
} ladle_join_opts;

typedef enum ladle_keep {
  LADLE_KEEP_ANY = 0,
  LADLE_KEEP_FIRST,
  LADLE_KEEP_LAST,
  LADLE_KEEP_NONE
} ladle_keep;

/* In-memory scan of an Arrow stream (a struct array per batch). Consumes the
 * stream: its buffers are referenced, not copied, and released when the last
 * plan or result that uses them is destroyed. */
LADLE_API ladle_status ladle_plan_scan_arrow(struct ArrowArrayStream *stream, ladle_plan **out_plan,
                                             ladle_error *err);
/* The same, converting what needs converting (string views to offsets) with
 * up to `threads` threads (0: one per core). */
LADLE_API ladle_status ladle_plan_scan_arrow_threads(struct ArrowArrayStream *stream, int threads,
                                                     ladle_plan **out_plan, ladle_error *err);
typedef struct ladle_engine ladle_engine;
/* An in-memory scan for `engine`: conversions run on its threads, and big
 * string-view columns' conversions are kept in the engine's cache across
 * scans of the same buffers (with a reference that keeps those buffers
 * alive), least recently used out first past LADLE_VIEW_CACHE_MB (default:
 * 1/16 of memory, at most 2 GiB; 0: off), until the engine is destroyed. */
LADLE_API ladle_status ladle_plan_scan_arrow_engine(struct ArrowArrayStream *stream,
                                                    ladle_engine *engine, ladle_plan **out_plan,
                                                    ladle_error *err);
/* An in-memory scan of ncols Arrow streams, one per column (each batch a piece
 * of the column, as a Polars Series exports itself without concatenating its
 * chunks), named `names`; chunks break where any column's pieces do (slices,
 * not copies). With an engine (or NULL: one thread, no cache) as
 * ladle_plan_scan_arrow_engine. Consumes every stream. */
LADLE_API ladle_status ladle_plan_scan_arrow_columns(struct ArrowArrayStream *streams, size_t ncols,
                                                     const char *const *names, ladle_engine *engine,
                                                     ladle_plan **out_plan, ladle_error *err);
/* Drops every conversion the engine keeps, and their references. */
LADLE_API void ladle_engine_view_cache_clear(ladle_engine *engine);
/* The kept conversions, the bytes they count, and how many scans used one. */
LADLE_API void ladle_engine_view_cache_stats(ladle_engine *engine, size_t *entries, size_t *bytes,
                                             uint64_t *hits);
/* How many view-only string columns (pieces) were made since the library was
 * loaded: a result's strings gathered as their input's views, or decoded from
 * Parquet as views. */
LADLE_API uint64_t ladle_view_only_columns(void);
/* A comparison `column op value` that every row the query keeps satisfies; the
 * scan skips row groups whose statistics show no row can (the query still filters
 * every row read). kind: 0 int64 (integers, Date days, Datetime ticks in the
 * column's unit), 1 double, 2 string. op: LT, LE, GT, GE or EQ. */
typedef struct ladle_pq_filter {
  const char *column;
  ladle_binary_op op;
  int kind;
  int64_t i64;
  double f64;
  const char *str;
  size_t str_len;
} ladle_pq_filter;

/* Parquet scan options; zero-initialised they read every column of every row. */
typedef struct ladle_parquet_opts {
  size_t n_columns;           /* 0: all columns */
  const char *const *columns; /* names to read, in output order */
  int64_t n_rows;             /* with n_rows_set: read at most this many rows */
  bool n_rows_set;
  size_t n_filters; /* row-group skipping by statistics */
  const ladle_pq_filter *filters;
  /* Multi-file policies (Polars' missing_columns / extra_columns): a selected
   * column that a later file lacks is all-null there instead of an error; a
   * column of a later file that the first file lacks is an error instead of
   * being ignored. The first file's schema is the dataset's. */
  bool insert_missing_columns;
  bool raise_on_extra_columns;
  /* With units_set, only the row groups numbered [unit_begin, unit_end), the
   * files' row groups numbered in order, file after file, from 0 (a loader's
   * own deal of row groups); n_rows then counts from the first of them, and
   * several ranks share these. An end past the last row group is an error. */
  bool units_set;
  size_t unit_begin, unit_end;
} ladle_parquet_opts;

/* A scan of Parquet files (paths are files; all must have the selected columns
 * with the same types, unless insert_missing_columns). Footers are read here, so a missing file, a
 * corrupt footer or an unsupported column is an error now, naming the file and column; pages are
 * read and decoded when the plan runs, in parallel over (file, row group, column). */
LADLE_API ladle_status ladle_plan_scan_parquet(size_t n_paths, const char *const *paths,
                                               const ladle_parquet_opts *opts,
                                               ladle_plan **out_plan, ladle_error *err);
/* CSV scan options. Zero-initialise, then set what differs from the defaults in
 * ladle_csv_opts_default (comma, double quote, header, empty fields are null). */
typedef struct ladle_csv_opts {
  char separator;                 /* ',' */
  char quote;                     /* '"'; 0 for none */
  bool has_header;                /* true: names from the first record */
  int64_t skip_rows;              /* records skipped before the header (quotes respected,
                                     comment lines not counted) */
  int64_t skip_rows_after_header; /* records skipped after it, the same way */
  const char *comment_prefix;     /* lines starting with it are skipped; NULL none */
  size_t n_null_values;           /* fields equal to one of these are null */
  const char *const *null_values;
  bool missing_is_null;        /* empty unquoted fields are null (true) */
  bool truncate_ragged_lines;  /* extra fields are dropped instead of an error */
  bool ignore_errors;          /* unparsable fields become null instead of an error */
  bool try_parse_dates;        /* infer Date/Datetime from ISO text */
  int64_t infer_schema_length; /* rows used for type inference; <= 0: all */
  int64_t n_rows;              /* with n_rows_set: read at most this many rows */
  bool n_rows_set;
  size_t n_columns;                      /* 0: every column of the file */
  const char *const *columns;            /* names to read, in output order */
  const ladle_dtype *types;              /* their types (NULL: inferred) */
  int64_t skip_lines;                    /* raw lines ('\n') skipped first, quotes ignored */
  size_t n_named_nulls;                  /* per-column null values: a field of column */
  const char *const *named_null_columns; /* named_null_columns[i] that equals */
  const char *const *named_null_values;  /* named_null_values[i] is null */
  bool decimal_comma;                    /* floats written "1,5" (the separator is not ',') */
  /* Multi-file policies (Polars' missing_columns='insert' / extra_columns=
   * 'ignore'): a selected column that a file lacks is all-null there instead
   * of an error; a column of a later file that the first file lacks is ignored
   * instead of an error. Without either, every file has the first's width. */
  bool insert_missing_columns;
  bool ignore_extra_columns;
  const char *path_column; /* non-NULL: a last String column of this name holds
                              each row's file path (include_file_paths) */
  bool no_columns;         /* read no column (n_columns 0 reads every one): the
                              records are counted, no field is parsed */
} ladle_csv_opts;

LADLE_API ladle_csv_opts ladle_csv_opts_default(void);

/* A scan of CSV files (plain, gzip or zstd, detected by magic bytes), all with the
 * same columns. The first file is read here to find the columns and infer types;
 * a missing file, a bad option or a named column the file lacks is an error now. */
LADLE_API ladle_status ladle_plan_scan_csv(size_t n_paths, const char *const *paths,
                                           const ladle_csv_opts *opts, ladle_plan **out_plan,
                                           ladle_error *err);

/* In-memory scan of a ladle table (takes a reference; the caller keeps its own). */
LADLE_API ladle_status ladle_plan_scan_table(ladle_table *table, ladle_plan **out_plan,
                                             ladle_error *err);
LADLE_API ladle_status ladle_plan_filter(ladle_plan *input, ladle_expr *predicate,
                                         ladle_plan **out_plan, ladle_error *err);
LADLE_API ladle_status ladle_plan_select(ladle_plan *input, size_t n, ladle_expr *const *exprs,
                                         ladle_plan **out_plan, ladle_error *err);
LADLE_API ladle_status ladle_plan_with_columns(ladle_plan *input, size_t n,
                                               ladle_expr *const *exprs, ladle_plan **out_plan,
                                               ladle_error *err);
/* group_by(keys).agg(aggs). Keys may be expressions (named by their output name). */
LADLE_API ladle_status ladle_plan_group_by(ladle_plan *input, size_t n_keys,
                                           ladle_expr *const *keys, size_t n_aggs,
                                           ladle_expr *const *aggs, bool maintain_order,
                                           ladle_plan **out_plan, ladle_error *err);
/* One row of aggregates over the whole input (select of aggregations only). */
LADLE_API ladle_status ladle_plan_reduce(ladle_plan *input, size_t n, ladle_expr *const *exprs,
                                         ladle_plan **out_plan, ladle_error *err);
LADLE_API ladle_status ladle_plan_join(ladle_plan *left, ladle_plan *right, size_t n_keys,
                                       ladle_expr *const *left_on, ladle_expr *const *right_on,
                                       const ladle_join_opts *opts, ladle_plan **out_plan,
                                       ladle_error *err);
/* sort(by, descending, nulls_last); limit < 0 means no limit (top-k otherwise). */
LADLE_API ladle_status ladle_plan_sort(ladle_plan *input, size_t n_keys, ladle_expr *const *by,
                                       const bool *descending, const bool *nulls_last,
                                       bool maintain_order, int64_t limit, ladle_plan **out_plan,
                                       ladle_error *err);
/* slice(offset, length): a negative offset counts from the end; length < 0 means
 * to the end. head(n) is slice(0, n), tail(n) is slice(-n, n). */
LADLE_API ladle_status ladle_plan_slice(ladle_plan *input, int64_t offset, int64_t length,
                                        ladle_plan **out_plan, ladle_error *err);
/* unique(subset, keep, maintain_order); subset NULL/0 means all columns. */
LADLE_API ladle_status ladle_plan_distinct(ladle_plan *input, size_t n_subset,
                                           const char *const *subset, ladle_keep keep,
                                           bool maintain_order, ladle_plan **out_plan,
                                           ladle_error *err);
/* Vertical concat; schemas must match by name and type. */
LADLE_API ladle_status ladle_plan_union(size_t n, ladle_plan *const *inputs, ladle_plan **out_plan,
                                        ladle_error *err);
/* Horizontal concat; names must be distinct; shorter inputs are padded with nulls
 * (Polars' how="horizontal_extend"). */
LADLE_API ladle_status ladle_plan_hconcat(size_t n, ladle_plan *const *inputs,
                                          ladle_plan **out_plan, ladle_error *err);
/* Horizontal concat of inputs that must have the same height (Polars'
 * how="horizontal"); different heights fail at execution with LADLE_ECOMPUTE
 * naming both heights. */
LADLE_API ladle_status ladle_plan_hconcat_strict(size_t n, ladle_plan *const *inputs,
                                                 ladle_plan **out_plan, ladle_error *err);
/* A shared subplan, evaluated once per execution however many parents use it.
 * Use ladle_plan_ref on the result to hand it to several parents. */
LADLE_API ladle_status ladle_plan_cache(ladle_plan *input, ladle_plan **out_plan, ladle_error *err);
LADLE_API ladle_status ladle_plan_rename(ladle_plan *input, size_t n, const char *const *old_names,
                                         const char *const *new_names, ladle_plan **out_plan,
                                         ladle_error *err);
LADLE_API ladle_status ladle_plan_drop(ladle_plan *input, size_t n, const char *const *names,
                                       ladle_plan **out_plan, ladle_error *err);
/* Prepends a UInt32 row index column counting from `offset`. */
LADLE_API ladle_status ladle_plan_row_index(ladle_plan *input, const char *name, int64_t offset,
                                            ladle_plan **out_plan, ladle_error *err);
/* The same as a UInt64 column (no 2^32-row bound: the positions of rows in a
 * job, for the order across ranks). */
LADLE_API ladle_status ladle_plan_row_index_u64(ladle_plan *input, const char *name, int64_t offset,
                                                ladle_plan **out_plan, ladle_error *err);

/* Unnests the LIST columns `names` (ncols >= 1, whose lists hold as many
 * elements row by row): a row per element, the other columns repeated.
 * A null list gives one row of nulls when keep_nulls, else none; an empty list
 * one row of nulls when empty_as_null, else none (Polars' explode). Lists of
 * different lengths on one row fail at execution with LADLE_ECOMPUTE. */
LADLE_API ladle_status ladle_plan_explode(ladle_plan *input, size_t ncols, const char *const *names,
                                          bool empty_as_null, bool keep_nulls,
                                          ladle_plan **out_plan, ladle_error *err);

/* The output schema of a plan node. Names stay valid while the plan lives. */
LADLE_API size_t ladle_plan_num_columns(const ladle_plan *plan);
LADLE_API const char *ladle_plan_column_name(const ladle_plan *plan, size_t i);
LADLE_API ladle_dtype ladle_plan_column_type(const ladle_plan *plan, size_t i);
/* Multi-line text of the plan. The caller frees *out_text with ladle_free. */
LADLE_API ladle_status ladle_plan_explain(const ladle_plan *plan, char **out_text,
                                          ladle_error *err);
LADLE_API ladle_plan *ladle_plan_ref(ladle_plan *plan);
LADLE_API void ladle_plan_destroy(ladle_plan *plan);
LADLE_API void ladle_free(void *p);

/* ------------------------------------------------------------------ engine */

typedef struct ladle_engine ladle_engine;
typedef struct ladle_result ladle_result;

typedef enum ladle_device_type {
  LADLE_DEVICE_CPU = 1, /* same numbers as DLPack's kDLCPU / kDLCUDA */
  LADLE_DEVICE_CUDA = 2
} ladle_device_type;

/* ------------------------------------------------------------ communicators */

/* A communicator: the ranks of an SPMD job, every one running the same
 * queries in the same order (src/dist/comm.h is its table). An engine
 * created with one (ladle_engine_opts.comm) deals its scans out across the
 * ranks and exchanges rows for group-by, join, sort and distinct. */
typedef struct ladle_comm ladle_comm;

/* One rank: a process that is a job by itself. */
LADLE_API ladle_status ladle_comm_create_self(ladle_comm **out_comm, ladle_error *err);
/* MPI's world: loads ladle's MPI library (libladle_mpi.so, beside libladle or
 * the Python module, or LADLE_MPI_LIB) and through it the MPI library it was
 * built against, then initialises MPI (MPI_Init_thread) unless the caller
 * already has. A collective that does not complete within timeout_s seconds
 * (0: 600) fails on this rank with LADLE_ECOMM naming the operation, and the
 * communicator refuses everything after it (a rank died, or ranks ran
 * different queries). LADLE_ENOTSUP when the library or MPI cannot be
 * loaded, with the reason. MPI is finalised at process exit, not here. */
LADLE_API ladle_status ladle_comm_create_mpi(double timeout_s, ladle_comm **out_comm,
                                             ladle_error *err);

/* Collectives a caller supplies (the Python module's over torch.distributed,
 * or any transport an embedder has), for ladle_comm_create_callbacks. Buffers
 * are on the host; counts and displacements are in bytes, one per rank; every
 * rank calls every collective in the same order with matching sizes. Each
 * callback returns 0 when done, or nonzero after writing a NUL-terminated
 * message of at most cap bytes into msg. Callbacks are called from whatever
 * thread runs the query, one at a time per communicator. */
typedef struct ladle_comm_callbacks {
  void *user; /* passed to every callback; release(user) on ladle_comm_destroy */
  /* rank r's in (counts[r] bytes) into out at displs[r], on every rank */
  int (*allgatherv)(void *user, const void *in, const size_t *counts, const size_t *displs,
                    void *out, char *msg, size_t cap);
  /* send_counts[r] bytes of in at send_displs[r] to rank r; recv_counts[r]
   * bytes from rank r into out at recv_displs[r] */
  int (*alltoallv)(void *user, const void *in, const size_t *send_counts, const size_t *send_displs,
                   void *out, const size_t *recv_counts, const size_t *recv_displs, char *msg,
                   size_t cap);
  /* root's `bytes` bytes of buf into every rank's buf */
  int (*bcast)(void *user, void *buf, size_t bytes, int root, char *msg, size_t cap);
  /* out[i] = op over the ranks of in[i], i < n (in == out allowed); type: 0
   * int64, 1 uint64, 2 float64; op: 0 sum, 1 min, 2 max */
  int (*allreduce)(void *user, const void *in, void *out, size_t n, int type, int op, char *msg,
                   size_t cap);
  int (*barrier)(void *user, char *msg, size_t cap);
  void (*release)(void *user); /* NULL: nothing to release */
  const char *name; /* what ladle_comm_name answers (copied; < 32 bytes); NULL: "callbacks" */
  /* This rank gives up on the query (its own failure, `why`): tell the other
   * ranks, so that a collective they wait in for this rank fails at once
   * rather than at the transport's timeout. Optional (NULL: nobody is told);
   * after it, and after any callback's failure, the communicator refuses
   * everything. */
  void (*fail)(void *user, const char *why);
  /* After a query failed on this rank (its own failure, told through fail, or
   * another rank's, or a collective that failed because of one): make the
   * transport usable again for the next query, leaving behind what the failed
   * query had in flight. Every rank calls it once per failed query, in the
   * same order, so it may be collective. 0: the communicator goes on; nonzero
   * (with msg): it refuses everything after. Optional (NULL: the first failure
   * ends the communicator). Appended last: a table that zeroes the fields it
   * does not name keeps working. */
  int (*recover)(void *user, char *msg, size_t cap);
} ladle_comm_callbacks;

/* A communicator of `size` ranks, this one `rank`, whose collectives are cb's
 * (copied; allgather is made of allgatherv). A callback's failure fails the
 * collective with LADLE_ECOMM "rank R of N: <name> <operation>: <message>"
 * and the communicator refuses everything after it, until cb->recover (where
 * given) succeeds at the failed query's end. There is no timeout but
 * the callbacks' own. LADLE_EINVAL for a missing callback or a rank outside
 * 0 .. size - 1; on any failure *out_comm is NULL and release is not called. */
LADLE_API ladle_status ladle_comm_create_callbacks(const ladle_comm_callbacks *cb, int rank,
                                                   int size, ladle_comm **out_comm,
                                                   ladle_error *err);
LADLE_API int ladle_comm_rank(const ladle_comm *comm);
LADLE_API int ladle_comm_size(const ladle_comm *comm);
/* "self", "mpi", or a callbacks communicator's name */
LADLE_API const char *ladle_comm_name(const ladle_comm *comm);
LADLE_API void ladle_comm_destroy(ladle_comm *comm);

typedef struct ladle_engine_opts {
  ladle_device_type device; /* 0 means CPU */
  int device_id;
  int threads;          /* 0: one per core; more than the cores this process may run on
                           are capped to them; < 0 is LADLE_EINVAL */
  int64_t morsel_rows;  /* rows per partition of in-flight tables; 0: 65536 */
  int64_t memory_limit; /* bytes of buffers and scratch the engine may hold at once, results
                           it handed out and still alive included; past it an allocation
                           fails with LADLE_ENOMEM naming the sizes; 0: no limit. A CUDA
                           engine: bytes of device memory (its host side has none) */
  ladle_comm *comm;     /* the job's ranks (borrowed: it outlives the engine); NULL: one */
} ladle_engine_opts;

LADLE_API ladle_status ladle_engine_create(const ladle_engine_opts *opts, ladle_engine **out_engine,
                                           ladle_error *err);
LADLE_API void ladle_engine_destroy(ladle_engine *engine);
/* This rank's query failed before it reached the engine (a front end's own
 * error: a plan it could not translate, on this rank alone). The query counts
 * as run (the next one's fingerprint agrees with the other ranks'), and where
 * the engine's communicator recovers, the other ranks are told (they may wait
 * for this one in the query's first collective, and fail naming it and why)
 * and the communicator recovers, as after a query that failed inside the
 * engine. Nothing is told on a communicator that does not recover (torch's
 * callbacks: such a failure is most often every rank's alike, and telling
 * would end it). LADLE_OK, or LADLE_ECOMM when the communicator cannot go on. */
LADLE_API ladle_status ladle_engine_give_up(ladle_engine *engine, const char *why,
                                            ladle_error *err);
LADLE_API int ladle_engine_threads(const ladle_engine *engine);
/* Counters since the engine was created (for tests and tuning). */
typedef struct ladle_engine_stats {
  int64_t row_groups_read;
  int64_t row_groups_skipped; /* by statistics */
  int64_t rows_transferred;   /* rows a join's keys dropped early (exec.c: predicate transfer) */
  int64_t memory_bytes;       /* held now through the engine's memory resource */
  int64_t memory_peak;        /* the most held at once */
  /* a GPU engine (else 0): its device memory held now and at most, the part
   * of it that keeps scanned columns for later queries, and how often a scan
   * found its column there or copied it */
  int64_t device_memory_bytes, device_memory_peak;
  int64_t device_cache_bytes, device_cache_hits, device_cache_misses;
  /* with several ranks: bytes this rank sent to the others in exchanges, and
   * the milliseconds its exchanges took (moving and waiting), through the
   * engine's communicator (every engine sharing it counts together) */
  int64_t exchange_bytes;
  double exchange_ms;
  /* Parquet column chunks whose filter terms the scan evaluated on the
   * chunk's dictionary, and those it evaluated row by row instead (a chunk
   * not wholly dictionary-encoded, or a column the file lacks) */
  int64_t dict_chunks, dict_chunks_rowwise;
  /* Parquet row groups decoded inside a pipeline, one at a time into its
   * operators, rather than read whole into a table first */
  int64_t row_groups_streamed;
  /* rows a partial group-by across ranks sent on as partial rows of their
   * own, ungrouped (their morsels had about as many groups as rows) */
  int64_t partial_rows_passed;
  /* Parquet column chunks decoded by several threads, each a run of its
   * pages (a scan of fewer row groups than its threads) */
  int64_t chunks_split;
} ladle_engine_stats;
LADLE_API ladle_engine_stats ladle_engine_get_stats(const ladle_engine *engine);
/* Runs a plan. The plan is not consumed and may be executed again. */
LADLE_API ladle_status ladle_engine_execute(ladle_engine *engine, const ladle_plan *plan,
                                            ladle_result **out_result, ladle_error *err);
/* How engine e would run plan: the logical plan's text, then the physical
 * plan (each node with the rewrites chosen for it and the run-time
 * conditions they keep), its pipelines (the nodes that run chunk by chunk
 * into a pipeline breaker, with no table in between) and its exchanges.
 * Free the text with ladle_free. */
LADLE_API ladle_status ladle_engine_explain(const ladle_engine *e, const ladle_plan *plan,
                                            char **out_text, ladle_error *err);
/* ladle_engine_explain as planned for `ranks` ranks (0: the engine's); with
 * more than one, the plan shows the EXCHANGE nodes between its steps and
 * whether the result is sharded or replicated. < 0 is LADLE_EINVAL. */
LADLE_API ladle_status ladle_engine_explain_ranks(const ladle_engine *e, const ladle_plan *plan,
                                                  int ranks, char **out_text, ladle_error *err);
/* ladle_engine_execute that stops soon after *cancel becomes nonzero (set by
 * another thread, for example on Ctrl-C), failing with LADLE_ECANCELED. The
 * flag is read between partitions and plan nodes; NULL never cancels. */
LADLE_API ladle_status ladle_engine_execute_cancellable(ladle_engine *engine,
                                                        const ladle_plan *plan, const int *cancel,
                                                        ladle_result **out_result,
                                                        ladle_error *err);

/* The device engine's queries (LADLE_DEVICE_CUDA) run on the GPU: a query
 * with a node or expression the GPU cannot run yet fails before anything
 * runs with LADLE_ENOTSUP and a message that starts "device 'cuda:N':" and
 * names the node and expression, and one that runs out of device memory
 * with LADLE_ENOMEM (the engine stays usable either way). This runs the plan
 * on the engine's host side instead (ladle's CPU backend, its threads): what
 * the Python engine does after such a failure, with a warning. On a CPU
 * engine it is ladle_engine_execute_cancellable. */
LADLE_API ladle_status ladle_engine_execute_host(ladle_engine *engine, const ladle_plan *plan,
                                                 const int *cancel, ladle_result **out_result,
                                                 ladle_error *err);
/* LADLE_DEVICE_CPU or LADLE_DEVICE_CUDA, and the device's ordinal. */
LADLE_API ladle_device_type ladle_engine_device(const ladle_engine *engine, int *device_id);
/* A CUDA device this process can use. */
typedef struct ladle_device_info {
  int id;               /* the ordinal ladle_engine_opts.device_id takes */
  char name[96];        /* "NVIDIA H200" */
  int64_t memory_bytes; /* total */
  int major, minor;     /* compute capability */
} ladle_device_info;
/* The CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies), up to
 * cap of them into out, their number into *count. Loads ladle's CUDA
 * library and initialises the CUDA driver on first use. LADLE_ENOTSUP when
 * the library cannot be loaded and LADLE_EDEVICE when there is no usable
 * driver or device, each with the reason (*count 0). */
LADLE_API ladle_status ladle_cuda_devices(ladle_device_info *out, size_t cap, size_t *count,
                                          ladle_error *err);
/* Whether ladle has initialised the CUDA driver in this process (a GPU
 * engine or ladle_cuda_devices): CUDA_VISIBLE_DEVICES no longer applies. */
LADLE_API bool ladle_cuda_initialized(void);
/* Whether the engine's queries run on the column kernels (a GPU engine's
 * always; a CPU engine's under LADLE_COLUMN_KERNELS=1, a testing switch):
 * then a query they cannot run fails with LADLE_ENOTSUP before it starts,
 * for the caller to run it with ladle_engine_execute_host. */
LADLE_API bool ladle_engine_columns(const ladle_engine *engine);

/* ------------------------------------------------------------------ result */

LADLE_API int64_t ladle_result_num_rows(const ladle_result *r);
/* Whether r is this rank's part of a result sharded over the ranks of an
 * SPMD job (each rank different rows); false when every rank holds the whole
 * result (replicated) or the job has one rank. */
LADLE_API bool ladle_result_sharded(const ladle_result *r);
/* The whole of a sharded result on every rank: every rank's rows in rank
 * order (rank 0's first). A collective: every rank of the engine's
 * communicator calls it for its part of the same result. A replicated result
 * or a one-rank job gives the same rows. *out_result is new (destroy it with
 * ladle_result_destroy); r is not consumed. */
LADLE_API ladle_status ladle_engine_allgather(ladle_engine *engine, const ladle_result *r,
                                              ladle_result **out_result, ladle_error *err);
/* The engine's communicator alone, for benchmarks: `iters` alltoallv calls in
 * which every rank sends `bytes` host bytes to every other rank (none to
 * itself, as an exchange sends none), between buffers of the exchange's kind
 * (scratch blocks, touched before the first call); *out_ms the median
 * milliseconds of one. A collective. */
LADLE_API ladle_status ladle_engine_bench_alltoall(ladle_engine *engine, size_t bytes, int iters,
                                                   double *out_ms, ladle_error *err);
LADLE_API size_t ladle_result_num_columns(const ladle_result *r);
LADLE_API const char *ladle_result_column_name(const ladle_result *r, size_t i);
LADLE_API ladle_dtype ladle_result_column_type(const ladle_result *r, size_t i);
/* The result's table (a new reference; release with ladle_table_release), or
 * NULL when memory runs out making it (a result can keep some string columns
 * as views only, for an export as views, until the table is asked for). */
LADLE_API ladle_table *ladle_result_table(const ladle_result *r);
/* An Arrow stream over the result's partitions (one struct array per partition).
 * Buffers are shared, not copied, except booleans (ladle keeps one byte per
 * value; Arrow wants bits). The stream stays valid after the result is gone. */
LADLE_API ladle_status ladle_result_export_stream(const ladle_result *r,
                                                  struct ArrowArrayStream *out, ladle_error *err);
/* The same with STRING columns as Arrow string views ("vu"), built over the
 * result's bytes (16 bytes per value; the strings are not copied): what Polars
 * holds, so that it takes them without converting each value. */
LADLE_API ladle_status ladle_result_export_stream_views(const ladle_result *r,
                                                        struct ArrowArrayStream *out,
                                                        ladle_error *err);
/* Column `column` as a one-dimensional DLPack tensor. Numeric and boolean
 * columns without nulls only (LADLE_ETYPE otherwise, naming the column). The
 * tensor shares the result's buffer when the column lies in one buffer (the
 * usual case) and holds its own reference, so it outlives the result; a column
 * spread over several buffers is first concatenated (one copy). The caller calls
 * (*out)->deleter(*out) when done (a DLPack consumer does this). */
LADLE_API ladle_status ladle_result_export_dlpack(const ladle_result *r, size_t column,
                                                  DLManagedTensor **out, ladle_error *err);
/* Where the result lives: a GPU engine's result on its device (LADLE_DEVICE_CUDA
 * and *device_id) when its columns were made there, on the host when the
 * plan finished there (a last sort placed on the host, one-row answers, a
 * run on the CPU backend); any other engine's on the host. Asking for it on the host (a table,
 * an Arrow stream, a Parquet file) copies it down once. */
LADLE_API ladle_device_type ladle_result_device(const ladle_result *r, int *device_id);
/* The result as one Arrow struct array (a field per column) on the result's
 * device, through the Arrow C Device Data Interface: buffers shared, not
 * copied, except Booleans (packed to bits on the device) and a host
 * result's partitions (concatenated). sync_event is NULL: the data is ready
 * when this returns. The array holds its own references. */
LADLE_API ladle_status ladle_result_export_device_array(const ladle_result *r,
                                                        struct ArrowSchema *schema,
                                                        struct ArrowDeviceArray *out,
                                                        ladle_error *err);
/* A scan of a result of ladle's (res.lazy() chained into another query): on
 * the result's device, without copies, for an engine of that device; the
 * result's host copy (made once) for any other. The plan keeps its own
 * references: the result may be destroyed before it runs. */
LADLE_API ladle_status ladle_plan_scan_result(const ladle_result *r, ladle_engine *eng,
                                              ladle_plan **out, ladle_error *err);
/* ladle_result_export_dlpack for a consumer running on `stream` of the
 * result's device (for CUDA a cudaStream_t; DLPack's 1 and 2 are the legacy
 * and the per-thread default streams): with sync, the consumer's stream
 * waits for the kernels that made the result, and the tensor's buffer is
 * freed, when the consumer calls the deleter, after what that stream has
 * queued by then. A device result's column comes as a device tensor; when
 * the engine still shares its buffer (a column kept from a scan), the tensor
 * gets a copy on the device. ladle_result_export_dlpack is this with the
 * legacy default stream. */
LADLE_API ladle_status ladle_result_export_dlpack_on(const ladle_result *r, size_t column,
                                                     void *stream, bool sync, DLManagedTensor **out,
                                                     ladle_error *err);
LADLE_API void ladle_result_destroy(ladle_result *r);

typedef struct ladle_parquet_write_opts {
  int codec;              /* Parquet codec id: 0 none, 1 snappy, 2 gzip, 6 zstd */
  int compression_level;  /* 0: the codec's default */
  int64_t row_group_size; /* rows per row group; <= 0: 262144 */
  bool dictionary;        /* dictionary-encode columns with few distinct values */
  bool statistics;        /* min, max and null_count per column chunk */
} ladle_parquet_write_opts;

/* Writes the result to a Parquet file (every column OPTIONAL; data pages v1). On
 * failure the partial file is removed. */
LADLE_API ladle_status ladle_result_write_parquet(const ladle_result *r, const char *path,
                                                  const ladle_parquet_write_opts *opts,
                                                  ladle_error *err);

/* ------------------------------------------------------------------ tables */

/* Tables are refcounted and immutable once built. */
LADLE_API ladle_table *ladle_table_ref(ladle_table *t);
LADLE_API void ladle_table_release(ladle_table *t);
LADLE_API int64_t ladle_table_num_rows(const ladle_table *t);
LADLE_API size_t ladle_table_num_columns(const ladle_table *t);

/* A table built column by column from host arrays, for C callers and tests.
 * Values are copied. `validity` is one byte per row (nonzero = valid) or NULL.
 * Strings: `values` is `const char *const *` (NULL entries are null). Booleans:
 * one byte per value. */
typedef struct ladle_table_builder ladle_table_builder;
LADLE_API ladle_status ladle_table_builder_create(ladle_table_builder **out, ladle_error *err);
LADLE_API ladle_status ladle_table_builder_add(ladle_table_builder *b, const char *name,
                                               ladle_dtype type, int64_t length, const void *values,
                                               const uint8_t *validity, ladle_error *err);
/* Finishes the table (partitioned into `morsel_rows`-row chunks, 0 = one) and
 * destroys the builder. */
LADLE_API ladle_status ladle_table_builder_finish(ladle_table_builder *b, int64_t morsel_rows,
                                                  ladle_table **out_table, ladle_error *err);
LADLE_API void ladle_table_builder_destroy(ladle_table_builder *b);

#ifdef __cplusplus
}
#endif
#endif /* LADLE_H */
