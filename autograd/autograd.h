/* autograd.h — the autograd layer inside libpith: per-tensor autograd state, nodes, saved
 * values, and what the generated autograd kernels (autograd/generated/) call.
 *
 * The layer sits between kernels/ and compile/ (ARCHITECTURE.md, "Autograd"). Recording is
 * the Autograd dispatch key: see Note [The tape is a dispatch key] in autograd/record.c.
 * core/ sees only the opaque pith_tensor.autograd pointer and the release function this
 * layer installs (Note [Autograd state behind one pointer], autograd/meta.c). */
#ifndef PITH_AUTOGRAD_AUTOGRAD_H
#define PITH_AUTOGRAD_AUTOGRAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/grad_mode.h"
#include "core/tensor.h"
#include "dispatch/keys.h"
#include "dispatch/value.h"
#include "pith/autograd.h"

typedef struct ag_node ag_node;

/* ---- edges and the metadata of a gradient ---- */

/* Where a gradient goes: input `input_nr` of `node`. node NULL: nowhere (the forward input
 * did not require grad, or is not differentiable). */
typedef struct {
    ag_node *node; /* strong reference */
    uint32_t input_nr;
} ag_edge;

/* What a gradient flowing into a node's input must look like: the forward output's shape,
 * dtype and device. The engine sums a broadcast gradient to `sizes` and casts it to
 * `dtype` (Note [Gradients are reduced by the engine], engine.c). */
typedef struct {
    int ndim;
    pith_dtype dtype;
    pith_device device;
    bool present; /* false: the input carries no gradient (a non-differentiable output) */
    int64_t sizes[PITH_MAX_DIMS];
} ag_input_meta;

/* ---- saved values ---- */

/* Note [Saved tensors and their versions]
 * A node keeps each tensor its formulas read as an ag_saved, with the storage's version at
 * save time; unpacking checks the version and raises PyTorch's "modified by an inplace
 * operation" error, naming the tensor's type and shape, the node and output number that
 * made it, and both versions.
 *  - An input is kept as it is, history and all, as PyTorch's SavedVariable keeps it, so
 *    that a backward that records (create_graph) differentiates through it.
 *  - An output of the node that saves it is kept as a header over its storage without
 *    autograd state: keeping the output itself would make a cycle (node -> output -> node).
 *    Unpacked while grad mode is on, it gets its history back as output output_nr of the
 *    node, which the engine passes in.
 *  - A node whose saved values were released (a backward without retain_graph) raises
 *    PyTorch's "backward through the graph a second time" error at unpack. */
typedef struct {
    pith_tensor *data;  /* NULL: nothing saved (None), or packed by hooks */
    int64_t version;    /* the storage's version at save time */
    uint32_t output_nr; /* for an output: its number among the node's outputs */
    bool is_output;     /* an output of the node that saved it */
    bool requires_grad; /* the original required grad */
    bool was_saved;
    /* Packed by saved-tensor hooks (Note [Saved tensor hooks], saved_hooks.c): `packed`
     * stands for the tensor, and for an input that required grad `history` is where its
     * gradient went (its grad_fn at output_nr, or a leaf's accumulator; strong). */
    const pith_saved_tensors_hooks *hooks;
    void *packed;
    ag_node *history;
} ag_saved;

/* Saves `t` (NULL saves None). `is_output`: t is an output of `owner` (call after
 * ag_set_history). Never fails for a valid tensor but a NULL alias (out of memory). */
pith_status ag_save(ag_saved *s, const pith_tensor *t, bool is_output);
/* A new reference to the saved tensor, with its history when grad mode is on (backward
 * with create_graph), or NULL with the error set: released (backward ran without
 * retain_graph), or modified in place since it was saved. `owner` names the node in the
 * error and is the grad_fn of a saved output. `*out` NULL and PITH_OK for a saved None. */
pith_status ag_unpack(const ag_saved *s, ag_node *owner, pith_tensor **out);
void ag_saved_release(ag_saved *s);
/* saved_hooks.c: packs `t` with the innermost saved-tensor hooks of this thread, if any
 * (*packed says whether it did); unpacks a packed value. */
