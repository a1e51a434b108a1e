/* embed.h — helpers shared by the embedding programs (tests/embed/, one scenario per .c
 * file): each program embeds Python 3.11, starts sub-interpreters with Py_NewInterpreter,
 * switches between them with PyThreadState_Swap, and ends every one of them before
 * Py_FinalizeEx (3.11 aborts otherwise). A failed check prints where and why, with the
 * Python traceback, and exits 1.
 *
 * pith is imported from PYTHONPATH (tests/embed/run.sh points it at the installed package).
 * Raw tensors cross between C and Python as integer handles: pith._C._testing_handle(t)
 * (a new C reference) and pith._C._testing_wrap_handle(h) (takes it back; on failure it
 * stays with the caller). */
#ifndef PITH_EMBED_H
#define PITH_EMBED_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pith/interpreter.h>
#include <pith/ops.h>
#include <pith/pith.h>

#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                                   \
            fputc('\n', stderr);                                                            \
            embed_print_error();                                                            \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

/* Prints a pending Python exception (only with a thread state that holds the GIL). */
static inline void embed_print_error(void)
{
    if (_PyThreadState_UncheckedGet() &&
        _PyThreadState_UncheckedGet()->thread_id == PyThread_get_thread_ident() &&
        PyErr_Occurred())
        PyErr_Print();
}

static inline void embed_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

/* Starts the main interpreter; returns its thread state (current, holding the GIL). */
static inline PyThreadState *embed_start(void)
{
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    config.install_signal_handlers = 0;
    PyStatus status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status))
        Py_ExitStatusException(status);
    return PyThreadState_Get();
}

/* A new sub-interpreter, current from now on. */
static inline PyThreadState *embed_new_interpreter(void)
{
    PyThreadState *ts = Py_NewInterpreter();
    CHECK(ts != NULL, "Py_NewInterpreter failed");
    return ts;
}

static inline int64_t embed_interpreter_id(PyThreadState *ts)
{
    return PyInterpreterState_GetID(PyThreadState_GetInterpreter(ts));
}

/* Ends `ts`'s interpreter, then makes `next` current (it may be NULL). */
static inline void embed_end_interpreter(PyThreadState *ts, PyThreadState *next)
{
    PyThreadState_Swap(ts);
    Py_EndInterpreter(ts);
    PyThreadState_Swap(next);
}

static inline PyObject *embed_main_dict(void)
{
    PyObject *main = PyImport_AddModule("__main__"); /* borrowed */
    CHECK(main != NULL, "no __main__");
    return PyModule_GetDict(main); /* borrowed */
}

/* Runs `code` in the current interpreter's __main__. */
static inline void embed_run(const char *code)
{
    PyObject *globals = embed_main_dict();
    PyObject *r = PyRun_String(code, Py_file_input, globals, globals);
    CHECK(r != NULL, "running:\n%s", code);
    Py_DECREF(r);
}

/* Evaluates `expr` in the current interpreter's __main__: a new reference. */
static inline PyObject *embed_eval(const char *expr)
{
    PyObject *globals = embed_main_dict();
    PyObject *r = PyRun_String(expr, Py_eval_input, globals, globals);
    CHECK(r != NULL, "evaluating: %s", expr);
    return r;
}

static inline long long embed_eval_int(const char *expr)
{
    PyObject *r = embed_eval(expr);
    long long v = PyLong_AsLongLong(r);
    CHECK(!(v == -1 && PyErr_Occurred()), "%s is not an int", expr);
    Py_DECREF(r);
    return v;
}

static inline double embed_eval_double(const char *expr)
{
    PyObject *r = embed_eval(expr);
    double v = PyFloat_AsDouble(r);
    CHECK(!(v == -1.0 && PyErr_Occurred()), "%s is not a float", expr);
    Py_DECREF(r);
    return v;
}

/* The value of `expr` as a string, in `buf`. */
static inline const char *embed_eval_str(const char *expr, char *buf, size_t cap)
{
    PyObject *r = embed_eval(expr);
    const char *s = PyUnicode_AsUTF8(r);
    CHECK(s != NULL, "%s is not a str", expr);
    snprintf(buf, cap, "%s", s);
    Py_DECREF(r);
    return buf;
}

/* Binds `name` in __main__ to a Python int holding `pointer`. */
static inline void embed_set_pointer(const char *name, void *pointer)
{
    PyObject *v = PyLong_FromVoidPtr(pointer);
    CHECK(v != NULL && PyDict_SetItemString(embed_main_dict(), name, v) == 0, "set %s", name);
    Py_DECREF(v);
}

static inline void *embed_eval_pointer(const char *expr)
{
    PyObject *r = embed_eval(expr);
    void *p = PyLong_AsVoidPtr(r);
    CHECK(!PyErr_Occurred(), "%s is not a pointer", expr);
    Py_DECREF(r);
    return p;
}

/* The current interpreter's pith table, from the capsule that pith._C keeps in the
 * interpreter's dict (Note [One interpreter table per interpreter]). */
static inline pith_interpreter *embed_current_table(void)
{
    PyObject *dict = PyInterpreterState_GetDict(PyInterpreterState_Get());
    CHECK(dict != NULL, "no interpreter dict");
    PyObject *capsule = PyDict_GetItemString(dict, "pith._C.interpreter");
    CHECK(capsule != NULL, "pith._C registered no table in this interpreter");
    pith_interpreter *interp = PyCapsule_GetPointer(capsule, "pith._C.interpreter");
    CHECK(interp != NULL, "bad capsule");
    return interp;
}

/* Runs fn(arg) on a new bare pthread (no Python thread state) and joins it. The caller
 * must not hold the GIL if fn needs it. */
static inline void embed_on_bare_thread(void *(*fn)(void *), void *arg)
{
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, fn, arg) == 0, "pthread_create");
    CHECK(pthread_join(thread, NULL) == 0, "pthread_join");
}

static inline void *embed_release_tensor(void *t)
{
    pith_release(t);
    return NULL;
}

/* Whether `haystack` contains `needle`. */
static inline int embed_contains(const char *haystack, const char *needle)
{
    return strstr(haystack, needle) != NULL;
}

#endif /* PITH_EMBED_H */
