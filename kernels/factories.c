/* factories.c — tensors made from nothing: empty, empty_strided, zeros, ones, full, eye;
 * and the element helpers of factories.h.
 *
 * The Meta kernels run the same validation and return a tensor on the meta device (no
 * data). arange and linspace are in factories_range.c, the random factories in random.c. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/factories.h"

/* ---- options ---- */

pith_status factory_dtype(const char *op, pith_opt_dtype dtype, pith_dtype dflt,
                          pith_dtype *out)
{
    if (dtype == -1) {
        *out = dflt;
        return PITH_OK;
    }
    if (!dtype_valid(dtype))
        return pith_set_error(PITH_ERR_TYPE, "%s: invalid dtype %d", op, dtype);
    *out = (pith_dtype)dtype;
    return PITH_OK;
}

pith_status factory_device(const char *op, pith_opt_device device, pith_device *out)
{
    if (device == -1 || device == PITH_CPU || device == PITH_META) {
        *out = device == PITH_META ? PITH_META : PITH_CPU;
        return PITH_OK;
    }
    return pith_set_error(PITH_ERR_VALUE, "%s: invalid device %d", op, device);
}

pith_tensor *factory_new(const char *op, pith_int_list size, pith_dtype dtype,
                         pith_device device)
{
    if (size.n > PITH_MAX_DIMS)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "%s: a tensor has at most %d dims, got %zu sizes",
                              op, PITH_MAX_DIMS, size.n);
    return tensor_new((int)size.n, size.data, dtype, device);
}

/* ---- elements ---- */

void element_store_int64(pith_dtype dtype, void *out, int64_t v)
{
    switch (dtype) {
    case PITH_BOOL: *(uint8_t *)out = v != 0; break;
    case PITH_UINT8: *(uint8_t *)out = (uint8_t)v; break;
    case PITH_INT8: *(uint8_t *)out = (uint8_t)v; break;
    case PITH_INT16: *(uint16_t *)out = (uint16_t)v; break;
    case PITH_INT32: *(uint32_t *)out = (uint32_t)v; break;
    case PITH_INT64: *(int64_t *)out = v; break;
    case PITH_FLOAT16: *(pith_half *)out = float_to_half((float)v); break;
    case PITH_BFLOAT16: *(pith_bfloat16 *)out = float_to_bfloat16((float)v); break;
    case PITH_FLOAT32: *(float *)out = (float)v; break;
    case PITH_FLOAT64: *(double *)out = (double)v; break;
    }
}

void element_store_double(pith_dtype dtype, void *out, double v)
{
    switch (dtype) {
    case PITH_FLOAT16: *(pith_half *)out = float_to_half((float)v); break;
    case PITH_BFLOAT16: *(pith_bfloat16 *)out = float_to_bfloat16((float)v); break;
    case PITH_FLOAT32: *(float *)out = (float)v; break;
    case PITH_FLOAT64: *(double *)out = v; break;
    default: element_store_int64(dtype, out, (int64_t)v); break;
    }
}

/* PyTorch's names for the C++ types, as its overflow message spells them. */
static const char *dtype_cpp_name(pith_dtype dtype)
{
    static const char *const names[PITH_NUM_DTYPES] = {
        "bool", "uint8_t", "int8_t", "int16_t", "int", "int64_t",
        "at::Half", "at::BFloat16", "float", "double"};
    return names[dtype];
}

