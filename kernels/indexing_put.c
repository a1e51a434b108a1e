/* indexing_put.c — index_put_ and index_put: writing `values` at an advanced index (the
 * plan of indexing_advanced.c, See Note [Advanced indexing]), optionally accumulating. */
#include <stdlib.h>

#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/indexing_advanced.h"

/* Note [index_put_ values]
 * `values` broadcast to the shape self[indices] has (the plan's result shape), as in
 * PyTorch. Unlike PyTorch, which requires values to have self's dtype, other dtypes are
 * converted, as copy_ does. Values that share memory with self are copied first, so that
 * every write reads an original value. With accumulate=False and repeated indices, the last
 * write in row-major order wins when the write runs serially (small writes, or a self with
 * overlapping elements); large writes run in parallel and which one wins is unspecified,
 * as in PyTorch. accumulate=True runs serially and adds in self's dtype (bool: or). */

/* Whether two elements of `t` share memory (a dim of size > 1 with stride 0). PyTorch only
 * warns about writing into such a tensor; the write then runs serially. */
static bool self_overlaps(const pith_tensor *t)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] > 1 && t->strides[d] == 0)
            return true;
    return false;
}

#define ADD_WRAPPING_(ctype, utype)                                                         \
    do {                                                                                    \
        ctype a_, b_;                                                                       \
        memcpy(&a_, dst, sizeof a_);                                                        \
        memcpy(&b_, src, sizeof b_);                                                        \
        a_ = (ctype)(utype)((utype)a_ + (utype)b_);                                         \
        memcpy(dst, &a_, sizeof a_);                                                        \
    } while (0)
#define ADD_FLOAT_(ctype)                                                                   \
    do {                                                                                    \
        ctype a_, b_;                                                                       \
        memcpy(&a_, dst, sizeof a_);                                                        \
        memcpy(&b_, src, sizeof b_);                                                        \
        a_ += b_;                                                                           \
        memcpy(dst, &a_, sizeof a_);                                                        \
    } while (0)
#define ADD_HALF_(ctype, to_float, from_float)                                              \
    do {                                                                                    \
        ctype a_, b_;                                                                       \
        memcpy(&a_, dst, sizeof a_);                                                        \
        memcpy(&b_, src, sizeof b_);                                                        \
        a_ = from_float(to_float(a_) + to_float(b_));                                       \
        memcpy(dst, &a_, sizeof a_);                                                        \
    } while (0)

/* *dst += *src in `dtype`; integers wrap. */
static void element_add(char *dst, const char *src, pith_dtype dtype)
{
    switch (dtype) {
    case PITH_BOOL: *dst = (char)(*dst || *src); break;
    case PITH_UINT8: ADD_WRAPPING_(uint8_t, uint8_t); break;
    case PITH_INT8: ADD_WRAPPING_(int8_t, uint8_t); break;
    case PITH_INT16: ADD_WRAPPING_(int16_t, uint16_t); break;
    case PITH_INT32: ADD_WRAPPING_(int32_t, uint32_t); break;
    case PITH_INT64: ADD_WRAPPING_(int64_t, uint64_t); break;
    case PITH_FLOAT16: ADD_HALF_(pith_half, half_to_float, float_to_half); break;
    case PITH_BFLOAT16: ADD_HALF_(pith_bfloat16, bfloat16_to_float, float_to_bfloat16); break;
    case PITH_FLOAT32: ADD_FLOAT_(float); break;
    case PITH_FLOAT64: ADD_FLOAT_(double); break;
    }
}

/* Whether the n dims (sizes, element strides) are one dense row-major block. */
static bool block_dense(int n, const int64_t *sizes, const int64_t *strides)
{
    int64_t expected = 1;
    for (int i = n - 1; i >= 0; i--) {
        if (sizes[i] != 1 && strides[i] != expected)
            return false;
        expected *= sizes[i];
    }
    return true;
}

/* One item's inner block when both sides are dense (block_dense): a copy, or an add in
 * float32/float64 that the compiler vectorises (an embedding's gradient adds rows this way);
 * false for what the element-wise walk must do (other dtypes' adds). */
static bool dense_block(char *to, const char *from, int64_t inner, pith_dtype dtype,
                        size_t itemsize, bool accumulate)
{
    if (!accumulate) {
        memcpy(to, from, (size_t)inner * itemsize);
        return true;
    }
    if (dtype == PITH_FLOAT32) {
        float *d = (float *)(void *)to;
        const float *s = (const float *)(const void *)from;
        for (int64_t k = 0; k < inner; k++)
            d[k] += s[k];
        return true;
    }
    if (dtype == PITH_FLOAT64) {
        double *d = (double *)(void *)to;
        const double *s = (const double *)(const void *)from;
        for (int64_t k = 0; k < inner; k++)
            d[k] += s[k];
        return true;
    }
    return false;
}

/* Writes (or adds) the values `src`, of geometry `vg` (the plan's result shape), at the
 * plan's index into `dst`, self's data. The result is not empty. */
