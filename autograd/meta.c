/* meta.c — per-tensor autograd state: requires_grad, grad, grad_fn and the leaf's
 * accumulator. */
#include <stdlib.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"

/* Note [Autograd state behind one pointer]
 * A tensor's autograd state (ag_meta) hangs off pith_tensor.autograd, which core/ treats as
 * opaque: it sets it to NULL at allocation and, at the tensor's last release, calls
 * tensor_autograd_release, which this layer installs at load. A tensor that never required
 * grad has none, and its ops never reach this layer: its key set lacks Autograd, so the
 * dispatcher goes straight to its backend (Note [The tape is a dispatch key], record.c).
 *  - The Autograd key is set on a tensor when its state is made, and a view copies its
 *    base's keys (tensor_view), so a view of a tensor that requires grad reaches the
 *    autograd kernels too; the key means "may require grad", and ag_requires_grad decides.
 *  - A leaf's accumulator is made on first need and kept with the leaf, so that recording
 *    an op on a leaf twice never makes it twice; the accumulator points back at the leaf
 *    without owning it, and the leaf's release clears that pointer (a graph that outlives
 *    its leaf then drops the leaf's gradient, as PyTorch's does).
 *  - The state is only written by the thread that owns the tensor at the time (setting
 *    requires_grad, grad, history); the accumulator, which several threads recording on
 *    one leaf may make at once, is published with a compare-and-swap. */

static void meta_release(pith_tensor *t)
{
    ag_meta *m = t->autograd;
    t->autograd = NULL;
    if (m->accumulator) {
        atomic_store_explicit(&m->accumulator->leaf, (pith_tensor *)NULL, memory_order_release);
        ag_node_release(m->accumulator);
    }
    /* the retain_grad hook may outlive the tensor on its node: it stops storing (before
     * the node, which frees it, may go) */
    if (m->retain_hook)
        m->retain_hook->ctx = NULL;
    ag_node_release(m->grad_fn);
    pith_release(m->grad);
    pith_release(m->view_base);
    free(m);
}

__attribute__((constructor(PITH_CTOR_PRIORITY_AUTOGRAD))) static void meta_install(void)
{
    tensor_autograd_release = meta_release;
}

ag_meta *ag_meta_of(pith_tensor *t)
{
    if (t->autograd)
        return t->autograd;
    ag_meta *m = ag_zalloc(sizeof *m); /* See Note [Zeroed allocations without calloc] */
    if (!m)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory for autograd state");
    t->autograd = m;
    t->keys |= PITH_KEYSET(PITH_KEY_AUTOGRAD);
    return m;
}

bool ag_requires_grad(const pith_tensor *t)
{
    const ag_meta *m = t->autograd;
    if (!m)
        return false;
    if (m->requires_grad || m->grad_fn)
        return true;
    /* A view whose base came to require grad through an in-place write after the view was
     * made (Note [Views and in-place], views.c). */
    return m->is_view && !m->view_no_grad && ag_requires_grad(m->view_base);
}

bool ag_list_requires_grad(pith_tensor_list list)
{
    if (grad_mode_tls.grad_disabled)
        return false;
    for (size_t i = 0; i < list.n; i++)
        if (list.data[i] && list.data[i]->autograd && ag_requires_grad(list.data[i]))
            return true;
    return false;
}

ag_node *ag_grad_fn(const pith_tensor *t)
{
    ag_meta *m = t->autograd;
    if (!m)
        return NULL;
    if (m->is_view &&
        m->attr_version != atomic_load_explicit(&t->storage->version, memory_order_relaxed))
        ag_view_refresh((pith_tensor *)t); /* logically const: See Note [Views and in-place] */
    return m->grad_fn;
}

uint32_t ag_output_nr(const pith_tensor *t)
{
    const ag_meta *m = t->autograd;
    return m ? m->output_nr : 0;
}

ag_node *ag_accumulator(pith_tensor *t)
{
    ag_meta *m = t->autograd;
    ag_node *acc = atomic_load_explicit(&m->accumulator, memory_order_acquire);
    if (acc)
        return acc;
    acc = ag_accumulator_new(t);
    if (!acc)
        return NULL;
    ag_node *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&m->accumulator, &expected, acc,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        atomic_store_explicit(&acc->leaf, (pith_tensor *)NULL, memory_order_relaxed);
        ag_node_release(acc);
        return expected;
    }
    return acc;
}

bool ag_dtype_differentiable(pith_dtype dtype)
{
    return dtype_is_floating(dtype);
}

pith_status ag_set_requires_grad(pith_tensor *t, bool requires_grad)
{
    if (!requires_grad && !t->autograd)
        return PITH_OK;
    ag_meta *m = t->autograd;
    if (m && m->grad_fn) {
        if (!requires_grad)
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "you can only change requires_grad flags of leaf variables. "
                                  "If you want to use a computed variable in a subgraph that "
                                  "doesn't require differentiation use var_no_grad = var.detach().");
        return PITH_OK;
    }
    if (requires_grad && !ag_dtype_differentiable(t->dtype))
        return pith_set_error(PITH_ERR_RUNTIME,
                              "only Tensors of floating point dtype can require gradients");
    if (requires_grad && (t->flags & PITH_TENSOR_INFERENCE) && !grad_mode_inference())
        return pith_set_error(PITH_ERR_RUNTIME,
                              "Setting requires_grad=True on inference tensor outside "
                              "InferenceMode is not allowed.");
    m = ag_meta_of(t);
    if (!m)
        return pith_last_status();
    m->requires_grad = requires_grad;
    return PITH_OK;
}
