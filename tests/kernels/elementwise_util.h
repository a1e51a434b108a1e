// elementwise_util.h — helpers for the elementwise and promotion tests: owning tensor
// handles and a leak-checking fixture (from common/pith_test.h), tensors built from double
// values in any dtype and layout (with an encoder written here, independent of the
// library's conversions), and tolerant comparison against references computed in double.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/pith_test.h"
#include "pith/interpreter.h"
#include "pith/pith.h"

using pith_test::kAllDtypes;
using pith_test::Tensor;

// Every test starts with no error and ends with as many live tensors as it began with.
using ElementwiseTest = pith_test::LiveTensorFixture;

inline bool is_float(pith_dtype d) { return d >= PITH_FLOAT16; }
inline bool is_int(pith_dtype d) { return d >= PITH_UINT8 && d <= PITH_INT64; }

// Wraps an exact integer to the width of an integer dtype (two's complement).
inline int64_t wrap_to(pith_dtype d, uint64_t v)
{
    switch (d) {
    case PITH_BOOL: return v != 0;
    case PITH_UINT8: return (uint8_t)v;
    case PITH_INT8: return (int8_t)(uint8_t)v;
    case PITH_INT16: return (int16_t)(uint16_t)v;
    case PITH_INT32: return (int32_t)(uint32_t)v;
    default: return (int64_t)v;
    }
}

// IEEE half bits of a value (round to nearest even; enough for test inputs).
inline uint16_t test_half_bits(double v)
{
    uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    if (std::isnan(v)) return 0x7e00;
    v = std::fabs(v);
    if (std::isinf(v) || v >= 65520.0) return sign | 0x7c00;
    if (v < std::ldexp(1.0, -14)) { // subnormal: units of 2^-24
        return sign | (uint16_t)std::nearbyint(v / std::ldexp(1.0, -24));
    }
    int e;
    double m = std::frexp(v, &e); // v = m * 2^e, m in [0.5, 1)
    double frac = std::nearbyint((m * 2 - 1) * 1024);
    int biased = e - 1 + 15;
    if (frac == 1024) {
        frac = 0;
        biased++;
    }
    return sign | (uint16_t)(biased << 10) | (uint16_t)frac;
}

inline uint16_t test_bfloat16_bits(double v)
{
    float f = (float)v;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::isnan(f)) return 0x7fc0;
    bits += 0x7fff + ((bits >> 16) & 1);
    return (uint16_t)(bits >> 16);
}

// Writes `v` as one element of dtype `d` at `p`.
inline void test_store(pith_dtype d, void *p, double v)
{
    switch (d) {
    case PITH_BOOL: *(uint8_t *)p = v != 0; break;
    case PITH_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case PITH_INT8: *(int8_t *)p = (int8_t)(int64_t)v; break;
    case PITH_INT16: *(int16_t *)p = (int16_t)(int64_t)v; break;
    case PITH_INT32: *(int32_t *)p = (int32_t)(int64_t)v; break;
    case PITH_INT64: *(int64_t *)p = (int64_t)v; break;
    case PITH_FLOAT16: *(uint16_t *)p = test_half_bits(v); break;
    case PITH_BFLOAT16: *(uint16_t *)p = test_bfloat16_bits(v); break;
    case PITH_FLOAT32: *(float *)p = (float)v; break;
    case PITH_FLOAT64: *(double *)p = v; break;
    }
}

