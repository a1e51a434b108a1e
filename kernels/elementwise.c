/* elementwise.c — the elementwise engine: broadcasting, output checks, overlap handling,
 * dimension coalescing, and the (OpenMP) iteration that calls the 1-D inner loops.
 * The inner loops and the ops are in elementwise_*.c; dtype conversion in
 * elementwise_copy.c. */
#include <omp.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/promotion.h"

/* Note [Aliasing in inner loops]
 * Inner loops read an input element and write the output element of the same index, and
 * may run with the output and an input at the same address (in place, a.add_(b)). They
 * never see a partial overlap: elementwise_apply and elementwise_copy copy any input whose
 * bytes overlap the output without being exactly the output (same start, same strides),
 * and elementwise_output rejects outputs that write one location twice (a stride 0 on a
 * dim of size > 1). So every dependence is within one iteration, and the contiguous loops
 * are marked `GCC ivdep` (elementwise_loops.h) instead of taking `restrict` pointers:
 * restrict would make the exact in-place alias undefined behaviour. ivdep lets GCC
 * vectorise at -O2/-O3 without run-time alias checks. */

/* ---- broadcasting ---- */

pith_status broadcast_shapes(const char *op, int n, const pith_tensor *const *tensors,
                             int *ndim, int64_t *sizes)
{
    int nd = 0;
    if (n == 2 && sizes_equal(tensors[0]->ndim, tensors[0]->sizes, tensors[1]->ndim,
                              tensors[1]->sizes)) { /* the common case */
        *ndim = tensors[0]->ndim;
        for (int d = 0; d < *ndim; d++)
            sizes[d] = tensors[0]->sizes[d];
        return PITH_OK;
    }
    for (int i = 0; i < n; i++)
        if (tensors[i]->ndim > nd)
            nd = tensors[i]->ndim;
    for (int d = 0; d < nd; d++)
        sizes[d] = 1;
    for (int i = 0; i < n; i++) {
        const pith_tensor *t = tensors[i];
        for (int k = 0; k < t->ndim; k++) {
            int d = nd - t->ndim + k;
            int64_t s = t->sizes[k];
            if (s == sizes[d] || s == 1)
                continue;
            if (sizes[d] != 1)
                return pith_set_error(PITH_ERR_VALUE,
                                      "%s: the size of tensor a (%lld) must match the size of "
                                      "tensor b (%lld) at non-singleton dimension %d",
                                      op, (long long)sizes[d], (long long)s, d);
            sizes[d] = s;
        }
    }
    *ndim = nd;
    return PITH_OK;
}

/* ---- outputs ---- */

static bool tensor_has_internal_overlap(const pith_tensor *t)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] > 1 && t->strides[d] == 0)
            return true;
    return false;
}

static pith_status output_check_writable(const char *op, const pith_tensor *target,
                                         pith_dtype result)
{
    if (!dtype_can_cast(result, target->dtype))
        return pith_set_error(PITH_ERR_TYPE,
                              "%s: result type %s can't be cast to the desired output type %s",
                              op, pith_dtype_name(result), pith_dtype_name(target->dtype));
    return PITH_OK;
}

pith_status elementwise_check_no_overlap(const char *op, const pith_tensor *target)
{
    if (tensor_has_internal_overlap(target))
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: unsupported operation: more than one element of the "
                              "written-to tensor refers to a single memory location. Please "
                              "clone() the tensor before performing the operation.",
                              op);
    return PITH_OK;
}

pith_status elementwise_output(const char *op, elementwise_mode mode, pith_tensor *target,
                               int ndim, const int64_t *sizes, pith_dtype result,
                               pith_device device, pith_tensor **dst)
{
    char have[256], want[256];
    switch (mode) {
    case ELEMENTWISE_FUNCTIONAL:
        *dst = tensor_new(ndim, sizes, result, device);
        return *dst ? PITH_OK : pith_last_status();
    case ELEMENTWISE_OUT:
        if (output_check_writable(op, target, result) != PITH_OK)
            return pith_last_status();
        if (tensor_resize_out(target, ndim, sizes) != PITH_OK)
            return error_prefix("%s", op);
        break;
    case ELEMENTWISE_INPLACE:
        if (!shape_equal(target->ndim, target->sizes, ndim, sizes))
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s: output with shape %s doesn't match the broadcast shape %s",
                                  op, shape_format(target->ndim, target->sizes, have, sizeof have),
                                  shape_format(ndim, sizes, want, sizeof want));
        if (output_check_writable(op, target, result) != PITH_OK)
            return pith_last_status();
        break;
    }
    if (elementwise_check_no_overlap(op, target) != PITH_OK)
        return pith_last_status();
    *dst = target;
    return PITH_OK;
}

