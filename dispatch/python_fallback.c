/* python_fallback.c — the default boxed fallbacks of the Python and PythonMode keys: they
 * hand the call to the owning interpreter's `dispatch` entry (__pith_dispatch__ or the
 * mode stack). Registered statically in registry.c's fallback table. */
#include <stdint.h>

#include "core/error.h"
#include "core/interpreter_internal.h"
#include "dispatch/registry.h"

/* Note [Python fallback]
 * When the highest key of a call is Python (an argument's type defines
 * __pith_dispatch__) or PythonMode (a dispatch mode is active), and the op has no kernel
 * of its own there, this fallback runs. It:
 *   1. picks the interpreter. For PythonMode it is the mode's, which the bindings store with
 *      pith_keys_set_mode_interpreter (pith_tls_keys.mode_interp) when they include the
 *      key. For Python it is the tag of
 *      the first argument (tensor or tensor-list element) that carries the Python key; every
 *      other such argument must carry the same tag, or the call fails with
 *      PITH_ERR_INTERPRETER naming both interpreters (a tensor belongs to one interpreter,
 *      and one call cannot run in two). A Python-key tensor with no tag is a defect of
 *      whoever set the key, reported the same way.
 *   2. excludes Python (and PythonMode when handling a mode) in this thread's sets for the
 *      duration of the call, so that what the handler runs below it reaches the backend
 *      instead of coming back here; the previous sets (and mode_interp) are restored
 *      afterwards, whatever the outcome.
 *   3. calls the interpreter's `dispatch` entry through core (interp_call_dispatch), which
 *      counts the call in flight and honours disarm: a finalised interpreter gives
 *      PITH_ERR_INTERPRETER, never a call into a dead interpreter. The gate of a closing
 *      interpreter is the entry's to apply, because only the bindings know whether this
 *      thread runs the interpreter itself (See Note [Entries and the gate] in
 *      core/interpreter.c).
 * The fallback never looks into Python: the stack goes to the interpreter as it is, and
 * the results the handler leaves on it are the call's results. */

static const int key_python = PITH_KEY_PYTHON;
static const int key_python_mode = PITH_KEY_PYTHON_MODE;

/* Step 1 for the Python key: the one interpreter of the Python-key arguments. */
static pith_status interp_of_args(const pith_op *op, const pith_stack *stack,
                                  const pith_interpreter **out)
{
    *out = NULL;
    size_t nargs = op->schema.nargs < stack->size ? op->schema.nargs : stack->size;
    size_t base = stack->size - nargs;
    for (size_t i = 0; i < nargs; i++) {
        const pith_value *v = stack_at(stack, base + i);
        size_t n = v->kind == PITH_VALUE_TENSOR        ? 1
                   : v->kind == PITH_VALUE_TENSOR_LIST ? v->u.tensors.n
                                                       : 0;
        for (size_t j = 0; j < n; j++) {
            const pith_tensor *t = v->kind == PITH_VALUE_TENSOR ? v->u.t : v->u.tensors.data[j];
            if (!t || !(t->keys & PITH_KEYSET(PITH_KEY_PYTHON)))
                continue;
            const pith_interpreter *tag = pith_tensor_interpreter(t);
            if (!tag)
                return pith_set_error(PITH_ERR_INTERPRETER,
                                      "%s: argument %zu has the Python key but belongs to no "
                                      "interpreter",
                                      op_display_name(op), i + 1);
            if (!*out)
                *out = tag;
            else if (tag != *out)
                return pith_set_error(PITH_ERR_INTERPRETER,
                                      "%s: arguments belong to two interpreters, %s and %s; "
                                      "a call runs in one interpreter (use pith_alias to hand "
                                      "a tensor over)",
                                      op_display_name(op), pith_interpreter_name(*out),
                                      pith_interpreter_name(tag));
        }
    }
    if (!*out)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: the Python fallback ran but no argument has the Python key",
                              op_display_name(op));
    return PITH_OK;
}

static pith_status python_fallback(const pith_op *op, pith_stack *stack, void *ctx)
{
    bool mode = ctx == &key_python_mode;
    pith_tls_keys *tls = tls_keys();
    const pith_interpreter *interp = NULL;
    if (mode) {
        interp = tls->mode_interp;
        if (!interp)
            return pith_set_error(PITH_ERR_INTERPRETER,
                                  "%s: the PythonMode key is set but no dispatch mode "
                                  "interpreter is",
                                  op_display_name(op));
    } else if (interp_of_args(op, stack, &interp) != PITH_OK) {
        return pith_last_status();
    }
    pith_tls_keys saved = *tls;
    tls->excluded |= PITH_KEYSET(PITH_KEY_PYTHON);
    if (mode)
        tls->excluded |= PITH_KEYSET(PITH_KEY_PYTHON_MODE);
    pith_status status = interp_call_dispatch(interp, op, stack);
    *tls_keys() = saved;
    return status;
}

const pith_kernel_record python_fallback_record = {NULL, python_fallback, (void *)&key_python};
const pith_kernel_record python_mode_fallback_record = {NULL, python_fallback,
                                                        (void *)&key_python_mode};
