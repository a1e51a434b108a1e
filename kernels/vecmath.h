/* vecmath.h — vectorised math functions over contiguous float and double arrays, one table
 * of them per instruction set, and the choice of the table at run time. The elementwise
 * loops (elementwise_unary.c, elementwise_misc.c, elementwise_arith.c) call them through
 * vecmath_active(); the adapters at the end run them over the strided and 16-bit operands
 * of the elementwise engine.
 *
 * Note [Vectorised math functions]
 * exp, log, log1p, tanh, sigmoid, silu, gelu (both forms), erf, sin, cos, sqrt, rsqrt and pow
 * of float32 and float64 are pith's own, written once (vecmath_impl.h) over GCC vector types
 * and compiled for SSE2, AVX2+FMA and AVX-512 (vecmath_sse2.c, vecmath_avx2.c,
 * vecmath_avx512.c). Why not SLEEF: Debian's libsleef 3.5 would be a new dependency of every
 * consumer and of pip builds, its functions are calls through its dispatcher (gelu, silu and
 * sigmoid fuse several of them), and the ones PyTorch uses are u10 (1 ulp); ours meet the
 * same bounds with every constant derived in one script, and can skip work no lane needs.
 *
 * The algorithms: exp reduces by n ln 2 (Cody-Waite, n * LN2_HI exact) to a degree-6/11
 * minimax polynomial; log is fdlibm's f - (hfsq - s (hfsq + R(s^2))), log1p adds the exact
 * rounding error of 1 + x; tanh is an odd polynomial below 0.625, else 1 - 2/(e^2|x| + 1);
 * sigmoid and silu take e = exp(-|x|) so nothing overflows, and scale by 2^n last so that
 * denormal results round once; erf is a polynomial below 0.84375, else 1 - erfc, and the
 * erfc tail (erf's and gelu's) is t exp(-a^2 + R(t)) with a^2 exact as a double-float; gelu
 * is x/2 + x^2 Q(x^2) below 0.6745, else x Phi(x) from that tail (float32: x Phi(x) with
 * Phi(-|x|) = H(|x|) exp(-x^2/2), and on AVX2 and AVX-512 below 3 a piecewise polynomial
 * for Phi(-|x|) read from a table per lane: Note [GELU by table]); gelu's tanh form is x
 * sigmoid(v) with v = x (A + B x^2) in double (double-double for float64); sin and cos of
 * float32 are computed in double (reduction by two parts of pi/2), of float64 with four parts
 * and two-sums; pow is exp(y log|x|) in double for float32 and with a double-double log for
 * float64. Every polynomial is a minimax fit by scripts/gen_vecmath_coefficients.py
 * (kernels/vecmath_coefficients.h). Lanes outside a reduction's range (|x| > 1e6 in sin and
 * cos; x or y infinite or NaN in pow) are recomputed by the C library, lane by lane.
 *
 * Accuracy (ulps of the result against float64 references for float32, long double for
 * float64; scripts/check_vecmath_ulp.c measures every float32 input of every path and
 * tests/kernels/vecmath_test.cc pins the bounds, denormals, infinities and NaN included):
 * see the table in docs/architecture.md, "Vectorised math".
 *
 * Identical bits: each array loop runs whole vectors, then the tail through the same
 * function on a zero-padded vector. A lane's result therefore depends only on its own input
 * and the instruction set, never on where a tile, a chunk or a thread's share of the array
 * ends; the files build with -ffp-contract=off so that no product is fused on one side only,
 * and a multiply-add is fused exactly where VM_FMA_* says. The SSE2 table has no FMA and may
 * differ from the AVX2 and AVX-512 ones in the last bit; those two give the same bits. */
#ifndef PITH_KERNELS_VECMATH_H
#define PITH_KERNELS_VECMATH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* VECMATH_FORALL_UNARY, the functions of one float argument, and their bounds: written from
 * the op file's vecmath keys (ops/ops.toml) by scripts/gen_ops.py. */
#include "kernels/generated/vecmath_functions.h"

typedef void (*vecmath_f32)(float *out, const float *in, int64_t n);
typedef void (*vecmath_f64)(double *out, const double *in, int64_t n);
/* out[i] = pow(x[i], y[i * y_step]): y_step 1 (an array) or 0 (one exponent). */
typedef void (*vecmath_pow_f32)(float *out, const float *x, const float *y, int64_t y_step,
                                int64_t n);
typedef void (*vecmath_pow_f64)(double *out, const double *x, const double *y, int64_t y_step,
                                int64_t n);

