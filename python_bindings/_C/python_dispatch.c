/* python_dispatch.c — __pith_dispatch__: the Python side of the interpreter table's dispatch
 * entry. It rebuilds Python arguments from a boxed call, runs the handlers (this thread's
 * dispatch modes, then the subclasses), and pushes back what they return; also the kept
 * exceptions. The mode stack and the Python-facing functions are in python_modes.c,
 * wrapper subclasses, detach and the metadata entries in python_subclass.c, custom
 * operators and Python kernels in python_library.c. */
#include <stdatomic.h>
#include <string.h>

#include "binder.h"
#include "pydispatch.h"

/* ---- key bits ---- */

static _Atomic uint64_t bit_python, bit_mode; /* process-wide constants once computed */

static uint64_t key_bit(const char *name)
{
    pith_keys_guard saved = pith_keys_current(), scratch;
    keys_set(0, 0);
    uint64_t bit = pith_keys_include(name, &scratch) == PITH_OK ? pith_keys_current().included
                                                                 : 0;
    pith_keys_restore(&saved);
    return bit;
}

void pydispatch_bits_init(void)
{
    if (!atomic_load(&bit_python)) {
        atomic_store(&bit_mode, key_bit("PythonMode"));
        atomic_store(&bit_python, key_bit("Python"));
    }
}

uint64_t pydispatch_bit_python(void)
{
    return atomic_load_explicit(&bit_python, memory_order_relaxed);
}

uint64_t pydispatch_bit_mode(void)
{
    return atomic_load_explicit(&bit_mode, memory_order_relaxed);
}

bool pydispatch_mode_active(void)
{
    uint64_t bit = pydispatch_bit_mode();
    pith_keys_guard g = pith_keys_current();
    return bit && (g.included & ~g.excluded & bit);
}

bool pydispatch_python_reachable(const pith_tensor *t)
{
    return pydispatch_mode_active() || (t && pith_tensor_has_python_key(t));
}

/* ---- the module state from inside the interpreter ---- */

pith_module_state *pydispatch_state_of(const pith_tensor *t)
{
    /* The wrapper of a tensor with the Python key belongs to this interpreter: the
     * fallback and the entries reach the interpreter of its tag (Note [Python fallback]). */
    PyObject *obj = t && pith_tensor_has_python_key(t) ? pith_slot_get(t, NULL) : NULL;
    if (obj) {
        PyObject *module = PyType_GetModuleByDef(Py_TYPE(obj), &pith_module_def);
        pith_module_state *st = module ? state_of_module(module) : NULL;
        if (st && st->dispatch.spec_fn)
            return st;
        PyErr_Clear();
    }
    return pydispatch_state();
}

/* The state of sys.modules['pith._C'], set up or not; NULL with an exception. */
static pith_module_state *imported_state(void)
{
    PyObject *name = PyUnicode_FromString("pith._C");
    PyObject *module = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    if (!module) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError,
                            "pith: __pith_dispatch__ was reached but pith._C is not imported "
                            "in this interpreter");
        return NULL;
    }
    pith_module_state *st = PyModule_GetDef(module) == &pith_module_def ? state_of_module(module)
                                                                       : NULL;
    Py_DECREF(module); /* sys.modules keeps it */
    if (!st)
        PyErr_SetString(PyExc_RuntimeError, "pith: sys.modules['pith._C'] is not pith's");
    return st;
}

pith_module_state *pydispatch_state(void)
{
    pith_module_state *st = imported_state();
    return !st || pydispatch_ensure_setup(st) < 0 ? NULL : st;
}

/* ---- kept exceptions ---- */

