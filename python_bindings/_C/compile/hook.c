/* hook.c — pith.compile's PEP 523 frame hook (Python 3.11): regions and the count that
 * installs and removes the hook, the hook itself, which answers a region's frames from the
 * cache (cache.c) after the guard checks (guards.c) or translates them (translate.c), the
 * per-interpreter hook states, and the methods of pith._C that pith.compiler calls. */
#include "../function_layer.h"

#include <string.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "pith.compile's frame hook is written for CPython 3.11 (Note [The frame hook])"
#endif

/* The unstarted frame's layout (_PyInterpreterFrame) is CPython's internal API. */
#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include "internal.h"

/* Note [The frame hook]
 * pith.compile(f) returns a callable that runs f inside a region. Entering the outermost
 * region of a thread raises this interpreter's count of regions; on 0 -> 1 it installs
 * compile_eval_frame with _PyInterpreterState_SetEvalFrameFunc and keeps the function it
 * replaces. Leaving the outermost region of a thread (by return or by exception) lowers the
 * count; on 1 -> 0 it puts the kept function back, but only if the installed one is still
 * ours: a hook installed meanwhile by someone else (Dynamo, a profiler) stays, and if it
 * later puts ours back, ours removes itself on the first frame it sees outside regions.
 * Code outside regions therefore never pays for the hook, except that while it is
 * installed 3.11 stops inlining Python-to-Python calls for every thread of the
 * interpreter.
 * The hook passes every frame straight to the kept function ("previous"; never to
 * _PyEval_EvalFrameDefault directly) unless this thread is inside a region of this
 * interpreter and the frame is one of a region's: the code pith.compile marked (a compiled
 * function), or a pith.nn.Module's `__call__` or `forward` (the frame's function is its
 * type's). Capturing Module.__call__ takes the hook check and forward in one entry; when it
 * cannot compile for an instance (hooks), that instance's forward frames are still
 * regions. It also passes on frames with throwflag set, generator and coroutine frames,
 * frames while tracing or profiling is on (cframe->use_tracing: pdb, coverage, cProfile),
 * code marked skip, and every frame while a dispatch mode is active (those run eagerly so
 * that the mode sees every op).
 * For a region's frame it looks up the entries of (code, key) in the code's extra slot, the
 * key being the module instance (one __call__ or forward code serves every instance) or
 * the function object (one code serves every closure made from it),
 * checks their guards (Note [Guard soundness], guards.c), and on a hit runs the
 * compiled graph on the tensors in the frame's localsplus and returns the result without
 * evaluating the frame. On a miss it translates, stores the entry and runs it.
 * The frame has not started when the hook sees it: its prologue has not run, so free
 * variables are NULL until COPY_FREE_VARS (the translator reads the function's closure)
 * and a cell argument is the plain value until MAKE_CELL. The hook never makes a frame
 * object for it (cpython#103609): file and line come from the code object.
 * Returning without evaluating the frame is sound on 3.11 because the caller,
 * _PyEval_Vector, clears and pops the frame once the hook returns, whatever it returns. It
 * would not be sound for a generator's frame (the generator owns and resumes it), which is
 * why those pass on, nor on 3.12 and later, where the callee clears its own frame: the
 * #error above stops a build for another version.
 * On 3.11 before 3.11.4, BINARY_SUBSCR_GETITEM (a __getitem__ written in Python) pushes
 * its frame without calling the hook (gh-104405): such frames are not captured, which
 * is always correct since they run eagerly.
 * The hook belongs to one interpreter: installing it on one never touches another's, and
 * the code-extra index (per interpreter, never released) lives in this interpreter's
 * hook_state, found through a capsule in the interpreter's dict. When pith._C's module
 * state goes away (interpreter teardown) the state is disarmed: a thread still inside a
 * region then gets its frames evaluated normally, never a translation. */

/* This thread's region. */
static _Thread_local struct {
    hook_state *hs;
    int depth;
    bool fullgraph;
    bool static_sizes; /* dynamic=False: past the cache limit, run eagerly */
    PyObject *explain; /* pith.compiler.explain: what each region frame gives, or NULL */
} region;

