/* combine.c — ops that assemble a new tensor from others: cat and stack (and their out=
 * forms), masked_fill (and its in-place form), tril and triu.
 *
 * cat copies each input into a narrowed view of its output through copy_ (which converts
 * dtypes), so this file has no casting loops of its own. Checks and messages follow
 * PyTorch; every check runs before data is touched. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/elementwise_loops.h"
#include "kernels/factories.h"
#include "kernels/indexing.h"
#include "kernels/views.h"

/* ---- cat ---- */

/* PyTorch keeps accepting 1-D empty tensors of any other shape in cat (legacy). */
static bool cat_should_skip(const pith_tensor *t)
{
    return t->ndim == 1 && t->numel == 0;
}

typedef struct {
    int dim;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    pith_dtype dtype;
    pith_device device;
    bool any_valid; /* some input is not skipped */
} cat_plan;

static pith_status cat_plan_make(pith_tensor_list tensors, int64_t dim, cat_plan *p)
{
    if (tensors.n == 0)
        return pith_set_error(PITH_ERR_VALUE, "torch.cat(): expected a non-empty list of Tensors");
    for (size_t i = 0; i < tensors.n; i++)
        if (tensors.data[i]->ndim == 0)
            return pith_set_error(PITH_ERR_VALUE,
                                  "cat: zero-dimensional tensor (at position %zu) cannot be "
                                  "concatenated",
                                  i);
    const pith_tensor *valid = NULL;
    for (size_t i = 0; i < tensors.n && !valid; i++)
        if (!cat_should_skip(tensors.data[i]))
            valid = tensors.data[i];
    p->dim = 0;
    if (valid) { /* PyTorch's legacy_cat_wrap_dim wraps against the first non-skipped input */
        p->dim = dim_wrap(dim, valid->ndim);
        if (p->dim < 0)
            return pith_last_status();
    }
    p->dtype = tensors.data[0]->dtype;
    p->device = tensors.data[0]->device;
    for (size_t i = 0; i < tensors.n; i++) {
        const pith_tensor *t = tensors.data[i];
        p->dtype = pith_promote_types(p->dtype, t->dtype);
        if (devices_check("cat", tensors.data[0], t) != PITH_OK)
            return pith_last_status();
    }
    p->any_valid = valid != NULL;
    if (!valid) { /* only skipped inputs: the result is 1-D and empty */
        p->ndim = 1;
        p->sizes[0] = 0;
        return PITH_OK;
    }
    p->ndim = valid->ndim;
    memcpy(p->sizes, valid->sizes, sizeof(int64_t) * (size_t)valid->ndim);
    int64_t total = 0;
    for (size_t i = 0; i < tensors.n; i++) {
        const pith_tensor *t = tensors.data[i];
        if (cat_should_skip(t))
            continue;
        if (t->ndim != valid->ndim)
            return pith_set_error(PITH_ERR_VALUE,
                                  "cat: Tensors must have same number of dimensions: got %d and %d",
                                  valid->ndim, t->ndim);
        for (int d = 0; d < t->ndim; d++)
            if (d != p->dim && t->sizes[d] != valid->sizes[d])
                return pith_set_error(PITH_ERR_VALUE,
                                      "cat: Sizes of tensors must match except in dimension %d. "
                                      "Expected size %lld but got size %lld for tensor number "
                                      "%zu in the list.",
                                      p->dim, (long long)valid->sizes[d], (long long)t->sizes[d], i);
        if (__builtin_add_overflow(total, t->sizes[p->dim], &total))
            return pith_set_error(PITH_ERR_VALUE, "cat: the result's size overflows int64");
    }
    p->sizes[p->dim] = total;
    return PITH_OK;
}

/* cat_fill's short path: when `out` and every input are contiguous in one dtype, the
 * result is, for each index of the dims before `dim`, each input's block of
 * sizes[dim] * inner elements in turn, so plain memcpy does it. Small results only: a large
 * one goes through copy_, which splits the work between threads. */
