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

/* ---- per-tag facts, from the dtype table (See Note [The dtype table], core/dtype.h) ---- */
#define EW_DTYPE_(x, E, ...) E
#define EW_STORE_T_(x, E, tag, T, ...) T
#define EW_COMPUTE_T_(x, E, tag, T, CT, ...) CT
#define EW_UNSIGNED_T_(x, E, tag, T, CT, UT, ...) UT
#define EW_LOAD_(x, E, tag, T, CT, UT, ACC, LOAD, ...) LOAD(x)
#define EW_SAVE_(x, E, tag, T, CT, UT, ACC, LOAD, STORE, ...) STORE((CT)(x))
#define EW_KIND_(x, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, ...) EW_KIND_##KIND
#define EW_KIND_boolean B
#define EW_KIND_integral I
#define EW_KIND_reduced F /* the loops treat the 16-bit floats as the floats they compute in */
#define EW_KIND_floating F

#define EW_DTYPE(tag) PITH_DTYPE_COLUMNS(EW_DTYPE_, tag, 0)
#define EW_STORE_T(tag) PITH_DTYPE_COLUMNS(EW_STORE_T_, tag, 0)
#define EW_COMPUTE_T(tag) PITH_DTYPE_COLUMNS(EW_COMPUTE_T_, tag, 0)
#define EW_UNSIGNED_T(tag) PITH_DTYPE_COLUMNS(EW_UNSIGNED_T_, tag, 0)
/* bool is stored as a byte and loaded as `byte != 0`, so that a bool tensor filled from
 * raw bytes other than 0 and 1 never makes a load undefined: See Note [Bool bytes]
 * (core/dtype.h). */
#define EW_LOAD(tag, x) PITH_DTYPE_COLUMNS(EW_LOAD_, tag, x)
#define EW_SAVE(tag, x) PITH_DTYPE_COLUMNS(EW_SAVE_, tag, x)
/* Kind of a tag: B(ool), I(nteger) or F(loat). */
#define EW_KIND(tag) PITH_DTYPE_COLUMNS(EW_KIND_, tag, 0)

/* The element type by tag, for loops written outside these generators (has_zero in
 * elementwise_ops.c pastes EW_STORE_T(tag)). */
#define EW_STORE_T_b EW_STORE_T(b)
#define EW_STORE_T_u8 EW_STORE_T(u8)
#define EW_STORE_T_i8 EW_STORE_T(i8)
#define EW_STORE_T_i16 EW_STORE_T(i16)
#define EW_STORE_T_i32 EW_STORE_T(i32)
#define EW_STORE_T_i64 EW_STORE_T(i64)

/* ---- tag lists: M(tag, extra...) for each tag ---- */
#define EW_TAGS_INT(M, ...) PITH_FORALL_INTEGRAL_DTYPES(M, __VA_ARGS__)
#define EW_TAGS_SIGNED(M, ...) PITH_FORALL_SIGNED_INTEGRAL_DTYPES(M, __VA_ARGS__)
#define EW_TAGS_FLOAT(M, ...) PITH_FORALL_FLOATING_DTYPES(M, __VA_ARGS__)
#define EW_TAGS_ALL(M, ...) PITH_FORALL_DTYPES(M, __VA_ARGS__)

/* A float math function at the precision of its argument: expf for float, exp for double. */
#define EW_MATH(fn, x) _Generic((x), float: fn##f, default: fn)(x)
#define EW_MATH2(fn, x, y) _Generic((x), float: fn##f, default: fn)((x), (y))

/* ---- loop generators ---- */

/* A unary loop `fn` reading tag `tin` and writing tag `tout`. Also visible to `expr`: TO
 * and UO, the compute and unsigned types of the output. */
