/* einsum.h — einsum's equation parsed and checked against its operands' shapes
 * (einsum_plan.c), for the einsum composite (einsum.c) and for tests. Only plain C types:
 * the GoogleTest suites include it.
 *
 * Note [Einsum's aligned indices]
 * As PyTorch's einsum does, the plan numbers every dimension of the computation with an
 * aligned index: first the output's dims in output order ([0, out_ndim)), then the
 * summed ones ([out_ndim, nindices)): the labels that are not in the output, in label
 * order (A-Z, then a-z), and the dims covered by an ellipsis when the output has none.
 * The dims an ellipsis covers are right-aligned across operands (broadcasting), so the
 * ellipsis has as many aligned indices as its widest operand. A label repeated within an
 * operand maps all its dims to one index (a diagonal). Each index has one size: the
 * operands' sizes of it must be equal or 1 (1 broadcasts). An implicit output (no "->")
 * is the ellipsis's dims and then the labels seen exactly once, in label order. */
#ifndef PITH_KERNELS_EINSUM_H
#define PITH_KERNELS_EINSUM_H

#include <stddef.h>
#include <stdint.h>

#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Labels are the 52 ASCII letters. */
#define EINSUM_LETTERS 52
/* Every label plus the widest ellipsis. */
#define EINSUM_MAX_INDICES (EINSUM_LETTERS + PITH_MAX_DIMS)

typedef struct {
    int ndim;
    int index_of_dim[PITH_MAX_DIMS]; /* the aligned index of each of the operand's dims */
} einsum_operand;

typedef struct {
    size_t nops;
    einsum_operand *ops; /* nops entries (malloc'd) */
    int out_ndim;        /* the output's dims: aligned indices [0, out_ndim) */
    int nindices;        /* summed dims: [out_ndim, nindices) */
    int64_t sizes[EINSUM_MAX_INDICES];  /* each index's (broadcast) size */
    int64_t counts[EINSUM_MAX_INDICES]; /* the operands in which it has a size other than 1 */
    char names[EINSUM_MAX_INDICES];     /* its label, or '.' for a dim of the ellipsis */
} einsum_plan;

/* Parses `equation` for `nops` operands, operand i having ndims[i] dims of sizes[i][0..)
 * (ndims[i] <= PITH_MAX_DIMS), and fills *plan. Errors are PyTorch's, with its messages
 * and in its order (PITH_ERR_VALUE), then PITH_ERR_NOT_IMPLEMENTED when the output would
 * have more dims than a pith tensor. On success free the plan with einsum_plan_free; on
 * failure there is nothing to free. Never reads past the equation's terminating NUL. */
pith_status einsum_plan_make(const char *equation, size_t nops, const int *ndims,
                             const int64_t *const *sizes, einsum_plan *plan);
void einsum_plan_free(einsum_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* PITH_KERNELS_EINSUM_H */
