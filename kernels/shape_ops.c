/* shape_ops.c — ops that rearrange or replicate a tensor's elements into a new tensor:
 * roll, flip, repeat and repeat_interleave by an int (CPU and Meta kernels over one block
 * copier), repeat_interleave by counts (the Tensor kernel and PyTorch's self_Tensor
 * composite over it), outer and ger (a composite over mul), and meshgrid (expanded views).
 * einsum lives in einsum.c.
 *
 * Checks and messages follow PyTorch 2.13; every check runs before data is touched and
 * before any parallel region. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/indexing.h"
#include "kernels/reduce.h"
#include "kernels/views.h"

/* ---- the block copier ---- */

/* Note [Block copies]
 * roll, flip, repeat and repeat_interleave (by an int) write each element of a new tensor from
 * one element of the input through a strided map: a block of up to BLOCK_MAX_DIMS dims with,
 * per dim, a size, a destination stride and a source stride (in elements). Source strides
 * may be negative (flip walks a dim backwards) or zero (repeat reads one element many times),
 * which no tensor view can express, and repeat needs twice a tensor's dims (each dim split
 * into its repeat count and its size), so the map is not a pair of tensors handed to copy_.
 * The copy is a plain byte copy (the dtype is kept), split by rows between threads. */
#define BLOCK_MAX_DIMS (2 * PITH_MAX_DIMS)

typedef struct {
    int ndim;
    int64_t sizes[BLOCK_MAX_DIMS];
    int64_t dst[BLOCK_MAX_DIMS];
    int64_t src[BLOCK_MAX_DIMS];
} block_map;

static void block_add_dim(block_map *m, int64_t size, int64_t dst, int64_t src)
{
    m->sizes[m->ndim] = size;
    m->dst[m->ndim] = dst;
    m->src[m->ndim] = src;
    m->ndim++;
}

/* Products below only feed comparisons, so they wrap instead of overflowing. */
static int64_t mul_wrap(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* Orders the dims by destination stride, largest first, so that the writes walk the new
 * tensor in memory order (any order is correct: every destination element is written
 * once); then drops dims of size one and merges each dim into the one before it where both
 * strides continue it, so that the innermost dim is as long as it can be. */
static void block_coalesce(block_map *m)
{
    for (int d = 1; d < m->ndim; d++) { /* insertion sort, stable */
        int64_t size = m->sizes[d], dst = m->dst[d], src = m->src[d];
        int k = d;
        for (; k > 0 && m->dst[k - 1] < dst; k--) {
            m->sizes[k] = m->sizes[k - 1];
            m->dst[k] = m->dst[k - 1];
            m->src[k] = m->src[k - 1];
        }
        m->sizes[k] = size;
        m->dst[k] = dst;
        m->src[k] = src;
    }
    int n = 0;
    for (int d = 0; d < m->ndim; d++) {
        if (m->sizes[d] == 1)
            continue;
        if (n > 0 && m->dst[n - 1] == mul_wrap(m->dst[d], m->sizes[d]) &&
            m->src[n - 1] == mul_wrap(m->src[d], m->sizes[d])) {
            m->sizes[n - 1] *= m->sizes[d];
            m->dst[n - 1] = m->dst[d];
            m->src[n - 1] = m->src[d];
            continue;
        }
        m->sizes[n] = m->sizes[d];
        m->dst[n] = m->dst[d];
        m->src[n] = m->src[d];
        n++;
    }
    m->ndim = n;
}

static int64_t block_numel(const block_map *m)
{
    int64_t n = 1;
    for (int d = 0; d < m->ndim; d++)
        n *= m->sizes[d];
    return n;
}

/* Copies one row of `n` elements. */
static void row_copy(char *to, int64_t dst_step, const char *from, int64_t src_step, int64_t n,
                     size_t itemsize)
{
    if (dst_step == 1 && src_step == 1) {
        memcpy(to, from, (size_t)n * itemsize);
        return;
    }
    int64_t ds = dst_step * (int64_t)itemsize, ss = src_step * (int64_t)itemsize;
    for (int64_t k = 0; k < n; k++)
        element_copy(to + k * ds, from + k * ss, itemsize);
}

/* Runs the map from `src` (its element 0) into `dst`. The map's sizes are those of an
 * existing output, so every offset fits in int64 (See Note [Geometry fits in int64]). */
static void block_copy(block_map m, char *dst, const char *src, size_t itemsize)
{
    block_coalesce(&m);
    int64_t numel = block_numel(&m);
    if (numel == 0)
        return;
    int nd = m.ndim;
    int64_t inner = nd > 0 ? m.sizes[nd - 1] : 1;
    int64_t dst_step = nd > 0 ? m.dst[nd - 1] : 1, src_step = nd > 0 ? m.src[nd - 1] : 1;
    int64_t rows = numel / inner;
    int threads = parallel_threads_for(numel);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(rows, &begin, &end);
        int64_t index[BLOCK_MAX_DIMS], doff = 0, soff = 0, r = begin;
        for (int d = nd - 2; d >= 0; d--) {
            index[d] = r % m.sizes[d];
            r /= m.sizes[d];
            doff += index[d] * m.dst[d];
            soff += index[d] * m.src[d];
        }
        for (int64_t row = begin; row < end; row++) {
            row_copy(dst + doff * (int64_t)itemsize, dst_step, src + soff * (int64_t)itemsize,
                     src_step, inner, itemsize);
            for (int d = nd - 2; d >= 0; d--) {
                doff += m.dst[d];
                soff += m.src[d];
                if (++index[d] < m.sizes[d])
                    break;
                doff -= m.dst[d] * m.sizes[d];
                soff -= m.src[d] * m.sizes[d];
                index[d] = 0;
            }
        }
    });
}

