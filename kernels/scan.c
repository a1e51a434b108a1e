/* scan.c — the cumulative ops cumsum and cumprod, with their out= and in-place forms (CPU
 * and Meta kernels).
 *
 * Note [Scan dtypes and accumulators]
 * As PyTorch: the result dtype is dtype= when given, else out's dtype for the out= form,
 * else self's for the in-place form, else int64 for integer and bool inputs and self's
 * dtype otherwise. dtype= must equal out's dtype (out=) or self's (in place). A bool result
 * is not implemented (PyTorch neither). The input is converted to the result dtype first,
 * and each line is accumulated in PyTorch's CPU accumulator type of that dtype: uint64 for
 * the integers (so sums and products wrap, as int64 does in PyTorch, without undefined
 * behaviour), float for float16/bfloat16, and double for float32 and float64; each output
 * is the running accumulator rounded to the result dtype, so the results are PyTorch's
 * bit for bit. */
#include <string.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/indexing.h"
#include "kernels/ops_internal.h"
#include "kernels/out_target.h"
#include "kernels/reduce.h"

#define SC_TO_U64(x) ((uint64_t)(int64_t)(x))

/* Columns: dtype, element type, accumulator type, load into it, store from it. From the
 * dtype table (See Note [The dtype table] in core/dtype.h): the accumulator is its ACC;
 * integers load through int64_t, and everything but the 16-bit floats stores by a cast. */
#define SC_LOAD_integral(LOAD) SC_TO_U64
#define SC_LOAD_reduced(LOAD) LOAD
#define SC_LOAD_floating(LOAD) LOAD
#define SC_STORE_integral(T, STORE) (T)
#define SC_STORE_reduced(T, STORE) STORE
#define SC_STORE_floating(T, STORE) (T)
#define SC_COLUMNS_(M, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, ...)                      \
    M(E, T, ACC, SC_LOAD_##KIND(LOAD), SC_STORE_##KIND(T, STORE))
#define SC_ROW_(tag, M) PITH_DTYPE_COLUMNS(SC_COLUMNS_, tag, M)
#define SC_FORALL_DTYPES(M)                                                                 \
    PITH_FORALL_INTEGRAL_DTYPES(SC_ROW_, M) PITH_FORALL_FLOATING_DTYPES(SC_ROW_, M)

/* The lines run along the middle dim of a contiguous [outer, len, inner]; a block of up to
 * SC_BLOCK neighbouring lines is scanned together, so the inner loop reads memory in
 * order. Blocks are independent: they are split between threads. */
#define SC_BLOCK 64

typedef struct {
    int64_t outer, len, inner;
} scan_shape;

#define SC_SCAN_FN_(E, T, A, LOAD, STORE)                                                   \
    static void scan_##E(const char *xs, char *ys, const scan_shape *s, bool prod,         \
                         int nthreads)                                                      \
    {                                                                                       \
        int64_t len = s->len, inner = s->inner;                                             \
        if (inner == 1) { /* lines along the fastest dim: one running value each */         \
            PITH_PARALLEL_FOR(o, s->outer, nthreads, {                                      \
                const T *x = (const T *)xs + o * len;                                       \
                T *y = (T *)ys + o * len;                                                   \
                A acc = (A)(prod ? 1 : 0);                                                  \
                if (prod)                                                                   \
                    for (int64_t j = 0; j < len; j++)                                       \
                        y[j] = STORE(acc *= (A)LOAD(x[j]));                                 \
                else                                                                        \
                    for (int64_t j = 0; j < len; j++)                                       \
                        y[j] = STORE(acc += (A)LOAD(x[j]));                                 \
            });                                                                             \
            return;                                                                         \
        }                                                                                   \
        int64_t blocks = (inner + SC_BLOCK - 1) / SC_BLOCK;                                 \
        PITH_PARALLEL_FOR(b, s->outer * blocks, nthreads, {                                 \
            int64_t i0 = (b % blocks) * SC_BLOCK;                                           \
            int64_t m = inner - i0 < SC_BLOCK ? inner - i0 : SC_BLOCK;                      \
            const T *x = (const T *)xs + (b / blocks) * len * inner + i0;                   \
            T *y = (T *)ys + (b / blocks) * len * inner + i0;                               \
            A acc[SC_BLOCK];                                                                \
            for (int64_t q = 0; q < m; q++)                                                 \
                acc[q] = (A)(prod ? 1 : 0);                                                 \
            for (int64_t j = 0; j < len; j++, x += inner, y += inner) {                     \
                if (prod)                                                                   \
                    for (int64_t q = 0; q < m; q++)                                         \
                        acc[q] *= (A)LOAD(x[q]);                                            \
                else                                                                        \
                    for (int64_t q = 0; q < m; q++)                                         \
                        acc[q] += (A)LOAD(x[q]);                                            \
                for (int64_t q = 0; q < m; q++)                                             \
                    y[q] = STORE(acc[q]);                                                   \
            }                                                                               \
        });                                                                                 \
    }
SC_FORALL_DTYPES(SC_SCAN_FN_)
#undef SC_SCAN_FN_

/* Which form of the op runs. */
typedef enum { SCAN_FUNCTIONAL, SCAN_OUT, SCAN_INPLACE } scan_form;

