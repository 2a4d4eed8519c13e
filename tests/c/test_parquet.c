/* test_parquet.c — the Parquet reader on ../shared/data/parquet-testing: every
 * file opens or fails with a message; readable columns decode; every file in
 * bad_data/ and the known-corrupt files fail cleanly; and thousands of truncated
 * and bit-flipped variants of each file never crash (run under ASan in CI). */
#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

#include "harness.h"
#include "io/parquet/parquet.h"

#ifndef LADLE_TEST_DATA
#define LADLE_TEST_DATA "../../shared/data"
#endif

static int list_files(const char *dir, char names[][512], int max) {
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < max) {
    size_t len = strlen(e->d_name);
    if (len > 8 && strcmp(e->d_name + len - 8, ".parquet") == 0)
      snprintf(names[n++], 512, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  return n;
}

static int64_t strings_as_views;

/* Reads column c of row group g again as views (as a scan that is a query's
 * result does) and checks it against `col`, read as offsets and bytes. With
 * `strict` the two reads must agree on success too (a damaged file may fail
 * one way and not the other, since views never place the bytes). */
static void check_views(ladle_pq_file *f, size_t g, size_t c, const ladle_column *col,
                        bool strict) {
  ladle_column v, w;
  ladle_error e;
  ladle_status st = ladle_pq_read_chunk_views(f, g, c, &v, &e);
  if (strict) CHECK(st == LADLE_OK);
  if (st != LADLE_OK) return;
  CHECK(v.length == col->length && v.null_count == col->null_count);
  if (!ladle_column_view_only(&v)) {
    CHECK(v.views == NULL); /* not a flat string column: read as usual */
    ladle_column_release(&v);
    return;
  }
  strings_as_views++;
  CHECK(ladle_column_from_views(&v, &w, &e) == LADLE_OK);
  for (int64_t i = 0; i < col->length; i++) {
    bool valid = ladle_column_valid(col, i);
    CHECK(valid == ladle_column_valid(&w, i));
    if (!valid) continue;
    int64_t la = ladle_str_len(col, i), lb = ladle_str_len(&w, i);
    CHECK(la == lb && memcmp(ladle_str_ptr(col, i), ladle_str_ptr(&w, i), (size_t)la) == 0);
  }
  ladle_column_release(&w);
  ladle_column_release(&v);
}

/* Row i of a (flat) and row j of b hold the same value (or are both null). */
static bool same_row(const ladle_column *a, int64_t i, const ladle_column *b, int64_t j) {
  bool va = ladle_column_valid(a, i), vb = ladle_column_valid(b, j);
  if (va != vb) return false;
  if (!va) return true;
  if (ladle_type_is_varlen(a->type.id)) {
    int64_t la = ladle_str_len(a, i), lb = ladle_str_len(b, j);
    return la == lb && memcmp(ladle_str_ptr(a, i), ladle_str_ptr(b, j), (size_t)la) == 0;
  }
  size_t w = ladle_type_width(a->type.id);
  return memcmp((const char *)a->values + w * (size_t)i, (const char *)b->values + w * (size_t)j, w) == 0;
}

static int64_t selections_checked;

/* Reads column c of row group g again for several row selections (none, all,
 * one row, every third, a run in the middle, a random sparse set), as views and
 * not, and checks each against the whole column `col` at those rows. */
static void check_selections(ladle_pq_file *f, size_t g, size_t c, const ladle_column *col) {
  int64_t n = col->length;
  if (col->type.id == LADLE_TYPE_LIST) return; /* read whole and gathered: covered elsewhere */
  int64_t *sel = malloc((size_t)LADLE_MAX(n, 1) * sizeof *sel);
  CHECK(sel != NULL);
  uint64_t rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(g * 131 + c);
  for (int kind = 0; kind < 6; kind++) {
    int64_t m = 0;
    for (int64_t r = 0; r < n; r++) {
      rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
      bool take = kind == 1 || (kind == 2 && r == n / 2) || (kind == 3 && r % 3 == 0) ||
                  (kind == 4 && r >= n / 3 && r < n / 3 + 50) || (kind == 5 && (rng >> 33) % 97 == 0);
      if (take) sel[m++] = r;
    }
    for (int as_views = 0; as_views < 2; as_views++) {
      ladle_column got, w;
      ladle_error e;
      ladle_status st = ladle_pq_read_chunk_sel(f, g, c, sel, m, as_views, &got, &e);
      if (st != LADLE_OK) fprintf(stderr, "  %s col %zu: %s\n", f->path, c, e.message);
      CHECK(st == LADLE_OK);
      const ladle_column *v = &got;
      if (ladle_column_view_only(&got)) {
        CHECK(ladle_column_from_views(&got, &w, &e) == LADLE_OK);
        v = &w;
      }
      CHECK(v->length == m && v->type.id == col->type.id);
      int64_t nulls = 0;
      for (int64_t k = 0; k < m; k++) {
        CHECK(same_row(col, sel[k], v, k));
        nulls += !ladle_column_valid(col, sel[k]);
      }
      CHECK(v->null_count == nulls);
      if (v == &w) ladle_column_release(&w);
      ladle_column_release(&got);
      selections_checked++;
    }
  }
  /* a selection that is not ascending, or past the rows, is refused */
  if (n >= 2) {
    int64_t bad[2] = {1, 0};
    ladle_column x;
    ladle_error e;
    CHECK(ladle_pq_read_chunk_sel(f, g, c, bad, 2, false, &x, &e) == LADLE_EINVAL);
    bad[0] = n;
    CHECK(ladle_pq_read_chunk_sel(f, g, c, bad, 1, false, &x, &e) == LADLE_EINVAL);
  }
  free(sel);
}

/* Opens and reads every supported column; returns the status of the first failure. */
static ladle_status read_all(const char *path, int64_t *cells, ladle_error *err) {
  ladle_pq_file *f;
  ladle_status st = ladle_pq_open(path, &f, err);
  if (st != LADLE_OK) return st;
  for (size_t g = 0; st == LADLE_OK && g < f->nrow_groups; g++)
    for (size_t c = 0; st == LADLE_OK && c < f->ncolumns; c++) {
      if (!f->columns[c].supported) continue;
      ladle_column col;
      st = ladle_pq_read_chunk(f, g, c, &col, err);
      if (st == LADLE_OK) {
        if (cells) *cells += col.length;
        check_views(f, g, c, &col, cells != NULL);
        if (cells != NULL) check_selections(f, g, c, &col);
        ladle_column_release(&col);
      }
    }
  ladle_pq_close(f);
  return st;
}

TEST(reads_the_conformance_files) {
  static char names[64][512];
  int n = list_files(LADLE_TEST_DATA "/parquet-testing", names, 64);
  CHECK(n >= 20);
  int ok = 0;
  for (int i = 0; i < n; i++) {
    int64_t cells = 0, cells_read = 0;
    ladle_error e, e2;
    e.message[0] = e2.message[0] = 0;
    /* the chunks read from the file's mapping and with pread: the same outcome */
    setenv("LADLE_MMAP", "0", 1);
    ladle_status st_read = read_all(names[i], &cells_read, &e2);
    unsetenv("LADLE_MMAP");
    ladle_status st = read_all(names[i], &cells, &e);
    CHECK(st == st_read && cells == cells_read && strcmp(e.message, e2.message) == 0);
    bool corrupt_by_design = strstr(names[i], "corrupt") != NULL;
    if (corrupt_by_design) {
      CHECK(st == LADLE_ECORRUPT && strstr(e.message, "CRC") != NULL);
    } else if (strstr(names[i], "malformed") != NULL) {
      /* nation.dict-malformed: its binary 'name' column has a broken dictionary page */
      CHECK(st == LADLE_ECORRUPT && strstr(e.message, "'name'") != NULL);
    } else {
      if (st != LADLE_OK) fprintf(stderr, "  %s: %s\n", names[i], e.message);
      CHECK(st == LADLE_OK);
      ok += st == LADLE_OK;
    }
  }
  CHECK(ok >= 20);
  CHECK(strings_as_views >= 2); /* the files' UTF-8 columns went the view way too */
  CHECK(selections_checked > 100);
}

TEST(bad_data_fails_cleanly_and_names_the_file) {
  setenv("LADLE_MMAP", "0", 1); /* chunks in buffers of their exact size, for the sanitizers */
  static char names[16][512];
  int n = list_files(LADLE_TEST_DATA "/parquet-testing/bad_data", names, 16);
  CHECK(n >= 4);
  for (int i = 0; i < n; i++) {
    ladle_error e;
    e.message[0] = 0;
    ladle_pq_file *f;
    ladle_status st = ladle_pq_open(names[i], &f, &e);
    if (st == LADLE_OK) {
      /* read every column the reader claims to support, then demand an error
       * somewhere: either a column is refused or decoding finds the damage */
      bool failed = false;
      for (size_t c = 0; c < f->ncolumns; c++) failed |= !f->columns[c].supported;
      for (size_t g = 0; g < f->nrow_groups; g++)
        for (size_t c = 0; c < f->ncolumns; c++) {
          if (!f->columns[c].supported) continue;
          ladle_column col;
          if (ladle_pq_read_chunk(f, g, c, &col, &e) == LADLE_OK)
            ladle_column_release(&col);
          else
            failed = true;
        }
      ladle_pq_close(f);
      CHECK(failed);
    }
    CHECK(strstr(e.message, ".parquet") != NULL || st == LADLE_OK);
  }
}

TEST(missing_and_non_parquet_files) {
  ladle_error e;
  ladle_pq_file *f;
  CHECK(ladle_pq_open("/nonexistent/x.parquet", &f, &e) == LADLE_EIO &&
        strstr(e.message, "x.parquet"));
  CHECK(ladle_pq_open(LADLE_TEST_DATA "/tpch/README.md", &f, &e) == LADLE_ECORRUPT &&
        strstr(e.message, "PAR1"));
}

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

TEST(mutated_files_never_crash) {
  setenv("LADLE_MMAP", "0", 1); /* chunks in buffers of their exact size, for the sanitizers */
  static char names[64][512];
  int n = list_files(LADLE_TEST_DATA "/parquet-testing", names, 64);
  char tmp[] = "/tmp/ladle-mutant-XXXXXX";
  int fd = mkstemp(tmp);
  CHECK(fd >= 0);
  if (fd < 0) return;
  close(fd);
  int mutants = 0, failures = 0;
  for (int i = 0; i < n; i++) {
    FILE *in = fopen(names[i], "rb");
    if (in == NULL) continue;
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    uint8_t *orig = malloc((size_t)size), *buf = malloc((size_t)size);
    if (fread(orig, 1, (size_t)size, in) != (size_t)size) size = 0;
    fclose(in);
    for (int m = 0; m < 60 && size > 0; m++) {
      memcpy(buf, orig, (size_t)size);
      long len = size;
      int kind = (int)(next() % 3);
      if (kind == 0) {
        len = (long)(next() % (uint64_t)size); /* truncate */
      } else {
        int flips = 1 + (int)(next() % 8);
        for (int k = 0; k < flips; k++) {
          /* damage mostly the footer and page headers, where the structure lives */
          long pos = (next() % 2)
                         ? size - 8 - (long)(next() % (uint64_t)LADLE_MIN(size - 8, 2048)) - 1
                         : (long)(next() % (uint64_t)size);
          if (pos < 0) pos = 0;
          buf[pos] ^= (uint8_t)(1u << (next() % 8));
          if (kind == 2) buf[pos] = (uint8_t)next();
        }
      }
      FILE *out = fopen(tmp, "wb");
      fwrite(buf, 1, (size_t)len, out);
      fclose(out);
      ladle_error e;
      e.message[0] = 0;
      ladle_status st = read_all(tmp, NULL, &e);
      mutants++;
      if (st != LADLE_OK) {
        failures++;
        CHECK(e.message[0] != '\0'); /* every failure explains itself */
      }
    }
    free(orig);
    free(buf);
  }
  unlink(tmp);
  CHECK(mutants > 1000);
  CHECK(failures > 0);
}

#ifdef LADLE_HAVE_ZLIB
#include <zlib.h>
/* GZIP pages: gzip framing (what writers use; libdeflate's path where it is
 * built in), zlib framing (zlib's), two members, a wrong size and damage. */
TEST(gzip_pages_in_either_framing) {
  enum { N = 100000 };
  static uint8_t raw[N], packed[2 * N + 64], out[N + 1];
  for (int i = 0; i < N; i++) raw[i] = (uint8_t)((i * 7) % 251 ^ (i >> 9));
  for (int wbits = 15; wbits <= 31; wbits += 16) { /* 15: zlib, 31: gzip */
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(deflateInit2(&z, 6, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    z.next_in = raw;
    z.avail_in = N;
    z.next_out = packed;
    z.avail_out = sizeof packed;
    CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
    int64_t len = (int64_t)z.total_out;
    deflateEnd(&z);
    ladle_error e;
    memset(out, 0, sizeof out);
    CHECK(ladle_pq_decompress(2, packed, len, out, N, &e) == LADLE_OK && memcmp(out, raw, N) == 0);
    /* claims one byte more than the stream holds */
    CHECK(ladle_pq_decompress(2, packed, len, out, N + 1, &e) == LADLE_ECORRUPT && strstr(e.message, "GZIP"));
    /* damage in the middle of the stream */
    packed[len / 2] ^= 0x5a;
    CHECK(ladle_pq_decompress(2, packed, len, out, N, &e) == LADLE_ECORRUPT && strstr(e.message, "GZIP"));
  }
}
#endif

/* Inputs the fuzzer once crashed on (tests/data/fuzz/parquet-*), read both
 * from the mapping and with pread: each must open and read or fail with a
 * message, under the sanitizers in CI. parquet-empty-compressed-dictionary:
 * a zstd dictionary page of 0 bytes left the reused decompression buffer
 * unallocated (a NULL page pointer). */
TEST(fuzzer_regressions) {
  static char names[64][512];
  int n = list_files(LADLE_FUZZ_REGRESSIONS, names, 64), seen = 0;
  for (int i = 0; i < n; i++) {
    if (strstr(names[i], "/parquet-") == NULL) continue;
    seen++;
    for (int mode = 0; mode < 2; mode++) {
      if (mode) setenv("LADLE_MMAP", "0", 1);
      else unsetenv("LADLE_MMAP");
      ladle_error e;
      e.message[0] = 0;
      ladle_status st = read_all(names[i], NULL, &e);
      CHECK(st == LADLE_OK || e.message[0] != '\0');
    }
  }
  unsetenv("LADLE_MMAP");
  CHECK(seen >= 1);
}

#ifdef LADLE_HAVE_SNAPPY
#include <snappy-c.h>
/* ladle's Snappy decoder against libsnappy's compressor: inputs of every kind
 * of element (short and long literals, copies with periods 1..70, offsets past
 * 64 KiB, incompressible runs), every length from 0 to 300 and a few large
 * ones, decoded into buffers of their exact size (ASan sees any write past);
 * then every truncation and some damage, which must fail or stay in bounds. */
TEST(snappy_decoder_matches_libsnappy) {
  int checked = 0;
  for (int trial = 0; trial < 700; trial++) {
    size_t n = trial < 300 ? (size_t)trial : (size_t)(next() % (trial % 7 == 0 ? 300000 : 5000));
    uint8_t *raw = malloc(n + 1);
    size_t i = 0;
    while (i < n) { /* runs of random bytes, repeats of a short period, copies from far back */
      int kind = (int)(next() % 4);
      size_t run = 1 + (size_t)(next() % (kind == 0 ? 200 : 90));
      for (size_t k = 0; k < run && i < n; k++, i++) {
        if (kind == 0 || i < 80) raw[i] = (uint8_t)next();
        else if (kind == 1) raw[i] = raw[i - 1 - (size_t)(trial % 15)];
        else if (kind == 2) raw[i] = raw[i - 70];
        else raw[i] = raw[i > 70000 ? i - 70000 : i / 2];
      }
    }
    size_t cap = snappy_max_compressed_length(n), clen = cap;
    char *comp = malloc(cap);
    CHECK(snappy_compress((const char *)raw, n, comp, &clen) == SNAPPY_OK);
    uint8_t *out = malloc(n ? n : 1);
    CHECK(ladle_pq_snappy_decode((const uint8_t *)comp, (int64_t)clen, out, (int64_t)n));
    CHECK(n == 0 || memcmp(out, raw, n) == 0);
    checked++;
    /* a wrong expected length, truncations and damage: never out of bounds */
    if (n > 0) CHECK(!ladle_pq_snappy_decode((const uint8_t *)comp, (int64_t)clen, out, (int64_t)n - 1));
    for (size_t cut = 0; cut < clen; cut += 1 + clen / 40) {
      uint8_t *part = malloc(cut ? cut : 1);
      memcpy(part, comp, cut);
      CHECK(!ladle_pq_snappy_decode(part, (int64_t)cut, out, (int64_t)n) || n == 0);
      free(part);
    }
    for (int k = 0; k < 8 && clen > 0; k++) {
      uint8_t *bad = malloc(clen);
      memcpy(bad, comp, clen);
      bad[next() % clen] ^= (uint8_t)(1 + next() % 255);
      (void)ladle_pq_snappy_decode(bad, (int64_t)clen, out, (int64_t)n);
      free(bad);
    }
    free(out);
    free(comp);
    free(raw);
  }
  CHECK(checked == 700);
}
#endif
