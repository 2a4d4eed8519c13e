/* column.c — allocating, slicing, concatenating and gathering columns.
 * Every function here writes its output only on success and shares buffers by
 * reference where it can (slices, single-piece concats). */
#include <pthread.h>

#include "core.h"
#if defined(__BMI2__)
#include <immintrin.h> /* _pext_u64 */
#endif

int64_t ladle_bitmap_count_unset(const uint8_t *bits, int64_t n) {
  if (bits == NULL) return 0;
  int64_t set = 0, i = 0;
  for (; i + 64 <= n; i += 64) {
    uint64_t w;
    memcpy(&w, bits + i / 8, 8);
    set += __builtin_popcountll(w);
  }
  for (; i < n; i++) set += ladle_bit_get(bits, i);
  return n - set;
}

/* Byte b's eight bits as eight 0/1 bytes, low bit first: b copied into every
 * byte, byte j keeps only bit j, and adding 0x7f to a byte carries into its
 * top bit exactly when that bit was set (no byte overflows into the next). */
static inline uint64_t bits_to_bytes(uint8_t b) {
  uint64_t m = ((uint64_t)b * 0x0101010101010101ull) & 0x8040201008040201ull;
  return ((m + 0x7f7f7f7f7f7f7f7full) >> 7) & 0x0101010101010101ull;
}

void ladle_bitmap_and_bytes(const uint8_t *bits, int64_t n, bool negate, bool init, uint8_t *keep) {
  const uint64_t flip = negate ? 0x0101010101010101ull : 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t m = bits_to_bytes(bits[i >> 3]) ^ flip, w;
    if (!init) {
      memcpy(&w, keep + i, 8);
      m &= w;
    }
    memcpy(keep + i, &m, 8);
  }
  for (; i < n; i++) {
    uint8_t b = (uint8_t)(((bits[i >> 3] >> (i & 7)) & 1) ^ negate);
    keep[i] = init ? b : (uint8_t)(keep[i] & b);
  }
}

static void free_child(void *p) {
  ladle_column_release(p);
  free(p);
}

ladle_status ladle_column_set_child(ladle_column *c, ladle_column *child, ladle_error *err) {
  ladle_column *heap = malloc(sizeof *heap);
  ladle_buffer *b = NULL;
  if (heap == NULL) {
    ladle_column_release(child);
    return LADLE_OOM(err, "list elements");
  }
  *heap = *child;
  memset(child, 0, sizeof *child);
  ladle_status st = ladle_buffer_wrap(heap, sizeof *heap, free_child, heap, &b, err);
  if (st != LADLE_OK) {
    free_child(heap);
    return st;
  }
  ladle_buffer_release(c->owners[2]);
  c->owners[2] = b;
  c->child = heap;
  return LADLE_OK;
}

ladle_status ladle_column_alloc(ladle_dtype type, int64_t length, bool nullable, int64_t chars_size,
                                ladle_column *out, ladle_error *err) {
  return ladle_column_alloc_with(NULL, type, length, nullable, chars_size, out, err);
}

ladle_status ladle_column_alloc_with(const ladle_allocator *a, ladle_dtype type, int64_t length,
                                     bool nullable, int64_t chars_size, ladle_column *out,
                                     ladle_error *err) {
  ladle_column c;
  memset(&c, 0, sizeof c);
  c.type = type;
  c.length = length;
  if (length < 0) return ladle_err_set(err, LADLE_EINVAL, "negative column length");
  if (a != NULL && a->device != LADLE_DEVICE_CPU) {
    /* on a device: the buffers only, nothing written (the kernel that fills
     * them writes validity, offsets and values); validity padded to whole
     * 32-bit words, which device kernels write at once */
    if (type.id == LADLE_TYPE_NULL)
      return ladle_err_set(err, LADLE_ENOTSUP, "a Null column on a device");
    if (type.id == LADLE_TYPE_LIST) {
      /* validity and offsets; no child until the caller sets the elements
       * (ladle_column_set_child) */
      ladle_status st = LADLE_OK;
      if (nullable) st = ladle_buffer_alloc(a, (size_t)(length + 31) / 32 * 4, &c.owners[0], err);
      if (st == LADLE_OK) st = ladle_buffer_alloc(a, (size_t)(length + 1) * 8, &c.owners[1], err);
      if (st != LADLE_OK) {
        ladle_column_release(&c);
        return st;
      }
      c.validity = c.owners[0] ? c.owners[0]->data : NULL;
      c.values = c.owners[1]->data;
      *out = c;
      return LADLE_OK;
    }
    size_t w = ladle_type_width(type.id);
    ladle_status st = LADLE_OK;
    if (nullable) st = ladle_buffer_alloc(a, (size_t)(length + 31) / 32 * 4, &c.owners[0], err);
    if (st == LADLE_OK)
      st = ladle_buffer_alloc(
          a, ladle_type_is_varlen(type.id) ? (size_t)(length + 1) * 8 : (size_t)length * w,
          &c.owners[1], err);
    if (st == LADLE_OK && ladle_type_is_varlen(type.id))
      st = ladle_buffer_alloc(a, (size_t)chars_size, &c.owners[2], err);
    if (st == LADLE_OK && w == 0 && !ladle_type_is_varlen(type.id))
      st = ladle_err_set(err, LADLE_ENOTSUP, "type %s has no column storage yet",
                         ladle_dtype_name(type, NULL, 0));
    if (st != LADLE_OK) {
      ladle_column_release(&c);
      return st;
    }
    c.validity = c.owners[0] ? c.owners[0]->data : NULL;
    c.values = c.owners[1]->data;
    c.chars = c.owners[2] ? c.owners[2]->data : NULL;
    *out = c;
    return LADLE_OK;
  }
  ladle_status st = LADLE_OK;
  if (nullable || type.id == LADLE_TYPE_NULL) {
    st = ladle_buffer_alloc(a, (size_t)ladle_bitmap_bytes(length), &c.owners[0], err);
    if (st != LADLE_OK) goto fail;
    memset(c.owners[0]->data, type.id == LADLE_TYPE_NULL ? 0 : 0xff,
           (size_t)ladle_bitmap_bytes(length));
    c.validity = c.owners[0]->data;
    if (type.id == LADLE_TYPE_NULL) c.null_count = length;
  }
  if (type.id == LADLE_TYPE_LIST) {
    /* offsets; an empty child until ladle_column_set_child gives the elements */
    if (type.child == NULL) {
      st = ladle_err_set(err, LADLE_EINVAL, "list type without a child type");
      goto fail;
    }
    st = ladle_buffer_alloc(a, (size_t)(length + 1) * 8, &c.owners[1], err);
    if (st != LADLE_OK) goto fail;
    c.values = c.owners[1]->data;
    ((int64_t *)c.owners[1]->data)[0] = 0;
    ladle_column empty;
    st = ladle_column_alloc(*type.child, 0, false, 0, &empty, err);
    if (st == LADLE_OK) st = ladle_column_set_child(&c, &empty, err);
    if (st != LADLE_OK) goto fail;
  } else if (ladle_type_is_varlen(type.id)) {
    st = ladle_buffer_alloc(a, (size_t)(length + 1) * 8, &c.owners[1], err);
    if (st != LADLE_OK) goto fail;
    c.values = c.owners[1]->data;
    ((int64_t *)c.owners[1]->data)[0] = 0;
    st = ladle_buffer_alloc(a, (size_t)chars_size, &c.owners[2], err);
    if (st != LADLE_OK) goto fail;
    c.chars = c.owners[2]->data;
  } else if (type.id != LADLE_TYPE_NULL) {
    size_t w = ladle_type_width(type.id);
    if (w == 0) {
      st = ladle_err_set(err, LADLE_ENOTSUP, "type %s has no column storage yet",
                         ladle_dtype_name(type, NULL, 0));
      goto fail;
    }
    st = ladle_buffer_alloc(a, (size_t)length * w, &c.owners[1], err);
    if (st != LADLE_OK) goto fail;
    c.values = c.owners[1]->data;
  }
  *out = c;
  return LADLE_OK;
fail:
  ladle_column_release(&c);
  return st;
}

