/* elementwise_copy.c — dtype conversion: the 100 cast loops and the byte-copy loops, and
 * the ops built on them: copy_, to (dtype), clone, contiguous. */
#include <string.h>

#include "kernels/elementwise.h"
#include "kernels/elementwise_loops.h"
#include "kernels/ops_internal.h"

/* Note [Float to integer conversion]
 * C leaves float-to-integer conversion undefined when the value does not fit, so a cast
 * loop never converts an unchecked float. NaN gives 0; the infinities and values beyond
 * the int64 range saturate at the target type's minimum or maximum; every other value is
 * truncated to int64 and then wraps to the target width like any integer conversion. For
 * values within int64 this is what PyTorch gives on x86 (300.0 -> uint8 is 44, -1.0 ->
 * uint8 is 255); the rest, which PyTorch leaves to the hardware, is defined here as above.
 * Conversion to bool is `x != 0`, so NaN is true. Integers convert to each other by
 * wrapping (computed in unsigned types). */
/* The integer limits of a destination (its lowest and highest in the dtype table, See
 * Note [The dtype table] in core/dtype.h); CONVERT_I_F names them for integer tags only. */
#define INT_MIN_(x, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, NAME, SIGNED, DIGITS, MAX_EXP, \
                 LOWEST, HIGHEST)                                                           \
    LOWEST
#define INT_MAX_(x, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, NAME, SIGNED, DIGITS, MAX_EXP, \
                 LOWEST, HIGHEST)                                                           \
    HIGHEST
#define INT_MIN(tag) PITH_DTYPE_COLUMNS(INT_MIN_, tag, 0)
#define INT_MAX(tag) PITH_DTYPE_COLUMNS(INT_MAX_, tag, 0)

/* The conversion expression from the kind of the source to the kind of the destination
 * (see EW_KIND in elementwise_loops.h); `a` is the source value in its compute type. */
#define CONVERT_EXPR(dtag, stag) CONVERT_EXPR_(EW_KIND(dtag), EW_KIND(stag), dtag)
#define CONVERT_EXPR_(kd, ks, dtag) CONVERT_EXPR__(kd, ks, dtag)
#define CONVERT_EXPR__(kd, ks, dtag) CONVERT_##kd##_##ks(dtag)
#define CONVERT_B_B(dtag) (a)
#define CONVERT_B_I(dtag) (a != 0)
#define CONVERT_B_F(dtag) (a != 0)
#define CONVERT_I_B(dtag) ((TO)(UO)(a))
#define CONVERT_I_I(dtag) ((TO)(UO)(a))
#define CONVERT_I_F(dtag)                                                                   \
    (a != a                              ? (TO)0                                            \
     : a >= (T)9223372036854775808.0     ? (TO)INT_MAX(dtag)                                \
     : a < (T)-9223372036854775808.0     ? (TO)INT_MIN(dtag)                                \
                                         : (TO)(UO)(int64_t)a)
#define CONVERT_F_B(dtag) ((TO)(a))
#define CONVERT_F_I(dtag) ((TO)(a))
#define CONVERT_F_F(dtag) ((TO)(a))

/* cast_<dst>_<src> for every pair: the inner list is PITH_FORALL_DTYPES_NESTED, because a
 * macro cannot expand inside itself. */
