/* vecmath_avx2.c — the vectorised math functions for AVX2 with FMA (8 floats, 4 doubles),
 * compiled for that target by a pragma and run only when the CPU has it (See Note [CPU
 * capability], vecmath.h). */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif
#include <immintrin.h>
#define VM_BYTES 32
#define VM_HAS_FMA 1
#define VM_FMA_F(a, b, c) ((VF)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define VM_FMA_D(a, b, c) ((VD)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
#define VM_SPLAT_F(x) ((VF)_mm256_set1_ps(x))
#define VM_SPLAT_D(x) ((VD)_mm256_set1_pd(x))
#define VM_SQRT_F(x) ((VF)_mm256_sqrt_ps((__m256)(x)))
#define VM_SQRT_D(x) ((VD)_mm256_sqrt_pd((__m256d)(x)))
#define VM_ANY_I(m) (_mm256_movemask_ps((__m256)(m)) != 0)
#define VM_ANY_L(m) (_mm256_movemask_pd((__m256d)(m)) != 0)
#define VM_ALL_I(m) (_mm256_movemask_ps((__m256)(m)) == 0xff)
#define VM_ALL_L(m) (_mm256_movemask_pd((__m256d)(m)) == 0xf)
#define VM_WIDEN_LO(x) ((VD)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)(x))))
#define VM_WIDEN_HI(x) ((VD)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)(x), 1)))
#define VM_NARROW(lo, hi)                                                                   \
    ((VF)_mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps((__m256d)(lo))),       \
                              _mm256_cvtpd_ps((__m256d)(hi)), 1))
/* lane k takes t[i[k] & 15] of a 64-byte-aligned float t[16] (Note [GELU by table]): the
 * two halves permuted by i's low 3 bits, and blended by bit 3, shifted into the sign bit */
#define VM_LOOKUP16_F(t, i)                                                                  \
    ((VF)_mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_load_ps(t), (__m256i)(i)),         \
                          _mm256_permutevar8x32_ps(_mm256_load_ps((t) + 8), (__m256i)(i)),   \
                          _mm256_castsi256_ps(_mm256_slli_epi32((__m256i)(i), 28))))
#define VM_NAME "avx2"
#define VM_TABLE vecmath_avx2
#include "kernels/vecmath_impl.h"
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
