/* pool.c — a fixed set of worker threads running parallel loops, nested ones
 * included. The caller of ladle_pool_run works too; items are claimed with an
 * atomic counter, so a loop of n items costs n atomic increments, not n
 * wake-ups.
 *
 * Nesting: a loop of n items started where w threads are available gives each
 * item w / n of them (at least 1). A loop started inside an item whose share is
 * 1 runs inline, as a plain loop; one whose share is more is published beside
 * the running loops, and idle workers join it (the newest loop first: it is
 * what an older loop's item waits for). So a group-by of two aggregations on
 * 16 threads runs each aggregation's own loops 8 wide, where a pool of one
 * loop at a time would leave 14 threads idle. A loop's submitter waits only
 * for items already claimed, each run by a thread that finishes it, so nested
 * loops cannot deadlock. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "core.h"

typedef struct pool_job {
  ladle_task_fn fn;
  void *ctx;
  size_t n;
  atomic_size_t next;
  atomic_int failed;
  /* the failure of the lowest item that failed, guarded by the pool mutex:
   * items are claimed in order and a claimed item runs to its end, so every
   * item below the first to fail runs too, and which error the caller gets
   * does not depend on the threads' timing */
  ladle_status status;
  ladle_error err;
  size_t failed_at;
  const int *cancel;              /* the submitting thread's cancellation flag, or NULL */
  ladle_mr *mr;                   /* the submitting thread's memory resource, or NULL */
  int width;                      /* threads each item may use for loops of its own */
  int refs;                       /* workers inside, guarded by the pool mutex */
  struct pool_job *older, *newer; /* the pool's open jobs, guarded by the mutex */
} pool_job;

struct ladle_pool {
  int threads;
  pthread_t *workers;
  int nworkers;
  pthread_mutex_t mu;
  pthread_cond_t wake;
  pthread_cond_t done;
  pool_job *newest; /* open jobs, newest first */
  int idle;         /* workers waiting for a job */
  bool stop;
};

static _Thread_local int in_task = 0;
static _Thread_local int task_width = 1; /* inside a task: threads its loops may use */
static _Thread_local const int *cancel_flag = NULL;

const int *ladle_cancel_set(const int *flag) {
  const int *was = cancel_flag;
  cancel_flag = flag;
  return was;
}

ladle_status ladle_cancel_check(ladle_error *err) {
  if (cancel_flag != NULL && __atomic_load_n(cancel_flag, __ATOMIC_RELAXED) != 0)
    return ladle_err_set(err, LADLE_ECANCELED, "the query was cancelled");
  return LADLE_OK;
}

static void run_items(ladle_pool *pool, pool_job *job) {
  in_task++;
  int was_width = task_width;
  task_width = job->width;
  const int *was = ladle_cancel_set(job->cancel); /* tasks start loops of their own */
  ladle_mr *was_mr = ladle_mr_set(job->mr);
  for (;;) {
    if (atomic_load_explicit(&job->failed, memory_order_relaxed)) break;
    size_t i = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
    if (i >= job->n) break;
    ladle_error e;
    e.code = 0;
    e.message[0] = '\0';
    ladle_status st = ladle_cancel_check(&e);
    if (st == LADLE_OK) st = job->fn(job->ctx, i, &e);
    if (st != LADLE_OK) {
      pthread_mutex_lock(&pool->mu);
      if (!atomic_load(&job->failed) || i < job->failed_at) {
        job->status = st;
        job->err = e;
        job->failed_at = i;
        atomic_store(&job->failed, 1);
      }
      pthread_mutex_unlock(&pool->mu);
      break;
    }
  }
  ladle_mr_set(was_mr);
  ladle_cancel_set(was);
  task_width = was_width;
  in_task--;
}

/* The newest open job with items left to claim, or NULL (under the mutex). */
static pool_job *job_to_join(ladle_pool *pool) {
  for (pool_job *j = pool->newest; j != NULL; j = j->older)
    if (!atomic_load_explicit(&j->failed, memory_order_relaxed) &&
        atomic_load_explicit(&j->next, memory_order_relaxed) < j->n)
      return j;
  return NULL;
}