/* Note [Handler exceptions cross C]
 * A handler (or a Python kernel) may raise anything, and the Python code that called the op
 * must see that very exception (ErrorA stays ErrorA, with its traceback), as in PyTorch.
 * Between the two lies C — the dispatcher, the fallback, interp.c — which carries only a
 * status and a message, and interp.c clears any exception still pending when an entry
 * returns. So error_keep takes the exception, sets the C error from it (the status its type
 * maps to, its message), and keeps it in this thread state's dict (error_key) together with
 * that message. error_raise (errors.c) first calls pydispatch_restore_error: when the C error
 * it is about to raise still has the kept message, the kept exception is raised instead;
 * otherwise (another C error happened since) it is dropped. When the handler ran on a
 * temporary thread state (cases 2 and 3 of Note [Entering an interpreter from C]) the kept
 * exception dies with that state and the caller gets the C error, whose message is the
 * exception's. When C code called on the interpreter's own thread state (case 1) and never
 * raises the error in Python, the kept exception (and what its traceback holds) stays until
 * the next one replaces it, error_raise drops it, or the thread state ends: one per thread
 * state at most. */

static pith_status status_of_exception(PyObject *type)
{
    if (PyErr_GivenExceptionMatches(type, PyExc_MemoryError))
        return PITH_ERR_NOMEM;
    if (PyErr_GivenExceptionMatches(type, PyExc_NotImplementedError))
        return PITH_ERR_NOT_IMPLEMENTED;
    if (PyErr_GivenExceptionMatches(type, PyExc_IndexError))
        return PITH_ERR_INDEX;
    if (PyErr_GivenExceptionMatches(type, PyExc_TypeError))
        return PITH_ERR_TYPE;
    if (PyErr_GivenExceptionMatches(type, PyExc_ValueError))
        return PITH_ERR_VALUE;
    /* The class itself (or a subclass), never its name: a user's class may be called
     * InterpreterError, even "pith.InterpreterError". No exception is pending here. */
    pith_module_state *st = imported_state();
    if (!st)
        PyErr_Clear();
    else if (PyErr_GivenExceptionMatches(type, st->interpreter_error))
        return PITH_ERR_INTERPRETER;
    return PITH_ERR_RUNTIME;
}

/* The key of the kept exception in the thread state dict (new reference). */
static PyObject *error_key(void)
{
    return PyUnicode_InternFromString("pith.dispatch_error");
}

/* Keeps (type, value, tb) with the C error's message in this thread state's dict. */
static void error_store(PyObject *type, PyObject *value, PyObject *tb)
{
    PyObject *dict = PyThreadState_GetDict(); /* borrowed */
    PyObject *key = dict ? error_key() : NULL;
    PyObject *kept = key ? Py_BuildValue("(OOOs)", type, value ? value : Py_None,
                                         tb ? tb : Py_None, pith_last_error())
                         : NULL;
    if (!kept || PyDict_SetItem(dict, key, kept) < 0)
        PyErr_Clear();
    Py_XDECREF(kept);
    Py_XDECREF(key);
}

pith_status error_keep(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (!type)
        return pith_set_error(PITH_ERR_RUNTIME, "pith: a Python call failed without an error");
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
        PyException_SetTraceback(value, tb);
    pith_status status = status_of_exception(type);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *message = text ? PyUnicode_AsUTF8(text) : NULL;
    if (!message || !message[0]) {
        PyErr_Clear();
        message = ((PyTypeObject *)type)->tp_name;
    }
    pith_set_error(status, "%s", message);
    Py_XDECREF(text);
    error_store(type, value, tb);
    Py_DECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return status;
}

int pydispatch_restore_error(void)
{
    PyObject *dict = PyThreadState_GetDict(); /* borrowed; no exception when NULL */
    if (!dict)
        return 0;
    PyObject *key = error_key();
    PyObject *kept = key ? PyDict_GetItemWithError(dict, key) : NULL; /* borrowed */
    if (!kept) {
        PyErr_Clear();
        Py_XDECREF(key);
        return 0;
    }
    Py_INCREF(kept);
    PyDict_DelItem(dict, key);
    PyErr_Clear();
    Py_DECREF(key);
    const char *message = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kept, 3));
    int restore = message && strcmp(message, pith_last_error()) == 0;
    PyErr_Clear();
    if (restore) {
        PyObject *type = PyTuple_GET_ITEM(kept, 0), *value = PyTuple_GET_ITEM(kept, 1),
                 *tb = PyTuple_GET_ITEM(kept, 2);
        PyErr_Restore(Py_NewRef(type), Py_NewRef(value), tb == Py_None ? NULL : Py_NewRef(tb));
    }
    Py_DECREF(kept);
    return restore;
}