/* ---- geometry ---- */

void geometry_init(elementwise_geometry *g, int ndim, const int64_t *sizes)
{
    g->noperands = 0;
    g->ndim = ndim;
    memcpy(g->sizes, sizes, (size_t)ndim * sizeof *sizes);
}

/* Adds an operand given by raw geometry, right-aligned and broadcast to g's shape. */
static void geometry_add_raw(elementwise_geometry *g, char *data, int64_t element_size,
                             int ndim, const int64_t *sizes, const int64_t *strides)
{
    int k = g->noperands++;
    int lead = g->ndim - ndim;
    g->data[k] = data;
    for (int d = 0; d < g->ndim; d++) {
        int64_t size = d < lead ? 1 : sizes[d - lead];
        /* cannot overflow: See Note [Geometry fits in int64] (core/tensor.c) */
        g->strides[k][d] = size == 1 ? 0 : strides[d - lead] * element_size;
    }
}

void geometry_add_operand(elementwise_geometry *g, const pith_tensor *t)
{
    geometry_add_raw(g, tensor_data(t), (int64_t)dtype_itemsize(t->dtype), t->ndim,
                     t->sizes, t->strides);
}

static void geometry_swap_dims(elementwise_geometry *g, int a, int b)
{
    int64_t s = g->sizes[a];
    g->sizes[a] = g->sizes[b];
    g->sizes[b] = s;
    for (int k = 0; k < g->noperands; k++) {
        s = g->strides[k][a];
        g->strides[k][a] = g->strides[k][b];
        g->strides[k][b] = s;
    }
}

/* Whether dim `outer` should move inside dim `inner`: the first operand that is not
 * broadcast in either dim and whose strides differ decides (as TensorIterator does). */
static bool geometry_should_swap(const elementwise_geometry *g, int outer, int inner)
{
    for (int k = 0; k < g->noperands; k++) {
        int64_t so = g->strides[k][outer], si = g->strides[k][inner];
        if (so == 0 || si == 0 || so == si)
            continue;
        return so < si;
    }
    return false;
}

/* Drops size-1 dims, orders the rest so that strides shrink towards the inner dim (the
 * output's layout first), and merges dims that are contiguous for every operand. */
static void geometry_coalesce(elementwise_geometry *g)
{
    int nd = 0;
    for (int d = 0; d < g->ndim; d++) {
        if (g->sizes[d] == 1)
            continue;
        g->sizes[nd] = g->sizes[d];
        for (int k = 0; k < g->noperands; k++)
            g->strides[k][nd] = g->strides[k][d];
        nd++;
    }
    g->ndim = nd;
    for (int i = 1; i < nd; i++)
        for (int j = i; j > 0 && geometry_should_swap(g, j - 1, j); j--)
            geometry_swap_dims(g, j - 1, j);
    if (nd <= 1)
        return;
    int out = 0;
    for (int d = 1; d < nd; d++) {
        bool mergeable = true;
        for (int k = 0; k < g->noperands && mergeable; k++)
            mergeable = g->strides[k][out] == g->strides[k][d] * g->sizes[d];
        if (mergeable) {
            g->sizes[out] *= g->sizes[d];
        } else {
            out++;
            g->sizes[out] = g->sizes[d];
        }
        for (int k = 0; k < g->noperands; k++)
            g->strides[k][out] = g->strides[k][d];
    }
    g->ndim = out + 1;
}

/* Runs the loop over flat elements [begin, end) of the coalesced geometry, one inner row
 * (or part of one) per call. Offsets are kept as integers so that no pointer ever points
 * outside its buffer; they, and the step one past the end of a dim before its carry, fit
 * in int64: See Note [Geometry fits in int64] (core/tensor.c). */
