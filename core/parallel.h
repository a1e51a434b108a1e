/* parallel.h — how many OpenMP threads a kernel may use.
 *
 * Note [Thread count and grain size]
 * The thread count is one process-wide value (pith_set_num_threads, PITH_NUM_THREADS, or
 * the OpenMP default), passed to each region as num_threads(...), because
 * omp_set_num_threads is per thread. Work below PITH_GRAIN_SIZE elements runs serially so
 * that small tensors pay nothing for threads. After fork() the child runs serially
 * (a pthread_atfork handler), because libgomp is not fork-safe. */
#ifndef PITH_CORE_PARALLEL_H
#define PITH_CORE_PARALLEL_H

#include <stdint.h>

#define PITH_GRAIN_SIZE 32768

/* The thread count for `work` units of elementwise-sized work: 1 below the grain size or
 * in a forked child, else the configured count (capped by the work's grain count). */
int parallel_threads_for(int64_t work);

/* Registers the one function that is told the thread count whenever it takes a value:
 * its first read (PITH_NUM_THREADS or OpenMP's default) and every pith_set_num_threads,
 * called on the thread that set it, in the order of the settings. It is how a BLAS that
 * keeps a count of its own follows pith's (See Note [BLAS threads]); when it is registered
 * after the first read, it is called at once with the current count. */
void parallel_set_count_listener(void (*listener)(int threads));

/* Note [No OpenMP region for one thread]
 * libgomp enters a full parallel region even for `omp parallel if(0)` or num_threads(1):
 * a team is set up and torn down, which costs several hundred ns, more than a small
 * kernel. So a kernel that may run serially must not open a region at all; these two
 * macros branch around the pragma. Outside a region omp_get_thread_num() is 0 and
 * omp_get_num_threads() is 1, so a body that splits work by thread runs whole. */

/* Runs the statements after `count` for `var` in [0, count), on `nthreads` threads. */
#define PITH_PARALLEL_FOR(var, count, nthreads, ...)                                        \
    do {                                                                                    \
        int64_t count_ = (count);                                                           \
        int nthreads_ = (nthreads);                                                         \
        if (nthreads_ > 1) {                                                                \
            _Pragma("omp parallel for num_threads(nthreads_) schedule(static)")             \
            for (int64_t var = 0; var < count_; var++) {                                    \
                __VA_ARGS__                                                                 \
            }                                                                               \
        } else {                                                                            \
            for (int64_t var = 0; var < count_; var++) {                                    \
                __VA_ARGS__                                                                 \
            }                                                                               \
        }                                                                                   \
    } while (0)

/* Runs the statements once per thread of a region of `nthreads` threads (once, with no
 * region, when nthreads <= 1). */
#define PITH_PARALLEL_REGION(nthreads, ...)                                                 \
    do {                                                                                    \
        int nthreads_ = (nthreads);                                                         \
        if (nthreads_ > 1) {                                                                \
            _Pragma("omp parallel num_threads(nthreads_)")                                  \
            {                                                                               \
                __VA_ARGS__                                                                 \
            }                                                                               \
        } else {                                                                            \
            __VA_ARGS__                                                                     \
        }                                                                                   \
    } while (0)

#endif /* PITH_CORE_PARALLEL_H */
