/* calls.c — calls met by pith.compile's translator: pith operators are recorded into the
 * graph through the binder, Python functions are inlined (their bytecode evaluated by
 * eval.c), and a short list of builtins, types and container methods is evaluated on
 * plain values. */
#include <string.h>

#include "../binder.h"
#include "translate.h"

/* ---- methods of dicts and lists ---- */

/* The methods of dicts and lists evaluated here: reads of any dict (guarded), and every
 * method of the frame's own containers, which no one else can see. */
static const char *const dict_reads[] = {"values", "keys", "items", "get", NULL};
static const char *const own_methods[] = {"pop", "setdefault", "update", "copy", "append",
                                          "extend", "insert", "reverse", "clear", NULL};

static bool name_in(const char *name, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

bool container_method(tx *x, PyObject *obj, PyObject *name)
{
    const char *n = PyUnicode_AsUTF8(name);
    if (!n) {
        PyErr_Clear();
        return false;
    }
    if (PyDict_Check(obj) && name_in(n, dict_reads))
        return true;
    return is_fresh(x, obj) && name_in(n, own_methods);
}

/* self.name(*args) for a dict or list `self` (container_method said yes): a new reference,
 * or NULL with the failure. */
static PyObject *container_call(tx *x, PyObject *callable, PyObject *self, const char *name,
                                PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    bool fresh = is_fresh(x, self);
    if (kwnames)
        return fail(x, true, "%s.%s() with keywords", Py_TYPE(self)->tp_name, name), NULL;
    if (PyDict_Check(self) && name_in(name, dict_reads)) {
        if (strcmp(name, "get") == 0) {
            if (nargs < 1 || nargs > 2 || !is_plain(x, args[0], 0))
                return fail(x, true, "dict.get() of a %s",
                            nargs ? Py_TYPE(args[0])->tp_name : "nothing"), NULL;
            PyObject *v;
            if (fresh) {
                v = PyDict_GetItemWithError(self, args[0]);
                if (!v && PyErr_Occurred())
                    return fail_exception(x, "dict.get()"), NULL;
            } else {
                PyObject *what = PyUnicode_FromString("a dict item");
                int err;
                v = what ? dict_read(x, self, args[0], what, &err) : NULL;
                if (what && v) {
                    PyObject *r = outside_value(x, v, what);
                    Py_DECREF(what);
                    return r;
                }
                Py_XDECREF(what);
                if (!what || err < 0)
                    return NULL;
            }
            return Py_NewRef(v ? v : nargs == 2 ? args[1] : Py_None);
        }
        if (nargs)
            return fail(x, true, "dict.%s() with arguments", name), NULL;
        /* d.values() & co.: a snapshot of its content, which must not change */
        PyObject *what = PyUnicode_FromString("a dict's content");
        if (!what || dict_read_all(x, self, what) < 0) {
            Py_XDECREF(what);
            return NULL;
        }
        Py_DECREF(what);
        PyObject *r = strcmp(name, "values") == 0 ? PyDict_Values(self)
                      : strcmp(name, "keys") == 0 ? PyDict_Keys(self)
                                                  : PyDict_Items(self);
        return make_fresh(x, r);
    }
    if (!fresh)
        return fail(x, true, "%s.%s() of a container the frame did not build",
                    Py_TYPE(self)->tp_name, name), NULL;
    /* the frame's own container: update/extend read their argument whole */
    if ((strcmp(name, "update") == 0 || strcmp(name, "extend") == 0) && nargs == 1 &&
        !is_fresh(x, args[0])) {
        PyObject *items = PyDict_Check(args[0]) ? NULL : iterate(x, args[0]);
        if (PyDict_Check(args[0])) {
            PyObject *what = PyUnicode_FromString("an update's argument");
            int rc = what ? dict_read_all(x, args[0], what) : -1;
            Py_XDECREF(what);
            if (rc < 0)
                return NULL;
        } else if (!items) {
            return NULL;
        }
        PyObject *r = PyObject_Vectorcall(callable, items ? &items : args, 1, NULL);
        Py_XDECREF(items);
        if (!r)
            return fail_exception(x, name), NULL;
        return r;
    }
    if (strcmp(name, "pop") == 0 && PyDict_Check(self) && nargs >= 1 && !is_plain(x, args[0], 0))
        return fail(x, true, "dict.pop() of a %s", Py_TYPE(args[0])->tp_name), NULL;
    if (strcmp(name, "setdefault") == 0 && nargs >= 1 && !is_plain(x, args[0], 0))
        return fail(x, true, "dict.setdefault() of a %s", Py_TYPE(args[0])->tp_name), NULL;
    PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, NULL);
    if (!r)
        return fail_exception(x, name), NULL;
    if (strcmp(name, "copy") == 0)
        return make_fresh(x, r);
    return r;
}

