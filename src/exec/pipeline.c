/* pipeline.c — the pipeline driver (operator.h): a source table's morsels
 * pushed through a chain of streaming operators into a sink, each morsel a
 * task on the engine's pool, with nothing materialised in between.
 *
 * The chain's column needs are worked out from the sink down (a column no
 * node above reads is a placeholder all the way), the streaming operators'
 * shared state is opened once per run, and the sink sees its first morsel
 * alone: it may turn the pipeline down then (a partial aggregation meeting a
 * group per row), and the driver collects the chain's output as a table for
 * the parent to run on as a whole.
 *
 * The morsels are a table's partitions, or made by the tasks themselves (a
 * Parquet scan's row groups, decoded in the task that pushes them on): the
 * driver asks a made source for the columns the chain reads only, and
 * releases each morsel once the sink has taken what it keeps. */
#include <stdio.h>
#include <stdlib.h>

#include "operator.h"

/* Releases cols[0..n) (the array stays). */
static void release_n(ladle_column *cols, size_t n) {
  for (size_t i = 0; i < n; i++) ladle_column_release(&cols[i]);
}

typedef struct pipe_chain {
  size_t n;                  /* streaming nodes, the one over the source first */
  const ladle_pnode **node;  /* n */
  const exec_stream_op **op; /* n */
  void **state;              /* n: each operator's state for this run */
  bool **need;               /* n: the node's outputs read above (NULL: all) */
  size_t src_cols;
  bool *src_need; /* the source's columns the chain reads (NULL: all) */
} pipe_chain;

static void chain_close(pipe_chain *ch) {
  for (size_t i = 0; i < ch->n; i++) {
    if (ch->op != NULL && ch->op[i] != NULL && ch->op[i]->close != NULL && ch->state[i] != NULL)
      ch->op[i]->close(ch->state[i]);
    if (ch->need != NULL) free(ch->need[i]);
  }
  free(ch->src_need);
  free(ch->node);
  free(ch->op);
  free(ch->state);
  free(ch->need);
  memset(ch, 0, sizeof *ch);
}

/* The chain from source up to top, its operators opened from the top down
 * (a join's open runs and builds its other side: a join higher up may feed a
 * SEMI_FILTER below it, the way a whole join's first side does). */
static ladle_status chain_open(exec_state *s, const ladle_pnode *top, const ladle_pnode *source,
                               pipe_chain *ch, ladle_error *err) {
  memset(ch, 0, sizeof *ch);
  ch->src_cols = source->schema->n;
  size_t n = 0;
  for (const ladle_pnode *r = top; r != NULL && r != source;
       r = r->inputs[ladle_pnode_stream_input(r)]) {
    if ((r->ninputs != 1 && r->op != LADLE_POP_JOIN) || !r->pipelined) /* the planner's invariant */
      return ladle_err_set(err, LADLE_EINVAL, "internal: node #%d is not a pipeline's", r->id);
    n++;
  }
  ch->n = n;
  ch->node = calloc(LADLE_MAX(n, 1), sizeof *ch->node);
  ch->op = calloc(LADLE_MAX(n, 1), sizeof *ch->op);
  ch->state = calloc(LADLE_MAX(n, 1), sizeof *ch->state);
  ch->need = calloc(LADLE_MAX(n, 1), sizeof *ch->need);
  if (ch->node == NULL || ch->op == NULL || ch->state == NULL || ch->need == NULL) {
    chain_close(ch);
    return LADLE_OOM(err, "pipeline");
  }
  size_t i = n;
  for (const ladle_pnode *r = top; i > 0; r = r->inputs[ladle_pnode_stream_input(r)]) {
    ch->node[--i] = r;
    ch->op[i] = exec_operator_of(r->op)->stream;
    if (ch->op[i] == NULL) {
      chain_close(ch);
      return ladle_err_set(err, LADLE_EINVAL, "internal: %s does not stream",
                           ladle_pop_name(r->op));
    }
  }
  ladle_status st = LADLE_OK;
  for (size_t k = n; st == LADLE_OK && k-- > 0;)
    if (ch->op[k]->open != NULL) st = ch->op[k]->open(s, ch->node[k], &ch->state[k], err);
  if (st != LADLE_OK) chain_close(ch);
  return st;
}

/* The columns each node of the chain reads of the one below it, from what
 * is read of the top's output (top_need; NULL: all). */
