/* views.c — views and in-place writes: a view remembers its base, an in-place op on a view
 * rewrites the base's history (CopySlices), and a view's grad_fn is made again after its
 * storage was written. */
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"
#include "autograd/helpers.h"
#include "core/error.h"

/* Note [Views and in-place]
 * As PyTorch's autograd:
 *  - A view op (one whose schema returns Tensor(a) of its input) made from a tensor with
 *    autograd state records, besides its node, the view's root base: the base's own base
 *    when the base is a view, so that a chain of views shares one root (ag_note_view; the
 *    generated kernels of the view ops call it, on the recording path and the other).
 *  - An in-place op on a view records its node `fn` as for any tensor, then
 *    ag_rebase_history gives the root a new grad_fn, CopySlices: its gradient for the root
 *    is the incoming gradient with the view's region replaced by fn's gradient for the
 *    view's old values, and its other edges are fn's other inputs'. The view's own history
 *    is then stale.
 *  - Every in-place write bumps the storage's version; a view whose grad_fn was made at
 *    another version gets a new one when it is next read (ag_grad_fn): as_strided of the
 *    root with the view's geometry, recorded, so that its gradient flows to the root's
 *    current history. A view therefore sees in-place writes made through its base or
 *    through another view of it.
 *  - A view made in no_grad from a base that requires grad, and an output of an op that
 *    returns several views (unbind, split, chunk), cannot be written in place while grad
 *    mode is on; a view of a leaf that requires grad cannot either: PyTorch's errors
 *    (ag_check_inplace_view).
 *  - The version counter is the storage's, so pith's `.data` and `detach()` share it with
 *    the tensor; PyTorch's `.data` has one of its own (docs/autograd.md). */

pith_status ag_note_view(pith_tensor *view, const pith_tensor *base, bool multi_output)
{
    if (!view || !base->autograd || view == base)
        return PITH_OK;
    const ag_meta *bm = base->autograd;
    const pith_tensor *root = bm->is_view ? bm->view_base : base;
    ag_meta *m = ag_meta_of(view);
    if (!m)
        return pith_last_status();
    pith_retain((pith_tensor *)root);
    pith_release(m->view_base);
    m->view_base = (pith_tensor *)root;
    m->is_view = true;
    m->view_multi = multi_output;
    /* made in no_grad from a base that requires grad, or from such a view */
    m->view_no_grad = (bm->is_view && bm->view_no_grad) ||
                      (grad_mode_tls.grad_disabled && ag_requires_grad(root));
    m->attr_version = atomic_load_explicit(&view->storage->version, memory_order_relaxed);
    return PITH_OK;
}

pith_status ag_note_view_result(pith_value *ret, const pith_tensor *base)
{
    if (ret[0].kind != PITH_VALUE_TENSOR_LIST)
        return ag_note_view(ret[0].u.t, base, false);
    for (size_t i = 0; i < ret[0].u.tensors.n; i++)
        if (ag_note_view(ret[0].u.tensors.data[i], base, true) != PITH_OK)
            return pith_last_status();
    return PITH_OK;
}

void ag_view_refresh(pith_tensor *view)
{
    ag_meta *m = view->autograd;
    int64_t now = atomic_load_explicit(&view->storage->version, memory_order_relaxed);
    if (m->view_no_grad || m->view_custom || !ag_requires_grad(m->view_base)) {
        m->attr_version = now; /* its grad_fn stays (custom: See Note [Custom function nodes]) */
        return;
    }
    /* as_strided of the root, recorded with grad mode on and the Autograd key in play */
    bool disabled = grad_mode_tls.grad_disabled;
    pith_keyset excluded = tls_keys()->excluded;
    grad_mode_tls.grad_disabled = false;
    tls_keys()->excluded = excluded & ~PITH_KEYSET(PITH_KEY_AUTOGRAD);
    pith_value ret[PITH_MAX_RETURNS];
    pith_opt_int offset = {true, view->offset};
    pith_status st = pith_call_as_strided(ret, m->view_base,
                                          (pith_int_list){view->sizes, (size_t)view->ndim},
                                          (pith_int_list){view->strides, (size_t)view->ndim},
                                          offset);
    grad_mode_tls.grad_disabled = disabled;
    tls_keys()->excluded = excluded;
    if (st != PITH_OK) /* out of memory: the old grad_fn stays, and so does the error */
        return;
    pith_tensor *replay = ret[0].u.t;
    ag_node *fn = ag_grad_fn(replay);
    if (m->retain_hook) /* See Note [Tensor hooks] */
        ag_retain_hook_move(view, m->grad_fn, fn, 0);
    ag_node_retain(fn);
    ag_node_release(m->grad_fn);
    m->grad_fn = fn;
    m->output_nr = 0;
    m->attr_version = now;
    pith_release(replay);
}

