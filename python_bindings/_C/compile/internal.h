/* compile/internal.h — what pith.compile's files share: the cache entries and their
 * guards and result templates, the translator's request and failure (translate.c), and
 * the hook's per-interpreter state with its code caches (hook.c, cache.c, guards.c,
 * stats.c). The translator's own state is translate.h. docs/compile.md describes the
 * feature; Note [The frame hook] and Note [Guard soundness] are the invariants. */
#ifndef PITH_BINDINGS_COMPILE_INTERNAL_H
#define PITH_BINDINGS_COMPILE_INTERNAL_H

#include "../state.h"
#include "../compile_internal.h"

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

/* What a guard checks; See Note [Guard soundness] (compile/guards.c). */
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
    bool requires_grad; /* GUARD_TENSOR, GUARD_PARAM: See Note [Compiled regions do not record] */
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

/* ---- the hook's state (hook.c) and the code caches (cache.c) ---- */

enum {
    CODE_ROOT = 1u << 0,      /* pith.compile marked it: a region of its own */
    CODE_SKIP = 1u << 1,      /* translation gave up for good: run eagerly */
};

typedef struct {
    void *key;        /* the instance (a module's forward), or NULL */
    PyObject *weak;   /* a weak reference to it, whose callback drops the bucket */
    PyObject *entries[COMPILE_CACHE_LIMIT]; /* capsules of compile_entry, newest last */
    int n;
    int misses;       /* translations that failed for these arguments only, in a row */
    bool skip;        /* this instance's frames cannot compile (a module with hooks) */
    bool warned;      /* the cache limit was reported */
} bucket;

/* After this many failed translations of one (code, instance) whose failures depended on
 * the arguments, it runs eagerly without trying again (until reset()). */
#define COMPILE_MAX_MISSES 4

typedef struct hook_state hook_state;

typedef struct code_cache {
    struct code_cache *prev, *next; /* in hook_state.caches */
    hook_state *hs;
    unsigned flags;
    bucket *buckets;
    int nbuckets, cap;
} code_cache;

struct hook_state {
    PyInterpreterState *interp;
    int64_t interp_id;
    _PyFrameEvalFunction previous; /* what the hook replaced (while installed) */
    int regions;                    /* threads of this interpreter inside a region */
    Py_ssize_t extra_index;
    pith_module_state *st;          /* NULL once disarmed */
    PyObject *module_class, *module_getattr, *unsupported, *forward_name, *call_name;
    bool log;
    code_cache *caches;
    /* pith.compiler.stats() */
    long long frames_seen, frames_captured, frames_skipped, compiles, cache_hits, evictions;
    PyObject *guard_failures, *skip_reasons; /* lists of str */
};


/* hook.c */
hook_state *hook_state_of(PyObject *module);

/* cache.c */
void code_cache_clear(code_cache *cc);
void code_cache_free(void *p);
code_cache *code_cache_get(hook_state *hs, PyCodeObject *co, bool create);
bucket *bucket_get(code_cache *cc, PyObject *instance);
void bucket_evict_oldest(bucket *b);
void entry_capsule_free(PyObject *capsule);
PyObject *entry_run(hook_state *hs, PyObject *capsule, PyObject *const *localsplus);

/* guards.c */
int guards_fail(compile_entry *e, PyObject *const *localsplus);
PyObject *guard_describe(const compile_entry *e, int i, PyObject *const *localsplus);
void guard_clear(guard *gd);

/* stats.c */
void list_append_capped(PyObject *list, PyObject *item);
PyObject *compile_stats(PyObject *module, PyObject *unused);
PyObject *compile_reset(PyObject *module, PyObject *unused);
PyObject *compile_cache_size(PyObject *module, PyObject *unused);

#endif /* PITH_BINDINGS_COMPILE_INTERNAL_H */
