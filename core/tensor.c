/* tensor.c — pith_tensor construction, geometry, shape helpers and lifetime (retain,
 * release, the live-tensor counter).
 *
 * The public factories and metadata getters live in tensor_api.c; the PyObject slot in
 * pyobj_slot.c. */
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/interpreter_internal.h"
#include "core/tensor.h"

static atomic_size_t live_tensors;

size_t pith_live_tensors(void)
{
    return atomic_load_explicit(&live_tensors, memory_order_relaxed);
}

/* ---- shape helpers ---- */

const char *shape_format(int ndim, const int64_t *sizes, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return "";
    size_t used = 0;
    buf[0] = '\0';
    int n = snprintf(buf, cap, "[");
    used = n > 0 ? (size_t)n : 0;
    for (int i = 0; i < ndim && sizes && used < cap; i++) {
        n = snprintf(buf + used, cap - used, "%s%" PRId64, i ? ", " : "", sizes[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
    return buf;
}

int64_t shape_numel_checked(int ndim, const int64_t *sizes)
{
    char buf[256];
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            pith_set_error(PITH_ERR_VALUE,
                           "Trying to create tensor with negative dimension %" PRId64 ": %s",
                           sizes[i], shape_format(ndim, sizes, buf, sizeof buf));
            return -1;
        }
    }
    /* Checked before it happens (no division: this is on every tensor's path). A zero
     * anywhere makes the product 0 however large the other sizes are. */
    int64_t numel = 1;
    bool overflow = false;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0)
            return 0;
        overflow |= __builtin_mul_overflow(numel, sizes[i], &numel);
    }
    if (overflow) {
        pith_set_error(PITH_ERR_VALUE, "the number of elements of shape %s overflows int64",
                       shape_format(ndim, sizes, buf, sizeof buf));
        return -1;
    }
    return numel;
}

bool shape_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t stride = 1;
    bool ok = true;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = stride;
        int64_t s = sizes[i] > 1 ? sizes[i] : 1; /* PyTorch: size 0/1 dims do not scale */
        if (__builtin_mul_overflow(stride, s, &stride))
            ok = false;
    }
    return ok;
}

bool shape_equal(int ndim_a, const int64_t *a, int ndim_b, const int64_t *b)
{
    if (ndim_a != ndim_b)
        return false;
    return ndim_a == 0 || memcmp(a, b, (size_t)ndim_a * sizeof *a) == 0;
}

int dim_wrap(int64_t dim, int ndim)
{
    int64_t n = ndim > 0 ? ndim : 1; /* a 0-dim tensor accepts -1 and 0 */
    if (dim < -n || dim >= n) {
        pith_set_error(PITH_ERR_INDEX,
                       "Dimension out of range (expected to be in range of [%" PRId64
                       ", %" PRId64 "], but got %" PRId64 ")",
                       -n, n - 1, dim);
        return -1;
    }
    return (int)(dim < 0 ? dim + n : dim);
}

/* Validates what every constructor takes; `what` names the caller in messages. */
static bool tensor_args_valid(const char *what, int ndim, const int64_t *sizes,
                              pith_dtype dtype, pith_device device)
{
    if (ndim < 0 || ndim > PITH_MAX_DIMS) {
        pith_set_error(PITH_ERR_VALUE, "%s: ndim %d is out of range [0, %d]", what, ndim,
                       PITH_MAX_DIMS);
        return false;
    }
    if (ndim > 0 && !sizes) {
        pith_set_error(PITH_ERR_VALUE, "%s: sizes is NULL for ndim %d", what, ndim);
        return false;
    }
    if (!dtype_valid((int)dtype)) {
        pith_set_error(PITH_ERR_TYPE, "%s: invalid dtype %d", what, (int)dtype);
        return false;
    }
    if (device != PITH_CPU && device != PITH_META) {
        pith_set_error(PITH_ERR_VALUE, "%s: invalid device %d", what, (int)device);
        return false;
    }
    return true;
}

