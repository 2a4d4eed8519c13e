/* thrift.c — the thrift compact protocol, read-only, over a bounded buffer. Every
 * read checks the bytes left; a failure sets t->failed and the first message, and
 * later reads return zeros, so callers check once at the end of a struct. */
#include <stdio.h>

#include "parquet.h"

ladle_status ladle_thrift_fail(ladle_thrift *t, const char *problem) {
  if (!t->failed) {
    t->failed = true;
    ladle_err_set(t->err, LADLE_ECORRUPT, "%s: %s", t->what, problem);
  }
  t->p = t->end;
  return LADLE_ECORRUPT;
}

static uint64_t varint(ladle_thrift *t) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (t->p >= t->end) {
      ladle_thrift_fail(t, "truncated varint");
      return 0;
    }
    uint8_t b = *t->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  ladle_thrift_fail(t, "varint longer than 10 bytes");
  return 0;
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

int64_t ladle_thrift_int(ladle_thrift *t) {
  if (t->cur != 0 && t->cur != LADLE_TT_I16 && t->cur != LADLE_TT_I32 && t->cur != LADLE_TT_I64) {
    /* a field the format defines as an integer holds another type: reading it as
     * one would misread every byte after it */
    char why[96];
    snprintf(why, sizeof why, "an integer field holds compact type %d", t->cur);
    ladle_thrift_fail(t, why);
    return 0;
  }
  return unzigzag(varint(t));
}

bool ladle_thrift_field(ladle_thrift *t, int16_t *last_id, int16_t *id, int *type) {
  if (t->failed) return false;
  if (t->p >= t->end) {
    ladle_thrift_fail(t, "truncated struct");
    return false;
  }
  uint8_t b = *t->p++;
  *type = b & 0x0f;
  if (*type == LADLE_TT_STOP) return false;
  int delta = b >> 4;
  /* the id itself is no value of the field: not checked against its type */
  *id = (int16_t)(delta != 0 ? *last_id + delta : unzigzag(varint(t)));
  *last_id = *id;
  t->cur = *type;
  return !t->failed;
}

bool ladle_thrift_bool(ladle_thrift *t, int type) {
  if (type == LADLE_TT_TRUE) return true;
  if (type == LADLE_TT_FALSE) return false;
  /* a bool inside a list is a byte */
  if (t->p >= t->end) {
    ladle_thrift_fail(t, "truncated bool");
    return false;
  }
  return *t->p++ == 1;
}

const uint8_t *ladle_thrift_binary(ladle_thrift *t, int64_t *len) {
  uint64_t n = varint(t);
  if (t->failed || n > (uint64_t)(t->end - t->p)) {
    ladle_thrift_fail(t, "string or binary longer than the bytes left");
    *len = 0;
    return NULL;
  }
  const uint8_t *p = t->p;
  t->p += n;
  *len = (int64_t)n;
  return p;
}

int64_t ladle_thrift_list(ladle_thrift *t, int *elem_type) {
  if (t->p >= t->end) {
    ladle_thrift_fail(t, "truncated list");
    return 0;
  }
  uint8_t b = *t->p++;
  *elem_type = b & 0x0f;
  t->cur = *elem_type;
  uint64_t n = b >> 4;
  if (n == 15) n = varint(t);
  /* every element takes at least one byte: a longer list is a lie */
  if (t->failed || n > (uint64_t)(t->end - t->p)) {
    ladle_thrift_fail(t, "list longer than the bytes left");
    return 0;
  }
  return (int64_t)n;
}

void ladle_thrift_skip(ladle_thrift *t, int type) {
  if (t->failed) return;
  if (++t->depth > 64) {
    ladle_thrift_fail(t, "structures nested more than 64 deep");
    return;
  }
  switch (type) {
    case LADLE_TT_TRUE:
    case LADLE_TT_FALSE: break;
    case LADLE_TT_I8:
      if (t->p >= t->end) ladle_thrift_fail(t, "truncated byte");
      else t->p++;
      break;
    case LADLE_TT_I16:
    case LADLE_TT_I32:
    case LADLE_TT_I64: (void)varint(t); break;
    case LADLE_TT_DOUBLE:
      if (t->end - t->p < 8) ladle_thrift_fail(t, "truncated double");
      else t->p += 8;
      break;
    case LADLE_TT_BINARY: {
      int64_t len;
      (void)ladle_thrift_binary(t, &len);
      break;
    }
    case LADLE_TT_LIST:
    case LADLE_TT_SET: {
      int et;
      int64_t n = ladle_thrift_list(t, &et);
      for (int64_t i = 0; i < n && !t->failed; i++) {
        if (et == LADLE_TT_TRUE || et == LADLE_TT_FALSE) (void)ladle_thrift_bool(t, LADLE_TT_I8);
        else ladle_thrift_skip(t, et);
      }
      break;
    }
    case LADLE_TT_MAP: {
      uint64_t n = varint(t);
      if (n == 0) break;
      if (t->p >= t->end || n > (uint64_t)(t->end - t->p)) {
        ladle_thrift_fail(t, "map longer than the bytes left");
        break;
      }
      uint8_t kv = *t->p++;
      for (uint64_t i = 0; i < n && !t->failed; i++) {
        ladle_thrift_skip(t, kv >> 4);
        ladle_thrift_skip(t, kv & 0x0f);
      }
      break;
    }
    case LADLE_TT_STRUCT: {
      int16_t last = 0, id;
      int ft;
      while (ladle_thrift_field(t, &last, &id, &ft)) ladle_thrift_skip(t, ft);
      break;
    }
    default: ladle_thrift_fail(t, "unknown thrift type");
  }
  t->depth--;
}
