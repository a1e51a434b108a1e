/* compile_internal.h — what pith.compile's two files share: compile_hook.c (the PEP 523
 * frame hook, regions, the per-code caches, guard checks, runs and stats) and
 * compile_translate.c (the symbolic evaluator of 3.11 bytecode that builds a cache entry).
 * docs/compile.md describes the feature; Note [The frame hook] and Note [Guard soundness]
 * are the invariants. */
#ifndef PITH_BINDINGS_COMPILE_INTERNAL_H
#define PITH_BINDINGS_COMPILE_INTERNAL_H

#include "state.h"

/* The most cache entries one (code, instance) pair keeps; past it the frame runs eagerly. */
#define COMPILE_CACHE_LIMIT 8

/* Where a frame argument, or an item of one, is: localsplus[local], then item `index` of
 * that tuple or list (when >= 0), or item `key` of that dict (when not NULL). */
typedef struct {
    int local;
    int index;
    PyObject *key; /* strong */
} arg_path;

/* The value at `a` (borrowed), or NULL when the frame has none there. Never raises. */
static inline PyObject *access_get(PyObject *const *localsplus, const arg_path *a)
{
    PyObject *v = localsplus[a->local];
    if (!v || (a->index < 0 && !a->key))
        return v;
    if (a->index >= 0) {
        if (PyTuple_CheckExact(v))
            return a->index < PyTuple_GET_SIZE(v) ? PyTuple_GET_ITEM(v, a->index) : NULL;
        if (PyList_CheckExact(v))
            return a->index < PyList_GET_SIZE(v) ? PyList_GET_ITEM(v, a->index) : NULL;
        return NULL;
    }
    return PyDict_CheckExact(v) ? PyDict_GetItem(v, a->key) : NULL;
}

/* What a guard checks; See Note [Guard soundness] (compile_translate.c). */
typedef enum {
    GUARD_TENSOR,      /* the argument at `at` is a tensor of exactly this type and metadata */
    GUARD_VALUE,       /* ... a scalar of exactly this type and value */
    GUARD_IDENTITY,    /* ... the object `aux` */
    GUARD_WEAK,        /* ... the object `weak` refers to (a module) */
    GUARD_SEQUENCE,    /* ... a tuple, list or dict of exactly type `aux`, with `ndim` items */
    GUARD_DICT_KEYS,   /* dict `obj`: the names `keys` map to `values` (NULL: absent) */
    GUARD_DICT_EXACT,  /* dict `obj` is unchanged since translation (its whole content read) */
    GUARD_LIST_EXACT,  /* list `obj` holds exactly the items of the tuple `aux` */
    GUARD_OBJ_DICT,    /* object `obj`'s __dict__ is still the dict `aux` */
    GUARD_TYPE,        /* object `obj` still has type `aux`, whose version tag is `version` */
    GUARD_TYPE_VERSION, /* type `aux` still has the version tag `version` */
    GUARD_FUNC,        /* function `obj` still has its code, defaults, kwdefaults, closure */
    GUARD_CELL,        /* cell `obj` still holds `aux` */
    GUARD_PARAM,       /* parameter or buffer `obj` still wraps `t`, with t's metadata (and,
                          with `flag`, no instance attributes) */
    GUARD_GRAD_MODE,   /* grad mode is `flag` */
    GUARD_DEFAULT_DTYPE, /* the default dtype is `dtype` */
    GUARD_NO_ALIAS,    /* no two tensor inputs share memory (the graph writes in place) */
} guard_kind;

typedef struct {
    guard_kind kind;
    arg_path at;          /* the argument (the kinds above GUARD_DICT_KEYS); at.local < 0:
                           the guard is on `obj` */
    PyObject *obj;      /* strong */
    PyObject *aux;      /* strong: the type, the dict, the cell's content, the value */
    PyObject *weak;     /* GUARD_WEAK: a weak reference */
    PyObject *name;     /* for messages: "x", "self.fc", "global scale" (strong) */
    PyObject *keys, *values; /* GUARD_DICT_KEYS: tuples of the names and the values read */
    uint64_t version;   /* dict or type version */
    pith_tensor *t;     /* GUARD_PARAM: retained */
    PyTypeObject *type; /* GUARD_TENSOR: the exact type (strong, in `aux`) */
    pith_dtype dtype;
    pith_device device;
    int ndim;
    bool flag;
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
    /* GUARD_FUNC: what the function held at translation (borrowed: `obj` holds them) */
    PyObject *code, *defaults, *kwdefaults, *closure;
} guard;

/* How the result of a compiled frame is built from the graph's outputs. */
typedef enum { TMPL_OUTPUT, TMPL_LOCAL, TMPL_CONST, TMPL_TUPLE, TMPL_LIST } tmpl_kind;

typedef struct tmpl {
    tmpl_kind kind;
    int index;        /* TMPL_OUTPUT: the output */
    arg_path at;        /* TMPL_LOCAL: the argument returned as is */
    PyObject *value;  /* TMPL_CONST (strong) */
    int n;
    struct tmpl *items;
} tmpl;

/* One compiled frame: the guards that must hold, the graph and how to call it. */
typedef struct {
    guard *guards;
    int nguards;
    pith_compiled *compiled;
    arg_path *inputs;    /* for each graph input, where the frame holds its tensor */
    int ninputs;
    int noutputs;
    int64_t work;      /* elements of the inputs and parameters: whether to drop the GIL */
    PyObject *func;    /* a weak reference to the frame's function: its closure, defaults
                          and globals were read, and one code serves many functions */
    tmpl result;
} compile_entry;

/* What the translator is asked to compile. */
typedef struct {
    pith_module_state *st;
    PyFunctionObject *func;
    PyCodeObject *code;
    PyObject **localsplus; /* the unstarted frame's arguments (borrowed) */
    PyObject *module_class;   /* pith.nn.Module */
    PyObject *module_getattr; /* pith.nn.Module.__getattr__ */
} translate_request;

/* Why a translation gave up: the reason, the file and the line of the bytecode it met. */
typedef struct {
    char reason[256];
    PyObject *filename; /* strong, or NULL */
    int line;
    bool permanent; /* the code cannot compile (mark it skip), or only these arguments */
} translate_failure;

/* Builds an entry for the frame; NULL with *why filled (no exception) when the frame must
 * run eagerly, or NULL with a Python exception for an error of the process (no memory). */
compile_entry *translate_frame(const translate_request *req, translate_failure *why);
void compile_entry_free(compile_entry *e);


extern PyMethodDef compile_module_methods[];
/* The module state `st` goes away: the hook states that use it stop compiling (Note [The
 * frame hook]). */
void compile_disarm(pith_module_state *st);

#endif /* PITH_BINDINGS_COMPILE_INTERNAL_H */
