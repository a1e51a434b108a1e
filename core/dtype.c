/* dtype.c — dtype and device names, sizes, categories, PyTorch's promote_types, and the
 * generic element load/store used by slow paths (item, fill, conversions).
 *
 * The fast paths live in kernels/, specialised per dtype from the dtype table (See Notes
 * [The dtype table] and [Bool bytes] in dtype.h). */
#include <stdatomic.h>
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "core/error.h"

/* The facts that functions look up at run time, from the dtype table (See Note [The dtype
 * table] in dtype.h): name, bytes, signedness, and for the floating dtypes their binary
 * format. finfo and iinfo in Python and the float ranges of the kernels derive from it
 * (pith_dtype_float_format). */
#define DTYPE_INFO_(x, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, NAME, SIGNED, DIGITS,     \
                    MAX_EXP, ...)                                                           \
    [E] = {NAME, sizeof(T), SIGNED, DIGITS, MAX_EXP},
#define DTYPE_INFO_ROW_(tag, x) PITH_DTYPE_COLUMNS(DTYPE_INFO_, tag, x)
static const struct {
    const char *name;
    size_t size;
    bool is_signed;
    int digits, max_exponent;
} dtype_info[PITH_NUM_DTYPES] = {PITH_FORALL_DTYPES(DTYPE_INFO_ROW_, 0)};
#undef DTYPE_INFO_ROW_
#undef DTYPE_INFO_

/* PyTorch's other spellings (torch.float, torch.long, ...). */
static const struct {
    const char *name;
    pith_dtype dtype;
} dtype_aliases[] = {
    {"float", PITH_FLOAT32}, {"double", PITH_FLOAT64}, {"half", PITH_FLOAT16},
    {"long", PITH_INT64},    {"int", PITH_INT32},      {"short", PITH_INT16},
};

const char *pith_dtype_name(pith_dtype dtype)
{
    if (!dtype_valid((int)dtype)) {
        pith_set_error(PITH_ERR_TYPE, "invalid dtype %d", (int)dtype);
        return "invalid";
    }
    return dtype_info[dtype].name;
}

size_t pith_dtype_size(pith_dtype dtype)
{
    if (!dtype_valid((int)dtype)) {
        pith_set_error(PITH_ERR_TYPE, "invalid dtype %d", (int)dtype);
        return 0;
    }
    return dtype_info[dtype].size;
}

const char *pith_device_name(pith_device device)
{
    switch (device) {
    case PITH_CPU: return "cpu";
    case PITH_META: return "meta";
    }
    pith_set_error(PITH_ERR_VALUE, "invalid device %d", (int)device);
    return "invalid";
}