/* A new tensor of self's shape laid out as PyTorch's empty_like(self, preserve_format):
 * self's own strides when self is dense (a permutation of a contiguous tensor), else
 * contiguous. flip's result, and roll's for an empty self. */
static pith_tensor *tensor_new_preserving(const pith_tensor *self, pith_device device)
{
    if (tensor_is_dense(self))
        return tensor_new_strided(self->ndim, self->sizes, self->strides, self->dtype, device);
    return tensor_new(self->ndim, self->sizes, self->dtype, device);
}

/* PyTorch's size(dim) of a tensor: no dims is its own error, unlike dim_wrap's. */
static pith_status size_at(const pith_tensor *t, int64_t dim, int64_t *out)
{
    if (t->ndim == 0)
        return pith_set_error(PITH_ERR_INDEX,
                              "Dimension specified as %lld but tensor has no dimensions",
                              (long long)dim);
    int d = dim_wrap(dim, t->ndim);
    if (d < 0)
        return pith_last_status();
    *out = t->sizes[d];
    return PITH_OK;
}

/* ---- roll ---- */

/* What roll does, once validated: `flat` rolls the row-major sequence of elements by
 * shift[0]; otherwise dim d rolls by shift[d] (in [0, size), 0 for the others). An empty
 * self is copied as it is, before its dims are looked at (as PyTorch's roll_cpu). */
typedef struct {
    bool flat, empty;
    int64_t shift[PITH_MAX_DIMS];
} roll_plan;

static int64_t shift_normalise(int64_t shift, int64_t size)
{
    int64_t s = shift % size; /* in (-size, size): adding size cannot overflow */
    return s < 0 ? s + size : s;
}

static pith_status roll_plan_make(const pith_tensor *self, pith_int_list shifts,
                                  pith_int_list dims, roll_plan *p)
{
    memset(p, 0, sizeof *p);
    if (shifts.n == 0)
        return pith_set_error(PITH_ERR_VALUE, "`shifts` required");
    p->flat = dims.n == 0 && shifts.n == 1;
    if (!p->flat && shifts.n != dims.n)
        return pith_set_error(PITH_ERR_VALUE,
                              "shifts and dimensions must align. shifts: %zu, dims:%zu",
                              shifts.n, dims.n);
    p->empty = self->numel == 0;
    if (p->empty)
        return PITH_OK;
    if (p->flat) {
        p->shift[0] = shift_normalise(shifts.data[0], self->numel);
        return PITH_OK;
    }
    for (size_t i = 0; i < dims.n; i++) {
        int64_t size;
        if (size_at(self, dims.data[i], &size) != PITH_OK)
            return pith_last_status();
        int d = dim_wrap(dims.data[i], self->ndim);
        p->shift[d] = shift_normalise(p->shift[d] + shift_normalise(shifts.data[i], size), size);
    }
    return PITH_OK;
}

