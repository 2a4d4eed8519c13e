/* utf8.c — UTF-8 validation, the one check every reader runs before bytes
 * become a String column (a Polars String must be valid UTF-8: Polars raises on
 * invalid bytes, and hands them on unchecked when they come from elsewhere).
 *
 * Valid means the Unicode definition (Table 3-7): no overlong forms (C0, C1,
 * E0 80..9F, F0 80..8F), no surrogates (ED A0..BF), nothing past U+10FFFF
 * (F4 90.., F5..FF), no stray continuation byte, no sequence cut off by the
 * end of the buffer. ASCII runs go 32 bytes a step as four 8-byte words; only
 * the bytes around a non-ASCII byte are decoded one sequence at a time.
 */
#include "core.h"

#define HIGH_BITS 0x8080808080808080ULL

static inline uint64_t load64(const uint8_t *p) {
  uint64_t w;
  memcpy(&w, p, 8);
  return w;
}

int64_t ladle_ascii_prefix(const uint8_t *s, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    if ((load64(s + i) | load64(s + i + 8) | load64(s + i + 16) | load64(s + i + 24)) & HIGH_BITS)
      break;
  for (; i + 8 <= n; i += 8)
    if (load64(s + i) & HIGH_BITS) break;
  while (i < n && s[i] < 0x80) i++;
  return i;
}

/* Is c a continuation byte (10xxxxxx)? */
static inline bool cont(uint8_t c) { return (c & 0xC0) == 0x80; }

int64_t ladle_utf8_check(const uint8_t *s, int64_t n) {
  int64_t i = 0;
  for (;;) {
    i += ladle_ascii_prefix(s + i, n - i);
    /* decode non-ASCII sequences, and the short ASCII runs between them (text
     * with accents every few letters), until 8 ASCII bytes in a row */
    while (i < n) {
      uint8_t c = s[i];
      if (c < 0x80) {
        if (n - i >= 8 && !(load64(s + i) & HIGH_BITS)) break; /* a long run: word by word */
        i++;
        continue;
      }
      int64_t left = n - i;
      if (c < 0xC2) return i; /* a stray continuation byte, or an overlong lead (C0, C1) */
      if (c < 0xE0) {
        if (left < 2 || !cont(s[i + 1])) return i;
        i += 2;
      } else if (c < 0xF0) {
        if (left < 3 || !cont(s[i + 1]) || !cont(s[i + 2])) return i;
        if (c == 0xE0 && s[i + 1] < 0xA0) return i; /* overlong */
        if (c == 0xED && s[i + 1] > 0x9F) return i; /* a surrogate, U+D800..DFFF */
        i += 3;
      } else if (c < 0xF5) {
        if (left < 4 || !cont(s[i + 1]) || !cont(s[i + 2]) || !cont(s[i + 3])) return i;
        if (c == 0xF0 && s[i + 1] < 0x90) return i; /* overlong */
        if (c == 0xF4 && s[i + 1] > 0x8F) return i; /* past U+10FFFF */
        i += 4;
      } else {
        return i; /* F5..FF never occur */
      }
    }
    if (i >= n) return -1;
  }
}

int64_t ladle_utf8_check_strings(const uint8_t *chars, const int64_t *offsets, int64_t n) {
  if (n <= 0) return -1;
  const uint8_t *base = chars + offsets[0];
  int64_t len = offsets[n] - offsets[0];
  int64_t a = ladle_ascii_prefix(base, len);
  if (a == len) return -1;
  /* the concatenation is valid, and no string starts inside a character (at a
   * continuation byte): then every string is whole characters */
  bool ok = ladle_utf8_check(base + a, len - a) < 0;
  for (int64_t i = 1; ok && i < n; i++)
    if (offsets[i] < offsets[n] && offsets[i] >= offsets[0] + a && cont(chars[offsets[i]]))
      ok = false;
  if (ok) return -1;
  /* find the first invalid string, string by string (only on failure) */
  for (int64_t i = 0; i < n; i++)
    if (ladle_utf8_check(chars + offsets[i], offsets[i + 1] - offsets[i]) >= 0) return i;
  return -1; /* not reached: a failure above is always some string's */
}
