/* autograd.h — gradients from C: requires_grad, .grad, backward and grad, and the graph's
 * nodes. Names follow ../shared/C_API.md ("Autograd"); the semantics are PyTorch's.
 * docs/autograd.md explains the design and the differences from PyTorch. */
#ifndef PITH_AUTOGRAD_H
#define PITH_AUTOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "pith/export.h"
#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pith_tensor pith_tensor;
typedef struct ag_node pith_node;

typedef enum { PITH_RETAIN_GRAPH = 1, PITH_CREATE_GRAPH = 2, PITH_ALLOW_UNUSED = 4 } pith_backward_flags;

/* Only floating dtypes can require grad, and only a leaf can be changed (a non-leaf may be
 * set to true, which changes nothing), as in PyTorch. */
PITH_API pith_status pith_set_requires_grad(pith_tensor *t, bool requires_grad);
/* false for NULL. */
PITH_API bool pith_requires_grad(const pith_tensor *t);
/* A tensor without history: one that does not require grad, or a leaf that does. true for
 * NULL. */
PITH_API bool pith_is_leaf(const pith_tensor *t);
/* Stores a new reference to the accumulated gradient in *out, or NULL when there is none. */
PITH_API pith_status pith_grad_get(const pith_tensor *t, pith_tensor **out);
/* Sets the gradient (retained); NULL clears it. Its dtype, device and shape must match t's. */
PITH_API pith_status pith_grad_set(pith_tensor *t, const pith_tensor *grad);
/* PyTorch's node name ("AddBackward0"), or NULL for a leaf or a tensor without history. */
PITH_API const char *pith_grad_fn_name(const pith_tensor *t);
/* Accumulates into the leaves' gradients. grad_roots may be NULL when every root has one
 * element (and a NULL entry stands for ones of such a root). */
PITH_API pith_status pith_backward(pith_tensor *const *roots, pith_tensor *const *grad_roots,
                                   int n, int flags);
/* Stores new references to the gradients of `inputs` in grads[] and leaves .grad alone. An
 * input that takes no part is an error, unless PITH_ALLOW_UNUSED is set (then NULL). */
PITH_API pith_status pith_autograd_grad(pith_tensor *const *roots,
                                        pith_tensor *const *grad_roots, int nroots,
                                        pith_tensor *const *inputs, int ninputs,
                                        pith_tensor **grads, int flags);

/* As pith_backward, but accumulates only into the .grad of `inputs` (PyTorch's
 * backward(inputs=...)); a non-leaf input gets its .grad too. */
PITH_API pith_status pith_backward_inputs(pith_tensor *const *roots,
                                          pith_tensor *const *grad_roots, int n,
                                          pith_tensor *const *inputs, int ninputs, int flags);
/* Detaches `t` in place, as Tensor.detach_(): it becomes a leaf that does not require grad
 * (its .grad stays). */
PITH_API pith_status pith_detach_(pith_tensor *t);
/* Gives `t` autograd state without making it require grad, so that the views made from it
 * afterwards remember it as their base: an in-place write of a tensor that requires grad
 * into such a view then gives `t` history, as in PyTorch (which tracks every view; pith
 * tracks the views of tensors with autograd state: docs/autograd.md). tracked says whether
 * `t` has autograd state. */
PITH_API pith_status pith_autograd_track(pith_tensor *t);
PITH_API bool pith_autograd_tracked(const pith_tensor *t);
/* Which output of its grad_fn `t` is (0 for a leaf). */
PITH_API int pith_output_nr(const pith_tensor *t);

/* ---- the graph ---- */

/* The node of t's history (a new reference), or NULL for a leaf. */
PITH_API pith_node *pith_grad_fn(const pith_tensor *t);
PITH_API void pith_node_retain(pith_node *node);
PITH_API void pith_node_release(pith_node *node);
PITH_API const char *pith_node_name(const pith_node *node);
/* The number of next edges: one per forward input. */
PITH_API int pith_node_num_next(const pith_node *node);
/* Next edge i: *next gets a new reference to its node (NULL when the input takes no
 * gradient) and *input_nr the input of that node it feeds. */
PITH_API pith_status pith_node_next(const pith_node *node, int i, pith_node **next,
                                    int *input_nr);

/* The leaf of an AccumulateGrad node (a new reference), or NULL for another node or a
 * leaf that died. */
PITH_API pith_tensor *pith_node_variable(const pith_node *node);

