/* exchange.c — host columns moved between ranks (exchange.h).
 *
 * One move is a fixed sequence of alltoallv calls that every rank makes in
 * the same order: first a small header per pair of ranks (rows, and per
 * column whether validity follows and how many string bytes or list
 * elements), then per column its validity (bits repacked so that each
 * destination's rows start on a byte), its values (fixed width: sent from
 * the column as they are; strings and lists: each row's start offset, rebased
 * on arrival from the header's byte counts) and its string bytes, and a list
 * column's elements by the same steps, recursively. Ranges sent to different
 * ranks may overlap (a broadcast). Only host buffers: a device's columns come
 * down before they move (the NCCL path is the distributed issue's next
 * step). */
#include "exchange.h"

static const ladle_comm_place HOST = {LADLE_DEVICE_CPU, 0, NULL};

/* n bits of src from bit so to dst from bit dof. */
static void bits_copy(uint8_t *dst, int64_t dof, const uint8_t *src, int64_t so, int64_t n) {
  if (n <= 0) return;
  if (dof % 8 == 0 && so % 8 == 0) {
    memcpy(dst + dof / 8, src + so / 8, (size_t)(n / 8));
    for (int64_t i = n / 8 * 8; i < n; i++) ladle_bit_set(dst, dof + i, ladle_bit_get(src, so + i));
    return;
  }
  for (int64_t i = 0; i < n; i++) ladle_bit_set(dst, dof + i, ladle_bit_get(src, so + i));
}

/* n bits set from bit dof. */
static void bits_fill(uint8_t *dst, int64_t dof, int64_t n) {
  int64_t i = 0;
  for (; i < n && (dof + i) % 8 != 0; i++) ladle_bit_set(dst, dof + i, true);
  int64_t whole = (n - i) / 8;
  if (whole > 0) memset(dst + (dof + i) / 8, 0xff, (size_t)whole);
  for (i += whole * 8; i < n; i++) ladle_bit_set(dst, dof + i, true);
}

/* The per-pair sizes: counts[r] bytes at displs[r] */
typedef struct sizes {
  size_t *sc, *sd, *rc, *rd;
} sizes;

static ladle_status sizes_init(sizes *z, int n, ladle_error *err) {
  size_t *all = calloc((size_t)n * 4, sizeof *all);
  if (all == NULL) return LADLE_OOM(err, "exchange sizes");
  z->sc = all;
  z->sd = all + n;
  z->rc = all + 2 * n;
  z->rd = all + 3 * n;
  return LADLE_OK;
}

/* alltoallv, counting the bytes sent to the other ranks */
static ladle_status a2a(ladle_comm *c, const void *in, const sizes *z, void *out,
                        ladle_error *err) {
  for (int r = 0; r < c->size; r++)
    if (r != c->rank) c->moved_bytes += (int64_t)z->sc[r];
  return c->vt->alltoallv(c, in, z->sc, z->sd, out, z->rc, z->rd, HOST, err);
}

typedef struct header {
  int64_t has_validity; /* the sender's column has a validity bitmap */
  int64_t extra;        /* string bytes, or list elements, of the rows sent */
} header;

/* Whether a column sends each row's start offset (strings, lists). */
static bool has_offsets(ladle_type_id id) {
  return ladle_type_is_varlen(id) || id == LADLE_TYPE_LIST;
}

/* The rows sent to each rank: rank r's k-th row is perm[start[r] + k], or
 * start[r] + k without a permutation (a range of the columns). */
typedef struct send_rows {
  const int64_t *perm; /* NULL: ranges */
  const int64_t *start, *rows;
} send_rows;

static inline int64_t row_of(const send_rows *sr, int r, int64_t k) {
  int64_t i = sr->start[r] + k;
  return sr->perm != NULL ? sr->perm[i] : i;
}

/* The first element (string byte, list element) of rank r's rows: a range
 * only (list columns never move through a permutation). */
static int64_t first_elem(const ladle_column *col, const send_rows *sr, int r) {
  return sr->rows[r] > 0 && has_offsets(col->type.id) ? ((const int64_t *)col->values)[sr->start[r]]
                                                      : 0;
}
/* The elements of rank r's rows; none for a column without offsets. */
static int64_t elems(const ladle_column *col, const send_rows *sr, int r) {
  const int64_t *of = col->values;
  int64_t n = sr->rows[r];
  if (n <= 0 || !has_offsets(col->type.id)) return 0;
  if (sr->perm == NULL) return of[sr->start[r] + n] - of[sr->start[r]];
  int64_t t = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t i = row_of(sr, r, k);
    t += of[i + 1] - of[i];
  }
  return t;
}