/* The hook states of the interpreters that compiled (3.11 has one GIL, which guards it). */
#define MAX_HOOK_STATES 64
static hook_state *hook_states[MAX_HOOK_STATES];

/* The last state found: the hook runs for every frame of every thread while installed, and
 * a process has one interpreter that compiles, as a rule. */
static hook_state *last_found;

static hook_state *hook_state_find(PyInterpreterState *interp)
{
    int64_t id = PyInterpreterState_GetID(interp);
    if (last_found && last_found->interp == interp && last_found->interp_id == id)
        return last_found;
    for (int i = 0; i < MAX_HOOK_STATES; i++)
        if (hook_states[i] && hook_states[i]->interp == interp &&
            hook_states[i]->interp_id == id)
            return last_found = hook_states[i];
    return NULL;
}

static PyObject *compile_eval_frame(PyThreadState *ts, _PyInterpreterFrame *frame,
                                    int throwflag);
static void hook_remove(hook_state *hs);

/* ---- the hook ---- */

/* "MLP.forward (file:line)"; a module's frame names the module's class: "Linear, in
 * Module.__call__ (file:line)". */
static PyObject *frame_label(_PyInterpreterFrame *frame, bool module)
{
    PyCodeObject *co = frame->f_code;
    if (module && frame->localsplus[0])
        return PyUnicode_FromFormat("%s, in %U (%U:%d)", Py_TYPE(frame->localsplus[0])->tp_name,
                                    co->co_qualname, co->co_filename, co->co_firstlineno);
    return PyUnicode_FromFormat("%U (%U:%d)", co->co_qualname, co->co_filename,
                                co->co_firstlineno);
}

/* Whether the frame is a module's: its function is type(self).__call__ (pith.nn.Module's
 * checks the hooks and calls forward; translating it captures both) or type(self).forward
 * (reached eagerly, from a Module.__call__ that could not compile). */
enum { FRAME_OTHER, FRAME_FORWARD, FRAME_CALL };

static int module_frame_kind(hook_state *hs, _PyInterpreterFrame *frame)
{
    PyCodeObject *co = frame->f_code;
    if (co->co_argcount < 1 || !frame->localsplus[0] || !hs->module_class)
        return FRAME_OTHER;
    PyObject *self = frame->localsplus[0];
    if (!PyObject_TypeCheck(self, (PyTypeObject *)hs->module_class))
        return FRAME_OTHER;
    PyObject *fn = (PyObject *)frame->f_func;
    if (_PyType_Lookup(Py_TYPE(self), hs->call_name) == fn)
        return FRAME_CALL;
    return _PyType_Lookup(Py_TYPE(self), hs->forward_name) == fn ? FRAME_FORWARD : FRAME_OTHER;
}

/* pith.compiler.explain: the frame translated afresh, whatever the caches and skip marks
 * hold (and leaving them and the stats as they are), its record appended to
 * region.explain, and the frame answered by the graph or run eagerly. */
