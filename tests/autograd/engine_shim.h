/* engine_shim.h — hand-made ops that record nodes of their own, for the engine's tests: the
 * engine is tested apart from the generated kernels (autograd/generated/). Implemented in
 * engine_shim.c, which reaches the autograd layer's C11 headers. */
#ifndef PITH_TESTS_AUTOGRAD_ENGINE_SHIM_H
#define PITH_TESTS_AUTOGRAD_ENGINE_SHIM_H

#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = k * x; ScaleTest's backward is grad * k. */
pith_tensor *shim_scale(pith_tensor *x, double k);
/* y = a + b (b may broadcast to a or a to b); AddTest gives grad to both, unreduced: the
 * engine sums the broadcast dims. */
pith_tensor *shim_add(pith_tensor *a, pith_tensor *b);
/* y = x * x, saving x; SquareTest's backward is 2 * x * grad. */
pith_tensor *shim_square(pith_tensor *x);
/* Bumps t's version counter, as an in-place write does. */
void shim_bump_version(pith_tensor *t);
/* The first element as a double (NaN on error). */
double shim_at(const pith_tensor *t, int64_t i);

#ifdef __cplusplus
}
#endif

#endif /* PITH_TESTS_AUTOGRAD_ENGINE_SHIM_H */