pith_status ag_check_inplace_view(const pith_tensor *self)
{
    const ag_meta *m = self->autograd;
    if (grad_mode_tls.grad_disabled)
        return PITH_OK;
    const ag_meta *root = m->view_base->autograd;
    if (m->view_multi && ag_requires_grad(m->view_base)) {
        const ag_node *fn = m->grad_fn;
        const char *name = fn ? fn->vt->name : "a view op";
        const char *stem = strstr(name, "Backward");
        return pith_set_error(PITH_ERR_RUNTIME,
                              "Output %u of %.*s is a view and is being modified inplace. This "
                              "view is the output of a function that returns multiple views. "
                              "Such functions do not allow the output views to be modified "
                              "inplace. You should replace the inplace operation by an "
                              "out-of-place one.",
                              m->output_nr, stem ? (int)(stem - name) : (int)strlen(name),
                              name);
    }
    if (m->view_custom && m->grad_fn) { /* See Note [Custom function nodes] (function.c) */
        const char *name = m->grad_fn->vt->name, *stem = strstr(name, "Backward");
        return pith_set_error(PITH_ERR_RUNTIME,
                              "Output %u of %.*s is a view and is being modified inplace. This "
                              "view was created inside a custom Function (or because an input "
                              "was returned as-is) and the autograd logic to handle "
                              "view+inplace would override the custom backward associated with "
                              "the custom Function, leading to incorrect gradients. This "
                              "behavior is forbidden. You can fix this by cloning the output "
                              "of the custom Function.",
                              m->output_nr, stem ? (int)(stem - name) : (int)strlen(name), name);
    }
    if (m->view_no_grad)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "A view was created in no_grad mode and is being modified "
                              "inplace with grad mode enabled. Given that this use case is "
                              "ambiguous and error-prone, it is forbidden. You can clarify "
                              "your code by moving both the view and the inplace either both "
                              "inside the no_grad block (if you don't want the inplace to be "
                              "tracked) or both outside (if you want the inplace to be "
                              "tracked).");
    if (root && !root->grad_fn && root->requires_grad)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "a view of a leaf Variable that requires grad is being used in "
                              "an in-place operation.");
    return PITH_OK;
}

/* ---- CopySlices ---- */

typedef struct {
    ag_node node;
    ag_node *fn;                /* the in-place op's node (strong) */
    ag_saved_metadata root;     /* the root's geometry, offset and storage size */
    ag_input_meta view;         /* the view's shape and dtype: fn's gradient is reduced to it */
    int64_t view_strides[PITH_MAX_DIMS];
    int64_t view_offset;
} CopySlices;

/* index(flat, [positions]) or index_put(flat, [positions], values): new reference in *out. */
static pith_status gather(pith_tensor **out, const pith_tensor *flat, const pith_tensor *pos)
{
    pith_value ret[PITH_MAX_RETURNS];
    const pith_tensor *idx[] = {pos};
    pith_status st = pith_call_index(ret, flat, (pith_tensor_list){idx, 1});
    *out = st == PITH_OK ? ret[0].u.t : NULL;
    return st;
}

static pith_status scatter(pith_tensor **flat, const pith_tensor *pos, const pith_tensor *values)
{
    pith_value ret[PITH_MAX_RETURNS];
    const pith_tensor *idx[] = {pos};
    pith_status st = pith_call_index_put(ret, *flat, (pith_tensor_list){idx, 1}, values, false);
    if (st != PITH_OK)
        return st;
    pith_release(*flat);
    *flat = ret[0].u.t;
    return PITH_OK;
}

/* Runs fn on the view's gradient with every edge wanted: fn's first edge is not part of
 * the engine's graph (CopySlices took its place), so ag_needs_grad must not filter. */
static pith_status fn_apply(ag_node *fn, pith_tensor *grad_slice, pith_tensor **fn_out)
{
    ag_run *run = ag_current_run;
    ag_current_run = NULL;
    pith_status st = fn->vt->apply(fn, &grad_slice, fn_out);
    ag_current_run = run;
    return st;
}