#define EW_UNARY_LOOP(fn, tin, tout, prologue, expr)                                        \
    static int fn(char **args, const int64_t *n, const int64_t *s, void *ctx)               \
    {                                                                                       \
        typedef EW_COMPUTE_T(tin) T EW_UNUSED;                                              \
        typedef EW_UNSIGNED_T(tin) U EW_UNUSED;                                             \
        typedef EW_COMPUTE_T(tout) TO EW_UNUSED;                                            \
        typedef EW_UNSIGNED_T(tout) UO EW_UNUSED;                                           \
        typedef EW_STORE_T(tin) SI;                                                         \
        typedef EW_STORE_T(tout) SO;                                                        \
        (void)ctx;                                                                          \
        prologue;                                                                           \
        const int64_t len = n[0];                                                           \
        SO *o = (SO *)args[0];                                                              \
        const SI *pa = (const SI *)args[1];                                                 \
        if (s[0] == (int64_t)sizeof(SO) && s[1] == (int64_t)sizeof(SI)) {                   \
            EW_IVDEP for (int64_t i = 0; i < len; i++)                                      \
            {                                                                               \
                const T a = EW_LOAD(tin, pa[i]);                                            \
                o[i] = EW_SAVE(tout, expr);                                                 \
            }                                                                               \
        } else {                                                                            \
            for (int64_t i = 0; i < len; i++) {                                             \
                const T a = EW_LOAD(tin, *(const SI *)((const char *)pa + i * s[1]));       \
                *(SO *)((char *)o + i * s[0]) = EW_SAVE(tout, expr);                        \
            }                                                                               \
        }                                                                                   \
        return 0;                                                                           \
    }

/* A binary loop `fn`: both inputs of tag `tin`, output of tag `tout`. */
#define EW_BINARY_LOOP(fn, tin, tout, prologue, expr)                                       \
    static int fn(char **args, const int64_t *n, const int64_t *s, void *ctx)               \
    {                                                                                       \
        typedef EW_COMPUTE_T(tin) T EW_UNUSED;                                              \
        typedef EW_UNSIGNED_T(tin) U EW_UNUSED;                                             \
        typedef EW_STORE_T(tin) SI;                                                         \
        typedef EW_STORE_T(tout) SO;                                                        \
        (void)ctx;                                                                          \
        prologue;                                                                           \
        const int64_t len = n[0];                                                           \
        const int64_t isz = (int64_t)sizeof(SI), osz = (int64_t)sizeof(SO);                 \
        SO *o = (SO *)args[0];                                                              \
        const SI *pa = (const SI *)args[1], *pb = (const SI *)args[2];                      \
        if (s[0] == osz && s[1] == isz && s[2] == isz) {                                    \
            EW_IVDEP for (int64_t i = 0; i < len; i++)                                      \
            {                                                                               \
                const T a = EW_LOAD(tin, pa[i]), b = EW_LOAD(tin, pb[i]);                   \
                o[i] = EW_SAVE(tout, expr);                                                 \
            }                                                                               \
        } else if (s[0] == osz && s[1] == isz && s[2] == 0) {                               \
            const T b = EW_LOAD(tin, pb[0]);                                                \
            EW_IVDEP for (int64_t i = 0; i < len; i++)                                      \
            {                                                                               \
                const T a = EW_LOAD(tin, pa[i]);                                            \
                o[i] = EW_SAVE(tout, expr);                                                 \
            }                                                                               \
        } else if (s[0] == osz && s[1] == 0 && s[2] == isz) {                               \
            const T a = EW_LOAD(tin, pa[0]);                                                \
            EW_IVDEP for (int64_t i = 0; i < len; i++)                                      \
            {                                                                               \
                const T b = EW_LOAD(tin, pb[i]);                                            \
                o[i] = EW_SAVE(tout, expr);                                                 \
            }                                                                               \
        } else {                                                                            \
            for (int64_t i = 0; i < len; i++) {                                             \
                const T a = EW_LOAD(tin, *(const SI *)((const char *)pa + i * s[1]));       \
                const T b = EW_LOAD(tin, *(const SI *)((const char *)pb + i * s[2]));       \
                *(SO *)((char *)o + i * s[0]) = EW_SAVE(tout, expr);                        \
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
#define EW_LOOP_ENTRY(tag, name) [EW_DTYPE(tag)] = name##_##tag,

#endif /* PITH_KERNELS_ELEMENTWISE_LOOPS_H */
