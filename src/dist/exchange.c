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

/* One column (its header fields from every sender in hin[s]) into *out of
 * total rows, rin[s] rows from sender s. */
static ladle_status move_one(ladle_comm *c, const ladle_column *col, const int64_t *start,
                             const int64_t *rows, const int64_t *rin, const header *hin,
                             int64_t total, ladle_column *out, ladle_error *err) {
  int n = c->size;
  ladle_type_id id = col->type.id;
  bool varlen = ladle_type_is_varlen(id), list = id == LADLE_TYPE_LIST;
  size_t w = varlen || list ? 8 : ladle_type_width(id);
  bool any_validity = id == LADLE_TYPE_NULL;
  int64_t extra_total = 0;
  for (int s = 0; s < n; s++) {
    any_validity |= hin[s].has_validity != 0;
    extra_total += hin[s].extra;
  }
  sizes z = {0};
  LADLE_RETURN_NOT_OK(sizes_init(&z, n, err));
  ladle_column o;
  memset(&o, 0, sizeof o);
  uint8_t *packed = NULL, *vin = NULL;
  int64_t *offs_in = NULL;
  ladle_status st =
      ladle_column_alloc(col->type, total, any_validity, varlen ? extra_total : 0, &o, err);
  if (st != LADLE_OK) goto done;
  /* validity: each destination's rows repacked from a byte boundary */
  {
    size_t at = 0;
    for (int r = 0; r < n; r++) {
      z.sc[r] = col->validity != NULL ? (size_t)ladle_bitmap_bytes(rows[r]) : 0;
      z.sd[r] = at;
      at += z.sc[r];
      z.rc[r] = hin[r].has_validity ? (size_t)ladle_bitmap_bytes(rin[r]) : 0;
    }
    size_t got = recv_packed(&z, n);
    packed = malloc(LADLE_MAX(at, 1));
    vin = malloc(LADLE_MAX(got, 1));
    if (packed == NULL || vin == NULL) {
      st = LADLE_OOM(err, "exchange validity");
      goto done;
    }
    if (col->validity != NULL)
      for (int r = 0; r < n; r++) bits_copy(packed + z.sd[r], 0, col->validity, start[r], rows[r]);
    st = a2a(c, packed, &z, vin, err);
    if (st != LADLE_OK) goto done;
    if (any_validity && id != LADLE_TYPE_NULL) {
      uint8_t *bits = (uint8_t *)o.validity;
      int64_t row = 0;
      for (int s = 0; s < n; s++) {
        if (hin[s].has_validity)
          bits_copy(bits, row, vin + z.rd[s], 0, rin[s]);
        else
          bits_fill(bits, row, rin[s]);
        row += rin[s];
      }
    }
  }
  /* values: fixed width straight from the column; strings and lists send
   * each row's start offset */
  if (w > 0 && col->values != NULL) {
    for (int r = 0; r < n; r++) {
      z.sc[r] = (size_t)rows[r] * w;
      z.sd[r] = (size_t)start[r] * w;
      z.rc[r] = (size_t)rin[r] * w;
    }
    recv_packed(&z, n);
    void *dst = (void *)o.values;
    if (varlen || list) {
      offs_in = malloc((size_t)LADLE_MAX(total, 1) * 8);
      if (offs_in == NULL) {
        st = LADLE_OOM(err, "exchange offsets");
        goto done;
      }
      dst = offs_in;
    }
    st = a2a(c, col->values, &z, dst, err);
    if (st != LADLE_OK) goto done;
    if (varlen || list) { /* rebased: each sender's block starts at the bytes before it */
      int64_t *oo = (int64_t *)o.values, row = 0, base = 0;
      for (int s = 0; s < n; s++) {
        int64_t first = rin[s] > 0 ? offs_in[row] : 0;
        for (int64_t i = 0; i < rin[s]; i++) oo[row + i] = offs_in[row + i] - first + base;
        row += rin[s];
        base += hin[s].extra;
      }
      oo[total] = base;
    }
  }
  if (varlen) { /* the bytes of each destination's rows */
    const int64_t *of = col->values;
    for (int r = 0; r < n; r++) {
      z.sc[r] = rows[r] > 0 ? (size_t)(of[start[r] + rows[r]] - of[start[r]]) : 0;
      z.sd[r] = rows[r] > 0 ? (size_t)of[start[r]] : 0;
      z.rc[r] = (size_t)hin[r].extra;
    }
    recv_packed(&z, n);
    st = a2a(c, col->chars, &z, (void *)o.chars, err);
    if (st != LADLE_OK) goto done;
  }
  if (list) { /* the elements of each destination's rows, moved the same way */
    const int64_t *of = col->values;
    int64_t *cst = calloc((size_t)n * 2, sizeof *cst);
    if (cst == NULL) {
      st = LADLE_OOM(err, "exchange list elements");
      goto done;
    }
    for (int r = 0; r < n; r++) {
      cst[r] = rows[r] > 0 ? of[start[r]] : 0;
      cst[n + r] = rows[r] > 0 ? of[start[r] + rows[r]] - of[start[r]] : 0;
    }
    ladle_column child;
    int64_t got = 0;
    st = move_many(c, col->child, 1, col->child->length, cst, cst + n, &child, &got, err);
    free(cst);
    if (st == LADLE_OK && got != extra_total)
      st = ladle_err_set(err, LADLE_ECOMM, "exchange: %lld list elements arrived, %lld expected",
                         (long long)got, (long long)extra_total);
    if (st == LADLE_OK) st = ladle_column_set_child(&o, &child, err);
    if (st != LADLE_OK) goto done;
  }
  o.null_count = any_validity ? ladle_bitmap_count_unset(o.validity, total) : 0;
  if (id == LADLE_TYPE_NULL) o.null_count = total;
done:
  free(z.sc);
  free(packed);
  free(vin);
  free(offs_in);
  if (st != LADLE_OK) {
    ladle_column_release(&o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* Bytes of column col's segment for `rows` rows: validity (when has_validity),
 * values (fixed width, or string/list start offsets), string bytes (`extra`). */
static size_t seg_bytes(const ladle_column *col, bool has_validity, int64_t rows, int64_t extra) {
  ladle_type_id id = col->type.id;
  bool varlen = ladle_type_is_varlen(id);
  size_t w = varlen ? 8 : ladle_type_width(id);
  size_t b = has_validity ? (size_t)ladle_bitmap_bytes(rows) : 0;
  if (w > 0 && col->values != NULL) b += (size_t)rows * w;
  if (varlen) b += (size_t)extra;
  return b;
}

/* Every column but lists in one alltoallv: per destination one block, the
 * columns' segments back to back (seg_bytes), unpacked into out[i] (columns
 * the caller marks `skip` are left for move_one). One round instead of two
 * or three per column: small exchanges paid a latency per column and part. */
static ladle_status move_packed(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                const bool *skip, const int64_t *start, const int64_t *rows,
                                const int64_t *rin, const header *hin, int64_t total,
                                ladle_column *out, ladle_error *err) {
  int n = c->size;
  sizes z = {0};
  LADLE_RETURN_NOT_OK(sizes_init(&z, n, err));
  uint8_t *send = NULL, *recv = NULL;
  size_t made = 0;
  ladle_status st = LADLE_OK;
  size_t at = 0;
  for (int r = 0; r < n; r++) {
    z.sd[r] = at;
    for (size_t i = 0; i < ncols; i++) {
      if (skip[i]) continue;
      const ladle_column *col = &cols[i];
      const int64_t *of = col->values;
      int64_t ex = ladle_type_is_varlen(col->type.id) && rows[r] > 0
                       ? of[start[r] + rows[r]] - of[start[r]]
                       : 0;
      z.sc[r] += seg_bytes(col, col->validity != NULL, rows[r], ex);
      const header *h = &hin[i * (size_t)n + (size_t)r];
      z.rc[r] += seg_bytes(col, h->has_validity != 0, rin[r], h->extra);
    }
    at += z.sc[r];
  }
  size_t got = recv_packed(&z, n);
  send = malloc(LADLE_MAX(at, 1));
  recv = malloc(LADLE_MAX(got, 1));
  if (send == NULL || recv == NULL) {
    st = LADLE_OOM(err, "exchange buffers");
    goto done;
  }
  for (int r = 0; r < n; r++) { /* pack */
    uint8_t *p = send + z.sd[r];
    for (size_t i = 0; i < ncols; i++) {
      if (skip[i]) continue;
      const ladle_column *col = &cols[i];
      bool varlen = ladle_type_is_varlen(col->type.id);
      size_t w = varlen ? 8 : ladle_type_width(col->type.id);
      if (col->validity != NULL) {
        memset(p, 0, (size_t)ladle_bitmap_bytes(rows[r]));
        bits_copy(p, 0, col->validity, start[r], rows[r]);
        p += ladle_bitmap_bytes(rows[r]);
      }
      if (w > 0 && col->values != NULL && rows[r] > 0) {
        memcpy(p, (const uint8_t *)col->values + (size_t)start[r] * w, (size_t)rows[r] * w);
        p += (size_t)rows[r] * w;
      }
      if (varlen && rows[r] > 0) {
        const int64_t *of = col->values;
        size_t nb = (size_t)(of[start[r] + rows[r]] - of[start[r]]);
        if (nb > 0) memcpy(p, col->chars + of[start[r]], nb);
        p += nb;
      }
    }
  }
  st = a2a(c, send, &z, recv, err);
  free(send);
  send = NULL;
  if (st != LADLE_OK) goto done;
  for (; made < ncols && st == LADLE_OK; made++) { /* the output columns */
    if (skip[made]) continue;
    const ladle_column *col = &cols[made];
    ladle_type_id id = col->type.id;
    bool any_validity = id == LADLE_TYPE_NULL;
    int64_t extra_total = 0;
    for (int q = 0; q < n; q++) {
      any_validity |= hin[made * (size_t)n + (size_t)q].has_validity != 0;
      extra_total += hin[made * (size_t)n + (size_t)q].extra;
    }
    st = ladle_column_alloc(col->type, total, any_validity,
                            ladle_type_is_varlen(id) ? extra_total : 0, &out[made], err);
  }
  if (st != LADLE_OK) {
    made--;
    goto done;
  }
  int64_t row = 0;
  int64_t *base = calloc(LADLE_MAX(ncols, 1), sizeof *base); /* string bytes so far */
  if (base == NULL) {
    st = LADLE_OOM(err, "exchange");
    goto done;
  }
  for (int q = 0; q < n; q++) { /* unpack sender q's block */
    const uint8_t *p = recv + z.rd[q];
    for (size_t i = 0; i < ncols; i++) {
      if (skip[i]) continue;
      const ladle_column *col = &cols[i];
      ladle_column *o = &out[i];
      const header *h = &hin[i * (size_t)n + (size_t)q];
      ladle_type_id id = col->type.id;
      bool varlen = ladle_type_is_varlen(id);
      size_t w = varlen ? 8 : ladle_type_width(id);
      if (h->has_validity) {
        if (id != LADLE_TYPE_NULL) bits_copy((uint8_t *)o->validity, row, p, 0, rin[q]);
        p += ladle_bitmap_bytes(rin[q]);
      } else if (o->validity != NULL && id != LADLE_TYPE_NULL) {
        bits_fill((uint8_t *)o->validity, row, rin[q]);
      }
      if (w > 0 && col->values != NULL && rin[q] > 0) {
        if (varlen) { /* start offsets rebased on the bytes before this sender's */
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
      if (varlen) {
        if (h->extra > 0) memcpy((char *)o->chars + base[i], p, (size_t)h->extra);
        p += h->extra;
        base[i] += h->extra;
      }
    }
    row += rin[q];
  }
  for (size_t i = 0; i < ncols; i++) {
    if (skip[i]) continue;
    ladle_column *o = &out[i];
    if (ladle_type_is_varlen(o->type.id)) ((int64_t *)o->values)[total] = base[i];
    o->null_count = o->type.id == LADLE_TYPE_NULL ? total
                    : o->validity != NULL         ? ladle_bitmap_count_unset(o->validity, total)
                                                  : 0;
  }
  free(base);
done:
  if (st != LADLE_OK)
    for (size_t i = 0; i < made; i++)
      if (!skip[i]) ladle_column_release(&out[i]);
  free(send);
  free(recv);
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
  size_t made = 0, nplain = 0;
  bool *skip = NULL, packed_done = false;
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
      const int64_t *of = col->values;
      h[1 + 2 * i] = col->validity != NULL;
      bool off = ladle_type_is_varlen(col->type.id) || col->type.id == LADLE_TYPE_LIST;
      h[2 + 2 * i] = off && rows[r] > 0 ? of[start[r] + rows[r]] - of[start[r]] : 0;
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
  /* every column but lists in one round; each list column on its own (its
   * elements move as a column of their own) */
  skip = calloc(LADLE_MAX(ncols, 1), sizeof *skip);
  if (skip == NULL) {
    st = LADLE_OOM(err, "exchange");
    goto done;
  }
  for (size_t i = 0; i < ncols; i++) skip[i] = plain[i].type.id == LADLE_TYPE_LIST;
  st = move_packed(c, plain, ncols, skip, start, rows, rin, hin, total, out, err);
  if (st != LADLE_OK) goto done;
  packed_done = true;
  for (; made < ncols && st == LADLE_OK; made++)
    if (skip[made])
      st = move_one(c, &plain[made], start, rows, rin, hin + made * (size_t)n, total, &out[made],
                    err);
  if (st != LADLE_OK) {
    made--;
    goto done;
  }
  *out_rows = total;
done:
  if (st != LADLE_OK && packed_done)
    for (size_t i = 0; i < ncols; i++)
      if (!skip[i] || i < made) ladle_column_release(&out[i]);
  for (size_t i = 0; plain != NULL && i < nplain; i++) ladle_column_release(&plain[i]);
  free(skip);
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
