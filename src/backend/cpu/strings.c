/* strings.c — UTF-8 string functions. Character positions count code points;
 * case mapping follows Polars (Rust's full mappings: ß -> SS, İ -> i̇, and the
 * final-sigma rule of to_lowercase) through tables generated from Polars
 * (unicode_tables.h), with an ASCII fast path; regexes are POSIX extended
 * (documented in docs/semantics.md as narrower than Polars' Rust regex
 * syntax). */
#define _GNU_SOURCE
#include <regex.h>

#include "cpu.h"
#include "unicode_tables.h"

typedef struct strout {
  ladle_column col;
  int64_t pos, cap;
  char *buf;
} strout;

/* Builds a string column row by row into a growable scratch buffer. */
static ladle_status so_init(strout *s, int64_t n, ladle_error *err) {
  s->cap = LADLE_MAX(n * 8, 64);
  s->buf = malloc((size_t)s->cap);
  s->pos = 0;
  if (s->buf == NULL) return LADLE_OOM(err, "string output");
  ladle_status st =
      ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_STRING), n, false, 0, &s->col, err);
  if (st != LADLE_OK) free(s->buf);
  return st;
}
/* Room for len more bytes at buf + pos. */
static bool so_reserve(strout *s, int64_t len) {
  if (s->pos + len > s->cap) {
    int64_t cap = LADLE_MAX(s->cap * 2, s->pos + len);
    char *b = realloc(s->buf, (size_t)cap);
    if (b == NULL) return false;
    s->buf = b;
    s->cap = cap;
  }
  return true;
}
static bool so_put(strout *s, const char *p, int64_t len) {
  if (!so_reserve(s, len)) return false;
  memcpy(s->buf + s->pos, p, (size_t)len);
  s->pos += len;
  return true;
}
static ladle_status so_finish(strout *s, const ladle_column *validity_from, ladle_column *out,
                              ladle_error *err) {
  ladle_buffer *b;
  ladle_status st = ladle_buffer_alloc(NULL, (size_t)s->pos, &b, err);
  if (st != LADLE_OK) {
    free(s->buf);
    ladle_column_release(&s->col);
    return st;
  }
  memcpy(b->data, s->buf, (size_t)s->pos);
  free(s->buf);
  ladle_buffer_release(s->col.owners[2]);
  s->col.owners[2] = b;
  s->col.chars = b->data;
  if (validity_from != NULL && validity_from->validity != NULL) {
    st = ladle_column_add_validity(&s->col, err);
    if (st != LADLE_OK) {
      ladle_column_release(&s->col);
      return st;
    }
    memcpy(LADLE_COL_VALIDITY_MUT(&s->col), validity_from->validity,
           (size_t)ladle_bitmap_bytes(s->col.length));
    ladle_column_finish_nulls(&s->col);
  }
  *out = s->col;
  return LADLE_OK;
}

