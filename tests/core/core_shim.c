/* core_shim.c — exposes core internals and fake interpreters to the C++ tests. */
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/allocator.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/interpreter_internal.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "core_shim.h"

/* ---- tensor internals ---- */

pith_tensor *shim_tensor_new(int ndim, const int64_t *sizes, pith_dtype dtype,
                             pith_device device)
{
    return tensor_new(ndim, sizes, dtype, device);
}
pith_tensor *shim_tensor_view(const pith_tensor *base, int ndim, const int64_t *sizes,
                              const int64_t *strides, int64_t offset)
{
    return tensor_view(base, ndim, sizes, strides, offset);
}
pith_tensor *shim_tensor_from_storage_of(const pith_tensor *base, int ndim,
                                         const int64_t *sizes, const int64_t *strides,
                                         int64_t offset, pith_dtype dtype)
{
    return tensor_from_storage(base->storage, ndim, sizes, strides, offset, dtype,
                               base->device);
}
pith_status shim_tensor_resize_out(pith_tensor *out, int ndim, const int64_t *sizes)
{
    return tensor_resize_out(out, ndim, sizes);
}
void shim_bump_version(const pith_tensor *t) { tensor_bump_version(t); }
int64_t shim_storage_refcount(const pith_tensor *t) { return (int64_t)atomic_load(&t->storage->refcount); }
size_t shim_storage_nbytes(const pith_tensor *t) { return t->storage->nbytes; }
bool shim_storage_inline(const pith_tensor *t)
{
    return t->storage->inline_data || t->storage->in_tensor_block;
}
const void *shim_storage_data(const pith_tensor *t) { return t->storage->data; }
uint64_t shim_keys(const pith_tensor *t) { return t->keys; }
uint32_t shim_flags(const pith_tensor *t) { return t->flags; }
uint32_t shim_flag_wrapped_number(void) { return PITH_TENSOR_WRAPPED_NUMBER; }
uint32_t shim_flag_policy_strides(void) { return PITH_TENSOR_POLICY_STRIDES; }
uint32_t shim_flag_policy_sizes(void) { return PITH_TENSOR_POLICY_SIZES; }
uint32_t shim_flag_policy_device(void) { return PITH_TENSOR_POLICY_DEVICE; }
uint64_t shim_key_python(void) { return TENSOR_KEY_PYTHON; }
uint64_t shim_key_cpu(void) { return TENSOR_KEY_CPU; }
uint64_t shim_key_meta(void) { return TENSOR_KEY_META; }
int shim_dim_wrap(int64_t dim, int ndim) { return dim_wrap(dim, ndim); }
const char *shim_shape_format(int ndim, const int64_t *sizes, char *buf, size_t cap)
{
    return shape_format(ndim, sizes, buf, cap);
}
int64_t shim_shape_numel_checked(int ndim, const int64_t *sizes)
{
    return shape_numel_checked(ndim, sizes);
}
void shim_set_storage_owner(pith_tensor *t, const pith_interpreter *owner)
{
    t->storage->owner = owner;
}
pith_status shim_error_prefix(const char *prefix) { return error_prefix("%s", prefix); }

/* ---- dtype ---- */

