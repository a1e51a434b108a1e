/* sorting.c — sort, argsort and topk (CPU and Meta kernels), the stable sort of keyed items
 * that multinomial shares.
 *
 * Note [Sort keys]
 * Every element of a line becomes a uint64 key whose unsigned order is PyTorch's order of
 * the values: bool as 0/1, integers offset by 2^63, and floating values (exact in double) by
 * their bits (negative values with every bit flipped, the others with the sign bit set),
 * with -0.0 as 0.0 and every NaN as UINT64_MAX, so that NaN sorts above +inf as in PyTorch.
 * descending=True and largest=True flip every bit of the key: the order reverses, NaN comes
 * first, and equal values still keep their order. A line is sorted by key with a stable
 * merge sort of items loaded in index order, so sort is ALWAYS stable, whatever `stable`
 * says (PyTorch's CPU sort is stable only with stable=True; its default may reorder equal
 * elements, so pith's result is one of the orders it allows). topk takes the first k items
 * of the same stable order: among equal values, the lowest indices (PyTorch leaves that
 * choice open), and always sorted (sorted=False allows any order). The values are copied
 * from the input element at each sorted index, keeping NaN payloads and the sign of zero.
 *
 * Lines are independent: they are split between threads, each with its own scratch space,
 * which is allocated before the parallel region (validation and allocation failures happen
 * outside it). Outputs are contiguous. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/indexing.h"
#include "kernels/ops_internal.h"
#include "kernels/out_target.h"
#include "kernels/reduce.h"
#include "kernels/sorting.h"

#define SORT_SIGN_BIT (UINT64_C(1) << 63)

uint64_t sort_key_of_double(double v)
{
    if (isnan(v))
        return UINT64_MAX;
    if (v == 0)
        v = 0.0; /* -0.0 compares equal to 0.0 */
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return (bits & SORT_SIGN_BIT) ? ~bits : bits | SORT_SIGN_BIT;
}

/* ---- sorting items ---- */

/* Short runs are sorted by insertion before merging. */
#define SORT_RUN 24

static void insertion_sort(sort_item *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        sort_item v = a[i];
        int64_t j = i;
        while (j > 0 && a[j - 1].key > v.key) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

/* Merges the sorted src[lo, mid) and src[mid, hi) into dst[lo, hi); ties take the left
 * item first, which keeps the sort stable. */
static void merge_runs(const sort_item *src, sort_item *dst, int64_t lo, int64_t mid,
                       int64_t hi)
{
    int64_t i = lo, j = mid, o = lo;
    if (mid >= hi || src[mid - 1].key <= src[mid].key) { /* already in order */
        memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof *dst);
        return;
    }
    while (i < mid && j < hi)
        dst[o++] = src[j].key < src[i].key ? src[j++] : src[i++];
    while (i < mid)
        dst[o++] = src[i++];
    while (j < hi)
        dst[o++] = src[j++];
}

void sort_items(sort_item *items, int64_t n, sort_item *scratch)
{
    for (int64_t lo = 0; lo < n; lo += SORT_RUN)
        insertion_sort(items + lo, n - lo < SORT_RUN ? n - lo : SORT_RUN);
    sort_item *src = items, *dst = scratch;
    for (int64_t width = SORT_RUN; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            merge_runs(src, dst, lo, mid, hi);
        }
        sort_item *t = src;
        src = dst;
        dst = t;
    }
    if (src != items)
        memcpy(items, src, (size_t)n * sizeof *items);
}

/* (key, index) order: the stable order of items loaded in index order. */
static inline bool item_before(sort_item a, sort_item b)
{
    return a.key < b.key || (a.key == b.key && a.index < b.index);
}

static void heap_sift_down(sort_item *heap, int64_t n, int64_t i)
{
    sort_item v = heap[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && item_before(heap[c], heap[c + 1]))
            c++;
        if (!item_before(v, heap[c]))
            break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = v;
}

/* A few of many: a max-heap of the k first items seen so far (n log k) beats sorting the
 * whole line (n log n). */
void sort_items_first(sort_item *items, int64_t n, int64_t k, sort_item *scratch)
{
    if (k >= n || k > n / 8) {
        sort_items(items, n, scratch);
        return;
    }
    if (k == 0)
        return;
    sort_item *heap = scratch;
    memcpy(heap, items, (size_t)k * sizeof *heap);
    for (int64_t i = k / 2; i-- > 0;)
        heap_sift_down(heap, k, i);
    for (int64_t j = k; j < n; j++) {
        if (item_before(items[j], heap[0])) {
            heap[0] = items[j];
            heap_sift_down(heap, k, 0);
        }
    }
    /* Popping the largest of the heap to its end leaves it in (key, index) order: the
     * stable order, which a key-only sort of the heap's jumbled indices would not give. */
    for (int64_t m = k; m-- > 1;) {
        sort_item top = heap[0];
        heap[0] = heap[m];
        heap[m] = top;
        heap_sift_down(heap, m, 0);
    }
    memcpy(items, heap, (size_t)k * sizeof *items);
}