/* Bytes of column col's segment for `rows` rows: validity (when has_validity),
 * values (fixed width, or string/list start offsets), string bytes (`extra`). */
static size_t seg_bytes(const ladle_column *col, bool has_validity, int64_t rows, int64_t extra) {
  ladle_type_id id = col->type.id;
  size_t w = has_offsets(id) ? 8 : ladle_type_width(id);
  size_t b = has_validity ? (size_t)ladle_bitmap_bytes(rows) : 0;
  if (w > 0 && col->values != NULL) b += (size_t)rows * w;
  if (ladle_type_is_varlen(id)) b += (size_t)extra;
  return b;
}

/* n values of width w from src's rows idx[0..n) to dst (a segment of the
 * send buffer: not aligned to w, so stored through memcpy) */
static void gather_width(uint8_t *dst, const uint8_t *src, size_t w, const int64_t *idx,
                         int64_t n) {
  switch (w) {
#define GW(W, T)                               \
  case W:                                      \
    for (int64_t k = 0; k < n; k++) {          \
      T v;                                     \
      memcpy(&v, src + (size_t)idx[k] * W, W); \
      memcpy(dst + (size_t)k * W, &v, W);      \
    }                                          \
    return;
    GW(1, uint8_t)
    GW(2, uint16_t)
    GW(4, uint32_t)
    GW(8, uint64_t)
#undef GW
    default:
      for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * w, src + (size_t)idx[k] * w, w);
  }
}

/* Rows a pack or unpack task moves of one fixed-width column's segment (a
 * multiple of 8: a piece's validity bits start on a byte of the segment). A
 * move of few columns had as few tasks as columns (a join's two), leaving
 * most of the pool idle. */
#define PIECE_ROWS ((int64_t)1 << 16)

/* A task: rows [lo, hi) of column i's segment of rank r (pack: r the
 * destination; unpack: the sender; whole: the column's every sender). */
typedef struct piece {
  int r;
  size_t i;
  int64_t lo, hi;
  bool whole;
} piece;

/* One move's layout: per destination one block, the columns' segments back
 * to back; seg[r * ncols + i] where column i's segment for rank r starts in
 * the send buffer, rseg[q * ncols + i] where sender q's starts in the
 * receive buffer. */
typedef struct move_job {
  const ladle_column *cols;
  size_t ncols;
  int n, self; /* ranks; this one (its rows go from cols to out directly) */
  send_rows sr;
  uint8_t *send;
  const uint8_t *recv;
  const size_t *seg, *rseg;
  const int64_t *rin, *rowat; /* per sender: rows, and its first output row */
  const header *hin;
  ladle_column *out;
  int64_t total;
  const piece *tasks; /* the current pool run's */
} move_job;

/* Appends the pieces of `rows` rows of column i for rank r to t (at *n):
 * one whole when the column has offsets (a string's bytes follow the rows
 * before it), else one per PIECE_ROWS rows (at least one). */
static void add_pieces(piece *t, size_t *n, int r, size_t i, const ladle_column *col,
                       int64_t rows) {
  if (has_offsets(col->type.id)) {
    t[(*n)++] = (piece){r, i, 0, rows, true};
    return;
  }
  int64_t lo = 0;
  do {
    int64_t hi = rows - lo > PIECE_ROWS ? lo + PIECE_ROWS : rows;
    t[(*n)++] = (piece){r, i, lo, hi, false};
    lo = hi;
  } while (lo < rows);
}

/* Pieces add_pieces makes for `rows` rows. */
static size_t count_pieces(const ladle_column *col, int64_t rows) {
  return has_offsets(col->type.id) || rows <= 0 ? 1
                                                : (size_t)((rows + PIECE_ROWS - 1) / PIECE_ROWS);
}

/* Packs a piece of column i's segment for destination r: segments start on
 * a byte and pieces on a byte of them, so tasks never share one. Strings
 * through a permutation send their start offsets counted from 0 (rebased on
 * arrival as a range's are). */
