/* hooks.c — tensor hooks and retain_grad (Tensor.register_hook, Tensor.retain_grad). */
#include <stdlib.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"

/* Note [Tensor hooks]
 * As PyTorch's tensor pre-hooks: a hook of tensor t lives on the node its gradient flows
 * into, at that node's input t feeds: t's grad_fn at input output_nr, or a leaf's
 * accumulator at input 0. The engine runs a node's hooks, in registration order, on its
 * input buffer when the node is ready and before anything reads the buffer, so that the
 * gradient a hook returns is the one accumulated into .grad, passed on, or returned by
 * autograd.grad. retain_grad is a hook too, kept last so that it stores what the others
 * made; it points at its tensor without owning it, and the tensor's release unhooks it (the
 * node may outlive the tensor). When an in-place op gives the tensor a new grad_fn, the
 * retain_grad hook moves to it (ag_set_history), as in PyTorch; other hooks stay on the
 * node they were registered on. */

static atomic_int_fast64_t next_hook_id = 1;

/* The node and input that t's gradient flows into; NULL with the error set. */
static ag_node *hook_site(pith_tensor *t, uint32_t *input_nr)
{
    ag_node *fn = ag_grad_fn(t);
    if (fn) {
        *input_nr = ag_output_nr(t);
        return fn;
    }
    *input_nr = 0;
    return ag_accumulator(t);
}

/* Inserts h into node's pre-hooks: at the end, or before a retain_grad hook. */
static void hook_insert(ag_node *node, ag_hook *h)
{
    ag_hook **at = &node->pre_hooks;
    while (*at && !(*at)->retains_grad)
        at = &(*at)->next;
    if (h->retains_grad)
        while (*at)
            at = &(*at)->next;
    h->next = *at;
    *at = h;
}

static ag_hook *hook_unlink(ag_node *node, const ag_hook *which, int64_t id)
{
    for (ag_hook **at = &node->pre_hooks; *at; at = &(*at)->next) {
        ag_hook *h = *at;
        if (h == which || (!which && h->id == id)) {
            *at = h->next;
            h->next = NULL;
            return h;
        }
    }
    return NULL;
}

pith_status pith_tensor_register_hook(pith_tensor *t, pith_tensor_hook fn, void *ctx,
                                      void (*ctx_release)(void *ctx), pith_node **node,
                                      int64_t *id)
{
    if (!t || !fn || !node || !id)
        return pith_set_error(PITH_ERR_VALUE, "pith_tensor_register_hook: NULL argument");
    if (!ag_requires_grad(t))
        return pith_set_error(PITH_ERR_RUNTIME,
                              "cannot register a hook on a tensor that doesn't require gradient");
    uint32_t input_nr;
    ag_node *site = hook_site(t, &input_nr);
    ag_hook *h = site ? calloc(1, sizeof *h) : NULL;
    if (!h)
        return site ? pith_set_error(PITH_ERR_NOMEM, "out of memory for a hook")
                    : pith_last_status();
    h->id = atomic_fetch_add(&next_hook_id, 1);
    h->input_nr = input_nr;
    h->fn = fn;
    h->ctx = ctx;
    h->ctx_release = ctx_release;
    hook_insert(site, h);
    ag_node_retain(site);
    *node = site;
    *id = h->id;
    return PITH_OK;
}

pith_status pith_node_remove_hook(pith_node *node, int64_t id)
{
    if (!node)
        return pith_set_error(PITH_ERR_VALUE, "pith_node_remove_hook: node is NULL");
    ag_hook *h = hook_unlink(node, NULL, id);
    ag_hooks_free(h); /* removing twice is a no-op, as a handle's remove() is */
    return PITH_OK;
}

/* retain_grad's hook: .grad of the tensor becomes a contiguous clone of the first
 * gradient, then grad + gradient (PyTorch's retain_grad hook). */
static pith_status retain_hook_fn(void *ctx, const pith_tensor *grad, pith_tensor **replacement)
{
    pith_tensor *t = ctx;
    (void)replacement;
    if (!t)
        return PITH_OK;
    ag_meta *m = t->autograd;
    pith_value ret[PITH_MAX_RETURNS];
    pith_status st = m->grad ? pith_call_add(ret, m->grad, grad, scalar_from_int(1))
                             : pith_call_clone(ret, grad);
    if (st != PITH_OK)
        return st;
    pith_release(m->grad);
    m->grad = ret[0].u.t;
    return PITH_OK;
}

pith_status pith_retain_grad(pith_tensor *t)
{
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_retain_grad: tensor is NULL");
    if (!ag_requires_grad(t))
        return pith_set_error(PITH_ERR_RUNTIME,
                              "can't retain_grad on Tensor that has requires_grad=False");
    ag_meta *m = t->autograd;
    ag_node *fn = ag_grad_fn(t);
    if (!fn || m->retains_grad)
        return PITH_OK; /* a leaf keeps its gradient anyway */
    ag_hook *h = calloc(1, sizeof *h);
    if (!h)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory for a hook");
    h->id = atomic_fetch_add(&next_hook_id, 1);
    h->input_nr = m->output_nr;
    h->retains_grad = true;
    h->fn = retain_hook_fn;
    h->ctx = t;
    hook_insert(fn, h);
    m->retain_hook = h;
    m->retains_grad = true;
    return PITH_OK;
}

bool pith_retains_grad(const pith_tensor *t)
{
    const ag_meta *m = t ? t->autograd : NULL;
    return m && m->retains_grad;
}

void ag_retain_hook_move(pith_tensor *t, ag_node *from, ag_node *to, uint32_t input_nr)
{
    ag_meta *m = t->autograd;
    ag_hook *h = from ? hook_unlink(from, m->retain_hook, 0) : NULL;
    if (!h)
        return;
    if (!to) {
        ag_hooks_free(h);
        return;
    }
    h->input_nr = input_nr;
    hook_insert(to, h);
}

pith_status ag_run_tensor_hooks(ag_node *node, pith_tensor **grads)
{
    for (ag_hook *h = node->pre_hooks; h; h = h->next) {
        pith_tensor *g = grads[h->input_nr];
        if (!g)
            continue;
        pith_tensor *replacement = NULL;
        pith_status st = h->fn(h->ctx, g, &replacement);
        if (st != PITH_OK) {
            pith_release(replacement);
            return st;
        }
        if (!replacement)
            continue;
        if (!shape_equal(replacement->ndim, replacement->sizes, g->ndim, g->sizes)) {
            char a[256], b[256];
            pith_release(replacement);
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "hook 'hook' has changed the size of value: it returned a "
                                  "gradient of shape %s for one of shape %s",
                                  shape_format(replacement->ndim, replacement->sizes, a, sizeof a),
                                  shape_format(g->ndim, g->sizes, b, sizeof b));
        }
        pith_release(g);
        grads[h->input_nr] = replacement;
    }
    return PITH_OK;
}
