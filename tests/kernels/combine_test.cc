// cat (promotion, the legacy skip of 1-D empty inputs), stack, masked_fill and its in-place
// form, tril and triu (against a reference loop).
#include <cstdint>

#include "views_test_util.h"

namespace pith_e_test {
namespace {

class CombineTest : public KernelFixture {};

using Values_ = std::vector<double>;

Tensor Cat(std::initializer_list<const pith_tensor *> tensors, int dim)
{
    std::vector<const pith_tensor *> v(tensors);
    return Tensor(pith_cat(v.data(), v.size(), dim));
}

Tensor Stack(std::initializer_list<const pith_tensor *> tensors, int dim)
{
    std::vector<const pith_tensor *> v(tensors);
    return Tensor(pith_stack_tensors(v.data(), v.size(), dim));
}

Tensor Meta(const Shape &sizes, pith_dtype dtype = PITH_FLOAT32)
{
    Shape strides(sizes.size(), 0);
    return Tensor(pith_empty_strided((int)sizes.size(), sizes.data(), strides.data(), dtype,
                                     PITH_META));
}

// ---- cat ----

TEST_F(CombineTest, CatAlongFirstAndLastDim)
{
    Tensor a = Iota({2, 3});
    Tensor b = FromValues({1, 3}, PITH_FLOAT32, {10, 11, 12});
    Tensor rows = Cat({a.get(), b.get()}, 0);
    ASSERT_NE(rows, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(rows.get()), (Shape{3, 3}));
    EXPECT_EQ(Values(rows.get()), (Values_{0, 1, 2, 3, 4, 5, 10, 11, 12}));
    EXPECT_FALSE(pith_shares_storage(rows.get(), a.get()));
    Tensor c = FromValues({2, 1}, PITH_FLOAT32, {-1, -2});
    Tensor cols = Cat({c.get(), a.get(), c.get()}, -1);
    ASSERT_NE(cols, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(cols.get()), (Shape{2, 5}));
    EXPECT_EQ(Values(cols.get()), (Values_{-1, 0, 1, 2, -1, -2, 3, 4, 5, -2}));
}

TEST_F(CombineTest, CatPromotesLikeResultType)
{
    Tensor i = FromValues({2}, PITH_INT32, {1, 2});
    Tensor f = FromValues({1}, PITH_FLOAT32, {0.5});
    Tensor u = FromValues({1}, PITH_UINT8, {200});
    Tensor s = FromValues({1}, PITH_INT8, {-3});
    Tensor b = FromValues({1}, PITH_BOOL, {1});
    Tensor l = FromValues({1}, PITH_INT64, {7});
    Tensor fi = Cat({i.get(), f.get()}, 0);
    Tensor us = Cat({u.get(), s.get()}, 0);
    Tensor bl = Cat({b.get(), l.get()}, 0);
    ASSERT_TRUE(fi && us && bl) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(fi.get()), PITH_FLOAT32);
    EXPECT_EQ(Values(fi.get()), (Values_{1, 2, 0.5}));
    EXPECT_EQ(pith_tensor_dtype(us.get()), PITH_INT16);
    EXPECT_EQ(Values(us.get()), (Values_{200, -3}));
    EXPECT_EQ(pith_tensor_dtype(bl.get()), PITH_INT64);
    EXPECT_EQ(Values(bl.get()), (Values_{1, 7}));
}

TEST_F(CombineTest, CatSkipsOneDimEmptyInputsButPromotesWithThem)
{
    const int64_t zero = 0;
    Tensor e(pith_empty(1, &zero, PITH_FLOAT64));
    Tensor x = Iota({2, 2}, PITH_INT64);
    Tensor r = Cat({e.get(), x.get(), e.get()}, 1);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 2}));
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_FLOAT64);
    EXPECT_EQ(Values(r.get()), (Values_{0, 1, 2, 3}));
}

TEST_F(CombineTest, CatOfOnlyEmptyInputsIsEmpty)
{
    const int64_t zero = 0;
    Tensor e(pith_empty(1, &zero, PITH_FLOAT32));
    Tensor r = Cat({e.get(), e.get()}, 0);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{0}));
}

TEST_F(CombineTest, CatKeepsOtherEmptyShapes)
{
    const int64_t sizes[] = {0, 3};
    Tensor e(pith_zeros(2, sizes, PITH_FLOAT32));
    Tensor x = Iota({2, 3});
    Tensor r = Cat({e.get(), x.get()}, 0);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 3}));
    EXPECT_EQ(Values(r.get()), (Values_{0, 1, 2, 3, 4, 5}));
}

