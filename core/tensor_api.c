/* tensor_api.c — the public tensor functions of core: factories (empty, zeros, full,
 * from_data, from_blob, ...), metadata getters and element reads.
 *
 * Metadata of a wrapper subclass may come from its interpreter: see metadata_policy. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/interpreter_internal.h"
#include "core/tensor.h"

#define STR_(x) #x
#define STR(x) STR_(x)

const char *pith_version(void)
{
    return STR(PITH_VERSION_MAJOR) "." STR(PITH_VERSION_MINOR) "." STR(PITH_VERSION_PATCH);
}

/* ---- factories ---- */

pith_tensor *pith_empty(int ndim, const int64_t *sizes, pith_dtype dtype)
{
    return tensor_new(ndim, sizes, dtype, PITH_CPU);
}

pith_tensor *pith_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                                pith_dtype dtype, pith_device device)
{
    return tensor_new_strided(ndim, sizes, strides, dtype, device);
}

pith_tensor *pith_zeros(int ndim, const int64_t *sizes, pith_dtype dtype)
{
    pith_tensor *t = tensor_new(ndim, sizes, dtype, PITH_CPU);
    if (t && t->storage->data) /* all-zero bits are zero in every dtype */
        memset(t->storage->data, 0, t->storage->nbytes);
    return t;
}

/* PyTorch refuses fill values that overflow the dtype ("value cannot be converted to type
 * int8 without overflow"); truncation of a fraction is allowed. */
static bool fill_value_fits(double v, pith_dtype dtype)
{
    double lo, hi;
    switch (dtype) {
    case PITH_BOOL: return true;
    case PITH_UINT8: lo = 0; hi = UINT8_MAX; break;
    case PITH_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case PITH_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case PITH_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case PITH_INT64: return !isnan(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    case PITH_FLOAT16: return !isfinite(v) || fabs(v) <= 65504.0;
    case PITH_BFLOAT16: return !isfinite(v) || fabs(v) <= 3.3895313892515355e38;
    case PITH_FLOAT32: return !isfinite(v) || fabs(v) <= 3.4028234663852886e38;
    case PITH_FLOAT64: return true;
    default: return false;
    }
    /* integers: anything that truncates into [lo, hi] */
    return !isnan(v) && v > lo - 1.0 && v < hi + 1.0;
}

/* Fills `n` elements at `dst` with the element at `dst` by doubling copies. */
static void fill_replicate(char *dst, size_t itemsize, int64_t n)
{
    size_t total = (size_t)n * itemsize, done = itemsize;
    while (done < total) {
        size_t chunk = done < total - done ? done : total - done;
        memcpy(dst + done, dst, chunk);
        done += chunk;
    }
}

static pith_tensor *tensor_full(const char *what, int ndim, const int64_t *sizes,
                                double value, pith_dtype dtype)
{
    if (dtype_valid((int)dtype) && !fill_value_fits(value, dtype))
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "%s: value %g cannot be converted to type %s "
                              "without overflow", what, value, pith_dtype_name(dtype));
    pith_tensor *t = tensor_new(ndim, sizes, dtype, PITH_CPU);
    if (!t || t->numel == 0)
        return t;
    char *data = t->storage->data;
    dtype_store_double(dtype, data, value);
    fill_replicate(data, dtype_itemsize(dtype), t->numel);
    return t;
}

pith_tensor *pith_full(int ndim, const int64_t *sizes, double value, pith_dtype dtype)
{
    return tensor_full("full", ndim, sizes, value, dtype);
}

pith_tensor *pith_ones(int ndim, const int64_t *sizes, pith_dtype dtype)
{
    return tensor_full("ones", ndim, sizes, 1.0, dtype);
}

pith_tensor *pith_scalar_tensor(double value, pith_dtype dtype)
{
    return tensor_full("scalar_tensor", 0, NULL, value, dtype);
}

pith_tensor *pith_from_data(const void *data, int ndim, const int64_t *sizes, pith_dtype dtype)
{
    pith_tensor *t = tensor_new(ndim, sizes, dtype, PITH_CPU);
    if (!t)
        return NULL;
    if (t->numel > 0) {
        if (!data) {
            pith_release(t);
            return PITH_FAIL_NULL(PITH_ERR_VALUE, "from_data: data is NULL");
        }
        memcpy(t->storage->data, data, t->storage->nbytes);
    }
    return t;
}

