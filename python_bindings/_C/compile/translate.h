/* compile/translate.h — the state of one translation of pith.compile (tx), the symbolic
 * frame it evaluates (sframe), and the functions that the translator's files share:
 * translate.c, frame_state.c, eval.c, operators.c, calls.c, attributes.c and guards.c. */
#ifndef PITH_BINDINGS_COMPILE_TRANSLATE_H
#define PITH_BINDINGS_COMPILE_TRANSLATE_H

#include "internal.h"

/* How deep inlined calls may nest. */
#define TRANSLATE_MAX_DEPTH 24
/* The most instructions one translation evaluates (loops unroll). */
#define TRANSLATE_MAX_STEPS 200000

/* See Note [Guard index] (guards.c) */
typedef struct {
    const void *key; /* NULL: an empty slot */
    int kind;
    int index; /* into tx.guards */
} guard_slot;

typedef struct {
    const translate_request *req;
    pith_module_state *st;
    pith_graph *g;
    translate_failure *why;
    guard *guards;
    int nguards, cap_guards;
    guard_slot *guard_index; /* See Note [Guard index] */
    int index_cap, index_used;
    /* The interned names type_lookup has used, by the address of their C literal */
    struct {
        const char *literal;
        PyObject *name; /* strong */
    } names[8];
    int nnames;
    arg_path *inputs; /* of the graph's inputs, in order */
    int ninputs, cap_inputs;
    PyObject *param_standins; /* id(parameter) -> its stand-in */
    PyObject *input_standins; /* id(stand-in) -> the frame slot it came from */
    PyObject *standin_types;  /* id(stand-in) -> the type of what it stands for, when that
                                 is not pith.Tensor (an nn.Parameter) */
    PyObject *standin_params; /* id(stand-in) -> the parameter (or tensor) it stands for */
    PyObject *output_ids;     /* id(stand-in) -> its graph output */
    int noutputs;
    PyObject *fresh;          /* ids of the containers the translation built */
    PyObject *shadow_cells;   /* ids of the cells that shadow a closure's cells */
    PyObject *keep;           /* what the translation made, kept alive */
    int64_t work;
    bool mutates; /* a recorded call writes a tensor in place (or out=) */
    bool absent_ok; /* getattr/hasattr: a missing attribute sets `absent`, not a failure */
    bool absent;
    int depth;
    long steps;
    PyCodeObject *code; /* where the evaluation is, for messages */
    int pc;
} tx;

typedef struct {
    PyObject **locals; /* co_nlocalsplus slots, strong or NULL */
    int nlocals;
    PyObject **stack;
    int sp, cap;
    PyObject *globals, *builtins;
    PyFunctionObject *func;
    PyCodeObject *code;
    /* where eval_frame is: the instruction, the one after it (a jump changes it), the
     * EXTENDED_ARG prefix of the next one, and KW_NAMES's names for the next CALL
     * (borrowed from co_consts) */
    int pc, next, extended;
    PyObject *kwnames;
} sframe;

/* ---- values (translate.c) ---- */

/* By the type alone: PyObject_IsInstance could read a user's __class__ property. */
static inline bool is_tensor(tx *x, PyObject *v)
{
    return tensor_check(x->st, v);
}

static inline bool is_scalar(PyObject *v)
{
    return v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) ||
           PyUnicode_CheckExact(v);
}

/* ---- translate.c: failures, fresh objects, values ---- */

int fail(tx *x, bool permanent, const char *fmt, ...);
int attribute_missing(tx *x, PyObject *label);
int fail_exception(tx *x, const char *what);
bool is_fresh(tx *x, PyObject *obj);
PyObject *make_fresh(tx *x, PyObject *obj);
bool tensor_has_attributes(PyObject *v);
bool is_plain(tx *x, PyObject *v, int depth);
PyTypeObject *value_type(tx *x, PyObject *v);
bool is_module(tx *x, PyObject *v);

/* ---- guards.c: guards made while translating ---- */

guard *guard_add(tx *x, guard_kind kind);
guard *guard_find(const tx *x, guard_kind kind, const void *key);
guard *guard_add_keyed(tx *x, guard_kind kind, const void *key);
void tensor_meta_record(guard *gd, const pith_tensor *t);
PyObject *dict_read(tx *x, PyObject *dict, PyObject *key, PyObject *what, int *err);
int dict_read_all(tx *x, PyObject *dict, PyObject *what);
int type_guard(tx *x, PyObject *obj, PyObject *what);
int list_read_all(tx *x, PyObject *list);
int func_guard(tx *x, PyFunctionObject *fn);

/* ---- frame_state.c: the symbolic frame and its arguments ---- */

int sframe_init(sframe *f, PyFunctionObject *fn, PyCodeObject *co);
void sframe_clear(sframe *f);
int push(tx *x, sframe *f, PyObject *v);
PyObject *argument_value(tx *x, arg_path at, PyObject *v, PyObject *name, int depth);
PyObject *param_value(tx *x, PyObject *param, PyObject *what);
PyObject *outside_value(tx *x, PyObject *v, PyObject *what);

/* ---- attributes.c ---- */

PyObject *type_lookup(tx *x, PyTypeObject *tp, const char *name);
int argument_slot(tx *x, PyObject *obj);
void guard_subject(tx *x, guard *gd, PyObject *obj);
bool is_tensor_query(PyObject *name);
int conversion_of(const char *name);
PyObject *tensor_getattr(tx *x, PyObject *v, PyObject *name);
PyObject *load_attr(tx *x, PyObject *obj, PyObject *name);

/* ---- calls.c ---- */

bool container_method(tx *x, PyObject *obj, PyObject *name);
PyObject *call_value(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);
PyObject *record_op(tx *x, const char *name, PyObject *const *args, Py_ssize_t nargs);

/* ---- operators.c ---- */

int truth(tx *x, PyObject *v);
PyObject *iterate(tx *x, PyObject *v);
PyObject *pith_function(tx *x, const char *name);
PyObject *binary_op(tx *x, int op, PyObject *a, PyObject *b);
PyObject *compare_op(tx *x, int op, PyObject *a, PyObject *b);
PyObject *subscript(tx *x, PyObject *c, PyObject *k);

/* ---- eval.c ---- */

PyObject *eval_frame(tx *x, sframe *f);

#endif /* PITH_BINDINGS_COMPILE_TRANSLATE_H */
