/* engine.c — backward: from the roots' gradients to the leaves' .grad (or to the
 * gradients of chosen inputs), running each node once, newest first. */
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"
#include "kernels/views.h"

/* Note [The engine]
 * One backward is one ag_run on the calling thread:
 *  1. Discovery walks the graph from the roots' nodes (depth first, with an explicit
 *     stack, so a deep graph never deepens the C stack) and numbers every node it reaches
 *     densely: node->engine_index, valid while node->engine_run equals the run's id (Note
 *     [Engine scratch in the node]).
 *  2. With inputs (autograd.grad, backward(inputs=)), a node is needed when it leads to one
 *     of them; only needed nodes run, and only the edges into needed nodes get gradients
 *     (ag_needs_grad, which the generated apply functions ask). Without inputs every node
 *     runs.
 *  3. Each running node counts the edges into it from running nodes (a dense array); a
 *     node is ready when its count reaches zero, and the ready node with the highest
 *     sequence number runs first (Note [Sequence numbers], node.c): a max-heap.
 *  4. Gradients that meet at a node's input are summed in its input buffer (with add, so
 *     that the sum records under create_graph). A node whose inputs got no gradient at all
 *     is skipped: every one of its outputs would be zero; a node that got some has the
 *     others materialized as zeros from its input metadata.
 *  5. Without retain_graph a node's saved values are released after it runs.
 * The engine takes no lock: the run's state is its own, and nodes are only read, except
 * the scratch fields and the released flag, which a second backward over the same graph
 * on another thread would race on (PyTorch allows that; pith asks for independent graphs
 * per thread, docs/autograd.md). Grad mode is create_graph for the run, and the Autograd key
 * is not excluded, so that a recording backward records.
 *
 * Note [Engine scratch in the node]
 * Numbering nodes in the node itself (engine_index, tagged with the run's id) makes the
 * dense arrays indexable without a hash map. A backward started inside a backward
 * (checkpointing) runs its own id; it may only cross nodes of the outer run's graph that
 * the outer run already finished with, which holds for a recomputed graph. */

struct ag_run {
    uint64_t id;
    size_t n, cap;
    ag_node **nodes;
    int64_t *deps;
    size_t *buffer_at;     /* [n + 1]: node i's input buffers are buffers[buffer_at[i]...] */
    pith_tensor **buffers; /* owned */
    bool filtered;
    bool *needed;          /* [n]: gets gradients (leads to an input, or is one) */
    bool *runs;            /* [n]: runs its apply */
    bool retain_graph;
    bool accumulate;
};

_Thread_local ag_run *ag_current_run;
static atomic_uint_fast64_t run_ids = 1;

bool ag_run_needs(const ag_run *run, const ag_node *node)
{
    return node->engine_run == run->id && (!run->filtered || run->needed[node->engine_index]);
}

/* ---- discovery ---- */

static bool run_add(ag_run *r, ag_node *node)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        ag_node **nodes = realloc(r->nodes, cap * sizeof *nodes);
        if (!nodes)
            return false;
        r->nodes = nodes;
        r->cap = cap;
    }
    node->engine_run = r->id;
    node->engine_index = (int64_t)r->n;
    r->nodes[r->n++] = node;
    return true;
}

typedef struct {
    ag_node *node;
    uint32_t next;
} frame;

/* Numbers every node reachable from starts; order[] gets them children first. */
static pith_status discover(ag_run *r, ag_node *const *starts, size_t nstarts, size_t **order)
{
    size_t cap = 32, depth = 0, done = 0, post_cap = 32;
    frame *stack = malloc(cap * sizeof *stack);
    size_t *post = malloc(post_cap * sizeof *post);
    if (!stack || !post)
        goto oom;
    for (size_t s = 0; s < nstarts; s++) {
        ag_node *start = starts[s];
        if (!start || start->engine_run == r->id)
            continue;
        if (!run_add(r, start))
            goto oom;
        stack[depth++] = (frame){start, 0};
        while (depth) {
            frame *f = &stack[depth - 1];
            if (f->next < f->node->num_next) {
                ag_node *child = f->node->next[f->next++].node;
                if (!child || child->engine_run == r->id)
                    continue;
                if (!run_add(r, child))
                    goto oom;
                if (depth == cap) {
                    frame *grown = realloc(stack, 2 * cap * sizeof *stack);
                    if (!grown)
                        goto oom;
                    stack = grown;
                    cap *= 2;
                }
                stack[depth++] = (frame){child, 0};
                continue;
            }
            if (done == post_cap) { /* doubling: a long graph must not cost n^2 copies */
                size_t *grown = realloc(post, 2 * post_cap * sizeof *post);
                if (!grown)
                    goto oom;
                post = grown;
                post_cap *= 2;
            }
            post[done++] = (size_t)f->node->engine_index;
            depth--;
        }
    }
    free(stack);
    *order = post;
    return PITH_OK;
oom:
    free(stack);
    free(post);
    return pith_set_error(PITH_ERR_NOMEM, "out of memory walking the autograd graph");
}

