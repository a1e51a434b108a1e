/* linalg.h — the batched matrix product shared by matmul, mm, bmm, addmm and linear:
 * the plan (validated shapes and strides, made once for the CPU and Meta kernels) in
 * linalg.c, the runner (OpenBLAS for float32/float64, our own loop otherwise) in
 * linalg_gemm.c, and the BLAS's threads in linalg_blas.c. */
#ifndef PITH_KERNELS_LINALG_H
#define PITH_KERNELS_LINALG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

/* C[batch] = beta * C[batch] + alpha * A[batch] @ B[batch], where C is the contiguous
 * output of shape [batch..., rows(A), cols(B)]. Strides are in elements; a broadcast batch
 * dim has stride 0. */
typedef struct {
    int nbatch;
    int64_t batch[PITH_MAX_DIMS];
    int64_t a_batch_strides[PITH_MAX_DIMS], b_batch_strides[PITH_MAX_DIMS];
    int64_t n, k, m;              /* A is n x k, B is k x m */
    int64_t a_rs, a_cs, b_rs, b_cs; /* row and column strides of A and B */
    int out_ndim;                 /* the result's shape (1-D operands drop their dim) */
    int64_t out_sizes[PITH_MAX_DIMS];
} matmul_plan;

/* alpha and beta, both as doubles (floating dtypes) and as wrapping integers. beta == 0
 * means C is not read at all (nan in it is not propagated), as in PyTorch. */
typedef struct {
    double alpha, beta;
    uint64_t alpha_int, beta_int;
    bool beta_zero;
} matmul_scalars;

/* Runs the plan on CPU data: a and b point at element 0 of each operand; c at the
 * contiguous output. Fails only for PITH_ERR_NOMEM (before any parallel region). */
pith_status linalg_run(pith_dtype dtype, const matmul_plan *plan, const char *a,
                       const char *b, char *c, matmul_scalars scalars);

/* The plan as the one product linalg_run makes of it, when it makes one (no batch, or a
 * batch whose rows stack: Note [Matmul without copies]): C (n x m, row stride m) =
 * beta * C + alpha * A @ B, strides in elements. */
typedef struct {
    int64_t n, m, k;
    int64_t a_rs, a_cs, b_rs, b_cs;
} linalg_flat;

bool linalg_flat_of(const matmul_plan *plan, linalg_flat *flat);
/* How many column panels linalg_run splits the product into at the current thread count:
 * 1 for one call. See Note [GEMM panels] (linalg_gemm.c). */
int linalg_panels(pith_dtype dtype, const linalg_flat *flat);
/* The columns [*lo, *hi) of panel `panel` of `panels`. */
void linalg_panel_cols(const linalg_flat *flat, int panel, int panels, int64_t *lo,
                       int64_t *hi);
/* Columns [lo, hi) of the product, on the calling thread's BLAS (in a pith region: one
 * thread). Only for a product that linalg_panels splits; it takes no allocation. */
void linalg_panel_run(pith_dtype dtype, const linalg_flat *flat, const char *a, const char *b,
                      char *c, matmul_scalars scalars, int64_t lo, int64_t hi);

/* A matmul, mm, addmm or linear of float32 or float64 that a fused group may run as its
 * GEMM head (linalg.c; compile/fusion.c, Note [GEMM epilogues]). */
typedef struct {
    pith_dtype dtype;
    matmul_plan plan;
    matmul_scalars s;
    linalg_flat flat;
    int a, b, addend;   /* argument indices of A, B and the addend (-1: none, or beta 0) */
    bool panelable;     /* the result's last dim is the product's columns, and the addend's
                         * strides are (addend_rs, addend_cs) over [flat.n, flat.m] */
    int64_t addend_rs, addend_cs;
} matmul_fusable;

struct pith_op;
/* Whether built-in op `op` with `args` (schema order; Meta stand-ins) is such a product;
 * if so, its plan. */
bool matmul_fusable_of(const struct pith_op *op, const pith_value *args, size_t nargs,
                       matmul_fusable *f);
/* The whole product into the contiguous `dst`, as the op's kernel computes it. */
pith_status matmul_fusable_run(const matmul_fusable *f, const pith_tensor *a,
                               const pith_tensor *b, const pith_tensor *addend,
                               pith_tensor *dst);
/* Columns [lo, hi) (linalg_panel_cols) of the product into `c`, the addend copied in first;
 * on the calling thread, with no allocation. Only when f->panelable. */
void matmul_fusable_panel(const matmul_fusable *f, const char *a, const char *b,
                          const char *addend, char *c, int64_t lo, int64_t hi);

/* Around each BLAS call of `work` multiply-adds (linalg_blas.c, Note [BLAS threads]):
 * enter gives the BLAS its thread count for the call and returns what leave puts back. */
int blas_threads_enter(int64_t work);
void blas_threads_leave(int saved);

#endif /* PITH_KERNELS_LINALG_H */
