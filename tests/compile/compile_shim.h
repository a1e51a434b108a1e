/* compile_shim.h — C shims for the compile tests (compile_shim.c). */
#ifndef PITH_TESTS_COMPILE_SHIM_H
#define PITH_TESTS_COMPILE_SHIM_H

#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new 0-dim tensor flagged as a wrapped number (a Python scalar). */
pith_tensor *shim_wrapped_number(double value, pith_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif
