/* views_slicing.c — views that keep part of one dim: slice, select, narrow, and the
 * list-returning split, chunk and unbind.
 *
 * COMPOSITE kernels (CPU and Meta alike); bounds and messages follow PyTorch's
 * TensorShape.cpp. Geometry helpers are in views.c. */
#include <stdlib.h>

#include "kernels/views.h"

/* Narrows dim `d` of `g` to `len` elements starting at `start`, every `step`-th. */
/* The stride is stride * step, as PyTorch's. With more than one element left, step < size
 * and that stays within the storage; a longer step leaves at most one element, whose stride
 * is never used for addressing, and there stride * step could wrap (x[::2**62]) or
 * overflow once a kernel scales it to bytes: then the dim keeps its own stride. */
static void geometry_narrow(view_geometry *g, int d, int64_t start, int64_t len, int64_t step)
{
    g->offset += start * g->strides[d];
    g->sizes[d] = len == 0 ? 0 : (len - 1) / step + 1;
    int64_t stride;
    if (!__builtin_mul_overflow(g->strides[d], step, &stride) &&
        stride <= INT64_MAX / 16 && stride >= INT64_MIN / 16) /* bytes: itemsize <= 8 */
        g->strides[d] = stride;
}

pith_status slice_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            int64_t dim, pith_opt_int start, pith_opt_int end, int64_t step)
{
    if (self->ndim == 0)
        return pith_set_error(PITH_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor.");
    int d = dim_wrap(dim, self->ndim);
    if (d < 0)
        return pith_last_status();
    if (step <= 0)
        return pith_set_error(PITH_ERR_VALUE, "slice: slice step must be positive");
    int64_t size = self->sizes[d];
    int64_t lo = start.present ? start.value : 0;
    int64_t hi = end.present ? end.value : INT64_MAX;
    /* Python's clamping: negatives count from the end, then clamp into [0, size]. */
    if (lo < 0)
        lo += size;
    if (hi < 0)
        hi += size;
    if (lo < 0)
        lo = 0;
    else if (lo >= size)
        lo = size;
    if (hi < lo)
        hi = lo;
    else if (hi >= size)
        hi = size;
    view_geometry g;
    geometry_of(self, &g);
    geometry_narrow(&g, d, lo, hi - lo, step);
    return ret_view(ret, self, &g);
}

pith_status select_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             int64_t dim, int64_t index)
{
    char buf[512];
    if (self->ndim == 0)
        return pith_set_error(PITH_ERR_INDEX, "select() cannot be applied to a 0-dim tensor.");
    int d = dim_wrap(dim, self->ndim);
    if (d < 0)
        return pith_last_status();
    int64_t size = self->sizes[d];
    if (index < -size || index >= size)
        return pith_set_error(PITH_ERR_INDEX,
                              "select(): index %lld out of range for tensor of size %s at "
                              "dimension %d",
                              (long long)index, shape_format(self->ndim, self->sizes, buf, sizeof buf),
                              d);
    if (index < 0)
        index += size;
    view_geometry g;
    geometry_of(self, &g);
    g.offset += index * g.strides[d];
    for (int i = d; i + 1 < g.ndim; i++) {
        g.sizes[i] = g.sizes[i + 1];
        g.strides[i] = g.strides[i + 1];
    }
    g.ndim--;
    return ret_view(ret, self, &g);
}

/* Validates narrow's arguments (PyTorch's order and messages); *d and *start get the
 * wrapped dim and start. */