static PyObject *explain_frame(hook_state *hs, PyThreadState *ts, _PyInterpreterFrame *frame,
                               int throwflag, int kind)
{
    PyCodeObject *co = frame->f_code;
    translate_request req = {hs->st, frame->f_func, co, frame->localsplus, hs->module_class,
                             hs->module_getattr};
    translate_failure why = {{0}, NULL, 0, false};
    compile_entry *e = translate_frame(&req, &why);
    if (!e && PyErr_Occurred()) {
        Py_XDECREF(why.filename);
        return NULL;
    }
    PyObject *label = frame_label(frame, kind != FRAME_OTHER), *record = NULL;
    if (!label) {
        Py_XDECREF(why.filename);
        compile_entry_free(e);
        return NULL;
    }
    if (e) {
        char *dump = pith_compiled_dump(e->compiled);
        if (!dump) {
            Py_DECREF(label);
            compile_entry_free(e);
            return error_raise(hs->st);
        }
        record = Py_BuildValue("{s:O,s:s,s:i,s:i,s:i}", "frame", label, "graph", dump,
                               "guards", e->nguards, "inputs", e->ninputs, "outputs",
                               e->noutputs);
        pith_string_free(dump);
    } else {
        record = Py_BuildValue("{s:O,s:s,s:O,s:i,s:O}", "frame", label, "reason", why.reason,
                               "file", why.filename ? why.filename : co->co_filename, "line",
                               why.filename ? why.line : co->co_firstlineno, "module_call",
                               kind == FRAME_CALL ? Py_True : Py_False);
    }
    Py_DECREF(label);
    Py_XDECREF(why.filename);
    if (!record || PyList_Append(region.explain, record) < 0) {
        Py_XDECREF(record);
        compile_entry_free(e);
        return NULL;
    }
    Py_DECREF(record);
    if (!e)
        return hs->previous(ts, frame, throwflag);
    PyObject *capsule = PyCapsule_New(e, "pith.compile.entry", entry_capsule_free);
    if (!capsule) {
        compile_entry_free(e);
        return NULL;
    }
    PyObject *r = entry_run(hs, capsule, frame->localsplus);
    Py_DECREF(capsule);
    return r;
}

/* The entry of `b` whose guards hold for the frame (borrowed), moved to the end: the
 * entries stay in order of use, the most recent last (see Note [Dynamic sizes]). NULL when
 * none holds; then *failing is the first guard of the most recent entry that fails, or -2
 * when that entry is another function object's. */
static PyObject *bucket_hit(bucket *b, _PyInterpreterFrame *frame, int *failing)
{
    *failing = -1;
    for (int i = b->n - 1; i >= 0; i--) {
        compile_entry *e = PyCapsule_GetPointer(b->entries[i], "pith.compile.entry");
        int f = PyWeakref_GET_OBJECT(e->func) == (PyObject *)frame->f_func
                    ? guards_fail(e, frame->localsplus)
                    : -2;
        if (f < 0) {
            PyObject *hit = b->entries[i];
            for (int j = i; j + 1 < b->n; j++)
                b->entries[j] = b->entries[j + 1];
            b->entries[b->n - 1] = hit;
            return hit;
        }
        if (i == b->n - 1)
            *failing = f;
    }
    return NULL;
}

/* Why the most recent entry of `b` did not answer the frame, also appended to the stats'
 * guard failures: 0 with a new reference in *reason (NULL when `b` has no entry), or -1. */
static int miss_reason(hook_state *hs, bucket *b, int failing, _PyInterpreterFrame *frame,
                       PyObject **reason)
{
    *reason = NULL;
    if (b->n == 0)
        return 0;
    compile_entry *last = PyCapsule_GetPointer(b->entries[b->n - 1], "pith.compile.entry");
    *reason = failing == -2 ? PyUnicode_FromFormat("%U: another function object",
                                                   frame->f_code->co_qualname)
                            : guard_describe(last, failing, frame->localsplus);
    if (!*reason)
        return -1;
    list_append_capped(hs->guard_failures, *reason);
    return 0;
}

/* The cache of (code, key) is full and stays so (dynamic=False): the frame runs eagerly,
 * with a UserWarning the first time. */
static PyObject *cache_full(hook_state *hs, PyThreadState *ts, _PyInterpreterFrame *frame,
                            int throwflag, bucket *b, bool forward)
{
    hs->frames_skipped++;
    if (!b->warned) {
        b->warned = true;
        PyObject *label = frame_label(frame, forward);
        if (!label)
            return NULL;
        int rc = PyErr_WarnFormat(PyExc_UserWarning, 1,
                                  "pith.compile: %U reached the cache limit (%d entries); "
                                  "it runs eagerly for other arguments",
                                  label, COMPILE_CACHE_LIMIT);
        Py_DECREF(label);
        if (rc < 0)
            return NULL;
    }
    return hs->previous(ts, frame, throwflag);
}

