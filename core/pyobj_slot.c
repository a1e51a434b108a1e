/* pyobj_slot.c — the PyObject slot of a tensor (wrapper pointer, "owns" bit, interpreter
 * tag), and the flags the bindings set on wrapper tensors (Python key, metadata policy,
 * wrapped number).
 *
 * The release path that honours the "owns" bit is pith_release in tensor.c. */
#include <inttypes.h>

#include "core/error.h"
#include "core/tensor.h"

/* Note [PyObject slot and interpreter tag]
 * Each tensor has one slot for its Python wrapper: `pyobj` (an opaque PyObject *, with
 * PITH_PYOBJ_OWNS in the low bit) and `tag`, the interpreter the tensor belongs to.
 *  - The tag changes at most once, NULL -> interpreter, by CAS (pith_slot_claim): when
 *    two interpreters race to wrap one fresh tensor, exactly one wins, and the loser gets
 *    PITH_ERR_INTERPRETER instead of a second wrapper. The caller of pith_slot_claim
 *    holds a reference to the tensor; when that is the only one (refcount 1, as for every
 *    op result about to be wrapped) no other thread can reach the tensor, so a plain
 *    store claims it: no locked instruction on the common path. A tensor is never re-tagged, even
 *    after its wrapper is gone or its interpreter died: the tag is what lets C reach the
 *    right interpreter (or its no-ops) for the rest of the tensor's life.
 *  - Only a thread running in the tagged interpreter writes `pyobj`; core/ cannot check
 *    that (it knows no thread states), so pith_slot_set trusts the bindings, which call
 *    pith_slot_claim or pith_slot_check first.
 *  - Another interpreter that touches the tensor gets PITH_ERR_INTERPRETER, with a
 *    message naming both interpreters and whether the owner is alive or dead (disarmed);
 *    never a crash and never a silent second wrapper. pith_alias makes an untagged tensor
 *    over the same storage to hand data across without a copy.
 * The tag is read with acquire and claimed with acq_rel, so a thread that sees the tag
 * also sees the claiming thread's writes before it (e.g. the wrapper pointer). */

/* Note [PyObject preservation]
 * The scheme is "flip on dealloc" (ARCHITECTURE.md):
 *  - Normally Python owns C: the wrapper holds one strong reference to the tensor, and
 *    `pyobj` is a borrowed back-pointer (owns bit clear).
 *  - When the wrapper's refcount reaches zero while C holds other references
 *    (pith_tensor_refcount > 1), its dealloc resurrects it instead: C now owns the
 *    wrapper (pith_slot_set_owns(t, true)), and the wrapper's reference to the tensor
 *    becomes borrowed (the bindings release it, so the C refcount counts only C holders).
 *    Nothing is cleared: the same id, type, __dict__ and weakrefs come back.
 *  - Wrapping the tensor again flips it back (the bindings take a strong reference and
 *    call pith_slot_set_owns(t, false)).
 *  - When the last C reference goes while C owns the wrapper, pith_release clears the
 *    slot and calls the tag's decref(pyobj) (interp_call_decref). The wrapper's dealloc
 *    then sees a C refcount of 0 and leaves the tensor alone; pith_release frees it.
 *  - decref goes through the table's current vtable and never fails: after disarm it is
 *    the no-op, which leaks the dead interpreter's object. It is counted in flight (so
 *    disarm waits for it) but not refused by the closed gate, because it must not fail.
 * Result: C retain and release never touch Python, except this one decref. */

/* The bit must equal PITH_KEYSET(PITH_KEY_PYTHON) of dispatch/keys.h; see tensor.h. */
#define SLOT_KEY_PYTHON TENSOR_KEY_PYTHON

static bool slot_tensor_ok(const pith_tensor *t, const char *what)
{
    if (!t)
        pith_set_error(PITH_ERR_VALUE, "%s: tensor is NULL", what);
    return t != NULL;
}

void *pith_slot_get(const pith_tensor *t, bool *owns)
{
    if (!slot_tensor_ok(t, "pith_slot_get")) {
        if (owns)
            *owns = false;
        return NULL;
    }
    uintptr_t v = atomic_load_explicit(&t->pyobj, memory_order_acquire);
    if (owns)
        *owns = (v & PITH_PYOBJ_OWNS) != 0;
    return (void *)(v & ~PITH_PYOBJ_OWNS);
}

static pith_status slot_foreign(const pith_interpreter *owner, const pith_interpreter *other)
{
    const char *owner_name = pith_interpreter_name(owner);
    bool dead = pith_interpreter_is_disarmed(owner);
    return pith_set_error(PITH_ERR_INTERPRETER,
                          "interpreter %s cannot use this tensor: it belongs to interpreter %s "
                          "(which is %s); use pith_alias (pith.share in Python) to hand "
                          "tensors between interpreters",
                          other ? pith_interpreter_name(other) : "(none)", owner_name,
                          dead ? "dead: it was finalised" : "alive");
}

pith_status pith_slot_check(const pith_tensor *t, const pith_interpreter *interp)
{
    if (!slot_tensor_ok(t, "pith_slot_check"))
        return PITH_ERR_VALUE;
    const pith_interpreter *tag = atomic_load_explicit(&t->tag, memory_order_acquire);
    if (!tag || tag == interp)
        return PITH_OK;
    return slot_foreign(tag, interp);
}

