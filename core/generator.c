/* generator.c — pith_generator: the state of a counter-based random stream.
 *
 * Note [Generators]
 * A generator is (seed, offset) under a lock; See Note [Counter-based random numbers] in
 * kernels/random.c for how ops turn a reservation of counter blocks into numbers. So:
 *   - the state is two integers, and get_state/set_state round-trip it exactly (the
 *     Python form is a uint8 tensor of 16 bytes: seed then offset, little-endian);
 *   - two generators with the same state give the same numbers for the same ops, and a
 *     generator never affects another (the default one included);
 *   - the default generator (pith_default_generator, what pith_manual_seed and every op
 *     called without a generator use) is a static object: retain and release do nothing
 *     to it, and it lives as long as the process.
 * A generator is shared between threads and interpreters like a tensor: the refcount is
 * atomic and the lock covers every read or write of the state. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/generator.h"

/* PyTorch's default seed, so that an unseeded process starts from a fixed stream. */
#define PITH_DEFAULT_SEED UINT64_C(67280421310721)

struct pith_generator {
    atomic_int_fast64_t refcount; /* < 0: the static default generator */
    pthread_mutex_t lock;
    uint64_t seed;
    uint64_t offset;
};

static pith_generator default_generator = {
    .refcount = -1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .seed = PITH_DEFAULT_SEED,
    .offset = 0,
};

pith_generator *pith_default_generator(void)
{
    return &default_generator;
}

pith_generator *pith_generator_new(uint64_t seed)
{
    pith_generator *g = malloc(sizeof *g);
    if (!g)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory allocating a generator");
    atomic_init(&g->refcount, 1);
    pthread_mutex_init(&g->lock, NULL);
    g->seed = seed;
    g->offset = 0;
    return g;
}

void pith_generator_retain(pith_generator *g)
{
    if (g && atomic_load_explicit(&g->refcount, memory_order_relaxed) >= 0)
        atomic_fetch_add_explicit(&g->refcount, 1, memory_order_relaxed);
}

void pith_generator_release(pith_generator *g)
{
    if (!g || atomic_load_explicit(&g->refcount, memory_order_relaxed) < 0)
        return;
    if (atomic_fetch_sub_explicit(&g->refcount, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&g->lock);
        free(g);
    }
}

static pith_generator *or_default(pith_generator *g)
{
    return g ? g : &default_generator;
}

void pith_generator_manual_seed(pith_generator *g, uint64_t seed)
{
    g = or_default(g);
    pthread_mutex_lock(&g->lock);
    g->seed = seed;
    g->offset = 0;
    pthread_mutex_unlock(&g->lock);
}

/* A seed nobody can predict: /dev/urandom, or the clock and the address space when it
 * cannot be read. */
static uint64_t fresh_seed(void)
{
    uint64_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, &s, sizeof s);
        close(fd);
        if (got == (ssize_t)sizeof s)
            return s;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s = (uint64_t)ts.tv_sec * UINT64_C(1000000007) ^ (uint64_t)ts.tv_nsec ^
        (uint64_t)(uintptr_t)&s;
    return s;
}

uint64_t pith_generator_seed(pith_generator *g)
{
    uint64_t s = fresh_seed();
    pith_generator_manual_seed(g, s);
    return s;
}

uint64_t pith_generator_initial_seed(pith_generator *g)
{
    g = or_default(g);
    pthread_mutex_lock(&g->lock);
    uint64_t s = g->seed;
    pthread_mutex_unlock(&g->lock);
    return s;
}

void pith_generator_get_state(pith_generator *g, uint64_t *seed, uint64_t *offset)
{
    g = or_default(g);
    pthread_mutex_lock(&g->lock);
    *seed = g->seed;
    *offset = g->offset;
    pthread_mutex_unlock(&g->lock);
}

void pith_generator_set_state(pith_generator *g, uint64_t seed, uint64_t offset)
{
    g = or_default(g);
    pthread_mutex_lock(&g->lock);
    g->seed = seed;
    g->offset = offset;
    pthread_mutex_unlock(&g->lock);
}

void generator_reserve(pith_generator *g, uint64_t nblocks, uint64_t *seed, uint64_t *first)
{
    g = or_default(g);
    pthread_mutex_lock(&g->lock);
    *seed = g->seed;
    *first = g->offset;
    g->offset += nblocks;
    pthread_mutex_unlock(&g->lock);
}
