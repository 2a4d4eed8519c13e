/* exchange.h — moving the rows of host columns between the ranks of a
 * communicator: what an EXCHANGE step does once the executor has put each
 * destination's rows next to each other (a hash or range partition) or
 * chosen to send every row everywhere (a broadcast). Columns cross as their
 * buffers: validity bits repacked per destination, fixed-width values and
 * string bytes straight from the column, string and list offsets rebased on
 * arrival. Every rank calls these in the same order with the same column
 * types; the collectives are the communicator's (comm.h). */
#ifndef LADLE_DIST_EXCHANGE_H
#define LADLE_DIST_EXCHANGE_H

#include "comm.h"

/* Rank r gets rows [start[r], start[r] + rows[r]) of every column of cols
 * (ncols host columns of nrows rows; the ranges may overlap: a broadcast
 * sends the same rows to everyone). out (ncols columns, allocated through
 * the thread's current memory resource) receives what every rank sent to
 * this one, in rank order, and *out_rows their number (also when ncols is
 * 0). View-only string columns are turned back into offsets first. On error
 * nothing is left in out. */
ladle_status ladle_dist_move_columns(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                     int64_t nrows, const int64_t *start, const int64_t *rows,
                                     ladle_column *out, int64_t *out_rows, ladle_error *err);

/* The same, rank r getting rows perm[start_r, start_r + counts[r]) of the
 * columns, start_r the counts before r (a partition kernel's permutation:
 * each row once), packed straight from the columns; the packing and
 * unpacking run on pool's threads (NULL: this one). No list columns. */
ladle_status ladle_dist_move_rows(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                  int64_t nrows, const int64_t *perm, const int64_t *counts,
                                  ladle_pool *pool, ladle_column *out, int64_t *out_rows,
                                  ladle_error *err);

/* Every rank's rows to every rank, in rank order (a broadcast, an
 * allgather of the rows). */
ladle_status ladle_dist_allgather_columns(ladle_comm *c, const ladle_column *cols, size_t ncols,
                                          int64_t nrows, ladle_column *out, int64_t *out_rows,
                                          ladle_error *err);

/* Every rank's value v into all (c->size slots, rank order). */
ladle_status ladle_dist_allgather_i64(ladle_comm *c, int64_t v, int64_t *all, ladle_error *err);

#endif
