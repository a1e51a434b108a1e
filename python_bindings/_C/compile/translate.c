/* translate.c — pith.compile's translator: the state of one translation (its failure,
 * the objects it made, what kind of value a Python object is), and translate_frame, which
 * evaluates a frame's 3.11 bytecode symbolically over stand-in tensors (eval.c) and builds
 * a cache entry: a compiled graph, the guards under which it answers the frame (guards.c),
 * and how its outputs make the frame's result. The hook (hook.c) calls it on a miss. */
#include <string.h>

#include "translate.h"

/* ---- failure ---- */

int fail(tx *x, bool permanent, const char *fmt, ...)
{
    translate_failure *why = x->why;
    if (why->reason[0])
        return -1;
    /* PyUnicode_FromFormatV: the reasons quote Python objects (%U, %R) */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    va_list ap;
    va_start(ap, fmt);
    PyObject *text = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    snprintf(why->reason, sizeof why->reason, "%s", utf8 ? utf8 : fmt);
    Py_XDECREF(text);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    why->permanent = permanent;
    if (x->code) {
        Py_XSETREF(why->filename, Py_NewRef(x->code->co_filename));
        why->line = PyCode_Addr2Line(x->code, x->pc * (int)sizeof(_Py_CODEUNIT));
    }
    return -1;
}

/* An attribute that is not there (its absence guarded by the reads that found nothing):
 * the failure, or for getattr(o, name, default) and hasattr, the answer. */
int attribute_missing(tx *x, PyObject *label)
{
    if (x->absent_ok) {
        x->absent = true;
        return -1;
    }
    return fail(x, false, "%U is missing (AttributeError)", label);
}

/* A Python exception raised while translating (a Meta kernel's shape error, a TypeError of
 * the binder) becomes the reason, and the frame runs eagerly, where it raises again. Not
 * permanent: other arguments may translate. */
int fail_exception(tx *x, const char *what)
{
    if (PyErr_ExceptionMatches(PyExc_MemoryError))
        return -1; /* the process's problem: it propagates */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!msg)
        PyErr_Clear();
    fail(x, false, "%s raised %s: %s", what,
         type ? ((PyTypeObject *)type)->tp_name : "an exception", msg ? msg : "");
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return -1;
}


bool is_fresh(tx *x, PyObject *obj)
{
    PyObject *id = PyLong_FromVoidPtr(obj);
    if (!id)
        return false;
    int rc = PySet_Contains(x->fresh, id);
    Py_DECREF(id);
    return rc == 1;
}

/* Marks `obj`, which the translation made, as its own: its content needs no guard. */
PyObject *make_fresh(tx *x, PyObject *obj)
{
    if (!obj)
        return NULL;
    PyObject *id = PyLong_FromVoidPtr(obj);
    if (!id || PySet_Add(x->fresh, id) < 0 || PyList_Append(x->keep, obj) < 0) {
        Py_XDECREF(id);
        Py_DECREF(obj);
        return NULL;
    }
    Py_DECREF(id);
    return obj;
}

/* ---- values ---- */

/* Whether a tensor object has instance attributes (x.foo = 1), which would shadow what the
 * translator reads from the type. */
bool tensor_has_attributes(PyObject *v)
{
    PyObject *d = ((pith_tensor_object *)v)->dict;
    return d && PyDict_GET_SIZE(d) != 0;
}

/* Values that evaluating builtins on cannot run user code: scalars, pith dtypes, and
 * tuples, lists and pith.Size of them. */
bool is_plain(tx *x, PyObject *v, int depth)
{
    if (is_scalar(v) || Py_IS_TYPE(v, x->st->dtype_type) || v == Py_Ellipsis ||
        PySlice_Check(v))
        return true;
    if (PyList_CheckExact(v) && list_read_all(x, v) < 0) {
        PyErr_Clear(); /* not plain: the caller refuses it */
        return false;
    }
    if (depth < 4 && (PyTuple_Check(v) || PyList_CheckExact(v)) &&
        (PyTuple_CheckExact(v) || PyList_CheckExact(v) ||
         Py_IS_TYPE(v, x->st->size_type))) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        for (Py_ssize_t i = 0; i < n; i++)
            if (!is_plain(x, PySequence_Fast_GET_ITEM(v, i), depth + 1))
                return false;
        return true;
    }
    return false;
}

/* The type of what `v` stands for: a parameter's stand-in is a plain Tensor, and
 * type(p) and isinstance(p, nn.Parameter) must see the parameter's type. */
PyTypeObject *value_type(tx *x, PyObject *v)
{
    if (!is_tensor(x, v))
        return Py_TYPE(v);
    PyObject *id = PyLong_FromVoidPtr(v);
    PyObject *tp = id ? PyDict_GetItemWithError(x->standin_types, id) : NULL;
    Py_XDECREF(id);
    PyErr_Clear();
    return tp ? (PyTypeObject *)tp : Py_TYPE(v);
}

bool is_module(tx *x, PyObject *v)
{
    return PyObject_TypeCheck(v, (PyTypeObject *)x->req->module_class);
}

/* ---- the result ---- */