// The value a double takes when stored in dtype `d` (for building references).
inline double test_round(pith_dtype d, double v)
{
    unsigned char buf[8];
    test_store(d, buf, v);
    double out = 0;
    switch (d) {
    case PITH_BOOL: out = buf[0]; break;
    case PITH_UINT8: out = *(uint8_t *)buf; break;
    case PITH_INT8: out = *(int8_t *)buf; break;
    case PITH_INT16: out = *(int16_t *)buf; break;
    case PITH_INT32: out = *(int32_t *)buf; break;
    case PITH_INT64: out = (double)*(int64_t *)buf; break;
    case PITH_FLOAT16: {
        uint16_t h = *(uint16_t *)buf;
        int e = (h >> 10) & 0x1f, f = h & 0x3ff;
        double mag = e == 0    ? std::ldexp(f, -24)
                     : e == 31 ? (f ? NAN : INFINITY)
                               : std::ldexp(1024 + f, e - 25);
        out = (h & 0x8000) ? -mag : mag;
        break;
    }
    case PITH_BFLOAT16: {
        uint32_t bits = (uint32_t)*(uint16_t *)buf << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        out = f;
        break;
    }
    case PITH_FLOAT32: out = *(float *)buf; break;
    case PITH_FLOAT64: out = *(double *)buf; break;
    }
    return out;
}

inline Tensor make(const std::vector<int64_t> &sizes, pith_dtype d, const std::vector<double> &values)
{
    size_t esize = pith_dtype_size(d);
    std::vector<unsigned char> bytes(values.size() * esize + 8);
    for (size_t i = 0; i < values.size(); i++) test_store(d, bytes.data() + i * esize, values[i]);
    return Tensor(pith_from_data(bytes.data(), (int)sizes.size(), sizes.data(), d));
}

inline Tensor make_scalar(pith_dtype d, double v) { return make({}, d, {v}); }

// A Python number: a 0-dim tensor marked as a wrapped number.
inline Tensor make_wrapped(pith_dtype d, double v)
{
    Tensor t = make({}, d, {v});
    pith_tensor_set_wrapped_number(t.get(), true);
    return t;
}

inline void free_blob(void *data, void *ctx)
{
    (void)ctx;
    std::free(data);
}

// A tensor over its own buffer with arbitrary (non-negative) strides; `values` are in
// row-major logical order. Unused bytes of the buffer hold garbage (0x5a).
inline Tensor make_strided(const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides,
                           pith_dtype d, const std::vector<double> &values)
{
    size_t esize = pith_dtype_size(d);
    int64_t extent = 1;
    for (size_t k = 0; k < sizes.size(); k++)
        if (sizes[k] > 0) extent += (sizes[k] - 1) * strides[k];
    void *buf = std::aligned_alloc(64, ((size_t)extent * esize + 63) / 64 * 64);
    std::memset(buf, 0x5a, (size_t)extent * esize);
    for (size_t i = 0; i < values.size(); i++) {
        int64_t rest = (int64_t)i, off = 0;
        for (int k = (int)sizes.size() - 1; k >= 0; k--) {
            off += (rest % sizes[k]) * strides[k];
            rest /= sizes[k];
        }
        test_store(d, (char *)buf + off * esize, values[i]);
    }
    pith_tensor *t = pith_from_blob(buf, (int)sizes.size(), sizes.data(), strides.data(), d,
                                    free_blob, nullptr);
    if (!t) std::free(buf);
    return Tensor(t);
}

inline Tensor make_meta(const std::vector<int64_t> &sizes, pith_dtype d)
{
    std::vector<int64_t> strides(sizes.size());
    int64_t s = 1;
    for (int k = (int)sizes.size() - 1; k >= 0; k--) {
        strides[k] = s;
        s *= sizes[k] ? sizes[k] : 1;
    }
    return Tensor(pith_empty_strided((int)sizes.size(), sizes.data(), strides.data(), d, PITH_META));
}

inline std::vector<double> values_of(const pith_tensor *t)
{
    std::vector<double> out;
    int64_t n = pith_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = 0;
        EXPECT_EQ(pith_item_at(t, i, &v), PITH_OK);
        out.push_back(v);
    }
    return out;
}

inline std::vector<int64_t> sizes_of(const pith_tensor *t)
{
    int64_t buf[PITH_MAX_DIMS];
    int n = pith_sizes(t, buf);
    return std::vector<int64_t>(buf, buf + (n < 0 ? 0 : n));
}