/* ---- gradients: reduction to the input's metadata, and sums ---- */

/* Note [Gradients are reduced by the engine]
 * A formula may give a gradient in the broadcast shape of its input, or in another dtype
 * (ops/ops.toml, Note [The derivatives section]); the engine sums it over the broadcast
 * dimensions to the shape the receiving input had in forward and casts it to that dtype,
 * from the receiving node's ag_input_meta. A gradient that does not broadcast to that
 * shape is PyTorch's "returned an invalid gradient" error. */
pith_status ag_reduce_to(const ag_input_meta *m, pith_tensor **g, const ag_node *producer,
                         uint32_t index)
{
    pith_tensor *t = *g;
    pith_value ret[PITH_MAX_RETURNS];
    if (!shape_equal(t->ndim, t->sizes, m->ndim, m->sizes)) {
        int64_t dims[PITH_MAX_DIMS];
        size_t nd = 0;
        int lead = t->ndim - m->ndim;
        bool ok = lead >= 0;
        for (int d = 0; ok && d < t->ndim; d++) {
            if (d < lead) {
                dims[nd++] = d;
            } else if (m->sizes[d - lead] != t->sizes[d]) {
                if (m->sizes[d - lead] != 1)
                    ok = false;
                else
                    dims[nd++] = d;
            }
        }
        if (!ok) {
            char got[256], want[256];
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "Function %s returned an invalid gradient at index %u - got "
                                  "%s but expected shape compatible with %s",
                                  producer->vt->name, index,
                                  shape_format(t->ndim, t->sizes, got, sizeof got),
                                  shape_format(m->ndim, m->sizes, want, sizeof want));
        }
        pith_opt_int_list dim = {true, {dims, nd}};
        if (pith_call_sum(ret, t, dim, true, -1) != PITH_OK)
            return pith_last_status();
        pith_tensor *summed = ret[0].u.t;
        pith_status st = pith_call_reshape(ret, summed, (pith_int_list){m->sizes, (size_t)m->ndim});
        pith_release(summed);
        if (st != PITH_OK)
            return st;
        pith_release(t);
        *g = t = ret[0].u.t;
    }
    if (t->dtype != m->dtype) {
        if (pith_call_to_dtype(ret, t, m->dtype, false, false) != PITH_OK)
            return pith_last_status();
        pith_release(t);
        *g = ret[0].u.t;
    }
    return PITH_OK;
}

/* Adds `g` (owned) into a buffer slot. */
static pith_status buffer_add(pith_tensor **slot, pith_tensor *g)
{
    if (!*slot) {
        *slot = g;
        return PITH_OK;
    }
    pith_value ret[PITH_MAX_RETURNS];
    pith_status st = pith_call_add(ret, *slot, g, scalar_from_int(1));
    pith_release(g);
    if (st != PITH_OK)
        return st;
    pith_release(*slot);
    *slot = ret[0].u.t;
    return PITH_OK;
}

static pith_tensor *zeros_of(const ag_input_meta *m)
{
    pith_value ret[PITH_MAX_RETURNS];
    return ag_result(pith_call_zeros(ret, (pith_int_list){m->sizes, (size_t)m->ndim},
                                     (pith_opt_dtype)m->dtype, (pith_opt_device)m->device),
                     ret);
}

/* ---- the ready heap: highest sequence number on top ---- */

typedef struct {
    ag_node **items;
    size_t n, cap;
} heap;

static bool heap_push(heap *h, ag_node *node)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        ag_node **items = realloc(h->items, cap * sizeof *items);
        if (!items)
            return false;
        h->items = items;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i && h->items[(i - 1) / 2]->sequence_nr < node->sequence_nr) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->items[i] = node;
    return true;
}

static ag_node *heap_pop(heap *h)
{
    ag_node *top = h->items[0], *last = h->items[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->items[c + 1]->sequence_nr > h->items[c]->sequence_nr)
            c++;
        if (h->items[c]->sequence_nr <= last->sequence_nr)
            break;
        h->items[i] = h->items[c];
        i = c;
    }
    if (h->n)
        h->items[i] = last;
    return top;
}

