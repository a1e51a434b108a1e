/* stash.c — handles: pith_tensor references held outside Python as plain integers.
 * pith._C._stash and pith._C._unstash, pith.share (an untagged alias or copy to hand to
 * another interpreter), and the process-wide table of live handles that makes a forged or
 * stale integer a ValueError instead of a crash. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "state.h"

/* Note [Stash handles]
 * A handle is the address of a pith_tensor together with one C reference that its holder
 * owns: _stash(t) makes one for C code (which may pith_release it, or keep it), share(t)
 * makes one of an untagged alias for another interpreter, and _unstash(h) takes the
 * reference back as the tensor's wrapper, the same object when it still has one (See Note
 * [PyObject preservation in the bindings], tensor.c).
 * An integer proves nothing, so _unstash dereferences only an address found in the table
 * of live handles: address -> (references outstanding, the tag at stash time). The table is
 * per process, because handles cross interpreters, and behind a mutex, because they cross
 * threads; nothing that may call Python or pith_release runs under it.
 *  - An address not in the table (forged, or already taken back) is a ValueError.
 *  - A tensor tagged to another interpreter is pith.InterpreterError, and the reference
 *    stays with the caller; a dead owner's tensor is not dereferenced at all.
 *  - The table cannot see C code pith_release a handle's reference. Such entries go
 *    stale, and are removed when the tensor's wrapper finds that C holds no reference any
 *    more (its dealloc, or C's last release of a preserved wrapper: stash_forget, reached
 *    through the wrapper's TENSOR_STASHED flag so that a plain dealloc pays nothing), when
 *    _unstash finds fewer C references than the entry counts (the count is lowered to what
 *    can still exist), and when a new handle is made for the same address under another
 *    tag (a tensor is never re-tagged, so the old entry was another tensor's).
 * Beyond that, a handle is a pointer: C code that released a handle's reference must not
 * pass the handle to _unstash again, just as it must not release it twice. */

typedef struct {
    uintptr_t address; /* 0: empty */
    const pith_interpreter *tag;
    int64_t count;
} stash_entry;

static pthread_mutex_t stash_lock = PTHREAD_MUTEX_INITIALIZER;
static stash_entry *stash_slots; /* open addressing, linear probing */
static size_t stash_capacity;    /* a power of two, or 0 */
static size_t stash_used;

static size_t stash_home(uintptr_t address)
{
    uint64_t h = (uint64_t)address;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & (stash_capacity - 1);
}

/* All of the stash_* table functions run with stash_lock held. */
static stash_entry *stash_find(uintptr_t address)
{
    if (!stash_capacity)
        return NULL;
    for (size_t i = stash_home(address);; i = (i + 1) & (stash_capacity - 1)) {
        if (stash_slots[i].address == address)
            return &stash_slots[i];
        if (!stash_slots[i].address)
            return NULL;
    }
}

/* Backward-shift deletion: no tombstones, so lookups stay short. */
static void stash_remove(stash_entry *entry)
{
    size_t mask = stash_capacity - 1, hole = (size_t)(entry - stash_slots);
    for (size_t j = (hole + 1) & mask; stash_slots[j].address; j = (j + 1) & mask) {
        size_t home = stash_home(stash_slots[j].address);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            stash_slots[hole] = stash_slots[j];
            hole = j;
        }
    }
    stash_slots[hole] = (stash_entry){0, NULL, 0};
    stash_used--;
}

static stash_entry *stash_insert(uintptr_t address)
{
    size_t i = stash_home(address);
    while (stash_slots[i].address)
        i = (i + 1) & (stash_capacity - 1);
    stash_slots[i] = (stash_entry){address, NULL, 0};
    stash_used++;
    return &stash_slots[i];
}

static bool stash_grow(void)
{
    if (2 * (stash_used + 1) <= stash_capacity)
        return true;
    size_t old_capacity = stash_capacity, capacity = old_capacity ? 2 * old_capacity : 64;
    stash_entry *old = stash_slots, *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return false;
    stash_slots = slots;
    stash_capacity = capacity;
    stash_used = 0;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].address)
            *stash_insert(old[i].address) = old[i];
    free(old);
    return true;
}