// Whether `got` (read from a tensor of dtype d) matches the double reference.
inline bool close_to(pith_dtype d, double got, double want)
{
    if (std::isnan(want)) return std::isnan(got);
    if (std::isinf(want)) return got == want;
    double atol = 0, rtol = 0;
    switch (d) {
    case PITH_FLOAT16: atol = rtol = 2e-3; break;
    case PITH_BFLOAT16: atol = rtol = 1.6e-2; break;
    case PITH_FLOAT32: atol = rtol = 2e-6; break;
    case PITH_FLOAT64: atol = rtol = 1e-12; break;
    default: return got == want;
    }
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

#define EXPECT_VALUES(dtype, got_tensor, want)                                              \
    do {                                                                                    \
        std::vector<double> got_ = values_of(got_tensor);                                   \
        std::vector<double> want_ = (want);                                                 \
        ASSERT_EQ(got_.size(), want_.size());                                               \
        for (size_t i_ = 0; i_ < got_.size(); i_++)                                         \
            EXPECT_TRUE(close_to((dtype), got_[i_], want_[i_]))                            \
                << "element " << i_ << ": got " << got_[i_] << ", want " << want_[i_];      \
    } while (0)

#define EXPECT_ERROR(expr, status, fragment)                                                \
    do {                                                                                    \
        pith_clear_error();                                                                 \
        (void)(expr);                                                                       \
        EXPECT_EQ(pith_last_status(), (status)) << pith_last_error();                       \
        EXPECT_NE(std::string(pith_last_error()).find(fragment), std::string::npos)         \
            << "message: " << pith_last_error();                                            \
    } while (0)

// One argument of a boxed call.
struct BoxedArg {
    enum Kind { TENSOR, INT, DOUBLE, BOOL, STRING, NONE, DTYPE } kind;
    const pith_tensor *t = nullptr;
    int64_t i = 0;
    double d = 0;
    const char *s = nullptr;
};
inline BoxedArg arg_tensor(const pith_tensor *t) { BoxedArg a{BoxedArg::TENSOR}; a.t = t; return a; }
inline BoxedArg arg_int(int64_t i) { BoxedArg a{BoxedArg::INT}; a.i = i; return a; }
inline BoxedArg arg_double(double d) { BoxedArg a{BoxedArg::DOUBLE}; a.d = d; return a; }
inline BoxedArg arg_bool(bool b) { BoxedArg a{BoxedArg::BOOL}; a.i = b; return a; }
inline BoxedArg arg_string(const char *s) { BoxedArg a{BoxedArg::STRING}; a.s = s; return a; }
inline BoxedArg arg_none() { return BoxedArg{BoxedArg::NONE}; }
inline BoxedArg arg_dtype(pith_dtype d) { BoxedArg a{BoxedArg::DTYPE}; a.i = d; return a; }

// Boxed call of an op by name; returns its first result (null with the error set).
inline Tensor call_boxed(const char *name, const std::vector<BoxedArg> &args)
{
    const pith_op *op = pith_op_find(name);
    EXPECT_NE(op, nullptr) << name;
    if (!op) return nullptr;
    pith_stack *s = pith_stack_new();
    for (const BoxedArg &a : args) {
        switch (a.kind) {
        case BoxedArg::TENSOR: pith_stack_push_tensor(s, a.t); break;
        case BoxedArg::INT: pith_stack_push_int(s, a.i); break;
        case BoxedArg::DOUBLE: pith_stack_push_double(s, a.d); break;
        case BoxedArg::BOOL: pith_stack_push_bool(s, a.i != 0); break;
        case BoxedArg::STRING: pith_stack_push_string(s, a.s); break;
        case BoxedArg::NONE: pith_stack_push_none(s); break;
        case BoxedArg::DTYPE: pith_stack_push_dtype(s, (pith_dtype)a.i); break;
        }
    }
    Tensor out;
    if (pith_call_boxed(op, s) == PITH_OK) out.reset(pith_stack_get_tensor(s, 0));
    pith_stack_free(s);
    return out;
}