pith_tensor *pith_from_blob(void *data, int ndim, const int64_t *sizes, const int64_t *strides,
                            pith_dtype dtype, void (*deleter)(void *data, void *ctx), void *ctx)
{
    /* On failure the caller keeps `data` and the deleter does not run. */
    size_t nbytes;
    if (!tensor_geometry_check("from_blob", ndim, sizes, strides, dtype, PITH_CPU, &nbytes))
        return NULL;
    if (!data && nbytes > 0)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "from_blob: data is NULL");
    if ((uintptr_t)data % dtype_itemsize(dtype) != 0)
        return PITH_FAIL_NULL(PITH_ERR_VALUE,
                              "from_blob: data %p is not aligned to %zu-byte %s elements",
                              data, dtype_itemsize(dtype), pith_dtype_name(dtype));
    pith_storage *storage = storage_from_blob(data, nbytes, deleter, ctx);
    if (!storage)
        return NULL;
    pith_tensor *t = tensor_from_storage(storage, ndim, sizes, strides, 0, dtype, PITH_CPU);
    if (!t) { /* out of memory: the caller keeps `data`, so forget it before releasing */
        storage->data = NULL;
        storage->deleter = NULL;
    }
    storage_release(storage);
    return t;
}

/* ---- metadata ---- */

/* Whether metadata `flag` (PITH_TENSOR_POLICY_*) comes from the tensor's interpreter: a
 * wrapper subclass set the policy, and the tensor is tagged. */
static bool metadata_policy(const pith_tensor *t, uint32_t flag)
{
    return (t->flags & flag) && atomic_load_explicit(&t->tag, memory_order_acquire);
}

#define CHECK_TENSOR(t, what, sentinel)                                                     \
    do {                                                                                    \
        if (!(t)) {                                                                         \
            pith_set_error(PITH_ERR_VALUE, "%s: tensor is NULL", (what));                  \
            return (sentinel);                                                              \
        }                                                                                   \
    } while (0)

/* The sizes (or strides) of t into values[PITH_MAX_DIMS]; returns ndim or -1. */
static int tensor_geometry(const pith_tensor *t, bool want_sizes, int64_t *values)
{
    uint32_t flag = want_sizes ? PITH_TENSOR_POLICY_SIZES : PITH_TENSOR_POLICY_STRIDES;
    if (metadata_policy(t, flag)) {
        int ndim;
        pith_status s = want_sizes ? interp_call_sizes(t, &ndim, values)
                                   : interp_call_strides(t, &ndim, values);
        return s == PITH_OK ? ndim : -1;
    }
    memcpy(values, want_sizes ? t->sizes : t->strides, (size_t)t->ndim * sizeof *values);
    return t->ndim;
}

int pith_ndim(const pith_tensor *t)
{
    CHECK_TENSOR(t, "ndim", -1);
    if (!metadata_policy(t, PITH_TENSOR_POLICY_SIZES))
        return t->ndim;
    int64_t sizes[PITH_MAX_DIMS];
    return tensor_geometry(t, true, sizes);
}

static int64_t geometry_at(const pith_tensor *t, bool want_sizes, int dim)
{
    int64_t values[PITH_MAX_DIMS];
    int ndim = tensor_geometry(t, want_sizes, values);
    if (ndim < 0)
        return -1;
    /* size(dim) of a 0-dim tensor has no answer, unlike dim_wrap's reductions. */
    if (ndim == 0) {
        pith_set_error(PITH_ERR_INDEX,
                       "Dimension specified as %d but tensor has no dimensions", dim);
        return -1;
    }
    if (dim < -ndim || dim >= ndim) {
        pith_set_error(PITH_ERR_INDEX,
                       "Dimension out of range (expected to be in range of [%d, %d], but got "
                       "%d)", -ndim, ndim - 1, dim);
        return -1;
    }
    return values[dim < 0 ? dim + ndim : dim];
}

int64_t pith_size(const pith_tensor *t, int dim)
{
    CHECK_TENSOR(t, "size", -1);
    return geometry_at(t, true, dim);
}

int64_t pith_stride(const pith_tensor *t, int dim)
{
    CHECK_TENSOR(t, "stride", -1);
    return geometry_at(t, false, dim);
}