TEST_F(CombineTest, CatOfNonContiguousInputs)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_t(x.get()));
    Tensor r = Cat({t.get(), t.get()}, 1);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{3, 4}));
    EXPECT_EQ(Values(r.get()), (Values_{0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5}));
}

TEST_F(CombineTest, CatErrors)
{
    EXPECT_EQ(pith_cat(nullptr, 0, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "torch.cat(): expected a non-empty list of Tensors"));
    Tensor a = Iota({2, 3});
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(Cat({a.get(), s.get()}, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "zero-dimensional tensor (at position 1) cannot be concatenated"));
    Tensor c = Iota({2, 3, 1});
    EXPECT_EQ(Cat({a.get(), c.get()}, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Tensors must have same number of dimensions: got 2 and 3"));
    Tensor d = Iota({2, 4});
    EXPECT_EQ(Cat({a.get(), d.get()}, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "Sizes of tensors must match except in dimension 0. Expected size 3 but "
                         "got size 4 for tensor number 1 in the list."));
    EXPECT_EQ(Cat({a.get(), a.get()}, 2), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX,
                         "Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
    const pith_tensor *with_null[] = {a.get(), nullptr};
    EXPECT_EQ(pith_cat(with_null, 2, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "NULL"));
}

TEST_F(CombineTest, CatOfMetaTensorsIsMeta)
{
    Tensor a = Meta({2, 3});
    Tensor b = Meta({2, 5}, PITH_FLOAT64);
    Tensor r = Cat({a.get(), b.get()}, 1);
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(r.get()), PITH_META);
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 8}));
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_FLOAT64);
    Tensor c = Iota({2, 3});
    EXPECT_EQ(Cat({c.get(), a.get()}, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "Expected all tensors to be on the same device"));
}

// ---- stack ----

TEST_F(CombineTest, StackAddsADim)
{
    Tensor a = FromValues({2}, PITH_FLOAT32, {1, 2});
    Tensor b = FromValues({2}, PITH_FLOAT32, {3, 4});
    Tensor s0 = Stack({a.get(), b.get()}, 0);
    Tensor s1 = Stack({a.get(), b.get()}, -1);
    ASSERT_TRUE(s0 && s1) << pith_last_error();
    EXPECT_EQ(Sizes(s0.get()), (Shape{2, 2}));
    EXPECT_EQ(Values(s0.get()), (Values_{1, 2, 3, 4}));
    EXPECT_EQ(Values(s1.get()), (Values_{1, 3, 2, 4}));
}

TEST_F(CombineTest, StackOfScalarsAndOfEmptyTensors)
{
    Tensor a(pith_full(0, nullptr, 5, PITH_INT64));
    Tensor b(pith_full(0, nullptr, 6, PITH_INT64));
    Tensor s = Stack({a.get(), b.get(), a.get()}, 0);
    ASSERT_NE(s, nullptr) << pith_last_error();
    EXPECT_EQ(Values(s.get()), (Values_{5, 6, 5}));
    const int64_t zero = 0;
    Tensor e(pith_empty(1, &zero, PITH_FLOAT32));
    Tensor se = Stack({e.get(), e.get()}, 0);
    ASSERT_NE(se, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(se.get()), (Shape{2, 0}));
}

TEST_F(CombineTest, StackErrors)
{
    EXPECT_EQ(pith_stack_tensors(nullptr, 0, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "stack expects a non-empty TensorList"));
    Tensor a = Iota({2});
    Tensor b = Iota({3});
    EXPECT_EQ(Stack({a.get(), b.get()}, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "stack expects each tensor to be equal size, but got [2] at entry 0 and "
                         "[3] at entry 1"));
    EXPECT_EQ(Stack({a.get(), a.get()}, 2), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "expected to be in range of [-2, 1], but got 2"));
}

// ---- masked_fill ----

Tensor Mask(const Shape &sizes, const std::vector<double> &v)
{
    return FromValues(sizes, PITH_BOOL, v);
}