/* ---- specs ---- */

/* Note [Arguments of a boxed call]
 * A handler gets the op's arguments as PyTorch's __torch_dispatch__ does: arguments before
 * the schema's `*` are positional, those after it keyword arguments; a keyword argument
 * equal to its default is left out, and so are the trailing positional arguments equal to
 * theirs (even when the caller spelled them out); a tensor comes as its wrapper (the same
 * object when it has one), a wrapped Python number as the Python number, an int list as a
 * list (also a single int given for an int[]), a None entry of a Tensor?[] as None. What
 * this needs from the schema — the argument names, where the keyword-only ones start, the
 * defaults as Python values, the kinds of the returns, which arguments are int lists —
 * binder_dispatch_spec (op_objects.c) reads from the C parse once per op (st->dispatch.
 * specs, keyed by the op's address). The spec's `func` is the op's OpOverload: what the
 * handler receives. */

PyObject *spec_of(pith_module_state *st, const pith_op *op)
{
    PyObject *key = PyLong_FromVoidPtr((void *)op);
    if (!key)
        return NULL;
    PyObject *spec = PyDict_GetItemWithError(st->dispatch.specs, key); /* borrowed */
    if (spec || PyErr_Occurred()) {
        Py_DECREF(key);
        return spec;
    }
    spec = binder_dispatch_spec(st, op);
    if (spec && (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != SPEC_LEN)) {
        PyErr_SetString(PyExc_RuntimeError, "pith.utils._dispatch_spec returned a bad spec");
        Py_CLEAR(spec);
    }
    if (spec && PyDict_SetItem(st->dispatch.specs, key, spec) < 0)
        Py_CLEAR(spec);
    Py_DECREF(key);
    Py_XDECREF(spec); /* the dict keeps it */
    return spec;
}

/* ---- overloaded arguments ---- */

void overloaded_init(overloaded_args *ov)
{
    ov->items = ov->small;
    ov->n = 0;
    ov->cap = (Py_ssize_t)(sizeof ov->small / sizeof *ov->small);
}

void overloaded_free(overloaded_args *ov)
{
    if (ov->items != ov->small)
        PyMem_Free(ov->items);
    overloaded_init(ov);
}

int overloaded_add(pith_module_state *st, overloaded_args *ov, PyObject *obj)
{
    return _PyType_Lookup(Py_TYPE(obj), st->dispatch.name) ? overloaded_insert(ov, obj) : 0;
}

int overloaded_insert(overloaded_args *ov, PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    for (Py_ssize_t i = 0; i < ov->n; i++)
        if (Py_TYPE(ov->items[i]) == type)
            return 0;
    Py_ssize_t at = ov->n;
    for (Py_ssize_t i = 0; i < ov->n; i++)
        if (PyType_IsSubtype(type, Py_TYPE(ov->items[i]))) {
            at = i;
            break;
        }
    if (ov->n == ov->cap) {
        Py_ssize_t cap = ov->cap * 2;
        PyObject **items = PyMem_Malloc((size_t)cap * sizeof *items);
        if (!items) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(items, ov->items, (size_t)ov->n * sizeof *items);
        if (ov->items != ov->small)
            PyMem_Free(ov->items);
        ov->items = items;
        ov->cap = cap;
    }
    memmove(ov->items + at + 1, ov->items + at, (size_t)(ov->n - at) * sizeof *ov->items);
    ov->items[at] = obj;
    ov->n++;
    return 0;
}

/* ---- stack values as Python ---- */

