/* buffer.c — the host allocator and refcounted, device-tagged buffers, and
 * reading a file's bytes into memory (ladle_read_at).
 * A buffer is freed by whoever drops the last reference, through the allocator
 * that made it, or through the foreign owner's release callback. */
#include <unistd.h>

#include "core.h"

ladle_status ladle_read_at(int fd, const char *path, int64_t off, void *buf, int64_t len,
                           ladle_error *err) {
  int64_t done = 0;
  while (done < len) {
    ssize_t r = pread(fd, (char *)buf + done, (size_t)(len - done), (off_t)(off + done));
    if (r <= 0)
      return ladle_err_set(err, LADLE_EIO, "%s: read of %lld bytes at offset %lld failed", path,
                           (long long)len, (long long)off);
    done += r;
  }
  return LADLE_OK;
}

/* Big blocks (128 KiB and up from an engine's resource) bypass malloc: glibc
 * maps anything above 32 MiB afresh and unmaps it on free, and a worker
 * thread's arena gives its 64 MiB heaps back as soon as they empty, so every
 * large column paid for page faults and the kernel's zeroing on each query
 * (about a fifth of a 10M-row group-by, an eighth of TPC-H q9). Morsel-sized
 * outputs (a filter's 70K rows of 8 bytes) met the same fate through the
 * arenas: TPC-H q3 at SF10 took 110,000 page faults a run from its filtered
 * lineitem alone. Instead they are mapped here in size classes (four an
 * octave, at most 1/4 above the request), those of 2 MiB and more advised
 * onto transparent huge pages; a memory resource over the host allocator (an
 * engine's) keeps the ones released on free lists of its own, one per class,
 * up to a byte budget: LADLE_BUFFER_CACHE_MB, by default 1/4 of physical
 * memory and at most 16 GiB (what a query frees cycles through the cache: at
 * SF10 TPC-H q9 frees more than 4 GiB in a run, and the blocks it freed first
 * were gone before the next run asked for them again); 0 turns the cache
 * off. The cache holds only blocks the engine had in use, and the end of a
 * query drops those released before it began that it did not take again
 * (cache_query_done), so an idle engine keeps what its last query freed, not
 * every size class any query used (16 GiB after TPC-H SF10's 22 queries,
 * before). Past the budget the
 * blocks released longest ago go first. The cache is the engine's:
 * destroying the engine unmaps what it holds, and blocks of results that
 * outlive it are unmapped when freed. Sanitizer builds skip all of it, so that
 * use-after-free stays visible. */
#if defined(__SANITIZE_ADDRESS__)
#define LADLE_BIG_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define LADLE_BIG_BLOCKS 0
#endif
#endif
#ifndef LADLE_BIG_BLOCKS
#if defined(__linux__)
#define LADLE_BIG_BLOCKS 1
#else
#define LADLE_BIG_BLOCKS 0
#endif
#endif

#include <pthread.h>

#if LADLE_BIG_BLOCKS
#include <sys/mman.h>

/* Blocks from BIG_MIN up come from the cache (a resource's) or are mapped;
 * without a resource, host_alloc maps only from HOST_MAP_MIN up. Classes: a
 * power of two p2 is split into quarters, so a request of n bytes (p2/2 < n
 * <= p2) takes 5/8, 6/8, 7/8 or p2 itself: four classes an octave, at most a
 * quarter above the request (address space only: pages never touched are
 * never mapped in). */
enum { BIG_MIN = 128 << 10, HOST_MAP_MIN = 1 << 20, BIG_OCTAVES = 40, BIG_CLASSES = 4 * 40 };

typedef struct big_block {
  void *p;
  uint64_t seq; /* when it came back: the oldest goes first */
  uint64_t gen; /* the query it came back during (block_cache.gen then) */
} big_block;

/* The free blocks of one class, most recently released on top. */
typedef struct big_stack {
  big_block *b;
  int n, cap;
} big_stack;