pith_status pith_slot_claim(pith_tensor *t, pith_interpreter *interp)
{
    if (!slot_tensor_ok(t, "pith_slot_claim"))
        return PITH_ERR_VALUE;
    if (!interp)
        return pith_set_error(PITH_ERR_VALUE, "pith_slot_claim: interpreter is NULL");
    /* Fresh and unshared: See Note [PyObject slot and interpreter tag]. The acquire load
     * pairs with pith_release's acq_rel decrement: every former holder is done with t. */
    if (atomic_load_explicit(&t->refcount, memory_order_acquire) == 1 &&
        !atomic_load_explicit(&t->tag, memory_order_relaxed)) {
        atomic_store_explicit(&t->tag, interp, memory_order_release);
        return PITH_OK;
    }
    pith_interpreter *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&t->tag, &expected, interp,
                                                memory_order_acq_rel, memory_order_acquire))
        return PITH_OK;
    return expected == interp ? PITH_OK : slot_foreign(expected, interp);
}

void pith_slot_set(pith_tensor *t, void *pyobj, bool owns)
{
    if (!slot_tensor_ok(t, "pith_slot_set"))
        return;
    if (pyobj && !atomic_load_explicit(&t->tag, memory_order_acquire)) {
        pith_set_error(PITH_ERR_INTERPRETER,
                       "pith_slot_set: the tensor is not tagged; claim it first");
        return;
    }
    if ((uintptr_t)pyobj & PITH_PYOBJ_OWNS) {
        pith_set_error(PITH_ERR_VALUE, "pith_slot_set: misaligned object pointer %p", pyobj);
        return;
    }
    uintptr_t v = (uintptr_t)pyobj | (pyobj && owns ? PITH_PYOBJ_OWNS : 0);
    atomic_store_explicit(&t->pyobj, v, memory_order_release);
}

void pith_slot_set_owns(pith_tensor *t, bool owns)
{
    if (!slot_tensor_ok(t, "pith_slot_set_owns"))
        return;
    if (owns) {
        /* Only a slot holding a wrapper can own it. */
        uintptr_t v = atomic_load_explicit(&t->pyobj, memory_order_acquire);
        while (v && !(v & PITH_PYOBJ_OWNS) &&
               !atomic_compare_exchange_weak_explicit(&t->pyobj, &v, v | PITH_PYOBJ_OWNS,
                                                      memory_order_acq_rel,
                                                      memory_order_acquire)) {
        }
    } else {
        atomic_fetch_and_explicit(&t->pyobj, ~PITH_PYOBJ_OWNS, memory_order_acq_rel);
    }
}

void pith_slot_clear(pith_tensor *t)
{
    if (!slot_tensor_ok(t, "pith_slot_clear"))
        return;
    atomic_store_explicit(&t->pyobj, (uintptr_t)0, memory_order_release);
}

int64_t pith_tensor_refcount(const pith_tensor *t)
{
    if (!slot_tensor_ok(t, "pith_tensor_refcount"))
        return -1;
    return (int64_t)atomic_load_explicit(&t->refcount, memory_order_acquire);
}

const pith_interpreter *pith_tensor_interpreter(const pith_tensor *t)
{
    if (!slot_tensor_ok(t, "pith_tensor_interpreter"))
        return NULL;
    return atomic_load_explicit(&t->tag, memory_order_acquire);
}

/* ---- flags the bindings set on wrapper tensors ---- */

void pith_tensor_set_python_key(pith_tensor *t, bool on)
{
    if (!slot_tensor_ok(t, "pith_tensor_set_python_key"))
        return;
    if (on)
        t->keys |= SLOT_KEY_PYTHON;
    else
        t->keys &= ~SLOT_KEY_PYTHON;
}

bool pith_tensor_has_python_key(const pith_tensor *t)
{
    if (!slot_tensor_ok(t, "pith_tensor_has_python_key"))
        return false;
    return (t->keys & SLOT_KEY_PYTHON) != 0;
}

void pith_tensor_set_policy(pith_tensor *t, unsigned policy)
{
    if (!slot_tensor_ok(t, "pith_tensor_set_policy"))
        return;
    if (policy & ~(PITH_POLICY_STRIDES | PITH_POLICY_SIZES | PITH_POLICY_DEVICE)) {
        pith_set_error(PITH_ERR_VALUE, "pith_tensor_set_policy: unknown policy bits 0x%x",
                       policy);
        return;
    }
    uint32_t flags = t->flags & ~(uint32_t)(PITH_TENSOR_POLICY_STRIDES |
                                            PITH_TENSOR_POLICY_SIZES |
                                            PITH_TENSOR_POLICY_DEVICE);
    if (policy & PITH_POLICY_STRIDES)
        flags |= PITH_TENSOR_POLICY_STRIDES;
    /* Sizes from Python imply strides from Python: geometry comes from one place. */
    if (policy & PITH_POLICY_SIZES)
        flags |= PITH_TENSOR_POLICY_SIZES | PITH_TENSOR_POLICY_STRIDES;
    if (policy & PITH_POLICY_DEVICE)
        flags |= PITH_TENSOR_POLICY_DEVICE;
    t->flags = flags;
}

void pith_tensor_set_wrapped_number(pith_tensor *t, bool on)
{
    if (!slot_tensor_ok(t, "pith_tensor_set_wrapped_number"))
        return;
    if (on && t->ndim != 0) {
        pith_set_error(PITH_ERR_VALUE,
                       "pith_tensor_set_wrapped_number: only a 0-dim tensor can be a wrapped "
                       "number, got %d dims", t->ndim);
        return;
    }
    if (on)
        t->flags |= PITH_TENSOR_WRAPPED_NUMBER;
    else
        t->flags &= ~(uint32_t)PITH_TENSOR_WRAPPED_NUMBER;
}

bool pith_tensor_is_wrapped_number(const pith_tensor *t)
{
    if (!slot_tensor_ok(t, "pith_tensor_is_wrapped_number"))
        return false;
    return (t->flags & PITH_TENSOR_WRAPPED_NUMBER) != 0;
}
