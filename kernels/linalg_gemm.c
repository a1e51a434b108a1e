/* linalg_gemm.c — runs a matmul_plan: OpenBLAS (CBLAS) for float32 and float64, our own
 * loop for the other dtypes and for whatever BLAS cannot take.
 *
 * Note [Matmul without copies]
 * BLAS takes a row-major operand or its transpose, each with a leading dimension. An
 * operand whose column stride is 1 goes as is; one whose row stride is 1 (a transposed
 * contiguous matrix, such as linear's weight) goes with the transpose flag. Only other
 * layouts are copied. The output is written in place (beta = 0 when there is nothing to
 * add), and when B has no batch of its own and A's batch and row dims chain, the whole
 * batch is one call with the rows stacked (linear over [batch, tokens, features]). */
#include <limits.h>
#include <omp.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/linalg.h"
#include "kernels/linalg_blas.h"
#include "kernels/reduce.h"
#include "kernels/vecmath.h"

/* Output columns per block of the own loop (accumulators live on the stack). */
#define GEMM_COL_BLOCK 256

typedef struct {
    const matmul_plan *plan;
    const char *a, *b;
    char *c;
    matmul_scalars s;
} gemm_job;

/* Element offsets of batch `index` (row-major over the plan's batch dims) in A and B. */
static void batch_offsets(const matmul_plan *p, int64_t index, int64_t *a_off, int64_t *b_off)
{
    *a_off = *b_off = 0;
    for (int d = p->nbatch - 1; d >= 0; d--) {
        int64_t i = index % p->batch[d];
        index /= p->batch[d];
        *a_off += i * p->a_batch_strides[d];
        *b_off += i * p->b_batch_strides[d];
    }
}

static int64_t batch_count(const matmul_plan *p)
{
    int64_t n = 1;
    for (int d = 0; d < p->nbatch; d++)
        n *= p->batch[d];
    return n;
}

/* ---- our own loop ---- */

/* C = alpha * acc + beta * C, wrapping for integers; C is not read when beta is 0. */
#define LG_FINISH_integral(T, LOAD, STORE, acc, cold, s)                                    \
    ((T)((s).alpha_int * (acc) +                                                            \
         ((s).beta_zero ? 0 : (s).beta_int * (uint64_t)(int64_t)(cold))))
#define LG_FINISH_boolean(T, LOAD, STORE, acc, cold, s)                                     \
    ((T)(((s).alpha_int * (acc) + ((s).beta_zero ? 0 : (s).beta_int * (uint64_t)((cold) != 0))) != 0))
#define LG_FINISH_floating(T, LOAD, STORE, acc, cold, s)                                    \
    ((T)STORE((__typeof__(acc))((s).alpha * (acc) + ((s).beta_zero ? 0 : (s).beta * LOAD(cold)))))
#define LG_FINISH_reduced LG_FINISH_floating

/* Columns: dtype, element type, accumulator, load, store, finish. From the dtype table (See
 * Note [The dtype table] in core/dtype.h): bool and the integers accumulate in its ACC
 * (uint64_t, which wraps), the floats in their compute type. */
