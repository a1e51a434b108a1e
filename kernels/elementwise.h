/* elementwise.h — the elementwise engine: broadcasting, output preparation (functional,
 * out= and in-place), dimension coalescing, and the threaded strided iteration that
 * calls 1-D inner loops. Also the dtype-converting copy that other kernels reuse (cat,
 * contiguous, ...). The ops themselves live in elementwise_*.c.
 *
 * An inner loop has the NumPy ArrayMethod shape (see STYLE.md):
 *     int loop(char **args, const int64_t *n, const int64_t *strides, void *ctx);
 * args[0] is the output and args[1..] the inputs, each advancing strides[k] bytes per
 * element, for n[0] elements. It returns 0, or a non-zero code that the engine ORs over
 * every call (and every thread) and hands back to the caller. A stride of 0 means the
 * operand is one broadcast value. See Note [Aliasing in inner loops] in elementwise.c. */
#ifndef PITH_KERNELS_ELEMENTWISE_H
#define PITH_KERNELS_ELEMENTWISE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/tensor.h"

typedef int (*elementwise_loop)(char **args, const int64_t *n, const int64_t *strides,
                                void *ctx);

/* The output plus at most three inputs (where). */
#define ELEMENTWISE_MAX_OPERANDS 4

/* The operands of one iteration, all of one (broadcast) shape. Strides are in bytes; a
 * broadcast dim has stride 0. */
typedef struct {
    int noperands;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    char *data[ELEMENTWISE_MAX_OPERANDS];
    int64_t strides[ELEMENTWISE_MAX_OPERANDS][PITH_MAX_DIMS];
} elementwise_geometry;

/* Starts a geometry of the given shape (the broadcast shape, already validated). */
void geometry_init(elementwise_geometry *g, int ndim, const int64_t *sizes);
/* Adds `t` as the next operand, broadcast to the geometry's shape (which it must
 * broadcast to: validated by the caller). */
void geometry_add_operand(elementwise_geometry *g, const pith_tensor *t);
/* Coalesces and runs `loop` over every element, with OpenMP above the grain size. Returns
 * the OR of the loop's results. No validation happens here (it may run in threads). */
int geometry_run(elementwise_geometry *g, elementwise_loop loop, void *ctx);
/* geometry_run on the calling thread only, whatever the size: for an output that is
 * expanded (two elements share a location), which threads must not write at once. */
int geometry_run_serial(elementwise_geometry *g, elementwise_loop loop, void *ctx);

/* ---- broadcasting and outputs ---- */

/* shape_equal for the hot path: inline, no library calls for the few dims of a tensor. */
static inline bool sizes_equal(int ndim_a, const int64_t *a, int ndim_b, const int64_t *b)
{
    if (ndim_a != ndim_b)
        return false;
    for (int d = 0; d < ndim_a; d++)
        if (a[d] != b[d])
            return false;
    return true;
}


/* The broadcast shape of `n` tensors (PyTorch rules). On a mismatch: PITH_ERR_VALUE,
 * "<op>: the size of tensor a (3) must match the size of tensor b (4) at non-singleton
 * dimension 1". */
pith_status broadcast_shapes(const char *op, int n, const pith_tensor *const *tensors,
                             int *ndim, int64_t *sizes);

/* A tensor that is written to (out=, in place) must not have elements that share memory
 * (an expanded view): PITH_ERR_VALUE, "<op>: unsupported operation: more than one element
 * of the written-to tensor refers to a single memory location. ...", PyTorch's words. */
pith_status elementwise_check_no_overlap(const char *op, const pith_tensor *target);

/* Checks that `src` broadcasts to exactly `dst`'s shape (copy_): "<op>: output with shape
 * [3] doesn't match the broadcast shape [2, 3]". */
pith_status broadcast_check_into(const char *op, const pith_tensor *dst,
                                 const pith_tensor *src);

typedef enum {
    ELEMENTWISE_FUNCTIONAL, /* allocate a new output */
    ELEMENTWISE_OUT,        /* write into an out= tensor (resized if it is empty) */
    ELEMENTWISE_INPLACE     /* write into self: the broadcast shape must be self's */
} elementwise_mode;

