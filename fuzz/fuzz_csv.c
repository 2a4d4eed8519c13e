/* fuzz_csv.c — libFuzzer target for the CSV reader: the first byte picks options
 * (header, quote, separator, dates, errors), the rest is the file, scanned and
 * executed through the public API. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ladle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setenv("LADLE_MMAP", "0", 1); /* read into exact-size buffers: ASan sees any overread */
  if (size == 0) return 0;
  uint8_t flags = data[0];
  int fd = memfd_create("ladle-fuzz", 0);
  if (fd < 0) return 0;
  if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
    close(fd);
    return 0;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  const char *paths[] = {path};
  ladle_csv_opts o = ladle_csv_opts_default();
  o.has_header = flags & 1;
  o.quote = (flags & 2) ? 0 : '"';
  o.separator = (flags & 4) ? '|' : ',';
  o.try_parse_dates = flags & 8;
  o.ignore_errors = flags & 16;
  o.truncate_ragged_lines = flags & 32;
  o.comment_prefix = (flags & 64) ? "#" : NULL;
  ladle_error err;
  ladle_plan *p = NULL;
  if (ladle_plan_scan_csv(1, paths, &o, &p, &err) == LADLE_OK) {
    ladle_engine_opts eo = {LADLE_DEVICE_CPU, 0, 1, 7, 0, NULL};
    ladle_engine *e;
    if (ladle_engine_create(&eo, &e, &err) == LADLE_OK) {
      ladle_result *r = NULL;
      if (ladle_engine_execute(e, p, &r, &err) == LADLE_OK) ladle_result_destroy(r);
      ladle_engine_destroy(e);
    }
    ladle_plan_destroy(p);
  }
  close(fd);
  return 0;
}