#define LG_ACC_boolean(ACC, CT) ACC
#define LG_ACC_integral(ACC, CT) ACC
#define LG_ACC_reduced(ACC, CT) CT
#define LG_ACC_floating(ACC, CT) CT
#define LG_COLUMNS_(M, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, ...)                      \
    M(E, T, LG_ACC_##KIND(ACC, CT), LOAD, STORE, LG_FINISH_##KIND)
#define LG_ROW_(tag, M) PITH_DTYPE_COLUMNS(LG_COLUMNS_, tag, M)
#define LG_FORALL_DTYPES(M) PITH_FORALL_DTYPES(LG_ROW_, M)

/* One output row per call: row r of the stacked [batch * n, m] output. */
#define LG_ROW_FN_(E, T, ACC, LOAD, STORE, FINISH)                                          \
    static void gemm_row_##E(const gemm_job *job, int64_t r)                                \
    {                                                                                       \
        const matmul_plan *p = job->plan;                                                   \
        int64_t a_off, b_off, i = r % p->n;                                                 \
        batch_offsets(p, r / p->n, &a_off, &b_off);                                         \
        const T *a = (const T *)job->a + a_off + i * p->a_rs;                               \
        const T *b = (const T *)job->b + b_off;                                             \
        T *c = (T *)job->c + r * p->m;                                                      \
        for (int64_t j0 = 0; j0 < p->m; j0 += GEMM_COL_BLOCK) {                             \
            int64_t w = p->m - j0 < GEMM_COL_BLOCK ? p->m - j0 : GEMM_COL_BLOCK;            \
            ACC acc[GEMM_COL_BLOCK];                                                        \
            for (int64_t j = 0; j < w; j++)                                                 \
                acc[j] = 0;                                                                 \
            for (int64_t kk = 0; kk < p->k; kk++) {                                         \
                ACC av = (ACC)LOAD(a[kk * p->a_cs]);                                        \
                const T *brow = b + kk * p->b_rs + j0 * p->b_cs;                            \
                if (p->b_cs == 1) {                                                         \
                    for (int64_t j = 0; j < w; j++)                                         \
                        acc[j] += av * (ACC)LOAD(brow[j]);                                  \
                } else {                                                                    \
                    for (int64_t j = 0; j < w; j++)                                         \
                        acc[j] += av * (ACC)LOAD(brow[j * p->b_cs]);                        \
                }                                                                           \
            }                                                                               \
            for (int64_t j = 0; j < w; j++)                                                 \
                c[j0 + j] = FINISH(T, LOAD, STORE, acc[j], c[j0 + j], job->s);              \
        }                                                                                   \
    }
LG_FORALL_DTYPES(LG_ROW_FN_)

typedef void (*gemm_row_fn)(const gemm_job *job, int64_t r);

static gemm_row_fn gemm_row_for(pith_dtype dtype)
{
#define LG_ROW_CASE_(E, T, ACC, LOAD, STORE, FINISH)                                        \
    case E:                                                                                 \
        return gemm_row_##E;
    switch (dtype) {
        LG_FORALL_DTYPES(LG_ROW_CASE_)
    }
#undef LG_ROW_CASE_
    return NULL;
}

static void loop_run(pith_dtype dtype, const matmul_plan *p, const char *a, const char *b,
                     char *c, matmul_scalars s)
{
    gemm_job job = {p, a, b, c, s};
    gemm_row_fn row = gemm_row_for(dtype);
    int64_t rows = batch_count(p) * p->n;
    double work = (double)rows * (double)p->m * (double)(p->k ? p->k : 1);
    int nthreads = parallel_threads_for(work > (double)INT64_MAX ? INT64_MAX : (int64_t)work);
    PITH_PARALLEL_FOR(r, rows, nthreads, row(&job, r););
}

/* ---- BLAS ---- */

/* Note [Vector products]
 * OpenBLAS 0.3.21 (Debian 12's) runs a GEMM with one row or one column as a whole GEMM,
 * packing the matrix first, so those shapes go to ?gemv, and a row by a column to ?dot:
 * - n == 1 (one row, such as linear at batch 1): C's row = alpha * B^T a + beta * C, a
 *   GEMV on B; a B whose row stride is 1 (linear's weight, viewed transposed) is a
 *   row-major m x k matrix, the GEMV's fastest form (NoTrans, a dot per output).
 * - m == 1 (one column): C's column = alpha * A b + beta * C, a GEMV on A.
 * - n == m == 1: C = alpha * dot(a, b) + beta * C.
 * A matrix goes as blas_layout allows (else it is copied, as for GEMM), and a vector with
 * its own stride as BLAS's inc, unless that is not positive (an expanded vector has stride
 * 0, which BLAS rejects): then it is copied. With beta == 0, C is not read (linalg.h):
 * OpenBLAS's GEMV then zeroes y rather than scale it (0 * nan would be nan), which a test
 * pins (Linalg.BetaZeroIgnoresNanOnVectorShapes, with an out= full of nan).
 *
 * A product with every dim at most 64 and more than one row and column goes to the vecmath
 * table's own small GEMM instead, with any strides (Note [Small GEMMs], kernels/vecmath.h).
 *
 * A batch of separate products (B has a batch of its own, so they cannot be stacked) that
 * each stay below OpenBLAS's own threshold for using threads (BLAS_ONE_THREAD_*: 0.3.21's
 * interface/gemm.c and gemv.c, with its default GEMM_MULTITHREAD_THRESHOLD of 4; dot has
 * none) runs its batches in one pith region instead, one product per iteration: OpenBLAS
 * would run each on one thread anyway (and inside a region the OpenMP build always does).
 * A thread gets at least BLAS_ONE_THREAD_GEMM multiply-adds, the size at which OpenBLAS
 * itself starts a second thread (PITH_GRAIN_SIZE counts elementwise elements, each costing
 * several multiply-adds of a BLAS kernel), so that waking a worker pays. Larger products
 * (8 GEMVs of 256 x 256, say) go there too when the threads get even shares of the batches
 * (a multiple of the thread count, or at least four per thread), unless the BLAS is a
 * pthread build, whose pool would be entered from every thread of the region at once: one
 * product per thread beats each product split across the threads by OpenBLAS, which for a
 * GEMV costs more in its hand-offs than it saves. Only batches that need no copy go there,
 * since an allocation failing inside a region could not be reported; the others run one
 * after the other. */
#define BLAS_ONE_THREAD_GEMM (65536.0 * 4) /* m * n * k at most */
#define BLAS_ONE_THREAD_GEMV (2304 * 4)    /* rows * cols below */

/* Whether a rows x cols operand with strides (rs, cs) can go to BLAS as is: row-major with
 * leading dimension *ld, or (*trans) the transpose of a row-major cols x rows matrix. */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans,
                        int64_t *ld)
{
    int64_t min_row = cols > 1 ? cols : 1, min_col = rows > 1 ? rows : 1;
    if (cols == 1 || cs == 1) {
        int64_t l = rows == 1 ? min_row : rs;
        if (l >= min_row && l <= INT_MAX) {
            *trans = false;
            *ld = l;
            return true;
        }
    }
    if (rows == 1 || rs == 1) {
        int64_t l = cols == 1 ? min_col : cs;
        if (l >= min_col && l <= INT_MAX) {
            *trans = true;
            *ld = l;
            return true;
        }
    }
    return false;
}

