/* tensor.h — the layout of pith_tensor and its storage, for code inside libpith.
 *
 * Consumers see pith_tensor as opaque (pith.h). Here live the struct, the storage, the
 * constructors that kernels use to make outputs, and the small inline accessors of the hot
 * path. The PyObject slot is declared here and implemented in pyobj_slot.c. */
#ifndef PITH_CORE_TENSOR_H
#define PITH_CORE_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pith/pith.h"
#include "pith/interpreter.h"
#include "core/dtype.h"

/* A dispatch key set: one bit per key of dispatch/keys.h. core/ only stores it. */
typedef uint64_t pith_keyset;

/* Note [Version counter lives in the storage]
 * Views must share one version counter with their base, and so must pith_alias and
 * pith_detach results. All of these share the storage, so the counter is a field of the
 * storage: no extra allocation per tensor, and sharing follows from sharing the bytes.
 * Two tensors over one storage made by other means (two from_blob of one pointer) do not
 * share it, since they do not share the storage object. */
typedef struct pith_storage {
    atomic_int_fast64_t refcount;
    atomic_int_fast64_t version;
    void *data;    /* NULL for meta storage and for zero bytes */
    size_t nbytes; /* bytes the data holds (for meta: the bytes it would hold) */
    /* Who frees `data`: the allocator when `deleter` is NULL, else deleter(data, ctx). */
    void (*deleter)(void *data, void *ctx);
    void *ctx;
    /* Storage whose bytes are owned by a Python object (NumPy, buffer, DLPack) belongs to
     * that interpreter: the deleter runs only through it. NULL for everything else. */
    const pith_interpreter *owner;
    bool inline_data; /* data was allocated together with this struct */
    /* This header (and its data) lives inside a tensor's block: freeing it hands the
     * block back (See Note [Tensor blocks] in tensor.c). */
    bool in_tensor_block;
} pith_storage;

/* Flags of a tensor (bit set). */
enum {
    /* A 0-dim tensor made from a Python number: it promotes "weakly" (PyTorch's
     * wrapped number). */
    PITH_TENSOR_WRAPPED_NUMBER = 1u << 0,
    /* A wrapper subclass asks Python for these (see the interpreter table). */
    PITH_TENSOR_POLICY_STRIDES = 1u << 1, /* strides and is_contiguous */
    PITH_TENSOR_POLICY_SIZES = 1u << 2,   /* also sizes, dim and numel */
    PITH_TENSOR_POLICY_DEVICE = 1u << 3,
    /* Created in inference mode, or a view of such a tensor: See Note [Grad mode is per
     * thread] (grad_mode.c). */
    PITH_TENSOR_INFERENCE = 1u << 4,
};

/* The low bit of pith_tensor.pyobj: set while C owns the wrapper. See Note [PyObject
 * preservation] in pyobj_slot.c. */
#define PITH_PYOBJ_OWNS ((uintptr_t)1)

/* Key bits that core/ sets itself. core/ must not include dispatch/ headers, so the bit
 * values are repeated here; they must equal PITH_KEYSET(PITH_KEY_CPU / _META / _PYTHON /
 * _AUTOGRAD) of dispatch/keys.h (dispatch/ static-asserts this). An inference tensor carries
 * Autograd from birth: See Note [Inference tensors reach the autograd kernels]. */
#define TENSOR_KEY_CPU ((pith_keyset)1 << 0)
#define TENSOR_KEY_META ((pith_keyset)1 << 1)
#define TENSOR_KEY_PYTHON ((pith_keyset)1 << 2)
#define TENSOR_KEY_AUTOGRAD ((pith_keyset)1 << 4)

struct pith_tensor {
    atomic_int_fast64_t refcount;
    pith_storage *storage; /* never NULL; meta tensors have a data-less storage */
    int64_t offset;        /* in elements */
    int ndim;
    pith_dtype dtype;
    pith_device device;
    uint32_t flags;
    pith_keyset keys;
    bool contiguous; /* cached: row-major contiguous; kept true by tensor_set_geometry */
    int64_t numel;   /* cached product of sizes */
    int64_t sizes[PITH_MAX_DIMS];
    int64_t strides[PITH_MAX_DIMS];
    /* The PyObject slot. See Note [PyObject slot and interpreter tag] in pyobj_slot.c. */
    _Atomic(uintptr_t) pyobj;              /* PyObject * | PITH_PYOBJ_OWNS */
    _Atomic(pith_interpreter *) tag;
    /* Autograd state: NULL for a tensor that never required grad. core/ only frees it, with
     * the function the autograd layer installs. See Note [Autograd state behind one
     * pointer] in autograd/meta.c. */
    void *autograd;
};

/* Installed by the autograd layer at load; called by the last release of a tensor whose
 * `autograd` is set, before the tensor is freed. */
extern void (*tensor_autograd_release)(pith_tensor *t);

/* ---- construction (for kernels and factories) ---- */

