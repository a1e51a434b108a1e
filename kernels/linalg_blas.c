/* linalg_blas.c — the BLAS that the process loaded: which OpenBLAS build it is, how its
 * threads follow pith's thread count, and the pith_blas_* queries. The products themselves
 * are in linalg_gemm.c.
 *
 * Note [BLAS threads]
 * pith loads OpenBLAS's OpenMP build (Note [One OpenBLAS], CMakeLists.txt), but every build
 * has the SONAME libopenblas.so.0, so the loader may give the process another one
 * (LD_LIBRARY_PATH, a library loaded earlier). Which one it is, is read once, when it is
 * loaded (Note [OpenBLAS is loaded on first use]),
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
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

#include "core/parallel.h"
#include "kernels/linalg.h"
#include "kernels/linalg_blas.h"

/* Note [OpenBLAS is loaded on first use]
 * libpith does not list libopenblas.so.0 as a needed library: OpenBLAS (with libgfortran
 * and libquadmath) is 2.3 MiB of resident memory and a few milliseconds of start-up, which a
 * process that never multiplies matrices (`import pith` alone, most short scripts) should not
 * pay. The first caller that needs it (a product, or a pith_blas_* query) loads it, once,
 * with dlopen("libopenblas.so.0") from this library, and takes its functions into `openblas`.
 * Which file that is follows the same rules as a link-time dependency would: dlopen searches
 * LD_LIBRARY_PATH and then the calling object's RUNPATH, which names the OpenMP build
 * (Note [One OpenBLAS], CMakeLists.txt); a libopenblas.so.0 the process already has (a
 * program linked with -lopenblas) is the one it returns. The prototypes come from the same
 * build's cblas.h, so every pointer has the type the compiler checks calls against.
 * A process without OpenBLAS now imports pith, and every product fails with
 * PITH_ERR_RUNTIME naming dlerror()'s reason, instead of the loader refusing the library.
 * blas_load() is the one gate: a pointer in `openblas` is read only after it returned PITH_OK,
 * and pthread_once orders the stores before those reads. */
blas_functions openblas;

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static pith_status blas_load_status = PITH_ERR_RUNTIME;
static char blas_load_error[512];
static pith_blas_threading blas_threading = PITH_BLAS_SEQUENTIAL;
static int (*blas_get_parallel)(void);
static char *(*blas_get_config)(void);
static int (*blas_get_num_threads)(void);
static void (*blas_set_num_threads)(int);

/* The count listener: runs whenever pith's thread count takes a value. */
static void blas_follow_thread_count(int threads)
{
    if (blas_threading == PITH_BLAS_SEQUENTIAL)
        return;
    int saved = omp_get_max_threads();
    blas_set_num_threads(threads);
    if (blas_threading == PITH_BLAS_OPENMP)
        omp_set_num_threads(saved);
}

/* dlsym of `name` into *slot; false (the reason kept) when the library lacks it. */
static bool blas_symbol(void *library, const char *name, void **slot)
{
    *slot = dlsym(library, name);
    if (*slot)
        return true;
    snprintf(blas_load_error, sizeof blas_load_error,
             "cannot use OpenBLAS: libopenblas.so.0 has no %s", name);
    return false;
}

static void blas_load_once(void)
{
    void *library = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_LOCAL);
    if (!library) {
        const char *why = dlerror();
        snprintf(blas_load_error, sizeof blas_load_error, "cannot load OpenBLAS: %s",
                 why ? why : "dlopen(\"libopenblas.so.0\") failed");
        return;
    }
    /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
    struct {
        const char *name;
        void **slot;
    } wanted[] = {
        {"cblas_sdot", (void **)&openblas.sdot},
        {"cblas_ddot", (void **)&openblas.ddot},
        {"cblas_sgemv", (void **)&openblas.sgemv},
        {"cblas_dgemv", (void **)&openblas.dgemv},
        {"cblas_sgemm", (void **)&openblas.sgemm},
        {"cblas_dgemm", (void **)&openblas.dgemm},
        {"openblas_get_parallel", (void **)&blas_get_parallel},
        {"openblas_get_config", (void **)&blas_get_config},
        {"openblas_get_num_threads", (void **)&blas_get_num_threads},
        {"openblas_set_num_threads", (void **)&blas_set_num_threads},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (!blas_symbol(library, wanted[i].name, wanted[i].slot))
            return; /* the library stays loaded: dlclose of a BLAS that started threads is
                       not safe, and nothing of it is used */
    int parallel = blas_get_parallel();
    blas_threading = parallel == 1   ? PITH_BLAS_PTHREADS
                     : parallel == 2 ? PITH_BLAS_OPENMP
                                     : PITH_BLAS_SEQUENTIAL;
    blas_load_status = PITH_OK;
    parallel_set_count_listener(blas_follow_thread_count);
}

bool blas_ready(void)
{
    pthread_once(&blas_once, blas_load_once);
    return blas_load_status == PITH_OK;
}

/* A process that already has a libopenblas.so.0 (a program linked with -lopenblas, which
 * may call openblas_get_num_threads itself) has it adopted when libpith is loaded, so that
 * its thread count follows pith's from the start, as when libpith linked it. RTLD_NOLOAD
 * never loads one. */
__attribute__((constructor)) static void blas_adopt_present(void)
{
    void *present = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (present) {
        (void)blas_ready();
        dlclose(present);
    }
}

pith_status blas_load(void)
{
    if (!blas_ready())
        return pith_set_error(PITH_ERR_RUNTIME, "%s", blas_load_error);
    return PITH_OK;
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
    return blas_ready() ? blas_threading : PITH_BLAS_SEQUENTIAL;
}

const char *pith_blas_get_config(void)
{
    return blas_load() == PITH_OK ? blas_get_config() : NULL;
}

int pith_blas_get_num_threads(void)
{
    if (blas_load() != PITH_OK)
        return 0;
    (void)pith_get_num_threads(); /* the first read applies the count */
    return blas_get_num_threads();
}
