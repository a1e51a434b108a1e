/* eval.c — the bytecode evaluator of pith.compile's translator: each 3.11 instruction of
 * a frame evaluated symbolically over its frame state (frame_state.c) by a handler of its
 * opcode. Operators, truth, iteration and subscripts are operators.c's, calls calls.c's,
 * attributes attributes.c's. */
#include <string.h>

#include <opcode.h>

#include "translate.h"

#define POP() (f->stack[--f->sp])
#define TOP() (f->stack[f->sp - 1])
#define PEEK(n) (f->stack[f->sp - (n)])

static PyObject *global_read(tx *x, sframe *f, PyObject *name)
{
    if (!PyDict_CheckExact(f->globals) || !PyDict_CheckExact(f->builtins))
        return fail(x, true, "globals or builtins are not a dict"), NULL;
    PyObject *what = PyUnicode_FromFormat("global %U", name);
    if (!what)
        return NULL;
    int err;
    PyObject *v = dict_read(x, f->globals, name, what, &err);
    if (!v && err == 0) {
        v = dict_read(x, f->builtins, name, what, &err);
        if (!v && err == 0)
            fail(x, false, "name '%U' is not defined", name);
    }
    PyObject *r = v ? outside_value(x, v, what) : NULL;
    Py_DECREF(what);
    return r;
}

/* ---- bytecode ---- */

static PyObject *opname(int op)
{
    PyObject *mod = PyImport_ImportModule("opcode");
    PyObject *names = mod ? PyObject_GetAttrString(mod, "opname") : NULL;
    Py_XDECREF(mod);
    PyObject *r = names ? PySequence_GetItem(names, op) : NULL;
    Py_XDECREF(names);
    if (!r) {
        PyErr_Clear();
        r = PyUnicode_FromFormat("opcode %d", op);
    }
    return r;
}

static int unsupported_opcode(tx *x, int op)
{
    PyObject *name = opname(op);
    if (!name)
        return -1;
    fail(x, true, "the bytecode %U is not supported by pith.compile", name);
    Py_DECREF(name);
    return -1;
}

/* ---- the instructions ---- */

/* Each handler evaluates one instruction of the frame `f` (f->pc): 0 to go on at f->next
 * (the next instruction unless it jumps), 1 to return the value on top of the stack, or
 * -1 with the failure. */
typedef int (*op_handler)(tx *x, sframe *f, int op, int arg);

static int op_nothing(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)f, (void)op, (void)arg;
    return 0;
}

static int op_extended_arg(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)op;
    f->extended = arg << 8;
    return 0;
}

/* ---- cells and closures ---- */

static int op_make_cell(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    /* a cell of this frame: the translation's own, which inner functions share */
    PyObject *cell = make_fresh(x, PyCell_New(f->locals[arg]));
    if (!cell)
        return -1;
    Py_XSETREF(f->locals[arg], cell);
    return 0;
}

/* Free variable `i` of COPY_FREE_VARS's `n`, from the outside cell `cell`, into its slot. */
static int free_var_copy(tx *x, sframe *f, PyObject *cell, int i, int n)
{
    int slot = f->nlocals - n + i;
    if (is_fresh(x, cell)) {
        /* a cell of a translated frame, shared with this inner function */
        Py_XSETREF(f->locals[slot], Py_NewRef(cell));
        return 0;
    }
    PyObject *v = PyCell_GET(cell);
    if (!v)
        return fail(x, false, "a free variable is unbound");
    guard *gd = guard_add(x, GUARD_CELL);
    if (!gd)
        return -1;
    gd->obj = Py_NewRef(cell);
    gd->aux = Py_NewRef(v);
    gd->name = PyUnicode_FromFormat(
        "free variable %U", PyTuple_GET_ITEM(f->code->co_localsplusnames, slot));
    if (!gd->name)
        return -1;
    /* a shadow of the outside cell, holding what the translation reads from it;
     * writing it would be a nonlocal write, which STORE_DEREF refuses */
    PyObject *sv = outside_value(x, v, gd->name);
    PyObject *shadow = sv ? make_fresh(x, PyCell_New(sv)) : NULL;
    Py_XDECREF(sv);
    PyObject *sid = shadow ? PyLong_FromVoidPtr(shadow) : NULL;
    if (!sid || PySet_Add(x->shadow_cells, sid) < 0) {
        Py_XDECREF(sid);
        Py_XDECREF(shadow);
        return -1;
    }
    Py_DECREF(sid);
    Py_XSETREF(f->locals[slot], shadow);
    return 0;
}

