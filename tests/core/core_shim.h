/* core_shim.h — plain-C access to core internals for the C++ tests (the internal headers
 * use C11 atomics, which C++ cannot include). Implemented in core_shim.c. */
#ifndef PITH_TESTS_CORE_SHIM_H
#define PITH_TESTS_CORE_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pith/interpreter.h"
#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tensor internals */
pith_tensor *shim_tensor_new(int ndim, const int64_t *sizes, pith_dtype dtype,
                             pith_device device);
pith_tensor *shim_tensor_view(const pith_tensor *base, int ndim, const int64_t *sizes,
                              const int64_t *strides, int64_t offset);
pith_tensor *shim_tensor_from_storage_of(const pith_tensor *base, int ndim,
                                         const int64_t *sizes, const int64_t *strides,
                                         int64_t offset, pith_dtype dtype);
pith_status shim_tensor_resize_out(pith_tensor *out, int ndim, const int64_t *sizes);
void shim_bump_version(const pith_tensor *t);
int64_t shim_storage_refcount(const pith_tensor *t);
size_t shim_storage_nbytes(const pith_tensor *t);
bool shim_storage_inline(const pith_tensor *t);
const void *shim_storage_data(const pith_tensor *t);
uint64_t shim_keys(const pith_tensor *t);
uint32_t shim_flags(const pith_tensor *t);
uint32_t shim_flag_wrapped_number(void);
uint32_t shim_flag_policy_strides(void);
uint32_t shim_flag_policy_sizes(void);
uint32_t shim_flag_policy_device(void);
uint64_t shim_key_python(void);
uint64_t shim_key_cpu(void);
uint64_t shim_key_meta(void);
int shim_dim_wrap(int64_t dim, int ndim);
const char *shim_shape_format(int ndim, const int64_t *sizes, char *buf, size_t cap);
int64_t shim_shape_numel_checked(int ndim, const int64_t *sizes);
void shim_set_storage_owner(pith_tensor *t, const pith_interpreter *owner);
pith_status shim_error_prefix(const char *prefix);

/* dtype */
uint16_t shim_float_to_half(float f);
float shim_half_to_float(uint16_t h);
uint16_t shim_ref_float_to_half(float f); /* the compiler's _Float16 */
float shim_ref_half_to_float(uint16_t h);
uint16_t shim_float_to_bfloat16(float f);
float shim_bfloat16_to_float(uint16_t b);
uint16_t shim_ref_float_to_bfloat16(float f); /* nearest-even by comparing neighbours */
double shim_load_double(pith_dtype dtype, const void *p);
void shim_store_double(pith_dtype dtype, void *p, double v);
int64_t shim_load_int64(pith_dtype dtype, const void *p);
/* The enum values of a dtype-table list (core/dtype.h), in its order: "all", "nested",
 * "integral", "signed_integral", "floating", "reduced_floating"; returns how many, or -1
 * for an unknown list. `out` holds PITH_NUM_DTYPES. */
int shim_dtype_list(const char *list, pith_dtype *out);
/* sizeof the element type and the lowest and highest value of a row, by dtype. */
size_t shim_dtype_table_size(pith_dtype dtype);
double shim_dtype_table_lowest(pith_dtype dtype);
double shim_dtype_table_highest(pith_dtype dtype);

/* allocator */
void *shim_alloc(size_t nbytes);
void shim_free(void *p, size_t nbytes);
size_t shim_size_class(size_t nbytes);
size_t shim_cache_min_block(void);
size_t shim_cache_default_limit(void);

/* parallel */
int shim_threads_for(int64_t work);
int64_t shim_grain_size(void);

/* interpreter internals */
void shim_interp_decref(const pith_interpreter *interp, void *pyobj);
pith_status shim_interp_detach(const pith_tensor *t, pith_tensor **out);
pith_status shim_interp_dispatch(const pith_interpreter *interp);
size_t shim_interp_registered_count(void);

/* A fake interpreter: a C vtable that records its calls. */
typedef struct fake_interp fake_interp;
fake_interp *fake_new(const char *name);
void fake_free(fake_interp *f); /* frees the record, never the pith_interpreter */
pith_interpreter *fake_table(fake_interp *f);
int64_t fake_calls(fake_interp *f, const char *entry); /* "decref", "detach", ... */
void *fake_last_decref(fake_interp *f);
/* What the metadata entries answer. */
void fake_set_sizes(fake_interp *f, int ndim, const int64_t *sizes, const int64_t *strides);
void fake_set_device(fake_interp *f, pith_device device, bool contiguous);
void fake_set_fail(fake_interp *f, bool fail); /* entries return PITH_ERR_RUNTIME */
/* dispatch blocks (spinning) until fake_unblock; fake_entered says it is inside. */
void fake_set_block(fake_interp *f, bool block);
bool fake_entered(fake_interp *f);
void fake_unblock(fake_interp *f);
/* decref releases this tensor too (simulating the wrapper dropping its borrowed ref is
 * NOT done: the wrapper's ref is borrowed); instead it records the C refcount it saw. */
int64_t fake_refcount_seen_in_decref(fake_interp *f);
void fake_set_watch(fake_interp *f, const pith_tensor *t);

#ifdef __cplusplus
}
#endif

#endif