static ladle_status pack_task(void *ctx, size_t t, ladle_error *err) {
  LADLE_UNUSED(err);
  const move_job *j = ctx;
  const piece *pc = &j->tasks[t];
  int r = pc->r;
  const ladle_column *col = &j->cols[pc->i];
  const send_rows *sr = &j->sr;
  int64_t rows = sr->rows[r], st = sr->start[r], lo = pc->lo, hi = pc->hi, m = hi - lo;
  const int64_t *idx = sr->perm != NULL ? sr->perm + st : NULL;
  uint8_t *p = j->send + j->seg[(size_t)r * j->ncols + pc->i];
  size_t w = has_offsets(col->type.id) ? 8 : ladle_type_width(col->type.id);
  if (col->validity != NULL) {
    memset(p + lo / 8, 0, (size_t)(ladle_bitmap_bytes(hi) - lo / 8));
    if (idx == NULL) {
      bits_copy(p, lo, col->validity, st + lo, m);
    } else {
      for (int64_t k = lo; k < hi; k++)
        if (ladle_bit_get(col->validity, idx[k])) ladle_bit_set(p, k, true);
    }
    p += ladle_bitmap_bytes(rows);
  }
  if (w > 0 && col->values != NULL && m > 0) {
    if (idx == NULL) {
      memcpy(p + (size_t)lo * w, (const uint8_t *)col->values + (size_t)(st + lo) * w,
             (size_t)m * w);
    } else if (has_offsets(col->type.id)) { /* whole: lo 0, hi rows */
      const int64_t *of = col->values;
      int64_t at = 0;
      for (int64_t k = 0; k < rows; k++) {
        memcpy(p + (size_t)k * 8, &at, 8);
        at += of[idx[k] + 1] - of[idx[k]];
      }
    } else {
      gather_width(p + (size_t)lo * w, col->values, w, idx + lo, m);
    }
    p += (size_t)rows * w;
  }
  if (ladle_type_is_varlen(col->type.id) && rows > 0) {
    const int64_t *of = col->values;
    if (idx == NULL) {
      size_t nb = (size_t)(of[st + rows] - of[st]);
      if (nb > 0) memcpy(p, col->chars + of[st], nb);
    } else {
      for (int64_t k = 0; k < rows; k++) {
        size_t nb = (size_t)(of[idx[k] + 1] - of[idx[k]]);
        memcpy(p, col->chars + of[idx[k]], nb);
        p += nb;
      }
    }
  }
  return LADLE_OK;
}

/* Rows [lo, hi) of this rank's own rows of fixed-width column col into o's
 * values from output row `row` + lo: straight from the column, as pack_task
 * and unpack_task would have moved them through two buffers. */
static void keep_own_values(const move_job *j, const ladle_column *col, ladle_column *o,
                            int64_t row, int64_t lo, int64_t hi) {
  const send_rows *sr = &j->sr;
  int64_t st = sr->start[j->self];
  size_t w = ladle_type_width(col->type.id);
  if (w == 0 || col->values == NULL || hi <= lo) return;
  uint8_t *dst = (uint8_t *)o->values + (size_t)(row + lo) * w;
  if (sr->perm == NULL)
    memcpy(dst, (const uint8_t *)col->values + (size_t)(st + lo) * w, (size_t)(hi - lo) * w);
  else
    gather_width(dst, col->values, w, sr->perm + st + lo, hi - lo);
}

/* This rank's own rows of column col into o from row `row`: validity, and
 * for a column with offsets its offsets and string bytes (from `base`);
 * fixed-width values are keep_own_values' pieces. */
static void keep_own(const move_job *j, const ladle_column *col, ladle_column *o, int64_t row,
                     int64_t base) {
  const send_rows *sr = &j->sr;
  ladle_type_id id = col->type.id;
  int64_t rows = sr->rows[j->self], st = sr->start[j->self];
  const int64_t *idx = sr->perm != NULL ? sr->perm + st : NULL;
  if (rows <= 0) return;
  if (o->validity != NULL && id != LADLE_TYPE_NULL) {
    if (col->validity == NULL)
      bits_fill((uint8_t *)o->validity, row, rows);
    else if (idx == NULL)
      bits_copy((uint8_t *)o->validity, row, col->validity, st, rows);
    else
      for (int64_t k = 0; k < rows; k++)
        ladle_bit_set((uint8_t *)o->validity, row + k, ladle_bit_get(col->validity, idx[k]));
  }
  if (!has_offsets(id) || col->values == NULL) return;
  const int64_t *of = col->values;
  int64_t *oo = (int64_t *)o->values, at = base;
  for (int64_t k = 0; k < rows; k++) {
    int64_t i = idx != NULL ? idx[k] : st + k;
    oo[row + k] = at;
    int64_t nb = of[i + 1] - of[i];
    if (ladle_type_is_varlen(id) && nb > 0)
      memcpy((char *)o->chars + at, col->chars + of[i], (size_t)nb);
    at += nb;
  }
}