/* pith.compile(fullgraph=True) cannot compile the frame: raises Unsupported with `msg`. */
static PyObject *fullgraph_raise(hook_state *hs, PyCodeObject *co, PyObject *msg)
{
    PyObject *text = PyUnicode_FromFormat("pith.compile(fullgraph=True): %U cannot be "
                                          "compiled: %U", co->co_qualname, msg);
    if (text) {
        PyErr_SetObject(hs->unsupported ? hs->unsupported : PyExc_RuntimeError, text);
        Py_DECREF(text);
    }
    return NULL;
}

/* The translation gave up (`why`, no exception): the frame runs eagerly, and the bucket of
 * `key` or the code is marked so that it is not translated again in vain. */
static PyObject *translation_failed(hook_state *hs, PyThreadState *ts,
                                    _PyInterpreterFrame *frame, int throwflag, code_cache *cc,
                                    PyObject *key, int kind, const translate_failure *why)
{
    PyCodeObject *co = frame->f_code;
    bool forward = kind != FRAME_OTHER;
    PyObject *msg = PyUnicode_FromFormat("%s (%S, line %d)", why->reason,
                                         why->filename ? why->filename : co->co_filename,
                                         why->filename ? why->line : co->co_firstlineno);
    if (!msg)
        return NULL;
    hs->compiles--; /* nothing was compiled */
    if (kind == FRAME_CALL && why->permanent && !region.fullgraph) {
        /* This instance's Module.__call__ cannot compile: it runs eagerly from now on,
         * and its forward frame, a region too, is translated (and reports) on its own. */
        Py_DECREF(msg);
        bucket *nb = bucket_get(cc, key);
        if (!nb)
            return NULL;
        nb->skip = true;
        return hs->previous(ts, frame, throwflag);
    }
    if (region.fullgraph) {
        fullgraph_raise(hs, co, msg);
        Py_DECREF(msg);
        return NULL;
    }
    hs->frames_skipped++;
    list_append_capped(hs->skip_reasons, msg);
    if (hs->log) {
        PyObject *label = frame_label(frame, forward);
        if (label)
            PySys_FormatStderr("pith.compile: skipped %U%s: %U\n", label,
                               why->permanent ? "" : " for these arguments", msg);
        Py_XDECREF(label);
    }
    Py_DECREF(msg);
    /* the pointer may have moved: a weak callback may have run meanwhile */
    bucket *nb = bucket_get(cc, key);
    if (!nb)
        return NULL;
    if (why->permanent && forward)
        nb->skip = true; /* a module's frames: what failed may be this instance's */
    else if (why->permanent)
        cc->flags |= CODE_SKIP;
    else
        nb->misses++;
    return hs->previous(ts, frame, throwflag);
}

/* The new entry `e` (taken) stored in the bucket of `key` when there is room, and run. */
static PyObject *entry_store_run(hook_state *hs, _PyInterpreterFrame *frame, code_cache *cc,
                                 PyObject *key, bool forward, compile_entry *e,
                                 PyObject *reason)
{
    if (hs->log) {
        PyObject *label = frame_label(frame, forward);
        if (label) {
            if (reason)
                PySys_FormatStderr("pith.compile: recompiled %U because %U\n", label, reason);
            else
                PySys_FormatStderr("pith.compile: compiled %U\n", label);
        }
        Py_XDECREF(label);
    }
    PyObject *capsule = PyCapsule_New(e, "pith.compile.entry", entry_capsule_free);
    if (!capsule) {
        compile_entry_free(e);
        return NULL;
    }
    /* bucket_get's pointer may have moved if a weak callback ran during translation */
    bucket *b = bucket_get(cc, key);
    if (!b || b->n == COMPILE_CACHE_LIMIT) {
        PyObject *r = b ? entry_run(hs, capsule, frame->localsplus) : NULL;
        Py_DECREF(capsule);
        return r;
    }
    b->entries[b->n++] = capsule;
    b->misses = 0;
    hs->frames_captured++;
    return entry_run(hs, capsule, frame->localsplus);
}