/* The range of an integer dtype (bool is [0, 1]). */
static void dtype_int_range(pith_dtype dtype, int64_t *lo, int64_t *hi)
{
    static const int64_t los[] = {0, 0, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
    static const int64_t his[] = {1, UINT8_MAX, INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
    *lo = los[dtype];
    *hi = his[dtype];
}

/* The largest finite value: (1 - 2^-digits) * 2^max_exponent (float64's is DBL_MAX, which
 * no double exceeds, so its check never fires). */
static double dtype_float_max(pith_dtype dtype)
{
    int digits, max_exponent;
    if (!pith_dtype_float_format(dtype, &digits, &max_exponent) || dtype == PITH_FLOAT64)
        return INFINITY;
    return ldexp(1.0 - ldexp(1.0, -digits), max_exponent);
}

/* Whether `v` overflows `dtype`, following c10::overflows. */
static bool int64_overflows(int64_t v, pith_dtype dtype)
{
    if (dtype_is_floating(dtype))
        return dtype == PITH_FLOAT16 && (v > 65504 || v < -65504);
    int64_t lo, hi;
    dtype_int_range(dtype, &lo, &hi);
    if (lo == 0) /* unsigned: negatives wrap, down to -max */
        return v > hi || (v < 0 && 0 - (uint64_t)v > (uint64_t)hi);
    return v < lo || v > hi;
}

static bool double_overflows(double v, pith_dtype dtype)
{
    if (dtype_is_floating(dtype))
        return !isinf(v) && !isnan(v) && fabs(v) > dtype_float_max(dtype);
    if (isnan(v))
        return true;
    int64_t lo, hi;
    dtype_int_range(dtype, &lo, &hi);
    if (dtype == PITH_INT64) /* (double)INT64_MAX rounds up to 2^63 */
        return v < -0x1p63 || v >= 0x1p63;
    return v < (double)lo || v > (double)hi;
}

pith_status scalar_encode(const char *op, pith_scalar value, pith_dtype dtype, void *out)
{
    switch (value.kind) {
    case PITH_SCALAR_BOOL:
        element_store_int64(dtype, out, value.u.b ? 1 : 0);
        return PITH_OK;
    case PITH_SCALAR_INT:
        if (int64_overflows(value.u.i, dtype))
            break;
        element_store_int64(dtype, out, value.u.i);
        return PITH_OK;
    case PITH_SCALAR_DOUBLE:
        if (double_overflows(value.u.d, dtype))
            break;
        element_store_double(dtype, out, value.u.d);
        return PITH_OK;
    default:
        return pith_set_error(PITH_ERR_TYPE, "%s: expected a number, got None", op);
    }
    return pith_set_error(PITH_ERR_VALUE, "%s: value cannot be converted to type %s without overflow",
                          op, dtype_cpp_name(dtype));
}

/* Fills [begin, end) of `n` copies; one thread's share of bytes_fill. */
static void bytes_fill_range(char *data, int64_t begin, int64_t end, const void *elem,
                             size_t itemsize)
{
    switch (itemsize) {
    case 1: memset(data + begin, *(const uint8_t *)elem, (size_t)(end - begin)); break;
    case 2: {
        uint16_t v;
        memcpy(&v, elem, 2);
        for (int64_t i = begin; i < end; i++)
            ((uint16_t *)data)[i] = v;
        break;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, elem, 4);
        for (int64_t i = begin; i < end; i++)
            ((uint32_t *)data)[i] = v;
        break;
    }
    default: {
        uint64_t v;
        memcpy(&v, elem, 8);
        for (int64_t i = begin; i < end; i++)
            ((uint64_t *)data)[i] = v;
        break;
    }
    }
}

void bytes_fill(void *data, int64_t n, const void *elem, size_t itemsize)
{
    if (!data || n <= 0)
        return;
    int threads = parallel_threads_for(n);
    if (threads <= 1) {
        bytes_fill_range(data, 0, n, elem, itemsize);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        int64_t chunk = (n + threads - 1) / threads;
        int64_t begin = (int64_t)omp_get_thread_num() * chunk;
        int64_t end = begin + chunk < n ? begin + chunk : n;
        if (begin < end)
            bytes_fill_range(data, begin, end, elem, itemsize);
    }
}

/* ---- empty, empty_strided, zeros, ones, full ---- */

static pith_status empty_make(pith_value *ret, pith_int_list size, pith_opt_dtype dtype,
                              pith_opt_device device, bool force_meta)
{
    pith_dtype dt = PITH_FLOAT32;
    pith_device dev = PITH_CPU;
    if (factory_dtype("empty", dtype, pith_get_default_dtype(), &dt) != PITH_OK ||
        factory_device("empty", device, &dev) != PITH_OK)
        return pith_last_status();
    return ret_tensor(ret, factory_new("empty", size, dt, force_meta ? PITH_META : dev));
}

pith_status empty_kernel(pith_keyset ks, pith_value *ret, pith_int_list size,
                         pith_opt_dtype dtype, pith_opt_device device, pith_device kernel_device)
{
    return empty_make(ret, size, dtype, device, kernel_device == PITH_META);
}

static pith_status empty_strided_make(pith_value *ret, pith_int_list size, pith_int_list stride,
                                      pith_opt_dtype dtype, pith_opt_device device,
                                      bool force_meta)
{
    pith_dtype dt = PITH_FLOAT32;
    pith_device dev = PITH_CPU;
    if (factory_dtype("empty_strided", dtype, pith_get_default_dtype(), &dt) != PITH_OK ||
        factory_device("empty_strided", device, &dev) != PITH_OK)
        return pith_last_status();
    if (size.n != stride.n)
        return pith_set_error(PITH_ERR_VALUE,
                              "empty_strided: mismatch in length of strides and shape (%zu sizes, "
                              "%zu strides)",
                              size.n, stride.n);
    if (size.n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "empty_strided: a tensor has at most %d dims, got %zu sizes",
                              PITH_MAX_DIMS, size.n);
    return ret_tensor(ret, tensor_new_strided((int)size.n, size.data, stride.data, dt,
                                              force_meta ? PITH_META : dev));
}

pith_status empty_strided_kernel(pith_keyset ks, pith_value *ret, pith_int_list size,
                                 pith_int_list stride, pith_opt_dtype dtype,
                                 pith_opt_device device, pith_device kernel_device)
{
    return empty_strided_make(ret, size, stride, dtype, device, kernel_device == PITH_META);
}

/* full / zeros / ones: a new tensor filled with `value`; `dflt` is the dtype for None. */
static pith_status full_make(pith_value *ret, const char *op, pith_int_list size,
                             pith_scalar value, pith_dtype dflt, pith_opt_dtype dtype,
                             pith_opt_device device, bool force_meta)
{
    pith_dtype dt = PITH_FLOAT32;
    pith_device dev = PITH_CPU;
    unsigned char elem[8];
    if (factory_dtype(op, dtype, dflt, &dt) != PITH_OK ||
        factory_device(op, device, &dev) != PITH_OK ||
        scalar_encode(op, value, dt, elem) != PITH_OK)
        return pith_last_status();
    pith_tensor *t = factory_new(op, size, dt, force_meta ? PITH_META : dev);
    if (!t)
        return pith_last_status();
    bytes_fill(tensor_data(t), t->numel, elem, pith_dtype_size(dt));
    return ret_tensor(ret, t);
}

/* zeros and ones: full of 0 or 1 in the default dtype unless given one. Their <id>_cpu and
 * <id>_meta (device_kernel in ops/ops.toml) pass the kernel's own device, which for Meta
 * forces a Meta result whatever `device` says. */
pith_status zeros_kernel(pith_keyset ks, pith_value *ret, pith_int_list size,
                         pith_opt_dtype dtype, pith_opt_device device, pith_device kernel_device)
{
    return full_make(ret, "zeros", size, scalar_from_int(0), pith_get_default_dtype(), dtype,
                     device, kernel_device == PITH_META);
}

pith_status ones_kernel(pith_keyset ks, pith_value *ret, pith_int_list size, pith_opt_dtype dtype,
                        pith_opt_device device, pith_device kernel_device)
{
    return full_make(ret, "ones", size, scalar_from_int(1), pith_get_default_dtype(), dtype,
                     device, kernel_device == PITH_META);
}

/* full infers its dtype from the fill value when none is given: bool, int64, or the
 * default float (PyTorch). */
static pith_dtype scalar_default_dtype(pith_scalar s)
{
    return s.kind == PITH_SCALAR_BOOL ? PITH_BOOL
           : s.kind == PITH_SCALAR_INT ? PITH_INT64
                                       : pith_get_default_dtype();
}

pith_status full_kernel(pith_keyset ks, pith_value *ret, pith_int_list size,
                        pith_scalar fill_value, pith_opt_dtype dtype, pith_opt_device device,
                        pith_device kernel_device)
{
    return full_make(ret, "full", size, fill_value, scalar_default_dtype(fill_value), dtype,
                     device, kernel_device == PITH_META);
}

/* ---- eye ---- */

static pith_status eye_make(pith_value *ret, int64_t n, pith_opt_int m, pith_opt_dtype dtype,
                            pith_opt_device device, bool force_meta)
{
    int64_t cols = m.present ? m.value : n;
    if (n < 0)
        return pith_set_error(PITH_ERR_VALUE, "eye: n must be greater or equal to 0, got %lld",
                              (long long)n);
    if (cols < 0)
        return pith_set_error(PITH_ERR_VALUE, "eye: m must be greater or equal to 0, got %lld",
                              (long long)cols);
    int64_t sizes[2] = {n, cols};
    pith_status status = full_make(ret, "eye", (pith_int_list){sizes, 2}, scalar_from_int(0),
                                   pith_get_default_dtype(), dtype, device, force_meta);
    if (status != PITH_OK)
        return status;
    pith_tensor *t = ret[0].u.t;
    char *data = tensor_data(t);
    if (data) {
        size_t itemsize = pith_dtype_size(t->dtype);
        unsigned char one[8];
        element_store_int64(t->dtype, one, 1);
        int64_t diag = n < cols ? n : cols;
        for (int64_t i = 0; i < diag; i++)
            memcpy(data + (size_t)(i * cols + i) * itemsize, one, itemsize);
    }
    return PITH_OK;
}

pith_status eye_kernel(pith_keyset ks, pith_value *ret, int64_t n, pith_opt_int m,
                       pith_opt_dtype dtype, pith_opt_device device, pith_device kernel_device)
{
    return eye_make(ret, n, m, dtype, device, kernel_device == PITH_META);
}

