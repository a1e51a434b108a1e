/* bench_matmul.c — (d) a 1024x1024 float32 pith_matmul (allocating its output) against a
 * direct cblas_sgemm into one reused buffer, in the same run with the same thread count.
 * Reports cblas_time / pith_time (medians, interleaved). */
#include "bench_common.h"

#include <cblas.h>
#include <math.h>

enum { N = 1024, REPETITIONS = 31 };

int main(void)
{
    int threads = bench_threads();
    openblas_set_num_threads(threads);
    printf("bench_matmul: pith %s, %d threads, %dx%d float32, median of %d\n", pith_version(),
           threads, N, N, REPETITIONS);
    printf("OpenBLAS: %s; core %s\n", openblas_get_config(), openblas_get_corename());
    const int64_t sizes[2] = {N, N};
    pith_manual_seed(1);
    pith_tensor *a = pith_randn(2, sizes, PITH_FLOAT32), *b = pith_randn(2, sizes, PITH_FLOAT32);
    bench_check(a && b, "pith_randn");
    const float *a_data = pith_data_ptr(a), *b_data = pith_data_ptr(b);
    float *reused = aligned_alloc(64, (size_t)N * N * sizeof(float));
    bench_check(reused != NULL, "aligned_alloc");

    double pith_times[REPETITIONS], cblas_times[REPETITIONS];
    for (int rep = -1; rep < REPETITIONS; rep++) { /* rep -1 warms up both */
        double start = bench_seconds();
        pith_tensor *c = pith_matmul(a, b);
        double pith_time = bench_seconds() - start;
        bench_check(c != NULL, "pith_matmul");

        start = bench_seconds();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a_data, N,
                    b_data, N, 0.0f, reused, N);
        double cblas_time = bench_seconds() - start;
        if (rep == -1) { /* the same numbers, up to summation order */
            const float *c_data = pith_data_ptr(c);
            for (int64_t i = 0; i < (int64_t)N * N; i += 4099) {
                float d = c_data[i] - reused[i], tolerance = 1e-4f * (1.0f + fabsf(reused[i]));
                bench_check(d <= tolerance && d >= -tolerance, "pith_matmul's values");
            }
        }
        pith_release(c);
        if (rep >= 0) {
            pith_times[rep] = pith_time;
            cblas_times[rep] = cblas_time;
        }
    }
    double pith_median = bench_median(pith_times, REPETITIONS);
    double cblas_median = bench_median(cblas_times, REPETITIONS);
    double gflops = 2.0 * N * N * N / pith_median * 1e-9;
    printf("pith_matmul: %.3f ms (%.1f GFLOP/s); cblas_sgemm: %.3f ms\n", 1e3 * pith_median,
           gflops, 1e3 * cblas_median);
    bench_result("matmul_1024_pith_ms", "(d) pith_matmul 1024x1024 float32", 1e3 * pith_median,
                 "ms", "-");
    bench_result("matmul_1024_cblas_ms", "(d) cblas_sgemm 1024x1024 float32, reused buffer",
                 1e3 * cblas_median, "ms", "-");
    bench_result("matmul_1024_ratio", "(d) cblas_time / pith_time, 1024x1024 float32 matmul",
                 cblas_median / pith_median, "ratio", ">= 0.95");
    free(reused);
    pith_release(a);
    pith_release(b);
    return 0;
}
