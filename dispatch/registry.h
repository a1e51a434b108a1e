/* registry.h — the operator registry: operators, their per-key kernels, per-key fallbacks,
 * and kernel selection.
 *
 * Note [Registry concurrency]
 * Writers (define, register, unregister) take one mutex. Readers on the hot path take no
 * lock: each kernel slot is an atomic pointer to an immutable record, and operators live
 * at stable addresses that are never freed. A replaced or unregistered record is kept
 * (leaked) because a reader may still be calling through it.
 *  - Operators live in fixed-size chunks that are allocated once and never moved, so a
 *    `const pith_op *` is valid for the life of the process; the op count is published
 *    with a release store after the op is fully written (pith_op_at reads it with acquire).
 *  - Lookup by name (pith_op_find) takes the mutex: the name index is a hash table that
 *    grows. The hot path never looks up by name: typed calls hold the op pointer
 *    (pith_builtin_ops), and boxed callers look the op up once.
 *  - Kernel and fallback slots are published with release stores and read with acquire
 *    loads, so a reader that sees a record sees its contents.
 *  - Records made by pith_kernel_register / pith_fallback_register stay on a list after
 *    they are unregistered: still reachable, so leak checkers stay quiet, and never freed.
 *  - All of it is statically initialised: the built-in ops register from a load-time
 *    constructor, which may run before any other constructor. */
#ifndef PITH_DISPATCH_REGISTRY_H
#define PITH_DISPATCH_REGISTRY_H

#include <stdatomic.h>

#include "dispatch/keys.h"
#include "dispatch/schema.h"
#include "dispatch/value.h"


/* Note [Registration order]
 * The built-in ops register from a load-time constructor of priority
 * PITH_CTOR_PRIORITY_OPS (ops/register.c); the autograd layer registers its kernels at the
 * Autograd key from one of PITH_CTOR_PRIORITY_AUTOGRAD (autograd/register.c), which runs
 * later because it names the ops the first one defined. Constructors without a priority
 * run after both. */
#define PITH_CTOR_PRIORITY_OPS 110
#define PITH_CTOR_PRIORITY_AUTOGRAD 120

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

/* Undoes pith_fallthrough_register (for tests; the public API has no unregister). */
void registry_fallthrough_remove(int key);

/* Picks the kernel for `ks`: the highest key with a kernel for `op`, else that key's
 * fallback; fallthrough keys are skipped. *key gets the key chosen. Sets the error (naming
 * the op and the keys) when there is none. The common case, a kernel of the op at the
 * highest key, is inline; dispatch_pick_general handles fallbacks and fallthrough (and
 * starts from the highest key again, so it picks the same kernel when called first). */
pith_status dispatch_pick_general(const pith_op *op, pith_keyset ks,
                                  const pith_kernel_record **out, int *key);
static inline pith_status dispatch_pick(const pith_op *op, pith_keyset ks,
                                        const pith_kernel_record **out, int *key)
{
    if (ks) {
        int k = keyset_highest(ks);
        const pith_kernel_record *record =
            atomic_load_explicit(&op->kernels[k], memory_order_acquire);
        if (record) {
            *out = record;
            if (key)
                *key = k;
            return PITH_OK;
        }
    }
    return dispatch_pick_general(op, ks, out, key);
}

/* The typed call's fast path: the record dispatch_pick would take at the highest key of
 * `ks` when it is the op's own kernel with a typed entry, else NULL (then the caller goes
 * through dispatch_pick, which handles fallbacks, fallthrough, boxed kernels and errors). */
static inline const pith_kernel_record *dispatch_pick_unboxed(const pith_op *op,
                                                              pith_keyset ks)
{
    if (!ks)
        return NULL;
    const pith_kernel_record *record =
        atomic_load_explicit(&op->kernels[keyset_highest(ks)], memory_order_acquire);
    return record && record->unboxed ? record : NULL;
}

/* The union of the key sets of the tensors (and tensor lists) among the top `nargs`
 * values, plus the backend of any Device value (a factory's `device=`). */
pith_keyset stack_keyset(const pith_stack *stack, size_t nargs);

/* How errors name an op: "add.Tensor" for built-ins, "myns::myop" for others. */
static inline const char *op_display_name(const pith_op *op)
{
    const char *q = op->qualified_name;
    return q[0] == 'p' && q[1] == 'i' && q[2] == 't' && q[3] == 'h' && q[4] == ':' &&
                   q[5] == ':'
               ? q + 6
               : q;
}

/* Whether an argument of `type` accepts a value of `kind` (boxing.c), and the same as an
 * error: PITH_ERR_TYPE naming the op, the argument and the expected type. */
bool arg_accepts(pith_arg_type type, pith_value_kind kind);
pith_status arg_check(const pith_op *op, size_t index, const pith_value *v);

/* The default fallbacks of the Python and PythonMode keys (python_fallback.c). See Note
 * [Python fallback]. */
extern const pith_kernel_record python_fallback_record;
extern const pith_kernel_record python_mode_fallback_record;

#endif /* PITH_DISPATCH_REGISTRY_H */
