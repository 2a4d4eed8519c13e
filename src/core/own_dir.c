/* own_dir.c — where ladle's own object lives: separately built libraries
 * (the CUDA backend, the MPI shim) are looked for beside it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

#include "core.h"

bool ladle_own_dir(char *buf, size_t cap) {
  Dl_info info;
  if (dladdr((void *)(uintptr_t)&ladle_own_dir, &info) == 0 || info.dli_fname == NULL) return false;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash == NULL) return false;
  size_t n = (size_t)(slash - info.dli_fname) + 1;
  if (n >= cap) return false;
  memcpy(buf, info.dli_fname, n);
  buf[n] = '\0';
  return true;
}
