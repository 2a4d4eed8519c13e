/* mpi_a2a.c — raw MPI_Alltoallv timings per iteration (bench/device/mpi_transports.sh):
 * which of the machine's MPI transports moves a shuffle's bytes fastest, and
 * whether the first iterations pay for fresh pages. Usage: mpi_a2a MiB_per_pair iters */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double mib = argc > 1 ? atof(argv[1]) : 16;
  int iters = argc > 2 ? atoi(argv[2]) : 8;
  size_t per = (size_t)(mib * 1048576.0);
  char *in = malloc(per * (size_t)size), *out = malloc(per * (size_t)size);
  memset(in, rank + 1, per * (size_t)size);
  memset(out, 0, per * (size_t)size);
  int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
  for (int r = 0; r < size; r++) {
    cnt[r] = (int)per;
    dsp[r] = (int)(per * (size_t)r);
  }
  double best = 1e30;
  for (int i = 0; i < iters; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Alltoallv(in, cnt, dsp, MPI_BYTE, out, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (tmax < best) best = tmax;
    if (rank == 0)
      printf("  iter %d: %.2f ms, %.2f GB/s per rank to others\n", i, tmax * 1e3,
             (double)per * (size - 1) / tmax / 1e9);
  }
  for (int r = 0; r < size; r++)
    if (out[per * (size_t)r] != (char)(r + 1)) fprintf(stderr, "rank %d: wrong bytes from %d\n", rank, r);
  if (rank == 0)
    printf("RESULT ranks=%d MiB/pair=%g best %.2f ms = %.2f GB/s per rank\n", size, mib, best * 1e3,
           (double)per * (size - 1) / best / 1e9);
  MPI_Finalize();
  return 0;
}
