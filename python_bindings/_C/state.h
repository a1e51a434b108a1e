/* state.h — the per-module state of pith._C and the helpers its files share.
 *
 * Every Python object the extension needs lives in this state (one per module instance, so
 * one per interpreter): no static PyObject *. See Note [Module state]. */
#ifndef PITH_BINDINGS_STATE_H
#define PITH_BINDINGS_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pith/interpreter.h>
#include <pith/pith.h>


/* Note [Module state]
 * pith._C uses PEP 489 multi-phase init and heap types only, so each interpreter that
 * imports it gets its own module object, its own types and its own exception classes. A C
 * function finds them through the module: module functions get it as `self`; methods of a
 * type defined by the module use PyType_GetModuleByDef on the receiver's type, which also
 * works for Python subclasses. The interpreter table is the one thing shared by every
 * module instance of one interpreter; it lives in the interpreter's dict, not here (see
 * Note [One interpreter table per interpreter], interp.c). */
/* The stacks the binder keeps for reuse (binder.c). */
#define BINDER_STACK_POOL 8

typedef struct {
    PyTypeObject *tensor_type; /* pith.Tensor */
    PyTypeObject *dtype_type;  /* pith.dtype */
    PyTypeObject *size_type;   /* pith.Size, a tuple subclass */
    PyTypeObject *generator_type; /* pith.Generator (generator.c) */
    PyObject *default_generator;  /* pith.default_generator */
    PyObject *strided;            /* pith.strided, the one layout (set by _set_strided) */
    PyTypeObject *device_type; /* pith.device */
    PyObject *devices[2];      /* pith.device('cpu') and pith.device('meta') */
    PyObject *dtypes[PITH_NUM_DTYPES];
    PyObject *value_error;       /* pith.PithError(ValueError, RuntimeError) */
    PyObject *type_error;        /* pith.PithTypeError(TypeError, RuntimeError) */
    PyObject *interpreter_error; /* pith.InterpreterError(RuntimeError) */
    pith_interpreter *interp;    /* this interpreter's table; never freed */
    PyObject *generic; /* name -> the Python implementation behind a conversion (conversions.c) */
    /* The binder (binder.c, op_objects.c); See Note [One binder]. */
    struct {
        PyTypeObject *overload_type; /* pith._C.OpOverload */
        PyTypeObject *function_type; /* pith._C.Function: a pith.* function */
        PyTypeObject *method_type;   /* pith._C.Method: a Tensor method (a descriptor) */
        PyTypeObject *argument_type; /* pith._C.Argument: OpOverload.arguments' items */
        PyObject *return_types; /* name -> pith.return_types.<name> (named tuples) */
        PyObject *by_op;     /* op address (int) -> its OpOverload */
        PyObject *in_order;  /* the OpOverloads in registry order (pith.ops lists them) */
        /* While the surface is made: base name -> [its pith:: OpOverloads], for in_order's
         * first by_name_seen entries (binder_overloads_named); NULL otherwise. */
        PyObject *by_name;
        Py_ssize_t by_name_seen;
        PyObject *str_out, *str_input, *str_self; /* interned names */
        PyObject *no_default; /* pith._C._NO_DEFAULT: an argument without a default */
        pith_stack *stacks[BINDER_STACK_POOL];
        int nstacks;
    } binder;
    /* __pith_dispatch__ (python_dispatch.c), set by pith.utils at import through
     * _C._pydispatch_setup; module_traverse/module_clear visit them with pydispatch_traverse
     * and pydispatch_clear. */
    struct {
        PyObject *specs;      /* op address (int) -> spec; See Note [Arguments of a boxed call] */
        PyObject *spec_fn;    /* pith.utils._dispatch_spec */
        PyObject *no_default; /* the "no default" marker of pith._ops */
        PyObject *name;       /* "__pith_dispatch__" */
        PyObject *modes_key;  /* the mode stack's key in the thread state dict */
    } dispatch;
    /* autograd.c: the graph's nodes as Python objects. */
    struct {
        PyTypeObject *node_type; /* pith._C._Node */
        PyObject *node_classes;  /* name -> the _Node subclass of that name */
    } autograd;
    /* __pith_function__ (function_layer.c, function_modes.c, function_wrapper.c); See Note
     * [Function layer]. */
    struct {
        PyObject *name;          /* "__pith_function__" */
        PyObject *torch_name;    /* "__torch_function__", its synonym */
        PyObject *dispatch_name; /* "__pith_dispatch__" (the metaclass's rule) */
        PyObject *disabled_impl; /* pith._C._disabled_pith_function_impl */
        PyObject *disabled_key;  /* the disabled state's key in the thread state dict */
        PyObject *modes_key;     /* the mode stack's key in the thread state dict */
        PyTypeObject *wrapper_type; /* pith._C._Overridable (function_wrapper.c) */
    } function;
} pith_module_state;