/* A resource's free lists of big blocks, one per size class. */
typedef struct block_cache {
  pthread_mutex_t mu;
  big_stack cls[BIG_CLASSES];
  size_t bytes, limit; /* limit 0: closed, blocks unmapped as they come back */
  uint64_t clock;
  uint64_t gen; /* queries ended (ladle_mr_query_done) */
} block_cache;

static size_t cache_budget(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  size_t phys = pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize : (size_t)8 << 30;
  size_t limit = LADLE_MIN(phys / 4, (size_t)16 << 30);
  const char *env = getenv("LADLE_BUFFER_CACHE_MB");
  if (env != NULL && *env != '\0') {
    char *end;
    unsigned long long mb = strtoull(env, &end, 10);
    if (*end == '\0') limit = (size_t)mb << 20;
  }
  return limit;
}

/* The bytes of the class `quarter` (0..3) of octave `octave` above BIG_MIN:
 * 5 + quarter eighths of the octave's power of two. */
static size_t class_bytes(int octave, int quarter) {
  return ((size_t)BIG_MIN << octave) / 8 * (size_t)(5 + quarter);
}

/* The size class of a request of n bytes (n >= BIG_MIN / 2): its bytes, and
 * its index (-1 past the last octave: mapped and unmapped, never kept). */
static size_t big_class_of(size_t n, int *idx) {
  size_t p2 = BIG_MIN;
  int o = 0;
  while (p2 < n) {
    p2 <<= 1;
    o++;
  }
  size_t step = p2 / 8;
  size_t q = (n + step - 1) / step; /* 5..8 (less only below BIG_MIN) */
  if (q < 5) q = 5;
  if (idx != NULL) *idx = o < BIG_OCTAVES ? o * 4 + (int)(q - 5) : -1;
  return class_bytes(o, (int)(q - 5));
}
static size_t big_class(size_t n) { return big_class_of(n, NULL); }

