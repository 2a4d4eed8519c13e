/* utf8_reference.h — a UTF-8 validator for tests and fuzz targets, written
 * from Unicode's Table 3-7 apart from ladle's own (src/core/utf8.c), so that
 * each checks the other. */
#ifndef LADLE_TESTS_UTF8_REFERENCE_H
#define LADLE_TESTS_UTF8_REFERENCE_H

#include <stdint.h>

/* A reference validator written from Unicode's Table 3-7 independently of
 * ladle's: decode each sequence to its code point and check its range, its
 * shortest form and that it is not a surrogate. */
static inline int64_t utf8_reference(const uint8_t *s, int64_t n) {
  int64_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    int len = c < 0x80             ? 1
              : (c & 0xE0) == 0xC0 ? 2
              : (c & 0xF0) == 0xE0 ? 3
              : (c & 0xF8) == 0xF0 ? 4
                                   : 0;
    if (len == 0 || i + len > n) return i;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (int k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (len > 1 && cp < min_cp[len]) return i; /* overlong */
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return -1;
}

#endif