/* Unpacks column i's validity from every sender, and for a column with
 * offsets its offsets and bytes too (a whole task: validity bits of two
 * senders may share a byte, so a column's are one task); this rank's own
 * rows come from the column itself (keep_own). */
static void unpack_whole(const move_job *j, size_t i) {
  const ladle_column *col = &j->cols[i];
  ladle_column *o = &j->out[i];
  ladle_type_id id = col->type.id;
  bool offsets = has_offsets(id);
  int64_t base = 0; /* string bytes or list elements so far */
  for (int q = 0; q < j->n; q++) {
    if (q == j->self) {
      keep_own(j, col, o, j->rowat[q], base);
      base += j->hin[i * (size_t)j->n + (size_t)q].extra;
      continue;
    }
    const uint8_t *p = j->recv + j->rseg[(size_t)q * j->ncols + i];
    const header *h = &j->hin[i * (size_t)j->n + (size_t)q];
    int64_t rin = j->rin[q], row = j->rowat[q];
    if (h->has_validity) {
      if (id != LADLE_TYPE_NULL) bits_copy((uint8_t *)o->validity, row, p, 0, rin);
      p += ladle_bitmap_bytes(rin);
    } else if (o->validity != NULL && id != LADLE_TYPE_NULL) {
      bits_fill((uint8_t *)o->validity, row, rin);
    }
    if (offsets && col->values != NULL && rin > 0) { /* rebased on the elements before */
      int64_t *oo = (int64_t *)o->values, first;
      memcpy(&first, p, 8);
      for (int64_t k = 0; k < rin; k++) {
        int64_t v;
        memcpy(&v, p + (size_t)k * 8, 8);
        oo[row + k] = v - first + base;
      }
      p += (size_t)rin * 8;
    }
    if (ladle_type_is_varlen(id) && h->extra > 0)
      memcpy((char *)o->chars + base, p, (size_t)h->extra);
    base += h->extra;
  }
  if (offsets) ((int64_t *)o->values)[j->total] = base;
  o->null_count = id == LADLE_TYPE_NULL ? j->total
                  : o->validity != NULL ? ladle_bitmap_count_unset(o->validity, j->total)
                                        : 0;
}

/* An unpack task: a column's whole part, or a piece of a fixed-width
 * column's values from one sender (its own rows from the column). */
static ladle_status unpack_task(void *ctx, size_t t, ladle_error *err) {
  LADLE_UNUSED(err);
  const move_job *j = ctx;
  const piece *pc = &j->tasks[t];
  if (pc->whole) {
    unpack_whole(j, pc->i);
    return LADLE_OK;
  }
  const ladle_column *col = &j->cols[pc->i];
  ladle_column *o = &j->out[pc->i];
  int q = pc->r;
  size_t w = ladle_type_width(col->type.id);
  if (q == j->self) {
    keep_own_values(j, col, o, j->rowat[q], pc->lo, pc->hi);
    return LADLE_OK;
  }
  if (w == 0 || col->values == NULL || pc->hi <= pc->lo) return LADLE_OK;
  const uint8_t *p = j->recv + j->rseg[(size_t)q * j->ncols + pc->i];
  if (j->hin[pc->i * (size_t)j->n + (size_t)q].has_validity) p += ladle_bitmap_bytes(j->rin[q]);
  memcpy((uint8_t *)o->values + (size_t)(j->rowat[q] + pc->lo) * w, p + (size_t)pc->lo * w,
         (size_t)(pc->hi - pc->lo) * w);
  return LADLE_OK;
}

static ladle_status move_many(ladle_comm *c, const ladle_column *cols, size_t ncols, int64_t nrows,
                              const send_rows *sr, ladle_pool *pool, ladle_column *out,
                              int64_t *out_rows, ladle_error *err);

/* The header this rank sends (per destination r: its rows, then per column
 * whether validity follows and its elements): column i's elements for r,
 * counted once (a pass over the rows through a permutation). */
