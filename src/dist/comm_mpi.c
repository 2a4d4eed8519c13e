/* comm_mpi.c — the MPI communicator: the table of comm.h over
 * libladle_mpi.so (src/dist/mpi/shim.c), which libladle opens with dlopen on
 * the first ladle_comm_create_mpi and keeps open for the life of the process.
 * Nothing here includes mpi.h, so libladle and the Python module build and
 * load where no MPI is installed; only the shim is linked against one.
 *
 * The library is opened RTLD_GLOBAL: Open MPI loads its components (mca_*.so)
 * with dlopen and they expect libmpi's and libopen-pal's symbols to be global.
 * Host buffers only: a device place is refused by name. A rank whose query
 * fails tells the others through the shim's notify (c->fail), so they give
 * up within a poll rather than at the timeout, and every rank goes on after
 * the failed query through the shim's recover (c->recover). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "comm.h"
#include "mpi/shim.h"

static pthread_mutex_t mpi_open_mu = PTHREAD_MUTEX_INITIALIZER;
static const ladle_mpi_shim *mpi_shim; /* from the library kept open; under mpi_open_mu */

_Static_assert((int)LADLE_COMM_I64 == (int)LADLE_MPI_I64 &&
                   (int)LADLE_COMM_U64 == (int)LADLE_MPI_U64 &&
                   (int)LADLE_COMM_F64 == (int)LADLE_MPI_F64,
               "allreduce types match the shim's");
_Static_assert((int)LADLE_COMM_SUM == (int)LADLE_MPI_SUM &&
                   (int)LADLE_COMM_MIN == (int)LADLE_MPI_MIN &&
                   (int)LADLE_COMM_MAX == (int)LADLE_MPI_MAX,
               "allreduce operations match the shim's");

typedef struct mpi_comm {
  const ladle_mpi_shim *shim;
  ladle_mpi_handle *h; /* owned: free_handle on destroy */
} mpi_comm;

/* dlopen(path) with RTLD_GLOBAL; the reason into why (appended) when it fails. */
static void *try_open(const char *path, char *why, size_t cap) {
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (h == NULL) {
    const char *e = dlerror();
    size_t used = strlen(why);
    if (used + 1 < cap)
      snprintf(why + used, cap - used, "%s%s", used > 0 ? "; " : "", e != NULL ? e : path);
  }
  return h;
}

/* The shim's table, opening libladle_mpi.so on first use: LADLE_MPI_LIB when
 * set, else beside this object, else by name through the loader's path. A
 * failure is not remembered (the next call tries again). */
static ladle_status mpi_shim_load(const ladle_mpi_shim **out, ladle_error *err) {
  const char *lib = "libladle_mpi.so";
  char why[1024] = "", path[4096];
  pthread_mutex_lock(&mpi_open_mu);
  if (mpi_shim != NULL) {
    *out = mpi_shim;
    pthread_mutex_unlock(&mpi_open_mu);
    return LADLE_OK;
  }
  void *h = NULL;
  const char *env = getenv("LADLE_MPI_LIB");
  if (env != NULL && *env != '\0') {
    h = try_open(env, why, sizeof why);
  } else {
    if (ladle_own_dir(path, sizeof path) && strlen(path) + strlen(lib) < sizeof path) {
      strcat(path, lib);
      h = try_open(path, why, sizeof why);
    }
    if (h == NULL) h = try_open(lib, why, sizeof why);
  }
  if (h == NULL) {
    pthread_mutex_unlock(&mpi_open_mu);
    return ladle_err_set(err, LADLE_ENOTSUP,
                         "communicator 'mpi': ladle's MPI library could not be loaded (%s); it "
                         "is built when CMake finds MPI (libopenmpi-dev), and LADLE_MPI_LIB "
                         "chooses one by path",
                         why);
  }
  ladle_mpi_shim_get_fn get = (ladle_mpi_shim_get_fn)(uintptr_t)dlsym(h, LADLE_MPI_SHIM_SYMBOL);
  const ladle_mpi_shim *shim = get != NULL ? get(LADLE_MPI_SHIM_ABI) : NULL;
  if (shim != NULL &&
      (shim->abi != LADLE_MPI_SHIM_ABI || shim->notify == NULL || shim->recover == NULL))
    shim = NULL;
  if (shim == NULL) {
    pthread_mutex_unlock(&mpi_open_mu);
    dlclose(h);
    return ladle_err_set(
        err, LADLE_ENOTSUP, "communicator 'mpi': the MPI library %s %s (ladle wants ABI %d)",
        env != NULL && *env != '\0' ? env : lib,
        get == NULL ? "has no " LADLE_MPI_SHIM_SYMBOL : "is of another ABI", LADLE_MPI_SHIM_ABI);
  }
  mpi_shim = shim; /* the library stays open: MPI is finalised at exit, from it */
  *out = shim;
  pthread_mutex_unlock(&mpi_open_mu);
  return LADLE_OK;
}

