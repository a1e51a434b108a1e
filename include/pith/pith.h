/* pith.h — the public C API of libpith: the umbrella header.
 *
 * Everything a C consumer needs: errors, dtypes, tensor lifetime and metadata, the ops,
 * boxed calls and custom operators. The names, argument orders and meanings of the
 * functions listed in shared/C_API.md are a contract; see docs/c_api.md for the rest.
 * Ownership: every returned `pith_tensor *` is a new reference; every `const pith_tensor *`
 * argument is borrowed. */
#ifndef PITH_PITH_H
#define PITH_PITH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pith/export.h"

#define PITH_VERSION_MAJOR 0
#define PITH_VERSION_MINOR 1
#define PITH_VERSION_PATCH 0

/* The largest number of dims a tensor may have. */
#define PITH_MAX_DIMS 16

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------------------- */

typedef enum {
    PITH_OK = 0,
    PITH_ERR_VALUE,
    PITH_ERR_TYPE,
    PITH_ERR_INDEX,
    PITH_ERR_NOMEM,
    PITH_ERR_NOT_IMPLEMENTED,
    PITH_ERR_RUNTIME,
    PITH_ERR_INTERPRETER
} pith_status;

/* The message of this thread's last failure, or "" when there was none. */
PITH_API const char *pith_last_error(void);
PITH_API pith_status pith_last_status(void);
PITH_API void pith_clear_error(void);
/* Sets this thread's error; for kernels and bindings written outside libpith. */
PITH_API pith_status pith_set_error(pith_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
PITH_API const char *pith_status_name(pith_status status);

/* ---- types -------------------------------------------------------------------------- */

typedef enum {
    PITH_BOOL,
    PITH_UINT8,
    PITH_INT8,
    PITH_INT16,
    PITH_INT32,
    PITH_INT64,
    PITH_FLOAT16,
    PITH_BFLOAT16,
    PITH_FLOAT32,
    PITH_FLOAT64
} pith_dtype;
#define PITH_NUM_DTYPES 10

typedef enum { PITH_CPU, PITH_META } pith_device;

typedef struct pith_tensor pith_tensor;

PITH_API const char *pith_dtype_name(pith_dtype dtype);
PITH_API size_t pith_dtype_size(pith_dtype dtype);
PITH_API const char *pith_device_name(pith_device device);
/* Parses "float32", "float" and the like; returns false for an unknown name. */
PITH_API bool pith_dtype_from_name(const char *name, pith_dtype *out);
PITH_API bool pith_dtype_is_floating(pith_dtype dtype);
PITH_API bool pith_dtype_is_integral(pith_dtype dtype, bool include_bool);
/* Whether values of the dtype can be negative (the signed integers and the floats). */
PITH_API bool pith_dtype_is_signed(pith_dtype dtype);
/* A floating dtype's binary format: mantissa digits counting the implicit bit (as
 * FLT_MANT_DIG) and the largest exponent (as FLT_MAX_EXP); false for any other dtype.
 * Either pointer may be NULL. */
PITH_API bool pith_dtype_float_format(pith_dtype dtype, int *digits, int *max_exponent);
/* The dtype of floating results that nothing else decides (float factories without a
 * dtype, Python floats): float32 until set. Process-wide, as PyTorch's; only float16,
 * bfloat16, float32 and float64 may be set (PITH_ERR_TYPE otherwise). */
PITH_API pith_dtype pith_get_default_dtype(void);
PITH_API pith_status pith_set_default_dtype(pith_dtype dtype);
/* PyTorch's promote_types for two dtypes. */
PITH_API pith_dtype pith_promote_types(pith_dtype a, pith_dtype b);

/* ---- lifetime and metadata ---------------------------------------------------------- */

PITH_API pith_tensor *pith_empty(int ndim, const int64_t *sizes, pith_dtype dtype);
PITH_API pith_tensor *pith_zeros(int ndim, const int64_t *sizes, pith_dtype dtype);
PITH_API pith_tensor *pith_ones(int ndim, const int64_t *sizes, pith_dtype dtype);
PITH_API pith_tensor *pith_full(int ndim, const int64_t *sizes, double value, pith_dtype dtype);
PITH_API pith_tensor *pith_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                                         pith_dtype dtype, pith_device device);
PITH_API pith_tensor *pith_from_data(const void *data, int ndim, const int64_t *sizes,
                                     pith_dtype dtype);