ladle_status ladle_column_add_validity(ladle_column *c, ladle_error *err) {
  if (c->validity != NULL) return LADLE_OK;
  ladle_buffer *b;
  LADLE_RETURN_NOT_OK(ladle_buffer_alloc(NULL, (size_t)ladle_bitmap_bytes(c->length), &b, err));
  memset(b->data, 0xff, (size_t)ladle_bitmap_bytes(c->length));
  ladle_buffer_release(c->owners[0]);
  c->owners[0] = b;
  c->validity = b->data;
  return LADLE_OK;
}

void ladle_column_finish_nulls(ladle_column *c) {
  if (c->validity == NULL) {
    c->null_count = 0;
    return;
  }
  c->null_count = ladle_bitmap_count_unset(c->validity, c->length);
  if (c->null_count == 0 && c->type.id != LADLE_TYPE_NULL) {
    c->validity = NULL;
    ladle_buffer_release(c->owners[0]);
    c->owners[0] = NULL;
  }
}

ladle_status ladle_column_nulls(ladle_dtype type, int64_t length, ladle_column *out,
                                ladle_error *err) {
  ladle_column c;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(type, length, true, 0, &c, err));
  memset(LADLE_COL_VALIDITY_MUT(&c), 0, (size_t)ladle_bitmap_bytes(length));
  c.null_count = length;
  if (ladle_type_is_varlen(type.id) || type.id == LADLE_TYPE_LIST)
    memset(LADLE_COL_MUT(&c, int64_t), 0, (size_t)(length + 1) * 8);
  else if (c.values != NULL)
    memset(LADLE_COL_MUT(&c, char), 0, (size_t)length * ladle_type_width(type.id));
  *out = c;
  return LADLE_OK;
}

void ladle_column_release(ladle_column *c) {
  if (c == NULL) return;
  for (int i = 0; i < 3; i++) ladle_buffer_release(c->owners[i]);
  for (int i = 0; i < 2; i++) ladle_buffer_release(c->vowners[i]);
  memset(c, 0, sizeof *c);
}

void ladle_column_copy_ref(const ladle_column *src, ladle_column *dst) {
  *dst = *src;
  for (int i = 0; i < 3; i++) ladle_buffer_ref(dst->owners[i]);
  for (int i = 0; i < 2; i++) ladle_buffer_ref(dst->vowners[i]);
}

static void drop_views(ladle_column *c) {
  for (int i = 0; i < 2; i++) ladle_buffer_release(c->vowners[i]);
  c->vowners[0] = c->vowners[1] = NULL;
  c->views = NULL;
  c->vbufs = NULL;
}

ladle_status ladle_column_slice(const ladle_column *src, int64_t offset, int64_t length,
                                ladle_column *out, ladle_error *err) {
  if (offset < 0 || length < 0 || offset + length > src->length)
    return ladle_err_set(err, LADLE_EINVAL, "slice [%lld, +%lld) out of a column of %lld",
                         (long long)offset, (long long)length, (long long)src->length);
  ladle_column c;
  ladle_column_copy_ref(src, &c);
  c.length = length;
  if (src->views != NULL) c.views = src->views + 16 * offset;
  if (ladle_column_view_only(src))
    ; /* no offsets */
  else if (ladle_type_is_varlen(src->type.id) || src->type.id == LADLE_TYPE_LIST)
    c.values = (const int64_t *)src->values + offset;
  else if (src->values != NULL)
    c.values = (const char *)src->values + offset * (int64_t)ladle_type_width(src->type.id);
  if (src->validity != NULL) {
    if (offset % 8 == 0) {
      c.validity = src->validity + offset / 8;
    } else {
      ladle_buffer *b;
      ladle_status st = ladle_buffer_alloc(NULL, (size_t)ladle_bitmap_bytes(length), &b, err);
      if (st != LADLE_OK) {
        ladle_column_release(&c);
        return st;
      }
      uint8_t *bits = b->data;
      memset(bits, 0, (size_t)ladle_bitmap_bytes(length));
      for (int64_t i = 0; i < length; i++)
        if (ladle_bit_get(src->validity, offset + i)) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
      ladle_buffer_release(c.owners[0]);
      c.owners[0] = b;
      c.validity = bits;
    }
    c.null_count = ladle_bitmap_count_unset(c.validity, length);
  } else {
    c.null_count = 0;
  }
  *out = c;
  return LADLE_OK;
}

/* Are the pieces back-to-back views of the same buffers (as the morsels of one
 * column are)? Then their concatenation is a view too. */
static bool concat_as_view(const ladle_column *cols, size_t n, ladle_column *out) {
  if (n == 0) return false;
  for (size_t k = 0; k < n; k++)
    if (ladle_column_view_only(&cols[k])) return false;
  size_t w = ladle_type_is_varlen(cols[0].type.id) ? 8 : ladle_type_width(cols[0].type.id);
  if (w == 0) return false;
  int64_t length = cols[0].length, nulls = cols[0].null_count;
  bool valid_all = cols[0].validity == NULL;
  for (size_t k = 1; k < n; k++) {
    const ladle_column *a = &cols[k - 1], *b = &cols[k];
    if (b->type.id != a->type.id || b->owners[1] != a->owners[1] || b->owners[2] != a->owners[2])
      return false;
    if ((const char *)a->values + a->length * (int64_t)w != (const char *)b->values) return false;
    if (valid_all != (b->validity == NULL)) return false;
    if (!valid_all && (b->owners[0] != a->owners[0] || a->length % 8 != 0 ||
                       a->validity + a->length / 8 != b->validity))
      return false;
    length += b->length;
    nulls += b->null_count;
  }
  bool views = cols[0].views != NULL;
  for (size_t k = 1; views && k < n; k++)
    views = cols[k].vowners[1] == cols[0].vowners[1] &&
            cols[k - 1].views + 16 * cols[k - 1].length == cols[k].views;
  ladle_column_copy_ref(&cols[0], out);
  out->length = length;
  out->null_count = nulls;
  if (!views) drop_views(out);
  return true;
}

