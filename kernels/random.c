/* random.c — the random generator, the random factories rand, randn, randint and
 * randperm, and the in-place fills uniform_ and normal_.
 *
 * Note [Counter-based random numbers]
 * The generator is Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as
 * 1, 2, 3", SC 2011): a keyed bijection of a 128-bit counter, so block b of the stream is
 * philox(counter = b, key = seed), computed on its own without the blocks before it. The
 * process-wide state is just (seed, offset): each random op reserves the blocks
 * [offset, offset + nblocks) under a lock and advances the offset, so two calls never reuse
 * numbers, and element i of the op's output is made from block first + i / per_block only.
 * Hence:
 *   - results do not depend on the thread count or on how OpenMP splits the loop;
 *   - pith_manual_seed(s) (seed = s, offset = 0) replays the same sequence of ops exactly;
 *   - calls from several threads are safe (the lock covers only the reservation).
 * A float32 uses one 32-bit word (4 elements per block) and a float64 two (2 per block).
 * rand keeps the type's mantissa bits of a word (24 for float32, 53 for float64, 11 for
 * float16, 8 for bfloat16), so the value is exactly representable and lies in [0, 1).
 * randn is Box-Muller on pairs of uniforms, the first taken in (0, 1] so that log() is
 * finite. randint takes a word (two for ranges of 2^32 or more) modulo the range.
 * The numbers are NOT PyTorch's: PyTorch's CPU generator is a Mersenne Twister, and we do
 * not try to reproduce its streams; only the distributions and the seeding behaviour match.
 * Meta tensors reserve nothing. */
#include <math.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "core/generator.h"
#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/factories.h"
#include "kernels/random.h"

void philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += UINT32_C(0x9E3779B9);
            k1 += UINT32_C(0xBB67AE85);
        }
        uint64_t p0 = (uint64_t)UINT32_C(0xD2511F53) * c0;
        uint64_t p1 = (uint64_t)UINT32_C(0xCD9E8D57) * c2;
        c0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        c1 = (uint32_t)p1;
        c2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c3 = (uint32_t)p0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* ---- the shared driver ---- */

/* Writes the `count` (<= per_block) elements of one block from its 4 words. */
typedef void (*block_writer)(const uint32_t w[4], int count, char *out, pith_dtype dtype,
                             const void *ctx);

static void random_generate(pith_generator *gen, pith_tensor *t, int per_block,
                            block_writer write, const void *ctx)
{
    char *data = tensor_data(t);
    int64_t n = t->numel;
    if (!data || n == 0)
        return;
    int64_t nblocks = (n - 1) / per_block + 1;
    uint64_t seed, first;
    generator_reserve(gen, (uint64_t)nblocks, &seed, &first);
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    size_t itemsize = pith_dtype_size(t->dtype);
    pith_dtype dtype = t->dtype;
    int threads = parallel_threads_for(n);
    PITH_PARALLEL_FOR(b, nblocks, threads, {
        uint64_t block = first + (uint64_t)b;
        const uint32_t counter[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0, 0};
        uint32_t w[4];
        philox4x32_10(counter, key, w);
        int64_t e0 = b * per_block;
        int count = n - e0 < per_block ? (int)(n - e0) : per_block;
        write(w, count, data + (size_t)e0 * itemsize, dtype, ctx);
    });
}

static uint64_t words_u64(const uint32_t *w)
{
    return (uint64_t)w[0] | (uint64_t)w[1] << 32;
}

/* Elements per block: four when one 32-bit word per element suffices, else two. */
static int floating_per_block(pith_dtype dtype)
{
    return dtype == PITH_FLOAT64 ? 2 : 4;
}

static pith_status random_options(const char *op, pith_opt_dtype dtype, pith_dtype dflt,
                                  pith_opt_device device, bool floating_only, pith_dtype *dt,
                                  pith_device *dev)
{
    if (factory_dtype(op, dtype, dflt, dt) != PITH_OK ||
        factory_device(op, device, dev) != PITH_OK)
        return pith_last_status();
    if (floating_only && !dtype_is_floating(*dt))
        return pith_set_error(PITH_ERR_TYPE, "%s: expected a floating point dtype, got %s", op,
                              pith_dtype_name(*dt));
    return PITH_OK;
}

