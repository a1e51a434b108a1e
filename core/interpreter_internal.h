/* interpreter_internal.h — how code inside libpith calls into an interpreter table.
 *
 * Every call goes through the table's current vtable (so after disarm it reaches the
 * no-ops) and is counted in flight (so disarm phase 1 waits for it). See Note [Interpreter
 * disarm] in interpreter.c. core/ knows nothing of stacks or ops: they are forwarded. */
#ifndef PITH_CORE_INTERPRETER_INTERNAL_H
#define PITH_CORE_INTERPRETER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "pith/interpreter.h"

/* Like pith_interpreter_enter but sets no error when refused. */
bool interp_enter_quiet(const pith_interpreter *interp, bool own_thread);

/* Drops the wrapper reference C owned. Never fails: when the table is disarmed the no-op
 * leaks. Counted in flight, but never refused by the gate (see Note [PyObject
 * preservation] in pyobj_slot.c). */
void interp_call_decref(const pith_interpreter *interp, void *pyobj);

/* Runs the deleter of storage owned by `owner` (a Python buffer): only while `owner` is
 * armed; otherwise leaks. Returns whether the deleter ran. */
bool interp_run_deleter(const pith_interpreter *owner, void (*deleter)(void *, void *),
                        void *data, void *ctx);

/* detach() of a tensor through its tag's table; *out is a new reference. */
pith_status interp_call_detach(const pith_tensor *t, pith_tensor **out);
/* Boxed call into the interpreter (the Python key's fallback and PythonMode); the entry
 * applies the gate (See Note [Entries and the gate]). */
pith_status interp_call_dispatch(const pith_interpreter *interp, const pith_op *op,
                                 pith_stack *stack);

/* Metadata of a wrapper subclass, through the tensor's tag; validated (ndim in range,
 * non-negative sizes and strides). */
pith_status interp_call_sizes(const pith_tensor *t, int *ndim, int64_t *sizes);
pith_status interp_call_strides(const pith_tensor *t, int *ndim, int64_t *strides);
pith_status interp_call_is_contiguous(const pith_tensor *t, bool *out);
pith_status interp_call_device(const pith_tensor *t, pith_device *out);

/* Number of tables ever registered (they are never freed). */
size_t interp_registered_count(void);

#endif /* PITH_CORE_INTERPRETER_INTERNAL_H */
