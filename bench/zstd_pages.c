/* zstd_pages.c — zstd level 3 (the writer's default) on Parquet-like page
 * bodies cut at several sizes: why ladle's writer ends data pages at about
 * 128 KiB (one zstd block). Build and run:
 *   cc -O2 bench/zstd_pages.c -lzstd -o /tmp/zstd_pages && /tmp/zstd_pages
 * Prints MB/s (input bytes) and the compressed/input ratio per data kind and
 * page size; the data are generated (xorshift), 64 MiB a kind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

enum { KINDS = 7 };
static const char *names[KINDS] = {"u32 ids < 1000",  "u32 ids < 60000", "u32 ids < 166666",
                                   "i64 timestamps",  "f64 3 decimals",  "f32 few values",
                                   "text (len+bytes)"};

static void fill(int kind, uint8_t *d, size_t bytes) {
  size_t pos = 0;
  switch (kind) {
    case 0:
    case 1:
    case 2: {
      uint32_t mod = kind == 0 ? 1000 : kind == 1 ? 60000 : 166666;
      for (; pos + 4 <= bytes; pos += 4) {
        uint32_t v = 1 + (uint32_t)(next() % mod);
        memcpy(d + pos, &v, 4);
      }
      break;
    }
    case 3:
      for (; pos + 8 <= bytes; pos += 8) {
        int64_t v = 789652009 + (int64_t)(next() % 784675694);
        memcpy(d + pos, &v, 8);
      }
      break;
    case 4:
      for (; pos + 8 <= bytes; pos += 8) {
        double v = 100.0 + (double)(next() % 1000000) / 1000.0;
        memcpy(d + pos, &v, 8);
      }
      break;
    case 5:
      for (; pos + 4 <= bytes; pos += 4) {
        float v = (float)((next() % 1000) / 7.0);
        memcpy(d + pos, &v, 4);
      }
      break;
    default:
      while (pos + 80 < bytes) {
        uint64_t s = next();
        int l = snprintf((char *)d + pos + 4, 72, "Movie %llu, The (%llu) user %llu",
                         (unsigned long long)(s % 60000), (unsigned long long)(1930 + s % 90),
                         (unsigned long long)((s >> 20) % 100000));
        uint32_t len = (uint32_t)l;
        memcpy(d + pos, &len, 4);
        pos += 4 + (size_t)l;
      }
      break;
  }
  if (pos < bytes) memset(d + pos, 0, bytes - pos);
}

int main(void) {
  const size_t total = (size_t)64 << 20;
  const size_t pages[] = {32768, 65536, 131008, 131072 + 200, 262144, 524288, 1048576};
  uint8_t *d = malloc(total);
  size_t cap = ZSTD_compressBound(1 << 20);
  uint8_t *out = malloc(cap);
  ZSTD_CCtx *cx = ZSTD_createCCtx();
  if (d == NULL || out == NULL || cx == NULL) return 1;
  printf("%-18s %9s %8s %6s\n", "data", "page", "MB/s", "ratio");
  for (int k = 0; k < KINDS; k++) {
    fill(k, d, total);
    for (size_t p = 0; p < sizeof pages / sizeof pages[0]; p++) {
      size_t page = pages[p], outb = 0, in = 0;
      double t0 = now_ms();
      for (size_t a = 0; a + page <= total; a += page, in += page)
        outb += ZSTD_compressCCtx(cx, out, cap, d + a, page, 3);
      double ms = now_ms() - t0;
      printf("%-18s %9zu %8.0f %6.3f\n", names[k], page, in / ms / 1e3, (double)outb / in);
    }
  }
  ZSTD_freeCCtx(cx);
  free(out);
  free(d);
  return 0;
}