/* Whether a vector stride can be BLAS's inc as is. */
static bool blas_inc_ok(int64_t inc)
{
    return inc >= 1 && inc <= INT_MAX;
}

/* A contiguous copy of a strided operand, for layouts BLAS cannot take. */
static void *blas_copy(pith_dtype dtype, const char *src, int64_t rows, int64_t cols,
                       int64_t rs, int64_t cs)
{
    size_t elem = pith_dtype_size(dtype);
    char *dst = malloc((size_t)(rows * cols) * elem + 1);
    if (!dst) {
        pith_set_error(PITH_ERR_NOMEM, "matmul: out of memory copying a %lldx%lld operand",
                       (long long)rows, (long long)cols);
        return NULL;
    }
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
            if (dtype == PITH_FLOAT32)
                ((float *)dst)[i * cols + j] = ((const float *)src)[i * rs + j * cs];
            else
                ((double *)dst)[i * cols + j] = ((const double *)src)[i * rs + j * cs];
        }
    }
    return dst;
}

/* A matrix operand as BLAS takes it: *data, *trans and *ld, copied into *copy (to be freed)
 * when its layout does not allow that. */
static pith_status blas_matrix(pith_dtype dtype, const char **data, int64_t rows, int64_t cols,
                               int64_t rs, int64_t cs, bool *trans, int64_t *ld, void **copy)
{
    *copy = NULL;
    if (blas_layout(rows, cols, rs, cs, trans, ld))
        return PITH_OK;
    if (!(*copy = blas_copy(dtype, *data, rows, cols, rs, cs)))
        return PITH_ERR_NOMEM;
    *data = *copy;
    *trans = false;
    *ld = cols;
    return PITH_OK;
}

/* A vector operand of `len` elements as BLAS takes it: *data and *inc, copied into *copy
 * (to be freed) when its stride cannot be an inc. */
static pith_status blas_vector(pith_dtype dtype, const char **data, int64_t len, int64_t *inc,
                               void **copy)
{
    *copy = NULL;
    if (blas_inc_ok(*inc))
        return PITH_OK;
    if (!(*copy = blas_copy(dtype, *data, 1, len, 0, *inc)))
        return PITH_ERR_NOMEM;
    *data = *copy;
    *inc = 1;
    return PITH_OK;
}

