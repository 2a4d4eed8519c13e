/* op_cache.c — CACHE: a subplan with several parents (Polars' cache), run
 * once per query; its table is kept in the query's state and shared. */
#include <stdlib.h>

#include "operator.h"

static ladle_status cache_run(exec_state *s, const ladle_pnode *pn, exec_side *side,
                              ladle_table **out, ladle_error *err) {
  LADLE_UNUSED(side);
  for (size_t i = 0; i < s->ncache; i++)
    if (s->cache[i].node == pn) {
      *out = ladle_table_ref(s->cache[i].table);
      return LADLE_OK;
    }
  if (s->ncache == s->capcache) {
    size_t cap = s->capcache ? s->capcache * 2 : 4;
    exec_cache_entry *c = realloc(s->cache, cap * sizeof *c);
    if (c == NULL) return LADLE_OOM(err, "cache");
    s->cache = c;
    s->capcache = cap;
  }
  ladle_table *t;
  LADLE_RETURN_NOT_OK(exec_input(s, pn, &t, NULL, err));
  s->cache[s->ncache].node = pn;
  s->cache[s->ncache++].table = t;
  *out = ladle_table_ref(t);
  return LADLE_OK;
}

const exec_operator exec_op_cache = {LADLE_POP_CACHE, cache_run, NULL, NULL, NULL};