static bool cat_fill_blocks(pith_tensor *out, pith_tensor_list tensors, const cat_plan *p)
{
    if (!out->contiguous || out->numel >= PITH_GRAIN_SIZE)
        return false;
    for (size_t i = 0; i < tensors.n; i++) {
        const pith_tensor *t = tensors.data[i];
        if (!cat_should_skip(t) && (!t->contiguous || t->dtype != out->dtype ||
                                    t->device != PITH_CPU))
            return false;
    }
    size_t itemsize = pith_dtype_size(out->dtype);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < p->dim; d++)
        outer *= out->sizes[d];
    for (int d = p->dim + 1; d < out->ndim; d++)
        inner *= out->sizes[d];
    char *dst = pith_data_ptr(out);
    for (int64_t o = 0; o < outer; o++)
        for (size_t i = 0; i < tensors.n; i++) {
            const pith_tensor *t = tensors.data[i];
            if (cat_should_skip(t))
                continue;
            size_t block = (size_t)(t->sizes[p->dim] * inner) * itemsize;
            if (block)
                memcpy(dst, (const char *)pith_data_ptr(t) + (size_t)o * block, block);
            dst += block;
        }
    return true;
}

/* Copies every input into its slice of `out` along the plan's dim; `out` has the plan's
 * shape and shares no memory with an input. */
static pith_status cat_fill(pith_tensor *out, pith_tensor_list tensors, const cat_plan *p)
{
    if (cat_fill_blocks(out, tensors, p))
        return PITH_OK;
    int64_t at = 0;
    for (size_t i = 0; i < tensors.n && out->numel > 0; i++) {
        const pith_tensor *t = tensors.data[i];
        if (cat_should_skip(t) || t->sizes[p->dim] == 0)
            continue;
        view_geometry g;
        geometry_of(out, &g);
        g.offset += at * g.strides[p->dim];
        g.sizes[p->dim] = t->sizes[p->dim];
        at += t->sizes[p->dim];
        pith_tensor *part = tensor_view(out, g.ndim, g.sizes, g.strides, g.offset);
        pith_value copied[1];
        pith_status status = part ? pith_call_copy_(copied, part, t, false) : pith_last_status();
        pith_release(part);
        if (status != PITH_OK)
            return status;
        value_clear(&copied[0]);
    }
    return PITH_OK;
}

pith_status cat_cpu(pith_keyset ks, pith_value *ret, pith_tensor_list tensors, int64_t dim)
{
    cat_plan p;
    if (cat_plan_make(tensors, dim, &p) != PITH_OK)
        return pith_last_status();
    pith_tensor *out = tensor_new(p.ndim, p.sizes, p.dtype, p.device);
    if (!out)
        return pith_last_status();
    if (cat_fill(out, tensors, &p) != PITH_OK) {
        pith_release(out);
        return pith_last_status();
    }
    return ret_tensor(ret, out);
}

pith_status cat_meta(pith_keyset ks, pith_value *ret, pith_tensor_list tensors, int64_t dim)
{
    cat_plan p;
    if (cat_plan_make(tensors, dim, &p) != PITH_OK)
        return pith_last_status();
    return ret_tensor(ret, tensor_new(p.ndim, p.sizes, p.dtype, PITH_META));
}

/* ---- cat.out ---- */

/* Note [cat into out=]
 * cat.out writes into any `out` the promoted dtype can be cast to (as the elementwise out=
 * ops, through elementwise_output), of the result's shape or empty (then resized), never
 * expanded. An input that shares memory with `out` is PyTorch's error "some elements of
 * the input tensor and the written-to tensor refer to a single memory location" when the
 * sharing is certain: `out` is itself an input (checked first, so that an empty `out` in
 * the list is not resized under it), or both are dense (tensor_is_dense) with
 * intersecting extents. Otherwise the overlap is only possible (strided views whose
 * extents interleave, such as two columns of one matrix) and the input is copied before
 * anything is written, so the result is right. PyTorch's CPU kernel copies such an input
 * in place and can read values it has already overwritten. The checks see only geometry
 * and storage, so the meta kernel runs them too and agrees with the CPU one. */