/* Bytes for `elements` elements of `dtype`, or false (error set) when it overflows. */
static bool tensor_nbytes(const char *what, int64_t elements, pith_dtype dtype, size_t *out)
{
    int64_t bytes;
    if (__builtin_mul_overflow(elements, (int64_t)dtype_itemsize(dtype), &bytes) ||
        (uint64_t)bytes > (uint64_t)SIZE_MAX) {
        pith_set_error(PITH_ERR_VALUE, "%s: %" PRId64 " elements of %s overflow the byte size",
                       what, elements, pith_dtype_name(dtype));
        return false;
    }
    *out = (size_t)bytes;
    return true;
}

/* Elements a strided geometry spans: 1 + sum((size-1)*stride), 0 when empty. Strides
 * must be non-negative. -1 with the error set on overflow or a negative stride. */
static int64_t strided_extent(const char *what, int ndim, const int64_t *sizes,
                              const int64_t *strides)
{
    char buf[256];
    for (int i = 0; i < ndim; i++) {
        if (strides[i] < 0) {
            pith_set_error(PITH_ERR_VALUE, "%s: negative strides are not supported: %s", what,
                           shape_format(ndim, strides, buf, sizeof buf));
            return -1;
        }
    }
    for (int i = 0; i < ndim; i++)
        if (sizes[i] == 0)
            return 0;
    int64_t extent = 1;
    for (int i = 0; i < ndim; i++) {
        int64_t step;
        if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &step) ||
            __builtin_add_overflow(extent, step, &extent)) {
            pith_set_error(PITH_ERR_VALUE, "%s: strides %s overflow the storage size", what,
                           shape_format(ndim, strides, buf, sizeof buf));
            return -1;
        }
    }
    return extent;
}

/* Note [Geometry fits in int64]
 * Kernels scale element strides and offsets to bytes and walk them with int64 arithmetic,
 * stepping an index one past the end of a dim before carrying into the next. So every
 * tensor's geometry, with item size b, storage offset o >= 0, sizes n_d and strides s_d,
 * satisfies, empty tensors included (loops are set up, and their strides scaled, before
 * anyone notices there is nothing to do):
 *   1. |s_d| * b fits in int64, for every dim (size 0 and 1 dims too);
 *   2. (o + sum_d n_d * |s_d|) * b fits in int64: the byte offset of the index that is one
 *      past the end in every dim at once. Any index with 0 <= i_d <= n_d then has a byte
 *      offset (o + sum_d i_d * s_d) * b whose partial sums fit, and so does n_d * s_d * b,
 *      which a walk subtracts when it carries;
 *   3. numel * b fits in int64 (the bytes of a dense copy, or of an export).
 * This is stronger than what storage needs (1 + sum (n_d - 1) * s_d elements): it refuses
 * only geometries within a stride of 2^63 bytes, which no real memory holds, and empty or
 * size-1 dims with absurd strides (PyTorch takes torch.empty(0, 2**62); pith refuses it for
 * 4-byte items). geometry_fits checks it and every constructor calls it: tensor_create
 * (empty, empty_strided, the factories, the Meta stand-in of a wrapper subclass),
 * tensor_from_storage (from_blob, so every NumPy, buffer and DLPack import), tensor_view
 * (every view kernel) and tensor_resize_out. pith_geometry_check is the public form
 * (the bindings check a strided buffer they copy with it). Negative strides count by their
 * absolute value there; tensors never have them (strided_extent refuses them). Kernels
 * assume the invariant and do not check again. */
