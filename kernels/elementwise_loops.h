/* elementwise_loops.h — macros that generate the 1-D inner loops of the elementwise ops
 * (see elementwise.h for the loop signature), one per op and dtype, from one expression.
 *
 * Each dtype has a tag (b, u8, i8, i16, i32, i64, f16, bf16, f32, f64) and, per tag: the
 * storage type, the compute type T (float for the 16-bit floats), an unsigned type U wide
 * enough that integer arithmetic in it wraps without undefined behaviour (no promotion to
 * signed int), and load/save conversions. An op's expression sees `a` (and `b`) of type
 * T, plus T and U, and whatever its prologue declares (usually from `ctx`).
 *
 * Every loop has a contiguous path (marked ivdep, so -O2/-O3 vectorise it; see Note
 * [Aliasing in inner loops] in elementwise.c), a path for a broadcast (stride 0) operand
 * for binary loops, and a strided path. */
#ifndef PITH_KERNELS_ELEMENTWISE_LOOPS_H
#define PITH_KERNELS_ELEMENTWISE_LOOPS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "kernels/elementwise.h"
#include "kernels/vecmath.h"

#if defined(__clang__)
#define EW_IVDEP _Pragma("clang loop vectorize(enable)")
#else
#define EW_IVDEP _Pragma("GCC ivdep")
#endif
#define EW_UNUSED __attribute__((unused))

/* ---- per-tag facts ---- */
#define EW_DTYPE_b PITH_BOOL
#define EW_DTYPE_u8 PITH_UINT8
#define EW_DTYPE_i8 PITH_INT8
#define EW_DTYPE_i16 PITH_INT16
#define EW_DTYPE_i32 PITH_INT32
#define EW_DTYPE_i64 PITH_INT64
#define EW_DTYPE_f16 PITH_FLOAT16
#define EW_DTYPE_bf16 PITH_BFLOAT16
#define EW_DTYPE_f32 PITH_FLOAT32
#define EW_DTYPE_f64 PITH_FLOAT64

/* bool is stored as a byte and loaded as `byte != 0`, so that a bool tensor filled from
 * raw bytes other than 0 and 1 never makes a load undefined: See Note [Bool bytes]
 * (core/dtype.h). */
#define EW_STORE_T_b uint8_t
#define EW_STORE_T_u8 uint8_t
#define EW_STORE_T_i8 int8_t
#define EW_STORE_T_i16 int16_t
#define EW_STORE_T_i32 int32_t
#define EW_STORE_T_i64 int64_t
#define EW_STORE_T_f16 pith_half
#define EW_STORE_T_bf16 pith_bfloat16
#define EW_STORE_T_f32 float
#define EW_STORE_T_f64 double

#define EW_COMPUTE_T_b bool
#define EW_COMPUTE_T_u8 uint8_t
#define EW_COMPUTE_T_i8 int8_t
#define EW_COMPUTE_T_i16 int16_t
#define EW_COMPUTE_T_i32 int32_t
#define EW_COMPUTE_T_i64 int64_t
#define EW_COMPUTE_T_f16 float
#define EW_COMPUTE_T_bf16 float
#define EW_COMPUTE_T_f32 float
#define EW_COMPUTE_T_f64 double

/* uint32_t for the narrow types: uint8_t/uint16_t would promote to (signed) int. */
#define EW_UNSIGNED_T_b uint32_t
#define EW_UNSIGNED_T_u8 uint32_t
#define EW_UNSIGNED_T_i8 uint32_t
#define EW_UNSIGNED_T_i16 uint32_t
#define EW_UNSIGNED_T_i32 uint32_t
#define EW_UNSIGNED_T_i64 uint64_t
#define EW_UNSIGNED_T_f16 uint32_t
#define EW_UNSIGNED_T_bf16 uint32_t
#define EW_UNSIGNED_T_f32 uint32_t
#define EW_UNSIGNED_T_f64 uint64_t

#define EW_LOAD_b(x) ((x) != 0)
#define EW_LOAD_u8(x) (x)
#define EW_LOAD_i8(x) (x)
#define EW_LOAD_i16(x) (x)
#define EW_LOAD_i32(x) (x)
#define EW_LOAD_i64(x) (x)
#define EW_LOAD_f16(x) half_to_float(x)
#define EW_LOAD_bf16(x) bfloat16_to_float(x)
#define EW_LOAD_f32(x) (x)
#define EW_LOAD_f64(x) (x)

