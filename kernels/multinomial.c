/* multinomial.c — sampling category indices from rows of probabilities: multinomial and
 * multinomial.out (CPU and Meta kernels).
 *
 * Note [Multinomial sampling]
 * `self` is one row (1-D) or a batch of rows (2-D) of unnormalised probabilities. The data
 * is validated first, serially, before the parallel region, with PyTorch's messages for
 * each of its two paths: without replacement (or for one sample), every element must be
 * finite and >= 0 and then every row's sum > 0; with replacement, each row in turn has each
 * element checked (< 0, then inf or NaN) and then its sum. Each row is divided by its
 * largest element, so that no sum or key overflows.
 *
 * The numbers come from the generator's counter blocks (See Note [Counter-based random
 * numbers] in random.c): one 64-bit word per draw, two draws per block, and draw c of row r
 * is draw r * per_row + c of the op, from block first + that / 2. So a row's samples depend
 * on the generator's state and the row's position only, never on the thread count, and
 * a seeded generator replays them.
 *   - Without replacement: the exponential race (Efraimidis and Spirakis; PyTorch's CPU
 *     kernel too): category c gets the key p_c / E_c, E_c = -log(u_c) ~ Exp(1) with u_c in
 *     (0, 1] (one draw per category), and the samples are the categories of the
 *     num_samples largest keys, largest first (topk's order, See Note [Sort keys]). A
 *     category of probability 0 has key 0: such categories come last, lowest index first,
 *     so asking for more samples than there are nonzero categories returns them, as in
 *     PyTorch.
 *   - With replacement: draw u in [0, 1) picks the first category whose cumulative sum
 *     exceeds u times the total (binary search; a category of probability 0 never does).
 * The samples are not PyTorch's numbers (its generator is a Mersenne Twister); their
 * distribution is the same. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "core/generator.h"
#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/indexing.h"
#include "kernels/ops_internal.h"
#include "kernels/out_target.h"
#include "kernels/random.h"
#include "kernels/reduce.h"
#include "kernels/sorting.h"

/* PyTorch's limit: its indices go through float32, exact up to 2^24. */
#define MN_MAX_CATEGORIES (INT64_C(1) << 24)

/* The rows of the input and what the call samples. */
typedef struct {
    int64_t rows, categories, samples;
    int64_t row_stride, stride; /* input elements between rows / categories */
    bool replacement;           /* with replacement and more than one sample */
} mn_setup;

static pith_status mn_prepare(const pith_tensor *x, int64_t num_samples, bool replacement,
                              const pith_tensor *out, pith_device device, mn_setup *s)
{
    if ((device == PITH_CPU &&
         (reduce_check_cpu("multinomial", x) != PITH_OK ||
          reduce_check_cpu("multinomial", out) != PITH_OK)) ||
        (out && devices_check("multinomial", x, out) != PITH_OK))
        return pith_last_status();
    if (x->ndim < 1 || x->ndim > 2)
        return pith_set_error(PITH_ERR_VALUE, "multinomial: prob_dist must be 1 or 2 dim");
    if (!dtype_is_floating(x->dtype))
        return pith_set_error(PITH_ERR_TYPE,
                              "multinomial: multinomial only supports floating-point dtypes "
                              "for input, got: %s", reduce_torch_dtype_name(x->dtype));
    if (out && out->dtype != PITH_INT64)
        return pith_set_error(PITH_ERR_TYPE,
                              "multinomial: multinomial expects Long tensor out, got: %s",
                              reduce_torch_dtype_name(out->dtype));
    if (num_samples <= 0)
        return pith_set_error(PITH_ERR_VALUE, "multinomial: cannot sample n_sample <= 0 samples");
    s->categories = x->sizes[x->ndim - 1];
    s->stride = x->strides[x->ndim - 1];
    s->rows = x->ndim == 2 ? x->sizes[0] : 1;
    s->row_stride = x->ndim == 2 ? x->strides[0] : 0;
    s->samples = num_samples;
    s->replacement = replacement && num_samples > 1;
    if (!replacement && num_samples > s->categories)
        return pith_set_error(PITH_ERR_VALUE, "multinomial: cannot sample n_sample > "
                                              "prob_dist.size(-1) samples without replacement");
    if (s->categories > MN_MAX_CATEGORIES)
        return pith_set_error(PITH_ERR_VALUE,
                              "multinomial: number of categories cannot exceed 2^24");
    return PITH_OK;
}