static PyObject *record_call(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames);

/* A conversion of the stand-in `self`, as conversions.c does it: the tensor itself when the
 * dtype matches, else the operator to.dtype (recorded). */

static PyObject *conversion_call(tx *x, PyObject *self, int which, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *dtype_obj = NULL;
    if (which == PITH_NUM_DTYPES) {
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        if (nargs == 1 && nkw == 0)
            dtype_obj = args[0];
        else if (nargs == 0 && nkw == 1 &&
                 PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "dtype") == 0)
            dtype_obj = args[0];
        if (!dtype_obj || !Py_IS_TYPE(dtype_obj, x->st->dtype_type))
            return fail(x, true, "Tensor.to() with arguments other than a dtype"), NULL;
        which = ((pith_dtype_object *)dtype_obj)->dtype;
    } else if (nargs || kwnames) {
        return fail(x, false, "a dtype conversion with arguments"), NULL;
    }
    if (pith_tensor_dtype(tensor_of(self)) == (pith_dtype)which)
        return Py_NewRef(self);
    const pith_op *op = pith_op_find("to.dtype");
    PyObject *ov = op ? binder_overload_of(x->st, op) : NULL;
    if (!ov)
        return fail_exception(x, "to.dtype"), NULL;
    PyObject *d = dtype_object(x->st, (pith_dtype)which);
    if (!d)
        return NULL;
    PyObject *call_args[2] = {self, d};
    PyObject *r = record_call(x, ov, call_args, 2, NULL);
    Py_DECREF(d);
    return r;
}

static bool is_binder_callable(tx *x, PyObject *v)
{
    PyTypeObject *tp = Py_TYPE(v);
    return tp == x->st->binder.function_type || tp == x->st->binder.method_type ||
           tp == x->st->binder.overload_type;
}
/* ---- calls ---- */

/* Binds a call to a Python function into a fresh frame's slots, as CPython does. */
static int bind_arguments(tx *x, PyFunctionObject *fn, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, PyObject **slots)
{
    PyCodeObject *co = (PyCodeObject *)fn->func_code;
    int argc = co->co_argcount, kwonly = co->co_kwonlyargcount,
        posonly = co->co_posonlyargcount;
    bool varargs = co->co_flags & CO_VARARGS, varkw = co->co_flags & CO_VARKEYWORDS;
    int total = argc + kwonly;
    PyObject *kwdict = NULL;
    if (varkw) {
        kwdict = make_fresh(x, PyDict_New());
        if (!kwdict)
            return -1;
        slots[total + varargs] = Py_NewRef(kwdict);
    }
    Py_ssize_t npos = nargs < argc ? nargs : argc;
    for (Py_ssize_t i = 0; i < npos; i++)
        slots[i] = Py_NewRef(args[i]);
    if (varargs) {
        PyObject *rest = PyTuple_New(nargs > argc ? nargs - argc : 0);
        if (!rest)
            return -1;
        for (Py_ssize_t i = argc; i < nargs; i++)
            PyTuple_SET_ITEM(rest, i - argc, Py_NewRef(args[i]));
        slots[total] = rest;
    } else if (nargs > argc) {
        return fail(x, false, "%U() takes %d positional arguments but %zd were given",
                    co->co_name, argc, nargs);
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k), *value = args[nargs + k];
        int j;
        for (j = posonly; j < total; j++) {
            PyObject *pname = PyTuple_GET_ITEM(co->co_localsplusnames, j);
            if (pname == key || PyUnicode_Compare(pname, key) == 0)
                break;
        }
        if (j < total) {
            if (slots[j])
                return fail(x, false, "%U() got multiple values for argument '%U'",
                            co->co_name, key);
            slots[j] = Py_NewRef(value);
        } else if (kwdict) {
            if (PyDict_SetItem(kwdict, key, value) < 0)
                return -1;
        } else {
            return fail(x, false, "%U() got an unexpected keyword argument '%U'",
                        co->co_name, key);
        }
    }
    PyObject *defaults = fn->func_defaults;
    Py_ssize_t ndef = defaults ? PyTuple_GET_SIZE(defaults) : 0;
    for (int i = 0; i < argc; i++) {
        if (slots[i])
            continue;
        Py_ssize_t d = i - (argc - ndef);
        if (d < 0)
            return fail(x, false, "%U() missing a required argument", co->co_name);
        slots[i] = Py_NewRef(PyTuple_GET_ITEM(defaults, d));
    }
    for (int i = argc; i < total; i++) {
        if (slots[i])
            continue;
        PyObject *pname = PyTuple_GET_ITEM(co->co_localsplusnames, i);
        PyObject *v = fn->func_kwdefaults ? PyDict_GetItemWithError(fn->func_kwdefaults, pname)
                                          : NULL;
        if (!v) {
            if (PyErr_Occurred())
                return -1;
            return fail(x, false, "%U() missing a required keyword-only argument '%U'",
                        co->co_name, pname);
        }
        slots[i] = Py_NewRef(v);
    }
    return 0;
}