static pith_status cat_check_out_overlap(pith_tensor_list tensors, const pith_tensor *out,
                                         size_t *noverlap)
{
    *noverlap = 0;
    for (size_t i = 0; i < tensors.n; i++) {
        const pith_tensor *t = tensors.data[i];
        bool overlap = tensors_may_overlap(t, out);
        if (t == out || (overlap && tensor_is_dense(t) && tensor_is_dense(out)))
            return pith_set_error(PITH_ERR_VALUE,
                                  "cat: unsupported operation: some elements of the input "
                                  "tensor and the written-to tensor refer to a single memory "
                                  "location. Please clone() the tensor before performing the "
                                  "operation.");
        *noverlap += overlap;
    }
    return PITH_OK;
}

/* cat_fill for inputs of which some may overlap `out`: those are copied first. */
static pith_status cat_fill_copying_overlaps(pith_tensor *out, pith_tensor_list tensors,
                                             const cat_plan *p)
{
    pith_tensor **parts = calloc(tensors.n, sizeof *parts);
    if (!parts)
        return pith_set_error(PITH_ERR_NOMEM, "cat: cannot allocate %zu tensors", tensors.n);
    pith_status status = PITH_OK;
    size_t made = 0;
    for (; made < tensors.n && status == PITH_OK; made++) {
        const pith_tensor *t = tensors.data[made];
        if (tensors_may_overlap(t, out)) {
            parts[made] = tensor_converted(t, t->dtype);
            status = parts[made] ? PITH_OK : pith_last_status();
        } else {
            pith_retain((pith_tensor *)t);
            parts[made] = (pith_tensor *)t;
        }
    }
    if (status == PITH_OK)
        status = cat_fill(out, (pith_tensor_list){(const pith_tensor *const *)parts, tensors.n},
                          p);
    tensor_list_release(parts, made);
    return status;
}

static pith_status cat_out_run(pith_value *ret, pith_tensor_list tensors, int64_t dim,
                               const pith_tensor *target, bool meta)
{
    cat_plan p;
    size_t noverlap;
    pith_tensor *out;
    if (cat_plan_make(tensors, dim, &p) != PITH_OK ||
        devices_check("cat", tensors.data[0], target) != PITH_OK ||
        cat_check_out_overlap(tensors, target, &noverlap) != PITH_OK ||
        elementwise_output("cat", ELEMENTWISE_OUT, (pith_tensor *)target, p.ndim, p.sizes,
                           p.dtype, p.device, &out) != PITH_OK)
        return pith_last_status();
    if (!meta && (noverlap ? cat_fill_copying_overlaps(out, tensors, &p)
                           : cat_fill(out, tensors, &p)) != PITH_OK)
        return pith_last_status();
    tensor_bump_version(out);
    return ret_self(ret, out);
}

pith_status cat_out_kernel(pith_keyset ks, pith_value *ret, pith_tensor_list tensors,
                           int64_t dim, const pith_tensor *out, pith_device device)
{
    return cat_out_run(ret, tensors, dim, out, device == PITH_META);
}

/* ---- stack: unsqueeze every input at `dim`, then cat (or cat.out into `out`) ---- */