/* A miss: the frame translated into a new entry of the bucket of `key`, which runs, or run
 * eagerly when it cannot compile. `reason` (taken) says why the last entry missed. */
static PyObject *frame_translate(hook_state *hs, PyThreadState *ts, _PyInterpreterFrame *frame,
                                 int throwflag, code_cache *cc, PyObject *key, int kind,
                                 PyObject *reason)
{
    translate_request req = {hs->st, frame->f_func, frame->f_code, frame->localsplus,
                             hs->module_class, hs->module_getattr};
    translate_failure why = {{0}, NULL, 0, false};
    hs->compiles++;
    compile_entry *e = translate_frame(&req, &why);
    PyObject *r;
    if (e)
        r = entry_store_run(hs, frame, cc, key, kind != FRAME_OTHER, e, reason);
    else if (PyErr_Occurred())
        r = NULL;
    else
        r = translation_failed(hs, ts, frame, throwflag, cc, key, kind, &why);
    Py_XDECREF(why.filename);
    Py_XDECREF(reason);
    return r;
}

static PyObject *region_frame(hook_state *hs, PyThreadState *ts, _PyInterpreterFrame *frame,
                              int throwflag, code_cache *cc, int kind)
{
    if (region.explain)
        return explain_frame(hs, ts, frame, throwflag, kind);
    bool forward = kind != FRAME_OTHER; /* a module's frame: entries per instance */
    if (!cc && !(cc = code_cache_get(hs, frame->f_code, true)))
        return NULL;
    /* A module's entries are the instance's; a function's are the function object's (one
     * code serves every closure made from it). */
    PyObject *key = forward ? frame->localsplus[0] : (PyObject *)frame->f_func;
    bucket *b = bucket_get(cc, key);
    if (!b)
        return NULL;
    if (b->skip) {
        /* a __call__ that cannot compile is not counted: its forward frame is */
        if (kind != FRAME_CALL) {
            hs->frames_seen++;
            hs->frames_skipped++;
        }
        return hs->previous(ts, frame, throwflag);
    }
    hs->frames_seen++;
    int failing;
    PyObject *hit = bucket_hit(b, frame, &failing);
    if (hit) {
        hs->cache_hits++;
        hs->frames_captured++;
        return entry_run(hs, hit, frame->localsplus);
    }
    PyObject *reason;
    if (miss_reason(hs, b, failing, frame, &reason) < 0)
        return NULL;
    if (b->misses >= COMPILE_MAX_MISSES) {
        Py_XDECREF(reason);
        hs->frames_skipped++;
        return hs->previous(ts, frame, throwflag);
    }
    if (b->n == COMPILE_CACHE_LIMIT && !region.static_sizes) {
        /* Note [Dynamic sizes]: the least recently used entry makes room */
        bucket_evict_oldest(b);
        hs->evictions++;
    }
    if (b->n == COMPILE_CACHE_LIMIT) {
        Py_XDECREF(reason);
        return cache_full(hs, ts, frame, throwflag, b, forward);
    }
    return frame_translate(hs, ts, frame, throwflag, cc, key, kind, reason);
}

static PyObject *compile_eval_frame(PyThreadState *ts, _PyInterpreterFrame *frame,
                                    int throwflag)
{
    hook_state *hs = region.hs;
    if (!hs || region.depth == 0 || hs->interp != ts->interp) {
        hook_state *own = hook_state_find(ts->interp);
        _PyFrameEvalFunction prev = own && own->previous ? own->previous : _PyEval_EvalFrameDefault;
        /* No region is active, yet the hook is ours: a hook installed over ours during a
         * region, and removed since, put ours back. Remove it now (Note [The frame hook]). */
        if (own && own->regions == 0 &&
            _PyInterpreterState_GetEvalFrameFunc(ts->interp) == compile_eval_frame)
            hook_remove(own);
        return prev(ts, frame, throwflag);
    }
    PyCodeObject *co = frame->f_code;
    if (throwflag || !hs->st || ts->cframe->use_tracing ||
        (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) ||
        frame->owner != FRAME_OWNED_BY_THREAD || pydispatch_mode_active() ||
        function_mode_in_effect(hs->st))
        return hs->previous(ts, frame, throwflag);
    code_cache *cc = code_cache_get(hs, co, false);
    if (cc && (cc->flags & CODE_SKIP) && !region.explain) {
        /* only a region's code is ever marked skip */
        hs->frames_seen++;
        hs->frames_skipped++;
        return hs->previous(ts, frame, throwflag);
    }
    int kind = FRAME_OTHER;
    if (!(cc && (cc->flags & CODE_ROOT))) {
        kind = module_frame_kind(hs, frame);
        if (kind == FRAME_OTHER)
            return hs->previous(ts, frame, throwflag);
    }
    return region_frame(hs, ts, frame, throwflag, cc, kind);
}