bool ladle_column_concat_view(const ladle_column *cols, size_t n, ladle_column *out) {
  return concat_as_view(cols, n, out);
}

/* Gives list column c its elements (when st is OK) and hands it out, or
 * releases it. */
static ladle_status finish_list(ladle_column *c, ladle_column *child, ladle_status st,
                                ladle_column *out, ladle_error *err) {
  if (st == LADLE_OK) st = ladle_column_set_child(c, child, err);
  if (st != LADLE_OK) {
    ladle_column_release(c);
    return st;
  }
  ladle_column_finish_nulls(c);
  *out = *c;
  return LADLE_OK;
}

/* Offsets rebased piece by piece; elements are the concatenation of each
 * piece's element range. */
static ladle_status concat_lists(const ladle_column *cols, size_t n, ladle_column *out,
                                 ladle_error *err) {
  int64_t length = 0;
  bool nullable = false;
  for (size_t k = 0; k < n; k++) {
    length += cols[k].length;
    nullable |= cols[k].validity != NULL;
  }
  ladle_column *parts = calloc(n, sizeof *parts);
  if (parts == NULL) return LADLE_OOM(err, "list concat");
  ladle_column c, child;
  memset(&child, 0, sizeof child);
  ladle_status st = ladle_column_alloc(cols[0].type, length, nullable, 0, &c, err);
  size_t made = 0;
  int64_t row = 0, base = 0;
  for (size_t k = 0; st == LADLE_OK && k < n; k++, made++) {
    const ladle_column *s = &cols[k];
    const int64_t *so = s->values;
    int64_t lo = so[0], hi = so[s->length];
    st = ladle_column_slice(s->child, lo, hi - lo, &parts[k], err);
    if (st != LADLE_OK) break;
    int64_t *o = LADLE_COL_MUT(&c, int64_t);
    for (int64_t i = 0; i < s->length; i++) o[row + i + 1] = so[i + 1] - lo + base;
    if (nullable)
      for (int64_t i = 0; i < s->length; i++)
        ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), row + i, ladle_column_valid(s, i));
    row += s->length;
    base += hi - lo;
  }
  if (st == LADLE_OK) st = ladle_column_concat(parts, n, &child, err);
  for (size_t k = 0; k < made; k++) ladle_column_release(&parts[k]);
  free(parts);
  return finish_list(&c, &child, st, out, err);
}

/* Piece k's values (and bytes) into c at its row and byte position. */
typedef struct concat_job {
  const ladle_column *cols;
  ladle_column *c;
  int64_t *row, *pos; /* per piece: first row and first byte in c */
} concat_job;

static ladle_status concat_piece(void *vctx, size_t k, ladle_error *err) {
  LADLE_UNUSED(err);
  concat_job *j = vctx;
  const ladle_column *s = &j->cols[k];
  ladle_column *c = j->c;
  int64_t row = j->row[k], pos = j->pos[k];
  size_t w = ladle_type_width(c->type.id);
  if (ladle_type_is_varlen(c->type.id)) {
    const int64_t *so = s->values;
    int64_t *o = LADLE_COL_MUT(c, int64_t);
    int64_t base = s->length > 0 ? so[0] : 0, len = s->length > 0 ? so[s->length] - base : 0;
    memcpy(LADLE_COL_CHARS_MUT(c) + pos, s->chars + base, (size_t)len);
    for (int64_t i = 0; i < s->length; i++) o[row + i + 1] = so[i + 1] - base + pos;
  } else if (w > 0) {
    memcpy(LADLE_COL_MUT(c, char) + row * (int64_t)w, s->values, (size_t)s->length * w);
  }
  return LADLE_OK;
}

ladle_status ladle_column_concat_pool(const ladle_column *cols, size_t n, ladle_pool *pool,
                                      ladle_column *out, ladle_error *err) {
  if (n == 1) {
    ladle_column_copy_ref(&cols[0], out);
    return LADLE_OK;
  }
  if (n > 1 && concat_as_view(cols, n, out)) return LADLE_OK;
  if (n > 0 && cols[0].type.id == LADLE_TYPE_LIST) return concat_lists(cols, n, out, err);
  /* view-only pieces (a result's strings, met by an exchange above them: a
   * window across ranks over Parquet strings) as offsets and bytes first */
  size_t vo = 0;
  for (size_t k = 0; k < n; k++) vo += ladle_column_view_only(&cols[k]);
  if (vo > 0) {
    ladle_column *plain = calloc(n, sizeof *plain);
    if (plain == NULL) return LADLE_OOM(err, "concat");
    size_t made = 0;
    ladle_status st = LADLE_OK;
    for (; made < n && st == LADLE_OK; made++) {
      st = ladle_column_unviewed(&cols[made], &plain[made], err);
      if (st != LADLE_OK) break;
    }
    if (st == LADLE_OK) st = ladle_column_concat_pool(plain, n, pool, out, err);
    for (size_t k = 0; k < made; k++) ladle_column_release(&plain[k]);
    free(plain);
    return st;
  }
  ladle_dtype type = n > 0 ? cols[0].type : ladle_dtype_make(LADLE_TYPE_NULL);
  int64_t length = 0, chars = 0;
  bool nullable = false;
  int64_t *row = malloc(LADLE_MAX(n, 1) * 2 * sizeof *row);
  if (row == NULL) return LADLE_OOM(err, "concat");
  int64_t *pos = row + LADLE_MAX(n, 1);
  for (size_t k = 0; k < n; k++) {
    row[k] = length;
    pos[k] = chars;
    length += cols[k].length;
    nullable |= cols[k].validity != NULL;
    if (ladle_type_is_varlen(type.id) && cols[k].length > 0)
      chars +=
          ((const int64_t *)cols[k].values)[cols[k].length] - ((const int64_t *)cols[k].values)[0];
  }
  ladle_column c;
  ladle_status st = ladle_column_alloc(type, length, nullable, chars, &c, err);
  if (st != LADLE_OK) {
    free(row);
    return st;
  }
  /* the pieces' values side by side (in parallel when they are big enough
   * to pay for it: 2 MB, q10's 114k customers' comments), then the validity bits, whose bytes
   * pieces may share */
  concat_job j = {cols, &c, row, pos};
  int64_t bytes = length * 8 + chars; /* about: offsets or values, and characters */
  st = ladle_pool_run(bytes >= ((int64_t)1 << 21) ? pool : NULL, n, concat_piece, &j, err);
  free(row);
  if (st != LADLE_OK) {
    ladle_column_release(&c);
    return st;
  }
  int64_t r = 0;
  for (size_t k = 0; nullable && k < n; k++) {
    const ladle_column *s = &cols[k];
    uint8_t *bits = LADLE_COL_VALIDITY_MUT(&c);
    if (s->validity != NULL && r % 8 == 0) {
      memcpy(bits + r / 8, s->validity, (size_t)ladle_bitmap_bytes(s->length));
      /* the copy may have cleared trailing bits past this piece; they are
       * rewritten by the next piece */
    } else if (s->validity != NULL) {
      for (int64_t i = 0; i < s->length; i++)
        ladle_bit_set(bits, r + i, ladle_bit_get(s->validity, i));
    } else {
      for (int64_t i = 0; i < s->length; i++) ladle_bit_set(bits, r + i, true);
    }
    r += s->length;
  }
  ladle_column_finish_nulls(&c);
  *out = c;
  return LADLE_OK;
}

