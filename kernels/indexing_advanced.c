/* indexing_advanced.c — advanced indexing: the plan of an index list (index_plan_make),
 * index.Tensor, nonzero and masked_select. index_put_ and index_put are in indexing_put.c.
 *
 * Every index is read and bounds-checked while the plan is made, before any parallel copy
 * (see indexing.h). Results are new contiguous tensors. */
#include <stdio.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "kernels/indexing_advanced.h"

/* Note [Advanced indexing]
 * index.Tensor(self, indices) follows PyTorch's rules. Entry i of the list is
 *   - None: a whole dim (as the slice `:`);
 *   - an int64 or int32 tensor: indexes one dim; negative values wrap;
 *   - a bool or uint8 mask: indexes as many dims as it has, whose sizes it must equal, and
 *     stands for its nonzero() coordinates, one [nnz] index tensor per dim. A 0-dim mask
 *     indexes no dim and stands for one index of shape [1] (true) or [0] (false), which is
 *     what Python's x[True] becomes (PyTorch asserts on it instead).
 * The index tensors broadcast together to one index shape B. The result has self's dims
 * before the first indexed dim, then B, then the rest. That holds when the indexed dims are
 * adjacent (no None between two tensors of the list); when they are not, B goes first
 * (PyTorch's transposeToFront: the plan's `self` geometry lists the indexed dims first).
 * Each element of B selects one element of the indexed dims; its offset is computed once
 * (`offsets`), so the copy is a gather of the blocks of the remaining dims, as in
 * index_select. An out-of-range index is PITH_ERR_INDEX naming its position among the
 * indexed dims ("index 5 is out of bounds for dimension 0 with size 3"), as PyTorch does.
 * PyTorch's kernel never runs for an empty result, so neither does that check; only its
 * shape check is made regardless: a non-empty index into a dim of size 0 is "index is out
 * of bounds for dimension with size 0" (on the meta device too). */

/* ---- nonzero scans ---- */

static inline bool element_is_nonzero(const char *p, size_t itemsize, bool floating)
{
    uint64_t bits = 0;
    switch (itemsize) {
    case 1: bits = *(const uint8_t *)p; break;
    case 2: { uint16_t v; memcpy(&v, p, 2); bits = v; break; }
    case 4: { uint32_t v; memcpy(&v, p, 4); bits = v; break; }
    default: memcpy(&bits, p, 8); break;
    }
    if (floating) /* -0.0 is zero */
        bits &= ~((uint64_t)1 << (itemsize * 8 - 1));
    return bits != 0;
}

/* The row-major range [*begin, *end) of chunk `c` of `n` elements split into `chunks`. */
static void chunk_range(int64_t n, int chunks, int64_t c, int64_t *begin, int64_t *end)
{
    int64_t base = n / chunks, extra = n % chunks;
    *begin = c * base + (c < extra ? c : extra);
    *end = *begin + base + (c < extra ? 1 : 0);
}

void nonzero_count(const pith_tensor *t, nonzero_scan *scan)
{
    int threads = parallel_threads_for(t->numel);
    int chunks = threads < NONZERO_MAX_CHUNKS ? threads : NONZERO_MAX_CHUNKS;
    size_t itemsize = dtype_itemsize(t->dtype);
    bool floating = dtype_is_floating(t->dtype);
    const char *data = tensor_data(t);
    int64_t n = t->numel, *counts = scan->counts;
    scan->nchunks = chunks;
    PITH_PARALLEL_FOR(c, chunks, chunks, {
        int64_t begin, end, found = 0;
        chunk_range(n, chunks, c, &begin, &end);
        strided_walk w;
        walk_init(&w, t->ndim, t->sizes, t->strides, itemsize, begin);
        for (int64_t i = begin; i < end; i++, walk_next(&w))
            found += element_is_nonzero(data + w.offset, itemsize, floating);
        counts[c] = found;
    });
    scan->total = 0;
    for (int c = 0; c < chunks; c++)
        scan->total += counts[c];
}

