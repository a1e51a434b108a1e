/* dtype.h — element types for code inside libpith: the one table of per-dtype facts (See
 * Note [The dtype table]), float16 and bfloat16 conversions, and the generic element
 * load/store.
 *
 * float16 and bfloat16 are stored as their 16-bit patterns and computed in float. */
#ifndef PITH_CORE_DTYPE_H
#define PITH_CORE_DTYPE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pith/pith.h"

typedef uint16_t pith_half;     /* IEEE 754 binary16 bits */
typedef uint16_t pith_bfloat16; /* the top 16 bits of a float32 */

static inline float half_to_float(pith_half h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int shift = 0;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                shift++;
            }
            mant &= 0x3ffu;
            bits = sign | ((uint32_t)(127 - 15 - shift + 1) << 23) | (mant << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13); /* inf or nan */
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Round to nearest even, as PyTorch does. */
static inline pith_half float_to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint32_t sign = (bits >> 16) & 0x8000u;
    uint32_t abs = bits & 0x7fffffffu;
    if (abs >= 0x7f800000u) /* inf or nan */
        return (pith_half)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
    if (abs >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
        return (pith_half)(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        if (abs < 0x33000000u)
            return (pith_half)sign;
        uint32_t e = abs >> 23;
        uint32_t m = (abs & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14 - (e - 127) + 13 - 1 ... */
        uint32_t half_m = m >> (shift);
        uint32_t rem = m & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half_m & 1)))
            half_m++;
        return (pith_half)(sign | half_m);
    }
    uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
    return (pith_half)(sign | ((rounded - 0x38000000u) >> 13));
}

