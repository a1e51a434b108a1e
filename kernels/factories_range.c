/* factories_range.c — arange and linspace: 1-D tensors of evenly spaced values.
 *
 * Sizes, checks and the arithmetic of each element follow PyTorch's RangeFactories.cpp and
 * its CPU kernels, so that the values (not only the shapes) agree: arange computes
 * start + i * step in the accumulate type (int64 for integer dtypes, double for float32 and
 * float64, float for float16 and bfloat16); linspace fills from both ends. */
#include <math.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/factories.h"

/* What an arange or linspace call makes, after validation. */
typedef struct {
    pith_dtype dtype;
    pith_device device;
    int64_t size;
    int64_t istart, istep, iend; /* integer dtypes */
    double dstart, dstep, dend;  /* floating dtypes */
    int64_t steps;               /* linspace */
} range_plan;

/* Writes element i of the range into `out`. */
typedef void (*range_element_fn)(const range_plan *p, int64_t i, char *out);

static void range_fill(const range_plan *p, pith_tensor *t, range_element_fn element)
{
    char *data = tensor_data(t);
    if (!data)
        return;
    size_t itemsize = pith_dtype_size(p->dtype);
    int64_t n = p->size;
    int threads = parallel_threads_for(n);
    PITH_PARALLEL_FOR(i, n, threads,
        element(p, i, data + (size_t)i * itemsize););
}

/* A Scalar as int64, as Scalar::to<int64_t> converts it (checked). */
static pith_status scalar_to_int64(const char *op, pith_scalar s, int64_t *out)
{
    unsigned char bits[8];
    if (scalar_encode(op, s, PITH_INT64, bits) != PITH_OK)
        return pith_last_status();
    *out = dtype_load_int64(PITH_INT64, bits);
    return PITH_OK;
}

static pith_status range_check_kinds(const char *op, pith_scalar a, pith_scalar b, pith_scalar c)
{
    if (a.kind == PITH_SCALAR_NONE || b.kind == PITH_SCALAR_NONE || c.kind == PITH_SCALAR_NONE)
        return pith_set_error(PITH_ERR_TYPE, "%s: expected a number, got None", op);
    return PITH_OK;
}

/* ---- arange ---- */

static void arange_element(const range_plan *p, int64_t i, char *out)
{
    if (!dtype_is_floating(p->dtype)) /* wraps, like PyTorch's int64 accumulate */
        element_store_int64(p->dtype, out,
                            (int64_t)((uint64_t)p->istart + (uint64_t)p->istep * (uint64_t)i));
    else if (p->dtype == PITH_FLOAT16 || p->dtype == PITH_BFLOAT16)
        element_store_double(p->dtype, out, (float)p->dstart + (float)p->dstep * (float)i);
    else
        element_store_double(p->dtype, out, p->dstart + p->dstep * (double)i);
}

static pith_status arange_plan(range_plan *p, pith_scalar start, pith_scalar end,
                               pith_scalar step, pith_opt_dtype dtype, pith_opt_device device)
{
    if (range_check_kinds("arange", start, end, step) != PITH_OK)
        return pith_last_status();
    /* bool counts as integral (PyTorch's arange) */
    bool integral_args = start.kind != PITH_SCALAR_DOUBLE && end.kind != PITH_SCALAR_DOUBLE &&
                         step.kind != PITH_SCALAR_DOUBLE;
    if (factory_dtype("arange", dtype, integral_args ? PITH_INT64 : pith_get_default_dtype(), &p->dtype) !=
            PITH_OK ||
        factory_device("arange", device, &p->device) != PITH_OK)
        return pith_last_status();
    if (p->dtype == PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE, "arange: not implemented for 'bool'");
    double size_d;
    bool positive, negative, ordered_up, ordered_down;
    if (!dtype_is_floating(p->dtype)) {
        int64_t s = 0, e = 0, st = 0;
        if (scalar_to_int64("arange", start, &s) != PITH_OK ||
            scalar_to_int64("arange", end, &e) != PITH_OK ||
            scalar_to_int64("arange", step, &st) != PITH_OK)
            return pith_last_status();
        p->istart = s;
        p->istep = st;
        positive = st > 0;
        negative = st < 0;
        ordered_up = e >= s;
        ordered_down = e <= s;
        size_d = st ? ceil((double)((__int128)e - s) / (double)st) : 0;
    } else {
        double s = scalar_to_double(start), e = scalar_to_double(end), st = scalar_to_double(step);
        size_d = ceil((e - s) / st);
        if (p->dtype == PITH_FLOAT16 || p->dtype == PITH_BFLOAT16) { /* accumulate in float */
            s = (float)s;
            e = (float)e;
            st = (float)st;
        }
        p->dstart = s;
        p->dstep = st;
        positive = st > 0;
        negative = st < 0;
        if (positive || negative) {
            if (!isfinite(s) || !isfinite(e))
                return pith_set_error(PITH_ERR_VALUE, "arange: unsupported range: %g -> %g", s, e);
        }
        ordered_up = e >= s;
        ordered_down = e <= s;
    }
    if (!positive && !negative)
        return pith_set_error(PITH_ERR_VALUE, "arange: step must be nonzero");
    if (!((positive && ordered_up) || (negative && ordered_down)))
        return pith_set_error(PITH_ERR_VALUE,
                              "arange: upper bound and larger bound inconsistent with step sign");
    if (!(size_d >= 0 && size_d < 0x1p63))
        return pith_set_error(PITH_ERR_VALUE, "arange: invalid size, possible overflow?");
    p->size = (int64_t)size_d;
    return PITH_OK;
}

