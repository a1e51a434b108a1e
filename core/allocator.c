/* allocator.c — 64-byte-aligned allocation and the cache of large freed blocks.
 *
 * Small storage does not come here at all when it fits inline (storage.c). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/allocator.h"
#include "core/error.h"

#if defined(PITH_ASAN) && __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#define CACHE_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define CACHE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define CACHE_POISON(p, n) ((void)(p), (void)(n))
#define CACHE_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Note [Allocator cache]
 * Why: a fresh 64 MiB output costs ~125 ms in page faults (glibc serves it with mmap and
 * gives it back with munmap on free, so every `x + y` faults in every page again), against
 * ~4.7 ms for the add itself into a reused buffer. So freed blocks of at least
 * PITH_CACHE_MIN_BLOCK (64 KiB) bytes are kept, already faulted in, and handed to the
 * next request of the same size class. Smaller blocks go straight to malloc, whose own
 * caches serve them well.
 *
 * Why 64 KiB and not more: glibc serves a block between its trim threshold (128 KiB by
 * default, raised with its mmap threshold as it adapts) and its mmap threshold from the top
 * of the heap, and when that block is freed back into the top chunk, a top chunk above the
 * trim threshold is given back with sbrk. The next request of the same size then faults
 * every page in again. Whether that happens depends on the whole history of the heap: with
 * a (4, 64, 768) float32 output (768 KiB), `x * y` cost 37 us in one process and 300-440 us
 * in another (117 page faults per call), on the same machine. Keeping every block above
 * glibc's smallest trim threshold ourselves takes the heap's history out of it.
 *
 * Size classes: a request of n >= 64 KiB is rounded up to a multiple of 2^(k-2), where
 * 2^k <= n < 2^(k+1): four classes per power of two, at most 25% slack (untouched slack
 * pages are never faulted in). A block is always allocated at its class size, so any
 * cached block of a class serves any request of that class.
 *
 * Limit: the cache holds at most `cache_limit` bytes (default 256 MiB, PITH_CACHE_LIMIT
 * read once at first use, or pith_cache_set_limit). A freed block that does not fit is
 * returned to the system; lowering the limit trims the cache at once. pith_cache_empty()
 * returns everything.
 *
 * Threads: one mutex guards the buckets; it is taken only for large blocks, where the
 * lock costs nothing next to the work on a megabyte.
 *
 * ASan: cached blocks are poisoned (all but the link word at their start), so a use after
 * free of a cached block is still reported; they are unpoisoned when handed out. */

typedef struct cache_block {
    struct cache_block *next;
} cache_block;

#define CACHE_MIN_LOG2 PITH_CACHE_MIN_LOG2
#define CACHE_BUCKETS ((64 - CACHE_MIN_LOG2) * 4) /* k in [16, 63], four classes each */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_block *cache_buckets[CACHE_BUCKETS];
static size_t cache_bytes_held; /* guarded by cache_lock */
static _Atomic size_t cache_bytes_shadow; /* lock-free reads for pith_cache_bytes */
static _Atomic size_t cache_limit = PITH_CACHE_DEFAULT_LIMIT;
static pthread_once_t cache_env_once = PTHREAD_ONCE_INIT;

static void cache_read_env(void)
{
    const char *env = getenv("PITH_CACHE_LIMIT");
    if (!env || !*env)
        return;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (errno || end == env || *env == '-')
        return; /* unparsable: keep the default */
    unsigned long long mult = 1;
    if (*end == 'k' || *end == 'K')
        mult = 1ull << 10;
    else if (*end == 'm' || *end == 'M')
        mult = 1ull << 20;
    else if (*end == 'g' || *end == 'G')
        mult = 1ull << 30;
    else if (*end != '\0')
        return;
    if (mult > 1 && v > SIZE_MAX / mult)
        v = SIZE_MAX / mult;
    atomic_store(&cache_limit, (size_t)(v * mult));
}

static void cache_init(void)
{
    pthread_once(&cache_env_once, cache_read_env);
}

/* floor(log2(n)) for n > 0 */
static int log2_floor(size_t n)
{
    return 63 - __builtin_clzll((unsigned long long)n);
}

size_t alloc_size_class(size_t nbytes)
{
    if (nbytes < PITH_CACHE_MIN_BLOCK) /* round to the alignment */
        return nbytes > SIZE_MAX - (PITH_ALIGNMENT - 1)
                   ? SIZE_MAX
                   : (nbytes + PITH_ALIGNMENT - 1) & ~(size_t)(PITH_ALIGNMENT - 1);
    int k = log2_floor(nbytes);
    size_t step = (size_t)1 << (k - 2);
    if (nbytes > SIZE_MAX - (step - 1))
        return SIZE_MAX; /* cannot be allocated anyway */
    return (nbytes + step - 1) & ~(step - 1);
}