#define CAST_DEFINE(stag, dtag)                                                             \
    EW_UNARY_LOOP(cast_##dtag##_##stag, stag, dtag, , CONVERT_EXPR(dtag, stag))
#define CAST_DEFINE_ROW(dtag, unused) PITH_FORALL_DTYPES_NESTED(CAST_DEFINE, dtag)
EW_TAGS_ALL(CAST_DEFINE_ROW, 0)

#define CAST_ENTRY(stag, dtag) [EW_DTYPE(stag)] = cast_##dtag##_##stag,
#define CAST_ROW(dtag, unused) [EW_DTYPE(dtag)] = {PITH_FORALL_DTYPES_NESTED(CAST_ENTRY, dtag)},
static const elementwise_loop cast_loops[PITH_NUM_DTYPES][PITH_NUM_DTYPES] = {
    EW_TAGS_ALL(CAST_ROW, 0)};

/* Same-dtype copies move bytes (keeping NaN payloads), by element size. */
#define COPY_LOOP(bytes, type)                                                              \
    static int copy_##bytes(char **args, const int64_t *n, const int64_t *s, void *ctx)     \
    {                                                                                       \
        (void)ctx;                                                                          \
        const int64_t len = n[0];                                                           \
        if (s[0] == bytes && s[1] == bytes) {                                               \
            if (args[0] != args[1])                                                         \
                memcpy(args[0], args[1], (size_t)len * bytes);                              \
        } else if (s[0] == bytes && s[1] == 0) {                                            \
            type *o = (type *)args[0];                                                      \
            const type v = *(const type *)args[1];                                          \
            for (int64_t i = 0; i < len; i++)                                               \
                o[i] = v;                                                                   \
        } else {                                                                            \
            for (int64_t i = 0; i < len; i++)                                               \
                *(type *)(args[0] + i * s[0]) = *(const type *)(args[1] + i * s[1]);        \
        }                                                                                   \
        return 0;                                                                           \
    }
COPY_LOOP(1, uint8_t)
COPY_LOOP(2, uint16_t)
COPY_LOOP(4, uint32_t)
COPY_LOOP(8, uint64_t)

elementwise_loop cast_loop(pith_dtype dst, pith_dtype src)
{
    if (dst != src)
        return cast_loops[dst][src];
    switch (dtype_itemsize(dst)) {
    case 1:
        return copy_1;
    case 2:
        return copy_2;
    case 4:
        return copy_4;
    default:
        return copy_8;
    }
}

/* ---- copy_ ---- */

static pith_status copy_check(bool meta, const pith_tensor *self, const pith_tensor *src)
{
    if (elementwise_check_devices("copy_", meta, 1, &src, self) != PITH_OK)
        return pith_last_status();
    if (broadcast_check_into("copy_", self, src) != PITH_OK)
        return pith_last_status();
    return elementwise_check_no_overlap("copy_", self);
}

pith_status copy__cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                      const pith_tensor *src, bool non_blocking)
{
    if (copy_check(false, self, src) != PITH_OK)
        return pith_last_status();
    if (elementwise_copy("copy_", (pith_tensor *)self, src) != PITH_OK)
        return pith_last_status();
    tensor_bump_version(self);
    return ret_self(ret, self);
}

pith_status copy__meta(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       const pith_tensor *src, bool non_blocking)
{
    if (copy_check(true, self, src) != PITH_OK)
        return pith_last_status();
    tensor_bump_version(self);
    return ret_self(ret, self);
}

/* ---- to, clone: a new tensor of self's shape filled by copy_; contiguous ---- */

/* to and clone run at the CPU or Meta key (below Autograd, which has their formulas); the
 * copy_ they call goes to the same backend. */
static pith_status tensor_copy_as(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                  pith_dtype dtype)
{
    pith_tensor *t = tensor_new(self->ndim, self->sizes, dtype, self->device);
    if (!t)
        return pith_last_status();
    pith_value copied[1];
    if (pith_redispatch_copy_(ks & PITH_KEYSET_BACKENDS, copied, t, self, false) != PITH_OK) {
        pith_release(t);
        return pith_last_status();
    }
    pith_release(copied[0].u.t);
    return ret_tensor(ret, t);
}

pith_status to_dtype_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               pith_dtype dtype, bool non_blocking, bool copy)
{
    if (!dtype_valid((int)dtype))
        return pith_set_error(PITH_ERR_TYPE, "to: invalid dtype %d", (int)dtype);
    if (self->dtype == dtype && !copy)
        return ret_self(ret, self);
    return tensor_copy_as(ks, ret, self, dtype);
}

pith_status clone_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    return tensor_copy_as(ks, ret, self, self->dtype);
}

/* contiguous is composite implicit, as PyTorch's: self when it is contiguous (history and
 * all), else a clone, which records CloneBackward0 (See Note [Composites call their parts
 * through the dispatcher], ops_internal.h). */
pith_status contiguous_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self)
{
    if (self->contiguous)
        return ret_self(ret, self);
    return composite_at_autograd(ks) ? pith_redispatch_clone(ks, ret, self)
                                     : tensor_copy_as(ks, ret, self, self->dtype);
}
