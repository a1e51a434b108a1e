/* function.c — custom functions: a node whose backward is a callback (C, or the Python
 * bindings' pith.autograd.Function), recorded for outputs its caller computed. */
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"
#include "autograd/helpers.h"
#include "core/error.h"
#include "kernels/views.h"

/* Note [Custom function nodes]
 * PyTorch's Function.apply runs forward with grad mode off, then wraps the outputs
 * (_wrap_outputs): pith_function_record is that second half, for any caller.
 *  - The node is an ag_node with a vtable of its own, inside the node, so that each
 *    function has its name ("MyFnBackward"); the callback's ctx is owned by the node and
 *    released (vt->release) when the node is freed, never when its saved values are.
 *  - Its edges are the inputs', its input metadata the outputs' (a non-differentiable
 *    output's only to materialize its gradient as zeros, as PyTorch does). With
 *    materializing off no output's metadata is present, so the engine makes up no
 *    gradient and a missing one reaches the callback as NULL (PyTorch's None).
 *  - Views among several differentiable outputs are multi-output views (PyTorch's
 *    MULTI_OUTPUT_NODE), whose in-place write is that error instead.
 *  - Saved tensors are ag_saved (Note [Saved tensors and their versions]): an output is
 *    saved without its history, so a graph does not hold itself, and unpacking checks the
 *    version. The Python Function keeps no tensor of its own for backward.
 *  - A dirty output (an input written in place by forward) has its version bumped and its
 *    history rewritten as an in-place op's (ag_rebase_history for a view, which must then be the only output); a
 *    leaf that requires grad is refused before anything changed.
 *  - An input returned as-is takes history through a new alias, so that the input keeps
 *    its own; views of inputs among the outputs are marked view_custom, whose in-place
 *    write is PyTorch's "created inside a custom Function" error (views.c), and whose
 *    grad_fn is never replayed (it is this node, not the view op's). */

typedef struct {
    ag_node node;
    ag_node_vtable vt; /* node.vt points here; vt.name is owned */
    pith_function_vtable fn; /* a copy: the caller's may be on its stack */
    void *ctx;
    ag_saved *saved;
    uint32_t num_saved;
} function_node;

static pith_status function_apply(ag_node *node, pith_tensor *const *grads, pith_tensor **out)
{
    function_node *f = (function_node *)node;
    pith_clear_error();
    pith_status st = f->fn.backward(f->ctx, node, grads, (int)node->num_inputs, out,
                                     (int)node->num_next);
    if (st == PITH_OK)
        return PITH_OK;
    for (uint32_t j = 0; j < node->num_next; j++) {
        pith_release(out[j]);
        out[j] = NULL;
    }
    if (pith_last_status() == PITH_OK)
        pith_set_error(st, "%s: backward failed (status %d, no message)", node->vt->name, st);
    return pith_last_status();
}

static void function_release_saved(ag_node *node)
{
    function_node *f = (function_node *)node;
    for (uint32_t i = 0; i < f->num_saved; i++)
        ag_saved_release(&f->saved[i]);
    if (!ag_node_freeing(node))
        return;
    free(f->saved);
    f->saved = NULL;
    if (f->fn.release)
        f->fn.release(f->ctx);
    f->ctx = NULL;
    free((char *)f->vt.name);
}

static const ag_node_vtable function_vtable = {"Function", function_apply, function_release_saved,
                                               sizeof(function_node)};

static bool is_function(const ag_node *n)
{
    return n && n->vt->apply == function_apply;
}

static int input_index(pith_tensor *const *inputs, int n_in, const pith_tensor *t)
{
    for (int j = 0; j < n_in; j++)
        if (inputs[j] && inputs[j] == t)
            return j;
    return -1;
}

static bool output_is_view(const pith_tensor *t)
{
    return t->autograd && ((const ag_meta *)t->autograd)->is_view;
}

/* PyTorch's refusals, checked before anything changes. */
static pith_status check_outputs(const pith_function_vtable *vt, pith_tensor *const *inputs,
                                 int n_in, pith_tensor **outputs, const int *output_flags,
                                 int n_out, bool recording)
{
    for (int i = 0; i < n_out; i++) {
        pith_tensor *t = outputs[i];
        int flags = output_flags ? output_flags[i] : 0;
        if (!t)
            return pith_set_error(PITH_ERR_VALUE, "%s: output %d is NULL", vt->name, i);
        if (!recording || !(flags & PITH_OUTPUT_DIRTY) ||
            (flags & PITH_OUTPUT_NON_DIFFERENTIABLE) || !ag_dtype_differentiable(t->dtype))
            continue;
        if (input_index(inputs, n_in, t) < 0)
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s: output %d is marked dirty but is not an input", vt->name,
                                  i);
        if (pith_is_leaf(t) && pith_requires_grad(t))
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "a leaf Variable that requires grad has been used in an "
                                  "in-place operation.");
        if (output_is_view(t) && n_out > 1)
            return pith_set_error(
                PITH_ERR_RUNTIME,
                "If your Function modifies inplace an input that is a view of another Tensor, "
                "your Function cannot return more than one Tensor. This is not supported by "
                "the current autograd engine. You should either make sure the input is not a "
                "view (using .clone() for example) or make your Function only return one "
                "Tensor (potentially splitting it into two Functions: one doing the inplace "
                "that returns a single Tensor and a second one that does the other "
                "operations). You can ask on the forum https://discuss.pytorch.org/ if you "
                "need help to do this change.");
    }
    return PITH_OK;
}