bool pith_dtype_from_name(const char *name, pith_dtype *out)
{
    if (!name || !out)
        return false;
    /* Accept "torch.float32" and "pith.float32" as written in Python reprs. */
    if (!strncmp(name, "torch.", 6))
        name += 6;
    else if (!strncmp(name, "pith.", 5))
        name += 5;
    for (int d = 0; d < PITH_NUM_DTYPES; d++) {
        if (!strcmp(name, dtype_info[d].name)) {
            *out = (pith_dtype)d;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++) {
        if (!strcmp(name, dtype_aliases[i].name)) {
            *out = dtype_aliases[i].dtype;
            return true;
        }
    }
    return false;
}

bool pith_dtype_is_floating(pith_dtype dtype)
{
    return dtype_valid((int)dtype) && dtype_is_floating(dtype);
}

bool pith_dtype_is_signed(pith_dtype dtype)
{
    return dtype_valid((int)dtype) && dtype_info[dtype].is_signed;
}

bool pith_dtype_float_format(pith_dtype dtype, int *digits, int *max_exponent)
{
    if (!pith_dtype_is_floating(dtype))
        return false;
    if (digits)
        *digits = dtype_info[dtype].digits;
    if (max_exponent)
        *max_exponent = dtype_info[dtype].max_exponent;
    return true;
}

/* Relaxed is enough: the value is one int, and a set races with no other state. */
static _Atomic int default_dtype = PITH_FLOAT32;

pith_dtype pith_get_default_dtype(void)
{
    return (pith_dtype)atomic_load_explicit(&default_dtype, memory_order_relaxed);
}

pith_status pith_set_default_dtype(pith_dtype dtype)
{
    if (!pith_dtype_is_floating(dtype))
        return pith_set_error(PITH_ERR_TYPE, "only floating-point types are supported as the "
                                             "default type, not %s",
                              dtype_valid((int)dtype) ? pith_dtype_name(dtype) : "an invalid dtype");
    atomic_store_explicit(&default_dtype, (int)dtype, memory_order_relaxed);
    return PITH_OK;
}

bool pith_dtype_is_integral(pith_dtype dtype, bool include_bool)
{
    return dtype_valid((int)dtype) &&
           (dtype_is_integral(dtype) || (include_bool && dtype == PITH_BOOL));
}

/* Note [promote_types]
 * PyTorch's rules for two tensor dtypes: categories rank bool < integral < floating and the
 * higher category wins; within integers the wider type wins, except that uint8 with a
 * signed type needs the next signed type that holds both (uint8+int8 -> int16); within
 * floats the wider wins, except float16+bfloat16 -> float32 (neither holds the other). */
pith_dtype dtype_promote(pith_dtype a, pith_dtype b)
{
    if (a == b)
        return a;
    if (a == PITH_BOOL)
        return b;
    if (b == PITH_BOOL)
        return a;
    bool fa = dtype_is_floating(a), fb = dtype_is_floating(b);
    if (fa != fb)
        return fa ? a : b;
    if (fa) {
        if ((a == PITH_FLOAT16 && b == PITH_BFLOAT16) || (a == PITH_BFLOAT16 && b == PITH_FLOAT16))
            return PITH_FLOAT32;
        return a > b ? a : b; /* enum order float16/bfloat16 < float32 < float64 */
    }
    if (a == PITH_UINT8 || b == PITH_UINT8) {
        pith_dtype other = a == PITH_UINT8 ? b : a;
        return other == PITH_INT8 ? PITH_INT16 : other;
    }
    return a > b ? a : b; /* signed ints in order of width */
}

pith_dtype pith_promote_types(pith_dtype a, pith_dtype b)
{
    if (!dtype_valid((int)a) || !dtype_valid((int)b)) {
        pith_set_error(PITH_ERR_TYPE, "promote_types: invalid dtype %d",
                       (int)(dtype_valid((int)a) ? b : a));
        return PITH_FLOAT32;
    }
    return dtype_promote(a, b);
}

/* ---- generic load / store ---- */

/* Each element through its table row's LOAD (See Note [Bool bytes] for bool). */
#define DTYPE_LOAD_CASE_(cast, E, tag, T, CT, UT, ACC, LOAD, ...)                           \
    case E:                                                                                 \
        return cast LOAD(*(const T *)p);
#define DTYPE_LOAD_ROW_(tag, cast) PITH_DTYPE_COLUMNS(DTYPE_LOAD_CASE_, tag, cast)

double dtype_load_double(pith_dtype dtype, const void *p)
{
    switch (dtype) {
        PITH_FORALL_DTYPES(DTYPE_LOAD_ROW_, (double))
    }
    return 0.0;
}

int64_t dtype_load_int64(pith_dtype dtype, const void *p)
{
    switch (dtype) {
        DTYPE_LOAD_ROW_(b, (int64_t))
        PITH_FORALL_INTEGRAL_DTYPES(DTYPE_LOAD_ROW_, (int64_t))
    default: break;
    }
    /* Floating: truncate toward zero, clamped (see double_to_int64). */
    double v = dtype_load_double(dtype, p);
    if (isnan(v))
        return 0;
    if (v >= 9223372036854775808.0)
        return INT64_MAX;
    if (v < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

/* Clamps v to [lo, hi] and truncates toward zero; NaN becomes 0. Defined for every v. */
static int64_t double_to_int_clamped(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

void dtype_store_double(pith_dtype dtype, void *p, double v)
{
    switch (dtype) {
    case PITH_BOOL: *(bool *)p = v != 0.0; break;
    case PITH_UINT8: *(uint8_t *)p = (uint8_t)double_to_int_clamped(v, 0, UINT8_MAX); break;
    case PITH_INT8: *(int8_t *)p = (int8_t)double_to_int_clamped(v, INT8_MIN, INT8_MAX); break;
    case PITH_INT16:
        *(int16_t *)p = (int16_t)double_to_int_clamped(v, INT16_MIN, INT16_MAX);
        break;
    case PITH_INT32:
        *(int32_t *)p = (int32_t)double_to_int_clamped(v, INT32_MIN, INT32_MAX);
        break;
    case PITH_INT64:
        /* INT64_MAX is not a double: 2^63 is the first value out of range. */
        if (isnan(v))
            *(int64_t *)p = 0;
        else if (v >= 9223372036854775808.0)
            *(int64_t *)p = INT64_MAX;
        else if (v < -9223372036854775808.0)
            *(int64_t *)p = INT64_MIN;
        else
            *(int64_t *)p = (int64_t)v;
        break;
    case PITH_FLOAT16: *(pith_half *)p = float_to_half((float)v); break;
    case PITH_BFLOAT16: *(pith_bfloat16 *)p = float_to_bfloat16((float)v); break;
    case PITH_FLOAT32: *(float *)p = (float)v; break;
    case PITH_FLOAT64: *(double *)p = v; break;
    }
}
