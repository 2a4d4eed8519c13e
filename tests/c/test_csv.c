/* test_csv.c — the CSV reader through the C API: inference, quoting, nulls, and
 * thousands of random inputs (quotes, separators, newlines, digits, letters) that
 * must parse or fail with a message, never crash (run under ASan in CI). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TEST_RNG_SEED 0x9e3779b97f4a7c15ULL
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
  ladle_engine_opts eo = {LADLE_DEVICE_CPU, 0, 2, 3, 0, NULL}; /* 3-row partitions */
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

TEST(random_inputs_never_crash) {
  strcpy(path, "/tmp/ladle-csv-XXXXXX");
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  static const char alphabet[] = "\"\",,,\n\n\r0123456789-.eaTFtrue|#";
  char buf[4096];
  int ok = 0, failed = 0;
  for (int k = 0; k < 3000; k++) {
    size_t n = (size_t)(test_rand() % sizeof buf);
    for (size_t i = 0; i < n; i++) buf[i] = alphabet[test_rand() % (sizeof alphabet - 1)];
    write_file(buf, n);
    /* every other input read into a buffer of its exact size (what lets the
     * sanitizers see a read past the data), the others mapped */
    if (k % 2)
      setenv("LADLE_MMAP", "0", 1);
    else
      unsetenv("LADLE_MMAP");
    ladle_csv_opts o = ladle_csv_opts_default();
    o.has_header = test_rand() % 2;
    o.try_parse_dates = test_rand() % 2;
    o.truncate_ragged_lines = test_rand() % 2;
    o.ignore_errors = test_rand() % 2;
    o.comment_prefix = test_rand() % 3 == 0 ? "#" : NULL;
    o.quote = test_rand() % 4 == 0 ? 0 : '"';
    o.separator = test_rand() % 3 == 0 ? '|' : ',';
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

/* Options reading columns a and b as Strings. */
static ladle_csv_opts string_opts(void) {
  static const char *cols[] = {"a", "b"};
  static ladle_dtype types[2];
  types[0] = types[1] = ladle_dtype_make(LADLE_TYPE_STRING);
  ladle_csv_opts o = ladle_csv_opts_default();
  o.columns = cols;
  o.types = types;
  o.n_columns = 2;
  return o;
}

/* Reads `text` with the options; *msg gets the error (or ""), *rows the row
 * count; returns the status. Column 1 (if any) as text into col1 (rows
 * joined by '|', null as "~"). */
static ladle_status read_text(const char *text, size_t len, const ladle_csv_opts *o, int64_t *rows,
                              char *col1, size_t col1_cap) {
  strcpy(path, "/tmp/ladle-csv-XXXXXX");
  int fd = mkstemp(path);
  close(fd);
  write_file(text, len);
  ladle_status st;
  err_.message[0] = 0;
  ladle_result *r = scan_csv_file(o, &st);
  unlink(path);
  *rows = -1;
  if (col1) col1[0] = 0;
  if (r == NULL) return st;
  *rows = ladle_result_num_rows(r);
  if (col1 != NULL && ladle_result_num_columns(r) > 1) {
    ladle_column c = result_col(r, ladle_result_column_name(r, 1));
    for (int64_t i = 0; i < c.length; i++) {
      const char *v = isnull(&c, i) ? "~" : gets_(&c, i);
      snprintf(col1 + strlen(col1), col1_cap - strlen(col1), "%s%s", i ? "|" : "", v);
    }
    ladle_column_release(&c);
  }
  ladle_result_destroy(r);
  return st;
}

/* Quotes as Polars 2.1 reads them (each case checked against it): a field
 * that starts with a quote runs to a separator outside quotes, every quote
 * toggling, and as a String must end with a quote (`"ab"cd` raises, whatever
 * ignore_errors says; `"x"y"z"` is xyz); an unterminated quote no longer
 * swallows the rest of the file (it raises when the data ends with a newline
 * inside it, or when the field is read as a String); a quote inside an
 * unquoted field that joins lines raises, or with ignore_errors the records
 * are the parser's; comment lines with quotes are one line. */
TEST(quotes_as_polars_reads_them) {
  static const struct {
    const char *text;
    bool ignore;
    ladle_status want;
    int64_t rows;
    const char *col1, *msg;
  } cases[] = {
      {"a,b\n1,\"ab\"cd\n2,x\n", false, LADLE_ECORRUPT, 0, NULL,
       "record 1, column 'b': the quoted field \"ab\"cd does not end"},
      {"a,b\n1,\"ab\"cd\n2,x\n", true, LADLE_ECORRUPT, 0, NULL,
       "does not end with its closing quote"},
      {"a,b\n1,\"ab\" \n", false, LADLE_ECORRUPT, 0, NULL, "does not end with its closing quote"},
      {"a,b\n1,\"abc\n2,x\n", false, LADLE_ECORRUPT, 0, NULL,
       "record 1: a quote is not closed before the end of the file"},
      {"a,b\n1,x\n2,\"abc", false, LADLE_ECORRUPT, 0, NULL,
       "record 2, column 'b': the quoted field \"abc does not end"},
      {"a,b\n1,\"", false, LADLE_ECORRUPT, 0, NULL, "does not end with its closing quote"},
      {"a,b\n1,ab\"cd\n2,x\n", false, LADLE_ECORRUPT, 0, NULL, "record 1: a quote"},
      {"a,b\n1,ab\"c\n2,x\"y\n", false, LADLE_ECORRUPT, 0, NULL,
       "inside an unquoted field makes Polars' parser split"},
      {"a,b\n1,ab\"c\n2,x\"y\n", true, LADLE_OK, 2, "ab\"c|x\"y", NULL},
      {"a,b\n1,x\"\ny\"\n", true, LADLE_OK, 2, "x\"|~", NULL},
      {"a,b\n1,ab\"cd\n2,x\n", true, LADLE_OK, 2, "ab\"cd|x", NULL},
      {"a,b\n1,ab\"cd", false, LADLE_OK, 1, "ab\"cd", NULL},
      {"a,b\n1,ab\"c\"d\n2,x\n", false, LADLE_OK, 2, "ab\"c\"d|x", NULL},
      {"a,b\n1,\"x\"y\"z\"\n2,\"a\"\"b\"\n3,\"c,d\"\n4,\"\"\n5,\"e\nf\"\n", false, LADLE_OK, 5,
       "xyz|a\"b|c,d||e\nf", NULL},
      {"a,b\n1,\"x\"\n#\"\n2,y\n#\"\n", false, LADLE_OK, 2, "x|y", NULL}, /* comments, with '#' */
      {"a,b\n1,\"x\n#y\"\n2,z\n", false, LADLE_OK, 2, "x\n#y|z", NULL},
      {"a,b\n\"1,x\n", true, LADLE_ECORRUPT, 0, NULL,
       "column 'a': the quoted field"}, /* a String, so even so */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    ladle_csv_opts o = string_opts();
    o.ignore_errors = cases[k].ignore;
    o.comment_prefix = "#";
    int64_t rows;
    char col1[256];
    ladle_status st = read_text(cases[k].text, strlen(cases[k].text), &o, &rows, col1, sizeof col1);
    bool ok = st == cases[k].want &&
              (st != LADLE_OK || (rows == cases[k].rows && strcmp(col1, cases[k].col1) == 0)) &&
              (cases[k].msg == NULL || strstr(err_.message, cases[k].msg) != NULL);
    if (!ok)
      fprintf(stderr, "  case %zu: status %d rows %lld col1 [%s] message %s\n", k, (int)st,
              (long long)rows, col1, err_.message);
    CHECK(ok);
  }
}

/* A separator ending the data's last line (no newline after it) adds no
 * field, as in Polars ('a,b\n1,2,' has 1 row of 2 columns; it raised for a
 * third field); with a newline after it, or two of them, it still does. And
 * fields past the last column read are not counted (Polars skips them). */
TEST(trailing_separator_on_the_last_line) {
  static const struct {
    const char *text;
    ladle_status want;
    const char *col1;
  } cases[] = {
      {"a,b\n1,2,", LADLE_OK, "2"},          {"a,b\n3,4\n1,2,", LADLE_OK, "4|2"},
      {"a,b\n1,,", LADLE_OK, "~"},           {"a,b\n1,\"x\",", LADLE_OK, "x"},
      {"a,b\n1,2,\n", LADLE_ECORRUPT, NULL}, {"a,b\n1,2,\r\n", LADLE_ECORRUPT, NULL},
      {"a,b\n1,2,,", LADLE_ECORRUPT, NULL},  {"a,b\n1,2,\n3,4", LADLE_ECORRUPT, NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    ladle_csv_opts o = string_opts();
    int64_t rows;
    char col1[64];
    ladle_status st = read_text(cases[k].text, strlen(cases[k].text), &o, &rows, col1, sizeof col1);
    bool ok = st == cases[k].want && (st != LADLE_OK || strcmp(col1, cases[k].col1) == 0) &&
              (st == LADLE_OK || strstr(err_.message, "record") != NULL);
    if (!ok)
      fprintf(stderr, "  case %zu: status %d col1 [%s] %s\n", k, (int)st, col1, err_.message);
    CHECK(ok);
  }
  /* reading only the first column: extra fields are not looked at */
  const char *text = "a,b\n1,2,3,4\n";
  ladle_csv_opts o = ladle_csv_opts_default();
  const char *cols[] = {"a"};
  ladle_dtype types[] = {ladle_dtype_make(LADLE_TYPE_INT64)};
  o.columns = cols;
  o.types = types;
  o.n_columns = 1;
  int64_t rows;
  CHECK_OK(read_text(text, strlen(text), &o, &rows, NULL, 0));
  CHECK_EQ_I(rows, 1);
}

/* Invalid UTF-8 never reaches a String column: with a String column read,
 * the records' bytes are checked (Polars checks its chunks: any field, quoted
 * or not, a comment line), the error naming the file, the record and the
 * column; a file of no String column is not checked (its bytes never become
 * strings). Every invalid kind, and valid text of every length. */
TEST(invalid_utf8_in_csv) {
  static const struct {
    const char *text;
    const char *msg; /* NULL: reads */
  } cases[] = {
      {"a,b\n1,\xff\xfe\n2,x\n", "record 1, column 'b': invalid UTF-8"},
      {"a,b\n1,\"x\xff\"\n", "record 1, column 'b': invalid UTF-8"},
      {"a,b\n1,x\n2,\xc3\n", "record 2, column 'b': invalid UTF-8"},
      {"a,b\n1,\xc3\n2,\xa9\n", "record 1, column 'b': invalid UTF-8"}, /* split by a newline */
      {"a,b\n1,\xed\xa0\x80\n", "invalid UTF-8"},
      {"a,b\n1,\xc0\xaf\n", "invalid UTF-8"},
      {"a,b\n1,\xf4\x90\x80\x80\n", "invalid UTF-8"},
      {"a,b\n\xff,x\n", "record 1, column 'a': invalid UTF-8"},
      {"a,b\n1,x\n#\xff\n", "comment line after record 1"},
      {"a,b\n#\xff\n1,x\n", "comment line before record 1"},
      {"a,b\n1,\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80\n2,\xe2\x82\xac\n", NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    for (int strings = 0; strings < 2; strings++) {
      ladle_csv_opts o = ladle_csv_opts_default();
      o.comment_prefix = "#";
      const char *cols[] = {"a", "b"};
      ladle_dtype types[] = {ladle_dtype_make(strings ? LADLE_TYPE_STRING : LADLE_TYPE_INT64),
                             ladle_dtype_make(strings ? LADLE_TYPE_STRING : LADLE_TYPE_INT64)};
      o.columns = cols;
      o.types = types;
      o.n_columns = 2;
      o.ignore_errors = true; /* numbers that do not parse are null */
      int64_t rows;
      ladle_status st = read_text(cases[k].text, strlen(cases[k].text), &o, &rows, NULL, 0);
      bool ok = strings && cases[k].msg != NULL
                    ? st == LADLE_ECORRUPT && strstr(err_.message, cases[k].msg) &&
                          strstr(err_.message, "/tmp/ladle-csv-")
                    : st == LADLE_OK;
      if (!ok) fprintf(stderr, "  case %zu strings %d: %d %s\n", k, strings, (int)st, err_.message);
      CHECK(ok);
    }
  /* the check runs over blocks of records: a bad comment line between two
   * blocks, and bad bytes in the last record of a long file, are found too */
  for (int where = 0; where < 2; where++) {
    char *big = malloc(600 * 16 + 64);
    size_t len = (size_t)sprintf(big, "a,b\n");
    for (int r = 0; r < 600; r++) {
      len += (size_t)sprintf(big + len, "%d,w%d\n", r, r);
      if (where == 0 && r == 255) len += (size_t)sprintf(big + len, "#\xff\n");
    }
    if (where == 1) len += (size_t)sprintf(big + len, "600,\xe2\x82\n");
    ladle_csv_opts o = string_opts();
    o.comment_prefix = "#";
    int64_t rows;
    CHECK(read_text(big, len, &o, &rows, NULL, 0) == LADLE_ECORRUPT &&
          strstr(err_.message, where == 0 ? "comment line" : "record 601, column 'b'") != NULL);
    free(big);
  }
  /* a multi-byte separator or quote byte would cut characters: refused */
  ladle_csv_opts o = ladle_csv_opts_default();
  o.separator = (char)0xa9;
  int64_t rows;
  CHECK(read_text("a\n", 2, &o, &rows, NULL, 0) == LADLE_EINVAL && strstr(err_.message, "ASCII"));
}