/* A new alias of input `t`, a view of it (Note [Custom function nodes]). */
static pith_tensor *alias_of_input(const pith_tensor *t)
{
    pith_tensor *a = tensor_view(t, t->ndim, t->sizes, t->strides, t->offset);
    if (a && ag_note_view(a, t, false) != PITH_OK) {
        pith_release(a);
        return NULL;
    }
    return a;
}

/* An output that requires grad but is not differentiable loses its history: an input is
 * replaced by a detached alias, another tensor is detached in place (PyTorch's rule). */
static pith_status detach_output(pith_tensor **slot, bool is_input)
{
    pith_tensor *t = *slot;
    if (!pith_requires_grad(t))
        return PITH_OK;
    if (is_input) {
        pith_tensor *d = pith_detach(t);
        if (!d)
            return pith_last_status();
        pith_release(t);
        *slot = d;
        return PITH_OK;
    }
    return output_is_view(t) ? PITH_OK : pith_detach_(t);
}

static pith_status mark_custom_view(pith_tensor *t, bool multi_output)
{
    ag_meta *m = t->autograd;
    if (!m || !m->is_view)
        return PITH_OK;
    m->view_custom = true;
    m->view_multi = multi_output; /* PyTorch's MULTI_OUTPUT_NODE wins */
    m->attr_version = atomic_load_explicit(&t->storage->version, memory_order_relaxed);
    return PITH_OK;
}

/* PyTorch's _wrap_outputs for output i (f NULL: nothing is recorded). */
static pith_status wrap_output(function_node *f, pith_tensor *const *inputs, int n_in,
                               pith_tensor **slot, int flags, int i, int n_differentiable,
                               bool materialize)
{
    pith_tensor *t = *slot;
    bool is_input = input_index(inputs, n_in, t) >= 0;
    bool dirty = (flags & PITH_OUTPUT_DIRTY) != 0;
    bool differentiable = f && !(flags & PITH_OUTPUT_NON_DIFFERENTIABLE) &&
                          ag_dtype_differentiable(t->dtype);
    if (!differentiable) {
        /* materialized as zeros too, as PyTorch's materialize_non_diff_grads */
        if (f && materialize)
            ag_input_meta_set(&f->node.input_meta[i], t);
        if (pith_requires_grad(t))
            return detach_output(slot, is_input);
        if (is_input && !dirty) { /* an input returned as-is: a new alias of it */
            pith_tensor *a = alias_of_input(t);
            if (!a)
                return pith_last_status();
            pith_release(t);
            *slot = a;
        }
        return PITH_OK;
    }
    if (dirty) {
        ag_meta *m = ag_meta_of(t);
        if (!m)
            return pith_last_status();
        if (m->is_view)
            return ag_rebase_history(&f->node, t); /* the only output: check_outputs */
        return ag_set_history(&f->node, (uint32_t)i, t);
    }
    if (is_input) {
        pith_tensor *a = alias_of_input(t);
        if (!a)
            return pith_last_status();
        pith_release(t);
        *slot = t = a;
    }
    pith_status st = ag_set_history(&f->node, (uint32_t)i, t);
    return st == PITH_OK ? mark_custom_view(t, n_differentiable > 1) : st;
}

static pith_status save_all(function_node *f, pith_tensor *const *saved, int n_saved,
                            pith_tensor *const *original, pith_tensor **outputs,
                            const int *output_flags, int n_out)
{
    f->saved = calloc((size_t)n_saved, sizeof *f->saved);
    if (!f->saved)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory saving tensors of %s", f->vt.name);
    f->num_saved = (uint32_t)n_saved;
    for (int k = 0; k < n_saved; k++) {
        const pith_tensor *t = saved[k];
        int out = -1;
        for (int i = 0; t && i < n_out && out < 0; i++)
            if (original[i] == t || outputs[i] == t)
                out = i;
        /* an output is saved as the tensor that carries the node's history, without it: its
         * history leads to this node (directly, or through CopySlices for a dirty view) */
        const ag_node *history = out >= 0 ? ag_grad_fn(outputs[out]) : NULL;
        bool as_output = history && (history == &f->node ||
                                     (output_flags && (output_flags[out] & PITH_OUTPUT_DIRTY)));
        pith_status st = ag_save(&f->saved[k], as_output ? outputs[out] : t, as_output);
        if (st != PITH_OK)
            return st;
    }
    return PITH_OK;
}

