/* exec.c — the engine, the result, and the walk over the physical plan.
 *
 * The walk runs each node through its operator (operator.h, one file per
 * operator): a node's `run` pulls its inputs through ladle_exec_node and
 * materialises its output, except where the planner made a pipeline, whose
 * morsels stream from the source through the row-wise nodes into a sink
 * (pipeline.c) with no table in between. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../dist/exchange.h"
#include "../interop/interop.h"
#include "operator.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* Operators allocate and free whole-column scratch. glibc hands blocks over
 * 128 KiB back to the kernel at once, so the next operator faults every page
 * in again, zeroed (a fifth of the time of a high-cardinality group-by). The
 * first engine raises the mmap threshold to glibc's maximum (32 MiB) and the
 * trim threshold to 1 GiB, so such blocks are reused; LADLE_MALLOC_TUNING=0
 * leaves malloc as it is. */
static void tune_malloc(void) {
#if defined(__GLIBC__)
  const char *v = getenv("LADLE_MALLOC_TUNING");
  if (v != NULL && strcmp(v, "0") == 0) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}
static pthread_once_t tune_once = PTHREAD_ONCE_INIT;

/* need[c] = true for every column c that e reads. */
void ladle_exec_mark_columns(const ladle_bexpr *e, bool *need, size_t n) {
  if (e->kind == LADLE_EX_COL && e->col >= 0 && (size_t)e->col < n) need[e->col] = true;
  for (size_t i = 0; i < e->nargs; i++) ladle_exec_mark_columns(e->args[i], need, n);
}

/* --------------------------------------------------------------- the walk */

const exec_operator *exec_operator_of(ladle_pop op) {
  static const exec_operator *const ops[] = {
      [LADLE_POP_SCAN] = &exec_op_scan,
      [LADLE_POP_SCAN_PARQUET] = &exec_op_scan_parquet,
      [LADLE_POP_SCAN_CSV] = &exec_op_scan_csv,
      [LADLE_POP_FILTER] = &exec_op_filter,
      [LADLE_POP_PROJECTION] = &exec_op_projection,
      [LADLE_POP_PROJECT] = &exec_op_project,
      [LADLE_POP_GROUP_BY] = &exec_op_group_by,
      [LADLE_POP_GROUP_BY_PARTIAL] = &exec_op_group_by_partial,
      [LADLE_POP_GROUP_BY_FINAL] = &exec_op_group_by_final,
      [LADLE_POP_JOIN] = &exec_op_join,
      [LADLE_POP_SORT] = &exec_op_sort,
      [LADLE_POP_TOP_K] = &exec_op_top_k,
      [LADLE_POP_SLICE] = &exec_op_slice,
      [LADLE_POP_DISTINCT] = &exec_op_distinct,
      [LADLE_POP_UNION] = &exec_op_union,
      [LADLE_POP_HCONCAT] = &exec_op_hconcat,
      [LADLE_POP_CACHE] = &exec_op_cache,
      [LADLE_POP_ROW_INDEX] = &exec_op_row_index,
      [LADLE_POP_SEMI_FILTER] = &exec_op_semi_filter,
      [LADLE_POP_EXCHANGE] = &exec_op_exchange,
      [LADLE_POP_EXPLODE] = &exec_op_explode,
  };
  return (size_t)op < sizeof ops / sizeof *ops ? ops[op] : NULL;
}

static ladle_status result_to_host(exec_state *s, ladle_table **t, ladle_error *err);

/* The state's kernels: the engine's device (its column kernels, memory
 * resource and stream) or the host's CPU kernels. */
static void place_on(exec_state *s, bool device) {
  ladle_engine *eng = s->eng;
  s->columns = device;
  s->be = device ? eng->backend : eng->host_backend;
  s->k.mr = device ? eng->dev_mr : NULL;
  s->k.stream = device ? eng->stream : NULL;
  s->k.device_id = device ? eng->opts.device_id : 0;
}

static ladle_status node_run(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                             exec_side *side, ladle_error *err);

/* *t, a host table, replaced by its copy on the device (one partition; not
 * kept in the column cache: a file's or an exchange's fresh buffers). */
static ladle_status table_up(exec_state *s, ladle_table **t, ladle_error *err) {
  ladle_table *h = *t;
  ladle_status st = exec_columns_scan(s, h, false, t, err);
  ladle_table_release(h);
  if (st != LADLE_OK) *t = NULL;
  return st;
}

/* A node placed elsewhere than its parent (a plan partly on the device):
 * it runs with its own placement's kernels, and a device node's output
 * under a host parent is copied to the host. */
static ladle_status node_run_placed(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                                    exec_side *side, ladle_error *err) {
  bool was = s->columns, dev = !pn->host;
  place_on(s, dev);
  ladle_status st = node_run(s, pn, out, side, err);
  if (st == LADLE_OK && dev && !was) {
    ladle_table *t = *out;
    st = result_to_host(s, out, err);
    if (st != LADLE_OK) ladle_table_release(t);
  }
  place_on(s, was);
  if (st == LADLE_OK && !dev && was)
    /* a host node under a device parent (an exchange between ranks, which
     * moves rows through the host for now): its output copied up */
    st = table_up(s, out, err);
  return st;
}

/* exec_pq_device's scan: the host's columns read there and copied up, the
 * device's decoded there; a late filter's predicate then runs on the device
 * over them (exec_columns_filter). */