/* C (1 element) = alpha * dot(x, y) + beta * C, for k-element vectors. */
static pith_status blas_dot(pith_dtype dtype, int64_t k, const char *x, int64_t incx,
                            const char *y, int64_t incy, char *c, matmul_scalars s)
{
    void *copy_x, *copy_y = NULL;
    if (blas_vector(dtype, &x, k, &incx, &copy_x) != PITH_OK ||
        blas_vector(dtype, &y, k, &incy, &copy_y) != PITH_OK) {
        free(copy_x);
        return PITH_ERR_NOMEM;
    }
    if (dtype == PITH_FLOAT32) {
        float d = openblas.sdot((int)k, (const float *)x, (int)incx, (const float *)y, (int)incy);
        float r = (float)s.alpha * d;
        *(float *)c = s.beta_zero ? r : r + (float)s.beta * *(float *)c;
    } else {
        double d = openblas.ddot((int)k, (const double *)x, (int)incx, (const double *)y,
                              (int)incy);
        double r = s.alpha * d;
        *(double *)c = s.beta_zero ? r : r + s.beta * *(double *)c;
    }
    free(copy_x);
    free(copy_y);
    return PITH_OK;
}

/* y (rows elements, contiguous) = alpha * M x + beta * y, where M is rows x cols with
 * strides (rs, cs) and x has cols elements at stride incx. */
static pith_status blas_gemv(pith_dtype dtype, int64_t rows, int64_t cols, const char *mat,
                             int64_t rs, int64_t cs, const char *x, int64_t incx, char *y,
                             matmul_scalars s)
{
    bool trans;
    int64_t ld;
    void *copy_m, *copy_x = NULL;
    if (blas_matrix(dtype, &mat, rows, cols, rs, cs, &trans, &ld, &copy_m) != PITH_OK ||
        blas_vector(dtype, &x, cols, &incx, &copy_x) != PITH_OK) {
        free(copy_m);
        return PITH_ERR_NOMEM;
    }
    /* Transposed: M = P^T for the row-major cols x rows matrix P. */
    CBLAS_TRANSPOSE t = trans ? CblasTrans : CblasNoTrans;
    int r = (int)(trans ? cols : rows), q = (int)(trans ? rows : cols);
    double beta = s.beta_zero ? 0.0 : s.beta;
    if (dtype == PITH_FLOAT32)
        openblas.sgemv(CblasRowMajor, t, r, q, (float)s.alpha, (const float *)mat, (int)ld,
                    (const float *)x, (int)incx, (float)beta, (float *)y, 1);
    else
        openblas.dgemv(CblasRowMajor, t, r, q, s.alpha, (const double *)mat, (int)ld,
                    (const double *)x, (int)incx, beta, (double *)y, 1);
    free(copy_m);
    free(copy_x);
    return PITH_OK;
}

/* C (n x m, row stride ldc) = beta * C + alpha * A @ B, with GEMM. */
static pith_status blas_gemm(pith_dtype dtype, int64_t n, int64_t m, int64_t k, const char *a,
                             int64_t a_rs, int64_t a_cs, const char *b, int64_t b_rs,
                             int64_t b_cs, char *c, int64_t ldc, matmul_scalars s)
{
    bool ta, tb;
    int64_t lda, ldb;
    void *copy_a, *copy_b = NULL;
    if (blas_matrix(dtype, &a, n, k, a_rs, a_cs, &ta, &lda, &copy_a) != PITH_OK ||
        blas_matrix(dtype, &b, k, m, b_rs, b_cs, &tb, &ldb, &copy_b) != PITH_OK) {
        free(copy_a);
        return PITH_ERR_NOMEM;
    }
    double beta = s.beta_zero ? 0.0 : s.beta;
    if (dtype == PITH_FLOAT32)
        openblas.sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    (int)n, (int)m, (int)k, (float)s.alpha, (const float *)a, (int)lda,
                    (const float *)b, (int)ldb, (float)beta, (float *)c, (int)ldc);
    else
        openblas.dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    (int)n, (int)m, (int)k, s.alpha, (const double *)a, (int)lda,
                    (const double *)b, (int)ldb, beta, (double *)c, (int)ldc);
    free(copy_a);
    free(copy_b);
    return PITH_OK;
}

/* Whether a product goes to the vecmath table's small GEMM: Note [Small GEMMs]
 * (kernels/vecmath.h). Vector shapes stay with GEMV and dot. */
static bool gemm_small_applies(int64_t n, int64_t m, int64_t k)
{
    return n > 1 && m > 1 && n <= VECMATH_GEMM_SMALL && m <= VECMATH_GEMM_SMALL &&
           k <= VECMATH_GEMM_SMALL;
}

