/* api_views_factories.c — the public C entry points (pith/ops.h) of the views, the
 * copying and combining ops, and the range and random factories, plus pith_manual_seed.
 *
 * Each converts its plain C arguments (int dims, int64_t sizes, doubles) into the typed
 * arguments of the op table and calls the generated pith_call_<id>, so every call goes
 * through the dispatcher. Tensor-returning functions return NULL on error; list results
 * are arrays of new references freed with pith_tensor_list_free. */
#include <math.h>
#include <stdlib.h>

#include "core/interpreter_internal.h"
#include "kernels/ops_internal.h"
#include "kernels/random.h"

/* The tensor result of a call, or NULL when it failed. */
static pith_tensor *tensor_result(pith_status status, const pith_value *ret)
{
    return status == PITH_OK ? ret[0].u.t : NULL;
}

/* The Tensor[] result of a call as a caller-owned array (never NULL on success, even when
 * empty), or NULL when it failed. */
static pith_tensor **list_result(pith_status status, const pith_value *ret, size_t *n)
{
    if (status != PITH_OK)
        return NULL;
    pith_tensor **list = ret[0].u.tensors.data;
    size_t count = ret[0].u.tensors.n;
    if (!list && !(list = malloc(sizeof *list)))
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "cannot allocate a tensor list");
    *n = count;
    return list;
}

/* `ndim` int sizes as an int list; false (error set) when ndim is out of range. */
static bool int_list_check(const char *fn, int ndim)
{
    if (ndim < 0 || ndim > PITH_MAX_DIMS) {
        pith_set_error(PITH_ERR_VALUE, "%s: ndim %d is out of range [0, %d]", fn, ndim,
                       PITH_MAX_DIMS);
        return false;
    }
    return true;
}

/* Copies `n` int dims into `buf` (PITH_MAX_DIMS long); false with the error set when the
 * count is out of range or dims is NULL. */
static bool dims_from_ints(const char *fn, int n, const int *dims, int64_t *buf)
{
    if (!int_list_check(fn, n))
        return false;
    if (n > 0 && !dims) {
        pith_set_error(PITH_ERR_VALUE, "%s: argument 'dims' is NULL", fn);
        return false;
    }
    for (int i = 0; i < n; i++)
        buf[i] = dims[i];
    return true;
}

static pith_int_list sizes_list(int ndim, const int64_t *sizes)
{
    return (pith_int_list){sizes, (size_t)ndim};
}

/* A C double as a Scalar: integral values become ints, so that pith_arange(0, 10, 1, -1)
 * infers int64 as torch.arange(0, 10, 1) does, and pith_arange(0, 1, 0.1, -1) float32. */
static pith_scalar scalar_from_c_double(double v)
{
    if (v == trunc(v) && v >= -0x1p63 && v < 0x1p63)
        return scalar_from_int((int64_t)v);
    return scalar_from_double(v);
}

/* ---- views ---- */

pith_tensor *pith_view(const pith_tensor *x, int ndim, const int64_t *sizes)
{
    pith_value ret[1];
    if (!int_list_check("view", ndim))
        return NULL;
    return tensor_result(pith_call_view(ret, x, sizes_list(ndim, sizes)), ret);
}

pith_tensor *pith_reshape(const pith_tensor *x, int ndim, const int64_t *sizes)
{
    pith_value ret[1];
    if (!int_list_check("reshape", ndim))
        return NULL;
    return tensor_result(pith_call_reshape(ret, x, sizes_list(ndim, sizes)), ret);
}

pith_tensor *pith_permute(const pith_tensor *x, int ndim, const int *dims)
{
    pith_value ret[1];
    int64_t buf[PITH_MAX_DIMS];
    if (!dims_from_ints("permute", ndim, dims, buf))
        return NULL;
    return tensor_result(pith_call_permute(ret, x, sizes_list(ndim, buf)), ret);
}

pith_tensor *pith_transpose(const pith_tensor *x, int dim0, int dim1)
{
    pith_value ret[1];
    return tensor_result(pith_call_transpose(ret, x, dim0, dim1), ret);
}

pith_tensor *pith_t(const pith_tensor *x)
{
    pith_value ret[1];
    return tensor_result(pith_call_t(ret, x), ret);
}

pith_tensor *pith_expand(const pith_tensor *x, int ndim, const int64_t *sizes)
{
    pith_value ret[1];
    if (!int_list_check("expand", ndim))
        return NULL;
    return tensor_result(pith_call_expand(ret, x, sizes_list(ndim, sizes), false), ret);
}

