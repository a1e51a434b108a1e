/* helpers.h — what the generated autograd kernels and nodes (autograd/generated/) call
 * beyond the runtime's contract (autograd.h): the backward helpers of the op file
 * ([backward_helper.<name>] in ops/ops.toml), and the small owned containers a node keeps
 * its by-value arguments in. See Note [Generated autograd kernels] (autograd/register.c).
 *
 * Note [Backward helpers in C]
 * A helper ag_<name> has the signature the op file declares, in C types:
 *  - a Tensor parameter that the helper reads only through metadata (its `metadata` list)
 *    is `const pith_tensor *t, pith_device t_device`: t may be the Meta tensor of an
 *    ag_saved_metadata (same sizes, strides, offset, dtype and storage size), so the helper
 *    reads only those, and takes the device from the second parameter;
 *  - a Tensor[] metadata parameter is a pith_tensor_list (geometry only);
 *  - int is int64_t, int? pith_opt_int, int[] pith_int_list, int[1]? pith_opt_int_list;
 *  - an int result is returned; an int[] result is written to an ag_ints, a Tensor to a
 *    new reference, a Tensor?[] to an ag_tensors, and these return a status. */
#ifndef PITH_AUTOGRAD_HELPERS_H
#define PITH_AUTOGRAD_HELPERS_H

#include "autograd/autograd.h"

/* ---- owned containers ---- */

/* Note [By-value arguments of a node]
 * A node keeps the int lists and strings its formulas read as owned copies, and the
 * metadata of the tensors they read only through a helper's metadata parameter. PyTorch
 * keeps these for the node's life: a backward without retain_graph releases only saved
 * tensors, so a second backward through a node that saved none (SumBackward1, CatBackward0)
 * works. The runtime calls release_saved both then (the node alive) and when it frees the
 * node (its refcount 0, node.c's node_free); a generated release_saved releases saved
 * tensors on both calls and the rest only on the last (ag_node_freeing). An int list of up
 * to AG_INTS_INLINE values (every list of dims, sizes or strides) lives inside the node,
 * a longer one on the heap. Zero-initialised is empty and present. */
#define AG_INTS_INLINE (2 * PITH_MAX_DIMS)
typedef struct {
    size_t n;
    int64_t *heap; /* NULL: the values are in inline_ */
    bool absent;   /* an int[]? that was None */
    int64_t inline_[AG_INTS_INLINE];
} ag_ints;

static inline const int64_t *ag_ints_data(const ag_ints *a)
{
    return a->heap ? a->heap : a->inline_;
}
static inline pith_int_list ag_ints_list(const ag_ints *a)
{
    pith_int_list l = {ag_ints_data(a), a->n};
    return l;
}
static inline pith_opt_int_list ag_ints_opt(const ag_ints *a)
{
    pith_opt_int_list l = {!a->absent, ag_ints_list(a)};
    return l;
}
/* Room for n values (the old ones are not kept). */
pith_status ag_ints_resize(ag_ints *a, size_t n);
pith_status ag_ints_copy(ag_ints *a, pith_int_list list);
pith_status ag_ints_copy_opt(ag_ints *a, pith_opt_int_list list);
/* Frees heap values and empties the list. Idempotent. */
void ag_ints_release(ag_ints *a);

/* A str or str? argument, as ag_ints keeps an int list. */
#define AG_STR_INLINE 32
typedef struct {
    char *heap;  /* NULL: the text is in inline_ (or absent) */
    bool absent; /* None */
    char inline_[AG_STR_INLINE];
} ag_str;
/* NULL for None. */
static inline const char *ag_str_get(const ag_str *s)
{
    return s->absent ? NULL : s->heap ? s->heap : s->inline_;
}
pith_status ag_str_copy(ag_str *s, const char *text);
void ag_str_release(ag_str *s);

/* An owned list of tensors (new references; entries may be NULL for None): an op's Tensor[]
 * result, a helper's Tensor?[], unpacked saved lists. Zero-initialised is empty. */
