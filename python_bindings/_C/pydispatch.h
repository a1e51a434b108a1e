/* pydispatch.h — what the three files of __pith_dispatch__ share: python_dispatch.c (the
 * dispatch entry, handlers, modes), python_subclass.c (subclasses, wrapper subclasses,
 * detach and the metadata entries) and python_library.c (custom operators, Python kernels,
 * the metadata operators). Nothing outside them includes it; state.h declares what the rest
 * of the extension calls. */
#ifndef PITH_BINDINGS_PYDISPATCH_H
#define PITH_BINDINGS_PYDISPATCH_H

#include <pith/dispatch.h>

#include "state.h"

/* The thread-local key bits of "Python" and "PythonMode" (dispatch.h names keys only by
 * string); constant once pydispatch_bits_init ran (at _pydispatch_setup). */
void pydispatch_bits_init(void);
uint64_t pydispatch_bit_python(void);
uint64_t pydispatch_bit_mode(void);

/* Sets this thread's included/excluded sets (pith_keys_restore is the only setter). */
static inline void keys_set(uint64_t included, uint64_t excluded)
{
    pith_keys_guard g = {included, excluded};
    pith_keys_restore(&g);
}

/* A spec: what pith.utils._dispatch_spec computes once per operator from its schema, as a
 * tuple (func, kwarg_start, names, defaults, returns, int_lists). See Note [Arguments of a
 * boxed call]. */
enum {
    SPEC_FUNC,
    SPEC_KWARG_START,
    SPEC_NAMES,
    SPEC_DEFAULTS,
    SPEC_RETURNS,
    SPEC_INT_LISTS,
    SPEC_LEN
};
/* The kinds in a spec's `returns` (utils._RETURN_KINDS lists the same numbers). */
enum {
    RET_TENSOR,
    RET_OPT_TENSOR,
    RET_TENSOR_LIST,
    RET_BOOL,
    RET_INT,
    RET_INT_LIST,
    RET_FLOAT,
    RET_SCALAR,
    RET_STR,
    RET_DTYPE,
    RET_NUM_KINDS
};

/* The spec of `op` (borrowed, cached in st->dispatch_specs); NULL with an exception. */
PyObject *spec_of(pith_module_state *st, const pith_op *op);

/* python_modes.c: sets up a module instance that pith.utils did not (a second import of
 * pith._C) from pith.utils._setup_args; 0, or -1 with an exception. */
int pydispatch_ensure_setup(pith_module_state *st);
/* The module state of this interpreter's pith._C (sys.modules); NULL with an exception. */
pith_module_state *pydispatch_state(void);
/* The same, found faster through the wrapper of `t` when it has the Python key. */
pith_module_state *pydispatch_state_of(const pith_tensor *t);

/* Adds `obj` (a tensor) to `ov` (state.h's overloaded_args: tensor arguments whose type
 * defines __pith_dispatch__) when its type defines it and is not in yet. */
int overloaded_add(pith_module_state *st, overloaded_args *ov, PyObject *obj);

/* Python (args, kwargs) from the top `nargs` values of `stack` as `spec` describes; tensors
 * with the Python key go into `ov` (may be NULL). Returns 0, or -1 with an exception. */
int args_from_stack(pith_module_state *st, PyObject *spec, const pith_stack *stack,
                    overloaded_args *ov, PyObject **args, PyObject **kwargs);
/* Replaces the arguments on `stack` with `result`, checked against the spec's returns;
 * `who` names the code that returned it in errors. Returns 0, or -1 with an exception. */
int results_push(pith_module_state *st, PyObject *spec, pith_stack *stack, PyObject *result,
                 const char *who);

/* Runs the handlers of one call. `modes` is this thread's mode stack when a mode is to
 * handle the call first (its top one, popped while it runs), else NULL; then the subclass
 * handlers of `ov`. `unexclude` are the key bits to lift while a handler runs. Returns a
 * new reference, or NULL with an exception (a TypeError naming `func` when every handler
 * returned NotImplemented). See Note [Handler order and keys]. */
PyObject *handlers_call(pith_module_state *st, PyObject *func, overloaded_args *ov,
                        PyObject *args, PyObject *kwargs, PyObject *modes, uint64_t unexclude);
/* python_modes.c: this thread's mode stack (a list in the thread state dict), borrowed;
 * NULL without an exception when there is none and `create` is false. */
PyObject *modes_of_thread(pith_module_state *st, bool create);
/* python_modes.c: this thread's mode stack when a dispatch mode is in effect for a query
 * made outside a dispatch (metadata, detach): borrowed, or NULL. */
PyObject *modes_in_effect(pith_module_state *st);

/* python_library.c: defines the metadata operators (once per process); 0 or -1. */
int library_setup(void);
/* python_library.c: the Python kernel this thread is about to run, if any (consumed). */
pith_status library_kernel_pending(pith_module_state *st, const pith_op *op,
                                   pith_stack *stack, bool *handled);

/* python_library.c: pith.library's entries of pydispatch_module_methods. */
PyObject *library_op_define(PyObject *module, PyObject *schema);
PyObject *library_kernel_register(PyObject *module, PyObject *args);
#define PYDISPATCH_LIBRARY_METHODS                                                          \
    {"_op_define", library_op_define, METH_O, "_op_define(schema): pith_op_define."},       \
    {"_kernel_register_python", library_kernel_register, METH_VARARGS,                      \
     "_kernel_register_python(op, key, fn): fn as the kernel of op at a dispatch key."},

#endif /* PITH_BINDINGS_PYDISPATCH_H */
