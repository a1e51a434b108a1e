/* ops_shape.h — typed C entry points of the ops that rearrange or replicate elements
 * (roll, flip, repeat, repeat_interleave, outer, meshgrid, einsum). Included by pith.h;
 * the conventions are ops.h's: each call dispatches, a tensor result is a new reference
 * or NULL with the thread-local error set, and list results are arrays of new
 * references freed with pith_tensor_list_free. */
#ifndef PITH_OPS_SHAPE_H
#define PITH_OPS_SHAPE_H

#ifdef __cplusplus
extern "C" {
#endif

/* torch.roll: dims[i] rolls by shifts[i]; ndims == 0 rolls the flattened tensor by the one
 * shift (nshifts == 1). A copy. */
PITH_API pith_tensor *pith_roll(const pith_tensor *x, size_t nshifts, const int64_t *shifts,
                                size_t ndims, const int *dims);
/* torch.flip: reverses the order along each of the `ndims` dims. A copy. */
PITH_API pith_tensor *pith_flip(const pith_tensor *x, int ndims, const int *dims);
/* Tensor.repeat: tiles x `repeats[i]` times along dim i (n >= x's ndim; x's sizes are
 * padded with leading ones). */
PITH_API pith_tensor *pith_repeat(const pith_tensor *x, int n, const int64_t *repeats);
/* torch.repeat_interleave(x, repeats, dim): each element along *dim `repeats` times; `dim`
 * NULL: of the flattened x. `output_size` NULL or the result's size along the dim. */
PITH_API pith_tensor *pith_repeat_interleave(const pith_tensor *x, int64_t repeats,
                                             const int *dim, const int64_t *output_size);
/* The same with a 0-dim or 1-D int32/int64 tensor of counts, one per index of the dim. */
PITH_API pith_tensor *pith_repeat_interleave_tensor(const pith_tensor *x,
                                                    const pith_tensor *repeats, const int *dim,
                                                    const int64_t *output_size);
/* torch.repeat_interleave(repeats): index i repeated repeats[i] times, in repeats' dtype. */
PITH_API pith_tensor *pith_repeat_interleave_indices(const pith_tensor *repeats,
                                                     const int64_t *output_size);
/* torch.outer (torch.ger): a[i] * b[j] of two 1-D tensors, dtypes promoted as mul's. */
PITH_API pith_tensor *pith_outer(const pith_tensor *a, const pith_tensor *b);
/* torch.meshgrid: `n` 0-D or 1-D tensors of one dtype give `n` expanded views (*nout of
 * them). `indexing` is "ij", "xy", or NULL for "ij". */
PITH_API pith_tensor **pith_meshgrid(const pith_tensor *const *tensors, size_t n,
                                     const char *indexing, size_t *nout);
/* torch.einsum: `equation` over `n` operands, contracted left to right. */
PITH_API pith_tensor *pith_einsum(const char *equation, const pith_tensor *const *operands,
                                  size_t n);

#ifdef __cplusplus
}
#endif

#endif /* PITH_OPS_SHAPE_H */
