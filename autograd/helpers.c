/* helpers.c — the backward helpers of the op file's formulas (See Note [Backward helpers
 * in C], helpers.h), the owned containers of a node's by-value arguments, and the small
 * steps that every generated kernel and node shares. Nodes, saved tensors, wrapped numbers
 * and the engine are the runtime's (autograd/node.c, record.c, engine.c). */
#include <stdlib.h>
#include <string.h>

#include "autograd/helpers.h"
#include "ops/op_runtime.h"

/* ---- int lists and strings (See Note [By-value arguments of a node]) ---- */

pith_status ag_ints_resize(ag_ints *a, size_t n)
{
    free(a->heap);
    a->heap = NULL;
    a->n = 0;
    if (n > AG_INTS_INLINE) {
        if (n > SIZE_MAX / sizeof(int64_t) || !(a->heap = malloc(n * sizeof(int64_t))))
            return pith_set_error(PITH_ERR_NOMEM, "autograd: out of memory for %zu ints", n);
    }
    a->n = n;
    return PITH_OK;
}

pith_status ag_ints_copy(ag_ints *a, pith_int_list list)
{
    if (ag_ints_resize(a, list.n) != PITH_OK)
        return pith_last_status();
    if (list.n)
        memcpy(a->heap ? a->heap : a->inline_, list.data, list.n * sizeof(int64_t));
    a->absent = false;
    return PITH_OK;
}

pith_status ag_ints_copy_opt(ag_ints *a, pith_opt_int_list list)
{
    if (!list.present) {
        ag_ints_resize(a, 0);
        a->absent = true;
        return PITH_OK;
    }
    return ag_ints_copy(a, list.list);
}

void ag_ints_release(ag_ints *a)
{
    free(a->heap);
    a->heap = NULL;
    a->n = 0;
}

pith_status ag_str_copy(ag_str *s, const char *text)
{
    ag_str_release(s);
    s->absent = text == NULL;
    if (!text)
        return PITH_OK;
    size_t n = strlen(text) + 1;
    if (n <= AG_STR_INLINE) {
        memcpy(s->inline_, text, n);
        return PITH_OK;
    }
    if (!(s->heap = malloc(n)))
        return pith_set_error(PITH_ERR_NOMEM, "autograd: out of memory for a string");
    memcpy(s->heap, text, n);
    return PITH_OK;
}

void ag_str_release(ag_str *s)
{
    free(s->heap);
    s->heap = NULL;
}

/* ---- tensor lists ---- */

pith_status ag_tensors_alloc(ag_tensors *l, size_t n)
{
    l->n = 0;
    l->data = NULL;
    if (n && !(l->data = calloc(n, sizeof *l->data)))
        return pith_set_error(PITH_ERR_NOMEM, "autograd: out of memory for %zu tensors", n);
    l->n = n;
    return PITH_OK;
}

void ag_tensors_release(ag_tensors *l)
{
    for (size_t i = 0; i < l->n; i++)
        pith_release(l->data[i]);
    free(l->data);
    l->data = NULL;
    l->n = 0;
}

pith_status ag_save_list(ag_saved_list *s, pith_tensor_list list)
{
    s->n = 0;
    if (list.n && !(s->items = calloc(list.n, sizeof *s->items)))
        return pith_set_error(PITH_ERR_NOMEM, "autograd: out of memory saving %zu tensors",
                              list.n);
    s->n = list.n;
    for (size_t i = 0; i < list.n; i++)
        if (ag_save(&s->items[i], list.data[i], false) != PITH_OK)
            return pith_last_status();
    return PITH_OK;
}

pith_status ag_unpack_list(const ag_saved_list *s, ag_node *owner, ag_tensors *out)
{
    if (ag_tensors_alloc(out, s->n) != PITH_OK)
        return pith_last_status();
    for (size_t i = 0; i < s->n; i++)
        if (ag_unpack(&s->items[i], owner, &out->data[i]) != PITH_OK)
            return pith_last_status();
    return PITH_OK;
}

void ag_saved_list_release(ag_saved_list *s)
{
    for (size_t i = 0; s->items && i < s->n; i++)
        ag_saved_release(&s->items[i]);
}

void ag_saved_list_free(ag_saved_list *s)
{
    ag_saved_list_release(s);
    free(s->items);
    s->items = NULL;
    s->n = 0;
}