#define EW_SAVE_b(x) ((bool)(x))
#define EW_SAVE_u8(x) ((uint8_t)(x))
#define EW_SAVE_i8(x) ((int8_t)(x))
#define EW_SAVE_i16(x) ((int16_t)(x))
#define EW_SAVE_i32(x) ((int32_t)(x))
#define EW_SAVE_i64(x) ((int64_t)(x))
#define EW_SAVE_f16(x) float_to_half((float)(x))
#define EW_SAVE_bf16(x) float_to_bfloat16((float)(x))
#define EW_SAVE_f32(x) ((float)(x))
#define EW_SAVE_f64(x) ((double)(x))

/* Kind of a tag: B(ool), I(nteger) or F(loat). */
#define EW_KIND_b B
#define EW_KIND_u8 I
#define EW_KIND_i8 I
#define EW_KIND_i16 I
#define EW_KIND_i32 I
#define EW_KIND_i64 I
#define EW_KIND_f16 F
#define EW_KIND_bf16 F
#define EW_KIND_f32 F
#define EW_KIND_f64 F

/* ---- tag lists: M(tag, extra...) for each tag ---- */
#define EW_TAGS_INT(M, ...)                                                                 \
    M(u8, __VA_ARGS__) M(i8, __VA_ARGS__) M(i16, __VA_ARGS__) M(i32, __VA_ARGS__)           \
    M(i64, __VA_ARGS__)
#define EW_TAGS_SIGNED(M, ...)                                                              \
    M(i8, __VA_ARGS__) M(i16, __VA_ARGS__) M(i32, __VA_ARGS__) M(i64, __VA_ARGS__)
#define EW_TAGS_FLOAT(M, ...)                                                               \
    M(f16, __VA_ARGS__) M(bf16, __VA_ARGS__) M(f32, __VA_ARGS__) M(f64, __VA_ARGS__)
#define EW_TAGS_ALL(M, ...)                                                                 \
    M(b, __VA_ARGS__) EW_TAGS_INT(M, __VA_ARGS__) EW_TAGS_FLOAT(M, __VA_ARGS__)

/* A float math function at the precision of its argument: expf for float, exp for double. */
#define EW_MATH(fn, x) _Generic((x), float: fn##f, default: fn)(x)
#define EW_MATH2(fn, x, y) _Generic((x), float: fn##f, default: fn)((x), (y))

/* ---- loop generators ---- */

/* A unary loop `fn` reading tag `tin` and writing tag `tout`. Also visible to `expr`: TO
 * and UO, the compute and unsigned types of the output. */
#define EW_UNARY_LOOP(fn, tin, tout, prologue, expr)                                        \
    static int fn(char **args, const int64_t *n, const int64_t *s, void *ctx)               \
    {                                                                                       \
        typedef EW_COMPUTE_T_##tin T EW_UNUSED;                                             \
        typedef EW_UNSIGNED_T_##tin U EW_UNUSED;                                            \
        typedef EW_COMPUTE_T_##tout TO EW_UNUSED;                                           \
        typedef EW_UNSIGNED_T_##tout UO EW_UNUSED;                                          \
        typedef EW_STORE_T_##tin SI;                                                        \
        typedef EW_STORE_T_##tout SO;                                                       \
        (void)ctx;                                                                          \
        prologue;                                                                           \
        const int64_t len = n[0];                                                           \
        SO *o = (SO *)args[0];                                                              \
        const SI *pa = (const SI *)args[1];                                                 \
        if (s[0] == (int64_t)sizeof(SO) && s[1] == (int64_t)sizeof(SI)) {                   \
            EW_IVDEP for (int64_t i = 0; i < len; i++)                                      \
            {                                                                               \
                const T a = EW_LOAD_##tin(pa[i]);                                           \
                o[i] = EW_SAVE_##tout(expr);                                                \
            }                                                                               \
        } else {                                                                            \
            for (int64_t i = 0; i < len; i++) {                                             \
                const T a = EW_LOAD_##tin(*(const SI *)((const char *)pa + i * s[1]));      \
                *(SO *)((char *)o + i * s[0]) = EW_SAVE_##tout(expr);                       \
            }                                                                               \
        }                                                                                   \
        return 0;                                                                           \
    }

