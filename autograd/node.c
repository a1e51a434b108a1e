/* node.c — nodes of the graph: allocation, edges, the metadata of their inputs, release;
 * and saved values (Note [Saved tensors and their versions], autograd.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd_internal.h"
#include "core/error.h"
#include "core/interpreter_internal.h"
#include "kernels/views.h"

static atomic_size_t live_nodes;
/* Note [Sequence numbers]
 * Each thread numbers the nodes it makes, as PyTorch does; the engine runs the ready node
 * with the highest number first, so that a node runs after every node made later from its
 * outputs (which it could otherwise overtake only when the graph has no path between them,
 * where the order does not change a result but keeps hooks in PyTorch's order). */
static _Thread_local uint64_t next_sequence_nr;

size_t pith_live_nodes(void)
{
    return atomic_load_explicit(&live_nodes, memory_order_relaxed);
}

/* Note [A node is one allocation]
 * Recording an op makes a node, and often the accumulators of its leaves, so allocation
 * is most of what recording costs (issue 31's surcharge of `a + b`). A node, its next
 * edges and its input metadata are therefore one block: the struct of vt->size, then
 * num_next edges, then num_inputs metadata, each part aligned for what follows. `next` and
 * `input_meta` point into the block and are never reallocated or freed apart from it.
 * The block is zeroed by ag_zalloc: See Note [Zeroed allocations without calloc]
 * (autograd_internal.h). */
static size_t align_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

ag_node *ag_node_new(const ag_node_vtable *vt, uint32_t num_next, uint32_t num_inputs)
{
    /* the counts are uint32_t and the parts small: no size here can overflow a size_t */
    size_t next_at = align_up(vt->size, _Alignof(ag_edge));
    size_t meta_at = align_up(next_at + num_next * sizeof(ag_edge), _Alignof(ag_input_meta));
    char *block = ag_zalloc(meta_at + num_inputs * sizeof(ag_input_meta));
    if (!block)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory for a node of %s", vt->name);
    ag_node *n = (ag_node *)block;
    atomic_init(&n->refcount, 1);
    n->vt = vt;
    n->sequence_nr = next_sequence_nr++;
    n->num_next = num_next;
    n->num_inputs = num_inputs;
    n->next = num_next ? (ag_edge *)(block + next_at) : NULL;
    n->input_meta = num_inputs ? (ag_input_meta *)(block + meta_at) : NULL;
    n->engine_index = -1;
    atomic_init(&n->pyobj, (void *)NULL);
    atomic_init(&n->tag, (pith_interpreter *)NULL);
    atomic_init(&n->leaf, (pith_tensor *)NULL);
    atomic_fetch_add_explicit(&live_nodes, 1, memory_order_relaxed);
    if (ag_anomaly_enabled()) /* See Note [Anomaly mode] */
        ag_anomaly_record(n);
    return n;
}

void ag_node_retain(ag_node *n)
{
    if (n)
        atomic_fetch_add_explicit(&n->refcount, 1, memory_order_relaxed);
}

/* Note [Releasing a long graph]
 * Freeing a node releases its saved tensors and the nodes of its edges, which may free
 * them in turn: a chain of a million nodes would recurse a million deep. So a thread frees
 * nodes from a worklist: the release that frees a node while none is being freed on the
 * thread frees it and then drains the worklist, and releases made meanwhile only push.
 * The worklist starts in the thread's small inline array and moves to the heap only past
 * it, since most releases free a node or two (a result's node and its leaves'
 * accumulators): recording and dropping `a + b` then allocates nothing here. When the
 * worklist cannot grow (out of memory) the node is freed recursively instead, which is
 * correct, only deeper. */
#define DOOMED_INLINE 16
typedef struct {
    ag_node **items; /* inline_items, or the heap past DOOMED_INLINE */
    size_t n, cap;
    bool draining;
    ag_node *inline_items[DOOMED_INLINE];
} doomed_list;
static _Thread_local doomed_list doomed;

static void node_free(ag_node *n)
{
    if (n->vt->release_saved)
        n->vt->release_saved(n);
    for (uint32_t i = 0; i < n->num_next; i++)
        ag_node_release(n->next[i].node);
    if (n->pre_hooks)
        ag_hooks_free(n->pre_hooks);
    if (n->post_hooks)
        ag_hooks_free(n->post_hooks);
    if (n->anomaly_record)
        ag_anomaly_release(n);
    if (n->py_state)
        interp_call_decref(atomic_load_explicit(&n->tag, memory_order_acquire), n->py_state);
    free(n); /* its edges and input metadata too: See Note [A node is one allocation] */
    atomic_fetch_sub_explicit(&live_nodes, 1, memory_order_relaxed);
}