pith_tensor *pith_as_strided(const pith_tensor *x, int ndim, const int64_t *sizes,
                             const int64_t *strides, int64_t storage_offset)
{
    pith_value ret[1];
    if (!int_list_check("as_strided", ndim))
        return NULL;
    if (ndim > 0 && (!sizes || !strides))
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "as_strided: %s is NULL",
                              sizes ? "strides" : "sizes");
    pith_opt_int offset = {true, storage_offset};
    return tensor_result(pith_call_as_strided(ret, x, sizes_list(ndim, sizes),
                                              sizes_list(ndim, strides), offset),
                         ret);
}

pith_tensor *pith_squeeze(const pith_tensor *x, const int *dim)
{
    pith_value ret[1];
    if (!dim)
        return tensor_result(pith_call_squeeze(ret, x), ret);
    return tensor_result(pith_call_squeeze_dim(ret, x, *dim), ret);
}

pith_tensor *pith_unsqueeze(const pith_tensor *x, int dim)
{
    pith_value ret[1];
    return tensor_result(pith_call_unsqueeze(ret, x, dim), ret);
}

pith_tensor *pith_flatten(const pith_tensor *x, int start_dim, int end_dim)
{
    pith_value ret[1];
    return tensor_result(pith_call_flatten(ret, x, start_dim, end_dim), ret);
}

pith_tensor *pith_slice(const pith_tensor *x, int dim, int64_t start, int64_t end, int64_t step)
{
    pith_value ret[1];
    pith_opt_int lo = {true, start}, hi = {true, end};
    return tensor_result(pith_call_slice(ret, x, dim, lo, hi, step), ret);
}

pith_tensor *pith_select(const pith_tensor *x, int dim, int64_t index)
{
    pith_value ret[1];
    return tensor_result(pith_call_select(ret, x, dim, index), ret);
}

pith_tensor *pith_narrow(const pith_tensor *x, int dim, int64_t start, int64_t length)
{
    pith_value ret[1];
    return tensor_result(pith_call_narrow(ret, x, dim, start, length), ret);
}

#define PITH_LIST_OUT_CHECK_(fn)                                                            \
    if (!n)                                                                                 \
        return PITH_FAIL_NULL(PITH_ERR_VALUE, fn ": argument 'n' is NULL");                 \
    *n = 0;

pith_tensor **pith_split(const pith_tensor *x, int64_t split_size, int dim, size_t *n)
{
    pith_value ret[1];
    PITH_LIST_OUT_CHECK_("split")
    return list_result(pith_call_split(ret, x, split_size, dim), ret, n);
}

pith_tensor **pith_chunk(const pith_tensor *x, int64_t chunks, int dim, size_t *n)
{
    pith_value ret[1];
    PITH_LIST_OUT_CHECK_("chunk")
    return list_result(pith_call_chunk(ret, x, chunks, dim), ret, n);
}

pith_tensor **pith_unbind(const pith_tensor *x, int dim, size_t *n)
{
    pith_value ret[1];
    PITH_LIST_OUT_CHECK_("unbind")
    return list_result(pith_call_unbind(ret, x, dim), ret, n);
}

void pith_tensor_list_free(pith_tensor **list, size_t n)
{
    if (!list)
        return;
    for (size_t i = 0; i < n; i++)
        pith_release(list[i]);
    free(list);
}

/* alias is how deployments hand a tensor across interpreters (ARCHITECTURE.md), so it
 * must not call into the tensor's interpreter: it dispatches at the backend key of the
 * tensor's device, below Python and the modes. */
pith_tensor *pith_alias(const pith_tensor *x)
{
    pith_value ret[1];
    if (!x)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "alias: argument 'self' is NULL");
    return tensor_result(pith_redispatch_alias(keyset_for_device(x->device), ret, x), ret);
}

/* A tagged tensor with the Python key detaches through its interpreter (the subclass may
 * define detach); everything else is an alias. */
pith_tensor *pith_detach(const pith_tensor *x)
{
    pith_value ret[1];
    if (x && pith_tensor_has_python_key(x) && pith_tensor_interpreter(x)) {
        pith_tensor *out = NULL;
        return interp_call_detach(x, &out) == PITH_OK ? out : NULL;
    }
    return tensor_result(pith_call_detach(ret, x), ret);
}

/* ---- copying and combining ---- */

pith_tensor *pith_cat(const pith_tensor *const *tensors, size_t n, int dim)
{
    pith_value ret[1];
    return tensor_result(pith_call_cat(ret, (pith_tensor_list){tensors, n}, dim), ret);
}