bool geometry_fits(const char *what, int ndim, const int64_t *sizes, const int64_t *strides,
                   int64_t offset, size_t itemsize)
{
    char shape[256], steps[256];
    const int64_t b = (int64_t)itemsize;
    int64_t contiguous[PITH_MAX_DIMS];
    if (!strides) {
        /* numel fits, so only an empty shape can overflow here */
        if (!shape_contiguous_strides(ndim, sizes, contiguous)) {
            pith_set_error(PITH_ERR_VALUE, "%s: the contiguous strides of shape %s overflow int64",
                           what, shape_format(ndim, sizes, shape, sizeof shape));
            return false;
        }
        strides = contiguous;
    }
    if (offset < 0) {
        pith_set_error(PITH_ERR_VALUE, "%s: negative storage offset %" PRId64, what, offset);
        return false;
    }
    int64_t span, dense = b;
    bool span_overflow = __builtin_mul_overflow(offset, b, &span), empty = false;
    for (int d = 0; d < ndim; d++)
        empty |= sizes[d] == 0;
    for (int d = 0; d < ndim; d++) {
        int64_t stride_bytes, step;
        if (strides[d] == INT64_MIN ||
            __builtin_mul_overflow(strides[d] < 0 ? -strides[d] : strides[d], b,
                                   &stride_bytes)) {
            pith_set_error(PITH_ERR_VALUE,
                           "%s: stride %" PRId64 " of dim %d times the item size %zu "
                           "overflows int64",
                           what, strides[d], d, itemsize);
            return false;
        }
        span_overflow |= __builtin_mul_overflow(sizes[d], stride_bytes, &step) ||
                         __builtin_add_overflow(span, step, &span);
        if (!empty && __builtin_mul_overflow(dense, sizes[d], &dense)) {
            pith_set_error(PITH_ERR_VALUE,
                           "%s: shape %s of %zu-byte elements has more bytes than int64 holds",
                           what, shape_format(ndim, sizes, shape, sizeof shape), itemsize);
            return false;
        }
    }
    if (span_overflow) {
        pith_set_error(PITH_ERR_VALUE,
                       "%s: the byte extent of sizes %s with strides %s, storage offset %" PRId64
                       " and %zu-byte elements overflows int64",
                       what, shape_format(ndim, sizes, shape, sizeof shape),
                       shape_format(ndim, strides, steps, sizeof steps), offset, itemsize);
        return false;
    }
    return true;
}

pith_status pith_geometry_check(int ndim, const int64_t *sizes, const int64_t *strides,
                                int64_t offset, size_t itemsize)
{
    const char *what = "geometry_check";
    if (ndim < 0 || ndim > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "%s: ndim %d is out of range [0, %d]", what, ndim,
                              PITH_MAX_DIMS);
    if (ndim > 0 && !sizes)
        return pith_set_error(PITH_ERR_VALUE, "%s: sizes is NULL for ndim %d", what, ndim);
    if (itemsize == 0 || itemsize > INT64_MAX)
        return pith_set_error(PITH_ERR_VALUE, "%s: invalid item size %zu", what, itemsize);
    if (shape_numel_checked(ndim, sizes) < 0)
        return pith_last_status();
    return geometry_fits(what, ndim, sizes, strides, offset, itemsize) ? PITH_OK
                                                                       : pith_last_status();
}

/* ---- tensor blocks ---- */

/* Note [Tensor blocks]
 * Tiny ops are dominated by fixed costs (the target: an unboxed add of two 1-element
 * float32 tensors in <= 60 ns, output included), and on this class of machine one
 * malloc/free pair costs 20-35 ns. So a tensor lives in a fixed-size block that also has
 * room for a storage header and TENSOR_BLOCK_INLINE bytes of data: a fresh small tensor
 * is one block, taken from a per-thread free list (no lock, no atomic).
 *  - The block holds two things that die separately: the tensor and, when used, the
 *    embedded storage (views may keep the storage alive after the tensor died, and
 *    tensor_resize_out may drop the storage while the tensor lives). `holders` counts
 *    them; the block returns to the free list when both are gone. The common case, a
 *    tensor that is the only holder of its embedded storage, frees the block directly.
 *  - Each thread keeps at most BLOCK_CACHE_MAX free blocks; a pthread key destructor
 *    frees them when the thread exits.
 *  - Under ASan and TSan the free list is off, so every block really is freed and a use
 *    after free is reported. */
#define TENSOR_BLOCK_INLINE 64
#define BLOCK_CACHE_MAX 64

typedef struct tensor_block {
    pith_tensor tensor;
    pith_storage storage;
    atomic_int holders;
    _Alignas(64) unsigned char data[TENSOR_BLOCK_INLINE];
} tensor_block;

#if defined(PITH_ASAN) || defined(PITH_TSAN)
#define BLOCK_CACHE_ENABLED 0
#else
#define BLOCK_CACHE_ENABLED 1
#endif

typedef struct block_cache {
    tensor_block *head; /* linked through tensor.storage */
    int count;
    bool registered, dead;
} block_cache;

