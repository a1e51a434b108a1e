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

/* The number of live nodes (for leak tests). */
PITH_API size_t pith_live_nodes(void);

#ifdef __cplusplus
}
#endif

#endif /* PITH_AUTOGRAD_H */