/* Output element i (row-major) is input element i - shift (mod n), dim by dim: for each
 * rolled dim the output's tail [shift, n) comes from the input's head [0, n - shift) and
 * its head from the input's tail, so 2^k blocks cover a roll of k dims. */
static void roll_blocks(const pith_tensor *self, const roll_plan *p, pith_tensor *out)
{
    size_t itemsize = pith_dtype_size(self->dtype);
    int rolled[PITH_MAX_DIMS], k = 0;
    for (int d = 0; d < self->ndim; d++)
        if (p->shift[d] != 0)
            rolled[k++] = d;
    for (uint32_t parts = 0; parts < (1u << k); parts++) {
        block_map m = {0};
        int64_t dst_offset = 0, src_offset = 0;
        for (int d = 0, r = 0; d < self->ndim; d++) {
            int64_t size = self->sizes[d], s = p->shift[d];
            if (r < k && rolled[r] == d) {
                bool head = (parts >> r++) & 1;
                int64_t dst_start = head ? 0 : s, src_start = head ? size - s : 0;
                size = head ? s : size - s;
                dst_offset += dst_start * out->strides[d];
                src_offset += src_start * self->strides[d];
            }
            block_add_dim(&m, size, out->strides[d], self->strides[d]);
        }
        block_copy(m, tensor_data(out) + dst_offset * (int64_t)itemsize,
                   tensor_data(self) + src_offset * (int64_t)itemsize, itemsize);
    }
}

/* The flat roll of a contiguous self: two block copies of the element sequence. */
static void roll_flat(const pith_tensor *self, int64_t shift, pith_tensor *out)
{
    size_t itemsize = pith_dtype_size(self->dtype);
    int64_t n = self->numel;
    block_map tail = {0}, head = {0};
    block_add_dim(&tail, n - shift, 1, 1);
    block_add_dim(&head, shift, 1, 1);
    block_copy(tail, tensor_data(out) + shift * (int64_t)itemsize, tensor_data(self), itemsize);
    block_copy(head, tensor_data(out), tensor_data(self) + (n - shift) * (int64_t)itemsize,
               itemsize);
}

/* The result's layout: an empty self is cloned keeping its layout (a flat roll reshapes a
 * contiguous copy), everything else is contiguous. */
static pith_tensor *roll_output(const pith_tensor *self, const roll_plan *p, pith_device device)
{
    if (p->empty && !p->flat)
        return tensor_new_preserving(self, device);
    return tensor_new(self->ndim, self->sizes, self->dtype, device);
}

pith_status roll_cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                     pith_int_list shifts, pith_int_list dims)
{
    roll_plan p;
    if (roll_plan_make(self, shifts, dims, &p) != PITH_OK)
        return pith_last_status();
    pith_tensor *out = roll_output(self, &p, self->device);
    if (!out || p.empty)
        return ret_tensor(ret, out);
    if (!p.flat) {
        roll_blocks(self, &p, out);
        return ret_tensor(ret, out);
    }
    pith_value copy[1];
    if (pith_call_contiguous(copy, self) != PITH_OK) {
        pith_release(out);
        return pith_last_status();
    }
    roll_flat(copy[0].u.t, p.shift[0], out);
    value_clear(&copy[0]);
    return ret_tensor(ret, out);
}

pith_status roll_meta(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                      pith_int_list shifts, pith_int_list dims)
{
    roll_plan p;
    if (roll_plan_make(self, shifts, dims, &p) != PITH_OK)
        return pith_last_status();
    return ret_tensor(ret, roll_output(self, &p, PITH_META));
}

/* ---- flip ---- */

