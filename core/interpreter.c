/* interpreter.c — the interpreter table: registration, the in-flight gate, disarm, and the
 * calls from C into an interpreter.
 *
 * The PyObject slot that points at a table lives in pyobj_slot.c. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/interpreter_internal.h"
#include "core/tensor.h"

/* Note [Interpreter disarm]
 * A pith_interpreter is the C side of one Python interpreter: its name, its vtable, a gate
 * and an in-flight counter. Tensors, storage and kernels point at it for the rest of the
 * process, so it is NEVER freed: a dangling table would turn a late release into a crash.
 *
 * Teardown disarms it in two phases, both at interpreter teardown:
 *   1. close_gate + wait_drained (from a Python atexit callback, GIL released): from now
 *      on callers on foreign threads are refused (pith_interpreter_enter(…, false)); the
 *      interpreter's own thread (own_thread=true: its __del__ and weakref callbacks) still
 *      gets in. Then wait until the in-flight count drains to zero.
 *   2. disarm (from the capsule destructor): swap the vtable pointer for `noop_vtable`.
 *      Its decref leaks silently and every other entry fails with PITH_ERR_INTERPRETER
 *      ("...interpreter N was finalised"). The no-ops are constant static data in core/,
 *      with no destructor, so they outlive every interpreter and every module.
 *
 * Never disarm from a module's m_free: another instance of the module in the same
 * interpreter (import after reload, a second import in a subinterpreter sharing the table)
 * may still be using the table; only the interpreter's own teardown knows it is over.
 *
 * The enter/close race: enter increments the in-flight count and THEN re-checks the gate;
 * close sets the gate and THEN waits for the count. With sequentially consistent atomics
 * one of the two sides sees the other, so no foreign call slips past a drained gate.
 * `name` is a char array in the table itself, so messages can name a dead interpreter. */
struct pith_interpreter {
    char name[64];
    _Atomic(const pith_interpreter_vtable *) vtable;
    atomic_bool gate_closed;
    atomic_int_fast64_t in_flight;
    void *ctx;
    struct pith_interpreter *next; /* the process-wide list, for debugging */
};

/* ---- the no-op table (phase 2) ---- */

static pith_status noop_fail(const pith_interpreter *interp)
{
    return pith_set_error(PITH_ERR_INTERPRETER,
                          "interpreter %s was finalised: its Python objects can no longer "
                          "be used",
                          interp ? interp->name : "?");
}
static void noop_decref(const pith_interpreter *interp, void *pyobj)
{
    /* Leak: the interpreter that owned the object is gone. */
}
static pith_status noop_detach(const pith_interpreter *interp, const pith_tensor *self,
                               pith_tensor **out)
{
    return noop_fail(interp);
}
static pith_status noop_dispatch(const pith_interpreter *interp, const pith_op *op,
                                 pith_stack *stack)
{
    return noop_fail(interp);
}
static pith_status noop_is_contiguous(const pith_interpreter *interp, const pith_tensor *self,
                                      bool *out)
{
    return noop_fail(interp);
}
static pith_status noop_device(const pith_interpreter *interp, const pith_tensor *self,
                               pith_device *out)
{
    return noop_fail(interp);
}
static pith_status noop_geometry(const pith_interpreter *interp, const pith_tensor *self,
                                 int *ndim, int64_t *values)
{
    return noop_fail(interp);
}

static const pith_interpreter_vtable noop_vtable = {
    .decref = noop_decref,
    .detach = noop_detach,
    .dispatch = noop_dispatch,
    .is_contiguous = noop_is_contiguous,
    .device = noop_device,
    .sizes = noop_geometry,
    .strides = noop_geometry,
};

/* ---- registration ---- */

static pthread_mutex_t interp_list_lock = PTHREAD_MUTEX_INITIALIZER;
static pith_interpreter *interp_list;
static size_t interp_list_count;

