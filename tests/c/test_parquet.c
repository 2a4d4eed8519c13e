/* test_parquet.c — the Parquet reader on ../shared/data/parquet-testing: every
 * file opens or fails with a message; readable columns decode; every file in
 * bad_data/ and the known-corrupt files fail cleanly; and thousands of truncated
 * and bit-flipped variants of each file never crash (run under ASan in CI). */
#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

#define TEST_RNG_SEED 0x243f6a8885a308d3ULL
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
  return memcmp((const char *)a->values + w * (size_t)i, (const char *)b->values + w * (size_t)j,
                w) == 0;
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
                  (kind == 4 && r >= n / 3 && r < n / 3 + 50) ||
                  (kind == 5 && (rng >> 33) % 97 == 0);
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

static int64_t strings_checked;

/* Checks that every string of a String column (or a list of them) is valid
 * UTF-8, one by one; returns how many were checked. */
static int64_t every_string_valid_utf8(const ladle_column *col) {
  const ladle_column *s = col->type.id == LADLE_TYPE_LIST ? col->child : col;
  if (s == NULL || s->type.id != LADLE_TYPE_STRING) return 0;
  int64_t n = 0;
  for (int64_t i = 0; i < s->length; i++, n++)
    if (ladle_column_valid(s, i))
      CHECK(ladle_utf8_check((const uint8_t *)ladle_str_ptr(s, i), ladle_str_len(s, i)) < 0);
  return n;
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
        strings_checked += every_string_valid_utf8(&col);
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
  CHECK(strings_as_views >= 2);  /* the files' UTF-8 columns went the view way too */
  CHECK(strings_checked > 1000); /* and every String value is valid UTF-8 */
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
      int kind = (int)(test_rand() % 3);
      if (kind == 0) {
        len = (long)(test_rand() % (uint64_t)size); /* truncate */
      } else {
        int flips = 1 + (int)(test_rand() % 8);
        for (int k = 0; k < flips; k++) {
          /* damage mostly the footer and page headers, where the structure lives */
          long pos = (test_rand() % 2)
                         ? size - 8 - (long)(test_rand() % (uint64_t)LADLE_MIN(size - 8, 2048)) - 1
                         : (long)(test_rand() % (uint64_t)size);
          if (pos < 0) pos = 0;
          buf[pos] ^= (uint8_t)(1u << (test_rand() % 8));
          if (kind == 2) buf[pos] = (uint8_t)test_rand();
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
static int64_t deflate_into(const uint8_t *raw, int64_t n, int wbits, uint8_t *out, int64_t cap) {
  z_stream z;
  memset(&z, 0, sizeof z);
  CHECK(deflateInit2(&z, 6, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  z.next_in = (Bytef *)(uintptr_t)raw;
  z.avail_in = (uInt)n;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
  int64_t len = (int64_t)z.total_out;
  deflateEnd(&z);
  return len;
}

/* GZIP pages, through libdeflate (ladle_pq_decompress, where it is built in)
 * and through zlib (ladle_pq_inflate's zlib_only): gzip framing and zlib
 * framing decode; several members back to back (as pyarrow and Polars read
 * them; concatenated_gzip_members.parquet) and an empty last member too; and
 * each of these is an error: a tampered CRC-32 or ISIZE in the trailer (pyarrow
 * raises), a page size one byte short (the stream inflates past it: its
 * trailer was never checked and the short page was returned), one byte long,
 * bytes after the last member, damage inside the stream, a tampered Adler-32. */
TEST(gzip_pages_in_either_framing) {
  enum { N = 100000 };
  static uint8_t raw[N], packed[2 * N + 64], two[2 * N + 128], out[N + 2];
  for (int i = 0; i < N; i++) raw[i] = (uint8_t)((i * 7) % 251 ^ (i >> 9));
  for (int path = 0; path < 2; path++) {
    ladle_error e;
#define INFLATE(src, n, want)                                      \
  (path == 0 ? ladle_pq_decompress(2, (src), (n), out, (want), &e) \
             : ladle_pq_inflate((src), (n), out, (want), true, &e))
#define FAILS(src, n, want, why)                                                \
  CHECK(INFLATE(src, n, want) == LADLE_ECORRUPT && strstr(e.message, "GZIP") && \
        strstr(e.message, why))
    for (int wbits = 15; wbits <= 31; wbits += 16) { /* 15: zlib, 31: gzip */
      int64_t len = deflate_into(raw, N, wbits, packed, sizeof packed);
      memset(out, 0, sizeof out);
      CHECK(INFLATE(packed, len, N) == LADLE_OK && memcmp(out, raw, N) == 0);
      FAILS(packed, len, N + 1, "less than the page's uncompressed size");
      FAILS(packed, len, N - 1, "past the page's uncompressed size");
      /* the trailer: gzip's CRC-32 and ISIZE, zlib's Adler-32 */
      for (int k = wbits == 31 ? 8 : 4; k >= 1; k -= wbits == 31 ? 4 : 8) {
        packed[len - k] ^= 0x10;
        CHECK(INFLATE(packed, len, N) == LADLE_ECORRUPT && strstr(e.message, "GZIP"));
        packed[len - k] ^= 0x10;
      }
      packed[len / 2] ^= 0x5a; /* damage in the middle */
      CHECK(INFLATE(packed, len, N) == LADLE_ECORRUPT && strstr(e.message, "GZIP"));
      packed[len / 2] ^= 0x5a;
      if (wbits == 31) {
        /* two members, then two with an empty third; bytes after the last */
        int64_t a = deflate_into(raw, N / 3, 31, two, sizeof two);
        int64_t b = deflate_into(raw + N / 3, N - N / 3, 31, two + a, (int64_t)sizeof two - a);
        memset(out, 0, sizeof out);
        CHECK(INFLATE(two, a + b, N) == LADLE_OK && memcmp(out, raw, N) == 0);
        FAILS(two, a + b, N - 1, "past the page's uncompressed size");
        FAILS(two, a + b, N + 1, "less than");
        int64_t c = deflate_into(raw, 0, 31, two + a + b, (int64_t)sizeof two - a - b);
        CHECK(INFLATE(two, a + b + c, N) == LADLE_OK && memcmp(out, raw, N) == 0);
        memcpy(two + a + b, "junk", 4);
        FAILS(two, a + b + 4, N, "after the last gzip member");
        memset(two + a + b, 0, 4);
        FAILS(two, a + b + 4, N, "after the last gzip member");
        two[a + b - 8] ^= 1; /* the second member's CRC-32 */
        CHECK(INFLATE(two, a + b, N) == LADLE_ECORRUPT);
      }
    }
#undef FAILS
#undef INFLATE
  }
}
#endif

/* Inputs the fuzzer once crashed on (tests/data/fuzz/parquet-*), read both
 * from the mapping and with pread: each must open and read or fail with a
 * message, under the sanitizers in CI. parquet-empty-compressed-dictionary:
 * a zstd dictionary page of 0 bytes left the reused decompression buffer
 * unallocated (a NULL page pointer). parquet-flat-chunk-*: from
 * fuzz/diff_pyarrow.py, a flat chunk whose footer counts 0 values in a row
 * group of 1 row (ladle read the row, pyarrow none, Polars panicked). */
TEST(fuzzer_regressions) {
  static char names[64][512];
  int n = list_files(LADLE_FUZZ_REGRESSIONS, names, 64), seen = 0;
  for (int i = 0; i < n; i++) {
    if (strstr(names[i], "/parquet-") == NULL) continue;
    seen++;
    for (int mode = 0; mode < 2; mode++) {
      if (mode)
        setenv("LADLE_MMAP", "0", 1);
      else
        unsetenv("LADLE_MMAP");
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
    size_t n =
        trial < 300 ? (size_t)trial : (size_t)(test_rand() % (trial % 7 == 0 ? 300000 : 5000));
    uint8_t *raw = malloc(n + 1);
    size_t i = 0;
    while (i < n) { /* runs of random bytes, repeats of a short period, copies from far back */
      int kind = (int)(test_rand() % 4);
      size_t run = 1 + (size_t)(test_rand() % (kind == 0 ? 200 : 90));
      for (size_t k = 0; k < run && i < n; k++, i++) {
        if (kind == 0 || i < 80)
          raw[i] = (uint8_t)test_rand();
        else if (kind == 1)
          raw[i] = raw[i - 1 - (size_t)(trial % 15)];
        else if (kind == 2)
          raw[i] = raw[i - 70];
        else
          raw[i] = raw[i > 70000 ? i - 70000 : i / 2];
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
    if (n > 0)
      CHECK(!ladle_pq_snappy_decode((const uint8_t *)comp, (int64_t)clen, out, (int64_t)n - 1));
    for (size_t cut = 0; cut < clen; cut += 1 + clen / 40) {
      uint8_t *part = malloc(cut ? cut : 1);
      memcpy(part, comp, cut);
      CHECK(!ladle_pq_snappy_decode(part, (int64_t)cut, out, (int64_t)n) || n == 0);
      free(part);
    }
    for (int k = 0; k < 8 && clen > 0; k++) {
      uint8_t *bad = malloc(clen);
      memcpy(bad, comp, clen);
      bad[test_rand() % clen] ^= (uint8_t)(1 + test_rand() % 255);
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

/* ------------------------------------------------- crafted pages (pq_craft.h) */

#include "pq_craft.h"

/* Builds the file, writes it to a temporary path and reads its column every
 * way: whole, as views, and a selection of every other row both ways (from
 * buffers of the chunk's exact size: ASan sees any read past a page). Returns
 * the first failure (its message in *e); the whole read in *out when asked
 * and everything succeeded. */
static ladle_status read_crafted(const pqc_column *col, int64_t rows, int64_t nvals,
                                 const pqc_page *pages, int n, ladle_column *out, ladle_error *e) {
  size_t len = 0;
  uint8_t *bytes = pqc_file(col, rows, nvals, pages, n, &len);
  CHECK(bytes != NULL);
  if (bytes == NULL) return LADLE_ENOMEM;
  char path[] = "/tmp/ladle-crafted-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0 && write(fd, bytes, len) == (ssize_t)len);
  close(fd);
  free(bytes);
  setenv("LADLE_MMAP", "0", 1);
  ladle_pq_file *f;
  e->message[0] = 0;
  ladle_status st = ladle_pq_open(path, &f, e);
  ladle_column whole;
  memset(&whole, 0, sizeof whole);
  if (st == LADLE_OK) {
    st = ladle_pq_read_chunk(f, 0, 0, &whole, e);
    ladle_column v;
    ladle_error e2;
    /* every other way fails alike (a selection of every other row, when it
     * does not fail, may have skipped the damaged page: only where all the
     * rows are taken) */
    ladle_status sv = ladle_pq_read_chunk_views(f, 0, 0, &v, &e2);
    if (sv == LADLE_OK) ladle_column_release(&v);
    if (sv != st)
      fprintf(stderr, "  views: %s / whole: %s\n", sv ? e2.message : "ok", st ? e->message : "ok");
    CHECK(sv == st);
    int64_t *sel = malloc((size_t)LADLE_MAX(rows, 1) * sizeof *sel), m = 0;
    for (int step = 1; step <= 2; step++) {
      m = 0;
      for (int64_t r = 0; r < rows; r += step) sel[m++] = r;
      for (int as_views = 0; as_views < 2; as_views++) {
        ladle_status ss = ladle_pq_read_chunk_sel(f, 0, 0, sel, m, as_views, &v, &e2);
        if (ss == LADLE_OK) ladle_column_release(&v);
        if (step == 1 && ss != st)
          fprintf(stderr, "  selection (views %d): %s / whole: %s\n", as_views,
                  ss ? e2.message : "ok", st ? e->message : "ok");
        if (step == 1)
          CHECK(ss == st);
        else if (st == LADLE_OK)
          CHECK(ss == LADLE_OK);
      }
    }
    free(sel);
    ladle_pq_close(f);
  }
  unsetenv("LADLE_MMAP");
  unlink(path);
  if (st == LADLE_OK && out != NULL)
    *out = whole;
  else if (whole.type.id != LADLE_TYPE_NULL || whole.length > 0)
    ladle_column_release(&whole);
  return st;
}

static pqc_page data_page(int encoding, int32_t nvals, const pqc_buf *b) {
  pqc_page p;
  memset(&p, 0, sizeof p);
  p.type = 0;
  p.encoding = encoding;
  p.num_values = nvals;
  p.data = b->p;
  p.len = b->n;
  p.compress = true;
  p.uncompressed = -1;
  return p;
}

/* DELTA_BYTE_ARRAY: each suffix length fits in what is left of the page, but
 * not their sum; the check once compared each with the bytes after the
 * lengths without advancing, and the copy read past the page (ASan:
 * heap-buffer-overflow). */
TEST(delta_byte_array_suffixes_past_the_page) {
  pqc_column col = {.physical = LADLE_PQ_BYTE_ARRAY, .converted = -1};
  int64_t pre[3] = {0, 0, 0}, suf[3] = {5, 5, 5};
  for (int fits = 0; fits < 2; fits++) {
    pqc_buf b = {0};
    pqc_delta(&b, pre, 3);
    pqc_delta(&b, suf, 3);
    pqc_put(&b, "abcdefghijklmno", fits ? 15 : 9); /* the three suffixes, or not quite two */
    pqc_page pg = data_page(7, 3, &b);
    ladle_error e;
    ladle_column c;
    ladle_status st = read_crafted(&col, 3, -1, &pg, 1, &c, &e);
    if (fits) {
      CHECK_OK(st);
      if (st == LADLE_OK) {
        CHECK(c.length == 3 && ladle_str_len(&c, 2) == 5 &&
              memcmp(ladle_str_ptr(&c, 2), "klmno", 5) == 0);
        ladle_column_release(&c);
      }
    } else {
      CHECK(st == LADLE_ECORRUPT &&
            strstr(e.message, "DELTA_BYTE_ARRAY suffix runs past the page") != NULL);
    }
    free(b.p);
  }
}

/* The same pattern (a length checked against the bytes left without counting
 * those already taken) in DELTA_LENGTH_BYTE_ARRAY and PLAIN: lengths whose
 * sum runs past the page, each on its own fitting. */
TEST(byte_array_lengths_whose_sum_runs_past_the_page) {
  pqc_column col = {.physical = LADLE_PQ_BYTE_ARRAY, .converted = -1};
  int64_t lens[3] = {5, 5, 5};
  pqc_buf b = {0};
  pqc_delta(&b, lens, 3);
  pqc_put(&b, "abcdefghi", 9);
  pqc_page pg = data_page(6, 3, &b);
  ladle_error e;
  CHECK(read_crafted(&col, 3, -1, &pg, 1, NULL, &e) == LADLE_ECORRUPT &&
        strstr(e.message, "runs past") != NULL);
  pqc_buf p = {0};
  pqc_plain_str(&p, "abcde", 5);
  pqc_le32(&p, 5);
  pqc_put(&p, "abc", 3);
  pg = data_page(0, 2, &p);
  CHECK(read_crafted(&col, 2, -1, &pg, 1, NULL, &e) == LADLE_ECORRUPT &&
        strstr(e.message, "runs past") != NULL);
  free(b.p);
  free(p.p);
}

/* BYTE_STREAM_SPLIT's stride is the page's count of values, which its size
 * over the width must equal: a page of 3 floats' bytes claiming 2 values (or
 * 4) is refused, not read with either stride. */
TEST(byte_stream_split_size_must_match_the_values) {
  pqc_column col = {.physical = LADLE_PQ_FLOAT, .converted = -1};
  float v[3] = {1.5f, -2.25f, 1e9f};
  uint8_t raw[12];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++) raw[k * 3 + i] = ((const uint8_t *)&v[i])[k];
  pqc_buf b = {0};
  pqc_put(&b, raw, 12);
  ladle_error e;
  for (int32_t nv = 2; nv <= 4; nv++) {
    pqc_page pg = data_page(9, nv, &b);
    ladle_column c;
    ladle_status st = read_crafted(&col, nv, -1, &pg, 1, &c, &e);
    if (nv == 3) {
      CHECK_OK(st);
      if (st == LADLE_OK) {
        CHECK(((const float *)c.values)[0] == 1.5f && ((const float *)c.values)[2] == 1e9f);
        ladle_column_release(&c);
      }
    } else {
      CHECK(st == LADLE_ECORRUPT &&
            strstr(e.message, "BYTE_STREAM_SPLIT data of 12 bytes") != NULL);
    }
  }
  /* fixed-length byte arrays (the other BYTE_STREAM_SPLIT path) */
  pqc_column flba = {.physical = LADLE_PQ_FIXED_LEN_BYTE_ARRAY, .type_length = 3, .converted = -1};
  pqc_page pg = data_page(9, 3, &b); /* 12 bytes: not 3 values of 3 */
  CHECK(read_crafted(&flba, 3, -1, &pg, 1, NULL, &e) == LADLE_ECORRUPT &&
        strstr(e.message, "BYTE_STREAM_SPLIT") != NULL);
  free(b.p);
}

/* Data page v2 level lengths whose sum overflows (each alone is checked
 * against the page first: the sum once wrapped to a negative number and
 * passed). */
TEST(v2_level_lengths_that_overflow) {
  pqc_column col = {.physical = LADLE_PQ_INT32, .converted = -1, .optional = true};
  uint8_t vals[8] = {1, 0, 0, 0, 2, 0, 0, 0};
  pqc_page pg;
  memset(&pg, 0, sizeof pg);
  pg.type = 3;
  pg.num_values = 2;
  pg.num_rows = 2;
  pg.data = vals;
  pg.len = 8;
  pg.uncompressed = 8;
  pg.def_len = (int64_t)1 << 62;
  pg.rep_len = (int64_t)1 << 62;
  ladle_error e;
  CHECK(read_crafted(&col, 2, -1, &pg, 1, NULL, &e) == LADLE_ECORRUPT &&
        strstr(e.message, "level lengths") != NULL);
  pg.def_len = INT64_MAX;
  pg.rep_len = 1;
  CHECK(read_crafted(&col, 2, -1, &pg, 1, NULL, &e) == LADLE_ECORRUPT &&
        strstr(e.message, "level lengths") != NULL);
}

/* Strings of a String column (BYTE_ARRAY annotated STRING) are valid UTF-8 or
 * the read fails naming the file, column, row group and page, in every path
 * that makes strings: PLAIN (into offsets, as views into a decompressed page
 * or from an uncompressed chunk), the dictionary (checked once), the two
 * DELTA byte array encodings, whole reads and selections, flat and in a list.
 * The same bytes in a Binary column (no annotation) are read as they are. */
TEST(invalid_utf8_never_reaches_a_string_column) {
  static const struct {
    const char *s;
    int n;
  } bad[] = {{"ok\xff\xfe", 4},
             {"\xc3", 1} /* cut off */,
             {"\xed\xa0\x80", 3} /* surrogate */,
             {"\xc0\xaf", 2} /* overlong */,
             {"x\xf4\x90\x80\x80", 5} /* > U+10FFFF */,
             {"\x80", 1},
             {"0123456789abcdefghij\xa9", 21}};
  static const char *good[] = {"",
                               "a",
                               "\xc3\xa9t\xc3\xa9",
                               "\xf0\x9f\x98\x80 smile",
                               "0123456789abcdefghijk",
                               "\xe2\x82\xac"};
  int checked = 0;
  for (size_t b = 0; b < sizeof bad / sizeof bad[0] + 1; b++) /* the last round: all valid */
    for (int codec = 0; codec < 2; codec++)
      for (int enc = 0; enc < 4; enc++) /* PLAIN, dictionary, DELTA_LENGTH, DELTA_BYTE_ARRAY */
        for (int shape = 0; shape < 3; shape++) { /* required, optional with a null, list */
          for (int binary = 0; binary < 2; binary++) {
            pqc_column col = {.physical = LADLE_PQ_BYTE_ARRAY,
                              .converted = binary ? -1 : 0,
                              .codec = codec,
                              .optional = shape >= 1,
                              .list = shape == 2};
            /* 6 values: the good strings with the bad one at index 3 */
            const uint8_t *vals[6];
            int lens[6];
            for (int i = 0; i < 6; i++) {
              vals[i] = (const uint8_t *)good[i];
              lens[i] = (int)strlen(good[i]);
            }
            if (b < sizeof bad / sizeof bad[0]) {
              vals[3] = (const uint8_t *)bad[b].s;
              lens[3] = bad[b].n;
            }
            pqc_buf levels = {0}, body = {0}, dict = {0};
            int rows = 6, nvals = 6;
            if (shape == 1) { /* a null in row 1: 7 rows, 6 values */
              rows = nvals = 7;
              pqc_varint(&levels, 1 << 1 | 1); /* one bit-packed group of 8 levels */
              pqc_byte(&levels, 0x7d);         /* rows 0, 2..6 present */
            } else if (shape == 2) {           /* lists [v0, v1], [v2, v3, v4], [v5] */
              rows = 3;
              pqc_buf rep = {0}, def = {0};
              pqc_varint(&rep, 1 << 1 | 1);
              pqc_byte(&rep, 0x1a); /* 0 1 0 1 1 0, LSB first */
              pqc_varint(&def, 1 << 1 | 1);
              pqc_byte(&def, 0xff); /* two bits each, all 3 (present) */
              pqc_byte(&def, 0x0f);
              pqc_le32(&levels, (uint32_t)rep.n);
              pqc_put(&levels, rep.p, rep.n);
              pqc_le32(&levels, (uint32_t)def.n);
              pqc_put(&levels, def.p, def.n);
              free(rep.p);
              free(def.p);
            }
            if (shape == 1) { /* v1 level block: its length first */
              pqc_buf t = {0};
              pqc_le32(&t, (uint32_t)levels.n);
              pqc_put(&t, levels.p, levels.n);
              free(levels.p);
              levels = t;
            }
            pqc_put(&body, levels.p, levels.n);
            if (enc == 0) {
              for (int i = 0; i < 6; i++) pqc_plain_str(&body, vals[i], (size_t)lens[i]);
            } else if (enc == 1) {
              for (int i = 0; i < 6; i++) pqc_plain_str(&dict, vals[i], (size_t)lens[i]);
              pqc_byte(&body, 3); /* bit width */
              pqc_varint(&body, 1 << 1 | 1);
              uint8_t ix[3] = {0x88, 0xc6, 0xfa}; /* 0 1 2 3 4 5 6 7 at 3 bits, LSB first */
              pqc_put(&body, ix, 3);
            } else {
              int64_t ls[6], zero[6] = {0};
              for (int i = 0; i < 6; i++) ls[i] = lens[i];
              if (enc == 3) pqc_delta(&body, zero, 6);
              pqc_delta(&body, ls, 6);
              for (int i = 0; i < 6; i++) pqc_put(&body, vals[i], (size_t)lens[i]);
            }
            pqc_page pages[2];
            int np = 0;
            if (enc == 1) {
              memset(&pages[0], 0, sizeof pages[0]);
              pages[0].type = 2;
              pages[0].num_values = 6;
              pages[0].data = dict.p;
              pages[0].len = dict.n;
              pages[0].compress = true;
              pages[0].uncompressed = -1;
              np = 1;
            }
            pages[np++] = data_page(enc == 0 ? 0 : enc == 1 ? 8 : enc == 2 ? 6 : 7, nvals, &body);
            ladle_error e;
            ladle_column c;
            ladle_status st = read_crafted(&col, rows, -1, pages, np, &c, &e);
            bool invalid = b < sizeof bad / sizeof bad[0] && !binary;
            if (invalid) {
              CHECK(st == LADLE_ECORRUPT && strstr(e.message, "invalid UTF-8") != NULL &&
                    strstr(e.message, "column '") != NULL &&
                    strstr(e.message, "row group 0") != NULL &&
                    strstr(e.message, "ladle-crafted") != NULL);
              if (st != LADLE_ECORRUPT)
                fprintf(stderr, "  bad %zu codec %d enc %d shape %d: %s\n", b, codec, enc, shape,
                        e.message);
            } else {
              if (st != LADLE_OK)
                fprintf(stderr, "  bad %zu codec %d enc %d shape %d bin %d: %s\n", b, codec, enc,
                        shape, binary, e.message);
              CHECK_OK(st);
              if (st == LADLE_OK) {
                const ladle_column *s = shape == 2 ? c.child : &c;
                CHECK(s->length == 6 + (shape == 1));
                int k = 0;
                for (int64_t r = 0; r < s->length; r++) {
                  if (!ladle_column_valid(s, r)) continue;
                  CHECK(ladle_str_len(s, r) == lens[k] &&
                        memcmp(ladle_str_ptr(s, r), vals[k], (size_t)lens[k]) == 0);
                  k++;
                }
                CHECK(k == 6);
                ladle_column_release(&c);
              }
            }
            checked++;
            free(body.p);
            free(dict.p);
            free(levels.p);
          }
        }
  CHECK(checked == 8 * 2 * 4 * 3 * 2);
}

/* INT96 timestamps outside what nanoseconds in an int64 hold: Polars reads
 * the day as unsigned and saturates any overflow, of the day's product or of
 * the sum, to INT64_MAX (2262-04-11 23:47:16.854775807), dates before 1677
 * too; Spark writes such dates (parquet-testing's int96_from_spark.parquet).
 * They wrapped (to 1816-03-29 and such). Expected values are Polars 2.1.0's. */
TEST(int96_out_of_range_saturates_as_polars) {
  static const struct {
    uint32_t day;
    int64_t nanos, want;
  } v[] = {
      {0x80000000u, 0, INT64_MAX},
      {0xffffffffu, 0, INT64_MAX},
      {2440588, -1, -1},
      {2440588, INT64_MAX, INT64_MAX},
      {2440588 + 106751, 85636854775807LL, INT64_MAX}, /* exactly the maximum */
      {2440588 + 106751, 85636854775808LL, INT64_MAX},
      {2440588 - 106752, 86399999999999LL, INT64_MAX}, /* the product alone overflows */
      {0, 0, INT64_MAX},                               /* year -4713 */
      {2440588 - 106751, 0, -9223286400000000000LL},
      {2440588, INT64_MIN, INT64_MIN},
      {2440587, 86400000000000LL, 0},
      {2440588 + 106751, 0, 9223286400000000000LL},
      {2440588 - 106751, -1000, -9223286400000001000LL},
  };
  enum { N = sizeof v / sizeof v[0] };
  pqc_buf b = {0};
  for (int i = 0; i < N; i++) {
    uint8_t x[12];
    memcpy(x, &v[i].nanos, 8);
    memcpy(x + 8, &v[i].day, 4);
    pqc_put(&b, x, 12);
  }
  pqc_column col = {.physical = LADLE_PQ_INT96, .converted = -1};
  for (int enc = 0; enc < 2; enc++) { /* PLAIN, and the same values as a dictionary */
    pqc_buf ix = {0};
    pqc_page pages[2];
    int np = 0;
    if (enc == 1) {
      memset(&pages[0], 0, sizeof pages[0]);
      pages[0].type = 2;
      pages[0].num_values = N;
      pages[0].data = b.p;
      pages[0].len = b.n;
      pages[0].uncompressed = -1;
      np = 1;
      pqc_byte(&ix, 4);
      pqc_varint(&ix, 2 << 1 | 1); /* two groups of 8 indices at 4 bits */
      for (int i = 0; i < 16; i += 2)
        pqc_byte(&ix, (uint8_t)((i < N ? i : 0) | (i + 1 < N ? i + 1 : 0) << 4));
    }
    pages[np++] = data_page(enc ? 8 : 0, N, enc ? &ix : &b);
    ladle_error e;
    ladle_column c;
    CHECK_OK(read_crafted(&col, N, -1, pages, np, &c, &e));
    CHECK(c.type.id == LADLE_TYPE_DATETIME && c.type.unit == LADLE_TIME_NS);
    for (int i = 0; i < N; i++) CHECK_EQ_I(((const int64_t *)c.values)[i], v[i].want);
    ladle_column_release(&c);
    free(ix.p);
  }
  free(b.p);
}

/* A data page v2 whose values section is empty (a page of nulls) with no
 * stored bytes at all, though the codec's empty stream has some (snappy: one
 * byte): read as empty, as pyarrow and Polars do
 * (datapage_v2_empty_datapage.snappy.parquet); it failed "SNAPPY data does
 * not decompress". Every codec, v1 and v2, and a non-empty page with no bytes
 * is still an error. */
TEST(empty_pages_with_no_stored_bytes) {
  static const int codecs[] = {0, 1, 2, 4, 6, 7};
  for (size_t k = 0; k < sizeof codecs / sizeof codecs[0]; k++) {
    pqc_column col = {
        .physical = LADLE_PQ_FLOAT, .converted = -1, .optional = true, .codec = codecs[k]};
    uint8_t levels[2] = {2 << 1, 0}; /* an RLE run: two levels of 0 (null) */
    pqc_page pg;
    memset(&pg, 0, sizeof pg);
    pg.type = 3;
    pg.num_values = 2;
    pg.num_nulls = 2;
    pg.num_rows = 2;
    pg.levels = levels;
    pg.def_len = 2;
    pg.v2_compressed = true;
    pg.uncompressed = -1;
    ladle_error e;
    ladle_column c;
    ladle_status st = read_crafted(&col, 2, -1, &pg, 1, &c, &e);
    if (st != LADLE_OK) fprintf(stderr, "  codec %d: %s\n", codecs[k], e.message);
    CHECK_OK(st);
    if (st == LADLE_OK) {
      CHECK(c.length == 2 && c.null_count == 2);
      ladle_column_release(&c);
    }
    /* v1: the levels are part of the compressed page; an empty page of no rows */
    pqc_page v1;
    memset(&v1, 0, sizeof v1);
    v1.type = 0;
    v1.uncompressed = -1;
    pqc_page both[2] = {v1, pg};
    st = read_crafted(&col, 2, -1, both, 2, &c, &e);
    CHECK_OK(st);
    if (st == LADLE_OK) ladle_column_release(&c);
    /* a page that claims bytes but stores none */
    pg.uncompressed = 6;
    CHECK(read_crafted(&col, 2, -1, &pg, 1, NULL, &e) == LADLE_ECORRUPT);
  }
}

/* A column of logical type UNKNOWN is Polars' (and pyarrow's) Null: read as
 * nulls (it was read as Int32, which Polars' schema then refused); a list of
 * it is refused naming the column and "List(Null)" (null_list.parquet). */
TEST(null_columns_and_lists_of_null) {
  uint8_t levels[] = {2, 0, 0, 0, 3 << 1, 0}; /* a v1 level block: one RLE run of three 0s */
  pqc_buf b = {0};
  pqc_put(&b, levels, sizeof levels);
  pqc_column col = {.physical = LADLE_PQ_INT32, .converted = -1, .logical = 11, .optional = true};
  pqc_page pg = data_page(0, 3, &b);
  ladle_error e;
  ladle_column c;
  CHECK_OK(read_crafted(&col, 3, -1, &pg, 1, &c, &e));
  CHECK(c.type.id == LADLE_TYPE_NULL && c.length == 3 && c.null_count == 3);
  ladle_column_release(&c);
  col.list = true;
  CHECK(read_crafted(&col, 3, -1, &pg, 1, NULL, &e) == LADLE_ENOTSUP &&
        strstr(e.message, "List(Null)") != NULL && strstr(e.message, "'c'") != NULL);
  free(b.p);
}

/* A data page v2's num_nulls and num_rows agree with its levels (Polars 2.1
 * trusts num_nulls, skipping the levels when it is 0: it panics or misreads),
 * for a flat column and a list (rows are the levels that start one). */
TEST(v2_page_counts_must_match_the_levels) {
  uint8_t vals[16] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
  uint8_t def[3] = {1 << 1 | 1, 0x05}; /* levels 1 0 1: bit-packed, one group */
  for (int list = 0; list < 2; list++) {
    pqc_column col = {.physical = LADLE_PQ_INT64, .converted = -1, .optional = true, .list = list};
    /* flat: rows [1, null, 2]; list (required-element levels shifted: max 3):
     * [[1], [], [2]] with rep 0 0 0 */
    uint8_t levels[8];
    int nl = 0;
    if (list) {
      levels[nl++] = 3 << 1; /* rep: an RLE run of three 0s */
      levels[nl++] = 0;
      levels[nl++] = 1 << 1 | 1; /* def at 2 bits: 3 1 3 -> 0b11 01 11 */
      levels[nl++] = 0x37;
    } else {
      memcpy(levels, def, 2);
      nl = 2;
    }
    for (int k = 0; k < 4; k++) {
      pqc_page pg;
      memset(&pg, 0, sizeof pg);
      pg.type = 3;
      pg.num_values = 3;
      pg.num_nulls = 1 + (k == 1) - (k == 2);
      pg.num_rows = 3 + (k == 3);
      pg.levels = levels;
      pg.rep_len = list ? 2 : 0;
      pg.def_len = list ? 2 : 2;
      pg.data = vals;
      pg.len = 16;
      pg.uncompressed = -1;
      ladle_error e;
      ladle_column c;
      ladle_status st = read_crafted(&col, 3, 3, &pg, 1, &c, &e);
      if (k == 0) {
        if (st != LADLE_OK) fprintf(stderr, "  list %d: %s\n", list, e.message);
        CHECK_OK(st);
        if (st == LADLE_OK) ladle_column_release(&c);
      } else {
        CHECK(st == LADLE_ECORRUPT && strstr(e.message, "the page header counts") != NULL);
      }
    }
  }
}

/* A flat column chunk whose footer counts other values than the row group's
 * rows (found by fuzz/diff_pyarrow.py: ladle read the row group's rows,
 * pyarrow as many as the chunk said, Polars panicked) is an error. */
TEST(flat_chunk_value_count_must_be_the_row_count) {
  uint8_t vals[12] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0};
  pqc_buf b = {0};
  pqc_put(&b, vals, sizeof vals);
  pqc_column col = {.physical = LADLE_PQ_INT32, .converted = -1};
  pqc_page pg = data_page(0, 3, &b);
  ladle_error e;
  ladle_column c;
  CHECK_OK(read_crafted(&col, 3, 3, &pg, 1, &c, &e));
  ladle_column_release(&c);
  for (int64_t nv = 0; nv <= 4; nv += 2) /* 0, 2, 4 */
    CHECK(read_crafted(&col, 3, nv, &pg, 1, NULL, &e) == LADLE_ECORRUPT &&
          strstr(e.message, "the column chunk counts") != NULL);
  free(b.p);
}

#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>

/* A batch compressor as a GPU's backend is one to the writer
 * (ladle_pq_compressor), on the host: zstd at the writer's own level, so
 * that the file must come out as the writer's own compression makes it.
 * mode 1 declines (LADLE_ENOTSUP), mode 2 fails. */
typedef struct host_batch {
  int mode, calls;
  size_t pages;
} host_batch;

static ladle_status host_batch_run(void *ctx, int codec, size_t n, const uint8_t *const *in,
                                   const int64_t *len, uint8_t **block, int64_t *off,
                                   int64_t *outlen, ladle_error *err) {
  host_batch *h = ctx;
  h->calls++;
  h->pages += n;
  if (h->mode == 1) return ladle_err_set(err, LADLE_ENOTSUP, "declined");
  if (h->mode == 2) return ladle_err_set(err, LADLE_EDEVICE, "the batch compressor broke");
  if (codec != 6) return ladle_err_set(err, LADLE_EINVAL, "codec %d", codec);
  size_t cap = 1;
  for (size_t i = 0; i < n; i++) cap += ZSTD_compressBound((size_t)len[i]);
  *block = malloc(cap);
  int64_t at = 0;
  for (size_t i = 0; i < n; i++) {
    size_t z = ZSTD_compress(*block + at, cap - (size_t)at, in[i], (size_t)len[i], 3);
    if (ZSTD_isError(z)) return ladle_err_set(err, LADLE_ECOMPUTE, "zstd");
    off[i] = at;
    outlen[i] = (int64_t)z;
    at += (int64_t)z;
  }
  return LADLE_OK;
}

static uint8_t *slurp(const char *path, long *n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc((size_t)*n + 1);
  if (fread(p, 1, (size_t)*n, f) != (size_t)*n) *n = -1;
  fclose(f);
  return p;
}

/* The writer with a batch compressor (a GPU result's path): every window's
 * pages go to it in one batch and the chunks are put together from what it
 * returns: the file is byte for byte the one the writer makes alone (a
 * dictionary column, one of distinct values, one with nulls, two pages a
 * chunk, several windows, on threads and on this one); a compressor that
 * declines leaves the same file; one that fails fails the write with its
 * message and leaves no file. */
TEST(batch_compressed_pages_make_the_same_file) {
  enum { N = 400000 };
  int32_t *few = malloc(N * sizeof *few);
  int64_t *many = malloc(N * sizeof *many);
  double *d = malloc(N * sizeof *d);
  uint8_t *valid = malloc(N);
  for (int64_t i = 0; i < N; i++) {
    few[i] = (int32_t)(i * 7919 % 13);
    many[i] = i * 1000003 % 998244353;
    d[i] = (double)(i % 1000) / 8;
    valid[i] = i % 5 != 2;
  }
  colspec cols[] = {{"few", LADLE_TYPE_INT32, few, NULL},
                    {"many", LADLE_TYPE_INT64, many, NULL},
                    {"d", LADLE_TYPE_FLOAT64, d, valid}};
  ladle_table *t = make_table(N, 3, cols, 150000);
  CHECK(t != NULL);
  ladle_parquet_write_opts o = {6, 0, 70000, true, true};
  char base[] = "/tmp/ladle_batch_base_XXXXXX";
  char path[] = "/tmp/ladle_batch_XXXXXX";
  int fd1 = mkstemp(base), fd2 = mkstemp(path);
  close(fd1);
  close(fd2);
  for (int threads = 1; t != NULL && threads <= 2; threads += 1) {
    ladle_pool *pool = NULL;
    if (threads > 1) CHECK_OK(ladle_pool_create(threads, &pool, &err_));
    CHECK_OK(ladle_pq_write(t, base, &o, pool, NULL, &err_));
    long nb = 0, np = 0;
    uint8_t *want = slurp(base, &nb);
    for (int mode = 0; mode < 3; mode++) {
      host_batch h = {mode, 0, 0};
      ladle_pq_compressor comp = {host_batch_run, &h};
      ladle_status st = ladle_pq_write(t, path, &o, pool, &comp, &err_);
      /* 6 row groups x 3 columns: one window on 2 threads (32 chunks), two
       * on one (16) */
      CHECK_EQ_I(h.calls, mode == 2 ? 1 : threads > 1 ? 1 : 2);
      if (mode == 2) {
        CHECK_EQ_I(st, LADLE_EDEVICE);
        CHECK(strstr(err_.message, "the batch compressor broke") != NULL);
        CHECK(access(path, F_OK) != 0);
        continue;
      }
      CHECK_OK(st);
      /* `few` and `d`: two data pages in each of the 5 full row groups'
       * chunks (65,536 rows a page), one in the last's, and a dictionary
       * page; `many` (plain 8-byte values, pages of 128 KiB: 16,124 rows):
       * 5 pages a full row group, 4 in the last (50,000 rows) */
      CHECK_EQ_I(h.pages, 5 * (2 * 2 + 5) + (2 + 4) + 6 * 2);
      uint8_t *got = slurp(path, &np);
      CHECK(got != NULL && want != NULL && np == nb && nb > 0);
      if (got != NULL && want != NULL && np == nb) CHECK(memcmp(got, want, (size_t)nb) == 0);
      free(got);
    }
    free(want);
    if (pool != NULL) ladle_pool_destroy(pool);
  }
  unlink(base);
  unlink(path);
  ladle_table_release(t);
  free(few);
  free(many);
  free(d);
  free(valid);
}
#endif