typedef struct {
    pith_tensor **data;
    size_t n;
} ag_tensors;
static inline pith_tensor_list ag_tensors_list(const ag_tensors *l)
{
    pith_tensor_list list = {(const pith_tensor *const *)l->data, l->n};
    return list;
}
/* n NULL entries. */
pith_status ag_tensors_alloc(ag_tensors *l, size_t n);
void ag_tensors_release(ag_tensors *l);

/* A saved Tensor[] or Tensor?[] argument: one ag_saved per entry. Releasing it releases
 * the entries (an unpack then raises, as ag_unpack's does); freeing it frees the array. */
typedef struct {
    ag_saved *items;
    size_t n;
} ag_saved_list;
pith_status ag_save_list(ag_saved_list *s, pith_tensor_list list);
pith_status ag_unpack_list(const ag_saved_list *s, ag_node *owner, ag_tensors *out);
void ag_saved_list_release(ag_saved_list *s);
void ag_saved_list_free(ag_saved_list *s);

/* A Tensor[] argument the formulas read only through metadata. */
typedef struct {
    ag_saved_metadata *items;
    const pith_tensor **metas; /* items[i].meta, as a list for the helpers */
    size_t n;
} ag_saved_metadata_list;
pith_status ag_save_metadata_list(ag_saved_metadata_list *s, pith_tensor_list list);
void ag_saved_metadata_list_release(ag_saved_metadata_list *s);
static inline pith_tensor_list ag_metadata_list(const ag_saved_metadata_list *s)
{
    pith_tensor_list list = {s->metas, s->n};
    return list;
}

/* ---- what generated kernels and nodes share ---- */

/* Whether release_saved is called by the node's free rather than by the engine after a
 * backward (See Note [By-value arguments of a node]). */
static inline bool ag_node_freeing(const ag_node *n)
{
    return atomic_load_explicit(&n->refcount, memory_order_acquire) == 0;
}

/* Whether an op records: ag_should_record over `ts`, or a tensor of `list` requires grad. */
static inline bool ag_should_record_list(const pith_tensor *const *ts, size_t n,
                                         pith_tensor_list list)
{
    return ag_should_record(ts, n) ||
           (!grad_mode_tls.grad_disabled && ag_list_requires_grad(list));
}
/* Whether next edge i leads somewhere: its input takes gradients in this graph. */
static inline bool ag_has_edge(const ag_node *n, uint32_t i)
{
    return n->next[i].node != NULL;
}
bool ag_any_edge(const ag_node *n, uint32_t first, size_t count);
/* Whether any of next edges [first, first + count) needs a gradient. */
bool ag_any_needs_grad(const ag_node *n, uint32_t first, size_t count);
/* Next edges [first, first + list.n) from a Tensor[] input. */
pith_status ag_set_next_edges(ag_node *n, uint32_t first, pith_tensor_list list);
/* Outputs [0, count) of n from a Tensor[] result. */
pith_status ag_set_history_list(ag_node *n, pith_tensor *const *ts, size_t count);
/* Moves the gradients of a Tensor[] input into out[first + i] for the edges that need
 * them, releasing the others; `grads` is left empty. Fails when their number is not the
 * input's. */
pith_status ag_grads_distribute(const ag_node *n, pith_tensor **out, uint32_t first,
                                size_t count, ag_tensors *grads);