static void plan_scatter(const index_plan *p, char *dst, const char *src,
                         const view_geometry *vg, pith_dtype dtype, bool accumulate,
                         bool serial)
{
    const view_geometry *g = &p->self;
    size_t itemsize = dtype_itemsize(dtype);
    int after = p->first + p->count, nafter = g->ndim - after;
    int lead = p->first + p->index_ndim; /* the values' dims before the inner block */
    int64_t outer, inner;
    index_plan_blocks(p, &outer, &inner);
    int64_t items = outer * p->index_numel;
    int threads = serial || accumulate ? 1 : parallel_threads_for(p->out_numel);
    bool dense = block_dense(nafter, g->sizes + after, g->strides + after) &&
                 block_dense(nafter, vg->sizes + lead, vg->strides + lead);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(items, &begin, &end);
        for (int64_t item = begin; item < end; item++) {
            char *to = dst + index_plan_item_offset(p, item) * (int64_t)itemsize;
            const char *from =
                src + geometry_offset_of(vg->sizes, vg->strides, lead, item) * (int64_t)itemsize;
            if (dense && dense_block(to, from, inner, dtype, itemsize, accumulate))
                continue;
            strided_walk wd, ws;
            walk_init(&wd, nafter, g->sizes + after, g->strides + after, itemsize, 0);
            walk_init(&ws, nafter, vg->sizes + lead, vg->strides + lead, itemsize, 0);
            for (int64_t k = 0; k < inner; k++, walk_next(&wd), walk_next(&ws)) {
                if (accumulate)
                    element_add(to + wd.offset, from + ws.offset, dtype);
                else
                    element_copy(to + wd.offset, from + ws.offset, itemsize);
            }
        }
    });
}

/* PyTorch's check that values broadcast to the result shape (no implicit leading dims). */
static pith_status values_check(const index_plan *p, const pith_tensor *values)
{
    char a[512], b[512];
    bool ok = values->ndim <= p->out_ndim;
    for (int i = 0; ok && i < values->ndim; i++) {
        int64_t have = values->sizes[values->ndim - 1 - i];
        ok = have == 1 || have == p->out_sizes[p->out_ndim - 1 - i];
    }
    if (ok)
        return PITH_OK;
    return pith_set_error(PITH_ERR_VALUE,
                          "shape mismatch: value tensor of shape %s cannot be broadcast to "
                          "indexing result of shape %s",
                          shape_format(values->ndim, values->sizes, a, sizeof a),
                          shape_format(p->out_ndim, p->out_sizes, b, sizeof b));
}

/* The plan, and (CPU) the values to read as a new reference with their geometry broadcast
 * to the result shape. See Note [index_put_ values]. */
static pith_status index_put_prepare(const pith_tensor *self, pith_tensor_list indices,
                                     const pith_tensor *values, bool meta, index_plan *p,
                                     view_geometry *vg, pith_tensor **source)
{
    memset(p, 0, sizeof *p);
    *source = NULL;
    if (devices_check("index_put_", self, values) != PITH_OK ||
        index_plan_make("index_put_", self, indices, !meta, p) != PITH_OK ||
        values_check(p, values) != PITH_OK)
        return pith_last_status();
    if (meta)
        return PITH_OK;
    if (values->dtype == self->dtype && values->storage != self->storage) {
        pith_retain((pith_tensor *)values);
        *source = (pith_tensor *)values;
    } else if (!(*source = tensor_converted(values, self->dtype))) {
        return pith_last_status();
    }
    return geometry_expand("index_put_", *source, p->out_ndim, p->out_sizes, vg);
}

/* index_put_ on CPU (writes) or meta (validates only). */
static pith_status index_put_run(pith_value *ret, const pith_tensor *self,
                                 pith_tensor_list indices, const pith_tensor *values,
                                 bool accumulate, bool meta)
{
    index_plan p;
    view_geometry vg;
    pith_tensor *source;
    pith_status status = index_put_prepare(self, indices, values, meta, &p, &vg, &source);
    if (status == PITH_OK && !meta && p.out_numel > 0)
        plan_scatter(&p, tensor_data(self), tensor_data(source), &vg, self->dtype, accumulate,
                     self_overlaps(self));
    index_plan_free(&p);
    pith_release(source);
    if (status != PITH_OK)
        return status;
    tensor_bump_version(self);
    return ret_self(ret, self);
}

pith_status index_put__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              pith_tensor_list indices, const pith_tensor *values,
                              bool accumulate, pith_device device)
{
    return index_put_run(ret, self, indices, values, accumulate, device == PITH_META);
}

/* index_put: index_put_ into a copy of self. */
pith_status index_put_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                pith_tensor_list indices, const pith_tensor *values,
                                bool accumulate)
{
    pith_value copy[1];
    if (pith_call_clone(copy, self) != PITH_OK)
        return pith_last_status();
    pith_status status = pith_call_index_put_(ret, copy[0].u.t, indices, values, accumulate);
    pith_release(copy[0].u.t);
    return status;
}