ladle_status ladle_column_concat(const ladle_column *cols, size_t n, ladle_column *out,
                                 ladle_error *err) {
  return ladle_column_concat_pool(cols, n, NULL, out, err);
}

static ladle_status gather_list_pieces(const ladle_column *src, const ladle_pieces *px,
                                       const int64_t *idx, int64_t n, ladle_column *out,
                                       ladle_error *err);

/* Rows idx[i] of a LIST column (-1: null): the gather over pieces, of one. */
static ladle_status gather_list(const ladle_column *src, const int64_t *idx, int64_t n,
                                ladle_column *out, ladle_error *err) {
  ladle_pieces px;
  LADLE_RETURN_NOT_OK(ladle_pieces_index(src, 1, &px, err));
  ladle_status st = gather_list_pieces(src, &px, idx, n, out, err);
  ladle_pieces_release(&px);
  return st;
}

/* Copies the len bytes at p (source bytes end at `end`) to d + pos (the
 * destination holds `cap` bytes). A short string moves as one 16-byte block
 * where both ends have room: the next string overwrites the excess. */
static inline void copy_str(char *d, int64_t pos, int64_t cap, const char *p, const char *end,
                            int64_t len) {
  if (len <= 16 && pos + 16 <= cap && end - p >= 16)
    memcpy(d + pos, p, 16);
  else
    memcpy(d + pos, p, (size_t)len);
}

/* Fixed-width values of src at idx into c; with neg, index -1 gives 0 (the
 * compiler unswitches the loops on neg, so the common case has no test). */
/* Rows [a, e) of a fixed-width gather into c. */
static void gather_fixed(const ladle_column *src, const int64_t *idx, int64_t a, int64_t n,
                         bool neg, ladle_column *c) {
  switch (ladle_type_width(src->type.id)) {
#define GATHER_W(W, T)                                                        \
  case W: {                                                                   \
    const T *s = src->values;                                                 \
    T *d = LADLE_COL_MUT(c, T);                                               \
    for (int64_t i = a; i < n; i++) d[i] = neg && idx[i] < 0 ? 0 : s[idx[i]]; \
    break;                                                                    \
  }
    GATHER_W(1, uint8_t)
    GATHER_W(2, uint16_t)
    GATHER_W(4, uint32_t)
    GATHER_W(8, uint64_t)
#undef GATHER_W
    case 16: {
      const uint64_t *s = src->values;
      uint64_t *d = LADLE_COL_MUT(c, uint64_t);
      for (int64_t i = a; i < n; i++) {
        bool z = neg && idx[i] < 0;
        d[2 * i] = z ? 0 : s[2 * idx[i]];
        d[2 * i + 1] = z ? 0 : s[2 * idx[i] + 1];
      }
      break;
    }
    default:
      break;
  }
}

/* The validity of rows idx[a..n) of src (-1: null) into bits (a a multiple of 8). */
static void gather_validity(const ladle_column *src, const int64_t *idx, int64_t a, int64_t n,
                            uint8_t *bits) {
  memset(bits + (a >> 3), 0, (size_t)(ladle_bitmap_bytes(n) - (a >> 3)));
  for (int64_t i = a; i < n; i++)
    if (idx[i] >= 0 && ladle_column_valid(src, idx[i])) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
}

void ladle_column_gather_rows(const ladle_column *src, const int64_t *idx, int64_t a, int64_t e,
                              bool neg, ladle_column *c) {
  gather_fixed(src, idx, a, e, neg, c);
  if (c->validity != NULL && src->type.id != LADLE_TYPE_NULL)
    gather_validity(src, idx, a, e, LADLE_COL_VALIDITY_MUT(c));
}

ladle_status ladle_column_gather(const ladle_column *src, const int64_t *idx, int64_t n,
                                 ladle_column *out, ladle_error *err) {
  if (src->type.id == LADLE_TYPE_LIST) return gather_list(src, idx, n, out, err);
  if (n < 0) return ladle_err_set(err, LADLE_EINVAL, "gather of %lld rows", (long long)n);
  uint64_t any = 0; /* the sign bit: some index is -1 (a null row) */
  for (int64_t i = 0; i < n; i++) any |= (uint64_t)idx[i];
  bool neg = any >> 63;
  bool nullable = neg || src->validity != NULL || src->type.id == LADLE_TYPE_NULL;
  int64_t chars = 0;
  if (ladle_type_is_varlen(src->type.id)) {
    const int64_t *so = src->values;
    if (neg) {
      for (int64_t i = 0; i < n; i++)
        if (idx[i] >= 0) chars += so[idx[i] + 1] - so[idx[i]];
    } else {
      for (int64_t i = 0; i < n; i++) chars += so[idx[i] + 1] - so[idx[i]];
    }
  }
  ladle_column c;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(src->type, n, nullable, chars, &c, err));
  if (ladle_type_is_varlen(src->type.id)) {
    int64_t *o = LADLE_COL_MUT(&c, int64_t);
    char *d = LADLE_COL_CHARS_MUT(&c);
    const int64_t *so = src->values;
    int64_t pos = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t j = idx[i];
      if (j >= 0) {
        int64_t len = so[j + 1] - so[j];
        copy_str(d, pos, chars, src->chars + so[j], src->chars + so[src->length], len);
        pos += len;
      }
      o[i + 1] = pos;
    }
  } else {
    gather_fixed(src, idx, 0, n, neg, &c);
  }
  if (nullable && src->type.id != LADLE_TYPE_NULL)
    gather_validity(src, idx, 0, n, LADLE_COL_VALIDITY_MUT(&c));
  ladle_column_finish_nulls(&c);
  *out = c;
  return LADLE_OK;
}

ladle_status ladle_sequence_check(int64_t start, int64_t n, ladle_dtype type, ladle_error *err) {
  int64_t lo, hi; /* the type's range, clipped to int64 */
  switch (type.id) {
    case LADLE_TYPE_INT32:
      lo = INT32_MIN;
      hi = INT32_MAX;
      break;
    case LADLE_TYPE_UINT32:
      lo = 0;
      hi = UINT32_MAX;
      break;
    case LADLE_TYPE_INT64:
      lo = INT64_MIN;
      hi = INT64_MAX;
      break;
    case LADLE_TYPE_UINT64:
      lo = 0;
      hi = INT64_MAX;
      break;
    default:
      return ladle_err_set(err, LADLE_ENOTSUP, "sequence of type %s",
                           ladle_dtype_name(type, NULL, 0));
  }
  /* the last value, start + n - 1, fits (hi - start counted unsigned: it
   * may pass INT64_MAX) */
  if (n < 0 ||
      (n > 0 && (start < lo || start > hi || (uint64_t)(n - 1) > (uint64_t)hi - (uint64_t)start)))
    return ladle_err_set(err, LADLE_EINVAL, "sequence of %lld values from %lld overflows %s",
                         (long long)n, (long long)start, ladle_dtype_name(type, NULL, 0));
  return LADLE_OK;
}

