/* parquet.h — ladle's Parquet reader: the thrift compact protocol, file metadata,
 * page decoding and the column-chunk reader.
 *
 * Invariants: every length or offset read from a file is checked against the
 * bytes actually available before it is used, so a hostile file can make the
 * reader fail (LADLE_ECORRUPT, naming file, column and problem) but never read
 * out of bounds or allocate more than the file justifies.
 */
#ifndef LADLE_PARQUET_H
#define LADLE_PARQUET_H

#include "../../core/core.h"

/* ------------------------------------------------------------------ thrift */

typedef struct ladle_thrift {
  const uint8_t *p, *end;
  const char *what; /* for messages: "footer of x.parquet" */
  ladle_error *err;
  bool failed;
  int depth;
  /* the compact type of the value about to be read (a field's, or a list's
   * elements'), 0 when not known: ladle_thrift_int refuses a non-integer */
  int cur;
} ladle_thrift;

enum {
  LADLE_TT_STOP = 0,
  LADLE_TT_TRUE = 1,
  LADLE_TT_FALSE = 2,
  LADLE_TT_I8 = 3,
  LADLE_TT_I16 = 4,
  LADLE_TT_I32 = 5,
  LADLE_TT_I64 = 6,
  LADLE_TT_DOUBLE = 7,
  LADLE_TT_BINARY = 8,
  LADLE_TT_LIST = 9,
  LADLE_TT_SET = 10,
  LADLE_TT_MAP = 11,
  LADLE_TT_STRUCT = 12
};

/* Reads the next field header of a struct; false at STOP or on failure. */
bool ladle_thrift_field(ladle_thrift *t, int16_t *last_id, int16_t *id, int *type);
int64_t ladle_thrift_int(ladle_thrift *t);
bool ladle_thrift_bool(ladle_thrift *t, int type);
/* Binary/string: a pointer into the buffer and its length. */
const uint8_t *ladle_thrift_binary(ladle_thrift *t, int64_t *len);
/* List header: element type and count (count checked against the bytes left). */
int64_t ladle_thrift_list(ladle_thrift *t, int *elem_type);
void ladle_thrift_skip(ladle_thrift *t, int type);
ladle_status ladle_thrift_fail(ladle_thrift *t, const char *problem);

/* ----------------------------------------------------------------- metadata */

enum {
  LADLE_PQ_BOOLEAN = 0,
  LADLE_PQ_INT32 = 1,
  LADLE_PQ_INT64 = 2,
  LADLE_PQ_INT96 = 3,
  LADLE_PQ_FLOAT = 4,
  LADLE_PQ_DOUBLE = 5,
  LADLE_PQ_BYTE_ARRAY = 6,
  LADLE_PQ_FIXED_LEN_BYTE_ARRAY = 7
};

typedef struct ladle_pq_stats {
  bool has_min, has_max, has_null_count;
  const uint8_t *min, *max; /* into the footer buffer */
  int64_t min_len, max_len;
  int64_t null_count;
} ladle_pq_stats;

typedef struct ladle_pq_chunk_meta {
  int physical;
  int codec;
  int64_t num_values;
  int64_t total_compressed_size;
  int64_t total_uncompressed_size; /* a hint for scheduling, never trusted for sizes */
  int64_t data_page_offset;
  int64_t dictionary_page_offset; /* -1 when absent */
  ladle_pq_stats stats;
} ladle_pq_chunk_meta;

typedef struct ladle_pq_row_group {
  int64_t num_rows;
  ladle_pq_chunk_meta *columns; /* one per leaf column */
} ladle_pq_row_group;

/* A leaf column of the file schema: flat, or one level of list of a flat type. */
typedef struct ladle_pq_column {
  char *name;
  int physical;
  int type_length;  /* FIXED_LEN_BYTE_ARRAY */
  int max_def;      /* 0 required, 1 optional; up to 3 for a list */
  int max_rep;      /* 0 flat, 1 one level of list */
  int list_def;     /* lists: definition level of an empty (present) list */
  ladle_dtype elem; /* lists: the element type (`type` is the LIST) */
  ladle_dtype type; /* what ladle makes of it */
  int64_t time_mul; /* TIME: nanoseconds per stored unit (else 1) */
  bool supported;
  char why[96]; /* when not supported */
} ladle_pq_column;

typedef struct ladle_pq_file {
  char *path;
  int fd;
  int64_t file_size;
  const uint8_t *map; /* the file mapped read only (NULL: read with pread) */
  uint8_t *footer; /* owned; metadata pointers point into it */
  int64_t num_rows;
  size_t ncolumns;
  ladle_pq_column *columns;
  size_t nrow_groups;
  ladle_pq_row_group *row_groups;
} ladle_pq_file;

ladle_status ladle_pq_open(const char *path, ladle_pq_file **out, ladle_error *err);
void ladle_pq_close(ladle_pq_file *f);

