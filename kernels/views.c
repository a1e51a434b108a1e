/* views.c — the shape-changing view ops (view, _unsafe_view, permute, transpose, t, expand,
 * as_strided, squeeze, unsqueeze, alias, detach), the composites made of them (reshape,
 * flatten, broadcast_to, expand_as, broadcast_tensors) and the geometry helpers of views.h.
 *
 * Every kernel here serves CPU and Meta tensors alike: a view op only computes geometry and
 * calls tensor_view; a composite calls view ops. Slicing views (slice, select, narrow,
 * split, chunk, unbind) live in views_slicing.c. Semantics and messages follow PyTorch. */
#include <stdlib.h>
#include <string.h>

#include "kernels/elementwise.h"
#include "kernels/views.h"

/* ---- geometry helpers ---- */

void geometry_of(const pith_tensor *t, view_geometry *g)
{
    g->ndim = t->ndim;
    memcpy(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(g->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    g->offset = t->offset;
}

pith_status ret_view(pith_value *ret, const pith_tensor *self, const view_geometry *g)
{
    return ret_tensor(ret, tensor_view(self, g->ndim, g->sizes, g->strides, g->offset));
}

pith_status ret_tensor_list(pith_value *ret, pith_tensor **list, size_t n)
{
    ret[0].kind = PITH_VALUE_TENSOR_LIST;
    ret[0].u.tensors.data = list;
    ret[0].u.tensors.n = n;
    return PITH_OK;
}

void tensor_list_release(pith_tensor **list, size_t n)
{
    if (!list)
        return;
    for (size_t i = 0; i < n; i++)
        pith_release(list[i]);
    free(list);
}

const char *dtype_legacy_tensor_name(pith_dtype dtype)
{
    static const char *const names[PITH_NUM_DTYPES] = {
        "torch.BoolTensor",  "torch.ByteTensor", "torch.CharTensor",     "torch.ShortTensor",
        "torch.IntTensor",   "torch.LongTensor", "torch.HalfTensor",     "torch.BFloat16Tensor",
        "torch.FloatTensor", "torch.DoubleTensor"};
    return dtype_valid((int)dtype) ? names[dtype] : "torch.Tensor";
}

pith_status shape_infer(const char *op, pith_int_list shape, int64_t numel, int64_t *out)
{
    char buf[512];
    if (shape.n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "%s: a tensor has at most %d dims, got a shape of %zu",
                              op, PITH_MAX_DIMS, shape.n);
    int infer = -1;
    bool zero = false, overflow = false;
    int64_t newsize = 1;
    for (size_t i = 0; i < shape.n; i++) {
        int64_t s = shape.data[i];
        out[i] = s;
        if (s == -1) {
            if (infer >= 0)
                return pith_set_error(PITH_ERR_VALUE, "%s: only one dimension can be inferred", op);
            infer = (int)i;
        } else if (s >= 0) {
            if (s == 0)
                zero = true;
            else if (__builtin_mul_overflow(newsize, s, &newsize))
                overflow = true;
        } else {
            return pith_set_error(PITH_ERR_VALUE, "%s: invalid shape dimension %lld", op,
                                  (long long)s);
        }
    }
    if (zero) {
        newsize = 0;
        overflow = false;
    }
    if (!overflow &&
        (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0))) {
        if (infer >= 0) {
            if (newsize == 0)
                return pith_set_error(
                    PITH_ERR_VALUE,
                    "%s: cannot reshape tensor of 0 elements into shape %s because the "
                    "unspecified dimension size -1 can be any value and is ambiguous",
                    op, shape_format((int)shape.n, shape.data, buf, sizeof buf));
            out[infer] = numel / newsize;
        }
        return PITH_OK;
    }
    return pith_set_error(PITH_ERR_VALUE, "%s: shape '%s' is invalid for input of size %lld", op,
                          shape_format((int)shape.n, shape.data, buf, sizeof buf), (long long)numel);
}

/* Products below wrap (unsigned) instead of overflowing: they only feed comparisons and
 * strides of dims whose stride does not matter, as in PyTorch. */
static int64_t mul_wrap(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* A port of PyTorch's computeStride (aten/src/ATen/TensorUtils.cpp). The old dims are
 * split into chunks that are contiguous among themselves; each chunk must map onto a run
 * of new dims holding the same number of elements. */
bool view_strides_compute(const pith_tensor *old, int ndim, const int64_t *sizes,
                          int64_t *strides)
{
    int old_ndim = old->ndim;
    if (old_ndim == 0) {
        for (int d = 0; d < ndim; d++)
            strides[d] = 1;
        return true;
    }
    if (old->numel == 0) {
        if (shape_equal(old_ndim, old->sizes, ndim, sizes)) {
            memcpy(strides, old->strides, sizeof(int64_t) * (size_t)ndim);
            return true;
        }
        for (int d = ndim - 1; d >= 0; d--)
            strides[d] = d == ndim - 1 ? 1
                                       : mul_wrap(sizes[d + 1] > 1 ? sizes[d + 1] : 1,
                                                  strides[d + 1]);
        return true;
    }
    int view_d = ndim - 1;
    int64_t chunk_base_stride = old->strides[old_ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int td = old_ndim - 1; td >= 0; td--) {
        tensor_numel *= old->sizes[td];
        if (td == 0 || (old->sizes[td - 1] != 1 &&
                        old->strides[td - 1] != mul_wrap(tensor_numel, chunk_base_stride))) {
            while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
                strides[view_d] = mul_wrap(view_numel, chunk_base_stride);
                view_numel *= sizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (td > 0) {
                chunk_base_stride = old->strides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

pith_status geometry_expand(const char *op, const pith_tensor *self, int ndim,
                            const int64_t *sizes, view_geometry *g)
{
    char want[512], have[512];
    int tensor_dim = self->ndim;
    if (ndim < tensor_dim)
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: expand(%s{%s}, size=%s): the number of sizes provided (%d) "
                              "must be greater or equal to the number of dimensions in the "
                              "tensor (%d)",
                              op, dtype_legacy_tensor_name(self->dtype),
                              shape_format(tensor_dim, self->sizes, have, sizeof have),
                              shape_format(ndim, sizes, want, sizeof want), ndim, tensor_dim);
    if (ndim > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "%s: a tensor has at most %d dims, got %d sizes",
                              op, PITH_MAX_DIMS, ndim);
    g->ndim = ndim;
    g->offset = self->offset;
    for (int i = ndim - 1; i >= 0; i--) {
        int dim = tensor_dim - 1 - (ndim - 1 - i);
        int64_t size = dim >= 0 ? self->sizes[dim] : 1;
        int64_t stride = dim >= 0            ? self->strides[dim]
                         : i + 1 < ndim      ? mul_wrap(g->sizes[i + 1], g->strides[i + 1])
                                             : 0; /* a 0-dim tensor expands with stride 0 */
        int64_t target = sizes[i];
        if (target == -1) {
            if (dim < 0 && tensor_dim > 0)
                return pith_set_error(PITH_ERR_VALUE,
                                      "%s: The expanded size of the tensor (-1) isn't allowed "
                                      "in a leading, non-existing dimension %d",
                                      op, i);
            if (dim >= 0)
                target = size;
        }
        if (size != target) {
            if (size != 1)
                return pith_set_error(
                    PITH_ERR_VALUE,
                    "%s: The expanded size of the tensor (%lld) must match the existing size "
                    "(%lld) at non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                    op, (long long)target, (long long)size, i,
                    shape_format(ndim, sizes, want, sizeof want),
                    shape_format(tensor_dim, self->sizes, have, sizeof have));
            size = target;
            stride = 0;
        }
        g->sizes[i] = size;
        g->strides[i] = stride;
    }
    for (int i = 0; i < ndim; i++)
        if (g->sizes[i] < 0)
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s: Trying to create tensor with negative dimension %lld: %s",
                                  op, (long long)g->sizes[i],
                                  shape_format(ndim, g->sizes, want, sizeof want));
    if (shape_numel_checked(ndim, g->sizes) < 0)
        return error_prefix("%s", op);
    return PITH_OK;
}

pith_status shape_broadcast(int ndim_a, const int64_t *a, int ndim_b, const int64_t *b,
                            int *ndim_out, int64_t *out)
{
    int n = ndim_a > ndim_b ? ndim_a : ndim_b;
    for (int i = n - 1; i >= 0; i--) {
        int off = n - 1 - i;
        int64_t sa = ndim_a - 1 - off >= 0 ? a[ndim_a - 1 - off] : 1;
        int64_t sb = ndim_b - 1 - off >= 0 ? b[ndim_b - 1 - off] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return pith_set_error(PITH_ERR_VALUE,
                                  "The size of tensor a (%lld) must match the size of tensor b "
                                  "(%lld) at non-singleton dimension %d",
                                  (long long)sa, (long long)sb, i);
        out[i] = sa == 1 ? sb : sa;
    }
    *ndim_out = n;
    return PITH_OK;
}

/* ---- view, reshape ---- */

pith_status view_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                           pith_int_list size)
{
    view_geometry g;
    if (shape_infer("view", size, self->numel, g.sizes) != PITH_OK)
        return pith_last_status();
    g.ndim = (int)size.n;
    g.offset = self->offset;
    if (!view_strides_compute(self, g.ndim, g.sizes, g.strides))
        return pith_set_error(PITH_ERR_VALUE,
                              "view: view size is not compatible with input tensor's size and "
                              "stride (at least one dimension spans across two contiguous "
                              "subspaces). Use .reshape(...) instead.");
    return ret_view(ret, self, &g);
}

/* reshape: a view when the strides allow one, else a view of a contiguous copy: PyTorch's
 * view, or _unsafe_view(clone(self)). At Autograd these are calls of those ops, so that they
 * record (See Note [Composites call their parts through the dispatcher], ops_internal.h). */
static pith_status reshape_of_parts(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                    pith_int_list shape)
{
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
    if (shape_infer("reshape", shape, self->numel, sizes) != PITH_OK)
        return pith_last_status();
    if (view_strides_compute(self, (int)shape.n, sizes, strides))
        return pith_redispatch_view(ks, ret, self, shape);
    pith_value copy[1];
    if (pith_redispatch_clone(ks, copy, self) != PITH_OK)
        return pith_last_status();
    pith_status status = pith_call_unsafe_view(ret, copy[0].u.t, shape);
    pith_release(copy[0].u.t);
    return status;
}

static pith_status reshape_to(pith_keyset ks, pith_value *ret, const char *op,
                              const pith_tensor *self, pith_int_list shape)
{
    view_geometry g;
    if (shape_infer(op, shape, self->numel, g.sizes) != PITH_OK)
        return pith_last_status();
    g.ndim = (int)shape.n;
    g.offset = self->offset;
    if (view_strides_compute(self, g.ndim, g.sizes, g.strides))
        return ret_view(ret, self, &g);
    pith_value copy[1];
    if (pith_redispatch_clone(ks, copy, self) != PITH_OK)
        return pith_last_status();
    pith_tensor *base = copy[0].u.t;
    g.offset = base->offset;
    shape_contiguous_strides(g.ndim, g.sizes, g.strides);
    pith_status status = ret_view(ret, base, &g);
    pith_release(base);
    return status;
}

pith_status reshape_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              pith_int_list shape)
{
    return composite_at_autograd(ks) ? reshape_of_parts(ks, ret, self, shape)
                                     : reshape_to(ks, ret, "reshape", self, shape);
}

/* PyTorch's _unsafe_view: view for a tensor that nothing else aliases (reshape's copy), so
 * that autograd need not treat the result as a view. */
pith_status unsafe_view_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                  pith_int_list size)
{
    return view_composite(ks, ret, self, size);
}

/* ---- permute, transpose, t ---- */

pith_status permute_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              pith_int_list dims)
{
    int ndim = self->ndim;
    if (dims.n != (size_t)ndim)
        return pith_set_error(PITH_ERR_VALUE,
                              "permute(): number of dimensions in the tensor input does not "
                              "match the length of the desired ordering of dimensions i.e. "
                              "input.dim() = %d is not equal to len(dims) = %zu",
                              ndim, dims.n);
    bool seen[PITH_MAX_DIMS] = {false};
    view_geometry g;
    g.ndim = ndim;
    g.offset = self->offset;
    for (int i = 0; i < ndim; i++) {
        int d = dim_wrap(dims.data[i], ndim);
        if (d < 0)
            return pith_last_status();
        if (seen[d])
            return pith_set_error(PITH_ERR_VALUE, "permute(): duplicate dims are not allowed.");
        seen[d] = true;
        g.sizes[i] = self->sizes[d];
        g.strides[i] = self->strides[d];
    }
    return ret_view(ret, self, &g);
}

