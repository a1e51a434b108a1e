/* check_vecmath_ulp.c — measures the error of pith's vectorised math functions, in ulps of the
 * result, for every instruction-set table the CPU can run (See Note [Vectorised math
 * functions], kernels/vecmath.h), and fails when one exceeds its bound (the op file's vecmath
 * keys, kernels/generated/vecmath_functions.h).
 *
 *     build/check_vecmath_ulp [--stride N] [--float64 SAMPLES] [--only NAME]
 *
 * By default every one of the 2^32 float32 inputs of each float32 function (NaNs, infinities,
 * zeros of both signs and denormals included) is checked against its float64 value from the C
 * library: about ten minutes on two cores. pow takes every x for a set of exponents, plus
 * random pairs (every 16th x: 14 exponents of every x would take an hour). --stride N checks
 * every N-th input only (ctest runs --stride 65537 in about a
 * second: Vecmath.UlpSampled). --float64 adds SAMPLES random doubles per float64 function
 * (spread over every exponent) against long double references. A result must be NaN exactly
 * when the reference is, infinite exactly when it is, and a zero of the reference's sign.
 * Built by tests/CMakeLists.txt (it links the library's objects for the tables). */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/vecmath.h"
#include "kernels/generated/vecmath_functions.h"
#include "tests/kernels/vecmath_reference.h"

typedef struct {
    const char *name;
    size_t f32_offset, f64_offset; /* of the table's fields */
    double (*ref)(double);
    long double (*refl)(long double);
    double bound_f32, bound_f64;
} function_row;

