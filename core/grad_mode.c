/* grad_mode.c — grad mode and inference mode (PyTorch's GradMode and InferenceMode), and
 * the inference flag of tensors. */
#include "core/grad_mode.h"

#include "core/error.h"
#include "core/tensor.h"

/* Note [Grad mode is per thread]
 * Two flags per OS thread, as c10's AutogradState: grad mode (on by default) and inference
 * mode (off by default). Every new thread starts from the defaults, Python threads
 * included, as in PyTorch.
 *  - They are libpith thread-locals, not data of the Python thread state (unlike the
 *    dispatch modes, Note [Dispatch modes live in the thread state]): C code without
 *    Python, such as the guards of compiled code, must read them, and they are plain bools
 *    that no interpreter owns. An interpreter entered on the same OS thread (by
 *    PyThreadState_Swap, or from C) sees the thread's flags, as an interpreter of
 *    torch::deploy sees c10's. The Python context managers restore the values they saved,
 *    so no setting outlives its `with` block or decorated call.
 *  - OpenMP workers have their own (default) flags; kernels never read them.
 *  - Inference mode marks the tensors created under it (PITH_TENSOR_INFERENCE, set in
 *    tensor_alloc_inline); a view takes its base's flag instead (tensor_view), so a view of
 *    a normal tensor stays normal inside inference mode and a view of an inference tensor
 *    is one outside it, as in PyTorch. The autograd layer reads the flag: an inference
 *    tensor cannot be saved for backward (ag_save), require grad outside inference mode, or
 *    be written in place (or as an out= target) outside it (ag_check_inplace).
 *
 * Note [Inference tensors reach the autograd kernels]
 * The in-place and out= checks live in the autograd kernels, which only tensors with the
 * Autograd key reach. So an inference tensor carries the key from birth (tensor_alloc_inline;
 * a view copies its base's keys), as every PyTorch tensor carries its Autograd keys: its
 * in-place forms check it outside inference mode. Inside it, the dispatcher leaves Autograd
 * out of every effective key set (keyset_effective, dispatch/keys.h), as PyTorch's
 * InferenceMode excludes the autograd keys, so inference-mode code never pays the hop
 * through the autograd kernels and nothing records there. Outside it, an inference tensor's
 * functional ops pass through the autograd kernel, which finds nothing to record (no
 * inference tensor requires grad) and redispatches. A normal tensor made in inference mode
 * does not carry the key. */
_Thread_local __attribute__((tls_model("initial-exec"))) grad_mode_state grad_mode_tls;

bool pith_grad_enabled(void)
{
    return !grad_mode_tls.grad_disabled;
}

void pith_set_grad_enabled(bool enabled)
{
    grad_mode_tls.grad_disabled = !enabled;
}

bool pith_inference_mode_enabled(void)
{
    return grad_mode_tls.inference;
}

void pith_set_inference_mode_enabled(bool enabled)
{
    grad_mode_tls.inference = enabled;
}

bool pith_is_inference(const pith_tensor *t)
{
    if (!t) {
        pith_set_error(PITH_ERR_VALUE, "is_inference: argument 'self' is NULL");
        return false;
    }
    return (t->flags & PITH_TENSOR_INFERENCE) != 0;
}