PITH_API pith_tensor *pith_from_blob(void *data, int ndim, const int64_t *sizes,
                                     const int64_t *strides, pith_dtype dtype,
                                     void (*deleter)(void *data, void *ctx), void *ctx);
/* PITH_OK when a strided geometry can be addressed in bytes with int64 arithmetic: every
 * stride times `itemsize`, the byte extent from the storage offset over all dims
 * ((offset + sum of size * |stride|) * itemsize) and numel * itemsize fit in int64; else
 * PITH_ERR_VALUE with a message. Every tensor satisfies it (the factories, pith_from_blob
 * and the views check it); strides may be negative here, and NULL means contiguous. */
PITH_API pith_status pith_geometry_check(int ndim, const int64_t *sizes, const int64_t *strides,
                                         int64_t offset, size_t itemsize);
/* A 0-dim tensor holding `value`. */
PITH_API pith_tensor *pith_scalar_tensor(double value, pith_dtype dtype);

PITH_API void pith_retain(pith_tensor *t);
PITH_API void pith_release(pith_tensor *t);

PITH_API int pith_ndim(const pith_tensor *t);
PITH_API int64_t pith_size(const pith_tensor *t, int dim);
PITH_API int64_t pith_stride(const pith_tensor *t, int dim);
PITH_API int64_t pith_numel(const pith_tensor *t);
PITH_API pith_dtype pith_tensor_dtype(const pith_tensor *t);
PITH_API pith_device pith_tensor_device(const pith_tensor *t);
PITH_API void *pith_data_ptr(const pith_tensor *t);
PITH_API bool pith_is_contiguous(const pith_tensor *t);
PITH_API int64_t pith_storage_offset(const pith_tensor *t);
/* The version counter, shared by views; bumped by every in-place write. */
PITH_API int64_t pith_version_counter(const pith_tensor *t);
/* Whether two tensors view the same storage. */
PITH_API bool pith_shares_storage(const pith_tensor *a, const pith_tensor *b);
/* The bytes of t's storage (which its views share); for a meta tensor, the bytes it would
 * hold. -1 on error. */
PITH_API int64_t pith_storage_nbytes(const pith_tensor *t);
/* Copies sizes (or strides) into `out`, which holds PITH_MAX_DIMS values; returns ndim or -1. */
PITH_API int pith_sizes(const pith_tensor *t, int64_t *out);
PITH_API int pith_strides(const pith_tensor *t, int64_t *out);
/* Reads element `flat_index` of the tensor in row-major order, converted to double. */
PITH_API pith_status pith_item_at(const pith_tensor *t, int64_t flat_index, double *out);
PITH_API pith_status pith_item(const pith_tensor *t, double *out);

/* ---- threads, allocator, random ------------------------------------------------------- */

PITH_API void pith_set_num_threads(int n);
PITH_API int pith_get_num_threads(void);
/* The instruction set of the vectorised math kernels in use: "sse2", "avx2" or "avx512" (the
 * best the CPU has, or less by PITH_CPU_CAPABILITY). */
PITH_API const char *pith_get_cpu_capability(void);

/* The BLAS (OpenBLAS) that the process loaded, and how it runs its threads (the values of
 * openblas_get_parallel()). pith sets its thread count with pith's; see docs/c_api.md. */
typedef enum {
    PITH_BLAS_SEQUENTIAL = 0,
    PITH_BLAS_PTHREADS = 1,
    PITH_BLAS_OPENMP = 2,
} pith_blas_threading;
PITH_API pith_blas_threading pith_blas_get_threading(void);
/* openblas_get_config(): version, build options and the kernel chosen for this CPU. These
 * three load OpenBLAS if no product has yet (pith loads it on first use); where it cannot be
 * loaded: NULL with PITH_ERR_RUNTIME set, PITH_BLAS_SEQUENTIAL, and 0 threads. */