static int op_copy_free_vars(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *closure = f->func->func_closure;
    if (!closure || PyTuple_GET_SIZE(closure) != arg)
        return fail(x, true, "the closure does not match the code");
    for (int i = 0; i < arg; i++)
        if (free_var_copy(x, f, PyTuple_GET_ITEM(closure, i), i, arg) < 0)
            return -1;
    return 0;
}

static int op_load_deref(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *cell = f->locals[arg];
    PyObject *v = cell && PyCell_Check(cell) ? PyCell_GET(cell) : NULL;
    if (!v)
        return fail(x, false, "a free or cell variable is unbound");
    return push(x, f, Py_NewRef(v));
}

static int op_load_closure(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    if (!f->locals[arg] || !PyCell_Check(f->locals[arg]))
        return fail(x, true, "a closure of a variable without a cell");
    return push(x, f, Py_NewRef(f->locals[arg]));
}

static int op_store_deref(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *cell = f->locals[arg], *v = POP();
    PyObject *sid = cell ? PyLong_FromVoidPtr(cell) : NULL;
    int shadow = sid ? PySet_Contains(x->shadow_cells, sid) : -1;
    Py_XDECREF(sid);
    if (!cell || !PyCell_Check(cell) || shadow != 0) {
        Py_DECREF(v);
        if (shadow > 0 || !cell)
            fail(x, true, "a write to a variable of an enclosing function (nonlocal)");
        return -1;
    }
    int rc = PyCell_Set(cell, v);
    Py_DECREF(v);
    return rc < 0 ? -1 : 0;
}

static int op_make_function(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    /* a nested function or lambda: a function of the translation's own, whose
     * calls are inlined like any other */
    PyObject *code = POP();
    PyObject *closure = arg & 0x08 ? POP() : NULL;
    PyObject *annotations = arg & 0x04 ? POP() : NULL;
    PyObject *kwdefaults = arg & 0x02 ? POP() : NULL;
    PyObject *defaults = arg & 0x01 ? POP() : NULL;
    PyObject *fn = PyCode_Check(code) ? PyFunction_New(code, f->globals) : NULL;
    int rc = fn ? 0 : -1;
    if (fn && closure)
        rc = PyFunction_SetClosure(fn, closure);
    if (fn && rc == 0 && defaults)
        rc = PyFunction_SetDefaults(fn, defaults);
    if (fn && rc == 0 && kwdefaults)
        rc = PyFunction_SetKwDefaults(fn, kwdefaults);
    Py_DECREF(code);
    Py_XDECREF(closure);
    Py_XDECREF(annotations);
    Py_XDECREF(kwdefaults);
    Py_XDECREF(defaults);
    if (rc < 0) {
        Py_XDECREF(fn);
        return -1;
    }
    return push(x, f, make_fresh(x, fn));
}

/* ---- locals, constants and globals ---- */

static int op_load_fast(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *v = f->locals[arg];
    if (!v)
        return fail(x, false, "a local is unbound");
    return push(x, f, Py_NewRef(v));
}

static int op_store_fast(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)op;
    Py_XSETREF(f->locals[arg], POP());
    return 0;
}

static int op_delete_fast(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)op;
    Py_CLEAR(f->locals[arg]);
    return 0;
}

static int op_load_const(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    return push(x, f, Py_NewRef(PyTuple_GET_ITEM(f->code->co_consts, arg)));
}

/* A NULL on the stack (below a callable that is not a method). */
static int push_null(tx *x, sframe *f)
{
    if (f->sp >= f->cap)
        return fail(x, true, "the value stack overflowed");
    f->stack[f->sp++] = NULL;
    return 0;
}

static int op_load_global(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *name = PyTuple_GET_ITEM(f->code->co_names, arg >> 1);
    PyObject *v = global_read(x, f, name);
    if (!v)
        return -1;
    if ((arg & 1) && push_null(x, f) < 0) {
        Py_DECREF(v);
        return -1;
    }
    return push(x, f, v);
}