static int geometry_run_range(const elementwise_geometry *g, int64_t begin, int64_t end,
                              elementwise_loop loop, void *ctx)
{
    const int nops = g->noperands, last = g->ndim - 1;
    char *ptrs[ELEMENTWISE_MAX_OPERANDS];
    int64_t inner_strides[ELEMENTWISE_MAX_OPERANDS] = {0};
    int64_t offsets[ELEMENTWISE_MAX_OPERANDS] = {0};
    int64_t index[PITH_MAX_DIMS];
    if (g->ndim == 0) {
        int64_t one = 1;
        for (int k = 0; k < nops; k++)
            ptrs[k] = g->data[k];
        return loop(ptrs, &one, inner_strides, ctx);
    }
    int64_t rest = begin;
    for (int d = last; d >= 0; d--) {
        index[d] = rest % g->sizes[d];
        rest /= g->sizes[d];
        for (int k = 0; k < nops; k++)
            offsets[k] += index[d] * g->strides[k][d];
    }
    for (int k = 0; k < nops; k++)
        inner_strides[k] = g->strides[k][last];
    int result = 0;
    for (int64_t pos = begin; pos < end;) {
        int64_t n = g->sizes[last] - index[last];
        if (n > end - pos)
            n = end - pos;
        for (int k = 0; k < nops; k++)
            ptrs[k] = g->data[k] + offsets[k];
        result |= loop(ptrs, &n, inner_strides, ctx);
        pos += n;
        if (pos >= end)
            break;
        /* The row is finished: back to its start, then carry into the outer dims. */
        for (int k = 0; k < nops; k++)
            offsets[k] -= index[last] * inner_strides[k];
        index[last] = 0;
        for (int d = last - 1; d >= 0; d--) {
            index[d]++;
            for (int k = 0; k < nops; k++)
                offsets[k] += g->strides[k][d];
            if (index[d] < g->sizes[d])
                break;
            for (int k = 0; k < nops; k++)
                offsets[k] -= g->sizes[d] * g->strides[k][d];
            index[d] = 0;
        }
    }
    return result;
}

/* See Note [Thread count and grain size] (core/parallel.h): one region per kernel, each
 * thread taking one contiguous share of the flat range. */
static int geometry_run_on(elementwise_geometry *g, elementwise_loop loop, void *ctx,
                           bool serial)
{
    int64_t numel = 1;
    for (int d = 0; d < g->ndim; d++)
        numel *= g->sizes[d];
    if (numel == 0)
        return 0;
    geometry_coalesce(g);
    int nthreads = serial ? 1 : parallel_threads_for(numel);
    if (nthreads <= 1)
        return geometry_run_range(g, 0, numel, loop, ctx);
    int result = 0;
#pragma omp parallel num_threads(nthreads) reduction(| : result)
    {
        int64_t nth = omp_get_num_threads(), tid = omp_get_thread_num();
        /* Shares are multiples of 64 elements so that threads rarely write one cache
         * line. */
        int64_t share = ((numel + nth - 1) / nth + 63) / 64 * 64;
        int64_t begin = tid * share;
        int64_t end = begin + share < numel ? begin + share : numel;
        if (begin < end)
            result |= geometry_run_range(g, begin, end, loop, ctx);
    }
    return result;
}

int geometry_run(elementwise_geometry *g, elementwise_loop loop, void *ctx)
{
    return geometry_run_on(g, loop, ctx, false);
}

int geometry_run_serial(elementwise_geometry *g, elementwise_loop loop, void *ctx)
{
    return geometry_run_on(g, loop, ctx, true);
}

/* ---- applying a loop to tensors ---- */

/* The usual case, decided without looking at the geometry: two different storages whose
 * buffers are disjoint. */
static inline bool buffers_disjoint(const pith_tensor *in, const pith_tensor *out)
{
    const pith_storage *si = in->storage, *so = out->storage;
    return si != so && ((const char *)si->data + si->nbytes <= (const char *)so->data ||
                        (const char *)so->data + so->nbytes <= (const char *)si->data);
}

/* The bytes [lo, hi) of its storage, counted from the storage's start, that a non-empty
 * tensor can touch (strides are non-negative). Works for meta tensors too. */
static void tensor_storage_extent(const pith_tensor *t, uintptr_t *lo, uintptr_t *hi)
{
    int64_t esize = (int64_t)dtype_itemsize(t->dtype);
    int64_t last = 0;
    for (int d = 0; d < t->ndim; d++)
        last += (t->sizes[d] - 1) * t->strides[d];
    *lo = (uintptr_t)(t->offset * esize);
    *hi = *lo + (uintptr_t)((last + 1) * esize);
}

/* The addresses [lo, hi) that a non-empty CPU tensor can touch. Addresses rather than
 * storages, so that two from_blob tensors over one buffer are seen to overlap too. */