static _Atomic uint64_t view_only_made;
uint64_t ladle_view_only_columns(void) { return atomic_load(&view_only_made); }
void ladle_view_only_made(void) {
  atomic_fetch_add_explicit(&view_only_made, 1, memory_order_relaxed);
}

/* A view-only column of n rows (its views, and with `nullable` its validity,
 * to be written) sharing src's data buffers. */
static ladle_status views_like(const ladle_column *src, int64_t n, bool nullable, ladle_column *c,
                               ladle_error *err) {
  memset(c, 0, sizeof *c);
  c->type = src->type;
  c->length = n;
  ladle_status st = ladle_buffer_alloc(NULL, (size_t)LADLE_MAX(n, 1) * 16, &c->vowners[0], err);
  if (st == LADLE_OK && nullable)
    st = ladle_buffer_alloc(NULL, (size_t)ladle_bitmap_bytes(n), &c->owners[0], err);
  if (st != LADLE_OK) {
    ladle_column_release(c);
    return st;
  }
  c->views = c->vowners[0]->data;
  c->validity = nullable ? c->owners[0]->data : NULL;
  c->vowners[1] = ladle_buffer_ref(src->vowners[1]);
  c->vbufs = src->vbufs;
  return LADLE_OK;
}

ladle_status ladle_column_gather_views(const ladle_column *src, const int64_t *idx, int64_t n,
                                       ladle_column *out, ladle_error *err) {
  if (src->views == NULL || src->type.id != LADLE_TYPE_STRING || n < 0)
    return ladle_err_set(err, LADLE_EINVAL, "gather of views from a column without them");
  ladle_column c;
  ladle_status st = views_like(src, n, false, &c, err);
  if (st != LADLE_OK) return st;
  uint8_t *v = c.vowners[0]->data;
  const uint8_t *sv = src->views;
  uint64_t any = 0; /* the sign bit: some index is -1 (a null row) */
  for (int64_t i = 0; i < n; i++) {
    int64_t j = idx[i];
    any |= (uint64_t)j;
    if (j >= 0)
      memcpy(v + 16 * i, sv + 16 * j, 16);
    else
      memset(v + 16 * i, 0, 16);
  }
  if ((any >> 63) || src->validity != NULL) {
    st = ladle_buffer_alloc(NULL, (size_t)ladle_bitmap_bytes(n), &c.owners[0], err);
    if (st != LADLE_OK) {
      ladle_column_release(&c);
      return st;
    }
    c.validity = c.owners[0]->data;
    gather_validity(src, idx, 0, n, c.owners[0]->data);
  }
  ladle_column_finish_nulls(&c);
  ladle_view_only_made();
  *out = c;
  return LADLE_OK;
}

bool ladle_views_copy(const uint8_t *views, const ladle_viewbufs *vb, int64_t a, int64_t e,
                      int64_t *o, char *chars, int64_t limit) {
  int64_t pos = o[a];
  for (int64_t i = a; i < e; i++) {
    int32_t len;
    const char *src = ladle_view_bytes(views + 16 * i, vb, &len);
    if (len < 0 || (src == NULL && len > 0)) return false;
    if (len <= 12 && pos + 12 <= limit)
      memcpy(chars + pos, src, 12); /* the whole inline part: a fixed-size move;
                                       the next string overwrites the excess */
    else
      memcpy(chars + pos, src, (size_t)len);
    pos += len;
    o[i + 1] = pos;
  }
  return true;
}

ladle_status ladle_column_unviewed(const ladle_column *c, ladle_column *out, ladle_error *err) {
  if (ladle_column_view_only(c)) return ladle_column_from_views(c, out, err);
  ladle_column_copy_ref(c, out);
  return LADLE_OK;
}

ladle_status ladle_column_from_views(const ladle_column *c, ladle_column *out, ladle_error *err) {
  int64_t chars = 0;
  for (int64_t i = 0; i < c->length; i++) {
    int32_t len;
    memcpy(&len, c->views + 16 * i, 4);
    chars += len;
  }
  ladle_column s;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(c->type, c->length, false, chars, &s, err));
  if (!ladle_views_copy(c->views, c->vbufs, 0, c->length, LADLE_COL_MUT(&s, int64_t),
                        LADLE_COL_CHARS_MUT(&s), chars)) {
    ladle_column_release(&s);
    return ladle_err_set(err, LADLE_ECORRUPT, "a string view points outside its buffers");
  }
  s.validity = c->validity;
  s.owners[0] = ladle_buffer_ref(c->owners[0]);
  s.null_count = c->null_count;
  s.views = c->views;
  s.vbufs = c->vbufs;
  s.vowners[0] = ladle_buffer_ref(c->vowners[0]);
  s.vowners[1] = ladle_buffer_ref(c->vowners[1]);
  *out = s;
  return LADLE_OK;
}

#if defined(__AVX2__)
#include <immintrin.h>
#include <pthread.h>

/* Compaction 8 keep bytes at a time: their bits select lanes of a vector,
 * a permutation moves the kept lanes to the front, the whole vector is stored
 * and the cursor moves by the count kept. perm32[m] orders eight 32-bit lanes
 * by mask m; perm64[m] four 64-bit lanes (as pairs of 32-bit ones). */
static uint32_t perm32[256][8] __attribute__((aligned(32)));
static uint32_t perm64[16][8] __attribute__((aligned(32)));
static pthread_once_t perm_once = PTHREAD_ONCE_INIT;

static void perm_init(void) {
  for (int m = 0; m < 256; m++) {
    int k = 0;
    for (int b = 0; b < 8; b++)
      if (m & (1 << b)) perm32[m][k++] = (uint32_t)b;
    while (k < 8) perm32[m][k++] = 0;
  }
  for (int m = 0; m < 16; m++) {
    int k = 0;
    for (int b = 0; b < 4; b++)
      if (m & (1 << b)) {
        perm64[m][k++] = (uint32_t)(2 * b);
        perm64[m][k++] = (uint32_t)(2 * b + 1);
      }
    while (k < 8) perm64[m][k++] = 0;
  }
}

/* 32 keep bytes (0/1) as 32 bits */
static inline uint32_t keep_bits32(const uint8_t *keep) {
  __m256i v = _mm256_loadu_si256((const __m256i *)keep);
  return (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(v, 7));
}

/* Compacts rows [0, *i) of s into d while 32 rows' worth of stores fit below
 * n_keep; returns with *i and *k where the scalar loop goes on. */
