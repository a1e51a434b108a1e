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

/* Around each BLAS call of `work` multiply-adds (linalg_blas.c, Note [BLAS threads]):
 * enter gives the BLAS its thread count for the call and returns what leave puts back. */
int blas_threads_enter(int64_t work);
void blas_threads_leave(int saved);

#endif /* PITH_KERNELS_LINALG_H */