static pith_status flip_dims(const pith_tensor *self, pith_int_list dims, bool *flipped)
{
    memset(flipped, 0, sizeof(bool) * PITH_MAX_DIMS);
    for (size_t i = 0; i < dims.n; i++) {
        int d = dim_wrap(dims.data[i], self->ndim);
        if (d < 0)
            return pith_last_status();
        if (flipped[d])
            return pith_set_error(PITH_ERR_VALUE, "dim %d appears multiple times in the list of dims",
                                  d);
        flipped[d] = true;
    }
    return PITH_OK;
}

pith_status flip_cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self, pith_int_list dims)
{
    bool flipped[PITH_MAX_DIMS];
    if (flip_dims(self, dims, flipped) != PITH_OK)
        return pith_last_status();
    pith_tensor *out = tensor_new_preserving(self, self->device);
    if (!out || out->numel == 0)
        return ret_tensor(ret, out);
    block_map m = {0};
    int64_t start = 0; /* the input element that lands on output element 0 */
    for (int d = 0; d < self->ndim; d++) {
        int64_t stride = self->strides[d];
        if (flipped[d]) {
            start += (self->sizes[d] - 1) * stride;
            stride = -stride;
        }
        block_add_dim(&m, self->sizes[d], out->strides[d], stride);
    }
    size_t itemsize = pith_dtype_size(self->dtype);
    block_copy(m, tensor_data(out), tensor_data(self) + start * (int64_t)itemsize, itemsize);
    return ret_tensor(ret, out);
}

pith_status flip_meta(pith_keyset ks, pith_value *ret, const pith_tensor *self, pith_int_list dims)
{
    bool flipped[PITH_MAX_DIMS];
    if (flip_dims(self, dims, flipped) != PITH_OK)
        return pith_last_status();
    return ret_tensor(ret, tensor_new_preserving(self, PITH_META));
}

/* ---- repeat ---- */

/* The result's shape: self's sizes (padded with leading ones to the count of repeats)
 * times the repeats. */
static pith_status repeat_shape(const pith_tensor *self, pith_int_list repeats, int64_t *padded,
                                int64_t *sizes)
{
    char buf[512];
    if (repeats.n < (size_t)self->ndim)
        return pith_set_error(PITH_ERR_VALUE, "Number of dimensions of repeat dims can not be "
                                              "smaller than number of dimensions of tensor");
    if (repeats.n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                              "repeat: the result would have %zu dims; a pith tensor has at "
                              "most %d",
                              repeats.n, PITH_MAX_DIMS);
    int n = (int)repeats.n, lead = n - self->ndim;
    for (int i = 0; i < n; i++) {
        padded[i] = i < lead ? 1 : self->sizes[i - lead];
        if (__builtin_mul_overflow(padded[i], repeats.data[i], &sizes[i]))
            return pith_set_error(PITH_ERR_VALUE,
                                  "repeat: the size of dim %d (%lld * %lld) overflows int64", i,
                                  (long long)padded[i], (long long)repeats.data[i]);
    }
    for (int i = 0; i < n; i++)
        if (sizes[i] < 0)
            return pith_set_error(PITH_ERR_VALUE,
                                  "Trying to create tensor with negative dimension %lld: %s",
                                  (long long)sizes[i], shape_format(n, sizes, buf, sizeof buf));
    return PITH_OK;
}

pith_status repeat_cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_int_list repeats)
{
    int64_t padded[PITH_MAX_DIMS], sizes[PITH_MAX_DIMS];
    if (repeat_shape(self, repeats, padded, sizes) != PITH_OK)
        return pith_last_status();
    int n = (int)repeats.n, lead = n - self->ndim;
    pith_tensor *out = tensor_new(n, sizes, self->dtype, self->device);
    if (!out || out->numel == 0)
        return ret_tensor(ret, out);
    /* Output dim i seen as (repeats[i], padded[i]): the repeat index reads nothing new. */
    block_map m = {0};
    for (int i = 0; i < n; i++) {
        block_add_dim(&m, repeats.data[i], padded[i] * out->strides[i], 0);
        block_add_dim(&m, padded[i], out->strides[i], i < lead ? 0 : self->strides[i - lead]);
    }
    block_copy(m, tensor_data(out), tensor_data(self), pith_dtype_size(self->dtype));
    return ret_tensor(ret, out);
}

