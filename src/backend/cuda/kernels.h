/* kernels.h — the C launchers of the CUDA backend's device code (kernels.cu).
 * Pointers are device pointers; every launcher enqueues on `stream` and
 * returns the first CUDA error. */
#ifndef LADLE_CUDA_KERNELS_H
#define LADLE_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Stream-ordered scratch memory (the engine's device resource). */
typedef struct ldc_alloc {
  void *(*alloc)(void *ctx, size_t size);
  void (*free)(void *ctx, void *p, size_t size);
  void *ctx;
} ldc_alloc;

/* Numeric element kinds of a reduction. */
typedef enum ldc_num {
  LDC_U8,
  LDC_I8,
  LDC_I16,
  LDC_U16,
  LDC_I32,
  LDC_U32,
  LDC_I64,
  LDC_U64,
  LDC_F32,
  LDC_F64
} ldc_num;

/* Blocks of a sum's first pass: its partials need LDC_SUM_BLOCKS * 8 bytes. */
#define LDC_SUM_BLOCKS 1024

/* The rows (ascending) where mask[i] != 0 and validity bit i is set (NULL:
 * all valid) into out_idx; their count into *d_count. */
cudaError_t ldc_select(const uint8_t *mask, const uint8_t *validity, int64_t n, int64_t *out_idx,
                       int64_t *d_count, const ldc_alloc *scratch, cudaStream_t stream);
/* out[i] = src[idx[i]] for elements of `width` bytes (1, 2, 4 or 8); a null or
 * negative index or a null source row is a null row. out_valid (whole 32-bit
 * words; NULL: not written) gets the validity, *d_nulls the count of nulls. */
cudaError_t ldc_take(int width, const void *src, const uint8_t *src_valid, const int64_t *idx,
                     const uint8_t *idx_valid, int64_t n, void *out, uint32_t *out_valid,
                     unsigned long long *d_nulls, cudaStream_t stream);
/* Boolean bytes v[0..n) as Arrow's bits, LSB first, into bits (whole bytes:
 * (n + 7) / 8 of them, the last one's high bits zero). */
cudaError_t ldc_pack_bits(const uint8_t *v, int64_t n, uint8_t *bits, cudaStream_t stream);
/* n values start, start + 1, ... of `width` bytes (4 or 8; two's complement
 * makes signed and unsigned the same bits) into out. */
cudaError_t ldc_sequence(int width, int64_t start, int64_t n, void *out, cudaStream_t stream);
/* Strings, by two launchers with an allocation between them: the offsets of
 * the rows src[idx[i]] into out_off (n + 1 entries, from 0; out_off[n] is
 * the bytes they need), their validity and null count as ldc_take; then
 * their bytes into out_chars. */
cudaError_t ldc_take_string_offsets(const int64_t *off, const uint8_t *src_valid,
                                    const int64_t *idx, const uint8_t *idx_valid, int64_t n,
                                    int64_t *out_off, uint32_t *out_valid,
                                    unsigned long long *d_nulls, const ldc_alloc *scratch,
                                    cudaStream_t stream);
cudaError_t ldc_take_string_chars(const int64_t *src_off, const char *src_chars, const int64_t *idx,
                                  int64_t n, const int64_t *out_off, char *out_chars,
                                  cudaStream_t stream);
/* Lists: each output row's element indices into the source's elements (the
 * output offsets from ldc_take_string_offsets over the list's offsets). */
cudaError_t ldc_list_child_index(const int64_t *src_off, const int64_t *idx, int64_t n,
                                 const int64_t *out_off, int64_t *eidx, cudaStream_t stream);
/* The sum of the valid values of v into *acc: a wrapping uint64 for integers,
 * a double for floats. part: LDC_SUM_BLOCKS accumulators of scratch. */
cudaError_t ldc_sum(ldc_num kind, const void *v, const uint8_t *valid, int64_t n, void *acc,
                    void *part, cudaStream_t stream);

/* Elementwise operations of ldc_binary. */
typedef enum ldc_op {
  LDC_EQ,
  LDC_NE,
  LDC_LT,
  LDC_LE,
  LDC_GT,
  LDC_GE, /* the comparisons: Boolean bytes out, NaN equal to NaN and above numbers */
  LDC_ADD,
  LDC_SUB,
  LDC_NEG_SUB, /* -(b - a): one float minus many, as Polars computes it */
  LDC_MUL,     /* integers wrap */
  LDC_AND,
  LDC_OR,        /* Kleene, over Boolean bytes (kind ignored) */
  LDC_DIV,       /* floats */
  LDC_DIV_RECIP, /* many floats by one: times its reciprocal, as Polars divides */
  LDC_MOD,       /* integers: the floored remainder (the divisor's sign), as Polars */
  LDC_FLOOR_DIV  /* integers: the floored quotient; both null where the divisor is 0 */
} ldc_op;