static pith_status stack_run(pith_value *ret, pith_tensor_list tensors, int64_t dim,
                             const pith_tensor *out)
{
    char a[512], b[512];
    if (tensors.n == 0)
        return pith_set_error(PITH_ERR_VALUE, "stack expects a non-empty TensorList");
    const pith_tensor *first = tensors.data[0];
    int d = dim_wrap(dim, first->ndim + 1);
    if (d < 0)
        return pith_last_status();
    for (size_t i = 1; i < tensors.n; i++) {
        const pith_tensor *t = tensors.data[i];
        if (!shape_equal(first->ndim, first->sizes, t->ndim, t->sizes))
            return pith_set_error(PITH_ERR_VALUE,
                                  "stack expects each tensor to be equal size, but got %s at "
                                  "entry 0 and %s at entry %zu",
                                  shape_format(first->ndim, first->sizes, a, sizeof a),
                                  shape_format(t->ndim, t->sizes, b, sizeof b), i);
    }
    pith_tensor **parts = calloc(tensors.n, sizeof *parts);
    if (!parts)
        return pith_set_error(PITH_ERR_NOMEM, "stack: cannot allocate %zu tensors", tensors.n);
    pith_status status = PITH_OK;
    size_t made = 0;
    for (; made < tensors.n && status == PITH_OK; made++) {
        pith_value one[1];
        status = pith_call_unsqueeze(one, tensors.data[made], d);
        parts[made] = status == PITH_OK ? one[0].u.t : NULL;
    }
    pith_tensor_list list = {(const pith_tensor *const *)parts, tensors.n};
    if (status == PITH_OK)
        status = out ? pith_call_cat_out(ret, list, d, out) : pith_call_cat(ret, list, d);
    tensor_list_release(parts, made);
    return status;
}

pith_status stack_composite(pith_keyset ks, pith_value *ret, pith_tensor_list tensors,
                            int64_t dim)
{
    return stack_run(ret, tensors, dim, NULL);
}

pith_status stack_out_composite(pith_keyset ks, pith_value *ret, pith_tensor_list tensors,
                                int64_t dim, const pith_tensor *out)
{
    return stack_run(ret, tensors, dim, out);
}

/* ---- masked_fill ---- */

static pith_status masked_fill_check(const char *op, const pith_tensor *self,
                                     const pith_tensor *mask, pith_scalar value,
                                     unsigned char *elem)
{
    if (mask->dtype != PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE,
                              "%s: masked_fill_ only supports boolean masks, but got mask with "
                              "dtype %s",
                              op, pith_dtype_name(mask->dtype));
    if (devices_check(op, self, mask) != PITH_OK)
        return pith_last_status();
    return scalar_encode(op, value, self->dtype, elem);
}

/* out[i] = mask[i] ? value : src[i], as an elementwise loop (args: out, mask, src; ctx:
 * the value's bytes), one per element size since it only moves bytes. The contiguous case
 * is a select that the compiler vectorises; `out` may be `src` itself (an exact alias,
 * Note [Aliasing in inner loops] in elementwise.c). */
#define MASKED_FILL_LOOP(bytes, type)                                                       \
    static int masked_fill_##bytes(char **args, const int64_t *n, const int64_t *s,        \
                                   void *ctx)                                              \
    {                                                                                       \
        type v;                                                                             \
        memcpy(&v, ctx, sizeof v);                                                          \
        const int64_t len = n[0];                                                           \
        if (s[0] == bytes && s[1] == 1 && s[2] == bytes) {                                  \
            type *o = (type *)args[0];                                                      \
            const uint8_t *m = (const uint8_t *)args[1];                                    \
            const type *a = (const type *)args[2];                                          \
            EW_IVDEP for (int64_t i = 0; i < len; i++) o[i] = m[i] ? v : a[i];              \
        } else {                                                                            \
            for (int64_t i = 0; i < len; i++)                                               \
                *(type *)(args[0] + i * s[0]) = *(const uint8_t *)(args[1] + i * s[1])      \
                                                    ? v                                     \
                                                    : *(const type *)(args[2] + i * s[2]);  \
        }                                                                                   \
        return 0;                                                                           \
    }
MASKED_FILL_LOOP(1, uint8_t)
MASKED_FILL_LOOP(2, uint16_t)
MASKED_FILL_LOOP(4, uint32_t)
MASKED_FILL_LOOP(8, uint64_t)

static elementwise_loop masked_fill_loop_for(size_t itemsize)
{
    switch (itemsize) {
    case 1:
        return masked_fill_1;
    case 2:
        return masked_fill_2;
    case 4:
        return masked_fill_4;
    default:
        return masked_fill_8;
    }
}

