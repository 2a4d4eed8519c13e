/* hash.c — ladle's 64-bit byte hash: 8 bytes a step through a multiply-xor
 * mixer, with the length folded in. Not Polars' hash; stable across runs. */
#include "core.h"

uint64_t ladle_hash_bytes(const void *data, size_t len, uint64_t seed) {
  const uint8_t *p = data;
  uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ ladle_hash_mix(w)) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  for (size_t k = 0; i + k < len; k++) tail |= (uint64_t)p[i + k] << (8 * k);
  h ^= ladle_hash_mix(tail ^ 0x2545f4914f6cdd1dULL);
  return ladle_hash_mix(h);
}
