/* hooks.c — hooks on the graph's nodes: tensor hooks and retain_grad (Tensor.register_hook,
 * Tensor.retain_grad), node pre- and post-hooks (grad_fn.register_prehook, register_hook)
 * and post-accumulate-grad hooks; their order, removal and running. */
#include <stdlib.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"
#include "kernels/views.h"

/* Note [Tensor hooks]
 * As PyTorch's tensor pre-hooks: a hook of tensor t lives on the node its gradient flows
 * into, at that node's input t feeds: t's grad_fn at input output_nr, or a leaf's
 * accumulator at input 0. The engine runs a node's hooks, in registration order, on its
 * input buffer when the node is ready and before anything reads the buffer, so that the
 * gradient a hook returns is the one accumulated into .grad, passed on, or returned by
 * autograd.grad. retain_grad is a hook too, kept after the other tensor hooks so that it
 * stores what they made (See Note [Hook order]); it points at its tensor without owning
 * it, and the tensor's release unhooks it (the node may outlive the tensor). When an
 * in-place op gives the tensor a new grad_fn, the retain_grad hook moves to it
 * (ag_set_history), as in PyTorch; other hooks stay on the node they were registered on. */

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

/* Note [Hook order]
 * A node runs its hooks as PyTorch's engine does (call_tensor_pre_hooks, call_pre_hooks,
 * apply, call_post_hooks): the tensor hooks of its inputs, then the retain_grad hooks, then
 * its own pre-hooks, then apply, then its post-hooks; an accumulator's post-accumulate-grad
 * hooks run inside its apply, after .grad was written, so before its post-hooks. Within a
 * kind, registration order. pre_hooks keeps its kinds sorted (hook_insert puts a hook after
 * the last one of its kind or an earlier kind), so that the engine runs the tensor hooks
 * (before it captures a gradient for grad()) and the node pre-hooks (only when the node
 * runs) from one list; post_hooks keeps registration order, and each runner picks its kind.
 * Ids are unique over all kinds, so one pith_node_remove_hook removes any of them.
 * A hook may remove itself or another hook of its node while it runs (a one-shot hook's
 * handle.remove()): while node->hooks_running, removal only marks the hook, the runners
 * skip marked hooks, and the last runner to finish frees them (hooks_leave). */

/* Inserts h into the node's list for its kind (See Note [Hook order]). */
static void hook_insert(ag_node *node, ag_hook *h)
{
    bool pre = h->kind <= AG_HOOK_NODE_PRE;
    ag_hook **at = pre ? &node->pre_hooks : &node->post_hooks;
    while (*at && (!pre || (*at)->kind <= h->kind))
        at = &(*at)->next;
    h->next = *at;
    *at = h;
}

static ag_hook *hook_unlink(ag_node *node, const ag_hook *which, int64_t id)
{
    ag_hook **lists[] = {&node->pre_hooks, &node->post_hooks};
    for (int l = 0; l < 2; l++) {
        for (ag_hook **at = lists[l]; *at; at = &(*at)->next) {
            ag_hook *h = *at;
            if (h == which || (!which && h->id == id)) {
                *at = h->next;
                h->next = NULL;
                return h;
            }
        }
    }
    return NULL;
}

/* A new hook of `kind` with its id, or NULL with the error set. */
static ag_hook *hook_new(ag_hook_kind kind, void *ctx, void (*ctx_release)(void *ctx))
{
    ag_hook *h = calloc(1, sizeof *h);
    if (!h)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory for a hook");
    h->id = atomic_fetch_add(&next_hook_id, 1);
    h->kind = kind;
    h->ctx = ctx;
    h->ctx_release = ctx_release;
    return h;
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
    ag_hook *h = site ? hook_new(AG_HOOK_TENSOR, ctx, ctx_release) : NULL;
    if (!h)
        return pith_last_status();
    h->input_nr = input_nr;
    h->fn = fn;
    hook_insert(site, h);
    ag_node_retain(site);
    *node = site;
    *id = h->id;
    return PITH_OK;
}

static void hooks_enter(ag_node *node)
{
    node->hooks_running++;
}

/* Frees the hooks removed while they ran (See Note [Hook order]). */
static void hooks_leave(ag_node *node)
{
    if (--node->hooks_running)
        return;
    ag_hook **lists[] = {&node->pre_hooks, &node->post_hooks};
    for (int l = 0; l < 2; l++) {
        for (ag_hook **at = lists[l]; *at;) {
            ag_hook *h = *at;
            if (!h->removed) {
                at = &h->next;
                continue;
            }
            *at = h->next;
            h->next = NULL;
            ag_hooks_free(h);
        }
    }
}