pith_status transpose_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                int64_t dim0, int64_t dim1)
{
    int d0 = dim_wrap(dim0, self->ndim);
    if (d0 < 0)
        return pith_last_status();
    int d1 = dim_wrap(dim1, self->ndim);
    if (d1 < 0)
        return pith_last_status();
    view_geometry g;
    geometry_of(self, &g);
    if (d0 != d1 && self->ndim > 0) {
        g.sizes[d0] = self->sizes[d1];
        g.sizes[d1] = self->sizes[d0];
        g.strides[d0] = self->strides[d1];
        g.strides[d1] = self->strides[d0];
    }
    return ret_view(ret, self, &g);
}

pith_status t_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    if (self->ndim > 2)
        return pith_set_error(PITH_ERR_VALUE,
                              "t() expects a tensor with <= 2 dimensions, but self is %dD",
                              self->ndim);
    return transpose_composite(ks, ret, self, 0, self->ndim < 2 ? 0 : 1);
}

/* ---- expand ---- */

pith_status expand_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             pith_int_list size, bool implicit)
{
    view_geometry g;
    if (size.n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "expand: a tensor has at most %d dims, got %zu sizes",
                              PITH_MAX_DIMS, size.n);
    if (geometry_expand("expand", self, (int)size.n, size.data, &g) != PITH_OK)
        return pith_last_status();
    return ret_view(ret, self, &g);
}