/* A binary loop `fn`: both inputs of tag `tin`, output of tag `tout`. */
#define EW_BINARY_LOOP(fn, tin, tout, prologue, expr)                                       \
    static int fn(char **args, const int64_t *n, const int64_t *s, void *ctx)               \
    {                                                                                       \
        typedef EW_COMPUTE_T_##tin T EW_UNUSED;                                             \
        typedef EW_UNSIGNED_T_##tin U EW_UNUSED;                                            \
        typedef EW_STORE_T_##tin SI;                                                        \
        typedef EW_STORE_T_##tout SO;                                                       \
        (void)ctx;                                                                          \
        prologue;                                                                           \
        const int64_t len = n[0];                                                           \
        const int64_t isz = (int64_t)sizeof(SI), osz = (int64_t)sizeof(SO);                 \
        SO *o = (SO *)args[0];                                                              \
        const SI *pa = (const SI *)args[1], *pb = (const SI *)args[2];                      \
        if (s[0] == osz && s[1] == isz && s[2] == isz) {                                    \
            EW_IVDEP for (int64_t i = 0; i < len; i++)                                      \
            {                                                                               \
                const T a = EW_LOAD_##tin(pa[i]), b = EW_LOAD_##tin(pb[i]);                 \
                o[i] = EW_SAVE_##tout(expr);                                                \
            }                                                                               \
        } else if (s[0] == osz && s[1] == isz && s[2] == 0) {                               \
            const T b = EW_LOAD_##tin(pb[0]);                                               \
            EW_IVDEP for (int64_t i = 0; i < len; i++)                                      \
            {                                                                               \
                const T a = EW_LOAD_##tin(pa[i]);                                           \
                o[i] = EW_SAVE_##tout(expr);                                                \
            }                                                                               \
        } else if (s[0] == osz && s[1] == 0 && s[2] == isz) {                               \
            const T a = EW_LOAD_##tin(pa[0]);                                               \
            EW_IVDEP for (int64_t i = 0; i < len; i++)                                      \
            {                                                                               \
                const T b = EW_LOAD_##tin(pb[i]);                                           \
                o[i] = EW_SAVE_##tout(expr);                                                \
            }                                                                               \
        } else {                                                                            \
            for (int64_t i = 0; i < len; i++) {                                             \
                const T a = EW_LOAD_##tin(*(const SI *)((const char *)pa + i * s[1]));      \
                const T b = EW_LOAD_##tin(*(const SI *)((const char *)pb + i * s[2]));      \
                *(SO *)((char *)o + i * s[0]) = EW_SAVE_##tout(expr);                       \
            }                                                                               \
        }                                                                                   \
        return 0;                                                                           \
    }

/* Shorthands for M(tag, name, expr) lists: same-dtype and to-bool loops named name_tag. */
#define EW_UNARY_SAME(tag, name, expr) EW_UNARY_LOOP(name##_##tag, tag, tag, , expr)
#define EW_BINARY_SAME(tag, name, expr) EW_BINARY_LOOP(name##_##tag, tag, tag, , expr)
#define EW_BINARY_TO_BOOL(tag, name, expr) EW_BINARY_LOOP(name##_##tag, tag, b, , expr)
#define EW_UNARY_TO_BOOL(tag, name, expr) EW_UNARY_LOOP(name##_##tag, tag, b, , expr)

/* The float loops name_f16, name_bf16, name_f32 and name_f64 of the vectorised math function
 * `field` of vecmath_table (See Note [Vectorised math functions]): the 16-bit floats compute
 * through the float32 function. */
#define EW_VECMATH_LOOP_(name, suffix, field, adapter)                                      \
    static int name##_##suffix(char **args, const int64_t *n, const int64_t *s, void *ctx)  \
    {                                                                                       \
        (void)ctx;                                                                          \
        return adapter(vecmath_active()->field, args, n, s);                                \
    }
#define EW_VECMATH_LOOPS(name, field)                                                       \
    EW_VECMATH_LOOP_(name, f16, field##_f32, vecmath_loop_f16)                              \
    EW_VECMATH_LOOP_(name, bf16, field##_f32, vecmath_loop_bf16)                            \
    EW_VECMATH_LOOP_(name, f32, field##_f32, vecmath_loop_f32)                              \
    EW_VECMATH_LOOP_(name, f64, field##_f64, vecmath_loop_f64)

/* A table entry of the per-dtype loop table `name`_loops: [PITH_FLOAT32] = name_f32. */
#define EW_LOOP_ENTRY(tag, name) [EW_DTYPE_##tag] = name##_##tag,

#endif /* PITH_KERNELS_ELEMENTWISE_LOOPS_H */
