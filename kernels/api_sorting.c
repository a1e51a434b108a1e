/* api_sorting.c — the public C entry points (pith/ops.h) of sort, argsort, topk, cumsum,
 * cumprod and multinomial. Each calls the dispatcher (pith_call_<id>). */
#include "kernels/ops_internal.h"

/* The two results of a call into *values and *indices (untouched on error). */
static pith_status two_results(pith_status status, pith_value *ret, pith_tensor **values,
                               pith_tensor **indices)
{
    if (status != PITH_OK)
        return status;
    *values = ret[0].u.t;
    *indices = ret[1].u.t;
    return PITH_OK;
}

static pith_status outputs_check(const char *op, pith_tensor **values, pith_tensor **indices)
{
    if (!values || !indices)
        return pith_set_error(PITH_ERR_VALUE, "%s: the values and indices outputs must not "
                                              "be NULL", op);
    return PITH_OK;
}

pith_status pith_sort(const pith_tensor *x, int dim, bool descending, pith_tensor **values,
                      pith_tensor **indices)
{
    pith_value ret[2];
    if (outputs_check("sort", values, indices) != PITH_OK)
        return pith_last_status();
    return two_results(pith_call_sort(ret, x, dim, descending), ret, values, indices);
}

pith_tensor *pith_argsort(const pith_tensor *x, int dim, bool descending)
{
    pith_value ret[1];
    return pith_call_argsort(ret, x, dim, descending) == PITH_OK ? ret[0].u.t : NULL;
}

pith_status pith_topk(const pith_tensor *x, int64_t k, int dim, bool largest,
                      pith_tensor **values, pith_tensor **indices)
{
    pith_value ret[2];
    if (outputs_check("topk", values, indices) != PITH_OK)
        return pith_last_status();
    return two_results(pith_call_topk(ret, x, k, dim, largest, true), ret, values,
                       indices);
}

pith_tensor *pith_cumsum(const pith_tensor *x, int dim)
{
    pith_value ret[1];
    return pith_call_cumsum(ret, x, dim, -1) == PITH_OK ? ret[0].u.t : NULL;
}

pith_tensor *pith_cumprod(const pith_tensor *x, int dim)
{
    pith_value ret[1];
    return pith_call_cumprod(ret, x, dim, -1) == PITH_OK ? ret[0].u.t : NULL;
}

pith_tensor *pith_multinomial(const pith_tensor *probs, int64_t num_samples, bool replacement,
                              pith_generator *generator)
{
    pith_value ret[1];
    return pith_call_multinomial(ret, probs, num_samples, replacement, generator) == PITH_OK
               ? ret[0].u.t
               : NULL;
}