static PyObject *inline_function(tx *x, PyFunctionObject *fn, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    PyCodeObject *co = (PyCodeObject *)fn->func_code;
    if (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE))
        return fail(x, true, "a call of the generator or coroutine %U", fn->func_qualname),
               NULL;
    if (x->depth >= TRANSLATE_MAX_DEPTH)
        return fail(x, true, "calls nest deeper than %d", TRANSLATE_MAX_DEPTH), NULL;
    if (func_guard(x, fn) < 0)
        return NULL;
    sframe f;
    if (sframe_init(&f, fn, co) < 0)
        return NULL;
    PyObject *result = NULL;
    PyCodeObject *saved_code = x->code;
    int saved_pc = x->pc;
    if (bind_arguments(x, fn, args, nargs, kwnames, f.locals) == 0) {
        x->depth++;
        result = eval_frame(x, &f);
        x->depth--;
    }
    x->code = saved_code;
    x->pc = saved_pc;
    sframe_clear(&f);
    return result;
}

/* math's functions are pure on numbers */
static PyObject *math_call(tx *x, PyObject *callable, const char *name, PyObject *const *args,
                           Py_ssize_t nargs)
{
    for (Py_ssize_t i = 0; i < nargs; i++)
        if (!(PyLong_CheckExact(args[i]) || PyFloat_CheckExact(args[i]) ||
              PyBool_Check(args[i])))
            return fail(x, true, "math.%s of a %s", name, Py_TYPE(args[i])->tp_name), NULL;
    PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, NULL);
    if (!r)
        return fail_exception(x, name), NULL;
    return r;
}

static PyObject *builtin_len(tx *x, PyObject *v)
{
    if (is_tensor(x, v)) {
        int64_t sizes[PITH_MAX_DIMS];
        int nd = pith_sizes(tensor_of(v), sizes);
        if (nd == 0)
            return fail(x, false, "len() of a 0-d tensor"), NULL;
        return PyLong_FromLongLong(sizes[0]);
    }
    if (PyDict_Check(v)) {
        PyObject *what = PyUnicode_FromString("a dict's length");
        if (!what || dict_read_all(x, v, what) < 0) {
            Py_XDECREF(what);
            return NULL;
        }
        Py_DECREF(what);
        return PyLong_FromSsize_t(PyDict_GET_SIZE(v));
    }
    if (is_plain(x, v, 0) && (PyTuple_Check(v) || PyList_CheckExact(v) ||
                              PyUnicode_CheckExact(v)))
        return PyLong_FromSsize_t(PyObject_Length(v));
    return fail(x, true, "len() of a %s", Py_TYPE(v)->tp_name), NULL;
}

static PyObject *builtin_isinstance(tx *x, PyObject *v, PyObject *classinfo)
{
    /* by the type alone, for classes of the plain metaclass: __instancecheck__ and a
     * __class__ property would be user code (a stand-in's type is the guarded type of
     * its argument, or pith.Tensor for what the graph computes) */
    PyObject *classes = PyTuple_Check(classinfo) ? classinfo : NULL;
    Py_ssize_t n = classes ? PyTuple_GET_SIZE(classes) : 1;
    int rc = 0;
    for (Py_ssize_t i = 0; i < n && !rc; i++) {
        PyObject *c = classes ? PyTuple_GET_ITEM(classes, i) : classinfo;
        if (!PyType_Check(c) || (Py_TYPE(c) != &PyType_Type &&
                                 !PyType_IsSubtype(Py_TYPE(c), &PyType_Type)) ||
            type_lookup(x, Py_TYPE(c), "__instancecheck__") !=
                type_lookup(x, &PyType_Type, "__instancecheck__"))
            return fail(x, true, "isinstance() with a class argument of type %s",
                        Py_TYPE(c)->tp_name), NULL;
        rc = PyType_IsSubtype(value_type(x, v), (PyTypeObject *)c);
    }
    return PyBool_FromLong(rc);
}