PITH_API const char *pith_blas_get_config(void);
/* openblas_get_num_threads(): the BLAS's own thread count. */
PITH_API int pith_blas_get_num_threads(void);

/* The allocator cache keeps large freed blocks for reuse. See docs/c_api.md. */
PITH_API void pith_cache_set_limit(size_t bytes);
PITH_API size_t pith_cache_limit(void);
PITH_API size_t pith_cache_bytes(void);
PITH_API void pith_cache_empty(void);

PITH_API void pith_manual_seed(uint64_t seed);

/* A random generator: the state of one random stream (a seed and a counter offset; See
 * docs/c_api.md, "Random generators"). Random ops take one as their `Generator?` argument;
 * NULL there, and in every function below, means the default generator, which
 * pith_manual_seed seeds. pith_generator_new returns a generator with one reference (NULL
 * with PITH_ERR_NOMEM); retain/release count references (NULL and the default generator
 * are ignored). */
typedef struct pith_generator pith_generator;
PITH_API pith_generator *pith_default_generator(void);
PITH_API pith_generator *pith_generator_new(uint64_t seed);
PITH_API void pith_generator_retain(pith_generator *g);
PITH_API void pith_generator_release(pith_generator *g);
/* Sets the seed and restarts the stream. */
PITH_API void pith_generator_manual_seed(pith_generator *g, uint64_t seed);
/* Seeds from the operating system's entropy and returns the seed. */
PITH_API uint64_t pith_generator_seed(pith_generator *g);
/* The seed last set. */
PITH_API uint64_t pith_generator_initial_seed(pith_generator *g);
/* The whole state: restoring it replays the same numbers for the same ops. */
PITH_API void pith_generator_get_state(pith_generator *g, uint64_t *seed, uint64_t *offset);
PITH_API void pith_generator_set_state(pith_generator *g, uint64_t seed, uint64_t offset);

/* ---- ops ----------------------------------------------------------------------------- */
/* Every op dispatches through the dispatcher; see pith/ops.h. */

/* ---- operators, boxed calls, custom ops ----------------------------------------------- */

typedef struct pith_op pith_op;
typedef struct pith_value pith_value;
typedef struct pith_stack pith_stack;

PITH_API const pith_op *pith_op_find(const char *name);
PITH_API const char *pith_op_schema(const pith_op *op);
/* "ns::name.overload" (the namespace is "pith" for built-in ops). */
PITH_API const char *pith_op_name(const pith_op *op);
/* Number of registered operators, and the i-th (for listing, e.g. in pith.ops). */
PITH_API size_t pith_op_count(void);
PITH_API const pith_op *pith_op_at(size_t i);

