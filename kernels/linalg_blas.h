/* linalg_blas.h — the OpenBLAS functions pith calls, for linalg_blas.c (which loads them)
 * and linalg_gemm.c (which calls them) only. */
#ifndef PITH_KERNELS_LINALG_BLAS_H
#define PITH_KERNELS_LINALG_BLAS_H

#include <cblas.h>

#include "pith/pith.h"

/* The OpenBLAS functions pith calls, loaded by blas_load (linalg_blas.c, Note [OpenBLAS is
 * loaded on first use]); read a pointer only after blas_load() returned PITH_OK. */
typedef struct {
    __typeof__(&cblas_sdot) sdot;
    __typeof__(&cblas_ddot) ddot;
    __typeof__(&cblas_sgemv) sgemv;
    __typeof__(&cblas_dgemv) dgemv;
    __typeof__(&cblas_sgemm) sgemm;
    __typeof__(&cblas_dgemm) dgemm;
} blas_functions;
extern blas_functions openblas;
/* Loads OpenBLAS once; PITH_OK, or PITH_ERR_RUNTIME (error set) naming why it cannot be. */
pith_status blas_load(void);
/* Whether OpenBLAS is loaded, loading it first if it was not; sets no error. */
bool blas_ready(void);

#endif /* PITH_KERNELS_LINALG_BLAS_H */
