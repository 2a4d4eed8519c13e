/* test_csv.c — the CSV reader through the C API: inference, quoting, nulls, and
 * thousands of random inputs (quotes, separators, newlines, digits, letters) that
 * must parse or fail with a message, never crash (run under ASan in CI). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

static char path[] = "/tmp/ladle-csv-XXXXXX";

static void write_file(const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  fwrite(text, 1, len, f);
  fclose(f);
}

static ladle_result *scan_csv_file(const ladle_csv_opts *o, ladle_status *st) {
  const char *paths[] = {path};
  ladle_plan *p = NULL;
  *st = ladle_plan_scan_csv(1, paths, o, &p, &err_);
  if (*st != LADLE_OK) return NULL;
  ladle_engine_opts eo = {LADLE_DEVICE_CPU, 0, 2, 3}; /* 3-row partitions */
  ladle_engine *e;
  ladle_result *r = NULL;
  *st = ladle_engine_create(&eo, &e, &err_);
  if (*st == LADLE_OK) {
    *st = ladle_engine_execute(e, p, &r, &err_);
    ladle_engine_destroy(e);
  }
  ladle_plan_destroy(p);
  return r;
}

TEST(infers_types_and_handles_quotes) {
  strcpy(path, "/tmp/ladle-csv-XXXXXX");
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  const char *text =
      "i,f,s,b,d\n1,1.5,\"a,b\",true,2020-01-02\n-2,,\"line\nbreak\",false,\n,3,\"q\"\"q\",,1999-"
      "12-31\n";
  write_file(text, strlen(text));
  ladle_csv_opts o = ladle_csv_opts_default();
  o.try_parse_dates = true;
  ladle_status st;
  ladle_result *r = scan_csv_file(&o, &st);
  CHECK(r != NULL);
  if (r) {
    CHECK_EQ_I(ladle_result_num_rows(r), 3);
    CHECK_EQ_I(ladle_result_column_type(r, 0).id, LADLE_TYPE_INT64);
    CHECK_EQ_I(ladle_result_column_type(r, 1).id, LADLE_TYPE_FLOAT64);
    CHECK_EQ_I(ladle_result_column_type(r, 2).id, LADLE_TYPE_STRING);
    CHECK_EQ_I(ladle_result_column_type(r, 3).id, LADLE_TYPE_BOOL);
    CHECK_EQ_I(ladle_result_column_type(r, 4).id, LADLE_TYPE_DATE);
    ladle_column s = result_col(r, "s"), i = result_col(r, "i"), d = result_col(r, "d");
    CHECK(strcmp(gets_(&s, 0), "a,b") == 0 && strcmp(gets_(&s, 1), "line\nbreak") == 0 &&
          strcmp(gets_(&s, 2), "q\"q") == 0);
    CHECK(isnull(&i, 2) && geti(&i, 1) == -2);
    CHECK(isnull(&d, 1) && geti(&d, 2) == 10956); /* 1999-12-31 */
    ladle_column_release(&s);
    ladle_column_release(&i);
    ladle_column_release(&d);
  }
  ladle_result_destroy(r);
  /* a value that does not parse as the inferred type names record and column */
  const char *bad = "a\n1\n2\nx\n";
  write_file(bad, strlen(bad));
  o.infer_schema_length = 2;
  r = scan_csv_file(&o, &st);
  CHECK(r == NULL && st == LADLE_ECOMPUTE && strstr(err_.message, "record 3, column 'a'"));
  unlink(path);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

TEST(random_inputs_never_crash) {
  strcpy(path, "/tmp/ladle-csv-XXXXXX");
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  static const char alphabet[] = "\"\",,,\n\n\r0123456789-.eaTFtrue|#";
  char buf[4096];
  int ok = 0, failed = 0;
  for (int k = 0; k < 3000; k++) {
    size_t n = (size_t)(next() % sizeof buf);
    for (size_t i = 0; i < n; i++) buf[i] = alphabet[next() % (sizeof alphabet - 1)];
    write_file(buf, n);
    /* every other input read into a buffer of its exact size (what lets the
     * sanitizers see a read past the data), the others mapped */
    if (k % 2) setenv("LADLE_MMAP", "0", 1);
    else unsetenv("LADLE_MMAP");
    ladle_csv_opts o = ladle_csv_opts_default();
    o.has_header = next() % 2;
    o.try_parse_dates = next() % 2;
    o.truncate_ragged_lines = next() % 2;
    o.ignore_errors = next() % 2;
    o.comment_prefix = next() % 3 == 0 ? "#" : NULL;
    o.quote = next() % 4 == 0 ? 0 : '"';
    o.separator = next() % 3 == 0 ? '|' : ',';
    ladle_status st;
    err_.message[0] = 0;
    ladle_result *r = scan_csv_file(&o, &st);
    if (r != NULL) {
      ok++;
      ladle_result_destroy(r);
    } else {
      failed++;
      CHECK(err_.message[0] != '\0');
    }
  }
  unsetenv("LADLE_MMAP");
  CHECK(ok > 100);
  CHECK(failed > 0);
  unlink(path);
}

TEST(wide_header_of_duplicate_names_is_linear) {
  /* regression: found by fuzz_csv (a header of empty names made renaming
   * exponential); 20000 equal names must rename fast and stay unique */
  strcpy(path, "/tmp/ladle-csv-XXXXXX");
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  size_t n = 20000;
  char *text = malloc(n * 2 + 16);
  size_t k = 0;
  for (size_t i = 0; i + 1 < n; i++) text[k++] = '|';
  text[k++] = '\n';
  for (size_t i = 0; i + 1 < n; i++) text[k++] = '|';
  text[k++] = '\n';
  write_file(text, k);
  free(text);
  ladle_csv_opts o = ladle_csv_opts_default();
  o.separator = '|';
  ladle_status st;
  ladle_result *r = scan_csv_file(&o, &st);
  CHECK(r != NULL);
  if (r) {
    CHECK_EQ_I(ladle_result_num_columns(r), n);
    CHECK(strcmp(ladle_result_column_name(r, 0), "") == 0);
    CHECK(strcmp(ladle_result_column_name(r, 1), "_duplicated_0") == 0);
    CHECK(strcmp(ladle_result_column_name(r, n - 1), "_duplicated_19998") == 0);
  }
  ladle_result_destroy(r);
  unlink(path);
}
