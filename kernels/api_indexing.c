/* api_indexing.c — the public C entry points (pith/ops.h) of advanced indexing: nonzero,
 * index, index_put(_), masked_select. Each calls the generated pith_call_<id>, so every
 * call goes through the dispatcher. Index lists may hold NULL entries (None: a whole dim);
 * see Note [Advanced indexing] (indexing_advanced.c). */
#include "kernels/ops_internal.h"

/* The tensor result of a call, or NULL when it failed. */
static pith_tensor *tensor_result(pith_status status, const pith_value *ret)
{
    return status == PITH_OK ? ret[0].u.t : NULL;
}

pith_tensor *pith_nonzero(const pith_tensor *x)
{
    pith_value ret[1];
    return tensor_result(pith_call_nonzero(ret, x), ret);
}

pith_tensor *pith_index(const pith_tensor *x, const pith_tensor *const *indices, size_t n)
{
    pith_value ret[1];
    return tensor_result(pith_call_index(ret, x, (pith_tensor_list){indices, n}), ret);
}

pith_tensor *pith_index_put(const pith_tensor *x, const pith_tensor *const *indices, size_t n,
                            const pith_tensor *values, bool accumulate)
{
    pith_value ret[1];
    return tensor_result(
        pith_call_index_put(ret, x, (pith_tensor_list){indices, n}, values, accumulate), ret);
}

pith_status pith_index_put_(pith_tensor *self, const pith_tensor *const *indices, size_t n,
                            const pith_tensor *values, bool accumulate)
{
    pith_value ret[1];
    pith_status status =
        pith_call_index_put_(ret, self, (pith_tensor_list){indices, n}, values, accumulate);
    if (status == PITH_OK)
        value_clear(&ret[0]);
    return status;
}

pith_tensor *pith_masked_select(const pith_tensor *x, const pith_tensor *mask)
{
    pith_value ret[1];
    return tensor_result(pith_call_masked_select(ret, x, mask), ret);
}
