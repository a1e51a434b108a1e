/* linalg_blas.c — the BLAS that the process loaded: which OpenBLAS build it is, how its
 * threads follow pith's thread count, and the pith_blas_* queries. The products themselves
 * are in linalg_gemm.c.
 *
 * Note [BLAS threads]
 * pith links OpenBLAS's OpenMP build (Note [One OpenBLAS], CMakeLists.txt), but every build
 * has the SONAME libopenblas.so.0, so the loader may give the process another one
 * (LD_LIBRARY_PATH, a library loaded earlier). Which one it is, is read once at load,
 * with openblas_get_parallel(), and pith's thread count (pith_set_num_threads,
 * PITH_NUM_THREADS: Note [Thread count and grain size]) drives it the way that build obeys:
 * - Every build: openblas_set_num_threads(n) whenever pith's count takes the value n
 *   (parallel_set_count_listener), so that openblas_get_num_threads() is pith's count.
 *   It is process-wide, so it is set only then, never around a call: that would race
 *   with the calls of other threads.
 * - The OpenMP build also runs each call with as many threads as the calling thread's
 *   omp_get_max_threads(), a per-thread value that pith_set_num_threads does not change
 *   (pith's own regions pass num_threads(...)). So each call sets the caller's value to
 *   pith's count for its work (1 below the grain size, and 1 in a forked child, where
 *   entering libgomp could hang) and puts the old one back (blas_threads_enter/leave).
 *   The value is either pith's count or 1, and OpenBLAS takes 1 without touching its own
 *   count: it resizes its per-thread buffers whenever a call brings another count, and
 *   would free those of a call still running on another thread.
 *   openblas_set_num_threads also sets the caller's value, which is put back too.
 * - The pthread build has its own pool, which is fork-safe, and its own size thresholds
 *   for one thread (OpenBLAS's, not PITH_GRAIN_SIZE); nothing is done per call except
 *   making sure that pith's count has been read, and so applied.
 * - The sequential build runs on the calling thread. */
#include <cblas.h>
#include <omp.h>

#include "core/parallel.h"
#include "kernels/linalg.h"

static pith_blas_threading blas_threading = PITH_BLAS_SEQUENTIAL;

/* The count listener: runs whenever pith's thread count takes a value. */
static void blas_follow_thread_count(int threads)
{
    if (blas_threading == PITH_BLAS_SEQUENTIAL)
        return;
    int saved = omp_get_max_threads();
    openblas_set_num_threads(threads);
    if (blas_threading == PITH_BLAS_OPENMP)
        omp_set_num_threads(saved);
}

__attribute__((constructor)) static void blas_detect(void)
{
    int parallel = openblas_get_parallel();
    blas_threading = parallel == 1   ? PITH_BLAS_PTHREADS
                     : parallel == 2 ? PITH_BLAS_OPENMP
                                     : PITH_BLAS_SEQUENTIAL;
    parallel_set_count_listener(blas_follow_thread_count);
}

int blas_threads_enter(int64_t work)
{
    if (blas_threading != PITH_BLAS_OPENMP) {
        if (blas_threading == PITH_BLAS_PTHREADS)
            (void)pith_get_num_threads(); /* the first read applies the count */
        return 0;
    }
    int threads = parallel_threads_for(work);
    int saved = omp_get_max_threads();
    if (saved == threads)
        return 0;
    omp_set_num_threads(threads);
    return saved;
}

void blas_threads_leave(int saved)
{
    if (saved > 0)
        omp_set_num_threads(saved);
}

pith_blas_threading pith_blas_get_threading(void)
{
    return blas_threading;
}

const char *pith_blas_get_config(void)
{
    return openblas_get_config();
}

int pith_blas_get_num_threads(void)
{
    (void)pith_get_num_threads(); /* the first read applies the count */
    return openblas_get_num_threads();
}