pith_status pith_node_remove_hook(pith_node *node, int64_t id)
{
    if (!node)
        return pith_set_error(PITH_ERR_VALUE, "pith_node_remove_hook: node is NULL");
    if (node->hooks_running) {
        ag_hook *lists[] = {node->pre_hooks, node->post_hooks};
        for (int l = 0; l < 2; l++)
            for (ag_hook *h = lists[l]; h; h = h->next)
                if (h->id == id)
                    h->removed = true;
        return PITH_OK;
    }
    ag_hook *h = hook_unlink(node, NULL, id);
    ag_hooks_free(h); /* removing twice is a no-op, as a handle's remove() is */
    return PITH_OK;
}

int64_t pith_node_use_count(const pith_node *node)
{
    return node ? (int64_t)atomic_load_explicit(&node->refcount, memory_order_acquire) : 0;
}

int pith_node_visit_hooks(const pith_node *node,
                          int (*visit)(int64_t id, void *ctx, void (*ctx_release)(void *ctx),
                                       void *arg),
                          void *arg)
{
    const ag_hook *lists[] = {node ? node->pre_hooks : NULL, node ? node->post_hooks : NULL};
    for (int l = 0; l < 2; l++) {
        for (const ag_hook *h = lists[l]; h; h = h->next) {
            int rc = h->removed ? 0 : visit(h->id, h->ctx, h->ctx_release, arg);
            if (rc)
                return rc;
        }
    }
    return 0;
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
    ag_hook *h = hook_new(AG_HOOK_RETAINS_GRAD, NULL, NULL);
    if (!h)
        return pith_last_status();
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

static pith_status tensor_hook_call(ag_hook *h, pith_tensor **grads)
{
    pith_tensor *g = grads[h->input_nr];
    if (!g || h->removed)
        return PITH_OK;
    pith_tensor *replacement = NULL;
    pith_status st = h->fn(h->ctx, g, &replacement);
    if (st != PITH_OK) {
        pith_release(replacement);
        return st;
    }
    if (!replacement)
        return PITH_OK;
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
    return PITH_OK;
}

pith_status ag_run_tensor_hooks(ag_node *node, pith_tensor **grads)
{
    pith_status st = PITH_OK;
    hooks_enter(node);
    for (ag_hook *h = node->pre_hooks; h && h->kind != AG_HOOK_NODE_PRE && st == PITH_OK;
         h = h->next)
        st = tensor_hook_call(h, grads);
    hooks_leave(node);
    return st;
}

/* ---- node hooks and post-accumulate-grad hooks ---- */

/* Registers a node hook of `kind`: the function is set by the caller on the hook it gets
 * back (NULL with the error set). */
static ag_hook *node_hook_register(pith_node *node, bool fn_given, ag_hook_kind kind, void *ctx,
                                   void (*ctx_release)(void *ctx), int64_t *id, const char *who)
{
    if (!node || !fn_given || !id)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "%s: NULL argument", who);
    ag_hook *h = hook_new(kind, ctx, ctx_release);
    if (h) {
        hook_insert(node, h);
        *id = h->id;
    }
    return h;
}

pith_status pith_node_register_prehook(pith_node *node, pith_node_pre_hook fn, void *ctx,
                                       void (*ctx_release)(void *ctx), int64_t *id)
{
    ag_hook *h = node_hook_register(node, fn != NULL, AG_HOOK_NODE_PRE, ctx, ctx_release, id,
                                    "pith_node_register_prehook");
    if (!h)
        return pith_last_status();
    h->pre_fn = fn;
    return PITH_OK;
}

pith_status pith_node_register_hook(pith_node *node, pith_node_post_hook fn, void *ctx,
                                    void (*ctx_release)(void *ctx), int64_t *id)
{
    ag_hook *h = node_hook_register(node, fn != NULL, AG_HOOK_NODE_POST, ctx, ctx_release, id,
                                    "pith_node_register_hook");
    if (!h)
        return pith_last_status();
    h->post_fn = fn;
    return PITH_OK;
}