static void compact_simd(int w, const void *src, void *dst, const uint8_t *keep, int64_t n,
                         int64_t n_keep, int64_t *pi, int64_t *pk) {
  pthread_once(&perm_once, perm_init);
  int64_t i = 0, k = 0;
  if (w == 4) {
    const uint32_t *s = src;
    uint32_t *d = dst;
    for (; i + 32 <= n && k + 32 <= n_keep; i += 32) {
      uint32_t mm = keep_bits32(keep + i);
      for (int g = 0; g < 4; g++) {
        uint32_t m = (mm >> (8 * g)) & 0xFF;
        __m256i v = _mm256_loadu_si256((const __m256i *)(s + i + 8 * g));
        __m256i p = _mm256_load_si256((const __m256i *)perm32[m]);
        _mm256_storeu_si256((__m256i *)(d + k), _mm256_permutevar8x32_epi32(v, p));
        k += __builtin_popcount(m);
      }
    }
  } else {
    const uint64_t *s = src;
    uint64_t *d = dst;
    for (; i + 32 <= n && k + 32 <= n_keep; i += 32) {
      uint32_t mm = keep_bits32(keep + i);
      for (int g = 0; g < 8; g++) {
        uint32_t m = (mm >> (4 * g)) & 0xF;
        __m256i v = _mm256_loadu_si256((const __m256i *)(s + i + 4 * g));
        __m256i p = _mm256_load_si256((const __m256i *)perm64[m]);
        _mm256_storeu_si256((__m256i *)(d + k), _mm256_permutevar8x32_epi32(v, p));
        k += __builtin_popcount(m);
      }
    }
  }
  *pi = i;
  *pk = k;
}
#endif

/* Rows [i, end of the run of kept rows starting at i): 8 keep bytes a step
 * while they are all kept. */
static inline int64_t run_end(const uint8_t *keep, int64_t i, int64_t n) {
  const uint64_t ones = 0x0101010101010101ull;
  while (i + 8 <= n) {
    uint64_t w;
    memcpy(&w, keep + i, 8);
    if (w != ones) break;
    i += 8;
  }
  while (i < n && keep[i]) i++;
  return i;
}

/* Appends bits to a bitmap 64 at a time: the pending ones in a word, stored
 * whole when it fills. */
typedef struct bit_writer {
  uint8_t *bits;
  int64_t words; /* 64-bit words stored */
  uint64_t acc;  /* pending bits, low first */
  int nb;        /* how many */
} bit_writer;

/* The low cnt bits of got (cnt <= 32, the others zero). */
static inline void bits_append(bit_writer *b, uint64_t got, int cnt) {
  int tot = b->nb + cnt;
  b->acc |= got << b->nb;
  if (tot < 64) {
    b->nb = tot;
    return;
  }
  memcpy(b->bits + 8 * b->words++, &b->acc, 8);
  int used = 64 - b->nb; /* of got's bits, in the word stored */
  b->acc = used < cnt ? got >> used : 0;
  b->nb = tot - 64;
}

/* The pending bits stored, for a bitmap of n bits. */
static inline void bits_flush(bit_writer *b, int64_t n) {
  int64_t tail = ladle_bitmap_bytes(n) - 8 * b->words;
  if (tail > 0) memcpy(b->bits + 8 * b->words, &b->acc, (size_t)LADLE_MIN(tail, 8));
}

/* The kept rows' 16-byte values (n rows, n_keep kept), in order: branch-free
 * (every row written at the cursor, which moves by its keep byte) while a
 * write past the last kept row cannot happen, then the rest by branch. */
static void compact16(const uint64_t *s, const uint8_t *keep, int64_t n, int64_t n_keep,
                      uint64_t *d) {
  int64_t i = 0, k = 0;
  for (; i < n && k < n_keep - 1; i++) {
    d[2 * k] = s[2 * i];
    d[2 * k + 1] = s[2 * i + 1];
    k += keep[i];
  }
  for (; i < n && k < n_keep; i++)
    if (keep[i]) {
      d[2 * k] = s[2 * i];
      d[2 * k + 1] = s[2 * i + 1];
      k++;
    }
}

/* The bits of the 4-bit value v where the 4-bit mask m has them, packed low
 * (a software pext of 4 bits), at [m << 4 | v]. */
static uint8_t pext4[256];

static void pext4_init(void) {
  for (int m = 0; m < 16; m++)
    for (int v = 0; v < 16; v++) {
      int r = 0, k = 0;
      for (int b = 0; b < 4; b++)
        if (m >> b & 1) r |= (v >> b & 1) << k++;
      pext4[m << 4 | v] = (uint8_t)r;
    }
}

/* Whether the CPU's pext is microcoded (AMD before Zen 3: tens to hundreds of
 * cycles, where a table of nibbles takes a few). */
static bool slow_pext(void) {
#if defined(__BMI2__) && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  return __builtin_cpu_is("amdfam15h") || __builtin_cpu_is("amdfam17h");
#else
  return true;
#endif
}

static pthread_once_t pext_once = PTHREAD_ONCE_INIT;
static bool pext_slow;

static void pext_setup(void) {
  pext4_init();
  pext_slow = slow_pext();
}

/* The kept rows' validity bits into out (a bitmap of n_keep bits, every byte
 * written). Branch-free: each row's bit, zero unless kept, appended at the
 * output cursor, which moves by the keep byte (a bit per row with a branch on
 * a random mask mispredicts a third). */
