/* indexing.c — ops that pick elements by an index tensor: index_select, gather and
 * embedding, and their out= forms; and the helpers of indexing.h.
 *
 * Every index is loaded and bounds-checked before the parallel copy (see indexing.h), and
 * before anything is written: an out= tensor that is the index itself is safe. Outputs are
 * contiguous tensors with self's dtype. */
#include <omp.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "kernels/indexing.h"
#include "kernels/out_target.h"
#include "kernels/views.h"

/* ---- helpers ---- */

void thread_range(int64_t n, int64_t *begin, int64_t *end)
{
    int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t chunk = (n + threads - 1) / threads;
    *begin = t * chunk < n ? t * chunk : n;
    *end = *begin + chunk < n ? *begin + chunk : n;
}

pith_status index_load(const char *op, const pith_tensor *index, int64_t **out)
{
    int64_t n = index->numel;
    *out = NULL;
    if (n == 0)
        return PITH_OK;
    int64_t *idx = malloc((size_t)n * sizeof *idx);
    if (!idx)
        return pith_set_error(PITH_ERR_NOMEM, "%s: cannot allocate %lld indices", op,
                              (long long)n);
    const char *data = tensor_data(index);
    size_t itemsize = pith_dtype_size(index->dtype);
    bool wide = index->dtype == PITH_INT64;
    int threads = parallel_threads_for(n);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(n, &begin, &end);
        strided_walk w;
        walk_init(&w, index->ndim, index->sizes, index->strides, itemsize, begin);
        for (int64_t i = begin; i < end; i++, walk_next(&w)) {
            if (wide) {
                memcpy(&idx[i], data + w.offset, sizeof(int64_t));
            } else {
                int32_t v;
                memcpy(&v, data + w.offset, sizeof v);
                idx[i] = v;
            }
        }
    });
    *out = idx;
    return PITH_OK;
}

int64_t index_find_out_of_range(const int64_t *idx, int64_t n, int64_t bound)
{
    for (int64_t i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= bound)
            return i;
    return -1;
}

pith_status devices_check(const char *op, const pith_tensor *a, const pith_tensor *b)
{
    if (a->device == b->device)
        return PITH_OK;
    return pith_set_error(PITH_ERR_VALUE,
                          "%s: Expected all tensors to be on the same device, but found at "
                          "least two devices, %s and %s!",
                          op, pith_device_name(a->device), pith_device_name(b->device));
}

/* Copies, for every (outer, j), the slice self[outer..., idx[j], inner...] into `dst`,
 * which is contiguous [outer, nidx, inner]. A 0-dim self acts as a 1-D tensor of one
 * element. */
static void rows_gather(char *dst, const pith_tensor *self, int d, const int64_t *idx,
                        int64_t nidx)
{
    static const int64_t one = 1, zero = 0;
    int ndim = self->ndim > 0 ? self->ndim : 1;
    const int64_t *sizes = self->ndim > 0 ? self->sizes : &one;
    const int64_t *strides = self->ndim > 0 ? self->strides : &zero;
    size_t itemsize = pith_dtype_size(self->dtype);
    /* An empty result copies nothing; otherwise every product below divides its numel. */
    for (int i = 0; i < ndim; i++)
        if (i != d && sizes[i] == 0)
            return;
    if (nidx == 0)
        return;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < d; i++)
        outer *= sizes[i];
    for (int i = d + 1; i < ndim; i++)
        inner *= sizes[i];
    int64_t items = outer * nidx;
    /* Whether self's inner dims are contiguous, so each slice is one memcpy. */
    bool inner_contiguous = true;
    int64_t expected = 1;
    for (int i = ndim - 1; i > d; i--) {
        if (sizes[i] != 1 && strides[i] != expected)
            inner_contiguous = false;
        expected *= sizes[i];
    }
    const char *src = tensor_data(self);
    size_t slice_bytes = (size_t)inner * itemsize;
    int threads = parallel_threads_for(items * inner);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(items, &begin, &end);
        for (int64_t item = begin; item < end; item++) {
            int64_t o = item / nidx, j = item % nidx, rest = o, base = 0;
            for (int i = d - 1; i >= 0; i--) {
                base += (rest % sizes[i]) * strides[i];
                rest /= sizes[i];
            }
            base += idx[j] * strides[d];
            const char *from = src + base * (int64_t)itemsize;
            char *to = dst + (size_t)item * slice_bytes;
            if (inner_contiguous) {
                memcpy(to, from, slice_bytes);
                continue;
            }
            strided_walk w;
            walk_init(&w, ndim - d - 1, sizes + d + 1, strides + d + 1, itemsize, 0);
            for (int64_t k = 0; k < inner; k++, walk_next(&w))
                element_copy(to + (size_t)k * itemsize, from + w.offset, itemsize);
        }
    });
}