/* One product, C (n x m, row stride ldc, which is m when n > 1 is not a GEMM) = beta * C +
 * alpha * A @ B, by the BLAS routine its shape calls for. See Note [Vector products]. */
static pith_status blas_product(pith_dtype dtype, int64_t n, int64_t m, int64_t k,
                                const char *a, int64_t a_rs, int64_t a_cs, const char *b,
                                int64_t b_rs, int64_t b_cs, char *c, int64_t ldc,
                                matmul_scalars s)
{
    if (gemm_small_applies(n, m, k)) {
        const vecmath_table *vm = vecmath_active();
        if (dtype == PITH_FLOAT32)
            vm->gemm_small_f32(n, m, k, (const float *)a, a_rs, a_cs, (const float *)b, b_rs,
                               b_cs, (float *)c, ldc, s.alpha, s.beta, s.beta_zero);
        else
            vm->gemm_small_f64(n, m, k, (const double *)a, a_rs, a_cs, (const double *)b,
                               b_rs, b_cs, (double *)c, ldc, s.alpha, s.beta, s.beta_zero);
        return PITH_OK;
    }
    if (n == 1 && m == 1)
        return blas_dot(dtype, k, a, a_cs, b, b_rs, c, s);
    if (n == 1) /* C's row = B^T a, B^T being m x k with strides (b_cs, b_rs) */
        return blas_gemv(dtype, m, k, b, b_cs, b_rs, a, a_cs, c, s);
    if (m == 1)
        return blas_gemv(dtype, n, k, a, a_rs, a_cs, b, b_rs, c, s);
    return blas_gemm(dtype, n, m, k, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, s);
}

/* Whether blas_product runs the plan's per-batch product without a copy and, with `small`,
 * on one thread of OpenBLAS, so that batches may run in parallel. See Note [Vector
 * products]. */
static bool blas_product_in_place(const matmul_plan *p, bool small)
{
    bool trans;
    int64_t ld;
    if (gemm_small_applies(p->n, p->m, p->k))
        return true; /* any strides, no copy */
    if (p->n == 1 && p->m == 1)
        return blas_inc_ok(p->a_cs) && blas_inc_ok(p->b_rs);
    if (p->n == 1)
        return (!small || (double)p->m * (double)p->k < BLAS_ONE_THREAD_GEMV) &&
               blas_inc_ok(p->a_cs) && blas_layout(p->m, p->k, p->b_cs, p->b_rs, &trans, &ld);
    if (p->m == 1)
        return (!small || (double)p->n * (double)p->k < BLAS_ONE_THREAD_GEMV) &&
               blas_inc_ok(p->b_rs) && blas_layout(p->n, p->k, p->a_rs, p->a_cs, &trans, &ld);
    return (!small || (double)p->n * (double)p->m * (double)p->k <= BLAS_ONE_THREAD_GEMM) &&
           blas_layout(p->n, p->k, p->a_rs, p->a_cs, &trans, &ld) &&
           blas_layout(p->k, p->m, p->b_rs, p->b_cs, &trans, &ld);
}

/* Whether A's batch dims and row dim chain into one dim of stride a_rs (and B has no batch
 * of its own), so that the batch is one call with batch * n rows. */
static bool plan_foldable(const matmul_plan *p)
{
    int64_t stride = p->n > 1 ? p->a_rs * p->n : -1; /* -1: anything goes */
    for (int d = p->nbatch - 1; d >= 0; d--) {
        if (p->b_batch_strides[d] != 0 && p->batch[d] != 1)
            return false;
        if (p->batch[d] == 1)
            continue;
        if (stride != -1 && p->a_batch_strides[d] != stride)
            return false;
        stride = p->a_batch_strides[d] * p->batch[d];
    }
    return true;
}

bool linalg_flat_of(const matmul_plan *p, linalg_flat *f)
{
    int64_t batches = batch_count(p);
    int64_t rs = p->a_rs;
    if (batches > 1) {
        if (p->n * batches > INT_MAX || !plan_foldable(p))
            return false;
        if (p->n == 1) /* one row per batch: the stacked rows' stride is the batch's */
            for (int d = p->nbatch - 1; d >= 0; d--)
                if (p->batch[d] != 1) {
                    rs = p->a_batch_strides[d];
                    break;
                }
    }
    *f = (linalg_flat){p->n * batches, p->m, p->k, rs, p->a_cs, p->b_rs, p->b_cs};
    return true;
}