/* Runs the loop over `out`'s shape, with mask and src broadcast to it (validated by the
 * caller). A bool is one byte holding 0 or 1, so the mask is read as uint8. With `serial`
 * (an in-place self that is expanded, so that two elements share a location) it runs on
 * one thread, in order, so that no two threads write one location. */
static void masked_fill_run(const pith_tensor *out, const pith_tensor *mask, const pith_tensor *src,
                            unsigned char *elem, bool serial)
{
    elementwise_geometry g;
    geometry_init(&g, out->ndim, out->sizes);
    geometry_add_operand(&g, out);
    geometry_add_operand(&g, mask);
    geometry_add_operand(&g, src);
    elementwise_loop loop = masked_fill_loop_for(pith_dtype_size(out->dtype));
    if (serial)
        geometry_run_serial(&g, loop, elem);
    else
        (void)geometry_run(&g, loop, elem);
}

/* The broadcast shape of self and mask (masked_fill is not in place, so both expand). */
static pith_status masked_fill_shape(const pith_tensor *self, const pith_tensor *mask,
                                     int *ndim, int64_t *sizes)
{
    if (shape_broadcast(self->ndim, self->sizes, mask->ndim, mask->sizes, ndim, sizes) != PITH_OK)
        return error_prefix("masked_fill");
    return PITH_OK;
}

pith_status masked_fill_cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            const pith_tensor *mask, pith_scalar value)
{
    unsigned char elem[8];
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    if (masked_fill_check("masked_fill", self, mask, value, elem) != PITH_OK ||
        masked_fill_shape(self, mask, &ndim, sizes) != PITH_OK)
        return pith_last_status();
    pith_tensor *out = tensor_new(ndim, sizes, self->dtype, self->device);
    if (!out)
        return pith_last_status();
    if (out->numel > 0)
        masked_fill_run(out, mask, self, elem, false);
    return ret_tensor(ret, out);
}

pith_status masked_fill_meta(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             const pith_tensor *mask, pith_scalar value)
{
    unsigned char elem[8];
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    if (masked_fill_check("masked_fill", self, mask, value, elem) != PITH_OK ||
        masked_fill_shape(self, mask, &ndim, sizes) != PITH_OK)
        return pith_last_status();
    return ret_tensor(ret, tensor_new(ndim, sizes, self->dtype, PITH_META));
}

/* Whether two elements of `t` share memory (a dim of size > 1 with stride 0). */
static bool tensor_has_internal_overlap(const pith_tensor *t)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] > 1 && t->strides[d] == 0)
            return true;
    return false;
}

pith_status masked_fill__cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             const pith_tensor *mask, pith_scalar value)
{
    unsigned char elem[8];
    view_geometry mg;
    if (masked_fill_check("masked_fill_", self, mask, value, elem) != PITH_OK ||
        geometry_expand("masked_fill_", mask, self->ndim, self->sizes, &mg) != PITH_OK)
        return pith_last_status();
    /* PyTorch only warns about writing into an expanded self; do it serially so that no
     * two threads write one location. */
    if (self->numel > 0)
        masked_fill_run(self, mask, self, elem, tensor_has_internal_overlap(self));
    tensor_bump_version(self);
    return ret_self(ret, self);
}

pith_status masked_fill__meta(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              const pith_tensor *mask, pith_scalar value)
{
    unsigned char elem[8];
    view_geometry mg;
    if (masked_fill_check("masked_fill_", self, mask, value, elem) != PITH_OK ||
        geometry_expand("masked_fill_", mask, self->ndim, self->sizes, &mg) != PITH_OK)
        return pith_last_status();
    return ret_self(ret, self);
}

/* ---- tril, triu ---- */

