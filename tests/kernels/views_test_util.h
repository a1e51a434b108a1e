/* views_test_util.h — fixture and helpers shared by the tests of the views, combining,
 * indexing, factory and random kernels (views_*, combine_*, indexing_*, factories_*,
 * random_* in this folder). Everything is in its own namespace: all kernel tests link
 * into one executable. */
#ifndef PITH_TESTS_KERNELS_VIEWS_TEST_UTIL_H
#define PITH_TESTS_KERNELS_VIEWS_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "pith/pith.h"

namespace pith_e_test {

struct TensorDeleter {
    void operator()(pith_tensor *t) const { pith_release(t); }
};
using Tensor = std::unique_ptr<pith_tensor, TensorDeleter>;
using Shape = std::vector<int64_t>;

/* Every test starts with no error and ends with as many live tensors as it started with. */
class KernelFixture : public ::testing::Test {
protected:
    size_t live_before_ = 0;
    void SetUp() override
    {
        pith_clear_error();
        live_before_ = pith_live_tensors();
    }
    void TearDown() override { EXPECT_EQ(pith_live_tensors(), live_before_); }
};

/* Checks this thread's error status and a fragment of its message, then clears it. */
inline ::testing::AssertionResult HasError(pith_status status, const std::string &fragment)
{
    pith_status got = pith_last_status();
    std::string msg = pith_last_error();
    pith_clear_error();
    if (got != status)
        return ::testing::AssertionFailure() << "status " << pith_status_name(got) << " (\""
                                             << msg << "\"), expected "
                                             << pith_status_name(status);
    if (msg.find(fragment) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << fragment
                                             << "\"";
    return ::testing::AssertionSuccess();
}

/* A tensor of `sizes` holding `values` (row-major), written through a typed buffer. */
inline Tensor FromValues(const Shape &sizes, pith_dtype dtype, const std::vector<double> &values)
{
    size_t n = values.size();
    std::vector<unsigned char> buf(n * 8 + 8);
    for (size_t i = 0; i < n; i++) {
        double v = values[i];
        unsigned char *p = buf.data() + i * pith_dtype_size(dtype);
        switch (dtype) {
        case PITH_BOOL: *p = v != 0; break;
        case PITH_UINT8: *p = (uint8_t)(int64_t)v; break;
        case PITH_INT8: *(int8_t *)p = (int8_t)(int64_t)v; break;
        case PITH_INT16: { int16_t x = (int16_t)(int64_t)v; memcpy(p, &x, 2); break; }
        case PITH_INT32: { int32_t x = (int32_t)(int64_t)v; memcpy(p, &x, 4); break; }
        case PITH_INT64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
        case PITH_FLOAT32: { float x = (float)v; memcpy(p, &x, 4); break; }
        case PITH_FLOAT64: memcpy(p, &v, 8); break;
        default: ADD_FAILURE() << "FromValues: unsupported dtype"; return nullptr;
        }
    }
    Tensor t(pith_from_data(buf.data(), (int)sizes.size(), sizes.data(), dtype));
    EXPECT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_numel(t.get()), (int64_t)n);
    return t;
}

/* 0, 1, ..., numel - 1 in the given shape (float32 unless told). */
inline Tensor Iota(const Shape &sizes, pith_dtype dtype = PITH_FLOAT32)
{
    int64_t n = 1;
    for (int64_t s : sizes)
        n *= s;
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)i;
    return FromValues(sizes, dtype, v);
}

inline std::vector<double> Values(const pith_tensor *t)
{
    std::vector<double> out;
    int64_t n = pith_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = 0;
        EXPECT_EQ(pith_item_at(t, i, &v), PITH_OK) << pith_last_error();
        out.push_back(v);
    }
    return out;
}

inline Shape Sizes(const pith_tensor *t)
{
    int64_t buf[PITH_MAX_DIMS];
    int n = pith_sizes(t, buf);
    return n < 0 ? Shape{-1} : Shape(buf, buf + n);
}

inline Shape Strides(const pith_tensor *t)
{
    int64_t buf[PITH_MAX_DIMS];
    int n = pith_strides(t, buf);
    return n < 0 ? Shape{-1} : Shape(buf, buf + n);
}

/* Element (flat row-major index) of a tensor, as a double. */
inline double At(const pith_tensor *t, int64_t i)
{
    double v = 0;
    EXPECT_EQ(pith_item_at(t, i, &v), PITH_OK) << pith_last_error();
    return v;
}

/* Frees a list result of split/chunk/unbind when it goes out of scope. */
struct TensorList {
    pith_tensor **data = nullptr;
    size_t n = 0;
    ~TensorList() { pith_tensor_list_free(data, n); }
    pith_tensor *operator[](size_t i) const { return data[i]; }
};

/* A view shares its base's storage and version counter: an in-place write through the
 * view (masked_fill_ with an all-false mask, which changes no value) bumps the base's. */
inline void ExpectSharesStorageAndVersion(pith_tensor *base, pith_tensor *view)
{
    EXPECT_TRUE(pith_shares_storage(base, view));
    int64_t before = pith_version_counter(base);
    EXPECT_EQ(pith_version_counter(view), before);
    Tensor no(pith_zeros(0, nullptr, PITH_BOOL));
    ASSERT_EQ(pith_masked_fill_(view, no.get(), 0), PITH_OK) << pith_last_error();
    EXPECT_EQ(pith_version_counter(base), before + 1);
    EXPECT_EQ(pith_version_counter(view), pith_version_counter(base));
}

} // namespace pith_e_test

#endif /* PITH_TESTS_KERNELS_VIEWS_TEST_UTIL_H */