static int64_t sent_elems(const int64_t *hout, size_t ncols, int r, size_t i) {
  return hout[(size_t)r * (1 + 2 * ncols) + 2 + 2 * i];
}

/* Every column in one alltoallv: per destination one block, the columns'
 * segments back to back (seg_bytes), unpacked into out[i]; a list's elements
 * then move as a column of their own (move_many). One round instead of two
 * or three per column: small exchanges paid a latency per column and part.
 * Packing runs per (destination, column, piece of rows) and unpacking per
 * column and per (sender, fixed-width column, piece) on the pool's threads; the buffers are scratch
 * blocks (reused between moves, not faulted in afresh each time). This rank's own rows skip both
 * buffers: the unpacking gathers them from the columns (keep_own), one copy instead of three (pack,
 * the transport's own, unpack): half the rows of 2 ranks. */
static ladle_status move_packed(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                const send_rows *sr, const int64_t *hout, const int64_t *rin,
                                const header *hin, int64_t total, ladle_pool *pool,
                                ladle_column *out, ladle_error *err) {
  int n = c->size;
  size_t nseg = (size_t)n * LADLE_MAX(ncols, 1);
  sizes z = {0};
  LADLE_RETURN_NOT_OK(sizes_init(&z, n, err));
  uint8_t *send = NULL, *recv = NULL;
  piece *tasks = NULL;
  size_t *seg = calloc(nseg * 2, sizeof *seg);
  int64_t *rowat = calloc((size_t)n, sizeof *rowat);
  size_t made = 0;
  ladle_status st = LADLE_OK;
  if (seg == NULL || rowat == NULL) {
    st = LADLE_OOM(err, "exchange layout");
    goto done;
  }
  size_t at = 0, rat = 0;
  for (int r = 0; r < n; r++) {
    z.sd[r] = at;
    z.rd[r] = rat;
    for (size_t i = 0; i < ncols && r != c->rank; i++) { /* its own rows: none */
      const ladle_column *col = &cols[i];
      const header *h = &hin[i * (size_t)n + (size_t)r];
      seg[(size_t)r * ncols + i] = at;
      at += seg_bytes(col, col->validity != NULL, sr->rows[r], sent_elems(hout, ncols, r, i));
      seg[nseg + (size_t)r * ncols + i] = rat;
      rat += seg_bytes(col, h->has_validity != 0, rin[r], h->extra);
    }
    z.sc[r] = at - z.sd[r];
    z.rc[r] = rat - z.rd[r];
    if (r > 0) rowat[r] = rowat[r - 1] + rin[r - 1];
  }
  send = ladle_scratch_alloc(LADLE_MAX(at, 1), false);
  recv = ladle_scratch_alloc(LADLE_MAX(rat, 1), false);
  if (send == NULL || recv == NULL) {
    st = LADLE_OOM(err, "exchange buffers");
    goto done;
  }
  move_job j = {cols,       ncols, n,     c->rank, *sr, send,  recv, seg,
                seg + nseg, rin,   rowat, hin,     out, total, NULL};
  /* the pack tasks: pieces of every column for every other rank; the unpack
   * ones: each column's whole part, then pieces of every fixed-width
   * column's values from every sender */
  size_t npack = 0, nunpack = ncols, ntask = 0;
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < ncols; i++) {
      if (r != c->rank) npack += count_pieces(&cols[i], sr->rows[r]);
      if (!has_offsets(cols[i].type.id)) nunpack += count_pieces(&cols[i], rin[r]);
    }
  tasks = malloc(LADLE_MAX(LADLE_MAX(npack, nunpack), 1) * sizeof *tasks);
  if (tasks == NULL) {
    st = LADLE_OOM(err, "exchange tasks");
    goto done;
  }
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < ncols && r != c->rank; i++)
      add_pieces(tasks, &ntask, r, i, &cols[i], sr->rows[r]);
  j.tasks = tasks;
  double t0 = LADLE_PHASE_START();
  st = ladle_pool_run(pool, ntask, pack_task, &j, err);
  LADLE_PHASE_END("exchange pack", (int64_t)at, t0);
  if (st != LADLE_OK) goto done;
  t0 = LADLE_PHASE_START();
  st = a2a(c, send, &z, recv, err);
  LADLE_PHASE_END("exchange alltoallv", (int64_t)rat, t0);
  if (st != LADLE_OK) goto done;
  for (; made < ncols && st == LADLE_OK; made++) { /* the output columns */
    ladle_type_id id = cols[made].type.id;
    bool any_validity = id == LADLE_TYPE_NULL;
    int64_t extra_total = 0;
    for (int q = 0; q < n; q++) {
      any_validity |= hin[made * (size_t)n + (size_t)q].has_validity != 0;
      extra_total += hin[made * (size_t)n + (size_t)q].extra;
    }
    st = ladle_column_alloc(cols[made].type, total, any_validity,
                            ladle_type_is_varlen(id) ? extra_total : 0, &out[made], err);
  }
  if (st != LADLE_OK) {
    made--;
    goto done;
  }
  ntask = 0;
  for (size_t i = 0; i < ncols; i++) tasks[ntask++] = (piece){0, i, 0, 0, true};
  for (int q = 0; q < n; q++)
    for (size_t i = 0; i < ncols; i++)
      if (!has_offsets(cols[i].type.id)) add_pieces(tasks, &ntask, q, i, &cols[i], rin[q]);
  t0 = LADLE_PHASE_START();
  st = ladle_pool_run(pool, ntask, unpack_task, &j, err);
  LADLE_PHASE_END("exchange unpack", total, t0);
  for (size_t i = 0; i < ncols && st == LADLE_OK; i++) {
    ladle_column *o = &out[i];
    if (o->type.id != LADLE_TYPE_LIST) continue;
    /* the elements of each destination's rows, moved as a column */
    const ladle_column *col = &cols[i];
    int64_t *cst = calloc((size_t)n * 2, sizeof *cst);
    if (cst == NULL) {
      st = LADLE_OOM(err, "exchange list elements");
      break;
    }
    for (int r = 0; r < n; r++) {
      cst[r] = first_elem(col, sr, r);
      cst[n + r] = sent_elems(hout, ncols, r, i);
    }
    ladle_column child;
    int64_t moved = 0, want = ((const int64_t *)o->values)[total];
    send_rows csr = {NULL, cst, cst + n};
    st = move_many(c, col->child, 1, col->child->length, &csr, pool, &child, &moved, err);
    free(cst);
    if (st == LADLE_OK && moved != want) {
      ladle_column_release(&child);
      st = ladle_err_set(err, LADLE_ECOMM, "exchange: %lld list elements arrived, %lld expected",
                         (long long)moved, (long long)want);
    }
    if (st == LADLE_OK) st = ladle_column_set_child(o, &child, err);
  }