/* A wrapped number's value as a Python bool, int or float. */
static PyObject *wrapped_number(const pith_tensor *t)
{
    const void *data = pith_data_ptr(t);
    switch (pith_tensor_dtype(t)) {
    case PITH_BOOL:
        return PyBool_FromLong(*(const uint8_t *)data != 0); /* See Note [Bool bytes] */
    case PITH_INT64:
        return PyLong_FromLongLong(*(const int64_t *)data);
    case PITH_FLOAT64:
        return PyFloat_FromDouble(*(const double *)data);
    default: { /* wrapped numbers are bool, int64 or float64 (tensor_number.c) */
        double v = 0.0;
        pith_item(t, &v);
        return PyFloat_FromDouble(v);
    }
    }
}

/* Wraps `t` (steals the reference); a tensor with the Python key joins `ov`. */
static PyObject *tensor_argument(pith_module_state *st, pith_tensor *t, overloaded_args *ov)
{
    if (pith_tensor_is_wrapped_number(t)) {
        PyObject *number = wrapped_number(t);
        pith_release(t);
        return number;
    }
    bool python_key = pith_tensor_has_python_key(t);
    PyObject *obj = tensor_wrap(st, t);
    if (obj && python_key && ov && overloaded_add(st, ov, obj) < 0)
        Py_CLEAR(obj);
    return obj;
}

/* stack_value_to_python's `wrap` for handler arguments: `ctx` is the overloaded_args. */
static PyObject *argument_wrap(pith_module_state *st, pith_tensor *t, void *ctx)
{
    return tensor_argument(st, t, ctx);
}

/* Whether argument `i`'s value equals its default (never for tensors). */
static bool is_default(pith_module_state *st, PyObject *spec, PyObject *value, Py_ssize_t i)
{
    PyObject *fallback = PyTuple_GET_ITEM(PyTuple_GET_ITEM(spec, SPEC_DEFAULTS), i);
    if (fallback == st->binder.no_default)
        return false;
    if (value == fallback)
        return true;
    if (value == Py_None || fallback == Py_None || tensor_check(st, value))
        return false;
    if (PyList_Check(value) && PyList_GET_SIZE(value) &&
        tensor_check(st, PyList_GET_ITEM(value, 0)))
        return false;
    int eq = PyObject_RichCompareBool(value, fallback, Py_EQ);
    if (eq < 0)
        PyErr_Clear();
    return eq == 1;
}

int args_from_stack(pith_module_state *st, PyObject *spec, const pith_stack *stack,
                    overloaded_args *ov, PyObject **args_out, PyObject **kwargs_out)
{
    PyObject *names = PyTuple_GET_ITEM(spec, SPEC_NAMES);
    Py_ssize_t nargs = PyTuple_GET_SIZE(names);
    Py_ssize_t kwarg_start = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, SPEC_KWARG_START));
    *args_out = *kwargs_out = NULL;
    if ((size_t)nargs > pith_stack_size(stack)) {
        PyErr_Format(PyExc_RuntimeError, "pith: %zu values on the stack for an op of %zd "
                     "arguments", pith_stack_size(stack), nargs);
        return -1;
    }
    size_t base = pith_stack_size(stack) - (size_t)nargs;
    PyObject *small[16], **values = small;
    if (nargs > 16 && !(values = PyMem_Calloc((size_t)nargs, sizeof *values))) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t made = 0;
    PyObject *int_lists = PyTuple_GET_ITEM(spec, SPEC_INT_LISTS);
    for (; made < nargs; made++) {
        PyObject *v = stack_value_to_python(st, stack, base + (size_t)made, argument_wrap, ov);
        if (v && PyLong_CheckExact(v) && PyTuple_GET_ITEM(int_lists, made) == Py_True) {
            PyObject *list = PyList_New(1); /* an int where an int[] goes: [int] */
            if (list)
                PyList_SET_ITEM(list, 0, v);
            else
                Py_DECREF(v);
            v = list;
        }
        if (!(values[made] = v))
            goto done;
    }
    Py_ssize_t positional = kwarg_start;
    while (positional > 0 && is_default(st, spec, values[positional - 1], positional - 1))
        positional--;
    PyObject *args = PyTuple_New(positional), *kwargs = PyDict_New();
    if (!args || !kwargs) {
        Py_XDECREF(args);
        Py_XDECREF(kwargs);
        goto done;
    }
    for (Py_ssize_t i = 0; i < positional; i++)
        PyTuple_SET_ITEM(args, i, Py_NewRef(values[i]));
    for (Py_ssize_t i = kwarg_start; i < nargs; i++)
        if (!is_default(st, spec, values[i], i) &&
            PyDict_SetItem(kwargs, PyTuple_GET_ITEM(names, i), values[i]) < 0) {
            Py_DECREF(args);
            Py_DECREF(kwargs);
            goto done;
        }
    *args_out = args;
    *kwargs_out = kwargs;
