/* storage.c — refcounted bytes: allocator-owned (inline for small sizes), external with a
 * deleter (pith_from_blob), or data-less (meta). */
#include <stdlib.h>
#include <string.h>

#include "core/allocator.h"
#include "core/error.h"
#include "core/interpreter_internal.h"
#include "core/tensor.h"

/* Note [Inline storage]
 * Tiny tensors are dominated by fixed costs: an unboxed add of two 1-element tensors
 * should cost tens of nanoseconds, output allocation included. Storage of at most
 * STORAGE_INLINE_MAX bytes is therefore one malloc holding the header and the data, with
 * the data aligned up to PITH_ALIGNMENT inside the block. malloc (not posix_memalign,
 * which bypasses glibc's thread cache) keeps this on the allocator's fast path. */
#define STORAGE_INLINE_MAX 512
#define STORAGE_INLINE_SLACK (PITH_ALIGNMENT - 1)

void storage_init(pith_storage *s, void *data, size_t nbytes)
{
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->data = data;
    s->nbytes = nbytes;
    s->deleter = NULL;
    s->ctx = NULL;
    s->owner = NULL;
    s->inline_data = false;
    s->in_tensor_block = false;
}

static pith_storage *storage_new_inline(size_t nbytes)
{
    char *block = malloc(sizeof(pith_storage) + STORAGE_INLINE_SLACK + nbytes);
    if (!block)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory allocating %zu bytes", nbytes);
    uintptr_t data = (uintptr_t)(block + sizeof(pith_storage));
    data = (data + PITH_ALIGNMENT - 1) & ~(uintptr_t)(PITH_ALIGNMENT - 1);
    pith_storage *s = (pith_storage *)block;
    storage_init(s, (void *)data, nbytes);
    s->inline_data = true;
    return s;
}

pith_storage *storage_new(size_t nbytes, pith_device device)
{
    if (device == PITH_CPU && nbytes > 0 && nbytes <= STORAGE_INLINE_MAX)
        return storage_new_inline(nbytes);
    pith_storage *s = malloc(sizeof *s);
    if (!s)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory allocating storage");
    void *data = NULL;
    if (device == PITH_CPU && nbytes > 0) {
        data = alloc_bytes(nbytes);
        if (!data) {
            free(s);
            return NULL;
        }
    }
    storage_init(s, data, nbytes);
    return s;
}

/* Storage over memory that pith must not free (from_blob without a deleter). */
static void deleter_none(void *data, void *ctx)
{
}

pith_storage *storage_from_blob(void *data, size_t nbytes, void (*deleter)(void *, void *),
                                void *ctx)
{
    pith_storage *s = malloc(sizeof *s);
    if (!s)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "out of memory allocating storage");
    storage_init(s, data, nbytes);
    s->deleter = deleter ? deleter : deleter_none;
    s->ctx = ctx;
    return s;
}

/* See Note [Interpreter disarm] (interpreter.c): the bytes of storage whose owner is set
 * belong to a Python object of that interpreter, so storage_free runs the deleter only
 * through it, and pith.share copies such storage instead of aliasing it. */
pith_status pith_storage_set_owner(pith_tensor *t, const pith_interpreter *owner)
{
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_storage_set_owner: tensor is NULL");
    pith_storage *s = t->storage;
    if (owner && (s->deleter == NULL || s->deleter == deleter_none))
        return pith_set_error(PITH_ERR_VALUE,
                              "pith_storage_set_owner: only storage with a deleter "
                              "(pith_from_blob) can belong to an interpreter");
    s->owner = owner;
    return PITH_OK;
}

const pith_interpreter *pith_storage_owner(const pith_tensor *t)
{
    if (!t) {
        pith_set_error(PITH_ERR_VALUE, "pith_storage_owner: tensor is NULL");
        return NULL;
    }
    return t->storage->owner;
}

void storage_retain(pith_storage *s)
{
    atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

static void storage_free(pith_storage *s)
{
    if (s->in_tensor_block) {
        tensor_block_storage_free(s);
        return;
    }
    if (s->inline_data) {
        free(s);
        return;
    }
    if (s->deleter) {
        /* Bytes owned by a Python object go back only through its interpreter; after it
         * died they leak (See Note [Interpreter disarm] in interpreter.c). */
        if (s->owner)
            interp_run_deleter(s->owner, s->deleter, s->data, s->ctx);
        else
            s->deleter(s->data, s->ctx);
    } else {
        alloc_free(s->data, s->nbytes);
    }
    free(s);
}

void storage_release(pith_storage *s)
{
    if (!s)
        return;
    /* The sole holder needs no read-modify-write: nobody else can retain it meanwhile.
     * acq_rel rather than release + fence: TSan does not model standalone fences. */
    if (atomic_load_explicit(&s->refcount, memory_order_acquire) != 1 &&
        atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1)
        return;
    storage_free(s);
}
