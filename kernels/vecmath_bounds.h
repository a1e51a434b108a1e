/* vecmath_bounds.h — the error bounds of the vectorised math functions, in ulps of the
 * result, that every instruction set's table meets: float32 against float64 references over
 * every float input (scripts/check_vecmath_ulp.c), float64 against long double references
 * (sampled: tests/kernels/vecmath_test.cc, and the checker's --float64). See Note
 * [Vectorised math functions] (vecmath.h); docs/architecture.md repeats the table.
 *
 * _(function, float32 bound, float64 bound), for the functions of VECMATH_FORALL_UNARY. */
#ifndef PITH_KERNELS_VECMATH_BOUNDS_H
#define PITH_KERNELS_VECMATH_BOUNDS_H

#define VECMATH_FORALL_UNARY_BOUNDS(_)                                                            \
    _(exp, 1.05, 1.5)                                                                       \
    _(log, 1.0, 1.0)                                                                        \
    _(log1p, 1.0, 1.0)                                                                      \
    _(sqrt, 0.5, 0.5)                                                                       \
    _(rsqrt, 1.5, 1.5)                                                                      \
    _(sin, 1.0, 1.0)                                                                        \
    _(cos, 1.0, 1.0)                                                                        \
    _(tanh, 2.0, 2.0)                                                                       \
    _(sigmoid, 2.5, 2.5)                                                                    \
    _(silu, 3.5, 3.0)                                                                       \
    _(erf, 2.0, 2.0)                                                                        \
    _(gelu, 5.5, 6.0)                                                                       \
    _(gelu_tanh, 3.5, 3.0)

/* pow(x, y), float32 and float64 */
#define VECMATH_POW_BOUND_F32 1.0
#define VECMATH_POW_BOUND_F64 1.5

#endif /* PITH_KERNELS_VECMATH_BOUNDS_H */