/* ---- index_select ---- */

static pith_status index_select_check(const pith_tensor *self, int64_t dim,
                                      const pith_tensor *index, int *d)
{
    *d = dim_wrap(dim, self->ndim);
    if (*d < 0)
        return pith_last_status();
    if (index->ndim > 1)
        return pith_set_error(PITH_ERR_INDEX, "index_select(): Index is supposed to be a vector");
    if (self->ndim == 0 && index->numel != 1)
        return pith_set_error(PITH_ERR_VALUE,
                              "index_select(): Index to scalar can have only 1 value, got %lld "
                              "value(s)",
                              (long long)index->numel);
    if (!index_dtype_ok(index))
        return pith_set_error(PITH_ERR_TYPE,
                              "index_select(): Expected dtype int32 or int64 for index, got %s",
                              pith_dtype_name(index->dtype));
    return devices_check("index_select", self, index);
}

/* What rows_fill copies: rows_gather's arguments. */
typedef struct {
    const pith_tensor *self;
    int dim;
    const int64_t *idx;
    int64_t nidx;
} rows_job;

static pith_status rows_fill(const void *ctx, pith_tensor *dst)
{
    const rows_job *job = ctx;
    rows_gather(tensor_data(dst), job->self, job->dim, job->idx, job->nidx);
    return PITH_OK;
}

/* The result of index_select and embedding: `self` rows picked along `dim` into a new tensor
 * (target NULL) or into out= tensor `target` of self's dtype, whose shape is (ndim, sizes).
 * `idx` (nidx values, already in range) is NULL for a Meta kernel. */
static pith_status rows_result(pith_value *ret, const char *name, const pith_tensor *self,
                               int dim, const int64_t *idx, int64_t nidx, int ndim,
                               const int64_t *sizes, pith_device device, pith_tensor *target)
{
    rows_job job = {self, dim, idx, nidx};
    if (target) {
        if (out_target_check(name, target, ndim, sizes, self->dtype, self) != PITH_OK)
            return pith_last_status();
        return out_target_write(ret, name, target, &self, 1, false, rows_fill, &job);
    }
    return out_target_new(ret, ndim, sizes, self->dtype, device, rows_fill, &job);
}

/* index_select: functional (target NULL) or out= into `target`. */
static pith_status index_select_impl(pith_value *ret, const pith_tensor *self, int64_t dim,
                                     const pith_tensor *index, pith_device device,
                                     pith_tensor *target)
{
    int d = 0;
    int64_t *idx = NULL;
    if (index_select_check(self, dim, index, &d) != PITH_OK ||
        (device == PITH_CPU && index_load("index_select", index, &idx) != PITH_OK))
        return pith_last_status();
    int64_t bound = self->ndim > 0 ? self->sizes[d] : 1;
    if (device == PITH_CPU && index_find_out_of_range(idx, index->numel, bound) >= 0) {
        free(idx);
        return pith_set_error(PITH_ERR_INDEX, "index_select(): index out of range in self");
    }
    int64_t sizes[PITH_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim > 0)
        sizes[d] = index->numel;
    pith_status status = rows_result(ret, "index_select", self, d, idx, index->numel,
                                     self->ndim, sizes, device, target);
    free(idx);
    return status;
}