/* initial-exec: see PITH_TLS_HOT in dispatch/keys.h (core cannot include it). */
static _Thread_local __attribute__((tls_model("initial-exec"))) block_cache thread_blocks;
static pthread_key_t block_cache_key;
static pthread_once_t block_cache_once = PTHREAD_ONCE_INIT;

static void block_cache_destroy(void *arg)
{
    block_cache *cache = arg;
    while (cache->head) {
        tensor_block *b = cache->head;
        cache->head = (tensor_block *)b->tensor.storage;
        free(b);
    }
    cache->count = 0;
    cache->dead = true; /* blocks freed later on this thread go to free() */
}

static void block_cache_key_create(void)
{
    pthread_key_create(&block_cache_key, block_cache_destroy);
}

static tensor_block *block_alloc(void)
{
    block_cache *cache = &thread_blocks;
    if (BLOCK_CACHE_ENABLED && cache->head) {
        tensor_block *b = cache->head;
        cache->head = (tensor_block *)b->tensor.storage;
        cache->count--;
        return b;
    }
    return aligned_alloc(_Alignof(tensor_block), sizeof(tensor_block));
}

static void block_free(tensor_block *b)
{
    block_cache *cache = &thread_blocks;
    if (!BLOCK_CACHE_ENABLED || cache->dead || cache->count >= BLOCK_CACHE_MAX) {
        free(b);
        return;
    }
    if (!cache->registered) { /* once per thread: free the list when the thread exits */
        pthread_once(&block_cache_once, block_cache_key_create);
        pthread_setspecific(block_cache_key, cache);
        cache->registered = true;
    }
    b->tensor.storage = (pith_storage *)cache->head;
    cache->head = b;
    cache->count++;
}

static tensor_block *block_of_tensor(const pith_tensor *t)
{
    return (tensor_block *)((char *)t - offsetof(tensor_block, tensor));
}

static void block_drop(tensor_block *b)
{
    if (atomic_fetch_sub_explicit(&b->holders, 1, memory_order_acq_rel) == 1)
        block_free(b);
}

void tensor_block_storage_free(pith_storage *s)
{
    block_drop((tensor_block *)((char *)s - offsetof(tensor_block, storage)));
}

/* ---- construction ---- */

/* A tensor in a fresh block. With storage NULL it uses the block's embedded storage for
 * `nbytes` (<= TENSOR_BLOCK_INLINE) of CPU data. */
static inline __attribute__((always_inline)) pith_tensor *
tensor_alloc_inline(pith_storage *storage, size_t nbytes, pith_dtype dtype, pith_device device)
{
    tensor_block *b = block_alloc();
    if (!b)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory allocating a tensor");
    pith_tensor *t = &b->tensor;
    if (!storage) {
        storage = &b->storage;
        /* storage_init, inlined: this is the hot path of every small op. */
        atomic_init(&storage->refcount, 1);
        atomic_init(&storage->version, 0);
        storage->data = b->data;
        storage->nbytes = nbytes;
        storage->deleter = NULL;
        storage->ctx = NULL;
        storage->owner = NULL;
        storage->inline_data = false;
        storage->in_tensor_block = true;
        atomic_init(&b->holders, 2);
    } else {
        atomic_init(&b->holders, 1);
    }
    atomic_init(&t->refcount, 1);
    t->storage = storage;
    t->offset = 0;
    t->ndim = 0;
    t->dtype = dtype;
    t->device = device;
    /* See Note [Inference tensors reach the autograd kernels] (core/grad_mode.c); without
     * branches: this runs for every tensor made */
    unsigned inference = grad_mode_inference();
    t->flags = inference * PITH_TENSOR_INFERENCE;
    t->keys = (device == PITH_META ? TENSOR_KEY_META : TENSOR_KEY_CPU) |
              (pith_keyset)inference * TENSOR_KEY_AUTOGRAD;
    t->contiguous = true;
    t->numel = 1;
    atomic_init(&t->pyobj, (uintptr_t)0);
    atomic_init(&t->tag, (pith_interpreter *)NULL);
    t->autograd = NULL;
    atomic_fetch_add_explicit(&live_tensors, 1, memory_order_relaxed);
    return t;
}