TEST_F(CombineTest, MaskedFillBroadcastsTheMask)
{
    Tensor x = Iota({2, 3});
    Tensor m = Mask({3}, {1, 0, 1});
    int64_t version = pith_version_counter(x.get());
    Tensor r(pith_masked_fill(x.get(), m.get(), -1));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Values(r.get()), (Values_{-1, 1, -1, -1, 4, -1}));
    EXPECT_EQ(Values(x.get()), (Values_{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(pith_version_counter(x.get()), version);
}

TEST_F(CombineTest, MaskedFillBroadcastsSelfToo)
{
    Tensor x = Iota({3}, PITH_INT32);
    Tensor m = Mask({2, 3}, {1, 0, 0, 0, 0, 1});
    Tensor r(pith_masked_fill(x.get(), m.get(), 2.9));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 3}));
    EXPECT_EQ(pith_tensor_dtype(r.get()), PITH_INT32);
    EXPECT_EQ(Values(r.get()), (Values_{2, 1, 2, 0, 1, 2})); // 2.9 truncates to 2
}

TEST_F(CombineTest, MaskedFillOfNonContiguousSelf)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_t(x.get()));
    Tensor m = Mask({3, 2}, {0, 1, 0, 0, 1, 0});
    Tensor r(pith_masked_fill(t.get(), m.get(), 9));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(Values(r.get()), (Values_{0, 9, 1, 4, 9, 5}));
}

TEST_F(CombineTest, MaskedFillErrors)
{
    Tensor x = Iota({2, 3});
    Tensor u = FromValues({3}, PITH_UINT8, {1, 0, 1});
    EXPECT_EQ(pith_masked_fill(x.get(), u.get(), 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_TYPE,
                         "masked_fill_ only supports boolean masks, but got mask with dtype uint8"));
    Tensor m4 = Mask({4}, {1, 0, 1, 0});
    EXPECT_EQ(pith_masked_fill(x.get(), m4.get(), 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "The size of tensor a (3) must match the size of tensor b (4) at "
                         "non-singleton dimension 1"));
    Tensor i8 = Iota({3}, PITH_INT8);
    Tensor m3 = Mask({3}, {1, 1, 1});
    EXPECT_EQ(pith_masked_fill(i8.get(), m3.get(), 300), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "value cannot be converted to type int8_t without overflow"));
}

TEST_F(CombineTest, MaskedFillInPlaceWritesThroughAView)
{
    Tensor x = Iota({2, 3});
    Tensor t(pith_t(x.get()));
    Tensor m = Mask({2}, {0, 1}); // broadcast over t's 3 rows: column 1 of t = row 1 of x
    int64_t version = pith_version_counter(x.get());
    ASSERT_EQ(pith_masked_fill_(t.get(), m.get(), -5), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{0, 1, 2, -5, -5, -5}));
    EXPECT_EQ(pith_version_counter(x.get()), version + 1);
}

TEST_F(CombineTest, MaskedFillInPlaceWithScalarMask)
{
    Tensor x = Iota({2, 2}, PITH_FLOAT64);
    Tensor yes = Mask({}, {1});
    ASSERT_EQ(pith_masked_fill_(x.get(), yes.get(), 0.5), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(x.get()), (Values_{0.5, 0.5, 0.5, 0.5}));
}

TEST_F(CombineTest, MaskedFillInPlaceOnAnExpandedTensor)
{
    Tensor base = Iota({1});
    const int64_t shape[] = {4};
    Tensor e(pith_expand(base.get(), 1, shape));
    Tensor m = Mask({4}, {0, 0, 1, 0});
    ASSERT_EQ(pith_masked_fill_(e.get(), m.get(), 3), PITH_OK) << pith_last_error();
    EXPECT_EQ(Values(base.get()), (Values_{3}));
}

TEST_F(CombineTest, MaskedFillInPlaceMaskMustBroadcastToSelf)
{
    Tensor x = Iota({3});
    Tensor m = Mask({2, 3}, {1, 0, 0, 0, 0, 1});
    EXPECT_EQ(pith_masked_fill_(x.get(), m.get(), 0), PITH_ERR_VALUE);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "masked_fill_"));
    EXPECT_EQ(Values(x.get()), (Values_{0, 1, 2}));
}

TEST_F(CombineTest, MaskedFillLargeTensor)
{
    const int64_t n = 100000;
    Tensor x(pith_zeros(1, &n, PITH_INT16));
    Tensor even = Mask({2}, {1, 0});
    const int64_t shape[] = {n / 2, 2};
    Tensor v(pith_view(x.get(), 2, shape));
    ASSERT_EQ(pith_masked_fill_(v.get(), even.get(), 1), PITH_OK) << pith_last_error();
    const int16_t *p = static_cast<const int16_t *>(pith_data_ptr(x.get()));
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; i++)
        wrong += p[i] != (i % 2 == 0);
    EXPECT_EQ(wrong, 0);
}

