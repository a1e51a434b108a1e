/* api.c — the public C functions of <pith/autograd.h>. */
#include <stdlib.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"

void ag_hooks_free(ag_hook *h)
{
    while (h) {
        ag_hook *next = h->next;
        if (h->ctx_release)
            h->ctx_release(h->ctx);
        free(h);
        h = next;
    }
}

pith_status pith_set_requires_grad(pith_tensor *t, bool requires_grad)
{
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_set_requires_grad: tensor is NULL");
    return ag_set_requires_grad(t, requires_grad);
}

bool pith_requires_grad(const pith_tensor *t)
{
    return t && ag_requires_grad(t);
}

bool pith_is_leaf(const pith_tensor *t)
{
    return !t || !ag_grad_fn(t);
}

pith_status pith_grad_get(const pith_tensor *t, pith_tensor **out)
{
    if (!t || !out)
        return pith_set_error(PITH_ERR_VALUE, "pith_grad_get: NULL argument");
    const ag_meta *m = t->autograd;
    *out = m ? m->grad : NULL;
    pith_retain(*out);
    return PITH_OK;
}

pith_status pith_grad_set(pith_tensor *t, const pith_tensor *grad)
{
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_grad_set: tensor is NULL");
    if (grad) {
        char a[256], b[256];
        if (grad->dtype != t->dtype)
            return pith_set_error(PITH_ERR_TYPE,
                                  "assigned grad has data of a different type");
        if (grad->device != t->device)
            return pith_set_error(PITH_ERR_TYPE,
                                  "assigned grad has data located on a different device");
        if (!shape_equal(grad->ndim, grad->sizes, t->ndim, t->sizes))
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "assigned grad has data of a different size: %s, expected %s",
                                  shape_format(grad->ndim, grad->sizes, a, sizeof a),
                                  shape_format(t->ndim, t->sizes, b, sizeof b));
    }
    if (!grad && !t->autograd)
        return PITH_OK;
    ag_meta *m = ag_meta_of(t);
    if (!m)
        return pith_last_status();
    pith_retain((pith_tensor *)grad);
    pith_release(m->grad);
    m->grad = (pith_tensor *)grad;
    return PITH_OK;
}

const char *pith_grad_fn_name(const pith_tensor *t)
{
    const ag_node *fn = t ? ag_grad_fn(t) : NULL;
    return fn ? fn->vt->name : NULL;
}

pith_status pith_backward(pith_tensor *const *roots, pith_tensor *const *grad_roots, int n,
                          int flags)
{
    return ag_engine_run(roots, grad_roots, n, NULL, 0, NULL, true, flags);
}

pith_status pith_backward_inputs(pith_tensor *const *roots, pith_tensor *const *grad_roots,
                                 int n, pith_tensor *const *inputs, int ninputs, int flags)
{
    if (ninputs <= 0 || !inputs)
        return pith_set_error(PITH_ERR_RUNTIME, "'inputs' argument to backward() cannot be empty.");
    return ag_engine_run(roots, grad_roots, n, inputs, ninputs, NULL, true, flags);
}

pith_status pith_detach_(pith_tensor *t)
{
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_detach_: tensor is NULL");
    ag_meta *m = t->autograd;
    if (!m)
        return PITH_OK;
    if (m->retain_hook) { /* a leaf keeps its gradient without it */
        ag_retain_hook_move(t, m->grad_fn, NULL, 0);
        m->retain_hook = NULL;
        m->retains_grad = false;
    }
    ag_node_release(m->grad_fn);
    m->grad_fn = NULL;
    m->output_nr = 0;
    m->requires_grad = false;
    return PITH_OK;
}

pith_status pith_autograd_track(pith_tensor *t)
{
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_autograd_track: tensor is NULL");
    return ag_meta_of(t) ? PITH_OK : pith_last_status();
}

bool pith_autograd_tracked(const pith_tensor *t)
{
    return t && t->autograd;
}