/* A node's PyObject slot, for bindings (See Note [Nodes] in autograd/autograd.h): the
 * first interpreter to set it owns it. get gives the object stored by `interp`, or NULL;
 * set stores `pyobj` when the slot is empty and `interp` owns it (or nobody does yet) and
 * says whether it did; clear empties the slot if it holds `pyobj`. */
PITH_API void *pith_node_slot_get(const pith_node *node, const pith_interpreter *interp);
PITH_API bool pith_node_slot_set(pith_node *node, pith_interpreter *interp, void *pyobj);
PITH_API void pith_node_slot_clear(pith_node *node, void *pyobj);
/* A Python object the node owns (its metadata dict), for the interpreter that owns the
 * slot: get gives it (borrowed) or NULL; set stores `obj` (its reference taken) when the
 * node holds none and `interp` owns the slot, else fails. The node releases it through the
 * interpreter table when it is freed. */
PITH_API void *pith_node_py_state(const pith_node *node, const pith_interpreter *interp);
PITH_API pith_status pith_node_set_py_state(pith_node *node, pith_interpreter *interp, void *obj);

/* ---- custom functions (autograd/function.c; docs/c_api.md, "Custom functions") ---- */

/* A function whose backward is a C callback, as PyTorch's autograd.Function. The caller
 * computes the outputs from the inputs itself, with grad mode off, then records them with
 * pith_function_record. backward gets the gradient of each output (NULL: none reached it,
 * or the output is not differentiable, or materializing is off) and stores a new reference
 * (or NULL: zero, or none needed) in grad_inputs[j] for each input j; it returns PITH_OK or
 * the error, set with pith_set_error (its message reaches the caller of backward). `node`
 * is the function's node: pith_function_saved reads what was saved. release(ctx) runs once
 * when the node is freed (or at once when nothing is recorded); NULL: nothing to release. */
typedef struct pith_function_vtable {
    const char *name; /* the node's name, PyTorch style: "MyFunctionBackward" (copied) */
    pith_status (*backward)(void *ctx, pith_node *node, pith_tensor *const *grad_outputs,
                            int n_out, pith_tensor **grad_inputs, int n_in);
    void (*release)(void *ctx);
} pith_function_vtable;

/* Per output of pith_function_record. */
enum {
    PITH_OUTPUT_NON_DIFFERENTIABLE = 1, /* ctx.mark_non_differentiable */
    PITH_OUTPUT_DIRTY = 2               /* an input written in place (ctx.mark_dirty) */
};
/* Flags of pith_function_record. */
enum {
    PITH_FUNCTION_NO_MATERIALIZE_GRADS = 1 /* ctx.set_materialize_grads(False): a missing
                                              output gradient reaches backward as NULL */
};

/* Records a node of `vt` for outputs[0..n_out) computed from inputs[0..n_in) (an input may
 * be NULL: it takes no gradient), as PyTorch's Function.apply does after forward:
 *  - nothing is recorded when grad mode is off or no input requires grad (*node NULL);
 *  - an output with PITH_OUTPUT_NON_DIFFERENTIABLE, or of an integer dtype, gets no
 *    history (one that required grad is detached);
 *  - an output with PITH_OUTPUT_DIRTY must be one of the inputs: its history is rewritten
 *    as by an in-place op (a leaf that requires grad is PyTorch's error, even with nothing
 *    recorded; a view of another tensor is allowed only when n_out is 1);
 *  - an output that is one of the inputs and not dirty is replaced, in outputs[i], by a
 *    new alias of it (the reference the caller put there is released), which takes the
 *    history: the input keeps its own;
 *  - an output that is a view of an input keeps its history from this node, and writing it
 *    in place with grad mode on is PyTorch's "created inside a custom Function" error.
 * saved[0..n_saved) (entries may be NULL) are kept with their versions for
 * pith_function_saved, an output without its history (no cycle). outputs[] hold references
 * of the caller's. ctx is always taken: the node owns it, or vt->release runs before this
 * returns (nothing recorded, or an error). *node (may be NULL) gets a new reference. */
PITH_API pith_status pith_function_record(const pith_function_vtable *vt, void *ctx, int flags,
                                          pith_tensor *const *inputs, int n_in,
                                          pith_tensor **outputs, const int *output_flags,
                                          int n_out, pith_tensor *const *saved, int n_saved,
                                          pith_node **node);