pith_status ag_saved_pack(ag_saved *s, const pith_tensor *t, bool *packed);
pith_status ag_saved_unpack_packed(const ag_saved *s, ag_node *owner, pith_tensor **out);

/* A Tensor the formulas read only through sizes, strides, dtype and device (saves_metadata).
 * A metadata-only header over no storage: the node keeps no bytes. */
typedef struct {
    pith_tensor *meta; /* a Meta tensor of the same geometry, dtype; device kept below */
    pith_device device;
} ag_saved_metadata;
pith_status ag_save_metadata(ag_saved_metadata *s, const pith_tensor *t);
void ag_saved_metadata_release(ag_saved_metadata *s);

/* ---- nodes ---- */

typedef struct {
    /* PyTorch's class name: "AddBackward0". */
    const char *name;
    /* Computes the gradients of the node's next edges. grads[i] is the gradient of forward
     * output i (never NULL: the engine materializes zeros from input_meta for an output
     * that got none); out[j] receives a new reference for next edge j, or NULL when edge j
     * needs none (ag_needs_grad is false) or the gradient is zero. The engine reduces and
     * casts out[j] to the next node's ag_input_meta. Returns PITH_OK or the error. */
    pith_status (*apply)(ag_node *node, pith_tensor *const *grads, pith_tensor **out);
    /* Releases the saved values (after a backward without retain_graph, and at free). Must
     * be idempotent. NULL: nothing saved. */
    void (*release_saved)(ag_node *node);
    /* The size of the struct that embeds ag_node as its first member. */
    size_t size;
} ag_node_vtable;

/* The node's flags. */
enum {
    AG_NODE_RELEASED = 1u << 0,   /* saved values released: a second backward raises */
    AG_NODE_ACCUMULATOR = 1u << 1 /* a leaf's AccumulateGrad */
};

/* Note [Nodes]
 * A node is a refcounted C struct that embeds ag_node first. It is referenced by the
 * grad_fn of its outputs, by the edges of later nodes, and by Python wrappers. Its PyObject
 * slot is lazy and tagged with the interpreter that made it, as a tensor's is: the wrapper
 * holds the node, and the node points back at the wrapper without owning it, so
 * `y.grad_fn is y.grad_fn` while the wrapper lives. */
struct ag_node {
    atomic_int_fast64_t refcount;
    const ag_node_vtable *vt;
    uint64_t sequence_nr;  /* order of creation on this thread: backward runs newest first */
    uint32_t num_inputs;   /* gradients it takes: its forward outputs */
    uint32_t num_next;     /* gradients it gives: its forward inputs */
    uint32_t flags;
    ag_edge *next;             /* [num_next] */
    ag_input_meta *input_meta; /* [num_inputs] */
    /* Hooks (C and Python), run by the engine; see pith/autograd.h. */
    struct ag_hook *pre_hooks;
    struct ag_hook *post_hooks;
    uint32_t hooks_running; /* hooks of this node are running: removal defers (hooks.c) */
    /* Where the node was made, kept in anomaly mode (Note [Anomaly mode], anomaly.c). */
    void *anomaly_record;
    const struct pith_anomaly_hooks *anomaly_hooks;
    /* The engine's scratch, valid during one backward (Note [Engine scratch in the node],
     * engine.c): the index in the run that claimed the node (engine_run, 0 when none), and
     * how many runs use its saved values (negative: released; Note [The engine's threads
     * and the GIL]). */
    int64_t engine_index;
    _Atomic(uint64_t) engine_run;
    atomic_int engine_users;
    /* The PyObject slot (Note [Nodes]), and a Python object the node owns for its
     * interpreter (`tag`): the metadata dict. It is released through that interpreter's
     * table when the node is freed, so it honours disarm. */
    _Atomic(void *) pyobj;
    _Atomic(pith_interpreter *) tag;
    void *py_state;
    /* Data of the accumulator of a leaf: the leaf, cleared when the leaf dies. */
    _Atomic(pith_tensor *) leaf;
};

/* A new node of `vt` (zeroed beyond the header) with num_next edges (all NULL) and
 * num_inputs input metadata (not present), refcount 1, the next sequence number. NULL with
 * the error set on failure. */
ag_node *ag_node_new(const ag_node_vtable *vt, uint32_t num_next, uint32_t num_inputs);
void ag_node_retain(ag_node *n);
void ag_node_release(ag_node *n);