/* ---- running ---- */

/* Runs one node: its buffered gradients in, its edges' buffers out. */
static pith_status run_node(ag_run *r, ag_node *node, heap *ready)
{
    size_t at = r->buffer_at[node->engine_index];
    pith_tensor **grads = &r->buffers[at];
    /* node hooks: See Note [Hook order] (hooks.c) */
    pith_status st = node->pre_hooks ? ag_run_node_pre_hooks(node, grads) : PITH_OK;
    bool any = false;
    for (uint32_t i = 0; i < node->num_inputs; i++)
        any |= grads[i] != NULL;
    pith_tensor **out = NULL;
    if (st == PITH_OK && (any || node->post_hooks) && node->num_next &&
        !(out = calloc(node->num_next, sizeof *out)))
        st = pith_set_error(PITH_ERR_NOMEM, "out of memory running %s", node->vt->name);
    if (any && st == PITH_OK) {
        for (uint32_t i = 0; i < node->num_inputs && st == PITH_OK; i++)
            if (!grads[i] && node->input_meta[i].present && !(grads[i] = zeros_of(&node->input_meta[i])))
                st = pith_last_status();
        if (st == PITH_OK)
            st = node->vt->apply(node, grads, out);
        if (!r->retain_graph && node->vt->release_saved) {
            node->vt->release_saved(node);
            node->flags |= AG_NODE_RELEASED;
        }
    }
    if (st == PITH_OK && node->post_hooks)
        st = ag_run_node_post_hooks(node, out, grads);
    if (st == PITH_OK && ag_anomaly_enabled()) /* See Note [Anomaly mode] */
        st = ag_anomaly_check_nan(node, out);
    if (st != PITH_OK && node->anomaly_record)
        ag_anomaly_report(node);
    for (uint32_t i = 0; i < node->num_inputs; i++) {
        pith_release(grads[i]);
        grads[i] = NULL;
    }
    for (uint32_t j = 0; j < node->num_next; j++) {
        const ag_edge *e = &node->next[j];
        pith_tensor *g = out ? out[j] : NULL;
        if (!e->node || e->node->engine_run != r->id ||
            (r->filtered && !r->needed[e->node->engine_index])) {
            pith_release(g);
            continue;
        }
        size_t target = (size_t)e->node->engine_index;
        if (g && st == PITH_OK) {
            st = ag_reduce_to(&e->node->input_meta[e->input_nr], &g, node, j);
            if (st == PITH_OK) {
                st = buffer_add(&r->buffers[r->buffer_at[target] + e->input_nr], g);
                g = NULL;
            }
        }
        pith_release(g);
        if (--r->deps[target] == 0 && st == PITH_OK && !heap_push(ready, e->node))
            st = pith_set_error(PITH_ERR_NOMEM, "out of memory running backward");
    }
    free(out);
    return st;
}

typedef struct {
    ag_node *node;
    uint32_t input_nr;
} target;

static void run_free(ag_run *r)
{
    if (r->buffers)
        for (size_t i = 0; i < r->buffer_at[r->n]; i++)
            pith_release(r->buffers[i]);
    for (size_t i = 0; i < r->n; i++)
        r->nodes[i]->engine_run = 0;
    free(r->nodes);
    free(r->deps);
    free(r->buffer_at);
    free(r->buffers);
    free(r->needed);
    free(r->runs);
}

/* The edge a gradient of `t` flows into: its grad_fn, or a leaf's accumulator. */
static pith_status edge_of(pith_tensor *t, target *out)
{
    ag_node *fn = ag_grad_fn(t);
    if (fn) {
        *out = (target){fn, ag_output_nr(t)};
        return PITH_OK;
    }
    ag_node *acc = ag_accumulator(t);
    if (!acc)
        return pith_last_status();
    *out = (target){acc, 0};
    return PITH_OK;
}

/* Checks a root's gradient (or makes ones) and returns a new reference. */
static pith_status root_grad(pith_tensor *root, pith_tensor *given, int i, pith_tensor **out)
{
    pith_value ret[PITH_MAX_RETURNS];
    if (!given) {
        if (root->numel != 1)
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "grad can be implicitly created only for scalar outputs");
        return (*out = ag_result(pith_call_ones(ret, (pith_int_list){root->sizes,
                                                                     (size_t)root->ndim},
                                                (pith_opt_dtype)root->dtype,
                                                (pith_opt_device)root->device),
                                 ret))
                   ? PITH_OK
                   : pith_last_status();
    }
    if (!shape_equal(given->ndim, given->sizes, root->ndim, root->sizes)) {
        char a[256], b[256];
        return pith_set_error(PITH_ERR_RUNTIME,
                              "Mismatch in shape: grad_output[%d] has a shape of "
                              "torch.Size(%s) and output[%d] has a shape of torch.Size(%s).",
                              i, shape_format(given->ndim, given->sizes, a, sizeof a), i,
                              shape_format(root->ndim, root->sizes, b, sizeof b));
    }
    pith_retain(given);
    *out = given;
    return PITH_OK;
}