/* ---- lines ---- */

/* The lines of `x` along one dim, and where they go in a contiguous output whose dim has
 * `out_len` elements. A 0-dim tensor is one line of one element. */
typedef struct {
    int64_t lines, len, stride; /* stride: input elements between neighbours of a line */
    int64_t inner;              /* output elements between neighbours of a line */
    int ndim;                   /* the other dims of the input, in order */
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
} sort_lines;

static void sort_lines_init(sort_lines *g, const pith_tensor *x, int dim)
{
    g->lines = 1;
    g->len = 1;
    g->stride = 0;
    g->inner = 1;
    g->ndim = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (i == dim) {
            g->len = x->sizes[i];
            g->stride = x->strides[i];
            continue;
        }
        g->sizes[g->ndim] = x->sizes[i];
        g->strides[g->ndim++] = x->strides[i];
        g->lines *= x->sizes[i];
        if (i > dim)
            g->inner *= x->sizes[i];
    }
}

/* The input offset (in elements) of the first element of line `l`. */
static int64_t sort_lines_offset(const sort_lines *g, int64_t l)
{
    int64_t offset = 0;
    for (int i = g->ndim; i-- > 0;) {
        offset += (l % g->sizes[i]) * g->strides[i];
        l /= g->sizes[i];
    }
    return offset;
}

/* Loads the keys of one line (See Note [Sort keys]); `flip` reverses the order. */
static void keys_load(pith_dtype dtype, const char *p, int64_t n, int64_t step, bool flip,
                      sort_item *items)
{
    uint64_t mask = flip ? UINT64_MAX : 0;
#define SORT_KEYS_(T, KEY)                                                                  \
    for (int64_t j = 0; j < n; j++) {                                                       \
        T v = *(const T *)(p + j * step);                                                   \
        items[j].key = (KEY) ^ mask;                                                        \
        items[j].index = j;                                                                 \
    }                                                                                       \
    break;
    switch (dtype) {
    case PITH_BOOL: SORT_KEYS_(uint8_t, (uint64_t)(v != 0)) /* Note [Bool bytes] */
    case PITH_UINT8: SORT_KEYS_(uint8_t, (uint64_t)v)
    case PITH_INT8: SORT_KEYS_(int8_t, (uint64_t)(int64_t)v ^ SORT_SIGN_BIT)
    case PITH_INT16: SORT_KEYS_(int16_t, (uint64_t)(int64_t)v ^ SORT_SIGN_BIT)
    case PITH_INT32: SORT_KEYS_(int32_t, (uint64_t)(int64_t)v ^ SORT_SIGN_BIT)
    case PITH_INT64: SORT_KEYS_(int64_t, (uint64_t)v ^ SORT_SIGN_BIT)
    case PITH_FLOAT16: SORT_KEYS_(pith_half, sort_key_of_double(half_to_float(v)))
    case PITH_BFLOAT16: SORT_KEYS_(pith_bfloat16, sort_key_of_double(bfloat16_to_float(v)))
    case PITH_FLOAT32: SORT_KEYS_(float, sort_key_of_double(v))
    case PITH_FLOAT64: SORT_KEYS_(double, sort_key_of_double(v))
    }
#undef SORT_KEYS_
}

/* Copies the input element at each of the first k items' index to dst (its neighbours
 * `dst_step` bytes apart). */
static void values_store(size_t itemsize, const char *src, int64_t src_step,
                         const sort_item *items, int64_t k, char *dst, int64_t dst_step)
{
#define SORT_COPY_(T)                                                                       \
    for (int64_t j = 0; j < k; j++)                                                         \
        *(T *)(dst + j * dst_step) = *(const T *)(src + items[j].index * src_step);         \
    break;
    switch (itemsize) {
    case 1: SORT_COPY_(uint8_t)
    case 2: SORT_COPY_(uint16_t)
    case 4: SORT_COPY_(uint32_t)
    default: SORT_COPY_(uint64_t)
    }
#undef SORT_COPY_
}

/* One sort or topk run: the first k of each line's order into `values` (may be NULL) and
 * `indices`, both contiguous with k elements along the dim. */
typedef struct {
    const pith_tensor *x;
    sort_lines g;
    int64_t k;
    bool flip;
    char *values;
    int64_t *indices;
} sort_job;