static inline float bfloat16_to_float(pith_bfloat16 b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline pith_bfloat16 float_to_bfloat16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) /* nan: keep it a quiet nan */
        return (pith_bfloat16)((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (pith_bfloat16)(bits >> 16);
}

/* Note [The dtype table]
 * Every per-dtype fact that code needs at compile time is in one row of this table:
 * dtype.c's names, sizes and float formats, and the columns of every kernel that is
 * instantiated once per dtype (the elementwise loops and casts, reductions, matmul,
 * softmax and layer_norm, scans). A kernel file states only what is its own (its
 * accumulator, its bool or float16 special case), chosen by a row's kind, so adding a
 * dtype is adding a row here.
 *
 * A row is named by its tag, PITH_DTYPE_ROW_<tag>, and holds, in order:
 *   E        the enum value;
 *   tag      the short name that kernels paste into function names (b, u8, ..., f64);
 *   T        the C type of a stored element (bool as uint8_t: See Note [Bool bytes]);
 *   CT       the type it is computed in (bool; float for the 16-bit floats);
 *   UT       an unsigned type as wide as T, and no narrower than unsigned int, so that
 *            integer arithmetic in it wraps (uint8_t and uint16_t would promote to int);
 *   ACC      PyTorch's CPU accumulator type for sums and scans: uint64_t for bool and the
 *            integers (it wraps, without undefined behaviour), float for the 16-bit
 *            floats, double for float32 and float64;
 *   LOAD     a macro or function from T to CT, STORE from CT to T;
 *   KIND     boolean, integral, reduced (a 16-bit float, stored as bits and computed in
 *            float) or floating (a C float type); words that no header defines as a
 *            macro (<complex.h> defines I), for kernels to paste into their own names;
 *   NAME     the name, as PyTorch spells it;
 *   SIGNED   whether it holds negative values;
 *   DIGITS, MAX_EXPONENT   a float's format as <float.h> states it (mantissa digits with
 *            the implicit bit, as FLT_MANT_DIG; the largest exponent, as FLT_MAX_EXP), and
 *            0 for the others;
 *   LOWEST, HIGHEST        the least and the greatest value (the infinities for floats;
 *            they need <math.h> where they are expanded).
 *
 * The lists PITH_FORALL_*_DTYPES(_, ...) call _(tag, ...) per dtype, in enum order; the
 * sub-lists by kind are sections of the whole list, so every tag is written once, except
 * in PITH_FORALL_DTYPES_NESTED (below). PITH_DTYPE_COLUMNS(F, tag, x) calls
 * F(x, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, NAME, SIGNED, DIGITS, MAX_EXPONENT, LOWEST,
 * HIGHEST) for one row. */
#define PITH_DTYPE_AS_IS(x) (x)
#define PITH_DTYPE_LOAD_BOOL(x) ((x) != 0) /* See Note [Bool bytes] */

/* clang-format off */
#define PITH_DTYPE_ROW_b    PITH_BOOL,     b,    uint8_t,       bool,    uint32_t, uint64_t, \
    PITH_DTYPE_LOAD_BOOL, PITH_DTYPE_AS_IS,  boolean,  "bool",                              \
    false, 0,  0,    0,         1
#define PITH_DTYPE_ROW_u8   PITH_UINT8,    u8,   uint8_t,       uint8_t, uint32_t, uint64_t, \
    PITH_DTYPE_AS_IS,     PITH_DTYPE_AS_IS,  integral, "uint8",                             \
    false, 0,  0,    0,         UINT8_MAX
#define PITH_DTYPE_ROW_i8   PITH_INT8,     i8,   int8_t,        int8_t,  uint32_t, uint64_t, \
    PITH_DTYPE_AS_IS,     PITH_DTYPE_AS_IS,  integral, "int8",                              \
    true,  0,  0,    INT8_MIN,  INT8_MAX
#define PITH_DTYPE_ROW_i16  PITH_INT16,    i16,  int16_t,       int16_t, uint32_t, uint64_t, \
    PITH_DTYPE_AS_IS,     PITH_DTYPE_AS_IS,  integral, "int16",                             \
    true,  0,  0,    INT16_MIN, INT16_MAX
#define PITH_DTYPE_ROW_i32  PITH_INT32,    i32,  int32_t,       int32_t, uint32_t, uint64_t, \
    PITH_DTYPE_AS_IS,     PITH_DTYPE_AS_IS,  integral, "int32",                             \
    true,  0,  0,    INT32_MIN, INT32_MAX
#define PITH_DTYPE_ROW_i64  PITH_INT64,    i64,  int64_t,       int64_t, uint64_t, uint64_t, \
    PITH_DTYPE_AS_IS,     PITH_DTYPE_AS_IS,  integral, "int64",                             \
    true,  0,  0,    INT64_MIN, INT64_MAX
#define PITH_DTYPE_ROW_f16  PITH_FLOAT16,  f16,  pith_half,     float,   uint32_t, float,   \
    half_to_float,        float_to_half,     reduced,  "float16",                           \
    true,  11, 16,   -INFINITY, INFINITY
#define PITH_DTYPE_ROW_bf16 PITH_BFLOAT16, bf16, pith_bfloat16, float,   uint32_t, float,   \
    bfloat16_to_float,    float_to_bfloat16, reduced,  "bfloat16",                          \
    true,  8,  128,  -INFINITY, INFINITY
#define PITH_DTYPE_ROW_f32  PITH_FLOAT32,  f32,  float,         float,   uint32_t, double,  \
    PITH_DTYPE_AS_IS,     PITH_DTYPE_AS_IS,  floating, "float32",                           \
    true,  24, 128,  -INFINITY, INFINITY
#define PITH_DTYPE_ROW_f64  PITH_FLOAT64,  f64,  double,        double,  uint64_t, double,  \
    PITH_DTYPE_AS_IS,     PITH_DTYPE_AS_IS,  floating, "float64",                           \
    true,  53, 1024, -INFINITY, INFINITY
/* clang-format on */

#define PITH_FORALL_SIGNED_INTEGRAL_DTYPES(_, ...)                                          \
    _(i8, __VA_ARGS__) _(i16, __VA_ARGS__) _(i32, __VA_ARGS__) _(i64, __VA_ARGS__)
#define PITH_FORALL_INTEGRAL_DTYPES(_, ...) /* bool excluded */                             \
    _(u8, __VA_ARGS__) PITH_FORALL_SIGNED_INTEGRAL_DTYPES(_, __VA_ARGS__)
#define PITH_FORALL_REDUCED_FLOATING_DTYPES(_, ...) _(f16, __VA_ARGS__) _(bf16, __VA_ARGS__)
#define PITH_FORALL_FLOATING_DTYPES(_, ...)                                                 \
    PITH_FORALL_REDUCED_FLOATING_DTYPES(_, __VA_ARGS__) _(f32, __VA_ARGS__) _(f64, __VA_ARGS__)
#define PITH_FORALL_DTYPES(_, ...)                                                          \
    _(b, __VA_ARGS__)                                                                       \
    PITH_FORALL_INTEGRAL_DTYPES(_, __VA_ARGS__) PITH_FORALL_FLOATING_DTYPES(_, __VA_ARGS__)

/* The whole list again, for a list expanded inside one of the lists above (the casts, one
 * loop per pair of dtypes): a macro is not expanded again inside its own expansion. The
 * test DtypeTest.TableNestedListIsTheList checks that it names the same rows in the same
 * order. */
#define PITH_FORALL_DTYPES_NESTED(_, ...)                                                   \
    _(b, __VA_ARGS__) _(u8, __VA_ARGS__) _(i8, __VA_ARGS__) _(i16, __VA_ARGS__)             \
    _(i32, __VA_ARGS__) _(i64, __VA_ARGS__) _(f16, __VA_ARGS__) _(bf16, __VA_ARGS__)        \
    _(f32, __VA_ARGS__) _(f64, __VA_ARGS__)

/* F(x, <the columns of row `tag`>): the row is expanded into arguments before F sees it. */
#define PITH_DTYPE_COLUMNS(F, tag, x) PITH_DTYPE_COLUMNS_(F, x, PITH_DTYPE_ROW_##tag)
#define PITH_DTYPE_COLUMNS_(F, x, ...) F(x, __VA_ARGS__)

/* Note [Bool bytes]
 * A bool element is one byte, and memory that pith did not write may hold any byte there:
 * pith.frombuffer(b'\x02', dtype=pith.bool), a NumPy bool array viewed from uint8, a
 * DLPack or from_blob producer. C's bool has only the values 0 and 1, so reading such a
 * byte through a `bool *` is undefined behaviour (UBSan's -fsanitize=bool). So every load
 * of a bool element reads a uint8_t and tests it `!= 0`: any nonzero byte is true, as in
 * PyTorch and NumPy. Stores write 0 or 1, so a `bool *` store is fine, and a copy of bool
 * to bool may keep the byte as it is. The loads: dtype_load_* (dtype.c), the dtype
 * table's PITH_DTYPE_LOAD_BOOL (the elementwise loops and matmul), reductions
 * (RD_LOAD_BOOL), masks (element_is_nonzero, masked_fill), and in the bindings tolist and
 * item (convert.c) and wrapped numbers (python_dispatch.c). There is no per-dtype X-macro
 * with `bool` as the element type, on purpose. */

/* Loads element `p` of `dtype` as a double / stores a double into it (with the usual C
 * conversions, saturating nothing: float-to-int of an out-of-range value is clamped to
 * the type's range rather than being undefined behaviour). */
double dtype_load_double(pith_dtype dtype, const void *p);
void dtype_store_double(pith_dtype dtype, void *p, double v);
/* Loads as int64 (exact for every integer dtype). */
int64_t dtype_load_int64(pith_dtype dtype, const void *p);

static inline bool dtype_is_floating(pith_dtype d)
{
    return d >= PITH_FLOAT16;
}
static inline bool dtype_is_integral(pith_dtype d) /* bool excluded */
{
    return d >= PITH_UINT8 && d <= PITH_INT64;
}
static inline bool dtype_valid(int d)
{
    return d >= 0 && d < PITH_NUM_DTYPES;
}

/* PyTorch's promote_types for two valid dtypes (no validation; see Note [promote_types]
 * in dtype.c). pith_promote_types is the checked public form. */
pith_dtype dtype_promote(pith_dtype a, pith_dtype b);

/* pith_dtype_size for a valid dtype, inline for hot paths (no validation). */
static inline size_t dtype_itemsize(pith_dtype d)
{
#define DTYPE_SIZE_(x, E, tag, T, ...) [E] = sizeof(T),
#define DTYPE_SIZE_ROW_(tag, x) PITH_DTYPE_COLUMNS(DTYPE_SIZE_, tag, x)
    static const unsigned char sizes[PITH_NUM_DTYPES] = {PITH_FORALL_DTYPES(DTYPE_SIZE_ROW_, 0)};
#undef DTYPE_SIZE_ROW_
#undef DTYPE_SIZE_
    return sizes[d];
}

#endif /* PITH_CORE_DTYPE_H */