/* ---- regions ---- */

#define COMPILE_CAPSULE "pith._C.compile"

/* This interpreter's hook state, made on first use. Its record is a capsule in the
 * interpreter's dict (so every instance of pith._C in the interpreter, and a reload, find
 * the same state and the same code-extra index); hook_states is the hook's index of them. */
hook_state *hook_state_of(PyObject *module)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    PyObject *idict = PyInterpreterState_GetDict(interp);
    if (!idict) {
        PyErr_SetString(PyExc_RuntimeError, "pith.compile: the interpreter has no dict");
        return NULL;
    }
    hook_state *hs = hook_state_find(interp); /* the fast path: every region entry */
    PyObject *cap = NULL;
    if (!hs && (cap = PyDict_GetItemString(idict, COMPILE_CAPSULE))) /* borrowed */
        if (!(hs = PyCapsule_GetPointer(cap, COMPILE_CAPSULE)))
            return NULL;
    if (hs) {
        if (!hs->st)
            hs->st = state_of_module(module); /* pith._C executed again after a disarm */
        return hs;
    }
    int slot = -1;
    for (int i = 0; i < MAX_HOOK_STATES && slot < 0; i++)
        if (!hook_states[i])
            slot = i;
    /* A state whose interpreter is gone (another ID at the slot) is reused. */
    for (int i = 0; i < MAX_HOOK_STATES && slot < 0; i++)
        if (hook_states[i]->regions == 0 && !hook_states[i]->st)
            slot = i;
    if (slot < 0) {
        PyErr_SetString(PyExc_RuntimeError, "pith.compile: too many interpreters compiled");
        return NULL;
    }
    hs = hook_states[slot];
    if (!hs && !(hs = PyMem_RawCalloc(1, sizeof *hs))) {
        PyErr_NoMemory();
        return NULL;
    }
    memset(hs, 0, sizeof *hs);
    hs->interp = interp;
    hs->interp_id = PyInterpreterState_GetID(interp);
    hs->extra_index = _PyEval_RequestCodeExtraIndex(code_cache_free);
    if (hs->extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "pith.compile: no code-extra index is left");
        return NULL;
    }
    hs->st = state_of_module(module);
    cap = PyCapsule_New(hs, COMPILE_CAPSULE, NULL); /* never freed: Note [The frame hook] */
    if (!cap || PyDict_SetItemString(idict, COMPILE_CAPSULE, cap) < 0) {
        Py_XDECREF(cap);
        return NULL;
    }
    Py_DECREF(cap);
    hook_states[slot] = hs;
    return hs;
}

static void hook_install(hook_state *hs)
{
    hs->previous = _PyInterpreterState_GetEvalFrameFunc(hs->interp);
    if (hs->previous == compile_eval_frame)
        hs->previous = _PyEval_EvalFrameDefault;
    _PyInterpreterState_SetEvalFrameFunc(hs->interp, compile_eval_frame);
}

static void hook_remove(hook_state *hs)
{
    if (_PyInterpreterState_GetEvalFrameFunc(hs->interp) == compile_eval_frame)
        _PyInterpreterState_SetEvalFrameFunc(hs->interp, hs->previous);
    /* else another hook was installed over ours: it stays, and chains to ours no more */
}

