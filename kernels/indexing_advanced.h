/* indexing_advanced.h — the plan of an advanced index (PyTorch's rules for a Tensor?[] list
 * of index tensors), worked out once and shared by index.Tensor, masked_select
 * (indexing_advanced.c) and index_put_ (indexing_put.c), plus the nonzero helpers that
 * turn masks into coordinates. See Note [Advanced indexing] in indexing_advanced.c. */
#ifndef PITH_KERNELS_INDEXING_ADVANCED_H
#define PITH_KERNELS_INDEXING_ADVANCED_H

#include "kernels/indexing.h"
#include "kernels/views.h"

/* One tensor of the index list. */
typedef struct {
    const pith_tensor *t;
    int dim;       /* the first dim of self it indexes */
    int ndims;     /* the dims it indexes: 1 for an integer tensor, its ndim for a mask */
    bool mask;     /* a bool or uint8 tensor */
    int64_t nnz;   /* CPU masks: the number of true elements */
    int64_t *data; /* CPU: an integer tensor's values (row-major), or a mask's coordinates
                      (`ndims` columns of `nnz`); malloc'd, NULL when empty */
} index_entry;

typedef struct {
    view_geometry self; /* self's sizes and strides, the indexed dims moved to the front
                           when they are not adjacent (offset unused) */
    int first, count;   /* the indexed dims are [first, first + count) of `self` */
    int index_ndim;     /* the broadcast shape of the index tensors */
    int64_t index_sizes[PITH_MAX_DIMS];
    int64_t index_numel;
    int out_ndim; /* self[indices]: self's dims before `first`, the index shape, the rest */
    int64_t out_sizes[PITH_MAX_DIMS];
    int64_t out_numel;
    int64_t *offsets; /* CPU with out_numel > 0: per element of the index shape (row-major),
                         the element offset its indices select in `self` */
    int nentries;
    index_entry entries[PITH_MAX_DIMS];
} index_plan;

/* Validates `indices` against `self` and works out the plan (errors name `op`). With `load`
 * (CPU) it reads the index data: the masks' true elements and every index value, which is
 * bounds-checked when the result is not empty. Without it (meta) a mask is
 * PITH_ERR_NOT_IMPLEMENTED, as the result's shape depends on its data. Call index_plan_free
 * afterwards, whether this failed or not. */
pith_status index_plan_make(const char *op, const pith_tensor *self, pith_tensor_list indices,
                            bool load, index_plan *p);
void index_plan_free(index_plan *p);

/* The elements of self's dims before the indexed ones (`outer`) and after them (`inner`):
 * the result is [outer..., index shape..., inner...]. */
static inline void index_plan_blocks(const index_plan *p, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < p->first; d++)
        *outer *= p->self.sizes[d];
    for (int d = p->first + p->count; d < p->self.ndim; d++)
        *inner *= p->self.sizes[d];
}

/* Element offset of the row-major position `pos` over the first `ndim` dims of a geometry
 * (sizes, strides in elements). */
static inline int64_t geometry_offset_of(const int64_t *sizes, const int64_t *strides,
                                         int ndim, int64_t pos)
{
    int64_t offset = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        offset += (pos % sizes[d]) * strides[d];
        pos /= sizes[d];
    }
    return offset;
}

/* The element offset in self of item `item` of the result's [outer, index shape] part
 * (CPU plans with a non-empty result). */
static inline int64_t index_plan_item_offset(const index_plan *p, int64_t item)
{
    int64_t nb = p->index_numel;
    return geometry_offset_of(p->self.sizes, p->self.strides, p->first, item / nb) +
           p->offsets[item % nb];
}

/* The nonzero elements of a tensor (any dtype and strides; -0.0 is zero, NaN is not),
 * counted in row-major chunks that nonzero_fill then fills in parallel. */
#define NONZERO_MAX_CHUNKS 64
typedef struct {
    int nchunks;
    int64_t counts[NONZERO_MAX_CHUNKS];
    int64_t total;
} nonzero_scan;
void nonzero_count(const pith_tensor *t, nonzero_scan *scan);
/* Writes the coordinates of the nonzero elements of `t` (as counted by `scan`), in row-major
 * order: coordinate d of the i-th one goes to dst[i * row_stride + d * col_stride]. */
void nonzero_fill(const pith_tensor *t, const nonzero_scan *scan, int64_t *dst,
                  int64_t row_stride, int64_t col_stride);

#endif /* PITH_KERNELS_INDEXING_ADVANCED_H */