/* out[i] = a op b at row i, both of element kind `kind`; a1 (b1): that side
 * is one value, row 0 standing for every row. Validity as ldc_take (both
 * sides valid; Kleene's rules for AND/OR). */
cudaError_t ldc_binary(ldc_num kind, int op, const void *a, const uint8_t *av, bool a1,
                       const void *b, const uint8_t *bv, bool b1, int64_t n, void *out,
                       uint32_t *out_valid, unsigned long long *d_nulls, cudaStream_t stream);

/* A row program (the table's ladle_program, lowered): instruction i makes
 * value i from a column (`col[a]`, `colv[a]` its validity), a constant or an
 * operation of two earlier values; all values are held as 64-bit slots of
 * their kind's bits (a Boolean as LDC_U8 0/1). */
#define LDC_PROG_MAX 64
#define LDC_PROG_INPUTS 32
enum { LDC_I_COL, LDC_I_CONST, LDC_I_OP, LDC_I_FUNC, LDC_I_CAST, LDC_I_WHERE, LDC_I_IF };
/* LDC_I_FUNC's functions of value a (fill_null: and b) */
enum {
  LDC_F_NOT,
  LDC_F_NEG,
  LDC_F_ABS,
  LDC_F_IS_NULL,
  LDC_F_IS_NOT_NULL,
  LDC_F_IS_NAN,
  LDC_F_IS_NOT_NAN,
  LDC_F_FILL_NULL,
  /* of a Date (days): its calendar fields (null outside Polars' calendar) */
  LDC_F_YEAR,        /* Int32 */
  LDC_F_MONTH,       /* Int8 */
  LDC_F_DAY,         /* Int8 */
  LDC_F_WEEKDAY,     /* Int8, ISO: Monday 1 */
  LDC_F_ORDINAL_DAY, /* Int16 */
  LDC_F_SQRT         /* of a float, in its type (correctly rounded, as the host's) */
};
typedef struct ldc_ins {
  uint8_t code; /* LDC_I_* */
  uint8_t kind; /* COL, CONST: the value's ldc_num; OP, FUNC, CAST: the operands' */
  uint8_t op;   /* OP: an ldc_op (LDC_AND/LDC_OR over Boolean values); FUNC: an
                   LDC_F_*; CAST: the ldc_num cast to */
  uint8_t a, b; /* OP: operand values; COL: the input */
  uint8_t c;    /* IF: the value where a is not true (b where it is) */
  uint8_t cvalid;
  uint64_t cbits; /* CONST */
} ldc_ins;
typedef struct ldc_prog {
  int n;
  ldc_ins ins[LDC_PROG_MAX];
  const void *col[LDC_PROG_INPUTS];
  const uint8_t *colv[LDC_PROG_INPUTS];
} ldc_prog;
/* The last instruction's value for rows [0, n) into out (elements of kind
 * out_kind; a Boolean as bytes: LDC_U8), its validity as ldc_take. */
cudaError_t ldc_program(const ldc_prog *p, int out_kind, int64_t n, void *out, uint32_t *out_valid,
                        unsigned long long *d_nulls, cudaStream_t stream);

/* The sum of the program's valid values over rows [0, n) into *acc (as
 * ldc_sum: a wrapping uint64 for integers, a double for floats; kind: the
 * last instruction's), and their count added into *d_count; no column is
 * written. part: LDC_SUM_BLOCKS accumulators of scratch. */
cudaError_t ldc_program_sum(const ldc_prog *p, int kind, int64_t n, void *acc, void *part,
                            unsigned long long *d_count, cudaStream_t stream);

/* The min (max when is_max) of the valid values of v that are not NaN into
 * *out (a value of the element type), and into counts[0] and counts[1] the
 * numbers it was taken over and the valid values (NaN included): no number
 * and some valid values is NaN, no valid value is null. part: scratch of
 * LDC_EXTREME_PART_BYTES. */
#define LDC_EXTREME_PART_BYTES ((LDC_SUM_BLOCKS + 1) * 24)
cudaError_t ldc_extreme(ldc_num kind, bool is_max, const void *v, const uint8_t *valid, int64_t n,
                        void *out, unsigned long long *counts, void *part, cudaStream_t stream);

/* ---- group-by (groupby.cu) ---- */

