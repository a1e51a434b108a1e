/* vecmath_impl.h — the vectorised math functions, written once over GCC vector types and
 * compiled once per instruction set by vecmath_sse2.c, vecmath_avx2.c and vecmath_avx512.c.
 * See Note [Vectorised math functions] (vecmath.h) for the algorithms, their error bounds
 * and why the body and the tail of an array give identical bits.
 *
 * The including file defines, before including this one:
 *   VM_BYTES            the vector width in bytes (16, 32, 64);
 *   VM_FMA_F / VM_FMA_D a*b+c, fused where the instruction set has FMA;
 *   VM_HAS_FMA          1 when they are fused (exact products then need no splitting);
 *   VM_SQRT_F / VM_SQRT_D, VM_ANY_I / VM_ANY_L (whether any lane of a 32/64-bit mask is set);
 *   VM_SPLAT_F / VM_SPLAT_D, a value in every lane (a broadcast: {0} + x is not one, since
 *   -0 + 0 is +0, and a loop over the lanes compiles to inserts);
 *   VM_TABLE            the name of the vecmath_table to define.
 * Everything here is static: the only symbol of each file is its table. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/vecmath.h"
#include "kernels/vecmath_coefficients.h"

typedef float VF __attribute__((vector_size(VM_BYTES)));
typedef int32_t VI __attribute__((vector_size(VM_BYTES)));
typedef uint32_t VU __attribute__((vector_size(VM_BYTES)));
typedef double VD __attribute__((vector_size(VM_BYTES)));
typedef int64_t VL __attribute__((vector_size(VM_BYTES)));
typedef uint64_t VUL __attribute__((vector_size(VM_BYTES)));
typedef float VFH __attribute__((vector_size(VM_BYTES / 2))); /* half a VF: one VD's lanes */
#define FW (VM_BYTES / 4)
#define DW (VM_BYTES / 8)

#define VM_INLINE static inline __attribute__((always_inline))

#ifdef VM_GENERIC_LANES
VM_INLINE VF vm_sqrt_lanes_f(VF x)
{
    for (int i = 0; i < FW; i++)
        x[i] = sqrtf(x[i]);
    return x;
}
VM_INLINE VD vm_sqrt_lanes_d(VD x)
{
    for (int i = 0; i < DW; i++)
        x[i] = sqrt(x[i]);
    return x;
}
VM_INLINE VF vm_splat_lanes_f(float x)
{
    VF v;
    for (int i = 0; i < FW; i++)
        v[i] = x;
    return v;
}
VM_INLINE VD vm_splat_lanes_d(double x)
{
    VD v;
    for (int i = 0; i < DW; i++)
        v[i] = x;
    return v;
}
VM_INLINE int vm_any_lanes_i(VI m)
{
    int any = 0;
    for (int i = 0; i < FW; i++)
        any |= m[i] != 0;
    return any;
}
VM_INLINE int vm_any_lanes_l(VL m)
{
    int any = 0;
    for (int i = 0; i < DW; i++)
        any |= m[i] != 0;
    return any;
}
VM_INLINE int vm_all_lanes_i(VI m)
{
    int all = 1;
    for (int i = 0; i < FW; i++)
        all &= m[i] != 0;
    return all;
}
VM_INLINE int vm_all_lanes_l(VL m)
{
    int all = 1;
    for (int i = 0; i < DW; i++)
        all &= m[i] != 0;
    return all;
}
#endif

/* ---- lane primitives ---- */

VM_INLINE VF vf(float c) { return (VF){0} + c; }
VM_INLINE VD vd(double c) { return (VD){0} + c; }
VM_INLINE VF self(VI m, VF a, VF b) { return (VF)(((VI)a & m) | ((VI)b & ~m)); }
VM_INLINE VD seld(VL m, VD a, VD b) { return (VD)(((VL)a & m) | ((VL)b & ~m)); }
VM_INLINE VF absf(VF x) { return (VF)((VI)x & 0x7fffffff); }
VM_INLINE VD absd(VD x) { return (VD)((VL)x & INT64_MAX); }
/* |mag| with the sign of `sign` */
VM_INLINE VF copysignf_v(VF mag, VF sign)
{
    return (VF)(((VI)mag & 0x7fffffff) | ((VI)sign & INT32_MIN));
}
VM_INLINE VD copysignd_v(VD mag, VD sign)
{
    return (VD)(((VL)mag & INT64_MAX) | ((VL)sign & INT64_MIN));
}
/* r, or x itself (quieted) where x is a NaN. Which NaN operand an instruction passes on is
 * the compiler's choice of operand order, which may differ between a loop's body and its
 * tail; so every function whose NaN input meets another NaN inside ends with this, and its
 * result's bits never depend on that choice. */