pith_interpreter *pith_interpreter_register(const char *name,
                                            const pith_interpreter_vtable *vtable, void *ctx)
{
    if (!name)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_interpreter_register: name is NULL");
    if (!vtable)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_interpreter_register: vtable is NULL");
    pith_interpreter *interp = calloc(1, sizeof *interp);
    if (!interp)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "pith_interpreter_register: out of memory");
    snprintf(interp->name, sizeof interp->name, "%s", name);
    atomic_init(&interp->vtable, vtable);
    atomic_init(&interp->gate_closed, false);
    atomic_init(&interp->in_flight, 0);
    interp->ctx = ctx;
    pthread_mutex_lock(&interp_list_lock);
    interp->next = interp_list;
    interp_list = interp;
    interp_list_count++;
    pthread_mutex_unlock(&interp_list_lock);
    return interp;
}

size_t interp_registered_count(void)
{
    pthread_mutex_lock(&interp_list_lock);
    size_t n = interp_list_count;
    pthread_mutex_unlock(&interp_list_lock);
    return n;
}

static const pith_interpreter_vtable *interp_vtable(const pith_interpreter *interp)
{
    return atomic_load_explicit(&interp->vtable, memory_order_acquire);
}

const char *pith_interpreter_name(const pith_interpreter *interp)
{
    if (!interp) {
        pith_set_error(PITH_ERR_VALUE, "pith_interpreter_name: interpreter is NULL");
        return NULL;
    }
    return interp->name;
}

void *pith_interpreter_ctx(const pith_interpreter *interp)
{
    if (!interp)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_interpreter_ctx: interpreter is NULL");
    return interp->ctx;
}

const pith_interpreter_vtable *pith_interpreter_vtable_of(const pith_interpreter *interp)
{
    if (!interp)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "pith_interpreter_vtable_of: interpreter is NULL");
    return interp_vtable(interp);
}

bool pith_interpreter_is_disarmed(const pith_interpreter *interp)
{
    if (!interp) {
        pith_set_error(PITH_ERR_VALUE, "pith_interpreter_is_disarmed: interpreter is NULL");
        return false;
    }
    return interp_vtable(interp) == &noop_vtable;
}

/* ---- the gate (phase 1) ---- */

void pith_interpreter_close_gate(const pith_interpreter *interp)
{
    if (!interp) {
        pith_set_error(PITH_ERR_VALUE, "pith_interpreter_close_gate: interpreter is NULL");
        return;
    }
    /* The table is never freed and only its atomics change: casting away const is how a
     * shared handle mutates its synchronisation state. */
    atomic_store(&((pith_interpreter *)interp)->gate_closed, true);
}

void pith_interpreter_wait_drained(const pith_interpreter *interp)
{
    if (!interp) {
        pith_set_error(PITH_ERR_VALUE, "pith_interpreter_wait_drained: interpreter is NULL");
        return;
    }
    /* Calls in flight are short (a decref, a metadata query, one Python dispatch): spin
     * politely, then sleep in small steps. */
    for (unsigned spins = 0; atomic_load(&interp->in_flight) > 0; spins++) {
        if (spins < 64) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100000}; /* 100 us */
            nanosleep(&ts, NULL);
        }
    }
}

void pith_interpreter_disarm(pith_interpreter *interp)
{
    if (!interp) {
        pith_set_error(PITH_ERR_VALUE, "pith_interpreter_disarm: interpreter is NULL");
        return;
    }
    atomic_store(&interp->gate_closed, true);
    atomic_store_explicit(&interp->vtable, &noop_vtable, memory_order_release);
}

bool pith_interpreter_gate_open(const pith_interpreter *interp)
{
    if (!interp) {
        pith_set_error(PITH_ERR_VALUE, "pith_interpreter_gate_open: interpreter is NULL");
        return false;
    }
    return !atomic_load(&interp->gate_closed);
}

int64_t pith_interpreter_in_flight(const pith_interpreter *interp)
{
    if (!interp) {
        pith_set_error(PITH_ERR_VALUE, "pith_interpreter_in_flight: interpreter is NULL");
        return -1;
    }
    return (int64_t)atomic_load(&interp->in_flight);
}