/* Releases out[0, n) and sets them NULL: an apply that fails returns no gradients. */
void ag_grads_clear(pith_tensor **out, uint32_t n);
/* Sets out[0, n) NULL: the edges an apply gives no gradient. */
static inline void ag_grads_init(pith_tensor **out, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        out[i] = NULL;
}
/* The gradients of a Tensor[] output (`grads` in a formula). */
static inline pith_tensor_list ag_grads_list(pith_tensor *const *grads, uint32_t n)
{
    pith_tensor_list list = {(const pith_tensor *const *)grads, n};
    return list;
}
/* Releases a temporary and forgets it. */
static inline void ag_drop(pith_tensor **t)
{
    pith_release(*t);
    *t = NULL;
}
/* *out = ag_wrapped_number(s), as a status. */
static inline pith_status ag_wrap(pith_tensor **out, pith_scalar s)
{
    *out = ag_wrapped_number(s);
    return *out ? PITH_OK : pith_last_status();
}
/* A new reference to `t` (for a formula that is a name: `self = grad`). */
static inline pith_tensor *ag_retain(const pith_tensor *t)
{
    pith_retain((pith_tensor *)t);
    return (pith_tensor *)t;
}
/* The copy an in-place op saves of `self` before it writes, when its formulas read self's
 * old values: a clone through full dispatch, so that it records (CloneBackward0) and
 * double backward reaches self's old history, as PyTorch's original_self does. */
pith_status ag_clone(pith_tensor **out, const pith_tensor *self);

/* Numbers: a formula's literal or a by-value argument where another kind is wanted. */
static inline pith_scalar ag_scalar_from_bool(bool b)
{
    pith_scalar s = {PITH_SCALAR_BOOL, {.b = b}};
    return s;
}
static inline int64_t ag_scalar_to_int(pith_scalar s)
{
    return s.kind == PITH_SCALAR_DOUBLE ? (int64_t)s.u.d
           : s.kind == PITH_SCALAR_INT  ? s.u.i
                                        : (int64_t)s.u.b;
}
static inline bool ag_scalar_to_bool(pith_scalar s)
{
    return s.kind == PITH_SCALAR_DOUBLE ? s.u.d != 0
           : s.kind == PITH_SCALAR_INT  ? s.u.i != 0
                                        : s.u.b;
}
/* A case() comparing a Scalar? with a number: false for None. */
static inline bool ag_scalar_equals(pith_scalar s, double value)
{
    return s.kind != PITH_SCALAR_NONE && scalar_to_double(s) == value;
}

/* ---- the backward helpers (See Note [Backward helpers in C]) ---- */

pith_status ag_sizes(ag_ints *out, const pith_tensor *t, pith_device t_device);
int64_t ag_numel(const pith_tensor *t, pith_device t_device);
int64_t ag_ndim(const pith_tensor *t, pith_device t_device);
pith_status ag_zeros_like(pith_tensor **out, const pith_tensor *t, pith_device t_device);
pith_status ag_reduced_sizes(ag_ints *out, const pith_tensor *t, pith_device t_device,
                             pith_opt_int_list dim);
pith_status ag_invert_permutation(ag_ints *out, pith_int_list dims);
pith_status ag_negated(ag_ints *out, pith_int_list values);
pith_status ag_sizes_along(ag_ints *out, pith_tensor_list tensors, int64_t dim);
pith_status ag_last_dims(ag_ints *out, pith_int_list shape);
pith_status ag_repeat_shape(ag_ints *out, const pith_tensor *t, pith_device t_device,
                            pith_int_list repeats);
pith_status ag_tile_dims(ag_ints *out, pith_int_list repeats);
pith_status ag_index_along(ag_tensors *out, const pith_tensor *t, pith_device t_device,
                           int64_t dim, const pith_tensor *index);
pith_status ag_gather_indices(ag_tensors *out, const pith_tensor *index, int64_t dim);
pith_status ag_unwrapped(pith_tensor **out, const pith_tensor *t);
pith_status ag_slice_positions(pith_tensor **out, const pith_tensor *t, pith_device t_device,
                               int64_t dim, pith_opt_int start, pith_opt_int end,
                               int64_t step);
pith_status ag_as_strided_positions(pith_tensor **out, const pith_tensor *t,
                                    pith_device t_device, pith_int_list size,
                                    pith_int_list stride, pith_opt_int storage_offset);
pith_status ag_storage_positions(pith_tensor **out, const pith_tensor *t,
                                 pith_device t_device);
pith_status ag_storage_zeros(pith_tensor **out, const pith_tensor *t, pith_device t_device,
                             const pith_tensor *like, pith_device like_device);

#endif /* PITH_AUTOGRAD_HELPERS_H */