/* ---- rand ---- */

static void uniform_write(const uint32_t w[4], int count, char *out, pith_dtype dtype,
                          const void *ctx)
{
    for (int k = 0; k < count; k++) {
        switch (dtype) {
        case PITH_FLOAT64:
            ((double *)out)[k] =
                (double)(words_u64(w + 2 * k) & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
            break;
        case PITH_FLOAT32: ((float *)out)[k] = (float)(w[k] & 0xFFFFFFu) * 0x1p-24f; break;
        case PITH_FLOAT16:
            ((pith_half *)out)[k] = float_to_half((float)(w[k] & 0x7FFu) * 0x1p-11f);
            break;
        default: /* bfloat16 */
            ((pith_bfloat16 *)out)[k] = float_to_bfloat16((float)(w[k] & 0xFFu) * 0x1p-8f);
            break;
        }
    }
}

/* rand and randn: a new tensor of a floating dtype (the default dtype unless given), each
 * block of it written by `write`. */
static pith_status floating_random_make(const char *op, block_writer write, pith_value *ret,
                                        pith_int_list size, pith_generator *gen,
                                        pith_opt_dtype dtype, pith_opt_device device,
                                        bool force_meta)
{
    pith_dtype dt = PITH_FLOAT32;
    pith_device dev = PITH_CPU;
    if (random_options(op, dtype, pith_get_default_dtype(), device, true, &dt, &dev) != PITH_OK)
        return pith_last_status();
    pith_tensor *t = factory_new(op, size, dt, force_meta ? PITH_META : dev);
    if (!t)
        return pith_last_status();
    random_generate(gen, t, floating_per_block(dt), write, NULL);
    return ret_tensor(ret, t);
}

pith_status rand_cpu(pith_keyset ks, pith_value *ret, pith_int_list size, pith_generator *gen,
                     pith_opt_dtype dtype, pith_opt_device device)
{
    return floating_random_make("rand", uniform_write, ret, size, gen, dtype, device, false);
}

pith_status rand_meta(pith_keyset ks, pith_value *ret, pith_int_list size, pith_generator *gen,
                      pith_opt_dtype dtype, pith_opt_device device)
{
    return floating_random_make("rand", uniform_write, ret, size, gen, dtype, device, true);
}

/* ---- randn ---- */

/* Box-Muller: u1 in (0, 1], u2 in [0, 1) give two independent standard normals. */
static void box_muller(double u1, double u2, double *z0, double *z1)
{
    double r = sqrt(-2.0 * log(u1));
    double theta = 2.0 * M_PI * u2;
    *z0 = r * cos(theta);
    *z1 = r * sin(theta);
}

static void normal_write(const uint32_t w[4], int count, char *out, pith_dtype dtype,
                         const void *ctx)
{
    double z[4];
    if (dtype == PITH_FLOAT64) {
        box_muller((double)((words_u64(w) >> 11) + 1) * 0x1p-53,
                   (double)(words_u64(w + 2) >> 11) * 0x1p-53, &z[0], &z[1]);
    } else {
        box_muller(((double)w[0] + 1.0) * 0x1p-32, (double)w[1] * 0x1p-32, &z[0], &z[1]);
        box_muller(((double)w[2] + 1.0) * 0x1p-32, (double)w[3] * 0x1p-32, &z[2], &z[3]);
    }
    size_t itemsize = pith_dtype_size(dtype);
    for (int k = 0; k < count; k++)
        element_store_double(dtype, out + (size_t)k * itemsize, z[k]);
}

pith_status randn_cpu(pith_keyset ks, pith_value *ret, pith_int_list size, pith_generator *gen,
                      pith_opt_dtype dtype, pith_opt_device device)
{
    return floating_random_make("randn", normal_write, ret, size, gen, dtype, device, false);
}

pith_status randn_meta(pith_keyset ks, pith_value *ret, pith_int_list size, pith_generator *gen,
                       pith_opt_dtype dtype, pith_opt_device device)
{
    return floating_random_make("randn", normal_write, ret, size, gen, dtype, device, true);
}

/* ---- randint ---- */

typedef struct {
    int64_t low;
    uint64_t range; /* high - low, at least 1 */
} randint_ctx;

static void randint_write(const uint32_t w[4], int count, char *out, pith_dtype dtype,
                          const void *ctx)
{
    const randint_ctx *c = ctx;
    bool wide = c->range > UINT32_MAX;
    size_t itemsize = pith_dtype_size(dtype);
    for (int k = 0; k < count; k++) {
        uint64_t r = wide ? words_u64(w + 2 * k) : w[k];
        int64_t v = (int64_t)((uint64_t)c->low + r % c->range);
        if (dtype_is_floating(dtype))
            element_store_double(dtype, out + (size_t)k * itemsize, (double)v);
        else
            element_store_int64(dtype, out + (size_t)k * itemsize, v);
    }
}

/* PyTorch's check_from_to_in_range: both ends must be values of the dtype. */
static pith_status randint_check_bounds(int64_t from, int64_t to_inc, pith_dtype dtype)
{
    double lo, hi;
    static const double int_lo[] = {0, 0, INT8_MIN, INT16_MIN, INT32_MIN};
    static const double int_hi[] = {1, UINT8_MAX, INT8_MAX, INT16_MAX, INT32_MAX};
    switch (dtype) {
    case PITH_INT64: return PITH_OK;
    case PITH_FLOAT16: lo = -65504.0, hi = 65504.0; break;
    case PITH_BFLOAT16: lo = -3.38953139e38, hi = 3.38953139e38; break;
    case PITH_FLOAT32:
    case PITH_FLOAT64: return PITH_OK; /* every int64 is within range */
    default: lo = int_lo[dtype], hi = int_hi[dtype]; break;
    }
    if ((double)from < lo || (double)from > hi)
        return pith_set_error(PITH_ERR_VALUE, "randint: from is out of bounds for %s",
                              pith_dtype_name(dtype));
    if ((double)to_inc < lo || (double)to_inc > hi)
        return pith_set_error(PITH_ERR_VALUE, "randint: to - 1 is out of bounds for %s",
                              pith_dtype_name(dtype));
    return PITH_OK;
}

static pith_status randint_make(pith_value *ret, int64_t low, int64_t high, pith_int_list size,
                                pith_generator *gen, pith_opt_dtype dtype,
                                pith_opt_device device, bool force_meta)
{
    pith_dtype dt = PITH_FLOAT32;
    pith_device dev = PITH_CPU;
    if (random_options("randint", dtype, PITH_INT64, device, false, &dt, &dev) != PITH_OK)
        return pith_last_status();
    if (low >= high)
        return pith_set_error(PITH_ERR_VALUE,
                              "randint: random_ expects 'from' to be less than 'to', but got "
                              "from=%lld >= to=%lld",
                              (long long)low, (long long)high);
    if (randint_check_bounds(low, high - 1, dt) != PITH_OK)
        return pith_last_status();
    pith_tensor *t = factory_new("randint", size, dt, force_meta ? PITH_META : dev);
    if (!t)
        return pith_last_status();
    randint_ctx ctx = {low, (uint64_t)high - (uint64_t)low};
    random_generate(gen, t, ctx.range > UINT32_MAX ? 2 : 4, randint_write, &ctx);
    return ret_tensor(ret, t);
}

pith_status randint_cpu(pith_keyset ks, pith_value *ret, int64_t low, int64_t high,
                        pith_int_list size, pith_generator *gen, pith_opt_dtype dtype,
                        pith_opt_device device)
{
    return randint_make(ret, low, high, size, gen, dtype, device, false);
}

pith_status randint_meta(pith_keyset ks, pith_value *ret, int64_t low, int64_t high,
                         pith_int_list size, pith_generator *gen, pith_opt_dtype dtype,
                         pith_opt_device device)
{
    return randint_make(ret, low, high, size, gen, dtype, device, true);
}

pith_status randint_high_cpu(pith_keyset ks, pith_value *ret, int64_t high, pith_int_list size,
                             pith_generator *gen, pith_opt_dtype dtype, pith_opt_device device)
{
    return randint_make(ret, 0, high, size, gen, dtype, device, false);
}

pith_status randint_high_meta(pith_keyset ks, pith_value *ret, int64_t high, pith_int_list size,
                              pith_generator *gen, pith_opt_dtype dtype, pith_opt_device device)
{
    return randint_make(ret, 0, high, size, gen, dtype, device, true);
}

/* ---- randperm ----
 * A Fisher-Yates shuffle whose i-th swap draws j uniformly from [0, i] with one 64-bit
 * word (two words per block; the modulo bias is below 2^-40 for n < 2^24): serial, as
 * each swap depends on the ones before it. The output is then copied in the requested
 * dtype, which must hold every value below n. */
static pith_status randperm_make(pith_value *ret, int64_t n, pith_generator *gen,
                                 pith_opt_dtype dtype, pith_opt_device device, bool force_meta)
{
    pith_dtype dt = PITH_INT64;
    pith_device dev = PITH_CPU;
    if (random_options("randperm", dtype, PITH_INT64, device, false, &dt, &dev) != PITH_OK)
        return pith_last_status();
    if (n < 0)
        return pith_set_error(PITH_ERR_VALUE, "randperm: n must be non-negative, got %lld",
                              (long long)n);
    if (n > 0 && randint_check_bounds(0, n - 1, dt) != PITH_OK)
        return pith_set_error(PITH_ERR_VALUE, "randperm: n is too large for result tensor "
                                              "type: '%s'", pith_dtype_name(dt));
    int64_t sizes[1] = {n};
    pith_int_list size = {sizes, 1};
    pith_tensor *t = factory_new("randperm", size, dt, force_meta ? PITH_META : dev);
    if (!t)
        return pith_last_status();
    char *data = tensor_data(t);
    if (!data || n == 0)
        return ret_tensor(ret, t);
    int64_t *perm = malloc((size_t)n * sizeof *perm);
    if (!perm) {
        pith_release(t);
        return pith_set_error(PITH_ERR_NOMEM, "randperm: out of memory for %lld values",
                              (long long)n);
    }
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t seed, first;
    generator_reserve(gen, (uint64_t)(n + 1) / 2, &seed, &first);
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t w[4];
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t k = n - 1 - i; /* the k-th draw: block k / 2, words 2 * (k % 2) */
        if (k % 2 == 0) {
            uint64_t block = first + (uint64_t)(k / 2);
            const uint32_t counter[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0, 0};
            philox4x32_10(counter, key, w);
        }
        int64_t j = (int64_t)(words_u64(w + 2 * (k % 2)) % (uint64_t)(i + 1));
        int64_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    size_t itemsize = pith_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        if (dtype_is_floating(dt))
            element_store_double(dt, data + (size_t)i * itemsize, (double)perm[i]);
        else
            element_store_int64(dt, data + (size_t)i * itemsize, perm[i]);
    }
    free(perm);
    return ret_tensor(ret, t);
}