/* A shim status as a ladle one, the shim's message in err. */
static ladle_status from_shim(int st, const char *msg, ladle_error *err) {
  switch (st) {
    case LADLE_MPI_OK:
      return LADLE_OK;
    case LADLE_MPI_EINVAL:
      return ladle_err_set(err, LADLE_EINVAL, "%s", msg);
    case LADLE_MPI_ENOMEM:
      return ladle_err_set(err, LADLE_ENOMEM, "%s", msg);
    default:
      return ladle_err_set(err, LADLE_ECOMM, "%s", msg);
  }
}

/* LADLE_OK for host buffers; a device place is refused, naming op. */
static ladle_status host_only(const ladle_comm *c, const char *op, ladle_comm_place where,
                              ladle_error *err) {
  if (where.device == LADLE_DEVICE_CPU || where.device == 0) return LADLE_OK;
  return ladle_err_set(err, LADLE_ENOTSUP,
                       "rank %d of %d: MPI %s: buffers on device type %d (id %d) are not "
                       "supported, the MPI communicator takes host buffers only",
                       c->rank, c->size, op, (int)where.device, where.device_id);
}

static ladle_status mpi_allgatherv(ladle_comm *c, const void *in, const size_t *counts,
                                   const size_t *displs, void *out, ladle_comm_place where,
                                   ladle_error *err) {
  LADLE_RETURN_NOT_OK(host_only(c, "allgatherv", where, err));
  mpi_comm *m = c->impl;
  char msg[LADLE_ERROR_MESSAGE_MAX];
  return from_shim(m->shim->allgatherv(m->h, in, counts, displs, out, msg, sizeof msg), msg, err);
}

/* allgather is allgatherv with equal counts at r * bytes. */
static ladle_status mpi_allgather(ladle_comm *c, const void *in, size_t bytes, void *out,
                                  ladle_comm_place where, ladle_error *err) {
  LADLE_RETURN_NOT_OK(host_only(c, "allgather", where, err));
  size_t *v = malloc(2 * (size_t)c->size * sizeof *v);
  if (v == NULL) return LADLE_OOM(err, "MPI allgather's counts");
  for (int r = 0; r < c->size; r++) {
    v[r] = bytes;
    v[c->size + r] = (size_t)r * bytes;
  }
  ladle_status st = mpi_allgatherv(c, in, v, v + c->size, out, where, err);
  free(v);
  return st;
}

static ladle_status mpi_alltoallv(ladle_comm *c, const void *in, const size_t *send_counts,
                                  const size_t *send_displs, void *out, const size_t *recv_counts,
                                  const size_t *recv_displs, ladle_comm_place where,
                                  ladle_error *err) {
  LADLE_RETURN_NOT_OK(host_only(c, "alltoallv", where, err));
  mpi_comm *m = c->impl;
  char msg[LADLE_ERROR_MESSAGE_MAX];
  return from_shim(m->shim->alltoallv(m->h, in, send_counts, send_displs, out, recv_counts,
                                      recv_displs, msg, sizeof msg),
                   msg, err);
}

