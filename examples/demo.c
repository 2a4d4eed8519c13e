/* demo.c — the main job on the C API: a MovieLens-shaped ratings table,
 * per-user features, a per-movie aggregate joined back, a sort, with the time
 * of each step. Usage: ladle_demo [--rows N] [--threads T]
 * Reads results only through the public header and the Arrow C stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ladle.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, ladle_status st, const ladle_error *err) {
  fprintf(stderr, "%s failed: %s: %s\n", what, ladle_status_name(st), err->message);
  exit(1);
}

#define TRY(what, call)                        \
  do {                                         \
    ladle_status st_ = (call);                 \
    if (st_ != LADLE_OK) die(what, st_, &err); \
  } while (0)

/* Prints the first n rows of a result through the Arrow C stream. */
static void print_head(ladle_result *r, int64_t n) {
  ladle_error err;
  struct ArrowArrayStream s;
  TRY("export", ladle_result_export_stream(r, &s, &err));
  struct ArrowSchema sch;
  if (s.get_schema(&s, &sch) != 0) {
    fprintf(stderr, "get_schema failed\n");
    exit(1);
  }
  for (int64_t c = 0; c < sch.n_children; c++) printf("%16s", sch.children[c]->name);
  printf("\n");
  int64_t printed = 0;
  while (printed < n) {
    struct ArrowArray batch;
    if (s.get_next(&s, &batch) != 0 || batch.release == NULL) break;
    for (int64_t i = 0; i < batch.length && printed < n; i++, printed++) {
      for (int64_t c = 0; c < batch.n_children; c++) {
        const struct ArrowArray *a = batch.children[c];
        const char *f = sch.children[c]->format;
        const uint8_t *valid = a->buffers[0];
        int64_t k = a->offset + i;
        if (valid && !((valid[k / 8] >> (k % 8)) & 1)) {
          printf("%16s", "null");
        } else if (strcmp(f, "g") == 0) {
          printf("%16.4f", ((const double *)a->buffers[1])[k]);
        } else if (strcmp(f, "f") == 0) {
          printf("%16.4f", (double)((const float *)a->buffers[1])[k]);
        } else if (strcmp(f, "l") == 0) {
          printf("%16lld", (long long)((const int64_t *)a->buffers[1])[k]);
        } else if (strcmp(f, "i") == 0) {
          printf("%16d", ((const int32_t *)a->buffers[1])[k]);
        } else if (strcmp(f, "I") == 0) {
          printf("%16u", ((const uint32_t *)a->buffers[1])[k]);
        } else {
          printf("%16s", f);
        }
      }
      printf("\n");
    }
    batch.release(&batch);
  }
  sch.release(&sch);
  s.release(&s);
}