static pith_status narrow_check(const pith_tensor *self, int64_t dim, int64_t *start,
                                int64_t length, int *d)
{
    if (self->ndim == 0)
        return pith_set_error(PITH_ERR_VALUE, "narrow() cannot be applied to a 0-dim tensor.");
    if (length < 0)
        return pith_set_error(PITH_ERR_VALUE, "narrow(): length must be non-negative.");
    *d = dim_wrap(dim, self->ndim);
    if (*d < 0)
        return pith_last_status();
    int64_t size = self->sizes[*d];
    if (*start < -size || *start > size)
        return pith_set_error(PITH_ERR_INDEX,
                              "narrow(): start out of range (expected to be in range of [%lld, "
                              "%lld], but got %lld)",
                              -(long long)size, (long long)size, (long long)*start);
    if (*start < 0)
        *start += size;
    if (*start > size - length)
        return pith_set_error(PITH_ERR_VALUE,
                              "narrow(): start (%lld) + length (%lld) exceeds dimension size "
                              "(%lld).",
                              (long long)*start, (long long)length, (long long)size);
    return PITH_OK;
}

/* narrow and the two below are composite implicit (See Note [Composites call their parts
 * through the dispatcher], ops_internal.h). narrow is PyTorch's slice(self, dim, start,
 * start + length), SliceBackward0. */
pith_status narrow_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             int64_t dim, int64_t start, int64_t length)
{
    int d = 0;
    if (narrow_check(self, dim, &start, length, &d) != PITH_OK)
        return pith_last_status();
    if (composite_at_autograd(ks))
        return pith_redispatch_slice(ks, ret, self, d, (pith_opt_int){true, start},
                                     (pith_opt_int){true, start + length}, 1);
    view_geometry g;
    geometry_of(self, &g);
    geometry_narrow(&g, d, start, length, 1);
    return ret_view(ret, self, &g);
}

/* `n` consecutive views along dim `d`: piece i holds sizes[i] elements when `sizes` is
 * given (split_with_sizes), else `size`, except the last, which holds `last`. */
static pith_status views_split(pith_value *ret, const pith_tensor *self, int d, size_t n,
                               int64_t size, int64_t last, const int64_t *sizes)
{
    pith_tensor **list = calloc(n ? n : 1, sizeof *list);
    if (!list)
        return pith_set_error(PITH_ERR_NOMEM, "split: cannot allocate %zu results", n);
    int64_t start = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t length = sizes ? sizes[i] : i + 1 < n ? size : last;
        view_geometry g;
        geometry_of(self, &g);
        geometry_narrow(&g, d, start, length, 1);
        start += length;
        list[i] = tensor_view(self, g.ndim, g.sizes, g.strides, g.offset);
        if (!list[i]) {
            tensor_list_release(list, i);
            return pith_last_status();
        }
    }
    return ret_tensor_list(ret, list, n);
}

pith_status split_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            int64_t split_size, int64_t dim)
{
    if (self->ndim == 0)
        return pith_set_error(PITH_ERR_VALUE, "split expects at least a 1-dimensional tensor");
    if (split_size < 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "split expects split_size be non-negative, but got split_size=%lld",
                              (long long)split_size);
    int d = dim_wrap(dim, self->ndim);
    if (d < 0)
        return pith_last_status();
    int64_t dim_size = self->sizes[d];
    if (split_size == 0 && dim_size != 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "split_size can only be 0 if dimension size is 0, but got "
                              "dimension size of %lld",
                              (long long)dim_size);
    /* At least one piece, even when split_size exceeds the dim (PyTorch keeps that). */
    int64_t n = split_size == 0 || dim_size == 0 ? 1 : (dim_size - 1) / split_size + 1;
    int64_t last = dim_size - split_size * (n - 1);
    return views_split(ret, self, d, (size_t)n, split_size, last, NULL);
}

/* PyTorch's split_with_sizes: views of the given sizes, which must be non-negative and sum
 * to the dim's size. */