pith_status ag_save_metadata_list(ag_saved_metadata_list *s, pith_tensor_list list)
{
    s->n = 0;
    if (list.n && (!(s->items = calloc(list.n, sizeof *s->items)) ||
                   !(s->metas = calloc(list.n, sizeof *s->metas))))
        return pith_set_error(PITH_ERR_NOMEM, "autograd: out of memory saving %zu tensors",
                              list.n);
    s->n = list.n;
    for (size_t i = 0; i < list.n; i++) {
        if (ag_save_metadata(&s->items[i], list.data[i]) != PITH_OK)
            return pith_last_status();
        s->metas[i] = s->items[i].meta;
    }
    return PITH_OK;
}

void ag_saved_metadata_list_release(ag_saved_metadata_list *s)
{
    if (s->items)
        for (size_t i = 0; i < s->n; i++)
            ag_saved_metadata_release(&s->items[i]);
    free(s->items);
    free(s->metas);
    s->items = NULL;
    s->metas = NULL;
    s->n = 0;
}

/* ---- shared steps of the generated kernels and nodes ---- */

bool ag_any_edge(const ag_node *n, uint32_t first, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (ag_has_edge(n, first + (uint32_t)i))
            return true;
    return false;
}

bool ag_any_needs_grad(const ag_node *n, uint32_t first, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (ag_needs_grad(n, first + (uint32_t)i))
            return true;
    return false;
}

pith_status ag_set_next_edges(ag_node *n, uint32_t first, pith_tensor_list list)
{
    for (size_t i = 0; i < list.n; i++)
        if (ag_set_next_edge(n, first + (uint32_t)i, list.data[i]) != PITH_OK)
            return pith_last_status();
    return PITH_OK;
}

pith_status ag_set_history_list(ag_node *n, pith_tensor *const *ts, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (ag_set_history(n, (uint32_t)i, ts[i]) != PITH_OK)
            return pith_last_status();
    return PITH_OK;
}

pith_status ag_grads_distribute(const ag_node *n, pith_tensor **out, uint32_t first,
                                size_t count, ag_tensors *grads)
{
    if (grads->n != count) {
        size_t got = grads->n;
        ag_tensors_release(grads);
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: the formula gave %zu gradients for a list of %zu tensors",
                              n->vt->name, got, count);
    }
    for (size_t i = 0; i < count; i++) {
        if (ag_needs_grad(n, first + (uint32_t)i)) {
            out[first + i] = grads->data[i];
            grads->data[i] = NULL;
        }
    }
    ag_tensors_release(grads);
    return PITH_OK;
}

void ag_grads_clear(pith_tensor **out, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        pith_release(out[i]);
        out[i] = NULL;
    }
}

pith_status ag_clone(pith_tensor **out, const pith_tensor *self)
{
    pith_value r[1];
    pith_status status = pith_call_clone(r, self);
    *out = status == PITH_OK ? r[0].u.t : NULL;
    return status;
}

/* ---- the backward helpers: shapes ---- */

static pith_status ints_from(ag_ints *out, int n, const int64_t *values)
{
    pith_int_list list = {values, (size_t)n};
    return ag_ints_copy(out, list);
}

pith_status ag_sizes(ag_ints *out, const pith_tensor *t, pith_device t_device)
{
    return ints_from(out, t->ndim, t->sizes);
}

int64_t ag_numel(const pith_tensor *t, pith_device t_device)
{
    return t->numel;
}

int64_t ag_ndim(const pith_tensor *t, pith_device t_device)
{
    return t->ndim;
}

pith_status ag_reduced_sizes(ag_ints *out, const pith_tensor *t, pith_device t_device,
                             pith_opt_int_list dim)
{
    int64_t sizes[PITH_MAX_DIMS];
    bool all = !dim.present || dim.list.n == 0;
    for (int i = 0; i < t->ndim; i++)
        sizes[i] = all ? 1 : t->sizes[i];
    for (size_t i = 0; !all && t->ndim && i < dim.list.n; i++) {
        int d = dim_wrap(dim.list.data[i], t->ndim);
        if (d < 0)
            return pith_last_status();
        sizes[d] = 1;
    }
    return ints_from(out, t->ndim, sizes);
}

pith_status ag_invert_permutation(ag_ints *out, pith_int_list dims)
{
    if (ag_ints_resize(out, dims.n) != PITH_OK)
        return pith_last_status();
    int64_t *inverse = out->heap ? out->heap : out->inline_;
    int64_t n = (int64_t)dims.n;
    for (int64_t i = 0; i < n; i++) {
        int64_t d = ((dims.data[i] % n) + n) % n;
        inverse[d] = i;
    }
    return PITH_OK;
}

