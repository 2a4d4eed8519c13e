/* test_dist.c — the communicator table's one-rank implementation: every
 * collective a copy into the output, the counts checked, device buffers only
 * through the copy a backend supplies. */
#include "dist/comm.h"
#include "harness.h"

static const ladle_comm_place HOST = {LADLE_DEVICE_CPU, 0, NULL};

TEST(self_collectives_are_copies) {
  ladle_comm *c;
  CHECK_OK(ladle_comm_self_create(NULL, &c, &err_));
  CHECK_EQ_I(c->rank, 0);
  CHECK_EQ_I(c->size, 1);
  int64_t in[4] = {5, -7, 9, 11}, out[4] = {0};
  CHECK_OK(c->vt->allgather(c, in, sizeof in, out, HOST, &err_));
  CHECK(memcmp(in, out, sizeof in) == 0);
  char buf[16] = "abcdefgh", got[16] = {0};
  size_t cnt = 5, disp = 3;
  CHECK_OK(c->vt->allgatherv(c, buf, &cnt, &disp, got, HOST, &err_));
  CHECK(memcmp(got + 3, "abcde", 5) == 0 && got[2] == 0 && got[8] == 0);
  size_t sc = 4, sd = 2, rc = 4, rd = 1;
  memset(got, 0, sizeof got);
  CHECK_OK(c->vt->alltoallv(c, buf, &sc, &sd, got, &rc, &rd, HOST, &err_));
  CHECK(memcmp(got + 1, "cdef", 4) == 0 && got[0] == 0 && got[5] == 0);
  /* the counts of one rank's send and receive must agree */
  rc = 3;
  CHECK(c->vt->alltoallv(c, buf, &sc, &sd, got, &rc, &rd, HOST, &err_) == LADLE_EINVAL);
  CHECK(strstr(err_.message, "4 bytes sent to itself, 3 expected") != NULL);
  CHECK_OK(c->vt->bcast(c, buf, 8, 0, HOST, &err_));
  CHECK(c->vt->bcast(c, buf, 8, 1, HOST, &err_) == LADLE_EINVAL);
  CHECK(strstr(err_.message, "rank 1") != NULL);
  double d[3] = {1.5, -2, 3}, dout[3];
  CHECK_OK(c->vt->allreduce(c, d, dout, 3, LADLE_COMM_F64, LADLE_COMM_SUM, HOST, &err_));
  CHECK(dout[0] == 1.5 && dout[1] == -2 && dout[2] == 3);
  CHECK_OK(c->vt->allreduce(c, in, in, 4, LADLE_COMM_I64, LADLE_COMM_MAX, HOST, &err_));
  CHECK(in[1] == -7);
  CHECK(c->vt->allreduce(c, in, out, 4, (ladle_comm_type)99, LADLE_COMM_SUM, HOST, &err_) ==
        LADLE_EINVAL);
  CHECK_OK(c->vt->barrier(c, &err_));
  /* device buffers without a device copy: refused by name */
  ladle_comm_place dev = {LADLE_DEVICE_CUDA, 0, NULL};
  CHECK(c->vt->allgather(c, in, 8, out, dev, &err_) == LADLE_ENOTSUP);
  CHECK(strstr(err_.message, "device") != NULL);
  ladle_comm_destroy(c);
}

static int copies_;
static ladle_status fake_device_copy(void *dst, const void *src, size_t bytes,
                                     ladle_comm_place where, ladle_error *err) {
  LADLE_UNUSED(err);
  copies_ += where.device == LADLE_DEVICE_CUDA;
  memcpy(dst, src, bytes);
  return LADLE_OK;
}

TEST(self_moves_device_buffers_through_the_backend_copy) {
  ladle_comm *c;
  CHECK_OK(ladle_comm_self_create(fake_device_copy, &c, &err_));
  ladle_comm_place dev = {LADLE_DEVICE_CUDA, 0, NULL};
  int64_t in[2] = {1, 2}, out[2] = {0};
  CHECK_OK(c->vt->allgather(c, in, sizeof in, out, dev, &err_));
  CHECK(out[0] == 1 && out[1] == 2);
  CHECK_EQ_I(copies_, 1);
  ladle_comm_destroy(c);
}