pith_status pith_tensor_register_post_accumulate_grad_hook(pith_tensor *t,
                                                           pith_post_accumulate_grad_hook fn,
                                                           void *ctx,
                                                           void (*ctx_release)(void *ctx),
                                                           pith_node **node, int64_t *id)
{
    if (!t || !fn || !node || !id)
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_tensor_register_post_accumulate_grad_hook: NULL argument");
    if (!ag_requires_grad(t))
        return pith_set_error(PITH_ERR_RUNTIME,
                              "cannot register a hook on a tensor that doesn't require gradient");
    if (ag_grad_fn(t))
        return pith_set_error(PITH_ERR_RUNTIME,
                              "post accumulate grad hooks cannot be registered on non-leaf "
                              "tensors");
    ag_node *acc = ag_accumulator(t);
    ag_hook *h = acc ? hook_new(AG_HOOK_POST_ACCUMULATE, ctx, ctx_release) : NULL;
    if (!h)
        return pith_last_status();
    h->accumulate_fn = fn;
    hook_insert(acc, h);
    ag_node_retain(acc);
    *node = acc;
    *id = h->id;
    return PITH_OK;
}

/* A hook's replacement of `was` by `now` must keep its shape and dtype: a safety net for C
 * hooks (the Python bindings check first, with PyTorch's messages). */
static pith_status replacement_check(const ag_node *node, const pith_tensor *was,
                                     const pith_tensor *now)
{
    if (!now)
        return PITH_OK;
    if (!was)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "can't replace a None gradient with a non-None value");
    if (now->dtype != was->dtype || !shape_equal(now->ndim, now->sizes, was->ndim, was->sizes)) {
        char a[256], b[256];
        return pith_set_error(PITH_ERR_RUNTIME,
                              "a hook of %s has changed the size or type of a value: it gave "
                              "%s %s for %s %s",
                              node->vt->name, dtype_legacy_tensor_name(now->dtype),
                              shape_format(now->ndim, now->sizes, a, sizeof a),
                              dtype_legacy_tensor_name(was->dtype),
                              shape_format(was->ndim, was->sizes, b, sizeof b));
    }
    return PITH_OK;
}

/* Runs one node hook on grads[n] (the array it may write) and checks its replacements
 * against a copy of the entries it was given. */
static pith_status hook_call_checked(ag_node *node, ag_hook *h, pith_tensor **grads, uint32_t n,
                                     pith_tensor **given, pith_tensor *const *other,
                                     uint32_t nother)
{
    for (uint32_t i = 0; i < n; i++) {
        given[i] = grads[i];
        pith_retain(given[i]);
    }
    pith_status st = h->kind == AG_HOOK_NODE_PRE
                         ? h->pre_fn(h->ctx, node, grads, (int)n)
                         : h->post_fn(h->ctx, node, grads, (int)n, other, (int)nother);
    for (uint32_t i = 0; i < n; i++) {
        if (st == PITH_OK && grads[i] != given[i])
            st = replacement_check(node, given[i], grads[i]);
        pith_release(given[i]);
    }
    return st;
}

pith_status ag_run_node_pre_hooks(ag_node *node, pith_tensor **grads)
{
    ag_hook *h = node->pre_hooks;
    while (h && h->kind != AG_HOOK_NODE_PRE)
        h = h->next;
    if (!h)
        return PITH_OK;
    pith_tensor **given = calloc(node->num_inputs ? node->num_inputs : 1, sizeof *given);
    if (!given)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory running hooks");
    pith_status st = PITH_OK;
    hooks_enter(node);
    for (; h && st == PITH_OK; h = h->next)
        if (!h->removed)
            st = hook_call_checked(node, h, grads, node->num_inputs, given, NULL, 0);
    hooks_leave(node);
    free(given);
    return st;
}

pith_status ag_run_node_post_hooks(ag_node *node, pith_tensor **out, pith_tensor *const *grads)
{
    pith_tensor **given = calloc(node->num_next ? node->num_next : 1, sizeof *given);
    if (!given)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory running hooks");
    pith_status st = PITH_OK;
    hooks_enter(node);
    for (ag_hook *h = node->post_hooks; h && st == PITH_OK; h = h->next)
        if (h->kind == AG_HOOK_NODE_POST && !h->removed)
            st = hook_call_checked(node, h, out, node->num_next, given, grads, node->num_inputs);
    hooks_leave(node);
    free(given);
    return st;
}

pith_status ag_run_post_accumulate_hooks(ag_node *node, pith_tensor *leaf)
{
    pith_status st = PITH_OK;
    hooks_enter(node);
    for (ag_hook *h = node->post_hooks; h && st == PITH_OK; h = h->next)
        if (h->kind == AG_HOOK_POST_ACCUMULATE && !h->removed)
            st = h->accumulate_fn(h->ctx, leaf);
    hooks_leave(node);
    return st;
}