static ladle_status device_scan(exec_state *s, const ladle_pnode *pn, exec_pq_device *d,
                                ladle_table **out, ladle_error *err) {
  ladle_table *h = NULL, *t = NULL;
  place_on(s, false);
  ladle_status st = exec_pq_device_host_part(s, d, &h, err);
  place_on(s, true);
  if (st == LADLE_OK) st = exec_columns_scan(s, h, false, &t, err);
  ladle_table_release(h);
  if (st == LADLE_OK) st = exec_pq_device_decode(s, d, t, err);
  exec_pq_device_free(d);
  if (st == LADLE_OK && pn->op == LADLE_POP_FILTER) {
    ladle_table *f = NULL;
    st = exec_columns_filter(s, pn, t, &f, err);
    ladle_table_release(t);
    t = f;
  }
  if (st != LADLE_OK) {
    ladle_table_release(t);
    return st;
  }
  *out = t;
  return LADLE_OK;
}

static ladle_status node_run(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                             exec_side *side, ladle_error *err) {
  if (s->mixed && s->columns == pn->host) return node_run_placed(s, pn, out, side, err);
  const exec_operator *op = exec_operator_of(pn->op);
  if (op == NULL || op->op != pn->op)
    return ladle_err_set(err, LADLE_ENOTSUP, "physical operator %s", ladle_pop_name(pn->op));
  if (pn->pipelined && pn->source != NULL) {
    /* the top of a pipeline into its parent: the source's morsels through
     * the chain, collected as the parent's input table */
    return exec_pipeline_run(s, pn, pn->source, NULL, NULL, NULL, out, NULL, err);
  }
  if (pn->upload && s->columns) {
    /* a Parquet file decoded on the device where its backend can */
    exec_pq_device *d = NULL;
    LADLE_RETURN_NOT_OK(exec_pq_device_open(s, pn, &d, err));
    if (d != NULL) return device_scan(s, pn, d, out, err);
    /* a file read on the host's kernels, its output copied to the device */
    place_on(s, false);
    ladle_status st = op->run(s, pn, side, out, err);
    place_on(s, true);
    return st == LADLE_OK ? table_up(s, out, err) : st;
  }
  return op->run(s, pn, side, out, err);
}

/* LADLE_TRACE=1 prints, per physical node as it finishes, its id, operator,
 * output rows and milliseconds (its inputs' time included) to stderr,
 * indented by depth: the profile of a query by operator. */
ladle_status ladle_exec_node(exec_state *s, const ladle_pnode *pn, ladle_table **out,
                             exec_side *side, ladle_error *err) {
  LADLE_RETURN_NOT_OK(ladle_cancel_check(err));
  if (ladle_trace_level() < 1) return node_run(s, pn, out, side, err);
  static _Thread_local int depth;
  double t0 = ladle_clock_ms();
  depth++;
  ladle_status st = node_run(s, pn, out, side, err);
  depth--;
  fprintf(stderr, "ladle: %*s#%d %s%s rows=%lld chunks=%zu %.2f ms\n", 2 * depth, "", pn->id,
          ladle_pnode_name(pn), pn->pipelined && pn->source != NULL ? " (pipeline)" : "",
          st == LADLE_OK ? (long long)(*out)->num_rows : -1LL,
          st == LADLE_OK ? (*out)->nchunks : (size_t)0, ladle_clock_ms() - t0);
  return st;
}

/* ------------------------------------------------------------ engine, result */

/* ------------------------------------------------------------ engine, result */

static ladle_status engine_execute(ladle_engine *eng, const ladle_plan *plan, bool host,
                                   ladle_result **out, ladle_error *err);

/* LADLE_COLUMN_KERNELS=1: a CPU engine runs its queries on the column
 * kernels alone, as a GPU engine does (a testing switch, read when an
 * engine is made) */
static bool columns_switch(void) {
  const char *v = getenv("LADLE_COLUMN_KERNELS");
  return v != NULL && strcmp(v, "1") == 0;
}