static void tmpl_clear(tmpl *t)
{
    Py_CLEAR(t->value);
    Py_CLEAR(t->at.key);
    for (int i = 0; i < t->n; i++)
        tmpl_clear(&t->items[i]);
    PyMem_Free(t->items);
    t->items = NULL;
    t->n = 0;
}

static int tmpl_build(tx *x, PyObject *v, tmpl *t, int depth)
{
    memset(t, 0, sizeof *t);
    if (is_tensor(x, v)) {
        PyObject *id = PyLong_FromVoidPtr(v);
        if (!id)
            return -1;
        PyObject *which = PyDict_GetItemWithError(x->input_standins, id);
        Py_DECREF(id);
        if (which) {
            /* the frame returns an argument itself: eager returns the same object */
            t->kind = TMPL_LOCAL;
            t->at = x->inputs[PyLong_AsLong(which)];
            Py_XINCREF(t->at.key);
            return 0;
        }
        if (PyErr_Occurred())
            return -1;
        id = PyLong_FromVoidPtr(v);
        PyObject *param = id ? PyDict_GetItemWithError(x->standin_params, id) : NULL;
        PyObject *known = id && !param ? PyDict_GetItemWithError(x->output_ids, id) : NULL;
        if (PyErr_Occurred()) {
            Py_XDECREF(id);
            return -1;
        }
        if (param) {
            /* a parameter, buffer or outside tensor itself: eager returns that object,
             * which the guards fix */
            Py_DECREF(id);
            t->kind = TMPL_CONST;
            t->value = Py_NewRef(param);
            return 0;
        }
        if (known) {
            /* the same value again: the same object, as eager returns */
            Py_DECREF(id);
            t->kind = TMPL_OUTPUT;
            t->index = (int)PyLong_AsLong(known);
            return 0;
        }
        if (pith_graph_output(x->g, tensor_of(v)) != PITH_OK) {
            Py_DECREF(id);
            return fail(x, false, "the result is a tensor the graph cannot return: %s",
                        pith_last_error());
        }
        t->kind = TMPL_OUTPUT;
        t->index = x->noutputs++;
        PyObject *index = PyLong_FromLong(t->index);
        int rc = index ? PyDict_SetItem(x->output_ids, id, index) : -1;
        Py_XDECREF(index);
        Py_DECREF(id);
        return rc;
    }
    if ((PyTuple_CheckExact(v) || PyList_CheckExact(v)) && depth < 8) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        t->kind = PyTuple_CheckExact(v) ? TMPL_TUPLE : TMPL_LIST;
        t->items = PyMem_Calloc((size_t)n + 1, sizeof *t->items);
        if (!t->items) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            t->n = (int)i + 1;
            if (tmpl_build(x, PySequence_Fast_GET_ITEM(v, i), &t->items[i], depth + 1) < 0)
                return -1;
        }
        return 0;
    }
    if (is_scalar(v) || Py_IS_TYPE(v, x->st->dtype_type) ||
        (PyTuple_CheckExact(v) && is_plain(x, v, 0))) {
        t->kind = TMPL_CONST;
        t->value = Py_NewRef(v);
        return 0;
    }
    if (is_fresh(x, v) && !PyTuple_CheckExact(v) && !PyList_CheckExact(v))
        return fail(x, true, "the frame returns a %s it made", Py_TYPE(v)->tp_name);
    int slot = argument_slot(x, v);
    if (slot >= 0) {
        t->kind = TMPL_LOCAL;
        t->at.local = slot;
        t->at.index = -1;
        return 0;
    }
    if (is_module(x, v) || PyModule_Check(v) || PyFunction_Check(v) || PyType_Check(v)) {
        /* an object the guards fix (an argument, a global, an attribute): returned as is */
        t->kind = TMPL_CONST;
        t->value = Py_NewRef(v);
        return 0;
    }
    return fail(x, true, "the frame returns a %s", Py_TYPE(v)->tp_name);
}


void compile_entry_free(compile_entry *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->nguards; i++)
        guard_clear(&e->guards[i]);
    PyMem_Free(e->guards);
    for (int i = 0; i < e->ninputs; i++)
        Py_XDECREF(e->inputs[i].key);
    PyMem_Free(e->inputs);
    pith_compiled_free(e->compiled);
    tmpl_clear(&e->result);
    Py_XDECREF(e->func);
    PyMem_Free(e);
}

/* The state of a translation of `req`: 0, or -1 with an exception (tx_clear frees what was
 * made either way). */
