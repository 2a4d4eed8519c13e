/* loader.c — opens a backend built as its own shared object (the CUDA one) on
 * first use, so that `import ladle` and CPU engines never load the CUDA
 * runtime or touch the driver. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "backend.h"

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static void *cuda_handle; /* kept open for the life of the process */

static void *try_open(const char *path, char *why, size_t cap) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *e = dlerror();
    snprintf(why, cap, "%s", e != NULL ? e : path);
  }
  return h;
}

/* libladle_cuda.so, opened once (NULL and the reason in why when it cannot be) */
static void *cuda_lib(char *why, size_t cap) {
  const char *lib = "libladle_cuda.so";
  char path[4096];
  pthread_mutex_lock(&open_mu);
  void *h = cuda_handle;
  if (h == NULL) {
    const char *env = getenv("LADLE_CUDA_LIB");
    if (env != NULL && *env != '\0') {
      h = try_open(env, why, cap);
    } else {
      if (ladle_own_dir(path, sizeof path) && strlen(path) + strlen(lib) < sizeof path) {
        strcat(path, lib);
        h = try_open(path, why, cap);
      }
      if (h == NULL) h = try_open(lib, why, cap);
    }
    cuda_handle = h;
  }
  pthread_mutex_unlock(&open_mu);
  return h;
}

static _Atomic bool cuda_touched; /* the driver was asked for something */

/* Symbol sym of libladle_cuda.so (loaded on first use) into *fn, the
 * driver then counted as touched; else the reason in err. */
static ladle_status cuda_sym(const char *sym, void **fn, ladle_error *err) {
  char why[512] = "";
  void *h = cuda_lib(why, sizeof why);
  if (h == NULL)
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "device 'cuda': ladle's CUDA backend could not be loaded (%s); it is "
                         "built when nvcc is on PATH at build time (set LADLE_CUDA_LIB to its "
                         "path to choose one)",
                         why);
  *fn = dlsym(h, sym);
  if (*fn == NULL)
    return ladle_err_set(err, LADLE_EDEVICE, "device 'cuda': libladle_cuda.so has no %s", sym);
  cuda_touched = true;
  return LADLE_OK;
}

ladle_status ladle_backend_open(const char *name, int device_id, const ladle_backend **out,
                                const ladle_allocator **alloc, void **stream, ladle_error *err) {
  if (name == NULL || strcmp(name, "cuda") != 0)
    return ladle_err_set(err, LADLE_EINVAL, "unknown backend '%s' (there is 'cpu' and 'cuda')",
                         name != NULL ? name : "(null)");
  if (device_id < 0)
    return ladle_err_set(err, LADLE_EINVAL, "device cuda:%d: the ordinal must be 0 or more",
                         device_id);
  ladle_backend_open_fn fn;
  LADLE_RETURN_NOT_OK(cuda_sym(LADLE_BACKEND_OPEN_SYMBOL, (void **)&fn, err));
  return fn(LADLE_BACKEND_ABI, sizeof(ladle_backend), device_id, out, alloc, stream, err);
}

ladle_status ladle_cuda_devices(ladle_device_info *out, size_t cap, size_t *count,
                                ladle_error *err) {
  *count = 0;
  ladle_backend_devices_fn fn;
  LADLE_RETURN_NOT_OK(cuda_sym(LADLE_BACKEND_DEVICES_SYMBOL, (void **)&fn, err));
  return fn(LADLE_BACKEND_ABI, out, cap, count, err);
}

bool ladle_cuda_initialized(void) { return cuda_touched; }