ladle_status ladle_engine_create(const ladle_engine_opts *opts, ladle_engine **out,
                                 ladle_error *err) {
  ladle_engine_opts o = {LADLE_DEVICE_CPU, 0, 0, 0, 0, NULL};
  if (opts != NULL) o = *opts;
  pthread_once(&tune_once, tune_malloc);
  if (o.device == 0) o.device = LADLE_DEVICE_CPU;
  if (o.device != LADLE_DEVICE_CPU && o.device != LADLE_DEVICE_CUDA)
    return ladle_err_set(err, LADLE_EINVAL, "unknown device type %d", (int)o.device);
  /* More threads than cores this process may run on only cost memory and
   * switches for a CPU-bound engine: capped, and 0 means all of them. */
  int cores = ladle_cpu_count();
  if (o.threads < 0)
    return ladle_err_set(err, LADLE_EINVAL, "threads=%d: must be 0 (one per core) or more",
                         o.threads);
  if (o.threads == 0 || o.threads > cores) o.threads = cores;
  if (o.morsel_rows < 0) return ladle_err_set(err, LADLE_EINVAL, "morsel_rows must be >= 0");
  ladle_engine *e = calloc(1, sizeof *e);
  if (e == NULL) return LADLE_OOM(err, "engine");
  e->opts = o;
  e->morsel_rows = o.morsel_rows > 0 ? o.morsel_rows : 65536;
  e->backend = e->host_backend = ladle_backend_cpu();
  e->columns = columns_switch();
  if (e->columns) e->backend = ladle_backend_cpu_columns(); /* the host side keeps the CPU's */
  ladle_status st = LADLE_OK;
  if (o.device == LADLE_DEVICE_CUDA) {
    /* the device's table, memory and stream; the limit is the device's */
    const ladle_allocator *dev = NULL;
    st = ladle_backend_open("cuda", o.device_id, &e->backend, &dev, &e->stream, err);
    if (st == LADLE_OK) st = ladle_mr_create(dev, o.memory_limit, &e->dev_mr, err);
    e->columns = true;
  }
  if (st == LADLE_OK) st = ladle_pool_create(o.threads, &e->pool, err);
  if (st == LADLE_OK && o.comm != NULL)
    e->comm = o.comm; /* the caller's, borrowed */
  else if (st == LADLE_OK && (st = ladle_comm_self_create(NULL, &e->comm, err)) == LADLE_OK)
    e->own_comm = true;
  if (st == LADLE_OK)
    st = ladle_mr_create(ladle_allocator_host(), o.device == LADLE_DEVICE_CUDA ? 0 : o.memory_limit,
                         &e->mr, err);
  if (st == LADLE_OK && e->columns) {
    /* scanned columns stay on the device for the next query: up to half the
     * memory limit, or of the device's memory (1 GiB on the CPU switch) */
    int64_t cap = o.memory_limit > 0 ? o.memory_limit / 2 : (int64_t)1 << 30;
    if (o.memory_limit == 0 && e->backend->memory_info != NULL) {
      ladle_kctx k;
      memset(&k, 0, sizeof k);
      k.device_id = o.device_id;
      k.stream = e->stream;
      int64_t fr = 0, tot = 0;
      st = e->backend->memory_info(&k, &fr, &tot, err);
      cap = tot / 2;
    }
    if (st == LADLE_OK && (e->dcache = exec_dev_cache_create(cap)) == NULL)
      st = LADLE_OOM(err, "engine device cache");
  }
  if (st == LADLE_OK && (e->views = ladle_view_cache_create()) == NULL)
    st = LADLE_OOM(err, "engine view cache");
  if (st != LADLE_OK) {
    ladle_engine_destroy(e);
    return st;
  }
  *out = e;
  return LADLE_OK;
}

void ladle_engine_destroy(ladle_engine *e) {
  if (e == NULL) return;
  ladle_view_cache_destroy(e->views); /* its references to callers' frames go too */
  ladle_pool_destroy(e->pool);
  if (e->own_comm) ladle_comm_destroy(e->comm);
  exec_dev_cache_destroy(e->dcache); /* before the device's resource */
  ladle_mr_release(e->mr);
  ladle_mr_release(e->dev_mr);
  free(e);
}

bool ladle_engine_columns(const ladle_engine *e) { return e->columns; }

ladle_device_type ladle_engine_device(const ladle_engine *e, int *device_id) {
  if (device_id != NULL) *device_id = e->opts.device_id;
  return e->opts.device;
}

int ladle_engine_threads(const ladle_engine *e) { return e->opts.threads; }

ladle_engine_stats ladle_engine_get_stats(const ladle_engine *e) {
  ladle_engine_stats s = {atomic_load(&((ladle_engine *)(uintptr_t)e)->row_groups_read),
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->row_groups_skipped),
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->rows_transferred),
                          ladle_mr_bytes(e->mr),
                          ladle_mr_peak(e->mr),
                          0,
                          0,
                          0,
                          0,
                          0,
                          e->comm->moved_bytes,
                          e->comm->moved_ms,
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->dict_chunks),
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->dict_chunks_rowwise),
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->row_groups_streamed),
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->partial_rows_passed),
                          atomic_load(&((ladle_engine *)(uintptr_t)e)->chunks_split)};
  if (e->dev_mr != NULL) {
    s.device_memory_bytes = ladle_mr_bytes(e->dev_mr);
    s.device_memory_peak = ladle_mr_peak(e->dev_mr);
  }
  exec_dev_cache_stats(e->dcache, &s.device_cache_bytes, &s.device_cache_hits,
                       &s.device_cache_misses);
  return s;
}

ladle_status ladle_engine_execute(ladle_engine *eng, const ladle_plan *plan, ladle_result **out,
                                  ladle_error *err) {
  return ladle_engine_execute_cancellable(eng, plan, NULL, out, err);
}

static ladle_status execute_on(ladle_engine *eng, const ladle_plan *plan, bool host,
                               const int *cancel, ladle_result **out, ladle_error *err) {
  const int *was = ladle_cancel_set(cancel);
  ladle_mr *was_mr = ladle_mr_set(eng != NULL ? eng->mr : NULL);
  ladle_status st = engine_execute(eng, plan, host, out, err);
  /* out of device memory with columns kept from earlier queries: once more
   * without them */
  if (st == LADLE_ENOMEM && !host && eng != NULL && eng->columns && eng->comm->size == 1 &&
      exec_dev_cache_clear(eng->dcache) > 0)
    st = engine_execute(eng, plan, host, out, err);
  /* the blocks this query did not reuse go back to the system; not after a
   * GPU engine's refusal, which ran nothing: its CPU run comes next and
   * reuses the last query's blocks (evicting them cost TPC-H q13 40%) */
  bool refused = st == LADLE_ENOTSUP && !host && eng != NULL && eng->columns;
  if (eng != NULL && !refused) ladle_mr_query_done(eng->mr);
  ladle_mr_set(was_mr);
  ladle_cancel_set(was);
  return st;
}

