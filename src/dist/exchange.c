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

/* receive displacements from the counts, back to back; their total */
static size_t recv_packed(sizes *z, int n) {
  size_t at = 0;
  for (int r = 0; r < n; r++) {
    z->rd[r] = at;
    at += z->rc[r];
  }
  return at;
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

static ladle_status move_many(ladle_comm *c, const ladle_column *cols, size_t ncols, int64_t nrows,
                              const int64_t *start, const int64_t *rows, ladle_column *out,
                              int64_t *out_rows, ladle_error *err);

/* Whether a column sends each row's start offset (strings, lists). */
static bool has_offsets(ladle_type_id id) {
  return ladle_type_is_varlen(id) || id == LADLE_TYPE_LIST;
}

/* The range of elements (string bytes, list elements) of rows [start, +rows);
 * none for a column without offsets. */
static int64_t first_elem(const ladle_column *col, int64_t start, int64_t rows) {
  return rows > 0 && has_offsets(col->type.id) ? ((const int64_t *)col->values)[start] : 0;
}
static int64_t elems(const ladle_column *col, int64_t start, int64_t rows) {
  const int64_t *of = col->values;
  return rows > 0 && has_offsets(col->type.id) ? of[start + rows] - of[start] : 0;
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

/* Every column in one alltoallv: per destination one block, the columns'
 * segments back to back (seg_bytes), unpacked into out[i]; a list's elements
 * then move as a column of their own (move_many). One round instead of two
 * or three per column: small exchanges paid a latency per column and part. */
static ladle_status move_packed(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                const int64_t *start, const int64_t *rows, const int64_t *rin,
                                const header *hin, int64_t total, ladle_column *out,
                                ladle_error *err) {
  int n = c->size;
  sizes z = {0};
  LADLE_RETURN_NOT_OK(sizes_init(&z, n, err));
  uint8_t *send = NULL, *recv = NULL;
  int64_t *base = NULL; /* per column: string bytes or list elements so far */
  size_t made = 0;
  ladle_status st = LADLE_OK;
  size_t at = 0;
  for (int r = 0; r < n; r++) {
    z.sd[r] = at;
    for (size_t i = 0; i < ncols; i++) {
      const ladle_column *col = &cols[i];
      z.sc[r] += seg_bytes(col, col->validity != NULL, rows[r], elems(col, start[r], rows[r]));
      const header *h = &hin[i * (size_t)n + (size_t)r];
      z.rc[r] += seg_bytes(col, h->has_validity != 0, rin[r], h->extra);
    }
    at += z.sc[r];
  }
  size_t got = recv_packed(&z, n);
  send = malloc(LADLE_MAX(at, 1));
  recv = malloc(LADLE_MAX(got, 1));
  base = calloc(LADLE_MAX(ncols, 1), sizeof *base);
  if (send == NULL || recv == NULL || base == NULL) {
    st = LADLE_OOM(err, "exchange buffers");
    goto done;
  }
  for (int r = 0; r < n; r++) { /* pack */
    uint8_t *p = send + z.sd[r];
    for (size_t i = 0; i < ncols; i++) {
      const ladle_column *col = &cols[i];
      size_t w = has_offsets(col->type.id) ? 8 : ladle_type_width(col->type.id);
      if (col->validity != NULL) {
        memset(p, 0, (size_t)ladle_bitmap_bytes(rows[r]));
        bits_copy(p, 0, col->validity, start[r], rows[r]);
        p += ladle_bitmap_bytes(rows[r]);
      }
      if (w > 0 && col->values != NULL && rows[r] > 0) {
        memcpy(p, (const uint8_t *)col->values + (size_t)start[r] * w, (size_t)rows[r] * w);
        p += (size_t)rows[r] * w;
      }
      if (ladle_type_is_varlen(col->type.id)) {
        size_t nb = (size_t)elems(col, start[r], rows[r]);
        if (nb > 0) memcpy(p, col->chars + first_elem(col, start[r], rows[r]), nb);
        p += nb;
      }
    }
  }
  st = a2a(c, send, &z, recv, err);
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
  int64_t row = 0;
  for (int q = 0; q < n; q++) { /* unpack sender q's block */
    const uint8_t *p = recv + z.rd[q];
    for (size_t i = 0; i < ncols; i++) {
      const ladle_column *col = &cols[i];
      ladle_column *o = &out[i];
      const header *h = &hin[i * (size_t)n + (size_t)q];
      ladle_type_id id = col->type.id;
      size_t w = has_offsets(id) ? 8 : ladle_type_width(id);
      if (h->has_validity) {
        if (id != LADLE_TYPE_NULL) bits_copy((uint8_t *)o->validity, row, p, 0, rin[q]);
        p += ladle_bitmap_bytes(rin[q]);
      } else if (o->validity != NULL && id != LADLE_TYPE_NULL) {
        bits_fill((uint8_t *)o->validity, row, rin[q]);
      }
      if (w > 0 && col->values != NULL && rin[q] > 0) {
        if (has_offsets(id)) { /* start offsets rebased on the elements before this sender's */
          int64_t *oo = (int64_t *)o->values, first;
          memcpy(&first, p, 8);
          for (int64_t k = 0; k < rin[q]; k++) {
            int64_t v;
            memcpy(&v, p + (size_t)k * 8, 8);
            oo[row + k] = v - first + base[i];
          }
        } else {
          memcpy((uint8_t *)o->values + (size_t)row * w, p, (size_t)rin[q] * w);
        }
        p += (size_t)rin[q] * w;
      }
      if (ladle_type_is_varlen(id) && h->extra > 0) {
        memcpy((char *)o->chars + base[i], p, (size_t)h->extra);
        p += h->extra;
      }
      base[i] += h->extra;
    }
    row += rin[q];
  }
  for (size_t i = 0; i < ncols && st == LADLE_OK; i++) {
    ladle_column *o = &out[i];
    if (has_offsets(o->type.id)) ((int64_t *)o->values)[total] = base[i];
    o->null_count = o->type.id == LADLE_TYPE_NULL ? total
                    : o->validity != NULL         ? ladle_bitmap_count_unset(o->validity, total)
                                                  : 0;
    if (o->type.id != LADLE_TYPE_LIST) continue;
    /* the elements of each destination's rows, moved as a column */
    const ladle_column *col = &cols[i];
    int64_t *cst = calloc((size_t)n * 2, sizeof *cst);
    if (cst == NULL) {
      st = LADLE_OOM(err, "exchange list elements");
      break;
    }
    for (int r = 0; r < n; r++) {
      cst[r] = first_elem(col, start[r], rows[r]);
      cst[n + r] = elems(col, start[r], rows[r]);
    }
    ladle_column child;
    int64_t moved = 0;
    st = move_many(c, col->child, 1, col->child->length, cst, cst + n, &child, &moved, err);
    free(cst);
    if (st == LADLE_OK && moved != base[i]) {
      ladle_column_release(&child);
      st = ladle_err_set(err, LADLE_ECOMM, "exchange: %lld list elements arrived, %lld expected",
                         (long long)moved, (long long)base[i]);
    }
    if (st == LADLE_OK) st = ladle_column_set_child(o, &child, err);
  }
done:
  if (st != LADLE_OK)
    for (size_t i = 0; i < made; i++) ladle_column_release(&out[i]);
  free(send);
  free(recv);
  free(base);
  free(z.sc);
  return st;
}

static ladle_status move_many(ladle_comm *c, const ladle_column *cols, size_t ncols, int64_t nrows,
                              const int64_t *start, const int64_t *rows, ladle_column *out,
                              int64_t *out_rows, ladle_error *err) {
  int n = c->size;
  for (int r = 0; r < n; r++)
    if (start[r] < 0 || rows[r] < 0 || start[r] + rows[r] > nrows)
      return ladle_err_set(err, LADLE_EINVAL,
                           "internal: exchange rows [%lld, +%lld) to rank %d out of %lld",
                           (long long)start[r], (long long)rows[r], r, (long long)nrows);
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
    if (ladle_column_view_only(&cols[nplain]))
      st = ladle_column_from_views(&cols[nplain], &plain[nplain], err);
    else
      ladle_column_copy_ref(&cols[nplain], &plain[nplain]);
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
    h[0] = rows[r];
    for (size_t i = 0; i < ncols; i++) {
      const ladle_column *col = &plain[i];
      h[1 + 2 * i] = col->validity != NULL;
      h[2 + 2 * i] = elems(col, start[r], rows[r]);
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
  st = move_packed(c, plain, ncols, start, rows, rin, hin, total, out, err);
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
  ladle_status st = move_many(c, cols, ncols, nrows, start, rows, out, out_rows, err);
  c->moved_ms += ladle_clock_ms() - t0;
  return st;
}

ladle_status ladle_dist_allgather_columns(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                          int64_t nrows, ladle_column *out, int64_t *out_rows,
                                          ladle_error *err) {
  int64_t *sr = calloc((size_t)c->size * 2, sizeof *sr);
  if (sr == NULL) return LADLE_OOM(err, "exchange");
  for (int r = 0; r < c->size; r++) sr[c->size + r] = nrows; /* start 0, every row */
  double t0 = ladle_clock_ms();
  ladle_status st = move_many(c, cols, ncols, nrows, sr, sr + c->size, out, out_rows, err);
  c->moved_ms += ladle_clock_ms() - t0;
  free(sr);
  return st;
}

ladle_status ladle_dist_allgather_i64(ladle_comm *c, int64_t v, int64_t *all, ladle_error *err) {
  return c->vt->allgather(c, &v, sizeof v, all, HOST, err);
}