static void tensor_address_extent(const pith_tensor *t, uintptr_t *lo, uintptr_t *hi)
{
    tensor_storage_extent(t, lo, hi);
    *lo += (uintptr_t)t->storage->data;
    *hi += (uintptr_t)t->storage->data;
}

bool tensors_may_overlap(const pith_tensor *a, const pith_tensor *b)
{
    uintptr_t a_lo, a_hi, b_lo, b_hi;
    if (a->numel == 0 || b->numel == 0)
        return false;
    if (a->storage == b->storage) {
        tensor_storage_extent(a, &a_lo, &a_hi);
        tensor_storage_extent(b, &b_lo, &b_hi);
    } else {
        if (!a->storage->data || !b->storage->data || buffers_disjoint(a, b))
            return false;
        tensor_address_extent(a, &a_lo, &a_hi);
        tensor_address_extent(b, &b_lo, &b_hi);
    }
    return a_lo < b_hi && b_lo < a_hi;
}

bool tensor_is_dense(const pith_tensor *t)
{
    int order[PITH_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1)
            continue;
        int i = n++; /* insertion sort of the dims by stride, smallest first */
        for (; i > 0 && t->strides[order[i - 1]] > t->strides[d]; i--)
            order[i] = order[i - 1];
        order[i] = d;
    }
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        if (t->strides[order[i]] != expected)
            return false;
        expected *= t->sizes[order[i]];
    }
    return true;
}

/* Whether `in`, broadcast to `out`'s shape, reads exactly the elements `out` writes at the
 * same indices. */
static bool tensor_is_exact_alias(const pith_tensor *in, const pith_tensor *out)
{
    if (in->dtype != out->dtype || tensor_data(in) != tensor_data(out) || in->ndim > out->ndim)
        return false;
    int lead = out->ndim - in->ndim;
    for (int d = 0; d < out->ndim; d++) {
        if (out->sizes[d] == 1)
            continue;
        if (d < lead || in->sizes[d - lead] != out->sizes[d] ||
            in->strides[d - lead] != out->strides[d])
            return false;
    }
    return true;
}

bool tensors_overlap_partially(const pith_tensor *in, const pith_tensor *out)
{
    if (in->numel == 0 || out->numel == 0 || !in->storage->data || !out->storage->data ||
        buffers_disjoint(in, out))
        return false;
    uintptr_t in_lo, in_hi, out_lo, out_hi;
    tensor_address_extent(in, &in_lo, &in_hi);
    tensor_address_extent(out, &out_lo, &out_hi);
    if (in_hi <= out_lo || out_hi <= in_lo)
        return false;
    return !tensor_is_exact_alias(in, out);
}

/* A contiguous copy of `t` converted to `dtype`, where every broadcast dim (stride 0) is
 * kept as size 1, so that an expanded input costs one row rather than the whole
 * expansion; it still broadcasts to the same shape. */