/* A list made from `in` by `value(in, i)`. */
static pith_status ints_map(ag_ints *out, size_t n, pith_int_list in,
                            int64_t (*value)(pith_int_list in, size_t i))
{
    if (ag_ints_resize(out, n) != PITH_OK)
        return pith_last_status();
    int64_t *data = out->heap ? out->heap : out->inline_;
    for (size_t i = 0; i < n; i++)
        data[i] = value(in, i);
    return PITH_OK;
}

static int64_t negated_at(pith_int_list in, size_t i)
{
    return -in.data[i];
}
static int64_t last_dim_at(pith_int_list in, size_t i)
{
    return (int64_t)i - (int64_t)in.n;
}
static int64_t tile_dim_at(pith_int_list in, size_t i)
{
    return 2 * (int64_t)i;
}

pith_status ag_negated(ag_ints *out, pith_int_list values)
{
    return ints_map(out, values.n, values, negated_at);
}

pith_status ag_last_dims(ag_ints *out, pith_int_list shape)
{
    return ints_map(out, shape.n, shape, last_dim_at);
}

pith_status ag_tile_dims(ag_ints *out, pith_int_list repeats)
{
    return ints_map(out, repeats.n, repeats, tile_dim_at);
}

pith_status ag_sizes_along(ag_ints *out, pith_tensor_list tensors, int64_t dim)
{
    if (ag_ints_resize(out, tensors.n) != PITH_OK)
        return pith_last_status();
    int64_t *data = out->heap ? out->heap : out->inline_;
    for (size_t i = 0; i < tensors.n; i++) {
        const pith_tensor *t = tensors.data[i];
        /* cat skips a 1-D empty tensor whatever dim is (PyTorch's legacy rule). */
        if (t->ndim == 1 && t->numel == 0) {
            data[i] = 0;
            continue;
        }
        int d = dim_wrap(dim, t->ndim);
        if (d < 0)
            return pith_last_status();
        data[i] = t->ndim ? t->sizes[d] : 1;
    }
    return PITH_OK;
}

pith_status ag_repeat_shape(ag_ints *out, const pith_tensor *t, pith_device t_device,
                            pith_int_list repeats)
{
    if (repeats.n < (size_t)t->ndim)
        return pith_set_error(PITH_ERR_VALUE,
                              "repeat_shape: %zu repeats for a tensor of %d dims", repeats.n,
                              t->ndim);
    if (ag_ints_resize(out, 2 * repeats.n) != PITH_OK)
        return pith_last_status();
    int64_t *data = out->heap ? out->heap : out->inline_;
    size_t lead = repeats.n - (size_t)t->ndim;
    for (size_t i = 0; i < repeats.n; i++) {
        data[2 * i] = repeats.data[i];
        data[2 * i + 1] = i < lead ? 1 : t->sizes[i - lead];
    }
    return PITH_OK;
}

/* ---- the backward helpers: tensors ---- */

/* A new int64 tensor of `sizes` on `device`, its data NULL for Meta. */
static pith_tensor *positions_new(int ndim, const int64_t *sizes, pith_device device)
{
    return tensor_new(ndim, sizes, PITH_INT64, device);
}

pith_status ag_zeros_like(pith_tensor **out, const pith_tensor *t, pith_device t_device)
{
    pith_value r[1];
    pith_int_list size = {t->sizes, (size_t)t->ndim};
    pith_status status = pith_call_zeros(r, size, (pith_opt_dtype)t->dtype,
                                         (pith_opt_device)t_device);
    *out = status == PITH_OK ? r[0].u.t : NULL;
    return status;
}

pith_status ag_storage_zeros(pith_tensor **out, const pith_tensor *t, pith_device t_device,
                             const pith_tensor *like, pith_device like_device)
{
    pith_value r[1];
    int64_t n = (int64_t)(t->storage->nbytes / dtype_itemsize(t->dtype));
    pith_int_list size = {&n, 1};
    pith_status status = pith_call_zeros(r, size, (pith_opt_dtype)like->dtype,
                                         (pith_opt_device)like_device);
    *out = status == PITH_OK ? r[0].u.t : NULL;
    return status;
}

