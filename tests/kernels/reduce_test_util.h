/* reduce_test_util.h — tensor makers and double-precision references shared by
 * the reduction, linear algebra and normalisation tests (reduce_*, linalg_*, norm_* in
 * this folder); the fixture and the other common pieces come from common/pith_test.h.
 * Everything is in its own namespace: all kernel tests link into one executable.
 *
 * The references never use the code under test: they read every element back through
 * pith_item_at (row-major, whatever the strides) and compute with plain loops in double. */
#ifndef PITH_TESTS_KERNELS_REDUCE_TEST_UTIL_H
#define PITH_TESTS_KERNELS_REDUCE_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/pith_test.h"
#include "pith/pith.h"

namespace pith_d_test {

using pith_test::HasError;
using pith_test::kAllDtypes;
using pith_test::Shape;
using pith_test::Sizes;
using pith_test::Tensor;
using pith_test::Values;

constexpr pith_dtype kFloatDtypes[] = {PITH_FLOAT16, PITH_BFLOAT16, PITH_FLOAT32, PITH_FLOAT64};

/* Every test starts with no error and ends with as many live tensors as it started with. */
using ReduceFixture = pith_test::LiveTensorFixture;

inline int64_t Numel(const Shape &s)
{
    int64_t n = 1;
    for (int64_t v : s)
        n *= v;
    return n;
}

/* A contiguous tensor of `values` (row-major); 16-bit floats go through float32. */
inline Tensor FromValues(const Shape &sizes, pith_dtype dtype, const std::vector<double> &values)
{
    if (dtype == PITH_FLOAT16 || dtype == PITH_BFLOAT16) {
        Tensor f = FromValues(sizes, PITH_FLOAT32, values);
        Tensor t(pith_to_dtype(f.get(), dtype));
        EXPECT_NE(t, nullptr) << pith_last_error();
        return t;
    }
    size_t n = values.size(), elem = pith_dtype_size(dtype);
    std::vector<unsigned char> buf(n * elem + 8);
    for (size_t i = 0; i < n; i++) {
        double v = values[i];
        unsigned char *p = buf.data() + i * elem;
        switch (dtype) {
        case PITH_BOOL: *p = v != 0; break;
        case PITH_UINT8: *p = (uint8_t)(int64_t)v; break;
        case PITH_INT8: *(int8_t *)p = (int8_t)(int64_t)v; break;
        case PITH_INT16: { int16_t x = (int16_t)(int64_t)v; memcpy(p, &x, 2); break; }
        case PITH_INT32: { int32_t x = (int32_t)(int64_t)v; memcpy(p, &x, 4); break; }
        case PITH_INT64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
        case PITH_FLOAT32: { float x = (float)v; memcpy(p, &x, 4); break; }
        case PITH_FLOAT64: memcpy(p, &v, 8); break;
        default: break;
        }
    }
    Tensor t(pith_from_data(buf.data(), (int)sizes.size(), sizes.data(), dtype));
    EXPECT_NE(t, nullptr) << pith_last_error();
    return t;
}

inline bool IsFloat(pith_dtype d)
{
    return d == PITH_FLOAT16 || d == PITH_BFLOAT16 || d == PITH_FLOAT32 || d == PITH_FLOAT64;
}

/* Random values that every dtype holds exactly (small integers; floats in [lo, hi), on a
 * grid of `step` when it is not 0, so that ties are common). */
inline std::vector<double> RandomValues(std::mt19937 &rng, int64_t n, pith_dtype dtype,
                                        double lo = -2, double hi = 2, double step = 0)
{
    std::vector<double> v((size_t)n);
    std::uniform_real_distribution<double> real(lo, hi);
    std::uniform_int_distribution<int> small(dtype == PITH_UINT8 ? 0 : -5, 5);
    for (auto &x : v)
        x = dtype == PITH_BOOL ? (double)(rng() & 1) : IsFloat(dtype) ? real(rng) : small(rng);
    if (step > 0 && IsFloat(dtype))
        for (auto &x : v)
            x = std::round(x / step) * step;
    return v;
}

/* How a test tensor is laid out: all four give the same logical values. */
enum class Layout { Contiguous, Permuted, Stepped, Broadcast };
constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Permuted, Layout::Stepped,
                               Layout::Broadcast};