static pith_status prepare(ag_run *r, target *roots, int nroots, target *inputs, int ninputs)
{
    ag_node **starts = malloc((size_t)(nroots ? nroots : 1) * sizeof *starts);
    size_t *order = NULL;
    if (!starts)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory running backward");
    for (int i = 0; i < nroots; i++)
        starts[i] = roots[i].node;
    pith_status st = discover(r, starts, (size_t)nroots, &order);
    free(starts);
    if (st != PITH_OK)
        return st;
    r->deps = calloc(r->n, sizeof *r->deps);
    r->buffer_at = malloc((r->n + 1) * sizeof *r->buffer_at);
    r->needed = calloc(r->n, sizeof *r->needed);
    r->runs = calloc(r->n, sizeof *r->runs);
    if (!r->deps || !r->buffer_at || !r->needed || !r->runs) {
        free(order);
        return pith_set_error(PITH_ERR_NOMEM, "out of memory running backward");
    }
    size_t total = 0;
    for (size_t i = 0; i < r->n; i++) {
        r->buffer_at[i] = total;
        total += r->nodes[i]->num_inputs;
    }
    r->buffer_at[r->n] = total;
    r->buffers = calloc(total ? total : 1, sizeof *r->buffers);
    if (!r->buffers) {
        free(order);
        return pith_set_error(PITH_ERR_NOMEM, "out of memory running backward");
    }
    /* needed: an input's node, or a node with an edge into a needed node that runs */
    r->filtered = ninputs > 0;
    for (int k = 0; k < ninputs; k++)
        if (inputs[k].node->engine_run == r->id)
            r->needed[inputs[k].node->engine_index] = true;
    for (size_t p = 0; p < r->n; p++) {
        size_t i = order[p];
        ag_node *node = r->nodes[i];
        bool leads = false;
        for (uint32_t j = 0; j < node->num_next; j++) {
            ag_node *c = node->next[j].node;
            leads |= c && c->engine_run == r->id && r->needed[c->engine_index];
        }
        if (!r->filtered) {
            r->needed[i] = r->runs[i] = true;
        } else {
            r->runs[i] = leads || (r->needed[i] && r->accumulate &&
                                   (node->flags & AG_NODE_ACCUMULATOR));
            r->needed[i] |= leads;
        }
    }
    free(order);
    for (size_t i = 0; i < r->n; i++) {
        if (!r->runs[i])
            continue;
        ag_node *node = r->nodes[i];
        for (uint32_t j = 0; j < node->num_next; j++) {
            ag_node *c = node->next[j].node;
            if (c && c->engine_run == r->id && r->needed[c->engine_index])
                r->deps[c->engine_index]++;
        }
    }
    return PITH_OK;
}

static pith_status execute(ag_run *r, target *roots, pith_tensor **root_grads, int nroots,
                           target *inputs, int ninputs, pith_tensor **captured)
{
    pith_status st = PITH_OK;
    for (int i = 0; i < nroots && st == PITH_OK; i++) {
        st = buffer_add(&r->buffers[r->buffer_at[roots[i].node->engine_index] + roots[i].input_nr],
                        root_grads[i]);
        root_grads[i] = NULL;
    }
    heap ready = {0};
    for (int i = 0; i < nroots && st == PITH_OK; i++) {
        ag_node *node = roots[i].node;
        size_t k = (size_t)node->engine_index;
        if (r->deps[k] == 0) {
            r->deps[k] = -1; /* queued once even when several roots share it */
            if (!heap_push(&ready, node))
                st = pith_set_error(PITH_ERR_NOMEM, "out of memory running backward");
        }
    }
    while (st == PITH_OK && ready.n) {
        ag_node *node = heap_pop(&ready);
        size_t k = (size_t)node->engine_index;
        if (node->pre_hooks) /* See Note [Tensor hooks] */
            st = ag_run_tensor_hooks(node, &r->buffers[r->buffer_at[k]]);
        if (st != PITH_OK) {
            if (node->anomaly_record) /* See Note [Anomaly mode] */
                ag_anomaly_report(node);
            break;
        }
        for (int c = 0; c < ninputs; c++) {
            if (inputs[c].node != node)
                continue;
            pith_tensor *g = r->buffers[r->buffer_at[k] + inputs[c].input_nr];
            pith_retain(g);
            pith_release(captured[c]);
            captured[c] = g;
        }
        if (r->runs[k])
            st = run_node(r, node, &ready);
    }
    free(ready.items);
    return st;
}

