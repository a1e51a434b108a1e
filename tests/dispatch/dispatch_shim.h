/* dispatch_shim.h — plain-C views of dispatch internals for the C++ tests (the internal
 * headers use C11 atomics, which C++ cannot include). Implemented in dispatch_shim.c. */
#ifndef PITH_TESTS_DISPATCH_SHIM_H
#define PITH_TESTS_DISPATCH_SHIM_H

#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHIM_MAX_ARGS 24
#define SHIM_MAX_INTS 8

typedef struct {
    char name[48];
    char type[24]; /* as spelled by arg_type_name: "Tensor?", "int[]" ... */
    bool kwarg_only;
    bool has_default;
    pith_value_kind default_kind;
    int64_t default_int;
    double default_double;
    bool default_bool;
    char default_string[48];
    int64_t default_ints[SHIM_MAX_INTS];
    size_t default_nints;
    int default_dtype;
    int default_device;
    bool is_mutable;
    char alias_set;
} shim_arg;

typedef struct {
    char ns[48];
    char name[48];
    char overload[48];
    size_t nargs;
    shim_arg args[SHIM_MAX_ARGS];
    size_t nreturns;
    shim_arg returns[4];
} shim_schema;

/* schema_parse, copied into `out`; the status and error as schema_parse sets them. */
pith_status shim_schema_parse(const char *text, shim_schema *out);
/* arg_type_name(i) for i in [0, shim_num_arg_types()). */
const char *shim_arg_type_name(int type);
int shim_num_arg_types(void);

/* This thread's mode interpreter (pith_tls_keys.mode_interp). */
void shim_set_mode_interp(const pith_interpreter *interp);
const pith_interpreter *shim_mode_interp(void);

/* The dispatch key set of a tensor. */
uint64_t shim_tensor_keys(const pith_tensor *t);
/* The bit of a key name (0 for unknown). */
uint64_t shim_key_bit(const char *name);
/* registry_fallthrough_remove by key name. */
void shim_fallthrough_remove(const char *key);
/* key_name / key_from_name. */
const char *shim_key_name(int key);
int shim_key_from_name(const char *name);
/* Whether `op` is a built-in (its builtin_id). */
int shim_op_builtin_id(const pith_op *op);

#ifdef __cplusplus
}
#endif

#endif /* PITH_TESTS_DISPATCH_SHIM_H */
