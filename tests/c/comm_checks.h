/* comm_checks.h — the collective checks every communicator of more than one
 * rank must pass, run by each rank on its own communicator: a thread of the
 * local communicator in test_dist.c, a process under mpirun in
 * mpi_comm_check.c. Every rank draws the same sizes from the same seed, so it
 * knows what each other rank sends it, and every byte is a function of
 * (collective, sender, receiver, offset), so every byte received is checked.
 * Failures are counted per rank (cc_ctx.fails) and printed with the rank. */
#ifndef LADLE_TEST_COMM_CHECKS_H
#define LADLE_TEST_COMM_CHECKS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/comm.h"

typedef struct cc_ctx {
  ladle_comm *c;
  ladle_error err; /* this rank's (threads do not share the harness's err_) */
  int fails;
} cc_ctx;

static const ladle_comm_place CC_HOST = {LADLE_DEVICE_CPU, 0, NULL};

#define CC_CHECK(x, cond)                                                                       \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      fprintf(stderr, "  rank %d: %s:%d: CHECK failed: %s\n", (x)->c->rank, __FILE__, __LINE__, \
              #cond);                                                                           \
      (x)->fails++;                                                                             \
    }                                                                                           \
  } while (0)

#define CC_OK(x, expr)                                                                           \
  do {                                                                                           \
    ladle_status s_ = (expr);                                                                    \
    if (s_ != LADLE_OK) {                                                                        \
      fprintf(stderr, "  rank %d: %s:%d: %s failed: %s: %s\n", (x)->c->rank, __FILE__, __LINE__, \
              #expr, ladle_status_name(s_), (x)->err.message);                                   \
      (x)->fails++;                                                                              \
    }                                                                                            \
  } while (0)

/* The byte rank `from` sends rank `to` at offset i of collective k. */
static inline unsigned char cc_byte(int k, int from, int to, size_t i) {
  return (unsigned char)(k * 131 + from * 31 + to * 7 + (int)(i * 13) + (int)(i >> 9));
}

/* A small generator every rank seeds the same way (xorshift64). */
static inline uint64_t cc_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Rank r's `bytes` bytes to everyone, in rank order. */
static inline void cc_allgather(cc_ctx *x, int k, size_t bytes) {
  ladle_comm *c = x->c;
  int n = c->size;
  unsigned char *in = malloc(bytes + 1), *out = malloc((size_t)n * bytes + 1);
  for (size_t i = 0; i < bytes; i++) in[i] = cc_byte(k, c->rank, -1, i);
  CC_OK(x, c->vt->allgather(c, in, bytes, out, CC_HOST, &x->err));
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < bytes; i++)
      if (out[(size_t)r * bytes + i] != cc_byte(k, r, -1, i)) {
        CC_CHECK(x, !"allgather: a byte differs");
        r = n;
        break;
      }
  free(in);
  free(out);
}

/* Uneven counts (rank 1 sends nothing) placed with gaps of 3 bytes, which
 * must stay untouched. */
static inline void cc_allgatherv(cc_ctx *x, int k, size_t scale) {
  ladle_comm *c = x->c;
  int n = c->size;
  size_t *counts = malloc((size_t)n * sizeof *counts), *displs = malloc((size_t)n * sizeof *displs);
  size_t total = 0;
  for (int r = 0; r < n; r++) {
    counts[r] = r == 1 ? 0 : scale * (size_t)(r + 1) + (size_t)r * 7;
    displs[r] = total + 3;
    total += counts[r] + 3;
  }
  unsigned char *in = malloc(counts[c->rank] + 1), *out = malloc(total + 1);
  memset(out, 0xEE, total);
  for (size_t i = 0; i < counts[c->rank]; i++) in[i] = cc_byte(k, c->rank, -1, i);
  CC_OK(x, c->vt->allgatherv(c, in, counts, displs, out, CC_HOST, &x->err));
  size_t bad = 0;
  for (int r = 0; r < n; r++) {
    for (size_t i = 0; i < counts[r]; i++) bad += out[displs[r] + i] != cc_byte(k, r, -1, i);
    for (size_t i = 1; i <= 3; i++) bad += out[displs[r] - i] != 0xEE;
  }
  CC_CHECK(x, bad == 0);
  free(in);
  free(out);
  free(counts);
  free(displs);
}

/* A random count matrix (some zeros, up to max bytes a pair) drawn from seed
 * by every rank alike; sends laid out in reverse rank order, receives with a
 * gap, every received byte checked and the gaps untouched. */
static inline void cc_alltoallv(cc_ctx *x, int k, uint64_t seed, size_t max) {
  ladle_comm *c = x->c;
  int n = c->size, me = c->rank;
  size_t *m = malloc((size_t)n * (size_t)n * sizeof *m); /* m[from * n + to] */
  for (int i = 0; i < n * n; i++) {
    uint64_t v = cc_rand(&seed);
    m[i] = v % 5 == 0 ? 0 : (size_t)(v >> 8) % (max + 1);
  }
  size_t *sc = malloc(4 * (size_t)n * sizeof *sc), *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
  size_t stot = 0, rtot = 0;
  for (int r = n - 1; r >= 0; r--) {
    sc[r] = m[(size_t)me * n + r];
    sd[r] = stot;
    stot += sc[r];
  }
  for (int r = 0; r < n; r++) {
    rc[r] = m[(size_t)r * n + me];
    rd[r] = rtot + 1;
    rtot += rc[r] + 1;
  }
  unsigned char *in = malloc(stot + 1), *out = malloc(rtot + 1);
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < sc[r]; i++) in[sd[r] + i] = cc_byte(k, me, r, i);
  memset(out, 0xEE, rtot);
  CC_OK(x, c->vt->alltoallv(c, in, sc, sd, out, rc, rd, CC_HOST, &x->err));
  size_t bad = 0;
  for (int r = 0; r < n; r++) {
    for (size_t i = 0; i < rc[r]; i++) bad += out[rd[r] + i] != cc_byte(k, r, me, i);
    bad += out[rd[r] - 1] != 0xEE;
  }
  CC_CHECK(x, bad == 0);
  if (bad != 0) fprintf(stderr, "  rank %d: alltoallv: %zu bytes wrong\n", me, bad);
  free(in);
  free(out);
  free(sc);
  free(m);
}

