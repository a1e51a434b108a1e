/* factories.h — what the factory kernels (factories.c, random.c) share, and the checked
 * conversion of a Scalar into one element, which masked_fill uses too. */
#ifndef PITH_KERNELS_FACTORIES_H
#define PITH_KERNELS_FACTORIES_H

#include "kernels/ops_internal.h"

/* `dtype` (-1 for None, which gives `dflt`) checked to be a dtype; errors name `op`. */
pith_status factory_dtype(const char *op, pith_opt_dtype dtype, pith_dtype dflt,
                          pith_dtype *out);
/* `device` (-1 for None, which gives the CPU) checked to be a device. */
pith_status factory_device(const char *op, pith_opt_device device, pith_device *out);
/* A new contiguous tensor of `size` (uninitialised); NULL with the error set. */
pith_tensor *factory_new(const char *op, pith_int_list size, pith_dtype dtype,
                         pith_device device);

/* Converts `value` into one element of `dtype` at `out` as PyTorch's Scalar::to<T> does:
 * a value that does not fit is PITH_ERR_VALUE "value cannot be converted to type int8_t
 * without overflow" (negative ints wrap into unsigned types down to -max, inf and nan
 * pass into floating types). */
pith_status scalar_encode(const char *op, pith_scalar value, pith_dtype dtype, void *out);

/* Writes `n` copies of the `itemsize`-byte element `elem` from `data` on (OpenMP above
 * the grain size). */
void bytes_fill(void *data, int64_t n, const void *elem, size_t itemsize);

/* Stores `v` into one element of `dtype`: integers wrap, floats round (bool: v != 0). */
void element_store_int64(pith_dtype dtype, void *out, int64_t v);
/* Stores `v` into one element of a floating `dtype`; for integer dtypes `v` must already be
 * in range (it is truncated toward zero). */
void element_store_double(pith_dtype dtype, void *out, double v);

#endif /* PITH_KERNELS_FACTORIES_H */