/* ---- as_strided ---- */

/* Note [as_strided stays within the storage]
 * as_strided is the one view whose geometry comes from the caller, so it is the one place
 * where a view could reach bytes its storage does not hold. It checks what PyTorch's
 * setStrided and checkInBoundsForStorage check, in their order and words: equal lengths,
 * no negative stride, a non-negative offset, sizes whose extent is computable, and
 * (offset + 1 + sum (size - 1) * stride) * itemsize <= the storage's bytes (0 bytes when a
 * size is 0, so an empty view may name any offset, as in PyTorch). tensor_view then checks
 * Note [Geometry fits in int64]. Checkpoint loading (pith/serialization.py) builds every
 * tensor as an as_strided view of its storage, so a bad record in a file ends here. */
static pith_status as_strided_bytes(pith_int_list size, pith_int_list stride, int64_t offset,
                                    size_t itemsize, int64_t *bytes)
{
    char sizes_buf[256], strides_buf[256];
    int64_t extent = 1; /* elements from the offset to one past the last one */
    bool empty = false, overflow = false;
    for (size_t d = 0; d < size.n; d++) {
        int64_t step;
        if (size.data[d] < 0)
            overflow = true;
        else if (size.data[d] == 0)
            empty = true;
        else
            overflow |= __builtin_mul_overflow(size.data[d] - 1, stride.data[d], &step) ||
                        __builtin_add_overflow(extent, step, &extent);
    }
    if (overflow)
        return pith_set_error(
            PITH_ERR_VALUE, "Storage size calculation overflowed with sizes=%s and strides=%s",
            shape_format((int)size.n, size.data, sizes_buf, sizeof sizes_buf),
            shape_format((int)stride.n, stride.data, strides_buf, sizeof strides_buf));
    if (empty)
        *bytes = 0;
    else if (__builtin_add_overflow(extent, offset, &extent) ||
             __builtin_mul_overflow(extent, (int64_t)itemsize, bytes))
        return pith_set_error(
            PITH_ERR_VALUE,
            "as_strided: sizes %s, strides %s and storage offset %lld overflow int64 in bytes",
            shape_format((int)size.n, size.data, sizes_buf, sizeof sizes_buf),
            shape_format((int)stride.n, stride.data, strides_buf, sizeof strides_buf),
            (long long)offset);
    return PITH_OK;
}

