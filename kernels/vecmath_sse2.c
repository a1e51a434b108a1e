/* vecmath_sse2.c — the vectorised math functions for the build's baseline: SSE2 on x86-64
 * (4 floats, 2 doubles, no FMA), plain GCC vectors elsewhere. See Note [Vectorised math
 * functions] (vecmath.h). */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define VM_SPLAT_F(x) ((VF)_mm_set1_ps(x))
#define VM_SPLAT_D(x) ((VD)_mm_set1_pd(x))
#define VM_SQRT_F(x) ((VF)_mm_sqrt_ps((__m128)(x)))
#define VM_SQRT_D(x) ((VD)_mm_sqrt_pd((__m128d)(x)))
#define VM_ANY_I(m) (_mm_movemask_ps((__m128)(m)) != 0)
#define VM_ANY_L(m) (_mm_movemask_pd((__m128d)(m)) != 0)
#define VM_ALL_I(m) (_mm_movemask_ps((__m128)(m)) == 0xf)
#define VM_ALL_L(m) (_mm_movemask_pd((__m128d)(m)) == 0x3)
#define VM_WIDEN_LO(x) ((VD)_mm_cvtps_pd((__m128)(x)))
#define VM_WIDEN_HI(x) ((VD)_mm_cvtps_pd(_mm_movehl_ps((__m128)(x), (__m128)(x))))
#define VM_NARROW(lo, hi)                                                                   \
    ((VF)_mm_movelh_ps(_mm_cvtpd_ps((__m128d)(lo)), _mm_cvtpd_ps((__m128d)(hi))))
#define VM_NAME "sse2"
#else
/* No intrinsics: the compiler's own vector code, lane by lane where C has no operator. */
#define VM_SPLAT_F(x) vm_splat_lanes_f(x)
#define VM_SPLAT_D(x) vm_splat_lanes_d(x)
#define VM_SQRT_F(x) vm_sqrt_lanes_f(x)
#define VM_SQRT_D(x) vm_sqrt_lanes_d(x)
#define VM_ANY_I(m) vm_any_lanes_i(m)
#define VM_ANY_L(m) vm_any_lanes_l(m)
#define VM_ALL_I(m) vm_all_lanes_i(m)
#define VM_ALL_L(m) vm_all_lanes_l(m)
#define VM_NAME "generic"
#define VM_GENERIC_LANES 1
#endif
#define VM_BYTES 16
#define VM_HAS_FMA 0
#define VM_FMA_F(a, b, c) ((a) * (b) + (c))
#define VM_FMA_D(a, b, c) ((a) * (b) + (c))
#define VM_TABLE vecmath_sse2
#include "kernels/vecmath_impl.h"
