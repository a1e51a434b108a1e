/* vecmath.c — which table of vectorised math functions runs (See Note [CPU capability],
 * vecmath.h), and the adapters that run its functions as elementwise loops over strided and
 * 16-bit operands. The functions themselves are in vecmath_impl.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "core/dtype.h"
#include "kernels/vecmath.h"
#include "pith/pith.h"

static const char *const capability_names[VECMATH_NUM_CAPABILITIES] = {"sse2", "avx2",
                                                                       "avx512"};

static _Atomic(const vecmath_table *) active_table;
static pthread_once_t active_once = PTHREAD_ONCE_INIT;

const char *vecmath_capability_name(vecmath_capability c)
{
    return c >= 0 && c < VECMATH_NUM_CAPABILITIES ? capability_names[c] : NULL;
}

vecmath_capability vecmath_supported(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return VECMATH_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return VECMATH_AVX2;
#endif
    return VECMATH_SSE2;
}

const vecmath_table *vecmath_table_of(vecmath_capability c)
{
    switch (c) {
    case VECMATH_SSE2:
        return &vecmath_sse2;
#if defined(__x86_64__) || defined(__i386__)
    case VECMATH_AVX2:
        return &vecmath_avx2;
    case VECMATH_AVX512:
        return &vecmath_avx512;
#endif
    default:
        return NULL;
    }
}

vecmath_capability vecmath_resolve(const char *request, vecmath_capability supported,
                                   char *message, int message_size)
{
    if (message && message_size > 0)
        message[0] = '\0';
    if (!request || !*request)
        return supported;
    vecmath_capability asked = VECMATH_NUM_CAPABILITIES;
    for (int c = 0; c < VECMATH_NUM_CAPABILITIES; c++)
        if (strcasecmp(request, capability_names[c]) == 0)
            asked = (vecmath_capability)c;
    if (strcasecmp(request, "default") == 0) /* PyTorch's ATEN_CPU_CAPABILITY name */
        asked = VECMATH_SSE2;
    if (asked == VECMATH_NUM_CAPABILITIES) {
        if (message)
            snprintf(message, (size_t)message_size,
                     "PITH_CPU_CAPABILITY=%s is not one of sse2, avx2, avx512; using %s",
                     request, capability_names[supported]);
        return supported;
    }
    if (asked > supported) {
        if (message)
            snprintf(message, (size_t)message_size,
                     "PITH_CPU_CAPABILITY=%s: this CPU supports %s at most; using %s", request,
                     capability_names[supported], capability_names[supported]);
        return supported;
    }
    return asked;
}

static void active_init(void)
{
    char message[160];
    vecmath_capability c = vecmath_resolve(getenv("PITH_CPU_CAPABILITY"), vecmath_supported(),
                                           message, (int)sizeof message);
    if (message[0])
        fprintf(stderr, "pith: %s\n", message);
    atomic_store(&active_table, vecmath_table_of(c));
}

const vecmath_table *vecmath_active(void)
{
    const vecmath_table *t = atomic_load_explicit(&active_table, memory_order_acquire);
    if (t)
        return t;
    pthread_once(&active_once, active_init);
    return atomic_load(&active_table);
}

vecmath_capability vecmath_select(vecmath_capability c)
{
    pthread_once(&active_once, active_init);
    vecmath_capability supported = vecmath_supported();
    if (c < 0)
        c = VECMATH_SSE2;
    if (c > supported)
        c = supported;
    atomic_store(&active_table, vecmath_table_of(c));
    return c;
}

const char *pith_get_cpu_capability(void)
{
    return vecmath_active()->name;
}

/* ---- adapters ---- */

/* Elements per buffered chunk: 2 KiB of float on the stack per operand. */
#define VECMATH_CHUNK 512

#define LOAD_F32(p) (*(const float *)(p))
#define LOAD_F64(p) (*(const double *)(p))
#define LOAD_F16(p) half_to_float(*(const pith_half *)(p))
#define LOAD_BF16(p) bfloat16_to_float(*(const pith_bfloat16 *)(p))
#define STORE_F32(p, v) (*(float *)(p) = (v))
#define STORE_F64(p, v) (*(double *)(p) = (v))
#define STORE_F16(p, v) (*(pith_half *)(p) = float_to_half(v))
#define STORE_BF16(p, v) (*(pith_bfloat16 *)(p) = float_to_bfloat16(v))