/* Key columns of a group-by: per key its values, validity (NULL: all valid)
 * and how rows compare: `width` bytes of bits (1, 2, 4 or 8), `flt` 4 or 8
 * for a float of that width (NaN equal to NaN, -0.0 to 0.0), or width 0 for
 * a string (values: n + 1 offsets into chars). */
#define LDC_KEYS_MAX 16
typedef struct ldc_keys {
  int n;
  uint8_t width[LDC_KEYS_MAX];
  uint8_t flt[LDC_KEYS_MAX];
  const void *values[LDC_KEYS_MAX];
  const uint8_t *valid[LDC_KEYS_MAX];
  const char *chars[LDC_KEYS_MAX];
} ldc_keys;

/* The n rows sel[0..n) (ascending; sel NULL: rows 0..n) grouped by key (n <
 * 2^31 - 1): per position j its group into ids[j], groups numbered in the
 * order of their first rows; per group its first row into first (room for
 * n); their number into *d_ngroups. */
cudaError_t ldc_group_keys(const ldc_keys *k, const int64_t *sel, int64_t n, uint32_t *ids,
                           int64_t *first, int64_t *d_ngroups, const ldc_alloc *scratch,
                           cudaStream_t stream);
/* The hash table ldc_group_keys groups through, kept for a join's probe
 * (ldc_join_probe): per grouped position its hash; `cap` slots (a power of
 * two, ldc_gtable_cap), each -1 or the first position that claimed it, and
 * its group number (gid). */
typedef struct ldc_gtable {
  uint64_t *hash; /* n */
  int32_t *slots; /* cap */
  int32_t *gid;   /* cap */
  uint64_t cap;
} ldc_gtable;
uint64_t ldc_gtable_cap(int64_t n);
/* ldc_group_keys into table t (memory the caller owns). */
cudaError_t ldc_group_table(const ldc_keys *k, const int64_t *sel, int64_t n, const ldc_gtable *t,
                            uint32_t *ids, int64_t *first, int64_t *d_ngroups,
                            const ldc_alloc *scratch, cudaStream_t stream);
/* The rows (sel[j], or j) by group, stable: into rows (n entries), and
 * offsets (ngroups + 1), from ids of groups that all have rows. */
cudaError_t ldc_group_rows(const uint32_t *ids, const int64_t *sel, int64_t n, int64_t ngroups,
                           int64_t *rows, int64_t *offsets, const ldc_alloc *scratch,
                           cudaStream_t stream);

/* Per group, op of the program's valid values at its rows (rows/offsets of
 * ldc_group_rows) into out (ngroups values of out_width bytes) and
 * out_valid (whole words, zeroed here), nulls counted into *d_nulls:
 * SUM (floats in double, integers a wrapping uint64, cut to out_width),
 * MIN and MAX (NaN ignored unless nothing else), COUNT (UInt32), MEAN (in
 * double; out_width 4: Float32), LEN (p NULL: each group's rows, UInt32).
 * kind: the program's value's ldc_num. Floats are added in an order fixed
 * by the groups: tiles of a group's rows, then the tiles in order; with at
 * most LDC_FEW_GROUPS groups, fixed chunks of the rows in row order (ids:
 * each grouped row's group, sel: its row number, NULL: the row itself),
 * each thread its own accumulator per group, then trees over the threads and
 * the chunks: every column read once, in order. */
#define LDC_FEW_GROUPS 8
enum { LDC_G_SUM, LDC_G_MIN, LDC_G_MAX, LDC_G_COUNT, LDC_G_MEAN, LDC_G_LEN };
cudaError_t ldc_grouped_reduce(const ldc_prog *p, int kind, int op, int out_width,
                               const int64_t *rows, const int64_t *offsets, const uint32_t *ids,
                               const int64_t *sel, int64_t nrows, int64_t ngroups, void *out,
                               uint32_t *out_valid, unsigned long long *d_nulls,
                               const ldc_alloc *scratch, cudaStream_t stream);

/* ---- join (join.cu) ---- */

/* How a probe row's pairs are counted: INNER its matches; LEFT and FULL at
 * least one (-1 for no match); SEMI one when it matches; ANTI one when not. */
enum { LDC_J_INNER, LDC_J_LEFT, LDC_J_FULL, LDC_J_SEMI, LDC_J_ANTI };

/* Probes the build side's groups (table t of ldc_group_table over the build
 * keys `build`, nb rows, with sel NULL) with the np rows of keys `probe`
 * (the same types): per probe row its group or -1 into pgroup (a row with
 * a null key matches nothing unless nulls_equal), where its pairs start
 * into start (np + 1 entries: start[np] is the number of pairs), and for
 * FULL per group whether a probe row met it (hit, ngroups bytes), and per
 * build row whose group none met its place among those into brank (nb + 1
 * entries: brank[nb] is how many). offsets: ldc_group_rows'. */
