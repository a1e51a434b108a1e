/* Note [Geometry fits in int64] at every entry of core: empty_strided, empty, from_blob,
 * views, out= resizing and pith_geometry_check refuse strides and extents whose bytes
 * overflow int64, and accept the largest legal ones. */
#include <cstdint>

#include "core_test.h"

namespace {

class GeometryTest : public CoreTest {};

constexpr int64_t kTwo62 = INT64_C(1) << 62;

TEST_F(GeometryTest, EmptyStridedRefusesAStrideWhoseBytesOverflow)
{
    const int64_t size = 1, stride = kTwo62;
    for (pith_device device : {PITH_CPU, PITH_META}) {
        EXPECT_EQ(pith_empty_strided(1, &size, &stride, PITH_FLOAT32, device), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_VALUE, "empty_strided: stride 4611686018427387904 of "
                                             "dim 0 times the item size 4 overflows int64"));
    }
}

TEST_F(GeometryTest, EmptyStridedAcceptsTheLargestStrideOfEveryItemSize)
{
    const int64_t size = 1;
    for (pith_dtype d : kAllDtypes) {
        const int64_t itemsize = (int64_t)pith_dtype_size(d);
        const int64_t largest = INT64_MAX / itemsize;
        Tensor t(pith_empty_strided(1, &size, &largest, d, PITH_META));
        ASSERT_NE(t, nullptr) << pith_dtype_name(d) << ": " << pith_last_error();
        EXPECT_EQ(pith_stride(t.get(), 0), largest);
        if (itemsize == 1)
            continue; /* no int64 stride is too large for one-byte items */
        const int64_t too_large = largest + 1;
        EXPECT_EQ(pith_empty_strided(1, &size, &too_large, d, PITH_META), nullptr);
        EXPECT_TRUE(HasError(PITH_ERR_VALUE, "overflows int64")) << pith_dtype_name(d);
    }
}

TEST_F(GeometryTest, EmptyStridedRefusesAnExtentThatStepsPastInt64)
{
    /* 1 + 2^62 elements of storage fit, but a walk steps one stride past the last one. */
    const int64_t size = 2, stride = kTwo62;
    EXPECT_EQ(pith_empty_strided(1, &size, &stride, PITH_UINT8, PITH_META), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "the byte extent of sizes [2] with strides "
                                         "[4611686018427387904], storage offset 0 and 1-byte "
                                         "elements overflows int64"));
    const int64_t largest = INT64_MAX / 2;
    Tensor t(pith_empty_strided(1, &size, &largest, PITH_UINT8, PITH_META));
    EXPECT_NE(t, nullptr) << pith_last_error();
}

TEST_F(GeometryTest, TheExtentSumsEveryDimIncludingSizeOneDims)
{
    const int64_t sizes[] = {1, 1}, strides[] = {kTwo62, kTwo62};
    EXPECT_EQ(pith_empty_strided(2, sizes, strides, PITH_UINT8, PITH_META), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "byte extent"));
    const int64_t fitting[] = {kTwo62, kTwo62 - 1};
    Tensor t(pith_empty_strided(2, sizes, fitting, PITH_UINT8, PITH_META));
    EXPECT_NE(t, nullptr) << pith_last_error();
}

TEST_F(GeometryTest, EmptyTensorsAreCheckedToo)
{
    const int64_t size = 0, stride = kTwo62;
    EXPECT_EQ(pith_empty_strided(1, &size, &stride, PITH_FLOAT64, PITH_CPU), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "times the item size 8 overflows int64"));
    /* Contiguous strides of an empty shape keep growing past the zero (as PyTorch's). */
    const int64_t sizes[] = {0, kTwo62};
    EXPECT_EQ(pith_empty(2, sizes, PITH_FLOAT32), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "empty: stride 4611686018427387904 of dim 0"));
    const int64_t huge[] = {INT64_MAX, 0, INT64_MAX};
    EXPECT_EQ(pith_empty(3, huge, PITH_UINT8), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "the contiguous strides of shape "
                                         "[9223372036854775807, 0, 9223372036854775807] "
                                         "overflow int64"));
    Tensor t(pith_empty(2, sizes, PITH_UINT8));
    ASSERT_NE(t, nullptr) << pith_last_error();
    EXPECT_EQ(pith_numel(t.get()), 0);
}

struct DeleterCalls {
    int calls = 0;
};
void count_deleter(void *, void *ctx)
{
    static_cast<DeleterCalls *>(ctx)->calls++;
}

