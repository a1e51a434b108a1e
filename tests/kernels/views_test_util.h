/* views_test_util.h — helpers shared by the tests of the views, combining, indexing,
 * factory and random kernels (views_*, combine_*, indexing_*, factories_*, random_* in
 * this folder); the fixture and the other common pieces come from common/pith_test.h.
 * Everything is in its own namespace: all kernel tests link into one executable. */
#ifndef PITH_TESTS_KERNELS_VIEWS_TEST_UTIL_H
#define PITH_TESTS_KERNELS_VIEWS_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/pith_test.h"
#include "pith/pith.h"

namespace pith_e_test {

using pith_test::HasError;
using pith_test::Shape;
using pith_test::Sizes;
using pith_test::Tensor;
using pith_test::Values;

/* Every test starts with no error and ends with as many live tensors as it started with. */
using KernelFixture = pith_test::LiveTensorFixture;

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

/* A meta tensor of `sizes` (no data). */
inline Tensor MetaTensor(const Shape &sizes, pith_dtype dtype = PITH_FLOAT32)
{
    return Tensor(pith_empty_strided((int)sizes.size(), sizes.data(),
                                     Shape(sizes.size(), 0).data(), dtype, PITH_META));
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