/* `out` may be `in` (each vector is read before it is written), never a partial overlap. */
typedef struct vecmath_table {
    const char *name; /* "sse2", "avx2", "avx512" */
#define VECMATH_FIELDS_(f) vecmath_f32 f##_f32; vecmath_f64 f##_f64;
    VECMATH_FORALL_UNARY(VECMATH_FIELDS_)
    /* pow by 2, 3, -1 and -2 as PyTorch computes them: x*x, x*x*x, 1/x, 1/(x*x) */
    VECMATH_FIELDS_(square) VECMATH_FIELDS_(cube) VECMATH_FIELDS_(reciprocal)
    VECMATH_FIELDS_(reciprocal_square)
#undef VECMATH_FIELDS_
    vecmath_pow_f32 pow_f32;
    vecmath_pow_f64 pow_f64;
    /* Rows (See Note [Row sums in a fixed order]): y = softmax(x) or, with as_log,
     * log_softmax(x) over len elements (y may be x); y = layer_norm(x) * w + b with w and b
     * optional (NULL). */
    void (*softmax_row_f32)(float *y, const float *x, int64_t len, int as_log);
    void (*softmax_row_f64)(double *y, const double *x, int64_t len, int as_log);
    void (*layer_norm_row_f32)(float *y, const float *x, const float *w, const float *b,
                               int64_t len, double eps);
    void (*layer_norm_row_f64)(double *y, const double *x, const double *w, const double *b,
                               int64_t len, double eps);
    /* The sum of n contiguous float32 elements, in the order of Note [Sums of float32
     * arrays]. */
    double (*sum_f32)(const float *x, int64_t n);
    /* C (n x m, row stride ldc) = alpha A @ B + beta C for A n x k with element strides
     * (a_rs, a_cs) and B k x m with (b_rs, b_cs), every dim at most VECMATH_GEMM_SMALL; with
     * beta_zero C is not read. See Note [Small GEMMs]. */
    void (*gemm_small_f32)(int64_t n, int64_t m, int64_t k, const float *a, int64_t a_rs,
                           int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs, float *c,
                           int64_t ldc, double alpha, double beta, int beta_zero);
    void (*gemm_small_f64)(int64_t n, int64_t m, int64_t k, const double *a, int64_t a_rs,
                           int64_t a_cs, const double *b, int64_t b_rs, int64_t b_cs,
                           double *c, int64_t ldc, double alpha, double beta, int beta_zero);
} vecmath_table;

/* Note [Small GEMMs]
 * A product whose n, m and k are all at most VECMATH_GEMM_SMALL (attention's q @ k^T and
 * att @ v per head, at 64 tokens and 32 dims) costs Debian's OpenBLAS 0.3.21 more in its
 * interface and packing than in arithmetic. The vecmath table's gemm_small packs B (k x m)
 * into a zero-padded buffer on the stack, in one pass whatever its strides (q @ k^T reads
 * k transposed), and computes C in micro-tiles of 6 rows by 16 float32 (8 float64) columns
 * held in registers: per step along k, one broadcast of A per row and one multiply-add per
 * vector (fused where the table has FMA). Each element of C is the sum over k in order of
 * k, so its bits depend on the table (SSE2 rounds each product; AVX2 and AVX-512 fuse
 * them) but not on the strides, the tile it falls in or the thread. It takes no
 * allocation, so it runs inside the batch loop's parallel region. */
#define VECMATH_GEMM_SMALL 64

/* Note [Row sums in a fixed order]
 * The row kernels of softmax, log_softmax and layer_norm (vecmath_impl.h) sum a row, and find
 * its max, in VECMATH_ROW_LANES partials whatever the vector width: element j goes to
 * partial j % 16 for float32 (j % 8 for float64), in order of j, and the partials are folded
 * by halves (lane i takes lane i + 8, then i + 4, i + 2, i + 1). SSE2 keeps four vectors of
 * partials, AVX2 two, AVX-512 one, and each adds the same elements in the same order; the
 * padding of a row's last block adds exact zeros. So a row's sums depend on the row alone:
 * never on the thread that ran it, or on the instruction set. layer_norm has no other
 * rounding that depends on the CPU (no FMA, no transcendental function), so its result is
 * the same bits on every table; softmax takes exp from its table, so its AVX2 and AVX-512
 * results are the same bits, and SSE2's may differ in the last bit (Note [Vectorised math
 * functions]). The accumulators have the row's dtype, as PyTorch's do for softmax and its
 * opmath for layer_norm; 16 partials make the error of a sum grow like len / 16 ulps at
 * worst, not len. tests/kernels/vecmath_test.cc pins the order with a scalar model of it. */
#define VECMATH_ROW_LANES_F32 16
#define VECMATH_ROW_LANES_F64 8

