/* attributes.c — attribute reads of pith.compile's translator, done in C by the rules of
 * PyObject_GenericGetAttr with a guard on everything read (Note [Guard soundness]): a
 * module's and a plain object's attributes, a Python module's globals, and a stand-in
 * tensor's methods and metadata queries. */
#include <string.h>

#include "translate.h"

/* ---- attributes ---- */

/* base + sep + name, for str `base` and `name` and an ASCII `sep` (copied: a recompile
 * makes thousands of these labels, and PyUnicode_FromFormat parsed its format each time). */
static PyObject *name_join(PyObject *base, const char *sep, PyObject *name)
{
    if (!PyUnicode_Check(base) || !PyUnicode_Check(name))
        return PyUnicode_FromFormat("%S%s%S", base, sep, name);
    Py_ssize_t nb = PyUnicode_GET_LENGTH(base), ns = (Py_ssize_t)strlen(sep);
    Py_ssize_t nn = PyUnicode_GET_LENGTH(name);
    Py_UCS4 maxchar = Py_MAX(PyUnicode_MAX_CHAR_VALUE(base), PyUnicode_MAX_CHAR_VALUE(name));
    PyObject *r = PyUnicode_New(nb + ns + nn, Py_MAX(maxchar, 127));
    if (!r)
        return NULL;
    if (PyUnicode_CopyCharacters(r, 0, base, 0, nb) < 0)
        goto fail;
    for (Py_ssize_t i = 0; i < ns; i++)
        if (PyUnicode_WriteChar(r, nb + i, (Py_UCS4)(unsigned char)sep[i]) < 0)
            goto fail;
    if (PyUnicode_CopyCharacters(r, nb + ns, name, 0, nn) < 0)
        goto fail;
    return r;
fail:
    Py_DECREF(r);
    return NULL;
}

/* _PyType_Lookup by a C name (borrowed, or NULL). */
/* The interned str of the C literal `literal`, borrowed from the translation's cache (made
 * once per translation: interning on every lookup was 8% of a recompile), or NULL with an
 * exception. A literal beyond the cache's room is interned into x->keep. */
static PyObject *tx_name(tx *x, const char *literal)
{
    for (int i = 0; i < x->nnames; i++)
        if (x->names[i].literal == literal)
            return x->names[i].name;
    PyObject *key = PyUnicode_InternFromString(literal);
    if (!key)
        return NULL;
    if (x->nnames < (int)(sizeof x->names / sizeof x->names[0])) {
        x->names[x->nnames].literal = literal;
        x->names[x->nnames++].name = key;
        return key;
    }
    int rc = PyList_Append(x->keep, key);
    Py_DECREF(key);
    return rc < 0 ? NULL : key;
}

/* tp's attribute `name` (a C literal), borrowed, or NULL. */
PyObject *type_lookup(tx *x, PyTypeObject *tp, const char *name)
{
    PyObject *key = tx_name(x, name);
    if (!key) {
        PyErr_Clear();
        return NULL;
    }
    return _PyType_Lookup(tp, key);
}

/* The instance dict of `obj` (borrowed) with its GUARD_OBJ_DICT, NULL when it has none. */
static PyObject *instance_dict(tx *x, PyObject *obj, PyObject *what, int *err)
{
    *err = 0;
    PyObject **dictptr = _PyObject_GetDictPtr(obj);
    if (!dictptr || !*dictptr)
        return NULL;
    PyObject *dict = *dictptr;
    if (!PyDict_CheckExact(dict)) {
        *err = fail(x, true, "%U has a __dict__ that is not a dict", what);
        return NULL;
    }
    if (guard_find(x, GUARD_OBJ_DICT, obj))
        return dict;
    guard *gd = guard_add_keyed(x, GUARD_OBJ_DICT, obj);
    if (!gd) {
        *err = -1;
        return NULL;
    }
    guard_subject(x, gd, obj);
    gd->aux = Py_NewRef(dict);
    gd->name = Py_NewRef(what);
    return dict;
}

/* Module.__getattr__'s lookup in _parameters, _buffers and _modules, done here. */
static PyObject *module_registered(tx *x, PyObject *obj, PyObject *dict, PyObject *name,
                                   PyObject *what)
{
    static const char *const tables[] = {"_parameters", "_buffers", "_modules"};
    for (int k = 0; k < 3; k++) {
        PyObject *key = tx_name(x, tables[k]);
        if (!key)
            return NULL;
        int err;
        PyObject *table = dict_read(x, dict, key, what, &err);
        if (err < 0)
            return NULL;
        if (!table)
            continue;
        if (!PyDict_CheckExact(table))
            return fail(x, true, "%U.%s is not a dict", what, tables[k]), NULL;
        PyObject *label = name_join(what, ".", name);
        if (!label)
            return NULL;
        PyObject *v = dict_read(x, table, name, label, &err);
        if (err < 0 || !v) {
            Py_DECREF(label);
            if (err < 0)
                return NULL;
            continue;
        }
        PyObject *result;
        if (k < 2 && v != Py_None)
            result = param_value(x, v, label);
        else
            result = Py_NewRef(v);
        Py_DECREF(label);
        return result;
    }
    (void)obj;
    PyObject *label = name_join(what, ".", name);
    if (label)
        attribute_missing(x, label);
    Py_XDECREF(label);
    return NULL;
}

