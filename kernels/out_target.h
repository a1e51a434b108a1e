/* out_target.h — writing a kernel's result into an out= tensor: the checks every out=
 * kernel makes of its target, and the choice between writing the target directly and
 * writing a temporary that is then copied in. See Note [Destination passing]. */
#ifndef PITH_KERNELS_OUT_TARGET_H
#define PITH_KERNELS_OUT_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"
#include "dispatch/value.h"

/* PITH_ERR_TYPE unless out= tensor `target` has exactly `dtype` (as PyTorch's "Expected
 * out tensor to have dtype ..."). */
pith_status out_dtype_check(const char *op, const pith_tensor *target, pith_dtype dtype);

/* Checks out= tensor `target` for a result of shape (ndim, sizes) and dtype `dtype` computed
 * from tensors on the device of `input`: exactly that dtype, on that device, not expanded,
 * and of that shape (an empty target is resized to it, as every out= op does:
 * tensor_resize_out). */
pith_status out_target_check(const char *op, pith_tensor *target, int ndim,
                             const int64_t *sizes, pith_dtype dtype, const pith_tensor *input);

/* Where an op writes a result bound for `target` (an out= or in-place tensor, already
 * checked and resized): `target` itself when it is contiguous and shares no memory with any
 * of inputs[0..n) (NULL entries are skipped), or else a new contiguous temporary of target's
 * shape and dtype. With `elementwise`, an input that is exactly `target` (contiguous, one
 * start, one dtype) is also written directly: the op reads each element before it writes it
 * and never again. NULL with the error set when the temporary cannot be made. */
pith_tensor *out_target_begin(pith_tensor *target, const pith_tensor *const *inputs, int n,
                              bool elementwise);
/* Finishes what out_target_begin started: copies the temporary `dst` into `target` and
 * releases it (nothing when dst is target), and bumps target's version. */
pith_status out_target_end(const char *op, pith_tensor *target, pith_tensor *dst);

/* Writes the result of `fill` into the checked `target` and returns target through `ret`:
 * fill(ctx, dst) computes the result into the contiguous `dst` of target's shape and dtype
 * (out_target_begin's choice, with the same inputs). A meta target is only bumped. */
typedef pith_status (*out_target_fill)(const void *ctx, pith_tensor *dst);
pith_status out_target_write(pith_value *ret, const char *op, pith_tensor *target,
                             const pith_tensor *const *inputs, int n, bool elementwise,
                             out_target_fill fill, const void *ctx);

/* The functional form of the same fill: a new contiguous tensor of (ndim, sizes, dtype) on
 * `device`, returned through `ret`; on CPU fill(ctx, dst) computes it, a Meta result is
 * only made. A failing fill releases it and returns its status. */
pith_status out_target_new(pith_value *ret, int ndim, const int64_t *sizes, pith_dtype dtype,
                           pith_device device, out_target_fill fill, const void *ctx);

#endif /* PITH_KERNELS_OUT_TARGET_H */