pith_status repeat_meta(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        pith_int_list repeats)
{
    int64_t padded[PITH_MAX_DIMS], sizes[PITH_MAX_DIMS];
    if (repeat_shape(self, repeats, padded, sizes) != PITH_OK)
        return pith_last_status();
    return ret_tensor(ret, tensor_new((int)repeats.n, sizes, self->dtype, PITH_META));
}

/* ---- repeat_interleave ---- */

/* repeat_interleave.Tensor: [0] * repeats[0] + [1] * repeats[1] + ..., in repeats' dtype.
 * PyTorch checks the dtype (its index-type dispatch) before the rank. */
static pith_status repeats_check(const pith_tensor *repeats)
{
    if (!index_dtype_ok(repeats))
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                              "\"repeat_interleave_cpu\" not implemented for '%s'",
                              reduce_torch_dtype_name(repeats->dtype));
    if (repeats->ndim != 1)
        return pith_set_error(PITH_ERR_VALUE, "repeat_interleave only accept 1D vector as repeat");
    return PITH_OK;
}

/* PyTorch allocates the result before it looks at the repeats when given its size. */
static pith_status output_size_check(pith_opt_int output_size)
{
    if (output_size.present && output_size.value < 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "Trying to create tensor with negative dimension %lld: [%lld]",
                              (long long)output_size.value, (long long)output_size.value);
    return PITH_OK;
}

/* The result's size from the repeats' values: negative counts (which PyTorch does not
 * check when given output_size, and then fills wrongly) and a sum that differs from
 * `output_size` are errors. */
static pith_status repeats_total(const int64_t *counts, int64_t n, pith_opt_int output_size,
                                 int64_t *total)
{
    if (output_size_check(output_size) != PITH_OK)
        return pith_last_status();
    *total = 0;
    for (int64_t i = 0; i < n; i++) {
        if (counts[i] < 0)
            return pith_set_error(PITH_ERR_VALUE, "repeats can not be negative");
        if (__builtin_add_overflow(*total, counts[i], total))
            return pith_set_error(PITH_ERR_VALUE,
                                  "repeat_interleave: the sum of the repeats overflows int64");
    }
    if (output_size.present && output_size.value != *total)
        return pith_set_error(PITH_ERR_VALUE, "allocated size does not match required size");
    return PITH_OK;
}

/* Fills `out` (int32 or int64, `total` elements) with each index i repeated counts[i]
 * times. `counts` is overwritten with where each index starts, so that threads can split
 * the indices between them. */
static void repeats_fill(pith_tensor *out, int64_t *counts, int64_t n, int64_t total)
{
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = counts[i];
        counts[i] = at;
        at += c;
    }
    bool wide = out->dtype == PITH_INT64;
    char *data = tensor_data(out);
    PITH_PARALLEL_FOR(i, n, parallel_threads_for(total), {
        int64_t end = i + 1 < n ? counts[i + 1] : total;
        for (int64_t k = counts[i]; k < end; k++) {
            if (wide)
                ((int64_t *)data)[k] = i;
            else
                ((int32_t *)data)[k] = (int32_t)i;
        }
    });
}

pith_status repeat_interleave_Tensor_cpu(pith_keyset ks, pith_value *ret,
                                         const pith_tensor *repeats, pith_opt_int output_size)
{
    if (repeats_check(repeats) != PITH_OK)
        return pith_last_status();
    int64_t n = repeats->sizes[0], total = 0, *counts = NULL;
    if (n == 0)
        return ret_tensor(ret, tensor_new(1, &n, repeats->dtype, repeats->device));
    if (index_load("repeat_interleave", repeats, &counts) != PITH_OK)
        return pith_last_status();
    if (repeats_total(counts, n, output_size, &total) != PITH_OK) {
        free(counts);
        return pith_last_status();
    }
    pith_tensor *out = tensor_new(1, &total, repeats->dtype, repeats->device);
    if (out)
        repeats_fill(out, counts, n, total);
    free(counts);
    return ret_tensor(ret, out);
}

