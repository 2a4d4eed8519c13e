/* csv.h — ladle's CSV reader: load (a plain file is mapped, gzip and zstd are
 * decompressed into memory), find records in parallel chunks (quotes handled
 * across chunk boundaries), infer types, parse fields.
 *
 * Record finding reads each chunk once, 64 bytes a step: the bitmaps of quotes
 * and newlines, and the quote parity by prefix xor, give both the records the
 * chunk holds if it starts outside quotes and those if it starts inside; a
 * sequential pass then picks, chunk by chunk, the list that matches where the
 * previous chunk ended. A newline inside quotes never splits a record, wherever
 * the chunk boundaries fall. Fields are split the same way: a record without a
 * quote character from its separators' bitmap, one with quotes byte by byte.
 */
#ifndef LADLE_CSV_H
#define LADLE_CSV_H

#include "../../core/core.h"

typedef struct ladle_csv_file {
  char *path;
  uint8_t *data; /* the whole (decompressed) file; read only when mapped */
  bool mapped;   /* data is the file mapped (else malloc'd) */
  int64_t size;
  int64_t body;  /* offset of the first data record */
  size_t ncols;  /* fields per record (from the header or the first record) */
  char **names;
  int64_t nrecords;
  int64_t *starts; /* 2 * nrecords: record k is [starts[2k], starts[2k+1]) */
  bool open_quote; /* the last record ends inside quotes with the data's final newline: malformed */
  bool borrowed;   /* a copy that owns only its records (ladle_csv_parser_records) */
  /* per-column null values (the options' named ones, borrowed): column c's
   * are col_nulls[c * n_named_nulls ...], n_col_nulls[c] of them; NULL: none */
  const char **col_nulls;
  size_t *n_col_nulls;
} ladle_csv_file;

/* Loads `path`, skips lines, reads the header and finds every record. */
ladle_status ladle_csv_open(const char *path, const ladle_csv_opts *o, ladle_pool *pool,
                            ladle_csv_file **out, ladle_error *err);
void ladle_csv_close(ladle_csv_file *f);

/* ladle_csv_parse's status when, with ignore_errors, quote parity found
 * records that Polars' parser reads otherwise (a quote inside an unquoted
 * field): the caller parses again over ladle_csv_parser_records'. Only the
 * CSV scan sees it. */
#define LADLE_CSV_REREAD 100
/* A copy of f whose records are those Polars' parser finds, reading fields up
 * to file column `last` (as Polars reads such a file with ignore_errors); it
 * shares f's data, which must outlive it. Free with ladle_csv_close. */
ladle_status ladle_csv_parser_records(const ladle_csv_file *f, const ladle_csv_opts *o, size_t last,
                                      ladle_csv_file **out, ladle_error *err);

/* Infers the type of each column from the first rows (Polars' rules: Int64, then
 * Float64, Boolean, Date/Datetime with try_parse_dates, else String). */
ladle_status ladle_csv_infer(const ladle_csv_file *f, const ladle_csv_opts *o, ladle_dtype *types,
                             ladle_error *err);

/* Parses records [begin, end) into columns: `ncols` selected file columns `which`
 * with types `types`. */
ladle_status ladle_csv_parse(const ladle_csv_file *f, const ladle_csv_opts *o, int64_t begin,
                             int64_t end, size_t ncols, const size_t *which,
                             const ladle_dtype *types, ladle_column *out, ladle_error *err);

#endif