TEST_F(GeometryTest, FromBlobRefusesOverflowingStridesAndKeepsTheData)
{
    alignas(8) float buf[2] = {1, 2};
    DeleterCalls log;
    const int64_t size = 1, stride = kTwo62;
    EXPECT_EQ(pith_from_blob(buf, 1, &size, &stride, PITH_FLOAT32, count_deleter, &log),
              nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "from_blob: stride 4611686018427387904 of dim 0"));
    const int64_t sizes[] = {1, 1}, strides[] = {INT64_MAX / 4, INT64_MAX / 4};
    EXPECT_EQ(pith_from_blob(buf, 2, sizes, strides, PITH_FLOAT32, count_deleter, &log),
              nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "byte extent"));
    EXPECT_EQ(log.calls, 0);
}

TEST_F(GeometryTest, FromBlobAcceptsTheLargestStrideOfASizeOneDim)
{
    alignas(8) float buf[2] = {1, 2};
    /* (1 * s + 2 * 1) * 4 <= INT64_MAX */
    const int64_t sizes[] = {1, 2}, strides[] = {(INT64_MAX - 8) / 4, 1};
    Tensor t(pith_from_blob(buf, 2, sizes, strides, PITH_FLOAT32, nullptr, nullptr));
    ASSERT_NE(t, nullptr) << pith_last_error();
    double v;
    ASSERT_EQ(pith_item_at(t.get(), 1, &v), PITH_OK);
    EXPECT_EQ(v, 2.0);
}

TEST_F(GeometryTest, ViewsThatBreakTheInvariantAreRefused)
{
    int64_t n = 4;
    Tensor base(pith_zeros(1, &n, PITH_FLOAT32));
    const int64_t one = 1, zero = 0, huge = INT64_C(1) << 61;
    EXPECT_EQ(shim_tensor_view(base.get(), 1, &one, &huge, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "view: stride 2305843009213693952 of dim 0"));
    EXPECT_EQ(shim_tensor_view(base.get(), 1, &one, &one, INT64_MAX / 4), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "storage offset 2305843009213693951"));
    /* numel * itemsize must fit even where stride 0 makes the extent small */
    const int64_t many = kTwo62;
    EXPECT_EQ(shim_tensor_view(base.get(), 1, &many, &zero, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "shape [4611686018427387904] of 4-byte elements has "
                                         "more bytes than int64 holds"));
    const int64_t fits = INT64_C(1) << 60;
    Tensor ok(shim_tensor_view(base.get(), 1, &fits, &zero, 0));
    EXPECT_NE(ok, nullptr) << pith_last_error();
}

TEST_F(GeometryTest, ResizeOutRefusesAnEmptyShapeWhoseStridesOverflow)
{
    int64_t zero = 0;
    Tensor out(pith_empty(1, &zero, PITH_FLOAT64));
    const int64_t sizes[] = {0, kTwo62};
    EXPECT_EQ(shim_tensor_resize_out(out.get(), 2, sizes), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "out: stride 4611686018427387904 of dim 0"));
    EXPECT_EQ(pith_ndim(out.get()), 1);
}

TEST_F(GeometryTest, GeometryCheckCountsNegativeStridesByTheirSize)
{
    const int64_t two = 2, neg = -kTwo62, half = -(kTwo62 / 2), min = INT64_MIN;
    EXPECT_EQ(pith_geometry_check(1, &two, &neg, 0, 1), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "geometry_check: the byte extent"));
    EXPECT_EQ(pith_geometry_check(1, &two, &half, 0, 1), PITH_OK);
    EXPECT_EQ(pith_geometry_check(1, &two, &min, 0, 1), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "stride -9223372036854775808 of dim 0"));
    EXPECT_EQ(pith_geometry_check(0, nullptr, nullptr, INT64_MAX / 8, 8), PITH_OK);
    EXPECT_EQ(pith_geometry_check(0, nullptr, nullptr, INT64_MAX / 8 + 1, 8), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "byte extent"));
}

TEST_F(GeometryTest, GeometryCheckValidatesItsArguments)
{
    const int64_t two = 2, neg = -2;
    EXPECT_EQ(pith_geometry_check(1, &two, nullptr, 0, 4), PITH_OK); /* contiguous */
    EXPECT_EQ(pith_geometry_check(1, nullptr, nullptr, 0, 4), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "sizes is NULL"));
    EXPECT_EQ(pith_geometry_check(PITH_MAX_DIMS + 1, &two, nullptr, 0, 4), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "ndim 17 is out of range"));
    EXPECT_EQ(pith_geometry_check(1, &two, nullptr, 0, 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "invalid item size 0"));
    EXPECT_EQ(pith_geometry_check(1, &neg, nullptr, 0, 4), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative dimension -2"));
    EXPECT_EQ(pith_geometry_check(1, &two, nullptr, -1, 4), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "negative storage offset -1"));
}

} // namespace