void nonzero_fill(const pith_tensor *t, const nonzero_scan *scan, int64_t *dst,
                  int64_t row_stride, int64_t col_stride)
{
    int64_t starts[NONZERO_MAX_CHUNKS];
    int chunks = scan->nchunks;
    for (int c = 0; c < chunks; c++)
        starts[c] = c == 0 ? 0 : starts[c - 1] + scan->counts[c - 1];
    size_t itemsize = dtype_itemsize(t->dtype);
    bool floating = dtype_is_floating(t->dtype);
    const char *data = tensor_data(t);
    int64_t n = t->numel;
    PITH_PARALLEL_FOR(c, chunks, chunks, {
        int64_t begin, end, row = starts[c];
        chunk_range(n, chunks, c, &begin, &end);
        strided_walk w;
        walk_init(&w, t->ndim, t->sizes, t->strides, itemsize, begin);
        for (int64_t i = begin; i < end; i++, walk_next(&w)) {
            if (!element_is_nonzero(data + w.offset, itemsize, floating))
                continue;
            for (int d = 0; d < t->ndim; d++)
                dst[row * row_stride + d * col_stride] = w.index[d];
            row++;
        }
    });
}

/* ---- the plan ---- */

static bool index_dtype_is_mask(pith_dtype dtype)
{
    return dtype == PITH_BOOL || dtype == PITH_UINT8;
}

static pith_status mask_shape_check(const pith_tensor *self, const index_entry *e)
{
    char a[512], b[512];
    for (int j = 0; j < e->ndims; j++)
        if (e->t->sizes[j] != self->sizes[e->dim + j])
            return pith_set_error(PITH_ERR_INDEX,
                                  "The shape of the mask %s at index %d does not match the "
                                  "shape of the indexed tensor %s at index %d",
                                  shape_format(e->t->ndim, e->t->sizes, a, sizeof a), j,
                                  shape_format(self->ndim, self->sizes, b, sizeof b),
                                  e->dim + j);
    return PITH_OK;
}

/* Step 1: which dims each tensor of the list indexes; dtypes, devices and mask shapes. */
static pith_status plan_entries(const char *op, const pith_tensor *self,
                                pith_tensor_list indices, index_plan *p)
{
    if (indices.n == 0)
        return pith_set_error(PITH_ERR_INDEX, "at least one index must be provided");
    if (indices.n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_INDEX,
                              "too many indices for tensor of dimension %d (got %zu)",
                              self->ndim, indices.n);
    int dim = 0;
    for (size_t i = 0; i < indices.n; i++) {
        const pith_tensor *t = indices.data[i];
        if (!t) {
            dim++;
            continue;
        }
        if (!index_dtype_ok(t) && !index_dtype_is_mask(t->dtype))
            return pith_set_error(PITH_ERR_INDEX,
                                  "tensors used as indices must be long, int, byte or bool "
                                  "tensors");
        if (devices_check(op, self, t) != PITH_OK)
            return pith_last_status();
        index_entry *e = &p->entries[p->nentries++];
        e->t = t;
        e->dim = dim;
        e->mask = index_dtype_is_mask(t->dtype);
        e->ndims = e->mask ? t->ndim : 1;
        dim += e->ndims;
    }
    if (dim > self->ndim)
        return pith_set_error(PITH_ERR_INDEX,
                              "too many indices for tensor of dimension %d (got %d)",
                              self->ndim, dim);
    for (int i = 0; i < p->nentries; i++)
        if (p->entries[i].mask && mask_shape_check(self, &p->entries[i]) != PITH_OK)
            return pith_last_status();
    return PITH_OK;
}

/* Whether no None lies between the first and the last tensor of the list. */
static bool indices_adjacent(pith_tensor_list indices)
{
    size_t first = indices.n, last = 0;
    for (size_t i = 0; i < indices.n; i++)
        if (indices.data[i]) {
            first = first < i ? first : i;
            last = i;
        }
    for (size_t i = first; i < last; i++)
        if (!indices.data[i])
            return false;
    return true;
}