static bool doomed_push(doomed_list *d, ag_node *n)
{
    if (d->n == d->cap) {
        size_t cap = d->cap * 2;
        bool on_heap = d->items != d->inline_items;
        ag_node **items = on_heap ? realloc(d->items, cap * sizeof *items)
                                  : malloc(cap * sizeof *items);
        if (!items)
            return false;
        if (!on_heap)
            memcpy(items, d->inline_items, d->n * sizeof *items);
        d->items = items;
        d->cap = cap;
    }
    d->items[d->n++] = n;
    return true;
}

void ag_node_release(ag_node *n)
{
    if (!n || atomic_fetch_sub_explicit(&n->refcount, 1, memory_order_acq_rel) != 1)
        return;
    doomed_list *d = &doomed;
    if (d->draining) {
        if (!doomed_push(d, n))
            node_free(n);
        return;
    }
    d->draining = true;
    d->items = d->inline_items;
    d->cap = DOOMED_INLINE;
    node_free(n);
    while (d->n)
        node_free(d->items[--d->n]);
    if (d->items != d->inline_items)
        free(d->items);
    d->items = NULL;
    d->cap = 0;
    d->draining = false;
}

pith_status ag_set_next_edge(ag_node *n, uint32_t i, const pith_tensor *t)
{
    ag_edge *e = &n->next[i];
    if (!t || !t->autograd || !ag_requires_grad(t))
        return PITH_OK;
    const ag_meta *m = t->autograd;
    ag_node *target = ag_grad_fn(t);
    uint32_t input_nr = m->output_nr;
    if (!target) {
        /* The tensor is logically const: its accumulator is made once and kept (See Note
         * [Autograd state behind one pointer]). */
        target = ag_accumulator((pith_tensor *)t);
        input_nr = 0;
        if (!target)
            return pith_last_status();
    }
    ag_node_retain(target);
    e->node = target;
    e->input_nr = input_nr;
    return PITH_OK;
}

bool ag_needs_grad(const ag_node *n, uint32_t i)
{
    const ag_node *target = n->next[i].node;
    if (!target)
        return false;
    return !ag_current_run || ag_run_needs(ag_current_run, target);
}

void ag_input_meta_set(ag_input_meta *m, const pith_tensor *t)
{
    m->present = true;
    m->ndim = t->ndim;
    m->dtype = t->dtype;
    m->device = t->device;
    memcpy(m->sizes, t->sizes, (size_t)t->ndim * sizeof m->sizes[0]);
}

pith_status ag_set_history(ag_node *n, uint32_t output_nr, pith_tensor *t)
{
    if (!t || !ag_dtype_differentiable(t->dtype))
        return PITH_OK;
    ag_meta *m = ag_meta_of(t);
    if (!m)
        return pith_last_status();
    if (m->retain_hook && m->grad_fn != n) /* See Note [Tensor hooks] */
        ag_retain_hook_move(t, m->grad_fn, n, output_nr);
    ag_node_retain(n);
    ag_node_release(m->grad_fn);
    m->grad_fn = n;
    m->output_nr = output_nr;
    m->requires_grad = false;
    ag_input_meta_set(&n->input_meta[output_nr], t);
    return PITH_OK;
}

/* ---- saved values ---- */

/* A header over t's storage and geometry, without autograd state or the Python key. */
pith_tensor *ag_alias_without_history(const pith_tensor *t)
{
    pith_tensor *a = tensor_view(t, t->ndim, t->sizes, t->strides, t->offset);
    if (a)
        a->keys &= ~PITH_KEYSET(PITH_KEY_AUTOGRAD);
    return a;
}

pith_status ag_save(ag_saved *s, const pith_tensor *t, bool is_output)
{
    s->was_saved = true;
    if (!t)
        return PITH_OK;
    /* an inference tensor has no version to check: See Note [Grad mode is per thread] */
    if (t->flags & PITH_TENSOR_INFERENCE)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "Inference tensors cannot be saved for backward. Please do not "
                              "use Tensors created in inference mode in computation tracked by "
                              "autograd. To work around this, you can make a clone to get a "
                              "normal tensor and use it in autograd, or use `torch.no_grad()` "
                              "instead of `torch.inference_mode()`.");
    s->version = atomic_load_explicit(&t->storage->version, memory_order_relaxed);
    s->is_output = is_output;
    s->requires_grad = t->autograd && ag_requires_grad(t);
    bool packed;
    pith_status st = ag_saved_pack(s, t, &packed); /* See Note [Saved tensor hooks] */
    if (st != PITH_OK || packed)
        return st;
    if (!is_output) {
        /* An input is kept as it is, history and all, as PyTorch's SavedVariable keeps
         * it: create_graph then differentiates through it. */
        pith_retain((pith_tensor *)t);
        s->data = (pith_tensor *)t;
        return PITH_OK;
    }
    s->output_nr = ag_output_nr(t);
    s->data = ag_alias_without_history(t);
    return s->data ? PITH_OK : pith_last_status();
}

