/* binder_errors.c — the TypeErrors of calls that match no overload, in PyTorch's words
 * (the function and the argument named, or every signature listed), and the signatures
 * that make each function's __doc__. See Note [One binder] (binder.c). */
#include <string.h>

#include "binder_internal.h"

/* "(a, b, c)" from a list of str (stolen); NULL with an exception. */
static PyObject *parenthesised(PyObject *parts)
{
    if (!parts)
        return NULL;
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(parts);
    if (!joined)
        return NULL;
    PyObject *text = PyUnicode_FromFormat("(%U)", joined);
    Py_DECREF(joined);
    return text;
}

/* How a signature names a parameter's type. */
static const char *python_type_name(pith_arg_type type)
{
    switch (type) {
    case PITH_TYPE_TENSOR: return "Tensor";
    case PITH_TYPE_OPT_TENSOR: return "Tensor";
    case PITH_TYPE_TENSOR_LIST: return "tuple of Tensors";
    case PITH_TYPE_LIST_OPT_TENSOR: return "tuple of (Tensor or None)";
    case PITH_TYPE_INT: case PITH_TYPE_OPT_INT: return "int";
    case PITH_TYPE_INT_LIST: case PITH_TYPE_OPT_INT_LIST: return "tuple of ints";
    case PITH_TYPE_FLOAT: case PITH_TYPE_OPT_FLOAT: return "float";
    case PITH_TYPE_BOOL: return "bool";
    case PITH_TYPE_SCALAR: case PITH_TYPE_OPT_SCALAR: return "Number";
    case PITH_TYPE_DTYPE: case PITH_TYPE_OPT_DTYPE: return "dtype";
    case PITH_TYPE_OPT_DEVICE: return "Device";
    case PITH_TYPE_STR: case PITH_TYPE_OPT_STR: return "str";
    case PITH_TYPE_FLOAT_LIST: case PITH_TYPE_OPT_FLOAT_LIST: return "tuple of floats";
    case PITH_TYPE_OPT_BOOL: return "bool";
    case PITH_TYPE_OPT_GENERATOR: return "Generator";
    case PITH_NUM_ARG_TYPES: break;
    }
    return "?";
}

/* The name a parameter has in the call's spelling (functions say input for self). */
static PyObject *param_display_name(pith_module_state *st, const overload_object *ov, int i,
                                    int mode)
{
    if (mode == MODE_FUNCTION && i == ov->self_index)
        return st->binder.str_input;
    return ov->params[i].name;
}