pith_status repeat_interleave_Tensor_meta(pith_keyset ks, pith_value *ret,
                                          const pith_tensor *repeats, pith_opt_int output_size)
{
    if (repeats_check(repeats) != PITH_OK)
        return pith_last_status();
    int64_t n = repeats->sizes[0];
    if (n == 0)
        return ret_tensor(ret, tensor_new(1, &n, repeats->dtype, PITH_META));
    if (output_size_check(output_size) != PITH_OK)
        return pith_last_status();
    if (!output_size.present)
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                              "repeat_interleave: cannot repeat_interleave a meta tensor without "
                              "output_size (the result's size depends on the data of repeats); "
                              "not supported on the meta device");
    return ret_tensor(ret, tensor_new(1, &output_size.value, repeats->dtype, PITH_META));
}

/* self.flatten() when `dim` is None, else self (retained): repeat_interleave's input. */
static pith_tensor *interleave_input(const pith_tensor *self, pith_opt_int dim)
{
    pith_value v[1];
    if (dim.present) {
        pith_retain((pith_tensor *)self);
        return (pith_tensor *)self;
    }
    return pith_call_flatten(v, self, 0, -1) == PITH_OK ? v[0].u.t : NULL;
}

/* PyTorch's composite: index_select along `dim` with repeat_interleave(repeats). A
 * 0-dim or one-element `repeats` applies to every index of the dim. */
pith_status repeat_interleave_self_Tensor_composite(pith_keyset ks, pith_value *ret,
                                                    const pith_tensor *self,
                                                    const pith_tensor *repeats, pith_opt_int dim,
                                                    pith_opt_int output_size)
{
    int64_t d = dim.present ? dim.value : 0, size = 0;
    pith_tensor *input = interleave_input(self, dim), *counts = NULL;
    pith_value v[1];
    pith_status status = input ? PITH_OK : pith_last_status();
    if (status == PITH_OK && repeats->ndim > 1)
        status = pith_set_error(PITH_ERR_VALUE, "repeats must be 0-dim or 1-dim tensor");
    if (status == PITH_OK)
        status = size_at(input, d, &size);
    if (status == PITH_OK && (repeats->ndim == 0 || repeats->sizes[0] == 1)) {
        int64_t one = 1;
        status = pith_call_reshape(v, repeats, (pith_int_list){&one, 1});
        pith_tensor *single = status == PITH_OK ? v[0].u.t : NULL;
        if (status == PITH_OK)
            status = pith_call_expand(v, single, (pith_int_list){&size, 1}, false);
        pith_release(single);
        counts = status == PITH_OK ? v[0].u.t : NULL;
    } else if (status == PITH_OK) {
        if (repeats->sizes[0] != size)
            status = pith_set_error(PITH_ERR_VALUE,
                                    "repeats must have the same size as input along dim, but "
                                    "got repeats.size(0) = %lld and input.size(%lld) = %lld",
                                    (long long)repeats->sizes[0], (long long)d, (long long)size);
        pith_retain((pith_tensor *)repeats);
        counts = (pith_tensor *)repeats;
    }
    pith_tensor *index = NULL;
    if (status == PITH_OK) {
        status = pith_call_repeat_interleave_Tensor(v, counts, output_size);
        index = status == PITH_OK ? v[0].u.t : NULL;
    }
    if (status == PITH_OK)
        status = pith_call_index_select(ret, input, d, index);
    pith_release(index);
    pith_release(counts);
    pith_release(input);
    return status;
}

/* repeat_interleave.self_int: every element along `dim` (of the flattened self when dim
 * is None) `repeats` times. PyTorch's composite expands a view and copies it; here one
 * block copy does it. The checks are PyTorch's, in its order; the dim is wrapped against
 * self's dims in both cases, and a 0-dim self with a dim fails as PyTorch's unsqueeze of
 * it does. */
typedef struct {
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int dim;      /* the dim whose elements repeat, -1 for the flattened self */
} interleave_plan;