/* Sets next edge `i` from forward input `t`: its grad_fn and output number, or for a leaf
 * that requires grad its accumulator (made once and kept with the leaf), or no edge when t
 * is NULL or does not require grad. Fails only for out of memory. */
pith_status ag_set_next_edge(ag_node *n, uint32_t i, const pith_tensor *t);
/* Whether next edge `i` needs a gradient in this backward: it has a node, and (in a
 * backward with inputs=) leads to one of them. Generated apply functions compute a
 * formula only for the edges that need it. */
bool ag_needs_grad(const ag_node *n, uint32_t i);
/* Makes output `output_nr` of `n` carry history: t's grad_fn becomes n (retained) and the
 * node's input_meta[output_nr] takes t's metadata. For a floating t only: an integer or
 * bool output stays without history, as in PyTorch. Fails only for out of memory. */
pith_status ag_set_history(ag_node *n, uint32_t output_nr, pith_tensor *t);

/* ---- recording ---- */

/* Whether an op with these tensor arguments records: grad mode is on and one of them
 * requires grad. Cheap: a tensor without autograd state is a NULL compare. */
bool ag_requires_grad(const pith_tensor *t);
static inline bool ag_should_record(const pith_tensor *const *ts, size_t n)
{
    if (grad_mode_tls.grad_disabled)
        return false;
    for (size_t i = 0; i < n; i++)
        if (ts[i] && ts[i]->autograd && ag_requires_grad(ts[i]))
            return true;
    return false;
}
bool ag_list_requires_grad(pith_tensor_list list);

/* Note [Below Autograd]
 * An autograd kernel redispatches with the Autograd key excluded on this thread for the
 * call, as PyTorch's AutoDispatchBelowADInplaceOrView: the kernels below, and any op they
 * call through pith_call_<op>, do not record again. */
typedef struct {
    pith_keyset excluded;
} ag_below_guard;
static inline pith_keyset ag_below_enter(pith_keyset ks, ag_below_guard *g)
{
    pith_tls_keys *tls = tls_keys();
    g->excluded = tls->excluded;
    tls->excluded |= PITH_KEYSET(PITH_KEY_AUTOGRAD);
    return ks & ~PITH_KEYSET(PITH_KEY_AUTOGRAD);
}
static inline void ag_below_exit(const ag_below_guard *g)
{
    tls_keys()->excluded = g->excluded;
}

/* In-place: checks that `self` may be written with grad mode on: not a leaf that requires
 * grad, not an inference tensor outside inference mode. PyTorch's errors. */
pith_status ag_check_inplace(const pith_tensor *self, const char *op);
/* PyTorch's refusal to write an inference tensor outside inference mode (in place or as an
 * out= target); See Note [Inference tensors reach the autograd kernels]. */
pith_status ag_check_inference_write(const pith_tensor *t);
/* Whether an in-place form checks self (ag_check_inplace) even when nothing records: it has
 * autograd state, or it is an inference tensor. */
static inline bool ag_inplace_checked(const pith_tensor *self)
{
    return self->autograd || (self->flags & PITH_TENSOR_INFERENCE);
}
/* After an in-place op recorded `n` for `self`: self's history becomes output 0 of n; for a
 * view, its base's history is rewritten (Note [Views and in-place], views.c). */
pith_status ag_rebase_history(ag_node *n, pith_tensor *self);
/* After a view op made `view` of `base` (a tensor with autograd state): remembers the base,
 * so that an in-place op on the view rewrites the base's history. `multi_output`: the op
 * returns several views (unbind, split, chunk), whose in-place writes PyTorch forbids. */
pith_status ag_note_view(pith_tensor *view, const pith_tensor *base, bool multi_output);
/* ag_note_view for the result of a view op: one tensor, or each of a Tensor[] result. */
pith_status ag_note_view_result(pith_value *ret, const pith_tensor *base);
/* out= with an argument that requires grad and grad mode on: PyTorch's error. */
pith_status ag_out_error(const char *op);

/* A wrapped number (0-dim, weak in type promotion) for a literal or a Scalar argument that
 * a formula passes where a Tensor is expected. New reference or NULL. */