/* A random tensor of `sizes` in `layout`: a permuted view of a contiguous base, a step-2
 * slice of the last dim, or an expanded (stride 0) view of a smaller base. */
inline Tensor MakeTensor(std::mt19937 &rng, const Shape &sizes, pith_dtype dtype,
                         Layout layout, double lo = -2, double hi = 2, double step = 0)
{
    int nd = (int)sizes.size();
    if (nd == 0 || layout == Layout::Contiguous)
        return FromValues(sizes, dtype, RandomValues(rng, Numel(sizes), dtype, lo, hi, step));
    if (layout == Layout::Permuted) {
        std::vector<int> perm(nd);
        for (int i = 0; i < nd; i++)
            perm[i] = nd - 1 - i; /* reversed: a full transpose */
        Shape base(nd);
        for (int i = 0; i < nd; i++)
            base[i] = sizes[perm[i]];
        Tensor b = FromValues(base, dtype, RandomValues(rng, Numel(base), dtype, lo, hi, step));
        Tensor t(pith_permute(b.get(), nd, perm.data())); /* reversal is its own inverse */
        EXPECT_NE(t, nullptr) << pith_last_error();
        return t;
    }
    if (layout == Layout::Stepped) {
        Shape base = sizes;
        base[nd - 1] = 2 * sizes[nd - 1];
        Tensor b = FromValues(base, dtype, RandomValues(rng, Numel(base), dtype, lo, hi, step));
        Tensor t(pith_slice(b.get(), nd - 1, 0, base[nd - 1], 2));
        EXPECT_NE(t, nullptr) << pith_last_error();
        return t;
    }
    Shape base = sizes; /* broadcast: the first non-empty dim is expanded from size 1 */
    for (int i = 0; i < nd; i++)
        if (base[i] > 1) {
            base[i] = 1;
            break;
        }
    Tensor b = FromValues(base, dtype, RandomValues(rng, Numel(base), dtype, lo, hi, step));
    Tensor t(pith_expand(b.get(), nd, sizes.data()));
    EXPECT_NE(t, nullptr) << pith_last_error();
    return t;
}

/* A random shape of 0..max_dims dims, each of 0..max_size (zero sizes only if allowed). */
inline Shape RandomShape(std::mt19937 &rng, int max_dims, int max_size, bool allow_empty)
{
    int nd = (int)(rng() % (unsigned)(max_dims + 1));
    Shape s((size_t)nd);
    for (auto &v : s)
        v = (int64_t)(rng() % (unsigned)(max_size + 1));
    if (!allow_empty)
        for (auto &v : s)
            v = v ? v : 1;
    return s;
}

/* Groups of a reference reduction: for each output element (row-major over the kept
 * dims), the input values in row-major order of the reduced dims. */
inline std::vector<std::vector<double>> Groups(const Shape &sizes, const std::vector<double> &v,
                                               uint32_t mask)
{
    int nd = (int)sizes.size();
    int64_t nout = 1;
    for (int d = 0; d < nd; d++)
        if (!(mask & (1u << d)))
            nout *= sizes[d];
    std::vector<std::vector<double>> groups((size_t)nout);
    std::vector<int64_t> idx((size_t)nd, 0);
    for (size_t i = 0; i < v.size(); i++) {
        int64_t o = 0;
        for (int d = 0; d < nd; d++)
            if (!(mask & (1u << d)))
                o = o * sizes[d] + idx[d];
        groups[(size_t)o].push_back(v[i]);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < sizes[d])
                break;
            idx[d] = 0;
        }
    }
    return groups;
}

/* The result shape of a reduction over `mask`. */
inline Shape ReducedShape(const Shape &sizes, uint32_t mask, bool keepdim)
{
    Shape out;
    for (size_t d = 0; d < sizes.size(); d++) {
        if (!(mask & (1u << d)))
            out.push_back(sizes[d]);
        else if (keepdim)
            out.push_back(1);
    }
    return out;
}