static void sort_line(const sort_job *job, int64_t l, sort_item *items, sort_item *scratch)
{
    const sort_lines *g = &job->g;
    size_t itemsize = dtype_itemsize(job->x->dtype);
    const char *src = tensor_data(job->x) + sort_lines_offset(g, l) * (int64_t)itemsize;
    int64_t step = g->stride * (int64_t)itemsize;
    keys_load(job->x->dtype, src, g->len, step, job->flip, items);
    if (job->k == g->len)
        sort_items(items, g->len, scratch);
    else
        sort_items_first(items, g->len, job->k, scratch);
    int64_t o = (l / g->inner) * job->k * g->inner + l % g->inner;
    if (job->values)
        values_store(itemsize, src, step, items, job->k, job->values + o * (int64_t)itemsize,
                     g->inner * (int64_t)itemsize);
    for (int64_t j = 0; j < job->k; j++)
        job->indices[o + j * g->inner] = items[j].index;
}

static pith_status sort_run(const char *op, const sort_job *job)
{
    const sort_lines *g = &job->g;
    if (g->lines == 0 || job->k == 0)
        return PITH_OK;
    int threads = parallel_threads_for(g->lines * g->len);
    if (threads > g->lines)
        threads = (int)g->lines;
    size_t per_thread = 2 * (size_t)g->len;
    bool too_big = (size_t)g->len > SIZE_MAX / (2 * sizeof(sort_item)) / (size_t)threads;
    sort_item *buffer = too_big ? NULL : malloc(per_thread * (size_t)threads * sizeof *buffer);
    if (!buffer)
        return pith_set_error(PITH_ERR_NOMEM, "%s: cannot allocate scratch space for %lld "
                                              "elements", op, (long long)g->len);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(g->lines, &begin, &end);
        sort_item *items = buffer + per_thread * (size_t)omp_get_thread_num();
        for (int64_t l = begin; l < end; l++)
            sort_line(job, l, items, items + g->len);
    });
    free(buffer);
    return PITH_OK;
}

/* ---- the ops ---- */

/* What one call computes: the wrapped dim, k, and the result shape. `k` < 0 (sort, argsort)
 * means the whole line. */
typedef struct {
    int dim;
    int64_t k;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
} sort_setup;

static pith_status sort_prepare(const char *op, const pith_tensor *x, int64_t dim, int64_t k,
                                pith_device device, sort_setup *s)
{
    if (device == PITH_CPU && reduce_check_cpu(op, x) != PITH_OK)
        return pith_last_status();
    if (reduce_dim_wrap(op, x, dim, &s->dim) != PITH_OK)
        return pith_last_status();
    int64_t len = x->ndim ? x->sizes[s->dim] : 1;
    if (k >= 0 && x->dtype == PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE, "%s: topk does not support bool dtypes on CPU", op);
    if (k > len)
        return pith_set_error(PITH_ERR_VALUE, "%s: selected index k out of range", op);
    /* A 0-dim result holds its one element even for k = 0, as in PyTorch. */
    s->k = k < 0 || x->ndim == 0 ? len : k;
    s->ndim = x->ndim;
    memcpy(s->sizes, x->sizes, (size_t)x->ndim * sizeof *s->sizes);
    if (x->ndim)
        s->sizes[s->dim] = s->k;
    return PITH_OK;
}

static pith_status sort_compute(const char *op, const pith_tensor *x, const sort_setup *s,
                                bool flip, pith_tensor *values, pith_tensor *indices)
{
    sort_job job = {x, {0}, s->k, flip, values ? tensor_data(values) : NULL,
                    (int64_t *)tensor_data(indices)};
    sort_lines_init(&job.g, x, s->dim);
    return sort_run(op, &job);
}

/* The functional forms: new values (unless indices_only) and indices. */
static pith_status sort_functional(pith_value *ret, const char *op, const pith_tensor *x,
                                   int64_t dim, int64_t k, bool flip, bool indices_only,
                                   pith_device device)
{
    sort_setup s;
    if (sort_prepare(op, x, dim, k, device, &s) != PITH_OK)
        return pith_last_status();
    pith_tensor *values = indices_only ? NULL : tensor_new(s.ndim, s.sizes, x->dtype, device);
    pith_tensor *indices = indices_only || values ? tensor_new(s.ndim, s.sizes, PITH_INT64,
                                                               device)
                                                  : NULL;
    if (!indices ||
        (device == PITH_CPU && sort_compute(op, x, &s, flip, values, indices) != PITH_OK)) {
        pith_release(values);
        pith_release(indices);
        return pith_last_status();
    }
    if (indices_only)
        return ret_tensor(ret, indices);
    ret[0].kind = ret[1].kind = PITH_VALUE_TENSOR;
    ret[0].u.t = values;
    ret[1].u.t = indices;
    return PITH_OK;
}