static function_node *function_node_new(const pith_function_vtable *vt, int flags,
                                        pith_tensor *const *inputs, int n_in, int n_out)
{
    char *name = strdup(vt->name);
    function_node *f = name ? (function_node *)ag_node_new(&function_vtable, (uint32_t)n_in,
                                                            (uint32_t)n_out)
                            : NULL;
    if (!f) {
        free(name);
        if (pith_last_status() == PITH_OK)
            pith_set_error(PITH_ERR_NOMEM, "out of memory for a node of %s", vt->name);
        return NULL;
    }
    f->vt = function_vtable;
    f->vt.name = name;
    f->node.vt = &f->vt;
    f->fn = *vt;
    for (int j = 0; j < n_in; j++) {
        if (ag_set_next_edge(&f->node, (uint32_t)j, inputs[j]) != PITH_OK) {
            ag_node_release(&f->node);
            return NULL;
        }
    }
    return f;
}

pith_status pith_function_record(const pith_function_vtable *vt, void *ctx, int flags,
                                 pith_tensor *const *inputs, int n_in, pith_tensor **outputs,
                                 const int *output_flags, int n_out, pith_tensor *const *saved,
                                 int n_saved, pith_node **node)
{
    if (node)
        *node = NULL;
    pith_status st = PITH_OK;
    pith_tensor **original = NULL;
    function_node *f = NULL;
    if (!vt || !vt->name || !vt->backward)
        st = pith_set_error(PITH_ERR_VALUE, "pith_function_record: a vtable with a name and a "
                                            "backward is required");
    else if (n_in < 0 || n_out < 0 || n_saved < 0 || (n_in && !inputs) || (n_out && !outputs) ||
             (n_saved && !saved))
        st = pith_set_error(PITH_ERR_VALUE, "%s: bad input, output or saved arrays", vt->name);
    bool recording =
        st == PITH_OK && ag_should_record((const pith_tensor *const *)inputs, (size_t)n_in);
    if (st == PITH_OK)
        st = check_outputs(vt, inputs, n_in, outputs, output_flags, n_out, recording);
    if (st == PITH_OK && !(original = malloc(((size_t)n_out + 1) * sizeof *original)))
        st = pith_set_error(PITH_ERR_NOMEM, "out of memory recording %s", vt->name);
    if (st == PITH_OK) {
        memcpy(original, outputs, (size_t)n_out * sizeof *original);
        if (recording) {
            if (!(f = function_node_new(vt, flags, inputs, n_in, n_out)))
                st = pith_last_status();
            else {
                f->ctx = ctx;
                ctx = NULL; /* the node's now */
            }
        }
    }
    /* mark_dirty bumps the versions, recorded or not, as PyTorch's _mark_dirty */
    for (int i = 0; i < n_out && st == PITH_OK; i++)
        if (output_flags && (output_flags[i] & PITH_OUTPUT_DIRTY))
            tensor_bump_version(outputs[i]);
    int n_differentiable = 0;
    for (int i = 0; i < n_out && st == PITH_OK; i++)
        n_differentiable += !(output_flags && (output_flags[i] & PITH_OUTPUT_NON_DIFFERENTIABLE)) &&
                            ag_dtype_differentiable(outputs[i]->dtype);
    for (int i = 0; i < n_out && st == PITH_OK; i++)
        st = wrap_output(f, inputs, n_in, &outputs[i], output_flags ? output_flags[i] : 0, i,
                         n_differentiable, !(flags & PITH_FUNCTION_NO_MATERIALIZE_GRADS));
    if (f && st == PITH_OK) {
        /* materializing off: no output's gradient is made up (Note [Custom function nodes]) */
        if (flags & PITH_FUNCTION_NO_MATERIALIZE_GRADS)
            for (int i = 0; i < n_out; i++)
                f->node.input_meta[i].present = false;
        if (n_saved)
            st = save_all(f, saved, n_saved, original, outputs, output_flags, n_out);
    }
    free(original);
    if (ctx && vt && vt->release)
        vt->release(ctx);
    if (f && st == PITH_OK && node) {
        ag_node_retain(&f->node);
        *node = &f->node;
    }
    if (f)
        ag_node_release(&f->node); /* the outputs hold it */
    return st;
}

int pith_function_num_saved(const pith_node *node)
{
    return is_function(node) ? (int)((const function_node *)node)->num_saved : 0;
}

pith_status pith_function_saved(pith_node *node, int i, pith_tensor **out)
{
    if (out)
        *out = NULL;
    if (!is_function(node) || !out)
        return pith_set_error(PITH_ERR_VALUE, "pith_function_saved: not a custom function node");
    function_node *f = (function_node *)node;
    if (node->flags & AG_NODE_RELEASED)
        return ag_unpack(&(ag_saved){0}, node, out); /* PyTorch's "second time" error */
    if (i < 0 || (uint32_t)i >= f->num_saved)
        return pith_set_error(PITH_ERR_INDEX, "%s: saved tensor %d of %u", node->vt->name, i,
                              f->num_saved);
    return ag_unpack(&f->saved[i], node, out);
}

bool pith_function_needs_input_grad(const pith_node *node, int i)
{
    return node && i >= 0 && (uint32_t)i < node->num_next && ag_needs_grad(node, (uint32_t)i);
}

void *pith_function_ctx(const pith_node *node, const pith_function_vtable *vt)
{
    return is_function(node) && vt && ((const function_node *)node)->fn.backward == vt->backward
               ? ((const function_node *)node)->ctx
               : NULL;
}