pith_status as_strided_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                 pith_int_list size, pith_int_list stride,
                                 pith_opt_int storage_offset)
{
    char sizes_buf[256], strides_buf[256];
    if (size.n != stride.n)
        return pith_set_error(PITH_ERR_VALUE, "mismatch in length of strides and shape");
    if (size.n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "as_strided: a tensor has at most %d dims, got %zu",
                              PITH_MAX_DIMS, size.n);
    for (size_t d = 0; d < stride.n; d++)
        if (stride.data[d] < 0)
            return pith_set_error(
                PITH_ERR_VALUE,
                "as_strided: Negative strides are not supported at the moment, got strides: %s",
                shape_format((int)stride.n, stride.data, strides_buf, sizeof strides_buf));
    int64_t offset = storage_offset.present ? storage_offset.value : self->offset, bytes;
    if (offset < 0)
        return pith_set_error(PITH_ERR_VALUE, "Tensor: invalid storage offset %lld",
                              (long long)offset);
    size_t itemsize = dtype_itemsize(self->dtype);
    if (as_strided_bytes(size, stride, offset, itemsize, &bytes) != PITH_OK)
        return pith_last_status();
    if ((uint64_t)bytes > (uint64_t)self->storage->nbytes)
        return pith_set_error(
            PITH_ERR_VALUE,
            "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %zu requiring a "
            "storage size of %lld are out of bounds for storage of size %zu",
            shape_format((int)size.n, size.data, sizes_buf, sizeof sizes_buf),
            shape_format((int)stride.n, stride.data, strides_buf, sizeof strides_buf),
            (long long)offset, itemsize, (long long)bytes, self->storage->nbytes);
    view_geometry g = {.ndim = (int)size.n, .offset = offset};
    if (size.n) {
        memcpy(g.sizes, size.data, sizeof(int64_t) * size.n);
        memcpy(g.strides, stride.data, sizeof(int64_t) * size.n);
    }
    return ret_view(ret, self, &g);
}