/* The bucket of a class size (>= PITH_CACHE_MIN_BLOCK, as returned by alloc_size_class). */
static int cache_bucket(size_t class_size)
{
    int k = log2_floor(class_size);
    size_t j = (class_size - ((size_t)1 << k)) >> (k - 2); /* 0..3 */
    return (k - CACHE_MIN_LOG2) * 4 + (int)j;
}

static void cache_account(size_t held)
{
    cache_bytes_held = held;
    atomic_store_explicit(&cache_bytes_shadow, held, memory_order_relaxed);
}

static void *cache_pop(size_t class_size)
{
    int b = cache_bucket(class_size);
    pthread_mutex_lock(&cache_lock);
    cache_block *blk = cache_buckets[b];
    if (blk) {
        cache_buckets[b] = blk->next;
        cache_account(cache_bytes_held - class_size);
    }
    pthread_mutex_unlock(&cache_lock);
    if (blk)
        CACHE_UNPOISON(blk, class_size);
    return blk;
}

static bool cache_push(void *p, size_t class_size)
{
    size_t limit = atomic_load(&cache_limit);
    bool kept = false;
    pthread_mutex_lock(&cache_lock);
    if (class_size <= limit && cache_bytes_held <= limit - class_size) {
        cache_block *blk = p;
        int b = cache_bucket(class_size);
        blk->next = cache_buckets[b];
        cache_buckets[b] = blk;
        cache_account(cache_bytes_held + class_size);
        CACHE_POISON((char *)p + sizeof(cache_block), class_size - sizeof(cache_block));
        kept = true;
    }
    pthread_mutex_unlock(&cache_lock);
    return kept;
}

/* Frees cached blocks until the cache holds at most `target` bytes. */
static void cache_trim(size_t target)
{
    cache_block *to_free = NULL;
    pthread_mutex_lock(&cache_lock);
    for (int b = CACHE_BUCKETS - 1; b >= 0 && cache_bytes_held > target; b--) {
        int k = b / 4 + CACHE_MIN_LOG2;
        size_t class_size = ((size_t)1 << k) + (size_t)(b % 4) * ((size_t)1 << (k - 2));
        while (cache_buckets[b] && cache_bytes_held > target) {
            cache_block *blk = cache_buckets[b];
            cache_buckets[b] = blk->next;
            cache_account(cache_bytes_held - class_size);
            blk->next = to_free;
            to_free = blk;
        }
    }
    pthread_mutex_unlock(&cache_lock);
    while (to_free) { /* free outside the lock: munmap is slow */
        cache_block *next = to_free->next;
        free(to_free);
        to_free = next;
    }
}

void *alloc_bytes(size_t nbytes)
{
    size_t class_size = alloc_size_class(nbytes);
    if (class_size == SIZE_MAX || class_size == 0)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "cannot allocate %zu bytes", nbytes);
    if (class_size >= PITH_CACHE_MIN_BLOCK) {
        cache_init();
        void *p = cache_pop(class_size);
        if (p)
            return p;
    }
    void *p = NULL;
    if (posix_memalign(&p, PITH_ALIGNMENT, class_size) != 0) {
        /* Memory held by the cache may be what is missing: return it and retry once. */
        cache_trim(0);
        if (posix_memalign(&p, PITH_ALIGNMENT, class_size) != 0)
            return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory allocating %zu bytes",
                                  nbytes);
    }
    return p;
}

void alloc_free(void *p, size_t nbytes)
{
    if (!p)
        return;
    size_t class_size = alloc_size_class(nbytes);
    if (class_size >= PITH_CACHE_MIN_BLOCK) {
        cache_init();
        if (cache_push(p, class_size))
            return;
    }
    free(p);
}

/* ---- public API ---- */

void pith_cache_set_limit(size_t bytes)
{
    cache_init();
    atomic_store(&cache_limit, bytes);
    cache_trim(bytes);
}

size_t pith_cache_limit(void)
{
    cache_init();
    return atomic_load(&cache_limit);
}

size_t pith_cache_bytes(void)
{
    return atomic_load_explicit(&cache_bytes_shadow, memory_order_relaxed);
}

void pith_cache_empty(void)
{
    cache_trim(0);
}