done:
  if (st != LADLE_OK)
    for (size_t i = 0; i < made; i++) ladle_column_release(&out[i]);
  ladle_scratch_free(send);
  ladle_scratch_free(recv);
  free(tasks);
  free(seg);
  free(rowat);
  free(z.sc);
  return st;
}

static ladle_status move_many(ladle_comm *c, const ladle_column *cols, size_t ncols, int64_t nrows,
                              const send_rows *sr, ladle_pool *pool, ladle_column *out,
                              int64_t *out_rows, ladle_error *err) {
  int n = c->size;
  int64_t sent = 0;
  for (int r = 0; r < n; r++) {
    const int64_t st0 = sr->start[r], rw = sr->rows[r];
    sent += rw;
    if (st0 < 0 || rw < 0 || st0 + rw > nrows)
      return ladle_err_set(err, LADLE_EINVAL,
                           "internal: exchange rows [%lld, +%lld) to rank %d out of %lld",
                           (long long)st0, (long long)rw, r, (long long)nrows);
  }
  if (sr->perm != NULL) { /* a permutation (parts back to back): each row once */
    for (size_t i = 0; i < ncols; i++)
      if (cols[i].type.id == LADLE_TYPE_LIST)
        return ladle_err_set(err, LADLE_EINVAL, "internal: a list column moved by permutation");
    if (sent != nrows)
      return ladle_err_set(err, LADLE_EINVAL, "internal: a permutation of %lld rows sends %lld",
                           (long long)nrows, (long long)sent);
  }
  /* the header: per pair, the rows, then two fields per column */
  size_t hn = 1 + 2 * ncols;
  int64_t *hout = calloc((size_t)n * hn * 2, sizeof *hout);
  header *hin = calloc((size_t)n * LADLE_MAX(ncols, 1), sizeof *hin);
  int64_t *rin = calloc((size_t)n, sizeof *rin);
  ladle_column *plain = calloc(LADLE_MAX(ncols, 1), sizeof *plain);
  sizes z = {0};
  size_t nplain = 0;
  ladle_status st = hout == NULL || hin == NULL || rin == NULL || plain == NULL
                        ? LADLE_OOM(err, "exchange header")
                        : sizes_init(&z, n, err);
  if (st != LADLE_OK) goto done;
  for (; nplain < ncols && st == LADLE_OK; nplain++) {
    st = ladle_column_unviewed(&cols[nplain], &plain[nplain], err);
    if (st == LADLE_OK && plain[nplain].length != nrows)
      st = ladle_err_set(err, LADLE_EINVAL, "internal: exchange column %zu of %lld rows, not %lld",
                         nplain, (long long)plain[nplain].length, (long long)nrows);
  }
  if (st != LADLE_OK) {
    nplain--;
    goto done;
  }
  for (int r = 0; r < n; r++) {
    int64_t *h = hout + (size_t)r * hn;
    h[0] = sr->rows[r];
    for (size_t i = 0; i < ncols; i++) {
      const ladle_column *col = &plain[i];
      h[1 + 2 * i] = col->validity != NULL;
      h[2 + 2 * i] = elems(col, sr, r);
    }
    z.sc[r] = z.rc[r] = hn * 8;
    z.sd[r] = z.rd[r] = (size_t)r * hn * 8;
  }
  int64_t *hrecv = hout + (size_t)n * hn;
  st = a2a(c, hout, &z, hrecv, err);
  if (st != LADLE_OK) goto done;
  int64_t total = 0;
  for (int s = 0; s < n; s++) {
    const int64_t *h = hrecv + (size_t)s * hn;
    rin[s] = h[0];
    total += h[0];
    for (size_t i = 0; i < ncols; i++)
      hin[i * (size_t)n + (size_t)s] = (header){h[1 + 2 * i], h[2 + 2 * i]};
  }
  st = move_packed(c, plain, ncols, sr, hout, rin, hin, total, pool, out, err);
  if (st == LADLE_OK) *out_rows = total;
done:
  for (size_t i = 0; plain != NULL && i < nplain; i++) ladle_column_release(&plain[i]);
  free(plain);
  free(hout);
  free(hin);
  free(rin);
  free(z.sc);
  return st;
}