static pith_tensor *tensor_compact_copy(const pith_tensor *t, pith_dtype dtype)
{
    int64_t sizes[PITH_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        sizes[d] = t->strides[d] == 0 && t->sizes[d] > 1 ? 1 : t->sizes[d];
    pith_tensor *copy = tensor_new(t->ndim, sizes, dtype, PITH_CPU);
    if (!copy)
        return NULL;
    elementwise_geometry g;
    geometry_init(&g, t->ndim, sizes);
    geometry_add_operand(&g, copy);
    geometry_add_raw(&g, tensor_data(t), (int64_t)dtype_itemsize(t->dtype), t->ndim, sizes,
                     t->strides);
    geometry_run(&g, cast_loop(dtype, t->dtype), NULL);
    return copy;
}

/* The common small case, without the geometry: a contiguous output below the grain size,
 * and inputs that are contiguous of the output's shape or single elements. */
static bool apply_flat(pith_tensor *dst, int nin, const pith_tensor *const *in,
                       elementwise_loop loop, void *ctx, int *result)
{
    char *args[ELEMENTWISE_MAX_OPERANDS];
    int64_t strides[ELEMENTWISE_MAX_OPERANDS];
    if (!dst->contiguous || dst->numel >= PITH_GRAIN_SIZE)
        return false;
    args[0] = tensor_data(dst);
    strides[0] = (int64_t)dtype_itemsize(dst->dtype);
    for (int i = 0; i < nin; i++) {
        const pith_tensor *t = in[i];
        args[i + 1] = tensor_data(t);
        if (t->numel == 1)
            strides[i + 1] = 0;
        else if (t->contiguous && sizes_equal(t->ndim, t->sizes, dst->ndim, dst->sizes))
            strides[i + 1] = (int64_t)dtype_itemsize(t->dtype);
        else
            return false;
    }
    int64_t n = dst->numel;
    *result = loop(args, &n, strides, ctx);
    return true;
}

pith_status elementwise_apply(pith_tensor *out, pith_dtype loop_out_dtype, int nin,
                              const pith_tensor *const *in, const pith_dtype *in_dtypes,
                              elementwise_loop loop, void *ctx, int *loop_result)
{
    pith_tensor *temps[ELEMENTWISE_MAX_OPERANDS] = {0};
    const pith_tensor *args[ELEMENTWISE_MAX_OPERANDS];
    pith_tensor *dst = out, *dst_temp = NULL;
    pith_status status = PITH_OK;
    int result = 0;
    if (loop_result)
        *loop_result = 0;
    if (out->numel == 0)
        return PITH_OK;
    if (out->dtype != loop_out_dtype) {
        dst = dst_temp = tensor_new(out->ndim, out->sizes, loop_out_dtype, PITH_CPU);
        if (!dst_temp)
            return pith_last_status();
    }
    for (int i = 0; i < nin; i++) {
        args[i] = in[i];
        if (in[i]->dtype != in_dtypes[i] ||
            (!dst_temp && !buffers_disjoint(in[i], out) && tensors_overlap_partially(in[i], out))) {
            temps[i] = tensor_compact_copy(in[i], in_dtypes[i]);
            if (!temps[i]) {
                status = pith_last_status();
                goto done;
            }
            args[i] = temps[i];
        }
    }
    if (!apply_flat(dst, nin, args, loop, ctx, &result)) {
        elementwise_geometry g;
        geometry_init(&g, dst->ndim, dst->sizes);
        geometry_add_operand(&g, dst);
        for (int i = 0; i < nin; i++)
            geometry_add_operand(&g, args[i]);
        result = geometry_run(&g, loop, ctx);
    }
    if (loop_result)
        *loop_result = result;
    if (dst_temp && result == 0)
        status = elementwise_copy("copy_", out, dst_temp);
done:
    for (int i = 0; i < nin; i++)
        if (temps[i])
            pith_release(temps[i]);
    if (dst_temp)
        pith_release(dst_temp);
    return status;
}

/* ---- copies ---- */

pith_status broadcast_check_into(const char *op, const pith_tensor *dst,
                                 const pith_tensor *src)
{
    const pith_tensor *pair[2] = {dst, src};
    int ndim = 0;
    int64_t sizes[PITH_MAX_DIMS];
    char have[256], want[256];
    if (broadcast_shapes(op, 2, pair, &ndim, sizes) != PITH_OK)
        return pith_last_status();
    if (!shape_equal(dst->ndim, dst->sizes, ndim, sizes))
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: output with shape %s doesn't match the broadcast shape %s", op,
                              shape_format(dst->ndim, dst->sizes, have, sizeof have),
                              shape_format(ndim, sizes, want, sizeof want));
    return PITH_OK;
}

pith_status elementwise_copy(const char *op, pith_tensor *dst, const pith_tensor *src)
{
    if (broadcast_check_into(op, dst, src) != PITH_OK)
        return pith_last_status();
    if (dst->numel == 0)
        return PITH_OK;
    if (dst->device == PITH_META || src->device == PITH_META)
        return pith_set_error(PITH_ERR_VALUE, "%s: cannot copy the data of a meta tensor", op);
    pith_tensor *temp = NULL;
    if (tensors_overlap_partially(src, dst)) {
        temp = tensor_compact_copy(src, src->dtype);
        if (!temp)
            return pith_last_status();
        src = temp;
    }
    elementwise_geometry g;
    geometry_init(&g, dst->ndim, dst->sizes);
    geometry_add_operand(&g, dst);
    geometry_add_operand(&g, src);
    geometry_run(&g, cast_loop(dst->dtype, src->dtype), NULL);
    pith_release(temp);
    return PITH_OK;
}

pith_tensor *tensor_converted(const pith_tensor *src, pith_dtype dtype)
{
    pith_tensor *t = tensor_new(src->ndim, src->sizes, dtype, PITH_CPU);
    if (t && elementwise_copy("to", t, src) != PITH_OK) {
        pith_release(t);
        return NULL;
    }
    return t;
}