static pith_status interleave_plan_make(const pith_tensor *self, int64_t repeats,
                                        pith_opt_int dim, pith_opt_int output_size,
                                        interleave_plan *p)
{
    int d = dim_wrap(dim.present ? dim.value : 0, self->ndim);
    if (d < 0)
        return pith_last_status();
    if (repeats < 0)
        return pith_set_error(PITH_ERR_VALUE, "Repeats must be non-negative");
    if (dim.present && self->ndim == 0)
        return pith_set_error(PITH_ERR_INDEX,
                              "Dimension out of range (expected to be in range of [-1, 0], but "
                              "got %d)",
                              d + 1);
    int64_t along = dim.present ? self->sizes[d] : self->numel, total;
    if (__builtin_mul_overflow(along, repeats, &total))
        return pith_set_error(PITH_ERR_VALUE, "repeat_interleave: the result's size overflows "
                                              "int64");
    if (output_size.present && output_size.value != total)
        return pith_set_error(PITH_ERR_VALUE,
                              "repeat_interleave: Invalid output_size, expected %lld but got %lld",
                              (long long)total, (long long)output_size.value);
    p->dim = dim.present ? d : -1;
    p->ndim = dim.present ? self->ndim : 1;
    if (dim.present)
        memcpy(p->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    p->sizes[dim.present ? d : 0] = total;
    return PITH_OK;
}

pith_status repeat_interleave_self_int_cpu(pith_keyset ks, pith_value *ret,
                                           const pith_tensor *self, int64_t repeats,
                                           pith_opt_int dim, pith_opt_int output_size)
{
    interleave_plan p;
    if (interleave_plan_make(self, repeats, dim, output_size, &p) != PITH_OK)
        return pith_last_status();
    pith_tensor *out = tensor_new(p.ndim, p.sizes, self->dtype, self->device);
    if (!out || out->numel == 0)
        return ret_tensor(ret, out);
    /* out seen as self's dims with a repeat index (reading nothing new) after p.dim, or
     * after the last dim for the flattened self */
    block_map m = {0};
    int64_t step = 1, steps[PITH_MAX_DIMS];
    for (int d = self->ndim - 1; d >= 0 && p.dim < 0; d--) { /* row-major over self, times r */
        steps[d] = step * repeats;
        step *= self->sizes[d];
    }
    for (int d = 0; d < self->ndim; d++) {
        int64_t dst = p.dim < 0 ? steps[d] : d == p.dim ? repeats * out->strides[d] : out->strides[d];
        block_add_dim(&m, self->sizes[d], dst, self->strides[d]);
        if (d == p.dim)
            block_add_dim(&m, repeats, out->strides[d], 0);
    }
    if (p.dim < 0)
        block_add_dim(&m, repeats, 1, 0);
    block_copy(m, tensor_data(out), tensor_data(self), pith_dtype_size(self->dtype));
    return ret_tensor(ret, out);
}

pith_status repeat_interleave_self_int_meta(pith_keyset ks, pith_value *ret,
                                            const pith_tensor *self, int64_t repeats,
                                            pith_opt_int dim, pith_opt_int output_size)
{
    interleave_plan p;
    if (interleave_plan_make(self, repeats, dim, output_size, &p) != PITH_OK)
        return pith_last_status();
    return ret_tensor(ret, tensor_new(p.ndim, p.sizes, self->dtype, PITH_META));
}

/* ---- outer, ger ---- */

/* PyTorch's composite: self.reshape(n, 1) * vec2, so the dtypes promote as mul's do. */
static pith_status outer_run(pith_value *ret, const pith_tensor *self, const pith_tensor *vec2)
{
    if (self->ndim != 1)
        return pith_set_error(PITH_ERR_VALUE, "outer: Expected 1-D argument self, but got %d-D",
                              self->ndim);
    if (vec2->ndim != 1)
        return pith_set_error(PITH_ERR_VALUE, "outer: Expected 1-D argument vec2, but got %d-D",
                              vec2->ndim);
    int64_t column[2] = {self->sizes[0], 1};
    pith_value v[1];
    if (pith_call_reshape(v, self, (pith_int_list){column, 2}) != PITH_OK)
        return pith_last_status();
    pith_status status = pith_call_mul(ret, v[0].u.t, vec2);
    value_clear(&v[0]);
    return status;
}

pith_status outer_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            const pith_tensor *vec2)
{
    return outer_run(ret, self, vec2);
}