bool interp_enter_quiet(const pith_interpreter *interp, bool own_thread)
{
    pith_interpreter *mut = (pith_interpreter *)interp;
    atomic_fetch_add(&mut->in_flight, 1);
    if (own_thread || !atomic_load(&mut->gate_closed))
        return true;
    atomic_fetch_sub(&mut->in_flight, 1);
    return false;
}

bool pith_interpreter_enter(const pith_interpreter *interp, bool own_thread)
{
    if (!interp) {
        pith_set_error(PITH_ERR_VALUE, "pith_interpreter_enter: interpreter is NULL");
        return false;
    }
    if (interp_enter_quiet(interp, own_thread))
        return true;
    pith_set_error(PITH_ERR_INTERPRETER,
                   "interpreter %s is shutting down: calls from other threads are refused",
                   interp->name);
    return false;
}

void pith_interpreter_leave(const pith_interpreter *interp)
{
    if (!interp)
        return;
    atomic_fetch_sub(&((pith_interpreter *)interp)->in_flight, 1);
}

/* ---- calls from C into an interpreter ---- */

void interp_call_decref(const pith_interpreter *interp, void *pyobj)
{
    pith_interpreter *mut = (pith_interpreter *)interp;
    atomic_fetch_add(&mut->in_flight, 1);
    const pith_interpreter_vtable *vt = interp_vtable(interp);
    if (vt->decref)
        vt->decref(interp, pyobj);
    atomic_fetch_sub(&mut->in_flight, 1);
}

bool interp_run_deleter(const pith_interpreter *owner, void (*deleter)(void *, void *),
                        void *data, void *ctx)
{
    pith_interpreter *mut = (pith_interpreter *)owner;
    atomic_fetch_add(&mut->in_flight, 1);
    bool run = interp_vtable(owner) != &noop_vtable;
    if (run)
        deleter(data, ctx);
    atomic_fetch_sub(&mut->in_flight, 1);
    return run;
}

static const pith_interpreter *tensor_tag_for(const pith_tensor *t, const char *what)
{
    const pith_interpreter *interp = atomic_load_explicit(&t->tag, memory_order_acquire);
    if (!interp)
        pith_set_error(PITH_ERR_INTERPRETER, "%s: the tensor belongs to no interpreter", what);
    return interp;
}

static pith_status entry_missing(const pith_interpreter *interp, const char *entry)
{
    return pith_set_error(PITH_ERR_NOT_IMPLEMENTED, "interpreter %s does not implement %s",
                          interp->name, entry);
}

/* Note [Entries and the gate]
 * dispatch, detach and the metadata entries (sizes, strides, is_contiguous, device) have no
 * caller that knows which thread it runs on: core reaches them from the Python fallback,
 * pith_detach(), pith_sizes() and friends on whatever thread calls. So core counts them in
 * flight (the drain waits for them) without applying the gate, and the table's entry
 * applies it, because only the bindings can tell the interpreter's own thread (its
 * __del__ and atexit callbacks during teardown must still get in, ops on its subclasses
 * included) from a foreign one (refused once the gate is closed). See Note [Entering an
 * interpreter from C] (python_bindings/_C/interp.c). After disarm the no-op entries fail
 * with "... was finalised", whichever thread calls. decref is counted the same way
 * (interp_call_decref). */
pith_status interp_call_detach(const pith_tensor *t, pith_tensor **out)
{
    const pith_interpreter *interp = tensor_tag_for(t, "detach");
    if (!interp)
        return PITH_ERR_INTERPRETER;
    if (!pith_interpreter_enter(interp, true)) /* See Note [Entries and the gate] */
        return PITH_ERR_INTERPRETER;
    const pith_interpreter_vtable *vt = interp_vtable(interp);
    *out = NULL;
    pith_status s = vt->detach ? vt->detach(interp, t, out) : entry_missing(interp, "detach");
    pith_interpreter_leave(interp);
    if (s == PITH_OK && !*out)
        s = pith_set_error(PITH_ERR_INTERPRETER, "interpreter %s: detach returned no tensor",
                           interp->name);
    return s;
}