pith_status split_with_sizes_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                       pith_int_list split_sizes, int64_t dim)
{
    if (self->ndim == 0)
        return pith_set_error(PITH_ERR_VALUE, "split expects at least a 1-dimensional tensor");
    int d = dim_wrap(dim, self->ndim);
    if (d < 0)
        return pith_last_status();
    int64_t dim_size = self->sizes[d], total = 0;
    for (size_t i = 0; i < split_sizes.n; i++) {
        if (split_sizes.data[i] < 0)
            return pith_set_error(PITH_ERR_VALUE,
                                  "split_with_sizes expects split_sizes have only non-negative "
                                  "entries, but got split_sizes=%lld at %zu",
                                  (long long)split_sizes.data[i], i);
        total += split_sizes.data[i];
        if (total > dim_size)
            break;
    }
    if (total != dim_size)
        return pith_set_error(PITH_ERR_VALUE,
                              "split_with_sizes expects split_sizes to sum exactly to %lld "
                              "(input tensor's size at dimension %lld), but got split_sizes "
                              "of %zu values summing to %s%lld",
                              (long long)dim_size, (long long)dim, split_sizes.n,
                              total > dim_size ? "more than " : "", (long long)total);
    return views_split(ret, self, d, split_sizes.n, 0, 0, split_sizes.data);
}

/* split.sizes is split_with_sizes by another name (SplitWithSizesBackward0). */
pith_status split_sizes_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                  pith_int_list split_size, int64_t dim)
{
    return composite_at_autograd(ks)
               ? pith_redispatch_split_with_sizes(ks, ret, self, split_size, dim)
               : split_with_sizes_composite(ks, ret, self, split_size, dim);
}

/* chunk is PyTorch's split(self, ceil(size / chunks), dim) (SplitBackward0), so there may be
 * fewer than `chunks` pieces; an empty dim still gives `chunks` empty pieces, by
 * split_with_sizes. */
pith_status chunk_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            int64_t chunks, int64_t dim)
{
    if (self->ndim == 0)
        return pith_set_error(PITH_ERR_VALUE, "chunk expects at least a 1-dimensional tensor");
    if (chunks <= 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "chunk expects `chunks` to be greater than 0, got: %lld",
                              (long long)chunks);
    int d = dim_wrap(dim, self->ndim);
    if (d < 0)
        return pith_last_status();
    int64_t dim_size = self->sizes[d];
    bool at_autograd = composite_at_autograd(ks);
    if (dim_size > 0) {
        int64_t split_size = (dim_size - 1) / chunks + 1;
        if (at_autograd)
            return pith_redispatch_split(ks, ret, self, split_size, d);
        int64_t n = (dim_size - 1) / split_size + 1;
        return views_split(ret, self, d, (size_t)n, split_size, dim_size - split_size * (n - 1),
                           NULL);
    }
    if (!at_autograd)
        return views_split(ret, self, d, (size_t)chunks, 0, 0, NULL);
    int64_t *zeros = calloc((size_t)chunks, sizeof *zeros);
    if (!zeros)
        return pith_set_error(PITH_ERR_NOMEM, "chunk: cannot allocate %lld sizes",
                              (long long)chunks);
    pith_status status =
        pith_redispatch_split_with_sizes(ks, ret, self, (pith_int_list){zeros, (size_t)chunks}, d);
    free(zeros);
    return status;
}

pith_status unbind_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             int64_t dim)
{
    int d = dim_wrap(dim, self->ndim);
    if (d < 0)
        return pith_last_status();
    if (self->ndim == 0)
        return pith_set_error(PITH_ERR_INDEX,
                              "unbind: dimension specified as %lld but tensor has no dimensions",
                              (long long)dim);
    size_t n = (size_t)self->sizes[d];
    pith_tensor **list = calloc(n ? n : 1, sizeof *list);
    if (!list)
        return pith_set_error(PITH_ERR_NOMEM, "unbind: cannot allocate %zu results", n);
    for (size_t i = 0; i < n; i++) {
        pith_value one[1];
        if (select_composite(ks, one, self, d, (int64_t)i) != PITH_OK) {
            tensor_list_release(list, i);
            return pith_last_status();
        }
        list[i] = one[0].u.t;
    }
    return ret_tensor_list(ret, list, n);
}