cudaError_t ldc_join_probe(const ldc_keys *build, const ldc_gtable *t, const int64_t *offsets,
                           const uint32_t *bids, int64_t nb, int64_t ngroups, const ldc_keys *probe,
                           int64_t np, int how, bool nulls_equal, int32_t *pgroup, int64_t *start,
                           uint8_t *hit, int64_t *brank, const ldc_alloc *scratch,
                           cudaStream_t stream);
/* The pairs: per probe row in order, its row into pout and its matches'
 * build rows (ldc_group_rows' rows, ascending) into bout (NULL for SEMI and
 * ANTI), -1 for none; for FULL then the build rows no probe row met, with
 * pout -1, from start[np] on. */
cudaError_t ldc_join_emit(const int32_t *pgroup, const int64_t *start, int64_t np,
                          const int64_t *rows, const int64_t *offsets, int how, const uint8_t *hit,
                          const uint32_t *bids, const int64_t *brank, int64_t nb, int64_t *pout,
                          int64_t *bout, cudaStream_t stream);
/* A cross join's nl * nr pairs, left-major. */
cudaError_t ldc_cross_pairs(int64_t nl, int64_t nr, int64_t *left, int64_t *right,
                            cudaStream_t stream);

/* ---- strings (strings.cu) ---- */

/* ladle_str_op's values */
enum {
  LDC_STR_EQ,
  LDC_STR_NE,
  LDC_STR_LT,
  LDC_STR_LE,
  LDC_STR_GT,
  LDC_STR_GE,
  LDC_STR_STARTS_WITH,
  LDC_STR_ENDS_WITH,
  LDC_STR_CONTAINS,
  LDC_STR_CONTAINS_SEQ
};
/* out[i] = row i (offsets off, bytes chars) `op` the plen bytes at device
 * pointer pat, for i < n (0/1 bytes; validity is the caller's). */
cudaError_t ldc_str_match(int op, const int64_t *off, const char *chars, int64_t n, const char *pat,
                          int64_t plen, uint8_t *out, cudaStream_t stream);

/* out[i] = row i of a `op` row i of b (op EQ to GE), for i < n; their
 * validity (both valid) into out_valid (whole 32-bit words), the nulls
 * counted into *d_nulls. */
cudaError_t ldc_str_compare(int op, const int64_t *aoff, const char *achars, const uint8_t *av,
                            const int64_t *boff, const char *bchars, const uint8_t *bv, int64_t n,
                            uint8_t *out, uint32_t *out_valid, unsigned long long *d_nulls,
                            cudaStream_t stream);

/* ---- sort (sort.cu) ---- */

/* A sort key: its values (an ldc_num kind), validity, direction, where its
 * nulls go, and the bits its normalised value needs (64; fewer only when the
 * value fits: a radix pass per 8 bits). */
typedef struct ldc_sort_key {
  int kind;
  const void *values;
  const uint8_t *valid;
  bool has_nulls, desc, nulls_last;
  int bits;
} ldc_sort_key;

/* The stable permutation sorting rows [0, n) by the keys (the first most
 * significant) into perm (n entries), as the CPU's sort_indices orders. */
cudaError_t ldc_sort_perm(const ldc_sort_key *keys, int nkeys, int64_t n, int64_t *perm,
                          const ldc_alloc *scratch, cudaStream_t stream);

/* ---- partitions (partition.cu) ---- */

/* The partition hash's seed and null value (core.h's LADLE_PART_SEED and
 * LADLE_PART_NULL; backend_cuda.c checks they agree). */
#define LDC_PART_SEED 0x243f6a8885a308d3ULL
#define LDC_PART_NULL 0x13198a2e03707344ULL

/* Kinds of a partition key besides the ldc_num ones (integers, floats and
 * temporals as their physical values). */
enum {
  LDC_PK_BOOL = 32, /* bytes: 0/1 for the hash, the byte for the order */
  LDC_PK_STR,       /* STRING, BINARY: n + 1 offsets into chars */
  LDC_PK_B16,       /* DECIMAL, INT128, UINT128: 16 bytes, hashed as bytes */
  LDC_PK_NULL       /* a NULL column: every row null, nothing read */
};

/* A key column of a partition: its kind, values, validity (NULL: all
 * valid) and bytes; for a range partition its order and, for strings, its
 * splitter column's offsets and bytes (on the device). */
typedef struct ldc_pkey {
  int kind;
  const void *values;
  const uint8_t *valid;
  const char *chars;
  bool desc, nulls_last;
  const int64_t *soff;
  const char *schars;
} ldc_pkey;