static void *map_class(size_t c) {
  void *p = mmap(NULL, c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  if (c >= ((size_t)2 << 20)) madvise(p, c, MADV_HUGEPAGE);
#endif
  return p;
}

static void *big_map(size_t n) { return map_class(big_class(n)); }
static void big_unmap(void *p, size_t n) { munmap(p, big_class(n)); }

/* The oldest block of c out of its list (under the lock): its address and
 * bytes, or false when c holds none. */
static bool cache_pop_oldest(block_cache *c, void **p, size_t *bytes) {
  int best = -1;
  for (int k = 0; k < BIG_CLASSES; k++)
    if (c->cls[k].n > 0 && (best < 0 || c->cls[k].b[0].seq < c->cls[best].b[0].seq)) best = k;
  if (best < 0) return false;
  big_stack *s = &c->cls[best];
  *p = s->b[0].p;
  memmove(&s->b[0], &s->b[1], (size_t)(s->n - 1) * sizeof *s->b);
  s->n--;
  *bytes = class_bytes(best / 4, best % 4);
  c->bytes -= *bytes;
  return true;
}

/* Unmaps blocks of c, oldest first, until it holds nothing (all) or no more
 * than its budget. */
static void cache_trim(block_cache *c, bool all) {
  enum { BATCH = 64 };
  for (;;) {
    void *ev[BATCH];
    size_t evn[BATCH];
    int ne = 0;
    pthread_mutex_lock(&c->mu);
    size_t keep = all ? 0 : c->limit;
    while (ne < BATCH && c->bytes > keep && cache_pop_oldest(c, &ev[ne], &evn[ne])) ne++;
    bool more = c->bytes > keep && ne == BATCH;
    pthread_mutex_unlock(&c->mu);
    for (int i = 0; i < ne; i++) munmap(ev[i], evn[i]);
    if (!more) return;
  }
}

/* The end of a query: the blocks that came back before it began and that it
 * did not take again are unmapped (a list's blocks are in the order they came
 * back, so they are its bottom); what it released stays for the next. */
static void cache_query_done(block_cache *c) {
  enum { BATCH = 64 };
  pthread_mutex_lock(&c->mu);
  uint64_t cur = c->gen++;
  pthread_mutex_unlock(&c->mu);
  for (int k = 0; k < BIG_CLASSES; k++) {
    for (;;) {
      void *ev[BATCH];
      int ne = 0;
      size_t bytes = class_bytes(k / 4, k % 4);
      pthread_mutex_lock(&c->mu);
      big_stack *s = &c->cls[k];
      while (ne < s->n && ne < BATCH && s->b[ne].gen < cur) {
        ev[ne] = s->b[ne].p;
        ne++;
      }
      if (ne > 0) {
        memmove(&s->b[0], &s->b[ne], (size_t)(s->n - ne) * sizeof *s->b);
        s->n -= ne;
        c->bytes -= (size_t)ne * bytes;
      }
      pthread_mutex_unlock(&c->mu);
      for (int i = 0; i < ne; i++) munmap(ev[i], bytes);
      if (ne < BATCH) break;
    }
  }
}

/* A block of n bytes from the cache c (NULL: none), or freshly mapped. When
 * the system refuses a mapping (out of memory, or of mappings) while the
 * cache holds blocks, they go back first and the mapping is tried again. */
static void *big_alloc(block_cache *c, size_t n) {
  int idx;
  size_t k = big_class_of(n, &idx);
  if (c != NULL && idx >= 0) {
    pthread_mutex_lock(&c->mu);
    big_stack *s = &c->cls[idx];
    if (s->n > 0) {
      void *p = s->b[--s->n].p;
      c->bytes -= k;
      pthread_mutex_unlock(&c->mu);
      return p;
    }
    pthread_mutex_unlock(&c->mu);
  }
  void *p = map_class(k);
  if (p == NULL && c != NULL) {
    cache_trim(c, true);
    p = map_class(k);
  }
  return p;
}

/* Block p of n bytes back to the cache c (the oldest out past its budget),
 * or unmapped. */
static void big_release(block_cache *c, void *p, size_t n) {
  int idx;
  size_t k = big_class_of(n, &idx);
  bool keep = false, over = false;
  if (c != NULL && idx >= 0) {
    pthread_mutex_lock(&c->mu);
    big_stack *s = &c->cls[idx];
    if (k <= c->limit) {
      if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        big_block *nb = realloc(s->b, (size_t)cap * sizeof *nb);
        if (nb != NULL) {
          s->b = nb;
          s->cap = cap;
        }
      }
      if (s->n < s->cap) {
        s->b[s->n++] = (big_block){p, ++c->clock, c->gen};
        c->bytes += k;
        keep = true;
        over = c->bytes > c->limit;
      }
    }
    pthread_mutex_unlock(&c->mu);
  }
  if (!keep) munmap(p, k);
  if (over) cache_trim(c, false);
}

/* Unmaps what c holds, and every block released to it from now on (its
 * owner is done; rare). */
static void cache_close(block_cache *c) {
  pthread_mutex_lock(&c->mu);
  c->limit = 0;
  pthread_mutex_unlock(&c->mu);
  cache_trim(c, true);
  pthread_mutex_lock(&c->mu);
  for (int k = 0; k < BIG_CLASSES; k++) {
    free(c->cls[k].b);
    c->cls[k] = (big_stack){NULL, 0, 0};
  }
  pthread_mutex_unlock(&c->mu);
}
#endif

/* ------------------------------------------------------- memory resources */

struct ladle_mr {
  ladle_allocator base; /* what buffers point to: ctx is this resource */
  const ladle_allocator *parent;
  int64_t limit;
  atomic_llong current, peak;
  atomic_long refs; /* the owner's and one per live block */
#if LADLE_BIG_BLOCKS
  block_cache *cache; /* big host blocks kept for reuse (NULL: none) */
#endif
};

