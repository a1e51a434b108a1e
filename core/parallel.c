/* parallel.c — the process-wide thread count and the grain-size rule.
 * See Note [Thread count and grain size] in parallel.h. */
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/parallel.h"

static atomic_int thread_count;       /* 0 until first use */
static atomic_bool in_forked_child;  /* set in a fork child: libgomp is not fork-safe */
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;
/* Orders the settings of thread_count with the listener's calls, so that the last
 * listener call carries the last setting. */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*count_listener)(int threads); /* under count_lock */

static void parallel_atfork_child(void)
{
    atomic_store(&in_forked_child, true);
    /* Another thread of the parent may have held it at fork; none of them exists here. */
    pthread_mutex_init(&count_lock, NULL);
}

/* Runs at load so that even a fork before the first kernel marks the child. */
__attribute__((constructor)) static void parallel_register_atfork(void)
{
    pthread_atfork(NULL, NULL, parallel_atfork_child);
}

static void threads_init(void)
{
    int n = 0;
    const char *env = getenv("PITH_NUM_THREADS");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end != env && *end == '\0' && v > 0 && v <= 4096)
            n = (int)v;
    }
    if (n <= 0 && !atomic_load(&in_forked_child))
        n = omp_get_max_threads();
    if (n <= 0)
        n = 1;
    pthread_mutex_lock(&count_lock);
    atomic_store(&thread_count, n);
    if (count_listener)
        count_listener(n);
    pthread_mutex_unlock(&count_lock);
}

void parallel_set_count_listener(void (*listener)(int threads))
{
    pthread_mutex_lock(&count_lock);
    count_listener = listener;
    int n = atomic_load(&thread_count);
    if (listener && n > 0)
        listener(n);
    pthread_mutex_unlock(&count_lock);
}

void pith_set_num_threads(int n)
{
    if (n < 1) {
        pith_set_error(PITH_ERR_VALUE, "set_num_threads: expected a positive number, got %d", n);
        return;
    }
    pthread_once(&threads_once, threads_init);
    pthread_mutex_lock(&count_lock);
    atomic_store(&thread_count, n);
    if (count_listener)
        count_listener(n);
    pthread_mutex_unlock(&count_lock);
}

int pith_get_num_threads(void)
{
    pthread_once(&threads_once, threads_init);
    return atomic_load_explicit(&thread_count, memory_order_relaxed);
}

int parallel_threads_for(int64_t work)
{
    if (work < PITH_GRAIN_SIZE || atomic_load_explicit(&in_forked_child, memory_order_relaxed))
        return 1;
    int n = pith_get_num_threads();
    int64_t grains = work / PITH_GRAIN_SIZE;
    return grains < n ? (int)grains : n;
}