/* The storage index of each element of the geometry (sizes, strides, offset), row-major. */
static pith_status strided_positions(pith_tensor **out, int ndim, const int64_t *sizes,
                                     const int64_t *strides, int64_t offset,
                                     pith_device device)
{
    pith_tensor *p = positions_new(ndim, sizes, device);
    if (!p)
        return pith_last_status();
    int64_t *data = (int64_t *)tensor_data(p);
    int64_t index[PITH_MAX_DIMS] = {0};
    for (int64_t i = 0; data && i < p->numel; i++) {
        int64_t position = offset;
        for (int d = 0; d < ndim; d++)
            position += index[d] * strides[d];
        data[i] = position;
        for (int d = ndim - 1; d >= 0 && ++index[d] == sizes[d]; d--)
            index[d] = 0;
    }
    *out = p;
    return PITH_OK;
}

pith_status ag_storage_positions(pith_tensor **out, const pith_tensor *t,
                                 pith_device t_device)
{
    return strided_positions(out, t->ndim, t->sizes, t->strides, t->offset, t_device);
}

pith_status ag_as_strided_positions(pith_tensor **out, const pith_tensor *t,
                                    pith_device t_device, pith_int_list size,
                                    pith_int_list stride, pith_opt_int storage_offset)
{
    if (size.n != stride.n || size.n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE,
                              "as_strided_positions: %zu sizes and %zu strides", size.n,
                              stride.n);
    return strided_positions(out, (int)size.n, size.data, stride.data,
                             storage_offset.present ? storage_offset.value : t->offset,
                             t_device);
}

/* Python's slice(start, end, step).indices(size) for step > 0. */
static int64_t slice_bound(pith_opt_int bound, int64_t fallback, int64_t size)
{
    if (!bound.present)
        return fallback;
    int64_t b = bound.value < 0 ? bound.value + size : bound.value;
    return b < 0 ? 0 : b > size ? size : b;
}

pith_status ag_slice_positions(pith_tensor **out, const pith_tensor *t, pith_device t_device,
                               int64_t dim, pith_opt_int start, pith_opt_int end,
                               int64_t step)
{
    int d = dim_wrap(dim, t->ndim);
    if (d < 0)
        return pith_last_status();
    if (step <= 0)
        return pith_set_error(PITH_ERR_VALUE, "slice_positions: step must be positive");
    int64_t size = t->ndim ? t->sizes[d] : 1;
    int64_t first = slice_bound(start, 0, size), last = slice_bound(end, size, size);
    int64_t count = last > first ? (last - first + step - 1) / step : 0;
    pith_tensor *p = positions_new(1, &count, t_device);
    if (!p)
        return pith_last_status();
    int64_t *data = (int64_t *)tensor_data(p);
    for (int64_t i = 0; data && i < count; i++)
        data[i] = first + i * step;
    *out = p;
    return PITH_OK;
}

pith_status ag_index_along(ag_tensors *out, const pith_tensor *t, pith_device t_device,
                           int64_t dim, const pith_tensor *index)
{
    int d = dim_wrap(dim, t->ndim);
    if (d < 0 || ag_tensors_alloc(out, (size_t)d + 1) != PITH_OK)
        return pith_last_status();
    out->data[d] = ag_retain(index);
    return PITH_OK;
}

pith_status ag_unwrapped(pith_tensor **out, const pith_tensor *t)
{
    if (!(t->flags & PITH_TENSOR_WRAPPED_NUMBER)) {
        *out = ag_retain(t);
        return PITH_OK;
    }
    /* an alias: tensor_view keeps no flag but the inference one */
    *out = tensor_view(t, t->ndim, t->sizes, t->strides, t->offset);
    return *out ? PITH_OK : pith_last_status();
}

pith_status ag_gather_indices(ag_tensors *out, const pith_tensor *index, int64_t dim)
{
    if (index->ndim == 0) {
        if (ag_tensors_alloc(out, 1) != PITH_OK)
            return pith_last_status();
        out->data[0] = ag_retain(index);
        return PITH_OK;
    }
    int d = dim_wrap(dim, index->ndim);
    if (d < 0 || ag_tensors_alloc(out, (size_t)index->ndim) != PITH_OK)
        return pith_last_status();
    for (int k = 0; k < index->ndim; k++) {
        if (k == d) {
            out->data[k] = ag_retain(index);
            continue;
        }
        int64_t shape[PITH_MAX_DIMS];
        for (int i = 0; i < index->ndim; i++)
            shape[i] = i == k ? index->sizes[k] : 1;
        pith_tensor *p = positions_new(index->ndim, shape, index->device);
        if (!p)
            return pith_last_status();
        int64_t *data = (int64_t *)tensor_data(p);
        for (int64_t i = 0; data && i < index->sizes[k]; i++)
            data[i] = i;
        out->data[k] = p;
    }
    return PITH_OK;
}