/* Records one more outstanding reference of `t`; false when out of memory. */
static bool stash_put(const pith_tensor *t, const pith_interpreter *tag)
{
    pthread_mutex_lock(&stash_lock);
    stash_entry *entry = stash_find((uintptr_t)t);
    bool ok = entry || stash_grow();
    if (ok && !entry)
        entry = stash_insert((uintptr_t)t);
    if (ok && entry->tag != tag) {
        entry->tag = tag; /* the old entry was another tensor's: See Note [Stash handles] */
        entry->count = 0;
    }
    if (ok)
        entry->count++;
    pthread_mutex_unlock(&stash_lock);
    return ok;
}

void stash_forget(const pith_tensor *t)
{
    pthread_mutex_lock(&stash_lock);
    stash_entry *entry = stash_find((uintptr_t)t);
    if (entry)
        stash_remove(entry);
    pthread_mutex_unlock(&stash_lock);
}

/* How many references of `t` can be handles: all of C's, minus the wrapper's own when
 * Python owns its wrapper. */
static int64_t stash_references_possible(const pith_tensor *t)
{
    bool owns = false;
    void *wrapper = pith_slot_get(t, &owns);
    return pith_tensor_refcount(t) - (wrapper && !owns ? 1 : 0);
}

typedef enum { TAKE_OK, TAKE_UNKNOWN, TAKE_FOREIGN } take_result;

/* Takes one reference of handle `address` out of the table into *out, unless it is unknown
 * or belongs to another interpreter (then *foreign is its tag, and the table is as it was). */
static take_result stash_take(uintptr_t address, const pith_interpreter *interp,
                              pith_tensor **out, const pith_interpreter **foreign)
{
    take_result result = TAKE_UNKNOWN;
    pthread_mutex_lock(&stash_lock);
    stash_entry *entry = address ? stash_find(address) : NULL;
    if (entry && entry->tag && entry->tag != interp) {
        *foreign = entry->tag;
        result = TAKE_FOREIGN;
    } else if (entry) {
        int64_t possible = stash_references_possible((const pith_tensor *)address);
        if (entry->count > possible)
            entry->count = possible; /* C released some: See Note [Stash handles] */
        if (entry->count > 0) {
            *out = (pith_tensor *)address;
            result = TAKE_OK;
        }
        if (--entry->count <= 0)
            stash_remove(entry);
    }
    pthread_mutex_unlock(&stash_lock);
    return result;
}

/* ---- the Python functions ---- */

