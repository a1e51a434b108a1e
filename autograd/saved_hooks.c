/* saved_hooks.c — saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks): this
 * thread's stack of pack/unpack pairs, and packing and unpacking a node's saved tensors
 * through them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"

/* Note [Saved tensor hooks]
 * As PyTorch's SavedTensorDefaultHooks: each thread has a stack of hook pairs; while it is
 * not empty, ag_save gives each tensor a node saves to the innermost pair's pack (grad
 * mode off, as PyTorch runs it) and keeps what pack returns instead of the tensor; ag_unpack
 * gives that to unpack. Wrapped numbers (Python scalars) are never packed.
 *  - No version check: the packed value is the user's (PyTorch checks none either); pack
 *    itself must not write its input in place (checked, PyTorch's error).
 *  - An input is given to pack as it is; an output is given without its history, where
 *    PyTorch gives the output itself: a pack hook that kept the output would make a cycle
 *    through the node that no collector sees (node -> packed -> output -> node). The
 *    history comes back at unpack when backward records (create_graph): an output gets its
 *    node, and an input that required grad gets `history` (its grad_fn, or a leaf's
 *    accumulator), which ag_save kept.
 *  - A packed value stands alone: it is released with its hooks' release, even after the
 *    pair was popped; the bindings make it a Python object of one interpreter, released
 *    and unpacked through that interpreter's table.
 *  - disable (torch's disable_saved_tensors_hooks) makes a push fail with its message, and
 *    fails itself while hooks are pushed. */

typedef struct {
    const pith_saved_tensors_hooks *hooks;
    void *ctx;
    void (*ctx_release)(void *ctx);
} hooks_entry;

static _Thread_local struct {
    hooks_entry *items;
    size_t n, cap;
    char *message; /* disabled with this message; NULL: enabled (heap: static TLS is small) */
} stack;

pith_status pith_saved_tensors_hooks_push(const pith_saved_tensors_hooks *hooks, void *ctx,
                                          void (*ctx_release)(void *ctx))
{
    if (!hooks || !hooks->pack || !hooks->unpack || !hooks->release)
        return pith_set_error(PITH_ERR_VALUE, "pith_saved_tensors_hooks_push: NULL hooks");
    if (stack.message)
        return pith_set_error(PITH_ERR_RUNTIME, "%s", stack.message);
    if (stack.n == stack.cap) {
        size_t cap = stack.cap ? stack.cap * 2 : 4;
        hooks_entry *items = realloc(stack.items, cap * sizeof *items);
        if (!items)
            return pith_set_error(PITH_ERR_NOMEM, "out of memory for saved tensor hooks");
        stack.items = items;
        stack.cap = cap;
    }
    stack.items[stack.n++] = (hooks_entry){hooks, ctx, ctx_release};
    return PITH_OK;
}

pith_status pith_saved_tensors_hooks_pop(void)
{
    if (!stack.n)
        return pith_set_error(PITH_ERR_RUNTIME, "pith_saved_tensors_hooks_pop: no saved tensor "
                                                "hooks are pushed on this thread");
    hooks_entry e = stack.items[--stack.n];
    if (!stack.n) { /* nothing left on the thread to free at its exit */
        free(stack.items);
        stack.items = NULL;
        stack.cap = 0;
    }
    if (e.ctx_release)
        e.ctx_release(e.ctx);
    return PITH_OK;
}

pith_status pith_saved_tensors_hooks_disable(const char *message)
{
    if (message && stack.n)
        return pith_set_error(PITH_ERR_RUNTIME, "%s", message);
    char *copy = message ? strdup(message) : NULL;
    if (message && !copy)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory disabling saved tensor hooks");
    free(stack.message);
    stack.message = copy;
    return PITH_OK;
}

const char *pith_saved_tensors_hooks_disabled_message(void)
{
    return stack.message;
}

pith_status ag_saved_pack(ag_saved *s, const pith_tensor *t, bool *packed)
{
    *packed = false;
    if (!stack.n || (t->flags & PITH_TENSOR_WRAPPED_NUMBER))
        return PITH_OK;
    const hooks_entry *e = &stack.items[stack.n - 1];
    pith_tensor *arg = s->is_output ? ag_alias_without_history(t) : (pith_tensor *)t;
    if (!arg)
        return pith_last_status();
    if (s->is_output)
        s->output_nr = ag_output_nr(t);
    if (!s->is_output && s->requires_grad) {
        ag_node *fn = ag_grad_fn(t);
        s->output_nr = fn ? ag_output_nr(t) : 0;
        s->history = fn ? fn : ag_accumulator((pith_tensor *)t);
        if (!s->history)
            return pith_last_status();
        ag_node_retain(s->history);
    }
    bool grad_disabled = grad_mode_tls.grad_disabled;
    grad_mode_tls.grad_disabled = true;
    void *value = NULL;
    pith_status st = e->hooks->pack(e->ctx, arg, &value);
    grad_mode_tls.grad_disabled = grad_disabled;
    if (s->is_output)
        pith_release(arg);
    if (st != PITH_OK)
        return st;
    s->hooks = e->hooks;
    s->packed = value;
    *packed = true;
    if (atomic_load_explicit(&t->storage->version, memory_order_relaxed) != s->version)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "A saved tensor pack hook is modifying its input in place. Tensors "
                              "provided as input to pack hook cannot be modified by in-place "
                              "operations as this can lead to unexpected side-effects. Please "
                              "open an issue if you need to perform in-place operations on the "
                              "input to a pack hook.");
    return PITH_OK;
}

pith_status ag_saved_unpack_packed(const ag_saved *s, ag_node *owner, pith_tensor **out)
{
    pith_tensor *data = NULL;
    pith_status st = s->hooks->unpack(s->packed, &data);
    if (st != PITH_OK) {
        pith_release(data);
        return st;
    }
    if (!data)
        return pith_set_error(PITH_ERR_TYPE, "a saved tensor hook's unpack gave no tensor");
    ag_node *history = s->is_output ? owner : s->history;
    if (grad_mode_tls.grad_disabled || !s->requires_grad || !history) {
        *out = data;
        return PITH_OK;
    }
    /* backward records: the unpacked value gets the saved tensor's history back */
    st = ag_alias_with_history(data, history, s->output_nr, out);
    pith_release(data);
    return st;
}