static int op_push_null(tx *x, sframe *f, int op, int arg)
{
    (void)op, (void)arg;
    return push_null(x, f);
}

/* ---- attributes ---- */

static int op_load_attr(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *obj = POP();
    PyObject *v = load_attr(x, obj, PyTuple_GET_ITEM(f->code->co_names, arg));
    Py_DECREF(obj);
    return push(x, f, v);
}

static int op_load_method(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *obj = POP();
    PyObject *v = load_attr(x, obj, PyTuple_GET_ITEM(f->code->co_names, arg));
    Py_DECREF(obj);
    if (!v)
        return -1;
    if (PyMethod_Check(v)) {
        PyObject *fn = Py_NewRef(PyMethod_GET_FUNCTION(v));
        PyObject *self = Py_NewRef(PyMethod_GET_SELF(v));
        Py_DECREF(v);
        if (push(x, f, fn) < 0) {
            Py_DECREF(self);
            return -1;
        }
        return push(x, f, self);
    }
    f->stack[f->sp++] = NULL;
    return push(x, f, v);
}

/* ---- calls ---- */

static int op_kw_names(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)op;
    f->kwnames = PyTuple_GET_ITEM(f->code->co_consts, arg);
    return 0;
}

static int op_call(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject **base = &f->stack[f->sp - arg - 2];
    PyObject *callable;
    PyObject *const *args;
    Py_ssize_t nargs;
    if (base[0]) {
        callable = base[0];
        args = base + 1;
        nargs = arg + 1;
    } else {
        callable = base[1];
        args = base + 2;
        nargs = arg;
    }
    Py_ssize_t nkw = f->kwnames ? PyTuple_GET_SIZE(f->kwnames) : 0;
    PyObject *r = call_value(x, callable, args, nargs - nkw, f->kwnames);
    f->kwnames = NULL;
    for (int i = 0; i < arg + 2; i++)
        Py_XDECREF(POP());
    return push(x, f, r);
}

/* callable(*posargs, **kw) for a tuple `posargs` and a dict (or NULL) `kw`. */
static PyObject *call_unpacked(tx *x, PyObject *callable, PyObject *posargs, PyObject *kw)
{
    Py_ssize_t np = PyTuple_GET_SIZE(posargs), nk = kw ? PyDict_GET_SIZE(kw) : 0;
    PyObject **all = PyMem_Malloc((size_t)(np + nk + 1) * sizeof *all);
    PyObject *names = nk ? PyTuple_New(nk) : NULL;
    PyObject *r = NULL;
    if (!all || (nk && !names)) {
        PyErr_NoMemory();
    } else {
        for (Py_ssize_t i = 0; i < np; i++)
            all[i] = PyTuple_GET_ITEM(posargs, i);
        Py_ssize_t pos_i = 0, k = 0;
        PyObject *key, *value;
        while (kw && PyDict_Next(kw, &pos_i, &key, &value)) {
            PyTuple_SET_ITEM(names, k, Py_NewRef(key));
            all[np + k++] = value;
        }
        r = call_value(x, callable, all, np, names);
    }
    PyMem_Free(all);
    Py_XDECREF(names);
    return r;
}

static int op_call_function_ex(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *kw = (arg & 1) ? POP() : NULL;
    PyObject *pos = POP();
    PyObject *callable = POP();
    PyObject *null = POP();
    Py_XDECREF(null);
    PyObject *r = NULL;
    PyObject *posargs = PyTuple_Check(pos) ? Py_NewRef(pos) : iterate(x, pos);
    if (posargs && kw && !PyDict_Check(kw))
        fail(x, true, "** of a %s", Py_TYPE(kw)->tp_name);
    else if (posargs)
        r = call_unpacked(x, callable, posargs, kw);
    Py_XDECREF(posargs);
    Py_XDECREF(kw);
    Py_DECREF(pos);
    Py_DECREF(callable);
    return push(x, f, r);
}

/* ---- the stack ---- */

static int op_pop_top(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)op, (void)arg;
    Py_XDECREF(POP());
    return 0;
}

static int op_copy(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    return push(x, f, Py_XNewRef(PEEK(arg)));
}

