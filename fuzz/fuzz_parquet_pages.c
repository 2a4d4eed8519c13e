/* fuzz_parquet_pages.c — libFuzzer target that reaches the page decoders: the
 * input chooses a column (physical type, logical type, codec, optional or a
 * list) and up to eight pages (kind, encoding, counts, bytes), and the
 * harness wraps them in a well-formed file (tests/c/pq_craft.h: footer and
 * page headers written for them, the bytes compressed with the column's
 * codec unless the input asks for them stored as they are), which is then
 * read every way (fuzz_common.h). A random flip of a whole file mostly stops
 * at the footer; here every input is a file whose pages get decoded.
 *
 * Input layout (missing bytes read as 0):
 *   0 physical type  1 logical type (table below)  2 codec (table)  3 flags:
 *   1 optional, 2 list, 4 store the bytes raw, 8 CRCs, 16 a wrong uncompressed
 *   size (byte 6 says by how much), 32 the chunk's value count from bytes 7-8
 *   4-5 rows (u16, < 4096)  6 FIXED_LEN_BYTE_ARRAY length / size error  7-8 values
 *   then pages: kind (bits 0-1: 0 v1, 1 dictionary, 2 v2, 3 v1; bits 2-4:
 *   encoding from the table; bit 5: v2 values uncompressed), values (u16),
 *   nulls (u8), repetition and definition level bytes (u8 each, v2), length
 *   (u16), then that many bytes of the page. */
#include "fuzz_common.h"
#include "pq_craft.h"

static const struct {
  int converted, logical, precision, scale, ts_unit;
} k_logical[] = {
    {-1, 0, 0, 0, 0},  {0, 1, 0, 0, 0},  {6, 6, 0, 0, 0},  {9, 0, 0, 0, 0},
    {10, 0, 0, 0, 0},  {5, 5, 9, 2, 0},  {5, 5, 38, 4, 0}, {15, 0, 0, 0, 0},
    {12, 0, 0, 0, 0},  {7, 0, 0, 0, 0},  {8, 0, 0, 0, 0},  {-1, 15, 0, 0, 0},
    {-1, 11, 0, 0, 0}, {-1, 8, 0, 0, 3}, {4, 0, 0, 0, 0},  {19, 0, 0, 0, 0},
};
static const int k_codec[] = {0, 1, 2, 6, 7};
static const int k_encoding[] = {0, 2, 3, 5, 6, 7, 8, 9};

/* The next `bytes` bytes, little-endian (0 past the end, where p stays). */
static uint32_t take(const uint8_t **p, const uint8_t *end, int bytes) {
  uint32_t v = 0;
  for (int k = 0; k < bytes && *p < end; k++, (*p)++) v |= (uint32_t) * *p << (8 * k);
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *p = data, *end = data + size;
  uint32_t phys = take(&p, end, 1) % 8,
           lt = take(&p, end, 1) % (sizeof k_logical / sizeof k_logical[0]);
  uint32_t codec = k_codec[take(&p, end, 1) % (sizeof k_codec / sizeof k_codec[0])];
  uint32_t flags = take(&p, end, 1), rows = take(&p, end, 2) % 4096, tlen = take(&p, end, 1);
  uint32_t chunk_values = take(&p, end, 2);
  pqc_column col = {.physical = (int)phys,
                    .type_length = (int)(tlen % 33),
                    .converted = k_logical[lt].converted,
                    .logical = k_logical[lt].logical,
                    .precision = k_logical[lt].precision,
                    .scale = k_logical[lt].scale,
                    .ts_unit = k_logical[lt].ts_unit,
                    .optional = flags & 1,
                    .list = (flags & 2) != 0,
                    .codec = (int)codec};
  pqc_page pages[8];
  int np = 0;
  while (p < end && np < 8) {
    uint32_t kind = take(&p, end, 1);
    pqc_page *pg = &pages[np];
    memset(pg, 0, sizeof *pg);
    pg->type = (kind & 3) == 1 ? 2 : (kind & 3) == 2 ? 3 : 0;
    pg->encoding = k_encoding[(kind >> 2) & 7];
    pg->num_values = (int32_t)take(&p, end, 2);
    pg->num_nulls = (int32_t)take(&p, end, 1);
    pg->rep_len = take(&p, end, 1);
    pg->def_len = take(&p, end, 1);
    pg->num_rows = pg->num_values;
    size_t len = take(&p, end, 2);
    if (len > (size_t)(end - p)) len = (size_t)(end - p);
    if (pg->type == 3) { /* the v2 levels come first, stored as they are */
      int64_t lv = LADLE_MIN(pg->rep_len + pg->def_len, (int64_t)len);
      pg->levels = p;
      pg->rep_len = LADLE_MIN(pg->rep_len, lv);
      pg->def_len = lv - pg->rep_len;
      p += lv;
      len -= (size_t)lv;
    } else {
      pg->rep_len = pg->def_len = 0;
    }
    pg->data = p;
    pg->len = len;
    p += len;
    pg->compress = !(flags & 4);
    pg->v2_compressed = !(kind & 32);
    if (pg->type == 3 && !pg->v2_compressed) pg->compress = false;
    pg->crc = (flags & 8) != 0;
    pg->uncompressed = -1;
    if (flags & 16) pg->uncompressed = (int64_t)len + (int8_t)tlen;
    np++;
  }
  size_t flen = 0;
  uint8_t *file = pqc_file(&col, rows, (flags & 32) ? (int64_t)chunk_values : -1, pages, np, &flen);
  if (file == NULL) return 0;
  fuzz_read_parquet(file, flen, (uint8_t)(rows % 3));
  free(file);
  return 0;
}