#define ROW_(name, b32, b64)                                                                \
    {#name, offsetof(vecmath_table, name##_f32), offsetof(vecmath_table, name##_f64),       \
     ref_##name, refl_##name, b32, b64},
static const function_row functions[] = {VECMATH_FORALL_UNARY_BOUNDS(ROW_)};
#define NUM_FUNCTIONS (sizeof functions / sizeof functions[0])

typedef struct {
    double worst;
    double worst_x, worst_y;
} worst_case;

static void worst_merge(worst_case *into, const worst_case *w)
{
    if (w->worst > into->worst || (isinf(w->worst) && !isinf(into->worst)))
        *into = *w;
}

#define BLOCK 4096

static int report(const char *name, const char *isa, const char *precision,
                  const worst_case *w, double bound)
{
    int ok = w->worst <= bound;
    printf("%-10s %-7s %-8s max %8.3f ulp (bound %.1f) at x = %-14.9g y = %-10.6g %s\n", name,
           precision, isa, w->worst, bound, w->worst_x, w->worst_y, ok ? "ok" : "FAIL");
    return ok;
}

/* Every float32 input (or every stride-th) of each unary function. */
static int check_unary_f32(const vecmath_table *const *tables, int ntables, uint64_t stride,
                           const char *only)
{
    int ok = 1;
    for (size_t f = 0; f < NUM_FUNCTIONS; f++) {
        const function_row *row = &functions[f];
        if (only && strcmp(only, row->name) != 0)
            continue;
        worst_case worst[VECMATH_NUM_CAPABILITIES] = {{0, 0, 0}};
        const uint64_t count = ((uint64_t)1 << 32) / stride;
#pragma omp parallel
        {
            worst_case mine[VECMATH_NUM_CAPABILITIES] = {{0, 0, 0}};
            float x[BLOCK], out[BLOCK];
            double ref[BLOCK];
#pragma omp for schedule(dynamic, 16)
            for (uint64_t block = 0; block < (count + BLOCK - 1) / BLOCK; block++) {
                int m = 0;
                for (uint64_t k = block * BLOCK; k < count && m < BLOCK; k++, m++) {
                    uint32_t bits = (uint32_t)(k * stride);
                    memcpy(&x[m], &bits, sizeof bits);
                    ref[m] = row->ref((double)x[m]);
                }
                for (int t = 0; t < ntables; t++) {
                    vecmath_f32 fn = *(const vecmath_f32 *)((const char *)tables[t] + row->f32_offset);
                    fn(out, x, m);
                    for (int i = 0; i < m; i++) {
                        double e = ulp_error_f32(out[i], ref[i]);
                        if (e > mine[t].worst || (isinf(e) && !isinf(mine[t].worst)))
                            mine[t] = (worst_case){e, x[i], 0};
                    }
                }
            }
#pragma omp critical
            for (int t = 0; t < ntables; t++)
                worst_merge(&worst[t], &mine[t]);
        }
        for (int t = 0; t < ntables; t++)
            ok &= report(row->name, tables[t]->name, "float32", &worst[t], row->bound_f32);
        fflush(stdout);
    }
    return ok;
}

/* xorshift64*: the random inputs (reproducible). */
static uint64_t random_next(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}
/* A float with a uniformly random exponent in [lo, hi] and random mantissa and sign. */
static float random_float(uint64_t *state, int lo, int hi)
{
    uint64_t r = random_next(state);
    float m = 1.0f + (float)(r & 0x7fffff) * 0x1p-23f;
    int e = lo + (int)((r >> 23) % (uint64_t)(hi - lo + 1));
    return (r >> 63 ? -1.0f : 1.0f) * ldexpf(m, e);
}
static double random_double(uint64_t *state, int lo, int hi)
{
    uint64_t r = random_next(state), r2 = random_next(state);
    double m = 1.0 + (double)(r & 0xfffffffffffffULL) * 0x1p-52;
    int e = lo + (int)(r2 % (uint64_t)(hi - lo + 1));
    return (r2 >> 63 ? -1.0 : 1.0) * ldexp(m, e);
}

/* pow: every (stride-th) x for each exponent below, then random pairs. */
static int check_pow_f32(const vecmath_table *const *tables, int ntables, uint64_t stride)
{
    static const float exponents[] = {2.5f, 0.5f, -0.5f, 1.0f / 3.0f, 3.0f, -2.0f, -1.0f,
                                      7.0f, 10.75f, -3.25f, 0.001f, 100.0f, -150.0f, 1e-7f};
    const int nexp = (int)(sizeof exponents / sizeof exponents[0]);
    worst_case worst[VECMATH_NUM_CAPABILITIES] = {{0, 0, 0}};
    stride = stride < 16 ? 16 : stride;
    const uint64_t count = ((uint64_t)1 << 32) / stride;
    const uint64_t nblocks = (count + BLOCK - 1) / BLOCK;
#pragma omp parallel
    {
        worst_case mine[VECMATH_NUM_CAPABILITIES] = {{0, 0, 0}};
        float x[BLOCK], y[BLOCK], out[BLOCK];
        double ref[BLOCK];
#pragma omp for schedule(dynamic, 16)
        for (uint64_t job = 0; job < nblocks * (uint64_t)(nexp + 1); job++) {
            uint64_t block = job % nblocks;
            int which = (int)(job / nblocks);
            uint64_t state = 0x9E3779B97F4A7C15ULL ^ (job * 0xD1B54A32D192ED03ULL);
            int m = 0;
            for (uint64_t k = block * BLOCK; k < count && m < BLOCK; k++, m++) {
                if (which < nexp) {
                    uint32_t bits = (uint32_t)(k * stride);
                    memcpy(&x[m], &bits, sizeof bits);
                    y[m] = exponents[which];
                } else { /* random pairs with |y log x| mostly in range */
                    x[m] = fabsf(random_float(&state, -30, 30));
                    if (random_next(&state) & 1)
                        x[m] = -x[m];
                    y[m] = random_float(&state, -10, 6);
                    if ((random_next(&state) & 7) == 0)
                        y[m] = rintf(y[m]);
                }
                ref[m] = pow((double)x[m], (double)y[m]);
            }
            for (int t = 0; t < ntables; t++) {
                tables[t]->pow_f32(out, x, y, 1, m);
                for (int i = 0; i < m; i++) {
                    double e = ulp_error_f32(out[i], ref[i]);
                    if (e > mine[t].worst || (isinf(e) && !isinf(mine[t].worst)))
                        mine[t] = (worst_case){e, x[i], y[i]};
                }
            }
        }
#pragma omp critical
        for (int t = 0; t < ntables; t++)
            worst_merge(&worst[t], &mine[t]);
    }
    int ok = 1;
    for (int t = 0; t < ntables; t++)
        ok &= report("pow", tables[t]->name, "float32", &worst[t], VECMATH_POW_BOUND_F32);
    return ok;
}

/* float64: `samples` random doubles per function, over every exponent and around 0, plus
 * the special values. */
static double random_double_input(uint64_t *state, const char *name)
{
    uint64_t r = random_next(state) % 8;
    if (r == 0) /* anywhere */
        return random_double(state, -1074, 1023);
    if (r == 1 && strcmp(name, "log1p") == 0)
        return -1 + random_double(state, -60, -1) * (r & 1 ? 1 : -1);
    /* where the function is interesting: |x| up to ~2^10 */
    return random_double(state, -30, 10);
}

static int check_unary_f64(const vecmath_table *const *tables, int ntables, uint64_t samples,
                           const char *only)
{
    static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5,
                                      DBL_MIN, DBL_TRUE_MIN, DBL_MAX, -DBL_MAX, -DBL_MIN,
                                      0.625, 0.84375, 0.6745, 27.3, -38.0, -40.0, 710.0,
                                      -745.0, 1e6, 1e300};
    int ok = 1;
    for (size_t f = 0; f < NUM_FUNCTIONS; f++) {
        const function_row *row = &functions[f];
        if (only && strcmp(only, row->name) != 0)
            continue;
        worst_case worst[VECMATH_NUM_CAPABILITIES] = {{0, 0, 0}};
        const uint64_t nblocks = (samples + BLOCK - 1) / BLOCK;
#pragma omp parallel
        {
            worst_case mine[VECMATH_NUM_CAPABILITIES] = {{0, 0, 0}};
            double x[BLOCK], out[BLOCK];
            long double ref[BLOCK];
#pragma omp for schedule(dynamic, 4)
            for (uint64_t block = 0; block < nblocks; block++) {
                uint64_t state = 0x243F6A8885A308D3ULL ^ ((block + 1) * 0x9E3779B97F4A7C15ULL);
                int m = 0;
                if (block == 0)
                    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
                        x[m++] = specials[i];
                for (; m < BLOCK; m++)
                    x[m] = random_double_input(&state, row->name);
                for (int i = 0; i < m; i++)
                    ref[i] = row->refl((long double)x[i]);
                for (int t = 0; t < ntables; t++) {
                    vecmath_f64 fn = *(const vecmath_f64 *)((const char *)tables[t] + row->f64_offset);
                    fn(out, x, m);
                    for (int i = 0; i < m; i++) {
                        double e = ulp_error_f64(out[i], ref[i]);
                        if (e > mine[t].worst || (isinf(e) && !isinf(mine[t].worst)))
                            mine[t] = (worst_case){e, x[i], 0};
                    }
                }
            }
#pragma omp critical
            for (int t = 0; t < ntables; t++)
                worst_merge(&worst[t], &mine[t]);
        }
        for (int t = 0; t < ntables; t++)
            ok &= report(row->name, tables[t]->name, "float64", &worst[t], row->bound_f64);
        fflush(stdout);
    }
    if (only && strcmp(only, "pow") != 0)
        return ok;
    worst_case worst[VECMATH_NUM_CAPABILITIES] = {{0, 0, 0}};
    const uint64_t nblocks = (samples + BLOCK - 1) / BLOCK;
#pragma omp parallel
    {
        worst_case mine[VECMATH_NUM_CAPABILITIES] = {{0, 0, 0}};
        double x[BLOCK], y[BLOCK], out[BLOCK];
        long double ref[BLOCK];
#pragma omp for schedule(dynamic, 4)
        for (uint64_t block = 0; block < nblocks; block++) {
            uint64_t state = 0x13198A2E03707344ULL ^ ((block + 1) * 0x9E3779B97F4A7C15ULL);
            for (int i = 0; i < BLOCK; i++) {
                uint64_t kind = random_next(&state) % 4;
                x[i] = random_double(&state, kind == 0 ? -1000 : -8, kind == 0 ? 1000 : 8);
                if (kind == 1) /* near 1, with large exponents: log's accuracy matters most */
                    x[i] = 1 + random_double(&state, -40, -2);
                y[i] = kind == 1 ? random_double(&state, 0, 40) : random_double(&state, -10, 8);
                if ((random_next(&state) & 7) == 0)
                    y[i] = rint(y[i]);
                if (random_next(&state) & 1)
                    y[i] = -y[i];
                ref[i] = powl((long double)x[i], (long double)y[i]);
            }
            for (int t = 0; t < ntables; t++) {
                tables[t]->pow_f64(out, x, y, 1, BLOCK);
                for (int i = 0; i < BLOCK; i++) {
                    double e = ulp_error_f64(out[i], ref[i]);
                    if (e > mine[t].worst || (isinf(e) && !isinf(mine[t].worst)))
                        mine[t] = (worst_case){e, x[i], y[i]};
                }
            }
        }
#pragma omp critical
        for (int t = 0; t < ntables; t++)
            worst_merge(&worst[t], &mine[t]);
    }
    for (int t = 0; t < ntables; t++)
        ok &= report("pow", tables[t]->name, "float64", &worst[t], VECMATH_POW_BOUND_F64);
    return ok;
}

int main(int argc, char **argv)
{
    uint64_t stride = 1, samples64 = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc)
            stride = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--float64") == 0 && i + 1 < argc)
            samples64 = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--stride N] [--float64 SAMPLES] [--only NAME]\n",
                    argv[0]);
            return 2;
        }
    }
    if (stride < 1)
        stride = 1;
    const vecmath_table *tables[VECMATH_NUM_CAPABILITIES];
    int ntables = 0;
    for (int c = 0; c <= (int)vecmath_supported(); c++)
        tables[ntables++] = vecmath_table_of((vecmath_capability)c);
    printf("float32: every %llu-th input of 2^32; tables:", (unsigned long long)stride);
    for (int t = 0; t < ntables; t++)
        printf(" %s", tables[t]->name);
    printf(" (%d threads)\n", omp_get_max_threads());
    int ok = check_unary_f32(tables, ntables, stride, only);
    if (!only || strcmp(only, "pow") == 0)
        ok &= check_pow_f32(tables, ntables, stride);
    if (samples64)
        ok &= check_unary_f64(tables, ntables, samples64, only);
    printf("%s\n", ok ? "all within bounds" : "SOME BOUNDS EXCEEDED");
    return ok ? 0 : 1;
}