pith_status ger_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                          const pith_tensor *vec2)
{
    return outer_run(ret, self, vec2);
}

/* ---- meshgrid ---- */

/* Grid i is tensors[i] viewed along dim i and expanded to the grid's shape, a view of its
 * input (0-dim inputs count as size one). "xy" indexing swaps the roles of the first two
 * inputs, as NumPy's meshgrid: the grid's shape starts (len(t1), len(t0), ...). `indexing`
 * NULL is meshgrid without it, which is "ij" (PyTorch also warns that this default will
 * go; pith does not). The checks run in PyTorch's order: the list, dtypes and devices,
 * the indexing, the ranks. */
static pith_status meshgrid_run(pith_value *ret, pith_tensor_list tensors, const char *indexing)
{
    size_t n = tensors.n;
    if (n == 0)
        return pith_set_error(PITH_ERR_VALUE, "meshgrid expects a non-empty TensorList");
    for (size_t i = 0; i + 1 < n; i++) {
        if (tensors.data[i]->dtype != tensors.data[i + 1]->dtype)
            return pith_set_error(PITH_ERR_VALUE, "meshgrid expects all tensors to have the same "
                                                  "dtype");
        if (tensors.data[i]->device != tensors.data[i + 1]->device)
            return pith_set_error(PITH_ERR_VALUE, "meshgrid expects all tensors to have the same "
                                                  "device");
    }
    if (indexing && strcmp(indexing, "xy") != 0 && strcmp(indexing, "ij") != 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                              "received: %s",
                              indexing);
    bool swap = indexing && strcmp(indexing, "xy") == 0 && n >= 2;
    int64_t shape[PITH_MAX_DIMS];
    for (size_t i = 0; i < n; i++) {
        const pith_tensor *t = tensors.data[swap && i < 2 ? 1 - i : i];
        if (t->ndim > 1)
            return pith_set_error(PITH_ERR_VALUE,
                                  "torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                                  "but got: a %d-D tensor",
                                  t->ndim);
        if (i < PITH_MAX_DIMS)
            shape[i] = t->numel;
    }
    if (n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                              "torch.meshgrid: %zu tensors make a %zu-dim grid; a pith tensor "
                              "has at most %d dims",
                              n, n, PITH_MAX_DIMS);
    pith_tensor **grids = calloc(n, sizeof *grids);
    if (!grids)
        return pith_set_error(PITH_ERR_NOMEM, "meshgrid: cannot allocate %zu tensors", n);
    pith_status status = PITH_OK;
    for (size_t i = 0; i < n && status == PITH_OK; i++) {
        int64_t view_shape[PITH_MAX_DIMS];
        for (size_t k = 0; k < n; k++)
            view_shape[k] = k == i ? -1 : 1;
        pith_value v[1];
        status = pith_call_view(v, tensors.data[swap && i < 2 ? 1 - i : i],
                                (pith_int_list){view_shape, n});
        if (status != PITH_OK)
            break;
        pith_tensor *line = v[0].u.t;
        status = pith_call_expand(v, line, (pith_int_list){shape, n}, false);
        pith_release(line);
        grids[i] = status == PITH_OK ? v[0].u.t : NULL;
    }
    if (status != PITH_OK) {
        tensor_list_release(grids, n);
        return status;
    }
    if (swap) {
        pith_tensor *t = grids[0];
        grids[0] = grids[1];
        grids[1] = t;
    }
    return ret_tensor_list(ret, grids, n);
}

pith_status meshgrid_composite(pith_keyset ks, pith_value *ret, pith_tensor_list tensors)
{
    return meshgrid_run(ret, tensors, NULL);
}

pith_status meshgrid_indexing_composite(pith_keyset ks, pith_value *ret, pith_tensor_list tensors,
                                        const char *indexing)
{
    return meshgrid_run(ret, tensors, indexing);
}
