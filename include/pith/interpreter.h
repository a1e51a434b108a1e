/* interpreter.h — the interpreter table and the PyObject slot, for the Python bindings and
 * for embedders that host interpreters. Plain C: libpith never includes Python.h, and sees
 * a PyObject only as `void *`.
 *
 * See Note [PyObject slot and interpreter tag] (core/pyobj_slot.c), Note [PyObject
 * preservation] (core/pyobj_slot.c) and Note [Interpreter disarm] (core/interpreter.c). */
#ifndef PITH_INTERPRETER_H
#define PITH_INTERPRETER_H

#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The entries through which C calls back into one interpreter. The bindings fill one per
 * interpreter; every entry receives the table it was reached through. libpith counts each
 * call in flight and honours disarm, but does not know which thread runs which
 * interpreter: once the gate is closed, each entry must refuse callers that are not the
 * interpreter's own thread itself, with pith_interpreter_enter(interp, own_thread) (See
 * Note [Entries and the gate] in core/interpreter.c). This is the one list of entries
 * (ARCHITECTURE.md). */
typedef struct pith_interpreter_vtable {
    /* Drops the reference that C owned on a wrapper. Must not fail. */
    void (*decref)(const pith_interpreter *interp, void *pyobj);
    /* detach() of a tensor with the Python key; *out is a new reference. */
    pith_status (*detach)(const pith_interpreter *interp, const pith_tensor *self,
                          pith_tensor **out);
    /* Boxed call into __pith_dispatch__ / the mode stack. */
    pith_status (*dispatch)(const pith_interpreter *interp, const pith_op *op,
                            pith_stack *stack);
    pith_status (*is_contiguous)(const pith_interpreter *interp, const pith_tensor *self,
                                 bool *out);
    pith_status (*device)(const pith_interpreter *interp, const pith_tensor *self,
                          pith_device *out);
    /* Fill *ndim and sizes[0..ndim) (at most PITH_MAX_DIMS). */
    pith_status (*sizes)(const pith_interpreter *interp, const pith_tensor *self, int *ndim,
                         int64_t *sizes);
    pith_status (*strides)(const pith_interpreter *interp, const pith_tensor *self,
                           int *ndim, int64_t *strides);
} pith_interpreter_vtable;

/* Registers a new interpreter table. `name` is copied (and kept after disarm); `vtable` must
 * outlive the process (static data); `ctx` is the bindings' own pointer. Never freed. */
PITH_API pith_interpreter *pith_interpreter_register(const char *name,
                                                     const pith_interpreter_vtable *vtable,
                                                     void *ctx);
PITH_API void *pith_interpreter_ctx(const pith_interpreter *interp);
PITH_API const pith_interpreter_vtable *pith_interpreter_vtable_of(const pith_interpreter *interp);

/* Disarm, phase 1: close the gate to foreign threads (pith_interpreter_enter(…, false)
 * fails from now on), then wait until the in-flight calls drain. The caller must not hold
 * anything that an in-flight call waits for (the bindings release the GIL). */
PITH_API void pith_interpreter_close_gate(const pith_interpreter *interp);
PITH_API void pith_interpreter_wait_drained(const pith_interpreter *interp);
/* Disarm, phase 2: swap in the no-op table. After this decref leaks and every other entry
 * fails with PITH_ERR_INTERPRETER. */
PITH_API void pith_interpreter_disarm(pith_interpreter *interp);
PITH_API bool pith_interpreter_gate_open(const pith_interpreter *interp);
PITH_API int64_t pith_interpreter_in_flight(const pith_interpreter *interp);

/* Counts a call into `interp` as in flight. `own_thread` says that the caller runs on a
 * thread state of that interpreter (its own __del__ and callbacks run during teardown);
 * other callers are refused once the gate is closed. Returns false with
 * PITH_ERR_INTERPRETER set when refused. Pair with pith_interpreter_leave. */
PITH_API bool pith_interpreter_enter(const pith_interpreter *interp, bool own_thread);
PITH_API void pith_interpreter_leave(const pith_interpreter *interp);

/* ---- the PyObject slot ---- */

/* The wrapper's pointer, or NULL; *owns (if not NULL) says whether C owns the wrapper. */
PITH_API void *pith_slot_get(const pith_tensor *t, bool *owns);
/* OK when `t` is untagged or tagged to `interp`; otherwise PITH_ERR_INTERPRETER, with a
 * message naming both interpreters and whether the owner is alive. */
PITH_API pith_status pith_slot_check(const pith_tensor *t, const pith_interpreter *interp);
/* Claims the tag for `interp` (CAS from NULL; a plain store when the caller's reference is
 * the only one). The caller holds a reference to `t`. OK if already tagged to `interp`. */
PITH_API pith_status pith_slot_claim(pith_tensor *t, pith_interpreter *interp);
/* Sets the wrapper pointer (the tag must already be `interp`'s). */
PITH_API void pith_slot_set(pith_tensor *t, void *pyobj, bool owns);
/* Flips who owns the wrapper (see Note [PyObject preservation]). */
PITH_API void pith_slot_set_owns(pith_tensor *t, bool owns);
/* Forgets the wrapper pointer (the tag stays: a tensor is never re-tagged). */
PITH_API void pith_slot_clear(pith_tensor *t);
/* Current strong C reference count (for the preservation logic in the bindings). */
PITH_API int64_t pith_tensor_refcount(const pith_tensor *t);
/* Storage whose bytes a Python object owns (the bindings' NumPy, buffer and DLPack imports)
 * belongs to that object's interpreter: its deleter runs only while that interpreter is
 * armed (it leaks after disarm), and pith.share copies it instead of aliasing it. Set it
 * right after pith_from_blob, before the tensor is shared; only storage with a deleter can
 * have an owner (else PITH_ERR_VALUE). pith_storage_owner is NULL for storage C owns. */
PITH_API pith_status pith_storage_set_owner(pith_tensor *t, const pith_interpreter *owner);
PITH_API const pith_interpreter *pith_storage_owner(const pith_tensor *t);
/* Dispatch keys and flags that the bindings set on wrapper subclasses. */
PITH_API void pith_tensor_set_python_key(pith_tensor *t, bool on);
PITH_API bool pith_tensor_has_python_key(const pith_tensor *t);
/* policy: bit 0 strides, bit 1 sizes, bit 2 device (PITH_POLICY_*). */
#define PITH_POLICY_STRIDES 1u
#define PITH_POLICY_SIZES 2u
#define PITH_POLICY_DEVICE 4u
PITH_API void pith_tensor_set_policy(pith_tensor *t, unsigned policy);
/* Marks a 0-dim tensor as a wrapped Python number, which promotes weakly. */
PITH_API void pith_tensor_set_wrapped_number(pith_tensor *t, bool on);
/* Whether `t` is a wrapped Python number (__pith_dispatch__ hands it to Python as one). */
PITH_API bool pith_tensor_is_wrapped_number(const pith_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* PITH_INTERPRETER_H */