static void *worker_main(void *arg) {
  ladle_pool *pool = arg;
  pthread_mutex_lock(&pool->mu);
  for (;;) {
    pool_job *job = NULL;
    while (!pool->stop && (job = job_to_join(pool)) == NULL) {
      pool->idle++;
      pthread_cond_wait(&pool->wake, &pool->mu);
      pool->idle--;
    }
    if (pool->stop) break;
    job->refs++;
    pthread_mutex_unlock(&pool->mu);
    run_items(pool, job);
    pthread_mutex_lock(&pool->mu);
    if (--job->refs == 0) pthread_cond_broadcast(&pool->done);
  }
  pthread_mutex_unlock(&pool->mu);
  return NULL;
}

int ladle_cpu_count(void) {
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

ladle_status ladle_pool_create(int threads, ladle_pool **out, ladle_error *err) {
  if (threads < 1) threads = 1;
  ladle_pool *p = calloc(1, sizeof *p);
  if (p == NULL) return LADLE_OOM(err, "thread pool");
  p->threads = threads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  p->workers = calloc((size_t)threads, sizeof *p->workers);
  if (p->workers == NULL) {
    ladle_pool_destroy(p);
    return LADLE_OOM(err, "thread pool");
  }
  for (int i = 0; i < threads - 1; i++) {
    if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0) {
      ladle_pool_destroy(p);
      return ladle_err_set(err, LADLE_ENOMEM, "pthread_create failed for worker %d", i);
    }
    p->nworkers++;
  }
  *out = p;
  return LADLE_OK;
}

void ladle_pool_destroy(ladle_pool *p) {
  if (p == NULL) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nworkers; i++) pthread_join(p->workers[i], NULL);
  free(p->workers);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  free(p);
}

int ladle_pool_threads(const ladle_pool *p) {
  return in_task > 0 ? LADLE_MIN(task_width, p->threads) : p->threads;
}

bool ladle_pool_nested(void) { return in_task > 0 && task_width <= 1; }

ladle_status ladle_pool_run(ladle_pool *pool, size_t n, ladle_task_fn fn, void *ctx,
                            ladle_error *err) {
  if (n == 0) return LADLE_OK;
  LADLE_RETURN_NOT_OK(ladle_cancel_check(err));
  int width = pool == NULL ? 1 : ladle_pool_threads(pool);
  if (n == 1 || width <= 1 || pool->nworkers == 0) {
    /* on this thread: one item with every thread this call had for its loops,
     * or a plain loop whose items' loops run inline */
    int was_width = task_width;
    in_task++;
    task_width = n == 1 ? width : 1;
    ladle_status st = LADLE_OK;
    for (size_t i = 0; i < n && st == LADLE_OK; i++)
      if ((st = ladle_cancel_check(err)) == LADLE_OK) st = fn(ctx, i, err);
    task_width = was_width;
    in_task--;
    return st;
  }
  pool_job job;
  job.fn = fn;
  job.ctx = ctx;
  job.n = n;
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  job.status = LADLE_OK;
  job.failed_at = 0;
  job.err.code = 0;
  job.err.message[0] = '\0';
  job.cancel = cancel_flag;
  job.mr = ladle_mr_current();
  job.width = n >= (size_t)width ? 1 : width / (int)n;
  job.refs = 0;
  pthread_mutex_lock(&pool->mu);
  job.older = pool->newest;
  job.newer = NULL;
  if (pool->newest != NULL) pool->newest->newer = &job;
  pool->newest = &job;
  if (pool->idle > 0) pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mu);
  run_items(pool, &job);
  pthread_mutex_lock(&pool->mu);
  /* unlinked, no worker joins it; then wait for those inside */
  if (job.newer != NULL)
    job.newer->older = job.older;
  else
    pool->newest = job.older;
  if (job.older != NULL) job.older->newer = job.newer;
  while (job.refs > 0) pthread_cond_wait(&pool->done, &pool->mu);
  pthread_mutex_unlock(&pool->mu);
  if (job.status != LADLE_OK && err != NULL) *err = job.err;
  return job.status;
}
