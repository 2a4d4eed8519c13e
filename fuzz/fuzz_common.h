/* fuzz_common.h — what the fuzz targets share: reading a Parquet file every
 * way the engine does (whole chunks, views, selections), and the oracle that
 * every String a reader makes is valid UTF-8, checked by a decoder written
 * here apart from ladle's validator. A violation aborts, so libFuzzer keeps
 * the input. */
#ifndef LADLE_FUZZ_COMMON_H
#define LADLE_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/parquet/parquet.h"
#include "utf8_reference.h"

/* Unicode's Table 3-7 by decoding each code point (tests/c/utf8_reference.h). */
static inline bool fuzz_utf8_valid(const uint8_t *s, int64_t n) { return utf8_reference(s, n) < 0; }

/* Aborts unless every value of a String column (flat, in a list, or as
 * views) is valid UTF-8. */
static inline void fuzz_check_strings(const ladle_column *col) {
  const ladle_column *c = col->type.id == LADLE_TYPE_LIST ? col->child : col;
  if (c == NULL || c->type.id != LADLE_TYPE_STRING) return;
  ladle_column flat;
  ladle_error e;
  if (ladle_column_view_only(c)) {
    if (ladle_column_from_views(c, &flat, &e) != LADLE_OK) return; /* out of memory */
    c = &flat;
  }
  for (int64_t i = 0; i < c->length; i++)
    if (ladle_column_valid(c, i) &&
        !fuzz_utf8_valid((const uint8_t *)ladle_str_ptr(c, i), ladle_str_len(c, i))) {
      fprintf(stderr, "invalid UTF-8 in a String column, row %lld\n", (long long)i);
      abort();
    }
  if (c == &flat) ladle_column_release(&flat);
}

/* Opens `size` bytes as a Parquet file (a memfd, read with pread into
 * exact-size buffers so that ASan sees any over-read) and decodes every
 * supported column chunk whole, as views, and at a selection of rows (every
 * third from a row `pick` chooses) both ways, checking every String. */
/* Whether row r of column a equals row `at` of column b (offsets strings or
 * fixed-width values; NaN bit patterns compared as bytes). */
static inline bool fuzz_row_equal(const ladle_column *a, int64_t r, const ladle_column *b,
                                  int64_t at) {
  bool va = ladle_column_valid(a, r), vb = ladle_column_valid(b, at);
  if (va != vb) return false;
  if (!va) return true;
  if (ladle_type_is_varlen(a->type.id)) {
    const int64_t *oa = a->values, *ob = b->values;
    int64_t la = oa[r + 1] - oa[r], lb = ob[at + 1] - ob[at];
    return la == lb && memcmp(a->chars + oa[r], b->chars + ob[at], (size_t)la) == 0;
  }
  size_t w = ladle_type_width(a->type.id);
  if (a->type.id == LADLE_TYPE_BOOL) w = 1;
  return w == 0 || memcmp((const char *)a->values + (int64_t)w * r,
                          (const char *)b->values + (int64_t)w * at, w) == 0;
}

/* A chunk read in runs of its pages (ladle_pq_read_chunk_rows, as a scan of
 * few row groups splits it: every page alone, then two halves), each checked
 * for valid UTF-8, and where the whole read succeeded too, the runs must
 * give its rows exactly: a difference aborts (a crash for the fuzzer). */
static inline void fuzz_read_ranges(const ladle_pq_file *f, size_t g, size_t c,
                                    const ladle_column *whole) {
  int64_t *at = NULL;
  size_t np = 0;
  bool all_dict;
  if (ladle_pq_chunk_page_rows(f, g, c, &at, &np, &all_dict) != LADLE_OK || np == 0) return;
  int64_t rows = f->row_groups[g].num_rows;
  for (int split = 0; split < 2; split++) {
    size_t parts = split == 0 ? np : LADLE_MIN(np, (size_t)2);
    for (size_t q = 0; q < parts; q++) {
      size_t a = q * np / parts, b = (q + 1) * np / parts;
      int64_t lo = at[a], hi = b < np ? at[b] : rows;
      ladle_column col;
      ladle_error err;
      for (int v = 0; v < 2; v++) {
        if (ladle_pq_read_chunk_rows(f, g, c, v == 1, lo, hi, &col, &err) != LADLE_OK) continue;
        fuzz_check_strings(&col);
        if (col.length != hi - lo) abort();
        if (v == 0 && whole != NULL && whole->child == NULL && col.views == NULL)
          for (int64_t r = 0; r < col.length; r++)
            if (!fuzz_row_equal(whole, lo + r, &col, r)) abort();
        ladle_column_release(&col);
      }
    }
  }
  free(at);
}

static inline void fuzz_read_parquet(const uint8_t *data, size_t size, uint8_t pick) {
  setenv("LADLE_MMAP", "0", 1);
  int fd = memfd_create("ladle-fuzz", 0);
  if (fd < 0) return;
  if (size > 0 && write(fd, data, size) != (ssize_t)size) {
    close(fd);
    return;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ladle_error err;
  ladle_pq_file *f;
  bool debug = getenv("LADLE_FUZZ_DEBUG") != NULL; /* says what each input did */
  if (ladle_pq_open(path, &f, &err) != LADLE_OK) {
    if (debug) fprintf(stderr, "open: %s\n", err.message);
  } else {
    for (size_t g = 0; g < f->nrow_groups; g++)
      for (size_t c = 0; c < f->ncolumns; c++) {
        if (!f->columns[c].supported) {
          if (debug) fprintf(stderr, "column %zu: %s\n", c, f->columns[c].why);
          continue;
        }
        ladle_column col;
        if (ladle_pq_read_chunk(f, g, c, &col, &err) == LADLE_OK) {
          if (debug)
            fprintf(stderr, "row group %zu column %zu: %lld rows read\n", g, c,
                    (long long)col.length);
          fuzz_check_strings(&col);
          fuzz_read_ranges(f, g, c, &col);
          ladle_column_release(&col);
        } else {
          if (debug) fprintf(stderr, "row group %zu column %zu: %s\n", g, c, err.message);
          fuzz_read_ranges(f, g, c, NULL);
        }
        if (ladle_pq_read_chunk_views(f, g, c, &col, &err) == LADLE_OK) {
          fuzz_check_strings(&col);
          ladle_column_release(&col);
        }
        int64_t rows = f->row_groups[g].num_rows, m = 0;
        int64_t *sel = rows > 0 && rows < (1 << 24) ? malloc((size_t)rows * sizeof *sel) : NULL;
        for (int64_t r = pick; sel != NULL && r < rows; r += 3) sel[m++] = r;
        for (int v = 0; sel != NULL && v < 2; v++)
          if (ladle_pq_read_chunk_sel(f, g, c, sel, m, v, &col, &err) == LADLE_OK) {
            fuzz_check_strings(&col);
            ladle_column_release(&col);
          }
        free(sel);
      }
    ladle_pq_close(f);
  }
  close(fd);
}

#endif
