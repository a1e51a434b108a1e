/* binder_internal.h — what binder.c (matching, pushing, calling, errors) and op_objects.c
 * (the OpOverload and Function types, the op table's Python surface) share. Nothing else
 * includes it; binder.h is the rest of the extension's view. See Note [One binder]. */
#ifndef PITH_BINDINGS_BINDER_INTERNAL_H
#define PITH_BINDINGS_BINDER_INTERNAL_H

#include "binder.h"
#include "function_layer.h"

/* The most arguments an operator may have to be callable from Python. */
#define BINDER_MAX_PARAMS 64
/* The most results an operator may have to be callable from Python. */
#define PITH_MAX_RETURNS_PY 16

enum {
    PARAM_KWARG_ONLY = 1u << 0,
    PARAM_HAS_DEFAULT = 1u << 1,
    PARAM_MUTABLE = 1u << 2, /* Tensor(a!): the op writes into it */
};

/* Where Python numbers bind Tensor parameters; See Note [The Python surface of the op
 * table] (op_surface.c). */
enum { NUMBERS_NONE, NUMBERS_OTHER, NUMBERS_ALL };

/* How a call spells its arguments: an OpOverload's call (schema names), a function's
 * (`input` for self), or a method's (the receiver is self). */
enum { MODE_OVERLOAD, MODE_FUNCTION, MODE_METHOD };

typedef struct {
    PyObject *name;        /* interned */
    PyObject *default_obj; /* the default as a Python value, or NULL */
    pith_arg_type type;
    unsigned flags;        /* PARAM_* */
    int list_size;         /* N of int[N] or float[N]: one number binds as N copies */
} bind_param;

/* pith.ops.<ns>.<name>.<overload>: one operator and what binding needs of its schema. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;
    const pith_op *op;
    PyObject *qualified;   /* "pith::add.Tensor" */
    PyObject *schema;      /* the schema text */
    PyObject *return_type; /* pith.return_types.<name> once made (overload_return_type) */
    bool named_returns;    /* whether calls return a pith.return_types.<name> */
    PyObject *packet;      /* its pith.ops packet once pith/_ops.py made it, or NULL */
    int nparams, npositional, nreturns;
    int self_index;   /* the argument named self, or -1 */
    int first_tensor; /* the first Tensor argument, or -1 */
    /* Bit i: parameter i is a Tensor, Tensor?, Tensor[] or Tensor?[]; what the function
     * layer looks at (See Note [Function layer], function_layer.c). */
    uint64_t tensor_params;
    int nout;         /* the out arguments: mutable keyword-only Tensors ... */
    int out_first;    /* ... from this index on */
    /* For each return, the argument it is when the schema says so (Tensor(a!) self ->
     * Tensor(a!)), or -1: an in-place op or an out= call returns that argument's own
     * Python object, as PyTorch's do. */
    int return_alias[PITH_MAX_RETURNS_PY];
    /* The parameters that positional arguments bind, in order: [0] for a call without a
     * receiver, [1] for a method's (self is the receiver, not a positional argument). */
    unsigned char positional[2][BINDER_MAX_PARAMS];
    int npositional_of[2];
    bind_param *params;
} overload_object;

/* A method or pith.* function: the overloads of one name, in the order they are tried. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *name; /* "add" */
    int mode;       /* MODE_FUNCTION or MODE_METHOD */
    int numbers;    /* NUMBERS_* */
    bool tensor_varargs; /* See Note [Tensors as varargs] (op_surface.c) */
    bool factory;   /* takes requires_grad=, pin_memory=, layout=: Note [Python-only
                       arguments] (op_objects.c) */
    PyObject *as_tuple; /* nonzero's as_tuple=True: this Function (nonzero_numpy), or NULL */
    Py_ssize_t nplain, nout;
    overload_object **overloads; /* [0, nplain) without out arguments, then the out ones */
} function_object;

/* One call, as vectorcall gives it. */
typedef struct {
    PyObject *receiver; /* a method's self, or NULL */
    PyObject *const *args;
    Py_ssize_t nargs;
    PyObject *kwnames;
    int mode, numbers;
    bool tensor_varargs; /* See Note [Tensors as varargs] (op_surface.c) */
} bind_call;