static pith_status arange_make(pith_value *ret, pith_scalar start, pith_scalar end,
                               pith_scalar step, pith_opt_dtype dtype, pith_opt_device device,
                               bool force_meta)
{
    range_plan p;
    if (arange_plan(&p, start, end, step, dtype, device) != PITH_OK)
        return pith_last_status();
    pith_tensor *t = tensor_new(1, &p.size, p.dtype, force_meta ? PITH_META : p.device);
    if (!t)
        return pith_last_status();
    range_fill(&p, t, arange_element);
    return ret_tensor(ret, t);
}

pith_status arange_kernel(pith_keyset ks, pith_value *ret, pith_scalar start, pith_scalar end,
                          pith_scalar step, pith_opt_dtype dtype, pith_opt_device device,
                          pith_device kernel_device)
{
    return arange_make(ret, start, end, step, dtype, device, kernel_device == PITH_META);
}

/* ---- linspace ---- */

/* Note [linspace fills from both ends]
 * PyTorch's CPU kernel computes step = (end - start) / (steps - 1), then element i as
 * start + i * step in the first half (i < steps / 2) and end - (steps - 1 - i) * step in
 * the second, so both endpoints come out exact. The arithmetic is in the dtype itself
 * (float for float32), and in double for integer dtypes, truncated when stored. We do the
 * same; float16 and bfloat16 compute in float and round once (PyTorch rounds after every
 * operation there). PyTorch's vectorized path computes whole SIMD runs as base + j * step,
 * so for long outputs its values may differ from these in the last bit; short ones (below
 * two SIMD vectors) take its scalar path and agree exactly. */
static void linspace_element(const range_plan *p, int64_t i, char *out)
{
    int64_t half = p->steps / 2, back = p->steps - 1 - i;
    if (!dtype_is_floating(p->dtype)) {
        double v = i < half ? (double)p->istart + p->dstep * (double)i
                            : (double)p->iend - p->dstep * (double)back;
        element_store_int64(p->dtype, out, (int64_t)v);
    } else if (p->dtype == PITH_FLOAT64) {
        element_store_double(p->dtype, out,
                             i < half ? p->dstart + p->dstep * (double)i
                                      : p->dend - p->dstep * (double)back);
    } else {
        float s = (float)p->dstart, e = (float)p->dend, step = (float)p->dstep;
        element_store_double(p->dtype, out, i < half ? s + step * (float)i : e - step * (float)back);
    }
}

/* The step of linspace in the type the kernel computes in (see the Note above). */
static double linspace_step(const range_plan *p)
{
    if (!dtype_is_floating(p->dtype))
        return ((double)p->iend - (double)p->istart) / (double)(p->steps - 1);
    if (p->dtype == PITH_FLOAT64)
        return (p->dend - p->dstart) / (double)(p->steps - 1);
    return ((float)p->dend - (float)p->dstart) / (float)(p->steps - 1);
}

/* start/end converted to the dtype first, as Scalar::to<scalar_t> does. */
static pith_status linspace_endpoint(pith_scalar s, pith_dtype dtype, int64_t *i, double *d)
{
    unsigned char bits[8];
    if (scalar_encode("linspace", s, dtype, bits) != PITH_OK)
        return pith_last_status();
    if (dtype_is_floating(dtype))
        *d = dtype_load_double(dtype, bits);
    else
        *i = dtype_load_int64(dtype, bits);
    return PITH_OK;
}

static pith_status linspace_make(pith_value *ret, pith_scalar start, pith_scalar end,
                                 int64_t steps, pith_opt_dtype dtype, pith_opt_device device,
                                 bool force_meta)
{
    range_plan p = {0};
    if (range_check_kinds("linspace", start, end, end) != PITH_OK)
        return pith_last_status();
    if (steps < 0)
        return pith_set_error(PITH_ERR_VALUE, "linspace: number of steps must be non-negative");
    if (factory_dtype("linspace", dtype, pith_get_default_dtype(), &p.dtype) != PITH_OK ||
        factory_device("linspace", device, &p.device) != PITH_OK)
        return pith_last_status();
    if (p.dtype == PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE, "linspace: not implemented for 'bool'");
    if (linspace_endpoint(start, p.dtype, &p.istart, &p.dstart) != PITH_OK ||
        linspace_endpoint(end, p.dtype, &p.iend, &p.dend) != PITH_OK)
        return pith_last_status();
    p.size = p.steps = steps;
    pith_tensor *t = tensor_new(1, &p.size, p.dtype, force_meta ? PITH_META : p.device);
    if (!t)
        return pith_last_status();
    if (steps == 1) {
        unsigned char bits[8];
        scalar_encode("linspace", start, p.dtype, bits); /* checked above */
        bytes_fill(tensor_data(t), 1, bits, pith_dtype_size(p.dtype));
    } else if (steps > 1) {
        p.dstep = linspace_step(&p);
        range_fill(&p, t, linspace_element);
    }
    return ret_tensor(ret, t);
}

pith_status linspace_kernel(pith_keyset ks, pith_value *ret, pith_scalar start, pith_scalar end,
                            int64_t steps, pith_opt_dtype dtype, pith_opt_device device,
                            pith_device kernel_device)
{
    return linspace_make(ret, start, end, steps, dtype, device, kernel_device == PITH_META);
}

/* arange(end) is arange(0, end, 1): the dtype follows end (int64 for an int). */
pith_status arange_end_composite(pith_keyset ks, pith_value *ret, pith_scalar end,
                                 pith_opt_dtype dtype, pith_opt_device device)
{
    (void)ks;
    return pith_call_arange(ret, scalar_from_int(0), end, scalar_from_int(1), dtype, device);
}
