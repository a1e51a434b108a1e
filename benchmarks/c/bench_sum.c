/* bench_sum.c — (e) pith_sum over 16M float32 values, in GB/s of input read, and for
 * reference a plain OpenMP reduction loop over the same data with the same thread count.
 * The loop accumulates in double, as pith does for float32 (Note [Reduction accumulators]),
 * so that both give the right answer for 16M values. */
#include "bench_common.h"


enum { N = 16 * 1024 * 1024, REPETITIONS = 31 };

static double loop_sum(const float *x, int threads)
{
    double total = 0.0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : total)
    for (int64_t i = 0; i < N; i++)
        total += x[i];
    return total;
}

int main(void)
{
    int threads = bench_threads();
    printf("bench_sum: pith %s, %d threads, %d float32, median of %d\n", pith_version(),
           threads, N, REPETITIONS);
    pith_tensor *x = bench_vector(N, 1.0f);
    const float *x_data = pith_data_ptr(x);
    volatile double sink = 0.0;
    double exact = 0.0; /* the reference value, summed serially in double */
    for (int64_t i = 0; i < N; i++)
        exact += (double)x_data[i];

    double pith_times[REPETITIONS], loop_times[REPETITIONS];
    for (int rep = -1; rep < REPETITIONS; rep++) {
        double start = bench_seconds();
        pith_tensor *s = pith_sum(x, 0, NULL, false);
        double pith_time = bench_seconds() - start;
        bench_check(s != NULL, "pith_sum");
        double value = 0;
        bench_check(pith_item(s, &value) == PITH_OK, "pith_item");
        pith_release(s);

        start = bench_seconds();
        sink = loop_sum(x_data, threads);
        double loop_time = bench_seconds() - start;
        if (rep == -1) {
            bench_check(value / exact - 1 < 1e-6 && value / exact - 1 > -1e-6, "pith_sum's value");
            bench_check(sink / exact - 1 < 1e-6 && sink / exact - 1 > -1e-6, "the loop's value");
        } else {
            pith_times[rep] = pith_time;
            loop_times[rep] = loop_time;
        }
    }
    double bytes = (double)N * sizeof(float);
    double pith_rate = bytes / bench_median(pith_times, REPETITIONS) * 1e-9;
    double loop_rate = bytes / bench_median(loop_times, REPETITIONS) * 1e-9;
    bench_result("sum_16m_pith_gbs", "(e) pith_sum, 16M float32", pith_rate, "GB/s", "-");
    bench_result("sum_16m_loop_gbs", "(e) OpenMP reduction loop, 16M float32 (reference)",
                 loop_rate, "GB/s", "-");
    pith_release(x);
    return 0;
}