/* ---- squeeze, unsqueeze, flatten ---- */

/* Drops dim `d` from `g`. */
static void geometry_drop_dim(view_geometry *g, int d)
{
    for (int i = d; i + 1 < g->ndim; i++) {
        g->sizes[i] = g->sizes[i + 1];
        g->strides[i] = g->strides[i + 1];
    }
    g->ndim--;
}

pith_status squeeze_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    view_geometry g;
    geometry_of(self, &g);
    for (int d = g.ndim - 1; d >= 0; d--)
        if (g.sizes[d] == 1)
            geometry_drop_dim(&g, d);
    return ret_view(ret, self, &g);
}

pith_status squeeze_dim_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                  int64_t dim)
{
    int d = dim_wrap(dim, self->ndim);
    if (d < 0)
        return pith_last_status();
    view_geometry g;
    geometry_of(self, &g);
    if (g.ndim > 0 && g.sizes[d] == 1)
        geometry_drop_dim(&g, d);
    return ret_view(ret, self, &g);
}

pith_status unsqueeze_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                int64_t dim)
{
    if (self->ndim >= PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE,
                              "unsqueeze: a tensor has at most %d dims, and self has %d",
                              PITH_MAX_DIMS, self->ndim);
    int d = dim_wrap(dim, self->ndim + 1);
    if (d < 0)
        return pith_last_status();
    view_geometry g;
    geometry_of(self, &g);
    for (int i = g.ndim; i > d; i--) {
        g.sizes[i] = g.sizes[i - 1];
        g.strides[i] = g.strides[i - 1];
    }
    g.sizes[d] = 1;
    g.strides[d] = d >= self->ndim ? 1 : mul_wrap(self->sizes[d], self->strides[d]);
    g.ndim++;
    return ret_view(ret, self, &g);
}