static ladle_status chain_needs(pipe_chain *ch, const ladle_pnode *top, const bool *top_need,
                                ladle_error *err) {
  size_t n = ch->n;
  if (n > 0 && top_need != NULL) {
    ch->need[n - 1] = malloc(LADLE_MAX(top->schema->n, 1) * sizeof(bool));
    if (ch->need[n - 1] == NULL) return LADLE_OOM(err, "pipeline");
    memcpy(ch->need[n - 1], top_need, top->schema->n * sizeof(bool));
  }
  /* each node's needs from the one above it */
  for (size_t k = n; k-- > 1;) {
    ch->need[k - 1] = calloc(LADLE_MAX(ch->node[k - 1]->schema->n, 1), sizeof(bool));
    if (ch->need[k - 1] == NULL) return LADLE_OOM(err, "pipeline");
    ch->op[k]->needs(ch->node[k], ch->need[k], ch->need[k - 1]);
  }
  /* and the source's from the chain's first node (no node: the sink's) */
  if (n > 0 || top_need != NULL) {
    ch->src_need = calloc(LADLE_MAX(ch->src_cols, 1), sizeof(bool));
    if (ch->src_need == NULL) return LADLE_OOM(err, "pipeline");
    if (n > 0)
      ch->op[0]->needs(ch->node[0], ch->need[0], ch->src_need);
    else
      memcpy(ch->src_need, top_need, ch->src_cols * sizeof(bool));
  }
  return LADLE_OK;
}

/* Morsel src through the chain: out->columns (the top's schema, zeroed by
 * the caller) get owned columns and out->length the rows. */
static ladle_status chain_morsel(exec_state *s, const pipe_chain *ch, const ladle_chunk *src,
                                 ladle_chunk *out, ladle_error *err) {
  if (ch->n == 0) {
    for (size_t c = 0; c < ch->src_cols; c++)
      ladle_column_copy_ref(&src->columns[c], &out->columns[c]);
    out->length = src->length;
    return LADLE_OK;
  }
  ladle_chunk cur = *src; /* borrowed from the source */
  bool owned = false;
  size_t ncur = ch->src_cols;
  ladle_status st = LADLE_OK;
  for (size_t i = 0; i < ch->n && st == LADLE_OK; i++) {
    size_t nout = ch->node[i]->schema->n;
    bool last = i + 1 == ch->n;
    ladle_chunk next = {0, last ? out->columns : calloc(LADLE_MAX(nout, 1), sizeof(ladle_column)),
                        src->table_rows};
    if (next.columns == NULL) {
      st = LADLE_OOM(err, "pipeline");
    } else {
      st = ch->op[i]->morsel(s, ch->node[i], ch->state[i], ch->need[i], &cur, &next, err);
      if (st != LADLE_OK) {
        release_n(next.columns, nout);
        if (!last) free(next.columns);
      }
    }
    if (owned) {
      release_n(cur.columns, ncur);
      free(cur.columns);
    }
    if (st != LADLE_OK) break;
    /* table_rows stays the source's: after a filter the whole column's
     * height is not known, and the planner keeps out of pipelines the
     * expressions whose value would depend on it */
    cur = next;
    owned = !last;
    ncur = nout;
  }
  if (st == LADLE_OK) out->length = cur.length;
  return st;
}

typedef struct pipe_job {
  exec_state *s;
  const pipe_chain *ch;
  const exec_source *src;
  const exec_sink_op *sink;
  void *state;
  ladle_table *collected; /* no sink: the output, chunk k for morsel k */
  size_t ncols;           /* of the top's schema */
  size_t base;            /* task i is morsel base + i */
} pipe_job;

/* Morsel k through the chain into the sink, or into the collected table. */
static ladle_status pipe_task(void *vctx, size_t i, ladle_error *err) {
  pipe_job *j = vctx;
  size_t k = j->base + i;
  const exec_source *src = j->src;
  ladle_chunk made = {0, NULL, src->rows}; /* a made source's morsel, owned here */
  const ladle_chunk *in = src->table != NULL ? &src->table->chunks[k] : &made;
  ladle_status st = LADLE_OK;
  if (src->table == NULL) {
    made.columns = calloc(LADLE_MAX(j->ch->src_cols, 1), sizeof(ladle_column));
    if (made.columns == NULL) return LADLE_OOM(err, "pipeline");
    st = src->make(j->s, src->ctx, k, j->ch->src_need, &made, err);
  }
  if (st == LADLE_OK && j->sink == NULL) {
    st = chain_morsel(j->s, j->ch, in, &j->collected->chunks[k], err);
  } else if (st == LADLE_OK) {
    ladle_chunk c = {0, calloc(LADLE_MAX(j->ncols, 1), sizeof(ladle_column)), 0};
    if (c.columns == NULL) st = LADLE_OOM(err, "pipeline");
    if (st == LADLE_OK) st = chain_morsel(j->s, j->ch, in, &c, err);
    if (st == LADLE_OK) st = j->sink->consume(j->s, j->state, k, &c, err);
    if (c.columns != NULL) release_n(c.columns, j->ncols); /* the sink kept its references */
    free(c.columns);
  }
  if (made.columns != NULL) {
    release_n(made.columns, j->ch->src_cols);
    free(made.columns);
  }
  return st;
}

