/* bench_common.h — timing and reporting helpers shared by the C benchmarks.
 *
 * Every figure is the median over many repetitions, timed with CLOCK_MONOTONIC. A benchmark
 * prints human-readable lines and, for each figure, one machine-readable line
 *   RESULT <tab> key <tab> figure <tab> value <tab> unit <tab> target
 * that benchmarks/c/run.sh turns into the table of results.md. */
#ifndef PITH_BENCH_COMMON_H
#define PITH_BENCH_COMMON_H

#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pith/pith.h>

static inline double bench_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Aborts the benchmark with pith's message: a benchmark of a failing call means nothing. */
static inline void bench_check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "benchmark: %s failed: %s\n", what, pith_last_error());
        exit(1);
    }
}

static inline void bench_result(const char *key, const char *figure, double value,
                                const char *unit, const char *target)
{
    printf("%-58s %12.4g %s (target %s)\n", figure, value, unit, target);
    printf("RESULT\t%s\t%s\t%.4g\t%s\t%s\n", key, figure, value, unit, target);
}

/* The thread count for the benchmarks and their reference loops: PITH_NUM_THREADS when
 * set (run.sh sets it to 2), else pith's own default. */
static inline int bench_threads(void)
{
    const char *env = getenv("PITH_NUM_THREADS");
    int n = env ? atoi(env) : 0;
    if (n > 0)
        pith_set_num_threads(n);
    return pith_get_num_threads();
}

/* A float32 tensor of `n` values filled with a simple pattern. */
static inline pith_tensor *bench_vector(int64_t n, float scale)
{
    pith_tensor *t = pith_empty(1, &n, PITH_FLOAT32);
    bench_check(t != NULL, "pith_empty");
    float *data = pith_data_ptr(t);
    for (int64_t i = 0; i < n; i++)
        data[i] = scale * (float)(i % 1000) / 1000.0f;
    return t;
}

#endif /* PITH_BENCH_COMMON_H */