static double mn_load(const pith_tensor *x, const mn_setup *s, int64_t r, int64_t c)
{
    size_t itemsize = dtype_itemsize(x->dtype);
    const char *p = tensor_data(x) + (r * s->row_stride + c * s->stride) * (int64_t)itemsize;
    return dtype_load_double(x->dtype, p);
}

#define MN_SUM_MESSAGE "multinomial: invalid multinomial distribution (sum of probabilities <= 0)"

/* The data checks of Note [Multinomial sampling], in PyTorch's order for each path. */
static pith_status mn_validate(const pith_tensor *x, const mn_setup *s)
{
    for (int64_t r = 0; r < s->rows; r++) {
        double sum = 0;
        for (int64_t c = 0; c < s->categories; c++) {
            double v = mn_load(x, s, r, c);
            if (!s->replacement && !(v >= 0 && v < INFINITY))
                return pith_set_error(PITH_ERR_VALUE, "multinomial: probability tensor "
                                                      "contains either `inf`, `nan` or "
                                                      "element < 0");
            if (s->replacement && !(v >= 0))
                return pith_set_error(PITH_ERR_VALUE, "multinomial: invalid multinomial "
                                                      "distribution (encountering probability "
                                                      "entry < 0)");
            if (s->replacement && !isfinite(v))
                return pith_set_error(PITH_ERR_VALUE, "multinomial: invalid multinomial "
                                                      "distribution (encountering probability "
                                                      "entry = infinity or NaN)");
            sum += v;
        }
        if (s->replacement && !(sum > 0))
            return pith_set_error(PITH_ERR_VALUE, MN_SUM_MESSAGE);
    }
    /* Without replacement every element is checked before any sum. */
    for (int64_t r = 0; !s->replacement && r < s->rows; r++) {
        bool positive = false;
        for (int64_t c = 0; c < s->categories && !positive; c++)
            positive = mn_load(x, s, r, c) > 0;
        if (!positive)
            return pith_set_error(PITH_ERR_VALUE, MN_SUM_MESSAGE);
    }
    return PITH_OK;
}

/* The op's draws, read in increasing order by one thread (a block is made once). */
typedef struct {
    uint32_t key[2];
    uint64_t first;  /* the op's first block */
    uint64_t cached; /* the block in `words`, or UINT64_MAX */
    uint32_t words[4];
} mn_stream;

static uint64_t mn_draw(mn_stream *st, uint64_t draw)
{
    uint64_t block = st->first + draw / 2;
    if (block != st->cached) {
        const uint32_t counter[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0, 0};
        philox4x32_10(counter, st->key, st->words);
        st->cached = block;
    }
    const uint32_t *w = st->words + 2 * (draw % 2);
    return (uint64_t)w[0] | (uint64_t)w[1] << 32;
}

/* The largest element of row r (positive: validated). */
static double mn_row_max(const pith_tensor *x, const mn_setup *s, int64_t r)
{
    double max = 0;
    for (int64_t c = 0; c < s->categories; c++) {
        double v = mn_load(x, s, r, c);
        max = v > max ? v : max;
    }
    return max;
}

static void mn_row_without_replacement(const pith_tensor *x, const mn_setup *s, int64_t r,
                                       mn_stream *st, sort_item *items, int64_t *out)
{
    int64_t n = s->categories;
    double max = mn_row_max(x, s, r);
    for (int64_t c = 0; c < n; c++) {
        double p = mn_load(x, s, r, c) / max;
        double u = (double)((mn_draw(st, (uint64_t)(r * n + c)) >> 11) + 1) * 0x1p-53;
        double e = -log(u);
        items[c].key = ~sort_key_of_double(p > 0 ? p / e : 0); /* largest first */
        items[c].index = c;
    }
    sort_items_first(items, n, s->samples, items + n);
    for (int64_t k = 0; k < s->samples; k++)
        out[k] = items[k].index;
}