pith_status ag_engine_run(pith_tensor *const *roots, pith_tensor *const *grad_roots, int nroots,
                          pith_tensor *const *inputs, int ninputs, pith_tensor **grads,
                          bool accumulate, int flags)
{
    if (nroots <= 0 || !roots)
        return pith_set_error(PITH_ERR_VALUE, "backward: no tensors to differentiate");
    target *rt = calloc((size_t)nroots, sizeof *rt);
    pith_tensor **rg = calloc((size_t)nroots, sizeof *rg);
    target *it = calloc((size_t)(ninputs > 0 ? ninputs : 1), sizeof *it);
    pith_tensor **captured = calloc((size_t)(ninputs > 0 ? ninputs : 1), sizeof *captured);
    ag_run run = {.id = atomic_fetch_add(&run_ids, 1),
                  .retain_graph = (flags & (PITH_RETAIN_GRAPH | PITH_CREATE_GRAPH)) != 0,
                  .accumulate = accumulate};
    pith_status st = PITH_OK;
    if (!rt || !rg || !it || !captured)
        st = pith_set_error(PITH_ERR_NOMEM, "out of memory running backward");
    for (int i = 0; i < nroots && st == PITH_OK; i++) {
        if (!roots[i])
            st = pith_set_error(PITH_ERR_VALUE, "backward: tensor %d is NULL", i);
        else if (!ag_requires_grad(roots[i]))
            st = pith_set_error(PITH_ERR_RUNTIME,
                                "element %d of tensors does not require grad and does not have "
                                "a grad_fn",
                                i);
        else if ((st = root_grad(roots[i], grad_roots ? grad_roots[i] : NULL, i, &rg[i])) == PITH_OK)
            st = edge_of(roots[i], &rt[i]);
    }
    for (int k = 0; k < ninputs && st == PITH_OK; k++) {
        if (!inputs[k])
            st = pith_set_error(PITH_ERR_VALUE, "grad: input %d is NULL", k);
        else if (!ag_requires_grad(inputs[k]))
            st = pith_set_error(PITH_ERR_RUNTIME,
                                "One of the differentiated Tensors does not require grad");
        else
            st = edge_of(inputs[k], &it[k]);
    }
    bool grad_disabled = grad_mode_tls.grad_disabled;
    pith_keyset excluded = tls_keys()->excluded;
    ag_run *outer = ag_current_run;
    if (st == PITH_OK)
        st = prepare(&run, rt, nroots, it, ninputs);
    if (st == PITH_OK) {
        grad_mode_tls.grad_disabled = !(flags & PITH_CREATE_GRAPH);
        tls_keys()->excluded = excluded & ~PITH_KEYSET(PITH_KEY_AUTOGRAD);
        ag_current_run = &run;
        st = execute(&run, rt, rg, nroots, it, ninputs, captured);
        ag_current_run = outer;
        tls_keys()->excluded = excluded;
    }
    /* results: grads of the inputs, or their .grad for backward(inputs=) */
    for (int k = 0; k < ninputs && st == PITH_OK; k++) {
        if (accumulate) {
            if (captured[k] && ag_grad_fn(inputs[k]))
                st = ag_accumulate_into(inputs[k], captured[k]);
            continue;
        }
        if (!captured[k] && !(flags & PITH_ALLOW_UNUSED))
            st = pith_set_error(PITH_ERR_RUNTIME,
                                "The differentiated Tensor at index %d appears to not have "
                                "been used in the graph. Set allow_unused=True if this is the "
                                "desired behavior.",
                                k);
    }
    grad_mode_tls.grad_disabled = grad_disabled;
    for (int k = 0; k < ninputs; k++) {
        if (st == PITH_OK && !accumulate) {
            grads[k] = captured[k];
        } else {
            pith_release(captured[k]);
            if (grads && !accumulate)
                grads[k] = NULL;
        }
    }
    if (rg)
        for (int i = 0; i < nroots; i++)
            pith_release(rg[i]);
    run_free(&run);
    free(rt);
    free(rg);
    free(it);
    free(captured);
    return st;
}