static pith_tensor *tensor_alloc(pith_storage *storage, size_t nbytes, pith_dtype dtype,
                                 pith_device device)
{
    return tensor_alloc_inline(storage, nbytes, dtype, device);
}

void tensor_set_geometry(pith_tensor *t, int ndim, const int64_t *sizes,
                         const int64_t *strides)
{
    t->ndim = ndim;
    uint64_t numel = 1; /* trusted geometry: validated by the caller */
    for (int i = 0; i < ndim; i++) {
        t->sizes[i] = sizes[i];
        numel *= (uint64_t)sizes[i];
    }
    t->numel = (int64_t)numel;
    if (strides) {
        memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
    } else {
        shape_contiguous_strides(ndim, sizes, t->strides);
        t->contiguous = true;
        return;
    }
    /* PyTorch's rule: dims of size 1 may have any stride; empty tensors are contiguous. */
    bool contiguous = true;
    if (numel != 0) {
        int64_t expected = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            if (sizes[i] == 1)
                continue;
            if (strides[i] != expected) {
                contiguous = false;
                break;
            }
            expected *= sizes[i];
        }
    }
    t->contiguous = contiguous;
}

bool tensor_geometry_check(const char *what, int ndim, const int64_t *sizes,
                           const int64_t *strides, pith_dtype dtype, pith_device device,
                           size_t *nbytes)
{
    if (!tensor_args_valid(what, ndim, sizes, dtype, device))
        return false;
    int64_t numel = shape_numel_checked(ndim, sizes);
    if (numel < 0)
        return false;
    int64_t elements = strides ? strided_extent(what, ndim, sizes, strides) : numel;
    return elements >= 0 && tensor_nbytes(what, elements, dtype, nbytes) &&
           geometry_fits(what, ndim, sizes, strides, 0, dtype_itemsize(dtype));
}

static pith_tensor *tensor_create(const char *what, int ndim, const int64_t *sizes,
                                  const int64_t *strides, pith_dtype dtype, pith_device device)
{
    size_t nbytes;
    if (!tensor_geometry_check(what, ndim, sizes, strides, dtype, device, &nbytes))
        return NULL;
    if (device == PITH_CPU && nbytes > 0 && nbytes <= TENSOR_BLOCK_INLINE) {
        pith_tensor *t = tensor_alloc(NULL, nbytes, dtype, device);
        if (t)
            tensor_set_geometry(t, ndim, sizes, strides);
        return t;
    }
    pith_storage *storage = storage_new(nbytes, device);
    if (!storage)
        return NULL;
    pith_tensor *t = tensor_alloc(storage, 0, dtype, device);
    if (!t) {
        storage_release(storage);
        return NULL;
    }
    tensor_set_geometry(t, ndim, sizes, strides);
    return t;
}

pith_tensor *tensor_new(int ndim, const int64_t *sizes, pith_dtype dtype, pith_device device)
{
    /* Fast path for the outputs of small ops: one pass validates, multiplies and lays out
     * the contiguous strides. Anything unusual (an error, a zero size next to a huge one,
     * big or meta data) takes the general path, which also words the errors. */
    if ((unsigned)ndim <= PITH_MAX_DIMS && (sizes || ndim == 0) && dtype_valid((int)dtype) &&
        device == PITH_CPU) {
        int64_t numel = 1, nbytes;
        bool bad = false;
        for (int i = 0; i < ndim; i++)
            bad |= (sizes[i] < 0) | __builtin_mul_overflow(numel, sizes[i], &numel);
        bad |= __builtin_mul_overflow(numel, (int64_t)dtype_itemsize(dtype), &nbytes);
        if (!bad && nbytes > 0 && nbytes <= TENSOR_BLOCK_INLINE) {
            pith_tensor *t = tensor_alloc(NULL, (size_t)nbytes, dtype, device);
            if (!t)
                return NULL;
            t->ndim = ndim;
            t->numel = numel;
            int64_t stride = 1;
            for (int i = ndim - 1; i >= 0; i--) {
                t->sizes[i] = sizes[i];
                t->strides[i] = stride;
                stride *= sizes[i] > 1 ? sizes[i] : 1; /* cannot overflow: numel did not */
            }
            return t;
        }
    }
    return tensor_create("empty", ndim, sizes, NULL, dtype, device);
}

