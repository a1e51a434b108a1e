/* vecmath_reference.h — the references against which the vectorised math functions are
 * measured (See Note [Vectorised math functions], kernels/vecmath.h): float64 values of the
 * float32 functions (ref_*), long double values of the float64 ones (refl_*), and the error in
 * ulps. Shared by tests/kernels/vecmath_test.cc and scripts/check_vecmath_ulp.c; C and C++. */
#ifndef PITH_TESTS_VECMATH_REFERENCE_H
#define PITH_TESTS_VECMATH_REFERENCE_H

#include <math.h>

#define GELU_TANH_A 1.5957691216057308 /* 2 sqrt(2/pi) */
#define GELU_TANH_B (GELU_TANH_A * 0.044715)

/* ---- float64 references of the float32 functions ---- */
static inline double sigmoid_ref(double x)
{
    return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}
static inline double ref_exp(double x) { return exp(x); }
static inline double ref_log(double x) { return log(x); }
static inline double ref_log1p(double x) { return log1p(x); }
static inline double ref_sqrt(double x) { return sqrt(x); }
static inline double ref_rsqrt(double x) { return (double)(1.0L / sqrtl((long double)x)); }
static inline double ref_sin(double x) { return sin(x); }
static inline double ref_cos(double x) { return cos(x); }
static inline double ref_tanh(double x) { return tanh(x); }
static inline double ref_sigmoid(double x) { return sigmoid_ref(x); }
static inline double ref_silu(double x) { return x * sigmoid_ref(x); }
static inline double ref_erf(double x) { return erf(x); }
static inline double ref_gelu(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }
static inline double ref_gelu_tanh(double x)
{
    return x * sigmoid_ref(x * (GELU_TANH_A + GELU_TANH_B * x * x));
}

/* ---- long double references of the float64 functions ---- */
static inline long double sigmoid_refl(long double x)
{
    return x >= 0 ? 1 / (1 + expl(-x)) : expl(x) / (1 + expl(x));
}
static inline long double refl_exp(long double x) { return expl(x); }
static inline long double refl_log(long double x) { return logl(x); }
static inline long double refl_log1p(long double x) { return log1pl(x); }
static inline long double refl_sqrt(long double x) { return sqrtl(x); }
static inline long double refl_rsqrt(long double x) { return 1 / sqrtl(x); }
static inline long double refl_sin(long double x) { return sinl(x); }
static inline long double refl_cos(long double x) { return cosl(x); }
static inline long double refl_tanh(long double x) { return tanhl(x); }
static inline long double refl_sigmoid(long double x) { return sigmoid_refl(x); }
static inline long double refl_silu(long double x) { return x * sigmoid_refl(x); }
static inline long double refl_erf(long double x) { return erfl(x); }
static inline long double refl_gelu(long double x)
{
    return 0.5L * x * erfcl(-x * 0.707106781186547524400844362104849039L);
}
static inline long double refl_gelu_tanh(long double x)
{
    const long double a = 1.59576912160573071175L, b = a * 0.044715L;
    return x * sigmoid_refl(x * (a + b * x * x));
}

/* ---- ulps ---- */

/* The error of `result` against the exact `ref` in ulps of a format with `digits` digits and
 * exponents down to `min_exp` (FLT_MIN = 2^min_exp) and up to `max_exp`; infinity for a NaN,
 * infinity or zero that does not match. */
static inline double ulp_error(double result, long double ref, int digits, int min_exp,
                               int max_exp)
{
    if (isnan(ref))
        return isnan(result) ? 0 : INFINITY;
    if (isnan(result))
        return INFINITY;
    if (fabsl(ref) >= ldexpl(1.0L, max_exp)) /* rounds to infinity */
        ref = copysignl(INFINITY, ref);
    if (isinf(ref))
        return result == ref ? 0 : INFINITY;
    if (ref == 0)
        return result == 0 && !signbit(result) == !signbit(ref) ? 0 : INFINITY;
    if (result == 0 && !signbit(result) != !signbit(ref))
        return INFINITY;
    int e;
    frexpl(fabsl(ref), &e);
    e = e - 1 < min_exp ? min_exp : e - 1;
    if (e > max_exp - 1)
        e = max_exp - 1;
    long double ulp = ldexpl(1.0L, e - (digits - 1));
    long double r = isinf(result) ? copysignl(ldexpl(1.0L, max_exp), result) : result;
    return (double)(fabsl(r - ref) / ulp);
}
/* ulp_error for float32 results, in double arithmetic (exact for a float and a double's
 * difference at these scales, and fast enough for 2^32 inputs). */
static inline double ulp_error_f32(float result, double ref)
{
    if (isnan(ref))
        return isnan(result) ? 0 : INFINITY;
    if (isnan(result))
        return INFINITY;
    if (fabs(ref) >= 0x1p128) /* rounds to infinity */
        ref = copysign(INFINITY, ref);
    if (isinf(ref))
        return result == ref ? 0 : INFINITY;
    if (ref == 0)
        return result == 0 && !signbit(result) == !signbit(ref) ? 0 : INFINITY;
    if (result == 0 && !signbit(result) != !signbit(ref))
        return INFINITY;
    int e;
    frexp(fabs(ref), &e);
    e = e - 1 < -126 ? -126 : e - 1;
    double r = isinf(result) ? copysign(0x1p128, (double)result) : (double)result;
    return fabs(r - ref) / ldexp(1.0, e - 23);
}
static inline double ulp_error_f64(double result, long double ref)
{
    return ulp_error(result, ref, 53, -1022, 1024);
}

#endif /* PITH_TESTS_VECMATH_REFERENCE_H */
