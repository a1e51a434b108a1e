/* grad_mode.h (core) — this thread's grad-mode and inference-mode flags, for code inside
 * libpith (tensor.c reads the inference flag on every allocation). The public functions
 * are in include/pith/grad_mode.h. See Note [Grad mode is per thread] in grad_mode.c. */
#ifndef PITH_CORE_GRAD_MODE_H
#define PITH_CORE_GRAD_MODE_H

#include <stdbool.h>

typedef struct {
    bool grad_disabled; /* stored inverted, so that a new thread's zeroed TLS is "enabled" */
    bool inference;
} grad_mode_state;

/* Small and read on the hot path of every allocation: initial-exec TLS (See the comment of
 * PITH_TLS_HOT in dispatch/keys.h). */
extern _Thread_local __attribute__((tls_model("initial-exec"))) grad_mode_state grad_mode_tls;

static inline bool grad_mode_inference(void)
{
    return grad_mode_tls.inference;
}

#endif /* PITH_CORE_GRAD_MODE_H */