static ladle_status mpi_bcast(ladle_comm *c, void *buf, size_t bytes, int root,
                              ladle_comm_place where, ladle_error *err) {
  LADLE_RETURN_NOT_OK(host_only(c, "bcast", where, err));
  mpi_comm *m = c->impl;
  char msg[LADLE_ERROR_MESSAGE_MAX];
  return from_shim(m->shim->bcast(m->h, buf, bytes, root, msg, sizeof msg), msg, err);
}

static ladle_status mpi_allreduce(ladle_comm *c, const void *in, void *out, size_t n,
                                  ladle_comm_type type, ladle_comm_op op, ladle_comm_place where,
                                  ladle_error *err) {
  LADLE_RETURN_NOT_OK(host_only(c, "allreduce", where, err));
  mpi_comm *m = c->impl;
  char msg[LADLE_ERROR_MESSAGE_MAX];
  return from_shim(m->shim->allreduce(m->h, in, out, n, (int)type, (int)op, msg, sizeof msg), msg,
                   err);
}

static ladle_status mpi_barrier(ladle_comm *c, ladle_error *err) {
  mpi_comm *m = c->impl;
  char msg[LADLE_ERROR_MESSAGE_MAX];
  return from_shim(m->shim->barrier(m->h, msg, sizeof msg), msg, err);
}

/* c->fail: the shim tells every other rank and breaks this handle until
 * recover (within min(timeout, 2 s); a failure to tell is not reported
 * further). */
static void mpi_give_up(ladle_comm *c, const char *why) {
  mpi_comm *m = c->impl;
  char msg[LADLE_ERROR_MESSAGE_MAX];
  m->shim->notify(m->h, why, msg, sizeof msg);
}

/* c->recover: the shim's new epoch (local; refused once MPI is dead). */
static ladle_status mpi_recover(ladle_comm *c, ladle_error *err) {
  mpi_comm *m = c->impl;
  char msg[LADLE_ERROR_MESSAGE_MAX];
  return from_shim(m->shim->recover(m->h, msg, sizeof msg), msg, err);
}

static void mpi_destroy(ladle_comm *c) {
  mpi_comm *m = c->impl;
  m->shim->free_handle(m->h);
  free(m);
  free(c);
}

static const ladle_comm_vtable mpi_vt = {"mpi",     mpi_allgather, mpi_allgatherv, mpi_alltoallv,
                                         mpi_bcast, mpi_allreduce, mpi_barrier,    mpi_destroy};

ladle_status ladle_comm_create_mpi(double timeout_s, ladle_comm **out_comm, ladle_error *err) {
  if (out_comm == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "ladle_comm_create_mpi: no out_comm");
  *out_comm = NULL;
  if (!(timeout_s >= 0))
    return ladle_err_set(err, LADLE_EINVAL, "ladle_comm_create_mpi: timeout %g s is negative",
                         timeout_s);
  const ladle_mpi_shim *shim = NULL;
  LADLE_RETURN_NOT_OK(mpi_shim_load(&shim, err));
  ladle_comm *c = calloc(1, sizeof *c);
  mpi_comm *m = calloc(1, sizeof *m);
  if (c == NULL || m == NULL) {
    free(c);
    free(m);
    return LADLE_OOM(err, "MPI communicator");
  }
  char msg[LADLE_ERROR_MESSAGE_MAX];
  ladle_mpi_info info;
  int st = shim->init(timeout_s > 0 ? timeout_s : 600, &m->h, &info, msg, sizeof msg);
  if (st != LADLE_MPI_OK) {
    free(c);
    free(m);
    ladle_status code = st == LADLE_MPI_ENOMEM   ? LADLE_ENOMEM
                        : st == LADLE_MPI_EINVAL ? LADLE_EINVAL
                                                 : LADLE_ECOMM;
    return ladle_err_set(err, code, "communicator 'mpi': %s", msg);
  }
  m->shim = shim;
  c->vt = &mpi_vt;
  c->rank = info.rank;
  c->size = info.size;
  c->impl = m;
  c->fail = mpi_give_up;
  c->recover = mpi_recover;
  *out_comm = c;
  return LADLE_OK;
}
