/* kernel_addresses.c — prints the address of every kernel registered for a built-in op, at
 * CPU and at Meta, one "<op> <key> <hex address>" a line after the address of `main` (the
 * executable may be loaded anywhere: the names come from the offsets), for
 * scripts/check_kernel_names.py,
 * which names them from this executable's symbol table and checks that each name is
 * defined as text in a checked-in file (ctest Ops.EveryKernelIsWrittenOut). */
#include <stdint.h>
#include <stdio.h>

#include "dispatch/registry.h"
#include "kernels/ops_internal.h"

int main(void)
{
    static const struct {
        int key;
        const char *name;
    } keys[] = {{PITH_KEY_CPU, "CPU"}, {PITH_KEY_META, "Meta"}};
    printf("main - %#jx\n", (uintmax_t)(uintptr_t)main);
    for (int i = 0; i < PITH_NUM_BUILTIN_OPS; i++) {
        const pith_op *op = pith_builtin_ops[i];
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            const pith_kernel_record *record =
                atomic_load_explicit(&op->kernels[keys[k].key], memory_order_acquire);
            if (!record || !record->unboxed) {
                fprintf(stderr, "%s: no typed kernel at %s\n", op->qualified_name, keys[k].name);
                return 1;
            }
            printf("%s %s %#jx\n", op->qualified_name, keys[k].name,
                   (uintmax_t)(uintptr_t)record->unboxed);
        }
    }
    return 0;
}