/* The number of tensors a function node saved (0 for another node). */
PITH_API int pith_function_num_saved(const pith_node *node);
/* Saved tensor i of a function node: a new reference (NULL for a saved NULL), with its
 * history when grad mode is on (a backward with PITH_CREATE_GRAPH). PyTorch's errors when
 * the graph was freed by a backward without PITH_RETAIN_GRAPH, or the tensor was modified
 * in place since. */
PITH_API pith_status pith_function_saved(pith_node *node, int i, pith_tensor **out);
/* Whether backward must compute the gradient of input i (it has an edge that this backward
 * needs), as ctx.needs_input_grad. */
PITH_API bool pith_function_needs_input_grad(const pith_node *node, int i);
/* The ctx of a function node whose backward is vt's (borrowed), or NULL for another node.
 * (The node copies the vtable: the caller's may be a temporary.) */
PITH_API void *pith_function_ctx(const pith_node *node, const pith_function_vtable *vt);

/* ---- hooks ---- */

/* A tensor hook: it sees the gradient computed for the tensor, and may replace it by
 * storing a new reference in *replacement (left NULL: the gradient stays). */
typedef pith_status (*pith_tensor_hook)(void *ctx, const pith_tensor *grad,
                                        pith_tensor **replacement);
/* Registers `fn` on the gradient of `t` (which requires grad), as Tensor.register_hook: it
 * runs before a leaf's gradient is accumulated, or when a non-leaf's gradient is computed,
 * in the order of registration. *node (a new reference) and *id identify it for
 * pith_node_remove_hook; ctx_release(ctx) runs when it is removed or its node freed. */
PITH_API pith_status pith_tensor_register_hook(pith_tensor *t, pith_tensor_hook fn, void *ctx,
                                               void (*ctx_release)(void *ctx),
                                               pith_node **node, int64_t *id);
/* Removes hook `id` (any kind: tensor, node, post-accumulate) from `node`; removing one
 * that is gone is a no-op. */
PITH_API pith_status pith_node_remove_hook(pith_node *node, int64_t id);

/* Node hooks, as grad_fn.register_prehook and grad_fn.register_hook. They run when the node
 * runs in a backward: after the tensor hooks and retain_grad of its inputs, the pre-hooks
 * (in the order of registration), the node, then the post-hooks.
 * A pre-hook sees grad_outputs[n], the gradients flowing into the node (one per forward
 * output; NULL for one that got none). A post-hook also sees grad_inputs[ninputs], what
 * the node computed (one per forward input, NULL where none is needed); ninputs is 0 for
 * an AccumulateGrad. Either may replace an entry of the array it may write: pith_release
 * the entry and store a new reference (or NULL) in its place; a replacement must keep the
 * entry's shape and dtype. A hook's error stops the backward with that error.
 * *id identifies it for pith_node_remove_hook; ctx_release(ctx) runs when it is removed or
 * the node freed. */
typedef pith_status (*pith_node_pre_hook)(void *ctx, pith_node *node, pith_tensor **grad_outputs,
                                          int n);
typedef pith_status (*pith_node_post_hook)(void *ctx, pith_node *node, pith_tensor **grad_inputs,
                                           int ninputs, pith_tensor *const *grad_outputs,
                                           int noutputs);
PITH_API pith_status pith_node_register_prehook(pith_node *node, pith_node_pre_hook fn, void *ctx,
                                                void (*ctx_release)(void *ctx), int64_t *id);
PITH_API pith_status pith_node_register_hook(pith_node *node, pith_node_post_hook fn, void *ctx,
                                             void (*ctx_release)(void *ctx), int64_t *id);
/* Tensor.register_post_accumulate_grad_hook: on a leaf that requires grad, `fn` runs with
 * the leaf after its .grad was accumulated by a backward (not by grad()). The hook lives on
 * the leaf's accumulator: *node (a new reference) and *id identify it for
 * pith_node_remove_hook. PyTorch's errors for a tensor that does not require grad or is not
 * a leaf. */
typedef pith_status (*pith_post_accumulate_grad_hook)(void *ctx, pith_tensor *leaf);
PITH_API pith_status pith_tensor_register_post_accumulate_grad_hook(
    pith_tensor *t, pith_post_accumulate_grad_hook fn, void *ctx, void (*ctx_release)(void *ctx),
    pith_node **node, int64_t *id);