static __attribute__((noinline)) pith_tensor *tensor_new_cpu(int ndim, const int64_t *sizes,
                                                             pith_dtype dtype)
{
    return tensor_new(ndim, sizes, dtype, PITH_CPU);
}

pith_tensor *tensor_new_shape_of(const pith_tensor *like, pith_dtype dtype)
{
    const int ndim = like->ndim;
    int64_t nbytes;
    if (__builtin_mul_overflow(like->numel, (int64_t)dtype_itemsize(dtype), &nbytes) ||
        nbytes <= 0 || nbytes > TENSOR_BLOCK_INLINE)
        return tensor_new_cpu(ndim, like->sizes, dtype);
    pith_tensor *t = tensor_alloc_inline(NULL, (size_t)nbytes, dtype, PITH_CPU);
    if (!t)
        return NULL;
    t->ndim = ndim;
    t->numel = like->numel;
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int64_t size = like->sizes[i];
        t->sizes[i] = size;
        t->strides[i] = stride;
        stride *= size > 1 ? size : 1; /* cannot overflow: numel does not */
    }
    return t;
}

pith_tensor *tensor_new_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                                pith_dtype dtype, pith_device device)
{
    return tensor_create("empty_strided", ndim, sizes, strides, dtype, device);
}

pith_tensor *tensor_view(const pith_tensor *base, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset)
{
    /* A view of a valid tensor can still break the invariant (unsqueeze's stride, a split
     * dim, expand's numel): See Note [Geometry fits in int64]. */
    if (!geometry_fits("view", ndim, sizes, strides, offset, dtype_itemsize(base->dtype)))
        return NULL;
    pith_tensor *t = tensor_alloc(base->storage, 0, base->dtype, base->device);
    if (!t)
        return NULL;
    storage_retain(base->storage);
    t->flags = base->flags & PITH_TENSOR_INFERENCE; /* See Note [Grad mode is per thread] */
    t->keys = base->keys & ~TENSOR_KEY_PYTHON;
    t->offset = offset;
    tensor_set_geometry(t, ndim, sizes, strides);
    return t;
}

pith_tensor *tensor_from_storage(pith_storage *storage, int ndim, const int64_t *sizes,
                                 const int64_t *strides, int64_t offset, pith_dtype dtype,
                                 pith_device device)
{
    const char *what = "tensor_from_storage";
    if (!storage)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "%s: storage is NULL", what);
    if (!tensor_args_valid(what, ndim, sizes, dtype, device))
        return NULL;
    if (offset < 0)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "%s: negative storage offset %" PRId64, what,
                              offset);
    int64_t numel = shape_numel_checked(ndim, sizes);
    if (numel < 0)
        return NULL;
    int64_t extent = numel;
    if (strides)
        extent = strided_extent(what, ndim, sizes, strides);
    if (extent < 0)
        return NULL;
    size_t need = 0;
    if (extent > 0) {
        if (offset > INT64_MAX - extent)
            return PITH_FAIL_NULL(PITH_ERR_VALUE, "%s: storage offset %" PRId64 " overflows",
                                  what, offset);
        if (!tensor_nbytes(what, offset + extent, dtype, &need))
            return NULL;
    }
    if (need > storage->nbytes)
        return PITH_FAIL_NULL(PITH_ERR_VALUE,
                              "%s: the geometry needs %zu bytes but the storage has %zu",
                              what, need, storage->nbytes);
    if (!geometry_fits(what, ndim, sizes, strides, offset, dtype_itemsize(dtype)))
        return NULL;
    pith_tensor *t = tensor_alloc(storage, 0, dtype, device);
    if (!t)
        return NULL;
    storage_retain(storage);
    t->offset = offset;
    tensor_set_geometry(t, ndim, sizes, strides);
    return t;
}