/* index_select's kernels for both devices (device_kernel in ops/ops.toml). */
pith_status index_select_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                int64_t dim, const pith_tensor *index, pith_device device)
{
    return index_select_impl(ret, self, dim, index, device, NULL);
}

pith_status index_select_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                    int64_t dim, const pith_tensor *index,
                                    const pith_tensor *out, pith_device device)
{
    return index_select_impl(ret, self, dim, index, device, (pith_tensor *)out);
}

/* ---- embedding ---- */

static pith_status embedding_check(const pith_tensor *weight, const pith_tensor *indices,
                                   int64_t *sizes)
{
    if (weight->ndim != 2)
        return pith_set_error(PITH_ERR_VALUE, "embedding: 'weight' must be 2-D");
    if (!index_dtype_ok(indices))
        return pith_set_error(PITH_ERR_TYPE,
                              "embedding: Expected tensor for argument #1 'indices' to have one "
                              "of the following scalar types: Long, Int; but got %s instead "
                              "(while checking arguments for embedding)",
                              dtype_legacy_tensor_name(indices->dtype));
    if (indices->ndim >= PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE,
                              "embedding: the result would have more than %d dims",
                              PITH_MAX_DIMS);
    memcpy(sizes, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim);
    sizes[indices->ndim] = weight->sizes[1];
    return devices_check("embedding", weight, indices);
}

/* embedding: functional (target NULL) or out= into `target`. padding_idx,
 * scale_grad_by_freq and sparse only change the gradient, so the forward accepts and ignores
 * them (as PyTorch's aten::embedding does). */
static pith_status embedding_impl(pith_value *ret, const pith_tensor *weight,
                                  const pith_tensor *indices, pith_device device,
                                  pith_tensor *target)
{
    int64_t sizes[PITH_MAX_DIMS];
    int64_t *idx = NULL;
    if (embedding_check(weight, indices, sizes) != PITH_OK ||
        (device == PITH_CPU && index_load("embedding", indices, &idx) != PITH_OK))
        return pith_last_status();
    if (device == PITH_CPU && index_find_out_of_range(idx, indices->numel, weight->sizes[0]) >= 0) {
        free(idx);
        return pith_set_error(PITH_ERR_INDEX, "embedding: index out of range in self");
    }
    pith_status status = rows_result(ret, "embedding", weight, 0, idx, indices->numel,
                                     indices->ndim + 1, sizes, device, target);
    free(idx);
    return status;
}

/* embedding's kernels for both devices (device_kernel in ops/ops.toml). */
pith_status embedding_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *weight,
                             const pith_tensor *indices, int64_t padding_idx,
                             bool scale_grad_by_freq, bool sparse, pith_device device)
{
    return embedding_impl(ret, weight, indices, device, NULL);
}

pith_status embedding_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *weight,
                                 const pith_tensor *indices, int64_t padding_idx,
                                 bool scale_grad_by_freq, bool sparse, const pith_tensor *out,
                                 pith_device device)
{
    return embedding_impl(ret, weight, indices, device, (pith_tensor *)out);
}

/* ---- gather ---- */

/* PyTorch's gather meta checks; an empty index skips the shape checks (as PyTorch does). */
static pith_status gather_check(const pith_tensor *self, int64_t dim, const pith_tensor *index,
                                int *d)
{
    char a[512], b[512];
    *d = dim_wrap(dim, self->ndim);
    if (*d < 0)
        return pith_last_status();
    if (devices_check("gather", self, index) != PITH_OK)
        return pith_last_status();
    if (index->numel == 0)
        return PITH_OK;
    if (!index_dtype_ok(index))
        return pith_set_error(PITH_ERR_TYPE, "gather(): Expected dtype int32/int64 for index, got %s",
                              pith_dtype_name(index->dtype));
    int self_dims = self->ndim > 0 ? self->ndim : 1;
    int index_dims = index->ndim > 0 ? index->ndim : 1;
    if (self_dims != index_dims)
        return pith_set_error(PITH_ERR_VALUE,
                              "gather(): Index tensor must have the same number of dimensions as "
                              "input tensor");
    for (int i = 0; i < self_dims; i++) {
        int64_t index_size = index->ndim > 0 ? index->sizes[i] : 1;
        int64_t self_size = self->ndim > 0 ? self->sizes[i] : 1;
        if (i != *d && index_size > self_size)
            return pith_set_error(PITH_ERR_VALUE,
                                  "gather(): Size does not match at dimension %d expected index %s "
                                  "to be smaller than self %s apart from dimension %d",
                                  i, shape_format(index->ndim, index->sizes, a, sizeof a),
                                  shape_format(self->ndim, self->sizes, b, sizeof b), *d);
    }
    return PITH_OK;
}

