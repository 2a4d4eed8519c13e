/* fuzz_parquet.c — libFuzzer target for the Parquet reader: the input is a file;
 * open it and decode every supported column chunk. Any crash, leak or undefined
 * behaviour is a bug; errors are the expected outcome for most inputs. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/parquet/parquet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setenv("LADLE_MMAP", "0", 1); /* read into exact-size buffers: ASan sees any overread */
  int fd = memfd_create("ladle-fuzz", 0);
  if (fd < 0) return 0;
  if (size > 0 && write(fd, data, size) != (ssize_t)size) {
    close(fd);
    return 0;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ladle_error err;
  ladle_pq_file *f;
  if (ladle_pq_open(path, &f, &err) == LADLE_OK) {
    for (size_t g = 0; g < f->nrow_groups; g++)
      for (size_t c = 0; c < f->ncolumns; c++) {
        if (!f->columns[c].supported) continue;
        ladle_column col;
        if (ladle_pq_read_chunk(f, g, c, &col, &err) == LADLE_OK) ladle_column_release(&col);
        if (ladle_pq_read_chunk_views(f, g, c, &col, &err) == LADLE_OK) ladle_column_release(&col);
        /* a selection (every third row past a point the input picks), both ways */
        int64_t rows = f->row_groups[g].num_rows, from = size > 0 ? data[size / 2] : 0, m = 0;
        int64_t *sel = rows > 0 && rows < (1 << 24) ? malloc((size_t)rows * sizeof *sel) : NULL;
        for (int64_t r = from; sel != NULL && r < rows; r += 3) sel[m++] = r;
        for (int v = 0; sel != NULL && v < 2; v++)
          if (ladle_pq_read_chunk_sel(f, g, c, sel, m, v, &col, &err) == LADLE_OK) ladle_column_release(&col);
        free(sel);
      }
    ladle_pq_close(f);
  }
  close(fd);
  return 0;
}