TEST_F(CombineTest, MaskedFillOnMeta)
{
    Tensor x = Meta({2, 3});
    Tensor m = Meta({3}, PITH_BOOL);
    Tensor r(pith_masked_fill(x.get(), m.get(), 1));
    ASSERT_NE(r, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(r.get()), PITH_META);
    EXPECT_EQ(Sizes(r.get()), (Shape{2, 3}));
    EXPECT_EQ(pith_masked_fill_(x.get(), m.get(), 1), PITH_OK) << pith_last_error();
}

// ---- tril, triu ----

/* The reference: element (..., i, j) of a row-major batch of rows x cols matrices. */
Values_ TriangleReference(const Values_ &in, int64_t rows, int64_t cols, int64_t k, bool lower)
{
    Values_ out(in.size());
    for (size_t idx = 0; idx < in.size(); idx++) {
        int64_t i = (int64_t)(idx / cols) % rows, j = (int64_t)idx % cols;
        bool keep = lower ? (double)j - (double)i <= (double)k : (double)j - (double)i >= (double)k;
        out[idx] = keep ? in[idx] : 0;
    }
    return out;
}

TEST_F(CombineTest, TrilAndTriuMatchTheReference)
{
    const Shape shapes[] = {{3, 4}, {4, 3}, {2, 3, 3}, {2, 1, 2, 5}};
    const int64_t diagonals[] = {0, 1, -1, 2, -2, 7, -7, INT64_MAX, INT64_MIN};
    for (const Shape &shape : shapes) {
        Tensor x = Iota(shape);
        Values_ in = Values(x.get());
        int64_t rows = shape[shape.size() - 2], cols = shape.back();
        for (int64_t k : diagonals) {
            Tensor lo(pith_tril(x.get(), k));
            Tensor up(pith_triu(x.get(), k));
            ASSERT_TRUE(lo && up) << pith_last_error();
            EXPECT_EQ(Values(lo.get()), TriangleReference(in, rows, cols, k, true)) << k;
            EXPECT_EQ(Values(up.get()), TriangleReference(in, rows, cols, k, false)) << k;
        }
    }
}

TEST_F(CombineTest, TrilOfNonContiguousAndIntegerInputs)
{
    Tensor x = Iota({3, 3}, PITH_INT64);
    Tensor t(pith_t(x.get()));
    Tensor lo(pith_tril(t.get(), 0));
    ASSERT_NE(lo, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_dtype(lo.get()), PITH_INT64);
    EXPECT_EQ(Values(lo.get()), (Values_{0, 0, 0, 1, 4, 0, 2, 5, 8}));
    Tensor b = FromValues({2, 2}, PITH_BOOL, {1, 1, 1, 1});
    Tensor ub(pith_triu(b.get(), 1));
    ASSERT_NE(ub, nullptr) << pith_last_error();
    EXPECT_EQ(Values(ub.get()), (Values_{0, 1, 0, 0}));
}

TEST_F(CombineTest, TrilErrorsEmptyAndMeta)
{
    Tensor v = Iota({3});
    EXPECT_EQ(pith_tril(v.get(), 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "tril: input tensor must have at least 2 dimensions"));
    EXPECT_EQ(pith_triu(v.get(), 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "triu: input tensor must have at least 2 dimensions"));
    const int64_t sizes[] = {0, 3};
    Tensor e(pith_zeros(2, sizes, PITH_FLOAT32));
    Tensor te(pith_tril(e.get(), 0));
    ASSERT_NE(te, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(te.get()), (Shape{0, 3}));
    Tensor m = Meta({4, 4});
    Tensor tm(pith_triu(m.get(), 0));
    ASSERT_NE(tm, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(tm.get()), PITH_META);
}

TEST_F(CombineTest, TrilOfALargeBatch)
{
    Tensor x = Iota({40, 30, 30});
    Values_ in = Values(x.get());
    Tensor lo(pith_tril(x.get(), -3));
    ASSERT_NE(lo, nullptr) << pith_last_error();
    EXPECT_EQ(Values(lo.get()), TriangleReference(in, 30, 30, -3, true));
}

} // namespace
} // namespace pith_e_test