/* What gather_fill copies. */
typedef struct {
    const pith_tensor *self, *index;
    int dim;
    const int64_t *idx;
} gather_job;

static pith_status gather_fill(const void *ctx, pith_tensor *dst)
{
    const gather_job *job = ctx;
    const pith_tensor *self = job->self, *index = job->index;
    const int64_t *idx = job->idx;
    int64_t n = index->numel;
    if (n == 0)
        return PITH_OK;
    size_t itemsize = pith_dtype_size(self->dtype);
    const char *src = tensor_data(self);
    char *out = tensor_data(dst);
    /* Walk the index's shape with self's strides, except along `dim`, where the index value
     * picks the element. A 0-dim self has one element. */
    int64_t strides[PITH_MAX_DIMS] = {0};
    if (self->ndim > 0)
        memcpy(strides, self->strides, sizeof(int64_t) * (size_t)self->ndim);
    /* index sizes <= self's (gather_check) and idx[i] < self's size: these offsets are
     * self's own, which fit. See Note [Geometry fits in int64] (core/tensor.c). */
    int64_t dim_stride = strides[job->dim] * (int64_t)itemsize;
    strides[job->dim] = 0;
    int threads = parallel_threads_for(n);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(n, &begin, &end);
        strided_walk w;
        walk_init(&w, index->ndim, index->sizes, strides, itemsize, begin);
        for (int64_t i = begin; i < end; i++, walk_next(&w))
            element_copy(out + (size_t)i * itemsize, src + w.offset + idx[i] * dim_stride,
                         itemsize);
    });
    return PITH_OK;
}

/* gather: functional (target NULL) or out= into `target` (of self's dtype). */
static pith_status gather_impl(pith_value *ret, const pith_tensor *self, int64_t dim,
                               const pith_tensor *index, pith_device device,
                               pith_tensor *target)
{
    int d = 0;
    int64_t *idx = NULL;
    if (gather_check(self, dim, index, &d) != PITH_OK ||
        (device == PITH_CPU && index_load("gather", index, &idx) != PITH_OK))
        return pith_last_status();
    int64_t bound = self->ndim > 0 ? self->sizes[d] : 1;
    int64_t bad = device == PITH_CPU ? index_find_out_of_range(idx, index->numel, bound) : -1;
    if (bad >= 0) {
        pith_status status =
            pith_set_error(PITH_ERR_INDEX,
                           "gather(): index %lld is out of bounds for dimension %d with size %lld",
                           (long long)idx[bad], d, (long long)bound);
        free(idx);
        return status;
    }
    gather_job job = {self, index, d, idx};
    pith_status status;
    if (target) {
        status = out_target_check("gather", target, index->ndim, index->sizes, self->dtype,
                                  self);
        if (status == PITH_OK)
            status = out_target_write(ret, "gather", target, &self, 1, false, gather_fill,
                                      &job);
    } else {
        status = out_target_new(ret, index->ndim, index->sizes, self->dtype, device,
                                gather_fill, &job);
    }
    free(idx);
    return status;
}

/* gather's kernels for both devices (device_kernel in ops/ops.toml). */
pith_status gather_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self, int64_t dim,
                          const pith_tensor *index, bool sparse_grad, pith_device device)
{
    return gather_impl(ret, self, dim, index, device, NULL);
}

pith_status gather_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              int64_t dim, const pith_tensor *index, bool sparse_grad,
                              const pith_tensor *out, pith_device device)
{
    return gather_impl(ret, self, dim, index, device, (pith_tensor *)out);
}
