/* ops.h — typed C entry points for the built-in ops. Included by pith.h.
 *
 * Each function dispatches through the dispatcher (so a tensor with the Python key, or a
 * C kernel registered for another key, sees the call). Unary and binary elementwise ops
 * come in three forms (pith/ops_elementwise.h):
 *   pith_tensor *pith_add(const pith_tensor *a, const pith_tensor *b);       new tensor
 *   pith_status  pith_add_out(pith_tensor *out, const pith_tensor *a, ...);  into `out`
 *   pith_status  pith_add_(pith_tensor *self, const pith_tensor *other);     in place
 * Functions returning a tensor return NULL on error; all set the thread-local error. */
#ifndef PITH_OPS_H
#define PITH_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The unary and binary elementwise ops (pith_neg, pith_add, ..., each with its _out and
 * in-place form), written from the op file by scripts/gen_ops.py. */
#include "pith/ops_elementwise.h"

/* gelu: exact (erf) by default, or the tanh approximation. */
PITH_API pith_tensor *pith_gelu(const pith_tensor *x, bool tanh_approximation);
/* clamp: `min` or `max` may be NULL for no bound. */
PITH_API pith_tensor *pith_clamp(const pith_tensor *x, const double *min, const double *max);
PITH_API pith_tensor *pith_where(const pith_tensor *cond, const pith_tensor *a,
                                 const pith_tensor *b);

/* ---- reductions: `ndims == 0` reduces over all dims; dims may be negative. ---- */
PITH_API pith_tensor *pith_sum(const pith_tensor *x, int ndims, const int *dims, bool keepdim);
PITH_API pith_tensor *pith_mean(const pith_tensor *x, int ndims, const int *dims, bool keepdim);
PITH_API pith_tensor *pith_prod(const pith_tensor *x, int ndims, const int *dims, bool keepdim);
PITH_API pith_tensor *pith_amax(const pith_tensor *x, int ndims, const int *dims, bool keepdim);
PITH_API pith_tensor *pith_amin(const pith_tensor *x, int ndims, const int *dims, bool keepdim);
PITH_API pith_tensor *pith_all(const pith_tensor *x, int ndims, const int *dims, bool keepdim);
PITH_API pith_tensor *pith_any(const pith_tensor *x, int ndims, const int *dims, bool keepdim);
PITH_API pith_tensor *pith_var(const pith_tensor *x, int ndims, const int *dims,
                               double correction, bool keepdim);
PITH_API pith_tensor *pith_std(const pith_tensor *x, int ndims, const int *dims,
                               double correction, bool keepdim);
/* The largest / smallest element (0-dim); NaN if any element is NaN; empty is an error. */
PITH_API pith_tensor *pith_max(const pith_tensor *x);
PITH_API pith_tensor *pith_min(const pith_tensor *x);
/* max/min along one dim, with the indices of the first extreme value. */
PITH_API pith_status pith_max_dim(const pith_tensor *x, int dim, bool keepdim,
                                  pith_tensor **values, pith_tensor **indices);
PITH_API pith_status pith_min_dim(const pith_tensor *x, int dim, bool keepdim,
                                  pith_tensor **values, pith_tensor **indices);
/* `dim` NULL: the index into the flattened tensor. */
PITH_API pith_tensor *pith_argmax(const pith_tensor *x, const int *dim, bool keepdim);
PITH_API pith_tensor *pith_argmin(const pith_tensor *x, const int *dim, bool keepdim);

/* ---- linear algebra ---- */
PITH_API pith_tensor *pith_matmul(const pith_tensor *a, const pith_tensor *b);
PITH_API pith_tensor *pith_mm(const pith_tensor *a, const pith_tensor *b);
PITH_API pith_tensor *pith_bmm(const pith_tensor *a, const pith_tensor *b);
/* The same products into `out`, which must have the result's dtype and shape (or no
 * elements: then it is resized). */
PITH_API pith_status pith_matmul_out(pith_tensor *out, const pith_tensor *a,
                                     const pith_tensor *b);
