/* fuzz_csv_gen.c — a structure-aware libFuzzer target for the CSV reader: the
 * input drives a generator of records (fields of numbers, dates, words, quoted
 * text with separators, doubled quotes and newlines inside, stray quotes,
 * empty fields, comment lines, blank lines, CRLF, valid multi-byte and invalid
 * UTF-8, a missing final newline) and of options (header, quote, separator,
 * comment prefix, skip_rows, skip_rows_after_header, ignore_errors, ragged
 * lines, dates, n_rows, a schema of chosen types or inference), so that
 * mutations stay CSV-shaped and reach the parser's corners. The file is
 * scanned and executed through the public API in small morsels; every String
 * column of a result must hold valid UTF-8 (checked apart from ladle's
 * validator), and any crash, leak or undefined behaviour is a bug.
 *
 * Input: bytes 0-3 options, then one byte per element (its low 5 bits pick
 * what comes next, the high 3 a small parameter), some elements taking one
 * more byte. */
#include "fuzz_common.h"

typedef struct gen {
  char *buf;
  size_t n, cap;
} gen;

static void put(gen *g, const void *s, size_t n) {
  if (n == 0) return;
  if (g->n + n > g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 1024;
    while (cap < g->n + n) cap *= 2;
    char *b = realloc(g->buf, cap);
    if (b == NULL) return;
    g->buf = b;
    g->cap = cap;
  }
  memcpy(g->buf + g->n, s, n);
  g->n += n;
}
static void puts_(gen *g, const char *s) { put(g, s, strlen(s)); }

static const char *k_words[] = {"a",
                                "word",
                                "NA",
                                "null",
                                "true",
                                "False",
                                "1e5",
                                "-0",
                                "0x10",
                                "  7 ",
                                "3.25",
                                "2020-02-29",
                                "2021-13-01",
                                "1999-12-31 23:59:59",
                                "2020-01-01T10:00:00.123",
                                "inf",
                                "NaN",
                                "+4",
                                "9223372036854775808",
                                ""};
static const char *k_utf8[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xd7\x90",
                               "\xef\xbf\xbd"};