/* _compile_region(callable, args, kwargs, flags): callable(*args, **kwargs) inside a
 * region; flags: 1 fullgraph, 2 dynamic=False (Note [Dynamic sizes]). */
static PyObject *compile_region(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyTuple_Check(args[1]) || (args[2] != Py_None && !PyDict_Check(args[2]))) {
        PyErr_SetString(PyExc_TypeError, "_compile_region(callable, args, kwargs, flags)");
        return NULL;
    }
    hook_state *hs = hook_state_of(module);
    if (!hs)
        return NULL;
    if (region.depth > 0 && region.hs != hs) {
        /* this thread is in a region of another interpreter: run plainly */
        return PyObject_Call(args[0], args[1], args[2] == Py_None ? NULL : args[2]);
    }
    long flags = PyLong_AsLong(args[3]);
    if (flags == -1 && PyErr_Occurred())
        return NULL;
    bool saved_fullgraph = region.fullgraph, saved_static = region.static_sizes;
    if (region.depth++ == 0) {
        region.hs = hs;
        if (hs->regions++ == 0)
            hook_install(hs);
    }
    region.fullgraph = flags & 1;
    region.static_sizes = flags & 2;
    PyObject *r = PyObject_Call(args[0], args[1], args[2] == Py_None ? NULL : args[2]);
    region.fullgraph = saved_fullgraph;
    region.static_sizes = saved_static;
    if (--region.depth == 0) {
        region.hs = NULL;
        if (--hs->regions == 0)
            hook_remove(hs);
    }
    return r;
}

/* _compile_explain(on): starts recording what this thread's region frames give (on), or
 * stops and returns the records (a list of dicts). */
static PyObject *compile_explain(PyObject *module, PyObject *on)
{
    (void)module;
    if (PyObject_IsTrue(on) == 1) {
        Py_XSETREF(region.explain, PyList_New(0));
        return region.explain ? Py_NewRef(Py_None) : NULL;
    }
    PyObject *records = region.explain ? region.explain : PyList_New(0);
    region.explain = NULL;
    return records;
}

/* _compile_mark(code, fullgraph): the code is a region of its own (pith.compile(fn)). */
static PyObject *compile_mark(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_compile_mark(code, fullgraph)");
        return NULL;
    }
    hook_state *hs = hook_state_of(module);
    code_cache *cc = hs ? code_cache_get(hs, (PyCodeObject *)args[0], true) : NULL;
    if (!cc)
        return NULL;
    cc->flags |= CODE_ROOT; /* fullgraph belongs to the callable: _compile_region's */
    Py_RETURN_NONE;
}

/* _compile_setup(Module, Module.__getattr__, Unsupported, log) */
static PyObject *compile_setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_compile_setup(Module, getattr, Unsupported, log)");
        return NULL;
    }
    hook_state *hs = hook_state_of(module);
    if (!hs)
        return NULL;
    Py_XSETREF(hs->module_class, Py_NewRef(args[0]));
    Py_XSETREF(hs->module_getattr, Py_NewRef(args[1]));
    Py_XSETREF(hs->unsupported, Py_NewRef(args[2]));
    Py_XSETREF(hs->forward_name, PyUnicode_InternFromString("forward"));
    Py_XSETREF(hs->call_name, PyUnicode_InternFromString("__call__"));
    hs->log = PyObject_IsTrue(args[3]) == 1;
    if (!hs->guard_failures)
        hs->guard_failures = PyList_New(0);
    if (!hs->skip_reasons)
        hs->skip_reasons = PyList_New(0);
    if (!hs->forward_name || !hs->call_name || !hs->guard_failures || !hs->skip_reasons)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *compile_hook_installed(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyBool_FromLong(_PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get()) ==
                           compile_eval_frame);
}