/* Reads column `col` of row group `rg` into a ladle column. */
ladle_status ladle_pq_read_chunk(const ladle_pq_file *f, size_t rg, size_t col, ladle_column *out,
                                 ladle_error *err);
/* The same, a flat string column as a view-only column (ladle_column.views):
 * dictionary strings are views into the dictionary, others into a copy of
 * their bytes. Only for a column that goes straight into a result. */
ladle_status ladle_pq_read_chunk_views(const ladle_pq_file *f, size_t rg, size_t col,
                                       ladle_column *out, ladle_error *err);
/* Rows sel[0..nsel) of the chunk (strictly ascending row numbers of the row
 * group), as views when `as_views` (as above): a flat fixed-width or view
 * column decodes only the pages that hold selected rows, and from each only
 * those rows move into the output; any other column is read whole and
 * gathered. What a filter over a scan uses for the columns its predicate does
 * not read. */
ladle_status ladle_pq_read_chunk_sel(const ladle_pq_file *f, size_t rg, size_t col, const int64_t *sel,
                                     int64_t nsel, bool as_views, ladle_column *out, ladle_error *err);

/* Rows [lo, hi) of a flat column's chunk (hi < 0: the whole chunk, any
 * column), lo and hi where its pages start or end (ladle_pq_chunk_page_rows;
 * a page across either: LADLE_ENOTSUP),
 * as views when `as_views` (as above): only the pages of those rows (and
 * the dictionary) are decompressed. What splits a row group's column among
 * threads when a scan has fewer row groups than threads. */
ladle_status ladle_pq_read_chunk_rows(const ladle_pq_file *f, size_t rg, size_t col, bool as_views,
                                      int64_t lo, int64_t hi, ladle_column *out, ladle_error *err);
/* The first rows of the data pages (holding rows) of a flat column's chunk,
 * *n of them (malloc'd into *starts, the caller frees it), from the pages'
 * headers alone, and whether every one is dictionary-encoded. *n is 0 (and
 * the chunk is to be read whole, which names what is wrong) for a nested
 * column, or pages that do not add up to the row group's rows. */
ladle_status ladle_pq_chunk_page_rows(const ladle_pq_file *f, size_t rg, size_t col,
                                      int64_t **starts, size_t *n, bool *all_dict);

/* A predicate over a chunk's dictionary: `dict` holds its entries as a String
 * column with one null row after them; `ent` gets one byte per row of it, 1
 * where the predicate holds (true, not null), else 0. */
typedef ladle_status (*ladle_pq_dict_eval)(void *ctx, const ladle_column *dict, uint8_t *ent,
                                           ladle_error *err);
/* Column `col` of row group `rg` through a predicate evaluated once per
 * dictionary entry: keep[r] (one byte per row of the row group) is the entry
 * byte of row r's value, or of the null row for a null. Only for a flat String
 * column whose every data page is dictionary-encoded: *whole says whether it
 * was one (false: keep is not complete, and the caller reads the column and
 * evaluates the predicate row by row). A dictionary-evaluated filter never
 * decodes the strings of the rows. */
ladle_status ladle_pq_read_chunk_dict_keep(const ladle_pq_file *f, size_t rg, size_t col,
                                           ladle_pq_dict_eval eval, void *ctx, uint8_t *keep,
                                           bool *whole, ladle_error *err);

/* ------------------------------------------------- pages for a device decoder */

/* The width of a flat column whose stored values are its values as they are
 * (INT32 as Int32, Date or UInt32; INT64 as Int64, UInt64, Datetime or
 * Duration; FLOAT; DOUBLE), 4 or 8; else 0. Only these go to a device's
 * decoder (the kernel table's parquet_decode). */
int ladle_pq_column_raw_width(const ladle_pq_column *pc);

/* Whether a flat String column's chunks may go to a device's decoder when
 * every data page is dictionary-encoded (ladle_pq_chunk_pages says
 * LADLE_ENOTSUP otherwise): its dictionaries parsed on the host
 * (ladle_pq_dict_strings_read), its indices decoded on the device. */
bool ladle_pq_column_dict_strings(const ladle_pq_column *pc);

/* A page of a column chunk as stored: its header's facts and its bytes. */
typedef struct ladle_pq_page {
  int type;           /* 0 v1 data page, 2 dictionary page, 3 v2 data page */
  int encoding;       /* its values': 0 PLAIN, 2 or 8 dictionary indices */
  int64_t num_values; /* a data page's rows (flat), a dictionary's entries */
  int64_t num_nulls;  /* a v2 page's header's count; -1 */
  const uint8_t *raw; /* its stored bytes (in the file's mapping or pages.buf) */
  int64_t raw_len;    /* stored */
  int64_t len;        /* decompressed */
  int64_t def_len;    /* v2: its definition levels, first and never compressed */
  bool compressed;    /* whether its values are */
  int index;          /* its place in the chunk, for messages */
} ladle_pq_page;