static const char *k_bad[] = {"\xff", "\xc3",    "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80",
                              "\x80", "\xe2\x82"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4 || size > 65536) return 0;
  uint8_t o0 = data[0], o1 = data[1], o2 = data[2], o3 = data[3];
  static const char seps[] = {',', ';', '|', '\t'};
  char sep = seps[o0 & 3], quote = (o0 & 4) ? 0 : (o0 & 8) ? '\'' : '"';
  ladle_csv_opts o = ladle_csv_opts_default();
  o.separator = sep;
  o.quote = quote;
  o.has_header = !(o0 & 16);
  o.comment_prefix = (o0 & 32) ? ((o0 & 64) ? "//" : "#") : NULL;
  o.ignore_errors = o1 & 1;
  o.truncate_ragged_lines = o1 & 2;
  o.try_parse_dates = o1 & 4;
  o.missing_is_null = !(o1 & 8);
  o.skip_rows = (o1 >> 4) & 3;
  o.skip_rows_after_header = (o1 >> 6) & 1;
  if (o2 & 0x80) {
    o.n_rows = o2 & 0x3f;
    o.n_rows_set = true;
  }
  /* a schema of up to 4 columns c0.. of chosen types, or inference */
  static const ladle_type_id k_types[] = {LADLE_TYPE_STRING, LADLE_TYPE_INT64, LADLE_TYPE_FLOAT64,
                                          LADLE_TYPE_BOOL,   LADLE_TYPE_DATE,  LADLE_TYPE_INT32,
                                          LADLE_TYPE_STRING, LADLE_TYPE_UINT8};
  const char *names[4] = {"c0", "c1", "c2", "c3"};
  ladle_dtype types[4];
  size_t ncols = (o3 & 3) + 1;
  for (size_t k = 0; k < 4; k++) types[k] = ladle_dtype_make(k_types[(o3 >> (2 + k)) & 7]);
  bool schema = (o2 & 0x40) != 0;
  gen g = {0};
  if (schema && o.has_header) { /* a header naming the schema's columns (shuffled a little) */
    for (size_t k = 0; k < ncols; k++) {
      if (k) put(&g, &sep, 1);
      puts_(&g, names[(o2 & 1) && k < 2 ? 1 - k : k]);
    }
    puts_(&g, "\n");
  }
  if (schema) {
    o.columns = names;
    o.types = types;
    o.n_columns = ncols;
  }
  for (size_t i = 4; i < size; i++) {
    uint8_t b = data[i], what = b & 31, arg = b >> 5;
    uint8_t next = i + 1 < size ? data[i + 1] : 0;
    char tmp[64];
    switch (what) {
      case 0:
      case 1:
      case 2:
        put(&g, &sep, 1);
        break;
      case 3:
      case 4:
        puts_(&g, "\n");
        break;
      case 5:
        puts_(&g, "\r\n");
        break;
      case 6:
        if (quote) put(&g, &quote, 1);
        break; /* a stray quote */
      case 7:  /* a quoted field: words, separators, newlines, doubled quotes */
        if (!quote) break;
        put(&g, &quote, 1);
        for (int k = 0; k <= arg; k++) {
          switch ((next >> (2 * (k & 3))) & 3) {
            case 0:
              puts_(&g, k_words[(k + next) % 20]);
              break;
            case 1:
              put(&g, &sep, 1);
              break;
            case 2:
              puts_(&g, "\n");
              break;
            default:
              put(&g, &quote, 1);
              put(&g, &quote, 1);
              break;
          }
        }
        put(&g, &quote, 1);
        i++;
        break;
      case 8:
      case 9:
      case 10:
        snprintf(tmp, sizeof tmp, "%d", (int)(int8_t)next * (arg + 1) * (what == 10 ? 100003 : 1));
        puts_(&g, tmp);
        i++;
        break;
      case 11:
        snprintf(tmp, sizeof tmp, "%d.%02d", (int8_t)next, arg * 13);
        puts_(&g, tmp);
        i++;
        break;
      case 12:
        snprintf(tmp, sizeof tmp, "20%02d-%02d-%02d", next % 40, arg + 1 + (next >> 6),
                 next % 29 + 1);
        puts_(&g, tmp);
        i++;
        break;
      case 13:
      case 14:
      case 15:
        puts_(&g, k_words[(arg * 7 + what + next) % 20]);
        i++;
        break;
      case 16: /* a comment line */
        puts_(&g, (o0 & 64) ? "//" : "#");
        puts_(&g, k_words[next % 20]);
        if (arg & 1 && quote) put(&g, &quote, 1);
        puts_(&g, "\n");
        i++;
        break;
      case 17:
        puts_(&g, "\n\n");
        break;
      case 18:
        puts_(&g, k_utf8[arg % 5]);
        break;
      case 19:
        puts_(&g, k_bad[arg % 7]);
        break;
      case 20:
        put(&g, &next, 1);
        i++;
        break; /* any byte */
      case 21: /* a whole record of numbers */
        for (int k = 0; k <= arg; k++) {
          if (k) put(&g, &sep, 1);
          snprintf(tmp, sizeof tmp, "%d", next + k);
          puts_(&g, tmp);
        }
        puts_(&g, "\n");
        i++;
        break;
      case 22:
        for (int k = 0; k < 8 * (arg + 1); k++) puts_(&g, "x");
        break; /* a long field */
      case 23:
        if (quote) {
          put(&g, &quote, 1);
          puts_(&g, k_words[next % 20]);
          put(&g, &quote, 1);
          puts_(&g, "tail");
        }
        i++;
        break;
      default:
        puts_(&g, k_words[(what + arg) % 20]);
        break;
    }
  }
  int fd = memfd_create("ladle-fuzz-csv", 0);
  if (fd < 0 || (g.n > 0 && write(fd, g.buf, g.n) != (ssize_t)g.n)) {
    if (fd >= 0) close(fd);
    free(g.buf);
    return 0;
  }
  free(g.buf);
  setenv("LADLE_MMAP", "0", 1);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  const char *paths[] = {path};
  ladle_error err;
  ladle_plan *p = NULL;
  if (ladle_plan_scan_csv(1, paths, &o, &p, &err) == LADLE_OK) {
    ladle_engine_opts eo = {LADLE_DEVICE_CPU, 0, 1, 1 + (o3 >> 6) * 3, 0, NULL};
    ladle_engine *e;
    if (ladle_engine_create(&eo, &e, &err) == LADLE_OK) {
      ladle_result *r = NULL;
      if (ladle_engine_execute(e, p, &r, &err) == LADLE_OK) {
        ladle_table *t = ladle_result_table(r);
        for (size_t c = 0; c < t->schema.n; c++) {
          ladle_column col;
          if (ladle_table_concat_column(t, c, &col, &err) == LADLE_OK) {
            fuzz_check_strings(&col);
            ladle_column_release(&col);
          }
        }
        ladle_table_release(t);
        ladle_result_destroy(r);
      }
      ladle_engine_destroy(e);
    }
    ladle_plan_destroy(p);
  }
  close(fd);
  return 0;
}