/* The frame argument slot that holds `obj`, or -1: guards on an argument read it from the
 * frame rather than holding it (a module argument is held weakly). */
int argument_slot(tx *x, PyObject *obj)
{
    PyCodeObject *co = x->req->code;
    int nargs = co->co_argcount + co->co_kwonlyargcount;
    for (int i = 0; i < nargs; i++)
        if (x->req->localsplus[i] == obj)
            return i;
    return -1;
}

/* Points a guard at `obj`: the frame slot of an argument, or a strong reference. */
void guard_subject(tx *x, guard *gd, PyObject *obj)
{
    gd->at.local = argument_slot(x, obj);
    if (gd->at.local < 0)
        gd->obj = Py_NewRef(obj);
}

/* obj.name by the rules of PyObject_GenericGetAttr, with guards, for a module or any
 * object whose type keeps the generic lookup: a new reference, or NULL with the failure. */
static PyObject *generic_getattr(tx *x, PyObject *obj, PyObject *name, PyObject *what)
{
    PyTypeObject *tp = Py_TYPE(obj);
    PyObject *label = name_join(what, ".", name);
    if (!label)
        return NULL;
    PyObject *result = NULL;
    bool module_getattr = false;
    if (tp->tp_getattro != PyObject_GenericGetAttr) {
        /* A class that defines __getattr__ gets slot_tp_getattr_hook: generic lookup, then
         * __getattr__. Only pith.nn.Module's __getattr__, over object.__getattribute__. */
        PyObject *ga = type_lookup(x, tp, "__getattribute__");
        PyObject *gat = type_lookup(x, tp, "__getattr__");
        if (ga != type_lookup(x, &PyBaseObject_Type, "__getattribute__") ||
            gat != x->req->module_getattr) {
            fail(x, true, "%U: the type %s customises attribute lookup", label, tp->tp_name);
            goto done;
        }
        module_getattr = true;
    }
    PyObject *descr = _PyType_Lookup(tp, name); /* first: it sets the version tag */
    if (type_guard(x, obj, what) < 0)
        goto done;
    if (descr && Py_TYPE(descr)->tp_descr_set) {
        if (PyObject_TypeCheck(descr, &PyProperty_Type))
            fail(x, true, "%U is a property", label);
        else
            fail(x, true, "%U is a data descriptor (%s)", label, Py_TYPE(descr)->tp_name);
        goto done;
    }
    int err;
    PyObject *dict = instance_dict(x, obj, what, &err);
    if (err < 0)
        goto done;
    if (dict) {
        PyObject *v = dict_read(x, dict, name, label, &err);
        if (err < 0)
            goto done;
        if (v) {
            result = outside_value(x, v, label);
            goto done;
        }
    }
    if (descr) {
        if (PyFunction_Check(descr))
            result = PyMethod_New(descr, obj);
        else if (!Py_TYPE(descr)->tp_descr_get)
            result = outside_value(x, descr, label);
        else
            fail(x, true, "%U is a %s", label, Py_TYPE(descr)->tp_name);
        goto done;
    }
    if (module_getattr && dict) {
        result = module_registered(x, obj, dict, name, what);
        goto done;
    }
    attribute_missing(x, label);
done:
    Py_DECREF(label);
    return result;
}

/* Queries of a tensor's metadata that read nothing but its sizes, strides and dtype:
 * evaluated on the stand-in, whose metadata the guards fix. */
static const char *const tensor_queries[] = {
    "shape", "dtype", "ndim", "device", "dim", "size", "numel", "stride", "is_contiguous",
    "element_size", "nelement", "ndimension", "is_floating_point", "is_complex", "layout",
    "is_cuda", "is_meta", "is_sparse", "requires_grad", "is_leaf", "grad_fn", NULL,
};

bool is_tensor_query(PyObject *name)
{
    for (int i = 0; tensor_queries[i]; i++)
        if (PyUnicode_CompareWithASCIIString(name, tensor_queries[i]) == 0)
            return true;
    return false;
}

/* x.float() & co. (conversions.c, no operators themselves): the dtype a conversion method
 * converts to, or -1; `to` answers PITH_NUM_DTYPES (x.to(dtype) only). */
