/* interop.h — tables and columns to and from the Arrow C Data and Stream
 * interfaces and DLPack. Conversions of core types only: wrapping an import in
 * a plan and finding a result's table belong to src/api, the facade of
 * ladle.h, which calls these. */
#ifndef LADLE_INTEROP_H
#define LADLE_INTEROP_H

#include "../core/core.h"

/* Big string-view columns' conversions kept across imports of the same
 * buffers (arrow.c); an engine owns one. */
typedef struct ladle_view_cache ladle_view_cache;
ladle_view_cache *ladle_view_cache_create(void); /* NULL: no memory */
void ladle_view_cache_destroy(ladle_view_cache *vc);
void ladle_view_cache_clear(ladle_view_cache *vc);
void ladle_view_cache_stats(ladle_view_cache *vc, size_t *entries, size_t *bytes, uint64_t *hits);

/* Imports an Arrow stream of struct arrays as a new sealed table (release with
 * ladle_table_release): one chunk per batch, whose columns reference the
 * producer's buffers except where layouts differ (then converted, string views
 * on `pool`, or a pool of `threads` threads made for it; 0: one per core; kept
 * in `cache` when not NULL). Consumes the stream (releases it) unless it is
 * NULL or already released. *out is written only on success; on error err
 * names the column ("scan_arrow: ..."). */
ladle_status ladle_table_import_stream(struct ArrowArrayStream *stream, int threads,
                                       ladle_pool *pool, ladle_view_cache *cache, ladle_table **out,
                                       ladle_error *err);

/* Imports ncols streams, one per column (each batch a piece of that column,
 * as a Polars Series exports itself), named `names`, as a table whose chunks
 * break where any column's pieces do (slices, no copies). Conversions as
 * ladle_table_import_stream. Consumes every stream. Columns of different
 * heights are LADLE_ECORRUPT. */
ladle_status ladle_table_import_columns(struct ArrowArrayStream *streams, size_t ncols,
                                        const char *const *names, int threads, ladle_pool *pool,
                                        ladle_view_cache *cache, ladle_table **out,
                                        ladle_error *err);

/* Exports t as an Arrow stream, one struct array per chunk, over t's buffers;
 * the stream holds its own reference on t and outlives the caller's. With
 * string_views, STRING columns that fit go out as string views ("vu"), made
 * ahead with `threads` threads when there are many rows; otherwise as large
 * strings. On error *out holds no stream (its release is NULL or untouched). */
ladle_status ladle_table_export_stream(ladle_table *t, bool string_views, int threads,
                                       struct ArrowArrayStream *out, ladle_error *err);

/* Column `column` of t as a one-dimensional DLPack tensor on the CPU, under
 * ladle_result_export_dlpack's rules (ladle.h): numeric and boolean columns
 * without nulls (LADLE_ETYPE otherwise). The tensor holds its own references;
 * the caller calls (*out)->deleter(*out). *out is written only on success. */
ladle_status ladle_table_export_dlpack(const ladle_table *t, size_t column, DLManagedTensor **out,
                                       ladle_error *err);

/* Partition 0 of t (of one partition at most) as an Arrow struct array on
 * `device` and its schema: buffers shared; a BOOL column's bits are
 * bits[i] when given (taken over: the device's, packed there), else
 * packed on the host. sync_event NULL. */
ladle_status ladle_table_export_device_array(const ladle_table *t, ladle_buffer **bits,
                                             ladle_device_type device, int device_id,
                                             struct ArrowSchema *schema,
                                             struct ArrowDeviceArray *out, ladle_error *err);

/* The DLPack type of a column named `name` of type ty with `nulls` nulls,
 * or LADLE_ETYPE naming the column (not numeric or boolean; nulls). */
ladle_status ladle_dlpack_dtype(const char *name, ladle_dtype ty, int64_t nulls, DLDataType *out,
                                ladle_error *err);
/* A tensor over column *col (its references move into the tensor: *col is
 * zeroed on success) on `device`; before_release(arg), when given, runs in
 * the deleter before the references go (a device's stream ordering). */
ladle_status ladle_dlpack_wrap(ladle_column *col, DLDataType dt, ladle_device_type device,
                               int device_id, void (*before_release)(void *arg), void *arg,
                               DLManagedTensor **out, ladle_error *err);

#endif
