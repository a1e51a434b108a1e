// elementwise_engine_test.cc — the engine under the ops: broadcasting and its errors,
// out= and in-place rules, version counters, aliasing, meta tensors, devices, and large
// tensors that take the OpenMP path.
#include "elementwise_util.h"

namespace {

using ElementwiseEngineTest = ElementwiseTest;

std::vector<double> iota(size_t n, double start = 0, double step = 1)
{
    std::vector<double> v(n);
    for (size_t i = 0; i < n; i++) v[i] = start + step * (double)i;
    return v;
}

// ---- broadcasting ----

TEST_F(ElementwiseEngineTest, BroadcastsSizeOneAndMissingDims)
{
    Tensor a = make({2, 1, 3}, PITH_INT64, iota(6));
    Tensor b = make({4, 1}, PITH_INT64, {0, 10, 20, 30});
    Tensor out(pith_add(a.get(), b.get()));
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(sizes_of(out.get()), (std::vector<int64_t>{2, 4, 3}));
    std::vector<double> want;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) want.push_back(i * 3 + k + 10 * j);
    EXPECT_VALUES(PITH_INT64, out.get(), want);
}

TEST_F(ElementwiseEngineTest, MismatchedSizesNameBothSizesAndTheDim)
{
    Tensor a = make({2, 3}, PITH_FLOAT32, iota(6));
    Tensor b = make({2, 4}, PITH_FLOAT32, iota(8));
    EXPECT_ERROR(Tensor(pith_add(a.get(), b.get())), PITH_ERR_VALUE,
                 "add: the size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
}

TEST_F(ElementwiseEngineTest, EmptyBroadcastsWithSizeOneOnly)
{
    Tensor a = make({0, 3}, PITH_FLOAT32, {});
    Tensor one = make({1}, PITH_FLOAT32, {1});
    Tensor two = make({2, 1}, PITH_FLOAT32, {1, 2});
    Tensor out(pith_mul(a.get(), one.get()));
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(sizes_of(out.get()), (std::vector<int64_t>{0, 3}));
    EXPECT_ERROR(Tensor(pith_mul(a.get(), two.get())), PITH_ERR_VALUE, "at non-singleton dimension 0");
}

TEST_F(ElementwiseEngineTest, ZeroDimOperandsGiveAZeroDimResult)
{
    Tensor a = make_scalar(PITH_FLOAT64, 1.5), b = make_scalar(PITH_FLOAT64, 2);
    Tensor out(pith_mul(a.get(), b.get()));
    EXPECT_EQ(pith_ndim(out.get()), 0);
    EXPECT_VALUES(PITH_FLOAT64, out.get(), (std::vector<double>{3}));
}

TEST_F(ElementwiseEngineTest, NullArgumentIsAnErrorNotACrash)
{
    Tensor a = make({1}, PITH_FLOAT32, {1});
    EXPECT_ERROR(pith_add(a.get(), nullptr), PITH_ERR_VALUE, "NULL");
    EXPECT_ERROR(pith_neg(nullptr), PITH_ERR_VALUE, "NULL");
    EXPECT_ERROR(pith_add_(nullptr, a.get()), PITH_ERR_VALUE, "NULL");
}

// ---- out= ----

TEST_F(ElementwiseEngineTest, OutOfTheWrongNonEmptyShapeIsAnError)
{
    Tensor a = make({3}, PITH_FLOAT32, {1, 2, 3});
    Tensor out = make({2}, PITH_FLOAT32, {0, 0});
    int64_t before = pith_version_counter(out.get());
    EXPECT_ERROR(pith_add_out(out.get(), a.get(), a.get()), PITH_ERR_VALUE, "add");
    EXPECT_EQ(pith_version_counter(out.get()), before);
}

TEST_F(ElementwiseEngineTest, EmptyOutIsResizedToTheResult)
{
    Tensor a = make({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    Tensor out = make({0}, PITH_FLOAT32, {});
    ASSERT_EQ(pith_sub_out(out.get(), a.get(), a.get()), PITH_OK);
    EXPECT_EQ(sizes_of(out.get()), (std::vector<int64_t>{2, 2}));
    EXPECT_VALUES(PITH_FLOAT32, out.get(), (std::vector<double>{0, 0, 0, 0}));
}

TEST_F(ElementwiseEngineTest, OutWithAStrideZeroDimIsRejected)
{
    Tensor a = make({3}, PITH_FLOAT32, {1, 2, 3});
    Tensor out = make_strided({3}, {0}, PITH_FLOAT32, {0, 0, 0});
    EXPECT_ERROR(pith_add_out(out.get(), a.get(), a.get()), PITH_ERR_VALUE,
                 "more than one element of the written-to tensor refers to a single memory location");
}

TEST_F(ElementwiseEngineTest, NonContiguousOutIsWrittenThroughItsStrides)
{
    Tensor a = make({2, 3}, PITH_INT32, iota(6));
    Tensor out = make_strided({2, 3}, {1, 2}, PITH_INT32, std::vector<double>(6, 0));
    ASSERT_EQ(pith_add_out(out.get(), a.get(), a.get()), PITH_OK);
    EXPECT_VALUES(PITH_INT32, out.get(), iota(6, 0, 2));
}

TEST_F(ElementwiseEngineTest, OutMayAliasAnInput)
{
    Tensor a = make({4}, PITH_FLOAT32, {1, 2, 3, 4});
    Tensor b = make({4}, PITH_FLOAT32, {10, 20, 30, 40});
    ASSERT_EQ(pith_add_out(a.get(), a.get(), b.get()), PITH_OK);
    EXPECT_VALUES(PITH_FLOAT32, a.get(), (std::vector<double>{11, 22, 33, 44}));
}

// ---- in place ----

TEST_F(ElementwiseEngineTest, InPlaceBroadcastMustKeepSelfsShape)
{
    Tensor self = make({3}, PITH_FLOAT32, {1, 2, 3});
    Tensor other = make({2, 3}, PITH_FLOAT32, iota(6));
    EXPECT_ERROR(pith_add_(self.get(), other.get()), PITH_ERR_VALUE,
                 "add: output with shape [3] doesn't match the broadcast shape [2, 3]");
}

TEST_F(ElementwiseEngineTest, InPlaceResultSelfCannotHoldIsATypeError)
{
    Tensor self = make({2}, PITH_INT64, {1, 2});
    Tensor other = make({2}, PITH_FLOAT32, {0.5, 0.5});
    EXPECT_ERROR(pith_add_(self.get(), other.get()), PITH_ERR_TYPE,
                 "result type float32 can't be cast to the desired output type int64");
    EXPECT_VALUES(PITH_INT64, self.get(), (std::vector<double>{1, 2}));
}

TEST_F(ElementwiseEngineTest, InPlaceWithAWiderOtherConvertsBack)
{
    Tensor self = make({2}, PITH_FLOAT16, {1, 2});
    Tensor other = make({2}, PITH_FLOAT64, {0.5, 0.25});
    ASSERT_EQ(pith_add_(self.get(), other.get()), PITH_OK);
    EXPECT_EQ(pith_tensor_dtype(self.get()), PITH_FLOAT16);
    EXPECT_VALUES(PITH_FLOAT16, self.get(), (std::vector<double>{1.5, 2.25}));
}

TEST_F(ElementwiseEngineTest, InPlaceBumpsTheVersionSharedWithViews)
{
    Tensor self = make({4}, PITH_FLOAT32, {1, 2, 3, 4});
    Tensor view(pith_slice(self.get(), 0, 1, 3, 1));
    ASSERT_NE(view, nullptr) << pith_last_error();
    int64_t before = pith_version_counter(self.get());
    ASSERT_EQ(pith_neg_(view.get()), PITH_OK);
    EXPECT_EQ(pith_version_counter(self.get()), before + 1);
    EXPECT_VALUES(PITH_FLOAT32, self.get(), (std::vector<double>{1, -2, -3, 4}));
}

TEST_F(ElementwiseEngineTest, FailedInPlaceOpDoesNotBumpTheVersion)
{
    Tensor self = make({3}, PITH_BOOL, {1, 0, 1});
    int64_t before = pith_version_counter(self.get());
    EXPECT_ERROR(pith_neg_(self.get()), PITH_ERR_TYPE, "Negation");
    EXPECT_EQ(pith_version_counter(self.get()), before);
}

TEST_F(ElementwiseEngineTest, InPlaceWithItselfAsOther)
{
    Tensor self = make({3}, PITH_INT32, {1, 2, 3});
    ASSERT_EQ(pith_mul_(self.get(), self.get()), PITH_OK);
    EXPECT_VALUES(PITH_INT32, self.get(), (std::vector<double>{1, 4, 9}));
}

// other = self shifted by one element: every element must read other's old value.
TEST_F(ElementwiseEngineTest, InPlaceWithPartiallyOverlappingOtherReadsTheOldValues)
{
    Tensor base = make({5}, PITH_INT64, {1, 2, 3, 4, 5});
    Tensor self(pith_slice(base.get(), 0, 1, 5, 1));
    Tensor other(pith_slice(base.get(), 0, 0, 4, 1));
    ASSERT_NE(self, nullptr);
    ASSERT_EQ(pith_add_(self.get(), other.get()), PITH_OK);
    EXPECT_VALUES(PITH_INT64, base.get(), (std::vector<double>{1, 3, 5, 7, 9}));
}

TEST_F(ElementwiseEngineTest, InPlaceWithTransposedSelfAsOther)
{
    Tensor self = make({2, 2}, PITH_FLOAT32, {1, 2, 3, 4});
    Tensor other(pith_transpose(self.get(), 0, 1));
    ASSERT_NE(other, nullptr);
    ASSERT_EQ(pith_add_(self.get(), other.get()), PITH_OK);
    EXPECT_VALUES(PITH_FLOAT32, self.get(), (std::vector<double>{2, 5, 5, 8}));
}

TEST_F(ElementwiseEngineTest, OverlapIsFoundAcrossTwoBlobsOfOneBuffer)
{
    alignas(8) int32_t buf[5] = {1, 2, 3, 4, 5};
    int64_t four = 4;
    Tensor self(pith_from_blob(buf + 1, 1, &four, nullptr, PITH_INT32, nullptr, nullptr));
    Tensor other(pith_from_blob(buf, 1, &four, nullptr, PITH_INT32, nullptr, nullptr));
    ASSERT_EQ(pith_add_(self.get(), other.get()), PITH_OK);
    EXPECT_EQ(buf[0], 1);
    EXPECT_EQ(buf[1], 3);
    EXPECT_EQ(buf[2], 5);
    EXPECT_EQ(buf[3], 7);
    EXPECT_EQ(buf[4], 9);
}

// ---- meta ----

TEST_F(ElementwiseEngineTest, MetaResultHasTheBroadcastShapeAndNoData)
{
    Tensor a = make_meta({2, 1, 3}, PITH_INT32);
    Tensor b = make_meta({4, 1}, PITH_FLOAT16);
    Tensor out(pith_add(a.get(), b.get()));
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT16);
    EXPECT_EQ(sizes_of(out.get()), (std::vector<int64_t>{2, 4, 3}));
    EXPECT_EQ(pith_data_ptr(out.get()), nullptr);
}

TEST_F(ElementwiseEngineTest, MetaValidatesLikeCpu)
{
    Tensor a = make_meta({2, 3}, PITH_FLOAT32), b = make_meta({2, 4}, PITH_FLOAT32);
    EXPECT_ERROR(Tensor(pith_add(a.get(), b.get())), PITH_ERR_VALUE, "at non-singleton dimension 1");
    Tensor flags = make_meta({2}, PITH_BOOL);
    EXPECT_ERROR(Tensor(pith_neg(flags.get())), PITH_ERR_TYPE, "Negation");
    Tensor f = make_meta({2}, PITH_FLOAT32);
    EXPECT_ERROR(Tensor(pith_bitwise_and(f.get(), f.get())), PITH_ERR_TYPE, "bitwise_and");
}

TEST_F(ElementwiseEngineTest, MetaAcceptsCpuZeroDimOperands)
{
    Tensor a = make_meta({3}, PITH_INT64);
    Tensor s = make_wrapped(PITH_FLOAT64, 0.5);
    Tensor out(pith_mul(a.get(), s.get()));
    ASSERT_NE(out, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(out.get()), PITH_META);
    EXPECT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT32);
}

TEST_F(ElementwiseEngineTest, MetaWithADimensionedCpuTensorIsAnError)
{
    Tensor a = make_meta({3}, PITH_FLOAT32);
    Tensor b = make({3}, PITH_FLOAT32, {1, 2, 3});
    EXPECT_ERROR(Tensor(pith_add(a.get(), b.get())), PITH_ERR_VALUE, "expected all tensors to be on the same device");
}

TEST_F(ElementwiseEngineTest, MetaOutMustBeMeta)
{
    Tensor a = make_meta({3}, PITH_FLOAT32);
    Tensor out = make({3}, PITH_FLOAT32, {0, 0, 0});
    EXPECT_ERROR(pith_add_out(out.get(), a.get(), a.get()), PITH_ERR_VALUE, "same device");
}

TEST_F(ElementwiseEngineTest, MetaOutAndInPlaceValidateResizeAndBump)
{
    Tensor a = make_meta({2, 3}, PITH_FLOAT32);
    Tensor out = make_meta({0}, PITH_FLOAT32);
    ASSERT_EQ(pith_mul_out(out.get(), a.get(), a.get()), PITH_OK) << pith_last_error();
    EXPECT_EQ(sizes_of(out.get()), (std::vector<int64_t>{2, 3}));
    Tensor ints = make_meta({2, 3}, PITH_INT32);
    EXPECT_ERROR(pith_mul_(ints.get(), a.get()), PITH_ERR_TYPE, "can't be cast");
    int64_t before = pith_version_counter(a.get());
    ASSERT_EQ(pith_exp_(a.get()), PITH_OK);
    EXPECT_EQ(pith_version_counter(a.get()), before + 1);
}

// ---- large tensors: the OpenMP path (threads forced above one) ----

class ElementwiseThreadsTest : public ElementwiseTest {
  protected:
    void SetUp() override
    {
        ElementwiseTest::SetUp();
        saved_ = pith_get_num_threads();
        pith_set_num_threads(4);
    }
    void TearDown() override
    {
        pith_set_num_threads(saved_);
        ElementwiseTest::TearDown();
    }
    int saved_ = 1;
};

constexpr int64_t kLarge = 300 * 401; // well above PITH_GRAIN_SIZE, not a multiple of 64

TEST_F(ElementwiseThreadsTest, LargeContiguousAddMatchesTheReference)
{
    std::vector<double> a = iota(kLarge, -1000, 0.25), b = iota(kLarge, 5, -0.5);
    Tensor ta = make({kLarge}, PITH_FLOAT32, a), tb = make({kLarge}, PITH_FLOAT32, b);
    Tensor out(pith_add(ta.get(), tb.get()));
    std::vector<double> want(kLarge);
    for (int64_t i = 0; i < kLarge; i++) want[i] = (double)((float)a[i] + (float)b[i]);
    EXPECT_VALUES(PITH_FLOAT32, out.get(), want);
}

TEST_F(ElementwiseThreadsTest, LargeTransposedAndBroadcastOperands)
{
    // self: [300, 401] viewed through a transpose of a [401, 300] tensor; other: a row.
    std::vector<double> base = iota(kLarge);
    Tensor t = make({401, 300}, PITH_INT32, base);
    Tensor self(pith_transpose(t.get(), 0, 1));
    Tensor row = make({401}, PITH_INT32, iota(401, 0, 1000));
    Tensor out(pith_add(self.get(), row.get()));
    ASSERT_NE(out, nullptr);
    std::vector<double> want;
    for (int64_t i = 0; i < 300; i++)
        for (int64_t j = 0; j < 401; j++) want.push_back(base[j * 300 + i] + 1000.0 * j);
    EXPECT_VALUES(PITH_INT32, out.get(), want);
}

TEST_F(ElementwiseThreadsTest, LargeUnaryWithConversion)
{
    std::vector<double> a(kLarge);
    for (int64_t i = 0; i < kLarge; i++) a[i] = (double)(i % 17) - 8;
    Tensor ta = make({kLarge}, PITH_INT16, a);
    Tensor out(pith_exp(ta.get()));
    ASSERT_EQ(pith_tensor_dtype(out.get()), PITH_FLOAT32);
    std::vector<double> want;
    for (double x : a) want.push_back(std::exp(x));
    EXPECT_VALUES(PITH_FLOAT32, out.get(), want);
}

TEST_F(ElementwiseThreadsTest, LargeInPlaceOnAStridedView)
{
    std::vector<double> base = iota(2 * kLarge);
    Tensor t = make({2 * kLarge}, PITH_FLOAT64, base);
    Tensor even(pith_slice(t.get(), 0, 0, 2 * kLarge, 2));
    ASSERT_EQ(pith_neg_(even.get()), PITH_OK);
    std::vector<double> want(base);
    for (int64_t i = 0; i < 2 * kLarge; i += 2) want[i] = -want[i];
    EXPECT_VALUES(PITH_FLOAT64, t.get(), want);
}

TEST_F(ElementwiseThreadsTest, LargeIntegerDivisionFindsTheOneZeroDivisor)
{
    std::vector<double> b(kLarge, 3);
    b[kLarge - 1] = 0;
    Tensor ta = make({kLarge}, PITH_INT64, iota(kLarge)), tb = make({kLarge}, PITH_INT64, b);
    EXPECT_ERROR(Tensor(pith_floor_divide(ta.get(), tb.get())), PITH_ERR_VALUE, "ZeroDivisionError");
}

TEST_F(ElementwiseThreadsTest, LargeWhereAndClamp)
{
    std::vector<double> a = iota(kLarge, -100, 0.01);
    Tensor ta = make({kLarge}, PITH_FLOAT64, a);
    double lo = -1, hi = 2;
    Tensor clamped(pith_clamp(ta.get(), &lo, &hi));
    Tensor zero = make_scalar(PITH_FLOAT64, 0);
    Tensor positive(pith_gt(ta.get(), zero.get()));
    Tensor picked(pith_where(positive.get(), ta.get(), zero.get()));
    std::vector<double> want_clamp, want_where;
    for (double x : a) {
        want_clamp.push_back(std::min(std::max(x, lo), hi));
        want_where.push_back(x > 0 ? x : 0);
    }
    EXPECT_VALUES(PITH_FLOAT64, clamped.get(), want_clamp);
    EXPECT_VALUES(PITH_FLOAT64, picked.get(), want_where);
}

TEST_F(ElementwiseThreadsTest, LargeCopyBetweenDtypes)
{
    std::vector<double> a(kLarge);
    for (int64_t i = 0; i < kLarge; i++) a[i] = (double)(i % 251) - 125;
    Tensor src = make({kLarge}, PITH_INT64, a);
    Tensor dst = make({kLarge}, PITH_BFLOAT16, std::vector<double>(kLarge, 0));
    ASSERT_EQ(pith_copy_(dst.get(), src.get()), PITH_OK);
    EXPECT_VALUES(PITH_BFLOAT16, dst.get(), a);
}

} // namespace
