/* record.c — what an autograd kernel calls while it records: the checks of in-place and
 * out= calls, history for an in-place result, and wrapped numbers for formulas. */
#include "autograd/autograd_internal.h"
#include "core/error.h"

/* Note [The tape is a dispatch key]
 * Recording is the Autograd dispatch key, the highest key (dispatch/keys.h), as PyTorch's
 * VariableType: an op whose arguments include a tensor with autograd state reaches its
 * autograd kernel (autograd/generated/, one per differentiable op, written by
 * scripts/gen_autograd.py from the op file's derivatives section), which
 *   1. returns the op below Autograd at once when nothing requires grad or grad mode is
 *      off (ag_should_record);
 *   2. else redispatches below Autograd with the key excluded on the thread for the call
 *      (Note [Below Autograd], autograd.h), makes the node, points its edges at the inputs'
 *      history (ag_set_next_edge), saves what the formulas read (ag_save), and makes the
 *      outputs its outputs (ag_set_history).
 * A tensor that never required grad has no Autograd key, so its ops go straight to the
 * backend kernel and pay nothing: the dispatcher picks the highest key of the call's key
 * set, and the key is simply not there. Ops without a formula (comparisons, indices,
 * factories) have no autograd kernel; the key falls through for them
 * (dispatch/registry.c), and their outputs have no history. Composite-implicit ops have
 * their composite registered at the Autograd key too, so that their parts record. */

pith_status ag_check_inference_write(const pith_tensor *t)
{
    if ((t->flags & PITH_TENSOR_INFERENCE) && !grad_mode_inference())
        return pith_set_error(PITH_ERR_RUNTIME,
                              "Inplace update to inference tensor outside InferenceMode is not "
                              "allowed.You can make a clone to get a normal tensor before doing "
                              "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                              "more details.");
    return PITH_OK;
}

pith_status ag_check_inplace(const pith_tensor *self, const char *op)
{
    const ag_meta *m = self->autograd;
    if (m && !m->grad_fn && m->requires_grad && !grad_mode_tls.grad_disabled)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "a leaf Variable that requires grad is being used in an in-place "
                              "operation.");
    pith_status st = ag_check_inference_write(self);
    if (st != PITH_OK)
        return st;
    (void)op;
    return m && m->is_view ? ag_check_inplace_view(self) : PITH_OK;
}

pith_status ag_out_error(const char *op)
{
    return pith_set_error(PITH_ERR_RUNTIME,
                          "%s(): functions with out=... arguments don't support automatic "
                          "differentiation, but one of the arguments requires grad.",
                          op);
}

pith_tensor *ag_wrapped_number(pith_scalar s)
{
    pith_dtype dtype = s.kind == PITH_SCALAR_DOUBLE ? PITH_FLOAT64
                       : s.kind == PITH_SCALAR_BOOL ? PITH_BOOL
                                                    : PITH_INT64;
    pith_tensor *t = tensor_new(0, NULL, dtype, PITH_CPU);
    if (!t)
        return NULL;
    void *p = tensor_data(t);
    if (dtype == PITH_FLOAT64)
        *(double *)p = s.u.d;
    else if (dtype == PITH_BOOL)
        *(unsigned char *)p = s.u.b ? 1 : 0;
    else
        *(int64_t *)p = s.kind == PITH_SCALAR_INT ? s.u.i : 0;
    t->flags |= PITH_TENSOR_WRAPPED_NUMBER;
    return t;
}