/* Note [GEMM panels]
 * OpenBLAS 0.3.21, asked for a product with few rows on two threads, splits it worse than
 * we can: measured at 2 threads (float32, B a transposed weight, as linear's), one
 * multi-threaded sgemm against two single-threaded calls on halves of the columns, each in
 * one thread of a pith region: 32x512x784 172 us and 146 us, 32x512x512 90 and 75,
 * 64x768x256 81 and 78, 64x256x1024 141 and 136; at 256 rows and more the two are within
 * 3% either way (256x512x512 353 and 363), and halves of the rows are 0.97-1.35x slower
 * than one call except where the product has very few columns. A GEMV (one row) is within
 * 2% either way. So a product of at most PANEL_MAX_ROWS rows, with PANEL_MIN_COLS columns
 * or more for each thread, which needs no copy and would get more than one thread, runs
 * as column panels: one per thread of parallel_threads_for (as many as OpenBLAS itself
 * would give it: BLAS_ONE_THREAD_GEMM multiply-adds each), of a width rounded up to
 * PANEL_ALIGN columns, each a BLAS call on the calling thread (inside a region the OpenMP
 * build runs one thread; the pthread build never gets panels, since its pool would be
 * entered from every thread at once).
 * The panels are a fact of the product, not of the caller: linalg_run uses them, and so
 * does a compiled graph's GEMM epilogue (compile/fusion.c, Note [GEMM epilogues]), which
 * runs each panel's epilogue right after the panel, while it is in cache. Both take the
 * count from linalg_panels and the columns from linalg_panel_cols, and a panel is computed
 * the same way whichever thread runs it, so the two give the same bits: OpenBLAS's
 * results depend on how a product is split (at 784 columns of A, one call and two panels
 * differ in the last bit of a fifth of the elements), so a panel split that eager did not
 * make could not be bitwise equal to eager. */
enum { PANEL_MAX_ROWS = 128, PANEL_MIN_COLS = 128, PANEL_ALIGN = 16 };

int linalg_panels(pith_dtype dtype, const linalg_flat *f)
{
    bool trans;
    int64_t ld;
    if ((dtype != PITH_FLOAT32 && dtype != PITH_FLOAT64) || !blas_ready() ||
        pith_blas_get_threading() == PITH_BLAS_PTHREADS || f->n > PANEL_MAX_ROWS ||
        f->m < 2 * PANEL_MIN_COLS || f->k < 1 || f->k > INT_MAX || f->m > INT_MAX ||
        gemm_small_applies(f->n, f->m, f->k) ||
        !blas_layout(f->n, f->k, f->a_rs, f->a_cs, &trans, &ld) ||
        !blas_layout(f->k, f->m, f->b_rs, f->b_cs, &trans, &ld) ||
        (f->n == 1 && !blas_inc_ok(f->a_cs)))
        return 1;
    double work = (double)f->n * (double)f->m * (double)f->k;
    int64_t w = work > (double)INT64_MAX ? INT64_MAX : (int64_t)work;
    int threads = parallel_threads_for(w / (int64_t)(BLAS_ONE_THREAD_GEMM / PITH_GRAIN_SIZE));
    int64_t most = f->m / PANEL_MIN_COLS;
    return threads < most ? threads : (int)most;
}

void linalg_panel_cols(const linalg_flat *f, int panel, int panels, int64_t *lo, int64_t *hi)
{
    int64_t width = (f->m + panels - 1) / panels;
    width = (width + PANEL_ALIGN - 1) / PANEL_ALIGN * PANEL_ALIGN;
    *lo = panel * width < f->m ? panel * width : f->m;
    *hi = *lo + width < f->m ? *lo + width : f->m;
}

void linalg_panel_run(pith_dtype dtype, const linalg_flat *f, const char *a, const char *b,
                      char *c, matmul_scalars s, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return;
    int64_t elem = (int64_t)pith_dtype_size(dtype);
    /* A panel is one thread's work wherever it runs: outside an active region (a team of
     * one) the OpenMP build would give the call omp_get_max_threads() threads, and other
     * bits. See Note [BLAS threads] (linalg_blas.c). */
    int saved = pith_blas_get_threading() == PITH_BLAS_OPENMP && !omp_in_parallel()
                    ? omp_get_max_threads()
                    : 0;
    if (saved > 1)
        omp_set_num_threads(1);
    /* Needs no copy (linalg_panels), so it cannot fail. */
    (void)blas_product(dtype, f->n, hi - lo, f->k, a, f->a_rs, f->a_cs, b + lo * f->b_cs * elem,
                       f->b_rs, f->b_cs, c + lo * elem, f->m, s);
    if (saved > 1)
        omp_set_num_threads(saved);
}

