/* indexing.h — helpers of the copying kernels (indexing.c, combine.c): a row-major walk
 * over a strided tensor, per-thread ranges, index loading with bounds checks, and device
 * checks. Everything that can fail runs before any parallel region (ARCHITECTURE.md:
 * an error found inside an OpenMP worker would be lost). */
#ifndef PITH_KERNELS_INDEXING_H
#define PITH_KERNELS_INDEXING_H

#include <string.h>

#include "kernels/ops_internal.h"

/* A row-major walk over `sizes`, tracking the byte offset for one set of strides. The
 * strides scaled to bytes, every offset and the step one past the end of a dim before the
 * carry subtracts it again stay within int64 for the geometry of any tensor (and for a
 * shape no larger than a tensor's, as gather's index): See Note [Geometry fits in int64]
 * (core/tensor.c). */
typedef struct {
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int64_t strides[PITH_MAX_DIMS]; /* bytes */
    int64_t index[PITH_MAX_DIMS];
    int64_t offset; /* bytes from the first element */
} strided_walk;

/* Starts a walk at flat element `start`; `strides` are in elements. */
static inline void walk_init(strided_walk *w, int ndim, const int64_t *sizes,
                             const int64_t *strides, size_t itemsize, int64_t start)
{
    w->ndim = ndim;
    w->offset = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        w->sizes[d] = sizes[d];
        w->strides[d] = strides[d] * (int64_t)itemsize;
        int64_t i = sizes[d] > 0 ? start % sizes[d] : 0;
        start = sizes[d] > 0 ? start / sizes[d] : 0;
        w->index[d] = i;
        w->offset += i * w->strides[d];
    }
}

static inline void walk_next(strided_walk *w)
{
    for (int d = w->ndim - 1; d >= 0; d--) {
        w->offset += w->strides[d];
        if (++w->index[d] < w->sizes[d])
            return;
        w->offset -= w->strides[d] * w->sizes[d];
        w->index[d] = 0;
    }
}

/* Copies one element of `itemsize` bytes (1, 2, 4 or 8). */
static inline void element_copy(char *dst, const char *src, size_t itemsize)
{
    switch (itemsize) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
    }
}

/* This thread's share [*begin, *end) of `n` items inside a parallel region (all of it
 * outside one). */
void thread_range(int64_t n, int64_t *begin, int64_t *end);

/* Loads the integer tensor `index` (int32 or int64, any strides, CPU) into a malloc'd int64
 * array in row-major order; *out is NULL for an empty index. */
pith_status index_load(const char *op, const pith_tensor *index, int64_t **out);

/* The position of the first value outside [0, bound), or -1 when all are inside. */
int64_t index_find_out_of_range(const int64_t *idx, int64_t n, int64_t bound);

/* Whether `t` is int32 or int64. */
static inline bool index_dtype_ok(const pith_tensor *t)
{
    return t->dtype == PITH_INT64 || t->dtype == PITH_INT32;
}

/* PITH_ERR_VALUE unless `a` and `b` are on the same device. */
pith_status devices_check(const char *op, const pith_tensor *a, const pith_tensor *b);

#endif /* PITH_KERNELS_INDEXING_H */