ladle_status ladle_dist_move_columns(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                     int64_t nrows, const int64_t *start, const int64_t *rows,
                                     ladle_column *out, int64_t *out_rows, ladle_error *err) {
  double t0 = ladle_clock_ms();
  send_rows sr = {NULL, start, rows};
  ladle_status st = move_many(c, cols, ncols, nrows, &sr, NULL, out, out_rows, err);
  c->moved_ms += ladle_clock_ms() - t0;
  return st;
}

ladle_status ladle_dist_move_rows(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                  int64_t nrows, const int64_t *perm, const int64_t *counts,
                                  ladle_pool *pool, ladle_column *out, int64_t *out_rows,
                                  ladle_error *err) {
  int64_t *start = calloc((size_t)c->size, sizeof *start);
  if (start == NULL) return LADLE_OOM(err, "exchange");
  for (int r = 1; r < c->size; r++) start[r] = start[r - 1] + counts[r - 1];
  double t0 = ladle_clock_ms();
  send_rows sr = {perm, start, counts};
  ladle_status st = move_many(c, cols, ncols, nrows, &sr, pool, out, out_rows, err);
  c->moved_ms += ladle_clock_ms() - t0;
  free(start);
  return st;
}

ladle_status ladle_dist_allgather_columns(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                          int64_t nrows, ladle_column *out, int64_t *out_rows,
                                          ladle_error *err) {
  int64_t *sr = calloc((size_t)c->size * 2, sizeof *sr);
  if (sr == NULL) return LADLE_OOM(err, "exchange");
  for (int r = 0; r < c->size; r++) sr[c->size + r] = nrows; /* start 0, every row */
  double t0 = ladle_clock_ms();
  send_rows rs = {NULL, sr, sr + c->size};
  ladle_status st = move_many(c, cols, ncols, nrows, &rs, NULL, out, out_rows, err);
  c->moved_ms += ladle_clock_ms() - t0;
  free(sr);
  return st;
}

ladle_status ladle_dist_allgather_i64(ladle_comm *c, int64_t v, int64_t *all, ladle_error *err) {
  return c->vt->allgather(c, &v, sizeof v, all, HOST, err);
}