/* Step 2: self's geometry, with the indexed dims first when they are not adjacent. */
static void plan_geometry(const pith_tensor *self, pith_tensor_list indices, index_plan *p)
{
    view_geometry *g = &p->self;
    g->ndim = self->ndim;
    g->offset = 0;
    p->count = 0;
    for (int i = 0; i < p->nentries; i++)
        p->count += p->entries[i].ndims;
    if (indices_adjacent(indices)) {
        memcpy(g->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
        memcpy(g->strides, self->strides, sizeof(int64_t) * (size_t)self->ndim);
        p->first = p->nentries > 0 ? p->entries[0].dim : 0;
        return;
    }
    bool indexed[PITH_MAX_DIMS] = {false};
    int k = 0;
    for (int i = 0; i < p->nentries; i++)
        for (int j = 0; j < p->entries[i].ndims; j++) {
            int d = p->entries[i].dim + j;
            indexed[d] = true;
            g->sizes[k] = self->sizes[d];
            g->strides[k++] = self->strides[d];
        }
    for (int d = 0; d < self->ndim; d++)
        if (!indexed[d]) {
            g->sizes[k] = self->sizes[d];
            g->strides[k++] = self->strides[d];
        }
    p->first = 0;
}

/* Step 3: each mask's coordinates (CPU), or PITH_ERR_NOT_IMPLEMENTED (meta). */
static pith_status plan_masks(const char *op, index_plan *p, bool load)
{
    for (int i = 0; i < p->nentries; i++) {
        index_entry *e = &p->entries[i];
        if (!e->mask)
            continue;
        if (!load)
            return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                                  "%s: indexing with a boolean mask gives a result whose shape "
                                  "depends on the data; not supported on the meta device",
                                  op);
        nonzero_scan scan;
        nonzero_count(e->t, &scan);
        e->nnz = scan.total;
        if (e->nnz == 0 || e->ndims == 0)
            continue;
        /* nnz <= numel and ndims <= PITH_MAX_DIMS: the product fits in memory terms only if
         * the mask itself did, but check rather than trust that. */
        if ((uint64_t)e->nnz > SIZE_MAX / sizeof(int64_t) / (uint64_t)e->ndims ||
            !(e->data = malloc((size_t)e->nnz * (size_t)e->ndims * sizeof(int64_t))))
            return pith_set_error(PITH_ERR_NOMEM, "%s: cannot allocate the coordinates of %lld "
                                                  "mask elements",
                                  op, (long long)e->nnz);
        nonzero_fill(e->t, &scan, e->data, 1, e->nnz);
    }
    return PITH_OK;
}

/* The shape of entry `e` as an index tensor (a mask's is [nnz]). */
static int entry_shape(const index_entry *e, const int64_t **sizes)
{
    *sizes = e->mask ? &e->nnz : e->t->sizes;
    return e->mask ? 1 : e->t->ndim;
}

/* PyTorch's message, listing the shape of every index tensor (one per dim of a mask). */
static pith_status broadcast_error(const index_plan *p)
{
    char shapes[1024] = "", one[512];
    size_t len = 0;
    for (int i = 0; i < p->nentries; i++) {
        const index_entry *e = &p->entries[i];
        const int64_t *sizes;
        int ndim = entry_shape(e, &sizes);
        int repeat = e->mask && e->ndims > 1 ? e->ndims : 1;
        for (int r = 0; r < repeat && len < sizeof shapes; r++)
            len += (size_t)snprintf(shapes + len, sizeof shapes - len, "%s%s", len ? ", " : "",
                                    shape_format(ndim, sizes, one, sizeof one));
    }
    return pith_set_error(PITH_ERR_INDEX,
                          "shape mismatch: indexing tensors could not be broadcast together "
                          "with shapes %s",
                          shapes);
}

/* Step 4: the broadcast index shape and the result's shape. */
static pith_status plan_shapes(const char *op, index_plan *p)
{
    p->index_ndim = 0;
    for (int i = 0; i < p->nentries; i++) {
        const int64_t *sizes;
        int ndim = entry_shape(&p->entries[i], &sizes), n;
        int64_t out[PITH_MAX_DIMS];
        if (shape_broadcast(p->index_ndim, p->index_sizes, ndim, sizes, &n, out) != PITH_OK)
            return broadcast_error(p);
        memcpy(p->index_sizes, out, sizeof(int64_t) * (size_t)n);
        p->index_ndim = n;
    }
    int after = p->first + p->count, nafter = p->self.ndim - after;
    if (p->first + p->index_ndim + nafter > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "%s: the result would have more than %d dims", op,
                              PITH_MAX_DIMS);
    p->out_ndim = 0;
    for (int d = 0; d < p->first; d++)
        p->out_sizes[p->out_ndim++] = p->self.sizes[d];
    for (int d = 0; d < p->index_ndim; d++)
        p->out_sizes[p->out_ndim++] = p->index_sizes[d];
    for (int d = after; d < p->self.ndim; d++)
        p->out_sizes[p->out_ndim++] = p->self.sizes[d];
    p->index_numel = shape_numel_checked(p->index_ndim, p->index_sizes);
    p->out_numel = shape_numel_checked(p->out_ndim, p->out_sizes);
    if (p->index_numel < 0 || p->out_numel < 0)
        return error_prefix("%s", op);
    /* PyTorch's one shape-only bounds check, made even when the result is empty. */
    for (int d = p->first; d < after && p->index_numel > 0; d++)
        if (p->self.sizes[d] == 0)
            return pith_set_error(PITH_ERR_INDEX,
                                  "index is out of bounds for dimension with size 0");
    return PITH_OK;
}