PITH_API pith_status pith_mm_out(pith_tensor *out, const pith_tensor *a, const pith_tensor *b);
PITH_API pith_status pith_bmm_out(pith_tensor *out, const pith_tensor *a, const pith_tensor *b);
/* beta * self + alpha * (a @ b) */
PITH_API pith_tensor *pith_addmm(const pith_tensor *self, const pith_tensor *a,
                                 const pith_tensor *b, double beta, double alpha);
/* x @ weight^T + bias; `bias` may be NULL. */
PITH_API pith_tensor *pith_linear(const pith_tensor *x, const pith_tensor *weight,
                                  const pith_tensor *bias);

/* ---- views (they share storage and the version counter) ---- */
PITH_API pith_tensor *pith_view(const pith_tensor *x, int ndim, const int64_t *sizes);
PITH_API pith_tensor *pith_reshape(const pith_tensor *x, int ndim, const int64_t *sizes);
PITH_API pith_tensor *pith_permute(const pith_tensor *x, int ndim, const int *dims);
PITH_API pith_tensor *pith_transpose(const pith_tensor *x, int dim0, int dim1);
PITH_API pith_tensor *pith_t(const pith_tensor *x);
PITH_API pith_tensor *pith_expand(const pith_tensor *x, int ndim, const int64_t *sizes);
/* A view of x's storage with any geometry inside it (torch.as_strided); `storage_offset`
 * is in elements from the start of the storage. */
PITH_API pith_tensor *pith_as_strided(const pith_tensor *x, int ndim, const int64_t *sizes,
                                      const int64_t *strides, int64_t storage_offset);
/* `dim` NULL: every dim of size one. */
PITH_API pith_tensor *pith_squeeze(const pith_tensor *x, const int *dim);
PITH_API pith_tensor *pith_unsqueeze(const pith_tensor *x, int dim);
PITH_API pith_tensor *pith_flatten(const pith_tensor *x, int start_dim, int end_dim);
/* Python's x[start:end:step] along `dim`; bounds are clamped as Python does. */
PITH_API pith_tensor *pith_slice(const pith_tensor *x, int dim, int64_t start, int64_t end,
                                 int64_t step);
PITH_API pith_tensor *pith_select(const pith_tensor *x, int dim, int64_t index);
PITH_API pith_tensor *pith_narrow(const pith_tensor *x, int dim, int64_t start, int64_t length);
/* List results: an array of `*n` new references; free it with pith_tensor_list_free. */
PITH_API pith_tensor **pith_split(const pith_tensor *x, int64_t split_size, int dim, size_t *n);
PITH_API pith_tensor **pith_chunk(const pith_tensor *x, int64_t chunks, int dim, size_t *n);
PITH_API pith_tensor **pith_unbind(const pith_tensor *x, int dim, size_t *n);
PITH_API void pith_tensor_list_free(pith_tensor **list, size_t n);
PITH_API pith_tensor *pith_contiguous(const pith_tensor *x);
PITH_API pith_tensor *pith_alias(const pith_tensor *x);
PITH_API pith_tensor *pith_detach(const pith_tensor *x);

/* ---- copying and combining ---- */
PITH_API pith_status pith_copy_(pith_tensor *self, const pith_tensor *src);
PITH_API pith_tensor *pith_to_dtype(const pith_tensor *x, pith_dtype dtype);
PITH_API pith_tensor *pith_clone(const pith_tensor *x);
PITH_API pith_tensor *pith_cat(const pith_tensor *const *tensors, size_t n, int dim);
/* torch.stack (named so because pith_stack is the boxed value stack). */
PITH_API pith_tensor *pith_stack_tensors(const pith_tensor *const *tensors, size_t n, int dim);
/* cat and stack into `out`, which the promoted dtype must be castable to, of the result's
 * shape (or no elements: then it is resized). */
PITH_API pith_status pith_cat_out(pith_tensor *out, const pith_tensor *const *tensors, size_t n,
                                  int dim);
PITH_API pith_status pith_stack_tensors_out(pith_tensor *out, const pith_tensor *const *tensors,
                                            size_t n, int dim);
PITH_API pith_tensor *pith_index_select(const pith_tensor *x, int dim,
                                        const pith_tensor *index);
PITH_API pith_tensor *pith_gather(const pith_tensor *x, int dim, const pith_tensor *index);
PITH_API pith_tensor *pith_masked_fill(const pith_tensor *x, const pith_tensor *mask,
                                       double value);