/* Note [Sums of float32 arrays]
 * sum_f32 (the contiguous runs of float32 sum and mean, kernels/reduce_loops.c) adds float32
 * elements in float32, as PyTorch and NumPy do, and would still be slower than both with
 * only the row kernels' 16 partials: two AVX2 vectors, each a chain of dependent adds. So it
 * splits the array into blocks of VECMATH_SUM_BLOCK_F32 elements (the last one shorter) and
 * sums each block in VECMATH_SUM_LANES_F32 float32 partials: element j of a block goes to
 * partial j % 32, in order of j, the last partial block padded with zeros, and the partials
 * are folded by halves (lane i takes lane i + 16, then i + 8, ..., i + 1). Each block's
 * total is then added, in block order, to a double. SSE2 keeps eight vectors of partials,
 * AVX2 four and AVX-512 two, and all of them add the same elements in the same order, so
 * the result depends on the array alone, never on the instruction set. Error: a block's
 * float32 total is within (32 + 5) ulps of the block's sum of |x| (each partial adds 32
 * elements, and the fold five levels), and the double sum of the block totals adds only
 * their own rounding; so the relative error of a sum of same-signed elements stays below
 * ~2.2e-6 at any length, where one float32 accumulator would reach 1e-1 at 16M elements.
 * tests/kernels/vecmath_test.cc pins the order with a scalar model of it. */
#define VECMATH_SUM_LANES_F32 32
#define VECMATH_SUM_BLOCK_F32 1024

/* The tables (vecmath_sse2.c, ...): the x86-64 baseline, or plain vectors elsewhere. */
extern const vecmath_table vecmath_sse2;
#if defined(__x86_64__) || defined(__i386__)
extern const vecmath_table vecmath_avx2, vecmath_avx512;
#endif

/* Note [CPU capability]
 * The build has no -march (it targets x86-64's SSE2 baseline); the AVX2 and AVX-512 tables
 * are compiled with target pragmas and chosen at run time, once: the best that
 * __builtin_cpu_supports reports (AVX2 needs avx2 and fma; AVX-512 needs avx512f, dq, bw and
 * vl, which also means the OS saves the registers), unless PITH_CPU_CAPABILITY (sse2, avx2 or
 * avx512, like PyTorch's ATEN_CPU_CAPABILITY) asks for less. A request for more than the CPU
 * has is clamped to what it has, with one line on stderr, so that no instruction the CPU lacks
 * ever runs; an unknown value is ignored with one line too. pith_get_cpu_capability (and
 * pith.backends.cpu.get_cpu_capability) say which table is in use. */
typedef enum {
    VECMATH_SSE2,
    VECMATH_AVX2,
    VECMATH_AVX512,
    VECMATH_NUM_CAPABILITIES
} vecmath_capability;

/* The table in use (chosen on the first call). */
const vecmath_table *vecmath_active(void);
/* The best capability this CPU supports. */
vecmath_capability vecmath_supported(void);
/* The capability for a PITH_CPU_CAPABILITY value (NULL or "": none) on a CPU supporting up
 * to `supported`; writes into `message` (when not NULL) why a request was clamped or
 * ignored, or "" when it was honoured. */
vecmath_capability vecmath_resolve(const char *request, vecmath_capability supported,
                                   char *message, int message_size);
/* The name of a capability ("sse2", ...), or NULL. */
const char *vecmath_capability_name(vecmath_capability c);
/* The table of capability `c`, clamped to what the CPU supports (the tests reach every path
 * through it). Returns the one now in use. */
vecmath_capability vecmath_select(vecmath_capability c);
/* The table of `c` itself, or NULL when this build has none (not x86). The caller must
 * know that the CPU supports it. */
const vecmath_table *vecmath_table_of(vecmath_capability c);

/* ---- adapters: a function over contiguous arrays run as an elementwise loop (strided
 * operands and float16/bfloat16 go through a float32 buffer, in chunks) ---- */
int vecmath_loop_f32(vecmath_f32 fn, char **args, const int64_t *n, const int64_t *strides);
int vecmath_loop_f64(vecmath_f64 fn, char **args, const int64_t *n, const int64_t *strides);
int vecmath_loop_f16(vecmath_f32 fn, char **args, const int64_t *n, const int64_t *strides);
int vecmath_loop_bf16(vecmath_f32 fn, char **args, const int64_t *n, const int64_t *strides);
/* pow over the three operands (out, x, y) of a binary loop; y of stride 0 is one value. */
int vecmath_pow_loop_f32(char **args, const int64_t *n, const int64_t *strides);
int vecmath_pow_loop_f64(char **args, const int64_t *n, const int64_t *strides);
int vecmath_pow_loop_f16(char **args, const int64_t *n, const int64_t *strides);
int vecmath_pow_loop_bf16(char **args, const int64_t *n, const int64_t *strides);

#ifdef __cplusplus
}
#endif

#endif /* PITH_KERNELS_VECMATH_H */