#if LADLE_BIG_BLOCKS
#define MR_CACHE(mr) ((mr) != NULL ? (mr)->cache : NULL)
#endif

static _Thread_local ladle_mr *current_mr = NULL;
/* the last refusal by a limit on this thread, for the error message */
static _Thread_local struct {
  int set;
  size_t asked;
  long long in_use, limit;
} refused;

static void mr_unref(ladle_mr *mr) {
  if (atomic_fetch_sub_explicit(&mr->refs, 1, memory_order_acq_rel) != 1) return;
#if LADLE_BIG_BLOCKS
  if (mr->cache != NULL) {
    cache_close(mr->cache);
    pthread_mutex_destroy(&mr->cache->mu);
    free(mr->cache);
  }
#endif
  free(mr);
}

/* Counts n bytes in, or refuses them past the limit (and remembers why). */
static bool mr_take(ladle_mr *mr, size_t n) {
  long long now =
      atomic_fetch_add_explicit(&mr->current, (long long)n, memory_order_relaxed) + (long long)n;
  if (mr->limit > 0 && now > mr->limit) {
    atomic_fetch_sub_explicit(&mr->current, (long long)n, memory_order_relaxed);
    refused.set = 1;
    refused.asked = n;
    refused.in_use = now - (long long)n;
    refused.limit = mr->limit;
    return false;
  }
  long long p = atomic_load_explicit(&mr->peak, memory_order_relaxed);
  while (now > p && !atomic_compare_exchange_weak_explicit(&mr->peak, &p, now, memory_order_relaxed,
                                                           memory_order_relaxed)) {
  }
  atomic_fetch_add_explicit(&mr->refs, 1, memory_order_relaxed);
  return true;
}

static void mr_give(ladle_mr *mr, size_t n) {
  atomic_fetch_sub_explicit(&mr->current, (long long)n, memory_order_relaxed);
  mr_unref(mr);
}

static void *mr_alloc(void *ctx, size_t size) {
  ladle_mr *mr = ctx;
  if (!mr_take(mr, size)) return NULL;
  void *p;
#if LADLE_BIG_BLOCKS
  if (mr->cache != NULL && size >= BIG_MIN)
    p = big_alloc(mr->cache, size);
  else
#endif
    p = mr->parent->alloc(mr->parent->ctx, size);
  if (p == NULL) mr_give(mr, size);
  return p;
}

static void mr_free(void *ctx, void *p, size_t size) {
  ladle_mr *mr = ctx;
#if LADLE_BIG_BLOCKS
  if (mr->cache != NULL && size >= BIG_MIN)
    big_release(mr->cache, p, size);
  else
#endif
    mr->parent->free(mr->parent->ctx, p, size);
  mr_give(mr, size);
}

ladle_status ladle_mr_create(const ladle_allocator *parent, int64_t limit, ladle_mr **out,
                             ladle_error *err) {
  if (limit < 0)
    return ladle_err_set(err, LADLE_EINVAL, "memory_limit=%lld: must be 0 (no limit) or more",
                         (long long)limit);
  if (parent == NULL) parent = ladle_allocator_host();
  ladle_mr *mr = calloc(1, sizeof *mr);
  if (mr == NULL) return LADLE_OOM(err, "memory resource");
  mr->base =
      (ladle_allocator){mr_alloc, mr_free, mr, parent->device, parent->device_id, parent->name};
  mr->parent = parent;
  mr->limit = limit;
  atomic_init(&mr->current, 0);
  atomic_init(&mr->peak, 0);
  atomic_init(&mr->refs, 1);
#if LADLE_BIG_BLOCKS
  size_t budget = parent == ladle_allocator_host() ? cache_budget() : 0;
  if (budget > 0 && (mr->cache = calloc(1, sizeof *mr->cache)) != NULL) {
    pthread_mutex_init(&mr->cache->mu, NULL);
    mr->cache->limit = budget;
  }
#endif
  *out = mr;
  return LADLE_OK;
}