static pith_status triangle_check(const char *op, const pith_tensor *self)
{
    if (self->ndim < 2)
        return pith_set_error(PITH_ERR_VALUE, "%s: input tensor must have at least 2 dimensions",
                              op);
    return PITH_OK;
}

/* Keeps the elements of every matrix (the last two dims) with j - i <= k (lower) or
 * j - i >= k (upper), and zeroes the rest: into a new tensor, or in self (tril_, triu_,
 * which write only the zeros). j - i cannot overflow, unlike i + k. */
static pith_status triangle(pith_value *ret, const char *op, const pith_tensor *self,
                            int64_t k, bool lower, bool in_place)
{
    if (triangle_check(op, self) != PITH_OK)
        return pith_last_status();
    pith_tensor *out = NULL;
    if (!in_place) {
        out = tensor_new(self->ndim, self->sizes, self->dtype, self->device);
        if (!out || out->numel == 0)
            return ret_tensor(ret, out);
    } else if (elementwise_check_no_overlap(op, self) != PITH_OK) {
        return pith_last_status();
    } else if (self->device == PITH_META || self->numel == 0) {
        tensor_bump_version(self);
        return ret_self(ret, self);
    }
    int nd = self->ndim;
    int64_t rows = self->sizes[nd - 2], cols = self->sizes[nd - 1];
    int64_t row_stride = self->strides[nd - 2], col_stride = self->strides[nd - 1];
    int64_t lines = self->numel / cols;
    size_t itemsize = pith_dtype_size(self->dtype);
    const char *src = tensor_data(self);
    char *dst = in_place ? (char *)src : tensor_data(out);
    static const unsigned char zero[8];
    int threads = parallel_threads_for(self->numel);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(lines, &begin, &end);
        for (int64_t line = begin; line < end; line++) {
            int64_t i = line % rows, batch = line / rows, base = i * row_stride;
            for (int d = nd - 3; d >= 0; d--) {
                base += (batch % self->sizes[d]) * self->strides[d];
                batch /= self->sizes[d];
            }
            if (in_place) {
                for (int64_t j = 0; j < cols; j++)
                    if (!(lower ? j - i <= k : j - i >= k))
                        element_copy(dst + (base + j * col_stride) * (int64_t)itemsize,
                                     (const char *)zero, itemsize);
                continue;
            }
            char *to = dst + (size_t)(line * cols) * itemsize;
            for (int64_t j = 0; j < cols; j++) {
                bool keep = lower ? j - i <= k : j - i >= k;
                element_copy(to + (size_t)j * itemsize,
                             keep ? src + (base + j * col_stride) * (int64_t)itemsize
                                  : (const char *)zero,
                             itemsize);
            }
        }
    });
    if (in_place) {
        tensor_bump_version(self);
        return ret_self(ret, self);
    }
    return ret_tensor(ret, out);
}

/* tril and triu: a copy with the other triangle zeroed (on Meta only checked and shaped). */
static pith_status triangle_new(pith_value *ret, const char *op, const pith_tensor *self,
                                int64_t k, bool lower, pith_device device)
{
    if (device != PITH_META)
        return triangle(ret, op, self, k, lower, false);
    if (triangle_check(op, self) != PITH_OK)
        return pith_last_status();
    return ret_tensor(ret, tensor_new(self->ndim, self->sizes, self->dtype, PITH_META));
}

/* The kernels for both devices (device_kernel in ops/ops.toml); tril_ and triu_ are the same
 * on both (triangle returns self at once for a meta tensor). */
pith_status tril_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        int64_t diagonal, pith_device device)
{
    return triangle_new(ret, "tril", self, diagonal, true, device);
}

pith_status triu_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        int64_t diagonal, pith_device device)
{
    return triangle_new(ret, "triu", self, diagonal, false, device);
}

pith_status tril__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         int64_t diagonal, pith_device device)
{
    return triangle(ret, "tril_", self, diagonal, true, true);
}

pith_status triu__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         int64_t diagonal, pith_device device)
{
    return triangle(ret, "triu_", self, diagonal, false, true);
}