pith_status randperm_cpu(pith_keyset ks, pith_value *ret, int64_t n, pith_generator *gen,
                         pith_opt_dtype dtype, pith_opt_device device)
{
    return randperm_make(ret, n, gen, dtype, device, false);
}

pith_status randperm_meta(pith_keyset ks, pith_value *ret, int64_t n, pith_generator *gen,
                          pith_opt_dtype dtype, pith_opt_device device)
{
    return randperm_make(ret, n, gen, dtype, device, true);
}

/* ---- uniform_ and normal_: fill a floating tensor in place ---- */

/* Note [Filling in place at random]
 * uniform_(from, to) and normal_(mean, std) draw exactly what rand and randn draw for a
 * tensor of self's shape and dtype (the same blocks, element i from block i / per_block
 * in row-major order), then map each value: from + (to - from) * u, mean + std * z, in
 * double, rounded once to the dtype. A contiguous self is written directly; any other
 * layout is filled through a contiguous scratch tensor and copy_, so element i in
 * row-major order is the same number whatever self's strides. Meta tensors reserve
 * nothing and only check the arguments (Note [Counter-based random numbers]). */
typedef struct {
    double scale, shift;
    block_writer base; /* uniform_write or normal_write */
} affine_ctx;

static void affine_write(const uint32_t w[4], int count, char *out, pith_dtype dtype,
                         const void *ctx)
{
    const affine_ctx *a = ctx;
    /* Draw at double precision into a scratch block, then map and round once. */
    double v[4];
    pith_dtype draw = dtype == PITH_FLOAT64 ? PITH_FLOAT64 : PITH_FLOAT32;
    if (draw == PITH_FLOAT64) {
        a->base(w, count, (char *)v, PITH_FLOAT64, NULL);
    } else {
        float f[4];
        a->base(w, count, (char *)f, PITH_FLOAT32, NULL);
        for (int k = 0; k < count; k++)
            v[k] = f[k];
    }
    /* float32 and float64 (what nn.init fills) without a store call per element; the same
     * rounding as element_store_double's. */
    if (dtype == PITH_FLOAT32) {
        for (int k = 0; k < count; k++)
            ((float *)out)[k] = (float)(a->shift + a->scale * v[k]);
    } else if (dtype == PITH_FLOAT64) {
        for (int k = 0; k < count; k++)
            ((double *)out)[k] = a->shift + a->scale * v[k];
    } else {
        size_t itemsize = pith_dtype_size(dtype);
        for (int k = 0; k < count; k++)
            element_store_double(dtype, out + (size_t)k * itemsize, a->shift + a->scale * v[k]);
    }
}