int conversion_of(const char *name)
{
#define CONVERSION_(method, dtype)                                                          \
    if (strcmp(name, #method) == 0)                                                         \
        return dtype;
    PITH_FORALL_DTYPE_CONVERSIONS(CONVERSION_)
#undef CONVERSION_
    return strcmp(name, "to") == 0 ? PITH_NUM_DTYPES : -1;
}


PyObject *tensor_getattr(tx *x, PyObject *v, PyObject *name)
{
    PyTypeObject *tp = Py_TYPE(v);
    PyObject *descr = _PyType_Lookup(tp, name);
    /* Tensor's methods can be reassigned (pith.Tensor.relu = ...): its version tag too */
    if (!guard_find(x, GUARD_TYPE_VERSION, tp)) {
        if (!PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) || tp->tp_version_tag == 0)
            return fail(x, false, "the type %s has no version tag", tp->tp_name), NULL;
        guard *gd = guard_add_keyed(x, GUARD_TYPE_VERSION, tp);
        if (!gd)
            return NULL;
        gd->aux = Py_NewRef((PyObject *)tp);
        gd->name = PyUnicode_FromString(tp->tp_name);
        gd->version = tp->tp_version_tag;
        if (!gd->name)
            return NULL;
    }
    /* What a parameter's stand-in reads from the type, the parameter's own attributes would
     * shadow: it must have none, now and at every call (GUARD_PARAM's flag). Arguments are
     * refused with attributes, and guarded so (GUARD_TENSOR). */
    PyObject *sid = PyLong_FromVoidPtr(v);
    PyObject *param = sid ? PyDict_GetItemWithError(x->standin_params, sid) : NULL;
    Py_XDECREF(sid);
    if (PyErr_Occurred())
        return NULL;
    if (param) {
        if (tensor_has_attributes(param))
            return fail(x, false, "the attribute %U of a tensor with instance attributes",
                        name), NULL;
        for (int i = 0; i < x->nguards; i++)
            if (x->guards[i].kind == GUARD_PARAM && x->guards[i].obj == param)
                x->guards[i].flag = true;
    }
    if (!descr)
        return attribute_missing(x, name), NULL; /* the type's version tag is guarded */
    if (Py_TYPE(descr) == x->st->binder.method_type)
        return PyMethod_New(descr, v);
    if (PyFunction_Check(descr) || Py_TYPE(descr) == x->st->function.wrapper_type)
        return PyMethod_New(descr, v); /* a Python method (behind pith._C._overridable) */
    const char *cname = PyUnicode_AsUTF8(name);
    if (!cname)
        return NULL;
    /* A stand-in is a Meta tensor; what it stands for is on the CPU (arguments and
     * parameters on other devices are refused). */
    if (strcmp(cname, "device") == 0)
        return device_object(x->st, PITH_CPU);
    if (strcmp(cname, "is_meta") == 0 || strcmp(cname, "is_cuda") == 0)
        return Py_NewRef(Py_False);
    if (is_tensor_query(name) || conversion_of(cname) >= 0) {
        PyObject *r = PyObject_GetAttr(v, name);
        if (!r)
            return fail_exception(x, "a tensor query"), NULL;
        if (PyCFunction_Check(r) || PyMethod_Check(r) ||
            Py_TYPE(r) == &PyMethodDescr_Type || is_plain(x, r, 0) ||
            Py_IS_TYPE(r, x->st->device_type) || Py_IS_TYPE(r, x->st->dtype_type))
            return r;
        Py_DECREF(r);
        return fail(x, true, "Tensor.%U gave an unexpected value", name), NULL;
    }
    return fail(x, true, "Tensor.%U (a %s) is not supported by pith.compile", name,
                Py_TYPE(descr)->tp_name),
           NULL;
}

PyObject *load_attr(tx *x, PyObject *obj, PyObject *name)
{
    if (is_tensor(x, obj))
        return tensor_getattr(x, obj, name);
    if (PyModule_CheckExact(obj)) {
        PyObject *dict = PyModule_GetDict(obj);
        PyObject *modname = PyModule_GetNameObject(obj);
        if (!modname)
            return NULL;
        PyObject *label = name_join(modname, ".", name);
        Py_DECREF(modname);
        if (!label)
            return NULL;
        int err;
        PyObject *v = dict_read(x, dict, name, label, &err);
        if (!v && err == 0)
            attribute_missing(x, label);
        PyObject *r = v ? outside_value(x, v, label) : NULL;
        Py_DECREF(label);
        return r;
    }
    if (is_module(x, obj) || (Py_TYPE(obj)->tp_getattro == PyObject_GenericGetAttr &&
                               !PyType_Check(obj) && _PyObject_GetDictPtr(obj))) {
        /* a module, or an object of a plain class (a config, a dataclass): the generic
         * lookup, done here */
        PyObject *what = PyUnicode_FromString(Py_TYPE(obj)->tp_name);
        if (!what)
            return NULL;
        PyObject *r = generic_getattr(x, obj, name, what);
        Py_DECREF(what);
        return r;
    }
    if ((PyDict_Check(obj) || PyList_CheckExact(obj)) && container_method(x, obj, name))
        return PyObject_GetAttr(obj, name); /* a C method: container_call evaluates it */
    if (PyTuple_CheckExact(obj) || Py_IS_TYPE(obj, x->st->size_type) ||
        Py_IS_TYPE(obj, x->st->dtype_type)) {
        PyObject *r = PyObject_GetAttr(obj, name);
        if (!r)
            return fail_exception(x, "an attribute"), NULL;
        return r;
    }
    return fail(x, true, "attribute '%U' of a %s", name, Py_TYPE(obj)->tp_name), NULL;
}

