/* binder.h — the one binder of Python calls to operators (binder.c): the OpOverload type
 * (pith.ops.<ns>.<name>.<overload>), the Function type (the methods and pith.* functions
 * made from the op table's Python surface), and what the rest of the extension asks of them.
 * See Note [One binder]. */
#ifndef PITH_BINDINGS_BINDER_H
#define PITH_BINDINGS_BINDER_H

#include "state.h"

/* Makes the types, the overload objects of every registered operator, and the functions
 * and methods of the Python surface (installed into `module` and pith.Tensor). */
int binder_init(PyObject *module, pith_module_state *st);

/* The OpOverload object of `op` (borrowed; made on first use for operators defined since
 * binder_init); NULL with an exception. */
PyObject *binder_overload_of(pith_module_state *st, const pith_op *op);

/* The spec of a boxed call to `op` for __pith_dispatch__ handlers, from its parsed schema:
 * (func, kwarg_start, names, defaults, returns, int_lists); See Note [Arguments of a boxed
 * call] (python_dispatch.c). A new reference, or NULL with an exception. */
PyObject *binder_dispatch_spec(pith_module_state *st, const pith_op *op);

/* Makes this thread's calls through the binder add themselves to `g` (NULL: run again);
 * returns the graph that was set before. See Note [Recording calls into a graph]. */
pith_graph *binder_record_into(pith_graph *g);

/* For module_traverse and module_clear (module.c). */
int binder_traverse(pith_module_state *st, visitproc visit, void *arg);
void binder_clear(pith_module_state *st);

#endif /* PITH_BINDINGS_BINDER_H */