static ladle_status collect(exec_state *s, const pipe_chain *ch, const ladle_schema *schema,
                            const exec_source *src, ladle_table **out, ladle_error *err) {
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_table_create(schema, src->n, &t, err));
  pipe_job j = {s, ch, src, NULL, NULL, t, schema->n, 0};
  ladle_status st = ladle_pool_run(s->k.pool, src->n, pipe_task, &j, err);
  ladle_table_seal(t);
  if (st != LADLE_OK) {
    ladle_table_release(t);
    return st;
  }
  *out = t;
  return LADLE_OK;
}

ladle_status exec_pipeline_run(exec_state *s, const ladle_pnode *top, const ladle_pnode *source,
                               const exec_source *src_in, const exec_sink_op *sink,
                               const ladle_pnode *sink_pn, ladle_table **out, bool *declined,
                               ladle_error *err) {
  *out = NULL;
  if (declined != NULL) *declined = false;
  if (top == NULL) top = source;
  const ladle_schema *schema = top->schema;
  pipe_chain ch;
  LADLE_RETURN_NOT_OK(chain_open(s, top, source, &ch, err));
  /* the source after the chain's operators opened (their builds may feed it) */
  exec_source own;
  memset(&own, 0, sizeof own);
  const exec_source *src = src_in != NULL ? src_in : &own;
  ladle_status st = src_in != NULL ? LADLE_OK : exec_source_open(s, source, &own, err);
  if (st == LADLE_OK && src_in == NULL && sink != NULL && s->eng->comm->size > 1 && own.n == 0) {
    /* every rank runs a sink (a partial step holds an exchange) */
    exec_source_close(&own);
    ladle_table *empty;
    st = exec_empty_chunk(source->schema, &empty, err);
    if (st == LADLE_OK) {
      exec_source_of_table(empty, &own);
      ladle_table_release(empty);
    }
  }
  void *state = NULL;
  bool *need = NULL;
  if (st == LADLE_OK && sink != NULL) {
    need = calloc(LADLE_MAX(schema->n, 1), sizeof *need);
    st = need == NULL ? LADLE_OOM(err, "pipeline")
                      : sink->open(s, sink_pn, src, schema, need, &state, err);
  }
  /* what is read of the top's output: the sink's columns, or (collected)
   * what the parent reads of a filter's, or all */
  const bool *top_need = state != NULL ? need : top->op == LADLE_POP_FILTER ? top->need : NULL;
  if (st == LADLE_OK) st = chain_needs(&ch, top, top_need, err);
  free(need);
  bool accepted = state != NULL;
  if (st == LADLE_OK && accepted && src->n > 0) {
    /* the first morsel alone: the sink may turn the rest down */
    pipe_job j = {s, &ch, src, sink, state, NULL, schema->n, 0};
    st = pipe_task(&j, 0, err);
    accepted = st == LADLE_OK && (sink->accepts == NULL || sink->accepts(state));
    if (accepted && src->n > 1) {
      /* the rest in parallel; morsel 0 is done */
      j.base = 1;
      st = ladle_pool_run(s->k.pool, src->n - 1, pipe_task, &j, err);
    }
  }
  if (st == LADLE_OK && accepted) {
    st = sink->finish(s, state, out, err);
  } else if (st == LADLE_OK) {
    /* no sink, or the sink turned it down: the chain's output as a table */
    if (declined != NULL) *declined = sink != NULL;
    if (ch.n == 0 && src->table != NULL)
      *out = ladle_table_ref((ladle_table *)(uintptr_t)src->table);
    else
      st = collect(s, &ch, schema, src, out, err);
  }
  if (state != NULL) sink->close(state);
  if (src_in == NULL) exec_source_close(&own);
  chain_close(&ch);
  return st;
}

void exec_source_of_table(const ladle_table *t, exec_source *out) {
  memset(out, 0, sizeof *out);
  out->table = ladle_table_ref((ladle_table *)(uintptr_t)t);
  out->n = t->nchunks;
  out->rows = t->num_rows;
  out->first_rows = t->nchunks > 0 ? t->chunks[0].length : 0;
}

ladle_status exec_source_open(exec_state *s, const ladle_pnode *pn, exec_source *out,
                              ladle_error *err) {
  memset(out, 0, sizeof *out);
  const exec_operator *op = exec_operator_of(pn->op);
  if (op != NULL && op->source != NULL) {
    LADLE_RETURN_NOT_OK(op->source(s, pn, out, err));
    if (out->make != NULL) {
      if (ladle_trace_level() >= 1)
        fprintf(stderr, "ladle: #%d %s streamed into its pipeline: morsels=%zu rows=%lld\n", pn->id,
                ladle_pnode_name(pn), out->n, (long long)out->rows);
      return LADLE_OK;
    }
  }
  ladle_table *t;
  LADLE_RETURN_NOT_OK(ladle_exec_node(s, pn, &t, NULL, err));
  exec_source_of_table(t, out);
  ladle_table_release(t);
  return LADLE_OK;
}

void exec_source_close(exec_source *src) {
  if (src->table != NULL) ladle_table_release((ladle_table *)(uintptr_t)src->table);
  if (src->close != NULL) src->close(src->ctx);
  memset(src, 0, sizeof *src);
}