/* Adds column `c` (values `data` of shape ndim/sizes, broadcast to the index shape) to the
 * offsets, wrapping and bounds-checking each value. */
static pith_status column_add(index_plan *p, int c, const int64_t *data, int ndim,
                              const int64_t *sizes)
{
    int64_t strides[PITH_MAX_DIMS], stride = 1;
    for (int d = p->index_ndim - 1; d >= 0; d--) {
        int own = d - (p->index_ndim - ndim);
        strides[d] = own >= 0 && sizes[own] != 1 ? stride : 0;
        if (own >= 0)
            stride *= sizes[own];
    }
    int64_t size = p->self.sizes[p->first + c], dim_stride = p->self.strides[p->first + c];
    strided_walk w;
    walk_init(&w, p->index_ndim, p->index_sizes, strides, 1, 0);
    for (int64_t b = 0; b < p->index_numel; b++, walk_next(&w)) {
        int64_t v = data[w.offset];
        if (v < -size || v >= size)
            return pith_set_error(PITH_ERR_INDEX,
                                  "index %lld is out of bounds for dimension %d with size %lld",
                                  (long long)v, c, (long long)size);
        p->offsets[b] += (v < 0 ? v + size : v) * dim_stride;
    }
    return PITH_OK;
}

/* Step 5 (CPU, non-empty result): the integer indices, checked, as element offsets. */
static pith_status plan_offsets(const char *op, index_plan *p)
{
    if (p->out_numel == 0)
        return PITH_OK;
    p->offsets = calloc((size_t)p->index_numel, sizeof(int64_t));
    if (!p->offsets)
        return pith_set_error(PITH_ERR_NOMEM, "%s: cannot allocate %lld index offsets", op,
                              (long long)p->index_numel);
    int c = 0;
    for (int i = 0; i < p->nentries; i++) {
        index_entry *e = &p->entries[i];
        if (!e->mask) {
            if (index_load(op, e->t, &e->data) != PITH_OK ||
                column_add(p, c++, e->data, e->t->ndim, e->t->sizes) != PITH_OK)
                return pith_last_status();
            continue;
        }
        for (int j = 0; j < e->ndims; j++)
            if (column_add(p, c++, e->data + j * e->nnz, 1, &e->nnz) != PITH_OK)
                return pith_last_status();
    }
    return PITH_OK;
}

pith_status index_plan_make(const char *op, const pith_tensor *self, pith_tensor_list indices,
                            bool load, index_plan *p)
{
    memset(p, 0, sizeof *p);
    if (plan_entries(op, self, indices, p) != PITH_OK)
        return pith_last_status();
    plan_geometry(self, indices, p);
    if (plan_masks(op, p, load) != PITH_OK || plan_shapes(op, p) != PITH_OK)
        return pith_last_status();
    return load ? plan_offsets(op, p) : PITH_OK;
}

void index_plan_free(index_plan *p)
{
    for (int i = 0; i < p->nentries; i++) {
        free(p->entries[i].data);
        p->entries[i].data = NULL;
    }
    free(p->offsets);
    p->offsets = NULL;
}

/* ---- index.Tensor ---- */

/* Copies self[indices] into `dst` (contiguous, the plan's result shape, non-empty). */
static void plan_gather(const index_plan *p, const char *src, size_t itemsize, char *dst)
{
    const view_geometry *g = &p->self;
    int after = p->first + p->count, nafter = g->ndim - after;
    int64_t outer, inner, expected = 1;
    bool inner_contiguous = true;
    index_plan_blocks(p, &outer, &inner);
    for (int d = g->ndim - 1; d >= after; d--) {
        if (g->sizes[d] != 1 && g->strides[d] != expected)
            inner_contiguous = false;
        expected *= g->sizes[d];
    }
    int64_t items = outer * p->index_numel;
    size_t block = (size_t)inner * itemsize;
    int threads = parallel_threads_for(p->out_numel);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(items, &begin, &end);
        for (int64_t item = begin; item < end; item++) {
            const char *from = src + index_plan_item_offset(p, item) * (int64_t)itemsize;
            char *to = dst + (size_t)item * block;
            if (inner_contiguous) {
                memcpy(to, from, block);
                continue;
            }
            strided_walk w;
            walk_init(&w, nafter, g->sizes + after, g->strides + after, itemsize, 0);
            for (int64_t k = 0; k < inner; k++, walk_next(&w))
                element_copy(to + (size_t)k * itemsize, from + w.offset, itemsize);
        }
    });
}