/* The module state goes away (interpreter teardown, or a module instance freed): disarm. */
void compile_disarm(pith_module_state *st)
{
    for (int i = 0; i < MAX_HOOK_STATES; i++) {
        hook_state *hs = hook_states[i];
        if (!hs || hs->st != st)
            continue;
        hs->st = NULL;
        Py_CLEAR(hs->module_class);
        Py_CLEAR(hs->module_getattr);
        Py_CLEAR(hs->unsupported);
        Py_CLEAR(hs->forward_name);
        Py_CLEAR(hs->call_name);
        /* The code caches outlive this (they are freed with their code objects): detach
         * them, so that freeing one later never touches this state, which another
         * interpreter may reuse. */
        code_cache *cc = hs->caches;
        while (cc) {
            code_cache *next = cc->next;
            code_cache_clear(cc);
            cc->hs = NULL;
            cc->prev = cc->next = NULL;
            cc = next;
        }
        hs->caches = NULL;
        Py_CLEAR(hs->guard_failures);
        Py_CLEAR(hs->skip_reasons);
    }
}

/* ---- a foreign hook, for tests ---- */

/* _testing_foreign_hook(action): installs (1) or removes (0) a frame hook of another
 * library's kind, which counts the frames it sees and chains to the function it replaced;
 * returns the count (-1 only reads it). Tests install it inside a region, to check that leaving the
 * region leaves a hook installed over ours in place (Note [The frame hook]). One per
 * process: test code only. */
static _PyFrameEvalFunction foreign_previous;
static long long foreign_frames;

static PyObject *foreign_eval_frame(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag)
{
    foreign_frames++;
    return foreign_previous(ts, frame, throwflag);
}

static PyObject *testing_foreign_hook(PyObject *module, PyObject *what)
{
    (void)module;
    long action = PyLong_AsLong(what);
    if (action == -1 && PyErr_Occurred())
        return NULL;
    PyInterpreterState *interp = PyInterpreterState_Get();
    if (action == 1) {
        if (_PyInterpreterState_GetEvalFrameFunc(interp) != foreign_eval_frame) {
            foreign_previous = _PyInterpreterState_GetEvalFrameFunc(interp);
            _PyInterpreterState_SetEvalFrameFunc(interp, foreign_eval_frame);
        }
        foreign_frames = 0;
    } else if (action == 0 &&
               _PyInterpreterState_GetEvalFrameFunc(interp) == foreign_eval_frame) {
        _PyInterpreterState_SetEvalFrameFunc(interp, foreign_previous);
    }
    return PyLong_FromLongLong(foreign_frames);
}

PyMethodDef compile_module_methods[] = {
    {"_testing_foreign_hook", testing_foreign_hook, METH_O,
     "_testing_foreign_hook(action): a counting frame hook of another library (tests): 1 "
     "installs it, 0 removes it, -1 reads its count."},
    {"_compile_region", (PyCFunction)(void (*)(void))compile_region, METH_FASTCALL,
     "_compile_region(callable, args, kwargs, flags): the call, inside a region of "
     "pith.compile (Note [The frame hook]); flags: 1 fullgraph, 2 dynamic=False."},
    {"_compile_mark", (PyCFunction)(void (*)(void))compile_mark, METH_FASTCALL,
     "_compile_mark(code, fullgraph): marks the code of a compiled function as a region."},
    {"_compile_setup", (PyCFunction)(void (*)(void))compile_setup, METH_FASTCALL,
     "_compile_setup(Module, Module.__getattr__, Unsupported, log), by pith.compiler."},
    {"_compile_stats", compile_stats, METH_NOARGS, "pith.compiler.stats()'s counters."},
    {"_compile_explain", compile_explain, METH_O,
     "_compile_explain(on): records what this thread's region frames give (pith.compiler."
     "explain)."},
    {"_compile_reset", compile_reset, METH_NOARGS, "Drops every cache entry; zeroes stats."},
    {"_compile_hook_installed", compile_hook_installed, METH_NOARGS,
     "Whether this interpreter's frame hook is pith.compile's right now."},
    {"_compile_cache_size", compile_cache_size, METH_NOARGS,
     "The number of live cache entries in this interpreter."},
    {NULL},
};