static pith_status fill_random(const char *op, const pith_tensor *self, pith_generator *gen,
                               const affine_ctx *ctx, pith_value *ret)
{
    if (!dtype_is_floating(self->dtype))
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED, "%s: not implemented for dtype %s",
                              op, pith_dtype_name(self->dtype));
    if (elementwise_check_no_overlap(op, self) != PITH_OK)
        return pith_last_status();
    if (self->device == PITH_META) {
        tensor_bump_version(self);
        return ret_self(ret, self);
    }
    int per_block = floating_per_block(self->dtype);
    if (self->contiguous) {
        random_generate(gen, (pith_tensor *)self, per_block, affine_write, ctx);
    } else {
        pith_tensor *scratch = tensor_new(self->ndim, self->sizes, self->dtype, PITH_CPU);
        if (!scratch)
            return pith_last_status();
        random_generate(gen, scratch, per_block, affine_write, ctx);
        pith_status status = elementwise_copy(op, (pith_tensor *)self, scratch);
        pith_release(scratch);
        if (status != PITH_OK)
            return status;
    }
    tensor_bump_version(self);
    return ret_self(ret, self);
}

static pith_status uniform_impl(pith_value *ret, const pith_tensor *self, double from,
                                double to, pith_generator *gen)
{
    if (!(from <= to))
        return pith_set_error(PITH_ERR_VALUE,
                              "uniform_ expects to return a [from, to) range, but found "
                              "from=%g > to=%g", from, to);
    if (isfinite(from) && isfinite(to) && !isfinite(to - from))
        return pith_set_error(PITH_ERR_VALUE,
                              "uniform_ expects to-from <= std::numeric_limits<%s>::max(), "
                              "but found to=%g and from=%g which result in to-from to exceed "
                              "the limit", pith_dtype_name(self->dtype), to, from);
    affine_ctx ctx = {to - from, from, uniform_write};
    return fill_random("uniform_", self, gen, &ctx, ret);
}

pith_status uniform__cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self, double from,
                         double to, pith_generator *generator)
{
    return uniform_impl(ret, self, from, to, generator);
}

pith_status uniform__meta(pith_keyset ks, pith_value *ret, const pith_tensor *self, double from,
                          double to, pith_generator *generator)
{
    return uniform_impl(ret, self, from, to, generator);
}

static pith_status normal_impl(pith_value *ret, const pith_tensor *self, double mean,
                               double std, pith_generator *gen)
{
    if (!(std >= 0.0))
        return pith_set_error(PITH_ERR_VALUE, "normal expects std >= 0.0, but found std %g",
                              std);
    affine_ctx ctx = {std, mean, normal_write};
    return fill_random("normal_", self, gen, &ctx, ret);
}

pith_status normal__cpu(pith_keyset ks, pith_value *ret, const pith_tensor *self, double mean,
                        double std, pith_generator *generator)
{
    return normal_impl(ret, self, mean, std, generator);
}

pith_status normal__meta(pith_keyset ks, pith_value *ret, const pith_tensor *self, double mean,
                         double std, pith_generator *generator)
{
    return normal_impl(ret, self, mean, std, generator);
}