static int op_swap(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)op;
    PyObject *t = TOP();
    TOP() = PEEK(arg);
    PEEK(arg) = t;
    return 0;
}

/* ---- containers ---- */

static int op_build_sequence(tx *x, sframe *f, int op, int arg)
{
    PyObject *t = op == BUILD_TUPLE ? PyTuple_New(arg) : PyList_New(arg);
    if (!t)
        return -1;
    for (int i = arg - 1; i >= 0; i--) {
        PyObject *v = POP();
        if (op == BUILD_TUPLE)
            PyTuple_SET_ITEM(t, i, v);
        else
            PyList_SET_ITEM(t, i, v);
    }
    return push(x, f, make_fresh(x, t));
}

static int op_list_extend(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *seq = POP();
    PyObject *items = iterate(x, seq);
    Py_DECREF(seq);
    if (!items)
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++)
        if (PyList_Append(PEEK(arg), PyTuple_GET_ITEM(items, i)) < 0) {
            Py_DECREF(items);
            return -1;
        }
    Py_DECREF(items);
    return 0;
}

static int op_list_append(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)op;
    PyObject *v = POP();
    int rc = PyList_Append(PEEK(arg), v);
    Py_DECREF(v);
    return rc < 0 ? -1 : 0;
}

static int op_list_to_tuple(tx *x, sframe *f, int op, int arg)
{
    (void)op, (void)arg;
    PyObject *l = POP();
    PyObject *t = PyList_AsTuple(l);
    Py_DECREF(l);
    return push(x, f, make_fresh(x, t));
}

static int op_build_map(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *d = PyDict_New();
    if (!d)
        return -1;
    for (int i = arg; i > 0; i--) {
        if (!is_scalar(PEEK(2 * i))) {
            Py_DECREF(d);
            return fail(x, true, "a dict key of type %s", Py_TYPE(PEEK(2 * i))->tp_name);
        }
        if (PyDict_SetItem(d, PEEK(2 * i), PEEK(2 * i - 1)) < 0) {
            Py_DECREF(d);
            return -1;
        }
    }
    for (int i = 0; i < 2 * arg; i++)
        Py_DECREF(POP());
    return push(x, f, make_fresh(x, d));
}

static int op_build_const_key_map(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *keys = POP();
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < arg; i++)
        if (PyDict_SetItem(d, PyTuple_GET_ITEM(keys, i), PEEK(arg - i)) < 0)
            Py_CLEAR(d);
    Py_DECREF(keys);
    for (int i = 0; i < arg; i++)
        Py_DECREF(POP());
    return push(x, f, make_fresh(x, d));
}

/* DICT_MERGE and DICT_UPDATE */
static int op_dict_update(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *other = POP();
    int rc = -1;
    if (!PyDict_Check(other))
        fail(x, true, "** of a %s", Py_TYPE(other)->tp_name);
    else
        rc = PyDict_Update(PEEK(arg), other);
    Py_DECREF(other);
    return rc < 0 ? -1 : 0;
}

static int op_store_subscr(tx *x, sframe *f, int op, int arg)
{
    (void)op, (void)arg;
    /* container[key] = value, on the frame's own dict or list only */
    PyObject *key = POP(), *container = POP(), *value = POP();
    int rc = -1;
    if (!is_fresh(x, container) ||
        !(PyDict_CheckExact(container) || PyList_CheckExact(container)))
        fail(x, true, "an item assignment to a %s%s", Py_TYPE(container)->tp_name,
             is_tensor(x, container) ? "" : " the frame did not build");
    else if (!is_plain(x, key, 0))
        fail(x, true, "an item assignment with a key of type %s", Py_TYPE(key)->tp_name);
    else if ((rc = PyObject_SetItem(container, key, value)) < 0)
        fail_exception(x, "an item assignment");
    Py_DECREF(key);
    Py_DECREF(container);
    Py_DECREF(value);
    return rc < 0 ? -1 : 0;
}

static int op_build_slice(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *step = arg == 3 ? POP() : NULL;
    PyObject *stop = POP(), *start = POP();
    PyObject *r = NULL;
    if (!is_scalar(start) || !is_scalar(stop) || (step && !is_scalar(step)))
        fail(x, true, "a slice of a %s", Py_TYPE(is_scalar(start) ? stop : start)->tp_name);
    else
        r = PySlice_New(start, stop, step);
    Py_DECREF(start);
    Py_DECREF(stop);
    Py_XDECREF(step);
    return push(x, f, r);
}

