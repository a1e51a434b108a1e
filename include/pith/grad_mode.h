/* grad_mode.h — grad mode and inference mode: this thread's flags, PyTorch's GradMode and
 * InferenceMode, and whether a tensor is an inference tensor. Included by pith.h.
 *
 * pith has no autograd yet: the flags record what the program asked for (pith.no_grad(),
 * pith.inference_mode() ...) so that C code such as the compiler's guards can read it, and
 * inference mode marks the tensors created under it. See Note [Grad mode is per thread]
 * in core/grad_mode.c. */
#ifndef PITH_GRAD_MODE_H
#define PITH_GRAD_MODE_H

#include <stdbool.h>

#include "pith/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pith_tensor pith_tensor;

/* Whether gradients are recorded on this thread: true on a new thread. */
PITH_API bool pith_grad_enabled(void);
PITH_API void pith_set_grad_enabled(bool enabled);
/* Whether this thread is in inference mode: false on a new thread. While it is, every
 * tensor created on this thread, except a view (which takes its base's), is an inference
 * tensor. Setting it leaves grad mode as it is: PyTorch's InferenceMode(mode) sets both,
 * grad mode to !mode, and so does pith.inference_mode. */
PITH_API bool pith_inference_mode_enabled(void);
PITH_API void pith_set_inference_mode_enabled(bool enabled);
/* Whether `t` was created in inference mode (or is a view of such a tensor): PyTorch's
 * Tensor.is_inference(). false with PITH_ERR_VALUE for NULL. */
PITH_API bool pith_is_inference(const pith_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* PITH_GRAD_MODE_H */
