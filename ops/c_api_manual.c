/* c_api_manual.c — the public C functions (pith/ops.h, pith/ops_shape.h) that the op
 * file's c_api tables cannot say, each with why; every other public function of an op is
 * generated (ops/generated/api_ops.c, ops/generated/api_elementwise.c: See Note [The C
 * surface of an op] in ops/ops.toml). */
#include <stdlib.h>

#include "core/interpreter_internal.h"
#include "kernels/random.h"
#include "kernels/views.h"
#include "ops/c_api_support.h"

/* Not generated: it picks one of two overloads (squeeze, squeeze.dim) by whether `dim` is
 * given, and a c_api table calls one. */
pith_tensor *pith_squeeze(const pith_tensor *x, const int *dim)
{
    pith_value ret[1];
    if (!dim)
        return op_call_result(pith_call_squeeze(ret, x), ret);
    return op_call_result(pith_call_squeeze_dim(ret, x, *dim), ret);
}

/* Not generated: it picks one of two overloads (meshgrid, meshgrid.indexing) by whether
 * `indexing` is given, and returns its list as it is (never empty). */
pith_tensor **pith_meshgrid(const pith_tensor *const *tensors, size_t n, const char *indexing,
                            size_t *nout)
{
    pith_value ret[1];
    if (!pointer_check("meshgrid", "tensors", tensors, n) ||
        !pointer_check("meshgrid", "nout", nout, 1))
        return NULL;
    pith_tensor_list list = {tensors, n};
    pith_status status = indexing ? pith_call_meshgrid_indexing(ret, list, indexing)
                                  : pith_call_meshgrid(ret, list);
    if (status != PITH_OK)
        return NULL;
    *nout = ret[0].u.tensors.n;
    return ret[0].u.tensors.data; /* never NULL: meshgrid has at least one result */
}

/* Not an op: frees what the list results return (the kernels' own release). */
void pith_tensor_list_free(pith_tensor **list, size_t n)
{
    tensor_list_release(list, n);
}

/* Not generated: it redispatches below the dispatcher's entry rather than calling it.
 * alias is how deployments hand a tensor across interpreters (ARCHITECTURE.md), so it
 * must not call into the tensor's interpreter: it dispatches at the backend key of the
 * tensor's device, below Python and the modes. */
pith_tensor *pith_alias(const pith_tensor *x)
{
    pith_value ret[1];
    if (!x)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "alias: argument 'self' is NULL");
    return op_call_result(pith_redispatch_alias(keyset_for_device(x->device), ret, x), ret);
}

/* Not generated: a tagged tensor with the Python key detaches through its interpreter (the
 * subclass may define detach); everything else is an alias through the dispatcher. */
pith_tensor *pith_detach(const pith_tensor *x)
{
    pith_value ret[1];
    if (x && pith_tensor_has_python_key(x) && pith_tensor_interpreter(x)) {
        pith_tensor *out = NULL;
        return interp_call_detach(x, &out) == PITH_OK ? out : NULL;
    }
    return op_call_result(pith_call_detach(ret, x), ret);
}

/* Not an op: seeds the default generator. */
void pith_manual_seed(uint64_t seed)
{
    pith_generator_manual_seed(NULL, seed);
}
