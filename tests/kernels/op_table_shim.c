/* op_table_shim.c — lets the C++ op-table tests look at the registry's kernel slots,
 * which live behind C11 atomics that C++ cannot include. */
#include "kernels/ops_internal.h"

int shim_builtin_op_count(void)
{
    return PITH_NUM_BUILTIN_OPS;
}

const pith_op *shim_builtin_op(int i)
{
    return i >= 0 && i < PITH_NUM_BUILTIN_OPS ? pith_builtin_ops[i] : NULL;
}

/* Whether `op` has its own kernel (not a fallback) at the key named `key`. */
bool shim_op_has_kernel(const pith_op *op, const char *key)
{
    int k = key_from_name(key);
    return k >= 0 && atomic_load(&op->kernels[k]) != NULL;
}