/* "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)" */
static PyObject *signature_text(pith_module_state *st, const overload_object *ov, int mode)
{
    PyObject *parts = PyList_New(0);
    bool star = false;
    for (int i = 0; parts && i < ov->nparams; i++) {
        const bind_param *p = &ov->params[i];
        if (mode == MODE_METHOD && i == ov->self_index)
            continue;
        PyObject *piece = NULL;
        if ((p->flags & PARAM_KWARG_ONLY) && !star) {
            star = true;
            piece = PyUnicode_FromString("*");
            if (!piece || PyList_Append(parts, piece) < 0)
                Py_CLEAR(parts);
            Py_XDECREF(piece);
            if (!parts)
                break;
        }
        const char *opt = type_is_optional(p->type) && p->type != PITH_TYPE_OPT_TENSOR &&
                                  p->type != PITH_TYPE_OPT_DEVICE && p->type != PITH_TYPE_OPT_DTYPE &&
                                  p->type != PITH_TYPE_OPT_GENERATOR
                              ? "?" : "";
        if (p->default_obj)
            piece = PyUnicode_FromFormat("%s%s %U = %R", python_type_name(p->type), opt,
                                         param_display_name(st, ov, i, mode), p->default_obj);
        else if (type_is_optional(p->type))
            piece = PyUnicode_FromFormat("%s%s %U = None", python_type_name(p->type), opt,
                                         param_display_name(st, ov, i, mode));
        else
            piece = PyUnicode_FromFormat("%s %U", python_type_name(p->type),
                                         param_display_name(st, ov, i, mode));
        if (!piece || PyList_Append(parts, piece) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(piece);
    }
    return parenthesised(parts);
}

/* "(Tensor, str, alpha=int)": what the call gave. */
static PyObject *given_text(const bind_call *call)
{
    PyObject *parts = PyList_New(0);
    Py_ssize_t nkw = call->kwnames ? PyTuple_GET_SIZE(call->kwnames) : 0;
    for (Py_ssize_t k = 0; parts && k < call->nargs + nkw; k++) {
        PyObject *v = call->args[k];
        const char *type = Py_TYPE(v)->tp_name;
        const char *dot = strrchr(type, '.');
        type = dot ? dot + 1 : type;
        PyObject *piece = k < call->nargs
                              ? PyUnicode_FromString(type)
                              : PyUnicode_FromFormat("%U=%s",
                                                     PyTuple_GET_ITEM(call->kwnames,
                                                                      k - call->nargs),
                                                     type);
        if (!piece || PyList_Append(parts, piece) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(piece);
    }
    return parenthesised(parts);
}

/* The position a parameter has in the call's spelling (methods do not count self). */
static int param_position(const overload_object *ov, int i, int mode)
{
    int pos = 0;
    for (int k = 0; k < i; k++)
        if (!(ov->params[k].flags & PARAM_KWARG_ONLY) &&
            !(mode == MODE_METHOD && k == ov->self_index))
            pos++;
    return pos;
}

static void raise_one(pith_module_state *st, PyObject *name, const overload_object *ov,
                      const bind_call *call, const bind_failure *why)
{
    switch (why->code) {
    case FAIL_NO_SELF:
        PyErr_Format(PyExc_TypeError, "%U(): %U has no argument named self to bind the tensor "
                     "to", name, ov->qualified);
        return;
    case FAIL_TOO_MANY:
        PyErr_Format(PyExc_TypeError, "%U() takes %d positional argument%s but %d %s given",
                     name, why->index, why->index == 1 ? "" : "s", why->given,
                     why->given == 1 ? "was" : "were");
        return;
    case FAIL_UNEXPECTED_KEYWORD:
        PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument '%U'", name,
                     why->keyword);
        return;
    case FAIL_DUPLICATE:
        PyErr_Format(PyExc_TypeError, "%U() got multiple values for argument '%U'", name,
                     param_display_name(st, ov, why->index, call->mode));
        return;
    case FAIL_MISSING: {
        /* PyTorch's wording, "arguments" for one and "argument" for several included. */
        PyObject *names = PyUnicode_FromString("");
        int count = 0;
        for (int k = 0; names && k < ov->nparams; k++) {
            if (!(why->missing & ((uint64_t)1 << k)))
                continue;
            PyObject *more = PyUnicode_FromFormat("%U%s\"%U\"", names, count ? ", " : "",
                                                  param_display_name(st, ov, k, call->mode));
            Py_SETREF(names, more);
            count++;
        }
        if (names)
            PyErr_Format(PyExc_TypeError, "%U() missing %d required positional argument%s: %U",
                         name, count, count == 1 ? "s" : "", names);
        Py_XDECREF(names);
        return;
    }
    case FAIL_OUT_TUPLE:
        PyErr_Format(PyExc_TypeError, "%U(): argument 'out' must be a tuple of %d Tensors",
                     name, ov->nout);
        return;
    case FAIL_TYPE: {
        const bind_param *p = &ov->params[why->index];
        const char *given = why->value == Py_None ? "NoneType" : Py_TYPE(why->value)->tp_name;
        if (tensor_check(st, why->value) && strrchr(given, '.'))
            given = strrchr(given, '.') + 1; /* "Tensor", as PyTorch's (not "pith.Tensor") */
        int position = param_position(ov, why->index, call->mode);
        /* PyTorch gives the position only of an argument given positionally */
        bool by_keyword = position >= call->nargs;
        if ((p->flags & PARAM_KWARG_ONLY) || by_keyword)
            PyErr_Format(PyExc_TypeError, "%U(): argument '%U' must be %s, not %s", name,
                         param_display_name(st, ov, why->index, call->mode),
                         python_type_name(p->type), given);
        else
            PyErr_Format(PyExc_TypeError,
                         "%U(): argument '%U' (position %d) must be %s, not %s", name,
                         param_display_name(st, ov, why->index, call->mode),
                         position + 1, python_type_name(p->type), given);
        return;
    }
    }
    PyErr_Format(PyExc_SystemError, "pith: binder failure %d", why->code);
}

void bind_raise(pith_module_state *st, PyObject *name, overload_object *const *overloads,
                Py_ssize_t n, const bind_call *call, const bind_failure *first)
{
    if (n == 1) {
        raise_one(st, name, overloads[0], call, first);
        return;
    }
    PyObject *given = given_text(call);
    PyObject *text = given ? PyUnicode_FromFormat("%U() received an invalid combination of "
                                                  "arguments - got %U, but expected one of:",
                                                  name, given)
                           : NULL;
    Py_XDECREF(given);
    for (Py_ssize_t i = 0; text && i < n; i++) {
        PyObject *sig = signature_text(st, overloads[i], call->mode);
        PyObject *line = sig ? PyUnicode_FromFormat("%U\n * %U", text, sig) : NULL;
        Py_XDECREF(sig);
        Py_SETREF(text, line);
    }
    if (text) {
        PyErr_SetObject(PyExc_TypeError, text);
        Py_DECREF(text);
    }
}

PyObject *binder_signatures(pith_module_state *st, overload_object *const *overloads,
                            Py_ssize_t n, int mode)
{
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list && i < n; i++) {
        PyObject *sig = signature_text(st, overloads[i], mode);
        if (!sig)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, sig);
    }
    return list;
}
