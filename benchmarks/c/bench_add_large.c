/* bench_add_large.c — (c) pith_add of two 16M-element float32 tensors, allocating its output
 * every call (released every iteration), against a plain OpenMP loop c[i] = a[i] + b[i]
 * writing into one reused buffer, in the same run with the same thread count. Reports
 * loop_time / pith_time (medians; the two are interleaved so that drift hits both alike).
 * Only pith's allocator cache can make a fresh 64 MiB output as cheap as a reused one. */
#include "bench_common.h"


enum { N = 16 * 1024 * 1024, REPETITIONS = 31 };

static void loop_add(float *restrict c, const float *restrict a, const float *restrict b,
                     int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < N; i++)
        c[i] = a[i] + b[i];
}

int main(void)
{
    int threads = bench_threads();
    printf("bench_add_large: pith %s, %d threads, %d float32, median of %d\n", pith_version(),
           threads, N, REPETITIONS);
    pith_tensor *a = bench_vector(N, 1.0f), *b = bench_vector(N, 2.0f);
    const float *a_data = pith_data_ptr(a), *b_data = pith_data_ptr(b);
    float *reused = aligned_alloc(64, (size_t)N * sizeof(float));
    bench_check(reused != NULL, "aligned_alloc");
    loop_add(reused, a_data, b_data, threads); /* first touch: page faults, not timed */

    double pith_times[REPETITIONS], loop_times[REPETITIONS];
    for (int rep = -1; rep < REPETITIONS; rep++) { /* rep -1 warms up both */
        double start = bench_seconds();
        pith_tensor *c = pith_add(a, b);
        double pith_time = bench_seconds() - start;
        bench_check(c != NULL, "pith_add");
        if (rep == -1) { /* check the values once */
            const float *c_data = pith_data_ptr(c);
            for (int64_t i = 0; i < N; i += 4099)
                bench_check(c_data[i] == a_data[i] + b_data[i], "pith_add's values");
        }
        pith_release(c);

        start = bench_seconds();
        loop_add(reused, a_data, b_data, threads);
        double loop_time = bench_seconds() - start;
        if (rep >= 0) {
            pith_times[rep] = pith_time;
            loop_times[rep] = loop_time;
        }
    }
    double pith_median = bench_median(pith_times, REPETITIONS);
    double loop_median = bench_median(loop_times, REPETITIONS);
    printf("pith_add (fresh output): %.3f ms; OpenMP loop (reused buffer): %.3f ms\n",
           1e3 * pith_median, 1e3 * loop_median);
    bench_result("add_16m_pith_ms", "(c) pith_add, 16M float32, allocating its output",
                 1e3 * pith_median, "ms", "-");
    bench_result("add_16m_loop_ms", "(c) OpenMP loop c[i]=a[i]+b[i], reused buffer",
                 1e3 * loop_median, "ms", "-");
    bench_result("add_16m_ratio", "(c) loop_time / pith_time, 16M float32 add",
                 loop_median / pith_median, "ratio", ">= 0.9");
    free(reused);
    pith_release(a);
    pith_release(b);
    return 0;
}