VM_INLINE VF keep_nan_f(VF x, VF r) { return self(x != x, (VF)((VI)x | 0x00400000), r); }
VM_INLINE VD keep_nan_d(VD x, VD r)
{
    return seld(x != x, (VD)((VL)x | 0x0008000000000000LL), r);
}
/* Clamps to [lo, hi]; a NaN stays NaN. */
VM_INLINE VF clampf_v(VF x, float lo, float hi)
{
    return self(x < lo, vf(lo), self(x > hi, vf(hi), x));
}
VM_INLINE VD clampd_v(VD x, double lo, double hi)
{
    return seld(x < lo, vd(lo), seld(x > hi, vd(hi), x));
}
VM_INLINE VF loadf(const float *p)
{
    VF v;
    memcpy(&v, p, sizeof v);
    return v;
}
VM_INLINE VD loadd(const double *p)
{
    VD v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Horner's rule over a coefficient list, lowest power first. */
#define HORNER_F(x, coefficients)                                                           \
    ({                                                                                      \
        static const float c_[] = coefficients;                                             \
        VF r_ = vf(c_[sizeof c_ / sizeof c_[0] - 1]);                                       \
        for (int j_ = (int)(sizeof c_ / sizeof c_[0]) - 2; j_ >= 0; j_--)                   \
            r_ = VM_FMA_F(r_, (x), vf(c_[j_]));                                             \
        r_;                                                                                 \
    })
#define HORNER_D(x, coefficients)                                                           \
    ({                                                                                      \
        static const double c_[] = coefficients;                                            \
        VD r_ = vd(c_[sizeof c_ / sizeof c_[0] - 1]);                                       \
        for (int j_ = (int)(sizeof c_ / sizeof c_[0]) - 2; j_ >= 0; j_--)                   \
            r_ = VM_FMA_D(r_, (x), vd(c_[j_]));                                             \
        r_;                                                                                 \
    })

/* The rounding error of a*b (a*b = p + error exactly), given p = a*b rounded. Without FMA,
 * Dekker's product over Veltkamp's split (valid while a*b does not overflow). */
VM_INLINE VF prod_error_f(VF a, VF b, VF p)
{
#if VM_HAS_FMA
    return VM_FMA_F(a, b, -p);
#else
    VF ca = a * 4097.0f, cb = b * 4097.0f;
    VF ah = ca - (ca - a), bh = cb - (cb - b);
    VF al = a - ah, bl = b - bh;
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
}
VM_INLINE VD prod_error_d(VD a, VD b, VD p)
{
#if VM_HAS_FMA
    return VM_FMA_D(a, b, -p);
#else
    VD ca = a * 134217729.0, cb = b * 134217729.0;
    VD ah = ca - (ca - a), bh = cb - (cb - b);
    VD al = a - ah, bl = b - bh;
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
}
/* The rounding error of s = a + b (Knuth's two-sum: no condition on the magnitudes). */
VM_INLINE VF sum_error_f(VF a, VF b, VF s)
{
    VF bb = s - a;
    return (a - (s - bb)) + (b - bb);
}
VM_INLINE VD sum_error_d(VD a, VD b, VD s)
{
    VD bb = s - a;
    return (a - (s - bb)) + (b - bb);
}

/* ======================================= float32 ======================================= */

/* p * 2^n with one rounding, for n in [-252, 254]: two exact power-of-two factors whose
 * first product stays normal for the p (~[0.5, 200]) the kernels pass. */
VM_INLINE VF scale_f(VF p, VI n)
{
    VI n1 = n >> 1, n2 = n - n1;
    VF s1 = (VF)((VU)(n1 + 127) << 23), s2 = (VF)((VU)(n2 + 127) << 23);
    return p * s1 * s2;
}

/* exp(xh + xl) = p * 2^n with p in about [0.7, 1.42], for xh in [-120, 89] (callers clamp;
 * a NaN gives a NaN p) and |xl| <= ~2^-20 |xh| + 2^-20. n = round(xh / ln 2) by the
 * shifter trick; r = xh - n ln 2 is exact in its first step (Cody and Waite: n * LN2_HI is
 * exact, and Sterbenz's lemma makes the difference exact). */
VM_INLINE VF exp_core2_f(VF xh, VF xl, int has_low, VI *n)
{
    const float shifter = 0x1.8p23f;
    VF t = VM_FMA_F(xh, vf(VM_LOG2E_F), vf(shifter));
    VF k = t - shifter;
    *n = (VI)((VU)t - (VU)vf(shifter));
    VF r = xh - k * VM_LN2_HI_F;
    r = VM_FMA_F(k, vf(-VM_LN2_LO_F), r);
    if (has_low) /* a constant after inlining; adding a zero would not fold (-0 + 0 = +0) */
        r = r + xl;
    VF q = HORNER_F(r, VM_EXP_F);
    return 1.0f + VM_FMA_F(r * r, q, r);
}
VM_INLINE VF exp_core_f(VF x, VI *n) { return exp_core2_f(x, x, 0, n); }
/* p 2^n for n in [-126, 127]: one exact factor. */
VM_INLINE VF scale1_f(VF p, VI n) { return p * (VF)((VU)(n + 127) << 23); }

VM_INLINE VF exp_f(VF x)
{
    VI n;
    VF p = exp_core_f(clampf_v(x, -120.0f, 89.0f), &n);
    return keep_nan_f(x, scale_f(p, n));
}

/* x (> 0, denormals included) as 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)): returns f
 * (exact) and e as a float. Other inputs give garbage that the callers replace. */
VM_INLINE VF log_reduce_f(VF x, VF *e)
{
    VI tiny = x < 0x1p-126f;
    VI bits = (VI)self(tiny, x * 0x1p23f, x);
    VI k = (VI)((VU)bits - 0x3f3504f3u) >> 23; /* 0x3f3504f3: sqrt(1/2) */
    *e = __builtin_convertvector(k - (tiny & 23), VF);
    return (VF)((VU)bits - ((VU)k << 23)) - 1.0f;
}

/* e ln 2 + log(1 + f) + c, f in [sqrt(1/2) - 1, sqrt(2) - 1], |c| tiny: fdlibm's form, in
 * which f is exact and only the small correction s (f^2/2 + R) carries rounding error. */
VM_INLINE VF log_poly_f(VF f, VF e, VF c)
{
    VF s = f / (2.0f + f);
    VF z = s * s;
    VF r = z * HORNER_F(z, VM_LOG_F);
    VF hfsq = 0.5f * f * f;
    return e * VM_LN2_HI_F - ((hfsq - (s * (hfsq + r) + (e * VM_LN2_LO_F + c))) - f);
}

VM_INLINE VF log_f(VF x)
{
    VF e, f = log_reduce_f(x, &e);
    VF r = log_poly_f(f, e, vf(0.0f));
    r = self(x == INFINITY, x, r);
    r = self(x == 0.0f, vf(-INFINITY), r);
    r = self(x < 0.0f, vf(NAN), r);
    return keep_nan_f(x, r);
}

/* log1p: u = 1 + x rounded, and c = (1 + x) - u exactly (a two-sum whose larger operand is
 * known), so log1p(x) = log(u) + c / u to first order. */
VM_INLINE VF log1p_f(VF x)
{
    VF u = 1.0f + x;
    VF e, f = log_reduce_f(u, &e);
    VF c = self(x > 1.0f, 1.0f - (u - x), x - (u - 1.0f)) / u;
    VF r = log_poly_f(f, e, c);
    r = self(x == INFINITY, x, r);
    r = self(x == -1.0f, vf(-INFINITY), r);
    r = self(x < -1.0f, vf(NAN), r);
    return keep_nan_f(x, self(x == 0.0f, x, r)); /* -0 stays -0 */
}

/* tanh: an odd polynomial below 0.625, else 1 - 2 / (exp(2|x|) + 1), which rounds to 1
 * long before 2|x| reaches the clamp. */
VM_INLINE VF tanh_f(VF x)
{
    VF ax = absf(x), z = x * x;
    VF small = copysignf_v(VM_FMA_F(x, z * HORNER_F(z, VM_TANH_F), x), x); /* tanh(-0) */
    VI n;
    VF p = exp_core_f(clampf_v(2.0f * ax, 0.0f, 88.0f), &n);
    VF e = scale1_f(p, n); /* n in [0, 127] */
    VF large = 1.0f - 2.0f / (e + 1.0f);
    return keep_nan_f(x, self(ax < 0.625f, small, copysignf_v(large, x)));
}

/* Note [Wide range on demand]
 * sigmoid, silu and gelu (both forms) have results that underflow to denormals only for
 * arguments beyond ~-80 (v for gelu's tanh form, ~-13 for gelu). A vector with no such lane
 * takes a narrow path: no clamps, and one exact power-of-two factor instead of two. A vector
 * with one takes the wide path (clamped arguments, scale_f's two factors, -inf's NaN) for
 * all its lanes. The paths differ only in steps that are exact, or no-ops, for the narrow
 * lanes, so a lane's bits never depend on its neighbours. */

/* sigmoid = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, e = exp(-|x|) = p 2^n: nothing
 * overflows, and denormal results are right. */
VM_INLINE VF sigmoid_core_f(VF x, int wide)
{
    VF ax = absf(x);
    VI n;
    VF p = exp_core_f(-(wide ? clampf_v(ax, 0.0f, 120.0f) : ax), &n);
    VF e = wide ? scale_f(p, n) : scale1_f(p, n);
    VF r = self(x >= 0.0f, vf(1.0f), e) / (1.0f + e);
    return wide ? keep_nan_f(x, r) : r; /* a NaN takes the wide path */
}
VM_INLINE VF sigmoid_f(VF x)
{
    return !VM_ALL_I(absf(x) <= 80.0f) ? sigmoid_core_f(x, 1) : sigmoid_core_f(x, 0);
}

/* x / (1 + e^w) for x >= 0, and x e^w / (1 + e^w) for x < 0, where w = -|v| <= 0 (v of x's
 * sign) and e^w = p 2^n: one division, (x or xneg p) / d, then the scale by 2^n (or 1), last
 * so that a denormal result rounds once. `xneg` is x clamped so that xneg p 2^n underflows
 * when w is clamped (wide path). PyTorch's x / (1 + exp(-x)) gives NaN at x = -inf; so does
 * this (wide path). */
VM_INLINE VF silu_like_f(VF x, VF xneg, VF p, VI n, int wide)
{
    VF d = 1.0f + (wide ? scale_f(p, n) : scale1_f(p, n));
    VI positive = x >= 0.0f;
    VF q = self(positive, x, xneg * p) / d;
    VI nn = n & ~positive;
    VF r = wide ? scale_f(q, nn) : scale1_f(q, nn);
    return wide ? keep_nan_f(x, self(x == -INFINITY, vf(NAN), r)) : r;
}

VM_INLINE VF silu_core_f(VF x, int wide)
{
    VF ax = absf(x);
    VI n;
    VF p = exp_core_f(-(wide ? clampf_v(ax, 0.0f, 120.0f) : ax), &n);
    return silu_like_f(x, wide ? clampf_v(x, -120.0f, 0.0f) : x, p, n, wide);
}
VM_INLINE VF silu_f(VF x)
{
    return !VM_ALL_I(absf(x) <= 80.0f) ? silu_core_f(x, 1) : silu_core_f(x, 0);
}

/* erfcx(z) = erfc(z) exp(z^2) = t Q(t) with t = 1 / (1 + c a), for z = 2 c a in [0, 10.1]
 * (erf: c = 1/2, z = a; gelu: c = 1 / (2 sqrt 2), z = a / sqrt 2). erfcx moves by up to 2.3
 * times t's relative error (S = d ln erfcx / d ln t), and t = 1 / fl(1 + c a) carries two
 * roundings; both are recovered exactly (corr, to first order: 1 / (1 + c a) = t (1 + corr))
 * and applied as erfcx (1 + S corr). Callers put exp(-z^2) together from an exact square. */
VM_INLINE VF erfcx_f(VF a, float c)
{
    VF d = VM_FMA_F(a, vf(c), vf(1.0f));
    VF t = 1.0f / d;
#if VM_HAS_FMA
    VF ed = VM_FMA_F(a, vf(c), -(d - 1.0f)); /* c a + 1 - d (d - 1 is exact) */
    VF rho = VM_FMA_F(-t, d, vf(1.0f));      /* 1 - t d */
#else
    VF pc = a * c, ph = t * d;
    VF ed = (pc - (d - 1.0f)) + prod_error_f(a, vf(c), pc);
    VF rho = (1.0f - ph) - prod_error_f(t, d, ph);
#endif
    VF corr = VM_FMA_F(-t, ed, rho);
    VF u = t - VM_ERFCX_F_CENTRE;
    VF g = t * HORNER_F(u, VM_ERFCX_F);
    return VM_FMA_F(g, HORNER_F(u, VM_ERFCX_SLOPE_F) * corr, g);
}

/* erf: x E(x^2) below 0.84375, else 1 - erfc(|x|) with erfc(a) = erfcx(a) exp(-a^2), a^2 exact
 * as a double-float (its rounding error would be multiplied by a^2). */
VM_INLINE VF erf_f(VF x)
{
    VF ax = absf(x), z = x * x;
    VF small = VM_FMA_F(x, HORNER_F(z, VM_ERF_F), x * VM_ERF_F_C0_LO);
    VF a = clampf_v(ax, 0.0f, 9.0f); /* erfc(9) < 2^-120: 1 - erfc is 1 long before */
    VF h = a * a, l = prod_error_f(a, a, h);
    VI n;
    VF p = exp_core2_f(-h, -l, 1, &n);
    VF erfc = scale1_f(erfcx_f(a, 0.5f) * p, n);
    VF r = self(ax < 0.84375f, small, copysignf_v(1.0f - erfc, x));
    return keep_nan_f(x, r);
}

/* gelu = x Phi(x) from Phi(-a), a = |x|: x (1 - Phi(-a)) for x >= 0 (no cancellation: Phi(-a)
 * is at most 1/2) and x Phi(-a) for x < 0, where Phi(-a) = H(a) exp(-a^2/2), a^2 exact as a
 * double-float, and H a polynomial in a for a <= 3; beyond, H = erfcx(a / sqrt 2) / 2. The
 * product is scaled last (See Note [Wide range on demand]: the wide path serves a > 3). */
VM_INLINE VF gelu_core_f(VF x, int wide)
{
    VF a = absf(x);
    VF ac = wide ? clampf_v(a, 0.0f, 14.5f) : a;
    VF h = ac * ac, l = prod_error_f(ac, ac, h);
    VI n;
    VF p = exp_core2_f(-0.5f * h, -0.5f * l, 1, &n);
    VF m = HORNER_F(a - 1.5f, VM_GELU_H_F);
    if (wide)
        m = self(a <= 3.0f, m, 0.5f * erfcx_f(ac, 0.5f * VM_SQRT1_2_F));
    m = m * p;
    VF neg = wide ? scale_f(-ac * m, n) : scale1_f(-a * m, n);
    VF pos = x * (1.0f - (wide ? scale_f(m, n) : scale1_f(m, n)));
    VF r = self(x < 0.0f, neg, pos); /* -0 takes pos: -0 (1 - 1/2) */
    /* PyTorch: -inf (1 + erf(-inf)) is NaN */
    return wide ? keep_nan_f(x, self(x == -INFINITY, vf(NAN), r)) : r;
}
#ifdef VM_LOOKUP16_F
/* Note [GELU by table]
 * On the tables with a lane permute (AVX2, AVX-512), gelu for |x| <= 3 is x Phi(x) from a
 * piecewise polynomial instead of gelu_core_f's exp and degree-13 polynomial: a = |x| falls
 * in piece i = floor(4a) (a = 3 takes piece 11 with u = 1), u = 4a - i is exact (4a is, and
 * 4a - i is by Sterbenz's lemma for i >= 1), and Phi(-a) = P_i(u), a degree-5 minimax fit of
 * relative error (VM_GELU_T_F, scripts/gen_vecmath_coefficients.py) whose coefficients each
 * lane takes from a 16-entry table by a permute. x < 0 gives x P, else x (1 - P) (so -0
 * gives -0). Half the arithmetic of gelu_core_f, and within the same bound
 * (scripts/check_vecmath_ulp.c). Lanes beyond 3 take gelu_core_f's wide path; a lane's
 * path depends on its own input only, never on its neighbours' (Note [Wide range on
 * demand]), so both are computed when a vector holds both kinds. The two tables do the
 * same operations in the same order, so their results are the same bits; SSE2, with no
 * permute, keeps gelu_core_f for every lane. */
static const float gelu_table_f[VM_GELU_T_F_DEGREE + 1][16] __attribute__((aligned(64))) =
    VM_GELU_T_F;

VM_INLINE VF gelu_by_table_f(VF x)
{
    VF a4 = absf(x) * 4.0f;
    VI i = __builtin_convertvector(a4, VI); /* truncation; garbage beyond 3, never used */
    VI over = i > VM_GELU_T_F_PIECES - 1;
    i = (i & ~over) | ((VM_GELU_T_F_PIECES - 1) & over);
    VF u = a4 - __builtin_convertvector(i, VF);
    VF p = VM_LOOKUP16_F(gelu_table_f[VM_GELU_T_F_DEGREE], i);
    for (int j = VM_GELU_T_F_DEGREE - 1; j >= 0; j--)
        p = VM_FMA_F(p, u, VM_LOOKUP16_F(gelu_table_f[j], i));
    return self(x < 0.0f, x * p, x * (1.0f - p));
}

VM_INLINE VF gelu_f(VF x)
{
    VI narrow = absf(x) <= 3.0f;
    VF r = gelu_by_table_f(x);
    return VM_ALL_I(narrow) ? r : self(narrow, r, gelu_core_f(x, 1));
}
#else
VM_INLINE VF gelu_f(VF x)
{
    return !VM_ALL_I(absf(x) <= 3.0f) ? gelu_core_f(x, 1) : gelu_core_f(x, 0);
}
#endif

/* The halves of a float vector as double vectors, and back (the instruction set's own
 * conversions where it has them: through a union, GCC goes through memory). */
#ifdef VM_NARROW
VM_INLINE void widen_f(VF x, VD *lo, VD *hi)
{
    *lo = VM_WIDEN_LO(x);
    *hi = VM_WIDEN_HI(x);
}
VM_INLINE VF narrow_d(VD lo, VD hi) { return VM_NARROW(lo, hi); }
#else
typedef union {
    VF f;
    VFH h[2];
} vm_halves;
VM_INLINE void widen_f(VF x, VD *lo, VD *hi)
{
    vm_halves u = {.f = x};
    *lo = __builtin_convertvector(u.h[0], VD);
    *hi = __builtin_convertvector(u.h[1], VD);
}
VM_INLINE VF narrow_d(VD lo, VD hi)
{
    vm_halves u;
    u.h[0] = __builtin_convertvector(lo, VFH);
    u.h[1] = __builtin_convertvector(hi, VFH);
    return u.f;
}
#endif

/* gelu's tanh form: 0.5 x (1 + tanh(u)) = x sigmoid(v) with v = 2u = x (A + B x^2). v is
 * computed in double and split into a float pair, since its rounding error would be
 * multiplied by |v| (up to ~120) in the exponentially small results of x < 0. */
VM_INLINE VF gelu_tanh_f(VF x)
{
    VF xc = clampf_v(x, -20.0f, 20.0f);
    VD lo, hi;
    widen_f(xc, &lo, &hi);
    lo = lo * (VM_GELU_TANH_A_D + VM_GELU_TANH_B_D * lo * lo);
    hi = hi * (VM_GELU_TANH_A_D + VM_GELU_TANH_B_D * hi * hi);
    VF vh = narrow_d(lo, hi);
    VD vh_lo, vh_hi;
    widen_f(vh, &vh_lo, &vh_hi);
    VF vl = narrow_d(lo - vh_lo, hi - vh_hi);
    /* w = -|v| */
    VF wh = -absf(vh), wl = self(vh < 0.0f, vl, -vl);
    VI n;
    if (!VM_ALL_I(wh >= -80.0f)) {
        VF p = exp_core2_f(clampf_v(wh, -120.0f, 0.0f), wl, 1, &n);
        return silu_like_f(x, self(x < 0.0f, xc, vf(0.0f)), p, n, 1);
    }
    VF p = exp_core2_f(wh, wl, 1, &n);
    return silu_like_f(x, x, p, n, 0);
}

VM_INLINE VF sqrt_f(VF x) { return VM_SQRT_F(x); }
/* 1 / sqrt(x), as PyTorch computes it (two roundings). */
VM_INLINE VF rsqrt_f(VF x) { return 1.0f / VM_SQRT_F(x); }

/* ======================================= float64 ======================================= */

/* p * 2^n for n in [-2044, 2046]; see scale_f. */
VM_INLINE VD scale_d(VD p, VL n)
{
    VL n1 = n >> 1, n2 = n - n1;
    VD s1 = (VD)((VUL)(n1 + 1023) << 52), s2 = (VD)((VUL)(n2 + 1023) << 52);
    return p * s1 * s2;
}

/* An integer-valued double vector of |k| < 2^51 from int64 lanes (SSE2 and AVX2 have no
 * int64 conversion): the shifter trick backwards. */
VM_INLINE VD int_to_double(VL k)
{
    const double shifter = 0x1.8p52;
    return (VD)((VUL)k + (VUL)vd(shifter)) - shifter;
}

/* exp(xh + xl) = p 2^n, xh in [-800, 710]; see exp_core_f. */
VM_INLINE VD exp_core2_d(VD xh, VD xl, int has_low, VL *n)
{
    const double shifter = 0x1.8p52;
    VD t = VM_FMA_D(xh, vd(VM_LOG2E_D), vd(shifter));
    VD k = t - shifter;
    *n = (VL)((VUL)t - (VUL)vd(shifter));
    VD r = xh - k * VM_LN2_HI_D;
    r = VM_FMA_D(k, vd(-VM_LN2_LO_D), r);
    if (has_low)
        r = r + xl;
    VD q = HORNER_D(r, VM_EXP_D);
    return 1.0 + VM_FMA_D(r * r, q, r);
}
VM_INLINE VD exp_core_d(VD x, VL *n) { return exp_core2_d(x, x, 0, n); }
VM_INLINE VD scale1_d(VD p, VL n) { return p * (VD)((VUL)(n + 1023) << 52); }

VM_INLINE VD exp_d(VD x)
{
    VL n;
    VD p = exp_core_d(clampd_v(x, -800.0, 710.0), &n);
    return keep_nan_d(x, scale_d(p, n));
}

VM_INLINE VD log_reduce_d(VD x, VD *e)
{
    VL tiny = x < 0x1p-1022;
    VL bits = (VL)seld(tiny, x * 0x1p54, x);
    VL k = (VL)((VUL)bits - 0x3fe6a09e667f3bcdULL) >> 52; /* sqrt(1/2) */
    *e = int_to_double(k - (tiny & 54));
    return (VD)((VUL)bits - ((VUL)k << 52)) - 1.0;
}

VM_INLINE VD log_poly_d(VD f, VD e, VD c)
{
    VD s = f / (2.0 + f);
    VD z = s * s;
    VD r = z * HORNER_D(z, VM_LOG_D);
    VD hfsq = 0.5 * f * f;
    return e * VM_LN2_HI_D - ((hfsq - (s * (hfsq + r) + (e * VM_LN2_LO_D + c))) - f);
}

VM_INLINE VD log_d(VD x)
{
    VD e, f = log_reduce_d(x, &e);
    VD r = log_poly_d(f, e, vd(0.0));
    r = seld(x == INFINITY, x, r);
    r = seld(x == 0.0, vd(-INFINITY), r);
    r = seld(x < 0.0, vd(NAN), r);
    return keep_nan_d(x, r);
}

VM_INLINE VD log1p_d(VD x)
{
    VD u = 1.0 + x;
    VD e, f = log_reduce_d(u, &e);
    VD c = seld(x > 1.0, 1.0 - (u - x), x - (u - 1.0)) / u;
    VD r = log_poly_d(f, e, c);
    r = seld(x == INFINITY, x, r);
    r = seld(x == -1.0, vd(-INFINITY), r);
    r = seld(x < -1.0, vd(NAN), r);
    return keep_nan_d(x, seld(x == 0.0, x, r));
}

VM_INLINE VD tanh_d(VD x)
{
    VD ax = absd(x), z = x * x;
    VD small = copysignd_v(VM_FMA_D(x, z * HORNER_D(z, VM_TANH_D), x), x);
    VL n;
    VD p = exp_core_d(clampd_v(2.0 * ax, 0.0, 40.0), &n);
    VD e = scale1_d(p, n);
    VD large = 1.0 - 2.0 / (e + 1.0);
    return keep_nan_d(x, seld(ax < 0.625, small, copysignd_v(large, x)));
}

/* See sigmoid_f, silu_f, erf_f, gelu_f and Note [Wide range on demand]: results are
 * normal for |x| <= 700 (|x| <= 37 in gelu), and the wide path clamps to 800 (40). */
VM_INLINE VD sigmoid_core_d(VD x, int wide)
{
    VD ax = absd(x);
    VL n;
    VD p = exp_core_d(-(wide ? clampd_v(ax, 0.0, 800.0) : ax), &n);
    VD e = wide ? scale_d(p, n) : scale1_d(p, n);
    VD r = seld(x >= 0.0, vd(1.0), e) / (1.0 + e);
    return wide ? keep_nan_d(x, r) : r;
}
VM_INLINE VD sigmoid_d(VD x)
{
    return !VM_ALL_L(absd(x) <= 700.0) ? sigmoid_core_d(x, 1) : sigmoid_core_d(x, 0);
}

VM_INLINE VD silu_like_d(VD x, VD xneg, VD p, VL n, int wide)
{
    VD d = 1.0 + (wide ? scale_d(p, n) : scale1_d(p, n));
    VL positive = x >= 0.0;
    VD q = seld(positive, x, xneg * p) / d;
    VL nn = n & ~positive;
    VD r = wide ? scale_d(q, nn) : scale1_d(q, nn);
    return wide ? keep_nan_d(x, seld(x == -INFINITY, vd(NAN), r)) : r;
}

VM_INLINE VD silu_core_d(VD x, int wide)
{
    VD ax = absd(x);
    VL n;
    VD p = exp_core_d(-(wide ? clampd_v(ax, 0.0, 800.0) : ax), &n);
    return silu_like_d(x, wide ? clampd_v(x, -800.0, 0.0) : x, p, n, wide);
}
VM_INLINE VD silu_d(VD x)
{
    return !VM_ALL_L(absd(x) <= 700.0) ? silu_core_d(x, 1) : silu_core_d(x, 0);
}

/* erfcx(z), z = 2 c a in [0, 27.3]; see erfcx_f. */
VM_INLINE VD erfcx_d(VD a, double c)
{
    VD d = VM_FMA_D(a, vd(c), vd(1.0));
    VD t = 1.0 / d;
#if VM_HAS_FMA
    VD ed = VM_FMA_D(a, vd(c), -(d - 1.0));
    VD rho = VM_FMA_D(-t, d, vd(1.0));
#else
    VD pc = a * c, ph = t * d;
    VD ed = (pc - (d - 1.0)) + prod_error_d(a, vd(c), pc);
    VD rho = (1.0 - ph) - prod_error_d(t, d, ph);
#endif
    VD corr = VM_FMA_D(-t, ed, rho);
    VD u = t - VM_ERFCX_D_CENTRE;
    VD g = t * HORNER_D(u, VM_ERFCX_D);
    return VM_FMA_D(g, HORNER_D(u, VM_ERFCX_SLOPE_D) * corr, g);
}

VM_INLINE VD erf_d(VD x)
{
    VD ax = absd(x), z = x * x;
    VD small = VM_FMA_D(x, HORNER_D(z, VM_ERF_D), x * VM_ERF_D_C0_LO);
    VD a = clampd_v(ax, 0.0, 6.0);
    VD h = a * a, l = prod_error_d(a, a, h);
    VL n;
    VD p = exp_core2_d(-h, -l, 1, &n);
    VD erfc = scale1_d(erfcx_d(a, 0.5) * p, n);
    VD r = seld(ax < 0.84375, small, copysignd_v(1.0 - erfc, x));
    return keep_nan_d(x, r);
}

VM_INLINE VD gelu_core_d(VD x, int wide)
{
    VD a = wide ? clampd_v(absd(x), 0.0, 40.0) : absd(x);
    VD h = a * a, l = prod_error_d(a, a, h);
    VL n;
    VD p = exp_core2_d(-0.5 * h, -0.5 * l, 1, &n);
    VD m = erfcx_d(a, 0.5 * VM_SQRT1_2_D) * p;
    n = n - 1;
    VD neg = wide ? scale_d(-a * m, n) : scale1_d(-a * m, n);
    VD pos = x * (1.0 - (wide ? scale_d(m, n) : scale1_d(m, n)));
    VD r = seld(x < 0.0, neg, pos);
    return wide ? keep_nan_d(x, seld(x == -INFINITY, vd(NAN), r)) : r;
}
VM_INLINE VD gelu_d(VD x)
{
    return !VM_ALL_L(absd(x) <= 37.0) ? gelu_core_d(x, 1) : gelu_core_d(x, 0);
}

/* v = x (A + B x^2) in double-double (see gelu_tanh_f), then x sigmoid(v). */
VM_INLINE VD gelu_tanh_d(VD x)
{
    VD xc = clampd_v(x, -40.0, 40.0);
    VD zh = xc * xc, zl = prod_error_d(xc, xc, zh);
    VD bh = VM_GELU_TANH_B_D * zh;
    VD bl = prod_error_d(vd(VM_GELU_TANH_B_D), zh, bh) + VM_GELU_TANH_B_D * zl +
            VM_GELU_TANH_B_LO_D * zh;
    VD wh = VM_GELU_TANH_A_D + bh;
    VD wl = sum_error_d(vd(VM_GELU_TANH_A_D), bh, wh) + bl + VM_GELU_TANH_A_LO_D;
    VD vh = xc * wh;
    VD vl = prod_error_d(xc, wh, vh) + xc * wl;
    VD nh = -absd(vh), nl = seld(vh < 0.0, vl, -vl);
    VL n;
    if (!VM_ALL_L(nh >= -700.0)) {
        VD p = exp_core2_d(clampd_v(nh, -800.0, 0.0), nl, 1, &n);
        return silu_like_d(x, seld(x < 0.0, xc, vd(0.0)), p, n, 1);
    }
    VD p = exp_core2_d(nh, nl, 1, &n);
    return silu_like_d(x, x, p, n, 0);
}

VM_INLINE VD sqrt_d(VD x) { return VM_SQRT_D(x); }
VM_INLINE VD rsqrt_d(VD x) { return 1.0 / VM_SQRT_D(x); }

/* ---- sin and cos: n = round(x 2/pi), r = x - n pi/2, then the quadrant n mod 4 picks
 * +-sin(r) or +-cos(r). Lanes with |x| above the reduction's range (and inf, NaN) are
 * recomputed by the C library, whose reduction works for every double. ---- */

#define VM_SINCOS_LIMIT 1e6 /* |n| < 2^20: n times a 33-digit part of pi/2 is exact */

/* sin(r) or cos(r) by the quadrant q (+1 for cos), |r| <= pi/4 (a double-double for
 * float64). */
VM_INLINE VD quadrant_pick(VL q, VD s, VD c)
{
    VD r = seld((q & 1) != 0, c, s);
    return (VD)((VUL)r ^ ((VUL)(q & 2) << 62));
}

/* float inputs, computed in double: two parts of pi/2 suffice (|r| of a float is never
 * below ~2^-30, and the reduction's error is ~2^-66). */
VM_INLINE VD sincos_fd(VD x, int cosine)
{
    const double shifter = 0x1.8p52;
    VD t = VM_FMA_D(x, vd(VM_TWO_OVER_PI_D), vd(shifter));
    VD k = t - shifter;
    VL q = (VL)((VUL)t - (VUL)vd(shifter) + (uint64_t)cosine);
    VD r = VM_FMA_D(k, vd(-VM_PIO2_F_2), x - k * VM_PIO2_F_1);
    VD z = r * r;
    VD s = VM_FMA_D(r * z, HORNER_D(z, VM_SIN_F), r);
    VD c = VM_FMA_D(z * z, HORNER_D(z, VM_COS_F), 1.0 - 0.5 * z);
    return quadrant_pick(q, s, c);
}

#define SINCOS_F(name, cosine, libm)                                                        \
    VM_INLINE VF name##_f(VF x)                                                             \
    {                                                                                       \
        VD lo, hi;                                                                          \
        widen_f(x, &lo, &hi);                                                               \
        VF r = narrow_d(sincos_fd(lo, cosine), sincos_fd(hi, cosine));                      \
        r = self(x == 0.0f, cosine ? vf(1.0f) : x, r); /* sin(-0) is -0 */                  \
        VI big = ~(absf(x) <= (float)VM_SINCOS_LIMIT);                                      \
        if (VM_ANY_I(big)) {                                                                \
            vm_lanes_f lx = {.v = x}, lr = {.v = r};                                        \
            for (int i = 0; i < FW; i++)                                                    \
                if (!(fabsf(lx.a[i]) <= (float)VM_SINCOS_LIMIT))                            \
                    lr.a[i] = (float)libm((double)lx.a[i]);                                 \
            r = lr.v;                                                                       \
        }                                                                                   \
        return r;                                                                           \
    }
typedef union {
    VF v;
    float a[FW];
} vm_lanes_f;
typedef union {
    VD v;
    double a[DW];
} vm_lanes_d;
SINCOS_F(sin, 0, sin)
SINCOS_F(cos, 1, cos)

/* double inputs: four parts of pi/2 (three of 33 digits), with two-sums, give r as a
 * double-double to ~2^-130 (|r| of a double below 1e6 is never below ~2^-60). */
VM_INLINE VD sincos_dd(VD x, int cosine)
{
    const double shifter = 0x1.8p52;
    VD t = VM_FMA_D(x, vd(VM_TWO_OVER_PI_D), vd(shifter));
    VD k = t - shifter;
    VL q = (VL)((VUL)t - (VUL)vd(shifter) + (uint64_t)cosine);
    VD r0 = x - k * VM_PIO2_D_1;
    VD w2 = -(k * VM_PIO2_D_2), r1 = r0 + w2;
    VD e1 = sum_error_d(r0, w2, r1);
    VD w3 = -(k * VM_PIO2_D_3), r2 = r1 + w3;
    VD e2 = sum_error_d(r1, w3, r2);
    VD tail = VM_FMA_D(k, vd(-VM_PIO2_D_4), e1 + e2);
    VD rh = r2 + tail, rl = tail - (rh - r2);
    VD z = rh * rh, hz = 0.5 * z;
    /* sin(rh + rl) = sin(rh) + rl cos(rh); cos(rh + rl) = cos(rh) - rl sin(rh) */
    VD s = rh + VM_FMA_D(rh * z, HORNER_D(z, VM_SIN_D), rl * (1.0 - hz));
    VD w = 1.0 - hz; /* fdlibm's __kernel_cos: ((1 - w) - hz) recovers w's rounding */
    VD c = w + (((1.0 - w) - hz) + (VM_FMA_D(z * z, HORNER_D(z, VM_COS_D), -rh * rl)));
    return quadrant_pick(q, s, c);
}

#define SINCOS_D(name, cosine, libm)                                                        \
    VM_INLINE VD name##_d(VD x)                                                             \
    {                                                                                       \
        VD r = sincos_dd(x, cosine);                                                        \
        r = seld(x == 0.0, cosine ? vd(1.0) : x, r);                                        \
        VL big = ~(absd(x) <= VM_SINCOS_LIMIT);                                             \
        if (VM_ANY_L(big)) {                                                                \
            vm_lanes_d lx = {.v = x}, lr = {.v = r};                                        \
            for (int i = 0; i < DW; i++)                                                    \
                if (!(fabs(lx.a[i]) <= VM_SINCOS_LIMIT))                                    \
                    lr.a[i] = libm(lx.a[i]);                                                \
            r = lr.v;                                                                       \
        }                                                                                   \
        return r;                                                                           \
    }
SINCOS_D(sin, 0, sin)
SINCOS_D(cos, 1, cos)

/* ---- pow(x, y) = exp(y log|x|), with the sign and NaN rules of C's pow for finite x and
 * y; lanes where x or y is infinite or NaN are recomputed by the C library (as are none in
 * practice). ---- */

/* Whether y (finite) is an integer, and whether an odd one. */
VM_INLINE void integer_parity(VD y, VL *is_integer, VL *is_odd)
{
    VD ay = absd(y);
    VL small = ay < 0x1p52;
    VD v = seld(small, ay + 0x1p52, ay); /* below 2^52: the integer part in the low bits */
    *is_integer = ~small | ((v - 0x1p52) == ay);
    *is_odd = *is_integer & (((VL)v & 1) != 0) & (ay < 0x1p53);
}

/* The sign and special cases around e = |x|^y: negative x (and -0) with an odd integer y
 * negate it, with a non-integer y give NaN; y = 0 gives 1 (even for x = 0). */
VM_INLINE VD pow_signs(VD x, VD y, VD e)
{
    VL is_integer, is_odd;
    integer_parity(y, &is_integer, &is_odd);
    VL negative = (VL)x < 0;
    e = seld(negative & is_odd, -e, e);
    e = seld(negative & ~is_integer & (x != 0.0), vd(NAN), e);
    return seld(y == 0.0, vd(1.0), e);
}

/* pow_signs for float vectors (|y| >= 2^24 is an even integer). */
VM_INLINE VF pow_signs_f(VF x, VF y, VF e)
{
    VF ay = absf(y);
    VI small = ay < 0x1p23f;
    VF v = self(small, ay + 0x1p23f, ay);
    VI is_integer = ~small | ((v - 0x1p23f) == ay);
    VI is_odd = is_integer & (((VI)v & 1) != 0) & (ay < 0x1p24f);
    VI negative = (VI)x < 0;
    e = self(negative & is_odd, -e, e);
    e = self(negative & ~is_integer & (x != 0.0f), vf(NAN), e);
    return self(y == 0.0f, vf(1.0f), e);
}

/* float's pow in double: w = y log2|x| within 2^-36 relative, so 2^w is off by < 2^-29 for
 * any float result, then one rounding to float. x is a nonzero float (normal in double). */
VM_INLINE VD log2_fd(VD x)
{
    VL bits = (VL)x;
    VL k = (VL)((VUL)bits - 0x3fe6a09e667f3bcdULL) >> 52; /* sqrt(1/2) */
    VD e = int_to_double(k);
    VD f = (VD)((VUL)bits - ((VUL)k << 52)) - 1.0;
    VD s = f / (2.0 + f), z = s * s;
    return VM_FMA_D(s, VM_FMA_D(z, HORNER_D(z, VM_POW_LOG2_F), vd(VM_TWO_LOG2E_D)), e);
}
/* 2^w for |w| <= 160: w - round(w) is exact. */
VM_INLINE VD exp2_fd(VD w)
{
    const double shifter = 0x1.8p52;
    VD t = w + shifter;
    VD r = w - (t - shifter);
    VL n = (VL)((VUL)t - (VUL)vd(shifter));
    return scale1_d(1.0 + r * HORNER_D(r, VM_POW_EXP2_F), n);
}

/* Every case: x of any sign and zero, w clamped, C's rules for signs and zeros, and the C
 * library for infinite or NaN x or y. */
VM_INLINE VF pow_any_f(VF x, VF y)
{
    VF ax = absf(x);
    VD xl, xh, yl, yh;
    widen_f(ax, &xl, &xh);
    widen_f(y, &yl, &yh);
    VF r = narrow_d(exp2_fd(clampd_v(yl * log2_fd(xl), -160.0, 130.0)),
                    exp2_fd(clampd_v(yh * log2_fd(xh), -160.0, 130.0)));
    r = self(ax == 0.0f, self(y < 0.0f, vf(INFINITY), vf(0.0f)), r);
    r = pow_signs_f(x, y, r);
    VI special = ~((ax < INFINITY) & (absf(y) < INFINITY));
    if (VM_ANY_I(special)) {
        vm_lanes_f lx = {.v = x}, ly = {.v = y}, lr = {.v = r};
        for (int i = 0; i < FW; i++)
            if (!(isfinite(lx.a[i]) && isfinite(ly.a[i])))
                lr.a[i] = (float)pow((double)lx.a[i], (double)ly.a[i]);
        r = lr.v;
    }
    return r;
}

/* The common case first: x > 0 and y finite with a normal float result need none of
 * pow_any_f's rules, whose steps are no-ops for such lanes (so the bits agree: See Note
 * [Wide range on demand]). */
VM_INLINE VF pow_f(VF x, VF y)
{
    VD xl, xh, yl, yh;
    widen_f(x, &xl, &xh);
    widen_f(y, &yl, &yh);
    VD wl = yl * log2_fd(xl), wh = yh * log2_fd(xh);
    VI odd = ~((x > 0.0f) & (x < INFINITY) & (absf(y) < INFINITY));
    VL far = ~((absd(wl) <= 125.0) & (absd(wh) <= 125.0));
    if (VM_ANY_I(odd) || VM_ANY_L(far))
        return pow_any_f(x, y);
    return narrow_d(exp2_fd(wl), exp2_fd(wh));
}

/* log(x) as a double-double (lh + ll) to ~2^-64 relative, for x > 0 finite: s = f/(2+f)
 * as a double-double, 2s + (2/3)s^3 in double-double, the rest (< 2^-12 of the result) in
 * double. */
VM_INLINE VD log_dd(VD x, VD *ll)
{
    VD e, f = log_reduce_d(x, &e);
    VD dh = 2.0 + f, dl = f - (dh - 2.0);
    VD sh = f / dh;
    VD rho = -prod_error_d(sh, dh, sh * dh) + (f - sh * dh); /* f - sh dh, exactly */
    VD sl = (rho - sh * dl) / dh;
    VD z = sh * sh;
    VD rest = sh * z * z * HORNER_D(z, VM_POW_LOG_D);
    /* (2/3) s^3 */
    VD s2h = z, s2l = prod_error_d(sh, sh, z) + 2.0 * sh * sl;
    VD s3h = s2h * sh, s3l = prod_error_d(s2h, sh, s3h) + s2h * sl + s2l * sh;
    VD ch = VM_TWO_THIRDS_D * s3h;
    VD cl = prod_error_d(vd(VM_TWO_THIRDS_D), s3h, ch) + VM_TWO_THIRDS_D * s3l +
            VM_TWO_THIRDS_LO_D * s3h;
    /* 2s + (2/3)s^3 + rest */
    VD ah = 2.0 * sh + ch;
    VD al = (2.0 * sh - ah) + ch + (2.0 * sl + cl + rest);
    /* + e ln 2 (e LN2_HI exact) */
    VD eh = e * VM_LN2_HI_D;
    VD bh = eh + ah;
    VD bl = sum_error_d(eh, ah, bh) + al + e * VM_LN2_LO_D;
    VD lh = bh + bl;
    *ll = bl - (lh - bh);
    return lh;
}

VM_INLINE VD pow_d(VD x, VD y)
{
    VD ax = absd(x), ll;
    VD lh = log_dd(ax, &ll);
    VD wh = y * lh;
    VD wl = prod_error_d(y, lh, wh) + y * ll;
    VL clamp = ~((wh >= -800.0) & (wh <= 710.0));
    VL n;
    VD p = exp_core2_d(clampd_v(wh, -800.0, 710.0), seld(clamp, vd(0.0), wl), 1, &n);
    VD e = scale_d(p, n);
    e = seld(ax == 0.0, seld(y < 0.0, vd(INFINITY), vd(0.0)), e);
    VD r = pow_signs(x, y, e);
    VL special = ~((ax < INFINITY) & (absd(y) < INFINITY));
    if (VM_ANY_L(special)) {
        vm_lanes_d lx = {.v = x}, ly = {.v = y}, lr = {.v = r};
        for (int i = 0; i < DW; i++)
            if (!(isfinite(lx.a[i]) && isfinite(ly.a[i])))
                lr.a[i] = pow(lx.a[i], ly.a[i]);
        r = lr.v;
    }
    return r;
}

/* ---- pow by a small integer, as PyTorch's pow_tensor_scalar computes it ---- */
VM_INLINE VF square_f(VF x) { return x * x; }
VM_INLINE VF cube_f(VF x) { return x * x * x; }
VM_INLINE VF reciprocal_f(VF x) { return 1.0f / x; }
VM_INLINE VF reciprocal_square_f(VF x) { return 1.0f / (x * x); }
VM_INLINE VD square_d(VD x) { return x * x; }
VM_INLINE VD cube_d(VD x) { return x * x * x; }
VM_INLINE VD reciprocal_d(VD x) { return 1.0 / x; }
VM_INLINE VD reciprocal_square_d(VD x) { return 1.0 / (x * x); }

/* ---- the array loops: whole vectors, then the tail through the same function on a
 * zero-padded vector (See Note [Vectorised math functions]) ---- */

#define VM_UNARY_LOOP(name, T, VT, W, suffix)                                               \
    static void vm_##name##_##suffix(T *out, const T *in, int64_t n)                         \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + W <= n; i += W) {                                                        \
            VT v;                                                                           \
            memcpy(&v, in + i, sizeof v);                                                   \
            v = name##_##suffix(v);                                                         \
            memcpy(out + i, &v, sizeof v);                                                  \
        }                                                                                   \
        if (i < n) {                                                                        \
            VT v = {0};                                                                     \
            memcpy(&v, in + i, (size_t)(n - i) * sizeof(T));                                \
            v = name##_##suffix(v);                                                         \
            memcpy(out + i, &v, (size_t)(n - i) * sizeof(T));                               \
        }                                                                                   \
    }