/* A unary loop: one call when both operands are contiguous arrays of the compute type
 * (`direct`), else in chunks through buffers of type T. */
#define VECMATH_UNARY_ADAPTER(suffix, T, FN, direct, LOAD, STORE)                           \
    int vecmath_loop_##suffix(FN fn, char **args, const int64_t *n, const int64_t *s)      \
    {                                                                                       \
        const int64_t len = n[0];                                                           \
        if (direct && s[0] == (int64_t)sizeof(T) && s[1] == (int64_t)sizeof(T)) {           \
            fn((T *)args[0], (const T *)args[1], len);                                      \
            return 0;                                                                       \
        }                                                                                   \
        T in[VECMATH_CHUNK], out[VECMATH_CHUNK];                                            \
        for (int64_t start = 0; start < len; start += VECMATH_CHUNK) {                      \
            int64_t m = len - start < VECMATH_CHUNK ? len - start : VECMATH_CHUNK;          \
            for (int64_t i = 0; i < m; i++)                                                 \
                in[i] = LOAD(args[1] + (start + i) * s[1]);                                 \
            fn(out, in, m);                                                                 \
            for (int64_t i = 0; i < m; i++)                                                 \
                STORE(args[0] + (start + i) * s[0], out[i]);                                \
        }                                                                                   \
        return 0;                                                                           \
    }
VECMATH_UNARY_ADAPTER(f32, float, vecmath_f32, 1, LOAD_F32, STORE_F32)
VECMATH_UNARY_ADAPTER(f64, double, vecmath_f64, 1, LOAD_F64, STORE_F64)
VECMATH_UNARY_ADAPTER(f16, float, vecmath_f32, 0, LOAD_F16, STORE_F16)
VECMATH_UNARY_ADAPTER(bf16, float, vecmath_f32, 0, LOAD_BF16, STORE_BF16)

/* pow: x and out as above; y of stride 0 stays one value (y_step 0). */
#define VECMATH_POW_ADAPTER(suffix, T, field, direct, LOAD, STORE)                          \
    int vecmath_pow_loop_##suffix(char **args, const int64_t *n, const int64_t *s)         \
    {                                                                                       \
        const int64_t len = n[0], size = (int64_t)sizeof(T);                                \
        const vecmath_table *table = vecmath_active();                                      \
        if (len <= 0)                                                                       \
            return 0;                                                                       \
        if (direct && s[0] == size && s[1] == size && (s[2] == size || s[2] == 0)) {        \
            table->field((T *)args[0], (const T *)args[1], (const T *)args[2],              \
                         s[2] ? 1 : 0, len);                                                \
            return 0;                                                                       \
        }                                                                                   \
        T x[VECMATH_CHUNK], y[VECMATH_CHUNK], out[VECMATH_CHUNK];                           \
        if (s[2] == 0)                                                                      \
            y[0] = LOAD(args[2]);                                                           \
        for (int64_t start = 0; start < len; start += VECMATH_CHUNK) {                      \
            int64_t m = len - start < VECMATH_CHUNK ? len - start : VECMATH_CHUNK;          \
            for (int64_t i = 0; i < m; i++) {                                               \
                x[i] = LOAD(args[1] + (start + i) * s[1]);                                  \
                if (s[2] != 0)                                                              \
                    y[i] = LOAD(args[2] + (start + i) * s[2]);                              \
            }                                                                               \
            table->field(out, x, y, s[2] ? 1 : 0, m);                                       \
            for (int64_t i = 0; i < m; i++)                                                 \
                STORE(args[0] + (start + i) * s[0], out[i]);                                \
        }                                                                                   \
        return 0;                                                                           \
    }
VECMATH_POW_ADAPTER(f32, float, pow_f32, 1, LOAD_F32, STORE_F32)
VECMATH_POW_ADAPTER(f64, double, pow_f64, 1, LOAD_F64, STORE_F64)
VECMATH_POW_ADAPTER(f16, float, pow_f32, 0, LOAD_F16, STORE_F16)
VECMATH_POW_ADAPTER(bf16, float, pow_f32, 0, LOAD_BF16, STORE_BF16)
