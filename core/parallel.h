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

#endif /* PITH_CORE_PARALLEL_H */