typedef struct {
    PyObject_HEAD
    /* One strong C reference, borrowed while C owns the wrapper; See Note [Tensor wrapper]
     * and Note [PyObject preservation in the bindings] (tensor.c). */
    pith_tensor *t;
    PyObject *dict;
    PyObject *weakreflist;
    unsigned flags; /* TENSOR_* below, under this interpreter's GIL (tensor.c, stash.c) */
    unsigned wrapper; /* WRAPPER_* bits of a wrapper subclass instance (python_subclass.c) */
} pith_tensor_object;

enum {
    TENSOR_C_OWNS = 1u << 0,  /* C owns this wrapper, and `t` is borrowed */
    TENSOR_STASHED = 1u << 1, /* _stash handed out `t`: See Note [Stash handles] (stash.c) */
};

typedef struct {
    PyObject_HEAD
    pith_dtype dtype;
} pith_dtype_object;

typedef struct {
    PyObject_HEAD
    pith_generator *g; /* one reference; the default generator is not counted */
} pith_generator_object;

extern PyModuleDef pith_module_def;

/* State of the module that defined `type` (or a base of it); NULL with an exception set. */
pith_module_state *state_of_type(PyTypeObject *type);
static inline pith_module_state *state_of_module(PyObject *module)
{
    return (pith_module_state *)PyModule_GetState(module);
}

/* errors.c */
PyObject *error_raise(pith_module_state *st);
int errors_init(PyObject *module, pith_module_state *st);

/* interp.c */
int interp_init(pith_module_state *st);
/* Runs fn(arg) inside `interp` from whatever thread C calls on (See Note [Entering an
 * interpreter from C]); a Python exception fn leaves becomes the C error. Refused (with
 * PITH_ERR_INTERPRETER) once the interpreter is being torn down. */
pith_status interp_call_python(const pith_interpreter *interp, pith_status (*fn)(void *arg),
                               void *arg);
/* Drops a reference C owned on `obj`, entering `interp` (leaked if it has ended). */
void interp_release_object(const pith_interpreter *interp, PyObject *obj);
/* Releases the GIL around a call into libpith that may call back into Python on this
 * thread (a backward), recording the released thread state so that those calls restore it
 * (case 0 of Note [Entering an interpreter from C]). Returns what interp_gil_restore takes;
 * no Python exception may be pending. */
PyThreadState *interp_gil_release(void);
void interp_gil_restore(PyThreadState *outer);
/* Whether this OS thread holds the GIL through a Python thread state of its own. */
bool interp_thread_has_python(void);
/* When this thread released the GIL through interp_gil_release (a backward), runs fn(arg)
 * on that very thread state, the GIL held, and returns true; else false. */
bool interp_on_released_state(void (*fn)(void *arg), void *arg);

/* dtype.c */
int dtype_types_init(PyObject *module, pith_module_state *st);
PyObject *dtype_object(pith_module_state *st, pith_dtype dtype); /* new reference */
/* Accepts a pith.dtype; returns 0 with *out set, or -1 with TypeError. */
int dtype_from_object(pith_module_state *st, PyObject *obj, pith_dtype *out);
PyObject *size_new(pith_module_state *st, int ndim, const int64_t *sizes);

/* generator.c */
int generator_type_init(PyObject *module, pith_module_state *st);
int generator_check(pith_module_state *st, PyObject *obj);
pith_generator *generator_from_object(PyObject *obj); /* borrowed */
PyObject *generator_wrap(pith_module_state *st, pith_generator *g); /* retains g */
/* device.c: pith.device; See Note [Device arguments]. */
int device_type_init(PyObject *module, pith_module_state *st);
/* The pith.device of a pith tensor's device (new reference). */
PyObject *device_object(pith_module_state *st, pith_device device);
/* Reads a device argument (a str, a pith.device, a torch.device; an int raises PyTorch's
 * accelerator error) into a device type of device.c and an index (-1 for none). 0, or -1
 * with PyTorch's exception. */