int pith_output_nr(const pith_tensor *t)
{
    return t ? (int)ag_output_nr(t) : 0;
}

pith_status pith_autograd_grad(pith_tensor *const *roots, pith_tensor *const *grad_roots,
                               int nroots, pith_tensor *const *inputs, int ninputs,
                               pith_tensor **grads, int flags)
{
    if (ninputs <= 0 || !inputs || !grads)
        return pith_set_error(PITH_ERR_VALUE, "grad requires at least one input tensor");
    return ag_engine_run(roots, grad_roots, nroots, inputs, ninputs, grads, false, flags);
}

pith_node *pith_grad_fn(const pith_tensor *t)
{
    ag_node *fn = t ? ag_grad_fn(t) : NULL;
    ag_node_retain(fn);
    return fn;
}

void pith_node_retain(pith_node *node)
{
    ag_node_retain(node);
}

void pith_node_release(pith_node *node)
{
    ag_node_release(node);
}

const char *pith_node_name(const pith_node *node)
{
    return node ? node->vt->name : NULL;
}

int pith_node_num_next(const pith_node *node)
{
    return node ? (int)node->num_next : 0;
}

pith_status pith_node_next(const pith_node *node, int i, pith_node **next, int *input_nr)
{
    if (!node || !next || !input_nr)
        return pith_set_error(PITH_ERR_VALUE, "pith_node_next: NULL argument");
    if (i < 0 || (uint32_t)i >= node->num_next)
        return pith_set_error(PITH_ERR_INDEX, "pith_node_next: edge %d of %s, which has %u", i,
                              node->vt->name, node->num_next);
    *next = node->next[i].node;
    *input_nr = (int)node->next[i].input_nr;
    ag_node_retain(*next);
    return PITH_OK;
}

pith_tensor *pith_node_variable(const pith_node *node)
{
    if (!node || !(node->flags & AG_NODE_ACCUMULATOR))
        return NULL;
    /* The leaf may die on another thread meanwhile: PyTorch's weak reference has the same
     * race, which the caller's holding the graph does not prevent. */
    pith_tensor *leaf = atomic_load_explicit(&((pith_node *)node)->leaf, memory_order_acquire);
    pith_retain(leaf);
    return leaf;
}

void *pith_node_slot_get(const pith_node *node, const pith_interpreter *interp)
{
    pith_node *n = (pith_node *)node;
    if (!n || atomic_load_explicit(&n->tag, memory_order_acquire) != interp)
        return NULL;
    return atomic_load_explicit(&n->pyobj, memory_order_acquire);
}

bool pith_node_slot_set(pith_node *node, pith_interpreter *interp, void *pyobj)
{
    if (!node)
        return false;
    pith_interpreter *owner = NULL;
    if (!atomic_compare_exchange_strong(&node->tag, &owner, interp) && owner != interp)
        return false;
    void *empty = NULL;
    return atomic_compare_exchange_strong(&node->pyobj, &empty, pyobj);
}

void *pith_node_py_state(const pith_node *node, const pith_interpreter *interp)
{
    if (!node || atomic_load_explicit(&((pith_node *)node)->tag, memory_order_acquire) != interp)
        return NULL;
    return node->py_state;
}

pith_status pith_node_set_py_state(pith_node *node, pith_interpreter *interp, void *obj)
{
    if (!node || !obj)
        return pith_set_error(PITH_ERR_VALUE, "pith_node_set_py_state: NULL argument");
    pith_interpreter *owner = NULL;
    if ((!atomic_compare_exchange_strong(&node->tag, &owner, interp) && owner != interp) ||
        node->py_state)
        return pith_set_error(PITH_ERR_INTERPRETER,
                              "node %s: its Python state belongs to another interpreter",
                              node->vt->name);
    node->py_state = obj;
    return PITH_OK;
}

void pith_node_slot_clear(pith_node *node, void *pyobj)
{
    if (node)
        atomic_compare_exchange_strong(&node->pyobj, &pyobj, NULL);
}
