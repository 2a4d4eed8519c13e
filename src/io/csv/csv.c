/* csv.c — see csv.h. Every field access is bounded by its record; every error
 * names the file, the record (1-based line of data) and the column. */
#include "csv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef LADLE_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef LADLE_HAVE_ZSTD
#include <zstd.h>
#endif

#include "../../core/temporal.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

ladle_csv_opts ladle_csv_opts_default(void) {
  ladle_csv_opts o;
  memset(&o, 0, sizeof o);
  o.separator = ',';
  o.quote = '"';
  o.has_header = true;
  o.missing_is_null = true;
  o.infer_schema_length = 100;
  return o;
}

void ladle_csv_close(ladle_csv_file *f) {
  if (f == NULL) return;
  if (f->borrowed) { /* a copy with records of its own (ladle_csv_parser_records) */
    free(f->starts);
    free(f);
    return;
  }
  if (f->names != NULL)
    for (size_t i = 0; i < f->ncols; i++) free(f->names[i]);
  free(f->names);
  free(f->starts);
  free(f->col_nulls);
  free(f->n_col_nulls);
  if (f->mapped)
    munmap(f->data, (size_t)f->size);
  else
    free(f->data);
  free(f->path);
  free(f);
}

/* ----------------------------------------------------------------- loading */

/* Doubles the decompression buffer when the stream has filled it (one spare byte
 * stays for the terminating NUL). */
static inline ladle_status grow_when_full(uint8_t **dst, int64_t len, int64_t *cap,
                                          ladle_error *err) {
  if (len < *cap) return LADLE_OK;
  uint8_t *d = realloc(*dst, (size_t)(*cap * 2) + 1);
  if (d == NULL) return LADLE_OOM(err, "csv decompression");
  *dst = d;
  *cap *= 2;
  return LADLE_OK;
}
/* Maps the file (read only: the pages stay the page cache's, nothing is
 * copied; with LADLE_MMAP=0 reads it) or, for a compressed file, decompresses
 * it into memory. *mapped says
 * which, so that ladle_csv_close unmaps or frees. A file changed on disk while
 * it is mapped is the caller's problem, as with any mapped reader. */
static ladle_status load(const char *path, uint8_t **out, int64_t *out_len, bool *mapped,
                         ladle_error *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ladle_err_set(err, LADLE_EIO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return ladle_err_set(err, LADLE_EIO, "%s: not a regular file", path);
  }
  int64_t n = (int64_t)sb.st_size;
  *mapped = false;
  if (n == 0) {
    close(fd);
    *out = calloc(1, 1);
    *out_len = 0;
    return *out ? LADLE_OK : LADLE_OOM(err, "csv file");
  }
  uint8_t *buf = ladle_use_mmap()
                     ? mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)
                     : MAP_FAILED;
  bool is_map = buf != MAP_FAILED;
  if (!is_map) { /* read into a buffer of its own */
    buf = malloc((size_t)n + 1);
    ladle_status rs =
        buf != NULL ? ladle_read_at(fd, path, 0, buf, n, err) : LADLE_OOM(err, "csv file");
    if (rs != LADLE_OK) {
      free(buf);
      close(fd);
      return rs;
    }
  }
  close(fd);
  bool zstd = n >= 4 && buf[0] == 0x28 && buf[1] == 0xB5 && buf[2] == 0x2F && buf[3] == 0xFD;
  bool gz = n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
  if (!zstd && !gz) {
    *out = buf;
    *out_len = n;
    *mapped = is_map;
    return LADLE_OK;
  }
  /* decompress by streaming into a growing buffer */
  int64_t cap = LADLE_MAX(n * 4, 1 << 16), len = 0;
  uint8_t *dst = malloc((size_t)cap + 1);
  ladle_status st = dst ? LADLE_OK : LADLE_OOM(err, "csv decompression");
#ifdef LADLE_HAVE_ZSTD
  if (st == LADLE_OK && zstd) {
    ZSTD_DStream *z = ZSTD_createDStream();
    ZSTD_inBuffer in = {buf, (size_t)n, 0};
    while (st == LADLE_OK && z != NULL) {
      if ((st = grow_when_full(&dst, len, &cap, err)) != LADLE_OK) break;
      ZSTD_outBuffer outb = {dst + len, (size_t)(cap - len), 0};
      size_t r = ZSTD_decompressStream(z, &outb, &in);
      len += (int64_t)outb.pos;
      if (ZSTD_isError(r))
        st = ladle_err_set(err, LADLE_ECORRUPT, "%s: zstd: %s", path, ZSTD_getErrorName(r));
      else if (r == 0 && in.pos == in.size)
        break;
      else if (in.pos == in.size && outb.pos < outb.size)
        st = ladle_err_set(err, LADLE_ECORRUPT, "%s: truncated zstd stream", path);
    }
    if (z == NULL) st = LADLE_OOM(err, "zstd stream");
    ZSTD_freeDStream(z);
  }
#else
  if (st == LADLE_OK && zstd)
    st = ladle_err_set(err, LADLE_ENOTSUP, "%s: zstd-compressed CSV needs ladle built with zstd",
                       path);
#endif
#ifdef LADLE_HAVE_ZLIB
  if (st == LADLE_OK && gz) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)
      st = ladle_err_set(err, LADLE_ECORRUPT, "%s: gzip init failed", path);
    z.next_in = buf;
    z.avail_in = (uInt)n;
    while (st == LADLE_OK) {
      if ((st = grow_when_full(&dst, len, &cap, err)) != LADLE_OK) break;
      z.next_out = dst + len;
      z.avail_out = (uInt)LADLE_MIN(cap - len, (int64_t)1 << 30);
      uInt before = z.avail_out;
      int r = inflate(&z, Z_NO_FLUSH);
      len += before - z.avail_out;
      if (r == Z_STREAM_END) break;
      if (r != Z_OK && r != Z_BUF_ERROR)
        st = ladle_err_set(err, LADLE_ECORRUPT, "%s: gzip data is corrupt", path);
      else if (z.avail_in == 0 && z.avail_out > 0)
        st = ladle_err_set(err, LADLE_ECORRUPT, "%s: truncated gzip stream", path);
    }
    inflateEnd(&z);
  }
#else
  if (st == LADLE_OK && gz)
    st = ladle_err_set(err, LADLE_ENOTSUP, "%s: gzip-compressed CSV needs ladle built with zlib",
                       path);
#endif
  if (is_map)
    munmap(buf, (size_t)n);
  else
    free(buf);
  if (st != LADLE_OK) {
    free(dst);
    return st;
  }
  *out = dst;
  *out_len = len;
  return LADLE_OK;
}

/* ---------------------------------------------------------- record finding */

typedef struct chunk_scan {
  int64_t begin, end;
  int64_t *starts[2]; /* record starts found, per initial quote state */
  int64_t n[2], cap[2];
  int end_state[2];
  bool oom;
} chunk_scan;

typedef struct scan_job {
  const uint8_t *data;
  char quote;
  chunk_scan *chunks;
} scan_job;

/* Bit i of the result: byte p[i] == c, for 64 bytes. */
static inline uint64_t eq_mask64(const uint8_t *p, uint8_t c) {
#if defined(__AVX2__)
  __m256i v = _mm256_set1_epi8((char)c);
  uint32_t lo =
      (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)p), v));
  uint32_t hi = (uint32_t)_mm256_movemask_epi8(
      _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + 32)), v));
  return (uint64_t)hi << 32 | lo;
#else
  uint64_t m = 0;
  for (int i = 0; i < 64; i++) m |= (uint64_t)(p[i] == c) << i;
  return m;
#endif
}

/* Bit i: the xor of bits 0..i of x (is byte i after an odd number of quotes). */
static inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

static bool scan_reserve(chunk_scan *c, int s, int64_t more) {
  if (c->n[s] + more <= c->cap[s]) return true;
  int64_t cap = LADLE_MAX(c->cap[s] * 2, c->n[s] + more + 1024);
  int64_t *a = realloc(c->starts[s], (size_t)cap * sizeof *a);
  if (a == NULL) return false;
  c->starts[s] = a;
  c->cap[s] = cap;
  return true;
}

/* One pass over the chunk for both starting states: a newline after an even
 * number of the chunk's quotes ends a record if the chunk starts outside
 * quotes (list 0), after an odd number if it starts inside (list 1). 64 bytes
 * a step: the quote and newline bitmaps, the quote parity by prefix xor. */
static ladle_status scan_task(void *vctx, size_t i, ladle_error *err) {
  scan_job *j = vctx;
  chunk_scan *c = &j->chunks[i];
  const uint8_t *d = j->data;
  uint8_t quote = (uint8_t)j->quote;
  uint64_t carry = 0; /* all ones: an odd number of quotes so far */
  int64_t p = c->begin;
  uint8_t tail[64];
  while (p < c->end) {
    const uint8_t *blk = d + p;
    int64_t len = LADLE_MIN(c->end - p, 64);
    if (len < 64) {
      memset(tail, 0, sizeof tail);
      memcpy(tail, blk, (size_t)len);
      blk = tail;
    }
    uint64_t nl = eq_mask64(blk, '\n');
    uint64_t odd = carry;
    if (quote) {
      odd = prefix_xor(eq_mask64(blk, quote)) ^ carry;
      carry = (uint64_t)((int64_t)odd >> 63);
    }
    if (nl) {
      if (!scan_reserve(c, 0, 64) || !scan_reserve(c, 1, 64)) return LADLE_OOM(err, "csv records");
      for (uint64_t m = nl & ~odd; m; m &= m - 1)
        c->starts[0][c->n[0]++] = p + __builtin_ctzll(m) + 1;
      for (uint64_t m = nl & odd; m; m &= m - 1)
        c->starts[1][c->n[1]++] = p + __builtin_ctzll(m) + 1;
    }
    p += len;
  }
  c->end_state[0] = (int)(carry & 1);
  c->end_state[1] = (int)((carry & 1) ^ 1);
  return LADLE_OK;
}

/* Is the line at p a comment? */
static bool is_comment(const uint8_t *p, const uint8_t *end, const char *prefix) {
  if (prefix == NULL || prefix[0] == '\0') return false;
  size_t n = strlen(prefix);
  return (size_t)(end - p) >= n && memcmp(p, prefix, n) == 0;
}

static int64_t next_line(const uint8_t *d, int64_t p, int64_t size) {
  const uint8_t *nl = memchr(d + p, '\n', (size_t)(size - p));
  return nl ? (int64_t)(nl - d) + 1 : size;
}

/* The start of the record after the one at p (a newline inside quotes does
 * not end a record); *open (optional) says whether it ran to the end of the
 * data inside quotes. */
static int64_t next_record(const uint8_t *d, int64_t p, int64_t size, char quote, bool *open) {
  int inq = 0;
  while (p < size) {
    uint8_t ch = d[p++];
    if (quote && ch == (uint8_t)quote)
      inq ^= 1;
    else if (ch == '\n' && !inq)
      break;
  }
  if (open != NULL) *open = inq;
  return p;
}

/* Past n records from p, as Polars counts them for skip_rows: comment lines
 * before each do not count. */