/* self[indices] as a new tensor, the plan made with op name `op`. */
static pith_status index_run(pith_value *ret, const char *op, const pith_tensor *self,
                             pith_tensor_list indices, bool meta)
{
    index_plan p;
    pith_tensor *out = NULL;
    if (index_plan_make(op, self, indices, !meta, &p) == PITH_OK) {
        out = tensor_new(p.out_ndim, p.out_sizes, self->dtype, meta ? PITH_META : self->device);
        if (out && !meta && p.out_numel > 0)
            plan_gather(&p, tensor_data(self), dtype_itemsize(self->dtype), tensor_data(out));
    }
    index_plan_free(&p);
    return ret_tensor(ret, out);
}

pith_status index_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         pith_tensor_list indices, pith_device device)
{
    return index_run(ret, "index", self, indices, device == PITH_META);
}

/* ---- nonzero ---- */

pith_status nonzero_cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    nonzero_scan scan;
    nonzero_count(self, &scan);
    int64_t sizes[2] = {scan.total, self->ndim};
    pith_tensor *out = tensor_new(2, sizes, PITH_INT64, self->device);
    if (out && scan.total > 0 && self->ndim > 0)
        nonzero_fill(self, &scan, (int64_t *)tensor_data(out), self->ndim, 1);
    return ret_tensor(ret, out);
}

pith_status nonzero_meta(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                          "nonzero: the output shape depends on the data; not supported on the "
                          "meta device");
}

/* ---- masked_select ---- */

/* PyTorch's checks; the geometries of self and mask broadcast together. */
static pith_status masked_select_check(const pith_tensor *self, const pith_tensor *mask,
                                       view_geometry *sg, view_geometry *mg)
{
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    if (mask->dtype != PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE, "masked_select: expected BoolTensor for mask");
    if (devices_check("masked_select", self, mask) != PITH_OK)
        return pith_last_status();
    if (shape_broadcast(self->ndim, self->sizes, mask->ndim, mask->sizes, &ndim, sizes) !=
        PITH_OK)
        return error_prefix("masked_select");
    if (geometry_expand("masked_select", self, ndim, sizes, sg) != PITH_OK ||
        geometry_expand("masked_select", mask, ndim, sizes, mg) != PITH_OK)
        return pith_last_status();
    return PITH_OK;
}

/* self[mask] of self and mask broadcast together: an index with one mask. */
pith_status masked_select_cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              const pith_tensor *mask)
{
    view_geometry sg, mg;
    if (masked_select_check(self, mask, &sg, &mg) != PITH_OK)
        return pith_last_status();
    pith_tensor *self_view = tensor_view(self, sg.ndim, sg.sizes, sg.strides, sg.offset);
    pith_tensor *mask_view = tensor_view(mask, mg.ndim, mg.sizes, mg.strides, mg.offset);
    pith_status status = pith_last_status();
    if (self_view && mask_view) {
        const pith_tensor *list[1] = {mask_view};
        status = index_run(ret, "masked_select", self_view, (pith_tensor_list){list, 1}, false);
    }
    pith_release(self_view);
    pith_release(mask_view);
    return status;
}

pith_status masked_select_meta(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               const pith_tensor *mask)
{
    view_geometry sg, mg;
    if (masked_select_check(self, mask, &sg, &mg) != PITH_OK)
        return pith_last_status();
    return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                          "masked_select: the output shape depends on the data; not supported "
                          "on the meta device");
}

/* nonzero(x, as_tuple=True): one index tensor per dim, views of nonzero's columns; a
 * 0-dim input gives one tensor of zeros, one per nonzero element (PyTorch's
 * nonzero_numpy). */
pith_status nonzero_numpy_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    (void)ks;
    pith_value coords[PITH_MAX_RETURNS];
    pith_status st = pith_call_nonzero(coords, self);
    if (st != PITH_OK)
        return st;
    if (self->ndim > 0) {
        st = pith_call_unbind(ret, coords[0].u.t, 1);
        value_clear(&coords[0]);
        return st;
    }
    int64_t n = coords[0].u.t->sizes[0];
    value_clear(&coords[0]);
    pith_value zeros[PITH_MAX_RETURNS];
    st = pith_call_zeros(zeros, (pith_int_list){&n, 1}, PITH_INT64, (int)self->device);
    if (st != PITH_OK)
        return st;
    pith_tensor **list = malloc(sizeof *list);
    if (!list) {
        value_clear(&zeros[0]);
        return pith_set_error(PITH_ERR_NOMEM, "nonzero_numpy: out of memory");
    }
    list[0] = zeros[0].u.t; /* moved into the list */
    return ret_tensor_list(ret, list, 1);
}