void ag_saved_release(ag_saved *s)
{
    pith_release(s->data);
    s->data = NULL;
    if (s->hooks)
        s->hooks->release(s->packed);
    s->hooks = NULL;
    s->packed = NULL;
    ag_node_release(s->history);
    s->history = NULL;
}

/* A node's name without its "Backward<N>" suffix, as PyTorch's message spells it ("Mul"). */
static int name_stem_length(const char *name)
{
    const char *suffix = strstr(name, "Backward");
    return suffix ? (int)(suffix - name) : (int)strlen(name);
}

static pith_status saved_modified(const ag_saved *s, const ag_node *owner, int64_t now)
{
    char shape[256];
    const pith_tensor *t = s->data;
    const ag_node *fn = s->is_output ? owner : ag_grad_fn(t);
    uint32_t nr = s->is_output ? s->output_nr : ag_output_nr(t);
    char which[160] = "";
    if (fn)
        snprintf(which, sizeof which, ", which is output %" PRIu32 " of %.*s,", nr,
                 name_stem_length(fn->vt->name), fn->vt->name);
    return pith_set_error(PITH_ERR_RUNTIME,
                          "one of the variables needed for gradient computation has been "
                          "modified by an inplace operation: [%s %s]%s is at version %" PRId64
                          "; expected version %" PRId64 " instead. Hint: %s",
                          dtype_legacy_tensor_name(t->dtype),
                          shape_format(t->ndim, t->sizes, shape, sizeof shape), which, now,
                          s->version,
                          ag_anomaly_enabled()
                              ? "the backtrace further above shows the operation that failed "
                                "to compute its gradient. The variable in question was "
                                "changed in there or anywhere later. Good luck!"
                              : "enable anomaly detection to find the operation that failed "
                                "to compute its gradient, with "
                                "torch.autograd.set_detect_anomaly(True, check_nan=False).");
}

pith_status ag_unpack(const ag_saved *s, ag_node *owner, pith_tensor **out)
{
    *out = NULL;
    if (owner->flags & AG_NODE_RELEASED)
        return pith_set_error(
            PITH_ERR_RUNTIME,
            "Trying to backward through the graph a second time (or directly access saved "
            "tensors after they have already been freed). Saved intermediate values of the "
            "graph are freed when you call .backward() or autograd.grad(). Specify "
            "retain_graph=True if you need to backward through the graph a second time or if "
            "you need to access saved tensors after calling backward.");
    if (s->hooks)
        return ag_saved_unpack_packed(s, owner, out);
    if (!s->data)
        return PITH_OK;
    int64_t now = atomic_load_explicit(&s->data->storage->version, memory_order_relaxed);
    if (now != s->version)
        return saved_modified(s, owner, now);
    if (!s->is_output || grad_mode_tls.grad_disabled || !s->requires_grad) {
        pith_retain(s->data);
        *out = s->data;
        return PITH_OK;
    }
    /* create_graph: the output gets its history back, as output output_nr of its node. */
    return ag_alias_with_history(s->data, owner, s->output_nr, out);
}

pith_status ag_alias_with_history(const pith_tensor *data, ag_node *fn, uint32_t output_nr,
                                  pith_tensor **out)
{
    pith_tensor *t = ag_alias_without_history(data);
    ag_meta *m = t ? ag_meta_of(t) : NULL;
    if (!m) {
        pith_release(t);
        return pith_last_status();
    }
    ag_node_retain(fn);
    m->grad_fn = fn;
    m->output_nr = output_nr;
    *out = t;
    return PITH_OK;
}

pith_status ag_save_metadata(ag_saved_metadata *s, const pith_tensor *t)
{
    if (!t)
        return PITH_OK;
    s->device = t->device;
    /* A Meta tensor over a data-less storage of the same size, at the same offset: the
     * helpers that read storage positions (as_strided's backward) see t's geometry whole. */
    pith_storage *storage = storage_new(t->storage->nbytes, PITH_META);
    if (!storage)
        return pith_last_status();
    s->meta = tensor_from_storage(storage, t->ndim, t->sizes, t->strides, t->offset, t->dtype,
                                  PITH_META);
    storage_release(storage);
    return s->meta ? PITH_OK : pith_last_status();
}

void ag_saved_metadata_release(ag_saved_metadata *s)
{
    pith_release(s->meta);
    s->meta = NULL;
}