/* Relative precision of a result stored in `dtype`. */
inline double OutputPrecision(pith_dtype d)
{
    switch (d) {
    case PITH_FLOAT16: return 1e-3;
    case PITH_BFLOAT16: return 8e-3;
    case PITH_FLOAT32: return 2e-7;
    case PITH_FLOAT64: return 1e-14;
    default: return 0;
    }
}

/* The value a double rounds to when stored as `dtype` and read back. */
inline double RoundTo(pith_dtype dtype, double v)
{
    Tensor t(pith_scalar_tensor(v, dtype));
    double out = 0;
    EXPECT_EQ(pith_item(t.get(), &out), PITH_OK) << pith_last_error();
    return out;
}

/* Compares every element of `got` with `want` within `tol[i]` (exactly when 0; nan must
 * match nan, inf must match inf). */
inline ::testing::AssertionResult AllClose(const pith_tensor *got, const std::vector<double> &want,
                                           const std::vector<double> &tol)
{
    std::vector<double> g = Values(got);
    if (g.size() != want.size())
        return ::testing::AssertionFailure() << "numel " << g.size() << ", expected " << want.size();
    for (size_t i = 0; i < g.size(); i++) {
        bool ok = std::isnan(want[i])   ? std::isnan(g[i])
                  : std::isinf(want[i]) ? g[i] == want[i]
                                        : std::fabs(g[i] - want[i]) <= tol[i];
        if (!ok)
            return ::testing::AssertionFailure() << "element " << i << ": got " << g[i]
                                                 << ", expected " << want[i] << " (tol "
                                                 << tol[i] << ")";
    }
    return ::testing::AssertionSuccess();
}

/* pith_call_boxed of `op` with the arguments `push` puts on the stack; returns result
 * `index` (a new reference) or NULL with the error set. */
inline Tensor CallBoxed(const char *op, const std::function<void(pith_stack *)> &push,
                        size_t index = 0)
{
    const pith_op *o = pith_op_find(op);
    EXPECT_NE(o, nullptr) << op;
    if (!o)
        return nullptr;
    pith_stack *s = pith_stack_new();
    push(s);
    Tensor out;
    if (pith_call_boxed(o, s) == PITH_OK)
        out.reset(pith_stack_get_tensor(s, index));
    pith_stack_free(s);
    return out;
}

/* A random list of dims for a tensor of `nd` dims (some negative, in random order), and
 * the mask of the dims it names. An empty list (every dim) comes up a quarter of the
 * time; a 0-dim tensor gets [], [0] or [-1]. */
struct DimsCase {
    std::vector<int> dims;
    uint32_t mask = 0;
};

inline DimsCase RandomDims(std::mt19937 &rng, int nd)
{
    DimsCase c;
    if (nd == 0) {
        unsigned r = rng() % 3;
        if (r)
            c.dims.push_back(r == 1 ? 0 : -1);
        return c;
    }
    if (rng() % 4 == 0) {
        c.mask = (1u << nd) - 1;
        return c;
    }
    for (int d = 0; d < nd; d++)
        if (rng() & 1)
            c.dims.push_back(d);
    if (c.dims.empty())
        c.dims.push_back((int)(rng() % (unsigned)nd));
    std::shuffle(c.dims.begin(), c.dims.end(), rng);
    for (int &d : c.dims) {
        c.mask |= 1u << d;
        if (rng() & 1)
            d -= nd;
    }
    return c;
}

/* Sum of |x| over a group: the scale of a sum's rounding error. */
inline double AbsSum(const std::vector<double> &g)
{
    double s = 0;
    for (double x : g)
        s += std::fabs(x);
    return s;
}

// The bound on a float sum's error, relative to the sum of |x| of what it adds: float32
// sums in blocks of float32 partials (Note [Sums of float32 arrays], kernels/vecmath.h), the
// others with a few roundings of their accumulator.
inline double SumErrorBound(pith_dtype d)
{
    return d == PITH_FLOAT64 ? 4e-14 : d == PITH_FLOAT32 ? 37 * 0x1p-24 : 4e-6;
}

} // namespace pith_d_test

#endif /* PITH_TESTS_KERNELS_REDUCE_TEST_UTIL_H */
