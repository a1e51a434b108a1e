/* engine.c — backward: from the roots' gradients to the leaves' .grad (or to the
 * gradients of chosen inputs), running each node once, newest first. */
#include <sched.h>
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
 * The run's state is its own; what runs share with other runs (the nodes' scratch, their
 * saved values, the leaves' .grad) follows Note [The engine's threads and the GIL]. Grad
 * mode is create_graph for the run, and the Autograd key is not excluded, so that a
 * recording backward records.
 *
 * Note [Engine scratch in the node]
 * Numbering nodes in the node itself makes the dense arrays indexable without a hash map.
 * A run claims a node by a compare-and-swap of node->engine_run from 0 to its id, then
 * owns node->engine_index until run_free stores 0 back. A node another run holds at the
 * time (a run on another thread over a shared leaf's accumulator or a shared subgraph, or
 * the outer run of a backward started inside a backward) is numbered in this run's side
 * table instead, an open-addressing map from node to index; run_index looks in the node
 * first, and in the side table only when it is not empty. So one thread over one graph
 * pays one uncontended compare-and-swap per node and never a lookup.
 *
 * Note [The engine's threads and the GIL]
 * Several threads may run backward at once, and a backward may run inside a backward (a
 * hook or a node calling backward: checkpointing), to any depth up to
 * AG_MAX_BACKWARD_DEPTH on one thread (PyTorch's engine changes threads past 60; pith stays
 * on the caller's thread, whose stack a level takes little of, and refuses deeper nesting
 * with an error rather than overflow the stack). What runs share, and why it is safe:
 *  - Sequence numbers are per thread (Note [Sequence numbers], node.c); run ids, the live
 *    counters and hook ids are atomic counters; grad mode, the key sets, the current run
 *    and the release worklist are thread-local.
 *  - Node scratch: claimed, or numbered aside (Note [Engine scratch in the node]).
 *  - Saved values: each run that discovers a node with saved values counts itself in
 *    node->engine_users. A run without retain_graph releases them only when it is the
 *    last user: a compare-and-swap from 1 to USERS_RELEASING, then USERS_RELEASED for
 *    good. A run that finds the node released uses no count and runs it as any released
 *    node (PyTorch's "backward through the graph a second time" where a saved tensor is
 *    needed); one that finds a release under way waits for it. So nothing reads what
 *    another thread frees, and two threads may run backward through one shared subgraph at
 *    once, as in PyTorch; its saved values are freed by the last run out that does not
 *    retain the graph.
 *  - A leaf's .grad: ag_accumulate_into holds the leaf's lock (Note [Accumulating into
 *    .grad], accumulate.c), as PyTorch's AccumulateGrad holds its mutex, so two threads
 *    backpropagating into one leaf add both gradients.
 * The GIL: the engine is C and never takes it. The Python bindings release it around a
 * backward (run_backward in python_bindings/_C/autograd.c) and record the released thread
 * state; whatever in backward needs Python (a __pith_dispatch__ subclass, a dispatch mode,
 * a Python hook or node, dropping the last reference of a wrapper) enters the owning
 * interpreter through its table, which on that thread restores the recorded thread state
 * (Note [Entering an interpreter from C], case 0), so the thread's dispatch modes, kept in
 * its thread-state dict, are the ones Python code on that thread sees. Other Python threads
 * run while a backward runs C nodes. */

/* Nesting of backward inside backward on one thread (Note [The engine's threads and the
 * GIL]). */
#define AG_MAX_BACKWARD_DEPTH 1000
static _Thread_local int backward_depth;

/* A run's marks of a node (ag_run.marks). */
enum {
    MARK_USES = 1u << 0 /* counted in node->engine_users */
};

/* node->engine_users while a run releases the node's saved values, and after. */
enum { USERS_RELEASING = -1, USERS_RELEASED = -2 };

struct ag_run {
    uint64_t id;
    size_t n, cap;
    ag_node **nodes;
    uint8_t *marks; /* [cap] */
    /* nodes another run held when this one found them (Note [Engine scratch in the node]) */
    ag_node **side_keys; /* [side_cap], NULL: empty */
    int64_t *side_index;
    size_t side_n, side_cap;
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

int64_t pith_autograd_graph_task_id(void)
{
    return ag_current_run ? (int64_t)ag_current_run->id : -1;
}

bool pith_autograd_graph_task_filtered(void)
{
    return ag_current_run && (ag_current_run->filtered || !ag_current_run->accumulate);
}

/* ---- numbering: See Note [Engine scratch in the node] ---- */

static size_t side_slot(const ag_run *r, const ag_node *node)
{
    size_t h = (size_t)(((uintptr_t)node >> 4) * 0x9E3779B97F4A7C15ull);
    size_t i = h & (r->side_cap - 1);
    while (r->side_keys[i] && r->side_keys[i] != node)
        i = (i + 1) & (r->side_cap - 1);
    return i;
}

static bool side_insert(ag_run *r, ag_node *node, int64_t index)
{
    if (2 * (r->side_n + 1) > r->side_cap) {
        size_t cap = r->side_cap ? 2 * r->side_cap : 16;
        ag_node **keys = calloc(cap, sizeof *keys);
        int64_t *values = malloc(cap * sizeof *values);
        if (!keys || !values) {
            free(keys);
            free(values);
            return false;
        }
        ag_run old = *r;
        r->side_keys = keys;
        r->side_index = values;
        r->side_cap = cap;
        for (size_t i = 0; i < old.side_cap; i++)
            if (old.side_keys[i]) {
                size_t at = side_slot(r, old.side_keys[i]);
                r->side_keys[at] = old.side_keys[i];
                r->side_index[at] = old.side_index[i];
            }
        free(old.side_keys);
        free(old.side_index);
    }
    size_t at = side_slot(r, node);
    r->side_keys[at] = node;
    r->side_index[at] = index;
    r->side_n++;
    return true;
}

/* The node's index in this run, or -1 when the run did not reach it. */
static int64_t run_index(const ag_run *r, const ag_node *node)
{
    if (atomic_load_explicit(&node->engine_run, memory_order_relaxed) == r->id)
        return node->engine_index;
    if (!r->side_n)
        return -1;
    size_t at = side_slot(r, node);
    return r->side_keys[at] ? r->side_index[at] : -1;
}

bool ag_run_needs(const ag_run *run, const ag_node *node)
{
    int64_t i = run_index(run, node);
    return i >= 0 && (!run->filtered || run->needed[i]);
}

/* Counts this run among the users of the node's saved values, unless they are released
 * (then its apply raises where it needs them, as after any release). A release under way
 * on another thread is waited for: it only drops references. */
static uint8_t node_use(ag_node *node)
{
    if (!node->vt->release_saved)
        return 0;
    int users = atomic_load_explicit(&node->engine_users, memory_order_acquire);
    for (;;) {
        if (users == USERS_RELEASED)
            return 0;
        if (users == USERS_RELEASING) {
            sched_yield();
            users = atomic_load_explicit(&node->engine_users, memory_order_acquire);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&node->engine_users, &users, users + 1,
                                                  memory_order_acquire, memory_order_acquire))
            return MARK_USES;
    }
}

/* This run is done with the node's saved values: it releases them when it is the last user
 * and does not retain the graph. See Note [The engine's threads and the GIL]. */
static void node_unuse(ag_run *r, ag_node *node, size_t k, bool release)
{
    if (!(r->marks[k] & MARK_USES))
        return;
    r->marks[k] &= (uint8_t)~MARK_USES;
    int one = 1;
    if (release && atomic_compare_exchange_strong_explicit(&node->engine_users, &one,
                                                           USERS_RELEASING, memory_order_acq_rel,
                                                           memory_order_relaxed)) {
        node->vt->release_saved(node);
        node->flags |= AG_NODE_RELEASED;
        atomic_store_explicit(&node->engine_users, USERS_RELEASED, memory_order_release);
        return;
    }
    atomic_fetch_sub_explicit(&node->engine_users, 1, memory_order_release);
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
        uint8_t *marks = realloc(r->marks, cap * sizeof *marks);
        if (!marks)
            return false;
        r->marks = marks;
        r->cap = cap;
    }
    uint64_t unclaimed = 0;
    if (atomic_compare_exchange_strong_explicit(&node->engine_run, &unclaimed, r->id,
                                                memory_order_acquire, memory_order_relaxed))
        node->engine_index = (int64_t)r->n;
    else if (!side_insert(r, node, (int64_t)r->n))
        return false;
    r->marks[r->n] = node_use(node);
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
        if (!start || run_index(r, start) >= 0)
            continue;
        if (!run_add(r, start))
            goto oom;
        stack[depth++] = (frame){start, 0};
        while (depth) {
            frame *f = &stack[depth - 1];
            if (f->next < f->node->num_next) {
                ag_node *child = f->node->next[f->next++].node;
                if (!child || run_index(r, child) >= 0)
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
            post[done++] = (size_t)run_index(r, f->node);
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
static pith_status run_node(ag_run *r, ag_node *node, size_t k, heap *ready)
{
    size_t at = r->buffer_at[k];
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
        node_unuse(r, node, k, !r->retain_graph);
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
        int64_t index = e->node ? run_index(r, e->node) : -1;
        if (index < 0 || (r->filtered && !r->needed[index])) {
            pith_release(g);
            continue;
        }
        size_t target = (size_t)index;
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
    for (size_t i = 0; i < r->n; i++) {
        ag_node *node = r->nodes[i];
        node_unuse(r, node, i, false);
        uint64_t mine = r->id;
        atomic_compare_exchange_strong_explicit(&node->engine_run, &mine, 0, memory_order_release,
                                                memory_order_relaxed);
    }
    free(r->nodes);
    free(r->marks);
    free(r->side_keys);
    free(r->side_index);
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
    for (int k = 0; k < ninputs; k++) {
        int64_t index = run_index(r, inputs[k].node);
        if (index >= 0)
            r->needed[index] = true;
    }
    for (size_t p = 0; p < r->n; p++) {
        size_t i = order[p];
        ag_node *node = r->nodes[i];
        bool leads = false;
        for (uint32_t j = 0; j < node->num_next; j++) {
            int64_t c = node->next[j].node ? run_index(r, node->next[j].node) : -1;
            leads |= c >= 0 && r->needed[c];
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
            int64_t c = node->next[j].node ? run_index(r, node->next[j].node) : -1;
            if (c >= 0 && r->needed[c])
                r->deps[c]++;
        }
    }
    return PITH_OK;
}

static pith_status execute(ag_run *r, target *roots, pith_tensor **root_grads, int nroots,
                           target *inputs, int ninputs, pith_tensor **captured)
{
    pith_status st = PITH_OK;
    for (int i = 0; i < nroots && st == PITH_OK; i++) {
        st = buffer_add(&r->buffers[r->buffer_at[run_index(r, roots[i].node)] + roots[i].input_nr],
                        root_grads[i]);
        root_grads[i] = NULL;
    }
    heap ready = {0};
    for (int i = 0; i < nroots && st == PITH_OK; i++) {
        ag_node *node = roots[i].node;
        size_t k = (size_t)run_index(r, node);
        if (r->deps[k] == 0) {
            r->deps[k] = -1; /* queued once even when several roots share it */
            if (!heap_push(&ready, node))
                st = pith_set_error(PITH_ERR_NOMEM, "out of memory running backward");
        }
    }
    while (st == PITH_OK && ready.n) {
        ag_node *node = heap_pop(&ready);
        size_t k = (size_t)run_index(r, node);
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
            st = run_node(r, node, k, &ready);
    }
    free(ready.items);
    return st;
}

pith_status ag_engine_run(pith_tensor *const *roots, pith_tensor *const *grad_roots, int nroots,
                          pith_tensor *const *inputs, int ninputs, pith_tensor **grads,
                          bool accumulate, int flags)
{
    /* No roots is PyTorch's no-op: nothing runs, and every input is unused. */
    if (nroots < 0 || (nroots > 0 && !roots))
        return pith_set_error(PITH_ERR_VALUE, "backward: %d roots given as NULL", nroots);
    if (ninputs < 0 || (ninputs > 0 && !inputs))
        return pith_set_error(PITH_ERR_VALUE, "grad: %d inputs given as NULL", ninputs);
    if (backward_depth >= AG_MAX_BACKWARD_DEPTH)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "backward: called inside %d nested backward calls on this "
                              "thread; pith allows at most %d",
                              backward_depth, AG_MAX_BACKWARD_DEPTH);
    target *rt = calloc((size_t)(nroots > 0 ? nroots : 1), sizeof *rt);
    pith_tensor **rg = calloc((size_t)(nroots > 0 ? nroots : 1), sizeof *rg);
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
        backward_depth++;
        st = execute(&run, rt, rg, nroots, it, ninputs, captured);
        backward_depth--;
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