done:
    for (Py_ssize_t i = 0; i < made; i++)
        Py_DECREF(values[i]);
    if (values != small)
        PyMem_Free(values);
    return *args_out ? 0 : -1;
}

/* ---- results ---- */

static const char *const return_kind_names[RET_NUM_KINDS] = {
    [RET_TENSOR] = "a Tensor",     [RET_OPT_TENSOR] = "a Tensor or None",
    [RET_TENSOR_LIST] = "a list of Tensors", [RET_BOOL] = "a bool",
    [RET_INT] = "an int",          [RET_INT_LIST] = "a list of ints",
    [RET_FLOAT] = "a float",       [RET_SCALAR] = "a number",
    [RET_STR] = "a str",           [RET_DTYPE] = "a pith.dtype",
};

/* A result of the wrong type is pith.PithTypeError: a TypeError, and the RuntimeError that
 * PyTorch raises there ("Unable to cast ..."). */
static int wrong_result(pith_module_state *st, PyObject *func, const char *who, int kind,
                        PyObject *obj)
{
    PyErr_Format(st->type_error, "%s for %R returned %.200s, expected %s", who, func,
                 obj == Py_None ? "None" : Py_TYPE(obj)->tp_name, return_kind_names[kind]);
    return -1;
}

/* A list result through ops.c's push: an item of the wrong type is PITH_ERR_TYPE with no
 * exception (results_push names the op and the expected type). */
static pith_status pushed_list(int rc)
{
    if (rc == 0)
        return PITH_OK;
    if (PyErr_ExceptionMatches(PyExc_TypeError))
        PyErr_Clear();
    return PITH_ERR_TYPE;
}

/* Pushes one result of kind `kind`: PITH_OK, PITH_ERR_TYPE for a wrong value (no Python
 * exception, or a pending one from a conversion), another status for a C failure. */