static int64_t skip_records(const uint8_t *d, int64_t p, int64_t size, int64_t n,
                            const ladle_csv_opts *o) {
  for (int64_t k = 0; k < n && p < size; k++) {
    while (p < size && is_comment(d + p, d + size, o->comment_prefix)) p = next_line(d, p, size);
    p = next_record(d, p, size, o->quote, NULL);
  }
  return p;
}

/* Splits record [a, b) into fields: calls back with each field's raw bounds. */
typedef struct field {
  int64_t a, b; /* raw bytes, quotes included */
  bool quoted;  /* starts with the quote character */
} field;

/* Fields as Polars' parser splits them: a field that starts with the quote
 * character runs to the first separator outside quotes, every quote
 * character toggling (so `"a"b"c,d"` is one field); any other field runs to
 * the next separator, quotes and all. `b_full` is the record's end with its
 * line end: a last field still inside quotes there (the end of the data)
 * keeps its line end, as Polars' does. *stray (when not NULL; the caller
 * sets SIZE_MAX) becomes the first field where the parser would end the
 * record elsewhere: a newline lies outside every quoted field, or a quoted
 * field is still open at the record's end (before the end of the data). The quote parity that found
 * the record (thrown off by a quote inside an unquoted field) is then not the parser's: Polars
 * reads other records and fails (a malformed file), or with ignore_errors reads the parser's
 * records (ladle_csv_parser_records). */
static size_t split_quoted(const uint8_t *d, int64_t size, int64_t a, int64_t b, int64_t b_full,
                           char sep, char quote, field *out, size_t max, size_t *stray) {
  size_t n = 0;
  int64_t p = a;
  for (;;) {
    int64_t start = p;
    bool quoted = quote && p < b && d[p] == (uint8_t)quote;
    if (quoted) {
      bool in = false;
      for (; p < b; p++) {
        if (d[p] == (uint8_t)quote)
          in = !in;
        else if (!in && d[p] == (uint8_t)sep)
          break;
        else if (!in && d[p] == '\n' && stray != NULL && *stray > n)
          *stray = n;
      }
      if (in && p == b) { /* the quote does not close in the record */
        /* the parser reads on into the next line */
        if (stray != NULL && *stray > n && b_full < size) *stray = n;
        p = b_full; /* at the end of the data: the field runs to it, line end and all */
      }
    } else {
      const uint8_t *s = memchr(d + p, sep, (size_t)(b - p));
      int64_t e = s ? (int64_t)(s - d) : b;
      if (stray != NULL && *stray > n && memchr(d + p, '\n', (size_t)(e - p)) != NULL) *stray = n;
      p = e;
    }
    if (n < max) out[n] = (field){start, p, quoted};
    n++;
    if (p >= b) break;
    p++;          /* the separator */
    if (p == b) { /* a trailing separator: one more, empty field */
      if (n < max) out[n] = (field){p, p, false};
      n++;
      break;
    }
  }
  return n;
}

/* Splits record [a, b) of d (size bytes in all) into fields: a record
 * without a quote character takes its fields from the separators' bitmap, 64
 * bytes a step; one with quotes goes through split_quoted (stray as there).
 * Returns the number of fields; at most max are written to out. */
static size_t split_record(const uint8_t *d, int64_t size, int64_t a, int64_t b, char sep,
                           char quote, field *out, size_t max, size_t *stray) {
  int64_t b_full = b;
  /* strip the line end */
  while (b > a && (d[b - 1] == '\n' || d[b - 1] == '\r')) b--;
  size_t n = 0;
  int64_t start = a;
  uint8_t tail[64];
  for (int64_t p = a; p < b; p += 64) {
    const uint8_t *blk = d + p;
    int64_t len = LADLE_MIN(b - p, 64);
    if (p + 64 > size) {
      memset(tail, 0, sizeof tail);
      memcpy(tail, blk, (size_t)len);
      blk = tail;
    }
    uint64_t keep = len == 64 ? ~(uint64_t)0 : ((uint64_t)1 << len) - 1;
    if (quote && (eq_mask64(blk, (uint8_t)quote) & keep))
      return split_quoted(d, size, a, b, b_full, sep, quote, out, max, stray);
    for (uint64_t m = eq_mask64(blk, (uint8_t)sep) & keep; m; m &= m - 1) {
      int64_t e = p + __builtin_ctzll(m);
      if (n < max) out[n] = (field){start, e, false};
      n++;
      start = e + 1;
    }
  }
  if (n < max) out[n] = (field){start, b, false};
  return n + 1;
}

/* A field's text as Polars reads it. A String value of a quoted field must
 * end with the quote character (false otherwise: Polars cannot parse it,
 * whatever ignore_errors says); its text is what lies between the outer
 * quotes, a doubled quote read as one and a single one dropped (`"x"y"z"`
 * is xyz), unquoted into scratch. Any other value of a quoted field (a
 * number, a date, a header name) is the field without its first and last
 * bytes, as they are. An unquoted field is its bytes. */
static bool field_text(const uint8_t *d, field f, char quote, bool string, char *scratch,
                       const char **out, int64_t *len) {
  if (!f.quoted) {
    *len = f.b - f.a;
    *out = (const char *)d + f.a;
    return true;
  }
  if (!string) {
    *len = LADLE_MAX(f.b - f.a - 2, 0);
    *out = (const char *)d + f.a + 1;
    return true;
  }
  if (f.b - f.a < 2 || d[f.b - 1] != (uint8_t)quote) return false;
  int64_t k = 0;
  for (int64_t p = f.a + 1; p < f.b - 1; p++) {
    if (d[p] == (uint8_t)quote) {
      if (p + 1 < f.b - 1 && d[p + 1] == (uint8_t)quote)
        p++;
      else
        continue; /* a single quote inside: dropped */
    }
    scratch[k++] = (char)d[p];
  }
  *len = k;
  *out = scratch;
  return true;
}

/* The records from f->body found one after another, comment lines skipped
 * whatever quotes they hold (the parallel search counts every quote; this
 * runs when a comment line's quote threw its parity off), by quote parity or
 * (parser_last: not SIZE_MAX) as the parser reads them. *open: the data ends
 * inside quotes. */
/* The end of the record at p as Polars' parser reads it (with ignore_errors,
 * where its records are the file's): up to file column `last` (the last it
 * reads), a field that starts with the quote character runs to a separator or
 * newline outside quotes, any other to the next separator or newline, and a
 * newline ends the record; after that column, the record runs on to a
 * newline outside quotes, every quote toggling. */
static int64_t parser_record(const uint8_t *d, int64_t p, int64_t size, char sep, char quote,
                             size_t last, bool *open) {
  *open = false;
  for (size_t c = 0;; c++) {
    if (c > last)
      return next_record(d, p, size, quote, open); /* the rest skipped by quote parity */
    if (quote && p < size && d[p] == (uint8_t)quote) {
      bool in = false;
      for (; p < size; p++) {
        uint8_t ch = d[p];
        if (ch == (uint8_t)quote)
          in = !in;
        else if (!in && (ch == (uint8_t)sep || ch == '\n'))
          break;
      }
      *open = in;
    } else {
      while (p < size && d[p] != (uint8_t)sep && d[p] != '\n') p++;
    }
    if (p >= size) return size;
    if (d[p] == '\n') return p + 1;
    p++; /* the separator */
  }
}

static ladle_status records_in_order(ladle_csv_file *f, const ladle_csv_opts *o, size_t parser_last,
                                     bool *open, ladle_error *err) {
  const uint8_t *d = f->data;
  int64_t n = 0, cap = 1024, p = f->body;
  int64_t *rec = malloc((size_t)cap * 2 * sizeof *rec);
  if (rec == NULL) return LADLE_OOM(err, "csv records");
  *open = false;
  while (p < f->size) {
    if (is_comment(d + p, d + f->size, o->comment_prefix)) {
      p = next_line(d, p, f->size);
      continue;
    }
    if (n == cap) {
      int64_t *r = realloc(rec, (size_t)cap * 4 * sizeof *rec);
      if (r == NULL) {
        free(rec);
        return LADLE_OOM(err, "csv records");
      }
      rec = r;
      cap *= 2;
    }
    int64_t e = parser_last != SIZE_MAX
                    ? parser_record(d, p, f->size, o->separator, o->quote, parser_last, open)
                    : next_record(d, p, f->size, o->quote, open);
    rec[2 * n] = p;
    rec[2 * n + 1] = e;
    n++;
    p = e;
  }
  free(f->starts);
  f->starts = rec;
  f->nrecords = n;
  return LADLE_OK;
}

ladle_status ladle_csv_parser_records(const ladle_csv_file *f, const ladle_csv_opts *o, size_t last,
                                      ladle_csv_file **out, ladle_error *err) {
  ladle_csv_file *c = malloc(sizeof *c);
  if (c == NULL) return LADLE_OOM(err, "csv records");
  *c = *f;
  c->borrowed = true;
  c->starts = NULL;
  c->open_quote = false;
  bool open;
  ladle_status st = records_in_order(c, o, last, &open, err);
  if (st != LADLE_OK) {
    free(c);
    return st;
  }
  *out = c;
  return LADLE_OK;
}

/* The length of the invalid sequence at s[0..n) that one U+FFFD replaces,
 * as Rust's from_utf8_lossy (Unicode's "maximal subpart"): the lead byte and
 * the continuation bytes that could still have made a character, at least 1. */
static int64_t invalid_run(const uint8_t *s, int64_t n) {
  uint8_t c = s[0];
  int need = c >= 0xC2 && c <= 0xDF   ? 1
             : c >= 0xE0 && c <= 0xEF ? 2
             : c >= 0xF0 && c <= 0xF4 ? 3
                                      : 0;
  uint8_t lo = c == 0xE0   ? 0xA0
               : c == 0xF0 ? 0x90
                           : 0x80,
          hi = c == 0xED   ? 0x9F
               : c == 0xF4 ? 0x8F
                           : 0xBF;
  int64_t k = 1;
  for (int j = 0; j < need && k < n; j++, k++) {
    uint8_t b = s[k];
    if (j == 0 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) break;
  }
  return k;
}

/* A NUL-terminated copy of s[0..n) with each invalid UTF-8 sequence replaced
 * by U+FFFD, as Polars makes column names (malloc; NULL when out of memory). */
static char *utf8_lossy(const uint8_t *s, int64_t n) {
  char *out = malloc((size_t)n * 3 + 1), *o = out;
  if (out == NULL) return NULL;
  while (n > 0) {
    int64_t bad = ladle_utf8_check(s, n), good = bad < 0 ? n : bad;
    memcpy(o, s, (size_t)good);
    o += good;
    s += good;
    n -= good;
    if (n > 0) {
      memcpy(o, "\xef\xbf\xbd", 3);
      o += 3;
      int64_t skip = invalid_run(s, n);
      s += skip;
      n -= skip;
    }
  }
  *o = '\0';
  return out;
}

/* Renames repeated names as Polars does, in place. */
static bool name_taken(char **names, const int64_t *slots, uint64_t mask, const char *name) {
  for (uint64_t h = ladle_hash_bytes(name, strlen(name), 1) & mask;; h = (h + 1) & mask) {
    if (slots[h] < 0) return false;
    if (strcmp(names[slots[h]], name) == 0) return true;
  }
}