int device_read(pith_module_state *st, PyObject *obj, int *type, int *index);
/* Whether device_read takes `obj` for a device (of any kind: it may still refuse it). */
bool device_like(pith_module_state *st, PyObject *obj);
/* A device= argument (NULL and None are the CPU) as a pith device: the CPU, or Meta when
 * `meta_ok`; the other devices raise, naming `fn` when it is not NULL. 0 or -1. */
int device_argument(pith_module_state *st, PyObject *obj, bool meta_ok, const char *fn,
                    pith_device *out);
/* A device that a __pith_dispatch__ handler answered: 1 with *out set for a CPU or Meta
 * device, 0 (no exception) for anything else. */
int device_of_answer(pith_module_state *st, PyObject *obj, pith_device *out);

/* grad_mode.c: is_grad_enabled & co. and Tensor.is_inference. */
extern PyMethodDef grad_mode_module_methods[];
extern PyMethodDef grad_mode_tensor_methods[];

/* autograd.c: Tensor.requires_grad & co., nodes, _run_backward. */
int autograd_init(PyObject *module, pith_module_state *st);
/* A node's wrapper (pith._C._Node and its subclasses); See Note [Node wrappers]. */
typedef struct {
    PyObject_HEAD
    pith_node *node; /* one reference; borrowed for a Function's ctx (autograd_function.c) */
    PyObject *weakreflist;
} node_object;
/* autograd_function.c: the C half of pith.autograd.Function (called by autograd_init). */
int autograd_function_init(PyObject *module, pith_module_state *st);
/* autograd_graph.c: saved-tensor hooks and anomaly detection (called by autograd_init). */
int autograd_graph_init(PyObject *module, pith_module_state *st);
/* The wrapper of a node (new reference); See Note [Node wrappers]. */
PyObject *node_wrap(pith_module_state *st, pith_node *n);
/* requires_grad=True of a factory, with PyTorch's factory message for other dtypes. */
int factory_requires_grad(pith_module_state *st, pith_tensor *t);

/* tensor.c */
int tensor_type_init(PyObject *module, pith_module_state *st);

/* Wraps `t`, stealing the reference; returns the one wrapper of `t` in this interpreter.
 * NULL `t` raises the C library's last error. See Note [Tensor wrapper]. */
PyObject *tensor_wrap(pith_module_state *st, pith_tensor *t);
/* The same, making the wrapper (when there is none yet) an instance of `type`, a subtype
 * of pith.Tensor. */
PyObject *tensor_wrap_as(pith_module_state *st, pith_tensor *t, PyTypeObject *type);
/* What the interpreter table's decref entry does once inside this interpreter (the right
 * thread state, holding its GIL): drops the reference C owned on `obj`, a wrapper or any
 * other object, and first rescues a wrapper that Python reached meanwhile (See Note
 * [PyObject preservation in the bindings]). */
void tensor_decref_from_c(PyObject *obj);
static inline int tensor_check(pith_module_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, st->tensor_type);
}
static inline pith_tensor *tensor_of(PyObject *obj)
{
    return ((pith_tensor_object *)obj)->t;
}

/* tensor_number.c: the operator slots of pith.Tensor (the binary ones from the op file's
 * number_slot fields, generated/number_slots.inc) for tensor.c's spec, declared here with
 * their real signatures. */
#define TENSOR_UNARY_SLOTS(_)                                                               \
    _(Py_nb_negative, tensor_nb_negative) _(Py_nb_absolute, tensor_nb_absolute)             \
    _(Py_nb_invert, tensor_nb_invert) _(Py_nb_float, tensor_nb_float)                       \
    _(Py_nb_int, tensor_nb_int) _(Py_nb_index, tensor_nb_index)
#define PITH_NUMBER_SLOT_DECLARATIONS
#include "generated/number_slots.inc"
#undef PITH_NUMBER_SLOT_DECLARATIONS
#define TENSOR_DECLARE_UNARY_(slot, fn) PyObject *fn(PyObject *self);
TENSOR_UNARY_SLOTS(TENSOR_DECLARE_UNARY_)
#undef TENSOR_DECLARE_UNARY_
PyObject *tensor_nb_matrix_multiply(PyObject *a, PyObject *b);
PyObject *tensor_nb_power(PyObject *a, PyObject *b, PyObject *mod);
PyObject *tensor_nb_inplace_power(PyObject *a, PyObject *b, PyObject *mod);
int tensor_nb_bool(PyObject *self);
PyObject *tensor_richcompare(PyObject *a, PyObject *b, int op);
/* A Python bool, int or float as a 0-dim wrapped-number tensor (new C reference), or a
 * Tensor's own tensor (new C reference); NULL with *not_implemented set for other types. */