pith_status interp_call_dispatch(const pith_interpreter *interp, const pith_op *op,
                                 pith_stack *stack)
{
    if (!interp)
        return pith_set_error(PITH_ERR_VALUE, "dispatch: interpreter is NULL");
    if (!pith_interpreter_enter(interp, true)) /* See Note [Entries and the gate] */
        return PITH_ERR_INTERPRETER;
    const pith_interpreter_vtable *vt = interp_vtable(interp);
    pith_status s =
        vt->dispatch ? vt->dispatch(interp, op, stack) : entry_missing(interp, "dispatch");
    pith_interpreter_leave(interp);
    return s;
}

typedef pith_status (*geometry_entry)(const pith_interpreter *, const pith_tensor *, int *,
                                      int64_t *);

static pith_status call_geometry(const pith_tensor *t, bool want_sizes, int *ndim,
                                 int64_t *values)
{
    const char *what = want_sizes ? "sizes" : "strides";
    const pith_interpreter *interp = tensor_tag_for(t, what);
    if (!interp)
        return PITH_ERR_INTERPRETER;
    if (!pith_interpreter_enter(interp, true)) /* See Note [Entries and the gate] */
        return PITH_ERR_INTERPRETER;
    const pith_interpreter_vtable *vt = interp_vtable(interp);
    geometry_entry fn = want_sizes ? vt->sizes : vt->strides;
    int n = -1;
    pith_status s = fn ? fn(interp, t, &n, values) : entry_missing(interp, what);
    pith_interpreter_leave(interp);
    if (s != PITH_OK)
        return s;
    if (n < 0 || n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_INTERPRETER, "interpreter %s returned %s with %d dims",
                              interp->name, what, n);
    for (int i = 0; i < n; i++)
        if (values[i] < 0)
            return pith_set_error(PITH_ERR_INTERPRETER,
                                  "interpreter %s returned a negative %s value %lld",
                                  interp->name, what, (long long)values[i]);
    *ndim = n;
    return PITH_OK;
}

pith_status interp_call_sizes(const pith_tensor *t, int *ndim, int64_t *sizes)
{
    return call_geometry(t, true, ndim, sizes);
}

pith_status interp_call_strides(const pith_tensor *t, int *ndim, int64_t *strides)
{
    return call_geometry(t, false, ndim, strides);
}

pith_status interp_call_is_contiguous(const pith_tensor *t, bool *out)
{
    const pith_interpreter *interp = tensor_tag_for(t, "is_contiguous");
    if (!interp)
        return PITH_ERR_INTERPRETER;
    if (!pith_interpreter_enter(interp, true)) /* See Note [Entries and the gate] */
        return PITH_ERR_INTERPRETER;
    const pith_interpreter_vtable *vt = interp_vtable(interp);
    pith_status s = vt->is_contiguous ? vt->is_contiguous(interp, t, out)
                                      : entry_missing(interp, "is_contiguous");
    pith_interpreter_leave(interp);
    return s;
}

pith_status interp_call_device(const pith_tensor *t, pith_device *out)
{
    const pith_interpreter *interp = tensor_tag_for(t, "device");
    if (!interp)
        return PITH_ERR_INTERPRETER;
    if (!pith_interpreter_enter(interp, true)) /* See Note [Entries and the gate] */
        return PITH_ERR_INTERPRETER;
    const pith_interpreter_vtable *vt = interp_vtable(interp);
    pith_status s = vt->device ? vt->device(interp, t, out) : entry_missing(interp, "device");
    pith_interpreter_leave(interp);
    if (s == PITH_OK && *out != PITH_CPU && *out != PITH_META)
        s = pith_set_error(PITH_ERR_INTERPRETER, "interpreter %s returned an invalid device %d",
                           interp->name, (int)*out);
    return s;
}