/* getattr(o, name[, default]) (`is_getattr`) or hasattr(o, name). */
static PyObject *builtin_getattr(tx *x, const char *name, bool is_getattr,
                                 PyObject *const *args, Py_ssize_t nargs)
{
    if (!PyUnicode_CheckExact(args[1]))
        return fail(x, false, "%s() with a name of type %s", name,
                    Py_TYPE(args[1])->tp_name), NULL;
    bool saved = x->absent_ok;
    x->absent_ok = true;
    x->absent = false;
    PyObject *r = load_attr(x, args[0], args[1]);
    bool absent = x->absent;
    x->absent_ok = saved;
    x->absent = false;
    if (!is_getattr) {
        if (r || absent) {
            Py_XDECREF(r);
            return PyBool_FromLong(r != NULL);
        }
        return NULL;
    }
    if (!r && absent && nargs == 3)
        return Py_NewRef(args[2]);
    if (!r && absent)
        return fail(x, false, "getattr(): %U is missing (AttributeError)", args[1]), NULL;
    return r;
}

/* abs, min, max, round and divmod of plain values. */
static PyObject *builtin_pure(tx *x, PyObject *callable, const char *name,
                              PyObject *const *args, Py_ssize_t nargs)
{
    bool all_plain = true;
    for (Py_ssize_t i = 0; i < nargs; i++)
        all_plain = all_plain && is_plain(x, args[i], 0);
    static const char *const pure[] = {"abs", "min", "max", "round", "divmod", NULL};
    for (int i = 0; all_plain && pure[i]; i++)
        if (strcmp(name, pure[i]) == 0) {
            PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, NULL);
            if (!r)
                return fail_exception(x, name), NULL;
            return r;
        }
    return fail(x, true, "a call of the builtin %s", name), NULL;
}

/* Builtins evaluated here, on plain values only. */
static PyObject *call_builtin(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    const char *name = ((PyCFunctionObject *)callable)->m_ml->ml_name;
    PyObject *self = PyCFunction_GET_SELF(callable);
    bool is_builtin = self && PyModule_Check(self) &&
                      strcmp(PyModule_GetName(self) ? PyModule_GetName(self) : "", "builtins") == 0;
    if (PyErr_Occurred())
        PyErr_Clear();
    if (self && (PyDict_Check(self) || PyList_CheckExact(self))) {
        PyObject *uname = PyUnicode_FromString(name);
        bool ok = uname && container_method(x, self, uname);
        Py_XDECREF(uname);
        if (!ok)
            return fail(x, true, "%s.%s()", Py_TYPE(self)->tp_name, name), NULL;
        return container_call(x, callable, self, name, args, nargs, kwnames);
    }
    bool is_math = self && PyModule_Check(self) && PyModule_GetName(self) &&
                   strcmp(PyModule_GetName(self), "math") == 0;
    if (PyErr_Occurred())
        PyErr_Clear();
    if (is_math && !kwnames)
        return math_call(x, callable, name, args, nargs);
    if (!is_builtin || kwnames)
        return fail(x, true, "a call of the builtin %s", name), NULL;
    if (strcmp(name, "len") == 0 && nargs == 1)
        return builtin_len(x, args[0]);
    if (strcmp(name, "isinstance") == 0 && nargs == 2)
        return builtin_isinstance(x, args[0], args[1]);
    if (strcmp(name, "iter") == 0 && nargs == 1) {
        PyObject *t = iterate(x, args[0]);
        return t ? make_fresh(x, t) : NULL;
    }
    bool is_getattr = strcmp(name, "getattr") == 0 && (nargs == 2 || nargs == 3);
    if (is_getattr || (strcmp(name, "hasattr") == 0 && nargs == 2))
        return builtin_getattr(x, name, is_getattr, args, nargs);
    return builtin_pure(x, callable, name, args, nargs);
}

