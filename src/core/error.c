/* error.c — status names, error messages, small string helpers and the trace
 * level (LADLE_TRACE). A message is formatted into the caller's ladle_error;
 * nothing is allocated. */
#include <stdio.h>
#include <time.h>

#include "core.h"

const char *ladle_status_name(ladle_status status) {
  switch (status) {
    case LADLE_OK:
      return "LADLE_OK";
    case LADLE_EINVAL:
      return "LADLE_EINVAL";
    case LADLE_ENOMEM:
      return "LADLE_ENOMEM";
    case LADLE_ENOTSUP:
      return "LADLE_ENOTSUP";
    case LADLE_ETYPE:
      return "LADLE_ETYPE";
    case LADLE_ENOCOL:
      return "LADLE_ENOCOL";
    case LADLE_ECOMPUTE:
      return "LADLE_ECOMPUTE";
    case LADLE_EIO:
      return "LADLE_EIO";
    case LADLE_ECORRUPT:
      return "LADLE_ECORRUPT";
    case LADLE_EDEVICE:
      return "LADLE_EDEVICE";
    case LADLE_ECOMM:
      return "LADLE_ECOMM";
    default:
      return "LADLE_E?";
  }
}

ladle_status ladle_err_set(ladle_error *err, ladle_status code, const char *fmt, ...) {
  if (err != NULL) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

ladle_status ladle_err_context(ladle_error *err, ladle_status code, const char *fmt, ...) {
  if (err == NULL) return code;
  char prefix[LADLE_ERROR_MESSAGE_MAX];
  char old[LADLE_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->message, sizeof old);
  old[sizeof old - 1] = '\0';
  /* truncation of long messages is intended */
  if (snprintf(err->message, sizeof err->message, "%s: %s", prefix, old) < 0)
    err->message[0] = '\0';
  err->code = code;
  return code;
}

char *ladle_strdup(const char *s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p != NULL) memcpy(p, s, n);
  return p;
}

void ladle_free(void *p) { free(p); }

void ladle_strbuf_printf(ladle_strbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) {
    b->failed = true;
    va_end(ap2);
    return;
  }
  if (b->len + (size_t)need + 1 > b->cap) {
    size_t cap = LADLE_MAX(b->cap * 2, b->len + (size_t)need + 256);
    char *d = realloc(b->data, cap);
    if (d == NULL) {
      b->failed = true;
      va_end(ap2);
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)need;
}

int ladle_trace_level(void) {
  static _Atomic int level = -1;
  int l = atomic_load_explicit(&level, memory_order_relaxed);
  if (l < 0) {
    const char *v = getenv("LADLE_TRACE");
    l = v == NULL || *v == '\0' ? 0 : atoi(v);
    if (l < 0) l = 0;
    if (l == 0 && v != NULL && *v != '\0' && strcmp(v, "0") != 0) l = 1; /* "yes", "on" */
    atomic_store_explicit(&level, l, memory_order_relaxed);
  }
  return l;
}

double ladle_clock_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void ladle_trace_phase(const char *what, int64_t rows, double t0_ms) {
  fprintf(stderr, "ladle:     . %s rows=%lld %.2f ms\n", what, (long long)rows,
          ladle_clock_ms() - t0_ms);
}