void ladle_mr_release(ladle_mr *mr) {
  if (mr == NULL) return;
#if LADLE_BIG_BLOCKS
  /* the owner is done: what the cache holds goes back to the system now, and
   * blocks of results still alive go back as they are freed */
  if (mr->cache != NULL) cache_close(mr->cache);
#endif
  mr_unref(mr);
}

ladle_mr *ladle_mr_ref(ladle_mr *mr) {
  if (mr != NULL) atomic_fetch_add_explicit(&mr->refs, 1, memory_order_relaxed);
  return mr;
}

void ladle_mr_unref(ladle_mr *mr) {
  if (mr != NULL) mr_unref(mr);
}

int64_t ladle_mr_cached(const ladle_mr *mr) {
#if LADLE_BIG_BLOCKS
  if (mr == NULL || mr->cache == NULL) return 0;
  block_cache *c = mr->cache;
  pthread_mutex_lock(&c->mu);
  int64_t n = (int64_t)c->bytes;
  pthread_mutex_unlock(&c->mu);
  return n;
#else
  LADLE_UNUSED(mr);
  return 0;
#endif
}

void ladle_mr_query_done(ladle_mr *mr) {
#if LADLE_BIG_BLOCKS
  if (mr != NULL && mr->cache != NULL) cache_query_done(mr->cache);
#else
  LADLE_UNUSED(mr);
#endif
}

ladle_mr *ladle_mr_set(ladle_mr *mr) {
  ladle_mr *was = current_mr;
  current_mr = mr;
  return was;
}

ladle_mr *ladle_mr_current(void) { return current_mr; }
const ladle_allocator *ladle_mr_allocator(ladle_mr *mr) { return mr != NULL ? &mr->base : NULL; }
int64_t ladle_mr_bytes(const ladle_mr *mr) {
  return atomic_load(&((ladle_mr *)(uintptr_t)mr)->current);
}
int64_t ladle_mr_peak(const ladle_mr *mr) {
  return atomic_load(&((ladle_mr *)(uintptr_t)mr)->peak);
}

ladle_status ladle_err_oom(ladle_error *err, const char *what) {
  if (refused.set) {
    refused.set = 0;
    return ladle_err_set(err, LADLE_ENOMEM,
                         "memory limit exceeded: %s needed %zu bytes with %lld in use, past the "
                         "engine's memory_limit of %lld bytes",
                         what, refused.asked, refused.in_use, refused.limit);
  }
  return ladle_err_set(err, LADLE_ENOMEM, "out of memory: %s", what);
}

/* Scratch arrays (group ids, join pairs, row indices) with the size in a
 * header, so that big ones come from the same size classes as big buffers and
 * are freed without the caller knowing their size. */
typedef struct scratch_head {
  size_t total; /* bytes mapped or allocated, header included */
  ladle_mr *mr; /* the resource it was counted in, or NULL */
  int big;
  char pad[64 - 2 * sizeof(size_t) - sizeof(int)];
} scratch_head;

void *ladle_zalloc(size_t n) {
  void *p = malloc(LADLE_MAX(n, 1));
  if (p != NULL) memset(p, 0, n);
  return p;
}

void *ladle_scratch_alloc(size_t size, bool zero) {
  size_t total = size + sizeof(scratch_head);
  if (total < size) return NULL;
  ladle_mr *mr = current_mr;
  if (mr != NULL && !mr_take(mr, total)) return NULL;
  scratch_head *h = NULL;
  int big = 0;
#if LADLE_BIG_BLOCKS
  if (total >= BIG_MIN) {
    h = big_alloc(MR_CACHE(mr), total);
    /* zeroed by writing even when fresh from mmap: see ladle_zalloc */
    if (h != NULL && zero) memset(h + 1, 0, size);
    big = 1;
  }
#endif
  if (!big) h = zero ? ladle_zalloc(total) : malloc(total);
  if (h == NULL) {
    if (mr != NULL) mr_give(mr, total);
    return NULL;
  }
  h->big = big;
  h->total = total;
  h->mr = mr;
  return h + 1;
}