static pith_status push_result(pith_module_state *st, pith_stack *stack, int kind,
                               PyObject *obj)
{
    bool seq = PyList_Check(obj) || PyTuple_Check(obj);
    switch (kind) {
    case RET_OPT_TENSOR:
        if (obj == Py_None)
            return pith_stack_push_none(stack);
        /* fall through */
    case RET_TENSOR:
        return tensor_check(st, obj) ? pith_stack_push_tensor(stack, tensor_of(obj))
                                     : PITH_ERR_TYPE;
    case RET_TENSOR_LIST:
        return seq ? pushed_list(push_python_tensor_list(st, stack, obj, false)) : PITH_ERR_TYPE;
    case RET_BOOL:
        return PyBool_Check(obj) ? pith_stack_push_bool(stack, obj == Py_True) : PITH_ERR_TYPE;
    case RET_INT: {
        long long v = PyLong_Check(obj) && !PyBool_Check(obj) ? PyLong_AsLongLong(obj) : -1;
        if (!PyLong_Check(obj) || PyBool_Check(obj) || (v == -1 && PyErr_Occurred()))
            return PITH_ERR_TYPE;
        return pith_stack_push_int(stack, v);
    }
    case RET_INT_LIST:
        return seq ? pushed_list(push_python_int_list(st, stack, obj)) : PITH_ERR_TYPE;
    case RET_FLOAT: {
        double v = PyFloat_Check(obj) || (PyLong_Check(obj) && !PyBool_Check(obj))
                       ? PyFloat_AsDouble(obj)
                       : -1.0;
        if ((!PyFloat_Check(obj) && (!PyLong_Check(obj) || PyBool_Check(obj))) ||
            (v == -1.0 && PyErr_Occurred()))
            return PITH_ERR_TYPE;
        return pith_stack_push_double(stack, v);
    }
    case RET_SCALAR:
        if (PyBool_Check(obj))
            return pith_stack_push_bool(stack, obj == Py_True);
        if (PyLong_Check(obj)) {
            long long v = PyLong_AsLongLong(obj);
            return v == -1 && PyErr_Occurred() ? PITH_ERR_TYPE : pith_stack_push_int(stack, v);
        }
        if (PyFloat_Check(obj))
            return pith_stack_push_double(stack, PyFloat_AS_DOUBLE(obj));
        return PITH_ERR_TYPE;
    case RET_STR: {
        const char *text = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
        return text ? pith_stack_push_string(stack, text) : PITH_ERR_TYPE;
    }
    case RET_DTYPE:
        return PyObject_TypeCheck(obj, st->dtype_type)
                   ? pith_stack_push_dtype(stack, ((pith_dtype_object *)obj)->dtype)
                   : PITH_ERR_TYPE;
    default:
        return PITH_ERR_TYPE;
    }
}

int results_push(pith_module_state *st, PyObject *spec, pith_stack *stack, PyObject *result,
                 const char *who)
{
    PyObject *func = PyTuple_GET_ITEM(spec, SPEC_FUNC);
    PyObject *returns = PyTuple_GET_ITEM(spec, SPEC_RETURNS);
    Py_ssize_t nreturns = PyTuple_GET_SIZE(returns);
    Py_ssize_t nargs = PyTuple_GET_SIZE(PyTuple_GET_ITEM(spec, SPEC_NAMES));
    if (nreturns == 0 && result != Py_None) {
        PyErr_Format(st->type_error, "%s for %R returned %.200s, expected None (the op "
                     "returns nothing)", who, func, Py_TYPE(result)->tp_name);
        return -1;
    }
    if (nreturns > 1 && (!PyTuple_Check(result) && !PyList_Check(result))) {
        PyErr_Format(st->type_error, "%s for %R returned %.200s, expected a tuple of %zd "
                     "values", who, func, Py_TYPE(result)->tp_name, nreturns);
        return -1;
    }
    if (nreturns > 1 && PySequence_Fast_GET_SIZE(result) != nreturns) {
        PyErr_Format(st->type_error, "%s for %R returned %zd values, expected %zd", who, func,
                     PySequence_Fast_GET_SIZE(result), nreturns);
        return -1;
    }
    pith_stack_drop(stack, (size_t)nargs);
    for (Py_ssize_t r = 0; r < nreturns; r++) {
        PyObject *obj = nreturns == 1 ? result : PySequence_Fast_GET_ITEM(result, r);
        int kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(returns, r));
        pith_status s = push_result(st, stack, kind, obj);
        if (s == PITH_ERR_TYPE) {
            if (!PyErr_Occurred())
                wrong_result(st, func, who, kind, obj);
            return -1;
        }
        if (s != PITH_OK)
            return error_raise(st), -1;
    }
    return 0;
}

/* ---- handlers ---- */

/* Note [Handler order and keys]
 * As PyTorch's handle_torch_function_no_python_arg_parser: when a dispatch mode handles the
 * call, the top mode of this thread's stack runs first, popped while it runs (so `func`
 * inside it reaches the next mode, or the subclasses and the kernel), and pushed back
 * whatever happens. If it returns NotImplemented (or no mode handles the call), the subclass
 * handlers run, most derived first (overloaded_add's order), with the mode back on the
 * stack; the first result that is not NotImplemented wins, and when every handler declined
 * the call is a TypeError naming the op and the handlers. The fallback (Note [Python
 * fallback]) excluded Python, and PythonMode for a mode, for the whole call; while a handler
 * runs those exclusions are lifted again (`unexclude`), so that inside a handler the keys
 * are as they were when the op was called: ops on subclass tensors reach their handlers (a
 * wrapper's inner tensors are plain and reach the kernel), and PythonMode is included
 * exactly when the mode stack is not empty. Only pith.utils.no_dispatch() excludes the keys
 * from Python, and it excludes both, so a call that reached a fallback was not made inside
 * it. Queries made outside a dispatch (detach, metadata) lift nothing. */

