/* autograd_internal.h — what the autograd runtime's own files share beyond the contract
 * of autograd.h: the per-tensor state, the accumulator, hooks and the engine's state. */
#ifndef PITH_AUTOGRAD_AUTOGRAD_INTERNAL_H
#define PITH_AUTOGRAD_AUTOGRAD_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "dispatch/registry.h"
#include "kernels/ops_internal.h"

/* See Note [Autograd state behind one pointer] (meta.c). */
struct ag_meta {
    _Atomic(ag_node *) accumulator; /* a leaf's, strong; made on first need */
    ag_node *grad_fn;               /* strong; NULL for a leaf */
    pith_tensor *grad;              /* strong; NULL when none */
    ag_hook *retain_hook;           /* retain_grad's hook on grad_fn, while registered */
    uint32_t output_nr;
    bool requires_grad; /* a leaf's flag; a non-leaf requires grad by having grad_fn */
    bool retains_grad;
    /* A view (See Note [Views and in-place], views.c): its base's root (strong), whether it
     * was made in no_grad from a base that required grad, or by an op that returns several
     * views, and the version of its storage when its grad_fn was made. */
    bool is_view;
    bool view_no_grad;
    bool view_multi;
    bool view_custom; /* an output of a custom function: See Note [Custom function nodes] */
    pith_tensor *view_base;
    int64_t attr_version;
};

/* Note [Zeroed allocations without calloc]
 * glibc's calloc (2.36 here; later releases changed it) never takes a chunk from the
 * thread's cache (tcache), which free fills: a loop that callocs and frees small blocks,
 * as recording does (nodes, autograd states), goes through the arena's slow paths each
 * time, several times the instructions of malloc. So the autograd layer's hot zeroed
 * blocks are malloc and memset, which any allocator serves as well. GCC folds a malloc
 * followed by a memset of zero back into calloc, so the empty asm hides where the pointer
 * came from (it emits no instruction). */
static inline void *ag_zalloc(size_t size)
{
    void *p = malloc(size);
    __asm__("" : "+r"(p));
    if (p)
        memset(p, 0, size);
    return p;
}

bool ag_dtype_differentiable(pith_dtype dtype);
pith_status ag_set_requires_grad(pith_tensor *t, bool requires_grad);

/* The accumulator (AccumulateGrad) of `leaf`, refcount 1 (accumulate.c). */
ag_node *ag_accumulator_new(pith_tensor *leaf);
/* Adds `grad` (borrowed) into the leaf's .grad as PyTorch's AccumulateGrad does. */
pith_status ag_accumulate_into(pith_tensor *leaf, pith_tensor *grad);

void ag_hooks_free(ag_hook *h);
/* Moves t's retain_grad hook from its old grad_fn to its new one, or frees it when `to` is
 * NULL (hooks.c). */
void ag_retain_hook_move(pith_tensor *t, ag_node *from, ag_node *to, uint32_t input_nr);
/* A header over t's storage and geometry, without autograd state or the Python key
 * (node.c); NULL with the error set. */
pith_tensor *ag_alias_without_history(const pith_tensor *t);
/* Such a header whose history is output `output_nr` of `fn` (a saved tensor given back its
 * history when backward records), in *out; or the error. */
pith_status ag_alias_with_history(const pith_tensor *data, ag_node *fn, uint32_t output_nr,
                                  pith_tensor **out);
/* Fills the metadata of a gradient from t's. */
void ag_input_meta_set(ag_input_meta *m, const pith_tensor *t);

/* Sums a gradient to the shape of `m` and casts it to its dtype (engine.c); `producer` and
 * `index` name the node and output in the error. */
pith_status ag_reduce_to(const ag_input_meta *m, pith_tensor **g, const ag_node *producer,
                         uint32_t index);
/* A view whose grad_fn is stale (its storage was written since) gets a new one (views.c). */
void ag_view_refresh(pith_tensor *view);
/* In-place checks of views (views.c). */
pith_status ag_check_inplace_view(const pith_tensor *self);

/* The sequence number of the accumulators: they run as soon as they are ready. */
#define AG_SEQUENCE_ACCUMULATOR UINT64_MAX

/* The engine's run on this thread, which ag_needs_grad reads (engine.c). */
typedef struct ag_run ag_run;
extern _Thread_local ag_run *ag_current_run;
bool ag_run_needs(const ag_run *run, const ag_node *node);

/* A new reference to a value of a typed call's result, or NULL with the status returned. */
static inline pith_tensor *ag_result(pith_status status, pith_value *ret)
{
    return status == PITH_OK ? ret[0].u.t : NULL;
}

#endif /* PITH_AUTOGRAD_AUTOGRAD_INTERNAL_H */
