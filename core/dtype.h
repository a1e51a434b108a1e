/* dtype.h — element types for code inside libpith: the C type of each dtype, float16 and
 * bfloat16 conversions, and a switch macro that instantiates code for every dtype.
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

/* Note [Bool bytes]
 * A bool element is one byte, and memory that pith did not write may hold any byte there:
 * pith.frombuffer(b'\x02', dtype=pith.bool), a NumPy bool array viewed from uint8, a
 * DLPack or from_blob producer. C's bool has only the values 0 and 1, so reading such a
 * byte through a `bool *` is undefined behaviour (UBSan's -fsanitize=bool). So every load
 * of a bool element reads a uint8_t and tests it `!= 0`: any nonzero byte is true, as in
 * PyTorch and NumPy. Stores write 0 or 1, so a `bool *` store is fine, and a copy of bool
 * to bool may keep the byte as it is. The loads: dtype_load_* (dtype.c), the elementwise
 * loops (EW_LOAD_b, kernels/elementwise_loops.h), reductions (RD_LOAD_BOOL), matmul
 * (LG_LOAD_BOOL), masks (element_is_nonzero, masked_fill), and in the bindings tolist and
 * item (convert.c) and wrapped numbers (python_dispatch.c). There is no per-dtype X-macro
 * with `bool` as the element type, on purpose. */

/* Loads element `p` of `dtype` as a double / stores a double into it (with the usual C
 * conversions, saturating nothing: float-to-int of an out-of-range value is clamped to
 * the type's range rather than being undefined behaviour). */
double dtype_load_double(pith_dtype dtype, const void *p);
void dtype_store_double(pith_dtype dtype, void *p, double v);
/* Loads / stores as int64 (exact for every integer dtype). */
int64_t dtype_load_int64(pith_dtype dtype, const void *p);
void dtype_store_int64(pith_dtype dtype, void *p, int64_t v);

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
    /* bool u8 i8 i16 i32 i64 f16 bf16 f32 f64 */
    static const unsigned char sizes[PITH_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
    return sizes[d];
}

#endif /* PITH_CORE_DTYPE_H */