/* Rows [0, n) of the nkeys keys (a host array) into nparts parts: by the
 * partition hash (core.h's ladle_part_step, bit for bit) when scls is NULL,
 * else by how many of the nparts - 1 splitter rows are at or below the row
 * in sort_indices' order: per key k and splitter p, scls[k * (nparts - 1) +
 * p] is its class (0: a null placed first, 1: a value, 2: a null placed
 * last) and scode the same slot's order code (sort.cu's normalised value,
 * inverted when descending; strings compare their bytes instead); both host
 * arrays. perm (n entries) gets the rows part by part, each part's rows in
 * order, and starts (nparts + 1 entries) where each part starts. n <
 * 2^31 - 1 unless nparts is 1. */
cudaError_t ldc_partition(const ldc_pkey *keys, int nkeys, const uint8_t *scls,
                          const uint64_t *scode, int64_t n, int nparts, int64_t *perm,
                          int64_t *starts, const ldc_alloc *scratch, cudaStream_t stream);

/* A Parquet page as parquet.cu reads it: backend.h's ladle_kpage, field for
 * field (backend_cuda.c checks the layouts agree). */
typedef struct ldc_pqpage {
  long long offset, size, len, row, num_values, num_nulls;
  int def_len, kind, dict, codec, prefixed, pad;
} ldc_pqpage;
/* Byte spans copied on the device, one block each (ldc_copy_spans). */
typedef struct ldc_span {
  const uint8_t *src;
  uint8_t *dst;
  long long n;
} ldc_span;
cudaError_t ldc_copy_spans(const ldc_span *spans, int n, cudaStream_t stream);
enum { LDC_PQ_PLAIN = 0, LDC_PQ_DICT = 1, LDC_PQ_DICTIONARY = 2 };
/* A flat fixed-width column from its pages in buf (device memory, nbytes):
 * out (nrows values of `width` bytes, zeroed by the caller), valid (whole
 * words, zeroed by the caller; NULL when not nullable) gets a bit per present
 * row, *d_nulls the nulls added; d_err[0] the first problem's code (0: none;
 * ldc_parquet_error names it) and d_err[1] its page. */
/* width 0: a String column's rows: ix[row] its dictionary entry and
 * lens[row] its length (both set beforehand: ~0 and 0, which null rows keep);
 * the dictionary pages hold num_values + 1 Int64 offsets, then the bytes. */
cudaError_t ldc_parquet_decode(const uint8_t *buf, int64_t nbytes, const ldc_pqpage *pages,
                               int npages, int width, int nullable, int64_t nrows, void *out,
                               uint32_t *valid, unsigned long long *d_nulls, int *d_err,
                               uint32_t *ix, int64_t *lens, cudaStream_t stream);
/* Then each row's entry's bytes to chars at offsets[row]. */
cudaError_t ldc_parquet_string_chars(const uint8_t *buf, const ldc_pqpage *pages, int npages,
                                     const uint32_t *ix, const int64_t *offsets, uint8_t *chars,
                                     cudaStream_t stream);
/* out[i] = in[0] + ... + in[i - 1] over n values. */
cudaError_t ldc_scan_i64(const int64_t *in, int64_t *out, int64_t n, const ldc_alloc *scratch,
                         cudaStream_t stream);
const char *ldc_parquet_error(int code);

/* Running functions (ladle_cum_op's numbering, cumulative.cu). */
enum { LDC_CUM_SUM = 0, LDC_CUM_PROD = 1, LDC_CUM_MIN = 2, LDC_CUM_MAX = 3, LDC_CUM_COUNT = 4 };
/* out[row] = op's running value of the valid values of `in` (elements of
 * `kind`; validity bits valid, NULL: all valid) up to row, in row order
 * (reverse: from the last), per group: groups as a CSR (rows ascending within
 * a group, offsets of ngroups + 1) with each row's id, or all three NULL for
 * one group. A null row's value is 0. COUNT: out UInt32, the valid rows so far. */
cudaError_t ldc_cumulative(ldc_num kind, int op, bool reverse, const void *in, const uint8_t *valid,
                           const uint32_t *ids, const int64_t *rows, const int64_t *offsets,
                           int64_t ngroups, int64_t n, void *out, const ldc_alloc *scratch,
                           cudaStream_t stream);
/* out[r] = the row `by` places before r in its group (by < 0: after), or -1;
 * groups as ldc_cumulative's. */
cudaError_t ldc_shift_rows(const uint32_t *ids, const int64_t *rows, const int64_t *offsets,
                           int64_t nrows, int64_t by, int64_t *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* LADLE_CUDA_KERNELS_H */
