/* reduce_loops.c — the per-(op, dtype) loops of the reduction engine and the finishing
 * steps that write results. See Note [Reduction accumulators] in reduce.h.
 *
 * Everything here is instantiated once per dtype from RD_FORALL_DTYPES; what differs
 * between dtypes is only in its columns. */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/reduce.h"
#include "kernels/vecmath.h"

/* Independent accumulators of the contiguous inner loops: they let the compiler keep
 * several vector registers busy without reassociating one sum (which it may not do). */
#define RD_LANES 16

#define RD_LOAD_BOOL(x) ((uint8_t)((x) != 0)) /* See Note [Bool bytes] (core/dtype.h) */
#define RD_STORE_BOOL(x) ((uint8_t)((x) != 0))
#define RD_TRUTH_PLAIN(x) ((uint8_t)((x) != 0))
#define RD_TRUTH_HALF(x) ((uint8_t)(((x) & 0x7fffu) != 0)) /* nan is true, -0 false */

/* Columns: dtype, element type, load (to compute type), store (from compute type),
 * truthiness, sum accumulator, compute type, family (I: no nan, F: nan), lowest, highest.
 * From the dtype table (See Note [The dtype table] in core/dtype.h): bool is computed as
 * its byte, the sums accumulate in its ACC, and the 16-bit floats test truth on their
 * bits. */
