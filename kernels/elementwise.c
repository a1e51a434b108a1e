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
/* Runs `loop` over the geometry; `per_element` is the work of one of its elements in
 * elements of the operands (1, or a block's length for copy_blocks), for the grain rule. */
static int geometry_run_on(elementwise_geometry *g, elementwise_loop loop, void *ctx,
                           bool serial, int64_t per_element)
{
    int64_t numel = 1;
    for (int d = 0; d < g->ndim; d++)
        numel *= g->sizes[d];
    if (numel == 0)
        return 0;
    geometry_coalesce(g);
    int nthreads = serial ? 1 : parallel_threads_for(numel * per_element);
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
    return geometry_run_on(g, loop, ctx, false, 1);
}

int geometry_run_serial(elementwise_geometry *g, elementwise_loop loop, void *ctx)
{
    return geometry_run_on(g, loop, ctx, true, 1);
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

/* Copies blocks of `*(int64_t *)ctx` bytes: args[0] and args[1] advance by their strides
 * from one block to the next. */
static int copy_blocks(char **args, const int64_t *n, const int64_t *strides, void *ctx)
{
    const size_t bytes = (size_t)*(const int64_t *)ctx;
    char *out = args[0];
    const char *in = args[1];
    for (int64_t i = 0; i < n[0]; i++, out += strides[0], in += strides[1])
        memcpy(out, in, bytes);
    return 0;
}

/* The square tile of a transposing copy: COPY_TILE elements along each of its two dims
 * (32 x 32 x 8 bytes = 8 KiB of buffer for float64, half of it for float32). */
#define COPY_TILE 32

/* Copies one tile of a transposing copy: `ni` elements along the output's contiguous dim
 * by `nj` along the input's, whose other steps are in_i and out_j bytes. The tile goes
 * through a buffer: the input's rows are read whole into it, then the output's rows are
 * written whole from it, so that neither side needs more than one line at a time in L1
 * (lines a power-of-two stride apart share a set: 32 of them at a stride of 4 KiB would
 * not all stay). */
/* The transpose of a full tile from its buffer to the output in blocks of vectors (4 x 4
 * lanes of 4 bytes, 2 x 2 of 8): shuffles, where element by element it would be a load and a
 * store each. Returns true: it always does it (a `false` would take the element loop). */
typedef uint32_t copy_v4u __attribute__((vector_size(16)));
typedef uint64_t copy_v2u __attribute__((vector_size(16)));
static bool copy_tile_transpose_4(char *out, uint32_t (*buf)[COPY_TILE], int64_t out_j)
{
    for (int j = 0; j < COPY_TILE; j += 4)
        for (int i = 0; i < COPY_TILE; i += 4) {
            copy_v4u r0, r1, r2, r3;
            memcpy(&r0, &buf[i][j], sizeof r0);
            memcpy(&r1, &buf[i + 1][j], sizeof r1);
            memcpy(&r2, &buf[i + 2][j], sizeof r2);
            memcpy(&r3, &buf[i + 3][j], sizeof r3);
            copy_v4u t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
            copy_v4u t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
            copy_v4u t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
            copy_v4u t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
            copy_v4u c[4] = {__builtin_shufflevector(t0, t2, 0, 1, 4, 5),
                             __builtin_shufflevector(t0, t2, 2, 3, 6, 7),
                             __builtin_shufflevector(t1, t3, 0, 1, 4, 5),
                             __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
            for (int m = 0; m < 4; m++)
                memcpy(out + (j + m) * out_j + i * 4, &c[m], sizeof c[m]);
        }
    return true;
}
static bool copy_tile_transpose_8(char *out, uint64_t (*buf)[COPY_TILE], int64_t out_j)
{
    for (int j = 0; j < COPY_TILE; j += 2)
        for (int i = 0; i < COPY_TILE; i += 2) {
            copy_v2u r0, r1;
            memcpy(&r0, &buf[i][j], sizeof r0);
            memcpy(&r1, &buf[i + 1][j], sizeof r1);
            copy_v2u c0 = __builtin_shufflevector(r0, r1, 0, 2);
            copy_v2u c1 = __builtin_shufflevector(r0, r1, 1, 3);
            memcpy(out + j * out_j + i * 8, &c0, sizeof c0);
            memcpy(out + (j + 1) * out_j + i * 8, &c1, sizeof c1);
        }
    return true;
}
/* 1- and 2-byte tiles have no shuffled transpose: their element loop is the only one. */
#define COPY_TILE_NO_TRANSPOSE(out, buf, out_j) false

#define COPY_TILE_FN_(BYTES, TYPE, TRANSPOSE)                                               \
    static void copy_tile_##BYTES(char *out, const char *in, int64_t ni, int64_t nj,        \
                                  int64_t out_j, int64_t in_i)                              \
    {                                                                                       \
        TYPE buf[COPY_TILE][COPY_TILE];                                                     \
        for (int64_t i = 0; i < ni; i++) {                                                  \
            if (nj == COPY_TILE) /* a constant size: vector moves, not a call */            \
                memcpy(buf[i], in + i * in_i, COPY_TILE * BYTES);                           \
            else                                                                            \
                for (int64_t j = 0; j < nj; j++)                                            \
                    memcpy(&buf[i][j], in + i * in_i + j * BYTES, BYTES);                   \
        }                                                                                   \
        if (ni == COPY_TILE && nj == COPY_TILE && TRANSPOSE(out, buf, out_j))               \
            return;                                                                         \
        for (int64_t j = 0; j < nj; j++) {                                                  \
            char *o = out + j * out_j;                                                      \
            if (ni == COPY_TILE)                                                            \
                for (int64_t i = 0; i < COPY_TILE; i++)                                     \
                    memcpy(o + i * BYTES, &buf[i][j], BYTES);                               \
            else                                                                            \
                for (int64_t i = 0; i < ni; i++)                                            \
                    memcpy(o + i * BYTES, &buf[i][j], BYTES);                               \
        }                                                                                   \
    }
COPY_TILE_FN_(1, uint8_t, COPY_TILE_NO_TRANSPOSE)
COPY_TILE_FN_(2, uint16_t, COPY_TILE_NO_TRANSPOSE)
COPY_TILE_FN_(4, uint32_t, copy_tile_transpose_4)
COPY_TILE_FN_(8, uint64_t, copy_tile_transpose_8)
typedef void (*copy_tile_fn)(char *, const char *, int64_t, int64_t, int64_t, int64_t);

/* A copy whose output is contiguous along dim `last` (after coalescing) and whose input is
 * contiguous along another dim `jd`, in tiles of COPY_TILE x COPY_TILE over the two, with
 * the other dims outside; OpenMP across tiles above the grain size. */
static void geometry_copy_tiles(const elementwise_geometry *g, int jd, int64_t itemsize)
{
    const int last = g->ndim - 1;
    int outer_dims[PITH_MAX_DIMS], nouter = 0;
    int64_t outer = 1;
    for (int d = 0; d < last; d++)
        if (d != jd) {
            outer_dims[nouter++] = d;
            outer *= g->sizes[d];
        }
    const int64_t si = g->sizes[last], sj = g->sizes[jd];
    const int64_t ti = (si + COPY_TILE - 1) / COPY_TILE, tj = (sj + COPY_TILE - 1) / COPY_TILE;
    const int64_t tiles = outer * ti * tj;
    copy_tile_fn tile = itemsize == 1 ? copy_tile_1
                        : itemsize == 2 ? copy_tile_2
                        : itemsize == 4 ? copy_tile_4
                                        : copy_tile_8;
    int nthreads = parallel_threads_for(outer * si * sj);
    PITH_PARALLEL_FOR(t, tiles, nthreads, {
        int64_t rest = t / (ti * tj), within = t % (ti * tj);
        int64_t bj = within / ti, bi = within % ti;
        int64_t off_out = 0, off_in = 0;
        for (int k = nouter - 1; k >= 0; k--) {
            int d = outer_dims[k];
            int64_t idx = rest % g->sizes[d];
            rest /= g->sizes[d];
            off_out += idx * g->strides[0][d];
            off_in += idx * g->strides[1][d];
        }
        int64_t i0 = bi * COPY_TILE, j0 = bj * COPY_TILE;
        off_out += i0 * g->strides[0][last] + j0 * g->strides[0][jd];
        off_in += i0 * g->strides[1][last] + j0 * g->strides[1][jd];
        tile(g->data[0] + off_out, g->data[1] + off_in,
             si - i0 < COPY_TILE ? si - i0 : COPY_TILE, sj - j0 < COPY_TILE ? sj - j0 : COPY_TILE,
             g->strides[0][jd], g->strides[1][last]);
    });
}

/* Note [Copies by rows and by tiles]
 * A copy without conversion (copying bytes is also what the cast loop of a dtype to itself
 * does: copy_4 and the like move bits, and no NaN is quieted) takes one of three paths
 * after coalescing:
 * - Both operands contiguous along the inner dim, but the dim short (the heads of a
 *   (B, H, T, D) attention tensor transposed to (B, T, H, D) are rows of D elements, 32 or
 *   64): one loop call per row would cost more than the row. It runs as a geometry of
 *   rows instead, each element of which is a memcpy of a row, so that one call copies a
 *   whole second dim of rows.
 * - The output contiguous along the inner dim and the input along another (a transpose, a
 *   permute from NCHW to NHWC): the inner loop would read the input one cache line per
 *   element, and make a call per output row however short (3 channels). It runs in square
 *   tiles over those two dims (geometry_copy_tiles), each of which reads whole lines of the
 *   input and writes whole lines of the output.
 * - Anything else runs the copy loop over the geometry.
 * The grain rule counts elements in every path. Tiles and rows are disjoint pieces of the
 * output, so threads never write one element twice; an expanded (self-overlapping) output
 * never comes here, since copy_ refuses it first. */
static void geometry_copy(elementwise_geometry *g, int64_t itemsize, elementwise_loop copy_loop)
{
    geometry_coalesce(g);
    const int last = g->ndim - 1;
    if (last >= 1 && g->strides[0][last] == itemsize && g->strides[1][last] == itemsize &&
        g->sizes[last] * itemsize <= 4096) {
        int64_t bytes = g->sizes[last] * itemsize, row = g->sizes[last];
        g->ndim = last; /* the rows are now the elements */
        geometry_run_on(g, copy_blocks, &bytes, false, row);
        return;
    }
    if (last >= 1 && g->strides[0][last] == itemsize && g->strides[1][last] != itemsize) {
        for (int d = last - 1; d >= 0; d--)
            if (g->strides[1][d] == itemsize) {
                geometry_copy_tiles(g, d, itemsize);
                return;
            }
    }
    geometry_run(g, copy_loop, NULL);
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
    if (dst->dtype == src->dtype)
        geometry_copy(&g, (int64_t)dtype_itemsize(dst->dtype), cast_loop(dst->dtype, src->dtype));
    else
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