/* Note [Rebound view headers]
 * A compiled graph's executor (compile/executor.c) keeps one tensor header per view of a
 * per-run tensor (an input, or an output allocated by the run) and points it at that run's
 * storage instead of making a new tensor each run: a run allocates nothing but its
 * outputs. The geometry was fixed when the graph was compiled, and the run checked that
 * the input has it (sizes, and strides where the size is above 1), so the header's
 * geometry lies inside the new storage. The header is never handed out: outputs that are
 * views get tensors of their own (tensor_view of the header). */
void tensor_rebind_storage(pith_tensor *t, pith_storage *storage, int64_t offset,
                           const pith_tensor *like)
{
    pith_storage *old = t->storage;
    storage_retain(storage);
    t->storage = storage;
    t->offset = offset;
    t->flags = (t->flags & ~PITH_TENSOR_INFERENCE) |
               (like ? like->flags & PITH_TENSOR_INFERENCE : 0);
    storage_release(old);
}

pith_status tensor_resize_out(pith_tensor *out, int ndim, const int64_t *sizes)
{
    char have[256], want[256];
    if (shape_equal(out->ndim, out->sizes, ndim, sizes))
        return PITH_OK;
    if (out->numel != 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "out= tensor has shape %s but the result has shape %s; only an "
                              "empty out= tensor is resized",
                              shape_format(out->ndim, out->sizes, have, sizeof have),
                              shape_format(ndim, sizes, want, sizeof want));
    int64_t numel = shape_numel_checked(ndim, sizes);
    size_t nbytes;
    if (numel < 0 || !tensor_nbytes("out", numel, out->dtype, &nbytes) ||
        !geometry_fits("out", ndim, sizes, NULL, 0, dtype_itemsize(out->dtype)))
        return pith_last_status();
    pith_storage *storage = storage_new(nbytes, out->device);
    if (!storage)
        return pith_last_status();
    /* The version counter follows the tensor to its new bytes. */
    atomic_store(&storage->version, atomic_load(&out->storage->version));
    storage_release(out->storage);
    out->storage = storage;
    out->offset = 0;
    tensor_set_geometry(out, ndim, sizes, NULL);
    return PITH_OK;
}

/* ---- lifetime ---- */

void pith_retain(pith_tensor *t)
{
    if (t)
        atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
}

void (*tensor_autograd_release)(pith_tensor *t);

static void tensor_free(pith_tensor *t)
{
    if (t->autograd)
        tensor_autograd_release(t);
    atomic_fetch_sub_explicit(&live_tensors, 1, memory_order_relaxed);
    tensor_block *b = block_of_tensor(t);
    pith_storage *s = t->storage;
    if (s == &b->storage && atomic_load_explicit(&s->refcount, memory_order_acquire) == 1) {
        /* The common case: nobody else holds either half of the block. See Note [Tensor
         * blocks]. */
        block_free(b);
        return;
    }
    storage_release(s); /* may drop this block's storage half, or another block's */
    block_drop(b);
}

void pith_release(pith_tensor *t)
{
    if (!t)
        return;
    /* The sole holder needs no read-modify-write: nobody else can retain it meanwhile.
     * acq_rel rather than release + fence: TSan does not model standalone fences. */
    if (atomic_load_explicit(&t->refcount, memory_order_acquire) == 1)
        atomic_store_explicit(&t->refcount, 0, memory_order_relaxed);
    else if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1)
        return;
    /* See Note [PyObject preservation] in pyobj_slot.c: C owned the wrapper, so dropping
     * the last C reference drops the wrapper too. Its dealloc sees a C refcount of 0 and
     * leaves the tensor alone; if it resurrected the tensor instead (retained it), the new
     * holder's release frees it later. */
    uintptr_t slot = atomic_load_explicit(&t->pyobj, memory_order_acquire);
    if (slot & PITH_PYOBJ_OWNS) {
        pith_interpreter *tag = atomic_load_explicit(&t->tag, memory_order_acquire);
        void *pyobj = (void *)(slot & ~PITH_PYOBJ_OWNS);
        atomic_store_explicit(&t->pyobj, (uintptr_t)0, memory_order_release);
        if (tag && pyobj)
            interp_call_decref(tag, pyobj);
        if (atomic_load_explicit(&t->refcount, memory_order_acquire) != 0)
            return;
    }
    tensor_free(t);
}