pith_tensor *ag_wrapped_number(pith_scalar s);

/* ---- per-tensor state (meta.c) ---- */

typedef struct ag_meta ag_meta;
/* The tensor's state, made on first need; NULL for out of memory. */
ag_meta *ag_meta_of(pith_tensor *t);
/* The node of a tensor's history, or NULL for a leaf. Borrowed. */
ag_node *ag_grad_fn(const pith_tensor *t);
uint32_t ag_output_nr(const pith_tensor *t);
/* The accumulator of a leaf that requires grad (made once, kept with the leaf). Borrowed;
 * NULL with the error set for out of memory. */
ag_node *ag_accumulator(pith_tensor *t);

/* ---- hooks ---- */

/* The kinds of hooks, in the order a node runs them (Note [Hook order], hooks.c). A node's
 * pre_hooks list holds the first three, in that order; post_hooks the last two. */
typedef enum {
    AG_HOOK_TENSOR,          /* Tensor.register_hook */
    AG_HOOK_RETAINS_GRAD,    /* retain_grad */
    AG_HOOK_NODE_PRE,        /* grad_fn.register_prehook */
    AG_HOOK_POST_ACCUMULATE, /* Tensor.register_post_accumulate_grad_hook (accumulators) */
    AG_HOOK_NODE_POST        /* grad_fn.register_hook */
} ag_hook_kind;

/* A hook. A tensor hook (Note [Tensor hooks], hooks.c) runs on the gradient that reaches
 * input `input_nr` of the node it is registered on (the tensor's grad_fn, or a leaf's
 * accumulator) before the node runs, and may replace it; the others see the whole node. */
typedef struct ag_hook {
    struct ag_hook *next;
    int64_t id;
    uint32_t input_nr;
    bool retains_grad; /* the hook of retain_grad: ctx is the tensor, not owned */
    bool removed;      /* removed while its node's hooks ran: freed when they finish */
    ag_hook_kind kind;
    pith_tensor_hook fn;
    pith_node_pre_hook pre_fn;
    pith_node_post_hook post_fn;
    pith_post_accumulate_grad_hook accumulate_fn;
    void (*ctx_release)(void *ctx);
    void *ctx;
} ag_hook;

/* Runs the tensor hooks of `node` on grads[] (engine.c calls it before apply). */
pith_status ag_run_tensor_hooks(ag_node *node, pith_tensor **grads);
/* Runs the node's pre-hooks on its gradients grads[num_inputs] (before apply), and its
 * post-hooks on what apply gave out[num_next] (NULL when num_next is 0) (engine.c). */
pith_status ag_run_node_pre_hooks(ag_node *node, pith_tensor **grads);
pith_status ag_run_node_post_hooks(ag_node *node, pith_tensor **out, pith_tensor *const *grads);
/* Runs the post-accumulate-grad hooks of an accumulator on its leaf (accumulate.c). */
pith_status ag_run_post_accumulate_hooks(ag_node *node, pith_tensor *leaf);

/* ---- anomaly mode (anomaly.c) ---- */

/* Whether anomaly detection is on (a relaxed load). */
bool ag_anomaly_enabled(void);
/* At node creation in anomaly mode: keeps the record of where it was made. */
void ag_anomaly_record(ag_node *node);
void ag_anomaly_release(ag_node *node);
/* After a node ran: with check_nan, fails for a NaN in out[num_next]. */
pith_status ag_anomaly_check_nan(const ag_node *node, pith_tensor *const *out);
/* The node failed in backward: reports its record, keeping the error as it is. */
void ag_anomaly_report(const ag_node *node);

/* ---- engine (engine.c) ---- */

/* Runs backward from roots (grad_roots[i] may be NULL for a one-element root: ones). With
 * inputs (ninputs > 0), only their gradients are computed, and stored in grads[] (new
 * references, NULL when unused) instead of accumulated into .grad (accumulate false) or
 * accumulated into only those inputs' .grad (accumulate true). */
pith_status ag_engine_run(pith_tensor *const *roots, pith_tensor *const *grad_roots,
                          int nroots, pith_tensor *const *inputs, int ninputs,
                          pith_tensor **grads, bool accumulate, int flags);

#endif /* PITH_AUTOGRAD_AUTOGRAD_H */
