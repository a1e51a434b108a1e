// eager_oracle.h — what the compiled-graph tests share: owning handles for tensors, stacks,
// graphs, compiled graphs and dumps; tensors of seeded random values in any layout; and the
// bitwise comparison of a compiled result with the eager one. Public C API only.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/pith_test.h"
#include "pith/pith.h"

namespace eager_oracle {

struct TensorRelease {
    void operator()(pith_tensor *t) const { pith_release(t); }
};
using Tensor = std::unique_ptr<pith_tensor, TensorRelease>;

struct StackFree {
    void operator()(pith_stack *s) const { pith_stack_free(s); }
};
using Stack = std::unique_ptr<pith_stack, StackFree>;

struct GraphFree {
    void operator()(pith_graph *g) const { pith_graph_free(g); }
};
using Graph = std::unique_ptr<pith_graph, GraphFree>;

struct CompiledFree {
    void operator()(pith_compiled *c) const { pith_compiled_free(c); }
};
using Compiled = std::unique_ptr<pith_compiled, CompiledFree>;

// The text of a dump, or why there is none.
inline std::string TakeDump(char *text)
{
    if (!text)
        return std::string("(no dump: ") + pith_last_error() + ")";
    std::string out(text);
    pith_string_free(text);
    return out;
}
inline std::string GraphDump(const pith_graph *g) { return TakeDump(pith_graph_dump(g)); }
inline std::string CompiledDump(const pith_compiled *c)
{
    return TakeDump(pith_compiled_dump(c));
}

inline std::vector<int64_t> SizesOf(const pith_tensor *t)
{
    int64_t buf[PITH_MAX_DIMS];
    int n = pith_sizes(t, buf);
    return n < 0 ? std::vector<int64_t>{-1} : std::vector<int64_t>(buf, buf + n);
}
inline std::vector<int64_t> StridesOf(const pith_tensor *t)
{
    int64_t buf[PITH_MAX_DIMS];
    int n = pith_strides(t, buf);
    return n < 0 ? std::vector<int64_t>{-1} : std::vector<int64_t>(buf, buf + n);
}
inline std::string ShapeText(const std::vector<int64_t> &v)
{
    std::ostringstream out;
    out << "(";
    for (size_t i = 0; i < v.size(); i++)
        out << (i ? ", " : "") << v[i];
    out << (v.size() == 1 ? ",)" : ")");
    return out.str();
}
inline std::string Describe(const pith_tensor *t)
{
    return std::string(pith_dtype_name(pith_tensor_dtype(t))) + ShapeText(SizesOf(t)) +
           " strides " + ShapeText(StridesOf(t));
}

// "" when `got` has the dtype, the sizes and the bytes (in row-major order) of `expected`;
// else what differs. NaNs compare by their bits: nothing may be reassociated.
inline std::string BitwiseMismatch(const pith_tensor *expected, const pith_tensor *got)
{
    if (!got)
        return "no tensor";
    if (pith_tensor_device(got) != PITH_CPU)
        return "a result on " + std::string(pith_device_name(pith_tensor_device(got)));
    if (pith_tensor_dtype(expected) != pith_tensor_dtype(got) ||
        SizesOf(expected) != SizesOf(got))
        return "expected " + Describe(expected) + ", got " + Describe(got);
    Tensor a(pith_contiguous(expected)), b(pith_contiguous(got));
    if (!a || !b)
        return std::string("pith_contiguous failed: ") + pith_last_error();
    size_t item = pith_dtype_size(pith_tensor_dtype(expected));
    int64_t n = pith_numel(expected);
    const char *pa = (const char *)pith_data_ptr(a.get());
    const char *pb = (const char *)pith_data_ptr(b.get());
    for (int64_t i = 0; i < n; i++) {
        if (std::memcmp(pa + (size_t)i * item, pb + (size_t)i * item, item) != 0) {
            double x = 0, y = 0;
            pith_item_at(a.get(), i, &x);
            pith_item_at(b.get(), i, &y);
            std::ostringstream out;
            out.precision(17);
            out << Describe(expected) << ": element " << i << " is " << x << ", got " << y;
            return out.str();
        }
    }
    return "";
}

// A seeded source of choices.
class Rng {
public:
    explicit Rng(uint64_t seed) : engine_(seed) {}
    // Uniform in [lo, hi] (lo when hi < lo).
    int64_t Range(int64_t lo, int64_t hi)
    {
        if (hi <= lo)
            return lo;
        return lo + (int64_t)(engine_() % (uint64_t)(hi - lo + 1));
    }
    double Uniform() { return (double)(engine_() >> 11) * 0x1.0p-53; }
    bool Chance(double p) { return Uniform() < p; }
    template <class T> const T &Pick(const std::vector<T> &v)
    {
        return v[(size_t)Range(0, (int64_t)v.size() - 1)];
    }

private:
    std::mt19937_64 engine_;
};

// One element of dtype `d` at `p`: for floating dtypes mostly exact multiples of 1/8, some
// arbitrary doubles, and now and then a zero of either sign, an infinity, a NaN or a huge
// or tiny value.
inline void StoreRandom(pith_dtype d, char *p, Rng &rng)
{
    switch (d) {
    case PITH_BOOL: *(uint8_t *)p = (uint8_t)rng.Range(0, 1); return;
    case PITH_INT64: *(int64_t *)p = rng.Range(-6, 6); return;
    case PITH_INT32: *(int32_t *)p = (int32_t)rng.Range(-6, 6); return;
    case PITH_FLOAT32:
    case PITH_FLOAT64: {
        static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e30, -1e-30};
        double v;
        double r = rng.Uniform();
        if (r < 0.85)
            v = (double)rng.Range(-40, 40) / 8.0;
        else if (r < 0.95)
            v = 6.0 * rng.Uniform() - 3.0;
        else
            v = special[rng.Range(0, 6)];
        if (d == PITH_FLOAT32)
            *(float *)p = (float)v;
        else
            *(double *)p = v;
        return;
    }
    default: std::memset(p, 0, pith_dtype_size(d)); return;
    }
}