static void mn_row_with_replacement(const pith_tensor *x, const mn_setup *s, int64_t r,
                                    mn_stream *st, double *cdf, int64_t *out)
{
    int64_t n = s->categories, last_positive = 0;
    double max = mn_row_max(x, s, r), total = 0;
    for (int64_t c = 0; c < n; c++) {
        double p = mn_load(x, s, r, c) / max;
        total += p;
        cdf[c] = total;
        if (p > 0)
            last_positive = c;
    }
    for (int64_t k = 0; k < s->samples; k++) {
        double target = (double)(mn_draw(st, (uint64_t)(r * s->samples + k)) >> 11) *
                        0x1p-53 * total;
        int64_t lo = 0, hi = n; /* the first c with cdf[c] > target is in [lo, hi] */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (cdf[mid] > target)
                hi = mid;
            else
                lo = mid + 1;
        }
        out[k] = lo < n ? lo : last_positive; /* target rounded up to the total */
    }
}

static pith_status mn_sample(const pith_tensor *x, const mn_setup *s, pith_generator *gen,
                             int64_t *out)
{
    if (s->rows == 0)
        return PITH_OK;
    if (mn_validate(x, s) != PITH_OK)
        return pith_last_status();
    int64_t per_row = s->replacement ? s->samples : s->categories;
    int threads = parallel_threads_for(s->rows * (per_row > s->categories ? per_row
                                                                          : s->categories));
    if (threads > s->rows)
        threads = (int)s->rows;
    size_t per_thread = 2 * (size_t)s->categories * sizeof(sort_item); /* >= n doubles */
    char *buffer = malloc(per_thread * (size_t)threads);
    if (!buffer)
        return pith_set_error(PITH_ERR_NOMEM, "multinomial: cannot allocate scratch space "
                                              "for %lld categories", (long long)s->categories);
    uint64_t seed, first;
    generator_reserve(gen, ((uint64_t)s->rows * (uint64_t)per_row + 1) / 2, &seed, &first);
    PITH_PARALLEL_REGION(threads, {
        int64_t begin, end;
        thread_range(s->rows, &begin, &end);
        char *scratch = buffer + per_thread * (size_t)omp_get_thread_num();
        mn_stream st = {{(uint32_t)seed, (uint32_t)(seed >> 32)}, first, UINT64_MAX, {0}};
        for (int64_t r = begin; r < end; r++) {
            if (s->replacement)
                mn_row_with_replacement(x, s, r, &st, (double *)scratch, out + r * s->samples);
            else
                mn_row_without_replacement(x, s, r, &st, (sort_item *)scratch,
                                           out + r * s->samples);
        }
    });
    free(buffer);
    return PITH_OK;
}

static pith_status multinomial_impl(pith_value *ret, const pith_tensor *self,
                                    int64_t num_samples, bool replacement, pith_generator *gen,
                                    pith_tensor *target, pith_device device)
{
    mn_setup s;
    if (mn_prepare(self, num_samples, replacement, target, device, &s) != PITH_OK)
        return pith_last_status();
    int64_t sizes[2] = {s.rows, s.samples};
    int ndim = self->ndim;
    const int64_t *shape = ndim == 2 ? sizes : sizes + 1;
    pith_tensor *dst;
    if (!target) {
        dst = tensor_new(ndim, shape, PITH_INT64, device);
        if (dst && device == PITH_CPU &&
            mn_sample(self, &s, gen, (int64_t *)tensor_data(dst)) != PITH_OK) {
            pith_release(dst);
            return pith_last_status();
        }
        return ret_tensor(ret, dst);
    }
    if (elementwise_output("multinomial", ELEMENTWISE_OUT, target, ndim, shape, PITH_INT64,
                           device, &dst) != PITH_OK)
        return pith_last_status();
    if (device == PITH_META) {
        tensor_bump_version(target);
        return ret_self(ret, target);
    }
    dst = out_target_begin(target, &self, 1, false);
    pith_status status = dst ? mn_sample(self, &s, gen, (int64_t *)tensor_data(dst))
                             : pith_last_status();
    if (status == PITH_OK)
        return out_target_end("multinomial", target, dst) == PITH_OK ? ret_self(ret, target)
                                                                     : pith_last_status();
    pith_release(dst);
    return status;
}

pith_status multinomial_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               int64_t num_samples, bool replacement, pith_generator *generator,
                               pith_device device)
{
    return multinomial_impl(ret, self, num_samples, replacement, generator, NULL, device);
}

pith_status multinomial_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                   int64_t num_samples, bool replacement,
                                   pith_generator *generator, const pith_tensor *out,
                                   pith_device device)
{
    return multinomial_impl(ret, self, num_samples, replacement, generator, (pith_tensor *)out,
                            device);
}