/* root's bytes into every rank's buffer. */
static inline void cc_bcast(cc_ctx *x, int k, int root, size_t bytes) {
  ladle_comm *c = x->c;
  unsigned char *buf = malloc(bytes + 1);
  for (size_t i = 0; i < bytes; i++) buf[i] = c->rank == root ? cc_byte(k, root, -1, i) : 0;
  CC_OK(x, c->vt->bcast(c, buf, bytes, root, CC_HOST, &x->err));
  size_t bad = 0;
  for (size_t i = 0; i < bytes; i++) bad += buf[i] != cc_byte(k, root, -1, i);
  CC_CHECK(x, bad == 0);
  free(buf);
}

/* Each type and operation over n values, out of place and in place; the
 * values are exact in a double so every order of summing agrees. */
static inline void cc_allreduce(cc_ctx *x, size_t n) {
  ladle_comm *c = x->c;
  int size = c->size, me = c->rank;
  int64_t *in = malloc(n * 8 + 8), *out = malloc(n * 8 + 8), *want = malloc(n * 8 + 8);
  for (int t = 0; t < LADLE_COMM_TYPE_COUNT_; t++)
    for (int op = 0; op < LADLE_COMM_OP_COUNT_; op++)
      for (int in_place = 0; in_place < 2; in_place++) {
        for (size_t i = 0; i < n; i++) {
          int64_t w = 0;
          for (int r = 0; r < size; r++) {
            int64_t sv = (int64_t)((i * 37 + (size_t)r * 11) % 101) - 50; /* -50..50 */
            uint64_t uv = ((uint64_t)1 << 63) + (uint64_t)((i * 7 + (size_t)r * 13) % 29);
            double dv = (double)sv * 0.5;
            union {
              int64_t i;
              uint64_t u;
              double d;
            } v, acc;
            if (t == LADLE_COMM_I64) v.i = sv;
            if (t == LADLE_COMM_U64) v.u = op == LADLE_COMM_SUM ? uv >> 8 : uv;
            if (t == LADLE_COMM_F64) v.d = dv;
            if (r == me) memcpy(&in[i], &v, 8);
            memcpy(&acc, &w, 8);
            if (r == 0) {
              acc = v;
            } else if (t == LADLE_COMM_I64) {
              acc.i = op == LADLE_COMM_SUM   ? acc.i + v.i
                      : op == LADLE_COMM_MIN ? (v.i < acc.i ? v.i : acc.i)
                                             : (v.i > acc.i ? v.i : acc.i);
            } else if (t == LADLE_COMM_U64) {
              acc.u = op == LADLE_COMM_SUM   ? acc.u + v.u
                      : op == LADLE_COMM_MIN ? (v.u < acc.u ? v.u : acc.u)
                                             : (v.u > acc.u ? v.u : acc.u);
            } else {
              acc.d = op == LADLE_COMM_SUM   ? acc.d + v.d
                      : op == LADLE_COMM_MIN ? (v.d < acc.d ? v.d : acc.d)
                                             : (v.d > acc.d ? v.d : acc.d);
            }
            memcpy(&w, &acc, 8);
          }
          want[i] = w;
        }
        void *dst = in_place ? in : out;
        CC_OK(x, c->vt->allreduce(c, in, dst, n, (ladle_comm_type)t, (ladle_comm_op)op, CC_HOST,
                                  &x->err));
        if (memcmp(dst, want, n * 8) != 0) {
          fprintf(stderr, "  rank %d: allreduce type %d op %d in place %d differs\n", me, t, op,
                  in_place);
          x->fails++;
        }
      }
  free(in);
  free(out);
  free(want);
}

/* Device buffers are refused by name, without a collective. */
static inline void cc_device_refused(cc_ctx *x) {
  ladle_comm *c = x->c;
  ladle_comm_place dev = {LADLE_DEVICE_CUDA, 0, NULL};
  int64_t v = 1, out[64];
  CC_CHECK(x, c->vt->allgather(c, &v, 8, out, dev, &x->err) == LADLE_ENOTSUP);
  CC_CHECK(x, strstr(x->err.message, "device type 2") != NULL);
  CC_CHECK(x, strstr(x->err.message, "allgather") != NULL);
  CC_CHECK(x, c->vt->allreduce(c, &v, &v, 1, LADLE_COMM_I64, LADLE_COMM_SUM, dev, &x->err) ==
                  LADLE_ENOTSUP);
}

/* Every check above at small sizes (scale: bytes per rank, roughly). */
static inline void cc_all(cc_ctx *x, size_t scale) {
  ladle_comm *c = x->c;
  cc_allgather(x, 1, scale);
  cc_allgather(x, 2, 0);
  cc_allgatherv(x, 3, scale);
  cc_alltoallv(x, 4, 12345, scale);
  cc_alltoallv(x, 5, 999, 3 * scale);
  cc_bcast(x, 6, c->size - 1, scale);
  cc_bcast(x, 7, 0, 0);
  cc_allreduce(x, 5);
  cc_allreduce(x, scale / 8 + 1);
  CC_OK(x, c->vt->barrier(c, &x->err));
  cc_device_refused(x);
  CC_OK(x, c->vt->barrier(c, &x->err));
}

#endif
