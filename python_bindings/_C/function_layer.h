/* function_layer.h — __pith_function__, PyTorch's __torch_function__: what the call sites
 * (the binder, the number slots, the C methods and properties of pith.Tensor, the wrapper of
 * Python functions) ask of function_layer.c, and the function modes and guards of
 * function_modes.c. See Note [Function layer] (function_layer.c). */
#ifndef PITH_BINDINGS_FUNCTION_LAYER_H
#define PITH_BINDINGS_FUNCTION_LAYER_H

#include <stdatomic.h>

#include "state.h"

/* The function modes pushed and not yet popped, on every thread of every interpreter of the
 * process (function_modes.c). Only a hint: nonzero sends every call to the slow path, which
 * looks at the calling thread state's own stack. */
extern _Atomic long function_modes_pushed;

/* Whether a function mode may be in effect on this thread: one relaxed load. */
static inline bool function_modes_maybe(void)
{
    return __builtin_expect(
        atomic_load_explicit(&function_modes_pushed, memory_order_relaxed) != 0, 0);
}

/* Whether `v`, an argument of a Tensor (or Tensor?) parameter, may call for the function
 * layer: anything but a pith.Tensor of the exact type, None and a Python number. A few
 * pointer compares; the slow path (function_request_add) decides. */
static inline bool function_arg_maybe(pith_module_state *st, PyObject *v)
{
    PyTypeObject *type = Py_TYPE(v);
    if (__builtin_expect(type == st->tensor_type, 1)) /* first: the common argument */
        return false;
    return v != Py_None && type != &PyFloat_Type && type != &PyLong_Type &&
           type != &PyBool_Type;
}

/* The same for a method's receiver, which is a pith.Tensor: whether it is a subclass
 * instance (pith.Tensor's own base is object), or a mode may be in effect. Needs no module
 * state. */
static inline bool function_self_maybe(PyObject *self)
{
    return Py_TYPE(self)->tp_base != &PyBaseObject_Type || function_modes_maybe();
}

/* ---- the slow path ---- */

/* What the layer is to do for one call: the arguments whose types override it (in calling
 * order) and this thread's mode stack when a mode is to run first. */
typedef struct {
    overloaded_args ov;
    PyObject *modes;   /* this thread's mode stack (a new reference), or NULL */
    int disabled;      /* FUNCTION_ENABLED, ... of the calling thread state */
} function_request;

enum { FUNCTION_ENABLED, FUNCTION_SUBCLASSES_DISABLED, FUNCTION_ALL_DISABLED };

/* Starts a request: reads this thread state's disabled state and mode stack. 0, or -1 with
 * an exception. Always end it with function_request_end. */
int function_request_begin(pith_module_state *st, function_request *req);
/* Adds `v` (an argument of a Tensor or Tensor[] parameter; a list or tuple is looked into
 * one level deep) when its type overrides the layer and subclasses are enabled. 0 or -1. */
int function_request_add(pith_module_state *st, function_request *req, PyObject *v);
/* Whether the request calls for the layer: an overriding argument, or a mode. */
static inline bool function_request_needed(const function_request *req)
{
    return req->ov.n > 0 || req->modes;
}
/* Runs the layer: the top mode, then each overriding type's handler, until one returns
 * something other than NotImplemented; `func` is the public callable, `args` a tuple and
 * `kwargs` a dict or NULL (the handlers then get three arguments, as PyTorch's C calls
 * give them). A new reference, or NULL with an exception (a TypeError when every handler
 * returned NotImplemented). */
PyObject *function_request_run(pith_module_state *st, function_request *req, PyObject *func,
                               PyObject *args, PyObject *kwargs);
/* The same with the call's arguments as vectorcall lays them out (`items[0..nargs)`, then
 * the values of `kwnames`). */
PyObject *function_request_run_vector(pith_module_state *st, function_request *req,
                                      PyObject *func, PyObject *const *items,
                                      Py_ssize_t nargs, PyObject *kwnames);
void function_request_end(function_request *req);

/* Whether a function mode would see a call made now on this thread (pith.compile runs no
 * compiled code then). */
bool function_mode_in_effect(pith_module_state *st);
/* Whether objects of `type`, not pith.Tensor itself, override the layer: they have a
 * __pith_function__ or __torch_function__ that is not _disabled_pith_function_impl. */
bool function_type_overrides(pith_module_state *st, PyTypeObject *type);
/* Whether `v` is a tensor-like for the binder: no pith.Tensor, but its type overrides the
 * layer, and subclasses are enabled on this thread (PyTorch's
 * is_tensor_and_append_overloaded). Asked only of values that matched nothing else. */