static int tx_init(tx *x, const translate_request *req, translate_failure *why)
{
    memset(x, 0, sizeof *x);
    x->req = req;
    x->st = req->st;
    x->why = why;
    x->code = req->code;
    x->g = pith_graph_new();
    x->param_standins = PyDict_New();
    x->input_standins = PyDict_New();
    x->standin_types = PyDict_New();
    x->standin_params = PyDict_New();
    x->output_ids = PyDict_New();
    x->fresh = PySet_New(NULL);
    x->shadow_cells = PySet_New(NULL);
    x->keep = PyList_New(0);
    if (!x->g || !x->param_standins || !x->input_standins || !x->standin_types ||
        !x->standin_params || !x->output_ids || !x->shadow_cells || !x->fresh || !x->keep) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void tx_clear(tx *x)
{
    for (int i = 0; i < x->nguards; i++)
        guard_clear(&x->guards[i]);
    PyMem_Free(x->guards);
    PyMem_Free(x->guard_index);
    for (int i = 0; i < x->nnames; i++)
        Py_DECREF(x->names[i].name);
    for (int i = 0; i < x->ninputs; i++)
        Py_XDECREF(x->inputs[i].key);
    PyMem_Free(x->inputs);
    Py_XDECREF(x->param_standins);
    Py_XDECREF(x->input_standins);
    Py_XDECREF(x->standin_types);
    Py_XDECREF(x->standin_params);
    Py_XDECREF(x->output_ids);
    Py_XDECREF(x->fresh);
    Py_XDECREF(x->shadow_cells);
    Py_XDECREF(x->keep);
    pith_graph_free(x->g);
}

/* The guards every entry has (grad mode, the default dtype), and the symbolic values of
 * the frame's arguments in f's locals: 0, or -1 with the failure. */
static int frame_arguments(tx *x, sframe *f)
{
    guard *gd = guard_add(x, GUARD_GRAD_MODE);
    if (!gd)
        return -1;
    gd->flag = pith_grad_enabled();
    gd = guard_add(x, GUARD_DEFAULT_DTYPE);
    if (!gd)
        return -1;
    gd->dtype = pith_get_default_dtype();
    /* The arguments: every slot the call filled (the rest are NULL, or cells not yet made,
     * which hold the argument itself before MAKE_CELL runs: Note [The frame hook]). */
    PyCodeObject *co = x->req->code;
    int nargs = co->co_argcount + co->co_kwonlyargcount + !!(co->co_flags & CO_VARARGS) +
                !!(co->co_flags & CO_VARKEYWORDS);
    for (int i = 0; i < nargs; i++) {
        PyObject *v = x->req->localsplus[i];
        if (!v)
            continue;
        arg_path at = {i, -1, NULL};
        f->locals[i] = argument_value(x, at, v, PyTuple_GET_ITEM(co->co_localsplusnames, i), 0);
        if (!f->locals[i])
            return -1;
    }
    return 0;
}

/* Note [Guard soundness]: when the graph writes in place, its inputs must not share
 * memory, which the graph assumes; checked now and at every call (GUARD_NO_ALIAS). 0, or
 * -1 with the failure. */
static int inputs_alias_guard(tx *x)
{
    if (!x->mutates || x->ninputs < 2)
        return 0;
    PyObject **localsplus = x->req->localsplus;
    for (int i = 0; i < x->ninputs; i++)
        for (int j = 0; j < i; j++)
            if (pith_shares_storage(tensor_of(access_get(localsplus, &x->inputs[i])),
                                    tensor_of(access_get(localsplus, &x->inputs[j]))))
                return fail(x, false, "tensor arguments share memory and the frame writes in "
                            "place");
    return guard_add(x, GUARD_NO_ALIAS) ? 0 : -1;
}

/* The entry for the frame's result `r`: its template, the compiled graph, and the guards
 * and inputs taken from the translation; NULL with the failure. */
static compile_entry *entry_build(tx *x, PyObject *r)
{
    compile_entry *e = PyMem_Calloc(1, sizeof *e);
    if (!e) {
        PyErr_NoMemory();
        return NULL;
    }
    if (tmpl_build(x, r, &e->result, 0) < 0)
        goto fail_entry;
    e->noutputs = x->noutputs;
    e->compiled = pith_graph_compile(x->g, NULL);
    if (!e->compiled) {
        fail(x, false, "pith_graph_compile: %s", pith_last_error());
        goto fail_entry;
    }
    if (inputs_alias_guard(x) < 0)
        goto fail_entry;
    e->guards = x->guards;
    e->nguards = x->nguards;
    x->guards = NULL;
    x->nguards = 0;
    e->inputs = x->inputs;
    e->ninputs = x->ninputs;
    x->inputs = NULL;
    x->ninputs = 0;
    e->work = x->work;
    e->func = PyWeakref_NewRef((PyObject *)x->req->func, NULL);
    if (!e->func)
        goto fail_entry;
    return e;
fail_entry:
    compile_entry_free(e);
    return NULL;
}

compile_entry *translate_frame(const translate_request *req, translate_failure *why)
{
    tx x;
    sframe f = {0};
    compile_entry *e = NULL;
    if (tx_init(&x, req, why) < 0 || sframe_init(&f, req->func, req->code) < 0 ||
        frame_arguments(&x, &f) < 0)
        goto done;
    PyObject *r = eval_frame(&x, &f);
    x.code = req->code;
    if (!r)
        goto done;
    e = entry_build(&x, r);
    Py_DECREF(r);
done:
    if (!e && !PyErr_Occurred() && !why->reason[0])
        fail(&x, true, "the translation failed");
    if (!e && PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_MemoryError))
        fail_exception(&x, "the translation");
    sframe_clear(&f);
    tx_clear(&x);
    return e;
}