/* Types callable here: tuple, list, range, int, float, bool on plain values. */
static PyObject *call_type(tx *x, PyTypeObject *tp, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    if (kwnames)
        return fail(x, true, "a call of %s with keywords", tp->tp_name), NULL;
    if (tp == &PyType_Type && nargs == 1)
        return Py_NewRef((PyObject *)value_type(x, args[0])); /* type(v) */
    if ((tp == &PyEnum_Type && (nargs == 1 || (nargs == 2 && PyLong_CheckExact(args[1])))) ||
        (tp == &PyReversed_Type && nargs == 1) || (tp == &PyZip_Type && nargs >= 1)) {
        /* over snapshots (iterate): the result is a fresh list of what iterating gives */
        PyObject *snap[8];
        if (nargs > 8)
            return fail(x, true, "zip() of more than 8 iterables"), NULL;
        Py_ssize_t nit = tp == &PyEnum_Type ? 1 : nargs;
        for (Py_ssize_t i = 0; i < nit; i++)
            if (!(snap[i] = iterate(x, args[i]))) {
                for (Py_ssize_t j = 0; j < i; j++)
                    Py_DECREF(snap[j]);
                return NULL;
            }
        PyObject *call_args[8];
        for (Py_ssize_t i = 0; i < nit; i++)
            call_args[i] = snap[i];
        if (tp == &PyEnum_Type && nargs == 2)
            call_args[nit++] = args[1];
        PyObject *it = PyObject_Vectorcall((PyObject *)tp, call_args, (size_t)nit, NULL);
        for (Py_ssize_t i = 0; i < (tp == &PyEnum_Type ? 1 : nargs); i++)
            Py_DECREF(snap[i]);
        PyObject *r = it ? PySequence_List(it) : NULL;
        Py_XDECREF(it);
        if (!r)
            return fail_exception(x, tp->tp_name), NULL;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(r); i++) {
            if (!PyTuple_CheckExact(PyList_GET_ITEM(r, i)))
                continue;
            PyObject *item = make_fresh(x, Py_NewRef(PyList_GET_ITEM(r, i)));
            if (!item) {
                Py_DECREF(r);
                return NULL;
            }
            Py_DECREF(item); /* `keep` holds it */
        }
        return make_fresh(x, r);
    }
    if (tp == &PyDict_Type && nargs <= 1) {
        PyObject *d = PyDict_New();
        if (!d)
            return NULL;
        if (nargs == 1) {
            PyObject *what = PyUnicode_FromString("dict()'s argument");
            int rc = !PyDict_Check(args[0]) || !what ? -1 : dict_read_all(x, args[0], what);
            Py_XDECREF(what);
            if (rc < 0 || PyDict_Update(d, args[0]) < 0) {
                Py_DECREF(d);
                return PyErr_Occurred() ? NULL : (fail(x, true, "dict() of a %s",
                                                       Py_TYPE(args[0])->tp_name), NULL);
            }
        }
        return make_fresh(x, d);
    }
    if (tp == &PyTuple_Type || tp == &PyList_Type) {
        if (nargs == 0)
            return make_fresh(x, PyObject_CallNoArgs((PyObject *)tp));
        if (nargs == 1) {
            PyObject *t = iterate(x, args[0]);
            if (!t)
                return NULL;
            if (tp == &PyTuple_Type)
                return t;
            PyObject *l = PySequence_List(t);
            Py_DECREF(t);
            return make_fresh(x, l);
        }
    }
    if ((tp == &PyRange_Type || tp == &PyLong_Type || tp == &PyFloat_Type ||
         tp == &PyBool_Type) && nargs >= 1) {
        for (Py_ssize_t i = 0; i < nargs; i++)
            if (!is_scalar(args[i]))
                return fail(x, true, "%s() of a %s", tp->tp_name, Py_TYPE(args[i])->tp_name),
                       NULL;
        PyObject *r = PyObject_Vectorcall((PyObject *)tp, args, (size_t)nargs, NULL);
        if (!r)
            return fail_exception(x, tp->tp_name), NULL;
        return r;
    }
    return fail(x, true, "a call of the type %s", tp->tp_name), NULL;
}

/* A call of a pith operator, recorded into the graph (Note [Recording calls into a graph]):
 * every tensor in the result must be a stand-in of this graph. */
static PyObject *record_call(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    pith_graph *previous = binder_record_into(x->g);
    PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, kwnames);
    binder_record_into(previous);
    if (!r)
        return fail_exception(x, "an operator"), NULL;
    /* An in-place op returns its argument itself (the binder's return_alias); out= names
     * its target. Either way the graph writes memory that another input may share. */
    for (Py_ssize_t i = 0; i < nargs && !x->mutates; i++)
        x->mutates = args[i] == r && is_tensor(x, r);
    for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "out") == 0)
            x->mutates = true;
    if (PyList_Append(x->keep, r) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    return r;
}