int64_t pith_numel(const pith_tensor *t)
{
    CHECK_TENSOR(t, "numel", -1);
    if (!metadata_policy(t, PITH_TENSOR_POLICY_SIZES))
        return t->numel;
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = tensor_geometry(t, true, sizes);
    return ndim < 0 ? -1 : shape_numel_checked(ndim, sizes);
}

int pith_sizes(const pith_tensor *t, int64_t *out)
{
    CHECK_TENSOR(t, "sizes", -1);
    if (!out) {
        pith_set_error(PITH_ERR_VALUE, "sizes: out is NULL");
        return -1;
    }
    return tensor_geometry(t, true, out);
}

int pith_strides(const pith_tensor *t, int64_t *out)
{
    CHECK_TENSOR(t, "strides", -1);
    if (!out) {
        pith_set_error(PITH_ERR_VALUE, "strides: out is NULL");
        return -1;
    }
    return tensor_geometry(t, false, out);
}

pith_dtype pith_tensor_dtype(const pith_tensor *t)
{
    CHECK_TENSOR(t, "dtype", PITH_FLOAT32);
    return t->dtype;
}

pith_device pith_tensor_device(const pith_tensor *t)
{
    CHECK_TENSOR(t, "device", PITH_CPU);
    if (!metadata_policy(t, PITH_TENSOR_POLICY_DEVICE))
        return t->device;
    pith_device device = PITH_CPU;
    interp_call_device(t, &device);
    return device;
}

void *pith_data_ptr(const pith_tensor *t)
{
    CHECK_TENSOR(t, "data_ptr", NULL);
    return tensor_data(t);
}

bool pith_is_contiguous(const pith_tensor *t)
{
    CHECK_TENSOR(t, "is_contiguous", false);
    if (!metadata_policy(t, PITH_TENSOR_POLICY_STRIDES))
        return t->contiguous;
    bool contiguous = false;
    if (interp_call_is_contiguous(t, &contiguous) != PITH_OK)
        return false;
    return contiguous;
}

int64_t pith_storage_offset(const pith_tensor *t)
{
    CHECK_TENSOR(t, "storage_offset", -1);
    return t->offset;
}

int64_t pith_version_counter(const pith_tensor *t)
{
    CHECK_TENSOR(t, "version_counter", -1);
    return (int64_t)atomic_load_explicit(&t->storage->version, memory_order_relaxed);
}

int64_t pith_storage_nbytes(const pith_tensor *t)
{
    CHECK_TENSOR(t, "storage_nbytes", -1);
    return (int64_t)t->storage->nbytes;
}

bool pith_shares_storage(const pith_tensor *a, const pith_tensor *b)
{
    CHECK_TENSOR(a, "shares_storage", false);
    CHECK_TENSOR(b, "shares_storage", false);
    return a->storage == b->storage;
}

/* ---- element reads ---- */

pith_status pith_item_at(const pith_tensor *t, int64_t flat_index, double *out)
{
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "item: tensor is NULL");
    if (!out)
        return pith_set_error(PITH_ERR_VALUE, "item: out is NULL");
    if (t->device == PITH_META)
        return pith_set_error(PITH_ERR_VALUE, "item: cannot read the data of a meta tensor");
    if (flat_index < 0 || flat_index >= t->numel)
        return pith_set_error(PITH_ERR_INDEX,
                              "item: index %" PRId64 " is out of bounds for a tensor with %"
                              PRId64 " elements", flat_index, t->numel);
    /* Unravel the row-major index into a strided element offset. */
    int64_t offset = 0, rest = flat_index;
    for (int d = t->ndim - 1; d >= 0; d--) {
        offset += (rest % t->sizes[d]) * t->strides[d];
        rest /= t->sizes[d];
    }
    const char *p = tensor_data(t) + offset * (int64_t)dtype_itemsize(t->dtype);
    *out = dtype_load_double(t->dtype, p);
    return PITH_OK;
}

pith_status pith_item(const pith_tensor *t, double *out)
{
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "item: tensor is NULL");
    if (t->numel != 1)
        return pith_set_error(PITH_ERR_VALUE,
                              "a Tensor with %" PRId64 " elements cannot be converted to Scalar",
                              t->numel);
    return pith_item_at(t, 0, out);
}