static void name_insert(char **names, int64_t *slots, uint64_t mask, int64_t i) {
  uint64_t h = ladle_hash_bytes(names[i], strlen(names[i]), 1) & mask;
  while (slots[h] >= 0) h = (h + 1) & mask;
  slots[h] = i;
}

static ladle_status dedup_names(char **names, size_t n, ladle_error *err) {
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)n) cap <<= 1;
  int64_t *slots = malloc(cap * sizeof *slots);
  if (slots == NULL) return LADLE_OOM(err, "csv header");
  for (uint64_t k = 0; k < cap; k++) slots[k] = -1;
  ladle_status st = LADLE_OK;
  for (size_t i = 0; i < n && st == LADLE_OK; i++) {
    if (name_taken(names, slots, cap - 1, names[i])) {
      size_t len = strlen(names[i]) + 32;
      char *nb = malloc(len);
      if (nb == NULL) {
        st = LADLE_OOM(err, "csv header");
        break;
      }
      for (int d = 0;; d++) {
        snprintf(nb, len, "%s_duplicated_%d", names[i], d);
        if (!name_taken(names, slots, cap - 1, nb)) break;
      }
      free(names[i]);
      names[i] = nb;
    }
    name_insert(names, slots, cap - 1, (int64_t)i);
  }
  free(slots);
  return st;
}

/* The records as (begin, end) pairs from the chunks' starts, written in
 * parallel, each chunk's starts where the chunks before it put theirs (a
 * file without comment lines: every line break outside quotes ends one);
 * sets f->starts and f->nrecords, and *open when the data ends inside quotes. */
typedef struct pairs_job {
  const chunk_scan *cs;
  const int *state;     /* per chunk: the quote state it starts in */
  const int64_t *first; /* per chunk: the global index of its first start */
  int64_t *rec, nrec;
} pairs_job;

static ladle_status pairs_task(void *vctx, size_t i, ladle_error *err) {
  LADLE_UNUSED(err);
  pairs_job *j = vctx;
  const chunk_scan *c = &j->cs[i];
  const int64_t *st = c->starts[j->state[i]];
  int64_t n = c->n[j->state[i]], g = j->first[i];
  /* start g ends record g - 1 and begins record g */
  for (int64_t k = 0; k < n; k++, g++) {
    if (g - 1 < j->nrec) j->rec[2 * (g - 1) + 1] = st[k];
    if (g < j->nrec) j->rec[2 * g] = st[k];
  }
  return LADLE_OK;
}

static ladle_status record_pairs(ladle_csv_file *f, const chunk_scan *cs, size_t nchunks,
                                 int64_t body, ladle_pool *pool, bool *open, ladle_error *err) {
  int *state = malloc(LADLE_MAX(nchunks, 1) * sizeof *state);
  int64_t *first = malloc(LADLE_MAX(nchunks, 1) * sizeof *first);
  if (state == NULL || first == NULL) {
    free(state);
    free(first);
    return LADLE_OOM(err, "csv records");
  }
  int64_t n = 1; /* starts: the body's, then the chunks' */
  int s = 0;
  int64_t last = body;
  for (size_t i = 0; i < nchunks; i++) {
    state[i] = s;
    first[i] = n;
    n += cs[i].n[s];
    if (cs[i].n[s] > 0) last = cs[i].starts[s][cs[i].n[s] - 1];
    s = cs[i].end_state[s];
  }
  /* the end of the data is the last start unless the file lacks a final newline */
  bool append = last < f->size;
  int64_t nrec = n + (append ? 1 : 0) - 1;
  int64_t *rec = malloc((size_t)LADLE_MAX(2 * nrec, 1) * sizeof *rec);
  ladle_status st = rec != NULL ? LADLE_OK : LADLE_OOM(err, "csv records");
  if (st == LADLE_OK && nrec > 0) {
    rec[0] = body;
    if (append) rec[2 * (nrec - 1) + 1] = f->size;
    pairs_job j = {cs, state, first, rec, nrec};
    if (nchunks > 0) st = ladle_pool_run(pool, nchunks, pairs_task, &j, err);
  }
  free(state);
  free(first);
  if (st != LADLE_OK) {
    free(rec);
    return st;
  }
  free(f->starts);
  f->starts = rec;
  f->nrecords = nrec;
  *open = s == 1;
  return LADLE_OK;
}

ladle_status ladle_csv_open(const char *path, const ladle_csv_opts *o, ladle_pool *pool,
                            ladle_csv_file **out, ladle_error *err) {
  if (o->separator == '\n' || o->separator == '\r' || (o->quote && o->quote == o->separator))
    return ladle_err_set(err, LADLE_EINVAL,
                         "%s: separator and quote must differ and not be a newline", path);
  /* (a byte of a multi-byte character would cut characters in two) */
  if ((uint8_t)o->separator >= 0x80 || (uint8_t)o->quote >= 0x80)
    return ladle_err_set(err, LADLE_EINVAL, "%s: separator and quote must be ASCII characters",
                         path);
  ladle_csv_file *f = calloc(1, sizeof *f);
  if (f == NULL) return LADLE_OOM(err, "csv file");
  f->path = ladle_strdup(path);
  double tph = LADLE_PHASE_START();
  ladle_status st =
      f->path ? load(path, &f->data, &f->size, &f->mapped, err) : LADLE_OOM(err, "path");
  LADLE_PHASE_END("csv load", f->size, tph);
  if (st != LADLE_OK) {
    ladle_csv_close(f);
    return st;
  }
  const uint8_t *d = f->data;
  int64_t p = 0;
  if (f->size >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF) p = 3; /* UTF-8 BOM */
  /* skip_lines: raw lines; skip_rows: records, as Polars (a quoted newline
   * stays inside its record, comment lines do not count) */
  for (int64_t k = 0; k < o->skip_lines && p < f->size; k++) p = next_line(d, p, f->size);
  p = skip_records(d, p, f->size, o->skip_rows, o);
  while (p < f->size && is_comment(d + p, d + f->size, o->comment_prefix))
    p = next_line(d, p, f->size);
  /* the first record: the header, or the width of the data */
  int64_t rec_end = next_record(d, p, f->size, o->quote, NULL);
  if (p >= f->size) {
    f->ncols = 0;
    f->body = f->size;
  } else {
    size_t nf = split_record(d, f->size, p, rec_end, o->separator, o->quote, NULL, 0, NULL);
    field *fields = malloc(nf * sizeof *fields);
    f->names = calloc(nf, sizeof *f->names);
    char *scratch = malloc((size_t)(rec_end - p) + 1);
    if (fields == NULL || f->names == NULL || scratch == NULL) {
      free(fields);
      free(scratch);
      ladle_csv_close(f);
      return LADLE_OOM(err, "csv header");
    }
    split_record(d, f->size, p, rec_end, o->separator, o->quote, fields, nf, NULL);
    f->ncols = nf;
    for (size_t i = 0; i < nf; i++) {
      char buf[32];
      int64_t len;
      const char *t;
      /* a name as Polars reads it: not unescaped, invalid UTF-8 replaced */
      field_text(d, fields[i], o->quote, false, scratch, &t, &len);
      if (o->has_header) {
        f->names[i] = utf8_lossy((const uint8_t *)t, len);
      } else {
        snprintf(buf, sizeof buf, "column_%zu", i); /* Polars 2.x counts from 0 */
        f->names[i] = ladle_strdup(buf);
      }
      if (f->names[i] == NULL) st = LADLE_OOM(err, "csv header");
    }
    free(fields);
    free(scratch);
    /* duplicate names get Polars' suffix: a, a_duplicated_0, a_duplicated_1 ...
     * (a hash set of the names taken keeps this linear for wide files) */
    if (st == LADLE_OK && nf > 1) st = dedup_names(f->names, nf, err);
    /* per-column null values, found once per column (not per field) */
    if (st == LADLE_OK && o->n_named_nulls > 0) {
      f->col_nulls = calloc(nf * o->n_named_nulls, sizeof *f->col_nulls);
      f->n_col_nulls = calloc(nf, sizeof *f->n_col_nulls);
      if (f->col_nulls == NULL || f->n_col_nulls == NULL) st = LADLE_OOM(err, "csv null values");
      for (size_t c = 0; st == LADLE_OK && c < nf; c++)
        for (size_t i = 0; i < o->n_named_nulls; i++)
          if (strcmp(o->named_null_columns[i], f->names[c]) == 0)
            f->col_nulls[c * o->n_named_nulls + f->n_col_nulls[c]++] = o->named_null_values[i];
    }
    f->body = o->has_header ? rec_end : p;
  }
  if (st == LADLE_OK && o->has_header)
    f->body = skip_records(d, f->body, f->size, o->skip_rows_after_header, o);
  /* find the records, in parallel chunks */
  int64_t body = f->body, len = f->size - body;
  size_t nchunks = len > 0 ? (size_t)LADLE_MIN(LADLE_MAX(len / (1 << 20), 1), 1024) : 0;
  chunk_scan *cs = calloc(LADLE_MAX(nchunks, 1), sizeof *cs);
  if (st == LADLE_OK && cs == NULL) st = LADLE_OOM(err, "csv records");
  for (size_t i = 0; st == LADLE_OK && i < nchunks; i++) {
    cs[i].begin = body + (int64_t)i * len / (int64_t)nchunks;
    cs[i].end = body + (int64_t)(i + 1) * len / (int64_t)nchunks;
  }
  if (st == LADLE_OK && nchunks > 0) {
    scan_job j = {d, o->quote, cs};
    tph = LADLE_PHASE_START();
    st = ladle_pool_run(pool, nchunks, scan_task, &j, err);
    LADLE_PHASE_END("csv scan records", (int64_t)nchunks, tph);
  }
  tph = LADLE_PHASE_START();
  bool plain = o->comment_prefix == NULL || o->comment_prefix[0] == '\0';
  bool open = false; /* the data ends inside quotes */
  if (st == LADLE_OK && plain) {
    st = record_pairs(f, cs, nchunks, body, pool, &open, err);
  } else if (st == LADLE_OK) {
    int64_t total = 1;
    int state = 0;
    for (size_t i = 0; i < nchunks; i++) {
      total += cs[i].n[state];
      state = cs[i].end_state[state];
    }
    f->starts = malloc((size_t)(total + 1) * sizeof *f->starts);
    if (f->starts == NULL) st = LADLE_OOM(err, "csv records");
    int64_t n = 0;
    state = 0;
    if (st == LADLE_OK) {
      f->starts[n++] = body;
      for (size_t i = 0; i < nchunks; i++) {
        if (cs[i].n[state] > 0)
          memcpy(f->starts + n, cs[i].starts[state], (size_t)cs[i].n[state] * sizeof *f->starts);
        n += cs[i].n[state];
        state = cs[i].end_state[state];
      }
      /* the last start is the end of the data unless the file lacks a final newline */
      if (f->starts[n - 1] < f->size) f->starts[n++] = f->size;
      /* records as (begin, end) pairs, without comment lines */
      int64_t *rec = malloc((size_t)LADLE_MAX(2 * (n - 1), 1) * sizeof *rec);
      if (rec == NULL) {
        st = LADLE_OOM(err, "csv records");
      } else {
        int64_t k = 0;
        bool resync = false;
        for (int64_t r = 0; r + 1 < n; r++) {
          int64_t a = f->starts[r], b = f->starts[r + 1];
          /* an empty line is a row of nulls, as in Polars; comment lines go */
          if (is_comment(d + a, d + b, o->comment_prefix)) {
            /* a comment line is one line whatever quotes it holds: one whose
             * quote made the parity run on past it means the records were
             * found with the wrong parity from there */
            resync |= o->quote && next_line(d, a, f->size) != b;
            continue;
          }
          rec[2 * k] = a;
          rec[2 * k + 1] = b;
          k++;
        }
        free(f->starts);
        f->starts = rec;
        f->nrecords = k;
        open = state == 1;
        if (resync) st = records_in_order(f, o, SIZE_MAX, &open, err);
      }
    }
  }
  /* Polars counts the records by quote parity, a last one ending inside
   * quotes only when the data does not end with a newline; its parser sees
   * one more here: a malformed file, whatever is read of it */
  f->open_quote =
      st == LADLE_OK && open && f->nrecords > 0 && f->size > 0 && d[f->size - 1] == '\n';
  LADLE_PHASE_END("csv record pairs", f->nrecords, tph);
  for (size_t i = 0; cs && i < nchunks; i++) {
    free(cs[i].starts[0]);
    free(cs[i].starts[1]);
  }
  free(cs);
  if (st != LADLE_OK) {
    ladle_csv_close(f);
    return st;
  }
  *out = f;
  return LADLE_OK;
}

