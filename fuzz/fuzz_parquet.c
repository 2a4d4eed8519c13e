/* fuzz_parquet.c — libFuzzer target for the Parquet reader: the input is a file;
 * open it and decode every supported column chunk every way (fuzz_common.h).
 * Any crash, leak, undefined behaviour or invalid UTF-8 in a String column is
 * a bug; errors are the expected outcome for most inputs. Most mutations of
 * a whole file stop at the footer: fuzz_parquet_pages reaches the decoders. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_read_parquet(data, size, size > 0 ? data[size / 2] : 0);
  return 0;
}
