/* registry.h — the operator registry: operators, their per-key kernels, per-key fallbacks,
 * and kernel selection.
 *
 * Note [Registry concurrency]
 * Writers (define, register, unregister) take one mutex. Readers on the hot path take no
 * lock: each kernel slot is an atomic pointer to an immutable record, and operators live
 * at stable addresses that are never freed. A replaced or unregistered record is kept
 * (leaked) because a reader may still be calling through it. */
#ifndef PITH_DISPATCH_REGISTRY_H
#define PITH_DISPATCH_REGISTRY_H

#include <stdatomic.h>

#include "dispatch/keys.h"
#include "dispatch/schema.h"
#include "dispatch/value.h"

#define PITH_MAX_RETURNS 4

/* A kernel at one key. `boxed` is always set; `unboxed` is the typed entry of a built-in
 * kernel (its type is the op's pith_sig_<id>), called directly by the typed wrappers. */
typedef struct pith_kernel_record {
    void (*unboxed)(void);
    pith_boxed_kernel boxed;
    void *ctx;
} pith_kernel_record;

struct pith_op {
    char *qualified_name; /* "pith::add.Tensor" */
    char *schema_text;
    pith_schema schema;
    int builtin_id; /* index in the built-in table, or -1 for a custom op */
    _Atomic(const pith_kernel_record *) kernels[PITH_NUM_KEYS];
};

/* Adds an operator from a schema. `*out` gets its stable address. Duplicate names and
 * malformed schemas are PITH_ERR_VALUE. */
pith_status registry_define(const char *schema_text, int builtin_id, pith_op **out);
/* Installs `record` (which must stay alive forever) at `key`; a second kernel for the same
 * op and key is PITH_ERR_VALUE. */
pith_status registry_set_kernel(pith_op *op, int key, const pith_kernel_record *record);
pith_op *registry_find_mutable(const char *name);

/* Picks the kernel for `ks`: the highest key with a kernel for `op`, else that key's
 * fallback; fallthrough keys are skipped. *key gets the key chosen. Sets the error (naming
 * the op and the keys) when there is none. */
pith_status dispatch_pick(const pith_op *op, pith_keyset ks, const pith_kernel_record **out,
                          int *key);

/* pith_call_boxed with an explicit key set (already effective): fills defaults and checks
 * the arguments against the schema first. */
pith_status dispatch_call_boxed_keyset(const pith_op *op, pith_stack *stack, pith_keyset ks);
/* The union of the key sets of the tensors among the top `nargs` values. */
pith_keyset stack_keyset(const pith_stack *stack, size_t nargs);

#endif /* PITH_DISPATCH_REGISTRY_H */