static int op_unpack_sequence(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *seq = POP();
    PyObject *items = iterate(x, seq);
    Py_DECREF(seq);
    if (!items)
        return -1;
    if (PyTuple_GET_SIZE(items) != arg) {
        Py_DECREF(items);
        return fail(x, false, "unpacking %d values from a sequence of another length", arg);
    }
    for (int i = arg - 1; i >= 0; i--)
        if (push(x, f, Py_NewRef(PyTuple_GET_ITEM(items, i))) < 0) {
            Py_DECREF(items);
            return -1;
        }
    Py_DECREF(items);
    return 0;
}

/* ---- operators ---- */

/* BINARY_OP, BINARY_SUBSCR, COMPARE_OP and IS_OP */
static int op_binary(tx *x, sframe *f, int op, int arg)
{
    PyObject *b = POP(), *a = POP();
    PyObject *r = op == BINARY_OP       ? binary_op(x, arg, a, b)
                  : op == BINARY_SUBSCR ? subscript(x, a, b)
                  : op == COMPARE_OP    ? compare_op(x, arg, a, b)
                                        : PyBool_FromLong((a == b) ^ arg);
    Py_DECREF(a);
    Py_DECREF(b);
    return push(x, f, r);
}

/* `v in c`: 1, 0, or -1 with the failure. */
static int contains(tx *x, PyObject *c, PyObject *v)
{
    if (!is_plain(x, v, 0))
        return fail(x, true, "'in' with a %s", Py_TYPE(v)->tp_name);
    if (PyDict_Check(c)) {
        int rc = -1;
        PyObject *what = PyUnicode_FromString("a dict membership");
        int err;
        if (is_fresh(x, c))
            rc = PyDict_Contains(c, v);
        else if (what) {
            PyObject *item = dict_read(x, c, v, what, &err);
            rc = err < 0 ? -1 : item != NULL;
        }
        Py_XDECREF(what);
        return rc;
    }
    if (is_plain(x, c, 0))
        return PySequence_Contains(c, v);
    return fail(x, true, "'in' of a %s", Py_TYPE(c)->tp_name);
}

static int op_contains(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *c = POP(), *v = POP();
    int rc = contains(x, c, v);
    Py_DECREF(c);
    Py_DECREF(v);
    if (rc < 0)
        return -1;
    return push(x, f, PyBool_FromLong(rc ^ arg));
}

/* UNARY_NEGATIVE, UNARY_POSITIVE and UNARY_INVERT */
static int op_unary(tx *x, sframe *f, int op, int arg)
{
    (void)arg;
    PyObject *v = POP();
    PyObject *r = NULL;
    if (is_tensor(x, v)) {
        const char *name = op == UNARY_NEGATIVE ? "neg"
                           : op == UNARY_INVERT ? "bitwise_not"
                                                : "positive";
        PyObject *fn = pith_function(x, name);
        if (fn)
            r = call_value(x, fn, &v, 1, NULL);
        Py_XDECREF(fn);
    } else if (is_scalar(v)) {
        r = op == UNARY_NEGATIVE ? PyNumber_Negative(v)
            : op == UNARY_INVERT ? PyNumber_Invert(v)
                                 : PyNumber_Positive(v);
        if (!r)
            fail_exception(x, "a unary operator");
    } else {
        fail(x, true, "a unary operator on a %s", Py_TYPE(v)->tp_name);
    }
    Py_DECREF(v);
    return push(x, f, r);
}

static int op_unary_not(tx *x, sframe *f, int op, int arg)
{
    (void)op, (void)arg;
    PyObject *v = POP();
    int t = truth(x, v);
    Py_DECREF(v);
    if (t < 0)
        return -1;
    return push(x, f, PyBool_FromLong(!t));
}

/* ---- iteration and jumps ---- */

static int op_get_iter(tx *x, sframe *f, int op, int arg)
{
    (void)op, (void)arg;
    PyObject *v = POP();
    PyObject *items = iterate(x, v);
    Py_DECREF(v);
    PyObject *it = items ? PyObject_GetIter(items) : NULL;
    Py_XDECREF(items);
    return push(x, f, it);
}