static pith_tensor *stash_tensor_arg(pith_module_state *st, PyObject *obj, const char *fn)
{
    if (!tensor_check(st, obj)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument must be a pith.Tensor, not %.200s", fn,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return tensor_of(obj);
}

/* Stashes `t` (a reference the caller gives up) and returns its handle; releases `t` and
 * returns NULL on failure. */
static PyObject *stash_handle(pith_tensor *t, const pith_interpreter *tag)
{
    PyObject *handle = PyLong_FromVoidPtr(t);
    if (handle && !stash_put(t, tag)) {
        Py_CLEAR(handle);
        PyErr_NoMemory();
    }
    if (!handle)
        pith_release(t);
    return handle;
}

static PyObject *stash_stash(PyObject *module, PyObject *obj)
{
    pith_module_state *st = state_of_module(module);
    pith_tensor *t = stash_tensor_arg(st, obj, "_stash");
    if (!t)
        return NULL;
    pith_retain(t);
    PyObject *handle = stash_handle(t, pith_tensor_interpreter(t));
    if (handle)
        ((pith_tensor_object *)obj)->flags |= TENSOR_STASHED;
    return handle;
}

/* The error of a handle whose tensor belongs to `owner`, another interpreter. A dead
 * owner's tensor may be gone with it, so its message is made here without reading it. */
static PyObject *stash_raise_foreign(pith_module_state *st, uintptr_t address,
                                     const pith_interpreter *owner)
{
    if (!pith_interpreter_is_disarmed(owner)) {
        pith_slot_check((const pith_tensor *)address, st->interp);
    } else {
        pith_set_error(PITH_ERR_INTERPRETER,
                       "interpreter %s cannot use this tensor: it belongs to interpreter %s "
                       "(which is dead: it was finalised)",
                       pith_interpreter_name(st->interp), pith_interpreter_name(owner));
    }
    return error_raise(st);
}

/* _unstash and from_shared, which `fn` names in errors. */
static PyObject *stash_take_back(PyObject *module, PyObject *handle, const char *fn)
{
    pith_module_state *st = state_of_module(module);
    if (!PyLong_Check(handle) || PyBool_Check(handle)) {
        PyErr_Format(PyExc_TypeError, "%s(): the handle must be an int, not %.200s", fn,
                     Py_TYPE(handle)->tp_name);
        return NULL;
    }
    unsigned long long value = PyLong_AsUnsignedLongLong(handle);
    if (PyErr_Occurred() || value > UINTPTR_MAX) {
        PyErr_Clear();
        value = 0; /* negative or too large: no address */
    }
    pith_tensor *t = NULL;
    const pith_interpreter *owner = NULL;
    switch (stash_take((uintptr_t)value, st->interp, &t, &owner)) {
    case TAKE_UNKNOWN:
        PyErr_Format(PyExc_ValueError,
                     "%s(): %R is not a live handle (it was never handed out, was already "
                     "taken back, or its reference was released)",
                     fn, handle);
        return NULL;
    case TAKE_FOREIGN:
        return stash_raise_foreign(st, (uintptr_t)value, owner);
    case TAKE_OK:
        break;
    }
    pith_retain(t); /* for tensor_wrap to steal even when it fails */
    PyObject *obj = tensor_wrap(st, t);
    if (!obj) {
        /* The reference stays with the caller (another interpreter may have claimed an
         * untagged tensor meanwhile): put it back. */
        if (!stash_put(t, pith_tensor_interpreter(t)))
            pith_release(t);
        return NULL;
    }
    pith_release(t); /* the handle's reference, taken back: the wrapper holds its own */
    return obj;
}

static PyObject *stash_unstash(PyObject *module, PyObject *handle)
{
    return stash_take_back(module, handle, "_unstash");
}

static PyObject *stash_from_shared(PyObject *module, PyObject *handle)
{
    return stash_take_back(module, handle, "from_shared");
}

/* share(t): see the method table's doc. */
static PyObject *stash_share(PyObject *module, PyObject *obj)
{
    pith_module_state *st = state_of_module(module);
    pith_tensor *t = stash_tensor_arg(st, obj, "share");
    if (!t)
        return NULL;
    pith_tensor *out = pith_alias(t); /* untagged, without the Python key, below Python */
    if (out && pith_storage_owner(t)) {
        /* A Python object's bytes belong to its interpreter: hand over a copy. */
        pith_tensor *alias = out;
        if (pith_numel(alias) >= PITH_GIL_RELEASE_NUMEL) {
            Py_BEGIN_ALLOW_THREADS
            out = pith_clone(alias);
            Py_END_ALLOW_THREADS
        } else {
            out = pith_clone(alias);
        }
        pith_release(alias);
    }
    if (!out)
        return error_raise(st);
    return stash_handle(out, NULL);
}

PyMethodDef stash_module_methods[] = {
    {"_stash", stash_stash, METH_O,
     "_stash(t) -> int: the address of t's pith_tensor, with one new C reference that the "
     "caller now owns (C code may pith_release it). _unstash takes it back."},
    {"_unstash", stash_unstash, METH_O,
     "_unstash(handle) -> Tensor: takes a handle's reference back and returns the tensor's "
     "wrapper (the same object, class and __dict__ when it has one). ValueError for an "
     "integer that is not a live handle; pith.InterpreterError for a tensor of another "
     "interpreter, and then the reference stays with the caller."},
    {"share", stash_share, METH_O,
     "share(t) -> int: a handle to a tensor over t's data that belongs to no interpreter "
     "yet, for another interpreter of this process to take with pith.from_shared: no copy "
     "for memory pith owns (pith_alias), a copy for memory owned by a Python object (NumPy, "
     "buffer or DLPack imports), which belongs to this interpreter. The handle holds one C "
     "reference until it is taken; C code may also pith_release((pith_tensor *)handle)."},
    {"from_shared", stash_from_shared, METH_O,
     "from_shared(handle) -> Tensor: takes the tensor of a pith.share handle, in any "
     "interpreter of the process, once. Its first interpreter to wrap it owns it from then "
     "on. ValueError for an integer that is not a live handle (never handed out, or already "
     "taken)."},
    {NULL},
};