pith_tensor *operand_to_tensor(pith_module_state *st, PyObject *obj, int *not_implemented);

/* conversions.c: the methods x.float(), x.long() ... and the dtype each converts to (the
 * compile translator records them as to.dtype: compile/attributes.c). */
#define PITH_FORALL_DTYPE_CONVERSIONS(_)                                                    \
    _(float, PITH_FLOAT32) _(double, PITH_FLOAT64) _(half, PITH_FLOAT16)                    \
    _(bfloat16, PITH_BFLOAT16) _(long, PITH_INT64) _(int, PITH_INT32) _(short, PITH_INT16)  \
    _(char, PITH_INT8) _(byte, PITH_UINT8) _(bool, PITH_BOOL)

/* indexing.c: basic indexing, Tensor.T and iteration, as slots of pith.Tensor. */
PyObject *tensor_mp_subscript(PyObject *self, PyObject *key);
int tensor_mp_ass_subscript(PyObject *self, PyObject *key, PyObject *value);
PyObject *tensor_get_T(PyObject *self, void *closure);
PyObject *tensor_iter(PyObject *self);
/* alias(x) through the dispatcher, so that it records (a new reference, or NULL with the C
 * error set); for a tensor with autograd state, whose views carry history. */
pith_tensor *alias_recorded(pith_tensor *x);

/* Whether `t` has elements but no memory: a meta tensor, or a wrapper subclass
 * (_make_wrapper_subclass) whatever device it reports. Exports (buffer, NumPy, DLPack,
 * bytes, tolist) refuse it; empty tensors have nothing to read either way. */
static inline bool tensor_lacks_data(const pith_tensor *t)
{
    return !pith_data_ptr(t) && pith_numel(t) != 0;
}

/* convert.c */
pith_tensor *tensor_from_data(pith_module_state *st, PyObject *data, int has_dtype,
                              pith_dtype dtype);
PyObject *tensor_tolist(pith_tensor *t);
PyObject *tensor_item(pith_tensor *t);

/* stash.c: _stash, _unstash and share (added to the module by tensor_type_init), and the
 * end of a tensor's handles, called when its wrapper sees that C holds no more
 * references to it. See Note [Stash handles]. */
extern PyMethodDef stash_module_methods[];
void stash_forget(const pith_tensor *t);

/* ops.c: boxed values and Python. The pushes take a list or tuple and return -1 with an exception
 * (a TypeError for an item of the wrong type); a Tensor?[] (allow_none) takes None entries.
 * stack_value_to_python converts value i, each tensor through `wrap`, which steals it;
 * devices become pith.device objects. */
int push_python_int_list(pith_module_state *st, pith_stack *stack, PyObject *seq);
/* A str argument as C text: NULL with a ValueError when it holds a NUL, which C would take
 * for its end ('tanh\0junk' is not 'tanh'). */
const char *str_argument_text(PyObject *v);
int push_python_tensor_list(pith_module_state *st, pith_stack *stack, PyObject *seq,
                            bool allow_none);
typedef PyObject *(*tensor_wrap_fn)(pith_module_state *st, pith_tensor *t, void *ctx);
PyObject *stack_value_to_python(pith_module_state *st, const pith_stack *stack, size_t i,
                                tensor_wrap_fn wrap, void *ctx);

/* Extra method tables: each file owns its own and tensor_type_init / module_exec add them
 * (type_add_methods), so no file edits another's table.
 *  conversions.c: Tensor.to and x.float() & co. (the op methods are the binder's).
 *  interop.c: NumPy, the buffer protocol and DLPack. */
extern PyMethodDef conversions_tensor_methods[];
extern PyMethodDef conversions_module_methods[];
extern PyMethodDef interop_tensor_methods[];
extern PyMethodDef interop_module_methods[];
extern PyMethodDef testing_module_methods[]; /* testing.c: test-only hooks */
/* The buffer protocol of pith.Tensor (interop.c). */
int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags);
void tensor_releasebuffer(PyObject *self, Py_buffer *view);
/* interop.c: memory owned by a Python object (an exporter's Py_buffer, a DLPack managed
 * tensor) wrapped without copying. `drop(resource)` runs once, when the storage dies, on a
 * thread of this interpreter that holds its GIL; see Note [Imported memory]. Returns a new C
 * reference, or NULL with a Python error, and then the caller still owns `resource`. */
pith_tensor *imported_wrap(pith_module_state *st, void *data, int ndim, const int64_t *sizes,
                           const int64_t *strides, pith_dtype dtype, void (*drop)(void *resource),
                           void *resource);