int main(int argc, char **argv) {
  int64_t rows = 5000000;
  int threads = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
      rows = atoll(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--rows N] [--threads T]\n", argv[0]);
      return 2;
    }
  }
  if (rows <= 0) {
    fprintf(stderr, "--rows must be positive\n");
    return 2;
  }
  ladle_error err;
  double t0 = now();
  /* MovieLens-shaped: users ~ rows/150, movies ~ rows/400, skewed popularity */
  int64_t nusers = rows / 150 + 1, nmovies = rows / 400 + 1;
  int32_t *user = malloc((size_t)rows * 4), *movie = malloc((size_t)rows * 4);
  float *rating = malloc((size_t)rows * 4);
  int64_t *ts = malloc((size_t)rows * 8);
  if (!user || !movie || !rating || !ts) {
    fprintf(stderr, "out of memory generating %lld rows\n", (long long)rows);
    return 1;
  }
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int64_t i = 0; i < rows; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    user[i] = (int32_t)(x % (uint64_t)nusers) + 1;
    uint64_t m = (x >> 20) % (uint64_t)nmovies;
    movie[i] = (int32_t)((m * m) / (uint64_t)nmovies) + 1; /* popular movies first */
    rating[i] = (float)(((x >> 40) % 10) + 1) * 0.5f;
    ts[i] = 789652009 + (int64_t)((x >> 8) % 700000000);
  }
  ladle_table_builder *b;
  TRY("builder", ladle_table_builder_create(&b, &err));
  TRY("userId", ladle_table_builder_add(b, "userId", ladle_dtype_make(LADLE_TYPE_INT32), rows, user,
                                        NULL, &err));
  TRY("movieId", ladle_table_builder_add(b, "movieId", ladle_dtype_make(LADLE_TYPE_INT32), rows,
                                         movie, NULL, &err));
  TRY("rating", ladle_table_builder_add(b, "rating", ladle_dtype_make(LADLE_TYPE_FLOAT32), rows,
                                        rating, NULL, &err));
  TRY("timestamp", ladle_table_builder_add(b, "timestamp", ladle_dtype_make(LADLE_TYPE_INT64), rows,
                                           ts, NULL, &err));
  ladle_table *ratings;
  TRY("finish", ladle_table_builder_finish(b, 65536, &ratings, &err));
  free(user);
  free(movie);
  free(rating);
  free(ts);
  double t1 = now();
  printf("generated %lld ratings (%lld users, %lld movies) in %.3f s\n", (long long)rows,
         (long long)nusers, (long long)nmovies, t1 - t0);

  ladle_engine_opts opts = {LADLE_DEVICE_CPU, 0, threads, 0, 0, NULL};
  ladle_engine *eng;
  TRY("engine", ladle_engine_create(&opts, &eng, &err));
  printf("engine: cpu, %d threads\n\n", ladle_engine_threads(eng));

  /* step 1: per-user features */
  ladle_plan *scan, *users;
  TRY("scan", ladle_plan_scan_table(ratings, &scan, &err));
  ladle_expr *ukeys[] = {ladle_expr_col("userId")};
  ladle_expr *uaggs[] = {
      ladle_expr_alias(ladle_expr_agg(LADLE_AGG_SUM, ladle_expr_col("rating"), NULL),
                       "user_rating_sum"),
      ladle_expr_alias(ladle_expr_len(), "user_n"),
      ladle_expr_alias(ladle_expr_agg(LADLE_AGG_MAX, ladle_expr_col("rating"), NULL),
                       "user_rating_max")};
  TRY("group_by user",
      ladle_plan_group_by(ladle_plan_ref(scan), 1, ukeys, 3, uaggs, false, &users, &err));
  ladle_result *r;
  double s0 = now();
  TRY("execute per-user", ladle_engine_execute(eng, users, &r, &err));
  double s1 = now();
  printf("step 1  per-user sum/len/max:        %8.3f s  -> %lld users\n", s1 - s0,
         (long long)ladle_result_num_rows(r));
  ladle_result_destroy(r);

  /* step 2: per-movie mean rating (a target encoding), joined back to every rating */
  ladle_plan *movies, *joined;
  ladle_expr *mkeys[] = {ladle_expr_col("movieId")};
  ladle_expr *maggs[] = {
      ladle_expr_alias(ladle_expr_agg(LADLE_AGG_MEAN, ladle_expr_col("rating"), NULL),
                       "movie_mean"),
      ladle_expr_alias(ladle_expr_len(), "movie_n")};
  TRY("group_by movie",
      ladle_plan_group_by(ladle_plan_ref(scan), 1, mkeys, 2, maggs, false, &movies, &err));
  ladle_expr *lo[] = {ladle_expr_col("movieId")}, *ro[] = {ladle_expr_col("movieId")};
  ladle_join_opts jo = {LADLE_JOIN_LEFT, false, true, NULL, NULL, LADLE_JOIN_ORDER_NONE};
  TRY("join", ladle_plan_join(ladle_plan_ref(scan), movies, 1, lo, ro, &jo, &joined, &err));
  s0 = now();
  TRY("execute join", ladle_engine_execute(eng, joined, &r, &err));
  s1 = now();
  printf("step 2  per-movie mean, joined back: %8.3f s  -> %lld rows\n", s1 - s0,
         (long long)ladle_result_num_rows(r));
  ladle_result_destroy(r);

  /* step 3: user features sorted by total rating, top 5 */
  ladle_plan *sorted;
  ladle_expr *by[] = {ladle_expr_col("user_rating_sum"), ladle_expr_col("userId")};
  bool desc[] = {true, false};
  TRY("sort", ladle_plan_sort(users, 2, by, desc, NULL, false, -1, &sorted, &err));
  s0 = now();
  TRY("execute sort", ladle_engine_execute(eng, sorted, &r, &err));
  s1 = now();
  printf("step 3  per-user features, sorted:   %8.3f s  -> %lld rows\n\n", s1 - s0,
         (long long)ladle_result_num_rows(r));
  print_head(r, 5);
  ladle_result_destroy(r);

  ladle_plan_destroy(sorted);
  ladle_plan_destroy(joined);
  ladle_plan_destroy(scan);
  ladle_table_release(ratings);
  ladle_engine_destroy(eng);
  printf("\ntotal %.3f s\n", now() - t0);
  return 0;
}