PyObject *call_value(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    if (PyMethod_Check(callable)) {
        PyObject *func = PyMethod_GET_FUNCTION(callable), *self = PyMethod_GET_SELF(callable);
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        PyObject **all = PyMem_Malloc((size_t)(nargs + nkw + 1) * sizeof *all);
        if (!all)
            return PyErr_NoMemory();
        all[0] = self;
        for (Py_ssize_t i = 0; i < nargs + nkw; i++)
            all[i + 1] = args[i];
        PyObject *r = call_value(x, func, all, nargs + 1, kwnames);
        PyMem_Free(all);
        return r;
    }
    if (is_binder_callable(x, callable))
        return record_call(x, callable, args, nargs, kwnames);
    if (Py_TYPE(callable) == x->st->function.wrapper_type) {
        /* pith._C._overridable(fn): the function layer in front of fn, which never runs
         * here: stand-ins are plain pith.Tensors, tensor arguments are guarded to be, and
         * compiled code does not run under a function mode (Note [Function layer]). */
        PyObject *fn = PyObject_GetAttrString(callable, "__wrapped__");
        PyObject *r = fn ? call_value(x, fn, args, nargs, kwnames) : NULL;
        Py_XDECREF(fn);
        return r;
    }
    if (PyFunction_Check(callable))
        return inline_function(x, (PyFunctionObject *)callable, args, nargs, kwnames);
    if (PyCFunction_Check(callable) && PyCFunction_GET_SELF(callable) &&
        is_tensor(x, PyCFunction_GET_SELF(callable))) {
        /* a bound C method of a stand-in: the metadata queries and the conversions */
        const char *name = ((PyCFunctionObject *)callable)->m_ml->ml_name;
        int which = conversion_of(name);
        if (which >= 0)
            return conversion_call(x, PyCFunction_GET_SELF(callable), which, args, nargs,
                                   kwnames);
        PyObject *uname = PyUnicode_FromString(name);
        bool query = uname && is_tensor_query(uname);
        Py_XDECREF(uname);
        if (!query)
            return fail(x, true, "Tensor.%s is not supported by pith.compile", name), NULL;
        PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, kwnames);
        if (!r)
            return fail_exception(x, "a tensor query"), NULL;
        return r;
    }
    if (PyCFunction_Check(callable))
        return call_builtin(x, callable, args, nargs, kwnames);
    if (PyType_Check(callable))
        return call_type(x, (PyTypeObject *)callable, args, nargs, kwnames);
    if (Py_TYPE(callable) == &PyMethodDescr_Type && nargs >= 1 && is_tensor(x, args[0])) {
        /* an unbound C method of Tensor, such as a metadata query reached by LOAD_METHOD */
        PyObject *name = PyDescr_NAME(callable);
        if (!is_tensor_query(name))
            return fail(x, true, "Tensor.%U is not supported by pith.compile", name), NULL;
        PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, kwnames);
        if (!r)
            return fail_exception(x, "a tensor query"), NULL;
        return r;
    }
    if (is_module(x, callable)) {
        /* m(x): type(m).__call__, inlined (pith.nn.Module.__call__ checks the hooks) */
        PyObject *call = type_lookup(x, Py_TYPE(callable), "__call__");
        PyObject *what = PyUnicode_FromString("a called module");
        int rc = what ? type_guard(x, callable, what) : -1;
        Py_XDECREF(what);
        if (rc < 0)
            return NULL;
        if (!call || !PyFunction_Check(call))
            return fail(x, true, "%s.__call__ is not a Python function",
                        Py_TYPE(callable)->tp_name),
                   NULL;
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        PyObject **all = PyMem_Malloc((size_t)(nargs + nkw + 1) * sizeof *all);
        if (!all)
            return PyErr_NoMemory();
        all[0] = callable;
        for (Py_ssize_t i = 0; i < nargs + nkw; i++)
            all[i + 1] = args[i];
        PyObject *r = inline_function(x, (PyFunctionObject *)call, all, nargs + 1, kwnames);
        PyMem_Free(all);
        return r;
    }
    return fail(x, true, "a call of a %s", Py_TYPE(callable)->tp_name), NULL;
}

/* An operator by its schema name, called with `args` and recorded. */
PyObject *record_op(tx *x, const char *name, PyObject *const *args, Py_ssize_t nargs)
{
    const pith_op *op = pith_op_find(name);
    PyObject *ov = op ? binder_overload_of(x->st, op) : NULL;
    if (!ov)
        return fail_exception(x, name), NULL;
    return record_call(x, ov, args, nargs, NULL);
}