/* A new contiguous tensor with uninitialised data; sizes are validated (negative sizes,
 * overflow, ndim range) and the error is set on failure. Backend key set from device. */
pith_tensor *tensor_new(int ndim, const int64_t *sizes, pith_dtype dtype, pith_device device);
/* A new contiguous CPU tensor with the shape of `like` (whose shape is valid, as every
 * tensor's is: nothing to check again) and `dtype` (valid). The output of a small op
 * without broadcasting; anything but small inline data goes through tensor_new. */
pith_tensor *tensor_new_shape_of(const pith_tensor *like, pith_dtype dtype);
/* Like tensor_new but with explicit strides (validated: non-negative, in range). */
pith_tensor *tensor_new_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                                pith_dtype dtype, pith_device device);
/* A view of `base`'s storage with new geometry; shares storage (and so the version
 * counter). Keeps base's dtype, device and key set minus the Python key. The geometry is
 * trusted to lie within the storage (view kernels validated it); only Note [Geometry fits
 * in int64] is checked again, which a view can break. NULL with the error set. */
pith_tensor *tensor_view(const pith_tensor *base, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset);
/* Points `t` at `storage` (retained; the old storage is released) at element `offset`,
 * keeping its geometry, and takes the inference flag from `like` (NULL: cleared). Only
 * for tensors that nothing outside their owner can see. See Note [Rebound view headers]. */
void tensor_rebind_storage(pith_tensor *t, pith_storage *storage, int64_t offset,
                           const pith_tensor *like);
/* Wraps existing storage (retained). */
pith_tensor *tensor_from_storage(pith_storage *storage, int ndim, const int64_t *sizes,
                                 const int64_t *strides, int64_t offset, pith_dtype dtype,
                                 pith_device device);
/* Validates a geometry as the constructors do (ndim range, NULL sizes, dtype, device,
 * negative sizes and strides, overflow, Note [Geometry fits in int64]) and gives the bytes
 * it spans. `what` names the
 * caller in the message. strides NULL means contiguous. */
bool tensor_geometry_check(const char *what, int ndim, const int64_t *sizes,
                           const int64_t *strides, pith_dtype dtype, pith_device device,
                           size_t *nbytes);
/* Whether a geometry satisfies Note [Geometry fits in int64] (tensor.c): strides and the
 * byte extent, offset included, scaled by `itemsize` fit in int64, and so does numel times
 * it. Sets PITH_ERR_VALUE naming `what` when not. Sizes must be valid (non-negative, numel
 * fits); strides may be negative (counted by absolute value), and NULL means contiguous. */
bool geometry_fits(const char *what, int ndim, const int64_t *sizes, const int64_t *strides,
                   int64_t offset, size_t itemsize);
/* Sets sizes/strides and recomputes numel and the contiguity cache. */
void tensor_set_geometry(pith_tensor *t, int ndim, const int64_t *sizes,
                         const int64_t *strides);
/* Resizes an `out=` tensor to `sizes` if its numel is 0 or it already matches, as PyTorch
 * does for out= arguments; other mismatches are PITH_ERR_VALUE. */
pith_status tensor_resize_out(pith_tensor *out, int ndim, const int64_t *sizes);

/* Row-major contiguous strides for sizes; returns false when numel overflows. */
bool shape_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
/* numel of sizes with overflow and negativity checks (sets the error). -1 on error. */
int64_t shape_numel_checked(int ndim, const int64_t *sizes);
bool shape_equal(int ndim_a, const int64_t *a, int ndim_b, const int64_t *b);
/* Formats sizes as "[2, 3]" into buf (always NUL-terminated). */
const char *shape_format(int ndim, const int64_t *sizes, char *buf, size_t cap);
/* Wraps a possibly negative dim into [0, ndim); sets PITH_ERR_INDEX and returns -1 when
 * out of range. For a 0-dim tensor, dims -1 and 0 are accepted as dim 0 (PyTorch). */
int dim_wrap(int64_t dim, int ndim);

/* ---- storage ---- */
/* Initialises a header: refcount 1, version 0, allocator-owned, no owner. */
void storage_init(pith_storage *s, void *data, size_t nbytes);
pith_storage *storage_new(size_t nbytes, pith_device device);
pith_storage *storage_from_blob(void *data, size_t nbytes, void (*deleter)(void *, void *),
                                void *ctx);
void storage_retain(pith_storage *s);
void storage_release(pith_storage *s);
/* Called by storage_release for storage with in_tensor_block set. */
void tensor_block_storage_free(pith_storage *s);

/* ---- inline accessors ---- */
static inline char *tensor_data(const pith_tensor *t)
{
    return t->storage->data
               ? (char *)t->storage->data + t->offset * (int64_t)dtype_itemsize(t->dtype)
               : NULL;
}
static inline void tensor_bump_version(const pith_tensor *t)
{
    atomic_fetch_add_explicit(&t->storage->version, 1, memory_order_relaxed);
}

#endif /* PITH_CORE_TENSOR_H */