#define RD_LOAD_boolean(LOAD) RD_LOAD_BOOL
#define RD_LOAD_integral(LOAD) LOAD
#define RD_LOAD_reduced(LOAD) LOAD
#define RD_LOAD_floating(LOAD) LOAD
#define RD_STORE_boolean(STORE) RD_STORE_BOOL
#define RD_STORE_integral(STORE) STORE
#define RD_STORE_reduced(STORE) STORE
#define RD_STORE_floating(STORE) STORE
#define RD_TRUTH_boolean RD_TRUTH_PLAIN
#define RD_TRUTH_integral RD_TRUTH_PLAIN
#define RD_TRUTH_reduced RD_TRUTH_HALF
#define RD_TRUTH_floating RD_TRUTH_PLAIN
#define RD_COMPUTE_T_boolean(T, CT) T
#define RD_COMPUTE_T_integral(T, CT) CT
#define RD_COMPUTE_T_reduced(T, CT) CT
#define RD_COMPUTE_T_floating(T, CT) CT
#define RD_FAMILY_boolean I
#define RD_FAMILY_integral I
#define RD_FAMILY_reduced F
#define RD_FAMILY_floating F
#define RD_COLUMNS_(M, E, tag, T, CT, UT, ACC, LOAD, STORE, KIND, NAME, SIGNED, DIGITS, MAX_EXP, \
                    LOWEST, HIGHEST)                                                        \
    RD_CALL_(M, E, T, RD_LOAD_##KIND(LOAD), RD_STORE_##KIND(STORE), RD_TRUTH_##KIND, ACC,   \
             RD_COMPUTE_T_##KIND(T, CT), RD_FAMILY_##KIND, LOWEST, HIGHEST)
/* The columns are expanded before M pastes the family into its steps' names. */
#define RD_CALL_(M, ...) M(__VA_ARGS__)
#define RD_ROW_(tag, M) PITH_DTYPE_COLUMNS(RD_COLUMNS_, tag, M)
#define RD_FORALL_DTYPES(M) PITH_FORALL_DTYPES(RD_ROW_, M)

/* Folding steps. max/min propagate nan: once the accumulator is nan it stays nan. */
#define RD_SUM_STEP(a, v) ((a) + (v))
#define RD_PROD_STEP(a, v) ((a) * (v))
#define RD_ALL_STEP(a, v) ((uint8_t)((a) & (v)))
#define RD_ANY_STEP(a, v) ((uint8_t)((a) | (v)))
#define RD_MAX_STEP_I(a, v) ((v) > (a) ? (v) : (a))
#define RD_MIN_STEP_I(a, v) ((v) < (a) ? (v) : (a))
#define RD_MAX_STEP_F(a, v) (((v) > (a) || isnan(v)) ? (v) : (a))
#define RD_MIN_STEP_F(a, v) (((v) < (a) || isnan(v)) ? (v) : (a))
/* For arg reductions: whether v beats the best so far (ties keep the first; the first nan
 * wins over everything). */
#define RD_MAX_BETTER_I(v, best) ((v) > (best))
#define RD_MIN_BETTER_I(v, best) ((v) < (best))
#define RD_MAX_BETTER_F(v, best) ((v) > (best) || (isnan(v) && !isnan(best)))
#define RD_MIN_BETTER_F(v, best) ((v) < (best) || (isnan(v) && !isnan(best)))

/* ---- simple folds: sum, prod, amax, amin, all, any ---- */

/* The loops of a fold whose combine is its own step. LOAD turns an element into ACC. With
 * VSUM (the sums), a contiguous float32 run is summed by the vecmath table: See Note [Sums
 * of float32 arrays] (kernels/vecmath.h); E is the dtype, so the branch folds away for the
 * others. */
#define RD_FOLD_LOOPS(name, E, T, ACC, LOAD, STEP, IDENTITY, VSUM)                          \
    static void name##_init(void *accs, int64_t n)                                          \
    {                                                                                       \
        ACC *a = accs;                                                                      \
        for (int64_t j = 0; j < n; j++)                                                     \
            a[j] = (ACC)(IDENTITY);                                                         \
    }                                                                                       \
    static void name##_inner(void *acc, const char *p, int64_t n, int64_t stride,           \
                             int64_t index)                                                 \
    {                                                                                       \
        (void)index;                                                                        \
        ACC a = *(ACC *)acc;                                                                \
        int64_t i = 0;                                                                      \
        if (VSUM && (E) == PITH_FLOAT32 && stride == (int64_t)sizeof(float) &&              \
            n >= VECMATH_SUM_LANES_F32) {                                                   \
            *(ACC *)acc = STEP(a, (ACC)vecmath_active()->sum_f32((const float *)p, n));     \
            return;                                                                         \
        }                                                                                   \
        if (stride == (int64_t)sizeof(T) && n >= 2 * RD_LANES) {                            \
            const T *x = (const T *)p;                                                      \
            ACC lane[RD_LANES];                                                             \
            for (int j = 0; j < RD_LANES; j++)                                              \
                lane[j] = (ACC)LOAD(x[j]);                                                  \
            for (i = RD_LANES; i + RD_LANES <= n; i += RD_LANES)                            \
                for (int j = 0; j < RD_LANES; j++)                                          \
                    lane[j] = STEP(lane[j], (ACC)LOAD(x[i + j]));                           \
            for (int j = 0; j < RD_LANES; j++)                                              \
                a = STEP(a, lane[j]);                                                       \
        }                                                                                   \
        for (; i < n; i++)                                                                  \
            a = STEP(a, (ACC)LOAD(*(const T *)(p + i * stride)));                           \
        *(ACC *)acc = a;                                                                    \
    }                                                                                       \
    static void name##_outer(void *accs, const char *p, int64_t n, int64_t stride,          \
                             int64_t index)                                                 \
    {                                                                                       \
        (void)index;                                                                        \
        ACC *a = accs;                                                                      \
        if (stride == (int64_t)sizeof(T)) {                                                 \
            const T *x = (const T *)p;                                                      \
            for (int64_t j = 0; j < n; j++)                                                 \
                a[j] = STEP(a[j], (ACC)LOAD(x[j]));                                         \
        } else {                                                                            \
            for (int64_t j = 0; j < n; j++)                                                 \
                a[j] = STEP(a[j], (ACC)LOAD(*(const T *)(p + j * stride)));                 \
        }                                                                                   \
    }                                                                                       \
    static void name##_combine(void *acc, const void *later)                                \
    {                                                                                       \
        *(ACC *)acc = STEP(*(ACC *)acc, *(const ACC *)later);                               \
    }