/* Every tensor of an op must be on the device it runs on. A Meta kernel (`meta`) accepts
 * CPU 0-dim inputs (PyTorch's CPU scalars), never a CPU output; a CPU kernel accepts no
 * meta tensor. `output` may be NULL. */
static inline pith_status elementwise_check_devices(const char *op, bool meta, int n,
                                                    const pith_tensor *const *inputs,
                                                    const pith_tensor *output)
{
    bool bad = output && (output->device == PITH_META) != meta;
    for (int i = 0; i < n && !bad; i++) {
        const pith_tensor *t = inputs[i];
        bad = meta ? t->device != PITH_META && t->ndim != 0 : t->device == PITH_META;
    }
    if (bad)
        return pith_set_error(PITH_ERR_VALUE,
                              "%s: expected all tensors to be on the same device, but found "
                              "at least two devices, meta and cpu",
                              op);
    return PITH_OK;
}

/* Makes or checks the output of an op with broadcast shape (ndim, sizes) and result dtype
 * `result`. FUNCTIONAL: *dst is a new tensor on `device`. OUT / INPLACE: `target` must be
 * able to hold `result` (dtype_can_cast) and must not write one location twice; OUT
 * resizes an empty target, INPLACE needs the shapes equal. *dst = target (borrowed). */
pith_status elementwise_output(const char *op, elementwise_mode mode, pith_tensor *target,
                               int ndim, const int64_t *sizes, pith_dtype result,
                               pith_device device, pith_tensor **dst);

/* Runs `loop` with output `out` (its shape is the broadcast shape) and inputs in[0..nin).
 * The loop reads inputs of in_dtypes[i] and writes `loop_out_dtype`: inputs of another
 * dtype are converted first, and a differently typed `out` is written through a temporary.
 * An input that partially overlaps `out` is copied first. Returns the loop's non-zero
 * code through *loop_result (may be NULL). Does not bump the version. */
pith_status elementwise_apply(pith_tensor *out, pith_dtype loop_out_dtype, int nin,
                              const pith_tensor *const *in, const pith_dtype *in_dtypes,
                              elementwise_loop loop, void *ctx, int *loop_result);

/* Whether `in` shares bytes with `out` without being exactly `out` (same start and the
 * same strides wherever `out` has more than one element): reading it while writing `out`
 * would see values already written. */
bool tensors_overlap_partially(const pith_tensor *in, const pith_tensor *out);

/* Whether the bytes that `a` and `b` can reach intersect (exact aliases included): a
 * conservative answer from their extents, so two interleaved views (the columns of one
 * matrix) may share no element and still count. Meta tensors over one storage compare
 * their offsets, so the answer is the same as for their CPU counterparts. Empty tensors
 * overlap nothing. */
bool tensors_may_overlap(const pith_tensor *a, const pith_tensor *b);

/* Whether `t` is PyTorch's "non-overlapping and dense": a permutation of a contiguous
 * tensor, so every byte of its extent is one of its elements. */
bool tensor_is_dense(const pith_tensor *t);

/* ---- copies with conversion (elementwise_copy.c) ---- */

/* The loop converting `src` elements into `dst` elements (args[0] dst, args[1] src).
 * See Note [Float to integer conversion]. */
elementwise_loop cast_loop(pith_dtype dst, pith_dtype src);
/* Copies `src` into `dst` on CPU, broadcasting src to dst's shape and converting the
 * dtype; safe when the two overlap. Validates the broadcast ("<op>: ..."); a meta tensor
 * with elements is an error (no data). Bumps no version. */
pith_status elementwise_copy(const char *op, pith_tensor *dst, const pith_tensor *src);
/* A new contiguous CPU tensor holding `src` converted to `dtype`. */
pith_tensor *tensor_converted(const pith_tensor *src, pith_dtype dtype);

#endif /* PITH_KERNELS_ELEMENTWISE_H */
