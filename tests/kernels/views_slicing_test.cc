// The slicing views: slice (with step and Python clamping), select, narrow, and the list
// results of split, chunk and unbind. Expected pieces follow PyTorch's rules.
#include "views_test_util.h"

namespace pith_e_test {
namespace {

class ViewsSlicingTest : public KernelFixture {};

using Values_ = std::vector<double>;

// ---- slice ----

TEST_F(ViewsSlicingTest, SliceWithStep)
{
    Tensor x = Iota({10});
    Tensor s(pith_slice(x.get(), 0, 2, 8, 3));
    ASSERT_NE(s, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(s.get()), (Shape{2}));
    EXPECT_EQ(Strides(s.get()), (Shape{3}));
    EXPECT_EQ(pith_storage_offset(s.get()), 2);
    EXPECT_EQ(Values(s.get()), (Values_{2, 5}));
    ExpectSharesStorageAndVersion(x.get(), s.get());
}

TEST_F(ViewsSlicingTest, SliceWithAStepLongerThanTheDimKeepsASmallStride)
{
    // stride * step once wrapped around (a negative stride) or overflowed the kernels'
    // stride * itemsize; one element left keeps the dim's own stride then.
    Tensor x = Iota({4, 4});
    for (int64_t step : {INT64_C(1) << 62, INT64_MAX}) {
        Tensor s(pith_slice(x.get(), 0, 0, INT64_MAX, step));
        ASSERT_NE(s, nullptr) << pith_last_error();
        EXPECT_EQ(Sizes(s.get()), (Shape{1, 4}));
        EXPECT_EQ(Strides(s.get()), (Shape{4, 1}));
        EXPECT_EQ(Values(s.get()), (Values_{0, 1, 2, 3}));
    }
    Tensor two(pith_slice(x.get(), 0, 0, INT64_MAX, 3)); // two rows: stride * step
    EXPECT_EQ(Strides(two.get()), (Shape{12, 1}));
}

TEST_F(ViewsSlicingTest, SliceClampsLikePython)
{
    Tensor x = Iota({10});
    Tensor tail(pith_slice(x.get(), 0, -3, INT64_MAX, 1));
    Tensor head(pith_slice(x.get(), 0, -100, 3, 1));
    Tensor empty(pith_slice(x.get(), 0, 6, 2, 1));
    Tensor past(pith_slice(x.get(), 0, 12, 20, 1));
    Tensor neg_end(pith_slice(x.get(), 0, 1, -7, 1));
    ASSERT_TRUE(tail && head && empty && past && neg_end) << pith_last_error();
    EXPECT_EQ(Values(tail.get()), (Values_{7, 8, 9}));
    EXPECT_EQ(Values(head.get()), (Values_{0, 1, 2}));
    EXPECT_EQ(Sizes(empty.get()), (Shape{0}));
    EXPECT_EQ(Sizes(past.get()), (Shape{0}));
    EXPECT_EQ(pith_storage_offset(past.get()), 10);
    EXPECT_EQ(Values(neg_end.get()), (Values_{1, 2}));
}

TEST_F(ViewsSlicingTest, SliceAlongInnerDim)
{
    Tensor x = Iota({3, 4});
    Tensor s(pith_slice(x.get(), -1, 1, 4, 2));
    ASSERT_NE(s, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(s.get()), (Shape{3, 2}));
    EXPECT_EQ(Strides(s.get()), (Shape{4, 2}));
    EXPECT_EQ(pith_storage_offset(s.get()), 1);
    EXPECT_EQ(Values(s.get()), (Values_{1, 3, 5, 7, 9, 11}));
}

TEST_F(ViewsSlicingTest, SliceOfSliceComposesOffsets)
{
    Tensor x = Iota({20});
    Tensor a(pith_slice(x.get(), 0, 3, 20, 2)); // 3, 5, ..., 19
    Tensor b(pith_slice(a.get(), 0, 2, 6, 3));  // a[2], a[5] = 7, 13
    ASSERT_NE(b, nullptr) << pith_last_error();
    EXPECT_EQ(Strides(b.get()), (Shape{6}));
    EXPECT_EQ(pith_storage_offset(b.get()), 7);
    EXPECT_EQ(Values(b.get()), (Values_{7, 13}));
}

TEST_F(ViewsSlicingTest, SliceStepMustBePositive)
{
    Tensor x = Iota({4});
    EXPECT_EQ(pith_slice(x.get(), 0, 0, 4, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "slice step must be positive"));
    EXPECT_EQ(pith_slice(x.get(), 0, 0, 4, -1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "slice step must be positive"));
}

TEST_F(ViewsSlicingTest, SliceOfScalarAndBadDimAreIndexErrors)
{
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(pith_slice(s.get(), 0, 0, 1, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor."));
    Tensor x = Iota({4});
    EXPECT_EQ(pith_slice(x.get(), 1, 0, 1, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX,
                         "Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
}

TEST_F(ViewsSlicingTest, SliceOfEmptyAndMetaTensors)
{
    const int64_t zero = 0, five = 5, one = 1;
    Tensor e(pith_zeros(1, &zero, PITH_FLOAT32));
    Tensor se(pith_slice(e.get(), 0, 0, 5, 1));
    ASSERT_NE(se, nullptr) << pith_last_error();
    EXPECT_EQ(Sizes(se.get()), (Shape{0}));
    Tensor m(pith_empty_strided(1, &five, &one, PITH_INT32, PITH_META));
    Tensor sm(pith_slice(m.get(), 0, 1, 5, 2));
    ASSERT_NE(sm, nullptr) << pith_last_error();
    EXPECT_EQ(pith_tensor_device(sm.get()), PITH_META);
    EXPECT_EQ(Sizes(sm.get()), (Shape{2}));
    EXPECT_EQ(Strides(sm.get()), (Shape{2}));
    EXPECT_EQ(pith_storage_offset(sm.get()), 1);
}

// ---- select ----

TEST_F(ViewsSlicingTest, SelectDropsTheDim)
{
    Tensor x = Iota({3, 4});
    Tensor row(pith_select(x.get(), 0, 1));
    Tensor col(pith_select(x.get(), 1, -1));
    ASSERT_TRUE(row && col) << pith_last_error();
    EXPECT_EQ(Sizes(row.get()), (Shape{4}));
    EXPECT_EQ(pith_storage_offset(row.get()), 4);
    EXPECT_EQ(Values(row.get()), (Values_{4, 5, 6, 7}));
    EXPECT_EQ(Sizes(col.get()), (Shape{3}));
    EXPECT_EQ(Strides(col.get()), (Shape{4}));
    EXPECT_EQ(Values(col.get()), (Values_{3, 7, 11}));
    ExpectSharesStorageAndVersion(x.get(), col.get());
}

TEST_F(ViewsSlicingTest, SelectOfVectorIsAScalar)
{
    Tensor x = Iota({3});
    Tensor s(pith_select(x.get(), 0, 2));
    ASSERT_NE(s, nullptr) << pith_last_error();
    EXPECT_EQ(pith_ndim(s.get()), 0);
    EXPECT_EQ(At(s.get(), 0), 2);
}

TEST_F(ViewsSlicingTest, SelectOutOfRangeIsAnIndexError)
{
    Tensor x = Iota({3});
    EXPECT_EQ(pith_select(x.get(), 0, 5), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX,
                         "select(): index 5 out of range for tensor of size [3] at dimension 0"));
    EXPECT_EQ(pith_select(x.get(), 0, -4), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "index -4 out of range"));
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(pith_select(s.get(), 0, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "select() cannot be applied to a 0-dim tensor."));
    Tensor m = Iota({2, 3});
    EXPECT_EQ(pith_select(m.get(), -3, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "but got -3"));
}

// ---- narrow ----

TEST_F(ViewsSlicingTest, NarrowTakesALengthFromAStart)
{
    Tensor x = Iota({5});
    Tensor a(pith_narrow(x.get(), 0, 1, 3));
    Tensor b(pith_narrow(x.get(), 0, -2, 2));
    Tensor c(pith_narrow(x.get(), 0, 5, 0));
    ASSERT_TRUE(a && b && c) << pith_last_error();
    EXPECT_EQ(Values(a.get()), (Values_{1, 2, 3}));
    EXPECT_EQ(Values(b.get()), (Values_{3, 4}));
    EXPECT_EQ(Sizes(c.get()), (Shape{0}));
    ExpectSharesStorageAndVersion(x.get(), a.get());
}

TEST_F(ViewsSlicingTest, NarrowErrors)
{
    Tensor x = Iota({5});
    EXPECT_EQ(pith_narrow(x.get(), 0, 0, -1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "narrow(): length must be non-negative."));
    EXPECT_EQ(pith_narrow(x.get(), 0, 6, 0), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX,
                         "start out of range (expected to be in range of [-5, 5], but got 6)"));
    EXPECT_EQ(pith_narrow(x.get(), 0, 3, 3), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "start (3) + length (3) exceeds dimension size (5)."));
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(pith_narrow(s.get(), 0, 0, 1), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "narrow() cannot be applied to a 0-dim tensor."));
}

// ---- split ----

TEST_F(ViewsSlicingTest, SplitLastPieceIsSmaller)
{
    Tensor x = Iota({5});
    TensorList l;
    l.data = pith_split(x.get(), 2, 0, &l.n);
    ASSERT_NE(l.data, nullptr) << pith_last_error();
    ASSERT_EQ(l.n, 3u);
    EXPECT_EQ(Values(l[0]), (Values_{0, 1}));
    EXPECT_EQ(Values(l[1]), (Values_{2, 3}));
    EXPECT_EQ(Values(l[2]), (Values_{4}));
    EXPECT_EQ(pith_storage_offset(l[2]), 4);
    ExpectSharesStorageAndVersion(x.get(), l[1]);
}

TEST_F(ViewsSlicingTest, SplitLargerThanTheDimGivesOnePiece)
{
    Tensor x = Iota({2, 5});
    TensorList l;
    l.data = pith_split(x.get(), 10, -1, &l.n);
    ASSERT_NE(l.data, nullptr) << pith_last_error();
    ASSERT_EQ(l.n, 1u);
    EXPECT_EQ(Sizes(l[0]), (Shape{2, 5}));
}

TEST_F(ViewsSlicingTest, SplitAlongInnerDim)
{
    Tensor x = Iota({2, 3});
    TensorList l;
    l.data = pith_split(x.get(), 2, 1, &l.n);
    ASSERT_NE(l.data, nullptr) << pith_last_error();
    ASSERT_EQ(l.n, 2u);
    EXPECT_EQ(Values(l[0]), (Values_{0, 1, 3, 4}));
    EXPECT_EQ(Values(l[1]), (Values_{2, 5}));
    EXPECT_EQ(Strides(l[1]), (Shape{3, 1}));
}

TEST_F(ViewsSlicingTest, SplitOfEmptyDim)
{
    const int64_t zero = 0;
    Tensor e(pith_zeros(1, &zero, PITH_FLOAT32));
    for (int64_t size : {0, 3}) {
        TensorList l;
        l.data = pith_split(e.get(), size, 0, &l.n);
        ASSERT_NE(l.data, nullptr) << pith_last_error();
        ASSERT_EQ(l.n, 1u);
        EXPECT_EQ(Sizes(l[0]), (Shape{0}));
    }
}

TEST_F(ViewsSlicingTest, SplitErrors)
{
    Tensor x = Iota({5});
    size_t n = 99;
    EXPECT_EQ(pith_split(x.get(), 0, 0, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "split_size can only be 0 if dimension size is 0, but got dimension size "
                         "of 5"));
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(pith_split(x.get(), -1, 0, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE,
                         "split expects split_size be non-negative, but got split_size=-1"));
    EXPECT_EQ(pith_split(x.get(), 1, 1, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension out of range"));
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(pith_split(s.get(), 1, 0, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "split expects at least a 1-dimensional tensor"));
    EXPECT_EQ(pith_split(x.get(), 1, 0, nullptr), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "'n' is NULL"));
}

// ---- chunk ----

TEST_F(ViewsSlicingTest, ChunkUsesCeilingSizedPieces)
{
    Tensor x = Iota({5});
    TensorList l;
    l.data = pith_chunk(x.get(), 3, 0, &l.n);
    ASSERT_NE(l.data, nullptr) << pith_last_error();
    ASSERT_EQ(l.n, 3u);
    EXPECT_EQ(Values(l[0]), (Values_{0, 1}));
    EXPECT_EQ(Values(l[1]), (Values_{2, 3}));
    EXPECT_EQ(Values(l[2]), (Values_{4}));
}

TEST_F(ViewsSlicingTest, ChunkMayGiveFewerPieces)
{
    Tensor x = Iota({6});
    TensorList l;
    l.data = pith_chunk(x.get(), 4, -1, &l.n);
    ASSERT_NE(l.data, nullptr) << pith_last_error();
    ASSERT_EQ(l.n, 3u); // ceil(6 / 4) = 2 per chunk
    for (size_t i = 0; i < l.n; i++)
        EXPECT_EQ(Sizes(l[i]), (Shape{2}));
}

TEST_F(ViewsSlicingTest, ChunkOfEmptyDimGivesEveryChunk)
{
    const int64_t sizes[] = {2, 0};
    Tensor e(pith_zeros(2, sizes, PITH_FLOAT32));
    TensorList l;
    l.data = pith_chunk(e.get(), 3, 1, &l.n);
    ASSERT_NE(l.data, nullptr) << pith_last_error();
    ASSERT_EQ(l.n, 3u);
    for (size_t i = 0; i < l.n; i++)
        EXPECT_EQ(Sizes(l[i]), (Shape{2, 0}));
}

TEST_F(ViewsSlicingTest, ChunkErrors)
{
    Tensor x = Iota({5});
    size_t n;
    EXPECT_EQ(pith_chunk(x.get(), 0, 0, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "chunk expects `chunks` to be greater than 0, got: 0"));
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    EXPECT_EQ(pith_chunk(s.get(), 2, 0, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_VALUE, "chunk expects at least a 1-dimensional tensor"));
    EXPECT_EQ(pith_chunk(x.get(), 2, -2, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "but got -2"));
}

// ---- unbind ----

TEST_F(ViewsSlicingTest, UnbindSelectsEveryIndex)
{
    Tensor x = Iota({2, 3});
    TensorList rows, cols;
    rows.data = pith_unbind(x.get(), 0, &rows.n);
    cols.data = pith_unbind(x.get(), 1, &cols.n);
    ASSERT_TRUE(rows.data && cols.data) << pith_last_error();
    ASSERT_EQ(rows.n, 2u);
    ASSERT_EQ(cols.n, 3u);
    EXPECT_EQ(Values(rows[1]), (Values_{3, 4, 5}));
    EXPECT_EQ(Values(cols[0]), (Values_{0, 3}));
    EXPECT_EQ(Values(cols[2]), (Values_{2, 5}));
    ExpectSharesStorageAndVersion(x.get(), cols[2]);
}

TEST_F(ViewsSlicingTest, UnbindOfEmptyDimGivesAnEmptyList)
{
    const int64_t sizes[] = {0, 2};
    Tensor e(pith_zeros(2, sizes, PITH_FLOAT32));
    TensorList l;
    l.data = pith_unbind(e.get(), 0, &l.n);
    EXPECT_NE(l.data, nullptr) << pith_last_error();
    EXPECT_EQ(l.n, 0u);
}

TEST_F(ViewsSlicingTest, UnbindErrors)
{
    Tensor s(pith_full(0, nullptr, 1, PITH_FLOAT32));
    size_t n;
    EXPECT_EQ(pith_unbind(s.get(), 0, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "dimension specified as 0 but tensor has no dimensions"));
    Tensor x = Iota({2});
    EXPECT_EQ(pith_unbind(x.get(), 1, &n), nullptr);
    EXPECT_TRUE(HasError(PITH_ERR_INDEX, "Dimension out of range"));
}

TEST_F(ViewsSlicingTest, TensorListFreeOfNullIsANoOp)
{
    pith_tensor_list_free(nullptr, 0);
    pith_tensor_list_free(nullptr, 3);
}

} // namespace
} // namespace pith_e_test