// Fills the whole storage of `t` (gaps between strided elements too) with random values.
inline void FillRandom(pith_tensor *t, Rng &rng)
{
    pith_dtype d = pith_tensor_dtype(t);
    size_t item = pith_dtype_size(d);
    int64_t nbytes = pith_storage_nbytes(t);
    if (nbytes <= 0)
        return;
    char *base = (char *)pith_data_ptr(t) - pith_storage_offset(t) * (int64_t)item;
    for (int64_t i = 0; i < nbytes / (int64_t)item; i++)
        StoreRandom(d, base + i * (int64_t)item, rng);
}

// A tensor of t's sizes, strides and dtype, whose storage is a copy of t's.
inline Tensor CopyWithLayout(const pith_tensor *t)
{
    std::vector<int64_t> sizes = SizesOf(t), strides = StridesOf(t);
    Tensor out(pith_empty_strided((int)sizes.size(), sizes.data(), strides.data(),
                                  pith_tensor_dtype(t), PITH_CPU));
    if (!out)
        return out;
    int64_t nbytes = pith_storage_nbytes(t);
    if (nbytes > 0 && pith_storage_offset(t) == 0 && pith_storage_nbytes(out.get()) == nbytes)
        std::memcpy(pith_data_ptr(out.get()), pith_data_ptr(t), (size_t)nbytes);
    else if (pith_numel(t) > 0 && pith_copy_(out.get(), t) != PITH_OK)
        return Tensor();
    return out;
}

// A contiguous float32 tensor of values uniform in [-scale, scale], from `rng`.
inline Tensor UniformFloat32(const std::vector<int64_t> &sizes, double scale, Rng &rng)
{
    Tensor t(pith_empty((int)sizes.size(), sizes.data(), PITH_FLOAT32));
    if (!t)
        return t;
    float *data = (float *)pith_data_ptr(t.get());
    for (int64_t i = 0; i < pith_numel(t.get()); i++)
        data[i] = (float)(scale * (2.0 * rng.Uniform() - 1.0));
    return t;
}

// Every test starts with no error and ends with as many live tensors as it began with.
using LiveTensorTest = pith_test::LiveTensorFixture;

}  // namespace eager_oracle