static PyObject *types_of(overloaded_args *ov)
{
    PyObject *types = PyTuple_New(ov->n);
    for (Py_ssize_t i = 0; types && i < ov->n; i++)
        PyTuple_SET_ITEM(types, i, Py_NewRef((PyObject *)Py_TYPE(ov->items[i])));
    return types;
}

static void keys_for_handler(pith_keys_guard saved, uint64_t unexclude, bool modes_left)
{
    uint64_t bit = pydispatch_bit_mode();
    keys_set(modes_left ? saved.included | bit : saved.included & ~bit,
             saved.excluded & ~unexclude);
}

/* The top mode's handler, with the mode popped; NULL with an exception. */
static PyObject *mode_call(pith_module_state *st, PyObject *modes, PyObject *func,
                           PyObject *types, PyObject *args, PyObject *kwargs, uint64_t unexclude,
                           PyObject **mode_out)
{
    Py_ssize_t n = PyList_GET_SIZE(modes);
    PyObject *mode = Py_NewRef(PyList_GET_ITEM(modes, n - 1));
    *mode_out = mode;
    if (PyList_SetSlice(modes, n - 1, n, NULL) < 0)
        return NULL;
    pith_keys_guard saved = pith_keys_current();
    keys_for_handler(saved, unexclude, n > 1);
    PyObject *argv[5] = {mode, func, types, args, kwargs};
    PyObject *ret = PyObject_VectorcallMethod(st->dispatch.name, argv,
                                              5 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    pith_keys_restore(&saved);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyList_Append(modes, mode) < 0) { /* out of memory: report that instead */
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        Py_CLEAR(ret);
        return NULL;
    }
    PyErr_Restore(type, value, tb);
    return ret;
}

static PyObject *subclasses_call(pith_module_state *st, overloaded_args *ov, PyObject *func,
                                 PyObject *types, PyObject *args, PyObject *kwargs,
                                 uint64_t unexclude)
{
    pith_keys_guard saved = pith_keys_current();
    keys_for_handler(saved, unexclude, saved.included & pydispatch_bit_mode());
    PyObject *ret = Py_NewRef(Py_NotImplemented);
    for (Py_ssize_t i = 0; i < ov->n && ret == Py_NotImplemented; i++) {
        Py_DECREF(ret);
        PyObject *handler = PyObject_GetAttr(ov->items[i], st->dispatch.name);
        PyObject *argv[4] = {func, types, args, kwargs};
        ret = handler ? PyObject_Vectorcall(handler, argv, 4, NULL) : NULL;
        Py_XDECREF(handler);
        if (!ret)
            break;
    }
    pith_keys_restore(&saved);
    return ret;
}

static void not_implemented_error(PyObject *func, PyObject *mode, overloaded_args *ov)
{
    PyObject *text = PyUnicode_FromFormat("Multiple dispatch failed for '%R'; all "
                                          "__pith_dispatch__ handlers returned "
                                          "NotImplemented:\n\n", func);
    if (text && mode)
        PyUnicode_AppendAndDel(&text, PyUnicode_FromFormat("  - mode object %R\n", mode));
    for (Py_ssize_t i = 0; text && i < ov->n; i++)
        PyUnicode_AppendAndDel(&text, PyUnicode_FromFormat("  - tensor subclass %R\n",
                                                           (PyObject *)Py_TYPE(ov->items[i])));
    if (text)
        PyErr_SetObject(PyExc_TypeError, text);
    Py_XDECREF(text);
}