#ifdef __cplusplus
}
#endif
#include "pith/schema.h" /* the parsed schema of an operator */
#ifdef __cplusplus
extern "C" {
#endif

PITH_API pith_stack *pith_stack_new(void);
PITH_API void pith_stack_free(pith_stack *s);
PITH_API pith_status pith_stack_push_tensor(pith_stack *s, const pith_tensor *t);
PITH_API pith_status pith_stack_push_int(pith_stack *s, int64_t v);
PITH_API pith_status pith_stack_push_double(pith_stack *s, double v);
PITH_API pith_status pith_stack_push_bool(pith_stack *s, bool v);
PITH_API pith_status pith_stack_push_none(pith_stack *s);
PITH_API pith_status pith_stack_push_string(pith_stack *s, const char *v);
PITH_API pith_status pith_stack_push_int_list(pith_stack *s, const int64_t *v, size_t n);
PITH_API pith_status pith_stack_push_tensor_list(pith_stack *s, const pith_tensor *const *v,
                                                 size_t n);
PITH_API pith_status pith_stack_push_dtype(pith_stack *s, pith_dtype dtype);
/* Moves `t` onto the stack (steals the reference). */
PITH_API pith_status pith_stack_push_tensor_steal(pith_stack *s, pith_tensor *t);
PITH_API size_t pith_stack_size(const pith_stack *s);
PITH_API pith_tensor *pith_stack_get_tensor(const pith_stack *s, size_t i);
PITH_API int64_t pith_stack_get_int(const pith_stack *s, size_t i);
PITH_API double pith_stack_get_double(const pith_stack *s, size_t i);
PITH_API bool pith_stack_get_bool(const pith_stack *s, size_t i);
PITH_API void pith_stack_drop(pith_stack *s, size_t n);

/* What a stack value holds. */
typedef enum {
    PITH_VALUE_NONE,
    PITH_VALUE_TENSOR,
    PITH_VALUE_INT,
    PITH_VALUE_DOUBLE,
    PITH_VALUE_BOOL,
    PITH_VALUE_STRING,
    PITH_VALUE_INT_LIST,
    PITH_VALUE_TENSOR_LIST,
    PITH_VALUE_DTYPE,
    PITH_VALUE_DEVICE,
    PITH_VALUE_DOUBLE_LIST,
    PITH_VALUE_GENERATOR
} pith_value_kind;
PITH_API pith_value_kind pith_stack_kind(const pith_stack *s, size_t i);
PITH_API const char *pith_stack_get_string(const pith_stack *s, size_t i);
PITH_API pith_dtype pith_stack_get_dtype(const pith_stack *s, size_t i);
/* PITH_CPU with the status set (PITH_ERR_TYPE, PITH_ERR_INDEX) when value i is not a device;
 * as pith_tensor_device, the sentinel is a valid device (C++ may not hold another value). */
PITH_API pith_device pith_stack_get_device(const pith_stack *s, size_t i);
/* Borrowed views of list values, valid until the value is dropped. */
PITH_API const int64_t *pith_stack_get_int_list(const pith_stack *s, size_t i, size_t *n);
PITH_API pith_tensor *const *pith_stack_get_tensor_list(const pith_stack *s, size_t i,
                                                        size_t *n);
PITH_API pith_status pith_stack_push_device(pith_stack *s, pith_device device);
PITH_API pith_status pith_stack_push_double_list(pith_stack *s, const double *v, size_t n);
PITH_API const double *pith_stack_get_double_list(const pith_stack *s, size_t i, size_t *n);
/* Retains `g` (NULL pushes the default generator). The get returns a borrowed generator,
 * valid while the value is on the stack; NULL with the status set when it is not one. */
PITH_API pith_status pith_stack_push_generator(pith_stack *s, pith_generator *g);
PITH_API pith_generator *pith_stack_get_generator(const pith_stack *s, size_t i);

PITH_API pith_status pith_call_boxed(const pith_op *op, pith_stack *stack);

typedef pith_status (*pith_boxed_kernel)(const pith_op *op, pith_stack *stack, void *ctx);
PITH_API pith_status pith_op_define(const char *schema);
PITH_API pith_status pith_kernel_register(const char *op_name, const char *dispatch_key,
                                          pith_boxed_kernel fn, void *ctx);
PITH_API pith_status pith_kernel_unregister(const char *op_name, const char *dispatch_key);

/* ---- interpreter table (for embedders and the bindings; see pith/interpreter.h) -------- */

typedef struct pith_interpreter pith_interpreter;
PITH_API const char *pith_interpreter_name(const pith_interpreter *interp);
PITH_API const pith_interpreter *pith_tensor_interpreter(const pith_tensor *t);
PITH_API bool pith_interpreter_is_disarmed(const pith_interpreter *interp);
PITH_API size_t pith_live_tensors(void);

/* ---- version ------------------------------------------------------------------------- */

PITH_API const char *pith_version(void);

#ifdef __cplusplus
}
#endif

#include "pith/grad_mode.h"
#include "pith/autograd.h"
#include "pith/ops.h"
#include "pith/ops_shape.h"
#include "pith/graph.h"
#include "pith/optim.h"

#endif /* PITH_PITH_H */