/* flatten is reshape to the merged shape, or self when it merges one dim, as in PyTorch. */
pith_status flatten_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              int64_t start_dim, int64_t end_dim)
{
    int ndim = self->ndim;
    int start = dim_wrap(start_dim, ndim);
    if (start < 0)
        return pith_last_status();
    int end = dim_wrap(end_dim, ndim);
    if (end < 0)
        return pith_last_status();
    if (start > end)
        return pith_set_error(PITH_ERR_VALUE,
                              "flatten() has invalid args: start_dim cannot come after end_dim");
    if (ndim > 0 && start == end)
        return ret_self(ret, self);
    int64_t shape[PITH_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < start; d++)
        shape[n++] = self->sizes[d];
    int64_t merged = 1;
    bool zero = false, overflow = false;
    for (int d = start; d <= end && ndim > 0; d++) {
        zero = zero || self->sizes[d] == 0;
        overflow = overflow || __builtin_mul_overflow(merged, self->sizes[d], &merged);
    }
    if (zero)
        merged = 0;
    else if (overflow) /* only possible when another dim is 0 */
        return pith_set_error(PITH_ERR_VALUE, "flatten: the flattened size overflows int64");
    shape[n++] = merged;
    for (int d = end + 1; d < ndim; d++)
        shape[n++] = self->sizes[d];
    pith_int_list list = {shape, (size_t)n};
    return composite_at_autograd(ks) ? reshape_of_parts(ks, ret, self, list)
                                     : reshape_to(ks, ret, "flatten", self, list);
}

/* ---- alias, detach ---- */

pith_status alias_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    view_geometry g;
    geometry_of(self, &g);
    return ret_view(ret, self, &g);
}

/* detach is an alias without the Autograd key: the alias has no autograd state (a new
 * tensor never has), so it is a leaf that does not require grad, and dropping the key
 * keeps its ops off the autograd kernels. A tensor with the Python key reaches its
 * interpreter's detach in pith_detach, not here. */
pith_status detach_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    pith_status status = alias_composite(ks, ret, self);
    if (status == PITH_OK)
        ret[0].u.t->keys &= ~PITH_KEYSET(PITH_KEY_AUTOGRAD);
    return status;
}

/* ---- broadcast_to, expand_as, broadcast_tensors: expand by another name ---- */

/* Their part, expand, records ExpandBackward0 (See Note [Composites call their parts through
 * the dispatcher], ops_internal.h). It takes one of the tensors the key set came from, so it
 * dispatches on its own: expand_as(x, other) with a Python subclass `other` is a plain
 * expand of x, as in PyTorch. */
static pith_status expand_part(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               pith_int_list size)
{
    return composite_at_autograd(ks) ? pith_call_expand(ret, self, size, false)
                                     : expand_composite(ks, ret, self, size, false);
}

pith_status broadcast_to_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                   pith_int_list size)
{
    return expand_part(ks, ret, self, size);
}

pith_status expand_as_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                const pith_tensor *other)
{
    pith_int_list size = {other->sizes, (size_t)other->ndim};
    return expand_part(ks, ret, self, size);
}

/* Each tensor expanded to the broadcast shape of them all, or itself where it has that
 * shape already, as in PyTorch. */
pith_status broadcast_tensors_composite(pith_keyset ks, pith_value *ret,
                                        pith_tensor_list tensors)
{
    int ndim = 0;
    int64_t sizes[PITH_MAX_DIMS];
    if (tensors.n > INT32_MAX)
        return pith_set_error(PITH_ERR_VALUE, "broadcast_tensors: too many tensors (%zu)",
                              tensors.n);
    if (broadcast_shapes("broadcast_tensors", (int)tensors.n,
                         (const pith_tensor *const *)tensors.data, &ndim, sizes) != PITH_OK)
        return pith_last_status();
    size_t n = tensors.n;
    pith_tensor **list = calloc(n ? n : 1, sizeof *list);
    if (!list)
        return pith_set_error(PITH_ERR_NOMEM, "broadcast_tensors: cannot allocate %zu results",
                              n);
    pith_int_list shape = {sizes, (size_t)ndim};
    for (size_t i = 0; i < n; i++) {
        const pith_tensor *t = tensors.data[i];
        if (shape_equal(t->ndim, t->sizes, ndim, sizes)) {
            pith_retain((pith_tensor *)t);
            list[i] = (pith_tensor *)t;
            continue;
        }
        pith_value one[1];
        if (expand_part(ks, one, t, shape) != PITH_OK) {
            tensor_list_release(list, i);
            return pith_last_status();
        }
        list[i] = one[0].u.t;
    }
    return ret_tensor_list(ret, list, n);
}