PyObject *handlers_call(pith_module_state *st, PyObject *func, overloaded_args *ov,
                        PyObject *args, PyObject *kwargs, PyObject *modes, uint64_t unexclude)
{
    PyObject *types = types_of(ov);
    if (!types)
        return NULL;
    PyObject *ret = NULL, *mode = NULL;
    if (modes && PyList_GET_SIZE(modes) > 0) {
        ret = mode_call(st, modes, func, types, args, kwargs, unexclude, &mode);
        if (!ret)
            goto done;
    }
    if (!ret || ret == Py_NotImplemented) {
        Py_XDECREF(ret);
        ret = subclasses_call(st, ov, func, types, args, kwargs, unexclude);
    }
    if (ret == Py_NotImplemented) {
        Py_CLEAR(ret);
        not_implemented_error(func, mode, ov);
    }
done:
    Py_XDECREF(mode);
    Py_DECREF(types);
    return ret;
}

/* A mode dispatch on a thread state without modes: run the op as if none were active. */
static pith_status stale_dispatch(const pith_op *op, pith_stack *stack)
{
    pith_keys_guard saved = pith_keys_current();
    uint64_t bit = pydispatch_bit_mode();
    keys_set(saved.included & ~bit, saved.excluded & ~(bit | pydispatch_bit_python()));
    pith_status s = pith_call_boxed(op, stack);
    pith_keys_restore(&saved);
    return s;
}

/* ---- the dispatch entry ---- */

/* The first tensor with the Python key among the stack's values, or NULL. */
static const pith_tensor *python_key_argument(const pith_stack *stack)
{
    for (size_t i = 0, n = pith_stack_size(stack); i < n; i++) {
        if (pith_stack_kind(stack, i) != PITH_VALUE_TENSOR)
            continue;
        pith_tensor *t = pith_stack_get_tensor(stack, i); /* a new reference */
        bool found = t && pith_tensor_has_python_key(t);
        pith_release(t); /* the stack still holds one */
        if (found)
            return t;
    }
    return NULL;
}

pith_status pydispatch_dispatch(const pith_op *op, pith_stack *stack)
{
    pith_module_state *st = pydispatch_state_of(python_key_argument(stack));
    if (!st)
        return error_keep();
    bool handled = false;
    pith_status s = library_kernel_pending(st, op, stack, &handled);
    if (handled)
        return s;
    pith_keys_guard keys = pith_keys_current();
    uint64_t mode_bit = pydispatch_bit_mode(), python_bit = pydispatch_bit_python();
    bool mode = keys.included & keys.excluded & mode_bit; /* the PythonMode fallback */
    PyObject *modes = NULL;
    if (mode) {
        modes = modes_of_thread(st, false);
        if (!modes || PyList_GET_SIZE(modes) == 0)
            return PyErr_Occurred() ? error_keep() : stale_dispatch(op, stack);
    }
    PyObject *spec = spec_of(st, op);
    if (!spec)
        return error_keep();
    Py_INCREF(spec); /* a handler may re-import pith.utils, which drops the cache */
    overloaded_args ov;
    overloaded_init(&ov);
    PyObject *args, *kwargs, *ret = NULL;
    if (args_from_stack(st, spec, stack, &ov, &args, &kwargs) == 0) {
        Py_XINCREF(modes); /* a handler may replace the thread's list */
        ret = handlers_call(st, PyTuple_GET_ITEM(spec, SPEC_FUNC), &ov, args, kwargs, modes,
                            mode ? python_bit | mode_bit : python_bit);
        Py_XDECREF(modes);
        Py_DECREF(args);
        Py_DECREF(kwargs);
    }
    overloaded_free(&ov);
    if (ret && results_push(st, spec, stack, ret, "__pith_dispatch__") < 0)
        Py_CLEAR(ret);
    Py_DECREF(spec);
    if (!ret)
        return error_keep();
    Py_DECREF(ret);
    return PITH_OK;
}

