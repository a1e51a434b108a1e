/* vecmath_avx512.c — the vectorised math functions for AVX-512 (16 floats, 8 doubles; F,
 * DQ, BW and VL), compiled for that target by a pragma and run only when the CPU has it (See
 * Note [CPU capability], vecmath.h). */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")
#endif
#include <immintrin.h>
#define VM_BYTES 64
#define VM_HAS_FMA 1
#define VM_FMA_F(a, b, c) ((VF)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define VM_FMA_D(a, b, c) ((VD)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define VM_SPLAT_F(x) ((VF)_mm512_set1_ps(x))
#define VM_SPLAT_D(x) ((VD)_mm512_set1_pd(x))
#define VM_SQRT_F(x) ((VF)_mm512_sqrt_ps((__m512)(x)))
#define VM_SQRT_D(x) ((VD)_mm512_sqrt_pd((__m512d)(x)))
#define VM_ANY_I(m) (_mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)) != 0)
#define VM_ANY_L(m) (_mm512_test_epi64_mask((__m512i)(m), (__m512i)(m)) != 0)
#define VM_ALL_I(m) (_mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)) == 0xffff)
#define VM_ALL_L(m) (_mm512_test_epi64_mask((__m512i)(m), (__m512i)(m)) == 0xff)
#define VM_WIDEN_LO(x) ((VD)_mm512_cvtps_pd(_mm512_castps512_ps256((__m512)(x))))
#define VM_WIDEN_HI(x) ((VD)_mm512_cvtps_pd(_mm512_extractf32x8_ps((__m512)(x), 1)))
#define VM_NARROW(lo, hi)                                                                   \
    ((VF)_mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps((__m512d)(lo))),         \
                            _mm512_cvtpd_ps((__m512d)(hi)), 1))
/* lane k takes t[i[k] & 15] of a 64-byte-aligned float t[16] (Note [GELU by table]) */
#define VM_LOOKUP16_F(t, i) ((VF)_mm512_permutexvar_ps((__m512i)(i), _mm512_load_ps(t)))
#define VM_NAME "avx512"
#define VM_TABLE vecmath_avx512
#include "kernels/vecmath_impl.h"
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
