/* register.c — registers the generated autograd kernels (autograd/generated/) at the
 * Autograd key when the library loads, and the composite implicit overloads' own records
 * there too.
 *
 * Note [Generated autograd kernels]
 * scripts/gen_autograd.py (run by scripts/gen_ops.py) writes, from the op file's
 * derivatives section (See Note [The derivatives section], ops/ops.toml):
 *  - per entry with formulas, a node: a struct named as PyTorch names the class
 *    (MulBackward0) that embeds ag_node and keeps what the formulas read (ag_saved tensors,
 *    ag_saved_metadata of what only a helper's metadata parameter reads, by-value
 *    arguments: See Note [By-value arguments of a node], helpers.h), its apply, its
 *    release_saved and its vtable. apply computes the formula of an input only when
 *    ag_needs_grad says its edge needs it, in pith ops through full dispatch
 *    (pith_call_<id>), so that a backward run with grad mode on (create_graph) records;
 *    a `let` is a function of its own, run once and only when first read; saved tensors are
 *    unpacked when first read; every temporary is released on every path.
 *  - per overload that records, <id>_autograd with the overload's typed signature
 *    (pith_sig_<id>): when nothing requires grad (or grad mode is off) it only redispatches
 *    below Autograd; else it runs the op below Autograd (Note [Below Autograd],
 *    autograd.h), makes the node, its edges (a Tensor[] input takes one per element), saves
 *    what the formulas read and gives the differentiable outputs their history. An in-place
 *    form (add_, gelu_, copy_) checks that self may be written, clones self first when the
 *    formulas read its old values, saves its inputs before the write (as PyTorch does, so
 *    that a.mul_(a) raises at backward), and rebases self's history on the node; `result`
 *    is self after the write. An out= form refuses to record (ag_out_error).
 *  - nothing for a not_differentiable overload or its forms: the Autograd key falls through
 *    to the kernels below (dispatch/registry.c).
 * A composite implicit overload, and its forms, get no kernel: their CPU record is
 * registered at Autograd too, so that the ops they are made of record.
 *
 * The records of the generated kernels are made here, each with the boxed adapter of its
 * op's own CPU record (ops/generated/op_calls*.c): an adapter unboxes the arguments and
 * calls the `unboxed` entry of the record it is given as ctx, whichever record that is, so
 * one adapter per op serves both. kernel_record_make checks that convention. */
#include <stdio.h>
#include <stdlib.h>

#include "autograd/generated/autograd_kernels.h"

#define AG_COUNT_(id) +1
enum { AG_NUM_KERNELS = 0 AG_FORALL_KERNELS(AG_COUNT_) };
#undef AG_COUNT_

/* Written once, before any is published; registry records must stay alive forever. */
static pith_kernel_record kernel_records[AG_NUM_KERNELS];

static pith_status kernel_record_make(int k, int opid, void (*entry)(void))
{
    const pith_kernel_record *cpu = op_rows[opid].cpu;
    if (cpu->ctx != (const void *)cpu)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "op '%s': its boxed adapter does not take its record as ctx",
                              op_rows[opid].id);
    kernel_records[k] = (pith_kernel_record){entry, cpu->boxed, &kernel_records[k]};
    return registry_set_kernel((pith_op *)pith_builtin_ops[opid], PITH_KEY_AUTOGRAD,
                               &kernel_records[k]);
}

static pith_status autograd_register_all(void)
{
    int k = 0;
#define AG_REGISTER_KERNEL_(id)                                                             \
    if (kernel_record_make(k++, PITH_OPID_##id, (void (*)(void))id##_autograd) != PITH_OK) \
        return error_prefix("autograd kernel of '%s'", #id);
    AG_FORALL_KERNELS(AG_REGISTER_KERNEL_)
#undef AG_REGISTER_KERNEL_
#define AG_REGISTER_COMPOSITE_(id)                                                          \
    if (registry_set_kernel((pith_op *)pith_builtin_ops[PITH_OPID_##id], PITH_KEY_AUTOGRAD, \
                            op_rows[PITH_OPID_##id].cpu) != PITH_OK)                        \
        return error_prefix("autograd record of composite '%s'", #id);
    AG_FORALL_COMPOSITE_IMPLICIT(AG_REGISTER_COMPOSITE_)
#undef AG_REGISTER_COMPOSITE_
    return PITH_OK;
}

/* Runs after the built-in ops are registered (See Note [Registration order],
 * dispatch/registry.h). As there, a failure is a defect of the generated code with no
 * caller to report to: it says so and stops the process. */
__attribute__((constructor(PITH_CTOR_PRIORITY_AUTOGRAD))) static void autograd_kernels_register(void)
{
    if (autograd_register_all() != PITH_OK) {
        fprintf(stderr, "libpith: cannot register the autograd kernels: %s\n",
                pith_last_error());
        abort();
    }
    pith_clear_error();
}