/* Checks and resizes one out= target of a sort. */
static pith_status sort_out_check(const char *op, const pith_tensor *x, pith_tensor *target,
                                  pith_dtype dtype, const sort_setup *s)
{
    return out_target_check(op, target, s->ndim, s->sizes, dtype, x);
}

/* Sorts into the checked targets, through temporaries where they cannot be written
 * directly (See out_target_begin). */
static pith_status sort_into_cpu(const char *op, const pith_tensor *x, const sort_setup *s,
                                 bool flip, pith_tensor *values, pith_tensor *indices)
{
    pith_tensor *vd = values ? out_target_begin(values, &x, 1, false) : NULL;
    pith_tensor *id = !values || vd ? out_target_begin(indices, &x, 1, false) : NULL;
    pith_status status = id ? sort_compute(op, x, s, flip, vd, id) : pith_last_status();
    if (status == PITH_OK && vd) {
        status = out_target_end(op, values, vd);
        vd = NULL;
    }
    if (status == PITH_OK) {
        status = out_target_end(op, indices, id);
        id = NULL;
    }
    pith_release(vd);
    pith_release(id);
    return status;
}

/* The out= forms: into `values` (NULL for argsort) and `indices`. */
static pith_status sort_into(pith_value *ret, const char *op, const pith_tensor *x,
                             int64_t dim, int64_t k, bool flip, pith_tensor *values,
                             pith_tensor *indices, pith_device device)
{
    sort_setup s;
    if (sort_prepare(op, x, dim, k, device, &s) != PITH_OK)
        return pith_last_status();
    if (values && (values == indices || tensors_may_overlap(values, indices)))
        return pith_set_error(PITH_ERR_VALUE, "%s: the values and indices outputs must not "
                                              "share memory", op);
    if ((values && sort_out_check(op, x, values, x->dtype, &s) != PITH_OK) ||
        sort_out_check(op, x, indices, PITH_INT64, &s) != PITH_OK)
        return pith_last_status();
    if (device == PITH_CPU) {
        if (sort_into_cpu(op, x, &s, flip, values, indices) != PITH_OK)
            return pith_last_status();
    } else {
        if (values)
            tensor_bump_version(values);
        tensor_bump_version(indices);
    }
    if (!values)
        return ret_self(ret, indices);
    ret_self(ret, values);
    return ret_self(ret + 1, indices);
}

/* Each overload's kernel, for both devices: ops/generated/device_forwarders.c has its
 * <id>_cpu and <id>_meta (device_kernel in ops/ops.toml). */
pith_status sort_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self, int64_t dim,
                        bool descending, pith_device device)
{
    return sort_functional(ret, "sort", self, dim, -1, descending, false, device);
}

pith_status sort_stable_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               pith_opt_bool stable, int64_t dim, bool descending,
                               pith_device device)
{
    return sort_functional(ret, "sort", self, dim, -1, descending, false, device);
}

pith_status sort_values_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               int64_t dim, bool descending, const pith_tensor *values,
                               const pith_tensor *indices, pith_device device)
{
    return sort_into(ret, "sort", self, dim, -1, descending, (pith_tensor *)values,
                     (pith_tensor *)indices, device);
}

pith_status sort_values_stable_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                      pith_opt_bool stable, int64_t dim, bool descending,
                                      const pith_tensor *values, const pith_tensor *indices,
                                      pith_device device)
{
    return sort_into(ret, "sort", self, dim, -1, descending, (pith_tensor *)values,
                     (pith_tensor *)indices, device);
}

pith_status argsort_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self, int64_t dim,
                           bool descending, pith_device device)
{
    return sort_functional(ret, "argsort", self, dim, -1, descending, true, device);
}

pith_status argsort_stable_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                  bool stable, int64_t dim, bool descending, pith_device device)
{
    return sort_functional(ret, "argsort", self, dim, -1, descending, true, device);
}

pith_status argsort_stable_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                      bool stable, int64_t dim, bool descending,
                                      const pith_tensor *out, pith_device device)
{
    return sort_into(ret, "argsort", self, dim, -1, descending, NULL, (pith_tensor *)out,
                     device);
}

/* k < 0 is out of range too: it must not mean "the whole line" as it does inside. */
static int64_t topk_count(int64_t k)
{
    return k < 0 ? INT64_MAX : k;
}

pith_status topk_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self, int64_t k,
                        int64_t dim, bool largest, bool sorted, pith_device device)
{
    return sort_functional(ret, "topk", self, dim, topk_count(k), largest, false, device);
}

pith_status topk_values_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               int64_t k, int64_t dim, bool largest, bool sorted,
                               const pith_tensor *values, const pith_tensor *indices,
                               pith_device device)
{
    return sort_into(ret, "topk", self, dim, topk_count(k), largest, (pith_tensor *)values,
                     (pith_tensor *)indices, device);
}