void ladle_scratch_free(void *p) {
  if (p == NULL) return;
  scratch_head *h = (scratch_head *)p - 1;
  ladle_mr *mr = h->mr;
  size_t total = h->total;
#if LADLE_BIG_BLOCKS
  if (h->big) {
    big_release(MR_CACHE(mr), h, total);
    if (mr != NULL) mr_give(mr, total);
    return;
  }
#endif
  free(h);
  if (mr != NULL) mr_give(mr, total);
}

static void *host_alloc(void *ctx, size_t size) {
  LADLE_UNUSED(ctx);
#if LADLE_BIG_BLOCKS
  if (size >= HOST_MAP_MIN) return big_map(size); /* no resource: no cache */
#endif
  void *p = NULL;
  /* Round up so that aligned_alloc's size rule holds; never ask for 0 bytes. */
  size_t n = (LADLE_MAX(size, (size_t)1) + 63) & ~(size_t)63;
  if (posix_memalign(&p, 64, n) != 0) return NULL;
  return p;
}

static void host_free(void *ctx, void *p, size_t size) {
  LADLE_UNUSED(ctx);
#if LADLE_BIG_BLOCKS
  if (size >= HOST_MAP_MIN) {
    big_unmap(p, size);
    return;
  }
#endif
  free(p);
}

static const ladle_allocator host_allocator = {host_alloc,       host_free, NULL,
                                               LADLE_DEVICE_CPU, 0,         "host"};

const ladle_allocator *ladle_allocator_host(void) { return &host_allocator; }

ladle_status ladle_buffer_alloc(const ladle_allocator *alloc, size_t size, ladle_buffer **out,
                                ladle_error *err) {
  if (alloc == NULL) alloc = current_mr != NULL ? &current_mr->base : &host_allocator;
  ladle_buffer *b = malloc(sizeof *b);
  if (b == NULL) return LADLE_OOM(err, "buffer header");
  b->data = alloc->alloc(alloc->ctx, size);
  if (b->data == NULL) {
    free(b);
    if (refused.set) return LADLE_OOM(err, "a buffer");
    return ladle_err_set(err, LADLE_ENOMEM, "out of memory: %zu bytes from the %s allocator", size,
                         alloc->name);
  }
  atomic_init(&b->refcount, 1);
  b->size = size;
  b->device = alloc->device;
  b->device_id = alloc->device_id;
  b->alloc = alloc;
  b->foreign_release = NULL;
  b->owner = NULL;
  *out = b;
  return LADLE_OK;
}

ladle_status ladle_buffer_wrap(void *data, size_t size, void (*release)(void *owner), void *owner,
                               ladle_buffer **out, ladle_error *err) {
  ladle_buffer *b = malloc(sizeof *b);
  if (b == NULL) return LADLE_OOM(err, "buffer header");
  atomic_init(&b->refcount, 1);
  b->data = data;
  b->size = size;
  b->device = LADLE_DEVICE_CPU;
  b->device_id = 0;
  b->alloc = NULL;
  b->foreign_release = release;
  b->owner = owner;
  *out = b;
  return LADLE_OK;
}

ladle_buffer *ladle_buffer_ref(ladle_buffer *b) {
  if (b != NULL) atomic_fetch_add_explicit(&b->refcount, 1, memory_order_relaxed);
  return b;
}

void ladle_buffer_release(ladle_buffer *b) {
  if (b == NULL) return;
  if (atomic_fetch_sub_explicit(&b->refcount, 1, memory_order_acq_rel) != 1) return;
  if (b->alloc != NULL)
    b->alloc->free(b->alloc->ctx, b->data, b->size);
  else if (b->foreign_release != NULL)
    b->foreign_release(b->owner);
  free(b);
}