static int op_for_iter(tx *x, sframe *f, int op, int arg)
{
    (void)op;
    PyObject *v = PyIter_Next(TOP());
    if (v)
        return push(x, f, v);
    if (PyErr_Occurred())
        return -1;
    Py_DECREF(POP());
    f->next = f->pc + 1 + arg;
    return 0;
}

/* JUMP_FORWARD, JUMP_BACKWARD and JUMP_BACKWARD_NO_INTERRUPT */
static int op_jump(tx *x, sframe *f, int op, int arg)
{
    (void)x;
    f->next = op == JUMP_FORWARD ? f->pc + 1 + arg : f->pc + 1 - arg;
    return 0;
}

/* POP_JUMP_{FORWARD,BACKWARD}_IF_{FALSE,TRUE} */
static int op_pop_jump_if(tx *x, sframe *f, int op, int arg)
{
    PyObject *v = POP();
    int t = truth(x, v);
    Py_DECREF(v);
    if (t < 0)
        return -1;
    bool want = op == POP_JUMP_FORWARD_IF_TRUE || op == POP_JUMP_BACKWARD_IF_TRUE;
    bool back = op == POP_JUMP_BACKWARD_IF_FALSE || op == POP_JUMP_BACKWARD_IF_TRUE;
    if ((t != 0) == want)
        f->next = back ? f->pc + 1 - arg : f->pc + 1 + arg;
    return 0;
}

/* POP_JUMP_{FORWARD,BACKWARD}_IF_{NONE,NOT_NONE} */
static int op_pop_jump_if_none(tx *x, sframe *f, int op, int arg)
{
    (void)x;
    PyObject *v = POP();
    bool none = v == Py_None;
    Py_DECREF(v);
    bool want = op == POP_JUMP_FORWARD_IF_NONE || op == POP_JUMP_BACKWARD_IF_NONE;
    bool back = op == POP_JUMP_BACKWARD_IF_NONE || op == POP_JUMP_BACKWARD_IF_NOT_NONE;
    if (none == want)
        f->next = back ? f->pc + 1 - arg : f->pc + 1 + arg;
    return 0;
}

/* JUMP_IF_FALSE_OR_POP and JUMP_IF_TRUE_OR_POP */
static int op_jump_if_or_pop(tx *x, sframe *f, int op, int arg)
{
    int t = truth(x, TOP());
    if (t < 0)
        return -1;
    if ((t != 0) == (op == JUMP_IF_TRUE_OR_POP))
        f->next = f->pc + 1 + arg;
    else
        Py_DECREF(POP());
    return 0;
}

static int op_return_value(tx *x, sframe *f, int op, int arg)
{
    (void)x, (void)f, (void)op, (void)arg;
    return 1;
}