bool function_tensor_like(pith_module_state *st, PyObject *v);

/* For a C method, property or slot of pith.Tensor called on `self` (which passed
 * function_self_maybe): `items` are all the call's positional arguments, self first, then
 * the values of `kwnames` (as vectorcall lays them out; kwnames may be NULL). `func_name`
 * names the public callable: "add" is pith.Tensor.add, "shape.__get__" is the __get__ of
 * the property pith.Tensor.shape. Returns 1 when the layer ran or failed (*result set, NULL
 * with an exception), 0 when the call is to go on as usual. */
int function_layer_method(PyObject *self, const char *func_name, PyObject *const *items,
                          Py_ssize_t nargs, PyObject *kwnames, PyObject **result);
/* The same with the arguments after self as a tuple and a dict (either may be NULL). */
int function_layer_method_tuple(PyObject *self, const char *func_name, PyObject *args,
                                PyObject *kwargs, PyObject **result);
/* The same with the arguments after self as vectorcall gives them to a method. */
int function_layer_method_args(PyObject *self, const char *func_name, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames, PyObject **result);
/* For the setter of the property `attr` of pith.Tensor (value NULL: a delete), on `self`
 * (which passed function_self_maybe): the handlers get `attr`.__set__ with (self, value),
 * or `attr`.__delete__ with (self,), as PyTorch's handle_torch_function_setter gives them.
 * Returns 1 when the layer ran or failed (*rc 0, or -1 with an exception), 0 when the
 * assignment is to go on as usual. */
int function_layer_setter(PyObject *self, const char *attr, PyObject *value, int *rc);
/* For a pith function that takes no tensor (pith.tensor, as_tensor): only a function mode
 * sees it, as `module`.`func_name`; `args` is a tuple, `kwargs` a dict or NULL. Call it
 * when function_modes_maybe(). Same returns. */
int function_layer_modes_only(pith_module_state *st, PyObject *module, const char *func_name,
                              PyObject *args, PyObject *kwargs, PyObject **result);
/* The same for any call: every argument is a candidate (one level into lists and tuples);
 * the public callable is `func`, or when it is NULL pith.Tensor's `func_name`. */
int function_layer_call(pith_module_state *st, PyObject *func, const char *func_name,
                        PyObject *const *items, Py_ssize_t nargs, PyObject *kwnames,
                        PyObject **result);

/* At the top of the setter of the property `attr` of pith.Tensor. */
#define FUNCTION_LAYER_SETTER(self, attr, value)                                            \
    do {                                                                                    \
        int layer_rc_;                                                                      \
        if (function_self_maybe(self) &&                                                    \
            function_layer_setter(self, attr, value, &layer_rc_))                           \
            return layer_rc_;                                                               \
    } while (0)

/* At the top of a C method, property or slot of pith.Tensor that takes no argument but
 * `self`: returns the function layer's result when it runs. */
#define FUNCTION_LAYER_SELF(self, func_name)                                                \
    do {                                                                                    \
        PyObject *layer_result_;                                                            \
        if (function_self_maybe(self) &&                                                    \
            function_layer_method(self, func_name, &(self), 1, NULL, &layer_result_))       \
            return layer_result_;                                                           \
    } while (0)

/* A `class` statement made a subclass of pith.Tensor (the metaclass): PyTorch's rule that a
 * class defining __pith_dispatch__ while inheriting the default __pith_function__ has the
 * function layer disabled. 0 or -1. */
int function_class_created(pith_module_state *st, PyTypeObject *type);

/* function_layer.c and function_modes.c: setup and the module's functions. */
int function_layer_init(PyObject *module, pith_module_state *st);
int function_modes_init(PyObject *module, pith_module_state *st);
int function_wrapper_init(PyObject *module, pith_module_state *st);
int function_layer_traverse(pith_module_state *st, visitproc visit, void *arg);
void function_layer_clear(pith_module_state *st);

/* function_modes.c: this thread state's disabled state (FUNCTION_*) and mode stack
 * (borrowed; NULL without an exception when it has none and `create` is false). */
int function_disabled_state(pith_module_state *st);
int function_disabled_set(pith_module_state *st, int disabled); /* 0 or -1 */
PyObject *function_modes_of_thread(pith_module_state *st, bool create);
/* Pops the top mode off `modes` for its handler to run (a new reference), and pushes it
 * back; both keep function_modes_pushed. */
PyObject *function_mode_pop(PyObject *modes);
int function_mode_push_back(PyObject *modes, PyObject *mode);

#endif /* PITH_BINDINGS_FUNCTION_LAYER_H */