/* Batch `i` of the plan, as one product. */
static pith_status blas_batch(pith_dtype dtype, const matmul_plan *p, const char *a,
                              const char *b, char *c, matmul_scalars s, int64_t i)
{
    int64_t elem = (int64_t)pith_dtype_size(dtype), a_off, b_off;
    batch_offsets(p, i, &a_off, &b_off);
    return blas_product(dtype, p->n, p->m, p->k, a + a_off * elem, p->a_rs, p->a_cs,
                        b + b_off * elem, p->b_rs, p->b_cs, c + i * p->n * p->m * elem, p->m, s);
}

static pith_status blas_run_batches(pith_dtype dtype, const matmul_plan *p, const char *a,
                                    const char *b, char *c, matmul_scalars s, int64_t work)
{
    int64_t batches = batch_count(p);
    linalg_flat f;
    if (linalg_flat_of(p, &f)) {
        int panels = linalg_panels(dtype, &f);
        if (panels > 1) { /* See Note [GEMM panels] */
            PITH_PARALLEL_REGION(panels, {
                for (int t = omp_get_thread_num(); t < panels; t += omp_get_num_threads()) {
                    int64_t lo, hi;
                    linalg_panel_cols(&f, t, panels, &lo, &hi);
                    linalg_panel_run(dtype, &f, a, b, c, s, lo, hi);
                }
            });
            return PITH_OK;
        }
        return blas_product(dtype, f.n, f.m, f.k, a, f.a_rs, f.a_cs, b, f.b_rs, f.b_cs, c, f.m,
                            s);
    }
    int threads = 1;
    if (batches > 1 && blas_product_in_place(p, true)) {
        threads = parallel_threads_for(work / (int64_t)(BLAS_ONE_THREAD_GEMM / PITH_GRAIN_SIZE));
    } else if (batches > 1 && pith_blas_get_threading() != PITH_BLAS_PTHREADS &&
               blas_product_in_place(p, false)) {
        int t = parallel_threads_for(work / (int64_t)(BLAS_ONE_THREAD_GEMM / PITH_GRAIN_SIZE));
        if (batches % t == 0 || batches >= 4 * t) /* even shares of the batches */
            threads = t;
    }
    if (threads > 1) {
        /* Each product takes no allocation, so none fails. */
        PITH_PARALLEL_FOR(i, batches, threads, (void)blas_batch(dtype, p, a, b, c, s, i););
        return PITH_OK;
    }
    for (int64_t i = 0; i < batches; i++)
        if (blas_batch(dtype, p, a, b, c, s, i) != PITH_OK)
            return PITH_ERR_NOMEM;
    return PITH_OK;
}

/* See Note [BLAS threads] (linalg_blas.c) for the thread count each call gets. */
static pith_status blas_run(pith_dtype dtype, const matmul_plan *p, const char *a,
                            const char *b, char *c, matmul_scalars s)
{
    double work = (double)batch_count(p) * (double)p->n * (double)p->m * (double)p->k;
    int64_t w = work > (double)INT64_MAX ? INT64_MAX : (int64_t)work;
    if (blas_load() != PITH_OK)
        return PITH_ERR_RUNTIME;
    int saved = blas_threads_enter(w);
    pith_status status = blas_run_batches(dtype, p, a, b, c, s, w);
    blas_threads_leave(saved);
    return status;
}

pith_status linalg_run(pith_dtype dtype, const matmul_plan *p, const char *a, const char *b,
                       char *c, matmul_scalars s)
{
    if (batch_count(p) == 0 || p->n == 0 || p->m == 0)
        return PITH_OK;
    bool blas = (dtype == PITH_FLOAT32 || dtype == PITH_FLOAT64) && p->k > 0 &&
                p->n <= INT_MAX && p->m <= INT_MAX && p->k <= INT_MAX;
    if (blas)
        return blas_run(dtype, p, a, b, c, s);
    loop_run(dtype, p, a, b, c, s);
    return PITH_OK;
}