#define VM_UNARY_LOOPS(name)                                                                \
    VM_UNARY_LOOP(name, float, VF, FW, f)                                                   \
    VM_UNARY_LOOP(name, double, VD, DW, d)
VECMATH_FORALL_UNARY(VM_UNARY_LOOPS)
VM_UNARY_LOOPS(square)
VM_UNARY_LOOPS(cube)
VM_UNARY_LOOPS(reciprocal)
VM_UNARY_LOOPS(reciprocal_square)

/* Binary: y is an array (y_step 1) or one value (y_step 0). */
#define VM_POW_LOOP(T, VT, W, suffix)                                                       \
    static void vm_pow_##suffix(T *out, const T *x, const T *y, int64_t y_step, int64_t n)  \
    {                                                                                       \
        if (n <= 0)                                                                         \
            return;                                                                         \
        int64_t i = 0;                                                                      \
        VT vy = (VT){0} + y[0];                                                             \
        for (; i + W <= n; i += W) {                                                        \
            VT vx;                                                                          \
            memcpy(&vx, x + i, sizeof vx);                                                  \
            if (y_step)                                                                     \
                memcpy(&vy, y + i, sizeof vy);                                              \
            vx = pow_##suffix(vx, vy);                                                      \
            memcpy(out + i, &vx, sizeof vx);                                                \
        }                                                                                   \
        if (i < n) {                                                                        \
            VT vx = {0};                                                                    \
            memcpy(&vx, x + i, (size_t)(n - i) * sizeof(T));                                \
            if (y_step) {                                                                   \
                vy = (VT){0};                                                               \
                memcpy(&vy, y + i, (size_t)(n - i) * sizeof(T));                            \
            }                                                                               \
            vx = pow_##suffix(vx, vy);                                                      \
            memcpy(out + i, &vx, (size_t)(n - i) * sizeof(T));                              \
        }                                                                                   \
    }