/* The handler of each supported opcode; NULL: unsupported_opcode. */
static const op_handler op_handlers[256] = {
    [CACHE] = op_nothing,
    [NOP] = op_nothing,
    [RESUME] = op_nothing,
    [PRECALL] = op_nothing,
    [EXTENDED_ARG] = op_extended_arg,
    [MAKE_CELL] = op_make_cell,
    [COPY_FREE_VARS] = op_copy_free_vars,
    [LOAD_DEREF] = op_load_deref,
    [LOAD_CLOSURE] = op_load_closure,
    [STORE_DEREF] = op_store_deref,
    [MAKE_FUNCTION] = op_make_function,
    [LOAD_FAST] = op_load_fast,
    [STORE_FAST] = op_store_fast,
    [DELETE_FAST] = op_delete_fast,
    [LOAD_CONST] = op_load_const,
    [LOAD_GLOBAL] = op_load_global,
    [PUSH_NULL] = op_push_null,
    [LOAD_ATTR] = op_load_attr,
    [LOAD_METHOD] = op_load_method,
    [KW_NAMES] = op_kw_names,
    [CALL] = op_call,
    [CALL_FUNCTION_EX] = op_call_function_ex,
    [POP_TOP] = op_pop_top,
    [COPY] = op_copy,
    [SWAP] = op_swap,
    [BUILD_TUPLE] = op_build_sequence,
    [BUILD_LIST] = op_build_sequence,
    [LIST_EXTEND] = op_list_extend,
    [LIST_APPEND] = op_list_append,
    [LIST_TO_TUPLE] = op_list_to_tuple,
    [BUILD_MAP] = op_build_map,
    [BUILD_CONST_KEY_MAP] = op_build_const_key_map,
    [DICT_MERGE] = op_dict_update,
    [DICT_UPDATE] = op_dict_update,
    [STORE_SUBSCR] = op_store_subscr,
    [BUILD_SLICE] = op_build_slice,
    [UNPACK_SEQUENCE] = op_unpack_sequence,
    [BINARY_OP] = op_binary,
    [BINARY_SUBSCR] = op_binary,
    [COMPARE_OP] = op_binary,
    [IS_OP] = op_binary,
    [CONTAINS_OP] = op_contains,
    [UNARY_NEGATIVE] = op_unary,
    [UNARY_POSITIVE] = op_unary,
    [UNARY_INVERT] = op_unary,
    [UNARY_NOT] = op_unary_not,
    [GET_ITER] = op_get_iter,
    [FOR_ITER] = op_for_iter,
    [JUMP_FORWARD] = op_jump,
    [JUMP_BACKWARD] = op_jump,
    [JUMP_BACKWARD_NO_INTERRUPT] = op_jump,
    [POP_JUMP_FORWARD_IF_FALSE] = op_pop_jump_if,
    [POP_JUMP_FORWARD_IF_TRUE] = op_pop_jump_if,
    [POP_JUMP_BACKWARD_IF_FALSE] = op_pop_jump_if,
    [POP_JUMP_BACKWARD_IF_TRUE] = op_pop_jump_if,
    [POP_JUMP_FORWARD_IF_NONE] = op_pop_jump_if_none,
    [POP_JUMP_FORWARD_IF_NOT_NONE] = op_pop_jump_if_none,
    [POP_JUMP_BACKWARD_IF_NONE] = op_pop_jump_if_none,
    [POP_JUMP_BACKWARD_IF_NOT_NONE] = op_pop_jump_if_none,
    [JUMP_IF_FALSE_OR_POP] = op_jump_if_or_pop,
    [JUMP_IF_TRUE_OR_POP] = op_jump_if_or_pop,
    [RETURN_VALUE] = op_return_value,
};

PyObject *eval_frame(tx *x, sframe *f)
{
    PyCodeObject *co = f->code;
    x->code = co;
    x->pc = 0;
    if (PyBytes_GET_SIZE(co->co_exceptiontable) > 0) {
        /* A handler would catch what the compiled graph raises at run time (an index out
         * of range), which the graph cannot do: the frame runs eagerly. */
        fail(x, true, "%U has try/except or with blocks", co->co_qualname);
        return NULL;
    }
    PyObject *bytes = PyCode_GetCode(co);
    if (!bytes)
        return NULL;
    const _Py_CODEUNIT *code = (const _Py_CODEUNIT *)PyBytes_AS_STRING(bytes);
    int n = (int)(PyBytes_GET_SIZE(bytes) / (Py_ssize_t)sizeof(_Py_CODEUNIT));
    PyObject *result = NULL;
    f->kwnames = NULL;
    f->extended = 0;
    x->code = co;
    int rc = 0;
    for (f->pc = 0; f->pc < n && rc == 0; f->pc = f->next) {
        int op = _Py_OPCODE(code[f->pc]);
        int arg = _Py_OPARG(code[f->pc]) | f->extended;
        f->extended = 0;
        x->pc = f->pc;
        x->code = co;
        f->next = f->pc + 1;
        if (++x->steps > TRANSLATE_MAX_STEPS)
            rc = fail(x, true, "the frame takes more than %d steps to translate",
                      TRANSLATE_MAX_STEPS);
        else if (op_handlers[op])
            rc = op_handlers[op](x, f, op, arg);
        else
            rc = unsupported_opcode(x, op);
    }
    if (rc > 0)
        result = POP(); /* RETURN_VALUE */
    else if (rc == 0)
        fail(x, true, "the bytecode ended without a return");
    Py_DECREF(bytes);
    return result;
}