/* The result dtype (See Note [Scan dtypes and accumulators]); `target` is out or self. */
static pith_status scan_result_dtype(const char *op, const pith_tensor *x, pith_opt_dtype dtype,
                                     scan_form form, const pith_tensor *target,
                                     pith_dtype *result)
{
    if (dtype >= 0 && !dtype_valid(dtype))
        return pith_set_error(PITH_ERR_TYPE, "%s: invalid dtype %d", op, dtype);
    if (dtype >= 0)
        *result = (pith_dtype)dtype;
    else if (form != SCAN_FUNCTIONAL)
        *result = target->dtype;
    else
        *result = dtype_is_floating(x->dtype) ? x->dtype : PITH_INT64;
    if (form == SCAN_OUT && *result != target->dtype)
        return out_dtype_check(op, target, *result);
    if (form == SCAN_INPLACE && *result != x->dtype)
        return pith_set_error(PITH_ERR_TYPE,
                              "%s: Bad in-place call: input tensor dtype %s and output tensor "
                              "dtype %s should match",
                              op, pith_dtype_name(x->dtype), pith_dtype_name(*result));
    if (*result == PITH_BOOL)
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED, "%s: not implemented for 'Bool'", op);
    return PITH_OK;
}

static pith_tensor *contiguous_of(const pith_tensor *x)
{
    pith_value ret[1];
    if (pith_call_contiguous(ret, x) != PITH_OK)
        return NULL;
    return ret[0].u.t;
}

/* Scans `x` (any layout) along `dim` into the contiguous `dst` of x's shape and `result`. */
static pith_status scan_compute(const pith_tensor *x, int dim, pith_dtype result, bool prod,
                                pith_tensor *dst)
{
    if (dst->numel == 0)
        return PITH_OK;
    pith_tensor *converted = reduce_convert(x, result);
    pith_tensor *src = converted ? contiguous_of(converted) : NULL;
    pith_release(converted);
    if (!src)
        return pith_last_status();
    scan_shape s = {1, x->ndim ? x->sizes[dim] : 1, 1};
    for (int i = 0; i < x->ndim; i++) {
        if (i < dim)
            s.outer *= x->sizes[i];
        else if (i > dim)
            s.inner *= x->sizes[i];
    }
    int nthreads = parallel_threads_for(x->numel);
    switch (result) {
#define SC_CASE_(E, T, A, LOAD, STORE)                                                      \
    case E:                                                                                 \
        scan_##E(tensor_data(src), tensor_data(dst), &s, prod, nthreads);                   \
        break;
        SC_FORALL_DTYPES(SC_CASE_)
#undef SC_CASE_
    default:
        break; /* bool: refused by scan_result_dtype */
    }
    pith_release(src);
    return PITH_OK;
}

static pith_status scan_impl(pith_value *ret, const char *op, bool prod, scan_form form,
                             const pith_tensor *self, int64_t dim, pith_opt_dtype dtype,
                             pith_tensor *target, pith_device device)
{
    int d = 0;
    pith_dtype result = PITH_FLOAT32;
    if ((device == PITH_CPU && (reduce_check_cpu(op, self) != PITH_OK ||
                                reduce_check_cpu(op, target) != PITH_OK)) ||
        reduce_dim_wrap(op, self, dim, &d) != PITH_OK ||
        scan_result_dtype(op, self, dtype, form, target, &result) != PITH_OK)
        return pith_last_status();
    if (form == SCAN_FUNCTIONAL) {
        pith_tensor *out = tensor_new(self->ndim, self->sizes, result, device);
        if (out && device == PITH_CPU && scan_compute(self, d, result, prod, out) != PITH_OK) {
            pith_release(out);
            return pith_last_status();
        }
        return ret_tensor(ret, out);
    }
    pith_tensor *dst;
    if ((form == SCAN_OUT && devices_check(op, self, target) != PITH_OK) ||
        elementwise_output(op, form == SCAN_OUT ? ELEMENTWISE_OUT : ELEMENTWISE_INPLACE,
                           target, self->ndim, self->sizes, result, device, &dst) != PITH_OK)
        return pith_last_status();
    if (device == PITH_META) {
        tensor_bump_version(target);
        return ret_self(ret, target);
    }
    dst = out_target_begin(target, &self, 1, true);
    pith_status status = dst ? scan_compute(self, d, result, prod, dst) : pith_last_status();
    if (status == PITH_OK)
        return out_target_end(op, target, dst) == PITH_OK ? ret_self(ret, target)
                                                           : pith_last_status();
    pith_release(dst);
    return status;
}

/* The kernels of each scan, functional, out= and in place, for both devices (device_kernel
 * in ops/ops.toml: their <id>_cpu and <id>_meta are in ops/generated/device_forwarders.c). */
pith_status cumsum_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         int64_t dim, pith_opt_dtype dtype, pith_device device)
{
    return scan_impl(ret, "cumsum", false, SCAN_FUNCTIONAL, self, dim, dtype, NULL, device);
}

pith_status cumsum_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             int64_t dim, pith_opt_dtype dtype, const pith_tensor *out,
                             pith_device device)
{
    return scan_impl(ret, "cumsum", false, SCAN_OUT, self, dim, dtype, (pith_tensor *)out,
                     device);
}

pith_status cumsum__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                           int64_t dim, pith_opt_dtype dtype, pith_device device)
{
    return scan_impl(ret, "cumsum_", false, SCAN_INPLACE, self, dim, dtype, (pith_tensor *)self,
                     device);
}

pith_status cumprod_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                          int64_t dim, pith_opt_dtype dtype, pith_device device)
{
    return scan_impl(ret, "cumprod", true, SCAN_FUNCTIONAL, self, dim, dtype, NULL, device);
}

pith_status cumprod_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              int64_t dim, pith_opt_dtype dtype, const pith_tensor *out,
                              pith_device device)
{
    return scan_impl(ret, "cumprod", true, SCAN_OUT, self, dim, dtype, (pith_tensor *)out,
                     device);
}

pith_status cumprod__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            int64_t dim, pith_opt_dtype dtype, pith_device device)
{
    return scan_impl(ret, "cumprod_", true, SCAN_INPLACE, self, dim, dtype, (pith_tensor *)self,
                     device);
}