/* Decodes one code point; returns its byte length (1 for invalid bytes). */
static int utf8_decode(const unsigned char *p, int64_t len, uint32_t *cp) {
  unsigned c = p[0];
  if (c < 0x80 || len < 2) {
    *cp = c;
    return 1;
  }
  if ((c & 0xe0) == 0xc0 && len >= 2) {
    *cp = ((c & 0x1fu) << 6) | (p[1] & 0x3fu);
    return 2;
  }
  if ((c & 0xf0) == 0xe0 && len >= 3) {
    *cp = ((c & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
    return 3;
  }
  if ((c & 0xf8) == 0xf0 && len >= 4) {
    *cp = ((c & 0x07u) << 18) | ((p[1] & 0x3fu) << 12) | ((p[2] & 0x3fu) << 6) | (p[3] & 0x3fu);
    return 4;
  }
  *cp = c;
  return 1;
}

static int utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

static int64_t count_chars(const char *p, int64_t len) {
  int64_t n = 0;
  for (int64_t i = 0; i < len; i++) n += ((unsigned char)p[i] & 0xc0) != 0x80;
  return n;
}

/* Byte offset of character k (clamped to len). */
static int64_t char_offset(const char *p, int64_t len, int64_t k) {
  int64_t i = 0;
  while (i < len && k > 0) {
    i++;
    while (i < len && ((unsigned char)p[i] & 0xc0) == 0x80) i++;
    k--;
  }
  return i;
}

/* Index of cp in a sorted table of [cp, ...] rows of `width` words, or -1. */
static int64_t uc_find(const uint32_t *rows, size_t nrows, size_t width, uint32_t cp) {
  size_t lo = 0, hi = nrows;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (rows[mid * width] < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < nrows && rows[lo * width] == cp ? (int64_t)lo : -1;
}

/* Is cp in a sorted table of [lo, hi] ranges? */
static bool uc_in_ranges(const uint32_t (*r)[2], size_t n, uint32_t cp) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (r[mid][1] < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && r[lo][0] <= cp;
}

#define UC_N(t) (sizeof(t) / sizeof((t)[0]))

/* The full upper- or lowercase of cp (1 to 3 code points) in out; its count. */
static int uc_map(uint32_t cp, bool upper, uint32_t out[3]) {
  const ladle_uc_multi *multi = upper ? ladle_uc_upper_multi : ladle_uc_lower_multi;
  size_t nmulti = upper ? UC_N(ladle_uc_upper_multi) : UC_N(ladle_uc_lower_multi);
  int64_t k = uc_find(&multi[0].cp, nmulti, sizeof *multi / sizeof(uint32_t), cp);
  if (k >= 0) {
    int n = 0;
    while (n < 3 && multi[k].to[n] != 0) out[n] = multi[k].to[n], n++;
    return n;
  }
  const uint32_t(*simple)[2] = upper ? ladle_uc_upper : ladle_uc_lower;
  k = uc_find(&simple[0][0], upper ? UC_N(ladle_uc_upper) : UC_N(ladle_uc_lower), 2, cp);
  out[0] = k >= 0 ? simple[k][1] : cp;
  return 1;
}

/* Rust's final-sigma context: skipping Case_Ignorable code points, is the next
 * one (backwards from p when back, else forwards) Cased? */
static bool cased_after_ignorable(const char *s, int64_t len, int64_t p, bool back) {
  while (back ? p > 0 : p < len) {
    uint32_t cp;
    int64_t at = p;
    if (back) {
      at = p - 1;
      while (at > 0 && ((unsigned char)s[at] & 0xc0) == 0x80) at--;
    }
    int w = utf8_decode((const unsigned char *)s + at, len - at, &cp);
    if (!uc_in_ranges(ladle_uc_case_ignorable, UC_N(ladle_uc_case_ignorable), cp))
      return uc_in_ranges(ladle_uc_cased, UC_N(ladle_uc_cased), cp);
    p = back ? at : at + w;
  }
  return false;
}

/* Appends the upper- or lowercase of s to the output: ASCII by a flip of one
 * bit, the rest through the tables. Bytes that are not UTF-8 are kept. */
static bool put_case(strout *so, const char *s, int64_t len, bool upper) {
  /* a case mapping is at most 3 times as long as its code point (ΐ -> Ϊ́) */
  if (!so_reserve(so, LADLE_UC_MAX_GROWTH * len)) return false;
  char *o = so->buf + so->pos;
  unsigned char first = upper ? 'a' : 'A';
  for (int64_t k = 0; k < len;) {
    unsigned char c = (unsigned char)s[k];
    if (c < 0x80) {
      *o++ = (char)((unsigned char)(c - first) < 26 ? c ^ 0x20 : c);
      k++;
      continue;
    }
    uint32_t cp, m[3];
    int w = utf8_decode((const unsigned char *)s + k, len - k, &cp), n = 1;
    if (w == 1) {
      *o++ = (char)c;
    } else {
      if (!upper && cp == 0x3a3) /* Σ: ς at the end of a word */
        m[0] =
            cased_after_ignorable(s, len, k, true) && !cased_after_ignorable(s, len, k + w, false)
                ? 0x3c2
                : 0x3c3;
      else
        n = uc_map(cp, upper, m);
      for (int j = 0; j < n; j++) o += utf8_encode(m[j], o);
    }
    k += w;
  }
  so->pos = o - so->buf;
  return true;
}

/* Does strip_chars strip cp? set NULL: Unicode White_Space (Rust's trim). */
static bool is_strip(uint32_t cp, const char *set) {
  if (set == NULL) {
    for (size_t k = 0; k < UC_N(ladle_uc_white_space); k++)
      if (ladle_uc_white_space[k] == cp) return true;
    return false;
  }
  int64_t len = (int64_t)strlen(set);
  for (int64_t i = 0; i < len;) {
    uint32_t c;
    i += utf8_decode((const unsigned char *)set + i, len - i, &c);
    if (c == cp) return true;
  }
  return false;
}

/* The pattern with every "." outside a bracket expression written as
 * "[^\n]": in Polars' (Rust) regexes "." does not match a newline, in POSIX
 * it does; REG_NEWLINE would also make "^", "$" and "[^...]" line-sensitive,
 * which Rust's are not. NULL: no memory. */
static char *dot_skips_newline(const char *pat) {
  size_t n = strlen(pat);
  char *out = malloc(n * 5 + 1), *w = out;
  if (out == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    char ch = pat[i];
    if (ch == '\\' && i + 1 < n) {
      *w++ = ch;
      *w++ = pat[++i];
    } else if (ch == '[') {
      /* copy the bracket expression whole: "]" first (after an optional "^")
       * is a member, "[:class:]" and friends nest */
      *w++ = pat[i++];
      if (i < n && pat[i] == '^') *w++ = pat[i++];
      if (i < n && pat[i] == ']') *w++ = pat[i++];
      while (i < n && pat[i] != ']') {
        if (pat[i] == '[' && i + 1 < n && strchr(":.=", pat[i + 1]) != NULL) {
          char close = pat[i + 1];
          *w++ = pat[i++];
          *w++ = pat[i++];
          while (i < n && !(pat[i] == close && i + 1 < n && pat[i + 1] == ']')) *w++ = pat[i++];
          if (i < n) {
            *w++ = pat[i++];
            *w++ = pat[i++];
          }
        } else {
          *w++ = pat[i++];
        }
      }
      if (i < n) *w++ = pat[i]; /* the closing "]" */
    } else if (ch == '.') {
      memcpy(w, "[^\n]", 4);
      w += 4;
    } else {
      *w++ = ch;
    }
  }
  *w = '\0';
  return out;
}

/* A regex made only of literal pieces joined by ".*" ("special.*requests",
 * a plain word): matched with memmem, piece after piece, without the regex
 * engine. "." does not match a newline (Polars' regex semantics), so with more
 * than one piece they must all lie on one line. */
enum { CHAIN_MAX = 8 };
typedef struct lit_chain {
  int n;
  const char *piece[CHAIN_MAX];
  size_t len[CHAIN_MAX];
} lit_chain;

static bool lit_chain_parse(const char *pat, lit_chain *c) {
  c->n = 0;
  const char *p = pat;
  for (;;) {
    const char *dot = strstr(p, ".*");
    size_t len = dot ? (size_t)(dot - p) : strlen(p);
    for (size_t k = 0; k < len; k++)
      if (strchr("\\.^$|?*+()[]{}\n", p[k]) != NULL) return false;
    if (c->n == CHAIN_MAX) return false;
    c->piece[c->n] = p;
    c->len[c->n++] = len;
    if (dot == NULL) return true;
    p = dot + 2;
  }
}

static bool lit_chain_match(const lit_chain *c, const char *s, int64_t len) {
  if (c->n == 1) return c->len[0] == 0 || memmem(s, (size_t)len, c->piece[0], c->len[0]) != NULL;
  const char *line = s, *end = s + len;
  for (;;) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    const char *le = nl ? nl : end, *p = line;
    bool ok = true;
    /* the earliest end of each piece leaves the most room for the next */
    for (int k = 0; ok && k < c->n; k++) {
      if (c->len[k] == 0) continue;
      const char *q = memmem(p, (size_t)(le - p), c->piece[k], c->len[k]);
      ok = q != NULL;
      if (ok) p = q + c->len[k];
    }
    if (ok) return true;
    if (nl == NULL) return false;
    line = nl + 1;
  }
}

/* contains over a whole column at once: the first literal (lit, len > 0) is
 * searched for through the column's bytes in one pass, each find placed in
 * its row by walking the offsets; a row with a find is then checked whole
 * (chain: the rest of the pieces; NULL: the find is the match), and the
 * search goes on at the next row. Rows with no find are false. Most rows of
 * a selective pattern are never looked at one by one. */
static void contains_scan(const ladle_column *x, const char *lit, size_t len,
                          const lit_chain *chain, uint8_t *out) {
  int64_t n = x->length;
  const int64_t *so = x->values;
  memset(out, 0, (size_t)n);
  if (n == 0) return;
  const char *base = x->chars, *end = base + so[n];
  const char *p = base + so[0];
  int64_t r = 0;
  while (p < end) {
    const char *q = memmem(p, (size_t)(end - p), lit, len);
    if (q == NULL) break;
    int64_t at = q - base;
    while (so[r + 1] <= at) r++;         /* the row q starts in (empty rows skipped) */
    if (at + (int64_t)len > so[r + 1]) { /* runs into the next row */
      p = q + 1;
      continue;
    }
    out[r] = chain == NULL || lit_chain_match(chain, base + so[r], so[r + 1] - so[r]);
    p = base + so[r + 1];
    r++;
    if (r >= n) break;
  }
}

ladle_status ladle_cpu_str_func(const ladle_kctx *ctx, const ladle_kexpr *e,
                                const ladle_column *args, size_t nargs, ladle_column *out,
                                ladle_error *err) {
  LADLE_UNUSED(ctx);
  ladle_func f = (ladle_func)e->op;
  const ladle_column *x = &args[0];
  int64_t n = x->length;
  ladle_column o;
  const char *pat = e->fopts.str;
  int64_t plen = pat ? (int64_t)strlen(pat) : 0;
  switch (f) {
    case LADLE_FN_STR_LEN_BYTES:
    case LADLE_FN_STR_LEN_CHARS:
    case LADLE_FN_STR_STARTS_WITH:
    case LADLE_FN_STR_ENDS_WITH:
    case LADLE_FN_STR_CONTAINS: {
      LADLE_RETURN_NOT_OK(ladle_column_alloc(e->type, n, x->validity != NULL, 0, &o, err));
      if (x->validity)
        memcpy(LADLE_COL_VALIDITY_MUT(&o), x->validity, (size_t)ladle_bitmap_bytes(n));
      regex_t re;
      lit_chain chain;
      chain.n = 0;
      bool use_chain =
          f == LADLE_FN_STR_CONTAINS && !e->fopts.literal && lit_chain_parse(pat, &chain);
      bool use_re = f == LADLE_FN_STR_CONTAINS && !e->fopts.literal && !use_chain;
      if (use_re) {
        char *rpat = dot_skips_newline(pat);
        if (rpat == NULL) {
          ladle_column_release(&o);
          return LADLE_OOM(err, "regex");
        }
        int rc = regcomp(&re, rpat, REG_EXTENDED | REG_NOSUB);
        free(rpat);
        if (rc != 0) {
          char msg[128];
          regerror(rc, &re, msg, sizeof msg);
          ladle_column_release(&o);
          return ladle_err_set(err, LADLE_EINVAL, "str.contains on '%s': bad regex \"%s\": %s",
                               e->arg_name, pat, msg);
        }
      }
      char *tmp = NULL;
      int64_t tcap = 0;
      if (f == LADLE_FN_STR_CONTAINS && !use_re && x->length == n && n > 64) {
        /* a literal, or literal pieces whose first is not empty: one pass */
        bool lit = e->fopts.literal || (use_chain && chain.n == 1);
        const char *first = lit ? pat : chain.piece[0];
        size_t flen = lit ? (size_t)plen : chain.len[0];
        if (flen > 0) {
          contains_scan(x, first, flen, lit ? NULL : &chain, LADLE_COL_MUT(&o, uint8_t));
          ladle_column_finish_nulls(&o);
          *out = o;
          return LADLE_OK;
        }
      }
      for (int64_t i = 0; i < n; i++) {
        const char *s = ladle_str_ptr(x, i);
        int64_t len = ladle_str_len(x, i);
        if (f == LADLE_FN_STR_LEN_BYTES) {
          LADLE_COL_MUT(&o, uint32_t)[i] = (uint32_t)len;
        } else if (f == LADLE_FN_STR_LEN_CHARS) {
          LADLE_COL_MUT(&o, uint32_t)[i] = (uint32_t)count_chars(s, len);
        } else if (f == LADLE_FN_STR_STARTS_WITH) {
          LADLE_COL_MUT(&o, uint8_t)[i] = len >= plen && memcmp(s, pat, (size_t)plen) == 0;
        } else if (f == LADLE_FN_STR_ENDS_WITH) {
          LADLE_COL_MUT(&o, uint8_t)
          [i] = len >= plen && memcmp(s + len - plen, pat, (size_t)plen) == 0;
        } else if (use_chain) {
          LADLE_COL_MUT(&o, uint8_t)[i] = lit_chain_match(&chain, s, len);
        } else if (!use_re) {
          LADLE_COL_MUT(&o, uint8_t)
          [i] = plen == 0 || memmem(s, (size_t)len, pat, (size_t)plen) != NULL;
        } else {
          if (len + 1 > tcap) {
            tcap = LADLE_MAX(len + 1, tcap * 2);
            char *t = realloc(tmp, (size_t)tcap);
            if (t == NULL) {
              free(tmp);
              regfree(&re);
              ladle_column_release(&o);
              return LADLE_OOM(err, "regex scratch");
            }
            tmp = t;
          }
          memcpy(tmp, s, (size_t)len);
          tmp[len] = '\0';
          LADLE_COL_MUT(&o, uint8_t)[i] = regexec(&re, tmp, 0, NULL, 0) == 0;
        }
      }
      free(tmp);
      if (use_re) regfree(&re);
      ladle_column_finish_nulls(&o);
      *out = o;
      return LADLE_OK;
    }
    default:
      break;
  }
  strout so;
  LADLE_RETURN_NOT_OK(so_init(&so, n, err));
  int64_t *off = LADLE_COL_MUT(&so.col, int64_t);
  bool ok = true;
  /* the output is null where x is, except for concat_str(ignore_nulls), never null */
  const ladle_column *validity_from = f == LADLE_FN_STR_CONCAT && e->fopts.i64 ? NULL : x;
  ladle_column concat_valid;
  memset(&concat_valid, 0, sizeof concat_valid);
  for (int64_t i = 0; i < n && ok; i++) {
    const char *s = ladle_str_ptr(x, i);
    int64_t len = ladle_str_len(x, i);
    switch (f) {
      case LADLE_FN_STR_TO_UPPER:
      case LADLE_FN_STR_TO_LOWER:
        ok = put_case(&so, s, len, f == LADLE_FN_STR_TO_UPPER);
        break;
      case LADLE_FN_STR_SLICE: {
        /* Polars: a negative offset counts from the end; the slice is
         * [offset, offset + length) clamped to the string, so the part of it
         * before the start is lost ("abc".slice(-5, 3) is "a") */
        int64_t nch = count_chars(s, len), from = e->fopts.i64, cnt = e->fopts.i64b;
        int64_t start = from >= 0 ? from : nch + from;
        int64_t end = cnt < 0 || start > INT64_MAX - cnt ? INT64_MAX : start + cnt;
        start = LADLE_MIN(LADLE_MAX(start, 0), nch);
        end = LADLE_MIN(LADLE_MAX(end, start), nch);
        int64_t b0 = char_offset(s, len, start);
        int64_t b1 = b0 + char_offset(s + b0, len - b0, end - start);
        ok = so_put(&so, s + b0, b1 - b0);
        break;
      }
      case LADLE_FN_STR_STRIP_CHARS: {
        int64_t a = 0, b = len;
        while (a < b) {
          uint32_t cp;
          int w = utf8_decode((const unsigned char *)s + a, b - a, &cp);
          if (!is_strip(cp, pat)) break;
          a += w;
        }
        while (b > a) {
          int64_t k = b - 1;
          while (k > a && ((unsigned char)s[k] & 0xc0) == 0x80) k--;
          uint32_t cp;
          utf8_decode((const unsigned char *)s + k, b - k, &cp);
          if (!is_strip(cp, pat)) break;
          b = k;
        }
        ok = so_put(&so, s + a, b - a);
        break;
      }
      case LADLE_FN_STR_CONCAT: {
        bool put = false; /* a separator goes before every piece but the first */
        for (size_t k = 0; k < nargs && ok; k++) {
          const ladle_column *c = &args[k];
          int64_t ci = c->length == 1 ? 0 : i;
          if (e->fopts.i64 && !ladle_cpu_valid_at(c, i)) continue; /* ignore_nulls */
          if (put && pat != NULL) ok = so_put(&so, pat, plen);
          if (ok) ok = so_put(&so, ladle_str_ptr(c, ci), ladle_str_len(c, ci));
          put = true;
        }
        break;
      }
      default:
        ok = false;
        break;
    }
    off[i + 1] = so.pos;
  }
  if (!ok) {
    free(so.buf);
    ladle_column_release(&so.col);
    return f == LADLE_FN_STR_CONCAT || f == LADLE_FN_STR_SLICE || f == LADLE_FN_STR_STRIP_CHARS ||
                   f == LADLE_FN_STR_TO_LOWER || f == LADLE_FN_STR_TO_UPPER
               ? LADLE_OOM(err, "string output")
               : ladle_err_set(err, LADLE_ENOTSUP, "%s on the CPU", ladle_func_name(f));
  }
  if (f == LADLE_FN_STR_CONCAT && !e->fopts.i64) {
    /* null if any input is null */
    ladle_status st =
        ladle_column_alloc(ladle_dtype_make(LADLE_TYPE_BOOL), n, true, 0, &concat_valid, err);
    if (st != LADLE_OK) {
      free(so.buf);
      ladle_column_release(&so.col);
      return st;
    }
    for (int64_t i = 0; i < n; i++) {
      bool v = true;
      for (size_t k = 0; k < nargs; k++) v &= ladle_cpu_valid_at(&args[k], i);
      ladle_bit_set(LADLE_COL_VALIDITY_MUT(&concat_valid), i, v);
    }
    validity_from = &concat_valid;
  }
  ladle_status st = so_finish(&so, validity_from, out, err);
  ladle_column_release(&concat_valid);
  return st;
}