static void compact_bits(const uint8_t *sv, const uint8_t *keep, int64_t n, int64_t n_keep,
                         uint8_t *out) {
  bit_writer b = {out, 0, 0, 0};
  int64_t i = 0;
  pthread_once(&pext_once, pext_setup);
  /* 8 rows a step: their keep bytes (0 or 1) as a mask (a multiply gathers
   * their low bits into the top byte), the validity byte's kept bits
   * extracted by it: pext where it is fast, else two nibbles by the table */
  for (; i + 8 <= n; i += 8) {
    uint64_t kb;
    memcpy(&kb, keep + i, 8);
    unsigned km = (unsigned)(((kb & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56);
    unsigned v = sv[i >> 3], got;
#if defined(__BMI2__)
    if (!pext_slow) {
      got = _pext_u32(v, km);
    } else
#endif
    {
      unsigned lo = pext4[(km & 15) << 4 | (v & 15)], hi = pext4[(km >> 4) << 4 | (v >> 4)];
      got = lo | hi << __builtin_popcount(km & 15);
    }
    bits_append(&b, got, __builtin_popcount(km));
  }
  for (; i < n; i++) {
    uint64_t kp = keep[i] != 0;
    bits_append(&b, (uint64_t)(sv[i >> 3] >> (i & 7)) & kp & 1u, (int)kp);
  }
  bits_flush(&b, n_keep);
}

ladle_status ladle_column_compact(const ladle_column *src, const uint8_t *keep, int64_t n_keep,
                                  ladle_column *out, ladle_error *err) {
  int64_t n = src->length;
  if (src->type.id == LADLE_TYPE_LIST || n_keep < 0 || n_keep > n)
    return ladle_err_set(err, LADLE_EINVAL, "compact of %lld of %lld rows", (long long)n_keep,
                         (long long)n);
  if (src->type.id == LADLE_TYPE_NULL) return ladle_column_nulls(src->type, n_keep, out, err);
  bool nullable = src->validity != NULL;
  int64_t chars = 0;
  const int64_t *so = src->values;
  if (ladle_type_is_varlen(src->type.id))
    for (int64_t i = 0; i < n;) { /* by runs of kept rows, as the copy below */
      if (!keep[i]) {
        i++;
        continue;
      }
      int64_t j = run_end(keep, i, n);
      chars += so[j] - so[i];
      i = j;
    }
  ladle_column c;
  LADLE_RETURN_NOT_OK(ladle_column_alloc(src->type, n_keep, nullable, chars, &c, err));
  if (ladle_type_is_varlen(src->type.id)) {
    /* by runs of kept rows: one copy of a run's bytes, its offsets shifted */
    int64_t *o = LADLE_COL_MUT(&c, int64_t);
    char *d = LADLE_COL_CHARS_MUT(&c);
    int64_t pos = 0, k = 0;
    for (int64_t i = 0; i < n && k < n_keep;) {
      if (!keep[i]) {
        i++;
        continue;
      }
      int64_t j = run_end(keep, i, n);
      int64_t len = so[j] - so[i], shift = pos - so[i];
      memcpy(d + pos, src->chars + so[i], (size_t)len);
      for (int64_t r = i + 1; r <= j; r++) o[++k] = so[r] + shift;
      pos += len;
      i = j;
    }
  } else {
    switch (ladle_type_width(src->type.id)) {
      /* branch-free: every row is written, the cursor moves by its keep byte;
       * the last write may land one past the kept rows, so it stops early
       * (4- and 8-byte values go 32 rows a step first where AVX2 is there) */
#if defined(__AVX2__)
#define COMPACT_SIMD(W) \
  if (W == 4 || W == 8) compact_simd(W, s, d, keep, n, n_keep, &i, &k);
#else
#define COMPACT_SIMD(W)
#endif
#define COMPACT_W(W, T)                    \
  case W: {                                \
    const T *s = src->values;              \
    T *d = LADLE_COL_MUT(&c, T);           \
    int64_t k = 0, i = 0;                  \
    COMPACT_SIMD(W)                        \
    for (; i < n && k < n_keep - 1; i++) { \
      d[k] = s[i];                         \
      k += keep[i];                        \
    }                                      \
    for (; i < n && k < n_keep; i++)       \
      if (keep[i]) d[k++] = s[i];          \
    break;                                 \
  }
      COMPACT_W(1, uint8_t)
      COMPACT_W(2, uint16_t)
      COMPACT_W(4, uint32_t)
      COMPACT_W(8, uint64_t)
#undef COMPACT_W
#undef COMPACT_SIMD
      case 16:
        compact16(src->values, keep, n, n_keep, LADLE_COL_MUT(&c, uint64_t));
        break;
      default:
        break;
    }
  }
  if (nullable) compact_bits(src->validity, keep, n, n_keep, LADLE_COL_VALIDITY_MUT(&c));
  ladle_column_finish_nulls(&c);
  *out = c;
  return LADLE_OK;
}

ladle_status ladle_column_compact_views(const ladle_column *src, const uint8_t *keep, int64_t n,
                                        ladle_column *out, ladle_error *err) {
  if (src->views == NULL || src->type.id != LADLE_TYPE_STRING || n < 0 || n > src->length)
    return ladle_err_set(err, LADLE_EINVAL, "compaction of views from a column without them");
  ladle_column c;
  LADLE_RETURN_NOT_OK(views_like(src, n, src->validity != NULL, &c, err));
  compact16((const uint64_t *)(const void *)src->views, keep, src->length, n,
            (uint64_t *)c.vowners[0]->data);
  if (src->validity != NULL)
    compact_bits(src->validity, keep, src->length, n, (uint8_t *)c.owners[0]->data);
  ladle_column_finish_nulls(&c);
  ladle_view_only_made();
  *out = c;
  return LADLE_OK;
}

ladle_status ladle_column_broadcast(const ladle_column *src, int64_t length, ladle_column *out,
                                    ladle_error *err) {
  if (src->length == length) {
    ladle_column_copy_ref(src, out);
    return LADLE_OK;
  }
  int64_t *idx = malloc((size_t)LADLE_MAX(length, 1) * sizeof *idx);
  if (idx == NULL) return LADLE_OOM(err, "broadcast indices");
  for (int64_t i = 0; i < length; i++) idx[i] = src->length > 0 ? 0 : -1;
  ladle_status st = ladle_column_gather(src, idx, length, out, err);
  free(idx);
  return st;
}

/* ------------------------------------------------ gathers over column pieces */

ladle_status ladle_pieces_index(const ladle_column *src, size_t nsrc, ladle_pieces *out,
                                ladle_error *err) {
  memset(out, 0, sizeof *out);
  out->n = nsrc;
  out->starts = malloc((nsrc + 1) * sizeof *out->starts);
  if (out->starts == NULL) return LADLE_OOM(err, "piece index");
  int64_t total = 0, shortest = INT64_MAX;
  for (size_t c = 0; c < nsrc; c++) {
    out->starts[c] = total;
    total += src[c].length;
    if (src[c].length > 0) shortest = LADLE_MIN(shortest, src[c].length);
  }
  out->starts[nsrc] = total;
  /* pages no longer than the shortest piece: a page overlaps at most two */
  out->shift = 0;
  while (shortest != INT64_MAX && ((int64_t)2 << out->shift) <= shortest && out->shift < 40)
    out->shift++;
  int64_t pages = (total >> out->shift) + 1;
  out->page = malloc((size_t)pages * sizeof *out->page);
  if (out->page == NULL) {
    ladle_pieces_release(out);
    return LADLE_OOM(err, "piece index");
  }
  size_t c = 0;
  for (int64_t p = 0; p < pages; p++) {
    int64_t row = p << out->shift;
    while (c + 1 < nsrc && out->starts[c + 1] <= row) c++;
    out->page[p] = (uint32_t)c;
  }
  return LADLE_OK;
}

void ladle_pieces_release(ladle_pieces *p) {
  free(p->starts);
  free(p->page);
  memset(p, 0, sizeof *p);
}

/* the piece holding row j, and j's row in it */
static inline size_t piece_of(const ladle_pieces *px, int64_t j, int64_t *local) {
  size_t c = px->page[j >> px->shift];
  while (px->starts[c + 1] <= j) c++;
  *local = j - px->starts[c];
  return c;
}

/* A list gather over pieces: each row's offsets from its piece, its
 * elements gathered over the pieces' children as pieces in turn (nested
 * lists recurse), never the whole column put together (a sort's parallel
 * gather did that once per output partition: quadratic in the morsels). */
static ladle_status gather_list_pieces(const ladle_column *src, const ladle_pieces *px,
                                       const int64_t *idx, int64_t n, ladle_column *out,
                                       ladle_error *err) {
  bool nullable = false;
  ladle_column *kids = malloc(px->n * sizeof *kids);
  if (kids == NULL) return LADLE_OOM(err, "list gather");
  for (size_t k = 0; k < px->n; k++) {
    kids[k] = *src[k].child; /* borrowed: the pieces' children as they are */
    nullable |= src[k].validity != NULL;
  }
  ladle_pieces cpx;
  ladle_status st = ladle_pieces_index(kids, px->n, &cpx, err);
  if (st != LADLE_OK) {
    free(kids);
    return st;
  }
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t l;
    if (idx[i] < 0) {
      nullable = true;
      continue;
    }
    const int64_t *so = src[piece_of(px, idx[i], &l)].values;
    total += so[l + 1] - so[l];
  }
  int64_t *eidx = malloc((size_t)LADLE_MAX(total, 1) * sizeof *eidx);
  ladle_column c, child;
  st = eidx == NULL ? LADLE_OOM(err, "list gather")
                    : ladle_column_alloc(src[0].type, n, nullable, 0, &c, err);
  if (st != LADLE_OK) {
    free(eidx);
    free(kids);
    ladle_pieces_release(&cpx);
    return st;
  }
  int64_t *o = LADLE_COL_MUT(&c, int64_t), pos = 0;
  o[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    bool valid = false;
    if (idx[i] >= 0) {
      int64_t l;
      size_t k = piece_of(px, idx[i], &l);
      const int64_t *so = src[k].values;
      for (int64_t e = so[l]; e < so[l + 1]; e++) eidx[pos++] = cpx.starts[k] + e;
      valid = ladle_column_valid(&src[k], l);
    }
    o[i + 1] = pos;
    if (nullable) ladle_bit_set(LADLE_COL_VALIDITY_MUT(&c), i, valid);
  }
  st = ladle_column_gather_pieces(kids, &cpx, eidx, total, &child, err);
  free(eidx);
  free(kids);
  ladle_pieces_release(&cpx);
  return finish_list(&c, &child, st, out, err);
}

ladle_status ladle_column_gather_pieces(const ladle_column *src, const ladle_pieces *px,
                                        const int64_t *idx, int64_t n, ladle_column *out,
                                        ladle_error *err) {
  if (px->n == 1) return ladle_column_gather(&src[0], idx, n, out, err);
  ladle_type_id t = px->n > 0 ? src[0].type.id : LADLE_TYPE_NULL;
  bool kids = t == LADLE_TYPE_LIST;
  for (size_t k = 0; kids && k < px->n; k++) kids = src[k].child != NULL;
  if (kids) return gather_list_pieces(src, px, idx, n, out, err);
  if (px->n == 0 || t == LADLE_TYPE_LIST || t == LADLE_TYPE_NULL) {
    /* rare here: the pieces put together first */
    ladle_column whole;
    LADLE_RETURN_NOT_OK(ladle_column_concat(src, px->n, &whole, err));
    ladle_status st = ladle_column_gather(&whole, idx, n, out, err);
    ladle_column_release(&whole);
    return st;
  }
  bool neg = false, nullable = false;
  for (int64_t i = 0; i < n; i++) neg |= idx[i] < 0;
  for (size_t c = 0; c < px->n; c++) nullable |= src[c].validity != NULL;
  nullable |= neg;
  /* each row's piece and row within it, found once for every pass below */
  uint32_t *pc = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *pc, false);
  int64_t *pl = ladle_scratch_alloc((size_t)LADLE_MAX(n, 1) * sizeof *pl, false);
  if (pc == NULL || pl == NULL) {
    ladle_scratch_free(pc);
    ladle_scratch_free(pl);
    return LADLE_OOM(err, "gather");
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t l = -1;
    pc[i] = idx[i] >= 0 ? (uint32_t)piece_of(px, idx[i], &l) : 0;
    pl[i] = l;
  }
  bool varlen = ladle_type_is_varlen(t);
  int64_t chars = 0;
  if (varlen)
    for (int64_t i = 0; i < n; i++)
      if (pl[i] >= 0) {
        const int64_t *so = src[pc[i]].values;
        chars += so[pl[i] + 1] - so[pl[i]];
      }
  ladle_column c;
  ladle_status st = ladle_column_alloc(src[0].type, n, nullable, chars, &c, err);
  if (st == LADLE_OK && varlen) {
    int64_t *o = LADLE_COL_MUT(&c, int64_t);
    char *d = LADLE_COL_CHARS_MUT(&c);
    int64_t pos = 0;
    o[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t j = pl[i];
      if (j >= 0) {
        const ladle_column *s = &src[pc[i]];
        const int64_t *so = s->values;
        int64_t len = so[j + 1] - so[j];
        copy_str(d, pos, chars, s->chars + so[j], s->chars + so[s->length], len);
        pos += len;
      }
      o[i + 1] = pos;
    }
  } else if (st == LADLE_OK) {
    size_t w = ladle_type_width(t);
    switch (w) {
#define GATHER_PW(W, T)                                                \
  case W: {                                                            \
    T *d = LADLE_COL_MUT(&c, T);                                       \
    for (int64_t i = 0; i < n; i++)                                    \
      d[i] = pl[i] < 0 ? (T)0 : ((const T *)src[pc[i]].values)[pl[i]]; \
    break;                                                             \
  }
      GATHER_PW(1, uint8_t)
      GATHER_PW(2, uint16_t)
      GATHER_PW(4, uint32_t)
      GATHER_PW(8, uint64_t)
#undef GATHER_PW
      default: {
        char *d = LADLE_COL_MUT(&c, char);
        for (int64_t i = 0; i < n; i++) {
          if (pl[i] < 0)
            memset(d + (size_t)i * w, 0, w);
          else
            memcpy(d + (size_t)i * w, (const char *)src[pc[i]].values + (size_t)pl[i] * w, w);
        }
      }
    }
  }
  if (st == LADLE_OK && nullable) {
    uint8_t *bits = LADLE_COL_VALIDITY_MUT(&c);
    if (n > 0) memset(bits, 0, (size_t)ladle_bitmap_bytes(n));
    for (int64_t i = 0; i < n; i++)
      if (pl[i] >= 0 && ladle_column_valid(&src[pc[i]], pl[i]))
        bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
  ladle_scratch_free(pc);
  ladle_scratch_free(pl);
  if (st != LADLE_OK) return st;
  ladle_column_finish_nulls(&c);
  *out = c;
  return LADLE_OK;
}

ladle_status ladle_column_slice_pieces(const ladle_column *src, const ladle_pieces *px,
                                       int64_t offset, int64_t length, ladle_column *out,
                                       ladle_error *err) {
  int64_t l0 = 0, l1 = 0;
  if (length <= 0 || px->n == 1) return ladle_column_slice(&src[0], offset, length, out, err);
  size_t a = piece_of(px, offset, &l0), b = piece_of(px, offset + length - 1, &l1);
  if (a == b) return ladle_column_slice(&src[a], l0, length, out, err);
  /* across pieces: the parts put together */
  size_t k = b - a + 1;
  ladle_column *parts = calloc(k, sizeof *parts);
  if (parts == NULL) return LADLE_OOM(err, "slice");
  ladle_status st = LADLE_OK;
  size_t made = 0;
  for (size_t c = a; c <= b && st == LADLE_OK; c++, made++) {
    int64_t from = c == a ? l0 : 0, to = c == b ? l1 + 1 : src[c].length;
    st = ladle_column_slice(&src[c], from, to - from, &parts[c - a], err);
  }
  if (st != LADLE_OK) made--;
  if (st == LADLE_OK) st = ladle_column_concat(parts, k, out, err);
  for (size_t i = 0; i < made; i++) ladle_column_release(&parts[i]);
  free(parts);
  return st;
}