pith_tensor *pith_stack_tensors(const pith_tensor *const *tensors, size_t n, int dim)
{
    pith_value ret[1];
    return tensor_result(pith_call_stack(ret, (pith_tensor_list){tensors, n}, dim), ret);
}

pith_status pith_cat_out(pith_tensor *out, const pith_tensor *const *tensors, size_t n, int dim)
{
    pith_value ret[1];
    return call_status(pith_call_cat_out(ret, (pith_tensor_list){tensors, n}, dim, out), ret);
}

pith_status pith_stack_tensors_out(pith_tensor *out, const pith_tensor *const *tensors, size_t n,
                                   int dim)
{
    pith_value ret[1];
    return call_status(pith_call_stack_out(ret, (pith_tensor_list){tensors, n}, dim, out), ret);
}

pith_tensor *pith_index_select(const pith_tensor *x, int dim, const pith_tensor *index)
{
    pith_value ret[1];
    return tensor_result(pith_call_index_select(ret, x, dim, index), ret);
}

pith_tensor *pith_gather(const pith_tensor *x, int dim, const pith_tensor *index)
{
    pith_value ret[1];
    return tensor_result(pith_call_gather(ret, x, dim, index, false), ret);
}

pith_tensor *pith_masked_fill(const pith_tensor *x, const pith_tensor *mask, double value)
{
    pith_value ret[1];
    return tensor_result(pith_call_masked_fill(ret, x, mask, scalar_from_c_double(value)), ret);
}

pith_status pith_masked_fill_(pith_tensor *self, const pith_tensor *mask, double value)
{
    pith_value ret[1];
    return call_status(pith_call_masked_fill_(ret, self, mask, scalar_from_c_double(value)),
                       ret);
}

pith_tensor *pith_tril(const pith_tensor *x, int64_t diagonal)
{
    pith_value ret[1];
    return tensor_result(pith_call_tril(ret, x, diagonal), ret);
}

pith_tensor *pith_triu(const pith_tensor *x, int64_t diagonal)
{
    pith_value ret[1];
    return tensor_result(pith_call_triu(ret, x, diagonal), ret);
}

pith_tensor *pith_embedding(const pith_tensor *weight, const pith_tensor *indices)
{
    pith_value ret[1];
    return tensor_result(pith_call_embedding(ret, weight, indices, -1, false, false), ret);
}

/* ---- factories: dtype -1 means the default; the device is the CPU ---- */

pith_tensor *pith_arange(double start, double end, double step, pith_dtype dtype)
{
    pith_value ret[1];
    return tensor_result(pith_call_arange(ret, scalar_from_c_double(start),
                                          scalar_from_c_double(end), scalar_from_c_double(step),
                                          (int)dtype, -1),
                         ret);
}

pith_tensor *pith_linspace(double start, double end, int64_t steps, pith_dtype dtype)
{
    pith_value ret[1];
    return tensor_result(pith_call_linspace(ret, scalar_from_c_double(start),
                                            scalar_from_c_double(end), steps, (int)dtype, -1),
                         ret);
}

/* m == -1 means None (a square matrix). */
pith_tensor *pith_eye(int64_t n, int64_t m, pith_dtype dtype)
{
    pith_value ret[1];
    pith_opt_int cols = {m != -1, m};
    return tensor_result(pith_call_eye(ret, n, cols, (int)dtype, -1), ret);
}

pith_tensor *pith_rand(int ndim, const int64_t *sizes, pith_dtype dtype)
{
    pith_value ret[1];
    if (!int_list_check("rand", ndim))
        return NULL;
    return tensor_result(pith_call_rand(ret, sizes_list(ndim, sizes), NULL, (int)dtype, -1), ret);
}

pith_tensor *pith_randn(int ndim, const int64_t *sizes, pith_dtype dtype)
{
    pith_value ret[1];
    if (!int_list_check("randn", ndim))
        return NULL;
    return tensor_result(pith_call_randn(ret, sizes_list(ndim, sizes), NULL, (int)dtype, -1), ret);
}

pith_tensor *pith_randint(int64_t low, int64_t high, int ndim, const int64_t *sizes,
                          pith_dtype dtype)
{
    pith_value ret[1];
    if (!int_list_check("randint", ndim))
        return NULL;
    return tensor_result(pith_call_randint(ret, low, high, sizes_list(ndim, sizes), NULL, (int)dtype, -1),
                         ret);
}

void pith_manual_seed(uint64_t seed)
{
    pith_generator_manual_seed(NULL, seed);
}