ladle_status ladle_engine_execute_cancellable(ladle_engine *eng, const ladle_plan *plan,
                                              const int *cancel, ladle_result **out,
                                              ladle_error *err) {
  return execute_on(eng, plan, false, cancel, out, err);
}

ladle_status ladle_engine_execute_host(ladle_engine *eng, const ladle_plan *plan, const int *cancel,
                                       ladle_result **out, ladle_error *err) {
  return execute_on(eng, plan, true, cancel, out, err);
}

static bool on_host(const ladle_column *c) {
  for (int i = 0; i < 3; i++)
    if (c->owners[i] != NULL && c->owners[i]->device != LADLE_DEVICE_CPU) return false;
  return true;
}

/* A table's columns on the host, through backend `be` on context k for those
 * on its device (the others are references). *out is one new table. */
static ladle_status table_down(const ladle_backend *be, const ladle_kctx *k, const ladle_table *in,
                               ladle_table **out, ladle_error *err) {
  ladle_table *o;
  LADLE_RETURN_NOT_OK(ladle_table_create(&in->schema, in->nchunks, &o, err));
  ladle_status st = LADLE_OK;
  for (size_t c = 0; c < in->nchunks && st == LADLE_OK; c++) {
    o->chunks[c].length = in->chunks[c].length;
    for (size_t i = 0; i < in->schema.n && st == LADLE_OK; i++) {
      const ladle_column *col = &in->chunks[c].columns[i];
      if (!on_host(col))
        st = be->to_host(k, col, &o->chunks[c].columns[i], err);
      else
        ladle_column_copy_ref(col, &o->chunks[c].columns[i]);
    }
  }
  ladle_table_seal(o);
  if (st != LADLE_OK) {
    ladle_table_release(o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

/* A result's columns on the host: a column-kernel run leaves them on the
 * backend's device (literals and one-row answers finished on the host are
 * there already). On failure *t is left as it was. */
static ladle_status result_to_host(exec_state *s, ladle_table **t, ladle_error *err) {
  ladle_table *o;
  LADLE_RETURN_NOT_OK(table_down(s->be, &s->k, *t, &o, err));
  ladle_table_release(*t);
  *t = o;
  return LADLE_OK;
}

ladle_status exec_table_to_host(exec_state *s, const ladle_table *t, ladle_table **out,
                                ladle_error *err) {
  ladle_kctx k = s->k;
  k.device_id = s->eng->opts.device_id;
  k.stream = s->eng->stream;
  k.mr = s->eng->dev_mr;
  return table_down(s->eng->backend, &k, t, out, err);
}

/* A table on a device is one partition (the device's operators make one),
 * so a table of several is on the host without looking at its columns: every
 * host scan asks. */
bool exec_table_on_device(const ladle_table *t) {
  for (size_t i = 0; t->nchunks == 1 && i < t->schema.n; i++)
    if (!on_host(&t->chunks[0].columns[i])) return true;
  return false;
}

/* A GPU engine's result, all of it on the device in one partition: columns
 * the plan finished on the host beside device ones (literals, one-row
 * answers) are copied up. The result keeps the device's table
 * and a context for the copies and exports to come. */
static ladle_status result_on_device(exec_state *s, ladle_result *r, ladle_error *err) {
  ladle_table *in = r->table, *o;
  LADLE_RETURN_NOT_OK(ladle_table_create(&in->schema, 1, &o, err));
  o->chunks[0].length = in->num_rows;
  ladle_status st = LADLE_OK;
  for (size_t i = 0; i < in->schema.n && st == LADLE_OK; i++) {
    ladle_column *dst = &o->chunks[0].columns[i];
    if (in->nchunks == 1 && !on_host(&in->chunks[0].columns[i])) {
      ladle_column_copy_ref(&in->chunks[0].columns[i], dst);
      continue;
    }
    /* on the host in one piece first (a device piece among host ones comes
     * down: a plan's device output is one partition, so this is rare) */
    ladle_column *parts = calloc(LADLE_MAX(in->nchunks, 1), sizeof *parts);
    if (parts == NULL) {
      st = LADLE_OOM(err, "result columns");
      break;
    }
    size_t made = 0;
    for (; made < in->nchunks && st == LADLE_OK; made++) {
      const ladle_column *c = &in->chunks[made].columns[i];
      if (on_host(c))
        ladle_column_copy_ref(c, &parts[made]);
      else
        st = s->be->to_host(&s->k, c, &parts[made], err);
      if (st != LADLE_OK) break;
    }
    ladle_column host;
    if (st == LADLE_OK) {
      if (in->nchunks == 0)
        st = ladle_column_alloc(in->schema.types[i], 0, false, 0, &host, err);
      else
        st = ladle_column_concat(parts, in->nchunks, &host, err);
    }
    for (size_t k = 0; k < made; k++) ladle_column_release(&parts[k]);
    free(parts);
    if (st != LADLE_OK) break;
    st = s->be->to_device(&s->k, &host, dst, err);
    ladle_column_release(&host);
  }
  ladle_table_seal(o);
  if (st != LADLE_OK) {
    ladle_table_release(o);
    return st;
  }
  ladle_table_release(r->table);
  r->table = NULL;
  r->dev = o;
  r->be = s->be;
  r->k = s->k;
  r->k.pool = NULL;
  r->k.mr = ladle_mr_ref(s->k.mr);
  return LADLE_OK;
}

/* The plan's shape as text for its fingerprint: every node's line and
 * output schema, an in-memory scan without its rows (each rank has its own). */
typedef struct shape_seen {
  const ladle_plan *nodes[64]; /* CACHE nodes by first visit (their text is an address) */
  size_t n;
} shape_seen;

static void shape_text(const ladle_plan *p, ladle_strbuf *b, shape_seen *seen) {
  if (p->kind == LADLE_NODE_SCAN) {
    ladle_strbuf_printf(b, "SCAN memory");
  } else if (p->kind == LADLE_NODE_CACHE) {
    size_t i = 0;
    while (i < seen->n && seen->nodes[i] != p) i++;
    bool first = i == seen->n;
    if (first && seen->n < sizeof seen->nodes / sizeof seen->nodes[0]) seen->nodes[seen->n++] = p;
    ladle_strbuf_printf(b, "CACHE #%zu", i);
    if (!first) return; /* its input was written at its first visit */
  } else {
    ladle_plan_node_text(p, b);
  }
  char buf[128];
  for (size_t i = 0; i < p->schema.n; i++)
    ladle_strbuf_printf(b, "|%s:%s", p->schema.names[i],
                        ladle_dtype_name(p->schema.types[i], buf, sizeof buf));
  ladle_strbuf_printf(b, "(");
  for (size_t i = 0; i < p->ninputs; i++) shape_text(p->inputs[i], b, seen);
  ladle_strbuf_printf(b, ")");
}

/* The physical plan's shape (operators, exchanges, which side a join
 * streams, what runs across ranks), hashed: every rank must have planned the
 * same exchanges, or they would call different collectives. */
static uint64_t pshape_hash(const ladle_pnode *pn, uint64_t h, int depth) {
  if (depth > 512) return h;
  int64_t v[10] = {(int64_t)pn->op,     (int64_t)pn->xkind,   (int64_t)pn->xnkeys,
                   (int64_t)pn->xlocal, (int64_t)pn->probe,   (int64_t)pn->global_aggs,
                   (int64_t)pn->dist,   (int64_t)pn->partial, (int64_t)pn->right_first,
                   (int64_t)pn->ninputs};
  h = ladle_hash_bytes(v, sizeof v, h);
  for (size_t i = 0; i < pn->ninputs; i++)
    if (pn->inputs[i] != NULL) h = pshape_hash(pn->inputs[i], h, depth + 1);
  return h;
}

/* With several ranks: every rank's plan fingerprint gathered and compared,
 * so that a rank that runs another query (or none) is named on every rank
 * instead of the ranks waiting on each other's exchanges; and the physical
 * plan's shape, so that ranks that planned one query differently fail alike
 * rather than meet in mismatched collectives. */
static ladle_status check_symmetry(ladle_engine *eng, const ladle_plan *plan, const ladle_pplan *pp,
                                   bool *agreed, ladle_error *err) {
  ladle_comm *c = eng->comm;
  if (c->size <= 1) return LADLE_OK;
  ladle_strbuf b = {NULL, 0, 0, false};
  shape_seen seen = {{NULL}, 0};
  shape_text(plan, &b, &seen);
  if (b.failed || b.data == NULL) {
    free(b.data);
    return LADLE_OOM(err, "plan fingerprint");
  }
  int64_t mine[3] = {(int64_t)ladle_hash_bytes(b.data, b.len, 0x6c61646c65ULL), eng->queries++,
                     (int64_t)pshape_hash(pp->root, 0x70706c616eULL, 0)};
  free(b.data);
  int64_t *all = calloc((size_t)c->size * 3, sizeof *all);
  if (all == NULL) return LADLE_OOM(err, "plan fingerprint");
  ladle_comm_place host = {LADLE_DEVICE_CPU, 0, NULL};
  ladle_status st = c->vt->allgather(c, mine, sizeof mine, all, host, err);
  if (st == LADLE_OK) {
    char ranks[256] = "", planned[256] = "";
    size_t len = 0, plen = 0;
    int ndiff = 0, nplan = 0;
    for (int r = 1; r < c->size; r++)
      if (all[3 * r] != all[0] || all[3 * r + 1] != all[1]) {
        if (len < sizeof ranks - 16)
          len += (size_t)snprintf(ranks + len, sizeof ranks - len, "%s%d", ndiff ? ", " : "", r);
        ndiff++;
      } else if (all[3 * r + 2] != all[2]) {
        if (plen < sizeof planned - 16)
          plen +=
              (size_t)snprintf(planned + plen, sizeof planned - plen, "%s%d", nplan ? ", " : "", r);
        nplan++;
      }
    *agreed = ndiff > 0 || nplan > 0; /* every rank saw what this one saw: all fail alike */
    if (ndiff == 0 && nplan > 0)
      st = ladle_err_set(err, LADLE_ECOMM,
                         "internal: rank%s %s planned this query's exchanges differently from "
                         "rank 0 (a plan chosen from a rank's own rows); nothing ran",
                         nplan > 1 ? "s" : "", planned);
    if (ndiff > 0)
      st = ladle_err_set(err, LADLE_ECOMM,
                         "the ranks ran different queries: rank%s %s ran another query (or "
                         "another number of queries) than rank 0 (plan fingerprints differ; "
                         "every rank of an SPMD job must run the same queries in the same order)",
                         ndiff > 1 ? "s" : "", ranks);
  }
  free(all);
  return st;
}

ladle_pplan_opts exec_plan_opts(const ladle_backend *be, int ranks, bool columns) {
  ladle_pplan_opts o = {ranks,
                        !columns && be->gather_pieces != NULL,
                        !columns && be->top_k_indices != NULL,
                        columns,
                        exec_stream_join_mode(be, columns),
                        !columns && be->join_probe_mark != NULL && be->join_build != NULL &&
                            be->compare_into != NULL && be->keep_to_indices != NULL &&
                            be->mask_and != NULL,
                        !columns};
  /* LADLE_MARK_JOIN=0: semi and anti joins never stream their right side */
  const char *v = getenv("LADLE_MARK_JOIN");
  if (v != NULL && strcmp(v, "0") == 0) o.mark_join = false;
  /* LADLE_COPARTITION=0: a join's sides are exchanged whatever came below */
  v = getenv("LADLE_COPARTITION");
  if (v != NULL && strcmp(v, "0") == 0) o.copartition = false;
  return o;
}

static ladle_status engine_run(ladle_engine *eng, const ladle_plan *plan, bool host,
                               ladle_result **out, bool *agreed, ladle_error *err) {
  if (eng == NULL || plan == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "execute: NULL engine or plan");
  exec_state s;
  memset(&s, 0, sizeof s);
  s.eng = eng;
  s.k.pool = eng->pool;
  s.k.morsel_rows = eng->morsel_rows;
  place_on(&s, eng->columns && !host);
  ladle_result *r = calloc(1, sizeof *r);
  if (r == NULL) return LADLE_OOM(err, "result");
  r->threads = eng->pool ? ladle_pool_threads(eng->pool) : 1;
  r->mr = ladle_mr_ref(eng->mr);
  ladle_pplan *pp;
  ladle_pplan_opts po = exec_plan_opts(s.be, eng->comm->size, s.columns);
  ladle_status st = ladle_pplan_build(plan, &po, &pp, err);
  if (st == LADLE_OK) {
    st = check_symmetry(eng, plan, pp, agreed, err);
    if (st != LADLE_OK) ladle_pplan_destroy(pp);
  }
  if (st == LADLE_OK && s.columns) {
    st = exec_columns_check(&s, pp, NULL, err);
    if (st != LADLE_OK) {
      /* a refusal of the plan, whose shape every rank shares: every rank
       * refuses alike (and then runs it on the host) */
      *agreed = st == LADLE_ENOTSUP;
      ladle_pplan_destroy(pp);
    } else {
      for (size_t i = 0; i < pp->n; i++) s.mixed = s.mixed || pp->nodes[i]->host;
      if (pp->root->host) place_on(&s, false);
    }
  }
  if (st != LADLE_OK) {
    ladle_result_destroy(r);
    return st;
  }
  s.pp = pp;
  s.fed = calloc(LADLE_MAX(pp->n, 1), sizeof *s.fed);
  s.layouts = calloc(LADLE_MAX(pp->n, 1), sizeof *s.layouts);
  s.hashed = calloc(LADLE_MAX(pp->n, 1), sizeof *s.hashed);
  st = s.fed != NULL && s.layouts != NULL && s.hashed != NULL
           ? ladle_exec_node(&s, pp->root, &r->table, NULL, err)
           : LADLE_OOM(err, "execute");
  free(s.hashed);
  s.hashed = NULL;
  for (size_t i = 0; i < s.ncache; i++) ladle_table_release(s.cache[i].table);
  free(s.cache);
  free(s.fed);
  for (size_t i = 0; s.layouts != NULL && i < pp->n; i++) exec_layout_release(&s.layouts[i]);
  free(s.layouts);
  r->sharded = eng->comm->size > 1 && pp->root->dist != LADLE_DIST_REPLICATED;
  ladle_pplan_destroy(pp);
  ladle_exec_unhoist(&s, 0);
  free(s.hoist);
  /* a GPU engine's result stays where its data came from: on the device
   * when any column was made there (the host's few, literals, copied up),
   * on the host when the plan finished there (a last sort of a few rows on
   * the host: copying them up and down again cost TPC-H's mixed plans up to
   * 0.9 ms at SF1) */
  if (st == LADLE_OK && eng->columns && !host && eng->backend->device != LADLE_DEVICE_CPU &&
      exec_table_on_device(r->table)) {
    place_on(&s, true);
    st = result_on_device(&s, r, err);
  } else if (st == LADLE_OK && s.columns) {
    st = result_to_host(&s, &r->table, err);
  }
  if (st != LADLE_OK) {
    ladle_result_destroy(r);
    return st;
  }
  *out = r;
  return LADLE_OK;
}

/* The end of a query on several ranks. A rank whose query failed (planning
 * out of memory, a strict cast of its own rows, the communicator: anywhere)
 * tells the others (c->fail: they may wait in an exchange for it, and fail
 * naming it at once); a rank whose query succeeded passes a barrier, which
 * fails when another rank gave up, so that every rank's query fails when one
 * does; and where the communicator recovers, every rank whose query failed
 * then recovers it, so that the next query runs. A communicator without
 * c->recover (torch's callbacks) has no barrier: its first failure is its
 * last. Not after a failure every rank saw alike (agreed: the plans'
 * fingerprints differ; a GPU engine refuses the plan), which leaves the
 * communicator as it was. */
static ladle_status query_end(ladle_engine *eng, ladle_status st, bool agreed, ladle_error *err) {
  ladle_comm *c = eng->comm;
  if (c->size <= 1 || agreed) return st;
  if (st == LADLE_OK) {
    if (c->recover == NULL) return LADLE_OK;
    st = c->vt->barrier(c, err);
    if (st == LADLE_OK) return LADLE_OK;
  } else if (c->fail != NULL) { /* sends nothing where another rank told this one */
    c->fail(c, err != NULL ? err->message : ladle_status_name(st));
  }
  if (c->recover == NULL) return st;
  ladle_error why;
  memset(&why, 0, sizeof why);
  if (c->recover(c, &why) != LADLE_OK && err != NULL) {
    size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof err->message - n,
             "; the job's communicator cannot go on after it: %s", why.message);
  }
  return st;
}

ladle_status ladle_engine_give_up(ladle_engine *eng, const char *why, ladle_error *err) {
  if (eng == NULL) return ladle_err_set(err, LADLE_EINVAL, "give_up: NULL engine");
  if (eng->comm->size <= 1) return LADLE_OK;
  eng->queries++; /* as check_symmetry counts a query that reached it */
  return ladle_comm_give_up(eng->comm, why, err);
}

static ladle_status engine_execute(ladle_engine *eng, const ladle_plan *plan, bool host,
                                   ladle_result **out, ladle_error *err) {
  bool agreed = false;
  if (eng == NULL || plan == NULL) return engine_run(eng, plan, host, out, &agreed, err);
  ladle_result *r = NULL;
  ladle_status st = engine_run(eng, plan, host, &r, &agreed, err);
  st = query_end(eng, st, agreed, err);
  if (st != LADLE_OK) {
    if (r != NULL) ladle_result_destroy(r);
    return st;
  }
  *out = r;
  return LADLE_OK;
}

/* the result's table wherever it is (for its shape: the same on both) */
static const ladle_table *rtab(const ladle_result *r) {
  return r->table != NULL ? r->table : r->dev;
}
int64_t ladle_result_num_rows(const ladle_result *r) { return rtab(r)->num_rows; }
size_t ladle_result_num_columns(const ladle_result *r) { return rtab(r)->schema.n; }
const char *ladle_result_column_name(const ladle_result *r, size_t i) {
  return i < rtab(r)->schema.n ? rtab(r)->schema.names[i] : NULL;
}
ladle_dtype ladle_result_column_type(const ladle_result *r, size_t i) {
  return i < rtab(r)->schema.n ? rtab(r)->schema.types[i] : ladle_dtype_make(LADLE_TYPE_NULL);
}
ladle_device_type ladle_result_device(const ladle_result *r, int *device_id) {
  if (device_id != NULL) *device_id = r->dev != NULL ? r->k.device_id : 0;
  return r->dev != NULL ? r->be->device : LADLE_DEVICE_CPU;
}
/* A result's view-only columns (a join's pass-through strings on their way to
 * an export as views) become offsets and bytes the first time anything else
 * asks for the table. */
static pthread_mutex_t result_mu = PTHREAD_MUTEX_INITIALIZER;

/* A device result's host copy, made once (the caller holds result_mu and
 * has made r->mr current). */
static ladle_status host_copy(ladle_result *m, ladle_error *err) {
  if (m->table != NULL) return LADLE_OK;
  /* a big result comes down on threads of its own (the result holds no pool):
   * they copy the staged chunks out while the next ones are DMA'd */
  ladle_kctx k = m->k;
  ladle_pool *pool = NULL;
  if (m->threads > 1 && m->dev->num_rows > ((int64_t)1 << 20) &&
      ladle_pool_create(m->threads, &pool, NULL) == LADLE_OK)
    k.pool = pool;
  ladle_status st = table_down(m->be, &k, m->dev, &m->table, err);
  if (pool != NULL) ladle_pool_destroy(pool);
  return st;
}

ladle_status ladle_result_host(const ladle_result *r, ladle_error *err) {
  ladle_result *m = (ladle_result *)(uintptr_t)r;
  pthread_mutex_lock(&result_mu);
  ladle_mr *was = ladle_mr_set(r->mr);
  ladle_status st = host_copy(m, err);
  ladle_mr_set(was);
  pthread_mutex_unlock(&result_mu);
  return st;
}

ladle_status ladle_result_plain(const ladle_result *r, ladle_error *err) {
  ladle_result *m = (ladle_result *)(uintptr_t)r;
  pthread_mutex_lock(&result_mu);
  ladle_mr *was = ladle_mr_set(r->mr);
  ladle_status st = host_copy(m, err);
  if (st != LADLE_OK) {
    ladle_mr_set(was);
    pthread_mutex_unlock(&result_mu);
    return st;
  }
  const ladle_table *t = m->table;
  bool any = false;
  for (size_t k = 0; k < t->nchunks && !any; k++)
    for (size_t i = 0; i < t->schema.n && !any; i++)
      any = ladle_column_view_only(&t->chunks[k].columns[i]);
  ladle_table *n = NULL;
  if (any) st = ladle_table_create(&t->schema, t->nchunks, &n, err);
  for (size_t k = 0; any && st == LADLE_OK && k < t->nchunks; k++) {
    n->chunks[k].length = t->chunks[k].length;
    for (size_t i = 0; st == LADLE_OK && i < t->schema.n; i++)
      st = ladle_column_unviewed(&t->chunks[k].columns[i], &n->chunks[k].columns[i], err);
  }
  if (any && st == LADLE_OK) {
    ladle_table_seal(n);
    ladle_table_release(m->table);
    m->table = n;
  } else if (any) {
    ladle_table_release(n);
  }
  ladle_mr_set(was);
  pthread_mutex_unlock(&result_mu);
  return st;
}

ladle_table *ladle_result_table(const ladle_result *r) {
  ladle_error err;
  if (ladle_result_plain(r, &err) != LADLE_OK) return NULL;
  return ladle_table_ref(r->table);
}
bool ladle_result_sharded(const ladle_result *r) { return r->sharded; }

ladle_status ladle_engine_allgather(ladle_engine *eng, const ladle_result *r, ladle_result **out,
                                    ladle_error *err) {
  if (eng == NULL || r == NULL)
    return ladle_err_set(err, LADLE_EINVAL, "allgather: NULL engine or result");
  ladle_mr *was = ladle_mr_set(eng->mr);
  ladle_status st = ladle_result_host(r, err);
  if (st == LADLE_OK) st = ladle_result_plain(r, err);
  ladle_result *o = st == LADLE_OK ? calloc(1, sizeof *o) : NULL;
  if (st == LADLE_OK && o == NULL) st = LADLE_OOM(err, "result");
  ladle_table *one = NULL, *t = NULL;
  ladle_column *moved = NULL;
  size_t ncols = r->table != NULL ? r->table->schema.n : 0;
  if (st == LADLE_OK) {
    o->threads = r->threads;
    o->mr = ladle_mr_ref(eng->mr);
    if (!r->sharded || eng->comm->size == 1) { /* the same rows */
      o->table = ladle_table_ref(r->table);
      goto done;
    }
    st = ladle_table_combine(r->table, &one, err);
  }
  if (st == LADLE_OK && one->nchunks == 0) {
    ladle_table_release(one);
    one = NULL;
    st = exec_empty_chunk(&r->table->schema, &one, err);
  }
  if (st == LADLE_OK && (moved = calloc(LADLE_MAX(ncols, 1), sizeof *moved)) == NULL)
    st = LADLE_OOM(err, "allgather");
  int64_t got = 0;
  if (st == LADLE_OK)
    st = ladle_dist_allgather_columns(eng->comm, one->nchunks ? one->chunks[0].columns : NULL,
                                      ncols, one->num_rows, moved, &got, err);
  if (st == LADLE_OK) {
    st = ladle_table_create(&r->table->schema, 1, &t, err);
    if (st != LADLE_OK) /* moved holds columns only when the allgather succeeded */
      for (size_t i = 0; i < ncols; i++) ladle_column_release(&moved[i]);
  }
  if (st == LADLE_OK) {
    t->chunks[0].length = got;
    for (size_t i = 0; i < ncols; i++) t->chunks[0].columns[i] = moved[i];
    ladle_table_seal(t);
    o->table = t;
  }
done:
  ladle_table_release(one);
  free(moved);
  ladle_mr_set(was);
  if (st != LADLE_OK) {
    ladle_result_destroy(o);
    return st;
  }
  *out = o;
  return LADLE_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

ladle_status ladle_engine_bench_alltoall(ladle_engine *eng, size_t bytes, int iters, double *out_ms,
                                         ladle_error *err) {
  ladle_comm *c = eng->comm;
  size_t n = (size_t)c->size;
  if (iters < 1) return ladle_err_set(err, LADLE_EINVAL, "bench_alltoall: %d iterations", iters);
  /* the exchange's own kind of buffers (scratch blocks: big ones mapped with
   * huge pages advised), so that the transport copies alike */
  char *in = ladle_scratch_alloc(LADLE_MAX(bytes * n, 1), false),
       *out = ladle_scratch_alloc(LADLE_MAX(bytes * n, 1), false);
  size_t *z = calloc(n * 4, sizeof *z);
  double *ms = calloc((size_t)iters, sizeof *ms);
  ladle_status st = in && out && z && ms ? LADLE_OK : LADLE_OOM(err, "bench_alltoall");
  if (st == LADLE_OK) {
    /* nothing to itself: an exchange keeps a rank's own rows out of the
     * transport (a self copy made the raw rate look slower than the
     * exchange's own alltoallv); both buffers touched before any timing */
    memset(in, c->rank, bytes * n);
    memset(out, 0, bytes * n);
    for (size_t r = 0; r < n; r++) {
      z[r] = z[2 * n + r] = r == (size_t)c->rank ? 0 : bytes;
      z[n + r] = z[3 * n + r] = r * bytes;
    }
  }
  ladle_comm_place host = {LADLE_DEVICE_CPU, 0, NULL};
  for (int i = 0; i < iters && st == LADLE_OK; i++) {
    double t0 = ladle_clock_ms();
    st = c->vt->alltoallv(c, in, z, z + n, out, z + 2 * n, z + 3 * n, host, err);
    ms[i] = ladle_clock_ms() - t0;
  }
  if (st == LADLE_OK) {
    qsort(ms, (size_t)iters, sizeof *ms, cmp_double);
    *out_ms = ms[iters / 2];
  }
  ladle_scratch_free(in);
  ladle_scratch_free(out);
  free(z);
  free(ms);
  return st;
}

void ladle_result_destroy(ladle_result *r) {
  if (r == NULL) return;
  ladle_table_release(r->table);
  ladle_table_release(r->dev);
  ladle_mr_unref(r->k.mr);
  ladle_mr_unref(r->mr);
  free(r);
}