static pith_status copy_slices_apply(ag_node *node, pith_tensor *const *grads, pith_tensor **out)
{
    CopySlices *n = (CopySlices *)node;
    const pith_tensor *root = n->root.meta;
    pith_device device = n->root.device;
    pith_tensor *flat = NULL, *root_pos = NULL, *view_pos = NULL, *slice = NULL, *res = NULL;
    pith_tensor **fn_out = calloc(n->fn->num_next ? n->fn->num_next : 1, sizeof *fn_out);
    pith_opt_int offset = {true, n->view_offset};
    pith_status st = fn_out ? PITH_OK : pith_set_error(PITH_ERR_NOMEM, "out of memory in CopySlices");
    /* the root's gradient laid out as the root's storage, the view's region read from it */
    if (st == PITH_OK)
        st = ag_storage_zeros(&flat, root, device, grads[0], grads[0]->device);
    if (st == PITH_OK)
        st = ag_storage_positions(&root_pos, root, device);
    if (st == PITH_OK)
        st = scatter(&flat, root_pos, grads[0]);
    if (st == PITH_OK)
        st = ag_as_strided_positions(&view_pos, root, device,
                                     (pith_int_list){n->view.sizes, (size_t)n->view.ndim},
                                     (pith_int_list){n->view_strides, (size_t)n->view.ndim},
                                     offset);
    if (st == PITH_OK)
        st = gather(&slice, flat, view_pos);
    if (st == PITH_OK)
        st = fn_apply(n->fn, slice, fn_out);
    /* the view's region takes fn's gradient for the view's old values (zero when none) */
    if (st == PITH_OK && fn_out[0])
        st = ag_reduce_to(&n->view, &fn_out[0], node, 0);
    if (st == PITH_OK) {
        res = fn_out[0] ? fn_out[0] : ag_wrapped_number(scalar_from_double(0.0));
        fn_out[0] = NULL;
        st = res ? scatter(&flat, view_pos, res) : pith_last_status();
    }
    if (st == PITH_OK)
        st = gather(&out[0], flat, root_pos);
    for (uint32_t i = 1; i < n->fn->num_next; i++) {
        if (st == PITH_OK)
            out[i] = fn_out[i];
        else
            pith_release(fn_out[i]);
        fn_out[i] = NULL;
    }
    if (fn_out)
        pith_release(fn_out[0]);
    free(fn_out);
    pith_release(res);
    pith_release(slice);
    pith_release(view_pos);
    pith_release(root_pos);
    pith_release(flat);
    return st;
}

static void copy_slices_release(ag_node *node)
{
    CopySlices *n = (CopySlices *)node;
    if (n->fn && n->fn->vt->release_saved)
        n->fn->vt->release_saved(n->fn);
    if (!ag_node_freeing(node))
        return;
    ag_node_release(n->fn);
    n->fn = NULL;
    ag_saved_metadata_release(&n->root);
}

static const ag_node_vtable copy_slices_vtable = {"CopySlices", copy_slices_apply,
                                                  copy_slices_release, sizeof(CopySlices)};

pith_status ag_rebase_history(ag_node *fn, pith_tensor *self)
{
    ag_meta *m = self->autograd;
    if (!m || !m->is_view)
        return ag_set_history(fn, 0, self);
    pith_tensor *root = m->view_base;
    CopySlices *n = (CopySlices *)ag_node_new(&copy_slices_vtable, fn->num_next, 1);
    if (!n)
        return pith_last_status();
    pith_status st = ag_meta_of(root) ? ag_set_next_edge(&n->node, 0, root) : pith_last_status();
    for (uint32_t i = 1; i < fn->num_next && st == PITH_OK; i++) {
        n->node.next[i] = fn->next[i];
        ag_node_retain(fn->next[i].node);
    }
    if (st == PITH_OK)
        st = ag_save_metadata(&n->root, root);
    if (st == PITH_OK) {
        ag_node_retain(fn);
        n->fn = fn;
        ag_input_meta_set(&n->view, self);
        memcpy(n->view_strides, self->strides, (size_t)self->ndim * sizeof n->view_strides[0]);
        n->view_offset = self->offset;
        /* the root's new history; the view's grad_fn is made again when next read */
        st = ag_set_history(&n->node, 0, root);
    }
    ag_node_release(&n->node);
    return st;
}