uint16_t shim_float_to_half(float f) { return float_to_half(f); }
float shim_half_to_float(uint16_t h) { return half_to_float(h); }
uint16_t shim_ref_float_to_half(float f)
{
    _Float16 h = (_Float16)f;
    uint16_t bits;
    memcpy(&bits, &h, sizeof bits);
    return bits;
}
float shim_ref_half_to_float(uint16_t bits)
{
    _Float16 h;
    memcpy(&h, &bits, sizeof h);
    return (float)h;
}
uint16_t shim_float_to_bfloat16(float f) { return float_to_bfloat16(f); }
float shim_bfloat16_to_float(uint16_t b) { return bfloat16_to_float(b); }
static float bf16_bits_value(uint32_t top)
{
    uint32_t bits = top << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
uint16_t shim_ref_float_to_bfloat16(float f)
{
    /* Independent reference: pick the nearer of the two bfloat16 neighbours in double
     * arithmetic, ties to the even one; overflow past the largest finite goes to inf. */
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (isnan(f))
        return (uint16_t)((bits >> 16) | 0x40u);
    uint32_t lo = bits >> 16;
    if ((bits & 0xffffu) == 0)
        return (uint16_t)lo;
    uint32_t hi = lo + 1;
    double dlo = bf16_bits_value(lo), dhi = bf16_bits_value(hi), d = f;
    if ((hi & 0x7fffu) == 0x7f80u) /* hi is inf: compare with the midpoint 2^128 - 2^119 */
        dhi = copysign(ldexp(1.0, 128), d);
    double elo = fabs(d - dlo), ehi = fabs(dhi - d);
    if (elo < ehi)
        return (uint16_t)lo;
    if (ehi < elo)
        return (uint16_t)hi;
    return (uint16_t)((lo & 1u) ? hi : lo);
}
double shim_load_double(pith_dtype dtype, const void *p) { return dtype_load_double(dtype, p); }
void shim_store_double(pith_dtype dtype, void *p, double v) { dtype_store_double(dtype, p, v); }
int64_t shim_load_int64(pith_dtype dtype, const void *p) { return dtype_load_int64(dtype, p); }

#define SHIM_ENUM_(x, E, ...) out[n++] = E;
#define SHIM_ENUM_ROW_(tag, x) PITH_DTYPE_COLUMNS(SHIM_ENUM_, tag, x)
int shim_dtype_list(const char *list, pith_dtype *out)
{
    int n = 0;
    if (!strcmp(list, "all")) {
        PITH_FORALL_DTYPES(SHIM_ENUM_ROW_, 0)
    } else if (!strcmp(list, "nested")) {
        PITH_FORALL_DTYPES_NESTED(SHIM_ENUM_ROW_, 0)
    } else if (!strcmp(list, "integral")) {
        PITH_FORALL_INTEGRAL_DTYPES(SHIM_ENUM_ROW_, 0)
    } else if (!strcmp(list, "signed_integral")) {
        PITH_FORALL_SIGNED_INTEGRAL_DTYPES(SHIM_ENUM_ROW_, 0)
    } else if (!strcmp(list, "floating")) {
        PITH_FORALL_FLOATING_DTYPES(SHIM_ENUM_ROW_, 0)
    } else if (!strcmp(list, "reduced_floating")) {
        PITH_FORALL_REDUCED_FLOATING_DTYPES(SHIM_ENUM_ROW_, 0)
    } else {
        return -1;
    }
    return n;
}

#define SHIM_FACTS_(what, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, NAME, SIGNED, DIGITS,  \
                    MAX_EXP, LOWEST, HIGHEST)                                               \
    case E:                                                                                 \
        return what == 0 ? (double)sizeof(T) : what == 1 ? (double)(LOWEST) : (double)(HIGHEST);
#define SHIM_FACTS_ROW_(tag, what) PITH_DTYPE_COLUMNS(SHIM_FACTS_, tag, what)
static double dtype_table_fact(pith_dtype dtype, int what)
{
    switch (dtype) {
        PITH_FORALL_DTYPES(SHIM_FACTS_ROW_, what)
    }
    return -1;
}
size_t shim_dtype_table_size(pith_dtype dtype) { return (size_t)dtype_table_fact(dtype, 0); }
double shim_dtype_table_lowest(pith_dtype dtype) { return dtype_table_fact(dtype, 1); }
double shim_dtype_table_highest(pith_dtype dtype) { return dtype_table_fact(dtype, 2); }

/* ---- allocator, parallel ---- */

void *shim_alloc(size_t nbytes) { return alloc_bytes(nbytes); }
void shim_free(void *p, size_t nbytes) { alloc_free(p, nbytes); }
size_t shim_size_class(size_t nbytes) { return alloc_size_class(nbytes); }
size_t shim_cache_min_block(void) { return PITH_CACHE_MIN_BLOCK; }
size_t shim_cache_default_limit(void) { return PITH_CACHE_DEFAULT_LIMIT; }
int shim_threads_for(int64_t work) { return parallel_threads_for(work); }
int64_t shim_grain_size(void) { return PITH_GRAIN_SIZE; }

/* ---- interpreter internals ---- */

void shim_interp_decref(const pith_interpreter *interp, void *pyobj)
{
    interp_call_decref(interp, pyobj);
}
pith_status shim_interp_detach(const pith_tensor *t, pith_tensor **out)
{
    return interp_call_detach(t, out);
}
pith_status shim_interp_dispatch(const pith_interpreter *interp)
{
    return interp_call_dispatch(interp, NULL, NULL);
}
size_t shim_interp_registered_count(void) { return interp_registered_count(); }

/* ---- fake interpreters ---- */

enum { FAKE_DECREF, FAKE_DETACH, FAKE_DISPATCH, FAKE_IS_CONTIGUOUS, FAKE_DEVICE, FAKE_SIZES,
       FAKE_STRIDES, FAKE_NUM_ENTRIES };
static const char *const fake_entry_names[FAKE_NUM_ENTRIES] = {
    "decref", "detach", "dispatch", "is_contiguous", "device", "sizes", "strides"};

struct fake_interp {
    pith_interpreter *table;
    atomic_llong calls[FAKE_NUM_ENTRIES];
    _Atomic(void *) last_decref;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
    pith_device device;
    bool contiguous;
    atomic_bool fail, block, entered, unblocked;
    _Atomic(const pith_tensor *) watch;
    atomic_llong refcount_seen;
};

