/* out_target.c — results into out= tensors (kernels/out_target.h), shared by every out=
 * kernel that does not go through the elementwise engine.
 *
 * Note [Destination passing]
 * An out= kernel is the functional kernel with its output given: both validate in the same
 * function, and both compute with the same "into" routine, which writes a contiguous tensor
 * of the result's shape and dtype (the functional kernel allocates that tensor first). So
 * out= results are the functional op's bit for bit, and the graph executor, which passes
 * an `out` laid out as the op's Meta kernel would make it (contiguous, of the result dtype),
 * gets the result written straight into it, with no full-size temporary. Only an `out`
 * that the routine cannot write directly goes through a temporary that is then copied in
 * (out_target_begin): a non-contiguous one, keeping its strides, and one that shares memory
 * with an input, which the routine reads while it writes (PyTorch refuses some of those and
 * gives wrong values for others; pith gives the result). The dtype rules are PyTorch's for
 * each op, mostly an exact match (out_target_check); sum and mean compute in out's dtype
 * (See Note [Reductions into out=]). */
#include "kernels/out_target.h"

#include "kernels/elementwise.h"
#include "kernels/indexing.h"
#include "kernels/ops_internal.h"

pith_status out_dtype_check(const char *op, const pith_tensor *target, pith_dtype dtype)
{
    if (target->dtype != dtype)
        return pith_set_error(PITH_ERR_TYPE,
                              "%s: Expected out tensor to have dtype %s, but got %s instead",
                              op, pith_dtype_name(dtype), pith_dtype_name(target->dtype));
    return PITH_OK;
}

pith_status out_target_check(const char *op, pith_tensor *target, int ndim,
                             const int64_t *sizes, pith_dtype dtype, const pith_tensor *input)
{
    pith_tensor *dst;
    if (out_dtype_check(op, target, dtype) != PITH_OK ||
        devices_check(op, input, target) != PITH_OK)
        return pith_last_status();
    return elementwise_output(op, ELEMENTWISE_OUT, target, ndim, sizes, dtype, input->device,
                              &dst);
}

pith_tensor *out_target_begin(pith_tensor *target, const pith_tensor *const *inputs, int n,
                              bool elementwise)
{
    bool direct = target->contiguous;
    for (int i = 0; i < n && direct; i++) {
        const pith_tensor *in = inputs[i];
        if (!in)
            continue;
        bool same = elementwise && in->contiguous && tensor_data(in) == tensor_data(target) &&
                    in->dtype == target->dtype;
        direct = same || !tensors_may_overlap(in, target);
    }
    if (direct) {
        pith_retain(target);
        return target;
    }
    return tensor_new(target->ndim, target->sizes, target->dtype, PITH_CPU);
}

pith_status out_target_end(const char *op, pith_tensor *target, pith_tensor *dst)
{
    pith_status status = dst == target ? PITH_OK : elementwise_copy(op, target, dst);
    pith_release(dst);
    if (status == PITH_OK)
        tensor_bump_version(target);
    return status;
}

pith_status out_target_write(pith_value *ret, const char *op, pith_tensor *target,
                             const pith_tensor *const *inputs, int n, bool elementwise,
                             out_target_fill fill, const void *ctx)
{
    if (target->device == PITH_META) {
        tensor_bump_version(target);
        return ret_self(ret, target);
    }
    pith_tensor *dst = out_target_begin(target, inputs, n, elementwise);
    if (!dst)
        return pith_last_status();
    pith_status status = fill(ctx, dst);
    if (status != PITH_OK) {
        pith_release(dst);
        return status;
    }
    if (out_target_end(op, target, dst) != PITH_OK)
        return pith_last_status();
    return ret_self(ret, target);
}

pith_status out_target_new(pith_value *ret, int ndim, const int64_t *sizes, pith_dtype dtype,
                           pith_device device, out_target_fill fill, const void *ctx)
{
    pith_tensor *out = tensor_new(ndim, sizes, dtype, device);
    if (!out)
        return pith_last_status();
    if (device != PITH_META) {
        pith_status status = fill(ctx, out);
        if (status != PITH_OK) {
            pith_release(out);
            return status;
        }
    }
    return ret_tensor(ret, out);
}
