/* python_dispatch.c — __pith_dispatch__ subclasses, wrapper subclasses, dispatch modes and
 * Python kernels: the Python side of the interpreter table's dispatch, detach and metadata
 * entries. (Being written for issue 4; until then every entry reports that it is not
 * implemented.) */
#include "state.h"

static pith_status not_yet(const char *what)
{
    return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                          "%s: __pith_dispatch__ subclasses are not implemented yet", what);
}

pith_status pydispatch_dispatch(const pith_op *op, pith_stack *stack)
{
    return not_yet("dispatch");
}

pith_status pydispatch_detach(const pith_tensor *self, pith_tensor **out)
{
    *out = NULL;
    return not_yet("detach");
}

pith_status pydispatch_is_contiguous(const pith_tensor *self, bool *out)
{
    return not_yet("is_contiguous");
}

pith_status pydispatch_device(const pith_tensor *self, pith_device *out)
{
    return not_yet("device");
}

pith_status pydispatch_sizes(const pith_tensor *self, int *ndim, int64_t *sizes)
{
    return not_yet("sizes");
}

pith_status pydispatch_strides(const pith_tensor *self, int *ndim, int64_t *strides)
{
    return not_yet("strides");
}

PyMethodDef pydispatch_tensor_methods[] = {{NULL}};
PyMethodDef pydispatch_module_methods[] = {{NULL}};