/* ------------------------------------------------------------------ values */

static bool text_in(const char *t, int64_t len, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(list[i]);
    if ((int64_t)l == len && memcmp(t, list[i], l) == 0) return true;
  }
  return false;
}

/* Whether field f of file column c (text t) is null: empty, one of the null
 * values, or one of the column's own. */
static bool is_null_text(const ladle_csv_opts *o, const ladle_csv_file *file, size_t c, field f,
                         const char *t, int64_t len) {
  if (len == 0 && !f.quoted && o->missing_is_null) return true;
  return text_in(t, len, o->null_values, o->n_null_values) ||
         (file->n_col_nulls != NULL &&
          text_in(t, len, file->col_nulls + c * o->n_named_nulls, file->n_col_nulls[c]));
}

static bool parse_i64(const char *t, int64_t len, int64_t *out) {
  int64_t i = 0;
  bool neg = false;
  if (i < len && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
  if (i == len) return false;
  uint64_t v = 0;
  if (len - i <= 18) { /* cannot overflow */
    for (; i < len; i++) {
      unsigned d = (unsigned)(t[i] - '0');
      if (d > 9) return false;
      v = v * 10 + d;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
  }
  for (; i < len; i++) {
    if (t[i] < '0' || t[i] > '9') return false;
    uint64_t d = (uint64_t)(t[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) return false;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

static bool parse_u64(const char *t, int64_t len, uint64_t *out) {
  int64_t i = 0;
  if (i < len && t[i] == '+') i++;
  if (i == len) return false;
  uint64_t v = 0;
  for (; i < len; i++) {
    if (t[i] < '0' || t[i] > '9') return false;
    uint64_t d = (uint64_t)(t[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

/* Plain decimals ([+-]digits[.digits], at most 18 digits, a mantissa below
 * 2^53 and at most 22 after the point) as mantissa / 10^k: both exact
 * doubles, so the one division rounds correctly (the same double as strtod).
 * False: not such a decimal (strtod decides). */
static bool parse_f64_plain(const char *t, int64_t len, double *out) {
  static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  int64_t i = 0;
  bool neg = false;
  if (i < len && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
  uint64_t m = 0;
  int digits = 0, frac = -1; /* frac: digits after the point (-1: no point) */
  for (; i < len; i++) {
    char ch = t[i];
    if (ch >= '0' && ch <= '9') {
      if (++digits > 18) return false;
      m = m * 10 + (uint64_t)(ch - '0');
      if (frac >= 0) frac++;
    } else if (ch == '.' && frac < 0) {
      frac = 0;
    } else {
      return false;
    }
  }
  if (digits == 0 || m > ((uint64_t)1 << 53) || frac > 22) return false;
  double v = frac > 0 ? (double)m / pow10[frac] : (double)m;
  *out = neg ? -v : v;
  return true;
}

/* A float as Polars reads one: a plain decimal, or digits, signs, points and
 * exponents that strtod reads whole, or inf, infinity or nan in any case with
 * a sign. Not what strtod reads beyond those (leading whitespace, hex,
 * nan(...)). */
static bool parse_f64(const char *t, int64_t len, double *out) {
  if (parse_f64_plain(t, len, out)) return true;
  char buf[128];
  if (len == 0 || len >= (int64_t)sizeof buf) return false;
  bool numeral = true;
  for (int64_t i = 0; i < len; i++)
    numeral &= (t[i] >= '0' && t[i] <= '9') || t[i] == '+' || t[i] == '-' || t[i] == '.' ||
               t[i] == 'e' || t[i] == 'E';
  if (!numeral) {
    int64_t i = t[0] == '+' || t[0] == '-';
    if (!((len - i == 3 &&
           (strncasecmp(t + i, "inf", 3) == 0 || strncasecmp(t + i, "nan", 3) == 0)) ||
          (len - i == 8 && strncasecmp(t + i, "infinity", 8) == 0)))
      return false;
  }
  memcpy(buf, t, (size_t)len);
  buf[len] = '\0';
  char *end;
  *out = strtod(buf, &end);
  return end == buf + len;
}

/* A float; with decimal_comma "1,5" reads as "1.5" (a point is read too, as
 * in Polars). */
static bool parse_float(const char *t, int64_t len, bool decimal_comma, double *out) {
  if (!decimal_comma) return parse_f64(t, len, out);
  char buf[128];
  if (len <= 0 || len >= (int64_t)sizeof buf) return false;
  for (int64_t i = 0; i < len; i++) buf[i] = t[i] == ',' ? '.' : t[i];
  return parse_f64(buf, len, out);
}

static bool parse_bool(const char *t, int64_t len, bool *out) {
  if (len == 4 && strncasecmp(t, "true", 4) == 0) return (*out = true), true;
  if (len == 5 && strncasecmp(t, "false", 5) == 0) return (*out = false), true;
  return false;
}

static bool parse_date(const char *t, int64_t len, int64_t *days) {
  if (len != 10 || t[4] != '-' || t[7] != '-') return false;
  for (int k = 0; k < 10; k++)
    if (k != 4 && k != 7 && (unsigned)(t[k] - '0') > 9) return false;
  int64_t y = (t[0] - '0') * 1000 + (t[1] - '0') * 100 + (t[2] - '0') * 10 + (t[3] - '0');
  unsigned m = (unsigned)((t[5] - '0') * 10 + (t[6] - '0')),
           dd = (unsigned)((t[8] - '0') * 10 + (t[9] - '0'));
  static const uint8_t mdays[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || dd < 1 || dd > mdays[m]) return false;
  if (m == 2 && dd == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) return false;
  *days = ladle_days_from_civil(y, m, dd);
  return true;
}

static bool parse_datetime(const char *t, int64_t len, int unit, int64_t *out) {
  int64_t days;
  if (len < 19 || !parse_date(t, 10, &days) || (t[10] != ' ' && t[10] != 'T') || t[13] != ':' ||
      t[16] != ':')
    return false;
  int v[3];
  for (int k = 0; k < 3; k++) {
    const char *p = t + 11 + 3 * k;
    if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9') return false;
    v[k] = (p[0] - '0') * 10 + (p[1] - '0');
  }
  if (v[0] > 23 || v[1] > 59 || v[2] > 59) return false;
  /* in nanoseconds past the int64 range it wraps, as in Polars */
  int64_t per = ladle_unit_per_sec(unit),
          r = (int64_t)((uint64_t)(days * 86400 + v[0] * 3600 + v[1] * 60 + v[2]) * (uint64_t)per);
  int64_t p = 19;
  if (p < len && t[p] == '.') {
    int64_t frac = 0, scale = per;
    for (p++; p < len && t[p] >= '0' && t[p] <= '9'; p++)
      if (scale > 1) {
        scale /= 10;
        frac += (t[p] - '0') * scale;
      }
    r = (int64_t)((uint64_t)r + (uint64_t)frac);
  }
  if (p != len) return false;
  *out = r;
  return true;
}

/* ---- Dates and datetimes of a given type, read as Polars 2.1 reads them ----
 *
 * Polars parses a Date or Datetime column with chrono by a class of formats:
 * day-month-year (`31-12-2020`) or year-month-day (`2020-12-31`), `-`, `/` or
 * `.` between; for a Datetime also with a time after `T` or a space (H:M:S[.f],
 * HMS[.f], H:M or HM), and a third class of those with a `Z` or an offset (the
 * value made UTC). The first value of a column that a class reads, and that
 * then parses, picks the class (dates first, day first first: dt_infer); a
 * value before it is null (an error without ignore_errors), and so is a later
 * value that no format of the class reads. chrono is lenient: Unicode
 * whitespace before every number, a year of 1 to 4 digits or of a sign and any
 * digits (-262143 to 262142), 1 or 2 digits for the other fields, a second of
 * 60 (the next second), any digits of fraction (the first 9 count), a space in
 * a format for any run of whitespace, nothing left over. A Datetime value
 * reads only (dt_read_general)
 *   - by the format that read the column's last value, or
 *   - at exactly the width of a format with neither fraction nor offset
 *     (Polars' fast parser: 4 digits of year, a minus before them allowed, 2
 *     of each other field; that format is then the last), or
 *   - by a format of the class after Polars' pattern check (dt_gate: no
 *     whitespace but one T or space before the time, no sign, 4 digits of year
 *     or more, at most 9 of fraction).
 * Polars keeps that state (class, last format) per chunk of the file (the
 * first 32 KiB, then larger ones); ladle per ladle_csv_parse call (a morsel),
 * so a value that hangs on it (in a column of mixed classes, or read by the
 * last format only) may read otherwise past Polars' first chunk. */

enum { DT_NONE, DT_DMY, DT_YMD, DT_YMDZ };

typedef struct dt_fmt {
  const char *f;
  bool fast; /* Polars' fixed-width parser takes it (no fraction, no offset) */
} dt_fmt;

/* Polars 2.1's lists, in its order (a value reads by one format of a list at
 * most, but for dt_ymdz's last three): per date order and separator, a time
 * after T, then after a space, each as H:M:S.f, HMS.f, H:M, HM, then (without
 * an offset) the date alone; and a year-first datetime without separators */
/* clang-format off */
#define DT_TIMES(D, Z, FAST)                                                     \
  {D "T%H:%M:%S%.f" Z, false}, {D "T%H%M%S%.f" Z, false},                        \
  {D "T%H:%M" Z, FAST},        {D "T%H%M" Z, FAST},                              \
  {D " %H:%M:%S%.f" Z, false}, {D " %H%M%S%.f" Z, false},                        \
  {D " %H:%M" Z, FAST},        {D " %H%M" Z, FAST}
static const dt_fmt dt_dmy[] = {
    DT_TIMES("%d-%m-%Y", "", true), {"%d-%m-%Y", true},
    DT_TIMES("%d/%m/%Y", "", true), {"%d/%m/%Y", true},
    DT_TIMES("%d.%m.%Y", "", true), {"%d.%m.%Y", true}};
static const dt_fmt dt_ymd[] = {
    DT_TIMES("%Y-%m-%d", "", true), {"%Y-%m-%d", true},
    DT_TIMES("%Y/%m/%d", "", true), {"%Y/%m/%d", true},
    DT_TIMES("%Y.%m.%d", "", true), {"%Y.%m.%d", true},
    {"%Y%m%dT%H%M%S%.f", false}};
static const dt_fmt dt_ymdz[] = {
    DT_TIMES("%Y-%m-%d", "%#z", false),
    DT_TIMES("%Y/%m/%d", "%#z", false),
    DT_TIMES("%Y.%m.%d", "%#z", false),
    {"%Y%m%dT%H%M%S%.f%#z", false}, {"%Y%m%dT%H%M%S%.fZ", false}, {"%+", false}};
#undef DT_TIMES
/* a Date column's: the date alone */
static const dt_fmt date_dmy[] = {{"%d-%m-%Y", true}, {"%d/%m/%Y", true}, {"%d.%m.%Y", true}};
static const dt_fmt date_ymd[] = {{"%Y-%m-%d", true}, {"%Y/%m/%d", true}, {"%Y.%m.%d", true}};
/* clang-format on */
/* in the ISO shortcut, dt_ymd's indices of Y-m-dTH:M:S.f, Y-m-d H:M:S.f, Y-m-d */
enum { DT_YMD_ISO_T = 0, DT_YMD_ISO_SPACE = 4, DT_YMD_ISO_DATE = 8 };

static const dt_fmt *dt_list(int cls, bool date, size_t *n) {
#define DT_RET(a) return (*n = sizeof(a) / sizeof(a[0]), a)
  if (date) {
    if (cls == DT_DMY) DT_RET(date_dmy);
    DT_RET(date_ymd);
  }
  if (cls == DT_DMY) DT_RET(dt_dmy);
  if (cls == DT_YMD) DT_RET(dt_ymd);
  DT_RET(dt_ymdz);
#undef DT_RET
}

/* A column's state: the class its values are read in (DT_NONE: not picked
 * yet) and the index of the format that read its last value. */
typedef struct dt_state {
  int8_t cls;
  int8_t last;
} dt_state;

/* What a format read: a civil date, a time of day, an offset (when has_off,
 * seconds east of UTC). */
typedef struct civil {
  int64_t year, nano;
  int month, day, hour, minute, second;
  bool has_off;
  int32_t off;
} civil;

/* The byte length of the Unicode White_Space character (Rust's
 * char::is_whitespace, chrono's trim) at t[0], t[0..n) valid; 0 if none. */
static int ws_len(const uint8_t *t, int64_t n) {
  uint8_t c = t[0];
  if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
  if (c < 0xC2) return 0;
  if (c == 0xC2) return n >= 2 && (t[1] == 0x85 || t[1] == 0xA0) ? 2 : 0; /* U+0085, U+00A0 */
  if (n < 3) return 0;
  if (c == 0xE1) return t[1] == 0x9A && t[2] == 0x80 ? 3 : 0; /* U+1680 */
  if (c == 0xE2 && t[1] == 0x80) /* U+2000..200A, U+2028, U+2029, U+202F */
    return (t[2] >= 0x80 && t[2] <= 0x8A) || t[2] == 0xA8 || t[2] == 0xA9 || t[2] == 0xAF ? 3 : 0;
  if (c == 0xE2) return t[1] == 0x81 && t[2] == 0x9F ? 3 : 0; /* U+205F */
  if (c == 0xE3) return t[1] == 0x80 && t[2] == 0x80 ? 3 : 0; /* U+3000 */
  return 0;
}

static int64_t skip_ws(const uint8_t *t, int64_t n, int64_t p) {
  for (int w; p < n && (w = ws_len(t + p, n - p)) > 0;) p += w;
  return p;
}

/* chrono's scan::number: 1 to maxd ASCII digits at *p (the first maxd of
 * more), as an int64 (an overflow fails). */
static bool scan_digits(const uint8_t *t, int64_t n, int64_t *p, int64_t maxd, int64_t *v) {
  int64_t i = *p, x = 0;
  for (; i < n && i - *p < maxd && (unsigned)(t[i] - '0') <= 9; i++) {
    int d = t[i] - '0';
    if (x > (INT64_MAX - d) / 10) return false;
    x = x * 10 + d;
  }
  if (i == *p) return false;
  *p = i;
  *v = x;
  return true;
}

/* chrono's scan::timezone_offset at *p: Z (allow_zulu), or a sign (+, -,
 * U+2212), 2 digits of hours, any colons and whitespace, then 2 digits of
 * minutes (00-59), or none with allow_missing (and then nothing or 2 bytes
 * or more left). */
static bool scan_offset(const uint8_t *t, int64_t n, int64_t *pp, bool allow_zulu,
                        bool allow_missing, int32_t *off) {
  int64_t p = *pp;
  if (allow_zulu && p < n && (t[p] == 'Z' || t[p] == 'z')) {
    *pp = p + 1;
    *off = 0;
    return true;
  }
  if (p >= n) return false;
  bool neg;
  if (t[p] == '+' || t[p] == '-') {
    neg = t[p++] == '-';
  } else if (n - p >= 3 && t[p] == 0xE2 && t[p + 1] == 0x88 && t[p + 2] == 0x92) {
    neg = true;
    p += 3;
  } else {
    return false;
  }
  if (n - p < 2 || (unsigned)(t[p] - '0') > 9 || (unsigned)(t[p + 1] - '0') > 9) return false;
  int32_t h = (t[p] - '0') * 10 + (t[p + 1] - '0'), m = 0;
  p += 2;
  while (p < n) { /* any colons and whitespace */
    int w = t[p] == ':' ? 1 : ws_len(t + p, n - p);
    if (w == 0) break;
    p += w;
  }
  if (n - p >= 2) {
    if (t[p] < '0' || t[p] > '5' || (unsigned)(t[p + 1] - '0') > 9) return false;
    m = (t[p] - '0') * 10 + (t[p + 1] - '0');
    p += 2;
  } else if (!allow_missing || n - p == 1) {
    return false;
  }
  *off = (neg ? -1 : 1) * (h * 3600 + m * 60);
  *pp = p;
  return true;
}

static bool chrono_items(const uint8_t *t, int64_t n, int64_t *pp, const char *fmt, civil *c);

/* chrono's %+ (parse_rfc3339_relaxed): a date (Y - m - d, whitespace allowed
 * before each part), t, T or a space, a time (H : M : S[.f], whitespace
 * allowed), then after any whitespace UTC (any case) or an offset. */
static bool chrono_rfc3339(const uint8_t *t, int64_t n, int64_t *pp, civil *c) {
  int64_t p = *pp;
  if (!chrono_items(t, n, &p, "%Y -%m -%d", c) || p == n) return false;
  if (t[p] != 't' && t[p] != 'T' && t[p] != ' ') return false;
  p++;
  if (!chrono_items(t, n, &p, "%H :%M :%S%.f ", c) || p == n) return false;
  p = skip_ws(t, n, p);
  if (n - p >= 3 && strncasecmp((const char *)t + p, "UTC", 3) == 0) {
    p += 3;
    c->off = 0;
  } else if (!scan_offset(t, n, &p, true, false, &c->off)) {
    return false;
  }
  c->has_off = true;
  *pp = p;
  return true;
}

/* chrono's parse of t[*p..n) by the items of fmt (%Y %m %d %H %M %S, %.f,
 * %#z, %+, a space: any whitespace, another byte: itself), each field in its
 * range; *p past what they read. */
static bool chrono_items(const uint8_t *t, int64_t n, int64_t *pp, const char *fmt, civil *c) {
  int64_t p = *pp, v;
  for (const char *f = fmt; *f; f++) {
    if (*f == ' ') {
      p = skip_ws(t, n, p);
      continue;
    }
    if (*f != '%') {
      if (p >= n || t[p] != (uint8_t)*f) return false;
      p++;
      continue;
    }
    char k = *++f;
    if (k == '.') { /* %.f: a point and 1 or more digits, or nothing */
      f++;
      if (p < n && t[p] == '.') {
        int64_t q = ++p;
        if (!scan_digits(t, n, &p, 9, &v)) return false;
        for (int64_t d = p - q; d < 9; d++) v *= 10;
        c->nano = v;
        while (p < n && (unsigned)(t[p] - '0') <= 9) p++;
      }
    } else if (k == '#') { /* %#z */
      f++;
      p = skip_ws(t, n, p);
      if (!scan_offset(t, n, &p, true, true, &c->off)) return false;
      c->has_off = true;
    } else if (k == '+') {
      if (!chrono_rfc3339(t, n, &p, c)) return false;
    } else { /* a number, after any whitespace */
      p = skip_ws(t, n, p);
      if (k == 'Y') {
        if (p < n && (t[p] == '-' || t[p] == '+')) {
          bool neg = t[p++] == '-';
          if (!scan_digits(t, n, &p, INT64_MAX, &v)) return false;
          v = neg ? -v : v;
        } else if (!scan_digits(t, n, &p, 4, &v)) {
          return false;
        }
        if (v < INT32_MIN || v > INT32_MAX) return false;
        c->year = v;
        continue;
      }
      if (!scan_digits(t, n, &p, 2, &v)) return false;
      switch (k) {
        case 'm':
          if (v < 1 || v > 12) return false;
          c->month = (int)v;
          break;
        case 'd':
          if (v < 1 || v > 31) return false;
          c->day = (int)v;
          break;
        case 'H':
          if (v > 23) return false;
          c->hour = (int)v;
          break;
        case 'M':
          if (v > 59) return false;
          c->minute = (int)v;
          break;
        default: /* S */
          if (v > 60) return false;
          c->second = (int)v;
          break;
      }
    }
  }
  *pp = p;
  return true;
}

/* c's date exists (in chrono's range of years, -262143 to 262142). */
static bool civil_date_ok(const civil *c) {
  static const uint8_t mdays[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int64_t y = c->year;
  if (y < -262143 || y > 262142 || c->day > mdays[c->month]) return false;
  return !(c->month == 2 && c->day == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)));
}

/* chrono reads all of t by fmt into an existing date (and, with an offset,
 * an instant in its range). */
static bool chrono_parse(const uint8_t *t, int64_t n, const char *fmt, civil *c) {
  memset(c, 0, sizeof *c);
  c->year = 1;
  c->month = c->day = 1;
  int64_t p = 0;
  if (!chrono_items(t, n, &p, fmt, c) || p != n || !civil_date_ok(c)) return false;
  if (c->has_off) {
    if (c->off <= -86400 || c->off >= 86400) return false;
    int64_t s = ladle_days_from_civil(c->year, (unsigned)c->month, (unsigned)c->day) * 86400 +
                c->hour * 3600 + c->minute * 60 + LADLE_MIN(c->second, 59) - c->off;
    if (s < ladle_days_from_civil(-262143, 1, 1) * 86400 ||
        s >= ladle_days_from_civil(262143, 1, 1) * 86400)
      return false;
  }
  return true;
}

/* Polars' fixed-width parser: t has exactly the width of fmt (4-digit year,
 * which may follow a minus when fmt starts with it, 2-digit fields, the
 * literals), an existing date and time. */
static bool fast_parse(const uint8_t *t, int64_t n, const char *fmt, civil *c) {
  memset(c, 0, sizeof *c);
  bool neg = n > 0 && t[0] == '-' && fmt[0] == '%' && fmt[1] == 'Y';
  int64_t p = neg;
  for (const char *f = fmt; *f; f++) {
    if (*f != '%') {
      if (p >= n || t[p] != (uint8_t)*f) return false;
      p++;
      continue;
    }
    char k = *++f;
    int w = k == 'Y' ? 4 : 2, v = 0;
    if (n - p < w) return false;
    for (int i = 0; i < w; i++) {
      if ((unsigned)(t[p + i] - '0') > 9) return false;
      v = v * 10 + (t[p + i] - '0');
    }
    p += w;
    switch (k) {
      case 'Y':
        c->year = neg ? -v : v;
        break;
      case 'm':
        c->month = v;
        break;
      case 'd':
        c->day = v;
        break;
      case 'H':
        c->hour = v;
        break;
      default: /* M */
        c->minute = v;
        break;
    }
  }
  return p == n && c->month >= 1 && c->month <= 12 && c->day >= 1 && civil_date_ok(c) &&
         c->hour <= 23 && c->minute <= 59;
}

/* c in `unit`s since the epoch, UTC (a second of 60 is the next second), as
 * Polars computes it (wrapping past the int64 range in nanoseconds). */
static int64_t civil_to_unit(const civil *c, int unit) {
  int64_t per = ladle_unit_per_sec(unit);
  int64_t s = ladle_days_from_civil(c->year, (unsigned)c->month, (unsigned)c->day) * 86400 +
              c->hour * 3600 + c->minute * 60 + c->second - (c->has_off ? c->off : 0);
  return (int64_t)((uint64_t)s * (uint64_t)per + (uint64_t)(c->nano / (1000000000 / per)));
}

/* ---- Polars' pattern check (its regexes, matched as they match: greedy,
 * first match in priority order; the month they capture must be 1 to 12) ----
 * Nodes: RX_DIG min..max ASCII digits (greedy), RX_SET one byte of set (min
 * 0: optional), RX_OPT a group of arg nodes tried, then skipped, RX_ALT two
 * branches (the first arg nodes, ending in an RX_JUMP over the second), the
 * month's marks, RX_END the end of the value. */
enum { RX_DIG, RX_SET, RX_OPT, RX_ALT, RX_JUMP, RX_MARK0, RX_MARK1, RX_END };
typedef struct rx_node {
  uint8_t op;
  int min, max, arg;
  const char *set;
} rx_node;

/* clang-format off */
#define RX_ANY INT32_MAX
#define RXD(a, b) {RX_DIG, a, b, 0, NULL}
#define RXS(s, opt) {RX_SET, (opt) ? 0 : 1, 1, 0, s}
#define RX_MONTH {RX_MARK0, 0, 0, 0, NULL}, RXS("01", 1), RXD(1, 1), {RX_MARK1, 0, 0, 0, NULL}
/* [T ] H :? M (:? S (\. f{1,9})?)?, H, M and S of lo to 2 digits */
#define RX_TIME(lo)                                                                       \
  RXS("T ", 0), RXD(lo, 2), RXS(":", 1), RXD(lo, 2),                                      \
  {RX_OPT, 0, 0, 5, NULL}, RXS(":", 1), RXD(lo, 2),                                       \
  {RX_OPT, 0, 0, 2, NULL}, RXS(".", 0), RXD(1, 9)
/* ['"]? d{1,2} [-/.] M [-/.] y{4,} (time)? ['"]? */
static const rx_node rx_dmy[] = {
    RXS("'\"", 1), RXD(1, 2), RXS("-/.", 0), RX_MONTH, RXS("-/.", 0), RXD(4, RX_ANY),
    {RX_OPT, 0, 0, 10, NULL}, RX_TIME(1), RXS("'\"", 1), {RX_END, 0, 0, 0, NULL}};
/* ['"]? y{4,} [-/.]? M [-/.]? d{1,2} (time)? ['"]? */
static const rx_node rx_ymd[] = {
    RXS("'\"", 1), RXD(4, RX_ANY), RXS("-/.", 1), RX_MONTH, RXS("-/.", 1), RXD(1, 2),
    {RX_OPT, 0, 0, 10, NULL}, RX_TIME(1), RXS("'\"", 1), {RX_END, 0, 0, 0, NULL}};
/* ['"]? y{4,} [-/.]? M [-/.]? d{1,2} time ([+-]\d{2}(:?\d{2})? | Z) ['"]?, the time's
 * fields of 2 digits */
static const rx_node rx_ymdz[] = {
    RXS("'\"", 1), RXD(4, RX_ANY), RXS("-/.", 1), RX_MONTH, RXS("-/.", 1), RXD(1, 2),
    RX_TIME(2),
    {RX_ALT, 0, 0, 6, NULL},
      RXS("+-", 0), RXD(2, 2), {RX_OPT, 0, 0, 2, NULL}, RXS(":", 1), RXD(2, 2),
      {RX_JUMP, 0, 0, 1, NULL},
      RXS("Z", 0),
    RXS("'\"", 1), {RX_END, 0, 0, 0, NULL}};
#undef RX_TIME
#undef RX_MONTH
#undef RXS
#undef RXD
/* clang-format on */

static bool rx_match(const rx_node *x, const uint8_t *t, int64_t n, int64_t p, int64_t *mark) {
  for (;; x++) {
    switch (x->op) {
      case RX_DIG: {
        int64_t k = 0;
        while (k < x->max && p + k < n && (unsigned)(t[p + k] - '0') <= 9) k++;
        for (; k >= x->min; k--)
          if (rx_match(x + 1, t, n, p + k, mark)) return true;
        return false;
      }
      case RX_SET:
        if (p < n && t[p] != 0 && strchr(x->set, t[p]) != NULL &&
            rx_match(x + 1, t, n, p + 1, mark))
          return true;
        if (x->min > 0) return false;
        break;
      case RX_OPT:
        if (rx_match(x + 1, t, n, p, mark)) return true;
        x += x->arg;
        break;
      case RX_ALT:
        if (rx_match(x + 1, t, n, p, mark)) return true;
        x += x->arg;
        break;
      case RX_JUMP:
        x += x->arg;
        break;
      case RX_MARK0:
      case RX_MARK1:
        mark[x->op - RX_MARK0] = p;
        break;
      default: /* RX_END */
        return p == n;
    }
  }
}

/* t passes Polars' pattern check for class cls (Pattern::is_inferable). */
static bool dt_gate(int cls, const uint8_t *t, int64_t n) {
  int64_t mark[2] = {0, 0};
  if (!rx_match(cls == DT_DMY ? rx_dmy : cls == DT_YMD ? rx_ymd : rx_ymdz, t, n, 0, mark))
    return false;
  int m = 0;
  for (int64_t i = mark[0]; i < mark[1]; i++) m = m * 10 + (t[i] - '0');
  return m >= 1 && m <= 12;
}

/* The class of formats that reads t, as Polars picks one from a column's
 * first value: dates day first, year first, then (a Datetime column) with a
 * time day first, year first, then with an offset. */
static int dt_infer(const uint8_t *t, int64_t n, bool date) {
  civil c;
  size_t nf;
  for (int pass = 0; pass < (date ? 1 : 2); pass++)
    for (int cls = DT_DMY; cls <= (pass ? DT_YMDZ : DT_YMD); cls++) {
      const dt_fmt *l = dt_list(cls, pass == 0, &nf);
      for (size_t i = 0; i < nf; i++)
        if (chrono_parse(t, n, l[i].f, &c)) return cls;
    }
  return DT_NONE;
}

/* The slow path: the last format, else (through the gate) the first of the
 * class that reads t. */
static bool dt_slow(dt_state *s, int cls, int last, const uint8_t *t, int64_t n, bool date,
                    civil *c) {
  size_t nf;
  const dt_fmt *l = dt_list(cls, date, &nf);
  if (chrono_parse(t, n, l[last].f, c)) {
    s->cls = (int8_t)cls;
    s->last = (int8_t)last;
    return true;
  }
  if (!date && !dt_gate(cls, t, n)) return false;
  for (size_t i = 0; i < nf; i++)
    if (chrono_parse(t, n, l[i].f, c)) {
      s->cls = (int8_t)cls;
      s->last = (int8_t)i;
      return true;
    }
  return false;
}

/* dt_read past its ISO shortcut (out of line: the shortcut is what a plain
 * column's loop runs). */
__attribute__((noinline)) static bool dt_read_general(dt_state *s, const uint8_t *t, int64_t n,
                                                      bool date, int unit, int64_t *out) {
  civil c;
  size_t nf;
  if (s->cls == DT_NONE) {
    int cls = dt_infer(t, n, date);
    if (cls == DT_NONE || !dt_slow(s, cls, 0, t, n, date, &c)) return false;
  } else if (date) {
    const dt_fmt *l = dt_list(s->cls, true, &nf);
    size_t i = 0;
    while (i < nf && !chrono_parse(t, n, l[i].f, &c)) i++;
    if (i == nf) return false;
  } else {
    const dt_fmt *l = dt_list(s->cls, false, &nf);
    bool ok = l[s->last].fast && fast_parse(t, n, l[s->last].f, &c);
    for (size_t i = 0; !ok && i < nf; i++)
      if (l[i].fast && fast_parse(t, n, l[i].f, &c)) {
        ok = true;
        s->last = (int8_t)i;
      }
    if (!ok && !dt_slow(s, s->cls, s->last, t, n, false, &c)) return false;
  }
  if (date) {
    *out = ladle_days_from_civil(c.year, (unsigned)c.month, (unsigned)c.day);
  } else {
    if (c.second == 60) {
      c.second = 59;
      c.nano += 1000000000;
    }
    *out = civil_to_unit(&c, unit);
  }
  return true;
}

/* A Date (days) or Datetime (units) value of a column in state s, as Polars
 * reads it; false: null (or an error). */
static inline bool dt_read(dt_state *s, const char *t, int64_t n, bool date, int unit,
                           int64_t *out) {
  if (s->cls == DT_NONE || s->cls == DT_YMD) {
    /* ISO values: what the formats give, without trying them (year first;
     * a date alone, or with H:M:S[.f] after T or a space, at most 9 digits
     * of fraction: Polars' fast parser takes none of those with seconds, its
     * check passes them all, and the format that reads them is the one
     * named; a date is the Y-m-d format's) */
    int64_t v;
    if (n == 10 && parse_date(t, n, &v)) {
      s->cls = DT_YMD;
      s->last = DT_YMD_ISO_DATE;
      *out = date ? v : v * 86400 * ladle_unit_per_sec(unit);
      return true;
    }
    if (!date && n >= 19 && n != 20 && n <= 29 && parse_datetime(t, n, unit, &v)) {
      s->cls = DT_YMD;
      s->last = t[10] == 'T' ? DT_YMD_ISO_T : DT_YMD_ISO_SPACE;
      *out = v;
      return true;
    }
  }
  return dt_read_general(s, (const uint8_t *)t, n, date, unit, out);
}

ladle_status ladle_csv_infer(const ladle_csv_file *f, const ladle_csv_opts *o, ladle_dtype *types,
                             ladle_error *err) {
  size_t nc = f->ncols;
  /* bit k of cand[c]: 0 int, 1 float, 2 bool, 3 date, 4 datetime; any: seen a value */
  uint8_t *cand = malloc(LADLE_MAX(nc, 1)), *any = calloc(LADLE_MAX(nc, 1), 1);
  field *fields = malloc(LADLE_MAX(nc, 1) * sizeof *fields);
  char *scratch = NULL;
  if (cand == NULL || any == NULL || fields == NULL) {
    free(cand);
    free(any);
    free(fields);
    return LADLE_OOM(err, "csv inference");
  }
  memset(cand, o->try_parse_dates ? 0x1f : 0x07, nc);
  int64_t rows =
      o->infer_schema_length > 0 ? LADLE_MIN(o->infer_schema_length, f->nrecords) : f->nrecords;
  int64_t scap = 0;
  ladle_status st = LADLE_OK;
  for (int64_t r = 0; r < rows && st == LADLE_OK; r++) {
    int64_t a = f->starts[2 * r], b = f->starts[2 * r + 1];
    if (b - a + 1 > scap) {
      scap = b - a + 1;
      char *s = realloc(scratch, (size_t)scap);
      if (s == NULL) {
        st = LADLE_OOM(err, "csv inference");
        break;
      }
      scratch = s;
    }
    size_t n = split_record(f->data, f->size, a, b, o->separator, o->quote, fields, nc, NULL);
    for (size_t c = 0; c < nc && c < n; c++) {
      int64_t len;
      const char *t;
      field_text(f->data, fields[c], o->quote, false, scratch, &t,
                 &len); /* as Polars reads a number */
      if (is_null_text(o, f, c, fields[c], t, len)) continue;
      any[c] = 1;
      int64_t i64;
      double d;
      bool bo;
      if (!parse_i64(t, len, &i64)) cand[c] &= (uint8_t)~1u;
      if (!parse_float(t, len, o->decimal_comma, &d)) cand[c] &= (uint8_t)~2u;
      if (!parse_bool(t, len, &bo)) cand[c] &= (uint8_t)~4u;
      if (!parse_date(t, len, &i64)) cand[c] &= (uint8_t)~8u;
      if (!parse_datetime(t, len, LADLE_TIME_US, &i64)) cand[c] &= (uint8_t)~16u;
    }
  }
  for (size_t c = 0; c < nc; c++) {
    ladle_type_id id = LADLE_TYPE_STRING;
    if (any[c]) {
      if (cand[c] & 1)
        id = LADLE_TYPE_INT64;
      else if (cand[c] & 2)
        id = LADLE_TYPE_FLOAT64;
      else if (cand[c] & 4)
        id = LADLE_TYPE_BOOL;
      else if (cand[c] & 8)
        id = LADLE_TYPE_DATE;
      else if (cand[c] & 16)
        id = LADLE_TYPE_DATETIME;
    }
    types[c] = id == LADLE_TYPE_DATETIME ? ladle_dtype_temporal(id, LADLE_TIME_US, NULL)
                                         : ladle_dtype_make(id);
  }
  free(cand);
  free(any);
  free(fields);
  free(scratch);
  return st;
}

/* dt: the column's date state (Date and Datetime columns). */
/* Whether a field is spaces and tabs alone: a null number in Polars (not an
 * error, also without ignore_errors). */
static bool blank_text(const char *t, int64_t len) {
  if (len == 0) return false;
  for (int64_t i = 0; i < len; i++)
    if (t[i] != ' ' && t[i] != '\t') return false;
  return true;
}

/* x into row r of o, a signed integer column; false where it does not fit
 * the column's width. */
static inline bool put_signed(ladle_column *o, int64_t r, int64_t x) {
  switch (o->type.id) {
    case LADLE_TYPE_INT8:
      if (x < INT8_MIN || x > INT8_MAX) return false;
      LADLE_COL_MUT(o, int8_t)[r] = (int8_t)x;
      return true;
    case LADLE_TYPE_INT16:
      if (x < INT16_MIN || x > INT16_MAX) return false;
      LADLE_COL_MUT(o, int16_t)[r] = (int16_t)x;
      return true;
    case LADLE_TYPE_INT32:
      if (x < INT32_MIN || x > INT32_MAX) return false;
      LADLE_COL_MUT(o, int32_t)[r] = (int32_t)x;
      return true;
    default:
      LADLE_COL_MUT(o, int64_t)[r] = x;
      return true;
  }
}

/* d into row r of o, a Float32 or Float64 column. */
static inline void put_float(ladle_column *o, int64_t r, double d) {
  if (o->type.id == LADLE_TYPE_FLOAT32)
    LADLE_COL_MUT(o, float)[r] = (float)d;
  else
    LADLE_COL_MUT(o, double)[r] = d;
}

static bool store(ladle_column *o, int64_t r, const char *t, int64_t len, bool decimal_comma,
                  dt_state *dt) {
  ladle_type_id id = o->type.id;
  /* a number of a given type may start with spaces and tabs, as in Polars
   * (not other whitespace, nor any after it; inference reads such a field as
   * text, as Polars does) */
  if (ladle_type_is_numeric(id))
    while (len > 0 && (*t == ' ' || *t == '\t')) {
      t++;
      len--;
    }
  int64_t i64;
  uint64_t u64;
  double d;
  bool b;
  switch (id) {
    case LADLE_TYPE_BOOL:
      if (!parse_bool(t, len, &b)) return false;
      LADLE_COL_MUT(o, uint8_t)[r] = b;
      return true;
    case LADLE_TYPE_INT8:
    case LADLE_TYPE_INT16:
    case LADLE_TYPE_INT32:
    case LADLE_TYPE_INT64:
      return parse_i64(t, len, &i64) && put_signed(o, r, i64);
    case LADLE_TYPE_UINT8:
    case LADLE_TYPE_UINT16:
    case LADLE_TYPE_UINT32:
    case LADLE_TYPE_UINT64:
      if (!parse_u64(t, len, &u64)) return false;
      if (id == LADLE_TYPE_UINT8 && u64 > UINT8_MAX) return false;
      if (id == LADLE_TYPE_UINT16 && u64 > UINT16_MAX) return false;
      if (id == LADLE_TYPE_UINT32 && u64 > UINT32_MAX) return false;
      if (id == LADLE_TYPE_UINT8)
        LADLE_COL_MUT(o, uint8_t)[r] = (uint8_t)u64;
      else if (id == LADLE_TYPE_UINT16)
        LADLE_COL_MUT(o, uint16_t)[r] = (uint16_t)u64;
      else if (id == LADLE_TYPE_UINT32)
        LADLE_COL_MUT(o, uint32_t)[r] = (uint32_t)u64;
      else
        LADLE_COL_MUT(o, uint64_t)[r] = u64;
      return true;
    case LADLE_TYPE_FLOAT32:
    case LADLE_TYPE_FLOAT64:
      if (!parse_float(t, len, decimal_comma, &d)) return false;
      put_float(o, r, d);
      return true;
    case LADLE_TYPE_DATE: /* (chrono's years all fit) */
      if (!dt_read(dt, t, len, true, 0, &i64)) return false;
      LADLE_COL_MUT(o, int32_t)[r] = (int32_t)i64;
      return true;
    case LADLE_TYPE_DATETIME:
      if (!dt_read(dt, t, len, false, (int)o->type.unit, &i64)) return false;
      LADLE_COL_MUT(o, int64_t)[r] = i64;
      return true;
    default:
      return false;
  }
}

/* The error for invalid UTF-8 at byte `at` of the data, found in records
 * [begin, end): names the record and the column it lies in (or the comment
 * line after a record). */
static ladle_status invalid_utf8(const ladle_csv_file *f, const ladle_csv_opts *o, int64_t begin,
                                 int64_t end, int64_t at, ladle_error *err) {
  int64_t lo = begin, hi = end - 1; /* the last record starting at or before `at` */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (f->starts[2 * mid] <= at)
      lo = mid;
    else
      hi = mid - 1;
  }
  int64_t a = f->starts[2 * lo], b = f->starts[2 * lo + 1];
  if (at < a)
    return ladle_err_set(err, LADLE_ECORRUPT,
                         "%s: invalid UTF-8 in a comment line before record %lld", f->path,
                         (long long)(lo + 1));
  if (at >= b)
    return ladle_err_set(err, LADLE_ECORRUPT,
                         "%s: invalid UTF-8 in a comment line after record %lld", f->path,
                         (long long)(lo + 1));
  field *fields = malloc((f->ncols + 1) * sizeof *fields);
  if (fields == NULL) return LADLE_OOM(err, "csv error");
  size_t got =
      split_record(f->data, f->size, a, b, o->separator, o->quote, fields, f->ncols + 1, NULL);
  const char *col = NULL;
  for (size_t c = 0; c < LADLE_MIN(got, f->ncols + 1); c++)
    if (at >= fields[c].a && at < fields[c].b) col = c < f->ncols ? f->names[c] : NULL;
  free(fields);
  return col != NULL
             ? ladle_err_set(err, LADLE_ECORRUPT, "%s: record %lld, column '%s': invalid UTF-8",
                             f->path, (long long)(lo + 1), col)
             : ladle_err_set(err, LADLE_ECORRUPT, "%s: record %lld: invalid UTF-8", f->path,
                             (long long)(lo + 1));
}

/* The fast path's plan: per file column, the output column it is read
 * into (NULL: skipped); false when the parse cannot take it at all (a
 * selected column that is not a signed integer or a float, a decimal comma,
 * null texts other than the empty field, a column read twice or not in the
 * file). */
static bool fast_plan(const ladle_csv_file *f, const ladle_csv_opts *o, size_t ncols,
                      const size_t *which, const ladle_dtype *types, ladle_column *out,
                      ladle_column **plan) {
  if (o->decimal_comma || !o->missing_is_null || o->n_null_values > 0 || f->n_col_nulls != NULL ||
      f->ncols == 0 || ncols == 0)
    return false;
  for (size_t c = 0; c < f->ncols; c++) plan[c] = NULL;
  for (size_t k = 0; k < ncols; k++) {
    ladle_type_id id = types[k].id;
    if (!((id >= LADLE_TYPE_INT8 && id <= LADLE_TYPE_INT64) || ladle_type_is_float(id)) ||
        which[k] >= f->ncols || plan[which[k]] != NULL)
      return false;
    plan[which[k]] = &out[k];
  }
  return true;
}

/* Record [a, b) read in one pass over its bytes when it is plain: exactly
 * the file's fields, no quote character, each read field a number of its
 * column's type (an integer's sign and digits read as they are met; a
 * float's text to parse_f64). False otherwise (an empty field, a quote,
 * other text, another field count): the general path then reads the record,
 * with its nulls and errors, and overwrites what this stored. */
static bool fast_record(const uint8_t *d, int64_t a, int64_t b, char sep, char quote, size_t nf,
                        ladle_column *const *plan, int64_t r) {
  while (b > a && (d[b - 1] == '\n' || d[b - 1] == '\r')) b--;
  int64_t p = a;
  for (size_t c = 0; c < nf; c++) {
    ladle_column *o = plan[c];
    if (o != NULL && o->type.id <= LADLE_TYPE_INT64) { /* INT8..INT64 (fast_plan) */
      bool neg = false;
      if (p < b && (d[p] == '-' || d[p] == '+')) neg = d[p++] == '-';
      int64_t start = p;
      uint64_t v = 0;
      for (; p < b && (unsigned)(d[p] - '0') <= 9; p++) v = v * 10 + (unsigned)(d[p] - '0');
      if (p == start || p - start > 18 || !put_signed(o, r, neg ? -(int64_t)v : (int64_t)v))
        return false;
    } else {
      int64_t start = p;
      for (; p < b && d[p] != (uint8_t)sep; p++)
        if (quote && d[p] == (uint8_t)quote) return false;
      if (o != NULL) {
        double v;
        if (p == start || !parse_f64((const char *)d + start, p - start, &v)) return false;
        put_float(o, r, v);
      }
    }
    if (c + 1 < nf) {
      if (p >= b || d[p] != (uint8_t)sep) return false;
      p++;
    }
  }
  return p == b;
}

ladle_status ladle_csv_parse(const ladle_csv_file *f, const ladle_csv_opts *o, int64_t begin,
                             int64_t end, size_t ncols, const size_t *which,
                             const ladle_dtype *types, ladle_column *out, ladle_error *err) {
  int64_t n = end - begin;
  size_t nf = f->ncols;
  field *fields = malloc(LADLE_MAX(nf + 1, 1) * sizeof *fields);
  char *scratch = NULL;
  int64_t scap = 0;
  /* strings: offsets now, bytes into a growing buffer */
  char **sbuf = calloc(LADLE_MAX(ncols, 1), sizeof *sbuf);
  /* each date column's state, from its first record on (as in a Polars chunk) */
  dt_state *dts = calloc(LADLE_MAX(ncols, 1), sizeof *dts);
  int64_t *slen = calloc(LADLE_MAX(ncols, 1), sizeof *slen),
          *scapv = calloc(LADLE_MAX(ncols, 1), sizeof *scapv);
  ladle_status st = fields && sbuf && slen && scapv && dts ? LADLE_OK : LADLE_OOM(err, "csv parse");
  size_t made = 0;
  for (; st == LADLE_OK && made < ncols; made++) {
    st = ladle_column_alloc(types[made], n, true, 0, &out[made], err);
    if (st != LADLE_OK) break;
  }
  if (st != LADLE_OK && made > 0) made--;
  /* with a String column, the records' bytes must be valid UTF-8: the span
   * of every 256 records (fields, quotes, comment lines between) checked at
   * once just before they are parsed (so that the parse finds them in the
   * cache), as Polars checks its chunks; every String value lies inside */
  bool any_string = false;
  for (size_t k = 0; k < ncols; k++) any_string |= types[k].id == LADLE_TYPE_STRING;
  /* the last file column read: Polars' parser splits fields up to it and
   * skips the rest of a record by quote parity, so fields past it are never
   * checked (neither their quotes nor how many there are) */
  size_t read_last = SIZE_MAX;
  for (size_t k = 0; k < ncols; k++)
    if (which[k] < nf && (read_last == SIZE_MAX || which[k] > read_last)) read_last = which[k];
  ladle_column **plan = malloc(LADLE_MAX(nf, 1) * sizeof *plan);
  if (plan == NULL && st == LADLE_OK) st = LADLE_OOM(err, "csv parse");
  bool fast = st == LADLE_OK && fast_plan(f, o, ncols, which, types, out, plan);
  int64_t misses = 0; /* records the fast path gave to the general one */
  for (int64_t r = 0; st == LADLE_OK && r < n; r++) {
    int64_t rec = begin + r, a = f->starts[2 * rec], b = f->starts[2 * rec + 1];
    if (fast) {
      if (fast_record(f->data, a, b, o->separator, o->quote, nf, plan, r)) continue;
      /* mostly records it cannot read (a column of nulls): each would be
       * read twice, so the rest go the general way at once */
      if (++misses >= 256 && misses * 2 > r + 1) fast = false;
    }
    if (any_string && r % 256 == 0) {
      /* (from the end of the record before, so that comment lines between
       * are checked too; the file's first and last records take those
       * before and after them) */
      int64_t upto = LADLE_MIN(rec + 256, end);
      int64_t lo = rec == 0 ? f->body : f->starts[2 * (rec - 1) + 1];
      int64_t hi = upto == f->nrecords ? f->size : f->starts[2 * (upto - 1) + 1];
      int64_t bad = ladle_utf8_check(f->data + lo, hi - lo);
      if (bad >= 0) {
        st = invalid_utf8(f, o, rec, upto, lo + bad, err);
        break;
      }
    }
    if (b - a + 1 > scap) {
      scap = b - a + 1;
      char *s = realloc(scratch, (size_t)scap);
      if (s == NULL) {
        st = LADLE_OOM(err, "csv parse");
        break;
      }
      scratch = s;
    }
    bool last = rec == f->nrecords - 1;
    size_t stray_at = SIZE_MAX;
    size_t got =
        split_record(f->data, f->size, a, b, o->separator, o->quote, fields, nf + 1, &stray_at);
    bool stray = read_last != SIZE_MAX && stray_at <= read_last;
    if (stray && o->ignore_errors) { /* the caller reads the parser's records instead */
      st = ladle_err_set(err, LADLE_CSV_REREAD,
                         "%s: record %lld: quote parity and Polars' parser disagree", f->path,
                         (long long)(rec + 1));
      break;
    }
    if (!o->ignore_errors && (stray || (last && f->open_quote))) {
      st = ladle_err_set(
          err, LADLE_ECORRUPT,
          stray
              ? "%s: record %lld: a quote character inside an unquoted field makes Polars' parser "
                "split records other than their quotes do (a malformed file; with ignore_errors "
                "they are read as the parser splits them)"
              : "%s: record %lld: a quote is not closed before the end of the file",
          f->path, (long long)(rec + 1));
      break;
    }
    /* a separator ending the data's last line (no line end) adds no field, as
     * in Polars */
    if (last && got == nf + 1 && b == f->size && f->data[b - 1] != '\n' && f->data[b - 1] != '\r' &&
        fields[nf].a == fields[nf].b && !fields[nf].quoted)
      got = nf;
    if (got > nf && !o->truncate_ragged_lines && read_last == nf - 1) {
      st =
          ladle_err_set(err, LADLE_ECORRUPT,
                        "%s: record %lld has %zu fields, the header %zu; use truncate_ragged_lines",
                        f->path, (long long)(rec + 1), got, nf);
      break;
    }
    for (size_t k = 0; k < ncols; k++) {
      ladle_column *o_ = &out[k];
      size_t c = which[k];
      bool str = types[k].id == LADLE_TYPE_STRING;
      int64_t len = 0;
      const char *t = NULL;
      bool null = c >= got || types[k].id == LADLE_TYPE_NULL;
      if (!null) {
        if (!field_text(f->data, fields[c], o->quote, str, scratch, &t, &len)) {
          field q = fields[c];
          st = ladle_err_set(
              err, LADLE_ECORRUPT,
              "%s: record %lld, column '%s': the quoted field %.*s does not end with its "
              "closing quote (Polars cannot parse it either)",
              f->path, (long long)(rec + 1), f->names[c], (int)LADLE_MIN(q.b - q.a, 40),
              (const char *)f->data + q.a);
          break;
        }
        /* a quoted field with nothing between its first and last bytes is a
         * null number or date (Polars' empty text), as an unquoted empty one;
         * a String one too where null values are named per column and this
         * column has none (Polars); spaces and tabs alone are a null number */
        null = is_null_text(o, f, c, fields[c], t, len) || (!str && fields[c].quoted && len == 0) ||
               (ladle_type_is_numeric(types[k].id) && blank_text(t, len)) ||
               (str && fields[c].quoted && len == 0 && f->n_col_nulls != NULL &&
                f->n_col_nulls[c] == 0);
      }
      if (!null && str) {
        if (slen[k] + len > scapv[k]) {
          int64_t cap = LADLE_MAX(scapv[k] * 2, slen[k] + len + 4096);
          char *nb = realloc(sbuf[k], (size_t)cap);
          if (nb == NULL) {
            st = LADLE_OOM(err, "csv strings");
            break;
          }
          sbuf[k] = nb;
          scapv[k] = cap;
        }
        if (len > 0) memcpy(sbuf[k] + slen[k], t, (size_t)len);
        slen[k] += len;
      } else if (!null && !store(o_, r, t, len, o->decimal_comma, &dts[k])) {
        if (!o->ignore_errors) {
          char b1[64];
          st = ladle_err_set(err, LADLE_ECOMPUTE,
                             "%s: record %lld, column '%s': '%.*s' is not a valid %s; use "
                             "ignore_errors or a schema override",
                             f->path, (long long)(rec + 1), f->names[c], (int)LADLE_MIN(len, 40), t,
                             ladle_dtype_name(types[k], b1, sizeof b1));
          break;
        }
        null = true;
      }
      if (null) {
        ladle_bit_set(LADLE_COL_VALIDITY_MUT(o_), r, false);
        if (!str && o_->values != NULL)
          memset(LADLE_COL_MUT(o_, char) + r * (int64_t)ladle_type_width(types[k].id), 0,
                 ladle_type_width(types[k].id));
      }
      if (str) LADLE_COL_MUT(o_, int64_t)[r + 1] = slen[k];
    }
  }
  for (size_t k = 0; st == LADLE_OK && k < ncols; k++) {
    if (types[k].id != LADLE_TYPE_STRING) continue;
    ladle_buffer *bf;
    st = ladle_buffer_alloc(NULL, (size_t)slen[k], &bf, err);
    if (st != LADLE_OK) break;
    if (slen[k]) memcpy(bf->data, sbuf[k], (size_t)slen[k]);
    ladle_buffer_release(out[k].owners[2]);
    out[k].owners[2] = bf;
    out[k].chars = bf->data;
  }
  for (size_t k = 0; k < ncols; k++) {
    if (sbuf) free(sbuf[k]);
    if (st == LADLE_OK) ladle_column_finish_nulls(&out[k]);
  }
  if (st != LADLE_OK)
    for (size_t k = 0; k <= made && k < ncols; k++) ladle_column_release(&out[k]);
  free(sbuf);
  free(slen);
  free(scapv);
  free(dts);
  free(fields);
  free(scratch);
  free(plan);
  return st;
}