typedef struct ladle_pq_pages {
  ladle_pq_page *pages; /* the dictionary page first, where there is one */
  size_t n;
  int codec;
  uint8_t *buf; /* the chunk's bytes when the file is not mapped */
} ladle_pq_pages;

/* The dictionary and data pages of row group rg's chunk of column col (a
 * ladle_pq_column_raw_width column), their headers read and checked as a read
 * checks them (sizes, CRCs, the rows adding up to the row group's), nothing
 * decompressed; pages of no rows and index pages left out. LADLE_ENOTSUP for
 * an encoding other than PLAIN or dictionary (the caller reads the chunk with
 * ladle_pq_read_chunk instead). */
ladle_status ladle_pq_chunk_pages(const ladle_pq_file *f, size_t rg, size_t col,
                                  ladle_pq_pages *out, ladle_error *err);
void ladle_pq_pages_free(ladle_pq_pages *pp);
/* Page i of pp decompressed into dst (its `len` bytes). */
ladle_status ladle_pq_page_read(const ladle_pq_file *f, size_t rg, size_t col,
                                const ladle_pq_pages *pp, size_t i, uint8_t *dst, ladle_error *err);
/* A String column's dictionary page i parsed into dst: num_values + 1 Int64
 * offsets from 0, then the entries' bytes (checked as UTF-8); at most
 * ladle_pq_dict_strings_bytes of them, *used the bytes written. */
int64_t ladle_pq_dict_strings_bytes(const ladle_pq_page *pg);
ladle_status ladle_pq_dict_strings_read(const ladle_pq_file *f, size_t rg, size_t col,
                                        const ladle_pq_pages *pp, size_t i, uint8_t *dst,
                                        int64_t *used, ladle_error *err);
/* Whether page i's stored bytes can go to a device's decompressor as they
 * are: a zstd page must be one frame whose walk of block headers ends where
 * the page does and whose declared size (if any) is the page's (a device
 * decompressor trusts its input). LADLE_ENOTSUP: decompress it on the host
 * (several frames, another codec); LADLE_ECORRUPT: it is not zstd. */
ladle_status ladle_pq_page_check_stored(const ladle_pq_file *f, size_t rg, size_t col,
                                        const ladle_pq_pages *pp, size_t i, ladle_error *err);

/* Compresses n pages in one batch (a GPU's backend, compress_pages): page i
 * (in[i], len[i] bytes) as one frame of `codec`, at off[i] in *block (malloc'd,
 * freed by the writer), outlen[i] bytes. LADLE_ENOTSUP or LADLE_ENOMEM: the
 * writer compresses those pages itself. */
typedef struct ladle_pq_compressor {
  ladle_status (*run)(void *ctx, int codec, size_t n, const uint8_t *const *in, const int64_t *len,
                      uint8_t **block, int64_t *off, int64_t *outlen, ladle_error *err);
  void *ctx;
} ladle_pq_compressor;

/* Writes the table's rows, its chunks as they are: a row group within one
 * chunk is a slice of it, one across chunks their slices concatenated by the
 * task that encodes it (no copy of the whole table first). The
 * column chunks are encoded and compressed on `pool`'s threads (NULL: on the
 * calling thread), a window of them at a time, and written in file order.
 * With `comp` (and a codec), a window's chunks are encoded with their pages
 * left uncompressed, the window's pages compressed by comp in one batch, and
 * the chunks then put together on the threads. */
ladle_status ladle_pq_write(const ladle_table *table, const char *path,
                            const ladle_parquet_write_opts *opts, ladle_pool *pool,
                            const ladle_pq_compressor *comp, ladle_error *err);

/* ------------------------------------------------------------------ codecs */

/* The Snappy decoder alone (raw format: the length varint, then the
 * elements): false on any malformed stream or a length other than dst_len. */
bool ladle_pq_snappy_decode(const uint8_t *src, int64_t n, uint8_t *dst, int64_t dst_len);
/* GZIP's decoder alone: one or more gzip members, or a zlib stream, to
 * exactly dst_len bytes with their checksums checked; `zlib_only` takes zlib's
 * path even where libdeflate is built in (for the tests). */
ladle_status ladle_pq_inflate(const uint8_t *src, int64_t src_len, uint8_t *dst, int64_t dst_len,
                              bool zlib_only, ladle_error *err);
/* Decompresses exactly `dst_len` bytes; names the codec when it is not built in. */
ladle_status ladle_pq_decompress(int codec, const uint8_t *src, int64_t src_len, uint8_t *dst,
                                 int64_t dst_len, ladle_error *err);
const char *ladle_pq_codec_name(int codec);

#endif