#define RD_FOLDS_FOR_DTYPE_(E, T, LOAD, STORE, TRUTH, SUMACC, CT, FAM, LO, HI)              \
    RD_FOLD_LOOPS(sum_##E, E, T, SUMACC, LOAD, RD_SUM_STEP, 0, 1)                           \
    RD_FOLD_LOOPS(prod_##E, E, T, SUMACC, LOAD, RD_PROD_STEP, 1, 0)                         \
    RD_FOLD_LOOPS(amax_##E, E, T, CT, LOAD, RD_MAX_STEP_##FAM, LO, 0)                       \
    RD_FOLD_LOOPS(amin_##E, E, T, CT, LOAD, RD_MIN_STEP_##FAM, HI, 0)                       \
    RD_FOLD_LOOPS(all_##E, E, T, uint8_t, TRUTH, RD_ALL_STEP, 1, 0)                         \
    RD_FOLD_LOOPS(any_##E, E, T, uint8_t, TRUTH, RD_ANY_STEP, 0, 0)
RD_FORALL_DTYPES(RD_FOLDS_FOR_DTYPE_)

/* ---- arg folds: argmax, argmin, max.dim, min.dim ---- */

/* The accumulator is the best value and its index; index -1 means "nothing seen". ACC is
 * rd_arg_<dtype>, shared by the max and min folds of one dtype. */
#define RD_ARG_LOOPS(name, ACC, T, LOAD, BETTER)                                            \
    static void name##_init(void *accs, int64_t n)                                          \
    {                                                                                       \
        ACC *a = accs;                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                   \
            a[j].v = 0;                                                                     \
            a[j].i = -1;                                                                    \
        }                                                                                   \
    }                                                                                       \
    static void name##_inner(void *acc, const char *p, int64_t n, int64_t stride,           \
                             int64_t index)                                                 \
    {                                                                                       \
        ACC a = *(ACC *)acc;                                                                \
        for (int64_t j = 0; j < n; j++) {                                                   \
            __typeof__(a.v) v = LOAD(*(const T *)(p + j * stride));                         \
            if (a.i < 0 || BETTER(v, a.v)) {                                                \
                a.v = v;                                                                    \
                a.i = index + j;                                                            \
            }                                                                               \
        }                                                                                   \
        *(ACC *)acc = a;                                                                    \
    }                                                                                       \
    static void name##_outer(void *accs, const char *p, int64_t n, int64_t stride,          \
                             int64_t index)                                                 \
    {                                                                                       \
        ACC *a = accs;                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                   \
            __typeof__(a->v) v = LOAD(*(const T *)(p + j * stride));                        \
            if (a[j].i < 0 || BETTER(v, a[j].v)) {                                          \
                a[j].v = v;                                                                 \
                a[j].i = index;                                                             \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    static void name##_combine(void *acc, const void *later)                                \
    {                                                                                       \
        ACC *a = acc;                                                                       \
        const ACC *b = later;                                                               \
        if (b->i >= 0 && (a->i < 0 || BETTER(b->v, a->v)))                                  \
            *a = *b;                                                                        \
    }

#define RD_ARGS_FOR_DTYPE_(E, T, LOAD, STORE, TRUTH, SUMACC, CT, FAM, LO, HI)               \
    typedef struct {                                                                        \
        CT v;                                                                               \
        int64_t i;                                                                          \
    } rd_arg_##E;                                                                           \
    RD_ARG_LOOPS(argmax_##E, rd_arg_##E, T, LOAD, RD_MAX_BETTER_##FAM)                      \
    RD_ARG_LOOPS(argmin_##E, rd_arg_##E, T, LOAD, RD_MIN_BETTER_##FAM)
RD_FORALL_DTYPES(RD_ARGS_FOR_DTYPE_)

/* ---- var/std: Welford's accumulator, merged with Chan's formula ---- */

typedef struct {
    double mean, m2;
    int64_t n;
} rd_welford;

static void welford_merge(rd_welford *a, double mean, double m2, int64_t n)
{
    if (n == 0)
        return;
    if (a->n == 0) {
        a->mean = mean;
        a->m2 = m2;
        a->n = n;
        return;
    }
    int64_t total = a->n + n;
    double delta = mean - a->mean;
    a->mean += delta * ((double)n / (double)total);
    a->m2 += m2 + delta * delta * ((double)a->n * (double)n / (double)total);
    a->n = total;
}

static void welford_init(void *accs, int64_t n)
{
    memset(accs, 0, (size_t)n * sizeof(rd_welford));
}

static void welford_combine(void *acc, const void *later)
{
    const rd_welford *b = later;
    welford_merge(acc, b->mean, b->m2, b->n);
}

/* inner: a two-pass mean and sum of squared deviations over the run, then one merge, so
 * that the hot loops have no division and stay accurate. outer: Welford's update per
 * lane. */
#define RD_VAR_LOOPS(name, T, LOAD)                                                         \
    static void name##_inner(void *acc, const char *p, int64_t n, int64_t stride,           \
                             int64_t index)                                                 \
    {                                                                                       \
        (void)index;                                                                        \
        double sum = 0, m2 = 0;                                                             \
        for (int64_t i = 0; i < n; i++)                                                     \
            sum += (double)LOAD(*(const T *)(p + i * stride));                              \
        double mean = n ? sum / (double)n : 0;                                              \
        for (int64_t i = 0; i < n; i++) {                                                   \
            double d = (double)LOAD(*(const T *)(p + i * stride)) - mean;                   \
            m2 += d * d;                                                                    \
        }                                                                                   \
        welford_merge(acc, mean, m2, n);                                                    \
    }                                                                                       \
    static void name##_outer(void *accs, const char *p, int64_t n, int64_t stride,          \
                             int64_t index)                                                 \
    {                                                                                       \
        (void)index;                                                                        \
        rd_welford *a = accs;                                                               \
        for (int64_t j = 0; j < n; j++) {                                                   \
            double v = (double)LOAD(*(const T *)(p + j * stride));                          \
            a[j].n++;                                                                       \
            double d = v - a[j].mean;                                                       \
            a[j].mean += d / (double)a[j].n;                                                \
            a[j].m2 += d * (v - a[j].mean);                                                 \
        }                                                                                   \
    }
#define RD_VAR_LOOPS_ROW_(x, E, tag, T, CT, UT, ACC, LOAD, ...) RD_VAR_LOOPS(var_##E, T, LOAD)
#define RD_VAR_LOOPS_FOR_DTYPE_(tag, x) PITH_DTYPE_COLUMNS(RD_VAR_LOOPS_ROW_, tag, x)
PITH_FORALL_FLOATING_DTYPES(RD_VAR_LOOPS_FOR_DTYPE_, 0)

/* ---- finishing: accumulators to outputs ---- */

/* Stores n values of type SRC into `out` of dtype `dt`, converting with C's rules (ints
 * from an integer accumulator keep their low bits, so sums wrap). */
#define RD_STORE_CASE_(E, T, LOAD, STORE, TRUTH, SUMACC, CT, FAM, LO, HI)                   \
    case E: {                                                                               \
        T *o = (T *)out;                                                                    \
        for (int64_t j = 0; j < n; j++)                                                     \
            o[j] = (T)STORE((CT)v[j]);                                                      \
        break;                                                                              \
    }

static void store_uint64_t(pith_dtype dt, char *out, const uint64_t *v, int64_t n)
{
    if (dt == PITH_BOOL) {
        for (int64_t j = 0; j < n; j++)
            out[j] = v[j] != 0;
        return;
    }
    switch (dt) {
        RD_FORALL_DTYPES(RD_STORE_CASE_)
    }
}

static void store_double(pith_dtype dt, char *out, const double *v, int64_t n)
{
    switch (dt) {
        RD_FORALL_DTYPES(RD_STORE_CASE_)
    }
}

static void store_float(pith_dtype dt, char *out, const float *v, int64_t n)
{
    switch (dt) {
        RD_FORALL_DTYPES(RD_STORE_CASE_)
    }
}

static char *out_at(const reduce_ctx *ctx, int64_t o)
{
    return ctx->out + o * (int64_t)pith_dtype_size(ctx->out_dtype);
}

static void finish_uint64_t(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n)
{
    store_uint64_t(ctx->out_dtype, out_at(ctx, o), accs, n);
}

static void finish_float(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n)
{
    store_float(ctx->out_dtype, out_at(ctx, o), accs, n);
}

static void finish_double(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n)
{
    store_double(ctx->out_dtype, out_at(ctx, o), accs, n);
}

/* Means of a float or double accumulator; an empty mean is 0/0 = nan, as in PyTorch. */
#define RD_FINISH_MEAN(name, ACC)                                                           \
    static void name(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n)         \
    {                                                                                       \
        const ACC *a = accs;                                                                \
        ACC buf[64];                                                                        \
        for (int64_t j0 = 0; j0 < n; j0 += 64) {                                            \
            int64_t m = n - j0 < 64 ? n - j0 : 64;                                          \
            for (int64_t j = 0; j < m; j++)                                                 \
                buf[j] = a[j0 + j] / (ACC)ctx->count;                                       \
            store_##ACC(ctx->out_dtype, out_at(ctx, o + j0), buf, m);                       \
        }                                                                                   \
    }
RD_FINISH_MEAN(finish_mean_float, float)
RD_FINISH_MEAN(finish_mean_double, double)
/* Integer inputs never reach a mean (it asks for a floating dtype); this keeps the table
 * total. */
static void finish_mean_uint64_t(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n)
{
    const uint64_t *a = accs;
    for (int64_t j = 0; j < n; j++) {
        double v = (double)(int64_t)a[j] / (double)ctx->count;
        store_double(ctx->out_dtype, out_at(ctx, o + j), &v, 1);
    }
}

/* var = m2 / max(0, n - correction), as PyTorch: 0/0 is nan, m2/0 is inf. */
static void finish_var_std(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n,
                           bool take_sqrt)
{
    const rd_welford *a = accs;
    double buf[64];
    for (int64_t j0 = 0; j0 < n; j0 += 64) {
        int64_t m = n - j0 < 64 ? n - j0 : 64;
        for (int64_t j = 0; j < m; j++) {
            double divisor = (double)a[j0 + j].n - ctx->correction;
            double var = a[j0 + j].m2 / (divisor > 0 ? divisor : 0);
            buf[j] = take_sqrt ? sqrt(var) : var;
        }
        store_double(ctx->out_dtype, out_at(ctx, o + j0), buf, m);
    }
}
static void finish_var(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n)
{
    finish_var_std(ctx, o, accs, n, false);
}
static void finish_std(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n)
{
    finish_var_std(ctx, o, accs, n, true);
}

/* all/any: the accumulator is the 0/1 byte that bool and uint8 outputs hold. */
static void finish_bytes(const reduce_ctx *ctx, int64_t o, const void *accs, int64_t n)
{
    memcpy(out_at(ctx, o), accs, (size_t)n);
}

/* amax/amin: back to the element type; arg folds: the index, and for max.dim the value. */
#define RD_FINISHES_FOR_DTYPE_(E, T, LOAD, STORE, TRUTH, SUMACC, CT, FAM, LO, HI)           \
    static void finish_same_##E(const reduce_ctx *ctx, int64_t o, const void *accs,         \
                                int64_t n)                                                  \
    {                                                                                       \
        const CT *a = accs;                                                                 \
        T *out = (T *)ctx->out + o;                                                         \
        for (int64_t j = 0; j < n; j++)                                                     \
            out[j] = (T)STORE(a[j]);                                                        \
    }                                                                                       \
    static void finish_index_##E(const reduce_ctx *ctx, int64_t o, const void *accs,        \
                                 int64_t n)                                                 \
    {                                                                                       \
        const rd_arg_##E *a = accs;                                                   \
        int64_t *out = (int64_t *)ctx->out + o;                                             \
        for (int64_t j = 0; j < n; j++)                                                     \
            out[j] = a[j].i;                                                                \
    }                                                                                       \
    static void finish_value_index_##E(const reduce_ctx *ctx, int64_t o, const void *accs,  \
                                       int64_t n)                                           \
    {                                                                                       \
        const rd_arg_##E *a = accs;                                                   \
        T *out = (T *)ctx->out + o;                                                         \
        int64_t *index = (int64_t *)ctx->out_index + o;                                     \
        for (int64_t j = 0; j < n; j++) {                                                   \
            out[j] = (T)STORE(a[j].v);                                                      \
            index[j] = a[j].i;                                                              \
        }                                                                                   \
    }
RD_FORALL_DTYPES(RD_FINISHES_FOR_DTYPE_)

/* ---- the table ---- */

#define RD_KERNEL_(loops, ACC_SIZE, ORDERED, FINISH)                                        \
    (reduce_kernel)                                                                         \
    {                                                                                       \
        ACC_SIZE, ORDERED, loops##_init, loops##_inner, loops##_outer, loops##_combine,     \
            FINISH                                                                          \
    }

#define RD_GET_CASE_(E, T, LOAD, STORE, TRUTH, SUMACC, CT, FAM, LO, HI)                     \
    case E:                                                                                 \
        switch (op) {                                                                       \
        case REDUCE_SUM:                                                                    \
        case REDUCE_MEAN:                                                                   \
            *out = RD_KERNEL_(sum_##E, sizeof(SUMACC), false,                               \
                              op == REDUCE_MEAN ? finish_mean_##SUMACC : finish_##SUMACC);                \
            return true;                                                                    \
        case REDUCE_PROD:                                                                   \
            *out = RD_KERNEL_(prod_##E, sizeof(SUMACC), false, finish_##SUMACC); \
            return true;                                                                    \
        case REDUCE_AMAX:                                                                   \
            *out = RD_KERNEL_(amax_##E, sizeof(CT), false, finish_same_##E);                \
            return true;                                                                    \
        case REDUCE_AMIN:                                                                   \
            *out = RD_KERNEL_(amin_##E, sizeof(CT), false, finish_same_##E);                \
            return true;                                                                    \
        case REDUCE_ALL:                                                                    \
            *out = RD_KERNEL_(all_##E, 1, false, finish_bytes);                             \
            return true;                                                                    \
        case REDUCE_ANY:                                                                    \
            *out = RD_KERNEL_(any_##E, 1, false, finish_bytes);                             \
            return true;                                                                    \
        case REDUCE_ARGMAX:                                                                 \
        case REDUCE_MAX_DIM:                                                                \
            *out = RD_KERNEL_(argmax_##E, sizeof(rd_arg_##E), true,                   \
                              op == REDUCE_ARGMAX ? finish_index_##E                        \
                                                  : finish_value_index_##E);                \
            return true;                                                                    \
        case REDUCE_ARGMIN:                                                                 \
        case REDUCE_MIN_DIM:                                                                \
            *out = RD_KERNEL_(argmin_##E, sizeof(rd_arg_##E), true,                   \
                              op == REDUCE_ARGMIN ? finish_index_##E                        \
                                                  : finish_value_index_##E);                \
            return true;                                                                    \
        case REDUCE_VAR:                                                                    \
        case REDUCE_STD:                                                                    \
            break;                                                                          \
        }                                                                                   \
        break;

#define RD_VAR_CASE_(x, E, ...)                                                             \
    case E:                                                                                 \
        *out = (reduce_kernel){sizeof(rd_welford), false,        welford_init,              \
                               var_##E##_inner,    var_##E##_outer, welford_combine,        \
                               op == REDUCE_STD ? finish_std : finish_var};                 \
        return true;
#define RD_VAR_CASE_FOR_DTYPE_(tag, x) PITH_DTYPE_COLUMNS(RD_VAR_CASE_, tag, x)

bool reduce_kernel_get(reduce_op op, pith_dtype dtype, reduce_kernel *out)
{
    _Static_assert(sizeof(rd_welford) <= REDUCE_MAX_ACC, "accumulator too large");
    if (op == REDUCE_VAR || op == REDUCE_STD) {
        switch (dtype) {
            PITH_FORALL_FLOATING_DTYPES(RD_VAR_CASE_FOR_DTYPE_, 0)
        default:
            return false;
        }
    }
    switch (dtype) {
        RD_FORALL_DTYPES(RD_GET_CASE_)
    }
    return false;
}