/* For bindings that collect cycles through hooks (See Note [Node wrappers and the
 * collector] in the Python bindings): the node's reference count, and each hook of the node
 * (any kind) as its id, ctx and ctx_release; visit returning nonzero stops the walk, and
 * that value is returned (0 when it went through). */
PITH_API int64_t pith_node_use_count(const pith_node *node);
PITH_API int pith_node_visit_hooks(const pith_node *node,
                                   int (*visit)(int64_t id, void *ctx,
                                                void (*ctx_release)(void *ctx), void *arg),
                                   void *arg);
/* Tensor.retain_grad(): a non-leaf that requires grad keeps its gradient in .grad (a leaf
 * already does). retains says whether it does. */
PITH_API pith_status pith_retain_grad(pith_tensor *t);
PITH_API bool pith_retains_grad(const pith_tensor *t);

/* The backward running on this thread (the innermost, when one runs inside another): a
 * number unique to it, or -1 outside any backward. Code that unpacks saved values (a
 * recomputing checkpoint) keys what it recomputes by it. */
PITH_API int64_t pith_autograd_graph_task_id(void);
/* Whether the backward running on this thread computes chosen inputs only (a grad() call,
 * or backward with inputs), rather than every leaf's gradient; false outside backward. */
PITH_API bool pith_autograd_graph_task_filtered(void);
/* ---- saved-tensor hooks ---- */

/* As torch.autograd.graph.saved_tensors_hooks: while pushed on this thread, each tensor a
 * node saves for backward is given to pack(ctx, t, &packed) instead of being kept (t is
 * borrowed: a forward input as it is, an output without its history; pack runs with grad
 * mode off and must not write t in place), and backward gets it back from unpack(packed,
 * &out) (a new reference to a tensor of the saved one's shape). The node keeps `packed` and
 * calls release(packed) when it frees its saved values; packed must not depend on ctx,
 * which is only for pack. The innermost pushed hooks apply; the stack is per thread. */
typedef struct pith_saved_tensors_hooks {
    pith_status (*pack)(void *ctx, pith_tensor *t, void **packed);
    pith_status (*unpack)(void *packed, pith_tensor **out);
    void (*release)(void *packed);
} pith_saved_tensors_hooks;
/* Pushes hooks (which must outlive every value they pack) with `ctx`; ctx_release(ctx) runs
 * at the matching pop. Fails with the disabling message while hooks are disabled. */
PITH_API pith_status pith_saved_tensors_hooks_push(const pith_saved_tensors_hooks *hooks,
                                                   void *ctx, void (*ctx_release)(void *ctx));
PITH_API pith_status pith_saved_tensors_hooks_pop(void);
/* Disables pushing on this thread (torch's disable_saved_tensors_hooks): a push then fails
 * with `message` (RuntimeError); NULL enables again. Fails with `message` when hooks are
 * pushed. disabled_message gives the current message or NULL. */
PITH_API pith_status pith_saved_tensors_hooks_disable(const char *message);
PITH_API const char *pith_saved_tensors_hooks_disabled_message(void);

/* ---- anomaly detection ---- */

/* As torch.autograd.set_detect_anomaly (process-wide, as PyTorch's): while enabled, each
 * node records where it was made (through the hooks below), an error raised while a node
 * runs in backward is reported with that record, and with check_nan a node that gives a
 * NaN gradient fails backward with "Function 'XBackward0' returned nan values in its 0th
 * output.". */
PITH_API void pith_set_detect_anomaly(bool enabled, bool check_nan);
PITH_API bool pith_is_anomaly_enabled(void);
PITH_API bool pith_is_anomaly_check_nan_enabled(void);
/* What records and reports: record() runs when a node is made with anomaly detection on and
 * gives what to keep with the node (NULL: nothing); report(record, node_name) runs when
 * that node fails in backward (the error is kept as it was); release(record) when the node
 * is freed. Python's bindings install hooks that keep the forward's traceback and warn
 * with it; a C program may install its own (NULL removes them). */
typedef struct pith_anomaly_hooks {
    void *(*record)(void);
    void (*report)(void *record, const char *node_name);
    void (*release)(void *record);
} pith_anomaly_hooks;
PITH_API void pith_set_anomaly_hooks(const pith_anomaly_hooks *hooks);

/* The number of live nodes (for leak tests). */
PITH_API size_t pith_live_nodes(void);

#ifdef __cplusplus
}
#endif

#endif /* PITH_AUTOGRAD_H */