PITH_API pith_status pith_masked_fill_(pith_tensor *self, const pith_tensor *mask,
                                       double value);
PITH_API pith_tensor *pith_tril(const pith_tensor *x, int64_t diagonal);
PITH_API pith_tensor *pith_triu(const pith_tensor *x, int64_t diagonal);
PITH_API pith_tensor *pith_embedding(const pith_tensor *weight, const pith_tensor *indices);

/* ---- advanced indexing (PyTorch's rules; `indices` entries may be NULL: a whole dim) ---- */
/* int64 [n, ndim]: the coordinates of the nonzero elements, in row-major order. */
PITH_API pith_tensor *pith_nonzero(const pith_tensor *x);
/* x[indices]: integer tensors (int64/int32) and bool/uint8 masks, broadcast together. */
PITH_API pith_tensor *pith_index(const pith_tensor *x, const pith_tensor *const *indices,
                                 size_t n);
/* x[indices] = values (or += with `accumulate`), on a copy / in place. */
PITH_API pith_tensor *pith_index_put(const pith_tensor *x, const pith_tensor *const *indices,
                                     size_t n, const pith_tensor *values, bool accumulate);
PITH_API pith_status pith_index_put_(pith_tensor *self, const pith_tensor *const *indices,
                                     size_t n, const pith_tensor *values, bool accumulate);
/* The elements of x where the bool `mask` (broadcast with x) is true, as a 1-D tensor. */
PITH_API pith_tensor *pith_masked_select(const pith_tensor *x, const pith_tensor *mask);

/* ---- normalisation ---- */
PITH_API pith_tensor *pith_softmax(const pith_tensor *x, int dim);
PITH_API pith_tensor *pith_log_softmax(const pith_tensor *x, int dim);
/* `weight` and `bias` may be NULL. */
PITH_API pith_tensor *pith_layer_norm(const pith_tensor *x, int ndim_normalized,
                                      const int64_t *normalized_shape,
                                      const pith_tensor *weight, const pith_tensor *bias,
                                      double eps);

/* ---- factories (pith_empty, pith_zeros, pith_ones and pith_full are in pith.h) ---- */
PITH_API pith_tensor *pith_arange(double start, double end, double step, pith_dtype dtype);
PITH_API pith_tensor *pith_linspace(double start, double end, int64_t steps, pith_dtype dtype);
PITH_API pith_tensor *pith_eye(int64_t n, int64_t m, pith_dtype dtype);
PITH_API pith_tensor *pith_rand(int ndim, const int64_t *sizes, pith_dtype dtype);
PITH_API pith_tensor *pith_randn(int ndim, const int64_t *sizes, pith_dtype dtype);
PITH_API pith_tensor *pith_randint(int64_t low, int64_t high, int ndim, const int64_t *sizes,
                                   pith_dtype dtype);

/* ---- sorting, scans and sampling ---- */
/* Sorts along `dim`, always stably, NaN as the largest value (first when descending). On
 * success *values and *indices (int64) are new references; on error both are untouched. */
PITH_API pith_status pith_sort(const pith_tensor *x, int dim, bool descending,
                               pith_tensor **values, pith_tensor **indices);
PITH_API pith_tensor *pith_argsort(const pith_tensor *x, int dim, bool descending);
/* The k largest (or smallest) along `dim`, in sorted order; of equal values the first. */
PITH_API pith_status pith_topk(const pith_tensor *x, int64_t k, int dim, bool largest,
                               pith_tensor **values, pith_tensor **indices);
/* Integer and bool inputs give int64, as PyTorch. */
PITH_API pith_tensor *pith_cumsum(const pith_tensor *x, int dim);
PITH_API pith_tensor *pith_cumprod(const pith_tensor *x, int dim);
/* int64 category indices drawn from the rows of `probs` (1-D or 2-D, floating);
 * `generator` NULL is the default generator. */
PITH_API pith_tensor *pith_multinomial(const pith_tensor *probs, int64_t num_samples,
                                       bool replacement, pith_generator *generator);

#ifdef __cplusplus
}
#endif

#endif /* PITH_OPS_H */