/* interop.c: NumPy arrays and scalars, buffer-protocol and DLPack objects as a tensor of their
 * own dtype (cast to `dtype` when has_dtype). `share` asks for the memory to be shared when
 * it can be (as_tensor); otherwise the result is a copy (pith.tensor). Returns a new C
 * reference; NULL with a Python error; or NULL with no error when `data` is none of these. */
pith_tensor *interop_tensor_from(pith_module_state *st, PyObject *data, int share, int has_dtype,
                                 pith_dtype dtype);
/* interop.c: the dtype of a NumPy scalar (np.generic) into *out: 1 when `obj` is one, 0 when
 * it is not (or NumPy is not loaded), -1 with a Python error for an unsupported dtype. */
int numpy_scalar_dtype(PyObject *obj, pith_dtype *out);
/* python_dispatch.c: what the interpreter table's entries do once they are inside this
 * interpreter (interp.c enters it: the right thread state, holding its GIL, counted in
 * flight). Each returns PITH_OK or a status with the C error set (a Python exception raised
 * on the way is turned into that error). See ARCHITECTURE.md "The interpreter table". */
pith_status pydispatch_dispatch(const pith_op *op, pith_stack *stack);
pith_status pydispatch_detach(const pith_tensor *self, pith_tensor **out);
pith_status pydispatch_is_contiguous(const pith_tensor *self, bool *out);
pith_status pydispatch_device(const pith_tensor *self, pith_device *out);
pith_status pydispatch_sizes(const pith_tensor *self, int *ndim, int64_t *sizes);
pith_status pydispatch_strides(const pith_tensor *self, int *ndim, int64_t *strides);
extern PyMethodDef pydispatch_tensor_methods[]; /* _make_wrapper_subclass, ... */
extern PyMethodDef pydispatch_module_methods[];
int pydispatch_traverse(pith_module_state *st, visitproc visit, void *arg);
void pydispatch_clear(pith_module_state *st);
/* Whether a dispatch mode is in effect on this thread (a few instructions). */
bool pydispatch_mode_active(void);
/* Whether an op on `t` may run Python code (t has the Python key, or a mode is in effect):
 * then the bindings keep the GIL around the call, since the handler must run on this very
 * thread state, where the mode stack and the caller's exception live. NULL `t` asks about
 * modes only. See Note [Dispatch modes live in the thread state]. */
bool pydispatch_python_reachable(const pith_tensor *t);
/* Turns the pending Python exception into the C error and keeps it for error_raise; See
 * Note [Handler exceptions cross C]. Returns the status. */
pith_status error_keep(void);
/* If the C error about to be raised came from a Python exception in a handler or a Python
 * kernel, raises that exception again and returns 1; else 0. errors.c's error_raise calls
 * it first. See Note [Handler exceptions cross C]. */
int pydispatch_restore_error(void);

/* Arguments whose types override a Python layer (__pith_dispatch__ or __pith_function__),
 * one instance per type, in calling order: a subclass before its bases, otherwise first seen
 * first (NumPy's NEP 18, PyTorch's append_overloaded_arg). The instances are borrowed from
 * the call's arguments. python_dispatch.c. */
typedef struct {
    PyObject *small[8];
    PyObject **items;
    Py_ssize_t n, cap;
} overloaded_args;
void overloaded_init(overloaded_args *ov);
void overloaded_free(overloaded_args *ov);
/* Adds `obj` in calling order unless an object of its type is in already. 0, or -1 with
 * an exception. */
int overloaded_insert(overloaded_args *ov, PyObject *obj);

/* Adds `defs` to a heap type made from a spec, as if they were in its tp_methods. */
int type_add_methods(PyTypeObject *type, PyMethodDef *defs);

/* Note [GIL release]
 * The bindings release the GIL around a kernel when one of its tensor arguments has at
 * least PITH_GIL_RELEASE_NUMEL elements (the same as the library's parallel grain): other
 * Python threads run while it computes. Smaller calls keep the GIL, because releasing and
 * re-taking it costs more than such a kernel. Nothing in libpith touches Python objects, so
 * any kernel may run without the GIL; the arguments stay alive because the caller's
 * references do. tests/python/test_gil.py proves the release with an op that waits for a
 * flag only another Python thread can set (python_bindings/_C/testing.c). */
#define PITH_GIL_RELEASE_NUMEL 32768

#endif /* PITH_BINDINGS_STATE_H */