static fake_interp *fake_of(const pith_interpreter *interp)
{
    return pith_interpreter_ctx(interp);
}
static pith_status fake_count(const pith_interpreter *interp, int entry)
{
    fake_interp *f = fake_of(interp);
    atomic_fetch_add(&f->calls[entry], 1);
    if (atomic_load(&f->fail))
        return pith_set_error(PITH_ERR_RUNTIME, "fake %s failed",
                              fake_entry_names[entry]);
    return PITH_OK;
}
static void fake_decref(const pith_interpreter *interp, void *pyobj)
{
    fake_interp *f = fake_of(interp);
    atomic_fetch_add(&f->calls[FAKE_DECREF], 1);
    atomic_store(&f->last_decref, pyobj);
    const pith_tensor *w = atomic_load(&f->watch);
    if (w)
        atomic_store(&f->refcount_seen, pith_tensor_refcount(w));
}
static pith_status fake_detach(const pith_interpreter *interp, const pith_tensor *self,
                               pith_tensor **out)
{
    pith_status s = fake_count(interp, FAKE_DETACH);
    if (s == PITH_OK)
        *out = pith_scalar_tensor(7.0, PITH_FLOAT32);
    return s;
}
static pith_status fake_dispatch(const pith_interpreter *interp, const pith_op *op,
                                 pith_stack *stack)
{
    fake_interp *f = fake_of(interp);
    pith_status s = fake_count(interp, FAKE_DISPATCH);
    if (atomic_load(&f->block)) {
        atomic_store(&f->entered, true);
        while (!atomic_load(&f->unblocked))
            sched_yield();
    }
    return s;
}
static pith_status fake_is_contiguous(const pith_interpreter *interp, const pith_tensor *self,
                                      bool *out)
{
    pith_status s = fake_count(interp, FAKE_IS_CONTIGUOUS);
    if (s == PITH_OK)
        *out = fake_of(interp)->contiguous;
    return s;
}
static pith_status fake_device(const pith_interpreter *interp, const pith_tensor *self,
                               pith_device *out)
{
    pith_status s = fake_count(interp, FAKE_DEVICE);
    if (s == PITH_OK)
        *out = fake_of(interp)->device;
    return s;
}
static pith_status fake_sizes(const pith_interpreter *interp, const pith_tensor *self,
                              int *ndim, int64_t *sizes)
{
    fake_interp *f = fake_of(interp);
    pith_status s = fake_count(interp, FAKE_SIZES);
    if (s == PITH_OK) {
        *ndim = f->ndim;
        memcpy(sizes, f->sizes, sizeof f->sizes);
    }
    return s;
}
static pith_status fake_strides(const pith_interpreter *interp, const pith_tensor *self,
                                int *ndim, int64_t *strides)
{
    fake_interp *f = fake_of(interp);
    pith_status s = fake_count(interp, FAKE_STRIDES);
    if (s == PITH_OK) {
        *ndim = f->ndim;
        memcpy(strides, f->strides, sizeof f->strides);
    }
    return s;
}

static const pith_interpreter_vtable fake_vtable = {
    .decref = fake_decref,
    .detach = fake_detach,
    .dispatch = fake_dispatch,
    .is_contiguous = fake_is_contiguous,
    .device = fake_device,
    .sizes = fake_sizes,
    .strides = fake_strides,
};

fake_interp *fake_new(const char *name)
{
    fake_interp *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->table = pith_interpreter_register(name, &fake_vtable, f);
    if (!f->table) {
        free(f);
        return NULL;
    }
    return f;
}
void fake_free(fake_interp *f)
{
    /* The table outlives the record: point its ctx-based entries at nothing by disarming,
     * so a late call cannot reach freed memory. */
    if (f && !pith_interpreter_is_disarmed(f->table))
        pith_interpreter_disarm(f->table);
    free(f);
}
pith_interpreter *fake_table(fake_interp *f) { return f->table; }
int64_t fake_calls(fake_interp *f, const char *entry)
{
    for (int i = 0; i < FAKE_NUM_ENTRIES; i++)
        if (!strcmp(entry, fake_entry_names[i]))
            return atomic_load(&f->calls[i]);
    return -1;
}
void *fake_last_decref(fake_interp *f) { return atomic_load(&f->last_decref); }
void fake_set_sizes(fake_interp *f, int ndim, const int64_t *sizes, const int64_t *strides)
{
    f->ndim = ndim;
    for (int i = 0; i < ndim && i < PITH_MAX_DIMS; i++) {
        f->sizes[i] = sizes[i];
        f->strides[i] = strides[i];
    }
}
void fake_set_device(fake_interp *f, pith_device device, bool contiguous)
{
    f->device = device;
    f->contiguous = contiguous;
}
void fake_set_fail(fake_interp *f, bool fail) { atomic_store(&f->fail, fail); }
void fake_set_block(fake_interp *f, bool block) { atomic_store(&f->block, block); }
bool fake_entered(fake_interp *f) { return atomic_load(&f->entered); }
void fake_unblock(fake_interp *f) { atomic_store(&f->unblocked, true); }
int64_t fake_refcount_seen_in_decref(fake_interp *f) { return atomic_load(&f->refcount_seen); }
void fake_set_watch(fake_interp *f, const pith_tensor *t) { atomic_store(&f->watch, t); }