VM_POW_LOOP(float, VF, FW, f)
VM_POW_LOOP(double, VD, DW, d)

/* ---- the row kernels of softmax, log_softmax and layer_norm (See Note [Row sums in a
 * fixed order], vecmath.h) ---- */

/* LANES partial sums (or maxima) of a row, LANES / W vectors of them; element j goes to
 * partial j % LANES. MT is the lane mask type of VT. */
#define VM_ROW_KERNELS(T, VT, MT, W, LANES, suffix, LOG)                                    \
    enum { ROW_VECS_##suffix = LANES / W };                                                 \
    VM_INLINE VT row_vec_##suffix(const T *p)                                               \
    {                                                                                       \
        VT v;                                                                               \
        memcpy(&v, p, sizeof v);                                                            \
        return v;                                                                           \
    }                                                                                       \
    /* The last block of a row, its n (< LANES) elements padded with `pad`. */              \
    VM_INLINE void row_pad_##suffix(T *buf, const T *p, int64_t n, T pad)                   \
    {                                                                                       \
        for (int64_t i = 0; i < LANES; i++)                                                 \
            buf[i] = i < n ? p[i] : pad;                                                    \
    }                                                                                       \
    /* The LANES partials folded by halves: lane i takes lane i + h, h = LANES/2, ..., 1,   \
     * by a sum or (max) the larger. */                                                     \
    VM_INLINE T row_fold_##suffix(const VT *acc, int max)                                   \
    {                                                                                       \
        T buf[LANES];                                                                       \
        for (int k = 0; k < ROW_VECS_##suffix; k++)                                         \
            memcpy(buf + k * W, &acc[k], sizeof(VT));                                       \
        for (int h = LANES / 2; h >= 1; h /= 2)                                             \
            for (int i = 0; i < h; i++)                                                     \
                buf[i] = !max ? buf[i] + buf[i + h] : buf[i + h] > buf[i] ? buf[i + h] : buf[i];\
        return buf[0];                                                                      \
    }                                                                                       \
    VM_INLINE void row_max_block_##suffix(VT *m, MT *nan, const T *p)                       \
    {                                                                                       \
        for (int k = 0; k < ROW_VECS_##suffix; k++) {                                       \
            VT v = row_vec_##suffix(p + k * W);                                             \
            MT gt = v > m[k];                                                               \
            m[k] = (VT)(((MT)v & gt) | ((MT)m[k] & ~gt));                                   \
            *nan |= v != v;                                                                 \
        }                                                                                   \
    }                                                                                       \
    /* The max of a row, or NaN when any element is NaN. */                                 \
    VM_INLINE T row_max_##suffix(const T *x, int64_t len)                                   \
    {                                                                                       \
        VT m[ROW_VECS_##suffix];                                                            \
        MT nan = {0};                                                                       \
        for (int k = 0; k < ROW_VECS_##suffix; k++)                                         \
            m[k] = (VT){0} - (T)INFINITY;                                                   \
        int64_t i = 0;                                                                      \
        for (; i + LANES <= len; i += LANES)                                                \
            row_max_block_##suffix(m, &nan, x + i);                                         \
        if (i < len) {                                                                      \
            T buf[LANES];                                                                   \
            row_pad_##suffix(buf, x + i, len - i, -(T)INFINITY);                            \
            row_max_block_##suffix(m, &nan, buf);                                           \
        }                                                                                   \
        T max = row_fold_##suffix(m, 1);                                                   \
        for (int l = 0; l < W; l++)                                                         \
            if (nan[l])                                                                     \
                return (T)NAN;                                                              \
        return max;                                                                         \
    }                                                                                       \
    /* exp(p - max) into y (n of them, when y is not NULL), summed into acc; lanes from n   \
     * on add 0. */                                                                         \
    VM_INLINE void row_exp_block_##suffix(VT *acc, T *y, const T *p, VT vmax, int n)        \
    {                                                                                       \
        for (int k = 0; k < ROW_VECS_##suffix; k++) {                                       \
            VT e = exp_##suffix(row_vec_##suffix(p + k * W) - vmax);                        \
            if (n < LANES) {                                                                \
                T lanes[W];                                                                 \
                memcpy(lanes, &e, sizeof e);                                                \
                for (int l = 0; l < W; l++)                                                 \
                    if (k * W + l >= n)                                                     \
                        lanes[l] = 0;                                                       \
                memcpy(&e, lanes, sizeof e);                                                \
            }                                                                               \
            if (y && n == LANES)                                                            \
                memcpy(y + k * W, &e, sizeof e);                                            \
            else if (y && k * W < n)                                                        \
                memcpy(y + k * W, &e,                                                       \
                       (size_t)(n - k * W < W ? n - k * W : W) * sizeof(T));                \
            acc[k] = acc[k] + e;                                                            \
        }                                                                                   \
    }                                                                                       \
    /* y = softmax(x), or log_softmax(x), over one contiguous row (y may be x). */          \
    static void vm_softmax_row_##suffix(T *y, const T *x, int64_t len, int as_log)          \
    {                                                                                       \
        if (len <= 0)                                                                       \
            return;                                                                         \
        T max = row_max_##suffix(x, len);                                                   \
        VT vmax = (VT){0} + max, acc[ROW_VECS_##suffix];                                    \
        for (int k = 0; k < ROW_VECS_##suffix; k++)                                         \
            acc[k] = (VT){0};                                                               \
        T *out = as_log ? NULL : y;                                                         \
        int64_t i = 0;                                                                      \
        for (; i + LANES <= len; i += LANES)                                                \
            row_exp_block_##suffix(acc, out ? out + i : NULL, x + i, vmax, LANES);          \
        if (i < len) { /* the padding gives exp(0), then 0 */                               \
            T buf[LANES];                                                                   \
            row_pad_##suffix(buf, x + i, len - i, max);                                     \
            row_exp_block_##suffix(acc, out ? out + i : NULL, buf, vmax, (int)(len - i));   \
        }                                                                                   \
        T sum = row_fold_##suffix(acc, 0);                                                 \
        i = 0;                                                                              \
        if (as_log) { /* (x - max) is exact; adding max to log(sum) first is not */         \
            T log_sum = (T)LOG(sum);                                                        \
            VT vl = (VT){0} + log_sum;                                                      \
            for (; i + W <= len; i += W) {                                                  \
                VT a = (row_vec_##suffix(x + i) - vmax) - vl;                               \
                memcpy(y + i, &a, sizeof a);                                                \
            }                                                                               \
            for (; i < len; i++)                                                            \
                y[i] = (x[i] - max) - log_sum;                                              \
        } else {                                                                            \
            T inv = (T)1 / sum;                                                             \
            VT vi = (VT){0} + inv;                                                          \
            for (; i + W <= len; i += W) {                                                  \
                VT a = row_vec_##suffix(y + i) * vi;                                        \
                memcpy(y + i, &a, sizeof a);                                                \
            }                                                                               \
            for (; i < len; i++)                                                            \
                y[i] = y[i] * inv;                                                          \
        }                                                                                   \
    }                                                                                       \
    /* acc += (p - c)^k, k = 1 or 2. */                                                     \
    VM_INLINE void row_moment_block_##suffix(VT *acc, const T *p, VT vc, int square)        \
    {                                                                                       \
        for (int k = 0; k < ROW_VECS_##suffix; k++) {                                       \
            VT d = row_vec_##suffix(p + k * W) - vc;                                        \
            acc[k] = acc[k] + (square ? d * d : d);                                         \
        }                                                                                   \
    }                                                                                       \
    /* The sum of (x[j] - c)^k over a row, k = 1 or 2. */                      \
    VM_INLINE T row_moment_##suffix(const T *x, int64_t len, T c, int square)               \
    {                                                                                       \
        VT acc[ROW_VECS_##suffix], vc = (VT){0} + c;                                        \
        for (int k = 0; k < ROW_VECS_##suffix; k++)                                         \
            acc[k] = (VT){0};                                                               \
        int64_t i = 0;                                                                      \
        for (; i + LANES <= len; i += LANES)                                                \
            row_moment_block_##suffix(acc, x + i, vc, square);                              \
        if (i < len) { /* the padding adds (c - c)^k = 0 */                                 \
            T buf[LANES];                                                                   \
            row_pad_##suffix(buf, x + i, len - i, c);                                       \
            row_moment_block_##suffix(acc, buf, vc, square);                                \
        }                                                                                   \
        return row_fold_##suffix(acc, 0);                                                  \
    }                                                                                       \
    /* y = (x - mean) * rstd * w + b over one row, w and b optional; the variance is the    \
     * biased one, about the mean (two passes). The mean is taken about the first element   \
     * (x[0] + sum(x - x[0]) / len), which rounds less, and is exact for a constant row, as \
     * PyTorch's Welford mean is: its output is then 0, not eps-amplified rounding. */      \
    static void vm_layer_norm_row_##suffix(T *y, const T *x, const T *w, const T *b,        \
                                           int64_t len, double eps)                         \
    {                                                                                       \
        if (len <= 0)                                                                       \
            return;                                                                         \
        T mean = x[0] + row_moment_##suffix(x, len, x[0], 0) / (T)len;                     \
        T m2 = row_moment_##suffix(x, len, mean, 1);                                        \
        T rstd = (T)(1.0 / sqrt((double)m2 / (double)len + eps));                           \
        VT vm = (VT){0} + mean, vr = (VT){0} + rstd;                                        \
        int64_t i = 0;                                                                      \
        for (; i + W <= len; i += W) {                                                      \
            VT a = (row_vec_##suffix(x + i) - vm) * vr;                                     \
            if (w)                                                                          \
                a = a * row_vec_##suffix(w + i);                                            \
            if (b)                                                                          \
                a = a + row_vec_##suffix(b + i);                                            \
            memcpy(y + i, &a, sizeof a);                                                    \
        }                                                                                   \
        for (; i < len; i++) {                                                              \
            T a = (x[i] - mean) * rstd;                                                     \
            if (w)                                                                          \
                a = a * w[i];                                                               \
            if (b)                                                                          \
                a = a + b[i];                                                               \
            y[i] = a;                                                                       \
        }                                                                                   \
    }
VM_ROW_KERNELS(float, VF, VI, FW, VECMATH_ROW_LANES_F32, f, logf)
VM_ROW_KERNELS(double, VD, VL, DW, VECMATH_ROW_LANES_F64, d, log)

/* ---- the sum of a float32 array (See Note [Sums of float32 arrays], vecmath.h) ---- */

enum { SUM_VECS_F = VECMATH_SUM_LANES_F32 / FW };

/* acc[k] += the k-th vector of the LANES elements at p. */
VM_INLINE void sum_block_f(VF *acc, const float *p)
{
    for (int k = 0; k < SUM_VECS_F; k++)
        acc[k] = acc[k] + row_vec_f(p + k * FW);
}

static double vm_sum_f(const float *x, int64_t n)
{
    double total = 0;
    for (int64_t b = 0; b < n; b += VECMATH_SUM_BLOCK_F32) {
        const float *p = x + b;
        int64_t len = n - b < VECMATH_SUM_BLOCK_F32 ? n - b : VECMATH_SUM_BLOCK_F32;
        VF acc[SUM_VECS_F];
        for (int k = 0; k < SUM_VECS_F; k++)
            acc[k] = (VF){0};
        int64_t i = 0;
        for (; i + VECMATH_SUM_LANES_F32 <= len; i += VECMATH_SUM_LANES_F32)
            sum_block_f(acc, p + i);
        if (i < len) { /* the padding adds exact zeros */
            float buf[VECMATH_SUM_LANES_F32] = {0};
            memcpy(buf, p + i, (size_t)(len - i) * sizeof(float));
            sum_block_f(acc, buf);
        }
        float lanes[VECMATH_SUM_LANES_F32];
        for (int k = 0; k < SUM_VECS_F; k++)
            memcpy(lanes + k * FW, &acc[k], sizeof(VF));
        for (int h = VECMATH_SUM_LANES_F32 / 2; h >= 1; h /= 2)
            for (int l = 0; l < h; l++)
                lanes[l] = lanes[l] + lanes[l + h];
        total += (double)lanes[0];
    }
    return total;
}

/* ---- small GEMMs (See Note [Small GEMMs], vecmath.h) ---- */

#define VM_GEMM_ROWS 6 /* rows of C per micro-tile */

/* The case of vm_gemm_small's switch for a last tile of R rows. */
#define VM_GEMM_TAIL_(suffix, R)                                                            \
    case R:                                                                                 \
        gemm_tile_##suffix(R, k, ar, a_rs, a_cs, bp + j0, ldp, cr, ldc, cols, al, be,        \
                           beta_zero);                                                      \
        break;

/* B packed from its columns when they are contiguous (b_rs 1: q @ k^T reads k so):
 * bp[p * ldp + j] = b[p + j * b_cs] for p < k and j < m, by 4 x 4 blocks of float32 (2 x 2
 * of float64) transposed with shuffles, and the rest element by element. The columns from
 * m to ldp are the caller's. */
typedef float VF4 __attribute__((vector_size(16)));
typedef double VD2 __attribute__((vector_size(16)));
static void gemm_pack_columns_f(float *bp, int64_t ldp, const float *b, int64_t b_cs,
                                int64_t k, int64_t m)
{
    int64_t p0 = 0;
    for (; p0 + 4 <= k; p0 += 4) {
        int64_t j = 0;
        for (; j + 4 <= m; j += 4) {
            VF4 r0, r1, r2, r3; /* column j + c, rows p0 .. p0 + 3 */
            memcpy(&r0, b + p0 + j * b_cs, sizeof r0);
            memcpy(&r1, b + p0 + (j + 1) * b_cs, sizeof r1);
            memcpy(&r2, b + p0 + (j + 2) * b_cs, sizeof r2);
            memcpy(&r3, b + p0 + (j + 3) * b_cs, sizeof r3);
            VF4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
            VF4 t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
            VF4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
            VF4 t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
            VF4 rows[4] = {__builtin_shufflevector(t0, t2, 0, 1, 4, 5),
                           __builtin_shufflevector(t0, t2, 2, 3, 6, 7),
                           __builtin_shufflevector(t1, t3, 0, 1, 4, 5),
                           __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
            for (int q = 0; q < 4; q++)
                memcpy(bp + (p0 + q) * ldp + j, &rows[q], sizeof rows[q]);
        }
        for (; j < m; j++)
            for (int q = 0; q < 4; q++)
                bp[(p0 + q) * ldp + j] = b[p0 + q + j * b_cs];
    }
    for (; p0 < k; p0++)
        for (int64_t j = 0; j < m; j++)
            bp[p0 * ldp + j] = b[p0 + j * b_cs];
}
static void gemm_pack_columns_d(double *bp, int64_t ldp, const double *b, int64_t b_cs,
                                int64_t k, int64_t m)
{
    int64_t p0 = 0;
    for (; p0 + 2 <= k; p0 += 2) {
        int64_t j = 0;
        for (; j + 2 <= m; j += 2) {
            VD2 r0, r1;
            memcpy(&r0, b + p0 + j * b_cs, sizeof r0);
            memcpy(&r1, b + p0 + (j + 1) * b_cs, sizeof r1);
            VD2 row0 = __builtin_shufflevector(r0, r1, 0, 2);
            VD2 row1 = __builtin_shufflevector(r0, r1, 1, 3);
            memcpy(bp + p0 * ldp + j, &row0, sizeof row0);
            memcpy(bp + (p0 + 1) * ldp + j, &row1, sizeof row1);
        }
        for (; j < m; j++)
            for (int q = 0; q < 2; q++)
                bp[(p0 + q) * ldp + j] = b[p0 + q + j * b_cs];
    }
    for (; p0 < k; p0++)
        for (int64_t j = 0; j < m; j++)
            bp[p0 * ldp + j] = b[p0 + j * b_cs];
}

/* PANEL columns of C per micro-tile, PANEL / W vectors; B packed into panels of it. */
#define VM_GEMM_SMALL_FN(T, VT, W, PANEL, suffix, FMA, SPLAT)                               \
    enum { GEMM_VECS_##suffix = PANEL / W };                                                \
    /* rows x PANEL of C from `rows` rows of A (strides a_rs, a_cs) and a packed panel of B \
     * (row stride ldp); cols of the PANEL are kept. */                                    \
    VM_INLINE void gemm_tile_##suffix(const int rows, int64_t k, const T *a, int64_t a_rs,  \
                                      int64_t a_cs, const T *bp, int64_t ldp, T *c,         \
                                      int64_t ldc, int64_t cols, T alpha, T beta,           \
                                      int beta_zero)                                        \
    {                                                                                       \
        VT acc[VM_GEMM_ROWS][GEMM_VECS_##suffix];                                           \
        for (int r = 0; r < rows; r++)                                                      \
            for (int v = 0; v < GEMM_VECS_##suffix; v++)                                    \
                acc[r][v] = (VT){0};                                                        \
        for (int64_t p = 0; p < k; p++) {                                                   \
            VT bv[GEMM_VECS_##suffix];                                                      \
            for (int v = 0; v < GEMM_VECS_##suffix; v++)                                    \
                memcpy(&bv[v], bp + p * ldp + v * W, sizeof(VT));                           \
            for (int r = 0; r < rows; r++) {                                                \
                VT av = SPLAT(a[r * a_rs + p * a_cs]);                                      \
                for (int v = 0; v < GEMM_VECS_##suffix; v++)                                \
                    acc[r][v] = FMA(av, bv[v], acc[r][v]);                                  \
            }                                                                               \
        }                                                                                   \
        if (beta_zero && alpha == (T)1 && cols == PANEL) { /* stored from the registers */ \
            for (int r = 0; r < rows; r++)                                                  \
                for (int v = 0; v < GEMM_VECS_##suffix; v++)                                \
                    memcpy(c + r * ldc + v * W, &acc[r][v], sizeof(VT));                    \
            return;                                                                         \
        }                                                                                   \
        for (int r = 0; r < rows; r++) {                                                    \
            T out[PANEL];                                                                   \
            memcpy(out, acc[r], sizeof out);                                                \
            T *cr = c + r * ldc;                                                            \
            if (beta_zero)                                                                  \
                for (int64_t j = 0; j < cols; j++)                                          \
                    cr[j] = alpha * out[j];                                                 \
            else                                                                            \
                for (int64_t j = 0; j < cols; j++)                                          \
                    cr[j] = alpha * out[j] + beta * cr[j];                                  \
        }                                                                                   \
    }                                                                                       \
    static void vm_gemm_small_##suffix(int64_t n, int64_t m, int64_t k, const T *a,          \
                                       int64_t a_rs, int64_t a_cs, const T *b, int64_t b_rs, \
                                       int64_t b_cs, T *c, int64_t ldc, double alpha,        \
                                       double beta, int beta_zero)                          \
    {                                                                                       \
        _Static_assert(VM_GEMM_ROWS == 6, "the last tiles below have 1 to 5 rows");         \
        T bp[VECMATH_GEMM_SMALL * VECMATH_GEMM_SMALL];                                      \
        const int64_t ldp = (m + PANEL - 1) / PANEL * PANEL;                                \
        if (n <= 0 || m <= 0 || n > VECMATH_GEMM_SMALL || m > VECMATH_GEMM_SMALL ||         \
            k > VECMATH_GEMM_SMALL)                                                         \
            return;                                                                         \
        if (b_cs == 1) {                                                                    \
            for (int64_t p = 0; p < k; p++) {                                               \
                memcpy(bp + p * ldp, b + p * b_rs, (size_t)m * sizeof(T));                  \
                for (int64_t j = m; j < ldp; j++)                                           \
                    bp[p * ldp + j] = 0;                                                    \
            }                                                                               \
        } else if (b_rs == 1) {                                                             \
            gemm_pack_columns_##suffix(bp, ldp, b, b_cs, k, m);                             \
            for (int64_t p = 0; p < k; p++)                                                 \
                for (int64_t j = m; j < ldp; j++)                                           \
                    bp[p * ldp + j] = 0;                                                    \
        } else {                                                                            \
            for (int64_t j = 0; j < ldp; j++) /* along B's columns */                       \
                for (int64_t p = 0; p < k; p++)                                             \
                    bp[p * ldp + j] = j < m ? b[p * b_rs + j * b_cs] : (T)0;                \
        }                                                                                   \
        const T al = (T)alpha, be = (T)beta;                                                \
        for (int64_t j0 = 0; j0 < m; j0 += PANEL) {                                         \
            int64_t cols = m - j0 < PANEL ? m - j0 : PANEL;                                 \
            int64_t i0 = 0;                                                                 \
            for (; i0 + VM_GEMM_ROWS <= n; i0 += VM_GEMM_ROWS)                              \
                gemm_tile_##suffix(VM_GEMM_ROWS, k, a + i0 * a_rs, a_rs, a_cs, bp + j0, ldp, \
                                   c + i0 * ldc + j0, ldc, cols, al, be, beta_zero);        \
            const T *ar = a + i0 * a_rs;                                                    \
            T *cr = c + i0 * ldc + j0;                                                      \
            switch (n - i0) { /* the last rows: a tile of each height, unrolled */          \
                VM_GEMM_TAIL_(suffix, 5) VM_GEMM_TAIL_(suffix, 4) VM_GEMM_TAIL_(suffix, 3)  \
                VM_GEMM_TAIL_(suffix, 2) VM_GEMM_TAIL_(suffix, 1)                           \
            default:                                                                        \
                break;                                                                      \
            }                                                                               \
        }                                                                                   \
    }
VM_GEMM_SMALL_FN(float, VF, FW, 16, f, VM_FMA_F, VM_SPLAT_F)
VM_GEMM_SMALL_FN(double, VD, DW, 8, d, VM_FMA_D, VM_SPLAT_D)

#define VM_TABLE_ENTRY(name) .name##_f32 = vm_##name##_f, .name##_f64 = vm_##name##_d,
const vecmath_table VM_TABLE = {
    .name = VM_NAME,
    VECMATH_FORALL_UNARY(VM_TABLE_ENTRY)
    .square_f32 = vm_square_f, .square_f64 = vm_square_d,
    .cube_f32 = vm_cube_f, .cube_f64 = vm_cube_d,
    .reciprocal_f32 = vm_reciprocal_f, .reciprocal_f64 = vm_reciprocal_d,
    .reciprocal_square_f32 = vm_reciprocal_square_f,
    .reciprocal_square_f64 = vm_reciprocal_square_d,
    .pow_f32 = vm_pow_f,
    .pow_f64 = vm_pow_d,
    .softmax_row_f32 = vm_softmax_row_f, .softmax_row_f64 = vm_softmax_row_d,
    .layer_norm_row_f32 = vm_layer_norm_row_f, .layer_norm_row_f64 = vm_layer_norm_row_d,
    .sum_f32 = vm_sum_f,
    .gemm_small_f32 = vm_gemm_small_f, .gemm_small_f64 = vm_gemm_small_d,
};