/* The arguments of a call in their parameters' slots (borrowed; NULL for absent). */
typedef struct {
    PyObject *slots[BINDER_MAX_PARAMS];
    /* x.view(2, 3): the ints of the varargs int list; meshgrid(a, b): the tensors of the
     * varargs tensor list (See Note [Tensors as varargs], op_surface.c) */
    PyObject *const *varargs;
    Py_ssize_t nvarargs;
    int varargs_index;
    /* Whether an argument of a Tensor or Tensor[] parameter is not a plain pith.Tensor (a
     * subclass instance, a tensor-like): then the function layer may want the call. */
    bool function_maybe;
} bound_args;

enum {
    FAIL_NO_SELF = 1,
    FAIL_TOO_MANY,
    FAIL_UNEXPECTED_KEYWORD,
    FAIL_DUPLICATE,
    FAIL_MISSING,
    FAIL_OUT_TUPLE,
    FAIL_TYPE,
};

/* Why a call does not match an overload (all borrowed). */
typedef struct {
    int code;
    int index, given;
    uint64_t missing; /* FAIL_MISSING: every required parameter left out, as bits */
    PyObject *keyword, *value;
} bind_failure;

/* Whether a parameter of `type` may be left out when it has no default (None). */
static inline bool type_is_optional(pith_arg_type type)
{
    return pith_arg_type_is_optional(type);
}

/* Step 1: 0 when the call fits `ov`, -1 with *why set (no exception). */
int bind_match(pith_module_state *st, const overload_object *ov, const bind_call *call,
               bound_args *b, bind_failure *why);
/* Step 2: the bound arguments onto `stack`; *work is the largest tensor's numel (-1 when a
 * tensor may reach Python). 0, or -1 with an exception. */
int bind_push(pith_module_state *st, const overload_object *ov, const bound_args *b,
              pith_stack *stack, int64_t *work);
/* Steps 2 and 3: the result of calling `ov` with `b`, or NULL with an exception.
 * `as_function` gives Tensor[] results as tuples and named results as named tuples. */
PyObject *overload_invoke(pith_module_state *st, const overload_object *ov,
                          const bound_args *b, bool as_function);
/* The TypeError of a call that matched none of `overloads`. */
void bind_raise(pith_module_state *st, PyObject *name, overload_object *const *overloads,
                Py_ssize_t n, const bind_call *call, const bind_failure *first);
/* ["(Tensor input, Tensor other, *, Number alpha = 1)", ...] */
PyObject *binder_signatures(pith_module_state *st, overload_object *const *overloads,
                            Py_ssize_t n, int mode);

/* Whether a call bound in `b` may call for the function layer: an argument of a Tensor
 * parameter is no plain pith.Tensor (bind_match noted it while checking its type), or a
 * mode may be in effect. Two loads; See Note [Function layer] (function_layer.c). */
static inline bool bound_function_maybe(const bound_args *b)
{
    return b->function_maybe || function_modes_maybe();
}
/* The function layer's slow path for a call that matched `ov` (after bound_function_maybe):
 * 1 when the layer ran (*result set, NULL with an exception), 0 when the call goes on.
 * `func` is the public callable, and `items`, `nargs`, `kwnames` the call as vectorcall
 * gave it (a method's receiver first): what the handlers get. */
int bind_function_layer(pith_module_state *st, const overload_object *ov, const bound_args *b,
                        PyObject *func, PyObject *const *items, Py_ssize_t nargs,
                        PyObject *kwnames, PyObject **result);

/* op_objects.c: the Function (MODE_FUNCTION) or Method (MODE_METHOD) of the built-in ops
 * named `name`; NULL with an exception when no operator has that name. */
PyObject *function_new(pith_module_state *st, const char *name, int mode, int numbers);
/* The pith.return_types.<name> of an overload with named_returns (borrowed; made on first
 * use), or NULL with an exception. */
PyObject *overload_return_type(pith_module_state *st, const overload_object *ov);
/* The pith:: OpOverloads of one base name, in registry order (borrowed), or NULL: with an
 * exception set when indexing failed, without one when there are none. */
PyObject *binder_overloads_named(pith_module_state *st, const char *name);
/* op_surface.c: installs the functions into `module` and the methods into pith.Tensor. */
int surface_install(PyObject *module, pith_module_state *st);
extern PyMethodDef surface_module_methods[];

/* The pool of reusable stacks (st->binder.stacks). */
pith_stack *stack_take(pith_module_state *st);
void stack_give_back(pith_module_state *st, pith_stack *stack);

#endif /* PITH_BINDINGS_BINDER_INTERNAL_H */
