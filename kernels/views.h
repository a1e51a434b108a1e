/* views.h — view geometry shared by the view kernels (views.c, views_slicing.c) and by the
 * copying kernels that broadcast or narrow their operands (combine.c, indexing.c).
 *
 * A view is a new tensor over its base's storage with new sizes, strides and offset; it
 * shares the version counter (Note [Version counter lives in the storage]). Nothing here
 * touches data, so every function works for CPU and Meta tensors alike. */
#ifndef PITH_KERNELS_VIEWS_H
#define PITH_KERNELS_VIEWS_H

#include "kernels/ops_internal.h"

/* Sizes, strides (in elements) and storage offset of a tensor or of a view to make. */
typedef struct {
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int64_t strides[PITH_MAX_DIMS];
    int64_t offset;
} view_geometry;

/* Fills `g` with t's geometry. */
void geometry_of(const pith_tensor *t, view_geometry *g);

/* Returns a view of `self` with geometry `g` through `ret` (validated by the caller). */
pith_status ret_view(pith_value *ret, const pith_tensor *self, const view_geometry *g);

/* Returns a Tensor[] result: takes ownership of `list` (malloc'd, `n` new references). */
pith_status ret_tensor_list(pith_value *ret, pith_tensor **list, size_t n);

/* Releases `n` tensors of `list` and frees it. */
void tensor_list_release(pith_tensor **list, size_t n);

/* PyTorch's inferExpandGeometry: the geometry of `self` expanded to `sizes` (`-1` keeps a
 * size; new dims are prepended; only size-one dims expand, with stride 0). Messages start
 * with `op`. */
pith_status geometry_expand(const char *op, const pith_tensor *self, int ndim,
                            const int64_t *sizes, view_geometry *g);

/* PyTorch's infer_size: replaces one -1 in `shape` (copied into `out`) so that the shape
 * holds `numel` elements; errors name `op`. */
pith_status shape_infer(const char *op, pith_int_list shape, int64_t numel, int64_t *out);

/* PyTorch's computeStride: strides that let a tensor with `old` geometry be viewed with
 * `ndim`/`sizes` (same numel), written to `strides`; false when no such strides exist. */
bool view_strides_compute(const pith_tensor *old, int ndim, const int64_t *sizes,
                          int64_t *strides);

/* The broadcast of two shapes (PyTorch's infer_size for broadcasting), with PyTorch's
 * message "The size of tensor a (3) must match the size of tensor b (4) at non-singleton
 * dimension 1". */
pith_status shape_broadcast(int ndim_a, const int64_t *a, int ndim_b, const int64_t *b,
                            int *ndim_out, int64_t *out);

/* "torch.FloatTensor" and the like: the spelling PyTorch uses in expand's message. */
const char *dtype_legacy_tensor_name(pith_dtype dtype);

#endif /* PITH_KERNELS_VIEWS_H */
